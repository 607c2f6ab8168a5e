"""Per-file test times from a job log, and the runner's LPT shard assignment.

SGLang's `test/run_suite.py` assigns test files to shards by LPT over their declared
estimates, and prints the plan and the measurements. Every line of an Actions log
may start with its timestamp (`2026-08-20T11:02:03.1234567Z `); foldbot reads:

    ✅ Enabled 3 test(s) (est total 912.0s):                 this shard's plan, then
      - /sglang-checkout/test/registered/a.py (est_time=312.0) one line per file
    End (0/2):                                               a file of this shard finished:
    filename='/sglang-checkout/test/registered/a.py', elapsed=298, estimated_time=312.0
    ========== TIMINGS BEGIN ==========                      the runner's own record:
    {"file": "test/registered/a.py", "passed": true, "elapsed": 298}
    ========== TIMINGS END ==========

and the older one-line forms `[run_suite] est_time=312 file=test/a.py` (the whole
suite's plan), `End (3/7): filename=test/a.py, elapsed=298` and a bare
`TIMINGS BEGIN` / `TIMINGS END` block. The shard header `3/14 (0-based id=2)` says
which shard the log is of.

Paths are normalised (`normal_path`) so that one file matches across shards and
runs: inside SGLang's AMD container they are absolute (`/sglang-checkout/test/...`)
while the TIMINGS block cuts them after `/sglang/`.

A file counts as the runner counts it: the TIMINGS entry when there is one (after a
retry, the last attempt), else its `End` lines' elapsed (summed, should a file end
twice). A file the log began but never ended (the step was cancelled at its
timeout) is listed as unfinished.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_STAMP = re.compile(r"^\ufeff?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?)?")
_PLANNED = re.compile(r"\s*-\s+(?P<file>\S+)\s+\(est_time=(?P<est>\d+(?:\.\d+)?)\)\s*$")
_EST = re.compile(r".*?\best_time=(?P<est>\d+(?:\.\d+)?)\b.*?\b(?:file|filename)=(?P<file>[^\s,]+)")
_EST_REVERSED = re.compile(r".*?\b(?:file|filename)=(?P<file>[^\s,']+).*?\best_time=(?P<est>\d+(?:\.\d+)?)")
_BEGIN_FILE = re.compile(r"\s*Begin \((?P<i>\d+)/(?P<n>\d+)\):")
_FINISHED = re.compile(
    r"(?:.*?\bEnd \((?P<i>\d+)/(?P<n>\d+)\):\s*)?filename=(?P<q>'?)(?P<file>[^\s,']+)(?P=q),\s*elapsed=(?P<elapsed>\d+(?:\.\d+)?)"
    r"(?:,\s*estimated_time=(?P<est>\d+(?:\.\d+)?))?"
)
_END_HEADER = re.compile(r"\s*End \((?P<i>\d+)/(?P<n>\d+)\):\s*$")
_RUN_FILE = re.compile(r"\s*python3?\s+(?P<file>\S+\.py)\b")
_BLOCK_BEGIN = re.compile(r"\s*=*\s*TIMINGS BEGIN\s*=*\s*$")
_BLOCK_END = re.compile(r"\s*=*\s*TIMINGS END\s*=*\s*$")
_SHARD = re.compile(r".*?\b(?P<one>\d+)/(?P<size>\d+) \(0-based id=(?P<id>\d+)\)")
_RETRY = re.compile(r".*?\[CI Retry\] Attempt (?P<k>\d+)/(?P<n>\d+) for (?P<file>\S+)")


class LogError(ValueError):
    """A log that foldbot cannot read."""


def normal_path(path: str) -> str:
    """One name for a test file wherever the runner printed it: a relative path as it
    is (without `./`); an absolute one from its first `test`/`tests` directory on
    (`/sglang-checkout/test/registered/a.py` → `test/registered/a.py`), else
    without its leading `/`."""
    path = path.strip().strip("'\"")
    if path.startswith("./"):
        path = path[2:]
    if not path.startswith("/"):
        return path
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in ("test", "tests"):
            return "/".join(parts[i:])
    return path.lstrip("/")


@dataclass(frozen=True)
class ShardLog:
    """What one shard's log says: the files it planned (or, in the older format, the
    whole suite's plan) with their estimates, and the files it measured."""

    estimates: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)
    #: "suite" when the estimates list every file of the suite (`[run_suite] est_time=`
    #: lines), "shard" when only this shard's (the `✅ Enabled` list).
    scope: str = "suite"
    shard: tuple[int, int] | None = None  # (0-based id, shard count) from the header
    unfinished: tuple[str, ...] = ()  # begun, never ended: the step was cut off
    retried: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return bool(self.estimates) and bool(self.measured)

    @property
    def empty(self) -> bool:
        """Nothing foldbot reads: no plan and no measured file."""
        return not self.estimates and not self.measured


