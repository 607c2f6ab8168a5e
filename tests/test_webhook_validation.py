"""Signed but malformed deliveries: every field a handler reads is type-checked before
the 202, and a bad one is a 400 naming it, one log line, and nothing done. JSON nested
too deep, integers too long to be ids and headers over the limit are refused quietly."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from tests.fakegithub import FakeGitHub
from tests.harness import Bot, comment_payload, sglang_world, sign


def _set(payload: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = payload
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is _DELETE:
        del node[last]
    else:
        node[last] = value


_DELETE = object()
ID = "a positive integer below 2**63"
SHA = "a 40-character hex SHA"

RUN_CASES = [
    ("workflow_run.id", True, ID),
    ("workflow_run.id", 0, ID),
    ("workflow_run.id", -5, ID),
    ("workflow_run.id", 2**63, ID),
    ("workflow_run.id", int("9" * 1000), ID),
    ("workflow_run.id", "123", ID),
    ("workflow_run.id", 12.0, ID),
    ("workflow_run.id", _DELETE, ID),
    ("workflow_run.workflow_id", None, ID),
    ("workflow_run.run_attempt", "1", ID),
    ("workflow_run.head_sha", "0" * 40, SHA),
    ("workflow_run.head_sha", "A" * 40, SHA),
    ("workflow_run.head_sha", "abc", SHA),
    ("workflow_run.head_sha", ["a" * 40], SHA),
    ("workflow_run.path", {"p": 1}, "a non-empty string"),
    ("workflow_run.path", "", "a non-empty string"),
    ("workflow_run.event", 7, "a string"),
    ("workflow_run.head_repository", "sgl-project/sglang", "an object"),
    ("workflow_run.head_repository.owner.login", 5, "a string"),
    ("workflow_run.pull_requests", {"number": 1}, "an array"),
    ("workflow_run.pull_requests.0", "1", "an object"),
    ("workflow_run.pull_requests.0.number", "1", ID),
    ("repository.full_name", "sglang", "`owner/name`"),
    ("repository.full_name", "a/../b", "`owner/name`"),
    ("repository.full_name", ["sgl-project/sglang"], "`owner/name`"),
    ("repository.default_branch", 1, "a string"),
    ("repository", None, "an object"),
    ("installation.id", "31337", ID),
    ("installation.id", False, ID),
    ("installation", _DELETE, ID),
    ("action", 1, "a non-empty string"),
]


@pytest.mark.parametrize("path,value,what", RUN_CASES, ids=[f"{p}={v!r:.20}" for p, v, _ in RUN_CASES])
async def test_a_workflow_run_field_of_the_wrong_type_is_a_400_naming_it(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture, path: str, value: Any, what: str) -> None:
    world = sglang_world(fake_github, runs=1)
    payload = world.payload(world.runs[0]["id"])
    _set(payload, path, value)
    before = len(fake_github.requests)
    with caplog.at_level(logging.INFO):
        status, answer = await bot.deliver("workflow_run", payload, delivery="bad-1")
        await bot.settle()
    named = "installation.id" if path == "installation" else path.replace(".0", "[0]")
    assert (status, answer) == (400, {"error": f"the workflow_run payload's `{named}` must be {what}"})
    assert fake_github.requests[before:] == []
    lines = [r for r in caplog.records if r.name == "foldbot.server"]
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in lines] == [
        ("WARNING", f"delivery bad-1: the workflow_run payload's `{named}` must be {what}", None)]
    assert bot.state.queue.qsize() == 0 and "bad-1" not in bot.state.in_flight


COMMENT_CASES = [
    ("issue.number", "12", ID),
    ("comment.id", True, ID),
    ("comment.body", None, "a string"),
    ("comment.body", ["/dispatch rocm720"], "a string"),
    ("comment.created_at", "yesterday", "an ISO 8601 time"),
    ("comment.created_at", 1700000000, "an ISO 8601 time"),
    ("comment.user", "octocat", "an object"),
    ("comment.user.login", "", "a non-empty string"),
    ("issue.pull_request", "yes", "an object"),
    ("issue.user", "mallory", "an object"),  # read of a plain issue's comment: is the issue the dashboard?
    ("issue.user", 5, "an object"),
    ("issue.user.login", ["foldbot[bot]"], "a string"),
]


@pytest.mark.parametrize("path,value,what", COMMENT_CASES, ids=[f"{p}={v!r:.20}" for p, v, _ in COMMENT_CASES])
async def test_an_issue_comment_field_of_the_wrong_type_is_a_400(fake_github: FakeGitHub, bot: Bot, path: str,
                                                               value: Any, what: str) -> None:
    world = sglang_world(fake_github, runs=1)
    payload = comment_payload(world, world.runs[0]["pull_requests"][0]["number"], "/fold help", "octocat")
    _set(payload, path, value)
    before = len(fake_github.requests)
    status, answer = await bot.deliver("issue_comment", payload)
    await bot.settle()
    assert (status, answer) == (400, {"error": f"the issue_comment payload's `{path}` must be {what}"})
    assert fake_github.requests[before:] == []


@pytest.mark.parametrize("path,value,what", [
    ("number", 0, ID), ("pull_request.head.sha", "f" * 39, SHA), ("pull_request.head", [], "an object"),
    ("before", 1, "a string"),
])
async def test_a_pull_request_field_of_the_wrong_type_is_a_400(fake_github: FakeGitHub, bot: Bot, path: str,
                                                             value: Any, what: str) -> None:
    payload = {"action": "synchronize", "number": 5, "before": "a" * 40,
               "pull_request": {"head": {"sha": "b" * 40}}, "repository": {"full_name": "o/r"},
               "installation": {"id": 1}}
    _set(payload, path, value)
    status, answer = await bot.deliver("pull_request", payload)
    assert (status, answer) == (400, {"error": f"the pull_request payload's `{path}` must be {what}"})


async def test_a_valid_payload_with_optional_fields_null_is_accepted(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    payload = world.payload(world.runs[0]["id"])
    for path in ("workflow_run.conclusion", "workflow_run.head_repository", "workflow_run.pull_requests",
                 "repository.default_branch"):
        _set(payload, path, None)
    status, answer = await bot.deliver("workflow_run", payload, delivery="nulls")
    await bot.settle()
    assert (status, answer) == (202, {"queued": "nulls"})
    assert "nulls" in bot.state.done


async def test_a_null_pull_request_item_github_s_schema_allows_is_skipped(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub's `workflow_run.completed` schema types `pull_requests[*]` as an object or null: a null
    item was answered 400, and nothing was reported."""
    world = sglang_world(fake_github, runs=1)
    payload = world.payload(world.runs[0]["id"])
    payload["workflow_run"]["pull_requests"] = [None, *payload["workflow_run"]["pull_requests"]]
    assert await bot.deliver("workflow_run", payload, delivery="null-item") == (202, {"queued": "null-item"})
    await bot.settle()
    assert "null-item" in bot.state.done
    number = world.runs[0]["pull_requests"][0]["number"]
    assert [c for c in fake_github.comments_on(world.repo, number) if c.user == "foldbot[bot]"]


