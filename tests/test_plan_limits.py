"""How long a matrix's shards may take, and where else their count is written (review113 of the limits and the
counts elsewhere): a job's timeout holds its setup and every step, each shard's own; a lane a reshard is carried to
is weighed by its own timeouts and counts; a timeout expression's compared numbers are no timeout."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.analysis import Analysis, analyze
from bot.config import RepoConfig
from bot.logs import parse_log
from bot.workflow import timeout_minutes
from tests.builders import amd_job, bundle
from tests.paths import AMD, ROCM720
from tests.sglang_current import history, workflow_text
from tests.test_plan import PATH, START, bundle_logs, plan, runs, workflow

SMALL = "stage-b-test-1-gpu-small-amd"
HOST = "big-amd-rocm700"


def _sglang(amd=lambda t: t, rocm720=lambda t: t) -> Analysis:  # noqa: ANN001
    """The amd lane's runs, its lane files changed as given."""
    bundles, logs = history("amd")
    return analyze({AMD: amd(workflow_text("amd")), ROCM720: rocm720(workflow_text("rocm720"))}, bundles, RepoConfig(),
                   {k: parse_log(v) for k, v in logs.items()})


def _carried(analysis: Analysis, path: str) -> list[tuple[str, int, int]]:
    lane = next(result for result in analysis.lanes if result.lane.path == path)
    return [(r.job, r.from_count, r.to_count) for r in lane.change.reshards]


def _after(job_id: str, needs: str, script: str) -> str:
    return (f"  {job_id}:\n    needs: [{needs}]\n    if: always()\n    runs-on: ubuntu-latest\n    steps:\n"
            f"      - name: Check every shard\n        run: |\n          {script}\n")


def test_a_reshard_is_not_carried_where_that_lane_counts_the_shards_elsewhere() -> None:
    """review113 f01: rocm720's results job loops over the 14 shards; the amd lane's 14 -> 7 was carried there."""
    loop = _after("check-shards-rocm720", SMALL + "-rocm720", 'for p in {0..13}; do test -f "logs/$p.log" || exit 1; done')
    analysis = _sglang(rocm720=lambda t: t + loop)
    assert (SMALL, 14, 7) in _carried(analysis, AMD) and _carried(analysis, ROCM720) == []
    assert (f"{ROCM720}: `{SMALL}-rocm720` is not resharded there: its 14 shards are also counted in "
            "`check-shards-rocm720`'s `Check every shard` (`{0..13}`), which the patch would leave behind") in analysis.warnings


def test_a_reshard_is_not_carried_where_that_lanes_timeouts_leave_too_little() -> None:
    """review113 f02: a carried reshard was not weighed against the other lane's timeouts at all."""
    measured = next(r for r in _sglang().plan.reshards if r.job == SMALL)
    minutes = round(measured.rest_p90_s / 60 + 30)  # 30 min left for the tests: 41-min shards would be killed
    analysis = _sglang(rocm720=lambda t: t.replace(f"  {SMALL}-rocm720:\n",
                                                    f"  {SMALL}-rocm720:\n    timeout-minutes: {minutes}\n", 1))
    assert (SMALL, 14, 7) in _carried(analysis, AMD) and _carried(analysis, ROCM720) == []
    (said,) = [w for w in analysis.warnings if w.startswith(f"{ROCM720}: `{SMALL}-rocm720` is not resharded there")]
    assert f"`{SMALL}-rocm720`'s {minutes}-min job timeout less its setup and other steps" in said
    assert said.endswith(f"and on 7 shards the longest would take about {measured.predicted_longest_p90_s / 60:.0f} min (p90)")
    step = "timeout-minutes: ${{ (inputs.runner_arch || 'mi300') == 'mi300' && 75 || 60 }}"
    short = _sglang(rocm720=lambda t: t.replace(step, "timeout-minutes: 30", 1) if
                    t.index(step) > t.index(f"  {SMALL}-rocm720:") else t)
    assert _carried(short, ROCM720) == []


def _killed_runs(setups, killed=(), tests=lambda p: 20 + p % 2):  # noqa: ANN001
    out = []
    for r in range(5):
        jobs = [amd_job("unit-amd-rocm700", labels=["linux-mi300-1gpu"], setup_minutes=80, download_artifacts=None,
                        tests=[("Run unit tests", 5)], teardown=())]
        for p in range(4):
            setup = setups(r, p)
            jobs.append(amd_job(f"{HOST} ({p})", labels=["linux-mi300-1gpu"], setup_minutes=setup, download_artifacts=None,
                                tests=[("Run suite", 140 - setup if (r, p) in killed else tests(p))], teardown=()))
        made = bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                      jobs=jobs, start=START + timedelta(days=r))
        for j in made["jobs"]:
            if j["name"].startswith(f"{HOST} (") and (r, int(j["name"][-2])) in killed:  # the job's timeout stopped it
                j["conclusion"] = "cancelled"
                next(s for s in j["steps"] if s["name"] == "Run suite")["conclusion"] = "cancelled"
        out.append(made)
    return out


