"""Reading what an analysis needs from GitHub: the repository's config and lane
files at the default branch head, a run with its jobs, the lane's recent history,
and the pull request a run belongs to. Independent reads run concurrently."""

from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import cachetools

from .config import CONFIG_PATH, RepoConfig, parse_config
from .github import GitHub, GitHubError


@dataclass(frozen=True)
class LaneFiles:
    ref: str  # the commit the files were read at
    files: dict[str, str]  # path -> text
    blobs: dict[str, str]  # path -> blob SHA


async def default_branch_head(gh: GitHub, repo: str) -> tuple[str, str]:
    """The default branch and its head commit SHA."""
    info = await gh.get(f"/repos/{repo}")
    branch = str(info["default_branch"])
    ref = await gh.get(f"/repos/{repo}/git/ref/heads/{quote(branch, safe='/')}")
    return branch, str(ref["object"]["sha"])


async def read_config(gh: GitHub, repo: str, ref: str) -> RepoConfig:
    """`.github/foldbot.yml` at `ref`; the defaults when there is none (a broken one raises ConfigError)."""
    found = await gh.file(repo, CONFIG_PATH, ref)
    return parse_config(found[0] if found else None)


async def read_lanes(gh: GitHub, repo: str, ref: str, config: RepoConfig, also: tuple[str, ...] = ()) -> LaneFiles:
    """Every lane workflow file at `ref` (plus `also`), with its blob SHA."""
    try:
        listing = await gh.get(f"/repos/{repo}/contents/.github/workflows?ref={quote(ref, safe='')}")
    except GitHubError as exc:
        if exc.status == 404:
            return LaneFiles(ref, {}, {})
        raise
    paths = sorted(
        str(entry["path"]) for entry in listing
        if entry.get("type") == "file" and (config.is_lane(str(entry["path"])) or entry["path"] in also)
    )
    found = await asyncio.gather(*(gh.file(repo, path, ref) for path in paths))
    files, blobs = {}, {}
    for path, item in zip(paths, found):
        if item is not None:
            files[path], blobs[path] = item
    return LaneFiles(ref, files, blobs)


async def run_bundle(gh: GitHub, repo: str, run: dict[str, Any], cache: cachetools.LRUCache[Any, Any]) -> dict[str, Any]:
    """A run with its latest jobs (all pages). A completed run never changes: cached."""
    key = ("jobs", repo, run["id"], run.get("run_attempt"))
    jobs = cache.get(key) if run.get("status") == "completed" else None
    if jobs is None:
        jobs = await gh.get_all(f"/repos/{repo}/actions/runs/{run['id']}/jobs?filter=latest&per_page=100",
                                iterable_key="jobs")
        if run.get("status") == "completed":
            cache[key] = jobs
    return {"workflow_run": run, "jobs": jobs}


async def history(gh: GitHub, repo: str, run: dict[str, Any], count: int,
                  cache: cachetools.LRUCache[Any, Any]) -> list[dict[str, Any]]:
    """The last `count` completed runs of the run's workflow, the run itself last,
    oldest first, each with its jobs."""
    listing = await gh.get(
        f"/repos/{repo}/actions/workflows/{run['workflow_id']}/runs?status=completed&per_page={min(count, 100)}"
    )
    runs = [r for r in listing.get("workflow_runs", []) if r["id"] != run["id"]][: max(count - 1, 0)]
    runs = sorted(runs, key=lambda r: (str(r.get("created_at")), r["id"])) + [run]
    return list(await asyncio.gather(*(run_bundle(gh, repo, r, cache) for r in runs)))


async def pull_requests_of_run(gh: GitHub, repo: str, run: dict[str, Any]) -> list[int]:
    """The open PRs a run tested. `workflow_run.pull_requests` is empty for fork PRs:
    then look the PR up by the fork's `owner:branch` and match the head SHA."""
    numbers = [int(pr["number"]) for pr in run.get("pull_requests") or [] if pr.get("number")]
    if numbers or run.get("event") not in ("pull_request", "pull_request_target"):
        return numbers
    head_repo = run.get("head_repository") or {}
    owner = (head_repo.get("owner") or {}).get("login")
    branch = run.get("head_branch")
    if not owner or not branch:
        return []
    pulls = await gh.get_all(f"/repos/{repo}/pulls?state=open&head={quote(f'{owner}:{branch}', safe=':')}&per_page=100")
    return [int(p["number"]) for p in pulls if (p.get("head") or {}).get("sha") == run.get("head_sha")]


async def changed_files(gh: GitHub, repo: str, number: int) -> list[str]:
    files = await gh.get_all(f"/repos/{repo}/pulls/{number}/files?per_page=100")
    return [str(f["filename"]) for f in files]


def touches_ci(paths: list[str], config: RepoConfig) -> bool:
    """Whether a PR changes CI files: a lane workflow, or a path of `ci_paths`."""
    return any(config.is_lane(p) or any(fnmatch.fnmatchcase(p, g) for g in config.ci_paths) for p in paths)


__all__ = ["LaneFiles", "changed_files", "default_branch_head", "history", "pull_requests_of_run",
           "read_config", "read_lanes", "run_bundle", "touches_ci"]
