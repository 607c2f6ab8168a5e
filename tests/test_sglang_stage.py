"""foldbot on SGLang's lanes as they are moving: the 1-GPU suite's 14 shards run by the reusable
`_pr-test-stage-amd.yml` (sgl-project/sglang@ccd8584b), each lane passing the count as
`partitions: '{"size":14,"arr":[0,...,13]}'` (tests/sglang_current.py: `staged_text`, `STAGE_TEXT`).

What a maintainer relies on: the biggest suggestion SGLang gets today (14 -> 7 shards, from the per-file
logs) survives the move. The caller is resharded by what it passes, to the count and the prediction the
lane written as a matrix gets from the same runs; the patch rewrites `partitions` in both lanes and the
`wait-for-stage-b` count follows; nothing is changed in the called file, which is read, never edited.
Without that file, or with a count foldbot cannot change, it says what to change by hand.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from bot.analysis import Analysis, analyze
from bot.config import RepoConfig
from bot.logs import parse_log
from bot.report import to_json, to_markdown
from bot.workflow import timeout_minutes
from bot.verify import check_patch
from tests.paths import AMD, ROCM720
from tests.sglang_current import LANES, STAGE_PATH, STAGE_TEXT, history, staged_text, workflow_text

SMALL = "stage-b-test-1-gpu-small-amd"
STAGED = '{"size":7,"arr":[0,1,2,3,4,5,6]}'


def _suffix(lane: str) -> str:
    return "-rocm720" if lane == "rocm720" else ""


def _staged_files() -> dict[str, str]:
    return {LANES[lane][0]: staged_text(lane) for lane in LANES}


@pytest.fixture(scope="module", params=["rocm720", "amd"])
def lane(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def staged(lane: str) -> Analysis:
    bundles, logs = history(lane, staged=True)
    return analyze(_staged_files(), bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()},
                   called={STAGE_PATH: STAGE_TEXT})


@pytest.fixture(scope="module")
def matrix(lane: str) -> Analysis:
    bundles, logs = history(lane)
    return analyze({LANES[name][0]: workflow_text(name) for name in LANES}, bundles, RepoConfig(),
                   {k: parse_log(v) for k, v in logs.items()})


def test_the_staged_history_is_the_matrix_history_under_the_called_jobs_names(lane: str) -> None:
    """The generator's own check: the same times, only the 1-GPU shards named as GitHub names a called job."""
    staged_runs, staged_logs = history(lane, staged=True)
    plain_runs, plain_logs = history(lane)
    job = SMALL + _suffix(lane)
    for staged_run, plain_run in zip(staged_runs, plain_runs):
        named = [(j["name"], j["started_at"], j["completed_at"]) for j in staged_run["jobs"] if j["name"].startswith(job + " ")]
        plain = [(j["name"], j["started_at"], j["completed_at"]) for j in plain_run["jobs"] if j["name"].startswith(job + " ")]
        assert [n for n, *_ in named] == [f"{job} / {SMALL} (linux-mi300-1gpu-sglang, {p})" for p in range(14)]
        assert [t for _, *t in named] == [t for _, *t in plain]
    assert list(staged_logs.values()) == list(plain_logs.values())


def test_the_caller_is_resharded_by_the_count_it_passes_as_the_matrix_was(staged: Analysis, matrix: Analysis,
                                                                         lane: str) -> None:
    job = SMALL + _suffix(lane)
    (small,) = [r for r in staged.plan.reshards if r.job == job]
    (alike,) = [r for r in matrix.plan.reshards if r.job == job]
    assert (small.from_count, small.to_count, small.flag, small.estimate, small.log_runs, small.passed_as,
            small.callee, small.shard_key) == \
        (14, 7, "--auto-partition-size", "per-file logs", 4, "partitions", STAGE_PATH, "partition")
    # the same runs, read through the called workflow: the same prediction, limit and setup, to the second
    assert (small.predicted_longest_p90_s, small.limit_s, small.timeout_minutes, small.setup_median_s, small.samples) == \
        (alike.predicted_longest_p90_s, alike.limit_s, alike.timeout_minutes, alike.setup_median_s, alike.samples)
    # the max-parallel the caller passes is the called matrix's (rocm720: 4, in 4 waves -> 2; amd: all 14 at once)
    assert (small.max_parallel, small.waves_before, small.waves_after) == ((4, 4, 2) if lane == "rocm720" else (14, 1, 1))


