"""Failed deliveries, sent again. GitHub does not redeliver a delivery that failed (a
timeout, a 5xx, foldbot down): at start and every `FOLDBOT_REDELIVER_MINUTES`, foldbot
lists the App's deliveries of the last `FOLDBOT_REDELIVER_WINDOW_HOURS` and asks GitHub
to send again each event foldbot handles that no attempt delivered (no 2xx) and whose
GUID the journal does not know. A redelivery keeps the GUID as `X-GitHub-Delivery`, so
the journal's dedupe holds.

No storm and no loop: at most MAX_PER_PASS are asked for in a pass; a GUID GitHub tried
MAX_TRIES times is left to a person; one GitHub refuses (a 4xx) is not asked for again
while the window holds it; a rate limit (403/429) ends the pass."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from .github import GitHubError, GitHubPool, _parse_time

log = logging.getLogger("foldbot.redeliver")


def delivered(item: dict[str, Any]) -> bool:
    code = item.get("status_code")
    return type(code) is int and 200 <= code < 300


#: A GUID asked for is not asked for again within this many seconds (its redelivery may be on its way).
ASK_AGAIN_SECONDS = 3600
#: A GUID with this many attempts (the delivery and its redeliveries), none delivered, is not
#: asked for again: what fails this often (a payload foldbot answers 400, a wrong secret) needs a person.
#: Counted from the attempts listed and from foldbot's own asks (`Memory.asks`): a window shorter
#: than the tries take would otherwise never hold MAX_TRIES of them, and the newest attempt, asked
#: for again, keeps the GUID in GitHub's retention: asked for every hour, for ever.
MAX_TRIES = 4
#: GitHub keeps a delivery this long (its docs: "the past 3 days"); an ask is remembered as long.
RETENTION = timedelta(days=3)
#: At most this many redeliveries are asked for in one pass; the rest, in the next.
MAX_PER_PASS = 100


def _by_guid(items: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The attempts listed, by the GUID of their delivery."""
    attempts: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        guid = item.get("guid")
        if isinstance(guid, str) and guid and type(item.get("id")) is int:
            attempts.setdefault(guid, []).append(item)
    return attempts


