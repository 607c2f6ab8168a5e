"""Step classification, job-name matching and the setup-share arithmetic."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.config import RepoConfig, parse_config
from bot.timing import BundleError, JobMatcher, JobRef, called_job, job_stats, percentile, run_timing, seconds_between
from bot.workflow import parse_workflow
from tests.builders import PYTORCH_ROCM_MI300, Step, amd_job, bundle, job, skipped_job
from tests.paths import ROCM720

START = datetime(2026, 8, 10, 8, tzinfo=timezone.utc)

SETUP = ["Set up job", "Initialize containers", "Checkout code", "Ensure VRAM is clear", "Download artifacts",
         "Start CI container", "Setup docker buildx", "Start Special Container", "Install dependencies",
         "Setup kernel caches", "Diagnose HF cache and system resources", "Post Checkout code", "Complete job",
         "Run actions/checkout@v4"]
TEST = ["Run test", "Run diffusion unit tests", "Accuracy Test (8-GPU Grok2)", "Performance Test (2-GPU VLM Models)",
        "Nightly Test (4-GPU)"]
OTHER = ["Test RCCL multi-GPU communication", "Upload diffusion failure artifacts", "Verify RDMA in Container"]


@pytest.mark.parametrize("name", SETUP)
def test_setup_steps(name: str) -> None:
    assert RepoConfig().classify(name) == "setup"


@pytest.mark.parametrize("name", TEST)
def test_test_steps(name: str) -> None:
    assert RepoConfig().classify(name) == "test"


@pytest.mark.parametrize("name", OTHER)
def test_other_steps(name: str) -> None:
    assert RepoConfig().classify(name) == "other"


def test_configured_rules_come_first() -> None:
    config = parse_config("step_rules:\n  - {pattern: 'Test RCCL', category: test}\n")
    assert config.classify("Test RCCL multi-GPU communication") == "test"
    assert config.classify("Install dependencies") == "setup"


@pytest.mark.parametrize("api_name,job_id,matrix", [
    ("multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, 1)", "multimodal-gen-test-2-gpu-amd-rocm720", {"part": "1"}),
    ("multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi325-2gpu-sglang, 0)", "multimodal-gen-test-2-gpu-amd-rocm720", {"part": "0"}),
    # a matrix job skipped by its `if:`: without the parenthesised part, or unevaluated
    ("multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang)", "multimodal-gen-test-2-gpu-amd-rocm720", {}),
    ("stage-c-test-4-gpu-amd-rocm720 (linux-mi300-4gpu-sglang, ${{ matrix.part }})", "stage-c-test-4-gpu-amd-rocm720", {}),
    ("${{ format('stage-b-test-1-gpu-large-amd-rocm720 (linux-{0}-1gpu-sglang, {1})', inputs.runner_arch || 'mi300', matrix.part) }}",
     "stage-b-test-1-gpu-large-amd-rocm720", {}),
    ("stage-b-test-1-gpu-small-amd-nondeterministic-rocm720 (linux-mi300-1gpu-sglang)",
     "stage-b-test-1-gpu-small-amd-nondeterministic-rocm720", {}),
    ("call-gate / pr-gate", "call-gate", {}),  # a reusable workflow: caller / callee
    ("check-changes", "check-changes", {}),
    ("someone-else's job", None, {}),
])
def test_api_names_map_to_workflow_jobs(sglang_before: dict[str, str], api_name: str, job_id: str | None,
                                        matrix: dict[str, str]) -> None:
    matcher = JobMatcher(parse_workflow(sglang_before[ROCM720], ROCM720))
    ref = matcher.match(api_name)
    assert (ref.job_id, dict(ref.matrix)) == (job_id, matrix)


def test_default_names_carry_matrix_values_in_axis_order() -> None:
    wf = parse_workflow("on: push\njobs:\n  t:\n    runs-on: ${{ matrix.runner }}\n    strategy:\n      matrix:\n"
                        "        runner: [linux-mi300-gpu-1]\n        part: [0, 1]\n    steps:\n      - run: x\n", "ci.yml")
    ref = JobMatcher(wf).match("t (linux-mi300-gpu-1, 1)")
    assert (ref.job_id, dict(ref.matrix)) == ("t", {"runner": "linux-mi300-gpu-1", "part": "1"})


NAMED = """on: push
jobs:
  a:
    name: ab (${{ matrix.x }})
    strategy: {matrix: {x: [1, 2]}}
    runs-on: linux-mi300-gpu-1
  b:
    name: ${{ format('it''s {0} ({1})', 'x', matrix.p) }}
    strategy: {matrix: {p: [1, 2]}}
    runs-on: linux-mi300-gpu-1
  ab-extra:
    runs-on: linux-mi300-gpu-1
