"""Writing reports: exactly one PR comment and one dashboard issue per repository,
each found by foldbot's hidden marker **and** its own login, created once, edited
afterwards, and not written at all when the body is unchanged."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Callable

from .api import RepoAPI
from .github import NOT_ACCESSIBLE, GitHubError
from .replies import REPLY_MARKER
from .report import MARKER, STATE_CLOSE, STATE_OPEN
from .states import CommentReply, ReportState, StateError

log = logging.getLogger("foldbot.publish")

DASHBOARD_TITLE = "foldbot: AMD CI setup report"
DASHBOARD_LABEL = "foldbot"


@dataclass(frozen=True)
class Written:
    kind: str  # "comment" | "issue"
    number: int  # comment id or issue number
    action: str  # "created" | "updated" | "unchanged"
    body: str
    url: str | None = None  # where people read it


def issues_off(exc: GitHubError) -> bool:
    """GitHub's answer to the issues API of a repository with Issues turned off (410 Gone):
    it has no dashboard issue (its pull requests' conversations still take comments)."""
    return exc.status == 410


def issues_refused(exc: GitHubError, repo: str) -> bool:
    """GitHub's 403 "Resource not accessible by integration" to the repository's issues API (not a
    comment's): the Issues permission not granted (an installation that has not accepted the App's
    raised permissions), or the repository taken out of the installation (`bot.github.unreachable`
    tells the two apart)."""
    prefix = f"/repos/{repo.lower()}/issues"
    path = exc.path.lower()
    return (exc.status == 403 and NOT_ACCESSIBLE in exc.message.lower() and path.startswith(prefix)
            and "/comments" not in path[len(prefix):])


#: What a repository with Issues turned off gets instead of a dashboard, in logs and replies.
ISSUES_OFF = ("Issues are turned off in this repository, so it has no dashboard issue: the reports are the pull "
              "requests' comments (turn Issues on in Settings > General > Features for the dashboard)")
#: ... and one whose installation lacks the Issues permission (review86 F05: no report was written at all).
NO_ISSUES_PERMISSION = ("the App's installation is not granted the Issues permission here, so there is no dashboard "
                        "issue: the reports are the pull requests' comments (an owner accepts the App's permissions "
                        "under Settings > GitHub Apps > foldbot, or grants Issues: Read and write)")


def is_ours(item: dict[str, Any], login: str, marker: str = MARKER) -> bool:
    """Written by foldbot itself and carrying its marker: nobody else's text counts."""
    user = item.get("user") or {}
    return user.get("login") == login and marker in str(item.get("body") or "")


async def _our_comments(api: RepoAPI, number: int, login: str, marker: str) -> list[dict[str, Any]]:
    comments = await api.comments(number)
    return sorted((c for c in comments if is_ours(c, login, marker)), key=lambda c: int(c["id"]))


async def find_comment(api: RepoAPI, number: int, login: str, marker: str = MARKER) -> dict[str, Any] | None:
    """foldbot's report comment on a PR: its oldest, should there ever be two."""
    ours = await _our_comments(api, number, login, marker)
    return ours[0] if ours else None


def _duplicates(created: dict[str, Any], listed: list[dict[str, Any]], key: str,
                text: str) -> tuple[dict[str, Any], list[int]]:
    """Of what this process just created and foldbot's copies listed after it (`key`: their
    id), the oldest, which stays, and the younger ones to remove: the one created, and those
    with its text (another process's copy of other text is that process's to remove)."""
    copies = {int(c[key]): c for c in [created, *listed]}
    oldest = copies[min(copies)]
    return oldest, [n for n in sorted(copies) if n != int(oldest[key])
                    and (n == int(created[key]) or copies[n].get("body") == text)]


async def report_comments(api: RepoAPI, number: int, login: str) -> list[dict[str, Any]]:
    """foldbot's report comments on a PR, oldest first: one, but for a copy that escaped its check."""
    return await _our_comments(api, number, login, MARKER)


async def upsert_comment(api: RepoAPI, number: int, body: str, login: str,
                         found: list[dict[str, Any]] | None = None) -> Written:
    """(`found`: `report_comments`, looked up by the caller just before.) A younger copy of the
    report found here is removed: one a killed process had on its way, which GitHub carried out
    after another process's check (each run would else edit the oldest alone, and leave it)."""
    ours = found if found is not None else await report_comments(api, number, login)
    existing = ours[0] if ours else None
    for younger in ours[1:]:  # (never the one any process edits: that is the oldest)
        if await api.delete_comment(younger["id"]):
            log.warning("%s#%d: comment %s removed, a second report beside %s", api.repo, number, younger["id"],
                        existing["id"] if existing else None)
    if existing is None:
        created = await api.create_comment(number, body)
        # Another foldbot process may have found none at the same moment and created one too,
        # or GitHub made this one more than once (it answered 5xx, and the call was sent again):
        # the oldest stays; the younger copies are removed (`_duplicates`).
        oldest, younger = _duplicates(created, await _our_comments(api, number, login, MARKER), "id", body)
        for duplicate in younger:
            await api.delete_comment(duplicate)
            log.warning("%s#%d: comment %s removed, a duplicate of %s written at the same time", api.repo,
                        number, duplicate, oldest["id"])
        if int(oldest["id"]) == int(created["id"]):
            return Written("comment", int(created["id"]), "created", body, created.get("html_url"))
        existing = oldest
    if existing.get("body") == body:
        return Written("comment", int(existing["id"]), "unchanged", body, existing.get("html_url"))
    await api.update_comment(existing["id"], body)
    return Written("comment", int(existing["id"]), "updated", body, existing.get("html_url"))


async def _our_dashboards(api: RepoAPI, login: str) -> list[dict[str, Any]]:
    """foldbot's dashboard issues, open or closed, that carry its marker: by its label; with none so
    labelled, among all foldbot opened (a maintainer took the label off, or deleted it: a second
    dashboard had been opened, its record of reported runs empty), each labelled again."""
    async def dashboards(label: str | None) -> list[dict[str, Any]]:
        return [i for i in await api.issues(label=label, creator=login, state="all")
                if is_ours(i, login) and not i.get("pull_request")]

    ours = await dashboards(DASHBOARD_LABEL)
    if ours:
        return ours
    unlabelled = await dashboards(None)
    for issue in unlabelled:
        await api.add_labels(int(issue["number"]), [DASHBOARD_LABEL])
        log.warning("%s: dashboard issue #%s had lost its %r label; labelled again", api.repo, issue["number"],
                    DASHBOARD_LABEL)
    return unlabelled


async def find_dashboard(api: RepoAPI, login: str) -> dict[str, Any] | None:
    """foldbot's dashboard issue: the oldest open one, should there ever be two; else the
    latest closed one (a maintainer closed it: foldbot goes on editing it, closed, and does not
    open another each run). A duplicate foldbot closed no longer carries the marker."""
    return _dashboard_of(await _our_dashboards(api, login))


def _dashboard_of(ours: list[dict[str, Any]]) -> dict[str, Any] | None:
    opened = [i for i in ours if i.get("state") != "closed"]
    if opened:
        return min(opened, key=lambda i: int(i["number"]))
    return max(ours, key=lambda i: int(i["number"])) if ours else None


async def _close_duplicate(api: RepoAPI, duplicate: int, oldest: int) -> None:
    """An issue cannot be deleted: a younger dashboard is closed as a duplicate, pointing at the
    oldest (with no marker: never found again)."""
    await api.update_issue(duplicate, state="closed", state_reason="not_planned",
                           body=f"A duplicate of #{oldest}, written at the same time; foldbot reports there.")
    log.warning("%s: dashboard issue #%s closed, a duplicate of #%s written at the same time", api.repo, duplicate,
                oldest)


async def upsert_dashboard(api: RepoAPI, body: str | Callable[[dict[str, Any] | None], str], login: str, *,
                           found: tuple[dict[str, Any] | None] | None = None) -> Written:
    """Write the dashboard issue (`body`: its text, or made from the issue found, None if none;
    `found`: what `find_dashboard` just gave, so it is not asked again)."""
    compose = body if callable(body) else (lambda _: body)
    if found is not None:
        existing = found[0]
    else:
        ours = await _our_dashboards(api, login)
        existing = _dashboard_of(ours)
        # a younger open copy (a killed process's, which GitHub made after another's check): closed, as below
        for duplicate in [i for i in ours if i.get("state") != "closed" and existing is not None
                          and int(i["number"]) > int(existing["number"])]:
            await _close_duplicate(api, int(duplicate["number"]), int(existing["number"]))
    if existing is None:
        text = compose(None)
        created = await api.create_issue(DASHBOARD_TITLE, text, [DASHBOARD_LABEL])
        # As for comments (`_duplicates`); an issue cannot be deleted, so each younger copy is
        # closed as a duplicate, pointing at the oldest (with no marker: never found again).
        opened = [i for i in await _our_dashboards(api, login) if i.get("state") != "closed"]
        oldest, younger = _duplicates(created, opened, "number", text)
        for duplicate in younger:
            await _close_duplicate(api, duplicate, int(oldest["number"]))
        if int(oldest["number"]) == int(created["number"]):
            return Written("issue", int(created["number"]), "created", text, created.get("html_url"))
        existing = oldest
    text = compose(existing)
    if existing.get("body") == text:
        return Written("issue", int(existing["number"]), "unchanged", text, existing.get("html_url"))
    await api.update_issue(existing["number"], body=text)
    return Written("issue", int(existing["number"]), "updated", text, existing.get("html_url"))


_STATE = re.compile(re.escape(STATE_OPEN) + r"(\{.*?\})" + re.escape(STATE_CLOSE), re.S)


def read_state(body: str) -> dict[str, Any] | None:
    """The state block of a report body (only ever read from foldbot's own comments):
    the last one, where foldbot writes it, whatever text came before."""
    matches = _STATE.findall(body or "")
    if not matches:
        return None
    match = matches[-1]
    try:
        state = json.loads(match)
    except (ValueError, RecursionError):
        return None
    return state if isinstance(state, dict) else None


def with_state(body: str, block: str) -> str:
    """The report body with its (last) state block replaced by `block`, its text as it is."""
    matches = list(_STATE.finditer(body))
    if not matches:
        return body
    last = matches[-1]
    return body[:last.start()] + block + body[last.end():]


def read_report(body: str) -> ReportState | None:
    """The typed state of one of foldbot's reports; None when it has none it can read."""
    try:
        return ReportState.from_json(read_state(body))
    except StateError:
        return None


async def our_replies(api: RepoAPI, number: int, login: str) -> list[tuple[dict[str, Any], CommentReply]]:
    """foldbot's own replies on a PR with their states, oldest first."""
    found = [(c, read_reply(c.get("body") or "")) for c in await api.comments(number) if is_ours(c, login, REPLY_MARKER)]
    return [(c, state) for c, state in found if state is not None]


def read_reply(body: str) -> CommentReply | None:
    """The typed state of one of foldbot's replies; None when it has none it can read."""
    try:
        return CommentReply.from_json(read_state(body))
    except StateError:
        return None


STALE_PREFIX = "> **Stale:** "


def mark_stale(body: str, old_sha: str, new_sha: str) -> str:
    """The comment with a first line saying it describes an older commit than the PR's head. (It
    promises no run: a head whose changes the lanes' `paths` leave out starts none, and a closed
    PR none either.)"""
    note = (f"{STALE_PREFIX}this report is of `{old_sha[:12]}`; the pull request's head is now `{new_sha[:12]}` "
            "(a lane run of it, when one runs, updates this comment).\n\n")
    first, rest = _stale_split(body)
    return f"{first}\n{note}{rest}"


def unmark_stale(body: str) -> str:
    """The comment without its stale line: its commit is the PR's head again."""
    first, rest = _stale_split(body)
    return f"{first}\n{rest}" if rest or "\n" in body else first


def stale_head(body: str) -> str | None:
    """The head (its first 12 hex digits) the comment's stale line names; None without one."""
    _, rest = body.split("\n", 1) if "\n" in body else (body, "")
    if not rest.startswith(STALE_PREFIX):
        return None
    found = re.search(r"(?:head is now|pending for) `([0-9a-f]{7,40})`", rest.split("\n", 1)[0])
    return found.group(1) if found else None


def _stale_split(body: str) -> tuple[str, str]:
    """(the comment's first line, the rest without a stale line)."""
    lines = body.split("\n", 1)
    rest = lines[1] if len(lines) > 1 else ""
    if rest.startswith(STALE_PREFIX):
        rest = rest.split("\n\n", 1)[1] if "\n\n" in rest else ""
    return lines[0], rest
