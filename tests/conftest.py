"""Shared test setup: where the real-world fixtures live, and the fake GitHub."""

from __future__ import annotations

import pytest

from tests.fakegithub import fake_github  # noqa: F401  (the shared fake GitHub fixture)
from tests.harness import bot  # noqa: F401  (a running foldbot wired to it)
from tests.paths import AMD, BEFORE, FIXTURES, ROCM720, SGLANG


def pytest_sessionstart(session: pytest.Session) -> None:
    if not SGLANG.is_dir():
        raise pytest.UsageError(f"the shared fixtures are missing: expected them at {FIXTURES}")


@pytest.fixture
def sglang_before() -> dict[str, str]:
    """The two SGLang lane files before upstream PR #34483, by repo path."""
    return {ROCM720: (BEFORE / "pr-test-amd-rocm720.yml").read_text(), AMD: (BEFORE / "pr-test-amd.yml").read_text()}
