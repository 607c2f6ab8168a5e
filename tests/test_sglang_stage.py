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
from typing import Any

import pytest
import yaml

from bot.analysis import Analysis, analyze
from bot.config import RepoConfig
from bot.logs import parse_log
from bot.report import to_json, to_markdown
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
           "either: to reshard them, change it by hand" in reason


def _edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("change, said", [
    # the count handed to no flag: `auto_partition: false` runs the whole suite on every shard
    (lambda t: _edited(t, "      timeout_per_file: 2400\n", "      timeout_per_file: 2400\n      auto_partition: false\n"),
     "which foldbot does not set either"),
    # shard ids that do not start at 0: not the list foldbot writes
    (lambda t: _edited(t, '\'{"size":14,"arr":[0,1,2,3,4,5,6,7,8,9,10,11,12,13]}\'',
                       '\'{"size":14,"arr":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}\''),
     "which foldbot does not set either"),
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
    assert f"{ROCM720}: `{SMALL}-rocm720` does not pass 14 shards as `partitions` to a workflow that hands them to " \
           "`--auto-partition-size`; not resharded there" in analysis.warnings
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
