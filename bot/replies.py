"""foldbot's replies to chat commands, as text: one reply per command, quoting it,
with a hidden state block; the reactions on the command; and the edit of a dispatch
reply when the run it started completes. Pure: `handlers/` write them."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .report import md_escape, state_block
from .states import CommentReply, ReplyState

REPLY_MARKER = "<!-- foldbot:reply -->"
EYES, ROCKET, THUMBS_UP, CONFUSED = "eyes", "rocket", "+1", "confused"
PENDING = "Working on it: this reply is edited with the outcome."
#: A run a dispatch started is titled `[<stage>] <sha>` (the lanes' `run-name:`).
_DISPATCHED_TITLE = re.compile(r"\[[^\]]*\] ([0-9a-f]{7,40})$")
#: ... or `[<stage>]` on a lane without a `pr_head_sha` input.
_STAGE_TITLE = re.compile(r"\[[^\]]*\](?: [0-9a-f]{7,40})?$")


@dataclass(frozen=True)
class Refusal:
    """A command that is not carried out; `reason` is the reply."""

    reason: str


@dataclass(frozen=True)
class Outcome:
    """What a command came to: the reply's text, the reaction, what the reply's state block
    records (a dispatch's run, an approval's pull request), and the page of the run a
    dispatch started (`link`, for the operator's log line: the state has only its id)."""

    message: str
    reaction: str
    state: Mapping[str, Any] = field(default_factory=dict)
    link: str | None = None

    @classmethod
    def refused(cls, refusal: Refusal) -> "Outcome":
        return cls(refusal.reason, CONFUSED)


def reply_body(sections: Sequence[tuple[str, str]], state: CommentReply, note: str | None = None) -> str:
    """The one reply to a comment: each command line quoted with what came of it."""
    body = "\n\n---\n\n".join(f"> {md_escape(line)}\n\n{message}" for line, message in sections)
    if note:
        body += f"\n\n{note}"
    return f"{body}\n\n{REPLY_MARKER}\n{state_block(state.to_json())}\n"


def dispatched_head(run: Mapping[str, Any]) -> tuple[str, bool]:
    """The head a run ran for, and whether its title says a dispatch started it."""
    match = _DISPATCHED_TITLE.match(str(run.get("display_title") or ""))
    return (match.group(1), True) if match else (str(run.get("head_sha")), False)


def titled_as_dispatched(run: Mapping[str, Any]) -> bool:
    """Whether a run's title is one a lane with foldbot's `run-name` gives a dispatched run."""
    return bool(_STAGE_TITLE.match(str(run.get("display_title") or "")))


def completed_reply(body: str, run: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]]) -> str:
    """A dispatch reply with the run's conclusion per job (replacing what an earlier
    delivery of the same run wrote there; other runs' sections stay)."""
    run_id = int(run["id"])
    lines = "\n".join(f"- {md_escape(str(j['name']))}: **{j.get('conclusion') or j.get('status')}**" for j in jobs)
    section = (f"<!-- foldbot:run {run_id} -->\n**Run completed:** {run.get('conclusion')}, "
               f"[run {run_id}]({run.get('html_url')}).\n\n{lines}")
    marker_at = body.index(REPLY_MARKER)
    head = re.sub(rf"\n\n<!-- foldbot:run {run_id} -->\n.*?(?=\n\n<!-- foldbot:run |\Z)", "",
                  body[:marker_at].rstrip("\n"), flags=re.S)
    return f"{head}\n\n{section}\n\n{body[marker_at:]}"


#: How much of a comment's command line, and of a reply's first sentence, an operator's log line quotes.
LOGGED_LINE, LOGGED_REASON = 100, 200
_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_MD_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def log_text(text: str, limit: int) -> str:
    """Text a user wrote (or a reply quoting it) made safe for one log line: every control or
    other unprintable character written as its escape (no line break, no terminal sequence:
    nothing in a comment can forge a log line), at most `limit` characters: a longer one is
    cut after its last whole word that fits (mid-word only when that word is over a fifth of
    the limit), and ends with an ellipsis."""
    safe = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text.strip())
    if len(safe) <= limit:
        return safe
    cut = safe[:limit - 1]
    space = cut.rfind(" ")
    if space >= limit - 1 - limit // 5 and not safe[limit - 1].isspace():
        cut = cut[:space]
    return cut.rstrip() + "\u2026"


def _first_sentence(message: str) -> str:
    """A reply's first sentence in plain text: a markdown link as its text and its address,
    without bold marks and what `md_escape` adds (backslashes, entities, the space after `@`),
    on one line, bounded."""
    plain = html.unescape(_MD_ESCAPED.sub(r"\1", _MD_LINK.sub(r"\1 (\2)", message.replace("**", "")))) \
        .replace("@\u200b", "@")
    flat = " ".join(plain.split())
    end = _SENTENCE_END.search(flat)
    return log_text(flat[:end.start()] if end else flat, LOGGED_REASON)


def logged_outcome(state: ReplyState, outcome: Outcome) -> str:
    """What a command came to, for its operator log line: refused and why (the reply's first
    sentence), a dispatch's lane, jobs and run, or what the reply says it did (an approval's
    pull request, with its address)."""
    if outcome.reaction == CONFUSED:
        return f"refused: {_first_sentence(outcome.message)}"
    if state.kind == "dispatch":
        run = f"run {state.run_id} {outcome.link or ''}".rstrip() if state.run_id else "GitHub did not say which run"
        jobs = f"{len(state.targets)} job{'' if len(state.targets) == 1 else 's'}"
        return f"dispatched {state.lane} ({jobs} for {str(state.sha)[:12]}): {run}"
    if state.kind == "fold-help":
        return "answered with the help"
    return f"done: {_first_sentence(outcome.message)}"
