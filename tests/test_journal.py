"""No lost events: the journal writes each accepted delivery down before the 202, is
the dedupe across restarts, holds what a full queue cannot, and gives back at start
what a killed process left unfinished (a real `python -m bot serve`, killed -9)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot import server
from bot.journal import (KEEP_DONE_SECONDS, MAX_ATTEMPTS, RETRY_AFTER_SECONDS, Journal, JournalLost, NotQueued,
                         _Write)
from tests.fakegithub import FakeGitHub
from tests.harness import World, serve_process as _serve, sglang_world, sign, start_bot, until
from tests.harness import free_port
from tests.test_app_workflow_run import bot_comments, dashboards


def test_the_journal_records_states_and_is_the_dedupe(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "data")
    assert journal.durable and journal.path == tmp_path / "data" / "foldbot.sqlite3"
    assert sqlite3.connect(journal.path).execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert journal.accept("a", "workflow_run", b'{"n": 1}', 7) == "new"
    assert journal.accept("b", "issue_comment", b'{"n": 2}', None) == "new"
    assert journal.accept("a", "workflow_run", b'{"n": 1}', 7) == "queued"
    assert [(e.id, e.event, e.payload, e.installation) for e in journal.pending(10)] == [
        ("a", "workflow_run", b'{"n": 1}', 7), ("b", "issue_comment", b'{"n": 2}', None)]
    assert [e.id for e in journal.pending(10, exclude={"a"})] == ["b"]
    assert [e.id for e in journal.pending(1)] == ["a"]
    journal.done("a")
    assert journal.accept("a", "workflow_run", b"{}", 7) == "done" and journal.is_done("a")
    journal.failed("b")
    assert journal.state("b") == "failed" and [e.id for e in journal.pending(10)] == []
    assert journal.accept("b", "issue_comment", b'{"n": 3}', None) == "failed"  # a redelivery runs it again
    assert [(e.id, e.payload) for e in journal.pending(10)] == [("b", b'{"n": 3}')]
    journal.close()
    again = Journal(tmp_path / "data")  # what was written survives the process
    assert (again.state("a"), again.state("b"), again.state("c")) == ("done", "queued", None)
    assert again.known(["a", "b", "c"]) == {"a", "b"}


def test_failed_deliveries_are_retried_at_start_a_bounded_number_of_times(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.accept("x", "workflow_run", b"{}", 1)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        journal.failed("x")
        assert journal.requeue_failed() == (1 if attempt < MAX_ATTEMPTS else 0)
    assert journal.state("x") == "failed"


def test_a_failed_delivery_runs_again_after_its_wait_and_is_set_aside_after_the_last(tmp_path: Path) -> None:
    """While foldbot runs (not only at the next start): 2 min after the first failure, 15 min
    after the second; the third sets it aside (said on `/health`), and nothing runs it again."""
    journal = Journal(tmp_path)
    journal.accept("x", "workflow_run", b"{}", 1)
    for attempt, wait in ((1, RETRY_AFTER_SECONDS[0]), (2, RETRY_AFTER_SECONDS[1])):
        journal._db.execute("UPDATE deliveries SET starts = starts + 1")  # noqa: SLF001 - its handler started
        failed_at = time.time()
        journal.failed("x")
        assert journal.requeue_due(failed_at + wait - 5) == 0
        assert journal.requeue_due(failed_at + wait + 1) == 1
        assert [(e.id, e.attempts, e.unfinished) for e in journal.pending(5)] == [("x", attempt, 0)]
        assert journal.set_aside(0) == []
    journal.failed("x")
    assert journal.requeue_due(time.time() + 10 ** 6) == 0 and journal.state("x") == "failed"
    assert journal.set_aside(time.time() - 60) == [("x", "workflow_run")]


def test_old_done_and_set_aside_deliveries_are_forgotten(tmp_path: Path) -> None:
    """As Redis lets their hashes expire; a failed one still to run again, or a queued one, stays."""
    journal = Journal(tmp_path)
    for delivery in ("old", "aside", "failed", "new"):
        journal.accept(delivery, "workflow_run", b"{}", 1)
    journal.done("old")
    journal._finish("aside", time.time(), "set_aside")
    journal.failed("failed")
    assert journal.forget_old() == 0
    assert journal.forget_old(now=time.time() + KEEP_DONE_SECONDS + 1) == 2
    assert [journal.state(d) for d in ("old", "aside", "failed", "new")] == [None, None, "failed", "queued"]


@pytest.mark.parametrize("fsync", [True, False], ids=["web process", "worker process"])
async def test_a_note_lasts_its_time_and_survives_a_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            fsync: bool) -> None:
    journal = Journal(tmp_path, fsync=fsync)  # the worker's commits in its loop when the file is free
    await journal.keep_note("redeliver", "first", 60)
    await journal.keep_note("redeliver", "second", 60)
    await journal.keep_note("brief", "gone soon", 1)
    journal.close()
    again = Journal(tmp_path)
    assert (await again.note("redeliver"), await again.note("brief"), await again.note("never")) == (
        "second", "gone soon", None)
    later = time.time() + 2
    monkeypatch.setattr("bot.journal.time.time", lambda: later)
    assert (await again.note("redeliver"), await again.note("brief")) == ("second", None)
    await again.keep_note("redeliver", "third", 60)  # a write drops what has lapsed
    assert [row[0] for row in again._db.execute("SELECT name FROM notes")] == ["redeliver"]
    again.close()


async def test_a_burst_is_committed_in_groups_and_every_write_is_on_disk(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    states = await asyncio.gather(*(journal.record(f"d{i}", "workflow_run", b"{}", i) for i in range(300)))
    assert states == ["new"] * 300
    assert journal.grouped == 300 and journal.commits < 100  # one fsync served many deliveries
    assert await asyncio.gather(journal.record("d7", "workflow_run", b"{}", 7), journal.mark("d8", "done"),
                                journal.record("d8", "workflow_run", b"{}", 8)) == ["queued", False, "done"]
    journal.close()
    reopened = sqlite3.connect(tmp_path / "foldbot.sqlite3")
    assert reopened.execute("SELECT count(*), sum(state = 'done') FROM deliveries").fetchone() == (300, 1)


def test_each_process_opens_the_journal_as_its_part_needs() -> None:
    from bot.server import open_journal
    from bot.settings import Settings
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(webhook_secret="s", data_dir=Path(tmp))
        pragmas = {}
        for role in ("all", "web", "worker"):
            journal = open_journal(settings, role)
            assert isinstance(journal, Journal)
            pragmas[role] = (journal._db.execute("PRAGMA synchronous").fetchone()[0],
                             journal._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
            journal.close()
    # FULL = 2, NORMAL = 1: the answering process's commits wait for the disk; the worker copies the WAL
    # back, in its writer thread, not in a commit (SQLite's automatic checkpoint would be in its event loop)
    assert pragmas == {"all": (2, 1000), "web": (2, 0), "worker": (1, 0)}


async def test_a_worker_journal_commits_in_its_loop_and_waits_in_its_thread_while_the_web_process_holds_the_file(
        tmp_path: Path) -> None:
    web = Journal(tmp_path, fsync=True, checkpoints=False)
    worker = Journal(tmp_path, fsync=False)
    try:
        await web.record("d1", "workflow_run", b"{}", 1)
        await web.record("d2", "workflow_run", b"{}", 1)
        await worker.begin("d1")
        assert await worker.mark("d1", "done") is False
        assert worker._writer is None  # the file was free: committed in place, no thread woken
        other = sqlite3.connect(tmp_path / "foldbot.sqlite3", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the web process holds the file for half a second
        asyncio.get_running_loop().call_later(0.5, other.execute, "COMMIT")
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1
        ticking = asyncio.create_task(tick())
        await worker.mark("d2", "done")
        ticking.cancel()
        assert ticks >= 20  # the wait was in the writer thread: the worker's loop went on
        assert web.state("d2") == "done" and web.state("d1") == "done"
        other.close()
    finally:
        worker.close()
        web.close()


async def test_a_worker_journal_checkpoints_in_its_writer_thread(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.journal.CHECKPOINT_EVERY", 3)
    web = Journal(tmp_path, fsync=True, checkpoints=False)
    worker = Journal(tmp_path, fsync=False)
    file = tmp_path / "foldbot.sqlite3"
    try:
        for i in range(3):
            await web.record(f"d{i}", "workflow_run", b"x" * 50_000, 1)
        before = file.stat().st_size
        for i in range(2):
            await worker.mark(f"d{i}", "done")
        await asyncio.sleep(0.3)
        assert file.stat().st_size == before  # nothing copies the WAL back before the third commit
        await worker.mark("d2", "done")
        await until(lambda: file.stat().st_size > before + 100_000, seconds=5)  # the payloads are in the file
    finally:
        worker.close()
        web.close()


async def test_a_group_that_cannot_be_written_refuses_each_of_its_writes_and_the_next_group_goes_on(
        tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal._db.execute("PRAGMA query_only = ON")  # every write fails inside the writer thread, as a full disk does
    results = await asyncio.gather(*(journal.record(f"d{i}", "workflow_run", b"{}", 1) for i in range(20)),
                                   return_exceptions=True)
    assert {type(r) for r in results} == {sqlite3.OperationalError}
    assert journal.count("queued") == 0
    journal._db.execute("PRAGMA query_only = OFF")
    assert await journal.record("d0", "workflow_run", b"{}", 1) == "new" and journal.count("queued") == 1
    with pytest.raises(ValueError, match="marked done, failed or set_aside, not 'queued'"):
        await journal.mark("d0", "queued")
    journal.close()
    with pytest.raises(sqlite3.ProgrammingError, match="the journal is closed"):  # refused, not left waiting
        await asyncio.wait_for(journal.record("d1", "workflow_run", b"{}", 1), timeout=5)


async def test_copies_of_one_delivery_arriving_at_once_run_once(fake_github: FakeGitHub, tmp_path: Path) -> None:
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        answers = await asyncio.gather(*(bot.deliver("workflow_run", world.payload(world.runs[0]["id"]),
                                                     delivery="same") for _ in range(5)))
        await bot.settle()
        assert sorted(status for status, _ in answers) == [202] * 5
        assert sum(answer == {"queued": "same"} for _, answer in answers) == 1
        assert "same" in bot.state.done
        number = world.runs[0]["pull_requests"][0]["number"]
        assert len(bot_comments(fake_github, world, number)) == 1
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_full_queue_journals_and_answers_202_then_runs_everything(fake_github: FakeGitHub) -> None:
    world = sglang_world(fake_github, runs=5)
    fake_github.set_latency(0.3, method="GET", path=r"/pulls/\d+/files$")
    bot, runner = await start_bot(fake_github, queue_size=1, workers=1)
    try:
        answers = [await bot.deliver("workflow_run", world.payload(run["id"]), delivery=f"full-{i}")
                   for i, run in enumerate(world.runs)]
        assert [status for status, _ in answers] == [202] * 5
        assert sum(1 for _, answer in answers if answer.get("backlog")) >= 3
        # (the queue empties between the pump's refills from the journal: wait for the deliveries, not the queue)
        await until(lambda: all(f"full-{i}" in bot.state.done for i in range(5)), 60)
        await asyncio.wait_for(bot.settle(), 60)
        assert bot.state.journal.count("queued") == 0 and not bot.state.backlog
        for run in world.runs:
            assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
        text = await (await bot.session.get(f"{bot.url}/metrics")).text()
        assert 'outcome="backlog"' in text and 'outcome="queue_full"' not in text
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_the_dedupe_survives_a_restart(fake_github: FakeGitHub, tmp_path: Path) -> None:
    world = sglang_world(fake_github, runs=2)
    payload = world.payload(world.runs[-1]["id"])
    first, runner = await start_bot(fake_github, data_dir=tmp_path)
    assert (await first.deliver("workflow_run", payload, delivery="once"))[0] == 202
    await first.settle()
    await first.session.close()
    await runner.cleanup()
    second, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        before = len(fake_github.requests)
        assert await second.deliver("workflow_run", payload, delivery="once") == (
            200, {"duplicate": "once", "state": "already processed"})
        await second.settle()
        assert fake_github.requests[before:] == []
    finally:
        await second.session.close()
        await runner.cleanup()


async def test_kill_9_after_the_202_loses_nothing(fake_github: FakeGitHub, tmp_path: Path) -> None:
    world = sglang_world(fake_github)
    run = world.runs[-1]
    number = run["pull_requests"][0]["number"]
    body = json.dumps(world.payload(run["id"])).encode()
    headers = {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "kill-9", "X-Hub-Signature-256": sign(body)}
    port = free_port()
    fake_github.set_latency(5, method="POST", path=r"/access_tokens$")  # the first process is stuck in its work
    first = await _serve(fake_github, tmp_path, port)
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=headers) as response:
            assert (response.status, await response.json()) == (202, {"queued": "kill-9"})
        await asyncio.sleep(0.3)
        os.killpg(first.pid, signal.SIGKILL)  # the web process and its worker: the host went down
        await first.wait()
        assert bot_comments(fake_github, world, number) == [] and dashboards(fake_github, world) == []
        fake_github.knobs.clear()
        second = await _serve(fake_github, tmp_path, port)
        try:
            for _ in range(300):
                if bot_comments(fake_github, world, number) and Journal(tmp_path).is_done("kill-9"):
                    break
                await asyncio.sleep(0.05)
            async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=headers) as response:
                assert (response.status, await response.json()) == (
                    200, {"duplicate": "kill-9", "state": "already processed"})
        finally:
            second.terminate()
            output, _ = await asyncio.wait_for(second.communicate(), timeout=30)
    assert second.returncode == 0, output.decode()
    assert "1 unfinished deliveries resumed" in output.decode()
    assert len(bot_comments(fake_github, world, number)) == 1
    assert len(dashboards(fake_github, world)) == 1


async def test_a_journal_that_cannot_write_answers_503_without_a_traceback(
        fake_github: FakeGitHub, bot, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    world = sglang_world(fake_github, runs=1)

    def broken(*args: object) -> str:
        raise sqlite3.OperationalError("disk I/O error")

    bot.state.journal._accept = broken
    with caplog.at_level("INFO"):
        status, answer = await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="disk")
    assert (status, answer) == (503, {"error": "foldbot cannot record the delivery now; it is redelivered later"})
    assert "Traceback" not in caplog.text and "disk" not in bot.state.in_flight
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        "delivery disk: the journal cannot record it: disk I/O error",
        "the journal (in memory) cannot record deliveries: disk I/O error (/health says degraded until it answers "
        "again)"]


async def test_a_journal_that_cannot_write_is_said_on_health_until_it_writes_again(
        fake_github: FakeGitHub, bot, caplog: pytest.LogCaptureFixture,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk: every write refused. `/health` says so, with the reason, from the first refused
    delivery until a write goes through again (tried every second, and logged once each way)."""
    world = sglang_world(fake_github, runs=1)
    payload = world.payload(world.runs[0]["id"])

    def full(*args: object) -> str:
        raise sqlite3.OperationalError("database or disk is full")

    async def health() -> tuple[int, dict[str, Any]]:
        async with bot.session.get(f"{bot.url}/health") as response:
            return response.status, await response.json()

    assert (await health())[0] == 200
    monkeypatch.setattr(bot.state.journal, "_accept", full)
    monkeypatch.setattr(bot.state.journal, "_keep_note", full)
    with caplog.at_level("INFO", logger="foldbot.server"):
        for attempt in range(3):
            assert (await bot.deliver("workflow_run", payload, delivery=f"full-{attempt}"))[0] == 503
        await asyncio.sleep(1.5)  # the journal is tried again, and refuses again
        status, answer = await health()
        assert (status, answer["status"], answer["reason"]) == (
            503, "degraded", "the journal (in memory) cannot be written or read: database or disk is full")
        monkeypatch.undo()
        await until(lambda: bot.state.journal_problem is None, seconds=5)
        assert (await health())[0] == 200
        assert (await bot.deliver("workflow_run", payload, delivery="full-0"))[0] == 202
    assert [r.getMessage() for r in caplog.records if "/health" in r.getMessage() or "answers again" in
            r.getMessage()] == [
        "the journal (in memory) cannot record deliveries: database or disk is full (/health says degraded until "
        "it answers again)", "the journal (in memory) answers again"]


