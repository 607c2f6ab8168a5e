"""`foldbot register`: GitHub's App manifest flow, from a terminal to a key file.

A one-shot page on 127.0.0.1 posts foldbot's manifest (`app.yaml`, or its read-only
variant) to GitHub's "new App" form with a random `state`; the manifest's `redirect_url`
is this page's `/callback`, where GitHub sends the browser back with `?code=...&state=...`.
The state is checked, the code (valid one hour, once) is exchanged through
`POST {GITHUB_API_URL}/app-manifests/{code}/conversions`, and the App's private key and an
env file (GITHUB_APP_ID, GITHUB_PRIVATE_KEY_PATH, GITHUB_WEBHOOK_SECRET) are written,
mode 0600. Any failure (a wrong state, a code GitHub no longer knows, no answer in time)
writes nothing.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import secrets
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
import yaml
from aiohttp import web

DEFAULT_GITHUB_URL = "https://github.com"
DEFAULT_API_URL = "https://api.github.com"
ENV_FILE = "foldbot.env"
CALLBACK = "/callback"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
# What the read-only App may do: read runs, jobs, logs and lane files; write its reports.
READ_ONLY_PERMISSIONS = {"actions": "read", "contents": "read", "pull_requests": "write", "issues": "write",
                         "metadata": "read"}
READ_ONLY_NOTE = ("read-only: foldbot reads runs, logs and lane files and writes its reports (dashboard issue, "
                  "PR comments); it cannot /dispatch runs nor commit an approved patch (/fold approve)")


class RegisterError(Exception):
    """The registration cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class Registered:
    app_id: int
    slug: str
    name: str
    html_url: str
    key_path: Path
    env_path: Path

    @property
    def install_url(self) -> str:
        return f"{self.html_url}/installations/new"


def check_url(url: str | None) -> str:
    """The public base URL foldbot will serve at: https://, or http:// on this machine only."""
    parts = urlsplit(url or "")
    local = parts.scheme == "http" and parts.hostname in LOCAL_HOSTS
    if not (parts.scheme == "https" or local) or not parts.hostname or parts.query or parts.fragment:
        raise RegisterError(f"--url must be the https:// address GitHub will send webhooks to "
                            f"(or http://localhost:PORT for a local test), not {url!r}")
    return (url or "").rstrip("/")


def github_urls(env: Mapping[str, str]) -> tuple[str, str]:
    """GitHub's web address (`GITHUB_URL`) and its API's (`GITHUB_API_URL`): github.com's, or a GitHub
    Enterprise Server's, whose API is under /api/v3 of its own address unless said otherwise."""
    github_url = (env.get("GITHUB_URL") or DEFAULT_GITHUB_URL).rstrip("/")
    default_api = DEFAULT_API_URL if github_url == DEFAULT_GITHUB_URL else f"{github_url}/api/v3"
    return github_url, (env.get("GITHUB_API_URL") or default_api).rstrip("/")


def app_manifest_path() -> Path:
    return Path(__file__).resolve().parent.parent / "app.yaml"


def manifest(base_url: str, redirect_url: str, *, read_only: bool = False, name: str | None = None) -> dict[str, Any]:
    """`app.yaml` for an App served at `base_url`, sending the browser back to `redirect_url`."""
    source = app_manifest_path()
    if not source.is_file():
        raise RegisterError(f"{source}: the App manifest is not there (run foldbot from its checkout)")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["url"] = base_url
    data["hook_attributes"] = {**data.get("hook_attributes", {}), "url": f"{base_url}/webhook"}
    data["redirect_url"] = redirect_url
    if name:
        data["name"] = name
    if read_only:
        data["default_permissions"] = dict(READ_ONLY_PERMISSIONS)
        data["description"] = f"Report only. {data.get('description', '')}".strip()
    return data


def new_app_url(github_url: str, org: str | None, state: str) -> str:
    """GitHub's form that registers an App from a manifest, for a person or an organization."""
    base = github_url.rstrip("/")
    where = f"/organizations/{quote(org, safe='')}/settings/apps/new" if org else "/settings/apps/new"
    return f"{base}{where}?{urlencode({'state': state})}"


def page(action: str, manifest_json: str) -> str:
    """The local page: a form that posts itself to GitHub (a button when scripts are off)."""
    return (
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Register foldbot</title></head>\n<body>\n"
        f"<form id=\"manifest-form\" method=\"post\" action=\"{html.escape(action)}\">\n"
        f"<input type=\"hidden\" name=\"manifest\" value=\"{html.escape(manifest_json)}\">\n"
        "<p>Sending foldbot's App manifest to GitHub...</p>\n"
        "<button type=\"submit\">Continue to GitHub</button>\n</form>\n"
        "<script>document.getElementById(\"manifest-form\").submit();</script>\n</body></html>\n"
    )


