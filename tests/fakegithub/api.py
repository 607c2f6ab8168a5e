"""Request plumbing shared by the route modules: routing, errors, bodies, pagination."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, unquote

from multidict import MultiMapping

from .auth import Principal
from .state import Repo

if TYPE_CHECKING:
    from .server import FakeGitHub

DOCS = "https://docs.github.com/rest"
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100

AuthKind = Literal["installation", "app", "any"]
Permission = tuple[str, str]


class ApiError(Exception):
    """An error response in GitHub's shape: ``{message, documentation_url, status}``."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        errors: list[Any] | None = None,
        documentation_url: str = DOCS,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message or HTTPStatus(status).phrase)
        self.status = status
        self.message = message or HTTPStatus(status).phrase
        self.errors = errors
        self.documentation_url = documentation_url
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            body["errors"] = self.errors
        body["documentation_url"] = self.documentation_url
        body["status"] = str(self.status)
        return body


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def issues_disabled() -> ApiError:
    """What the issues API answers in a repository with Issues turned off ("If issues are
    disabled in the repository, the API returns a 410 Gone status")."""
    return ApiError(410, "Issues are disabled for this repo",
                    documentation_url="https://docs.github.com/v3/issues/")


#: GitHub's answers to a write it refuses for good (see `issue_locked`, `repo_archived`).
MSG_LOCKED = "Unable to create comment because issue is locked."
MSG_LOCKED_REACTION = "Unable to create reaction because issue is locked."
MSG_ARCHIVED = "Repository was archived so is read-only."
MSG_SUSPENDED = "This installation has been suspended"


def issue_locked(what: str = "comment") -> ApiError:
    """A comment (or reaction) by someone who is not a collaborator on a locked conversation
    (probot/stale#25, renovatebot/renovate#6215, semantic-release/github#221: an App's comment
    is refused so). Reactions are refused there too (github/gh-aw#15966); GitHub documents no
    message for them, so the reaction's is the comment's, reworded."""
    return ApiError(403, MSG_LOCKED if what == "comment" else MSG_LOCKED_REACTION,
                    documentation_url="https://docs.github.com/articles/locking-conversations/")


def repo_archived() -> ApiError:
    """Any write to an archived repository."""
    return ApiError(403, MSG_ARCHIVED)


def forbidden_integration() -> ApiError:
    return ApiError(403, "Resource not accessible by integration")


def validation_failed(errors: list[dict[str, Any]]) -> ApiError:
    """The classic resource validation error (issues, pulls, labels, reactions)."""
    return ApiError(422, "Validation Failed", errors=errors)


def missing_fields(resource: str, fields: Sequence[str]) -> ApiError:
    """Required body fields are absent: ``Invalid request.`` plus one error per field."""
    detail = "\n".join(f'"{name}" wasn\'t supplied.' for name in fields)
    return ApiError(
        422,
        f"Invalid request.\n\n{detail}",
        errors=[{"resource": resource, "field": name, "code": "missing_field"} for name in fields],
    )


def invalid_field(resource: str, name: str, detail: str) -> ApiError:
    return ApiError(
        422,
        f"Invalid request.\n\n{detail}",
        errors=[{"resource": resource, "field": name, "code": "invalid"}],
    )


