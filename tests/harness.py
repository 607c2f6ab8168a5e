"""A running foldbot (the app `foldbot serve` runs, on a loopback port) wired to the
fake GitHub, a SGLang-shaped repository in the fake, and signed webhook deliveries
built from GitHub's own payload examples."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import json
import os
import itertools
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from bot.github import Credentials, GitHubPool
from bot.metrics import Metrics
from bot.server import STATE, create_app
from bot.settings import Settings
from handlers import router
from tests.paths import AMD, BEFORE, FIXTURES, ROCM720, ROOT
from tests.fakegithub import FakeGitHub, Repo
from tests.sglang_current import LANES, STAGE_PATH, STAGE_TEXT, history, staged_text, workflow_text
from tests.sglang_history import rocm720_history

SECRET = "It's a Secret to Everybody"
EXAMPLES = FIXTURES / "github" / "webhooks" / "octokit-webhooks" / "payload-examples" / "api.github.com"
INSTALLATION = 31337
ROCM720_ID, AMD_ID = 7200, 7000
CURRENT_PATH = LANES["rocm720"][0]


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Bot:
    url: str
    app: web.Application
    session: aiohttp.ClientSession

    async def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        async with self.session.post(f"{self.url}/webhook", data=body, headers=headers) as response:
            return response.status, await response.json()

    async def deliver(self, event: str, payload: dict[str, Any], delivery: str | None = None) -> tuple[int, dict[str, Any]]:
        body = json.dumps(payload).encode()
        return await self.post(body, {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body),
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/044aadd",
        })

    async def settle(self) -> None:
        """Wait until every queued delivery has been processed."""
        await self.app[STATE].queue.join()

    @property
    def state(self):  # noqa: ANN201 - the server's AppState
        return self.app[STATE]


def app_pool(fake: FakeGitHub, session: aiohttp.ClientSession, metrics: Metrics | None = None) -> GitHubPool:
    """foldbot's GitHub clients, signed in as the fake's App (short retry waits for tests)."""
    credentials = Credentials(app_id=str(fake.app_id), private_key=fake.private_key_pem)
    return GitHubPool(session, credentials, base_url=fake.base_url, metrics=metrics or Metrics(), max_wait=5,
                      base_delay=0.01)


async def start_bot(fake: FakeGitHub, **settings: Any) -> tuple[Bot, web.AppRunner]:
    settings.setdefault("redeliver_minutes", 0)  # the tests of redelivery turn it on
    settings.setdefault("reconcile_minutes", 0)  # and those of reconciling this
    config = Settings(webhook_secret=SECRET, app_id=str(fake.app_id), private_key=fake.private_key_pem,
                      api_url=fake.base_url, port=0, **settings)
    app = create_app(config, router, pool_factory=lambda session, metrics: app_pool(fake, session, metrics))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)  # as `foldbot serve` listens
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    session = aiohttp.ClientSession()
    return Bot(f"http://127.0.0.1:{port}", app, session), runner


@pytest_asyncio.fixture
async def bot(fake_github: FakeGitHub) -> AsyncIterator[Bot]:
    running, runner = await start_bot(fake_github)
    try:
        yield running
    finally:
        await running.session.close()
        await runner.cleanup()


@dataclass
class World:
    """sgl-project/sglang in the fake: both lanes before PR #34483 on main, eight
    completed rocm720 runs with their jobs, and a PR for each run."""

    fake: FakeGitHub
    repo: Repo
    runs: list[dict[str, Any]] = field(default_factory=list)

    def payload(self, run_id: int, **changes: Any) -> dict[str, Any]:
        """A `workflow_run` completed delivery for a stored run, on GitHub's own example."""
        payload = example("workflow_run/completed.with-pull-requests.payload.json")
        run = copy.deepcopy(self.fake.run(run_id))
        run.update(changes)
        payload["workflow_run"] = {**payload["workflow_run"], **run}
        payload["workflow_run"]["head_repository"] = {"full_name": run.get("head_repository") or self.repo.full_name,
                                                       "owner": {"login": (run.get("head_repository") or self.repo.full_name).split("/")[0]}}
        owner, name = self.repo.full_name.split("/")
        payload["repository"] = {**payload["repository"], "full_name": self.repo.full_name, "name": name,
                                 "default_branch": self.repo.default_branch,
                                 "owner": {**payload["repository"]["owner"], "login": owner}}
        payload["workflow"] = {**payload["workflow"], "id": run["workflow_id"], "path": run["path"]}
        payload["installation"] = {"id": INSTALLATION, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}
        return payload


