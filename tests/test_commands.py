"""The chat-command grammar, including property tests: any text parses without a
crash, and nothing inside code or quotes is ever a command."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands import Command, parse_commands


@pytest.mark.parametrize("body,expected", [
    ("/dispatch rocm720", [("dispatch", "rocm720", (), None)]),
    ("/dispatch rocm720 stage-a-test-1-gpu-small-amd-rocm720 sha=ABCDEF1",
     [("dispatch", "rocm720", ("stage-a-test-1-gpu-small-amd-rocm720",), "abcdef1")]),
    ("LGTM\n/dispatch amd\nthanks", [("dispatch", "amd", (), None)]),
    ("  /dispatch rocm720  ", [("dispatch", "rocm720", (), None)]),
    ("/dispatch rocm720\n/dispatch amd", [("dispatch", "rocm720", (), None), ("dispatch", "amd", (), None)]),
])
def test_dispatch(body: str, expected: list) -> None:
    assert [(c.name, c.lane, c.jobs, c.sha) for c in parse_commands(body)] == expected
    assert all(c.error is None for c in parse_commands(body))


@pytest.mark.parametrize("body,sub,patch_id", [
    ("/fold approve", "approve", None),
    ("/fold approve 1f362f70f0", "approve", "1f362f70f0"),
    ("/fold refresh", "refresh", None),
    ("/fold help", "help", None),
])
def test_fold(body: str, sub: str, patch_id: str | None) -> None:
    assert parse_commands(body) == [Command("fold", body, subcommand=sub, patch_id=patch_id)]


@pytest.mark.parametrize("body,error", [
    ("/dispatch", "name a lane"),
    ("/dispatch rocm720 sha=xyz", "`sha=` takes 7 to 40 hex digits"),
    ("/dispatch rocm720 sha=abcdef1 sha=abcdef2", "give `sha=` once"),
    ("/dispatch rocm720 job;rm", "`job;rm` is not a job id"),
    ("/fold", "`/fold` needs a command"),
    ("/fold merge", "`merge` is not a `/fold` command; use `/fold approve`, `/fold refresh`, `/fold help`"),
    ("/fold approve not-hex", "use `/fold approve [<patch-id>]`"),
    ("/fold help me", "`/fold help` takes no arguments"),
])
def test_malformed_commands_carry_an_error(body: str, error: str) -> None:
    (command,) = parse_commands(body)
    assert command.error is not None and error in command.error


@pytest.mark.parametrize("body", [
    "/rerun-failed-ci", "/tag-run-ci-label", "/tag-and-rerun-ci", "/rerun-test test_x.py", "/rerun-group g",
    "/dispatcher rocm720", "/folder approve", "please /dispatch rocm720", "`/dispatch rocm720`",
    "> /dispatch rocm720", "```\n/dispatch rocm720\n```", "~~~yaml\n/fold approve\n~~~", "    /dispatch rocm720",
    "````\n```\n/dispatch rocm720\n````", "text `/dispatch rocm720` text",
])
def test_not_foldbots_or_not_a_command(body: str) -> None:
    assert parse_commands(body) == []


@pytest.mark.parametrize("body,parsed", [
    ("/fold approve `16ad47620b`", ("fold", "approve", "16ad47620b", (), None)),
    ("/dispatch rocm720 `stage-a-test-1-gpu-small-amd-rocm720`",
     ("dispatch", None, None, ("stage-a-test-1-gpu-small-amd-rocm720",), None)),
    ("/dispatch rocm720 ``sha=abcdef1``", ("dispatch", None, None, (), "abcdef1")),
    ("/dispatch `rocm720`", ("dispatch", None, None, (), None)),
    ("/fold help `please`", ("fold", "help", None, (), "`/fold help` takes no arguments")),
])
def test_an_argument_in_inline_code_is_read_not_dropped(body: str, parsed: tuple) -> None:
    """Ids and job names are shown in code, and written so: `/fold approve `<id>`` named no id (so
    approved whatever the report held), `/dispatch <lane> `<job>`` named no job (so ran every
    skipped one). The command itself in inline code is still no command."""
    (command,) = parse_commands(body)
    assert (command.name, command.subcommand, command.patch_id, command.jobs,
            command.sha if command.name == "dispatch" and not command.error else command.error) == parsed
    assert command.line == body.replace("``", "`")  # quoted in the reply as shown: code in single backticks


def test_a_fence_needs_its_own_kind_to_close() -> None:
    body = "```\n~~~\n/dispatch rocm720\n```\n/fold help"
    assert [(c.name, c.subcommand) for c in parse_commands(body)] == [("fold", "help")]


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)
_lines = st.lists(st.one_of(_text, st.sampled_from(["/dispatch rocm720", "/fold approve", "/fold help", "```", "~~~",
                                                   "> quote", "/dispatch", "/fold x", "`x`"])), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_lines)
def test_any_text_parses(lines: list[str]) -> None:
    for command in parse_commands("\n".join(lines)):
        assert command.name in ("dispatch", "fold")
        assert command.error is None or isinstance(command.error, str)


@settings(max_examples=300, deadline=None)
@given(st.lists(_text, max_size=8), st.sampled_from(["```", "~~~", "````"]), st.sampled_from(["", "sh", "yaml"]))
def test_code_blocks_never_trigger(inner: list[str], fence: str, info: str) -> None:
    block = "\n".join(line.replace(fence[0] * 3, "") for line in inner)
    body = f"{fence}{info}\n/dispatch rocm720\n{block}\n/fold approve\n{fence}"
    assert parse_commands(body) == []


@settings(max_examples=200, deadline=None)
@given(_text)
def test_quotes_never_trigger(text: str) -> None:
    body = "\n".join("> " + line for line in ["/dispatch rocm720", *text.splitlines(), "/fold approve"])
    assert parse_commands(body) == []


def test_a_line_lazily_continuing_a_quote_is_the_commenters_own_command() -> None:
    """GitHub shows a line right under a `>` quote (no blank line between) inside the quote: a
    lazy continuation, in CommonMark. Yet it is the commenter's own line (GitHub's "Quote
    reply" puts `>` before every line it quotes, and a blank line after), and they mean it:
    it is run, not dropped without a word."""
    assert [c.line for c in parse_commands("> can you run the MI35x lane?\n/dispatch rocm720")] == ["/dispatch rocm720"]
    assert parse_commands("> can you run the MI35x lane?\n> /dispatch rocm720") == []


@pytest.mark.parametrize("body,lines", [
    ("<!-- /dispatch rocm720 -->", []),
    ("<!--\n/dispatch rocm720\n-->\n/fold help", ["/fold help"]),
    ("<!-- never closed\n/dispatch rocm720\n/fold help", []),  # GitHub hides the rest of the comment
    ("<pre>\n/dispatch rocm720\n</pre>\n/fold help", ["/fold help"]),
    ("<PRE class='x'>/dispatch rocm720</PRE>\n\n/fold help", ["/fold help"]),
    ("<pre>log</pre> /fold help", ["/fold help"]),  # a raw HTML block's text, on a line of its own after the `<pre>`
    ("<pre>log</pre> text /fold help", []),
    ("text <!-- hidden --> /fold refresh", []),  # not at the start of the line: not a command
    ("```\n<!--\n```\n/fold help", ["/fold help"]),  # a marker inside a code fence hides nothing
    ("    <!-- indented\n/fold help -->\n/fold refresh", ["/fold help -->", "/fold refresh"]),  # code, not a comment
    ("The marker is `<!--` foldbot.\n\n/dispatch rocm720", ["/dispatch rocm720"]),  # inline code hides nothing
    ("use `<pre>` here\n/fold help", ["/fold help"]),
    ("an arrow <!-- in text\n\n/fold help", ["/fold help"]),  # no `-->` in its paragraph: text, not a comment
    ("text <!-- hidden\n/dispatch rocm720\n-->\n/fold help", ["/fold help"]),  # an inline comment over lines
    ("text <!-- x --> and <!--\n/dispatch rocm720\n-->", []),
    # A paragraph ends at a blank row and at the start of another block: a `<!--` whose
    # `-->` is past that is text, and what follows it is seen (as GitHub renders it).
    ("text <!-- x\n```\n-->\n```\n/fold help", ["/fold help"]),  # the fence holds the `-->`
    ("- item <!-- note\n/dispatch rocm720\n- other -->", ["/dispatch rocm720"]),  # the next item ends the paragraph
    ("text <!-- x\n# head\n/dispatch rocm720 -->", ["/dispatch rocm720 -->"]),
    ("text <!-- x\n***\n/dispatch rocm720 -->", ["/dispatch rocm720 -->"]),
    ("text <!-- x\n-\n/dispatch rocm720 -->", ["/dispatch rocm720 -->"]),  # a setext heading
    # A list item's content is a block of its own: a comment, `<pre>` or fence that opens it hides
    # what it holds (a "how to run" snippet pasted in a bullet starts no GPU run).
    ("- <!--\n  /dispatch rocm720\n  -->\n/fold help", ["/fold help"]),
    ("1. <!--\n   /dispatch rocm720\n   -->", []),
    ("* <pre>/dispatch rocm720</pre>", []),
    ("- ```\n  /dispatch rocm720\n  ```\n\n/fold help", ["/fold help"]),
    ("* ~~~\n  /dispatch rocm720\n  ~~~", []),
    ("10. ```\n    /dispatch rocm720\n    ```\n/fold help", ["/fold help"]),  # closed 4 columns in
    ("- a\n  - ```\n    /dispatch rocm720\n    ```", []),  # a nested item
    ("- ```\n/dispatch rocm720\n```", ["/dispatch rocm720"]),  # not indented: the item (and its fence) ended
    ("- <!-- x\n  -->\n/dispatch rocm720", ["/dispatch rocm720"]),
])
def test_html_comments_and_pre_blocks_hide_commands(body: str, lines: list[str]) -> None:
    assert [c.line for c in parse_commands(body)] == lines


# Read as a browser shows the comment (GitHub's markdown, then HTML): what a fuzzer of 60,000 bodies against
# markdown-it-py and html5lib found the hand-written reader got wrong, each shrunk to its smallest form.
@pytest.mark.parametrize("body", [
    " \t/dispatch rocm720",  # a space and a tab reach column 4: indented code
    "see `foo\n/dispatch rocm720` for the syntax",  # a code span over two lines
    "```x`\n```\n/dispatch rocm720",  # a backtick in a backtick fence's info string: no fence, the second opens one
    "text\n    <!--\n/dispatch rocm720\n-->",  # a paragraph's line 4 columns in is text, and opens a comment
    "-\n    ```\n  /dispatch rocm720",  # an empty item's fence 4 columns in
    "<!--><pre -->/dispatch rocm720",  # `<!-->` is a whole comment; the `<pre` after it is a tag
    "<!-- a --><!--\n/dispatch rocm720",  # a comment opened after a closed one
    "<pre><!--</pre>/dispatch rocm720",
    "- <!-- note\n-->\n/dispatch rocm720",  # the item's comment block ends with the item: the `-->` is text
    "> <!--\n/dispatch rocm720",
    '<pre\nclass="x">\n/dispatch rocm720',  # a tag over two lines
    "<code>\n/dispatch rocm720",
    "<div>\n<!x\n/dispatch rocm720",  # a bogus comment, to the next `>`
    "<pre><e</pre>/dispatch rocm720",  # `<e</pre>` is one tag: the `<pre>` stays open
    "\\`<pre>`\n/dispatch rocm720",  # an escaped backtick opens no code span
    "x <pre>\n~~~</pre>\n/dispatch rocm720",
    ">/dispatch rocm720<!--\n-->",  # a quoted line whose comment ends on the next row
    "<!--><!\n-<pre>\n/dispatch rocm720",  # a bogus comment the paragraph's own `<p>` ends
    "1. <!--\n><!--><pre>\n/dispatch rocm720",  # the item's end tag was inside the comment: the `<pre>` stays open
    "/dispatch rocm720\n---",  # a heading
    # a second fuzzer, against GitHub's own cmark-gfm as well (/tmp/review50)
    "- > /dispatch rocm720",  # a quote on a list item's marker row
    "1. >/dispatch rocm720",
    "> <blockquote>\n\n/dispatch rocm720",  # the quote's own end tag closed the raw one: the page's quote stays open
    "> <table>\n\n/dispatch rocm720",  # past a table the quote's end tag closes nothing
    "><object>\n/dispatch rocm720",
    "><div\n/dispatch rocm720",  # an unfinished tag swallows the quote's end tag
    "><!--\n<!-->\n/dispatch rocm720",
    '<div title="\n\n/dispatch rocm720',  # a quoted value that never ends
    "| a | b |\n|---|---|\n    /dispatch rocm720",  # indented code right under a table
    "| a |\n|---|\n/dispatch rocm720",  # a table's row
    "<pre><table><tr><td>\n</pre>\n\n/dispatch rocm720",  # `</pre>` out of scope behind a cell
    "<pre><object></pre>\n/dispatch rocm720",
    "> ![a\nb](u)\n> /dispatch rocm720",  # an image's text over two rows
    "<pre>\n</pre\xa0></script>\n\n/dispatch rocm720",  # a no-break space is part of a tag's name
    "<div>\n" + "<li>" * 300 + "\n\n/dispatch rocm720",  # a raw `<li>`'s first line, like a list item's
    "<code><object></code>\n      /dispatch rocm720",  # `</code>` past an object's start closes nothing
    "<template>\n\n/dispatch rocm720",  # a template's content is inert
    " -   <select>\n /dispatch rocm720",  # inside a select a browser drops the item's end tags, and the text
    "\ufeff```\n/dispatch rocm720\n```",  # a BOM before a fence (GitHub's parser drops it)
    # a third fuzzer, of the reader on cmark-gfm and lexbor, against cmark-gfm and html5lib (/tmp/s54/fuzz)
    '<p title="x>\n\n/dispatch rocm720',  # the unfinished value swallows the line, as GitHub renders it
    '<p title="\n````py\n/dispatch rocm720\n````',  # GitHub writes `<pre lang="py">`: its `"` ends the value
    "- [X] /dispatch rocm720\n\n  <details title=\"x>",  # a task item's first line, the page's rows unknown
    "text[^1]\n\n[^1]: /dispatch rocm720",  # a footnote's first line, after its label
    "- [ ] /dispatch rocm720",  # a task item's first line
    # a fourth: a review of the reader on cmark-gfm (/tmp/review54)
    '<blockquote data-sourcepos="1:39-3:13">\n\n/dispatch rocm720',  # a raw quote claiming a markdown quote's rows
    "<details>\n\n/dispatch rocm720",  # closed until opened
    "<rp>\n\n/dispatch rocm720",  # never shown
    "<sub>\n" * 20 + "\n/dispatch rocm720",  # too small to read
    "<h1>\n\n/dispatch rocm720",
    "<table><tr><td>\n\n/dispatch rocm720",
    "<del>\n\n/dispatch rocm720",  # struck out
    "please run&#10;/dispatch rocm720",  # an entity's newline is a space: mid-line
    "<p>please run\n/dispatch rocm720</p>",  # raw HTML's newline too
    "- x&#10;/dispatch rocm720",
    "$$\n/dispatch rocm720\n$$",  # a formula: GitHub's math
    "<q></q>/dispatch rocm720",  # after the quote marks `<q>` draws
    # a second review of it (/tmp/review55)
    "please run\u2028/dispatch rocm720",  # a line separator shows as a space or nothing
    "- item&#x2028;/dispatch rocm720",
    "\u200b![logo](x.png)/dispatch rocm720",  # a zero-width space is nothing: the image is first
    "\u200b<q>note</q> /dispatch rocm720",
    '<a data-footnote-backref href="#x">please run</a> /dispatch rocm720',  # not the renderer's back-link
    '<a data-footnote-backref href="#x">\u21a9</a> /dispatch rocm720',
    "<div>please run<center>/dispatch rocm720</center></div>",  # GitHub takes `<center>` off: one line
    '<div align="center"><img src="x.png"><section>/dispatch rocm720</section></div>',
    "<select><option>please run</option></select> /dispatch rocm720",  # a widget before it
    "<math><mi>x</mi></math> /dispatch rocm720",
    "<kbd></kbd> /dispatch rocm720",  # an empty key is drawn
    "- <div>/dispatch rocm720</div>",  # a raw `<div>`'s text on the item's marker row
    "[^1]: <div>/dispatch rocm720</div>\n\ntext[^1]",
    # a third (/tmp/review56)
    "<div><sub><section>/dispatch rocm720</section></sub></div>",  # subscript, once `<section>` is off
    "<div><del><section>/dispatch rocm720</section></del></div>",
    "<ruby><section>/dispatch rocm720</section><rt>x</rt></ruby>",
    "<div>please run<listing></listing>/dispatch rocm720</div>",  # GitHub takes `<listing>` off: one line
    "please run<section></section>/dispatch rocm720",
    "<div><li>please run</li>/dispatch rocm720</div>",
    '<span><a data-footnote-backref href="#">\u21a9</a></span>/dispatch rocm720',
    "-\n  /dispatch rocm720",  # shown as `- /dispatch rocm720`: the item's first line
    "- <div></div>/dispatch rocm720",  # an empty block shows nothing: still the marker's row
    "- <p></p>/dispatch rocm720",
    "<tt></tt> /dispatch rocm720",  # an empty `<tt>` is drawn
    "\u1680/dispatch rocm720",  # U+1680 is a dash, not a space
    "&#x1c;/dispatch rocm720",
    "/dispatch&#x85;rocm720",
    # a raw quote that writes the renderer's row attribute itself is still raw HTML's (not a quote's lazy line)
    '> x\n<blockquote data-sourcepos="1:1-5:20">\n\n/dispatch rocm720\n\n</blockquote>',
])
def test_what_the_rendered_comment_hides_or_shows_as_code_is_no_command(body: str) -> None:
    assert parse_commands(body) == []


@pytest.mark.parametrize("body", [
    "Please run:\n    /dispatch rocm720",  # a paragraph's line 4 columns in is text
    "<!-->\n/dispatch rocm720",  # an empty comment
    "<!--->\n/dispatch rocm720",
    "```x`\n/dispatch rocm720",  # no fence
    "> <pre>\n\n/dispatch rocm720",  # the quote's end closes its `<pre>`
    "- <pre>\n\n/dispatch rocm720",
    "-\n  ```\n/dispatch rocm720",  # the fence ends with its item
    "- item\n\n    /dispatch rocm720",  # the item's second paragraph
    "<select><option>a</option></select>\n\n/dispatch rocm720",  # a select closed
    "\ufeff/dispatch rocm720",  # a BOM first, which GitHub's parser drops
    "see <textarea>\n/dispatch rocm720",  # GitHub's tag filter shows `<textarea>` (`<script>`, ...) as text
    "- [ ] item\n  /dispatch rocm720",  # a task item's second line
    "- [ ] <!-- note -->\n  /dispatch rocm720",  # (its first shows the box alone)
    "> quote\n/dispatch rocm720\n> /dispatch rocm720",  # the line typed without `>` is read, the quoted one not
    "> /dispatch rocm720\n/dispatch rocm720\n> /dispatch rocm720",  # (the same text, quoted twice, typed once)
    "> quote\n> more\n/dispatch rocm720",
    "- > quote\n/dispatch rocm720",  # a quote in an item, continued lazily
    "> quote\n/dispatch rocm720 <!-- note -->",  # a lazy line with markup is matched as it shows
    "> quote\n/dispatch&#32;rocm720",
    # the text of raw HTML on a line of its own, after a block (no blank line needed)
    "<details><summary>log</summary>\nlots\n</details>\n/dispatch rocm720",
    '<p align="center"><img src="x.png"></p>\n/dispatch rocm720',
    '<div align="center">\n/dispatch rocm720\n</div>',
    "\u200b/dispatch rocm720",  # invisible characters first
    "a\n\ufeff/dispatch rocm720",
    "text[^1]\n\n[^1]: note\n    /dispatch rocm720",  # a footnote's second line, its `↩` link aside
    "$$\nx\n$$\n/dispatch rocm720",  # after a formula
])
def test_what_the_rendered_comment_shows_at_the_start_of_a_line_is_a_command(body: str) -> None:
    assert [c.line for c in parse_commands(body)] == ["/dispatch rocm720"]


def test_what_the_page_hides_or_breaks_off_is_no_argument() -> None:
    (command,) = parse_commands("/dispatch rocm720<rp> sha=0123456789abcdef</rp>")  # `<rp>` is never shown
    assert (command.lane, command.sha, command.error) == ("rocm720", None, None)
    (command,) = parse_commands("/dispatch rocm720\u2028more words")  # a line separator is no line break
    assert (command.lane, command.jobs, command.error) == ("rocm720", ("more", "words"), None)


def test_a_lazy_line_with_markup_is_read_as_it_shows() -> None:
    (command,) = parse_commands("> can you run it?\n/dispatch rocm720 `stage-a-test-1-gpu-small-amd-rocm720`")
    assert command.jobs == ("stage-a-test-1-gpu-small-amd-rocm720",)
    (command,) = parse_commands("> can you run it?\n/dispatch rocm720 *now*")  # (an emphasised word, a job id)
    assert (command.lane, command.jobs) == ("rocm720", ("now",))
    # the quoted line that shows the same is not the typed one's twin: one command, not two
    assert len(parse_commands("> /dispatch rocm720 *now*\n/dispatch rocm720 *now*")) == 1
    assert parse_commands("> /dispatch rocm720 *now*\n> more") == []


def test_a_footnote_referenced_twice_has_two_back_links_and_no_argument_of_them() -> None:
    (command,) = parse_commands("a[^1] b[^1]\n\n[^1]: note\n    /dispatch rocm720")
    assert (command.lane, command.jobs, command.error) == ("rocm720", (), None)


def test_a_table_row_of_spaces_is_read_at_once() -> None:
    """(A delimiter row's pattern took 40 s on 65,000 spaces before a dash.)"""
    assert [c.line for c in parse_commands("x\n" + " " * 65000 + "-x\n\n/fold help")] == ["/fold help"]


def test_a_raw_line_break_starts_a_line() -> None:
    assert [c.line for c in parse_commands("/fold help<br>/dispatch rocm720")] == ["/fold help", "/dispatch rocm720"]
    assert [c.line for c in parse_commands("see<br/>\n/dispatch rocm720  \n/fold help")] == [
        "/dispatch rocm720", "/fold help"]


def test_a_comment_nested_too_deep_to_read_is_answered_not_dropped() -> None:
    """A page nested thousands deep takes an HTML5 tree builder seconds (it looks through the open
    elements at each tag): past 512, as deep as Chrome builds a page, the comment is not read, and
    if it names a command, the reply says why."""
    (command,) = parse_commands(">" * 600 + " /dispatch rocm720")
    assert command == Command("dispatch", "/dispatch", error=(
        "foldbot could not read this comment: its elements nest 600 deep (at most 512); write the command in "
        "a comment of its own"))
    assert parse_commands("<div>\n" + "<ul>" * 5000 + "\n\nno command here") == []
    assert parse_commands("/fold help\n\n" + "<div>\n" + "<span>" * 600)[0].error.startswith(
        "foldbot could not read this comment: its elements nest 601 deep")
    # what closes does not count: 20,000 closed pairs nest 2 deep
    assert [c.line for c in parse_commands("/fold help\n\n<div>\n" + "<b>x</b>" * 20000)] == ["/fold help"]
    assert [c.line for c in parse_commands(">" * 500 + " quote\n/dispatch rocm720")] == ["/dispatch rocm720"]


@pytest.mark.parametrize("body,error", [
    # 500 formatting elements left open, reopened in each of 15,000 paragraphs: 24 s and 6.6 GB to build
    ("".join(f"<b x={i}>" for i in range(500)) + "<p>a" * 7000 + "\n\n/dispatch rocm720",
     "a browser would rebuild 3,625,250 of its elements (at most 50,000)"),
    # GitHub's parser fills each row of a 1,000-column table: 500 rows are 3 s
    ("|" + "a|" * 1000 + "\n|" + "-|" * 1000 + "\n" + "x\n" * 500 + "\n/fold help",
     "its tables hold 502,000 cells (at most 50,000)"),
    # formatting elements an end tag of another takes off the stack stay open: each `<b>` reopens the others
    ("".join(f"<div><b x={i}></div>" for i in range(400)) + "\n\n/dispatch rocm720",
     "a browser would rebuild 160,000 of its elements (at most 50,000)"),
])
def test_a_comment_too_costly_to_build_is_answered_not_dropped(body: str, error: str) -> None:
    (command,) = parse_commands(body)
    assert command.error == f"foldbot could not read this comment: {error}; write the command in a comment of its own"


def test_a_lone_surrogate_is_read_as_a_replacement_character() -> None:
    """JSON may carry one (`"\\ud800"`); GitHub's parser takes UTF-8 only."""
    assert [c.line for c in parse_commands("\ud800 text\n/dispatch rocm720")] == ["/dispatch rocm720"]
    assert [c.line for c in parse_commands("| a |\n|---|\n| b |\n" * 3 + "\n/fold help")] == ["/fold help"]
