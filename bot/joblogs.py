"""The shard logs an analysis needs, read by the App itself.

Per-file test times (`bot.logs`) let a reshard rest on what each file really took
instead of today's split. foldbot reads them only for the shard jobs of matrices the
planner considers resharding, newest run first and a run's shards all or none (the
planner uses a run's logs only when every shard's is there). Bounded: at most
`logs.max_jobs` downloads per event and `logs.max_mb` per log. A read log never
changes, so it is kept per job id (`cache`); so is a log that is gone for good.

When the newest run's logs of a matrix hold no per-file time (a project whose
runner prints none of the formats foldbot reads), its older runs are not read, and
that matrix's logs are not looked at again for `RECHECK_SECONDS`.
Every log that could not be read is a line of the report's "Could not measure".
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, MutableMapping

from .analysis import Analysis, Unmeasured
from .config import RepoConfig
from .api import RepoAPI
from .github import JobLogError
from .logs import LogError, ShardLog, blank, parse_log
from .timing import JobTiming

#: At most this many downloads at once.
CONCURRENCY = 4
#: A matrix whose newest logs held no per-file time is looked at again after this long.
RECHECK_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Gone:
    """A log that will not come back (expired, deleted, unreadable) or is too large for
    `limit`: kept like a read one, so it is not asked for again (a too large one is, once
    `logs.max_mb` allows more)."""

    reason: str
    limit: int | None = None


@dataclass(frozen=True)
class LogsRead:
    logs: dict[int, ShardLog]
    problems: tuple[Unmeasured, ...]
    downloads: int


def wanted(analysis: Analysis) -> dict[str, list[tuple[JobTiming, ...]]]:
    """Per matrix the planner considered resharding: the shard jobs of each run that
    ran all its shards, newest run first; of one it measured by groups of its shards (aiter's
    runners: `Plan.wanted_runs`), each group's shards of a run, one entry a group."""
    out: dict[str, list[tuple[JobTiming, ...]]] = {}
    jobs = analysis.lane.workflow.jobs
    for job_id in dict.fromkeys([*analysis.plan.reshard_candidates, *analysis.plan.wanted_runs]):
        stats = analysis.stats.get(job_id)
        job = jobs.get(job_id)
        if stats is None or job is None:
            continue
        if job_id in analysis.plan.wanted_runs:
            runs = list(reversed(analysis.plan.wanted_runs[job_id]))
        else:
            count = analysis.plan.shard_counts.get(job_id, job.shard_count)
            runs = [shards for shards in reversed(stats.per_run) if len(shards) == count]
        if runs:
            out[job_id] = runs
    return out


def newest_first(plan: dict[str, list[tuple[JobTiming, ...]]]) -> Iterator[tuple[int, str, tuple[JobTiming, ...]]]:
    """The runs of `wanted`, every matrix's newest run first, then the next newest, ...:
    (how many runs newer, the matrix, its shards in that run)."""
    depth = max((len(runs) for runs in plan.values()), default=0)
    for i in range(depth):
        for job_id, runs in plan.items():
            if i < len(runs):
                yield i, job_id, runs[i]