def sglang_world(fake: FakeGitHub, *, ci_pr: bool = True, fork: bool = False, runs: int = 8) -> World:
    repo = fake.add_repo("sgl-project", "sglang")
    repo.put_files("main", {ROCM720: (BEFORE / "pr-test-amd-rocm720.yml").read_text(),
                            AMD: (BEFORE / "pr-test-amd.yml").read_text()}, message="CI lanes before #34483")
    fake.add_workflow(repo, ROCM720_ID, ROCM720)
    fake.add_workflow(repo, AMD_ID, AMD)
    fake.add_installation(INSTALLATION, [repo])
    world = World(fake, repo)
    for bundle in rocm720_history()[:runs]:
        run = dict(bundle["workflow_run"])
        number = run["pull_requests"][0]["number"]
        head_owner = "contributor" if fork else "sgl-project"
        pull = fake.add_pull(repo, number, head_ref=run["head_branch"], head_sha=run["head_sha"],
                             head_repo_full_name=f"{head_owner}/sglang",
                             files=[ROCM720 if ci_pr else "python/sglang/srt/server.py"])
        run.update(workflow_id=ROCM720_ID, path=ROCM720, event="pull_request",
                   head_repository=f"{head_owner}/sglang",
                   pull_requests=[] if fork else [{"number": pull.number, "id": pull.id,
                                                   "head": {"ref": run["head_branch"], "sha": run["head_sha"]},
                                                   "base": {"ref": "main", "sha": repo.branch_sha("main")}}])
        stored = fake.add_run(repo, run)
        fake.add_jobs(stored["id"], bundle["jobs"])
        world.runs.append(stored)
    return world


def comment_payload(world: World, number: int, body: str, login: str, *, user_type: str = "User",
                    action: str = "created") -> dict[str, Any]:
    """An `issue_comment` delivery for a comment that now exists in the fake, on GitHub's own example."""
    comment = world.fake.add_comment(world.repo, number, body, user_login=login)
    payload = json.loads((FIXTURES / "github/webhooks/derived/issue_comment.created.on-pull-request.DERIVED.json").read_text())
    payload["action"] = action
    issue = world.repo.issues[number]
    payload["issue"] = {**payload["issue"], "number": number, "locked": issue.locked,
                        "active_lock_reason": issue.active_lock_reason}
    payload["comment"] = {**payload["comment"], "id": comment.id, "body": body, "created_at": comment.created_at,
                          "user": {**payload["comment"]["user"], "login": login, "type": user_type}}
    payload["repository"] = {**payload["repository"], "full_name": world.repo.full_name}
    payload["installation"] = {"id": INSTALLATION, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}
    return payload


def installation_payload(fake: FakeGitHub, action: str, installation_id: int = INSTALLATION, *,
                         added: Sequence[Repo] = (), removed: Sequence[Repo] = ()) -> tuple[str, dict[str, Any]]:
    """The event and payload GitHub sends the App when its installation changes: `installation`
    (created, deleted, suspend, unsuspend, new_permissions_accepted), or with `added` / `removed`
    repositories `installation_repositories` (added, removed). As the official schemas have them
    (`installation.created.schema.json`): the installation as `GET /app/installations/{id}`
    answers, the repositories in short form."""
    installation = fake.installations[installation_id]

    def short(repo: Repo) -> dict[str, Any]:
        return {"id": repo.id, "node_id": f"R_{repo.id}", "name": repo.name, "full_name": repo.full_name,
                "private": repo.private}
    payload: dict[str, Any] = {"action": action, "installation": fake.render.installation(installation),
                               "requester": None, "sender": fake.render.user(installation.account)}
    if not added and not removed:
        payload["repositories"] = [short(r) for r in fake.repos.values() if r.id in installation.repo_ids]
        return "installation", payload
    payload.update(repository_selection=installation.repository_selection,
                   repositories_added=[short(r) for r in added], repositories_removed=[short(r) for r in removed])
    return "installation_repositories", payload


