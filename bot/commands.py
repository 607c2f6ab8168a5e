"""Chat commands in PR comments: `/dispatch` and `/fold`.

foldbot owns only lines that start with `/dispatch` or `/fold` as a reader of the rendered
comment sees them: lines of its paragraphs, rendered by GitHub's own parser (cmark-gfm) and
built as a browser builds the page (lexbor), so not in code (fenced, indented, inline), not
quoted, not in a heading, and not hidden by raw HTML (a comment `<!-- -->`, invisible when
rendered, `<pre>`, ...); any other `/word` belongs to someone else and is left alone.
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
from itertools import zip_longest
from typing import Iterable

from cmarkgfm.cmark import Options, markdown_to_html_with_extensions
from selectolax.lexbor import LexborHTMLParser, LexborNode

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


#: What GitHub's renderer (cmark-gfm) is asked: its own extensions (tables, strikethrough, autolinks, task
#: lists, and the tag filter that shows `<script>`, `<textarea>`, ... as text), footnotes, raw HTML kept
#: (the sanitizer after it hides nothing a browser would show), and a comment's newline as a line break
#: (`<br>`), as GitHub renders comments. Any other newline on the page (raw HTML's, `&#10;`) is a space.
_RENDER = (Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES | Options.CMARK_OPT_GITHUB_PRE_LANG
           | Options.CMARK_OPT_HARDBREAKS)
_GFM = ["table", "autolink", "tagfilter", "strikethrough", "tasklist"]  # as cmarkgfm's github_flavored_markdown_to_html
#: Elements whose text a reader does not see as lines of the comment: code blocks, an inert `<template>`
#: (its content is no child in the tree), drawings and formulas, a `<select>`'s options, `<rp>`. (Inline `<code>`
#: is a line's argument, or makes it no command; a quote of raw HTML hides too.)
_HIDDEN = frozenset({"rp", "pre", "xmp", "plaintext", "template", "script", "style", "textarea", "title",
                     "iframe", "noembed", "noframes", "noscript", "svg", "math", "select", "option", "head"})
#: Elements a browser shows as a block, of those GitHub's sanitizer keeps: each begins and ends a line.
#: Any other element (`<em>`, `<a>`, `<span>`, an unknown `<foo>`, and `<center>`, `<section>`, ...,
#: which the sanitizer takes off around their text) sits inside a line.
_BLOCKS = frozenset({
    "blockquote", "body", "caption", "dd", "details", "div", "dl", "dt", "figcaption", "figure", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "html", "li", "ol", "p", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})
#: Of the `_HIDDEN` ones, those that end the line (a block of code); `<rp>` leaves nothing, the others a mark.
_HIDDEN_BLOCKS = frozenset({"pre", "xmp", "plaintext"})
#: Elements a paragraph or list item may stand in and still be read as it shows: any other around it
#: (`<details>`, closed until opened; a heading, a cell, `<sub>`, `<del>`, `<kbd>`, `<rp>`, ...) makes it no command.
_OPEN = frozenset({"html", "body", "div", "ul", "ol", "li", "p", "blockquote"})  # (and footnotes' `<section>`)
#: What GitHub's sanitizer keeps of a comment's HTML (and what its renderer writes): any other element it
#: takes off around its text, which then runs on where the element stood; it is read as a mark there.
_KEPT = frozenset({
    "html", "body", "h1", "h2", "h3", "h4", "h5", "h6", "br", "b", "i", "strong", "em", "a", "pre", "code", "img", "tt",
    "div", "ins", "del", "sup", "sub", "p", "ol", "ul", "table", "thead", "tbody", "tfoot", "blockquote", "dl", "dt",
    "dd", "kbd", "q", "samp", "var", "hr", "ruby", "rt", "rp", "li", "tr", "td", "th", "s", "strike", "summary",
    "details", "caption", "figure", "figcaption", "abbr", "bdo", "cite", "dfn", "mark", "small", "span", "time", "wbr",
    "input", "picture", "source", "video"})
#: The spaces a browser shows as space (or collapses), and no other: Python's `str.strip` also takes
#: U+001C-U+001F, U+0085 and U+1680, which a browser shows as a box or a dash.
_SPACES = " \t\n\r\f\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_WORDS = re.compile(f"[^{_SPACES}]+")
#: Shown where the line has no text of its own: an image, a task list's checkbox, `<q>`'s quote marks, a key.
_MARKS = frozenset({"q", "kbd", "img", "input", "video", "audio", "object", "embed", "canvas", "meter", "progress", "button"})
#: Elements whose own text (raw HTML's, between its blocks) is read by lines, as a paragraph's.
_ANONYMOUS = frozenset({"body", "div"})
#: What a browser shows as nothing (a zero-width space, joiners, a BOM), and the line and paragraph
#: separators, which it shows as a space or nothing, never as a line break.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_SEPARATORS = re.compile("[\u2028\u2029]")
#: What may make a row show other text than it holds (emphasis, code, an entity, an escape, a tag, ...).
_MARKUP = re.compile(r"[*_`&<\\\[!~|$]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SOURCEPOS = re.compile(r"(\d{1,9}):(\d{1,9})-(\d{1,9}):(\d{1,9})")


def command_lines(body: str) -> list[tuple[str, str]]:
    """The lines a reader of the rendered comment sees begin with plain text, as
    (the visible line, with inline code kept; the same with inline code unwrapped).

    The comment is rendered as GitHub renders it (cmark-gfm, GitHub's own parser), raw HTML and
    all, and the page is then built as a browser builds it (lexbor, an HTML5 tree builder: what a
    comment `<!-- -->`, an unfinished tag or a quoted value swallows is no text; an end tag out of
    scope closes nothing; a table's stray text goes before it). Then only the lines of paragraphs,
    list items and raw HTML's own text count (a line ends at GitHub's `<br>` for a newline, or at
    a block), and not those inside code (fenced, indented or inline), a heading, a table,
    `<details>`, `<pre>`, `<template>`, `<select>`, `<sub>`, ..., or a `$$` formula, nor a line
    whose first shown thing is no plain text (an image, a widget, an element GitHub takes off); not
    a quote's, but a line typed after a quote without a `>` of its own (which CommonMark continues
    the quote with) is the commenter's own; and not a list item's first line (`- /fold help` lists
    a command, it does not give one). Raises `Unreadable` for a comment whose page would take
    seconds to build."""
    body = _SURROGATE.sub("\ufffd", body.replace("\r\n", "\n").replace("\r", "\n"))  # (JSON may hold one alone)
    _check_tables(body)
    shown = _page(body)  # the page as GitHub shows it
    placed = _page(body, sourcepos=True)  # the same, each block with its source rows
    if shown is None or placed is None:
        return []
    if _same_page(placed, shown):
        return _Page(body.split("\n")).read(placed)
    # raw HTML's unfinished quote (`<p title="x>`) took in a row's attribute, and the pages differ:
    # read the one GitHub shows, with no rows (every quote hidden, no item's first line read)
    return _Page(body.split("\n"), rows_known=False).read(shown)


#: How deep a comment's elements may nest to be read (as deep as Chrome's parser builds a page): an HTML5
#: tree builder looks through the open elements at each tag, so 16,000 nested quotes take it seconds.
MAX_DEPTH = 512
#: How many elements a browser may rebuild: each element a formatting element left open (`<b x=1>`) is
#: reopened in (HTML5's "reconstruct the active formatting elements"). 500 left open and 15,000
#: paragraphs make 7.5 million, 24 s and 6.6 GB.
MAX_REBUILT = 50_000
#: How many cells the comment's tables may hold: GitHub's parser fills every short row to the
#: delimiter row's width, so 1,000 columns and 500 rows (5 KB) are half a million cells and 3 s
#: (~7 µs a cell; 64 KiB of real cells, two characters each, are fewer than this).
MAX_CELLS = 50_000


class Unreadable(ValueError):
    """A comment too costly to build as a page (nested past `MAX_DEPTH`, past `MAX_REBUILT` elements
    rebuilt, past `MAX_CELLS` table cells): none of its lines is read."""


#: Elements that hold nothing (void), or that the next of their kind closes: they add no depth.
_FLAT = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
                   "param", "keygen", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody",
                   "tfoot", "rt", "rp", "caption", "colgroup"})
#: HTML5's formatting elements: one left open is reopened in each block after it.
_FORMATTING = frozenset({"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"})
_TAGS = re.compile(r"<(/?)([A-Za-z][^\t\n\f />]*)")
#: A cell of a table's delimiter row (`|---|:-:|`).
_DELIMITER_CELL = re.compile(r"[ \t]*:?-+:?[ \t]*")


def _check_tags(html: str) -> None:
    """Raise `Unreadable` for a comment whose page would take seconds to build (see `MAX_DEPTH`,
    `MAX_REBUILT`). The page's shape is estimated from its tags: start tags less those
    their end tags close (an end tag closes the open element of its name and all it holds; one of no
    open element closes nothing), and at each start tag, the formatting elements that no end tag of
    their own closed (HTML5 reopens them wherever an end tag took them off). Text is escaped by the
    renderer, so every `<` followed by a letter is a tag (or a comment's text: counted, on the safe
    side)."""
    stack: list[str] = []
    open_names: dict[str, int] = {}
    active: dict[str, int] = {}  # formatting elements not closed by their own end tag: each tag rebuilds them
    deepest = rebuilt = reopened = 0
    for closing, name in _TAGS.findall(html):
        name = name.lower()
        if not closing:
            rebuilt += reopened
            if name in _FORMATTING:
                active[name] = active.get(name, 0) + 1
                reopened += 1
            if name in _FLAT:
                continue
            stack.append(name)
            open_names[name] = open_names.get(name, 0) + 1
            deepest = max(deepest, len(stack))
            continue
        if active.get(name):  # (another element's end tag takes it off the stack, not off this list)
            active[name] -= 1
            reopened -= 1
        if open_names.get(name):
            while True:
                top = stack.pop()
                open_names[top] -= 1
                if top == name:
                    break
    if deepest > MAX_DEPTH:
        raise Unreadable(f"its elements nest {deepest} deep (at most {MAX_DEPTH})")
    if rebuilt > MAX_REBUILT:
        raise Unreadable(f"a browser would rebuild {rebuilt:,} of its elements (at most {MAX_REBUILT:,})")


def _delimiter_width(row: str) -> int:
    """The columns of a table's delimiter row (`|---|:-:|`, in a quote or not), or 0 for another row."""
    core = row.lstrip(" \t>").rstrip(" \t")
    if "-" not in core or core.strip("|:- \t"):
        return 0
    cells = core.removeprefix("|").removesuffix("|").split("|")
    return len(cells) if all(_DELIMITER_CELL.fullmatch(cell) for cell in cells) else 0


