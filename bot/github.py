"""Talking to GitHub: App JWT, installation tokens, one gidgethub client per
installation with a conditional-request cache, retries that honour GitHub's
rate-limit signals, and call metrics.

The rest of foldbot sees `GitHub`: a small client bound to one installation
(or to one personal token) with `get`, `get_all`, `post`, `patch`, `put`, `delete`.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import re
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urljoin

import aiohttp
import cachetools
from gidgethub import BadRequest, GitHubBroken, HTTPException, RateLimitExceeded
from gidgethub.aiohttp import GitHubAPI
from gidgethub.apps import get_installation_access_token, get_jwt

from . import __version__
from .logfmt import delivery_note
from .metrics import Metrics

log = logging.getLogger("foldbot.github")

USER_AGENT = f"foldbot/{__version__}"
#: A round of redelivery lists again the deliveries made this many seconds before the newest it
#: listed last time: one GitHub was still trying then (it waits 10 s for an answer) may be listed
#: only after deliveries made after it.
LATE_SECONDS = 60
#: The longest a client holds its calls back when GitHub asks it to wait (`RetryingGitHubAPI.block`).
BLOCK_AT_MOST = 3600.0

#: A token is used until this many seconds before GitHub says it expires.
TOKEN_MARGIN_SECONDS = 300


class JobLogError(Exception):
    """A job log that could not be read: the reason, in words for the report, and its
    kind: "gone" (GitHub no longer has it), "too_large" (over `limit` bytes),
    "rate_limited" (stop asking for now), or "failed" (may work next time)."""

    def __init__(self, reason: str, kind: str = "failed", limit: int | None = None) -> None:
        super().__init__(reason)
        self.kind = kind
        self.limit = limit


class GitHubError(Exception):
    """A GitHub call that failed for good; carries the status and GitHub's message."""

    def __init__(self, status: int, message: str, method: str, url: str) -> None:
        super().__init__(f"{method} {url}: {status} {message}")
        self.status = status
        self.message = message
        self.method = method
        self.path = _path(url)
        #: The permissions the installation token of the refused call was granted (None: not known): what a
        #: refusal lacks is read from the token that met it, not from one minted since.
        self.granted: dict[str, str] | None = None


#: GitHub's words for the refusals no retry gets past (see `permanent`).
LOCKED = "issue is locked"  # "Unable to create comment because issue is locked."
ARCHIVED = "archived so is read-only"  # "Repository was archived so is read-only."
SUSPENDED = "installation has been suspended"  # "This installation has been suspended"
NOT_ACCESSIBLE = "resource not accessible by integration"  # a permission not granted, or a repository not installed
_TOKEN_PATH = re.compile(r"/app/installations/(\d+)/access_tokens\Z")


@dataclass(frozen=True)
class Permanent:
    """Why GitHub will refuse a call however often it is sent: `kind` is `locked` (a
    conversation only collaborators may write in), `archived` (a read-only repository),
    `uninstalled` or `suspended` (the App's installation), or `unreachable` (the repository:
    taken out of the installation, or deleted); `reason`, in words for the log. A delivery
    that meets one is done (its other writes stand), not failed: running it again would
    meet it again."""

    kind: str
    reason: str

    @property
    def expected(self) -> bool:
        """The owner's own doing (an uninstall, a repository taken out): said at INFO, not WARNING."""
        return self.kind in ("uninstalled", "unreachable")


def permanent(exc: GitHubError) -> Permanent | None:
    """The refusal `exc` is, when no retry can get past it (by GitHub's status and message, and
    the call it answers); None when it may (5xx, rate limits, a bug's 422, ...). A 404 on a
    repository's call is not enough to tell (an issue, a run, may be gone): `unreachable` asks."""
    message = exc.message.lower()
    token = _TOKEN_PATH.search(exc.path)
    if token is not None and exc.status == 404:
        return Permanent("uninstalled", f"the App's installation {token.group(1)} is gone (the App was uninstalled)")
    if exc.status == 403 and SUSPENDED in message:
        return Permanent("suspended", "the App's installation is suspended (its owner can unsuspend it in "
                                      "the installation's settings)")
    if exc.status == 403 and ARCHIVED in message:
        return Permanent("archived", "the repository is archived, so it is read-only")
    if exc.status == 403 and LOCKED in message:
        return Permanent("locked", "its conversation is locked: only collaborators may comment (or react) there")
    return None


