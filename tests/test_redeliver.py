"""Redelivery: foldbot lists the App's deliveries (`GET /app/hook/deliveries`, cursor
pages, App JWT) and asks GitHub to send again (`POST .../attempts`) each failed one of
an event it handles that it has not processed; the fake GitHub redelivers as GitHub
does, with the same GUID."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.github import GitHubError
from bot.redeliver import to_redeliver
from tests.fakegithub import FakeGitHub
from tests.fakegithub.hooks import app_hook
from tests.harness import SECRET, app_pool, sglang_world, start_bot
from tests.test_app_workflow_run import bot_comments


async def test_the_fake_lists_deliveries_newest_first_in_cursor_pages_and_redelivers_with_the_same_guid(
        fake_github: FakeGitHub) -> None:
    received: list[tuple[dict[str, str], bytes]] = []

    async def webhook(request: web.Request) -> web.Response:
        received.append((dict(request.headers), await request.read()))
        return web.json_response({}, status=202)

    app = web.Application()
    app.router.add_post("/webhook", webhook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    hook = app_hook(fake_github)
    hook.configure(f"http://127.0.0.1:{port}/webhook", "s3cret")
    made = [hook.record("issue_comment", {"action": "created", "n": i}, guid=f"g{i}") for i in range(5)]
    try:
        async with aiohttp.ClientSession() as session:
            pool = app_pool(fake_github, session)
            api = pool._api("test")
            token = pool.credentials.jwt()
            pages = [await api.getitem("/app/hook/deliveries?per_page=2", jwt=token)]
            assert [d["guid"] for d in pages[0]] == ["g4", "g3"]
            everything = [d async for d in api.getiter("/app/hook/deliveries?per_page=2", jwt=token)]
            assert [d["guid"] for d in everything] == ["g4", "g3", "g2", "g1", "g0"]
            assert fake_github.count("GET", r"^/app/hook/deliveries$") == 4  # one page, then three
            assert set(everything[0]) == {"id", "guid", "delivered_at", "redelivery", "duration", "status",
                                          "status_code", "event", "action", "installation_id", "repository_id",
                                          "throttled_at"}
            assert (everything[0]["status_code"], everything[0]["action"], everything[0]["redelivery"]) == (
                502, "created", False)
            async with session.get(f"{fake_github.base_url}/app/hook/deliveries",
                                   headers={"Authorization": "token nope"}) as response:
                assert response.status == 401
            assert (await api.post(f"/app/hook/deliveries/{made[1].id}/attempts", data=b"", jwt=token)) in ({}, None)
            await asyncio.gather(*hook.tasks)
            with pytest.raises(Exception) as missing:
                await api.post("/app/hook/deliveries/1/attempts", data=b"", jwt=token)
            assert getattr(missing.value, "status_code", None) == 404
    finally:
        await runner.cleanup()
    (headers, body), = received
    assert headers["X-GitHub-Delivery"] == "g1" and headers["X-GitHub-Event"] == "issue_comment"
    assert json.loads(body) == {"action": "created", "n": 1}
    assert headers["X-Hub-Signature-256"] == "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    again = hook.deliveries[-1]
    assert (again.guid, again.redelivery, again.status_code, again.status) == ("g1", True, 202, "OK")


def _item(id_: int, guid: str, code: int, event: str = "workflow_run") -> dict[str, Any]:
    return {"id": id_, "guid": guid, "status_code": code, "status": "OK" if code == 200 else "failed", "event": event}


def test_which_deliveries_are_asked_for_again() -> None:
    items = [
        _item(9, "a", 502), _item(8, "a", 0), _item(7, "b", 502), _item(6, "b", 200),  # b: a later attempt worked
        _item(5, "c", 500), _item(4, "d", 504, "star"), _item(3, "e", 502), _item(2, "f", 503),
        {"id": "x", "guid": "g", "status_code": 500, "event": "workflow_run"}, _item(1, "", 500),
    ]
    chosen = to_redeliver(items, ["workflow_run", "issue_comment"], lambda guids: {"e"} & set(guids), asked={"f"})
    assert [(d["guid"], d["id"]) for d in chosen] == [("c", 5), ("a", 9)]


async def test_failed_deliveries_are_redelivered_once_and_processed_once(fake_github: FakeGitHub) -> None:
    world = sglang_world(fake_github)
    run = world.runs[-1]
    number = run["pull_requests"][0]["number"]
    payload = world.payload(run["id"])
    hook = app_hook(fake_github)
    hook.record("workflow_run", world.payload(world.runs[-2]["id"]), guid="too-old", status_code=502,
                delivered_at=time.time() - 3 * 24 * 3600)
    lost = hook.record("workflow_run", payload, guid="lost-1", status_code=0, status="failed to connect")
    hook.record("ping", {"zen": "z"}, guid="ping-1", status_code=502)
    bot, runner = await start_bot(fake_github, redeliver_minutes=0.005, redeliver_first_seconds=0.05)
    hook.configure(f"{bot.url}/webhook", SECRET)
    try:
        for _ in range(200):
            if bot_comments(fake_github, world, number) and "lost-1" in bot.state.done:
                break
            await asyncio.sleep(0.05)
        listed = fake_github.count("GET", r"^/app/hook/deliveries$")
        for _ in range(100):  # a few more rounds: nothing more is asked for
            if fake_github.count("GET", r"^/app/hook/deliveries$") >= listed + 2:
                break
            await asyncio.sleep(0.05)
        await bot.settle()
        assert fake_github.count("GET", r"^/app/hook/deliveries$") >= listed + 2
        attempts = [r.path for r in fake_github.requests if r.method == "POST" and r.path.endswith("/attempts")]
        assert attempts == [f"/app/hook/deliveries/{lost.id}/attempts"]
        assert [(d.guid, d.redelivery, d.status_code) for d in hook.deliveries[3:]] == [("lost-1", True, 202)]
        assert len(bot_comments(fake_github, world, number)) == 1
        assert "too-old" not in bot.state.done and list(bot.state.redelivery_asked) == ["lost-1"]
        assert "foldbot_redeliveries_total 1.0" in await (await bot.session.get(f"{bot.url}/metrics")).text()
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_delivery_foldbot_processed_is_not_asked_for(fake_github: FakeGitHub) -> None:
    world = sglang_world(fake_github, runs=2)
    payload = world.payload(world.runs[-1]["id"])
    bot, runner = await start_bot(fake_github)
    try:
        await bot.deliver("workflow_run", payload, delivery="seen-1")
        await bot.settle()
        hook = app_hook(fake_github)
        hook.record("workflow_run", payload, guid="seen-1", status_code=504, status="timed out")  # GitHub gave up waiting
        from bot.redeliver import redeliver_failed
        outcome = await redeliver_failed(bot.state.pool, ["workflow_run"], bot.state.journal.known, {},
                                         timedelta(hours=1), now=datetime.now(timezone.utc))
        assert (outcome.listed, outcome.asked, outcome.refused) == (1, [], [])
        assert fake_github.count("POST", r"/attempts$") == 0
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_delivery_answered_202_that_the_journal_lost_is_asked_for_again(
        fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    """A Redis that restarted empty, or a new data directory: deliveries foldbot answered 202 are not in
    the journal any more, and GitHub, which counts them delivered, never sends them again. They were
    never reported ("6 listed, 0 asked again"). One the journal holds is not asked for."""
    world = sglang_world(fake_github, runs=2)
    bot, runner = await start_bot(fake_github)
    try:
        await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]), delivery="kept-1")
        await bot.settle()
        hook = app_hook(fake_github)
        hook.configure(f"{bot.url}/webhook", SECRET)
        hook.record("workflow_run", world.payload(world.runs[-2]["id"]), guid="kept-1", status_code=202)
        gone = hook.record("workflow_run", world.payload(world.runs[-1]["id"]), guid="gone-1", status_code=202)
        hook.record("ping", {"zen": "z"}, guid="ping-1", status_code=202)  # (an event foldbot does not journal)
        from bot.redeliver import redeliver_failed
        with caplog.at_level(logging.INFO, logger="foldbot.redeliver"):
            outcome = await redeliver_failed(bot.state.pool, ["workflow_run"], bot.state.journal.known, {},
                                             timedelta(hours=1), now=datetime.now(timezone.utc))
        assert (outcome.listed, outcome.asked, outcome.lost) == (3, ["gone-1"], ["gone-1"])
        assert [r.path for r in fake_github.requests if r.path.endswith("/attempts")] == \
            [f"/app/hook/deliveries/{gone.id}/attempts"]
        assert "redelivery: 1 deliveries GitHub lists as answered 202 are not in the journal (gone-1): it lost them (a " \
            "Redis that restarted empty, or a new data directory); they are asked for again" in caplog.messages
        assert "asked GitHub to redeliver gone-1 (workflow_run, answered 202, lost by the journal)" in caplog.messages
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_listing_stops_at_the_window(fake_github: FakeGitHub) -> None:
    hook = app_hook(fake_github)
    now = time.time()
    for i in range(250):
        hook.record("workflow_run", {"action": "completed"}, guid=f"w{i}", delivered_at=now - (250 - i) * 60)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        recent = await pool.hook_deliveries(datetime.now(timezone.utc) - timedelta(minutes=120))
        assert len(recent) == 119 and recent[0]["guid"] == "w249"
        assert fake_github.count("GET", r"^/app/hook/deliveries$") == 2
        everything = await pool.hook_deliveries(datetime.now(timezone.utc) - timedelta(days=1))
        assert len(everything) == 250 and fake_github.count("GET", r"^/app/hook/deliveries$") == 5


async def test_a_guid_asked_for_is_asked_again_after_an_hour(fake_github: FakeGitHub) -> None:
    from bot.redeliver import ASK_AGAIN_SECONDS, redeliver_failed
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # nothing listens: every redelivery fails
    hook.record("workflow_run", {"action": "completed"}, guid="stuck", status_code=0, status="failed to connect")
    asked: dict[str, float] = {}
    now = datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        for later, expected in ((0, ["stuck"]), (60, []), (ASK_AGAIN_SECONDS + 1, ["stuck"])):
            outcome = await redeliver_failed(pool, ["workflow_run"], lambda guids: set(), asked, timedelta(hours=2),
                                             now=now + timedelta(seconds=later))
            assert outcome.asked == expected
        await asyncio.gather(*hook.tasks)
    assert fake_github.count("POST", r"/attempts$") == 2


def _failed(hook: Any, guid: str, tries: int = 1) -> None:
    for _ in range(tries):
        hook.record("workflow_run", {"action": "completed"}, guid=guid, status_code=0, status="failed to connect")


# (Deliveries these tests take as delivered are answered 200 below: a 202 is foldbot's answer to what its journal
# holds, and one its journal does not hold was lost by it, and is asked for again:
# `test_a_delivery_answered_202_that_the_journal_lost_is_asked_for_again`.)
async def _pass(pool: Any, asked: dict[str, float], now: datetime, later: float = 0, memory: Any = None) -> Any:
    from bot.redeliver import redeliver_failed
    return await redeliver_failed(pool, ["workflow_run"], lambda guids: set(), asked, timedelta(hours=2),
                                  now=now + timedelta(seconds=later), memory=memory)


async def test_a_redelivery_github_refuses_is_not_asked_for_again_while_the_window_holds_it(
        fake_github: FakeGitHub) -> None:
    from bot.redeliver import ASK_AGAIN_SECONDS
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # nothing listens: every redelivery fails
    _failed(hook, "refused")
    _failed(hook, "sent")
    fake_github.fail_next(1, 422, method="POST", path=r"/attempts$")
    asked: dict[str, float] = {}
    now = datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        first = await _pass(pool, asked, now)
        assert (first.asked, first.refused, first.stopped) == (["sent"], ["refused"], None)
        later = await _pass(pool, asked, now, ASK_AGAIN_SECONDS + 1)
        assert (later.asked, later.refused) == (["sent"], [])  # the refused one is not asked for again
        await asyncio.gather(*hook.tasks)
    assert fake_github.count("POST", r"/attempts$") == 3


async def test_a_rate_limit_ends_the_pass_and_the_rest_wait_for_the_next(fake_github: FakeGitHub,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    for i in range(5):
        _failed(hook, f"g{i}")
    fake_github.secondary_rate_limit(1, retry_after=600, method="POST", path=r"/attempts$")  # longer than foldbot waits
    asked: dict[str, float] = {}
    now = datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        limited = await _pass(pool, asked, now)
        assert (limited.asked, limited.refused) == ([], ["g0"])
        assert limited.stopped == "GitHub answered 403; the rest wait for the next pass"
        assert fake_github.count("POST", r"/attempts$") == 1  # nothing more was asked for while limited
        with pytest.raises(GitHubError, match="429 not sent: GitHub asked for no calls until"):
            await _pass(pool, asked, now, 60)  # within the 600 s GitHub asked for: the App's client sends nothing
        assert fake_github.count("POST", r"/attempts$") == 1
        monkeypatch.setattr("bot.github.time", SimpleNamespace(time=lambda: time.time() + 601))  # past it
        following = await _pass(pool, asked, now, 600)
        assert following.asked == ["g0", "g1", "g2", "g3", "g4"] and following.stopped is None
        await asyncio.gather(*hook.tasks)


async def test_a_guid_github_tried_max_tries_times_is_left_to_a_person(fake_github: FakeGitHub) -> None:
    from bot.redeliver import MAX_TRIES
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "hopeless", MAX_TRIES)
    _failed(hook, "once-more", MAX_TRIES - 1)
    async with aiohttp.ClientSession() as session:
        outcome = await _pass(app_pool(fake_github, session), {}, datetime.now(timezone.utc))
        await asyncio.gather(*hook.tasks)
    assert (outcome.asked, outcome.given_up) == (["once-more"], ["hopeless"])


async def test_a_pass_asks_for_at_most_max_per_pass(fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.redeliver.MAX_PER_PASS", 2)
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    for i in range(3):
        _failed(hook, f"g{i}")
    asked: dict[str, float] = {}
    now = datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        first = await _pass(pool, asked, now)
        assert first.asked == ["g0", "g1"] and first.stopped == "2 asked for in this pass; the other 1 next time"
        second = await _pass(pool, asked, now, 600)
        assert second.asked == ["g2"] and second.stopped is None
        await asyncio.gather(*hook.tasks)


async def test_the_fake_keeps_deliveries_three_days(fake_github: FakeGitHub) -> None:
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    old = hook.record("workflow_run", {"action": "completed"}, guid="old", delivered_at=time.time() - 4 * 24 * 3600)
    hook.record("workflow_run", {"action": "completed"}, guid="new")
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        listed = await pool.hook_deliveries(datetime.now(timezone.utc) - timedelta(days=10))
        assert [item["guid"] for item in listed] == ["new"]
        from bot.github import GitHubError
        with pytest.raises(GitHubError) as refused:
            await pool.redeliver(old.id)
        assert refused.value.status == 422


async def test_a_listing_longer_than_a_jwt_lasts_signs_each_page_anew(fake_github: FakeGitHub,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakegithub import server as fake_server
    hook = app_hook(fake_github)
    for i in range(800):
        hook.record("workflow_run", {"action": "completed"}, guid=f"g{i}", status_code=0, status="timed out")
    real = time.time
    pages = 0

    class Clock:  # the fake's clock: 2 minutes more at each page (a slow listing, rate-limit waits)
        def time(self) -> float:
            return real() + 120 * pages

        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

    signed = fake_github._app_principal

    def page(credential: str) -> Any:
        nonlocal pages
        principal = signed(credential)
        pages += 1
        return principal
    monkeypatch.setattr(fake_github, "_app_principal", page)
    monkeypatch.setattr(fake_server, "time", Clock())
    monkeypatch.setattr("gidgethub.apps.time", Clock())  # the JWT's iat and exp, on the same clock
    async with aiohttp.ClientSession() as session:
        listed = await app_pool(fake_github, session).hook_deliveries(datetime.now(timezone.utc) - timedelta(days=1))
    assert len(listed) == 800 and pages == 8  # 16 minutes: a JWT signed once lasts 9


async def test_a_round_lists_only_what_is_newer_than_the_last_and_remembers_what_waits(
        fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.redeliver import ASK_AGAIN_SECONDS, Memory
    monkeypatch.setattr("bot.redeliver.MAX_PER_PASS", 1)
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # nothing listens: every redelivery fails
    _failed(hook, "w1")
    _failed(hook, "w2")
    for i in range(250):  # 20 s apart, the last 2,020 s ago
        hook.record("workflow_run", {"action": "completed"}, guid=f"ok{i}", status_code=200, status="OK",
                    delivered_at=time.time() - 7000 + 20 * i)
    memory, asked, now = Memory(), {}, datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        first = await _pass(pool, asked, now, memory=memory)
        assert (first.listed, first.asked) == (252, ["w1"]) and fake_github.count("GET", "^/app/hook/deliveries$") == 3
        await asyncio.gather(*hook.tasks)  # w1's redelivery failed: a new attempt, the newest delivery
        second = await _pass(pool, asked, now, 600, memory=memory)
        # listed: w1's new attempt, and again the deliveries of the 60 s (LATE_SECONDS) before the
        # newest one listed last time (ok246..ok249); w2 waited in memory, not listed again
        assert (second.listed, second.asked) == (5, ["w2"])
        assert fake_github.count("GET", "^/app/hook/deliveries$") == 4  # one page, not three
        await asyncio.gather(*hook.tasks)
        hook.record("workflow_run", {"action": "completed"}, guid="w2", status_code=200, status="OK")  # it got through
        third = await _pass(pool, asked, now, 600 + ASK_AGAIN_SECONDS + 1, memory=memory)
        assert third.asked == ["w1"]
        assert {item["guid"] for item in memory.undelivered} == {"w1"}
        await asyncio.gather(*hook.tasks)


async def test_a_delivery_listed_after_a_newer_one_is_not_skipped(fake_github: FakeGitHub) -> None:
    """GitHub may list a delivery it was still trying (it waits 10 s for an answer) only after
    deliveries made after it, with higher ids. The next round does not stop at the newest id
    it listed before: it lists again what was delivered up to 60 s before that one, and finds
    the late one."""
    from bot.redeliver import Memory
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # nothing listens: every redelivery fails
    hook.record("workflow_run", {"action": "completed"}, guid="old", status_code=200, status="OK",
                delivered_at=time.time() - 600)
    late = hook.record("workflow_run", {"action": "completed"}, guid="late", status_code=0,
                       status="failed to connect", delivered_at=time.time() - 8)
    hook.deliveries.remove(late)  # made before `newer`, not listed yet
    newer = hook.record("workflow_run", {"action": "completed"}, guid="newer", status_code=200, status="OK")
    memory, asked, now = Memory(), {}, datetime.now(timezone.utc)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        first = await _pass(pool, asked, now, memory=memory)
        assert (first.listed, first.asked, memory.newest) == (2, [], newer.id)
        hook.deliveries.append(late)  # listed now
        second = await _pass(pool, asked, now, 600, memory=memory)
        assert (second.listed, second.asked) == (2, ["late"])  # `newer` again, and `late`; not `old`
        await asyncio.gather(*hook.tasks)


def test_what_a_round_listed_and_asked_for_is_kept_as_text_and_read_back() -> None:
    from bot.redeliver import MAX_KEPT_ATTEMPTS, Memory
    memory = Memory(7, [{"id": 7, "guid": "g", "event": "workflow_run", "status_code": 502}], 1.5, {"g": (2, 50.0)})
    text = memory.dumps({"g": 99.0}, "https://api.github.com app 1")
    assert Memory.loads(text, "https://api.github.com app 1") == (memory, {"g": 99.0})
    assert Memory.loads(text, "https://ghe.example/api/v3 app 1") is None  # another GitHub's ids mean nothing
    assert Memory.loads(text, "https://api.github.com app 2") is None
    for text, why in (("[]", "not a JSON object"),
                      ('{"newest": "7", "undelivered": [], "asked": {}, "kept": 0}', "`newest` is not a delivery id"),
                      ('{"newest": null, "undelivered": [{"guid": "g"}], "asked": {}, "kept": 0}',
                       "`undelivered` is not a list of attempts with an id and a GUID"),
                      ('{"newest": null, "undelivered": [], "asked": {"g": true}, "kept": 0}',
                       "`asked` is not a map of GUIDs to times"),
                      ('{"newest": null, "undelivered": [], "asked": {}}', "`kept` is not a time"),
                      ('{"newest": null, "undelivered": [], "asked": {}, "kept": 0, "asks": {"g": [1.5, 2]}}',
                       "`asks` is not a map of GUIDs to [count, time]")):
        with pytest.raises(ValueError) as error:
            Memory.loads(text.replace("{", '{"source": "s", ', 1) if text != "[]" else text, "s")
        assert str(error.value) == why
    outage = Memory(9000, [{"id": i, "guid": f"g{i}"} for i in range(MAX_KEPT_ATTEMPTS + 1)], 2.0)
    assert Memory.loads(outage.dumps({"g1": 5.0}, "s"), "s") == (Memory(None, [], 2.0), {"g1": 5.0})  # lists anew
    many = Memory(asks={f"g{i}": (1, float(i)) for i in range(MAX_KEPT_ATTEMPTS + 1)})
    kept, _ = Memory.loads(many.dumps({}, "s"), "s")
    assert len(kept.asks) == MAX_KEPT_ATTEMPTS and "g0" not in kept.asks  # the latest asks are kept
    older = '{"source": "s", "newest": 3, "undelivered": [], "asked": {}, "kept": 1}'  # before asks were counted
    assert Memory.loads(older, "s") == (Memory(3, [], 1.0), {})
    assert Memory(asks={"a": (1, 5.0), "b": (3, 1.0)}).union(Memory(asks={"a": (2, 4.0)})).asks == \
        {"a": (2, 5.0), "b": (3, 1.0)}


@pytest.mark.parametrize("hours", [2, 24])
async def test_a_delivery_that_always_fails_is_tried_max_tries_times_whatever_the_window(
        fake_github: FakeGitHub, hours: int) -> None:
    """Rounds every 10 minutes for 12 hours; every redelivery of `poison` fails. foldbot asks
    for it until GitHub has tried it MAX_TRIES times, then names it as left to a person, once.
    A window shorter than the tries take (2 h: an ask an hour) holds only two attempts at a
    time; foldbot counts its own asks, so it stops all the same (before, it asked every hour,
    for ever: the newest attempt kept the GUID in GitHub's retention)."""
    from bot.redeliver import MAX_TRIES, Memory, redeliver_failed
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # every redelivery fails
    hook.record("workflow_run", {"action": "completed"}, guid="poison", status_code=400,
                status="Invalid HTTP Response: 400")
    asked: dict[str, float] = {}
    memory, start, step = Memory(), datetime.now(timezone.utc), 600
    given_up: list[str] = []
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        for round_ in range(12 * 3600 // step):
            now = start + timedelta(seconds=round_ * step)
            outcome = await redeliver_failed(pool, ["workflow_run"], lambda guids: set(), asked,
                                             timedelta(hours=hours), now=now, memory=memory)
            given_up += outcome.given_up
            tried = len(hook.deliveries)
            await asyncio.gather(*hook.tasks)
            for delivery in hook.deliveries[tried:]:  # a redelivery is made at the round's time
                delivery.delivered_at = now.timestamp()
    assert [d.guid for d in hook.deliveries].count("poison") == MAX_TRIES
    assert given_up == ["poison"]


async def test_a_round_asks_for_nothing_more_once_foldbot_is_stopping(fake_github: FakeGitHub) -> None:
    """A round that runs while foldbot drains (a deploy): a redelivery would find nobody
    listening, and then wait as if on its way. It stops and says so."""
    from bot.redeliver import redeliver_failed
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "w1")
    _failed(hook, "w2")
    stopping = iter([True, False])  # foldbot starts to stop after the first ask
    asked: dict[str, float] = {}
    async with aiohttp.ClientSession() as session:
        outcome = await redeliver_failed(app_pool(fake_github, session), ["workflow_run"], lambda guids: set(), asked,
                                         timedelta(hours=2), keep_going=lambda: next(stopping))
        await asyncio.gather(*hook.tasks)
    assert (outcome.asked, outcome.stopped) == (["w1"], "foldbot is stopping; the other 1 wait for its next round")
    assert list(asked) == ["w1"] and fake_github.count("POST", r"/attempts$") == 1


async def _kept_after(bot: Any, when: float) -> Any:
    """What the bot's journal keeps of its redelivery rounds, once a round after `when` kept it."""
    from bot.redeliver import Memory
    from bot.server import REDELIVERY_NOTE, redelivery_source
    for _ in range(200):
        text = await bot.state.journal.note(REDELIVERY_NOTE)
        try:
            kept = Memory.loads(text, redelivery_source(bot.state)) if text is not None else None
        except ValueError:  # not written by a round yet
            kept = None
        if kept is not None and kept[0].kept > when:
            return kept
        await asyncio.sleep(0.05)
    raise AssertionError("no redelivery round kept its memory")


async def test_after_a_restart_a_round_lists_only_what_is_new_and_does_not_ask_again_for_what_was_just_asked_for(
        fake_github: FakeGitHub, tmp_path: Any) -> None:
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)  # nothing listens: every redelivery fails
    for i in range(250):  # 20 s apart, the last 2,020 s ago
        hook.record("workflow_run", {"action": "completed"}, guid=f"ok{i}", status_code=200, status="OK",
                    delivered_at=time.time() - 7000 + 20 * i)
    _failed(hook, "w1")
    settings = {"data_dir": tmp_path, "redeliver_minutes": 60, "redeliver_first_seconds": 0.05}
    first, runner = await start_bot(fake_github, **settings)
    try:
        (memory, asked) = await _kept_after(first, 0)
    finally:
        await first.session.close()
        await runner.cleanup()
    await asyncio.gather(*hook.tasks)  # the redelivery failed: w1's newest attempt
    assert list(asked) == ["w1"] and [item["guid"] for item in memory.undelivered] == ["w1"]
    assert fake_github.count("GET", "^/app/hook/deliveries$") == 3 and fake_github.count("POST", "/attempts$") == 1
    second, runner = await start_bot(fake_github, **settings)
    try:
        (later, asked_later) = await _kept_after(second, memory.kept)
    finally:
        await second.session.close()
        await runner.cleanup()
    assert fake_github.count("GET", "^/app/hook/deliveries$") == 4  # one page: what came after the first round
    assert fake_github.count("POST", "/attempts$") == 1  # w1 was asked for minutes ago, before the restart
    assert asked_later == asked and later.newest == hook.deliveries[-1].id
    assert sorted(item["id"] for item in later.undelivered) == [d.id for d in hook.deliveries if d.guid == "w1"]


