#!/usr/bin/env python3
"""Regenerate foldbot's embedded example data under ``bot/example/``.

Writes, deterministically (fixed seed, no clock):

* ``bot/example/runs/run-<id>.json``: 5 run bundles of the "PR Test ROCm 7.1
  (AMD)" lane (``.github/workflows/pr-test-amd-rocm710.yml``) of the imaginary
  project ``tinyserve/tinyserve``, runs 9100000001..9100000005, one day apart
  from 2026-08-10T10:00:00Z, all ``pull_request``;
* ``bot/example/logs/<job id>.log``: the plain-text log of shard 0 of
  ``integration-test-1-gpu-amd-rocm710`` in the last run.

What the runs show (the story foldbot should find):

* ``unit-test-amd-rocm710 (linux-mi300-1gpu-tiny)``: 60-90 min of setup for
  3-5 min of tests (a fold candidate);
* ``integration-test-1-gpu-amd-rocm710 (linux-mi300-1gpu-tiny, P)``, P = 0..3:
  60-90 min of setup each for 8-12 min of tests under a 90 min timeout
  (over-sharded: 1 or 2 shards would do).  The per-shard test time is the sum of
  the measured per-file times of the 16-file suite below, split 4 ways by LPT
  on ``est_time``; the log's plan, ``End (i/n)`` lines and TIMINGS block are
  the same numbers;
* ``model-test-2-gpu-amd-rocm710 (linux-mi300-2gpu-tiny, P)``, P = 0..1: 60-90
  min of setup, 50-70 min of tests (not reducible); skipped in run 2
  (9100000002), whose PR does not touch model code;
* ``check-changes`` and ``pr-test-amd-rocm710-finish`` on ubuntu-latest.

Usage: ``.venv/bin/python tests/make_example.py`` from the repo root.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.builders import (  # noqa: E402
    JobSpec, Step, amd_job, bundle, job, pull_request_minimal, skipped_job, write_bundles,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "bot" / "example"
RUNS_DIR = EXAMPLE / "runs"
LOGS_DIR = EXAMPLE / "logs"

SEED = 710
REPO = "tinyserve/tinyserve"
WORKFLOW_PATH = ".github/workflows/pr-test-amd-rocm710.yml"
WORKFLOW_NAME = "PR Test ROCm 7.1 (AMD)"
FIRST_RUN_ID = 9100000001
N_RUNS = 5
FIRST_START = datetime(2026, 8, 10, 10, 0, 0, tzinfo=timezone.utc)
LANE = "rocm710"
ARCH = "mi300"
LABEL_1GPU = f"linux-{ARCH}-1gpu-tiny"
LABEL_2GPU = f"linux-{ARCH}-2gpu-tiny"
UNIT = f"unit-test-amd-{LANE}"
INTEG = f"integration-test-1-gpu-amd-{LANE}"
MODEL = f"model-test-2-gpu-amd-{LANE}"
FINISH = f"pr-test-amd-{LANE}-finish"
INTEG_PARTS = 4
MODEL_PARTS = 2
MODEL_SKIPPED_IN_RUN = 2  # 1-based run index
LOG_RUN = N_RUNS  # log of the last run ...
LOG_PART = 0  # ... shard 0 of the integration job

#: The integration-1-gpu suite: file -> est_time (seconds) as registered.
SUITE: dict[str, float] = {
    "test/integration/test_abort_requests.py": 61.5,
    "test/integration/test_batching.py": 290,
    "test/integration/test_chunked_prefill.py": 270,
    "test/integration/test_health_endpoints.py": 60,
    "test/integration/test_long_context.py": 78,
    "test/integration/test_lora_adapters.py": 310,
    "test/integration/test_metrics.py": 62,
    "test/integration/test_multi_turn.py": 68,
    "test/integration/test_openai_api.py": 146.5,
    "test/integration/test_prefix_cache.py": 216,
    "test/integration/test_quantized_fp8.py": 132,
    "test/integration/test_sampling.py": 112,
    "test/integration/test_speculative.py": 164,
    "test/integration/test_streaming.py": 186,
    "test/integration/test_structured_output.py": 94,
    "test/integration/test_tokenizer_server.py": 60,
}

_PRS = (  # (number, head ref, title, author)
    (4101, "sched/fair-share-prefill", "scheduler: fair-share chunked prefill across requests", "kvcache-kid"),
    (4102, "api/stop-sequences", "openai api: honour stop sequences in streaming mode", "tokenwise"),
    (4103, "models/qwen-rope-scaling", "models: YaRN rope scaling for Qwen-style configs", "rocm-tinkerer"),
    (4104, "cache/radix-evict-lru", "prefix cache: LRU eviction for radix tree leaves", "kvcache-kid"),
    (4105, "kernels/fp8-gemm-tuning", "kernels: retune FP8 GEMM tiles for MI300", "rocm-tinkerer"),
)


def lpt(est: dict[str, float], parts: int) -> list[list[str]]:
    """LPT split: files by est_time descending (ties keep dict order), each to
    the partition with the least total so far, ties to the lowest index."""
    totals = [0.0] * parts
    out: list[list[str]] = [[] for _ in range(parts)]
    for f in sorted(est, key=lambda f: -est[f]):
        i = min(range(parts), key=lambda k: (totals[k], k))
        totals[i] += est[f]
        out[i].append(f)
    return out


PARTITIONS = lpt(SUITE, INTEG_PARTS)


def measure_partition(rng: random.Random, part: int) -> tuple[list[tuple[str, float]], int]:
    """Measured (file, elapsed s) of one shard and the test step's length in
    whole seconds (elapsed sum plus startup/teardown overhead)."""
    files = [(f, round(SUITE[f] * rng.uniform(0.8, 1.2), 1)) for f in PARTITIONS[part]]
    overhead = rng.uniform(15, 40)
    return files, round(sum(e for _, e in files) + overhead + 0.5)


def _sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def build() -> tuple[list[dict], dict]:
    """The bundles and, for the logged job, its measured files."""
    rng = random.Random(SEED)
    bundles = []
    logged: dict = {}
    for index in range(1, N_RUNS + 1):
        number, head_ref, title, author = _PRS[index - 1]
        run_id = FIRST_RUN_ID + index - 1
        head_sha = _sha(REPO, number, head_ref)
        changes = job("check-changes", [
            Step("Set up job", 0.05),
            Step("Checkout code", 0.15 + rng.uniform(0, 0.1)),
            Step("Detect file changes", 0.1 + rng.uniform(0, 0.1)),
            Step("Post Checkout code", 0.02),
            Step("Complete job", 0.02),
        ], ["ubuntu-latest"], queue_minutes=0.1 + rng.uniform(0, 0.2))
        after = changes.end_minutes

        def gpu(name: str, label: str, test_step: str, minutes: float, **kw) -> JobSpec:
            return amd_job(name, labels=[label], setup_minutes=rng.uniform(60, 90),
                           tests=[(test_step, minutes)], download_artifacts=None,
                           queue_minutes=rng.uniform(1, 10), after_minutes=after, **kw)

        jobs = [changes, gpu(f"{UNIT} ({LABEL_1GPU})", LABEL_1GPU, "Run unit tests",
                             rng.uniform(3, 5), teardown=())]
        for part in range(INTEG_PARTS):
            files, seconds = measure_partition(rng, part)
            if index == LOG_RUN and part == LOG_PART:
                logged = {"position": len(jobs), "files": files}
            jobs.append(gpu(f"{INTEG} ({LABEL_1GPU}, {part})", LABEL_1GPU, "Run integration tests",
                            seconds / 60, extra_setup=["Warm model cache"], teardown=["Upload logs"]))
        for part in range(MODEL_PARTS):
            if index == MODEL_SKIPPED_IN_RUN:
                # A skipped matrix job is a single job; shown once, without the matrix value.
                if part == 0:
                    jobs.append(skipped_job(f"{MODEL} ({LABEL_2GPU})", after_minutes=after))
                continue
            jobs.append(gpu(f"{MODEL} ({LABEL_2GPU}, {part})", LABEL_2GPU, "Run model tests",
                            rng.uniform(50, 70), teardown=()))
        jobs.append(job(FINISH, [
            Step("Set up job", 0.05),
            Step("Check all dependent job statuses", 0.05 + rng.uniform(0, 0.05)),
            Step("Complete job", 0.02),
        ], ["ubuntu-latest"], queue_minutes=0.1 + rng.uniform(0, 0.1),
            after_minutes=max(j.end_minutes for j in jobs)))
        b = bundle(
            run_id=run_id, repo=REPO, workflow_path=WORKFLOW_PATH, workflow_name=WORKFLOW_NAME,
            head_sha=head_sha, jobs=jobs, event="pull_request",
            start=FIRST_START + timedelta(days=index - 1),
            pull_requests=[pull_request_minimal(REPO, number, head_ref=head_ref, head_sha=head_sha,
                                                base_sha=_sha(REPO, "main", index))],
            display_title=title, actor=author, run_number=880 + index,
        )
        if index == LOG_RUN:
            logged["job"] = b["jobs"][logged["position"]]
            logged["bundle"] = b
        bundles.append(b)
    return bundles, logged


# ----------------------------------------------------------------------------- log


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


class _Log:
    """Accumulates ``<timestamp> <text>`` lines, timestamps with 7-digit
    fractions (100 ns ticks), a few ms of jitter, never going backwards."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.last_tick = 0

    def at(self, t: datetime, *texts: str) -> None:
        base = round(t.timestamp() * 10_000_000)
        for text in texts:
            tick = max(base + self.rng.randrange(150_000), self.last_tick + 1)
            self.last_tick = tick
            secs, frac = divmod(tick, 10_000_000)
            stamp = datetime.fromtimestamp(secs, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
            self.lines.append(f"{stamp}.{frac:07d}Z {text}")

    def spread(self, start: datetime, end: datetime, texts: list[str]) -> None:
        """Lines evenly over [start, end)."""
        span = max(0.0, (end - start).total_seconds() - 1)
        n = max(1, len(texts))
        for i, text in enumerate(texts):
            self.at(start + timedelta(seconds=int(span * i / n)), text)


def write_log(logged: dict) -> Path:
    job_obj, run = logged["job"], logged["bundle"]["workflow_run"]
    files: list[tuple[str, float]] = logged["files"]
    steps = {s["name"]: (_parse(s["started_at"]), _parse(s["completed_at"])) for s in job_obj["steps"]}
    rng = random.Random(f"{SEED}-log")
    log = _Log(rng)
    sha = run["head_sha"]
    image = f"rocm/tinyserve-ci:{LANE}-{ARCH}-20260809"

    s, e = steps["Set up job"]
    log.spread(s, e, [
        "Current runner version: '2.329.0'",
        f"Runner name: '{job_obj['runner_name']}'",
        f"Runner group name: '{job_obj['runner_group_name']}'",
        f"Machine name: '{job_obj['runner_name'].replace('linux-', '')}'",
        "##[group]GITHUB_TOKEN Permissions",
        "Contents: read",
        "Metadata: read",
        "##[endgroup]",
        "Secret source: Actions",
        "Prepare workflow directory",
        "Prepare all required actions",
        "Getting action download info",
        "Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)",
        "Download action repository 'actions/upload-artifact@v4' (SHA:ea165f8d65b6e75b540449e92b4886f43607fa02)",
        f"Complete job name: {job_obj['name']}",
    ])
    s, e = steps["Checkout code"]
    log.spread(s, e, [
        "##[group]Run actions/checkout@v4",
        "with:",
        f"  ref: {sha}",
        f"  repository: {REPO}",
        "  fetch-depth: 1",
        "##[endgroup]",
        f"Syncing repository: {REPO}",
        "##[group]Getting Git version info",
        "git version 2.43.0",
        "##[endgroup]",
        "Deleting the contents of '/home/runner/_work/tinyserve/tinyserve'",
        "##[group]Fetching the repository",
        f"/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin {sha}",
        f" * branch            {sha} -> FETCH_HEAD",
        "##[endgroup]",
        "##[group]Checking out the ref",
        f"/usr/bin/git checkout --progress --force {sha}",
        f"HEAD is now at {sha[:7]} {run['display_title']}",
        "##[endgroup]",
    ])
    s, e = steps["Ensure VRAM is clear"]
    log.spread(s, e, [
        "##[group]Run bash scripts/ci/amd/check_gpu_idle.sh",
        "\x1b[36;1mbash scripts/ci/amd/check_gpu_idle.sh\x1b[0m",
        "shell: /usr/bin/bash -e {0}",
        "##[endgroup]",
        "Checking for leftover GPU processes...",
        "GPU[0]\t\t: VRAM Total Memory (B): 205822885888",
        "GPU[0]\t\t: VRAM Total Used Memory (B): 283115520",
        "No leftover processes; VRAM is clear.",
    ])
    s, e = steps["Start CI container"]
    layers = [_sha("layer", i)[:12] for i in range(9)]
    pull = [f"Pulling image {image}", f"{LANE}-{ARCH}-20260809: Pulling from rocm/tinyserve-ci"]
    pull += [f"{lid}: Pulling fs layer" for lid in layers]
    pull += [f"{lid}: Waiting" for lid in layers[3:]]
    for lid in layers:
        pull += [f"{lid}: Verifying Checksum", f"{lid}: Download complete"]
    pull += [f"{lid}: Pull complete" for lid in layers]
    pull += [
        f"Digest: sha256:{_sha('digest', image)}{_sha('digest2', image)[:24]}",
        f"Status: Downloaded newer image for {image}",
        f"docker.io/{image}",
        f"{_sha('container', run['id'])}{_sha('container2', run['id'])[:24]}",
        "Container ci_tinyserve is up (devices: /dev/kfd /dev/dri/renderD128)",
    ]
    log.spread(s, e, [
        f"##[group]Run bash scripts/ci/amd/start_container.sh --rocm-version {LANE}",
        f"\x1b[36;1mbash scripts/ci/amd/start_container.sh --rocm-version {LANE}\x1b[0m",
        "shell: /usr/bin/bash -e {0}",
        "env:",
        "  GITHUB_WORKSPACE: /home/runner/_work/tinyserve/tinyserve",
        "##[endgroup]",
        *pull,
    ])
    s, e = steps["Install dependencies"]
    pkgs = [("torch-2.9.1+rocm7.1", "4213.6 MB"), ("triton-3.5.1", "262.4 MB"), ("transformers-4.57.1", "11.9 MB"),
            ("safetensors-0.6.2", "0.5 MB"), ("fastapi-0.121.0", "0.1 MB"), ("uvicorn-0.38.0", "0.1 MB")]
    install = ["Obtaining file:///tinyserve", "  Installing build dependencies: started",
               "  Installing build dependencies: finished with status 'done'"]
    for p, size in pkgs:
        name = p.split("-")[0]
        install += [f"Collecting {name}", f"  Downloading {p}-cp312-cp312-linux_x86_64.whl ({size})"]
    install += [
        "Building wheels for collected packages: tinyserve",
        "  Building editable for tinyserve (pyproject.toml): finished with status 'done'",
        "Installing collected packages: safetensors, uvicorn, fastapi, triton, torch, transformers, tinyserve",
        "Successfully installed " + " ".join(p for p, _ in pkgs) + " tinyserve-0.9.0.dev0",
    ]
    log.spread(s, e, ["##[group]Run bash scripts/ci/amd/install_tinyserve.sh",
                      "\x1b[36;1mbash scripts/ci/amd/install_tinyserve.sh\x1b[0m",
                      "shell: /usr/bin/bash -e {0}", "##[endgroup]", *install])
    s, e = steps["Warm model cache"]
    log.spread(s, e, [
        "##[group]Run docker exec ci_tinyserve python3 scripts/ci/warm_model_cache.py --suite integration-1-gpu",
        "\x1b[36;1mdocker exec ci_tinyserve python3 scripts/ci/warm_model_cache.py --suite integration-1-gpu\x1b[0m",
        "shell: /usr/bin/bash -e {0}",
        "##[endgroup]",
        "cache hit: tinyserve-test/tiny-llama-160m (312 MB)",
        "cache hit: tinyserve-test/tiny-llama-160m-lora (9 MB)",
        "cache hit: tinyserve-test/tiny-mistral-fp8 (188 MB)",
        "3 models ready in /data/hf-cache",
    ])

    # --- the test step: plan, per-file results, TIMINGS block
    s, e = steps["Run integration tests"]
    cmd = (f"docker exec -w /tinyserve/test ci_tinyserve python3 run_suite.py --suite integration-1-gpu "
           f"--partition-id {LOG_PART} --total-partitions {INTEG_PARTS}")
    t = s
    log.at(t, "##[group]Run # run_suite.py prints its partition plan and a TIMINGS block for the log parser",
           "\x1b[36;1m# run_suite.py prints its partition plan and a TIMINGS block for the log parser\x1b[0m",
           f"\x1b[36;1m{cmd}\x1b[0m", "shell: /usr/bin/bash -e {0}", "##[endgroup]")
    t += timedelta(seconds=2)
    log.at(t, f"[run_suite] suite=integration-1-gpu files={len(SUITE)} partitions={INTEG_PARTS} "
              f"partition_id={LOG_PART} (LPT on est_time)")
    for f, est in SUITE.items():
        log.at(t, f"[run_suite] est_time={est:g} file={f}")
    mine = PARTITIONS[LOG_PART]
    log.at(t, f"[run_suite] partition {LOG_PART}: {len(mine)} files, "
              f"est {sum(SUITE[f] for f in mine):g}s")
    overhead = (e - s).total_seconds() - sum(el for _, el in files)
    t += timedelta(seconds=max(1.0, overhead - 6))  # server warm-up before the first file
    for i, (f, elapsed) in enumerate(files, start=1):
        log.at(t, f"Begin ({i}/{len(files)}): python3 -m pytest -q {f}")
        n_tests = 4 + int(SUITE[f] // 40)
        log.at(t + timedelta(seconds=3), "============================= test session starts ==============================",
               f"collected {n_tests} items")
        t += timedelta(seconds=elapsed)
        log.at(t - timedelta(seconds=1),
               f"{f.split('/')[-1]} {'.' * n_tests}{' ' * max(1, 40 - n_tests)}[100%]",
               f"============================== {n_tests} passed in {elapsed - 4:.2f}s ==============================")
        log.at(t, f"End ({i}/{len(files)}): filename={f}, elapsed={round(elapsed)}")
    log.at(t + timedelta(seconds=1), f"[run_suite] partition {LOG_PART} done: {len(files)} passed, 0 failed")
    log.at(e - timedelta(seconds=1), "TIMINGS BEGIN",
           *(json.dumps({"file": f, "elapsed": el, "partition": LOG_PART}) for f, el in files),
           "TIMINGS END")

    s, e = steps["Upload logs"]
    art = f"integration-logs-{LOG_PART}-1"
    artifact_id = 3907700000 + run["id"] % 100000
    log.spread(s, e, [
        "##[group]Run actions/upload-artifact@v4",
        "with:",
        f"  name: {art}",
        "  path: test/logs/",
        "  if-no-files-found: ignore",
        "  retention-days: 7",
        "##[endgroup]",
        f"With the provided path, there will be {len(files) + 1} files uploaded",
        "Artifact name is valid!",
        "Root directory input is valid!",
        f"Artifact {art}.zip successfully finalized. Artifact ID {artifact_id}",
        f"Artifact {art} has been successfully uploaded! Final size is 48213 bytes. Artifact ID is {artifact_id}",
    ])
    s, e = steps["Post Checkout code"]
    log.spread(s, e, ["Post job cleanup.", "[command]/usr/bin/git version", "git version 2.43.0",
                      "[command]/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand"])
    s, e = steps["Complete job"]
    log.spread(s, e, ["Cleaning up orphan processes"])

    LOGS_DIR.mkdir(parents=True, exist_ok=True)
    path = LOGS_DIR / f"{job_obj['id']}.log"  # `foldbot analyze` takes the job id from the file stem
    path.write_text("\n".join(log.lines) + "\n", encoding="utf-8")
    return path


def check(bundles: list[dict], logged: dict) -> None:
    """Assert the numbers the docstring promises."""
    for b in bundles:
        for j in b["jobs"]:
            for s in j["steps"]:
                if s["name"] == "Run integration tests":
                    minutes = (_parse(s["completed_at"]) - _parse(s["started_at"])).total_seconds() / 60
                    assert 8 <= minutes <= 12, (j["name"], minutes)
    for f, el in logged["files"]:
        assert 0.7 * SUITE[f] <= el <= 1.3 * SUITE[f]
    assert all(60 <= v <= 400 for v in SUITE.values())


def main() -> None:
    bundles, logged = build()
    check(bundles, logged)
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    for old in RUNS_DIR.glob("run-*.json"):
        old.unlink()
    for old in LOGS_DIR.glob("*.log"):
        if old.stem.isdigit():
            old.unlink()
    for p in write_bundles(RUNS_DIR, bundles):
        print(p.relative_to(ROOT))
    print(write_log(logged).relative_to(ROOT))


if __name__ == "__main__":
    main()
