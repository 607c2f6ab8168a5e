"""The App reads the shard logs it needs by itself: SGLang's current lanes in the fake
GitHub, each shard job with its log in the runners' real format
(tests/sglang_current.py), and a `workflow_run` delivery. GitHub answers a log request
with a redirect to a URL signed for a minute on another host; the fake refuses that URL
with a token on it, after its minute, or with a wrong signature, as storage does."""

from __future__ import annotations

import re

import pytest

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.logs import parse_log
from bot.publish import DASHBOARD_LABEL
from tests.fakegithub import FakeGitHub
from tests.harness import Bot, World, current_world
from tests.sglang_current import LANES, history, workflow_text

SMALL = "stage-b-test-1-gpu-small-amd-rocm720"
PATH = LANES["rocm720"][0]
LOG_PATH = r"/actions/jobs/\d+/logs$"


def dashboard(world: World) -> str:
    """The dashboard's text as a reader sees it (markdown escapes undone)."""
    found = [i for i in world.repo.issues.values() if not i.is_pull and DASHBOARD_LABEL in i.labels]
    assert len(found) == 1
    return re.sub(r"\\(.)", r"\1", found[0].body)


def asked_logs(fake: FakeGitHub) -> list[int]:
    """The job ids whose logs foldbot asked GitHub for, in order."""
    return [int(r.path.split("/")[-2]) for r in fake.requests if re.search(LOG_PATH, r.path)]


def small_shard_ids(world: World) -> list[int]:
    return [job["id"] for run in world.runs for job in world.fake.jobs_of(run["id"])
            if job["name"].startswith("stage-b-test-1-gpu-small-amd-rocm720")]


async def test_the_app_reads_the_shard_logs_and_reshards_as_the_offline_analysis_does(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world, texts = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert "could not be read" not in body and "were not read" not in body
    assert f"**Reshard** `{SMALL}` from 14 to 7 shards" in body
    assert "per-file logs" in body
    # The same words as the offline analysis given the same logs.
    bundles, _ = history("rocm720")
    offline = analyze({LANES[lane][0]: workflow_text(lane) for lane in LANES}, bundles, RepoConfig(),
                      {k: parse_log(v) for k, v in texts.items()})
    small = next(r for r in offline.plan.reshards if r.job == SMALL)
    assert (small.from_count, small.to_count, small.estimate) == (14, 7, "per-file logs")
    # Only shard logs of matrices considered for a reshard: never a single-job suite's log.
    asked = set(asked_logs(fake_github))
    considered = {j.api_id for job_id in offline.plan.reshard_candidates for run in offline.stats[job_id].per_run
                  for j in run}
    assert asked and asked <= considered
    assert set(small_shard_ids(world)) <= asked
    # Each log was read once, without the token on the signed URL (the fake refuses that: 400).
    blobs = [r for r in fake_github.request_log if r.path.startswith("/_blob/")]
    assert len(blobs) == len(asked) and all(r.status == 200 and "authorization" not in r.headers for r in blobs)


async def test_logs_as_runners_print_them_crlf_progress_bars_and_bad_bytes_read_as_clean_ones(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """The App reads a download as bytes, its lines found in place: Windows line ends, a progress
    bar's carriage returns and a byte that is not UTF-8 change nothing it reads."""
    world, texts = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    for job_id, text in texts.items():
        fake_github.add_job_log(job_id, text.replace("\n", "\r\n").encode()
                                + b"Downloading weights \xff 10%\r 50%\r100%\r\nBegin (0/1):\r\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert "could not be read" not in body and "were not read" not in body
    assert f"**Reshard** `{SMALL}` from 14 to 7 shards" in body and "per-file logs" in body


async def test_a_log_is_read_once_per_job(fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    first = fake_github.count("GET", LOG_PATH)
    # The next run's report (here: an earlier run delivered late; the same four runs) asks for
    # no log a second time, and says what the first said.
    await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]))
    await bot.settle()
    asked = asked_logs(fake_github)
    assert first > 0 and len(asked) == len(set(asked))
    assert re.search(rf"\*\*Reshard\*\* `{SMALL}` from 14 to 7 shards", dashboard(world))


async def test_logs_github_no_longer_has_are_named_and_shard_times_stand_in(fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github, logs=False)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    line = next(line for line in body.splitlines() if SMALL in line and "could not be read" in line)
    assert "GitHub answered 404 (Not Found)" in line and "retention" in line
    # The newest run's logs were asked for, the older runs' not (they would be gone too).
    newest = {job["id"] for job in fake_github.jobs_of(world.runs[-1]["id"])}
    asked = set(asked_logs(fake_github))
    assert asked <= newest
    # A log that is gone is not asked for again on the next event.
    await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]))
    await bot.settle()
    asked_twice = asked_logs(fake_github)
    assert len(asked_twice) > len(asked) and len(asked_twice) == len(set(asked_twice))


