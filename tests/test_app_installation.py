"""The App's own events (`installation`, `installation_repositories`), as GitHub sends them to
every App unasked: a new installation, one unsuspended, or repositories added get their
dashboards now from their lanes' latest completed runs (each journaled as reconciling would,
so reported once); an installation deleted or suspended, or repositories removed, is one
line and done."""

from __future__ import annotations

import json
import logging
import re

import jsonschema
import pytest

from bot.publish import DASHBOARD_LABEL, read_report
from tests.fakegithub import FakeGitHub
from tests.harness import INSTALLATION, Bot, example, installation_payload, sglang_world
from tests.paths import FIXTURES, ROCM720
from tests.test_app_workflow_run import bot_comments

SCHEMAS = FIXTURES / "github" / "webhooks" / "official-schemas"


def dashboards(world):  # noqa: ANN001, ANN201
    return [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What foldbot said of installations (each line after its `delivery <id>: `)."""
    return [r.getMessage().split(": ", 1)[1] for r in caplog.records if r.name.startswith("foldbot")
            and r.levelno >= logging.INFO and re.match(r"delivery \S+: installation ", r.getMessage())]


@pytest.mark.parametrize("action", ["created", "deleted"])
def test_the_payloads_are_those_of_githubs_official_schemas(fake_github: FakeGitHub, action: str) -> None:
    sglang_world(fake_github, runs=1)
    _, payload = installation_payload(fake_github, action)
    root = json.loads((SCHEMAS / f"installation.{action}.schema.json").read_text())
    assert [e.message for e in jsonschema.Draft202012Validator(root).iter_errors(payload)] == []


@pytest.mark.parametrize("action", ["created", "unsuspend", "new_permissions_accepted"])
async def test_an_installation_begun_gets_its_dashboard_and_pr_comment_now_once(
        fake_github: FakeGitHub, bot: Bot, action: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    last = world.runs[-1]
    event, payload = installation_payload(fake_github, action)
    assert (await bot.deliver(event, payload, delivery="installed"))[0] == 202
    await bot.settle()
    await bot.settle()  # (the run it queued)
    (dashboard,) = dashboards(world)
    assert read_report(dashboard.body).reported[ROCM720] == ((last["id"], 1),)
    assert len(bot_comments(fake_github, world, last["pull_requests"][0]["number"])) == 1
    journal = bot.state.journal
    assert [journal.state(d) for d in ("installed", f"reconcile-{last['id']}-1-installed")] == ["done", "done"]
    what = action.replace("_", " ")
    assert said(caplog) == [f"installation {INSTALLATION} (sgl-project) {what}: 1 lane run no dashboard names is "
                            f"reported now: sgl-project/sglang run {last['id']}"]
    # the same event again (a redelivery under a new id): the dashboard names the run, nothing is queued
    writes = [w for w in fake_github.writes() if w.path.startswith("/repos/")]
    tokens = fake_github.count("POST", rf"/app/installations/{INSTALLATION}/access_tokens$")
    caplog.clear()
    assert (await bot.deliver(event, payload, delivery="again"))[0] == 202
    await bot.settle()
    assert [w for w in fake_github.writes() if w.path.startswith("/repos/")] == writes
    # a token minted before the event may lack what it brought (permissions accepted, repositories added)
    assert fake_github.count("POST", rf"/app/installations/{INSTALLATION}/access_tokens$") == tokens + 1
    assert said(caplog) == [f"installation {INSTALLATION} (sgl-project) {what}: no lane run to report"]


async def test_a_run_the_rounds_gave_up_on_is_reported_once_the_installation_is_whole_again(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """While the installation was suspended (or lacked a permission), reconciling's delivery of the
    lane's latest run was refused for good and is done (or failed and set aside). Unsuspended,
    the run is reported all the same: the event's deliveries are its own."""
    world = sglang_world(fake_github)
    last = world.runs[-1]
    journal = bot.state.journal
    rounds = f"reconcile-{last['id']}-1"
    assert await journal.record(rounds, "workflow_run", b"{}", INSTALLATION, hold=False) == "new"
    await journal.mark(rounds, "done")
    event, payload = installation_payload(fake_github, "unsuspend")
    assert (await bot.deliver(event, payload, delivery="back"))[0] == 202
    await bot.settle()
    await bot.settle()
    (dashboard,) = dashboards(world)
    assert read_report(dashboard.body).reported[ROCM720] == ((last["id"], 1),)
    assert journal.state(f"{rounds}-back") == "done"


async def test_repositories_added_are_caught_up_and_no_other(fake_github: FakeGitHub, bot: Bot,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    other = fake_github.add_repo("sgl-project", "other")
    other.put_files("main", {"README.md": "no lanes here\n"}, message="first")
    fake_github.installations[INSTALLATION].repo_ids.add(other.id)
    ghost = fake_github.add_repo("sgl-project", "ghost")  # added, and taken out again before foldbot looks
    event, payload = installation_payload(fake_github, "added", added=[other, ghost])
    assert event == "installation_repositories"
    assert (await bot.deliver(event, payload, delivery="added-other"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("added-other") == "done"
    assert fake_github.count("GET", r"/repos/sgl-project/sglang/") == 0  # only the repository added is read
    assert dashboards(world) == []
    assert said(caplog) == [
        f"installation {INSTALLATION} (sgl-project): not among its repositories now (taken out since?), so not looked "
        "at: sgl-project/ghost",
        f"installation {INSTALLATION} (sgl-project) took in sgl-project/other, sgl-project/ghost: no lane run to report"]
    caplog.clear()
    event, payload = installation_payload(fake_github, "added", added=[world.repo])
    assert (await bot.deliver(event, payload, delivery="added-sglang"))[0] == 202
    await bot.settle()
    await bot.settle()
    (dashboard,) = dashboards(world)
    assert read_report(dashboard.body).reported[ROCM720] == ((world.runs[-1]["id"], 1),)


@pytest.mark.parametrize("action", ["deleted", "suspend", "removed"])
async def test_an_installation_ended_or_a_repository_let_go_is_one_line_and_done(
        fake_github: FakeGitHub, bot: Bot, action: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    world = sglang_world(fake_github)
    event, payload = installation_payload(fake_github, action, removed=[world.repo] if action == "removed" else ())
    calls = len(fake_github.requests)
    assert (await bot.deliver(event, payload, delivery="ended"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("ended") == "done"
    assert len(fake_github.requests) == calls  # nothing asked of GitHub
    assert said(caplog) == [{
        "deleted": f"installation {INSTALLATION} (sgl-project) deleted (the App was uninstalled): its deliveries still "
                   "queued end after one try each",
        "suspend": f"installation {INSTALLATION} (sgl-project) suspended: its deliveries still queued end after one "
                   "try each",
        "removed": f"installation {INSTALLATION} (sgl-project) let go of sgl-project/sglang: their deliveries still "
                   "queued end after one try each"}[action]]


async def test_an_installation_whose_repositories_cannot_be_listed_fails_and_runs_again(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world = sglang_world(fake_github)
    fake_github.fail_next(20, 502, path=r"^/installation/repositories")
    event, payload = installation_payload(fake_github, "created")
    assert (await bot.deliver(event, payload, delivery="installed"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("installed") == "failed"
    assert dashboards(world) == []


@pytest.mark.parametrize("field, value, named", [
    ("installation", None, "installation.id"),
    ("repositories_added", [{"full_name": 5}], "repositories_added[0].full_name"),
    ("repositories_removed", "sglang", "repositories_removed"),
])
async def test_a_malformed_installation_payload_is_a_400_naming_the_field(
        fake_github: FakeGitHub, bot: Bot, field: str, value: object, named: str) -> None:
    world = sglang_world(fake_github, runs=1)
    event, payload = installation_payload(fake_github, "added", added=[world.repo])
    payload[field] = value
    status, body = await bot.deliver(event, payload)
    assert status == 400
    assert f"`{named}`" in body["error"]
    assert bot.state.journal.count("queued") == 0


ROCM_WORKFLOW = """name: rocm-mi300
on:
  pull_request:
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: make
  test:
    needs: build
    strategy:
      fail-fast: false
      matrix:
        shard: [1, 2]
    runs-on: linux.rocm.gpu.mi300.2
    steps:
      - run: pytest --shard ${{ matrix.shard }}
"""


BENCH_WORKFLOW = """name: rocm-bench
on:
  workflow_dispatch:
    inputs:
      runner:
        type: string
        default: linux-mi300-gpu-1
jobs:
  bench:
    runs-on: ${{ inputs.runner }}
    steps:
      - run: python bench.py
"""


async def test_a_repository_whose_amd_workflows_are_not_lanes_is_told_how_to_measure_them(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """pytorch's shape: its AMD jobs are in `rocm-mi300.yml`, which no default lane pattern
    names. Installed, foldbot says which files run AMD jobs and the config that measures them
    (a file whose name does not say AMD, and a repository without AMD jobs, are not read)."""
    caplog.set_level("INFO")
    sglang_world(fake_github, runs=1)
    repo = fake_github.add_repo("sgl-project", "kernels")
    repo.put_files("main", {".github/workflows/rocm-mi300.yml": ROCM_WORKFLOW,
                            ".github/workflows/lint.yml": ROCM_WORKFLOW.replace("rocm-mi300", "lint"),
                            # on the runner its dispatch input names by default
                            ".github/workflows/rocm-bench.yml": BENCH_WORKFLOW},
                   message="CI")
    plain = fake_github.add_repo("sgl-project", "docs")
    plain.put_files("main", {".github/workflows/docs.yml": "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n"
                                                            "    steps:\n      - run: make\n"}, message="CI")
    fake_github.installations[INSTALLATION].repo_ids |= {repo.id, plain.id}
    event, payload = installation_payload(fake_github, "added", added=[repo, plain])
    assert (await bot.deliver(event, payload, delivery="added"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("added") == "done"
    (dashboard,) = [i for i in repo.issues.values() if DASHBOARD_LABEL in i.labels]
    assert dashboard.body == (
        "<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n\n"
        "foldbot is installed on sgl-project/kernels, but measures none of its workflow files: the lanes it reads are "
        "the files that match `lanes` in `.github/foldbot.yml` (`.github/workflows/pr-test-amd.yml`, "
        "`.github/workflows/pr-test-amd-rocm*.yml` (the default)), and none does. These run jobs on AMD runners:\n\n"
        "- `.github/workflows/rocm-bench.yml`: `bench`\n- `.github/workflows/rocm-mi300.yml`: `test`\n\n"
        "To measure them, add to `.github/foldbot.yml` on the default branch (and `amd_runner_pattern`, should your "
        "runners' labels not name the GPU):\n\n```yaml\nlanes:\n  - \".github/workflows/rocm-bench.yml\"\n"
        "  - \".github/workflows/rocm-mi300.yml\"\n```\n\n"
        "The next completed run of a lane then writes its report here.\n")
    assert fake_github.count("GET", r"/repos/sgl-project/kernels/contents/\.github/workflows/lint\.yml") == 0
    assert [i for i in plain.issues.values() if DASHBOARD_LABEL in i.labels] == []
    assert said(caplog) == [f"installation {INSTALLATION} (sgl-project) took in sgl-project/kernels, sgl-project/docs: "
                            "no lane run to report"]
    assert any("sgl-project/kernels: no lane file, though .github/workflows/rocm-bench.yml, "
               ".github/workflows/rocm-mi300.yml run jobs on AMD runners: "
               f"dashboard issue #{dashboard.number} created says how to measure them" in r.getMessage()
               for r in caplog.records)
    # the file's next run says the same (its jobs by id, not its shards by name): the dashboard stands
    fake_github.add_workflow(repo, 43, ".github/workflows/rocm-mi300.yml")
    run = fake_github.add_run(repo, {"workflow_id": 43, "path": ".github/workflows/rocm-mi300.yml",
                                     "status": "completed", "conclusion": "success", "event": "pull_request"})
    fake_github.add_jobs(run["id"], [{"name": f"test ({n})", "labels": ["linux.rocm.gpu.mi300.2"]} for n in (1, 2)])
    body = example("workflow_run/completed.with-pull-requests.payload.json")
    body["workflow_run"] = {**body["workflow_run"], **fake_github.run(run["id"]), "pull_requests": [],
                            "head_repository": {"full_name": "sgl-project/kernels", "owner": {"login": "sgl-project"}}}
    body["repository"] = {**body["repository"], "full_name": "sgl-project/kernels", "default_branch": "main"}
    body["installation"] = {"id": INSTALLATION}
    before = dashboard.body
    await bot.deliver("workflow_run", body)
    await bot.settle()
    assert repo.issues[dashboard.number].body == before
    assert fake_github.count("GET", rf"/actions/runs/{run['id']}/jobs") == 0


async def test_a_repository_whose_config_is_broken_is_told_at_install(fake_github: FakeGitHub, bot: Bot) -> None:
    """A broken `.github/foldbot.yml` is said on the dashboard when foldbot is installed, as a lane
    run's report would say it, not only in the operator's log."""
    world = sglang_world(fake_github, runs=1)
    world.repo.put_files("main", {".github/foldbot.yml": "fold: [\n"}, message="a broken config")
    event, payload = installation_payload(fake_github, "created")
    assert (await bot.deliver(event, payload, delivery="installed"))[0] == 202
    await bot.settle()
    assert bot.state.journal.state("installed") == "done"
    (dashboard,) = dashboards(world)
    assert dashboard.body.startswith("<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n\n"
                                     "foldbot could not analyse sgl-project/sglang: .github/foldbot.yml")
    text = dashboard.body.split("\n<!-- foldbot:state ", 1)[0]
    assert text.endswith("Fix the file it names; the report comes back with the next completed lane run, or once the "
                         "fix is on the default branch, when foldbot next looks for missed runs (every 30 minutes as "
                         "deployed).\n")
    # marked an error found at a head not known here: the first reconciling round with the config readable analyses again
    state = read_report(dashboard.body)
    assert state is not None and state.error and state.base_sha == "" and not state.reported and not state.patch


async def test_a_repository_whose_error_dashboard_cannot_be_written_does_not_stop_the_others(
        fake_github: FakeGitHub, bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """The first repository's config is broken and its dashboard refused (403): the log says both,
    and the installation's other repository is caught up all the same."""
    caplog.set_level("INFO")
    world = sglang_world(fake_github, runs=1)
    broken = fake_github.add_repo("sgl-project", "aaa-broken")
    broken.put_files("main", {".github/foldbot.yml": "fold: [\n"}, message="a broken config")
    fake_github.installations[INSTALLATION].repo_ids.add(broken.id)
    fake_github.fail_next(1, 403, method="POST", path=r"^/repos/sgl-project/aaa-broken/issues$")
    event, payload = installation_payload(fake_github, "created")
    assert (await bot.deliver(event, payload, delivery="installed"))[0] == 202
    await bot.settle()
    await bot.settle()
    assert bot.state.journal.state("installed") == "done"
    assert len(dashboards(world)) == 1  # sglang's, from its latest run
    assert any(r.getMessage().startswith("delivery installed: sgl-project/aaa-broken: not reconciled: .github/foldbot.yml")
               and "the dashboard that says so could not be written" in r.getMessage() for r in caplog.records)
