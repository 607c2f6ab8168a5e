"""In-memory GitHub state: users, repositories with real git data, issues, pulls,
workflows, runs, jobs, installations and tokens.

Everything here is plain data plus the helpers tests use to set the state up and
to assert on it. Nothing in this module knows about HTTP.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from .gitstore import (
    EXECUTABLE_MODE,
    FILE_MODE,
    FlatEntry,
    GitStore,
    Signature,
    remove_path,
    set_path,
)

ROLE_TO_PERMISSION: Mapping[str, str] = {
    "read": "read",
    "triage": "read",
    "write": "write",
    "maintain": "write",
    "admin": "admin",
}
ROLE_RANK: Mapping[str, int] = {
    "none": 0,
    "read": 1,
    "triage": 2,
    "write": 3,
    "maintain": 4,
    "admin": 5,
}
REACTION_CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
DEFAULT_INSTALLATION_PERMISSIONS: Mapping[str, str] = {
    "actions": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
    "workflows": "write",
}
RUN_URL_KEYS = (
    "url",
    "html_url",
    "jobs_url",
    "logs_url",
    "check_suite_url",
    "artifacts_url",
    "cancel_url",
    "rerun_url",
    "previous_attempt_url",
    "workflow_url",
)
JOB_URL_KEYS = ("run_url", "url", "html_url", "check_run_url")
SHA_RE = re.compile(r"^[0-9a-f]{40}$")
SHORT_SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")


def iso(timestamp: float) -> str:
    """Format a POSIX time the way GitHub does: ``2024-01-02T03:04:05Z``."""
    return datetime.fromtimestamp(int(timestamp), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def node_id(type_name: str, key: int | str) -> str:
    """GitHub's legacy global node id, e.g. ``MDQ6VXNlcjE=`` for ``04:User1``."""
    return base64.b64encode(f"0{len(type_name)}:{type_name}{key}".encode()).decode()


def pseudo_sha(*parts: object) -> str:
    """A stable 40-hex string for objects that have no real git content."""
    return hashlib.sha1("\x00".join(map(str, parts)).encode()).hexdigest()


class Clock:
    """Wall-clock timestamps that never go backwards."""

    def __init__(self) -> None:
        self._last = 0

    def stamp(self) -> str:
        self._last = max(int(time.time()), self._last)
        return iso(self._last)

    def hold(self, second: int) -> None:
        """Stamp everything from now on with this second (an edit of a thing stamped then,
        the next), as if it all happened within it."""
        self._last = max(second, self._last)

    def stamp_after(self, previous: str) -> str:
        """A timestamp strictly later than ``previous`` (edits always move updated_at)."""
        self._last = max(int(time.time()), self._last, int(parse_iso(previous)) + 1)
        return iso(self._last)


class Ids:
    """Per-kind id sequences that look like GitHub's (large, distinct per kind)."""

    _STARTS: Mapping[str, int] = {
        "user": 1000,
        "repo": 500000000,
        "issue": 1800000000,
        "pull": 1500000000,
        "comment": 2000000000,
        "reaction": 150000000,
        "label": 5000000000,
        "run": 7000000000,
        "job": 19000000000,
        "check_suite": 21000000000,
    }

    def __init__(self) -> None:
        self._counters = {kind: itertools.count(start + 1) for kind, start in self._STARTS.items()}

    def next(self, kind: str) -> int:
        return next(self._counters[kind])


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User", "Organization" or "Bot"


@dataclass
class Installation:
    id: int
    account: str
    repo_ids: set[int]
    permissions: dict[str, str]
    repository_selection: str = "selected"
    events: list[str] = field(
        default_factory=lambda: ["issue_comment", "pull_request", "workflow_run"]
    )
    created_at: str = ""
    #: When the owner suspended it: its access token requests are then answered 403 "This
    #: installation has been suspended" (and its tokens refused); None while it is active.
    suspended_at: str | None = None


@dataclass(frozen=True)
class IssuedToken:
    """An installation access token handed out by ``POST .../access_tokens``."""

    token: str
    installation_id: int
    expires_at: float
    permissions: Mapping[str, str]
    repo_ids: frozenset[int] | None  # None: every repository of the installation


@dataclass(frozen=True)
class PersonalToken:
    token: str
    login: str
    repo_ids: frozenset[int] | None  # None: every repository


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None
    default: bool = False


