"""The default step rules and AMD runner pattern against real AMD CI of several projects
(tests/real_ci_names.py): every surveyed step lands in its category, every surveyed label
is or is not an AMD GPU runner, and a repository's own rules still come first."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig, parse_config
from bot.workflow import parse_workflow
from tests.paths import SGLANG
from tests.real_ci_names import AMD64_NOT_AMD_GPU, GITHUB_ADDED, PROJECTS, RUNS_ON, SGLANG_STEPS

STEPS = [(p.name, name, action, category) for p in PROJECTS for name, action, category in p.steps]
STEPS += [("github", name, action, category) for name, action, category in GITHUB_ADDED]
AMD_LABELS = sorted({label for p in PROJECTS for label in p.amd_labels})
OTHER_LABELS = sorted({label for p in PROJECTS for label in p.other_labels} | set(AMD64_NOT_AMD_GPU))

SGLANG_LANES = ("pr-test-amd-rocm720.yml", "pr-test-amd.yml", "nightly-test-amd.yml",
                "nightly-test-amd-rocm720.yml", "nightly-test-amd-miles-rocm720.yml")


def _id(step: tuple[str, str, bool, str]) -> str:
    project, name, action, _ = step
    return f"{project}:{'uses' if action else 'run'}:{name}"


@pytest.mark.parametrize("project,name,action,category", STEPS, ids=[_id(s) for s in STEPS])
def test_real_steps_get_their_category(project: str, name: str, action: bool, category: str) -> None:
    assert RepoConfig().classify(name, action=action) == category


@pytest.mark.parametrize("label", AMD_LABELS)
def test_amd_labels_are_amd_runners(label: str) -> None:
    assert RepoConfig().is_amd_runner((label,))


@pytest.mark.parametrize("label", OTHER_LABELS)
def test_other_labels_are_not_amd_runners(label: str) -> None:
    assert not RepoConfig().is_amd_runner((label,))


@pytest.mark.parametrize("labels,amd", RUNS_ON, ids=[",".join(labels) for labels, _ in RUNS_ON])
def test_whole_runs_on_lists(labels: tuple[str, ...], amd: bool) -> None:
    assert RepoConfig().is_amd_runner(labels) is amd
    assert RepoConfig().is_amd_runner(list(labels)) is amd


@pytest.mark.parametrize("label,amd", [
    ("1ES.Pool=onnxruntime-github-Ubuntu2204-AMD-CPU", False),  # onnxruntime's CPU build pool
    ("amd-cpu", False), ("AMD_CPU", False), ("amd cpu", False), ("linux-amd-cpu4", False), ("amd-epyc-9654", False),
    # pytorch's AMD EPYC CPU pools, named by EC2 size (its x86-zen inductor CPU benchmarks): no GPU
    ("linux.24xlarge.amd", False), ("linux.8xlarge.amd", False), ("linux.12xlarge.amd", False),
    ("amd", True), ("amd-gpu", True), ("AMD-GPU", True), ("amd-mi300", True), ("mi300x-amd-cpu", True),
    # `amdgpu` as one word (the kernel driver's name) is an AMD GPU too; a longer word that starts so is not
    ("linux-amdgpu", True), ("amdgpu", True), ("amdgpu-cpu", False), ("amdgpux", False),
])
def test_a_label_that_says_amd_cpu_is_no_amd_gpu(label: str, amd: bool) -> None:
    """`amd` as a word is an AMD GPU runner, but not when the label goes on to say CPU or EPYC;
    a label that also names an Instinct part still is one."""
    assert RepoConfig().is_amd_runner((label,)) is amd


@pytest.mark.parametrize("label", [
    "rtx4090", "linux-rtx-a6000", "nvidia-a6000", "linux.r7i.2xlarge", "linux.r7i.4xlarge", "cleanup-5090-gpu",
    "ubuntu-2004", "namespace-profile-8x32-ubuntu-2004", "windows-2022",
])
def test_radeon_names_do_not_catch_other_numbers(label: str) -> None:
    """The Radeon rule (`rdna3`, `r9700`, `w7900`, `7900xtx`) leaves NVIDIA's card numbers, EC2's `r7i` and
    OS versions alone."""
    assert not RepoConfig().is_amd_runner((label,))


def test_the_survey_is_broad_enough() -> None:
    others = [p for p in PROJECTS if p.name != "sglang"]
    assert len(others) >= 6
    for p in others:
        assert len(p.steps) >= 8, p.name
        categories = {c for _, _, c in p.steps}
        assert {"setup", "test"} <= categories, p.name
        # xformers' AMD machine has no label that names it, onnxruntime's pools are AMD CPUs: their labels are others.
        assert p.sources and (p.amd_labels or p.other_labels), p.name
    assert not set(AMD_LABELS) & set(OTHER_LABELS)
    for label in ("linux-mi35x-gpu-1", "linux-mi35x-gpu-8", "linux-mi35x-gpu-8.fabric", "linux-aiter-mi35x-1",
                  "linux-mi300-1gpu-sglang", "linux-mi325-2gpu-sglang", "linux.rocm.gpu.mi210.1", "mi250",
                  "gfx90a", "amd-gfx942", "linux.rocm.gpu.gfx950.1"):
        assert label in AMD_LABELS


def test_sglang_data_covers_every_step_of_its_amd_lanes() -> None:
    """The SGLang list is every distinct step of the lane fixtures, no more and no less."""
    written: set[tuple[str, bool]] = set()
    for lane in SGLANG_LANES:
        path = SGLANG / "workflows" / lane
        workflow = parse_workflow(path.read_text(), f".github/workflows/{lane}")
        written |= {(s.name, s.uses is not None) for job in workflow.jobs.values() for s in job.steps}
    listed = [(name, action) for name, action, _ in SGLANG_STEPS]
    assert len(listed) == len(set(listed))
    assert set(listed) == written


def test_an_unnamed_action_is_setup_however_it_is_named() -> None:
    """Without a rule of its own, an unnamed `uses:` step is setup, even when its path says test;
    a test step named for its tests is a test even when it is an action (optimum-benchmark)."""
    config = RepoConfig()
    assert config.classify("Run ./.github/actions/run-tests", action=True) == "setup"
    assert config.classify("Run ./.github/actions/check-pr-test-health", action=True) == "setup"
    assert config.classify("Run pytorch/test-infra/.github/actions/pull-docker-image@main") == "setup"
    assert config.classify("Run tests", action=True) == "test"


def test_a_repository_rule_wins_over_an_action_step() -> None:
    config = parse_config("step_rules: [{pattern: 'Run ./.github/actions/run-tests', category: test}]")
    assert config.classify("Run ./.github/actions/run-tests", action=True) == "test"
    assert config.classify("Checkout code", action=True) == "setup"  # the defaults still follow
    assert RepoConfig().classify("Run ./.github/actions/run-tests", action=True) == "setup"



@pytest.mark.parametrize("name,category", [
    ("Display benchmark report", "other"), ("List test reports", "other"), ("Dump test report", "other"),
    ("Cat build report", "other"),
    # a listing of the machine before the tests stays setup (d6dbadd made these other with `display`, `dump`)
    ("Display GPU summary", "setup"), ("Dump system summary", "setup"), ("Display ROCm environment summary", "setup"),
    ("List GPUs summary", "setup"), ("Display rocm-smi summary", "setup"),
])
def test_a_report_shown_after_the_tests_is_other_a_machine_summary_before_them_setup(name: str, category: str) -> None:
    assert RepoConfig().classify(name, action=False) == category


@pytest.mark.parametrize("name,category", [
    ("Installing dependencies", "setup"), ("Reinstalling torch", "setup"), ("Building wheel", "setup"),
    ("Downloading artifacts", "setup"), ("Pulling docker image", "setup"), ("Setting up Python", "setup"),
    ("Logging in to Docker Hub", "setup"), ("Cloning the test suite", "setup"), ("Fetching submodules", "setup"),
    ("Checking out the TestSuite repo", "setup"), ("Compiling kernels", "setup"), ("Restoring the cache", "setup"),
    ("Uploading artifacts", "other"), ("Saving test results", "other"), ("Collecting logs", "other"),
    ("Cleaning up containers", "other"), ("Removing old images", "other"), ("Tearing down the cluster", "other"),
    ("Stopping the server", "other"),
    # a gerund that does not start the name is read as before; the test word still makes a test step
    ("Running unit tests", "test"), ("Run tests while installing nothing", "test"),
])
def test_a_step_named_with_a_gerund_gets_its_verbs_category(name: str, category: str) -> None:
    """IREE names its steps `Checking out ...`, `Installing ...`, `Uploading ...`: its TestSuite checkout
    and pip install were tests (the word TestSuite) and its upload was setup."""
    assert RepoConfig().classify(name, action=False) == category


@pytest.mark.parametrize("name,category", [
    ("Launch tests in container", "test"), ("Start tests in docker container", "test"),
    ("Launch benchmark inside the container", "test"), ("Start Radeon test container", "setup"),
    ("Verify tests passed on ROCm", "test"), ("Verify GPU test results", "test"), ("Verify Radeon runner host", "setup"),
    ("Check that all test files ran", "test"), ("Split test list and run shard", "test"),
    ("List test shard files", "setup"), ("Export test times for sharding", "setup"),
    ("GPU check after tests", "other"), ("Show disk usage after the tests", "other"), ("Show disk usage", "setup"),
])
def test_the_rules_for_the_second_survey_leave_tests_tests(name: str, category: str) -> None:
    """The rules the 2026-12-06 survey brought (a container started by name, `verify` of the machine, a list
    of test files, the machine's checks) take setup steps out of the tests, and only those: names a review
    wrote that run or judge tests stay tests (a fold moves test steps only: a suite step taken for setup
    would be left behind), and a look at the machine after the tests is other."""
    assert RepoConfig().classify(name) == category


def test_long_action_names_are_read_in_linear_time() -> None:
    """The linters' action rule reads a name GitHub shows for an unnamed action (`Run owner/repo@ref`) in one pass:
    100 KB names of separators and linter words, with and without the `@`, under a 10-second alarm (each took
    milliseconds; a rule that tried every split of the name would take minutes)."""
    import signal
    names = ["Run a/" + "black-" * 20000, "Run a/" + "black-" * 20000 + "@v1", "Run " + "a-" * 50000 + "/b@c",
             "Run a/" + "x." * 50000 + "ruff@v", "Run a/b@" + "lint " * 20000]
    alarm = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("a name took over 10 s to classify"))
    signal.alarm(10)
    try:
        assert [RepoConfig().classify(name, action=True) for name in names] == [
            "setup", "other", "setup", "other", "setup"]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, alarm)


@pytest.mark.parametrize("name,category", [
    ("Symlink test data and run tests", "test"), ("Link models and run benchmark", "test"),
    ("RCCL health check tests", "test"), ("Distributed health check after tests", "other"),
    ("GPU health check after tests", "other"), ("Symlink models and datasets", "setup"),
])
def test_the_fifth_surveys_setup_rules_leave_a_name_that_says_it_tests(name: str, category: str) -> None:
    """review144 w07: the symlink and health-check rules come before the test rules; a name that says it tests, or
    follows the tests, is not theirs."""
    assert RepoConfig().classify(name) == category
