"""Where the real-world fixtures live, and the two SGLang lane files' repo paths
(a module of its own, so that the test harness and the benchmarks can import it
without pytest's conftest)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures"
SGLANG = FIXTURES / "sglang"
BEFORE = SGLANG / "fold-pr" / "before"
AFTER = SGLANG / "fold-pr" / "after"
ROCM720 = ".github/workflows/pr-test-amd-rocm720.yml"
AMD = ".github/workflows/pr-test-amd.yml"
