"""``FakeGitHub``: the state plus an aiohttp server speaking GitHub's REST API."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import time
from dataclasses import dataclass
from types import TracebackType

from aiohttp import web

from . import routes_actions, routes_apps, routes_git, routes_issues, routes_manifest, routes_repos
from .api import (
    ApiError,
    Call,
    Match,
    Reply,
    MSG_SUSPENDED,
    Route,
    Router,
    allows,
    forbidden_integration,
    not_found,
    repo_archived,
)
from .auth import (
    ANONYMOUS,
    MSG_JWT_UNDECODABLE,
    JwtRejected,
    Principal,
    looks_like_jwt,
    parse_authorization,
    verify_app_jwt,
)
from .knobs import PRIMARY_DOCS, Injected, Knobs, RateLimiter
from .render import Renderer
from .state import LoggedRequest, RecordedRequest, Repo
from .templates import static_response_headers
from .world import GitHubState

#: The methods that write: an archived repository refuses each (`repo_archived`).
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})

ROUTES: list[Route] = [
    *routes_apps.ROUTES,
    *routes_repos.ROUTES,
    *routes_git.ROUTES,
    *routes_issues.ROUTES,
    *routes_actions.ROUTES,
    *routes_manifest.ROUTES,
]
# What an installation token may do on a public repository it is not installed on.
PUBLIC_READ = {
    "metadata": "read",
    "contents": "read",
    "issues": "read",
    "pull_requests": "read",
    "actions": "read",
}
JSON_TYPE = "application/json; charset=utf-8"
API_VERSION = "2022-11-28"


@dataclass
class _Outcome:
    reply: Reply
    principal: Principal
    route: Route | None
    charge: bool


class FakeGitHub(GitHubState):
    """A fake GitHub REST API on a loopback port, with state tests set up and inspect.

    Use ``async with FakeGitHub() as fake:`` (or ``await fake.start()`` /
    ``await fake.close()``); ``fake.base_url`` is then ``http://127.0.0.1:<port>``.
    """

    def __init__(
        self,
        *,
        app_id: int = 4242,
        app_slug: str = "foldbot",
        private_key_pem: str | None = None,
        token_lifetime: float = 3600.0,
        error_rate: float = 0.0,
        seed: int = 0,
        latency: float = 0.0,
        rate_limit: int = 5000,
        html_url: str = "https://github.com",
        dispatch_returns_run_details: bool = True,
    ) -> None:
        super().__init__(
            app_id=app_id,
            app_slug=app_slug,
            app_name=app_slug,
            private_key_pem=private_key_pem,
            token_lifetime=token_lifetime,
            html_url=html_url,
        )
        self.knobs = Knobs(seed=seed)
        if error_rate:
            self.knobs.set_error_rate(error_rate)
        if latency:
            self.knobs.set_latency(latency)
        self.rate_limits = RateLimiter(
            {"installation": rate_limit, "user": rate_limit, "app": rate_limit, "anonymous": 60}
        )
        self.rate_limit_status = 403
        self.dispatch_returns_run_details = dispatch_returns_run_details
        #: False: a server that refuses the key (a GitHub Enterprise Server before 2026-02): 422, nothing started.
        self.dispatch_takes_run_details = True
        #: Seconds a run dispatched without `return_run_details` stays out of the run listings
        #: (GitHub answers 204 and creates the run after), and until when each such run does.
        self.dispatch_listing_lag = 0.0
        self.unlisted_until: dict[int, float] = {}
        # The App manifest flow (routes_manifest): each form post, and how long its code lasts.
        self.manifest_registrations: list[routes_manifest.Registration] = []
        self.manifest_code_lifetime = routes_manifest.CODE_LIFETIME
        self.requests: list[RecordedRequest] = []
        #: Meetings (`meet`) whose requests did not all come in time.
        self.broken_meetings: list[str] = []
        self.request_log: list[LoggedRequest] = []
        self.render = Renderer(self)
        self.app = web.Application(client_max_size=100 * 1024 * 1024)
        self.app.router.add_route("*", "/{tail:.*}", self._serve)
        self._router = Router(ROUTES)
        self._runner: web.AppRunner | None = None
        self._request_ids = itertools.count(0x1B360)
        self._static_headers = static_response_headers()

    # -- lifecycle -------------------------------------------------------------

    async def start(self) -> str:
        """Serve on 127.0.0.1 with an ephemeral port; return the base URL."""
        runner = web.AppRunner(self.app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        port = runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeGitHub:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- knobs ---------------------------------------------------------------------

    def fail_next(
        self, n: int = 1, status: int = 502, *, method: str | None = None, path: str | None = None
    ) -> None:
        """The next ``n`` matching requests fail with ``status`` (``path``: a regex)."""
        self.knobs.fail_next(n, status, method=method, path=path)

    def cut_next(self, n: int = 1, how: str = "drop", *, method: str | None = None, path: str | None = None) -> None:
        """The next ``n`` matching requests lose their connection (``drop``, ``drop_after``, ``truncate``)."""
        self.knobs.cut_next(n, how, method=method, path=path)

    def fail_after(
        self, n: int = 1, status: int = 502, *, method: str | None = None, path: str | None = None
    ) -> None:
        """The next ``n`` matching requests are carried out, then answered ``status``."""
        self.knobs.fail_after(n, status, method=method, path=path)

    def set_error_rate(
        self, rate: float, status: int = 502, *, method: str | None = None, path: str | None = None
    ) -> None:
        """Matching requests fail with probability ``rate`` (seeded, reproducible)."""
        self.knobs.set_error_rate(rate, status, method=method, path=path)

    def secondary_rate_limit(
        self,
        n: int = 1,
        retry_after: int | None = 1,
        *,
        status: int = 403,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        """The next ``n`` matching requests hit a secondary rate limit (403, or 429)."""
        self.knobs.secondary_rate_limit(n, retry_after, status=status, method=method, path=path)

    def set_latency(
        self, seconds: float, *, method: str | None = None, path: str | None = None
    ) -> None:
        self.knobs.set_latency(seconds, method=method, path=path)

    def meet(self, size: int, *, method: str | None = None, path: str | None = None, timeout: float = 30) -> None:
        self.knobs.meet(size, method=method, path=path, timeout=timeout)

    def exhaust_rate_limit(self, reset_in: float = 60.0, *, status: int = 403) -> None:
        """Use up the primary rate limit of everyone for ``reset_in`` seconds."""
        self.rate_limit_status = status
        self.rate_limits.exhaust(reset_in)

    def restore_rate_limit(self) -> None:
        self.rate_limits.restore()

    # -- recorded requests -----------------------------------------------------------

    def writes(self) -> list[RecordedRequest]:
        """Every request that was not a GET/HEAD (whatever its status)."""
        return [request for request in self.requests if request.method not in ("GET", "HEAD")]

    def count(self, method: str | None = None, path: str | None = None) -> int:
        """How many requests matched ``method`` and the ``path`` regex."""
        return sum(
            1
            for request in self.requests
            if (method is None or request.method == method.upper())
            and (path is None or re.search(path, request.path))
        )

    # -- serving ---------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        method = request.method.upper()
        raw_path = request.raw_path.split("?", 1)[0]
        body = await request.read()
        meeting = self.knobs.meeting_for(method, raw_path)
        if meeting is not None and not await meeting.attend():
            self.broken_meetings.append(str(meeting))
        delay = self.knobs.latency_for(method, raw_path)
        if delay > 0:
            await asyncio.sleep(delay)
        cut = self.knobs.take_cut(method, raw_path)
        if cut == "drop":  # the connection is lost before the request is carried out
            self.requests.append(RecordedRequest(method, raw_path, 0))
            return self._cut(request, None)
        request_id = f"FE{next(self._request_ids):X}:{len(self.requests):X}:{int(time.time()):X}"
        if raw_path.startswith("/_blob/"):
            response = self._blob(method, raw_path, request)
        elif routes_manifest.FORM_PATH.match(raw_path):  # a web page of github.com, not the API
            response = routes_manifest.manifest_form(self, method, raw_path, dict(request.query), body,
                                                     request.headers.get("content-type", ""))
        else:
            outcome = self._handle(method, raw_path, request, body, request_id)
            response = self._respond(method, request, outcome, request_id)
        if cut is not None:  # carried out; the answer is lost, whole or halfway
            self.requests.append(RecordedRequest(method, raw_path, 0))
            return await self._cut_answer(request, response) if cut == "truncate" else self._cut(request, None)
        self.requests.append(RecordedRequest(method, raw_path, response.status))
        self.request_log.append(
            LoggedRequest(
                method,
                raw_path,
                response.status,
                dict(request.query),
                {key.lower(): value for key, value in request.headers.items()},
                body,
            )
        )
        return response

    @staticmethod
    def _cut(request: web.Request, response: web.StreamResponse | None) -> web.StreamResponse:
        """Close the connection: the client sees it lost (ServerDisconnected, or a payload cut short)."""
        if request.transport is not None:
            request.transport.close()
        return response if response is not None else web.Response(status=502)  # (never sent)

    async def _cut_answer(self, request: web.Request, response: web.Response) -> web.StreamResponse:
        """The answer's headers and half its body, then the connection closed."""
        body = bytes(response.body or b"")  # type: ignore[arg-type]
        stream = web.StreamResponse(status=response.status, headers={
            k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "transfer-encoding")})
        stream.content_length = len(body)
        await stream.prepare(request)
        await stream.write(body[: len(body) // 2])
        return self._cut(request, stream)

    def _blob(self, method: str, raw_path: str, request: web.Request) -> web.Response:
        """The storage host a log redirect points at: a signed URL, no GitHub token (a
        request carrying one is refused, as a signed-URL store does), no rate limit."""
        failure = self.knobs.take_failure(method, raw_path)
        if failure is not None:
            return web.Response(status=failure.status, text="injected failure")
        if method != "GET":
            return web.Response(status=405, text="UnsupportedHttpVerb")
        if request.headers.get("authorization"):
            return web.Response(status=400, text="InvalidAuthenticationInfo: a signed URL takes no Authorization header")
        link = self.log_links.get(request.query.get("sig", ""))
        if link is None or f"/_blob/job-logs/{link[0]}.txt" != raw_path:
            return web.Response(status=403, text="AuthenticationFailed: signature did not match")
        if link[1] <= time.time():
            return web.Response(status=403, text="AuthenticationFailed: signed expiry time has passed")
        return web.Response(status=200, body=self.job_logs[link[0]], content_type="text/plain", charset="utf-8")

    def _handle(
        self, method: str, raw_path: str, request: web.Request, body: bytes, request_id: str
    ) -> _Outcome:
        try:
            match = self._router.match("GET" if method == "HEAD" else method, raw_path)
        except ApiError as error:
            return _Outcome(Reply(error.status, error.body()), self._peek(request), None, True)
        if match is None:
            return _Outcome(Reply(404, not_found().body()), self._peek(request), None, True)
        injected = self.knobs.take_failure(method, raw_path)
        if injected is not None:
            reply = self._injected_reply(injected, request_id)
            return _Outcome(reply, self._peek(request), match.route, False)
        principal = ANONYMOUS
        try:
            principal = self._authenticate(match.route, request.headers.get("authorization"))
            if (
                self.rate_limits.bucket(principal.rate_key).remaining == 0
                and match.route.counts_against_rate_limit
            ):
                limited = ApiError(
                    self.rate_limit_status,
                    f"API rate limit exceeded for {principal.rate_subject}.",
                    documentation_url=PRIMARY_DOCS,
                )
                return _Outcome(
                    Reply(limited.status, limited.body()), principal, match.route, False
                )
            reply = match.route.handler(self._call(method, match, request, body, principal))
            after = self.knobs.take_failure_after(method, raw_path)
            if after is not None:  # carried out, and answered as a failure
                return _Outcome(self._injected_reply(after, request_id), principal, match.route, True)
        except ApiError as error:
            reply = Reply(error.status, error.body(), headers=error.headers)
        return _Outcome(reply, principal, match.route, True)

    def _injected_reply(self, injected: Injected, request_id: str) -> Reply:
        if injected.secondary_rate_limit and injected.message is not None:
            message = (
                f"{injected.message} If you reach out to GitHub Support for help, please include "
                f"the request ID {request_id}."
            )
            error = ApiError(
                injected.status, message, documentation_url=injected.documentation_url or ""
            )
        else:
            error = ApiError(injected.status, injected.message)
        return Reply(injected.status, error.body(), headers=dict(injected.headers))

    def _authenticate(self, route: Route, header: str | None) -> Principal:
        parsed = parse_authorization(header)
        if route.auth == "app":
            if parsed is None or parsed[0] != "bearer":
                raise ApiError(401, MSG_JWT_UNDECODABLE)
            return self._app_principal(parsed[1])
        if parsed is None:
            if route.auth == "any":
                return ANONYMOUS
            raise ApiError(401, "Requires authentication")
        scheme, credential = parsed
        if scheme not in ("token", "bearer"):
            raise ApiError(401, "Bad credentials")
        issued = self.tokens.get(credential)
        if issued is not None:
            installation = self.installations.get(issued.installation_id)
            if issued.expires_at <= time.time() or installation is None:
                raise ApiError(401, "Bad credentials")
            if installation.suspended_at is not None:
                raise ApiError(403, MSG_SUSPENDED)
            return Principal(
                kind="installation",
                login=self.bot.login,
                permissions=dict(issued.permissions),
                installation=installation,
                repo_ids=issued.repo_ids,
                user_id=self.bot.id,
            )
        personal = self.personal_tokens.get(credential)
        if personal is not None:
            user = self.user(personal.login)
            return Principal(
                kind="user",
                login=user.login,
                permissions={"*": "admin"},
                repo_ids=personal.repo_ids,
                user_id=user.id,
            )
        if looks_like_jwt(credential):
            app = self._app_principal(credential)
            if route.auth == "any":
                return app
            # A valid App JWT is not an installation: it may only use the /app endpoints.
            raise forbidden_integration()
        raise ApiError(401, "Bad credentials")

    def _peek(self, request: web.Request) -> Principal:
        """Who sent a request to an unknown route (it is still billed to them)."""
        fallback = Route("GET", "", lambda call: Reply(), auth="any", repo=False)
        try:
            return self._authenticate(fallback, request.headers.get("authorization"))
        except ApiError:
            return ANONYMOUS

    def _app_principal(self, credential: str) -> Principal:
        try:
            verify_app_jwt(
                credential,
                public_key_pem=self.public_key_pem,
                app_id=self.app_id,
                client_id=self.client_id,
                now=time.time(),
            )
        except JwtRejected as rejected:
            raise ApiError(401, str(rejected)) from rejected
        return Principal(kind="app", login=self.app_slug, permissions={}, user_id=self.app_id)

    def _call(
        self, method: str, match: Match, request: web.Request, body: bytes, principal: Principal
    ) -> Call:
        call = Call(
            fake=self,
            method=method,
            route=match.route,
            params=match.params,
            query=request.query,
            headers={key.lower(): value for key, value in request.headers.items()},
            raw_body=body,
            principal=principal,
            repo_suffix=match.repo_suffix,
            permissions=dict(principal.permissions),
        )
        if match.route.repo:
            repo, permissions = self._resolve_repo(match.params, principal)
            call.repo_or_none = repo
            call.permissions = permissions
        if match.route.permissions and not any(
            allows(call.permissions, name, level) for name, level in match.route.permissions
        ):
            raise forbidden_integration()
        if call.repo_or_none is not None and call.repo_or_none.archived and method in WRITES:
            raise repo_archived()
        return call

    def _resolve_repo(
        self, params: dict[str, str], principal: Principal
    ) -> tuple[Repo, dict[str, str]]:
        if "repo_id" in params:
            repo = self.repo_by_id(int(params["repo_id"]))
        else:
            repo = self.find_repo(params["owner"], params["repo"])
        if repo is None:
            raise not_found()
        if principal.kind == "app":
            return repo, {}
        if principal.kind == "installation" and principal.installation is not None:
            installed = repo.id in principal.installation.repo_ids and (
                principal.repo_ids is None or repo.id in principal.repo_ids
            )
            if installed:
                return repo, dict(principal.permissions)
        elif principal.kind == "user" and (
            principal.repo_ids is None or repo.id in principal.repo_ids
        ):
            return repo, dict(principal.permissions)
        if not repo.private:
            return repo, dict(PUBLIC_READ)
        raise not_found()

    def _respond(
        self, method: str, request: web.Request, outcome: _Outcome, request_id: str
    ) -> web.Response:
        reply, route = outcome.reply, outcome.route
        headers = dict(self._static_headers)
        headers.update(
            {
                "x-github-api-version-selected": API_VERSION,
                "x-github-media-type": "github.v3; format=json",
                "x-github-request-id": request_id,
            }
        )
        if route is not None and route.permissions:
            headers["x-accepted-github-permissions"] = "; ".join(
                f"{name}={level}" for name, level in route.permissions
            )
        status = reply.status
        if reply.raw is not None:
            data = reply.raw
            content_type: str | None = reply.content_type or "application/octet-stream"
        elif reply.body is None and status in (204, 304):
            data, content_type = b"", None
        else:
            data = json.dumps(reply.body, separators=(",", ":"), ensure_ascii=False).encode()
            content_type = JSON_TYPE
        if method in ("GET", "HEAD") and status == 200:
            etag = f'W/"{hashlib.sha256(data).hexdigest()}"'
            headers["etag"] = etag
            headers["cache-control"] = "private, max-age=60, s-maxage=60"
            headers["vary"] = "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding"
            if _etag_matches(request.headers.get("if-none-match"), etag):
                status, data, content_type = 304, b"", None
        bucket_key = outcome.principal.rate_key
        if outcome.charge and status != 304 and (route is None or route.counts_against_rate_limit):
            self.rate_limits.charge(bucket_key)
        headers.update(self.rate_limits.bucket(bucket_key).headers())
        headers.update(reply.headers)
        if content_type is not None:
            headers["content-type"] = content_type
        if method == "HEAD":
            data = b""
        return web.Response(status=status, body=data, headers=headers)


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    wanted = etag.removeprefix("W/")
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == wanted:
            return True
    return False
