"""What foldbot could not measure: every AMD job that is in no job's history has a line
of the report's "Could not measure" section, and every pointer to that section finds it."""

from __future__ import annotations

import contextlib
import re
import signal
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import pytest

from bot.analysis import _name_pattern, analyze
from bot.config import RepoConfig, parse_config
from bot.reconcile import missed
from bot.workflow import parse_workflow
from bot.report import to_json, to_markdown
from tests.builders import Step, amd_job, bundle, job, skipped_job


@contextlib.contextmanager
def _within_10_s(what: str) -> Iterator[None]:
    """Fails the test when its block runs past 10 s (an alarm: a pattern that reads its input a power of its length
    over is stopped, not waited for)."""
    alarm = signal.signal(signal.SIGALRM, lambda *_: pytest.fail(f"{what} took over 10 s to read"))
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, alarm)


START = datetime(2026, 8, 10, 8, tzinfo=timezone.utc)
PATH = ".github/workflows/aiter-test.yaml"
DASHBOARD = "https://github.com/ROCm/aiter/issues/1"

# Modelled on ROCm/aiter's aiter-test.yaml (@92a906e2): one static `name:` over an include matrix.
AITER = """name: Aiter Test
on: pull_request
jobs:
  standard:
    name: Standard Tests (1 GPU)
    strategy:
      fail-fast: false
      matrix:
        include:
          - {runner: aiter-mi355-1gpu, label: MI355}
          - {runner: aiter-1gpu-runner, label: MI325}
    runs-on: ${{ matrix.runner }}
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Setup Aiter
        run: ./.github/scripts/build_aiter_triton.sh
      - name: Tests
        run: ./.github/scripts/aiter_test.sh
"""


def _runs(*jobs_per_run) -> list[dict]:
    return [bundle(run_id=100 + i, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Aiter Test",
                   head_sha=f"{100 + i:040x}", jobs=list(jobs), start=START) for i, jobs in enumerate(jobs_per_run)]


def _aiter_job(name: str, label: str):
    return amd_job(name, labels=[label], setup_minutes=70, tests=[("Tests", 9)])


def _section(report: str) -> list[str]:
    """The lines of the report's "Could not measure" section."""
    lines = report.split("#### Could not measure\n\n", 1)[1].split("\n\n", 1)[0]
    return lines.strip("\n").split("\n")


def test_amd_jobs_that_map_to_no_workflow_job_are_named_with_the_fix() -> None:
    """The runs show names the file does not give (the job was renamed since): the report
    says which and why, where it used to point at a "Could not measure" that was not there."""
    runs = _runs(*[[_aiter_job("Operator Tests (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu"),
                    _aiter_job("Operator Tests (aiter-1gpu-runner, MI325)", "aiter-1gpu-runner")]] * 3)
    analysis = analyze({PATH: AITER}, runs, RepoConfig())
    assert to_json(analysis)["unmeasured"] == [{
        "subject": "Operator Tests",
        "reason": '2 AMD jobs ("Operator Tests (aiter-mi355-1gpu, MI355)", "Operator Tests (aiter-1gpu-runner, MI325)") '
                  "match no job of `.github/workflows/aiter-test.yaml` by `name:` or job id: their time is in the run's "
                  "totals but in no job's history, so no suggestion rests on it",
        "fix": "check that `.github/workflows/aiter-test.yaml` is the version these runs used (a job renamed since maps "
               "to nothing); foldbot reads an API job's name as a job's id or `name:` (literal text and "
               "`${{ matrix.* }}` values), then the `(values)` GitHub appends to a matrix job, and a reusable "
               "workflow's jobs as `<caller name> / <job>`",
    }]
    for report in (to_markdown(analysis), to_markdown(analysis, dashboard=DASHBOARD)):
        assert ("No suggestions: the AMD test time of these runs is of no job foldbot could tell "
                "(see *Could not measure*).") in report
        assert _section(report)[0].startswith(
            '- `Operator Tests`: 2 AMD jobs \\("Operator Tests \\(aiter-mi355-1gpu, MI355\\)", ')


def test_runs_whose_amd_jobs_all_were_skipped_say_so() -> None:
    """Every AMD job maps, and none ran (skipped by its `if:`): the pointer finds a line."""
    skipped = [skipped_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)"),
               skipped_job("Standard Tests (1 GPU) (aiter-1gpu-runner, MI325)")]
    dispatchable = AITER.replace("on: pull_request\n", "on:\n  pull_request:\n  workflow_dispatch:\n    inputs:\n"
                                                     "      target_stage: {type: string}\n", 1)
    analysis = analyze({PATH: dispatchable}, _runs(skipped, skipped, skipped), RepoConfig())
    expected = ("- `AMD test time`: no AMD job of the 3 runs ran a test step \\(6 jobs: 6 skipped\\). "
                "**Fix:** wait for a run whose AMD jobs run their tests \\(a `/dispatch` comment on a PR starts one\\).")
    # (a workflow `/dispatch` cannot start, and the line does not say it can: review92 f02, review93 f04)
    plain = analyze({PATH: AITER}, _runs(skipped, skipped, skipped), RepoConfig())
    assert _section(to_markdown(plain)) == [expected.replace(
        "a `/dispatch` comment on a PR starts one", f"`{PATH}` has no `workflow_dispatch` trigger, so `/dispatch` "
                                                   "cannot start one")]
    no_stage = AITER.replace("on: pull_request\n", "on: [pull_request, workflow_dispatch]\n", 1)
    assert _section(to_markdown(analyze({PATH: no_stage}, _runs(skipped, skipped, skipped), RepoConfig()))) == [
        expected.replace("a `/dispatch` comment on a PR starts one", f"`{PATH}` has no `target_stage` \\(or "
                                                                    "`target_stage_select`\\) input under "
                                                                    "`workflow_dispatch`, so `/dispatch` cannot start one")]
    for report in (to_markdown(analysis), to_markdown(analysis, dashboard=DASHBOARD)):
        assert "No suggestions: these runs hold no AMD test time to plan with (see *Could not measure*)." in report
        assert _section(report) == [expected]


def test_a_latest_run_without_test_time_says_why_when_earlier_runs_had_some() -> None:
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    skipped = [skipped_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)")]
    analysis = analyze({PATH: AITER}, _runs(ran, ran, ran, skipped), RepoConfig())
    report = to_markdown(analysis)
    assert "**No AMD job spent time on setup or tests in the latest run**: it skipped `standard` (a gate); see " \
           "*Could not measure* below." in report
    for text in (report, to_markdown(analysis, dashboard=DASHBOARD)):  # said once: the headline, not the table again
        assert text.count("spent time on setup or tests") == 1
    setup_only = [amd_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", labels=["aiter-mi355-1gpu"],
                          setup_minutes=70, tests=[("Tests", 0)])]
    assert "**No AMD test time was measured in the latest run** (1.2 runner-hours of setup on AMD runners); see " \
           "*Could not measure* below." in to_markdown(analyze({PATH: AITER}, _runs(ran, ran, ran, setup_only),
                                                               RepoConfig()))
    assert _section(report) == [
        "- `AMD test time`: no AMD job of the latest run \\(103\\) ran a test step \\(1 job: 1 skipped\\). "
        "**Fix:** wait for a run whose AMD jobs run their tests \\(`.github/workflows/aiter-test.yaml` has no `workflow_dispatch` trigger, so `/dispatch` cannot start one\\)."]


def test_a_latest_run_github_started_no_job_in_says_its_workflow_file_may_be_invalid() -> None:
    """A pull request that breaks the lane file's YAML gets a run with no job at all (GitHub could
    not read the file): the line says so, not "wait for a run", which `/dispatch` would not give."""
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    analysis = analyze({PATH: AITER}, _runs(ran, ran, ran, []), RepoConfig())
    assert _section(to_markdown(analysis)) == [
        "- `AMD test time`: the latest run \\(103, of `000000000000`\\) has no job at all: GitHub started none, as it "
        "does when the workflow file at the run's commit is invalid \\(its page says why\\). **Fix:** fix "
        f"`{PATH}` at that commit \\(a pull request's own version of it\\), then push."]


def test_a_latest_run_cancelled_before_any_job_started_is_not_said_to_have_an_invalid_file() -> None:
    """A run cancelled while it waited (`concurrency:` replaced it with a newer push's) has no job
    either: that is no broken workflow file, and "fix it, then push" would send people looking for one."""
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    runs = _runs(ran, ran, ran, [])
    runs[-1]["workflow_run"]["conclusion"] = "cancelled"
    analysis = analyze({PATH: AITER}, runs, RepoConfig())
    assert _section(to_markdown(analysis)) == [
        "- `AMD test time`: the latest run \\(103, of `000000000000`\\) was cancelled before GitHub started any job "
        "\\(a newer run of its concurrency group replaced it, or someone cancelled it\\). **Fix:** wait for a run "
        "whose AMD jobs run their tests \\(`.github/workflows/aiter-test.yaml` has no `workflow_dispatch` trigger, so `/dispatch` cannot start one\\)."]


def test_a_run_waiting_for_approval_is_left_out_and_not_said_to_have_an_invalid_file() -> None:
    """A first-time contributor's fork PR: GitHub holds the run for a maintainer's approval and lists it
    completed, `action_required`, with no job (`foldbot fetch` writes it). "Fix the file at that commit"
    sent the contributor looking for a fault in a valid file, and the headline was that run's, which
    measured nothing. It is left out, as the App leaves it; alone, it is said to wait for approval."""
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    runs = _runs(ran, ran, ran, [])
    runs[-1]["workflow_run"]["conclusion"] = "action_required"
    analysis = analyze({PATH: AITER}, runs, RepoConfig())
    assert "1 run (103) waits for a maintainer's approval and ran no job: left out" in analysis.warnings
    assert analysis.latest.run_id == 102 and "#### Could not measure" not in to_markdown(analysis)
    alone = analyze({PATH: AITER}, runs[-1:], RepoConfig())
    assert _section(to_markdown(alone)) == [
        "- `AMD test time`: the latest run \\(103, of `000000000000`\\) waits for a maintainer's approval to run "
        "\\(GitHub holds the runs of a first-time contributor's fork pull request\\): no job ran yet. **Fix:** a "
        "maintainer approves it on the run's page \\(\u201cApprove and run\u201d\\); its report follows when it completes.",
        "- `history`: 1 run read; a suggestion needs 3 to be more than provisional. **Fix:** wait for more completed "
        "runs, or lower `min_samples:` in .github/foldbot.yml."]
    # the App's reconcile takes a held run for no missed one (its `completed` comes again once it ran)
    assert missed(runs[-1]["workflow_run"], PATH, None) is False


@pytest.mark.parametrize("status,said,fix", [
    ("completed", "took 0 s (it ended within a second: GitHub's step times are whole seconds)",
     "check that the step runs tests (an empty shard, or a suite that found none, ends at once)"),
    ("in_progress", "had not ended when the run was read (the job was still running)", "its next completed run is measured"),
])
def test_a_test_step_of_no_time_is_not_said_to_need_a_step_rule(status: str, said: str, fix: str) -> None:
    """The rules take `Run unit tests` for a test; it took 0 s by GitHub's whole-second stamps, or had
    not ended. "Add `step_rules: [{pattern: '^Run\\ unit\\ tests$', category: test}]`" changed nothing."""
    runs = _three_runs(lambda k: [amd_job("unit-amd", labels=["linux-mi300-gpu-1"], setup_minutes=30,
                                          tests=[("Run unit tests", 0 if k == 2 else 5)], teardown=())])
    if status == "in_progress":
        (unit,) = runs[-1]["jobs"]
        unit.update(status="in_progress", conclusion=None)
        next(s for s in unit["steps"] if s["name"] == "Run unit tests").update(status="in_progress", conclusion=None,
                                                                              completed_at=None)
    unmeasured = {u["subject"]: u for u in to_json(analyze({PATH: GROUP_WF}, runs, RepoConfig()))["unmeasured"]}
    assert unmeasured["unit-amd"] == {"subject": "unit-amd", "reason": f"ran in 1 run; its test step `Run unit tests` {said}",
                                      "fix": f"nothing to change in foldbot's rules, which take it for a test; {fix}"}


def _three_runs(jobs: Callable[[int], list[Any]]) -> list[dict]:
    """Three runs of GROUP_WF's lane, a day apart, with the jobs `jobs(k)` gives the k-th."""
    return [bundle(run_id=300 + k, repo="o/r", workflow_path=PATH, workflow_name="PR Test (AMD)", head_sha=f"{k:040x}",
                   start=datetime(2026, 8, 1 + k, tzinfo=timezone.utc), jobs=jobs(k)) for k in range(3)]


GROUP_WF = """name: PR Test (AMD)
on: [pull_request]
jobs:
  unit-amd:
    runs-on: linux-mi300-gpu-1
    steps:
      - name: Run unit tests
        run: pytest
  integration:
    runs-on:
      group: gpu-fleet
    steps:
      - name: Run integration tests
        run: pytest
"""


def test_a_job_sent_to_a_runner_group_by_name_is_named_by_its_group() -> None:
    """`runs-on: {group: gpu-fleet}`: GitHub lists the job with no labels, its runner and group named.
    It was dropped without a word ("never dropped silently"); it is `group:gpu-fleet` now, which the
    pattern can match."""
    def runs() -> list[dict]:
        out = _three_runs(lambda k: [
            amd_job("unit-amd", labels=["linux-mi300-gpu-1"], setup_minutes=30, tests=[("Run unit tests", 5)],
                    teardown=()),
            job("integration", [Step("Set up job", 0.1), Step("Run integration tests", 20)], ["gpu-fleet"],
                runner_name="fleet-node-07")])
        for b in out:
            next(j for j in b["jobs"] if j["name"] == "integration").update(labels=[], runner_group_name="gpu-fleet")
        return out
    unmeasured = {u["subject"]: u for u in to_json(analyze({PATH: GROUP_WF}, runs(), RepoConfig()))["unmeasured"]}
    assert unmeasured["self-hosted jobs not counted"]["reason"] == (
        "1 job ran on self-hosted labels that `amd_runner_pattern` does not match: `integration` (group:gpu-fleet)")
    config = parse_config("amd_runner_pattern: '^(?:linux-mi300-gpu-1|group:gpu-fleet)$'\n")
    analysis = analyze({PATH: GROUP_WF}, runs(), config)
    assert analysis.stats["integration"].samples == 3


# Modelled on facebookresearch/xformers' rocm_ci.yml (@0d1d1bef): an AMD GPU machine on `runs-on: self-hosted`,
# whose jobs GitHub lists with the labels every self-hosted runner has.
XFORMERS_PATH = ".github/workflows/rocm_ci.yml"
XFORMERS = """name: ROCM_CI
on: pull_request
jobs:
  build:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - name: Build xformers
        run: pip install -e .
      - name: Run python tests
        run: pytest tests
  clean:
    runs-on: self-hosted
    needs: [build]
    steps:
      - name: Remove dangling Docker images
        run: docker image prune -f
  lint:
    runs-on: [self-hosted, linux.2xlarge]
    steps:
      - run: ruff check .
"""


def _xformers_runs(build_labels: list[str]) -> list[dict]:
    jobs = [amd_job("build", labels=build_labels, setup_minutes=50, tests=[("Run python tests", 8)]),
            job("clean", [Step("Set up job", 0.1), Step("Remove dangling Docker images", 9)], ["self-hosted"]),
            job("lint", [Step("Set up job", 0.1), Step("Run ruff check .", 1)], ["self-hosted", "linux.2xlarge"])]
    return [bundle(run_id=300 + i, repo="facebookresearch/xformers", workflow_path=XFORMERS_PATH,
                   workflow_name="ROCM_CI", head_sha=f"{300 + i:040x}", jobs=jobs, start=START) for i in range(3)]


def test_jobs_on_generic_self_hosted_labels_are_named_not_taken_for_github_hosted() -> None:
    """No label names the GPU: the line says which jobs ran on generic self-hosted labels, and how to
    make them countable, where it used to say only GitHub-hosted labels were seen."""
    analysis = analyze({XFORMERS_PATH: XFORMERS}, _xformers_runs(["self-hosted", "Linux", "X64"]), RepoConfig())
    assert _section(to_markdown(analysis))[0] == (
        "- `AMD jobs`: no job of the 3 runs ran on a runner that `amd_runner_pattern` matches \\(labels seen: "
        "linux.2xlarge\\); 2 jobs ran on generic self-hosted labels that do not name the GPU, so foldbot cannot tell "
        "whether they ran on AMD GPUs: `build` \\(self-hosted, Linux, X64\\); `clean` \\(self-hosted\\). **Fix:** if they "
        "ran on AMD GPUs, give those runners a label that names the GPU \\(such as `mi300` or `gfx942`\\) and put it in "
        "the jobs' `runs-on:`, or set `amd_runner_pattern: '<regex>'` in .github/foldbot.yml to match their labels "
        "\\(`'^self-hosted$'` counts every self-hosted job as AMD\\).")
    only_generic = analyze({XFORMERS_PATH: XFORMERS}, [
        {**b, "jobs": [j for j in b["jobs"] if j["name"] != "lint"]}
        for b in _xformers_runs(["self-hosted", "Linux", "X64"])], RepoConfig())
    assert to_json(only_generic)["unmeasured"][0]["reason"].startswith(
        "no job of the 3 runs ran on a runner that `amd_runner_pattern` matches (labels seen: only generic self-hosted "
        "ones); 2 jobs ran on generic self-hosted labels")


