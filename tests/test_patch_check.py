"""The check of a patched file parses again only what the patch touched, the rest standing as
`<key>: 0` or `- 0` (`bot.edit._patched_data`): it must give what parsing the whole file gives,
or the same refusal, on every real file and on whatever a splice may do to its text."""

from __future__ import annotations

import random

import pytest

import bot.edit
from bot.config import RepoConfig
from bot.edit import FileEdit, VerificationError, _patched_data, apply_change, verify_edit
from bot.workflow import WorkflowError, compose_workflow, parse_workflow
from tests.paths import SGLANG
from tests.sglang_current import LANES, workflow_text

REAL = sorted(p for p in SGLANG.rglob("*.yml"))

#: What a splice may do to a line of a job: the edits a buggy splicer could make, and worse.
MUTATIONS = [
    lambda line: "",                                    # the line deleted
    lambda line: line + line,                           # doubled
    lambda line: line.replace(":", "", 1),              # a key's colon lost
    lambda line: line[:-1] + " # note\n",               # a comment added
    lambda line: line[:len(line) - len(line.lstrip())] + "extra: [1, 2\n" + line,  # an unclosed flow list
    lambda line: line[:len(line) - len(line.lstrip())] + 'quoted: "open\n' + line,  # an unclosed quote
    lambda line: line.lstrip(),                         # moved to column 0: a new top-level key, or broken
    lambda line: "  stray-job:\n    runs-on: x\n" + line,  # a new job in the middle of another
    lambda line: "  check-changes:\n    runs-on: x\n" + line,  # a job id the file already has
    lambda line: line.replace(" ", "\t", 1),            # a tab in the indentation
]


def _outcome(action):
    try:
        return "ok", action()
    except WorkflowError as exc:
        return "error", type(exc)


def _spliced(wf, rng: random.Random) -> FileEdit:
    """One to three lines of the file, anywhere (a job's, a step's, `on:`'s), changed by
    MUTATIONS, as splices of the original text."""
    splices = []
    for at in sorted(rng.sample(wf.line_starts, min(len(wf.line_starts), rng.randint(1, 3)))):
        stop = wf.text.find("\n", at) + 1 or len(wf.text)
        splices.append((at, stop, rng.choice(MUTATIONS)(wf.text[at:stop])))
    return FileEdit(wf.path, wf.text, bot.edit._splice(wf.text, splices), (), tuple(splices))


@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(SGLANG)))
def test_parsing_what_a_patch_touches_gives_what_parsing_the_whole_file_gives(path) -> None:
    try:
        wf = parse_workflow(path.read_text(encoding="utf-8"), str(path))
    except WorkflowError:
        pytest.skip("not a workflow foldbot reads")
    if not wf.cuttable:
        assert path.name == "nightly-amd-mi355x-disagg.yml"  # its jobs share an `env: &mi355x-env`: checked whole
        return
    rng = random.Random(path.name)
    for _ in range(25):
        edit = _spliced(wf, rng)
        whole = _outcome(lambda: compose_workflow(edit.after, edit.path)[1])
        touched = _outcome(lambda: _patched_data(wf, edit))
        assert touched == whole
        if whole[0] == "ok":
            assert list(touched[1]["jobs"]) == list(whole[1]["jobs"])  # the jobs in the file's order


def test_most_real_edits_that_parse_are_checked_by_what_they_touch(monkeypatch) -> None:
    """The equivalence above would hold if the check always parsed the whole file: most of the
    random edits of the real files that parse are checked by what they touch alone."""
    texts: list[str] = []
    real = bot.edit.compose_workflow
    monkeypatch.setattr(bot.edit, "compose_workflow", lambda text, path: (texts.append(text), real(text, path))[1])
    reduced = parsed = 0
    for path in REAL:
        wf = parse_workflow(path.read_text(encoding="utf-8"), str(path))
        if not wf.cuttable:
            continue
        rng = random.Random(path.name)
        for _ in range(25):
            edit = _spliced(wf, rng)
            texts.clear()
            if _outcome(lambda: _patched_data(wf, edit))[0] == "ok":
                parsed += 1
                reduced += texts[-1] != edit.after
    assert parsed > 300 and reduced > 0.9 * parsed  # (385 of 386 on 2026-12-06)


ALIASED = """\
on: push
jobs:
  a:
    runs-on: linux-mi300-gpu-1
    env: &common
      IMAGE: rocm/sgl-dev:v1
    steps:
      - run: pytest a
  b:
    runs-on: linux-mi300-gpu-1
    env: *common
    steps:
      - run: pytest b
"""