@dataclass
class Reaction:
    id: int
    content: str
    user: str
    created_at: str


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: str
    created_at: str
    updated_at: str
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: str
    updated_at: str
    state: str = "open"
    state_reason: str | None = None
    closed_at: str | None = None
    labels: list[str] = field(default_factory=list)
    comment_ids: list[int] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    is_pull: bool = False
    #: A locked conversation: only the repository's collaborators may comment, and GitHub
    #: refuses everyone else's comments (and reactions) with 403.
    locked: bool = False
    active_lock_reason: str | None = None


@dataclass
class Pull:
    number: int
    id: int
    head_ref: str
    head_sha: str
    head_repo: Repo
    base_ref: str
    files: list[dict[str, Any]] | None  # None: computed from the git data
    draft: bool = False
    merged: bool = False
    maintainer_can_modify: bool = False

    @property
    def head_label(self) -> str:
        return f"{self.head_repo.owner}:{self.head_ref}"


@dataclass
class Workflow:
    id: int
    path: str
    name: str | None
    state: str = "active"
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class Dispatch:
    """A recorded ``workflow_dispatch`` accepted by the fake."""

    repo: str
    workflow_id: int
    workflow_path: str
    ref: str
    inputs: Mapping[str, Any]  # as sent by the client
    resolved_inputs: Mapping[str, Any]  # with the workflow's defaults filled in
    run_id: int


class RecordedRequest(NamedTuple):
    """One request served by the fake; compares equal to ``(method, path, status)``."""

    method: str
    path: str
    status: int


@dataclass(frozen=True)
class LoggedRequest:
    """The details of one request, for assertions beyond method/path/status."""

    method: str
    path: str
    status: int
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


RefListener = Callable[["Repo", str, str | None], None]


