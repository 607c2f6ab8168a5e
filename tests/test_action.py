"""`action.yml`, the composite GitHub Action: it parses, every input is described here and
in the README, its scripts take every value through the environment (no `${{ }}` inside a
script), and its steps' scripts run as a runner runs them (bash, GITHUB_STEP_SUMMARY,
GITHUB_OUTPUT, RUNNER_TEMP, the step's `env:` with its expressions evaluated) against the
fake GitHub: the report lands in the job summary and, with `comment: 'true'`, in one comment
on the run's pull request, edited in place on the next run. The install step is not run here
(it needs PyPI): a `foldbot` on PATH stands in for the installed one."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakegithub import FakeGitHub
from tests.harness import INSTALLATION, current_world
from tests.paths import ROOT

TOKEN = "ghs_" + "a" * 36
LANE = ".github/workflows/pr-test-amd-rocm720.yml"


def action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def step(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in data["runs"]["steps"] if s.get("id") == name or s.get("name") == name)


def evaluate(text: str, context: dict[str, Any]) -> str:
    """The `${{ a || b.c[0].d }}` expressions action.yml uses, as GitHub evaluates them."""
    def operand(expr: str) -> Any:
        expr = expr.strip()
        if expr.startswith("'"):
            return expr.strip("'")
        value: Any = context
        for token in re.findall(r"[A-Za-z_][\w-]*|\[\d+\]", expr):
            if value is None:
                return None
            value = value[int(token[1:-1])] if token.startswith("[") and len(value) > int(token[1:-1]) else (
                None if token.startswith("[") else value.get(token))
        return evaluate(value, context) if isinstance(value, str) and "${{" in value else value

    def one(match: re.Match[str]) -> str:
        for part in match.group(1).split("||"):
            value = operand(part)
            if value not in (None, "", 0, False):
                return str(value)
        return ""

    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def test_the_action_parses_and_documents_its_inputs() -> None:
    data = action()
    assert data["runs"]["using"] == "composite"
    assert data["name"] and data["description"]
    assert set(data["inputs"]) == {"workflow", "runs", "max-logs", "comment", "pr", "token", "python-version"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## GitHub Action"):]
    for name, spec in data["inputs"].items():
        assert spec.get("description"), name
        assert f"`{name}`" in section, f"input {name} is not in the README's GitHub Action section"
    for output in data["outputs"].values():
        assert output["description"]
    for s in data["runs"]["steps"]:
        if "run" in s:
            assert s["shell"] == "bash"
            assert "${{" not in s["run"], f"{s['name']}: values go through env, never into the script"
    assert 'python -m pip install --quiet --disable-pip-version-check -r "$GITHUB_ACTION_PATH/requirements.lock"' in \
        step(data, "Install foldbot")["run"]
    assert step(data, "Comment on the pull request")["if"] == "inputs.comment == 'true'"


async def run_step(s: dict[str, Any], context: dict[str, Any], runner: dict[str, str]) -> tuple[int, str, str]:
    env = {**os.environ, **runner, **{k: evaluate(str(v), context) for k, v in (s.get("env") or {}).items()}}
    process = await asyncio.create_subprocess_exec("bash", "-e", "-c", s["run"], env=env, cwd=runner["RUNNER_TEMP"],
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 240)
    return int(process.returncode or 0), out.decode(), err.decode()


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


async def test_the_action_writes_the_summary_and_one_comment(fake_github: FakeGitHub, tmp_path: Path) -> None:
    world, _ = current_world(fake_github)
    fake_github.add_personal_token(TOKEN, "github-actions[bot]")  # what GITHUB_TOKEN acts as
    world.repo.put_files("ci-change", {"README.md": "a change\n"})
    pull = fake_github.add_pull(world.repo, 77, head_ref="ci-change")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "foldbot").write_text(f"#!/bin/sh\nexec {sys.executable} -m bot \"$@\"\n")
    (bin_dir / "foldbot").chmod(0o755)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    runner = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT), "GITHUB_API_URL": fake_github.base_url,
              "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
              "GITHUB_OUTPUT": str(tmp_path / "output")}
    data = action()
    context: dict[str, Any] = {
        "inputs": {**{k: v.get("default", "") for k, v in data["inputs"].items()}, "comment": "true"},
        "github": {"repository": "sgl-project/sglang", "token": TOKEN,
                   "event": {"workflow_run": {"path": LANE, "pull_requests": [{"number": pull.number}]}}},
    }

    code, _, err = await run_step(step(data, "analyze"), context, runner)
    assert code == 0, err
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n")
    assert "**Reshard** `stage-b-test-1-gpu-small-amd-rocm720` from 14 to 7 shards" in summary
    assert summary.rstrip().endswith("apply the patch (the `foldbot-patch` artifact of this run) with `git apply`.</sub>")
    produced = outputs(tmp_path / "output")
    assert produced == {"report": f"{temp}/foldbot/report.md", "patch": f"{temp}/foldbot/foldbot.patch"}
    assert Path(produced["report"]).read_text() == summary
    assert Path(produced["patch"]).read_text().startswith("diff --git a/.github/workflows/")
    assert TOKEN not in summary + err

    context["steps"] = {"analyze": {"outputs": produced}}
    for expected in ("created", "unchanged"):
        code, out, err = await run_step(step(data, "Comment on the pull request"), context, runner)
        assert code == 0, err
        assert out.startswith(f"{expected} the report comment on #{pull.number}: ")
    comments = fake_github.comments_on(world.repo, pull.number)
    assert [(c.user, c.body) for c in comments] == [("github-actions[bot]", summary)]


@pytest.mark.parametrize("kind", ["personal", "app"])
async def test_the_action_with_another_token_edits_its_one_comment(fake_github: FakeGitHub, tmp_path: Path,
                                                                   kind: str) -> None:
    """The `token` input set to a personal token, or to another App's installation token: the
    comment was looked for as `github-actions[bot]`'s, so each run posted one more. foldbot's
    comment is the token's own account's (GraphQL `viewer`: REST `GET /user` refuses an App's token)."""
    world, _ = current_world(fake_github)
    if kind == "personal":
        token, login = "ghp_" + "b" * 36, "ci-maintainer"
        fake_github.add_personal_token(token, login)
    else:
        token, login = fake_github.installation_token(INSTALLATION), fake_github.bot.login
    pull = fake_github.add_pull(world.repo, 78, head_ref="main")
    report = tmp_path / "report.md"
    runner = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "GITHUB_API_URL": fake_github.base_url,
              "RUNNER_TEMP": str(tmp_path), "GITHUB_STEP_SUMMARY": str(tmp_path / "s"), "GITHUB_OUTPUT": str(tmp_path / "o")}
    data = action()
    comment = step(data, "Comment on the pull request")
    comment = {**comment, "run": comment["run"].replace("foldbot comment", f"{sys.executable} -m bot comment")}
    context: dict[str, Any] = {
        "inputs": {**{k: v.get("default", "") for k, v in data["inputs"].items()}, "comment": "true", "token": token},
        "github": {"repository": "sgl-project/sglang", "token": TOKEN,
                   "event": {"workflow_run": {"path": LANE, "pull_requests": [{"number": pull.number}]}}},
        "steps": {"analyze": {"outputs": {"report": str(report)}}},
    }
    for run, expected in ((1, "created"), (2, "updated")):
        report.write_text(f"<!-- foldbot:report -->\nrun {run}\n")
        code, out, err = await run_step(comment, context, runner)
        assert code == 0, err
        assert out.startswith(f"{expected} the report comment on #{pull.number}: ")
    assert [(c.user, c.body) for c in fake_github.comments_on(world.repo, pull.number)] == [
        (login, "<!-- foldbot:report -->\nrun 2\n")]


