"""The rules of `/dispatch <lane>`: run the GPU jobs of a lane that its change filter
skipped, for people allowed to spend GPU time. Never a way around the gate, and no fork
code on the self-hosted runners that the one dispatching did not name: a fork PR must name
the commit they reviewed, and it must be the PR's current head. (Who may dispatch is the
repository's word: `write`, or its CI allowlist, which SGLang's own `/rerun-stage` trusts
with a fork PR's head too, its author's own PR included.)

Pure: `decide` takes what was read (`DispatchRead`) and returns a `DispatchPlan`, a
`Refusal` with the reply, or `LaneRunNeeded` (read the lane's latest run, then decide
again). `handlers/dispatch.py` reads and writes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from .config import RepoConfig, lane_name
from .github import GitHubError
from .permissions import Allowance, permitted
from .report import code, md_escape
from .replies import Refusal
from .states import ReplyState
from .timing import JobMatcher
from .workflow import Workflow, parse_workflow

GATE_JOBS = ("call-gate", "check-changes")
FAILED = ("failure", "cancelled", "timed_out", "startup_failure", "action_required")


@dataclass(frozen=True)
class LaneRunNeeded:
    """The decision needs the lane's latest run for the PR's head, and its jobs."""

    lane: "LaneInfo"
    head_sha: str


#: What `/dispatch` does with a lane's file (said after "`/dispatch`" or "it"): why a lane that cannot be
#: dispatched needs what it lacks.
HOW_DISPATCHED = "names the jobs to run in a `target_stage` input of the lane's `workflow_dispatch` trigger"


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

    @property
    def undispatchable(self) -> str | None:
        """What the lane's file lacks for `/dispatch` to run it (`no ...`), or None: a dispatch
        names the jobs to run in the `target_stage` (or `target_stage_select`) input of the
        lane's `workflow_dispatch` trigger (`HOW_DISPATCHED`)."""
        return self.workflow.undispatchable

    @property
    def triggers(self) -> list[str]:
        return self.workflow.triggers

    @property
    def runs_on_pulls(self) -> bool:
        """Whether a pull request starts a run of it (SGLang's `pr-test-amd.yml` does not: a
        scheduled ROCm 7.0 check, dispatched by hand)."""
        return any(event in ("pull_request", "pull_request_target") for event in self.triggers)

    def choice(self) -> str | None:
        """The input that names one job from a list (`type: choice`: GitHub refuses any other value, a
        comma-joined one too): `target_stage` when it is one, else `target_stage_select`; None when
        `target_stage` takes any text."""
        for name in ("target_stage", "target_stage_select"):
            spec = self.inputs.get(name)
            if isinstance(spec, dict) and isinstance(spec.get("options"), list):
                return name
            if name in self.inputs:
                return None if name == "target_stage" else name
        return None

    def dispatchable(self, config: RepoConfig) -> list[str]:
        """Job ids `target_stage` may name: the options of the input that names one from a list
        (`choice`), else those of `target_stage_select` (SGLang lists its jobs there beside a free
        `target_stage`), else the lane's GPU jobs; never `wait-for-*` or `*-finish` jobs."""
        spec = self.inputs.get(self.choice() or "target_stage_select")
        if isinstance(spec, dict) and isinstance(spec.get("options"), list):
            ids = [str(o) for o in spec["options"] if o]
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
    #: The jobs asked for that someone else's dispatch runs already for this head, in words (left out).
    left_out: str = ""


@dataclass(frozen=True)
class Cooldown:
    """The dispatch that keeps a user from dispatching a lane again: foldbot's reply state of
    it, and the minutes left (`left`) of the cooldown it started."""

    last: ReplyState
    left: float


def lane_cooldown(replies: Sequence[ReplyState], login: str, lane: str, now: datetime,
                  minutes: int) -> Cooldown | None:
    """`login`'s latest dispatch of `lane` on this PR within the last `minutes`, if any,
    from foldbot's own replies to dispatches GitHub accepted (their state has the user, the
    lane, the command's time and the jobs; the run too, when foldbot could tell which). Per
    lane: one person may run each lane of a PR once a cooldown (foldbot's approval PRs ask
    for every lane)."""
    if minutes <= 0:
        return None
    last = None
    for state in replies:
        started = state.run_id or state.targets  # (a run GitHub did not say which is a run all the same)
        if (state.kind == "dispatch" and started and state.lane in (lane, None)  # (no lane recorded: any lane's)
                and state.user.lower() == login.lower()
                and state.at and (last is None or state.written > last.written)):
            last = state
    if last is None:
        return None
    left = minutes - (now - last.written).total_seconds() / 60
    return Cooldown(last, left) if left > 0 else None


