"""`workflow_run` completed: measure the lane, update the dashboard issue and the
comment on each pull request the run tested that changes CI files; for a run that
`/dispatch` started, edit the dispatch reply with its outcome.

Read (the lane files, config and history at the default branch head, the shard logs
the plan needs), decide (`bot.analysis.analyze`, `bot.reporting`), write (the reports)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, replace
from typing import Any, Collection, Sequence

from gidgethub import routing, sansio

from bot.analysis import Analysis, Unmeasured, analyze, gated
from bot.api import RepoAPI
from bot.config import ConfigError
from bot.context import Context
from bot.github import GitHub, GitHubError, permanent, unreachable
from bot.joblogs import read_logs
from bot.publish import (ISSUES_OFF, NO_ISSUES_PERMISSION, Written, find_dashboard, issues_off, issues_refused, mark_stale, our_replies, read_report,
                         report_comments, stale_head, upsert_comment, upsert_dashboard, with_state)
from bot.reconcile import remembered_as
from bot.replies import completed_reply, dispatched_head
from bot.report import BODY_LIMIT, pull_summary, state_block, suggestion_states, to_markdown, totals
from bot.reporting import (PR_REPORT_TITLE, USER_ERRORS, comment_policy, error_body, lane_change_note, skipped_note,
                           unconfigured_body)
from bot.config import RepoConfig
from bot.repo import (LaneFiles, amd_workflows, history, pull_requests_of_run, read_config, read_lanes, run_order,
                      touches_ci, workflow_listing)
from bot.states import LaneFigures, ReplyState, ReportState, report_scope, signed
from bot.timing import job_labels
from bot.verify import check_patch
from bot.workflow import WorkflowError

router = routing.Router()

#: How many of the most recently updated open PRs are searched for a dispatched run's head.
RECENT_PULLS = 300
#: The defaults, before a repository's config is read.
DEFAULT_CONFIG = RepoConfig()
#: The history read while the config (which may ask for another length) is read.
DEFAULT_HISTORY = DEFAULT_CONFIG.history_runs


@router.register("workflow_run", action="completed")
async def on_completed(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    run = event.data["workflow_run"]
    repo = event.data["repository"]["full_name"]
    if event.data["repository"].get("archived") is True:  # read-only: no report could be written
        ctx.log.info("%s is archived (read-only): run %s is not analysed, as no report could be written there",
                     repo, run["id"])
        return
    if run.get("conclusion") == "action_required":  # (its `completed` comes again once it is approved and ran)
        ctx.log.info("%s: run %s waits for a maintainer's approval to run (a fork's first pull request): no job ran, "
                     "nothing to measure yet", repo, run["id"])
        return
    # What a reconciling round (or a catch-up) brings, the dashboard does not name: remembered apart from GitHub's
    # delivery of the run, and a round's and a catch-up's of one run alike (`remembered_as`)
    key = ("workflow_run", repo, run["id"], run.get("run_attempt"), remembered_as(ctx.delivery_id))
    async with ctx.state.lock(repo):
        if key in ctx.state.done_keys:
            ctx.log.info("run %s attempt %s of %s was already reported", run["id"], run.get("run_attempt"), repo)
            return
        api = RepoAPI(gh, repo)
        if run.get("event") == "workflow_dispatch":
            await finish_dispatch_replies(api, ctx, run)
        branch = (event.data["repository"] or {}).get("default_branch")
        await report_run(api, ctx, run, default_branch=branch if isinstance(branch, str) and branch else None)
        ctx.state.done_keys[key] = True


@dataclass(frozen=True)
class Reported:
    """What a report wrote: the dashboard issue (`latest`: with this run's report; else left to
    the newer run it reports) and the PRs' comments."""

    dashboard: Written | None  # None: Issues are turned off in the repository
    latest: bool
    comments: dict[int, Written]


@dataclass(frozen=True)
class Unanalysed:
    """A run foldbot could not analyse (a broken config or lane file, runs it cannot read):
    why, and the dashboard issue that says it instead of a report (None: Issues are off)."""

    reason: str
    dashboard: Written | None


