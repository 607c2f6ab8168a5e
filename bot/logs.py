"""Per-file test times from a job log, and the runner's LPT shard assignment.

SGLang's `run_suite.py` assigns test files (and parametrized cases) to shards by
LPT over their declared estimates, and prints both the plan and the measurements.
foldbot reads three kinds of lines, each optionally behind the Actions timestamp:

    [run_suite] est_time=312 file=test/x/test_a.py        (the plan: every file of the suite)
    End (3/7): filename=test/x/test_a.py, elapsed=298      (a file of this shard finished)
    TIMINGS BEGIN / {"file": ..., "elapsed": ...} / TIMINGS END   (JSON lines of this shard)

A file that appears in several `End` lines ran several times (the CI re-runs a failed
command once); its times add up, because retries lengthen real shards. The
TIMINGS block, when present, is the measured truth for the files it lists.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_STAMP = r"(?:\d{4}-\d\d-\d\dT[\d:.]+Z\s+)?"
_EST = re.compile(_STAMP + r".*?\best_time=(?P<est>\d+(?:\.\d+)?)\b.*?\b(?:file|filename)=(?P<file>[^\s,]+)")
_EST_REVERSED = re.compile(_STAMP + r".*?\b(?:file|filename)=(?P<file>[^\s,]+).*?\best_time=(?P<est>\d+(?:\.\d+)?)")
_END = re.compile(_STAMP + r".*?\bEnd \((?P<i>\d+)/(?P<n>\d+)\): filename=(?P<file>[^\s,]+), elapsed=(?P<elapsed>\d+(?:\.\d+)?)")
_BEGIN = re.compile(_STAMP + r"\s*TIMINGS BEGIN\s*$")
_FINISH = re.compile(_STAMP + r"\s*TIMINGS END\s*$")
_STAMP_ONLY = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z\s?")


class LogError(ValueError):
    """A log that foldbot cannot read."""


@dataclass(frozen=True)
class ShardLog:
    """What one shard's log says: the suite's estimates and this shard's measured files."""

    estimates: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        return bool(self.estimates) and bool(self.measured)


def parse_log(text: str) -> ShardLog:
    estimates: dict[str, float] = {}
    ended: dict[str, float] = {}
    block: dict[str, float] = {}
    in_block = False
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if _BEGIN.match(line):
            in_block = True
            continue
        if in_block:
            if _FINISH.match(line):
                in_block = False
                continue
            payload = _STAMP_ONLY.sub("", line).strip()
            if not payload:
                continue
            try:
                entry = json.loads(payload)
            except json.JSONDecodeError:
                raise LogError(f"TIMINGS block has a line that is not JSON: {payload[:80]!r}") from None
            name = entry.get("file") or entry.get("filename") or entry.get("name")
            elapsed = entry.get("elapsed", entry.get("seconds", entry.get("duration")))
            if not isinstance(name, str) or not isinstance(elapsed, (int, float)):
                raise LogError(f"TIMINGS entry needs `file` and a numeric `elapsed`: {payload[:80]!r}")
            block[name] = block.get(name, 0.0) + float(elapsed)
            continue
        end = _END.match(line)
        if end:
            ended[end["file"]] = ended.get(end["file"], 0.0) + float(end["elapsed"])
            continue
        est = _EST.match(line) or _EST_REVERSED.match(line)
        if est:
            estimates[est["file"]] = float(est["est"])
    measured = dict(ended)
    measured.update(block)
    return ShardLog(estimates, measured)


def merge_logs(logs: list[ShardLog]) -> ShardLog:
    """The shards of one run together: the suite's estimates, every measured file."""
    estimates: dict[str, float] = {}
    measured: dict[str, float] = {}
    for log in logs:
        estimates.update(log.estimates)
        for name, seconds in log.measured.items():
            measured[name] = measured.get(name, 0.0) + seconds
    return ShardLog(estimates, measured)


def lpt(estimates: dict[str, float], shards: int) -> list[list[str]]:
    """Longest processing time first: biggest estimate to the least-loaded shard
    (ties to the lowest index), as the runner does."""
    if shards < 1:
        raise ValueError("shards must be at least 1")
    loads = [0.0] * shards
    assignment: list[list[str]] = [[] for _ in range(shards)]
    for name in sorted(estimates, key=lambda n: (-estimates[n], n)):
        target = min(range(shards), key=lambda i: (loads[i], i))
        assignment[target].append(name)
        loads[target] += estimates[name]
    return assignment


def predicted_longest_shard(log: ShardLog, shards: int) -> float | None:
    """Seconds of the longest shard if the suite ran on `shards` shards: assigned as
    the runner would (LPT over estimates), each file costing its measured time.
    Files this run did not measure cost their estimate scaled by the run's median
    measured/estimated ratio. None when a shard would be empty."""
    files = dict(log.estimates)
    for name in log.measured:
        files.setdefault(name, log.measured[name])
    if shards > len(files):
        return None
    ratios = sorted(log.measured[n] / log.estimates[n] for n in log.measured if log.estimates.get(n))
    ratio = ratios[len(ratios) // 2] if ratios else 1.0
    cost = {n: log.measured.get(n, files[n] * ratio) for n in files}
    return max(sum(cost[n] for n in shard) for shard in lpt(files, shards))
