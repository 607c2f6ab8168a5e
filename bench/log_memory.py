"""What reading one big job log costs, in memory and time: a log of N MiB of test output (one
emoji and one carriage return in it, as real output has) with the runner's lines at its ends,
read by `foldbot analyze --logs` (`bot.__main__._parse_logs`: the file's bytes, parsed as bytes,
as the App parses a download). Each reading runs in a fresh process; the figure is its peak RSS
above what the process held before reading (the interpreter and foldbot's imports), against the
log's own size. For comparison, the same log decoded to text first and parsed as text (a str of
4 bytes a character once one character is outside Latin-1). Until 2026-12-07 foldbot read logs so,
and copied the text once more to mend its line ends: 1,854 MiB and 10.7 s for the 200 MiB log.

    .venv/bin/python bench/log_memory.py [MiB]     (default 200)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = "2026-08-20T11:02:03.1234567Z "

READ = """
import resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from bot.__main__ import _parse_logs
from bot.logs import parse_log
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if sys.argv[3] == "bytes":
    logs, _ = _parse_logs([f"1={sys.argv[2]}"])
    log = logs[1]
else:
    log = parse_log(Path(sys.argv[2]).read_bytes().decode("utf-8", "replace"))
seconds = time.perf_counter() - start
assert log.measured == {"test/registered/a.py": 31.0, "test/registered/b.py": 29.0}, log.measured
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, seconds)
"""


def write_log(path: Path, mib: int) -> int:
    line = (STAMP + "[2026-08-20 11:02:04 TP0] Decode batch. #running-req: 1, #token: 87, "
            "gen throughput (token/s): 95.10\n").encode()
    block = line * 10_000
    with path.open("wb") as out:
        out.write("".join(STAMP + s + "\n" for s in (
            "Suite: stage-b-test-1-gpu-small-amd, partition: 1/2 (0-based id=0)",
            "✅ Enabled 2 test(s) (est total 60.0s):",
            "  - /sglang-checkout/test/registered/a.py (est_time=30.0)",
            "  - /sglang-checkout/test/registered/b.py (est_time=30.0)")).encode())
        for i in range(max(1, mib * 2**20 // len(block))):
            out.write(block)
            if i == 1:
                out.write(f"{STAMP}weights loaded \U0001F600 100%\r{STAMP}\n".encode())
        out.write("".join(STAMP + s + "\n" for s in (
            "filename='/sglang-checkout/test/registered/a.py', elapsed=31, estimated_time=30.0",
            "filename='/sglang-checkout/test/registered/b.py', elapsed=29, estimated_time=30.0")).encode())
    return path.stat().st_size


def read(path: Path, how: str) -> tuple[float, float]:
    done = subprocess.run([sys.executable, "-c", READ, str(ROOT), str(path), how],
                          check=True, capture_output=True, text=True)
    mib, seconds = done.stdout.split()
    return float(mib), float(seconds)


def main(mib: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "shard.log"
        size = write_log(path, mib) / 2**20
        print(f"one job log of {size:.0f} MiB (an emoji and a \\r in its test output), read in a fresh process:")
        for how, what in (("bytes", "as foldbot reads it (bytes, `--logs` and the App)"),
                          ("text", "decoded to text first")):
            peak, seconds = read(path, how)
            print(f"  {what}: peak RSS +{peak:.0f} MiB ({peak / size:.2f}x the log), {seconds:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