def test_jobs_on_self_hosted_labels_of_their_own_are_named_with_a_pattern_for_them() -> None:
    """No job matched, and `build` ran on a label of its own (tinygrad's `tinybox`, ROCm/mori's `label-1`):
    the line gave the labels seen, not which jobs ran on them, and its fix was a bare `'<regex>'` (with a
    generic-labelled job beside, `'^self-hosted$'`, which takes every self-hosted job)."""
    analysis = analyze({XFORMERS_PATH: XFORMERS}, _xformers_runs(["self-hosted", "tinybox"]), RepoConfig())
    (line,) = [u for u in analysis.unmeasured if u.subject == "AMD jobs"]
    assert line.reason == (
        "no job of the 3 runs ran on a runner that `amd_runner_pattern` matches (labels seen: linux.2xlarge, tinybox); "
        "1 job ran on self-hosted labels that name no hardware foldbot knows: `build` (tinybox); 1 job ran on generic "
        "self-hosted labels that do not name the GPU, so foldbot cannot tell whether they ran on AMD GPUs: `clean` "
        "(self-hosted)")
    assert line.fix == (
        "if those are AMD GPU runners, set `amd_runner_pattern: '^(?:tinybox)$'` in .github/foldbot.yml (keep only the "
        "labels of AMD GPU runners); if the jobs on generic labels ran on AMD GPUs, give those runners a label that "
        "names the GPU (such as `mi300` or `gfx942`) and put it in the jobs' `runs-on:`")
    taken = analyze({XFORMERS_PATH: XFORMERS}, _xformers_runs(["self-hosted", "tinybox"]),
                    parse_config("amd_runner_pattern: '^(?:tinybox)$'\n"))
    assert [j.workflow_job for j in taken.latest.amd_jobs] == ["build"]


def test_a_job_on_generic_self_hosted_labels_beside_amd_jobs_is_listed() -> None:
    """`build` moved to an MI300 label; `clean` on bare `self-hosted` is listed as not counted, not dropped
    (`lint` on pytorch's CPU pool `linux.2xlarge` is known not to be an AMD GPU: not listed)."""
    analysis = analyze({XFORMERS_PATH: XFORMERS}, _xformers_runs(["linux-mi300-gpu-1"]), RepoConfig())
    assert to_json(analysis)["unmeasured"][0] == {
        "subject": "self-hosted jobs not counted",
        "reason": "1 job ran on self-hosted labels that `amd_runner_pattern` does not match: `clean` (self-hosted: "
                  "generic labels that do not name the GPU)",
        "fix": "if they are AMD runners, extend `amd_runner_pattern` in .github/foldbot.yml; a pattern cannot pick out a "
               "job on generic labels only (`self-hosted`, `Linux`, `X64`): give its runner a label that names the GPU "
               "and put it in the job's `runs-on:`",
    }


# A lane whose tests run in a step no rule knows (as pytorch/ao's ROCm lane in test-infra's `Run script in
# container` did): the job's time is nearly all "other", which its setup share leaves out.
WORKLOAD_PATH = ".github/workflows/rocm.yml"
WORKLOAD = """name: ROCm
on: push
jobs:
  regression:
    runs-on: linux.rocm.gpu.mi300.1
    steps:
      - name: Pull docker image
        run: docker pull img
      - name: Execute workload
        run: ./ci.sh
      - name: Smoke test
        run: ./smoke.sh
"""


def _workload_runs(minutes: list[tuple[float, float, float]]) -> list[dict]:
    """Runs of one job: (setup, smoke test, workload) minutes each."""
    return [bundle(run_id=400 + i, repo="o/r", workflow_path=WORKLOAD_PATH, workflow_name="ROCm",
                   head_sha=f"{400 + i:040x}", start=START,
                   jobs=[job("regression", [Step("Pull docker image", setup), Step("Smoke test", smoke),
                                            Step("Execute workload", workload)], ["linux.rocm.gpu.mi300.1"])])
            for i, (setup, smoke, workload) in enumerate(minutes)]


def test_a_job_mostly_in_steps_of_neither_class_says_so() -> None:
    """The job ran a (short) test step, so it is no "no step is classified as a test" case; its two hours in
    `Execute workload` would otherwise make it read as all setup, with no word of what was left out."""
    analysis = analyze({WORKLOAD_PATH: WORKLOAD}, _workload_runs([(15, 1, 118), (15, 1, 131), (15, 1, 3)]), RepoConfig())
    assert _section(to_markdown(analysis)) == [
        "- `regression`: in 2 runs, steps classified as neither setup nor test took more than half its time \\(up to "
        "131 of 147 min\\), which its setup share leaves out; its longest such steps: `Execute workload` \\(131 min\\). "
        "**Fix:** if `Execute workload` runs tests, add `step_rules: [{pattern: '^Execute\\ workload$', category: "
        "test}]` to .github/foldbot.yml \\(`category: setup` if it prepares the machine\\)."]
    # The fix it names, taken: the job's setup share is measured, and the line is gone.
    fixed = analyze({WORKLOAD_PATH: WORKLOAD}, _workload_runs([(15, 1, 118), (15, 1, 131), (15, 1, 3)]),
                    parse_config("step_rules: [{pattern: '^Execute\\ workload$', category: test}]"))
    assert fixed.unmeasured == ()


BENCHMARKS_PATH = ".github/workflows/benchmark.yml"
BENCHMARKS = """\
on: push
jobs:
  testamdbenchmark:
    runs-on: [self-hosted, Linux, tinybox]
    steps:
      - name: Run model inference benchmark
        run: python3 test/external/external_model_benchmark.py
      - name: Run LLaMA
        run: python3 examples/llama.py --gen 1 --count 10 --timing
      - name: Run GPT2
        run: python3 examples/gpt2.py --count 10 --timing
      - name: Run 10 CIFAR training steps w ${{ matrix.gpus }} GPUS
        run: python3 examples/hlb_cifar10.py
      - name: Upload results
        run: cp *.txt /results
      - name: Show off tinybox
        run: /opt/rocm/bin/rocm-bandwidth-test
"""


def test_a_job_mostly_in_steps_no_rule_takes_gets_one_rule_for_them_all() -> None:
    """tinygrad's benchmark job (benchmark.yml @0026c185): a short benchmark the rules take as test, then models run
    one step each (`Run LLaMA`, `Run GPT2`, ...), which no rule takes. The fix named one rule for the longest step
    alone; with it taken, the others still held more than half the time and the next report asked again, once a
    step. Now it is one rule for every such step no rule takes (not `Upload results`, which a rule says is other),
    a name with an expression as its pattern, nor one of seconds, `Show off tinybox`); taken, it measures the job."""
    runs = [bundle(run_id=420 + i, repo="o/r", workflow_path=BENCHMARKS_PATH, workflow_name="Benchmarks",
                   head_sha=f"{420 + i:040x}", start=START,
                   jobs=[job("testamdbenchmark", [Step("Set up job", 0.2), Step("Run model inference benchmark", 4),
                                                  Step("Run LLaMA", 20), Step("Run GPT2", 12),
                                                  Step("Run 10 CIFAR training steps w 6 GPUS", 9),
                                                  Step("Upload results", 30), Step("Show off tinybox", 0.5)],
                             ["self-hosted", "Linux", "tinybox"])]) for i in range(3)]
    config = parse_config("amd_runner_pattern: '^tinybox$'\n")
    (line,) = [line for line in _section(to_markdown(analyze({BENCHMARKS_PATH: BENCHMARKS}, runs, config)))
               if "neither setup nor test" in line]
    pattern = "^(?:Run\\ LLaMA|Run\\ GPT2|Run\\ 10\\ CIFAR\\ training\\ steps\\ w\\ .*\\ GPUS)$"
    assert line == (
        "- `testamdbenchmark`: in 3 runs, steps classified as neither setup nor test took more than half its time "
        "\\(up to 72 of 76 min\\), which its setup share leaves out; its longest such steps: `Upload results` \\(30 "
        "min\\), `Run LLaMA` \\(20 min\\), `Run GPT2` \\(12 min\\). **Fix:** if `Run LLaMA`, `Run GPT2` and `Run 10 CIFAR "
        f"training steps w ${{{{ matrix.gpus }}}} GPUS` run tests, add `step_rules: [{{pattern: '{pattern}', category: test}}]` to "
        ".github/foldbot.yml, which takes them all \\(leave out of its pattern any that does not; a rule with `category: "
        "setup` for those that prepare the machine\\).")
    fixed = analyze({BENCHMARKS_PATH: BENCHMARKS}, runs, parse_config(
        f"amd_runner_pattern: '^tinybox$'\nstep_rules: [{{pattern: '{pattern}', category: test}}]\n"))
    assert [(s.name, s.category) for s in fixed.latest.jobs[0].work_steps if s.category == "test"] == [
        ("Run model inference benchmark", "test"), ("Run LLaMA", "test"), ("Run GPT2", "test"),
        ("Run 10 CIFAR training steps w 6 GPUS", "test")]
    assert not [u for u in fixed.unmeasured if "neither setup nor test" in u.reason]
    # review146 y04: a name as written whose `.*` would take another step of the file (`Run ${{ matrix.model }}`,
    # `Run actions/checkout@v4`: the rule is the repository's) is named by the values shown, one pattern each, eight at
    # most, and the steps left out are counted
    text = BENCHMARKS.replace("      - name: Run LLaMA\n", "      - uses: actions/checkout@v4\n"
                              "      - name: Run ${{ matrix.model }}\n        run: python3 examples/run.py\n"
                              "      - name: Run LLaMA\n")
    models = [f"m{i}" for i in range(10)]
    runs = [bundle(run_id=430 + i, repo="o/r", workflow_path=BENCHMARKS_PATH, workflow_name="Benchmarks",
                   head_sha=f"{430 + i:040x}", start=START,
                   jobs=[job("testamdbenchmark", [Step("Set up job", 0.2), Step("Run actions/checkout@v4", 0.5),
                                                  Step("Run model inference benchmark", 4),
                                                  Step(f"Run {models[i]}", 30 - i)], ["self-hosted", "Linux", "tinybox"])])
            for i in range(10)]
    (fix,) = [u.fix for u in analyze({BENCHMARKS_PATH: text}, runs, config).unmeasured
              if "neither setup nor test" in u.reason]
    assert fix.startswith("if `Run m0`, `Run m1`, `Run m2`, `Run m3`, `Run m4`, `Run m5`, `Run m6` and `Run m7` run tests, "
                          "add `step_rules: [{pattern: '^(?:Run\\ m0|Run\\ m1|Run\\ m2|Run\\ m3|Run\\ m4|Run\\ m5|Run\\ m6|"
                          "Run\\ m7)$', category: test}]`")
    assert fix.endswith("; 2 shorter such steps no rule takes are not in it")
    # review147 z03: steps of less than a minute each, no rule taking them, are named before one a rule says is other
    runs = [bundle(run_id=440 + i, repo="o/r", workflow_path=BENCHMARKS_PATH, workflow_name="Benchmarks",
                   head_sha=f"{440 + i:040x}", start=START,
                   jobs=[job("testamdbenchmark", [Step("Set up job", 0.2), Step("Run model inference benchmark", 4),
                                                  Step("Upload results", 8)]
                             + [Step(f"Run m{m}", 0.85) for m in range(12)], ["self-hosted", "Linux", "tinybox"])])
            for i in range(3)]
    (fix,) = [u.fix for u in analyze({BENCHMARKS_PATH: text}, runs, config).unmeasured
              if "neither setup nor test" in u.reason]
    assert fix.startswith("if `Run m0`, `Run m1`, ") and "Upload" not in fix, fix
    # review148 a05: ... where they are a minute together; a step of seconds alone leaves the longest named
    runs = [bundle(run_id=450 + i, repo="o/r", workflow_path=BENCHMARKS_PATH, workflow_name="Benchmarks",
                   head_sha=f"{450 + i:040x}", start=START,
                   jobs=[job("testamdbenchmark", [Step("Set up job", 0.2), Step("Run model inference benchmark", 4),
                                                  Step("Upload results", 20), Step("Run m0", 0.1)],
                             ["self-hosted", "Linux", "tinybox"])]) for i in range(3)]
    (fix,) = [u.fix for u in analyze({BENCHMARKS_PATH: text}, runs, config).unmeasured
              if "neither setup nor test" in u.reason]
    assert fix.startswith("if `Upload results` runs tests"), fix
    # review147 z05: a `.*` that would take a step of the file past its emoji (`🧹 Run cleanup`) is none
    emoji = parse_workflow("on: push\njobs:\n  b:\n    runs-on: x\n    steps:\n      - name: \U0001f9f9 Run cleanup\n"
                           "        run: rm -rf out\n      - name: Run ${{ matrix.model }}\n        run: python3 run.py\n",
                           BENCHMARKS_PATH)
    assert _name_pattern(emoji, "b", "Run llama") == "Run\\ llama"
    # ... read once: a name of six expressions against another step's name of `x ` 200 times (was past 60 s)
    written = " x ".join(f"${{{{ matrix.a{i} }}}}" for i in range(6)) + " y"
    long = parse_workflow(f"on: push\njobs:\n  b:\n    runs-on: x\n    steps:\n      - name: '{'x ' * 20000}'\n"
                          f"        run: a\n      - name: '{written}'\n        run: b\n", BENCHMARKS_PATH)
    with _within_10_s("a name"):
        assert _name_pattern(long, "b", "1 x 2 x 3 x 4 x 5 x 6 y") == "\\ x\\ ".join([".*"] * 6) + "\\ y"


@pytest.mark.parametrize("minutes", [
    [(60, 20, 10)] * 3,  # other is the smaller part (SGLang's AMD jobs stay under a third)
    [(1, 1, 4.9)] * 3,  # more than half, but under five minutes
    [(30, 30, 60)] * 3,  # exactly half: not more
])
def test_other_time_that_does_not_dominate_is_no_line(minutes: list[tuple[float, float, float]]) -> None:
    assert analyze({WORKLOAD_PATH: WORKLOAD}, _workload_runs(minutes), RepoConfig()).unmeasured == ()


def _setup_failed(name: str, label: str, test_step: str = "Tests"):
    """A job whose setup failed: its test step skipped, its upload (`if: always()`) run."""
    return job(name, [Step("Set up job", 1), Step("Setup Aiter", 20, "failure"), Step(test_step, 0, "skipped"),
                      Step("Upload test logs", 1)], [label], conclusion="failure")


def test_a_test_step_skipped_after_a_failed_setup_is_no_unknown_test_step() -> None:
    """The job's test step is classified, it just did not run (TheRock's `Test` after its environment setup
    failed): no line tells the reader to make the upload a test step; those runs are no samples."""
    name = "Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)"
    ran = [_aiter_job(name, "aiter-mi355-1gpu")]
    failed = [_setup_failed(name, "aiter-mi355-1gpu")]
    analysis = analyze({PATH: AITER}, _runs(ran, failed, ran, failed, ran), RepoConfig())
    assert analysis.unmeasured == ()
    assert analysis.stats["standard"].samples == 3
    # No run left that ran its tests: the line says so, with the jobs' conclusions.
    none = analyze({PATH: AITER}, _runs(failed, failed, failed), RepoConfig())
    assert _section(to_markdown(none)) == [
        "- `AMD test time`: no AMD job of the 3 runs ran a test step \\(3 jobs: 3 failure\\). "
        "**Fix:** wait for a run whose AMD jobs run their tests \\(`.github/workflows/aiter-test.yaml` has no `workflow_dispatch` trigger, so `/dispatch` cannot start one\\)."]


def test_a_skipped_step_named_as_a_test_in_a_job_that_succeeded_hides_no_unknown_test_step() -> None:
    """A job that succeeded ran its tests somewhere: a skipped `Rerun failed tests` (`if: failure()`)
    says nothing of the step that did (`Execute workload`, which the rules do not know), so the
    "no step is classified as a test" line still names it."""
    name = "Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)"
    ran = [job(name, [Step("Set up job", 1), Step("Setup Aiter", 25), Step("Execute workload", 20),
                      Step("Rerun failed tests", 0, "skipped")], ["aiter-mi355-1gpu"])]
    analysis = analyze({PATH: AITER}, _runs(ran, ran, ran), RepoConfig())
    (line,) = [u for u in analysis.unmeasured if u.subject == "standard"]
    assert "no step is classified as a test; its longest other steps: `Execute workload` (20 min)" in line.reason


# Modelled on ROCm/TheRock's build jobs: a CPU build pool whose label says `rocm` (TheRock's own,
# `azure-linux-scale-rocm`, the default pattern knows; this one it cannot), beside a GPU test job.
THEROCK_PATH = ".github/workflows/ci_linux.yml"
THEROCK = """name: CI - Linux
on: pull_request
jobs:
  build:
    runs-on: rocm-build-x64
    steps:
      - uses: actions/checkout@v4
      - name: Build therock-dist
        run: cmake --build build --target therock-dist
  test:
    needs: build
    runs-on: linux-mi325-1gpu-ossci-rocm
    steps:
      - uses: actions/checkout@v4
      - name: Test
        run: ctest --test-dir build
"""


