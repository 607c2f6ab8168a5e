"""The editor on shapes SGLang's files do not all have: exact patch text, every
reference form, and the checks that refuse a wrong result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.edit import (EditError, FileEdit, FoldEdit, LaneChange, ReshardEdit, VerificationError, apply_change,
                      patch_id, shard_condition, unified_diff, verify_edit)
from bot.workflow import parse_workflow

PATH = ".github/workflows/ci-amd.yml"

WORKFLOW = """\
name: CI (AMD)
on:
  workflow_dispatch:
    inputs:
      target_stage_select:
        type: choice
        options: ['', unit-amd, tests-amd]
      stage:
        type: choice
        options:
          - ''
          - unit-amd
          - tests-amd

jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: echo ok

  # ======================== GPU ========================
  # The unit suite: a few minutes of tests.
  unit-amd:
    needs: check
    runs-on: linux-mi300-gpu-1
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Install dependencies
        run: bash install.sh
      - name: Run unit tests
        if: github.event_name != 'schedule'
        timeout-minutes: 45
        run: |
          pytest unit/   # fast

  tests-amd:
    needs: check
    runs-on: ${{ matrix.runner }}
    strategy:
      matrix:
        runner: [linux-mi300-gpu-1]
        part:  # three shards of the suite
          - 0
          - 1
          - 2
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Install dependencies
        run: bash install.sh
      - name: Run suite
        timeout-minutes: 60
        run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 3
      - name: Upload logs
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: logs-${{ matrix.part }}
          path: logs/

  wait-for-gpu:
    needs: [check]
    runs-on: ubuntu-latest
    steps:
      - uses: ./.github/actions/wait-for-jobs
        with:
          jobs: '[{"prefix": "unit-amd", "expected_count": 1}, {"prefix": "tests-amd", "expected_count": 3}]'
      - uses: ./.github/actions/wait-for-jobs
        with:
          jobs: |
            [
              {"prefix": "tests-amd", "expected_count": 3},
              {"prefix": "unit-amd", "expected_count": 1}
            ]
      - uses: ./.github/actions/wait-for-jobs
        with:
          jobs: '[{"prefix": "", "expected_count": 6}]'

  report:
    needs: unit-amd
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ needs.unit-amd.result }}"

  finish:
    needs: [check, unit-amd, tests-amd, wait-for-gpu]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - run: echo done

  finish-block:
    needs:
      - unit-amd
      - wait-for-gpu
    runs-on: ubuntu-latest
    steps:
      - run: echo done"""  # no newline at the end of the file

FOLD = FoldEdit("unit-amd", "tests-amd", "part", 0, 15, ("moved here by foldbot",))
RESHARD = ReshardEdit("tests-amd", "part", 3, 2, "--auto-partition-size")
CHANGE = LaneChange(PATH, (FOLD,), (RESHARD,))

EXPECTED_PATCH = """\
diff --git a/.github/workflows/ci-amd.yml b/.github/workflows/ci-amd.yml
--- a/.github/workflows/ci-amd.yml
+++ b/.github/workflows/ci-amd.yml
@@ -4,12 +4,11 @@
     inputs:
       target_stage_select:
         type: choice
-        options: ['', unit-amd, tests-amd]
+        options: ['', tests-amd]
       stage:
         type: choice
         options:
           - ''
-          - unit-amd
           - tests-amd
 
 jobs:
@@ -19,31 +18,15 @@
       - run: echo ok
 
   # ======================== GPU ========================
-  # The unit suite: a few minutes of tests.
-  unit-amd:
-    needs: check
-    runs-on: linux-mi300-gpu-1
-    steps:
-      - name: Checkout code
-        uses: actions/checkout@v4
-      - name: Install dependencies
-        run: bash install.sh
-      - name: Run unit tests
-        if: github.event_name != 'schedule'
-        timeout-minutes: 45
-        run: |
-          pytest unit/   # fast
-
   tests-amd:
     needs: check
     runs-on: ${{ matrix.runner }}
     strategy:
       matrix:
         runner: [linux-mi300-gpu-1]
-        part:  # three shards of the suite
+        part:  # two shards of the suite
           - 0
           - 1
-          - 2
     steps:
       - name: Checkout code
         uses: actions/checkout@v4
@@ -51,7 +34,13 @@
         run: bash install.sh
       - name: Run suite
         timeout-minutes: 60
-        run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 3
+        run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 2
+      # moved here by foldbot
+      - name: Run unit tests
+        if: matrix.part == 0 && (success() || failure()) && (github.event_name != 'schedule')
+        timeout-minutes: 15
+        run: |
+          pytest unit/   # fast
       - name: Upload logs
         if: always()
         uses: actions/upload-artifact@v4
