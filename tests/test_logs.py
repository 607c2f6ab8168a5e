"""Job logs in the formats SGLang's test runner really prints
(../shared/fixtures/sglang/LOG-FORMAT.md), written here by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.logs import LogError, ShardLog, blank, merge_logs, normal_path, parse_log

T = "2026-08-20T11:02:03.1234567Z "

REAL = "\n".join(T + line for line in [
    "+ python3 run_suite.py --hw amd --suite stage-b-test-1-gpu-small-amd --auto-partition-id 2 --auto-partition-size 14",
    "Partition: 3/14 (0-based id=2)",
    "⚠️  Skipped 1 test(s):",
    "  - /sglang-checkout/test/registered/lora/test_lora_big.py (reason: nightly only)",
    "✅ Enabled 3 test(s) (est total 700.0s):",
    "  - /sglang-checkout/test/registered/spec/test_eagle.py (est_time=400.0)",
    "  - /sglang-checkout/test/registered/sessions/test_session.py (est_time=200.5)",
    "  - /sglang-checkout/test/registered/quant/test_fp8.py (est_time=99.5)",
    ".",
    ".",
    "Begin (0/2):",
    "python3 /sglang-checkout/test/registered/spec/test_eagle.py",
    ".",
    "Ran 12 tests in 401.2s",
    "OK",
    ".",
    "End (0/2):",
    "filename='/sglang-checkout/test/registered/spec/test_eagle.py', elapsed=402, estimated_time=400.0",
    ".",
    "Begin (1/2):",
    "python3 /sglang-checkout/test/registered/sessions/test_session.py",
    "[CI Retry] Attempt 2/2 for /sglang-checkout/test/registered/sessions/test_session.py",
    "✓ PASSED on retry /sglang-checkout/test/registered/sessions/test_session.py",
    "End (1/2):",
    "filename='/sglang-checkout/test/registered/sessions/test_session.py', elapsed=530, estimated_time=200.5",
    "Begin (2/2):",
    "python3 /sglang-checkout/test/registered/quant/test_fp8.py",
    "End (2/2):",
    "filename='/sglang-checkout/test/registered/quant/test_fp8.py', elapsed=88, estimated_time=99.5",
    "Success. Time elapsed: 1020.41s",
    "Test Summary: 3/3 passed",
    "========== TIMINGS BEGIN ==========",
    '{"file": "/sglang-checkout/test/registered/spec/test_eagle.py", "passed": true, "elapsed": 402}',
    '{"file": "test/registered/sessions/test_session.py", "passed": true, "elapsed": 260}',
    '{"file": "/sglang-checkout/test/registered/quant/test_fp8.py", "passed": true, "elapsed": 88}',
    "========== TIMINGS END ==========",
]) + "\n"


def test_the_real_format_is_read() -> None:
    log = parse_log(REAL)
    assert log.scope == "shard" and log.shard == (2, 14)
    assert log.estimates == {"test/registered/spec/test_eagle.py": 400.0,
                             "test/registered/sessions/test_session.py": 200.5,
                             "test/registered/quant/test_fp8.py": 99.5}  # not the skipped file
    # The TIMINGS block is the runner's count: after a retry, its last attempt.
    assert log.measured == {"test/registered/spec/test_eagle.py": 402.0,
                            "test/registered/sessions/test_session.py": 260.0,
                            "test/registered/quant/test_fp8.py": 88.0}
    assert log.retried == ("test/registered/sessions/test_session.py",)
    assert log.unfinished == ()


def test_without_the_block_the_two_line_end_counts() -> None:
    text = REAL.split(T + "========== TIMINGS BEGIN")[0]
    log = parse_log(text)
    assert log.measured["test/registered/sessions/test_session.py"] == 530.0
    assert log.measured["test/registered/quant/test_fp8.py"] == 88.0


def test_a_shard_cut_off_at_its_timeout_names_the_unfinished_file() -> None:
    text = REAL.split(T + "End (1/2):")[0]
    log = parse_log(text)
    assert log.measured == {"test/registered/spec/test_eagle.py": 402.0}
    assert log.unfinished == ("test/registered/sessions/test_session.py",)


HUNG = "/sglang-checkout/test/registered/sessions/test_session.py"


def _killed(*lines: str, timings: bool = True) -> str:
    """REAL with its second file's run replaced by `lines`: the runner (ci_utils.py) ends it at its
    `--timeout-per-file 2400` and records that cap in TIMINGS, `"passed": false` (one version adds `status`)."""
    head = REAL.split(T + "Begin (1/2):")[0]
    tail = REAL.split(T + "Begin (2/2):")[1].split(T + "========== TIMINGS BEGIN")[0]
    block = REAL.split(T + "========== TIMINGS BEGIN")[1].replace(
        '{"file": "test/registered/sessions/test_session.py", "passed": true, "elapsed": 260}',
        '{"file": "test/registered/sessions/test_session.py", "passed": false, "status": "failed", "elapsed": 2400}')
    return (head + "".join(T + line + "\n" for line in ("Begin (1/2):", f"python3 {HUNG}", *lines))
            + T + "Begin (2/2):" + tail + (T + "========== TIMINGS BEGIN" + block if timings else ""))


def test_a_file_the_runner_killed_at_its_timeout_per_file_is_killed_not_measured_alone() -> None:
    """ci_utils.py kills a hung file at `--timeout-per-file` and records the cap as its `elapsed`: that is
    how long it ran at least, not its time (review100 f01). With TIMINGS and no `End` (the newer runner), with
    an `End` at the cap (an older one), and with neither: never a file the step cut off."""
    session = "test/registered/sessions/test_session.py"
    for text, recorded in ((_killed(f"\u2717 TIMEOUT: {HUNG} after 2400 seconds"), 2400.0),
                           (_killed("End (1/2):", f"filename='{HUNG}', elapsed=2400, estimated_time=200.5",
                                    f"\u2717 TIMEOUT: {HUNG} after 2400 seconds", timings=False), 2400.0),
                           (_killed(f"\u2717 TIMEOUT: {HUNG} after 2400 seconds", timings=False), 2400.0)):
        log = parse_log(text)
        assert (log.killed, log.unfinished, log.retried, log.retry_kills) == ({session: 2400.0}, (), (), {})
        assert log.measured.get(session) == recorded  # (what its shard spent, kept: not what the file takes)
    # Killed in every attempt: the retry's line, then the last attempt's `✗ TIMEOUT` (a float cap, as printed). The
    # first attempt and the wait after it (review127 g05: 2400 + 60 s) are in no file's time: the runner's record
    # counts the last attempt, and the shard spent both.
    log = parse_log(_killed(f"[CI Retry] {HUNG} timed out after 2400.0s; waiting 60s before retry (attempt 2/2)",
                            f"[CI Retry] Attempt 2/2 for {HUNG}", "Begin (1/2):", f"python3 {HUNG}",
                            f"\u2717 TIMEOUT: {HUNG} after 2400.0 seconds"))
    assert (log.killed, log.unfinished, log.retried) == ({session: 2400.0}, (), (session,))
    assert log.retry_kills == {session: (2400.0, 2460.0)}
    # Killed once, then passed on the retry: the last attempt's time, measured, as the runner counts it.
    log = parse_log(_killed(f"[CI Retry] {HUNG} timed out after 2400s; waiting 60s before retry (attempt 2/2)",
                            f"[CI Retry] Attempt 2/2 for {HUNG}", "Begin (1/2):", f"python3 {HUNG}",
                            "End (1/2):", f"filename='{HUNG}', elapsed=230, estimated_time=200.5",
                            f"\u2713 PASSED on retry (attempt 2): {HUNG}").replace('"elapsed": 2400', '"elapsed": 230'))
    assert (log.killed, log.measured[session], log.retried) == ({}, 230.0, (session,))
    assert log.retry_kills == {session: (2400.0, 2460.0)}
    # The older runner (no TIMINGS) prints the killed attempt's `End` at the cap: that attempt is no end of the file
    # and no time of it (review132 r01: its 2400 s stayed in the file's time, 2630, and counted as an end)
    older = parse_log(_killed("End (1/2):", f"filename='{HUNG}', elapsed=2400, estimated_time=200.5",
                              f"[CI Retry] {HUNG} timed out after 2400s; waiting 60s before retry (attempt 2/2)",
                              f"[CI Retry] Attempt 2/2 for {HUNG}", "Begin (1/2):", f"python3 {HUNG}",
                              "End (1/2):", f"filename='{HUNG}', elapsed=230, estimated_time=200.5", timings=False))
    assert (older.killed, older.measured[session], older.retry_kills) == ({}, 230.0, {session: (2400.0, 2460.0)})
    # The step's timeout during the wait before the retry: the runner killed it, it is no measured time either.
    cut = _killed(f"[CI Retry] {HUNG} timed out after 2400s; waiting 60s before retry (attempt 2/2)").split(
        T + "Begin (2/2):")[0]
    assert (parse_log(cut).killed, parse_log(cut).unfinished, parse_log(cut).retry_kills) == ({session: 2400.0}, (), {})
    # review104 f06: killed (its `End` printed at the cap), begun again for the retry, and the step's timeout cut that
    # attempt off: unfinished, whatever the first attempt's `End` said
    cut = _killed("End (1/2):", f"filename='{HUNG}', elapsed=2400, estimated_time=200.5",
                  f"[CI Retry] {HUNG} timed out after 2400s; waiting 60s before retry (attempt 2/2)",
                  f"[CI Retry] Attempt 2/2 for {HUNG}", "Begin (1/2):", f"python3 {HUNG}").split(T + "Begin (2/2):")[0]
    assert (parse_log(cut).killed, parse_log(cut).unfinished) == ({}, (session,))
    assert (parse_log(cut).retry_kills, session in parse_log(cut).measured) == ({session: (2400.0, 2460.0)}, False)


def test_a_file_that_failed_by_itself_stays_a_measured_time() -> None:
    """`"passed": false` alone (a test that failed, `✗ FAILED`) is a measured time: only `✗ TIMEOUT` kills."""
    text = _killed("End (1/2):", f"filename='{HUNG}', elapsed=2400, estimated_time=200.5",
                   f"\u2717 FAILED: {HUNG} returned exit code 1")
    log = parse_log(text)
    assert (log.killed, log.unfinished) == ({}, ())
    assert log.measured["test/registered/sessions/test_session.py"] == 2400.0


BUNDLE = "\n".join(T + line for line in [
    "Partition: 1/2 (0-based id=0)",
    "\u2705 Enabled 2 test(s) (est total 435.0s):",
    "  - /sglang-checkout/test/registered/spec/test_eagle.py (est_time=400.0)",
    "  - group:attention_unittest (est_time=35.0)",
    ".", ".", "Begin (0/1):", "python3 /sglang-checkout/test/registered/spec/test_eagle.py", ".", ".",
    ".", ".", "End (0/1):",
    "filename='/sglang-checkout/test/registered/spec/test_eagle.py', elapsed=402, estimated_time=400.0", ".", ".",
    ".", ".", "Begin (1/1) BUNDLE group:attention_unittest (2 files, est=35s): python3 -m unittest -f <2 modules>",
    ".", ".",
    "test_decode (test.registered.attention.test_a.TestA) ... ok",
    ".", ".", "End (1/1) BUNDLE group:attention_unittest: elapsed=41s", ".", ".",
    "Success. Time elapsed: 450.12s",
]) + "\n"


def test_an_in_process_bundle_is_one_unit_read_as_a_file_is() -> None:
    """ci_utils.py's `_run_one_bundle` (review100 f02): its `End ... BUNDLE` line is the unit's time when
    there is no TIMINGS block, and a `Begin ... BUNDLE` the step cut off before its `End` is unfinished."""
    log = parse_log(BUNDLE)
    assert log.estimates == {"test/registered/spec/test_eagle.py": 400.0, "group:attention_unittest": 35.0}
    assert log.measured == {"test/registered/spec/test_eagle.py": 402.0, "group:attention_unittest": 41.0}
    assert (log.unfinished, log.killed) == ((), {})
    block = (f'{T}========== TIMINGS BEGIN ==========\n{T}{{"file": "group:attention_unittest", "passed": true, '
             f'"elapsed": 44}}\n{T}========== TIMINGS END ==========\n')
    assert parse_log(BUNDLE + block).measured["group:attention_unittest"] == 44.0  # the runner's record wins
    cut = parse_log(BUNDLE.split(T + "test_decode")[0] + f"{T}##[error]The action 'Run test' has timed out after 75 minutes.\n")
    assert cut.measured == {"test/registered/spec/test_eagle.py": 402.0}
    assert cut.unfinished == ("group:attention_unittest",)
    killed = parse_log(BUNDLE.replace(f"{T}.\n{T}.\n{T}End (1/1) BUNDLE group:attention_unittest: elapsed=41s\n",
                                      f"{T}\u2717 TIMEOUT: group:attention_unittest after 2400 seconds\n"))
    assert (killed.killed, killed.unfinished) == ({"group:attention_unittest": 2400.0}, ())


def test_killed_files_merge_with_the_longest_cap() -> None:
    one = parse_log(f"{T}\u2717 TIMEOUT: test/a.py after 1800 seconds\n")
    other = parse_log(f"{T}\u2717 TIMEOUT: /sglang-checkout/test/a.py after 2400 seconds\n")
    assert merge_logs([one, other]).killed == {"test/a.py": 2400.0}
    retry = "[CI Retry] test/a.py timed out after {0}s; waiting 60s before retry (attempt 2/2)\n[CI Retry] Attempt 2/2 for test/a.py\n"
    one, other = parse_log(T + retry.format(1800).replace("\n[", f"\n{T}[")), parse_log(T + retry.format(2400).replace("\n[", f"\n{T}["))
    assert merge_logs([one, other]).retry_kills == {"test/a.py": (2400.0, 1860.0 + 2460.0)}  # (the longest cap; both spent)


def test_windows_line_ends_a_bom_and_no_timestamps() -> None:
    text = "\ufeff" + REAL.replace(T, "").replace("\n", "\r\n")
    assert parse_log(text) == parse_log(REAL)


def test_the_older_one_line_forms_are_still_read() -> None:
    text = (f"{T}[run_suite] est_time=600 file=test/a.py\n{T}[run_suite] file=test/b.py est_time=50\n"
            f"{T}End (1/2): filename=test/a.py, elapsed=590\nTIMINGS BEGIN\n"
            '{"file": "test/b.py", "elapsed": 40}\nTIMINGS END\n')
    log = parse_log(text)
    assert log.scope == "suite"
    assert log.estimates == {"test/a.py": 600.0, "test/b.py": 50.0}
    assert log.measured == {"test/a.py": 590.0, "test/b.py": 40.0}


def test_a_line_repeating_est_time_is_read_once_and_in_either_order() -> None:
    """A test's output line that repeats `est_time=` (a repr of estimates): the one pattern for both
    keys rescanned the rest of the line for each, so one such line of 176 KiB took 47 s to read. The
    keys are found apart now; the line gives its first `est_time=` and first `file=`."""
    noise = "est_time=1 " * 20_000
    log = parse_log(f"{T}[run_suite] {noise}file='test/c.py'\n{T}x file=test/d.py {noise}\n")
    assert log.estimates == {"test/c.py": 1.0, "test/d.py": 1.0}
    assert parse_log(f"{T}{noise}\n").empty


def test_the_suite_a_shard_header_names_is_read() -> None:
    """SGLang's runner prints its suite, hardware and partition as a table row; a log of another
    matrix's shard (as many shards, job ids copied from the wrong rows) is told by it."""
    row = f"{T}| AMD | stage-c-test-large-8-gpu-amd | False | 1/5 (0-based id=0) |\n"
    assert (parse_log(row).suite, parse_log(row).shard) == ("stage-c-test-large-8-gpu-amd", (0, 5))
    assert parse_log(f"{T}Suite: stage-b-x, partition: 3/14 (0-based id=2)\n").suite == "stage-b-x"
    assert parse_log(f"{T}Partition: 3/14 (0-based id=2)\n").suite is None  # (names none: taken as given)


