"""End to end over real HTTP: signed `workflow_run` deliveries to a running foldbot,
which talks to the fake GitHub; assertions on the fake's state."""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest

from bot.api import RepoAPI
from bot.states import ReportState
from bot.publish import DASHBOARD_LABEL, DASHBOARD_TITLE, read_state, upsert_comment, upsert_dashboard
from bot.report import MARKER, md_text
from tests.paths import AMD, ROCM720
from tests.fakegithub import FakeGitHub, blob_sha
from tests.fakegithub.state import iso
from tests.harness import INSTALLATION, Bot, app_pool, comment_payload, example, sglang_world

LOGIN = "foldbot[bot]"


def dashboards(fake: FakeGitHub, world) -> list:  # noqa: ANN001
    return [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]


def bot_comments(fake: FakeGitHub, world, number: int) -> list:  # noqa: ANN001
    return [c for c in fake.comments_on(world.repo, number) if c.user == LOGIN]


def apply_patch(tmp_path: Path, files: dict[str, str], patch: str) -> dict[str, str]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True, capture_output=True)
    return {path: (tmp_path / path).read_text() for path in files}


def patch_of(body: str) -> str:
    """The patch a report carries (the one `/fold approve` commits)."""
    state = ReportState.from_json(read_state(body))
    assert state.patch_intact
    return state.patch


def diffs_shown(body: str) -> list[str]:
    return [block.split("\n```", 1)[0] + "\n" for block in body.split("```diff\n")[1:]]


