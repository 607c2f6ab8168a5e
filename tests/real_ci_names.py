"""Real step names and runner labels of AMD GPU CI, surveyed from public workflow files.

Names only, as GitHub's jobs API shows them (no workflow text is copied). Each step is
`(name, is_action, category)`: `is_action` is True for a `uses:` step; GitHub names an
unnamed `uses:` step `Run <uses>` and an unnamed `run:` step `Run <first line>`. Categories:
setup (preparing the machine before the tests), test (running suites, benchmarks, evals),
other (results, reports, teardown, gating checks after the fact).

Labels are single entries of the API's `labels` field (for a `runs-on:` list, each entry).
`RUNS_ON` holds whole label lists of real jobs, with whether the job is an AMD GPU job.

Sources were read in the public-code index; a commit is the stored version that was read.
"""

from __future__ import annotations

from typing import NamedTuple

SETUP, TEST, OTHER = "setup", "test", "other"


class Project(NamedTuple):
    name: str
    sources: tuple[str, ...]  # repo path @commit (the version that was read)
    steps: tuple[tuple[str, bool, str], ...]
    amd_labels: tuple[str, ...]
    other_labels: tuple[str, ...]  # labels of the same projects that are not AMD GPUs


# Steps GitHub adds to a job itself: actions/runner src/Runner.Worker/JobExtension.cs
# (@0009633e: `Set up job`, `Initialize containers` for a job with `container:`/`services:`,
# `Pre <step>`, `Complete job`), ContainerOperationProvider.cs (`Stop containers`), ActionRunner.cs
# (`Post <step display name>`, so an unnamed checkout's is `Post Run actions/checkout@v4`).
# No `Set up runner` step was found in the runner's sources, so it is not listed.
# Post-steps are recorded as not-action names: they are not steps of the workflow file.
GITHUB_ADDED: tuple[tuple[str, bool, str], ...] = (
    ("Set up job", False, SETUP),
    ("Initialize containers", False, SETUP),
    ("Stop containers", False, SETUP),
    ("Complete job", False, SETUP),
    ("Post Run actions/checkout@v4", False, SETUP),
    ("Post Checkout code", False, SETUP),
)


# pytorch/pytorch: the ROCm test lanes (rocm, rocm-mi300, rocm-mi355, trunk/periodic/inductor-rocm)
# all call the reusable `_rocm-test.yml`; runs-on is `${{ matrix.runner }}` from the caller's matrix.
#   .github/workflows/_rocm-test.yml @015f6f7733b94a970f39e8979ea313860bffc20b (steps)
#   .github/workflows/rocm-mi300.yml @026a4bff72f5abcb65e99be800806198e021f9c3 (linux.rocm.gpu.mi300.2)
#   .github/workflows/rocm-mi355.yml @0657d244f5bde5f3f3cd916ff142d022f992832e (linux.rocm.gpu.gfx950.1)
#   .github/workflows/rocm.yml @0276f02cbdc0ad1b76f4a80adabee3cac567a10b (linux.rocm.gpu)
#   .claude/skills/test-cost/scripts/test_cost.py @f7ea82b04fd5d086b45bc90cb7474c50eac824ee: runner
#   labels as the jobs API's `labels` carries them (first non-`self-hosted` label), ROCm and not.
#   `mt-l-x86aavx2-29-113-a10g`: an AMD-CPU ("x86a") machine with an NVIDIA A10G, not an AMD GPU.
PYTORCH = Project(
    name="pytorch",
    sources=(
        "pytorch/pytorch .github/workflows/_rocm-test.yml @015f6f77",
        "pytorch/pytorch .github/workflows/rocm-mi300.yml @026a4bff",
        "pytorch/pytorch .github/workflows/rocm-mi355.yml @0657d244",
        "pytorch/pytorch .github/workflows/rocm.yml @0276f02c",
        "pytorch/pytorch .claude/skills/test-cost/scripts/test_cost.py @f7ea82b0",
    ),
    steps=(
        ("Checkout PyTorch", True, SETUP),
        ("Setup ROCm", True, SETUP),
        ("configure aws credentials", True, SETUP),
        ("Login to Amazon ECR", True, SETUP),
        ("Calculate docker image", True, SETUP),
        ("Pull docker image", True, SETUP),
        ("Get workflow job id", True, SETUP),
        ("Start monitoring script", False, SETUP),
        ("Download build artifacts", True, SETUP),
        ("Download TD artifacts", True, SETUP),
        ("Parse ref", False, SETUP),
        ("Check for keep-going label and re-enabled test issues", True, SETUP),
        ("Set Test step time", False, SETUP),
        ("Test", False, TEST),
        ("Save test results", False, OTHER),
        ("Change permissions (only needed for MI300 and MI355 kubernetes runners for now)", False, OTHER),
        ("Print remaining test logs", False, OTHER),
        ("Stop monitoring script", False, OTHER),
        ("Upload test artifacts", True, OTHER),
        ("Collect backtraces from coredumps (if any)", False, OTHER),
        ("Store Core dumps on GitHub", True, OTHER),
        # Credentials for the upload that follows; a credentials step, as `configure aws credentials`.
        ("Authenticate with AWS", True, SETUP),
        ("Upload the benchmark results", True, OTHER),
        ("Upload utilization stats", True, OTHER),
        ("Teardown ROCm", True, OTHER),
        # GitHub's post-steps of the actions above that have one
        ("Post Checkout PyTorch", False, SETUP),
        ("Post configure aws credentials", False, SETUP),
        ("Post Login to Amazon ECR", False, SETUP),
    ),
    amd_labels=(
        "linux.rocm.gpu",
        "linux.rocm.gpu.2",
        "linux.rocm.gpu.mi300.1",
        "linux.rocm.gpu.mi300.2",
        "linux.rocm.gpu.mi300.4",
        "linux.rocm.gpu.mi210.1",
        "linux.rocm.gpu.mi210.2",
        "linux.rocm.gpu.gfx942.1",
        "linux.rocm.gpu.gfx950.1",
        "linux.rocm.gpu.gfx950.2",
        "linux.rocm.gpu.gfx950.4",
        "linux.rocm.gpu.gfx950.1.test-control",
        "linux.rocm.gpu.gfx950.2-no-dind",
        "linux.rocm.gpu.gfx1100",
        "linux.rocm.gpu.rx7900.1",
        "amd-dpx-linux.rocm.gpu.gfx950.1",
        "amd-sandbox-linux.rocm.gpu.mi350.1",
    ),
    other_labels=(
        "self-hosted",
        "linux.2xlarge",
        "linux.24_04.4x",
        "linux.g5.4xlarge.nvidia.gpu",  # .github/workflows slow/periodic test matrices
        "linux.g5.48xlarge.nvidia.gpu",
        "linux.p5.48xlarge.nvidia.gpu",
        "linux.g6.4xlarge.experimental.nvidia.gpu",
        "linux.aws.h100",
        "linux.aws.a100",
        "linux.dgx.b200",
        "linux.dgx.b200.8",
        "mt-l-x86aavx2-29-113-a10g",
        "lf-l-x86aavx2-45-167-a10g-4",
        "mt-l-x86iamx-22-225-h100",
        "mt-l-x86iamx-88-900-h100-4",
        "lf-l-x86iavx512-16-128",
        "mt-l-arm64g4-16-62",
        "mt-l-barm64g4-94-344",
        "linux.arm64.m7g.4xlarge",
        "linux.idc.xpu",
        "linux.client.xpu",
        "linux.s390x",
        "linux.google.tpuv7x.1",
        "linux.hpu.gaudi",
        "macos-m1-stable",
        "macos-m2-15",
        "windows.4xlarge.nonephemeral",
        "mt-w-x86iavx512-16-64",
        "ubuntu-24.04",
    ),
)

# DeepSpeed: the AMD lanes run on `[self-hosted, amd, mi200]` (earlier `[self-hosted, amd, mi100]`,
# `[self-hosted, amd]`); the NVIDIA and Intel lanes of the same repository for the non-AMD labels.
#   deepspeedai/DeepSpeed .github/workflows/amd-mi200.yml @4cd6ee0019f94bee72dcfe7a068f77718d8a18d3
#   microsoft/DeepSpeed .github/workflows/amd-mi200.yml @05ca420ff916b8569acba6924a696c594330dce1
#   microsoft/DeepSpeed .github/workflows/amd-mi100.yml @03365187873a648f9292863117ac4ce1a6135fd7
#   microsoft/DeepSpeed .github/workflows/amd.yml @0b547eff508b358b911a6374464bc458c9e6f646
#   deepspeedai/DeepSpeed .github/workflows/nv-a6000.yml @ae70d39ab32e474900771cbdc7922c0df490051f
#   deepspeedai/DeepSpeed .github/workflows/xpu-max1100.yml @18294a2856e042d7e4e28d3af91e6e86e028e9c7
DEEPSPEED = Project(
    name="deepspeed",
    sources=(
        "deepspeedai/DeepSpeed .github/workflows/amd-mi200.yml @4cd6ee00",
        "microsoft/DeepSpeed .github/workflows/amd-mi200.yml @05ca420f",
        "microsoft/DeepSpeed .github/workflows/amd-mi100.yml @03365187",
        "microsoft/DeepSpeed .github/workflows/amd.yml @0b547eff",
        "deepspeedai/DeepSpeed .github/workflows/nv-a6000.yml @ae70d39a",
        "deepspeedai/DeepSpeed .github/workflows/xpu-max1100.yml @18294a28",
    ),
    steps=(
        ("Run actions/checkout@v4", True, SETUP),
        ("Run actions/checkout@v3", True, SETUP),
        ("Run actions/checkout@v2", True, SETUP),
        ("Run ./.github/workflows/setup-venv", True, SETUP),  # `id: setup-venv`, no name
        ("Install pytorch", False, SETUP),
        ("Install transformers", False, SETUP),
        ("Install (ROCm) apex", False, SETUP),
        ("Install apex", False, SETUP),
        ("Install deepspeed", False, SETUP),
        ("Python environment", False, SETUP),  # `pip list`
        ("environment", False, SETUP),  # rocm-smi, hipcc --version, apt-get install libaio-dev
        ("Unit tests", False, TEST),
        ("Open GitHub issue if nightly CI fails", True, OTHER),
        ("Post Run actions/checkout@v4", False, SETUP),
    ),
    amd_labels=("amd", "mi200", "mi100"),
    other_labels=("self-hosted", "nvidia", "a6000", "intel", "xpu"),
)

# ROCm/aiter: the operator tests, the Triton tests and the Flash Attention integration lane.
#   .github/workflows/aiter-test.yaml @92a906e25c3e888676f4188acedea5023dd01cb1
#   .github/workflows/aiter-test.yaml @009f5b638542510bdf945bddb29f555239b5ec5b (older: Setup-Triton)
#   .github/workflows/triton-test.yaml @3812e184f53b2d1e78320966fc74222dc2e5503e
#   .github/workflows/flash_attention_integration.yaml @73d953dbb066d103c491f953b38dfe4979f72301
#   .github/workflows/sglang_downstream.yaml @873aa3e465fc2656b06579b910737cfd55930323 (mi300x-1gpu)
#   .github/scripts/sglang_downstream.py @af0eb17df6b68b474dc029ee4b25800f8be47600 (linux-aiter-mi35x-8)
# `aiter-1gpu-runner` / `aiter-8gpu-runner` are MI325 machines (the matrix says `label: MI325`):
# nothing but "aiter" tells them apart from any runner.
AITER = Project(
    name="aiter",
    sources=(
        "ROCm/aiter .github/workflows/aiter-test.yaml @92a906e2",
        "ROCm/aiter .github/workflows/aiter-test.yaml @009f5b63",
        "ROCm/aiter .github/workflows/triton-test.yaml @3812e184",
        "ROCm/aiter .github/workflows/flash_attention_integration.yaml @73d953db",
        "ROCm/aiter .github/workflows/sglang_downstream.yaml @873aa3e4",
        "ROCm/aiter .github/scripts/sglang_downstream.py @af0eb17d",
        "ROCm/aiter .github/workflows/tuning-tests.yaml @16e3db40",
    ),
    steps=(
        ("Checkout code", True, SETUP),
        ("Sync submodules", False, SETUP),
        ("Sync CK submodule", False, SETUP),  # tuning-tests.yaml: `git submodule sync && git submodule update`
        ("Docker login", False, SETUP),
        # Before the tests; the same name also runs again at the end (`if: always()`).
        ("Clean up Rocm processes", False, SETUP),
        ("Run the container", False, SETUP),
        ("Update RCCL", False, SETUP),
        ("Setup pip config", False, SETUP),
        ("Setup Aiter", False, SETUP),
        ("Setup-Aiter", False, SETUP),
        ("Setup-Triton", False, SETUP),
        ("Tests", False, TEST),
        ("Collect test logs", False, OTHER),
        ("Upload test logs", True, OTHER),
        ("Cleanup container", False, OTHER),
        ("Download and check signal artifact", False, SETUP),  # ubuntu-latest gate job
        ("Install speedtest-cli and test network", False, SETUP),
        ("Setup Aiter and Triton", False, SETUP),
        ("Install Pytest", False, SETUP),
        ("Triton Test Selection Script", False, SETUP),  # picks the tests to run
        ("Triton Tests", False, TEST),
        ("Checkout aiter repo", True, SETUP),
        ("Pull base image", False, SETUP),
        ("Generate Dockerfile", False, SETUP),
        ("Show Dockerfile", False, SETUP),
        ("Build Docker image", False, SETUP),
        ("Start CI container", False, SETUP),
        ("Run correctness tests", False, TEST),
        ("Run benchmarks", False, TEST),
        ("Upload benchmark results", True, OTHER),
        ("Clean Up", False, OTHER),
        ("Clone sglang repo", False, SETUP),
        ("Build sglang_aiter_test image", False, SETUP),
        ("Install wget", False, SETUP),
        ("Install dependencies", False, SETUP),
        ("Evaluate Accuracy", False, TEST),
        ("Post Checkout code", False, SETUP),
    ),
    amd_labels=(
        "aiter-mi355-1gpu",
        "aiter-mi355-8gpu",
        "aiter-1gpu-runner",
        "aiter-8gpu-runner",
        "linux-aiter-mi355-1",
        "linux-aiter-mi35x-1",
        "linux-aiter-mi35x-8",
        "mi300x-1gpu",
    ),
    other_labels=("ubuntu-latest",),
)