def _attempts(items: Iterable[dict[str, Any]], events: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The attempts of each GUID of an event foldbot handles that no attempt delivered."""
    wanted = set(events)
    return {guid: tries for guid, tries in _by_guid(items).items()
            if not any(delivered(t) for t in tries) and tries[0].get("event") in wanted}


#: What foldbot answers a delivery its journal holds: listed so, a GUID the journal does not know
#: was lost by the journal (a Redis restarted empty, a new data directory), not delivered.
ACCEPTED = 202


def _accepted(items: Iterable[dict[str, Any]], events: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The attempts of each GUID of an event foldbot handles that foldbot answered 202."""
    wanted = set(events)
    return {guid: tries for guid, tries in _by_guid(items).items()
            if tries[0].get("event") in wanted and any(t.get("status_code") == ACCEPTED for t in tries)}


def to_redeliver(items: Iterable[dict[str, Any]], events: Iterable[str], known: Callable[[list[str]], set[str]],
                 asked: Container[str]) -> list[dict[str, Any]]:
    """One delivery (the newest attempt) per GUID that no attempt delivered, of an event
    foldbot handles, tried fewer than MAX_TRIES times, that the journal does not know and
    that was not asked for lately, oldest first."""
    attempts = _attempts(items, events)
    return _choose(attempts, known(sorted(attempts)), asked)


def _tries(listed: list[dict[str, Any]], asks: dict[str, tuple[int, float]], guid: str) -> int:
    """How many times GitHub has tried a GUID: the attempts listed, or more (the delivery and
    each redelivery foldbot asked for, some of them out of the window now)."""
    return max(len(listed), asks[guid][0] + 1 if guid in asks else 0)


def _choose(attempts: dict[str, list[dict[str, Any]]], seen: Container[str],
            asked: Container[str], asks: dict[str, tuple[int, float]] | None = None) -> list[dict[str, Any]]:
    """`to_redeliver`, from the attempts already grouped by GUID (`_attempts`), the GUIDs
    the journal has (`seen`) and how often foldbot asked for each (`asks`)."""
    failed = {guid: max(tries, key=lambda t: t["id"]) for guid, tries in attempts.items()
              if _tries(tries, asks or {}, guid) < MAX_TRIES and guid not in asked}
    return [failed[guid] for guid in sorted(failed, key=lambda g: failed[g]["id"]) if guid not in seen]


#: What Memory keeps of a listed attempt (what the choice, the window and the log read).
KEPT = ("id", "guid", "event", "status_code", "status", "delivered_at")
#: A memory of more undelivered attempts than this (a long outage) is not kept in the journal:
#: the next round lists the whole window instead (the GUIDs asked for are kept all the same).
MAX_KEPT_ATTEMPTS = 5000


@dataclass
class Memory:
    """What earlier rounds listed, so that a round lists only what is newer: the newest
    delivery id seen, and the attempts of each GUID of a handled event that no attempt has
    delivered yet (within the window). Kept in the journal between rounds (`dumps`,
    `loads`), with the GUIDs asked for, so that neither a restart nor the next round's
    replica lists the whole window again, or asks again for what was just asked for."""
    newest: int | None = None
    undelivered: list[dict[str, Any]] = field(default_factory=list)
    #: when it was kept (epoch seconds; for people and tests: replicas' clocks differ)
    kept: float = 0.0
    #: GUID -> how many times foldbot asked GitHub to redeliver it, and when it last did (epoch
    #: seconds), for RETENTION: what MAX_TRIES counts beside the attempts listed.
    asks: dict[str, tuple[int, float]] = field(default_factory=dict)

    def asked_for(self, guid: str, moment: float) -> None:
        self.asks[guid] = (self.asks[guid][0] + 1 if guid in self.asks else 1, moment)

    def forget_asks(self, before: float) -> None:
        """The asks last made before `before` (GitHub no longer keeps their GUIDs)."""
        self.asks = {guid: ask for guid, ask in self.asks.items() if ask[1] >= before}

    def dumps(self, asked: dict[str, float], source: str) -> str:
        """As text, with the asked GUIDs, for the App `source` names (its API and id: the ids
        of another App's deliveries, or another GitHub's, mean nothing here)."""
        newest, undelivered = self.newest, self.undelivered
        if len(undelivered) > MAX_KEPT_ATTEMPTS:
            newest, undelivered = None, []
        asks = dict(sorted(self.asks.items(), key=lambda item: item[1][1])[-MAX_KEPT_ATTEMPTS:])  # the latest
        return json.dumps({"source": source, "newest": newest, "undelivered": undelivered, "asked": asked,
                           "kept": self.kept, "asks": {guid: list(ask) for guid, ask in asks.items()}},
                          separators=(",", ":"))

    @classmethod
    def loads(cls, text: str, source: str) -> tuple[Memory, dict[str, float]] | None:
        """The memory and the asked GUIDs `dumps` wrote (None: it was written for another
        App); ValueError saying what is wrong."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("source") != source:
            return None
        newest, undelivered, asked, kept = data.get("newest"), data.get("undelivered"), data.get("asked"), \
            data.get("kept")
        if newest is not None and type(newest) is not int:
            raise ValueError("`newest` is not a delivery id")
        if not isinstance(undelivered, list) or not all(
                isinstance(item, dict) and type(item.get("id")) is int and isinstance(item.get("guid"), str)
                for item in undelivered):
            raise ValueError("`undelivered` is not a list of attempts with an id and a GUID")
        if not isinstance(asked, dict) or not all(
                isinstance(until, (int, float)) and not isinstance(until, bool) for until in asked.values()):
            raise ValueError("`asked` is not a map of GUIDs to times")
        if not isinstance(kept, (int, float)) or isinstance(kept, bool):
            raise ValueError("`kept` is not a time")
        asks = data.get("asks") or {}  # (kept by a foldbot before it counted its asks: none)
        if not isinstance(asks, dict) or not all(
                isinstance(ask, list) and len(ask) == 2 and type(ask[0]) is int
                and isinstance(ask[1], (int, float)) and not isinstance(ask[1], bool) for ask in asks.values()):
            raise ValueError("`asks` is not a map of GUIDs to [count, time]")
        return (cls(newest, undelivered, float(kept), {str(guid): (n, float(t)) for guid, (n, t) in asks.items()}),
                {str(guid): float(until) for guid, until in asked.items()})

    def union(self, other: Memory) -> Memory:
        """What both remember, erring towards listing more: the older cursor, every attempt."""
        newest = None if self.newest is None or other.newest is None else min(self.newest, other.newest)
        attempts = {item["id"]: item for item in [*self.undelivered, *other.undelivered]}
        asks = dict(self.asks)
        for guid, (count, when) in other.asks.items():
            mine = asks.get(guid, (0, 0.0))
            asks[guid] = (max(mine[0], count), max(mine[1], when))
        return Memory(newest, [attempts[key] for key in sorted(attempts)], max(self.kept, other.kept), asks)

    def merge(self, listed: list[dict[str, Any]], events: Iterable[str],
              newer_than: datetime) -> dict[str, list[dict[str, Any]]]:
        """The undelivered GUIDs' attempts to consider now (`_attempts`): those remembered and
        those just listed, within the window."""
        ids = [item["id"] for item in listed if type(item.get("id")) is int]
        if ids:
            self.newest = max(ids) if self.newest is None else max(self.newest, *ids)
        remembered = [item for item in self.undelivered
                      if (when := _parse_time(item.get("delivered_at"))) is None or when > newer_than]
        # an attempt listed again (the cursor of a joined memory is the older one) counts once
        unique = {item["id"]: item for item in [*remembered, *listed] if isinstance(item, dict)
                  and type(item.get("id")) is int}
        attempts = _attempts(unique.values(), events)
        self.undelivered = [{key: item[key] for key in KEPT if key in item} for tries in attempts.values()
                            for item in tries]
        return attempts


@dataclass
class Outcome:
    listed: int
    asked: list[str]
    refused: list[str]
    #: GUIDs tried MAX_TRIES times, none delivered: not asked for again
    given_up: list[str] = field(default_factory=list)
    #: why the pass ended before asking for all it chose (None: it did not)
    stopped: str | None = None
    #: GUIDs foldbot answered 202 that its journal does not hold: lost by it, asked for again
    lost: list[str] = field(default_factory=list)


async def redeliver_failed(pool: GitHubPool, events: Iterable[str], known: Callable[[list[str]], set[str]],
                           asked: dict[str, float], window: timedelta, now: datetime | None = None,
                           memory: Memory | None = None, keep_going: Callable[[], bool] = lambda: True) -> Outcome:
    """List the App's deliveries within `window`, and ask for those `to_redeliver` picks
    (`asked`: GUID -> until when it is not asked for: ASK_AGAIN_SECONDS after it was asked
    for; the whole window after GitHub refused it. `memory`: what earlier rounds listed; this
    round lists only what is newer. `keep_going`: False once foldbot is stopping: nothing more is
    asked for, as its redelivery would find nobody listening, and then wait as if on its way.)"""
    moment = now or datetime.now(timezone.utc)
    for guid, until in list(asked.items()):
        if moment.timestamp() >= until:
            del asked[guid]
    events = list(events)
    listed = await pool.hook_deliveries(moment - window, after=memory.newest if memory else None)
    outcome = Outcome(len(listed), [], [])
    attempts = memory.merge(listed, events, moment - window) if memory is not None else _attempts(listed, events)
    accepted = {guid: tries for guid, tries in _accepted(listed, events).items() if guid not in attempts}
    asks: dict[str, tuple[int, float]] = {}
    if memory is not None:
        memory.forget_asks(before=(moment - RETENTION).timestamp())
        asks = memory.asks
    # which of them the journal has, asked once and off the event loop (Redis: one pipelined round trip)
    wanted = sorted({*attempts, *accepted})
    seen = await asyncio.to_thread(known, wanted) if wanted else set()
    # answered 202, so the journal held it once: not there now, it was lost (a Redis restarted empty, a new data
    # directory), and GitHub, which counts it delivered, would never send it again by itself
    lost = {guid: tries for guid, tries in accepted.items() if guid not in seen and guid not in asked}
    if lost:
        log.error("redelivery: %d deliveries GitHub lists as answered 202 are not in the journal (%s): it lost "
                  "them (a Redis that restarted empty, or a new data directory); they are asked for again",
                  len(lost), ", ".join(sorted(lost)[:10]) + (" ..." if len(lost) > 10 else ""))
        outcome.lost = sorted(lost)
        attempts = {**attempts, **lost}
    hopeless = [guid for guid, tries in attempts.items() if _tries(tries, asks, guid) >= MAX_TRIES]
    outcome.given_up = sorted(guid for guid in hopeless if guid not in seen and guid not in asked)
    for guid in outcome.given_up:  # named once, not every round
        asked[guid] = moment.timestamp() + window.total_seconds()
    chosen = _choose(attempts, seen, asked, asks)
    for index, item in enumerate(chosen):
        guid = str(item["guid"])
        if len(outcome.asked) >= MAX_PER_PASS:
            rest = chosen[index:]
            gone = sum(str(item["guid"]) in lost for item in rest)  # (listed once: not remembered for the next)
            outcome.stopped = (f"{MAX_PER_PASS} asked for in this pass; the other {len(rest) - gone} next time"
                               + (f", and {gone} the journal lost are not asked for: redeliver them from the App's "
                                  "advanced settings" if gone else ""))
            break
        if not keep_going():
            outcome.stopped = f"foldbot is stopping; the other {len(chosen) - index} wait for its next round"
            break
        try:
            await pool.redeliver(int(item["id"]))
        except GitHubError as exc:
            outcome.refused.append(guid)
            log.warning("redelivery of %s (%s, delivery %s) refused: %s", guid, item.get("event"), item["id"], exc)
            if exc.status in (403, 429):  # a rate limit: asking for more now would only deepen it
                outcome.stopped = f"GitHub answered {exc.status}; the rest wait for the next pass"
                break
            if 400 <= exc.status < 500:  # e.g. 422, 404: asking again would be refused again
                asked[guid] = moment.timestamp() + window.total_seconds()
            continue
        asked[guid] = moment.timestamp() + ASK_AGAIN_SECONDS
        if memory is not None:
            memory.asked_for(guid, moment.timestamp())
        outcome.asked.append(guid)
        log.info("asked GitHub to redeliver %s (%s, %s)", guid, item.get("event"),
                 "answered 202, lost by the journal" if guid in lost else
                 f"failed with {item.get('status_code')} {item.get('status')}")
    return outcome