async def test_an_unreadable_note_of_the_last_round_is_named_and_the_round_goes_on(
        fake_github: FakeGitHub, tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    from bot.journal import Journal
    from bot.server import REDELIVERY_NOTE
    journal = Journal(tmp_path)
    await journal.keep_note(REDELIVERY_NOTE, "{not json", 3600)
    journal.close()
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "w1")
    bot, runner = await start_bot(fake_github, data_dir=tmp_path, redeliver_minutes=60, redeliver_first_seconds=0.05)
    try:
        (_, asked) = await _kept_after(bot, 0)
    finally:
        await bot.session.close()
        await runner.cleanup()
        await asyncio.gather(*hook.tasks)
    assert list(asked) == ["w1"] and fake_github.count("POST", "/attempts$") == 1
    [unreadable] = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    assert unreadable.startswith("redelivery: what the last round kept is unreadable (Expecting property name")
    assert unreadable.endswith("this round goes by this process's memory (after a restart: it lists the whole window)")


async def test_a_round_the_journal_fails_is_named_and_the_next_round_comes(
        fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "w1")
    bot, runner = await start_bot(fake_github, redeliver_minutes=0.005, redeliver_first_seconds=0.2)
    known, calls = bot.state.journal.known, []

    def failing_once(guids: list[str]) -> set[str]:
        calls.append(guids)
        if len(calls) == 1:
            raise ConnectionError("the journal is away")
        return known(guids)
    monkeypatch.setattr(bot.state.journal, "known", failing_once)
    try:
        for _ in range(200):
            if fake_github.count("POST", "/attempts$"):
                break
            await asyncio.sleep(0.05)
    finally:
        await bot.session.close()
        await runner.cleanup()
        await asyncio.gather(*hook.tasks)
    assert fake_github.count("POST", "/attempts$") >= 1 and len(calls) >= 2
    failed = [r for r in caplog.records if r.getMessage() == "redelivery: the round failed; the next one in 0.005 minutes"]
    assert len(failed) == 1 and failed[0].exc_info is not None and "the journal is away" in str(failed[0].exc_info[1])