async def report_run(api: RepoAPI, ctx: Context, run: dict[str, Any], force_comment: int | None = None, *,
                     default_branch: str | None = None, pulls: dict[int, dict[str, Any]] | None = None
                     ) -> Reported | Unanalysed | None:
    """Analyse a completed lane run; update the dashboard and the comments of its PRs
    (`force_comment`: also this PR's, whatever it changes: someone asked for it). The dashboard
    only moves forward: a run older than the lane's latest completed run (a refresh of an old PR,
    a late delivery) leaves it as it is.
    `default_branch`: as the event's payload names it (else it is read); `pulls`: PRs the caller
    has read (their head and base). A PR whose head is no longer the run's gets the report marked
    stale. Unanalysed: the dashboard says what to fix instead; None: not a lane's run, nothing reported."""
    repo = api.repo
    path = str(run["path"]).split("@", 1)[0]
    # read: what does not depend on each other at once; nothing the payload or a cache holds
    if default_branch is None:
        default_branch = str((await api.info())["default_branch"])
    head, login = await asyncio.gather(api.branch_head(default_branch), ctx.pool.bot_login())
    # A run's history and PRs are read with the config when it is likely a lane's, by the config last
    # read here (the defaults before): a lane's report waits for no extra round, and the runs of the
    # other workflows (most of a repository's) cost no reads of their own.
    known = ctx.state.cache.get(("config-seen", repo))
    likely = (known if isinstance(known, RepoConfig) else DEFAULT_CONFIG).is_lane(path)
    config_read, listing, *lane_reads = await asyncio.gather(
        _config(api, head, ctx), workflow_listing(api, head),
        *((history(api, run, DEFAULT_HISTORY, ctx.state.cache), pull_requests_of_run(api, run)) if likely else ()),
    )
    if isinstance(config_read, ConfigError):
        return await unanalysed(api, ctx, login, str(config_read), head=head)
    config = config_read
    ctx.state.cache[("config-seen", repo)] = config
    if not config.is_lane(path):
        if not any(entry.get("type") == "file" and config.is_lane(str(entry["path"])) for entry in listing):
            await _amd_without_lanes(api, ctx, run, head, config, listing, login)
        else:
            ctx.log.info("%s: %s is not a lane workflow; nothing to do", repo, path)
        return
    bundles, prs = lane_reads if lane_reads else await asyncio.gather(
        history(api, run, DEFAULT_HISTORY, ctx.state.cache), pull_requests_of_run(api, run))
    if bundles[-1]["workflow_run"] is not run:  # a late delivery of an older attempt: the run as it is now
        ctx.log.info("%s: run %s attempt %s is older than its attempt %s, which is reported instead", repo, run["id"],
                     run.get("run_attempt"), bundles[-1]["workflow_run"].get("run_attempt"))
        run = bundles[-1]["workflow_run"]
    latest_run = all(run_order(b["workflow_run"]) <= run_order(run) for b in bundles)  # (the dashboard only moves on)
    if config.history_runs > DEFAULT_HISTORY:  # read with the default, at once with the config; it asks for more
        bundles = await history(api, run, config.history_runs, ctx.state.cache)
    bundles = bundles[-config.history_runs:]
    policies = {n: comment_policy(config, forced=n == force_comment) for n in {*prs, *([force_comment] if force_comment else [])}}
    # Every PR's files: whether it changes CI files (`if-ci`), and, for any, which lane files it changes (the note
    # that the patch is against the default branch's, not the PR's: a refresh or `all-prs` too)
    readable = [n for n, policy in policies.items() if policy != "never"]
    lanes, changed = await asyncio.gather(
        _lanes(api, head, config, path, listing, ctx), asyncio.gather(*(api.pull_files(n) for n in readable)))
    if isinstance(lanes, WorkflowError):  # a lane file that is not text
        return await unanalysed(api, ctx, login, str(lanes), head=head, run=(path, run))
    touched = dict(zip(readable, changed))
    if path not in lanes.files:
        ctx.log.info("%s: %s is not on the default branch (yet); nothing to patch", repo, path)
        return
    # decide
    try:
        analysis = await analyze_with_logs(api, ctx, lanes.files, bundles, config, lanes.called)
        checks = await asyncio.to_thread(check_patch, analysis.patch, analysis.edits, lanes.files) if analysis.patch else None
    except USER_ERRORS as exc:
        return await unanalysed(api, ctx, login, str(exc), f"cannot analyse {path}: ", head=head, run=(path, run),
                                lanes=lanes.files)
    state = ReportState(workflow=path, base_sha=head, head_sha=str(run["head_sha"]),
                        runs=tuple(int(b["workflow_run"]["id"]) for b in bundles), blobs=lanes.blobs,
                        patch_id=analysis.patch_id, patch=analysis.patch, summary=pull_summary(analysis),
                        suggestions=suggestion_states(analysis))
    check_text = checks.summary() if checks else None
    numbers = [n for n, policy in policies.items()
               if policy == "always" or (policy == "if-ci" and touches_ci(touched[n], config, lanes.called))]
    # A PR that had its report while it changed CI files keeps it current once it no longer does (the
    # change reverted, or rebased away): else the report stays as of an older head, marked stale with a
    # run pending that came, for good.
    quiet = [n for n, policy in policies.items() if policy == "if-ci" and n not in numbers]
    found = {n: c for n, c in zip(quiet, await asyncio.gather(*(report_comments(api, n, login) for n in quiet)))
             if c}
    numbers += sorted(found)
    # write: the dashboard, then the PRs' comments (which link it) at once
    completion = (int(run["id"]), int(run.get("run_attempt") or 1))

    latest, figures = analysis.latest, totals(analysis.latest)
    headline = LaneFigures(latest.run_id, latest.html_url or "", latest.head_sha, figures["setup_seconds"],
                           figures["test_seconds"], figures["jobs"])

    # A run whose AMD jobs all skipped (a gate, a label or path filter: ROCm/xla's nightly lane runs on every PR label
    # event) measured nothing: the dashboard keeps the report it has, with this run counted reported.
    # (only jobs GitHub skipped: a run of none on AMD runners, runners the pattern no longer matches, or one GitHub
    # started no job of, says why on the dashboard)
    idle = gated(analysis.latest, analysis.stats)

    def dashboard_body(existing: dict[str, Any] | None) -> str:
        """This lane's report, with every lane's runs reported and headline (kept for the lanes
        still on the default branch); a run that measured nothing keeps the report there is."""
        previous = read_report(str(existing.get("body") or "")) if existing else None
        known = previous.reported if previous else {}
        if previous and not known:  # written before reported runs were kept: its lane's runs were, as it said
            known = {previous.workflow: tuple((r, 1) for r in previous.runs)}
        recorded = replace(state, reported=known)
        reported = replace(recorded, reported=recorded.reporting(path, *completion)).kept_for(lanes.files)
        # (only a report of the lane files as they are, as `/fold approve` judges it: one of a lane dropped since, or of
        # a file changed since, whose patch it would refuse, is replaced; a lane added beside it changes nothing)
        if idle and existing is not None and previous is not None and not previous.error and previous.blobs and \
                all(lanes.blobs.get(p) == blob for p, blob in previous.blobs.items()):
            kept = with_state(str(existing.get("body") or ""), state_block(signed(
                replace(previous, reported=reported).to_json(), ctx.state_keys, report_scope(repo, None))))
            if len(kept) <= BODY_LIMIT:  # (else the run's own report, which `to_markdown` trims to fit)
                ctx.log.info("%s: run %s ran no AMD job; the dashboard keeps the report of run %s", repo, run["id"],
                             previous.runs[-1] if previous.runs else "?")
                return kept
        # The headlines of the lanes there are now; the runs reported of every lane, of a lane dropped since its last
        # (`kept_for`): named a lane again, it is not reported twice (its headline comes back with its next run)
        lanes_now = {**(previous.lanes if previous else {}), path: headline}
        board = replace(state, reported=reported,
                        lanes={p: f for p, f in sorted(lanes_now.items()) if p in lanes.files})
        return to_markdown(analysis, checks=check_text, state=signed(board.to_json(), ctx.state_keys,
                                                                     report_scope(repo, None)),
                           other_lanes=[(p, f) for p, f in board.lanes.items() if p != path])

    dashboard: Written | None
    try:
        existing = None if latest_run else await find_dashboard(api, login)
        if existing is None:  # (a run older than the latest writes a dashboard there is not yet: nothing to roll back)
            dashboard = await upsert_dashboard(api, dashboard_body, login, found=None if latest_run else (None,))
            ctx.log.info("%s: dashboard issue #%d %s", repo, dashboard.number, dashboard.action)
        else:
            dashboard = Written("issue", int(existing["number"]), "unchanged", str(existing.get("body") or ""),
                                existing.get("html_url"))
            ctx.log.info("%s: dashboard issue #%d left to the lane's latest run, newer than run %s", repo,
                         dashboard.number, run["id"])
    except GitHubError as exc:
        why = await _no_dashboard(api, exc)
        if why is None:
            raise
        existing, dashboard = None, None  # the PRs' comments carry the whole report, as the dashboard would
        # (a permission not granted is the operator's to see: a warning)
        ctx.log.log(logging.INFO if numbers and why == ISSUES_OFF else logging.WARNING, "%s: %s%s", repo, why,
                    "" if numbers else f"; run {run['id']} has no pull request to comment on, so it is not reported")
    skipped = skipped_note(analysis)

    unread = [n for n in numbers if n not in found]  # (read here, not in upsert_comment: no more calls than before)
    found.update(zip(unread, await asyncio.gather(*(report_comments(api, n, login) for n in unread))))
    listed = {**_listed_pulls(run), **{n: _head_and_base(pr) for n, pr in (pulls or {}).items()}}
    heads = dict(zip(numbers, await asyncio.gather(*(_pull_now(api, run, n, listed.get(n), found[n], known=n in (pulls or {}),
                                                               default_branch=default_branch) for n in numbers))))

    def notes(number: int) -> str | None:  # (a PR that changes lane files: the report is about the default branch's)
        changed = sorted({p for paths in touched.get(number, ()) for p in paths if p in lanes.files or p in lanes.called})
        base = heads[number][1]
        called = [p for p in changed if p in lanes.called]
        return "\n\n".join(note for note in (lane_change_note(changed, default_branch, base, called), skipped)
                           if note) or None

    def pr_body(number: int) -> str:
        body = to_markdown(analysis, checks=check_text, title=PR_REPORT_TITLE,
                           state=signed(replace(state, pr=number).to_json(), ctx.state_keys, report_scope(repo, number)),
                           skipped_note=notes(number), dashboard=(dashboard.url or f"#{dashboard.number}") if dashboard else None)
        now = heads[number][0]
        return body if now is None or now == state.head_sha else mark_stale(body, state.head_sha, now)

    bodies = {n: pr_body(n) for n in sorted(numbers)}

    async def comment(number: int, body: str) -> Written | None:
        newer = _newer_report(found[number], path, run) if number != force_comment else None
        if newer is not None:  # a late delivery of an older run of the lane: the comment only moves forward
            ctx.log.info("%s#%d: report comment left to run %s, newer than run %s", repo, number, newer[1], run["id"])
            return Written("comment", int(newer[0]["id"]), "unchanged", str(newer[0].get("body") or ""),
                           newer[0].get("html_url"))
        try:
            return await upsert_comment(api, number, body, login, found=found[number])
        except GitHubError as exc:
            refused = permanent(exc)
            if refused is None or refused.kind != "locked":
                raise
            # GitHub will refuse it at every run: said, and the report's other writes stand
            ctx.log.warning("%s#%d: report comment not written: %s (%s)", repo, number, refused.reason, exc.message)
            return None

    comments = await asyncio.gather(*(comment(n, body) for n, body in bodies.items()))
    for n, written in zip(bodies, comments):
        if written is not None:
            ctx.log.info("%s#%d: report comment %s", repo, n, written.action)
    return Reported(dashboard, existing is None, {n: w for n, w in zip(bodies, comments) if w is not None})