async def unreachable(gh: "GitHub", repo: str | None, exc: GitHubError) -> Permanent | None:
    """`permanent(exc)`; else, for a call in `repo`, whether the repository itself is out of
    reach: for a 404, `GET /repos/{repo}` answers 404 too (a private one taken out of the
    installation, or one deleted); for a 403 "Resource not accessible by integration" (a
    public one taken out is still read as anyone reads it, but each write is refused so),
    GitHub says the App's installation for the repository (`GET /repos/{repo}/installation`,
    with the App's JWT) is not this one, or none. The same 403 for a permission the owner has
    not granted stays a failure, which the operator sees."""
    found = permanent(exc)
    if found is not None and found.kind == "uninstalled" and gh.installation_id is not None:
        # a token refused 404 says it once; GitHub's record of the installation says it for good (not a
        # moment of its own lag, nor a wrong GITHUB_API_URL, which 404s every installation alike)
        return found if await gh.pool.installation(gh.installation_id) is None else None
    if found is not None or repo is None or not exc.path.lower().startswith(f"/repos/{repo.lower()}/"):
        return found
    if exc.status == 403 and NOT_ACCESSIBLE in exc.message.lower() and gh.installation_id is not None:
        installed = await gh.pool.repository_installation(repo)
        if installed is None or installed.get("id") != gh.installation_id:
            return Permanent("unreachable", f"the repository {repo} is not in the App's installation any more "
                                            "(taken out of it)")
        gh.pool.credentials.forget(gh.installation_id)  # the next try's token holds what the owner grants by then
        return None
    if exc.status != 404:
        return None
    try:
        await gh.get(f"/repos/{repo}")
    except GitHubError as again:
        if again.status == 404:
            return Permanent("unreachable", f"the repository {repo} is out of the App's reach (taken out of the "
                                            "installation, or deleted)")
        return permanent(again)
    return None


def _path(url: str) -> str:
    """A call's path for a log line: no scheme, host or query (nothing secret is in either, but
    a download's signed URL is never logged at all)."""
    return "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0] if "://" in url else url.split("?", 1)[0]


def _parse_time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def status_label(status: int) -> str:
    """A metric label for an HTTP status: a number GitHub could send, else `other`."""
    return str(status) if 100 <= status < 600 else "other"


async def _error_message(response: aiohttp.ClientResponse) -> str:
    """GitHub's `message`, or a storage service's error code, short; never a body's
    arbitrary text (it lands in a public report)."""
    body = (await response.content.read(4096)).decode("utf-8", errors="replace")
    try:
        message = str(json.loads(body).get("message") or "")
    except (ValueError, AttributeError):
        code = re.search(r"<Code>([A-Za-z]{1,60})</Code>|^([A-Z][A-Za-z]{2,60})\b", body.strip())
        message = next((g for g in code.groups() if g), "") if code else ""
    return f"({message[:120]})" if message else ""


@dataclass(frozen=True)
class Token:
    value: str
    expires_at: float  # epoch seconds


#: True while a call runs that must not be sent twice (a dispatch: each one is a GPU run). A
#: 5xx, or a connection lost once the request may have left, is then not retried: GitHub may
#: have carried it out. (A connection never made, or a rate limit, is retried as always.)
NOT_TWICE: contextvars.ContextVar[bool] = contextvars.ContextVar("foldbot_not_twice", default=False)


