"""The reference case: SGLang's upstream PR #34483, found and written by foldbot.

Input: the two lane files before the PR, and a run history of the rocm720 lane
modelled on real numbers (tests/sglang_history.py). Expected: a patch whose result
is semantically the PR's own `after/` files, in both lanes, saving 2 setup cycles
per lane.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from bot.analysis import Analysis, analyze, lane_savings
from bot.config import RepoConfig
from bot.report import to_json, to_markdown
from bot.verify import check_patch
from tests.paths import AFTER, AMD, ROCM720, SGLANG
from tests.sglang_history import rocm720_history

UNIT = "multimodal-gen-unit-test-amd"
HOST = "multimodal-gen-test-1-gpu-amd"
TWO_GPU = "multimodal-gen-test-2-gpu-amd"


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    files = {ROCM720: (SGLANG / "fold-pr/before/pr-test-amd-rocm720.yml").read_text(),
             AMD: (SGLANG / "fold-pr/before/pr-test-amd.yml").read_text()}
    return analyze(files, rocm720_history(), RepoConfig())


def _load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    data["on"] = data.pop(True)
    return data


def _semantic(data: dict[str, Any], folded_step: str) -> dict[str, Any]:
    """What must agree with the maintainer's version: every job with its needs, matrix,
    `if:`, step order and commands (shell comment lines aside, since the maintainer
    moved them into YAML comments), and the dispatch options. The folded step's
    timeout value may differ."""
    for job in data["jobs"].values():
        for step in job.get("steps") or []:
            if isinstance(step.get("run"), str):
                step["run"] = "\n".join(
                    line for line in step["run"].splitlines() if not line.strip().startswith("#")
                )
            if step.get("name") == folded_step and "matrix.part" in str(step.get("if")):
                step["timeout-minutes"] = "<any>"
    return {"jobs": data["jobs"], "on": data["on"]}


@pytest.mark.parametrize("path", [ROCM720, AMD])
def test_patched_lanes_match_the_maintainers_pr(analysis: Analysis, path: str) -> None:
    edit = next(e for e in analysis.edits if e.path == path)
    ours = _semantic(_load(edit.after), "Run diffusion unit tests")
    theirs = _semantic(_load((AFTER / path.rsplit("/", 1)[1]).read_text()), "Run diffusion unit tests")
    assert ours == theirs


@pytest.mark.parametrize("path,suffix", [(ROCM720, "-rocm720"), (AMD, "")])
def test_the_plan_in_each_lane(analysis: Analysis, path: str, suffix: str) -> None:
    lane = next(r for r in analysis.lanes if r.lane.path == path)
    assert [(f.suite, f.host, f.shard_key, f.shard_value) for f in lane.change.folds] == [
        (UNIT + suffix, HOST + suffix, "part", 0)
    ]
    assert [(r.job, r.from_count, r.to_count, r.flag) for r in lane.change.reshards] == [
        (TWO_GPU + suffix, 3, 2, "--total-partitions")
    ]
    data = _load(next(e for e in analysis.edits if e.path == path).after)
    steps = data["jobs"][HOST + suffix]["steps"]
    names = [s["name"] for s in steps]
    assert names[-3:] == ["Run diffusion server tests (1-GPU)", "Run diffusion unit tests",
                          "Upload diffusion failure artifacts"]
    assert steps[-2]["if"] == "matrix.part == 0 && (success() || failure())"
    assert steps[-2]["timeout-minutes"] == 20  # 3 x p90 of ~5.7 min, rounded up to 5


def test_savings_are_two_setup_cycles_per_lane(analysis: Analysis) -> None:
    savings = {s["lane"]: s for s in lane_savings(analysis)}
    assert savings["rocm720"]["setup_cycles"] == 2
    assert savings["amd"]["setup_cycles"] == 2
    # A fold saves the suite's median setup, a reshard one shard's: ~2 h each.
    assert 3.5 <= savings["rocm720"]["runner_hours"] <= 4.5


def test_only_the_planned_lines_change(analysis: Analysis) -> None:
    """Every byte outside the edited spans is kept: the lines our patch removes are
    exactly the lines the maintainer's patch removed."""
    def removed(diff: str) -> list[str]:
        return sorted(line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))

    theirs = (SGLANG / "fold-pr/fold.diff").read_text()
    assert removed(analysis.patch) == removed(theirs)


def test_the_patch_applies_and_validates(analysis: Analysis) -> None:
    files = {e.path: e.before for e in analysis.edits}
    report = check_patch(analysis.patch, analysis.edits, files)
    assert report.git_apply and report.schema


def test_report_says_which_estimate_and_numbers(analysis: Analysis) -> None:
    text = to_markdown(analysis)
    assert re.search(r"\*\*Reshard\*\* `multimodal-gen-test-2-gpu-amd-rocm720` from 3 to 2 shards.*Estimate from shard times\.", text)
    assert "**Fold** `multimodal-gen-unit-test-amd-rocm720` into shard part=0 of `multimodal-gen-test-1-gpu-amd-rocm720`" in text
    assert "`multimodal-gen-test-1-gpu-amd-rocm720`: 4 shards are needed: 3 would run" in text
    assert f"/fold approve {analysis.patch_id}" in text
    data = to_json(analysis)
    assert [(s["kind"], s["job"], s.get("into"), s.get("from"), s.get("to")) for s in data["suggestions"]] == [
        ("fold", "multimodal-gen-unit-test-amd-rocm720", "multimodal-gen-test-1-gpu-amd-rocm720", None, None),
        ("reshard", "multimodal-gen-test-2-gpu-amd-rocm720", None, 3, 2),
    ]
    assert data["savings"]["setup_cycles"] == 4
    assert data["patch_id"] == analysis.patch_id and len(analysis.patch_id) == 10


def test_a_retry_heavy_history_is_what_keeps_two_shards(analysis: Analysis) -> None:
    """p90, not the median: with retries (runs 3 and 6) one shard would not do."""
    reshard = analysis.plan.reshards[0]
    assert reshard.limit_s == 0.6 * 180 * 60  # mi300 branch of the expression timeout
    assert reshard.predicted_longest_p90_s > 60 * 60  # retries push the 2-shard p90 past an hour