def test_a_build_job_on_a_label_that_looks_amd_is_told_apart_from_an_unknown_test_step() -> None:
    """A job on `rocm-build-x64` (a CPU build pool; the label says `rocm`) ran no test step,
    and its build counts as setup: the line says so, and the fix says how to name a test step and,
    if it runs none, how to stop counting its runner as AMD (its build time is no setup tax)."""
    jobs = [job("build", [Step("Set up job", 0.2), Step("Run actions/checkout@v4", 1),
                          Step("Build therock-dist", 95)], ["rocm-build-x64"]),
            amd_job("test", labels=["linux-mi325-1gpu-ossci-rocm"], setup_minutes=20, tests=[("Test", 30)])]
    runs = [bundle(run_id=400 + i, repo="ROCm/TheRock", workflow_path=THEROCK_PATH, workflow_name="CI - Linux",
                   head_sha=f"{400 + i:040x}", jobs=jobs, start=START) for i in range(3)]
    analysis = analyze({THEROCK_PATH: THEROCK}, runs, RepoConfig())
    (line,) = [u for u in to_json(analysis)["unmeasured"] if u["subject"] == "build"]
    assert line["reason"] == "ran in 3 runs but no step is classified as a test; its 96 min were all in setup steps"
    assert line["fix"] == (
        "if one of its steps runs tests, add `step_rules: [{pattern: '^<that step>$', category: test}]` to "
        ".github/foldbot.yml; a job that only builds or prepares (an image, artifacts) has no tests, and its time is "
        "setup; if its runner (`rocm-build-x64`) has no GPU though a label looks AMD, narrow `amd_runner_pattern` so "
        "that it does not match")
    narrowed = parse_config("amd_runner_pattern: 'mi\\d{3}'")
    assert [u.subject for u in analyze({THEROCK_PATH: THEROCK}, runs, narrowed).unmeasured] == []


@pytest.mark.parametrize("labels", [["nvidia-h100"], ["linux.g5.4xlarge.nvidia.gpu"], ["self-hosted", "intel", "xpu"],
                                    ["1ES.Pool=onnxruntime-github-Ubuntu2204-AMD-CPU"], ["linux-gb200"],
                                    ["azure-linux-scale-rocm"], ["aws-linux-scale-rocm-prod"],
                                    ["linux.24xlarge"], ["lf.linux.2xlarge"], ["linux.24xl.spr-metal"],
                                    ["self-hosted", "windows.4xlarge.nonephemeral"],
                                    # pytorch/pytorch .github/actionlint.yaml @003763c7: TPUs, IBM Z, c5.large,
                                    # GitHub's larger x86 runners, OSDC's CPU runners (vCPU-GiB, no GPU suffix)
                                    ["linux.google.tpuv6e.1"], ["linux.google.tpuv7x.4"], ["linux.s390x"],
                                    ["linux.large"], ["lf.linux.large"], ["linux.24_04.4x"],
                                    ["mt-l-x86iavx512-16-128"], ["mt-rel-l-arm64g4-16-62"], ["l-bx86iamx-92-167"],
                                    # jax-ml/jax .github/actionlint.yaml @1082251c: GCP CPU machines and TPU hosts
                                    ["linux-x86-n4-16"], ["windows-x86-n2-64"], ["linux-x86-ct6e-180-8tpu"],
                                    ["linux-x86-tpu7x-224-4tpu"],
                                    # sgl-project/sglang .github/actionlint.yaml @0d8e703c: NVIDIA H20, CUDA 13,
                                    # Intel Xeon; vllm-project/vllm .github/actionlint.yaml @10676dd0: Ascend NPUs
                                    ["8-gpu-h20"], ["x64-cu13-kernel-tests"], ["xeon-gnr"],
                                    ["self-hosted", "ascend"], ["self-hosted", "910b"], ["self-hosted", "npu-2"]])
def test_a_job_on_labels_that_name_other_hardware_is_no_gap(labels: list[str]) -> None:
    """triton's NVIDIA jobs, DeepSpeed's XPU lane, onnxruntime's and ROCm's CPU pools beside the AMD jobs: known
    not to be AMD GPUs, so no "not counted" line (it would stand in every report, saying nothing). So are pytorch's
    CPU pools, named by EC2 size, where FBGEMM's ROCm CI builds its wheels (`linux.24xlarge`) and helion runs its
    CPU entry (`linux.24xl.spr-metal`)."""
    jobs = [amd_job("test", labels=["linux-mi325-1gpu-ossci-rocm"], setup_minutes=20, tests=[("Test", 30)]),
            job("build", [Step("Set up job", 0.2), Step("Run tests", 30)], labels)]
    runs = [bundle(run_id=500 + i, repo="ROCm/TheRock", workflow_path=THEROCK_PATH, workflow_name="CI - Linux",
                   head_sha=f"{500 + i:040x}", jobs=jobs, start=START) for i in range(3)]
    assert analyze({THEROCK_PATH: THEROCK}, runs, RepoConfig()).unmeasured == ()
    unknown = [{**b, "jobs": [j if j["name"] != "build" else {**j, "labels": ["linux-big-pool"]} for j in b["jobs"]]}
               for b in runs]
    assert [u.subject for u in analyze({THEROCK_PATH: THEROCK}, unknown, RepoConfig()).unmeasured] == \
        ["self-hosted jobs not counted"]


@pytest.mark.parametrize("label", ["linux.rocm.gpu.gfx942.4", "linux.rocm.gpu.mi300.2", "linux.rocm.gpu.2",
                                   "linux.rocm.gpu.rx7900.1", "linux.rocm.mi210.docker-cache"])
def test_pytorch_rocm_gpu_pools_are_amd_not_cpu_pools(label: str) -> None:
    """The size-named CPU pools are told apart from pytorch's ROCm GPU pools, which stay AMD."""
    from bot.analysis import _OTHER_HARDWARE
    jobs = [amd_job("test", labels=[label], setup_minutes=20, tests=[("Test", 30)])]
    runs = [bundle(run_id=600 + i, repo="ROCm/TheRock", workflow_path=THEROCK_PATH, workflow_name="CI - Linux",
                   head_sha=f"{600 + i:040x}", jobs=jobs, start=START) for i in range(3)]
    assert [j.is_amd for r in analyze({THEROCK_PATH: THEROCK}, runs, RepoConfig()).runs for j in r.jobs] == [True] * 3
    assert not _OTHER_HARDWARE.search(label)


# Modelled on ROCm/rocm-systems' aqlprofile-continuous_integration.yml (@07124dd8): ctest's dashboard script
# configures, builds and runs the tests in one step, whose name begins with a setup word.
CTEST_PATH = ".github/workflows/aqlprofile-continuous_integration.yml"
CTEST = """name: AqlProfile Continuous Integration
on: pull_request
jobs:
  core-rpm:
    runs-on: linux-mi325-1gpu-ossci-rocm
    steps:
      - name: Install Latest ROCm
        run: ./install-rocm.sh
      - uses: actions/checkout@v4
      - name: List Files
        run: ls -la
      - name: Configure, Build, and Test
        run: ctest -S dashboard.cmake
"""


def test_a_step_that_builds_and_tests_is_a_test_and_the_report_says_its_setup_is_not_measured() -> None:
    """`Configure, Build, and Test` matched a setup rule first, and the fix named the job's longest other
    step, `List Files` (3 seconds of `ls`). It is a test now (`COMBINED_TEST`), and the line names it:
    the setup inside it is not measured; a rule of the repository's own for it drops the line."""
    steps = [Step("Set up job", 0.1), Step("Install Latest ROCm", 9), Step("Run actions/checkout@v4", 0.3),
             Step("List Files", 0.05), Step("Configure, Build, and Test", 14), Step("Complete job", 0.01)]
    runs = [bundle(run_id=500 + i, repo="ROCm/rocm-systems", workflow_path=CTEST_PATH,
                   workflow_name="AqlProfile Continuous Integration", head_sha=f"{500 + i:040x}", start=START,
                   jobs=[job("core-rpm", steps, ["linux-mi325-1gpu-ossci-rocm"])]) for i in range(3)]
    analysis = analyze({CTEST_PATH: CTEST}, runs, RepoConfig())
    (line,) = [u for u in analysis.unmeasured if u.subject == "core-rpm"]
    assert analysis.stats["core-rpm"].samples == 3
    assert line.reason == ("its step `Configure, Build, and Test` (up to 14 min) sets up and tests in one step: foldbot "
                           "counts it all as test, so the setup in it (a build, an install) is not measured and the "
                           "job's setup share reads low")
    assert "List\\ Files" not in line.fix
    pattern = "'^Configure,\\ Build,\\ and\\ Test$'"
    assert f"step_rules: [{{pattern: {pattern}, category: test}}]" in line.fix
    # The fix it names, taken: the job is measured, and the line is gone.
    fixed = analyze({CTEST_PATH: CTEST}, runs, parse_config(f"step_rules: [{{pattern: {pattern}, category: test}}]"))
    assert fixed.unmeasured == ()
    assert fixed.stats["core-rpm"].samples == 3


BUILD_AND_TEST = """name: AMD CI
on: pull_request
jobs:
  hip-tests:
    runs-on: [self-hosted, gfx942]
    steps:
      - uses: actions/checkout@v4
      - name: Build and run tests
        run: cmake -B build && cmake --build build && ctest --test-dir build
      - name: Run python smoke test
        run: python -m pytest tests/smoke
"""


def test_an_hour_of_build_and_test_with_a_short_test_step_beside_it_is_not_a_short_suite() -> None:
    """review80 f02: `Build and run tests` (cmake, then ctest: 70 min) was setup, as `build` matched
    first; with a 2.5-min smoke test beside it the job read 97% setup, a "short suite with no host to
    fold into", and no line said anything. It is a test, and the report says its setup is not measured."""
    path = ".github/workflows/amd-ci.yml"
    runs = [bundle(run_id=700 + i, repo="example/hip-lib", workflow_path=path, workflow_name="AMD CI",
                   head_sha=f"{700 + i:040x}", start=START,
                   jobs=[job("hip-tests", [Step("Set up job", 0.1), Step("Run actions/checkout@v4", 0.5),
                                           Step("Build and run tests", 70 + i), Step("Run python smoke test", 2.5),
                                           Step("Complete job", 0.02)], ["self-hosted", "gfx942"])])
            for i in range(3)]
    analysis = analyze({path: BUILD_AND_TEST}, runs, RepoConfig())
    stats = analysis.stats["hip-tests"]
    assert round(stats.test.median / 60, 1) == 73.5 and stats.setup.median < 60
    assert analysis.plan.folds == () and not any("short suite" in f.reason for f in analysis.plan.findings)
    (line,) = analysis.unmeasured
    assert (line.subject, line.reason.split(":")[0]) == ("hip-tests", "its step `Build and run tests` (up to 72 min) "
                                                                     "sets up and tests in one step")
    assert line.fix.startswith("split it into a setup step and a test step, and each is measured; or, to count it")
    # review83 f03: jax's one Bazel step, which builds jaxlib from source with `build_jaxlib=true`, is said so too
    bazel = [bundle(run_id=800 + i, repo="jax-ml/jax", workflow_path=path, workflow_name="AMD CI",
                    head_sha=f"{800 + i:040x}", start=START,
                    jobs=[job("hip-tests", [Step("Run actions/checkout@v4", 0.5),
                                            Step("Bazel ROCm tests with build_jax=true, build_jaxlib=true", 80)],
                              ["self-hosted", "gfx942"])]) for i in range(3)]
    (line,) = analyze({path: BUILD_AND_TEST.replace("Build and run tests", "Bazel ROCm tests with build_jax=true, "
                                                    "build_jaxlib=true")}, bazel, RepoConfig()).unmeasured
    assert line.reason.startswith("its step `Bazel ROCm tests with build_jax=true, build_jaxlib=true` (up to 80 min) "
                                  "sets up and tests in one step")
    # ... not a step that says it does not build (review87 F05)
    nobuild = [bundle(run_id=850 + i, repo="jax-ml/jax", workflow_path=path, workflow_name="AMD CI",
                      head_sha=f"{850 + i:040x}", start=START,
                      jobs=[job("hip-tests", [Step("Run actions/checkout@v4", 0.5), Step("Run tests with no-build=true", 80)],
                                ["self-hosted", "gfx942"])]) for i in range(3)]
    assert analyze({path: BUILD_AND_TEST.replace("Build and run tests", "Run tests with no-build=true")}, nobuild,
                   RepoConfig()).unmeasured == ()
    # Names that set up only, and say test, stay setup.
    config = RepoConfig()
    setup = ("Build and push test image", "Install speedtest-cli and test network", "Install test dependencies",
             "Setup test environment",
             # review82 f02: a build or an install of tests is no test
             "Configure and Build Tests", "Build and install tests", "Compile and package tests", "Install torch, pytest",
             "Install dependencies and pytest")
    assert {n: config.classify(n) for n in setup} == dict.fromkeys(setup, "setup")
    test = ("Build & Test", "Build and test (ROCm 6.4)", "Install deps, run tests", "Build wheel and run unit tests",
            "Build + Test",
            # review82 f02: the test verb may be followed by anything
            "Build and test ${{ matrix.service }}", "Build and test package", "Build, test, and sign release",
            "Build and Test - gfx942", "Build and run tests [MI300X]")
    assert {n: config.classify(n) for n in test} == dict.fromkeys(test, "test")


# Modelled on ROCm/Megatron-LM's megatron-ci.yml (@015290ee): the image is built on the MI325 runner itself.
IMAGE_PATH = ".github/workflows/megatron-ci.yml"
IMAGE = """name: Megatron-LM CI
on: pull_request
jobs:
  build:
    name: Build Docker image
    runs-on: linux-megatron-mi325-8
    steps:
      - name: Checkout repository
        uses: actions/checkout@v6
      - name: Login to Docker Hub
        uses: docker/login-action@v3
      - name: Build and push Docker image with registry cache
        uses: docker/build-push-action@v5
"""


def test_a_job_of_setup_steps_only_is_not_told_to_make_one_of_them_a_test() -> None:
    """A job that only builds (an image, on the GPU runner) has no test step to find: the fix said to add a
    rule for `<your test step>` as if one were there; it says that a job that only prepares needs none."""
    steps = [Step("Set up job", 0.1), Step("Checkout repository", 1), Step("Login to Docker Hub", 0.05),
             Step("Build and push Docker image with registry cache", 35), Step("Complete job", 0.01)]
    runs = [bundle(run_id=600 + i, repo="ROCm/Megatron-LM", workflow_path=IMAGE_PATH, workflow_name="Megatron-LM CI",
                   head_sha=f"{600 + i:040x}", start=START,
                   jobs=[job("Build Docker image", steps, ["linux-megatron-mi325-8"])]) for i in range(3)]
    (line,) = [u for u in analyze({IMAGE_PATH: IMAGE}, runs, RepoConfig()).unmeasured if u.subject == "build"]
    assert line.reason == "ran in 3 runs but no step is classified as a test; its 36 min were all in setup steps"
    assert line.fix == ("if one of its steps runs tests, add `step_rules: [{pattern: '^<that step>$', category: test}]` "
                        "to .github/foldbot.yml; a job that only builds or prepares (an image, artifacts) has no tests, "
                        "and its time is setup")  # (its runner names its GPU: no doubt of that to raise)


def test_the_headline_counts_the_jobs_whose_setup_it_sums() -> None:
    """Megatron-LM builds its image on the MI325 runner, then tests: the headline's setup figure holds the
    build's 36 minutes, so its job count says there is a job that ran no test, not only the 1 that did."""
    build = [Step("Set up job", 0.1), Step("Checkout repository", 1), Step("Build and push Docker image", 35)]
    jobs = [job("Build Docker image", build, ["linux-megatron-mi325-8"]),
            amd_job("test", labels=["linux-megatron-mi325-8"], setup_minutes=20, tests=[("Run unit tests", 60)])]
    text = IMAGE + """  test:
    needs: [build]
    runs-on: linux-megatron-mi325-8
    steps:
      - name: Run unit tests
        run: pytest
"""
    runs = [bundle(run_id=700 + i, repo="ROCm/Megatron-LM", workflow_path=IMAGE_PATH, workflow_name="Megatron-LM CI",
                   head_sha=f"{700 + i:040x}", start=START, jobs=jobs) for i in range(3)]
    assert "setup vs 1.0 of tests over 1 job that ran tests and 1 that ran none.\n" in \
        to_markdown(analyze({IMAGE_PATH: text}, runs, RepoConfig()))
    assert "of tests over 1 job.\n" in to_markdown(analyze({IMAGE_PATH: text}, [{**b, "jobs": b["jobs"][1:]} for b in runs],
                                                         RepoConfig()))


def test_a_build_job_whose_longest_other_step_is_not_told_that_step_is_a_test() -> None:
    """An image build on the GPU runner with a step of its own that is neither setup nor test (a scan of
    the image; a push was one before pushing an image counted as setup): the fix said, unconditionally,
    to classify it as a test; it says so only if that step runs tests, and that a job that only builds
    has none."""
    steps = [Step("Set up job", 0.1), Step("Run actions/checkout@v4", 1), Step("Build docker image", 120),
             Step("Scan docker image", 15)]
    runs = [bundle(run_id=700 + i, repo="ROCm/Megatron-LM", workflow_path=IMAGE_PATH, workflow_name="Megatron-LM CI",
                   head_sha=f"{700 + i:040x}", start=START,
                   jobs=[job("Build Docker image", steps, ["linux-megatron-mi325-8"])]) for i in range(3)]
    (line,) = [u for u in analyze({IMAGE_PATH: IMAGE}, runs, RepoConfig()).unmeasured if u.subject == "build"]
    assert line.reason == ("ran in 3 runs but no step is classified as a test; its longest other steps: "
                           "`Scan docker image` (15 min)")
    assert line.fix == ("add `step_rules: [{pattern: '^Scan\\ docker\\ image$', category: test}]` to .github/foldbot.yml "
                        "if that step runs tests; a job that only builds or prepares (an image, artifacts) has no tests")


