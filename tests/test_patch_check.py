"""The check of a patched file parses again only the jobs the patch touched
(`bot.edit._patched_data`): it must give what parsing the whole file gives, or the same
refusal, on every real file and on whatever a splice may do to a job's text."""

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
    """One to three jobs' lines changed by MUTATIONS, as splices of the original text."""
    spans = wf.job_spans
    splices = []
    for job in sorted(rng.sample(sorted(spans), min(len(spans), rng.randint(1, 3))), key=lambda j: spans[j]):
        start, end, _ = spans[job]
        line_starts = [i for i in wf.line_starts if start <= i < end]
        at = rng.choice(line_starts)
        stop = wf.text.find("\n", at) + 1 or len(wf.text)
        splices.append((at, stop, rng.choice(MUTATIONS)(wf.text[at:stop])))
    splices.sort()
    return FileEdit(wf.path, wf.text, bot.edit._splice(wf.text, splices), (), tuple(splices))


@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(SGLANG)))
def test_parsing_the_touched_jobs_gives_what_parsing_the_whole_file_gives(path) -> None:
    try:
        wf = parse_workflow(path.read_text(encoding="utf-8"), str(path))
    except WorkflowError:
        pytest.skip("not a workflow foldbot reads")
    if wf.job_spans is None:
        assert path.name in {"_pr-test-check-changes.yml", "amd-aiter-scout.yml", "nightly-amd-mi355x-disagg.yml",
                             "pr-states.yml"}  # a `*` that may be an alias: those are checked whole
        return
    rng = random.Random(path.name)
    for _ in range(25):
        edit = _spliced(wf, rng)
        whole = _outcome(lambda: compose_workflow(edit.after, edit.path)[1])
        touched = _outcome(lambda: _patched_data(wf, edit))
        assert touched == whole
        if whole[0] == "ok":
            assert list(touched[1]["jobs"]) == list(whole[1]["jobs"])  # the jobs in the file's order


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
    assert wf.job_spans is None
    at = ALIASED.index("v1")
    edit = FileEdit("ci.yml", ALIASED, ALIASED.replace("v1", "v2"), (), ((at, at + 2, "v2"),))
    assert _patched_data(wf, edit)["jobs"]["b"]["env"] == {"IMAGE": "rocm/sgl-dev:v2"}


def test_an_alias_to_an_anchor_in_an_untouched_job_is_parsed_whole() -> None:
    """A patch that adds an alias to an anchor in a job it does not touch: read alone, the
    touched text does not parse; the whole file does, and that is what counts."""
    text = ALIASED.replace("    env: *common\n", "")
    wf = parse_workflow(text, "ci.yml")
    assert wf.job_spans is not None
    at = text.index("    steps:\n      - run: pytest b")
    edit = FileEdit("ci.yml", text, text[:at] + "    env: *common\n" + text[at:], (), ((at, at, "    env: *common\n"),))
    assert _patched_data(wf, edit)["jobs"]["b"]["env"] == {"IMAGE": "rocm/sgl-dev:v1"}


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
    parses the few jobs a fold touches, not the whole file again."""
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
    assert len(parsed) == 1 and parsed[0] < len(edit.after) / 4


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