async def test_the_journal_is_asked_once_a_round_and_off_the_event_loop(fake_github: FakeGitHub) -> None:
    import threading

    from bot.redeliver import MAX_TRIES, redeliver_failed
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "hopeless", MAX_TRIES)
    _failed(hook, "w1")
    _failed(hook, "seen")
    asked_in: list[tuple[str, list[str]]] = []

    def known(guids: list[str]) -> set[str]:  # as Redis answers it: a blocking round trip
        asked_in.append((threading.current_thread().name, guids))
        return {"seen"} & set(guids)
    async with aiohttp.ClientSession() as session:
        outcome = await redeliver_failed(app_pool(fake_github, session), ["workflow_run"], known, {}, timedelta(hours=1))
        await asyncio.gather(*hook.tasks)
    assert (outcome.asked, outcome.given_up) == (["w1"], ["hopeless"])
    [(thread, guids)] = asked_in
    assert thread != threading.main_thread().name and guids == ["hopeless", "seen", "w1"]


async def test_an_attempt_listed_again_after_memories_were_joined_counts_once(fake_github: FakeGitHub) -> None:
    """A joined memory (a process whose keep failed, `Memory.union`) takes the older cursor:
    the round lists again attempts it also remembers. g2 failed twice, not four times."""
    from bot.redeliver import Memory
    hook = app_hook(fake_github)
    hook.configure("http://127.0.0.1:9/webhook", SECRET)
    _failed(hook, "g2", 2)
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        listed = await pool.hook_deliveries(datetime.now(timezone.utc) - timedelta(hours=1))
        joined = Memory(None, [dict(item) for item in listed]).union(Memory(listed[0]["id"], []))
        assert joined.newest is None and len(joined.undelivered) == 2
        outcome = await _pass(pool, {}, datetime.now(timezone.utc), memory=joined)
        await asyncio.gather(*hook.tasks)
    assert (outcome.asked, outcome.given_up) == (["g2"], [])
    assert sorted(item["id"] for item in joined.undelivered) == sorted(item["id"] for item in listed)
