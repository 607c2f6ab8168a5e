"""`/dispatch <lane> [<job-id> ...] [sha=<hex>]`: run the GPU jobs of a lane that its
change filter skipped. Read (role, allowlist, the lane's latest run), decide
(`bot.dispatch.decide`), write (the dispatch, and finding the run it started)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import Any, Mapping

from bot.api import NotText, RepoAPI
from bot.commands import Command
from bot.context import Context, PullRead
from bot.dispatch import (DispatchPlan, DispatchRead, LaneInfo, LaneRunNeeded, decide, describe, dispatched_message,
                          latest_run, run_title, untitled_lane)
from bot.github import GitHubError
from bot.permissions import Allowance, effective_role, parse_ci_permissions
from bot.replies import ROCKET, Outcome, Refusal, titled_as_dispatched
from bot.report import code, md_escape
from bot.workflow import WorkflowError, parse_workflow


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    # read
    role, allowance, lanes = await asyncio.gather(role_of(api, pull.user), allowance_of(api, ctx, pull),
                                                  lanes_at_ref(api, pull, command.lane or ""))
    if isinstance(lanes, Refusal):
        return Outcome.refused(lanes)
    read = DispatchRead(lane=command.lane or "", lanes=lanes, config=pull.config, repo=api.repo,
                        default_branch=pull.default_branch, user=pull.user, role=role, allowance=allowance,
                        replies=pull.replies, now=pull.written_at, pr=pull.pr, jobs=command.jobs, sha=command.sha)
    # decide
    decision = decide(read)
    if isinstance(decision, LaneRunNeeded):
        found = await lane_run(api, decision.lane, decision.head_sha)
        jobs = await api.jobs(found["id"]) if found else []
        read = replace(read, run=found or {}, run_jobs=tuple(jobs))
        decision = decide(read)
    if isinstance(decision, Refusal):
        return Outcome.refused(decision)
    assert isinstance(decision, DispatchPlan)
    # write (or, resuming after a crash, find the run this command may have started already: once a dispatch the
    # stopped process may have sent has landed)
    started = await resumed(api, decision, pull) if pull.resuming else None
    if isinstance(started, Refusal):
        return Outcome.refused(started)
    if started is None:
        fresh_token_after_refusal(api, ctx)
        try:
            started = await send(api, decision, pull.login, ctx.log)
        except GitHubError as exc:
            if exc.status == 403:
                note_permission_refused(api, ctx)
            return Outcome.refused(Refusal(describe(exc)))
        if isinstance(started, Refusal):
            return Outcome.refused(started)
    if started:
        ctx.state.cache[("dispatch", api.repo, int(started["id"]))] = pull.number
    message = dispatched_message(decision, started)
    if started and started.get("display_title") != run_title(decision):
        message += " " + untitled_lane(decision)
    return Outcome(message, ROCKET,
                   {"lane": decision.lane.name, "run_id": int(started["id"]) if started else None,
                    "targets": decision.targets, "sha": decision.head_sha},
                   link=(started or {}).get("html_url"))


async def lanes_at_ref(api: RepoAPI, pull: PullRead, name: str) -> Mapping[str, LaneInfo] | Refusal:
    """The lanes, with the named one as the dispatch will run it: GitHub runs (and checks the
    inputs against) the workflow file at the `ref` dispatched, which for a same-repository PR
    is its branch, not the default branch whose lane files foldbot reads."""
    lane = pull.lanes.get(name)
    head = pull.pr["head"]
    if lane is None or (head.get("repo") or {}).get("full_name") != api.repo:
        return pull.lanes  # (a fork PR is dispatched from the default branch)
    try:
        found = await api.file(lane.path, str(head["sha"]))
        if found is None:
            return Refusal(f"`{lane.path}` is not on this PR's branch {code(str(head['ref']))}, and a dispatch "
                           "runs the branch's own file: merge the default branch into it first.")
        if found[0] == pull.files.get(lane.path):
            return pull.lanes
        return {**pull.lanes, name: LaneInfo(lane.name, lane.path, parse_workflow(found[0], lane.path))}
    except (WorkflowError, NotText) as exc:
        return Refusal(f"The PR branch's `{lane.path}`, which a dispatch runs, is broken: {md_escape(str(exc))}")


#: The memo (per process) that GitHub refused a command's write for a permission the App lacked.
PERMISSION_REFUSED = "command-permission-refused"


def note_permission_refused(api: RepoAPI, ctx: Context) -> None:
    """GitHub refused a command's write for a permission the App lacks (see `fresh_token_after_refusal`)."""
    ctx.state.cache[(PERMISSION_REFUSED, api.gh.installation_id)] = True


