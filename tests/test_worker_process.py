"""`foldbot serve` as deployed: the web process answers, a worker process of its own does
the work (`bot.workerproc`). Real processes against the fake GitHub: the work is done
once, `/health` and `/metrics` speak for both, a worker that dies is started again and
loses nothing, and the worker ends with its web process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.journal import Journal
from bot.metrics import Metrics
from tests.fakegithub import FakeGitHub
from tests.harness import World, post_run, serve_process as _serve, sglang_world, until
from tests.harness import free_port
from tests.test_app_workflow_run import bot_comments, dashboards


def _worker_pid(web: asyncio.subprocess.Process) -> int:
    children = Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def _latest_run(fake: FakeGitHub) -> tuple[World, dict[str, Any], int, int]:
    """The SGLang world, its latest run, that run's PR number, and a free port for serve."""
    world = sglang_world(fake)
    run = world.runs[-1]
    return world, run, run["pull_requests"][0]["number"], free_port()


def _gone(pid: int) -> bool:
    """Whether a process has exited (a zombie not reaped yet counts as gone)."""
    try:
        return "(zombie)" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


async def _stop(process: asyncio.subprocess.Process) -> str:
    process.terminate()
    output, _ = await asyncio.wait_for(process.communicate(), timeout=40)
    assert process.returncode == 0, output.decode()
    return output.decode()


