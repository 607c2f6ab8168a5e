"""Fuzzing the webhook: random headers and bodies, signed bodies that are not JSON, and
payloads valid against GitHub's official webhook schemas with surprising values in the
fields foldbot reads. Every answer is 2xx, 400, 401 or 413; nothing logs a traceback."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import logging
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import tests.hypothesis_compat  # noqa: F401  (before any from_schema draw)
from tests.fakegithub import FakeGitHub
from tests.harness import (EXAMPLES, INSTALLATION, SECRET, comment_payload, installation_payload, sglang_world, sign,
                           start_bot)
from tests.paths import FIXTURES

SCHEMAS = FIXTURES / "github" / "webhooks" / "official-schemas"
ALLOWED = {200, 202, 400, 401, 413}
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

#: The fields foldbot reads, per event: their values are drawn from the official schema's own
#: sub-schema (any integer, any string...), so the payload stays schema-valid.
READ = {
    "workflow_run": ("workflow_run.completed", (
        "workflow_run.id", "workflow_run.head_sha", "workflow_run.path", "workflow_run.workflow_id",
        "workflow_run.run_attempt", "workflow_run.event", "workflow_run.head_branch", "workflow_run.display_title",
        "workflow_run.head_repository.owner.login", "repository.full_name", "repository.default_branch",
        "installation.id")),
    "issue_comment": ("issue_comment.created", (
        "issue.number", "comment.id", "comment.body", "comment.created_at", "comment.user.login", "comment.user.type",
        "repository.full_name", "installation.id")),
    "pull_request": ("pull_request.synchronize", (
        "number", "before", "pull_request.head.sha", "repository.full_name", "installation.id")),
    "installation": ("installation.created", ("installation.id", "repositories")),
}


def _deref(root: dict[str, Any], node: Any, depth: int = 0) -> Any:
    """`node` with its local `$ref`s inlined (the leaves foldbot reads are shallow)."""
    if depth > 12:
        return {}
    if isinstance(node, list):
        return [_deref(root, item, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = root["$defs"][node["$ref"].removeprefix("#/$defs/")]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _deref(root, node, depth + 1)
    return {k: _deref(root, v, depth + 1) for k, v in node.items()}


def _child(root: dict[str, Any], node: dict[str, Any], key: str) -> dict[str, Any]:
    node = _deref(root, node)
    for part in [node, *node.get("allOf", []), *node.get("anyOf", []), *node.get("oneOf", [])]:
        if key in part.get("properties", {}):
            return _deref(root, part["properties"][key])
    raise KeyError(key)


def _leaf(root: dict[str, Any], path: str) -> dict[str, Any]:
    node = root
    for key in path.split("."):
        node = _child(root, node, key)
    return {k: v for k, v in node.items() if k not in ("examples", "description", "title")}


def _put(payload: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = payload
    for key in parents:
        node = node.setdefault(key, {}) if node.get(key) is None else node[key]
    node[last] = value


@pytest.fixture(scope="module")
def schemas() -> dict[str, tuple[jsonschema.Draft202012Validator, dict[str, st.SearchStrategy[Any]]]]:
    out = {}
    for event, (name, paths) in READ.items():
        root = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        out[event] = (jsonschema.Draft202012Validator(root), {p: from_schema(_leaf(root, p)) for p in paths})
    return out


def _bases() -> dict[str, dict[str, Any]]:
    fake = FakeGitHub()
    world = sglang_world(fake, runs=1)
    pr = world.runs[0]["pull_requests"][0]["number"]
    synchronize = json.loads((EXAMPLES / "pull_request" / "synchronize.payload.json").read_text())
    for side in ("head", "base"):  # the one gap between the octokit example and the official schema
        synchronize["pull_request"][side]["repo"].setdefault("has_discussions", False)
    synchronize["installation"] = {"id": INSTALLATION, "node_id": "x"}
    run = json.loads((EXAMPLES / "workflow_run" / "completed.with-pull-requests.payload.json").read_text())
    run["installation"] = {"id": INSTALLATION, "node_id": "x"}
    run["repository"]["full_name"] = world.repo.full_name
    return {"workflow_run": run,
            "issue_comment": comment_payload(world, pr, "/fold help", "octocat"), "pull_request": synchronize,
            "installation": installation_payload(fake, "created")[1],
            # (no official schema for it among the fixtures: the payload check is held to it all the same)
            "installation_repositories": installation_payload(fake, "added", added=[world.repo],
                                                              removed=[world.repo])[1]}


def test_fuzzed_deliveries_never_500_nor_log_a_traceback(schemas: Any, caplog: pytest.LogCaptureFixture) -> None:
    bases = _bases()
    for event in READ:
        assert [e.message for e in schemas[event][0].iter_errors(bases[event])] == [], event  # valid starting points
    loop = asyncio.new_event_loop()
    numbers = itertools.count()
    statuses: dict[str, set[int]] = {"raw": set(), "signed": set(), "schema": set()}

    async def setup() -> Any:
        fake = FakeGitHub()
        await fake.start()
        sglang_world(fake, runs=2)
        bot, runner = await start_bot(fake)
        return fake, bot, runner

    fake, bot, runner = loop.run_until_complete(setup())

    def post(body: bytes, headers: dict[str, str]) -> int:
        async def go() -> int:
            async with bot.session.post(f"{bot.url}/webhook", data=body, headers=headers) as response:
                await response.read()
                return response.status
        return loop.run_until_complete(go())

    header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
    events = st.sampled_from(["workflow_run", "issue_comment", "pull_request", "installation", "installation_repositories",
                              "ping", "push", ""]) | header_text

    @FUZZ
    @given(body=st.binary(max_size=2048), event=events, delivery=header_text,
           signature=st.sampled_from(["good", "bad", "none"]) | header_text,
           extra=st.dictionaries(st.from_regex(r"X-[A-Za-z]{1,12}", fullmatch=True), header_text, max_size=3))
    def raw(body: bytes, event: str, delivery: str, signature: str, extra: dict[str, str]) -> None:
        headers = {**extra, "X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
        if signature == "good":
            headers["X-Hub-Signature-256"] = sign(body)
        elif signature != "none":
            headers["X-Hub-Signature-256"] = signature if signature != "bad" else sign(body, "not " + SECRET)
        status = post(body, headers)
        statuses["raw"].add(status)
        assert status in ALLOWED

    @FUZZ
    @given(event=st.sampled_from(sorted(READ)), data=st.data())
    def signed_not_json(event: str, data: st.DataObject) -> None:
        text = json.dumps(bases[event])
        cut = data.draw(st.integers(0, len(text) - 1))
        body = data.draw(st.sampled_from([text[:cut].encode(), text.encode() + b"}", b"[" * 5000,
                                          b'{"number": ' + b"9" * 5000 + b"}", text.encode("utf-16")]))
        status = post(body, {"X-GitHub-Event": event, "X-GitHub-Delivery": f"nj-{cut}", "X-Hub-Signature-256": sign(body)})
        statuses["signed"].add(status)
        assert status == 400

    @FUZZ
    @given(event=st.sampled_from(sorted(READ)), data=st.data())
    def schema_valid(event: str, data: st.DataObject) -> None:
        validator, leaves = schemas[event]
        payload = copy.deepcopy(bases[event])
        for path in data.draw(st.lists(st.sampled_from(sorted(leaves)), min_size=1, max_size=4, unique=True)):
            _put(payload, path, data.draw(leaves[path]))
        assert validator.is_valid(payload)
        body = json.dumps(payload).encode()
        delivery = f"sv-{next(numbers)}"
        status = post(body, {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sign(body)})
        statuses["schema"].add(status)
        assert status in (202, 400)

    try:
        with caplog.at_level(logging.INFO):
            raw()
            signed_not_json()
            schema_valid()
            loop.run_until_complete(asyncio.wait_for(bot.settle(), 120))
    finally:
        async def teardown() -> None:
            await bot.session.close()
            await runner.cleanup()
            await fake.close()
        loop.run_until_complete(teardown())
        loop.close()
    assert "Traceback" not in caplog.text
    assert [r.getMessage() for r in caplog.records if r.exc_info or (r.levelno >= logging.ERROR and
                                                                       "GitHub call failed" not in r.getMessage())] == []
    assert statuses["signed"] == {400}
    assert {202, 400} <= statuses["schema"]  # some surprising payloads pass the checks and reach the handlers
    assert {400, 401} <= statuses["raw"]
