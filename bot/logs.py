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

an in-process bundle (`in_process_group`: several files in one `python3 -m unittest` call) as
one unit named `group:<key>`, in the plan (`  - group:<key> (est_time=...)`), in TIMINGS and in

    Begin (5/6) BUNDLE group:<key> (2 files, est=35s): python3 -m unittest -f <2 modules>
    End (5/6) BUNDLE group:<key>: elapsed=41s

a file (or bundle) the runner killed at its `--timeout-per-file`:

    ✗ TIMEOUT: test/registered/a.py after 2400 seconds
    [CI Retry] test/registered/a.py timed out after 2400s; waiting 60s before retry (attempt 2/2)

ROCm/aiter's `.github/scripts/aiter_test.sh`, a file at a time of the list its split job wrote for the shard (by
LPT over the file times it measures in CI, which stand for the estimates here):

    Running test: op_tests/test_mla.py (shard: 2/8)          begun, in 0-based shard 2 of 8
    Skipping test: op_tests/test_mla.py                      (one it skips: not begun)
    ❌ Test failed: op_tests/test_mla.py                      (failed: after its `timeout 60m`, killed)
    ⏱ Time elapsed of op_tests/test_mla.py: 847.213 seconds  ended
    === extra: test_mla.py -c 49152 -b 1 ... ===             run again after the loop, untimed

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
timeout) is listed as unfinished; one the runner killed at its `--timeout-per-file` is
listed as killed, with the seconds it ran: the runner records that cap as its `elapsed`
(`"passed": false`), which is not how long the file takes, only how long it ran at least.
"""

from __future__ import annotations

import functools
import heapq
import json
import math
import re
from dataclasses import dataclass, field

_PLANNED = re.compile(r"\s*-\s+(?P<file>\S+)\s+\(est_time=(?P<est>\d+(?:\.\d+)?)\)\s*$")
# `est_time=` and `file=` in either order, each found by a search of its own: one pattern spanning
# both (`.*?est_time=.*?file=`) rescanned the rest of a line for each `est_time=` in it, so a line of
# test output repeating it took quadratic time (21 KiB: 0.5 s; 176 KiB: 47 s).
_EST = re.compile(r"\best_time=(?P<est>\d+(?:\.\d+)?)\b")
_EST_FILE = re.compile(r"\b(?:file|filename)='?(?P<file>[^\s,']+)")
_BEGIN_FILE = re.compile(r"\s*Begin \((?P<i>\d+)/(?P<n>\d+)\):")
# ci_utils.py's `_run_one_bundle`: an in-process bundle is one unit, named by its `group:<key>` on one line
_BEGIN_BUNDLE = re.compile(r"\s*Begin \((?P<i>\d+)/(?P<n>\d+)\) BUNDLE (?P<file>\S+) \(")
_END_BUNDLE = re.compile(
    r"\s*End \((?P<i>\d+)/(?P<n>\d+)\) BUNDLE (?P<file>\S+?):\s*elapsed=(?P<elapsed>\d+(?:\.\d+)?)s?\s*$")
_FINISHED = re.compile(
    r"(?:.*?\bEnd \((?P<i>\d+)/(?P<n>\d+)\):\s*)?filename=(?P<q>'?)(?P<file>[^\s,']+)(?P=q),\s*elapsed=(?P<elapsed>\d+(?:\.\d+)?)"
    r"(?:,\s*estimated_time=(?P<est>\d+(?:\.\d+)?))?"
)
_END_HEADER = re.compile(r"\s*End \((?P<i>\d+)/(?P<n>\d+)\):\s*$")
_RUN_FILE = re.compile(r"\s*python3?\s+(?P<file>\S+\.py)\b")
_BLOCK_BEGIN = re.compile(r"\s*=*\s*TIMINGS BEGIN\s*=*\s*$")
_BLOCK_END = re.compile(r"\s*=*\s*TIMINGS END\s*=*\s*$")
_SHARD = re.compile(r".*?\b(?P<one>\d+)/(?P<size>\d+) \(0-based id=(?P<id>\d+)\)")
_SUITE = re.compile(r"(?i)\bsuite:\s*(?P<suite>[\w.-]+)")
_SUITE_CELL = re.compile(r"^[A-Za-z0-9][\w.]*-[\w.-]+$")
_RETRY = re.compile(r".*?\[CI Retry\] Attempt (?P<k>\d+)/(?P<n>\d+) for (?P<file>\S+)")
# The runner killed the file (or bundle) at `--timeout-per-file`: with its last attempt (`✗ TIMEOUT`), or
# with one a retry follows (`[CI Retry] ... timed out after 2400s; waiting 60s before retry`).
_KILLED = re.compile(r".*?\u2717 TIMEOUT: (?P<file>\S+) after (?P<seconds>\d+(?:\.\d+)?) seconds")
_RETRY_KILLED = re.compile(r".*?\[CI Retry\] (?P<file>\S+) timed out after (?P<seconds>\d+(?:\.\d+)?)s\b"
                           r"(?:; waiting (?P<wait>\d+(?:\.\d+)?)s)?")
# ROCm/aiter's `aiter_test.sh`: `Running test: F (shard: i/N)` (i 0-based), `Skipping test: F`, and
# `⏱ Time elapsed of F: S seconds` once the file ended (whether it passed or not), after `❌ Test failed: F`
# when it failed; a file its `timeout 60m` stopped failed after those 60 minutes (`AITER_FILE_TIMEOUT_S`).
# After the loop, `=== extra: test_mla.py <args> ===` runs a file again, untimed.
_AITER_FAILED = re.compile(r".*?\u274c\s*Test failed: (?P<file>\S+)\s*$")
_AITER_EXTRA = re.compile(r".*?=== extra: (?P<file>\S+)")
#: aiter_test.sh's per-file `timeout 60m` (3cb0a1ca): a failed file timed at it (within a minute) was stopped there.
AITER_FILE_TIMEOUT_S, AITER_KILL = 3600.0, "timeout 60m"
_AITER_BEGIN = re.compile(r".*?\bRunning test: (?P<file>\S+) \(shard: (?P<id>\d+)/(?P<size>\d+)\)\s*$")
_AITER_SKIP = re.compile(r".*?\bSkipping test: (?P<file>\S+)\s*$")
_AITER_END = re.compile(r".*?\u23f1\ufe0f?\s*Time elapsed of (?P<file>\S+): (?P<seconds>\d+(?:\.\d+)?) seconds\s*$")
#: The words a line foldbot reads carries; any other line is test output.
_KEYS = ("elapsed=", "est_time=", "TIMINGS BEGIN", "Begin (", "0-based id=", "[CI Retry]", "\u2717 TIMEOUT: ",
         "ing test: ", "Time elapsed of ", "Test failed: ", "=== extra: ")  # (`Running test: `, `Skipping test: `: one)


class LogError(ValueError):
    """A log that foldbot cannot read."""


@functools.lru_cache(maxsize=8192)  # the same few hundred files recur in every shard and run
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
    #: the suite its header names (`Suite: X, partition: ...`, or the suite cell of the runner's
    #: table row `| AMD | X | False | 1/5 (0-based id=0) |`); None when it names none
    suite: str | None = None
    #: files (and bundles) the runner killed at its `--timeout-per-file` -> the seconds it gave them: how
    #: long they ran at least, not how long they take. (The runner records that cap as their `elapsed`, and
    #: they stay in `measured` with it: their shard spent those seconds.)
    killed: dict[str, float] = field(default_factory=dict)
    #: the shard header as the log prints it (`3/14 (0-based id=2)`; aiter's `(shard: 2/8)`), for a report to quote
    header: str | None = None
    #: files whose estimate is their own measured time (aiter's: its log prints no estimate); a prediction over
    #: several runs weighs them as the split does, by their times over those runs (`pooled`)
    weighed: tuple[str, ...] = ()
    #: files aiter's runner ran again after its loop (`=== extra: test_mla.py <args> ===`), as printed (a base
    #: name): the time of those runs is in no file's line, and it goes where the file goes
    extra: tuple[str, ...] = ()
    #: the cap that killed the files in `killed` (aiter's script: `timeout 60m`)
    killed_by: str = "--timeout-per-file"
    #: files the runner killed at its cap in an attempt a retry followed (`[CI Retry] <f> timed out after 2400s;
    #: waiting 60s before retry`, then `[CI Retry] Attempt 2/2 for <f>`) -> (that cap, the seconds those attempts
    #: and their waits took): time the shard spent in no file's time (the runner's record counts the last attempt)
    retry_kills: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        return bool(self.estimates) and bool(self.measured)

    @property
    def empty(self) -> bool:
        """Nothing foldbot reads: no plan and no measured file."""
        return not self.estimates and not self.measured


def _stripped(line: str) -> str:
    """A log line without its byte-order mark and `2026-08-20T11:02:03.1234567Z ` stamp."""
    if line[:1] == "\ufeff":
        line = line[1:]
    if line[10:11] == "T" and line[4:5] == "-" and line[:1].isdigit():
        z = line.find("Z", 19, 33)
        if z != -1:
            line = line[z + 2:] if line[z + 1:z + 2] == " " else line[z + 1:]
    return line


def _block_entry(payload: str) -> tuple[str, float]:
    """One line of a TIMINGS block: the file and its seconds."""
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
    if not 0 <= elapsed < math.inf:  # (JSON as Python reads it has NaN, Infinity and 1e400)
        raise LogError(f"TIMINGS entry's `elapsed` must be a finite number of seconds, not negative: {payload[:80]!r}")
    return normal_path(name), float(elapsed)


#: Every line end `str.splitlines` knows (an editor or a browser may show them so), \r\n being one; in a
#: log read as bytes, U+0085, U+2028 and U+2029 are their UTF-8. Looked for in a log that has one besides \n.
_BREAKS = re.compile("\r\n?|[\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_BREAKS_BYTES = re.compile(b"\r\n?|[\n\x0b\x0c\x1c-\x1e]|\xc2\x85|\xe2\x80[\xa8\xa9]")
_KEYS_BYTES = tuple(key.encode() for key in _KEYS)
#: What any of them but \n starts with: whether a log has one is a few scans at memchr's speed (a regex's
#: search over the bytes, with its alternatives, took 25 ns a byte).
_OTHER_STARTS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_OTHER_STARTS_BYTES = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def parse_log(data: str | bytes) -> ShardLog:
    """What one job log says, from its text or its bytes as downloaded (UTF-8; a bad byte is
    read as U+FFFD); LogError for one foldbot cannot read (a number too long for a number, JSON
    nested without end): a log is anybody's text."""
    try:
        return _parse_log(data)
    except LogError:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:
        raise LogError(f"a line of it cannot be read ({type(exc).__name__})") from None


