"""What the journal's durable write costs, by itself: groups of N deliveries (14 KiB each)
committed as the web process's writer thread commits them (`Journal._commit`: BEGIN
IMMEDIATE, the INSERTs, a `synchronous=FULL` COMMIT with its fsync), in this thread, with
nothing else running. Prints, per group size, the wall and CPU time per commit and per
delivery: a commit's fixed cost (the fsync) against each row's. Then the disk by itself: an
`fdatasync` of one 14 KiB append, one at a time: the least a durable answer waits for, with
no queue, whatever writes it.

    .venv/bin/python bench/journal_commit.py [deliveries]

(`FOLDBOT_BENCH_DIR`: the directory whose disk is measured, e.g. the data directory's; the
default is the system's temporary directory.)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.journal import Journal, _Write  # noqa: E402

GROUPS = (1, 4, 8, 16, 32, 64)


def measure(directory: Path, group: int, deliveries: int, body: bytes) -> tuple[float, float]:
    """(wall, CPU) seconds to commit `deliveries` in groups of `group`."""
    journal = Journal(directory, checkpoints=False)  # as the web process opens it
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(max(1, deliveries // group)):
            writes = [_Write(journal._accept, (str(uuid.uuid4()), "workflow_run", body, None, time.time()), None)
                      for _ in range(group)]
            outcomes = journal._commit(writes)
            assert all(ok for ok, _ in outcomes), outcomes
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        journal.close()


def fdatasync_times(directory: Path, count: int, body: bytes) -> list[float]:
    """Seconds each `fdatasync` of one appended `body` took, `count` of them, 5 ms apart."""
    times = []
    descriptor = os.open(directory / "appended", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(count):
            os.write(descriptor, body)
            started = time.perf_counter()
            os.fdatasync(descriptor)
            times.append(time.perf_counter() - started)
            time.sleep(0.005)
    finally:
        os.close(descriptor)
    return sorted(times)


def main(deliveries: int = 2048) -> None:
    body = os.urandom(7 * 1024).hex().encode()  # 14 KiB, as the latency benchmark's delivery
    print(f"{deliveries} deliveries of 14 KiB committed through the journal (WAL, synchronous=FULL), by group size:")
    for group in GROUPS:
        with tempfile.TemporaryDirectory(dir=os.environ.get("FOLDBOT_BENCH_DIR")) as tmp:
            wall, cpu = measure(Path(tmp), group, deliveries, body)
        commits = max(1, deliveries // group)
        rows = commits * group
        print(f"  {group:3d} a commit: per commit {wall / commits * 1e6:6.0f} µs wall, {cpu / commits * 1e6:6.0f} µs CPU;"
              f" per delivery {wall / rows * 1e6:5.0f} µs wall, {cpu / rows * 1e6:4.0f} µs CPU")
    count = max(20, min(400, deliveries // 4))
    with tempfile.TemporaryDirectory(dir=os.environ.get("FOLDBOT_BENCH_DIR")) as tmp:
        times = fdatasync_times(Path(tmp), count, body)
    p50, p99 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"the disk alone: an fdatasync of one 14 KiB append, {count} one at a time: "
          f"p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, max {times[-1] * 1e3:.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