# triton-lang/triton: the AMD integration tests run in a container (so GitHub adds `Initialize
# containers` and `Stop containers`) on `["self-hosted", "gfx90a"]`, `["amd-gfx942"]`, `["amd-gfx950"]`.
#   .github/workflows/integration-tests-amd.yml @d0cc5bace2f11a4195dfaf810440a2ce29d20923
#   .github/workflows/runner-preparation.yml @b1bfa1ad5bc77979c3402ce8055d05d04ffd81a5 (all matrices)
TRITON = Project(
    name="triton",
    sources=(
        "triton-lang/triton .github/workflows/integration-tests-amd.yml @d0cc5bac",
        "triton-lang/triton .github/workflows/runner-preparation.yml @b1bfa1ad",
    ),
    steps=(
        ("Initialize containers", False, SETUP),
        ("Checkout", True, SETUP),
        ("Compute cache keys", False, SETUP),
        ("Cache build dependencies", True, SETUP),
        # Before the build; the same name runs again after the tests (a `du` of the caches).
        ("Inspect cache directories", False, SETUP),
        ("Update compiler to clang", False, SETUP),
        ("Install Triton", False, SETUP),  # `make dev-install`: the build of the package under test
        ("CCache Stats", False, SETUP),
        ("Run lit tests", False, TEST),
        ("Run C++ unittests", False, TEST),
        ("Run python tests on AMD", False, TEST),
        ("Run distributed tests", False, TEST),
        ("Run asan tests on AMD", False, TEST),
        ("Run regression tests", False, TEST),
        ("Run microbenchmark tests", False, TEST),
        ("Run Proton tests", False, TEST),
        ("Clean up caches", False, OTHER),
        ("Post Cache build dependencies", False, SETUP),
        ("Post Checkout", False, SETUP),
        ("Stop containers", False, SETUP),
    ),
    amd_labels=("gfx90a", "amd-gfx942", "amd-gfx950"),
    other_labels=("self-hosted", "nvidia-a100", "nvidia-h100", "nvidia-gb200", "macos-latest", "ubuntu-latest"),
)

# JAX: the ROCm post-merge check upstream and the ROCm fork's CI; runner list from actionlint.yaml.
#   jax-ml/jax .github/workflows/rocm-ci.yml @055a88344ffe252fd8d57d5470c3201493aeb5b8
#   ROCm/jax .github/workflows/rocm-ci.yml @00156e65b0902032dd993df38888b7f1b5cc0afc (runs-on: mi-250)
#   jax-ml/jax .github/actionlint.yaml @1082251cde876f91608b403d1995b5e0025f0398 (self-hosted labels)
JAX = Project(
    name="jax",
    sources=(
        "jax-ml/jax .github/workflows/rocm-ci.yml @055a8834",
        "ROCm/jax .github/workflows/rocm-ci.yml @00156e65",
        "jax-ml/jax .github/actionlint.yaml @1082251c",
    ),
    steps=(
        ("Clean up old runs", False, SETUP),  # removes the previous runs' work directories first
        ("Print system info", False, SETUP),  # rocm-smi
        ("Run actions/checkout@1af3b93b6815bc44a9784bd300feb67ff0d1eeb3", True, SETUP),
        ("Run actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", True, SETUP),
        ("Build JAX", False, SETUP),  # builds the wheels and the test image the tests run in
        ("Archive jax wheels", True, OTHER),  # actions/upload-artifact
        ("Run tests", False, TEST),
        ("Post Run actions/checkout@1af3b93b6815bc44a9784bd300feb67ff0d1eeb3", False, SETUP),
    ),
    amd_labels=("linux-x86_64-cirrascale-64-8gpu-amd-mi250", "mi-250"),
    other_labels=(
        "linux-x86-n4-16",
        "linux-x86-g2-16-l4-1gpu",
        "linux-x86-g2-48-l4-4gpu",
        "linux-x86-a4-224-b200-1gpu",
        "linux-x86-a3-8g-h100-8gpu",
        "linux-x86-ct5lp-224-8tpu",
        "linux-x86-tpu7x-224-4tpu",
        "linux-arm64-c4a-64",
        "windows-x86-n2-16",
    ),
)

# ROCm/TransformerEngine: one build-and-test job per MI325 / MI355 runner.
#   .github/workflows/rocm-ci.yml @01fa0d5d4e9f84e639e4ff0b8ee2da0a325f560b
TRANSFORMER_ENGINE = Project(
    name="transformer-engine",
    sources=("ROCm/TransformerEngine .github/workflows/rocm-ci.yml @01fa0d5d",),
    steps=(
        ("Checkout repository", True, SETUP),
        ("Host Diagnostics & Environment Setup", False, SETUP),
        ("Select Docker Image Tag", False, SETUP),
        ("Pull Docker Image", False, SETUP),
        ("Run Container", False, SETUP),
        ("Container Diagnostics & GPU Setup", False, SETUP),
        ("Build Project", False, SETUP),
        ("Run sGPU tests", False, TEST),
        ("Run mGPU tests", False, TEST),
        ("Run Examples", False, TEST),  # the MNIST / encoder examples, each with --use-te / --use-fp8
        ("Check Test Failure Status", False, OTHER),
        ("Copy logs and reports from container", False, OTHER),
        ("Upload logs and test reports", True, OTHER),
        ("Cleanup container", False, OTHER),
        ("Post Checkout repository", False, SETUP),
    ),
    amd_labels=("linux-mi325-8", "linux-mi355-8"),
    other_labels=(),
)

# huggingface/optimum-benchmark: ROCm lanes on `[single-gpu, amd-gpu, mi250, ci]` and
# `hf-amd-mi210-dev`; its `Run tests` is an action step (addnab/docker-run-action) that is a test.
#   .github/workflows/test_cli_rocm_pytorch_single_gpu.yaml @02b0c40c69ba2c3295bbc675d87ee44b294f2bee
#   .github/workflows/test_cli_rocm_pytorch_multi_gpu.yaml @066485d4ad91e05c6c86f02959d95fa64125dcf2
#   .github/workflows/test_rocm_pytorch.yaml @0009e25bf66c0eeb07e8459460109ec5b3be7647
#   .github/workflows/test_cli_cuda_pytorch_single_gpu.yaml @01a9ef6cca74ad979a0a56337c06efa8695e4116
OPTIMUM_BENCHMARK = Project(
    name="optimum-benchmark",
    sources=(
        "huggingface/optimum-benchmark .github/workflows/test_cli_rocm_pytorch_single_gpu.yaml @02b0c40c",
        "huggingface/optimum-benchmark .github/workflows/test_cli_rocm_pytorch_multi_gpu.yaml @066485d4",
        "huggingface/optimum-benchmark .github/workflows/test_rocm_pytorch.yaml @0009e25b",
        "huggingface/optimum-benchmark .github/workflows/test_cli_cuda_pytorch_single_gpu.yaml @01a9ef6c",
    ),
    steps=(
        ("Restore files ownership", False, SETUP),  # chown of the workspace left by the last run
        ("Checkout", True, SETUP),
        ("Checkout code", True, SETUP),
        ("Target devices", False, SETUP),  # exports the runner's GPU to $GITHUB_ENV
        ("Set target devices", False, SETUP),
        ("Set docker image", False, SETUP),
        ("Build image", False, SETUP),
        ("Run tests", True, TEST),  # uses: addnab/docker-run-action@v3 (pip install + pytest)
        ("Run tests", False, TEST),  # test_rocm_pytorch.yaml: `docker run ... pytest`
        ("Post Checkout code", False, SETUP),
    ),
    amd_labels=("amd-gpu", "mi250", "hf-amd-mi210-dev"),
    other_labels=("single-gpu", "multi-gpu", "ci", "nvidia-gpu", "a10"),
)

# huggingface/transformers: the scheduled AMD lane, `[self-hosted, docker-gpu, amd-gpu, <machine>, <flavor>]`
# in the image's container, one job per model folder (`Echo folder ...`); the tests' reports are
# uploaded by an action step whose name starts "Test suite reports artifacts".
#   .github/workflows/self-scheduled-amd.yml @06b0ba1daf2138f432a096b9f5aabe1972a50521
TRANSFORMERS = Project(
    name="transformers",
    sources=("huggingface/transformers .github/workflows/self-scheduled-amd.yml @06b0ba1d",),
    steps=(
        ("Checkout transformers", True, SETUP),
        ("Update clone", False, SETUP),  # git fetch && git checkout of the commit
        ("Reinstall transformers in edit mode (remove the one installed during docker image build)", False, SETUP),
        ("ROCM-SMI", False, SETUP),  # rocm-smi: the machine, printed before the tests
        ("Show HIP environment", False, SETUP),
        ("Environment", False, SETUP),
        ("Show installed libraries and their versions", False, SETUP),
        ("Run all tests on GPU", False, TEST),
        ("Run examples tests on GPU", False, TEST),
        ("Run all pipeline tests on GPU", False, TEST),
        ("Failure short reports", False, OTHER),  # cat of the reports, if: failure()
        ("Test suite reports artifacts: single-gpu_run_all_tests_gpu_models_bert_test_reports", True, OTHER),
        ("Send message to Slack", False, OTHER),
    ),
    amd_labels=("amd-gpu",),
    other_labels=("ubuntu-22.04",),
)

# The steps of a called (reusable) workflow are listed as foldbot reads them from its caller's runs:
# `is_action` False, since the caller's file has no steps (so no `uses:`) to tell it otherwise; where a
# step is an action in the called file, it is listed as one as well when its class would differ.