class RetryingGitHubAPI(GitHubAPI):
    """gidgethub's aiohttp client with bounded retries: 5xx and connection errors
    back off exponentially; a secondary rate limit (403/429 with Retry-After or
    its message) waits as told; an exhausted primary limit waits for its reset."""

    def __init__(self, session: aiohttp.ClientSession, *args: Any, metrics: Metrics | None = None,
                 max_attempts: int = 6, max_wait: float = 60.0, base_delay: float = 0.5,
                 jwt: Callable[[], str] | None = None, **kwargs: Any) -> None:
        super().__init__(session, *args, **kwargs)
        self.metrics = metrics
        #: Signs a new App JWT: each request of this client that carries one is sent with a new one (a
        #: JWT lasts minutes; a long listing's later pages, or a retry after a wait, would carry a stale one).
        self.jwt = jwt
        self.max_attempts = max_attempts
        self.max_wait = max_wait
        self.base_delay = base_delay
        #: This client's (one installation's) calls, and what GitHub last said of its rate limit.
        self.calls = 0
        self.remaining: int | None = None
        self.reset_at: float | None = None
        #: Calls of this client now waiting out a rate limit (primary or secondary), and until when.
        self.waiting = 0
        self.waiting_until: float | None = None
        #: GitHub asked for a longer wait than `max_wait` (a secondary limit's Retry-After, a primary limit's
        #: reset far off, a job log's Retry-After): until then no call of this client is sent (one waits what is
        #: left, up to `max_wait`, else fails at once, saying so), as GitHub asks ("may result in the banning of
        #: your integration").
        self.blocked_until: float | None = None

    async def _request(self, method: str, url: str, headers: Any, body: bytes = b"") -> tuple[int, Any, bytes]:
        path = _path(url)
        for attempt in range(1, self.max_attempts + 1):
            if self.blocked_until is not None:
                await self._wait_for_the_block(method, path, url)
            if self.jwt is not None and str(headers.get("authorization", "")).startswith("bearer "):
                headers = {**headers, "authorization": f"bearer {self.jwt()}"}
            try:
                status, response_headers, data = await super()._request(method, url, headers, body)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                if self.metrics:
                    self.metrics.github_calls.labels(status="error").inc()
                if attempt == self.max_attempts:
                    raise GitHubError(0, f"connection failed: {exc!r}", method, url) from exc
                if NOT_TWICE.get() and not isinstance(exc, aiohttp.ClientConnectorError):
                    raise GitHubError(0, f"no answer (not sent again: it may have been carried out): {exc!r}",
                                      method, url) from exc
                delay = self.backoff(attempt)
                log.warning("github %s %s: %r; retrying in %.1fs (attempt %d)%s", method, path, exc, delay, attempt,
                            delivery_note(), extra={"method": method, "path": path, "status": 0, "attempt": attempt,
                                                    "wait": round(delay, 2)})
                await self.sleep(delay)
                continue
            log.debug("github %s %s: %s", method, path, status,
                      extra={"method": method, "path": path, "status": status, "attempt": attempt})
            self.calls += 1
            # (a 401's rate-limit headers are the unauthenticated caller's, 60 an hour: not this client's budget)
            left = response_headers.get("x-ratelimit-remaining") if status != 401 else None
            reset = response_headers.get("x-ratelimit-reset")
            if left is not None and left.isdigit():
                self.remaining = int(left)
                self.reset_at = float(reset) if reset and reset.isdigit() else self.reset_at
            if self.metrics:
                self.metrics.github_calls.labels(status=status_label(status)).inc()
                if left is not None and left.isdigit():
                    self.metrics.rate_limit_remaining.set(int(left))
            return status, response_headers, data
        raise AssertionError("unreachable")

    async def _wait_for_the_block(self, method: str, path: str, url: str) -> None:
        """A call made while GitHub asked this client to wait (`blocked_until`): it waits as the
        other retries do, at most `max_wait`; a longer wait fails it at once, saying until when."""
        assert self.blocked_until is not None
        until, left = self.blocked_until, self.blocked_until - time.time()
        if left <= 0:
            self.blocked_until = None
            return
        if left > self.max_wait:
            raise GitHubError(429, f"not sent: GitHub asked for no calls until {_iso(until)} ({left:.0f}s from now)",
                              method, url)
        log.warning("github %s %s: waiting %.1fs before sending it, as GitHub asked%s", method, path, left,
                    delivery_note(), extra={"method": method, "path": path, "status": 0, "wait": round(left, 2)})
        self.waiting += 1
        self.waiting_until = max(self.waiting_until or 0.0, until)
        try:
            await self.sleep(left)
        finally:
            self.waiting -= 1
            if not self.waiting:
                self.waiting_until = None

    def blocked_now(self) -> float | None:
        """Until when GitHub's wait holds, if it still does."""
        return self.blocked_until if self.blocked_until is not None and self.blocked_until > time.time() else None

    def block(self, seconds: float) -> None:
        """No call of this client before `seconds` from now (at most an hour: GitHub's primary window;
        a longer wait is no rate limit GitHub documents)."""
        self.blocked_until = max(self.blocked_until or 0.0, time.time() + min(seconds, BLOCK_AT_MOST))

    def backoff(self, attempt: int) -> float:
        return min(self.base_delay * 2 ** (attempt - 1), self.max_wait) * (0.5 + random.random() / 2)

    async def handle_rate_limit_error(self, *, method: str, url: str, exception: HTTPException, attempt: int) -> bool:
        status = int(exception.status_code)
        fields = {"method": method, "path": _path(url), "status": status, "attempt": attempt}
        if attempt >= self.max_attempts:
            log.error("github %s %s: giving up after %d attempts: %s%s", method, _path(url), attempt, exception,
                      delivery_note(), extra=fields)
            return False
        headers = exception.headers or {}
        wait: float | None = None
        if isinstance(exception, GitHubBroken):
            if NOT_TWICE.get():
                log.warning("github %s %s: %s; not sent again (it may have been carried out)%s", method, _path(url),
                            status, delivery_note(), extra=fields)
                return False
            wait = self.backoff(attempt)
        elif status in (403, 429):
            retry_after = headers.get("retry-after")
            message = str(exception).lower()
            if retry_after is not None and retry_after.strip().isdigit():
                wait = float(retry_after)
            elif isinstance(exception, RateLimitExceeded) or "rate limit" in message:
                # GitHub: without Retry-After, wait for the reset when no call is left, else "for at least one
                # minute" (a secondary limit; retrying sooner "may result in the banning of your integration")
                reset, left = headers.get("x-ratelimit-reset"), headers.get("x-ratelimit-remaining")
                exhausted = left is not None and left.strip() == "0" and reset is not None and reset.isdigit()
                wait = max(float(reset) - time.time(), 1.0) if exhausted else 60.0  # type: ignore[arg-type]
        if wait is None:
            return False
        if wait > self.max_wait:
            log.error("github %s %s: %s asks to wait %.0fs, more than the %.0fs allowed; giving up, and sending no "
                      "call of this installation before then%s", method, _path(url), status, wait, self.max_wait,
                      delivery_note(), extra=fields)
            if status in (403, 429):
                self.block(wait)
            return False
        log.warning("github %s %s: %s; retrying in %.1fs (attempt %d)%s", method, _path(url), status, wait, attempt,
                    delivery_note(), extra={**fields, "wait": round(wait, 2)})
        limited = status in (403, 429)
        if limited:
            self.waiting += 1
            self.waiting_until = max(self.waiting_until or 0.0, time.time() + wait)
        try:
            await self.sleep(wait)
        finally:
            if limited:
                self.waiting -= 1
                if not self.waiting:
                    self.waiting_until = None
        return True


