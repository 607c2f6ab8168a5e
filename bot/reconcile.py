"""Reconciling: a lane run whose `workflow_run` delivery never arrived (GitHub does not
redeliver on its own, and a delivery can be lost before foldbot ever saw it) is found
and reported all the same.

For each repository of each installation: the latest completed run of each lane is
compared with the dashboard issue's state block, which names the runs reported of every
lane (`ReportState.reported`). A run is missed when the dashboard has no state, or its
state does not name that run and attempt. A missed run is reported as its delivery
would have been (`report`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable, Collection

import aiohttp

from .api import RepoAPI
from .config import ConfigError, RepoConfig
from .github import GitHubError, GitHubPool
from .publish import ISSUES_OFF, find_dashboard, issues_off, read_report
from .repo import read_config, read_lanes, run_order, workflow_listing
from .reporting import is_error_body
from .states import ReportState
from .workflow import WorkflowError

logger = logging.getLogger("foldbot.reconcile")


#: How the id of a delivery a reconciling round made begins.
RECONCILED = "reconcile-"


@dataclass(frozen=True)
class Missed:
    repo: str
    installation_id: int
    run: dict[str, Any]
    default_branch: str
    #: The delivery that found it, when not a reconciling round (an installation event).
    found_by: str = ""
    #: Why a run reported already is reported again (the dashboard is out of date: `out_of_date`),
    #: with the default branch head it was found at; "lost-<record>": reported before, and the record
    #: of it lost since (`lost`); "": its delivery never came.
    again: str = ""
    #: What the dashboard's state records of the runs reported, in short (`record_of`).
    record: str = ""

    @property
    def delivery_id(self) -> str:
        """The id it is journaled under: the same in every round and every replica, so one
        missed run is reported once (a run reported again: once per default branch head).
        An installation event's own (`found_by`): what the rounds could not report before it
        (a permission missing, the installation suspended) is reported after it, and a copy
        of that event queues nothing more."""
        return RECONCILED + "-".join(part for part in (str(self.run["id"]), str(self.run.get("run_attempt") or 1),
                                          self.again, self.found_by) if part)

    def lost(self) -> Missed:
        """The run again, when it was reported once under `delivery_id` and the dashboard does not
        name it now: two replicas wrote the dashboard at the same moment, each from the body it read
        (GitHub has no compare-and-set for an issue), and the later write (another run's report)
        dropped it. Its id names the record of runs reported as the dashboard shows it, so the run
        is reported once more for each record that lacks it: a report that does not count it (a
        bug, a refusal) leaves the record as it was, and is not made again."""
        return replace(self, again=f"lost-{self.record}", found_by="")

    def payload(self) -> dict[str, Any]:
        """The `workflow_run` completed delivery GitHub would have sent for it."""
        return {"action": "completed", "workflow_run": self.run,
                "workflow": {"id": self.run.get("workflow_id"), "path": self.run.get("path")},
                "repository": {"full_name": self.repo, "default_branch": self.default_branch},
                "installation": {"id": self.installation_id}}


class NoDashboard(Exception):
    """The repository has no dashboard issue to reconcile with (Issues are turned off)."""


def missed(run: dict[str, Any], lane: str, dashboard: dict[str, Any] | None) -> bool:
    """Whether the dashboard's state does not name this completed run (and attempt) of `lane`
    among those reported: whichever lane the dashboard shows, and whatever runs that
    report's history read (a lost run newer than the run reported is among those)."""
    return _missed(run, lane, dashboard, read_report(dashboard.get("body") or "") if dashboard else None)


def _missed(run: dict[str, Any], lane: str, dashboard: dict[str, Any] | None, state: ReportState | None) -> bool:
    """`missed`, with the dashboard's state read (once for all of a repository's lanes)."""
    if run.get("conclusion") == "action_required":  # waiting for approval, no job ran: nothing to report yet
        return False
    if dashboard is None or state is None:
        return True
    if state.reported or state.error:
        return (int(run["id"]), int(run.get("run_attempt") or 1)) not in state.reported.get(lane, ())
    # written by a foldbot before it kept the runs reported: the report of that lane names its
    # runs; another lane's, when it was written (the next report keeps them: `dashboard_body`)
    if state.workflow == lane:
        return int(run["id"]) not in state.runs
    return str(run.get("updated_at") or "") > str(dashboard.get("updated_at") or "")


_AGAIN = re.compile(re.escape(RECONCILED) + r"\d+-\d+-((?:error|lanes|lost)-[0-9a-f]*)")


def record_of(state: ReportState | None) -> str:
    """The runs the dashboard's state records reported, of every lane, in 12 hex digits."""
    runs = sorted(state.reported.items()) if state is not None else []
    return hashlib.sha256(repr(runs).encode()).hexdigest()[:12]


def again_of(delivery_id: str) -> str:
    """Of a delivery a reconciling round (or an installation's catch-up) made to report a run
    again (`Missed.again`): why and at which head; "" for any other delivery."""
    found = _AGAIN.match(delivery_id)
    return found.group(1) if found else ""


def remembered_as(delivery_id: str) -> str:
    """What this process remembers a report of a run by, beside the run and attempt: "" for a
    delivery of GitHub's; for one a reconciling round or an installation's catch-up made,
    "reconciled" and why it is reported again, if it is (`Missed.again`). Such a delivery comes
    because the dashboard does not name the run (a lost write, an error that did not count it):
    whatever this process remembers of GitHub's delivery, it is reported; a round's and a
    catch-up's of one run share a key, so it is reported once."""
    if not delivery_id.startswith(RECONCILED):
        return ""
    again = again_of(delivery_id)
    return f"reconciled-{again}" if again else "reconciled"


#: What an out-of-date dashboard shows, by `out_of_date`'s answer (the log's words).
OUT_OF_DATE = {"error": "says what foldbot could not analyse, at an older default branch head",
               "lanes": "shows a workflow that is no lane now",
               "lost": "no longer names a run reported there (two replicas writing it at the same moment may be why)"}


def out_of_date(state: ReportState | None, head: str, lanes: Collection[str]) -> str | None:
    """Why a dashboard whose runs were all reported no longer shows what it should: it says what
    foldbot could not analyse at another default branch head than `head` (the config or a lane
    file fixed since: "error"), or it shows a workflow that is not among `lanes` now (dropped
    from the config's lanes, or its file gone: "lanes"). None: it is as it should be."""
    if state is None:
        return None
    if state.error:
        return "error" if state.base_sha != head else None
    if state.workflow not in lanes or any(lane not in lanes for lane in state.lanes):
        return "lanes"
    return None


async def find_missed(pool: GitHubPool, login: str, *, log: Callable[[str], None] = lambda _: None) -> list[Missed]:
    """Every missed lane run of every installed repository (an installation or a repository
    that cannot be read is logged and skipped: the next round tries again)."""
    out: list[Missed] = []
    for installation in await pool.installations():
        try:
            out += await missed_in_installation(pool, int(installation["id"]), login, log=log)
        except GitHubError as exc:  # suspended, or its token refused: the others are still read
            log(f"installation {installation['id']}: not reconciled: {exc}")
    return out


async def missed_in_installation(pool: GitHubPool, installation_id: int, login: str, *,
                                 only: Collection[str] | None = None, no_lanes: NoLanes | None = None,
                                 broken: Broken | None = None, who: str | None = None,
                                 log: Callable[[str], None] = lambda _: None) -> list[Missed]:
    """The missed lane runs of an installation's repositories (`only`: of those named, in any
    case; `no_lanes`: called for each that has no lane file; `broken`: for each whose config or
    lane file cannot be read, instead of a log line). GitHubError: its repositories cannot be
    listed. `who`: the installation, in its log lines."""
    who = who or f"installation {installation_id}"
    repositories = await pool.installation_repositories(installation_id)
    if only is not None:
        wanted = {name.lower() for name in only}
        repositories = [r for r in repositories if str(r["full_name"]).lower() in wanted]
        if missing := sorted(wanted - {str(r["full_name"]).lower() for r in repositories}):
            log(f"{who}: not among its repositories now (taken out since?), so not looked at: {', '.join(missing)}")
    archived = [str(r["full_name"]) for r in repositories if r.get("archived")]
    if archived:  # read-only: a report could not be written (each try would fail the same way)
        log(f"{who}: not reconciled, archived (read-only): {', '.join(archived)}")
    out: list[Missed] = []
    for repository in repositories:
        if repository.get("archived"):
            continue
        api = RepoAPI(pool.for_installation(installation_id), str(repository["full_name"]))
        try:
            out += await _missed_in(api, installation_id, str(repository["default_branch"]), login, no_lanes)
        except (ConfigError, WorkflowError) as exc:  # (a lane run's report says it on the dashboard)
            if broken is None:
                log(f"{api.repo}: not reconciled: {exc}")
                continue
            try:
                await broken(api, exc)
            except GitHubError as again:  # (the other repositories are still looked at)
                log(f"{api.repo}: not reconciled: {exc}; and the dashboard that says so could not be written: {again}")
        except (GitHubError, NoDashboard) as exc:
            log(f"{api.repo}: not reconciled: {exc}")
        except (aiohttp.ClientError, asyncio.TimeoutError):  # GitHub unreachable: the round ends, said once
            raise
        except Exception as exc:  # a bug: this repository's, not the other repositories' round
            logger.exception("%s: not reconciled: %r", api.repo, exc)
    return out


#: What to do with a repository that has no lane file: (its API, default branch head, config, workflow listing).
NoLanes = Callable[[RepoAPI, str, RepoConfig, list[dict[str, Any]]], Awaitable[None]]
#: What to do with a repository whose config or lane file cannot be read: (its API, why).
Broken = Callable[[RepoAPI, Exception], Awaitable[None]]


async def _missed_in(api: RepoAPI, installation_id: int, branch: str, login: str,
                     no_lanes: NoLanes | None = None) -> list[Missed]:
    try:
        head = await api.branch_head(branch)
    except GitHubError as exc:
        if exc.status == 409:  # "Git Repository is empty.": no commit, no lane, nothing to say
            return []
        raise
    config = await read_config(api, head)
    listing = await workflow_listing(api, head)
    lanes = await read_lanes(api, head, config, listing=listing)
    if not lanes.files:
        if no_lanes is not None:
            await no_lanes(api, head, config, listing)
        return []
    try:
        dashboard = await find_dashboard(api, login)
    except GitHubError as exc:
        if issues_off(exc):  # nothing holds which runs were reported: not looked for (the log says why)
            raise NoDashboard(f"{ISSUES_OFF}; with no dashboard to hold which runs were reported, missed runs are "
                              "not looked for") from exc
        raise
    body = str(dashboard.get("body") or "") if dashboard else ""
    recorded = read_report(body) if dashboard else None  # (read once for every lane)
    found: dict[str, Missed] = {}
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(lanes.files):
        runs = await api.runs(path.rsplit("/", 1)[-1], status="completed", count=1)
        if runs and runs[0].get("conclusion") != "action_required":
            latest[path] = runs[0]
        if runs and _missed(runs[0], path, dashboard, recorded):
            found[path] = Missed(api.repo, installation_id, runs[0], branch, record=record_of(recorded))
    state = recorded
    if state is not None and not state.error and is_error_body(body):  # written before errors were marked: found at
        state = replace(state, error=True, base_sha="")               # a head not known
    why = out_of_date(state, head, lanes.files)
    if why is not None and latest:  # one lane's latest run writes the dashboard anew: the lane it showed, if still one
        assert state is not None   # (in place of that lane's missed run, if any: this id is once per head)
        lane = state.workflow if state.workflow in latest else max(latest, key=lambda p: run_order(latest[p]))
        found[lane] = Missed(api.repo, installation_id, latest[lane], branch, again=f"{why}-{head[:12]}")
    return list(found.values())


async def reconcile(pool: GitHubPool, report: Callable[[Missed], Awaitable[None]],
                    log: Callable[[str], None] = lambda _: None) -> list[Missed]:
    """Find the missed runs and report each; returns them."""
    found = await find_missed(pool, await pool.bot_login(), log=log)
    for item in found:
        log(f"{item.repo}: run {item.run['id']} of {item.run.get('path')} was never reported; reporting it now")
        await report(item)
    return found
