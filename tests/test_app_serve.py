"""`foldbot serve` as a process, settings from the environment, and the GitHub client's
token handling against the fake GitHub."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys

import aiohttp
import pytest

from bot.settings import Settings, SettingsError
from tests.paths import ROOT
from tests.fakegithub import FakeGitHub
from tests.harness import SECRET, app_pool, free_port, sign


def test_serve_refuses_to_start_without_a_secret() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "foldbot: error: GITHUB_WEBHOOK_SECRET is required: foldbot refuses unsigned webhooks"


async def test_serve_answers_health_and_a_signed_ping(fake_github: FakeGitHub, tmp_path) -> None:  # noqa: ANN001
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
           "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_APP_ID": str(fake_github.app_id),
           "GITHUB_PRIVATE_KEY": fake_github.private_key_pem, "GITHUB_API_URL": fake_github.base_url,
           "PORT": str(port), "HOST": "127.0.0.1", "FOLDBOT_DATA_DIR": str(tmp_path / "data")}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "serve", env=env, cwd=str(ROOT),
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        async with aiohttp.ClientSession() as session:
            health: dict = {}
            for _ in range(100):  # until its worker has started (`/health` says "is starting" meanwhile)
                try:
                    async with session.get(f"http://127.0.0.1:{port}/health") as response:
                        health = await response.json()
                except aiohttp.ClientConnectionError:  # not listening yet
                    health = {}
                if health.get("ok"):
                    break
                assert not health or health["reason"].endswith(" is starting"), health
                await asyncio.sleep(0.1)
            else:
                pytest.fail(f"foldbot serve did not start: {health}")
            assert health["ok"] is True
            body = json.dumps({"zen": "Design for failure.", "hook_id": 7}).encode()
            async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers={
                    "X-GitHub-Event": "ping", "X-GitHub-Delivery": "p", "X-Hub-Signature-256": sign(body)}) as response:
                assert response.status == 200
    finally:
        process.terminate()
        output, _ = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0, output.decode()


@pytest.mark.parametrize("env,message", [
    ({}, "GITHUB_WEBHOOK_SECRET is required"),
    ({"GITHUB_WEBHOOK_SECRET": "s"}, "set GITHUB_APP_ID and GITHUB_PRIVATE_KEY"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "x", "GITHUB_PRIVATE_KEY": "k"}, "numeric id"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": "/nope"}, "cannot read /nope"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "PORT": "http"}, "PORT must be a whole number"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "FOLDBOT_DRAIN_SECONDS": "0"},
     "FOLDBOT_DRAIN_SECONDS must be a whole number from 1 to 3600, not '0'"),
    # each of these was a traceback at start (`int` reads `²`), or, for the database, a silent database 0
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "PORT": "80²"}, "PORT must be a whole number from 1 to 65535"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "4242²", "GITHUB_PRIVATE_KEY": "k"}, "numeric id, not '4242²'"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "FOLDBOT_REDIS_URL": "redis.internal:6379/0"},
     "FOLDBOT_REDIS_URL must be redis://[user:password@]host[:port][/db], rediss://... or unix://path: it starts with "
     "none of those (it is not echoed: it may hold a password)"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "FOLDBOT_REDIS_URL": "redis://:pw@127.0.0.1:63790x/0"},
     "host[:port][/db], rediss://... or unix://path: its port is not a number"),
    ({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "FOLDBOT_REDIS_URL": "redis://127.0.0.1:6379/abc"},
     "its database is a number, not 'abc'"),
])
def test_settings_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env(env)
    assert message in str(error.value)


def test_a_der_key_file_is_one_error_line(tmp_path) -> None:  # noqa: ANN001
    key = tmp_path / "key.der"
    key.write_bytes(b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00\xc3")
    with pytest.raises(SettingsError) as error:
        Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": str(key)})
    assert str(error.value) == (f"GITHUB_PRIVATE_KEY_PATH: {key} is not text: the App's key is the PEM file GitHub "
                                "gives (a DER key converts with `openssl pkey -inform DER -in KEY -out key.pem`)")


@pytest.mark.parametrize("host,taken,message", [
    ("127.0.0.1", True, "Address already in use"),
    ("no.such.host.invalid", False, "Name or service not known"),
])
def test_serve_that_cannot_listen_is_one_error_line_before_anything_starts(tmp_path, host: str, taken: bool,  # noqa: ANN001
                                                                           message: str) -> None:
    """A port in use, a host that does not resolve: a traceback at the end of the start, after the
    worker process had started; now one line, first."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1] if taken else free_port()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FOLDBOT_"))},
               "GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "GITHUB_API_URL": "http://127.0.0.1:9",
               "HOST": host, "PORT": str(port), "FOLDBOT_DATA_DIR": str(tmp_path / "data")}
        result = subprocess.run([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"foldbot: error: cannot listen on {host}:{port} (HOST, PORT): ")
    assert message in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "data").exists()  # (nothing started: no journal, no worker process)


