"""`pull_request` synchronize: foldbot's report on the PR describes an older commit now (or, pushed
back to the commit it describes, its own again)."""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.github import GitHub
from bot.publish import find_comment, mark_stale, read_report, unmark_stale
from bot.context import Context

router = routing.Router()


@router.register("pull_request", action="synchronize")
async def on_synchronize(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    repo = event.data["repository"]["full_name"]
    number = int(event.data["number"])
    new_sha = str(event.data["pull_request"]["head"]["sha"])
    login = await ctx.pool.bot_login()
    api = RepoAPI(gh, repo)
    async with ctx.state.lock(repo):
        comment = await find_comment(api, number, login)
        if comment is None:
            return
        state = read_report(comment["body"])
        old_sha = state.head_sha if state else str(event.data.get("before") or "")
        if old_sha == new_sha:  # pushed back to the commit the report is of (A, B, then A again)
            body, said = unmark_stale(comment["body"]), "current again"
        else:
            body, said = mark_stale(comment["body"], old_sha, new_sha), "marked stale"
        if body != comment["body"]:
            await api.update_comment(comment["id"], body)
            ctx.log.info("%s#%d: report %s (head %s)", repo, number, said, new_sha[:12])