def blank(data: str | bytes) -> bool:
    """A log with nothing but white space in it (a runner that printed nothing, a body lost on the way),
    as `str.strip` knows white space: U+0085, U+2028, U+00A0 too, not only ASCII's. (Only a short
    log is decoded to tell: a long one of white space alone is no empty download.)"""
    if isinstance(data, str):
        return not data.strip()
    return not data or data.isspace() or (len(data) <= 4096 and not data.decode("utf-8", "replace").strip())


class _Lines:
    """The lines of a log, each found where it stands and decoded alone: a log is mostly test
    output, megabytes of it, and only the lines foldbot reads are copied (a log of 200 MiB with
    one emoji in it had been a str of 4 bytes a character, then a copy of it for its line ends)."""

    def __init__(self, data: str | bytes) -> None:
        self.data = data
        self.size = len(data)
        self.binary = not isinstance(data, str)
        self.newline: str | bytes = b"\n" if self.binary else "\n"
        starts = _OTHER_STARTS_BYTES if self.binary else _OTHER_STARTS
        #: every line end, looked for when the log has one besides \n (else `find` of \n is enough)
        self.breaks: re.Pattern | None = None
        if any(start in data for start in starts):  # type: ignore[operator]
            self.breaks = _BREAKS_BYTES if self.binary else _BREAKS

    def line_at(self, at: int, after: int) -> tuple[str, int]:
        """The line holding position `at` (a line starting at `after` or later), without its
        stamp, and where the next line starts."""
        start = self.data.rfind(self.newline, after, at) + 1 or after  # type: ignore[arg-type]
        if self.breaks is not None:  # (the rarer ones, between that \n and `at`)
            for found in self.breaks.finditer(self.data, start, at):
                start = found.end()
        return self.line_from(start)

    def line_from(self, start: int) -> tuple[str, int]:
        """The line starting at `start`, without its stamp, and where the next line starts. (Each line end
        is found from the line's start: a log whose lines end in \r alone, its next \n megabytes on, had made
        every key line a search to it, quadratic time.)"""
        if self.breaks is not None:
            found = self.breaks.search(self.data, start)
            end, after = (found.start(), found.end()) if found else (self.size, self.size)
        else:
            end = self.data.find(self.newline, start)  # type: ignore[arg-type]
            if end == -1:
                end = self.size
            after = end + 1
        line = self.data[start:end]
        return _stripped(line.decode("utf-8", "replace") if self.binary else line), after  # type: ignore[union-attr, arg-type]


