"""What a webhook payload must hold before foldbot accepts it: every field a handler
reads, type-checked, so that a signed but malformed delivery is a 400 naming the
field and never a 500 or a traceback in a handler.

`check` is what runs before the answer: the fields of a handled event, checked in
one pass of msgspec over the body against types made from FIELDS, without building
the payload (7 µs for a 14 KiB `workflow_run`); only a body that fails it is read
whole (`parse`) for `invalid_field` to name the first field that is missing or of the
wrong type. The worker reads the payload later with `parse`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Callable

import msgspec

#: Ids are positive and fit in a signed 64-bit integer, as GitHub's do.
MAX_ID = 2**63

_SHA = re.compile(r"[0-9a-f]{40}\Z")
_FULL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}\Z")


class PayloadError(ValueError):
    """The body is not a JSON payload foldbot reads; the message says why."""


def parse(body: bytes) -> Any:
    """The JSON value of `body`; PayloadError when it is not UTF-8 JSON or nests deeper
    than the reader goes (about a thousand levels).

    msgspec reads a well-formed body (twice the standard library's speed); what it
    refuses, the standard library reads again, so that what is accepted and every
    error message stay those of `json` (msgspec refuses lone surrogates, which `json`
    reads and the field checks then judge). An integer too long for Python to read
    (over 4,300 digits) is read as a float: the field checks refuse it where foldbot
    reads one, and anywhere else it does not matter."""
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return json.loads(body.decode("utf-8"), parse_int=_integer)
    except RecursionError:
        raise PayloadError("the body nests too deeply to read") from None
    except UnicodeDecodeError:
        raise PayloadError("the body is not UTF-8 JSON") from None
    except json.JSONDecodeError:
        raise PayloadError("the body is not JSON") from None


def _integer(digits: str) -> int | float:
    return int(digits) if len(digits) <= 4000 else float(digits)


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
        ("workflow_run.pull_requests.*", is_object, False),  # (GitHub's schema: an object or null)
        ("workflow_run.pull_requests.*.number", is_id, False),
        ("workflow_run.pull_requests.*.head", is_object, False),
        ("workflow_run.pull_requests.*.head.sha", is_sha, False),
        ("workflow_run.pull_requests.*.base", is_object, False),
        ("workflow_run.pull_requests.*.base.ref", is_str, False),
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
        ("issue.user", is_object, False),  # a plain issue's author: is it foldbot's dashboard?
        ("issue.user.login", is_str, False),
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
    "installation": (  # (its `installation.id`: INSTALLATION, as every event's)
        ("action", is_text, True),
        ("installation.account", is_object, False),
        ("installation.account.login", is_str, False),
    ),
    "installation_repositories": (
        ("action", is_text, True),
        ("installation.account", is_object, False),
        ("installation.account.login", is_str, False),
        ("repositories_added", is_list, False),
        ("repositories_added.*", is_object, True),
        ("repositories_added.*.full_name", is_full_name, True),
        ("repositories_removed", is_list, False),
        ("repositories_removed.*", is_object, True),
        ("repositories_removed.*.full_name", is_full_name, True),
    ),
}
#: Every event's `installation`: an App acts per installation.
INSTALLATION: tuple[tuple[str, Check, bool], ...] = (("installation", is_object, False), ("installation.id", is_id, False))


def _leaves(data: Any, parts: tuple[str, ...]) -> list[tuple[tuple[int, ...], Any]]:
    """(array indices taken, value) of every node at `parts`, skipping what a missing,
    null or non-object parent leaves out; a missing leaf is `...`."""
    nodes: list[tuple[tuple[int, ...], Any]] = [((), data)]
    for part in parts:
        following: list[tuple[tuple[int, ...], Any]] = []
        for at, node in nodes:
            if part == "*":
                if type(node) is list:
                    following += [((*at, i), item) for i, item in enumerate(node)]
            elif type(node) is dict:
                following.append((at, node.get(part, ...)))
        nodes = following
    return nodes


def _leaf(data: Any, parts: tuple[str, ...]) -> tuple[tuple[tuple[int, ...], Any], ...]:
    """`_leaves` of a path without `*` (most of them), without building lists."""
    node = data
    for part in parts[:-1]:
        node = node.get(part) if type(node) is dict else None
        if node is None:
            return ()
    return (((), node.get(parts[-1], ...)),) if type(node) is dict else ()


def _where(parts: tuple[str, ...], at: tuple[int, ...]) -> str:
    """The dotted name of a field, array indices filled in: `workflow_run.pull_requests[0].number`."""
    indices = iter(at)
    out = ""
    for part in parts:
        out = f"{out}[{next(indices)}]" if part == "*" else (f"{out}.{part}" if out else part)
    return out


#: FIELDS and INSTALLATION with their paths split once.
_COMPILED: dict[str, tuple[tuple[tuple[str, ...], Check, bool], ...]] = {
    event: tuple((tuple(path.split(".")), check, required) for path, check, required in (*fields, *INSTALLATION))
    for event, fields in FIELDS.items()
}
_COMPILED_OTHER = tuple((tuple(path.split(".")), check, required) for path, check, required in INSTALLATION)


def invalid_field(event: str, data: Any, *, need_installation: bool) -> tuple[str, str] | None:
    """(field, what it must be) for the first field of `event`'s payload that is
    missing or of the wrong type, else None."""
    if not isinstance(data, dict):
        return "(the payload)", "an object"
    for parts, check, required in _COMPILED.get(event, _COMPILED_OTHER):
        for at, value in (_leaves(data, parts) if "*" in parts else _leaf(data, parts)):
            if value is ... or value is None:
                if required:
                    return _where(parts, at), KINDS[check]
                continue
            if not check(value):
                return _where(parts, at), KINDS[check]
    if need_installation and not is_id((data.get("installation") or {}).get("id")):
        return "installation.id", KINDS[is_id]
    return None


# The fast path: FIELDS as msgspec types. Each check has a type that accepts no more than
# the check does (tests/test_webhook_fuzz.py holds the two to the same verdicts); a check
# msgspec cannot say (is_time) is a plain string here, checked after the decode.
_ID = Annotated[int, msgspec.Meta(gt=0, le=MAX_ID - 1)]
_TYPES: dict[Check, Any] = {
    is_id: _ID,
    is_sha: Annotated[str, msgspec.Meta(pattern=r"^(?!0{40}\Z)[0-9a-f]{40}\Z")],
    is_str: str,
    is_text: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=r"^[^\x00]*\Z")],
    is_full_name: Annotated[str, msgspec.Meta(pattern=r"^(?!.*\.\.)[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}\Z")],
    is_time: Annotated[str, msgspec.Meta(max_length=40)],
    is_object: dict,
    is_list: list,
}
#: Checks the type above does not fully make: run on the decoded value.
_AFTER = (is_time,)


@dataclass
class _Node:
    check: Check = is_object
    required: bool = True
    children: dict[str, "_Node"] = field(default_factory=dict)


def _tree(fields: tuple[tuple[str, Check, bool], ...]) -> _Node:
    root = _Node()
    for path, check, required in fields:
        node = root
        for part in path.split("."):
            node = node.children.setdefault(part, _Node())
        node.check, node.required = check, required
    return root


def _type(node: _Node, name: str, after: list[tuple[tuple[str, ...], Check]], at: tuple[str, ...]) -> Any:
    if node.check is is_list and "*" in node.children:
        item = node.children["*"]
        kind = _type(item, f"{name}Item", after, (*at, "*"))
        return list[kind if item.required else kind | None]  # type: ignore[misc,valid-type]
    if node.check is is_object and node.children:
        fields = []
        for key, child in node.children.items():
            kind = _type(child, f"{name}_{key}", after, (*at, key))
            fields.append((key, kind) if child.required else (key, kind | None, None))
        return msgspec.defstruct(name, fields, kw_only=True)
    if node.check in _AFTER:
        after.append((at, node.check))
    return _TYPES[node.check]


@dataclass(frozen=True)
class _Schema:
    decoder: msgspec.json.Decoder  # type: ignore[type-arg]
    after: tuple[tuple[tuple[str, ...], Check], ...]


def _schema(event: str, need_installation: bool) -> _Schema:
    installation = (("installation", is_object, need_installation), ("installation.id", is_id, need_installation))
    after: list[tuple[tuple[str, ...], Check]] = []
    kind = _type(_tree(FIELDS[event] + installation), f"{event}_payload", after, ())
    return _Schema(msgspec.json.Decoder(kind), tuple(after))


_SCHEMAS = {(event, need): _schema(event, need) for event in FIELDS for need in (False, True)}


def _values_at(value: Any, at: tuple[str, ...]) -> list[Any]:
    values = [value]
    for part in at:
        values = [v for node in values if node is not None
                  for v in (node if part == "*" else (getattr(node, part),))]
    return [v for v in values if v is not None]


def _fast(event: str, body: bytes, need_installation: bool) -> tuple[bool, int | None]:
    """(valid, installation id) by the typed decode; not valid says only "look closer"."""
    schema = _SCHEMAS[(event, need_installation)]
    try:
        body.decode("utf-8")  # the decode skips the fields it does not read unchecked; the worker reads them all
        value = schema.decoder.decode(body)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return False, None
    if not all(check(v) for at, check in schema.after for v in _values_at(value, at)):
        return False, None
    return True, value.installation.id if value.installation is not None else None


def check(event: str, body: bytes, *, need_installation: bool) -> int | None:
    """Whether `body` is a delivery of the handled `event` foldbot can work on: its
    installation id (None when the payload has none); PayloadError saying what is not
    readable or which field is missing or of the wrong type."""
    valid, installation = _fast(event, body, need_installation)
    if valid:
        return installation
    data = parse(body)
    invalid = invalid_field(event, data, need_installation=need_installation)
    if invalid:
        where, what = invalid
        raise PayloadError(f"the {event} payload's `{where}` must be {what}")
    found = data.get("installation") if isinstance(data.get("installation"), dict) else None
    return int(found["id"]) if found and found.get("id") else None