def test_shards_merge_into_the_suite() -> None:
    other = REAL.replace("id=2", "id=3").replace("3/14", "4/14").replace("spec/test_eagle", "spec/test_medusa")
    merged = merge_logs([parse_log(REAL), parse_log(other)])
    assert merged.scope == "shard"
    assert set(merged.estimates) == {"test/registered/spec/test_eagle.py", "test/registered/spec/test_medusa.py",
                                     "test/registered/sessions/test_session.py", "test/registered/quant/test_fp8.py"}
    assert merged.measured["test/registered/quant/test_fp8.py"] == 176.0  # both shards ran it


@pytest.mark.parametrize("printed,normal", [
    ("/sglang-checkout/test/registered/a.py", "test/registered/a.py"),
    ("test/registered/a.py", "test/registered/a.py"),
    ("./test/registered/a.py", "test/registered/a.py"),
    ("'/sglang-checkout/test/registered/a.py'", "test/registered/a.py"),
    ("/work/repo/tests/unit/test_x.py", "tests/unit/test_x.py"),
    ("/opt/suite/check.py", "opt/suite/check.py"),
])
def test_paths_are_normalised(printed: str, normal: str) -> None:
    assert normal_path(printed) == normal


def test_a_log_with_nothing_foldbot_reads_is_empty() -> None:
    assert parse_log(f"{T}pip install -e python\n{T}Successfully installed sglang\n").empty
    assert not parse_log(REAL).empty


