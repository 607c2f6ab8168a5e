"""The benchmark scripts run (they are not part of the suite's timing; `make bench`
prints their figures): a broken import there would otherwise go unnoticed."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.needs_fixtures  # the benchmarks read SGLang's workflows and run the fake GitHub


def test_the_analysis_benchmark_prints_both_workflows() -> None:
    result = subprocess.run([sys.executable, "bench/analysis.py", "--repeat", "2"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("python 3.") and "libyaml yes" in lines[0]
    assert lines[1].startswith("yardstick, sum(range(200_000)): min ")
    assert lines[2].startswith("pr-test-amd-rocm720.yml ") and "10 runs x 60 jobs" in lines[2]
    assert lines[2].endswith("suggestions 2 fold / 5 reshard")  # unit into a matrix, jit-kernel-unit into a job
    assert lines[3].startswith("largest: nightly-test-amd-rocm720.yml ") and "10 runs x 60 jobs" in lines[3]


def test_the_analysis_benchmark_can_just_analyse() -> None:
    """`--only N` (for instruction counts under valgrind) analyses and prints nothing."""
    result = subprocess.run([sys.executable, "bench/analysis.py", "--only", "1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_webhook_benchmark_counts_github_calls() -> None:
    """Its call count part, in a process of its own (as `make bench` runs it: imports
    that only work under pytest would fail here)."""
    code = "import asyncio, runpy; asyncio.run(runpy.run_path('bench/webhook.py', run_name='bench')['calls']())"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "GitHub calls for one workflow_run (8-run history, 2 lanes):"
    assert out[1] == "  cold: 31 calls (0 answered 304, free of rate limit; 3 writes; 7 job logs); minimum 31"
    assert out[2] == "  warm: 9 calls (4 answered 304, free of rate limit; 2 writes; 0 job logs); minimum 9"


def test_the_webhook_benchmark_bursts_to_foldbot_serve() -> None:
    """Its burst part, smaller: a `foldbot serve` process and its worker process take
    every delivery, and each CI PR ends with one report comment."""
    code = "import asyncio, runpy; asyncio.run(runpy.run_path('bench/webhook.py', run_name='bench')['burst'](60))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("60 mixed deliveries in a burst to foldbot serve: answered [202] in ")
    assert "report comments per CI PR [1] (exactly one each: True); 12 replies to 12 command comments" in result.stdout


def test_the_webhook_benchmark_times_foldbot_the_bare_handler_and_the_floor() -> None:
    """Its answer timing, one round: the three servers answer every delivery 202 (the
    client stops at any other status) and the ratios are printed."""
    lines = webhook_bench("latency", 1)
    assert lines[0] == ("200 concurrent signed deliveries (14 KiB each), 1 rounds, to each server in turn; each server "
                        "in a process of its own, the client in another:")
    assert [line.split(" p50 ")[0].strip() for line in lines[1:4]] == [
        "bare handler (checks the HMAC, answers 202)",
        "floor: the bare handler, answering once the journal holds the delivery",
        "foldbot serve as deployed (journal, checks, its worker process)"]
    assert lines[4].startswith("  foldbot / bare: p50 ") and "; floor / bare: p50 " in lines[4] \
        and "; foldbot / floor: p50 " in lines[4]
    assert lines[5].startswith("  by burst (a round's slowest answer;") and ": median of the same round's ratio foldbot / " \
        "bare " in lines[5] and ", floor / bare " in lines[5] and "; slowest burst: bare " in lines[5]
    assert ", floor " in lines[5] and lines[5].endswith(" ms") and ", foldbot " in lines[5]


def webhook_bench(function: str, argument: int) -> list[str]:
    """What one function of bench/webhook.py prints, run in a process of its own (it fails the test if it fails)."""
    code = f"import asyncio, runpy; asyncio.run(runpy.run_path('bench/webhook.py', run_name='bench')['{function}']({argument}))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_webhook_benchmark_times_what_a_wait_before_the_answer_costs() -> None:
    """`bench/webhook.py floors`, one round: every handler mode answers every delivery 202."""
    lines = webhook_bench("floors", 1)
    assert lines[0] == "200 concurrent signed deliveries (14 KiB each), 1 rounds, to each handler in turn:"
    assert [line.split(" p50 ")[0].strip() for line in lines[1:]] == [
        "bare handler (checks the HMAC, answers 202)", "the bare handler, answering a turn of the loop later",
        "... writing through the journal in the loop, no fsync",
        "... writing through the journal's writer thread, no fsync",
        "floor: the bare handler, answering once the journal holds the delivery",
        "... answering once a plain appended file holds it (no SQLite)"]


def bench_lines(script: str, *args: str) -> list[str]:
    """The lines a benchmark script prints, run as `make bench` runs it (it must succeed)."""
    result = subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_journal_commit_benchmark_prints_each_group_size() -> None:
    lines = bench_lines("bench/journal_commit.py", "64")
    assert lines[0] == "64 deliveries of 14 KiB committed through the journal (WAL, synchronous=FULL), by group size:"
    assert [line.split(" a commit:")[0].strip() for line in lines[1:-1]] == ["1", "4", "8", "16", "32", "64"]
    assert all(" µs wall, " in line and line.endswith(" µs CPU") for line in lines[1:-1])
    assert re.fullmatch(r"the disk alone: an fdatasync of one 14 KiB append, 20 one at a time: "
                        r"p50 \d+\.\d\d ms, p99 \d+\.\d\d ms, max \d+\.\d\d ms", lines[-1]), lines[-1]


def test_the_webhook_benchmark_times_one_delivery_at_a_time() -> None:
    """`bench/webhook.py paced`, 20 deliveries: the three servers answer each 202, and each line has its ratio."""
    lines = webhook_bench("paced", 20)
    assert lines[0] == "20 signed deliveries (14 KiB each) to each server, one at a time, one every 20 ms:"
    assert [line.split(" p50 ")[0].strip() for line in lines[1:]] == [
        "bare handler (checks the HMAC, answers 202)",
        "floor: the bare handler, answering once the journal holds the delivery",
        "foldbot serve as deployed (journal, checks, its worker process)"]
    assert "(1.00x)" in lines[1] and all(" ms (" in line and line.endswith("x)") for line in lines[1:])


def test_the_log_memory_benchmark_reads_the_log_both_ways() -> None:
    lines = bench_lines("bench/log_memory.py", "4")
    assert lines[0] == "one job log of 4 MiB (an emoji and a \\r in its test output), read in a fresh process:"
    assert [line.split(": peak RSS")[0] for line in lines[1:]] == [
        "  as foldbot reads it (bytes, `--logs` and the App)", "  decoded to text first"]
    assert all(re.search(r": peak RSS \+\d+ MiB \(\d+\.\d\dx the log\), \d+\.\d\d s$", line) for line in lines[1:]), lines