def test_a_job_on_a_runner_the_file_cannot_tell_and_never_run_has_a_line_with_its_fix() -> None:
    """`runs-on: ${{ inputs.runner }}` with no default and no run of the job: no all-clear for it. An input
    the file gives an AMD default is told from that; a CPU default tells nothing (a caller may pass another)."""
    text = AITER + """  nightly:
    runs-on: ${{ inputs.runner }}
    steps:
      - name: Tests
        run: ./.github/scripts/aiter_test.sh
"""
    runs = _runs(*[[_aiter_job("Standard Tests (1 GPU)", "aiter-mi355-1gpu")]] * 3)
    lines = [(u.subject, u.reason, u.fix) for u in analyze({PATH: text}, runs, RepoConfig()).unmeasured]
    assert ("nightly", "`runs-on: ${{ inputs.runner }}` is an expression the file does not resolve, and no run of the job "
            "was seen", "it is measured once a run of it completes; or put the AMD label (or its default, "
            "`inputs.x || 'mi300'`) in the expression, or give the input it reads a `default:`") in lines
    for default, told in (("aiter-1gpu-runner", True), ("ubuntu-latest", False)):
        given = text.replace("on: pull_request\n", "on:\n  pull_request:\n  workflow_dispatch:\n    inputs:\n"
                                                   f"      runner: {{default: {default}}}\n")
        assert ("nightly" in [u.subject for u in analyze({PATH: given}, runs, RepoConfig()).unmeasured]) is not told


IRIS_PATH = ".github/workflows/iris-tests.yml"
# Modelled on ROCm/iris's iris-tests.yml (@96ca5161): the step's name carries matrix values.
IRIS = """name: Iris Tests
on: pull_request
jobs:
  test-new-examples:
    strategy:
      matrix:
        include:
          - {num_ranks: 4, install_method: editable}
          - {num_ranks: 8, install_method: editable}
    runs-on: linux-mi325-8
    steps:
      - uses: actions/checkout@v4
      - name: Build Iris container
        run: apptainer build iris.sif iris.def
      - name: Launch new examples on ${{ matrix.num_ranks }} ranks (${{ matrix.install_method }})
        run: ./run_examples.sh ${{ matrix.num_ranks }}
"""


def test_the_step_rule_offered_for_a_step_named_with_matrix_values_takes_every_entry() -> None:
    """The rule offered was the first entry's name (`Launch new examples on 4 ranks (editable)`):
    applied, the 8-rank job still had no test step, and the line then offered that name."""
    def shard(ranks: int):
        steps = [Step("Set up job", 0.1), Step("Run actions/checkout@v4", 1), Step("Build Iris container", 20),
                 Step(f"Launch new examples on {ranks} ranks (editable)", 12)]
        return job(f"test-new-examples ({ranks}, editable)", steps, ["linux-mi325-8"])
    runs = [bundle(run_id=800 + i, repo="ROCm/iris", workflow_path=IRIS_PATH, workflow_name="Iris Tests",
                   head_sha=f"{800 + i:040x}", start=START, jobs=[shard(4), shard(8)]) for i in range(3)]
    (line,) = [u for u in analyze({IRIS_PATH: IRIS}, runs, RepoConfig()).unmeasured if u.subject == "test-new-examples"]
    pattern = r"Launch\ new\ examples\ on\ .*\ ranks\ \(.*\)"
    assert line.fix.startswith(f"add `step_rules: [{{pattern: '^{pattern}$', category: test}}]` to .github/foldbot.yml")
    config = parse_config(f"step_rules: [{{pattern: '^{pattern}$', category: test}}]\n")
    assert [u for u in analyze({IRIS_PATH: IRIS}, runs, config).unmeasured if u.subject == "test-new-examples"] == []


TWINS = """name: Lane
on: pull_request
jobs:
  llm-td:
    name: before-test
    runs-on: {runner}
    steps:
      - name: Run retriever
        run: python retrieve.py
  target-determination:
    name: before-test
    runs-on: {runner}
    steps:
      - name: Run retriever
        run: python retrieve.py
  gpu:
    runs-on: linux-mi300-gpu-1
    steps:
      - name: Run tests
        run: pytest
"""


@pytest.mark.parametrize("runner, skipped, lines", [("linux.2xlarge", False, 0), ("linux-mi300-gpu-2", False, 1),
                                                    ("linux.2xlarge", True, 0), ("linux-mi300-gpu-2", True, 0)])
def test_jobs_one_name_fits_equally_are_said_only_when_they_ran_on_amd_runners(runner: str, skipped: bool,
                                                                               lines: int) -> None:
    """review83 f02: pytorch's `before-test` callers (CPU pools) were asked to be renamed, for nothing: a
    job on other runners needs no measuring. On AMD runners they are not counted, and said so. A job
    GitHub skipped has no time to count: no line (review99 f02: ROCm/pytorch's gated lanes, whose build and
    test callers share a name, were told to rename them, and that was all their report said)."""
    path = ".github/workflows/lane.yml"
    twin = (lambda minutes: skipped_job("before-test")) if skipped else (
        lambda minutes: job("before-test", [Step("Run retriever", minutes)], [runner]))
    runs = [bundle(run_id=900 + i, repo="o/r", workflow_path=path, workflow_name="Lane", head_sha=f"{900 + i:040x}",
                   start=START, jobs=[twin(3), twin(4),
                                      job("gpu", [Step("Pull image", 20), Step("Run tests", 30)], ["linux-mi300-gpu-1"])])
            for i in range(3)]
    analysis = analyze({path: TWINS.format(runner=runner)}, runs, RepoConfig())
    said = [u for u in analysis.unmeasured if "equally" in u.reason]
    assert len(said) == lines
    if lines:
        assert said[0].subject == "before-test" and said[0].fix == "give the jobs distinct `name:`s"


def test_a_history_of_runs_that_skipped_their_amd_jobs_says_it_holds_too_few_samples() -> None:
    """review92 f02 (ROCm/xla's nightly lane, which runs on every PR label event and skips its job unless the label
    is `nightly-pipeline`): of 5 runs read, 3 ran nothing; the figures rest on 2 samples, and nothing said so."""
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    skipped = [skipped_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)")]
    five = parse_config("history_runs: 5\n")
    analysis = analyze({PATH: AITER}, _runs(ran, skipped, skipped, ran, skipped), five)
    assert [(u.subject, u.reason, u.fix) for u in analysis.unmeasured if u.subject == "history"] == [(
        "history",
        "3 runs of the 5 read skipped all their AMD jobs (a gate, a label or a path filter), so no job has more than 2 "
        "samples, fewer than `min_samples` (3)",
        "read more runs: `history_runs: 10` in .github/foldbot.yml (the App reads 5), or more runs to `foldbot analyze`")]
    enough = analyze({PATH: AITER}, _runs(ran, skipped, ran, ran, skipped), five)
    assert not [u for u in enough.unmeasured if u.subject == "history"]  # 3 samples: enough
    # (review93 f05) fewer runs read than `history_runs` asks: there are no more to read; at 100, none more is taken
    assert not [u for u in analyze({PATH: AITER}, _runs(ran, skipped, skipped, ran, skipped), RepoConfig()).unmeasured
                if u.subject == "history"]
    most = analyze({PATH: AITER}, _runs(*[skipped] * 98, ran, ran), parse_config("history_runs: 100\n"))
    assert not [u for u in most.unmeasured if u.subject == "history"]


TITAN = """name: 8 GPU Integration Tests (ROCm)
on: pull_request
jobs:
  build-test:
    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main
    with:
      runner: linux.rocm.gpu.ecosystem.mi350.8
      docker-image: torchtitan-rocm-ubuntu-22.04-clang12
      script: |
        set -eux
        python -m pip install filelock sympy networkx jinja2
        USE_CPP=0 python -m pip install --pre torchao --index-url https://download.pytorch.org/whl/nightly/rocm7.0
        python -m tests.integration_tests.run_tests --test_suite h100 artifacts --ngpu 8
"""
TITAN_PATH = ".github/workflows/integration_test_8gpu_rocm.yaml"


def _titan_runs() -> list[dict]:
    steps = [Step("Set up job", 0.1), Step("Setup ROCM", 3), Step("Pull docker image", 8),
             Step("Run script in container", 34), Step("Surface failing tests", 0.2), Step("Complete job", 0.1)]
    return [bundle(run_id=500 + i, repo="pytorch/torchtitan", workflow_path=TITAN_PATH, workflow_name="8 GPU",
                   head_sha=f"{500 + i:040x}", jobs=[job("build-test / linux-job", steps,
                                                          ["linux.rocm.gpu.ecosystem.mi350.8"])], start=START)
            for i in range(3)]


def test_a_script_a_caller_passes_test_infra_that_installs_before_its_tests_is_said_to_set_up_too() -> None:
    """review92 f03 (pytorch/torchtitan's ROCm lane): test-infra's `Run script in container` runs the caller's
    `script:`, which pip-installs torch's dependencies and torchao nightly before its tests; all of it counted as
    test, with no line, as `Configure, Build, and Test` gets."""
    analysis = analyze({TITAN_PATH: TITAN}, _titan_runs(), RepoConfig())
    (line,) = [u for u in analysis.unmeasured if u.subject == "build-test"]
    assert line.reason == (
        "its step `Run script in container` (up to 34 min) runs the `script:` this job passes "
        "`pytorch/test-infra/.github/workflows/linux_job_v2.yml@main`, which installs before its tests (`python -m pip "
        "install filelock sympy networkx jinja2`): foldbot counts it all as test, so the setup in it (a build, an "
        "install) is not measured and the job's setup share reads low")
    assert line.fix.startswith("install that in the job's image (the `docker-image:` it passes), and the step runs the "
                               "tests alone; or, to count it as test as it is and drop this line, add `step_rules: ")
    quiet = TITAN.replace("        python -m pip install filelock sympy networkx jinja2\n", "").replace(
        "        USE_CPP=0 python -m pip install --pre torchao --index-url https://download.pytorch.org/whl/nightly/rocm7.0\n",
        "")
    assert not [u for u in analyze({TITAN_PATH: quiet}, _titan_runs(), RepoConfig()).unmeasured
                if u.subject == "build-test"]
    looked_at = parse_config("step_rules:\n  - {pattern: '^Run script in container$', category: test}\n")
    assert not [u for u in analyze({TITAN_PATH: TITAN}, _titan_runs(), looked_at).unmeasured
                if u.subject == "build-test"]


# Modelled on AMD-AGI/Primus-Turbo's ci.yaml (@0088a2be): a job on the GPU pool that only builds a wheel, unit tests
# whose first step is an unnamed `run: echo "... Unit Test."`, every GPU job gated on a `ci:gpu` PR label.
PRIMUS = ".github/workflows/ci.yaml"
PRIMUS_CI = """name: Primus-Turbo-CI
on:
  push: {branches: [main]}
  pull_request: {types: [opened, synchronize, labeled]}
jobs:
  code-lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Run pre-commit
        run: pre-commit run --all-files
  install-dependencies:
    if: github.event_name != 'pull_request' || contains(github.event.pull_request.labels.*.name, 'ci:gpu')
    runs-on: [mi355-torch-ut]
    steps:
      - name: Build UCCL
        run: ./build_uccl.sh
      - name: Copy wheel to shared storage
        run: cp dist/*.whl /shared/
  unittest-jax-gfx942:
    needs: install-dependencies
    runs-on: [mi355-jax-ut]
    steps:
      - run: echo "Begin Primus-Turbo JAX Framework Unit-Test."
      - name: Install and build
        run: pip install -e .
      - name: Run single-GPU tests (parallel)
        run: pytest -n 8 tests/jax
  unittest-pytorch-gfx942:
    needs: install-dependencies
    runs-on: [mi355-torch-ut]
    steps:
      - run: echo "Begin Primus-Turbo PyTorch Framework Unit Test."
      - name: Checkout
        uses: actions/checkout@v4
      - name: Install and build
        run: pip install -e .
      - name: Run single-GPU tests (parallel)
        run: pytest -n 8 tests/pytorch
      - name: Run distributed tests
        run: pytest tests/pytorch/dist
"""


def _build_only() -> Any:
    return job("install-dependencies", [Step("Set up job", 0.1), Step("Build UCCL", 7.5),
                                        Step("Copy wheel to shared storage", 0.1), Step("Complete job", 0.01)],
               ["mi355-torch-ut"])


def _unit_tests(*, build_fails: bool) -> Any:
    tests = "skipped" if build_fails else "success"
    return job("unittest-pytorch-gfx942", [
        Step("Set up job", 0.1), Step('Run echo "Begin Primus-Turbo PyTorch Framework Unit Test."', 1 / 60),
        Step("Checkout", 0.6), Step("Install and build", 6.0 if build_fails else 22.0,
                                    "failure" if build_fails else "success"),
        Step("Run single-GPU tests (parallel)", 85, tests), Step("Run distributed tests", 14, tests),
        Step("Post Checkout", 0.05), Step("Complete job", 0.01)], ["mi355-torch-ut"],
        "failure" if build_fails else "success", after_minutes=8)


def _jax_tests() -> Any:
    return job("unittest-jax-gfx942", [
        Step("Set up job", 0.1), Step('Run echo "Begin Primus-Turbo JAX Framework Unit-Test."', 1 / 60),
        Step("Install and build", 9), Step("Run single-GPU tests (parallel)", 18), Step("Complete job", 0.01)],
        ["mi355-jax-ut"], after_minutes=8)


def _primus(*jobs_per_run: list[Any]) -> list[dict]:
    return [bundle(run_id=300 + i, repo="AMD-AGI/Primus-Turbo", workflow_path=PRIMUS, workflow_name="Primus-Turbo-CI",
                   head_sha=f"{300 + i:040x}", jobs=list(jobs), start=START) for i, jobs in enumerate(jobs_per_run)]


PRIMUS_CONFIG = parse_config("lanes: [.github/workflows/ci.yaml]\namd_runner_pattern: '^mi355-'\n")


def test_a_job_that_failed_before_its_tests_is_no_sample_though_it_echoes_a_banner_that_says_test() -> None:
    """review98 f01: GitHub names an unnamed step `Run <its first line>`; Primus-Turbo's `Run echo "... Unit Test."`
    was a test step, so a job whose build failed (its test steps skipped) counted as a sample of ~1 s of tests, and,
    in every run so, a "short suite" of 0 min with no word under Could not measure."""
    good, failed = _unit_tests(build_fails=False), _unit_tests(build_fails=True)
    mixed = analyze({PRIMUS: PRIMUS_CI}, _primus(*[[_build_only(), failed if i % 2 else good] for i in range(6)]),
                    PRIMUS_CONFIG)
    stats = mixed.stats["unittest-pytorch-gfx942"]
    assert (stats.samples, stats.test.median) == (3, 99 * 60)

    never = analyze({PRIMUS: PRIMUS_CI}, _primus(*[[_build_only(), failed, _jax_tests()] for _ in range(4)]),
                    PRIMUS_CONFIG)
    report = to_markdown(never)
    assert "`unittest-pytorch-gfx942`: it failed before its tests in each of the 4 runs it ran in, so no run measured " \
           "them \\(see “Could not measure”\\)" in report
    assert _section(report)[1] == (
        "- `unittest-pytorch-gfx942`: failed before its tests in 4 runs \\(its test steps were skipped there\\), and no "
        "run of the 4 read ran them: how long its tests take is not known. **Fix:** see on the runs' pages which step "
        "failed \\(a build or an install\\); the next run that reaches its tests is measured.")
    assert "short suite" not in report


def test_a_latest_run_a_gate_skipped_says_so_beside_another_jobs_line() -> None:
    """review98 f02: a PR without the `ci:gpu` label skips every GPU job; the history's build-only job on the GPU
    pool has a Could-not-measure line of its own, which had kept the latest run's line out (the headline pointed
    at nothing), and the headline named the skipped jobs only when the latest run had test time."""
    ran = [_build_only(), _unit_tests(build_fails=False)]
    gated = [skipped_job("install-dependencies"), skipped_job("unittest-pytorch-gfx942")]
    report = to_markdown(analyze({PRIMUS: PRIMUS_CI}, _primus(ran, ran, ran, gated), PRIMUS_CONFIG))
    assert "**No AMD job spent time on setup or tests in the latest run**: it skipped `install-dependencies` and " \
           "`unittest-pytorch-gfx942` (a gate); see *Could not measure* below." in report
    lines = _section(report)
    assert [line.split(":", 1)[0] for line in lines] == ["- `install-dependencies`", "- `AMD test time`"]
    assert lines[1].startswith("- `AMD test time`: no AMD job of the latest run \\(303\\) ran a test step \\(2 jobs: "
                               "2 skipped\\).")


# Modelled on ROCm/apex's rocm-ci.yml (@48d9e9c8): one test step starts a fresh ROCm container, installs the build
# tools, a venv and the torch and apex wheels in it, then runs the tests.
APEX = ".github/workflows/rocm-ci.yml"
APEX_CI = """name: ROCm CI
on: pull_request
jobs:
  test:
    name: Test
    runs-on: linux-apex-mi325-8
    steps:
      - name: Checkout
        uses: actions/checkout@v4
      - name: Run Tests
        run: |
          cat << 'EOF' > run_tests_docker.sh
          apt-get update && apt-get install -y python3-venv build-essential cmake git
          python3 -m venv /venv
          pip install -U pip setuptools wheel
          pip install .ci/wheels/torch*.whl
          bash tests/jit_build/run_tests.sh
          EOF
          docker run -d --name rocm-tester rocm/dev-ubuntu-24.04:7.2-complete sleep infinity
          docker exec rocm-tester /workspace/run_tests_docker.sh
      - name: Run ${{ matrix.none }}quick tests
        run: pytest tests/quick
"""


