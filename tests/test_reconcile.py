"""Reconciling: a lane run whose delivery never came is found from GitHub's own lists
(installations, their repositories, each lane's latest completed run, the dashboard's
state) and reported all the same; once reported, it is not found again."""

from __future__ import annotations

import copy
import logging

from bot.context import Context
from bot.reconcile import Missed, reconcile
from handlers.workflow_run import report_run
from bot.api import RepoAPI
from bot.publish import DASHBOARD_LABEL, read_report
from tests.fakegithub import FakeGitHub
from tests.harness import ROCM720_ID, Bot, sglang_world
from tests.paths import ROCM720


def dashboard_state(world):  # noqa: ANN001, ANN201
    (issue,) = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    return read_report(issue.body)


async def test_a_run_whose_delivery_never_came_is_reported(fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    # a new run completes; its delivery is lost
    template = world.runs[-1]
    run = {k: v for k, v in copy.deepcopy(template).items() if k not in ("id", "node_id", "run_number")}
    run.update(created_at="2026-12-01T00:00:00Z", updated_at="2026-12-01T03:00:00Z", run_started_at="2026-12-01T00:00:00Z",
               workflow_id=ROCM720_ID, path=ROCM720)
    lost = fake_github.add_run(world.repo, run)
    fake_github.add_jobs(lost["id"], [{k: v for k, v in j.items() if k not in ("id", "run_id", "node_id")}
                                      for j in fake_github.jobs_of(template["id"])])
    assert lost["id"] not in dashboard_state(world).runs
    state = bot.state
    ctx = Context(state.pool, state.metrics, "reconcile", state.store, logging.LoggerAdapter(logging.getLogger("t"), {}))
    lines: list[str] = []

    async def report(item: Missed) -> None:
        await report_run(RepoAPI(state.pool.for_installation(item.installation_id), item.repo), ctx, item.run)

    found = await reconcile(state.pool, report, lines.append)
    assert [(m.repo, m.run["id"]) for m in found] == [("sgl-project/sglang", lost["id"])]
    assert lost["id"] in dashboard_state(world).runs
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
    template = world.runs[-1]
    run = {k: v for k, v in copy.deepcopy(template).items() if k not in ("id", "node_id", "run_number")}
    run.update(created_at="2026-12-01T00:00:00Z", updated_at="2026-12-01T03:00:00Z", workflow_id=ROCM720_ID, path=ROCM720)
    lost = fake_github.add_run(world.repo, run)
    fake_github.add_jobs(lost["id"], [{k: v for k, v in j.items() if k not in ("id", "run_id", "node_id")}
                                      for j in fake_github.jobs_of(template["id"])])
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
