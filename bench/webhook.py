"""The webhook server's figures (`make bench` runs this):

1. Answers to 200 concurrent signed `workflow_run` deliveries: `foldbot serve` as deployed
   (its own process, the SQLite journal with an fsync per commit, its worker process), a
   bare aiohttp handler that checks the HMAC, and the floor of answering after a durable
   write (the bare handler writing through foldbot's journal first), each in a process of
   its own, the client in another; p50/p99, foldbot's as a multiple of the bare handler's
   (target <= 1.5x) and of the floor's.
2. Answers while foldbot works (new runs to report), with the worker process and without.
3. GitHub calls for one `workflow_run` (8-run history, 2 lanes): cold (new process)
   and warm (the next run, caches filled), against the minimum it needs.
4. Webhook to PR comment at 50 ms per GitHub call, against the critical path.
5. CPU per event; a burst of 1,000 mixed deliveries to `foldbot serve` as deployed.

    .venv/bin/python bench/webhook.py          # all of it (`make bench`)
    .venv/bin/python bench/webhook.py floors   # what a wait before the answer costs a bare handler
    .venv/bin/python bench/webhook.py paced    # the three servers of 1., one delivery at a time
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import resource
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakegithub import FakeGitHub  # noqa: E402
from tests.harness import SECRET, sglang_world, start_bot  # noqa: E402

DELIVERIES = 200


def pct(values: list[float], q: float) -> float:
    data = sorted(values)
    return data[min(len(data) - 1, int(round(q / 100 * (len(data) - 1))))]


#: The yardstick, run as a process of its own: an aiohttp handler that reads the body, checks
#: its HMAC and answers 202, listening as `foldbot serve` does. Its other modes wait for
#: something before the answer, and nothing else (`floors` times them all):
#: - `journal`: the floor of a server that answers once a delivery is on the disk: it writes the
#:   delivery through foldbot's own journal first (`bot.journal.Journal.record`: the SQLite
#:   file, WAL, an fsync per commit, group commits in a writer thread), opened as foldbot's web
#:   process opens it, without checkpoints; nothing else checkpoints it (foldbot's worker does,
#:   in its own process), so the WAL grows by ~3 MB a round: a lower bound;
#: - `journal-nofsync`: the same journal with no fsync per commit (`synchronous=NORMAL`);
#: - `inline`: the same write without the writer thread, in the event loop, no fsync;
#: - `turn`: no write, only a wait for the next turn of the event loop;
#: - `spool`: durable without SQLite: the body appended to a plain file in the loop, the answer
#:   once a thread's `fdatasync` (one for all the appends before it) returns: what a spool in
#:   front of the journal would cost the answer (the spool's bytes moved into SQLite later).
BARE = """
import asyncio, hashlib, hmac, os, sys, threading
from pathlib import Path
from aiohttp import web
secret, port, mode = sys.argv[1].encode(), int(sys.argv[2]), sys.argv[3]
if mode.startswith(("journal", "inline")):
    sys.path.insert(0, sys.argv[5])
    from bot.journal import Journal
    journal = Journal(Path(sys.argv[4]), fsync=mode == "journal", checkpoints=False)
    journal._in_place = False  # every write through the writer thread, as foldbot's web process writes
