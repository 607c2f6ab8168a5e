"""Chat commands in PR comments: `/dispatch` and `/fold`.

foldbot owns only lines that start with `/dispatch` or `/fold` as a reader of the rendered
comment sees them: lines of its paragraphs, read with a CommonMark parser (markdown-it-py),
so not in code (fenced, indented, inline), not quoted, not in a heading, and not hidden by
raw HTML (a comment `<!-- -->`, invisible when rendered, `<pre>`, ...); any other `/word`
belongs to someone else and is left alone.
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

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .config import CONFIG_PATH, RepoConfig
from .dispatch import HOW_DISPATCHED, LaneInfo

FOLD_SUBCOMMANDS = ("approve", "refresh", "help")
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


#: GitHub renders comments as GFM: CommonMark with tables (an indented line right under one is code,
#: not the table's paragraph) and strikethrough.
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
#: A list item's markers before a row's text (`- `, `1. `, nested): where a quote's `>` would stand.
_MARKERS = re.compile(r"(?:[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]))*[ \t]*")


def command_lines(body: str) -> list[tuple[str, str]]:
    """The lines a reader of the rendered comment sees begin with plain text, as
    (the visible line, with inline code kept; the same with inline code unwrapped): the lines
    of its paragraphs, not in code (fenced, indented or inline), not quoted (a line typed after
    a quote without a `>` of its own, which CommonMark continues the quote with, is the
    commenter's own), not hidden by raw HTML (a comment, `<pre>`, `<code>`, `<script>`, ...,
    opened and not yet closed), not headings. A list item's first line is not one (`- /fold
    help` lists a command, it does not give one); its later lines are."""
    body = body.removeprefix("\ufeff")  # as GitHub's cmark-gfm reads it
    rows = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    html = _Html()  # the page as a browser reads it: the rendered markup, raw HTML and all
    containers: list[tuple[str, int]] = []  # (kind, first row) of the quotes and list items around
    lines: list[tuple[str, str]] = []
    tokens = _MARKDOWN.parse(body)
    for index, token in enumerate(tokens):
        if token.type in ("blockquote_open", "list_item_open"):
            containers.append((token.type, token.map[0] if token.map else -1))
        elif token.type in ("blockquote_close", "list_item_close"):
            containers.pop()
        html.quotes = sum(kind == "blockquote_open" for kind, _ in containers)
        if token.type == "html_block":
            html.feed(token.content, raw=True)
        elif token.type in ("fence", "code_block"):
            html.feed("<pre><code></code></pre>")
        elif token.type == "inline" and index and tokens[index - 1].type == "paragraph_open":
            marker = bool(containers) and containers[-1][0] == "list_item_open" and token.map is not None \
                and containers[-1][1] == token.map[0]
            lines += _paragraph_lines(token, rows, html, quoted=html.quotes > 0, marker=marker)
        elif token.type == "inline":
            for child in token.children or ():
                html.feed(child.content if child.type == "html_inline" else _markup(child), raw=child.type == "html_inline")
        elif token.tag and not token.hidden:
            html.feed(_markup(token))
    return lines


def _markup(token: Token) -> str:
    """The tag a token renders as (its text aside, which reaches the page escaped)."""
    if token.type == "code_inline":
        return "<code></code>"
    if not token.tag:
        return ""
    return f"</{token.tag}>" if token.nesting < 0 else f"<{token.tag}>"


def _paragraph_lines(token: Token, rows: list[str], html: "_Html", *, quoted: bool,
                     marker: bool) -> list[tuple[str, str]]:
    """`command_lines` of one paragraph (`quoted`: in a quote; `marker`: it starts on its list
    item's marker line)."""
    out: list[tuple[str, str]] = []
    row: int | None = token.map[0] if token.map else None  # the source row reached (None: not known)
    start = row  # the source row the line starts on
    pieces: list[tuple[str, str, str]] = []  # (kind, as written, as read) of the line's visible part
    first = True

    def end_line() -> None:
        # a quote's paragraph begins on a row of the quote; a later row without its `>` is the commenter's own
        own = not quoted or (not first and start is not None and start < len(rows)
                             and not rows[start][_MARKERS.match(rows[start]).end():].startswith(">"))
        visible = [piece for piece in pieces if piece[0] != "text" or piece[1].strip()]
        if own and not (first and marker) and visible and visible[0][0] == "text":
            out.append(("".join(p[1] for p in pieces).strip(), "".join(p[2] for p in pieces).strip()))

    for child in token.children or ():
        if child.type in ("softbreak", "hardbreak"):
            end_line()
            pieces, first = [], False
            row = start = None if row is None else row + 1
            continue
        hidden = html.hidden
        if child.type == "html_inline":
            html.feed(child.content, raw=True)
            row = None if row is None else row + child.content.count("\n")
            if not child.content.startswith("<!--"):  # a tag is no plain text: the line does not begin with it
                pieces.append(("tag", "", ""))
            continue
        html.feed(_markup(child))
        if hidden:
            continue
        if child.type == "text":
            pieces.append(("text", child.content, child.content))
        elif child.type == "code_inline":  # an argument in code is the argument (`/fold approve `<id>``)
            pieces.append(("code", f"{child.markup}{child.content}{child.markup}", f" {child.content} "))
        else:  # emphasis, a link, an image: no plain text at the line's start
            pieces.append(("markup", "", ""))
        if quoted and child.type in ("code_inline", "image", "link_open"):
            row = None  # a code span, an image's text or a link's title may run over rows, and no break says so
    end_line()
    return out


class _Html:
    """What a page's HTML hides from a reader at each point, fed in the order a browser reads
    it: inside a comment (to `-->`; `<!-->` and `<!--->` are empty ones, as in HTML5), a bogus
    comment (`<!x`, `<?x`, `</1`: to `>`), a tag not yet ended, the text of `<script>`,
    `<style>`, `<textarea>`, `<title>`, `<xmp>` (to its end tag), while a `<pre>`, `<code>`
    or `<blockquote>` of the raw HTML is open, or while the page holds more quotes open than the
    markdown does (`quotes`: its own `</blockquote>` went to a raw one, or was swallowed). Markdown's
    own markup is fed too (`raw` False): its `>` ends a bogus comment, its `</li>` closes the
    `<pre>` opened in the item, but what it opens hides nothing (a quote's own rule is
    `command_lines`'). An end tag past a table, cell, `<object>`, ... closes nothing (HTML5's
    scope). Its text reaches the page escaped, so only tags open or close anything. Past
    `MAX_OPEN` elements open, all the rest is taken as hidden."""

    BLOCKS = ("pre", "listing", "blockquote", "li", "ul", "ol", "template")
    HIDING = ("pre", "listing", "blockquote", "template")  # (a template's content is inert)
    SCOPE = ("table", "td", "th", "caption", "object", "marquee", "applet", "template", "html")
    #: (a `<select>` is not raw text, but inside it a browser drops every tag but its own end tag and
    #: shows no text outside its options: as hidden)
    RAW_TEXT = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext",
                "select")
    MAX_OPEN = 256
    _TAG = re.compile(r"<(/?)([A-Za-z][^\t\n\f />]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)(>|$)")
    _END = {"-->": re.compile(r"--!?>"), ">": re.compile(">")}

    def __init__(self) -> None:
        self.until: str | None = None  # what ends the comment, bogus comment or tag it is inside
        self.raw_text: str | None = None  # the element whose text runs to its end tag
        self.stack: list[tuple[str, bool]] = []  # open block and scope elements: (name, from raw HTML)
        self.raw_hiding = 0  # raw `<pre>`, `<blockquote>`, ... among them
        self.page_quotes = 0  # `<blockquote>`s among them, raw or markdown's
        self.quotes = 0  # the quotes the markdown has open here (set by `command_lines`)
        self.code = 0  # raw `<code>` elements open
        self.own_code = 0  # markdown's own open
        self.lost = False  # more open than MAX_OPEN, or a tag never ended: hidden from there on

    @property
    def hidden(self) -> bool:
        return (self.lost or self.until is not None or self.raw_text is not None or self.code > 0
                or self.raw_hiding > 0 or self.page_quotes > self.quotes)

    def feed(self, html: str, *, raw: bool = False) -> None:
        at, lowered = 0, html.lower()
        while at < len(html) and not self.lost:
            if self.until is not None:
                found = self._END[self.until].search(lowered, at)
                if found is None:
                    return
                at, self.until = found.end(), None
                continue
            if self.raw_text is not None:
                end = lowered.find(f"</{self.raw_text}", at)
                if end < 0:
                    return
                at, self.raw_text = end, None
            start = html.find("<", at)
            if start < 0:
                return
            rest = html[start:]
            if rest.startswith("<!--"):
                empty = re.match(r"<!---?>", rest)
                at, self.until = (start + empty.end(), None) if empty else (start + 4, "-->")
            elif rest.startswith(("<!", "<?")) or (rest.startswith("</") and not rest[2:3].isalpha()):
                at, self.until = start + 2, ">"
            elif (tag := self._TAG.match(rest)) is not None:
                at = start + tag.end()
                if not tag[4]:
                    self.until = ">"  # a tag still open at the end of the text
                self._tag(tag[2].lower(), closing=bool(tag[1]), raw=raw)
            elif re.match(r"</?[A-Za-z]", rest):
                self.lost = True  # a tag whose quoted value never ends: the browser reads on inside it
            else:
                at = start + 1

    def _tag(self, name: str, *, closing: bool, raw: bool) -> None:
        if name == "code":  # a formatting element: an end tag past a scope's start closes nothing
            if not closing:
                self.code, self.own_code = (self.code + 1, self.own_code) if raw else (self.code, self.own_code + 1)
                self._push("code", raw)
                return
            for depth in range(len(self.stack) - 1, -1, -1):
                if self.stack[depth][0] in self.SCOPE:
                    return
                if self.stack[depth][0] == "code":
                    del self.stack[depth]
                    break
            if self.own_code:
                self.own_code -= 1
            else:
                self.code = max(0, self.code - 1)
        elif name in self.RAW_TEXT and not closing:
            self.raw_text = name
        elif (name in self.BLOCKS or name in self.SCOPE) and not closing:
            self._push(name, raw)
        elif name in self.BLOCKS or name in self.SCOPE:
            bounds = self.SCOPE + (("ul", "ol") if name == "li" else ())
            for depth in range(len(self.stack) - 1, -1, -1):
                if self.stack[depth][0] == name:
                    while len(self.stack) > depth:  # and whatever it holds (HTML5's end tag of an open element)
                        self._pop()
                    return
                if self.stack[depth][0] in bounds:
                    return  # not in scope: the end tag is ignored

    def _push(self, name: str, raw: bool) -> None:
        if len(self.stack) >= self.MAX_OPEN:
            self.lost = True
            return
        self.stack.append((name, raw))
        self.raw_hiding += raw and name in self.HIDING
        self.page_quotes += name == "blockquote"

    def _pop(self) -> None:
        name, raw = self.stack.pop()
        self.raw_hiding -= raw and name in self.HIDING
        self.page_quotes -= name == "blockquote"


def parse_commands(body: str) -> list[Command]:
    """Every foldbot command in a comment, in order."""
    commands = []
    for line, text in command_lines(body):
        # an argument in inline code is the argument (`/fold approve `<id>``, as the report shows ids):
        # dropped, a named job would be no job (so: every skipped one), a named id the current one
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