@@ -65,26 +54,25 @@
     steps:
       - uses: ./.github/actions/wait-for-jobs
         with:
-          jobs: '[{"prefix": "unit-amd", "expected_count": 1}, {"prefix": "tests-amd", "expected_count": 3}]'
+          jobs: '[{"prefix": "tests-amd", "expected_count": 2}]'
       - uses: ./.github/actions/wait-for-jobs
         with:
           jobs: |
             [
-              {"prefix": "tests-amd", "expected_count": 3},
-              {"prefix": "unit-amd", "expected_count": 1}
+              {"prefix": "tests-amd", "expected_count": 2}
             ]
       - uses: ./.github/actions/wait-for-jobs
         with:
-          jobs: '[{"prefix": "", "expected_count": 6}]'
+          jobs: '[{"prefix": "", "expected_count": 4}]'
 
   report:
-    needs: unit-amd
+    needs: tests-amd
     runs-on: ubuntu-latest
     steps:
       - run: echo "${{ needs.unit-amd.result }}"
 
   finish:
-    needs: [check, unit-amd, tests-amd, wait-for-gpu]
+    needs: [check, tests-amd, wait-for-gpu]
     if: always()
     runs-on: ubuntu-latest
     steps:
@@ -92,7 +80,7 @@
 
   finish-block:
     needs:
-      - unit-amd
+      - tests-amd
       - wait-for-gpu
     runs-on: ubuntu-latest
     steps:
"""


def _edit():
    wf = parse_workflow(WORKFLOW, PATH)
    edit = apply_change(wf, CHANGE, RepoConfig())
    return wf, edit


def test_exact_patch_text() -> None:
    _, edit = _edit()
    assert unified_diff([edit]) == EXPECTED_PATCH


def test_the_result_is_the_plan_and_git_applies_it(tmp_path: Path) -> None:
    wf, edit = _edit()
    verify_edit(wf, CHANGE, edit, RepoConfig())
    assert list(parse_workflow(edit.after, PATH).jobs) == ["check", "tests-amd", "wait-for-gpu", "report", "finish", "finish-block"]
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / PATH).write_text(WORKFLOW)
    (tmp_path / "p.diff").write_text(unified_diff([edit]))
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / PATH).read_text() == edit.after


def test_remaining_mentions_are_warned_about() -> None:
    _, edit = _edit()
    assert edit.warnings == (
        f'{PATH}:72: still mentions removed job `unit-amd`: - run: echo "${{{{ needs.unit-amd.result }}}}"',
    )


def test_comment_with_the_old_count_is_updated_on_a_flow_list() -> None:
    text = WORKFLOW.replace("""        part:  # three shards of the suite
          - 0
          - 1
          - 2""", "        part: [0, 1, 2]  # LPT over these 3 partitions (three shards)")
    wf = parse_workflow(text, PATH)
    edit = apply_change(wf, LaneChange(PATH, (), (RESHARD,)), RepoConfig())
    assert "        part: [0, 1]  # LPT over these 2 partitions (two shards)\n" in edit.after
    verify_edit(wf, LaneChange(PATH, (), (RESHARD,)), edit, RepoConfig())


@pytest.mark.parametrize("existing,expected", [
    (None, "matrix.part == 0 && (success() || failure())"),
    ("always()", "matrix.part == 0 && (success() || failure()) && (always())"),
    ("${{ github.event_name == 'push' }}", "matrix.part == 0 && (success() || failure()) && (github.event_name == 'push')"),
])
def test_shard_condition(existing: str | None, expected: str) -> None:
    assert shard_condition("part", 0, existing) == expected


def test_string_shard_values_are_quoted() -> None:
    assert shard_condition("shard", "a'b", None) == "matrix.shard == 'a''b' && (success() || failure())"


def test_a_change_naming_a_missing_job_is_refused() -> None:
    wf = parse_workflow(WORKFLOW, PATH)
    with pytest.raises(EditError, match="no job `nope`"):
        apply_change(wf, LaneChange(PATH, (FoldEdit("nope", "tests-amd", "part", 0, 10, ()),)), RepoConfig())
    with pytest.raises(EditError, match="has no 4-entry `part` list"):
        apply_change(wf, LaneChange(PATH, (), (ReshardEdit("tests-amd", "part", 4, 2, "--auto-partition-size"),)), RepoConfig())


def test_verification_catches_an_edit_that_did_more_than_planned() -> None:
    wf, edit = _edit()
    tampered = type(edit)(edit.path, edit.before, edit.after.replace("echo ok", "echo tampered"), edit.warnings)
    with pytest.raises(VerificationError, match="/jobs/check/steps\\[0\\]/run: 'echo ok' expected, 'echo tampered' found"):
        verify_edit(wf, CHANGE, tampered, RepoConfig())


def test_verification_catches_a_dangling_need() -> None:
    wf, edit = _edit()
    tampered = type(edit)(edit.path, edit.before, edit.after.replace("needs: [check]", "needs: [chek]"), ())
    with pytest.raises(VerificationError, match=r"differs from the plan at /jobs/wait-for-gpu/needs\[0\]: 'check' expected, 'chek' found"):
        verify_edit(wf, CHANGE, tampered, RepoConfig())


@pytest.mark.parametrize("broken,message", [
    ("needs: [check, ghost]", "`wait-for-gpu` needs `ghost`, which does not exist"),
    ("needs: report", "the jobs need each other in a cycle: `check` → `report` → `tests-amd` → `check`"),
])
def test_no_patch_for_a_file_whose_job_graph_is_broken(broken: str, message: str) -> None:
    """The plan is carried out faithfully, but a file GitHub would refuse gets no patch."""
    text = WORKFLOW.replace("needs: [check]", broken) if "ghost" in broken else \
        WORKFLOW.replace("  check:\n", f"  check:\n    {broken}\n", 1)
    assert text != WORKFLOW
    wf = parse_workflow(text, PATH)
    edit = apply_change(wf, CHANGE, RepoConfig())
    with pytest.raises(VerificationError, match=message):
        verify_edit(wf, CHANGE, edit, RepoConfig())


def test_patch_id_is_a_short_hash_of_the_text() -> None:
    assert patch_id("x") == patch_id("x") != patch_id("y")
    assert len(patch_id("x")) == 10


def test_an_edited_last_line_without_a_newline() -> None:
    """The hunk that reaches the end of a file without a final newline says so on
    both sides, as `git diff` does, and `git apply` takes it."""
    text = ("on: push\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n"
            "        part: [0, 1, 2]\n    steps:\n"
            "      - run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 3")
    change = LaneChange(PATH, (), (ReshardEdit("t", "part", 3, 2, "--auto-partition-size"),))
    wf = parse_workflow(text, PATH)
    edit = apply_change(wf, change, RepoConfig())
    verify_edit(wf, change, edit, RepoConfig())
    from bot.edit import _diff_lines, _splice_opcodes
    assert _splice_opcodes(edit, _diff_lines(edit.before), _diff_lines(edit.after)) is not None  # no difflib
    assert unified_diff([edit]) == f"""\