def _parse_log(data: str | bytes) -> ShardLog:
    """Most of a log is test output: the lines that matter are found by their key
    words (`_KEYS`, with `find`) and only those are read."""
    lines = _Lines(data)
    planned: dict[str, float] = {}
    suite_plan: dict[str, float] = {}
    ended: dict[str, float] = {}
    ended_estimates: dict[str, float] = {}
    block: dict[str, float] = {}
    begun: dict[str, None] = {}
    retried: dict[str, None] = {}
    killed: dict[str, float] = {}
    timed: dict[str, float] = {}  # aiter's: files whose measured time stands for their estimate
    failed: set[str] = set()  # aiter's: files it said failed
    extra: dict[str, None] = {}  # aiter's: files run again after its loop, untimed
    header: str | None = None
    attempt: dict[str, None] = {}  # files a retry began again, until that attempt's `End`
    retry_kills: dict[str, tuple[float, float]] = {}
    waiting: dict[str, float] = {}  # files killed with a retry to follow -> that attempt's cap and the wait after it
    # files -> the seconds the `End` lines of their current attempt add to `ended` (an older runner prints one at the
    # cap for an attempt it then kills: that attempt is a kill, no end, and its time is in `retry_kills`)
    attempt_end: dict[str, list[float]] = {}
    shard: tuple[int, int] | None = None
    suite: str | None = None
    size = lines.size
    hits: list[int] = []
    for key in (_KEYS if isinstance(data, str) else _KEYS_BYTES):
        at = data.find(key)  # type: ignore[arg-type]
        while at != -1:
            hits.append(at)
            at = data.find(key, at + len(key))  # type: ignore[arg-type]
    hits.sort()
    pos = 0  # lines before it are read
    for at in hits:
        if at < pos:
            continue
        line, pos = lines.line_at(at, pos)
        if "TIMINGS BEGIN" in line and _BLOCK_BEGIN.match(line):
            while pos < size:  # every line up to TIMINGS END is an entry
                line, pos = lines.line_from(pos)
                if _BLOCK_END.match(line):
                    break
                payload = line.strip()
                if payload:
                    name, seconds = _block_entry(payload)
                    block[name] = block.get(name, 0.0) + seconds
            continue
        if "elapsed=" in line:
            done = _FINISHED.match(line)
            if done:
                name = normal_path(done["file"])
                ended[name] = ended.get(name, 0.0) + float(done["elapsed"])
                attempt_end.setdefault(name, []).append(float(done["elapsed"]))
                attempt.pop(name, None)
                if done["est"] is not None:
                    ended_estimates[name] = float(done["est"])
                continue
            done = _END_BUNDLE.match(line) if "BUNDLE" in line else None
            if done:
                name = normal_path(done["file"])
                ended[name] = ended.get(name, 0.0) + float(done["elapsed"])
                attempt_end.setdefault(name, []).append(float(done["elapsed"]))
                attempt.pop(name, None)
                continue
        if "est_time=" in line:
            plan = _PLANNED.match(line)
            if plan:
                planned[normal_path(plan["file"])] = float(plan["est"])
                continue
            est = _EST.search(line)
            named = _EST_FILE.search(line) if est else None
            if est and named:
                suite_plan[normal_path(named["file"])] = float(est["est"])
                continue
        if "Begin (" in line and "BUNDLE" in line:
            bundle = _BEGIN_BUNDLE.match(line)
            if bundle:  # (its modules are on this line: no `python3 <file>` line follows)
                begun[normal_path(bundle["file"])] = None
                continue
        if "Begin (" in line and _BEGIN_FILE.match(line):
            if pos < size:  # the line after `Begin (i/n):` names the file it runs
                following, after = lines.line_from(pos)
                run = _RUN_FILE.match(following)
                if run:
                    begun[normal_path(run["file"])] = None
                    pos = after
            continue
        if "0-based id=" in line and shard is None:
            found = _SHARD.match(line)
            if found:
                shard = (int(found["id"]), int(found["size"]))
                header = f"{found['one']}/{found['size']} (0-based id={found['id']})"
                suite = _header_suite(line)
                continue
        if "[CI Retry]" in line:
            retry = _RETRY.match(line)
            if retry:
                name = normal_path(retry["file"])
                retried[name] = None
                if name in waiting:  # (its killed attempt was no last one)
                    cap, before = retry_kills.get(name, (0.0, 0.0))
                    retry_kills[name] = (max(cap, killed[name]), before + waiting.pop(name))
                killed.pop(name, None)  # another attempt: its own end says how it went
                attempt_end.pop(name, None)
                attempt[name] = None  # (begun again: an `End` of an earlier one is not its)
                continue
            retry = _RETRY_KILLED.match(line)  # (the attempt after it clears it; a step cut off before it does not)
            if retry:
                name = normal_path(retry["file"])
                killed[name] = float(retry["seconds"])
                waiting[name] = killed[name] + float(retry["wait"] or 0.0)
                if name in attempt_end:  # (its `End`, an older runner's, was the kill's: no end, no time of the file)
                    ended[name] -= sum(attempt_end.pop(name))
                    if ended[name] <= 0.0:
                        del ended[name]
                continue
        if "TIMEOUT: " in line:
            timeout = _KILLED.match(line)
            if timeout:
                killed[normal_path(timeout["file"])] = float(timeout["seconds"])
                waiting.pop(normal_path(timeout["file"]), None)
                continue
        if "Time elapsed of " in line:
            done = _AITER_END.match(line)
            if done:  # (its measured time is the weight the split gives it: the estimate here)
                name, seconds = normal_path(done["file"]), float(done["seconds"])
                ended[name] = timed[name] = ended.get(name, 0.0) + seconds
                if name in failed and AITER_FILE_TIMEOUT_S <= seconds < AITER_FILE_TIMEOUT_S + 60:
                    killed[name] = AITER_FILE_TIMEOUT_S  # (how long it ran at least, as `✗ TIMEOUT` says it)
                continue
        if "Test failed: " in line:
            fail = _AITER_FAILED.match(line)
            if fail:
                failed.add(normal_path(fail["file"]))
                continue
        if "=== extra: " in line:
            again = _AITER_EXTRA.match(line)
            if again:
                extra[again["file"]] = None
                continue
        if "Running test: " in line:
            begin = _AITER_BEGIN.match(line)
            if begin:
                begun[normal_path(begin["file"])] = None
                if shard is None and int(begin["id"]) < int(begin["size"]):
                    shard = (int(begin["id"]), int(begin["size"]))
                    header = f"(shard: {begin['id']}/{begin['size']})"
                continue
        if "Skipping test: " in line:
            skip = _AITER_SKIP.match(line)
            if skip:
                begun.pop(normal_path(skip["file"]), None)
    measured = dict(ended)
    measured.update(block)  # the runner's own record wins
    for name, cap in killed.items():  # (its shard spent its cap on it: known from `✗ TIMEOUT` alone when the step
        measured.setdefault(name, cap)  # was cut off before the runner wrote its record)
    if suite_plan:
        estimates, scope = {**ended_estimates, **planned, **suite_plan}, "suite"
    else:
        estimates, scope = {**timed, **ended_estimates, **planned}, "shard"
    # (a file killed at `--timeout-per-file` is no file the step cut off, with or without its `End`; one begun again
    # for a retry that never ended was cut off, whatever an earlier attempt's `End` said, unless the runner's own
    # record, written once every file ended, names it)
    unfinished = tuple(dict.fromkeys([*(name for name in begun if name not in measured and name not in killed),
                                      *(name for name in attempt if name not in block and name not in killed)]))
    weighed = tuple(name for name in timed if name not in planned and name not in ended_estimates and not suite_plan)
    return ShardLog(estimates, measured, scope, shard, unfinished, tuple(retried), suite, killed, header, weighed,
                    tuple(extra), AITER_KILL if any(name in timed for name in killed) else ShardLog.killed_by,
                    retry_kills)