def _check_tables(body: str) -> None:
    """Raise `Unreadable` for a comment whose tables hold more than `MAX_CELLS` cells once GitHub's
    parser has filled their rows: each table's columns (its delimiter row's) by its rows, down to the
    next blank one (an upper bound; counted before the parse, which is what takes the time)."""
    rows = body.split("\n")
    cells = width = 0  # width: the columns of the table the row is in (0: none)
    for number, row in enumerate(rows):
        if not row.strip():
            width = 0
        elif width:
            cells += width
        elif number and rows[number - 1].strip() and (width := _delimiter_width(row)):
            cells += 2 * width
    if cells > MAX_CELLS:
        raise Unreadable(f"its tables hold {cells:,} cells (at most {MAX_CELLS:,})")


def _page(text: str, *, sourcepos: bool = False) -> LexborNode | None:
    """The page GitHub renders `text` as (with each block's source rows, `sourcepos`), as a
    browser builds it; `Unreadable` if that would take seconds (`_check_tags`)."""
    html = markdown_to_html_with_extensions(
        text, options=_RENDER | (Options.CMARK_OPT_SOURCEPOS if sourcepos else 0), extensions=_GFM)
    _check_tags(html)
    return LexborHTMLParser(html).body


def _same_page(placed: LexborNode, shown: LexborNode) -> bool:
    """Whether the page with source rows has the elements and texts of the page GitHub shows, in
    the same order; if so, a `data-sourcepos` the comment wrote itself (on raw HTML, in both) is
    taken off the first, so that every one left is the renderer's."""
    for node, shown_node in zip_longest(placed.traverse(include_text=True), shown.traverse(include_text=True)):
        if node is None or shown_node is None or node.tag != shown_node.tag or (
                node.tag == "-text" and node.text_content != shown_node.text_content):
            return False
        if node.tag != "-text" and "data-sourcepos" in shown_node.attributes:
            del node.attrs["data-sourcepos"]
    return True