def test_a_test_step_whose_own_run_installs_before_its_tests_is_said_to_set_up_too() -> None:
    """review99 f03: apex's only test step installs its dependencies in a fresh container before its tests; foldbot
    counted it all as test (a 2% setup share) and said nothing, though the same text passed as test-infra's
    `script:` had a line. A test step that installs nothing has none; a rule of the repository's own silences it.
    (Its first install is the `apt-get install` after `apt-get update &&`: review145 x06, read since 2026-12-07; it
    was said to be the `pip install` two lines below.)"""
    runs = [bundle(run_id=500 + i, repo="ROCm/apex", workflow_path=APEX, workflow_name="ROCm CI",
                   head_sha=f"{500 + i:040x}", start=START, jobs=[job("Test", [
                       Step("Set up job", 0.1), Step("Checkout", 0.5), Step("Run Tests", 180),
                       Step("Run quick tests", 5), Step("Complete job", 0.01)], ["linux-apex-mi325-8"])])
            for i in range(3)]
    analysis = analyze({APEX: APEX_CI}, runs, RepoConfig())
    assert [(u.subject, u.reason, u.fix) for u in analysis.unmeasured] == [(
        "test", "its step `Run Tests` (up to 180 min) installs before its tests (`apt-get update && apt-get install -y "
                "python3-venv build-essential cmake git`): foldbot counts it all as test, so the setup in it (a build, an install) is not measured and "
                "the job's setup share reads low",
        "split it into a setup step and a test step, and each is measured; or, to count it as test as it is and drop "
        "this line, add `step_rules: [{pattern: '^Run\\ Tests$', category: test}]` to .github/foldbot.yml")]
    ours = parse_config("step_rules: [{pattern: '^Run Tests$', category: test}]\n")
    assert analyze({APEX: APEX_CI}, runs, ours).unmeasured == ()


SCRIPTS = """name: ROCm
on: pull_request
jobs:
  unit:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: echo "Begin unit tests"
      - run: |
          echo "Running unit tests"
          pytest -n 8 tests/unit
  integ:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: |
          pip install -e .
          pytest tests/integration
      - name: Run tests
        run: |
          pytest -n 8 tests --cov=pkg
          pip install codecov
          codecov
"""


def test_an_unnamed_script_is_not_judged_by_a_first_line_that_does_not_speak_for_it() -> None:
    """review102 f01, f04: GitHub names an unnamed `run:` step by its first line; a banner (`echo`) or an install
    there said nothing of the tests on the next lines, which had been lost (`unit` measured no more; `integ`'s 50
    minutes setup). An install after the tests (`pip install codecov`) is no setup before them. review107 f03: the
    tests its commands run make it a test step, as a name that says it installs and then tests does (it was `other`:
    "no step is classified as a test" where there was one), and the install before them is said, as for such a name."""
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=800 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{800 + i:040x}",
                   start=START, jobs=[
                       job("unit", [Step("Set up job", 0.2), Step('Run echo "Begin unit tests"', 0.02),
                                    Step('Run echo "Running unit tests"', 45)], ["linux-mi300-gpu-1"]),
                       job("integ", [Step("Set up job", 0.2), Step("Run pip install -e .", 50), Step("Run tests", 70)],
                           ["linux-mi300-gpu-1"])]) for i in range(3)]
    analysis = analyze({path: SCRIPTS}, runs, RepoConfig())
    unit = analysis.latest.jobs[0]
    assert [(s.name, s.category) for s in unit.work_steps] == [('Run echo "Begin unit tests"', "other"),
                                                               ('Run echo "Running unit tests"', "test")]
    assert analysis.stats["unit"].samples == 3
    integ = analysis.latest.jobs[1]
    assert [(s.name, s.category) for s in integ.work_steps] == [("Run pip install -e .", "test"), ("Run tests", "test")]
    assert integ.setup_seconds == 12
    assert [(u.subject, u.reason) for u in analysis.unmeasured] == [(
        "integ", "its step `Run pip install -e .` (up to 50 min) installs before its tests (`pip install -e .`): foldbot "
                 "counts it all as test, so the setup in it (a build, an install) is not measured and the job's setup "
                 "share reads low")]


def test_a_script_no_rule_takes_is_a_test_by_its_commands_and_its_install_is_said() -> None:
    """review107 f03: `Run pip install -e .; cd src` is a name no rule takes (an install's rule passes a line that
    runs more); its commands run pytest: a test step, whose install before the tests is said, as for one a rule
    takes."""
    text = ("name: ROCm\non: pull_request\njobs:\n  integ:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          pip install -e .; cd src\n          pytest tests/integration\n")
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=820 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{820 + i:040x}",
                   start=START, jobs=[job("integ", [Step("Set up job", 0.2), Step("Run pip install -e .; cd src", 50)],
                                          ["linux-mi300-gpu-1"])]) for i in range(3)]
    assert RepoConfig().rule_for("Run pip install -e .; cd src") is None
    analysis = analyze({path: text}, runs, RepoConfig())
    assert [(s.name, s.category) for s in analysis.latest.jobs[0].work_steps] == [("Run pip install -e .; cd src", "test")]
    assert [u.reason for u in analysis.unmeasured] == [
        "its step `Run pip install -e .; cd src` (up to 50 min) installs before its tests (`pip install -e .; cd src`): "
        "foldbot counts it all as test, so the setup in it (a build, an install) is not measured and the job's setup "
        "share reads low"]


def test_a_script_that_sets_up_its_shell_first_is_measured_by_its_commands() -> None:
    """An unnamed step that starts with shell set-up (`set -ex`) is named by that line, which no rule takes: its
    pytest ran 40 minutes in a step counted as other ("no step is classified as a test"), and a step that only
    installs was other too, not setup. Now the first is the job's test and the second its setup."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          set -ex\n          pip install -r requirements.txt\n"
            "      - run: |\n          export HIP_VISIBLE_DEVICES=0\n          python -m pytest -n 8 tests\n")
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=860 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{860 + i:040x}",
                   start=START, jobs=[job("t", [Step("Set up job", 0.2), Step("Run set -ex", 20),
                                                Step("Run export HIP_VISIBLE_DEVICES=0", 40)], ["linux-mi300-gpu-1"])])
            for i in range(3)]
    analysis = analyze({path: text}, runs, RepoConfig())
    t = analysis.latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [("Run export HIP_VISIBLE_DEVICES=0", "test")]
    assert (t.setup_seconds, t.test_seconds, t.other_seconds) == (20.2 * 60, 40 * 60, 0)
    assert analysis.stats["t"].samples == 3
    assert analysis.unmeasured == ()


def test_a_named_step_that_no_rule_takes_goes_by_its_commands() -> None:
    """A step named `Run script` (kernelbot's runner_ci.yml, 1b2ce099: `pytest scripts/ci_test_python.py`) was other,
    as its name says nothing the rules know: 40 minutes of pytest left out, and "no step is classified as a test".
    Where no rule takes a named step's name, its commands decide, as an unnamed one's do: test, and setup for one
    that only installs (`Prepare the box`, `pip install -r requirements.txt`). Two steps named alike are read in
    the job's order; a name a rule takes still goes by the rule (`Upload results` runs pytest --co: other); one
    whose commands say nothing (`Show off tinybox`) stays other."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - name: Prepare the box\n        run: pip install -r requirements.txt\n"
            "      - name: Run script\n        run: |\n          pip install pytest\n"
            "      - name: Run script\n        run: |\n          pytest scripts/ci_test_python.py\n"
            "      - name: Show off tinybox\n        run: /opt/rocm/bin/rocm-bandwidth-test\n"
            "      - name: Upload results\n        run: pytest --co -q > tests.txt\n")
    path = ".github/workflows/rocm.yml"
    workflow = parse_workflow(text, path)
    assert [RepoConfig().step_category(s) for s in workflow.jobs["t"].steps] == [
        "setup", "setup", "test", "other", "other"]
    analysis = analyze({path: text}, _shell_steps_history(text, [
        Step("Prepare the box", 3), Step("Run script", 2), Step("Run script", 40), Step("Show off tinybox", 1),
        Step("Upload results", 1)], 900), RepoConfig())
    t = analysis.latest.jobs[0]
    assert [(s.name, s.category, s.seconds) for s in t.work_steps] == [
        ("Run script", "test", 2400.0), ("Show off tinybox", "other", 60.0), ("Upload results", "other", 60.0)]
    assert (t.setup_seconds, t.test_seconds) == (5.2 * 60, 40 * 60)
    assert analysis.unmeasured == ()
    gather = parse_workflow("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n"
                            "      - {name: Gather, run: pytest --co -q}\n", path)
    assert RepoConfig().step_category(gather.jobs["t"].steps[0]) == "other"  # (`--co`: --collect-only, no test run)
    ours = parse_config("step_rules: [{pattern: '^Run script$', category: other}]\n")
    assert [s.category for s in analyze({path: text}, _shell_steps_history(text, [
        Step("Run script", 2), Step("Run script", 40)], 910), ours).latest.jobs[0].work_steps] == ["other", "other"]