async def test_an_empty_log_is_named_and_read_again_next_run(fake_github: FakeGitHub, bot: Bot) -> None:
    """GitHub sent shard 0's log of the newest run empty (a runner that printed nothing, a body lost on
    the way): it was kept as read, for good, and counted as that shard's per-file times (none). It is
    named now, and asked for again on the next event."""
    world, _ = current_world(fake_github)
    newest = {job["id"] for job in fake_github.jobs_of(world.runs[-1]["id"])}
    first = min(set(small_shard_ids(world)) & newest)
    fake_github.job_logs[first] = b""
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    line = next(line for line in dashboard(world).splitlines() if f"`{SMALL}`" in line and "could not be read" in line)
    assert f"job {first} (" in line and "GitHub sent it empty (did the runner start the step?)" in line
    assert asked_logs(fake_github).count(first) == 1
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"], run_attempt=2))
    await bot.settle()
    assert asked_logs(fake_github).count(first) == 2


async def test_a_newest_run_whose_logs_all_came_empty_does_not_stop_the_older_runs_being_read(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """Every shard log of the newest run came empty: the older runs' logs were not read (as if the
    runner printed no per-file time), and the reshard fell back from per-file logs to shard times."""
    world, _ = current_world(fake_github)
    newest = {job["id"] for job in fake_github.jobs_of(world.runs[-1]["id"])}
    for job_id in set(small_shard_ids(world)) & newest:
        fake_github.job_logs[job_id] = b""
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    older = set(small_shard_ids(world)) - newest
    assert older <= set(asked_logs(fake_github))
    assert "per-file logs (3 runs) and shard times (1 run)" in dashboard(world)


async def test_logs_without_file_times_are_looked_at_once_a_day(fake_github: FakeGitHub, bot: Bot) -> None:
    """A project whose runner prints no per-file times: the newest run's shard logs are
    read once, the report says so, and the next events do not read them again."""
    world, _ = current_world(fake_github, file_times=False)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    newest = {job["id"] for job in fake_github.jobs_of(world.runs[-1]["id"])}
    asked = set(asked_logs(fake_github))
    assert asked and asked <= newest
    line = next(line for line in dashboard(world).splitlines() if f"`{SMALL}`" in line and "per-file" in line)
    assert "hold no per-file test time in a format foldbot reads; older runs not read" in line
    assert "looked at again in 24 h" in line and "'Log formats'" in line
    before = fake_github.count("GET", LOG_PATH)
    await bot.deliver("workflow_run", world.payload(world.runs[-2]["id"]))
    await bot.settle()
    assert fake_github.count("GET", LOG_PATH) == before
    assert "hold no per-file test time" in dashboard(world)


async def test_the_download_budget_is_kept_the_rest_is_said_and_read_on_later_runs(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github, config="logs: {max_jobs: 40}\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert 0 < fake_github.count("GET", LOG_PATH) <= 40
    body = dashboard(world)
    assert "`logs.max_jobs` (40) downloads per event were spent" in body
    # Every matrix got its newest run's logs before any matrix got an older run's.
    newest = {job["id"] for job in fake_github.jobs_of(world.runs[-1]["id"])}
    small_newest = set(small_shard_ids(world)) & newest
    assert small_newest <= set(asked_logs(fake_github))
    # Later events (here: re-runs of the latest run, whose report the dashboard holds; the same
    # four runs) read what is left, 40 at a time, until the report rests on every log.
    for attempt in range(2, 2 + len(world.runs)):
        before = fake_github.count("GET", LOG_PATH)
        await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"], run_attempt=attempt))
        await bot.settle()
        assert 0 < fake_github.count("GET", LOG_PATH) - before <= 40
        if "were not read" not in dashboard(world):
            break
    body = dashboard(world)
    assert "were not read" not in body
    assert f"**Reshard** `{SMALL}` from 14 to 7 shards" in body


async def test_an_expired_link_is_named_not_retried_for_ever(fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github)
    fake_github.log_link_lifetime = -1  # every signed URL has expired when it is used
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert "its download answered 403 (AuthenticationFailed)" in body
    # Not a permanent loss: asked again on the next event, and then read.
    fake_github.log_link_lifetime = 60
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"], run_attempt=2))  # (the dashboard's run)
    await bot.settle()
    assert "could not be read" not in dashboard(world)


async def test_with_fetch_off_no_log_is_read_and_the_report_says_how_to_turn_it_on(
        fake_github: FakeGitHub, bot: Bot) -> None:
    world, _ = current_world(fake_github, config="logs: {fetch: false}\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert fake_github.count("GET", LOG_PATH) == 0
    assert "set `logs: {fetch: true}` in .github/foldbot.yml" in dashboard(world)


async def test_a_log_over_the_size_limit_is_named(fake_github: FakeGitHub, bot: Bot) -> None:
    world, texts = current_world(fake_github, config="logs: {max_mb: 1}\n")
    big = small_shard_ids(world)[-1]
    fake_github.add_job_log(big, texts[big] + "x" * (2 << 20))
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert f"job {big} (`" in dashboard(world)
    assert "over the 1 MiB read per log" in dashboard(world)


@pytest.mark.parametrize("text,problem", [
    ("logs: {max_jobs: -1}", "`logs.max_jobs` must be a whole number from 0 to 1000"),
    ("logs: {fetch: 'yes'}", "`logs.fetch` must be true or false"),
    ("logs: {max_mb: 0}", "`logs.max_mb` must be a number from 1 to 1024"),
    ("logs: {depth: 3}", "`logs.depth` is not a setting"),
])
def test_a_wrong_logs_setting_is_a_clear_error(text: str, problem: str) -> None:
    from bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=re.escape(problem)):
        parse_config(text)


async def test_a_hostile_log_is_named_and_the_report_still_written(fake_github: FakeGitHub, bot: Bot) -> None:
    """A log is anybody's text: a number of 400 digits in its TIMINGS block, JSON nested
    without end. The report names it and stands on the other logs."""
    world, texts = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    one, two = small_shard_ids(world)[-2:]
    fake_github.add_job_log(one, texts[one] + "TIMINGS BEGIN\n{\"file\": \"test/a.py\", \"elapsed\": " + "9" * 400 + "}\n")
    fake_github.add_job_log(two, "TIMINGS BEGIN\n" + "[" * 100_000 + "\n")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert f"job {one} (`" in body and "it cannot be read: a line of it cannot be read (OverflowError)" in body
    assert f"job {two} (`" in body and "(RecursionError)" in body


async def test_raising_max_mb_reads_a_log_that_was_too_large(fake_github: FakeGitHub, bot: Bot) -> None:
    world, texts = current_world(fake_github, config="logs: {max_mb: 1, max_jobs: 200}\n")
    big = small_shard_ids(world)[-1]
    fake_github.add_job_log(big, texts[big] + "." * (2 << 20))
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert "over the 1 MiB read per log" in dashboard(world)
    world.repo.put_files("main", {".github/foldbot.yml": "logs: {max_mb: 4, max_jobs: 200}\n"})
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"], run_attempt=2))  # (the dashboard's run)
    await bot.settle()
    assert fake_github.count("GET", rf"/actions/jobs/{big}/logs$") == 2
    assert "over the" not in dashboard(world)


async def test_a_rate_limit_stops_the_downloads_of_the_event(fake_github: FakeGitHub, bot: Bot,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    world, _ = current_world(fake_github, config="logs: {max_jobs: 200}\n")
    fake_github.secondary_rate_limit(1, retry_after=2, path=LOG_PATH)  # (the test App waits at most 5 s)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    assert fake_github.count("GET", LOG_PATH) <= 4  # the ones already on their way when the limit came
    assert "GitHub's rate limit (403); read again on a later run" in dashboard(world)
    # the report's own calls waited what was left of the 2 s GitHub asked for (they are the App's calls too)
    assert any("before sending it, as GitHub asked" in r.getMessage() for r in caplog.records)


async def test_with_the_rate_limit_low_the_logs_wait_and_the_report_says_so(fake_github: FakeGitHub) -> None:
    """Shard logs are the optional reads: with fewer calls left than the reserve plus the
    log budget, they are not read, and the report says until when and why."""
    from tests.harness import start_bot

    fake_github.rate_limits = type(fake_github.rate_limits)({"installation": 350, "user": 5000, "app": 5000,
                                                             "anonymous": 60})
    world, _ = current_world(fake_github, config="logs: {max_jobs: 60}\n")
    running, runner = await start_bot(fake_github)
    try:
        await running.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
        await running.settle()
    finally:
        await running.session.close()
        await runner.cleanup()
    assert fake_github.count("GET", LOG_PATH) == 0
    line = next(line for line in dashboard(world).splitlines() if line.startswith("- `shard logs`"))
    assert "not read this time: this installation has" in line and "GitHub calls left until" in line
    assert "keeps 300 for reports and commands" in line


async def test_a_lane_whose_shards_a_reusable_workflow_runs_is_resharded_from_their_logs(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """SGLang's lanes calling `_pr-test-stage-amd.yml` for the 1-GPU suite (`partitions: '{"size":14,...}'`):
    the App reads the called file from the default branch and the called jobs' logs by itself, and offers the
    same 14 -> 7 it offers the lane written as a matrix, by the count the caller passes."""
    from tests.sglang_current import STAGE_PATH

    world, texts = current_world(fake_github, config="logs: {max_jobs: 200}\n", staged=True)
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert "could not be read" not in body and "were not read" not in body
    assert (f"**Reshard** `{SMALL}` from 14 to 7 shards (its `with: partitions:`, the shard count it passes "
            f"`{STAGE_PATH}`)") in body
    assert "Estimate from per-file logs." in body
    assert """partitions: '{"size":7,"arr":[0,1,2,3,4,5,6]}'""" in body  # the patch, in the dashboard
    # the called file was read (once), and every log of the caller's shards, named `<caller> / <called job>`
    assert sum(1 for r in fake_github.requests if r.path.endswith("/contents/" + STAGE_PATH)) == 1
    shards = [job["id"] for run in world.runs for job in world.fake.jobs_of(run["id"])
              if job["name"].startswith(f"{SMALL} / ")]
    assert len(shards) == 4 * 14 and set(shards) <= set(asked_logs(fake_github))


async def test_rocm_aiters_shards_over_two_runners_are_sized_from_their_per_file_times(
        fake_github: FakeGitHub, bot: Bot) -> None:
    """ROCm/aiter's `standard` lane (scan112): one split (`split_tests.sh --shards 4` in a CPU job) run on each of two
    runners. foldbot changes none of its counts, but the App reads its shards' logs (`⏱ Time elapsed of F: S seconds`)
    and the dashboard says what the files allow, and where the count is written, to change by hand."""
    from tests.harness import INSTALLATION
    from tests.test_plan import _aiter_log, _aiter_runs, _aiter_standard

    repo = fake_github.add_repo("ROCm", "aiter")
    path = ".github/workflows/pr-test-amd-rocm700.yml"  # (test_plan's PATH: the runs' `path`)
    repo.put_files("main", {path: _aiter_standard()}, message="aiter's lane")
    fake_github.add_workflow(repo, 5100, path)
    fake_github.add_installation(INSTALLATION, [repo])
    world = World(fake_github, repo)
    shards = [[("op_tests/test_a.py", 20), ("op_tests/test_b.py", 10)], [("op_tests/test_c.py", 15), ("op_tests/test_d.py", 15)],
              [("op_tests/test_e.py", 25), ("op_tests/test_f.py", 5)], [("op_tests/test_g.py", 12), ("op_tests/test_h.py", 18)]]
    for made in _aiter_runs({"MI35X": [30] * 4, "MI300X": [30] * 4}):
        stored = fake_github.add_run(repo, {**made["workflow_run"], "workflow_id": 5100, "path": path,
                                            "head_repository": "ROCm/aiter"})
        fake_github.add_jobs(stored["id"], made["jobs"])
        world.runs.append(stored)
        for job in made["jobs"]:
            fake_github.add_job_log(job["id"], _aiter_log(int(job["name"][-2]), shards[int(job["name"][-2])]))
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    body = dashboard(world)
    assert ("**Shard lists left as they are** (measured; no count foldbot can set)\n\n- `standard`: the times allow 3 "
            "shards of its 4 (the longest 43 min at p90 on `runner: linux-aiter-mi35x-1`, within 54 min, 60% of `Tests`'s "
            "90-min timeout; per-file logs), 2 setups fewer a run (over the 3 runs it ran in; 12 min each, median): change by hand its `include` "
            "entries and `split_aiter_tests`'s `Split Aiter Tests (4 shards)` (`--shards 4`).") in body
    assert "no per-file test times" not in body and "could not be read" not in body
    assert len(asked_logs(fake_github)) == 3 * 8  # every shard of both runners, each once