# pytorch/ao: the ROCm regression lane calls pytorch/test-infra's linux_job_v2.yml, whose `Run script in
# container` runs the caller's `script:` (pip installs, then two hours of pytest); `Surface failing tests`
# (pmeier/pytest-results-action, `if: always()`) and the chown/upload/teardown steps come after it.
#   pytorch/ao .github/workflows/regression_test_rocm.yml @0742d7b4ebc2ee36ab238dd667deef284d2d7a40
#   pytorch/test-infra .github/workflows/linux_job_v2.yml @069d415d5dbcbf592a277124cbc1e16c10a0dc91 (steps)
PYTORCH_AO = Project(
    name="pytorch-ao",
    sources=(
        "pytorch/ao .github/workflows/regression_test_rocm.yml @0742d7b4",
        "pytorch/test-infra .github/workflows/linux_job_v2.yml @069d415d",
    ),
    steps=(
        ("Clean workspace", False, SETUP),
        ("Checkout repository (pytorch/test-infra@)", False, SETUP),
        ("Setup Linux", False, SETUP),
        ("Setup ROCM", False, SETUP),
        ("Setup SSH", False, SETUP),
        ("Checkout repository (pytorch/ao@)", False, SETUP),
        ("Calculate docker image", False, SETUP),
        ("Pull docker image", False, SETUP),
        ("Check if in a container runner", False, SETUP),
        ("Setup SCCACHE_SERVER_PORT environment for docker run when on container", False, SETUP),
        ("Download artifacts (if any)", False, SETUP),
        ("Export matrix variables (if any)", False, SETUP),
        ("Run script in container", False, TEST),
        ("Run script outside container", False, TEST),
        ("Surface failing tests", False, OTHER),
        ("Surface failing tests", True, OTHER),
        # Credentials for the uploads that follow; credentials steps, as pytorch's own.
        ("configure aws credentials", False, SETUP),
        ("Login to Amazon ECR", False, SETUP),
        ("Chown repository directory", False, OTHER),
        ("Chown runner temp", False, OTHER),
        ("Prepare artifacts for upload", False, OTHER),
        ("Upload artifacts to GitHub (if any)", False, OTHER),
        ("Upload artifacts to S3 (if any)", False, OTHER),
        ("Upload documentation to S3 (if any)", False, OTHER),
        ("Teardown Linux", False, OTHER),
        ("Clean workspace after tear down", False, OTHER),
        ("Post Checkout repository (pytorch/ao@)", False, SETUP),
    ),
    amd_labels=("linux.rocm.gpu.ecosystem.mi350.1",),
    other_labels=(),
)

# ROCm/TheRock: Test Artifacts calls test_component.yml per component and shard; the component's tests are
# the one `Test` step. The Quartz steps notify a dashboard (`if: always()` at the end), `Print test
# reproduction command` runs only after a failed `Test`: neither is a test. Runners from its CI configuration.
#   ROCm/TheRock .github/workflows/test_artifacts.yml @039a8c9891548339e20c27618fc4fc1a5fcbb055
#   ROCm/TheRock .github/workflows/test_component.yml @00635602e7485b9aa39abf81f0dcc35d3a7d5e07 (steps)
THEROCK = Project(
    name="therock",
    sources=(
        "ROCm/TheRock .github/workflows/test_artifacts.yml @039a8c98",
        "ROCm/TheRock .github/workflows/test_component.yml @00635602",
    ),
    steps=(
        ("Checking out repository", True, SETUP),  # test_artifacts.yml's own (ubuntu-24.04) job
        ("Configuring CI options", False, SETUP),
        ("Quartz - started - test ROCm component", False, OTHER),
        ("Quartz - started - test ROCm component", True, OTHER),
        ("Fetch 'build_tools' from repository", False, SETUP),
        ("Pre-job cleanup processes on Windows", False, SETUP),
        ("Pre-job cleanup GPU processes on Linux", False, SETUP),
        ("Checking repository", False, SETUP),
        ("Run setup test environment workflow", False, SETUP),
        ("Adjust git config", False, SETUP),
        ("Runner health status", False, SETUP),
        ("Driver / GPU sanity check", False, SETUP),
        ("Setup Additional Requirements", False, SETUP),
        ("Enable sanitizer-specific test flags", False, SETUP),
        ("Set thread limits", False, SETUP),
        ("Test", False, TEST),
        ("Print test reproduction command", False, OTHER),
        ("Post-job cleanup GPU processes on Linux", False, OTHER),
        ("Post-job cleanup processes on Windows", False, OTHER),
        ("Capture job summary", False, OTHER),
        ("Quartz - completed - test ROCm component", False, OTHER),
        ("Quartz - completed - test ROCm component", True, OTHER),
        ("Post Checking repository", False, SETUP),
    ),
    amd_labels=("linux-mi325-1gpu-ossci-rocm", "linux-mi325-1gpu-ossci-rocm-frac", "linux-mi325-8gpu-ossci-rocm",
                "linux-gfx110X-gpu-rocm"),
    other_labels=("ubuntu-24.04",),
)

# ROCm/flash-attention: the Triton backend's MI300 job builds Triton, runs the tests, then the benchmarks
# (`AMD Bench`, `AMD Bench with Autotune`: most of its GPU time); the nightly runs more of them.
#   ROCm/flash-attention .github/workflows/amd_tests.yml @0c542260d1226a9af103f8bf16cc0a910c08b034
#   ROCm/flash-attention .github/workflows/amd_nightly.yml @23e1383c
FLASH_ATTENTION = Project(
    name="flash-attention",
    sources=(
        "ROCm/flash-attention .github/workflows/amd_tests.yml @0c542260",
        "ROCm/flash-attention .github/workflows/amd_nightly.yml @23e1383c",
    ),
    steps=(
        ("Checkout", True, SETUP),
        ("Show Device Info", False, SETUP),
        ("Uninstall Triton", False, SETUP),
        ("Install Triton", False, SETUP),
        ("Show Triton version", False, SETUP),
        ("Build", False, SETUP),
        ("Flash Attention CDNA Tests", False, TEST),
        ("AMD Tests", False, TEST),
        ("AMD Bench", False, TEST),
        ("AMD Bench with Autotune", False, TEST),
        ("Flash Attention Tests Using Reference Impl", False, TEST),
        ("Flash Attention RDNA Tests", False, TEST),
        ("Install dependencies for bench and misc", False, SETUP),
        ("AMD Internal Tests", False, TEST),
        ("Flash Attention Tests", False, TEST),
    ),
    amd_labels=("linux-mi300-gpu-1",),
    other_labels=(),
)

# facebookresearch/xformers: ROCM_CI builds and tests in a ROCm container on `runs-on: self-hosted`
# (an AMD GPU machine that no label names; `amd_runner_pattern` cannot tell it, and the report says so).
#   facebookresearch/xformers .github/workflows/rocm_ci.yml @0d1d1bef2f79d9605d7160445e511d57b5dcba80
XFORMERS = Project(
    name="xformers",
    sources=("facebookresearch/xformers .github/workflows/rocm_ci.yml @0d1d1bef",),
    steps=(
        ("Run actions/checkout@v4", True, SETUP),
        ("Get CPU info on Ubuntu", False, SETUP),
        ("Get env vars", False, SETUP),
        ("Setup build env", False, SETUP),
        ("Pre-build clean", False, SETUP),
        ("Build xformers", False, SETUP),
        ("Run python tests", False, TEST),
        ("Archive logs", True, OTHER),
        ("Post-build clean", False, OTHER),
        ("Remove dangling Docker images", False, OTHER),  # the `clean` job, after `build`
    ),
    amd_labels=(),
    other_labels=("self-hosted", "Linux", "X64"),
)

# microsoft/onnxruntime: Linux CI's build-and-test jobs call reusable_linux_build.yml on 1ES pools of AMD
# (EPYC) or ARM CPUs: no GPU, so no AMD GPU runner, though the pool's name says AMD.
#   microsoft/onnxruntime .github/workflows/linux_ci.yml @053d6e9e0285caa6c7b621023dbd772f32c9c99c
#   microsoft/onnxruntime .github/workflows/reusable_linux_build.yml @08c0eda5 (steps; runs-on:
#   [self-hosted, "1ES.Pool=${{ inputs.pool_name }}"])
#   microsoft/onnxruntime .github/workflows/linux_cuda_ci.yml @0140b603
ONNXRUNTIME = Project(
    name="onnxruntime",
    sources=(
        "microsoft/onnxruntime .github/workflows/linux_ci.yml @053d6e9e",
        "microsoft/onnxruntime .github/workflows/reusable_linux_build.yml @08c0eda5",
        "microsoft/onnxruntime .github/workflows/linux_cuda_ci.yml @0140b603",
    ),
    steps=(
        ("Checkout code", False, SETUP),
        ("Set up Python 3.x", False, SETUP),
        ("Build Docker Image (x64 / Release)", False, SETUP),
        ("Export GitHub Actions cache environment variables", False, SETUP),
        ("Generate Build Files (CMake) (x64 / Release)", False, SETUP),
        ("Generate Build Files (CMake) (x64 / Release)", True, SETUP),
        ("Build ONNX Runtime (x64 / Release)", False, SETUP),
        ("Test ONNX Runtime (x64 / Release)", False, TEST),
        ("Prepare Build Output for Upload", False, OTHER),
        ("Upload Build Output Artifact", False, OTHER),
        ("Upload VCPKG Manifest Install Log on Update or Build Failure", False, OTHER),
        ("Run microsoft/onnxruntime-github-actions/build-docker-image@v0.0.5", True, SETUP),
        ("Download Build Artifact", True, SETUP),
        ("Restore Executable Permissions", False, SETUP),
        ("Test ONNX Runtime", True, TEST),
    ),
    amd_labels=(),
    other_labels=("1ES.Pool=onnxruntime-github-Ubuntu2204-AMD-CPU", "1ES.Pool=onnxruntime-github-Ubuntu2204-ARM-CPU"),
)

# iree-org/iree: the MI325 package tests and the regression suite's model tests and benchmarks.
#   iree-org/iree .github/workflows/pkgci_test_amd_mi325.yml @031445e2
#   iree-org/iree .github/workflows/pkgci_regression_test.yml @434d21aaf27844e39c03e7c86fd0a8b71b6c1327
#   iree-org/iree .github/workflows/pkgci_regression_test_amdgpu_vulkan.yml @07d65086916b759c1ca7fe4c134bf0090b9b1362
#   (its step names are gerunds; the XFAIL update and the upload run after the tests, `if: failure()`)
#   (runs-on: nodai-amdgpu-mi250-x86-64, nodai-amdgpu-mi300-x86-64); linux-mi325-1gpu-ossci-iree-org from
#   the project's runner reports
IREE = Project(
    name="iree",
    sources=(
        "iree-org/iree .github/workflows/pkgci_test_amd_mi325.yml @031445e2",
        "iree-org/iree .github/workflows/pkgci_regression_test.yml @434d21aa",
        "iree-org/iree .github/workflows/pkgci_regression_test_amdgpu_vulkan.yml @07d65086",
    ),
    steps=(
        ("Run rocminfo", False, SETUP),
        ("Check out repository", True, SETUP),
        ("Check out runtime submodules", False, SETUP),
        ("Run actions/setup-python@83679a892e2d95755f2dac6acb0bfd1e9ac5d548", True, SETUP),
        ("Run actions/download-artifact@018cc2cf5baa6db3ef3c5f8a56943fffe632ef53", True, SETUP),
        ("Setup base venv", False, SETUP),
        ("Build tests", False, SETUP),  # builds the test binaries
        ("Run GPU tests", False, TEST),
        ("Checking out IREE repository", True, SETUP),
        ("Setup venv", False, SETUP),
        ("Check out external TestSuite repository", True, SETUP),
        ("Install external TestSuite Python requirements", False, SETUP),
        ("Download remote files for real weight model tests", False, SETUP),
        ("Run external tests - models with real weights", False, TEST),
        ("Running SDXL special model tests", False, TEST),
        ("Running SD3 special model tests", False, TEST),
        ("Running SDXL rocm pipeline benchmark (mi250)", False, TEST),
        ("Running SDXL rocm pipeline benchmark (mi300)", False, TEST),
        ("Checking out external TestSuite repository", True, SETUP),
        ("Installing external TestSuite Python requirements", False, SETUP),
        ("Run external tests - ONNX test suite", False, TEST),
        ("Updating config file with latest XFAIL lists", False, OTHER),
        ("Uploading new config file", True, OTHER),
    ),
    amd_labels=("linux-mi325-1gpu-ossci-iree-org", "nodai-amdgpu-mi250-x86-64", "nodai-amdgpu-mi300-x86-64"),
    other_labels=(),
)