if mode == "spool":
    Path(sys.argv[4]).mkdir(parents=True, exist_ok=True)
    spool = os.open(str(Path(sys.argv[4]) / "spool"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    synced, waiting = threading.Condition(), []

    def sync_groups():
        while True:
            with synced:
                synced.wait_for(lambda: waiting)
                group = waiting[:]
                waiting.clear()
            os.fdatasync(spool)  # every append before the group's futures were made
            group[0].get_loop().call_soon_threadsafe(lambda done=group: [f.set_result(None) for f in done])

    threading.Thread(target=sync_groups, daemon=True).start()

    async def spooled(body):
        os.write(spool, body)
        future = asyncio.get_running_loop().create_future()
        with synced:
            waiting.append(future)
            synced.notify()
        await future

async def handler(request):
    body = await request.read()
    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, request.headers.get("X-Hub-Signature-256", "")):
        return web.json_response({"error": "bad signature"}, status=401)
    delivery, event = request.headers["X-GitHub-Delivery"], request.headers["X-GitHub-Event"]
    if mode.startswith("journal"):
        await journal.record(delivery, event, body, None)
    elif mode == "spool":
        await spooled(body)
    elif mode == "inline":
        journal.accept(delivery, event, body, None)
    elif mode == "turn":
        turn = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(turn.set_result, None)
        await turn
    return web.json_response({"queued": True}, status=202)

app = web.Application(client_max_size=25 * 1024 * 1024)
app.router.add_post("/webhook", handler)
async def health(request):
    return web.json_response({"ok": True})

app.router.add_get("/health", health)
web.run_app(app, host="127.0.0.1", port=port, backlog=1024, print=None)
"""

BARE_MODES = {"bare": "bare handler (checks the HMAC, answers 202)",
              "turn": "the bare handler, answering a turn of the loop later",
              "inline": "... writing through the journal in the loop, no fsync",
              "journal-nofsync": "... writing through the journal's writer thread, no fsync",
              "journal": "floor: the bare handler, answering once the journal holds the delivery",
              "spool": "... answering once a plain appended file holds it (no SQLite)"}


async def start_bare(mode: str = "bare", data: Path | None = None) -> tuple[str, asyncio.subprocess.Process]:
    """The bare handler in a process of its own, in one of BARE_MODES (a journal in `data`)."""
    port = free_port()
    journal = [str(data), str(ROOT)] if data is not None else []
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", BARE, SECRET, str(port), mode, *journal)
    url = f"http://127.0.0.1:{port}"
    await started(url, process)
    return url, process


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def started(url: str, process: asyncio.subprocess.Process) -> None:
    """`wait_healthy`, and a process that does not start is not left behind."""
    try:
        await wait_healthy(url, process)
    except BaseException:
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise


async def stop_all(processes: list[asyncio.subprocess.Process]) -> None:
    for process in processes:
        if process.returncode is None:
            process.terminate()
        await process.wait()


async def wait_healthy(url: str, process: asyncio.subprocess.Process) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            try:
                async with session.get(f"{url}/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            if process.returncode is not None:
                break
            await asyncio.sleep(0.05)
    raise SystemExit(f"{url} did not start")


async def serve_foldbot(fake: FakeGitHub, data: Path, log: Path, **extra: str) -> tuple[str, asyncio.subprocess.Process]:
    """`foldbot serve` as deployed: its own process, the SQLite journal in a data directory."""
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FOLDBOT_"))},
           "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_APP_ID": str(fake.app_id),
           "GITHUB_PRIVATE_KEY": fake.private_key_pem, "GITHUB_API_URL": fake.base_url, "PORT": str(port),
           "HOST": "127.0.0.1", "FOLDBOT_DATA_DIR": str(data), "FOLDBOT_REDELIVER_MINUTES": "0",
           "FOLDBOT_RECONCILE_MINUTES": "0", "FOLDBOT_QUEUE_SIZE": "5000", **extra}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "serve", env=env, cwd=str(ROOT),
                                                   stdout=log.open("wb"), stderr=asyncio.subprocess.STDOUT)
    await started(f"http://127.0.0.1:{port}", process)
    return f"http://127.0.0.1:{port}", process


CLIENT = """
import asyncio, gc, json, sys, time, uuid, hashlib, hmac
import aiohttp
gc.disable()  # the yardstick's own collections would stall whichever server it is timing then
secret, urls, body_file, rounds = sys.argv[1], sys.argv[2].split(","), sys.argv[3], int(sys.argv[4])
body = open(body_file, "rb").read()
signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()

async def one(session, url):
    headers = {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": str(uuid.uuid4()),
               "X-Hub-Signature-256": signature, "Content-Type": "application/json"}
    start = time.perf_counter()
    async with session.post(url, data=body, headers=headers) as response:
        await response.read()
        assert response.status in (200, 202), response.status
    return (time.perf_counter() - start) * 1000

async def main():
    out = {url: [] for url in urls}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=%d)) as session:
        for url in urls:
            await asyncio.gather(*(one(session, url) for _ in range(20)))  # warm-up: connections, caches
        for _ in range(rounds):
            for url in urls:
                out[url] += await asyncio.gather(*(one(session, url) for _ in range(%d)))
                await asyncio.sleep(0.5)
    print(json.dumps(out))