def same_dispatch(replies: Sequence[ReplyState], lane: str, head_sha: str, targets: Sequence[str], now: datetime,
                  minutes: int) -> dict[str, ReplyState]:
    """Of these jobs of the lane, those anyone dispatched on this PR for the same head in the last
    `minutes`, each with that dispatch: a second would run the same GPU jobs on the same code."""
    out: dict[str, ReplyState] = {}
    for state in replies:
        if (state.kind == "dispatch" and state.lane == lane and state.sha == head_sha and state.targets and state.at
                and (now - state.written).total_seconds() < minutes * 60):
            out.update((job, state) for job in targets if job in state.targets and job not in out)
    return out


def gate_failure(jobs: list[dict[str, Any]], matcher: JobMatcher) -> str | None:
    """Which gate job of a run failed, and at which step; None when the gate passed."""
    for job in jobs:
        ref = matcher.match(str(job.get("name", "")))
        if ref.job_id in GATE_JOBS and job.get("conclusion") in FAILED:
            failed = next((s["name"] for s in job.get("steps") or [] if s.get("conclusion") in FAILED), None)
            return f"`{job['name']}` {job['conclusion']}" + (f" at step `{failed}`" if failed else "")
    return None


def filter_skipped(workflow: Workflow, jobs: list[dict[str, Any]], dispatchable: list[str]) -> list[str]:
    """Dispatchable jobs the run skipped while the gate passed and none of the jobs before them failed."""
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
        # skipped after a failure anywhere before it (GitHub skips what needs a failed or skipped job, all the
        # way down: stage-c after stage-a failed), not by the change filter
        if any(results.get(before, set()) & set(FAILED) for before in _ancestors(workflow, job_id)):
            continue
        out.append(job_id)
    return out


def _ancestors(workflow: Workflow, job_id: str) -> set[str]:
    """The jobs a job needs, and those they need, all the way up."""
    seen: set[str] = set()
    stack = list(workflow.jobs[job_id].needs)
    while stack:
        need = stack.pop()
        if need in seen or need not in workflow.jobs:
            continue
        seen.add(need)
        stack.extend(workflow.jobs[need].needs)
    return seen


@dataclass(frozen=True)
class DispatchRead:
    """What `/dispatch` is decided on, read once."""

    lane: str  # as the command names it
    lanes: Mapping[str, LaneInfo]
    config: RepoConfig
    repo: str
    default_branch: str
    user: str
    role: str
    allowance: Allowance | None
    replies: tuple[ReplyState, ...]
    now: datetime  # when the command was written
    pr: Mapping[str, Any]  # the pull request as GitHub returns it
    jobs: tuple[str, ...] = ()  # named by the command
    sha: str | None = None  # named by the command
    run: Mapping[str, Any] | None = None  # the lane's latest run for the head, once read
    run_jobs: tuple[Mapping[str, Any], ...] = ()