def test_the_patch_rewrites_partitions_in_both_lanes_and_the_wait_count_follows(staged: Analysis) -> None:
    files = _staged_files()
    for lane, path in (("rocm720", ROCM720), ("amd", AMD)):
        edit = next(e for e in staged.edits if e.path == path)
        before, after = yaml.safe_load(edit.before)["jobs"], yaml.safe_load(edit.after)["jobs"]
        job = SMALL + _suffix(lane)
        assert after[job]["with"] == {**before[job]["with"], "partitions": STAGED}
        assert {k: v for k, v in after[job].items() if k != "with"} == {k: v for k, v in before[job].items() if k != "with"}
        assert f"""      partitions: '{STAGED}'\n""" in edit.after
        gate = after[f"wait-for-stage-b-amd{_suffix(lane)}"]
        entries = json.loads(next(s["with"]["jobs"] for s in gate["steps"] if "with" in s and "jobs" in s["with"]))
        assert {e["prefix"]: e["expected_count"] for e in entries}[job] == 7
    assert STAGE_PATH not in {e.path for e in staged.edits}  # read for its jobs, never edited
    checks = check_patch(staged.patch, staged.edits, files)  # raises on a patch that does not apply or validate
    assert (checks.git_apply, checks.schema) == (True, True)


def test_the_report_says_where_the_count_is_changed(staged: Analysis, lane: str) -> None:
    job = SMALL + _suffix(lane)
    text = to_markdown(staged)
    small = next(r for r in staged.plan.reshards if r.job == job)
    assert (f"- **Reshard** `{job}` from 14 to 7 shards (its `with: partitions:`, the shard count it passes "
            f"`{STAGE_PATH}`): the longest shard is predicted at {small.predicted_longest_p90_s / 60:.0f} min at p90 "
            "over 4 runs, within 45 min (60% of the 75 min step timeout). Estimate from per-file logs.") in text
    assert (f"`{job}` runs 7 shards instead of 14 (its `with: partitions:` passes 7, and any `wait-for-*` count of "
            "its jobs)") in text
    reasons = [f.reason for f in staged.plan.findings if f.job == job]
    assert reasons == [f"its AMD jobs run in the reusable workflow `./{STAGE_PATH}`, whose matrices and steps foldbot "
                       "does not edit; how many shards they run is this job's `with: partitions:` (14 shards), which "
                       "foldbot sets as it would a matrix's count (the reshard, or why there is none, is in this "
                       "report); to fold them, change the file that holds them by hand"]
    (entry,) = [s for s in to_json(staged)["suggestions"] if s["kind"] == "reshard" and s["job"] == job]
    assert (entry["from"], entry["to"], entry["passed_as"], entry["callee"]) == (14, 7, "partitions", STAGE_PATH)