diff --git a/{PATH} b/{PATH}
--- a/{PATH}
+++ b/{PATH}
@@ -4,6 +4,6 @@
     runs-on: linux-mi300-gpu-1
     strategy:
       matrix:
-        part: [0, 1, 2]
+        part: [0, 1]
     steps:
-      - run: python3 run_suite.py --auto-partition-id ${{{{ matrix.part }}}} --auto-partition-size 3
\\ No newline at end of file
+      - run: python3 run_suite.py --auto-partition-id ${{{{ matrix.part }}}} --auto-partition-size 2
\\ No newline at end of file
"""


def test_the_check_refuses_a_patch_that_leaves_a_job_reading_needs_it_does_not_have() -> None:
    """What actionlint says ("property is not defined in object type"), said without it: a
    job left reading `needs.<id>` of a job it no longer needs gets nothing there (a gate that
    never opens). One that read it before the patch is not the patch's doing."""
    from bot.verify import PatchCheckError, check_patch

    before = ("on: push\njobs:\n  unit:\n    runs-on: x\n    outputs:\n      ok: ${{ steps.t.outputs.ok }}\n"
              "    steps:\n      - id: t\n        run: echo ok=1 >> $GITHUB_OUTPUT\n"
              "  publish:\n    needs: [unit]\n    if: needs.unit.outputs.ok == '1'\n    runs-on: x\n"
              "    steps:\n      - run: echo ${{ needs['unit'].result }}\n")
    after = before.replace("needs: [unit]", "needs: [build]").replace(
        "  publish:", "  build:\n    runs-on: x\n    steps:\n      - run: make\n  publish:")
    edit = FileEdit(".github/workflows/ci.yml", before, after)
    with pytest.raises(PatchCheckError) as refused:
        check_patch(unified_diff([edit]), [edit], {edit.path: before})
    assert str(refused.value) == (".github/workflows/ci.yml: the patched file has job `publish` read `needs.unit`, a "
                                  "job it does not need, which reads as empty")
    # text that only looks like a read (not in an expression) is none
    looks = FileEdit(edit.path, before, before.replace("run: make", "run: pip install -r needs.txt; echo it needs. Then")
                     .replace("run: echo ok=1", "run: pip install -r ci/needs.txt && echo ok=1"))
    assert looks.after != before
    assert check_patch(unified_diff([looks]), [looks], {edit.path: before}).git_apply
    # the same read, already there before the patch: not this patch's problem
    broken = before.replace("needs: [unit]", "needs: []")
    fine = FileEdit(edit.path, broken, broken.replace("run: echo ok", "run: echo fine"))
    assert check_patch(unified_diff([fine]), [fine], {edit.path: broken}).git_apply


