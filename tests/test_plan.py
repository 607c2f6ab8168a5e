"""The planner's rules: when a suite folds, into which host, and how far a matrix shrinks."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bot.analysis import analyze
from bot.config import RepoConfig, parse_config
from bot.logs import ShardPredictor, lpt, parse_log, predicted_longest_shard
from bot.plan import CutOff, Lane, Planner
from bot.timing import job_stats, run_timing
from bot.workflow import parse_workflow, timeout_minutes
from bot.report import to_json, to_markdown
from tests.builders import Step, amd_job, bundle, job, skipped_job

PATH = ".github/workflows/pr-test-amd-rocm700.yml"
START = datetime(2026, 8, 1, tzinfo=timezone.utc)

SETUP_STEPS = """\
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Start CI container
        run: bash start.sh
      - name: Install dependencies
        run: bash install.sh
"""


def workflow(*, host_runs_on: str = "linux-mi300-1gpu", host_needs: str = "[check]", host_timeout: str = "",
             suite_setup: str = SETUP_STEPS, second_host: bool = False, parts: int = 4,
             step_timeout: str = "60") -> str:
    hosts = [("big-amd-rocm700", parts, host_runs_on, host_timeout)]
    if second_host:
        hosts.append(("other-amd-rocm700", 2, "linux-mi300-1gpu", "timeout-minutes: 300"))
    text = f"""name: Lane
on: pull_request
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: echo
  unit-amd-rocm700:
    needs: [check]
    runs-on: linux-mi300-1gpu
    steps:
{suite_setup}      - name: Run unit tests
        timeout-minutes: 30
        run: pytest unit
"""
    for job_id, count, runs_on, timeout in hosts:
        text += f"""  {job_id}:
    needs: {host_needs if job_id.startswith('big') else '[check]'}
    runs-on: {runs_on}
    {timeout}
    strategy:
      fail-fast: false
      matrix:
        part: [{', '.join(str(i) for i in range(count))}]
    steps:
{SETUP_STEPS}      - name: Run suite
        timeout-minutes: {step_timeout}
        run: python3 run_suite.py --partition-id ${{{{ matrix.part }}}} --total-partitions {count}
"""
    return text


def runs(text: str, *, n: int = 5, suite_tests: float = 5, shard_tests: list[float] = (20, 22, 18, 21),
         setup: float = 100, label: str = "linux-mi300-1gpu", other_shards: int = 0) -> list[dict]:
    out = []
    for r in range(n):
        jobs = [amd_job("unit-amd-rocm700", labels=[label], setup_minutes=setup, download_artifacts=None,
                        tests=[("Run unit tests", suite_tests)], teardown=())]
        for p, minutes in enumerate(shard_tests):
            jobs.append(amd_job(f"big-amd-rocm700 ({p})", labels=[label], setup_minutes=setup, download_artifacts=None,
                                tests=[("Run suite", minutes)], teardown=()))
        for p in range(other_shards):
            jobs.append(amd_job(f"other-amd-rocm700 ({p})", labels=[label], setup_minutes=setup / 2,
                                download_artifacts=None, tests=[("Run suite", 30)], teardown=()))
        out.append(bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                          jobs=jobs, start=START + timedelta(days=r)))
    return out


def plan(text: str, bundles: list[dict], config: RepoConfig | None = None, logs=None, path: str = PATH):
    config = config or RepoConfig()
    wf = parse_workflow(text, path)
    timings = [run_timing(b, wf, config) for b in bundles]
    return Planner(Lane.of(wf), timings, job_stats(timings), config, logs).plan()


def test_a_short_suite_folds_into_the_matching_matrix() -> None:
    p = plan(workflow(), runs(workflow()))
    assert [(f.job, f.into, f.shard_value, f.timeout_minutes, f.provisional) for f in p.folds] == [
        ("unit-amd-rocm700", "big-amd-rocm700", 0, 15, False)
    ]
    assert p.folds[0].timeout_note == ("15 min = 3 x its p90 of 5.00 min (15.00), rounded up to a multiple of 5 (its "
                                       "own step had 30 min)")


def test_a_suite_whose_tests_were_always_cancelled_part_way_is_not_folded_and_says_why() -> None:
    """Each run was cancelled (a newer push, `cancel-in-progress`) 5 min into the suite's tests: no
    run says how long they take, so its 5 min are no p90 for a fold's timeout."""
    text = workflow()
    bundles = runs(text)
    for b in bundles:
        b["workflow_run"]["conclusion"] = "cancelled"
        suite = next(j for j in b["jobs"] if j["name"] == "unit-amd-rocm700")
        suite["conclusion"] = "cancelled"
        next(s for s in suite["steps"] if s["name"] == "Run unit tests")["conclusion"] = "cancelled"
    p = plan(text, bundles)
    assert p.folds == ()
    assert [f.reason for f in p.findings if f.job == "unit-amd-rocm700"] == [
        "its tests were cancelled part-way in 5 runs of the 5 it ran in, and none ran to the end: a cancelled test step "
        "is no sample of how long they take"]


def test_fewer_shards_are_never_predicted_shorter_than_todays_longest_was_measured() -> None:
    """71 min of files on 4 shards, shard 0 20 min slower than its files (a slow start): measured at
    39 min, over the 36-min limit. The floor held for today's count only, so 3 shards were proposed,
    "predicted at 33 min": shorter than what 4 took."""
    stamp = "2026-08-01T10:00:00.0000000Z "
    files = {f"test/f{i}.py": m for i, m in enumerate([14, 12, 10, 9, 8, 7, 6, 5])}
    parts = lpt(files, 4)

    def log(k: int) -> str:
        lines = [f"partition: {k + 1}/4 (0-based id={k})", f"\u2705 Enabled {len(parts[k])} test(s):"]
        lines += [f"  - {f} (est_time={files[f] * 60:.1f})" for f in parts[k]]
        for i, f in enumerate(parts[k]):
            lines += [f"End ({i}/{len(parts[k]) - 1}):", f"filename='{f}', elapsed={files[f] * 60}"]
        return "\n".join(stamp + line for line in lines) + "\n"
    text = workflow()
    bundles = runs(text, shard_tests=[sum(files[f] for f in parts[k]) + (20 if k == 0 else 0) for k in range(4)])
    logs = {j["id"]: parse_log(log(int(j["name"][-2]))) for b in bundles for j in b["jobs"]
            if j["name"].startswith("big-amd-rocm700 (")}
    p = plan(text, bundles, logs=logs)
    assert p.reshards == ()
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "no fewer shards: today's 4 already run 39 min at p90 (limit 36 min = 60% of 60; per-file logs); about 5 "
        "would keep the longest within the limit"]


HUNG_FILES = {f"test/f{i}.py": m for i, m in enumerate([14, 12, 10, 9, 8, 7, 6])} | {"test/hang.py": 5}


def _hung_log(k: int, parts: list[list[str]], killed: bool) -> str:
    """Shard k's log as SGLang's `ci_utils.py` prints it, `test/hang.py` ending at the runner's
    `--timeout-per-file 1800`: killed there (`✗ TIMEOUT`, no `End`, its cap in TIMINGS), or, for
    `killed=False`, failing after 30 min of its own (`✗ FAILED`)."""
    stamp = "2026-08-01T10:00:00.0000000Z "
    lines = [f"partition: {k + 1}/4 (0-based id={k})", f"\u2705 Enabled {len(parts[k])} test(s):"]
    lines += [f"  - {f} (est_time={HUNG_FILES[f] * 60:.1f})" for f in parts[k]]
    timings = []
    for i, f in enumerate(parts[k]):
        lines += [f"Begin ({i}/{len(parts[k]) - 1}):", f"python3 {f}"]
        if f == "test/hang.py" and killed:
            lines += ["\u2717 TIMEOUT: test/hang.py after 1800 seconds"]
        else:
            elapsed = 1800 if f == "test/hang.py" else HUNG_FILES[f] * 60
            lines += [f"End ({i}/{len(parts[k]) - 1}):", f"filename='{f}', elapsed={elapsed}"]
            if f == "test/hang.py":
                lines += ["\u2717 FAILED: test/hang.py returned exit code 1"]
        passed = "false" if f == "test/hang.py" else "true"
        timings.append(f'{{"file": "{f}", "passed": {passed}, "elapsed": {1800 if f == "test/hang.py" else HUNG_FILES[f] * 60}}}')
    lines += ["========== TIMINGS BEGIN ==========", *timings, "========== TIMINGS END =========="]
    return "\n".join(stamp + line for line in lines) + "\n"


def _hung_history(killed: bool) -> tuple[str, list[dict], dict]:
    """4 shards (limit 36 min of 60); `test/hang.py`, estimated at 5 min, ends at 30 min in every run,
    so shard 0 (with `test/f0.py`, 14 min) runs 44 min."""
    parts = lpt(HUNG_FILES, 4)
    assert parts[0] == ["test/f0.py", "test/hang.py"]
    minutes = [sum(1800 / 60 if f == "test/hang.py" else HUNG_FILES[f] for f in part) for part in parts]
    text = workflow()
    bundles = runs(text, shard_tests=minutes)
    logs = {j["id"]: parse_log(_hung_log(int(j["name"][-2]), parts, killed)) for b in bundles for j in b["jobs"]
            if j["name"].startswith("big-amd-rocm700 (")}
    return text, bundles, logs


def test_a_file_the_runner_killed_at_its_timeout_per_file_is_no_measured_time_and_asks_for_no_more_shards() -> None:
    """review100 f01: SGLang's runner kills a hung file at `--timeout-per-file` and records that cap as its
    `elapsed` (TIMINGS `"passed": false`). foldbot took the 30 min as the file's time and advised more shards
    ("about 7 would keep the longest within the limit"), naming the file nowhere. It is a lower bound, as a
    file the step's timeout cut off is: the run's per-file times are not used, the file is named with how
    long it ran, and the advice is to fix the hung test, not to add shards."""
    text, bundles, logs = _hung_history(killed=True)
    p = plan(text, bundles, logs=logs)
    assert p.reshards == ()
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/hang.py", 5, 1800.0, 300.0, killed=True),)}
    assert p.reshard_candidates == {"big-amd-rocm700": 0}  # (no run's per-file times are used)
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "no fewer shards: today's 4 already run 44 min at p90 (limit 36 min = 60% of 60; shard times); no shard count "
        "is said while a test hangs: `test/hang.py` was killed at the runner's `--timeout-per-file` after 30 min (in 5 "
        "runs; the runner estimates it at 5 min), so how long it takes is not known; fix the hung test, or, if it "
        "needs longer, raise the runner's `--timeout-per-file` or split that file"]
    analysis = analyze({PATH: text}, bundles, RepoConfig(), logs)
    assert [u for u in to_json(analysis)["unmeasured"] if u["subject"] == "big-amd-rocm700"] == [{
        "subject": "big-amd-rocm700",
        "reason": "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: "
                  "`test/hang.py` (in 5 runs, killed after 30 min); the runner records that cap as the file's time, "
                  "which is only how long it ran at least, so a run with such a file has no whole per-file times and "
                  "its shard times stand in",
        "fix": "find why the test hangs and fix it; if it only needs longer, raise the runner's `--timeout-per-file` "
               "or split the file; the runs after that are read file by file"}]
    report = to_markdown(analysis)
    assert ("\n- `big-amd-rocm700`: its logs were read, but the test runner killed a test file at its `--timeout-per-file`: "
            "`test/hang.py` \\(in 5 runs, killed after 30 min\\); the runner records that cap as the file's time, which is "
            "only how long it ran at least, so a run with such a file has no whole per-file times and its shard times "
            "stand in. **Fix:** find why the test hangs and fix it; if it only needs longer, raise the runner's "
            "`--timeout-per-file` or split the file; the runs after that are read file by file.\n") in \
        report.split("#### Could not measure\n", 1)[1]
    assert "would keep the longest" not in report and "more shards" not in report


def test_a_file_that_failed_after_30_min_of_its_own_is_still_measured() -> None:
    """The same 30 min, the file failing by itself (`✗ FAILED`, `"passed": false`): a measured time, as before."""
    text, bundles, logs = _hung_history(killed=False)
    p = plan(text, bundles, logs=logs)
    assert p.cut_off == {} and p.reshard_candidates == {"big-amd-rocm700": 5}
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "no fewer shards: today's 4 already run 44 min at p90 (limit 36 min = 60% of 60; per-file logs); about 7 would "
        "keep the longest within the limit"]


def bundle_logs(bundles: list[dict], timed_out: str = "##[error]The action 'Run suite' has timed out.") -> dict:
    """SGLang runner logs of `big-amd-rocm700`'s 4 shards in each run: a file of 600 s, then an in-process bundle
    (`group:tail_<k>`, 420 s); the last run's shard 3 stops inside its bundle (`timed_out`: the line it ends on)."""
    stamp = "2026-08-01T10:00:00.0000000Z "

    def log(k: int, cut: bool) -> str:
        lines = [f"partition: {k + 1}/4 (0-based id={k})", "\u2705 Enabled 2 test(s):",
                 f"  - test/s{k}.py (est_time=600.0)", f"  - group:tail_{k} (est_time=400.0)",
                 "Begin (0/1):", f"python3 test/s{k}.py", "End (0/1):", f"filename='test/s{k}.py', elapsed=600",
                 f"Begin (1/1) BUNDLE group:tail_{k} (2 files, est=400s): python3 -m unittest -f <2 modules>"]
        lines += ([timed_out] if timed_out else []) if cut else [f"End (1/1) BUNDLE group:tail_{k}: elapsed=420s"]
        return "\n".join(stamp + line for line in lines) + "\n"

    ids = [[j["id"] for j in b["jobs"] if j["name"].startswith("big-amd-rocm700 (")] for b in bundles]
    return {jid: parse_log(log(k, cut=r == len(ids) - 1 and k == 3)) for r, run in enumerate(ids)
            for k, jid in enumerate(run)}


def test_an_in_process_bundle_cut_off_by_the_step_timeout_is_cut_off_as_a_file_is() -> None:
    """review100 f02: SGLang's runner runs an `in_process_group` as one unit, `group:<key>`, on one line
    (`Begin (i/n) BUNDLE group:<key> (k files, est=Ns): python3 -m unittest ...`, no `python3 <file>` line
    after it). Cut off by the step's timeout mid-bundle, it was not seen as begun: the run's per-file
    times were used, the bundle's time made up from its estimate, and "about 15 shards" advised."""
    text = workflow()
    # (the latest run's shard 3 runs into the step's 60-min timeout, 49 min into its bundle)
    bundles = runs(text, shard_tests=[20, 22, 18, 17])[:-1] + runs(text, shard_tests=[20, 22, 18, 59.25])[-1:]
    p = plan(text, bundles, logs=bundle_logs(bundles))
    assert p.cut_off == {"big-amd-rocm700": (CutOff("group:tail_3", 1, 59.25 * 60 - 600, 400.0),)}
    assert p.reshard_candidates == {"big-amd-rocm700": 4}  # the other runs' bundles, ended, are read
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "already overruns: in 1 of 5 runs a shard ran into the 60-min timeout of `Run suite` (longest 59 min); it needs "
        "a longer timeout, not fewer shards; no shard count keeps the longest within 36 min, as one file alone runs "
        "longer: `group:tail_3` ran 49 min and had not ended when its step stopped (in 1 run; the runner estimates it "
        "at 7 min); raise `Run suite`'s `timeout-minutes` or split that file"]


def test_the_count_that_keeps_the_wall_clock_is_not_carried_where_it_would_not() -> None:
    """rocm700 runs 6 shards 4 at a time; pr-test-amd.yml runs them all at once. 3 shards keep
    rocm700's wall clock, and were offered as "only what slows no job", but its patch cut
    pr-test-amd.yml's copy to 3 too, where it finishes ~20 min later."""
    measured = workflow(parts=6, step_timeout="120").replace("      fail-fast: false\n",
                                                             "      fail-fast: false\n      max-parallel: 4\n", 1)
    other, other_path = workflow(parts=6, step_timeout="120").replace("-rocm700", ""), ".github/workflows/pr-test-amd.yml"
    bundles = [bundle(run_id=100 + r, repo="o/r", workflow_path=PATH, workflow_name="Lane", head_sha=f"{r:040x}",
                      jobs=[amd_job(f"big-amd-rocm700 ({p})", labels=["linux-mi300-1gpu"], setup_minutes=5,
                                    download_artifacts=None, tests=[("Run suite", 20)], teardown=()) for p in range(6)],
                      start=START + timedelta(days=r)) for r in range(5)]
    analysis = analyze({PATH: measured, other_path: other}, bundles, RepoConfig())
    (reshard,) = analysis.plan.reshards
    assert (reshard.to_count, reshard.neutral_count) == (2, 3)
    neutral = next(s for s in analysis.suggestions if s.kind == "reshard-neutral")
    assert [line for line in neutral.patch.splitlines() if line.startswith("+++ ")] == [f"+++ b/{PATH}"]
    whole = next(s for s in analysis.suggestions if s.kind == "reshard")
    assert f"+++ b/{other_path}" in whole.patch  # (the count it is offered as slower everywhere is carried, and said)


def test_a_shard_cancelled_at_its_jobs_timeout_is_a_sample_that_it_overruns() -> None:
    """GitHub calls a job that ran into its `timeout-minutes` cancelled too, in a run that failed:
    that shard is the evidence that the matrix overruns. Left out with the cancelled runs of a
    newer push, it was gone from the p90, and 4 shards were cut to 3."""
    text = workflow(step_timeout="40")
    bundles = runs(text, shard_tests=[20, 22, 18, 21])
    for b in bundles[-2:]:
        b["workflow_run"]["conclusion"] = "failure"
        shard = next(j for j in b["jobs"] if j["name"] == "big-amd-rocm700 (1)")
        shard["conclusion"] = "cancelled"
        step = next(s for s in shard["steps"] if s["name"] == "Run suite")
        step["conclusion"] = "cancelled"
        step["completed_at"] = (datetime.fromisoformat(step["started_at"].replace("Z", "+00:00"))
                                + timedelta(minutes=40)).isoformat().replace("+00:00", "Z")
    p = plan(text, bundles)
    assert p.reshards == () and "big-amd-rocm700" in p.overruns