# ROCm/rocm-libraries: MIOpen's build-only jobs run in a container on `azure-linux-scale-rocm`, the ROCm
# organisation's elastic CPU build pool (TheRock's runner tables: "Build-only (VMs)", "no GPU"; its siblings
# `azure-linux-scale-rocm-heavy-ramdisk`, `azure-windows-scale-rocm`, `aws-linux-scale-rocm-prod`,
# `aws-linux-scale-rocm-large` in TheRock's build-runner selection); the label says ROCm, the machine has no GPU.
# hipBLASLt's JIT CI runs on GPU runners chosen from TheRock's family matrix (`fromJSON` matrix).
#   ROCm/rocm-libraries .github/workflows/miopen-ci.yml @06784a8d607f45b2cdca70750daa16c478bd3c75
#   ROCm/rocm-libraries .github/workflows/component-ci-miopen.yml @0515a2f285fb4e84c7ab8d2dffadf645225501d0
#   ROCm/rocm-libraries .github/workflows/hipblaslt-jit-gemm-ci.yml @022806cec20b45eb80365ec82e182f1783395c09
ROCM_LIBRARIES = Project(
    name="rocm-libraries",
    sources=(
        "ROCm/rocm-libraries .github/workflows/miopen-ci.yml @06784a8d",
        "ROCm/rocm-libraries .github/workflows/component-ci-miopen.yml @0515a2f2",
        "ROCm/rocm-libraries .github/workflows/hipblaslt-jit-gemm-ci.yml @022806ce",
    ),
    steps=(
        ("Runner health status", False, SETUP),
        ("Checkout repository", True, SETUP),
        ("Configure build", False, SETUP),
        ("Build", False, SETUP),
        ("Build MIOpen", False, SETUP),
        ("Configure Tuna Fin", False, SETUP),
        ("Build Tuna Fin", False, SETUP),
        ("Pull DVC files for rocm-libraries", False, SETUP),
        ("Checkout rocjitsu", True, SETUP),
        ("Build rocjitsu KMD", False, SETUP),
        ("Report results", False, OTHER),  # the summary job on ubuntu-24.04
        ("Select native GPU runners from the shared CI map", False, SETUP),
        ("Checkout source under test", True, SETUP),
        ("Checkout shared SDK installer and GPU cleanup", True, SETUP),
        ("Clean stale GPU processes", False, SETUP),  # before the tests (the same script runs after them)
        ("Set paths inside the container", False, SETUP),
        ("Install build dependencies", False, SETUP),
        ("Install only SDK dependency artifacts", False, SETUP),
        ("Build checkout with JIT enabled", False, SETUP),
        ("Execute direct and generic public C/C++ GEMM regressions", False, TEST),
        ("Upload logs and generated bundle evidence", True, OTHER),
        ("Clean GPU processes", False, OTHER),  # `if: always()`, after the tests
    ),
    amd_labels=("linux-gfx942-1gpu-ossci-rocm", "linux-gfx950-1gpu-ccs-ossci-rocm", "linux-mi355-1gpu-ossci-rocm"),
    other_labels=("azure-linux-scale-rocm", "azure-linux-scale-rocm-heavy-ramdisk", "azure-windows-scale-rocm",
                  "aws-linux-scale-rocm-prod", "aws-linux-scale-rocm-large", "ubuntu-24.04"),
)

# ROCm/Megatron-LM: the CI builds its Docker image on the MI325 runner, then runs the unit tests and the
# benchmarks in it; after the benchmarks, `if: always()` steps show, convert and publish their report.
#   ROCm/Megatron-LM .github/workflows/megatron-ci.yml @015290ee9417e9ed318df0c21d410e173d92997e
MEGATRON_LM = Project(
    name="megatron-lm",
    sources=("ROCm/Megatron-LM .github/workflows/megatron-ci.yml @015290ee",),
    steps=(
        ("Checkout repository", True, SETUP),
        ("Print environment", False, SETUP),
        ("ROCm diagnostics (host)", False, SETUP),
        ("Determine GPU architecture via rocminfo", False, SETUP),
        ("Resolve TransformerEngine commit for branch", False, SETUP),
        ("Login to Docker Hub", True, SETUP),
        ("Set up Docker Buildx", True, SETUP),
        ("Build and push Docker image with registry cache", True, SETUP),
        ("Pull Docker image", False, SETUP),
        ("Run unit tests in container", False, TEST),
        ("Publish test report", True, OTHER),
        ("List test reports", False, OTHER),
        ("Upload test artifacts", True, OTHER),
        ("Cleanup Docker image", False, OTHER),
        ("Run benchmarks and generate performance report", False, TEST),
        ("Display benchmark report", False, OTHER),  # `cat` of the report, `if: always()`: runs when the benchmarks did not
        ("Generate benchmark report markdown", False, OTHER),
        ("Publish benchmark report to Job Summary", False, OTHER),
        ("Publish benchmark report as Check Run", True, OTHER),
        ("Upload benchmark artifacts", True, OTHER),
    ),
    amd_labels=("linux-megatron-mi325-8",),
    other_labels=(),
)

# NVIDIA's and RAPIDS' self-hosted runners: `amd64` is the CPU architecture, not an AMD GPU.
#   nv-gha-runners/docs docs/runners/index.md @2dcd51b4c3f46f350483e4c820027593c462a260
#   rapidsai/docs resources/github-actions.md @144cdcd73674dfea8262cc6efff8f8af1ab72598 ([linux, amd64, cpu4])
AMD64_NOT_AMD_GPU = (
    "linux-amd64-cpu4",
    "linux-amd64-cpu8",
    "linux-amd64-cpu16",
    "linux-amd64-gpu-v100-latest-1",
    "linux-amd64-gpu-v100-earliest-1",
    "linux-amd64-gpu-t4-latest-1",
    "linux-arm64-gpu-a100-latest-1",
    "amd64",
    "linux",
    "cpu4",
)

# SGLang's AMD lanes: every distinct step of the fixtures below (tests/paths.py SGLANG), read with
# bot.workflow (tests/test_real_ci_names.py checks that this list still covers them all).
#   /work/shared/fixtures/sglang/workflows/{pr-test-amd-rocm720,pr-test-amd,nightly-test-amd,
#   nightly-test-amd-rocm720,nightly-test-amd-miles-rocm720}.yml
#   (sgl-project/sglang @d315eb725044e435b146c85488b7c6d9222f7fec, see SOURCES.txt there)
# Decided: the `check-changes` / `*-finish` jobs run on ubuntu-latest; their gating steps (`Determine run
# mode`, `Detect file changes`, `Run ./.github/actions/wait-for-jobs`) are setup, their verdicts
# (`Check all dependent job statuses`) other. `Test RCCL multi-GPU communication` and `Verify ... in
# Container` are sanity checks inside the started container: other, as tests/test_timing.py pins them.
# `Check Host RDMA Environment` probes the host and exports the RDMA device for the tests: setup.
SGLANG_STEPS: tuple[tuple[str, bool, str], ...] = (
    ("Checkout code", True, SETUP),
    ("Determine run mode", False, SETUP),
    ("Set continue-on-error for schedule/full runs", False, SETUP),
    ("Detect file changes", True, SETUP),
    ("Ensure VRAM is clear", False, SETUP),
    ("Start CI container", False, SETUP),
    ("Install dependencies", False, SETUP),
    ("Run test", False, TEST),
    ("Run JIT kernel unit tests", False, TEST),
    ("Run JIT kernel benchmarks", False, TEST),
    ("Run actions/checkout@v4", True, SETUP),
    ("Run ./.github/actions/wait-for-jobs", True, SETUP),
    ("Download artifacts", True, SETUP),
    ("Setup kernel caches", False, SETUP),
    ("Diagnose HF cache and system resources", False, SETUP),
    ("Run diffusion server tests (1-GPU)", False, TEST),
    ("Run diffusion unit tests", False, TEST),
    ("Upload diffusion failure artifacts", True, OTHER),
    ("Run diffusion server tests (2-GPU)", False, TEST),
    ("Test RCCL multi-GPU communication", False, OTHER),
    ("Setup docker (ROCm 7.2)", False, SETUP),
    ("Check Host RDMA Environment", False, SETUP),
    ("Start Special Container", False, SETUP),
    ("Verify NIXL in Container", False, OTHER),
    ("Verify RDMA in Container", False, OTHER),
    ("Run Aiter Op Test (RMSNorm)", False, TEST),
    ("Run test_disaggregation", False, TEST),
    ("Check all dependent job statuses", False, OTHER),
    ("Login to Docker Hub (AMD)", True, SETUP),
    ("Resolve newest miles ROCm 7.2 image", False, SETUP),
    ("Start container from the miles image", False, SETUP),
    ("Run miles CI suite ${{ matrix.suite }}", False, TEST),
    ("Nightly Unit Test ROCm 7.2 (1-GPU)", False, TEST),
    ("Nightly Kernel Benchmark ROCm 7.2 (1-GPU)", False, TEST),
    ("Nightly Test MI35x ROCm 7.2 (1-GPU)", False, TEST),
    ("Nightly Test ROCm 7.2 (2-GPU)", False, TEST),
    ("Nightly Accuracy Test ROCm 7.2 (2-GPU VLM MMMU)", False, TEST),
    ("Nightly Test ROCm 7.2 (4-GPU)", False, TEST),
    ("DeepSeek-V3 KV FP8 Test ROCm 7.2 (8-GPU Basic + MTP)", False, TEST),
    ("Z-Image-Turbo Diffusion Test ROCm 7.2 (1-GPU)", False, TEST),
    ("Upload generated images", True, OTHER),
    ("Check if any job failed", False, OTHER),
    ("Setup docker", False, SETUP),
    ("Nightly Unit Test (1-GPU)", False, TEST),
    ("Nightly Kernel Benchmark (1-GPU)", False, TEST),
    ("Nightly Test MI35x (1-GPU)", False, TEST),
    ("Nightly Test (2-GPU)", False, TEST),
    ("Nightly Accuracy Test (2-GPU VLM MMMU)", False, TEST),
    ("Nightly Test (4-GPU)", False, TEST),
    ("DeepSeek-V3 KV FP8 Test (8-GPU Basic + MTP)", False, TEST),
    ("Setup docker (ROCm 7.0)", False, SETUP),
    ("Z-Image-Turbo Diffusion Test (1-GPU)", False, TEST),
    # The nightly model lanes: one accuracy / performance step per model and machine.
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Flash FP4 + FP8)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro FP4)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (2-GPU GLM-5.1-MXFP4 GSM8K)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (2-GPU DeepSeek-R1-MXFP4 TP2)", False, TEST),
    ("Performance Test ROCm 7.2 (2-GPU Text Models)", False, TEST),
    ("Performance Test ROCm 7.2 (2-GPU VLM Models)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU GPT-OSS)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU GPT-OSS)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU GPT-OSS)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU GPT-OSS)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU Grok1-INT4)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU Grok1-INT4)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU Grok1-INT4)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU Grok1-INT4)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU Grok2)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU Grok2)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU Grok2)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU Grok2)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU DeepSeek-V3.1)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU DeepSeek-V3.1)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-V3.2)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-V3.2 TP+MTP)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (DeepSeek-R1-MXFP4 TP4)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (DeepSeek-R1-MXFP4 TP4 MTP)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4 KV FP8)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4 KV FP8)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4 AllReduce Fusion)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1-MXFP4 AllReduce Fusion)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU DeepSeek-R1 HiCache)", False, TEST),
    ("Accuracy + Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Flash FP8 + FP4, unified_kv_triton)", False, TEST),
    ("Accuracy + Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Flash FP8 + FP4, triton)", False, TEST),
    ("Accuracy + Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro FP8 + FP4, unified_kv_triton)", False, TEST),
    ("Accuracy + Performance Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro FP8 + FP4, triton)", False, TEST),
    ("Accuracy + MTP Accept Length Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro FP8 MTP, unified_kv_triton)", False, TEST),
    ("Accuracy + MTP Accept Length Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro FP8 MTP, triton)", False, TEST),
    ("Accuracy + DSpark Accept Length Test MI35x ROCm 7.2 (8-GPU DeepSeek-V4-Pro-DSpark FP4, unified_kv_triton)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU Kimi-K2.6)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU Kimi-K3)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU Kimi-K3)", False, TEST),
    ("Accuracy Test + Performance Test ROCm 7.2 (8-GPU Qwen3)", False, TEST),
    ("Accuracy Test + Performance Test MI35x ROCm 7.2 (8-GPU Qwen3-235B-MXFP4)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU Qwen 3.5)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU Qwen 3.5 FP8)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU Qwen 3.5)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU Qwen 3.5 FP8)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU Qwen 3.5 Triton DCP)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU GLM-5.1 DSA)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU GLM-5.1)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU GLM-5.2-FP8 DSA)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU GLM-5.2-FP8)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (8-GPU GLM-5-MXFP4)", False, TEST),
    ("Performance Test MI35x ROCm 7.2 (8-GPU GLM-5-MXFP4)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (4-GPU MiniMax-M2.5)", False, TEST),
    ("Accuracy Test MI35x ROCm 7.2 (4-GPU MiniMax-M3 MXFP8)", False, TEST),
    ("Accuracy Test ROCm 7.2 (8-GPU MiniMax-M2.7)", False, TEST),
    ("Performance Test ROCm 7.2 (8-GPU MiniMax-M2.7)", False, TEST),
    ("Accuracy Test MI35x (2-GPU GLM-5.1-MXFP4 GSM8K)", False, TEST),
    ("Accuracy Test MI35x (2-GPU DeepSeek-R1-MXFP4 TP2)", False, TEST),
    ("Performance Test (2-GPU Text Models)", False, TEST),
    ("Performance Test (2-GPU VLM Models)", False, TEST),
    ("Accuracy Test (8-GPU GPT-OSS)", False, TEST),
    ("Accuracy Test MI35x (8-GPU GPT-OSS)", False, TEST),
    ("Accuracy Test (8-GPU Grok1-INT4)", False, TEST),
    ("Performance Test (8-GPU Grok1-INT4)", False, TEST),
    ("Accuracy Test MI35x (8-GPU Grok1-INT4)", False, TEST),
    ("Performance Test MI35x (8-GPU Grok1-INT4)", False, TEST),
    ("Accuracy Test (8-GPU Grok2)", False, TEST),
    ("Performance Test (8-GPU Grok2)", False, TEST),
    ("Accuracy Test MI35x (8-GPU Grok2)", False, TEST),
    ("Performance Test MI35x (8-GPU Grok2)", False, TEST),
    ("Accuracy Test (8-GPU DeepSeek-V3.1)", False, TEST),
    ("Performance Test (8-GPU DeepSeek-V3.1)", False, TEST),
    ("Accuracy Test (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Performance Test (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Accuracy Test (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Performance Test (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-V3.2)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-V3.2 TP+MTP)", False, TEST),
    ("Performance Test MI35x (8-GPU DeepSeek-V3.2 Basic)", False, TEST),
    ("Performance Test MI35x (8-GPU DeepSeek-V3.2 MTP)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-R1-MXFP4)", False, TEST),
    ("Performance Test MI35x (8-GPU DeepSeek-R1-MXFP4)", False, TEST),
    ("Accuracy Test MI35x (DeepSeek-R1-MXFP4 TP4)", False, TEST),
    ("Accuracy Test MI35x (DeepSeek-R1-MXFP4 TP4 MTP)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-R1-MXFP4 KV FP8)", False, TEST),
    ("Performance Test MI35x (8-GPU DeepSeek-R1-MXFP4 KV FP8)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-R1-MXFP4 AllReduce Fusion)", False, TEST),
    ("Performance Test MI35x (8-GPU DeepSeek-R1-MXFP4 AllReduce Fusion)", False, TEST),
    ("Accuracy Test MI35x (8-GPU DeepSeek-R1 HiCache)", False, TEST),
    ("Accuracy Test (8-GPU Kimi-K2.6)", False, TEST),
    ("Accuracy Test MI35x (8-GPU Kimi-K2.6)", False, TEST),
    ("Accuracy Test + Performance Test (8-GPU Qwen3)", False, TEST),
    ("Accuracy Test + Performance Test MI35x (8-GPU Qwen3-235B-MXFP4)", False, TEST),
    ("Accuracy Test (8-GPU Qwen 3.5)", False, TEST),
    ("Performance Test (8-GPU Qwen 3.5 FP8)", False, TEST),
    ("Accuracy Test MI35x (8-GPU Qwen 3.5)", False, TEST),
    ("Performance Test MI35x (8-GPU Qwen 3.5 FP8)", False, TEST),
    ("Accuracy Test MI35x (8-GPU Qwen 3.5 Triton DCP)", False, TEST),
    ("Accuracy Test (8-GPU GLM-5.1 DSA)", False, TEST),
    ("Performance Test (8-GPU GLM-5.1)", False, TEST),
    ("Accuracy Test MI35x (8-GPU GLM-5.1 DSA)", False, TEST),
    ("Performance Test MI35x (8-GPU GLM-5.1)", False, TEST),
    ("Accuracy Test MI35x (8-GPU GLM-5-MXFP4)", False, TEST),
    ("Performance Test MI35x (8-GPU GLM-5-MXFP4)", False, TEST),
    ("Accuracy Test MI35x (4-GPU MiniMax-M2.5)", False, TEST),
    ("Accuracy Test MI35x (4-GPU MiniMax-M3 MXFP8)", False, TEST),
    ("Accuracy Test (8-GPU MiniMax-M2.7)", False, TEST),
    ("Performance Test (8-GPU MiniMax-M2.7)", False, TEST),
)