async def test_the_worker_process_does_the_work_and_the_web_process_speaks_for_it(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    world, run, number, port = _latest_run(fake_github)
    web = await _serve(fake_github, tmp_path, port)
    try:
        worker = _worker_pid(web)
        async with aiohttp.ClientSession() as session:
            assert await post_run(session, port, world, run, "one") == (202, {"queued": "one"})
            await until(lambda: Journal(tmp_path).is_done("one"))
            assert len(bot_comments(fake_github, world, number)) == 1 and len(dashboards(fake_github, world)) == 1
            async with session.get(f"http://127.0.0.1:{port}/health") as response:
                health = await response.json()
            assert (response.status, health["ok"], health["worker"], health["queue_depth"]) == (
                200, True, f"running (pid {worker})", 0)
            await asyncio.sleep(2.5)  # the worker writes its metrics every 2 s
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                text = await response.text()
    finally:
        output = await _stop(web)
    lines = text.splitlines()
    # the web process counted the answer, the worker the processing; one exposition, each family once
    assert 'foldbot_deliveries_total{event="workflow_run",outcome="journaled",process="web"} 1.0' in lines
    assert 'foldbot_deliveries_total{event="workflow_run",outcome="ok",process="worker"} 1.0' in lines
    assert 'foldbot_processing_seconds_count{event="workflow_run",process="worker"} 1.0' in lines
    assert any(line.startswith("foldbot_github_rate_limit_remaining ") for line in lines)
    types = [line for line in lines if line.startswith("# TYPE")]
    assert len(types) == len(set(types))
    assert f"worker: pid {worker} takes its work from the journal" in output
    assert _gone(worker)  # it ended with its web process


async def test_a_worker_that_dies_is_started_again_and_what_came_meanwhile_is_done_once(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    world, run, number, port = _latest_run(fake_github)
    web = await _serve(fake_github, tmp_path, port)
    try:
        first = _worker_pid(web)
        os.kill(first, signal.SIGKILL)
        async with aiohttp.ClientSession() as session:
            await until(lambda: _gone(first))
            answer = await _health_until(session, port, lambda status, said: status == 503, seconds=5)  # (once the
            assert re.fullmatch(  # web process has reaped it; a second later it starts the next one)
                r"the worker process is not running \(exit code -9: killed by SIGKILL\); being started again|"
                r"the worker process \(pid \d+\) is starting \(the one before it: exit code -9: killed by SIGKILL\)",
                answer["reason"]), answer
            assert await post_run(session, port, world, run, "meanwhile") == (202, {"queued": "meanwhile"})
            await until(lambda: Journal(tmp_path).is_done("meanwhile"))
            await _health_until(session, port, lambda status, said: status == 200, seconds=5)  # (its first report)
            assert _worker_pid(web) != first
            assert len(bot_comments(fake_github, world, number)) == 1
    finally:
        output = await _stop(web)
    assert "the worker process is not running (exit code -9: killed by SIGKILL); it is started again in 1 s" \
        in output


async def test_a_redelivery_the_web_process_takes_while_the_worker_runs_and_fails_runs_it_again(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The web process answers a copy of a delivery the worker is running (202: it is in the
    journal); the worker's handler then fails: the journal queues it again, the worker runs
    it again, and the report is written once."""
    world, run, number, port = _latest_run(fake_github)
    jobs = rf"/actions/runs/{run['id']}/jobs$"
    fake_github.set_latency(2.0, method="GET", path=jobs)  # the copy comes while it runs
    fake_github.fail_next(1, status=404, method="GET", path=jobs)
    web = await _serve(fake_github, tmp_path, port)
    try:
        async with aiohttp.ClientSession() as session:
            assert await post_run(session, port, world, run, "w-twice") == (202, {"queued": "w-twice"})
            await until(lambda: [e.unfinished for e in Journal(tmp_path).pending(5)] == [1])  # the worker runs it
            assert await post_run(session, port, world, run, "w-twice") == (202, {"queued": "w-twice"})
            await until(lambda: Journal(tmp_path).is_done("w-twice"))
        assert [r.status for r in fake_github.requests if f"/runs/{run['id']}/jobs" in r.path] == [404, 200]
        assert len(bot_comments(fake_github, world, number)) == 1
    finally:
        output = await _stop(web)
    assert "delivery w-twice: it was delivered again while its handler ran; it runs again" in output


async def test_a_worker_whose_web_process_was_killed_finishes_and_the_next_one_waits_for_it(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    world, run, number, port = _latest_run(fake_github)
    fake_github.set_latency(2, method="POST", path=r"/access_tokens$")  # the worker is in the middle of its work
    web = await _serve(fake_github, tmp_path, port)
    worker = _worker_pid(web)
    async with aiohttp.ClientSession() as session:
        assert await post_run(session, port, world, run, "held") == (202, {"queued": "held"})
        await asyncio.sleep(0.5)
        web.send_signal(signal.SIGKILL)  # the web process only: its pipe to the worker closes
        await web.wait()
        second = await _serve(fake_github, tmp_path, port)  # its worker waits for the lock
        try:
            await until(lambda: _gone(worker))  # the first worker finished and exited
            await until(lambda: Journal(tmp_path).is_done("held"))
            assert await post_run(session, port, world, run, "held") == (
                200, {"duplicate": "held", "state": "already processed"})
        finally:
            await _stop(second)
    assert len(bot_comments(fake_github, world, number)) == 1 and len(dashboards(fake_github, world)) == 1


def test_worker_process_settings() -> None:
    from bot.settings import Settings, SettingsError
    base = {"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t"}
    assert Settings.from_env(base).worker_process is True
    assert Settings.from_env({**base, "FOLDBOT_WORKER_PROCESS": "no"}).worker_process is False
    with pytest.raises(SettingsError, match="FOLDBOT_WORKER_PROCESS must be one of yes, no, not 'maybe'"):
        Settings.from_env({**base, "FOLDBOT_WORKER_PROCESS": "maybe"})
    assert Settings(webhook_secret="s").worker_process is False  # made in code (tests): one process


async def test_health_speaks_for_a_worker_whose_journal_refuses_outcomes(tmp_path: Path) -> None:
    """The worker's state file says how many outcomes its journal refused; the web
    process's `/health` reason is read from it (only from the running worker's own)."""
    import time

    from bot.settings import Settings
    from bot.workerproc import WorkerLink
    link = WorkerLink(Settings(webhook_secret="s", data_dir=tmp_path))
    link.process = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        def report(pid: int, unrecorded: int) -> None:
            (tmp_path / "worker.json").write_text(json.dumps({"pid": pid, "time": time.time(),
                                                              "unrecorded": unrecorded}))
        report(link.process.pid, 0)
        assert link.problem() is None
        report(link.process.pid, 2)
        assert link.problem() == ("the journal refuses to record the outcomes of 2 deliveries (see the log); they are "
                                  "not run again, and are written again every second")
        report(link.process.pid + 1, 2)  # another worker's (an old one's) state: its own is not known yet
        assert link.problem() == f"the worker process (pid {link.process.pid}) is starting"
        link.ended = link._ending(-signal.SIGKILL)  # it was started again: how the one before it ended is said
        assert link.problem() == (f"the worker process (pid {link.process.pid}) is starting (the one before it: exit "
                                  f"code -9: killed by SIGKILL)")
    finally:
        link.process.kill()
        await link.process.wait()


async def test_health_names_another_worker_that_holds_the_data_directory(tmp_path: Path) -> None:
    """Two deployments on one data directory: the second's worker waits for the lock the first's
    holds, and that first worker keeps reporting. After 30 s the second's `/health` says so, not
    only that its worker has not reported."""
    import time

    from bot.settings import Settings
    from bot.workerproc import STALE_SECONDS, WorkerLink
    link = WorkerLink(Settings(webhook_secret="s", data_dir=tmp_path))
    link.process = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        link.started_at = time.time() - STALE_SECONDS - 10
        (tmp_path / "worker.json").write_text(json.dumps({"pid": 4242, "time": time.time() - 1}))
        assert link.problem() == (
            f"the worker process (pid {link.process.pid}) has waited 40 s for another foldbot's worker (pid 4242) "
            f"that works on this data directory ({tmp_path}); are two deployments sharing one FOLDBOT_DATA_DIR? "
            f"(the deliveries this one accepts are done by that one)")
        (tmp_path / "worker.json").write_text(json.dumps({"pid": 4242, "time": time.time() - STALE_SECONDS - 5}))
        assert link.problem() == f"the worker process (pid {link.process.pid}) has not reported since it started " \
                                 f"40 s ago"
    finally:
        link.process.kill()
        await link.process.wait()


async def test_two_deployments_on_one_data_directory_lose_nothing_and_do_nothing_twice(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """A mistaken double deploy: both web processes journal into one file; one worker holds it
    (the other waits for its lock) and does what either accepted, each once."""
    world = sglang_world(fake_github, runs=4)
    first_port, second_port = free_port(), free_port()
    first = await _serve(fake_github, tmp_path, first_port)
    second = await _serve(fake_github, tmp_path, second_port, healthy=False)  # its worker waits for the lock
    try:
        async with aiohttp.ClientSession() as session:
            for i, run in enumerate(world.runs):
                for port in (first_port, second_port):  # each delivery to both, as a retry behind a balancer
                    assert (await post_run(session, port, world, run, f"both-{i}"))[0] in (200, 202)
            await until(lambda: all(Journal(tmp_path).is_done(f"both-{i}") for i in range(4)))
    finally:
        started = time.monotonic()
        outputs = [await _stop(second), await _stop(first)]
    numbers = [run["pull_requests"][0]["number"] for run in world.runs]
    assert [len(bot_comments(fake_github, world, number)) for number in numbers] == [1] * 4
    assert "worker: waiting for the previous worker process to finish" in outputs[0]
    # the worker waiting for the lock stops with its web process, at once, not killed after the drain time
    assert "worker: its web process stops; it does not start" in outputs[0] and "killed" not in outputs[0]
    assert time.monotonic() - started < 15


def test_merged_metrics_keep_each_process_counters_apart_and_each_gauge_from_its_process() -> None:
    web, worker = Metrics(), Metrics()
    web.deliveries.labels(event="workflow_run", outcome="journaled").inc(3)
    web.github_calls.labels(status="200").inc(1)
    web.credentials_ok.set(1)
    web.queue_depth.set(99)  # not the web process's to say
    worker.deliveries.labels(event="workflow_run", outcome="ok").inc(2)
    worker.github_calls.labels(status="200").inc(5)
    worker.credentials_ok.set(0)  # not the worker's to say
    worker.queue_depth.set(4)
    worker.rate_limit_remaining.set(4321)
    web.unrecorded.set(7)  # not the web process's to say
    worker.unrecorded.set(2)
    web.set_aside.set(5)  # not the web process's to say
    worker.set_aside.set(1)
    lines = web.render(worker.render()[0].decode())[0].decode().splitlines()
    assert [line for line in lines if not line.startswith("#") and not line.startswith("foldbot_processing")] == [
        'foldbot_deliveries_total{event="workflow_run",outcome="journaled",process="web"} 3.0',
        'foldbot_deliveries_total{event="workflow_run",outcome="ok",process="worker"} 2.0',
        'foldbot_github_calls_total{process="web",status="200"} 1.0',
        'foldbot_github_calls_total{process="worker",status="200"} 5.0',
        "foldbot_credentials_ok 1.0",
        'foldbot_previous_secret_deliveries_total{process="web"} 0.0',
        'foldbot_previous_secret_deliveries_total{process="worker"} 0.0',
        'foldbot_redeliveries_total{process="web"} 0.0',
        'foldbot_redeliveries_total{process="worker"} 0.0',
        "foldbot_github_rate_limit_remaining 4321.0",
        "foldbot_queue_depth 4.0",
        "foldbot_unrecorded_outcomes 2.0",
        "foldbot_set_aside_deliveries 1.0",
    ]
    alone = web.render("")[0].decode().splitlines()  # no worker (yet): the web's series keep their label
    assert 'foldbot_deliveries_total{event="workflow_run",outcome="journaled",process="web"} 3.0' in alone
    assert not any(line.startswith("foldbot_queue_depth") for line in alone)


async def test_two_replicas_with_redis_answer_in_their_web_processes_and_work_once_in_their_workers(
        fake_github: FakeGitHub, tmp_path: Path, redis_url: str) -> None:
    world = sglang_world(fake_github, runs=6)
    ports = [free_port(), free_port()]
    replicas = [await _serve(fake_github, tmp_path / f"data-{i}", port, FOLDBOT_REDIS_URL=redis_url)
                for i, port in enumerate(ports)]
    try:
        async with aiohttp.ClientSession() as session:
            answers = []
            for i, run in enumerate(world.runs):
                answers.append(await post_run(session, ports[i % 2], world, run, f"r-{i}"))
                answers.append(await post_run(session, ports[(i + 1) % 2], world, run, f"r-{i}"))  # GitHub retried
            assert {status for status, _ in answers} <= {200, 202}
            from bot.redisjournal import RedisJournal
            journal = RedisJournal(redis_url)
            await until(lambda: all(journal.is_done(f"r-{i}") for i in range(6)), seconds=60)
            for run in world.runs:
                assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
    finally:
        for replica in replicas:
            await _stop(replica)


def _starts(directory: Path, delivery: str) -> int:
    import sqlite3
    with sqlite3.connect(directory / "foldbot.sqlite3") as db:
        row = db.execute("SELECT starts FROM deliveries WHERE id = ?", (delivery,)).fetchone()
    return int(row[0]) if row else 0


async def test_a_delivery_that_kills_the_worker_each_time_is_set_aside_and_the_others_run(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    world, run, number, port = _latest_run(fake_github)
    fake_github.set_latency(8, method="POST", path=r"/access_tokens$")  # a handler that does not end before it is killed
    web = await _serve(fake_github, tmp_path, port)
    try:
        async with aiohttp.ClientSession() as session:
            assert await post_run(session, port, world, run, "victim") == (202, {"queued": "victim"})
            await until(lambda: _starts(tmp_path, "victim") == 1)
            assert await post_run(session, port, world, run, "bystander") == (202, {"queued": "bystander"})
            await until(lambda: _starts(tmp_path, "bystander") == 1)  # both in hand when the worker dies
            for kills in range(1, 4):
                worker = _worker_pid(web)
                os.kill(worker, signal.SIGKILL)  # what an out-of-memory kill does, each time "victim" runs
                await until(lambda: _gone(worker))
                if kills < 3:  # the next worker runs "victim" alone: "bystander" is not started meanwhile
                    await until(lambda: _starts(tmp_path, "victim") == kills + 1)
            fake_github.set_latency(0, method="POST", path=r"/access_tokens$")
            await until(lambda: Journal(tmp_path).is_done("bystander"))
            assert (_starts(tmp_path, "victim"), Journal(tmp_path).state("victim")) == (0, "failed")
            assert _starts(tmp_path, "bystander") == 2  # the one run that died beside "victim", and its own
            assert len(bot_comments(fake_github, world, number)) == 1
            said = await _health_until(session, port, lambda status, said: status == 503, seconds=5)
            assert said["reason"] == (  # not a silent ok: it was answered 202, and GitHub will not send it again
                "1 deliveries were set aside in the last 24 h, their handler failed, or was cut short (the worker "
                "process died), 3 times each: victim (workflow_run); see the log, and once the cause is fixed "
                "redeliver them (the App's advanced settings)")
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert "foldbot_set_aside_deliveries 1.0" in (await response.text()).splitlines()
            assert await post_run(session, port, world, run, "victim") == (202, {"queued": "victim"})  # redelivered
            await until(lambda: Journal(tmp_path).is_done("victim"))
            await _health_until(session, port, lambda status, said: status == 200, seconds=15)
    finally:
        output = await _stop(web)
    assert ("delivery victim (workflow_run): its handler started 3 times and never finished (the worker process "
            "died each time: out of memory, or a crash in a library?); set aside as failed, not run again") in output
    journal = Journal(tmp_path)
    assert journal.requeue_failed() == 0  # not retried at the next start either


async def test_many_deliveries_set_aside_are_said_with_their_count_and_the_worker_still_reports(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """1,500 deliveries set aside (a bad day): the worker's report names the latest five and
    counts the rest, so its line stays under the report limit and `/health` says why it is
    degraded, not that the worker stopped reporting."""
    from bot.workerproc import REPORT_LIMIT
    _, _, _, port = _latest_run(fake_github)
    journal = Journal(tmp_path)
    ids = [f"aside-{n:04d}-{'x' * 36}" for n in range(1500)]  # as long as GitHub's GUIDs, and more
    for delivery in ids:
        journal.accept(delivery, "workflow_run", b"{}", 1)
    await asyncio.gather(*(journal.mark(delivery, "set_aside") for delivery in ids))
    journal.close()
    web = await _serve(fake_github, tmp_path, port, healthy=False)
    try:
        async with aiohttp.ClientSession() as session:
            said = await _health_until(session, port, lambda status, said: "set aside" in said.get("reason", ""))
            assert re.fullmatch(r"1500 deliveries were set aside in the last 24 h, their handler failed, or was cut "
                                r"short \(the worker process died\), 3 times each: (aside-\d{4}-x{36} \(workflow_run\), "
                                r"){4}aside-\d{4}-x{36} \(workflow_run\) and 1495 more; see the log, and once the cause "
                                r"is fixed redeliver them \(the App's advanced settings\)", said["reason"]), said
            report = (tmp_path / "worker.json").read_text()
            assert len(report) < REPORT_LIMIT // 8 and json.loads(report)["set_aside_count"] == 1500
            await asyncio.sleep(3)  # reports keep coming (one every 2 s), none dropped
            assert (await _health(session, port))[1]["reason"] == said["reason"]
    finally:
        output = await _stop(web)
    assert "dropped" not in output and "has not reported" not in output, output


async def test_a_handler_that_runs_alone_waits_for_the_others_and_holds_back_the_next() -> None:
    from bot.server import Exclusive
    handlers, order = Exclusive(), []
    first_may_end, alone_may_end = asyncio.Event(), asyncio.Event()

    async def run(name: str, alone: bool, until: asyncio.Event | None = None) -> None:
        async with handlers.hold(alone):
            order.append(f"{name} starts")
            if until is not None:
                await until.wait()
            order.append(f"{name} ends")

    first = asyncio.create_task(run("first", False, first_may_end))
    await asyncio.sleep(0)
    suspect = asyncio.create_task(run("suspect", True, alone_may_end))
    await asyncio.sleep(0)
    later = asyncio.create_task(run("later", False))  # came after the suspect: it waits too
    await asyncio.sleep(0.01)
    assert order == ["first starts"]
    first_may_end.set()
    await asyncio.sleep(0.01)
    assert order == ["first starts", "first ends", "suspect starts"]
    alone_may_end.set()
    await asyncio.gather(first, suspect, later)
    assert order == ["first starts", "first ends", "suspect starts", "suspect ends", "later starts", "later ends"]


@contextlib.contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """`chattr +i`: not even root may write, create or delete there (writes through files open
    already fail too); skipped, saying why, where this machine does not allow it (not root, or a
    filesystem without the attribute)."""
    made = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True, check=False)
        pytest.skip(f"cannot make files immutable here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True)


async def _serve_working(fake: FakeGitHub, data: Path, port: int) -> tuple[asyncio.subprocess.Process, int]:
    """`foldbot serve`, once its worker has taken its lock and opened the journal (it has
    published its state): the web process, and its worker's pid."""
    process = await _serve(fake, data, port)
    await until(lambda: (data / "worker.json").exists())
    return process, _worker_pid(process)


async def _health(session: aiohttp.ClientSession, port: int) -> tuple[int, dict[str, Any]]:
    async with session.get(f"http://127.0.0.1:{port}/health") as response:
        return response.status, await response.json()


async def _health_until(session: aiohttp.ClientSession, port: int, wanted: Any, seconds: float = 20) -> dict[str, Any]:
    """`/health`'s answer once `wanted(status, answer)` holds (it fails the test, with the last
    answer, after `seconds`)."""
    said: tuple[int, dict[str, Any]] = (0, {})
    for _ in range(int(seconds / 0.1)):
        said = await _health(session, port)
        if wanted(*said):
            return said[1]
        await asyncio.sleep(0.1)
    pytest.fail(f"/health did not come to that: {said}")


@pytest.mark.parametrize("frozen", ["journal", "lock"])
async def test_a_worker_started_again_on_a_data_directory_it_cannot_write_says_why_and_waits(
        fake_github: FakeGitHub, tmp_path: Path, frozen: str) -> None:
    """The worker dies (here: killed) while its data directory cannot be written: each new one
    exits 2 with one line, no traceback, and the web process's `/health` says why; once the
    directory can be written again the next one runs and does what was answered meanwhile."""
    world, run, number, port = _latest_run(fake_github)
    data = tmp_path / "data"
    process, first = await _serve_working(fake_github, data, port)
    try:
        async with aiohttp.ClientSession() as session:
            files = [data, *sorted(data.glob("foldbot.sqlite3*"))] if frozen == "journal" else [data / "worker.lock"]
            with immutable(*files):
                os.kill(first, signal.SIGKILL)
                said = await _health_until(session, port, lambda status, said: "exit code 2" in said.get("reason", ""))
                if frozen == "journal":
                    why = (f"cannot open the journal in {data} (FOLDBOT_DATA_DIR): attempt to write a readonly "
                           f"database")
                else:
                    why = (f"cannot take the worker's lock in {data} (FOLDBOT_DATA_DIR): [Errno 1] Operation not "
                           f"permitted: '{data / 'worker.lock'}'")
                assert said["reason"] == f"the worker process is not running (exit code 2: {why}); being started again"
                async with session.get(f"http://127.0.0.1:{port}/health/live") as response:  # (a restart may mend it)
                    assert response.status == 503 and (await response.json())["reason"].startswith(
                        "the worker process is not running (exit code 2: ")
                if frozen == "lock":  # the journal itself takes deliveries meanwhile; they wait for a worker
                    assert (await post_run(session, port, world, run, "meanwhile"))[0] == 202
            await _health_until(session, port, lambda status, said: status == 200, seconds=40)
            if frozen == "lock":
                await until(lambda: len(bot_comments(fake_github, world, number)) == 1)
    finally:
        output = await _stop(process)
    assert "Traceback" not in output, output
    assert f"foldbot: error: {why}" in output, output


async def test_a_worker_that_cannot_write_its_state_files_says_so_on_health_at_once(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The data directory stops taking new files (the journal's own files, open already, still
    take writes): the worker cannot write `worker.json`. `/health` says so within a publish
    (2 s) from the worker's report on its pipe, not "has not reported" 30 s later; and ok again
    once it can."""
    _, _, _, port = _latest_run(fake_github)
    data = tmp_path / "data"
    process, worker = await _serve_working(fake_github, data, port)
    try:
        async with aiohttp.ClientSession() as session:
            with immutable(data):
                said = await _health_until(session, port, lambda status, said: status == 503, seconds=5)
                assert said["reason"] == (
                    f"the worker process cannot write its metrics and state in {data} (FOLDBOT_DATA_DIR): [Errno 1] "
                    f"Operation not permitted: '{data / 'worker.prom.tmp'}'")
                assert said["worker"] == f"running (pid {worker})"
            await _health_until(session, port, lambda status, said: status == 200, seconds=5)
    finally:
        output = await _stop(process)
    assert output.count("cannot write its metrics and state in") == 1, output
    assert output.count(f"worker: writes its metrics and state in {data} again") == 1, output


async def test_a_process_killed_by_a_fault_says_where_it_was(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """A SIGBUS (what a write to a page of the journal's shared memory gets once an operator made
    that file immutable) kills a process without a Python traceback; `faulthandler` writes each
    thread's stack first, so the log says what happened. Here the worker, then the web process."""
    _, _, _, port = _latest_run(fake_github)
    process, worker = await _serve_working(fake_github, tmp_path / "data", port)  # (its fault handler in place)
    os.kill(worker, signal.SIGBUS)
    await until(lambda: _gone(worker))
    await asyncio.sleep(0.5)
    os.kill(process.pid, signal.SIGBUS)
    output = (await asyncio.wait_for(process.communicate(), timeout=30))[0].decode()
    assert process.returncode == -signal.SIGBUS, output
    assert output.count("Fatal Python error: Bus error") == 2, output
    assert "the worker process is not running (exit code -7: killed by SIGBUS); it is started again" in output, \
        output


async def test_the_web_process_keeps_the_worker_reports_and_passes_on_anything_else_it_prints(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The worker's stdout is its report pipe: a line of JSON with its pid is a report; anything
    else (a library's print, a line over the reader's 64 KiB) is logged and the reading goes on."""
    import sys

    from bot.settings import Settings
    from bot.workerproc import WorkerLink
    link = WorkerLink(Settings(webhook_secret="s", data_dir=tmp_path))
    script = ("import json, os, sys\n"
              "pid = os.getpid()\n"
              "print('hello from a library')\n"
              "print(json.dumps({'pid': pid + 1, 'unrecorded': 9}))\n"  # not its own
              "print('x' * 200000)\n"
              "print(json.dumps({'pid': pid, 'time': 1.0, 'unrecorded': 2}))\n"
              "print(json.dumps({'pid': pid, 'cannot_start': 'cannot open the journal in /d: no'}))\n")
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE)
    link.process = process
    with caplog.at_level(logging.WARNING, logger="foldbot.worker"):
        await asyncio.wait_for(link._listen(process), timeout=10)
    await process.wait()
    assert link.reported == {"pid": process.pid, "time": 1.0, "unrecorded": 2}
    assert link.cannot_start == "cannot open the journal in /d: no"
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == f"the worker process (pid {process.pid}) printed: hello from a library"
    assert messages[1] == f"the worker process (pid {process.pid}) printed: " + json.dumps(
        {"pid": process.pid + 1, "unrecorded": 9})
    assert messages[2] == f"the worker process (pid {process.pid}) wrote a line of over 65536 bytes: not a report, " \
                          f"dropped"
    assert len(messages) == 3


async def test_a_second_sigterm_does_not_cut_the_drain_short(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """SIGTERM, then another 0.2 s later (a supervisor's repeat): the second is said and
    ignored; the delivery in hand is finished, the process and its worker exit 0 (aiohttp's own
    handler ended the process at once, exit 1, leaving the worker behind)."""
    world, run, number, port = _latest_run(fake_github)
    fake_github.set_latency(1.5, method="POST", path=r"/access_tokens$")  # the work is in hand at the signal
    web = await _serve(fake_github, tmp_path, port)
    worker = _worker_pid(web)
    async with aiohttp.ClientSession() as session:
        assert await post_run(session, port, world, run, "in-hand") == (202, {"queued": "in-hand"})
    await until(lambda: _starts(tmp_path, "in-hand") == 1)
    web.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.2)
    web.send_signal(signal.SIGTERM)
    output, _ = await asyncio.wait_for(web.communicate(), timeout=40)
    text = output.decode()
    assert web.returncode == 0, text
    assert "shutdown: already stopping (signal SIGTERM ignored; the drain goes on for up to 25 s)" in text
    await until(lambda: _gone(worker))
    assert Journal(tmp_path).is_done("in-hand") and len(bot_comments(fake_github, world, number)) == 1