def test_without_the_called_file_the_count_is_left_to_change_by_hand(lane: str) -> None:
    bundles, logs = history(lane, staged=True)
    analysis = analyze(_staged_files(), bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
    job = SMALL + _suffix(lane)
    assert job not in {r.job for r in analysis.plan.reshards}
    (reason,) = [f.reason for f in analysis.plan.findings if f.job == job]
    assert "how many shards they run is this job's `with: partitions:` (14 shards), which foldbot does not set " \
           f"either: `{STAGE_PATH}` was not read, no workflow of this repository at this commit or one that does " \
           "not parse; to reshard them, change it by hand" in reason


def _edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("change, said", [
    # the count handed to no flag: `auto_partition: false` runs the whole suite on every shard
    (lambda t: _edited(t, "      timeout_per_file: 2400\n", "      timeout_per_file: 2400\n      auto_partition: false\n"),
     f"which foldbot does not set either: `{STAGE_PATH}` hands the count to no test command with what this job "
     "passes (its switch is off): each shard runs the whole suite, so fewer shards would drop repeats, not spread it"),
    # shard ids that do not start at 0: not the list foldbot writes
    (lambda t: _edited(t, '\'{"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}\'',
                       '\'{"size":14,"arr":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}\''),
     "which foldbot does not set either: its `arr` is not the shard ids 0 to 13, the list foldbot writes; to "
     "reshard them"),
    # a step timeout known only when a run starts: how many shards fit is not said
    (lambda t: _edited(t, "      run_timeout_minutes: ${{ (inputs.runner_arch || 'mi300') == 'mi300' && 75 || 60 }}\n",
                       "      run_timeout_minutes: ${{ needs.check-changes.outputs.small_timeout }}\n"),
     f"its 14 shards (`with: partitions:`) run in `{STAGE_PATH}`, whose `Run test` step's `timeout-minutes` "
     "(`${{ inputs.run_timeout_minutes }}`, with what this job passes) is not known before it runs: how many shards "
     "fit is not said"),
])
def test_a_count_foldbot_cannot_change_or_weigh_is_said_not_patched(change: Any, said: str) -> None:
    files = {LANES[name][0]: change(staged_text(name)) if name == "amd" else staged_text(name) for name in LANES}
    bundles, logs = history("amd", staged=True)
    analysis = analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()},
                       called={STAGE_PATH: STAGE_TEXT})
    assert SMALL not in {r.job for r in analysis.plan.reshards}
    assert "partitions" not in analysis.patch
    assert any(said in f.reason for f in analysis.plan.findings if f.job == SMALL)


def test_a_lane_passing_another_count_is_not_resharded_and_the_report_says_why() -> None:
    """The amd lane measured, rocm720 passing 12 shards: the count measured on 14 is not carried there."""
    files = _staged_files()
    files[ROCM720] = _edited(files[ROCM720], '\'{"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}\'',
                             '\'{"size":12,"arr":[0,1,2,3,4,5,6,7,8,9,10,11]}\'')
    bundles, logs = history("amd", staged=True)
    analysis = analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()},
                       called={STAGE_PATH: STAGE_TEXT})
    assert f"{ROCM720}: `{SMALL}-rocm720` does not pass 14 shards as `partitions` to `{STAGE_PATH}`, which hands " \
           "them to `--auto-partition-size`; not resharded there" in analysis.warnings
    kept = next(e for e in analysis.edits if e.path == ROCM720).after  # (the fold of the jit suite is carried)
    assert """      partitions: '{"size":12,"arr":[0,1,2,3,4,5,6,7,8,9,10,11]}'\n""" in kept and STAGED not in kept
    assert f"partitions: '{STAGED}'" in next(e for e in analysis.edits if e.path == AMD).after


def test_a_count_written_in_double_quotes_stays_in_them() -> None:
    files = {path: _edited(text, '\'{"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}\'',
                           '"{\\"size\\": 14, \\"arr\\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}"')
             for path, text in _staged_files().items()}
    bundles, logs = history("amd", staged=True)
    analysis = analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()},
                       called={STAGE_PATH: STAGE_TEXT})
    for path in (AMD, ROCM720):
        after = next(e for e in analysis.edits if e.path == path).after
        assert '      partitions: "{\\"size\\": 7, \\"arr\\": [0, 1, 2, 3, 4, 5, 6]}"\n' in after
    assert check_patch(analysis.patch, analysis.edits, files).schema


