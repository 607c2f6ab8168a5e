"""`foldbot register`, run as a person runs it: the CLI in a process of its own, an aiohttp
client standing in for the browser (it fetches the local page, posts its form to the fake
GitHub's "new App" page and follows the redirect back), and the fake exchanging the code."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
import jwt
import pytest

from bot.register import (
    READ_ONLY_PERMISSIONS,
    RegisterError,
    check_url,
    github_urls,
    manifest,
    new_app_url,
)
from tests.fakegithub import FakeGitHub
from tests.paths import ROOT

FULL_PERMISSIONS = {"actions": "write", "contents": "write", "workflows": "write", "pull_requests": "write",
                    "issues": "write", "metadata": "read"}


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.method = ""
        self.fields: dict[str, str] = {}
        self.autosubmit = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.action, self.method = a.get("action") or "", (a.get("method") or "").lower()
        elif tag == "input" and a.get("name"):
            self.fields[str(a["name"])] = a.get("value") or ""

    def handle_data(self, data: str) -> None:
        if ".submit()" in data:
            self.autosubmit = True


class Cli:
    """`python -m bot register ...` with its output read as it comes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[str] = []

    async def local_page(self) -> str:
        assert self.process.stdout is not None
        while True:
            line = (await asyncio.wait_for(self.process.stdout.readline(), 30)).decode()
            assert line, f"the command ended early: {self.lines}"
            self.lines.append(line)
            found = re.search(r"Open (http://127\.0\.0\.1:\d+/) in a browser", line)
            if found:
                return found.group(1)

    async def finish(self) -> tuple[int, str, str]:
        out, err = await asyncio.wait_for(self.process.communicate(), 60)
        return int(self.process.returncode or 0), "".join(self.lines) + out.decode(), err.decode()


async def start(fake: FakeGitHub, *args: str) -> Cli:
    env = {**os.environ, "GITHUB_URL": fake.base_url, "GITHUB_API_URL": fake.base_url}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "register", *args, cwd=ROOT, env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    return Cli(process)


async def browse_to_github(session: aiohttp.ClientSession, local: str) -> tuple[_Form, aiohttp.ClientResponse]:
    """Open the local page and post its form (as its script does): GitHub's answer, not followed."""
    async with session.get(local) as response:
        assert response.status == 200 and response.content_type == "text/html"
        form = _Form()
        form.feed(await response.text())
    assert form.method == "post" and form.autosubmit and set(form.fields) == {"manifest"}
    response = await session.post(form.action, data=form.fields, allow_redirects=False)
    return form, response


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_register_end_to_end(fake_github: FakeGitHub, tmp_path: Path) -> None:
    out = tmp_path / "creds"
    cli = await start(fake_github, "--url", "https://foldbot.example.org/", "--out", str(out))
    local = await cli.local_page()
    async with aiohttp.ClientSession() as browser:
        form, answer = await browse_to_github(browser, local)
        # the form goes to the person's "new App" page with a random state in its query
        action = re.fullmatch(re.escape(fake_github.base_url) + r"/settings/apps/new\?state=([\w-]+)", form.action)
        assert action is not None and len(action.group(1)) >= 32
        sent = json.loads(form.fields["manifest"])
        assert sent["url"] == "https://foldbot.example.org"
        assert sent["hook_attributes"] == {"url": "https://foldbot.example.org/webhook", "active": True}
        assert sent["redirect_url"] == f"{local}callback"
        assert sent["default_permissions"] == FULL_PERMISSIONS
        assert sent["default_events"] == ["workflow_run", "issue_comment", "pull_request"]
        assert answer.status == 302
        location = answer.headers["Location"]
        assert location.startswith(f"{local}callback?code=") and location.endswith(f"&state={action.group(1)}")
        async with browser.get(location) as back:
            assert back.status == 200
            assert "https://github.com/apps/foldbot/installations/new" in await back.text()
    code, stdout, err = await cli.finish()
    assert code == 0, err
    assert err == ""
    key, env = out / "foldbot.pem", out / "foldbot.env"
    assert sorted(p.name for p in out.iterdir()) == ["foldbot.env", "foldbot.pem"]
    assert mode(key) == 0o600 and mode(env) == 0o600
    assert key.read_text().startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    registration = fake_github.manifest_registrations[0]
    assert registration.converted and registration.org is None
    lines = env.read_text().splitlines()
    assert lines[0] == "# foldbot: the GitHub App foldbot (https://github.com/apps/foldbot)"
    assert lines[1:3] == [f"GITHUB_APP_ID={fake_github.app_id}", f"GITHUB_PRIVATE_KEY_PATH={key.resolve()}"]
    assert re.fullmatch(r"GITHUB_WEBHOOK_SECRET=[0-9a-f]{40}", lines[3])
    assert lines[4:] == [f"GITHUB_API_URL={fake_github.base_url}"]  # not api.github.com: kept for `serve`
    assert stdout.splitlines()[1:] == [
        f"Registered the GitHub App foldbot (id {fake_github.app_id}): https://github.com/apps/foldbot",
        f"Wrote {key.resolve()} (its private key) and {env} (mode 600).",
        "Install it on your repositories: https://github.com/apps/foldbot/installations/new",
        f"Then run it: set -a; . {env}; set +a; foldbot serve",
    ]
    # the key written is the App's: a JWT signed with it is accepted as the App
    now = int(time.time())
    token = jwt.encode({"iat": now - 30, "exp": now + 300, "iss": str(fake_github.app_id)}, key.read_text(), "RS256")
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{fake_github.base_url}/app", headers={"Authorization": f"Bearer {token}"}) as app:
            assert app.status == 200 and (await app.json())["id"] == fake_github.app_id
    # and the env file is what `foldbot serve` reads
    from bot.settings import Settings

    settings = Settings.from_env(dict(line.split("=", 1) for line in lines[1:]))
    assert settings.api_url == fake_github.base_url