async def _no_dashboard(api: RepoAPI, exc: GitHubError) -> str | None:
    """Why the repository has no dashboard issue, when GitHub's refusal says it has none: Issues turned
    off (410), or the Issues permission not granted (403, with the repository still in this
    installation; `unreachable` forgets the token, so the next holds a grant made since). None: not
    that (a repository taken out of the installation fails as any write there does)."""
    if issues_off(exc):
        return ISSUES_OFF
    if issues_refused(exc, api.repo) and await unreachable(api.gh, api.repo, exc) is None:
        return NO_ISSUES_PERMISSION
    return None


def _newer_report(comments: list[dict[str, Any]], path: str, run: dict[str, Any]) -> tuple[dict[str, Any], int] | None:
    """The PR's report comment and the run it reports, when that is newer than `run` (GitHub's run
    ids grow with time; a run's history ends with the run itself) and of the same lane, or of
    another lane at another commit: the comment only moves forward. (Another lane's older run
    of the same commit is reported: the two lanes' runs of one push end in any order.)"""
    previous = read_report(str(comments[0].get("body") or "")) if comments else None
    if previous is None or not previous.runs or previous.runs[-1] <= int(run["id"]):
        return None
    if previous.workflow != path and previous.head_sha == str(run["head_sha"]):
        return None
    return comments[0], previous.runs[-1]