asyncio.run(main())
""" % (DELIVERIES, DELIVERIES)


#: One delivery at a time to each server in turn, one every 20 ms: the answer without a queue.
PACED_CLIENT = CLIENT.split("async def main():")[0] + """async def main():
    out = {url: [] for url in urls}
    async with aiohttp.ClientSession() as session:
        for url in urls:
            for _ in range(10):  # warm-up: the connection, caches
                await one(session, url)
        for _ in range(rounds):
            for url in urls:
                out[url].append(await one(session, url))
            await asyncio.sleep(0.02)
    print(json.dumps(out))

asyncio.run(main())
"""


async def time_answers(servers: dict[str, str], body: bytes, rounds: int, tmp: Path,
                       client_source: str = CLIENT) -> dict[str, list[float]]:
    """The client (CLIENT: bursts; PACED_CLIENT: one at a time) in a process of its own,
    sending `body` to each server's /webhook in turn: each server's answer times (ms), by name."""
    file = tmp / "body.json"
    file.write_bytes(body)
    client = await asyncio.create_subprocess_exec(
        sys.executable, "-c", client_source, SECRET, ",".join(f"{url}/webhook" for url in servers.values()), str(file),
        str(rounds), stdout=asyncio.subprocess.PIPE)
    output, _ = await client.communicate()
    measured = json.loads(output)
    return {name: measured[f"{url}/webhook"] for name, url in servers.items()}


@contextlib.asynccontextmanager
async def three_servers(tmp: Path) -> AsyncIterator[tuple[dict[str, str], bytes]]:
    """foldbot serve, the bare handler and the floor (the bare handler writing through the
    journal), each in a process of its own, and the delivery to send them: one of a run
    foldbot has reported already (so its worker skips each copy, as it would a duplicate)."""
    async with FakeGitHub() as fake:
        world = sglang_world(fake)
        run = world.runs[-1]
        body = json.dumps(world.payload(run["id"])).encode()
        processes: list[asyncio.subprocess.Process] = []
        try:
            bot_url, bot = await serve_foldbot(fake, tmp / "data", tmp / "serve.log")
            processes.append(bot)
            bare_url, bare = await start_bare()
            processes.append(bare)
            floor_url, floor = await start_bare("journal", tmp / "floor")
            processes.append(floor)
            async with aiohttp.ClientSession() as session:  # the run is reported; later deliveries of it are skipped
                signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                async with session.post(f"{bot_url}/webhook", data=body, headers={
                        "X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": "first",
                        "X-Hub-Signature-256": signature}) as response:
                    assert response.status == 202, response.status
                number = run["pull_requests"][0]["number"]
                for _ in range(600):
                    if any(c.user == "foldbot[bot]" for c in fake.comments_on(world.repo, number)):
                        break
                    await asyncio.sleep(0.05)
            yield {"bare": bare_url, "floor": floor_url, "foldbot": bot_url}, body
        finally:
            await stop_all(processes)


THREE = {"bare": BARE_MODES["bare"], "floor": BARE_MODES["journal"],
         "foldbot": "foldbot serve as deployed (journal, checks, its worker process)"}


async def latency(rounds: int = 5) -> None:
    """The three servers (`three_servers`), the client in a fourth process: rounds of 200
    concurrent signed deliveries to each in turn."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        async with three_servers(Path(tmp)) as (servers, body):
            samples = await time_answers(servers, body, rounds, Path(tmp))
    print(f"{DELIVERIES} concurrent signed deliveries ({len(body) / 1024:.0f} KiB each), {rounds} rounds, to each server "
          f"in turn; each server in a process of its own, the client in another:")
    for name, values in samples.items():
        print(f"  {THREE[name]:72s} p50 {statistics.median(values):6.1f} ms   p99 {pct(values, 99):6.1f} ms")

    def ratios(name: str, base: str) -> str:
        p50 = statistics.median(samples[name]) / statistics.median(samples[base])
        p99 = pct(samples[name], 99) / pct(samples[base], 99)
        return f"p50 {p50:.2f}x, p99 {p99:.2f}x"
    print(f"  foldbot / bare: {ratios('foldbot', 'bare')} (target <= 1.5x); "
          f"floor / bare: {ratios('floor', 'bare')}; foldbot / floor: {ratios('foldbot', 'floor')}")
    slowest = {name: bursts(values) for name, values in samples.items()}

    def paired(name: str, base: str) -> str:
        return f"{statistics.median(a / b for a, b in zip(slowest[name], slowest[base])):.2f}x"
    print(f"  by burst (a round's slowest answer; one client sends and reads them all, so they come back close "
          f"together, and the p99 is the slowest burst or two): median of the same round's ratio foldbot / bare "
          f"{paired('foldbot', 'bare')}, floor / bare {paired('floor', 'bare')}; slowest burst: "
          + ", ".join(f"{name} {max(values):.0f} ms" for name, values in slowest.items()))


