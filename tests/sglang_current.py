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

__all__ = ["GpuJob", "LANES", "STAGE_PATH", "STAGE_TEXT", "auto_partition", "estimates", "gpu_jobs", "history",
           "staged_text", "workflow_text"]

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


#: The reusable workflow SGLang's newer AMD lanes call for a suite's shards (`_pr-test-stage-amd.yml`, stored at
#: sgl-project/sglang@ccd8584b, newer than the fixtures), written here in brief: one job whose matrix is the shard
#: ids of the `partitions` JSON its caller passes, and whose test step hands their count to `--auto-partition-size`
#: through an environment variable. Its steps are those of the lanes' own 1-GPU matrix job (a failure's upload
#: after them), so a staged lane's runs take the times the lane written as a matrix takes (`history(staged=True)`).
STAGE_PATH = ".github/workflows/_pr-test-stage-amd.yml"
STAGE_TEXT = """name: PR Test Stage (AMD)

on:
  workflow_call:
    inputs:
      suite: {type: string, required: true}
      runner_arch: {type: string, required: true}
      gpu_count: {type: number, required: true}
      rocm_version: {type: string, required: true}
      partitions:
        description: 'JSON object with size and arr fields: {"size":3,"arr":[0,1,2]}.'
        type: string
        required: true
      max_parallel: {type: number, required: true}
      auto_partition: {type: boolean, default: true}
      checkout_ref: {type: string, required: true}
      run_timeout_minutes: {type: number, required: true}
      timeout_per_file: {type: number, default: 1200}

jobs:
  run:
    name: ${{ format('{0} ({1}, {2})', inputs.suite, format('linux-{0}-{1}gpu-sglang', inputs.runner_arch, inputs.gpu_count), matrix.partition) }}
    runs-on: ${{ format('linux-{0}-{1}gpu-sglang', inputs.runner_arch, inputs.gpu_count) }}
    timeout-minutes: 240
    strategy:
      fail-fast: false
      max-parallel: ${{ inputs.max_parallel }}
      matrix:
        partition: ${{ fromJson(inputs.partitions).arr }}
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
        with:
          ref: ${{ inputs.checkout_ref }}

      - name: Ensure VRAM is clear
        run: bash scripts/ci/amd/ensure_vram_clear.sh rocm

      - name: Start CI container
        run: bash scripts/ci/amd/amd_ci_start_container.sh --rocm-version ${{ inputs.rocm_version }}

      - name: Install dependencies
        run: bash scripts/ci/amd/amd_ci_install_dependency.sh

      - name: Run test
        timeout-minutes: ${{ inputs.run_timeout_minutes }}
        env:
          PARTITION_ARGS: ${{ inputs.auto_partition && format('--auto-partition-id {0} --auto-partition-size {1}', matrix.partition, fromJson(inputs.partitions).size) || '' }}
        run: |
          set -o pipefail
          bash scripts/ci/amd/amd_ci_exec.sh -w "/sglang-checkout/test" \\
            python3 run_suite.py --hw amd --suite ${{ inputs.suite }} $PARTITION_ARGS \\
              --timeout-per-file ${{ inputs.timeout_per_file }} 2>&1 | tee amd-ci-test.log

      - name: Upload failure log
        if: failure()
        uses: actions/upload-artifact@v4
        with:
          name: amd-ci-${{ inputs.suite }}-${{ matrix.partition }}
          path: amd-ci-test.log
"""