def test_an_alias_makes_the_whole_file_be_parsed() -> None:
    """`b` shares `a`'s env through an alias: a patch of `a`'s env changes `b`'s too, though
    `b`'s text is untouched, and the check must see it (SGLang's mi355x disagg lane shares
    its env so)."""
    wf = parse_workflow(ALIASED, "ci.yml")
    assert not wf.cuttable
    at = ALIASED.index("v1")
    edit = FileEdit("ci.yml", ALIASED, ALIASED.replace("v1", "v2"), (), ((at, at + 2, "v2"),))
    assert _patched_data(wf, edit)["jobs"]["b"]["env"] == {"IMAGE": "rocm/sgl-dev:v2"}


def test_an_alias_to_an_anchor_in_an_untouched_job_is_parsed_whole() -> None:
    """A patch that adds an alias to an anchor in a job it does not touch: read alone, the
    touched text does not parse; the whole file does, and that is what counts."""
    text = ALIASED.replace("    env: *common\n", "")
    wf = parse_workflow(text, "ci.yml")
    at = text.index("    steps:\n      - run: pytest b")
    edit = FileEdit("ci.yml", text, text[:at] + "    env: *common\n" + text[at:], (), ((at, at, "    env: *common\n"),))
    assert _patched_data(wf, edit)["jobs"]["b"]["env"] == {"IMAGE": "rocm/sgl-dev:v1"}


def _ins(text: str, needle: str, new: str, k: int = 0) -> tuple[int, int, str]:
    at = text.index(needle) + k
    return at, at, new


def _rep(text: str, old: str, new: str) -> tuple[int, int, str]:
    at = text.index(old)
    return at, at + len(old), new


T_A = "on: push\njobs:\n  a:\n    env: &e {X: 1}\n  b:\n    env:\r      *e\n"
T_B = "on: push\njobs:\n  a:\n    x: 1\n  b:\n    y: &e 2\n"
T_C = 'on: push\njobs:\n  a:\n    x: 1\n  b:\n    y: !int "5"\n'
T_D = "on: push\njobs:\n  a:\n    run: |\n      pytest\n  b:\n    x: 1\n"
T_E = "on: push\njobs:\n  a:\n    x: 1\n  b:\n    y: 2\n  c:\n    z: 3\n"
T_F = "name: |\n  ci\non: push\nenv:\n  X: 1\njobs:\n  a:\n    x: 1\nconcurrency: g\n"
T_G = "name: !!str\n  &x ci\non: push\njobs:\n  a:\n    x: 1\n"
T_H = "on:\n  push:\n    branches: [!!str &x main]\nenv:\n  A: 1\njobs:\n  a:\n    x: 1\n"
T_I = "on: push\njobs:\n  a:\n    x: 1\n?\n  name\n: foo\n"
T_J = "on: push\njobs:\n  a:\n    x: 1\nconcurrency: g\n"


