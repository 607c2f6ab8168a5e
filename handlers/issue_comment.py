"""`issue_comment` created on a pull request: foldbot's chat commands. Comments by bots
(foldbot included) and edited comments are ignored; so is every line that is not
foldbot's (`/rerun-failed-ci` and friends belong to other handlers)."""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.chatops import run_commands
from bot.commands import parse_commands
from bot.github import GitHub
from bot.context import Context

router = routing.Router()


@router.register("issue_comment", action="created")
async def on_created(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    issue, comment = event.data["issue"], event.data["comment"]
    user = comment.get("user") or {}
    if not issue.get("pull_request") or user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"):
        return
    commands = parse_commands(str(comment.get("body") or ""))
    if not commands:
        return
    repo = event.data["repository"]["full_name"]
    async with ctx.state.lock(repo):
        await run_commands(RepoAPI(gh, repo), ctx, int(issue["number"]), comment, commands)