def fresh_token_after_refusal(api: RepoAPI, ctx: Context) -> None:
    """Before a command's writes: after GitHub refused one for a permission the App lacked, they go
    with a new installation token. A token holds the permissions it was minted with (for up to an
    hour); the one in hand was minted before the owner granted it, here (another replica got the
    `new_permissions_accepted` event), or by the reply that said what to grant."""
    if ctx.state.cache.pop((PERMISSION_REFUSED, api.gh.installation_id), None) and api.gh.installation_id is not None:
        api.gh.pool.credentials.forget(api.gh.installation_id)


async def role_of(api: RepoAPI, login: str) -> str:
    data = await api.permission(login)
    return effective_role(data) if data is not None else "none"


async def allowance_of(api: RepoAPI, ctx: Context, pull: PullRead) -> Allowance | None:
    """The user's entry of the repository's CI allowlist (SGLang's CI_PERMISSIONS.json), if any."""
    path = pull.config.ci_permissions_file
    if not path:
        return None
    try:
        found = await api.file(path, pull.base_sha)
        return parse_ci_permissions(found[0]).get(pull.user.lower()) if found else None
    except ValueError as exc:  # (a NotText too)
        ctx.log.warning("%s: %s is not usable: %s", api.repo, path, exc)
        return None


async def lane_run(api: RepoAPI, lane: LaneInfo, head_sha: str, completed: bool = False) -> dict[str, Any] | None:
    """The newest run of the lane for a commit that was not itself a dispatch."""
    runs = await api.runs(lane.file, head_sha=head_sha, status="completed" if completed else None, count=30)
    found = latest_run(runs)
    return dict(found) if found else None


def _ours(run: dict[str, Any], plan: DispatchPlan) -> bool:
    """A dispatched run this plan may have started: its title, on its ref."""
    return run.get("display_title") == run_title(plan) and run.get("head_branch") in (None, plan.ref)


async def resumed(api: RepoAPI, plan: DispatchPlan, pull: PullRead) -> dict[str, Any] | Refusal | None:
    """The run a dispatch the stopped process may have sent for this plan started, if any (see
    `started_since`). Looked for every LOOK_EVERY_SECONDS until that dispatch, still in flight
    when the process stopped, has landed (IN_FLIGHT_SECONDS) and GitHub lists the run it
    created (LISTED_SECONDS): found early, it is taken at once."""
    deadline = time.monotonic() + IN_FLIGHT_SECONDS + LISTED_SECONDS
    while True:
        found = await started_since(api, plan, str(pull.comment["created_at"]), pull.login,
                                    "foldbot was stopped while it dispatched this command")
        left = deadline - time.monotonic()
        if found is not None or left <= 0:
            return found
        await asyncio.sleep(min(LOOK_EVERY_SECONDS, left))


async def started_since(api: RepoAPI, plan: DispatchPlan, since: str, login: str,
                        what: str) -> dict[str, Any] | Refusal | None:
    """The run a dispatch for this plan started since `since`, found by its title. A Refusal
    (it begins with `what` happened) when foldbot cannot tell: the lane does not title its runs
    `[<stage>] <sha>`, and foldbot (`login`) has dispatched it since: that run may be this
    command's, so it is not sent again."""
    runs = [r for r in await api.runs(plan.lane.file, event="workflow_dispatch", count=30)
            if str(r.get("created_at") or "") >= since and r.get("head_branch") in (None, plan.ref)]
    found = [r for r in runs if _ours(r, plan)]
    if found:
        return max(found, key=lambda r: r["id"])
    untold = [r for r in runs if str((r.get("triggering_actor") or r.get("actor") or {}).get("login")) == login
              and not titled_as_dispatched(r)]
    if not untold:
        return None
    named = ", ".join(f"[run {r['id']}]({r.get('html_url')})" for r in sorted(untold, key=lambda r: r["id"]))
    return Refusal(f"{what}, and foldbot cannot tell whether it started a run: since this command foldbot dispatched "
                   f"`{plan.lane.path}` on {code(plan.ref)} ({named}), and the lane does not title its runs "
                   f"`{run_title(plan)}`. Not dispatched again, so that GPU time is not spent twice: if no run is this "
                   f"command's, comment the command again. " + untitled_lane(plan))


