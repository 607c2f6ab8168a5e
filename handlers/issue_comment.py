"""`issue_comment` created on a pull request: foldbot's chat commands. Comments by bots
(foldbot included) and edited comments are ignored; so is every line that is not
foldbot's (`/rerun-failed-ci` and friends belong to other handlers).

Each command gets 👀 at once, one reply that quotes it, and 🚀/👍 when done or 😕
when refused. A command already answered (a redelivery after a crash) is not run
again: foldbot's replies carry the id of the comment and the line they answer. The
commands share one read of the PR (`PullRead`); each is a module of its own."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Awaitable, Callable

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.commands import Command, parse_commands
from bot.context import Context, PullRead
from bot.dispatch import lanes_of
from bot.github import GitHub, GitHubError
from bot.publish import is_ours, read_reply
from bot.replies import CONFUSED, EYES, REPLY_MARKER, Outcome, reply_body
from bot.report import md_escape
from bot.reporting import USER_ERRORS
from bot.repo import default_branch_head, read_config, read_lanes
from bot.states import ReplyState

from . import dispatch, fold_approve, fold_help, fold_refresh

router = routing.Router()

Handler = Callable[[RepoAPI, Context, PullRead, Command], Awaitable[Outcome]]
COMMANDS: dict[str, Handler] = {
    "dispatch": dispatch.run,
    "fold-approve": fold_approve.run,
    "fold-refresh": fold_refresh.run,
    "fold-help": fold_help.run,
}


def kind(command: Command) -> str:
    return command.name if command.name == "dispatch" else f"fold-{command.subcommand}"


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


async def run_commands(api: RepoAPI, ctx: Context, number: int, comment: dict[str, Any],
                       commands: list[Command]) -> None:
    login = await ctx.pool.bot_login()
    replies = await our_replies(api, number, login)
    answered = {(r.comment_id, r.line) for r in replies}
    pull: PullRead | None = None
    for command in commands:
        if (comment["id"], command.line) in answered:
            ctx.log.info("%s#%d: `%s` of comment %s was answered already", api.repo, number, command.line, comment["id"])
            continue
        if command.error:
            outcome = Outcome(command.error, CONFUSED)
        else:
            await api.react(comment["id"], EYES)
            try:
                if pull is None:
                    pull = await read_pull(api, number, comment, login, tuple(replies))
                outcome = await COMMANDS[kind(command)](api, ctx, pull, command)
            except USER_ERRORS as exc:
                outcome = Outcome(f"foldbot cannot read this repository's CI files: {md_escape(str(exc))}", CONFUSED)
            except GitHubError as exc:
                ctx.log.error("%s#%d: `%s` failed: %s", api.repo, number, command.line, exc)
                outcome = Outcome(f"A GitHub call failed ({exc.status}); nothing was changed. Try again later.", CONFUSED)
        state = ReplyState(kind=kind(command), comment_id=int(comment["id"]), line=command.line,
                           user=str(comment["user"]["login"]), at=str(comment["created_at"]),
                           **{k: tuple(v) if k == "targets" else v for k, v in outcome.state.items()})
        await api.create_comment(number, reply_body(command.line, outcome.message, state))
        replies.append(state)
        if pull is not None:
            pull = replace(pull, replies=tuple(replies))
        await api.react(comment["id"], outcome.reaction)


async def our_replies(api: RepoAPI, number: int, login: str) -> list[ReplyState]:
    """foldbot's own replies on a PR, oldest first."""
    found = [read_reply(c.get("body") or "") for c in await api.comments(number) if is_ours(c, login, REPLY_MARKER)]
    return [state for state in found if state is not None]


async def read_pull(api: RepoAPI, number: int, comment: dict[str, Any], login: str,
                    replies: tuple[ReplyState, ...]) -> PullRead:
    default_branch, base_sha = await default_branch_head(api)
    config = await read_config(api, base_sha)
    lanes, pr = await asyncio.gather(read_lanes(api, base_sha, config), api.pull(number))
    return PullRead(number=number, comment=comment, login=login, default_branch=default_branch, base_sha=base_sha,
                    config=config, files=lanes.files, blobs=lanes.blobs, lanes=lanes_of(lanes.files), pr=pr,
                    replies=replies)
