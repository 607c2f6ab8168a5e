"""`foldbot fetch`: what an offline analysis of a repository needs, from GitHub.

Into one directory: the lane files (and `.github/foldbot.yml`) at the default branch
head under `repo/`, one run bundle per completed run under `runs/<workflow>/`, and
the shard logs the plan can use under `logs/`, with `fetch.json` saying what is
where. `foldbot analyze --fetched DIR` (or `--repo OWNER/NAME`, which fetches first)
reads them. Every list is read to its last page; a log is read through GitHub's
redirect, without the token, bounded in count and size. Progress goes to `say`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .analysis import analyze
from .api import RepoAPI
from .config import CONFIG_PATH, RepoConfig
from .github import JobLogError
from .joblogs import newest_first, wanted
from .repo import default_branch_head, read_config, read_lanes, workflow_listing
from .timing import JobTiming

MANIFEST = "fetch.json"


class FetchError(ValueError):
    """Nothing to fetch as asked; the message says why."""


@dataclass
class Fetched:
    out: Path
    repo: str
    head: str
    runs: dict[str, list[str]] = field(default_factory=dict)  # workflow path -> bundle files, oldest first
    logs: dict[int, str] = field(default_factory=dict)  # job id -> log file
    failed_logs: dict[int, str] = field(default_factory=dict)  # job id -> why not

    def write_manifest(self) -> None:
        data = {"repo": self.repo, "head": self.head, "runs": self.runs,
                "logs": {str(k): v for k, v in self.logs.items()}, "failed_logs": {str(k): v for k, v in self.failed_logs.items()}}
        (self.out / MANIFEST).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _workflow_path(name: str) -> str:
    return name if "/" in name else f".github/workflows/{name}"


async def fetch(api: RepoAPI, out: Path, *, workflows: Sequence[str] = (), runs: int = 10, max_logs: int = 400,
                max_log_mb: float | None = None, say: Callable[[str], None] = lambda _: None) -> Fetched:
    """`max_log_mb`: the most read of one log (None: the repository's `logs.max_mb`, as the App reads)."""
    branch, head = await default_branch_head(api)
    config = await read_config(api, head)
    listing = await workflow_listing(api, head)
    asked = tuple(_workflow_path(w) for w in workflows)
    present = {str(entry["path"]) for entry in listing if entry.get("type") == "file"}
    missing = [p for p in asked if p not in present]
    if missing:
        raise FetchError(f"{api.repo} has no {', '.join(missing)} on {branch}; its workflows: "
                         f"{', '.join(sorted(present)) or 'none'}")
    lanes = await read_lanes(api, head, config, also=asked, listing=listing)
    chosen = list(asked) or sorted(lanes.files)
    if not chosen:
        raise FetchError(f"{api.repo} has no lane workflow on {branch} (lanes: {', '.join(config.lanes)}); "
                         "name one with --workflow FILE")
    say(f"{api.repo} at {branch} {head[:12]}: {len(lanes.files)} lane files; fetching {', '.join(chosen)}")
    fetched = Fetched(out, api.repo, head)
    repo_root = out / "repo"
    for path, text in {**lanes.files, **lanes.called}.items():  # (the called files: for their jobs' timeout)
        _write(repo_root / path, text)
    config_file = await api.file(CONFIG_PATH, head)
    if config_file is not None:
        _write(repo_root / CONFIG_PATH, config_file[0])
    for path in chosen:
        listed = await api.runs(path.rsplit("/", 1)[-1], status="completed", count=runs)
        ordered = sorted(listed, key=lambda r: (str(r.get("created_at")), r["id"]))
        if not ordered:
            say(f"  {path}: no completed run")
        bundles = []
        for i, run in enumerate(ordered, 1):
            jobs = await api.jobs(run["id"])
            bundle = {"workflow_run": run, "jobs": jobs}
            bundles.append(bundle)
            target = out / "runs" / Path(path).stem / f"{run['id']}.json"
            _write(target, json.dumps(bundle, indent=1) + "\n")
            fetched.runs.setdefault(path, []).append(target.relative_to(out).as_posix())
            say(f"  {path}: run {run['id']} ({len(jobs)} jobs) [{i}/{len(ordered)}]")
        if bundles and max_logs > 0:
            await _fetch_logs(api, fetched, lanes.files, bundles, config, max_logs - len(fetched.logs),
                              int((config.logs_max_mb if max_log_mb is None else max_log_mb) * 2**20), say)
    fetched.write_manifest()
    return fetched


async def _fetch_logs(api: RepoAPI, fetched: Fetched, files: dict[str, str], bundles: list[dict], config: RepoConfig,
                      budget: int, max_bytes: int, say: Callable[[str], None]) -> None:
    """The shard logs of matrices the plan considers resharding, newest run first."""
    jobs: list[JobTiming] = []  # every matrix's newest run first, a run's shards all or none, within the budget
    for _, _, shards in newest_first(wanted(analyze(files, bundles, config))):
        if len(jobs) + len(shards) <= budget:
            jobs.extend(shards)
    for job in jobs:
        try:
            data = await api.job_log(job.api_id, max_bytes)
        except JobLogError as exc:
            fetched.failed_logs[job.api_id] = str(exc)
            say(f"  log of job {job.api_id} ({job.name}): not read: {exc}")
            continue
        target = fetched.out / "logs" / f"{job.api_id}.log"
        _write(target, data)  # as GitHub sent it, as `foldbot analyze --logs` reads it
        fetched.logs[job.api_id] = target.relative_to(fetched.out).as_posix()
        say(f"  log of job {job.api_id} ({job.name}): {len(data) / 1024:.0f} KiB")


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