# As the API shows them: the matrix value filled in, and GitHub's own steps of these jobs.
SGLANG_API_STEPS: tuple[tuple[str, bool, str], ...] = (
    ("Run miles CI suite nightly-stage-c-2-gpu-mi350", False, TEST),
    ("Run miles CI suite nightly-stage-c-8-gpu-mi350", False, TEST),
    ("Set up job", False, SETUP),
    ("Post Checkout code", False, SETUP),
    ("Post Run actions/checkout@v4", False, SETUP),
    ("Post Login to Docker Hub (AMD)", False, SETUP),  # docker/login-action logs out in a post-step
    ("Complete job", False, SETUP),
)

SGLANG = Project(
    name="sglang",
    sources=("sgl-project/sglang .github/workflows/pr-test-amd*.yml, nightly-test-amd*.yml @d315eb72",),
    steps=SGLANG_STEPS + SGLANG_API_STEPS,
    amd_labels=(
        "linux-mi300-1gpu-sglang",
        "linux-mi300-2gpu-sglang",
        "linux-mi300-4gpu-sglang",
        "linux-mi300-8gpu-sglang",
        "linux-mi325-1gpu-sglang",  # `format('linux-{0}-1gpu-sglang', inputs.runner_arch)`, runner_arch mi325
        "linux-mi325-2gpu-sglang",
        "linux-mi35x-gpu-1",
        "linux-mi35x-gpu-2",
        "linux-mi35x-gpu-8",
        "linux-mi35x-gpu-8.fabric",
        "linux-sglang-mi35x-di",  # nightly-amd-mi355x-disagg.yml
        "linux-mi300-gpu-1",  # older lanes (history/)
    ),
    other_labels=("ubuntu-latest",),
)

# ---- a second survey (2026-12-06): more files of the projects above, and two new ones ----------------------------
# Names whose class changed that day say what it was before. Left as they are (seconds each, or in jobs on CPU
# runners, which the analysis leaves out; a repository rule in `.github/foldbot.yml` sets them): TheRock `Expand GPU
# family to device extras` and `Summarize workflow inputs` (other, setup in fact), transformers `Echo folder ...`
# (other), its `Run test` in model_jobs_amd.yml (an `echo` after the tests; SGLang's `Run test` is its test step),
# aiter's ubuntu jobs `Split FlyDSL Tests (2 shards)`, `Trigger extended tests`; aiter's `[self-hosted, "9700"]`
# (a Radeon AI PRO R9700, which no label names but a number) is not taken for AMD.

# pytorch/pytorch: the ARC (Kubernetes) ROCm test lanes, where the CI image is the job pod (`container:`), so
# GitHub adds `Initialize containers` / `Stop containers` and the host-side checks become `Job pod ...` steps.
#   .github/workflows/_rocm-test-kubernetes.yml @1bf1ea67, .github/workflows/_rocm-test-no-dind.yml @05983e13
PYTORCH_K8S_SOURCES = (
    "pytorch/pytorch .github/workflows/_rocm-test-kubernetes.yml @1bf1ea67",
    "pytorch/pytorch .github/workflows/_rocm-test-no-dind.yml @05983e13",
)
PYTORCH_K8S_STEPS = (
    ("Job pod GPU check", False, SETUP),  # other before 2026-12-06: rocminfo | grep -c gfx; exit 1 if fewer GPUs than needed
    ("Initialize job directories", False, SETUP),  # other before 2026-12-06: rm -rf/mkdir -p $RUNNER_TEMP dirs -> GITHUB_ENV
    ("Job pod ROCm version", False, SETUP),  # other before 2026-12-06: amd-smi version; rocminfo Runtime Version
    ("Job pod system info", False, SETUP),  # other before 2026-12-06: cat /etc/os-release, rocm.list; whoami; dpkg -l
    ("Job pod amd-smi", False, SETUP),  # other before 2026-12-06: amd-smi monitor -ptumv; amd-smi list
    ("Job pod rocminfo", False, SETUP),  # other before 2026-12-06: rocminfo
    ("Configure AWS credentials", True, SETUP),
    ("Configure AWS credentials for in-run test-result upload", True, SETUP),  # before `Test`
    ("Resolve GHCR mirror", False, SETUP),  # resolve-image job, ubuntu-24.04
    ("Start monitoring script", False, SETUP),
    ("Download build artifacts", True, SETUP),
    ("Test", False, TEST),  # `pip install dist/*.whl`, then .ci/pytorch/test.sh: the install is inside the test step
    ("Print remaining test logs", False, OTHER),
    ("Upload test artifacts", True, OTHER),
)

# ROCm/aiter
AITER_MORE_SOURCES = (
    "ROCm/aiter .github/workflows/flydsl-test.yaml @eda25222",
    "ROCm/aiter .github/workflows/opus-test.yaml @0fcea24f",
    "ROCm/aiter .github/workflows/atom-test.yaml @0d02c70b",
    "ROCm/aiter .github/workflows/op-perf-bench.yaml @1927d630",
    "ROCm/aiter .github/workflows/vllm_benchmark.yaml @009f5b63",
    "ROCm/aiter .github/workflows/radeon-gpu-test.yaml @127aa6be",
    "ROCm/aiter .github/workflows/extended-test.yaml @21220b7f",
)
AITER_MORE_STEPS = (
    # flydsl job (linux-aiter-mi35x-1): after `Download test shard lists`, before the container: `ls -l flydsl_shard_*.list`
    ("List test shard files", False, SETUP),  # test before 2026-12-06
    ("Download test shard lists", True, SETUP),
    ("Export test file list for this shard as env", False, SETUP),
    ("FlyDSL Tests", False, TEST),
    ("Show OPUS test environment", False, SETUP),
    ("OPUS tests", False, TEST),
    ("Upload OPUS test logs", True, OTHER),
    ("Select OPUS test runners", False, SETUP),
    # atom-test.yaml atom_benchmark (linux-aiter-mi35x-4, linux-aiter-do-mi350x-8): `df -h /dev/shm` before the tests
    ("Check shm size", False, SETUP),  # other before 2026-12-06
    ("Download the ATOM base image", False, SETUP),
    ("Build the ATOM test image", False, SETUP),
    ("Download Models", False, SETUP),  # up to 150 min of model download
    ("Run ATOM accuracy test", False, TEST),
    ("Check accuracy test results", False, OTHER),
    # op-perf-bench.yaml perf-bench (aiter-1gpu-runner): actions/github-script creating/updating a PR comment, after
    # the benchmarks. A `run:`/`uses:` step named `Post ...`, not GitHub's post-step of an action.
    ("Post perf results to PR", True, OTHER),  # setup before 2026-12-06 (the `(?:Pre|Post) \S` rule)
    ("Build AITER", False, SETUP),
    ("Run performance benchmarks", False, TEST),
    ("Compare with baseline (main branch)", False, OTHER),
    # vllm_benchmark.yaml build_vllm_image (aiter-1gpu-runner): `docker push` of the image built in the step before,
    # which the benchmark job then pulls; the job builds the image and runs no test.
    ("Push Docker image", False, SETUP),  # other before 2026-12-06
    ("Checkout vLLM repo with retry", True, SETUP),
    ("Download the vLLM image", False, SETUP),
    # radeon-gpu-test.yaml radeon-gfx1201 ([self-hosted, "9700"]: Radeon AI PRO R9700)
    ("Verify Radeon runner host", False, SETUP),  # other before 2026-12-06: hostname check; rocm-smi --showproductname
    ("Start Radeon test container", False, SETUP),  # test before 2026-12-06: docker run -dt ... --name aiter_radeon_test
    ("Prepare Radeon workspace", False, SETUP),
    ("Check GPU visibility", False, SETUP),
    ("Build and install Aiter wheel", False, SETUP),  # up to 60 min: pip installs + setup.py bdist_wheel
    ("OPUS gfx1201 tests", False, TEST),
    ("Aiter FlyDSL gfx1201 flash-attention tests", False, TEST),
    ("Upload Radeon test logs", True, OTHER),
)
AITER_MORE_AMD_LABELS = ("linux-aiter-mi35x-4", "linux-aiter-do-mi350x-8")