async def test_a_ci_pr_gets_one_comment_with_a_patch_that_applies(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    status, answer = await bot.deliver("workflow_run", world.payload(last["id"]))
    assert status == 202 and "queued" in answer
    await bot.settle()
    number = last["pull_requests"][0]["number"]
    comments = bot_comments(fake_github, world, number)
    assert len(comments) == 1
    body = comments[0].body
    assert body.startswith(MARKER)
    assert f"As of `{last['head_sha'][:12]}`" in body
    assert "| job | setup (min) | tests (min) | other (min) | setup share |" in body
    assert "**Fold** `multimodal-gen-unit-test-amd-rocm720`" in body
    assert "**Skipped in this run**" in body and "`/dispatch rocm720`" in body
    # The PR changes a lane file, and the report is about main's (a PR that reshards a matrix itself was told to
    # reshard it from main's count, with a patch that did not apply at its head, and nothing said why)
    assert (f"\n**This PR changes `{ROCM720}`**: foldbot measures and patches the lane files of `main`, so the "
            "suggestions and their patch are about those, not about this PR's version of them (its patch may not "
            "apply here); the first run after the merge reports on the new files.\n\n**Skipped in this run**") in body
    # The PR's comment is about its run: the lane-wide diff is on the dashboard, which it links
    assert diffs_shown(body) == [] and "[the dashboard](https://github.com/sgl-project/sglang/issues/" in body
    files = world.repo.files_at("main")
    patched = apply_patch(tmp_path, {ROCM720: files[ROCM720], AMD: files[AMD]}, patch_of(body))
    assert "multimodal-gen-unit-test-amd-rocm720:" not in patched[ROCM720]
    state = read_state(body)
    assert state is not None and state["runs"] == [r["id"] for r in world.runs]
    assert state["blobs"] == {path: blob_sha(text.encode()) for path, text in files.items()}
    issues = dashboards(fake_github, world)
    assert len(issues) == 1 and issues[0].title == DASHBOARD_TITLE and issues[0].user == LOGIN
    # The dashboard shows the measured lane's diff, and the same change in the other lane apart
    rocm_diff, amd_diff = diffs_shown(issues[0].body)
    assert rocm_diff.startswith(f"diff --git a/{ROCM720}") and amd_diff.startswith(f"diff --git a/{AMD}")
    assert rocm_diff + amd_diff == patch_of(issues[0].body)
    assert f"The same change in `{AMD}`:" in issues[0].body
    # nobody else's comment was touched; no other PR got a comment
    others = [c for n in range(34401, 34408) for c in bot_comments(fake_github, world, n)]
    assert others == []


async def test_with_issues_turned_off_the_pr_comment_is_the_whole_report(fake_github: FakeGitHub, bot: Bot,
                                                                         tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """A repository with Issues turned off (GitHub answers its issues API 410 Gone) has no
    dashboard: the PR's comment carries what the dashboard would (the lane-wide diff), and
    `/fold approve` works from it."""
    world = sglang_world(fake_github)
    world.repo.has_issues = False
    last = world.runs[-1]
    caplog.set_level("INFO")
    assert (await bot.deliver("workflow_run", world.payload(last["id"])))[0] == 202
    await bot.settle()
    number = last["pull_requests"][0]["number"]
    (comment,) = bot_comments(fake_github, world, number)
    assert dashboards(fake_github, world) == [] and "[the dashboard]" not in comment.body
    rocm_diff, amd_diff = diffs_shown(comment.body)
    assert rocm_diff.startswith(f"diff --git a/{ROCM720}") and amd_diff.startswith(f"diff --git a/{AMD}")
    files = world.repo.files_at("main")
    patched = apply_patch(tmp_path, {ROCM720: files[ROCM720], AMD: files[AMD]}, patch_of(comment.body))
    assert "multimodal-gen-unit-test-amd-rocm720:" not in patched[ROCM720]
    assert ("sgl-project/sglang: Issues are turned off in this repository, so it has no dashboard issue: the reports "
            "are the pull requests' comments") in caplog.text
    assert "Traceback" not in caplog.text
    patch_id = read_state(comment.body)["patch_id"]
    fake_github.set_permission(world.repo, "lead", "maintain")
    payload = comment_payload(world, number, f"/fold approve {patch_id}", "lead")
    assert (await bot.deliver("issue_comment", payload))[0] == 202
    await bot.settle()
    assert [p.head_ref for p in world.repo.pulls.values() if p.head_ref.startswith("foldbot/")] == \
        [f"foldbot/fold-{patch_id}"]


async def test_a_run_re_run_before_its_delivery_is_processed_is_reported_from_its_own_attempt(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """"Re-run all jobs" came before foldbot got to attempt 1's delivery (a backlog, a retry):
    the run's latest jobs are attempt 2's, queued, without steps. Attempt 1 is reported from
    its own jobs (before: "No AMD test time was measured in the latest run")."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    payload = world.payload(last["id"])
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{fake_github.base_url}/repos/{world.repo.full_name}/actions/runs/{last['id']}/rerun",
                                headers={"authorization": f"token {fake_github.installation_token(INSTALLATION)}"}) as r:
            assert r.status == 201
    assert (await bot.deliver("workflow_run", payload))[0] == 202
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, last["pull_requests"][0]["number"])
    assert "No AMD test time" not in comment.body and "**Skipped in this run**" in comment.body
    assert "% of AMD setup and test time in the latest run was setup**" in comment.body
    assert fake_github.count("GET", rf"/actions/runs/{last['id']}/attempts/1/jobs$") == 1


async def test_a_late_delivery_of_an_older_attempt_reports_the_run_as_it_is_now(fake_github: FakeGitHub,
                                                                                  bot: Bot) -> None:
    """Attempt 1 was cancelled in setup, attempt 2 ran every test and was reported; then attempt 1's
    delivery came (redelivered by hand, or after an outage). The dashboard and the PR comment went
    back to attempt 1 ("No AMD test time was measured in the latest run") for good: their state said
    attempt 2 was reported, so nothing reconciled it. GitHub lists the run with attempt 2 completed:
    that is what is reported."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    done = copy.deepcopy(fake_github.jobs_of(last["id"], 1))
    for job in fake_github.jobs_of(last["id"], 1):
        if job["conclusion"] != "skipped":
            job["conclusion"] = "cancelled"
            job["steps"] = [s for s in job["steps"] if s["name"] in ("Set up job", "Checkout code")]
    fake_github.update_run(last["id"], run_attempt=2, conclusion="success")
    fake_github.add_jobs(last["id"], [{**{k: v for k, v in j.items() if k not in ("id", "node_id", "run_id")},
                                       "run_attempt": 2} for j in done])
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(last["id"], run_attempt=2, conclusion="success"))
    await bot.settle()
    (board,), (comment,) = dashboards(fake_github, world), bot_comments(fake_github, world, number)
    headline = re.compile(r"^\*\*(?:\d+% of AMD setup and test time|No AMD)[^*]*\*\*.*$", re.M)
    reported = (headline.search(board.body)[0], headline.search(comment.body)[0])
    assert all(line.startswith("**81% of AMD setup and test time in the latest run") for line in reported)
    await bot.deliver("workflow_run", world.payload(last["id"], run_attempt=1, conclusion="cancelled"))
    await bot.settle()
    (board,), (comment,) = dashboards(fake_github, world), bot_comments(fake_github, world, number)
    assert (headline.search(board.body)[0], headline.search(comment.body)[0]) == reported
    assert "No AMD test time" not in board.body + comment.body
    assert read_state(board.body)["reported"][ROCM720][-1] == [last["id"], 2]


async def test_a_run_waiting_for_approval_changes_nothing_and_is_reported_once_it_ran(fake_github: FakeGitHub,
                                                                                     bot: Bot) -> None:
    """A first-time contributor's fork PR: GitHub holds its run for a maintainer's approval and sends
    `completed` with `action_required`, no job and no PR. foldbot said the lane file was invalid ("fix
    it at that commit"), replaced the dashboard's measured headline, and kept the run as reported,
    so the run, once approved and completed (the same attempt), was skipped as done."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    before = board.body
    sha = "ab" * 20
    fake_github.add_pull(world.repo, 34499, head_ref="fix-ci", head_sha=sha, head_repo_full_name="newcomer/sglang",
                         files=[ROCM720])
    held = fake_github.add_run(world.repo, workflow_id=world.runs[-1]["workflow_id"], path=ROCM720,
                               event="pull_request", head_branch="fix-ci", head_sha=sha, status="completed",
                               conclusion="action_required", head_repository="newcomer/sglang", pull_requests=[],
                               created_at="2026-12-01T08:00:00Z")
    writes = len(fake_github.writes())
    assert (await bot.deliver("workflow_run", world.payload(held["id"])))[0] == 202
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    assert board.body == before and not bot_comments(fake_github, world, 34499)
    assert fake_github.writes()[writes:] == []
    # approved, it runs and completes as the same attempt: reported then
    fake_github.update_run(held["id"], conclusion="success")
    fake_github.add_jobs(held["id"], [{k: v for k, v in j.items() if k not in ("id", "node_id", "run_id")}
                                      for j in fake_github.jobs_of(world.runs[-1]["id"])])
    assert (await bot.deliver("workflow_run", world.payload(held["id"])))[0] == 202
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, 34499)
    assert read_state(comment.body)["head_sha"] == sha
    assert "waits for a maintainer" not in comment.body and "No AMD" not in comment.body


async def test_a_late_delivery_of_an_older_run_does_not_take_the_dashboard_back(fake_github: FakeGitHub,
                                                                                   bot: Bot) -> None:
    """Its PR's comment is written; the dashboard stays on the lane's latest completed run."""
    world = sglang_world(fake_github)
    last, older = world.runs[-1], world.runs[-3]
    for run in (last, older):
        assert (await bot.deliver("workflow_run", world.payload(run["id"])))[0] == 202
        await bot.settle()
    (board,) = dashboards(fake_github, world)
    assert read_state(board.body)["head_sha"] == last["head_sha"]
    (comment,) = bot_comments(fake_github, world, older["pull_requests"][0]["number"])
    assert read_state(comment.body)["head_sha"] == older["head_sha"]


async def test_a_second_run_edits_the_same_comment_and_issue(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    first, second = world.runs[-2], world.runs[-1]
    # both runs belong to the same PR here: point the earlier run at the later run's PR
    number = second["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(first["id"], pull_requests=second["pull_requests"]))
    await bot.settle()
    comment = bot_comments(fake_github, world, number)[0]
    comment_id, comment_body = comment.id, comment.body
    issue_body = dashboards(fake_github, world)[0].body
    assert f"As of `{first['head_sha'][:12]}`" in comment_body
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    comments = bot_comments(fake_github, world, number)
    assert [c.id for c in comments] == [comment_id]
    assert comments[0].body != comment_body and f"As of `{second['head_sha'][:12]}`" in comments[0].body
    issues = dashboards(fake_github, world)
    assert len(issues) == 1 and issues[0].body != issue_body
    assert fake_github.count("PATCH", rf"/issues/comments/{comment_id}$") == 1


async def test_a_late_delivery_of_an_older_run_does_not_take_the_pr_comment_back(fake_github: FakeGitHub,
                                                                                    bot: Bot) -> None:
    """A PR's two heads, each with its lane run; the older run's delivery comes last (GitHub does
    not order deliveries, and a redelivery or a reconcile may bring it a day late). The PR's one
    comment went back to the older head ("As of <old sha>"), with nothing saying so; like the
    dashboard, it stays on the newest run of the lane it reports."""
    world = sglang_world(fake_github)
    first, second = world.runs[-2], world.runs[-1]
    number = second["pull_requests"][0]["number"]
    for run in (second, first):
        assert (await bot.deliver("workflow_run", world.payload(run["id"], pull_requests=second["pull_requests"])))[0] == 202
        await bot.settle()
    (comment,) = bot_comments(fake_github, world, number)
    assert f"As of `{second['head_sha'][:12]}`" in comment.body and read_state(comment.body)["runs"][-1] == second["id"]
    assert fake_github.count("PATCH", rf"/issues/comments/{comment.id}$") == 0


async def _reported_before_the_last_run(fake_github: FakeGitHub, bot: Bot):  # noqa: ANN202
    """The last run's PR reported from the run before (its report comment and the dashboard):
    the world, the last run, the PR's number, the comment and the dashboard issue."""
    world = sglang_world(fake_github)
    prev, last = world.runs[-2], world.runs[-1]
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(prev["id"], pull_requests=last["pull_requests"]))
    await bot.settle()
    (report,) = bot_comments(fake_github, world, number)
    (dashboard,) = dashboards(fake_github, world)
    return world, last, number, report, dashboard


async def test_a_report_comment_someone_deleted_is_written_again_at_the_next_run(fake_github: FakeGitHub,
                                                                                bot: Bot) -> None:
    """A maintainer deletes foldbot's report comment: the PR's next run writes it again, once
    (it carries the state `/fold approve` reads; `comment_on: none` is how to have none)."""
    world, second, number, deleted, _ = await _reported_before_the_last_run(fake_github, bot)
    del world.repo.comments[deleted.id]
    world.repo.issues[number].comment_ids.remove(deleted.id)
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, number)
    assert comment.id != deleted.id and f"As of `{second['head_sha'][:12]}`" in comment.body
    assert fake_github.count("PATCH", rf"/issues/comments/{deleted.id}$") == 0


