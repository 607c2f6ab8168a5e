"""Refusals no retry gets past (`bot.github.permanent`), modelled in the fake as GitHub answers
them: a locked conversation (403 "Unable to create comment because issue is locked."), an
archived repository (every write 403 "Repository was archived so is read-only."), the App
uninstalled (its token request 404), its installation suspended (403 "This installation has
been suspended"), a private repository taken out of the installation (404). The delivery is
done with one line that says why, not failed three times, set aside, and `/health` degraded."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bot import server
from bot.publish import read_report
from tests.fakegithub import FakeGitHub
from tests.harness import INSTALLATION, comment_payload, pr_with_lane_run, sglang_world, start_bot, until
from tests.test_app_workflow_run import bot_comments, dashboards

LOCKED = "its conversation is locked: only collaborators may comment (or react) there"


def lines(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed delivery runs again within a second (else 2 and 15 minutes)."""
    monkeypatch.setattr("bot.journal.RETRY_AFTER_SECONDS", (0.2, 0.2))
    monkeypatch.setattr(server, "UPKEEP_SECONDS", 0.1)


async def finished(bot, delivery: str, fake: FakeGitHub) -> int:  # noqa: ANN001
    """The delivery's outcome is written; then a second more, for any retry to show. The
    `/health` status then."""
    await until(lambda: bot.state.journal.state(delivery) in ("done", "failed"))
    await asyncio.sleep(1.0)
    async with bot.session.get(f"{bot.url}/health") as response:
        return response.status


