"""What the journal's durable write costs, by itself: groups of N deliveries (14 KiB each)
committed as the web process's writer thread commits them (`Journal._commit`: BEGIN
IMMEDIATE, the INSERTs, a `synchronous=FULL` COMMIT with its fsync), in this thread, with
nothing else running. Prints, per group size, the wall and CPU time per commit and per
delivery: a commit's fixed cost (the fsync) against each row's.

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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
