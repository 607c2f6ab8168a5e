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

from .config import CONFIG_PATH, RepoConfig
from .dispatch import HOW_DISPATCHED, LaneInfo

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
    fence_column = 0  # the content column of the list item a fence opened in (0: none)
    hidden: str | None = None  # inside an HTML comment ("-->") or a <pre> block ("</pre>"): what ends it
    rows = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    closing = _closing(rows)
    for number, raw in enumerate(rows):
        if fence is not None:
            indent = len(raw) - len(raw.lstrip(" "))
            if not (fence_column and raw.strip() and indent < fence_column):  # else the list item, and its fence, ended
                match = _FENCE.match(raw[min(indent, fence_column):])
                closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
                if closes and not raw[min(indent, fence_column) + match.end():].strip():  # type: ignore[union-attr]
                    fence = None
                continue
            fence = None
        # A list item's content is a block of its own: `- ```` opens a fence, `- <!--` a comment block.
        column = _item_column(raw) if hidden is None else 0
        match = _FENCE.match(raw[column:]) if hidden is None else None
        if match:
            fence, fence_column = match.group(1), column
            continue
        if raw.startswith(("    ", "\t")) and not hidden:
            continue  # an indented code block
        if column and _HIDING.match(raw, column):
            seen, hidden = _visible(raw[column:], None, closing[number + 1])
            raw = raw[:column] + seen
        else:
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


# What starts a block that ends a paragraph (CommonMark's "can interrupt a paragraph"),
# matched on a row's text past its indentation: a code fence, an ATX heading, a `>`
# quote, a thematic break or setext underline, a list item that is not empty, and the
# HTML blocks of kinds 1 to 6. An ordered item interrupts a paragraph outside a list
# only when it starts at 1.
_BLOCK = (  # a block that holds no paragraph
    r"(?:`{3,}(?!.*`)|~{3,})"
    r"|#{1,6}(?:[ \t]|$)"
    r"|(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$"
    r"|<(?:script|pre|style|textarea)(?:[\s>]|$)|<!--|<\?|<![A-Za-z]|<!\[CDATA\["
    r"|</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir"
    r"|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend"
    r"|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td"
    r"|tfoot|th|thead|title|tr|track|ul)(?:[\s>]|/>|$)"
)
_BLOCKS = re.compile(_BLOCK, re.I)
_BREAKS = re.compile(_BLOCK + r"|>|(?:=+|-+)[ \t]*$|[-+*][ \t]+\S", re.I)
_ORDERED = re.compile(r"(\d{1,9})[.)][ \t]+\S")
_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])[ \t]+(?=\S)")
_QUOTED = re.compile(r" {0,3}> ?")


def _closing(rows: list[str]) -> list[bool]:
    """Per row (and one past the last): whether it goes on in the paragraph of the row
    before it, and a `-->` is on it or on a later row of that paragraph. A paragraph
    ends at a blank row and at a row that starts another block (`_BREAKS`: a fence
    among them, so a `-->` in a code block below closes nothing); a row of a quote's
    paragraph that starts with `>` goes on in it."""
    goes_on = [False] * (len(rows) + 1)  # row n continues the paragraph of row n - 1
    paragraph: tuple[int, int, bool] | None = None  # of the row before: quote depth, list item's content column, in a list
    for number, row in enumerate(rows):
        depth, rest = 0, row
        while paragraph is not None and depth < paragraph[0] and (quoted := _QUOTED.match(rest)):
            depth, rest = depth + 1, rest[quoted.end():]
        if paragraph is not None and rest.strip() and not _breaks(rest, paragraph[1], paragraph[2]):
            goes_on[number] = True
            continue
        paragraph = _opens(row)
    closing = [False] * (len(rows) + 1)  # row n goes on in the paragraph before it, and it or a later row of it has `-->`
    for number in range(len(rows) - 1, 0, -1):
        closing[number] = goes_on[number] and ("-->" in rows[number] or closing[number + 1])
    return closing


def _breaks(row: str, column: int, in_list: bool) -> bool:
    """Whether a row ends the paragraph before it, whose list item's content starts at
    `column` (0 outside a list): a blank row, or a block's start at most 3 columns in
    from the margin or from that column (deeper, it is the paragraph's text)."""
    text = row.lstrip(" ")
    indent = len(row) - len(text)
    if not text.strip():
        return True
    if not (indent <= 3 or column <= indent <= column + 3):
        return False
    ordered = _ORDERED.match(text)
    return bool(_BREAKS.match(text) or (ordered and (in_list or ordered.group(1) == "1")))