class Repo:
    """A repository: git refs over the shared object store, plus issues, pulls and Actions."""

    def __init__(
        self,
        *,
        owner: str,
        name: str,
        repo_id: int,
        default_branch: str,
        private: bool,
        store: GitStore,
        clock: Clock,
        on_ref_change: RefListener,
        fork_of: Repo | None = None,
        description: str | None = None,
    ) -> None:
        self.owner = owner
        self.name = name
        self.id = repo_id
        self.default_branch = default_branch
        self.private = private
        #: False: Issues are turned off (Settings > Features); the issues API answers 410 Gone, and
        #: a pull request's conversation (its issue comments) goes on working.
        self.has_issues = True
        #: Archived: read-only; every write through the API is answered 403 "Repository was
        #: archived so is read-only." (its reads work, and it stays in its installations).
        self.archived = False
        self.fork_of = fork_of
        self.description = description
        self.created_at = clock.stamp()
        self.refs: dict[str, str] = {}
        self.labels: dict[str, Label] = {}
        self.issues: dict[int, Issue] = {}
        self.pulls: dict[int, Pull] = {}
        self.comments: dict[int, Comment] = {}
        self.workflows: dict[int, Workflow] = {}
        self.runs: dict[int, dict[str, Any]] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.roles: dict[str, str] = {}
        #: Branch protection: branch -> the status checks it requires (`GET /branches/{branch}`
        #: shows them under `protection`).
        self.protected: dict[str, list[str]] = {}
        #: Rulesets with a "required status checks" rule: {"id", "branches", "checks"} each, and
        #: "organization": True for one of the owner's organization (`GET /rules/branches/{branch}`
        #: lists the rules that apply to a branch).
        self.rulesets: list[dict[str, Any]] = []
        self._store = store
        self._clock = clock
        self._on_ref_change = on_ref_change

    def __repr__(self) -> str:
        return f"Repo({self.full_name!r})"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def store(self) -> GitStore:
        return self._store

    # -- refs --------------------------------------------------------------

    def set_ref(self, ref: str, sha: str | None) -> None:
        """Point a full ref (``refs/heads/x``) at ``sha``, or delete it with ``None``."""
        if sha is None:
            self.refs.pop(ref, None)
        else:
            self.refs[ref] = sha
        self._on_ref_change(self, ref, sha)

    def branch_sha(self, branch: str) -> str | None:
        return self.refs.get(f"refs/heads/{branch}")

    def create_branch(self, branch: str, from_ref: str | None = None) -> str:
        sha = self.resolve(from_ref or self.default_branch)
        if sha is None:
            raise ValueError(
                f"{self.full_name}: cannot resolve {from_ref or self.default_branch!r}"
            )
        self.set_ref(f"refs/heads/{branch}", sha)
        return sha

    def resolve(self, ref: str) -> str | None:
        """Resolve a branch, tag, ``heads/x``, ``refs/...`` or (short) commit SHA to a commit."""
        ref = ref.strip()
        for candidate in (ref, f"refs/{ref}", f"refs/heads/{ref}", f"refs/tags/{ref}"):
            if candidate.startswith("refs/") and candidate in self.refs:
                return self.refs[candidate]
        lowered = ref.lower()
        if SHA_RE.match(lowered) and self._store.kind(lowered) == "commit":
            return lowered
        if SHORT_SHA_RE.match(lowered):
            matches = [sha for sha in self._store.commits() if sha.startswith(lowered)]
            if len(matches) == 1:
                return matches[0]
        return None

    def is_empty(self) -> bool:
        return not any(ref.startswith("refs/heads/") for ref in self.refs)

    # -- files -------------------------------------------------------------

    def put_files(
        self,
        branch: str,
        files: Mapping[str, str | bytes | None],
        *,
        message: str = "Update files",
        author: Signature | None = None,
        executable: Iterable[str] = (),
    ) -> str:
        """Commit ``files`` (``None`` deletes a path) on top of ``branch`` and advance it.

        A missing branch starts from the default branch (or as a root commit in an
        empty repository). Returns the new commit SHA.
        """
        branch = branch.removeprefix("refs/heads/")
        parent = self.branch_sha(branch)
        if parent is None and branch != self.default_branch:
            parent = self.branch_sha(self.default_branch)
        flat = self._flat_at_commit(parent) if parent else {}
        executable = set(executable)
        for path, content in files.items():
            path = path.strip("/")
            if content is None:
                remove_path(flat, path)
                continue
            data = content.encode() if isinstance(content, str) else content
            mode = EXECUTABLE_MODE if path in executable else FILE_MODE
            set_path(flat, path, FlatEntry(mode, "blob", self._store.put_blob(data)))
        tree = self._store.build_tree(flat)
        signature = author or Signature("Octo Cat", "octocat@github.com", self._clock.stamp())
        sha = self._store.put_commit(
            tree=tree,
            parents=[parent] if parent else [],
            author=signature,
            committer=signature,
            message=message,
        )
        self.set_ref(f"refs/heads/{branch}", sha)
        return sha

    def _flat_at_commit(self, commit_sha: str) -> dict[str, FlatEntry]:
        return self._store.flatten(self._store.commit(commit_sha).tree)

    def blobs_at(self, ref: str) -> dict[str, bytes]:
        """Every file at ``ref`` as bytes (submodules are skipped)."""
        sha = self.resolve(ref)
        if sha is None:
            raise KeyError(f"{self.full_name}: no ref or commit {ref!r}")
        return {
            path: self._store.blob(entry.sha).data
            for path, entry in sorted(self._flat_at_commit(sha).items())
            if entry.type == "blob"
        }

    def files_at(self, ref: str) -> dict[str, str]:
        """Every file at ``ref`` decoded as UTF-8 text."""
        return {path: data.decode("utf-8") for path, data in self.blobs_at(ref).items()}

    # -- lookups -----------------------------------------------------------

    def workflow(self, id_or_file: str | int) -> Workflow | None:
        key = str(id_or_file)
        if key.isdigit() and int(key) in self.workflows:
            return self.workflows[int(key)]
        for workflow in self.workflows.values():
            if workflow.path == key or workflow.path.rsplit("/", 1)[-1] == key:
                return workflow
        return None

    def next_number(self) -> int:
        return max(self.issues, default=0) + 1

    def role_of(self, login: str) -> str | None:
        if login.lower() == self.owner.lower():
            return "admin"
        for user, role in self.roles.items():
            if user.lower() == login.lower():
                return role
        return None


def normalize_login(value: Any) -> str | None:
    """Accept a login string or a GitHub user object; return the login."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return str(value["login"])
    return str(value)


def strip_keys(data: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in keys}