def _analysed(amd: Any = lambda t: t, rocm720: Any = lambda t: t, stage: Any = lambda t: t) -> Analysis:
    """The amd lane's staged runs, analysed with its lane files and the called file changed as given."""
    bundles, logs = history("amd", staged=True)
    files = {AMD: amd(staged_text("amd")), ROCM720: rocm720(staged_text("rocm720"))}
    return analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()},
                   called={STAGE_PATH: stage(STAGE_TEXT)})


def _replacing(old: str, new: str) -> Any:
    return lambda text: _edited(text, old, new)


QUOTED = '\'{"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}\''


@pytest.mark.parametrize("stage", [
    # the input that switches the count on defaults to false, and the caller passes nothing
    _replacing("auto_partition: {type: boolean, default: true}", "auto_partition: {type: boolean, default: false}"),
    # a switch the other way round: the count is handed on only when the input is false (it defaults to true)
    lambda t: _edited(_edited(t, "inputs.auto_partition && format(", "!inputs.whole_suite && format("),
                      "      auto_partition: {type: boolean, default: true}\n",
                      "      whole_suite: {type: boolean, default: true}\n"),
])
def test_a_count_the_called_file_hands_to_no_flag_is_not_changed(stage: Any) -> None:
    """review110 f02: only a literal `auto_partition: false` the caller passed stopped the reshard; an input's default,
    an expression, or a switch of the other sense made a patch that halves the jobs each running the whole suite."""
    analysis = _analysed(stage=stage)
    assert SMALL not in {r.job for r in analysis.plan.reshards} and "partitions" not in analysis.patch
    passed = _analysed(amd=_replacing("      timeout_per_file: 2400\n",
                                      "      timeout_per_file: 2400\n      auto_partition: ${{ inputs.whole }}\n"))
    assert SMALL not in {r.job for r in passed.plan.reshards}


def test_a_count_written_as_a_block_is_changed_in_it_and_the_lane_keeps_its_other_changes() -> None:
    """review110 f01: `partitions: |` got the reshard offered, then no patch for the whole lane (its fold too)."""
    block = '|\n        {"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}'
    analysis = _analysed(amd=_replacing(QUOTED, block))
    after = next(e for e in analysis.edits if e.path == AMD).after
    assert '      partitions: |\n        {"size":7,"arr":[0,1,2,3,4,5,6]}\n' in after
    assert "jit-kernel-unit-test-amd:" not in after  # (the fold of the jit suite, in the same file)
    assert not [w for w in analysis.warnings if "no patch" in w]


def test_the_rest_of_the_json_is_kept_to_the_character() -> None:
    """review110 f08: the JSON was written anew (`1.50` as `1.5`, `1e400` as `Infinity`, `ë` as `\\u00eb`, one spacing
    for all): only `size`'s number and `arr`'s ids change."""
    json_text = '{ "note": "Zoë, 1.50", "size" : 14, "arr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], "cap":1e400 }'
    analysis = _analysed(amd=_replacing(QUOTED, f"'{json_text}'"), rocm720=_replacing(QUOTED, f"'{json_text}'"))
    after = next(e for e in analysis.edits if e.path == AMD).after
    assert """      partitions: '{ "note": "Zoë, 1.50", "size" : 7, "arr": [0, 1, 2, 3, 4, 5, 6], "cap":1e400 }'\n""" in after


def test_a_caller_of_another_reusable_workflow_is_not_resharded_alike() -> None:
    """review110 f04: the rocm720 caller calling another file (other runners, another command) was rewritten too."""
    other = ".github/workflows/_pr-test-stage-amd-rocm720.yml"
    analysis = _analysed(rocm720=_replacing(f"uses: ./{STAGE_PATH}", f"uses: ./{other}"))
    assert f"{ROCM720}: `{SMALL}-rocm720` does not pass 14 shards as `partitions` to `{STAGE_PATH}`, which hands " \
           "them to `--auto-partition-size`; not resharded there" in analysis.warnings
    assert STAGED not in next(e for e in analysis.edits if e.path == ROCM720).after