@pytest.mark.parametrize("line,message", [
    ("not json", "not JSON"),
    ('{"file": "a.py"}', "numeric `elapsed`"),
    ('{"file": "a.py", "elapsed": true}', "numeric `elapsed`"),
    ("[1, 2]", "JSON object"),
    # JSON as Python reads it: a NaN made a shard count's predicted longest shard depend on the heap's order
    *((f'{{"file": "a.py", "elapsed": {bad}}}', "finite number of seconds, not negative")
      for bad in ("NaN", "Infinity", "-Infinity", "1e400", "-5")),
])
def test_a_broken_timings_block_is_a_clear_error(line: str, message: str) -> None:
    with pytest.raises(LogError, match=message):
        parse_log(f"{T}========== TIMINGS BEGIN ==========\n{T}{line}\n{T}========== TIMINGS END ==========\n")


AITER = "\n".join(T + line for line in [
    "Running op_tests/test_mla.py op_tests/test_gemm_a8w8.py op_tests/test_rope.py op_tests/test_moe.py in shard 2 of 8.",
    "Using GPU_ARCHS=gfx950",
    "", "=" * 60, "Running test: op_tests/test_mla.py (shard: 2/8)", "=" * 60, "",
    "Skipping test: op_tests/test_mla.py", "=" * 60, "",
    "", "=" * 60, "Running test: op_tests/test_gemm_a8w8.py (shard: 2/8)", "=" * 60, "",
    "[aiter] Time elapsed of tuning: 3.5 seconds",  # (the test's own output: no ⏱)
    "", "-" * 20, "\u274c Test failed: op_tests/test_gemm_a8w8.py",
    "\u23f1 Time elapsed of op_tests/test_gemm_a8w8.py: 847.213 seconds", "-" * 20, "",
    "", "=" * 60, "Running test: op_tests/test_rope.py (shard: 2/8)", "=" * 60, "",
    "", "-" * 20, "\u2705 Test passed: op_tests/test_rope.py",
    "\u23f1\ufe0f Time elapsed of op_tests/test_rope.py: 61.5 seconds", "-" * 20, "",
    "", "=" * 60, "Running test: op_tests/test_moe.py (shard: 2/8)", "=" * 60, "",
    "##[error]The action 'Tests' has timed out after 90 minutes.",
]) + "\n"