def pr_with_lane_run(world: World, *, number: int = 50001, fork: bool = False, gate: str = "success") -> tuple[int, str]:
    """A PR whose head is a real commit on a branch (so it can be dispatched), with a
    completed rocm720 run for that head in which the change filter skipped most GPU jobs.
    `gate`: the conclusion of `call-gate / pr-gate` in that run."""
    fake, repo = world.fake, world.repo
    branch = f"amd/change-{number}"
    head_owner = "contributor" if fork else "sgl-project"
    if fork:
        fork_repo = fake.find_repo("contributor", "sglang") or fake.add_repo("contributor", "sglang", fork_of=repo, owner_type="User")
        target = fork_repo
    else:
        target = repo
    sha = target.put_files(branch, {"python/sglang/srt/x.py": f"# change {number}\n"}, message=f"change {number}")
    pull = fake.add_pull(repo, number, head_ref=branch, head_sha=sha, head_repo_full_name=f"{head_owner}/sglang",
                         files=["python/sglang/srt/x.py"])
    bundle = rocm720_history()[-1]
    run = dict(bundle["workflow_run"])
    run.pop("id")
    run.update(workflow_id=ROCM720_ID, path=ROCM720, event="pull_request", head_sha=sha, head_branch=branch,
               head_repository=f"{head_owner}/sglang",
               pull_requests=[] if fork else [{"number": pull.number, "id": pull.id,
                                               "head": {"ref": branch, "sha": sha}, "base": {"ref": "main", "sha": repo.branch_sha("main")}}])
    stored = fake.add_run(repo, run)
    jobs = copy.deepcopy(bundle["jobs"])
    for job in jobs:
        job.pop("id", None)
        job["head_sha"] = sha
        if job["name"].startswith("call-gate") and gate != "success":
            job["conclusion"] = gate
            for step in job["steps"]:
                if step["name"].startswith("Require run-ci label"):
                    step["conclusion"] = gate
    fake.add_jobs(stored["id"], jobs)
    world.runs.append(stored)
    return pull.number, sha


#: The log of a job whose suite has no per-file estimates: no per-file times in it.
PLAIN_LOG = ("2026-11-02T08:33:00.1624570Z ##[group]Run bash scripts/ci/amd/amd_ci_exec.sh python3 run_suite.py\n"
             "2026-11-02T08:41:00.1624570Z 12 passed in 480.02s (0:08:00)\n")


def current_world(fake: FakeGitHub, *, logs: bool = True, config: str | None = None,
                  file_times: bool = True, staged: bool = False) -> tuple[World, dict[int, str]]:
    """sgl-project/sglang with its current lane files on main and four completed rocm720
    runs (schedule, no PR), every shard job's log stored when `logs`. `staged`: the lanes'
    1-GPU shards run by the reusable `STAGE_PATH`, which is on main too (`staged_text`)."""
    repo = fake.add_repo("sgl-project", "sglang")
    files = {LANES[lane][0]: staged_text(lane) if staged else workflow_text(lane) for lane in LANES}
    if staged:
        files[STAGE_PATH] = STAGE_TEXT
    if config is not None:
        files[".github/foldbot.yml"] = config
    repo.put_files("main", files, message="current AMD lanes")
    fake.add_workflow(repo, 49112591, CURRENT_PATH)
    fake.add_workflow(repo, 49112592, LANES["amd"][0])
    fake.add_installation(INSTALLATION, [repo])
    world = World(fake, repo)
    bundles, texts = history("rocm720", staged=staged)
    for bundle in bundles:
        run = dict(bundle["workflow_run"])
        run.update(workflow_id=49112591, path=CURRENT_PATH, head_repository="sgl-project/sglang")
        stored = fake.add_run(repo, run)
        fake.add_jobs(stored["id"], bundle["jobs"])
        world.runs.append(stored)
    if logs:  # every job has a log; those of suites without per-file estimates say no file times
        for bundle in bundles:
            for job in bundle["jobs"]:
                fake.add_job_log(job["id"], texts.get(job["id"], PLAIN_LOG) if file_times else PLAIN_LOG)
    return world, texts