async def test_a_report_on_a_locked_pr_writes_the_dashboard_and_says_once_why_not_the_comment(
        fake_github: FakeGitHub, tmp_path: Path, quick_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    fake_github.lock(world.repo, number)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.deliver("workflow_run", world.payload(last["id"]), delivery="locked"))[0] == 202
        assert await finished(bot, "locked", fake_github) == 200
        assert bot.state.journal.state("locked") == "done"
        (dashboard,) = dashboards(fake_github, world)
        assert read_report(dashboard.body).reported[last["path"]][-1] == (last["id"], 1)  # the report stands
        assert bot_comments(fake_github, world, number) == []
        assert fake_github.count("POST", rf"/issues/{number}/comments$") == 1  # tried once, not again
        assert lines(caplog) == [f"delivery locked: sgl-project/sglang#{number}: report comment not written: {LOCKED} (Unable to "
                                 "create comment because issue is locked.)"]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_command_on_a_locked_pr_is_not_run_and_nothing_is_tried(
        fake_github: FakeGitHub, tmp_path: Path, quick_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    """A collaborator may comment on a locked PR; GitHub refuses foldbot's reply and its
    reactions there, so the command is not run (nothing could say what it did)."""
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    number, _sha = pr_with_lane_run(world)
    fake_github.set_permission(world.repo, "lead", "maintain")
    fake_github.lock(world.repo, number)
    payload = comment_payload(world, number, "/fold help", "lead")
    comment_id = payload["comment"]["id"]
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.deliver("issue_comment", payload, delivery="cmd"))[0] == 202
        assert await finished(bot, "cmd", fake_github) == 200
        assert bot.state.journal.state("cmd") == "done"
        assert fake_github.count("POST", r"/reactions$") == 0 and fake_github.count("POST", r"/comments$") == 0
        assert bot_comments(fake_github, world, number) == []
        assert lines(caplog) == [f"delivery cmd: sgl-project/sglang#{number}: comment {comment_id} not run: the conversation is "
                                 "locked, and GitHub lets only collaborators comment or react there (unlock it, then "
                                 "comment again)"]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_conversation_locked_after_the_comment_was_sent_ends_the_delivery_at_the_first_refusal(
        fake_github: FakeGitHub, tmp_path: Path, quick_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    """The payload says unlocked (locked since): GitHub refuses the 👀 (and would the reply)."""
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    number, _sha = pr_with_lane_run(world)
    payload = comment_payload(world, number, "/fold help", "lead")
    fake_github.lock(world.repo, number)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.deliver("issue_comment", payload, delivery="cmd"))[0] == 202
        assert await finished(bot, "cmd", fake_github) == 200
        assert bot.state.journal.state("cmd") == "done"
        assert fake_github.count("POST", r"/reactions$") == 1 and fake_github.count("POST", r"/comments$") == 0
        assert world.repo.comments[payload["comment"]["id"]].reactions == []
        assert lines(caplog) == [
            f"delivery cmd (issue_comment): sgl-project/sglang: {LOCKED}; GitHub refuses it for good (POST "
            f"/repos/sgl-project/sglang/issues/comments/{payload['comment']['id']}/reactions: 403 Unable to create "
            "reaction because issue is locked.), so it is done, not run again"]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_run_of_an_archived_repository_is_done_with_one_warning(
        fake_github: FakeGitHub, tmp_path: Path, quick_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    fake_github.archive(world.repo)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]), delivery="run"))[0] == 202
        assert await finished(bot, "run", fake_github) == 200
        assert bot.state.journal.state("run") == "done"
        assert fake_github.count("POST", r"/repos/sgl-project/sglang/issues$") == 1  # the dashboard, refused once
        assert dashboards(fake_github, world) == []
        assert lines(caplog) == [
            "delivery run (workflow_run): sgl-project/sglang: the repository is archived, so it is read-only; GitHub "
            "refuses it for good (POST /repos/sgl-project/sglang/issues: 403 Repository was archived so is "
            "read-only.), so it is done, not run again"]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_run_whose_payload_says_archived_is_not_analysed(
        fake_github: FakeGitHub, bot, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    """The payload says so (`repository.archived`): no analysis whose report no write could hold."""
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    fake_github.archive(world.repo)
    payload = world.payload(world.runs[-1]["id"])
    payload["repository"]["archived"] = True
    calls = len(fake_github.requests)
    assert (await bot.deliver("workflow_run", payload, delivery="run"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("run") == "done" and len(fake_github.requests) == calls
    assert f"delivery run: sgl-project/sglang is archived (read-only): run {world.runs[-1]['id']} is not analysed, as " \
        "no report could be written there" in [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("how", ["uninstalled", "suspended", "removed", "removed-public", "removed-public-no-pr"])
async def test_queued_deliveries_of_an_installation_gone_are_done_with_a_line_each(
        how: str, fake_github: FakeGitHub, tmp_path: Path, quick_retries: None,
        caplog: pytest.LogCaptureFixture) -> None:
    """The owner uninstalls the App (its token request answers 404, its tokens 401), suspends
    the installation (403 "This installation has been suspended"), or takes the repository out
    of it while deliveries wait: a private one is 404 to the App, a public one is still read
    as anyone reads it but each write answers 403 "Resource not accessible by integration"
    (and `GET /repos/{repo}/installation` 404). Each delivery is done after one try."""
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    world.repo.private = not how.startswith("removed-public")
    pulls = {"pull_requests": []} if how == "removed-public-no-pr" else {}  # (a run of no PR: the dashboard its one write)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        assert (await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]), delivery="before"))[0] == 202
        await until(lambda: bot.state.journal.is_done("before"))  # (a token in hand, then)
        caplog.clear()
        {"uninstalled": lambda: fake_github.uninstall(INSTALLATION),
         "suspended": lambda: fake_github.suspend(INSTALLATION),
         "removed": lambda: fake_github.remove_from_installation(INSTALLATION, world.repo),
         "removed-public": lambda: fake_github.remove_from_installation(INSTALLATION, world.repo),
         "removed-public-no-pr": lambda: fake_github.remove_from_installation(INSTALLATION, world.repo)}[how]()
        asks = fake_github.count("POST", rf"/app/installations/{INSTALLATION}/access_tokens$")
        for delivery in ("a", "b"):
            assert (await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"], **pulls),
                                      delivery=delivery))[0] == 202
        assert [await finished(bot, d, fake_github) for d in ("a", "b")] == [200, 200]
        assert [bot.state.journal.state(d) for d in ("a", "b")] == ["done", "done"]
        why = {"uninstalled": f"the App's installation {INSTALLATION} is gone (the App was uninstalled)",
               "suspended": "the App's installation is suspended (its owner can unsuspend it in the installation's "
                            "settings)",
               "removed": "the repository sgl-project/sglang is out of the App's reach (taken out of the "
                          "installation, or deleted)",
               "removed-public": "the repository sgl-project/sglang is not in the App's installation any more "
                                 "(taken out of it)"}[how.removesuffix("-no-pr")]
        said = [(r.levelname, r.getMessage().split("; GitHub refuses")[0]) for r in caplog.records
                if r.levelno >= logging.INFO and r.getMessage().startswith("delivery ")
                and "(workflow_run)" in r.getMessage()]
        level = "WARNING" if how == "suspended" else "INFO"
        assert said == [(level, f"delivery {d} (workflow_run): sgl-project/sglang: {why}") for d in ("a", "b")]
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and
                not r.getMessage().startswith("delivery ")] == []
        # (review87 F01: a dashboard write refused so, in a run with no PR, had been taken for the Issues permission)
        assert not [r for r in caplog.records if "Issues permission" in r.getMessage()]
        # uninstalled: the token in hand is refused (401), and each delivery asks for one once (404);
        # else the token in hand is answered (403 suspended, or 404 for the repository)
        assert fake_github.count("POST", rf"/app/installations/{INSTALLATION}/access_tokens$") - asks == \
            (2 if how == "uninstalled" else 0)
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_token_refused_404_while_the_installation_exists_is_run_again(
        fake_github: FakeGitHub, tmp_path: Path, quick_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    """One 404 for a token (GitHub's lag on a new installation, a proxy's hiccup) is not an
    uninstall: GitHub still has the installation (`GET /app/installations/{id}`), so the
    delivery fails and runs again, and is reported."""
    world = sglang_world(fake_github)
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        fake_github.fail_next(1, 404, method="POST", path=rf"/app/installations/{INSTALLATION}/access_tokens$")
        assert (await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]), delivery="a"))[0] == 202
        await until(lambda: bot.state.journal.state("a") == "done" and bool(dashboards(fake_github, world)))
        assert fake_github.count("GET", rf"/app/installations/{INSTALLATION}$") == 1
        assert not [r for r in caplog.records if "is gone" in r.getMessage()]
    finally:
        await bot.session.close()
        await runner.cleanup()