async def _signed(bot: Bot, body: bytes, event: str = "workflow_run") -> tuple[int, dict[str, Any]]:
    return await bot.post(body, {"X-GitHub-Event": event, "X-GitHub-Delivery": "raw-1", "X-Hub-Signature-256": sign(body)})


@pytest.mark.parametrize("body,error", [
    (b"[" * 100_000 + b"]" * 100_000, "the body nests too deeply to read"),
    (b'{"a":' * 5000 + b"1" + b"}" * 5000, "the body nests too deeply to read"),
    (b'{"action": "completed", "workflow_run": {"id": ' + b"7" * 5000 + b"}}",
     "the workflow_run payload's `workflow_run.id` must be a positive integer below 2**63"),
    (b"\xff\xfe{}", "the body is not UTF-8 JSON"),
    (b'{"truncated": ', "the body is not JSON"),
])
async def test_bodies_that_cannot_be_read_safely_are_a_400(fake_github: FakeGitHub, bot: Bot,
                                                          caplog: pytest.LogCaptureFixture, body: bytes,
                                                          error: str) -> None:
    before = len(fake_github.requests)
    with caplog.at_level(logging.INFO):
        status, answer = await _signed(bot, body)
    assert (status, answer) == (400, {"error": error})
    assert fake_github.requests[before:] == []
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name.startswith("foldbot")] == [
        ("WARNING", f"delivery raw-1: {error}")]
    assert "Traceback" not in caplog.text


async def test_a_header_over_the_limit_is_answered_400_without_a_traceback(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    body = b"{}"
    with caplog.at_level(logging.DEBUG):
        async with bot.session.post(f"{bot.url}/webhook", data=body, headers={
                "X-GitHub-Event": "ping", "X-GitHub-Delivery": "h", "X-Hub-Signature-256": sign(body),
                "X-Padding": "x" * 10_000}) as response:
            status = response.status
    assert status == 400
    assert "Traceback" not in caplog.text
    assert [r.exc_info for r in caplog.records if r.levelno >= logging.WARNING] == [None]
    refused = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(refused) == 1 and refused[0].startswith("refused a request that could not be read: ")
    async with bot.session.get(f"{bot.url}/health") as response:  # the server goes on
        assert response.status == 200


async def test_an_unknown_installation_is_said_gone_without_a_traceback(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """GitHub gives no token for it (404): uninstalled, for good; the delivery is done, with
    one line that says so, not retried nor set aside."""
    world = sglang_world(fake_github, runs=1)
    payload = copy.deepcopy(world.payload(world.runs[0]["id"]))
    payload["installation"]["id"] = 999
    with caplog.at_level(logging.INFO):
        status, _ = await bot.deliver("workflow_run", payload, delivery="lost")
        await bot.settle()
    assert status == 202
    assert "Traceback" not in caplog.text
    assert [r.levelno for r in caplog.records if r.levelno >= logging.WARNING] == []
    said = [r.getMessage() for r in caplog.records if "is gone" in r.getMessage()]
    assert said == ["delivery lost (workflow_run): sgl-project/sglang: the App's installation 999 is gone (the App "
                    "was uninstalled); GitHub refuses it for good (POST /app/installations/999/access_tokens: 404 no "
                    "installation token: Not Found), so it is done, not run again"]
    assert "lost" in bot.state.done


def test_the_server_reads_only_known_events() -> None:
    from bot.payload import FIELDS
    from bot.server import REQUIRED, event_label
    assert set(REQUIRED) == set(FIELDS) == {"workflow_run", "pull_request", "issue_comment", "installation",
                                            "installation_repositories"}
    assert [event_label(e) for e in ("workflow_run", "ping", "push", None, "x" * 500)] == [
        "workflow_run", "ping", "other", "other", "other"]
    assert json.loads(json.dumps(FIELDS, default=str))  # plain data