def decide(read: DispatchRead) -> DispatchPlan | Refusal | LaneRunNeeded:
    lane = read.lanes.get(read.lane)
    if lane is None:
        return Refusal(f"{code(read.lane)} is not a lane of this repository. Lanes: "
                       f"{', '.join(f'`{name}`' for name in read.lanes) or 'none (no lane workflow files)'}.")
    refused = permitted(read.role, read.config.dispatch_permission, "dispatch", read.user, read.allowance)
    if refused:
        return Refusal(refused)
    if read.pr.get("state") != "open":
        if read.pr.get("merged") or read.pr.get("merged_at"):
            return Refusal(f"This PR is merged: its commits are on {code(read.default_branch)}, whose own runs "
                           "test them. Nothing dispatched.")
        return Refusal("This PR is closed: nothing dispatched. Reopen it to run its GPU jobs.")
    minutes = read.config.dispatch_cooldown_minutes
    if read.allowance is not None and read.allowance.cooldown_minutes is not None:
        minutes = read.allowance.cooldown_minutes
    cooldown = lane_cooldown(read.replies, read.user, lane.name, read.now, minutes)
    if cooldown is not None:
        ran = f" (run {cooldown.last.run_id})" if cooldown.last.run_id else ""
        return Refusal(f"{md_escape(read.user)} dispatched `{lane.name}` on this PR less than {minutes} minutes "
                       f"ago{ran}; try again in {_minutes(cooldown.left)} (GPU time is scarce: each lane of a PR is "
                       f"dispatched once per person in {minutes} minutes).")
    head = read.pr["head"]
    head_sha = str(head["sha"])
    sha = read.sha
    if (head.get("repo") or {}).get("full_name") != read.repo:  # a fork: its code runs from the default branch's workflow
        if sha is None:
            return Refusal(f"This PR comes from a fork: name the commit you reviewed, `/dispatch {lane.name} sha=<sha>` "
                           "with its full 40-digit SHA, so that no unreviewed code runs on the GPU runners. Its head is "
                           f"`{head_sha[:12]}`.")
        if not head_sha.startswith(sha):
            return Refusal(f"`{sha}` is not this PR's head (`{head_sha[:12]}`): review the new commits, then "
                           f"`/dispatch {lane.name} sha=<its full SHA>`.")
        if len(sha) != 40:  # (the fork's author can make a commit of the same first digits, and push it instead)
            return Refusal("On a PR from a fork, `sha=` takes the full 40-digit SHA of the commit you reviewed (the "
                           "commit page's copy button gives it): a short one can be matched by another commit the "
                           "fork's author makes, pushed after your review. Nothing was dispatched.")
        ref = read.default_branch
        if "pr_head_sha" not in lane.inputs:
            return Refusal(f"`{lane.path}` has no `pr_head_sha` input: dispatched from `{read.default_branch}`, it "
                           "would test that branch, not this fork's commit. Run it from a branch of this repository.")
    else:
        if sha is not None and not head_sha.startswith(sha):
            return Refusal(f"`{sha}` is not this PR's head (`{head_sha[:12]}`).")
        ref = str(head["ref"])
    declared = lane.inputs
    if lane.undispatchable:
        return Refusal(f"`{lane.path}` has {lane.undispatchable}: `/dispatch` cannot run `{lane.name}` "
                       f"(it {HOW_DISPATCHED}).")
    dispatchable = lane.dispatchable(read.config)
    run_id = None
    unknown = [j for j in read.jobs if j not in dispatchable]
    if unknown:
        return Refusal(f"Not a job `{lane.name}` can run: {', '.join(f'`{j}`' for j in unknown)}. "
                       f"Valid: {', '.join(f'`{j}`' for j in dispatchable)}.")
    if not read.jobs and not lane.runs_on_pulls:  # no run of it will come for the head: nothing it skipped
        return Refusal(f"`{lane.path}` does not run on pull requests (its `on:` has no `pull_request`), so no run of "
                       f"it skipped jobs here: name them, `/dispatch {lane.name} <job-id> ...`. Valid: "
                       f"{', '.join(f'`{j}`' for j in dispatchable)}.")
    run = read.run
    if run is None:
        return LaneRunNeeded(lane, head_sha)
    # the gate of the head's latest lane run holds for named jobs too (a dispatched run is never gated)
    run_jobs = [dict(j) for j in read.run_jobs]
    failure = gate_failure(run_jobs, JobMatcher(lane.workflow)) if run else None
    if failure:
        return Refusal(f"The gate failed in run [{run['id']}]({run.get('html_url')}): {failure}. "
                       "`/dispatch` is not a way around the gate; fix what it says first.")
    if read.jobs:
        targets = list(read.jobs)
    else:
        if not run:
            return Refusal(f"No run of `{lane.path}` for `{head_sha[:12]}` yet: wait for it, or name the jobs: "
                           f"`/dispatch {lane.name} <job-id> ...`.")
        if run.get("status") != "completed":
            return Refusal(f"The run of `{lane.path}` for `{head_sha[:12]}` is still {run.get('status')}: "
                           "dispatch when it has finished.")
        if run.get("conclusion") == "action_required":
            return Refusal(f"Run [{run['id']}]({run.get('html_url')}) of `{lane.path}` waits for approval: GitHub "
                           "holds the workflows of a first-time contributor's PR until a maintainer approves them on "
                           "the run's page. Approve it, and its gate and change filter decide what runs.")
        targets = filter_skipped(lane.workflow, run_jobs, dispatchable)
        run_id = int(run["id"])
        if not targets:
            return Refusal(f"Nothing to run: run [{run['id']}]({run.get('html_url')}) skipped no GPU job of "
                           f"`{lane.name}` by its change filter.")
    twins = same_dispatch(read.replies, lane.name, head_sha, targets, read.now, minutes)  # (the user's own cooldown)
    already = _already(twins, lane.name, head_sha, minutes)
    if len(twins) == len(targets):
        return Refusal(f"{already}: not dispatched twice. To run them again, re-run that run from the Actions tab, or "
                       "dispatch when that time is up.")
    targets = [job for job in targets if job not in twins]  # the rest: those someone else's dispatch runs already
    inputs: dict[str, str] = {}
    choice = lane.choice()
    if choice is None:
        inputs["target_stage"] = ",".join(targets)
    elif len(targets) == 1:
        inputs[choice] = targets[0]
    else:  # (GitHub refuses a value not among a choice's options: "a,b" too)
        return Refusal(f"`{lane.path}` takes one stage at a time (`{choice}` is a choice of one job): name one job, "
                       f"`/dispatch {lane.name} <job-id>`, of {', '.join(f'`{j}`' for j in targets)}.")
    if "pr_head_sha" in declared:
        inputs["pr_head_sha"] = head_sha
    return DispatchPlan(lane, ref, inputs, tuple(targets), head_sha, run_id,
                        f"{already}: not dispatched again." if twins else "")


