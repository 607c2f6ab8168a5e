"""`/dispatch <lane>`: run the GPU jobs of a lane that its change filter skipped, for
people allowed to spend GPU time. Never a way around the gate, and never unreviewed
fork code on the self-hosted runners: a fork PR must name the commit the maintainer
reviewed, and it must be the PR's current head."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .api import RepoAPI
from .config import RepoConfig, lane_name
from .github import GitHubError
from .timing import JobMatcher
from .workflow import Workflow, parse_workflow

GATE_JOBS = ("call-gate", "check-changes")
FAILED = ("failure", "cancelled", "timed_out", "startup_failure", "action_required")


class Refusal(Exception):
    """A command that is not carried out; the message is the reply."""


@dataclass(frozen=True)
class LaneInfo:
    name: str
    path: str
    workflow: Workflow

    @property
    def file(self) -> str:
        """The workflow's file name, as the Actions API names a workflow."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def inputs(self) -> dict[str, Any]:
        return self.workflow.dispatch_inputs()

    def dispatchable(self, config: RepoConfig) -> list[str]:
        """Job ids `target_stage` may name: the `target_stage_select` options, else the
        lane's GPU jobs; never `wait-for-*` or `*-finish` jobs."""
        select = self.inputs.get("target_stage_select")
        if isinstance(select, dict) and isinstance(select.get("options"), list):
            ids = [str(o) for o in select["options"] if o]
        else:
            ids = [j.id for j in self.workflow.jobs.values() if j.runs_on is not None and config.is_amd_runner(str(j.runs_on))]
        return [i for i in ids if i in self.workflow.jobs and not i.startswith("wait-for-") and not i.endswith("-finish")]


def lanes_of(files: dict[str, str]) -> dict[str, LaneInfo]:
    """The lanes by name, in name order."""
    lanes = [LaneInfo(lane_name(path), path, parse_workflow(text, path)) for path, text in files.items()]
    return {lane.name: lane for lane in sorted(lanes, key=lambda lane: lane.name)}


@dataclass(frozen=True)
class DispatchPlan:
    lane: LaneInfo
    ref: str
    inputs: dict[str, str]
    targets: tuple[str, ...]
    head_sha: str
    run_id: int | None = None  # the lane run whose skipped jobs these are
    notes: tuple[str, ...] = field(default=())


def cooldown_left(replies: list[dict[str, Any]], login: str, now: datetime, minutes: int) -> float:
    """Minutes until `login` may dispatch again on this PR, from foldbot's own dispatch
    replies (their state block has the user and the time of the command)."""
    if minutes <= 0:
        return 0.0
    last = None
    for state in replies:
        if state.get("kind") == "dispatch" and str(state.get("user", "")).lower() == login.lower() and state.get("at"):
            at = datetime.fromisoformat(str(state["at"]).replace("Z", "+00:00"))
            last = at if last is None or at > last else last
    if last is None:
        return 0.0
    return max(minutes - (now - last).total_seconds() / 60, 0.0)


def gate_failure(jobs: list[dict[str, Any]], matcher: JobMatcher) -> str | None:
    """Which gate job of a run failed, and at which step; None when the gate passed."""
    for job in jobs:
        ref = matcher.match(str(job.get("name", "")))
        if ref.job_id in GATE_JOBS and job.get("conclusion") in FAILED:
            failed = next((s["name"] for s in job.get("steps") or [] if s.get("conclusion") in FAILED), None)
            return f"`{job['name']}` {job['conclusion']}" + (f" at step `{failed}`" if failed else "")
    return None


def filter_skipped(workflow: Workflow, jobs: list[dict[str, Any]], dispatchable: list[str]) -> list[str]:
    """Dispatchable jobs the run skipped while the gate passed and none of their needs failed."""
    matcher = JobMatcher(workflow)
    results: dict[str, set[str]] = {}
    for job in jobs:
        ref = matcher.match(str(job.get("name", "")))
        if ref.job_id:
            results.setdefault(ref.job_id, set()).add(str(job.get("conclusion")))
    for gate in GATE_JOBS:
        if gate in workflow.jobs and results.get(gate) and not results[gate] <= {"success"}:
            return []
    out = []
    for job_id in dispatchable:
        if results.get(job_id) != {"skipped"}:
            continue
        needs = workflow.jobs[job_id].needs
        if any(results.get(need, set()) & set(FAILED) for need in needs):
            continue
        out.append(job_id)
    return out


async def latest_lane_run(api: RepoAPI, lane: LaneInfo, head_sha: str,
                          completed: bool = False) -> dict[str, Any] | None:
    """The newest run of the lane for a commit that was not itself a dispatch."""
    listed = await api.runs(lane.file, head_sha=head_sha, status="completed" if completed else None, count=30)
    runs = [r for r in listed if r.get("event") != "workflow_dispatch"]
    return max(runs, key=lambda r: (str(r.get("created_at")), r["id"])) if runs else None


