"""The spool: a web process makes each delivery durable with one write and a share of
one fsync, and its worker reads the spool into the journal's table, exactly once, and
deletes what it has read. Crashes, damage and a full disk are tried on real files."""

from __future__ import annotations

import asyncio
import errno
import logging
from pathlib import Path

import pytest

from bot import spool
from bot.journal import Journal


def web_and_worker(directory: Path) -> tuple[Journal, Journal]:
    """The two journals of `foldbot serve`, as `bot.server.open_journal` opens them."""
    return (Journal(directory, checkpoints=False, spooled="write"),
            Journal(directory, fsync=False, spooled="read"))


def entries(journal: Journal) -> list[tuple[str, str, bytes, int | None]]:
    return [(e.id, e.event, e.payload, e.installation) for e in journal.pending(100)]


async def test_what_the_web_process_spools_the_worker_reads_in_once(tmp_path: Path) -> None:
    web, worker = web_and_worker(tmp_path)
    assert await asyncio.gather(web.record("a", "workflow_run", b'{"n": 1}', 7),
                                web.record("b", "issue_comment", b'{"n": 2}', None)) == ["new", "new"]
    assert web.state("a") is None and web.unread() > 0  # on the disk, in the spool only
    assert entries(worker) == [("a", "workflow_run", b'{"n": 1}', 7), ("b", "issue_comment", b'{"n": 2}', None)]
    assert web.unread() == 0 and worker.state("a") == "queued"
    assert await web.record("a", "workflow_run", b'{"n": 1}', 7) == "queued"  # a copy, while it waits
    worker.done("a")
    worker.failed("b")
    assert await web.record("a", "workflow_run", b'{"n": 1}', 7) == "done"
    assert await web.record("b", "issue_comment", b'{"n": 3}', None) == "failed"  # a redelivery runs it again
    assert entries(worker) == [("b", "issue_comment", b'{"n": 3}', None)]
    assert worker.state("a") == "done"  # the spooled copy of a done delivery changed nothing
    worker.failed("b")
    web.close()
    worker.close()
    again = Journal(tmp_path, fsync=False, spooled="read")  # the positions survive: nothing is read twice
    assert entries(again) == [] and again.state("b") == "failed"


async def test_a_burst_is_a_few_fsyncs(tmp_path: Path) -> None:
    web, worker = web_and_worker(tmp_path)
    assert set(await asyncio.gather(*(web.record(f"d{i}", "workflow_run", b"{}" * 500, i)
                                      for i in range(300)))) == {"new"}
    assert web._spooler is not None
    assert web._spooler.synced == 300 and web._spooler.syncs <= 3
    assert [e.id for e in worker.pending(1000)] == [f"d{i}" for i in range(300)]


async def test_a_segment_read_whole_is_deleted_once_a_newer_one_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "SEGMENT_BYTES", 1)  # each group in a segment of its own
    web, worker = web_and_worker(tmp_path)
    for delivery in ("a", "b", "c"):
        await web.record(delivery, "workflow_run", b"{}", 1)
    folder = spool.directory_of(tmp_path)
    assert [p.name for p in spool.segments(folder)] == ["000000000001.log", "000000000002.log", "000000000003.log"]
    assert [e.id for e in worker.pending(10)] == ["a", "b", "c"]
    assert [p.name for p in spool.segments(folder)] == ["000000000003.log"]  # the web process still writes it
    web.close()
    restarted = Journal(tmp_path, checkpoints=False, spooled="write")  # a new process: a new segment
    await restarted.record("d", "workflow_run", b"{}", 1)
    assert [e.id for e in worker.pending(10)] == ["a", "b", "c", "d"]
    assert [p.name for p in spool.segments(folder)] == ["000000000004.log"]