@pytest.mark.parametrize("kwargs,reason", [
    ({"host_runs_on": "linux-mi300-2gpu"}, "runs on other runners"),
    ({"host_needs": "[]"}, "sits in another stage (different `needs`)"),
    ({"suite_setup": SETUP_STEPS.replace("bash install.sh", "bash install.sh --extra")},
     "its setup lacks the suite's step `Install dependencies`"),
    ({"host_timeout": "timeout-minutes: 150"}, "shard 0 would need 175 min (p90 setup 100 + step timeouts) but the job allows 150"),
])
def test_no_fold_without_a_fitting_host(kwargs: dict, reason: str) -> None:
    text = workflow(**kwargs)
    p = plan(text, runs(text))
    assert p.folds == ()
    finding = next(f for f in p.findings if f.job == "unit-amd-rocm700")
    assert reason in finding.reason


HOST = "  big-amd-rocm700:\n"
SUITE_TEST = "        run: pytest unit\n"


@pytest.mark.parametrize("before,after,reason", [
    # what the host alone has at job level changes the suite's steps too
    (HOST, HOST + "    continue-on-error: true\n", "different job-level `continue-on-error`"),
    (HOST, HOST + "    env:\n      HIP_VISIBLE_DEVICES: '0'\n", "different job-level `env`"),
    (HOST, HOST + "    container: rocm/sgl-dev:latest\n", "different job-level `container`"),
    # a failed shard of a fail-fast matrix cancels the others: the suite's tests on shard 0 with them
    ("      fail-fast: false\n", "", "its matrix is fail-fast (GitHub's default without `fail-fast: false`): a failed "
     "shard would cancel shard 0, and the suite's tests with it"),
    ("      fail-fast: false\n", "      fail-fast: ${{ inputs.fail_fast }}\n", "its matrix may be fail-fast "
     "(`fail-fast` is an expression): a failed shard would cancel shard 0, and the suite's tests with it"),
    # flash-attention's shape: a suite queued in a concurrency group of its own (ROCm's shared MI300s)
    ("  unit-amd-rocm700:\n", "  unit-amd-rocm700:\n    concurrency:\n      group: mi300-internal-${{ github.ref }}\n"
     "      cancel-in-progress: false\n", "different job-level `concurrency`"),
    # in the host, a matrix value or a step the suite's step reads is not there: it reads as empty
    (SUITE_TEST, "        run: pytest unit -k ${{ matrix.gpu }}\n",
     "the suite's step `Run unit tests` reads `matrix.gpu`, which the host's matrix does not give it"),
    (SUITE_TEST, "        run: pytest unit -k ${{ Matrix['GPU'] }}\n",  # (expressions ignore case)
     "the suite's step `Run unit tests` reads `matrix.gpu`, which the host's matrix does not give it"),
    (SUITE_TEST, "        run: pytest unit\n        working-directory: ${{ matrix.dir }}\n",
     "the suite's step `Run unit tests` reads `matrix.dir`, which the host's matrix does not give it"),
    (SUITE_TEST, "        run: echo '${{ toJSON(matrix) }}' && pytest unit\n",
     "the suite's step `Run unit tests` reads the whole `matrix`, which is the host's there"),
    (SUITE_TEST, "        run: pytest unit -k ${{ matrix[env.AXIS] }}\n",  # (a key not written out: any)
     "the suite's step `Run unit tests` reads the whole `matrix`, which is the host's there"),
    (SUITE_TEST, "        run: pytest unit --shard ${{ strategy.job-index }}\n",
     "the suite's step `Run unit tests` reads `strategy.job-index`, the host's there"),
    ("        run: bash install.sh\n      - name: Run unit tests",
     "        id: deps\n        run: bash install.sh\n      - name: Run unit tests",
     "the suite's step `Run unit tests` reads `steps.deps`, a step the host does not have"),
])
def test_no_fold_where_the_suite_would_run_differently(before: str, after: str, reason: str) -> None:
    text = workflow()
    if "deps" in after:
        text = text.replace(SUITE_TEST, "        run: pytest unit --version ${{ steps.deps.outputs.version }}\n")
    assert before in text
    changed = text.replace(before, after, 1)
    p = plan(changed, runs(changed))
    assert p.folds == ()
    finding = next(f for f in p.findings if f.job == "unit-amd-rocm700")
    assert finding.reason == f"short suite with no host to fold into (`big-amd-rocm700`: {reason})"


@pytest.mark.parametrize("reader, where", [
    ("  publish:\n    needs: [unit-amd-rocm700]\n    if: needs.unit-amd-rocm700.outputs.verdict == 'pass'\n"
     "    runs-on: ubuntu-latest\n    steps:\n      - run: echo publish\n", "`publish`"),
    ("  publish:\n    needs: [unit-amd-rocm700]\n    runs-on: ubuntu-latest\n    steps:\n"
     "      - run: echo \"${{ needs['unit-amd-rocm700'].result }}\"\n", "`publish`"),
])
def test_a_suite_whose_needs_another_job_reads_is_not_folded(reader: str, where: str) -> None:
    """flash-attention's shape: the suite's job gives `outputs:` a later job gates on. Folded,
    `needs.<suite>` would name no job and read as empty: the later job never runs again."""
    text = workflow().replace("  unit-amd-rocm700:\n    needs: [check]\n",
                              "  unit-amd-rocm700:\n    needs: [check]\n    outputs:\n"
                              "      verdict: ${{ steps.internal.outputs.verdict }}\n", 1) + reader
    p = plan(text, runs(text))
    assert p.folds == ()
    assert [f.reason for f in p.findings if f.job == "unit-amd-rocm700"] == [
        f"{where} reads `needs.unit-amd-rocm700` (its outputs or result), which would be empty once the job is gone: "
        "it is not folded"]
    # a job that reads another one's needs, or all of them (`needs.*.result`), does not stop the fold;
    # nor does plain text that looks like a read (`needs.txt`)
    for harmless in ("${{ needs.unit-amd-rocm7000.result }}", "${{ join(needs.*.result, ',') }}",
                     "pip install -r needs.unit-amd-rocm700.txt"):
        other = workflow() + ("  publish:\n    needs: [unit-amd-rocm700, big-amd-rocm700]\n    runs-on: ubuntu-latest\n"
                              f"    steps:\n      - run: echo \"{harmless}\"\n")
        assert [f.job for f in plan(other, runs(other)).folds] == ["unit-amd-rocm700"], harmless


def test_a_suite_a_gate_may_let_fail_is_not_folded() -> None:
    """re-actors/alls-green: the gate job needs every job and names the ones allowed to fail.
    Folded, the suite's failure would be the host's, which is not allowed to fail."""
    text = workflow() + ("  all-green:\n    needs: [unit-amd-rocm700, big-amd-rocm700]\n    if: always()\n"
                         "    runs-on: ubuntu-latest\n    steps:\n      - uses: re-actors/alls-green@release/v1\n"
                         "        with:\n          allowed-failures: unit-amd-rocm700\n"
                         "          jobs: ${{ toJSON(needs) }}\n")
    p = plan(text, runs(text))
    assert p.folds == ()
    assert [f.reason for f in p.findings if f.job == "unit-amd-rocm700"] == [
        "`all-green` passes its id to `re-actors/alls-green@release/v1` (`with:`; alls-green's `allowed-failures`?), "
        "which would name no job once it is gone: it is not folded"]


def test_a_matrix_an_expression_gives_is_never_folded_nor_resharded() -> None:
    """Its job count is known only when a run starts (aiter's `fromJSON(needs...)` folders)."""
    text = workflow()
    dynamic = text.replace("    runs-on: linux-mi300-1gpu\n    steps:\n",
                           "    runs-on: linux-mi300-1gpu\n    strategy:\n      matrix:\n"
                           "        folder: ${{ fromJSON(needs.check.outputs.folders) }}\n    steps:\n", 1)
    dynamic = dynamic.replace("        part: [0, 1, 2, 3]\n",
                              "        part: [0, 1, 2, 3]\n        gpu: ${{ fromJSON(needs.check.outputs.gpus) }}\n")
    assert dynamic.count("fromJSON") == 2
    p = plan(dynamic, runs(dynamic))
    assert p.folds == () and p.reshards == ()
    reasons = {f.job: f.reason for f in p.findings}
    assert reasons["unit-amd-rocm700"] == ("its matrix axis `folder` comes from an expression, so how many jobs it "
                                          "runs is known only when a run starts (`check`'s output `folders`): it is "
                                          "not folded, resharded or taken as a host")
    assert reasons["big-amd-rocm700"] == ("its matrix axis `gpu` comes from an expression, so how many jobs it runs "
                                         "is known only when a run starts (`check`'s output `gpus`); shard count left "
                                         "alone")


def test_a_long_matrix_an_expression_gives_is_said_to_be_no_host() -> None:
    """review89 f03 (transformers' `amd-strix-halo-probe.yml`): a short suite beside matrices whose one axis is
    `${{ fromJson(...) }}` was told "no other job on AMD runners in this lane", and nothing said why those
    matrices, long ones, were neither hosts nor resharded."""
    text = workflow(parts=2).replace(
        "      matrix:\n        part: [0, 1]\n", "      matrix:\n        model: ${{ fromJson(needs.check.outputs.models) }}\n")
    text = text.replace("--partition-id ${{ matrix.part }} --total-partitions 2", "--model ${{ matrix.model }}")
    bundles = runs(text, shard_tests=[40, 45])
    for b in bundles:
        for api_job in b["jobs"]:
            api_job["name"] = api_job["name"].replace("big-amd-rocm700 (0)", "big-amd-rocm700 (bert)").replace(
                "big-amd-rocm700 (1)", "big-amd-rocm700 (gpt2)")
    p = plan(text, bundles)
    assert p.folds == () and p.reshards == ()
    reasons = {f.job: f.reason for f in p.findings}
    assert reasons["big-amd-rocm700"] == ("its matrix axis `model` comes from an expression, so how many jobs it runs "
                                         "is known only when a run starts (`check`'s output `models`): it is not "
                                         "folded, resharded or taken as a host")
    assert reasons["unit-amd-rocm700"] == ("short suite with no host to fold into (`big-amd-rocm700`'s matrix comes "
                                          "from an expression: no other job on AMD runners could take it)")


def test_a_job_whose_runs_cannot_be_told_from_anothers_is_not_said_never_to_have_run() -> None:
    """review89 f02: two jobs with one `name:` (transformers' `${{ matrix.model }}` matrices): their runs' jobs
    fit both, so neither is measured; that is said, not "no run in the history ran its tests"."""
    text = workflow()
    text = text.replace("  unit-amd-rocm700:\n", "  unit-amd-rocm700:\n    name: unit\n", 1)
    text += text[text.index("  unit-amd-rocm700:"):text.index("  big-amd-rocm700:")].replace(
        "unit-amd-rocm700:", "unit-again:")
    bundles = runs(text)
    for b in bundles:
        for api_job in b["jobs"]:
            api_job["name"] = api_job["name"].replace("unit-amd-rocm700", "unit")
    reasons = {f.job: f.reason for f in plan(text, bundles).findings}
    assert reasons["unit-amd-rocm700"] == ("its runs' jobs cannot be told from `unit-again`'s (one name fits them "
                                          "all: see \u201cCould not measure\u201d), so none is counted as its")
    assert reasons["unit-again"] == ("its runs' jobs cannot be told from `unit-amd-rocm700`'s (one name fits them "
                                    "all: see \u201cCould not measure\u201d), so none is counted as its")


def test_another_lane_whose_matrix_an_expression_gives_is_left_alone_and_said_so() -> None:
    """The measured lane folds and reshards; the other lane's jobs have an axis given by an
    expression (suite and host): nothing is carried there."""
    text = workflow()
    other = text.replace("-amd-rocm700", "-amd")
    host = other.replace("        part: [0, 1, 2, 3]\n",
                         "        part: [0, 1, 2, 3]\n        gpu: ${{ fromJSON(needs.check.outputs.gpus) }}\n")
    suite = other.replace("    runs-on: linux-mi300-1gpu\n    steps:\n",
                          "    runs-on: linux-mi300-1gpu\n    strategy:\n      matrix:\n"
                          "        folder: ${{ fromJSON(needs.check.outputs.folders) }}\n    steps:\n", 1)
    expression = "comes from an expression, so how many jobs it runs is known only when a run starts"
    for lane, said in ((host, [f"`unit-amd` is not folded into `big-amd` there: `big-amd` its matrix axis `gpu` "
                                f"{expression}", f"`big-amd` is not resharded there: its matrix axis `gpu` {expression}"]),
                       (suite, ["`unit-amd` is not folded there: it is not one standalone job (its matrix axis "
                                "`folder` comes from an expression)"])):
        analysis = analyze({PATH: text, ".github/workflows/pr-test-amd.yml": lane}, runs(text), RepoConfig())
        assert [(f.job, r.job) for f, r in zip(analysis.plan.folds, analysis.plan.reshards)] == [
            ("unit-amd-rocm700", "big-amd-rocm700")]
        assert [w.split(": ", 1)[1] for w in analysis.warnings if w.startswith(".github/workflows/pr-test-amd.yml")] \
            == said
        if lane is host:
            assert [e.path for e in analysis.edits] == [PATH]


@pytest.mark.parametrize("entries, reason", [
    ("          - part: 0\n          - part: 1\n",
     "its matrix is an `include` list; foldbot reshards only a shard list written as an axis (`part: [0, 1, 2]`): "
     "shard count left alone"),
    # review80 f04: aiter's `Standard Tests` (MI355 and MI325 runners) read as a shard list left alone
    ("          - runner: aiter-mi355-1gpu\n            label: MI355\n          - runner: aiter-1gpu-runner\n"
     "            label: MI325\n",
     "its matrix is an `include` list of 2 entries varying `runner` (aiter-mi355-1gpu, aiter-1gpu-runner): jobs of "
     "their own, not shards of one suite; nothing to reshard, and a matrix's job is not folded"),
    # review104 f02: a shard number beside its runner, and pytest-split's `group`, are shard lists all the same
    ("          - {shard: 1, runner: linux-mi300-gpu-1}\n          - {shard: 2, runner: linux-mi325-gpu-1}\n",
     "its matrix is an `include` list; foldbot reshards only a shard list written as an axis (`part: [0, 1, 2]`): "
     "shard count left alone"),
    ("          - group: 1\n          - group: 2\n",
     "its matrix is an `include` list; foldbot reshards only a shard list written as an axis (`part: [0, 1, 2]`): "
     "shard count left alone"),
    ("          - {ci_node_index: 0, runner: linux-mi300-gpu-1}\n          - {ci_node_index: 1, runner: linux-mi300-gpu-1}\n",
     "its matrix is an `include` list; foldbot reshards only a shard list written as an axis (`part: [0, 1, 2]`): "
     "shard count left alone"),
    # review107 f06, review108 f04: a node count (or GPUs per node) beside a suite is a configuration, not a shard
    ("          - {suite: disagg, gpus_per_node: 8}\n          - {suite: tp8, gpus_per_node: 4}\n",
     "its matrix is an `include` list of 2 entries varying `suite` (disagg, tp8): jobs of their own, not shards of "
     "one suite; nothing to reshard, and a matrix's job is not folded"),
    ("          - {suite: disagg, num_nodes: 2}\n          - {suite: tp8, num_nodes: 1}\n",
     "its matrix is an `include` list of 2 entries varying `suite` (disagg, tp8): jobs of their own, not shards of "
     "one suite; nothing to reshard, and a matrix's job is not folded"),
    # review101 f06: ROCm/iris's test directories by GPU count are configurations of their own
    ("          - {test_dir: ccl, num_ranks: 8}\n          - {test_dir: ops, num_ranks: 1}\n",
     "its matrix is an `include` list of 2 entries varying `test_dir` (ccl, ops): jobs of their own, not shards of "
     "one suite; nothing to reshard, and a matrix's job is not folded"),
])
def test_an_include_list_matrix_is_not_resharded_and_is_said_so(entries: str, reason: str) -> None:
    text = workflow().replace("        part: [0, 1, 2, 3]\n", "        include:\n" + entries)
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert {f.job: f.reason for f in p.findings}["big-amd-rocm700"] == reason


@pytest.mark.parametrize("axis, reason", [
    ("gpu: [mi300, mi325, mi355, mi35x, gfx950]", "its matrix varies `gpu` (mi300, mi325, mi355, mi35x, ...), not a shard "
                                                   "number; nothing to reshard"),
    ("system: [{runner: linux-mi325-1gpu, os: ubuntu}, {runner: linux-mi355-1gpu, os: rhel}]",
     "its matrix varies `system` ({'runner': 'linux-mi325-1gpu', 'os': 'u\u2026, {'runner': 'linux-mi355-1gpu', 'os': "
     "'r\u2026), not a shard number; nothing to reshard"),
    ("part: ['0', '1', '2', '3']", "no test command carries the shard count 4 in a flag foldbot rewrites "
                                   "(`--total-partitions`, `--auto-partition-size`, `--splits`, `--num-shards`, or "
                                   "`${{ strategy.job-total }}`): a count it cannot change with the matrix"),  # quoted numbers are shards
])
def test_a_matrix_over_other_things_than_shards_is_said_to_be_no_shard_list(axis: str, reason: str) -> None:
    """rocm-systems' aqlprofile matrix runs one suite per GPU system: "no test command carries the shard
    count 4" read as if it were a shard list that foldbot failed to read."""
    text = workflow().replace("        part: [0, 1, 2, 3]\n", f"        {axis}\n").replace(" --total-partitions 4", "")
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert {f.job: f.reason for f in p.findings}["big-amd-rocm700"] == reason