async def plan_dispatch(api: RepoAPI, config: RepoConfig, lane: LaneInfo, pr: dict[str, Any],
                        jobs: tuple[str, ...], sha: str | None, default_branch: str) -> DispatchPlan:
    head = pr["head"]
    head_sha = str(head["sha"])
    fork = (head.get("repo") or {}).get("full_name") != api.repo
    if fork:
        if sha is None:
            raise Refusal(f"This PR comes from a fork: name the commit you reviewed, `/dispatch {lane.name} sha=<sha>`, "
                          f"so that no unreviewed code runs on the GPU runners. Its head is `{head_sha[:12]}`.")
        if not head_sha.startswith(sha):
            raise Refusal(f"`{sha}` is not this PR's head (`{head_sha[:12]}`): review the new commits, then "
                          f"`/dispatch {lane.name} sha={head_sha[:12]}`.")
        ref = default_branch
    else:
        if sha is not None and not head_sha.startswith(sha):
            raise Refusal(f"`{sha}` is not this PR's head (`{head_sha[:12]}`).")
        ref = str(head["ref"])
    declared = lane.inputs
    if "target_stage" not in declared and "target_stage_select" not in declared:
        raise Refusal(f"`{lane.path}` has no `target_stage` input: it cannot run single jobs.")
    dispatchable = lane.dispatchable(config)
    run_id = None
    if jobs:
        unknown = [j for j in jobs if j not in dispatchable]
        if unknown:
            raise Refusal(f"Not a job `{lane.name}` can run: {', '.join(f'`{j}`' for j in unknown)}. "
                          f"Valid: {', '.join(f'`{j}`' for j in dispatchable)}.")
        targets = list(jobs)
    else:
        run = await latest_lane_run(api, lane, head_sha)
        if run is None:
            raise Refusal(f"No run of `{lane.path}` for `{head_sha[:12]}` yet: wait for it, or name the jobs: "
                          f"`/dispatch {lane.name} <job-id> ...`.")
        if run.get("status") != "completed":
            raise Refusal(f"The run of `{lane.path}` for `{head_sha[:12]}` is still {run.get('status')}: "
                          "dispatch when it has finished.")
        run_jobs = await api.jobs(run["id"])
        failure = gate_failure(run_jobs, JobMatcher(lane.workflow))
        if failure:
            raise Refusal(f"The gate failed in run [{run['id']}]({run.get('html_url')}): {failure}. "
                          "`/dispatch` is not a way around the gate; fix what it says first.")
        targets = filter_skipped(lane.workflow, run_jobs, dispatchable)
        run_id = int(run["id"])
        if not targets:
            raise Refusal(f"Nothing to run: run [{run['id']}]({run.get('html_url')}) skipped no GPU job of "
                          f"`{lane.name}` by its change filter.")
    inputs: dict[str, str] = {}
    if "target_stage" in declared:
        inputs["target_stage"] = ",".join(targets)
    elif len(targets) == 1:
        inputs["target_stage_select"] = targets[0]
    else:
        raise Refusal(f"`{lane.path}` takes one stage at a time (`target_stage_select`): name one job.")
    if "pr_head_sha" in declared:
        inputs["pr_head_sha"] = head_sha
    return DispatchPlan(lane, ref, inputs, tuple(targets), head_sha, run_id)


async def send(api: RepoAPI, plan: DispatchPlan, *, attempts: int = 10, wait: float = 1.0) -> dict[str, Any] | None:
    """Dispatch, and find the run it created: GitHub returns its id (`return_run_details`),
    else it is the newest dispatch run titled `[<stage>] <sha>`."""
    answer = await api.dispatch(plan.lane.file, plan.ref, plan.inputs)
    if isinstance(answer, dict) and answer.get("workflow_run_id"):
        return await api.run(int(answer["workflow_run_id"]))
    stage = plan.inputs.get("target_stage") or plan.inputs.get("target_stage_select") or ""
    title = f"[{stage}] {plan.head_sha}" if "pr_head_sha" in plan.inputs else f"[{stage}]"
    for _ in range(attempts):
        listed = await api.runs(plan.lane.file, event="workflow_dispatch", count=20)
        found = [r for r in listed if r.get("display_title") == title]
        if found:
            return max(found, key=lambda r: r["id"])
        await asyncio.sleep(wait)
    return None


def describe(error: GitHubError) -> str:
    if error.status == 403:
        return ("GitHub refused the dispatch (403): grant the App **Actions: write** "
                f"(GitHub said: {error.message[:200]}).")
    return f"GitHub refused the dispatch ({error.status}): {error.message[:300]}"


__all__ = ["DispatchPlan", "LaneInfo", "Refusal", "cooldown_left", "describe", "filter_skipped",
           "gate_failure", "lanes_of", "latest_lane_run", "plan_dispatch", "send"]