@pytest.mark.parametrize("written, shown", [("${{ matrix.suite }}", "unit"), ("Run ${{ matrix.suite }}", "Run unit")])
def test_a_named_step_with_an_expression_is_not_read_into_the_other_steps(written: str, shown: str) -> None:
    """review146 y01: a named step whose name has an expression (`Run ${{ matrix.suite }}`, running pytest) is found in
    GitHub's list by the text around it; `Run actions/checkout@v4` and an unnamed `Run python3 tools/dump_logs.py` fit
    that text too and were read as it: test, on the API side alone. A name another step of the job has as it is is
    that step's; a name of expressions alone has no text to be found by, and goes by the rules (other)."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n"
            "        suite: [unit]\n    steps:\n      - uses: actions/checkout@v4\n"
            f"      - name: {written}\n        run: pytest tests/${{{{ matrix.suite }}}}\n"
            "      - run: python3 tools/dump_logs.py\n")
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=920 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{920 + i:040x}",
                   start=START, jobs=[job("t (unit)", [Step("Set up job", 0.2), Step("Run actions/checkout@v4", 1),
                                                       Step(shown, 20), Step("Run python3 tools/dump_logs.py", 5)],
                                          ["linux-mi300-gpu-1"])]) for i in range(3)]
    t = analyze({path: text}, runs, RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [
        (shown, "test" if written.startswith("Run") else "other"), ("Run python3 tools/dump_logs.py", "other")]
    assert t.setup_seconds == 1.2 * 60


def test_a_script_that_only_looks_is_setup_before_the_tests_and_other_after_them() -> None:
    """pytorch/helion's `Run ROCm command` (`rocminfo`, 0038623e) and ROCm/triton's `Clear cache` (`rm -rf ~/.triton`,
    72b19d55) ready the machine before the tests, but no rule takes their names and their commands only look: they
    were other, out of the setup the job pays. A script that only looks, fetches, copies or removes is setup before
    the job's first test step, and other after it (the same look at what the tests left); alike-named steps each by
    its place; the file's steps so too (what a fold moves). In a job with no test step it stays other; a rule that
    takes its name wins."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - name: Run ROCm command\n        run: |\n          echo \"Detected ROCm image\"\n"
            "          rocminfo || echo \"rocminfo not found\"\n"
            "      - name: Clear cache\n        run: |\n          rm -rf ~/.triton\n          mkdir -p ~/.triton\n"
            "      - run: ls -la /dev/dri\n"
            "      - name: Run tests\n        run: pytest tests\n"
            "      - name: Clear cache\n        run: rm -rf ~/.triton\n"
            "      - run: ls -la results/\n")
    path = ".github/workflows/rocm.yml"
    steps = parse_workflow(text, path).jobs["t"].steps
    assert [(s.unspoken, s.looks_only, RepoConfig().step_category(s)) for s in steps] == [
        ("named", True, "setup"), ("named", True, "setup"), ("look", True, "setup"), ("named", False, "test"),
        ("named", True, "other"), ("look", True, "other")]
    history = _shell_steps_history(text, [
        Step("Run ROCm command", 1), Step("Clear cache", 2), Step("Run ls -la /dev/dri", 3), Step("Run tests", 40),
        Step("Clear cache", 4), Step("Run ls -la results/", 5)], 930)
    t = analyze({path: text}, history, RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [
        ("Run tests", "test"), ("Clear cache", "other"), ("Run ls -la results/", "other")]
    assert (t.setup_seconds, t.test_seconds, t.other_seconds) == (6.2 * 60, 40 * 60, 9 * 60)
    ours = parse_config("step_rules: [{pattern: '^Clear cache$', category: other}]\n")
    assert [s.name for s in analyze({path: text}, history, ours).latest.jobs[0].work_steps] == [
        "Clear cache", "Run tests", "Clear cache", "Run ls -la results/"]
    no_tests = text.replace("      - name: Run tests\n        run: pytest tests\n", "")
    assert [(s.name, s.category) for s in analyze({path: no_tests}, _shell_steps_history(no_tests, [
        Step("Run ROCm command", 1), Step("Clear cache", 2)], 940), RepoConfig()).latest.jobs[0].work_steps] == [
        ("Run ROCm command", "other"), ("Clear cache", "other")]


@pytest.mark.parametrize("script, looks", [
    ("rocminfo || echo 'rocminfo not found'", True),
    ("rm -rf ~/.triton\nmkdir -p ~/.triton\nls -alh ~/.triton", True),
    ("curl -L -o /tmp/data.tar https://example.com/d.tar && tar -xf /tmp/data.tar", True),
    ("env | sort", True),
    ("ls /dev/dri | grep render", True),
    ("find . -name '*.log' | xargs rm -f", False),  # (`find` is no look)
    ("ls build/*.o | xargs rm -f", True),
    # review151 c01, c02, c05: what `env` runs, what a look pipes into, a check of the work, are no looks
    ("env HIP_VISIBLE_DEVICES=0 python3 examples/infer.py --model m", False),
    ("sudo -E env HSA_NO_SCRATCH_RECLAIM=1 ./build/bin/gemm_bench --all", False),
    ("env X=1 ls -la", True),
    ("ls configs/*.yaml | xargs -n1 python3 bench_kernel.py --config", False),
    ("cat prompts.jsonl | python3 infer.py", False),
    ("ls tests/ops/test_*.py | xargs -n1 python3", False),
    ("git diff --exit-code -- csrc/generated", False),
    ("git status --porcelain", False),
    ("git -C third_party/ck diff --quiet", False),
    ("git submodule update --init", True),
    ("curl -sf -X POST localhost:30000/generate -d @prompt.json", False),
    ("curl -s http://127.0.0.1:8000/health", False),
    ("curl -fsSL https://example.com/install.tar | tar -xz", True),
    ("echo 'Hello'\npwd\nls -a\ndocker --version\nid\ncat /etc/group | grep docker", True),  # cupy's `foo`
    # review152 d04: what `env` runs without a variable, and what a look runs for its words
    ("env -u HIP_VISIBLE_DEVICES ./bench --all", False),
    ("env -- python3 infer.py", False),
    ("env python3 infer.py", False),
    ("env -i ls", True),
    ("ls $(python3 pick_tests.py)", False),
    ("ls `python3 pick_tests.py`", False),
    ("ls $(pwd)/logs", True),
])
def test_what_only_looks(script: str, looks: bool) -> None:
    body = "".join(f"          {line}\n" for line in script.splitlines())
    step = parse_workflow(f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - name: Look\n        run: |\n{body}",
                          ".github/workflows/a.yml").jobs["a"].steps[0]
    assert step.looks_only is looks


def test_a_look_after_a_test_github_shows_by_an_expression_is_other() -> None:
    """review151 c04: a test step named `${{ matrix.suite }}` is no test in the file (its name is the template, its
    script says nothing), but GitHub shows it as `Accuracy tests`, a test: the `Clear cache` after it clears what
    those tests left, other, though it comes before the file's first test step."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n"
            "    strategy:\n      matrix:\n        suite: [Accuracy tests]\n    steps:\n"
            "      - name: ${{ matrix.suite }}\n        run: bash ci/run_suite.sh \"${{ matrix.suite }}\"\n"
            "      - name: Clear cache\n        run: rm -rf ~/.triton/cache\n"
            "      - name: Run unit tests\n        run: pytest tests/unit\n")
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=960 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{960 + i:040x}",
                   start=START, jobs=[job("t (Accuracy tests)", [Step("Set up job", 0.2), Step("Accuracy tests", 30),
                                                                 Step("Clear cache", 2), Step("Run unit tests", 10)],
                                          ["linux-mi300-gpu-1"])]) for i in range(3)]
    t = analyze({path: text}, runs, RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [
        ("Accuracy tests", "test"), ("Clear cache", "other"), ("Run unit tests", "test")]


def test_a_suite_that_fetches_its_data_before_its_tests_folds_only_into_a_host_that_does_too() -> None:
    """review151 c03: a suite's unnamed 20-minute `curl ... && tar ...` before its tests is setup where it is measured,
    so a fold counted it as saved; but the file's steps read it alone, other, and the patch moved it into the host,
    where it still ran (under a timeout of three times the suite's 3-minute tests). The file's steps read it by its
    place too: it is setup the host lacks, and the suite is not folded, with the step named."""
    fetch = "curl -L -o /tmp/data.tar https://example.com/kernel-data.tar && tar -xf /tmp/data.tar -C /tmp"

    def job_text(job_id: str, test: str, extra: str = "") -> str:
        return (f"  {job_id}:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - uses: actions/checkout@v4\n"
                "      - name: Start CI container\n        run: bash start.sh\n"
                f"{extra}      - name: {test}\n        timeout-minutes: 30\n        run: pytest tests\n")
    text = ("name: AMD\non: pull_request\njobs:\n" + job_text("kernels", "Run kernel tests", f"      - run: {fetch}\n")
            + job_text("ops", "Run op tests"))
    path = ".github/workflows/amd.yml"

    def steps(test: str, minutes: float, fetching: bool) -> list[Step]:
        return [Step("Set up job", 0.1), Step("Run actions/checkout@v4", 0.2), Step("Start CI container", 40),
                *([Step(f"Run {fetch}", 20)] if fetching else []), Step(test, minutes)]
    runs = [bundle(run_id=980 + i, repo="o/r", workflow_path=path, workflow_name="AMD", head_sha=f"{980 + i:040x}",
                   start=START, jobs=[job("kernels", steps("Run kernel tests", 3, True), ["linux-mi300-gpu-1"]),
                                      job("ops", steps("Run op tests", 40, False), ["linux-mi300-gpu-1"])])
            for i in range(4)]
    analysis = analyze({path: text}, runs, RepoConfig())
    kernels = next(j for j in analysis.latest.jobs if j.name == "kernels")
    assert (kernels.setup_seconds, kernels.test_seconds) == (60.3 * 60, 3 * 60)
    assert analysis.plan.folds == ()
    assert [(f.job, f.reason) for f in analysis.plan.findings if f.job == "kernels"] == [(
        "kernels", f"short suite with no host to fold into (`ops`: its setup lacks the suite's step `Run {fetch}`)")]


def test_many_steps_named_by_an_expression_are_each_found_once() -> None:
    """review151 c07: 3,000 unnamed `ls -la ${{ github.workspace }}/dir<i>` steps (looks, read by their place) were each
    tried against every other by the text around the expression, again in each run read: ~9 s a run. A name is
    tried only against those whose text after the expression it ends with, once for all runs."""
    n = 3000
    text = ("name: X\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            + "".join(f"      - run: ls -la ${{{{ github.workspace }}}}/dir{i}\n" for i in range(n))
            + "      - name: Run tests\n        run: pytest\n")
    path = ".github/workflows/x.yml"
    steps = [Step(f"Run ls -la /home/runner/work/r/r/dir{i}", 0.05) for i in range(n)] + [Step("Run tests", 10)]
    runs = [bundle(run_id=990 + i, repo="o/r", workflow_path=path, workflow_name="X", head_sha=f"{990 + i:040x}",
                   start=START, jobs=[job("t", steps, ["linux-mi300-gpu-1"])]) for i in range(3)]
    with _within_10_s("3 runs of 3,000 steps named by an expression"):
        t = analyze({path: text}, runs, RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [("Run tests", "test")]
    assert t.setup_seconds == n * 3


def test_a_clean_up_the_rules_call_setup_is_other_after_the_last_test() -> None:
    """ROCm/aiter's triton-test.yml runs `Clean up Rocm processes` before its tests and again, `if: always()`, after
    them; ROCm/rocm-examples' last step is `Clean the workspace`: the rules say setup (a clean machine before the
    tests), so the clean-ups after the tests were counted as setup the job pays. A step a default setup rule takes is
    other after the job's last test step, in GitHub's list and in the file (a fold reads it as the suite's teardown),
    in order among the other steps; not the steps GitHub adds after a job's own (`Post ...`, `Complete job`), not one
    a repository's own rule takes, not in a job with no test step."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - {name: Checkout code, uses: actions/checkout@v4}\n"
            "      - {name: Clean up Rocm processes, run: bash clean.sh}\n"
            "      - {name: Run tests, run: pytest tests}\n"
            "      - {name: Upload logs, uses: actions/upload-artifact@v4}\n"
            "      - {name: Clean up Rocm processes, if: always(), run: bash clean.sh}\n"
            "      - {name: Clean the workspace, if: always(), run: rm -rf build}\n"
            "  build:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - {name: Build wheel, run: python -m build}\n"
            "      - {name: Clean the workspace, run: rm -rf build}\n")
    path = ".github/workflows/rocm.yml"
    workflow = parse_workflow(text, path)
    assert [RepoConfig().step_category(s) for s in workflow.jobs["t"].steps] == [
        "setup", "setup", "test", "other", "other", "other"]
    assert [RepoConfig().step_category(s) for s in workflow.jobs["build"].steps] == ["setup", "setup"]
    listed = [Step("Set up job", 0.1), Step("Checkout code", 0.2), Step("Clean up Rocm processes", 1),
              Step("Run tests", 40), Step("Upload logs", 2), Step("Clean up Rocm processes", 3),
              Step("Clean the workspace", 4), Step("Post Checkout code", 0.1), Step("Complete job", 0.1)]
    runs = [bundle(run_id=1000 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{1000 + i:040x}",
                   start=START, jobs=[job("t", listed, ["linux-mi300-gpu-1"])]) for i in range(3)]
    t = analyze({path: text}, runs, RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [
        ("Run tests", "test"), ("Upload logs", "other"), ("Clean up Rocm processes", "other"),
        ("Clean the workspace", "other")]
    assert (t.setup_seconds, t.test_seconds, t.other_seconds) == (1.5 * 60, 40 * 60, 9 * 60)
    ours = parse_config("step_rules: [{pattern: '^Clean the workspace$', category: setup}]\n")
    assert [s.name for s in analyze({path: text}, runs, ours).latest.jobs[0].work_steps] == [
        "Run tests", "Upload logs", "Clean up Rocm processes"]
    assert ours.step_category(workflow.jobs["t"].steps[5]) == "setup"


@pytest.mark.parametrize("command", ["--w=amd_ci_exec.sh " * 20 + "make", "env X=amd_ci_exec.sh " * 20 + "make",
                                     "X=amd_ci_exec.sh " * 2000 + "ls"])
def test_a_word_that_ends_in_sglangs_wrapper_is_read_once(command: str) -> None:
    """review150 c01: `amd_ci_exec.sh` as the end of an option's word (`--w=amd_ci_exec.sh`) or of a variable's value
    could be read as the wrapper or as that word, each of them: 18 of them (356 characters) took 5 s, 20 of them 20 s, and 2,000
    `X=amd_ci_exec.sh` 10 s. The wrapper's word starts with no `-` and holds no `=`; SGLang's own still runs tests."""
    for name in ("Look", None):
        step = parse_workflow("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - "
                              + (f"name: {name}\n        " if name else "") + f"run: {command}\n", "a.yml").jobs["a"].steps[0]
        with _within_10_s(f"{command[:20]!r}..."):
            assert RepoConfig().step_category(step) == "other"
    sglang = parse_workflow("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - name: Suite\n        run: "
                            "bash scripts/ci/amd/amd_ci_exec.sh -w /sglang-checkout/test python3 run_suite.py\n",
                            "a.yml").jobs["a"].steps[0]
    assert RepoConfig().step_category(sglang) == "test"


def test_names_and_expressions_that_once_took_seconds() -> None:
    """review150 c02: an unnamed action's name with many `/` (`Run a/a/.../b`, 61 characters) took 7.7 s to tell from
    an action's; c03: `${{` with no `}}` after it, 21,000 times in a script, 9 s to analyse; c04: a job `name:` of six
    expressions tried every split of another job's 80-character name, 4 s."""
    with _within_10_s("Run a/a/.../b"):
        assert RepoConfig().classify("Run " + "a/" * 40 + "b") == "other"
    assert RepoConfig().classify("Run owner/repo/path/to/action@v1") == "setup"
    path = ".github/workflows/rocm.yml"
    unclosed = "${{" * 21000
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            f"      - run: echo '{unclosed}'\n      - name: Run tests\n        run: pytest\n")
    runs = _shell_steps_history(text, [Step("Run echo '" + unclosed[:100], 1), Step("Run tests", 10)], 1010)
    with _within_10_s("an unclosed ${{ 21,000 times"):
        analyze({path: text}, runs, RepoConfig())
    template = "".join(f"${{{{ matrix.a{i} }}}}" for i in range(6)) + "!"
    text = ("name: t\non: push\njobs:\n  payload:\n"
            f"    name: '{template}'\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n"
            "        a0: [x]\n    steps:\n      - name: Run tests\n        run: pytest tests\n"
            f"  other:\n    name: {'x' * 80}\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - name: Run tests\n        run: pytest tests\n")
    runs = [bundle(run_id=1020 + i, repo="o/r", workflow_path=path, workflow_name="t", head_sha=f"{1020 + i:040x}",
                   start=START, jobs=[job("x" * 80, [Step("Set up job", 5), Step("Run tests", 10)], ["linux-mi300-gpu-1"]),
                                      job("x" * 6 + "!", [Step("Set up job", 5), Step("Run tests", 10)],
                                          ["linux-mi300-gpu-1"])]) for i in range(3)]
    with _within_10_s("a name of six expressions"):
        analysis = analyze({path: text}, runs, RepoConfig())
    assert sorted((j.name, j.ref.job_id) for j in analysis.latest.jobs) == [("x" * 6 + "!", "payload"), ("x" * 80, "other")]


def test_a_long_job_name_is_read_from_its_end_once() -> None:
    """review150 c05: the matrix values a caller's job name ends with were cut by a pattern that read the rest of
    the name from each blank and each group: 32 KB took 4 s. TheRock's names read as before."""
    from bot.timing import called_job
    assert called_job("Linux::release / Test gfx94X-dcgpu / Test rocblas / Test rocblas (shard 1/3) (gfx94X-dcgpu)") \
        == "Test gfx94X-dcgpu / Test rocblas"
    for name in ("a / " + " " * 64000 + "x", "a / " + "(a)" * 20000 + "x", "a / b" + " (a)" * 16000):
        with _within_10_s(f"{name[:12]!r}..."):
            called_job(name)


@pytest.mark.parametrize("name, category", [
    # review152 d01: the seventh and eighth surveys' setup and other verbs pass a name that goes on to test
    ("Activate venv and Run Test", "test"), ("Activate conda env & run pytest", "test"),
    ("Extract and run tests", "test"), ("Extract wheel and run tests", "test"), ("Extract and run smoke", "test"),
    ("Activate uv env", "setup"), ("Extract the bundle manifest", "setup"), ("Compress unit tests logs", "other"),
    # d05: a sanity check of what is installed is setup; one of no such thing is left to the rest of the rules
    ("Wheel sanity check", "setup"), ("Driver / GPU sanity check", "setup"), ("Run Sanity Checks", "other"),
])
def test_a_name_that_goes_on_to_test_is_no_setup(name: str, category: str) -> None:
    assert RepoConfig().classify(name) == category


def test_a_named_action_step_no_rule_takes_goes_by_its_uses() -> None:
    """ROCm/rocprofiler-systems' `CTest Artifacts` and `Data Artifacts` (`actions/upload-artifact@v4`, `if:
    failure()`, after the tests; 05387ac7) were setup, the default of an action step whose name no rule takes. Such a
    step goes by the name GitHub would give it unnamed, `Run <uses>`: other, as `Run actions/upload-artifact@v4` is.
    One whose `Run <uses>` no rule takes either stays setup; a rule that takes its name wins; two steps of one name
    with other `uses:` go each by its own, in GitHub's list as in the file (review152 d02: the list read both as
    setup, and a fold moved the upload it counted as saved); an action named for tests is no test by its owner's
    name (`benchmark-action/github-action-benchmark`, d03)."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - {name: Get the sources, uses: actions/checkout@v4}\n"
            "      - {name: Toolchain, uses: owner/rocm-toolchain@v2}\n"
            "      - {name: Run tests, run: pytest tests}\n"
            "      - {name: CTest Artifacts, uses: actions/upload-artifact@v4, if: failure()}\n"
            "      - {name: Results, uses: actions/upload-artifact@v4}\n"
            "      - {name: Results, uses: owner/results-action@v1}\n")
    path = ".github/workflows/rocm.yml"
    steps = parse_workflow(text, path).jobs["t"].steps
    assert [RepoConfig().step_category(s) for s in steps] == ["setup", "setup", "test", "other", "other", "setup"]
    t = analyze({path: text}, _shell_steps_history(text, [
        Step("Get the sources", 1), Step("Toolchain", 2), Step("Run tests", 40), Step("CTest Artifacts", 3),
        Step("Results", 4), Step("Results", 5)], 950), RepoConfig()).latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [
        ("Run tests", "test"), ("CTest Artifacts", "other"), ("Results", "other")]
    assert (t.setup_seconds, t.test_seconds, t.other_seconds) == (492, 40 * 60, 7 * 60)
    ours = parse_config("step_rules: [{pattern: '^CTest Artifacts$', category: setup}]\n")
    assert ours.step_category(steps[3]) == "setup"
    tracked = parse_workflow("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - {name: Run tests, run: pytest}\n"
                             "      - {name: Track over time, uses: benchmark-action/github-action-benchmark@v1}\n", path)
    assert RepoConfig().step_category(tracked.jobs["t"].steps[1]) == "setup"


def _shell_steps_history(text: str, steps: list[Step], base: int) -> list[dict]:
    path = ".github/workflows/rocm.yml"
    return [bundle(run_id=base + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{base + i:040x}",
                   start=START, jobs=[job("t", [Step("Set up job", 0.2), *steps], ["linux-mi300-gpu-1"])])
            for i in range(3)]


def test_unnamed_steps_shown_alike_are_read_in_the_jobs_order() -> None:
    """review144 w03: two unnamed steps GitHub shows alike (`Run set -ex`), one installing, one running pytest: the
    file said setup and test, the API's list other for both (its names cannot tell them apart), so the job "ran no
    test step". GitHub lists a job's steps in the file's order, so they are read so; where the list has another
    count of them (a file changed since), neither is told, as before."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          set -ex\n          pip install -r requirements.txt\n"
            "      - run: |\n          set -ex\n          python -m pytest -n 8 tests\n")
    path = ".github/workflows/rocm.yml"
    workflow = parse_workflow(text, path)
    assert [RepoConfig().step_category(s) for s in workflow.jobs["t"].steps] == ["setup", "test"]
    analysis = analyze({path: text}, _shell_steps_history(text, [Step("Run set -ex", 5), Step("Run set -ex", 40)], 870),
                       RepoConfig())
    t = analysis.latest.jobs[0]
    assert [(s.name, s.category, s.seconds) for s in t.work_steps] == [("Run set -ex", "test", 2400.0)]
    assert (t.setup_seconds, t.test_seconds) == (5.2 * 60, 40 * 60)
    assert analysis.unmeasured == ()
    three = analyze({path: text}, _shell_steps_history(text, [Step("Run set -ex", 5)] * 2 + [Step("Run set -ex", 40)],
                                                       880), RepoConfig())
    assert [s.category for s in three.latest.jobs[0].work_steps] == ["other"] * 3
    # review145 x02: alike first lines with an expression, shown with its value
    text = text.replace("set -ex", "cd ${{ github.workspace }}")
    analysis = analyze({path: text}, _shell_steps_history(text, [Step("Run cd /home/runner/_work/r/r", 5),
                                                                 Step("Run cd /home/runner/_work/r/r", 40)], 885),
                       RepoConfig())
    assert [(s.category, s.seconds) for s in analysis.latest.jobs[0].work_steps] == [("test", 2400.0)]