def test_a_suite_whose_anchors_other_jobs_alias_is_not_folded_and_a_patch_that_does_not_check_is_said() -> None:
    """review80 f03: aiter-style `- &checkout` steps in the suite's job, `- *checkout` in the host's (Actions
    reads anchors since 2025). The fold was suggested with its savings, then its patch dropped ("found
    undefined alias"). It is not folded, and says why; a patch that does not check says so by the
    suggestions, with nothing to approve."""
    text = workflow()
    text = text.replace("""      - name: Checkout code
        uses: actions/checkout@v4
      - name: Start CI container
        run: bash start.sh
      - name: Install dependencies
        run: bash install.sh
      - name: Run unit tests""", """      - &checkout
        name: Checkout code
        uses: actions/checkout@v4
      - &start
        name: Start CI container
        run: bash start.sh
      - name: Install dependencies
        run: bash install.sh
      - name: Run unit tests""", 1)
    host = text.index("  big-amd-rocm700:")
    text = text[:host] + text[host:].replace("""      - name: Checkout code
        uses: actions/checkout@v4
      - name: Start CI container
        run: bash start.sh
""", "      - *checkout\n      - *start\n", 1)
    p = plan(text, runs(text))
    assert p.folds == ()
    assert {f.job: f.reason for f in p.findings}["unit-amd-rocm700"] == (
        "YAML anchors tie it to the rest of the file (`checkout`, `start`: defined in its job and aliased elsewhere, "
        "or aliased in its job), which a fold would leave naming nothing: it is not folded")
    # review82 f05: its own test step aliases an anchor of its setup: the step would move, the anchor not.
    own = workflow().replace("      - name: Install dependencies\n        run: bash install.sh\n      - name: Run unit tests\n"
                             "        timeout-minutes: 30\n        run: pytest unit\n",
                             "      - name: Install dependencies\n        run: &install bash install.sh\n"
                             "      - name: Run unit tests\n        timeout-minutes: 30\n        run: *install\n", 1)
    assert plan(own, runs(own)).folds == ()
    # An anchor no alias names, `&&` in a script, a tab after a key (libyaml reads it, as foldbot's parse does;
    # review82 f07: the check's pure-Python parser raised): the fold stands.
    plain = workflow().replace("      - name: Run unit tests\n", "      - &unit\n        name: Run unit tests\n", 1)
    plain = plain.replace("        run: bash install.sh\n", "        run:\tbash install.sh && echo ok\n")
    assert [f.job for f in plan(plain, runs(plain)).folds] == ["unit-amd-rocm700"]
    # the first look: an anchor after any line end YAML knows (review87 F06: NEL), none in a script's `&&` or `2>&1`
    from bot.plan import _may_anchor

    assert [_may_anchor(t) for t in ("a: 1\x85b: &x 2", "- &x a", "k: {a: &x 1}", "run: a && b 2>&1", "x: a&b")] == [
        True, True, True, False, False]


def test_suggestions_whose_patch_does_not_check_say_there_is_nothing_to_approve(monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.analysis
    from bot.edit import EditError
    from bot.report import to_markdown

    def refuse(*args: object, **kwargs: object) -> None:
        raise EditError("the patched file does not parse: found undefined alias")

    monkeypatch.setattr(bot.analysis, "apply_change", refuse)
    text = workflow()
    analysis = analyze({PATH: text}, runs(text), RepoConfig())
    assert analysis.plan.folds and analysis.patch == ""
    body = to_markdown(analysis)
    assert (f"**No patch for `{PATH}`**: written into it, these suggestions leave a file that does not check (*Warnings* "
            "says why), so there is nothing to approve there; a change by hand must avoid the same.") in body
    assert f"{PATH}: no patch for this file: the patched file does not parse: found undefined alias" in body


def test_the_suites_teardown_is_left_to_a_host_that_does_it_alike_and_else_no_fold() -> None:
    """The host's own steps after its tests (copy the logs out of the container, then remove
    it) must not find the suite's teardown run before them."""
    host_after = "      - name: Copy logs\n        run: docker cp ci:/logs .\n"
    cleanup = "      - name: Cleanup container\n        if: always()\n        run: docker rm -f ci\n"
    text = workflow()
    text = text.replace("--total-partitions 4\n", "--total-partitions 4\n" + host_after + cleanup)
    alike = text.replace(SUITE_TEST, SUITE_TEST + cleanup)
    p = plan(alike, runs(alike))
    assert [(f.job, f.into, f.steps) for f in p.folds] == [("unit-amd-rocm700", "big-amd-rocm700", ("Run unit tests",))]
    patch = analyze({PATH: alike}, runs(alike), RepoConfig()).patch
    added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert "+        run: pytest unit" in added and not [line for line in added if "docker" in line]
    own = text.replace(SUITE_TEST, SUITE_TEST + "      - name: Upload unit logs\n        run: cp -r logs out\n")
    p = plan(own, runs(own))
    assert p.folds == ()
    assert next(f for f in p.findings if f.job == "unit-amd-rocm700").reason == (
        "short suite with no host to fold into (`big-amd-rocm700`: the suite's step `Upload unit logs` after its "
        "tests has no like among the host's steps after its own (`Copy logs`, ...))")
    # a step of the same name that is another step: the reason named it twice, not what differs (tinygrad's uploads)
    upload = "      - name: Upload logs\n        uses: actions/upload-artifact@v4\n        with: {name: %s, path: logs}\n"
    namesake = text.replace("--total-partitions 4\n" + host_after, "--total-partitions 4\n" + upload % "big-logs")
    namesake = namesake.replace(SUITE_TEST, SUITE_TEST + upload % "unit-logs")
    assert next(f for f in plan(namesake, runs(namesake)).findings if f.job == "unit-amd-rocm700").reason == (
        "short suite with no host to fold into (`big-amd-rocm700`: the suite's step `Upload logs` after its tests is "
        "not the host's step of that name: `with.name` differ)")
    suite = next(j for j in parse_workflow(text, PATH).jobs.values() if j.id == "unit-amd-rocm700")
    host = parse_workflow(text, PATH).jobs["big-amd-rocm700"]
    untold = lambda step: "other" if step.name == "Run unit tests" else RepoConfig().step_category(step)  # noqa: E731
    assert suite.fold_steps(host, untold)[1] == (
        "the suite has no step named as a test, so what of it is teardown cannot be told, and the host has steps of "
        "its own after its tests (`Copy logs`, ...)")
    lone = workflow().replace(SUITE_TEST, SUITE_TEST + "      - name: Upload unit logs\n        run: cp -r logs out\n")
    p = plan(lone, runs(lone))  # a host with nothing after its tests: the suite's teardown follows its tests there
    assert [f.steps for f in p.folds] == [("Run unit tests", "Upload unit logs")]


def test_the_host_with_most_headroom_wins() -> None:
    text = workflow(second_host=True, host_timeout="timeout-minutes: 250")
    p = plan(text, runs(text, other_shards=2))
    assert [f.into for f in p.folds] == ["other-amd-rocm700"]


def test_long_or_cheap_suites_stay() -> None:
    text = workflow()
    assert plan(text, runs(text, suite_tests=20)).folds == ()  # p90 over 15 min
    low_share = plan(text, runs(text, suite_tests=14, setup=10))
    assert low_share.folds == ()
    assert any("setup is only" in f.reason for f in low_share.findings)


def test_fewer_than_three_samples_are_provisional_and_keep_their_timeout() -> None:
    text = workflow()
    fold = plan(text, runs(text, n=2)).folds[0]
    assert fold.provisional and fold.samples == 2
    assert fold.timeout_minutes == 30 and fold.timeout_note == "30 min, as its own step had"


def test_reshard_from_shard_times_to_the_smallest_safe_count() -> None:
    text = workflow()
    p = plan(text, runs(text))  # 4 shards of ~20 min, 60 min timeout -> limit 36 min
    reshard = p.reshards[0]
    assert (reshard.job, reshard.from_count, reshard.to_count, reshard.estimate) == ("big-amd-rocm700", 4, 3, "shard times")
    # 81 min in all, imbalance 22/20.25: 3 shards -> 27 * 1.086 = 29.3 min <= 36; 2 -> 44 > 36
    assert reshard.predicted_longest_p90_s == pytest.approx(81 / 3 * 22 / 20.25 * 60)


@pytest.mark.parametrize("command, after, flag", [
    ("pytest tests --splits 4 --group ${{ matrix.part }}", "pytest tests --splits 3 --group ${{ matrix.part }}", "--splits"),
    ("pytest tests --num-shards=4 --shard-id=${{ matrix.part }}", "pytest tests --num-shards=3 --shard-id=${{ matrix.part }}",
     "--num-shards"),
    ("pytest tests --num-shards=${{ strategy.job-total }} --shard-id=${{ matrix.part }}", None, "strategy.job-total"),
])
def test_pytest_split_and_pytest_shard_counts_are_resharded(command: str, after: str | None, flag: str) -> None:
    """review80 f01: a pytest-split (`--splits 4 --group`) or pytest-shard (`--num-shards`) matrix was
    "no test command carries the shard count 4"; with `${{ strategy.job-total }}` the count is the
    matrix's own length, and its list is all a reshard changes."""
    text = workflow().replace("python3 run_suite.py --partition-id ${{ matrix.part }} --total-partitions 4", command)
    analysis = analyze({PATH: text}, runs(text), RepoConfig())
    (reshard,) = analysis.plan.reshards
    assert (reshard.job, reshard.from_count, reshard.to_count, reshard.flag) == ("big-amd-rocm700", 4, 3, flag)
    (lane,) = analysis.lanes
    assert lane.edit is not None
    patched = lane.edit.after  # (the unit suite folds into shard 0 too)
    assert "part: [0, 1, 2, 3]" not in patched and patched.count("part: [0, 1, 2]\n") == 1
    assert patched.count(f"run: {after or command}\n") == 1 and (after is None or command not in patched)


@pytest.mark.parametrize("command", [
    # review82 f04: `job-total` in an echo, the count a literal in a flag foldbot does not rewrite: trimming the
    # matrix would have dropped group 4's tests
    'echo "shard ${{ matrix.part }} of ${{ strategy.job-total }}" && pytest --test-group-count 4 --test-group ${{ matrix.part }}',
    "pytest --test-group-count 4 --test-group ${{ matrix.part }}  # of ${{ strategy.job-total }}",
])
def test_a_count_foldbot_cannot_change_is_not_taken_from_a_mention_of_the_job_total(command: str) -> None:
    text = workflow().replace("python3 run_suite.py --partition-id ${{ matrix.part }} --total-partitions 4", command)
    p = plan(text, runs(text))
    assert p.reshards == () and "no test command carries the shard count 4" in {
        f.job: f.reason for f in p.findings}["big-amd-rocm700"]


def test_the_count_is_read_from_the_test_step_not_an_earlier_one_that_prints_it() -> None:
    """review82 f03: an `echo` of the count before the test step was taken for the test step: 4 shards of
    50 min were resharded to 1 on the echo's second."""
    text = workflow().replace("      - name: Run suite\n", "      - name: Print shard\n        run: echo ${{ matrix.part }} "
                              "--num-shards=${{ strategy.job-total }}\n      - name: Run suite\n")
    text = text.replace("python3 run_suite.py --partition-id ${{ matrix.part }} --total-partitions 4",
                        "pytest --num-shards=${{ strategy.job-total }} --shard-id=${{ matrix.part }}")
    p = plan(text, runs(text, shard_tests=[50, 50, 50, 50]))
    assert p.reshards == ()
    assert {f.job: f.reason for f in p.findings}["big-amd-rocm700"].startswith("no fewer shards: today's 4 already run")


def test_a_lane_of_other_jobs_is_no_sibling_and_gets_no_warning() -> None:
    """review83 f04: with several lanes configured (pytorch's default, inductor and periodic ROCm lanes), the
    report warned of every lane without the measured jobs ("has no ... job; the reshard is not carried
    there"); a lane with none of them is no sibling. One that has the job, and cannot take the change, is said."""
    text = workflow()
    other = ".github/workflows/pr-test-amd-rocm710.yml"
    none_alike = workflow().replace("unit-amd-rocm700", "lint-amd-rocm710").replace("big-amd-rocm700", "inductor-amd-rocm710")
    analysis = analyze({PATH: text, other: none_alike}, runs(text), RepoConfig())
    assert analysis.plan.folds and analysis.plan.reshards
    assert not [w for w in analysis.warnings if other in w]
    alike = workflow(parts=3).replace("rocm700", "rocm710")
    analysis = analyze({PATH: text, other: alike}, runs(text), RepoConfig())
    assert [w for w in analysis.warnings if other in w] == [
        f"{other}: `big-amd-rocm710` does not have 4 shards with a `--total-partitions` count; not resharded there"]


def test_never_more_shards_and_never_a_reshard_without_spare_time() -> None:
    text = workflow(step_timeout="40")
    p = plan(text, runs(text, shard_tests=[30, 31, 29, 30]))
    assert p.reshards == ()
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "no fewer shards: today's 4 already run 31 min at p90 (limit 24 min = 60% of 40; shard times); about 6 would "
        "keep the longest within the limit"]


LOG = """\
2026-08-01T10:00:00.0000000Z [run_suite] est_time=600 file=a.py
2026-08-01T10:00:00.0000000Z [run_suite] est_time=500 file=b.py
2026-08-01T10:00:00.0000000Z [run_suite] est_time=300 file=c.py
2026-08-01T10:00:00.0000000Z [run_suite] est_time=200 file=d.py
2026-08-01T10:00:01.0000000Z docker noise
2026-08-01T10:10:00.0000000Z End (1/2): filename=a.py, elapsed=900
2026-08-01T10:15:00.0000000Z End (2/2): filename=d.py, elapsed=100
2026-08-01T10:15:00.0000000Z End (2/2): filename=d.py, elapsed=100
TIMINGS BEGIN
{"file": "a.py", "elapsed": 1200, "partition": 0}
TIMINGS END
"""


def test_log_parsing_and_lpt() -> None:
    log = parse_log(LOG)
    assert log.estimates == {"a.py": 600, "b.py": 500, "c.py": 300, "d.py": 200}
    assert log.measured == {"a.py": 1200, "d.py": 200}  # the block wins; a retried file adds up
    assert lpt(log.estimates, 2) == [["a.py", "d.py"], ["b.py", "c.py"]]
    # b and c are not measured: their estimate times the median measured/estimate ratio (1.0 or 2.0 -> 2.0)
    assert predicted_longest_shard(log, 2) == max(1200 + 200, (500 + 300) * 2.0)
    assert predicted_longest_shard(log, 5) is None  # never an empty shard


def test_reshard_with_logs_uses_per_file_times() -> None:
    text = workflow(parts=2)
    bundles = runs(text, shard_tests=[13, 12])  # (the files' 25 min: the shards spent nothing else)
    log = parse_log(LOG.replace("elapsed=900", "elapsed=500").replace('"elapsed": 1200', '"elapsed": 500'))
    shard_ids = {b["workflow_run"]["id"]: [j["id"] for j in b["jobs"] if j["name"].startswith("big")] for b in bundles}
    logs = {ids[0]: log for ids in shard_ids.values()}
    p = plan(text, bundles, logs=logs)
    reshard = p.reshards[0]
    assert reshard.estimate == "per-file logs"
    assert reshard.to_count == 1
    assert reshard.predicted_longest_p90_s == pytest.approx(500 + 500 + 300 + 200)


def test_time_the_shards_spent_past_their_files_is_counted_per_file() -> None:
    """The files' own times (`elapsed`) leave out the runner's time between them: the shards'
    step took 30 min for 25 min of files. Predicted from the files alone, one shard ran 25 min,
    below what the two were measured to take together; each of the 4 files now costs 75 s more."""
    text = workflow(parts=2)
    bundles = runs(text, shard_tests=[15, 15])
    log = parse_log(LOG.replace("elapsed=900", "elapsed=500").replace('"elapsed": 1200', '"elapsed": 500'))
    logs = {[j["id"] for j in b["jobs"] if j["name"].startswith("big")][0]: log for b in bundles}
    reshard = plan(text, bundles, logs=logs).reshards[0]
    assert (reshard.estimate, reshard.to_count) == ("per-file logs", 1)
    assert reshard.predicted_longest_p90_s == pytest.approx(500 + 500 + 300 + 200 + 4 * 75)
    assert ShardPredictor(log, spent=30 * 60).per_file == pytest.approx(75)
    assert ShardPredictor(log, spent=20 * 60).per_file == 0  # (files that took longer than the step: no credit)


def test_timeout_expressions_take_the_branch_of_the_measured_runners() -> None:
    expr = "${{ (inputs.runner_arch || 'mi300') == 'mi300' && 180 || 150 }}"
    assert timeout_minutes(expr, ("linux-mi300-2gpu-sglang",)) == 180
    assert timeout_minutes(expr, ("linux-mi325-2gpu-sglang",)) == 150
    assert timeout_minutes(expr, ()) == 150
    assert timeout_minutes(45) == 45 and timeout_minutes(None) is None


def test_config_thresholds_change_the_plan() -> None:
    text = workflow()
    strict = parse_config("fold:\n  max_test_minutes: 3\nreshard:\n  safety: 0.3\n")
    p = plan(text, runs(text), strict)
    assert p.folds == () and p.reshards == ()


