"""The hidden state blocks of foldbot's own comments, typed and versioned.

A report carries what `/fold approve` needs (the patch itself, its id, the blob SHAs
of the lane files it was made on, the runs it rests on, the summary for the pull
request), so nothing is parsed back out of the rendered prose. A reply to a command
carries the command it answers and what came of it, so a redelivered command is not
carried out twice and the dispatch cooldown survives a restart.

Blocks are only ever read from comments foldbot itself wrote (`publish.is_ours`);
still, a block that does not parse as its type reads as None, never as a crash.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import zlib
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Collection, Iterable, NamedTuple

from .edit import patch_id as compute_patch_id


# --- the report's signature --------------------------------------------------------------------
# A report's state names the patch `/fold approve` commits. GitHub lets anyone with `write` edit any
# comment, foldbot's too, and approving needs `maintain`: so the state carries an HMAC, keyed from
# the App's webhook secret (which only its operator holds), and an approval commits only a patch
# whose state holds it.

def state_key(secret: str) -> bytes:
    """The key a report's state is signed with, from the App's webhook secret."""
    return hmac.new(secret.encode("utf-8"), b"foldbot report state v1", hashlib.sha256).digest()


def report_scope(repo: str, pr: int | None) -> str:
    """Where a report is: its state's signature holds there only (not pasted into another PR's report,
    or another repository's)."""
    return f"{repo.lower()}#{pr if pr is not None else 'dashboard'}"


def _mac(data: dict[str, Any], key: bytes, scope: str) -> str:
    body = json.dumps({k: v for k, v in data.items() if k != "sig"}, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, f"{scope}\n{body}".encode("utf-8"), hashlib.sha256).hexdigest()


def signed(data: dict[str, Any], keys: tuple[bytes, ...], scope: str) -> dict[str, Any]:
    """`data` with its signature by the first of `keys`, for the report at `scope` (`report_scope`);
    as it is without keys (the CLI's)."""
    return {**data, "sig": _mac(data, keys[0], scope)} if keys else data


_SIG = re.compile(r"[0-9a-f]{64}")


def signature_of(data: Any, keys: tuple[bytes, ...], scope: str) -> str:
    """`ok` when a state read back carries the signature of one of `keys` (the current secret's,
    or the one before a rotation) for `scope`; `none` when it carries none (written before
    foldbot signed its reports); `wrong` otherwise (edited, or from another report)."""
    sig = data.get("sig") if isinstance(data, dict) else None
    if sig is None:
        return "none"
    if not isinstance(sig, str) or not _SIG.fullmatch(sig):  # (compare_digest refuses non-ASCII text)
        return "wrong"
    return "ok" if any(hmac.compare_digest(sig, _mac(data, key, scope)) for key in keys) else "wrong"

VERSION = 1
#: Versions read: the current one, and the unversioned blocks of the same shape that came before it
#: (a report of those carries no patch: approving it asks for `/fold refresh`).
READABLE = (None, VERSION)


class StateError(ValueError):
    """A state block that is not of its type."""


def _pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode(), 9)).decode() if text else ""


def _unpack(data: Any) -> str:
    if not data:
        return ""
    try:
        return zlib.decompress(base64.b64decode(str(data), validate=True)).decode()
    except (ValueError, zlib.error) as exc:
        raise StateError(f"a packed text does not unpack: {exc}") from None


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise StateError(f"`{name}` is not a whole number")
    return value


def _str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise StateError(f"`{name}` is not a string")
    return value


#: Completions the dashboard's `reported` keeps per lane (reconciling needs only the latest).
REPORTED_KEPT = 20
#: How many paths that are no lane now the dashboard's record keeps (their last completion each).
GONE_KEPT = 10


class LaneFigures(NamedTuple):
    """A lane's headline in its latest report: the dashboard shows every lane's, whichever
    lane's full report it holds."""

    run_id: int
    html_url: str
    head_sha: str
    setup_seconds: float
    test_seconds: float
    jobs: int


def _lanes(data: Any) -> dict[str, LaneFigures]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StateError("`lanes` is not an object")
    out = {}
    for lane, item in data.items():
        if not (isinstance(item, list) and len(item) == 6):
            raise StateError("`lanes` is not a list of 6 figures per lane")
        run_id, url, head, setup, test, jobs = item
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (setup, test)):
            raise StateError("`lanes` has a time that is not a number")
        out[_str(lane, "lanes")] = LaneFigures(_int(run_id, "lanes"), _str(url, "lanes"), _str(head, "lanes"),
                                               float(setup), float(test), _int(jobs, "lanes"))
    return out


def _flag(data: Any, what: str) -> bool:
    if data is None:
        return False
    if not isinstance(data, bool):
        raise StateError(f"`{what}` is not true or false")
    return data