def test_an_unnamed_step_with_an_expression_in_its_first_line_is_read_by_what_github_shows() -> None:
    """review144 w04: GitHub shows `Run export HIP_VISIBLE_DEVICES=${{ matrix.gpu }}` with the value filled in; the
    step's commands were looked up by the name as written, so its 40 minutes of pytest were other ("no step is
    classified as a test") while the file said test."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n"
            "    strategy:\n      matrix:\n        gpu: [0]\n    steps:\n"
            "      - run: |\n          export HIP_VISIBLE_DEVICES=${{ matrix.gpu }}\n          python -m pytest -n 8 tests\n")
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=890 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{890 + i:040x}",
                   start=START, jobs=[job("t (0)", [Step("Set up job", 0.2), Step("Run export HIP_VISIBLE_DEVICES=0", 40)],
                                          ["linux-mi300-gpu-1"])]) for i in range(3)]
    analysis = analyze({path: text}, runs, RepoConfig())
    assert [(s.name, s.category) for s in analysis.latest.jobs[0].work_steps] == [
        ("Run export HIP_VISIBLE_DEVICES=0", "test")]
    assert analysis.unmeasured == ()
    # review145 x03: of two such lines, one whose text holds the other's, a name both fit is the one with more text
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          cd ${{ github.workspace }}/third_party\n          pip install -r requirements.txt\n"
            "      - run: |\n          cd ${{ github.workspace }}\n          python -m pytest -n 8 tests\n")
    analysis = analyze({path: text}, _shell_steps_history(text, [Step("Run cd /w/r/third_party", 20),
                                                                 Step("Run cd /w/r", 40)], 895), RepoConfig())
    t = analysis.latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [("Run cd /w/r", "test")]
    assert t.setup_seconds == 20.2 * 60


def test_a_first_line_with_an_unclosed_expression_is_read_as_text() -> None:
    """`${{` with no `}}` in a first line is no expression: the step is looked up by its name as it is (the text
    around its expressions was one piece, and reading a shown name against it raised ValueError: no analysis)."""
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          export A=${{ matrix.x\n          python -m pytest tests\n"
            "      - run: |\n          cd ${{ github.workspace }}\n          pip install -r requirements.txt\n")
    analysis = analyze({".github/workflows/rocm.yml": text}, _shell_steps_history(
        text, [Step("Run export A=${{ matrix.x", 40), Step("Run export A=1", 3), Step("Run cd /w", 5)], 897), RepoConfig())
    t = analysis.latest.jobs[0]
    assert [(s.name, s.category) for s in t.work_steps] == [("Run export A=${{ matrix.x", "test"),
                                                            ("Run export A=1", "other")]
    assert t.setup_seconds == 5.2 * 60


def test_a_name_is_filled_in_by_the_text_around_its_expressions_in_linear_time() -> None:
    """`fills` reads a shown name against the text around a written name's expressions left to right: what each gap
    holds is free, the order and the ends are not; a 100 KB name of near-misses takes one pass."""
    from bot.workflow import fills
    parts = ("Run export A=", " B=", " && cd ", "")
    assert fills(parts, "Run export A=1 B=2 && cd x")
    assert fills(parts, "Run export A= B= && cd ")  # (an expression may be empty)
    assert not fills(parts, "Run export A=1 && cd x B=2")
    assert not fills(("Run x=", " y"), "Run x= y"[:-1])
    with _within_10_s("a name"):
        assert not fills(("Run ", " B=", " B=", " B=", " C"), "Run " + " B=" * 30000 + " D")


def test_an_install_after_the_tests_behind_shell_set_up_is_none_before_them() -> None:
    """review133 s03: `cd tests && python -m pytest` is the tests' line as much as `pytest` alone: the codecov install
    after it was said to be one "before its tests"; an install before `. venv/bin/activate && pytest` still is."""
    path = ".github/workflows/rocm.yml"

    def said(script: str, named: str = "") -> list[str]:
        body = "".join(f"          {line}\n" for line in script.splitlines())
        text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
                + (f"      - name: {named}\n        run: |\n{body}" if named else f"      - run: |\n{body}"))
        name = named or "Run " + script.splitlines()[0]
        runs = [bundle(run_id=840 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{840 + i:040x}",
                       start=START, jobs=[job("t", [Step("Set up job", 0.2), Step(name, 30)], ["linux-mi300-gpu-1"])])
                for i in range(3)]
        analysis = analyze({path: text}, runs, RepoConfig())
        assert [s.category for s in analysis.latest.jobs[0].work_steps] == ["test"]
        return [u.reason.split(" installs before its tests ")[1].split(":")[0] for u in analysis.unmeasured]
    assert said('echo "Testing on MI300"\ncd tests && python -m pytest -x\npip install codecov && codecov -f c.xml') == []
    assert said("set -e; pytest\npip install codecov") == []
    # review144 w08: tests run under a condition are the tests' line too
    assert said("set -ex\nif [ -d tests/rocm ]; then python -m pytest -n 8 tests/rocm; fi\npip install codecov") == []
    assert said("pip install -e .\nif [ -d tests ] && [ -n \"$GPU\" ]; then pytest tests; fi", named="Run tests") == \
        ["(`pip install -e .`)"]
    assert said('echo "Testing"\npip install -e .\n. venv/bin/activate && pytest') == ["(`pip install -e .`)"]
    # review145 x06: tests in a loop, as a condition, or after a `fi`, are the tests' line; an install under a
    # condition is an install
    for script in ("for t in tests/*.py; do python -m pytest $t; done", "if ! python -m pytest tests; then exit 1; fi",
                   'if [ -n "$A" ]; then export X=1; fi; pytest tests', "while pytest -x tests; do :; done"):
        assert said(f"{script}\npip install codecov && codecov", named="Run tests") == [], script
    assert said("if ! pip show torch; then pip install torch; fi\npytest tests", named="Run tests") == [
        "(`if ! pip show torch; then pip install torch; fi`)"]
    # review146 y06: ... but not one after tests on its line, nor one in quotes
    assert said("(cd tests && python -m pytest -x) && pip install codecov && codecov", named="Run tests") == []
    assert said("mkdir -p r && pytest --junitxml=r/u.xml tests; pip install codecov; codecov", named="Run tests") == []
    assert said('echo "flash-attn missing; pip install flash-attn to enable it"\npytest tests', named="Run tests") == []
    # review148 a06: an option in quotes is no make's dry run
    assert said("make test PYTEST_ARGS='-x -n 8'\npip install codecov && codecov", named="Run tests") == []
    # review134 t03: a tests script is the tests' line wherever its path says test, though only one named so is what
    # makes an unnamed step a test step
    for script in ("bash tests/run_model_tests.sh", "bash tests/ci/run.sh", "./runTests.sh", "./build_and_test.sh"):
        assert said(f"{script}\npip install codecov && codecov", named="Run tests") == [], script
    # review134 t01, review135 u01, u02: what could be read several ways is read one way (a line of blanks; wrappers
    # whose option could take the next wrapper for its argument, 2^n ways; a long token with `test` in it): each of
    # these took seconds to minutes
    with _within_10_s("a script"):
        assert said("pip install -e .\n" + " " * 20000 + "x\npytest", named="Run tests") == ["(`pip install -e .`)"]
        assert said("pip install -e .\n" + "sudo -E " * 40 + "lint\npytest", named="Run tests") == ["(`pip install -e .`)"]
        # review145 x01: blanks after a `then` (16,000 took 84 s)
        assert said("pip install -e .\nthen" + " " * 20000 + "x\npytest", named="Run tests") == ["(`pip install -e .`)"]
        assert said("pip install -e .\nbash a.sh-" + "test" * 25000 + " x\npytest", named="Run tests") == \
            ["(`pip install -e .`)"]
        # commands that open a line without a blank between them: each one tried read the rest of the line (`if;`
        # 12,000 times took 8.8 s, `X=1;` 25,000 times 22 s, `then export X=1;` 500 times ran on past minutes)
        for line in ("if;" * 25000, "fi;" * 25000, "X=1;" * 25000, "then export X=1;" * 6000, "if ! ;" * 20000,
                     "torchrun -x python -m torch.distributed.run -x " * 200 + "lint",
                     "sudo -u lit " * 8000 + "--co", "mpirun -x pytest " * 6000 + "--co",  # (review147 z01: 4.6 s)
                     "sudo -ux " * 25 + "echo done",  # (review148 a01: 2^n, 37 s)
                     # review149 b01: each wrapper, as another's option's argument (`amd_ci_exec.sh -x` 19 times: 14 s)
                     *(f"{wrapper} -x " * 22 + "lint" for wrapper in (
                         "env", "time", "timeout 5", "sudo", "sudo -u", "mpirun", "srun", "torchrun", "xargs", "docker run",
                         "docker exec", "coverage run", "uv run", "python -m torch.distributed.run", "amd_ci_exec.sh",
                         "bash amd_ci_exec.sh", "mpirun -x bash amd_ci_exec.sh"))):
            assert said(f"pip install -e .\n{line}\npytest", named="Run tests") == ["(`pip install -e .`)"], line[:9]
        for command, read in (("sudo -E " * 40 + "lint", ("install", "")), ("timeout -k " * 40 + "lint", ("install", "")),
                              ("bash run_" + "test" * 25000 + ".shy/a.sh", ("install", "")),
                              ("bash run_" + "test" * 25000 + ".x.sh", ("install", "")),  # (review136 v02)
                              ('echo "' + '\\"' * 50000, ("", "")),  # (review136 v01: an unclosed quote, a print)
                              ('pytest "' + '\\"\\' * 20000 + "\\", ("install", "test"))):  # (review146 y05: 55 s)
            step = parse_workflow(f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n"
                                  f"          pip install x\n          {command}\n", ".github/workflows/a.yml").jobs["a"].steps[0]
            assert (step.unspoken, step.said) == read, command[:20]
    # review135 u04: a script that fetches or pulls what the tests need is no test line: the install after it is said
    for script in ("bash download_test_data.sh", "bash get_latest.sh", "bash pull_test_image.sh"):
        assert said(f"{script}\npip install -r requirements-test.txt\npytest", named="Run tests") == [
            "(`pip install -r requirements-test.txt`)"], script


def test_two_unnamed_steps_shown_alike_are_told_apart_by_their_order() -> None:
    """review133 s04: two steps GitHub shows as `Run echo "====="`, one installing, one running pytest: the API's
    step names cannot say which is which (both took the last one's, test; then neither went by its commands, both
    other); review144 w03: GitHub lists them in the file's order, so each goes by its own commands."""
    path = ".github/workflows/rocm.yml"
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: |\n          echo \"=====\"\n          pip install -r requirements.txt\n"
            "      - run: |\n          echo \"=====\"\n          python -m pytest tests\n")
    steps = parse_workflow(text, path).jobs["t"].steps
    assert [RepoConfig().step_category(s) for s in steps] == ["setup", "test"]  # (the file alone tells them apart)
    runs = [bundle(run_id=860 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{860 + i:040x}",
                   start=START, jobs=[job("t", [Step("Set up job", 0.2), Step('Run echo "====="', 25),
                                                Step('Run echo "====="', 10)], ["linux-mi300-gpu-1"])])
            for i in range(3)]
    analysis = analyze({path: text}, runs, RepoConfig())
    assert [(s.name, s.category, s.seconds) for s in analysis.latest.jobs[0].work_steps] == [
        ('Run echo "====="', "test", 600.0)]
    assert analysis.latest.jobs[0].setup_seconds == 25.2 * 60
    # review134 t04: a step whose first line speaks for it (an install alone), shown as one whose does not (both took
    # the second's, test; then neither went by its commands): each by its own, in order
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            "      - run: pip install -r requirements.txt\n"
            "      - run: |\n          pip install -r requirements.txt\n          python -m pytest tests\n")
    runs = [bundle(run_id=880 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{880 + i:040x}",
                   start=START, jobs=[job("t", [Step("Set up job", 0.2), Step("Run pip install -r requirements.txt", 15),
                                                Step("Run pip install -r requirements.txt", 30)], ["linux-mi300-gpu-1"])])
            for i in range(3)]
    assert [(s.category, s.seconds) for s in analyze({path: text}, runs, RepoConfig()).latest.jobs[0].work_steps] == [
        ("test", 1800.0)]


def _all_skipped(text: str) -> list[tuple[str, str, str]]:
    path = ".github/workflows/rocm.yml"
    runs = [bundle(run_id=900 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{900 + i:040x}",
                   start=START, jobs=[skipped_job("test")]) for i in range(3)]
    return [(u.subject, u.reason, u.fix) for u in analyze({path: text}, runs, RepoConfig()).unmeasured]


GATED = "name: ROCm\non: pull_request\njobs:\n  test:\n    if: github.repository_owner == 'pytorch'\n{rest}"
WAIT = ("wait for a run whose jobs run (their `if:` decides it: one that never holds in this repository, as a fork's "
        "check of `github.repository_owner`, skips them every time); then their labels tell which are AMD runners")


def test_a_lane_no_job_of_which_got_a_runner_says_what_its_file_tells_of_them() -> None:
    """review102 f02: the line said the file's `runs-on` "names no AMD runner" of an expression (which the next
    line said foldbot could not resolve), of a caller passing an AMD runner, and dropped the pattern fix for
    labels written out that the pattern does not match."""
    said = "no job of the 3 runs ran on a runner (3 jobs: 3 skipped), so no runner label was seen"
    assert _all_skipped(GATED.format(rest="    runs-on: ${{ vars.ROCM_RUNNER }}\n    steps: [{run: pytest}]\n"))[0] == (
        "AMD jobs", f"{said}; the runners of `test` are not known before a run (an expression, or a reusable "
                    "workflow's runners)", WAIT)
    assert _all_skipped(GATED.format(rest="    runs-on: [self-hosted, gpu-box-7]\n    steps: [{run: pytest}]\n")) == [(
        "AMD jobs", f"{said}; the file names the runners `gpu-box-7`, which `amd_runner_pattern` does not match",
        f"{WAIT}; if those the file names are AMD GPU runners, set `amd_runner_pattern: '^(?:gpu\\-box\\-7)$'` in "
        ".github/foldbot.yml")]
    # review104 f09: a runner group is known by `group:<name>` once a job runs there: the pattern offered matches that
    grouped = _all_skipped(GATED.format(rest="    runs-on: {group: gpu-pool}\n    steps: [{run: pytest}]\n"))
    assert grouped[0][2].endswith("set `amd_runner_pattern: '^(?:group:gpu\\-pool)$'` in .github/foldbot.yml")
    # a caller that passes its runner by name is an AMD job by it: the runs are gated ones
    assert _all_skipped(GATED.format(rest="    uses: ./.github/workflows/_rocm-test.yml\n    with:\n"
                                          "      runner: linux.rocm.gpu.mi300.2\n")) == [(
        "AMD test time", "no AMD job of the 3 runs ran a test step (3 jobs: 3 skipped)",
        "wait for a run whose AMD jobs run their tests (`.github/workflows/rocm.yml` has no `workflow_dispatch` "
        "trigger, so `/dispatch` cannot start one)")]


# Modelled on iree-org/wave's ci-gpu.yaml: one matrix combination skips its test step by its `if:`.
WATER = """name: GPU CI
on: pull_request
jobs:
  test_linux_water:
    name: "${{ matrix.runner }} :: SHARED_LIBS ${{ matrix.shared_libs }} :: Run water tests"
    strategy:
      fail-fast: false
      matrix:
        runner: [linux-mi325-1gpu-ossci-iree-org]
        shared_libs: ["ON", "OFF"]
    runs-on: ${{ matrix.runner }}
    steps:
      - name: Build water
        run: cmake --build build
      - name: Test water
        if: matrix.shared_libs == 'OFF'
        run: ctest --test-dir build
"""


def test_a_matrix_combination_whose_if_skips_its_test_step_is_no_gap_in_the_rules() -> None:
    """review103 f03: wave's `SHARED_LIBS ON` job skips `Test water`, which its `OFF` twin runs in every run: the job
    was "no step is classified as a test", with a rule for `Test water` (a test already) as the fix."""
    path = ".github/workflows/ci-gpu.yaml"
    name = "linux-mi325-1gpu-ossci-iree-org :: SHARED_LIBS {} :: Run water tests"
    runs = [bundle(run_id=600 + i, repo="iree-org/wave", workflow_path=path, workflow_name="GPU CI",
                   head_sha=f"{600 + i:040x}", start=START, jobs=[
                       job(name.format("ON"), [Step("Set up job", 0.1), Step("Build water", 12),
                                               Step("Test water", 0, "skipped")], ["linux-mi325-1gpu-ossci-iree-org"]),
                       job(name.format("OFF"), [Step("Set up job", 0.1), Step("Build water", 12),
                                                Step("Test water", 2)], ["linux-mi325-1gpu-ossci-iree-org"])])
            for i in range(3)]
    analysis = analyze({path: WATER}, runs, RepoConfig())
    assert analysis.unmeasured == ()
    assert analysis.stats["test_linux_water"].samples == 3
    # never run in any combination: the rules may lack the step that did (a skipped `Test water` says nothing of it)
    never = [bundle(run_id=650 + i, repo="iree-org/wave", workflow_path=path, workflow_name="GPU CI",
                    head_sha=f"{650 + i:040x}", start=START, jobs=[
                        job(name.format("ON"), [Step("Set up job", 0.1), Step("Build water", 12),
                                                Step("Test water", 0, "skipped"), Step("Check water", 5)],
                            ["linux-mi325-1gpu-ossci-iree-org"])]) for i in range(3)]
    (line,) = analyze({path: WATER}, never, RepoConfig()).unmeasured
    assert line.reason == ("ran in 3 runs but no step is classified as a test; its longest other steps: `Check water` "
                           "(5 min)")


def test_jobs_one_name_fits_cancelled_before_a_runner_took_them_are_no_line() -> None:
    """review103 f02: nod-ai/shark-ai's queued job, cancelled by its concurrency group, fit two jobs "equally": it
    has no time to count."""
    path = ".github/workflows/lane.yml"
    runs = [bundle(run_id=950 + i, repo="o/r", workflow_path=path, workflow_name="Lane", head_sha=f"{950 + i:040x}",
                   start=START, jobs=[job("before-test", [], ["linux-mi300-gpu-2"], "cancelled"),
                                      job("gpu", [Step("Pull image", 20), Step("Run tests", 30)], ["linux-mi300-gpu-1"])])
            for i in range(3)]
    analysis = analyze({path: TWINS.format(runner="linux-mi300-gpu-2")}, runs, RepoConfig())
    assert [u for u in analysis.unmeasured if "equally" in u.reason] == []