def test_a_reshard_that_slows_the_lane_offers_the_count_that_keeps_its_wall_clock() -> None:
    """Eight shards of 10 min with 5 min of setup, four at a time (two waves: 30 min).
    Three shards fit the step's limit but run 32 min in one wave; four keep the wall
    clock (25 min), and the report offers them with an id of their own."""
    from bot.analysis import analyze
    from bot.report import to_markdown

    text = workflow(parts=8).replace("    strategy:\n      fail-fast: false\n      matrix:\n        part: [0, 1, 2, 3, 4, 5, 6, 7]",
                                     "    strategy:\n      fail-fast: false\n      max-parallel: 4\n      matrix:\n"
                                     "        part: [0, 1, 2, 3, 4, 5, 6, 7]")
    assert "max-parallel" in text
    bundles = runs(text, shard_tests=[10] * 8, setup=5, suite_tests=40)
    reshard = plan(text, bundles).reshards[0]
    assert (reshard.from_count, reshard.to_count, reshard.neutral_count) == (8, 3, 4)
    assert reshard.wall_after_s > reshard.wall_before_s
    analysis = analyze({PATH: text}, bundles, RepoConfig())
    neutral = next(s for s in analysis.suggestions if s.kind == "reshard-neutral")
    assert "--total-partitions 4" in neutral.patch and "--total-partitions 3" not in neutral.patch
    body = to_markdown(analysis)
    assert f"Or 4 shards, which keeps the wall clock and saves 4 setup cycles: `/fold approve {neutral.patch_id}`." in body
    from bot.report import pull_summary

    assert "from 8 to 4 shards, the fewest that keep the lane's wall clock" in pull_summary(analysis, neutral)


# Modelled on pytorch/torchtitan's integration_test_8gpu_features.yaml (@00f40edf): one caller of pytorch/test-infra's
# `linux_job_v2.yml` with a matrix of a CUDA and a ROCm entry; the tests run in the other repository's steps.
TITAN_PATH = ".github/workflows/integration_test_8gpu_features.yaml"
TITAN = """name: 8 GPU Feature Tests
on: pull_request
jobs:
  build-test:
    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main
    strategy:
      matrix:
        include:
          - name: cuda
            runner: linux.g5.48xlarge.nvidia.gpu
          - name: rocm
            runner: linux.rocm.gpu.gfx942.4
    with:
      runner: ${{ matrix.runner }}
      script: python -m tests.integration_tests.run_tests --test_suite features --ngpu 4
"""


def test_a_caller_of_another_repositorys_workflow_is_told_to_change_what_it_passes_once() -> None:
    """The called file is pytorch/test-infra's, not the caller's to change: the finding says so (it used to say
    "change that file"), and it is the job's only one (the caller's cuda/rocm `include` list was also said to be
    "an `include` list; shard count left alone", as if it were shards)."""
    from tests.builders import Step, job
    steps = [Step("Set up job", 0.1), Step("Pull docker image", 15), Step("Run script in container", 30)]
    bundles = [bundle(run_id=700 + r, repo="pytorch/torchtitan", workflow_path=TITAN_PATH,
                      workflow_name="8 GPU Feature Tests", head_sha=f"{r:040x}", start=START + timedelta(hours=r), jobs=[
                          job(f"build-test ({name}, {runner}) / linux-job", steps, [runner])
                          for name, runner in (("cuda", "linux.g5.48xlarge.nvidia.gpu"), ("rocm", "linux.rocm.gpu.gfx942.4"))])
               for r in range(3)]
    analysis = analyze({TITAN_PATH: TITAN}, bundles, RepoConfig())
    assert analysis.stats["build-test"].samples == 3
    assert [f.reason for f in analysis.plan.findings if f.job == "build-test"] == [
        "its AMD jobs run the reusable workflow `pytorch/test-infra/.github/workflows/linux_job_v2.yml@main` of another "
        "repository (`pytorch/test-infra`), whose steps are not in this repository; to fold or reshard them, change what "
        "this job passes it (its `with:` or its matrix) by hand, with the times above"]


CALLER_LANE = """name: Test Artifacts
on: pull_request
jobs:
  configure:
    runs-on: ubuntu-24.04
    outputs:
      components: ${{ steps.c.outputs.components }}
    steps:
      - id: c
        run: python fetch_test_configurations.py
  test_components:
    name: Test ${{ matrix.components.job_name }}
    needs: configure
    strategy:
      fail-fast: false
      matrix:
        components: ${{ fromJSON(needs.configure.outputs.components) }}
    uses: ./.github/workflows/test_component.yml
    with:
      component: ${{ toJSON(matrix.components) }}
"""


def _component(name: str, test_minutes: float) -> list[Step]:
    return [Step("Set up job", 0.1), Step("Initialize containers", 2), Step("Checkout", 0.2),
            Step("Install dependencies", 5), Step("Test", test_minutes), Step("Complete job", 0.1)]


def _caller_runs() -> list[dict]:
    components = {"rocprim": (1, 5.0), "hipcub": (1, 4.0), "miopen": (3, 40.0)}
    out = []
    for r in range(4):
        jobs = [job("Configure test matrix", [Step("Set up job", 0.1), Step("Run python", 0.2)], ["ubuntu-24.04"])]
        for component, (shards, minutes) in components.items():
            for shard in range(1, shards + 1):
                jobs.append(job(f"Test {component} / Test {component} (shard {shard}/{shards}) (gfx942)",
                                _component(component, minutes + r * 0.1), ["linux-mi325-1gpu-ossci-rocm"]))
        jobs.append(job("Test rocprim / Check runner (gfx942)", [Step("Set up job", 0.1), Step("Checkout", 0.2),
                                                                 Step("Install dependencies", 3)],
                        ["linux-mi325-1gpu-ossci-rocm"]))
        out.append(bundle(run_id=300 + r, repo="o/r", workflow_path=".github/workflows/test_artifacts.yml",
                          workflow_name="Test Artifacts", head_sha=f"{r:040x}", jobs=jobs,
                          start=START + timedelta(days=r)))
    return out


def test_the_jobs_a_reusable_workflow_runs_are_measured_each_on_their_own() -> None:
    """review88 f02 and f01, review89 f01 (TheRock's `test_artifacts.yml`, transformers' AMD CI): every job a
    caller runs in a reusable workflow was pooled as the caller's "shards" (one setup share, one bar), which hid
    the short, setup-bound libraries a fold is for; the caller's advice named a matrix as if it were written
    in the file; and a called job that only checks the runner made the whole caller "no step is a test"."""
    path = ".github/workflows/test_artifacts.yml"
    analysis = analyze({path: CALLER_LANE}, _caller_runs(), RepoConfig())
    report = to_json(analysis)
    (row,) = [r for r in report["history"] if r["workflow_job"] == "test_components"]
    assert row["shards"] == 20  # (the caller's own figures pool them, as before)
    assert [(c["called_job"], c["samples"], c["shards"], c["setup_share"]) for c in row["called_jobs"]] == [
        ("Test hipcub", 4, 4, 0.6407), ("Test miopen", 4, 12, 0.1556), ("Test rocprim", 4, 4, 0.5896)]
    (finding,) = [f.reason for f in analysis.plan.findings if f.job == "test_components"]
    assert finding == (
        "its AMD jobs run in the reusable workflow `./.github/workflows/test_component.yml`, whose matrices and steps "
        "foldbot does not edit; to fold or reshard them, change the file that holds them (or the matrix this job "
        "passes it: its matrix axis `components` comes from an expression, known only when a run starts) by hand, "
        "with the times above; of the 3 jobs it runs there, `Test hipcub` (4.3 min of tests at p90, 64% setup), "
        "`Test rocprim` (5.3 min of tests at p90, 59% setup) are short and mostly setup: a job of their own pays a "
        "runner's setup for a few minutes of tests, a suite to fold into another of those jobs")
    assert [(u.subject, u.reason) for u in analysis.unmeasured] == [
        ("test_components / Check runner", "ran in 4 runs but no step is classified as a test; its 3 min were all "
                                           "in setup steps")]
    markdown = to_markdown(analysis)
    assert ('    x-axis ["test_components.Test-miopen", "test_components.Test-rocprim", "test_components.Test-hipcub", '
            '"test_components.Check-runner"]') in markdown
    assert "Each bar is one workflow job (its shards added up; of a caller of a reusable workflow, each job it runs " \
           "there): **red** is setup, **blue** the tests." in markdown



def test_a_run_whose_caller_job_its_gate_skipped_is_a_gated_run() -> None:
    """review94 f03 (TheRock's `test_artifacts.yml`: `Configure test matrix` finds nothing to test, the caller is
    skipped): a skipped caller has no `runs-on` of its own, so it was no AMD job and the run no gated one; its
    workflow job measured on AMD runners in other runs makes it one."""
    from bot.analysis import gated
    from bot.timing import job_stats, run_timing
    from bot.workflow import parse_workflow

    path = ".github/workflows/test_artifacts.yml"
    workflow = parse_workflow(CALLER_LANE, path)
    measured = [run_timing(b, workflow, RepoConfig()) for b in _caller_runs()]
    for name in ("Test ${{ matrix.components.job_name }}", "test_components"):
        skipped = bundle(run_id=400, repo="o/r", workflow_path=path, workflow_name="Test Artifacts", head_sha="f" * 40,
                         jobs=[job("Configure test matrix", [Step("Set up job", 0.1), Step("Run python", 0.2)],
                                   ["ubuntu-24.04"]), skipped_job(name)], start=START)
        run = run_timing(skipped, workflow, RepoConfig())
        assert gated(run, job_stats(measured)) and not gated(run)


# Modelled on SGLang's `_pr-test-stage-amd.yml` (@ccd8584b): the AMD suites' shards run in a reusable workflow whose
# matrix is `partition: ${{ fromJson(inputs.partitions).arr }}`; each lane's caller passes the count as a literal.
STAGE_CALLER = """name: PR Test (AMD, ROCm 7.2)
on: pull_request
jobs:
  stage-b-test-1-gpu-small-amd-rocm720:
    uses: ./.github/workflows/_pr-test-stage-amd.yml
    with:
      suite: stage-b-test-1-gpu-small-amd
      runner_arch: mi300
      partitions: '{"size":4,"arr":[0,1,2,3]}'
      max_parallel: 4
"""


def test_a_caller_that_passes_its_shard_count_is_told_to_change_it_there() -> None:
    """review100 f03: with the stage workflow the shard count is the caller's own `with: partitions:`, in the lane
    file; the advice had sent the reader to the called file, which holds no count."""
    path = ".github/workflows/pr-test-amd-rocm720.yml"
    caller = "stage-b-test-1-gpu-small-amd-rocm720"
    runs = [bundle(run_id=400 + r, repo="sgl-project/sglang", workflow_path=path, workflow_name="PR Test (AMD, ROCm 7.2)",
                   head_sha=f"{r:040x}", start=START + timedelta(days=r), jobs=[
                       job(f"{caller} / stage-b-test-1-gpu-small-amd (linux-mi300-1gpu-sglang, {p})",
                           [Step("Set up job", 0.1), Step("Start CI container", 30), Step("Install dependencies", 20),
                            Step("Run test", 12 + p)], ["linux-mi300-1gpu-sglang"]) for p in range(4)])
            for r in range(3)]
    (finding,) = [f.reason for f in analyze({path: STAGE_CALLER}, runs, RepoConfig()).plan.findings if f.job == caller]
    assert finding == (
        "its AMD jobs run in the reusable workflow `./.github/workflows/_pr-test-stage-amd.yml`, whose matrices and "
        "steps foldbot does not edit; how many shards they run is this job's `with: partitions:` (4 shards), which "
        "foldbot does not set either: `.github/workflows/_pr-test-stage-amd.yml` was not read, no workflow of this "
        "repository at this commit or one that does not parse; to reshard them, change it by hand, with the times "
        "above (to fold them, the file that holds them)")
    plain = STAGE_CALLER.replace("""      partitions: '{"size":4,"arr":[0,1,2,3]}'\n""", "")
    (finding,) = [f.reason for f in analyze({path: plain}, runs, RepoConfig()).plan.findings if f.job == caller]
    assert "partitions" not in finding and "change the file that holds them by hand" in finding


def test_a_host_on_other_runners_is_said_so_before_its_matrix_form() -> None:
    """review103 f05: nod-ai/shark-ai's CPU `test` matrix (an `include` list over GitHub's runners) was turned down
    as a host because "its matrix uses include/exclude", as if another form would make it one."""
    path = ".github/workflows/ci-sharktank.yml"
    text = """name: CI - sharktank
on: pull_request
jobs:
  test:
    strategy:
      matrix:
        include:
          - {runs-on: ubuntu-24.04}
          - {runs-on: windows-2022}
    runs-on: ${{ matrix.runs-on }}
    steps:
      - name: Run tests
        run: pytest sharktank
  test_with_data:
    runs-on: linux-mi325-8gpu-ossci-nod-ai
    steps:
      - name: Install deps
        run: pip install -r requirements.txt
      - name: Run data tests
        run: pytest sharktank --with-data
"""
    runs = [bundle(run_id=500 + r, repo="nod-ai/shark-ai", workflow_path=path, workflow_name="CI - sharktank",
                   head_sha=f"{r:040x}", start=START + timedelta(days=r), jobs=[
                       job("test (ubuntu-24.04)", [Step("Run tests", 5)], ["ubuntu-24.04"]),
                       job("test (windows-2022)", [Step("Run tests", 6)], ["windows-2022"]),
                       job("test_with_data", [Step("Set up job", 0.1), Step("Install deps", 20),
                                              Step("Run data tests", 4)], ["linux-mi325-8gpu-ossci-nod-ai"])])
            for r in range(3)]
    (reason,) = [f.reason for f in analyze({path: text}, runs, RepoConfig()).plan.findings if f.job == "test_with_data"]
    assert reason == "short suite with no host to fold into (`test`: runs on other runners)"


def test_a_file_killed_once_and_run_to_its_end_since_withholds_no_count() -> None:
    """review104 f08: one kill in the oldest run read had withheld the shard count while that run stayed in the
    history ("no shard count is said while a test hangs"), though the runs after it ran the file to its end."""
    text, bundles, _ = _hung_history(killed=True)
    parts = lpt(HUNG_FILES, 4)
    oldest = bundles[0]["workflow_run"]["id"]

    def log(run_id: int, k: int) -> str:
        if run_id == oldest:
            return _hung_log(k, parts, True)
        return (_hung_log(k, parts, False).replace("elapsed=1800", "elapsed=300").replace('"elapsed": 1800', '"elapsed": 300')
                .replace('"passed": false', '"passed": true').replace("\u2717 FAILED: test/hang.py returned exit code 1\n", ""))
    logs = {j["id"]: parse_log(log(b["workflow_run"]["id"], int(j["name"][-2]))) for b in bundles for j in b["jobs"]
            if j["name"].startswith("big-amd-rocm700 (")}
    p = plan(text, bundles, logs=logs)
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/hang.py", 1, 1800.0, 300.0, killed=True),)}
    assert p.reshard_candidates == {"big-amd-rocm700": len(bundles) - 1}
    (reason,) = [f.reason for f in p.findings if f.job == "big-amd-rocm700"]
    assert "while a test hangs" not in reason and "cut off" not in reason
    assert reason.endswith("about 5 would keep the longest within the limit")


def _killing_history(changed: list[dict[str, tuple[str, float]]], text: str | None = None,
                     labels: list[str] | None = None) -> tuple[str, list[dict], dict]:
    """`_hung_history`'s suite (limit 36 min of 60) over `len(changed)` runs, oldest first, in SGLang runner logs:
    each file ends in its estimated time but those a run changes (file -> ("end", seconds); ("kill", cap): `✗ TIMEOUT:
    <file> after <cap> seconds`, its cap in TIMINGS; ("cut", seconds): begun, cut off by the step's timeout after
    that long, last of its shard, and no TIMINGS; ("retrykill", cap): killed at it with a retry to follow, `[CI Retry]
    <file> timed out after <cap>s; waiting 60s before retry (attempt 2/2)`, `[CI Retry] Attempt 2/2 for <file>`, and
    killed again; ("retryend", cap): so, and then ended in its estimated time; ("retrycut", cap): so, and the step's
    timeout cut the retry off after 10 min, last of its shard). Each shard's time is its files' (a killed file's: its
    cap; each retried attempt's too, and the wait before it); each run's shards ran on `labels[r]` (default:
    `linux-mi300-1gpu`)."""
    parts = lpt(HUNG_FILES, 4)
    stamp = "2026-08-01T10:00:00.0000000Z "

    def files(k: int, run: dict[str, tuple[str, float]]) -> list[tuple[str, str, float]]:
        out = [(f, *run.get(f, ("end", HUNG_FILES[f] * 60))) for f in parts[k]]
        return sorted(out, key=lambda item: item[1] in ("cut", "retrycut"))

    def log(k: int, run: dict[str, tuple[str, float]]) -> str:
        lines = [f"partition: {k + 1}/4 (0-based id={k})", f"\u2705 Enabled {len(parts[k])} test(s):"]
        lines += [f"  - {f} (est_time={HUNG_FILES[f] * 60:.1f})" for f in parts[k]]
        timings = []
        for i, (f, kind, seconds) in enumerate(files(k, run)):
            lines += [f"Begin ({i}/{len(parts[k]) - 1}):", f"python3 {f}"]
            if kind.startswith("retry"):
                lines += [f"[CI Retry] {f} timed out after {seconds:.0f}s; waiting 60s before retry (attempt 2/2)",
                          f"[CI Retry] Attempt 2/2 for {f}", f"Begin ({i}/{len(parts[k]) - 1}):", f"python3 {f}"]
                kind, seconds = {"retrykill": ("kill", seconds), "retrycut": ("cut", 600)}.get(kind, ("end", HUNG_FILES[f] * 60))
            if kind == "kill":
                lines += [f"\u2717 TIMEOUT: {f} after {seconds:.0f} seconds"]
            elif kind == "end":
                lines += [f"End ({i}/{len(parts[k]) - 1}):", f"filename='{f}', elapsed={seconds:.0f}"]
            timings.append(f'{{"file": "{f}", "passed": {"false" if kind == "kill" else "true"}, "elapsed": {seconds:.0f}}}')
        if all(kind not in ("cut", "retrycut") for _, kind, _ in files(k, run)):
            lines += ["========== TIMINGS BEGIN ==========", *timings, "========== TIMINGS END =========="]
        return "\n".join(stamp + line for line in lines) + "\n"

    text = text or workflow()
    def spent(f: str, kind: str, seconds: float) -> float:
        again = {"retrykill": seconds, "retrycut": 600}.get(kind, HUNG_FILES[f] * 60)
        return seconds + 60 + again if kind.startswith("retry") else seconds

    bundles = [runs(text, n=len(changed), shard_tests=[sum(spent(*item) for item in files(k, run)) / 60 for k in range(4)],
                    label=labels[r] if labels else "linux-mi300-1gpu")[r] for r, run in enumerate(changed)]
    logs = {j["id"]: parse_log(log(int(j["name"][-2]), run)) for b, run in zip(bundles, changed) for j in b["jobs"]
            if j["name"].startswith("big-amd-rocm700 (")}
    return text, bundles, logs