@dataclass
class _Block:
    """A paragraph or a list item being read: the pieces of its current line, as
    (kind, as written, as read); kind "text" (the block's own text), "inner" (text inside
    `<em>`, a link, ...), "code" (inline code) or "mark" (an image, a checkbox)."""

    skip_first: bool  # its first line is a list item's first (or after a footnote's label): not read
    quoted: tuple[int, int] | None  # in a quote: the source rows it spans, (0, 0) if not known (None: not quoted)
    pieces: list[tuple[str, str, str]]
    first: bool = True
    math: bool = False  # inside a `$$` formula (GitHub's math): its lines are no commands
    own: dict[str, list[int]] | None = None  # in a quote: its rows typed without `>`, by the line each shows
    shown: bool = False  # it has shown a line (of text or marks)


class _Page:
    """One walk of the rendered page, in document order, without recursion (a comment may nest
    thousands of elements)."""

    def __init__(self, rows: list[str], *, rows_known: bool = True) -> None:
        self.rows = rows
        self.rows_known = rows_known  # False: the page has no `data-sourcepos` of the renderer's
        self.lines: list[tuple[str, str]] = []
        self.blocks: list[_Block | None] = []  # per open block element: its reading, or None (text not read)
        self.quotes: list[tuple[int, int]] = []  # per markdown quote around: the source rows all of them span
        self.closed = 0  # elements around that are not `_OPEN`
        self._claimed: set[int] = set()  # the rows typed without `>` already read as a quoted block's line
        self._shown: dict[str, str | None] = {}  # a row's text: the line it shows on its own

    def read(self, root: LexborNode) -> list[tuple[str, str]]:
        # (node, True) to enter it; (node, (a block?, open?)) to leave it
        todo: list[tuple[LexborNode, bool | tuple[bool, bool]]] = [(root, True)]
        while todo:
            node, entering = todo.pop()
            if entering is not True:
                self._leave(node, *entering)
                continue
            tag = node.tag
            if tag == "-text":
                self._text(node.text_content or "")
                continue
            if tag is None or tag.startswith(("-", "!", "#", "_")) or _backlink(node):
                continue  # a comment, a doctype, a footnote's `↩`
            block = self.blocks[-1] if self.blocks else None
            if tag in _HIDDEN:  # shown (a widget, a drawing, GitHub's unwrapped text), but not as a line's text
                if tag in _HIDDEN_BLOCKS:
                    self._end_line()
                elif block is not None and tag != "rp":
                    block.pieces.append(("mark", "", ""))
                continue
            if tag in ("code", "tt", "samp"):  # (drawn as code, even empty)
                if block is not None:
                    text = node.text(deep=True)
                    block.pieces.append(("code", f"`{text}`", f" {text} "))
                continue
            if tag == "br":
                self._end_line()
                continue
            if tag in _MARKS:
                if block is not None:
                    block.pieces.append(("mark", "", ""))
                continue
            # GitHub takes it off (an `<li>` out of a list too): its text runs on, after what came before
            unwrapped = (tag not in _KEPT and not _footnotes(node)) or (
                tag == "li" and (node.parent is None or node.parent.tag not in ("ul", "ol")))
            is_block, opens = tag in _BLOCKS and not unwrapped, _opens(node) and not unwrapped
            if is_block and not self._enter(node, tag):
                continue  # a quote of raw HTML: hidden
            if unwrapped and block is not None:
                block.pieces.append(("mark", "", ""))
            self.closed += not opens
            todo.append((node, (is_block, opens)))
            children = list(node.iter(include_text=True))
            todo.extend((child, True) for child in reversed(children))
        return self.lines

    def _enter(self, node: LexborNode, tag: str) -> bool:
        """Open a block element; False: it hides what it holds."""
        self._end_line()
        if self.closed and tag in ("p", "li", *_ANONYMOUS):  # in a heading, a cell, `<details>`, `<sub>`, ...
            self.blocks.append(None)
            return True
        where = _sourcepos(node) if self.rows_known else None
        if tag == "blockquote":
            # markdown's own quote has its rows and a `>` where they start; a raw `<blockquote>` is hidden
            if where is None or not self._at(where, b">") or not self._within_quotes(where):
                return False
            self.quotes.append((where[0], where[2]) if not self.quotes else
                               (max(where[0], self.quotes[-1][0]), min(where[2], self.quotes[-1][1])))
            self.blocks.append(None)
            return True
        outer = self.blocks[-1] if self.blocks else None
        if tag in _ANONYMOUS:  # its own text (raw HTML's) is read by lines too, never as a quote's lazy line
            self.blocks.append(_Block(outer is not None and outer.first and outer.skip_first,
                                      (0, 0) if self.quotes else None, []))
            return True
        if tag not in ("p", "li"):
            self.blocks.append(None)
            return True
        # a paragraph that opens an item is on the item's first line
        skip_first = self._skips_first_line(where, tag) or (outer is not None and outer.first and outer.skip_first)
        quoted = None
        if self.quotes:
            quoted = (where[0], where[2]) if where is not None and self._within_quotes(where) else (0, 0)
        self.blocks.append(_Block(skip_first, quoted, []))
        return True

    def _leave(self, node: LexborNode, is_block: bool, opens: bool) -> None:
        self.closed -= not opens
        if not is_block:
            return
        self._end_line()
        inner = self.blocks.pop()
        if node.tag == "blockquote":
            self.quotes.pop()
        if self.blocks and self.blocks[-1] is not None and inner is not None and inner.shown:
            self.blocks[-1].first = False  # what the item holds after a nested block it showed is a line of its own

    def _text(self, text: str) -> None:
        block = self.blocks[-1] if self.blocks else None
        if block is None:
            return
        kind = "inner" if self.closed else "text"  # (inside `<em>`, a link, `<sub>`, ...: formatted)
        # a line ends at a `<br>` or a block; a browser's newline is a space, what it shows as nothing is not there
        text = _SEPARATORS.sub(" ", _INVISIBLE.sub("", text.replace("\n", " ")))
        block.pieces.append((kind, text, text))

    def _end_line(self) -> None:
        block = self.blocks[-1] if self.blocks else None
        if block is None:
            return
        pieces, first = block.pieces, block.first
        visible = [piece for piece in pieces if piece[0] != "text" or piece[1].strip(_SPACES)]
        # an empty line is no first line; nor is a task list's box alone when the rows are not known (the
        # item's paragraph below it may be on the marker's row)
        block.pieces = []
        block.shown = block.shown or bool(visible)
        block.first = first and (not visible if self.rows_known else all(piece[0] == "mark" for piece in visible))
        line = "".join(piece[1] for piece in pieces).strip(_SPACES)
        in_math = block.math
        block.math ^= line.count("$$") % 2 == 1
        if in_math or not visible or visible[0][0] != "text" or (first and block.skip_first):
            return
        if block.quoted is not None and not self._own_row(block, line):
            return
        self.lines.append((line, "".join(piece[2] for piece in pieces).strip(_SPACES)))

    def _own_row(self, block: _Block, line: str) -> bool:
        """Whether a quoted block's line is a row of its own, typed without `>` (CommonMark's lazy
        continuation): the first such row of the block's that shows the same line and is not read yet."""
        if block.own is None:
            block.own = {}
            first, last = block.quoted or (0, 0)
            for number in range(max(first, 1), min(last, len(self.rows)) + 1):
                row = self.rows[number - 1]
                if not row[_MARKERS.match(row).end():].startswith(">"):
                    shown = self._shown_alone(row.strip())
                    if shown is not None:
                        block.own.setdefault(shown, []).append(number)
        numbers = block.own.get(line, [])
        while numbers and numbers[0] in self._claimed:
            numbers.pop(0)
        if not numbers:
            return False
        self._claimed.add(numbers.pop(0))
        return True

    def _shown_alone(self, text: str) -> str | None:
        """The line a row's text shows by itself (`/dispatch x *now*` shows `/dispatch x now`), or None."""
        if not _MARKUP.search(text):
            return text
        if text not in self._shown:
            try:
                page = _page(text)
            except Unreadable:
                page = None
            lines = _Page([text], rows_known=False).read(page) if page is not None else []
            self._shown[text] = lines[0][0] if len(lines) == 1 else None
        return self._shown[text]

    def _at(self, where: tuple[int, int, int, int], char: bytes) -> bool:
        row = self._row_bytes(where[0])
        return row[where[1] - 1:where[1]] == char

    def _within_quotes(self, where: tuple[int, int, int, int]) -> bool:
        return not self.quotes or self.quotes[-1][0] <= where[0] and where[2] <= self.quotes[-1][1]

    def _skips_first_line(self, where: tuple[int, int, int, int] | None, tag: str) -> bool:
        """Whether a list item's or paragraph's first line is an item's first (on the marker's row or
        the next: `-\\n  x` shows as `- x`) or after a footnote's label; a paragraph's, by what stands
        before it on its row (other than indentation and quotes' `>`)."""
        if tag == "li":
            return True
        if where is None:
            return False
        row = self._row_bytes(where[0])
        return bool(row[:where[1] - 1].decode("utf-8", "replace").lstrip("\ufeff").replace(">", "").strip())

    def _row_bytes(self, number: int) -> bytes:
        return self.rows[number - 1].encode("utf-8", "surrogatepass") if 0 < number <= len(self.rows) else b""