def test_a_lane_file_written_with_crlf_line_ends_keeps_them_and_its_patch_applies() -> None:
    """A workflow saved on Windows: the moved steps, foldbot's comment and the new `if:` and
    `timeout-minutes:` lines end in CRLF like the rest, `git apply` gives exactly the verified
    text, and `apply_patch` (what an approval commits) changes only the lines the patch changes."""
    from bot.analysis import analyze
    from bot.verify import apply_patch, check_patch
    from tests.test_plan import PATH as LANE, runs, workflow

    text = workflow().replace("\n", "\r\n")
    analysis = analyze({LANE: text}, runs(workflow()), RepoConfig())
    assert [(f.job, r.job) for f, r in zip(analysis.plan.folds, analysis.plan.reshards)] == [
        ("unit-amd-rocm700", "big-amd-rocm700")]
    after = analysis.edits[0].after
    assert "\n" not in after.replace("\r\n", "")  # no line ends in a bare LF
    assert "        if: matrix.part == 0 && (success() || failure())\r\n" in after
    checks = check_patch(analysis.patch, analysis.edits, {LANE: text})
    assert checks.git_apply and checks.schema
    assert apply_patch(analysis.patch, {LANE: text}) == {LANE: after}


def test_words_and_paths_that_spell_a_removed_jobs_id_are_not_warned_about() -> None:
    """A suite named `tests` folded into `ops`: the host's `name: Run op tests`, its script's
    `pytest tests/ops` and a comment are words; an `if:` line of a block scalar and an
    expression still refer to the job and are warned about."""
    from tests.test_fold_standalone import HEAD, job

    text = (HEAD + job("tests", "Run kernel tests", "pytest kernels")
            + job("ops", "Run op tests", "pytest tests/ops  # the tests of ops")
            + "  report:\n    needs: [ops]\n    if: |\n      always() &&\n      needs.tests.result == 'failure'\n"
              "    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ needs.tests.result }} tests\n")
    wf = parse_workflow(text, PATH)
    change = LaneChange(PATH, folds=(FoldEdit("tests", "ops", None, None, 15, ("moved: tests of a job",)),))
    edit = apply_change(wf, change, RepoConfig())
    after = edit.after.splitlines()
    assert [w.split(": still mentions")[0] for w in edit.warnings] == [
        f"{PATH}:{after.index(line) + 1}" for line in after
        if line.strip() in ("needs.tests.result == 'failure'", "- run: echo ${{ needs.tests.result }} tests")]
    assert len(edit.warnings) == 2


def test_a_patch_that_leaves_a_file_that_does_not_parse_is_refused_as_such() -> None:
    """A patch made another way than foldbot's splicer (checked before it is committed: the
    Action's `--patch-out`, an approval's stored patch) whose result is no YAML: a clear refusal,
    not a parser's exception."""
    from bot.verify import PatchCheckError, check_patch
    after = WORKFLOW + "  broken: [\n"
    edit = FileEdit(PATH, WORKFLOW, after)
    with pytest.raises(PatchCheckError, match=r"^the patched file does not parse: \.github/workflows/ci-amd\.yml: not "
                                              r"valid YAML at line \d+, column \d+"):
        check_patch(unified_diff([edit]), [edit], {PATH: WORKFLOW})


def test_the_expected_data_leaves_the_original_as_it_was() -> None:
    """`expected_data` copies only what a change changes (`on`, a job on its first change): the
    parsed original, which every other check of the same analysis reads, stays as parsed."""
    import copy

    from bot.analysis import analyze
    from bot.edit import expected_data
    from tests.sglang_current import LANES, history, workflow_text
    files = {LANES[lane][0]: workflow_text(lane) for lane in LANES}
    bundles, _ = history("rocm720")
    analysis = analyze(files, bundles, RepoConfig())
    assert analysis.plan.folds and analysis.plan.reshards
    for result in analysis.lanes:
        before = copy.deepcopy(result.lane.workflow.data)
        expected = expected_data(result.lane.workflow, result.change, RepoConfig())
        assert result.lane.workflow.data == before != expected
