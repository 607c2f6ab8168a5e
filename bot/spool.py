"""The spool: how a web process makes a delivery durable before it answers 202, at the
cost of one `write` and a share of one `fdatasync`.

The web process appends each accepted delivery, as one record, to a segment file in
`<data dir>/spool/`. A thread of its own runs `fdatasync` for every record written while
the previous one ran (a group commit), and the answer goes out once its record is on the
disk. The worker process reads the records into the journal's table (`Journal.ingest`:
the state, the dedupe, the backlog) and deletes a segment once it read all of it and the
web process writes to a newer one. Nothing else runs in the web process's event loop or
competes with it for the interpreter lock: an SQLite commit of a 14 KiB payload costs
about 25 us of CPU and a hand-off per row, which is what the answers waited for.

A record: `FBS1`, the header's and the payload's lengths, a CRC-32 of both, then the
header (JSON: id, event, installation id) and the payload, as received. A record cut
short (a crash mid-write: never answered 202) is where a reader stops; in a segment
that is no longer written to, it is reported and dropped."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("foldbot.spool")

MAGIC = b"FBS1"
#: magic, header length, payload length, CRC-32 of header and payload
HEAD = struct.Struct("<4sIII")
#: A segment is closed (a new one started) past this size, once no sync runs on it.
SEGMENT_BYTES = 64 * 1024 * 1024
#: The most a reader takes from a segment at once.
READ_BYTES = 8 * 1024 * 1024


def directory_of(data_dir: Path) -> Path:
    return data_dir / "spool"


def segments(directory: Path) -> list[Path]:
    """The segment files, oldest first (the last is the one written to)."""
    try:
        return sorted(path for path in directory.iterdir() if path.suffix == ".log" and path.stem.isdigit())
    except FileNotFoundError:
        return []


def encode(delivery: str, event: str, installation: int | None, payload: bytes) -> bytes:
    header = json.dumps([delivery, event, installation], separators=(",", ":")).encode()
    return HEAD.pack(MAGIC, len(header), len(payload), zlib.crc32(payload, zlib.crc32(header))) + header + payload


@dataclass(frozen=True)
class Record:
    id: str
    event: str
    installation: int | None
    payload: bytes


@dataclass(frozen=True)
class Read:
    records: list[Record]
    #: where the next read starts
    offset: int
    #: a record that is not whole at `offset`: the end of the file while a write is under
    #: way, or a crash cut it short (never answered 202)
    cut: bool = False
    #: what was damaged on the way (a record skipped, or no record where one should start)
    damage: str | None = None
    #: no record can be found after `offset` in this file
    stuck: bool = False


def read(path: Path, offset: int, limit: int = READ_BYTES) -> Read:
    """The whole records of `path` from `offset`: about `limit` bytes of them (at least
    one record, however long)."""
    with path.open("rb") as file:
        file.seek(offset)
        data = file.read(limit)
        records: list[Record] = []
        damage: list[str] = []
        at = 0
        while at < len(data):
            if len(data) - at < HEAD.size:
                data += file.read(HEAD.size)
                if len(data) - at < HEAD.size:
                    return Read(records, offset + at, cut=True, damage=_joined(damage))
            magic, header_length, payload_length, crc = HEAD.unpack_from(data, at)
            if magic != MAGIC:
                damage.append(f"no record starts at byte {offset + at}")
                return Read(records, offset + at, damage=_joined(damage), stuck=True)
            end = at + HEAD.size + header_length + payload_length
            if end > len(data):
                if records:  # the rest on the next read
                    break
                data += file.read(end - len(data))
                if end > len(data):
                    return Read(records, offset + at, cut=True, damage=_joined(damage))
            header = data[at + HEAD.size:at + HEAD.size + header_length]
            payload = data[at + HEAD.size + header_length:end]
            try:
                if zlib.crc32(payload, zlib.crc32(header)) != crc:
                    raise ValueError("its CRC does not match")
                delivery, event, installation = json.loads(header)
                records.append(Record(str(delivery), str(event),
                                      installation if isinstance(installation, int) else None, bytes(payload)))
            except ValueError as exc:  # whole but damaged: skipped
                damage.append(f"the record at byte {offset + at} is damaged ({exc}); skipped")
            at = end
    return Read(records, offset + at, damage=_joined(damage))


def _joined(damage: list[str]) -> str | None:
    return "; ".join(damage) if damage else None


class SpoolWriter:
    """The web process's side: `append` returns once the record is on the disk.

    The event loop encodes each record; a thread writes and fsyncs every record encoded
    before it started, one group at a time, and the next group starts when the loop has
    answered the last (a burst is a few fsyncs, paced by the loop, not one per record;
    and the loop never waits for the file, whose writes stall while an fsync runs).
    After the fsync the same thread runs `lookup` on the group's ids (one query for
    all): what each `append` returns."""

    def __init__(self, directory: Path, lookup: Callable[[list[str]], dict[str, str]]) -> None:
        self.directory = directory
        self._lookup = lookup
        directory.mkdir(parents=True, exist_ok=True)
        existing = segments(directory)
        # a new segment for each process: a record cut short by a crash stays at the end of the old one
        self._number = (int(existing[-1].stem) + 1) if existing else 1
        self._fd = self._open()
        self._size = 0
        self._waiting: list[tuple[str, bytes, asyncio.Future[str | None]]] = []
        self._syncing: asyncio.Task[None] | None = None
        self._closed = False
        #: a write failed: the next group goes to a new segment (what may be half written
        #: stays at the end of this one, where a reader drops it)
        self._broken = False
        #: groups written (an fsync each), and the records they held (for the benchmark and the log)
        self.syncs = self.synced = 0

    @property
    def path(self) -> Path:
        """The segment written to."""
        return self._segment(self._number)

    def _segment(self, number: int) -> Path:
        return self.directory / f"{number:012d}.log"

    def _open(self, number: int | None = None) -> int:
        return os.open(self._segment(self._number if number is None else number),
                       os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)

    def _next_segment(self) -> None:
        """Write to a new segment from now on (opened before the old one is let go: a
        failure leaves the old one in use)."""
        fd = self._open(self._number + 1)
        old, self._fd = self._fd, fd
        self._number, self._size, self._broken = self._number + 1, 0, False
        os.close(old)

    async def append(self, delivery: str, event: str, installation: int | None, payload: bytes) -> str | None:
        """Write one record, wait for the fsync that holds it, and return what `lookup`
        said of the delivery; OSError when the write or the fsync failed (the delivery
        is then not accepted)."""
        if self._closed:
            raise OSError("the spool is closed")
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._waiting.append((delivery, encode(delivery, event, installation, payload), future))
        if self._syncing is None:
            self._syncing = asyncio.create_task(self._write_groups())
        return await future

    async def _write_groups(self) -> None:
        try:
            while self._waiting:
                group, self._waiting = self._waiting, []
                records = [record for _, record, _ in group]
                try:
                    if self._closed:  # appended while the process stops: not on the disk, not accepted
                        raise OSError("the spool is closed")
                    if self._broken or self._size >= SEGMENT_BYTES:
                        self._next_segment()
                    # the thread has its own descriptor: the segment may be closed meanwhile
                    found = await asyncio.to_thread(self._write, os.dup(self._fd), records,
                                                    [delivery for delivery, _, _ in group])
                except Exception as exc:  # the disk failed (or the lookup): none of the group is accepted
                    self._broken = self._broken or isinstance(exc, OSError)
                    for _, _, future in group:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                self._size += sum(len(record) for record in records)
                self.syncs += 1
                self.synced += len(group)
                for delivery, _, future in group:
                    if not future.done():
                        future.set_result(found.get(delivery))
        finally:
            self._syncing = None

    def _write(self, fd: int, records: list[bytes], deliveries: list[str]) -> dict[str, str]:
        try:
            for start in range(0, len(records), 512):
                chunk = records[start:start + 512]
                written = os.writev(fd, chunk)
                expected = sum(len(record) for record in chunk)
                if written < expected:  # a short write: the rest, as one buffer
                    rest = b"".join(chunk)[written:]
                    while rest:
                        rest = rest[os.write(fd, rest):]
            os.fdatasync(fd)
        finally:
            os.close(fd)
        return self._lookup(deliveries)

    def close(self) -> None:
        """Later appends are refused (a group under way has its own descriptor)."""
        if not self._closed:
            self._closed = True
            os.close(self._fd)
            log.info("spool: %d deliveries written in %d fsyncs", self.synced, self.syncs)


def unread(directory: Path, positions: dict[str, int]) -> int:
    """Bytes of the spool not read into the journal yet."""
    total = 0
    for path in segments(directory):
        try:
            total += max(0, path.stat().st_size - positions.get(path.name, 0))
        except FileNotFoundError:  # read and deleted meanwhile
            continue
    return total