HANG = ("kill", 2400)  # (40 min: past the 36-min limit; `test/hang.py` ends in 5 min where it is not killed)
HANG_SAID = ("in 1 run a test hung past the limit alone (`test/hang.py`, killed at the runner's `--timeout-per-file` "
             "after 40 min, 5 min where it ended): no count keeps such a hang within it; fix the hung test")


def test_a_run_where_a_file_hung_past_the_limit_is_read_with_its_usual_time_there() -> None:
    """review120 f04, SGLang's side: `test/hang.py` (5 min in four runs) was killed at `--timeout-per-file 2400` in
    the oldest, past the 36-min limit. That run's shard times stood in for its per-file times, and its 54-min shard
    made today's 4 shards look over the limit: "about 5 would keep the longest within the limit", though no count
    keeps a 40-min hang within 36 min. The hang is said, and the run is read with the file at its usual time there
    (not left out: review126 f09, its other files' times count)."""
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, {}, {}, {}, {}])
    p = plan(text, bundles, logs=logs)
    (reshard,) = p.reshards
    assert (reshard.from_count, reshard.to_count, reshard.samples, reshard.log_runs, reshard.estimate) == \
        (4, 2, 5, 5, "per-file logs")
    assert (reshard.hung_runs, reshard.hung_past, reshard.hung_files) == (1, HANG_SAID, 1)
    assert (round(reshard.wall_before_s / 60), p.hang_runs, p.kill_fallbacks) == (119, {"big-amd-rocm700": 1}, {})
    analysis = analyze({PATH: text}, bundles, RepoConfig(), logs)
    report = to_markdown(analysis)
    assert ("predicted at 36 min at p90 over 5 runs, within 36 min (60% of the 60 min step timeout). Estimate from "
            "per-file logs. In 1 run a test hung past the limit alone \\(`test/hang.py`, killed at the runner's "
            "`--timeout-per-file` after 40 min, 5 min where it ended\\): no count keeps such a hang within it; fix the "
            "hung test; it is taken at its usual time there. Saves 2 setup cycles") in report
    (suggestion,) = [s for s in to_json(analysis)["suggestions"] if s["kind"] == "reshard"]
    assert (suggestion["samples"], suggestion["hung_runs"], suggestion["hung_past"]) == (5, 1, reshard.hung_past)
    assert [u["reason"] for u in to_json(analysis)["unmeasured"] if u["subject"] == "big-amd-rocm700"] == [
        "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: `test/hang.py` (in 1 "
        "run, killed after 40 min); the runner records that cap as the file's time, which is only how long it ran at "
        "least: where it ran past the shards' limit and another run ended it, it is taken at its usual time there (1 "
        "run), as no count keeps such a hang within the limit"]
    # the run's other files count: `test/f1.py` ending after 40 min there keeps today's 4 shards, with the hang or not
    slow = {"test/f1.py": ("end", 2400)}
    for first in (slow, {**slow, "test/hang.py": HANG}):
        text, bundles, logs = _killing_history([first, {}, {}, {}, {}])
        p = plan(text, bundles, logs=logs)
        assert p.reshards == ()
        assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
            (f"{HANG_SAID}. With it at its usual time there, " if "test/hang.py" in first else "")
            + "4 shards are needed: 3 would run 42 min at p90 (limit 36 min = 60% of 60; per-file logs)"]
    # two files, each hung once (review127 g07)
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, {"test/f6.py": HANG}, {}, {}, {}])
    (reshard,) = plan(text, bundles, logs=logs).reshards
    assert (reshard.hung_runs, reshard.hung_files, reshard.hung_past) == (2, 2, (
        "in 2 runs tests hung past the limit alone (`test/hang.py`, killed at the runner's `--timeout-per-file` after 40 "
        "min in 1 run, 5 min where it ended; `test/f6.py`, killed at the runner's `--timeout-per-file` after 40 min in 1 "
        "run, 6 min where it ended): no count keeps such a hang within it; fix the hung tests"))
    assert "fix the hung tests; they are taken at their usual times there. Saves" in \
        to_markdown(analyze({PATH: text}, bundles, RepoConfig(), logs))
    # a count written elsewhere too: the line that says so says the hang first (review126 f03)
    results = """  results:
    needs: [big-amd-rocm700]
    runs-on: ubuntu-latest
    steps:
      - name: Check every shard
        run: for shard in {0..3}; do cat log-$shard.txt; done
"""
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, {}, {}, {}, {}], text=workflow() + results)
    assert [f.reason for f in plan(text, bundles, logs=logs).findings if f.job == "big-amd-rocm700"] == [
        f"{HANG_SAID}. With it at its usual time there, the times allow 2 shards (the longest 36 min at p90, within 36 "
        "min; per-file logs), but its 4 are also counted in `results`'s `Check every shard` (`{0..3}`), which the patch "
        "would leave behind: change both by hand"]


def test_a_hang_past_the_limit_asks_for_no_more_shards_where_the_other_runs_need_more() -> None:
    """The same kill (30 min, past an 18-min limit: `reshard.safety` 0.3), today's longest shard 19 min without it:
    more shards are advised from the runs with the file at its usual time, beside the hang, not from the hung
    run's 44-min shard.

    review127 g05: with the runner's retries on, a file killed in both attempts cost its shard both caps and the wait
    between them (30 + 1 + 30 min), and only the last cap was taken back ("today's 4 already run 32 min ... about 6");
    one killed in its first attempt and ended by its retry (30 + 1 + 5 min) was taken back not at all (the runner's
    record counts the last attempt only). Both are the same hang, at the file's usual time."""
    for kind in ("kill", "retrykill", "retryend"):
        text, bundles, logs = _killing_history([{}, {}, {"test/hang.py": (kind, 1800)}, {}, {}])
        p = plan(text, bundles, RepoConfig(reshard_safety=0.3), logs=logs)
        assert p.reshards == () and p.hang_runs == {"big-amd-rocm700": 1}, kind
        assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
            "in 1 run a test hung past the limit alone (`test/hang.py`, killed at the runner's `--timeout-per-file` after "
            "30 min, 5 min where it ended): no count keeps such a hang within it; fix the hung test. With it at its usual "
            "time there, no fewer shards: today's 4 already run 19 min at p90 (limit 18 min = 30% of 60; per-file logs); "
            "about 5 would keep the longest within the limit"], kind


def test_a_kill_a_retry_followed_is_named_where_it_is_a_hang_and_charged_to_no_other_file() -> None:
    """review132 r04, r03, r02: a kill a retry followed is a kill like the last attempt's, where it is a hang.
    - Past the limit, the retry ending it: said with the suite's count and named under "Could not measure", as
      the same kill without a retry is (r04: it was in the count's sentence alone).
    - On mi35x, where the file never ended (its retry cut off by the step's timeout): it hangs there, and no count
      is said while it does (r03: only the last attempt's kills were read for a hang, and the run's 60-min shard was
      said to need a longer timeout and the file to be split); the cut-off retry ran 10 min, not the 51 min of the
      attempt before and the wait (r02: those were charged to the file the step cut off).
    - Ended by its retry, then the next file cut off after 10 min: that file ran 10 min, not 41."""
    text, bundles, logs = _killing_history([{"test/hang.py": ("retryend", 2400)}, {}, {}, {}, {}])
    p = plan(text, bundles, logs=logs)
    assert ([(r.to_count, r.hung_runs, r.hung_past) for r in p.reshards], p.hang_runs) == \
        ([(2, 1, HANG_SAID)], {"big-amd-rocm700": 1})
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/hang.py", 1, 2400.0, 300.0, killed=True),)}
    assert [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
            if u["subject"] == "big-amd-rocm700"] == [
        "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: `test/hang.py` (in 1 "
        "run, killed after 40 min); the runner records that cap as the file's time, which is only how long it ran at "
        "least: where it ran past the shards' limit and another run ended it, it is taken at its usual time there (1 "
        "run), as no count keeps such a hang within the limit"]
    text, bundles, logs = _killing_history([{}, {}, {}, {}, {}, {"test/hang.py": ("retrycut", 2400)}],
                                           labels=["linux-mi300-1gpu"] * 5 + ["linux-mi35x-1gpu"])
    p = plan(text, bundles, logs=logs)
    assert p.reshards == () and p.hang_runs == {}
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/hang.py", 1, 600.0, 300.0),
                                              CutOff("test/hang.py", 1, 2400.0, 300.0, killed=True))}
    (reason,) = [f.reason for f in p.findings if f.job == "big-amd-rocm700"]
    assert "no shard count is said while a test hangs: `test/hang.py` was killed at the runner's `--timeout-per-file` " \
           "after 40 min (in 1 run; the runner estimates it at 5 min)" in reason and "had not ended" not in reason
    text, bundles, logs = _killing_history([{"test/hang.py": ("retryend", 1800), "test/f0.py": ("cut", 600)},
                                            {}, {}, {}, {}])
    cut = plan(text, bundles, logs=logs).cut_off["big-amd-rocm700"]
    assert [c for c in cut if not c.killed] == [CutOff("test/f0.py", 1, 600.0, 840.0)]
    # review133 s06: on mi35x, killed and then ended by its retry in one run, killed in the next: it hangs there, and
    # "Could not measure" says which run's shard times stand in and which has the retry's time
    text, bundles, logs = _killing_history([{}, {}, {}, {}, {}, {"test/hang.py": ("retryend", 2400)},
                                            {"test/hang.py": ("kill", 2400)}],
                                           labels=["linux-mi300-1gpu"] * 5 + ["linux-mi35x-1gpu"] * 2)
    p = plan(text, bundles, logs=logs)
    assert (p.reshards, p.kill_fallbacks, p.kill_retried) == ((), {"big-amd-rocm700": 1}, {"big-amd-rocm700": 1})
    assert [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
            if u["subject"] == "big-amd-rocm700"] == [
        "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: `test/hang.py` (in 2 "
        "runs, killed after 40 min); the runner records that cap as the file's time, which is only how long it ran at "
        "least, so a run with such a file has no whole per-file times and its shard times stand in; where a retry ran "
        "it to its end, that run has the retry's time (1 run)"]
    # review134 t05: two such runs are "those runs"; one read on its shard times all the same (another file killed
    # within the limit there) is no run with the retry's time
    text, bundles, logs = _killing_history(
        [{}, {}, {}, {}, {}, {"test/hang.py": ("retryend", 2400)}, {"test/hang.py": ("retryend", 2400)},
         {"test/hang.py": ("retryend", 2400), "test/f4.py": ("kill", 1200)}, *[{"test/hang.py": ("kill", 2400)}] * 4],
        labels=["linux-mi300-1gpu"] * 5 + ["linux-mi35x-1gpu"] * 7)
    p = plan(text, bundles, logs=logs)
    assert (p.kill_fallbacks, p.kill_retried) == ({"big-amd-rocm700": 5}, {"big-amd-rocm700": 2})
    (kills,) = [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
                if u["subject"] == "big-amd-rocm700" and "killed" in u["reason"]]
    assert kills.endswith("; where a retry ran it to its end, those runs have the retry's time (2 runs)")


def test_a_hang_in_a_run_where_two_shards_hold_each_others_logs_is_taken_and_said() -> None:
    """review127 g09: shards 1 and 2 of the hung run hold each other's logs. The whole run was dropped before its
    kills were read: shard 0's own log (its header says shard 0) went unread, its 54-min shard stood in whole, and
    the hang was named nowhere ("today's 4 already run 40 min at p90 ... about 5 would keep the longest within the
    limit"). Its shards' own logs count for what they killed: the run is on its shard times, the hang taken at its
    usual time there and said, and no other cause is given for those shard times than the misplaced logs."""
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, {}, {}, {}, {}])
    one, two = [j["id"] for j in bundles[0]["jobs"] if j["name"] in ("big-amd-rocm700 (1)", "big-amd-rocm700 (2)")]
    logs[one], logs[two] = logs[two], logs[one]
    p = plan(text, bundles, logs=logs)
    (reshard,) = p.reshards
    assert (reshard.from_count, reshard.to_count, reshard.log_runs, reshard.hung_runs, reshard.hung_past) == \
        (4, 3, 4, 1, HANG_SAID)
    assert (p.hang_runs, p.kill_fallbacks, p.partial_logs) == ({"big-amd-rocm700": 1}, {}, {})
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/hang.py", 1, 2400.0, 300.0, killed=True),)}
    assert [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
            if u["subject"] == "big-amd-rocm700"] == [
        f"shard logs that are not their job's, by their header: job {one} (`part: 1`) has the log of shard 2 (its "
        f"header: `3/4 (0-based id=2)`); job {two} (`part: 2`) has the log of shard 1 (its header: `2/4 (0-based "
        "id=1)`); those runs' per-file times are not used, so shard times stand in",
        "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: `test/hang.py` (in 1 "
        "run, killed after 40 min); the runner records that cap as the file's time, which is only how long it ran at "
        "least: where it ran past the shards' limit and another run ended it, it is taken at its usual time there (1 "
        "run), as no count keeps such a hang within the limit"]

    # review132 r05: a log said to be another's is no claim on its shard: shard 1's log (with the kill) given to job 0
    # too leaves job 1's own log counted, as given to job 2 does
    for holder in (0, 2):
        text, bundles, logs = _killing_history([{"test/f1.py": ("kill", 2400)}, {}, {}, {}, {}])
        ids = {j["name"]: j["id"] for j in bundles[0]["jobs"]}
        logs[ids[f"big-amd-rocm700 ({holder})"]] = logs[ids["big-amd-rocm700 (1)"]]
        p = plan(text, bundles, logs=logs)
        assert ([(r.to_count, r.hung_runs) for r in p.reshards], len(p.misplaced_logs["big-amd-rocm700"])) == \
            ([(3, 1)], 1), holder

def test_a_hang_that_ran_its_shard_into_the_timeout_is_no_overrun_of_the_suite() -> None:
    """review126 f02 and f01: the hang's shard came within a minute of the step's timeout (55 min: 14 + 40), or ran
    into it (60 min: the hang, then `test/f0.py` cut off after 20 min). It was "already overruns ... it needs more
    shards", and the cut-off file was charged the hang's 40 min too ("`test/f0.py` ran 60 min ... split that file"):
    the killed file was in no time of its log without the runner's record. The hang is no overrun of the suite."""
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, {}, {}, {}, {}])
    text = text.replace("timeout-minutes: 60\n        run: python3", "timeout-minutes: 55\n        run: python3")
    p = plan(text, bundles, logs=logs)
    assert (p.overruns, [(r.to_count, r.hung_runs) for r in p.reshards]) == ((), [(3, 1)])
    text, bundles, logs = _killing_history([{"test/hang.py": HANG, "test/f0.py": ("cut", 1200)}, {}, {}, {}, {}])
    p = plan(text, bundles, logs=logs)
    assert p.cut_off == {"big-amd-rocm700": (CutOff("test/f0.py", 1, 1200.0, 840.0),
                                             CutOff("test/hang.py", 1, 2400.0, 300.0, killed=True))}
    (reshard,) = p.reshards
    assert (p.overruns, reshard.to_count, reshard.hung_runs, reshard.estimate, p.kill_fallbacks) == (
        (), 3, 1, "per-file logs (4 runs) and shard times (1 run)", {"big-amd-rocm700": 1})
    assert [u["reason"].split("at least")[1] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))[
        "unmeasured"] if u["subject"] == "big-amd-rocm700" and "killed" in u["reason"]] == [
        ": where it ran past the shards' limit and another run ended it, it is taken at its usual time there (1 run), as "
        "no count keeps such a hang within the limit; where the run has no whole per-file times even so, its shard times "
        "stand in (1 run)"]