# ROCm/TheRock: the PyTorch wheel tests (quick and full-suite), in a container on gfx942 runners.
THEROCK_WHEELS_SOURCES = (
    "ROCm/TheRock .github/workflows/test_pytorch_wheels.yml @00fc2777",
    "ROCm/TheRock .github/workflows/test_pytorch_wheels_full.yml @00fc602c",
)
THEROCK_WHEELS_STEPS = (
    # run_pytorch_smoke_tests.py (pytest), 10-min timeout, before `Run PyTorch tests`: `smoketests` is no test word
    ("Run PyTorch smoketests", False, TEST),  # other before 2026-12-06
    # PYTHONPATH=. python tools/stats/export_test_times.py: the test-time file the sharder reads, before the tests
    ("Export test times for sharding", False, SETUP),  # test before 2026-12-06
    ("Set git options", False, SETUP),
    ("Checkout PyTorch Source Repos from nightly branch", False, SETUP),
    ("Checkout PyTorch Source", False, SETUP),
    ("Set up virtual environment", False, SETUP),
    ("Initialize ROCm SDK and configure environment", False, SETUP),
    ("Install test requirements", False, SETUP),
    ("Run rocm-sdk sanity tests", False, TEST),
    ("Run PyTorch tests", False, TEST),
    ("(Linux) Run PyTorch full test suite", False, TEST),
    ("(Windows) Run PyTorch tests", False, TEST),
    ("(Windows) Read and propagate exit code", False, OTHER),
    ("Generate combined summary", False, OTHER),
)
THEROCK_WHEELS_AMD_LABELS = ("linux-gfx942-1gpu-ccs-csp-ossci-rocm", "linux-gfx942-8gpu-ossci-rocm")

# huggingface/transformers
TRANSFORMERS_MORE_SOURCES = (
    "huggingface/transformers .github/workflows/model_jobs_amd.yml @7ea15741",
    "huggingface/transformers .github/workflows/amd-strix-halo-probe.yml @00010328",
    "huggingface/transformers .github/workflows/benchmark_v2.yml @00a4e1f9",
    "huggingface/transformers .github/workflows/benchmark_v2_mi325_caller.yml @00a4e1f9",
)
TRANSFORMERS_MORE_STEPS = (
    ("ROCM-INFO", False, SETUP),  # other before 2026-12-06: rocminfo | grep "Agent" -A 14, next to `ROCM-SMI`
    ("Show ROCR environment", False, SETUP),
    ("Update / Install some packages (for Past CI)", False, SETUP),
    # amd-strix-halo-probe.yml `test` job: torch.cuda tensor + matmul + flash_attn_func on the GPU with asserts
    ("Smoke-test torch + Flash-Attention on the GPU", False, TEST),  # other before 2026-12-06
    ("Test ${{ matrix.model }}", False, TEST),
    ("Run a tiny transformers test slice (optional signal)", False, TEST),
    ("Get repo", True, SETUP),  # benchmark_v2.yml on amd-mi325-ci-1gpu
    ("Install benchmark dependencies", False, SETUP),
    ("Reinstall transformers in edit mode", False, SETUP),
    ("Run benchmark v2", False, TEST),
)
# [self-hosted, Linux, devlab-dispatch, strix-halo]: AMD Ryzen AI Max "Strix Halo" (gfx1151), per the file's header
TRANSFORMERS_MORE_AMD_LABELS = ("strix-halo", "amd-mi325-ci-1gpu")  # "strix-halo": not AMD before 2026-12-06
TRANSFORMERS_MORE_OTHER_LABELS = ("devlab-dispatch",)

# ROCm/jax
ROCM_JAX_SOURCES = (
    "ROCm/jax .github/workflows/pytest_rocm.yml @0006385b",
    "ROCm/jax .github/workflows/bazel_rocm.yml @004845ef",
    "ROCm/jax .github/workflows/benchmark_rocm.yml @1d25b87d",
)
ROCM_JAX_STEPS = (
    ("ROCm Info", False, SETUP),  # other before 2026-12-06: bazel_rocm.yml: rocminfo, first step after checkout
    # runner-host-diagnostics job (its only step after checkout): ./ci/utilities/rocm_runner_diagnostics.sh
    ("Runner host resource snapshot (no job container)", False, SETUP),  # other before 2026-12-06
    ("Resource diagnostics (job container)", False, SETUP),
    ("Download JAX ROCm wheels", True, SETUP),
    ("Install Python dependencies", False, SETUP),
    ("Resolve RBE container image digest", False, SETUP),
    ("Run Pytest ROCm tests", False, TEST),
    ("Bazel ROCm tests with build_jax=${{ inputs.build_jax }}, build_jaxlib=${{ inputs.build_jaxlib }}", False, TEST),
    ("Run ROCm benchmarks", False, TEST),
    ("Archive test logs", False, OTHER),
    ("Upload test-artifacts to AMD S3", False, OTHER),
    ("Upload CI artifacts to S3", False, OTHER),
)
ROCM_JAX_AMD_LABELS = ("amd-do-linux.jax.gpu.gfx950.4", "amd-sandbox-linux.jax.gpu.gfx950.16-dpx",
                       "linux-x86-64-1gpu-amd", "linux-x86-64-8gpu-amd")

# ROCm/rocm-libraries
ROCM_LIBRARIES_MORE_SOURCES = (
    "ROCm/rocm-libraries .github/workflows/hipdnn-benchmark-ci.yml @0838d0fc",
    "ROCm/rocm-libraries .github/workflows/gfx1250_hipblaslt_tensilelite_test.yml @00a693bd",
)
ROCM_LIBRARIES_MORE_STEPS = (
    # cp /opt/rocm/lib/libhipdnn_backend.so over the wheel's bundled copy, before the benchmark
    ("Patch torch's bundled libhipdnn_backend.so", False, SETUP),  # other before 2026-12-06
    ("Pre-job GPU process cleanup", False, SETUP),
    ("Fetch prebuilt ROCm by run-id (deterministic)", False, SETUP),
    ("Build + install hipdnn_frontend wheel", False, SETUP),
    ("Run benchmark smoke", False, TEST),
    ("Gate-check results.json", False, OTHER),
    ("Emit provenance sidecar", False, OTHER),
    ("Post-job GPU process cleanup", False, OTHER),
    ("Build hipBLASLt from source", False, SETUP),
    ("Run hipBLASLt tests", False, TEST),
    ("Run TensileLite common tests (fresh client)", False, TEST),
    ("Redact wall-clock timing from logs", False, OTHER),
)
ROCM_LIBRARIES_MORE_AMD_LABELS = ("linux-gfx942-2gpu-core42-ossci-rocm", "blas-rocm-mi455-sandbox")



# ROCm/vllm: the dev/perf lane builds an aiter+vLLM image on the MI308 runner and benchmarks DeepSeek-R1 in it;
# the gfx1151 kernel tests run in a container from a prebuilt wheel.
ROCM_VLLM = Project(
    name="rocm-vllm",
    sources=(
        "ROCm/vllm .github/workflows/models_performance_test.yaml @1c640363",
        "ROCm/vllm .github/workflows/vllm_benchmark.yaml @18604e05",
        "ROCm/vllm .github/workflows/test-rocm-kernels.yml @2b6c139d",
    ),
    steps=(
        ("Checkout vLLM repo", True, SETUP),
        ("Show disk usage", False, SETUP),  # other before 2026-12-06: df -h, first step
        ("Check models performance test script", False, SETUP),  # test before 2026-12-06: `ls -all /models/`, before the build
        ("Show models directory", False, SETUP),  # other before 2026-12-06: `ls -all /models/`
        ("Docker login", False, SETUP),
        ("Download the vLLM base image", False, SETUP),
        ("Generate Dockerfile", False, SETUP),
        ("Show Dockerfile", False, SETUP),
        ("Build Docker image", False, SETUP),  # clones and builds aiter and vLLM from source in the image
        ("Clean up Rocm processes", False, SETUP),
        ("Run the container", False, SETUP),
        ("Install Denpendencies", False, SETUP),  # (sic)
        ("Run performance tests", False, TEST),
        ("Upload benchmark results", True, OTHER),
        ("Upload comparison log", True, OTHER),
        ("Remove Docker container", False, OTHER),
        ("Download wheel artifact", True, SETUP),
        ("Install wheel and test dependencies", False, SETUP),
        ("GPU sanity check", False, SETUP),
        ("Prepare test environment", False, SETUP),
        ("Test kernel ${{ inputs.test_name }}", False, TEST),
    ),
    amd_labels=("vllm-mi308-8gpu",),
    other_labels=(),
)

# ROCm/rccl: multi-node RCCL tests on the MI350X/MI325 Slurm clusters after a TheRock build on a CPU VM.
RCCL = Project(
    name="rccl",
    sources=(
        "ROCm/rccl .github/workflows/therock-test-packages-multi-node.yml @01e2b428",
        "ROCm/rccl .github/workflows/rccl-ci.yml @0108600d",
        "ROCm/rccl .github/workflows/therock-mi325-linux.yml @48669709",
    ),
    steps=(
        ("Checkout Repository", True, SETUP),
        ("Run setup test environment workflow", True, SETUP),
        ("Test gfx950", False, TEST),  # sbatch --wait -N4 ... (the multi-node heatmap tests)
        ("Configure AWS Credentials for non-forked repos", True, SETUP),
        # if: always(), after the tests: upload_test_report_script.py --report-path /apps/cvs_tests/test_reports.
        # A run: step named `Post ...`, not GitHub's post-step of an action.
        ("Post test report upload", False, OTHER),  # setup before 2026-12-06 (the `(?:Pre|Post) \S` rule)
        ("Run tests on vultr-linux-node", False, TEST),
        ("Fetch sources", False, SETUP),
        ("Install python deps", False, SETUP),
        ("Configure Projects", False, SETUP),
        ("Build therock-dist", False, SETUP),
        ("Build therock-archives", False, SETUP),
        ("Setup ccache", False, SETUP),
        ("Report", False, OTHER),
        ("Create Log archive", False, OTHER),
        # azure-linux-scale-rocm build VM (non-AMD job): if: always(): post_build_upload.py --upload
        ("Post Build Upload", False, OTHER),  # setup before 2026-12-06 (a job on a CPU runner)
        # same VM: setup_ccache.py, df -h, git config before the build
        ("Runner Health Settings", False, SETUP),  # other before 2026-12-06 (a job on a CPU runner)
    ),
    amd_labels=("vultr-linux-rocm", "linux-vultr-mi325-scale-runner"),
    other_labels=("azure-linux-scale-rocm",),
)

# ---- a third survey (2026-12-07, review88 and review89): TheRock's JAX wheels, rocm-libraries' hipBLASLt JIT CI and
# the AMD CI transformers runs in huggingface/hf-workflows ----------------------------------------------------------
THIRD_SURVEY_SOURCES = (
    "ROCm/TheRock .github/workflows/test_linux_jax_wheels.yml @00af149b",
    "ROCm/rocm-libraries .github/workflows/hipblaslt-jit-ci.yml @804f063a",
    "huggingface/hf-workflows .github/workflows/transformers_amd_model_jobs_arc_scale_set.yaml @063556bd",
    "huggingface/hf-workflows .github/workflows/transformers_amd_ci_scheduled.yaml @0b1871f6",
    "linkedin/Liger-Kernel .github/workflows/amd-ci.yml @f12930ad",
    "pytorch/FBGEMM .github/workflows/fbgemm_gpu_ci_rocm.yml @3fa26ccc",
    "huggingface/optimum-amd .github/workflows/test_modeling_timm.yaml @14d40d06",
    "ROCm/rocm-systems .github/workflows/amdsmi-build.yml @01a6c8f8",
    "ROCm/rocm-systems .github/workflows/rocprofiler-sdk-continuous_integration.yml @000400d9",
)
THIRD_SURVEY_STEPS = (
    # python3 -m venv; echo PATH >> $GITHUB_ENV; setup_venv.py --activate-in-future-github-actions-steps, before the tests
    ("System deps, venv configure", False, SETUP),  # other before 2026-12-07
    ("Extract JAX version and set to GITHUB_ENV", False, SETUP),  # other before 2026-12-07: echo JAX_VERSION=... >> $GITHUB_ENV
    ("Run JAX tests", False, TEST),
    # cmake configure + cmake --install of a header-only dependency, before the build-and-test step
    ("Stage header-only hipblas-common from this checkout", False, SETUP),  # other before 2026-12-07
    # the Setup job on the AMD runner: writes the `folder_slices` matrix to $GITHUB_OUTPUT (test before 2026-12-07:
    # the Setup job counted as a job that ran tests)
    ("Identify models to test", False, SETUP),
    ("Update clone", False, SETUP),
    ("Run all tests on GPU", False, TEST),
    ("Run all pipeline tests on GPU", False, TEST),
    ("Run examples tests on GPU", False, TEST),
    ("Failure short reports", False, OTHER),
    ("List Python Environments", False, SETUP),  # other before 2026-12-07: pip list, before `Run Unit Tests`
    ("Run Unit Tests", False, TEST),
    ("Collect PyTorch Environment Info", False, SETUP),  # other before 2026-12-07: before the wheel install and tests
    ("Display GPU Info", False, SETUP),
    ("Test with PyTest", False, TEST),
    # amdsmi-build.yml's Tests jobs: `if: always()` steps that `cat` each suite's log after the tests (test before
    # 2026-12-07: a job whose tests were skipped after a failed build counted as one that ran them)
    ("Build and Install for Test", False, SETUP),
    ("AMDSMI Command Tests", False, TEST),
    ("Run AMDSMI, Python, and Example Tests", False, TEST),
    ("AMDSMI Test Results", False, OTHER),
    ("Unit Test Results", False, OTHER),
    ("Example DRM Test Results", False, OTHER),
    ("Upload AMDSMI Command Test Results", True, OTHER),
)
THIRD_SURVEY = Project("third survey (TheRock JAX, hipBLASLt JIT, hf-workflows)", THIRD_SURVEY_SOURCES,
                       THIRD_SURVEY_STEPS, ("linux-mi325-1gpu-ossci-rocm",), ())