@dataclass
class Reply:
    """A handler's response before the common headers are added."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def empty(cls, status: int = 204) -> Reply:
        return cls(status=status)


Handler = Callable[["Call"], Reply]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str  # below /repos/{owner}/{repo} when ``repo`` is true
    handler: Handler
    auth: AuthKind = "installation"
    permissions: tuple[Permission, ...] = ()  # any one of them suffices
    repo: bool = True
    counts_against_rate_limit: bool = True


def _pattern_regex(pattern: str) -> str:
    out = ""
    for literal, name, star in re.findall(r"([^{]*)(?:\{(\w+)(\*?)\})?", pattern):
        out += re.escape(literal)
        if name:
            out += f"(?P<{name}>.*)" if star else f"(?P<{name}>[^/]+)"
    return out


@dataclass(frozen=True)
class _Compiled:
    route: Route
    regex: re.Pattern[str]
    multi_segment: frozenset[str]


@dataclass(frozen=True)
class Match:
    route: Route
    params: dict[str, str]
    repo_suffix: str  # the path below the repository prefix, for Link headers


class Router:
    """Matches raw (still percent-encoded) paths, so ``/`` and ``%2F`` stay distinct.

    Repository routes answer both ``/repos/{owner}/{repo}/...`` and the
    ``/repositories/{id}/...`` form that GitHub uses in its Link headers.
    """

    def __init__(self, routes: Sequence[Route]) -> None:
        self._compiled: list[_Compiled] = []
        for route in routes:
            body = _pattern_regex(route.pattern)
            stars = frozenset(re.findall(r"\{(\w+)\*\}", route.pattern))
            prefixes = (
                [r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)", r"/repositories/(?P<repo_id>\d+)"]
                if route.repo
                else [""]
            )
            for prefix in prefixes:
                regex = re.compile(f"^{prefix}(?P<_suffix>{body})$")
                self._compiled.append(_Compiled(route, regex, stars))

    def match(self, method: str, raw_path: str) -> Match | None:
        if len(raw_path) > 1:
            raw_path = raw_path.rstrip("/")
        for compiled in self._compiled:
            if compiled.route.method != method:
                continue
            found = compiled.regex.match(raw_path)
            if found is None:
                continue
            params: dict[str, str] = {}
            for name, value in found.groupdict().items():
                if name == "_suffix" or value is None:
                    continue
                if name in compiled.multi_segment and "%2f" in value.lower():
                    # An encoded slash is not a path separator: such a path names no file.
                    raise not_found()
                params[name] = unquote(value)
            return Match(compiled.route, params, found.group("_suffix"))
        return None


@dataclass
class Call:
    """Everything a handler needs about one request."""

    fake: FakeGitHub
    method: str
    route: Route
    params: Mapping[str, str]
    query: MultiMapping[str]
    headers: Mapping[str, str]
    raw_body: bytes
    principal: Principal
    repo_suffix: str
    repo_or_none: Repo | None = None
    permissions: Mapping[str, str] = field(default_factory=dict)

    @property
    def repo(self) -> Repo:
        if self.repo_or_none is None:
            raise not_found()
        return self.repo_or_none

    @property
    def accept(self) -> str:
        return self.headers.get("accept", "").lower()

    def json(self, *, required: bool = False) -> dict[str, Any]:
        """The JSON object body; ``{}`` for an empty body unless ``required``."""
        if not self.raw_body.strip():
            if required:
                raise ApiError(400, "Problems parsing JSON")
            return {}
        try:
            data = json.loads(self.raw_body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, "Problems parsing JSON") from exc
        if not isinstance(data, dict):
            raise ApiError(400, "Problems parsing JSON")
        return data

    def int_param(self, name: str) -> int:
        value = self.params[name]
        if not value.isdigit():
            raise not_found()
        return int(value)

    def page_url(self, page: int) -> str:
        """Absolute URL of another page of this list, in GitHub's ``/repositories/<id>`` form."""
        if self.repo_or_none is not None:
            path = f"/repositories/{self.repo_or_none.id}{self.repo_suffix}"
        else:
            path = self.repo_suffix
        pairs = [(key, value) for key, value in self.query.items() if key != "page"]
        pairs.append(("page", str(page)))
        query = "&".join(f"{quote(key, safe='')}={quote(value, safe=',:')}" for key, value in pairs)
        return f"{self.fake.base_url}{path}?{query}"


LEVELS: Mapping[str, int] = {"read": 1, "write": 2, "admin": 3}


def allows(permissions: Mapping[str, str], name: str, level: str) -> bool:
    """Whether ``permissions`` (an App permission map, ``*`` = everything) grants ``name:level``."""
    if "*" in permissions:
        return True
    granted = permissions.get(name)
    return granted is not None and LEVELS.get(granted, 0) >= LEVELS[level]


def require(call: Call, *alternatives: Permission) -> None:
    """403 unless the request's permissions grant one of ``alternatives``."""
    if not any(allows(call.permissions, name, level) for name, level in alternatives):
        raise forbidden_integration()


def _int_query(call: Call, name: str, default: int) -> int:
    value = call.query.get(name, "")
    return int(value) if value.isdigit() else default


def paginate(call: Call, items: Sequence[Any], key: str | None = None) -> Reply:
    """Serve one page of ``items`` with GitHub's ``Link`` header.

    With ``key`` the page is wrapped as ``{"total_count": n, key: [...]}``.
    """
    per_page = min(max(_int_query(call, "per_page", DEFAULT_PER_PAGE), 1), MAX_PER_PAGE)
    if call.query.get("per_page", "") == "0":
        per_page = DEFAULT_PER_PAGE
    page = max(_int_query(call, "page", 1), 1)
    last = max(math.ceil(len(items) / per_page), 1)
    chunk = list(items[(page - 1) * per_page : page * per_page])
    links: list[str] = []
    if page < last:
        links += [
            f'<{call.page_url(page + 1)}>; rel="next"',
            f'<{call.page_url(last)}>; rel="last"',
        ]
    if page > 1:
        links += [f'<{call.page_url(1)}>; rel="first"', f'<{call.page_url(page - 1)}>; rel="prev"']
    body: Any = chunk if key is None else {"total_count": len(items), key: chunk}
    headers = {"link": ", ".join(links)} if links else {}
    return Reply(200, body, headers=headers)


def require_str(data: Mapping[str, Any], name: str, resource: str) -> str:
    value = data.get(name)
    if value is None or value == "":
        raise missing_fields(resource, [name])
    if not isinstance(value, str):
        raise invalid_field(
            resource, name, f"For 'properties/{name}', {json.dumps(value)} is not a string."
        )
    return value
