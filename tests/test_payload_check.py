"""The check before the answer (`bot.payload.check`) has two paths: msgspec's typed decode of
the fields foldbot reads (fast, no payload built), and, for a body it refuses, the whole
parse with `invalid_field` naming the field. The fast path must never accept what the
field checks refuse (a handler would then read a bad value), and should accept what they
accept (else the answer is slow for nothing). Both are held to the same verdicts here, on
GitHub's examples with surprising values put in every field foldbot reads."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import payload
from bot.payload import FIELDS, INSTALLATION, PayloadError, check, invalid_field, parse
from tests.test_webhook_fuzz import _bases

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

#: Values at the edges of every check: ids at 0 and 2**63, SHAs in capitals or all zero,
#: names with a newline or `..`, text with NUL or over 1,024 characters, lone surrogates, times.
EDGES: list[Any] = [
    None, True, False, 0, 1, -1, 7, 2**63 - 1, 2**63, 10**30, 1.0, 1.5, "", "x", "\x00", "a\x00b", "x" * 1024,
    "x" * 1025, "\ud800", "a\ud800b", "a/b", "a/b\n", "a..b/c", "sgl-project/sglang", "a" * 101 + "/b",
    "0" * 40, "a" * 40, "A" * 40, "a" * 39, "a" * 41, "a" * 40 + "\n", "2026-12-04T08:00:00Z",
    "2026-12-04T08:00:00+00:00", "2026-13-04T08:00:00Z", "2026-12-04T08:00:00.1234567890123456789012345Z", [], {},
    [{}], [None], [{"number": 0}], [{"number": 5}], {"login": "x"}, {"id": 3}, {"owner": None}, {"owner": {}},
]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)


def _paths(event: str) -> list[str]:
    return [path for path, _, _ in FIELDS[event] + INSTALLATION]


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, for `...`, remove) `path`; `*` is the first item of an array, made if need be."""
    parts = path.replace(".*", ".0").split(".")
    node: Any = data
    for part in parts[:-1]:
        key: Any = int(part) if part.isdigit() else part
        if isinstance(node, list) and isinstance(key, int):
            while len(node) <= key:
                node.append({})
            node = node[key]
        elif isinstance(node, dict):
            if not isinstance(node.get(key), (dict, list)):
                node[key] = [] if parts[parts.index(part) + 1].isdigit() else {}
            node = node[key]
        else:
            return
    last: Any = int(parts[-1]) if parts[-1].isdigit() else parts[-1]
    if isinstance(node, dict):
        if value is ...:
            node.pop(last, None)
        else:
            node[last] = value
    elif isinstance(node, list) and isinstance(last, int):
        while len(node) <= last:
            node.append({})
        if value is not ...:
            node[last] = value


def _slow(event: str, body: bytes, need: bool) -> tuple[bool, int | None]:
    try:
        data = parse(body)
    except PayloadError:
        return False, None
    if invalid_field(event, data, need_installation=need) is not None:
        return False, None
    found = data.get("installation") if isinstance(data.get("installation"), dict) else None
    return True, (int(found["id"]) if found and found.get("id") else None)


@pytest.fixture(scope="module")
def bases() -> dict[str, dict[str, Any]]:
    return _bases()


@pytest.mark.parametrize("event", sorted(FIELDS))
def test_the_two_paths_agree_on_surprising_values(bases: dict[str, dict[str, Any]], event: str) -> None:
    @PROPERTY
    @given(changes=st.lists(st.tuples(st.sampled_from(_paths(event)), st.sampled_from([*EDGES, ...]) | JSON),
                            min_size=1, max_size=3),
           ascii_only=st.booleans(), need=st.booleans())
    def agree(changes: list[tuple[str, Any]], ascii_only: bool, need: bool) -> None:
        data = copy.deepcopy(bases[event])
        for path, value in changes:
            _put(data, path, copy.deepcopy(value))  # (a later change may put a field into it)
        body = json.dumps(data, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
        assert payload._fast(event, body, need) == _slow(event, body, need)

    agree()


@pytest.mark.parametrize("event", sorted(FIELDS))
def test_the_two_paths_agree_on_every_edge_in_every_field(bases: dict[str, dict[str, Any]], event: str) -> None:
    disagree = []
    for path in _paths(event):
        for value in [*EDGES, ...]:
            data = copy.deepcopy(bases[event])
            _put(data, path, copy.deepcopy(value))
            for ascii_only in (True, False):
                body = json.dumps(data, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
                for need in (False, True):
                    if payload._fast(event, body, need) != _slow(event, body, need):
                        disagree.append((path, value, ascii_only, need))
    assert disagree == []


@pytest.mark.parametrize("event", sorted(FIELDS))
def test_a_good_payload_takes_the_fast_path(bases: dict[str, dict[str, Any]], event: str) -> None:
    body = json.dumps(bases[event]).encode()
    assert payload._fast(event, body, True) == (True, bases[event]["installation"]["id"])


def test_check_names_the_field_or_what_cannot_be_read(bases: dict[str, dict[str, Any]]) -> None:
    data = copy.deepcopy(bases["workflow_run"])
    data["workflow_run"]["pull_requests"] = [{"number": 3}, {"number": "4"}]
    with pytest.raises(PayloadError, match=r"^the workflow_run payload's `workflow_run\.pull_requests\[1\]\.number` "
                                           r"must be a positive integer below 2\*\*63$"):
        check("workflow_run", json.dumps(data).encode(), need_installation=False)
    del data["installation"]
    data["workflow_run"]["pull_requests"] = []
    body = json.dumps(data).encode()
    assert check("workflow_run", body, need_installation=False) is None
    with pytest.raises(PayloadError, match=r"^the workflow_run payload's `installation\.id` must be a positive"):
        check("workflow_run", body, need_installation=True)
    with pytest.raises(PayloadError, match="^the body is not JSON$"):
        check("workflow_run", body[:-1], need_installation=False)


@pytest.mark.parametrize("extra,accepted", [
    (b'"\xff"', False),  # not UTF-8 in a field foldbot does not read: still not a body the worker can read
    (b"7" * 5000, True),  # an integer Python cannot read as one, where foldbot reads none
])
def test_what_the_check_accepts_the_worker_reads(bases: dict[str, dict[str, Any]], extra: bytes,
                                                 accepted: bool) -> None:
    data = bases["workflow_run"]
    body = json.dumps(data).encode()[:-1] + b', "extra": ' + extra + b"}"
    if accepted:
        assert check("workflow_run", body, need_installation=True) == data["installation"]["id"]
        assert parse(body)["extra"] == float("inf")
    else:
        with pytest.raises(PayloadError, match="^the body is not UTF-8 JSON$"):
            check("workflow_run", body, need_installation=True)


def test_nesting_in_fields_foldbot_does_not_read_is_accepted_and_read_by_the_worker(
        bases: dict[str, dict[str, Any]]) -> None:
    """Deep but readable nesting anywhere is no danger (nothing walks the payload) and is
    read the same by the check and by the worker's parse."""
    data = copy.deepcopy(bases["workflow_run"])
    body = json.dumps(data).encode()[:-1] + b', "extra": ' + b"[" * 500 + b"]" * 500 + b"}"
    assert check("workflow_run", body, need_installation=True) == data["installation"]["id"]
    assert parse(body)["workflow_run"]["id"] == data["workflow_run"]["id"]
