"""`workflow_run` completed: measure the lane, update the dashboard issue and the
comment on the pull request when it changes CI files; for a run that `/dispatch`
started, edit the dispatch reply with its outcome."""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.github import GitHub
from bot.replies import finish_dispatch_replies
from bot.reporting import report_run
from bot.context import Context

router = routing.Router()


@router.register("workflow_run", action="completed")
async def on_completed(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    run = event.data["workflow_run"]
    repo = event.data["repository"]["full_name"]
    key = ("workflow_run", repo, run["id"], run.get("run_attempt"))
    async with ctx.state.lock(repo):
        if key in ctx.state.done_keys:
            ctx.log.info("run %s attempt %s of %s was already reported", run["id"], run.get("run_attempt"), repo)
            return
        api = RepoAPI(gh, repo)
        if run.get("event") == "workflow_dispatch":
            await finish_dispatch_replies(api, ctx, run)
        await report_run(api, ctx, run)
        ctx.state.done_keys[key] = True
