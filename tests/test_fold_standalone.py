"""Folds into a standalone job: a short suite whose setup dominates moves into another
single job of the same runners, stage, gate and setup (SGLang's current lanes have such a
pair, `jit-kernel-unit-test-amd` and `jit-kernel-benchmark-test-amd`; aiter, TheRock and
DeepSpeed run their AMD suites as standalone jobs, not matrices)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import yaml

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.report import pull_summary, to_json, to_markdown
from bot.verify import check_patch
from bot.workflow import parse_workflow
from tests.builders import amd_job, bundle
from tests.paths import SGLANG
from tests.test_plan import SETUP_STEPS, plan as plan_of

PATH = ".github/workflows/amd-ci.yml"
START = datetime(2026, 10, 1, tzinfo=timezone.utc)



def job(job_id: str, test_step: str, command: str, *, runs_on: str = "linux-mi300-1gpu", extra: str = "") -> str:
    return f"""  {job_id}:
    needs: [check]
    runs-on: {runs_on}
{extra}    steps:
{SETUP_STEPS}      - name: {test_step}
        timeout-minutes: 30
        run: {command}
"""


HEAD = """name: AMD CI
on: pull_request
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: echo
"""
KERNELS = job("kernels", "Run kernel tests", "pytest tests/kernels")
OPS = job("ops", "Run op tests", "pytest tests/ops")
FINISH = """  finish:
    needs: [kernels, ops]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - run: echo done
"""
TEXT = HEAD + KERNELS + OPS + FINISH

#: test minutes per job and step
TESTS = {"kernels": ("Run kernel tests", 4.0), "ops": ("Run op tests", 40.0)}


def runs(tests: dict[str, tuple[str, float]] = TESTS, *, n: int = 5, labels: dict[str, str] | None = None) -> list[dict]:
    labels = labels or {}
    out = []
    for r in range(n):
        jobs = [amd_job(job_id, labels=[labels.get(job_id, "linux-mi300-1gpu")], setup_minutes=60 + r,
                        download_artifacts=None, tests=[(step, minutes)], teardown=())
                for job_id, (step, minutes) in tests.items()]
        out.append(bundle(run_id=500 + r, repo="o/r", workflow_path=PATH, workflow_name="AMD CI",
                          head_sha=f"{r + 1:040x}", jobs=jobs, start=START + timedelta(days=r)))
    return out


def plan(text: str, bundles: list[dict]):
    return plan_of(text, bundles, path=PATH)


def no_host(text: str) -> str:
    """Why `kernels` folds nowhere (on the default history), when nothing folds and nothing
    else is said: the part in the parentheses of "short suite with no host to fold into (...)"."""
    p = plan(text, runs())
    assert p.folds == ()
    (finding,) = p.findings
    assert finding.job == "kernels" and finding.reason.startswith("short suite with no host to fold into (")
    return finding.reason.removeprefix("short suite with no host to fold into (").removesuffix(")")


def test_a_short_suite_folds_into_a_standalone_job_and_the_patch_says_exactly_that() -> None:
    analysis = analyze({PATH: TEXT}, runs(), RepoConfig())
    assert [(f.job, f.into, f.shard_key, f.timeout_minutes) for f in analysis.plan.folds] == [
        ("kernels", "ops", None, 15)]
    checks = check_patch(analysis.patch, analysis.edits, {PATH: TEXT})
    assert checks.git_apply and checks.schema
    assert analysis.edits[0].after == HEAD + OPS + """\
      # foldbot: moved here from a job of its own, which spent 62 min on setup
      # for 4 min of tests (median of 5 runs; p90 4.0 min).
      # Runs after a failure above too, so that cannot hide it.
      # Timeout 15 min = 3 x its p90 of 4.00 min (12.00), rounded up to a multiple of 5 (its own step had 30 min).
      - name: Run kernel tests
        if: success() || failure()
        timeout-minutes: 15
        run: pytest tests/kernels