async def test_a_started_serve_is_taken_for_foldbot_only_by_its_own_health(fake_github: FakeGitHub,
                                                                           tmp_path) -> None:  # noqa: ANN001
    """The tests' `serve_process` waited for anything to answer on the port; another test's server
    that held it was taken for foldbot (a POST answered 404 there, once). Now a `serve` that could not
    listen is a failure that says why, and the process is gone."""
    from aiohttp import web

    from tests.harness import serve_process
    port = free_port()
    async def not_found(request: web.Request) -> web.Response:
        return web.Response(status=404)

    other = web.Application()
    other.router.add_get("/health", not_found)
    runner = web.AppRunner(other)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        with pytest.raises(pytest.fail.Exception, match=r"did not start: .*cannot listen on 127\.0\.0\.1:"):
            await serve_process(fake_github, tmp_path / "data", port, healthy=False)
    finally:
        await runner.cleanup()


def test_settings_with_a_token() -> None:
    settings = Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t", "GITHUB_API_URL": "http://x/"})
    assert (settings.token, settings.api_url, settings.port, settings.drain_seconds) == ("t", "http://x", 8080, 25.0)
    assert Settings.from_env({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_TOKEN": "t",
                              "FOLDBOT_DRAIN_SECONDS": "8"}).drain_seconds == 8.0


async def test_find_reads_no_page_past_the_match_or_the_limit(fake_github: FakeGitHub) -> None:
    repo = fake_github.add_repo("o", "r")
    repo.put_files("main", {"README.md": "hi\n"})
    fake_github.add_installation(5, [repo])
    for i in range(5):
        fake_github.add_pull(repo, head_ref=f"b{i}", head_sha=f"{i:040x}", files=["README.md"])
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        gh = pool.for_installation(5)
        url = "/repos/o/r/pulls?state=open&sort=created&direction=asc&per_page=2"

        def head(n: int):  # noqa: ANN202
            return lambda pull: pull["head"]["sha"] == f"{n:040x}"

        pages = lambda: fake_github.count("GET", r"/pulls$")  # noqa: E731
        assert (await gh.find(url, head(2)))["head"]["ref"] == "b2" and pages() == 2
        assert await gh.find(url, head(4), limit=3) is None and pages() == 4  # two pages: 3 items seen
        assert (await gh.find(url, head(4)))["head"]["ref"] == "b4" and pages() == 7
        assert await gh.find(url, head(9)) is None and pages() == 10


async def test_installation_tokens_are_cached_and_refreshed_after_a_401(fake_github: FakeGitHub) -> None:
    repo = fake_github.add_repo("o", "r")
    repo.put_files("main", {"README.md": "hi\n"})
    fake_github.add_installation(5, [repo])
    async with aiohttp.ClientSession() as session:
        pool = app_pool(fake_github, session)
        gh = pool.for_installation(5)
        for _ in range(3):
            assert (await gh.get("/repos/o/r"))["full_name"] == "o/r"
        assert fake_github.count("POST", r"/access_tokens$") == 1
        fake_github.expire_tokens()
        assert (await gh.get("/repos/o/r"))["full_name"] == "o/r"  # 401, a new token, the call again
        assert fake_github.count("POST", r"/access_tokens$") == 2
        assert await pool.bot_login() == "foldbot[bot]"
        # a conditional request: the second read of unchanged data is a 304
        await gh.get("/repos/o/r/contents/README.md")
        await gh.get("/repos/o/r/contents/README.md")
        assert [r.status for r in fake_github.requests if r.path.endswith("README.md")] == [200, 304]


async def test_the_manifest_redirect_route_is_answered(fake_github, bot) -> None:  # noqa: ANN001
    """`foldbot manifest` sends GitHub's browser back to `/` with a one-hour code: the page
    says how to exchange it; `/` alone says what the server is."""
    async with bot.session.get(f"{bot.url}/?code=abc123&state=x") as response:
        text = await response.text()
    assert response.status == 200 and f"{fake_github.base_url}/app-manifests/abc123/conversions" in text
    async with bot.session.get(f"{bot.url}/?code=<script>") as response:
        text = await response.text()
    assert response.status == 200 and "<script>" not in text and "webhook server" in text
