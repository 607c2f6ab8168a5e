"""In-process analysis time: parse, plan, edit, verify-as-data and diff (not `git apply`
or schema validation), for SGLang's `pr-test-amd-rocm720.yml` and for the largest real
workflow, each with 10 run bundles of 60 jobs. Target: under 50 ms for the former.

    .venv/bin/python bench/analysis.py [--repeat N]

Each run gets a fresh `RepoConfig` (as each webhook event reads its own); caches keyed
by content (compiled name patterns, resolved YAML tags, `re`'s own) are warm after the
first call, which is printed apart. Before each run a fixed piece of pure-Python work
(the yardstick) is timed too: this machine's speed changes by up to 1.8x from one
minute to the next, and "N x the yardstick" is the figure that does not.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.analysis import analyze  # noqa: E402
from bot.config import RepoConfig  # noqa: E402
from tests.builders import skipped_job, bundle  # noqa: E402
from tests.synth import synthetic_history  # noqa: E402

WORKFLOWS = ROOT.parent / "shared" / "fixtures" / "sglang" / "workflows"


def sixty_job_history(text: str, path: str, runs: int = 10) -> list[dict]:
    """`runs` bundles of exactly 60 jobs: the synthetic history's jobs, trimmed or
    padded with skipped jobs."""
    out = []
    for b in synthetic_history(text, path, runs=runs, seed=60):
        jobs = b["jobs"][:60]
        pad = 60 - len(jobs)
        if pad:
            extra = bundle(run_id=b["workflow_run"]["id"], repo="sgl-project/sglang", workflow_path=path,
                           workflow_name="pad", head_sha=b["workflow_run"]["head_sha"],
                           jobs=[skipped_job(f"padding-{i}") for i in range(pad)],
                           start=time_of(b))["jobs"]
            jobs = jobs + extra
        out.append({"workflow_run": b["workflow_run"], "jobs": jobs})
    return out


def time_of(b: dict):
    from datetime import datetime
    return datetime.fromisoformat(b["workflow_run"]["run_started_at"].replace("Z", "+00:00"))


def measure(name: str, path: str, text: str, repeat: int) -> None:
    bundles = sixty_job_history(text, path)
    assert all(len(b["jobs"]) == 60 for b in bundles) and len(bundles) == 10
    start = time.perf_counter()
    analysis = analyze({path: text}, bundles, RepoConfig())  # the first in this process: nothing memoised yet
    cold = (time.perf_counter() - start) * 1000
    times, cpu, ratios = [], [], []
    for _ in range(repeat):
        config = RepoConfig()  # a fresh config, as each webhook event reads its own
        yardstick = _yardstick()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = analyze({path: text}, bundles, config)
        elapsed = (time.perf_counter() - start) * 1000
        cpu.append((time.process_time() - start_cpu) * 1000)
        del result  # freed outside the measured span
        times.append(elapsed)
        ratios.append(elapsed / yardstick)
    tracemalloc.start()
    analyze({path: text}, bundles, RepoConfig())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times.sort()
    p90 = times[int(0.9 * (len(times) - 1))]
    print(f"{name:38s} {len(text.splitlines()):5d} lines  10 runs x 60 jobs  "
          f"wall: min {times[0]:5.1f} ms, median {statistics.median(times):5.1f} ms, p90 {p90:5.1f} ms "
          f"(first call {cold:5.1f} ms); cpu median {statistics.median(cpu):5.1f} ms; "
          f"{statistics.median(ratios):4.1f} x the yardstick; peak {peak / 2**20:4.1f} MiB; "
          f"suggestions {len(analysis.plan.folds)} fold / {len(analysis.plan.reshards)} reshard")


def current_lanes(repeat: int) -> None:
    """SGLang's current lanes with a generated 4-run history whose shard logs are in the
    runners' real format (tests/sglang_current.py): the whole analysis from text (the
    bundles' JSON, the logs, both lane files), against reading the same YAML and JSON
    alone with libyaml and `json`. Target: at most 3x."""
    import json

    import yaml

    from bot.logs import parse_log
    from tests.sglang_current import LANES, history, workflow_text

    bundles, texts = history("rocm720")
    logs = {job_id: text.encode() for job_id, text in texts.items()}  # as GitHub sends them, as the App reads them
    bundle_texts = [json.dumps(b) for b in bundles]
    files = {LANES[lane][0]: workflow_text(lane) for lane in LANES}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def parse_only() -> None:
        for text in bundle_texts:
            json.loads(text)
        for text in files.values():
            yaml.load(text, Loader=loader)

    def full() -> Any:
        runs = [json.loads(text) for text in bundle_texts]
        parsed = {job_id: parse_log(data) for job_id, data in logs.items()}
        return analyze(files, runs, RepoConfig(), parsed)

    parsed = {job_id: parse_log(data) for job_id, data in logs.items()}

    def cached() -> Any:  # as the App runs it: each job's log parsed once, kept by job id
        return analyze(files, [json.loads(text) for text in bundle_texts], RepoConfig(), parsed)

    analysis = full()  # warm the content-keyed caches, as in `measure`
    ratios, cached_ratios, analysed, baseline = [], [], [], []
    for _ in range(repeat):
        gc.collect()  # each span from a collected heap: else a full collection the earlier work made due
        start = time.perf_counter()  # lands in one of them round after round, in step with the loop
        parse_only()
        base = time.perf_counter() - start
        gc.collect()
        start = time.perf_counter()
        full()
        whole = time.perf_counter() - start
        gc.collect()
        start = time.perf_counter()
        cached()
        warm = time.perf_counter() - start
        baseline.append(base * 1000)
        analysed.append(whole * 1000)
        ratios.append(whole / base)
        cached_ratios.append(warm / base)
    small = next(r for r in analysis.plan.reshards if r.job == "stage-b-test-1-gpu-small-amd-rocm720")
    log_bytes = sum(len(data) for data in logs.values())
    print(f"current lanes + logs: 2 files, {len(bundles)} runs x {len(bundles[0]['jobs'])} jobs, "
          f"{len(logs)} logs ({log_bytes / 2**20:.1f} MiB); YAML+JSON parse alone median {statistics.median(baseline):5.1f} ms; "
          f"analysis from text, logs included, median {statistics.median(analysed):5.1f} ms: "
          f"{statistics.median(ratios):.2f}x; with each log parsed once per job id, as the App keeps them: "
          f"{statistics.median(cached_ratios):.2f}x (target <= 3x); "
          f"{small.job} {small.from_count} -> {small.to_count} ({small.estimate})")


def _yardstick() -> float:
    """Milliseconds for a fixed piece of pure-Python work, taken just before each
    analysis: how fast this machine is right then."""
    start = time.perf_counter()
    sum(range(200_000))
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", type=int, metavar="N",
                        help="analyse the rocm720 history N times and print nothing: for counting instructions, "
                             "e.g. under `valgrind --tool=callgrind`, as (count at N=6 - count at N=1) / 5")
    args = parser.parse_args()
    rocm = WORKFLOWS / "pr-test-amd-rocm720.yml"
    if args.only is not None:
        path, text = ".github/workflows/pr-test-amd-rocm720.yml", rocm.read_text()
        bundles = sixty_job_history(text, path)
        for _ in range(args.only):
            analyze({path: text}, bundles, RepoConfig())
        return
    largest = max(WORKFLOWS.glob("*.yml"), key=lambda p: len(p.read_text()))
    print(f"python {sys.version.split()[0]}, libyaml {'yes' if __import__('yaml').__with_libyaml__ else 'no'}")
    calibration = sorted(_yardstick() for _ in range(40))
    print(f"yardstick, sum(range(200_000)): min {calibration[0]:.2f} ms, median {calibration[20]:.2f} ms, "
          f"max {calibration[-1]:.2f} ms (the same work every time; the spread is this machine's)")
    measure("pr-test-amd-rocm720.yml", ".github/workflows/pr-test-amd-rocm720.yml", rocm.read_text(), args.repeat)
    measure(f"largest: {largest.name}", f".github/workflows/{largest.name}", largest.read_text(), args.repeat)
    current_lanes(args.repeat)


if __name__ == "__main__":
    main()