def test_the_called_jobs_timeout_less_its_setup_bounds_the_tests_when_it_is_the_sooner() -> None:
    """review110 f05, review111 f03, f04: the called job's `timeout-minutes` holds setup and tests alike; the shards'
    setup (159 min at p90 on these runs) leaves 220 - 159 = 61 min for the tests, under the 75-min step: 8 shards, not
    7, and the report says whose limit it is (it had said "the 75 min step timeout")."""
    analysis = _analysed(stage=_replacing("    timeout-minutes: 240\n", "    timeout-minutes: 220\n"))
    (small,) = [r for r in analysis.plan.reshards if r.job == SMALL]
    setup = analysis.stats[SMALL].setup.p90
    assert 158 * 60 < setup < 160 * 60
    assert (small.to_count, small.timeout_minutes, small.limit_s) == (8, 220 - setup / 60, 0.6 * (220 * 60 - setup))
    text = to_markdown(analysis)
    assert (f"within {small.limit_s / 60:.0f} min (60% of 61 min: `run`'s 220-min job timeout less its setup and other "
            "steps (159 min "
            "at p90)). Estimate from per-file logs.") in text.replace("\\", "")
    (entry,) = [s for s in to_json(analysis)["suggestions"] if s["kind"] == "reshard" and s["job"] == SMALL]
    assert (entry["step_timeout_minutes"], entry["tests_minutes"]) == (75, round(small.timeout_minutes, 1))
    assert entry["timeout_note"] == "`run`'s 220-min job timeout less its setup and other steps (159 min at p90)"
    # where the job's timeout leaves less than today's shards take, no fewer are offered, and the reason says whose
    tight = _analysed(stage=_replacing("    timeout-minutes: 240\n", "    timeout-minutes: 210\n"))
    assert SMALL not in {r.job for r in tight.plan.reshards}
    assert any("= 60% of 51 (`run`'s 210-min job timeout less its setup and other steps (159 min at p90)); per-file logs" in f.reason
               for f in tight.plan.findings if f.job == SMALL)
    unknown = _analysed(stage=_replacing("    timeout-minutes: 240\n", "    timeout-minutes: ${{ inputs.job_minutes }}\n"))
    assert SMALL not in {r.job for r in unknown.plan.reshards}
    assert f"its 14 shards (`with: partitions:`) run in `{STAGE_PATH}`, whose `run` job's `timeout-minutes` " \
           "(`${{ inputs.job_minutes }}`, with what this job passes) is not known before it runs: how many shards " \
           "fit is not said" in [f.reason for f in unknown.plan.findings if f.job == SMALL]


def test_no_log_is_read_for_a_count_that_cannot_be_weighed() -> None:
    """review110 f07: a caller whose shards' timeout is not known was a reshard candidate: its 56 logs were read."""
    from bot.joblogs import wanted

    analysis = _analysed(amd=_replacing(
        "      run_timeout_minutes: ${{ (inputs.runner_arch || 'mi300') == 'mi300' && 75 || 60 }}\n",
        "      run_timeout_minutes: ${{ needs.check-changes.outputs.small_timeout }}\n"))
    assert SMALL not in analysis.plan.reshard_candidates and SMALL not in wanted(analysis)
    assert [len(runs) for runs in wanted(_analysed()).values()][:1] and len(wanted(_analysed())[SMALL]) == 4


def test_a_count_in_double_quotes_has_its_called_file_read() -> None:
    """review110 f03: the App looked for `"arr"` in the lane's text before reading the called file; written in double
    quotes it is `\\"arr\\"`, so the file was not read and no reshard was offered."""
    from bot.repo import shard_callee_paths

    double = '"{\\"size\\":14,\\"arr\\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}"'
    assert shard_callee_paths({AMD: _edited(staged_text("amd"), QUOTED, double)}) == {STAGE_PATH}
    assert shard_callee_paths({AMD: staged_text("amd")}) == {STAGE_PATH}
    assert shard_callee_paths({AMD: workflow_text("amd")}) == set()


