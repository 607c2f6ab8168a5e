"""What foldbot could not measure: every AMD job that is in no job's history has a line
of the report's "Could not measure" section, and every pointer to that section finds it."""

from __future__ import annotations

from datetime import datetime, timezone

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.report import to_json, to_markdown
from tests.builders import amd_job, bundle, skipped_job

START = datetime(2026, 8, 10, 8, tzinfo=timezone.utc)
PATH = ".github/workflows/aiter-test.yaml"
DASHBOARD = "https://github.com/ROCm/aiter/issues/1"

# Modelled on ROCm/aiter's aiter-test.yaml (@92a906e2): one static `name:` over an include matrix.
AITER = """name: Aiter Test
on: pull_request
jobs:
  standard:
    name: Standard Tests (1 GPU)
    strategy:
      fail-fast: false
      matrix:
        include:
          - {runner: aiter-mi355-1gpu, label: MI355}
          - {runner: aiter-1gpu-runner, label: MI325}
    runs-on: ${{ matrix.runner }}
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Setup Aiter
        run: ./.github/scripts/build_aiter_triton.sh
      - name: Tests
        run: ./.github/scripts/aiter_test.sh
"""


def _runs(*jobs_per_run) -> list[dict]:
    return [bundle(run_id=100 + i, repo="ROCm/aiter", workflow_path=PATH, workflow_name="Aiter Test",
                   head_sha=f"{100 + i:040x}", jobs=list(jobs), start=START) for i, jobs in enumerate(jobs_per_run)]


def _aiter_job(name: str, label: str):
    return amd_job(name, labels=[label], setup_minutes=70, tests=[("Tests", 9)])


def _section(report: str) -> list[str]:
    """The lines of the report's "Could not measure" section."""
    lines = report.split("#### Could not measure\n\n", 1)[1].split("\n\n", 1)[0]
    return lines.strip("\n").split("\n")


def test_amd_jobs_that_map_to_no_workflow_job_are_named_with_the_fix() -> None:
    """The runs show names the file does not give (the job was renamed since): the report
    says which and why, where it used to point at a "Could not measure" that was not there."""
    runs = _runs(*[[_aiter_job("Operator Tests (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu"),
                    _aiter_job("Operator Tests (aiter-1gpu-runner, MI325)", "aiter-1gpu-runner")]] * 3)
    analysis = analyze({PATH: AITER}, runs, RepoConfig())
    assert to_json(analysis)["unmeasured"] == [{
        "subject": "Operator Tests",
        "reason": '2 AMD jobs ("Operator Tests (aiter-mi355-1gpu, MI355)", "Operator Tests (aiter-1gpu-runner, MI325)") '
                  "match no job of `.github/workflows/aiter-test.yaml` by `name:` or job id: their time is in the run's "
                  "totals but in no job's history, so no suggestion rests on it",
        "fix": "check that `.github/workflows/aiter-test.yaml` is the version these runs used (a job renamed since maps "
               "to nothing); foldbot reads an API job's name as a job's id or `name:` (literal text and "
               "`${{ matrix.* }}` values), then the `(values)` GitHub appends to a matrix job, and a reusable "
               "workflow's jobs as `<caller name> / <job>`",
    }]
    for report in (to_markdown(analysis), to_markdown(analysis, dashboard=DASHBOARD)):
        assert ("No suggestions: the AMD test time of these runs is of no job foldbot could tell "
                "(see *Could not measure*).") in report
        assert _section(report)[0].startswith(
            '- `Operator Tests`: 2 AMD jobs \\("Operator Tests \\(aiter-mi355-1gpu, MI355\\)", ')


def test_runs_whose_amd_jobs_all_were_skipped_say_so() -> None:
    """Every AMD job maps, and none ran (skipped by its `if:`): the pointer finds a line."""
    skipped = [skipped_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)"),
               skipped_job("Standard Tests (1 GPU) (aiter-1gpu-runner, MI325)")]
    analysis = analyze({PATH: AITER}, _runs(skipped, skipped, skipped), RepoConfig())
    expected = ("- `AMD test time`: no AMD job of the 3 runs ran a test step \\(6 jobs: 6 skipped\\). "
                "**Fix:** wait for a run whose AMD jobs run their tests \\(a `/dispatch` comment on a PR starts one\\).")
    for report in (to_markdown(analysis), to_markdown(analysis, dashboard=DASHBOARD)):
        assert "No suggestions: these runs hold no AMD test time to plan with (see *Could not measure*)." in report
        assert _section(report) == [expected]


def test_a_latest_run_without_test_time_says_why_when_earlier_runs_had_some() -> None:
    ran = [_aiter_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)", "aiter-mi355-1gpu")]
    skipped = [skipped_job("Standard Tests (1 GPU) (aiter-mi355-1gpu, MI355)")]
    analysis = analyze({PATH: AITER}, _runs(ran, ran, ran, skipped), RepoConfig())
    report = to_markdown(analysis)
    assert "**No AMD test time was measured in the latest run** (0.0 runner-hours of setup on AMD runners); " \
           "see *Could not measure* below." in report
    assert _section(report) == [
        "- `AMD test time`: no AMD job of the latest run \\(103\\) ran a test step \\(1 job: 1 skipped\\). "
        "**Fix:** wait for a run whose AMD jobs run their tests \\(a `/dispatch` comment on a PR starts one\\)."]
