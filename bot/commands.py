"""Chat commands in PR comments: `/dispatch` and `/fold`.

foldbot owns only lines that start with `/dispatch` or `/fold`, outside fenced code
blocks, inline code, `>` quotes, HTML comments (`<!-- -->`, invisible when rendered)
and `<pre>` blocks; any other `/word` belongs to someone else and is left alone.
Grammar:

    /dispatch <lane> [<job-id> ...] [sha=<hex>]
    /fold approve [<patch-id>]
    /fold refresh
    /fold help

Pure: text in, commands out; and the text of `/fold help`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from .config import RepoConfig
from .dispatch import LaneInfo

FOLD_SUBCOMMANDS = ("approve", "refresh", "help")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HEX = re.compile(r"[0-9a-fA-F]{7,40}")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Command:
    """One command line. `error` is set when the line is foldbot's but malformed."""

    name: str  # "dispatch" | "fold"
    line: str  # the line as written, for quoting in the reply
    lane: str | None = None
    jobs: tuple[str, ...] = ()
    sha: str | None = None
    subcommand: str | None = None  # for /fold
    patch_id: str | None = None
    error: str | None = None


def command_lines(body: str) -> list[str]:
    """The lines of a comment that may hold foldbot commands: not in fenced code, not quoted,
    not hidden in an HTML comment or a `<pre>` block."""
    lines: list[str] = []
    fence: str | None = None
    hidden: str | None = None  # inside an HTML comment ("-->") or a <pre> block ("</pre>"): what ends it
    rows = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    closing = _closing(rows)
    for number, raw in enumerate(rows):
        match = _FENCE.match(raw) if hidden is None else None
        if fence is not None:
            closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and not raw[match.end():].strip():  # type: ignore[union-attr]
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if raw.startswith(("    ", "\t")) and not hidden:
            continue  # an indented code block
        raw, hidden = _visible(raw, hidden, closing[number + 1])
        stripped = raw.strip()
        if stripped.startswith(">"):
            continue
        lines.append(stripped)
    return lines


_HIDING = re.compile(r"<!--|<pre\b[^>]*>", re.I)


def _visible(line: str, hidden: str | None, closed_below: bool) -> tuple[str, str | None]:
    """The part of a line a reader sees, outside HTML comments and `<pre>` blocks, and
    what hides the start of the next line (an opened comment or block runs on). As in
    CommonMark: a marker inside inline code hides nothing; `<!--` at the start of a line
    opens a comment block (to its `-->`, or the end of the comment); elsewhere it opens an
    inline comment only when its `-->` follows in the paragraph (on this line, or below:
    `closed_below`), else it is text."""
    seen, at = [], 0
    lowered, last_close = line.lower(), line.rfind("-->")
    uncoded = _INLINE_CODE.sub(lambda m: " " * len(m.group()), line)  # a marker in inline code hides nothing
    while True:
        if hidden is not None:
            end = lowered.find(hidden, at)
            if end == -1:
                return "".join(seen), hidden
            at, hidden = end + len(hidden), None
            continue
        opened = _HIDING.search(uncoded, at)
        if opened is None:
            seen.append(line[at:])
            return "".join(seen), None
        comment = opened.group().startswith("<!--")
        block = at == 0 and len(line) - len(line.lstrip(" ")) == opened.start() <= 3
        if comment and not block and not (closed_below or last_close >= opened.end()):
            seen.append(line[at:opened.end()])  # an unclosed `<!--` inside a paragraph is text
            at = opened.end()
            continue
        seen.append(line[at:opened.start()])
        hidden = "-->" if comment else "</pre>"
        at = opened.end()


def _closing(rows: list[str]) -> list[bool]:
    """Per row (and one past the last): whether a `-->` is on it or a later row of its
    paragraph (which ends at a blank row)."""
    closing = [False] * (len(rows) + 1)
    for number in range(len(rows) - 1, -1, -1):
        closing[number] = bool(rows[number].strip()) and ("-->" in rows[number] or closing[number + 1])
    return closing


