"""Every real SGLang workflow we have, current and 40 historical versions of
`pr-test-amd.yml`, analysed on a synthetic history: a verified patch, or a plain
"nothing to fold" with the reasons. Never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.report import to_markdown
from bot.verify import check_patch
from bot.workflow import parse_workflow
from tests.paths import SGLANG
from tests.synth import synthetic_history

pytestmark = pytest.mark.needs_fixtures  # the real files are in ../shared/fixtures

FILES = sorted((SGLANG / "workflows").glob("*.yml")) + sorted((SGLANG / "history").glob("*.yml"))


def _repo_path(file: Path) -> str:
    name = "pr-test-amd.yml" if file.parent.name == "history" else file.name
    return f".github/workflows/{name}"


def test_there_are_63_real_files() -> None:
    assert len(FILES) == 63


@pytest.mark.parametrize("file", FILES, ids=lambda f: f"{f.parent.name}/{f.name}")
def test_every_real_workflow_gets_a_verified_patch_or_a_reason(file: Path) -> None:
    text = file.read_text()
    path = _repo_path(file)
    analysis = analyze({path: text}, synthetic_history(text, path), RepoConfig())
    report = to_markdown(analysis)
    assert not [w for w in analysis.warnings if "no patch for this file" in w]
    # a folded suite's own moved step (`run_suite.py --suite <its id>`) is no reference left behind
    assert not [w for edit in analysis.edits for w in edit.warnings if "still mentions removed job" in w]
    if analysis.patch:
        checks = check_patch(analysis.patch, analysis.edits, {path: text})
        assert checks.git_apply and checks.schema
        patched = parse_workflow(analysis.edits[0].after, path)
        removed = {f.job for f in analysis.plan.folds}
        assert not removed & set(patched.jobs)
        for reshard in analysis.plan.reshards:
            assert patched.jobs[reshard.job].shard_count == reshard.to_count
        assert f"/fold approve {analysis.patch_id}" in report
    elif any(stats.samples for stats in analysis.stats.values()):
        assert "Nothing to fold or reshard:" in report
    else:  # no AMD test time at all (a docker release, a CUDA lane): said so, with the fix, never "nothing to fold"
        assert "Nothing to fold or reshard" not in report
        assert "No suggestions: these runs hold no AMD test time to plan with" in report
        assert "#### Could not measure" in report and "**Fix:**" in report


def test_the_sweep_finds_patches_in_the_newer_files() -> None:
    """Not only 'nothing': the shapes since late 2025 (folds and reshards) are edited."""
    patched = 0
    for file in FILES:
        text = file.read_text()
        path = _repo_path(file)
        if analyze({path: text}, synthetic_history(text, path), RepoConfig()).patch:
            patched += 1
    assert patched >= 25
