"""Reconciling: a lane run whose delivery never came is found from GitHub's own lists
(installations, their repositories, each lane's latest completed run, the dashboard's
state) and reported all the same; once reported, it is not found again."""

from __future__ import annotations

import asyncio
import copy
import logging
import time

import pytest

from bot.context import Context
from bot.reconcile import Missed, reconcile, record_of
from handlers.workflow_run import report_run
from bot.api import RepoAPI
from bot.publish import DASHBOARD_LABEL, read_report
from bot.reconcile import find_missed
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import iso
from tests.harness import AMD_ID, ROCM720_ID, Bot, sglang_world, start_bot
from tests.paths import AMD, ROCM720
from tests.test_app_workflow_run import bot_comments


def dashboard_state(world):  # noqa: ANN001, ANN201
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    return read_report(issue.body)


def _lost_run(fake: FakeGitHub, world, path: str, workflow_id: int, completed: float) -> dict:  # noqa: ANN001
    """A completed run of the lane like the world's newest, whose delivery never comes."""
    template = world.runs[-1]
    run = {k: v for k, v in copy.deepcopy(template).items() if k not in ("id", "node_id", "run_number")}
    run.update(created_at=iso(completed - 3600), updated_at=iso(completed), run_started_at=iso(completed - 3600),
               workflow_id=workflow_id, path=path)
    lost = fake.add_run(world.repo, run)
    fake.add_jobs(lost["id"], [{k: v for k, v in j.items() if k not in ("id", "run_id", "node_id")}
                               for j in fake.jobs_of(template["id"])])
    return lost


async def test_a_run_whose_delivery_never_came_is_reported(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    lost = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time())  # a new run; its delivery is lost
    assert lost["id"] not in dashboard_state(world).runs
    state = bot.state
    ctx = Context(state.pool, state.metrics, "reconcile", state.store, logging.LoggerAdapter(logging.getLogger("t"), {}))
    lines: list[str] = []

    async def report(item: Missed) -> None:
        await report_run(RepoAPI(state.pool.for_installation(item.installation_id), item.repo), ctx, item.run)

    found = await reconcile(state.pool, report, lines.append)
    assert [(m.repo, m.run["id"]) for m in found] == [("sgl-project/sglang", lost["id"])]
    assert lost["id"] in dashboard_state(world).runs
    assert dashboard_state(world).reported[ROCM720][-1] == (lost["id"], 1)
    assert any(f"run {lost['id']}" in line and "never reported" in line for line in lines)
    assert await reconcile(state.pool, report, lines.append) == []  # once reported, found no more


