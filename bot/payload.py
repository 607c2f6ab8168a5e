"""What a webhook payload must hold before foldbot accepts it: every field a handler
reads, type-checked, so that a signed but malformed delivery is a 400 naming the
field and never a 500 or a traceback in a handler.

`parse` reads the body (bounded nesting, no integer of thousands of digits);
`invalid_field` names the first field of a handled event that is missing or of the
wrong type, or returns None."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Callable

#: Deepest nesting of objects and arrays accepted (GitHub's payloads nest about 6 deep).
MAX_DEPTH = 32
#: Ids are positive and fit in a signed 64-bit integer, as GitHub's do.
MAX_ID = 2**63

_SHA = re.compile(r"[0-9a-f]{40}\Z")
_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}\Z")


class PayloadError(ValueError):
    """The body is not a JSON payload foldbot reads; the message says why."""


def parse(body: bytes) -> Any:
    """The JSON value of `body`; PayloadError when it is not JSON, nests deeper than
    MAX_DEPTH, or holds an integer too long to read."""
    try:
        data = json.loads(body.decode("utf-8"))
    except RecursionError:
        raise PayloadError(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError:
        raise PayloadError("the body is not UTF-8 JSON") from None
    except ValueError as exc:  # JSONDecodeError, or an integer over Python's digit limit
        if isinstance(exc, json.JSONDecodeError):
            raise PayloadError("the body is not JSON") from None
        raise PayloadError("the body holds a number too long to read") from None
    if _depth(data) > MAX_DEPTH:
        raise PayloadError(f"the body nests deeper than {MAX_DEPTH} levels")
    return data


def _depth(data: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def is_id(value: Any) -> bool:
    return type(value) is int and 0 < value < MAX_ID


def is_sha(value: Any) -> bool:
    """A commit SHA: 40 lower-case hex digits, not the all-zero null SHA."""
    return isinstance(value, str) and _SHA.match(value) is not None and value != "0" * 40


def _utf8(value: str) -> bool:
    """Whether a string can be written back (JSON allows lone surrogates; UTF-8 does not)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_str(value: Any) -> bool:
    return isinstance(value, str) and _utf8(value)


def is_text(value: Any) -> bool:
    """A non-empty string without NUL (names, logins, paths, actions)."""
    return isinstance(value, str) and 0 < len(value) <= 1024 and "\x00" not in value and _utf8(value)


def is_full_name(value: Any) -> bool:
    return isinstance(value, str) and _FULL_NAME.match(value) is not None and ".." not in value


def is_time(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def is_object(value: Any) -> bool:
    return isinstance(value, dict)


def is_list(value: Any) -> bool:
    return isinstance(value, list)


Check = Callable[[Any], bool]
#: What each check is called in a 400's message.
KINDS: dict[Check, str] = {
    is_id: "a positive integer below 2**63", is_sha: "a 40-character hex SHA", is_str: "a string",
    is_text: "a non-empty string", is_full_name: "`owner/name`", is_time: "an ISO 8601 time",
    is_object: "an object", is_list: "an array",
}

#: (path, check, required) of every field the handlers read. An optional field may be
#: absent or null; when present it must pass. `*` walks every item of an array.
FIELDS: dict[str, tuple[tuple[str, Check, bool], ...]] = {
    "workflow_run": (
        ("action", is_text, True),
        ("workflow_run", is_object, True),
        ("workflow_run.id", is_id, True),
        ("workflow_run.path", is_text, True),
        ("workflow_run.head_sha", is_sha, True),
        ("workflow_run.workflow_id", is_id, True),
        ("workflow_run.run_attempt", is_id, False),
        ("workflow_run.status", is_str, False),
        ("workflow_run.conclusion", is_str, False),
        ("workflow_run.event", is_str, False),
        ("workflow_run.display_title", is_str, False),
        ("workflow_run.html_url", is_str, False),
        ("workflow_run.created_at", is_str, False),
        ("workflow_run.head_branch", is_str, False),
        ("workflow_run.head_repository", is_object, False),
        ("workflow_run.head_repository.owner", is_object, False),
        ("workflow_run.head_repository.owner.login", is_str, False),
        ("workflow_run.pull_requests", is_list, False),
        ("workflow_run.pull_requests.*", is_object, True),
        ("workflow_run.pull_requests.*.number", is_id, False),
        ("repository", is_object, True),
        ("repository.full_name", is_full_name, True),
        ("repository.default_branch", is_str, False),
    ),
    "pull_request": (
        ("action", is_text, True),
        ("number", is_id, True),
        ("pull_request", is_object, True),
        ("pull_request.head", is_object, True),
        ("pull_request.head.sha", is_sha, True),
        ("before", is_str, False),
        ("repository", is_object, True),
        ("repository.full_name", is_full_name, True),
    ),
    "issue_comment": (
        ("action", is_text, True),
        ("issue", is_object, True),
        ("issue.number", is_id, True),
        ("issue.pull_request", is_object, False),
        ("comment", is_object, True),
        ("comment.id", is_id, True),
        ("comment.body", is_str, True),
        ("comment.created_at", is_time, True),
        ("comment.user", is_object, True),
        ("comment.user.login", is_text, True),
        ("comment.user.type", is_str, False),
        ("repository", is_object, True),
        ("repository.full_name", is_full_name, True),
    ),
}
#: Every event's `installation`: an App acts per installation.
INSTALLATION: tuple[tuple[str, Check, bool], ...] = (("installation", is_object, False), ("installation.id", is_id, False))


def _values(data: Any, path: list[str]) -> list[tuple[str, Any]]:
    """(dotted path, value) of every node at `path`, skipping what a missing or
    null optional parent leaves out; a missing leaf is `...`."""
    nodes: list[tuple[str, Any]] = [("", data)]
    for part in path:
        following: list[tuple[str, Any]] = []
        for where, node in nodes:
            if node is None or node is ...:
                continue
            if part == "*":
                if isinstance(node, list):
                    following += [(f"{where}[{i}]", item) for i, item in enumerate(node)]
            elif isinstance(node, dict):
                following.append((f"{where}.{part}" if where else part, node.get(part, ...)))
        nodes = following
    return nodes


def invalid_field(event: str, data: Any, *, need_installation: bool) -> tuple[str, str] | None:
    """(field, what it must be) for the first field of `event`'s payload that is
    missing or of the wrong type, else None."""
    if not isinstance(data, dict):
        return "(the payload)", "an object"
    checks = FIELDS.get(event, ()) + INSTALLATION
    for path, check, required in checks:
        for where, value in _values(data, path.split(".")):
            if value is ... or value is None:
                if required:
                    return where, KINDS[check]
                continue
            if not check(value):
                return where, KINDS[check]
    if need_installation and not is_id((data.get("installation") or {}).get("id")):
        return "installation.id", KINDS[is_id]
    return None