ARR = "[0,1,2,3,4,5,6,7,8,9,10,11,12,13]"


@pytest.mark.parametrize("written", [
    '"{\\u0022size\\u0022:14,\\u0022arr\\u0022:' + ARR + '}"',  # YAML's escapes for the quotes
    '"{\\"size\\":14,\\"ar\\\n        r\\":' + ARR + '}"',  # a key broken over two lines
    '\'{"size":14,"arr":' + ARR + ',"opts":{"size":2}}\'',  # a `size` of another object
    '\'{"size":14,"arr":' + ARR + ',"skip":{"arr":[0,1]}}\'',
    '|  # e.g. {"size":2,"arr":[0,1]}\n        {"size":14,"arr":' + ARR + '}',  # a header comment naming one
])
def test_a_count_written_so_that_it_cannot_be_changed_in_place_is_left_by_hand_and_the_lane_keeps_its_patch(
        written: str) -> None:
    """review111 f01: the reshard was offered, the in-place edit refused, and the lane's whole patch (its fold of
    the jit suite too) dropped with it."""
    analysis = _analysed(amd=_replacing(QUOTED, written))
    assert SMALL not in {r.job for r in analysis.plan.reshards}
    assert "jit-kernel-unit-test-amd:" not in next(e for e in analysis.edits if e.path == AMD).after
    assert not [w for w in analysis.warnings if "no patch" in w]
    assert any("which foldbot does not set either: its JSON is written so that the patch cannot change `size` and "
               "`arr` where they are written; to reshard them, change it by hand" in f.reason
               for f in analysis.plan.findings if f.job == SMALL)


FORMAT = ("format('--auto-partition-id {0} --auto-partition-size {1}', matrix.partition, "
          "fromJson(inputs.partitions).size)")
SGLANG_ARGS = f"PARTITION_ARGS: ${{{{ inputs.auto_partition && {FORMAT} || '' }}}}"
WHOLE = "      whole_suite: {type: boolean, default: false}\n"


def _args(expression: str, inputs: str = "") -> Any:
    """The called file with its `PARTITION_ARGS` written as given (and inputs declared beside `auto_partition`)."""
    return lambda text: _edited(_edited(text, SGLANG_ARGS, f"PARTITION_ARGS: {expression}"),
                                "      auto_partition: {type: boolean, default: true}\n",
                                "      auto_partition: {type: boolean, default: true}\n" + inputs)


@pytest.mark.parametrize("stage, passes", [
    (lambda t: t, "auto_partition: false"),
    (_args(f"${{{{ inputs.whole_suite == false && {FORMAT} || '' }}}}", WHOLE), "whole_suite: true"),
    (_args(f"${{{{ !(inputs.whole_suite) && {FORMAT} || '' }}}}", WHOLE), "whole_suite: true"),
    (_args(f"${{{{ inputs['auto_partition'] && {FORMAT} || '' }}}}"), "auto_partition: false"),
    (_args(f"${{{{ INPUTS.auto_partition && {FORMAT} || '' }}}}"), "auto_partition: false"),
    # the switch in the command's own expression, around the variable that holds the count
    (lambda t: _edited(_args(f"${{{{ {FORMAT} }}}}")(t), "$PARTITION_ARGS \\",
                       "${{ inputs.auto_partition && '$PARTITION_ARGS' || '' }} \\"), "auto_partition: false"),
])
def test_a_count_switched_off_however_the_switch_is_written_is_not_changed(stage: Any, passes: str) -> None:
    """review111 f02: a switch written otherwise than SGLang's `inputs.auto_partition && format(...)` was read as on."""
    analysis = _analysed(amd=_replacing("      timeout_per_file: 2400\n", f"      timeout_per_file: 2400\n      {passes}\n"),
                         stage=stage)
    assert SMALL not in {r.job for r in analysis.plan.reshards} and STAGED not in analysis.patch