"""


@pytest.mark.parametrize("api_name,job_id,matrix", [
    ("ab (2)", "a", {"x": "2"}),
    ("ab", "a", {}),  # skipped: shorter than the literal text before the first expression
    ("it's x (2)", "b", {"p": "2"}),
    ("it's x", "b", {}),
    ("ab-extra", "ab-extra", {}),
    ("abc", None, {}),
])
def test_evaluated_names_and_their_skipped_forms(api_name: str, job_id: str | None, matrix: dict[str, str]) -> None:
    ref = JobMatcher(parse_workflow(NAMED, "ci.yml")).match(api_name)
    assert (ref.job_id, dict(ref.matrix)) == (job_id, matrix)


WF = """name: CI
on: pull_request
jobs:
  suite:
    runs-on: linux-mi300-gpu-1
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Run test
        run: pytest
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff .
"""


def _run(run_id: int, *jobs) -> dict:
    return bundle(run_id=run_id, repo="o/r", workflow_path=".github/workflows/ci.yml", workflow_name="CI",
                  head_sha=f"{run_id:040x}", jobs=list(jobs), start=START)


def test_setup_share_and_only_runs_that_ran_tests_count() -> None:
    wf = parse_workflow(WF, ".github/workflows/ci.yml")
    config = RepoConfig()
    runs = [
        run_timing(_run(1, amd_job("suite", labels=["linux-mi300-gpu-1"], setup_minutes=90, tests=[("Run test", 10)], teardown=()),
                        job("lint", [Step("Set up job", 1), Step("Run ruff .", 1)], ["ubuntu-latest"])), wf, config),
        run_timing(_run(2, skipped_job("suite"), job("lint", [Step("Run ruff .", 1)], ["ubuntu-latest"])), wf, config),
        run_timing(_run(3, amd_job("suite", labels=["linux-mi300-gpu-1"], setup_minutes=110, tests=[("Run test", 30)],
                                   teardown=(), conclusion="failure")), wf, config),
    ]
    first = runs[0].jobs[0]
    assert first.workflow_job == "suite" and first.is_amd
    assert 90 * 60 < first.setup_seconds < 90 * 60 + 10  # setup, plus Post Checkout code and Complete job
    assert first.test_seconds == 600
    assert 0.89 < first.setup_share < 0.91
    assert not runs[0].jobs[1].is_amd  # ubuntu-latest is not an AMD runner
    stats = job_stats(runs)
    assert set(stats) == {"suite"}
    assert stats["suite"].samples == 2  # the skipped run is no sample
    assert stats["suite"].test.median == 20 * 60
    assert stats["suite"].test.p90 == pytest.approx(28 * 60)


def test_a_test_step_cancelled_part_way_is_no_sample() -> None:
    """A `cancel-in-progress` lane: a newer push cancels the run 3 min into a suite of 25. Counted,
    the 3 min made the suite's p90, and a fold's timeout of 3 x p90 would have cut it at 10."""
    wf = parse_workflow(WF, ".github/workflows/ci.yml")
    config = RepoConfig()
    cancelled = job("suite", [Step("Set up job", 0.1), Step("Start CI container", 90), Step("Run test", 3, "cancelled")],
                    ["linux-mi300-gpu-1"], conclusion="cancelled")
    runs = [run_timing(_run(1, cancelled), wf, config),
            run_timing(_run(2, amd_job("suite", labels=["linux-mi300-gpu-1"], setup_minutes=90, tests=[("Run test", 25)],
                                       teardown=())), wf, config)]
    assert (runs[0].jobs[0].test_seconds, runs[0].jobs[0].ran_tests) == (180, False)
    stats = job_stats(runs)
    assert (stats["suite"].samples, stats["suite"].test.median) == (1, 25 * 60)


def test_percentile_interpolates() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 90) == 5
    assert percentile([], 90) == 0


def test_a_bundle_of_another_workflow_is_refused() -> None:
    wf = parse_workflow(WF, ".github/workflows/ci.yml")
    other = bundle(run_id=9, repo="o/r", workflow_path=".github/workflows/nightly.yml", workflow_name="N",
                   head_sha="f" * 40, jobs=[], start=START)
    with pytest.raises(BundleError, match="is from .github/workflows/nightly.yml, not .github/workflows/ci.yml"):
        run_timing(other, wf, RepoConfig())


def test_a_bundle_without_jobs_is_refused() -> None:
    wf = parse_workflow(WF, ".github/workflows/ci.yml")
    with pytest.raises(BundleError, match="missing `jobs`"):
        run_timing({"workflow_run": {"id": 1, "path": ".github/workflows/ci.yml"}}, wf, RepoConfig())


SPANS = [
    ("2026-08-10T08:00:00Z", "2026-08-10T09:30:15Z", 5415),
    ("2026-08-10T23:59:50Z", "2026-08-11T00:00:10Z", 20),  # across midnight
    ("2026-08-10T08:00:00Z", "2026-08-10T07:00:00Z", 0),  # wrong order counts zero
    ("2020-01-20T09:42:40.000-08:00", "2020-01-20T09:42:45.000-08:00", 5),
    ("2020-01-20T09:42:40.000-08:00", "2020-01-20T17:42:45Z", 5),  # two offsets
    ("2026-08-10T08:0a:00Z", "2026-08-10T08:01:00Z", 0),  # garbage
    ("2026-08-10T08:00:00", "2026-08-10T08:01:00", 60),  # no time zone: UTC, as GitHub's stamps are
    ("2026-08-10T08:00:00", "2026-08-10T08:01:00Z", 60),  # one without
    ("2026-08-10T08:00:00.5", "2026-08-10T09:00:00+01:00", 0),  # naive UTC after the aware one: wrong order
    (None, "2026-08-10T08:01:00Z", 0),
    (17, "2026-08-10T08:01:00Z", 0),
]


@pytest.mark.parametrize("start,end,seconds", SPANS)
@pytest.mark.parametrize("steps_as", ["github", "irregular"])
@pytest.mark.parametrize("step_name,category", [("Install dependencies", "setup"), ("Run tests", "test"),
                                                ("Upload logs", "other")])
def test_step_spans(start: object, end: str, seconds: float, steps_as: str, step_name: str, category: str) -> None:
    """A step's seconds, alike for steps exactly as GitHub sends them and among
    irregular ones (a step lacking keys, something that is not a step)."""
    step = {"name": step_name, "status": "completed", "conclusion": "success", "number": 1,
            "started_at": start, "completed_at": end}
    steps = [step] if steps_as == "github" else [step, {"name": "Upload results"}, "not a step"]
    api_job = {"id": 1, "name": "suite", "labels": ["linux-mi300-gpu-1"], "status": "completed",
               "conclusion": "success", "steps": steps}
    wf = parse_workflow(WF, ".github/workflows/ci.yml")
    timing = run_timing(_run(1) | {"jobs": [api_job]}, wf, RepoConfig()).jobs[0]
    assert (timing.setup_seconds, timing.test_seconds, timing.other_seconds) == tuple(
        seconds if c == category else 0 for c in ("setup", "test", "other"))
    assert timing.ran_tests == (category == "test" and seconds > 0)
    # Test and other steps are kept one by one (what is not a step is left out); setup steps only summed.
    kept = [] if category == "setup" else [step_name]
    assert [s.name for s in timing.work_steps] == kept + ([] if steps_as == "github" else ["Upload results"])
    assert timing.step_seconds(step_name) == (0 if category == "setup" else seconds)
    assert seconds_between(start, end) == seconds


def test_matrix_keys_that_differ_only_in_dash_or_underscore_stay_apart() -> None:
    """Compiled name rules are shared between workflows; each keeps its own key names."""
    def workflow(job: str, key: str) -> str:
        return (f"jobs:\n  {job}:\n    name: {job} ${{{{ matrix.{key} }}}}\n    runs-on: linux-mi300-gpu-1\n"
                f"    strategy: {{matrix: {{{key}: [mi300]}}}}\n    steps: [{{run: echo}}]\n")
    dashed = parse_workflow(workflow("t", "gpu-type"), "a.yml")
    underscored = parse_workflow(workflow("u", "gpu_type"), "b.yml")
    assert JobMatcher(dashed).match("t mi300").matrix == (("gpu-type", "mi300"),)
    assert JobMatcher(underscored).match("u mi300").matrix == (("gpu_type", "mi300"),)
    assert JobMatcher(dashed).match("t mi300").matrix == (("gpu-type", "mi300"),)


def test_a_name_that_shows_a_matrix_value_twice() -> None:
    wf = parse_workflow("jobs:\n  t:\n    name: t ${{ matrix.x }} on ${{ matrix.x }}\n    runs-on: linux-mi300-gpu-1\n"
                        "    strategy: {matrix: {x: [mi300, mi325]}}\n    steps: [{run: echo}]\n", "ci.yml")
    matcher = JobMatcher(wf)
    assert matcher.match("t mi325 on mi325") == JobRef("t", (("x", "mi325"),))
    # one key has one value: the name fits no rule, and only its leading job id is known
    assert matcher.match("t mi325 on mi300") == JobRef("t")


def test_a_static_name_of_a_matrix_job_gets_the_matrix_values_appended() -> None:
    """GitHub shows a matrix job whose `name:` has no `${{ matrix.* }}` as `name (v1, v2)`
    (ROCm/aiter's aiter-test.yaml: `name: Standard Tests (1 GPU)` over an include list)."""
    wf = parse_workflow("on: push\njobs:\n"
                        "  standard:\n    name: Standard Tests (1 GPU)\n    runs-on: ${{ matrix.runner }}\n"
                        "    strategy:\n      matrix:\n        include:\n"
                        "          - {runner: aiter-mi355-1gpu, label: MI355}\n          - {runner: aiter-1gpu-runner, label: MI325}\n"
                        "    steps: [{run: echo}]\n"
                        "  shards:\n    name: Shards\n    runs-on: linux-mi300-gpu-1\n"
                        "    strategy: {matrix: {part: [0, 1]}}\n    steps: [{run: echo}]\n"
                        "  lint:\n    name: Lint\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n", "ci.yml")
    matcher = JobMatcher(wf)
    assert matcher.match("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)") == JobRef("standard")
    assert matcher.match("Standard Tests (1 GPU)") == JobRef("standard")  # skipped: no values
    assert matcher.match("Shards (1)") == JobRef("shards", (("part", "1"),))
    assert matcher.match("Lint (x)") == JobRef(None)  # no matrix: GitHub appends nothing




def test_callers_that_share_a_name_are_told_apart_by_their_callee() -> None:
    """pytorch's rocm-mi300.yml: the build and the test caller are both named
    `linux-focal-rocm6.3-py3.10`; the callee's job name after ` / ` says which ran."""
    matcher = JobMatcher(parse_workflow(PYTORCH_ROCM_MI300, ".github/workflows/rocm-mi300.yml"))
    test = "linux-focal-rocm6.3-py3.10 / test (default, 1, 6, linux.rocm.gpu.mi300.2)"
    assert matcher.match(test) == JobRef(None, (), ("linux-focal-rocm6_3-py3_10-build", "linux-focal-rocm6_3-py3_10-test"))
    assert matcher.match_job(test, ["Test"], ("linux.rocm.gpu.mi300.2",)) == JobRef("linux-focal-rocm6_3-py3_10-test")
    assert matcher.match_job("linux-focal-rocm6.3-py3.10 / build", ["Build"], ("linux.2xlarge",)) == \
        JobRef("linux-focal-rocm6_3-py3_10-build")


# A caller of a reusable workflow: the called job's steps are classified by their names alone.
CALLER = """name: Tests
on: push
jobs:
  tests:
    uses: org/infra/.github/workflows/job.yml@main
"""


def _called(steps: list[Step], labels: list[str]) -> dict:
    return bundle(run_id=7, repo="o/r", workflow_path=".github/workflows/tests.yml", workflow_name="Tests",
                  head_sha=f"{7:040x}", jobs=[job("tests / job", steps, labels)], start=START)


def _times(steps: list[Step], labels: list[str]) -> tuple[float, float, float, bool]:
    timing = run_timing(_called(steps, labels), parse_workflow(CALLER, ".github/workflows/tests.yml"), RepoConfig()).jobs[0]
    return timing.setup_seconds / 60, timing.test_seconds / 60, timing.other_seconds / 60, timing.ran_tests


def test_test_infra_linux_job_v2_runs_its_script_as_the_tests() -> None:
    """pytorch/ao's ROCm lane: test-infra's `Run script in container` is where pytest runs (two hours);
    `Surface failing tests` after it only reports them."""
    steps = [Step("Set up job", 1), Step("Clean workspace", 1), Step("Setup ROCM", 3), Step("Pull docker image", 9),
             Step("Check if in a container runner", 1), Step("Run script in container", 120),
             Step("Run script outside container", 0, "skipped"), Step("Surface failing tests", 1),
             Step("Chown repository directory", 1), Step("Prepare artifacts for upload", 1), Step("Teardown Linux", 1),
             Step("Clean workspace after tear down", 1), Step("Complete job", 1)]
    assert _times(steps, ["linux.rocm.gpu.ecosystem.mi350.1"]) == (16, 120, 5, True)


def test_therock_notifications_and_repro_command_are_no_tests() -> None:
    """TheRock's test_component.yml: when the test environment's setup fails, `Test` is skipped and the
    job ran no test, though the Quartz notifications (`if: always()`) ran."""
    steps = [Step("Set up job", 1), Step("Quartz - started - test ROCm component", 1),
             Step("Pre-job cleanup GPU processes on Linux", 1), Step("Checking repository", 1),
             Step("Run setup test environment workflow", 15, "failure"), Step("Runner health status", 0, "skipped"),
             Step("Test", 0, "skipped"), Step("Print test reproduction command", 1),
             Step("Post-job cleanup GPU processes on Linux", 1), Step("Capture job summary", 1),
             Step("Quartz - completed - test ROCm component", 1), Step("Complete job", 1)]
    assert _times(steps, ["linux-mi325-1gpu-ossci-rocm"]) == (19, 0, 5, False)
    ran = [Step("Pre-job cleanup GPU processes on Linux", 1), Step("Runner health status", 1),
           Step("Driver / GPU sanity check", 1), Step("Test", 30), Step("Quartz - completed - test ROCm component", 1)]
    assert _times(ran, ["linux-mi325-1gpu-ossci-rocm"]) == (3, 30, 1, True)


def test_benches_are_tests_and_builds_are_setup() -> None:
    """ROCm/flash-attention `AMD Bench`; xformers `Pre-build clean`; onnxruntime's CMake step and its
    `Prepare Build Output for Upload` after the tests."""
    steps = [Step("Pre-build clean", 1), Step("Generate Build Files (CMake) (x64 / Release)", 4),
             Step("Build ONNX Runtime (x64 / Release)", 30), Step("AMD Tests", 3), Step("AMD Bench", 35),
             Step("AMD Bench with Autotune", 60), Step("Prepare Build Output for Upload", 2), Step("Post-build clean", 1)]
    assert _times(steps, ["linux-mi300-gpu-1"]) == (35, 98, 3, True)


@pytest.mark.parametrize("name,category", [
    ("Runner health status", "setup"),  # TheRock, before its tests
    ("GPU health check", "setup"),
    ("Upload health check results", "other"),  # after the tests: an upload, whatever it uploads
    ("Report GPU health status", "other"),
])
def test_a_health_check_is_setup_but_not_its_upload_or_report(name: str, category: str) -> None:
    assert RepoConfig().classify(name) == category


# Modelled on ROCm/rocm-systems' aqlprofile-continuous_integration.yml (@07124dd8): the matrix axis is a list of
# objects, and `runs-on` reads a key of the object.
NESTED = """on: push
jobs:
  core-deb:
    strategy:
      fail-fast: false
      matrix:
        system: [
          {gpu: 'navi4', runner: 'linux-rx9070-gpu-rocm', os: 'ubuntu-22.04'},
          {gpu: 'mi325', runner: 'linux-mi325-1gpu-ossci-rocm', os: 'ubuntu-22.04'}
        ]
    runs-on: ${{ matrix.system.runner }}
    steps: [{name: Test, run: ctest}]
  lint:
    strategy: {matrix: {system: [{runner: ubuntu-latest}]}}
    runs-on: ${{ matrix.system.runner }}
    steps: [{name: Lint, run: ruff .}]
  odd:
    strategy: {matrix: {system: [{gpu: mi325}]}}
    runs-on: ${{ matrix.system.runner }}
    steps: [{name: Test, run: ctest}]
"""


def test_runs_on_a_key_of_an_object_matrix_value_is_decided_from_those_values() -> None:
    """`runs-on: ${{ matrix.system.runner }}` read as no label at all: the job was declared no AMD job, so a run
    whose AMD jobs were skipped (no labels) counted them as non-AMD. The key's values decide it; a key the
    values lack cannot be told."""
    from bot.timing import declared_amd
    wf = parse_workflow(NESTED, ".github/workflows/ci.yml")
    assert declared_amd(wf.jobs["core-deb"], RepoConfig()) is True
    assert declared_amd(wf.jobs["lint"], RepoConfig()) is False
    assert declared_amd(wf.jobs["odd"], RepoConfig()) is None
    run = run_timing(_run(1, skipped_job("core-deb (navi4, linux-rx9070-gpu-rocm, ubuntu-22.04)")), wf, RepoConfig())
    assert run.jobs[0].workflow_job == "core-deb" and run.jobs[0].is_amd


INPUT_RUNNERS = """name: bench
on:
  workflow_dispatch:
    inputs:
      runner:
        type: choice
        default: ubuntu-latest
        options: [ubuntu-latest, linux-mi325-gpu-1]
  workflow_call:
    inputs:
      gpu:
        type: string
        default: linux-mi300-gpu-1
      none:
        type: string
      cpu_only:
        type: string
        default: ubuntu-latest
      huge:
        type: number
        default: 0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
jobs:
  picked:
    runs-on: ${{ inputs.runner }}
    steps: [{name: Test, run: pytest}]
  called:
    runs-on: ${{ inputs.gpu }}
    steps: [{name: Test, run: pytest}]
  cpu:
    runs-on: ${{ inputs.none || 'ubuntu-22.04' }}
    steps: [{name: Test, run: pytest}]
  unknown:
    runs-on: ${{ inputs.none }}
    steps: [{name: Test, run: pytest}]
  by-default-cpu:
    runs-on: ${{ inputs.cpu_only }}
    steps: [{name: Test, run: pytest}]
  spelled:
    runs-on: ${{ Inputs.GPU }}
    steps: [{name: Test, run: pytest}]
  indexed:
    runs-on: ${{ inputs['none'] }}
    steps: [{name: Test, run: pytest}]
  indexed-amd:
    runs-on: ${{ inputs['gpu'] }}
    steps: [{name: Test, run: pytest}]
"""


def test_runs_on_an_input_is_read_with_the_default_and_options_the_file_gives_it() -> None:
    """`runs-on: ${{ inputs.runner }}`: a dispatch's choice, a call's default, in any case. An AMD value makes
    the job AMD; a CPU default does not make it not AMD (a caller may pass another runner), and an input the
    file gives no value cannot be told. A number is no runner (one past Python's digits is no crash)."""
    from bot.timing import declared_amd
    wf = parse_workflow(INPUT_RUNNERS, ".github/workflows/bench.yml")
    assert wf.input_values == {"runner": ("ubuntu-latest", "linux-mi325-gpu-1"), "gpu": ("linux-mi300-gpu-1",),
                               "none": (), "cpu_only": ("ubuntu-latest",), "huge": ()}
    jobs = ("picked", "called", "cpu", "unknown", "by-default-cpu", "spelled", "indexed", "indexed-amd")
    # (`inputs['none']`: the key is no label, so not "not AMD")
    assert [declared_amd(wf.jobs[j], RepoConfig(), wf) for j in jobs] == [True, True, False, None, None, True, None, True]
    assert declared_amd(wf.jobs["called"], RepoConfig()) is None  # (the file's inputs not given)


@pytest.mark.parametrize("name, called", [
    # TheRock's `multi_arch_ci.yml`: three levels of reusable workflows, a shard and a GPU family in parentheses
    ("Linux::release / Test gfx94X-dcgpu / Test rocblas / Test rocblas (shard 1/3) (gfx94X-dcgpu)",
     "Test gfx94X-dcgpu / Test rocblas"),
    ("Test Artifacts / Test Sanity Check / Test sanity (shard 1/1) (gfx94X-dcgpu)", "Test Sanity Check / Test sanity"),
    # transformers' AMD CI (hf-workflows): the caller's matrix values, and a level that is only a model folder
    ("Model CI / Single GPU tests (1gpu, 0) /  (models/albert)", "Single GPU tests"),
    ("DeepSpeed CI / Check Runners (single-gpu)", "Check Runners"),
    ("tests / job", "job"),
    ("tests", "tests"),  # (no level below the caller's: the name itself)
])
def test_the_job_a_reusable_workflow_runs_is_told_by_its_name_without_matrix_values(name: str, called: str) -> None:
    assert called_job(name) == called


OBJECT_AXIS = """name: ROCm
on: pull_request
jobs:
  test_and_publish_artifact:
    runs-on: ${{ matrix.host-machine.instance }}
    strategy:
      matrix:
        host-machine: [{arch: x86, instance: "rocm"}]
        python-version: ["3.11", "3.12"]
        rocm-version: ["5.7"]
        include:
          - python-version: "3.12"
            extra: nightly
    steps:
      - run: pytest
"""


@pytest.mark.parametrize("name, values", [
    # every leaf of an object value, in order, then the other axes, then what an `include` adds
    ("test_and_publish_artifact (x86, rocm, 3.11, 5.7)",
     {"host-machine": "x86, rocm", "python-version": "3.11", "rocm-version": "5.7"}),
    ("test_and_publish_artifact (x86, rocm, 3.12, 5.7, nightly)",
     {"host-machine": "x86, rocm", "python-version": "3.12", "rocm-version": "5.7"}),
])
def test_an_object_matrix_value_takes_each_of_its_leaves_in_the_name(name: str, values: dict) -> None:
    """review91 f02 (FBGEMM's `host-machine: [{arch: x86, instance: rocm}]`): GitHub lists an object's every leaf in
    a default job name; each axis after it had taken its neighbour's value (`python-version: rocm`)."""
    matcher = JobMatcher(parse_workflow(OBJECT_AXIS, ".github/workflows/rocm.yml"))
    assert dict(matcher.match(name).matrix) == values


def _rocm_caller(job_id: str, uses: str) -> str:
    """A job that calls `uses` for two archs, named `ROCm / <arch>`: a `name:` with a level of its own."""
    return (f"  {job_id}:\n    name: ROCm / ${{{{ matrix.arch }}}}\n    strategy:\n      matrix:\n"
            f"        arch: [mi300, mi325]\n    uses: ./.github/workflows/{uses}\n")


ROCM_CALLER = "name: AMD\non: pull_request\njobs:\n" + _rocm_caller("rocm", "_test.yml")


@pytest.mark.parametrize("name, values, called", [
    # a caller whose own `name:` has a level: its matrix value is `mi300`, and it runs one job, `unit`
    ("ROCm / mi300 / unit", {"arch": "mi300"}, "unit"),
    ("ROCm / mi325 / unit (shard 1)", {"arch": "mi325"}, "unit"),
])
def test_a_callers_name_with_levels_of_its_own_is_its_name(name: str, values: dict, called: str) -> None:
    """review90 f02: the first ` / ` was taken for the caller's end: the one called job became `mi300 / unit` and
    `mi325 / unit`, two "short suites to fold into another", and the arch read `mi300 / unit`."""
    matcher = JobMatcher(parse_workflow(ROCM_CALLER, ".github/workflows/amd.yml"))
    ref = matcher.match(name)
    assert (ref.job_id, dict(ref.matrix)) == ("rocm", values)
    assert matcher.called_job(name, "rocm") == called


def test_a_level_is_not_cut_inside_matrix_values() -> None:
    """review90 f02: onnxruntime-style values `(x64 / Release)` are one level's."""
    assert called_job("build / test (x64 / Release)") == "test"
    assert called_job("win (x64 / Release) / test") == "test"


@pytest.mark.parametrize("name", ["Run pytest in venv", "Run unittests in venv", "Testing with venv",
                                  "Run benchmarks in virtualenv", "Run accuracy eval in venv", "Run pytest (deps: torch)",
                                  "Run benchmark and write results to GITHUB_OUTPUT", "Stage B benchmarks"])
def test_a_test_step_that_names_a_venv_deps_or_github_env_stays_a_test(name: str) -> None:
    """review90 f01: the rule for steps that set up what the next steps run with took test steps that said so."""
    assert RepoConfig().classify(name) == "test"



SHARED_CALLERS = "name: AMD\non: pull_request\njobs:\n" + _rocm_caller("build", "build.yml") + _rocm_caller("test", "test.yml")


def test_callers_that_share_a_name_with_levels_are_told_apart_by_the_called_file() -> None:
    """review93 f08: the called job's name was read after the first ` / ` (the arch, `mi300`), so a build and a test
    caller named alike stayed ambiguous, not counted."""
    matcher = JobMatcher(parse_workflow(SHARED_CALLERS, ".github/workflows/amd.yml"))
    ref = matcher.match_job("ROCm / mi300 / test", [], ("linux-mi300-gpu-1",))
    assert (ref.job_id, dict(ref.matrix)) == ("test", {"arch": "mi300"})


@pytest.mark.parametrize("name, category", [
    ("Run tests and collect test results", "test"), ("Run unit tests and publish test results", "test"),
    ("Execute tests and collect test results", "test"), ("Run pytest and print test summary", "test"),
    ("Verifying GPU test results", "test"), ("AMDSMI Test Results", "other"), ("Test Summary", "other"),
    ("Stage latest wheels", "setup"), ("Create venv with latest pip", "setup"),
    ("Find latest image tag and write to GITHUB_ENV", "setup"), ("Python deps for the latest nightly", "setup"),
    # review94 f05: logs, dumps and results collected after the tests stay other; environment info before them, setup
    ("Collect system logs on failure", "other"), ("Collect ROCm logs", "other"), ("Collect GPU core dumps", "other"),
    ("Collect test results from host", "other"), ("Collect PyTorch Environment Info", "setup"),
])
def test_the_rules_for_results_shown_and_envs_made_leave_test_steps_and_words_alone(name: str, category: str) -> None:
    """review93 f06, f07: `... test results` took steps that run the tests; `latest` read as a test word."""
    assert RepoConfig().classify(name) == category


@pytest.mark.parametrize("passed, amd", [
    ("      runner: linux.rocm.gpu.mi300.2\n", True),
    ("      runner: linux.2xlarge\n", False),
    ("      runner_arch: mi300\n", True),  # SGLang's _pr-test-stage-amd.yml (review106 f03)
    ("      runner: ubuntu-latest\n      runs-on: ${{ vars.GPU }}\n", None),
    # a CPU's architecture beside the GPU it names otherwise is no word on the runner (review107 f05)
    ("      runner-arch: aarch64\n      gpu: mi300x\n", None),
    # review104 f05: an input that names no runner, or a GPU runner an expression gives beside a CPU one: not known
    ("      runner_os: linux\n", None),
    ("      runner-count: '2'\n", None),
    ("      cpu-runner: ubuntu-latest\n      gpu-runner: ${{ vars.ROCM_RUNNER }}\n", None),
])
def test_a_caller_is_judged_by_the_runner_it_passes_by_name(passed: str, amd: bool | None) -> None:
    from bot.timing import declared_amd
    text = f"on: push\njobs:\n  test:\n    uses: ./.github/workflows/_rocm-test.yml\n    with:\n{passed}"
    workflow = parse_workflow(text, ".github/workflows/rocm.yml")
    assert declared_amd(workflow.jobs["test"], RepoConfig(), workflow) is amd


def test_a_runner_group_is_judged_as_its_jobs_labels_name_it() -> None:
    """review106 f07: a job sent to a runner group is labelled `group:<name>` once it runs (`job_labels`); its file's
    `runs-on` is judged by the same text, so a pattern for it matches a skipped job too."""
    from bot.timing import declared_amd
    text = "on: push\njobs:\n  a:\n    runs-on: {group: gpu-pool}\n    steps: [{run: pytest}]\n"
    workflow = parse_workflow(text, ".github/workflows/a.yml")
    ours = parse_config("amd_runner_pattern: '^(?:group:gpu\\-pool)$'\n")
    assert declared_amd(workflow.jobs["a"], ours, workflow) is True
    assert declared_amd(workflow.jobs["a"], RepoConfig(), workflow) is False