@pytest.mark.parametrize("text,splices", [
    # an alias on a line that a lone CR (or NEL, U+2028, U+2029) starts: YAML's line, not "\n"'s
    (T_A, [_rep(T_A, "1}", "2}")]),
    (T_A.replace("\r", "\u2028"), [_rep(T_A, "1}", "2}")]),
    (T_A, [_rep(T_A, "&e ", "")]),
    # an anchor a splice writes again, with the name of one in a job left out
    (T_B, [(27, 28, "&e 1")]),
    (T_B, [(27, 28, "!!str &e 1")]),
    # a directive that changes what a tag in a job left out means
    (T_C, [(0, 0, "%TAG ! tag:yaml.org,2002:\n---\n")]),
    # a line put in the next key's indentation: the block scalar before takes it
    (T_D, [_ins(T_D, "  b:", "     # note\n ", 1)]),
    (T_D.replace("|\n", "|+\n"), [_ins(T_D.replace("|\n", "|+\n"), "  b:", "\n ", 1)]),
    # a quote opened over a job left out, and its id written again
    (T_E, [_rep(T_E, "x: 1", "x: '1"), _ins(T_E, "    z: 3", "'\n  b: 0\n  c:\n")]),
    # splices out of order (not what the splicer makes): the edit's text is parsed
    (T_E, [(len(T_E), len(T_E), ""), (0, 0, "")]),
    # an anchor after a tag in the original (the tag starts the node), written again
    (T_B.replace("&e 2", "!!str &e two"), [(27, 28, "&e 1")]),
    # a directive a splice uncovers, writing nothing: `#%TAG` and `#---` lose their `#`
    ("#%TAG ! tag:yaml.org,2002:\n#---\n" + T_C, [(0, 1, ""), (27, 28, "")]),
    # the same at the top level: a line in `on:`'s indentation, taken by `name:`'s block scalar; a quote opened
    # in `env:` over `jobs:` and `concurrency:`, and a key written again after it
    (T_F, [_ins(T_F, "on: push", "  more\n")]),
    (T_F, [_rep(T_F, "X: 1", "X: '1"), _ins(T_F, "concurrency", "'\nconcurrency: 0\n")]),
    (T_F, [_ins(T_F, "concurrency", "env: {}\n")]),
    # from a fuzzer (2026-12-06): an anchor after a tag, on the line before it or after a flow indicator, in a key
    # the patch leaves alone, written again by the patch (the whole file refuses the repeated anchor)
    (T_G, [_rep(T_G, "push", "&x push")]),
    (T_H, [_rep(T_H, "A: 1", "A: &x 1")]),
    # an explicit key's `?` line after the last job, its text on the next line: it is no job's
    (T_I, [_rep(T_I, "name\n: foo\n", "")]),
    (T_I, [_rep(T_I, "\n: foo\n", ": bar\n")]),
    # an anchor the patch puts on `jobs:`, and an alias to it: its copy would hold the placeholders
    (T_J, [_ins(T_J, "jobs:", " &j", 5), _rep(T_J, "g\n", "*j\n")]),
    (T_J, [_ins(T_J, "jobs:", " &j", 5), _rep(T_J, "concurrency: g\n", "<<: *j\n")]),
], ids=["alias-after-lone-CR", "alias-after-U+2028", "anchor-removed", "anchor-again", "anchor-again-after-a-tag",
        "TAG-directive", "line-in-next-keys-indent", "blank-line-kept-by-|+", "quote-over-a-job", "unsorted",
        "tagged-anchor-again", "directive-uncovered", "top-line-in-next-keys-indent", "quote-over-top-keys",
        "top-key-written-again", "anchor-after-a-tag-a-line-before", "anchor-after-a-tag-in-a-flow-list",
        "explicit-key-after-the-last-job", "explicit-key-read-as-a-job", "alias-to-an-anchored-jobs",
        "merge-of-an-anchored-jobs"])
def test_what_reaches_across_jobs_is_parsed_whole(text: str, splices) -> None:
    """From a review that searched for edits where the check read by jobs differs from the
    whole file's parse (1.4 million random edits then, none left now): each is read as the
    whole file reads."""
    wf = parse_workflow(text, "ci.yml")
    after = text
    for start, end, new in sorted(splices, key=lambda s: (s[0], s[1]), reverse=True):
        after = after[:start] + new + after[end:]
    if splices[0][0] > splices[-1][0]:  # the unsorted pair: its text is the text twice
        after = text + text
    edit = FileEdit("ci.yml", text, after, (), tuple(splices))
    assert _outcome(lambda: _patched_data(wf, edit)) == _outcome(lambda: compose_workflow(edit.after, "ci.yml")[1])


def test_what_a_patch_does_not_touch_is_not_parsed_again() -> None:
    """A patch that takes a job out of `on:`'s options touches `on:` and `jobs:`: `name:`,
    `env:` and `concurrency:` are the original's data, not parsed again (SGLang's lanes hold
    ~5-6 K of text before `jobs:`), nor are the jobs and the keys within the touched ones that
    it leaves alone; the whole stays what the whole file parses to."""
    text = ("name: ci\non:\n  workflow_dispatch:\n    inputs:\n      stage:\n        options: [a, b, c, d]\n"
            "env:\n  IMAGE: rocm/sgl-dev:v1\njobs:\n  a:\n    w: 1\n  b:\n    x: 2\n  c:\n    y: 3\n  d:\n    z: 4\n"
            "concurrency: {group: g}\n")
    wf = parse_workflow(text, "ci.yml")
    splices = (_rep(text, "[a, b, c, d]", "[a, c, d]"), _rep(text, "  b:\n    x: 2\n", ""))
    after = text.replace("[a, b, c, d]", "[a, c, d]").replace("  b:\n    x: 2\n", "")
    edit = FileEdit("ci.yml", text, after, (), splices)
    parsed: list[str] = []
    real = bot.edit.compose_workflow
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bot.edit, "compose_workflow", lambda text, path: (parsed.append(text), real(text, path))[1])
        data = _patched_data(wf, edit)
    assert data == compose_workflow(after, "ci.yml")[1]
    assert data["env"] is wf.data["env"] and data["concurrency"] is wf.data["concurrency"]
    # (a splice that ends where a key's line starts, or begins in its indentation, touches it and the last key
    # before it: `a`'s `w` is parsed again, `c`'s `y` is not)
    assert parsed == ["name: 0\non:\n  workflow_dispatch:\n    inputs:\n      stage:\n        options: [a, c, d]\n"
                      "env: 0\njobs:\n  a:\n    w: 1\n  c:\n    y: 0\n  d: 0\nconcurrency: 0\n"]
    assert data["jobs"]["c"]["y"] == 3 and data["jobs"]["d"] is wf.data["jobs"]["d"]