def test_aiters_runner_lines_are_read() -> None:
    """ROCm/aiter's `aiter_test.sh` (3cb0a1ca): `Running test: F (shard: i/N)` (0-based), `Skipping test: F`, and
    `⏱ Time elapsed of F: S seconds` whether the file passed or failed. Its split weighs files by their measured
    times, which stand for the estimates; a file begun and never ended (the step's timeout) is unfinished; a
    test's own `Time elapsed of` line, without the ⏱, is output."""
    log = parse_log(AITER)
    files = ("op_tests/test_gemm_a8w8.py", "op_tests/test_rope.py")
    assert log == ShardLog(estimates=dict(zip(files, (847.213, 61.5))), measured=dict(zip(files, (847.213, 61.5))),
                           scope="shard", shard=(2, 8), unfinished=("op_tests/test_moe.py",), header="(shard: 2/8)",
                           weighed=files)
    assert parse_log(AITER.replace("(shard: 2/8)", "(shard: 9/8)")).shard is None  # (no shard 9 of 8)
    # a file that failed after aiter's `timeout 60m` (within a minute of it) was stopped there: killed, as SGLang's
    # `✗ TIMEOUT` (how long it takes is not known); one that failed sooner, or passed, took its time
    stopped = parse_log(AITER.replace("847.213 seconds", "3600.052 seconds"))
    assert (stopped.killed, stopped.measured["op_tests/test_gemm_a8w8.py"]) == ({"op_tests/test_gemm_a8w8.py": 3600.0},
                                                                              3600.052)
    assert parse_log(AITER.replace("847.213 seconds", "3540.5 seconds")).killed == {}
    passed = AITER.replace("\u274c Test failed: op_tests/test_gemm_a8w8.py", "\u2705 Test passed: op_tests/test_gemm_a8w8.py")
    assert parse_log(passed.replace("847.213 seconds", "3600.052 seconds")).killed == {}
    # the runs after its loop (`=== extra: test_mla.py <args> ===`) are named: their time is in no file's line
    extra = AITER.replace("Using GPU_ARCHS=gfx950", "=== extra: test_mla.py -c 49152 -b 1 -n 16,1 -kvd bf16 ===")
    assert parse_log(extra).extra == ("test_mla.py",)