def _already(twins: Mapping[str, ReplyState], lane: str, head_sha: str, minutes: int) -> str:
    """Who dispatched which of the jobs, in which run: `alice dispatched `x` of `rocm720` for ... (run 5)`."""
    by: dict[tuple[str, int | None], list[str]] = {}
    for job, state in twins.items():
        by.setdefault((state.user, state.run_id), []).append(job)
    return "; ".join(f"{md_escape(user)} dispatched {', '.join(f'`{j}`' for j in jobs)} of `{lane}` for "
                     f"`{head_sha[:12]}` less than {minutes} minutes ago" + (f" (run {run})" if run else "")
                     for (user, run), jobs in by.items())


def _minutes(left: float) -> str:
    """Minutes left, rounded up: never "0 minutes", never less than what is left."""
    whole = max(math.ceil(left - 1e-9), 1)
    return f"{whole} minute" if whole == 1 else f"{whole} minutes"


def run_title(plan: DispatchPlan) -> str:
    """The title the lane gives the run a dispatch starts (`run-name: [<stage>] <sha>`)."""
    stage = plan.inputs.get("target_stage") or plan.inputs.get("target_stage_select") or ""
    return f"[{stage}] {plan.head_sha}" if "pr_head_sha" in plan.inputs else f"[{stage}]"


def untitled_lane(plan: DispatchPlan) -> str:
    """What to do about a lane whose dispatched runs foldbot cannot recognise by their title."""
    return (f"(`{plan.lane.path}` does not title a dispatched run `{run_title(plan)}`: after a crash in the middle "
            f"of a dispatch foldbot could not tell whether it had started the run. Give the lane SGLang's title: "
            f"`run-name: ${{{{ (inputs.target_stage || inputs.target_stage_select) && (inputs.pr_head_sha && "
            f"format('[{{0}}] {{1}}', inputs.target_stage || inputs.target_stage_select, inputs.pr_head_sha) || "
            f"format('[{{0}}]', inputs.target_stage || inputs.target_stage_select)) || '' }}}}`.)")


def latest_run(runs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The newest of a lane's runs for a commit that was not itself a dispatch."""
    candidates = [r for r in runs if r.get("event") != "workflow_dispatch"]
    return max(candidates, key=lambda r: (str(r.get("created_at")), r["id"])) if candidates else None


def dispatched_message(plan: DispatchPlan, run: Mapping[str, Any] | None) -> str:
    inputs = ", ".join(f"`{k}={v}`" for k, v in plan.inputs.items())
    where = f"[run {run['id']}]({run.get('html_url')})" if run else "a run (GitHub did not say which; see the Actions tab)"
    return (f"Dispatched `{plan.lane.path}` on {code(plan.ref)} with {inputs}: {where}. "
            f"Jobs: {', '.join(f'`{j}`' for j in plan.targets)}."
            + (f" {plan.left_out}" if plan.left_out else "") + " This reply is edited when the run completes.")


def describe(error: GitHubError) -> str:
    if error.status == 403:
        return ("GitHub refused the dispatch (403): grant the App **Actions: write** "
                f"(GitHub said: {error.message[:200]}).")
    return f"GitHub refused the dispatch ({error.status}): {error.message[:300]}"


__all__ = ["HOW_DISPATCHED", "Cooldown", "DispatchPlan", "DispatchRead", "LaneInfo", "LaneRunNeeded", "Refusal",
           "decide", "describe", "dispatched_message", "filter_skipped", "gate_failure", "lane_cooldown", "lanes_of",
           "latest_run", "run_title", "same_dispatch", "untitled_lane"]
