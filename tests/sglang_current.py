"""Generated runs of SGLang's *current* AMD lanes, with job logs in the format its runners print.

The lanes are ``pr-test-amd.yml`` and ``pr-test-amd-rocm720.yml`` of
``../shared/fixtures/sglang/workflows/``; the per-file estimates are
``amd-suite-est-times.json`` (the ``est_time`` of every enabled per-commit
``register_amd_ci(...)`` call at the same commit).  Everything here is read from
those files with plain YAML, not with foldbot's code, so a test that compares the two
checks foldbot against an independent reading.

A run is a full run of the lane (every GPU job runs, as on a ``schedule`` run or a PR
that touches the main package):

* every GPU job of the file, each matrix combination one API job, named as GitHub
  renders it (the job's ``name:`` template evaluated with ``runner_arch`` mi300 and the
  matrix values, else ``<job id> (<matrix values>)``), labelled with its evaluated
  ``runs-on``;
* the steps are the file's steps under the names GitHub shows (``name:``, else
  ``Run <uses>`` / ``Run <first line of run>``), between ``Set up job`` and ``Post
  <name>`` of each ``uses:`` step / ``Complete job``; a step whose ``if:`` needs
  ``matrix.part == 0`` is skipped on the other shards, an ``if: failure()`` one in a
  passing job;
* setup: ``Start CI container`` (or another ``Start ...container`` / ``Setup docker`` step)
  27-97 min, ``Install dependencies`` 23-98 min, other steps before the test 5-90 s;
* a ``run_suite.py --suite S`` step with estimates for ``S`` runs the files SGLang's
  runner assigns to its shard (``auto_partition``: LPT over the estimates in file
  order, ties to the lowest shard), each taking its estimate times 0.85-1.15 plus 5-25 s
  between files; 2 % of files fail once and pass on a ``[CI Retry]``; a step that would
  pass its ``timeout-minutes`` is cut there (conclusion failure, the running file never
  ends, no TIMINGS block);
* other test steps (suites without estimates, the multimodal-gen runner, the
  accuracy tests) take a fixed number of minutes per job (``_FIXED_TEST_MINUTES``)
  times 0.9-1.1, and print no per-file times;
* ``check-changes``, ``wait-for-*`` and the ``*-finish`` job run on ubuntu-latest;
  reusable-workflow jobs (``call-*``) appear as skipped.

``history(lane)`` returns the run bundles, oldest first, and the text of each
shard-job log by API job id.  Deterministic per ``seed``.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import yaml

from tests.builders import JobSpec, Step, bundle, job, skipped_job
from tests.paths import SGLANG

__all__ = ["GpuJob", "LANES", "auto_partition", "estimates", "gpu_jobs", "history", "workflow_text"]

REPO = "sgl-project/sglang"
LANES = {
    "rocm720": (".github/workflows/pr-test-amd-rocm720.yml", "PR Test ROCm 7.2 (AMD)"),
    "amd": (".github/workflows/pr-test-amd.yml", "PR Test (AMD)"),
}
RUNNER_ARCH = "mi300"
START = datetime(2026, 11, 2, 6, 0, 0, tzinfo=timezone.utc)
FIRST_RUN_ID = 25100000001
RETRY_RATE = 0.02

#: Test-step minutes of jobs whose tests have no per-file estimates, by job-id prefix.
_FIXED_TEST_MINUTES = {
    "sgl-kernel-unit-test-amd": 14.0,
    "sgl-kernel-unit-test-2-gpu-amd": 9.0,
    "jit-kernel-benchmark-test-amd": 6.0,
    "multimodal-gen-test-1-gpu-amd": 44.0,
    "multimodal-gen-test-2-gpu-amd": 56.0,  # the file says "45-65 min of case work each"
    "stage-c-dsv4-flash-fp4-fp8-amd-mi35x": 24.0,
    "stage-c-dsv4-pro-fp4-amd-mi35x": 27.0,
    "stage-b-test-large-8-gpu-mi35x-disaggregation-amd": 41.0,
}
_UNIT_TEST_MINUTES = 3.5  # the multimodal-gen `unit` suite on shard 0


def workflow_text(lane: str) -> str:
    return (SGLANG / "workflows" / LANES[lane][0].rsplit("/", 1)[1]).read_text(encoding="utf-8")


def estimates() -> dict[str, list[tuple[str, float]]]:
    """Suite -> [(file, est seconds)] in registration order."""
    data = json.loads((SGLANG / "amd-suite-est-times.json").read_text(encoding="utf-8"))
    return {suite: [(f["file"], float(f["est_time_s"])) for f in files] for suite, files in data["suites"].items()}


def auto_partition(files: list[tuple[str, float]], rank: int, size: int) -> list[tuple[str, float]]:
    """The files of shard ``rank`` of ``size``, as SGLang's ``auto_partition`` assigns them:
    heaviest first (file order breaks ties), each to the least-loaded shard (lowest id on a tie)."""
    if size <= 0 or size > len(files):
        return []
    order = sorted(range(len(files)), key=lambda i: (-files[i][1], i))
    heap = [(0.0, shard) for shard in range(size)]
    assigned: list[list[int]] = [[] for _ in range(size)]
    for i in order:
        load, shard = heapq.heappop(heap)
        assigned[shard].append(i)
        heapq.heappush(heap, (load + files[i][1], shard))
    return [files[i] for i in assigned[rank]]


# --------------------------------------------------------------------------- the workflow, read plainly

_FORMAT = re.compile(r"^\$\{\{\s*format\('(?P<tpl>[^']*)'(?P<args>(?:\s*,\s*[^,]+?)*)\s*\)\s*\}\}$")
_EXPR = re.compile(r"^\$\{\{\s*(?P<e>.+?)\s*\}\}$")


def _value(expr: str, matrix: dict[str, Any]) -> str:
    expr = expr.strip()
    if expr.startswith("matrix."):
        return str(matrix[expr.split(".", 1)[1]])
    if "||" in expr:  # inputs.runner_arch || 'mi300': the input is empty on pull_request runs
        return expr.rsplit("||", 1)[1].strip().strip("'")
    return expr.strip("'")


def _render(text: str, matrix: dict[str, Any]) -> str:
    m = _FORMAT.match(text.strip())
    if m:
        args = [_value(a, matrix) for a in m["args"].split(",")[1:]] if m["args"] else []
        return re.sub(r"\{(\d+)\}", lambda g: args[int(g[1])], m["tpl"])
    m = _EXPR.match(text.strip())
    return _value(m["e"], matrix) if m else text


@dataclass(frozen=True)
class GpuJob:
    """One API job of a GPU job of the lane file."""

    job_id: str
    name: str
    label: str
    matrix: tuple[tuple[str, Any], ...]
    steps: tuple[dict[str, Any], ...]
    suite: str | None
    partitions: int

    @property
    def part(self) -> int:
        return int(dict(self.matrix).get("part", 0))


def _combinations(job: dict[str, Any]) -> list[dict[str, Any]]:
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    combos: list[dict[str, Any]] = [{}]
    for key, values in matrix.items():
        combos = [{**c, key: v} for c in combos for v in values]
    return combos


def gpu_jobs(text: str) -> list[GpuJob]:
    """Every GPU API job of a lane file, in file order."""
    out = []
    for job_id, spec in yaml.safe_load(text)["jobs"].items():
        runs_on = spec.get("runs-on")
        if runs_on is None or runs_on == "ubuntu-latest":
            continue
        runs = " ".join(str(s.get("run", "")) for s in spec.get("steps", []))
        suite = re.search(r"run_suite\.py\s+--hw amd\s+--suite\s+(\S+)", runs) or re.search(
            r"python3 run_suite\.py\s*\\?\s*--hw amd\s*\\?\s*--suite\s+(\S+)", runs)
        size = re.search(r"--auto-partition-size\s+(\d+)", runs)
        for combo in _combinations(spec):
            name = (_render(spec["name"], combo) if "name" in spec
                    else f"{job_id} ({', '.join(str(v) for v in combo.values())})" if combo else job_id)
            out.append(GpuJob(job_id, name, _render(str(runs_on), combo), tuple(combo.items()),
                              tuple(spec.get("steps", [])), suite[1] if suite else None,
                              int(size[1]) if size else 1))
    return out


def _display_name(step: dict[str, Any]) -> str:
    if "name" in step:
        return str(step["name"])
    if "uses" in step:
        return f"Run {step['uses']}"
    return f"Run {str(step.get('run', '')).strip().splitlines()[0]}"


def _is_test(step: dict[str, Any]) -> bool:
    run = str(step.get("run", ""))
    return "run_suite.py" in run or "pytest" in run or str(step.get("name", "")).startswith(("Run ", "Accuracy Test"))


def _timeout(step: dict[str, Any]) -> float | None:
    value = step.get("timeout-minutes")
    if value is None:
        return None
    if isinstance(value, int):
        return float(value)
    m = re.search(r"== 'mi300' && (\d+)", str(value))  # ${{ (inputs.runner_arch || 'mi300') == 'mi300' && 75 || 60 }}
    return float(m[1]) if m else None


def _skipped(step: dict[str, Any], part: int) -> bool:
    cond = str(step.get("if", ""))
    if "matrix.part == 0" in cond and part != 0:
        return True
    if "sgl_kernel == 'true'" in cond:  # Download artifacts: the runs do not touch sgl-kernel
        return True
    return "failure()" in cond and "success()" not in cond and "always()" not in cond


# --------------------------------------------------------------------------- one job of one run

def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond * 10:07d}Z"


@dataclass
class _Shard:
    files: list[tuple[str, float]]
    log: list[str]
    seconds: float
    cut: bool


def _run_shard(rng: random.Random, gpu: GpuJob, files: list[tuple[str, float]], start: datetime,
               timeout_s: float | None) -> _Shard:
    """The test step of one shard: its log lines (timestamped from ``start``) and duration."""
    t = start + timedelta(seconds=rng.uniform(3, 9))
    lines: list[str] = []

    def say(text: str) -> None:
        lines.append(f"{_stamp(t)} {text}")

    head = f"{gpu.part + 1}/{gpu.partitions} (0-based id={gpu.part})" if gpu.partitions > 1 else "full"
    say(f"Suite: {gpu.suite}, partition: {head}")
    say(f"✅ Enabled {len(files)} test(s) (est total {sum(e for _, e in files):.1f}s):")
    for name, est in files:
        say(f"  - /sglang-checkout/{name} (est_time={est:.1f})")
    timings: list[dict[str, Any]] = []
    cut = False
    limit = start + timedelta(seconds=timeout_s) if timeout_s else None
    for i, (name, est) in enumerate(files):
        attempts = 2 if rng.random() < RETRY_RATE else 1
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                say(f"[CI Retry] Attempt {attempt}/2 for /sglang-checkout/{name}")
            elapsed = round(est * rng.uniform(0.85, 1.15) * (rng.uniform(0.3, 0.9) if attempt < attempts else 1.0))
            say(".")
            say(f"Begin ({i}/{len(files) - 1}):")
            say(f"python3 /sglang-checkout/{name}")
            say(".")
            if limit is not None and t + timedelta(seconds=elapsed) > limit:
                t = limit
                say("##[error]The action 'Run test' has timed out after "
                    f"{round(timeout_s / 60)} minutes.")  # type: ignore[operator]
                cut = True
                break
            t += timedelta(seconds=elapsed)
            say(".")
            say(f"End ({i}/{len(files) - 1}):")
            say(f"filename='/sglang-checkout/{name}', elapsed={elapsed}, estimated_time={est:.1f}")
            say(".")
            if attempt < attempts:
                say(f"✗ FAILED: /sglang-checkout/{name} returned exit code 1")
            elif attempts > 1:
                say(f"✓ PASSED on retry (attempt {attempt}/2): /sglang-checkout/{name}")
        if cut:
            break
        timings.append({"file": f"/sglang-checkout/{name}", "passed": True, "elapsed": elapsed})
        t += timedelta(seconds=rng.uniform(5, 25))
    if not cut:
        say(f"Success. Time elapsed: {(t - start).total_seconds():.2f}s")
        say(f"Test Summary: {len(files)}/{len(files)} passed")
        say("========== TIMINGS BEGIN ==========")
        for entry in timings:
            say(json.dumps(entry))
        say("========== TIMINGS END ==========")
    return _Shard(files, lines, (t - start).total_seconds(), cut)


def _gpu_job(rng: random.Random, gpu: GpuJob, suites: dict[str, list[tuple[str, float]]], *,
             started: datetime, after: float, queue: float) -> tuple[JobSpec, list[str] | None]:
    steps = [Step("Set up job", rng.uniform(0.05, 0.2))]
    clock = started + timedelta(seconds=round(steps[0].minutes * 60))
    posts: list[str] = []
    log: list[str] | None = None
    conclusion = "success"
    first_test = next(i for i, s in enumerate(gpu.steps) if _is_test(s))
    for i, raw in enumerate(gpu.steps):
        name = _display_name(raw)
        if _skipped(raw, gpu.part):
            steps.append(Step(name, 0.0, "skipped"))
            continue
        if "uses" in raw and str(raw["uses"]).startswith("actions/checkout"):
            posts.append(f"Post {name}")
        if i < first_test:
            low = name.lower()
            minutes = (rng.uniform(27, 97) if low.startswith(("start", "setup docker")) and ("container" in low or "docker" in low)
                       else rng.uniform(23, 98) if low.startswith("install dependencies")
                       else rng.uniform(5, 90) / 60)
            step_conclusion = "success"
        elif not _is_test(raw):
            minutes, step_conclusion = rng.uniform(3, 20) / 60, "success"
        elif gpu.suite in suites and "run_suite.py" in str(raw.get("run", "")) and i == first_test:
            files = auto_partition(suites[gpu.suite], gpu.part, gpu.partitions)
            timeout = _timeout(raw)
            shard = _run_shard(rng, gpu, files, clock, timeout * 60 if timeout else None)
            minutes = shard.seconds / 60
            log = shard.log
            step_conclusion = "failure" if shard.cut else "success"
        else:
            base = _UNIT_TEST_MINUTES if "--suite unit" in str(raw.get("run", "")) else next(
                (m for prefix, m in _FIXED_TEST_MINUTES.items() if gpu.job_id.startswith(prefix)), 10.0)
            if (_timeout(raw) or 99) <= 15:  # a quick check before the tests (aiter's RMSNorm op test)
                base = 0.3 * _timeout(raw)  # type: ignore[operator]
            minutes, step_conclusion = base * rng.uniform(0.9, 1.1), "success"
        if conclusion == "failure" and i > first_test and "always()" not in str(raw.get("if", "")):
            steps.append(Step(name, 0.0, "skipped"))
            continue
        steps.append(Step(name, minutes, step_conclusion))
        clock += timedelta(seconds=round(minutes * 60))
        if step_conclusion == "failure":
            conclusion = "failure"
    steps += [Step(p, rng.uniform(1, 4) / 60) for p in reversed(posts)]
    steps.append(Step("Complete job", 1 / 60))
    spec = job(gpu.name, steps, [gpu.label], conclusion, queue_minutes=queue, after_minutes=after)
    return spec, log


def _hosted(name: str, rng: random.Random, *, after: float, steps: tuple[str, ...]) -> JobSpec:
    return job(name, [Step("Set up job", 0.05)] + [Step(s, rng.uniform(0.05, 0.6)) for s in steps]
               + [Step("Complete job", 0.02)], ["ubuntu-latest"], queue_minutes=rng.uniform(0.1, 0.3),
               after_minutes=after)


def _run(lane: str, index: int, rng: random.Random, gpus: list[GpuJob],
         suites: dict[str, list[tuple[str, float]]]) -> tuple[dict[str, Any], dict[int, str]]:
    path, workflow_name = LANES[lane]
    run_id = FIRST_RUN_ID + index + (0 if lane == "rocm720" else 500)
    start = START + timedelta(hours=6 * index)
    head_sha = hashlib.sha1(f"sglang-main-{index}".encode()).hexdigest()
    doc = yaml.safe_load(workflow_text(lane))["jobs"]
    changes = _hosted("check-changes", rng, after=0.0,
                      steps=("Checkout code", "Determine run mode", "Detect file changes", "Post Checkout code"))
    gpu_after = changes.end_minutes
    specs: list[JobSpec] = []
    logs_by_name: dict[str, list[str]] = {}
    for job_id in doc:
        if "uses" in doc[job_id]:
            specs.append(skipped_job(job_id if job_id != "call-gate" else "call-gate / pr-gate", after_minutes=0.0))
        elif job_id == "check-changes":
            specs.append(changes)
        elif doc[job_id].get("runs-on") == "ubuntu-latest":
            last = max(s.end_minutes for s in specs)
            steps = ("Check all dependent job statuses",) if job_id.endswith("finish") else ("Wait for jobs",)
            specs.append(_hosted(job_id, rng, after=last, steps=steps))
        else:
            for gpu in (g for g in gpus if g.job_id == job_id):
                queue = rng.uniform(1, 20)
                started = START + timedelta(hours=6 * index, minutes=gpu_after + queue)
                spec, log = _gpu_job(rng, gpu, suites, started=started, after=gpu_after, queue=queue)
                specs.append(spec)
                if log is not None:
                    logs_by_name[gpu.name] = log
    made = bundle(run_id=run_id, repo=REPO, workflow_path=path, workflow_name=workflow_name, head_sha=head_sha,
                  jobs=specs, event="schedule", start=start, display_title=workflow_name, actor="github-actions",
                  head_branch="main")
    logs = {j["id"]: "\n".join(logs_by_name[j["name"]]) + "\n" for j in made["jobs"] if j["name"] in logs_by_name}
    return made, logs


def history(lane: str, runs: int = 4, seed: int = 35) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """``runs`` full runs of ``lane`` ("rocm720" or "amd"), oldest first, and the log of
    every job that ran a suite with per-file estimates, by API job id."""
    rng = random.Random(f"{lane}-{seed}")
    gpus = gpu_jobs(workflow_text(lane))
    suites = estimates()
    bundles: list[dict[str, Any]] = []
    logs: dict[int, str] = {}
    for index in range(runs):
        made, run_logs = _run(lane, index, rng, gpus, suites)
        bundles.append(made)
        logs.update(run_logs)
    return bundles, logs