def test_an_alias_inside_itself_is_an_error_not_a_crash() -> None:
    with pytest.raises(WorkflowError, match="contains itself through an alias"):
        parse_workflow("on: push\njobs:\n  a:\n    x: &r [*r]\n", "ci.yml")


def test_an_edit_that_is_not_its_splices_is_parsed_whole() -> None:
    """An edit whose text is not what its splices make (changed after the splicer) is
    checked on its text."""
    wf = parse_workflow(ALIASED.replace("*common", "{IMAGE: x}"), "ci.yml")
    at = wf.text.index("pytest a")
    edit = FileEdit("ci.yml", wf.text, wf.text.replace("pytest b", "pytest c"), (), ((at, at + 8, "pytest a"),))
    assert _patched_data(wf, edit)["jobs"]["b"]["steps"] == [{"run": "pytest c"}]


@pytest.mark.parametrize("lane", sorted(LANES))
def test_a_fold_of_the_current_lanes_parses_a_fraction_of_the_file(lane, monkeypatch) -> None:
    """The speed of `/fold` reports on SGLang's ~1,450-line lanes rests on this: the check
    parses the few steps and keys a fold touches, not the whole file again."""
    from bot.edit import FoldEdit, LaneChange
    text = workflow_text(lane)
    wf = parse_workflow(text, LANES[lane][0])
    suffix = "-rocm720" if lane == "rocm720" else ""
    change = LaneChange(wf.path, (FoldEdit(f"jit-kernel-unit-test-amd{suffix}", f"jit-kernel-benchmark-test-amd{suffix}",
                                           None, None, 30, ()),))
    edit = apply_change(wf, change, RepoConfig())
    parsed: list[int] = []
    real = bot.edit.compose_workflow
    monkeypatch.setattr(bot.edit, "compose_workflow", lambda text, path: (parsed.append(len(text)), real(text, path))[1])
    verify_edit(wf, change, edit, RepoConfig())
    assert len(parsed) == 1 and parsed[0] < len(edit.after) / 10  # (3,689 of 54,930 and 4,280 of 62,309 characters)


def test_two_insertions_at_one_place_keep_their_order() -> None:
    """Two suites folded into one host insert their steps at the same offset, the first
    suite's first (a real 2026-01 SGLang lane folds two into one perf job)."""
    text = ALIASED.replace("*common", "{IMAGE: x}")
    wf = parse_workflow(text, "ci.yml")
    at = text.index("  b:\n")
    first, second = "      - run: pytest zz\n", "      - run: pytest aa\n"
    edit = FileEdit("ci.yml", text, text[:at] + first + second + text[at:], (), ((at, at, first), (at, at, second)))
    assert _patched_data(wf, edit)["jobs"]["a"]["steps"] == [{"run": "pytest a"}, {"run": "pytest zz"},
                                                               {"run": "pytest aa"}]


def test_a_broken_touched_job_is_refused_with_the_whole_files_line() -> None:
    """What does not parse is refused with the line in the patched file, not in the part
    of it that was parsed first."""
    text = ALIASED.replace("*common", "{IMAGE: x}")
    wf = parse_workflow(text, "ci.yml")
    at = text.index("    steps:\n      - run: pytest b")
    broken = "    env: [unclosed\n"
    edit = FileEdit("ci.yml", text, text[:at] + broken + text[at:], (), ((at, at, broken),))
    whole = None
    try:
        compose_workflow(edit.after, "ci.yml")
    except WorkflowError as exc:
        whole = str(exc)
    assert whole and "line 13, column 10" in whole  # line 7 in the touched part alone
    with pytest.raises(VerificationError) as refused:
        from bot.edit import LaneChange
        verify_edit(wf, LaneChange("ci.yml", ()), edit, RepoConfig())
    assert str(refused.value) == f"the patched file does not parse: {whole}"


