"""Shared test setup: where the real-world fixtures live, and the fake GitHub.

Many tests read `../shared/fixtures` (the SGLang workflows and GitHub's example responses the
fake GitHub is built from). In CI (`CI` set, as `.ci/run` is run) a missing fixtures directory
stops the session at once. Elsewhere (a fresh clone of this repository alone) the tests that
need it are skipped, all on one line of the summary naming what is missing, and every other
test runs: a test needs the fixtures when it uses the fake GitHub (`fake_github`, `bot`) or
`sglang_before`, is marked `needs_fixtures`, or fails naming a path under the fixtures directory.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.fakegithub import fake_github  # noqa: F401  (the shared fake GitHub fixture)
from tests.harness import bot  # noqa: F401  (a running foldbot wired to it)
from tests.redisfix import own_redis, redis_server, redis_url  # noqa: F401  (a real redis-server)
from tests.paths import AMD, BEFORE, FIXTURES, ROCM720, SGLANG

NEEDED = (FIXTURES / "github", SGLANG)
MISSING = [path for path in NEEDED if not path.is_dir()]
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
FIXTURE_USERS = {"fake_github", "bot", "sglang_before"}
REASON = (f"needs the shared fixtures, missing here: {', '.join(str(p) for p in MISSING)} "
          "(<repo>/../shared/fixtures; with CI=true this is an error)")


def _skip_needing_fixtures() -> NoReturn:
    pytest.skip(REASON)  # every such test is skipped from this line: one line in the summary


SKIP_LINE = _skip_needing_fixtures.__code__.co_firstlineno + 1


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_fixtures: the test reads ../shared/fixtures (skipped without them, "
                                       "outside CI)")


def pytest_sessionstart(session: pytest.Session) -> None:
    if MISSING and IN_CI:
        raise pytest.UsageError(f"the shared fixtures are missing: expected them at {FIXTURES} "
                                f"(not found: {', '.join(str(p) for p in MISSING)})")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if MISSING and (FIXTURE_USERS & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("needs_fixtures")):
        _skip_needing_fixtures()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if MISSING and report.failed and str(FIXTURES) in report.longreprtext:
        report.outcome = "skipped"
        report.longrepr = (str(Path(__file__)), SKIP_LINE, f"Skipped: {REASON}")


@pytest.fixture
def sglang_before() -> dict[str, str]:
    """The two SGLang lane files before upstream PR #34483, by repo path."""
    return {ROCM720: (BEFORE / "pr-test-amd-rocm720.yml").read_text(), AMD: (BEFORE / "pr-test-amd.yml").read_text()}