""" + FINISH.replace("needs: [kernels, ops]", "needs: [ops]")
    text = to_markdown(analysis)
    assert ("- **Fold** `kernels` into `ops`: its job spends 62 min on setup for 4 min of tests (p90 4.0 min; "
            "setup is 94% of it; 5 runs). `ops` then needs at most ") in text
    assert "wall clock: `ops` runs ~4 min longer, and the suite no longer waits for a runner of its own." in text
    # (no dispatch options to leave in this file: only the `needs:` of `finish` is said)
    assert ("- `.github/workflows/amd-ci.yml`: `kernels` moves into `ops` as a step (timeout 15 min); its job goes, "
            "and with it from `needs:`.") in text
    assert "**1 setup cycle** when every lane runs once, ~1.0 runner-hours (`ci`: 1 cycle, ~1.0 h)" in text
    assert "(1 file; applies with <code>git apply</code>)" in text
    assert to_json(analysis)["suggestions"][0]["shard"] is None


def test_the_shorter_of_two_short_suites_moves_and_the_other_hosts_it() -> None:
    """Shortest first: `ops` (6 min) takes `kernels` (4 min); a job that takes a suite is not
    folded itself, and is not listed as left alone."""
    tests = {"kernels": ("Run kernel tests", 4.0), "ops": ("Run op tests", 6.0)}
    p = plan(TEXT, runs(tests))
    assert [(f.job, f.into) for f in p.folds] == [("kernels", "ops")]
    assert p.findings == ()


def test_an_existing_if_of_the_moved_step_is_anded_in() -> None:
    text = TEXT.replace("        run: pytest tests/kernels\n",
                        "        if: ${{ github.event_name == 'pull_request' }}\n        run: pytest tests/kernels\n")
    analysis = analyze({PATH: text}, runs(), RepoConfig())
    assert "        if: (success() || failure()) && (github.event_name == 'pull_request')\n" in analysis.edits[0].after
    assert check_patch(analysis.patch, analysis.edits, {PATH: text}).schema


def test_a_matrix_host_is_taken_before_a_standalone_one() -> None:
    """SGLang's PR #34483 shape first: a matrix of the same runners and setup takes the suite
    on its shard 0, even when a standalone job would fit too."""
    matrix = job("big", "Run suite", "python3 run_suite.py --partition-id ${{ matrix.part }} --total-partitions 2",
                 extra="    strategy:\n      fail-fast: false\n      matrix:\n        part: [0, 1]\n")
    text = HEAD + KERNELS + OPS + matrix
    tests = dict(TESTS)
    bundles = runs(tests)
    for r, b in enumerate(bundles):  # two shards of `big`, 30 min each
        more = runs({f"big ({part})": ("Run suite", 30.0) for part in (0, 1)})[r]
        b["jobs"] = b["jobs"] + more["jobs"]
    p = plan(text, bundles)
    assert [(f.job, f.into, f.shard_key, f.shard_value) for f in p.folds] == [("kernels", "big", "part", 0)]


def test_a_standalone_job_takes_several_suites_each_after_the_one_before() -> None:
    """`a` (3 min, the shortest) moves first, into the host with most headroom (a tie: the last
    by id, `c`); `b` may not move into `a`, which is gone, and `c` then takes it too, after `a`'s
    step. (A matrix's shard 0 takes one suite: tests/test_plan.py.)"""
    text = "".join([HEAD, *(job(x, f"Run {x} tests", f"pytest {x}") for x in "abc")])
    tests = {"a": ("Run a tests", 3.0), "b": ("Run b tests", 4.0), "c": ("Run c tests", 5.0)}
    analysis = analyze({PATH: text}, runs(tests), RepoConfig())
    assert [(f.job, f.into) for f in analysis.plan.folds] == [("a", "c"), ("b", "c")]
    assert analysis.plan.findings == ()
    budgets = [f.host_budget_minutes for f in analysis.plan.folds]
    assert round(budgets[1] - budgets[0]) == 15  # `b`'s 15 min step timeout on top of `a`'s
    steps = yaml.safe_load(analysis.edits[0].after)["jobs"]["c"]["steps"]
    assert [s["name"] for s in steps[-3:]] == ["Run c tests", "Run a tests", "Run b tests"]
    assert check_patch(analysis.patch, analysis.edits, {PATH: text}).schema
    # `b` approved alone: its pull request counts `b`'s step in `c`'s budget, not `a`'s too
    only_b = next(s for s in analysis.suggestions if (s.kind, s.job) == ("fold", "b"))
    assert f"`c` then needs at most {budgets[1] - 10:.0f} of its 360 min" in pull_summary(analysis, only_b)
    assert f"`c` then needs at most {budgets[1]:.0f} of its 360 min" in pull_summary(analysis)


def test_a_second_suite_must_fit_with_the_first_and_not_share_its_step_ids() -> None:
    text = "".join([HEAD, *(job(x, f"Run {x} tests", f"pytest {x}") for x in "abc")])
    tests = {"a": ("Run a tests", 3.0), "b": ("Run b tests", 4.0), "c": ("Run c tests", 40.0)}
    tight = text.replace("  c:\n    needs: [check]\n", "  c:\n    needs: [check]\n    timeout-minutes: 110\n")
    p = plan(tight, runs(tests))
    assert [(f.job, f.into) for f in p.folds] == [("a", "c")]
    assert [(f.job, f.reason) for f in p.findings] == [
        ("b", "short suite with no host to fold into (`c`: it would need 119 min (p90 setup 64 + step timeouts, "
              "with `a` folded there too) but the job allows 110)")]
    ids = text.replace("      - name: Run a tests\n", "      - name: Run a tests\n        id: tests\n") \
        .replace("      - name: Run b tests\n", "      - name: Run b tests\n        id: tests\n")
    p = plan(ids, runs(tests))
    assert [(f.job, f.into) for f in p.folds] == [("a", "c")]
    assert [(f.job, f.reason) for f in p.findings] == [
        ("b", "short suite with no host to fold into (`c`: `a`, folded there too, has the suite's step ids `tests`)")]


def test_standalone_hosts_that_differ_are_named_by_reason_at_most_three_each() -> None:
    others = "".join(job(f"ops{i}", "Run op tests", "pytest tests/ops", runs_on="linux-mi300-8gpu") for i in range(5))
    text = HEAD + KERNELS + others + job("gated", "Run op tests", "pytest tests/ops",
                                         extra="    if: github.event_name == 'push'\n")
    tests = {"kernels": TESTS["kernels"], **{f"ops{i}": ("Run op tests", 40.0) for i in range(5)},
             "gated": ("Run op tests", 40.0)}
    p = plan(text, runs(tests, labels={f"ops{i}": "linux-mi300-8gpu" for i in range(5)}))
    assert p.folds == ()
    assert [(f.job, f.reason) for f in p.findings] == [
        ("kernels", "short suite with no host to fold into (`ops0`, `ops1`, `ops2` and 2 more: runs on other "
                    "runners; `gated`: gated by a different `if:`)")]


def test_a_standalone_host_must_fit_the_suite_within_its_job_timeout() -> None:
    text = TEXT.replace("  ops:\n    needs: [check]\n", "  ops:\n    needs: [check]\n    timeout-minutes: 100\n")
    assert no_host(text) == "`ops`: it would need 109 min (p90 setup 64 + step timeouts) but the job allows 100"


def test_the_fold_is_not_carried_to_a_lane_where_the_host_is_a_matrix() -> None:
    other_path = ".github/workflows/amd-ci-rocm720.yml"
    other = TEXT.replace("  ops:\n    needs: [check]\n    runs-on: linux-mi300-1gpu\n",
                         "  ops:\n    needs: [check]\n    runs-on: linux-mi300-1gpu\n    strategy:\n"
                         "      fail-fast: false\n      matrix:\n        part: [0, 1]\n")
    assert other != TEXT
    analysis = analyze({PATH: TEXT, other_path: other}, runs(), RepoConfig())
    assert [(f.job, f.into) for f in analysis.plan.folds] == [("kernels", "ops")]
    assert [e.path for e in analysis.edits] == [PATH]
    assert f"{other_path}: `kernels` is not folded into `ops` there: `ops` is a matrix of 2 jobs there, not one job" \
        in analysis.warnings


def test_short_suites_go_to_long_jobs_before_one_hosts_another() -> None:
    """SGLang's nightly AMD shape: `gpt-oss` and `grok` are short, `dp` and `r1` long, all on
    the same 8-GPU runners. Each short suite takes a long job of its own (2 setup cycles
    saved), not the other short suite (which would save 1)."""
    text = "".join([HEAD, *(job(x, f"Run {x} tests", f"pytest {x}") for x in ("gpt-oss", "grok", "dp", "r1"))])
    tests = {"gpt-oss": ("Run gpt-oss tests", 7.0), "grok": ("Run grok tests", 9.0), "dp": ("Run dp tests", 50.0),
             "r1": ("Run r1 tests", 45.0)}
    p = plan(text, runs(tests))
    assert sorted((f.job, f.into) for f in p.folds) == [("gpt-oss", "r1"), ("grok", "dp")]
    assert p.setup_cycles_saved == 2


def test_a_suite_a_dispatch_input_picks_by_id_is_said_to_be_picked_by_its_host_after_the_fold() -> None:
    """SGLang's `job_filter` / `target_stage`: the gate names the job's own id. Gone, the id
    picks nothing: the report says which job to name instead."""
    def picked(job_id: str) -> str:
        return f"    if: inputs.job_filter == '' || inputs.job_filter == '{job_id}'\n"
    text = HEAD.replace("on: pull_request\n", "on:\n  pull_request:\n  workflow_dispatch:\n    inputs:\n"
                                              "      job_filter:\n        type: string\n") \
        + job("kernels", "Run kernel tests", "pytest tests/kernels", extra=picked("kernels")) \
        + job("ops", "Run op tests", "pytest tests/ops", extra=picked("ops"))
    analysis = analyze({PATH: text}, runs(), RepoConfig())
    assert [(f.job, f.into, f.selected_by_id) for f in analysis.plan.folds] == [("kernels", "ops", True)]
    assert ("Its `if:` picks it by its id (a dispatch input that names jobs): once it is gone, naming `kernels` there "
            "runs nothing, so name `ops` instead.") in to_markdown(analysis)
    assert "picks it by its id" not in to_markdown(analyze({PATH: TEXT}, runs(), RepoConfig()))


def test_a_job_no_run_measured_hosts_nothing() -> None:
    """A history of dispatches that picked `kernels` only: `ops` never ran, so what it would
    need after a fold is unknown. No fold rests on the suite's own times standing in for it."""
    p = plan(TEXT, runs({"kernels": TESTS["kernels"]}))
    assert p.folds == ()
    assert [(f.job, f.reason) for f in p.findings] == [
        ("ops", "no run in the history ran its tests"),
        ("kernels", "short suite with no host to fold into (`ops`: no run in the history ran its tests, so its time "
                    "after the fold is unknown)")]


def test_a_job_that_ran_but_has_no_test_step_is_told_apart_from_one_that_never_ran() -> None:
    """Megatron-LM's `build` job (it builds the image on the MI325): it ran in every run, so
    "no run ran its tests" would read as if it never ran."""
    text = TEXT.replace("      - name: Run op tests\n", "      - name: Build wheel\n")
    p = plan(text, runs({**TESTS, "ops": ("Build wheel", 40.0)}))
    reasons = dict((f.job, f.reason) for f in p.findings)
    assert reasons["ops"] == "it ran in 5 runs, but no step of it counts as a test (see \u201cCould not measure\u201d)"


@pytest.mark.needs_fixtures
def test_sglangs_nightly_lane_folds_its_short_1_gpu_suite_into_the_1_gpu_job_that_remains() -> None:
    """SGLang's real `nightly-test-amd.yml`: ~40 standalone jobs, each picked by its id in a
    `job_filter` gate. On a history where the two 1-GPU unit and kernel suites take minutes
    and every other job 45, the unit suite moves into the other MI300 1-GPU job (after its
    test, before its upload) and the patch applies and validates; the kernel benchmark, which
    `check-all-jobs` leaves out on purpose, stays."""
    text = (SGLANG / "workflows" / "nightly-test-amd.yml").read_text()
    path = ".github/workflows/nightly-test-amd.yml"
    config = RepoConfig()
    wf = parse_workflow(text, path)
    short = {"nightly-test-1-gpu-unit": 6.0, "nightly-test-1-gpu-kernel": 8.0}
    bundles = []
    for r in range(5):
        jobs = [amd_job(job.id, labels=[job.runs_on], setup_minutes=50 + r, download_artifacts=None, teardown=(),
                        tests=[(next(s.name for s in job.steps if config.step_category(s) == "test"),
                                short.get(job.id, 45.0))])
                for job in wf.jobs.values()
                if isinstance(job.runs_on, str) and job.runs_on.startswith("linux-mi")]
        bundles.append(bundle(run_id=900 + r, repo="sgl-project/sglang", workflow_path=path, workflow_name="x",
                              head_sha=f"{r + 1:040x}", jobs=jobs, start=START + timedelta(days=r)))
    analysis = analyze({path: text}, bundles, config)
    assert [(f.job, f.into, f.selected_by_id) for f in analysis.plan.folds] == [
        ("nightly-test-1-gpu-unit", "nightly-1-gpu-zimage-turbo", True)]
    # `check-all-jobs` leaves the kernel benchmark out on purpose: folded, its failures would block
    reasons = {f.job: f.reason for f in analysis.plan.findings}
    assert "`nightly-1-gpu-zimage-turbo`: `check-all-jobs` needs this job but not the suite: after the fold it would " \
           "count the suite's failures too" in reasons["nightly-test-1-gpu-kernel"]
    checks = check_patch(analysis.patch, analysis.edits, {path: text})
    assert checks.git_apply and checks.schema
    after = yaml.safe_load(analysis.edits[0].after)
    assert "nightly-test-1-gpu-unit" not in after["jobs"]
    assert "nightly-test-1-gpu-unit" not in after[True]["workflow_dispatch"]["inputs"]["job_select"]["options"]
    steps = after["jobs"]["nightly-1-gpu-zimage-turbo"]["steps"]  # after its test, before its upload (`if: always()`)
    assert [(s["name"], s.get("if"), s.get("timeout-minutes")) for s in steps[-3:]] == [
        ("Z-Image-Turbo Diffusion Test (1-GPU)", None, 45),
        ("Nightly Unit Test (1-GPU)", "success() || failure()", 20),
        ("Upload generated images", "always()", None)]


def test_a_gate_on_a_change_filter_named_after_the_job_is_another_gate() -> None:
    """`needs.changes.outputs.kernels` and `...outputs.ops` ask different questions (which
    paths a PR touched): folded, a PR that touches the kernels only would run no kernel tests.
    Only where a dispatch input picks the job is its id taken out of the comparison."""
    def gated(job_id: str) -> str:
        return f"    if: needs.changes.outputs.{job_id} == 'true'\n"
    text = HEAD + job("kernels", "Run kernel tests", "pytest tests/kernels", extra=gated("kernels")) \
        + job("ops", "Run op tests", "pytest tests/ops", extra=gated("ops"))
    assert no_host(text) == "`ops`: gated by a different `if:`"
    labelled = text.replace("needs.changes.outputs.kernels == 'true'",
                            "contains(github.event.pull_request.labels.*.name, 'kernels')").replace(
        "needs.changes.outputs.ops == 'true'", "contains(github.event.pull_request.labels.*.name, 'ops')")
    assert plan(labelled, runs()).folds == ()
    wrapped = text.replace("needs.changes.outputs.kernels == 'true'", "${{ inputs.only == 'kernels' }}").replace(
        "needs.changes.outputs.ops == 'true'", "inputs.only == 'ops'")
    assert [(f.job, f.into, f.selected_by_id) for f in plan(wrapped, runs()).folds] == [("kernels", "ops", True)]


def test_a_step_that_reads_the_jobs_id_is_not_moved() -> None:
    """One step template for sibling jobs (`run_suite.py --suite ${{ github.job }}`): in the
    host it would run the host's suite again, and the suite's never."""
    for command in ("python3 run_suite.py --suite ${{ github.job }}", "python3 run_suite.py --suite $GITHUB_JOB"):
        text = TEXT.replace("pytest tests/kernels", command)
        assert no_host(text) == "`ops`: the suite's step `Run kernel tests` reads the job's id (`github.job`), the host's there"
    text = TEXT.replace("pytest tests/kernels", "pytest tests/kernels --junit ${{ job.container.id }}")
    assert "reads `job.container`, the host's there" in plan(text, runs()).findings[0].reason


def test_setup_steps_that_start_another_image_through_their_env_are_not_the_same_setup() -> None:
    text = TEXT.replace("  kernels:", "  kernels:", 1).split("  ops:")
    text = text[0].replace("        run: bash start.sh\n", "        run: bash start.sh\n        env:\n"
                                                            "          IMAGE: rocm/ci:kernels-dev\n") + "  ops:" + text[1]
    assert no_host(text) == "`ops`: its setup lacks the suite's step `Start CI container`"


def test_a_suite_does_not_take_the_only_host_of_another() -> None:
    """`s1` fits `l1` and `l2`; `s2` fits only `l1` (`l2` allows it too little time). `s2`, with
    one host, goes first: both fold (2 setup cycles), not `s1` alone into the roomier `l1`."""
    text = "".join([HEAD, *(job(x, f"Run {x} tests", f"pytest {x}") for x in ("s1", "s2", "l1")),
                    job("l2", "Run l2 tests", "pytest l2", extra="    timeout-minutes: 110\n")])
    tests = {"s1": ("Run s1 tests", 3.0), "s2": ("Run s2 tests", 8.0), "l1": ("Run l1 tests", 40.0),
             "l2": ("Run l2 tests", 40.0)}
    p = plan(text, runs(tests))
    assert sorted((f.job, f.into) for f in p.folds) == [("s1", "l2"), ("s2", "l1")]
    assert p.findings == ()


def test_a_matrix_host_goes_to_the_suite_that_has_no_other() -> None:
    """`s1` fits the matrix `big` and the job `l`; `s2` only `big` (its 25-min step does not fit
    in `l`'s 110 min): `s2` takes shard 0, `s1` the job. In file order, `s1` would have taken
    shard 0 and `s2` nothing."""
    matrix = job("big", "Run suite", "python3 run_suite.py --partition-id ${{ matrix.part }} --total-partitions 2",
                 extra="    strategy:\n      fail-fast: false\n      matrix:\n        part: [0, 1]\n")
    text = "".join([HEAD, job("s1", "Run s1 tests", "pytest s1"), job("s2", "Run s2 tests", "pytest s2"),
                    job("l", "Run l tests", "pytest l", extra="    timeout-minutes: 110\n"), matrix])
    bundles = runs({"s1": ("Run s1 tests", 3.0), "s2": ("Run s2 tests", 8.0), "l": ("Run l tests", 40.0)})
    for r, b in enumerate(bundles):
        b["jobs"] = b["jobs"] + runs({f"big ({part})": ("Run suite", 20.0) for part in (0, 1)})[r]["jobs"]
    p = plan(text, bundles)
    assert sorted((f.job, f.into) for f in p.folds) == [("s1", "l"), ("s2", "big")]
    assert [f.job for f in p.findings] == ["big"]  # its reshard: 2 shards are needed


def test_a_job_that_hosts_a_suite_is_not_listed_as_left_alone() -> None:
    """`w` (job timeout 200) cannot fold into `b` (90); `b` then folds into `w`."""
    text = HEAD + job("w", "Run w tests", "pytest w", extra="    timeout-minutes: 200\n") \
        + job("b", "Run b tests", "pytest b", extra="    timeout-minutes: 90\n")
    p = plan(text, runs({"w": ("Run w tests", 10.0), "b": ("Run b tests", 4.0)}))
    assert [(f.job, f.into) for f in p.folds] == [("b", "w")]
    assert p.findings == ()


def test_a_fold_is_not_carried_to_a_lane_whose_host_allows_too_little_time() -> None:
    other_path = ".github/workflows/amd-ci-rocm720.yml"
    other = TEXT.replace("  ops:\n    needs: [check]\n", "  ops:\n    needs: [check]\n    timeout-minutes: 70\n")
    analysis = analyze({PATH: TEXT, other_path: other}, runs(), RepoConfig())
    assert [e.path for e in analysis.edits] == [PATH]
    budget = analysis.plan.folds[0].host_budget_minutes
    assert (f"{other_path}: `kernels` is not folded into `ops` there: `ops` allows 70 min there, and the fold needs "
            f"about {budget:.0f} (p90 setup, every step's timeout, and the p90 of a step with none, as measured in {PATH})") in analysis.warnings
    assert to_json(analysis)["suggestions"][0]["picked_by_id"] is False


def test_the_table_names_the_job_id_the_suggestions_use_when_github_shows_another_name() -> None:
    """aiter's `cpu-validation` job is `README Level 0+1` on GitHub: the table row says the id
    the suggestions and reasons below name. SGLang's rows (the name starts with the id) do not."""
    text = TEXT.replace("  kernels:\n    needs: [check]\n", "  kernels:\n    name: README Level 0+1\n    needs: [check]\n")
    bundles = runs()
    for b in bundles:
        for j in b["jobs"]:
            j["name"] = "README Level 0+1" if j["name"] == "kernels" else j["name"]
    md = to_markdown(analyze({PATH: text}, bundles, RepoConfig()))
    row = next(line for line in md.splitlines() if line.startswith("| [README Level 0\\+1]"))  # (escaped)
    assert row.split(" | ")[0].endswith(") `kernels`")
    assert next(line for line in md.splitlines() if line.startswith("| [ops]")).split(" | ")[0].endswith(")")
    assert "- **Fold** `kernels` into `ops`" in md


def test_a_job_whose_matrix_is_one_include_entry_is_a_standalone_host() -> None:
    """ROCm's `strategy: matrix: include: [{runner: ..., gpu: ...}]` makes one job: a host like
    any standalone job, its runner read from the entry. A moved step may read a matrix value
    only if the host's entry gives it the same."""
    one = ("    strategy:\n      matrix:\n        include:\n          - runner: linux-mi300-1gpu\n"
           "            gpu: mi300\n")
    text = TEXT.replace("  ops:\n    needs: [check]\n    runs-on: linux-mi300-1gpu\n",
                        "  ops:\n    needs: [check]\n    runs-on: ${{ matrix.runner }}\n" + one)
    analysis = analyze({PATH: text}, runs(), RepoConfig())
    assert [(f.job, f.into, f.shard_key) for f in analysis.plan.folds] == [("kernels", "ops", None)]
    assert check_patch(analysis.patch, analysis.edits, {PATH: text}).schema
    reads = text.replace("pytest tests/kernels", "pytest tests/kernels --gpu ${{ matrix.gpu }}")
    suite = reads.replace("  kernels:\n    needs: [check]\n", "  kernels:\n    needs: [check]\n" + one)
    assert [(f.job, f.into) for f in plan(suite, runs()).folds] == [("kernels", "ops")]
    other = suite.replace("gpu: mi300\n", "gpu: mi325\n", 1)  # the suite's own entry: another GPU
    assert plan(other, runs()).findings[0].reason == (
        "short suite with no host to fold into (`ops`: the suite's step `Run kernel tests` reads `matrix.gpu`, which "
        "the host's matrix does not give it)")
    two = text.replace("            gpu: mi300\n", "            gpu: mi300\n          - runner: linux-mi300-1gpu\n"
                                                   "            gpu: mi325\n")
    assert plan(two, runs()).folds == ()  # two jobs: a matrix with include, not a host


def test_an_aggregator_that_counts_one_of_the_two_stops_the_fold() -> None:
    """SGLang's nightly `check-all-jobs` needs most jobs and leaves some out on purpose ("perf
    failures don't block CI"). Folding a job it leaves out into one it counts (or back) changes
    which failures block."""
    counted = TEXT.replace("    needs: [kernels, ops]\n", "    needs: [ops]\n")
    assert no_host(counted) == \
        "`ops`: `finish` needs this job but not the suite: after the fold it would count the suite's failures too"
    left_out = TEXT.replace("    needs: [kernels, ops]\n", "    needs: [kernels]\n")
    assert "`finish` needs the suite but not this job: after the fold it would count this job's failures too" in \
        plan(left_out, runs()).findings[0].reason


def test_a_quoted_id_the_gate_does_not_compare_with_a_dispatch_input_is_part_of_the_gate() -> None:
    """`inputs.suite == 'all' || contains(fromJSON(needs.plan.outputs.suites), '<id>')`: the gate
    reads `inputs.*`, but the id is what change detection picked, not a dispatch choice."""
    def gated(job_id: str) -> str:
        return f"    if: inputs.suite == 'all' || contains(fromJSON(needs.check.outputs.suites), '{job_id}')\n"
    text = HEAD + job("kernels", "Run kernel tests", "pytest tests/kernels", extra=gated("kernels")) \
        + job("ops", "Run op tests", "pytest tests/ops", extra=gated("ops"))
    assert plan(text, runs()).findings[0].reason == \
        "short suite with no host to fold into (`ops`: gated by a different `if:`)"


def test_a_host_whose_own_steps_set_the_environment_takes_no_suite() -> None:
    """A host setup step the suite's job has not, or a host test step before the moved ones,
    that writes `$GITHUB_ENV` changes what the suite's tests run with; one that does not is
    named in the suggestion (PR #34483's host had `Setup kernel caches`)."""
    extra = "      - name: Set up large-model env\n        run: echo HIP_VISIBLE_DEVICES=0 >> $GITHUB_ENV\n"
    text = TEXT.replace("        run: bash install.sh\n      - name: Run op tests\n",
                        "        run: bash install.sh\n" + extra + "      - name: Run op tests\n")
    assert plan(text, runs()).findings[0].reason == (
        "short suite with no host to fold into (`ops`: its step `Set up large-model env`, which the suite's job has "
        "not, writes `$GITHUB_ENV` or `$GITHUB_PATH`: the suite's steps would run with what it sets)")
    in_test = TEXT.replace("        run: pytest tests/ops\n", "        run: pytest tests/ops && echo X=1 >> \"$GITHUB_ENV\"\n")
    assert "its step `Run op tests`, which the suite's job has not, writes `$GITHUB_ENV`" in \
        plan(in_test, runs()).findings[0].reason
    caches = TEXT.replace("        run: bash install.sh\n      - name: Run op tests\n",
                          "        run: bash install.sh\n      - name: Setup kernel caches\n        run: mkdir -p /cache\n"
                          "      - name: Run op tests\n")
    analysis = analyze({PATH: caches}, runs(), RepoConfig())
    assert [(f.job, f.host_extra_setup) for f in analysis.plan.folds] == [("kernels", ("Setup kernel caches",))]
    assert "Its tests then also run after `ops`'s own `Setup kernel caches`, which its job did not run." in \
        to_markdown(analysis)


def test_parentheses_and_operators_inside_quoted_strings_do_not_move_a_clause() -> None:
    """`'x) || (inputs.q'` is one string: the id beside it is still compared with change
    detection's output, not with a dispatch input."""
    from bot.plan import _gate_of

    gate = "contains(fromJSON(needs.plan.outputs.suites), 'kernels) || (inputs.q') && inputs.z == 'all'"
    assert _gate_of(gate, "kernels") == gate
    assert _gate_of("inputs.only == 'kernels' && needs.plan.outputs.kernels == 'true'", "kernels") == \
        "inputs.only == '<self>' && needs.plan.outputs.kernels == 'true'"


def test_a_suite_whose_other_steps_are_long_is_not_short() -> None:
    """A job with 4 min of tests and a 60-min step that is neither setup nor test (tinygrad's
    `Train MNIST` beside its benchmark): that step moves with the tests, but "short suite" looked
    at the tests alone; the fold went through, saying the host "runs ~4 min longer" (~64 really)."""
    kernels = job("kernels", "Run kernel tests", "pytest tests/kernels").replace(
        "        run: pytest tests/kernels\n", "        run: pytest tests/kernels\n      - name: Train MNIST\n"
        "        timeout-minutes: 90\n        run: python train_mnist.py\n")
    text = HEAD + kernels + OPS + FINISH

    def history(mnist_minutes: float) -> list[dict]:
        steps = {"kernels": [("Run kernel tests", 4.0), ("Train MNIST", mnist_minutes)], "ops": [("Run op tests", 40.0)]}
        return [bundle(run_id=500 + r, repo="o/r", workflow_path=PATH, workflow_name="AMD CI", head_sha=f"{r + 1:040x}",
                       jobs=[amd_job(j, labels=["linux-mi300-1gpu"], setup_minutes=60 + r, download_artifacts=None,
                                     tests=tests, teardown=()) for j, tests in steps.items()],
                       start=START + timedelta(days=r)) for r in range(5)]

    assert plan(text, history(60.0)).folds == ()
    # with that step short, the suite folds, and the report says what moves with its tests
    (fold,) = plan(text, history(3.0)).folds
    assert (fold.job, fold.into, round(fold.suite_other_median_s)) == ("kernels", "ops", 180)
    report = to_markdown(analyze({PATH: text}, history(3.0), RepoConfig()))
    assert "min of tests (p90 4.0 min; setup is 94% of it; 5 runs) and 3 min of other steps, which move with them." in report
    assert "wall clock: `ops` runs ~7 min longer" in report


def test_the_timeout_note_names_each_timeout_once() -> None:
    """Fifteen moved steps with no timeout of their own: the note said "(its own step had none,
    none, none, ...)", fifteen times over, in the report, the patch's comment and the JSON."""
    names = [f"Run kernel tests {i}" for i in range(15)]
    kernels = (f"  kernels:\n    needs: [check]\n    runs-on: linux-mi300-1gpu\n    steps:\n{SETUP_STEPS}"
               + "".join(f"      - name: {n}\n        run: pytest tests/kernels/{i}\n" for i, n in enumerate(names)))
    text = HEAD + kernels + OPS + FINISH
    steps = {"kernels": [(n, 0.2) for n in names], "ops": [("Run op tests", 40.0)]}
    bundles = [bundle(run_id=500 + r, repo="o/r", workflow_path=PATH, workflow_name="AMD CI", head_sha=f"{r + 1:040x}",
                      jobs=[amd_job(j, labels=["linux-mi300-1gpu"], setup_minutes=60 + r, download_artifacts=None,
                                    tests=tests, teardown=()) for j, tests in steps.items()],
                      start=START + timedelta(days=r)) for r in range(5)]
    (fold,) = plan(text, bundles).folds
    assert fold.timeout_note == ("10 min, the least foldbot gives (3 x its p90 of 0.20 min is 0.60) (its own steps had "
                                 "none (15 steps))")