@pytest.mark.parametrize("odd", ["\u2028", "\r", "\x85"])
def test_a_lane_file_with_a_line_break_that_newline_does_not_count_is_patched_right(odd) -> None:
    """YAML counts a lone CR, NEL or U+2028 as a line break, and gives its marks in those lines;
    the splicer counts lines so too, or every edit below one lands a line off (a review found a
    `needs:` entry left in place)."""
    from bot.edit import FoldEdit, LaneChange
    from bot.verify import apply_patch
    from bot.edit import unified_diff
    clean = workflow_text("amd")
    line = next(x for x in clean.splitlines(keepends=True) if x.startswith("  # ") and x.endswith("\n"))
    text = clean.replace(line, line[:-1] + odd + "  # (a note after a break YAML counts)\n", 1)
    wf = parse_workflow(text, LANES["amd"][0])
    change = LaneChange(wf.path, (FoldEdit("jit-kernel-unit-test-amd", "jit-kernel-benchmark-test-amd", None, None, 30, ()),))
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    same = apply_change(parse_workflow(clean, wf.path), change, RepoConfig())
    assert edit.after == same.after.replace(line, line[:-1] + odd + "  # (a note after a break YAML counts)\n", 1)
    assert apply_patch(unified_diff([edit]), {wf.path: text}) == {wf.path: edit.after}


@pytest.mark.parametrize("odd", ["\u2028", "\r", "\x85"])
def test_a_hunk_over_a_line_with_such_a_break_applies_with_git(odd) -> None:
    """git ends a line at "\\n" only: the patch's lines were split as `str.splitlines` splits, so a
    hunk over a line with a U+2028, a lone CR or a NEL in it was a corrupt patch to `git apply`."""
    from bot.edit import LaneChange, ReshardEdit, unified_diff
    from bot.verify import apply_patch
    text = ("on: push\njobs:\n  host:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n"
            f"        part: [0, 1, 2]  # three{odd}  # parts\n    steps:\n      - name: Run tests\n"
            "        run: pytest host --total-partitions 3\n")
    wf = parse_workflow(text, "w.yml")
    change = LaneChange("w.yml", (), (ReshardEdit("host", "part", 3, 2, "--total-partitions"),))
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    patch = unified_diff([edit])
    assert f"-        part: [0, 1, 2]  # three{odd}  # parts\n+        part: [0, 1]  # two{odd}  # parts\n" in patch
    assert apply_patch(patch, {"w.yml": text}) == {"w.yml": edit.after}


def _fold_unit_into_host(text: str, comment: tuple[str, ...] = ()) -> FileEdit:
    """`unit` folded into shard `part: 0` of `host` in `w.yml`: the edit, verified, and its patch
    checked to give the same text through `git apply`."""
    from bot.edit import FoldEdit, LaneChange, unified_diff
    from bot.verify import apply_patch
    wf = parse_workflow(text, "w.yml")
    change = LaneChange("w.yml", (FoldEdit("unit", "host", "part", 0, 30, comment),))
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    assert apply_patch(unified_diff([edit]), {"w.yml": text}) == {"w.yml": edit.after}
    return edit


NO_FINAL_BREAK = """on: push
jobs:
  unit:
    runs-on: linux-mi300-gpu-1
    steps:
      - name: Run unit
        run: pytest unit
  host:
    runs-on: linux-mi300-gpu-1
    strategy:
      matrix:
        part: [0, 1, 2]
    steps:
      - name: Run tests
        run: pytest host --total-partitions 3"""


@pytest.mark.parametrize("comment", [("Folded by foldbot",), ()])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_fold_after_a_last_line_with_no_line_break_starts_a_line_of_its_own(comment, newline) -> None:
    """The host's last test step is the file's last line, with no line break after it: the moved
    step was glued onto it (the fold refused as not parsing; with a comment, the comment glued
    on). Found by a fuzzer."""
    edit = _fold_unit_into_host(NO_FINAL_BREAK.replace("\n", newline), comment)
    moved = "".join(f"      # {c}\n" for c in comment) + ("      - name: Run unit\n        if: matrix.part == 0 && "
                                                            "(success() || failure())\n        timeout-minutes: 30\n"
                                                            "        run: pytest unit\n")
    assert edit.after == (NO_FINAL_BREAK.split("  host:")[0].split("  unit:")[0] + "  host:"
                          + NO_FINAL_BREAK.split("  host:")[1] + "\n" + moved).replace("\n", newline)