# (their runs-on is the caller's `${{ matrix.runner }}`, whose labels no file read names: pytorch's)
PYTORCH_K8S = Project("pytorch (ARC lanes)", PYTORCH_K8S_SOURCES, PYTORCH_K8S_STEPS, PYTORCH.amd_labels, ())
AITER_MORE = Project("aiter (more lanes)", AITER_MORE_SOURCES, AITER_MORE_STEPS, AITER_MORE_AMD_LABELS, ())
THEROCK_WHEELS = Project("TheRock (PyTorch wheels)", THEROCK_WHEELS_SOURCES, THEROCK_WHEELS_STEPS,
                         THEROCK_WHEELS_AMD_LABELS, ())
TRANSFORMERS_MORE = Project("transformers (more lanes)", TRANSFORMERS_MORE_SOURCES, TRANSFORMERS_MORE_STEPS,
                            TRANSFORMERS_MORE_AMD_LABELS, TRANSFORMERS_MORE_OTHER_LABELS)
ROCM_JAX = Project("ROCm/jax", ROCM_JAX_SOURCES, ROCM_JAX_STEPS, ROCM_JAX_AMD_LABELS, ())
ROCM_LIBRARIES_MORE = Project("rocm-libraries (more lanes)", ROCM_LIBRARIES_MORE_SOURCES, ROCM_LIBRARIES_MORE_STEPS,
                              ROCM_LIBRARIES_MORE_AMD_LABELS, ())

#: ROCm's own projects read later (review59): a GPU lock, an image loaded, a cached build used; and
#: their neighbours, to show the rules leave them as they were.
ROCM_MORE = Project(
    name="ROCm (iris, Megatron-LM, FlyDSL)",
    sources=("ROCm/iris .github/workflows/iris-tests.yml @96ca5161",
             "ROCm/Megatron-LM .github/workflows/megatron-ci.yml @2d56682e",
             "ROCm/FlyDSL .github/workflows/flydsl.yaml @ed13b2a1"),
    steps=(
        ("Setup Apptainer (if not available)", False, SETUP),
        ("Build Iris container", False, SETUP),
        ("Acquire GPUs", False, SETUP),  # waits for a lock on the node's GPUs
        ("Run ${{ matrix.test_dir }} tests with ${{ matrix.num_ranks }} ranks (git install)", False, TEST),
        ("Run new examples with 4 ranks (editable)", False, TEST),
        ("Release GPUs", False, OTHER),
        ("Build Docker image with registry cache", True, SETUP),
        ("Load image for docker run", False, SETUP),  # `docker load` of the image built the step before
        ("Run unit tests in container", False, TEST),
        ("Cleanup Docker image", False, OTHER),
        ("Restore cached MLIR install tarball (if available)", True, SETUP),
        ("Use cached MLIR install tarball (skip LLVM build)", False, SETUP),
        ("Build LLVM", False, SETUP),
        ("Export MLIR install tarball (workflow_dispatch only)", False, OTHER),
        ("Install Python package", False, SETUP),
        ("Run benchmarks", False, TEST),
        ("Show benchmarks logs", False, OTHER),
    ),
    amd_labels=("linux-mi325-8", "linux-megatron-mi325-8", "flydsl-mi355-1gpu"),
    other_labels=(),
)

#: A fourth survey (review98 and after): AMD-AGI/Primus-Turbo's unit tests, whose first step is an unnamed `run: echo`
#: banner; TGI's ROCm lane; tinygrad's tinybox benchmarks (their runners' labels name no GPU: `amd_runner_pattern`).
FOURTH_SURVEY = Project(
    name="fourth survey (Primus-Turbo, TGI, tinygrad, ROCm/pytorch, Primus, mscclpp, kernelbot, iris)",
    sources=("AMD-AGI/Primus-Turbo .github/workflows/ci.yaml @0088a2be",
             "huggingface/text-generation-inference .github/workflows/build_rocm.yml @954c9cac",
             "tinygrad/tinygrad .github/workflows/benchmark.yml @78301d7b",
             "ROCm/pytorch .github/workflows/_rocm-test.yml @0632cc87",
             "AMD-AGI/Primus .github/workflows/ci.yaml @2c86de19",
             "microsoft/mscclpp .github/workflows/ut-rocm-backup.yml @1504bef5",
             "gpu-mode/kernelbot .github/workflows/amd-health.yml @4ac00595",
             "ROCm/iris .github/workflows/iris-tests.yml @07fb202e",
             "ROCm/jax-aiter .github/workflows/ci.yml @037c6ecc"),
    steps=(
        # GitHub names an unnamed `run:` step `Run <its first line>`: a banner says nothing of what the job does (test
        # before 2026-12-07: a job whose tests were skipped after a failed build counted as one that ran them)
        ('Run echo "🎉 Begin Primus-Turbo PyTorch Framework Unit Test."', False, OTHER),
        ('Run echo "🎉 Begin Primus-Turbo JAX Framework Unit-Test."', False, OTHER),
        ("Run pip install pytest", False, SETUP),  # test before 2026-12-07 (`pytest`)
        ('Run echo "ROCM_PATH=/opt/rocm" >> $GITHUB_ENV', False, SETUP),  # (an echo that writes is no banner)
        ("Run echo ok && pytest tests/unit", False, TEST),  # (a banner and the tests on one line: the tests)
        ("Print rocminfo", False, SETUP),
        ("Install and build", False, SETUP),
        ("Prepare coverage environment", False, SETUP),
        ("Run single-GPU tests (parallel)", False, TEST),
        ("Run deterministic tests (parallel)", False, TEST),
        ("Run in-process multi-GPU tests", False, TEST),
        ("Combine and stage coverage data", False, OTHER),
        ("Upload coverage data", True, OTHER),
        ("ROCM-SMI", False, SETUP),  # TGI
        ("Show ROCR environment", False, SETUP),
        ("Run tests", False, TEST),
        ("Test tensor cores", False, TEST),  # tinygrad
        ("Run process replay tests", False, TEST),
        # pytorch's _rocm-test.yml (ROCm/pytorch @0632cc87), before `Test` (other before 2026-12-07)
        ("Runner check GPU count (distributed jobs)", False, SETUP),
        ("Preserve github env variables for use in docker", False, SETUP),
        ('Run echo "🎉 Begin Primus Unit Test."', False, OTHER),  # AMD-AGI/Primus ci.yaml
        # microsoft/mscclpp ut-rocm-backup.yml: the mpirun tests beside `UnitTests` (other before 2026-12-07: a
        # CamelCase name ending in the word)
        ("UnitTests", False, TEST),
        ("MpUnitTests", False, TEST),
        ("PyTests", False, TEST),
        ("Get latest build", False, SETUP),  # (`latest` is no test word)
        ("System Information", False, SETUP),  # gpu-mode/kernelbot, before its checks (other before 2026-12-07)
        ("Report environment versions", False, SETUP),  # ROCm/iris, before its tests (other before 2026-12-07)
        ("Report test results", False, OTHER),
    ),
    amd_labels=("mi300", "amd-gpu"),
    # ROCm's CPU build pools (ROCm/jax-aiter's ci.yml: "cpu -> build-only-jax-aiter (no GPU ...)"; ROCm/rocMLIR)
    other_labels=("tinyboxgreen", "build-only-jax-aiter", "build-only-rocmlir", "build-only-aiter", "build-only-atom",
                  "group:build-only-rocmlir", " build-only-rocmlir"),
)

#: A fifth survey (2026-12-07): AMD jobs of projects new to the survey, and names the earlier ones did not have.
FIFTH_SURVEY = Project(
    name="fifth survey (kernelbot, iree-turbine, tilelang, Liger, Primus lint, tinygrad, SGLang benchmarks)",
    sources=("gpu-mode/kernelbot .github/workflows/amd_workflow.yml @01c89233",
             "gpu-mode/kernelbot .github/workflows/amd-health.yml @4ac00595",
             "iree-org/iree-turbine .github/workflows/ci-tk.yaml @0004ae3e",
             "iree-org/iree-turbine .github/workflows/perf_mi300.yaml @968c2e31",
             "tile-ai/tilelang .github/workflows/amd_ci.yml @0860cb75",
             "linkedin/Liger-Kernel .github/workflows/amd-ci.yml @07a3a620",
             "AMD-AGI/Primus .github/workflows/ci.yaml @01f23208",
             "tinygrad/tinygrad .github/workflows/benchmark.yml @0026c185",
             "sgl-project/sglang .github/workflows/pr-test-amd.yml @003cb04b"),
    steps=(
        ("Create input files", False, SETUP),  # kernelbot: the payload its `Run script` reads (other before 2026-12-07)
        ("Set venv directory based on runner", False, SETUP),
        ("Setup Virtual Environment and Install Dependencies", False, SETUP),
        ("Upload training artifacts", True, OTHER),
        ("GPU Health Check", False, SETUP),
        ("Distributed Health Check", False, SETUP),  # (other before 2026-12-07)
        ("Setting up Python", True, SETUP),  # iree-turbine
        ("Cache Pip Packages", True, SETUP),
        ("Install pip deps", False, SETUP),
        ("Run unit tests", False, TEST),
        ("Test TKW runtime related stack on amdgpu", False, TEST),
        ("Run e2e tests on AMD GPU MI300", False, TEST),
        ("Run LIT tests", False, TEST),
        ("MyPy Type Checking", False, OTHER),
        ("Ensure venv (local & persistent)", False, SETUP),  # tilelang
        ("Run format check", False, OTHER),
        ("Install project (wheel form)", False, SETUP),
        ("Run checkstyle", False, OTHER),  # Liger-Kernel
        ("Check Docker Version", False, SETUP),
        ("Setup Dependencies", False, SETUP),
        ("Install Autoflake", False, SETUP),  # AMD-AGI/Primus's lint job: the linters' actions (setup before 2026-12-07)
        ("Run Autoflake", False, OTHER),
        ("Run isort/isort-action@v1", True, OTHER),
        ("Run psf/black@stable", True, OTHER),
        ("Run Shell Tests", False, TEST),
        ("Set UT_LOG_PATH", False, SETUP),
        ("Print nvidia-smi", False, SETUP),  # tinygrad, before its benchmarks (other before 2026-12-07)
        ("Symlink models and datasets", False, SETUP),  # (other before 2026-12-07)
        ("Run model inference benchmark", False, TEST),
        ("Test speed vs torch", False, TEST),
        ("Evaluate accuracy (TP=2)", False, TEST),  # SGLang's older AMD lane
        ("MLA TEST", False, TEST),
        ("Benchmark offline throughput (w/o RadixAttention) (TP=2)", False, TEST),
    ),
    amd_labels=("amdgpu-mi300-8-x86-64", "nodai-amdgpu-mi300-x86-64", "nodai-amdgpu-mi250-x86-64"),
    other_labels=(),
)