def _header_suite(line: str) -> str | None:
    """The suite a shard header line names, if it names one."""
    named = _SUITE.search(line)
    if named:
        return named["suite"]
    if line.strip().startswith("|"):  # the runner's table row: its one hyphenated cell, not the partition's
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = [cell for cell in cells if "0-based" not in cell and _SUITE_CELL.match(cell)]
        return found[0] if len(found) == 1 else None
    return None


def merge_logs(logs: list[ShardLog]) -> ShardLog:
    """The shards of one run together: the suite's estimates, every measured file."""
    estimates: dict[str, float] = {}
    measured: dict[str, float] = {}
    unfinished: dict[str, None] = {}
    retried: dict[str, None] = {}
    killed: dict[str, float] = {}
    retry_kills: dict[str, tuple[float, float]] = {}
    weighed: dict[str, None] = {}
    for log in logs:
        estimates.update(log.estimates)
        weighed.update(dict.fromkeys(log.weighed))
        for name, seconds in log.measured.items():
            measured[name] = measured.get(name, 0.0) + seconds
        unfinished.update(dict.fromkeys(log.unfinished))
        retried.update(dict.fromkeys(log.retried))
        for name, seconds in log.killed.items():
            killed[name] = max(seconds, killed.get(name, 0.0))
        for name, (cap, seconds) in log.retry_kills.items():
            had = retry_kills.get(name, (0.0, 0.0))
            retry_kills[name] = (max(cap, had[0]), seconds + had[1])
    scope = "suite" if any(log.scope == "suite" for log in logs) else "shard"
    return ShardLog(estimates, measured, scope, None, tuple(unfinished), tuple(retried), killed=killed,
                    weighed=tuple(weighed), retry_kills=retry_kills)