@pytest.mark.parametrize("extra", ["  ", "\t", "  \t"])
@pytest.mark.parametrize("where", ["end", "middle"])
@pytest.mark.parametrize("host_dash", [6, 4, 8])
def test_white_space_that_is_content_of_a_moved_run_block_moves_with_it(extra, where, host_dash) -> None:
    """A line of a `run: |` block with white space past the block's indentation (an editor that
    indents blank lines) is content: YAML reads `pytest a\\n  \\n`. The moved step dropped it at the
    block's end and emptied it elsewhere, and the fold was refused as differing from the plan; moved
    into steps indented otherwise, it moves with the rest of its line."""
    ws = "          " + extra + "\n"
    body = ("          pytest a\n" + ws + "          pytest b\n") if where == "middle" else ("          pytest a\n" + ws)
    dash = " " * host_dash
    text = ("on: push\njobs:\n  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - name: Run unit\n"
            "        run: |\n" + body + "\n  host:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n"
            f"        part: [0, 1]\n    steps:\n{dash}- name: Run tests\n{dash}  run: pytest host --total-partitions 2\n")
    wf = parse_workflow(text, "w.yml")
    run = wf.data["jobs"]["unit"]["steps"][0]["run"]
    assert extra in run  # (YAML reads it as content)
    edit = _fold_unit_into_host(text)
    assert parse_workflow(edit.after, "w.yml").data["jobs"]["host"]["steps"][1]["run"] == run


@pytest.mark.parametrize("indicator", ["|+", ">+", "|2+", "|+2"])
def test_a_moved_block_that_keeps_its_trailing_empty_lines_keeps_them(indicator) -> None:
    """Keep chomping (`|+`): the block's trailing empty lines are content; the moved step dropped
    them, and the fold was refused as differing from the plan."""
    text = ("on: push\njobs:\n  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - name: Run unit\n"
            f"        run: {indicator}\n          pytest unit\n\n\n  host:\n    runs-on: linux-mi300-gpu-1\n"
            "    strategy:\n      matrix:\n        part: [0, 1]\n    steps:\n      - name: Run tests\n"
            "        run: pytest host --total-partitions 2\n")
    wf = parse_workflow(text, "w.yml")
    assert wf.data["jobs"]["unit"]["steps"][0]["run"].endswith("\n\n\n")
    _fold_unit_into_host(text)


@pytest.mark.parametrize("indicator", ["|2", ">2", "|2-", "|+2"])
def test_a_moved_block_with_an_indentation_indicator_keeps_its_white_space_lines(indicator) -> None:
    """`run: |2` and a first line indented past the 2: the block's indentation is the key's plus 2,
    not its first line's, so a line of white space past it (`pytest unit\\n \\n`) is content. It was
    dropped from the moved step, and the fold was refused as differing from the plan. Found by a
    fuzzer."""
    text = ("on: push\njobs:\n  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - name: Run unit\n"
            f"        run: {indicator}\n            pytest unit\n           \n  host:\n    runs-on: linux-mi300-gpu-1\n"
            "    strategy:\n      matrix:\n        part: [0, 1]\n    steps:\n      - name: Run tests\n"
            "        run: pytest host --total-partitions 2\n")
    run = parse_workflow(text, "w.yml").data["jobs"]["unit"]["steps"][0]["run"]
    assert run.startswith("  pytest unit") and " \n" in run + "\n"  # (YAML reads the line as content)
    edit = _fold_unit_into_host(text)
    assert parse_workflow(edit.after, "w.yml").data["jobs"]["host"]["steps"][1]["run"] == run


UNIT = "  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - name: Run unit\n"
HOST = ("  host:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n        part: [0, 1]\n    steps:\n"
        "      - name: Run tests\n")