def bursts(values: list[float]) -> list[float]:
    """Each round's slowest answer (the client times the rounds' answers in order)."""
    return [max(values[start:start + DELIVERIES]) for start in range(0, len(values), DELIVERIES)]


async def paced(deliveries: int = 300) -> None:
    """The three servers of `latency`, one delivery at a time (one every 20 ms, to each in
    turn): what a durable answer costs with no queue (`python bench/webhook.py paced`)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        async with three_servers(Path(tmp)) as (servers, body):
            samples = await time_answers(servers, body, deliveries, Path(tmp), PACED_CLIENT)
    print(f"{deliveries} signed deliveries ({len(body) / 1024:.0f} KiB each) to each server, one at a time, "
          f"one every 20 ms:")
    print_against_bare(samples, THREE, "5.2f")


async def floors(rounds: int = 10) -> None:
    """What a wait before the answer costs, whatever foldbot does: the bare handler in each of
    BARE_MODES, each in a process of its own, rounds of 200 concurrent signed deliveries to
    each in turn (`python bench/webhook.py floors`; not part of `make bench`)."""
    import tempfile

    async with FakeGitHub() as fake:
        world = sglang_world(fake)
        body = json.dumps(world.payload(world.runs[-1]["id"])).encode()
    with tempfile.TemporaryDirectory() as tmp:
        servers: dict[str, tuple[str, asyncio.subprocess.Process]] = {}
        try:
            for mode in BARE_MODES:
                servers[mode] = await start_bare(mode, Path(tmp) / mode)
            samples = await time_answers({mode: url for mode, (url, _) in servers.items()}, body, rounds, Path(tmp))
        finally:
            await stop_all([process for _, process in servers.values()])
    print(f"{DELIVERIES} concurrent signed deliveries ({len(body) / 1024:.0f} KiB each), {rounds} rounds, to each "
          f"handler in turn:")
    print_against_bare(samples, BARE_MODES, "6.1f")


def print_against_bare(samples: dict[str, list[float]], labels: dict[str, str], style: str) -> None:
    """A line per server: its p50 and p99 (ms, in `style`) and each as a multiple of bare's."""
    bare50, bare99 = statistics.median(samples["bare"]), pct(samples["bare"], 99)
    for name, values in samples.items():
        p50, p99 = statistics.median(values), pct(values, 99)
        print(f"  {labels[name]:72s} p50 {p50:{style}} ms ({p50 / bare50:.2f}x)   "
              f"p99 {p99:{style}} ms ({p99 / bare99:.2f}x)")