class Credentials:
    """Where tokens come from: an App (JWT → installation tokens, cached until a
    few minutes before they expire) or one personal token."""

    def __init__(self, *, app_id: str | None = None, private_key: str | None = None, token: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        if token is None and (app_id is None or private_key is None):
            raise ValueError("either a token or an App id and private key are needed")
        self.app_id = app_id
        self.private_key = private_key
        self.personal_token = token
        self.clock = clock
        self._tokens: cachetools.TLRUCache[int, Token] = cachetools.TLRUCache(
            maxsize=1024, ttu=lambda _key, tok, _now: tok.expires_at - TOKEN_MARGIN_SECONDS, timer=clock
        )
        self._locks: dict[int, asyncio.Lock] = {}
        #: What each token was granted (`permissions` of GitHub's answer: `contents: write`, ...), by its digest
        self._granted: cachetools.LRUCache[str, dict[str, str]] = cachetools.LRUCache(maxsize=1024)

    @property
    def is_app(self) -> bool:
        return self.personal_token is None

    def jwt(self) -> str:
        assert self.app_id is not None and self.private_key is not None
        # gidgethub's: issued a minute in the past against clock drift, valid for 9 minutes from now
        return get_jwt(app_id=str(self.app_id), private_key=self.private_key, expiration=600)

    def forget(self, installation_id: int) -> None:
        self._tokens.pop(installation_id, None)

    def granted(self, token: str) -> dict[str, str] | None:
        """The permissions an installation token was granted; None when not known (a personal token)."""
        return self._granted.get(_digest(token))

    async def token(self, api: GitHubAPI, installation_id: int | None) -> str:
        if self.personal_token is not None:
            return self.personal_token
        if installation_id is None:
            raise ValueError("an App needs the installation id of the event")
        cached = self._tokens.get(installation_id)
        if cached is not None:
            return cached.value
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._tokens.get(installation_id)
            if cached is not None:
                return cached.value
            assert self.app_id is not None and self.private_key is not None
            try:
                data = await get_installation_access_token(api, installation_id=str(installation_id),
                                                           app_id=str(self.app_id), private_key=self.private_key)
            except HTTPException as exc:
                raise GitHubError(int(exc.status_code), f"no installation token: {exc}", "POST",
                                  f"/app/installations/{installation_id}/access_tokens") from None
            expires = datetime.fromisoformat(str(data["expires_at"]).replace("Z", "+00:00")).timestamp()
            token = Token(str(data["token"]), expires)
            self._tokens[installation_id] = token
            granted = data.get("permissions")
            if isinstance(granted, dict):
                self._granted[_digest(token.value)] = {str(k): str(v) for k, v in granted.items()}
            return token.value


def _digest(token: str) -> str:
    """What a token is kept by, not the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


class GitHubPool:
    """One HTTP session, and one gidgethub client (with its own ETag cache) per installation."""

    def __init__(self, session: aiohttp.ClientSession, credentials: Credentials, *, base_url: str,
                 metrics: Metrics | None = None, cache_size: int = 2048, max_wait: float = 60.0,
                 base_delay: float = 0.5) -> None:
        self.session = session
        self.credentials = credentials
        self.base_url = base_url.rstrip("/")
        self.metrics = metrics
        self.cache_size = cache_size
        self.max_wait = max_wait
        self.base_delay = base_delay
        self._clients: cachetools.LRUCache[Any, RetryingGitHubAPI] = cachetools.LRUCache(maxsize=256)
        self._login: str | None = None
        #: Whether the server takes a dispatch's `return_run_details` (GitHub since 2026-02-19; a GitHub Enterprise
        #: Server before it answers 422 "not a permitted key"): None until a dispatch tells.
        self.run_details: bool | None = None

    def _api(self, key: Any) -> RetryingGitHubAPI:
        api = self._clients.get(key)
        if api is None:
            api = RetryingGitHubAPI(self.session, USER_AGENT, cache=cachetools.LRUCache(maxsize=self.cache_size),
                                    base_url=self.base_url, metrics=self.metrics, max_wait=self.max_wait,
                                    base_delay=self.base_delay,
                                    jwt=self.credentials.jwt if self.credentials.is_app else None)
            self._clients[key] = api
        return api

    def short_of_budget(self, low: int = 300) -> list[dict[str, Any]]:
        """The clients (an installation's id, or `app` for the App's JWT) whose calls wait out a
        rate limit now, that GitHub asked to send nothing until later (`blocked_until`), or that
        have fewer than `low` calls left: what `/health` shows as the backlog's cause."""
        out = []
        now = time.time()
        for key, api in list(self._clients.items()):
            short = api.remaining is not None and api.remaining < low and (api.reset_at is None or api.reset_at > now)
            blocked = api.blocked_now()
            if key == "credentials" or not (api.waiting or short or blocked):  # a count from before its reset says nothing
                continue
            out.append({"client": key, "remaining": api.remaining, "waiting_calls": api.waiting,
                        "until": _iso(max(api.waiting_until or 0.0, blocked or 0.0) or api.reset_at)})
        return out

    def for_installation(self, installation_id: int | None) -> "GitHub":
        return GitHub(self, self._api(installation_id), installation_id)

    async def check_credentials(self) -> str | None:
        """None when GitHub accepts foldbot's credentials (`GET /app` with the App's JWT,
        the token's `viewer`), else why not, in words for `/health` and the log."""
        what = "GET /app with the App's JWT" if self.credentials.is_app else "GraphQL `viewer` with GITHUB_TOKEN"
        api = self._api("credentials")  # a client (and ETag cache) of its own: later calls are counted as before
        try:
            if self.credentials.is_app:
                try:
                    token = self.credentials.jwt()
                except Exception as exc:  # a key PyJWT cannot sign with: its own words (it may say "public key")
                    return (f"the App's private key cannot sign a JWT: it does not read as a PEM RSA private key "
                            f"(PyJWT: {type(exc).__name__}: {exc})")
                str((await api.getitem("/app", jwt=token))["slug"])
            else:
                await self._token_login(api)
        except HTTPException as exc:
            return f"{what} answered {int(exc.status_code)} {str(exc)[:200]}".rstrip()
        except GitHubError as exc:
            return f"{what} failed: {exc.message[:200]}"
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            return f"{what} failed: {exc!r}"[:300]
        except (KeyError, TypeError, ValueError) as exc:
            return f"{what} answered something unexpected: {exc!r}"[:300]
        return None

    async def hook_deliveries(self, newer_than: datetime, after: int | None = None) -> list[dict[str, Any]]:
        """The App's webhook deliveries delivered after `newer_than`, and, with `after` (the
        newest id listed before), those with a higher id or delivered at most LATE_SECONDS
        before the first with a lower one (`GET /app/hook/deliveries` with the App's JWT,
        newest first, 100 a page, following the `cursor` links). All of them: GitHub's
        `status=failure` filter keeps only status codes 400-599, and a delivery that never
        reached foldbot (it was down, or too slow: no status code, 0) is the one to ask for most."""
        api = self._api("hook")
        found: list[dict[str, Any]] = []
        url = "/app/hook/deliveries?per_page=100"
        edge: datetime | None = None  # when the first delivery listed before was delivered
        try:
            async for item in api.getiter(url, jwt=self.credentials.jwt()):
                when = _parse_time(item.get("delivered_at")) if isinstance(item, dict) else None
                if when is not None and when <= newer_than:
                    break
                if after is not None and isinstance(item, dict) and type(item.get("id")) is int and item["id"] <= after:
                    # listed before; but one GitHub was still trying when the last round listed may have
                    # been listed after deliveries with higher ids: those of the last LATE_SECONDS again
                    edge = edge or when
                    if when is None or edge is None or when < edge - timedelta(seconds=LATE_SECONDS):
                        break
                found.append(item)
        except HTTPException as exc:
            raise GitHubError(int(exc.status_code), str(exc), "GET", url) from None
        return found

    async def installations(self) -> list[dict[str, Any]]:
        """The App's installations (`GET /app/installations` with the App's JWT, every page)."""
        url = "/app/installations?per_page=100"
        try:
            return [item async for item in self._api("app").getiter(url, jwt=self.credentials.jwt())]
        except HTTPException as exc:
            raise GitHubError(int(exc.status_code), str(exc), "GET", url) from None

    async def installation(self, installation_id: int) -> dict[str, Any] | None:
        """The App's installation (`GET /app/installations/{id}` with the App's JWT); None: GitHub
        has none of that id (404)."""
        return await self._app_item(f"/app/installations/{int(installation_id)}")

    async def repository_installation(self, repo: str) -> dict[str, Any] | None:
        """The App's installation that holds `repo` (`GET /repos/{repo}/installation` with the
        App's JWT); None: none does (404)."""
        return await self._app_item(f"/repos/{repo}/installation")

    async def _app_item(self, url: str) -> dict[str, Any] | None:
        """`GET url` with the App's JWT; None for a 404."""
        try:
            return await self._api("app").getitem(url, jwt=self.credentials.jwt())  # type: ignore[no-any-return]
        except HTTPException as exc:
            if int(exc.status_code) == 404:
                return None
            raise GitHubError(int(exc.status_code), str(exc), "GET", url) from None

    async def installation_repositories(self, installation_id: int) -> list[dict[str, Any]]:
        """The repositories an installation may reach (`GET /installation/repositories`)."""
        return await self.for_installation(installation_id).get_all("/installation/repositories?per_page=100",
                                                                   iterable_key="repositories")

    async def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to send a delivery again (`POST /app/hook/deliveries/{id}/attempts`);
        it keeps its GUID as `X-GitHub-Delivery`."""
        url = f"/app/hook/deliveries/{int(delivery_id)}/attempts"
        try:
            await self._api("hook").post(url, data=b"", jwt=self.credentials.jwt())
        except HTTPException as exc:
            raise GitHubError(int(exc.status_code), str(exc), "POST", url) from None

    async def bot_login(self) -> str:
        """The login foldbot's own comments carry: `<app-slug>[bot]`, or the token's user."""
        if self._login is None:
            api = self._api("app")
            if self.credentials.is_app:
                app = await api.getitem("/app", jwt=self.credentials.jwt())
                self._login = f"{app['slug']}[bot]"
            else:
                self._login = await self._token_login(api)
        return self._login

    @property
    def graphql_url(self) -> str:
        """GitHub's GraphQL endpoint beside its REST API: `https://api.github.com/graphql`;
        GitHub Enterprise's `https://HOST/api/graphql` beside `https://HOST/api/v3`."""
        base = self.base_url
        return (base[: -len("/v3")] if base.endswith("/api/v3") else base) + "/graphql"

    async def _token_login(self, api: RetryingGitHubAPI) -> str:
        """The account the token acts as: GraphQL's `viewer`, which answers a personal token (its
        user) and an installation token alike (`<app-slug>[bot]`: the job's GITHUB_TOKEN is
        `github-actions[bot]`), where REST's `GET /user` refuses the latter."""
        url = self.graphql_url
        answer = await api.post(url, data={"query": "query { viewer { login } }"},
                                oauth_token=self.credentials.personal_token)
        data = answer.get("data") if isinstance(answer, dict) else None
        login = data.get("viewer", {}).get("login") if isinstance(data, dict) and isinstance(data.get("viewer"), dict) else None
        if not isinstance(login, str) or not login:
            errors = answer.get("errors") if isinstance(answer, dict) else None
            raise GitHubError(200, f"no viewer login in the answer: {str(errors or answer)[:200]}", "POST", url)
        return login


class GitHub:
    """A client bound to one installation. A 401 refreshes the token once."""

    def __init__(self, pool: GitHubPool, api: RetryingGitHubAPI, installation_id: int | None) -> None:
        self.pool = pool
        self.api = api
        self.installation_id = installation_id

    async def _authorised(self, method: str, url: str, request: Callable[[str], Awaitable[Any]]) -> Any:
        """Run `request(token)`; a 401 forgets the installation token and tries once more."""
        for attempt in (1, 2):
            token = await self.pool.credentials.token(self.api, self.installation_id)
            try:
                return await request(token)
            except BadRequest as exc:
                if int(exc.status_code) == 401 and attempt == 1 and self.pool.credentials.is_app:
                    assert self.installation_id is not None
                    self.pool.credentials.forget(self.installation_id)
                    continue
                raise self._refused(exc, method, url, token) from exc
            except HTTPException as exc:
                raise self._refused(exc, method, url, token) from exc
        raise AssertionError("unreachable")

    def _refused(self, exc: HTTPException, method: str, url: str, token: str) -> GitHubError:
        error = GitHubError(int(exc.status_code), str(exc), method, url)
        error.granted = self.pool.credentials.granted(token)
        return error

    async def _call(self, method: str, url: str, **kwargs: Any) -> Any:
        call = getattr(self.api, method)
        return await self._authorised(method.upper(), url, lambda token: call(url, oauth_token=token, **kwargs))

    async def get(self, url: str, **kwargs: Any) -> Any:
        return await self._call("getitem", url, **kwargs)

    async def get_all(self, url: str, *, iterable_key: str | None = None) -> list[Any]:
        """Every item of a paginated list (`iterable_key` for wrapped lists such as `jobs`)."""

        async def collect(token: str) -> list[Any]:
            return [item async for item in self.api.getiter(url, oauth_token=token, iterable_key=iterable_key)]

        return await self._authorised("GET", url, collect)

    async def find(self, url: str, match: Callable[[Any], bool], *, limit: int | None = None,
                   iterable_key: str | None = None) -> Any | None:
        """The first item of a paginated list that `match` accepts, reading no page past
        it nor past the first `limit` items; None if none does."""

        async def search(token: str) -> Any | None:
            seen = 0
            async for item in self.api.getiter(url, oauth_token=token, iterable_key=iterable_key):
                if match(item):
                    return item
                seen += 1
                if limit is not None and seen >= limit:
                    break
            return None

        return await self._authorised("GET", url, search)

    async def post(self, url: str, data: Any) -> Any:
        return await self._call("post", url, data=data)

    async def patch(self, url: str, data: Any) -> Any:
        return await self._call("patch", url, data=data)

    async def delete(self, url: str) -> Any:
        return await self._call("delete", url)

    async def download(self, path: str, max_bytes: int) -> bytes:
        """A download as it came, such as a job log: GitHub answers `path` with a redirect
        to a URL signed for a minute; that URL is read without the token (it is another
        host's) and at most `max_bytes` of it. Raises JobLogError saying why not."""
        url = f"{self.pool.base_url}{path}"
        try:
            location = urljoin(url, await self._log_location(url))
        except GitHubError as exc:  # no token to ask with
            raise JobLogError(f"no token to read it: {exc.status} {exc.message[:120]}", "rate_limited") from None
        return await self._download(location, max_bytes)

    async def _log_location(self, url: str) -> str:
        for attempt in range(1, 4):
            if (blocked := self.api.blocked_now()) is not None:
                raise JobLogError(f"GitHub asked for no calls until {_iso(blocked)}; read again on a later run",
                                  "rate_limited")
            token = await self.pool.credentials.token(self.api, self.installation_id)
            headers = {"authorization": f"token {token}", "accept": "application/vnd.github+json",
                       "user-agent": USER_AGENT}
            retry_after = None
            try:
                async with self.pool.session.get(url, headers=headers, allow_redirects=False) as response:
                    status = response.status
                    self._count(status, response.headers)
                    if status in (301, 302, 303, 307, 308) and response.headers.get("location"):
                        return response.headers["location"]
                    message = await _error_message(response)
                    retry_after = response.headers.get("retry-after")
                    remaining = response.headers.get("x-ratelimit-remaining")
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                status, message, remaining = 0, f"connection failed ({type(exc).__name__})", None
            if status == 401 and attempt == 1 and self.pool.credentials.is_app:
                assert self.installation_id is not None
                self.pool.credentials.forget(self.installation_id)
                continue
            if status in (403, 429) and (retry_after is not None or remaining == "0" or "rate limit" in message.lower()):
                if retry_after is not None and retry_after.strip().isdigit():  # not asked again, here or elsewhere, before then
                    self.api.block(float(retry_after))
                raise JobLogError(f"GitHub's rate limit ({status}); read again on a later run", "rate_limited")
            if (status == 0 or status >= 500) and attempt < 3:
                await self.api.sleep(self.api.backoff(attempt))
                continue
            if status == 0:
                raise JobLogError(message)
            if status == 200:
                raise JobLogError("GitHub answered 200 where it redirects to the log")
            raise JobLogError(f"GitHub answered {status} {message}".rstrip(), "gone" if status in (404, 410) else "failed")
        raise AssertionError("unreachable")

    async def _download(self, location: str, max_bytes: int) -> bytes:
        over = f"over the {max_bytes / 2**20:g} MiB read per log"
        for attempt in range(1, 4):
            retry = False
            try:
                async with self.pool.session.get(location, headers={"user-agent": USER_AGENT}) as response:
                    if response.status >= 500 and attempt < 3:
                        retry = True
                    elif response.status != 200:
                        raise JobLogError(f"its download answered {response.status} {await _error_message(response)}".rstrip())
                    else:
                        declared = response.content_length
                        if declared is not None and declared > max_bytes:
                            raise JobLogError(f"it is {declared / 2**20:.2f} MiB, {over}", "too_large", max_bytes)
                        chunks, size = [], 0
                        async for chunk in response.content.iter_chunked(1 << 16):
                            size += len(chunk)
                            if size > max_bytes:
                                raise JobLogError(f"it is {over}", "too_large", max_bytes)
                            chunks.append(chunk)
                        return b"".join(chunks)  # (read as bytes: a log decoded whole had taken up to 4x its size)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                if attempt == 3:
                    raise JobLogError(f"its download failed ({type(exc).__name__})") from None
                retry = True
            if retry:  # outside the response: its connection is back in the pool while we wait
                await self.api.sleep(self.api.backoff(attempt))
        raise JobLogError("its download failed (server errors)")

    def _count(self, status: int, headers: Any) -> None:
        metrics = self.pool.metrics
        if metrics is not None:
            metrics.github_calls.labels(status=status_label(status)).inc()
            remaining = headers.get("x-ratelimit-remaining")
            if remaining is not None and remaining.isdigit():
                metrics.rate_limit_remaining.set(int(remaining))


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