def _head_and_base(pr: Any) -> tuple[str | None, str | None]:
    """A PR's head SHA and base branch as an object of GitHub's says them (None: not said)."""
    head = (pr.get("head") if isinstance(pr, dict) else None) or {}
    base = (pr.get("base") if isinstance(pr, dict) else None) or {}
    sha, ref = head.get("sha") if isinstance(head, dict) else None, base.get("ref") if isinstance(base, dict) else None
    return (sha if isinstance(sha, str) and sha else None), (ref if isinstance(ref, str) and ref else None)


def _listed_pulls(run: dict[str, Any]) -> dict[int, tuple[str | None, str | None]]:
    """The PRs the run lists, with their head and base as GitHub listed them. GitHub lists a PR by its head
    *branch*: a run of an older head, completing after a push (cancelled by the lane's `concurrency`), lists the
    PR at its new head."""
    return {int(pr["number"]): _head_and_base(pr) for pr in run.get("pull_requests") or []
            if isinstance(pr, dict) and isinstance(pr.get("number"), int)}


async def _pull_now(api: RepoAPI, run: dict[str, Any], number: int, listed: tuple[str | None, str | None] | None,
                    comments: list[dict[str, Any]], *, known: bool, default_branch: str) -> tuple[str | None, str | None]:
    """The PR's head and base now, when there is a sign that its head is not the run's (the run lists
    it at another head; its comment's stale line names another); else as the run lists them (None: not
    said, taken to be the run's). Read again only on such a sign: no call in the common case. A run
    of the PR's branch has a commit of the PR for its head; a `pull_request_target` run's head is the
    base branch's, as is that of a run dispatched on the default branch for a fork's PR: of those, the
    head is not compared."""
    head, base = listed or (None, None)
    ran = str(run["head_sha"])
    if run.get("event") == "pull_request_target" or (
            run.get("event") == "workflow_dispatch" and run.get("head_branch") in (None, default_branch)):
        return None, base
    marked = stale_head(str(comments[0].get("body") or "")) if comments else None
    if known or ((head is None or head == ran) and (marked is None or ran.startswith(marked))):
        return head, base
    return _head_and_base(await api.pull(number))


