"""Failed deliveries, sent again. GitHub does not redeliver a delivery that failed (a
timeout, a 5xx, foldbot down): at start and every `FOLDBOT_REDELIVER_MINUTES`, foldbot
lists the App's deliveries of the last `FOLDBOT_REDELIVER_WINDOW_HOURS` and asks GitHub
to send again each event foldbot handles that no attempt delivered (no 2xx) and whose
GUID the journal does not know. A redelivery keeps the GUID as `X-GitHub-Delivery`, so
the journal's dedupe holds."""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from .github import GitHubError, GitHubPool

log = logging.getLogger("foldbot.redeliver")


def delivered(item: dict[str, Any]) -> bool:
    code = item.get("status_code")
    return type(code) is int and 200 <= code < 300


#: A GUID asked for is not asked for again within this many seconds (its redelivery may be on its way).
ASK_AGAIN_SECONDS = 3600


def to_redeliver(items: Iterable[dict[str, Any]], events: Iterable[str], known: Callable[[list[str]], set[str]],
                 asked: Container[str]) -> list[dict[str, Any]]:
    """One delivery (the newest attempt) per GUID that no attempt delivered, of an event
    foldbot handles, that the journal does not know and that was not asked for lately."""
    wanted = set(events)
    attempts: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        guid = item.get("guid")
        if isinstance(guid, str) and guid and type(item.get("id")) is int:
            attempts.setdefault(guid, []).append(item)
    failed = {guid: max(tries, key=lambda t: t["id"]) for guid, tries in attempts.items()
              if not any(delivered(t) for t in tries) and tries[0].get("event") in wanted and guid not in asked}
    seen = known(sorted(failed))
    return [failed[guid] for guid in sorted(failed, key=lambda g: failed[g]["id"]) if guid not in seen]


@dataclass
class Outcome:
    listed: int
    asked: list[str]
    refused: list[str]


async def redeliver_failed(pool: GitHubPool, events: Iterable[str], known: Callable[[list[str]], set[str]],
                           asked: dict[str, float], window: timedelta, now: datetime | None = None) -> Outcome:
    """List the App's deliveries within `window`, and ask for those `to_redeliver` picks
    (`asked`: GUID -> when it was asked for; one is asked for again after ASK_AGAIN_SECONDS)."""
    moment = now or datetime.now(timezone.utc)
    for guid, when in list(asked.items()):
        if moment.timestamp() - when >= ASK_AGAIN_SECONDS:
            del asked[guid]
    items = await pool.hook_deliveries(moment - window)
    outcome = Outcome(len(items), [], [])
    for item in to_redeliver(items, events, known, asked):
        guid = str(item["guid"])
        try:
            await pool.redeliver(int(item["id"]))
        except GitHubError as exc:
            outcome.refused.append(guid)
            log.warning("redelivery of %s (%s, delivery %s) refused: %s", guid, item.get("event"), item["id"], exc)
            continue
        asked[guid] = moment.timestamp()
        outcome.asked.append(guid)
        log.info("asked GitHub to redeliver %s (%s, failed with %s %s)", guid, item.get("event"),
                 item.get("status_code"), item.get("status"))
    return outcome