def test_a_hang_is_taken_at_its_usual_time_on_its_own_runner_and_from_every_log_of_its_shards() -> None:
    """review127 g02, g03, g04: SGLang's matrices run on mi300 or mi35x under one job id (`runner_arch`); `test/hang.py`
    takes 5 min on mi300 and 25 min on mi35x, where it was killed in one run: its usual time there is 25 min, not the
    median of every runner's (5 min), so no fewer shards. A run whose logs are partial still says what ended (a
    file killed twice and ended three times, two of them in such runs, is no hang), and a run that lacks a shard's
    job is no overrun for the hang its shard 0 held."""
    slow = {"test/hang.py": ("end", 1500)}
    text, bundles, logs = _killing_history([{}, {}, {}, slow, slow, {"test/hang.py": HANG}],
                                           labels=["linux-mi300-1gpu"] * 3 + ["linux-mi35x-1gpu"] * 3)
    p = plan(text, bundles, logs=logs)
    assert (p.reshards, p.hang_runs) == ((), {"big-amd-rocm700": 1})
    (reason,) = [f.reason for f in p.findings if f.job == "big-amd-rocm700"]
    assert reason.startswith(HANG_SAID.replace("5 min where it ended", "25 min where it ended")
                             + ". With it at its usual time there, no fewer shards: today's 4 already run 39 min at p90")
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}] * 2 + [{}] * 3)
    for b in bundles[2:4]:  # (shard 3's log missing: its files are not `test/hang.py`'s)
        logs.pop(next(j["id"] for j in b["jobs"] if j["name"] == "big-amd-rocm700 (3)"))
    p = plan(text, bundles, logs=logs)
    assert ([(r.to_count, r.hung_runs) for r in p.reshards], p.partial_logs) == (
        [(3, 2)], {"big-amd-rocm700": ("3 of 4", "3 of 4")})
    unmeasured = [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
                  if u["subject"] == "big-amd-rocm700"]  # (both said: review127 g08)
    assert [u.split(";")[0] for u in unmeasured] == [
        "per-file times need every shard's log of a run", "its logs were read, but the test runner killed a test file "
        "at its `--timeout-per-file`: `test/hang.py` (in 2 runs, killed after 40 min)"]
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}] + [{}] * 4)
    text = text.replace("timeout-minutes: 60\n        run: python3", "timeout-minutes: 55\n        run: python3")
    _, more, more_logs = _killing_history([{"test/hang.py": HANG}] * 6)
    sixth = {**more[5], "jobs": [j for j in more[5]["jobs"] if j["name"] != "big-amd-rocm700 (3)"]}
    p = plan(text, [*bundles, sixth], logs={**logs, **{j["id"]: more_logs[j["id"]] for j in sixth["jobs"]
                                                       if j["id"] in more_logs}})
    assert (p.overruns, [(r.to_count, r.samples, r.hung_runs) for r in p.reshards]) == ((), [(3, 5, 2)])
    assert p.hang_runs == {"big-amd-rocm700": 2}  # (the sixth run's hang is said too: review128 h03)
    assert [(c.file, c.runs) for c in p.cut_off["big-amd-rocm700"]] == [("test/hang.py", 2)]  # (review129 i05)
    # that sixth run on mi35x, where no other run ended the file: a hang there, as in a run of every shard (i08)
    for drop in (False, True):
        text, bundles, logs = _killing_history([{}] * 5 + [{"test/hang.py": HANG}],
                                               labels=["linux-mi300-1gpu"] * 5 + ["linux-mi35x-1gpu"])
        text = text.replace("timeout-minutes: 60\n        run: python3", "timeout-minutes: 55\n        run: python3")
        if drop:
            bundles[5]["jobs"] = [j for j in bundles[5]["jobs"] if j["name"] != "big-amd-rocm700 (3)"]
        (reason,) = [f.reason for f in plan(text, bundles, logs=logs).findings if f.job == "big-amd-rocm700"]
        assert "it needs a longer timeout, not fewer shards; no shard count is said while a test hangs: `test/hang.py`" \
            in reason


def test_a_hang_is_judged_on_its_runner_whatever_its_labels_are_called() -> None:
    """review128 h01, h02, h04: on mi35x `test/hang.py` hangs (killed in 2 runs, ended in 1), on mi300 it hung once
    and ended 3 times: the hang alone is said, with its 2 runs (no "taken at its usual time" for the same file).
    One runner pool under a renamed label (SGLang's `linux-mi325-gpu-1` -> `linux-mi325-1gpu-sglang`), or labels
    listed in another order, is one runner. A file taken at its usual time on two runners says each one's."""
    hang = {"test/hang.py": HANG}
    text, bundles, logs = _killing_history([{}, {}, {}, hang, hang, hang, {}],
                                           labels=["linux-mi300-1gpu"] * 4 + ["linux-mi35x-1gpu"] * 3)
    p = plan(text, bundles, logs=logs)
    (reason,) = [f.reason for f in p.findings if f.job == "big-amd-rocm700"]
    assert reason.startswith("no fewer shards: today's 4 already run 54 min at p90")
    assert "`test/hang.py` was killed at the runner's `--timeout-per-file` after 40 min (in 2 runs;" in reason
    assert "usual time" not in reason and p.hang_runs == {}  # (its run taken on mi300 is not said: review130 j05)
    for labels in (["linux-mi325-gpu-1"] * 4 + ["linux-mi325-1gpu-sglang"],
                   ["linux.rocm.gpu.mi300.2"] * 4 + ["linux.rocm.gpu.gfx942.2"],  # (review129 i03: pytorch's pool)
                   ["linux-mi35x-gpu-1"] * 4 + ["linux-mi355x-gpu-1"],
                   ["linux.rocm.gpu.mi250.2"] * 4 + ["linux-gfx90a-gpu-rocm"],  # (review130 j02: TheRock's MI200 pool)
                   ["self-hosted,amd-gpu"] * 4 + ["amd-gpu,Self-Hosted"]):
        text, bundles, logs = _killing_history([{}, {}, {}, {}, hang], labels=labels)
        if "," in labels[0]:  # (one label each, two labels in either order)
            for b, names in zip(bundles, labels):
                for j in b["jobs"]:
                    j["labels"] = names.split(",")
        assert [(r.to_count, r.hung_runs) for r in plan(text, bundles, logs=logs).reshards] == [(2, 1)]
    slow = {"test/hang.py": ("end", 1500)}
    text, bundles, logs = _killing_history([{}, {}, {}, hang, slow, slow, slow, hang],
                                           labels=["linux-mi300-1gpu"] * 4 + ["linux-mi35x-1gpu"] * 4)
    (reason,) = [f.reason for f in plan(text, bundles, logs=logs).findings if f.job == "big-amd-rocm700"]
    assert reason.startswith(
        "in 2 runs a test hung past the limit alone (`test/hang.py`, killed at the runner's `--timeout-per-file` after 40 "
        "min, 5 min on `gfx942`, 25 min on `gfx950` where it ended): ")


def test_no_fewer_shards_are_proposed_while_a_test_hangs_on_one_runner() -> None:
    """review130 j01: nine runs on mi300 end `test/hang.py` in 5 min; the one run on mi35x killed it past the limit,
    where no run ended it: it hangs there. The p90 of ten runs leaves that run's 54-min shard out, and 4 -> 3 was
    proposed, the hang unsaid. While a test hangs no count is said, fewer shards neither; and its kill in a run that
    lacked a shard's job is said as such (j04)."""
    hang = {"test/hang.py": HANG}
    text, bundles, logs = _killing_history([{}] * 9 + [hang], labels=["linux-mi300-1gpu"] * 9 + ["linux-mi35x-1gpu"])
    p = plan(text, bundles, logs=logs)
    assert p.reshards == ()
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "today's 4 shards run 22 min at p90 (limit 36 min = 60% of 60; per-file logs (9 runs) and shard times (1 run)); "
        "no shard count is said while a test hangs: `test/hang.py` was killed at the runner's `--timeout-per-file` after "
        "40 min (in 1 run; the runner estimates it at 5 min), so how long it takes is not known; fix the hung test, or, "
        "if it needs longer, raise the runner's `--timeout-per-file` or split that file"]
    text, bundles, logs = _killing_history([{}] * 5 + [{"test/hang.py": ("kill", 1200)}])
    bundles[5]["jobs"] = [j for j in bundles[5]["jobs"] if j["name"] != "big-amd-rocm700 (3)"]
    assert [u["reason"] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
            if u["subject"] == "big-amd-rocm700"] == [
        "its logs were read, but the test runner killed a test file at its `--timeout-per-file`: `test/hang.py` (in 1 "
        "run, killed after 20 min); the runner records that cap as the file's time, which is only how long it ran at "
        "least; 1 run of them lacked a shard's job, which no count reads"]


def test_could_not_measure_says_each_runs_reason() -> None:
    """review128 h06: one run's logs swapped between two shards, another run's shard 3 log missing: both are said
    (the missing one was hidden behind the swapped ones); and a run with a kill and a missing log names the
    missing log too."""
    text, bundles, logs = _killing_history([{}] * 5)
    jobs = [j for j in bundles[0]["jobs"] if j["name"].startswith("big-amd-rocm700 (")]
    logs[jobs[1]["id"]], logs[jobs[2]["id"]] = logs[jobs[2]["id"]], logs[jobs[1]["id"]]
    logs.pop(next(j["id"] for j in bundles[1]["jobs"] if j["name"] == "big-amd-rocm700 (3)"))
    reasons = [u["reason"].split(";")[0] for u in to_json(analyze({PATH: text}, bundles, RepoConfig(), logs))["unmeasured"]
               if u["subject"] == "big-amd-rocm700"]
    assert reasons == ["shard logs that are not their job's, by their header: job 100003 (`part: 1`) has the log of "
                       "shard 2 (its header: `3/4 (0-based id=2)`)", "per-file times need every shard's log of a run"]
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}] + [{}] * 4)
    logs.pop(next(j["id"] for j in bundles[0]["jobs"] if j["name"] == "big-amd-rocm700 (3)"))
    assert plan(text, bundles, logs=logs).partial_logs == {"big-amd-rocm700": ("3 of 4",)}


def test_a_kill_below_the_limit_keeps_its_run_on_its_shard_times() -> None:
    """A file killed at a cap within the limit (20 min of 36; 36 min itself: review126 f09) took that cap in its
    shard, where a count can hold it: the run stays on its shard times (its 34-min shard keeps today's 4)."""
    text, bundles, logs = _killing_history([{"test/hang.py": ("kill", 1200)}, {}, {}, {}, {}])
    p = plan(text, bundles, logs=logs)
    assert p.reshards == () and (p.hang_runs, p.kill_fallbacks) == ({}, {"big-amd-rocm700": 1})
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "4 shards are needed: 3 would run 37 min at p90 (limit 36 min = 60% of 60; per-file logs (4 runs) and shard "
        "times (1 run))"]
    text, bundles, logs = _killing_history([{"test/hang.py": ("kill", 2160)}, {}, {}, {}, {}])
    assert plan(text, bundles, logs=logs).hang_runs == {}


def test_a_file_killed_in_more_runs_than_it_ended_hangs() -> None:
    """`test/f6.py` killed past the limit in 4 runs and ended in 1 hangs: its one time is no time to fit a count to,
    so none is said; `test/hang.py`, killed once and ended 4 times, is read at its usual time there, and said."""
    text, bundles, logs = _killing_history([{"test/hang.py": HANG}, *[{"test/f6.py": HANG}] * 4])
    p = plan(text, bundles, logs=logs)
    assert p.reshards == () and p.hang_runs == {"big-amd-rocm700": 1}  # (`test/hang.py`'s run: "Could not measure")
    (reason,) = [f.reason for f in p.findings if f.job == "big-amd-rocm700"]
    assert reason.startswith(f"{HANG_SAID}. With it at its usual time there, no fewer shards: ")  # (review129 i02)
    assert reason.endswith(
        "no shard count is said while a test hangs: `test/f6.py` was killed at the runner's `--timeout-per-file` after 40 "
        "min (in 4 runs; the runner estimates it at 6 min), so how long it takes is not known; fix the hung test, or, if "
        "it needs longer, raise the runner's `--timeout-per-file` or split that file")
    assert "would keep" not in reason


def test_a_job_timeout_holds_setup_too_so_the_tests_have_what_setup_leaves() -> None:
    """scan112 / review111 f03: a job's `timeout-minutes` holds its setup and its tests; with 100 min of setup, a
    140-min job timeout leaves its shards' tests 40 min, less than the 60-min step timeout the limit was read from
    (which offered 3 shards of ~29 min: killed with the job, 129 min in)."""
    text = workflow(host_timeout="timeout-minutes: 140")
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "4 shards are needed: 3 would run 29 min at p90 (limit 24 min = 60% of 40 (`big-amd-rocm700`'s 140-min job "
        "timeout less its setup and other steps (100 min at p90)); shard times)"]
    roomy = workflow(host_timeout="timeout-minutes: 200")  # (100 min left: the step's 60 ends the tests sooner)
    (reshard,) = plan(roomy, runs(roomy)).reshards
    assert (reshard.to_count, reshard.timeout_minutes, reshard.timeout_note) == (3, 60, "")
    assert "(60% of the 60 min step timeout)" in to_markdown(analyze({PATH: roomy}, runs(roomy), RepoConfig()))
    bare = workflow(host_timeout="timeout-minutes: 140").replace("        timeout-minutes: 60\n        run: python3", "        run: python3")
    (reshard,) = plan(bare, runs(bare, shard_tests=[10, 11, 9, 10])).reshards
    assert (reshard.to_count, round(reshard.timeout_minutes)) == (2, 40)
    assert reshard.timeout_note == "`big-amd-rocm700`'s 140-min job timeout less its setup and other steps (100 min at p90)"


def test_a_shard_count_a_later_job_also_loops_over_is_left_by_hand() -> None:
    """scan112: ROCm/aiter's results job checks each shard's log with `for shard in {0..7}`; a patch that trims the
    matrix and leaves that loop fails the job on every run, which neither `git apply` nor the schema sees."""
    finish = """  results:
    needs: [big-amd-rocm700]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - name: Check every shard's log
        run: |
          for shard in {0..3}; do test -f "logs/shard-$shard.log" || exit 1; done
"""
    text = workflow() + finish
    p = plan(text, runs(text))
    assert p.reshards == ()
    assert [f.reason for f in p.findings if f.job == "big-amd-rocm700"] == [
        "the times allow 3 shards (the longest 29 min at p90, within 36 min; shard times), but its 4 are also counted "
        "in `results`'s `Check every shard's log` (`{0..3}`), which the patch would leave behind: change both by hand"]
    # through a job between them too, and in any of the loop's spellings
    for loop in ("seq 0 3", "seq 1 4", "seq 4", "range(4)", "range(0, 4)"):
        chained = workflow() + finish.replace("needs: [big-amd-rocm700]", "needs: [gate]").replace("{0..3}", f"$({loop})") + \
            "  gate:\n    needs: [big-amd-rocm700]\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n"
        assert plan(chained, runs(chained)).reshards == (), loop
    # a loop of another length, or in a job that does not run after the matrix, is no count of its shards
    for other in (finish.replace("{0..3}", "{0..7}").replace("$shard", "$s"),
                  finish.replace("needs: [big-amd-rocm700]", "needs: [check]"),
                  finish.replace("{0..3}", "$(seq 4 10)")):
        text = workflow() + other
        assert [r.to_count for r in plan(text, runs(text)).reshards] == [3]


def _aiter_standard(finish: str = "") -> str:
    """ROCm/aiter's `standard` lane as scan112 read it (cb151c69), on 4 shards: a CPU job splits the suite into
    lists (`split_tests.sh --shards 4`), each of 2 runners runs shards `shard_idx` 0-3 of that one split."""
    entries = "".join(f"          - {{runner: linux-aiter-{r}-1, label: {label}, shard_total: 4, shard_idx: {i}}}\n"
                      for r, label in (("mi35x", "MI35X"), ("oci-mi300x", "MI300X")) for i in range(4))
    return f"""name: Aiter Test
on: pull_request
jobs:
  split_aiter_tests:
    runs-on: ubuntu-latest
    steps:
      - name: Split Aiter Tests (4 shards)
        run: ./.github/scripts/split_tests.sh --shards 4 --test-type aiter
  standard:
    name: Standard Tests (1 GPU)
    needs: [split_aiter_tests]
    strategy:
      fail-fast: false
      matrix:
        include:
{entries}    runs-on: ${{{{ matrix.runner }}}}
    steps:
      - name: Tests
        timeout-minutes: 90
        run: |
          export AITER_TEST="$(cat aiter_shard_${{{{ matrix.shard_idx }}}}.list)"
          SHARD_TOTAL=${{{{ matrix.shard_total }}}} SHARD_IDX=${{{{ matrix.shard_idx }}}} ./.github/scripts/aiter_test.sh
{finish}"""


def _aiter_runs(minutes: dict[str, list[float]], runs: int = 3) -> list[dict]:
    """Runs of `_aiter_standard`: per runner label, each shard's `Tests` minutes."""
    return [bundle(run_id=300 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Aiter Test",
                   head_sha=f"{r:040x}", start=START + timedelta(days=r),
                   jobs=[amd_job(f"Standard Tests (1 GPU) (linux-aiter-{m}-1, {label}, 4, {i})",
                                 labels=[f"linux-aiter-{m}-1"], setup_minutes=12, download_artifacts=None,
                                 tests=[("Tests", shard)], teardown=())
                         for m, label in (("mi35x", "MI35X"), ("oci-mi300x", "MI300X"))
                         for i, shard in enumerate(minutes[label])])
            for r in range(runs)]


_OVER_RUNNERS = ("its matrix is an `include` list of 8 entries: shards `shard_idx` 0 to 3 on each of 2 `runner` values "
                 "(`linux-aiter-mi35x-1`, `linux-aiter-oci-mi300x-1`), one count of shards over several of them, which "
                 "foldbot does not rewrite: shard count left alone")