MOVED = "      - name: Run unit\n        if: matrix.part == 0 && (success() || failure())\n        timeout-minutes: 30\n"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_run_block_that_ends_a_file_with_no_final_line_break_folds(newline) -> None:
    """The file ends in a `run: |` block with no line break after its last line: YAML reads
    `pytest unit`, no final newline. Moved (the suite's step) or followed by the moved step (the
    host's), it reads `pytest unit\\n`, as the block of any file that ends in a line break does; the
    fold was refused as differing from the plan. The plan is the file with its final line break.
    Found by a fuzzer (412 of 21,693 layouts)."""
    suite_last = "on: push\njobs:\n" + HOST + "        run: pytest host\n" + UNIT + "        run: |\n          pytest unit"
    edit = _fold_unit_into_host(suite_last.replace("\n", newline))
    assert edit.after == ("on: push\njobs:\n" + HOST + "        run: pytest host\n" + MOVED
                          + "        run: |\n          pytest unit\n").replace("\n", newline)
    host_last = "on: push\njobs:\n" + UNIT + "        run: pytest unit\n" + HOST + "        run: |\n          pytest host"
    edit = _fold_unit_into_host(host_last.replace("\n", newline))
    assert edit.after == ("on: push\njobs:\n" + HOST + "        run: |\n          pytest host\n" + MOVED
                          + "        run: pytest unit\n").replace("\n", newline)
    assert parse_workflow(edit.after, "w.yml").data["jobs"]["host"]["steps"][0]["run"] == "pytest host\n"


def test_a_file_with_no_final_line_break_that_a_patch_leaves_so_is_checked_as_it_is() -> None:
    """A patch that leaves the file's end alone is checked against the file as it is: a block
    scalar ending it still reads without a final newline, and must."""
    text = ("on: push\njobs:\n" + UNIT + "        run: pytest unit\n" + HOST + "        run: pytest host\n"
            "  last:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          echo done")
    edit = _fold_unit_into_host(text)
    assert edit.after.endswith("      - run: |\n          echo done")
    assert parse_workflow(edit.after, "w.yml").data["jobs"]["last"]["steps"][0]["run"] == "echo done"


@pytest.mark.parametrize("blanks", [1, 2])
@pytest.mark.parametrize("host_last", [True, False])
@pytest.mark.parametrize("suite_ends_file", [True, False])
def test_a_moved_keep_block_goes_where_no_blank_line_follows_it(blanks, host_last, suite_ends_file) -> None:
    """The moved step ends in a `|+` block, and a blank line follows the host's last test step: put
    before that blank line, the block took it as its text (`pytest unit\\n\\n`), and the fold was
    refused as differing from the plan. It goes after the blank lines, right before what follows.
    Found by a fuzzer (962 of 21,693 layouts held a keep block)."""
    gap = "\n" * blanks
    after_test = "" if host_last else "      - name: Upload logs\n        run: echo upload\n"
    host = HOST + "        run: pytest host\n" + gap + after_test
    unit = UNIT + "        run: |+\n          pytest unit\n        timeout-minutes: 9\n"
    tail = "" if suite_ends_file else gap + "  post:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n"
    text = "on: push\njobs:\n" + host + unit + tail
    edit = _fold_unit_into_host(text)
    moved = MOVED + "        run: |+\n          pytest unit\n"
    # the blank lines stay before the moved step; right after it comes the host's next step, the next job (the
    # blank lines before it went with the suite's job), or the file's end
    assert edit.after == ("on: push\njobs:\n" + HOST + "        run: pytest host\n" + gap + moved + after_test
                          + tail.lstrip("\n"))
    assert parse_workflow(edit.after, "w.yml").data["jobs"]["host"]["steps"][1]["run"] == "pytest unit\n"


@pytest.mark.parametrize("suite_gap,host_gap", [(3, 1), (1, 3), (3, 3), (2, 1)])
def test_steps_written_with_more_spaces_after_the_dash_fold(suite_gap, host_gap) -> None:
    """`-   name: x` (the keys aligned past the dash): the moved step's own dash was left in its
    first line, or the step was put in the host's list with its dash at the keys' column less two,
    not at its siblings' dashes; either way the patched file did not parse and the fold was
    refused. Found by a fuzzer."""
    suite, host = "-" + " " * suite_gap, "-" + " " * host_gap
    pad_s, pad_h = " " * (suite_gap + 1), " " * (host_gap + 1)
    text = ("on: push\njobs:\n  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            f"      {suite}name: Run unit\n      {pad_s}run: pytest unit\n"
            "  host:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n        part: [0, 1]\n    steps:\n"
            f"      {host}name: Run tests\n      {pad_h}run: pytest host --total-partitions 2\n")
    edit = _fold_unit_into_host(text)
    assert edit.after.endswith("      - name: Run unit\n        if: matrix.part == 0 && (success() || failure())\n"
                               "        timeout-minutes: 30\n        run: pytest unit\n")