def staged_text(lane: str, job_id: str = "stage-b-test-1-gpu-small-amd") -> str:
    """The lane with its matrix job `job_id` (its id in the `amd` lane) turned into a caller of `STAGE_PATH`,
    as SGLang's lanes call it: the count passed as `partitions: '{"size":14,"arr":[0,...,13]}'`, the step's
    timeout and the matrix's `max-parallel` passed on; its `needs:` and `if:` kept, every other line as it was."""
    job_id += "-rocm720" if lane == "rocm720" else ""
    text = workflow_text(lane)
    spec = yaml.safe_load(text)["jobs"][job_id]
    lines = text.splitlines(keepends=True)
    start = lines.index(f"  {job_id}:\n")
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"  [^ \n]", lines[i]))
    while not lines[end - 1].strip():  # (the blank lines before the next job stay)
        end -= 1
    test = next(step for step in spec["steps"] if "run_suite.py" in str(step.get("run", "")))
    suite = re.search(r"--suite (\S+)", test["run"])[1]
    count = len(spec["strategy"]["matrix"]["part"])
    per_file = re.search(r"--timeout-per-file (\d+)", test["run"])[1]
    condition = "".join(f"      {line}\n" for line in spec["if"].strip().splitlines())
    caller = (f"  {job_id}:\n"
              f"    needs: [{', '.join(spec['needs'])}]\n"
              f"    if: |\n{condition}"
              f"    uses: ./{STAGE_PATH}\n"
              "    secrets: inherit\n"
              "    with:\n"
              f"      suite: {suite}\n"
              "      runner_arch: ${{ inputs.runner_arch || 'mi300' }}\n"
              "      gpu_count: 1\n"
              f"      rocm_version: {'rocm720' if lane == 'rocm720' else 'rocm700'}\n"
              f"      partitions: '{json.dumps({'size': count, 'arr': list(range(count))}, separators=(',', ':'))}'\n"
              f"      max_parallel: {spec['strategy'].get('max-parallel', count)}\n"
              "      checkout_ref: ${{ inputs.pr_head_sha || inputs.ref || github.sha }}\n"
              f"      run_timeout_minutes: {test['timeout-minutes']}\n"
              f"      timeout_per_file: {per_file}\n")
    return "".join(lines[:start]) + caller + "".join(lines[end:])


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
    """Every GPU API job of a lane file, in file order (of a caller of `STAGE_PATH`, each shard it runs there)."""
    out = []
    for job_id, spec in yaml.safe_load(text)["jobs"].items():
        if spec.get("uses") == f"./{STAGE_PATH}":
            out += _stage_shards(job_id, spec["with"])
            continue
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


def _stage_shards(job_id: str, given: dict[str, Any]) -> list[GpuJob]:
    """The shards a caller of `STAGE_PATH` runs there, named as GitHub shows a called job (`<caller> / <its
    name>`); the test step's timeout the one the caller passes."""
    partitions = json.loads(given["partitions"])
    label = f"linux-{_value(given['runner_arch'][3:-2], {})}-{given['gpu_count']}gpu-sglang"
    steps = tuple({**step, "timeout-minutes": given["run_timeout_minutes"]} if step.get("name") == "Run test" else step
                  for step in yaml.safe_load(STAGE_TEXT)["jobs"]["run"]["steps"])
    return [GpuJob(job_id, f"{job_id} / {given['suite']} ({label}, {part})", label, (("part", part),), steps,
                   given["suite"], partitions["size"]) for part in partitions["arr"]]


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
         suites: dict[str, list[tuple[str, float]]], text: str) -> tuple[dict[str, Any], dict[int, str]]:
    path, workflow_name = LANES[lane]
    run_id = FIRST_RUN_ID + index + (0 if lane == "rocm720" else 500)
    start = START + timedelta(hours=6 * index)
    head_sha = hashlib.sha1(f"sglang-main-{index}".encode()).hexdigest()
    doc = yaml.safe_load(text)["jobs"]
    changes = _hosted("check-changes", rng, after=0.0,
                      steps=("Checkout code", "Determine run mode", "Detect file changes", "Post Checkout code"))
    gpu_after = changes.end_minutes
    specs: list[JobSpec] = []
    logs_by_name: dict[str, list[str]] = {}
    for job_id in doc:
        if "uses" in doc[job_id] and doc[job_id]["uses"] != f"./{STAGE_PATH}":
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


def history(lane: str, runs: int = 4, seed: int = 35, staged: bool = False) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """``runs`` full runs of ``lane`` ("rocm720" or "amd"), oldest first, and the log of
    every job that ran a suite with per-file estimates, by API job id. ``staged``: of the lane
    as `staged_text` writes it (its 1-GPU shards run by `STAGE_PATH`, at the times they take
    in the lane as it is)."""
    rng = random.Random(f"{lane}-{seed}")
    text = staged_text(lane) if staged else workflow_text(lane)
    gpus = gpu_jobs(text)
    suites = estimates()
    bundles: list[dict[str, Any]] = []
    logs: dict[int, str] = {}
    for index in range(runs):
        made, run_logs = _run(lane, index, rng, gpus, suites, text)
        bundles.append(made)
        logs.update(run_logs)
    return bundles, logs