def parse_commands(body: str) -> list[Command]:
    """Every foldbot command in a comment, in order."""
    commands = []
    for line in command_lines(body):
        if line.startswith("`"):
            continue  # inline code at the start of the line
        text = _INLINE_CODE.sub(" ", line).strip()
        head = text.split(maxsplit=1)[0] if text else ""
        if head == "/dispatch":
            commands.append(_dispatch(line, text))
        elif head == "/fold":
            commands.append(_fold(line, text))
    return commands


def _dispatch(line: str, text: str) -> Command:
    words = text.split()[1:]
    if not words:
        return Command("dispatch", line, error="name a lane: `/dispatch <lane> [<job-id> ...] [sha=<hex>]`")
    lane, *rest = words
    if not _WORD.fullmatch(lane):
        return Command("dispatch", line, error=f"`{_quote(lane)}` is not a lane name")
    jobs: list[str] = []
    sha = None
    for word in rest:
        if word.lower().startswith("sha="):
            value = word[4:]
            if not _HEX.fullmatch(value):
                return Command("dispatch", line, lane=lane,
                               error=f"`sha=` takes 7 to 40 hex digits of the commit you reviewed, not `{_quote(value)}`")
            if sha is not None:
                return Command("dispatch", line, lane=lane, error="give `sha=` once")
            sha = value.lower()
        elif _WORD.fullmatch(word):
            if word not in jobs:
                jobs.append(word)
        else:
            return Command("dispatch", line, lane=lane, error=f"`{_quote(word)}` is not a job id")
    return Command("dispatch", line, lane=lane, jobs=tuple(jobs), sha=sha)


def _fold(line: str, text: str) -> Command:
    words = text.split()[1:]
    if not words or words[0] not in FOLD_SUBCOMMANDS:
        given = f"`{_quote(words[0])}` is not a `/fold` command" if words else "`/fold` needs a command"
        return Command("fold", line, subcommand=words[0] if words else None,
                       error=f"{given}; use {', '.join(f'`/fold {s}`' for s in FOLD_SUBCOMMANDS)}")
    sub, rest = words[0], words[1:]
    if sub == "approve":
        if len(rest) > 1 or (rest and not re.fullmatch(r"[0-9a-f]{6,64}", rest[0])):
            return Command("fold", line, subcommand=sub, error="use `/fold approve [<patch-id>]` with the id the report shows")
        return Command("fold", line, subcommand=sub, patch_id=rest[0] if rest else None)
    if rest:
        return Command("fold", line, subcommand=sub, error=f"`/fold {sub}` takes no arguments")
    return Command("fold", line, subcommand=sub)


def _quote(text: str) -> str:
    """User text for a reply inside backticks: no backticks, no mentions, bounded."""
    return text.replace("`", "'").replace("@", "@\u200b")[:60]


def help_text(config: RepoConfig, lanes: Iterable[LaneInfo]) -> str:
    """The reply to `/fold help`."""
    lines = ["foldbot's commands on a pull request:", "",
             "- `/dispatch <lane> [<job-id> ...] [sha=<hex>]`: run the GPU jobs of a lane that its change filter "
             f"skipped (or the named jobs); needs **{config.dispatch_permission}**. On a PR from a fork, "
             "`sha=` must name the head commit you reviewed.",
             f"- `/fold approve [<patch-id>]`: commit the report's patch on a branch and open a PR; needs "
             f"**{config.approve_permission}**.",
             "- `/fold refresh`: recompute the report from the latest lane run of this PR.",
             "- `/fold help`: this text.", ""]
    for lane in lanes:
        jobs = lane.dispatchable(config)
        lines.append(f"Lane `{lane.name}` (`{lane.path}`): {', '.join(f'`{j}`' for j in jobs) or 'no dispatchable jobs'}.")
    return "\n".join(lines)