async def test_a_dashboard_write_refused_for_a_permission_not_granted_leaves_the_report_to_the_pr(
        fake_github: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """403 "Resource not accessible by integration" also answers a write the owner has not
    granted (here Issues: read): GitHub still has the repository in the App's installation. The
    PR's comment carries the report, as with Issues turned off (review86 F05: the delivery had
    failed, and no report was written at all), and a warning says what to grant; granted, the
    next report writes the dashboard."""
    world = sglang_world(fake_github)
    fake_github.installations[INSTALLATION].permissions["issues"] = "read"
    bot, runner = await start_bot(fake_github, data_dir=tmp_path)
    try:
        last = world.runs[-1]
        assert (await bot.deliver("workflow_run", world.payload(last["id"]), delivery="a"))[0] == 202
        await until(lambda: bot.state.journal.state("a") == "done")
        assert dashboards(fake_github, world) == []
        number = last["pull_requests"][0]["number"]
        assert [c for c in fake_github.comments_on(world.repo, number) if c.user == "foldbot[bot]"]
        assert any("not granted the Issues permission here" in m for m in lines(caplog, logging.WARNING))
        # the owner accepts it: GitHub sends `new_permissions_accepted`, on which foldbot forgets the token in hand
        # (minted with the permissions of then); here it expires
        fake_github.installations[INSTALLATION].permissions["issues"] = "write"
        fake_github.expire_tokens()
        assert (await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]), delivery="b"))[0] == 202
        await until(lambda: bot.state.journal.state("b") == "done")
        assert len(dashboards(fake_github, world)) == 1
    finally:
        await bot.session.close()
        await runner.cleanup()


@pytest.mark.parametrize("repo, path, refused", [
    ("acme/comments-service", "/repos/acme/comments-service/issues", True),  # (review87 F03: the name held "comments")
    ("comments/widgets", "/repos/comments/widgets/issues/7", True),
    ("acme/widgets", "/repos/acme/widgets/issues/7/comments", False),  # a PR's comment: another permission's
    ("acme/widgets", "/repos/acme/widgets/pulls", False),
])
def test_a_refusal_of_the_issues_api_is_told_by_the_path_after_the_repository(repo: str, path: str, refused: bool) -> None:
    from bot.github import GitHubError
    from bot.publish import issues_refused

    error = GitHubError(403, "Resource not accessible by integration", "POST", f"https://api.github.com{path}")
    assert issues_refused(error, repo) is refused