def test_a_shard_list_over_several_runners_says_what_the_times_allow_and_where_its_count_is() -> None:
    """scan112: ROCm/aiter's `standard` job runs shards `shard_idx` 0-3 of one split on each of two runners (an
    `include` list); the count is its split job's `--shards 4`, the entries, and a results job's loop. foldbot
    changes none of them, and said only so: now what the measured times allow, on the slower runner (one split
    feeds both), and each place to change by hand."""
    finish = """  standard-test-finish:
    needs: [standard]
    runs-on: ubuntu-latest
    steps:
      - name: Check every shard's log
        run: for shard in {0..3}; do test -f "standard-test-log-$shard.log"; done
"""
    text = _aiter_standard(finish)
    p = plan(text, _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [36, 34, 37, 35]}))
    assert p.reshards == () and p.overruns == ()
    assert [f.reason for f in p.findings if f.job == "standard"] == [_OVER_RUNNERS]
    assert [(f.job, f.reason) for f in p.by_hand] == [("standard", (
        "the times allow 3 shards of its 4 (the longest 49 min at p90 on `runner: linux-aiter-oci-mi300x-1`, within 54 "
        "min, 60% of `Tests`'s 90-min timeout; shard times), 2 setups fewer a run (over the 3 runs it ran in; 12 min each, median): change by hand "
        "its `include` entries, `split_aiter_tests`'s `Split Aiter Tests (4 shards)` (`--shards 4`) and "
        "`standard-test-finish`'s `Check every shard's log` (`{0..3}`)"))]
    # its logs are read for each runner's runs of all its 4 shards, oldest first, as a reshard's are
    assert (p.reshard_candidates, p.shard_counts) == ({"standard": 0}, {})
    assert [[j.name[-27:] for j in run] for run in p.wanted_runs["standard"][:2]] == [
        [f"linux-aiter-{m}-1, {label}, 4, {i})"[-27:] for i in range(4)]
        for m, label in (("mi35x", "MI35X"), ("oci-mi300x", "MI300X"))]
    assert len(p.wanted_runs["standard"]) == 6
    # on fewer runs than `min_samples`, said so (review121 f10)
    few = plan(text, _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [36, 34, 37, 35]}, runs=2))
    assert ("within 54 min, 60% of `Tests`'s 90-min timeout; shard times, provisional: 2 runs on `runner: "
            "linux-aiter-mi35x-1`, fewer than `min_samples` (3))") in few.by_hand[0].reason
    # the setups saved are each run's: a runner that ran 3 of its 4 shards (one lost) saves none on 3 (review122 f01)
    lost_one = _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [36, 34, 37, 35]})
    for b in lost_one[:2]:
        b["jobs"] = b["jobs"][:-1]
    assert "1.33 setups fewer a run (over the 3 runs it ran in; 12 min each, median)" in plan(text, lost_one).by_hand[0].reason
    # the slower runner needs all 4, which the faster would not: the count stays
    slow = plan(text, _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [45, 43, 46, 44]}))
    assert [f.reason for f in slow.by_hand] == [
        "the times need all 4 shards (3 would run 61 min at p90 on `runner: linux-aiter-oci-mi300x-1`, over 54 min, "
        "60% of `Tests`'s 90-min timeout; shard times)"]
    # shards that ran into the step's timeout: their times are short of what they take, no count is said of them
    over = plan(text, _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [89.5, 43, 46, 44]}))
    assert (over.by_hand, over.overruns) == ((), ("standard",))
    assert [f.reason for f in over.findings if f.job == "standard"] == [
        "already overruns: in 3 of 3 runs a shard ran into the 90-min timeout of `Tests` (longest 90 min); it needs "
        "more shards or a longer timeout, not fewer; its count is written in its `include` entries, "
        "`split_aiter_tests`'s `Split Aiter Tests (4 shards)` (`--shards 4`) and `standard-test-finish`'s `Check every "
        "shard's log` (`{0..3}`); " + _OVER_RUNNERS]
    # a run that lacks a shard of a runner is no sample of it; with none, nothing is said of the times (and no log
    # is asked for: none would be used)
    partial = plan(text, _aiter_runs({"MI35X": [30, 28, 31], "MI300X": [36, 34, 37]}))
    assert ([f.reason for f in partial.findings if f.job == "standard"], partial.by_hand) == ([_OVER_RUNNERS], ())
    assert (partial.reshard_candidates, partial.wanted_runs) == ({}, {})
    # review120 f01: a runner with no run of all its shards is not left out of "the slowest": nothing is said of
    # fewer (the faster runner's runs are still read, for when it has one)
    lost = _aiter_runs({"MI35X": [30, 28, 31, 29], "MI300X": [60, 58, 61]})
    q = plan(text, lost)
    assert [f.reason for f in q.by_hand] == [
        "no run in the history ran all 4 shards on `runner: linux-aiter-oci-mi300x-1`, which runs the lists of the same "
        "split, so nothing is said of fewer: the count must fit the slowest"]
    # (no count rests on its logs, so "Could not measure" asks for none; they are read all the same, for later runs)
    assert len(q.wanted_runs["standard"]) == 3 and q.reshard_candidates == {}
    # a step timeout known only when a run starts: no count is said
    unknown = text.replace("timeout-minutes: 90", "timeout-minutes: ${{ fromJSON(needs.split_aiter_tests.outputs.t) }}")
    assert plan(unknown, _aiter_runs({"MI35X": [30] * 4, "MI300X": [30] * 4})).by_hand == ()


def _aiter_log(shard: int, files: list[tuple[str, float]], extra: tuple[str, ...] = ()) -> str:
    """A shard's log as ROCm/aiter's `aiter_test.sh` prints it (3cb0a1ca), each line after Actions' timestamp;
    `extra`: the untimed runs after its loop (`=== extra: test_mla.py <args> ===`)."""
    lines = [f"Running {' '.join(f for f, _ in files)} in shard {shard} of 4."]
    for name, minutes in files:
        lines += ["", "=" * 60, f"Running test: {name} (shard: {shard}/4)", "=" * 60, "", "some test output",
                  "", "-" * 20, f"\u2705 Test passed: {name}", f"\u23f1 Time elapsed of {name}: {minutes * 60:.3f} seconds",
                  "-" * 20, ""]
    lines += [f"=== extra: {args} ===" for args in extra]
    lines.append(f"All tests passed in shard {shard}.")
    return "".join(f"2026-08-01T10:{i // 60:02d}:{i % 60:02d}.0000000Z {line}\n" for i, line in enumerate(lines))


def test_aiters_per_file_times_size_the_count_its_runners_allow() -> None:
    """ROCm/aiter's runner prints each file's time (`⏱ Time elapsed of op_tests/x.py: S seconds`): the count is
    then the files' on fewer shards, as its split would assign them (by LPT over their times), not today's shards
    scaled. The shards of each run are 30 min each; on 3 shards the files make the longest 43 min, not 40."""
    shards = [[("op_tests/test_a.py", 20), ("op_tests/test_b.py", 10)], [("op_tests/test_c.py", 15), ("op_tests/test_d.py", 15)],
              [("op_tests/test_e.py", 25), ("op_tests/test_f.py", 5)], [("op_tests/test_g.py", 12), ("op_tests/test_h.py", 18)]]
    text = _aiter_standard()
    bundles = _aiter_runs({"MI35X": [30] * 4, "MI300X": [30] * 4})
    logs = {j["id"]: parse_log(_aiter_log(int(j["name"][-2]), shards[int(j["name"][-2])]))
            for b in bundles for j in b["jobs"]}
    assert logs[bundles[0]["jobs"][2]["id"]].shard == (2, 4)
    p = plan(text, bundles, logs=logs)
    assert [f.reason for f in p.by_hand] == [
        "the times allow 3 shards of its 4 (the longest 43 min at p90 on `runner: linux-aiter-mi35x-1`, within 54 min, "
        "60% of `Tests`'s 90-min timeout; per-file logs), 2 setups fewer a run (over the 3 runs it ran in; 12 min each, median): change by hand "
        "its `include` entries and `split_aiter_tests`'s `Split Aiter Tests (4 shards)` (`--shards 4`)"]
    assert p.reshard_candidates == {"standard": 6}  # (3 runs on each of 2 runners, read file by file)
    # a log of another shard than its job's (by its `(shard: i/4)` header) is not used: shard times stand in
    swapped = {**logs, bundles[0]["jobs"][0]["id"]: logs[bundles[0]["jobs"][1]["id"]]}
    q = plan(text, bundles, logs=swapped)
    assert q.misplaced_logs == {"standard": (  # (its header quoted as its log prints it; shard 1's job keeps its own)
        "job 300001 (`shard_idx: 0`) has the log of shard 1 (its header: `(shard: 1/4)`)",)}
    assert q.reshard_candidates == {"standard": 5}


def test_a_file_that_hangs_on_one_runner_gets_no_count_though_the_other_ends_it() -> None:
    """review121 f03: `op_tests/test_e.py` hangs on MI35X in every run (aiter's `timeout 60m` kills it: `❌ Test failed`,
    then 3600 s) and takes 25 min on MI300X. Whether other runs ended it is a question per runner: on MI35X none
    did, so no count is said there, whatever MI300X's runs allow; the cap is named as aiter's script has it."""
    shards = [[("op_tests/test_a.py", 20), ("op_tests/test_b.py", 10)], [("op_tests/test_c.py", 15), ("op_tests/test_d.py", 15)],
              [("op_tests/test_e.py", 25), ("op_tests/test_f.py", 5)], [("op_tests/test_g.py", 12), ("op_tests/test_h.py", 18)]]
    bundles = _aiter_runs({"MI35X": [30, 30, 65, 30], "MI300X": [30] * 4})

    def log(name: str) -> str:
        shard = int(name[-2])
        text = _aiter_log(shard, shards[shard])
        if "MI35X" in name and shard == 2:
            text = text.replace("\u2705 Test passed: op_tests/test_e.py", "\u274c Test failed: op_tests/test_e.py").replace(
                "Time elapsed of op_tests/test_e.py: 1500.000", "Time elapsed of op_tests/test_e.py: 3600.012")
        return text

    logs = {j["id"]: parse_log(log(j["name"])) for b in bundles for j in b["jobs"]}
    p = plan(_aiter_standard(), bundles, logs=logs)
    # within a longer limit too: a hang is no time to fit a count to (review124 f01)
    longer = plan(_aiter_standard().replace("timeout-minutes: 90", "timeout-minutes: 120"), bundles, logs=logs)
    # (the line's figure is the other runner's, which needs most apart from the hang: review125 f02)
    assert [f.reason.split(";")[0] for f in longer.by_hand] == [
        "today's 4 shards run 30 min at p90 on `runner: linux-aiter-oci-mi300x-1` (within 72 min)"]
    assert longer.by_hand[0].reason.endswith("or split that file (on `runner: linux-aiter-mi35x-1`)")
    # its "Could not measure" line names the script's cap, and says what the cap does to the run (review123 f01)
    unmeasured = [u for u in to_json(analyze({PATH: _aiter_standard()}, bundles, RepoConfig(), logs))["unmeasured"]
                  if u["subject"] == "standard"]
    assert [u["reason"] for u in unmeasured] == [
        "its logs were read, but the test script's `timeout 60m` killed a test file: `op_tests/test_e.py` (in 3 runs, "
        "killed after 60 min); the runner records that cap as the file's time, which is only how long it ran at least, "
        "so a run with such a file has no whole per-file times and its shard times stand in"]
    assert [f.reason for f in p.by_hand] == [
        "today's 4 shards run 30 min at p90 on `runner: linux-aiter-oci-mi300x-1` (within 54 min); no shard count is "
        "said while a test hangs: `op_tests/test_e.py` was killed at the test script's `timeout 60m` after 60 min (in 3 "
        "runs), so how long it takes is not known; fix the hung test, or, if it needs longer, raise the test script's "
        "`timeout 60m` or split that file (on `runner: linux-aiter-mi35x-1`)"]
    # review121 f04: hung in one run only (the others ended it): that run's shard times are the hang's, and no
    # count keeps it within the limit; "about N more shards" would help neither kind of run
    once = [{**b, "jobs": [j if b is bundles[0] or "MI35X" not in j["name"] or j["name"][-2] != "2" else
                           {**j, "steps": [st if st["name"] != "Tests" else {**st, "completed_at": _plus(st["started_at"], 30)}
                                           for st in j["steps"]]} for j in b["jobs"]]} for b in bundles]
    logs = {j["id"]: parse_log(log(j["name"]) if r == 0 else _aiter_log(int(j["name"][-2]), shards[int(j["name"][-2])]))
            for r, b in enumerate(once) for j in b["jobs"]}
    # (the count is then the runs' with it at the time the others ended it in: review123 f02, review126 f03)
    assert [f.reason for f in plan(_aiter_standard(), once, logs=logs).by_hand] == [
        "in 1 run a test hung past the limit alone (`op_tests/test_e.py`, killed at the test script's `timeout 60m` "
        "after 60 min, 25 min on `gfx950` where it ended): no count keeps such a hang within it; fix the hung test. With "
        "it at its usual time there, the times allow 3 shards of its 4 (the longest 43 min at p90 on `runner: "
        "linux-aiter-mi35x-1`, within 54 min, 60% of `Tests`'s 90-min timeout; per-file logs), 2 setups fewer a run "
        "(over the 3 runs it ran in; 12 min each, median): change by hand its `include` entries and "
        "`split_aiter_tests`'s `Split Aiter Tests (4 shards)` (`--shards 4`)"]


def test_a_hang_on_one_runner_is_said_and_no_overrun_of_the_split() -> None:
    """review127 g01, g06: `op_tests/test_e.py` (25 min elsewhere) hung once on one runner's shard 2 until aiter's
    `timeout 60m`, that shard 66 min in all. With a 66-min `Tests` timeout it was "already overruns ... it needs more
    shards" (the hang's time beyond its usual was taken back for SGLang's matrices only); and on the runner that does
    not decide the count (MI300X, 10% slower, decides), the hang went unsaid beside it."""
    shards = [[("op_tests/test_a.py", 20), ("op_tests/test_b.py", 10)], [("op_tests/test_c.py", 15), ("op_tests/test_d.py", 15)],
              [("op_tests/test_e.py", 25), ("op_tests/test_f.py", 5)], [("op_tests/test_g.py", 12), ("op_tests/test_h.py", 18)]]
    slow = [[(f, m * 1.1) for f, m in shard] for shard in shards]
    bundles = _aiter_runs({"MI35X": [30] * 4, "MI300X": [33] * 4}, runs=4)
    for j in bundles[0]["jobs"]:
        if "MI35X" in j["name"] and j["name"][-2] == "2":
            j["steps"] = [st if st["name"] != "Tests" else {**st, "completed_at": _plus(st["started_at"], 65.5)}
                          for st in j["steps"]]

    def log(r: int, name: str) -> str:
        shard = int(name[-2])
        text = _aiter_log(shard, (slow if "MI300X" in name else shards)[shard])
        if r == 0 and shard == 2 and "MI35X" in name:
            text = text.replace("\u2705 Test passed: op_tests/test_e.py", "\u274c Test failed: op_tests/test_e.py").replace(
                "Time elapsed of op_tests/test_e.py: 1500.000", "Time elapsed of op_tests/test_e.py: 3600.012")
        return text

    logs = {j["id"]: parse_log(log(r, j["name"])) for r, b in enumerate(bundles) for j in b["jobs"]}
    hang = ("in 1 run a test hung past the limit alone (`op_tests/test_e.py`, killed at the test script's `timeout 60m` "
            "after 60 min, 25 min on `gfx950` where it ended): no count keeps such a hang within it; fix the hung test. "
            "With it at its usual time there, ")
    p = plan(_aiter_standard().replace("timeout-minutes: 90", "timeout-minutes: 66"), bundles, logs=logs)
    assert (p.overruns, p.hang_runs) == ((), {"standard": 1})
    assert [f.reason for f in p.by_hand] == [
        hang + "the times need all 4 shards (3 would run 47 min at p90 on `runner: linux-aiter-oci-mi300x-1`, over 40 "
        "min, 60% of `Tests`'s 66-min timeout; per-file logs)"]
    assert [f.reason.split("(the longest")[0] for f in plan(_aiter_standard(), bundles, logs=logs).by_hand] == [
        hang + "the times allow 3 shards of its 4 "]
    # another shard over the timeout by itself: the overrun's line says the hang too (review128 h05)
    over = [{**b, "jobs": [j if r != 2 or j["name"] != "Standard Tests (1 GPU) (linux-aiter-oci-mi300x-1, MI300X, 4, 1)" else
                           {**j, "steps": [st if st["name"] != "Tests" else {**st, "completed_at": _plus(st["started_at"], 66)}
                                           for st in j["steps"]]} for j in b["jobs"]]} for r, b in enumerate(bundles)]
    p = plan(_aiter_standard().replace("timeout-minutes: 90", "timeout-minutes: 66"), over, logs=logs)
    assert p.overruns == ("standard",)
    (line,) = [f.reason for f in p.findings if f.job == "standard" and f.reason.startswith("already overruns")]
    assert "; " + hang.split(". With it")[0] + "; its count is written in" in line


AITER_SHARDS = [[("op_tests/test_a.py", 20), ("op_tests/test_b.py", 10)], [("op_tests/test_c.py", 15), ("op_tests/test_d.py", 15)],
                [("op_tests/test_e.py", 25), ("op_tests/test_f.py", 5)], [("op_tests/test_g.py", 12), ("op_tests/test_h.py", 18)]]


def _aiter_kills(kills: dict[tuple[int, str, int], tuple[str, float]], slow: float = 1.0) -> tuple[list[dict], dict]:
    """4 runs of `_aiter_standard` (30 min a shard; MI300X `slow` times MI35X), each shard's log as `aiter_test.sh`
    prints it; `kills`: (run, `MI35X` | `MI300X`, shard) -> (a file, the seconds it ran till aiter's `timeout 60m`
    killed it: `❌ Test failed`), its shard's `Tests` step as much longer."""
    times = {"MI35X": AITER_SHARDS, "MI300X": [[(f, m * slow) for f, m in shard] for shard in AITER_SHARDS]}
    bundles = _aiter_runs({"MI35X": [30] * 4, "MI300X": [30 * slow] * 4}, runs=4)
    logs = {}
    for r, b in enumerate(bundles):
        for j in b["jobs"]:
            runner, k = ("MI35X" if "MI35X" in j["name"] else "MI300X"), int(j["name"][-2])
            text = _aiter_log(k, times[runner][k])
            if (r, runner, k) in kills:
                name, seconds = kills[r, runner, k]
                took = dict(times[runner][k])[name]
                text = text.replace(f"\u2705 Test passed: {name}", f"\u274c Test failed: {name}").replace(
                    f"Time elapsed of {name}: {took * 60:.3f}", f"Time elapsed of {name}: {seconds:.3f}")
                j["steps"] = [st if st["name"] != "Tests" else {**st, "completed_at": _plus(
                    st["started_at"], 30 * (slow if runner == "MI300X" else 1) + seconds / 60 - took)} for st in j["steps"]]
            logs[j["id"]] = parse_log(text)
    return bundles, logs


