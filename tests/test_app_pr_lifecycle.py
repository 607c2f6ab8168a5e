"""A pull request's one report comment through pushes, late runs and refreshes, as GitHub
sends them (review81): GitHub lists a PR in `workflow_run.pull_requests` by its head *branch*,
so a run of an older head that ends after a push (cancelled by the lane's `concurrency`) lists
the PR at its new head; the two lanes' runs of one push end in any order; deliveries come late."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bot.publish import mark_stale, read_state, stale_head, unmark_stale
from bot.report import MARKER
from tests.fakegithub import FakeGitHub
from tests.harness import INSTALLATION, Bot, World, comment_payload, current_world, example, sglang_world
from tests.paths import ROCM720
from tests.sglang_current import LANES, history

LOGIN = "foldbot[bot]"
NOTE = f"**This PR changes `{ROCM720}`**"


def report(fake: FakeGitHub, world: World, number: int) -> Any:
    """The PR's one report comment."""
    (comment,) = [c for c in fake.comments_on(world.repo, number) if c.user == LOGIN and "foldbot:report" in c.body]
    return comment


def synchronize(world: World, number: int, before: str, after: str) -> dict[str, Any]:
    payload = example("pull_request/synchronize.payload.json")
    payload.update(number=number, before=before, after=after)
    payload["pull_request"]["number"] = number
    payload["pull_request"]["head"]["sha"] = after
    payload["repository"]["full_name"] = world.repo.full_name
    payload["installation"] = {"id": INSTALLATION}
    return payload


def stale_line(old: str, new: str) -> str:
    return (f"> **Stale:** this report is of `{old[:12]}`; the pull request's head is now `{new[:12]}` "
            "(a lane run of it, when one runs, updates this comment).")


def test_the_stale_line_is_one_line_named_by_its_head_and_comes_off() -> None:
    body = f"{MARKER}\n### title\n\ntext\n"
    once = mark_stale(body, "a" * 40, "b" * 40)
    assert once == f"{MARKER}\n{stale_line('a' * 40, 'b' * 40)}\n\n### title\n\ntext\n"
    twice = mark_stale(once, "a" * 40, "c" * 40)
    assert twice.count("**Stale:**") == 1 and stale_head(twice) == "cccccccccccc"
    assert unmark_stale(twice) == body and stale_head(body) is None
    # a comment written before this wording still names its head
    assert stale_head(f"{MARKER}\n> **Stale:** as of `aaaaaaaaaaaa`; a new run is pending for `bbbbbbbbbbbb`.\n\nx") \
        == "bbbbbbbbbbbb"


async def test_a_push_back_to_the_reported_head_takes_the_stale_line_off(fake_github: FakeGitHub, bot: Bot) -> None:
    """review81 F04: A, then B, then A again (the author undoing a push): the report is of the PR's
    head again; the line naming B stayed for good."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    before = report(fake_github, world, number).body
    a, b = last["head_sha"], "b" * 40
    await bot.deliver("pull_request", synchronize(world, number, a, b))
    await bot.settle()
    assert report(fake_github, world, number).body.split("\n")[1] == stale_line(a, b)
    await bot.deliver("pull_request", synchronize(world, number, b, a))
    await bot.settle()
    assert report(fake_github, world, number).body == before


async def test_a_run_of_the_previous_head_that_ends_after_a_push_is_reported_stale(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review81 F01: the run of head A ends after the push of B (GitHub cancels it through the lane's
    `concurrency` group and lists the PR at B). Its report is written, as of A, marked stale: it had
    dropped the stale line the push put there and read as the PR's current report."""
    world = sglang_world(fake_github)
    first, second = world.runs[-2], world.runs[-1]
    number = second["pull_requests"][0]["number"]
    z, a, b = first["head_sha"], second["head_sha"], "b" * 40
    await bot.deliver("workflow_run", world.payload(first["id"], pull_requests=second["pull_requests"]))
    await bot.settle()
    world.repo.pulls[number].head_sha = b  # pushed A, then B at once
    await bot.deliver("pull_request", synchronize(world, number, z, a))
    await bot.deliver("pull_request", synchronize(world, number, a, b))
    await bot.settle()
    assert report(fake_github, world, number).body.split("\n")[1] == stale_line(z, b)
    reads = fake_github.count("GET", rf"/pulls/{number}$")
    await bot.deliver("workflow_run", world.payload(second["id"]))
    await bot.settle()
    comment = report(fake_github, world, number)
    assert comment.body.split("\n")[1] == stale_line(a, b)
    assert read_state(comment.body)["head_sha"] == a and f"As of `{a[:12]}`" in comment.body
    assert fake_github.count("GET", rf"/pulls/{number}$") == reads + 1  # the PR read once, on the sign its head moved


