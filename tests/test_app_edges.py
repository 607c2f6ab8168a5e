"""The server's edges: metric labels from fixed sets, the rate-limit gauge absent until
GitHub said it, the credentials checked at start (`/health` degraded while GitHub
refuses them), JSON log lines that carry the delivery and the GitHub call, retry lines
that name their delivery, and no token in any log line."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import aiohttp
import pytest

from bot.github import Credentials, GitHubPool, JobLogError
from bot.metrics import Metrics
from bot.publish import DASHBOARD_TITLE
from bot.server import STATE, create_app
from bot.settings import Settings
from handlers import router
from tests.fakegithub import FakeGitHub, make_rsa_key
from tests.harness import INSTALLATION, SECRET, Bot, app_pool, sglang_world, sign, start_bot


def _series(text: str) -> set[str]:
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")}


async def _metrics(bot: Bot) -> str:
    async with bot.session.get(f"{bot.url}/metrics") as response:
        return await response.text()


async def test_unsigned_requests_create_no_series(fake_github: FakeGitHub, bot: Bot) -> None:
    body = b"{}"
    await bot.post(body, {"X-GitHub-Event": "evil-0", "X-GitHub-Delivery": "u0"})
    first = _series(await _metrics(bot))
    for i in range(1, 20):
        status, _ = await bot.post(body, {"X-GitHub-Event": f"evil-{i}", "X-GitHub-Delivery": f"u{i}",
                                          "X-Hub-Signature-256": sign(body, "guess")})
        assert status == 401
    text = await _metrics(bot)
    assert _series(text) == first and "evil" not in text
    assert 'foldbot_deliveries_total{event="unknown",outcome="bad_signature"} 20.0' in text
    # signed events foldbot does not handle share one label
    for name in ("push", "star", "x" * 300):
        status, _ = await bot.post(body, {"X-GitHub-Event": name, "X-GitHub-Delivery": "s", "X-Hub-Signature-256": sign(body)})
        assert status == 202
    text = await _metrics(bot)
    assert 'foldbot_deliveries_total{event="other",outcome="ignored"} 3.0' in text
    assert "push" not in text and "star" not in text


def test_the_rate_limit_gauge_is_absent_until_set() -> None:
    metrics = Metrics()
    assert b"foldbot_github_rate_limit_remaining" not in metrics.render()[0]
    metrics.rate_limit_remaining.set(4321)
    assert "foldbot_github_rate_limit_remaining 4321.0" in metrics.render()[0].decode().splitlines()


async def test_the_rate_limit_gauge_shows_what_github_said(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=2)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    remaining = [line for line in (await _metrics(bot)).splitlines()
                 if line.startswith("foldbot_github_rate_limit_remaining ")]
    assert len(remaining) == 1 and 0 < float(remaining[0].split()[1]) < 5000


async def test_health_shows_the_installation_whose_rate_limit_holds_the_work_back(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=2)
    fake_github.exhaust_rate_limit(reset_in=2)
    status, _ = await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]), delivery="limited")
    assert status == 202
    for _ in range(100):  # the worker meets the limit and waits for its reset
        code, health = await _health(bot)
        if any(entry["client"] == INSTALLATION for entry in health["rate_limited"]):
            break
        await asyncio.sleep(0.02)
    assert code == 200 and health["queue_depth"] == 0  # taken off the queue, waiting
    limited = {entry.pop("client"): entry for entry in health["rate_limited"]}
    assert set(limited) <= {INSTALLATION, "app"} and limited[INSTALLATION]["remaining"] == 0
    assert health["rate_limited_clients"] == len(limited)
    assert limited[INSTALLATION]["waiting_calls"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", limited[INSTALLATION]["until"])
    await bot.settle()  # the limit reset: the work went on
    assert "limited" in bot.state.done and (await _health(bot))[1]["rate_limited"] == []


async def test_a_wait_longer_than_foldbot_waits_holds_every_call_of_the_installation_until_then(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """A secondary limit whose Retry-After is past what one call waits (5 s here, 60 s deployed): the
    delivery fails, and no call of that installation goes out before the time GitHub gave; /health says
    until when."""
    world = sglang_world(fake_github, runs=2)
    fake_github.secondary_rate_limit(1, retry_after=120, method="GET", path=r"/actions/runs/\d+/jobs")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]), delivery="limited")
    await bot.settle()
    assert "limited" not in bot.state.done
    assert 403 in [r.status for r in fake_github.requests if "/jobs" in r.path]  # (another run's, sent with it: 200)
    _, health = await _health(bot)
    [limited] = [entry for entry in health["rate_limited"] if entry["client"] == INSTALLATION]
    until = datetime.strptime(limited["until"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    assert 100 < until - time.time() <= 121
    before = len(fake_github.requests)
    await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]), delivery="next")
    await bot.settle()
    assert "next" not in bot.state.done
    assert [r.path for r in fake_github.requests[before:] if r.path.startswith("/repos/")] == []


async def test_a_blocked_installation_reads_no_job_log_and_a_log_s_retry_after_blocks_it(
        fake_github: FakeGitHub) -> None:
    world = sglang_world(fake_github, runs=1)
    job_id = fake_github.jobs_of(world.runs[0]["id"])[0]["id"]
    fake_github.add_job_log(job_id, "a log")
    path = f"/repos/{world.repo.full_name}/actions/jobs/{job_id}/logs"
    fake_github.secondary_rate_limit(1, retry_after=120, method="GET", path=r"/logs$")
    async with aiohttp.ClientSession() as session:
        gh = app_pool(fake_github, session).for_installation(INSTALLATION)
        with pytest.raises(JobLogError, match=r"GitHub's rate limit \(403\)"):
            await gh.download(path, 1 << 20)
        assert 100 < (gh.api.blocked_until or 0) - time.time() <= 121
        before = len(fake_github.requests)
        with pytest.raises(JobLogError, match="GitHub asked for no calls until") as refused:
            await gh.download(path, 1 << 20)
        assert refused.value.kind == "rate_limited" and fake_github.requests[before:] == []


async def test_health_lists_twenty_clients_short_of_their_limit_and_counts_them_all(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """An organisation's worth of installations short of their limit at once: `/health` stays small."""
    short = [{"client": n, "remaining": 0, "waiting_calls": 1, "until": "2026-12-05T10:00:00Z"} for n in range(300)]
    pool = bot.app[STATE].pool
    assert pool is not None
    monkeypatch.setattr(pool, "short_of_budget", lambda: short)
    code, health = await _health(bot)
    assert code == 200 and health["rate_limited"] == short[:20] and health["rate_limited_clients"] == 300