BUSY_CLIENT = """
import asyncio, gc, json, sys, time, uuid, hashlib, hmac
import aiohttp
gc.disable()  # the yardstick's own collections would stall whichever server it is timing then
secret, url, bodies_file = sys.argv[1], sys.argv[2], sys.argv[3]
bodies = json.load(open(bodies_file))
probe, work = bodies["probe"].encode(), [b.encode() for b in bodies["work"]]

def headers(body):
    return {"X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": str(uuid.uuid4()), "Content-Type": "application/json",
            "X-Hub-Signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}

async def post(session, body):
    start = time.perf_counter()
    async with session.post(url, data=body, headers=headers(body)) as response:
        await response.read()
        assert response.status == 202, response.status
    return (time.perf_counter() - start) * 1000

async def main():
    async with aiohttp.ClientSession() as session:
        async def feed():
            for body in work:  # runs to report, 5 a second
                await post(session, body)
                await asyncio.sleep(0.2)
        feeding = asyncio.create_task(feed())
        probes = []
        while not feeding.done():  # and a delivery to acknowledge every 20 ms meanwhile
            probes.append(await post(session, probe))
            await asyncio.sleep(0.02)
        await feeding
    print(json.dumps(probes))

asyncio.run(main())
"""


async def busy_latency(runs: int = 20) -> None:
    """Acknowledgements while foldbot works: `runs` new lane runs to report, 5 a second
    (each an analysis of ~100 ms CPU), and a delivery every 20 ms meanwhile, whose answer
    is timed; foldbot serve with its worker process, and without."""
    import tempfile

    results = {}
    for mode in ("yes", "no"):
        async with FakeGitHub() as fake:
            world = sglang_world(fake)
            base = world.runs[-1]
            with tempfile.TemporaryDirectory() as tmp:
                url, bot = await serve_foldbot(fake, Path(tmp) / "data", Path(tmp) / "serve.log",
                                               FOLDBOT_WORKER_PROCESS=mode)
                try:
                    work = [json.dumps(world.payload(world.runs[1 + i % (len(world.runs) - 1)]["id"], run_attempt=2 + i))
                            for i in range(runs)]
                    file = Path(tmp) / "bodies.json"
                    file.write_text(json.dumps({"probe": json.dumps(world.payload(base["id"])), "work": work}))
                    client = await asyncio.create_subprocess_exec(sys.executable, "-c", BUSY_CLIENT, SECRET,
                                                                  f"{url}/webhook", str(file), stdout=asyncio.subprocess.PIPE)
                    output, _ = await client.communicate()
                finally:
                    bot.terminate()
                    await bot.wait()
                results[mode] = json.loads(output)
    print(f"answers while foldbot reports {runs} new lane runs (5 a second), one delivery every 20 ms:")
    for mode, label in (("yes", "work in its own process (default)"), ("no", "work in the web process")):
        values = results[mode]
        print(f"  {label:34s} p50 {statistics.median(values):6.1f} ms   p99 {pct(values, 99):6.1f} ms   "
              f"max {max(values):6.1f} ms  ({len(values)} answers)")


#: What a shard job of this (pre-#34483) history prints: no per-file times.
PLAIN_LOG = "2026-08-20T11:02:03.1234567Z ##[group]Run python3 run_suite.py --hw amd\n2026-08-20T11:09:03.1234567Z 12 passed\n"


async def calls() -> None:
    async with FakeGitHub() as fake:
        world = sglang_world(fake)
        for run in world.runs:  # every job has a log, as on GitHub
            for job in fake.jobs_of(run["id"]):
                fake.add_job_log(job["id"], PLAIN_LOG)
        bot, runner = await start_bot(fake)
        results = []
        for label, run in (("cold", world.runs[-2]), ("warm", world.runs[-1])):
            before = len(fake.requests)
            await bot.deliver("workflow_run", world.payload(run["id"]))
            await bot.settle()
            made = [r for r in fake.requests[before:] if not r.path.startswith("/_blob/")]  # downloads are no API call
            results.append((label, len(made), sum(1 for r in made if r.status == 304),
                            sum(1 for r in made if r.method != "GET"), sum(1 for r in made if r.path.endswith("/logs"))))
        await bot.session.close()
        await runner.cleanup()
    runs = len(world.runs)
    lanes = 2
    # cold: token + App slug; the default branch's head (its name is in the payload); config; workflow dir;
    # lane files; run list; jobs of each run; the PR's files; dashboard search (by its label, then, none so
    # labelled, among all foldbot opened: a dashboard whose label a maintainer took off) + write; comment search + write;
    # what was created is read once more (two processes creating at once keep the oldest); and the newest run's
    # shard logs of the two matrices considered for a reshard (4 + 3 shards), which hold no per-file time and
    # are not looked at again for a day.
    # warm (the next run, same default-branch head): the head; workflow dir (the blob SHAs: lane files are kept
    # by blob); run list; the new PR's files; dashboard search + update; comment search + create + read back.
    # Nothing else: the config is kept per commit, every run's jobs were read with the cold run's history (a
    # completed run never changes), the logs are kept per job.
    minimum = {"cold": 2 + 1 + 1 + 1 + lanes + 1 + runs + 1 + 4 + 3 + 7, "warm": 1 + 1 + 1 + 1 + 2 + 3}
    print("GitHub calls for one workflow_run (8-run history, 2 lanes):")
    for label, total, not_modified, writes, logs in results:
        print(f"  {label}: {total} calls ({not_modified} answered 304, free of rate limit; {writes} writes; "
              f"{logs} job logs); minimum {minimum[label]}")


