"""Reporting a lane run: read what the analysis needs, analyse, and write the dashboard
issue and the PR comments. Called by the `workflow_run` handler and by `/fold refresh`."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from .analysis import Analysis, AnalysisError, analyze
from .config import ConfigError, lane_name
from .edit import EditError, VerificationError
from .api import RepoAPI
from .joblogs import read_logs
from .publish import upsert_comment, upsert_dashboard
from .repo import default_branch_head, history, pull_requests_of_run, read_config, read_lanes, touches_ci
from .report import MARKER, code, md_escape, pull_summary, to_markdown
from .states import ReportState
from .context import Context
from .timing import BundleError
from .verify import PatchCheckError, check_patch
from .workflow import WorkflowError

PR_REPORT_TITLE = "foldbot: AMD CI setup of this pull request's run"

#: Problems with the repository's own files: reported on the dashboard, not retried.
USER_ERRORS = (AnalysisError, BundleError, ConfigError, WorkflowError, EditError, VerificationError, PatchCheckError)


async def report_run(api: RepoAPI, ctx: Context, run: dict[str, Any], force_comment: int | None = None) -> None:
    """Analyse a completed lane run; update the dashboard and the comments of its PRs
    (`force_comment`: also this PR's, whatever it changes: someone asked for it)."""
    repo = api.repo
    path = str(run["path"]).split("@", 1)[0]
    (_, head), login = await asyncio.gather(default_branch_head(api), ctx.pool.bot_login())
    try:
        config = await read_config(api, head)
    except ConfigError as exc:
        await upsert_dashboard(api, error_body(repo, str(exc)), login)
        ctx.log.warning("%s: %s", repo, exc)
        return
    if not config.is_lane(path):
        ctx.log.info("%s: %s is not a lane workflow; nothing to do", repo, path)
        return
    lanes, bundles, prs = await asyncio.gather(
        read_lanes(api, head, config, also=(path,)),
        history(api, run, config.history_runs, ctx.state.cache),
        pull_requests_of_run(api, run),
    )
    if path not in lanes.files:
        ctx.log.info("%s: %s is not on the default branch (yet); nothing to patch", repo, path)
        return
    try:
        analysis = await asyncio.to_thread(analyze, lanes.files, bundles, config)
        if config.logs_fetch and analysis.plan.reshard_candidates:
            read = await read_logs(api, analysis, config, ctx.state.cache)
            if read.logs or read.problems:
                analysis = await asyncio.to_thread(analyze, lanes.files, bundles, config, read.logs, read.problems)
            ctx.log.info("%s: %d shard logs used, %d downloaded, %d not readable", repo, len(read.logs),
                         read.downloads, len(read.problems))
        checks = await asyncio.to_thread(check_patch, analysis.patch, analysis.edits, lanes.files) if analysis.patch else None
    except USER_ERRORS as exc:
        await upsert_dashboard(api, error_body(repo, str(exc)), login)
        ctx.log.warning("%s: cannot analyse %s: %s", repo, path, exc)
        return
    state = ReportState(workflow=path, base_sha=head, head_sha=str(run["head_sha"]),
                        runs=tuple(int(b["workflow_run"]["id"]) for b in bundles), blobs=lanes.blobs,
                        patch_id=analysis.patch_id, patch=analysis.patch, summary=pull_summary(analysis))
    check_text = checks.summary() if checks else None
    written = await upsert_dashboard(api, to_markdown(analysis, checks=check_text, state=state.to_json()), login)
    ctx.log.info("%s: dashboard issue #%d %s", repo, written.number, written.action)
    if force_comment is not None and force_comment not in prs:
        prs = [*prs, force_comment]
    for number in prs:
        if number != force_comment:
            if config.comment_on == "none":
                continue
            if config.comment_on == "ci-prs" and not touches_ci(await api.pull_files(number), config):
                continue
        body = to_markdown(analysis, checks=check_text, state=replace(state, pr=number).to_json(),
                           title=PR_REPORT_TITLE, skipped_note=skipped_note(analysis))
        written = await upsert_comment(api, number, body, login)
        ctx.log.info("%s#%d: report comment %s", repo, number, written.action)


def skipped_note(analysis: Analysis) -> str | None:
    """The GPU jobs this run skipped, and how to run them."""
    skipped = sorted({j.workflow_job for j in analysis.latest.amd_jobs
                      if j.conclusion == "skipped" and j.workflow_job})
    if not skipped:
        return None
    lane = lane_name(analysis.latest.workflow_path)
    listed = ", ".join(code(job) for job in skipped)
    return (f"**Skipped in this run** ({len(skipped)} GPU jobs, by the change filter or the gate): {listed}. "
            f"A maintainer with write access can run them with `/dispatch {lane}`.")


def error_body(repo: str, message: str) -> str:
    return (f"{MARKER}\n### foldbot: AMD CI setup report\n\n"
            f"foldbot could not analyse {md_escape(repo)}: {md_escape(message)}\n\n"
            "Fix the file it names; the next completed lane run updates this report.\n")