def parse_log(text: str) -> ShardLog:
    planned: dict[str, float] = {}
    suite_plan: dict[str, float] = {}
    ended: dict[str, float] = {}
    ended_estimates: dict[str, float] = {}
    block: dict[str, float] = {}
    begun: dict[str, None] = {}
    retried: dict[str, None] = {}
    shard: tuple[int, int] | None = None
    in_block = False
    pending_begin = False
    for raw in text.splitlines():
        line = _STAMP.sub("", raw.rstrip("\r"), count=1)
        if in_block:
            if _BLOCK_END.match(line):
                in_block = False
                continue
            payload = line.strip()
            if not payload:
                continue
            try:
                entry = json.loads(payload)
            except json.JSONDecodeError:
                raise LogError(f"TIMINGS block has a line that is not JSON: {payload[:80]!r}") from None
            if not isinstance(entry, dict):
                raise LogError(f"TIMINGS entry must be a JSON object: {payload[:80]!r}")
            name = entry.get("file") or entry.get("filename") or entry.get("name")
            elapsed = entry.get("elapsed", entry.get("seconds", entry.get("duration")))
            if not isinstance(name, str) or isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
                raise LogError(f"TIMINGS entry needs `file` and a numeric `elapsed`: {payload[:80]!r}")
            name = normal_path(name)
            block[name] = block.get(name, 0.0) + float(elapsed)
            continue
        if "TIMINGS BEGIN" in line and _BLOCK_BEGIN.match(line):
            in_block = True
            continue
        if pending_begin:  # the line after `Begin (i/n):` names the file it runs
            pending_begin = False
            run = _RUN_FILE.match(line)
            if run:
                begun[normal_path(run["file"])] = None
                continue
        if "elapsed=" in line:
            done = _FINISHED.match(line)
            if done:
                name = normal_path(done["file"])
                ended[name] = ended.get(name, 0.0) + float(done["elapsed"])
                if done["est"] is not None:
                    ended_estimates[name] = float(done["est"])
                continue
        if "est_time=" in line:
            plan = _PLANNED.match(line)
            if plan:
                planned[normal_path(plan["file"])] = float(plan["est"])
                continue
            est = _EST.match(line) or _EST_REVERSED.match(line)
            if est:
                suite_plan[normal_path(est["file"])] = float(est["est"])
                continue
        if "Begin (" in line and _BEGIN_FILE.match(line):
            pending_begin = True
            continue
        if "0-based id=" in line and shard is None:
            header = _SHARD.match(line)
            if header:
                shard = (int(header["id"]), int(header["size"]))
                continue
        if "[CI Retry]" in line:
            retry = _RETRY.match(line)
            if retry:
                retried[normal_path(retry["file"])] = None
    measured = dict(ended)
    measured.update(block)  # the runner's own record wins
    if suite_plan:
        estimates, scope = {**ended_estimates, **planned, **suite_plan}, "suite"
    else:
        estimates, scope = {**ended_estimates, **planned}, "shard"
    unfinished = tuple(name for name in begun if name not in measured)
    return ShardLog(estimates, measured, scope, shard, unfinished, tuple(retried))


def merge_logs(logs: list[ShardLog]) -> ShardLog:
    """The shards of one run together: the suite's estimates, every measured file."""
    estimates: dict[str, float] = {}
    measured: dict[str, float] = {}
    unfinished: dict[str, None] = {}
    retried: dict[str, None] = {}
    for log in logs:
        estimates.update(log.estimates)
        for name, seconds in log.measured.items():
            measured[name] = measured.get(name, 0.0) + seconds
        unfinished.update(dict.fromkeys(log.unfinished))
        retried.update(dict.fromkeys(log.retried))
    scope = "suite" if any(log.scope == "suite" for log in logs) else "shard"
    return ShardLog(estimates, measured, scope, None, tuple(unfinished), tuple(retried))


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