def test_a_shard_its_jobs_timeout_stopped_is_an_overrun_and_one_that_ended_in_time_is_not() -> None:
    """review113 f03: each shard's own setup and steps are what its job's timeout stops, not the p90 setup's."""
    text = workflow(host_timeout="timeout-minutes: 140")
    killed = {(1, 2), (3, 0)}  # a 125-min setup: stopped 15 min into its tests
    p = plan(text, _killed_runs(lambda r, p: 125 if (r, p) in killed else 80, killed))
    assert p.reshards == () and HOST in p.overruns
    (reason,) = [f.reason for f in p.findings if f.job == HOST]
    assert reason.startswith(f"already overruns: in 2 of 5 runs a shard ran into the 140-min timeout of job `{HOST}` "
                             "(its setup and steps, longest 140 min); it needs more shards or a longer timeout")
    # a quick setup and a long shard that ended at 105 of 140 min ran into nothing
    quick = plan(text, _killed_runs(lambda r, p: 110 if p == 3 else 60, tests=lambda p: 45 if p == 0 else 20))
    assert HOST not in quick.overruns


def test_the_jobs_other_steps_count_against_its_timeout_too() -> None:
    """review113 f06: a second test step runs inside the job's timeout as well; 4 -> 2 had been offered, each shard
    then needing 90 + 26 + 28 min of its 140."""
    text = workflow(host_timeout="timeout-minutes: 140").replace(
        "--total-partitions 4\n", "--total-partitions 4\n      - name: Run benchmarks\n        timeout-minutes: 40\n"
                                  "        run: python3 bench.py\n")
    made = []
    for r in range(5):
        jobs = [amd_job("unit-amd-rocm700", labels=["linux-mi300-1gpu"], setup_minutes=100, download_artifacts=None,
                        tests=[("Run unit tests", 5)], teardown=())]
        jobs += [amd_job(f"{HOST} ({p})", labels=["linux-mi300-1gpu"], setup_minutes=90, download_artifacts=None,
                         tests=[("Run suite", 12 + p % 2 * 0.5), ("Run benchmarks", 28)], teardown=()) for p in range(4)]
        made.append(bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                           jobs=jobs, start=START + timedelta(days=r)))
    p = plan(text, made)
    assert p.reshards == ()
    (reason,) = [f.reason for f in p.findings if f.job == HOST]
    assert "= 60% of 22 (`big-amd-rocm700`'s 140-min job timeout less its setup and other steps (118 min at p90))" in reason


@pytest.mark.parametrize("expression, minutes", [
    ("${{ matrix.part == 0 && 180 || 120 }}", 120.0),  # (a compared 0 is no timeout)
    ("${{ inputs.shards > 2 && 90 || 30 }}", 30.0),
    ("${{ fromJSON(needs.plan.outputs.minutes) }}", None),
    ("${{ (inputs.runner_arch || 'mi300') == 'mi300' && 75 || 60 }}", 60.0),
    # numbers written as text (review116 f04), and what no timeout is
    ("45.", 45.0), (".5", 0.5), ("1_000", 1000.0), (" 45 ", 45.0), ("4.5e1", 45.0),
    ("nan", None), ("inf", None), ("-5", None), ("0", None), ("9" * 400, None),
])
def test_a_timeout_expression_is_read_by_the_values_it_may_take(expression: str, minutes: float | None) -> None:
    """review113 f07: the smallest number of `matrix.part == 0 && 180 || 120` was 0; as a job's timeout `0 or 360`."""
    assert timeout_minutes(expression) == minutes


def test_a_job_timeout_not_known_before_a_run_is_said_not_taken_for_githubs() -> None:
    """review113 f07b: a job timeout with no number (`fromJSON(...)`) was taken as GitHub's 360 minutes."""
    text = workflow(host_timeout="timeout-minutes: ${{ fromJSON(needs.check.outputs.minutes) }}")
    p = plan(text, runs(text))
    assert p.reshards == () and HOST not in p.reshard_candidates
    assert [f.reason for f in p.findings if f.job == HOST] == [
        f"its `{HOST}` job's `timeout-minutes` (`${{{{ fromJSON(needs.check.outputs.minutes) }}}}`) is not known before "
        "it runs: how many shards fit is not said"]


