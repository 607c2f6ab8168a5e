"""The App's webhook deliveries, as GitHub keeps them: `GET /app/hook/deliveries`
(newest first, `per_page` up to 100, `cursor` pagination through the `Link` header)
and `POST /app/hook/deliveries/{delivery_id}/attempts` (202; the stored payload is sent
again to the App's webhook URL, signed, with the same GUID as `X-GitHub-Delivery`, and
recorded as a new delivery with `redelivery: true`). Both need the App's JWT.

Setup: `app_hook(fake)` gives the fake's `AppHook`: `configure(url, secret)`,
`record(...)` (a delivery as GitHub logged it, e.g. one that failed), `await deliver(...)`
(send one now and record how it went), `deliveries` (everything, oldest first)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import aiohttp

from .api import ApiError, Call, Reply, Route, not_found
from .state import iso

DEFAULT_PER_PAGE, MAX_PER_PAGE = 30, 100


@dataclass
class HookDelivery:
    id: int
    guid: str
    event: str
    action: str | None
    payload: bytes
    status_code: int
    status: str
    delivered_at: float
    redelivery: bool = False
    installation_id: int | None = None
    repository_id: int | None = None
    duration: float = 0.01

    def item(self) -> dict[str, Any]:
        """The `hook-delivery-item` GitHub lists."""
        return {"id": self.id, "guid": self.guid, "delivered_at": iso(self.delivered_at),
                "redelivery": self.redelivery, "duration": self.duration, "status": self.status,
                "status_code": self.status_code, "event": self.event, "action": self.action,
                "installation_id": self.installation_id, "repository_id": self.repository_id,
                "throttled_at": None}


@dataclass
class AppHook:
    url: str | None = None
    secret: str | None = None
    deliveries: list[HookDelivery] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _ids: Any = field(default_factory=lambda: itertools.count(90_000_000_001))

    def configure(self, url: str, secret: str) -> None:
        self.url, self.secret = url, secret

    def record(self, event: str, payload: dict[str, Any] | bytes, *, guid: str | None = None, status_code: int = 502,
               status: str = "Invalid HTTP Response: 502", redelivery: bool = False,
               delivered_at: float | None = None) -> HookDelivery:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        data = json.loads(body) if body else {}
        delivery = HookDelivery(
            id=next(self._ids), guid=guid or str(uuid.uuid4()), event=event,
            action=data.get("action") if isinstance(data, dict) else None, payload=body, status_code=status_code,
            status=status, delivered_at=delivered_at if delivered_at is not None else time.time(),
            redelivery=redelivery, installation_id=((data.get("installation") or {}).get("id")
                                                    if isinstance(data, dict) else None),
            repository_id=((data.get("repository") or {}).get("id") if isinstance(data, dict) else None))
        self.deliveries.append(delivery)
        return delivery

    async def deliver(self, event: str, payload: dict[str, Any] | bytes, *, guid: str | None = None,
                      redelivery: bool = False) -> HookDelivery:
        """POST a delivery to the webhook URL now, as GitHub does, and record the outcome."""
        if self.url is None or self.secret is None:
            raise RuntimeError("configure() the App's webhook URL and secret first")
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        guid = guid or str(uuid.uuid4())
        headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": guid, "Content-Type": "application/json",
                   "User-Agent": "GitHub-Hookshot/fake",
                   "X-Hub-Signature-256": "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()}
        started = time.monotonic()
        try:
            async with aiohttp.ClientSession() as session:
                async with session.post(self.url, data=body, headers=headers,
                                        timeout=aiohttp.ClientTimeout(total=10)) as response:
                    code, status = response.status, "OK" if 200 <= response.status < 300 else \
                        f"Invalid HTTP Response: {response.status}"
        except (aiohttp.ClientError, asyncio.TimeoutError):
            code, status = 0, "failed to connect"
        recorded = self.record(event, body, guid=guid, status_code=code, status=status, redelivery=redelivery)
        recorded.duration = round(time.monotonic() - started, 3)
        return recorded


def app_hook(fake: Any) -> AppHook:
    """The fake's App webhook (made on first use)."""
    hook = getattr(fake, "_app_hook", None)
    if hook is None:
        hook = AppHook()
        fake._app_hook = hook
    return hook


#: GitHub keeps an App's deliveries this long: older ones are not listed, nor redelivered.
RETENTION_SECONDS = 3 * 24 * 3600


def list_deliveries(call: Call) -> Reply:
    hook = app_hook(call.fake)
    raw = call.query.get("per_page", "")
    per_page = min(max(int(raw), 1), MAX_PER_PAGE) if raw.isdigit() and raw != "0" else DEFAULT_PER_PAGE
    kept = [d for d in hook.deliveries if d.delivered_at >= time.time() - RETENTION_SECONDS]
    items = sorted(kept, key=lambda d: d.id, reverse=True)  # newest first
    cursor = call.query.get("cursor")
    if cursor:
        if not cursor.startswith("v1_") or not cursor[3:].isdigit():
            raise ApiError(400, "Invalid cursor")
        items = [d for d in items if d.id <= int(cursor[3:])]
    page, rest = items[:per_page], items[per_page:]
    headers = {}
    if rest:
        query = "&".join(f"{k}={quote(v, safe='')}" for k, v in call.query.items() if k != "cursor")
        query = f"{query}&cursor=v1_{rest[0].id}" if query else f"cursor=v1_{rest[0].id}"
        headers["link"] = f'<{call.fake.base_url}/app/hook/deliveries?{query}>; rel="next"'
    return Reply(200, [d.item() for d in page], headers=headers)


def redeliver(call: Call) -> Reply:
    hook = app_hook(call.fake)
    wanted = call.int_param("delivery_id")
    original = next((d for d in hook.deliveries if d.id == wanted), None)
    if original is None:
        raise not_found()
    if hook.url is None:
        raise ApiError(422, "The webhook has no URL")
    if original.delivered_at < time.time() - RETENTION_SECONDS:  # (GitHub's exact answer here is not documented)
        raise ApiError(422, "This delivery is too old to be redelivered")
    task = asyncio.get_running_loop().create_task(
        _redeliver(hook, original))  # GitHub answers at once and delivers after
    hook.tasks.add(task)
    task.add_done_callback(hook.tasks.discard)
    return Reply(202, {})


async def _redeliver(hook: AppHook, original: HookDelivery) -> None:
    await hook.deliver(original.event, original.payload, guid=original.guid, redelivery=True)


ROUTES = [
    Route("GET", "/app/hook/deliveries", list_deliveries, auth="app", repo=False),
    Route("POST", "/app/hook/deliveries/{delivery_id}/attempts", redeliver, auth="app", repo=False),
]
