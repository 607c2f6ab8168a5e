"""A fresh clone of this repository alone (no ../shared beside it): outside CI the tests that
need the shared fixtures are skipped on one line naming what is missing, and the others run;
with CI=true the missing fixtures stop the session. Run on a copy in tmp_path, a few files only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

FILES = ["tests/test_config.py", "tests/test_sglang_fold.py", "tests/test_fakegithub.py", "tests/test_real_workflows.py"]


def _clone(tmp_path: Path) -> Path:
    repo = tmp_path / "clone" / "foldbot"
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")
    for name in ("bot", "handlers", "tests"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    for name in ("pyproject.toml", "app.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    assert not (repo.parent / "shared").exists()
    return repo


def _pytest(repo: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *FILES], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=240, check=False)


def test_a_clone_without_shared_fixtures(tmp_path: Path) -> None:
    repo = _clone(tmp_path)
    missing = f"{repo.parent / 'shared' / 'fixtures' / 'github'}, {repo.parent / 'shared' / 'fixtures' / 'sglang'}"

    result = _pytest(repo, None)
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, result.stdout
    assert re.fullmatch(r"SKIPPED \[\d+\] tests/conftest\.py:\d+: needs the shared fixtures, missing here: "
                        + re.escape(missing) + re.escape(" (<repo>/../shared/fixtures; with CI=true this is an error)"),
                        skipped[0]), skipped[0]
    summary = result.stdout.strip().splitlines()[-1]
    counts = re.fullmatch(r"(\d+) passed, (\d+) skipped in [\d.]+s", summary)
    assert counts is not None, summary
    assert int(counts.group(1)) >= 8  # test_config.py runs in full
    # the fake GitHub's tests, the SGLang fold and the real workflows are all skipped, none failed
    assert int(counts.group(2)) >= 35 + 9 + 2

    result = _pytest(repo, "true")
    assert result.returncode == 4  # pytest's usage error: nothing ran
    assert (f"ERROR: the shared fixtures are missing: expected them at {repo.parent / 'shared' / 'fixtures'} "
            f"(not found: {missing})") in result.stderr
    assert "passed" not in result.stdout