def _answer(title: str, text: str, status: int = 200, link: str | None = None) -> web.Response:
    more = f"<p><a href=\"{html.escape(link)}\">{html.escape(link)}</a></p>" if link else ""
    body = (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>\n"
            f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{more}</body></html>\n")
    return web.Response(status=status, text=body, content_type="text/html")


async def convert(api_url: str, code: str) -> dict[str, Any]:
    """`POST /app-manifests/{code}/conversions` (no authentication): the new App's credentials."""
    url = f"{api_url.rstrip('/')}/app-manifests/{quote(code, safe='')}/conversions"
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "foldbot"}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
            async with session.post(url, headers=headers) as response:
                status = response.status
                try:
                    data = await response.json(content_type=None)
                except (ValueError, aiohttp.ContentTypeError):
                    data = None
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise RegisterError(f"could not reach {api_url} to exchange GitHub's code: {exc or type(exc).__name__}; "
                            "nothing was written") from None
    message = data.get("message") if isinstance(data, dict) else None
    if status == 404:
        raise RegisterError("GitHub does not know this code (404): it is valid for one hour and only once, so it "
                            "expired or was already used; nothing was written: run foldbot register again")
    if status != 201 or not isinstance(data, dict):
        raise RegisterError(f"GitHub answered {status} to the code exchange" + (f" ({message})" if message else "")
                            + "; nothing was written")
    slug = data.get("slug")
    lacking = [k for k in ("id", "slug", "pem", "webhook_secret", "html_url") if not data.get(k)]
    if lacking or not isinstance(data["id"], int) or not isinstance(slug, str) or not re.fullmatch(r"[a-z0-9-]+", slug):
        raise RegisterError(f"GitHub's answer to the code exchange lacks {', '.join(lacking) or 'a usable id or slug'}; "
                            "nothing was written")
    return data


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, mode 0600 whatever the umask, in one rename."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _env_value(value: str) -> str:
    return value if re.fullmatch(r"[A-Za-z0-9_./:@+-]+", value) else shlex.quote(value)


def write_credentials(out: Path, app: dict[str, Any], api_url: str) -> Registered:
    """DIR/<slug>.pem and DIR/foldbot.env, both 0600."""
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    key_path = (out / f"{app['slug']}.pem").resolve()
    env_path = (out / ENV_FILE).resolve()
    pem = str(app["pem"])
    _write_private(key_path, pem if pem.endswith("\n") else pem + "\n")
    lines = [
        f"# foldbot: the GitHub App {app.get('name') or app['slug']} ({app['html_url']})",
        f"GITHUB_APP_ID={int(app['id'])}",
        f"GITHUB_PRIVATE_KEY_PATH={_env_value(str(key_path))}",
        f"GITHUB_WEBHOOK_SECRET={_env_value(str(app['webhook_secret']))}",
    ]
    if api_url.rstrip("/") != DEFAULT_API_URL:
        lines.append(f"GITHUB_API_URL={_env_value(api_url.rstrip('/'))}")
    _write_private(env_path, "\n".join(lines) + "\n")
    return Registered(int(app["id"]), str(app["slug"]), str(app.get("name") or app["slug"]), str(app["html_url"]),
                      key_path, env_path)


async def register(*, url: str, out: Path, org: str | None = None, read_only: bool = False, name: str | None = None,
                   port: int = 0, timeout: float = 900.0, github_url: str = DEFAULT_GITHUB_URL,
                   api_url: str = DEFAULT_API_URL, say: Callable[[str], None] = print) -> Registered:
    """Serve the page, wait for GitHub's redirect, exchange the code, write the files."""
    base = check_url(url)
    if (out / ENV_FILE).exists():
        raise RegisterError(f"{out / ENV_FILE} already exists (an App registered before?): "
                            "pass another --out, or move it away first")
    if out.exists() and not out.is_dir():
        raise RegisterError(f"--out {out}: not a directory")
    state = secrets.token_urlsafe(24)
    done: asyncio.Future[Registered] = asyncio.get_running_loop().create_future()
    form: dict[str, str] = {}

    async def index(request: web.Request) -> web.Response:
        return web.Response(text=page(form["action"], form["manifest"]), content_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    async def callback(request: web.Request) -> web.Response:
        if done.done():
            return _answer("Already done", "This registration has finished; run foldbot register again for another.", 410)
        if not secrets.compare_digest(request.query.get("state", ""), state):
            done.set_exception(RegisterError(
                "the answer's state does not match this registration's (a stale or forged redirect): "
                "nothing was written: run foldbot register again"))
            return _answer("Refused", "The state does not match this registration: nothing was written.", 400)
        code = request.query.get("code", "")
        if not code:
            done.set_exception(RegisterError("GitHub's redirect carried no code: nothing was written"))
            return _answer("Refused", "GitHub's redirect carried no code: nothing was written.", 400)
        try:
            registered = write_credentials(out, await convert(api_url, code), api_url)
        except (RegisterError, OSError) as exc:
            error = exc if isinstance(exc, RegisterError) else RegisterError(f"cannot write to {out}: {exc}")
            done.set_exception(error)
            return _answer("Registration failed", str(error), 502)
        done.set_result(registered)
        return _answer(f"foldbot is registered as {registered.name}",
                       "Install it on your repositories (the terminal says what comes next):", 200,
                       registered.install_url)

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get(CALLBACK, callback)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", port)
        try:
            await site.start()
        except OSError as exc:
            raise RegisterError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        bound = runner.addresses[0][1]
        local = f"http://127.0.0.1:{bound}"
        form["action"] = new_app_url(github_url, org, state)
        form["manifest"] = json.dumps(manifest(base, f"{local}{CALLBACK}", read_only=read_only, name=name))
        if read_only:
            say(f"The manifest is {READ_ONLY_NOTE}.")
        owner = f"the organization {org}" if org else "your account"
        say(f"Open {local}/ in a browser signed in to {github_url.rstrip('/')}: it sends foldbot's manifest "
            f"(webhooks to {base}/webhook) to GitHub, which registers the App for {owner} and comes back here.")
        try:
            return await asyncio.wait_for(asyncio.shield(done), timeout)
        except TimeoutError:
            raise RegisterError(f"no answer from GitHub within {timeout:g} s: nothing was written; "
                                "run foldbot register again (and open the page it prints)") from None
    finally:
        await runner.cleanup()
