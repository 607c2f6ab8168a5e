"""foldbot's replies to chat commands: one reply per command, quoting it, with a
hidden state block; reactions on the command; and the edit of a dispatch reply when
the run it started completes."""

from __future__ import annotations

import re
from typing import Any

from .api import RepoAPI
from .publish import is_ours, read_state
from .report import md_escape, state_block
from .context import Context

REPLY_MARKER = "<!-- foldbot:reply -->"
EYES, ROCKET, THUMBS_UP, CONFUSED = "eyes", "rocket", "+1", "confused"
_OUTCOME = "\n\n**Run completed:**"


def reply_body(line: str, message: str, state: dict[str, Any]) -> str:
    quoted = "> " + md_escape(line)
    return f"{quoted}\n\n{message}\n\n{REPLY_MARKER}\n{state_block(state)}\n"


async def our_replies(api: RepoAPI, number: int, login: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """foldbot's own replies on a PR with their state blocks, oldest first."""
    comments = await api.comments(number)
    out = []
    for comment in comments:
        if is_ours(comment, login, REPLY_MARKER):
            state = read_state(comment.get("body") or "")
            if state is not None:
                out.append((comment, state))
    return out


#: How many of the most recently updated open PRs are searched for a dispatched run's head.
RECENT_PULLS = 300


async def _pulls_with_head(api: RepoAPI, ctx: Context, sha: str, run_id: int, *, search: bool) -> list[int]:
    """The PRs whose dispatch may have started this run: the PR remembered when it
    was dispatched, the same-repository PRs GitHub associates with the commit, and,
    when neither is known and `search` is on (after a restart, for a fork PR: GitHub
    does not associate a fork's head commit with its PR), the open PR whose head it
    is, among the most recently updated (a `/dispatch` comment just updated it)."""
    numbers: list[int] = []
    known = ctx.state.cache.get(("dispatch", api.repo, run_id))
    if known is not None:
        numbers.append(int(known))
    pulls = await api.pulls_of_commit(sha)
    numbers += [int(p["number"]) for p in pulls if int(p["number"]) not in numbers]
    if numbers or not search:
        return numbers
    pull = await api.find_open_pull(lambda p: str((p.get("head") or {}).get("sha") or "").startswith(sha.lower()),
                                    limit=RECENT_PULLS)
    return [int(pull["number"])] if pull else []


async def finish_dispatch_replies(api: RepoAPI, ctx: Context, run: dict[str, Any]) -> None:
    """Edit the dispatch reply that started this run with its conclusion per job."""
    title = str(run.get("display_title") or "")
    match = re.match(r"\[[^\]]*\] ([0-9a-f]{7,40})$", title)
    sha = match.group(1) if match else str(run.get("head_sha"))
    login = await ctx.pool.bot_login()
    # Only a run titled as the lanes title a dispatched run (`[<stage>] <sha>`) is searched for.
    numbers = await _pulls_with_head(api, ctx, sha, int(run["id"]), search=match is not None)
    if not numbers:
        ctx.log.info("%s: no open PR has head %s; run %s's dispatch reply is not edited", api.repo, sha[:12], run["id"])
        return
    jobs = await api.jobs(run["id"])
    lines = "\n".join(f"- {md_escape(str(j['name']))}: **{j.get('conclusion') or j.get('status')}**" for j in jobs)
    for number in numbers:
        for comment, state in await our_replies(api, number, login):
            if state.get("kind") != "dispatch" or state.get("run_id") != run["id"]:
                continue
            body = comment["body"]
            head, _, tail = body.partition(_OUTCOME)
            marker_at = body.index(REPLY_MARKER)
            prefix = head if tail else body[:marker_at].rstrip("\n")
            new = (f"{prefix}{_OUTCOME} {run.get('conclusion')}, [run {run['id']}]({run.get('html_url')}).\n\n"
                   f"{lines}\n\n{body[marker_at:]}")
            if new != body:
                await api.update_comment(comment["id"], new)
                ctx.log.info("%s#%d: dispatch reply %s edited with run %s's %s", api.repo, number, comment["id"],
                             run["id"], run.get("conclusion"))