def _reported(data: Any) -> dict[str, tuple[tuple[int, int], ...]]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StateError("`reported` is not an object")
    out = {}
    for lane, items in data.items():
        if not isinstance(items, list) or not all(isinstance(item, list) and len(item) == 2 for item in items):
            raise StateError("`reported` is not a list of [run id, attempt] per lane")
        out[_str(lane, "reported")] = tuple((_int(i, "reported"), _int(a, "reported")) for i, a in items)
    return out


@dataclass(frozen=True)
class ReportState:
    workflow: str  # the measured lane file
    base_sha: str  # the default branch head the lane files were read at
    head_sha: str  # the run's head
    runs: tuple[int, ...]
    blobs: dict[str, str]  # lane file (and called file) path -> blob SHA at base_sha
    patch_id: str | None = None
    patch: str = ""
    summary: str = ""  # markdown: what the patch does and saves, for the pull request that commits it
    pr: int | None = None  # the PR whose comment this is; None on the dashboard
    #: Each suggestion's own (patch id, patch, summary), approvable alone.
    suggestions: tuple[tuple[str, str, str], ...] = ()
    #: On the dashboard: per lane file, the (run id, attempt) of the latest completions foldbot
    #: reported, oldest first (`REPORTED_KEPT` a lane), every lane's, whichever the report shows:
    #: what reconciling compares a lane's latest run with (`runs` is the history read, newer
    #: runs included, not what was reported).
    reported: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    #: On the dashboard: every lane's headline in its latest report (this lane's too).
    lanes: dict[str, LaneFigures] = field(default_factory=dict)
    #: On the dashboard: it says what foldbot could not analyse at `base_sha` (the default branch
    #: head then), not a report; reconciling analyses again once that head has moved.
    error: bool = False

    def kept_for(self, lanes: Collection[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """`reported` as the dashboard keeps it: a lane's last `REPORTED_KEPT` completions; of a path
        that is no lane now (dropped from the config, renamed), its last one, of the `GONE_KEPT`
        such paths reported last (named a lane again, its latest run is not reported twice; and
        the record stays bounded, however many lanes came and went). "Last": by run id, the runs
        created last."""
        gone = self._latest_first(path for path in self.reported if path not in lanes)[:GONE_KEPT]
        # (of a path no lane now, its latest run: not the one recorded last, which may be a re-run of an older one)
        return {path: (max(items),) if path in gone else items for path, items in self.reported.items()
                if path in lanes or path in gone}

    def recent_paths(self, count: int = GONE_KEPT) -> set[str]:
        """The `count` paths of `reported` whose runs were created last (by run id): the lanes, when
        which paths are lanes is not known (an error found before the lane files were read)."""
        return set(self._latest_first(self.reported)[:count])

    def _latest_first(self, paths: Iterable[str]) -> list[str]:
        """Those of `paths` with a completion recorded, the one whose run was created last first."""
        return sorted((path for path in paths if self.reported.get(path)), key=lambda path: max(self.reported[path]),
                      reverse=True)

    def reporting(self, lane: str, run_id: int, attempt: int) -> dict[str, tuple[tuple[int, int], ...]]:
        """`reported` with this completion added to `lane`'s."""
        kept = tuple(item for item in self.reported.get(lane, ()) if item != (run_id, attempt))
        return {**self.reported, lane: (*kept, (run_id, attempt))[-REPORTED_KEPT:]}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"v": VERSION, "workflow": self.workflow, "base_sha": self.base_sha,
                                "head_sha": self.head_sha, "runs": list(self.runs), "blobs": dict(self.blobs),
                                "patch_id": self.patch_id}
        if self.patch:
            data["patch_z"] = _pack(self.patch)
        if self.summary:
            data["summary_z"] = _pack(self.summary)
        if self.pr is not None:
            data["pr"] = self.pr
        if self.suggestions:
            data["suggestions_z"] = _pack(json.dumps([list(item) for item in self.suggestions]))
        if self.reported:
            data["reported"] = {lane: [list(item) for item in items] for lane, items in self.reported.items()}
        if self.lanes:
            data["lanes"] = {lane: list(figures) for lane, figures in self.lanes.items()}
        if self.error:
            data["error"] = True
        return data

    @classmethod
    def from_json(cls, data: Any) -> "ReportState":
        if not isinstance(data, dict):
            raise StateError("a report state is an object")
        if data.get("v") not in READABLE:
            raise StateError(f"report state version {data.get('v')!r}, not {VERSION}")
        runs = data.get("runs")
        blobs = data.get("blobs")
        if not isinstance(runs, list) or not isinstance(blobs, dict):
            raise StateError("`runs` and `blobs` are a list and an object")
        patch_id = data.get("patch_id")
        pr = data.get("pr")
        return cls(
            workflow=_str(data.get("workflow"), "workflow"),
            base_sha=_str(data.get("base_sha"), "base_sha"),
            head_sha=_str(data.get("head_sha"), "head_sha"),
            runs=tuple(_int(r, "runs") for r in runs),
            blobs={_str(k, "blobs"): _str(v, "blobs") for k, v in blobs.items()},
            patch_id=None if patch_id is None else _str(patch_id, "patch_id"),
            patch=_unpack(data.get("patch_z")),
            summary=_unpack(data.get("summary_z")),
            pr=None if pr is None else _int(pr, "pr"),
            suggestions=_suggestions(data.get("suggestions_z")),
            reported=_reported(data.get("reported")),
            lanes=_lanes(data.get("lanes")),
            error=_flag(data.get("error"), "error"),
        )

    @property
    def patch_intact(self) -> bool:
        """The carried patch is the one its id names."""
        return bool(self.patch) and self.patch_id == compute_patch_id(self.patch)

    def patch_for(self, patch_id: str | None) -> str | None:
        """The patch an approval names: the whole one (no id, or its id), or one suggestion's."""
        if patch_id is None or patch_id == self.patch_id:
            return self.patch
        return next((patch for i, patch, _ in self.suggestions if i == patch_id), None)

    def summary_for(self, patch_id: str | None) -> str:
        if patch_id is None or patch_id == self.patch_id:
            return self.summary
        return next((summary for i, _, summary in self.suggestions if i == patch_id), "")

    @property
    def ids(self) -> tuple[str, ...]:
        """Every id an approval may name: the whole patch's, then each suggestion's."""
        return tuple(dict.fromkeys(i for i in (self.patch_id, *(s[0] for s in self.suggestions)) if i))


def _suggestions(packed: Any) -> tuple[tuple[str, str, str], ...]:
    if not packed:
        return ()
    try:
        items = json.loads(_unpack(packed))
    except ValueError:
        raise StateError("`suggestions_z` is not JSON") from None
    if not isinstance(items, list) or not all(isinstance(i, list) and len(i) == 3 for i in items):
        raise StateError("`suggestions_z` is a list of [id, patch, summary]")
    return tuple((_str(i, "suggestions"), _str(p, "suggestions"), _str(m, "suggestions")) for i, p, m in items)


@dataclass(frozen=True)
class ReplyState:
    """A reply to one command line of one comment."""

    kind: str  # "dispatch", "fold-approve", "fold-refresh", "fold-help"
    comment_id: int
    line: str
    user: str
    at: str  # when the command was written (ISO 8601)
    lane: str | None = None  # dispatch: the lane, the run it started, its jobs and the head
    run_id: int | None = None
    targets: tuple[str, ...] = ()
    sha: str | None = None
    pull: int | None = None  # approve: the pull request opened
    patch_id: str | None = None

    @property
    def written(self) -> datetime:
        """When the command was written (`at`)."""
        return datetime.fromisoformat(self.at.replace("Z", "+00:00"))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"v": VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == ():
                continue
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def from_json(cls, data: Any) -> "ReplyState":
        if not isinstance(data, dict) or data.get("v") not in READABLE:
            raise StateError("not a reply state of a version foldbot reads")
        targets = data.get("targets") or []
        if not isinstance(targets, list):
            raise StateError("`targets` is a list")
        optional_int = {k: None if data.get(k) is None else _int(data[k], k) for k in ("run_id", "pull")}
        optional_str = {k: None if data.get(k) is None else _str(data[k], k) for k in ("lane", "sha", "patch_id")}
        return cls(kind=_str(data.get("kind"), "kind"), comment_id=_int(data.get("comment_id"), "comment_id"),
                   line=_str(data.get("line"), "line"), user=_str(data.get("user"), "user"),
                   at=_str(data.get("at"), "at"), targets=tuple(_str(t, "targets") for t in targets),
                   **optional_int, **optional_str)


@dataclass(frozen=True)
class CommentReply:
    """foldbot's one reply to one comment: the commands it answers, in order. `pending`
    while they are carried out: written before anything costs GPU time, so that after a
    crash the redelivered comment resumes (finds the run a dispatch may have started)
    instead of starting again."""

    comment_id: int
    pending: bool
    commands: tuple[ReplyState, ...]

    def to_json(self) -> dict[str, Any]:
        return {"v": VERSION, "comment_id": self.comment_id, "pending": self.pending,
                "commands": [c.to_json() for c in self.commands]}

    @classmethod
    def from_json(cls, data: Any) -> "CommentReply":
        if isinstance(data, dict) and "commands" not in data:  # a reply to one command, as written before
            single = ReplyState.from_json(data)
            return cls(single.comment_id, False, (single,))
        if not isinstance(data, dict) or data.get("v") != VERSION or not isinstance(data.get("commands"), list):
            raise StateError("not a comment reply of this version")
        pending = data.get("pending")
        if not isinstance(pending, bool):
            raise StateError("`pending` is true or false")
        return cls(_int(data.get("comment_id"), "comment_id"), pending,
                   tuple(ReplyState.from_json(c) for c in data["commands"]))


__all__ = ["CommentReply", "ReplyState", "ReportState", "StateError", "VERSION"]