def test_test_output_that_mentions_the_key_words_is_not_read() -> None:
    """Most of a real log is the tests' own output; only the runner's lines count, even
    when that output says `elapsed=` or `est_time=` or `TIMINGS BEGIN` mid-line."""
    noise = [
        "[2026-08-20 11:02:04 TP0] Decode batch. #running-req: 1, #token: 87, gen throughput (token/s): 95.10",
        "request done: elapsed=3.2s est_time=unknown",
        "INFO: printing TIMINGS BEGIN marker for the parser test",
        "Begin (with some prose): not a runner line",
        "note: 1/2 (0-based id=7) in a test's own message",
    ]
    lines = REAL.splitlines()
    at = lines.index(T + "Ran 12 tests in 401.2s")
    noisy = "\n".join(lines[:at] + [T + line for line in noise] * 50 + lines[at:]) + "\n"
    assert parse_log(noisy) == parse_log(REAL)


# -- a log as bytes: what the App downloads and the CLI reads ------------------------------------

_PIECES = [T, "\ufeff", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", " ", ".", "é", "😀",
           "Partition: 3/14 (0-based id=2)", "✅ Enabled 2 test(s) (est total 9.0s):",
           "  - /sglang-checkout/test/registered/a.py (est_time=5.0)", "  - test/b.py (est_time=4)",
           "Begin (0/1):", "python3 /sglang-checkout/test/registered/a.py",
           "filename='/sglang-checkout/test/registered/a.py', elapsed=6, estimated_time=5.0", "End (1/1):",
           "========== TIMINGS BEGIN ==========", '{"file": "test/b.py", "elapsed": 3}', "========== TIMINGS END ==========",
           "[CI Retry] Attempt 2/2 for test/b.py", "[run_suite] est_time=7 file=test/c.py",
           "Running test: op_tests/x.py (shard: 1/4)", "Skipping test: op_tests/x.py",
           "\u23f1 Time elapsed of op_tests/x.py: 12.5 seconds"]