async def test_a_first_report_of_an_older_head_is_marked_stale_and_the_common_case_reads_no_pr(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert "**Stale:**" not in report(fake_github, world, number).body
    assert fake_github.count("GET", rf"/pulls/{number}$") == 0
    other = world.runs[-2]
    pr = other["pull_requests"][0]["number"]
    world.repo.pulls[pr].head_sha = "c" * 40  # the PR moved on before its run's report: GitHub lists it at its head
    listed = copy.deepcopy(other["pull_requests"])
    listed[0]["head"]["sha"] = "c" * 40
    await bot.deliver("workflow_run", world.payload(other["id"], pull_requests=listed))
    await bot.settle()
    assert report(fake_github, world, pr).body.split("\n")[1] == stale_line(other["head_sha"], "c" * 40)
    # A `pull_request_target` run's head is the base branch's commit, never the PR's: no sign of a moved head
    target = world.runs[-3]
    moved = copy.deepcopy(target["pull_requests"])
    moved[0]["head"]["sha"] = "d" * 40
    reads = fake_github.count("GET", r"/pulls/\d+$")
    await bot.deliver("workflow_run", world.payload(target["id"], event="pull_request_target", pull_requests=moved))
    await bot.settle()
    assert "**Stale:**" not in report(fake_github, world, moved[0]["number"]).body
    assert fake_github.count("GET", r"/pulls/\d+$") == reads


@pytest.mark.parametrize("event", ["workflow_dispatch", "push"])
async def test_a_run_of_the_prs_branch_by_another_event_is_marked_stale_too(fake_github: FakeGitHub, bot: Bot,
                                                                             event: str) -> None:
    """review85 f01: a `/dispatch` of a same-repository PR runs on its branch (its head a commit of the
    PR), and GitHub lists the PR in it by that branch: an older head's report is marked stale as a
    `pull_request` run's is. (A `pull_request_target` run's head is the base branch's: above.)"""
    world = sglang_world(fake_github)
    other = world.runs[-2]
    pr = other["pull_requests"][0]["number"]
    world.repo.pulls[pr].head_sha = "c" * 40
    listed = copy.deepcopy(other["pull_requests"])
    listed[0]["head"]["sha"] = "c" * 40
    await bot.deliver("workflow_run", world.payload(other["id"], event=event, pull_requests=listed))
    await bot.settle()
    assert report(fake_github, world, pr).body.split("\n")[1] == stale_line(other["head_sha"], "c" * 40)


def _pr_run(fake: FakeGitHub, world: World, bundle: dict[str, Any], *, lane: str, workflow_id: int, run_id: int,
            sha: str, created: str, number: int) -> dict[str, Any]:
    run = dict(bundle["workflow_run"])
    pull = world.repo.pulls[number]
    run.update(id=run_id, workflow_id=workflow_id, path=LANES[lane][0], event="pull_request", head_sha=sha,
               head_branch=pull.head_ref, head_repository=world.repo.full_name, created_at=created, updated_at=created,
               pull_requests=[{"number": number, "id": pull.id, "head": {"ref": pull.head_ref, "sha": pull.head_sha},
                               "base": {"ref": "main", "sha": world.repo.branch_sha("main")}}])
    stored = fake.add_run(world.repo, run)
    jobs = copy.deepcopy(bundle["jobs"])
    for job in jobs:
        job.pop("id", None)
        job["head_sha"] = sha
    fake.add_jobs(stored["id"], jobs)
    return stored


async def test_the_other_lanes_late_run_of_an_older_head_leaves_the_comment(fake_github: FakeGitHub, bot: Bot) -> None:
    """review81 F02: the comment reports the rocm720 lane at head B; the amd lane's run of head A (an
    older run) is delivered late. The comment went back to A: it only moved forward within one lane.
    Another lane's run of the *same* head is reported, whichever ends last."""
    world, _ = current_world(fake_github, logs=False)
    a, b = "a" * 40, "b" * 40
    fake_github.add_pull(world.repo, 777, head_ref="amd/ci-change", head_sha=b,
                         head_repo_full_name=world.repo.full_name, files=[ROCM720])
    old = _pr_run(fake_github, world, history("amd")[0][-1], lane="amd", workflow_id=49112592, run_id=30_000_000_001,
                  sha=a, created="2026-12-01T08:00:00Z", number=777)
    new = _pr_run(fake_github, world, history("rocm720")[0][-1], lane="rocm720", workflow_id=49112591,
                  run_id=30_000_000_002, sha=b, created="2026-12-01T09:00:00Z", number=777)
    same = _pr_run(fake_github, world, history("amd")[0][-1], lane="amd", workflow_id=49112592, run_id=30_000_000_000,
                   sha=b, created="2026-12-01T07:59:00Z", number=777)
    await bot.deliver("workflow_run", world.payload(new["id"]))
    await bot.settle()
    written = report(fake_github, world, 777).body
    await bot.deliver("workflow_run", world.payload(old["id"]))
    await bot.settle()
    assert report(fake_github, world, 777).body == written
    await bot.deliver("workflow_run", world.payload(same["id"]))
    await bot.settle()
    state = read_state(report(fake_github, world, 777).body)
    assert (state["workflow"], state["head_sha"]) == (LANES["amd"][0], b)


async def test_a_refresh_and_all_prs_keep_the_note_that_the_patch_is_the_default_branchs(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """review81 F05: the PR's files were read only for `comment_on: ci-prs`; a `/fold refresh`
    rewrote the comment without the note, and `all-prs` never wrote it."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    await bot.deliver("workflow_run", world.payload(last["id"]))
    await bot.settle()
    assert NOTE in report(fake_github, world, number).body
    await bot.deliver("issue_comment", comment_payload(world, number, "/fold refresh", "someone"))
    await bot.settle()
    assert NOTE in report(fake_github, world, number).body
    world.repo.put_files("main", {".github/foldbot.yml": "comment_on: all-prs\n"}, message="config")
    other = world.runs[-2]
    await bot.deliver("workflow_run", world.payload(other["id"]))
    await bot.settle()
    assert NOTE in report(fake_github, world, other["pull_requests"][0]["number"]).body


async def test_a_backport_is_not_promised_that_its_merge_changes_the_report(fake_github: FakeGitHub, bot: Bot) -> None:
    """review81 F07: a PR into `release/v0.5` was told "the first run after the merge reports on the
    new files"; its merge leaves `main`'s lane files as they are."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    number = last["pull_requests"][0]["number"]
    pr = dict(last["pull_requests"][0])
    pr["base"] = {"ref": "release/v0.5", "sha": world.repo.branch_sha("main")}
    await bot.deliver("workflow_run", world.payload(last["id"], pull_requests=[pr]))
    await bot.settle()
    line = next(line for line in report(fake_github, world, number).body.split("\n") if line.startswith(NOTE))
    assert line.endswith("(its patch may not apply here); merging it into `release/v0.5` leaves the lane files of "
                         "`main`, and so the reports, as they are.")