#: GitHub calls an installation keeps for reports and commands: with fewer left, shard logs
#: (the optional reads) wait for a later run.
CALL_RESERVE = 300


def _budget_low(api: RepoAPI, wanted: int) -> Unmeasured | None:
    """A line saying the shard logs wait, when this installation's rate limit is low."""
    client = api.gh.api
    left = client.remaining
    if left is None or left >= CALL_RESERVE + wanted:
        return None
    when = time.strftime("%H:%M UTC", time.gmtime(client.reset_at)) if client.reset_at else "its reset"
    return Unmeasured("shard logs", f"not read this time: this installation has {left} GitHub calls left until {when}, "
                      f"and foldbot keeps {CALL_RESERVE} for reports and commands",
                      "nothing to do: they are read on a later run; or lower `logs: {max_jobs: N}`")


async def _config(api: RepoAPI, head: str, ctx: Context) -> RepoConfig | ConfigError:
    try:
        return await read_config(api, head, ctx.state.cache)
    except ConfigError as exc:
        return exc


async def _amd_without_lanes(api: RepoAPI, ctx: Context, run: dict[str, Any], head: str, config: RepoConfig,
                             listing: list[dict[str, Any]], login: str) -> None:
    """A run of a workflow that is no lane, in a repository that has none: when its jobs ran on
    AMD runners, the dashboard names them (with the other files found so in this process, and
    the workflow files whose name says AMD) and the config that makes them lanes, as at install
    (`handlers/installation.py`). Once a file a process, once it is told: each workflow's runs
    look alike, and a busy repository runs many. Only a file of the default branch (not one a
    fork's PR brings), and only a run whose jobs ran (a skipped job has no labels)."""
    path = str(run["path"]).split("@", 1)[0]
    key = ("amd-without-lanes", api.repo, path)
    if key in ctx.state.cache or not any(str(entry.get("path")) == path for entry in listing):
        ctx.log.info("%s: %s is not a lane workflow; nothing to do", api.repo, path)
        return
    scanned = await amd_workflows(api, head, config, listing)  # (as at install: the file's own job ids)
    seen = ctx.state.cache.setdefault(("amd-without-lanes-found", api.repo), {})
    if path not in scanned:
        jobs = await api.jobs(int(run["id"]))
        labelled = [job for job in jobs if job_labels(job)]
        # a matrix's jobs, `gpu (mi300, 0)` and the like, as the one job they are
        amd = sorted({re.sub(r" \(.*\)$", "", str(job.get("name"))) for job in labelled
                      if config.is_amd_runner(job_labels(job))})
        if not amd:
            if labelled:  # (its jobs ran, on other runners: it is no AMD workflow)
                ctx.state.cache[key] = True
            ctx.log.info("%s: %s is not a lane workflow, and ran no job on an AMD runner; nothing to do", api.repo, path)
            return
        seen[path] = amd
    await unconfigured(api, ctx, login, config, {**scanned, **seen})
    ctx.state.cache[key] = True


