"""`/fold help`: the commands, who may use them, and each lane's dispatchable jobs (on the
dashboard issue, where the PR is empty: the commands that work there)."""

from __future__ import annotations

from bot.api import RepoAPI
from bot.commands import Command, help_text
from bot.context import Context, PullRead
from bot.replies import THUMBS_UP, Outcome


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    del api, ctx, command  # reads nothing more, writes nothing but the reply
    return Outcome(help_text(pull.config, pull.lanes.values(), on_pull=bool(pull.pr)), THUMBS_UP)