async def test_a_journal_file_deleted_under_foldbot_is_said_and_nothing_more_is_accepted(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An operator deletes the journal file of a running foldbot: SQLite goes on writing to the
    deleted file, so a 202 now would be lost at the restart. Within a second `/health` says so and
    deliveries are answered 503 (GitHub counts them failed; they are asked for after the restart)."""
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        with caplog.at_level(logging.ERROR, logger="foldbot.server"):
            for name in ("foldbot.sqlite3", "foldbot.sqlite3-wal", "foldbot.sqlite3-shm"):
                (tmp_path / name).unlink(missing_ok=True)
            await until(lambda: bot.state.journal_lost is not None, seconds=5)
            async with bot.session.get(f"{bot.url}/health") as response:
                assert (response.status, (await response.json())["reason"]) == (
                    503, f"the journal file {tmp_path / 'foldbot.sqlite3'} was deleted while foldbot ran: what it "
                         f"writes now is lost when it stops; restart foldbot (all its processes) to open the journal "
                         f"again")
            assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="late"))[0] == 503
            await asyncio.sleep(1.5)  # still lost: said once
        assert [r.getMessage() for r in caplog.records].count(
            f"the journal file {tmp_path / 'foldbot.sqlite3'} was deleted while foldbot ran: what it writes now is "
            f"lost when it stops; restart foldbot (all its processes) to open the journal again; until then "
            f"deliveries are answered 503 (and asked for again after the restart)") == 1
    finally:
        await bot.session.close()
        await runner.cleanup()
    second, runner = await start_bot(fake_github, data_dir=tmp_path)  # the restart: a new journal, and well
    try:
        async with second.session.get(f"{second.url}/health") as response:
            assert response.status == 200
        assert (await second.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="late"))[0] == 202
    finally:
        await second.session.close()
        await runner.cleanup()


@pytest.mark.parametrize("deleted", ["foldbot.sqlite3-wal", "foldbot.sqlite3-shm"])
async def test_only_the_wal_or_shared_memory_deleted_under_foldbot_is_said_too(
        fake_github: FakeGitHub, tmp_path: Path, deleted: str) -> None:
    """The journal file stays, its `-wal` (or `-shm`) goes: SQLite goes on committing into the
    deleted WAL, so every 202 since would be lost at the next stop. Said as the file's loss is."""
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        (tmp_path / deleted).unlink()
        await until(lambda: bot.state.journal_lost is not None, seconds=5)
        async with bot.session.get(f"{bot.url}/health") as response:
            assert (response.status, (await response.json())["reason"]) == (
                503, f"the journal file {tmp_path / deleted} was deleted while foldbot ran: what it writes now is "
                     f"lost when it stops; restart foldbot (all its processes) to open the journal again")
        assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="late"))[0] == 503
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_delivery_in_the_second_before_the_watcher_looks_is_refused_not_lost(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The watcher looks once a second; a delivery that comes between the deletion and its look
    is refused by the commit itself (which checks the files before and after it), not answered
    202 into a deleted file."""
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        (tmp_path / "foldbot.sqlite3").unlink()
        assert bot.state.journal_lost is None  # the watcher has not looked yet
        status, body = await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="in-the-gap")
        assert (status, body) == (503, {"error": "foldbot cannot record the delivery now; it is redelivered later"})
        assert bot.state.journal_lost == (
            f"the journal file {tmp_path / 'foldbot.sqlite3'} was deleted while foldbot ran: what it writes now is "
            f"lost when it stops; restart foldbot (all its processes) to open the journal again")
        assert bot.state.journal.state("in-the-gap") is None  # nothing written into the deleted file
    finally:
        await bot.session.close()
        await runner.cleanup()


def test_a_commit_during_which_the_file_goes_is_refused(tmp_path: Path) -> None:
    """Deleted between the check before the writes and the COMMIT's fsync: the commit went into
    the deleted file, so its writes are refused (a 503), not reported as written."""
    journal = Journal(tmp_path)
    try:
        def accept_then_delete(*args: object) -> str:
            outcome = journal._accept(*args)  # noqa: SLF001 - the write, then the operator's rm
            (tmp_path / "foldbot.sqlite3").unlink()
            return outcome

        with journal._lock:  # noqa: SLF001
            journal._db.execute("BEGIN IMMEDIATE")  # noqa: SLF001
            [(ok, value)] = journal._transaction(  # noqa: SLF001
                [_Write(accept_then_delete, ("d1", "workflow_run", b"{}", 1, time.time()), None)])
        assert not ok and isinstance(value, JournalLost)
        assert str(value).startswith(f"the journal file {tmp_path / 'foldbot.sqlite3'} was deleted while foldbot ran")
    finally:
        journal.close()


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A filesystem of its own (tmpfs, `size`) at `folder`, to fill up; skipped, saying why,
    where this machine does not let the tests mount one (not root)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem to fill up here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


async def test_a_full_disk_as_deployed_answers_503_says_so_and_loses_nothing_once_freed(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """`foldbot serve` (its worker process) with its data directory on a disk that fills up: a
    delivery is answered 503, not 202 and lost; `/health` says why; once space is freed it says ok
    without a restart, and the deliveries GitHub (here: the test) sends again are each reported once."""
    world = sglang_world(fake_github, runs=3)
    port = free_port()

    async def post(session: aiohttp.ClientSession, i: int) -> int:
        body = json.dumps(world.payload(world.runs[i]["id"])).encode()
        async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers={
                "X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": f"full-{i}",
                "X-Hub-Signature-256": sign(body)}) as response:
            return response.status

    async def health(session: aiohttp.ClientSession) -> tuple[int, dict[str, Any]]:
        async with session.get(f"http://127.0.0.1:{port}/health") as response:
            return response.status, await response.json()

    with small_disk(tmp_path / "disk", "3m") as disk:
        process = await _serve(fake_github, disk / "data", port)
        try:
            async with aiohttp.ClientSession() as session:
                assert await post(session, 0) == 202
                await until(lambda: len(bot_comments(fake_github, world, world.runs[0]["pull_requests"][0]["number"])))
                with open(disk / "filler", "wb") as filler:
                    with pytest.raises(OSError, match="No space left on device"):
                        while True:
                            filler.write(b"x" * 65536)
                            filler.flush()
                assert [await post(session, 1), await post(session, 2)] == [503, 503]
                status, said = await health(session)
                assert (status, said["status"]) == (503, "degraded")
                assert said["reason"].startswith(f"the journal ({disk / 'data' / 'foldbot.sqlite3'}) cannot ")
                assert said["reason"].endswith(": database or disk is full")
                (disk / "filler").unlink()
                for _ in range(100):
                    if (await health(session))[0] == 200:
                        break
                    await asyncio.sleep(0.1)
                else:
                    pytest.fail(f"/health did not come back: {await health(session)}")
                assert [await post(session, 1), await post(session, 2)] == [202, 202]  # as redelivered
                for run in world.runs:
                    number = run["pull_requests"][0]["number"]
                    await until(lambda: len(bot_comments(fake_github, world, number)) > 0)  # noqa: B023
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            output = (await asyncio.wait_for(process.communicate(), timeout=60))[0].decode()
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    assert [len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) for run in world.runs] == [1, 1, 1]
    assert output.count("cannot record deliveries: database or disk is full (/health says degraded") == 1, output


async def test_the_outcome_of_a_delivery_that_is_not_queued_any_more_changes_nothing(tmp_path: Path) -> None:
    """A stale copy read before a copy of it ran to the end (the refill's read, in memory
    while the other ran) ends late: its failure or setting aside does not undo `done`, and
    a late `done` does not take a set-aside delivery's payload (as in Redis)."""
    journal = Journal(tmp_path)
    for delivery in ("ok", "aside"):
        journal.accept(delivery, "workflow_run", b"{}", 1)
    await journal.mark("ok", "done")
    for outcome in ("set_aside", "failed", "done"):
        assert await journal.mark("ok", outcome) is False
        assert journal.state("ok") == "done" and journal.set_aside(0) == []
    await journal.mark("aside", "set_aside")
    aside = journal.set_aside(0)
    for later in ("aside-2", "aside-3"):  # within the same second: still the latest first
        journal.accept(later, "workflow_run", b"{}", 1)
        await journal.mark(later, "set_aside")
    assert [d for d, _ in journal.set_aside(0)] == ["aside-3", "aside-2", "aside"]
    for later in ("aside-2", "aside-3"):
        journal.accept(later, "workflow_run", b"{}", 1)  # (delivered again: not set aside any more)
    await journal.mark("aside-2", "done")
    await journal.mark("aside-3", "done")
    for outcome in ("done", "failed", "set_aside"):
        assert await journal.mark("aside", outcome) is False
    assert journal.state("aside") == "failed" and journal.set_aside(0) == aside == [("aside", "workflow_run")]
    assert sqlite3.connect(journal.path).execute("SELECT payload FROM deliveries WHERE id = 'aside'").fetchone() == (
        b"{}",)  # (kept, for a run after a redelivery)


async def test_starts_that_never_finish_are_counted_and_a_delivery_set_aside_stays_failed(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.accept("x", "workflow_run", b"{}", 1)
    await journal.begin("x")
    await journal.begin("x")  # two worker processes died while it ran
    assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("x", 2)]
    await journal.mark("x", "set_aside")
    assert journal.state("x") == "failed" and journal.pending(5) == []
    assert journal.requeue_failed() == 0  # not at the next start either
    assert journal.set_aside(time.time() - 60) == [("x", "workflow_run")]  # for /health
    assert journal.set_aside(time.time() + 60) == []  # (only those set aside since then)
    assert journal.accept("x", "workflow_run", b'{"again": 1}', 1) == "failed"  # a redelivery: a clean slate
    assert journal.set_aside(time.time() - 60) == []
    assert [(e.id, e.payload, e.unfinished) for e in journal.pending(5)] == [("x", b'{"again": 1}', 0)]
    await journal.begin("x")
    await journal.mark("x", "done")
    assert journal.is_done("x")


async def test_a_handler_a_stop_cut_short_is_not_counted_as_a_worker_that_died(tmp_path: Path) -> None:
    """A handler waiting out a 50 s `Retry-After` outlasts the 25 s drain at each deploy: each start
    stayed counted as unfinished, and the fourth start set it aside as a delivery that "killed the
    worker each time" (failed, never run again; `/health` 503 for a day)."""
    journal = Journal(tmp_path)
    journal.accept("slow", "workflow_run", b"{}", 1)
    for _ in range(3):
        await journal.begin("slow")
        assert journal.hand_back(["slow"], cut=["slow"]) == 0  # the stop hands it back: it stays queued here
    assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("slow", 0)]
    await journal.begin("slow")
    await journal.begin("slow")  # and a worker that really died is still counted
    journal.hand_back(["slow"])
    assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("slow", 2)]
    journal.close()