#: A list item's markers before a row's text (`- `, `1. `, nested): where a quote's `>` would stand.
_MARKERS = re.compile(r"(?:[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]))*[ \t]*")


def _backlink(node: LexborNode) -> bool:
    """Whether an element is a footnote's back-link, as the renderer writes them at the end of the
    footnote's last paragraph (`↩`, and the reference's number): in the paragraph itself, nothing but
    other back-links after it."""
    while True:
        if (node.tag != "a" or "data-footnote-backref" not in node.attributes or node.parent is None
                or node.parent.tag != "p" or not _BACKLINK.fullmatch(node.text())):
            return False
        after = node.next
        while after is not None and after.tag == "-text" and not (after.text_content or "").strip():
            after = after.next
        if after is None:
            return True
        node = after


def _footnotes(node: LexborNode) -> bool:
    """Whether an element is the renderer's section of footnotes (GitHub keeps it)."""
    return node.tag == "section" and "data-footnotes" in node.attributes


def _opens(node: LexborNode) -> bool:
    """Whether a paragraph, an item or text inside the element may still be read as plain (`_OPEN`)."""
    return node.tag in _OPEN or _footnotes(node)


_BACKLINK = re.compile("\u21a9\\d*")


def _sourcepos(node: LexborNode) -> tuple[int, int, int, int] | None:
    """The source rows and columns the renderer gave a block (`data-sourcepos`), or None."""
    found = _SOURCEPOS.fullmatch(node.attributes.get("data-sourcepos") or "")
    return tuple(int(number) for number in found.groups()) if found else None  # type: ignore[return-value]


def parse_commands(body: str) -> list[Command]:
    """Every foldbot command in a comment, in order."""
    try:
        lines = command_lines(body)
    except Unreadable as exc:  # said, when the comment names a command: not dropped without a word
        named = re.search(r"/(dispatch|fold)\b", body)
        return [] if named is None else [Command(
            named[1], f"/{named[1]}", error=f"foldbot could not read this comment: {exc}; "
                                            "write the command in a comment of its own")]
    commands = []
    for line, text in lines:
        # an argument in inline code is the argument (`/fold approve `<id>``, as the report shows ids):
        # dropped, a named job would be no job (so: every skipped one), a named id the current one
        words = _WORDS.findall(text)
        head = words[0] if words else ""
        if head == "/dispatch":
            commands.append(_dispatch(line, text))
        elif head == "/fold":
            commands.append(_fold(line, text))
    return commands


def _dispatch(line: str, text: str) -> Command:
    words = _WORDS.findall(text)[1:]
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
    words = _WORDS.findall(text)[1:]
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
             "`sha=` must name the head commit you reviewed, by its full 40-digit SHA.",
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
