"""Checks of the run-bundle builders, the SGLang history and the embedded example."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from tests.builders import TEMPLATE_DIR, Step, amd_job, bundle, job, skipped_job


ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "bot" / "example"
START = datetime(2026, 8, 10, 8, 0, 0, tzinfo=timezone.utc)


def _t(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _seconds(step: dict) -> float:
    return (_t(step["completed_at"]) - _t(step["started_at"])).total_seconds()


def _setup_seconds(job_obj: dict, first_test: str) -> float:
    total = 0.0
    for s in job_obj["steps"]:
        if s["name"] == first_test:
            return total
        if s["started_at"] is not None:
            total += _seconds(s)
    raise AssertionError(f"{first_test} not in {job_obj['name']}")


def _one_job_bundle(spec) -> dict:
    return bundle(run_id=1234, repo="o/r", workflow_path=".github/workflows/ci.yml",
                  workflow_name="CI", head_sha="a" * 40, jobs=[spec], start=START)


@pytest.mark.parametrize("setup_minutes", [0.05, 3.3, 61.27, 100.0, 154.99])
@pytest.mark.parametrize("extra", [(), ("Setup kernel caches", "Diagnose HF cache and system resources")])
@pytest.mark.parametrize("download", ["skipped", "success", None])
def test_setup_steps_sum_to_setup_minutes(setup_minutes, extra, download):
    spec = amd_job("j (linux-mi300-1gpu-x)", labels=["linux-mi300-1gpu-x"], setup_minutes=setup_minutes,
                   tests=[("Run tests", 10.0)], extra_setup=extra, download_artifacts=download)
    job_obj = _one_job_bundle(spec)["jobs"][0]
    assert abs(_setup_seconds(job_obj, "Run tests") - setup_minutes * 60) <= 1
    names = [s["name"] for s in job_obj["steps"]]
    assert names[:3] == ["Set up job", "Checkout code", "Ensure VRAM is clear"]
    assert names[-2:] == ["Post Checkout code", "Complete job"]
    assert ("Download artifacts" in names) == (download is not None)
    if setup_minutes >= 60:
        container = _seconds(job_obj["steps"][names.index("Start CI container")])
        install = _seconds(job_obj["steps"][names.index("Install dependencies")])
        assert container == pytest.approx(0.55 * setup_minutes * 60, abs=1)
        assert install == pytest.approx(0.40 * setup_minutes * 60, abs=1)


def test_skipped_steps_and_jobs_have_no_time():
    spec = amd_job("j", labels=["linux-mi300-1gpu-x"], setup_minutes=100, tests=[("Run tests", 5)])
    b = bundle(run_id=77, repo="o/r", workflow_path=".github/workflows/ci.yml", workflow_name="CI",
               head_sha="b" * 40, start=START,
               jobs=[spec, skipped_job("other-job"),
                     job("g", [Step("Set up job", 0.1), Step("Maybe", 3, "skipped"), Step("Complete job", 0)],
                         ["ubuntu-latest"])])
    for j in b["jobs"]:
        for s in j["steps"]:
            if s["conclusion"] == "skipped":
                assert s["started_at"] is None and s["completed_at"] is None
            else:
                assert s["started_at"] is not None and s["completed_at"] is not None
    download = next(s for s in b["jobs"][0]["steps"] if s["name"] == "Download artifacts")
    assert download["conclusion"] == "skipped"
    skipped = b["jobs"][1]
    assert (skipped["status"], skipped["conclusion"]) == ("completed", "skipped")
    assert skipped["steps"] == [] and skipped["labels"] == [] and skipped["runner_name"] is None
    assert skipped["started_at"] == skipped["completed_at"]
    assert [j["id"] for j in b["jobs"]] == [77001, 77002, 77003]
    assert b["workflow_run"]["conclusion"] == "success"


def test_bundle_fills_every_template_field_and_fails_on_failed_job():
    tpl_run = json.loads((TEMPLATE_DIR / "actions.get-workflow-run.200.json").read_text())
    tpl_job = json.loads((TEMPLATE_DIR / "actions.list-jobs-for-workflow-run.200.json").read_text())["jobs"][0]
    spec = amd_job("j", labels=["linux-mi300-1gpu-x"], setup_minutes=80, tests=[("Run tests", 5)],
                   conclusion="failure")
    b = _one_job_bundle(spec)
    run, job_obj = b["workflow_run"], b["jobs"][0]
    assert set(tpl_run) <= set(run) and set(tpl_job) <= set(job_obj)
    assert set(tpl_run["repository"]) <= set(run["repository"])
    assert run["conclusion"] == "failure"
    assert run["html_url"] == "https://github.com/o/r/actions/runs/1234"
    assert job_obj["html_url"].startswith("https://github.com/o/r/")
    assert not any("octo" in json.dumps(v) or "Hello-World" in json.dumps(v) for v in (run, job_obj))
    assert next(s for s in job_obj["steps"] if s["name"] == "Run tests")["conclusion"] == "failure"
    stamp = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    for key in ("created_at", "updated_at", "run_started_at"):
        assert stamp.match(run[key])
    for key in ("created_at", "started_at", "completed_at"):
        assert stamp.match(job_obj[key])
    assert all(stamp.match(s["started_at"]) for s in job_obj["steps"] if s["started_at"])


def test_rocm720_history_shape():
    from tests.sglang_history import TWO_GPU_MINUTES, rocm720_history

    history = rocm720_history()
    assert history == rocm720_history()  # deterministic
    assert [b["workflow_run"]["id"] for b in history] == list(range(24000000001, 24000000009))
    assert len({b["workflow_run"]["head_sha"] for b in history}) == 8
    name_2gpu = re.compile(r"^multimodal-gen-test-2-gpu-amd-rocm720 \(linux-mi300-2gpu-sglang, ([0-2])\)$")
    retry_runs = {}
    for n, b in enumerate(history, start=1):
        run = b["workflow_run"]
        assert run["path"] == ".github/workflows/pr-test-amd-rocm720.yml"
        assert run["name"] == "PR Test ROCm 7.2 (AMD)"
        assert run["pull_requests"][0]["number"] == 34400 + n
        shards = {}
        for j in b["jobs"]:
            m = name_2gpu.match(j["name"])
            if m:
                assert j["labels"] == ["linux-mi300-2gpu-sglang"]
                shards[int(m.group(1))] = j
        assert sorted(shards) == [0, 1, 2]
        assert not [j for j in b["jobs"] if j["name"].startswith("multimodal-gen-test-2-gpu") and j not in shards.values()]
        ratios = []
        for p, j in shards.items():
            test = next(s for s in j["steps"] if s["name"] == "Run diffusion server tests (2-GPU)")
            ratios.append(_seconds(test) / 60 / TWO_GPU_MINUTES[p])
            assert 100 * 60 <= _setup_seconds(j, test["name"]) <= 155 * 60
        if max(ratios) > 1.2:
            retry_runs[n] = ratios
        else:
            assert all(abs(r - 1) < 1.2 / 14 for r in ratios)
    assert sorted(retry_runs) == [3, 6]
    assert all(1.8 < r < 2.2 for r in retry_runs[3])
    assert all(2.35 < r < 2.85 for r in retry_runs[6])


def test_example_runs_are_what_make_example_writes():
    from tests import make_example

    bundles, logged = make_example.build()
    on_disk = sorted(EXAMPLE.glob("runs/run-*.json"))
    assert [p.name for p in on_disk] == [f"run-{b['workflow_run']['id']}.json" for b in bundles]
    for p, b in zip(on_disk, bundles):
        assert json.loads(p.read_text()) == b
    assert (EXAMPLE / "logs" / f"{logged['job']['id']}.log").is_file()


def test_example_workflows_load_and_differ_only_by_lane():
    wf = EXAMPLE / "repo" / ".github" / "workflows"
    old = (wf / "pr-test-amd.yml").read_text()
    new = (wf / "pr-test-amd-rocm710.yml").read_text()
    a, b = yaml.safe_load(old), yaml.safe_load(new)
    assert (a["name"], b["name"]) == ("PR Test ROCm 7.0 (AMD)", "PR Test ROCm 7.1 (AMD)")
    assert [j + "-rocm710" if j != "check-changes" and not j.endswith("finish") else j for j in a["jobs"]][:4] \
        == list(b["jobs"])[:4]
    lowered = new.replace(" --rocm-version rocm710", "").replace("-rocm710", "").replace("ROCm 7.1", "ROCm 7.0")
    assert lowered == old


def test_example_log_is_consistent_with_lpt():
    (log,) = EXAMPLE.glob("logs/*.log")
    lines = log.read_text().splitlines()
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ", ln) for ln in lines)
    body = [ln.split(" ", 1)[1] for ln in lines]
    plan = {m.group(2): float(m.group(1)) for ln in body
            if (m := re.match(r"^\[run_suite\] est_time=([\d.]+) file=(\S+)$", ln))}
    assert len(plan) == 16 and all(60 <= v <= 400 for v in plan.values())
    totals, parts = [0.0] * 4, [[] for _ in range(4)]
    for f in sorted(plan, key=lambda f: -plan[f]):
        i = min(range(4), key=lambda k: (totals[k], k))
        totals[i] += plan[f]
        parts[i].append(f)
    timings = [json.loads(ln) for ln in body[body.index("TIMINGS BEGIN") + 1: body.index("TIMINGS END")]]
    assert [t["file"] for t in timings] == parts[0]
    assert all(t["partition"] == 0 and 0.7 <= t["elapsed"] / plan[t["file"]] <= 1.3 for t in timings)
    ends = [m.groups() for ln in body if (m := re.match(r"^End \((\d+)/(\d+)\): filename=(\S+), elapsed=(\d+)$", ln))]
    assert [(int(i), int(n), f) for i, n, f, _ in ends] == [(i, 4, f) for i, f in enumerate(parts[0], start=1)]
