"""The delivery journal: every accepted delivery is written here before it is answered
202, and marked done once its handler succeeded. It is the dedupe (a delivery id is
processed once, across restarts) and the backlog (what the in-memory queue could not
hold, and what a killed process left unfinished, is read back from it).

An SQLite file in the data directory (`FOLDBOT_DATA_DIR`, WAL mode, `synchronous=FULL`
so an accepted delivery survives a crash or a power cut), or in memory when no
directory is given (tests, `foldbot serve` never)."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

#: A delivery whose handler failed this many times is not retried at start again
#: (GitHub's redelivery of it, or a manual one, still runs it).
MAX_ATTEMPTS = 3
#: Done deliveries are remembered (their ids, for the dedupe) this long.
KEEP_DONE_SECONDS = 14 * 24 * 3600

SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    payload BLOB,
    installation INTEGER,
    state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    received REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries (state, received);
"""


@dataclass(frozen=True)
class Entry:
    id: str
    event: str
    payload: bytes
    installation: int | None
    attempts: int


class Journal:
    """One SQLite connection, used from the event loop (each call is one short
    transaction) and guarded by a lock for the odd thread."""

    def __init__(self, directory: Path | None) -> None:
        self.path = (directory / "foldbot.sqlite3") if directory is not None else None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", isolation_level=None,
                                   check_same_thread=False)
        self._lock = threading.Lock()
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(SCHEMA)

    @property
    def durable(self) -> bool:
        return self.path is not None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def accept(self, delivery: str, event: str, payload: bytes, installation: int | None) -> str:
        """Write a delivery down: `new` when it was not known, else its state (`queued`,
        `done`, `failed`). A known delivery that is not done is queued again."""
        now = time.time()
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO deliveries (id, event, payload, installation, state, received, updated) "
                "VALUES (?, ?, ?, ?, 'queued', ?, ?)", (delivery, event, payload, installation, now, now))
            if cursor.rowcount == 1:
                return "new"
            row = self._db.execute("SELECT state FROM deliveries WHERE id = ?", (delivery,)).fetchone()
            state = str(row[0])
            if state == "failed":
                self._db.execute("UPDATE deliveries SET state = 'queued', payload = ?, updated = ? WHERE id = ?",
                                 (payload, now, delivery))
            return state

    def release(self, delivery: str) -> None:
        """The in-memory queue had no room for this delivery: it stays queued here."""

    def done(self, delivery: str) -> None:
        with self._lock:
            self._db.execute("UPDATE deliveries SET state = 'done', payload = NULL, attempts = attempts + 1, "
                             "updated = ? WHERE id = ?", (time.time(), delivery))

    def failed(self, delivery: str) -> None:
        with self._lock:
            self._db.execute("UPDATE deliveries SET state = 'failed', attempts = attempts + 1, updated = ? "
                             "WHERE id = ?", (time.time(), delivery))

    def state(self, delivery: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM deliveries WHERE id = ?", (delivery,)).fetchone()
        return str(row[0]) if row else None

    def is_done(self, delivery: str) -> bool:
        return self.state(delivery) == "done"

    def count(self, state: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM deliveries WHERE state = ?", (state,)).fetchone()[0])

    def pending(self, limit: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[Entry]:
        """Up to `limit` queued deliveries not in `exclude`, oldest first."""
        if limit <= 0:
            return []
        out: list[Entry] = []
        with self._lock:
            rows = self._db.execute("SELECT id, event, payload, installation, attempts FROM deliveries "
                                    "WHERE state = 'queued' ORDER BY received LIMIT ?", (limit + len(exclude),))
            for row in rows:
                if row[0] not in exclude and row[2] is not None:
                    out.append(Entry(str(row[0]), str(row[1]), bytes(row[2]), row[3], int(row[4])))
                    if len(out) == limit:
                        break
        return out

    def requeue_failed(self) -> int:
        """At start: deliveries whose handler failed fewer than MAX_ATTEMPTS times are queued again."""
        with self._lock:
            return self._db.execute("UPDATE deliveries SET state = 'queued' WHERE state = 'failed' AND attempts < ? "
                                    "AND payload IS NOT NULL", (MAX_ATTEMPTS,)).rowcount

    def forget_old(self, now: float | None = None) -> int:
        """Done deliveries older than KEEP_DONE_SECONDS are forgotten."""
        cutoff = (now if now is not None else time.time()) - KEEP_DONE_SECONDS
        with self._lock:
            return self._db.execute("DELETE FROM deliveries WHERE state = 'done' AND updated < ?", (cutoff,)).rowcount

    def known(self, deliveries: list[str]) -> set[str]:
        """Which of these delivery ids the journal has (in any state)."""
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(deliveries), 500):
                chunk = deliveries[start:start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(str(r[0]) for r in self._db.execute(f"SELECT id FROM deliveries WHERE id IN ({marks})",
                                                                 chunk))
        return found
