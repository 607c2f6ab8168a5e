"""The command reader against a second HTML5 parser: comments built of the shapes GitHub users
write (quotes, lists, task lists, footnotes, tables, fences, raw HTML left open), rendered by
GitHub's parser and built by html5lib instead of lexbor. No command the page hides, shows as
code, a quote, a heading, a table cell, formatted or in the middle of a line may be read."""

from __future__ import annotations

import re

import html5lib
from cmarkgfm.cmark import markdown_to_html_with_extensions
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands import _GFM, _RENDER, parse_commands

#: A row: what stands before it (containers, indentation), then its text; `{}` is a command.
_PREFIXES = ["", "", "", "> ", ">", "> > ", "- ", "1. ", "- [ ] ", "* [x] ", "  ", "    ", "\t", "- > ", "> - ",
             "[^1]: ", "# ", "| ", " \t"]
_TEXTS = ["{}", "{}", "{}", "text {}", "`{}`", "`{}", "{}`", "*{}*", "<b>{}</b>", "<!-- {} -->", "{}<br>{}",
          "{}  ", "text", "", "", "<!--", "-->", "```", "~~~", "````py", "<pre>", "</pre>", "<code>", "</code>",
          "<details>", "<summary>s</summary>", "</details>", "| a | b |", "|---|---|", '<div title="', '"',
          "<template>", "</template>", "<select>", "<blockquote>", "</blockquote>", "---", "===", "<table><td>",
          "<svg>", "<math>", '<p title="x>', "<!-->", "text[^1]", "<textarea>", "![i](u) {}", "&#47;{}", "<div>",
          "</div>", "<ul><li>{}", "\u00a0{}", "\ufeff{}", "x&#10;{}", "<h1>", "<sub>", "<rp>", "<del>", "<kbd>",
          "</details>"]
_HIDERS = {"pre", "code", "template", "script", "style", "textarea", "title", "xmp", "noscript", "iframe", "noembed",
           "noframes", "plaintext", "svg", "math", "select", "option", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th",
           "kbd", "samp", "tt", "details", "rp", "sub", "sup", "del", "s", "strike", "var"}
_INLINE = {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "del", "dfn", "em", "font", "i", "img", "ins", "kbd",
           "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var", "wbr",
           "label", "time", "data", "input"}
_TAG = re.compile(r"/dispatch rocm720 (k\d+)\b")


def _body(rows: list[tuple[str, str]]) -> str:
    """The comment, each `{}` a command with a tag of its own."""
    count = iter(range(1_000))
    return "\n".join(prefix + text.format(*(f"/dispatch rocm720 k{next(count)}" for _ in range(text.count("{}"))))
                     for prefix, text in rows)


def _segments(html: str) -> list[tuple[str, tuple[str, ...]]]:
    """The page's text as html5lib builds it, in order, with each piece's elements; a line break
    (`\\n`) around each block and at each `<br>`, and nowhere else."""
    out: list[tuple[str, tuple[str, ...]]] = []
    body = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False).find("body")
    todo: list[tuple[object, tuple[str, ...], bool]] = [(body, (), True)]
    while todo:
        node, around, entering = todo.pop()
        if isinstance(node, str):  # (a newline in text is a space: GitHub's come as `<br>`)
            out.append((node.replace("\n", " "), around))
            continue
        tag = node.tag if isinstance(node.tag, str) else "!"
        inner = around + (tag.lower().rpartition("}")[2],)
        if not entering:
            out.append(("\n", inner))
            continue
        if tag != "!":
            block = inner[-1] not in _INLINE
            out.append(("\n", inner) if block or inner[-1] == "br" else ("", inner))
            if block:
                todo.append((node, around, False))
            children = [(node.text, inner, True)] if node.text else []
            for child in node:
                children += [(child, inner, True)] + ([(child.tail, inner, True)] if child.tail else [])
            todo.extend(reversed(children))
    return out


def _must_not_read(body: str) -> dict[str, str]:
    """Each command the rendered page does not show as a line of its own, with why."""
    rows = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    segments = _segments(markdown_to_html_with_extensions(body, options=_RENDER, extensions=_GFM))
    text = "".join(piece for piece, _ in segments)
    found: dict[str, str] = {}
    at = 0
    for piece, around in segments:
        for match in _TAG.finditer(piece):
            start = at + match.start()
            before = text[text.rfind("\n", 0, start) + 1:start]
            hider = next((tag for tag in around if tag in _HIDERS), None)
            row = next((r for r in rows if re.search(re.escape(match[0]) + r"\b", r)), "")
            lazy = not re.sub(r"^(?:[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]))*[ \t]*", "", row).startswith(">")
            if hider:
                found[match[1]] = f"in <{hider}>"
            elif "blockquote" in around and not lazy:
                found[match[1]] = "quoted"
            elif re.sub(r"[\s\u200b\u200c\u200d\u2060\ufeff]", "", before):  # (the invisible ones aside)
                found[match[1]] = f"mid-line, after {before.strip()!r}"
            elif around and around[-1] in _INLINE:
                found[match[1]] = f"formatted <{around[-1]}>"
        at += len(piece)
    seen = {m[1] for piece, _ in segments for m in _TAG.finditer(piece)}
    for tag in set(_TAG.findall(body)) - seen:
        found[tag] = "not on the page (a comment, an attribute, a tag)"
    return found


_ROWS = st.lists(st.tuples(st.sampled_from(_PREFIXES), st.sampled_from(_TEXTS)), min_size=1, max_size=10)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_ROWS)
def test_no_command_the_page_does_not_show_as_a_line_is_read(rows: list[tuple[str, str]]) -> None:
    body = _body(rows)
    hidden = _must_not_read(body)
    read = {m[1] for command in parse_commands(body) for m in [_TAG.search(command.line)] if m}
    assert not {tag: hidden[tag] for tag in read if tag in hidden}, body


def test_the_oracle_sees_what_it_should() -> None:
    """The second reader itself: a hidden, a quoted and a mid-line command are named; a plain
    line and a line typed under a quote are not."""
    body = _body([("", "<!-- {} -->"), ("> ", "{}"), ("", "text {}"), ("", ""), ("", "{}"), ("> ", "q"), ("", "{}"),
                  ("", ""), ("", "```"), ("", "{}"), ("", "```")])
    assert _must_not_read(body) == {"k0": "not on the page (a comment, an attribute, a tag)", "k1": "quoted",
                                    "k2": "mid-line, after 'text'", "k5": "in <pre>"}
    assert [c.line for c in parse_commands(body)] == ["/dispatch rocm720 k3", "/dispatch rocm720 k4"]
