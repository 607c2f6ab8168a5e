"""Reading what an analysis needs from GitHub: the repository's config and lane
files at the default branch head, a run with its jobs, the lane's recent history,
and the pull request a run belongs to. Independent reads run concurrently."""

from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import dataclass, field
from typing import Any, Iterable, MutableMapping

import cachetools

from .api import NotText, RepoAPI
from .config import CONFIG_PATH, ConfigError, RepoConfig, parse_config
from .timing import declared_amd
from .plan import shard_callees
from .workflow import WorkflowError, parse_workflow


@dataclass(frozen=True)
class LaneFiles:
    ref: str  # the commit the files were read at
    files: dict[str, str]  # path -> text
    blobs: dict[str, str]  # path -> blob SHA, of the lane files and the `called` ones
    #: The reusable workflows of the repository that lane jobs hand a shard list (`shard_callees`):
    #: path -> text, read for their jobs' timeout only.
    called: dict[str, str] = field(default_factory=dict)


async def default_branch_head(api: RepoAPI) -> tuple[str, str]:
    """The default branch and its head commit SHA."""
    branch = str((await api.info())["default_branch"])
    return branch, await api.branch_head(branch)


_NONE = ("none",)  # a cached "there is no such file"


async def read_config(api: RepoAPI, ref: str, cache: MutableMapping[Any, Any] | None = None) -> RepoConfig:
    """`.github/foldbot.yml` at `ref` (a commit SHA); the defaults when there is none (a
    broken one raises ConfigError). What a commit holds never changes: kept per commit,
    so a repository without the file is not asked again until its default branch moves."""
    key = ("config", api.repo, ref)
    found = cache.get(key) if cache is not None else None
    if found is None:
        try:
            read = await api.file(CONFIG_PATH, ref)
        except NotText as exc:
            raise ConfigError(f"not UTF-8 text ({exc.where}): save it as UTF-8") from None
        found = read[0] if read else _NONE
        if cache is not None:
            cache[key] = found
    return parse_config(None if found is _NONE else found)


async def workflow_listing(api: RepoAPI, ref: str) -> list[dict[str, Any]]:
    """The entries of `.github/workflows` at `ref`, each with its blob SHA."""
    return await api.directory(".github/workflows", ref)


async def read_lanes(api: RepoAPI, ref: str, config: RepoConfig, also: tuple[str, ...] = (),
                     listing: list[dict[str, Any]] | None = None,
                     cache: MutableMapping[Any, Any] | None = None) -> LaneFiles:
    """Every lane workflow file at `ref` (plus `also`), with its blob SHA. A file whose
    blob was read before is not read again (`cache`)."""
    if listing is None:
        listing = await workflow_listing(api, ref)
    entries = sorted(
        (str(entry["path"]), str(entry.get("sha") or "")) for entry in listing
        if entry.get("type") == "file" and (config.is_lane(str(entry["path"])) or entry["path"] in also)
    )

    async def text_of(path: str, blob: str) -> tuple[str, str] | None:
        key = ("blob", api.repo, blob)
        known = cache.get(key) if cache is not None and blob else None
        if known is not None:
            return known, blob
        try:
            item = await api.file(path, ref)
        except NotText as exc:
            raise WorkflowError(str(exc)) from None
        if item is not None and cache is not None:
            cache[("blob", api.repo, item[1])] = item[0]
        return item

    found = await asyncio.gather(*(text_of(path, blob) for path, blob in entries))
    files, blobs = {}, {}
    for (path, _), item in zip(entries, found):
        if item is not None:
            files[path], blobs[path] = item
    listed = {str(entry["path"]): str(entry.get("sha") or "") for entry in listing if entry.get("type") == "file"}
    callees: list[str] = []
    if any(may_pass_shards(text) for text in files.values()):  # (parsed off the event loop: a lane may be large)
        callees = sorted(path for path in await asyncio.to_thread(shard_callee_paths, files) if path in listed)

    async def called_text(path: str) -> tuple[str, str] | None:
        try:
            return await text_of(path, listed[path])
        except WorkflowError:  # not text: the report says its jobs' timeout is unknown
            return None

    read = await asyncio.gather(*(called_text(path) for path in callees))
    # (their blobs beside the lanes': a report, and the patch approved from it, rest on them too)
    blobs.update((path, item[1]) for path, item in zip(callees, read) if item is not None)
    return LaneFiles(ref, files, blobs, {path: item[0] for path, item in zip(callees, read) if item is not None})


def may_pass_shards(text: str) -> bool:
    """Whether a lane file may hand a reusable workflow its shards (`shard_callees`): a shard list
    names `num_shards`, a shard count as JSON its `"arr"`. A file with neither is not parsed for it."""
    return "num_shards" in text or '"arr' in text  # (`'{"arr":...}'`, or in double quotes `"{\\"arr\\":...}"`)


def shard_callee_paths(files: dict[str, str]) -> set[str]:
    """The `shard_callees` of the lane files (path -> text) that are not lanes themselves. A file
    that may pass none (`may_pass_shards`) is not parsed; one that does not parse has none (its
    analysis says why)."""
    out: set[str] = set()
    for path, text in files.items():
        if may_pass_shards(text):
            try:
                out.update(shard_callees(parse_workflow(text, path)))
            except WorkflowError:
                continue
    return out - set(files)