async def unconfigured(api: RepoAPI, ctx: Context, login: str, config: RepoConfig, found: dict[str, list[str]]) -> None:
    """The dashboard of a repository without lanes names the workflow files `found` to run jobs
    on AMD runners, and the config that makes them lanes (`unconfigured_body`); and the log."""
    files = ", ".join(found)
    try:
        written = await upsert_dashboard(api, unconfigured_body(api.repo, config, found), login)
    except GitHubError as exc:
        if not issues_off(exc):
            raise
        ctx.log.warning("%s: no lane file, though %s run jobs on AMD runners; %s, so nothing says so", api.repo, files,
                        ISSUES_OFF)
        return
    ctx.log.info("%s: no lane file, though %s run jobs on AMD runners: dashboard issue #%d %s says how to measure them",
                 api.repo, files, written.number, written.action)


async def unanalysed(api: RepoAPI, ctx: Context, login: str, reason: str, what: str = "", *, head: str = "",
                     run: tuple[str, dict[str, Any]] | None = None, lanes: Collection[str] | None = None) -> Unanalysed:
    """A run that cannot be analysed: the dashboard says why (`write_error`), and the log."""
    completion = None if run is None else (run[0], int(run[1]["id"]), int(run[1].get("run_attempt") or 1))
    written = await write_error(api, reason, login, ctx.state_keys, head=head, run=completion, lanes=lanes)
    ctx.log.warning("%s: %s%s%s", api.repo, what, reason, "" if written else f" ({ISSUES_OFF})")
    return Unanalysed(reason, written)