def test_a_script_of_installs_alone_is_setup_by_its_first_line() -> None:
    """review104 f01: an unnamed step of several installs (`pip install -r ...` then `pip install -e .`, or one
    install over continued lines) had become other (its first line no longer spoke for the script): its setup
    was lost. A first line speaks for the commands of its kind after it, and for `set`/`cd`/`export` between."""
    text = """on: push
jobs:
  a:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: |
          pip install -r requirements.txt
          cd python
          pip install -e .
      - run: |
          pip install \\
            torch numpy
      - run: |
          echo "Running unit tests"
          pytest tests/unit
      - run: |
          pip install -e .
          set -e
          pytest
      - run: |
          python -m pip install --upgrade pip
          pip install flake8 pytest
          if [ -f requirements.txt ]; then pip install -r requirements.txt; fi
          pip list
      - run: |
          sudo -E pip install -e . \\
            && cd tests && pytest
      - run: |
          echo "Unit tests"
          cd tests && pytest
"""
    steps = parse_workflow(text, ".github/workflows/a.yml").jobs["a"].steps
    # review106 f01, f04: a command after `cd ... &&` or on a continued line is one; `pytest` installed is no test run
    assert [(s.name, s.unspoken, RepoConfig().step_category(s)) for s in steps] == [
        ("Run pip install -r requirements.txt", "", "setup"), ("Run pip install \\", "", "setup"),
        ('Run echo "Running unit tests"', "print", "test"), ("Run pip install -e .", "install", "test"),
        ("Run python -m pip install --upgrade pip", "", "setup"), ("Run sudo -E pip install -e . \\", "install", "test"),
        ('Run echo "Unit tests"', "print", "test")]


@pytest.mark.parametrize("script, unspoken, category", [
    # an install speaks for installs and the look at them (review106 f04, review107 f02, review108 f01, f03)
    ("python3.10 -m pip install x\npip list\npython -c 'import torch'\necho $HOME/bin >> $GITHUB_PATH", "", "setup"),
    ("pip install \\\n  pytest \\\n  pytest-cov\n", "", "setup"),
    ("pip install -r req.txt\nif [ -f extra.txt ]; then pip install -r extra.txt; fi\n", "", "setup"),
    ("sudo -E pip install x | tee pip.log\n", "", "setup"),
    ("pip install torch\npython -c \"import torch; print(torch.version.hip)\"\npip list | grep torch\n", "", "setup"),
    ("pip install -r req.txt\npython -m venv .venv\ngit submodule update --init\nldconfig\ncmake --version\n", "",
     "setup"),
    # not for any other command (review107 f01): SGLang's suite runner, a build's tests, a benchmark; the tests they
    # run make it a test step (review107 f03; `make -C build test` too, review134 t06), what is not known to be one
    # leaves it other
    ("pip install -e .\ncd test/srt && python3 run_suite.py --suite per-commit\n", "install", "test"),
    ("pip install -e .\nmake -C build test\n", "install", "test"),
    ("pip install -e . \\\n  && pytest tests\n", "install", "test"),
    # nor `--no-deps` or `venv` in its first line then (review107 f04)
    ("pip install --no-build-isolation --no-deps -e .\npython -m pytest\n", "install", "test"),
    # a banner speaks for prints and shell set-up alone; its words are read (review108 f02)
    ("echo 'Running unit tests'\nset -e\nexport X=1 && cd tests && pytest\n", "print", "test"),
    ("echo one\nprintf 'two'\n", "", "other"),
    ("echo 'Installing deps'\npip install -r requirements.txt\n", "print", "setup"),
    # what the commands after a banner do decides where no rule takes its words (review107 f03: the test rule's words
    # need a space before them, so a banner's quoted `"Testing` was read as no word, and `printf` has none)
    ('echo "Testing on MI300"\npython -m pytest tests\n', "print", "test"),
    ("printf '%s\\n' \"$GPU\"\npython -m pytest tests\n", "print", "test"),
    ('echo "Installing dependencies"\npip install -r requirements.txt\n', "print", "setup"),
    ('echo "::group::Install"\npip install -e .\necho "::endgroup::"\n', "print", "setup"),
    ('echo "GPU: $GPU"\n./build/bin/bench_gemm\n', "print", "other"),
    # ... setup only where they install (review133 s01: a banner, then a look at the logs and a tarball of them, is
    # what runs after the tests)
    ('echo "Collecting logs"\ncp -r /tmp/logs out/\ntar czf logs.tgz out\n', "print", "other"),
    # a tests script is one named so, and not one that fetches or builds for them (review133 s02)
    ("pip install -e .\nbash ci/download_test_data.sh\n", "install", "other"),
    ("echo hi\nbash scripts/get_latest_rocm_wheels.sh\n", "print", "other"),
    ("pip install -e .\nbash .ci/pytorch/test.sh\n", "install", "test"),
    # after the wrappers that run them, and make's and bazel's test targets (review133 s05)
    ("pip install -e .\ntimeout 3600 python -m pytest tests\n", "install", "test"),
    ("pip install -e .\nsudo -E coverage run -m pytest tests\n", "install", "test"),
    ("pip install -e .\nmake -j8 test-unit\n", "install", "test"),
    ("pip install -e .\nmake test-deps\n", "install", "other"),
    ("pip install -e .\nbazel test //tests:gpu_tests\n", "install", "test"),
    # review134: what runs around the tests is no tests script (t02); tests run by `env`, or after a pipe, are tests
    # (t07: they were a look at the install, so setup); make's options, timeout's and the launchers (t06)
    ('echo "::group::Upload"\nbash .github/scripts/upload_test_results.sh\n', "print", "other"),
    ('echo "Starting container"\nbash docker/run_test_container.sh\n', "print", "other"),
    ("pip install -e .\nenv HIP_VISIBLE_DEVICES=0 python -m pytest tests/unit\n", "install", "test"),
    ("pip install -r requirements.txt\nls op_tests/test_*.py | xargs -n1 python3 -m pytest\n", "install", "test"),
    ("pip install -e .\nmake -j 8 test\n", "install", "test"),
    ("pip install -e .\nmake test-install\n", "install", "other"),
    ("pip install -e .\ntimeout -s KILL 3600 pytest\n", "install", "test"),
    ("pip install -e .\ntorchrun --nproc_per_node 8 -m pytest tests\n", "install", "test"),
    ("pip install -e .\ndocker exec -w /src ci python -m pytest\n", "install", "test"),
    # review135 u03, u05: make's `-C` and `-f` take their argument (`make -C tests install` builds, no test runs); a
    # script that builds the tests is none; a test file run by Python, `lit`, are tests
    ("pip install -e .\nmake -C tests install\n", "install", "other"),
    ("pip install -e .\nmake -f test.mk install\n", "install", "other"),
    ("pip install -e .\nbash scripts/build_tests.sh\n", "install", "other"),
    ("pip install -e .\npython3 op_tests/test_gemm_a8w8.py\n", "install", "test"),
    ("pip install lit\nlit -v test\n", "install", "test"),
    # review136 v03: SGLang's AMD runner wrapper (its lane files run every suite so); lint by tox, a version, are none
    ('echo "Unit tests"\nbash scripts/ci/amd/amd_ci_exec.sh -w "/sglang-checkout/test" python3 run_suite.py --suite x\n',
     "print", "test"),
    ("pip install tox\ntox -e lint\n", "install", "other"),
    ("pip install -e .\npython3 -u -m pytest tests\n", "install", "test"),
    # an echo that writes is no banner (review108 f02)
    ("echo ROCM_PATH=/opt/rocm >> $GITHUB_ENV\nrocm-smi\n", "", "setup"),
    ("echo \"X=1\" | tee -a $GITHUB_ENV\nexport Y=2\n", "", "setup"),
    ("pip install uv\nuv venv\nuv pip install -e .\n", "", "setup"),
    # shell set-up speaks for more of it and prints alone: after it, the commands decide where no rule takes the name
    # (`Run set -ex`, `Run export HIP_VISIBLE_DEVICES=0`, `Run cd build` were other, their tests or installs unseen)
    ("set -ex\npython -m pytest -x tests/unit\n", "shell", "test"),
    ("export HIP_VISIBLE_DEVICES=0\nexport PYTORCH_TEST_WITH_ROCM=1\npytest test/test_ops.py\n", "shell", "test"),
    ("cd build\nctest --output-on-failure -j 8\n", "shell", "test"),
    ("source /opt/venv/bin/activate\nbash tests/run_tests.sh\n", "shell", "test"),
    ("set -ex\npip install -e .\npip list\n", "shell", "setup"),
    ("set -euo pipefail\n./build/bin/bench_gemm --all\n", "shell", "other"),
    ("set -e\nexport X=1\necho done\n", "", "other"),
    ("cd tests\n./run_custom --all\n", "shell", "test"),  # (the test rule takes `Run cd tests`, as before)
    # review144 w01, w02: shell set-up's venv, deps and GITHUB_ENV words are passed by only for tests: before a build or
    # after a condition that writes the environment, they still say setup (other when passed by)
    ("source venv/bin/activate\nuv sync --extra rocm\n", "shell", "setup"),
    (". /opt/venv/bin/activate\ncmake -B build\ncmake --build build\n", "shell", "setup"),
    ("cd deps\n./build_deps.sh\n", "shell", "setup"),
    ('if [ "$GPU" = "mi300" ]; then echo "GPU_ARCH=gfx942" >> $GITHUB_ENV; fi\n', "shell", "setup"),
    ("source venv/bin/activate\npython -m pytest tests\n", "shell", "test"),
    # review144 w05: an uninstall after a shell line is a clean-up, no setup
    ("set +e\npip uninstall -y aiter\nrm -rf ~/.cache/aiter\n", "shell", "other"),
    ("set -e\npip uninstall -y torch\npip install torch --index-url https://x/rocm6.4\n", "shell", "setup"),
    # review144 w06: `make tests` builds them in most projects; `make test` runs them
    ("cd build\nmake -j$(nproc) tests\n", "shell", "other"),
    ("cd build\nmake -j8 test\n", "shell", "test"),
    # review132 r06's gaps, 2026-12-07: ninja's and cmake's test targets (LLVM's `check-mlir`, triton's), not a linter's
    # (`make check-format`); a test file a launcher runs (`torchrun`, `python -m torch.distributed.run`, or itself);
    # tests in `docker run`'s image
    ("cd build\nninja -C build -k 0 check-mlir\n", "shell", "test"),
    ("cd build\nninja check-format\n", "shell", "other"),
    ("cd build\nmake check-format\n", "shell", "other"),
    ("set -ex\ncmake --build build -j 8 --target check-triton\n", "shell", "test"),
    ("set -ex\ncmake --build build --config Release --target=test\n", "shell", "test"),
    ("set -ex\ncmake --build build --target install\n", "shell", "other"),
    ("set -ex\ncmake --build build -t check-lint\n", "shell", "other"),
    ("pip install -e .\ntorchrun --nproc_per_node 8 tests/test_distributed.py\n", "install", "test"),
    ("pip install -e .\npython -m torch.distributed.run --nproc_per_node=8 tests/test_x.py\n", "install", "test"),
    ("pip install -e .\npython -m torch.distributed.run --nproc_per_node=8 train.py\n", "install", "other"),
    ("set -ex\n./test/test_all.py --gpu\n", "shell", "test"),
    ("set -ex\ncp tests/test_x.py /tmp\n", "shell", "other"),
    ("set -ex\ndocker run --rm -v $PWD:/w --device=/dev/kfd --shm-size 16G rocm/pytorch:latest python -m pytest tests\n",
     "shell", "test"),
    ("set -ex\ndocker run -d --name ci rocm/pytorch:latest sleep infinity\n", "shell", "other"),
    # the sixth survey's test commands (mscclpp, TransformerEngine): a unit tests binary, a `*_tests.py` file
    ("set -ex\nmpirun --allow-run-as-root -np 8 ./build/test/mp_unit_tests -ip_port 127.0.0.1:50000\n", "shell", "test"),
    ("set -ex\n./build/test/unit_tests --gtest_filter=*\n", "shell", "test"),
    ("pip install -e .\ntorchrun --nproc_per_node 4 tests/pytorch/distributed/fused_attn_tests.py\n", "install", "test"),
    ("pip install -e .\npython scripts/install_tests.py\n", "install", "other"),
    # review146 y02, y03: tests listed, not run, wherever the option is; a linter, a type check or a build by tox/nox
    ("set -ex\npytest -q --co\n", "shell", "other"),
    ("set -ex\npython -m pytest tests --collect-only -q > tests.txt\n", "shell", "other"),
    ("set -ex\npytest --fixtures\n", "shell", "other"),
    ("cd build\nctest -N\n", "shell", "other"),
    ("cd build\nctest --show-only=json-v1\n", "shell", "other"),
    ("pip install tox\ntox -e typing\n", "install", "other"),
    ("pip install nox\nnox -s typecheck\n", "install", "other"),
    ("pip install tox\ntox -e codespell\n", "install", "other"),
    ("pip install tox\ntox -e build\n", "install", "other"),
    ("pip install tox\ntox -e py311\n", "install", "test"),
    # a subshell's tests are tests
    ("set -ex\n(cd tests && python -m pytest -x)\n", "shell", "test"),
    # review147 z02, z06: a variable named for tests, a helper named for them, a look at a test binary, a file a
    # command in an image reads, are no test run; LLVM's check-clang is one, a linter's target or session, a dry run,
    # ctest's labels are none
    ("set -ex\nBUILD_UNIT_TESTS=ON\ncmake --build build -j\n", "shell", "other"),
    ("set -ex\nTEST_FILE=tests/test_gemm.py\necho $TEST_FILE > selected.txt\n", "shell", "other"),
    ("set -ex\npython3 scripts/generate_tests.py --out tests/generated\n", "shell", "other"),
    ("set -ex\npython3 tools/testing/update_slow_tests.py\n", "shell", "other"),
    ("set -ex\nsudo -E ldd ./build/test/unit_tests\n", "shell", "other"),
    ("set -ex\ndocker run --rm ci-image cat tests/test_ops.py\n", "shell", "other"),
    ("set -ex\nsudo -u ci ./build/test/unit_tests\n", "shell", "test"),
    ("cd build\nninja -C build check-clang\n", "shell", "test"),
    ("cd build\nmake check-flake8\n", "shell", "other"),
    ("pip install tox\ntox run -e lint\n", "install", "other"),
    ("pip install nox\nnox --session lint\n", "install", "other"),
    ("cd build\nctest --print-labels\n", "shell", "other"),
    ("cd build\nmake -n test\n", "shell", "other"),
    # review148 a02-a04: sudo's options joined or long take their word; a test file by any path with a directory, a
    # test file named for what it tests (`collective_tests.py`); docker's flags take no word
    ("set -ex\nsudo -Eu runner pytest tests\n", "shell", "test"),
    ("set -ex\nsudo --chdir /src python -m pytest\n", "shell", "test"),
    ("set -ex\ntests/test_ops.py -v\n", "shell", "test"),
    ("set -ex\nmpirun -np 8 tests/test_dist.py\n", "shell", "test"),
    ("set -ex\npython3 -u tests/test_ops.py\n", "shell", "test"),
    ("set -ex\npython3 tests/distributed/collective_tests.py\n", "shell", "test"),
    ("set -ex\ndocker run --rm img cat ./tests/test_x.py\n", "shell", "other"),
    # the seventh survey: a test module by its dotted name (ROCm/mori), not another module; a look at the machine is
    # one (its place in the job tells setup from other: `test_a_script_that_only_looks_...`)
    ("set -ex\nMORI_ENABLE_SDMA=1 timeout 300 python -m tests.python.ccl.test_allgather --nproc 8\n", "shell", "test"),
    ("set -ex\npython3 -m atom.examples.simple_inference --model m\n", "shell", "other"),
    ("set -ex\npython3 -m pre_commit run --all-files\n", "shell", "other"),
    ("set -ex\npython3 -m tests.test_x.helpers\n", "shell", "other"),
    ("lscpu\ndocker ps -a\n", "look", "other"),
])
def test_the_first_line_of_a_script_speaks_for_it_only_with_commands_of_its_kind(script: str, unspoken: str,
                                                                                category: str) -> None:
    body = "".join(f"          {line}\n" for line in script.splitlines())
    step = parse_workflow(f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n{body}",
                          ".github/workflows/a.yml").jobs["a"].steps[0]
    assert (step.unspoken, RepoConfig().step_category(step)) == (unspoken, category)


@pytest.mark.parametrize("shown", ["Run python infer.py --model 'llama'", "Run 'LLaMA' `7B`", "Run LLaMA"])
@pytest.mark.parametrize("others", [0, 1])
def test_the_step_rule_a_fix_suggests_is_one_the_config_reads_and_it_takes_the_step(shown: str, others: int) -> None:
    """The rule a line of "Could not measure" suggests is pasted into .github/foldbot.yml as it is: a `'` in the step's
    name made it YAML that does not parse (`'^Run\\ python\\ infer.py ... 'llama'$'`), a backtick broke the code
    span it is in. Now the config reads it, and it takes the step. (`others`: the job ran a test step too, so the
    line is the one about steps classified as neither.)"""
    path = ".github/workflows/rocm.yml"
    named = shown.replace('"', '\\"')
    text = ("name: ROCm\non: pull_request\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n"
            f"      - name: \"{named}\"\n        run: python bench.py\n"
            "      - name: Run tests\n        run: pytest\n")
    steps = [Step("Set up job", 0.2), Step(shown, 40)] + [Step("Run tests", 2)] * others
    runs = [bundle(run_id=990 + i, repo="o/r", workflow_path=path, workflow_name="ROCm", head_sha=f"{990 + i:040x}",
                   start=START, jobs=[job("t", steps, ["linux-mi300-gpu-1"])]) for i in range(3)]
    (line,) = analyze({path: text}, runs, RepoConfig()).unmeasured
    rule = re.search(r"`(step_rules: [^`]*)`", line.fix).group(1)
    config = parse_config(rule)
    assert config.classify(shown) == "test"
    assert config.classify(shown + " x") == config.classify("Run x")  # (the whole name, nothing more)