@pytest.mark.parametrize("stage", [
    _args(f"${{{{ INPUTS.auto_partition && {FORMAT} || '' }}}}"),  # (expressions ignore case)
    _args("${{ inputs.auto_partition && format('--auto-partition-id {0} --auto-partition-size {1} --timeout-per-file "
          "{2}', matrix.partition, fromJson(inputs.partitions).size, inputs.timeout_per_file) || '' }}"),
])
def test_a_count_switched_on_is_changed_beside_other_inputs(stage: Any) -> None:
    """review111 f02: an input handed to the command beside the count (`inputs.timeout_per_file`) is no switch."""
    (small,) = [r for r in _analysed(stage=stage).plan.reshards if r.job == SMALL]
    assert (small.from_count, small.to_count) == (14, 7)


def test_a_required_check_of_a_shard_the_count_drops_is_named_at_approval(staged: Analysis, lane: str) -> None:
    """review115 f03: a caller with no matrix gave every `<caller> / ...` check before and after the patch, so the
    approval said no required check goes, though shards 7-13 do."""
    from bot.approve import required_checks_gone, required_note

    job = SMALL + _suffix(lane)
    before = _staged_files()
    after = {**before, **{e.path: e.after for e in staged.edits}}
    name = f"{job} / {SMALL} (linux-mi300-1gpu-sglang, %d)"
    gone = required_checks_gone(before, after, {name % 13: ["branch protection"], name % 6: ["branch protection"],
                                                name % 7: ["ruleset 3"]})
    assert [(g.check, g.job) for g in gone] == [(name % 13, job), (name % 7, job)]
    assert (f"- `{name % 13}` (branch protection): a shard the patch trims from the shard list of `{job}`: take it out "
            "of the rule") in required_note("main", gone, [], 2)


@pytest.mark.parametrize("passes", ["max_parallel: 1.0e+400", "max_parallel: 'NaN'", "max_parallel: " + "9" * 400,
                                    "run_timeout_minutes: " + "7" * 400, "run_timeout_minutes: .inf"])
def test_a_number_past_what_a_float_holds_is_no_timeout_and_no_crash(passes: str) -> None:
    """review115 f04: `int(inf)`, `int(nan)` and `float(10**400)` raised in the analysis: no report, on every run."""
    key = passes.split(":")[0]
    analysis = _analysed(amd=lambda t: re.sub(rf"(?m)^      {key}: .*\n", f"      {passes}\n", t, count=1))
    small = [r for r in analysis.plan.reshards if r.job == SMALL]
    if key == "max_parallel":  # (no number it can be: the shards' waves are not known, the count still is)
        assert [(r.to_count, r.max_parallel) for r in small] == [(7, None)]
    else:  # (no timeout it can be: how many shards fit is not said)
        assert small == [] and any("is not known before it runs" in f.reason for f in analysis.plan.findings
                                   if f.job == SMALL)
    assert timeout_minutes("7" * 400) is None and timeout_minutes(float("nan")) is None


def test_a_called_file_with_a_job_beside_the_shards_is_said_so() -> None:
    """review115 f06: five reasons for "no reshard" gave the one sentence; a second job of the called file would be
    among the caller's jobs as if a shard."""
    extra = "  notify:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo done\n"
    analysis = _analysed(stage=lambda t: t + extra)
    assert SMALL not in {r.job for r in analysis.plan.reshards}
    assert any(f"which foldbot does not set either: `{STAGE_PATH}` runs 2 jobs, not one whose matrix is the shards; to "
               "reshard them, change it by hand" in f.reason for f in analysis.plan.findings if f.job == SMALL)