#: Rounds of GitHub calls that must follow one another for the report of a new run on a CI PR:
#: the installation token; the default branch's head (the App's slug alongside); the config, the
#: workflow listing, the run list and the run's PRs at once; the runs' jobs; the lane files and the
#: PR's files at once; the shard logs (API redirect, then the download: 7 logs, 4 at a time: 2 rounds
#: of each); the dashboard (search by its label, then among all foldbot opened, write, read back); the PR
#: comment (search, write, read back).
CRITICAL_ROUNDS = 1 + 1 + 1 + 1 + 1 + 4 + 4 + 3
CALL_MS = 50


async def critical_path() -> None:
    """Webhook to PR comment with every GitHub call taking 50 ms, against the rounds of calls
    that must follow one another (CRITICAL_ROUNDS) plus the CPU the event itself takes."""
    async with FakeGitHub(latency=CALL_MS / 1000) as fake:
        world = sglang_world(fake)
        for run in world.runs:
            for job in fake.jobs_of(run["id"]):
                fake.add_job_log(job["id"], PLAIN_LOG)
        bot, runner = await start_bot(fake)
        last = world.runs[-1]
        number = last["pull_requests"][0]["number"]
        cpu = time.process_time()
        start = time.perf_counter()
        await bot.deliver("workflow_run", world.payload(last["id"]))
        await bot.settle()
        elapsed = (time.perf_counter() - start) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
        assert any(c.user == "foldbot[bot]" for c in fake.comments_on(world.repo, number))
        await bot.session.close()
        await runner.cleanup()
    floor = CRITICAL_ROUNDS * CALL_MS
    print(f"webhook -> PR comment at {CALL_MS} ms per GitHub call: {elapsed:.0f} ms; critical path "
          f"{CRITICAL_ROUNDS} rounds x {CALL_MS} ms = {floor} ms, + {cpu_ms:.0f} ms CPU of this process "
          f"(fake GitHub included): {elapsed / (floor + cpu_ms):.2f}x (target <= 1.2x)")


async def cpu_per_event(events: int = 20) -> None:
    """CPU of foldbot's process per workflow_run of a busy lane: every event a new run (its
    history mostly read), the fake GitHub in its own process would not count; here it runs in
    this one, so the figure is an upper bound."""
    async with FakeGitHub() as fake:
        world = sglang_world(fake)
        bot, runner = await start_bot(fake)
        await bot.deliver("workflow_run", world.payload(world.runs[0]["id"]))
        await bot.settle()
        cpu = time.process_time()
        for i in range(events):
            run = world.runs[1 + i % (len(world.runs) - 1)]
            await bot.deliver("workflow_run", world.payload(run["id"], run_attempt=2 + i))
            await bot.settle()
        per_event = (time.process_time() - cpu) * 1000 / events
        await bot.session.close()
        await runner.cleanup()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"CPU per workflow_run event (warm, fake GitHub in the same process): {per_event:.0f} ms; "
          f"peak RSS of the process {rss:.0f} MiB")


