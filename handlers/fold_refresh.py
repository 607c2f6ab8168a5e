"""`/fold refresh`: recompute the PR's report from its latest completed lane run.
Read (the lanes' latest completed runs for the head), decide (the newest), write
(the report, as `workflow_run` writes it; the dashboard only when that run is still
the lane's latest)."""

from __future__ import annotations

import asyncio

from bot.api import RepoAPI
from bot.commands import Command, no_lanes
from bot.context import Context, PullRead
from bot.publish import ISSUES_OFF, Written
from bot.replies import CONFUSED, THUMBS_UP, Outcome, Refusal
from bot.report import md_escape
from bot.repo import run_order

from .dispatch import lane_run
from .workflow_run import Unanalysed, report_run


#: Why a refresh wrote no comment on the PR.
NO_COMMENTS = ("`.github/foldbot.yml` says `comment_on: none`: no pull request gets a report comment "
               "(`comment_on: ci-prs` gives one to those that change CI files, `all-prs` to all).")


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    del command  # takes no arguments
    head_sha = str(pull.pr["head"]["sha"])
    if not pull.lanes:  # no run of a lane will come: there is no report to refresh
        return Outcome.refused(Refusal(f"{no_lanes(pull.config)} There is no report to refresh."))
    found = await asyncio.gather(*(lane_run(api, lane, head_sha, completed=True) for lane in pull.lanes.values()))
    runs = [r for r in found if r is not None]
    if not runs:
        return Outcome.refused(Refusal(f"No completed lane run for `{head_sha[:12]}` yet; the report follows the next one."))
    latest = max(runs, key=run_order)
    reported = await report_run(api, ctx, latest, force_comment=pull.number, default_branch=pull.default_branch,
                                pulls={pull.number: pull.pr})
    ran = f"[run {latest['id']}]({latest.get('html_url')})"
    if isinstance(reported, Unanalysed):  # the dashboard says what to fix, in place of a report
        if reported.dashboard is None:
            return Outcome(f"Nothing refreshed: foldbot could not analyse {ran}: {md_escape(reported.reason)}",
                           CONFUSED)  # (Issues are off: no dashboard issue says it)
        return Outcome(f"Nothing refreshed: foldbot could not analyse {ran}; the {_link(reported.dashboard)} says "
                       "what to fix.", CONFUSED)
    if reported is None:  # the lane file left the default branch (or the config's lanes) meanwhile
        return Outcome(f"Nothing refreshed: the workflow of {ran} is no longer a lane on `{pull.default_branch}`.",
                       CONFUSED)
    if reported.dashboard is None:  # Issues are turned off: the PR's comment is the report
        if pull.number in reported.comments:
            return Outcome(f"Report refreshed from {ran}.", THUMBS_UP)
        return Outcome(f"Nothing refreshed: {NO_COMMENTS} {ISSUES_OFF}.", CONFUSED)
    dashboard = _link(reported.dashboard)
    if pull.number in reported.comments:
        stays = "" if reported.latest else \
            f" The {dashboard} stays on the lane's latest completed run, newer than this one."
        return Outcome(f"Report refreshed from {ran}.{stays}", THUMBS_UP)
    where = (f"Report refreshed from {ran} on the {dashboard}" if reported.latest else
             f"Nothing refreshed: {ran} is older than the lane's latest completed run, which the {dashboard} reports")
    return Outcome(f"{where}. {NO_COMMENTS}", THUMBS_UP)


def _link(dashboard: Written) -> str:
    return f"[dashboard issue #{dashboard.number}]({dashboard.url})"