def write_segment(folder: Path, number: int, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{number:012d}.log"
    path.write_bytes(data)
    return path


def test_a_record_cut_short_by_a_crash_is_dropped_and_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = spool.directory_of(tmp_path)
    crashed = write_segment(folder, 1, spool.encode("a", "workflow_run", 1, b"{}")
                            + spool.encode("b", "workflow_run", 1, b'{"x": 1}')[:30])
    write_segment(folder, 2, b"")  # the next web process's segment
    worker = Journal(tmp_path, fsync=False, spooled="read")
    with caplog.at_level(logging.ERROR, logger="foldbot.journal"):
        assert [e.id for e in worker.pending(10)] == ["a"]
    assert f"spool {crashed}: the last record is cut short" in caplog.text
    assert not crashed.exists() and worker.state("b") is None


def test_the_record_being_written_is_read_once_it_is_whole(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = spool.directory_of(tmp_path)
    record = spool.encode("c", "workflow_run", 1, b'{"x": 1}')
    live = write_segment(folder, 1, record[:30])
    worker = Journal(tmp_path, fsync=False, spooled="read")
    with caplog.at_level(logging.ERROR, logger="foldbot.journal"):
        assert worker.pending(10) == []
    assert live.exists() and caplog.text == ""
    with live.open("ab") as file:
        file.write(record[30:])
    assert [e.id for e in worker.pending(10)] == ["c"]


def test_a_damaged_record_is_skipped_and_said_and_the_rest_is_read(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = spool.directory_of(tmp_path)
    damaged = bytearray(spool.encode("b", "workflow_run", 1, b'{"x": 1}'))
    damaged[-2] ^= 0xFF
    first = spool.encode("a", "workflow_run", 1, b"{}")
    write_segment(folder, 1, first + bytes(damaged) + spool.encode("c", "workflow_run", 1, b"{}"))
    worker = Journal(tmp_path, fsync=False, spooled="read")
    with caplog.at_level(logging.ERROR, logger="foldbot.journal"):
        assert [e.id for e in worker.pending(10)] == ["a", "c"]
    assert f"the record at byte {len(first)} is damaged (its CRC does not match); skipped" in caplog.text
    caplog.clear()
    assert worker.ingest() == 0 and caplog.text == ""  # said once


def test_a_segment_with_no_record_where_one_should_start_is_said_and_not_read_further(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = spool.directory_of(tmp_path)
    write_segment(folder, 1, spool.encode("a", "workflow_run", 1, b"{}") + b"garbage that is not a record")
    worker = Journal(tmp_path, fsync=False, spooled="read")
    with caplog.at_level(logging.ERROR, logger="foldbot.journal"):
        assert [e.id for e in worker.pending(10)] == ["a"]
        assert worker.ingest() == 0
    assert caplog.text.count("nothing after byte") == 1
    assert "until the web process starts a new segment (restart it)" in caplog.text


async def test_a_failed_write_refuses_its_deliveries_and_the_next_ones_go_to_a_new_segment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    web, worker = web_and_worker(tmp_path)
    real = spool.os.writev

    def half_then_full(fd: int, buffers: list[bytes]) -> int:
        monkeypatch.setattr(spool.os, "writev", real)
        real(fd, [buffers[0][:10]])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spool.os, "writev", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        await web.record("lost", "workflow_run", b"{}", 1)
    assert await web.record("kept", "workflow_run", b"{}", 1) == "new"
    assert [p.name for p in spool.segments(spool.directory_of(tmp_path))] == ["000000000001.log", "000000000002.log"]
    assert [e.id for e in worker.pending(10)] == ["kept"]
    assert [p.name for p in spool.segments(spool.directory_of(tmp_path))] == ["000000000002.log"]


async def test_a_failed_fsync_refuses_the_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    web, _ = web_and_worker(tmp_path)

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(spool.os, "fdatasync", failing)
    results = await asyncio.gather(*(web.record(f"d{i}", "workflow_run", b"{}", 1) for i in range(3)),
                                   return_exceptions=True)
    assert [str(r) for r in results] == ["[Errno 5] Input/output error"] * 3


async def test_a_closed_spool_refuses(tmp_path: Path) -> None:
    web, _ = web_and_worker(tmp_path)
    web.close()
    with pytest.raises(OSError, match="the spool is closed"):
        await web.record("late", "workflow_run", b"{}", 1)


def test_a_record_longer_than_a_read_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "READ_BYTES", 64)
    folder = spool.directory_of(tmp_path)
    big = b'{"x": "' + b"y" * 1000 + b'"}'
    write_segment(folder, 1, b"".join(spool.encode(d, "workflow_run", 1, big) for d in ("a", "b", "c")))
    worker = Journal(tmp_path, fsync=False, spooled="read")
    assert [(e.id, e.payload) for e in worker.pending(10)] == [("a", big), ("b", big), ("c", big)]