SIXTH_SURVEY = Project(
    name="sixth survey (TransformerEngine's emoji names, helion, shark-ai, llama.cpp)",
    sources=("ROCm/TransformerEngine .github/workflows/transformer-engine-ci.yml @0457361f",
             "ROCm/TransformerEngine .github/workflows/perf-dashboard.yml @089848f6",
             "pytorch/helion .github/workflows/test.yml @0038623e",
             "nod-ai/shark-ai .github/workflows/ci-sharktank.yml @03a5ec16",
             "ggml-org/llama.cpp .github/workflows/build-self-hosted-cuda.yml @0481610c",
             "iree-org/wave .github/workflows/ci-gpu.yaml @006d921c",
             "ROCm/triton .github/workflows/amd_perf_kernel_Integration_tests.yml @72b19d55"),
    steps=(
        # TransformerEngine begins each step's name with an emoji, which no rule read past (2026-12-07): the build was
        # other, the uploads setup (the action default)
        ("\U0001f4e6 Build wheel inside container", False, SETUP),
        ("\u2b06\ufe0f Upload wheel artifact", True, OTHER),
        ("\u2b06\ufe0f Upload logs on failure", True, OTHER),
        ("\U0001f5bc\ufe0f Select Docker Image", False, SETUP),
        ("\U0001f40d Install dependencies and wheel", False, SETUP),
        ("\U0001f9ea Run tests", False, TEST),
        ("Run microbenchmarks", False, TEST),  # (other before 2026-12-07)
        ("CUDA Compute Check", False, SETUP),  # helion, before its tests (these four other before 2026-12-07)
        ("Inductor Worker Check", False, SETUP),
        ("XPU Compute Check", False, SETUP),
        ("MPS Availability Check", False, SETUP),
        ("Run Tests", False, TEST),
        ("Coverage comment", True, OTHER),  # shark-ai, after its tests (setup before 2026-12-07)
        ("ccache-buckets-restore", False, SETUP),  # llama.cpp
        ("ccache-buckets-save", True, OTHER),  # (after `Test`; setup before 2026-12-07)
    ),
    amd_labels=("te-gfx942-4gpu", "gfx950", "rocm.gfx90a", "linux-mi35x-1gpu-ossci-iree-org",
                "linux-mi325-1gpu-ossci-nod-ai"),
    other_labels=(),
)

SEVENTH_SURVEY = Project(
    name="seventh survey (mori, rocm-examples, InferenceX, GEAK, ATOM, xla)",
    sources=("ROCm/mori .github/workflows/nightly.yml @03261ec8",
             "ROCm/rocm-examples .github/workflows/build-rocm-examples-reusable.yml @02277212",
             "SemiAnalysisAI/InferenceX .github/workflows/benchmark-tmpl.yml @00983c3e",
             "SemiAnalysisAI/InferenceX .github/workflows/mi355x-power-preflight.yml @2274cd48",
             "AMD-AGI/GEAK .github/workflows/ci-l1-smoke-e2e.yml @28845d9a",
             "ROCm/ATOM .github/workflows/atom-test.yaml @004dc207",
             "ROCm/xla .github/workflows/rocm_xla_ci.yml @005cad8b",
             "openxla/xla .github/workflows/rocm_ci.yml @02353e94"),
    steps=(
        # (each other before 2026-12-08)
        ("MORI-EP internode normal kernel stress", False, TEST),  # 10 two-node runs of the kernel, 8 GPUs each
        ("Submit + wait L1 smoke", False, TEST),  # GEAK: waits for its Slurm GPU jobs
        ("Upload GPU smoke logs", True, OTHER),
        ("Resource cleanup (pre-run)", False, SETUP),  # InferenceX, before its checkout on the GPU node
        ("Repair root-owned artifacts (pre-run)", False, SETUP),
        ("Repair stale git state (pre-run)", False, SETUP),
        ("Resource cleanup (post-run)", False, OTHER),
        ("Repair root-owned artifacts (post-run)", False, OTHER),
        ("Wheel sanity check", False, SETUP),  # rocm-examples: `rocm-sdk test` of the installed wheel
        ("CMake configure", False, SETUP),  # rocm-examples, before `Run tests`
        ("CMake build", False, SETUP),
        ("CMake configure error summary", False, OTHER),
        ("Preflight (SPUR reachable + dataset present)", False, SETUP),  # GEAK: `sinfo`, `test -d`
        ("Host amd-smi preflight", False, SETUP),
        ("Upload preflight report", True, OTHER),
        ("Run tests", False, TEST),
        ("Test summary", False, OTHER),
        ("Upload test logs", True, OTHER),
    ),
    amd_labels=("linux-mi250-4", "amd-do-linux-xla-gpu-gfx950-1", "cluster:mi355x-amds", "linux-atom-mi355-1",
                "atom-mi355-8gpu.predownload", "MI355X-AINIC", "MI300X-BNXT", "gfx110X-all", "gfx1151"),
    other_labels=("amd-genoa", "amd-milan"),  # EPYC CPU runners (AMD before 2026-12-08)
)

EIGHTH_SURVEY = Project(
    name="eighth survey (rtp-llm, MIVisionX, rpp, GPTQModel, ColossalAI)",
    sources=("alibaba/rtp-llm .github/workflows/run_tests.yaml @0750e224",
             "ROCm/MIVisionX .github/workflows/vision-pack-qa.yml @90b27600",
             "ROCm/rpp .github/workflows/hip_build_tests.yaml @0e3db8a7",
             "ModelCloud/GPTQModel .github/workflows/unit_tests.yml @005d416f",
             "hpcaitech/ColossalAI .github/workflows/build_on_pr.yml @01ef6c56"),
    steps=(
        # (each otherwise before 2026-12-08)
        ("Compress unit tests logs", False, OTHER),  # rtp-llm, after its tests on MI308 (was test)
        ("Compress e2e tests logs", False, OTHER),
        ("Run the robustness slice", False, TEST),  # MIVisionX
        ("Run the robustness-nogpu slice", False, TEST),
        ("Extract the bundle manifest", False, SETUP),
        ("Plan the suites", False, SETUP),  # (was test: "suites")
        ("Python dependencies", False, SETUP),
        ("Skip a release this workflow already tested", False, OTHER),  # (was test: "tested")
        ("Write the tested marker", False, OTHER),
        ("Upload the tested marker", True, OTHER),
        ("Performance check - HIP", False, TEST),  # rpp: its benchmark runs
        ("Find suitable GPU", False, SETUP),  # GPTQModel: a free GPU from its broker, waited for
        ("Release GPU", False, OTHER),
        ("Activate uv env", False, SETUP),
        ("Check log", False, OTHER),  # (was test: its script is the tests')
        ("Copy testmon cache", False, SETUP),  # ColossalAI (was test: "testmon")
        ("Install TheRock tarball", False, SETUP),  # (not packing)
    ),
    amd_labels=("MI308",),
    other_labels=(),
)

PROJECTS: tuple[Project, ...] = (
    PYTORCH, DEEPSPEED, AITER, TRITON, JAX, TRANSFORMER_ENGINE, OPTIMUM_BENCHMARK, TRANSFORMERS, SGLANG,
    PYTORCH_AO, THEROCK, FLASH_ATTENTION, XFORMERS, ONNXRUNTIME, IREE, ROCM_LIBRARIES,
    MEGATRON_LM, PYTORCH_K8S, AITER_MORE, THEROCK_WHEELS, TRANSFORMERS_MORE, ROCM_JAX, ROCM_LIBRARIES_MORE,
    ROCM_VLLM, RCCL, ROCM_MORE, THIRD_SURVEY, FOURTH_SURVEY, FIFTH_SURVEY, SIXTH_SURVEY,
    SEVENTH_SURVEY, EIGHTH_SURVEY,
)

# Whole `runs-on` label lists of real jobs (as the API's `labels` would carry them), and whether
# the job runs on an AMD GPU.
RUNS_ON: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("self-hosted", "amd", "mi200"), True),  # DeepSpeed amd-mi200.yml
    (("self-hosted", "amd", "mi100"), True),  # DeepSpeed amd-mi100.yml
    (("self-hosted", "amd"), True),  # DeepSpeed amd.yml
    (("self-hosted", "nvidia", "a6000"), False),  # DeepSpeed nv-a6000.yml
    (("self-hosted", "intel", "xpu"), False),  # DeepSpeed xpu-max1100.yml
    (("self-hosted", "gfx90a"), True),  # triton runner-preparation.yml matrix-AMD
    (("amd-gfx942",), True),
    (("amd-gfx950",), True),
    (("nvidia-a100",), False),  # triton matrix-NVIDIA
    (("nvidia-h100",), False),
    (("nvidia-gb200",), False),
    (("macos-latest",), False),
    (("single-gpu", "amd-gpu", "mi250", "ci"), True),  # optimum-benchmark ROCm lanes
    (("multi-gpu", "amd-gpu", "mi250", "ci"), True),
    (("single-gpu", "nvidia-gpu", "a10", "ci"), False),  # optimum-benchmark CUDA lane
    (("self-hosted", "linux.rocm.gpu.gfx950.1"), True),  # pytorch, self-hosted first
    (("self-hosted", "linux.g5.4xlarge.nvidia.gpu"), False),
    (("linux", "amd64", "cpu4"), False),  # RAPIDS label combination
    (("linux-amd64-gpu-v100-latest-1",), False),  # nv-gha-runners
    (("self-hosted",), False),  # xformers rocm_ci.yml `runs-on: self-hosted`: an AMD machine no label names
    (("self-hosted", "Linux", "X64"), False),  # the same runner's default labels
    (("self-hosted", "1ES.Pool=onnxruntime-github-Ubuntu2204-AMD-CPU"), False),  # onnxruntime: AMD CPUs, no GPU
    (("self-hosted", "1ES.Pool=onnxruntime-github-Ubuntu2204-ARM-CPU"), False),
    (("linux-mi325-1gpu-ossci-rocm",), True),  # TheRock
    (("azure-linux-scale-rocm",), False),  # rocm-libraries miopen-ci.yml: ROCm's CPU build pool
    # IREE's Radeon runners, which name the card or its architecture, not a gfx target:
    # iree-org/iree pkgci_test_amd_r9700.yml @04e5a34a (Radeon AI PRO R9700, gfx1201),
    # pkgci_test_amd_7900xtx.yml @d557f240 (RX 7900 XTX, gfx1100), and the label sets of its
    # shark runners (Radeon PRO W7900, gfx1100) as IREE's runner monitor lists them.
    (("Linux", "X64", "iree-r9700"), True),
    (("iree-7900xtx-1",), True),
    (("Linux", "X64", "rdna3"), True),
    (("Linux", "X64", "iree-w7900"), True),
    (("Linux", "X64", "iree-w7900x2", "persistent-cache"), True),
    # Other hardware, from actionlint.yaml's self-hosted label lists: pytorch/pytorch @003763c7 (Google TPUs,
    # IBM Z, OSDC CPU runners), jax-ml/jax @1082251c (TPU hosts, GCP n4 CPUs), sgl-project/sglang @0d8e703c
    # (NVIDIA H20, CUDA 13, Xeon Granite Rapids), vllm-project/vllm @10676dd0 (Ascend NPUs).
    (("linux.google.tpuv7x.1",), False),
    (("linux.s390x",), False),
    (("mt-l-x86iavx512-48-384",), False),
    (("linux-x86-ct5lp-224-8tpu",), False),
    (("linux-x86-n4-32",), False),
    (("8-gpu-h20",), False),
    (("x64-cu13-kernel-tests",), False),
    (("xeon-gnr",), False),
    (("self-hosted", "ascend", "910b", "npu-2"), False),
    # The second survey (2026-12-06): transformers amd-strix-halo-probe.yml @00010328 (a Strix Halo APU, gfx1151;
    # not AMD before that day), ggml-org/llama.cpp build-self-hosted.yml @079700ad (gpu-rocm, gpu-cuda,
    # gpu-vulkan-intel-linux), ROCm/vllm, ROCm/rccl rccl-ci.yml @0108600d.
    (("self-hosted", "Linux", "devlab-dispatch", "strix-halo"), True),
    (("self-hosted", "Linux", "AMD"), True),
    (("self-hosted", "Linux", "NVIDIA"), False),
    (("self-hosted", "Linux", "Intel"), False),
    (("vllm-mi308-8gpu",), True),
    (("vultr-linux-rocm",), True),
    # The third survey (2026-12-07): optimum-amd test_modeling_timm.yaml @14d40d06, a Ryzen AI NPU machine (XDNA), no
    # GPU (AMD before that day); FBGEMM fbgemm_gpu_ci_rocm.yml @3fa26ccc `rocm`.
    (("self-hosted", "single-npu", "amd-npu", "ryzenai"), False),
    (("rocm",), True),
    # rocprofiler-sdk's RDNA4 (`navi4`) runner, a Radeon RX 9070 (not AMD by its card before 2026-12-07)
    (("linux-rx9070-gpu",), True),
    (("rx9060xt",), True),
)