async def read_logs(api: RepoAPI, analysis: Analysis, config: RepoConfig,
                    cache: MutableMapping[Any, Any], now: Callable[[], float] = time.time) -> LogsRead:
    """The logs `wanted` names, within the budget; a line for each matrix whose logs
    could not all be read, and for the runs the budget left unread."""
    plan = wanted(analysis)
    repo = api.repo
    budget = config.logs_max_jobs
    max_bytes = int(config.logs_max_mb * 2**20)
    logs: dict[int, ShardLog] = {}
    problems: list[Unmeasured] = []
    downloads = 0
    limit = asyncio.Semaphore(CONCURRENCY)

    stop: list[str] = []  # a rate limit was met: no more downloads this event

    def known(job: JobTiming) -> ShardLog | Gone | None:
        found = cache.get(("job-log", repo, job.api_id))
        if isinstance(found, Gone) and found.limit is not None and found.limit < max_bytes:
            return None  # too large before; the limit has been raised since
        return found  # type: ignore[no-any-return]

    async def one(job: JobTiming) -> ShardLog | Gone | JobLogError:
        found = known(job)
        if found is not None:
            return found
        async with limit:
            if stop:  # checked once it is this download's turn
                return JobLogError(stop[0], "rate_limited")
            try:
                data = await api.job_log(job.api_id, max_bytes)
            except JobLogError as exc:
                if exc.kind == "rate_limited":
                    stop.append(str(exc))
                if exc.kind not in ("gone", "too_large"):
                    return exc
                found = Gone(str(exc), exc.limit)
                cache[("job-log", repo, job.api_id)] = found
                return found
        if blank(data):  # (a runner that printed nothing, or a body lost on the way: not kept)
            return JobLogError("GitHub sent it empty (did the runner start the step?)")
        try:
            found = await asyncio.to_thread(parse_log, data)
        except LogError as exc:
            found = Gone(f"it cannot be read: {exc}")
        cache[("job-log", repo, job.api_id)] = found
        return found

    failures: dict[str, list[str]] = {job_id: [] for job_id in plan}
    unread: dict[str, int] = {}
    barren: dict[str, tuple[int, ...]] = {}  # matrix -> job ids of its newest logs, which hold no per-file time
    stopped: set[str] = set()  # no readable log in the newest run: the older ones are not read
    for job_id in plan:
        memo = cache.get(("no-file-times", repo, analysis.lane.path, job_id))
        if memo is not None and memo[0] > now():
            barren[job_id] = memo[1]
    for i, job_id, shards in newest_first(plan):
        if job_id in unread or job_id in barren or job_id in stopped:
            continue
        cost = sum(1 for j in shards if known(j) is None)
        if cost > budget:
            unread[job_id] = len(plan[job_id]) - i
            continue
        budget -= cost
        downloads += cost
        results = await asyncio.gather(*(one(j) for j in shards))
        readable = 0
        for job, result in zip(shards, results):
            if isinstance(result, ShardLog):
                logs[job.api_id] = result
                readable += not result.empty
            else:
                reason = result.reason if isinstance(result, Gone) else str(result)
                failures[job_id].append(f"job {job.api_id} (`{job.name}`): {reason}")
        # Nothing read of the newest run: older runs would say no more when its logs hold no per-file time (the
        # runner prints none that foldbot reads) or are gone (an older run's are gone too); not when they failed
        # for now, or came empty (one runner that printed nothing), where an older run's may be read.
        if i == 0 and not readable and not any(isinstance(result, JobLogError) for result in results):
            stopped.add(job_id)
            if not failures[job_id]:
                barren[job_id] = tuple(j.api_id for j in shards)
                cache[("no-file-times", repo, analysis.lane.path, job_id)] = (now() + RECHECK_SECONDS, barren[job_id])
    for job_id in plan:
        found = failures[job_id]
        if found:
            shown = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
            problems.append(Unmeasured(
                job_id,
                f"{len(found)} shard log{'s' if len(found) != 1 else ''} could not be read: {shown}",
                "a log GitHub no longer keeps is gone (retention); a log over the limit needs "
                f"`logs: {{max_mb: N}}` (now {config.logs_max_mb:g}) in .github/foldbot.yml; others are read again next run",
            ))
        elif job_id in barren:
            ids = barren[job_id]
            problems.append(Unmeasured(
                job_id,
                f"its shard logs of the newest run (jobs {', '.join(map(str, ids[:3]))}{', ...' if len(ids) > 3 else ''}) "
                "hold no per-file test time in a format foldbot reads; older runs not read, and its logs are looked "
                f"at again in {RECHECK_SECONDS // 3600} h",
                "print per-file times as one of the README's 'Log formats' (SGLang's run_suite.py does)",
            ))
        if job_id in unread:
            problems.append(Unmeasured(
                job_id,
                f"the logs of {unread[job_id]} of its {len(plan[job_id])} "
                f"{'groups of shards (a run on one runner)' if job_id in analysis.plan.wanted_runs else 'runs'} were not read: "
                f"`logs.max_jobs` ({config.logs_max_jobs}) downloads per event were spent",
                "they are read on later runs (read logs are kept); or raise `logs: {max_jobs: N}` in .github/foldbot.yml",
            ))
    return LogsRead(logs, tuple(problems), downloads)