def test_a_switch_that_is_off_is_said_to_be_off_and_resharding_is_not_advised() -> None:
    """review116 f02: `auto_partition: false` (or its default false) hands the count to no command: the sentence said
    it "may" be off and advised resharding by hand, which would drop repeats of the whole suite."""
    off = _analysed(stage=_replacing("auto_partition: {type: boolean, default: true}",
                                     "auto_partition: {type: boolean, default: false}"))
    (reason,) = [f.reason for f in off.plan.findings if f.job == SMALL]
    assert reason.endswith("so fewer shards would drop repeats, not spread it") and "to reshard them" not in reason
    unknown = _analysed(amd=_replacing("      timeout_per_file: 2400\n",
                                       "      timeout_per_file: 2400\n      auto_partition: ${{ inputs.whole }}\n"))
    (reason,) = [f.reason for f in unknown.plan.findings if f.job == SMALL]
    assert "which what this job passes may turn off" in reason and "to reshard them, change it by hand" in reason


def test_a_reshard_to_one_shard_names_the_required_checks_it_drops() -> None:
    """review116 f01: `'{"size":1,"arr":[0]}'` was no shard count to the approval (two ids or more), so a 14 -> 1
    patch dropped required checks and the approval said none went."""
    from bot.approve import required_checks_gone
    from bot.edit import ReshardEdit, partitions_source

    before = _staged_files()
    one = partitions_source(AMD, QUOTED, ReshardEdit(SMALL, "partition", 14, 1, "--auto-partition-size", "partitions"))
    assert one == "'" + '{"size":1,"arr":[0]}' + "'"
    after = {**before, AMD: before[AMD].replace(QUOTED, one)}
    name = f"{SMALL} / {SMALL} (linux-mi300-1gpu-sglang, %d)"
    gone = required_checks_gone(before, after, {name % 13: ["branch protection"], name % 0: ["branch protection"]})
    assert [g.check for g in gone] == [name % 13]


def test_the_budget_of_other_steps_is_read_over_the_runs_that_ran_every_shard() -> None:
    """review116 f03: runs of some shards only (cancelled) lacked shard 0's 35-min step and shrank its budget."""
    from tests.test_plan import workflow
    from tests.test_plan_limits import HOST, _shard_runs, plan

    text = workflow(parts=12, host_timeout="timeout-minutes: 150").replace(
        "--total-partitions 12\n", "--total-partitions 12\n      - name: Run integration tests\n        if: matrix.part == 0\n"
                                   "        timeout-minutes: 45\n        run: pytest integration\n")
    steps = lambda r, p: [("Run suite", 8 + (p % 3) * 0.3)] + ([("Run integration tests", 35)] if p == 0 else [])  # noqa: E731
    full = _shard_runs(text, steps, setup=90)
    partial = _shard_runs(text, steps, setup=90, n=50)
    for i, made in enumerate(partial):  # (only shards 6..11 ran in these)
        made["workflow_run"]["id"] = 900 + i
        made["jobs"] = [j for j in made["jobs"] if not j["name"].startswith(f"{HOST} (") or int(j["name"][-3:-1].strip("( ")) >= 6]
    (alone,) = plan(text, full).reshards
    (mixed,) = plan(text, full + partial).reshards
    assert mixed.to_count == alone.to_count and round(mixed.rest_p90_s / 60) == round(alone.rest_p90_s / 60) == 125


def test_one_expression_switched_off_beside_one_that_hands_the_count_on_is_no_switch_off() -> None:
    """review117 f01: a second variable carrying the count behind a switch that is off (`verbose`, false) made the
    whole step "off": each shard said to run the whole suite, which the first variable does not."""
    stage = lambda t: _edited(_edited(t, "      auto_partition: {type: boolean, default: true}\n",  # noqa: E731
                                      "      auto_partition: {type: boolean, default: true}\n"
                                      "      verbose: {type: boolean, default: false}\n"),
                              "          PARTITION_ARGS:", "          SIZE_NOTE: ${{ inputs.verbose && "
                              "fromJson(inputs.partitions).size || '' }}\n          PARTITION_ARGS:")
    (reason,) = [f.reason for f in _analysed(stage=stage).plan.findings if f.job == SMALL]
    assert "which what this job passes may turn off" in reason and "its switch is off" not in reason