#: How long a call the stopped process sent may still be carried out: GitHub ends a REST request that takes more
#: than 10 seconds ("Timeouts", in its REST API's troubleshooting). A resumed dispatch waits this long before it
#: looks for the run that call may have started, so a late one is found, not dispatched beside.
IN_FLIGHT_SECONDS = 10.0

#: How long GitHub may take to list the run a dispatch created: answering 204 (no `return_run_details`), it creates
#: the run after. `send` looks for it that long, and so does a resumed dispatch.
LISTED_SECONDS = 10.0
#: How often a resumed dispatch looks for the run meanwhile.
LOOK_EVERY_SECONDS = 2.0


async def send(api: RepoAPI, plan: DispatchPlan, login: str, log: logging.LoggerAdapter, *,
               wait: float = 1.0) -> dict[str, Any] | Refusal | None:
    """Dispatch, once, and find the run it created: GitHub returns its id (`return_run_details`),
    else it is the newest dispatch run titled `[<stage>] <sha>`. GitHubError: GitHub refused it
    (nothing started). A 5xx or no answer may have started a run: it is looked for, not sent
    again (a Refusal says what is known)."""
    sent = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))  # GitHub's clock may differ a little
    try:
        answer = await api.dispatch(plan.lane.file, plan.ref, plan.inputs)
    except GitHubError as exc:
        if 0 < exc.status < 500:
            raise
        log.warning("%s: the dispatch of %s got no answer (%s); looking for the run it may have started", api.repo,
                    plan.lane.file, exc)
        what = f"GitHub did not answer the dispatch ({exc.status or 'connection lost'})"
        # As long as a resumed dispatch looks (`resumed`): GitHub may still carry the call out, and then list its run
        # (a look of 4 s, with the run listed 6 s after a 502, had told the user to comment again: a second GPU run)
        waited = IN_FLIGHT_SECONDS + LISTED_SECONDS
        deadline = time.monotonic() + waited
        while True:
            try:
                found = await started_since(api, plan, sent, login, what)
            except GitHubError as lost:
                return Refusal(f"{what}, and foldbot cannot look for the run it may have started ({lost.status}): "
                               "see the lane's runs in the Actions tab before you comment the command again.")
            left = deadline - time.monotonic()
            if found is not None or left <= 0:
                break
            await asyncio.sleep(min(LOOK_EVERY_SECONDS, left))
        if found is not None:
            return found
        return Refusal(f"{what}, and no run titled `{run_title(plan)}` appeared in the {waited:g} s since (GitHub "
                       "lists a dispatch it carried out within them): it most likely started nothing. See the "
                       "lane's runs in the Actions tab, then comment the command again.")
    # dispatched: from here a failed call only means the run is not known (never "refused": that
    # would invite the same command again, and a second GPU run)
    try:
        if isinstance(answer, dict) and answer.get("workflow_run_id"):
            return await api.run(int(answer["workflow_run_id"]))
        for _ in range(max(round(LISTED_SECONDS / wait), 1)):  # (a look a `wait`, for LISTED_SECONDS)
            found = [r for r in await api.runs(plan.lane.file, event="workflow_dispatch", count=20)
                     if _ours(r, plan) and str(r.get("created_at") or "") >= sent]
            if found:
                return max(found, key=lambda r: r["id"])
            await asyncio.sleep(wait)
    except GitHubError as exc:
        log.warning("%s: dispatched %s, but cannot read the run it started: %s", api.repo, plan.lane.file, exc)
    return None