@pytest.mark.parametrize("trailing", ["          # --slow disabled\n", "        # timeout-minutes: 30\n",
                                      "            \n"])
def test_lines_that_trail_the_hosts_last_step_stay_with_it(trailing) -> None:
    """A commented-out line (or white space) indented past the dash, after the host's last test step:
    the moved step went in before it, and where it was indented past the moved `run: |` block it
    became that block's text (the fold refused as differing from the plan). It stays with its step,
    and the moved step follows it. Found by a fuzzer."""
    host_step = f"      - name: Run tests\n        run: pytest host --total-partitions 2\n{trailing}"
    text = ("on: push\njobs:\n  unit:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - name: Run unit\n"
            "        run: |\n          pytest unit\n  host:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n"
            f"      matrix:\n        part: [0, 1]\n    steps:\n{host_step}")
    edit = _fold_unit_into_host(text)
    assert edit.after.endswith(host_step + "      - name: Run unit\n        if: matrix.part == 0 && (success() || "
                               "failure())\n        timeout-minutes: 30\n        run: |\n          pytest unit\n")


def test_a_lane_file_that_starts_with_a_bom_is_patched_as_without_it() -> None:
    """Editors on Windows save a BOM first; GitHub runs such a file. libyaml counts its marks
    after the BOM, so every splice landed a character early and the fold was refused as
    differing from the plan: no patch for the file. The BOM stays where it was."""
    from bot.edit import FoldEdit, LaneChange
    from bot.verify import apply_patch
    from bot.edit import unified_diff
    clean = workflow_text("amd")
    wf = parse_workflow("\ufeff" + clean, LANES["amd"][0])
    assert wf.jobs["jit-kernel-unit-test-amd"].key_node.start_mark.index == clean.index("  jit-kernel-unit-test-amd:") + 3
    change = LaneChange(wf.path, (FoldEdit("jit-kernel-unit-test-amd", "jit-kernel-benchmark-test-amd", None, None, 30, ()),))
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    assert edit.after == "\ufeff" + apply_change(parse_workflow(clean, wf.path), change, RepoConfig()).after
    assert apply_patch(unified_diff([edit]), {wf.path: wf.text}) == {wf.path: edit.after}


@pytest.mark.parametrize("odd", ["\u2028", "\r", "\x85"])
def test_a_blank_line_with_such_a_break_in_a_moved_step_moves_with_it(odd) -> None:
    """A blank line inside the moved step's `run: |` that such a break ends: moved, it keeps its
    break (it was dropped, and the fold refused as differing from the plan)."""
    from bot.edit import FoldEdit, LaneChange
    clean = workflow_text("amd")
    run = ("python3 run_suite.py --hw amd --suite jit-kernel-unit-test-amd ${{ needs.check-changes.outputs."
           "continue_on_error == 'true' && '--continue-on-error' || '' }}\n")
    text = clean.replace(run, run[:-1] + odd + odd + "          echo done\n", 1)
    assert text != clean
    wf = parse_workflow(text, LANES["amd"][0])
    change = LaneChange(wf.path, (FoldEdit("jit-kernel-unit-test-amd", "jit-kernel-benchmark-test-amd", None, None, 30, ()),))
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    assert edit.after.count(odd + odd + "          echo done\n") == 1


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"])
def test_aliases_that_repeat_values_past_the_limit_are_refused_whatever_ends_the_lines(newline: str) -> None:
    """Nine anchors of nine, nine deep: 387 million values read out. Each collection is read once (as PyYAML
    shares it) and counted, so the file is refused at once, with any of YAML's line breaks (a lone CR, NEL,
    U+2028 and U+2029 are breaks to YAML, not to a search for "\\n")."""
    lines = ["on: push", "env:", *(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9) if i else 'x'}]" for i in range(9)),
             "jobs:", "  a:", "    runs-on: ubuntu-latest", "    steps: [{run: make}]"]
    with pytest.raises(WorkflowError, match=r"^ci\.yml: its aliases repeat values past 200,000 in all"):
        parse_workflow(newline.join(lines) + newline, "ci.yml")
    shared = parse_workflow(newline.join(lines[:4] + lines[11:]) + newline, "ci.yml")  # a0..a1: 1 + 9 values
    assert shared.data["env"]["a1"] == [["x"]] * 9 and shared.data["env"]["a1"][0] is shared.data["env"]["a0"]
