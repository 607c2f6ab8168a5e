"""The pure rules of `/dispatch`: which jobs the filter skipped, which gate failed, the cooldown."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.config import RepoConfig
from bot.dispatch import Cooldown, filter_skipped, gate_failure, lane_cooldown, lanes_of
from bot.states import ReplyState
from bot.permissions import effective_role, parse_ci_permissions
from bot.timing import JobMatcher
from tests.paths import ROCM720


def job(name: str, conclusion: str, steps: list | None = None) -> dict:
    return {"name": name, "conclusion": conclusion, "steps": steps or []}


def test_filter_skipped_needs_a_passed_gate_and_unfailed_needs(sglang_before: dict[str, str]) -> None:
    lane = lanes_of({ROCM720: sglang_before[ROCM720]})["rocm720"]
    dispatchable = lane.dispatchable(RepoConfig())
    assert "wait-for-stage-a-amd-rocm720" not in dispatchable and "pr-test-amd-rocm720-finish" not in dispatchable
    jobs = [job("call-gate / pr-gate", "success"), job("check-changes", "success"),
            job("sgl-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)", "skipped"),
            job("stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)", "success"),
            job("wait-for-stage-a-amd-rocm720", "failure"),
            job("stage-b-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)", "skipped")]
    # stage-b needs wait-for-stage-a, which failed: not a filter skip
    assert filter_skipped(lane.workflow, jobs, dispatchable) == ["sgl-kernel-unit-test-amd-rocm720"]
    jobs[1] = job("check-changes", "failure")
    assert filter_skipped(lane.workflow, jobs, dispatchable) == []
    assert gate_failure(jobs, JobMatcher(lane.workflow)) == "`check-changes` failure"


def test_a_job_skipped_after_a_failure_further_up_is_not_a_filter_skip() -> None:
    """SGLang's current lane: stage-a failed, so `wait-for-stage-a` failed, stage-b was skipped,
    `wait-for-stage-b` skipped, and the stage-c jobs skipped: by the failure (GitHub counts every
    job before), not by the change filter. Only a job's direct needs were looked at, so `/dispatch
    rocm720` sent the five stage-c jobs (4- and 8-GPU, mi35x) onto a PR whose stage-a had failed."""
    from tests.sglang_current import LANES, workflow_text

    lane = lanes_of({LANES["rocm720"][0]: workflow_text("rocm720")})["rocm720"]
    dispatchable = lane.dispatchable(RepoConfig())
    stage_c = [j for j in dispatchable if j.startswith("stage-c-")]
    assert len(stage_c) == 5
    jobs = [job("call-gate / pr-gate", "success"), job("check-changes", "success"),
            job("stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)", "failure"),
            job("wait-for-stage-a-amd-rocm720", "failure"), job("wait-for-stage-b-amd-rocm720", "skipped"),
            job("sgl-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)", "skipped"),
            *(job(f"{j} (linux-mi300-8gpu-sglang, 0)", "skipped") for j in stage_c)]
    assert filter_skipped(lane.workflow, jobs, dispatchable) == ["sgl-kernel-unit-test-amd-rocm720"]
    jobs[2:4] = [job("stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)", "success"),
                 job("wait-for-stage-a-amd-rocm720", "success")]  # all passed: the filter skipped them
    assert filter_skipped(lane.workflow, jobs, dispatchable) == ["sgl-kernel-unit-test-amd-rocm720", *stage_c]


def test_cooldown_from_replies() -> None:
    """Per user and lane: the user's latest dispatch of that lane, with the minutes left."""
    now = datetime(2026, 8, 1, 12, 0, tzinfo=timezone.utc)
    replies = [ReplyState("dispatch", 1, "/dispatch amd", "Writer", "2026-08-01T11:42:00Z", lane="amd", run_id=1),
               ReplyState("dispatch", 2, "/dispatch amd", "other", "2026-08-01T11:59:00Z", lane="amd", run_id=2),
               ReplyState("dispatch", 3, "/dispatch rocm720", "writer", "2026-08-01T11:20:00Z", lane="rocm720",
                          run_id=3)]
    cooldown = lane_cooldown(replies, "writer", "amd", now, 30)
    assert cooldown is not None and cooldown.last.run_id == 1 and cooldown.left == 12
    assert lane_cooldown(replies, "writer", "amd", now, 0) is None
    assert lane_cooldown(replies, "newcomer", "amd", now, 30) is None
    assert lane_cooldown(replies, "writer", "rocm720", now, 30) is None  # 40 minutes ago
    assert lane_cooldown(replies[:2], "writer", "rocm720", now, 30) is None  # another lane's dispatch
    # a reply state that recorded no lane (none foldbot writes) holds for every lane
    unnamed = ReplyState("dispatch", 4, "/dispatch amd", "writer", "2026-08-01T11:50:00Z", run_id=4)
    assert lane_cooldown([unnamed], "writer", "rocm720", now, 30) == Cooldown(unnamed, 20)


def test_effective_roles_and_the_allowlist() -> None:
    assert effective_role({"permission": "write", "role_name": "maintain"}) == "maintain"
    assert effective_role({"permission": "read", "role_name": "triage"}) == "triage"
    assert effective_role({"permission": "write", "role_name": "ci-runner"}) == "write"  # a custom role
    # review84 F04: a custom role on maintain reads `permission: write`; its hash says maintain
    custom = {"permission": "write", "role_name": "release-manager",
              "user": {"permissions": {"admin": False, "maintain": True, "push": True, "triage": True, "pull": True}}}
    assert effective_role(custom) == "maintain"
    assert effective_role({**custom, "role_name": "maintain"}) == "maintain"
    assert effective_role({"permission": "read", "role_name": "auditor", "user": {"permissions": {"pull": True}}}) == "read"
    allow = parse_ci_permissions('{"Alice": {"can_rerun_stage": true, "cooldown_interval_minutes": 5}, "bob": 3}')
    assert allow["alice"].can_rerun_stage and allow["alice"].cooldown_minutes == 5 and "bob" not in allow


def test_an_allowlist_number_that_is_no_count_of_minutes_breaks_no_dispatch() -> None:
    """`1e999` (JSON reads it as infinity) raised OverflowError in `int()`, past the `ValueError` its
    reader catches: every `/dispatch`, anyone's, was left "Working on it"."""
    allow = parse_ci_permissions('{"a": {"can_rerun_stage": true, "cooldown_interval_minutes": 1e999}, '
                                 '"b": {"cooldown_interval_minutes": -5}, "c": {"cooldown_interval_minutes": NaN}, '
                                 '"d": {"cooldown_interval_minutes": 90.5}}')
    assert [allow[k].cooldown_minutes for k in "abcd"] == [7 * 24 * 60, None, None, 90]
    with pytest.raises(ValueError, match="^CI_PERMISSIONS.json nests too deeply to read$"):
        parse_ci_permissions("[" * 100_000 + "]" * 100_000)


def test_after_a_crash_a_lane_titled_without_a_sha_is_not_taken_for_an_untitled_one() -> None:
    """A lane without a `pr_head_sha` input titles a dispatched run `[<stage>]` (SGLang's run-name).
    After a crash, foldbot's dispatch of another stage on the branch since the command is
    another command's run, not a sign that the lane cannot be told apart: the command is sent.
    (A reviewer's reproduction.)"""
    import asyncio
    from types import SimpleNamespace

    from bot.dispatch import DispatchPlan, run_title
    from handlers.dispatch import started_since

    class Api:
        async def runs(self, workflow: str, **kwargs: object) -> list[dict[str, object]]:
            return [{"id": 7, "display_title": "[a]", "head_branch": "amd/change-1", "event": "workflow_dispatch",
                     "created_at": "2026-07-01T10:00:05Z", "triggering_actor": {"login": "foldbot[bot]"},
                     "html_url": "https://github.com/o/r/actions/runs/7"}]

    lane = SimpleNamespace(name="rocm720", path=".github/workflows/pr-test-amd-rocm720.yml",
                           file="pr-test-amd-rocm720.yml")
    plan = DispatchPlan(lane, "amd/change-1", {"target_stage": "b"}, ("b",), "0123456789abcdef" * 2 + "01234567", 1)
    assert run_title(plan) == "[b]"
    assert asyncio.run(started_since(Api(), plan, "2026-07-01T10:00:00Z", "foldbot[bot]", "stopped")) is None
