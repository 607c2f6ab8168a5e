"""The journal in Redis: several replicas share one dedupe and one backlog. Runs against
a real `redis-server` (`tests/redisfix.py`; `make test` installs it); without one the tests
fail under CI and are skipped, with the reason, elsewhere."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.journal import MAX_ATTEMPTS
from tests.fakegithub import FakeGitHub
from tests.harness import SECRET, serve_process, sglang_world, start_bot, until
from tests.paths import ROOT
from tests.test_app_workflow_run import bot_comments


def test_two_replicas_share_one_dedupe_and_one_backlog(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    a, b = RedisJournal(redis_url), RedisJournal(redis_url)
    assert a.accept("d1", "workflow_run", b'{"x": 1}', 5) == "new"  # a holds it
    assert b.accept("d1", "workflow_run", b'{"x": 1}', 5) == "leased"
    a.done("d1")
    assert b.accept("d1", "workflow_run", b"{}", 5) == "done" and b.is_done("d1")
    assert a.accept("d2", "issue_comment", b'{"y": 2}', None) == "new"
    a.release("d2")  # a had no room: it waits for anyone
    assert [(e.id, e.event, e.payload, e.installation) for e in b.pending(5)] == [("d2", "issue_comment", b'{"y": 2}',
                                                                                   None)]
    assert a.pending(5) == [] and a.accept("d2", "issue_comment", b"{}", None) == "leased"
    b.failed("d2")
    assert a.accept("d2", "issue_comment", b'{"y": 3}', None) == "new"  # a redelivery of a failed one runs again
    assert a.known(["d1", "d2", "d3"]) == {"d1", "d2"}
    assert (a.count("done"), a.path, a.where) == (1, redis_url.removeprefix("redis://"),
                                                  f"Redis at {redis_url.removeprefix('redis://')}")


def test_a_database_another_apps_foldbot_holds_is_refused(redis_url: str) -> None:
    """Production and staging pointed at one Redis: staging's worker took production's deliveries
    (and marked one done as an uninstalled App's), and held the shared redelivery turn."""
    from bot.journal import JournalUnavailable
    from bot.redisjournal import RedisJournal
    production = RedisJournal(redis_url, owner="app 1 of https://api.github.com")
    assert RedisJournal(redis_url, owner="app 1 of https://api.github.com").prefix == production.prefix  # a replica
    with pytest.raises(JournalUnavailable) as refused:
        RedisJournal(redis_url, owner="app 2 of https://api.github.com")
    assert str(refused.value).endswith(
        "(FOLDBOT_REDIS_URL) holds the deliveries of another foldbot (app 1 of https://api.github.com), not of app 2 of "
        "https://api.github.com: give each App a database of its own (`redis://host:6379/1`, ...); sharing one, each "
        "takes the other's deliveries as its own")


def test_a_redis_that_would_lose_what_it_holds_is_said(redis_url: str) -> None:
    """The tests' Redis keeps nothing on disk (`--save ''`, `appendonly no`): restarted, it is empty,
    and the deliveries it held are gone (GitHub answered 202 does not redeliver them)."""
    from bot.redisjournal import RedisJournal
    journal = RedisJournal(redis_url)
    assert journal.durability() == ["keeps what it holds on no disk (`appendonly no`, no `save`): a restart empties it"]
    journal._redis.config_set("maxmemory-policy", "allkeys-lru")
    journal._redis.config_set("appendonly", "yes")
    try:
        assert journal.durability() == [
            "may evict keys to make room (`maxmemory-policy allkeys-lru`): a delivery it evicts is lost"]
    finally:
        journal._redis.config_set("maxmemory-policy", "noeviction")
        journal._redis.config_set("appendonly", "no")
    assert len(journal.durability()) == 1


def test_an_outcome_written_twice_or_late_changes_nothing(redis_url: str) -> None:
    """Written again after a lost reply, an outcome does not count twice; written late, after
    another replica took the delivery over (the hold lapsed) and finished it, it is ignored."""
    from bot.redisjournal import RedisJournal
    a, b = RedisJournal(redis_url), RedisJournal(redis_url)
    assert a.accept("t", "workflow_run", b"{}", 1) == "new"
    a.failed("t")
    a.failed("t")
    assert a._redis.hget(a._key("t"), "attempts") == b"1"
    assert a.accept("u", "workflow_run", b"{}", 1) == "new"
    a._redis.zadd(a.leases, {"u": 0})  # a's hold lapsed (Redis was out of its reach)
    assert [e.id for e in b.pending(5)] == ["u"]
    b.done("u")
    b.done("u")
    a.failed("u")  # a's late outcome
    assert a.state("u") == "done" and a.count("done") == 1
    assert a._redis.hget(a._key("u"), "attempts") == b"1" and a._redis.ttl(a._key("u")) > 0


def test_one_replica_leads_each_round_of_redelivery_and_a_dead_leaders_turn_lapses(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    a, b = RedisJournal(redis_url), RedisJournal(redis_url)
    b.owner = "other-host:1"
    assert [a.lead("redeliver", 1), b.lead("redeliver", 1), b.lead("redeliver", 1)] == [True, False, False]
    assert b.lead("reconcile", 1) and not a.lead("reconcile", 1)  # each task has its own turn
    time.sleep(1.1)  # a said nothing more: its turn lapsed
    assert b.lead("redeliver", 1) and not a.lead("redeliver", 1)


def test_a_renewed_lease_holds_and_only_the_holders_leases_are_renewed(redis_url: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from bot import redisjournal
    a, b = redisjournal.RedisJournal(redis_url), redisjournal.RedisJournal(redis_url)
    monkeypatch.setattr(redisjournal, "LEASE_SECONDS", 1)
    assert a.accept("r1", "workflow_run", b"{}", 1) == "new"
    time.sleep(0.6)
    a.renew({"r1", "not-leased"})  # a works on r1 still; an id it does not hold is not leased by renewing
    time.sleep(0.6)
    assert b.pending(5) == [] and b.accept("r1", "workflow_run", b"{}", 1) == "leased"
    assert a._redis.zscore(a.leases, "not-leased") is None
    time.sleep(1.1)  # a stopped renewing: its lease lapses, b takes the delivery over
    assert [entry.id for entry in b.pending(5)] == ["r1"]


def test_a_replica_renews_and_releases_only_what_it_still_holds(redis_url: str) -> None:
    """A's hold lapsed and B took the delivery over: A's renewal does not extend B's hold (it
    names the delivery as lapsed), and A's release does not put it on the shared list beside
    B's run (a third replica would run it too). A finished delivery is nobody's: not named."""
    from bot.redisjournal import RedisJournal
    a, b, c = RedisJournal(redis_url), RedisJournal(redis_url), RedisJournal(redis_url)
    assert a.accept("x", "workflow_run", b"{}", 1) == "new" and a.accept("y", "workflow_run", b"{}", 1) == "new"
    a._redis.zadd(a.leases, {"x": 0})  # a's hold on x lapsed (a stalled)
    assert [entry.id for entry in b.pending(5)] == ["x"]  # b takes it over
    b_hold = a._redis.zscore(a.leases, "x")
    assert a.renew({"x", "y"}) == ["x"] and a._redis.zscore(a.leases, "x") == b_hold
    a.release("x")
    assert a._redis.zscore(a.leases, "x") == b_hold and c.pending(5) == []  # still b's alone
    assert b.renew({"x"}) == [] and a._redis.zscore(a.leases, "x") > b_hold
    b.done("x")
    assert a.renew({"x"}) == [] and b.renew({"x"}) == []
    a.release("y")  # a's own: on the shared list
    assert [entry.id for entry in c.pending(5)] == ["y"]


async def test_a_delivery_another_replica_took_over_before_its_handler_started_is_not_started_here(
        redis_url: str) -> None:
    """A's hold on a delivery it has queued lapsed (A stalled) and B took it over: A does not
    start it beside B's run. One whose hold lapsed and that nobody took yet, A takes back."""
    from bot.journal import NotQueued
    from bot.redisjournal import RedisJournal
    a, b, c = RedisJournal(redis_url), RedisJournal(redis_url), RedisJournal(redis_url)
    for delivery in ("taken", "waiting"):
        assert a.accept(delivery, "workflow_run", b"{}", 1) == "new"
    a._redis.zadd(a.leases, {"taken": 0, "waiting": 0})
    assert [entry.id for entry in b.pending(1)] == ["taken"]  # (the lapsed ones on the shared list; b takes one)
    with pytest.raises(NotQueued, match="another replica took it over"):
        await a.begin("taken")
    assert await b.begin("taken") == 1
    assert await a.begin("waiting") == 1  # a takes it back from the shared list
    assert c.pending(5) == [] and a.renew({"waiting"}) == []
    assert a.accept("stale", "workflow_run", b"{}", 1) == "new"
    a._redis.zadd(a.leases, {"stale": 0})  # a's hold ran out, and nobody has moved it yet
    assert await a.begin("stale") == 1  # its start renews it: it is not handed to another replica beside this run
    assert c.pending(5) == []


def take_over(journal: Any, redis_url: str, ids: set[str]) -> None:
    """The hold of `journal`'s replica on `ids` lapses and another replica takes them over. (A
    renewal that comes between the lapse and the take keeps a delivery where it is, as it
    should: then it lapses again.)"""
    from bot import redisjournal
    other, taken = redisjournal.RedisJournal(redis_url), set()
    for _ in range(50):
        journal._redis.zadd(journal.leases, {i: 0 for i in ids - taken})
        taken |= {entry.id for entry in other.pending(5)}
        if taken >= ids:
            assert taken == ids
            return
    raise AssertionError(f"not taken over: {sorted(ids - taken)}")


async def test_a_replica_whose_hold_lapsed_says_so_once(fake_github: FakeGitHub, redis_url: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """The deliveries a replica holds were taken over (its renewals did not come in time). The
    one whose handler runs may run twice: a warning says so, once. The one still waiting its
    turn is not started here (another replica holds it): an info line names it, no alarm."""
    from bot import redisjournal
    monkeypatch.setattr(redisjournal, "RENEW_SECONDS", 0.1)
    world = sglang_world(fake_github, runs=2)
    fake_github.set_latency(2, method="GET", path=r"/pulls/\d+/files$")
    bot, runner = await start_bot(fake_github, redis_url=redis_url, workers=1)
    try:
        journal = bot.state.journal
        with caplog.at_level(logging.INFO, logger="foldbot"):
            for delivery, run in (("slow", world.runs[0]), ("waiting", world.runs[1])):
                assert (await bot.deliver("workflow_run", world.payload(run["id"]), delivery=delivery))[0] == 202
            await until(lambda: journal._redis.hget(journal._key("slow"), "starts") == b"1")
            take_over(journal, redis_url, {"slow", "waiting"})  # lapsed; another replica takes them
            await until(lambda: "waiting" not in bot.state.in_flight, 10)
            await asyncio.sleep(0.3)  # (several more rounds of renewal)
        lapsed = [(r.levelname, r.getMessage()) for r in caplog.records if "lapsed" in r.getMessage()]
        assert lapsed == [
            ("WARNING", "journal: this replica's hold on 1 deliveries whose handlers started here lapsed (not renewed "
                        "within 120 s: Redis or this process was stalled), so another replica may run them too: slow"),
            ("INFO", "journal: this replica's hold on 1 deliveries queued here lapsed before their handlers started "
                     "(not renewed within 120 s); each is started here only if no other replica took it over: "
                     "waiting"),
            ("INFO", "delivery waiting (workflow_run): not run: another replica took it over (this one's hold lapsed "
                     "before its handler started)")]
        assert journal._redis.hget(journal._key("waiting"), "starts") is None  # never started here
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_hold_that_lapses_while_a_handled_deliverys_outcome_waits_to_be_written_warns(
        fake_github: FakeGitHub, redis_url: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The handler ran, and Redis refused its outcome (kept in `unrecorded` to be written
    again). Its hold lapses: another replica may run it a second time, and the warning says
    so (it is not a delivery whose handler had not started)."""
    from bot import redisjournal
    monkeypatch.setattr(redisjournal, "RENEW_SECONDS", 0.1)
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, redis_url=redis_url, workers=1)
    try:
        journal = bot.state.journal

        def refused(*args: object, **kwargs: object) -> None:
            raise ConnectionError("Redis away")

        with caplog.at_level(logging.INFO, logger="foldbot"):
            monkeypatch.setattr(journal, "mark", refused)
            assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="ran"))[0] == 202
            await until(lambda: "ran" in bot.state.unrecorded)
            take_over(journal, redis_url, {"ran"})  # lapsed; another replica takes it over
            await asyncio.sleep(0.5)
            monkeypatch.undo()
        lapsed = [(r.levelname, r.getMessage()) for r in caplog.records if "lapsed" in r.getMessage()]
        assert lapsed[0] == ("WARNING", "journal: this replica's hold on 1 deliveries whose handlers started here "
                                        "lapsed (not renewed within 120 s: Redis or this process was stalled), so "
                                        "another replica may run them too: ran")
    finally:
        await bot.session.close()
        await runner.cleanup()


def test_a_replica_does_not_take_back_what_it_has_in_hand_when_its_renewal_came_late(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot import redisjournal
    a = redisjournal.RedisJournal(redis_url)
    monkeypatch.setattr(redisjournal, "LEASE_SECONDS", 1)
    assert a.accept("late", "workflow_run", b"{}", 1) == "new"
    time.sleep(1.1)  # no renewal: the lease lapsed while a still works on it
    assert [entry.id for entry in a.pending(5)] == ["late"]  # a claims it back (refill skips what it has in hand)
    assert a.accept("late", "workflow_run", b"{}", 1) == "leased"  # and it is a's: nobody else takes it


async def test_refill_skips_what_this_replica_has_in_hand_and_queues_what_it_let_go_during_the_read(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read runs in a thread, with a snapshot of what is in hand taken before it. `held` is
    still in hand: claimed back, not queued twice. `failed`'s handler ended meanwhile and Redis
    queued it again (a copy came while it ran): it is queued now, not left leased to this replica
    and in nobody's queue until the lease lapses."""
    from types import SimpleNamespace

    from bot import redisjournal
    from bot.metrics import Metrics
    from bot.server import Delivery, refill
    journal = redisjournal.RedisJournal(redis_url)
    monkeypatch.setattr(redisjournal, "LEASE_SECONDS", 1)
    for delivery in ("held", "failed"):
        assert journal.accept(delivery, "workflow_run", b"{}", 1) == "new"
    time.sleep(1.1)  # both leases lapse (no renewal came): the read puts them back on the list and claims them
    monkeypatch.setattr(redisjournal, "LEASE_SECONDS", 120)
    queue: asyncio.Queue[Delivery] = asyncio.Queue(maxsize=3)
    state = SimpleNamespace(backlog=False, queue=queue, journal=journal, in_flight={"held", "failed"},
                            metrics=Metrics(), refilling=asyncio.Lock(), accepting=True)
    real = journal.pending

    def read(limit: int, exclude: frozenset[str] = frozenset()) -> list[Any]:
        state.in_flight.discard("failed")  # its handler ended while the journal was read
        return real(limit, exclude)

    monkeypatch.setattr(journal, "pending", read)
    assert await refill(state) == 1  # type: ignore[arg-type]
    assert [queue.get_nowait().id] == ["failed"] and queue.empty() and state.in_flight == {"held", "failed"}
    assert journal.accept("held", "workflow_run", b"{}", 1) == "leased"  # still this replica's


async def test_refill_releases_everything_the_queue_has_no_room_for_once_the_read_is_back(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A delivery answered while the journal was read filled the queue: of what the read claimed,
    all that does not fit goes back on the shared list at once (not only the first of them)."""
    from types import SimpleNamespace

    from bot.metrics import Metrics
    from bot.redisjournal import RedisJournal
    from bot.server import Delivery, refill
    journal = RedisJournal(redis_url)
    for delivery in ("w1", "w2", "w3"):
        journal.accept(delivery, "workflow_run", b"{}", 1, hold=False)
    queue: asyncio.Queue[Delivery] = asyncio.Queue(maxsize=3)
    state = SimpleNamespace(backlog=False, queue=queue, journal=journal, in_flight=set(), metrics=Metrics(),
                            refilling=asyncio.Lock(), accepting=True)
    real = journal.pending

    def read(limit: int, exclude: frozenset[str] = frozenset()) -> list[Any]:
        entries = real(limit, exclude)
        for answered in ("a1", "a2"):  # (in the event loop, meanwhile: two deliveries answered and queued)
            queue.put_nowait(Delivery(answered, "workflow_run", b"{}", 1))
            state.in_flight.add(answered)
        return entries

    monkeypatch.setattr(journal, "pending", read)
    assert await refill(state) == 1  # type: ignore[arg-type]
    assert [queue.get_nowait().id for _ in range(3)] == ["a1", "a2", "w1"]
    assert journal._redis.lrange(journal.queue, 0, -1) == [b"w2", b"w3"]  # for any replica, now
    assert journal._redis.zrange(journal.leases, 0, -1) == [b"w1"]  # the one this replica queued


def test_a_dead_replicas_lease_runs_out_and_another_takes_it(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot import redisjournal
    a, b = redisjournal.RedisJournal(redis_url), redisjournal.RedisJournal(redis_url)
    assert a.accept("d9", "workflow_run", b"{}", 1) == "new"  # and then a is killed
    assert b.pending(5) == []
    real = time.time
    monkeypatch.setattr(redisjournal.time, "time", lambda: real() + 16 * 60)
    assert [e.id for e in b.pending(5)] == ["d9"]


async def test_replicas_behind_one_url_process_each_delivery_once(fake_github: FakeGitHub, redis_url: str) -> None:
    world = sglang_world(fake_github, runs=6)
    fake_github.set_latency(0.05, method="GET", path=r"/pulls/\d+/files$")
    first, runner_a = await start_bot(fake_github, redis_url=redis_url, queue_size=1, workers=1)
    second, runner_b = await start_bot(fake_github, redis_url=redis_url, queue_size=4, workers=2)
    try:
        answers = []
        for i, run in enumerate(world.runs):
            payload = world.payload(run["id"])
            answers.append(await first.deliver("workflow_run", payload, delivery=f"r-{i}"))
            answers.append(await second.deliver("workflow_run", payload, delivery=f"r-{i}"))  # GitHub retried
        assert {status for status, _ in answers} <= {200, 202}
        for _ in range(300):
            if all(f"r-{i}" in first.state.done for i in range(6)):
                break
            await asyncio.sleep(0.05)
        await asyncio.gather(first.settle(), second.settle())
        assert all(f"r-{i}" in second.state.done for i in range(6))
        for run in world.runs:
            assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
        processed = [float(line.rsplit(" ", 1)[1]) for bot in (first, second)
                     for line in (await (await bot.session.get(f"{bot.url}/metrics")).text()).splitlines()
                     if line.startswith('foldbot_deliveries_total{event="workflow_run",outcome="ok"}')]
        assert sum(processed) == 6.0  # once each, across the two replicas
        assert len(processed) == 2  # the second replica took the backlog of the first
    finally:
        for bot, runner in ((first, runner_a), (second, runner_b)):
            await bot.session.close()
            await runner.cleanup()


def test_a_replica_that_stops_hands_back_only_what_it_still_holds(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    a = RedisJournal(redis_url)
    for delivery in ("held", "done", "waiting"):
        assert a.accept(delivery, "workflow_run", b"{}", 1, hold=delivery != "waiting") == "new"
    a.done("done")
    assert a.hand_back(["held", "done", "waiting", "unknown"]) == 1
    assert a._redis.zrange(a.leases, 0, -1) == [] and a._redis.lrange(a.queue, 0, -1) == [b"waiting", b"held"]
    assert a.hand_back(["held"]) == 0 and a.hand_back([]) == 0  # once


async def test_a_replica_that_stops_takes_back_the_starts_its_drain_cut_short(redis_url: str) -> None:
    """A rolling deploy of three replicas, a handler that outlasts each one's drain: each stopping
    replica handed the started delivery on with its start counted, and the third set it aside as
    one that killed its worker each time."""
    from bot.redisjournal import RedisJournal
    replicas = [RedisJournal(redis_url) for _ in range(3)]
    assert replicas[0].accept("slow", "workflow_run", b"{}", 1) == "new"
    for i, replica in enumerate(replicas):
        if i:
            assert [entry.id for entry in replica.pending(1)] == ["slow"]
        assert await replica.begin("slow") is not None
        assert replica.hand_back(["slow"], cut=["slow"]) == 1
    last = RedisJournal(redis_url)
    (entry,) = last.pending(1)
    assert (entry.id, entry.unfinished) == ("slow", 0)
    # a start of the replica that holds it now is not another's to take back
    assert await last.begin("slow") is not None
    assert RedisJournal(redis_url).hand_back([], cut=["slow"]) == 0
    assert last._redis.hget(last.prefix + "d:slow", "starts") == b"1"


async def test_a_replica_stopped_during_a_burst_hands_its_deliveries_to_the_others_at_once(
        fake_github: FakeGitHub, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """SIGTERM with work in hand and a drain that runs out (a hung GitHub call): what the
    stopping replica holds, started or not, goes back to the shared queue as it stops, and
    the other replica does it now, not once the hold lapses (2 minutes); one comment each."""
    world = sglang_world(fake_github, runs=3)
    fake_github.set_latency(5, method="GET", path=r"/pulls/\d+/files$")  # (more than the drain's 0.5 s)
    stopping, runner_a = await start_bot(fake_github, redis_url=redis_url, queue_size=4, workers=1, drain_seconds=0.5)
    other, runner_b = None, None
    try:
        for i, run in enumerate(world.runs):
            assert (await stopping.deliver("workflow_run", world.payload(run["id"]), delivery=f"burst-{i}"))[0] == 202
        journal = stopping.state.journal
        await until(lambda: journal._redis.hget(journal._key("burst-0"), "starts") == b"1")  # its handler runs
        await asyncio.sleep(0.5)  # (into its slow call)
        assert stopping.state.in_flight == {"burst-0", "burst-1", "burst-2"}
        with caplog.at_level(logging.INFO):
            await stopping.session.close()
            await runner_a.cleanup()
        assert ("shutdown: 3 deliveries this process held went back to the shared queue for the other replicas"
                in caplog.messages)
        assert journal._redis.zcard(journal.leases) == 0 and journal._redis.llen(journal.queue) == 3
        fake_github.set_latency(0, method="GET", path=r"/pulls/\d+/files$")
        started = time.monotonic()
        other, runner_b = await start_bot(fake_github, redis_url=redis_url)
        await until(lambda: all(f"burst-{i}" in other.state.done for i in range(3)), 30)
        assert time.monotonic() - started < 30  # (not after a lease of 2 minutes)
        for run in world.runs:
            assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
    finally:
        if other is not None:
            await other.session.close()
            await runner_b.cleanup()


def test_the_redis_setting_comes_from_the_environment() -> None:
    from bot.settings import Settings
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t",
                                  "FOLDBOT_REDIS_URL": "redis://cache:6379/2"})
    assert settings.redis_url == "redis://cache:6379/2"
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t"}).redis_url is None



async def test_starts_that_never_finish_are_counted_in_redis_too(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    journal = RedisJournal(redis_url)
    assert journal.accept("x", "workflow_run", b"{}", 1) == "new"
    await journal.begin("x")
    journal._redis.zadd(journal.leases, {"x": 0})  # the worker died in its handler: its hold lapses
    assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("x", 1)]  # (another worker takes it)
    await journal.begin("x")
    journal.release("x")  # (a replica with no room for it)
    assert [(e.id, e.unfinished) for e in journal.pending(5)] == [("x", 2)]
    await journal.mark("x", "set_aside")
    assert journal.state("x") == "failed" and journal.pending(5) == []
    assert journal._redis.hmget(journal._key("x"), "attempts", "starts") == [str(MAX_ATTEMPTS).encode(), b"0"]
    assert journal.set_aside(time.time() - 60) == [("x", "workflow_run")]  # for /health, from any replica
    assert journal.set_aside(time.time() + 60) == []  # (only those set aside since then)
    assert journal.accept("x", "workflow_run", b'{"again": 1}', 1) == "new"  # a redelivery: a clean slate
    assert journal.set_aside(time.time() - 60) == []
    journal.release("x")
    assert [(e.id, e.payload, e.unfinished) for e in journal.pending(5)] == [("x", b'{"again": 1}', 0)]
    await journal.begin("gone")  # a delivery Redis no longer has (expired): no hash made, none left without expiry
    assert journal._redis.exists(journal._key("gone")) == 0
    await journal.begin("x")
    await journal.mark("x", "done")
    starts = journal._redis.hget(journal._key("x"), "starts")
    from bot.journal import NotQueued
    with pytest.raises(NotQueued, match="^it is done or failed already$"):  # finished by a copy meanwhile
        await journal.begin("x")
    assert journal._redis.hget(journal._key("x"), "starts") == starts  # (not counted)


async def test_a_failed_delivery_goes_back_on_the_shared_list_after_its_wait_in_redis_too(redis_url: str) -> None:
    from bot.journal import RETRY_AFTER_SECONDS
    from bot.redisjournal import RedisJournal
    web, a, b = RedisJournal(redis_url), RedisJournal(redis_url), RedisJournal(redis_url)
    assert await web.record("r", "workflow_run", b"{}", 1, hold=False) == "new"
    for attempt, wait in ((1, RETRY_AFTER_SECONDS[0]), (2, RETRY_AFTER_SECONDS[1])):
        assert [e.id for e in a.pending(5)] == ["r"]
        run = await a.begin("r")
        failed_at = time.time()
        assert await a.mark("r", "failed", write=f"w{attempt}", run=run) is False
        assert a.state("r") == "failed"
        assert b.requeue_due(failed_at + wait - 5) == 0
        assert b.requeue_due(failed_at + wait + 1) == 1  # any replica moves it, once
        assert a.requeue_due(failed_at + wait + 1) == 0
        assert [(e.id, e.attempts, e.unfinished) for e in b.pending(5)] == [("r", attempt, 0)]
        b.release("r")  # (back on the shared list: a takes it next)
    assert [e.id for e in a.pending(5)] == ["r"]
    run = await a.begin("r")
    assert await a.mark("r", "failed", write="w3", run=run) is False
    assert a.requeue_due(time.time() + 10 ** 6) == 0 and a.state("r") == "failed"
    assert a.set_aside(time.time() - 60) == [("r", "workflow_run")]


async def test_a_delivery_set_aside_after_copies_came_between_its_failures_is_not_run_again(redis_url: str) -> None:
    """Fail, a copy, fail, a copy, fail: set aside. The wait of an earlier failure does not
    put it back on the shared list, and once a redelivery runs it to the end it is not said
    as set aside any more."""
    from bot.redisjournal import RedisJournal
    web, worker = RedisJournal(redis_url), RedisJournal(redis_url)
    assert await web.record("s", "workflow_run", b"{}", 1, hold=False) == "new"
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert [e.id for e in worker.pending(5)] == ["s"]
        run = await worker.begin("s")
        assert await worker.mark("s", "failed", write=f"w{attempt}", run=run) is False
        if attempt < MAX_ATTEMPTS:  # a copy (a redelivery) before its wait is over
            assert await web.record("s", "workflow_run", b"{}", 1, hold=False) == "new"
    assert worker.state("s") == "failed" and worker.set_aside(time.time() - 60) == [("s", "workflow_run")]
    assert worker.requeue_due(time.time() + 10 ** 6) == 0
    assert worker.state("s") == "failed" and worker.pending(5) == []
    assert worker._redis.zscore(worker.retry, "s") is None
    # the same for one set aside at once (its handler cut short), after a first failure
    assert await web.record("t", "workflow_run", b"{}", 1, hold=False) == "new"
    assert [e.id for e in worker.pending(5)] == ["t"]
    await worker.mark("t", "failed", run=await worker.begin("t"))
    assert await web.record("t", "workflow_run", b"{}", 1, hold=False) == "new"
    assert [e.id for e in worker.pending(5)] == ["t"]
    await worker.mark("t", "set_aside")
    assert worker.requeue_due(time.time() + 10 ** 6) == 0 and worker.pending(5) == []
    # a delivery the journal lists as set aside but that was done since (by any way) is not said
    worker._redis.zadd(worker.aside, {"u": time.time()})
    assert await web.record("u", "workflow_run", b"{}", 1, hold=False) == "new"
    worker._redis.zadd(worker.aside, {"u": time.time()})
    assert [e.id for e in worker.pending(5)] == ["u"]
    await worker.mark("u", "done", run=await worker.begin("u"))
    assert [d for d, _ in worker.set_aside(time.time() - 60)] == ["t", "s"]


async def test_a_web_process_puts_what_it_accepts_on_the_shared_list_in_one_step(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    web, worker = RedisJournal(redis_url), RedisJournal(redis_url)
    assert await web.record("w", "workflow_run", b'{"x": 1}', 3, hold=False) == "new"
    assert await web.record("w", "workflow_run", b'{"x": 1}', 3, hold=False) == "new"  # a copy, while it waits
    assert web._redis.zscore(web.leases, "w") is None and web._redis.lrange(web.queue, 0, -1) == [b"w"]
    assert [(e.id, e.payload, e.installation) for e in worker.pending(5)] == [("w", b'{"x": 1}', 3)]
    assert await web.record("w", "workflow_run", b'{"x": 1}', 3, hold=False) == "leased"  # the worker has it


async def test_a_copy_that_comes_while_a_replica_runs_the_handler_makes_a_failure_run_again(redis_url: str) -> None:
    """As in the SQLite journal: a copy before the handler starts is served by that run; one
    while it runs (`leased`) puts a failed delivery back on the shared list, for any replica,
    with a clean slate of unfinished starts; a success is not run again."""
    from bot.redisjournal import RedisJournal
    web, worker = RedisJournal(redis_url), RedisJournal(redis_url)
    for delivery in ("c-early", "c-late", "c-ok"):
        assert await web.record(delivery, "workflow_run", b"{}", 1, hold=False) == "new"
    assert [e.id for e in worker.pending(5)] == ["c-early", "c-late", "c-ok"]
    assert await web.record("c-early", "workflow_run", b"{}", 1, hold=False) == "leased"  # before its handler starts
    for delivery in ("c-early", "c-late", "c-ok"):
        await worker.begin(delivery)
    for delivery in ("c-late", "c-ok"):  # while they run
        assert await web.record(delivery, "workflow_run", b"{}", 1, hold=False) == "leased"
    assert [await worker.mark(d, s) for d, s in (("c-early", "failed"), ("c-late", "failed"), ("c-ok", "done"))] == [
        False, True, False]
    assert [worker.state(d) for d in ("c-early", "c-late", "c-ok")] == ["failed", "queued", "done"]
    assert worker._redis.zscore(worker.leases, "c-late") is None
    assert [(e.id, e.attempts, e.unfinished) for e in web.pending(5)] == [("c-late", 1, 0)]
    await web.begin("c-late")
    assert await web.mark("c-late", "failed") is False and web.state("c-late") == "failed"


async def test_a_failure_written_again_under_its_write_id_queues_the_delivery_again_once(redis_url: str) -> None:
    """The reply to an outcome Redis applied can be lost (a timeout): the server (or redis-py)
    writes it again under the same write id; the second write answers as the first and
    changes nothing, so the delivery a copy asked to run again is not marked failed after
    all. Nor is it put on the shared list twice when a lapsed hold already put it there."""
    from bot.redisjournal import RedisJournal
    web, a, c = RedisJournal(redis_url), RedisJournal(redis_url), RedisJournal(redis_url)
    assert await web.record("w-once", "workflow_run", b"{}", 1, hold=False) == "new"
    assert [e.id for e in a.pending(5)] == ["w-once"]
    await a.begin("w-once")
    assert await web.record("w-once", "workflow_run", b"{}", 1, hold=False) == "leased"  # a copy, while it runs
    a._redis.zadd(a.leases, {"w-once": 0})  # a's hold lapsed meanwhile: back on the shared list
    a._expired(keys=[a.leases, a.queue], args=[time.time()])
    assert await a.mark("w-once", "failed", write="w1") is True
    assert await a.mark("w-once", "failed", write="w1") is True  # the same write again
    assert a.state("w-once") == "queued" and a._redis.lrange(a.queue, 0, -1) == [b"w-once"]
    assert [(e.id, e.attempts) for e in c.pending(5)] == [("w-once", 1)]
    await c.begin("w-once")
    assert await c.mark("w-once", "failed", write="w2") is False and c.state("w-once") == "failed"


async def test_the_late_failure_of_a_run_that_is_not_the_latest_changes_nothing(redis_url: str) -> None:
    """Replica a's hold lapsed while its handler ran (Redis out of its reach); b took the
    delivery over and runs it; a copy came. a's late failure neither queues the delivery a
    third time nor marks it failed: b's run decides."""
    from bot.redisjournal import RedisJournal
    web, a, b, c = (RedisJournal(redis_url) for _ in range(4))
    assert await web.record("stale", "workflow_run", b"{}", 1, hold=False) == "new"
    assert [e.id for e in a.pending(5)] == ["stale"]
    first = await a.begin("stale")
    a._redis.zadd(a.leases, {"stale": 0})  # a's hold lapsed
    assert [e.id for e in b.pending(5)] == ["stale"]
    second = await b.begin("stale")
    assert (first, second) == (1, 2)
    assert await web.record("stale", "workflow_run", b"{}", 1, hold=False) == "leased"  # a copy, while b runs
    assert await a.mark("stale", "failed", write="a1", run=first) is False
    assert b.state("stale") == "queued" and c.pending(5) == [] and b._redis.zscore(b.leases, "stale") is not None
    assert await b.mark("stale", "failed", write="b1", run=second) is True  # b's failure, the copy noted: again
    assert [(e.id, e.attempts) for e in c.pending(5)] == [("stale", 1)]


async def test_the_replicas_share_one_note_and_only_the_leader_keeps_its_turn(redis_url: str) -> None:
    from bot.redisjournal import RedisJournal
    a, b = RedisJournal(redis_url), RedisJournal(redis_url)
    await a.keep_note("redeliver", "what a's round listed", 60)
    assert await b.note("redeliver") == "what a's round listed" and await b.note("reconcile") is None
    assert 55 <= b._redis.ttl(f"{b.prefix}note:redeliver") <= 60
    assert a.lead("redeliver", 1) and not b.keep_lead("redeliver", 30)  # b is not the leader
    assert a.keep_lead("redeliver", 30) and 29_000 < b._redis.pttl(f"{b.prefix}lead:redeliver") <= 30_000
    assert a.keep_lead("redeliver", 5) and b._redis.pttl(f"{b.prefix}lead:redeliver") > 29_000  # never shortened
    assert not b.lead("redeliver", 1)


async def test_a_round_longer_than_its_turn_keeps_the_turn_until_it_ends(redis_url: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from bot.redisjournal import RedisJournal
    from bot.server import holding_lead
    monkeypatch.setattr("bot.server.LEAD_RENEW_SECONDS", 0.2)
    monkeypatch.setattr("bot.server.LEAD_HOLD_SECONDS", 2)
    a, b = RedisJournal(redis_url), RedisJournal(redis_url)
    assert a.lead("redeliver", 1)
    async with holding_lead(SimpleNamespace(journal=a), "redeliver"):  # type: ignore[arg-type]
        for _ in range(10):  # 3 s: the turn alone would have lapsed after 1
            await asyncio.sleep(0.3)
            assert not b.lead("redeliver", 1)
    await asyncio.sleep(2.2)  # the round ended: nobody extends the turn
    assert b.lead("redeliver", 1)


async def test_the_next_rounds_replica_goes_by_what_the_last_one_kept_unless_its_own_is_later(
        redis_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from datetime import timedelta
    from types import SimpleNamespace

    from bot.redeliver import Memory
    from bot.redisjournal import RedisJournal
    from bot.server import keep_redelivery, recall_redelivery

    def replica(app_id: str = "7") -> SimpleNamespace:
        return SimpleNamespace(journal=RedisJournal(redis_url), redelivery_memory=Memory(), redelivery_asked={},
                               redelivery_unkept=False, settings=SimpleNamespace(api_url="https://api.github.com"),
                               pool=SimpleNamespace(credentials=SimpleNamespace(app_id=app_id)))
    caplog.set_level("INFO", "foldbot")
    a, b, other = replica(), replica(), replica("8")
    a.redelivery_memory, a.redelivery_asked = Memory(200, [{"id": 150, "guid": "g1"}]), {"g1": 1e12}
    await keep_redelivery(a, timedelta(hours=1))  # type: ignore[arg-type]
    await recall_redelivery(b)  # type: ignore[arg-type]
    assert (b.redelivery_memory, b.redelivery_asked) == (a.redelivery_memory, {"g1": 1e12})
    await recall_redelivery(other)  # type: ignore[arg-type]
    assert (other.redelivery_memory, other.redelivery_asked) == (Memory(), {})
    assert "redelivery: what the journal kept is of another App or GitHub; this round goes by this process's memory " \
        "(after a restart: it lists the whole window)" in [
        r.getMessage() for r in caplog.records]

    async def refused(*args: object) -> None:
        raise ConnectionError("Redis is away")
    b.redelivery_memory, b.redelivery_asked = Memory(300, [{"id": 250, "guid": "g2"}]), {"g1": 1e12, "g2": 2e12}
    monkeypatch.setattr(b.journal, "keep_note", refused)
    await keep_redelivery(b, timedelta(hours=1))  # type: ignore[arg-type]
    assert b.redelivery_unkept
    a.redelivery_asked["g3"] = 3e12  # meanwhile a's next round asked for g3, and kept it
    await keep_redelivery(a, timedelta(hours=1))  # type: ignore[arg-type]
    await recall_redelivery(b)  # either may be the later: b joins both, erring towards listing more
    assert (b.redelivery_memory.newest, [item["id"] for item in b.redelivery_memory.undelivered]) == (200, [150, 250])
    assert b.redelivery_asked == {"g1": 1e12, "g2": 2e12, "g3": 3e12}
    monkeypatch.undo()
    await keep_redelivery(b, timedelta(hours=1))  # type: ignore[arg-type]
    assert not b.redelivery_unkept
    await recall_redelivery(a)  # what b kept now holds everything either asked for
    assert sorted(a.redelivery_asked) == ["g1", "g2", "g3"]


async def test_a_full_queue_sees_the_backlog_without_taking_any_of_it(redis_url: str) -> None:
    """The backlog check of a replica whose queue is full leaves the shared list as it is:
    another replica with room takes those deliveries now, not once a hold nobody renews lapses."""
    from types import SimpleNamespace

    from bot.metrics import Metrics
    from bot.redisjournal import RedisJournal
    from bot.server import Delivery, refill
    full, other = RedisJournal(redis_url), RedisJournal(redis_url)
    for delivery in ("w1", "w2"):
        full.accept(delivery, "workflow_run", b"{}", 1, hold=False)  # as a web process journals: on the shared list
    queue: asyncio.Queue[Delivery] = asyncio.Queue(maxsize=1)
    queue.put_nowait(Delivery("busy", "workflow_run", b"{}", 1))
    state = SimpleNamespace(backlog=False, queue=queue, journal=full, in_flight={"busy"}, metrics=Metrics(),
                            refilling=asyncio.Lock(), accepting=True)
    assert await refill(state) == 0 and state.backlog  # type: ignore[arg-type]
    assert full._redis.lrange(full.queue, 0, -1) == [b"w1", b"w2"] and full._redis.zcard(full.leases) == 0
    assert [entry.id for entry in other.pending(5)] == ["w1", "w2"]


async def test_a_redis_that_hangs_stalls_no_answer_while_the_pump_waits_for_it(
        fake_github: FakeGitHub, own_redis: tuple[str, subprocess.Popen[bytes]]) -> None:
    """Redis that stops answering (not refusing: a stopped server, a network partition)
    holds each call for its 5 s socket timeout. The pump asks it every second: it asks from a
    thread, so `/health` and `/metrics` answer at once all the while."""
    url, server = own_redis
    bot, runner = await start_bot(fake_github, redis_url=url)

    def slowest_answer(seconds: float) -> float:  # asked from a thread: the bot's event loop is this test's too
        slowest, until = 0.0, time.monotonic() + seconds
        while time.monotonic() < until:
            for path in ("/health", "/metrics"):
                started = time.monotonic()
                with urllib.request.urlopen(f"{bot.url}{path}", timeout=30) as response:
                    assert response.status == 200
                    response.read()
                slowest = max(slowest, time.monotonic() - started)
            time.sleep(0.05)
        return slowest

    try:
        server.send_signal(signal.SIGSTOP)
        try:
            slowest = await asyncio.to_thread(slowest_answer, 3.0)  # three turns of the pump
        finally:
            server.send_signal(signal.SIGCONT)
        assert slowest < 0.5, f"an answer waited {slowest:.2f} s for Redis"
    finally:
        await bot.session.close()
        await runner.cleanup()


def _restart(server: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """The same `redis-server` again, on its port (empty: it saves nothing), once it answers."""
    import redis
    again = subprocess.Popen(server.args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    client = redis.Redis.from_url(server_url(server))
    for _ in range(100):
        try:
            client.ping()
            return again
        except redis.ConnectionError:
            time.sleep(0.05)
    again.kill()
    raise AssertionError("redis-server did not start again")


def server_url(server: subprocess.Popen[bytes]) -> str:
    args = list(server.args)  # type: ignore[arg-type]
    return f"redis://127.0.0.1:{args[args.index('--port') + 1]}/0"


async def _health(session: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, Any]]:
    async with session.get(f"{base}/health") as response:
        return response.status, await response.json()


async def _health_comes_back(session: aiohttp.ClientSession, base: str) -> None:
    """`/health` says ok again within 10 s."""
    for _ in range(100):
        if (await _health(session, base))[0] == 200:
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"/health did not come back: {await _health(session, base)}")


async def test_a_redis_that_goes_away_is_said_on_health_and_so_is_its_return(
        fake_github: FakeGitHub, own_redis: tuple[str, subprocess.Popen[bytes]],
        caplog: pytest.LogCaptureFixture) -> None:
    """Redis stops (refusing connections): deliveries are answered 503 (GitHub counts them failed,
    and they are asked for again), `/health` says degraded with the reason, and the pump's failing
    reads are logged once, not every second. Redis back: ok again, and deliveries are taken."""
    url, server = own_redis
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, redis_url=url)
    where = url.removeprefix("redis://")
    again = None
    try:
        with caplog.at_level(logging.INFO, logger="foldbot.server"):
            server.terminate()
            server.wait(timeout=10)
            await until(lambda: bot.state.journal_problem is not None, seconds=5)
            status, health = await _health(bot.session, bot.url)
            assert (status, health["status"]) == (503, "degraded")
            assert health["reason"].startswith(f"the journal (Redis at {where}) cannot be ")
            assert "Connection refused" in health["reason"]
            status, answer = await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="away")
            assert (status, answer) == (503, {"error": "foldbot cannot record the delivery now; it is redelivered "
                                                       "later"})
            await asyncio.sleep(2.5)  # the pump fails twice more, the watcher as often
            again = _restart(server)
            await until(lambda: bot.state.journal_problem is None, seconds=5)
            assert (await _health(bot.session, bot.url))[0] == 200
            assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="away"))[0] == 202
            await until(lambda: "away" in bot.state.done)
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the journal (")]
        assert len(said) == 2 and said[0].endswith(" (/health says degraded until it answers again)"), said
        assert said[1] == f"the journal (Redis at {where}) answers again"
    finally:
        await bot.session.close()
        await runner.cleanup()
        if again is not None:
            again.terminate()
            again.wait(timeout=10)


async def test_with_a_worker_process_a_redis_that_goes_away_is_said_on_health_without_a_traceback(
        fake_github: FakeGitHub, own_redis: tuple[str, subprocess.Popen[bytes]], tmp_path: Path) -> None:
    """`foldbot serve` as deployed (its worker process) when Redis goes away: `/health` answers 503
    degraded with the reason (it answered 500, with a traceback each time); a worker process
    started meanwhile exits with one line saying why, and is started again; Redis back: ok."""
    from tests.harness import free_port
    url, server = own_redis
    port = free_port()
    process = await serve_process(fake_github, tmp_path / "data", port, FOLDBOT_REDIS_URL=url,
                                  FOLDBOT_WORKER_PROCESS="yes")
    base, where, again = f"http://127.0.0.1:{port}", url.removeprefix("redis://"), None
    try:
        async with aiohttp.ClientSession() as session:
            await until(lambda: (tmp_path / "data" / "worker.json").exists())  # the worker is at work
            server.terminate()
            server.wait(timeout=10)
            os.kill(json.loads((tmp_path / "data" / "worker.json").read_text())["pid"], signal.SIGKILL)
            for _ in range(3):  # the web process's own read, then the restarted worker's failure
                status, health = await _health(session, base)
                assert (status, health["status"]) == (503, "degraded")
                assert health["reason"].startswith(f"the journal (Redis at {where}) cannot be ")
                assert health["reason"].endswith(". Connection refused.") and health["queue_depth"] is None
                await asyncio.sleep(1)
            again = _restart(server)
            await _health_comes_back(session, base)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output = (await asyncio.wait_for(process.communicate(), timeout=60))[0].decode()
        if again is not None:
            again.terminate()
            again.wait(timeout=10)
    assert "Traceback" not in output, output[-3000:]
    assert f"foldbot: error: cannot reach Redis at {where} (FOLDBOT_REDIS_URL): Error 111 connecting to " \
           f"127.0.0.1:{where.split(':')[1].split('/')[0]}. Connection refused." in output, output[-3000:]
    assert "the worker process is not running (exit code 2: cannot reach Redis at " in output


def test_no_redis_password_is_ever_said(redis_url: str) -> None:
    """Where the journal is, as `/health` and the log lines say it: host, port and database, not
    the password, wherever the URL has it (`user:password@`, `?password=`)."""
    from bot.journal import JournalUnavailable
    from bot.redisjournal import RedisJournal
    from tests.harness import free_port
    closed = free_port()
    for url in (f"redis://:s3cr3t@127.0.0.1:{closed}/2", f"redis://127.0.0.1:{closed}/2?password=s3cr3t",
                f"redis://user:s3cr3t@127.0.0.1:{closed}/2?password=s3cr3t"):
        with pytest.raises(JournalUnavailable) as refused:
            RedisJournal(url)
        assert "s3cr3t" not in str(refused.value)
        assert str(refused.value).startswith(f"cannot reach Redis at 127.0.0.1:{closed}/2 (FOLDBOT_REDIS_URL): ")
    assert RedisJournal(redis_url).where == f"Redis at {redis_url.removeprefix('redis://')}"


def test_serve_that_cannot_open_its_journal_says_why_in_one_line(tmp_path: Path) -> None:
    from tests.harness import free_port
    (tmp_path / "a-file").write_text("")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FOLDBOT_"))},
           "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_TOKEN": "t", "PORT": str(free_port())}
    closed = free_port()  # nothing listens there
    cases = [({"FOLDBOT_REDIS_URL": f"redis://127.0.0.1:{closed}/0", "FOLDBOT_DATA_DIR": str(tmp_path / "data")},
              f"foldbot: error: cannot reach Redis at 127.0.0.1:{closed}/0 (FOLDBOT_REDIS_URL): Error 111 connecting "
              f"to 127.0.0.1:{closed}. Connection refused."),
             ({"FOLDBOT_DATA_DIR": str(tmp_path / "a-file")},
              f"foldbot: error: cannot open the journal in {tmp_path / 'a-file'} (FOLDBOT_DATA_DIR): [Errno 17] File "
              f"exists: '{tmp_path / 'a-file'}'")]
    for extra, said in cases:
        result = subprocess.run([sys.executable, "-m", "bot", "serve"], env={**env, **extra}, cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (2, said), result.stderr
        assert "Traceback" not in result.stderr


async def test_with_a_worker_process_a_redis_that_hangs_is_said_on_health_within_a_second(
        fake_github: FakeGitHub, own_redis: tuple[str, subprocess.Popen[bytes]], tmp_path: Path) -> None:
    """As deployed, `/health` reads the queue's depth from Redis: a Redis that hangs does not hold
    it for the 5 s socket timeout; it says degraded after 1 s, then at once; ok once Redis answers."""
    from tests.harness import free_port
    url, server = own_redis
    port = free_port()
    process = await serve_process(fake_github, tmp_path / "data", port, FOLDBOT_REDIS_URL=url,
                                  FOLDBOT_WORKER_PROCESS="yes")
    base, where = f"http://127.0.0.1:{port}", url.removeprefix("redis://")
    try:
        async with aiohttp.ClientSession() as session:
            server.send_signal(signal.SIGSTOP)
            try:
                for _ in range(3):
                    started = time.monotonic()
                    status, health = await _health(session, base)
                    assert time.monotonic() - started < 2
                    assert (status, health["reason"]) == (
                        503, f"the journal (Redis at {where}) cannot be read: no answer within 1 s")
            finally:
                server.send_signal(signal.SIGCONT)
            await _health_comes_back(session, base)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output = (await asyncio.wait_for(process.communicate(), timeout=60))[0].decode()
    assert "Traceback" not in output, output[-3000:]


def test_a_stopping_replica_does_not_hand_back_what_another_replica_took_over(redis_url: str) -> None:
    """A's hold lapsed (no renewal for 2 minutes, say a network split) and B took the delivery
    over and runs it; A then stops: it does not hand back B's delivery (C would run it beside B)."""
    from bot.redisjournal import RedisJournal
    a, b, c = RedisJournal(redis_url), RedisJournal(redis_url), RedisJournal(redis_url)
    assert a.accept("d", "workflow_run", b"{}", 1) == "new"  # leased to A
    a._redis.zadd(a.leases, {"d": time.time() - 1})  # A's hold lapsed
    assert [e.id for e in b.pending(5)] == ["d"]  # B takes it over
    assert a.hand_back(["d"]) == 0 and c.pending(5) == []
    assert b.hand_back(["d"]) == 1 and [e.id for e in c.pending(5)] == ["d"]  # (B's to hand back)


async def test_a_delivery_whose_outcome_is_being_written_at_the_stop_is_not_handed_back(
        fake_github: FakeGitHub, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """The drain's deadline passes while a worker waits for `journal.mark` (a thread: the cancel
    does not stop it): its handler ran to the end, so it is not handed back (another replica
    would run it again before the 'done' lands). (A reviewer's reproduction.)"""
    world = sglang_world(fake_github, runs=1)
    bot, runner = await start_bot(fake_github, redis_url=redis_url, workers=1, drain_seconds=0.3)
    journal = bot.state.journal
    real = journal._finish_queued
    entered, release = threading.Event(), threading.Event()

    def slow(*args, **kwargs):  # noqa: ANN002, ANN003
        entered.set()
        release.wait(10)  # (Redis slow to answer, a GC pause...)
        return real(*args, **kwargs)

    journal._finish_queued = slow
    try:
        run = world.runs[0]
        assert (await bot.deliver("workflow_run", world.payload(run["id"]), delivery="d-1"))[0] == 202
        await until(lambda: entered.is_set())  # the handler finished; its outcome is being written
        with caplog.at_level(logging.INFO):
            await bot.session.close()
            await runner.cleanup()  # drain times out (0.3 s), stop(): snapshot, cancel, hand_back
        from bot.redisjournal import RedisJournal
        other = RedisJournal(redis_url)
        claimed = [e.id for e in other.pending(5)]
        started = await other.begin("d-1") if claimed else None
        assert claimed == [], (f"the finished delivery was handed back and claimed again (run {started}) by "
                               f"another replica; log: {[m for m in caplog.messages if 'shutdown' in m]}")
    finally:
        release.set()
        await asyncio.sleep(0.5)


@pytest.mark.parametrize("stopped", ["web process", "process group"])
async def test_serve_as_deployed_hands_back_what_its_worker_did_not_finish_when_stopped(
        fake_github: FakeGitHub, redis_url: str, tmp_path: Path, stopped: str) -> None:
    """`foldbot serve` as deployed (a web process and its worker process), SIGTERM to the web
    process (`docker stop`) or to both (a host going down, Heroku) while a handler hangs in a
    GitHub call: within the drain (FOLDBOT_DRAIN_SECONDS=1) and the hand-back, it exits and
    what its worker held is on the shared list; another replica finishes it, one comment each."""
    from bot.redisjournal import RedisJournal
    from tests.harness import post_run
    from tests.harness import free_port
    world = sglang_world(fake_github, runs=3)
    fake_github.set_latency(5, method="GET", path=r"/pulls/\d+/files$")  # (more than the drain's 1 s)
    port, journal = free_port(), RedisJournal(redis_url)
    process = await serve_process(fake_github, tmp_path / "data", port, FOLDBOT_REDIS_URL=redis_url,
                                  FOLDBOT_WORKER_PROCESS="yes", FOLDBOT_DRAIN_SECONDS="1", FOLDBOT_WORKERS="1")
    other, runner = None, None
    try:
        async with aiohttp.ClientSession() as session:
            for i, run in enumerate(world.runs):
                assert (await post_run(session, port, world, run, f"deploy-{i}"))[0] == 202
        await until(lambda: journal._redis.hget(journal._key("deploy-0"), "starts") == b"1")
        await until(lambda: journal._redis.zcard(journal.leases) == 3)  # the worker holds all three
        started = time.monotonic()
        if stopped == "web process":
            process.send_signal(signal.SIGTERM)
        else:
            os.killpg(process.pid, signal.SIGTERM)
        output = (await asyncio.wait_for(process.communicate(), timeout=30))[0].decode()
        took = time.monotonic() - started
        assert process.returncode == 0 and took < 6, (took, output[-3000:])  # (1 s drain, at most 2 s hand-back)
        assert "shutdown: 3 deliveries this process held went back to the shared queue for the other replicas" in output
        assert "Traceback" not in output, output[-3000:]
        assert journal._redis.zcard(journal.leases) == 0 and journal._redis.llen(journal.queue) == 3
        fake_github.set_latency(0, method="GET", path=r"/pulls/\d+/files$")
        other, runner = await start_bot(fake_github, redis_url=redis_url)
        await until(lambda: all(f"deploy-{i}" in other.state.done for i in range(3)), 30)
        for run in world.runs:
            assert len(bot_comments(fake_github, world, run["pull_requests"][0]["number"])) == 1
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        if other is not None:
            await other.session.close()
            await runner.cleanup()


async def test_the_drain_log_counts_the_delivery_whose_handler_it_cuts_short(
        fake_github: FakeGitHub, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """One delivery, its handler in a hung GitHub call when the drain runs out: the operator is
    told 1 delivery was not processed (not '0': the queue alone), then that it was handed back."""
    world = sglang_world(fake_github, runs=1)
    fake_github.set_latency(5, method="GET", path=r"/pulls/\d+/files$")
    bot, runner = await start_bot(fake_github, redis_url=redis_url, workers=1, drain_seconds=0.3)
    journal = bot.state.journal
    assert (await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="hung"))[0] == 202
    await until(lambda: journal._redis.hget(journal._key("hung"), "starts") == b"1")
    await asyncio.sleep(0.3)
    with caplog.at_level(logging.INFO):
        await bot.session.close()
        await runner.cleanup()
    said = [m for m in caplog.messages if m.startswith("shutdown:")]
    assert said == [f"shutdown: 1 deliveries were not processed in 0.3 s (0 of them not started); they stay queued in "
                    f"the journal ({journal.where})",
                    "shutdown: 1 deliveries this process held went back to the shared queue for the other replicas"]


async def test_a_stop_while_redis_hangs_says_what_it_could_not_hand_back_and_keeps_to_its_time(
        fake_github: FakeGitHub, own_redis: tuple[str, subprocess.Popen[bytes]],
        caplog: pytest.LogCaptureFixture) -> None:
    """Redis stops answering (SIGSTOP) just as a replica with work in hand is stopped: the stop
    takes the drain's time and the hand-back's 2 s, not Redis's socket timeouts on top, and its
    log names what it could not hand back, and why (an operator probe saw a blank reason)."""
    url, server = own_redis
    world = sglang_world(fake_github, runs=3)
    fake_github.set_latency(5, method="GET", path=r"/pulls/\d+/files$")
    bot, runner = await start_bot(fake_github, redis_url=url, queue_size=4, workers=1, drain_seconds=0.5)
    journal = bot.state.journal
    for i, run in enumerate(world.runs):
        assert (await bot.deliver("workflow_run", world.payload(run["id"]), delivery=f"hang-{i}"))[0] == 202
    await until(lambda: journal._redis.hget(journal._key("hang-0"), "starts") == b"1")
    server.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        with caplog.at_level(logging.INFO):
            await bot.session.close()
            await runner.cleanup()
        took = time.monotonic() - started
    finally:
        server.send_signal(signal.SIGCONT)
    assert took < 0.5 + 2 + 1.5, took
    assert ("shutdown: cannot hand back the 3 deliveries this process holds (hang-0, hang-1, hang-2): TimeoutError, "
            "within 2 s; another replica takes them once their hold lapses") in caplog.messages


async def test_a_delivery_foldbot_makes_again_is_left_as_the_journal_has_it_in_redis_too(redis_url: str) -> None:
    """As `test_a_delivery_foldbot_makes_again_is_left_as_the_journal_has_it` (SQLite)."""
    from bot.redisjournal import RedisJournal
    journal, other = RedisJournal(redis_url), RedisJournal(redis_url)
    for delivery in ("aside", "failed", "held"):
        assert await journal.record(delivery, "workflow_run", b"{}", 1, again=False) == "new"
    await journal.mark("aside", "set_aside")
    await journal.mark("failed", "failed")
    assert [await other.record(d, "workflow_run", b'{"x": 1}', 1, again=False) for d in ("aside", "failed", "held")] \
        == ["failed", "failed", "leased"]
    assert journal._redis.hget(journal._key("held"), "again") is None  # (not noted as delivered again)
    assert other.pending(5) == [] and journal.set_aside(0) == [("aside", "workflow_run")]
    assert await other.record("aside", "workflow_run", b'{"x": 2}', 1) == "new"  # a redelivery runs it again
    assert other.set_aside(0) == []
