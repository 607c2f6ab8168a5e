"""`/fold refresh`: recompute the PR's report from its latest completed lane run.
Read (the lanes' latest completed runs for the head), decide (the newest), write
(the report, as `workflow_run` writes it)."""

from __future__ import annotations

import asyncio

from bot.api import RepoAPI
from bot.commands import Command
from bot.context import Context, PullRead
from bot.replies import THUMBS_UP, Outcome, Refusal

from .dispatch import lane_run
from .workflow_run import report_run


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    del command  # takes no arguments
    head_sha = str(pull.pr["head"]["sha"])
    found = await asyncio.gather(*(lane_run(api, lane, head_sha, completed=True) for lane in pull.lanes.values()))
    runs = [r for r in found if r is not None]
    if not runs:
        return Outcome.refused(Refusal(f"No completed lane run for `{head_sha[:12]}` yet; the report follows the next one."))
    latest = max(runs, key=lambda r: (str(r.get("created_at")), r["id"]))
    await report_run(api, ctx, latest, force_comment=pull.number, default_branch=pull.default_branch)
    return Outcome(f"Report refreshed from [run {latest['id']}]({latest.get('html_url')}).", THUMBS_UP)