def test_one_file_hung_on_both_runners_is_one_sentence_and_a_hang_on_one_is_the_hang_alone() -> None:
    """review129 i07, i01: `op_tests/test_e.py` hung past the limit once on each runner: one sentence, its runs and its
    usual time on each (it was a sentence per runner, "With them at their usual times" for one file). Hanging on
    MI35X (killed in 3 runs of 4) and hung once on MI300X: the hang alone is said, not also "taken at its usual
    time"."""
    killed = ("op_tests/test_e.py", 3600.012)
    for second in (1, 0):  # (in one run on each runner, counted once: review130 j03)
        bundles, logs = _aiter_kills({(0, "MI35X", 2): killed, (second, "MI300X", 2): killed}, slow=1.1)
        (line,) = [f.reason for f in plan(_aiter_standard(), bundles, logs=logs).by_hand]
        assert line.startswith(
            f"in {2 - (second == 0)} run{'s' if second else ''} a test hung past the limit alone (`op_tests/test_e.py`, "
            "killed at the test script's `timeout 60m` after 60 min, 28 min on `gfx942`, 25 min on `gfx950` where it "
            "ended): no count keeps such a hang within it; fix the hung test. With it at its usual time there, the times "
            "allow 3 shards of its 4")
    bundles, logs = _aiter_kills({(0, "MI35X", 2): killed, (0, "MI300X", 2): killed,
                                  (1, "MI35X", 0): ("op_tests/test_a.py", 3600.012)}, slow=1.1)
    (line,) = [f.reason for f in plan(_aiter_standard(), bundles, logs=logs).by_hand]
    assert line.startswith(
        "in 2 runs tests hung past the limit alone (`op_tests/test_e.py`, killed at the test script's `timeout 60m` after "
        "60 min in 1 run, 28 min on `gfx942`, 25 min on `gfx950` where it ended; `op_tests/test_a.py`, killed at the "
        "test script's `timeout 60m` after 60 min in 1 run, 20 min on `gfx950` where it ended): ")
    bundles, logs = _aiter_kills({(0, "MI35X", 2): killed, (1, "MI35X", 2): killed, (2, "MI35X", 2): killed,
                                  (0, "MI300X", 2): killed})
    (line,) = [f.reason for f in plan(_aiter_standard(), bundles, logs=logs).by_hand]
    assert "usual time" not in line
    assert "no shard count is said while a test hangs: `op_tests/test_e.py` was killed at the test script's `timeout " \
           "60m` after 60 min (in 3 runs)" in line


def _plus(stamp: str, minutes: float) -> str:
    """An ISO stamp `minutes` later, as GitHub writes them."""
    moved = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(minutes=minutes)
    return moved.isoformat().replace("+00:00", "Z")


def test_aiters_split_weighs_files_by_their_times_over_both_runners() -> None:
    """review120 f05: aiter's split is one list for both runners, weighed by each file's median time over recent runs
    of both (`update_split_test_times.py`); on fewer shards each runner runs that split, not the best split of its
    own times. `test_a.py` takes 10 min on MI35X and 50 on MI300X, the rest 20 and 10: a split by the pooled times
    puts 60 min in a shard of 3 on both runners (each runner's own best would be 50)."""
    names = [f"op_tests/test_{c}.py" for c in "abcdefg"]
    mi35, mi300 = dict(zip(names, [10, 20, 20, 20, 20, 20, 20])), dict(zip(names, [50, 10, 10, 10, 10, 10, 10]))
    today = [["op_tests/test_a.py"], ["op_tests/test_b.py", "op_tests/test_e.py"],  # (by the pooled times, 30 min each)
             ["op_tests/test_c.py", "op_tests/test_f.py"], ["op_tests/test_d.py", "op_tests/test_g.py"]]
    bundles = _aiter_runs({label: [sum(t[f] for f in shard) for shard in today]
                           for label, t in (("MI35X", mi35), ("MI300X", mi300))})
    logs = {j["id"]: parse_log(_aiter_log(int(j["name"][-2]), [(f, (mi35 if "MI35X" in j["name"] else mi300)[f])
                                                                 for f in today[int(j["name"][-2])]]))
            for b in bundles for j in b["jobs"]}
    assert [f.reason for f in plan(_aiter_standard(), bundles, logs=logs).by_hand] == [
        "the times need all 4 shards (3 would run 60 min at p90 on `runner: linux-aiter-oci-mi300x-1`, over 54 min, "
        "60% of `Tests`'s 90-min timeout; per-file logs)"]


def test_aiters_untimed_runs_after_its_loop_go_with_their_file() -> None:
    """review120 f06: after its loop, aiter's runner runs `test_mla.py` again, untimed (`=== extra: test_mla.py
    <args> ===`), in the shard that holds it: that shard's time beyond its files' lines goes with `test_mla.py`
    (18 min, then 15 min more), not over every file of the suite. On 4 shards its shard would take 55 min, over
    the 54-min limit: 5 it is."""
    files = [[("op_tests/test_mla.py", 18.0), ("op_tests/test_s0a.py", 1.0), ("op_tests/test_s0b.py", 1.0)]] + \
        [[(f"op_tests/test_{i}_{k}.py", 5.0) for k in range(4)] for i in range(1, 8)]
    extra = tuple(f"test_mla.py -c {c} -b 1 -n 16,1 -kvd bf16" for c in (49152, 98304, 10000))
    text = _aiter_standard().replace("shard_total: 4", "shard_total: 8").replace("range(4)", "range(8)")
    entries = "".join(f"          - {{runner: linux-aiter-{r}-1, label: {label}, shard_total: 8, shard_idx: {i}}}\n"
                      for r, label in (("mi35x", "MI35X"), ("oci-mi300x", "MI300X")) for i in range(8))
    text = text[:text.index("        include:\n") + len("        include:\n")] + entries + text[text.index("    runs-on: ${{"):]
    minutes = [sum(m for _, m in shard) for shard in files]
    minutes[0] += 15
    bundles = [bundle(run_id=300 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Aiter Test",
                      head_sha=f"{r:040x}", start=START + timedelta(days=r),
                      jobs=[amd_job(f"Standard Tests (1 GPU) (linux-aiter-{m}-1, {label}, 8, {i})",
                                    labels=[f"linux-aiter-{m}-1"], setup_minutes=12, download_artifacts=None,
                                    tests=[("Tests", shard)], teardown=())
                            for m, label in (("mi35x", "MI35X"), ("oci-mi300x", "MI300X"))
                            for i, shard in enumerate(minutes)])
               for r in range(3)]
    logs = {j["id"]: parse_log(_aiter_log(int(j["name"][-2]), files[int(j["name"][-2])], extra if j["name"][-2] == "0"
                                          else ()).replace("/4)", "/8)"))
            for b in bundles for j in b["jobs"]}
    assert [f.reason for f in plan(text, bundles, logs=logs).by_hand] == [
        "the times allow 5 shards of its 8 (the longest 48 min at p90 on `runner: linux-aiter-mi35x-1`, within 54 min, "
        "60% of `Tests`'s 90-min timeout; per-file logs), 6 setups fewer a run (over the 3 runs it ran in; 12 min each, median): change by hand "
        "its `include` entries"]


def test_a_matrix_another_jobs_output_gives_names_that_job_and_the_count_it_writes() -> None:
    """scan112: ROCm/aiter's triton lane runs `shard: ${{ fromJSON(needs.split_triton_tests.outputs.shards) }}`, the
    ids a CPU job writes after `split_tests.sh --shards 8`; the report said only that an expression gives them."""
    text = """name: Triton Test
on: pull_request
jobs:
  split_triton_tests:
    runs-on: ubuntu-latest
    outputs:
      shards: ${{ steps.split.outputs.shards }}
    steps:
      - name: Split Triton Tests
        id: split
        run: |
          ./.github/scripts/split_tests.sh --shards 8 --test-type triton
          echo "shards=[0,1,2,3,4,5,6,7]" >> "$GITHUB_OUTPUT"
  triton:
    runs-on: linux-aiter-mi35x-1
    timeout-minutes: 60
    needs: [split_triton_tests]
    strategy:
      fail-fast: false
      matrix:
        shard: ${{ fromJSON(needs.split_triton_tests.outputs.shards) }}
    steps:
      - name: Triton Tests
        run: pytest -v $(cat triton_shard_${{ matrix.shard }}.list)
"""
    made = [bundle(run_id=400 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Triton Test",
                   head_sha=f"{r:040x}", start=START + timedelta(days=r),
                   jobs=[amd_job(f"triton ({s})", labels=["linux-aiter-mi35x-1"], setup_minutes=11,
                                 download_artifacts=None, tests=[("Triton Tests", 15)], teardown=()) for s in range(8)])
            for r in range(3)]
    said = ("its matrix axis `shard` comes from an expression, so how many jobs it runs is known only when a run starts "
            "(`split_triton_tests`'s output `shards`, whose count its `Split Triton Tests` step writes (`--shards 8`): "
            "change it there, by hand): it is not folded, resharded or taken as a host")
    allowed = ("the times allow 5 shards of its 8 (the longest 24 min at p90, within 29 min, 60% of `triton`'s 60-min "
               "job timeout less its setup and other steps (11 min at p90); shard times), 3 setups fewer a run (over the 3 runs it ran in; 11 min "
               "each, median): change by hand `split_triton_tests`'s `Split Triton Tests` (`--shards 8`)")
    p = plan(text, made)
    assert ([f.reason for f in p.findings if f.job == "triton"], [f.reason for f in p.by_hand]) == ([said], [allowed])
    assert (p.reshard_candidates, [len(run) for run in p.wanted_runs["triton"]]) == ({"triton": 0}, [8, 8, 8])
    # a later job that loops over the 8 shards is named too (scan112: aiter's results jobs)
    results = text + """  triton-test-results:
    needs: [triton]
    runs-on: ubuntu-latest
    steps:
      - name: Check results
        run: for shard in {0..7}; do test -f "triton-$shard.xml"; done
"""
    assert [f.reason for f in plan(results, made).by_hand] == [
        allowed + " and `triton-test-results`'s `Check results` (`{0..7}`)"]
    # review120 f07: a loop in the split's own step is one place with two spellings
    looped = text.replace('echo "shards=[0,1,2,3,4,5,6,7]"', 'echo "shards=[$(seq 0 7 | paste -sd, -)]"')
    assert [f.reason for f in plan(looped, made).by_hand] == [
        allowed.replace("(`--shards 8`)", "(`--shards 8`, `seq 0 7`)")]
    # review120 f02: aiter's `triton` and `triton-mi300x` run the lists of one split: one count, the slower's
    def mi300x(axis: str = "shard", output: str = "shards") -> str:
        return f"""  triton-mi300x:
    runs-on: linux-aiter-oci-mi300x-1
    timeout-minutes: 60
    needs: [split_triton_tests]
    strategy:
      fail-fast: false
      matrix:
        {axis}: ${{{{ fromJSON(needs.split_triton_tests.outputs.{output}) }}}}
    steps:
      - name: Triton Tests
        run: pytest -v $(cat triton_shard_${{{{ matrix.{axis} }}}}.list)
"""
    both = text + mi300x()
    slower = [bundle(run_id=400 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Triton Test",
                     head_sha=f"{r:040x}", start=START + timedelta(days=r),
                     jobs=[amd_job(f"{name} ({s})", labels=[runner], setup_minutes=11, download_artifacts=None,
                                   tests=[("Triton Tests", minutes)], teardown=())
                           for name, runner, minutes in (("triton", "linux-aiter-mi35x-1", 15),
                                                         ("triton-mi300x", "linux-aiter-oci-mi300x-1", 20))
                           for s in range(8)])
              for r in range(3)]
    shared = plan(both, slower)
    line = ("the times allow 6 shards of its 8 (the longest 27 min at p90 on `triton-mi300x`, within 29 min, 60% of "
            "`triton-mi300x`'s 60-min job timeout less its setup and other steps (11 min at p90); shard times), 4 setups "
            "fewer a run (over the 3 runs it ran in; 11 min each, median): change by hand `split_triton_tests`'s `Split Triton Tests` (`--shards 8`) "
            "(one count for `triton` and `triton-mi300x`: the lists of one split)")
    assert [(f.job, f.reason) for f in shared.by_hand] == [("triton", line)]  # (said once)
    # review121 f11: each job's shards are read by its own axis
    assert [f.reason for f in plan(text + mi300x(axis="shard_id"), slower).by_hand] == [line]
    # review121 f05: two outputs of the one step that writes the count: one count still
    two = text.replace("      shards: ${{ steps.split.outputs.shards }}\n",
                       "      shards: ${{ steps.split.outputs.shards }}\n      mi300x: ${{ steps.split.outputs.shards }}\n")
    assert two != text and [f.reason for f in plan(two + mi300x(output="mi300x"), slower).by_hand] == [line]
    # review122 f04: a job that reads the same split as `include` objects, whose shards foldbot does not tell apart
    objects = text + mi300x().replace("        shard: ${{ fromJSON", "        include: ${{ fromJSON")
    opaque = ("`triton-mi300x` also runs the lists of this split, with a matrix from `split_triton_tests`'s output that "
              "foldbot does not read shard by shard (`include` objects, more axes than the shards'): nothing is said of fewer")
    assert [f.reason for f in plan(objects, slower).by_hand] == [opaque]
    # so does one whose shards are beside another axis (review124 f02), one an output gives too (review125 f01)
    axes = text + mi300x().replace("    steps:\n", "        python: ['3.12']\n    steps:\n", 1)
    assert [f.reason for f in plan(axes, slower).by_hand] == [opaque]
    given = axes.replace("python: ['3.12']", "python: ${{ fromJSON(needs.split_triton_tests.outputs.pythons) }}")
    assert given != axes and [f.reason for f in plan(given, slower).by_hand] == [opaque]
    # ... and a reader's overrun is still said (review123 f03); a job whose `include` is another output is no reader
    late = [bundle(run_id=400 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Triton Test",
                   head_sha=f"{r:040x}", start=START + timedelta(days=r),
                   jobs=[amd_job(f"triton ({s})", labels=["linux-aiter-mi35x-1"], setup_minutes=11, download_artifacts=None,
                                 tests=[("Triton Tests", 50)], teardown=()) for s in range(8)]) for r in range(3)]
    over = plan(objects, late)
    assert (over.overruns, over.by_hand) == (("triton",), ())
    assert [f.reason[:17] for f in over.findings if f.job == "triton"] == ["already overruns:"]
    other = objects.replace("include: ${{ fromJSON(needs.split_triton_tests.outputs.shards) }}",
                            "include: ${{ fromJSON(needs.split_triton_tests.outputs.gpus) }}")
    assert [f.reason for f in plan(other, slower).by_hand] == [line.replace(
        " (one count for `triton` and `triton-mi300x`: the lists of one split)", "").replace("`triton-mi300x`'s", "`triton`'s")
        .replace("6 shards", "5 shards").replace("27 min at p90 on `triton-mi300x`", "24 min at p90")
        .replace("4 setups", "3 setups")]
    # review121 f01: a job of the split that ran in no run (its `if:` skipped it) stops the advice
    skipped = [{**b, "jobs": b["jobs"][:8]} for b in slower]
    assert [f.reason for f in plan(both, skipped).by_hand] == [
        "no run in the history ran all 8 shards on `triton-mi300x` (one count for `triton` and `triton-mi300x`: the "
        "lists of one split), so nothing is said of fewer: the count must fit the slowest"]
    # review121 f02: the group that needs most against its own limit decides (MI300X's longer setup leaves it 21 min,
    # which its 24-min shards already pass), not the one with the longest shards (MI35X's 28 min, within 29)
    made_tight = [bundle(run_id=400 + r, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Triton Test",
                         head_sha=f"{r:040x}", start=START + timedelta(days=r),
                         jobs=[amd_job(f"{name} ({s})", labels=[runner], setup_minutes=setup, download_artifacts=None,
                                       tests=[("Triton Tests", minutes)], teardown=())
                               for name, runner, setup, minutes in (("triton", "linux-aiter-mi35x-1", 11, 28),
                                                                    ("triton-mi300x", "linux-aiter-oci-mi300x-1", 25, 24))
                               for s in range(8)])
                  for r in range(3)]
    assert [f.reason for f in plan(both, made_tight).by_hand] == [
        "today's 8 shards already run 24 min at p90 on `triton-mi300x`, over 21 min, 60% of `triton-mi300x`'s 60-min "
        "job timeout less its setup and other steps (25 min at p90); shard times; about 10 would keep the longest within "
        "it: change by hand `split_triton_tests`'s `Split Triton Tests` (`--shards 8`) (one count for `triton` and "
        "`triton-mi300x`: the lists of one split)"]
    # runs of fewer shards (the split selected fewer: PR runs) are no sample of the count; with none, none is said
    fewer = [{**b, "jobs": b["jobs"][:5]} for b in made]
    assert ([f.reason for f in plan(text, fewer).findings if f.job == "triton"], plan(text, fewer).by_hand) == ([said], ())
    plain = text.replace("--shards 8 ", "")  # (a writer whose script names no count: the output named alone)
    assert [f.reason for f in plan(plain, made).findings if f.job == "triton"] == [
        "its matrix axis `shard` comes from an expression, so how many jobs it runs is known only when a run starts "
        "(`split_triton_tests`'s output `shards`): it is not folded, resharded or taken as a host"]