#: Ports for servers a test starts as processes: below Linux's ephemeral range (32768-60999),
#: which `bind(0)` and outgoing connections draw from, and a block of their own for each pytest-xdist
#: worker. A port picked by `bind(0)` and released was free only for that moment: another test's
#: server or client could take it before `foldbot serve` bound it (seen once: a POST answered 404 by
#: another test's server).
PORT_BASE, PORTS_PER_WORKER = 10000, 450
_ports = itertools.count()


def free_port() -> int:
    """A loopback port nothing listens on, which no other test process of this run picks."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = PORT_BASE + (int(worker) if worker.isdigit() else 0) % 50 * PORTS_PER_WORKER
    for _ in range(PORTS_PER_WORKER):
        port = block + next(_ports) % PORTS_PER_WORKER
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # (something of the machine's own listens there: the next one)
                continue
        return port
    raise RuntimeError(f"no free loopback port in {block}-{block + PORTS_PER_WORKER - 1}")


async def serve_process(fake: FakeGitHub, data: Path, port: int, *, healthy: bool = True,
                        **extra: str) -> asyncio.subprocess.Process:
    """`python -m bot serve` against the fake, journal in `data`, answering once its `/health` says ok
    (its worker process in its process group: `os.killpg` is a host going down); `healthy=False`: once
    its `/health` answers at all (its worker waits for another's lock, say). An answer counts only
    while the process runs and only as foldbot's `/health` (its `version` and `status`)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FOLDBOT_"))},
           "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_APP_ID": str(fake.app_id),
           "GITHUB_PRIVATE_KEY": fake.private_key_pem, "GITHUB_API_URL": fake.base_url, "PORT": str(port),
           "HOST": "127.0.0.1", "FOLDBOT_DATA_DIR": str(data), "FOLDBOT_REDELIVER_MINUTES": "0",
           "FOLDBOT_RECONCILE_MINUTES": "0", **extra}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "serve", env=env, cwd=str(ROOT),
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                   start_new_session=True)
    async with aiohttp.ClientSession() as session:
        for _ in range(200):
            if process.returncode is not None:
                break
            if await _health_of_foldbot(session, port, healthy):
                if process.returncode is None:
                    return process
                break
            await asyncio.sleep(0.05)
    if process.returncode is None:
        os.killpg(process.pid, signal.SIGKILL)
    pytest.fail(f"foldbot serve did not start: {(await process.communicate())[0].decode()[-2000:]}")


async def _health_of_foldbot(session: aiohttp.ClientSession, port: int, healthy: bool) -> bool:
    """Whether foldbot's `/health` answers on `port` (and says ok, when `healthy`)."""
    try:
        async with session.get(f"http://127.0.0.1:{port}/health") as response:
            body = await response.json(content_type=None)
            status = response.status
    except (aiohttp.ClientConnectionError, json.JSONDecodeError):  # not listening yet, or not foldbot
        return False
    if not (isinstance(body, dict) and "version" in body and "status" in body):
        return False
    return status == 200 or not healthy


async def post_run(session: aiohttp.ClientSession, port: int, world: World, run: dict[str, Any],
                   delivery: str) -> tuple[int, Any]:
    """A signed `workflow_run` delivery of `run` to a running `foldbot serve`: its status and answer."""
    body = json.dumps(world.payload(run["id"])).encode()
    async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers={
            "X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(body)}) as response:
        return response.status, await response.json()


async def until(condition: Any, seconds: float = 20) -> None:
    """Wait for `condition()` to hold, looking every 50 ms; AssertionError after `seconds`."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")