def _opens(row: str) -> tuple[int, int, bool] | None:
    """The paragraph a row starts, if it starts one: its quote depth, its list item's
    content column and whether it is in a list; None for a blank row, a heading, a
    thematic break, a fence or an HTML block's first row."""
    depth, rest = 0, row
    while quoted := _QUOTED.match(rest):
        depth, rest = depth + 1, rest[quoted.end():]
    column, in_list = 0, False
    while (item := _ITEM.match(rest.lstrip(" "))) is not None:
        column += len(rest) - len(rest.lstrip(" ")) + item.end()
        rest, in_list = rest.lstrip(" ")[item.end():], True
    if not rest.strip() or _BLOCKS.match(rest.lstrip(" ")):
        return None
    return depth, column, in_list


def _item_column(row: str) -> int:
    """Where the content of the list items a row opens starts (`- `, `1. `, nested `- * `), or 0:
    the row opens none, or it is indented code (4 columns in)."""
    column, rest = 0, row
    while (indent := len(rest) - len(rest.lstrip(" "))) <= 3 and (item := _ITEM.match(rest, indent)) is not None:
        column, rest = column + item.end(), rest[item.end():]
    return column


def parse_commands(body: str) -> list[Command]:
    """Every foldbot command in a comment, in order."""
    commands = []
    for line in command_lines(body):
        if line.startswith("`"):
            continue  # inline code at the start of the line
        # an argument in inline code is the argument (`/fold approve `<id>``, as the report shows ids):
        # dropped, a named job would be no job (so: every skipped one), a named id the current one
        text = _INLINE_CODE.sub(lambda m: f" {m.group()[len(m.group(1)):-len(m.group(1))]} ", line).strip()
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


def no_lanes(config: RepoConfig) -> str:
    """What `/fold help` and `/fold refresh` say in a repository with no lane workflow file."""
    return ("This repository has no lane: no workflow file on its default branch matches `lanes` in "
            f"`{CONFIG_PATH}` ({', '.join(f'`{_quote(glob)}`' for glob in config.lanes) or 'none'}).")


def help_text(config: RepoConfig, lanes: Iterable[LaneInfo], *, on_pull: bool = True, lanes_known: bool = True) -> str:
    """The reply to `/fold help`: on a pull request (`on_pull`), every command and each lane's
    dispatchable jobs (`lanes_known` False: the lanes could not be read, and are not listed);
    on foldbot's dashboard issue, what works there (`/fold approve` with the patch's id, and
    `/fold help`)."""
    if not on_pull:
        return "\n".join([
            "foldbot's commands on its dashboard issue:", "",
            f"- `/fold approve <patch-id>`: commit the patch with the id the dashboard shows on a branch and open a "
            f"PR; needs **{config.approve_permission}**. The id is required here: the dashboard is rewritten with "
            "every lane run, and the id says which patch you read.",
            "- `/fold help`: this text.", "",
            "`/dispatch` and `/fold refresh` work in a pull request's comments (`/fold help` there lists the lanes "
            "and their jobs)."])
    lines = ["foldbot's commands on a pull request:", "",
             "- `/dispatch <lane> [<job-id> ...] [sha=<hex>]`: run the GPU jobs of a lane that its change filter "
             f"skipped (or the named jobs); needs **{config.dispatch_permission}**. On a PR from a fork, "
             "`sha=` must name the head commit you reviewed.",
             f"- `/fold approve [<patch-id>]`: commit the report's patch on a branch and open a PR; needs "
             f"**{config.approve_permission}**.",
             "- `/fold refresh`: recompute the report from the latest lane run of this PR.",
             "- `/fold help`: this text.", ""]
    lanes = list(lanes)
    if not lanes_known:
        return "\n".join(lines).rstrip("\n")
    if not lanes:
        lines.append(no_lanes(config))
    for lane in lanes:
        if lane.undispatchable:  # listing its jobs would invite a `/dispatch` that is refused
            lines.append(f"Lane `{lane.name}` (`{lane.path}`): cannot be dispatched: the file has "
                         f"{lane.undispatchable} (`/dispatch` {HOW_DISPATCHED}).")
            continue
        jobs = lane.dispatchable(config)
        lines.append(f"Lane `{lane.name}` (`{lane.path}`): {', '.join(f'`{j}`' for j in jobs) or 'no dispatchable jobs'}.")
    return "\n".join(lines)