async def write_error(api: RepoAPI, message: str, login: str, keys: tuple[bytes, ...] = (), *, head: str = "",
                      run: tuple[str, int, int] | None = None, lanes: Collection[str] | None = None) -> Written | None:
    """The dashboard says what foldbot could not analyse, and what to fix. It keeps the lanes'
    record of the report it replaces (runs reported, headlines; not its patch, which may not
    hold any more), so reconciling and the next report go on from it; `run` (lane, id, attempt),
    a lane run this error is the report of, is counted reported. Its state is marked an error at
    `head` (the default branch head it was found at; "": not known): reconciling analyses again
    once the head has moved, so a fix puts the report back without waiting for a lane run.
    None: Issues are turned off, there is no dashboard (the caller's log line is all that says it)."""
    def body(existing: dict[str, Any] | None) -> str:
        previous = read_report(str(existing.get("body") or "")) if existing else None
        kept = replace(previous or ReportState(workflow="", base_sha="", head_sha="", runs=(), blobs={}),
                       patch_id=None, patch="", summary="", suggestions=(), base_sha=head, error=True)
        if run is not None:  # (the lane whose run could not be analysed: the one reconciling analyses again)
            kept = replace(kept, workflow=run[0], reported=kept.reporting(*run))
        # bounded as a report's record is (`kept_for`, by `lanes`); the lane files not read (a config or a lane file
        # that cannot be read), the paths reported last stand for the lanes
        lanes_now = set(lanes) if lanes is not None else kept.recent_paths() | ({run[0]} if run else set())
        kept = replace(kept, reported=kept.kept_for(lanes_now))
        return (f"{error_body(api.repo, message)}\n"
                f"{state_block(signed(kept.to_json(), keys, report_scope(api.repo, None)))}\n")

    try:
        return await upsert_dashboard(api, body, login)
    except GitHubError as exc:
        if not issues_off(exc):
            raise
        return None


async def _lanes(api: RepoAPI, head: str, config: RepoConfig, path: str, listing: list[dict[str, Any]],
                 ctx: Context) -> LaneFiles | WorkflowError:
    try:
        return await read_lanes(api, head, config, also=(path,), listing=listing, cache=ctx.state.files)
    except WorkflowError as exc:
        return exc


async def analyze_with_logs(api: RepoAPI, ctx: Context, files: dict[str, str], bundles: list[dict[str, Any]],
                            config: RepoConfig, called: dict[str, str] | None = None) -> Analysis:
    """The analysis of a lane's runs, with the shard logs its reshards can use when the
    installation's budget allows them (read, or said to wait). `called`: `LaneFiles.called`."""
    analysis = await asyncio.to_thread(analyze, files, bundles, config, None, (), called)
    if not (config.logs_fetch and analysis.plan.reshard_candidates):
        return analysis
    low = _budget_low(api, config.logs_max_jobs)
    if low:
        ctx.log.warning("%s: shard logs not read: %s", api.repo, low.reason)
        return await asyncio.to_thread(analyze, files, bundles, config, {}, (low,), called)
    read = await read_logs(api, analysis, config, ctx.state.cache)
    ctx.log.info("%s: %d shard logs used, %d downloaded, %d not readable", api.repo, len(read.logs),
                 read.downloads, len(read.problems))
    if read.logs or read.problems:
        return await asyncio.to_thread(analyze, files, bundles, config, read.logs, read.problems, called)
    return analysis