async def test_a_delivery_done_since_the_refill_read_it_does_not_run_again(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The refill reads queued deliveries in a thread; within that read a copy of one can be
    answered, run and marked done. The refill then queues it a second time: its start (`begin`)
    finds it done and it does not run (no GitHub call, nothing left in hand)."""
    world = sglang_world(fake_github, runs=1)
    body = json.dumps(world.payload(world.runs[0]["id"])).encode()
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.post(body, {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "twice",
                                      "X-Hub-Signature-256": sign(body)}))[0] == 202
        await bot.settle()
        assert bot.state.journal.is_done("twice")
        calls = len(fake_github.request_log)
        with caplog.at_level(logging.INFO, logger="foldbot.server"):
            assert server.enqueue(bot.state, server.Delivery("twice", "workflow_run", body, 1))  # the refill's copy
            await bot.settle()
        assert len(fake_github.request_log) == calls and "twice" not in bot.state.in_flight
        assert "delivery twice (workflow_run): not run: it is done already" in caplog.messages
        assert len(bot_comments(fake_github, world, world.runs[0]["pull_requests"][0]["number"])) == 1
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_delivery_whose_handler_failed_runs_again_while_foldbot_runs(
        fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub failed it (500s past the retries): it is not left failed until a restart or a
    manual redelivery; after its wait it runs again, and reports once."""
    monkeypatch.setattr("bot.journal.RETRY_AFTER_SECONDS", (1.0, 1.0))
    monkeypatch.setattr(server, "UPKEEP_SECONDS", 0.5)
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        fake_github.set_error_rate(1.0, status=500, path=r"/pulls/\d+/files$")
        assert (await bot.deliver("workflow_run", world.payload(last["id"]), delivery="outage"))[0] == 202
        await until(lambda: bot.state.journal.state("outage") == "failed")
        assert bot_comments(fake_github, world, number) == []
        fake_github.set_error_rate(0.0)  # GitHub is back
        await until(lambda: bot.state.journal.is_done("outage"), seconds=10)
        assert len(bot_comments(fake_github, world, number)) == 1
        async with bot.session.get(f"{bot.url}/health") as response:
            assert response.status == 200
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_begin_counts_only_a_delivery_still_queued(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    try:
        journal.accept("d", "workflow_run", b"{}", 1)
        await journal.begin("d")
        await journal.mark("d", "done")
        with pytest.raises(NotQueued, match="^it is done already$"):
            await journal.begin("d")
        assert await journal.begin("never-written") is None  # (not the journal's: it runs, uncounted)
        journal.accept("f", "workflow_run", b"{}", 1)
        await journal.mark("f", "failed")
        with pytest.raises(NotQueued, match="^it is failed already$"):
            await journal.begin("f")
    finally:
        journal.close()


def test_a_journal_written_before_set_aside_deliveries_were_kept_opens_and_gets_the_column(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "foldbot.sqlite3") as db:  # as foldbot wrote it before `aside`
        db.execute("CREATE TABLE deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, payload BLOB, installation "
                   "INTEGER, state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'failed')), attempts INTEGER NOT "
                   "NULL DEFAULT 0, starts INTEGER NOT NULL DEFAULT 0, again INTEGER NOT NULL DEFAULT 0, received "
                   "REAL NOT NULL, updated REAL NOT NULL)")
        db.execute("INSERT INTO deliveries (id, event, payload, state, attempts, received, updated) VALUES "
                   "('old', 'workflow_run', NULL, 'failed', 3, 1, 1)")
    journal = Journal(tmp_path)
    try:
        assert journal.set_aside(0) == []  # (one set aside before: not known as such, not said)
        assert journal.state("old") == "failed"
    finally:
        journal.close()


async def test_a_delivery_set_aside_in_one_process_is_said_on_health_even_after_a_restart(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """Three starts that never finished (three processes died running it): at the next start it
    is set aside, and `/health` says so (it was answered 202: nobody else will), in this
    process and in the next one, which reads it from the journal."""
    world = sglang_world(fake_github, runs=1)
    journal = Journal(tmp_path)
    journal.accept("doomed", "workflow_run", json.dumps(world.payload(world.runs[0]["id"])).encode(), 1)
    for _ in range(3):
        await journal.begin("doomed")
    journal.close()
    reason = ("1 deliveries were set aside in the last 24 h, their handler failed, or was cut short (the "
              "worker process died), 3 times each: doomed (workflow_run); see the log, and once the cause is fixed "
              "redeliver them (the App's advanced settings)")
    for _ in range(2):  # the process that sets it aside, then the next one
        bot, runner = await start_bot(fake_github, data_dir=tmp_path)
        try:
            await until(lambda: bot.state.set_aside)  # noqa: B023  (once read back from the journal)
            assert bot.state.journal.state("doomed") == "failed"
            async with bot.session.get(f"{bot.url}/health") as response:
                assert (response.status, (await response.json())["reason"]) == (503, reason)
            async with bot.session.get(f"{bot.url}/metrics") as response:
                assert "foldbot_set_aside_deliveries 1.0" in (await response.text()).splitlines()
            # what a container's health check asks: the work goes on, a restart would not change this
            async with bot.session.get(f"{bot.url}/health/live") as response:
                assert (response.status, (await response.json())["status"]) == (200, "ok")
        finally:
            await bot.session.close()
            await runner.cleanup()


async def test_a_delivery_about_to_be_set_aside_that_was_delivered_again_runs_and_is_not_said_set_aside(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """Three starts that never finished, then a copy (a redelivery) before the next start:
    the copy's clean slate wins, it runs once, and `/health` never names it as set aside."""
    world = sglang_world(fake_github, runs=1)
    run = world.runs[0]
    journal = Journal(tmp_path)
    payload = world.payload(run["id"])
    body, installation = json.dumps(payload).encode(), payload["installation"]["id"]
    journal.accept("saved", "workflow_run", body, installation)
    for _ in range(3):
        await journal.begin("saved")
    assert journal.accept("saved", "workflow_run", body, installation) == "queued"  # the redelivery
    journal.close()
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        await until(lambda: bot.state.journal.state("saved") == "done")
        await bot.settle()
        assert bot.state.set_aside == []
        async with bot.session.get(f"{bot.url}/health") as response:
            assert response.status == 200, await response.text()
        assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
    finally:
        await bot.session.close()
        await runner.cleanup()


def _refusing(*args: object) -> None:
    raise sqlite3.OperationalError("disk I/O error")


async def _refused(fake_github: FakeGitHub, tmp_path: Path, delivery: str, *, fail: bool = False,
                   **settings: Any) -> tuple[World, Any, Any]:
    """A bot whose journal refuses outcomes, once `delivery` was processed (its handler
    failing, with `fail`) and its outcome refused."""
    world = sglang_world(fake_github, runs=1)
    if fail:  # a GitHub error: the delivery's outcome is `failed`
        fake_github.fail_next(1, status=404, method="GET", path=r"/actions/runs/\d+/jobs$")
    bot, runner = await start_bot(fake_github, data_dir=tmp_path, **settings)
    bot.state.journal._finish = _refusing
    assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery=delivery))[0] == 202
    await until(lambda: delivery in bot.state.unrecorded, 10)
    assert {key: pending.outcome for key, pending in bot.state.unrecorded.items()} == {
        delivery: "failed" if fail else "done"}
    return world, bot, runner


async def test_an_outcome_the_journal_refuses_is_written_again_and_its_delivery_not_run_again(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The disk refuses the outcome of a delivery whose handler ran: it stays queued in the
    journal, but the pump does not take it again (its handler, and its GitHub calls, do not
    run again); `/health` and `/metrics` say so; once the disk takes writes again the
    outcome is written."""
    with caplog.at_level(logging.INFO, logger="foldbot.server"):
        world, bot, runner = await _refused(fake_github, tmp_path, "out")
        journal = bot.state.journal
        try:
            assert journal.state("out") == "queued"
            calls = len(fake_github.requests)
            await asyncio.sleep(2.5)  # two rounds of the pump, the disk still refusing
            assert len(fake_github.requests) == calls and journal.state("out") == "queued"
            assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("out", 1)]  # its handler started once
            async with bot.session.get(f"{bot.url}/health") as response:
                assert response.status == 503
                assert (await response.json())["reason"] == (
                    "the journal refuses to record the outcomes of 1 deliveries (see the log); they are not run "
                    "again, and are written again every second")
            assert "foldbot_unrecorded_outcomes 1.0" in await (await bot.session.get(f"{bot.url}/metrics")).text()
            del journal._finish  # the disk takes writes again
            await until(lambda: not bot.state.unrecorded, 3)
            assert journal.is_done("out") and "out" not in bot.state.in_flight
            async with bot.session.get(f"{bot.url}/health") as response:
                assert response.status == 200
            assert "foldbot_unrecorded_outcomes 0.0" in await (await bot.session.get(f"{bot.url}/metrics")).text()
            assert len(fake_github.requests) == calls
            number = world.runs[0]["pull_requests"][0]["number"]
            assert len(bot_comments(fake_github, world, number)) == 1
        finally:
            await bot.session.close()
            await runner.cleanup()
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("delivery out: the journal cannot record its outcome (done): disk I/O error; written "
                          "again within a second, and not run again meanwhile") == 1
    assert messages.count("journal: 1 outcomes wait to be written (the journal refuses them: disk I/O error)") == 1
    assert "delivery out: its outcome (done) is recorded now" in messages


async def test_an_outcome_being_written_again_is_still_said_until_it_is_written() -> None:
    """While the pump writes a refused outcome again, `/health` (which counts `unrecorded`)
    still says it waits, and a shutdown still waits for it; it was taken out of
    `unrecorded` for the write, so `/health` said ok for that moment, and a shutdown
    stopped without waiting for it."""
    from types import SimpleNamespace

    from bot.metrics import Metrics
    from bot.server import Unrecorded, record_outcomes, unrecorded_problem
    writing, refuse = asyncio.Event(), asyncio.Event()

    class Refusing:
        async def mark(self, delivery: str, outcome: str, *, write: str, run: int | None) -> bool:
            writing.set()
            await refuse.wait()
            raise sqlite3.OperationalError("disk I/O error")

    state = SimpleNamespace(unrecorded={"a": Unrecorded("done", "w-a", None)}, unrecorded_reason=None,
                            recording=set(), in_flight={"a"}, journal=Refusing(), metrics=Metrics())
    pump = asyncio.create_task(record_outcomes(state))  # type: ignore[arg-type]
    await writing.wait()
    assert unrecorded_problem(len(state.unrecorded)) is not None and state.recording == {"a"}
    refuse.set()
    await pump
    assert (list(state.unrecorded), state.recording, state.in_flight) == (["a"], set(), {"a"})


async def test_an_outcome_is_written_once_when_the_pump_and_a_shutdown_write_at_once() -> None:
    """(A second write would count a failure twice: one of MAX_ATTEMPTS used up for nothing.)"""
    from types import SimpleNamespace

    from bot.metrics import Metrics
    from bot.server import Unrecorded, record_outcomes
    written: list[tuple[str, str]] = []

    class Slow:
        async def mark(self, delivery: str, outcome: str, *, write: str, run: int | None) -> bool:
            await asyncio.sleep(0.01)
            written.append((delivery, outcome, write))
            return False

    state = SimpleNamespace(unrecorded={"a": Unrecorded("failed", "w-a", 1), "b": Unrecorded("done", "w-b", None)},
                            unrecorded_reason=None, recording=set(), in_flight={"a", "b"}, journal=Slow(),
                            metrics=Metrics())
    await asyncio.gather(record_outcomes(state), record_outcomes(state))  # type: ignore[arg-type]
    assert (sorted(written), state.unrecorded, state.in_flight) == (
        [("a", "failed", "w-a"), ("b", "done", "w-b")], {}, set())  # each under the id of its first try


async def test_outcomes_still_refused_at_shutdown_are_tried_until_the_drain_ends_then_named(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _, bot, runner = await _refused(fake_github, tmp_path, "left", drain_seconds=1.5)
    await bot.session.close()
    with caplog.at_level(logging.ERROR, logger="foldbot.server"):
        await runner.cleanup()
    assert ("shutdown: the journal refused the outcomes of 1 deliveries (left); they stay queued in it and run again "
            "(at the next start; with Redis, in any replica once this one's hold lapses)") in caplog.text
    assert [e.id for e in Journal(tmp_path).pending(5)] == ["left"]


async def test_an_outcome_refused_for_a_moment_at_shutdown_is_written_before_the_process_ends(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _, bot, runner = await _refused(fake_github, tmp_path, "brief")
    journal = bot.state.journal
    asyncio.get_running_loop().call_later(0.5, delattr, journal, "_finish")  # the disk takes writes again
    await bot.session.close()
    with caplog.at_level(logging.ERROR, logger="foldbot.server"):
        await runner.cleanup()
    assert "shutdown:" not in caplog.text
    reopened = Journal(tmp_path)
    assert reopened.is_done("brief") and reopened.pending(5) == []


async def test_a_redelivery_of_a_failure_the_journal_has_not_taken_yet_runs_it_once_it_has(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """GitHub (or you) redeliver a delivery whose handler failed, to run it again, while
    the journal still refuses that failure: the copy is written down (202: it is in hand),
    and once the failure is written the delivery runs again, not dropped by the 202."""
    world, bot, runner = await _refused(fake_github, tmp_path, "again", fail=True)
    payload = world.payload(world.runs[0]["id"])
    try:
        with caplog.at_level(logging.INFO, logger="foldbot.server"):
            assert await bot.deliver("workflow_run", payload, delivery="again") == (
                202, {"duplicate": "again", "state": "being processed"})
            calls = len(fake_github.requests)
            await asyncio.sleep(1.5)  # the pump's round: still refused, nothing runs meanwhile
            assert len(fake_github.requests) == calls and [
                (key, pending.outcome) for key, pending in bot.state.unrecorded.items()] == [("again", "failed")]
            del bot.state.journal._finish  # the disk takes writes again
            await until(lambda: bot.state.journal.is_done("again"), 10)
        number = world.runs[0]["pull_requests"][0]["number"]
        assert len(bot_comments(fake_github, world, number)) == 1
        assert "delivery again: it was delivered again while its handler ran; it runs again" in caplog.messages
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_journal_notes_a_copy_that_comes_while_the_handler_runs(tmp_path: Path) -> None:
    """A copy that comes before the handler starts is served by that run; one that comes
    while it runs makes a failure run it again (once, with a clean slate of unfinished
    starts), not a success."""
    journal = Journal(tmp_path)
    for delivery in ("early", "late", "ok", "aside"):
        assert journal.accept(delivery, "workflow_run", b"{}", 1) == "new"
    assert journal.accept("early", "workflow_run", b"{}", 1) == "queued"  # before its handler starts
    for delivery in ("early", "late", "ok"):
        await journal.begin(delivery)
    for delivery in ("late", "ok"):  # while they run
        assert await journal.record(delivery, "workflow_run", b"{}", 1) == "queued"
    assert [await journal.mark(d, s) for d, s in (("early", "failed"), ("late", "failed"), ("ok", "done"))] == [
        False, True, False]
    assert (journal.state("early"), journal.state("late"), journal.state("ok")) == ("failed", "queued", "done")
    assert [(e.id, e.attempts, e.unfinished) for e in journal.pending(5)] == [("late", 1, 0), ("aside", 0, 0)]
    await journal.begin("late")
    assert await journal.mark("late", "failed") is False  # that copy was served: failed, as any failure
    assert journal.state("late") == "failed"
    assert journal.accept("aside", "workflow_run", b"{}", 1) == "queued"  # then set aside: run again all the same
    assert await journal.mark("aside", "set_aside") is True
    assert [(e.id, e.attempts, e.unfinished) for e in journal.pending(5)] == [("aside", 1, 0)]


async def test_a_redelivery_while_the_handler_runs_and_fails_runs_it_again(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The handler fails (a GitHub error) after a redelivery of its delivery came and was
    answered 202 "being processed": it runs again, and the report is written once."""
    world = sglang_world(fake_github, runs=1)
    jobs = r"/actions/runs/\d+/jobs$"
    fake_github.set_latency(2.0, method="GET", path=jobs)  # the copy comes while it runs
    fake_github.fail_next(1, status=404, method="GET", path=jobs)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    journal, payload = bot.state.journal, world.payload(world.runs[0]["id"])
    try:
        assert (await bot.deliver("workflow_run", payload, delivery="twice"))[0] == 202
        await until(lambda: [e.unfinished for e in journal.pending(5)] == [1], 10)  # its handler runs
        assert await bot.deliver("workflow_run", payload, delivery="twice") == (
            202, {"duplicate": "twice", "state": "being processed"})
        await until(lambda: journal.is_done("twice"), 20)
        assert [r.status for r in fake_github.requests if "/runs/" in r.path and "/jobs" in r.path] == [404, 200]  # failed, then run again
        number = world.runs[0]["pull_requests"][0]["number"]
        assert len(bot_comments(fake_github, world, number)) == 1
    finally:
        await bot.session.close()
        await runner.cleanup()


def test_a_journal_written_before_starts_and_copies_were_counted_is_read(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / "foldbot.sqlite3")
    old.executescript("""CREATE TABLE deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, payload BLOB,
        installation INTEGER, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, received REAL NOT NULL,
        updated REAL NOT NULL);
        INSERT INTO deliveries VALUES ('left', 'workflow_run', X'7B7D', 1, 'queued', 0, 1.0, 1.0);""")
    old.close()
    journal = Journal(tmp_path)
    assert [(e.id, e.payload, e.unfinished) for e in journal.pending(5)] == [("left", b"{}", 0)]
    assert journal.accept("left", "workflow_run", b"{}", 1) == "queued"  # a copy is noted (`again`, added too)


async def test_a_backlog_read_that_fails_loses_no_worker(fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    world = sglang_world(fake_github, runs=4)
    fake_github.set_latency(0.05, method="GET", path=r"/pulls/\d+/files$")
    bot, runner = await start_bot(fake_github, queue_size=1, workers=1)
    real, failures = bot.state.journal.pending, [sqlite3.OperationalError("disk I/O error")]
    worker_reads: contextvars.ContextVar[bool] = contextvars.ContextVar("worker_reads", default=False)
    real_refill = server.refill

    async def marked_refill(state: Any) -> int:  # the worker's read, after a delivery, is marked (the read runs
        worker_reads.set(asyncio.current_task() in state.workers)  # in a thread, with a copy of this context)
        return await real_refill(state)

    def flaky(limit: int, exclude: Any = frozenset()) -> Any:
        if failures and worker_reads.get():
            raise failures.pop()
        return real(limit, exclude)

    monkeypatch.setattr(server, "refill", marked_refill)
    monkeypatch.setattr(bot.state.journal, "pending", flaky)
    try:
        with caplog.at_level(logging.ERROR, logger="foldbot.server"):
            for i, run in enumerate(world.runs):
                assert (await bot.deliver("workflow_run", world.payload(run["id"]), delivery=f"b-{i}"))[0] == 202
            for _ in range(600):  # the pump reads the backlog again within a second
                if all(f"b-{i}" in bot.state.done for i in range(4)):
                    break
                await asyncio.sleep(0.05)
        assert all(f"b-{i}" in bot.state.done for i in range(4)) and not failures
        assert "the journal (in memory) cannot be read: disk I/O error (/health says degraded" in caplog.text
        assert [task.exception() if task.done() else None for task in bot.state.workers] == [None]  # still there
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_delivery_foldbot_makes_again_is_left_as_the_journal_has_it(tmp_path: Path) -> None:
    """`record(again=False)` (reconciling makes its deliveries anew each round): one set aside
    stays aside, a failed one waits for its turn, a queued one is not marked as delivered
    again; a real redelivery (`again=True`) still runs a set-aside one again."""
    journal = Journal(tmp_path)
    for delivery in ("aside", "failed", "queued"):
        assert await journal.record(delivery, "workflow_run", b"{}", 1, again=False) == "new"
    await journal.mark("aside", "set_aside")
    await journal.mark("failed", "failed")
    assert [await journal.record(d, "workflow_run", b'{"x": 1}', 1, again=False) for d in ("aside", "failed", "queued")] \
        == ["failed", "failed", "queued"]
    assert [e.id for e in journal.pending(5)] == ["queued"] and journal.set_aside(0) == [("aside", "workflow_run")]
    assert journal.requeue_due(time.time() + 3600) == 1  # (the failed one, after its wait)
    assert await journal.record("aside", "workflow_run", b'{"x": 2}', 1) == "failed"  # a redelivery
    assert journal.set_aside(0) == [] and sorted(e.id for e in journal.pending(5)) == ["aside", "failed", "queued"]
