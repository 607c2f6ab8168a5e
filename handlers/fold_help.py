"""`/fold help`: the commands, who may use them, and each lane's dispatchable jobs (on the
dashboard issue, where the PR is empty: the commands that work there)."""

from __future__ import annotations

from bot.api import RepoAPI
from bot.commands import Command, help_text
from bot.context import Context, PullRead
from bot.replies import THUMBS_UP, Outcome, Refusal

from .dispatch import lanes_at_ref


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    """On a same-repository PR whose branch changes a lane file (foldbot's own approval PRs
    remove a suite's job), each lane's jobs are those of the branch's file, which `/dispatch`
    runs there (`lanes_at_ref`); a lane whose branch file cannot be read keeps the default
    branch's."""
    del ctx, command
    lanes = dict(pull.lanes)
    if pull.pr:
        for name in pull.lanes:
            at_ref = await lanes_at_ref(api, pull, name)
            if not isinstance(at_ref, Refusal):
                lanes[name] = at_ref[name]
    return Outcome(help_text(pull.config, lanes.values(), on_pull=bool(pull.pr)), THUMBS_UP)