async def test_the_action_without_a_pull_request_or_a_workflow(fake_github: FakeGitHub, tmp_path: Path) -> None:
    data = action()
    runner = {"RUNNER_TEMP": str(tmp_path), "GITHUB_STEP_SUMMARY": str(tmp_path / "s"), "GITHUB_OUTPUT": str(tmp_path / "o")}
    context: dict[str, Any] = {"inputs": {k: v.get("default", "") for k, v in data["inputs"].items()},
                               "github": {"repository": "o/r", "token": TOKEN, "event": {}},
                               "steps": {"analyze": {"outputs": {"report": str(tmp_path / "r.md")}}}}
    code, out, _ = await run_step(step(data, "Comment on the pull request"), context, runner)
    assert (code, out) == (0, "::notice::foldbot: the run has no pull request in this repository (a push, or a "
                              "fork's pull request): no comment\n")
    code, out, _ = await run_step(step(data, "analyze"), context, runner)
    assert (code, out) == (2, "::error::foldbot: no workflow to analyse: run on workflow_run, or set the action's "
                              "workflow input\n")
    assert fake_github.writes() == []


def test_foldbot_comment_errors_are_one_line(tmp_path: Path, capsys: Any) -> None:
    from bot.__main__ import main

    assert main(["comment", "--repo", "o/r", "--pr", "0", "--body-file", str(tmp_path / "r.md")]) == 2
    assert capsys.readouterr().err == "foldbot: error: --pr takes a pull request number, not 0\n"
    assert main(["comment", "--repo", "o/r", "--pr", "3", "--body-file", str(tmp_path / "r.md")]) == 2
    assert capsys.readouterr().err == f"foldbot: error: {tmp_path / 'r.md'}: no such file\n"
