"""Carrying out chat commands on a pull request: who may, what happens, what the reply says.

Each command gets 👀 at once, one reply that quotes it, and 🚀/👍 when done or 😕
when refused. A command already answered (a redelivery after a crash) is not run
again: foldbot's replies carry the id of the comment and the line they answer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .analysis import analyze
from .approve import ApproveRefusal, commit_and_open, patch_text
from .commands import Command
from .config import RepoConfig
from .edit import FileEdit
from .dispatch import LaneInfo, Refusal, cooldown_left, describe, lanes_of, latest_lane_run, plan_dispatch, send
from .api import RepoAPI
from .github import GitHubError
from .permissions import Allowance, parse_ci_permissions, rank, role_of
from .publish import find_comment, read_state
from .repo import LaneFiles, default_branch_head, read_config, read_lanes, run_bundle
from .replies import CONFUSED, EYES, ROCKET, THUMBS_UP, our_replies, reply_body
from .report import md_escape, to_markdown
from .reporting import PR_REPORT_TITLE, USER_ERRORS, report_run
from .context import Context
from .verify import apply_patch, check_patch


@dataclass
class PullContext:
    """What the commands of one comment share, read once."""

    api: RepoAPI
    ctx: Context
    number: int
    comment: dict[str, Any]
    login: str  # foldbot's own
    default_branch: str = ""
    base_sha: str = ""
    config: RepoConfig = field(default_factory=RepoConfig)
    files: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    lanes: dict[str, LaneInfo] = field(default_factory=dict)
    pr: dict[str, Any] = field(default_factory=dict)
    replies: list[dict[str, Any]] = field(default_factory=list)  # state blocks of foldbot's replies on the PR

    @property
    def repo(self) -> str:
        return self.api.repo

    @property
    def user(self) -> str:
        return str(self.comment["user"]["login"])

    async def load(self) -> None:
        self.default_branch, self.base_sha = await default_branch_head(self.api)
        self.config = await read_config(self.api, self.base_sha)
        read: LaneFiles
        read, self.pr = await asyncio.gather(read_lanes(self.api, self.base_sha, self.config),
                                             self.api.pull(self.number))
        self.files, self.blobs = read.files, read.blobs
        self.lanes = lanes_of(self.files)

    async def allowance(self) -> Allowance | None:
        path = self.config.ci_permissions_file
        if not path:
            return None
        found = await self.api.file(path, self.base_sha)
        if found is None:
            return None
        try:
            return parse_ci_permissions(found[0]).get(self.user.lower())
        except ValueError as exc:
            self.ctx.log.warning("%s: %s is not usable: %s", self.repo, path, exc)
            return None


@dataclass(frozen=True)
class Outcome:
    message: str
    reaction: str
    state: dict[str, Any] = field(default_factory=dict)


async def run_commands(api: RepoAPI, ctx: Context, number: int, comment: dict[str, Any],
                       commands: list[Command]) -> None:
    repo = api.repo
    login = await ctx.pool.bot_login()
    pc = PullContext(api, ctx, number, comment, login)
    pc.replies = [state for _, state in await our_replies(api, number, login)]
    answered = {(s.get("comment_id"), s.get("line")) for s in pc.replies}
    loaded = False
    for command in commands:
        if (comment["id"], command.line) in answered:
            ctx.log.info("%s#%d: `%s` of comment %s was answered already", repo, number, command.line, comment["id"])
            continue
        if command.error:
            outcome = Outcome(command.error, CONFUSED)
        else:
            await api.react(comment["id"], EYES)
            try:
                if not loaded:
                    await pc.load()
                    loaded = True
                outcome = await carry_out(pc, command)
            except (Refusal, ApproveRefusal) as refusal:
                outcome = Outcome(str(refusal), CONFUSED)
            except USER_ERRORS as exc:
                outcome = Outcome(f"foldbot cannot read this repository's CI files: {md_escape(str(exc))}", CONFUSED)
            except GitHubError as exc:
                ctx.log.error("%s#%d: `%s` failed: %s", repo, number, command.line, exc)
                outcome = Outcome(f"A GitHub call failed ({exc.status}); nothing was changed. Try again later.", CONFUSED)
        state = {"kind": command.name if command.name == "dispatch" else f"fold-{command.subcommand}",
                 "comment_id": comment["id"], "line": command.line, "user": pc.user, "at": comment["created_at"],
                 **outcome.state}
        await api.create_comment(number, reply_body(command.line, outcome.message, state))
        pc.replies.append(state)
        await api.react(comment["id"], outcome.reaction)


async def carry_out(pc: PullContext, command: Command) -> Outcome:
    if command.name == "dispatch":
        return await dispatch(pc, command)
    if command.subcommand == "help":
        return Outcome(help_text(pc), THUMBS_UP)
    if command.subcommand == "refresh":
        return await refresh(pc)
    return await approve(pc, command)


async def require(pc: PullContext, needed: str, what: str, allowance: Allowance | None = None) -> str:
    role = await role_of(pc.api, pc.user)
    if rank(role) >= rank(needed) or (allowance is not None and allowance.can_rerun_stage and what == "dispatch"):
        return role
    raise Refusal(f"`{what}` needs the **{needed}** permission on this repository; {md_escape(pc.user)} has "
                  f"**{role}**. Ask a maintainer.")


async def dispatch(pc: PullContext, command: Command) -> Outcome:
    lane = pc.lanes.get(command.lane or "")
    if lane is None:
        raise Refusal(f"`{md_escape(command.lane or '')}` is not a lane of this repository. Lanes: "
                      f"{', '.join(f'`{name}`' for name in pc.lanes) or 'none (no lane workflow files)'}.")
    allowance = await pc.allowance()
    await require(pc, pc.config.dispatch_permission, "dispatch", allowance)
    minutes = pc.config.dispatch_cooldown_minutes
    if allowance is not None and allowance.cooldown_minutes is not None:
        minutes = allowance.cooldown_minutes
    now = datetime.fromisoformat(str(pc.comment["created_at"]).replace("Z", "+00:00"))
    left = cooldown_left([s for s in pc.replies if s.get("run_id")], pc.user, now, minutes)
    if left > 0:
        raise Refusal(f"{md_escape(pc.user)} dispatched on this PR less than {minutes} minutes ago; "
                      f"try again in {left:.0f} minutes (GPU time is scarce).")
    plan = await plan_dispatch(pc.api, pc.config, lane, pc.pr, command.jobs, command.sha, pc.default_branch)
    try:
        run = await send(pc.api, plan)
    except GitHubError as exc:
        raise Refusal(describe(exc)) from exc
    inputs = ", ".join(f"`{k}={v}`" for k, v in plan.inputs.items())
    where = f"[run {run['id']}]({run.get('html_url')})" if run else "a run (GitHub did not say which; see the Actions tab)"
    message = (f"Dispatched `{lane.path}` on `{md_escape(plan.ref)}` with {inputs}: {where}. "
               f"Jobs: {', '.join(f'`{j}`' for j in plan.targets)}. This reply is edited when the run completes.")
    if run:
        pc.ctx.state.cache[("dispatch", pc.repo, int(run["id"]))] = pc.number
    return Outcome(message, ROCKET, {"lane": lane.name, "run_id": int(run["id"]) if run else None,
                                     "targets": list(plan.targets), "sha": plan.head_sha})


async def refresh(pc: PullContext) -> Outcome:
    head_sha = str(pc.pr["head"]["sha"])
    found = await asyncio.gather(*(latest_lane_run(pc.api, lane, head_sha, completed=True)
                                   for lane in pc.lanes.values()))
    runs = [run for run in found if run is not None]
    if not runs:
        raise Refusal(f"No completed lane run for `{head_sha[:12]}` yet; the report follows the next one.")
    latest = max(runs, key=lambda r: (str(r.get("created_at")), r["id"]))
    await report_run(pc.api, pc.ctx, latest, force_comment=pc.number)
    return Outcome(f"Report refreshed from [run {latest['id']}]({latest.get('html_url')}).", THUMBS_UP)


async def approve(pc: PullContext, command: Command) -> Outcome:
    await require(pc, pc.config.approve_permission, "/fold approve")
    report = await find_comment(pc.api, pc.number, pc.login)
    state = read_state(report["body"]) if report else None
    if not report or not state or not state.get("patch_id"):
        raise ApproveRefusal("There is no foldbot patch on this PR to approve yet.")
    current = str(state["patch_id"])
    if command.patch_id and command.patch_id != current:
        raise ApproveRefusal(f"`{md_escape(command.patch_id)}` is not the current patch: the report shows "
                             f"`{current}`. Read it, then `/fold approve {current}`.")
    paths = sorted(state.get("blobs", {}))
    unchanged = all(pc.blobs.get(p) == state["blobs"][p] for p in paths) and paths
    if unchanged:
        patch = patch_text(report["body"])
        if patch is None:
            raise ApproveRefusal("The report's patch cannot be read back; `/fold refresh` rewrites it.")
        before = {p: pc.files[p] for p in paths}
        files = apply_patch(patch, before)
        await asyncio.to_thread(check_patch, patch, [FileEdit(p, before[p], text) for p, text in files.items()], before)
    else:
        bundles = [await run_bundle(pc.api, await pc.api.run(int(run_id)), pc.ctx.state.cache)
                   for run_id in state.get("runs", [])]
        analysis = await asyncio.to_thread(analyze, pc.files, bundles, pc.config)
        if analysis.patch_id != current:
            new_state = {**state, "base_sha": pc.base_sha, "blobs": pc.blobs, "patch_id": analysis.patch_id}
            checks = (await asyncio.to_thread(check_patch, analysis.patch, analysis.edits, pc.files)).summary() if analysis.patch else None
            body = to_markdown(analysis, checks=checks, state=new_state,
                               title=PR_REPORT_TITLE)
            await pc.api.update_comment(report["id"], body)
            if analysis.patch_id is None:
                raise ApproveRefusal(f"The lane files changed on `{pc.default_branch}` since the report, and "
                                     "nothing is left to fold. The report above is updated; nothing was committed.")
            raise ApproveRefusal(f"The lane files changed on `{pc.default_branch}` since the report; the plan is "
                                 f"recomputed and the patch is now `{analysis.patch_id}` (updated above). "
                                 f"Nothing was committed: review it, then `/fold approve {analysis.patch_id}`.")
        files = {e.path: e.after for e in analysis.edits}
    title = f"foldbot: fold short AMD suites into existing shards (patch {current})"
    body = pull_body(pc, report["body"], current)
    committed = await commit_and_open(pc.api, base_sha=pc.base_sha, default_branch=pc.default_branch,
                                      patch_id=current, files=files, title=title, body=body)
    pull = committed.pull
    verb = "Opened" if committed.created else "Already open:"
    return Outcome(f"{verb} {pull.get('html_url')} (#{pull['number']}) with patch `{current}` on branch "
                   f"`{committed.branch}`.", ROCKET, {"pull": int(pull["number"]), "patch_id": current})


def pull_body(pc: PullContext, report_body: str, patch_id: str) -> str:
    suggestions = report_body.split("#### Suggestions", 1)[1].split("<details>", 1)[0].strip() \
        if "#### Suggestions" in report_body else ""
    summary = next((line for line in report_body.splitlines() if line.startswith("The patch below saves")), "")

    lanes = ", ".join(f"`/dispatch {name}`" for name in pc.lanes)
    return (f"foldbot patch `{patch_id}`, approved by {md_escape(pc.user)} in #{pc.number}.\n\n"
            f"{summary.replace('The patch below saves', 'This saves')}\n\n{suggestions}\n\n"
            "**Note:** a change to workflow files alone may not trigger the lanes it folds (their path filters and "
            f"change gates look at the code). Run them on this PR with {lanes} before merging.\n")


def help_text(pc: PullContext) -> str:
    lines = ["foldbot's commands on a pull request:", "",
             "- `/dispatch <lane> [<job-id> ...] [sha=<hex>]`: run the GPU jobs of a lane that its change filter "
             f"skipped (or the named jobs); needs **{pc.config.dispatch_permission}**. On a PR from a fork, "
             "`sha=` must name the head commit you reviewed.",
             f"- `/fold approve [<patch-id>]`: commit the report's patch on a branch and open a PR; needs "
             f"**{pc.config.approve_permission}**.",
             "- `/fold refresh`: recompute the report from the latest lane run of this PR.",
             "- `/fold help`: this text.", ""]
    for lane in pc.lanes.values():
        jobs = lane.dispatchable(pc.config)
        lines.append(f"Lane `{lane.name}` (`{lane.path}`): {', '.join(f'`{j}`' for j in jobs) or 'no dispatchable jobs'}.")
    return "\n".join(lines)
