"""The delivery journal: every accepted delivery is written here before it is answered
202, and marked done once its handler succeeded. It is the dedupe (a delivery id is
processed once, across restarts) and the backlog (what the in-memory queue could not
hold, and what a killed process left unfinished, is read back from it).

An SQLite file in the data directory (`FOLDBOT_DATA_DIR`, WAL mode, `synchronous=FULL`
so an accepted delivery survives a crash or a power cut), or in memory when no
directory is given (tests, `foldbot serve` never).

The server writes through `record` and `mark`, which a writer thread commits in
groups: every write that arrives while one commit's fsync runs goes into the next
commit, so a burst of deliveries costs a few fsyncs, not one each, and the event loop
never waits for the disk.

A worker process's journal has no fsync to wait for, so its writes are committed in its
event loop (a handoff to the thread costs more CPU than the write) whenever the file is
free at once; when the web process holds the file, a write waits in the writer thread,
never in the loop. Its checkpoints run in the writer thread too."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("foldbot.journal")

#: A delivery whose handler failed this many times is set aside: not run again (GitHub's
#: redelivery of it, or a manual one, still runs it).
MAX_ATTEMPTS = 3
#: A delivery whose handler failed runs again this long after its first failure, and after its
#: second (a GitHub outage of a few minutes is ridden out; a restart runs them at once).
RETRY_AFTER_SECONDS = (120.0, 900.0)
#: A delivery whose handler started this many times and never finished (the worker process
#: died each time: out of memory, a crash in a library) is set aside as failed, not run again.
MAX_UNFINISHED = 3
#: Done deliveries are remembered (their ids, for the dedupe) this long.
KEEP_DONE_SECONDS = 14 * 24 * 3600
#: A journal that commits in its event loop checkpoints its WAL (in its writer thread)
#: after this many commits (SQLite's automatic checkpoint would run in a commit, in the loop).
CHECKPOINT_EVERY = 250
#: How long a write waits for another connection (the other process) to free the file.
BUSY_MS = 5000

SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    payload BLOB,
    installation INTEGER,
    state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    starts INTEGER NOT NULL DEFAULT 0,
    again INTEGER NOT NULL DEFAULT 0,
    aside INTEGER NOT NULL DEFAULT 0,
    received REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries (state, received);
CREATE TABLE IF NOT EXISTS notes (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    until REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Entry:
    id: str
    event: str
    payload: bytes
    installation: int | None
    attempts: int
    #: how many times its handler started and did not finish (a worker that died)
    unfinished: int = 0


@dataclass(frozen=True)
class _Write:
    apply: Callable[..., Any]
    args: tuple[Any, ...]
    future: asyncio.Future[Any] | None  # None: committed in the event loop, nobody waits


#: Asks the writer thread for a checkpoint.
_CHECKPOINT = object()


class JournalUnavailable(Exception):
    """The journal cannot be opened (a data directory that cannot be written, a Redis that
    cannot be reached): foldbot could accept no delivery, so it does not start."""


class NotQueued(Exception):
    """`begin` of a delivery that is not queued any more: a copy of it ran and finished
    meanwhile (the refill read it as queued, in its thread, just before). Not run again."""


class JournalLost(Exception):
    """A write refused because the journal's file was deleted or replaced under foldbot
    (see `Journal.lost`): it would be gone at the next stop."""


class Journal:
    """One SQLite connection, guarded by a lock: the event loop reads it (each call one
    short transaction), the writer thread commits `record` and `mark` in groups."""

    def __init__(self, directory: Path | None, *, fsync: bool = True, checkpoints: bool = True) -> None:
        self.path = (directory / "foldbot.sqlite3") if directory is not None else None
        try:
            self._open(directory, fsync, checkpoints)
        except (OSError, sqlite3.Error) as exc:
            opened = getattr(self, "_db", None)
            if opened is not None:
                opened.close()
            raise JournalUnavailable(f"cannot open the journal in {directory} (FOLDBOT_DATA_DIR): {exc}") from exc
        #: Commits in the event loop when the file is free (no fsync to wait for: a worker process's journal).
        self._in_place = self.path is not None and not fsync
        #: Commits since the last checkpoint, when the writer thread runs them (else None).
        self._uncheckpointed: int | None = 0 if self._in_place and checkpoints else None
        self._writes: queue.SimpleQueue[_Write | None | object] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._closed = False
        #: How many commits the writer made, and how many writes they held (for the benchmark).
        self.commits = self.grouped = 0
        #: The files this connection writes (the journal, its WAL and its shared memory), by inode (see `lost`).
        self._inodes = self._files() if self.path is not None else {}

    def _open(self, directory: Path | None, fsync: bool, checkpoints: bool) -> None:
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", isolation_level=None,
                                   check_same_thread=False)
        self._lock = threading.Lock()
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: each commit is on the disk before it returns (an answered delivery survives a power
            # cut). A worker process's commits (outcomes) need not wait for the disk: a lost `done` runs
            # a delivery again, which the exactly-once records in GitHub absorb; the web process's next
            # commit puts them on the disk too.
            self._db.execute("PRAGMA synchronous=FULL" if fsync else "PRAGMA synchronous=NORMAL")
            if not checkpoints or not fsync:  # another connection checkpoints (a web process's worker), or the
                self._db.execute("PRAGMA wal_autocheckpoint=0")  # writer thread does (see _transaction)
        self._db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        self._db.executescript(SCHEMA)
        columns = {str(row[1]) for row in self._db.execute("PRAGMA table_info(deliveries)")}
        for column in ("starts", "again", "aside"):  # a journal written before these were kept
            if column not in columns:
                try:
                    self._db.execute(f"ALTER TABLE deliveries ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
                except sqlite3.OperationalError as exc:  # another process opening the same file added it first
                    if "duplicate column name" not in str(exc):
                        raise
        # SQLite opens a file it may not write read-only, without a word: a write (of nothing) says so now,
        # not the first delivery's.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute("DELETE FROM notes WHERE 0")
        finally:
            self._db.execute("ROLLBACK")

    @property
    def durable(self) -> bool:
        return self.path is not None

    @property
    def where(self) -> str:
        """The journal, for people (log lines, `/health`)."""
        return str(self.path) if self.path is not None else "in memory"

    def _files(self) -> dict[str, int | None]:
        assert self.path is not None
        inodes: dict[str, int | None] = {}
        for path in (str(self.path), f"{self.path}-wal", f"{self.path}-shm"):
            try:
                inodes[path] = os.stat(path).st_ino
            except FileNotFoundError:
                inodes[path] = None
        return inodes

    def lost(self) -> str | None:
        """Why what this connection writes is not in the journal's files any more (None: it is):
        the file, its WAL or its shared memory was deleted or replaced under it (SQLite goes on
        writing to the deleted one; a commit in a deleted WAL is gone at the next stop).
        A few microseconds: the writer thread asks before and after each commit."""
        if self.path is None:
            return None
        for path, inode in self._files().items():
            if inode != self._inodes[path]:
                return (f"the journal file {path} was {'deleted' if inode is None else 'replaced'} while foldbot ran: "
                        f"what it writes now is lost when it stops; restart foldbot (all its processes) to open the "
                        f"journal again")
        return None

    def close(self) -> None:
        """Finish the writes already asked for, then close; later writes are refused."""
        self._closed = True
        if self._writer is not None:
            self._writes.put(None)
            self._writer.join()
            self._writer = None
        with self._lock:
            self._db.close()

    # --- the writer thread ---------------------------------------------------------------

    async def _submit(self, apply: Callable[..., Any], *args: Any) -> Any:
        if self._closed:
            raise sqlite3.ProgrammingError("the journal is closed")
        if self.path is None:  # in memory: no disk to wait for
            with self._lock:
                return apply(*args)
        if self._in_place:
            outcome = self._commit_now(apply, args)
            if outcome is not None:
                ok, value = outcome
                if not ok:
                    raise value
                return value
        self._start_writer()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._writes.put(_Write(apply, args, future))
        return await future

    def _start_writer(self) -> None:
        if self._writer is None or not self._writer.is_alive():
            self._writer = threading.Thread(target=self._write_groups, name="foldbot-journal", daemon=True)
            self._writer.start()

    def _commit_now(self, apply: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any] | None:
        """The write committed here, if the connection and the file are free at once (None:
        the writer thread or the other process has them; the write waits in the thread)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            self._db.execute("PRAGMA busy_timeout=0")
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:  # and its extended codes
                    return None
                return False, exc
            finally:
                self._db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            [outcome] = self._transaction([_Write(apply, args, None)])
            return outcome
        finally:
            self._lock.release()

    def _write_groups(self) -> None:
        while True:
            first = self._writes.get()
            if first is None:
                return
            group: list[_Write] = []
            stop = checkpoint = False
            item: _Write | None | object = first
            while True:  # everything that waits now goes into this commit
                if item is None:  # close(): nothing comes after it
                    stop = True
                    break
                if item is _CHECKPOINT:
                    checkpoint = True
                else:
                    assert isinstance(item, _Write)
                    group.append(item)
                try:
                    item = self._writes.get_nowait()
                except queue.Empty:
                    break
            if checkpoint:
                self._checkpoint()
            if not group:
                if stop:
                    return
                continue
            outcomes: list[tuple[bool, Any]] = []
            try:
                outcomes = self._commit(group)
            except BaseException as exc:  # whatever happened, every write of the group gets an answer
                outcomes = [(False, exc if isinstance(exc, Exception) else RuntimeError(str(exc)))] * len(group)
                raise
            finally:
                self._answer(group, outcomes)
            if stop:
                return

    def _commit(self, group: list[_Write]) -> list[tuple[bool, Any]]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except Exception as exc:  # the disk failed, or the other process held the file too long
                return [(False, exc)] * len(group)
            return self._transaction(group)

    def _transaction(self, group: list[_Write]) -> list[tuple[bool, Any]]:
        """The group's writes and the COMMIT, in the transaction begun (the lock held)."""
        try:
            if (gone := self.lost()) is not None:  # do not write into a deleted file
                raise JournalLost(gone)
            results = [write.apply(*write.args) for write in group]
            self._db.execute("COMMIT")  # with FULL, the fsync of the whole group
            if (gone := self.lost()) is not None:  # deleted during the commit: the 202 would promise what is lost
                return [(False, JournalLost(gone))] * len(group)
        except BaseException as exc:  # the disk failed: every write of the group is refused
            try:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            except sqlite3.Error as rollback:  # the writes are refused all the same, for the first reason
                log.error("journal: the rollback after %s failed too: %s", exc, rollback)
            if not isinstance(exc, Exception):
                raise
            return [(False, exc)] * len(group)
        self.commits += 1
        self.grouped += len(group)
        if self._uncheckpointed is not None:
            self._uncheckpointed += 1
            if self._uncheckpointed >= CHECKPOINT_EVERY:
                self._uncheckpointed = 0
                self._writes.put(_CHECKPOINT)
                self._start_writer()
        return [(True, result) for result in results]

    def _checkpoint(self) -> None:
        """Copy the WAL back into the file (as SQLite's automatic checkpoint does: PASSIVE,
        it waits for nobody), in the writer thread."""
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:  # the next one copies what this one could not
                log.error("journal: a checkpoint failed: %s", exc)

    @staticmethod
    def _answer(group: list[_Write], outcomes: list[tuple[bool, Any]]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for write, (ok, value) in zip(group, outcomes):
            if write.future is not None:
                by_loop.setdefault(write.future.get_loop(), []).append((write.future, ok, value))
        for loop, settled in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle, settled)
            except RuntimeError:  # that loop is closed: nobody waits for these answers
                continue

    async def record(self, delivery: str, event: str, payload: bytes, installation: int | None, *,
                     hold: bool = True, again: bool = True) -> str:
        """`accept`, committed (with its fsync) by the writer thread. (`hold`: see RedisJournal;
        here every process takes queued deliveries from the one file.) `again=False`, for a
        delivery foldbot makes itself (reconciling): one known already is left as it is and its
        state answered: a failed one runs again after its wait, and one set aside is not run
        again by the next round that makes it (each round would fail it anew). A delivery from
        GitHub (a redelivery) runs again, as ever."""
        return str(await self._submit(self._accept, delivery, event, payload, installation, time.time(), again))

    async def mark(self, delivery: str, state: str, *, write: str = "", run: int | None = None) -> bool:
        """`done` or `failed` (`set_aside`: failed, and not run again), committed by
        the writer thread. True when a failed delivery was queued again instead: a copy of it
        (a redelivery) came while its handler ran (see `_finish`). (`write`, `run`: see
        RedisJournal; a commit here is applied or refused, so a refused one is simply written
        again, and one process at a time runs the file's deliveries, so no run is stale.)"""
        if state not in ("done", "failed", "set_aside"):
            raise ValueError(f"a delivery is marked done, failed or set_aside, not {state!r}")
        return bool(await self._submit(self._finish, delivery, time.time(), state))

    async def begin(self, delivery: str) -> int | None:
        """Its handler starts now (counted: a delivery that never finishes, because it kills
        the worker, is set aside after MAX_UNFINISHED starts). This run serves every copy of
        the delivery received so far. (None: runs are not numbered here; see RedisJournal.)
        NotQueued: it is done or failed already; it does not run."""
        finished = await self._submit(self._begin, delivery)
        if finished is not None:
            raise NotQueued(f"it is {finished} already")
        return None

    def _begin(self, delivery: str) -> str | None:
        if self._db.execute("UPDATE deliveries SET starts = starts + 1, again = 0 WHERE id = ? AND state = 'queued'",
                            (delivery,)).rowcount:
            return None
        row = self._db.execute("SELECT state FROM deliveries WHERE id = ?", (delivery,)).fetchone()
        return str(row[0]) if row else None  # (one the journal does not have: run, uncounted)

    # --- one write each, the lock held ---------------------------------------------------

    def accept(self, delivery: str, event: str, payload: bytes, installation: int | None) -> str:
        """Write a delivery down: `new` when it was not known, else its state (`queued`,
        `done`, `failed`). A known delivery that is not done is queued again; a copy of one
        that is queued is noted (`again`): if the handler running now fails, it runs again."""
        with self._lock:
            return self._accept(delivery, event, payload, installation, time.time())

    def _accept(self, delivery: str, event: str, payload: bytes, installation: int | None, now: float,
                again: bool = True) -> str:
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO deliveries (id, event, payload, installation, state, received, updated) "
            "VALUES (?, ?, ?, ?, 'queued', ?, ?)", (delivery, event, payload, installation, now, now))
        if cursor.rowcount == 1:
            return "new"
        row = self._db.execute("SELECT state FROM deliveries WHERE id = ?", (delivery,)).fetchone()
        state = str(row[0])
        if not again:  # (see `record`)
            return state
        if state == "failed":  # run again, with a clean slate of unfinished starts
            self._db.execute("UPDATE deliveries SET state = 'queued', payload = ?, updated = ?, starts = attempts, "
                             "aside = 0 WHERE id = ?", (payload, now, delivery))
        elif state == "queued":
            self._db.execute("UPDATE deliveries SET again = 1 WHERE id = ?", (delivery,))
        return state

    def renew(self, deliveries: set[str] | frozenset[str]) -> list[str]:
        """Nothing to renew, and no hold lapses: a journal file has one worker (the lock), and no leases."""
        return []

    def lead(self, task: str, seconds: float) -> bool:
        """One process works on a journal file (the worker's lock): it always leads."""
        return True

    def keep_lead(self, task: str, seconds: float) -> bool:
        """One process works on a journal file: its lead never lapses."""
        return True

    async def note(self, name: str) -> str | None:
        """What `keep_note` kept under `name`, while it lasts."""
        with self._lock:
            row = self._db.execute("SELECT value FROM notes WHERE name = ? AND until > ?",
                                   (name, time.time())).fetchone()
        return str(row[0]) if row else None

    async def keep_note(self, name: str, value: str, seconds: float) -> None:
        """Keep `value` under `name` for `seconds` (what a task needs from its last round)."""
        await self._submit(self._keep_note, name, value, time.time() + seconds)

    def _keep_note(self, name: str, value: str, until: float) -> None:
        self._db.execute("DELETE FROM notes WHERE until <= ?", (time.time(),))
        self._db.execute("INSERT OR REPLACE INTO notes (name, value, until) VALUES (?, ?, ?)", (name, value, until))

    def release(self, delivery: str) -> None:
        """The in-memory queue had no room for this delivery: it stays queued here."""

    def hand_back(self, deliveries: list[str], cut: Sequence[str] = ()) -> int:
        """(At a stop: what this process holds stays queued in the file, for the next start.) The
        starts of `cut`, whose handlers the drain's deadline stopped, are not counted: a stop is no
        worker that died (MAX_UNFINISHED of those set a delivery aside; three deploys were)."""
        with self._lock:
            for delivery in cut:
                self._db.execute("UPDATE deliveries SET starts = max(starts - 1, attempts) WHERE id = ? "
                                 "AND state = 'queued'", (delivery,))
        return 0

    def done(self, delivery: str) -> bool:
        with self._lock:
            return self._finish(delivery, time.time(), "done")

    def failed(self, delivery: str) -> bool:
        with self._lock:
            return self._finish(delivery, time.time(), "failed")

    def _finish(self, delivery: str, now: float, state: str) -> bool:
        """A delivery's outcome; a done one's payload is not needed any more; one set aside
        (or failed for the MAX_ATTEMPTS-th time) is failed with its attempts used up, and when
        noted (`aside`); a failed one runs again after its wait (`requeue_due`). A failed (or set aside)
        delivery of which a copy came since its handler started (GitHub's redelivery, or
        yours, answered 202 while it ran) is queued again instead, with a clean slate of
        unfinished starts, as that copy would have been had it come a moment later: True."""
        if state != "done" and self._db.execute(
                "UPDATE deliveries SET state = 'queued', again = 0, attempts = attempts + 1, starts = attempts + 1, "
                "updated = ? WHERE id = ? AND state = 'queued' AND again = 1", (now, delivery)).rowcount:
            return True
        if state == "set_aside":
            self._db.execute("UPDATE deliveries SET state = 'failed', attempts = max(attempts + 1, ?), starts = 0, "
                             "updated = ?, aside = ? WHERE id = ? AND state = 'queued'", (MAX_ATTEMPTS, now, int(now), delivery))
            return False
        if state == "failed":  # the last attempt: set aside (said on `/health`)
            self._db.execute("UPDATE deliveries SET state = 'failed', attempts = attempts + 1, again = 0, updated = ?, "
                             "aside = CASE WHEN attempts + 1 >= ? THEN ? ELSE 0 END WHERE id = ? AND state = 'queued'",
                             (now, MAX_ATTEMPTS, int(now), delivery))
            return False
        self._db.execute("UPDATE deliveries SET state = 'done', attempts = attempts + 1, again = 0, updated = ?, "
                         "payload = NULL WHERE id = ? AND state = 'queued'", (now, delivery))
        return False

    def state(self, delivery: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM deliveries WHERE id = ?", (delivery,)).fetchone()
        return str(row[0]) if row else None

    def is_done(self, delivery: str) -> bool:
        return self.state(delivery) == "done"

    def count(self, state: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM deliveries WHERE state = ?", (state,)).fetchone()[0])

    def pending(self, limit: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[Entry]:
        """Up to `limit` queued deliveries not in `exclude`, oldest first. (The ids are
        chosen first: a payload is read only for a delivery that is taken.)"""
        if limit <= 0:
            return []
        with self._lock:
            ids = [str(row[0]) for row in self._db.execute(
                "SELECT id FROM deliveries WHERE state = 'queued' AND payload IS NOT NULL ORDER BY received LIMIT ?",
                (limit + len(exclude),))]
            chosen = [delivery for delivery in ids if delivery not in exclude][:limit]
            if not chosen:
                return []
            marks = ",".join("?" * len(chosen))
            rows = self._db.execute(f"SELECT id, event, payload, installation, attempts, starts - attempts "
                                    f"FROM deliveries WHERE id IN ({marks}) AND state = 'queued' ORDER BY received",
                                    chosen).fetchall()
        return [Entry(str(row[0]), str(row[1]), bytes(row[2]), row[3], int(row[4]), max(0, int(row[5])))
                for row in rows if row[2] is not None]

    def waiting(self, exclude: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether a queued delivery not in `exclude` waits (nothing is taken)."""
        return bool(self.pending(1, exclude))

    def set_aside(self, since: float) -> list[tuple[str, str]]:
        """The deliveries set aside (their handler failed MAX_ATTEMPTS times, or was cut short
        MAX_UNFINISHED times) since then, and not delivered again: (id, event), the latest first."""
        with self._lock:
            return [(str(row[0]), str(row[1])) for row in self._db.execute(
                "SELECT id, event FROM deliveries WHERE state = 'failed' AND aside > 0 AND aside >= ? "
                "ORDER BY aside DESC, updated DESC", (since,))]  # (aside is to the second: the latest first)

    def requeue_due(self, now: float) -> int:
        """Failed deliveries whose wait (RETRY_AFTER_SECONDS) is over are queued again: how many."""
        first, second = RETRY_AFTER_SECONDS
        with self._lock:
            return self._db.execute(
                "UPDATE deliveries SET state = 'queued', starts = attempts WHERE state = 'failed' AND aside = 0 "
                "AND attempts < ? AND payload IS NOT NULL AND updated <= CASE attempts WHEN 1 THEN ? ELSE ? END",
                (MAX_ATTEMPTS, now - first, now - second)).rowcount

    def requeue_failed(self) -> int:
        """At start: deliveries whose handler failed fewer than MAX_ATTEMPTS times are queued again."""
        with self._lock:
            return self._db.execute("UPDATE deliveries SET state = 'queued' WHERE state = 'failed' AND attempts < ? "
                                    "AND payload IS NOT NULL", (MAX_ATTEMPTS,)).rowcount

    def forget_old(self, now: float | None = None) -> int:
        """Done deliveries, and those set aside, untouched for KEEP_DONE_SECONDS are forgotten
        (as Redis lets their hashes expire: the two journals know the same ids)."""
        cutoff = (now if now is not None else time.time()) - KEEP_DONE_SECONDS
        with self._lock:
            return self._db.execute("DELETE FROM deliveries WHERE (state = 'done' OR (state = 'failed' AND (aside > 0 "
                                    "OR attempts >= ?))) AND updated < ?", (MAX_ATTEMPTS, cutoff)).rowcount

    def known(self, deliveries: list[str]) -> set[str]:
        """Which of these delivery ids the journal has (in any state)."""
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(deliveries), 500):
                chunk = deliveries[start:start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(str(r[0]) for r in self._db.execute(f"SELECT id FROM deliveries WHERE id IN ({marks})",
                                                                 chunk))
        return found


def _settle(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """In the event loop: hand each waiting request its write's outcome."""
    for future, ok, value in settled:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