#: At most this many workflow files whose name says AMD are read per repository (`amd_workflows`).
AMD_FILES_READ = 8


async def amd_workflows(api: RepoAPI, ref: str, config: RepoConfig,
                        listing: list[dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Workflow files at `ref` that are not lanes but whose jobs name AMD runners (`runs-on`,
    `declared_amd`): path -> those jobs' ids. Only files whose name says AMD as a runner label
    would (`amd_runner_pattern`: `rocm.yml`, `amd-mi200.yml`, `rocm-mi300.yml`) are read (a few
    calls a repository, not one for each of its workflows); one that cannot be read or parsed
    is passed over."""
    if listing is None:
        listing = await workflow_listing(api, ref)
    paths = sorted(str(e["path"]) for e in listing if e.get("type") == "file" and not config.is_lane(str(e["path"]))
                   and str(e["path"]).endswith((".yml", ".yaml")) and config.is_amd_runner(str(e["path"]).rsplit("/", 1)[-1]))
    found: dict[str, list[str]] = {}
    for path in paths[:AMD_FILES_READ]:
        try:
            item = await api.file(path, ref)
            workflow = parse_workflow(item[0], path) if item is not None else None
        except (NotText, WorkflowError):
            continue
        jobs = [job.id for job in workflow.jobs.values() if declared_amd(job, config, workflow)] if workflow else []
        if jobs:
            found[path] = jobs
    return found


async def run_bundle(api: RepoAPI, run: dict[str, Any], cache: cachetools.LRUCache[Any, Any]) -> dict[str, Any]:
    """A run with the jobs of its attempt (all pages). A completed attempt never changes: cached.
    (Re-run since, the run's latest jobs are the new attempt's, maybe not started: then this
    attempt's own are read.)"""
    key = ("jobs", api.repo, run["id"], run.get("run_attempt"))
    jobs = cache.get(key) if run.get("status") == "completed" else None
    if jobs is None:
        jobs = await api.jobs(run["id"])
        attempt = int(run.get("run_attempt") or 1)
        if any(int(job.get("run_attempt") or 1) > attempt for job in jobs):
            jobs = await api.jobs(run["id"], attempt)
        if run.get("status") == "completed":
            cache[key] = jobs
    return {"workflow_run": run, "jobs": jobs}


def _attempt(run: dict[str, Any]) -> int:
    value = run.get("run_attempt")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def run_order(run: dict[str, Any]) -> tuple[str, int]:
    """A run's place among a workflow's runs: by creation, then id."""
    return str(run.get("created_at")), int(run["id"])


async def history(api: RepoAPI, run: dict[str, Any], count: int,
                  cache: cachetools.LRUCache[Any, Any]) -> list[dict[str, Any]]:
    """The last `count` completed runs of the run's workflow, the run itself last,
    oldest first, each with its jobs. A late delivery of an older attempt of a run that
    GitHub lists with a newer completed attempt gets that attempt (the run as it is now)."""
    listed = await api.runs(run["workflow_id"], status="completed", count=count)
    same = next((r for r in listed if r["id"] == run["id"]), None)
    if same is not None and _attempt(same) > _attempt(run):
        run = same
    # (a run waiting for a maintainer's approval is listed as completed, with no job: nothing to read)
    runs = [r for r in listed if r["id"] != run["id"] and r.get("conclusion") != "action_required"][: max(count - 1, 0)]
    runs = sorted(runs, key=run_order) + [run]
    return list(await asyncio.gather(*(run_bundle(api, r, cache) for r in runs)))


async def pull_requests_of_run(api: RepoAPI, run: dict[str, Any]) -> list[int]:
    """The open PRs a run tested. `workflow_run.pull_requests` is empty for fork PRs:
    then look the PR up by the fork's `owner:branch` and match the head SHA."""
    numbers = [int(pr["number"]) for pr in run.get("pull_requests") or [] if isinstance(pr, dict) and pr.get("number")]
    if numbers or run.get("event") not in ("pull_request", "pull_request_target"):
        return numbers
    head_repo = run.get("head_repository") or {}
    owner = (head_repo.get("owner") or {}).get("login")
    branch = run.get("head_branch")
    if not owner or not branch:
        return []
    pulls = await api.pulls_from(str(owner), str(branch))
    return [int(p["number"]) for p in pulls if (p.get("head") or {}).get("sha") == run.get("head_sha")]


#: The most files GitHub lists of a pull request ("Responses include a maximum of 3000 files").
PULL_FILES_LISTED = 3000


def touches_ci(files: list[tuple[str, ...]], config: RepoConfig, called: Iterable[str] = ()) -> bool:
    """Whether a PR changes CI files (`RepoAPI.pull_files`: each file's paths, a renamed one's old
    path too): a lane workflow, a reusable workflow the lanes call with their shards (`called`: the
    report rests on it too), or a path of `ci_paths`. A PR of more files than GitHub lists may
    change one past them: taken as changing CI files."""
    called = set(called)
    return len(files) >= PULL_FILES_LISTED or any(
        config.is_lane(p) or p in called or any(fnmatch.fnmatchcase(p, g) for g in config.ci_paths)
        for paths in files for p in paths)


__all__ = ["LaneFiles", "default_branch_head", "history", "pull_requests_of_run", "read_config", "read_lanes",
           "run_bundle", "run_order", "touches_ci", "workflow_listing"]