async def test_register_read_only_for_an_organization(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.user("rocm-org", "Organization")
    cli = await start(fake_github, "--url", "https://ci.rocm-org.dev", "--org", "rocm-org", "--read-only",
                      "--name", "foldbot for rocm-org", "--out", str(tmp_path))
    local = await cli.local_page()
    assert cli.lines[0].startswith("The manifest is read-only: foldbot reads runs, logs and lane files")
    async with aiohttp.ClientSession() as browser:
        form, answer = await browse_to_github(browser, local)
        assert form.action.startswith(f"{fake_github.base_url}/organizations/rocm-org/settings/apps/new?state=")
        sent = json.loads(form.fields["manifest"])
        assert sent["default_permissions"] == READ_ONLY_PERMISSIONS == {
            "actions": "read", "contents": "read", "pull_requests": "write", "issues": "write", "metadata": "read"}
        assert sent["name"] == "foldbot for rocm-org" and sent["description"].startswith("Report only. ")
        async with browser.get(answer.headers["Location"]) as back:
            assert back.status == 200
    code, stdout, err = await cli.finish()
    assert code == 0, err
    assert fake_github.manifest_registrations[0].org == "rocm-org"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foldbot-for-rocm-org.pem", "foldbot.env"]
    assert "Install it on your repositories: https://github.com/apps/foldbot-for-rocm-org/installations/new" in stdout


async def test_a_wrong_state_writes_nothing(fake_github: FakeGitHub, tmp_path: Path) -> None:
    cli = await start(fake_github, "--url", "https://foldbot.example.org", "--out", str(tmp_path / "creds"))
    local = await cli.local_page()
    async with aiohttp.ClientSession() as browser:
        _, answer = await browse_to_github(browser, local)
        forged = re.sub(r"state=[\w-]+", "state=forged", answer.headers["Location"])
        async with browser.get(forged) as back:
            assert back.status == 400
    code, _, err = await cli.finish()
    assert code == 2
    assert err == ("foldbot: error: the answer's state does not match this registration's (a stale or forged "
                   "redirect): nothing was written: run foldbot register again\n")
    assert not (tmp_path / "creds").exists()
    assert fake_github.count("POST", r"^/app-manifests/") == 0  # the code was not spent


async def test_a_used_code_is_a_clear_error(fake_github: FakeGitHub, tmp_path: Path) -> None:
    cli = await start(fake_github, "--url", "https://foldbot.example.org", "--out", str(tmp_path / "creds"))
    local = await cli.local_page()
    async with aiohttp.ClientSession() as browser:
        _, answer = await browse_to_github(browser, local)
        code = re.search(r"code=(\w+)", answer.headers["Location"])
        assert code is not None
        async with browser.post(f"{fake_github.base_url}/app-manifests/{code.group(1)}/conversions") as spent:
            assert spent.status == 201  # someone else exchanged it first
        async with browser.get(answer.headers["Location"]) as back:
            assert back.status == 502
    status, _, err = await cli.finish()
    assert status == 2
    assert err == ("foldbot: error: GitHub does not know this code (404): it is valid for one hour and only once, "
                   "so it expired or was already used; nothing was written: run foldbot register again\n")
    assert not (tmp_path / "creds").exists()


async def test_an_expired_code_is_refused_by_the_fake(fake_github: FakeGitHub) -> None:
    fake_github.manifest_code_lifetime = 0
    form = {"manifest": json.dumps(manifest("https://x.example", "http://127.0.0.1:9/callback"))}
    async with aiohttp.ClientSession() as browser:
        async with browser.post(f"{fake_github.base_url}/settings/apps/new?state=s", data=form,
                                allow_redirects=False) as answer:
            assert answer.status == 302
            code = re.search(r"code=(\w+)&state=s$", answer.headers["Location"])
        assert code is not None
        async with browser.post(f"{fake_github.base_url}/app-manifests/{code.group(1)}/conversions") as expired:
            assert expired.status == 404 and (await expired.json())["message"] == "Not Found"
        async with browser.post(f"{fake_github.base_url}/settings/apps/new", data={"manifest": "{}"},
                                allow_redirects=False) as invalid:
            assert invalid.status == 422


async def test_no_answer_in_time_writes_nothing(fake_github: FakeGitHub, tmp_path: Path) -> None:
    cli = await start(fake_github, "--url", "https://foldbot.example.org", "--out", str(tmp_path / "c"),
                      "--timeout", "0.5")
    await cli.local_page()
    code, _, err = await cli.finish()
    assert code == 2
    assert err == ("foldbot: error: no answer from GitHub within 0.5 s: nothing was written; run foldbot register "
                   "again (and open the page it prints)\n")
    assert not (tmp_path / "c").exists()


async def test_a_real_browser_completes_the_flow(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """Headless Chromium opens the page: its script posts the form, follows GitHub's redirect back.
    (`make test` installs Debian's chromium; without it this is skipped, and fails under CI.)"""
    if shutil.which("chromium") is None:
        message = "no chromium on PATH (Debian's chromium package; `make test` installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + ": the real-browser test must run in CI")
        pytest.skip(message)
    cli = await start(fake_github, "--url", "https://foldbot.example.org", "--out", str(tmp_path))
    local = await cli.local_page()
    browser = await asyncio.create_subprocess_exec("chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                                   f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", local,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    dom, _ = await asyncio.wait_for(browser.communicate(), 90)
    assert "<h1>foldbot is registered as foldbot</h1>" in dom.decode()
    code, stdout, err = await cli.finish()
    assert code == 0, err
    assert "Install it on your repositories: https://github.com/apps/foldbot/installations/new" in stdout
    assert [(r.method, r.status) for r in fake_github.requests] == [("POST", 302), ("POST", 201)]
    assert mode(tmp_path / "foldbot.pem") == mode(tmp_path / "foldbot.env") == 0o600


def test_foldbot_manifest_still_prints_app_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.__main__ import main

    assert main(["manifest", "--url", "https://foldbot.example.com"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["hook_attributes"]["url"] == "https://foldbot.example.com/webhook"
    assert printed["default_permissions"] == FULL_PERMISSIONS


@pytest.mark.parametrize("url", ["foldbot.example.com", "http://foldbot.example.com", "ftp://foldbot.example.com",
                                 "https://", "https://foldbot.example.com/?x=1", ""])
def test_a_url_without_https_is_refused(url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from bot.__main__ import main

    assert main(["register", "--url", url, "--out", str(tmp_path / "c")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"foldbot: error: --url must be the https:// address GitHub will send webhooks to "
                            f"(or http://localhost:PORT for a local test), not {url!r}\n")
    assert not (tmp_path / "c").exists()


def test_the_urls_accepted() -> None:
    assert check_url("https://foldbot.example.com/") == "https://foldbot.example.com"
    assert check_url("https://example.com/foldbot") == "https://example.com/foldbot"
    assert check_url("http://localhost:8080") == "http://localhost:8080"
    assert check_url("http://127.0.0.1:3000/") == "http://127.0.0.1:3000"
    with pytest.raises(RegisterError):
        check_url("http://localhost.evil.example")
    assert new_app_url("https://github.com", None, "abc") == "https://github.com/settings/apps/new?state=abc"
    assert (new_app_url("https://ghe.example.com/", "my org", "abc")
            == "https://ghe.example.com/organizations/my%20org/settings/apps/new?state=abc")


def test_github_and_its_api() -> None:
    assert github_urls({}) == ("https://github.com", "https://api.github.com")
    assert github_urls({"GITHUB_URL": "https://ghe.example.com/"}) == ("https://ghe.example.com",
                                                                       "https://ghe.example.com/api/v3")
    assert github_urls({"GITHUB_URL": "https://ghe.example.com", "GITHUB_API_URL": "https://api.ghe.example.com/"}) == (
        "https://ghe.example.com", "https://api.ghe.example.com")


def test_an_existing_env_file_is_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.__main__ import main

    (tmp_path / "foldbot.env").write_text("GITHUB_APP_ID=1\n")
    assert main(["register", "--url", "https://foldbot.example.com", "--out", str(tmp_path), "--timeout", "0.1"]) == 2
    assert "foldbot.env already exists" in capsys.readouterr().err
    assert (tmp_path / "foldbot.env").read_text() == "GITHUB_APP_ID=1\n"