def _outcome(data: str | bytes) -> object:
    try:
        return parse_log(data)
    except LogError as exc:
        return f"LogError: {exc}"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_a_log_reads_the_same_as_text_as_bytes_and_split_into_lines(pieces: list[str]) -> None:
    """The App and the CLI read a log as bytes, finding its lines in place; a line ends where
    `str.splitlines` ends it (\\r\\n, \\r, \\x0b, U+2028, ... as an editor shows them)."""
    text = "".join(pieces)
    lines = "\n".join(text.splitlines()) + "\n"
    assert _outcome(text.encode()) == _outcome(text) == _outcome(lines)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([p.encode() for p in _PIECES]),
                          st.sampled_from([b"\xff", b"\xc2", b"\xe2\x80", b"\xe2", b"\x80\xa8", b"\xed\xa0\x80"])),
                max_size=40))
def test_a_log_with_bytes_that_are_not_utf8_reads_as_its_text_with_replacement_characters(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    assert _outcome(data) == _outcome(data.decode("utf-8", "replace"))


def test_a_bad_byte_in_a_timed_file_name_is_a_replacement_character() -> None:
    data = (T + "filename='test/caf\xe9.py', elapsed=6\n").encode("latin-1")
    assert parse_log(data).measured == {"test/caf\ufffd.py": 6.0}


@pytest.mark.parametrize("data, empty", [
    (b"", True), (b" \n\t\r\n", True), ("\u2028\u0085\u00a0\n".encode(), True), (b"\x1c\x1d\x1e\x1f", True),
    (b"\xff", False), (b" x ", False), ("\u2028".encode() * 5000, False),
])
def test_a_blank_log_is_white_space_as_str_strip_knows_it(data: bytes, empty: bool) -> None:
    """review82 f06: the bytes check knew ASCII white space only: a log of U+2028 or U+0085 alone was
    kept as a log with nothing in it, not said to be empty."""
    assert blank(data) is empty