async def test_the_server_reports_a_lost_run_by_itself(fake_github: FakeGitHub) -> None:
    """`foldbot serve` looks for lost runs on a schedule and reports them through the
    journal, as their delivery would have been: one report, then nothing more."""
    import asyncio

    from tests.harness import start_bot

    world = sglang_world(fake_github)
    first, runner = await start_bot(fake_github)
    await first.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await first.settle()
    await first.session.close()
    await runner.cleanup()
    lost = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time())
    bot, runner = await start_bot(fake_github, reconcile_minutes=0.01, redeliver_first_seconds=0.05)
    try:
        for _ in range(100):
            await asyncio.sleep(0.1)
            await bot.settle()
            if lost["id"] in dashboard_state(world).runs:
                break
        assert lost["id"] in dashboard_state(world).runs
        assert bot.state.journal.is_done(f"reconcile-{lost['id']}-1")
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_an_installation_that_cannot_be_read_does_not_stop_the_others(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    other = fake_github.add_repo("suspended", "repo")
    fake_github.add_installation(7, [other])
    fake_github.fail_next(5, status=403, path=r"/app/installations/7/access_tokens$")
    state = bot.state
    lines: list[str] = []
    found = await reconcile(state.pool, lambda item: _no_report(item), lines.append)
    assert [m.repo for m in found] == ["sgl-project/sglang"]  # the lane's runs, never reported
    assert any(line.startswith("installation 7: not reconciled:") for line in lines)
    del world


async def _no_report(item: Missed) -> None:
    del item


async def test_a_lost_run_of_a_lane_the_dashboard_does_not_show_is_found(fake_github: FakeGitHub, bot: Bot) -> None:
    """A run of `pr-test-amd.yml` completes and its delivery is lost; then a rocm720 run is
    reported, and the dashboard shows rocm720, written after the lost run completed. The
    dashboard's state names the runs reported of each lane: the amd run is not among them.
    (Before, a lane the dashboard did not show was judged by the issue's `updated_at`.)"""
    world = sglang_world(fake_github)
    lost = _lost_run(fake_github, world, AMD, AMD_ID, time.time() - 600)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert dashboard_state(world).workflow == ROCM720
    found = await find_missed(bot.state.pool, await bot.state.pool.bot_login())
    assert [(m.run["id"], m.run["path"]) for m in found] == [(lost["id"], AMD)]


async def test_a_lost_run_an_older_runs_report_had_read_still_gets_its_pr_comment(
        fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    """The lane's newest run (its own PR) completes; its delivery never comes. Then an older
    run's delivery is reported: that report's history reads the newest run too, but the newest
    run was not reported. `foldbot serve` reconciles it: its PR gets its comment, once, and the
    log says so once."""
    caplog.set_level(logging.INFO, logger="foldbot")
    world = sglang_world(fake_github)
    lost = world.runs[-1]
    number = lost["pull_requests"][0]["number"]
    first, runner = await start_bot(fake_github)
    try:
        await first.deliver("workflow_run", world.payload(world.runs[-2]["id"]))
        await first.settle()
    finally:
        await first.session.close()
        await runner.cleanup()
    assert lost["id"] in dashboard_state(world).runs and bot_comments(fake_github, world, number) == []
    bot, runner = await start_bot(fake_github, reconcile_minutes=0.01, redeliver_first_seconds=0.05)
    try:
        for _ in range(100):
            await asyncio.sleep(0.1)
            await bot.settle()
            if bot_comments(fake_github, world, number):
                break
        await asyncio.sleep(1)  # more rounds: nothing more
        await bot.settle()
    finally:
        await bot.session.close()
        await runner.cleanup()
    assert len(bot_comments(fake_github, world, number)) == 1
    assert dashboard_state(world).reported[ROCM720] == ((world.runs[-2]["id"], 1), (lost["id"], 1))
    said = [r.getMessage() for r in caplog.records if "dashboard says were reported" in r.getMessage()]
    assert said == ["reconcile: 1 lane runs are not among the runs the dashboard says were reported (their delivery "
                    "never came, or two replicas wrote the dashboard at once); they are reported now: "
                    f"sgl-project/sglang run {lost['id']}"]


@pytest.mark.parametrize(("path", "text", "said"), [
    (".github/foldbot.yml", "lanes: ['x']\n".encode("utf-16"),
     ".github/foldbot.yml: not UTF-8 text (byte 0 is 0xff): save it as UTF-8"),
    (".github/foldbot.yml", b"# caf\xe9\nhistory_runs: 5\n",
     ".github/foldbot.yml: not UTF-8 text (byte 5 is 0xe9): save it as UTF-8"),
    (".github/workflows/pr-test-amd.yml", b"# caf\xe9\non: [push]\njobs: {}\n",
     "`.github/workflows/pr-test-amd.yml` is not UTF-8 text (byte 5 is 0xe9): save it as UTF-8"),
], ids=["utf16-config", "latin1-config", "latin1-lane"])
async def test_a_repository_whose_files_are_not_utf8_is_named_and_the_others_are_reconciled(
        fake_github: FakeGitHub, bot: Bot, path: str, text: bytes, said: str) -> None:
    broken = fake_github.add_repo("aaa", "broken")
    broken.put_files("main", {".github/workflows/pr-test-amd.yml": "on: [push]\njobs: {}\n", path: text})
    fake_github.add_installation(5, [broken])
    sglang_world(fake_github)
    lines: list[str] = []
    found = await find_missed(bot.state.pool, await bot.state.pool.bot_login(), log=lines.append)
    assert [m.repo for m in found] == ["sgl-project/sglang"]
    assert lines == [f"aaa/broken: not reconciled: {said}"]


async def test_a_dashboard_written_before_reported_runs_were_kept_is_judged_by_its_runs(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """A dashboard an older foldbot wrote has no `reported`: its lane's runs (`runs`) and, for
    another lane, when it was written, say what was reported, as before; the next report keeps
    its lane's runs as reported. So an upgrade does not report every lane's latest run again."""
    import json
    import re

    from bot.report import STATE_CLOSE, STATE_OPEN

    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    block = re.compile(re.escape(STATE_OPEN) + r"(\{.*?\})" + re.escape(STATE_CLOSE), re.S)
    data = json.loads(block.findall(issue.body)[-1])
    del data["reported"]
    issue.body = block.sub(lambda _: STATE_OPEN + json.dumps(data) + STATE_CLOSE, issue.body)
    old = dashboard_state(world)
    assert old.reported == {}
    assert await find_missed(bot.state.pool, await bot.state.pool.bot_login()) == []
    # the next report (another lane's) keeps what the old one said of its lane
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    assert dashboard_state(world).reported == {ROCM720: tuple((r, 1) for r in old.runs), AMD: ((amd["id"], 1),)}
    assert await find_missed(bot.state.pool, await bot.state.pool.bot_login()) == []
    lost = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time())  # completed after: missed
    assert [m.run["id"] for m in await find_missed(bot.state.pool, await bot.state.pool.bot_login())] == [lost["id"]]


async def test_a_repository_with_issues_turned_off_is_said_not_reconciled(fake_github: FakeGitHub, bot: Bot) -> None:
    """No dashboard holds which of its runs were reported: reporting every lane's latest run
    each round would redo them all, so none is, and the log says why (once a round)."""
    world = sglang_world(fake_github)
    world.repo.has_issues = False
    lines: list[str] = []
    assert await find_missed(bot.state.pool, await bot.state.pool.bot_login(), log=lines.append) == []
    assert lines == ["sgl-project/sglang: not reconciled: Issues are turned off in this repository, so it has no "
                     "dashboard issue: the reports are the pull requests' comments (turn Issues on in Settings > "
                     "General > Features for the dashboard); with no dashboard to hold which runs were reported, "
                     "missed runs are not looked for"]


async def test_an_archived_repository_is_said_not_reconciled(fake_github: FakeGitHub, bot: Bot) -> None:
    """Read-only: a report of its missed run could not be written, and each round would try
    (and fail) again. `GET /installation/repositories` says `archived: true`: skipped, said
    once a round."""
    world = sglang_world(fake_github)
    fake_github.archive(world.repo)
    lines: list[str] = []
    assert await find_missed(bot.state.pool, await bot.state.pool.bot_login(), log=lines.append) == []
    assert lines == ["installation 31337: not reconciled, archived (read-only): sgl-project/sglang"]
    assert fake_github.count("GET", r"/actions/workflows/[^/]+/runs") == 0


async def test_a_reconciled_run_whose_report_keeps_failing_is_set_aside_once_not_queued_each_round(
        fake_github: FakeGitHub, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """A handler that fails the same way each time (here GitHub answers the run's jobs 422):
    the `reconcile-<run>-<attempt>` delivery fails 3 times and is set aside, as any; the
    rounds after do not queue it again (each would fail it anew, and analyse the run again)."""
    import asyncio

    from bot import server

    monkeypatch.setattr("bot.journal.RETRY_AFTER_SECONDS", (0.2, 0.2))
    monkeypatch.setattr(server, "UPKEEP_SECONDS", 0.1)
    world = sglang_world(fake_github)
    latest = world.runs[-1]
    fake_github.fail_next(10**6, status=422, path=rf"/actions/runs/{latest['id']}/jobs")
    delivery = f"reconcile-{latest['id']}-1"
    bot, runner = await start_bot(fake_github, data_dir=tmp_path, reconcile_minutes=0.005,  # a round every 0.3 s
                                  redeliver_first_seconds=0.05)
    try:
        for _ in range(200):
            await asyncio.sleep(0.05)
            if bot.state.journal.set_aside(0):
                break
        assert bot.state.journal.set_aside(0) == [(delivery, "workflow_run")]
        reads = fake_github.count("GET", rf"/actions/runs/{latest['id']}/jobs")
        rounds = fake_github.count("GET", r"/installation/repositories")
        for _ in range(300):  # (three more rounds, ~1 s; on a loaded machine, up to 15 s)
            await asyncio.sleep(0.05)
            if fake_github.count("GET", r"/installation/repositories") >= rounds + 3:
                break
        assert fake_github.count("GET", r"/installation/repositories") >= rounds + 3  # rounds went on
        assert fake_github.count("GET", rf"/actions/runs/{latest['id']}/jobs") == reads
        assert bot.state.journal.state(delivery) == "failed" and bot.state.journal.pending(5) == []
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_an_empty_repository_is_passed_over_without_a_word(fake_github: FakeGitHub, bot: Bot) -> None:
    """A repository with no commit (GitHub answers its refs 409 "Git Repository is empty.") has no
    lane: each round passes it over, with no warning to repeat every 30 minutes."""
    sglang_world(fake_github, runs=1)
    empty = fake_github.add_repo("sgl-project", "empty")
    fake_github.installations[31337].repo_ids.add(empty.id)
    lines: list[str] = []
    await find_missed(bot.state.pool, "foldbot[bot]", log=lines.append)
    assert fake_github.count("GET", r"/repos/sgl-project/empty/git/ref/heads/main$") == 1
    assert lines == []


async def _round(bot: Bot) -> list[str]:
    """One reconciling round as `foldbot serve` runs it (through the journal); the ids it queued."""
    from bot.server import _queue_missed

    found = await find_missed(bot.state.pool, await bot.state.pool.bot_login())
    queued = [queued.delivery_id for item in found if (queued := await _queue_missed(bot.state, item))]
    await bot.settle()
    return queued


NVIDIA = ".github/workflows/nvidia.yml"


def _nvidia_run(fake: FakeGitHub, world) -> dict:  # noqa: ANN001
    """A run of a workflow that is no lane (as SGLang's NVIDIA lanes): most of a repository's runs."""
    if NVIDIA not in world.repo.files_at("main"):
        world.repo.put_files("main", {NVIDIA: "name: nvidia\non: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
                                              "    steps:\n      - run: echo\n"})
        fake.add_workflow(world.repo, 9100, NVIDIA)
    template = {k: v for k, v in copy.deepcopy(world.runs[-1]).items() if k not in ("id", "node_id", "run_number")}
    return fake.add_run(world.repo, {**template, "workflow_id": 9100, "path": NVIDIA, "pull_requests": []})


async def test_a_fixed_config_puts_the_report_back_at_the_next_round(fake_github: FakeGitHub, bot: Bot) -> None:
    """review86 F02: a broken `.github/foldbot.yml`, said on the dashboard by a run of a workflow that is no
    lane, stayed there once fixed until the lane's next run (days, maybe): reconciling saw every lane run
    reported, and this process remembered having reported the lane's run. The error is marked with the
    head it was found at; once the default branch has moved and the config reads, one round puts the
    lane's report back (once: the next rounds leave it), through the journal as any delivery."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    report = dashboard_state(world)
    assert report.patch_id and not report.error
    nvidia = _nvidia_run(fake_github, world)
    broken_at = world.repo.put_files("main", {".github/foldbot.yml": "history_runs: many\n"})  # broken
    await bot.deliver("workflow_run", world.payload(nvidia["id"]))
    await bot.settle()
    error = dashboard_state(world)
    assert error.error and error.base_sha == broken_at and error.patch_id is None
    assert error.reported == report.reported  # (the record of runs reported is kept)
    assert await _round(bot) == []  # still broken: said already, nothing to report
    fixed_at = world.repo.put_files("main", {".github/foldbot.yml": None})  # fixed
    assert await _round(bot) == [f"reconcile-{last['id']}-1-error-{fixed_at[:12]}"]
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    assert "could not analyse" not in issue.body
    back = dashboard_state(world)
    assert not back.error and back.patch_id == report.patch_id and back.base_sha == fixed_at
    assert back.reported == report.reported
    assert await _round(bot) == []


async def test_an_analysis_that_fails_is_tried_again_once_per_default_branch_head(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane run that cannot be analysed is reported as that error (its run counted reported): the
    rounds at the same default branch head leave it; once the head moves, one round analyses again."""
    from bot.analysis import AnalysisError
    from handlers import workflow_run

    world = sglang_world(fake_github)
    last = world.runs[-1]
    analyse = workflow_run.analyze_with_logs

    async def fails(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AnalysisError("the lane's jobs cannot be told apart")

    monkeypatch.setattr(workflow_run, "analyze_with_logs", fails)
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    error = dashboard_state(world)
    assert error.error and error.base_sha == world.repo.branch_sha("main") and error.reported == {ROCM720: ((last["id"], 1),)}
    assert await _round(bot) == [] and await _round(bot) == []
    moved = world.repo.put_files("main", {"README.md": "a commit that fixes nothing\n"})
    assert await _round(bot) == [f"reconcile-{last['id']}-1-error-{moved[:12]}"]  # still failing: the error anew,
    again = dashboard_state(world)
    assert again.error and again.base_sha == moved
    assert await _round(bot) == []  # at this head, once
    monkeypatch.setattr(workflow_run, "analyze_with_logs", analyse)
    world.repo.put_files("main", {"README.md": "the fix\n"})
    assert len(await _round(bot)) == 1
    assert not dashboard_state(world).error and dashboard_state(world).patch_id


async def test_a_lane_dropped_from_the_config_leaves_the_dashboard_at_the_next_round(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review86 F04: `lanes` no longer names the lane the dashboard reports in full: neither its runs
    (no lane now) nor reconciling (every remaining lane's run reported) touched the dashboard, which
    went on offering that lane's patch. One round reports a remaining lane's latest run in its place."""
    world = sglang_world(fake_github)
    rocm = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(rocm["id"]))
    await bot.settle()
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    shown = dashboard_state(world)
    assert shown.workflow == AMD and set(shown.lanes) == {AMD, ROCM720}
    assert await _round(bot) == []
    head = world.repo.put_files("main", {".github/foldbot.yml": f"lanes:\n  - {ROCM720}\n"})  # amd is no lane now
    assert await _round(bot) == [f"reconcile-{rocm['id']}-1-lanes-{head[:12]}"]
    shown = dashboard_state(world)
    assert shown.workflow == ROCM720 and set(shown.lanes) == {ROCM720}
    assert set(shown.reported) == {AMD, ROCM720}  # (the dropped lane's runs stay reported: named again, not twice)
    assert await _round(bot) == []


async def test_the_lane_whose_analysis_failed_is_the_one_analysed_again(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """review90 f03: the error's state kept the lane the dashboard showed before (rocm720), so once the default
    branch moved the round analysed rocm720, which succeeded: the error was gone though the amd lane still failed."""
    from bot.analysis import AnalysisError
    from handlers import workflow_run

    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    analyse = workflow_run.analyze_with_logs

    async def amd_fails(api, ctx, files, bundles, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if bundles[-1]["workflow_run"]["path"] == AMD:
            raise AnalysisError("the lane's jobs cannot be told apart")
        return await analyse(api, ctx, files, bundles, *args, **kwargs)

    monkeypatch.setattr(workflow_run, "analyze_with_logs", amd_fails)
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    assert dashboard_state(world).error and dashboard_state(world).workflow == AMD
    head = world.repo.put_files("main", {"README.md": "a commit that fixes nothing\n"})
    assert await _round(bot) == [f"reconcile-{amd['id']}-1-error-{head[:12]}"]
    assert dashboard_state(world).error and dashboard_state(world).base_sha == head  # still failing: still said


async def test_a_run_found_by_an_installation_and_by_a_round_is_reported_once(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """review90 f04: an installation event's catch-up and a reconciling round journal one missed run under two ids;
    both queued before either ran, the run is analysed once (this process remembers it)."""
    from dataclasses import replace

    from bot.server import _queue_missed

    world = sglang_world(fake_github)  # the last run's delivery never came
    calls = _count_reports(monkeypatch)
    (item,) = await find_missed(bot.state.pool, await bot.state.pool.bot_login())
    assert await _queue_missed(bot.state, replace(item, found_by="0b6c2d00-installation-event"))
    assert await _queue_missed(bot.state, item)
    await bot.settle()
    assert calls == [world.runs[-1]["id"]]


async def test_an_error_dashboard_written_before_errors_were_marked_is_put_back_once_fixed(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review90 f06: an error dashboard of the release before (its text, the kept state, no `error` flag) is read as
    an error found at a head not known: once the config reads, one round puts the report back."""
    from dataclasses import replace

    from bot.report import state_block

    world = sglang_world(fake_github)
    last = world.runs[-1]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    report = read_report(issue.body)
    assert report is not None and report.patch_id
    kept = replace(report, patch_id=None, patch="", summary="", suggestions=())
    issue.body = ("<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n\n"
                  "foldbot could not analyse sgl-project/sglang: .github/foldbot.yml: `history_runs` is not a whole "
                  "number\n\nFix the file it names; the next completed lane run updates this report.\n"
                  f"\n{state_block(kept.to_json())}\n")
    head = world.repo.put_files("main", {"README.md": "the config was fixed\n"})
    assert await _round(bot) == [f"reconcile-{last['id']}-1-error-{head[:12]}"]
    assert "could not analyse" not in issue.body and read_report(issue.body).patch_id == report.patch_id


async def test_a_lane_run_said_as_a_config_error_is_reported_once_the_config_reads(fake_github: FakeGitHub,
                                                                                     bot: Bot) -> None:
    """review93 f01: a lane run that came while the config was broken is not counted reported by the error; once
    fixed, a round finds it missed and journals it, and this process's memory of the run's first delivery must not
    skip it (the dashboard stayed an error for good)."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    world.repo.put_files("main", {".github/foldbot.yml": "history_runs: many\n"})  # broken
    run = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time())
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    assert dashboard_state(world).error
    head = world.repo.put_files("main", {".github/foldbot.yml": None})  # fixed
    # (the dashboard is an error of an older head too: the once-a-head id stands for the run)
    assert await _round(bot) == [f"reconcile-{run['id']}-1-error-{head[:12]}"]
    assert not dashboard_state(world).error and dashboard_state(world).reported[ROCM720][-1] == (run["id"], 1)
    assert await _round(bot) == []


def _gated_run(fake: FakeGitHub, world, sha: str = "c" * 40) -> dict:  # noqa: ANN001
    """The lane's newest run, of every AMD job skipped (a label event, say), no PR listed."""
    template = {k: v for k, v in copy.deepcopy(world.runs[-1]).items() if k not in ("id", "node_id", "run_number")}
    now = iso(time.time())
    run = fake.add_run(world.repo, {**template, "head_sha": sha, "created_at": now, "updated_at": now,
                                    "run_started_at": now, "pull_requests": []})
    fake.add_jobs(run["id"], [{"name": j["name"], "status": "completed", "conclusion": "skipped", "steps": [],
                               "labels": []} for j in fake.jobs_of(world.runs[-1]["id"])])
    return run


async def test_a_gated_run_does_not_keep_a_dropped_lanes_report(fake_github: FakeGitHub, bot: Bot) -> None:
    """review93 f03: the dashboard shows a lane the config dropped; the round reports the remaining lane's newest
    run to replace it, a gated one (every AMD job skipped): that keeps no report of the dropped lane."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time() - 60)
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    assert dashboard_state(world).workflow == AMD
    gated = _gated_run(fake_github, world)
    await bot.deliver("workflow_run", world.payload(gated["id"]))
    await bot.settle()
    assert dashboard_state(world).workflow == AMD  # (kept: the run measured nothing)
    head = world.repo.put_files("main", {".github/foldbot.yml": f"lanes:\n  - {ROCM720}\n"})  # amd is no lane now
    assert await _round(bot) == [f"reconcile-{gated['id']}-1-lanes-{head[:12]}"]
    shown = dashboard_state(world)
    assert shown.workflow == ROCM720 and set(shown.lanes) == {ROCM720}



async def test_a_gated_run_keeps_no_headline_of_a_dropped_lane(fake_github: FakeGitHub, bot: Bot) -> None:
    """review94 f01: the dashboard shows rocm720 with amd's headline beside it; amd is dropped; the round reports
    rocm720's newest run, a gated one: it kept the old text, amd's headline and its diff with it."""
    world = sglang_world(fake_github)
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time() - 600)
    await bot.deliver("workflow_run", world.payload(amd["id"]))
    await bot.settle()
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert set(dashboard_state(world).lanes) == {AMD, ROCM720}
    gated = _gated_run(fake_github, world)
    await bot.deliver("workflow_run", world.payload(gated["id"]))
    await bot.settle()
    head = world.repo.put_files("main", {".github/foldbot.yml": f"lanes:\n  - {ROCM720}\n"})  # amd is no lane now
    assert await _round(bot) == [f"reconcile-{gated['id']}-1-lanes-{head[:12]}"]
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    assert set(dashboard_state(world).lanes) == {ROCM720} and AMD not in issue.body.split("<!-- foldbot:state ")[0]
    assert await _round(bot) == []


async def test_a_lane_dropped_and_named_again_is_not_reported_twice(fake_github: FakeGitHub, bot: Bot) -> None:
    """review94 f04, review95: amd's newest run was reported by a round (its delivery lost); amd dropped, then named
    again: the record of its runs went with the drop, so the run was missed again under an id the journal had done
    (nothing queued), or, given an id per head, reported twice in a new repository. The record keeps a dropped
    lane's runs: named again, nothing is reported twice, nothing is lost (its headline comes with its next run)."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    assert await _round(bot) == [f"reconcile-{amd['id']}-1"]
    head = world.repo.put_files("main", {".github/foldbot.yml": f"lanes:\n  - {ROCM720}\n"})  # amd dropped
    assert await _round(bot) == [f"reconcile-{world.runs[-1]['id']}-1-lanes-{head[:12]}"]
    assert set(dashboard_state(world).lanes) == {ROCM720} and AMD in dashboard_state(world).reported
    world.repo.put_files("main", {".github/foldbot.yml": None})  # amd is a lane again
    assert await _round(bot) == []
    newer = _lost_run(fake_github, world, AMD, AMD_ID, time.time() + 60)  # its next run: its delivery lost too
    assert await _round(bot) == [f"reconcile-{newer['id']}-1"]
    assert set(dashboard_state(world).lanes) == {AMD, ROCM720}


async def test_the_first_reports_of_a_repository_with_two_lost_lane_runs_are_one_each(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """review95 f03: no dashboard yet, both lanes' newest runs lost; a round journals both; the first report writes
    the dashboard naming one lane; a round before the second runs must not journal the other again."""
    from bot.server import _queue_missed

    world = sglang_world(fake_github)
    _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    calls = _count_reports(monkeypatch)
    found = await find_missed(bot.state.pool, await bot.state.pool.bot_login())
    assert len(found) == 2 and await _queue_missed(bot.state, found[1])  # (the other waits in a backlog)
    await bot.settle()
    assert await _round(bot) == [found[0].delivery_id]  # the other lane's: not the reported one again
    assert sorted(calls) == sorted(int(item.run["id"]) for item in found)


def _count_reports(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of the runs `report_run` is asked to report, in order, from now on."""
    from handlers import workflow_run

    calls: list[int] = []
    report_run_ = workflow_run.report_run

    async def counting(api, ctx, run, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(int(run["id"]))
        return await report_run_(api, ctx, run, *args, **kwargs)

    monkeypatch.setattr(workflow_run, "report_run", counting)
    return calls


async def test_an_error_keeps_the_dashboards_record_bounded(fake_github: FakeGitHub, bot: Bot) -> None:
    """review97 f02: the error path wrote the record as it was, 40 renamed lanes of 20 runs each kept while the error
    lasted. Bounded as a report's is: the lane files unread (one is not text), the paths reported last stand for the
    lanes; the others keep their latest run, ten of them."""
    from dataclasses import replace

    from bot.publish import with_state
    from bot.report import state_block
    from bot.states import GONE_KEPT, REPORTED_KEPT, report_scope, signed, state_key

    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    state = read_report(issue.body)
    old = {f".github/workflows/old-{i:03d}.yml": tuple((10_000 + 100 * i + n, 1) for n in range(REPORTED_KEPT))
           for i in range(40)}  # (a record of a foldbot before the bound: 40 lane files renamed away)
    keys = (state_key(bot.state.settings.webhook_secret),)
    issue.body = with_state(issue.body, state_block(signed(replace(state, reported={**old, **state.reported}).to_json(),
                                                           keys, report_scope(world.repo.full_name, None))))
    world.repo.put_files("main", {AMD: b"\xff\xfe not text"})
    run = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time())
    await bot.deliver("workflow_run", world.payload(run["id"]))
    await bot.settle()
    after = dashboard_state(world)
    assert after.error and after.reported[ROCM720][-1] == (run["id"], 1)
    assert len(after.reported) <= 2 * GONE_KEPT + 1
    assert sum(len(items) for items in after.reported.values()) <= (GONE_KEPT + 1) * REPORTED_KEPT + GONE_KEPT


async def test_a_reconciled_run_whose_record_a_racing_write_dropped_is_reported_again(
        fake_github: FakeGitHub, bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """review96 f01: a run a round reported (its `reconcile-<run>-<attempt>` done), then dropped from the dashboard's
    record by a second replica's write from the body it had read: the next round reports it again, under an id that
    names the record it found (`-lost-<record>`), each time it is dropped; a report that leaves the record as it was
    is not made again."""
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    stale = issue.body  # what the other replica read before the round's report was written
    amd = _lost_run(fake_github, world, AMD, AMD_ID, time.time())
    assert await _round(bot) == [f"reconcile-{amd['id']}-1"]
    assert (amd["id"], 1) in dashboard_state(world).reported[AMD]
    issue.body = stale  # the other replica's write: amd's record is gone (GitHub has no compare-and-set)
    calls = _count_reports(monkeypatch)
    assert await _round(bot) == [f"reconcile-{amd['id']}-1-lost-{record_of(read_report(stale))}"]
    assert calls == [amd["id"]] and (amd["id"], 1) in dashboard_state(world).reported[AMD]
    assert await _round(bot) == []  # reported: found no more

    # dropped again, by the other replica's report of a rocm720 run written over the body it read before
    issue.body = stale
    rocm720 = _lost_run(fake_github, world, ROCM720, ROCM720_ID, time.time() + 60)
    await bot.deliver("workflow_run", world.payload(rocm720["id"]))
    await bot.settle()
    assert AMD not in dashboard_state(world).reported
    record = record_of(dashboard_state(world))
    monkeypatch.setattr("handlers.workflow_run.report_run", _no_report_run)  # and this time its report writes nothing
    assert await _round(bot) == [f"reconcile-{amd['id']}-1-lost-{record}"]
    assert await _round(bot) == []  # the record as it was: not reported a third time
    assert AMD not in dashboard_state(world).reported


async def _no_report_run(*args, **kwargs) -> None:  # noqa: ANN002, ANN003
    return None
