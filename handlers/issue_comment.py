"""`issue_comment` created on a pull request (or on foldbot's dashboard issue: `/fold approve`
and `/fold help`): foldbot's chat commands. Comments by bots
(foldbot included) and edited comments are ignored; so is every line that is not
foldbot's (`/rerun-failed-ci` and friends belong to other handlers).

A comment gets 👀 at once and one reply, written before anything else happens and
edited with what each command (at most `MAX_COMMANDS`) came to; then 🚀/👍 when done
or 😕 when refused. Each command run or refused is one INFO line of the delivery's log
(the repository and number, the user, the command, what came of it). A comment already
answered is not run again; one whose reply was left pending (a crash) is resumed:
`/dispatch` then first looks for the run it may have started. A comment on a locked conversation is not run: GitHub refuses foldbot's
reply and reactions there, so nothing could say what it did. The commands share one read of the PR (`PullRead`); each is a module of
its own."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any, Awaitable, Callable

from gidgethub import routing, sansio

from bot.api import RepoAPI
from bot.commands import Command, help_text, parse_commands
from bot.config import RepoConfig
from bot.context import Context, PullRead
from bot.dispatch import lanes_of
from bot.github import GitHub, GitHubError
from bot.publish import is_ours, our_replies
from bot.replies import CONFUSED, EYES, LOGGED_LINE, PENDING, Outcome, log_text, logged_outcome, reply_body
from bot.report import md_escape, md_text
from bot.reporting import USER_ERRORS, clipped
from bot.repo import default_branch_head, read_config, read_lanes
from bot.states import CommentReply, ReplyState

from . import dispatch, fold_approve, fold_help, fold_refresh

router = routing.Router()

Handler = Callable[[RepoAPI, Context, PullRead, Command], Awaitable[Outcome]]
COMMANDS: dict[str, Handler] = {
    "dispatch": dispatch.run,
    "fold-approve": fold_approve.run,
    "fold-refresh": fold_refresh.run,
    "fold-help": fold_help.run,
}


#: Command lines read per comment, and commands run per user and repository per hour (per process).
MAX_COMMANDS = 5
MAX_PER_HOUR = 30


def kind(command: Command) -> str:
    return command.name if command.name == "dispatch" else f"fold-{command.subcommand}"


@router.register("issue_comment", action="created")
async def on_created(event: sansio.Event, gh: GitHub, ctx: Context) -> None:
    issue, comment = event.data["issue"], event.data["comment"]
    user = comment.get("user") or {}
    if user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"):
        return
    # (off the event loop: a 65,536-character comment of 16,000 list items takes its reader ~0.3 s)
    commands = await asyncio.to_thread(parse_commands, str(comment.get("body") or ""))
    if not commands:
        return
    on_pull = bool(issue.get("pull_request"))
    if not on_pull and not is_ours(issue, await ctx.pool.bot_login()):  # of issues, foldbot's dashboard alone
        return
    repo = event.data["repository"]["full_name"]
    if issue.get("locked"):  # GitHub refuses an App's reply and reactions there: nothing could say what was done
        ctx.log.warning("%s#%s: comment %s not run: the conversation is locked, and GitHub lets only collaborators "
                        "comment or react there (unlock it, then comment again)", repo, issue["number"], comment["id"])
        return
    async with ctx.state.lock(repo):
        await run_commands(RepoAPI(gh, repo), ctx, int(issue["number"]), comment, commands, on_pull=on_pull)


#: Marks the pending reply with the run that wrote it (see `run_commands`).
WRITER_MARK = "<!-- foldbot:writer "


#: What a command on the dashboard issue is answered, but `/fold approve` and `/fold help`.
ON_A_PULL = "`{}` works in a pull request's comments, not on the dashboard issue."


async def run_commands(api: RepoAPI, ctx: Context, number: int, comment: dict[str, Any],
                       commands: list[Command], *, on_pull: bool = True) -> None:
    """Run a comment's commands (`on_pull`: the comment is on a pull request; else on the dashboard issue)."""
    login = await ctx.pool.bot_login()
    comment_id, user = int(comment["id"]), str(comment["user"]["login"])
    replies = await our_replies(api, number, login)
    mine = next(((c, r) for c, r in replies if r.comment_id == comment_id), None)
    if mine is not None and not mine[1].pending:
        ctx.log.info("%s#%d: comment %s was answered already", api.repo, number, comment_id)
        return
    shown = commands[:MAX_COMMANDS]
    note = (f"{len(commands) - MAX_COMMANDS} more command lines were not read: at most {MAX_COMMANDS} per comment."
            if len(commands) > MAX_COMMANDS else None)
    base = [ReplyState(kind(c), comment_id, c.line, user, str(comment["created_at"])) for c in shown]
    earlier = tuple(state for _, reply in replies if reply.comment_id != comment_id for state in reply.commands)
    if mine is None:  # the reply is written first: a redelivery after a crash resumes from it
        try:
            await api.react(comment_id, EYES)
        except GitHubError as exc:  # its author deleted it (before foldbot read it): nothing to answer, or to run
            if exc.status != 404:
                raise
            ctx.log.info("%s#%d: comment %s was deleted before foldbot read it: nothing was run", api.repo, number,
                         comment_id)
            return
        pending = CommentReply(comment_id, True, tuple(base))
        writer = f"{WRITER_MARK}{uuid.uuid4().hex} -->"  # this run's, in its pending reply only
        body = reply_body([(c.line, PENDING) for c in shown], pending, note) + writer + "\n"
        reply_id = int((await api.create_comment(number, body))["id"])
        # Another reply to this comment, older: GitHub made it and answered 5xx, so the same call
        # was sent again (it carries this run's mark: this run goes on with it), or another
        # replica answers the same comment at this moment (that one goes on, this one stops).
        # (GitHub may have made it several times: every copy with this run's mark but the oldest reply goes.)
        twins = dict(sorted({reply_id: True, **{int(c["id"]): writer in str(c.get("body") or "") for c, r in
                                                await our_replies(api, number, login)
                                                if r.comment_id == comment_id}}.items()))
        (oldest, oldest_ours), *younger = twins.items()
        for twin, ours in younger:
            if ours:
                await api.delete_comment(twin)
                ctx.log.warning("%s#%d: reply %s removed, a second reply to comment %s", api.repo, number, twin,
                                comment_id)
        if not oldest_ours:
            ctx.log.warning("%s#%d: comment %s is answered by another foldbot at this moment", api.repo, number,
                            comment_id)
            return
        reply_id = oldest
        granted = ctx.state.take_commands(api.repo, user, sum(1 for c in shown if not c.error), MAX_PER_HOUR,
                                          time.time())
    else:
        reply_id, granted = int(mine[0]["id"]), len(shown)  # resumed: counted when first read
        ctx.log.warning("%s#%d: resuming comment %s, whose reply was left pending", api.repo, number, comment_id)
    pull: PullRead | None = None
    sections: list[tuple[str, str]] = []
    states: list[ReplyState] = []
    reactions: list[str] = []
    for command, state in zip(shown, base):
        if command.error:
            outcome = Outcome(command.error, CONFUSED)
        elif not on_pull and kind(command) not in ("fold-approve", "fold-help"):
            outcome = Outcome(ON_A_PULL.format(md_escape(command.line)), CONFUSED)
        elif granted <= 0:
            outcome = Outcome(f"{md_escape(user)} ran {MAX_PER_HOUR} commands in this repository within the hour; "
                              "this one was not run. Try again later.", CONFUSED)
        else:
            granted -= 1
            try:
                if pull is None:
                    pull = await read_pull(api, ctx, number, comment, login, earlier, resuming=mine is not None,
                                           on_pull=on_pull)
                outcome = await COMMANDS[kind(command)](api, ctx, replace(pull, replies=earlier + tuple(states)), command)
            except USER_ERRORS as exc:
                outcome = Outcome(f"foldbot cannot read this repository's CI files: {md_text(clipped(str(exc)))}", CONFUSED)
                if kind(command) == "fold-help":  # the help is what someone asks for when nothing works
                    outcome = Outcome(f"{outcome.message}\n\nUntil that is fixed, every command but this one is refused. "
                                      "What they do (the permissions are the defaults; `.github/foldbot.yml` may set "
                                      f"others):\n\n{help_text(RepoConfig(), (), on_pull=on_pull, lanes_known=False)}",
                                      CONFUSED)
            except GitHubError as exc:
                ctx.log.error("%s#%d: `%s` failed: %s", api.repo, number, command.line, exc)
                outcome = Outcome(f"A GitHub call failed ({exc.status}). Try again later: the command picks up where "
                                  "this one stopped (nothing it did is done twice).", CONFUSED)
        states.append(replace(state, **{k: tuple(v) if k == "targets" else v for k, v in outcome.state.items()}))
        # one line per command for the operator, where its outcome is known: whose, what, and what came of it
        ctx.log.info("%s#%d: %s `%s`: %s", api.repo, number, user, log_text(command.line, LOGGED_LINE),
                     logged_outcome(states[-1], outcome))
        sections.append((command.line, outcome.message))
        reactions.append(outcome.reaction)
    await api.update_comment(reply_id, reply_body(sections, CommentReply(comment_id, False, tuple(states)), note))
    for reaction in dict.fromkeys(reactions):
        try:
            await api.react(comment_id, reaction)
        except GitHubError as exc:  # deleted while it ran: the reply says what was done
            if exc.status != 404:
                raise
            ctx.log.info("%s#%d: comment %s was deleted while its commands ran; the reply %s says what they did",
                         api.repo, number, comment_id, reply_id)
            break


async def read_pull(api: RepoAPI, ctx: Context, number: int, comment: dict[str, Any], login: str,
                    replies: tuple[ReplyState, ...], *, resuming: bool, on_pull: bool = True) -> PullRead:
    """(`on_pull` False: the dashboard issue; its `pr` is empty.)"""
    default_branch, base_sha = await default_branch_head(api)
    config = await read_config(api, base_sha, ctx.state.cache)
    lanes, pr = await asyncio.gather(read_lanes(api, base_sha, config, cache=ctx.state.files),
                                     api.pull(number) if on_pull else asyncio.sleep(0, {}))
    return PullRead(number=number, comment=comment, login=login, default_branch=default_branch, base_sha=base_sha,
                    config=config, files=lanes.files, blobs=lanes.blobs, lanes=lanes_of(lanes.files), pr=pr,
                    replies=replies, resuming=resuming, called=lanes.called)