async def test_a_private_key_that_does_not_parse_is_called_a_private_key(fake_github: FakeGitHub) -> None:
    """PyJWT says "Could not parse the provided public key" of a corrupt private key."""
    broken = fake_github.private_key_pem.replace("\n", "\n!", 3)
    config = Settings(webhook_secret=SECRET, app_id=str(fake_github.app_id), private_key=broken,
                      api_url=fake_github.base_url, port=0)
    bot, runner = await _start(config, None)
    try:
        status, health = await _health(bot)
        assert status == 503 and health["reason"].startswith(
            "the App's private key cannot sign a JWT: it does not read as a PEM RSA private key (PyJWT: ")
    finally:
        await bot.session.close()
        await runner.cleanup()


async def _health(bot: Bot) -> tuple[int, dict[str, Any]]:
    async with bot.session.get(f"{bot.url}/health") as response:
        return response.status, await response.json()


async def test_health_is_degraded_while_github_refuses_the_app_key(fake_github: FakeGitHub,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    wrong = make_rsa_key().private_pem
    credentials = Credentials(app_id=str(fake_github.app_id), private_key=wrong)
    config = Settings(webhook_secret=SECRET, app_id=str(fake_github.app_id), private_key=wrong,
                      api_url=fake_github.base_url, port=0, credentials_recheck_seconds=0.05)
    with caplog.at_level(logging.INFO):
        bot, runner = await _start(config, lambda session, metrics: GitHubPool(
            session, credentials, base_url=fake_github.base_url, metrics=metrics))
        try:
            status, health = await _health(bot)
            assert status == 503
            assert (health["ok"], health["status"]) == (False, "degraded")
            assert health["reason"].startswith("GET /app with the App's JWT answered 401")
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            assert errors == [f"credentials: {health['reason']}; /health answers 503 until GitHub accepts them"]
            assert "foldbot_credentials_ok 0.0" in await _metrics(bot)
            # a 401's rate-limit headers are the unauthenticated caller's (60 an hour), not the App's: they read as
            # "56 calls left" beside the real cause
            assert fake_github.count("GET", r"^/app$") >= 1 and health["rate_limited"] == []
            assert "foldbot_github_rate_limit_remaining " not in await _metrics(bot)
            credentials.private_key = fake_github.private_key_pem  # the operator fixes the key
            for _ in range(100):
                status, health = await _health(bot)
                if status == 200:
                    break
                await asyncio.sleep(0.05)
            assert (status, health["ok"], health["status"]) == (200, True, "ok")
            assert "foldbot_credentials_ok 1.0" in await _metrics(bot)
            assert "credentials: GitHub accepts them" in caplog.messages
        finally:
            await bot.session.close()
            await runner.cleanup()


async def test_health_is_degraded_for_a_token_github_refuses(fake_github: FakeGitHub) -> None:
    config = Settings(webhook_secret=SECRET, token="ghp_not-a-token", api_url=fake_github.base_url, port=0)
    bot, runner = await _start(config, None)
    try:
        status, health = await _health(bot)
        assert status == 503 and health["reason"].startswith("GraphQL `viewer` with GITHUB_TOKEN answered 401")
        assert "ghp_not-a-token" not in json.dumps(health)
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_health_is_ok_with_a_token_github_accepts(fake_github: FakeGitHub) -> None:
    fake_github.add_personal_token("ghp_good", "octocat")
    config = Settings(webhook_secret=SECRET, token="ghp_good", api_url=fake_github.base_url, port=0)
    bot, runner = await _start(config, None)
    try:
        assert await _health(bot) == (200, {"ok": True, "status": "ok", "version": bot.app[STATE].metrics and
                                            (await _health(bot))[1]["version"], "queue_depth": 0, "accepting": True,
                                            "rate_limited": [], "rate_limited_clients": 0})
        assert fake_github.count("POST", r"^/graphql$") >= 1
    finally:
        await bot.session.close()
        await runner.cleanup()


async def _start(config: Settings, pool_factory: Any) -> tuple[Bot, Any]:
    from aiohttp import web
    app = create_app(config, router, pool_factory=pool_factory)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return Bot(f"http://127.0.0.1:{port}", app, aiohttp.ClientSession()), runner


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    level, formatters = root.level, [(h, h.formatter) for h in root.handlers]
    yield
    root.setLevel(level)
    for handler, formatter in formatters:
        handler.setFormatter(formatter)


async def test_json_log_lines_carry_the_delivery_and_the_github_call(
        fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture, restore_logging: None) -> None:
    world = sglang_world(fake_github, runs=2)
    run = world.runs[-1]
    number = run["pull_requests"][0]["number"]
    with caplog.at_level(logging.DEBUG):
        bot, runner = await start_bot(fake_github, log_format="json", log_level="DEBUG")
        try:
            fake_github.fail_next(1, 502, path=rf"/pulls/{number}/files$")
            status, _ = await bot.deliver("workflow_run", world.payload(run["id"]), delivery="d-json")
            await bot.settle()
        finally:
            await bot.session.close()
            await runner.cleanup()
    assert status == 202
    handler = caplog.handler
    lines = [json.loads(handler.format(record)) for record in caplog.records]
    retry = [line for line in lines if line["logger"] == "foldbot.github" and line["level"] == "warning"]
    assert len(retry) == 1
    assert {k: retry[0][k] for k in ("delivery", "repository", "event", "method", "path", "status", "attempt")} == {
        "delivery": "d-json", "repository": "sgl-project/sglang", "event": "workflow_run", "method": "GET",
        "path": f"/repos/sgl-project/sglang/pulls/{number}/files", "status": 502, "attempt": 1}
    calls = [line for line in lines if line["logger"] == "foldbot.github" and line["level"] == "debug"
             and line["path"].startswith("/repos/")]
    assert len(calls) > 10 and all(line["delivery"] == "d-json" and isinstance(line["status"], int) for line in calls)
    assert {"method", "path", "status", "attempt", "time", "message"} <= set(calls[0])
    report = [line for line in lines if "report comment" in line["message"]]
    assert report and report[0]["delivery"] == "d-json" and report[0]["level"] == "info"


async def test_retry_lines_name_their_delivery_and_no_token_is_logged(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    world = sglang_world(fake_github, runs=2)
    run = world.runs[-1]
    with caplog.at_level(logging.DEBUG):
        fake_github.fail_next(2, 502, path=r"/pulls/\d+/files$")
        fake_github.expire_tokens()
        await bot.deliver("workflow_run", world.payload(run["id"]), delivery="d-text")
        await bot.settle()
    retries = [r.getMessage() for r in caplog.records if r.name == "foldbot.github" and r.levelno == logging.WARNING]
    assert len(retries) == 2 and all(m.endswith("(delivery d-text)") for m in retries)
    secrets = {h.split(" ", 1)[1] for r in fake_github.request_log for k, h in r.headers.items() if k == "authorization"}
    secrets.add(fake_github.private_key_pem.splitlines()[1])
    assert len(secrets) >= 3  # the JWTs, the installation token(s), a line of the key
    text = caplog.text + "\n".join(caplog.messages) + capsys.readouterr().err
    assert [s for s in secrets if s in text] == []
    assert not re.search(r"gh[spu]_|Bearer |token [A-Za-z0-9]", text)


def test_the_log_format_and_data_settings_come_from_the_environment() -> None:
    from bot.settings import SettingsError
    base = {"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t"}
    settings = Settings.from_env({**base, "FOLDBOT_LOG_FORMAT": "JSON", "FOLDBOT_DATA_DIR": "/var/lib/foldbot"})
    assert (settings.log_format, settings.log_level, str(settings.data_dir)) == ("json", "INFO", "/var/lib/foldbot")
    assert Settings.from_env(base).log_format == "text" and str(Settings.from_env(base).data_dir) == "data"
    with pytest.raises(SettingsError, match="FOLDBOT_LOG_FORMAT must be one of text, json, not 'xml'"):
        Settings.from_env({**base, "FOLDBOT_LOG_FORMAT": "xml"})


async def test_a_rotated_webhook_secret_accepts_the_previous_one_until_it_is_removed(
        fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    """Rotating the secret: foldbot gets the new one with the old as GITHUB_WEBHOOK_SECRET_PREVIOUS, then
    the App's setting changes. A delivery GitHub signed with either is processed; one signed with neither
    is refused; the deliveries still signed with the old one are counted, and said once."""
    world = sglang_world(fake_github, runs=2)
    running, runner = await start_bot(fake_github, previous_webhook_secret="the old secret")
    old = json.dumps(world.payload(world.runs[-1]["id"])).encode()
    headers = {"X-GitHub-Event": "workflow_run", "Content-Type": "application/json"}
    try:
        with caplog.at_level(logging.INFO, logger="foldbot"):
            for delivery in ("rotating-1", "rotating-2"):
                status, answer = await running.post(old, {**headers, "X-GitHub-Delivery": delivery,
                                                          "X-Hub-Signature-256": sign(old, "the old secret")})
                assert (status, answer) == (202, {"queued": delivery})
            status, _ = await running.post(old, {**headers, "X-GitHub-Delivery": "guessed",
                                                 "X-Hub-Signature-256": sign(old, "a guess")})
            assert status == 401
            await running.settle()
        assert [i.title for i in world.repo.issues.values() if not i.is_pull] == [DASHBOARD_TITLE]
        text = await _metrics(running)
        assert "foldbot_previous_secret_deliveries_total 2.0" in text.splitlines()
        assert 'foldbot_deliveries_total{event="unknown",outcome="bad_signature"} 1.0' in text
        said = [r.getMessage() for r in caplog.records if "GITHUB_WEBHOOK_SECRET_PREVIOUS" in r.getMessage()]
        assert said == ["a delivery is signed with GITHUB_WEBHOOK_SECRET_PREVIOUS: GitHub still has the previous "
                        "secret (foldbot_previous_secret_deliveries_total counts them; remove the variable once it "
                        "stops growing)"]
    finally:
        await running.session.close()
        await runner.cleanup()
    plain, runner = await start_bot(fake_github)  # the variable removed: the old secret is refused
    try:
        status, _ = await plain.post(old, {**headers, "X-GitHub-Delivery": "late",
                                           "X-Hub-Signature-256": sign(old, "the old secret")})
        assert status == 401
    finally:
        await plain.session.close()
        await runner.cleanup()


def test_the_previous_webhook_secret_comes_from_the_environment() -> None:
    base = {"GITHUB_WEBHOOK_SECRET": "new", "GITHUB_TOKEN": "t"}
    assert Settings.from_env(base).previous_webhook_secret is None
    assert Settings.from_env({**base, "GITHUB_WEBHOOK_SECRET_PREVIOUS": "old"}).previous_webhook_secret == "old"