async def test_the_dashboard_shows_the_other_lanes_headlines(fake_github: FakeGitHub, bot: Bot) -> None:
    """The dashboard holds the full report of the lane whose run came last; SGLang has two
    lanes, so the other lane's headline, as its own latest report gave it, stays in view (and
    in the state, for the next report): nothing flips out of sight. PR comments do not have it."""
    import re

    import copy

    from tests.harness import AMD_ID

    world = sglang_world(fake_github)
    rocm = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(rocm["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    assert "**The other lanes**" not in issue.body
    share, setup, tests, jobs = re.search(r"\*\*(\d+%) of AMD setup and test time in the latest run was setup\*\*: "
                                          r"([\d.]+) runner-hours of setup vs ([\d.]+) of tests over (\d+) jobs",
                                          issue.body).groups()
    template = {k: v for k, v in copy.deepcopy(rocm).items() if k not in ("id", "node_id", "run_number")}
    amd = fake_github.add_run(world.repo, {**template, "workflow_id": AMD_ID, "path": AMD})
    rocm_jobs = fake_github.jobs_of(rocm["id"])
    fake_github.add_jobs(amd["id"], [{k: v for k, v in j.items() if k not in ("id", "run_id", "node_id")}
                                     for j in rocm_jobs[: len(rocm_jobs) // 2]])  # figures of its own
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    assert f"(`{AMD}`), runs [{amd['id']}](" in issue.body  # the amd lane's full report, figures of its own
    assert f"of tests over {jobs} jobs" not in issue.body
    url = world.payload(rocm["id"])["workflow_run"]["html_url"]
    assert ("**The other lanes**, as of their latest reports (a lane's next run brings its full report here):\n\n"
            "| lane | latest run | setup share | setup (runner-h) | tests (runner-h) | AMD jobs |\n"
            "|---|---|---:|---:|---:|---:|\n"
            f"| `pr-test-amd-rocm720.yml` | [{rocm['id']}]({url}) | {share} | {setup} | {tests} | {jobs} |\n") \
        in issue.body
    state = ReportState.from_json(read_state(issue.body))
    assert (state.workflow, sorted(state.lanes)) == (AMD, sorted([AMD, ROCM720]))
    for comment in fake_github.comments_on(world.repo, rocm["pull_requests"][0]["number"]):
        assert "The other lanes" not in comment.body


async def test_a_dashboard_that_says_what_to_fix_keeps_the_lanes_record(fake_github: FakeGitHub, bot: Bot) -> None:
    """A broken config turns the dashboard into what to fix. Its state keeps the record of the
    report it replaces (runs reported, lanes' headlines), not that report's patch; once fixed,
    the next report goes on from that record."""
    world = sglang_world(fake_github)
    first, second, third = world.runs[-3], world.runs[-2], world.runs[-1]
    await bot.deliver("workflow_run", world.payload(first["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    before = ReportState.from_json(read_state(issue.body))
    assert before.patch and before.reported == {ROCM720: ((first["id"], 1),)} and ROCM720 in before.lanes
    world.repo.put_files("main", {".github/foldbot.yml": "history_runs: many\n"})
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    assert "foldbot could not analyse sgl-project/sglang: .github/foldbot.yml: " in issue.body
    kept = ReportState.from_json(read_state(issue.body))
    assert (kept.reported, kept.lanes, kept.patch_id, kept.patch, kept.suggestions) == \
        (before.reported, before.lanes, None, "", ())
    world.repo.put_files("main", {".github/foldbot.yml": None})
    await bot.deliver("workflow_run", world.payload(third["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    assert ReportState.from_json(read_state(issue.body)).reported == {ROCM720: ((first["id"], 1), (third["id"], 1))}


async def test_a_dashboard_a_maintainer_closed_is_edited_closed_not_opened_again(fake_github: FakeGitHub,
                                                                                 bot: Bot) -> None:
    """A maintainer closes the dashboard issue: the next runs do not open another (one a run
    would be spam, which closing it said no to); the closed one still carries the latest report
    (the PR comments link to it), and stays closed."""
    world = sglang_world(fake_github)
    first, second = world.runs[-2], world.runs[-1]
    await bot.deliver("workflow_run", world.payload(first["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    issue.state, issue.state_reason, before = "closed", "completed", issue.body
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    assert dashboards(fake_github, world) == [issue] and fake_github.count("POST", r"/issues$") == 1
    assert (issue.state, issue.state_reason) == ("closed", "completed")
    assert issue.body != before and str(second["id"]) in issue.body


@pytest.mark.parametrize("path", [".github/foldbot.yml", ROCM720], ids=["config", "lane"])
async def test_a_config_or_lane_file_that_is_not_utf8_is_named_on_the_dashboard(fake_github: FakeGitHub, bot: Bot,
                                                                                 path: str) -> None:
    """A file saved in Latin-1 (a Windows editor): the delivery is handled, and the
    dashboard names the file and what to do; no PR comment, no handler failure."""
    world = sglang_world(fake_github)
    before = world.repo.blobs_at("main")[path] if path == ROCM720 else b"history_runs: 5\n"
    world.repo.put_files("main", {path: b"# caf\xe9\n" + before})
    run = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    (issue,) = dashboards(fake_github, world)
    said = (".github/foldbot.yml: not UTF-8 text (byte 5 is 0xe9): save it as UTF-8" if path != ROCM720 else
            f"`{ROCM720}` is not UTF-8 text (byte 5 is 0xe9): save it as UTF-8")
    assert f"foldbot could not analyse sgl-project/sglang: {md_text(said)}\n" in issue.body  # (the path as code)
    assert bot_comments(fake_github, world, run["pull_requests"][0]["number"]) == []
    assert 'outcome="ok"' in (text := await (await bot.session.get(f"{bot.url}/metrics")).text()) and \
        'outcome="error"' not in text and 'outcome="github_error"' not in text


async def test_the_same_delivery_five_times_is_processed_once(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    payload = world.payload(last["id"])
    statuses = [(await bot.deliver("workflow_run", payload, delivery="d-1"))[0] for _ in range(5)]
    await bot.settle()
    assert statuses[0] == 202 and set(statuses[1:]) <= {200, 202}
    assert len(bot_comments(fake_github, world, last["pull_requests"][0]["number"])) == 1
    assert fake_github.count("POST", r"/issues/\d+/comments$") == 1
    assert fake_github.count("POST", r"/issues$") == 1


async def test_two_deliveries_of_one_run_attempt_produce_one_result(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]), delivery="a")
    await bot.deliver("workflow_run", world.payload(last["id"]), delivery="b")
    await bot.settle()
    assert fake_github.count("POST", r"/issues/\d+/comments$") == 1
    assert fake_github.count("PATCH") == 0


async def test_a_pr_without_ci_changes_gets_no_comment_but_the_dashboard(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, ci_pr=False)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert bot_comments(fake_github, world, last["pull_requests"][0]["number"]) == []
    issues = dashboards(fake_github, world)
    assert len(issues) == 1 and "**Fold**" in issues[0].body


async def test_a_pr_of_more_files_than_github_lists_is_taken_as_changing_ci(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub lists at most 3,000 files of a PR: a CI file past them is not seen, so such a PR
    gets its comment (before: none, as if it changed no CI file)."""
    world = sglang_world(fake_github, ci_pr=False)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    world.repo.pulls[number].files = [{"filename": f"python/sglang/gen/m{i:04}.py", "status": "modified"}
                                      for i in range(3000)] + [{"filename": "scripts/ci/amd/test.sh", "status": "modified"}]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert len(bot_comments(fake_github, world, number)) == 1


async def test_a_pr_renaming_a_lane_file_away_changes_ci(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub lists a renamed file under its new name, the old one in `previous_filename`: a PR
    that renames a lane file to a name no lane glob matches changes CI, and gets its comment."""
    world = sglang_world(fake_github, ci_pr=False)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    world.repo.pulls[number].files = [{"filename": ".github/workflows/amd-legacy.yml", "status": "renamed",
                                       "previous_filename": AMD}]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, number)
    assert f"**This PR changes `{AMD}`**: foldbot measures" in comment.body


async def test_a_fork_pr_is_found_by_its_head(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
    world = sglang_world(fake_github, fork=True)
    last = world.runs[-1]
    assert last["pull_requests"] == []
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    number = 34408
    comments = bot_comments(fake_github, world, number)
    assert len(comments) == 1
    files = world.repo.files_at("main")
    apply_patch(tmp_path, {ROCM720: files[ROCM720], AMD: files[AMD]}, patch_of(comments[0].body))


async def test_errors_and_rate_limits_still_give_one_correct_comment(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    fake_github.set_error_rate(0.3, status=502)
    fake_github.secondary_rate_limit(2, retry_after=1)
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    fake_github.set_error_rate(0.0)
    number = last["pull_requests"][0]["number"]
    comments = bot_comments(fake_github, world, number)
    assert len(comments) == 1
    assert "**Fold** `multimodal-gen-unit-test-amd-rocm720`" in comments[0].body
    assert any(r.status == 502 for r in fake_github.requests)
    assert any(r.status == 403 for r in fake_github.requests)
    assert len(dashboards(fake_github, world)) == 1


async def test_a_dashboard_whose_label_was_taken_off_is_found_by_its_marker_and_labelled_again(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review86 F01: a maintainer took the `foldbot` label off the dashboard (or deleted the label): the
    next run opened a second dashboard, its record of reported runs empty (reconciling reported the
    lanes' runs again). It is found among the issues foldbot opened, by its marker, and labelled again."""
    world = sglang_world(fake_github)
    first, second = world.runs[-2], world.runs[-1]
    await bot.deliver("workflow_run", world.payload(first["id"]))
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    board.labels = []
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    boards = [i for i in world.repo.issues.values() if not i.is_pull and i.user == LOGIN and MARKER in (i.body or "")]
    assert [(i.number, i.state, i.labels) for i in boards] == [(board.number, "open", [DASHBOARD_LABEL])]
    assert read_state(board.body)["runs"][-1] == second["id"]


async def test_without_the_issues_permission_the_pr_comment_carries_the_report(fake_github: FakeGitHub, bot: Bot,
                                                                               caplog: pytest.LogCaptureFixture) -> None:
    """review86 F05: an installation that has not accepted the Issues permission: GET /issues answered
    403 and the delivery failed, with no report at all, though the PR comment needs no Issues permission.
    The PR's comment carries the report, as with Issues turned off, and the log says what to grant."""
    world = sglang_world(fake_github)
    fake_github.installations[INSTALLATION].permissions.pop("issues", None)
    last = world.runs[-1]
    with caplog.at_level(logging.INFO):
        await bot.deliver("workflow_run", world.payload(last["id"]), "d1")
        await bot.settle()
    (comment,) = bot_comments(fake_github, world, last["pull_requests"][0]["number"])
    assert read_state(comment.body)["runs"][-1] == last["id"] and dashboards(fake_github, world) == []
    assert "not granted the Issues permission here, so there is no dashboard issue" in caplog.text


async def test_a_push_to_the_pr_marks_the_comment_stale(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    sync = __import__("tests.harness", fromlist=["example"]).example("pull_request/synchronize.payload.json")
    sync["number"] = number
    sync["pull_request"]["head"]["sha"] = "f" * 40
    sync["repository"]["full_name"] = world.repo.full_name
    sync["installation"] = {"id": 31337}
    for _ in range(2):
        await bot.deliver("pull_request", sync)
        await bot.settle()
    body = bot_comments(fake_github, world, number)[0].body
    assert body.split("\n")[1] == (f"> **Stale:** this report is of `{last['head_sha'][:12]}`; the pull request's head is "
                                    "now `ffffffffffff` (a lane run of it, when one runs, updates this comment).")
    assert body.count("**Stale:**") == 1


async def test_a_pr_whose_ci_change_is_reverted_keeps_its_report_current(fake_github: FakeGitHub, bot: Bot) -> None:
    """A PR that had its report while it changed a lane file, then reverted that change: the next
    run edits the same comment (as of the new head, not stale), rather than leaving it marked
    stale with a run pending that came; a PR that never changed CI files still gets none."""
    world, second, number, report, _ = await _reported_before_the_last_run(fake_github, bot)
    sync = example("pull_request/synchronize.payload.json")
    sync["number"] = number
    sync["pull_request"]["head"]["sha"] = second["head_sha"]
    sync["repository"]["full_name"] = world.repo.full_name
    sync["installation"] = {"id": INSTALLATION}
    await bot.deliver("pull_request", sync)
    await bot.settle()
    assert "**Stale:**" in bot_comments(fake_github, world, number)[0].body
    world.repo.pulls[number].files = [{"filename": "python/sglang/srt/server.py", "status": "modified"}]
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, number)
    assert comment.id == report.id and "**Stale:**" not in comment.body
    assert f"As of `{second['head_sha'][:12]}`" in comment.body
    assert read_state(comment.body)["head_sha"] == second["head_sha"]
    other = world.runs[-3]["pull_requests"][0]["number"]
    world.repo.pulls[other].files = [{"filename": "python/sglang/srt/server.py", "status": "modified"}]
    await bot.deliver("workflow_run", world.payload(world.runs[-3]["id"]))
    await bot.settle()
    assert bot_comments(fake_github, world, other) == []


async def test_a_second_report_github_made_after_the_check_is_removed_by_the_next_write(fake_github: FakeGitHub,
                                                                                       bot: Bot) -> None:
    """A replica killed while GitHub held its report comment (or dashboard issue) POST: GitHub made
    it late, after another replica had created its own and found no twin. The next write of that
    PR's report removes the younger copy (and closes a younger dashboard as a duplicate): else each
    run edits the oldest alone and the other stays, as of an older run, for good."""
    world, last, number, report, dashboard = await _reported_before_the_last_run(fake_github, bot)
    late = fake_github.add_comment(world.repo, number, report.body, user_login=LOGIN)
    late_board = fake_github.add_issue(world.repo, DASHBOARD_TITLE, dashboard.body, user_login=LOGIN,
                                       labels=[DASHBOARD_LABEL])
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    (comment,) = bot_comments(fake_github, world, number)
    assert comment.id == report.id and comment.id != late.id and read_state(comment.body)["head_sha"] == last["head_sha"]
    assert late.id not in world.repo.comments
    assert world.repo.issues[late_board.number].state == "closed"
    assert world.repo.issues[late_board.number].body == (f"A duplicate of #{dashboard.number}, written at the same "
                                                          "time; foldbot reports there.")
    assert [i.number for i in dashboards(fake_github, world) if i.state == "open"] == [dashboard.number]


async def test_only_foldbots_own_younger_report_is_removed_never_a_persons_nor_a_reply(fake_github: FakeGitHub,
                                                                                         bot: Bot) -> None:
    """The removal of a second report (and closing of a second dashboard) reaches foldbot's own report
    copies only: a person's comment or issue that carries the marker (a pasted report), and foldbot's
    command replies, stay as they are."""
    world, last, number, report, dashboard = await _reported_before_the_last_run(fake_github, bot)
    report_text, dashboard_text = report.body, dashboard.body  # (the fake's objects change as foldbot edits them)
    pasted = fake_github.add_comment(world.repo, number, report_text, user_login="octocat")
    reply = fake_github.add_comment(world.repo, number, "> /fold help\n\nhelp\n\n<!-- foldbot:reply -->\n",
                                    user_login=LOGIN)
    their_issue = fake_github.add_issue(world.repo, DASHBOARD_TITLE, dashboard_text, user_login="octocat",
                                        labels=[DASHBOARD_LABEL])
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert world.repo.comments[pasted.id].body == report_text and reply.id in world.repo.comments
    assert world.repo.issues[their_issue.number].state == "open"
    assert world.repo.issues[their_issue.number].body == dashboard_text
    assert fake_github.count("DELETE", r"/issues/comments/\d+$") == 0
    (comment,) = [c for c in bot_comments(fake_github, world, number) if MARKER in c.body]
    assert comment.id == report.id and read_state(comment.body)["head_sha"] == last["head_sha"]


async def test_a_non_lane_workflow_is_left_alone(fake_github: FakeGitHub, bot: Bot) -> None:
    """Most of a repository's runs are of other workflows (SGLang: its NVIDIA lanes): telling one
    is no lane costs what says so (the default branch head, the config, the workflow listing),
    not its history, jobs or pull requests."""
    world = sglang_world(fake_github, runs=2)
    for run in world.runs:
        await bot.deliver("workflow_run", world.payload(run["id"], path=".github/workflows/pr-test.yml"))
        await bot.settle()
    assert fake_github.writes() == [] or all(w.path.endswith("access_tokens") for w in fake_github.writes())
    reads = [r.path for r in fake_github.requests if r.method == "GET"]
    assert [p for p in reads if "/actions/" in p or "/pulls" in p or "/commits/" in p] == []


@pytest.mark.parametrize("case,status", [
    ("bad-signature", 401), ("no-signature", 401), ("no-event", 400), ("no-delivery", 400),
    ("not-json", 400), ("missing-field", 400), ("unknown-event", 202), ("ping", 200),
])
async def test_bad_deliveries_change_nothing(fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture,
                                             case: str, status: int) -> None:
    import json as _json

    from tests.harness import sign
    world = sglang_world(fake_github, runs=1)
    payload = world.payload(world.runs[0]["id"])
    body = _json.dumps(payload).encode()
    headers = {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "x-1", "X-Hub-Signature-256": sign(body)}
    if case == "bad-signature":
        headers["X-Hub-Signature-256"] = sign(body, "wrong secret")
    elif case == "no-signature":
        del headers["X-Hub-Signature-256"]
    elif case == "no-event":
        del headers["X-GitHub-Event"]
    elif case == "no-delivery":
        del headers["X-GitHub-Delivery"]
    elif case == "not-json":
        body = b"{not json"
        headers["X-Hub-Signature-256"] = sign(body)
    elif case == "missing-field":
        del payload["workflow_run"]["head_sha"]
        body = _json.dumps(payload).encode()
        headers["X-Hub-Signature-256"] = sign(body)
    elif case == "unknown-event":
        headers["X-GitHub-Event"] = "installation"
    elif case == "ping":
        body = _json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
        headers.update({"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(body)})
    before = len(fake_github.requests)
    with caplog.at_level(logging.INFO):
        got, answer = await bot.post(body, headers)
        await bot.settle()
    assert got == status
    if status >= 400:
        assert "error" in answer
    assert fake_github.requests[before:] == []
    assert "Traceback" not in caplog.text


async def test_an_oversized_body_is_413(fake_github: FakeGitHub, bot: Bot) -> None:
    body = b"{" + b" " * (25 * 1024 * 1024 + 10) + b"}"
    from tests.harness import sign
    before = len(fake_github.requests)  # the credentials check at start
    status, _ = await bot.post(body, {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "big",
                                      "X-Hub-Signature-256": sign(body)})
    assert status == 413
    assert fake_github.requests[before:] == []


async def test_health_and_metrics(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github, runs=2)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    async with bot.session.get(f"{bot.url}/health") as response:
        health = await response.json()
    assert health["ok"] is True and health["queue_depth"] == 0 and health["version"]
    async with bot.session.get(f"{bot.url}/metrics") as response:
        text = await response.text()
    assert 'foldbot_deliveries_total{event="workflow_run",outcome="ok"} 1.0' in text
    assert "foldbot_processing_seconds_count" in text
    assert 'foldbot_github_calls_total{status="200"}' in text
    assert "foldbot_github_rate_limit_remaining" in text


async def test_a_failed_delivery_is_processed_again_when_redelivered(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    payload = world.payload(last["id"])
    fake_github.set_error_rate(1.0, status=500, path=r"/pulls/\d+/files$")
    await bot.deliver("workflow_run", payload, delivery="retry-me")
    await bot.settle()
    number = last["pull_requests"][0]["number"]
    assert bot_comments(fake_github, world, number) == []
    assert "retry-me" not in bot.state.done
    fake_github.set_error_rate(0.0)
    status, _ = await bot.deliver("workflow_run", payload, delivery="retry-me")  # GitHub's manual redelivery
    await bot.settle()
    assert status == 202
    assert len(bot_comments(fake_github, world, number)) == 1
    assert "retry-me" in bot.state.done


async def test_shutdown_drains_the_queue(fake_github: FakeGitHub) -> None:
    from tests.harness import start_bot
    world = sglang_world(fake_github, runs=3)
    fake_github.set_latency(0.05)
    running, runner = await start_bot(fake_github)
    for run in world.runs:
        status, _ = await running.deliver("workflow_run", world.payload(run["id"]))
        assert status == 202
    await running.session.close()
    await runner.cleanup()  # what SIGTERM does: stop accepting, drain, stop
    assert running.state.queue.qsize() == 0
    assert len(running.state.done) == 3
    assert len(dashboards(fake_github, world)) == 1


async def test_two_processes_writing_at_once_leave_one_comment_and_one_dashboard(fake_github: FakeGitHub) -> None:
    """Two foldbot replicas each find no report (their reads overlap) and each create
    one: the oldest stays, the younger comment is deleted and the younger dashboard
    closed as its duplicate, and the survivor carries a current report."""
    world = sglang_world(fake_github)
    repo, number = world.repo.full_name, world.runs[-1]["pull_requests"][0]["number"]
    fake_github.meet(2, method="GET", path=r"/issues/\d+/comments$")  # both reads see nothing yet
    fake_github.meet(2, method="GET", path=r"/issues$")
    async with aiohttp.ClientSession() as first, aiohttp.ClientSession() as second:
        pools = [app_pool(fake_github, session) for session in (first, second)]
        ghs = [pool.for_installation(INSTALLATION) for pool in pools]
        login = await pools[0].bot_login()
        comments = await asyncio.gather(*(upsert_comment(RepoAPI(gh, repo), number, f"report {i}\n{MARKER}", login)
                                          for i, gh in enumerate(ghs)))
        issues = await asyncio.gather(*(upsert_dashboard(RepoAPI(gh, repo), f"dashboard {i}\n{MARKER}", login)
                                        for i, gh in enumerate(ghs)))
    assert fake_github.broken_meetings == []  # the two reads did overlap
    assert fake_github.count("POST", r"/issues/\d+/comments$") == 2 and fake_github.count("POST", r"/issues$") == 2
    (kept,) = bot_comments(fake_github, world, number)
    assert {w.number for w in comments} == {kept.id} and kept.body in ("report 0\n" + MARKER, "report 1\n" + MARKER)
    assert fake_github.count("DELETE", r"/issues/comments/\d+$") == 1
    (dashboard,) = [i for i in dashboards(fake_github, world) if i.state == "open"]
    (closed,) = [i for i in dashboards(fake_github, world) if i.state == "closed"]
    assert {w.number for w in issues} == {dashboard.number} and dashboard.number < closed.number
    assert dashboard.body in ("dashboard 0\n" + MARKER, "dashboard 1\n" + MARKER)
    assert closed.body == f"A duplicate of #{dashboard.number}, written at the same time; foldbot reports there."
    assert closed.state_reason == "not_planned"


async def test_a_run_of_a_thousand_jobs_still_gets_its_report(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub refuses a body over 65,536 characters (the fake too); a run of ~1,000 AMD
    jobs makes a report longer than that, which is trimmed, says so and where the rest
    is, and keeps its state block (and so its approvable patch)."""
    world = sglang_world(fake_github, runs=3)
    last = world.runs[-1]
    template = next(j for j in fake_github.jobs_of(last["id"]) if j["name"].startswith("multimodal-gen-test-1-gpu"))
    extra = [{**{k: v for k, v in template.items() if k not in ("id", "run_id", "node_id")},
              "name": f"extra-suite-{i:04d} (linux-mi300-gpu-1) | `<b>` @octocat",
              "steps": [{k: v for k, v in step.items() if k != "number"} for step in template["steps"]]}
             for i in range(1000)]
    fake_github.add_jobs(last["id"], extra)
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    (dashboard,) = dashboards(fake_github, world)
    assert len(dashboard.body) <= 65536
    assert "Trimmed to fit GitHub's size limit:" in dashboard.body and "the run's page" in dashboard.body
    state = read_state(dashboard.body)
    assert state is not None and state["patch_id"] and state["runs"][-1] == last["id"]
    number = last["pull_requests"][0]["number"]
    (comment,) = bot_comments(fake_github, world, number)
    assert len(comment.body) <= 65536 and read_state(comment.body)["patch_id"] == state["patch_id"]
    assert "@octocat" not in dashboard.body


async def test_a_report_and_dashboard_github_made_three_times_are_left_once(fake_github: FakeGitHub,
                                                                           bot: Bot) -> None:
    """GitHub creates the report comment and the dashboard issue but answers 502 twice in a
    row, so foldbot's retries make three of each: the oldest of each stays, the two younger
    comments are removed and the two younger issues closed as duplicates."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    fake_github.fail_after(2, 502, method="POST", path=rf"/issues/{number}/comments$")
    fake_github.fail_after(2, 502, method="POST", path=r"/issues$")
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert fake_github.count("POST", rf"/issues/{number}/comments$") == 3
    (comment,) = bot_comments(fake_github, world, number)
    issues = sorted(dashboards(fake_github, world), key=lambda i: i.number)
    assert [i.state for i in issues] == ["open", "closed", "closed"]
    assert MARKER in issues[0].body and all(i.body == f"A duplicate of #{issues[0].number}, written at the same "
                                            "time; foldbot reports there." for i in issues[1:])
    assert f"[the dashboard](https://github.com/sgl-project/sglang/issues/{issues[0].number})" in comment.body


async def test_writes_github_carried_out_but_answered_502_or_lost_leave_one_comment_and_one_dashboard(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub creates the comment and the dashboard issue, then answers 502 (or the connection
    is lost after it did the work); foldbot's retry creates a second of each, which it finds
    and removes (the comment) or closes (the issue): one comment and one open dashboard.
    Reads cut off (no answer, or half a body) are read again."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    fake_github.fail_after(1, 502, method="POST", path=rf"/issues/{number}/comments$")
    fake_github.cut_next(1, "drop_after", method="POST", path=r"/issues$")
    fake_github.cut_next(1, "truncate", method="GET", path=r"/actions/runs/\d+/jobs$")
    fake_github.cut_next(1, "drop", method="GET", path=r"/contents/")
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert [r.status for r in fake_github.requests].count(0) == 3
    comments = bot_comments(fake_github, world, number)
    assert len(comments) == 1 and "**Fold** `multimodal-gen-unit-test-amd-rocm720`" in comments[0].body
    assert len([i for i in dashboards(fake_github, world) if i.state == "open"]) == 1


CI_WITH_MI300 = """name: CI
on: pull_request
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: make lint
  gpu:
    strategy:
      fail-fast: false
      matrix:
        arch: [mi300]
    runs-on: linux-${{ matrix.arch }}-gpu-1
    steps:
      - run: pytest
"""


async def test_a_run_on_amd_runners_of_a_repository_without_lanes_says_how_to_measure_it(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """A `ci.yml` whose name says nothing of AMD, in a repository with no lane: its run's jobs ran
    on AMD runners, so the dashboard names them and the config that makes the file a lane (once:
    the next runs of that file cost no reads)."""
    repo = fake_github.add_repo("acme", "kernels")
    repo.put_files("main", {".github/workflows/ci.yml": CI_WITH_MI300}, message="CI")
    fake_github.add_workflow(repo, 41, ".github/workflows/ci.yml")
    fake_github.add_installation(INSTALLATION, [repo])
    payloads = []
    for _ in range(2):
        run = fake_github.add_run(repo, {"workflow_id": 41, "path": ".github/workflows/ci.yml", "status": "completed",
                                         "conclusion": "success", "event": "pull_request"})
        fake_github.add_jobs(run["id"], [{"name": "lint", "labels": ["ubuntu-latest"]},
                                         {"name": "gpu (mi300)", "labels": ["linux-mi300-gpu-1"]}])
        payload = example("workflow_run/completed.with-pull-requests.payload.json")
        payload["workflow_run"] = {**payload["workflow_run"], **fake_github.run(run["id"]), "pull_requests": [],
                                   "head_repository": {"full_name": "acme/kernels", "owner": {"login": "acme"}}}
        payload["repository"] = {**payload["repository"], "full_name": "acme/kernels", "default_branch": "main"}
        payload["installation"] = {"id": INSTALLATION}
        payloads.append(payload)
    await bot.deliver("workflow_run", payloads[0])
    await bot.settle()
    (board,) = [i for i in repo.issues.values() if i.title == "foldbot: AMD CI setup report"]
    assert "These run jobs on AMD runners:\n\n- `.github/workflows/ci.yml`: `gpu`\n\n" in board.body
    assert "```yaml\nlanes:\n  - \".github/workflows/ci.yml\"\n```" in board.body
    jobs_read = fake_github.count("GET", r"/actions/runs/\d+/jobs")
    await bot.deliver("workflow_run", payloads[1])
    await bot.settle()
    assert fake_github.count("GET", r"/actions/runs/\d+/jobs") == jobs_read
    # a file a fork's PR brings (not on the default branch) is never proposed as a lane
    fake_github.add_workflow(repo, 42, ".github/workflows/mine.yml")
    fork_run = fake_github.add_run(repo, {"workflow_id": 42, "path": ".github/workflows/mine.yml", "status": "completed",
                                          "conclusion": "failure", "event": "pull_request"})
    fake_github.add_jobs(fork_run["id"], [{"name": "gpu", "labels": ["linux-mi300-gpu-1"]}])
    fork = {**payloads[0], "workflow_run": {**payloads[0]["workflow_run"], **fake_github.run(fork_run["id"]),
                                             "pull_requests": [], "head_repository": payloads[0]["workflow_run"]["head_repository"]}}
    before = board.body
    await bot.deliver("workflow_run", fork)
    await bot.settle()
    assert repo.issues[board.number].body == before and "mine.yml" not in before


async def test_a_run_whose_amd_jobs_all_skipped_leaves_the_dashboards_report(fake_github: FakeGitHub, bot: Bot) -> None:
    """review92 f02 (ROCm/xla's nightly lane runs on every PR label event and skips its job unless the label is
    `nightly-pipeline`): each such run replaced the dashboard's figures with "No AMD job spent time on setup or
    tests". The dashboard keeps the report it has, with the run counted reported (reconciling does not look for it
    again)."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    before = board.body
    template = {k: v for k, v in copy.deepcopy(last).items() if k not in ("id", "node_id", "run_number")}
    now = iso(time.time())  # (the lane's newest run: a PR's label event, say)
    gated = fake_github.add_run(world.repo, {**template, "head_sha": "c" * 40, "created_at": now, "updated_at": now,
                                             "run_started_at": now, "pull_requests": []})
    fake_github.add_jobs(gated["id"], [
        {"name": job["name"], "status": "completed", "conclusion": "skipped", "steps": [], "labels": []}
        for job in fake_github.jobs_of(last["id"])])
    await bot.deliver("workflow_run", world.payload(gated["id"]))
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    text = before.split("<!-- foldbot:state ")[0]
    assert board.body.split("<!-- foldbot:state ")[0] == text and "No AMD job spent time" not in board.body
    state = read_state(board.body)
    assert state["reported"][ROCM720][-2:] == [[last["id"], 1], [gated["id"], 1]]
    assert state["runs"] == read_state(before)["runs"] and state["patch_id"] == read_state(before)["patch_id"]



async def test_a_run_on_runners_the_pattern_no_longer_matches_is_no_gated_run(fake_github: FakeGitHub,
                                                                             bot: Bot) -> None:
    """review93 f02: the GPU jobs ran in full on relabelled runners (or a custom pattern with a typo): no AMD job
    ran, yet nothing was skipped by a gate. The dashboard says so (the pattern's line), it keeps no old report."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    template = {k: v for k, v in copy.deepcopy(last).items() if k not in ("id", "node_id", "run_number")}
    now = iso(time.time())
    run = fake_github.add_run(world.repo, {**template, "head_sha": "d" * 40, "created_at": now, "updated_at": now,
                                           "run_started_at": now, "pull_requests": []})
    jobs = []
    for job in fake_github.jobs_of(last["id"]):  # the same jobs, run in full, on relabelled runners
        job = {k: v for k, v in copy.deepcopy(job).items() if k not in ("id", "run_id", "node_id")}
        job["labels"] = ["linux-gpu-pool-1"] if job.get("labels") else job.get("labels")
        jobs.append(job)
    fake_github.add_jobs(run["id"], jobs)
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    (board,) = dashboards(fake_github, world)
    assert "`amd_runner_pattern`" in board.body and read_state(board.body)["runs"][-1] == run["id"]



async def test_a_gated_run_after_the_lane_file_changed_writes_the_patch_for_it(fake_github: FakeGitHub,
                                                                               bot: Bot) -> None:
    """review94 f02: after a lane file changed on main, gated runs kept the report of the old file, whose patch
    `/fold approve` refuses ("the lane files changed"): the run's own analysis, of the file as it is, is written."""
    from tests.test_reconcile import _gated_run

    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    before = read_state(dashboards(fake_github, world)[0].body)
    text = world.repo.files_at("main")[ROCM720]
    world.repo.put_files("main", {ROCM720: text + "# a comment a maintainer added\n"})  # the lane file moves on
    gated = _gated_run(fake_github, world)
    await bot.deliver("workflow_run", world.payload(gated["id"]))
    await bot.settle()
    after = read_state(dashboards(fake_github, world)[0].body)
    assert after["blobs"][ROCM720] == blob_sha((text + "# a comment a maintainer added\n").encode())
    assert after["blobs"] != before["blobs"] and after["base_sha"] != before["base_sha"] and after["patch_id"]


async def test_a_gated_run_of_a_lane_added_beside_the_report_keeps_it(fake_github: FakeGitHub, bot: Bot) -> None:
    """review95 f04: a lane added to the repository (a nightly copy of the file), whose first run is gated: the report
    shown, of files unchanged, stays (its patch is one `/fold approve` takes), the added lane's run counted reported."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    before = dashboards(fake_github, world)[0].body
    nightly = ".github/workflows/pr-test-amd-rocm-nightly.yml"
    world.repo.put_files("main", {nightly: world.repo.files_at("main")[ROCM720]})
    fake_github.add_workflow(world.repo, 9200, nightly)
    template = {k: v for k, v in copy.deepcopy(world.runs[-1]).items() if k not in ("id", "node_id", "run_number")}
    now = iso(time.time())
    run = fake_github.add_run(world.repo, {**template, "workflow_id": 9200, "path": nightly, "created_at": now,
                                           "updated_at": now, "run_started_at": now, "pull_requests": []})
    fake_github.add_jobs(run["id"], [{"name": j["name"], "status": "completed", "conclusion": "skipped", "steps": [],
                                      "labels": []} for j in fake_github.jobs_of(world.runs[-1]["id"])])
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    board = dashboards(fake_github, world)[0].body
    assert board.split("<!-- foldbot:state ")[0] == before.split("<!-- foldbot:state ")[0]
    state = read_state(board)
    assert state["workflow"] == ROCM720 and state["patch_id"] == read_state(before)["patch_id"]
    assert state["reported"][nightly] == [[run["id"], 1]]


async def test_a_gated_run_whose_kept_report_would_not_fit_writes_its_own(fake_github: FakeGitHub, bot: Bot,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """review96 f02: the keep path put a bigger record into the body as it was, never looking at its size: past
    GitHub's limit, the write was refused (422), and every later one. Past foldbot's limit, the run's own report is
    written (which `to_markdown` trims to fit)."""
    from handlers import workflow_run
    from tests.test_reconcile import _gated_run

    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    before = dashboards(fake_github, world)[0].body
    monkeypatch.setattr(workflow_run, "BODY_LIMIT", len(before))  # (the kept body, one run more, is over it)
    gated = _gated_run(fake_github, world)
    await bot.deliver("workflow_run", world.payload(gated["id"]))
    await bot.settle()
    board = dashboards(fake_github, world)[0].body
    assert "No AMD job spent time on setup or tests in the latest run" in board
    assert read_state(board)["reported"][ROCM720][-1] == [gated["id"], 1]


async def test_a_pr_that_changes_only_a_called_workflow_gets_its_report_and_is_told_what_it_is_about(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review115 f02: a PR changing only `_pr-test-stage-amd.yml` (its shards' step timeout) was no CI change to
    foldbot: no report under `comment_on: ci-prs`, though the reshard it suggests rests on that file (main's)."""
    from tests.harness import current_world
    from tests.sglang_current import LANES, STAGE_PATH, STAGE_TEXT

    world, _ = current_world(fake_github, config="logs: {max_jobs: 200}\n", staged=True)
    repo = world.repo
    repo.create_branch("amd/stage-timeout", "main")
    sha = repo.put_files("amd/stage-timeout", {STAGE_PATH: STAGE_TEXT.replace(
        "timeout-minutes: ${{ inputs.run_timeout_minutes }}", "timeout-minutes: 30")}, message="a shorter stage timeout")
    pull = fake_github.add_pull(repo, 777, head_ref="amd/stage-timeout", head_sha=sha,
                                head_repo_full_name=repo.full_name, files=[STAGE_PATH])
    run = world.runs[-1]
    run.update(event="pull_request", head_sha=sha, head_branch="amd/stage-timeout",
               pull_requests=[{"number": 777, "id": pull.id, "head": {"ref": "amd/stage-timeout", "sha": sha},
                               "base": {"ref": "main", "sha": repo.branch_sha("main")}}])
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    (report,) = [c for c in fake_github.comments_on(repo, 777) if c.user == LOGIN]
    assert "- **Reshard** `stage-b-test-1-gpu-small-amd-rocm720` from 14 to 7 shards" in report.body
    assert (f"**This PR changes `{STAGE_PATH}`**: foldbot measures and patches the lane files of `main` and reads the "
            f"workflows they call there (`{STAGE_PATH}`), so the suggestions and their patch are about those, not about "
            "this PR's version of them") in report.body
    assert LANES["rocm720"][0] not in report.body.split("**This PR changes", 1)[1].split("**", 1)[0]