def peak_rss_mib(pid: int) -> float:
    """A live process's peak resident memory (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmHWM for process {pid}")


async def burst(deliveries: int = 1000) -> None:
    """1,000 mixed signed deliveries at once to `foldbot serve` as deployed (its own
    process, the SQLite journal, its worker process): every run of the history (new
    attempts, and each delivered twice), pushes to the PRs, `/fold help` comments, events
    foldbot does not handle. All are answered, all processed; every CI PR ends with
    exactly one report comment, every command comment with one reply."""
    import tempfile

    from tests.harness import comment_payload, sign

    async with FakeGitHub() as fake:
        world = sglang_world(fake)
        numbers = [r["pull_requests"][0]["number"] for r in world.runs]
        mixed: list[tuple[str, dict, str]] = []
        i = 0
        while len(mixed) < deliveries:
            run = world.runs[(i // 4) % len(world.runs)]
            kind = i % 4
            if kind == 0:
                payload = world.payload(run["id"], run_attempt=1 + i // (4 * len(world.runs)))
                mixed += [("workflow_run", payload, f"wr-{i}"), ("workflow_run", payload, f"wr-{i}")]  # and its duplicate
            elif kind == 1:
                number = numbers[i % len(numbers)]
                body = {"action": "synchronize", "number": number, "pull_request": {"head": {"sha": "f" * 40}},
                        "repository": {"full_name": world.repo.full_name}, "installation": {"id": 31337}}
                mixed.append(("pull_request", body, f"pr-{i}"))
            elif kind == 2:
                mixed.append(("issue_comment", comment_payload(world, numbers[i % len(numbers)], "/fold help", f"u{i}"),
                              f"ic-{i}"))
            else:
                mixed.append(("star", {"action": "created"}, f"st-{i}"))
            i += 1
        mixed = mixed[:deliveries]
        with tempfile.TemporaryDirectory() as tmp:
            url, bot = await serve_foldbot(fake, Path(tmp) / "data", Path(tmp) / "serve.log")
            try:
                worker = int(Path(f"/proc/{bot.pid}/task/{bot.pid}/children").read_text().split()[0])
                async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=deliveries)) as session:
                    async def deliver(event: str, payload: dict, delivery: str) -> int:
                        body = json.dumps(payload).encode()
                        async with session.post(f"{url}/webhook", data=body, headers={
                                "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
                                "X-Hub-Signature-256": sign(body)}) as response:
                            await response.read()
                            return response.status

                    start = time.perf_counter()
                    answers = await asyncio.gather(*(deliver(*item) for item in mixed))
                    acked = time.perf_counter() - start
                    while True:  # processed: nothing queued in the journal (a delivery leaves it when marked)
                        async with session.get(f"{url}/health") as response:
                            if (await response.json())["queue_depth"] == 0:
                                break
                        await asyncio.sleep(0.1)
                    done = time.perf_counter() - start
                rss = {"web": peak_rss_mib(bot.pid), "worker": peak_rss_mib(worker)}
            finally:
                bot.terminate()
                await bot.wait()
        statuses = sorted(set(answers))
    reports = [sum(1 for c in fake.comments_on(world.repo, n) if c.user == "foldbot[bot]" and "foldbot:report" in c.body)
               for n in numbers]
    commands = sum(1 for e, _, _ in mixed if e == "issue_comment")
    replies = sum(1 for n in numbers for c in fake.comments_on(world.repo, n)
                  if c.user == "foldbot[bot]" and "foldbot:reply" in c.body)
    print(f"{len(mixed)} mixed deliveries in a burst to foldbot serve: answered {statuses} in {acked:.1f} s, all processed "
          f"in {done:.1f} s; report comments per CI PR {sorted(set(reports))} (exactly one each: {set(reports) == {1}}); "
          f"{replies} replies to {commands} command comments; peak RSS: web process {rss['web']:.0f} MiB, "
          f"worker process {rss['worker']:.0f} MiB")


async def main() -> None:
    await latency(10)
    await busy_latency()
    await calls()
    await critical_path()
    await cpu_per_event()
    await burst()


if __name__ == "__main__":
    asyncio.run({"floors": floors, "paced": paced}.get(sys.argv[1] if len(sys.argv) > 1 else "", main)())