def test_a_file_too_long_for_the_jobs_timeout_names_that_timeout_to_raise() -> None:
    """review113 f08: where the job's timeout less setup is the limit, the advice named the step's (60 min, never
    reached)."""
    text = workflow(host_timeout="timeout-minutes: 140")  # (the job's timeout stops shard 3: no line of its own)
    bundles = runs(text, shard_tests=[20, 22, 18, 17])[:-1] + runs(text, shard_tests=[20, 22, 18, 39.25])[-1:]
    (reason,) = [f.reason for f in plan(text, bundles, logs=bundle_logs(bundles, timed_out="")).findings if f.job == HOST]
    assert f"raise job `{HOST}`'s `timeout-minutes` or split that file" in reason
    assert "raise `Run suite`'s" not in reason


def test_shard_values_that_are_no_ascii_digits_are_no_shard_numbers() -> None:
    """review113 f09: `"①"` passed `str.isdigit`, then `int` raised: the whole report was lost."""
    marks = ["①", "②"]
    entries = "".join(f"          - {{runner: linux-{r}-1, shard: \"{m}\"}}\n" for r in ("mi300x", "mi35x") for m in marks)
    text = (f"name: Lane\non: pull_request\njobs:\n  tests:\n    strategy:\n      fail-fast: false\n      matrix:\n"
            f"        include:\n{entries}    runs-on: ${{{{ matrix.runner }}}}\n    steps:\n      - name: Run suite\n"
            "        timeout-minutes: 60\n        run: pytest -k \"shard ${{ matrix.shard }}\"\n")
    made = [bundle(run_id=300 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                   start=START + timedelta(days=r),
                   jobs=[amd_job(f"tests (linux-{m}-1, {s})", labels=[f"linux-{m}-1"], setup_minutes=12,
                                 download_artifacts=None, tests=[("Run suite", 30)], teardown=())
                         for m in ("mi300x", "mi35x") for s in marks]) for r in range(3)]
    (reason,) = [f.reason for f in plan(text, made).findings if f.job == "tests"]
    assert reason == ("its matrix is an `include` list of 4 entries varying `runner` (linux-mi300x-1, linux-mi300x-1, "
                      "linux-mi35x-1, linux-mi35x-1): jobs of their own, not shards of one suite; nothing to reshard, and "
                      "a matrix's job is not folded")


@pytest.mark.parametrize("script", [
    "for shard in 0 1 2 3; do test -f logs/$shard.log; done",
    "for ((shard=0; shard<4; shard++)); do test -f logs/$shard.log; done",
    "for shard in $(seq 0 1 3); do test -f logs/$shard.log; done",
    "for shard in $(seq -w 0 3); do test -f logs/$shard.log; done",
    "python3 -c 'for s in range(1, 5): print(s)'",
    "for shard in $(seq 0 $((4 - 1))); do test -f logs/$shard.log; done",  # (review113 f04's arithmetic)
])
def test_a_count_written_in_any_loop_of_a_later_job_is_left_by_hand(script: str) -> None:
    """review113 f04: the spellings of a loop over the shards a later job may use."""
    text = workflow() + _after("results", HOST, script)
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert any("also counted in `results`'s `Check every shard`" in f.reason for f in p.findings if f.job == HOST)


def test_a_job_before_the_matrix_that_writes_a_list_per_shard_keeps_the_count_by_hand() -> None:
    """review113 f04: a split job the matrix needs writes one list per shard; after a trim its last lists would run
    nowhere, and nothing would fail."""
    split = ("  split:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Split the tests\n        run: |\n"
             "          for s in $(seq 0 3); do ls tests | split_for $s > shard_$s.list; done\n")
    text = workflow(host_needs="[check, split]") + split
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert any("also counted in `split`'s `Split the tests` (`seq 0 3`)" in f.reason for f in p.findings if f.job == HOST)


def _shard_runs(text: str, shard_steps, setup: float = 100, n: int = 5) -> list[dict]:  # noqa: ANN001
    """`n` runs of `workflow()`'s lane; shard p of run r runs the steps `shard_steps(r, p)` -> [(name, minutes)]."""
    parts = len(text.split("part: [")[1].split("]")[0].split(","))
    out = []
    for r in range(n):
        jobs = [amd_job("unit-amd-rocm700", labels=["linux-mi300-1gpu"], setup_minutes=setup, download_artifacts=None,
                        tests=[("Run unit tests", 5)], teardown=())]
        jobs += [amd_job(f"{HOST} ({p})", labels=["linux-mi300-1gpu"], setup_minutes=setup, download_artifacts=None,
                         tests=shard_steps(r, p), teardown=()) for p in range(parts)]
        out.append(bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                          jobs=jobs, start=START + timedelta(days=r)))
    return out


def test_another_stage_of_as_many_shards_is_no_count_of_these() -> None:
    """review114 f01: SGLang chains its stages by `needs:`, each a suite of its own on `part: [0, 1]`; another's
    matrix was taken for a count of these shards, and 9 of SGLang's 2 -> 1 reshards were lost."""
    text = workflow(parts=2, second_host=True).replace("  other-amd-rocm700:\n    needs: [check]",
                                                       f"  other-amd-rocm700:\n    needs: [{HOST}]")
    p = plan(text, runs(text, shard_tests=[10, 12], other_shards=2))
    assert [(r.job, r.from_count, r.to_count) for r in p.reshards if r.job == HOST] == [(HOST, 2, 1)]


