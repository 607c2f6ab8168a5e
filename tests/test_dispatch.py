"""The pure rules of `/dispatch`: which jobs the filter skipped, which gate failed, the cooldown."""

from __future__ import annotations

from datetime import datetime, timezone

from bot.config import RepoConfig
from bot.dispatch import cooldown_left, filter_skipped, gate_failure, lanes_of
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


def test_cooldown_from_replies() -> None:
    now = datetime(2026, 8, 1, 12, 0, tzinfo=timezone.utc)
    replies = [ReplyState("dispatch", 1, "/dispatch amd", "Writer", "2026-08-01T11:50:00Z", run_id=1),
               ReplyState("dispatch", 2, "/dispatch amd", "other", "2026-08-01T11:59:00Z", run_id=2)]
    assert cooldown_left(replies, "writer", now, 30) == 20
    assert cooldown_left(replies, "writer", now, 0) == 0
    assert cooldown_left(replies, "newcomer", now, 30) == 0


def test_effective_roles_and_the_allowlist() -> None:
    assert effective_role({"permission": "write", "role_name": "maintain"}) == "maintain"
    assert effective_role({"permission": "read", "role_name": "triage"}) == "triage"
    assert effective_role({"permission": "write", "role_name": "ci-runner"}) == "write"  # a custom role
    allow = parse_ci_permissions('{"Alice": {"can_rerun_stage": true, "cooldown_interval_minutes": 5}, "bob": 3}')
    assert allow["alice"].can_rerun_stage and allow["alice"].cooldown_minutes == 5 and "bob" not in allow
