"""`foldbot fetch` and `foldbot analyze --repo`, run as a user runs them (a process of
their own, GITHUB_TOKEN and GITHUB_API_URL in the environment) against the fake GitHub:
SGLang's current lanes with four completed runs, one of them of 169 jobs (two pages),
and every job's log behind GitHub's redirect."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakegithub import FakeGitHub
from tests.harness import World, current_world
from tests.paths import ROOT

TOKEN = "ghp_" + "f" * 36


async def foldbot(fake: FakeGitHub, *args: str) -> tuple[int, str, str]:
    """The CLI in a process of its own; the fake keeps serving while it runs."""
    env = {**os.environ, "GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": fake.base_url}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", *args, cwd=ROOT, env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=240)
    return int(process.returncode or 0), out.decode(), err.decode()


def big_world(fake: FakeGitHub) -> World:
    world, _ = current_world(fake)
    fake.add_personal_token(TOKEN, "maintainer")
    last = world.runs[-1]
    template = next(j for j in fake.jobs_of(last["id"]) if j["name"].startswith("sgl-kernel-unit-test"))
    fake.add_jobs(last["id"], [{**{k: v for k, v in template.items() if k not in ("id", "run_id", "node_id")},
                                "name": f"extra-{i:03d}", "steps": []} for i in range(120)])
    return world


async def test_fetch_writes_what_analyze_reads(fake_github: FakeGitHub, tmp_path: Path) -> None:
    world = big_world(fake_github)
    code, out, err = await foldbot(fake_github, "fetch", "--repo", "sgl-project/sglang", "--out", str(tmp_path))
    assert code == 0, err
    manifest = json.loads((tmp_path / "fetch.json").read_text())
    lanes = [".github/workflows/pr-test-amd-rocm720.yml", ".github/workflows/pr-test-amd.yml"]
    assert list(manifest["runs"]) == lanes[:1] and f"{lanes[1]}: no completed run" in err
    rocm = manifest["runs"][lanes[0]]
    assert rocm == [f"runs/pr-test-amd-rocm720/{r['id']}.json" for r in world.runs]  # oldest first
    newest = json.loads((tmp_path / rocm[-1]).read_text())
    assert len(newest["jobs"]) == 49 + 120  # every page
    assert fake_github.count("GET", rf"/actions/runs/{world.runs[-1]['id']}/jobs$") == 2
    for path in lanes:
        assert (tmp_path / "repo" / path).read_text() == world.repo.files_at("main")[path]
    # the shard logs of matrices worth resharding, read through the redirect without the token
    assert manifest["logs"] and not manifest["failed_logs"]
    for job_id, file in manifest["logs"].items():
        assert (tmp_path / file).read_bytes() == fake_github.job_logs[int(job_id)]
    assert all("authorization" not in r.headers for r in fake_github.request_log if r.path.startswith("/_blob/"))
    assert "fetching .github/workflows/pr-test-amd-rocm720.yml" in err and f"analyze --fetched {tmp_path}" in out
    assert TOKEN not in out + err

    code, report, err = await foldbot(fake_github, "analyze", "--fetched", str(tmp_path), "--no-checks")
    assert code == 0, err
    assert "**Reshard** `stage-b-test-1-gpu-small-amd-rocm720` from 14 to 7 shards" in report


async def test_analyze_repo_fetches_then_analyses(fake_github: FakeGitHub, tmp_path: Path) -> None:
    big_world(fake_github)
    code, report, err = await foldbot(fake_github, "analyze", "--repo", "sgl-project/sglang", "--out",
                                      str(tmp_path / "f"), "--workflow", "pr-test-amd-rocm720.yml", "--format", "json",
                                      "--no-checks")
    assert code == 0, err
    data = json.loads(report)
    assert any(s["kind"] == "reshard" and s["job"] == "stage-b-test-1-gpu-small-amd-rocm720" and s["to"] == 7
               for s in data["suggestions"])


async def test_fetch_errors_are_one_clear_line(fake_github: FakeGitHub, tmp_path: Path) -> None:
    big_world(fake_github)
    cases = [
        (("fetch", "--repo", "sgl-project/nope", "--out", str(tmp_path)), "GitHub: GETITEM /repos/sgl-project/nope: 404"),
        (("fetch", "--repo", "sgl-project/sglang", "--workflow", "nope.yml", "--out", str(tmp_path)),
         "sgl-project/sglang has no .github/workflows/nope.yml on main; its workflows:"),
        (("fetch", "--repo", "not-a-repo", "--out", str(tmp_path)), "--repo takes OWNER/NAME, not 'not-a-repo'"),
        (("analyze", "--fetched", str(tmp_path / "empty")), "not a directory `foldbot fetch` wrote (no fetch.json)"),
        (("analyze", "--repo", "a/b", "--run", "x.json"), "--repo and --fetched bring their own files"),
    ]
    for args, message in cases:
        code, out, err = await foldbot(fake_github, *args)
        assert (code, out) == (2, ""), (args, err)
        assert err.startswith("foldbot: error: ") and message in err and err.count("\n") == 1, (args, err)


def test_analyze_fetched_passes_only_the_analysed_workflows_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fetch of both lanes holds both lanes' shard logs: each log of the lane not analysed was
    given as a `--logs` of a job in none of the runs, 124 "Could not measure" lines telling the
    user to fix `--logs` they never typed. Only the analysed workflow's jobs' logs are passed."""
    from bot.__main__ import main
    from tests.sglang_current import LANES, history, workflow_text

    manifest: dict[str, Any] = {"repo": "sgl-project/sglang", "head": "0" * 40, "runs": {}, "logs": {}, "failed_logs": {}}
    for lane, (path, *_) in LANES.items():
        (tmp_path / "repo" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / path).write_text(workflow_text(lane), encoding="utf-8")
        bundles, logs = history(lane)
        (tmp_path / "runs" / lane).mkdir(parents=True)
        (tmp_path / "logs").mkdir(exist_ok=True)
        for bundle in bundles:
            file = f"runs/{lane}/{bundle['workflow_run']['id']}.json"
            (tmp_path / file).write_text(json.dumps({**bundle, "workflow_run": {**bundle["workflow_run"], "path": path}}))
            manifest["runs"].setdefault(path, []).append(file)
        for job_id, text in logs.items():
            (tmp_path / f"logs/{job_id}.log").write_text(text, encoding="utf-8")
            manifest["logs"][str(job_id)] = f"logs/{job_id}.log"
    (tmp_path / "fetch.json").write_text(json.dumps(manifest))
    for lane, (path, *_) in LANES.items():
        assert main(["analyze", "--fetched", str(tmp_path), "--workflow", path.rsplit("/", 1)[1], "--format", "json",
                     "--no-checks"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert [u["subject"] for u in data["unmeasured"] if u["subject"].startswith("--logs")] == []
        assert any(s["kind"] == "reshard" and s["job"].startswith("stage-b-test-1-gpu-small-amd") and s["to"] == 7
                   for s in data["suggestions"])  # its own logs read


async def test_more_runs_than_a_page_are_read_page_by_page(fake_github: FakeGitHub) -> None:
    """`foldbot fetch --runs 150` wrote 100 bundles and said nothing: one page, at most 100."""
    import aiohttp

    from bot.api import RepoAPI
    from tests.harness import INSTALLATION, app_pool, sglang_world

    world = sglang_world(fake_github)
    template = {k: v for k, v in world.runs[-1].items() if k not in ("id", "node_id", "run_number")}
    for i in range(130 - len(world.runs)):
        fake_github.add_run(world.repo, {**template, "created_at": f"2026-09-01T{i // 60:02d}:{i % 60:02d}:00Z"})
    async with aiohttp.ClientSession() as session:
        api = RepoAPI(app_pool(fake_github, session).for_installation(INSTALLATION), world.repo.full_name)
        workflow = world.runs[-1]["workflow_id"]
        pages = fake_github.count("GET", r"/actions/workflows/[^/]+/runs")
        assert len(await api.runs(workflow, status="completed", count=120)) == 120
        assert fake_github.count("GET", r"/actions/workflows/[^/]+/runs") - pages == 2
        assert len(await api.runs(workflow, status="completed", count=500)) == 130  # (as many as there are)
        assert len(await api.runs(workflow, status="completed", count=10)) == 10
        assert fake_github.count("GET", r"/actions/workflows/[^/]+/runs") - pages == 2 + 2 + 1


async def test_logs_the_fetch_could_not_read_are_in_the_report(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The fetch said them on stderr and in fetch.json only: the report blamed the logs' absence on
    the user ("pass each shard's log with --logs", which --repo refuses). And it read at most 32 MiB
    whatever `logs.max_mb` said: here 1, so a 1.5 MiB log is over it."""
    world, _ = current_world(fake_github, config="logs: {max_mb: 1}\n")
    fake_github.add_personal_token(TOKEN, "maintainer")
    newest = world.runs[-1]["id"]
    job = next(j for j in fake_github.jobs_of(newest) if j["name"].startswith("stage-b-test-1-gpu-small-amd-rocm720"))
    fake_github.job_logs[job["id"]] = b"x" * (3 * 2**19)
    code, report, err = await foldbot(fake_github, "analyze", "--repo", "sgl-project/sglang", "--out",
                                      str(tmp_path / "f"), "--workflow", "pr-test-amd-rocm720.yml", "--format", "json",
                                      "--no-checks")
    assert code == 0, err
    (line,) = [u for u in json.loads(report)["unmeasured"] if u["subject"] == "fetched logs"]
    assert line == {
        "subject": "fetched logs",
        "reason": f"the fetch could not read 1 shard log: job {job['id']} ({job['name']}): it is 1.50 MiB, over the 1 "
                  "MiB read per log; their runs rest on shard times",
        "fix": "a log GitHub no longer keeps is gone (its retention); one over the limit needs `logs: {max_mb: N}` in "
               ".github/foldbot.yml, which the fetch reads up to; others: fetch again"}


async def test_logs_past_githubs_retention_are_one_line_of_the_report(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """Every shard log of every run gone (404, past GitHub's retention): one line a log was 128 lines,
    57 KB of the report."""
    current_world(fake_github, logs=False)
    fake_github.add_personal_token(TOKEN, "maintainer")
    code, report, err = await foldbot(fake_github, "analyze", "--repo", "sgl-project/sglang", "--out",
                                      str(tmp_path / "f"), "--workflow", "pr-test-amd-rocm720.yml", "--format", "json",
                                      "--no-checks")
    assert code == 0, err
    (line,) = [u for u in json.loads(report)["unmeasured"] if "the fetch could not read" in u["reason"]]
    assert line["reason"].startswith("the fetch could not read ") and "(fetch.json names them)" in line["reason"]
    assert len(line["reason"]) < 1000