def lpt(estimates: dict[str, float], shards: int) -> list[list[str]]:
    """Longest processing time first: biggest estimate to the least-loaded shard
    (ties to the lowest index), as the runner does."""
    if shards < 1:
        raise ValueError("shards must be at least 1")
    assignment: list[list[str]] = [[] for _ in range(shards)]
    heap = [(0.0, i) for i in range(shards)]  # (load, shard): the least loaded, lowest index first
    for name in sorted(estimates, key=lambda n: (-estimates[n], n)):
        load, target = heapq.heappop(heap)
        assignment[target].append(name)
        heapq.heappush(heap, (load + estimates[name], target))
    return assignment


class ShardPredictor:
    """The longest shard of one run's suite on any shard count: files assigned as the
    runner would (LPT over estimates), each costing its measured time. Files this run
    did not measure cost their estimate scaled by the run's median measured/estimated
    ratio. The order is sorted once; each count costs one pass over the files.

    `spent`: the seconds the run's shards spent in the partitioned step, all together. What
    the files' own times leave of it (the runner's start, its pauses between files, a retry's
    first attempt) is shared out over the files, each costing that much more: a prediction is
    then never below what the shards were measured to take. (Shared by file, not by shard: on
    fewer shards, each with more files, the longest is over- rather than under-estimated.)"""

    def __init__(self, log: ShardLog, spent: float | None = None) -> None:
        files = dict(log.estimates)
        for name in log.measured:
            files.setdefault(name, log.measured[name])
        ratios = sorted(log.measured[n] / log.estimates[n] for n in log.measured if log.estimates.get(n))
        ratio = ratios[len(ratios) // 2] if ratios else 1.0
        order = sorted(files, key=lambda n: (-files[n], n))
        self._weights = [files[n] for n in order]
        self._costs = [log.measured.get(n, files[n] * ratio) for n in order]
        #: seconds each file costs beyond its own time (see above)
        self.per_file = max(0.0, (spent - sum(self._costs)) / len(self._costs)) if spent and self._costs else 0.0
        if self.per_file:
            self._costs = [cost + self.per_file for cost in self._costs]

    def longest(self, shards: int) -> float | None:
        """Seconds of the longest of `shards` shards; None when a shard would be empty."""
        if shards < 1:
            raise ValueError("shards must be at least 1")
        if shards > len(self._weights):
            return None
        heap = [(0.0, i) for i in range(shards)]
        spent = [0.0] * shards
        for weight, cost in zip(self._weights, self._costs):
            load, target = heap[0]  # the least loaded shard takes the next file
            spent[target] += cost
            heapq.heapreplace(heap, (load + weight, target))
        return max(spent)


def predicted_longest_shard(log: ShardLog, shards: int) -> float | None:
    """Seconds of the longest shard if the suite ran on `shards` shards (`ShardPredictor`)."""
    return ShardPredictor(log).longest(shards)
