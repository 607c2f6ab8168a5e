"""Eight recorded-looking runs of SGLang's AMD PR gate, "PR Test ROCm 7.2 (AMD)".

Workflow ``.github/workflows/pr-test-amd-rocm720.yml`` of ``sgl-project/sglang``
as it was before the fold PR (#34483, fixture
``shared/fixtures/sglang/fold-pr/before/pr-test-amd-rocm720.yml``).  Every run is
a ``pull_request`` run of a PR that touches only ``python/sglang/multimodal_gen``,
so only the multimodal-gen jobs run and every other GPU job is skipped.

The numbers (all drawn from ``random.Random(720)``, so the history is fixed):

* runs ``24000000001`` .. ``24000000008``, one day apart from
  2026-08-10T08:00:00Z, PRs #34401 .. #34408, one head SHA per run;
* ``call-gate / pr-gate`` (ubuntu-latest, ~0.5 min) and ``check-changes``
  (ubuntu-latest, ~1 min) run first; ``pr-test-amd-rocm720-finish``
  (ubuntu-latest, ~0.2 min) runs after everything else; all succeed;
* ``multimodal-gen-test-1-gpu-amd-rocm720 (linux-mi300-1gpu-sglang, P)``,
  P = 0..3: setup 100-155 min, ``Run diffusion server tests (1-GPU)`` 42-50 min (4 shards are needed: 3 would exceed 60% of the 90-min step timeout);
* ``multimodal-gen-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang, P)``,
  P = 0..2: setup 100-155 min, ``Run diffusion server tests (2-GPU)`` of
  14 / 26 / 21 min (+-1 min jitter).  Retries hit in two runs, which stretch
  every 2-GPU shard: run 3 (``24000000003``) x2.0 and run 6 (``24000000006``) x2.6;
* ``multimodal-gen-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)``: setup
  100-155 min, no extra setup steps, ``Run diffusion unit tests`` 4-6 min, no
  teardown step;
* the 1- and 2-GPU jobs also run ``Setup kernel caches`` and ``Diagnose HF cache
  and system resources`` after ``Install dependencies`` and ``Upload diffusion
  failure artifacts`` after the tests; ``Download artifacts`` is skipped (null
  timestamps) because the PRs do not touch sgl-kernel;  "setup" is everything
  before the test step, ~55 % of it ``Start CI container``, ~40 % ``Install
  dependencies``;
* GPU jobs wait 1-15 min for a runner after ``check-changes`` finishes; shards
  are not serialised (the YAML's ``max-parallel: 1`` is not modelled).

Skipped jobs carry the name GitHub shows for a job skipped by its ``if:``:
no ``name:`` -> the job id; a ``name:`` template -> evaluated with
runner_arch mi300, and for matrix jobs without the matrix value (e.g.
``stage-b-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)``).  Two of
them use unevaluated forms instead, because a skipped matrix job is never
expanded: ``stage-c-test-4-gpu-amd-rocm720 (linux-mi300-4gpu-sglang, ${{ matrix.part }})``
and the raw template of ``stage-b-test-1-gpu-large-amd-rocm720``.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime, timedelta, timezone

from tests.builders import JobSpec, Step, amd_job, bundle, job, pull_request_minimal, skipped_job

__all__ = ["rocm720_history"]

REPO = "sgl-project/sglang"
WORKFLOW_PATH = ".github/workflows/pr-test-amd-rocm720.yml"
WORKFLOW_NAME = "PR Test ROCm 7.2 (AMD)"
FIRST_RUN_ID = 24000000001
FIRST_PR = 34401
FIRST_START = datetime(2026, 8, 10, 8, 0, 0, tzinfo=timezone.utc)
SEED = 720

LABEL_1GPU = "linux-mi300-1gpu-sglang"
LABEL_2GPU = "linux-mi300-2gpu-sglang"
MM_1GPU = "multimodal-gen-test-1-gpu-amd-rocm720"
MM_2GPU = "multimodal-gen-test-2-gpu-amd-rocm720"
MM_UNIT = "multimodal-gen-unit-test-amd-rocm720"
TEST_1GPU = "Run diffusion server tests (1-GPU)"
TEST_2GPU = "Run diffusion server tests (2-GPU)"
TEST_UNIT = "Run diffusion unit tests"
MM_EXTRA_SETUP = ("Setup kernel caches", "Diagnose HF cache and system resources")

#: Healthy test minutes of the three 2-GPU shards.
TWO_GPU_MINUTES = (14.0, 26.0, 21.0)
#: Run index (1-based) -> slowdown of every 2-GPU shard when retries hit.
RETRY_FACTORS = {3: 2.0, 6: 2.6}

# Names of the jobs skipped in every run, in file order: those before the
# multimodal-gen jobs, then those after them.
_SKIPPED_BEFORE = (
    "call-pr-test-amd-extra-rocm720",
    "sgl-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)",
    "sgl-kernel-unit-test-2-gpu-amd-rocm720 (linux-mi300-2gpu-sglang)",
    "stage-a-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)",
    "jit-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)",
    "jit-kernel-benchmark-test-amd-rocm720 (linux-mi300-1gpu-sglang)",
    "wait-for-stage-a-amd-rocm720",
    "stage-b-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang)",
    "stage-b-test-1-gpu-small-amd-nondeterministic-rocm720 (linux-mi300-1gpu-sglang)",
    "stage-b-test-1-gpu-small-amd-mi35x-rocm720",
    "${{ format('stage-b-test-1-gpu-large-amd-rocm720 (linux-{0}-1gpu-sglang, {1})', "
    "inputs.runner_arch || 'mi300', matrix.part) }}",
    "stage-b-test-2-gpu-large-amd-rocm720 (linux-mi300-2gpu-sglang)",
)
_SKIPPED_AFTER = (
    "wait-for-stage-b-amd-rocm720",
    "stage-c-test-4-gpu-amd-rocm720 (linux-mi300-4gpu-sglang, ${{ matrix.part }})",
    "stage-c-test-large-8-gpu-amd-rocm720 (linux-mi300-8gpu-sglang)",
    "stage-c-test-large-8-gpu-amd-mi35x-rocm720",
    "stage-c-dsv4-flash-fp4-fp8-amd-mi35x-rocm720",
    "stage-c-dsv4-pro-fp4-amd-mi35x-rocm720",
    "stage-b-test-large-8-gpu-mi35x-disaggregation-amd-rocm720",
)

_PRS = (  # (head ref, title, author)
    ("amd/mm-wan-vae-tiling", "[AMD] diffusion: tile Wan VAE decode on MI300", "rocm-diffusion-dev"),
    ("diffusion/qwen-image-cfg", "[diffusion] Qwen-Image: fuse CFG batch", "mmgen-contrib"),
    ("fix/hunyuan-offload", "[diffusion] HunyuanVideo: fix CPU offload with TP=2", "video-gen-hacker"),
    ("amd/flux-attn-backend", "[AMD] diffusion: aiter attention backend for FLUX.1", "rocm-diffusion-dev"),
    ("diffusion/lora-hot-swap", "[diffusion] LoRA hot swap without server restart", "lora-wrangler"),
    ("diffusion/sp-ulysses-2gpu", "[diffusion] Ulysses SP for 2-GPU Wan2.2 I2V", "mmgen-contrib"),
    ("amd/mm-miopen-cache", "[AMD] diffusion: persist MIOpen find-db across steps", "rocm-diffusion-dev"),
    ("diffusion/sampling-params-validate", "[diffusion] validate sampling params earlier", "video-gen-hacker"),
)


def _sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def _pr_gate(rng: random.Random) -> JobSpec:
    steps = [
        Step("Set up job", 0.03 + rng.uniform(0, 0.02)),
        Step("Fetch latest PR info", 0.05 + rng.uniform(0, 0.05)),
        Step("Log PR info", 0.02),
        Step("Block draft PR", 0.0, "skipped"),
        Step("Require run-ci label (optional)", 0.02),
        Step("Require run-ci-extra label (optional)", 0.0, "skipped"),
        Step("Enforce rate limit for low-permission actors (optional)", 0.2 + rng.uniform(0, 0.15)),
        Step("Complete job", 0.02),
    ]
    return job("call-gate / pr-gate", steps, ["ubuntu-latest"], queue_minutes=0.1 + rng.uniform(0, 0.1))


def _check_changes(rng: random.Random, after: float) -> JobSpec:
    steps = [
        Step("Set up job", 0.05),
        Step("Checkout code", 0.45 + rng.uniform(0, 0.25)),
        Step("Determine run mode", 0.02),
        Step("Set continue-on-error for schedule/full runs", 0.02),
        Step("Detect file changes", 0.2 + rng.uniform(0, 0.15)),
        Step("Post Checkout code", 0.03),
        Step("Complete job", 0.02),
    ]
    return job("check-changes", steps, ["ubuntu-latest"],
               queue_minutes=0.1 + rng.uniform(0, 0.2), after_minutes=after)


def _finish(rng: random.Random, after: float) -> JobSpec:
    steps = [
        Step("Set up job", 0.05),
        Step("Check all dependent job statuses", 0.08 + rng.uniform(0, 0.04)),
        Step("Complete job", 0.02),
    ]
    return job("pr-test-amd-rocm720-finish", steps, ["ubuntu-latest"],
               queue_minutes=0.1 + rng.uniform(0, 0.1), after_minutes=after)


def _run(index: int, rng: random.Random) -> dict:
    """Bundle of run ``index`` (1-based)."""
    run_id = FIRST_RUN_ID + index - 1
    pr_number = FIRST_PR + index - 1
    head_ref, title, author = _PRS[index - 1]
    head_sha = _sha("sglang", pr_number, head_ref)
    base_sha = _sha("sglang-main", FIRST_START + timedelta(days=index - 1))

    gate = _pr_gate(rng)
    changes = _check_changes(rng, after=gate.end_minutes)
    gpu_after = changes.end_minutes

    def gpu(name: str, label: str, tests: list[tuple[str, float]], *, mm_server: bool) -> JobSpec:
        return amd_job(
            name,
            labels=[label],
            setup_minutes=rng.uniform(100, 155),
            tests=tests,
            extra_setup=MM_EXTRA_SETUP if mm_server else (),
            teardown=("Upload diffusion failure artifacts",) if mm_server else (),
            queue_minutes=rng.uniform(1, 15),
            after_minutes=gpu_after,
        )

    factor = RETRY_FACTORS.get(index, 1.0)
    mm = [
        gpu(f"{MM_1GPU} ({LABEL_1GPU}, {p})", LABEL_1GPU, [(TEST_1GPU, rng.uniform(42, 50))], mm_server=True)
        for p in range(4)
    ]
    mm += [
        gpu(f"{MM_2GPU} ({LABEL_2GPU}, {p})", LABEL_2GPU,
            [(TEST_2GPU, (base + rng.uniform(-1, 1)) * factor)], mm_server=True)
        for p, base in enumerate(TWO_GPU_MINUTES)
    ]
    mm.append(gpu(f"{MM_UNIT} ({LABEL_1GPU})", LABEL_1GPU, [(TEST_UNIT, rng.uniform(4, 6))], mm_server=False))

    jobs = [gate, changes]
    jobs += [skipped_job(n, after_minutes=0.0 if n.startswith("call-") else gpu_after) for n in _SKIPPED_BEFORE]
    jobs += mm
    jobs += [skipped_job(n, after_minutes=gpu_after) for n in _SKIPPED_AFTER]
    jobs.append(_finish(rng, after=max(j.end_minutes for j in jobs)))

    merge_ref = f"refs/pull/{pr_number}/merge"
    return bundle(
        run_id=run_id,
        repo=REPO,
        workflow_path=WORKFLOW_PATH,
        workflow_name=WORKFLOW_NAME,
        head_sha=head_sha,
        jobs=jobs,
        event="pull_request",
        start=FIRST_START + timedelta(days=index - 1),
        pull_requests=[pull_request_minimal(REPO, pr_number, head_ref=head_ref,
                                            head_sha=head_sha, base_sha=base_sha)],
        display_title=title,
        actor=author,
        run_number=51230 + index,
        referenced_workflows=[{
            "path": f"{REPO}/.github/workflows/pr-gate.yml@{merge_ref}",
            "sha": _sha("sglang-merge", pr_number, head_sha),
            "ref": merge_ref,
        }],
    )


def rocm720_history() -> list[dict]:
    """The 8 run bundles described in the module docstring, oldest first.
    Deterministic: every call returns equal data."""
    rng = random.Random(SEED)
    return [_run(i, rng) for i in range(1, 9)]