async def _pulls_with_head(api: RepoAPI, ctx: Context, sha: str, run_id: int, *, search: bool) -> list[int]:
    """The PRs whose dispatch may have started this run: the PR remembered when it
    was dispatched, the same-repository PRs GitHub associates with the commit, and,
    when neither is known and `search` is on (after a restart, for a fork PR: GitHub
    does not associate a fork's head commit with its PR), the open PR whose head it
    is, among the most recently updated (a `/dispatch` comment just updated it)."""
    numbers: list[int] = []
    known = ctx.state.cache.get(("dispatch", api.repo, run_id))
    if known is not None:
        numbers.append(int(known))
    pulls = await api.pulls_of_commit(sha)
    numbers += [int(p["number"]) for p in pulls if int(p["number"]) not in numbers]
    if numbers or not search:
        return numbers
    pull = await api.find_open_pull(lambda p: str((p.get("head") or {}).get("sha") or "").startswith(sha.lower()),
                                    limit=RECENT_PULLS)
    return [int(pull["number"])] if pull else []


def started_it(command: ReplyState, run: dict[str, Any], claimed: Collection[int] = (),
               runs: Sequence[dict[str, Any]] = ()) -> bool:
    """Whether a dispatch reply's command started this run: its id, or, when GitHub did not
    say which run the dispatch started, the title the lane gives it (`[<stage>] <sha>`): the
    earliest run so titled created after the command, among this one and `runs` (the lane's
    dispatched runs), leaving out the runs other replies of the PR claim by id (`claimed`).
    Another dispatch of the same jobs on the same head starts a run titled alike, later."""
    if command.kind != "dispatch":
        return False
    if command.run_id is not None:
        return command.run_id == run["id"]
    if not command.targets or command.sha is None:
        return False
    title = f"[{','.join(command.targets)}] {command.sha}"

    def titled(candidate: dict[str, Any]) -> bool:
        return (candidate.get("display_title") == title and str(candidate.get("created_at") or "") >= command.at
                and candidate["id"] not in claimed)

    if not titled(run):
        return False
    earliest = min((r for r in (run, *runs) if titled(r)), key=lambda r: (str(r.get("created_at") or ""), r["id"]))
    return bool(earliest["id"] == run["id"])


async def finish_dispatch_replies(api: RepoAPI, ctx: Context, run: dict[str, Any]) -> None:
    """Edit the dispatch reply that started this run with its conclusion per job."""
    sha, titled = dispatched_head(run)
    login = await ctx.pool.bot_login()
    # Only a run titled as the lanes title a dispatched run (`[<stage>] <sha>`) is searched for.
    numbers = await _pulls_with_head(api, ctx, sha, int(run["id"]), search=titled)
    if not numbers:
        ctx.log.info("%s: no open PR has head %s; run %s's dispatch reply is not edited", api.repo, sha[:12], run["id"])
        return
    jobs = await api.jobs(run["id"])
    lane_runs: list[dict[str, Any]] | None = None  # read once, when a reply does not know its run's id
    for number in numbers:
        ours = await our_replies(api, number, login)
        commands = [c for _, reply in ours for c in reply.commands if c.kind == "dispatch"]
        claimed = {c.run_id for c in commands if c.run_id is not None}
        if lane_runs is None and any(c.run_id is None for c in commands):
            lane_runs = await api.runs(run["workflow_id"], event="workflow_dispatch")  # titled by the PR head, not run on it
        for comment, reply in ours:
            if not any(started_it(c, run, claimed, lane_runs or ()) for c in reply.commands):
                continue
            body = str(comment["body"])
            new = completed_reply(body, run, jobs)
            if new != body:
                await api.update_comment(comment["id"], new)
                ctx.log.info("%s#%d: dispatch reply %s edited with run %s's %s", api.repo, number, comment["id"],
                             run["id"], run.get("conclusion"))
