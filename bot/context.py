"""What a handler gets besides the event and its GitHub client: the GitHub clients,
the metrics, the delivery's logger, and the process's shared store. Its own module,
so that handlers and the core import it without importing the server."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

import cachetools

from .config import RepoConfig
from .dispatch import LaneInfo
from .github import GitHubPool
from .metrics import Metrics
from .states import ReplyState

if TYPE_CHECKING:
    from .reconcile import Missed


@dataclass
class Store:
    """Per-process memory shared by the deliveries; everything that must survive a
    restart lives in GitHub."""

    #: Results of completed `workflow_run` events, so a redelivery is not reported twice.
    done_keys: cachetools.LRUCache[Any, bool] = field(default_factory=lambda: cachetools.LRUCache(maxsize=50_000))
    #: Reads that never change (a completed run's jobs, a job's log) and small memos.
    cache: cachetools.LRUCache[Any, Any] = field(default_factory=lambda: cachetools.LRUCache(maxsize=4096))
    #: Lane file texts by blob SHA (a few hundred KiB each at most: a small cache of its own).
    files: cachetools.LRUCache[Any, str] = field(default_factory=lambda: cachetools.LRUCache(maxsize=128))
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    #: When each (repository, user) ran a command, over the last hour.
    commands: cachetools.TTLCache[tuple[str, str], list[float]] = field(
        default_factory=lambda: cachetools.TTLCache(maxsize=10_000, ttl=3600))

    def lock(self, key: str) -> asyncio.Lock:
        """One lock per repository: its reports are written by one delivery at a time."""
        return self.locks.setdefault(key, asyncio.Lock())

    def take_commands(self, repo: str, user: str, wanted: int, limit: int, now: float) -> int:
        """How many of `wanted` commands `user` may run now, `limit` an hour per repository."""
        key = (repo, user.lower())
        recent = [t for t in self.commands.get(key, []) if now - t < 3600]
        granted = max(0, min(wanted, limit - len(recent)))
        self.commands[key] = recent + [now] * granted
        return granted


@dataclass
class Context:
    pool: GitHubPool
    metrics: Metrics
    delivery_id: str
    state: Store
    log: logging.LoggerAdapter  # carries the delivery id
    #: Journal and queue a missed lane run as its `workflow_run` delivery (`bot.reconcile.Missed`);
    #: the delivery queued, None when the journal has it already. None where no journal is (the CLI).
    queue: "Callable[[Missed], Awaitable[Missed | None]] | None" = None
    #: The keys a report's state is signed with and checked against (`bot.states.state_key`): the
    #: webhook secret's, then the previous secret's. None (the tests' own contexts): not signed.
    state_keys: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class PullRead:
    """What the commands of one PR comment share, read once: the PR, the lane files at
    the default branch head, the repository's config, and foldbot's earlier replies."""

    number: int
    comment: Mapping[str, Any]  # the command's comment, as the webhook gave it
    login: str  # foldbot's own
    default_branch: str
    base_sha: str
    config: RepoConfig
    files: Mapping[str, str]  # lane file path -> text at base_sha
    blobs: Mapping[str, str]  # lane file (and called file: `LaneFiles.blobs`) path -> blob SHA
    lanes: Mapping[str, LaneInfo]
    pr: Mapping[str, Any]
    replies: tuple[ReplyState, ...]  # foldbot's answers to earlier commands on this PR
    resuming: bool = False  # this comment's reply was left pending: a crash may have come after a write
    called: Mapping[str, str] = field(default_factory=dict)  # reusable workflows read for their timeout (`LaneFiles`)

    @property
    def user(self) -> str:
        return str(self.comment["user"]["login"])

    @property
    def written_at(self) -> datetime:
        return datetime.fromisoformat(str(self.comment["created_at"]).replace("Z", "+00:00"))