def test_a_step_only_one_shard_runs_is_in_the_job_budget_of_that_shard() -> None:
    """review114 f02: shard 0 alone runs a 35-min step (`if: matrix.part == 0`); one sample in twelve is under a
    p90 over all shards, and 12 -> 3 left shard 0 needing 159 of its job's 150 min."""
    text = workflow(parts=12, host_timeout="timeout-minutes: 150").replace(
        "--total-partitions 12\n", "--total-partitions 12\n      - name: Run integration tests\n        if: matrix.part == 0\n"
                                   "        timeout-minutes: 45\n        run: pytest integration\n")
    p = plan(text, _shard_runs(text, lambda r, p: [("Run suite", 8 + (p % 3) * 0.3)] +
                               ([("Run integration tests", 35)] if p == 0 else []), setup=90))
    (reshard,) = [r for r in p.reshards if r.job == HOST]
    assert 90 + 35 + reshard.predicted_longest_p90_s / 60 <= 150 and round(reshard.rest_p90_s / 60) == 125


def test_a_test_step_whose_name_the_runs_show_otherwise_is_not_counted_twice() -> None:
    """review114 f03: `Run suite (part ${{ matrix.part }})` is `Run suite (part 0)` in the runs: its time was
    counted among the job's other steps as well as the step's own (4 -> 3 instead of 4 -> 2)."""
    text = workflow(host_timeout="timeout-minutes: 160").replace("        timeout-minutes: 60\n        run: python3",
                                                                 "        run: python3")
    templated = text.replace("- name: Run suite\n", "- name: Run suite (part ${{ matrix.part }})\n")
    tests = [15, 16, 14, 15]
    plain = plan(text, _shard_runs(text, lambda r, p: [("Run suite", tests[p])]))
    named = plan(templated, _shard_runs(templated, lambda r, p: [(f"Run suite (part {p})", tests[p])]))
    (a,), (b,) = plain.reshards, named.reshards
    assert (a.to_count, round(a.rest_p90_s)) == (b.to_count, round(b.rest_p90_s)) == (2, 6002)


def test_a_quoted_number_compared_is_no_runner_and_no_timeout() -> None:
    """review114 f04: `matrix.part == '0' && 180 || 120` took `'0'` for a runner label (`linux-mi300-1gpu` holds a
    0): 180 minutes for every shard."""
    expression = "${{ matrix.part == '0' && 180 || 120 }}"
    assert timeout_minutes(expression, ("linux-mi300-1gpu",)) == timeout_minutes(expression) == 120
    assert timeout_minutes("${{ matrix.part == '3' && 180 || 120 }}") == 120


def test_a_fold_into_a_job_whose_timeout_is_not_known_is_not_made() -> None:
    """review114 f05: the reshard said the host's timeout was not known; a fold into it was budgeted against 360."""
    text = workflow(host_timeout="timeout-minutes: ${{ fromJSON(needs.check.outputs.minutes) }}")
    p = plan(text, runs(text))
    assert p.folds == ()
    assert any("`${{ fromJSON(needs.check.outputs.minutes) }}`) is not known before it runs: whether the suite's steps "
               "fit in it cannot be checked" in f.reason for f in p.findings if f.job == "unit-amd-rocm700")


def test_shards_that_ran_into_each_timeout_are_counted_and_named_apart() -> None:
    """review114 f06: a shard stopped by the step's timeout and one by the job's were both said to be the job's."""
    text = workflow(host_timeout="timeout-minutes: 140", step_timeout="60")
    made = []
    for r in range(5):
        jobs = [amd_job("unit-amd-rocm700", labels=["linux-mi300-1gpu"], setup_minutes=90, download_artifacts=None,
                        tests=[("Run unit tests", 5)], teardown=())]
        for p in range(4):
            setup, minutes = {(0, 1): (60, 60), (1, 2): (125, 15)}.get((r, p), (90, 20 + p))
            jobs.append(amd_job(f"{HOST} ({p})", labels=["linux-mi300-1gpu"], setup_minutes=setup, download_artifacts=None,
                                tests=[("Run suite", minutes)], teardown=()))
        made.append(bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                           jobs=jobs, start=START + timedelta(days=r)))
    (said,) = [f.reason for f in plan(text, made).findings if f.job == HOST and f.reason.startswith("already overruns")]
    assert said.startswith("already overruns: in 1 of 5 runs a shard ran into the 60-min timeout of `Run suite` (longest "
                           f"60 min) and in 1 the 140-min timeout of job `{HOST}` (its setup and steps, longest 140 min); ")
