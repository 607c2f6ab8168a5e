"""The GitHub App's HTTP side: `POST /webhook`, `GET /health`, `GET /metrics`.

A delivery is verified (HMAC over the raw body, in constant time), type-checked
(`bot.payload`), written to the journal (`bot.journal`: durable before the answer) and
answered with 202. The work runs on a bounded in-memory queue fed from the journal: in a
worker process of its own under `foldbot serve` (`bot.workerproc`; role `web` here,
`worker` there), or in this process (role `all`: tests, FOLDBOT_WORKER_PROCESS=no). A full queue is never a drop: the delivery waits in the journal and
runs when the queue has room; what a killed process left unfinished runs at the next
start. A delivery id is processed once (the journal is the dedupe, across restarts);
it is marked done only after its handler succeeded, so a redelivery of a failed one
runs it again, and so does a redelivery that came while its handler ran and failed
(`Journal.accept`). On shutdown the queue drains before the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import json
import logging
import re
import time
import uuid
from datetime import timedelta
from collections.abc import AsyncIterator, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from gidgethub import routing, sansio

from . import __version__, logfmt
from .github import Credentials, GitHub, GitHubError, GitHubPool, Permanent, unreachable
from .context import Context, Store
from .journal import MAX_ATTEMPTS, MAX_UNFINISHED, Journal, JournalLost, NotQueued

if TYPE_CHECKING:
    from .redisjournal import RedisJournal
    from .workerproc import WorkerLink
from .metrics import Metrics
from .reconcile import OUT_OF_DATE, Missed, find_missed
from .redeliver import MAX_TRIES, Memory, redeliver_failed
from .payload import FIELDS, PayloadError, check, parse
from .settings import Settings
from .states import state_key

log = logging.getLogger("foldbot.server")

#: The events foldbot handles (their fields are checked by `bot.payload`).
REQUIRED = tuple(FIELDS)


#: What a delivery id may be (GitHub's are UUIDs): it is a key, and it is logged.
_DELIVERY_ID = re.compile(r"[A-Za-z0-9._:-]{1,100}\Z")


def event_label(name: str | None) -> str:
    """The metric label of an event name: only names foldbot knows, so that requests
    cannot create series at will."""
    return name if name in REQUIRED or name == "ping" else "other"


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    if not header or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


class DeliveryLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """Log lines of one delivery, prefixed with its id so an operator can find them."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"delivery {self.extra['delivery']}: {msg}", kwargs  # type: ignore[index]


#: The longest request line or header foldbot reads (aiohttp's default); a longer one is a 400.
MAX_FIELD_SIZE = 8190


class QuietParseErrors(logging.LoggerAdapter):  # type: ignore[type-arg]
    """aiohttp's server logger, but a request it could not parse (a header over
    MAX_FIELD_SIZE, a broken request line) is one warning line, not a traceback:
    it is the client's error, answered 400."""

    def exception(self, msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            self.logger.warning("refused a request that could not be read: %s", str(exc_info.message or type(exc_info).__name__)[:200])
            return
        self.logger.exception(msg, *args, exc_info=exc_info, **kwargs)


@dataclass(frozen=True)
class Delivery:
    """A journaled delivery waiting for a worker: its body is read (`parse`) when it
    runs, so that a burst in the queue holds bytes, not payloads."""

    id: str
    event: str
    body: bytes
    installation_id: int | None
    #: how many times its handler started and did not finish (a worker process that died)
    unfinished: int = 0


class DoneView:
    """`delivery_id in state.done`: whether the journal has it processed."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def __contains__(self, delivery: object) -> bool:
        return isinstance(delivery, str) and self.journal.is_done(delivery)

    def __len__(self) -> int:
        return self.journal.count("done")


@dataclass
class AppState:
    """Per-process state; what must survive a restart is in the journal (deliveries) or
    in GitHub (reports, replies)."""

    settings: Settings
    router: routing.Router
    metrics: Metrics
    queue: asyncio.Queue[Delivery]
    journal: Journal | RedisJournal
    #: Deliveries in the in-memory queue, being processed, or whose outcome waits in `unrecorded`.
    in_flight: set[str] = field(default_factory=set)
    #: Those of them whose handler runs now (started in the journal, not finished).
    running: set[str] = field(default_factory=set)
    #: Outcomes the journal refused (a disk or Redis failure), by delivery: their deliveries
    #: stay in `in_flight`, so they are not run again, and the pump writes them again.
    unrecorded: dict[str, "Unrecorded"] = field(default_factory=dict)
    #: Why the journal last refused one of them (logged once per reason).
    unrecorded_reason: str | None = None
    #: Those of them being written now (by the pump, or a shutdown): each is written once at a time.
    recording: set[str] = field(default_factory=set)
    #: Deliveries whose outcome a handler is writing now (in a thread, which a stop does not cancel).
    marking: set[str] = field(default_factory=set)
    #: Journaled deliveries the in-memory queue had no room for: read back as it empties.
    backlog: bool = False
    #: Held while the journal is read for the queue (`refill`): one reader at a time.
    refilling: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Why the journal cannot be read or written now (None: it can); `watch_journal` clears it.
    journal_problem: str | None = None
    #: The journal's file was deleted or replaced under this process (`Journal.lost`): nothing
    #: is accepted until a restart opens it again.
    journal_lost: str | None = None
    #: Deliveries set aside (their handler cut short MAX_UNFINISHED times) in the last
    #: SET_ASIDE_SAID_SECONDS and not delivered again: (id, event), as the journal last said.
    set_aside: list[tuple[str, str]] = field(default_factory=list)
    #: A worker process that cannot write its metrics and state files (None: it can).
    files_problem: str | None = None
    store: Store = field(default_factory=Store)  # what handlers share
    pool: GitHubPool | None = None
    session: aiohttp.ClientSession | None = None
    workers: list[asyncio.Task[None]] = field(default_factory=list)
    accepting: bool = True
    #: A delivery signed with the previous webhook secret came (said once, at INFO).
    previous_secret_seen: bool = False
    #: Why GitHub does not accept foldbot's credentials (None: it does).
    credentials_problem: str | None = "not checked yet"
    credentials_checked: asyncio.Event = field(default_factory=asyncio.Event)
    background: list[asyncio.Task[None]] = field(default_factory=list)
    #: GUIDs this process asked GitHub to redeliver (or GitHub refused), and until when (epoch seconds)
    #: they are not asked for again.
    redelivery_asked: dict[str, float] = field(default_factory=dict)
    #: What this process's earlier redelivery rounds listed (a round lists only what is newer).
    redelivery_memory: Memory = field(default_factory=Memory)
    #: The journal refused this process's last redelivery memory: the next round joins it to the journal's.
    redelivery_unkept: bool = False
    #: `all`: this process answers and works; `web`: it answers, a worker process works
    #: (`bot.workerproc`); `worker`: it works and answers nothing.
    role: str = "all"
    #: Set when the journal may hold new work (the worker process's wake-up).
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: The web process's link to its worker process (role `web`).
    link: "WorkerLink | None" = None
    #: Handlers run side by side, but a delivery whose handler did not finish before runs alone.
    handlers: "Exclusive" = field(default_factory=lambda: Exclusive())

    @property
    def done(self) -> DoneView:
        return DoneView(self.journal)


class Exclusive:
    """Handlers share the worker; one that may have killed it (it started before and
    never finished) runs alone, so that when the worker dies again, only its count grows,
    not that of deliveries that happened to run beside it."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._running = 0
        self._alone = False
        self._waiting_alone = 0  # while one waits to run alone, no other handler starts (it would wait forever)

    @contextlib.asynccontextmanager
    async def hold(self, alone: bool) -> AsyncIterator[None]:
        async with self._changed:
            if alone:
                self._waiting_alone += 1
                try:
                    await self._changed.wait_for(lambda: not self._alone and self._running == 0)
                finally:
                    self._waiting_alone -= 1
                    self._changed.notify_all()  # (if it was cancelled, the others need not wait for it)
            else:
                await self._changed.wait_for(lambda: not self._alone and self._waiting_alone == 0)
            self._running += 1
            self._alone = alone
        try:
            yield
        finally:
            async with self._changed:
                self._running -= 1
                self._alone = False
                self._changed.notify_all()


class Unrecorded(NamedTuple):
    """An outcome the journal refused, to be written again."""
    outcome: str  # done, failed, set_aside
    #: the same at every try (a write Redis applied, its reply lost, is not applied a second time)
    write: str
    #: the number of the run it ends (`Journal.begin`)
    run: int | None


STATE = web.AppKey("foldbot", AppState)


def _json(code: int, **body: Any) -> web.Response:
    return web.json_response(body, status=code)


async def webhook(request: web.Request) -> web.Response:
    state = request.app[STATE]
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        state.metrics.deliveries.labels(event="unknown", outcome="too_large").inc()
        return _json(413, error=f"the body is larger than {state.settings.max_body_bytes} bytes")
    event_name = request.headers.get("X-GitHub-Event")
    signature = request.headers.get("X-Hub-Signature-256")
    if not signature_ok(state.settings.webhook_secret, body, signature):
        previous = state.settings.previous_webhook_secret
        if previous is None or not signature_ok(previous, body, signature):
            state.metrics.deliveries.labels(event="unknown", outcome="bad_signature").inc()
            log.warning("rejected a delivery with a missing or wrong X-Hub-Signature-256")
            return _json(401, error="missing or wrong X-Hub-Signature-256")
        state.metrics.previous_secret.inc()
        if not state.previous_secret_seen:
            state.previous_secret_seen = True
            log.info("a delivery is signed with GITHUB_WEBHOOK_SECRET_PREVIOUS: GitHub still has the previous secret "
                     "(foldbot_previous_secret_deliveries_total counts them; remove the variable once it stops "
                     "growing)")
    delivery_id = request.headers.get("X-GitHub-Delivery")
    if not event_name or not delivery_id or not _DELIVERY_ID.match(delivery_id):
        state.metrics.deliveries.labels(event=event_label(event_name), outcome="bad_request").inc()
        log.warning("rejected a signed delivery without a valid X-GitHub-Event or X-GitHub-Delivery header")
        return _json(400, error="X-GitHub-Event and X-GitHub-Delivery (up to 100 letters, digits, `-`, `_`, `.`, `:`) "
                                "headers are required")
    if event_name not in REQUIRED:
        try:
            data = parse(body)  # every body is JSON, even one foldbot does not handle
        except PayloadError as exc:
            state.metrics.deliveries.labels(event=event_label(event_name), outcome="bad_request").inc()
            log.warning("delivery %s: %s", delivery_id, exc)
            return _json(400, error=str(exc))
        if event_name == "ping":
            state.metrics.deliveries.labels(event="ping", outcome="ok").inc()
            zen = data.get("zen") if isinstance(data, dict) else None
            return _json(200, ok=True, zen=zen if isinstance(zen, str) else None)
        state.metrics.deliveries.labels(event="other", outcome="ignored").inc()
        return _json(202, ignored=f"foldbot does not handle `{event_name}` events")
    try:
        installation_id = check(event_name, body, need_installation=state.settings.token is None)
    except PayloadError as exc:
        state.metrics.deliveries.labels(event=event_name, outcome="bad_request").inc()
        log.warning("delivery %s: %s", delivery_id, exc)
        return _json(400, error=str(exc))
    if not state.accepting and not state.journal.durable:
        return _json(503, error="shutting down; GitHub will redeliver")
    if state.journal_lost is not None:  # a 202 would promise what a restart loses
        state.metrics.deliveries.labels(event=event_name, outcome="journal_error").inc()
        return _json(503, error="foldbot cannot record the delivery now; it is redelivered later")
    try:
        # durable before the answer; a web process holds nothing: its worker process takes it from the journal.
        # A copy of a delivery in hand is written down too: should the handler running now fail, it runs again.
        known = await state.journal.record(delivery_id, event_name, body, installation_id, hold=state.role != "web")
    except Exception as exc:  # the disk or Redis failed: not accepted, so GitHub counts it failed (and it is redelivered)
        state.metrics.deliveries.labels(event=event_name, outcome="journal_error").inc()
        log.error("delivery %s: the journal cannot record it: %s", delivery_id, exc)
        if isinstance(exc, JournalLost):  # its file deleted since the watcher last looked
            journal_gone(state, str(exc))
        else:
            journal_failed(state, "record deliveries", exc)
        return _json(503, error="foldbot cannot record the delivery now; it is redelivered later")
    if known == "done":
        state.metrics.deliveries.labels(event=event_name, outcome="duplicate").inc()
        return _json(200, duplicate=delivery_id, state="already processed")
    if known == "leased" or delivery_id in state.in_flight:  # a replica (this one too) has it in hand
        state.metrics.deliveries.labels(event=event_name, outcome="duplicate").inc()
        return _json(202, duplicate=delivery_id, state="being processed")
    if state.link is not None:
        state.link.wake()
        state.metrics.deliveries.labels(event=event_name,
                                        outcome="journaled" if known in ("new", "failed") else "duplicate").inc()
        return _json(202, queued=delivery_id)
    if not state.accepting:
        await asyncio.to_thread(state.journal.release, delivery_id)  # with Redis: another replica may take it now
        state.metrics.deliveries.labels(event=event_name, outcome="journaled").inc()
        return _json(202, queued=delivery_id, after="restart")
    if not enqueue(state, Delivery(delivery_id, event_name, body, installation_id)):
        await asyncio.to_thread(state.journal.release, delivery_id)
        state.metrics.deliveries.labels(event=event_name, outcome="backlog").inc()
        log.warning("delivery %s: the queue is full; journaled, it runs when the queue has room", delivery_id)
        return _json(202, queued=delivery_id, backlog=True)
    return _json(202, queued=delivery_id)


def enqueue(state: AppState, item: Delivery) -> bool:
    """Put a journaled delivery on the in-memory queue; False (and the backlog flag
    set) when it is full: the delivery stays queued in the journal."""
    try:
        state.queue.put_nowait(item)
    except asyncio.QueueFull:
        state.backlog = True
        return False
    state.in_flight.add(item.id)
    state.metrics.queue_depth.set(state.queue.qsize())
    return True


async def refill(state: AppState) -> int:
    """Move journaled deliveries that are not in memory onto the queue while it has
    room (at start: what a killed process left; later: the backlog). How many moved.
    The journal is read in a thread (Redis may hang for its socket timeout; the answers
    and `/health` do not wait for it), one refill at a time."""
    async with state.refilling:
        if not state.accepting:  # (a worker that waited for the lock while the drain began)
            return 0
        state.backlog = False
        moved = 0
        while True:
            room = state.queue.maxsize - state.queue.qsize()
            if room <= 0:
                if await asyncio.to_thread(state.journal.waiting, frozenset(state.in_flight)):
                    state.backlog = True
                return moved
            entries = await asyncio.to_thread(state.journal.pending, room, frozenset(state.in_flight))
            left = []
            for entry in entries:
                if entry.id in state.in_flight:  # a copy was answered and queued while the journal was read
                    continue
                if left or not enqueue(state, Delivery(entry.id, entry.event, entry.payload, entry.installation,
                                                       entry.unfinished)):
                    left.append(entry.id)  # the queue filled meanwhile: these wait for any replica
                    continue
                moved += 1
            if left:
                await asyncio.to_thread(_release, state.journal, left)
                return moved
            if len(entries) < room:
                return moved


def _release(journal: "Journal | RedisJournal", deliveries: list[str]) -> None:
    for delivery in deliveries:
        journal.release(delivery)


async def index(request: web.Request) -> web.Response:
    """`/`: what this server is; and the landing page of `foldbot manifest`'s `redirect_url`,
    where GitHub sends the browser with a one-hour `code` after registering the App."""
    code = request.query.get("code", "")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", code):
        return web.Response(text=f"foldbot {__version__}: a GitHub App's webhook server. POST /webhook, GET /health.\n")
    return web.Response(text=(
        "GitHub registered the App and sent this page a one-hour code. This server does not take new "
        "credentials while it runs: exchange the code within the hour, and start foldbot with what it gives:\n\n"
        f"  curl -X POST {request.app[STATE].settings.api_url}/app-manifests/{code}/conversions\n\n"
        "(its answer has the App's id, private key (`pem`) and webhook secret: set GITHUB_APP_ID, "
        "GITHUB_PRIVATE_KEY and GITHUB_WEBHOOK_SECRET). `foldbot register --url URL` does all of this by itself.\n"))


#: How long `/health` waits for the journal's count (a web process's; it says degraded past it).
HEALTH_READ_SECONDS = 1.0


async def health(request: web.Request) -> web.Response:
    """200 while GitHub accepts foldbot's credentials (and the worker process runs, when
    there is one), else 503 `degraded` with the reason: what an operator should look at."""
    state = request.app[STATE]
    common, broken, attention = await _health(state)
    problem = state.credentials_problem or broken or attention
    if problem is not None:
        return _json(503, ok=False, status="degraded", reason=problem, **common)
    return _json(200, ok=True, status="ok", **common)


async def live(request: web.Request) -> web.Response:
    """`/health/live`, for a container's health check or a liveness probe: 503 only while
    this process cannot do its work (its journal, its worker process), which a restart may
    mend; not for what a restart cannot change and `/health` says (a delivery set aside, the
    App's credentials refused): a probe on that restarted a working foldbot for a day."""
    common, broken, _ = await _health(request.app[STATE])
    if broken is not None:
        return _json(503, ok=False, status="degraded", reason=broken, **common)
    return _json(200, ok=True, status="ok", **common)


async def _health(state: AppState) -> tuple[dict[str, Any], str | None, str | None]:
    """What `/health` says: its fields, what stops the work here (None: nothing), and what an
    operator should look at that a restart does not mend (None: nothing)."""
    common: dict[str, Any] = {"version": __version__, "accepting": state.accepting}
    problem = state.credentials_problem
    if state.link is not None:
        common["queue_depth"] = None
        if state.journal_problem is None:  # (a failing journal is not asked again here)
            try:
                common["queue_depth"] = await asyncio.wait_for(asyncio.to_thread(state.journal.count, "queued"),
                                                               HEALTH_READ_SECONDS)
            except asyncio.TimeoutError:  # a Redis that hangs: `/health` does not wait for its socket timeout
                journal_failed(state, "be read", TimeoutError(f"no answer within {HEALTH_READ_SECONDS:g} s"))
            except Exception as exc:  # the disk or Redis: said below, as the reason
                journal_failed(state, "be read", exc)
        common["worker"] = state.link.status()
        reported = state.link.state() or {}
        common["rate_limited"] = reported.get("rate_limited", [])
        common["rate_limited_clients"] = reported.get("rate_limited_clients", len(common["rate_limited"]))
        broken = state.journal_problem or state.link.problem(set_aside=False)
        return common, broken, problem or state.link.problem()
    common["queue_depth"] = state.queue.qsize()
    short = state.pool.short_of_budget() if state.pool is not None else []
    common["rate_limited"], common["rate_limited_clients"] = short[:RATE_LIMITED_SHOWN], len(short)
    broken = state.journal_problem or unrecorded_problem(len(state.unrecorded))
    return common, broken, problem or set_aside_problem(state.set_aside)


async def metrics(request: web.Request) -> web.Response:
    state = request.app[STATE]
    # with a worker process, the web process's own series always carry process="web", worker or not
    body, content_type = state.metrics.render((state.link.metrics() or "") if state.link is not None else None)
    return web.Response(body=body, headers={"Content-Type": content_type})


async def process(state: AppState, item: Delivery) -> None:
    delivery_id = item.id
    if item.unfinished >= MAX_UNFINISHED:
        log.error("delivery %s (%s): its handler started %d times and never finished (the worker process died "
                  "each time: out of memory, or a crash in a library?); set aside as failed, not run again. Once "
                  "the cause is fixed, redeliver it (the App's advanced settings) to run it", delivery_id, item.event,
                  item.unfinished)
        await _give_up(state, item, "set_aside", "set_aside")
        await read_set_aside(state)  # said at once, as the journal has it (not if a copy came and queued it again)
        return
    async with state.handlers.hold(alone=item.unfinished > 0):
        await _process(state, item)


async def _process(state: AppState, item: Delivery) -> None:
    delivery_id = item.id
    try:
        event = sansio.Event(parse(item.body), event=item.event, delivery_id=delivery_id)
    except PayloadError as exc:  # journaled by an older foldbot, or the journal's copy is damaged
        log.error("delivery %s (%s): cannot be read: %s", delivery_id, item.event, exc)
        await _give_up(state, item, "failed", "error")
        return
    run: int | None = None
    try:
        run = await state.journal.begin(delivery_id)
    except NotQueued as exc:  # a copy of it ran and finished since it was read from the journal
        log.info("delivery %s (%s): not run: %s", delivery_id, item.event, exc)
        state.in_flight.discard(delivery_id)
        state.metrics.deliveries.labels(event=event.event, outcome="duplicate").inc()
        return
    except Exception as exc:  # the journal unreachable: it runs all the same, uncounted
        log.error("delivery %s: the journal cannot count its start (a worker it kills is not noticed): %s",
                  delivery_id, exc)
    repository = (event.data.get("repository") or {}).get("full_name") if isinstance(event.data, dict) else None
    logfmt.bind(delivery_id, repository, event.event)
    adapter = DeliveryLog(log, {"delivery": delivery_id})
    assert state.pool is not None
    gh = state.pool.for_installation(item.installation_id)
    secrets = (state.settings.webhook_secret, *filter(None, [state.settings.previous_webhook_secret]))
    context = Context(state.pool, state.metrics, delivery_id, state.store, adapter, queue=functools.partial(
        _queue_missed, state), state_keys=tuple(state_key(secret) for secret in secrets))
    started = time.monotonic()
    outcome = "ok"
    state.running.add(delivery_id)
    try:
        await state.router.dispatch(event, gh, context)
    except GitHubError as exc:
        refused = await _refused_for_good(gh, repository, exc)
        if refused is not None:  # running it again would meet the same refusal: done, what it wrote stands
            outcome = "refused"
            log.log(logging.INFO if refused.expected else logging.WARNING,
                    "delivery %s (%s): %s: %s; GitHub refuses it for good (%s), so it is done, not run again",
                    delivery_id, event.event, repository or "no repository", refused.reason, exc)
            await _mark(state, delivery_id, "done", run)
        else:
            outcome = "github_error"
            log.error("delivery %s (%s): GitHub call failed: %s", delivery_id, event.event, exc)
            await _mark(state, delivery_id, "failed", run)
    except Exception:  # a bug: keep the worker alive, keep the traceback for the operator
        outcome = "error"
        log.exception("delivery %s (%s): handler failed", delivery_id, event.event)
        await _mark(state, delivery_id, "failed", run)
    else:
        await _mark(state, delivery_id, "done", run)
    finally:
        state.running.discard(delivery_id)
        if delivery_id not in state.unrecorded:
            state.in_flight.discard(delivery_id)
        state.metrics.deliveries.labels(event=event.event, outcome=outcome).inc()
        state.metrics.processing.labels(event=event.event).observe(time.monotonic() - started)


async def _refused_for_good(gh: GitHub, repository: str | None, exc: GitHubError) -> Permanent | None:
    """`bot.github.unreachable`; None when asking fails too (the delivery fails, as before)."""
    try:
        return await unreachable(gh, repository, exc)
    except Exception as again:  # (GitHub unreachable now: the failure runs it again later)
        log.warning("could not tell whether %s is refused for good: %r", exc, again)
        return None


async def _give_up(state: AppState, item: Delivery, mark: str, outcome: str) -> None:
    """A delivery whose handler does not run: marked `mark`, counted as `outcome`."""
    await _mark(state, item.id, mark)
    if item.id not in state.unrecorded:
        state.in_flight.discard(item.id)
    state.metrics.deliveries.labels(event=event_label(item.event), outcome=outcome).inc()


async def _mark(state: AppState, delivery_id: str, outcome: str, run: int | None = None) -> None:
    """Record a delivery's outcome (`done`, `failed`, `set_aside`). One the journal refuses
    is kept (`unrecorded`) and written again by the pump; meanwhile the delivery, still
    queued in the journal, stays in hand (`in_flight`), so its handler does not run again
    (with Redis: while this replica's hold on it lasts, LEASE_SECONDS without Redis)."""
    write = uuid.uuid4().hex
    state.marking.add(delivery_id)
    try:
        again = await state.journal.mark(delivery_id, outcome, write=write, run=run)
    except Exception as exc:
        state.unrecorded[delivery_id] = Unrecorded(outcome, write, run)
        state.metrics.unrecorded.set(len(state.unrecorded))
        log.error("delivery %s: the journal cannot record its outcome (%s): %s; written again within a second, "
                  "and not run again meanwhile", delivery_id, outcome, exc)
        return
    finally:
        state.marking.discard(delivery_id)
    _queued_again(state, delivery_id, again)


def _queued_again(state: AppState, delivery_id: str, again: bool) -> None:
    """A failed delivery the journal queued again (`again`: a copy of it came while its
    handler ran) is taken from the journal at once, once out of hand."""
    if again:
        log.info("delivery %s: it was delivered again while its handler ran; it runs again", delivery_id)
        state.wake.set()


def journal_failed(state: AppState, doing: str, exc: Exception) -> None:
    """The journal failed at `doing`: `/health` says degraded, with why, until
    `watch_journal` finds it answering again (logged once, not at every failure)."""
    problem = f"the journal ({state.journal.where}) cannot {doing}: {exc}"
    if state.journal_problem is None:
        log.error("%s (/health says degraded until it answers again)", problem)
    state.journal_problem = problem


def journal_gone(state: AppState, lost: str) -> None:
    """The journal's file was deleted or replaced under foldbot (`Journal.lost`): until a
    restart `/health` says so and deliveries are answered 503 (logged once)."""
    if state.journal_lost is None:
        log.error("%s; until then deliveries are answered 503 (and asked for again after the restart)", lost)
    state.journal_problem = state.journal_lost = lost


#: How often `watch_journal` looks, and tries a journal that failed.
JOURNAL_WATCH_SECONDS = 1.0
#: How long a delivery set aside is said on `/health` (unless delivered again).
SET_ASIDE_SAID_SECONDS = 24 * 3600
#: How many of them `/health` names (the latest; the rest are counted).
SET_ASIDE_NAMED = 5
#: How many of the clients short of their rate limit `/health` lists (the rest are counted).
RATE_LIMITED_SHOWN = 20
#: How often failed deliveries whose wait is over are queued again, and the journal asked
#: which were set aside.
UPKEEP_SECONDS = 10.0
#: What it writes to try it: as large as a delivery (a full disk may still take a small write).
PROBE_NOTE = "x" * 16384


async def watch_journal(state: AppState) -> None:
    """Every second: whether the journal's file is still there (deleted under a running
    foldbot, it is lost for good: `/health` says so until a restart); while the journal is
    failing, a write and a read of it: once both go through, it is well again (logged, and
    `/health` says ok). Where deliveries are run, every 10 s: failed deliveries whose wait
    is over are queued again, and which were set aside is read."""
    upkeep = time.monotonic() + UPKEEP_SECONDS  # (start_work has just done it)
    while True:
        await asyncio.sleep(JOURNAL_WATCH_SECONDS)
        if state.role != "web" and state.journal_problem is None and time.monotonic() >= upkeep:
            upkeep = time.monotonic() + UPKEEP_SECONDS
            await retry_due(state)
            await read_set_aside(state)
        lost = state.journal.lost()
        if lost is not None:
            journal_gone(state, lost)
            continue
        if state.journal_problem is None:
            continue
        try:
            await state.journal.keep_note("journal-probe", PROBE_NOTE, 60)  # as large as a delivery
            await asyncio.to_thread(state.journal.waiting, frozenset())
        except Exception as exc:  # (still failing: said already)
            journal_failed(state, "be written or read", exc)
            continue
        log.info("the journal (%s) answers again", state.journal.where)
        state.journal_problem = None


async def retry_due(state: AppState) -> None:
    """Failed deliveries whose wait (RETRY_AFTER_SECONDS) is over are queued again, and run."""
    try:
        moved = await asyncio.to_thread(state.journal.requeue_due, time.time())
    except Exception as exc:  # said on `/health`; the watcher tries the journal every second
        journal_failed(state, "be written", exc)
        return
    if moved:
        log.info("journal: %d failed deliveries run again now (their wait is over)", moved)
        state.wake.set()


async def read_set_aside(state: AppState) -> None:
    """`state.set_aside` from the journal (which every process and replica writes)."""
    try:
        state.set_aside = await asyncio.to_thread(state.journal.set_aside, time.time() - SET_ASIDE_SAID_SECONDS)
    except Exception as exc:  # said on `/health`; the watcher tries the journal every second
        journal_failed(state, "be read", exc)
        return
    state.metrics.set_aside.set(len(state.set_aside))


def set_aside_problem(set_aside: list[tuple[str, str]], count: int | None = None) -> str | None:
    """What `/health` says of deliveries set aside (None: there are none): the latest
    SET_ASIDE_NAMED of them named, out of `count` (all of `set_aside` when not given)."""
    count = len(set_aside) if count is None else max(count, len(set_aside))
    if not count:
        return None
    named = ", ".join(f"{delivery} ({event})" for delivery, event in set_aside[:SET_ASIDE_NAMED])
    shown = min(len(set_aside), SET_ASIDE_NAMED)
    more = f" and {count - shown} more" if count > shown else ""
    return (f"{count} deliveries were set aside in the last 24 h, their handler failed, or was cut "
            f"short (the worker process died), {MAX_ATTEMPTS} times each: {named}{more}; see the log, and once "
            f"the cause is fixed redeliver them (the App's advanced settings)")


def unrecorded_problem(count: int) -> str | None:
    """What `/health` says while the journal refuses outcomes (None: it does not)."""
    if not count:
        return None
    return (f"the journal refuses to record the outcomes of {count} deliveries (see the log); they are not run "
            f"again, and are written again every second")


async def record_outcomes(state: AppState) -> None:
    """Write again the outcomes the journal refused, oldest first, until it refuses one.
    Each stays in `unrecorded` until it is written (`/health` and a shutdown see it while it
    is), and is written by one caller at a time (the pump and a shutdown may both be here:
    an outcome is written once, not twice)."""
    for delivery_id in list(state.unrecorded):
        pending = state.unrecorded.get(delivery_id)
        if pending is None or delivery_id in state.recording:  # written meanwhile, or being written
            continue
        state.recording.add(delivery_id)
        try:
            again = await state.journal.mark(delivery_id, pending.outcome, write=pending.write, run=pending.run)
        except Exception as exc:
            if str(exc) != state.unrecorded_reason:  # once per reason, not every second
                state.unrecorded_reason = str(exc)
                log.error("journal: %d outcomes wait to be written (the journal refuses them: %s)",
                          len(state.unrecorded), exc)
            return
        finally:
            state.recording.discard(delivery_id)
        del state.unrecorded[delivery_id]
        state.metrics.unrecorded.set(len(state.unrecorded))
        state.in_flight.discard(delivery_id)
        log.info("delivery %s: its outcome (%s) is recorded now", delivery_id, pending.outcome)
        _queued_again(state, delivery_id, again)
    state.unrecorded_reason = None


async def check_credentials(state: AppState) -> None:
    """Ask GitHub whether it accepts foldbot's credentials; while it does not, `/health`
    says degraded with the reason, and it is asked again every `credentials_recheck_seconds`."""
    assert state.pool is not None
    while True:
        try:
            problem = await asyncio.wait_for(state.pool.check_credentials(), timeout=15)
        except asyncio.TimeoutError:
            problem = "GitHub did not answer the credentials check within 15s"
        was = state.credentials_problem
        state.credentials_problem = problem
        state.metrics.credentials_ok.set(0 if problem else 1)
        state.credentials_checked.set()
        if problem is None:
            if was is not None:
                log.info("credentials: GitHub accepts them")
            return
        if problem != was:
            log.error("credentials: %s; /health answers 503 until GitHub accepts them", problem)
        await asyncio.sleep(state.settings.credentials_recheck_seconds)


async def redeliver_loop(state: AppState) -> None:
    """At start (once the server listens) and every `redeliver_minutes`: ask GitHub to
    redeliver the failed deliveries foldbot has not processed (`bot.redeliver`); with
    several replicas, one of them each time (`lead`). What a round listed and asked for is
    kept in the journal for the next round, whichever process or replica runs it."""
    assert state.pool is not None
    settings = state.settings
    window = timedelta(hours=settings.redeliver_window_hours)
    await asyncio.sleep(settings.redeliver_first_seconds)
    while True:
        try:
            if state.credentials_problem is None and state.accepting and \
                    await asyncio.to_thread(state.journal.lead, "redeliver", settings.redeliver_minutes * 60 * 0.9):
                await recall_redelivery(state)
                try:
                    async with holding_lead(state, "redeliver"):  # (stopping: a redelivery would find nobody)
                        outcome = await redeliver_failed(state.pool, REQUIRED, state.journal.known,
                                                         state.redelivery_asked, window, memory=state.redelivery_memory,
                                                         keep_going=lambda: state.accepting)
                finally:  # what it asked for before a failure is kept too
                    await keep_redelivery(state, window + timedelta(minutes=settings.redeliver_minutes))
                state.metrics.redeliveries.inc(len(outcome.asked))
                log.info("redelivery: %d deliveries listed, %d asked again%s", outcome.listed, len(outcome.asked),
                         f", {len(outcome.refused)} refused" if outcome.refused else "")
                if outcome.stopped:
                    log.warning("redelivery: the pass stopped early: %s", outcome.stopped)
                if outcome.given_up:
                    log.warning("redelivery: %d deliveries failed %d times and are not asked for again (%s); "
                                "once the cause is fixed, redeliver them from the App's advanced settings",
                                len(outcome.given_up), MAX_TRIES, ", ".join(outcome.given_up[:10]))
        except (GitHubError, aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("redelivery: could not list the App's deliveries: %s", exc)
        except Exception:  # the journal (Redis away), or a bug: the next round comes all the same
            log.exception("redelivery: the round failed; the next one in %g minutes", settings.redeliver_minutes)
        await asyncio.sleep(settings.redeliver_minutes * 60)


#: The note in the journal where a redelivery round leaves what the next one needs.
REDELIVERY_NOTE = "redeliver"


def redelivery_source(state: AppState) -> str:
    """Which App's deliveries a redelivery memory is of (its ids mean nothing to another)."""
    assert state.pool is not None
    return f"{state.settings.api_url} app {state.pool.credentials.app_id}"


async def recall_redelivery(state: AppState) -> None:
    """What the last round kept in the journal (it may have run in another process or
    replica, or before a restart) replaces this process's own memory of it; when this
    process could not keep its own last time, the two are joined (`Memory.union`, and
    every GUID asked for by either), as either may be the later."""
    try:
        text = await state.journal.note(REDELIVERY_NOTE)
    except Exception as exc:  # the disk or Redis failed
        log.error("redelivery: cannot read what the last round kept (%s); this round goes by this process's memory",
                  exc)
        return
    if text is None:
        return
    try:
        recalled = Memory.loads(text, redelivery_source(state))
    except ValueError as exc:  # the next keep_redelivery writes it anew
        log.error("redelivery: what the last round kept is unreadable (%s); this round goes by this process's memory "
                  "(after a restart: it lists the whole window)", exc)
        return
    if recalled is None:
        log.info("redelivery: what the journal kept is of another App or GitHub; this round goes by this process's "
                 "memory (after a restart: it lists the whole window)")
        return
    memory, asked = recalled
    if state.redelivery_unkept:
        memory = memory.union(state.redelivery_memory)
        for guid, until in state.redelivery_asked.items():
            asked[guid] = max(until, asked.get(guid, until))
    state.redelivery_memory = memory
    state.redelivery_asked.clear()
    state.redelivery_asked.update(asked)


async def keep_redelivery(state: AppState, lasting: timedelta) -> None:
    state.redelivery_memory.kept = time.time()
    try:
        await state.journal.keep_note(REDELIVERY_NOTE, state.redelivery_memory.dumps(state.redelivery_asked,
                                                                                      redelivery_source(state)),
                                      lasting.total_seconds())
    except Exception as exc:  # the next round here goes by this process's memory; another replica's lists anew
        log.error("redelivery: cannot keep what this round listed and asked for: %s", exc)
        state.redelivery_unkept = True
    else:
        state.redelivery_unkept = False


#: While a round of a led task runs, its turn is extended this often, to last LEAD_HOLD_SECONDS more.
LEAD_RENEW_SECONDS = 30.0
LEAD_HOLD_SECONDS = 90


@contextlib.asynccontextmanager
async def holding_lead(state: AppState, task: str) -> AsyncIterator[None]:
    """The turn at `task` lasts as long as the round does (with several replicas, another
    one would start a round beside a long one once the turn's time ran out)."""
    async def keep() -> None:
        while True:
            await asyncio.sleep(LEAD_RENEW_SECONDS)
            try:
                if not await asyncio.to_thread(state.journal.keep_lead, task, LEAD_HOLD_SECONDS):
                    log.warning("%s: this replica's turn lapsed while its round ran; another replica may run one too",
                                task)
                    return
            except Exception as exc:  # Redis is away: the turn lasts its own time
                log.error("%s: cannot extend this replica's turn: %s", task, exc)

    keeping = asyncio.create_task(keep())
    try:
        yield
    finally:
        keeping.cancel()
        await asyncio.gather(keeping, return_exceptions=True)


async def reconcile_loop(state: AppState) -> None:
    """Every `reconcile_minutes` (the first time after a redelivery had its chance): lane
    runs whose `workflow_run` delivery never came (`bot.reconcile`) are journaled as that
    delivery would have been, under the id `reconcile-<run>-<attempt>`, and so reported
    once, by whichever replica takes them."""
    assert state.pool is not None
    settings = state.settings
    await asyncio.sleep(settings.redeliver_first_seconds + settings.reconcile_minutes * 60 / 10)
    while True:
        try:
            if state.credentials_problem is None and \
                    await asyncio.to_thread(state.journal.lead, "reconcile", settings.reconcile_minutes * 60 * 0.9):
                async with holding_lead(state, "reconcile"):
                    found = await find_missed(state.pool, await state.pool.bot_login(), log=log.warning)
                taken = [queued for item in found if (queued := await _queue_missed(state, item))]
                lost = [item for item in taken if not item.again]
                if lost:  # (not those reconciled already, whose report did not count them: not a lane any more, ...)
                    log.warning("reconcile: %d lane runs are not among the runs the dashboard says were reported "
                                "(their delivery never came, or two replicas wrote the dashboard at once); they are "
                                "reported now: %s", len(lost), ", ".join(f"{m.repo} run {m.run['id']}" for m in lost))
                for item in taken:
                    if item.again:
                        log.info("reconcile: %s: the dashboard %s; run %s of %s reports there again", item.repo,
                                 OUT_OF_DATE[item.again.split("-", 1)[0]], item.run["id"], item.run.get("path"))
        except (GitHubError, aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log.error("reconcile: could not list the installations' lane runs: %s", exc)
        except Exception:  # the journal (Redis away), or a bug: the next round comes all the same
            log.exception("reconcile: the round failed; the next one in %g minutes", settings.reconcile_minutes)
        await asyncio.sleep(settings.reconcile_minutes * 60)


async def _queue_missed(state: AppState, item: Missed) -> Missed | None:
    """Journal and queue a missed run's delivery: the one queued, None when the journal knows it
    already. A round's run reported once (done) and missed again is the dashboard's record of it
    lost (`Missed.lost`): queued again under that id."""
    known = await accept_synthetic(state, "workflow_run", item.payload(), item.installation_id, item.delivery_id)
    if known == "new":
        return item
    if known != "done" or item.again or item.found_by:  # (an installation event's copy queues nothing more)
        return None
    again = item.lost()
    new = await accept_synthetic(state, "workflow_run", again.payload(), again.installation_id, again.delivery_id)
    return again if new == "new" else None


async def accept_synthetic(state: AppState, event: str, data: dict[str, Any], installation_id: int,
                           delivery_id: str) -> str:
    """Journal and queue a delivery foldbot makes itself, as a webhook delivery is: "new"; else
    what the journal knows of it already: "done", "queued" (this process has it in flight, or
    it waits), "leased" (another replica holds it: Redis), "failed" (it runs again after its wait;
    one set aside is not made to fail again each round)."""
    if delivery_id in state.in_flight:  # queued from the last round, not processed yet
        return "queued"
    body = json.dumps(data).encode()
    known = await state.journal.record(delivery_id, event, body, installation_id, again=False)
    if known != "new":
        return known
    if delivery_id in state.in_flight:  # (queued by the pump while it was written)
        return "queued"
    if not enqueue(state, Delivery(delivery_id, event, body, installation_id)):
        await asyncio.to_thread(state.journal.release, delivery_id)
    return "new"


async def pump(state: AppState, every: float = 1.0) -> None:
    """Take what waits in the journal whenever the queue has room: with Redis, what other
    replicas had no room for, and what a dead replica's lease left; in a worker process,
    what its web process journaled (it wakes this at once)."""
    while True:
        with contextlib.suppress(asyncio.TimeoutError):  # woken, or a second passed: either way, look
            await asyncio.wait_for(state.wake.wait(), timeout=every)
        state.wake.clear()
        if state.unrecorded:
            await record_outcomes(state)
        if state.accepting and state.queue.qsize() < state.queue.maxsize:
            try:
                await refill(state)
            except Exception as exc:  # the journal's store unreachable for a moment: try again
                journal_failed(state, "be read", exc)


async def renew_leases(state: AppState) -> None:
    """With Redis: keep this replica's hold on the deliveries it has queued or in hand."""
    from .redisjournal import LEASE_SECONDS, RENEW_SECONDS
    said: dict[bool, set[str]] = {True: set(), False: set()}  # lapsed holds in the log: of running, of waiting ones
    while True:
        await asyncio.sleep(RENEW_SECONDS)
        # started here: running, or finished with its outcome not written yet (one started after this
        # snapshot holds again: `begin` renews or refuses it)
        running = frozenset(state.running) | frozenset(state.unrecorded)
        try:
            lapsed = await asyncio.to_thread(state.journal.renew, frozenset(state.in_flight))
        except Exception as exc:  # Redis unreachable for a moment: the leases last LEASE_SECONDS
            log.error("journal: cannot renew the leases of %d deliveries: %s", len(state.in_flight), exc)
            continue
        for ids in said.values():
            ids &= state.in_flight
        # (not one let go meanwhile; each named once as waiting, and once more if it lapses again once started)
        new = [d for d in lapsed if d in state.in_flight and d not in said[d in running]]
        for d in new:
            said[d in running].add(d)
        # one whose handler runs may run beside another replica's; one not started yet is started
        # here only if no other replica took it over (`begin`)
        if at_risk := [d for d in new if d in running]:
            log.warning("journal: this replica's hold on %d deliveries whose handlers started here lapsed (not "
                        "renewed within %d s: Redis or this process was stalled), so another replica may run them "
                        "too: %s",
                        len(at_risk), LEASE_SECONDS, ", ".join(at_risk))
        if waiting := [d for d in new if d not in running]:
            log.info("journal: this replica's hold on %d deliveries queued here lapsed before their handlers "
                     "started (not renewed within %d s); each is started here only if no other replica took it "
                     "over: %s", len(waiting), LEASE_SECONDS, ", ".join(waiting))


async def worker(state: AppState) -> None:
    while True:
        item = await state.queue.get()
        try:
            await process(state, item)
        finally:
            if state.backlog and state.accepting:  # before task_done: the queue never looks finished while the
                # journal holds more (when stopping, what waits there stays for the next start)
                try:
                    await refill(state)
                except Exception as exc:  # the journal unreadable for a moment: the pump tries again within 1 s
                    journal_failed(state, "be read", exc)
            state.queue.task_done()
            state.metrics.queue_depth.set(state.queue.qsize())


PoolFactory = Callable[[aiohttp.ClientSession, Metrics], GitHubPool]


def open_journal(settings: Settings, role: str) -> "Journal | RedisJournal":
    if settings.redis_url:
        from .redisjournal import RedisJournal
        # (an App's: a token says nothing of whose deliveries they are, and one moving to an App would be refused)
        owner = f"app {settings.app_id} of {settings.api_url}" if settings.app_id else None
        return RedisJournal(settings.redis_url, owner=owner)
    # The web process's commits wait for the disk; the worker's need not, and it copies the WAL
    # back into the database file (a checkpoint: several ms) so that no answer waits for that.
    return Journal(settings.data_dir, fsync=role != "worker", checkpoints=role != "web")


def new_state(settings: Settings, router: routing.Router, role: str) -> AppState:
    journal = open_journal(settings, role)
    if role != "worker" and settings.redis_url:  # (said once, by the process that answers)
        for risk in journal.durability():  # type: ignore[union-attr]
            log.warning("%s, the journal, %s; GitHub does not redeliver what it answered 202: run Redis with "
                        "`appendonly yes` and `maxmemory-policy noeviction`", journal.where, risk)
    return AppState(settings, router, Metrics(), asyncio.Queue(maxsize=settings.queue_size), journal, role=role)


async def connect(state: AppState, pool_factory: PoolFactory | None = None) -> None:
    """The GitHub session and the credentials check; returns once GitHub answered it
    (or after 20 s: `/health` says why)."""
    settings = state.settings
    state.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
    if pool_factory is not None:
        state.pool = pool_factory(state.session, state.metrics)
    else:
        credentials = Credentials(app_id=settings.app_id, private_key=settings.private_key, token=settings.token)
        state.pool = GitHubPool(state.session, credentials, base_url=settings.api_url, metrics=state.metrics)
    if settings.log_format == "json" or settings.log_level:
        logfmt.configure(settings.log_format, settings.log_level or "INFO")
    state.background.append(asyncio.create_task(check_credentials(state)))
    with contextlib.suppress(asyncio.TimeoutError):  # the first answer before the first request, or after 20 s
        await asyncio.wait_for(state.credentials_checked.wait(), timeout=20)  # `/health` says it is not checked yet


async def start_work(state: AppState) -> None:
    """Resume what the journal holds, and start the workers and the loops that feed them."""
    settings = state.settings
    assert state.pool is not None
    forgotten = retried = resumed = 0
    try:
        forgotten, retried = state.journal.forget_old(), state.journal.requeue_failed()
        resumed = await refill(state)
    except Exception as exc:  # Redis went away since the journal was opened (or the disk failed): said on
        journal_failed(state, "be read or written", exc)  # `/health`; the pump reads it again every second
    await read_set_aside(state)
    if resumed or retried or forgotten:
        log.info("journal %s: %d unfinished deliveries resumed (%d of them failed before), %d old ones forgotten",
                 state.journal.where, resumed, retried, forgotten)
    state.workers = [asyncio.create_task(worker(state)) for _ in range(settings.workers)]
    state.background.append(asyncio.create_task(pump(state)))
    state.background.append(asyncio.create_task(watch_journal(state)))
    if settings.redis_url:
        state.background.append(asyncio.create_task(renew_leases(state)))
    if state.pool.credentials.is_app and settings.redeliver_minutes > 0:
        state.background.append(asyncio.create_task(redeliver_loop(state)))
    if state.pool.credentials.is_app and settings.reconcile_minutes > 0:
        state.background.append(asyncio.create_task(reconcile_loop(state)))


async def drain_work(state: AppState) -> None:
    state.accepting = False
    deadline = time.monotonic() + state.settings.drain_seconds
    try:
        await asyncio.wait_for(state.queue.join(), timeout=state.settings.drain_seconds)
    except asyncio.TimeoutError:
        log.error("shutdown: %d deliveries were not processed in %g s (%d of them not started); they stay queued "
                  "in the journal (%s)", len(state.in_flight - set(state.unrecorded) - state.marking),
                  state.settings.drain_seconds, state.queue.qsize(), state.journal.where)
    # a refusal of a moment does not make these run again (and count as unfinished); not past the deadline (a hung
    # Redis would add its socket timeout to every stop)
    while state.unrecorded and time.monotonic() < deadline:
        await record_outcomes(state)
        if not state.unrecorded or time.monotonic() >= deadline:
            break
        await asyncio.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    if state.unrecorded:
        log.error("shutdown: the journal refused the outcomes of %d deliveries (%s); they stay queued in it and run "
                  "again (at the next start; with Redis, in any replica once this one's hold lapses)",
                  len(state.unrecorded), ", ".join(sorted(state.unrecorded)))


async def stop(state: AppState) -> None:
    # (taken before the handlers cut short let go of theirs; not those whose outcome is being written: it lands, or
    # their hold lapses)
    held = state.in_flight - set(state.unrecorded) - state.marking
    cut = held & state.running  # (their handlers are stopped here: no crash, not counted as one)
    for task in state.workers + state.background:
        task.cancel()
    await asyncio.gather(*state.workers, *state.background, return_exceptions=True)
    await hand_back(state, held, cut)
    if state.journal.durable:  # an in-memory one stays readable (tests look at it)
        state.journal.close()
    if state.session is not None:
        await state.session.close()


async def hand_back(state: AppState, deliveries: set[str], cut: Collection[str] = ()) -> None:
    """At a stop, what this process held (queued here, or its handler cut short by the
    drain's deadline) goes back to the shared queue for the other replicas at once, instead
    of when its hold lapses (LEASE_SECONDS); one finished meanwhile is not queued. Not those
    whose outcome the journal refused: their handler ran to the end (they run again only once
    the hold lapses, as said)."""
    held = sorted(deliveries)
    if not held:
        return
    try:
        moved = await asyncio.wait_for(asyncio.to_thread(state.journal.hand_back, held, sorted(cut)), HAND_BACK_SECONDS)
    except Exception as exc:  # (Redis gone or hung): they run again once the hold lapses
        more = f" and {len(held) - 10} more" if len(held) > 10 else ""
        log.error("shutdown: cannot hand back the %d deliveries this process holds (%s%s): %s; another replica takes "
                  "them once their hold lapses", len(held), ", ".join(held[:10]), more,
                  str(exc) or f"{type(exc).__name__}, within {HAND_BACK_SECONDS:g} s")
        return
    if moved:
        log.info("shutdown: %d deliveries this process held went back to the shared queue for the other replicas",
                 moved)


#: How long a stop waits for the journal to take back what the process holds.
HAND_BACK_SECONDS = 2.0


def create_app(settings: Settings, router: routing.Router, *,
               pool_factory: PoolFactory | None = None) -> web.Application:
    """The aiohttp application, dispatching deliveries to `router` (`handlers.router`).
    With `settings.worker_process`, the work runs in a process of its own that this one
    starts and watches (`bot.workerproc`): this process only answers."""
    app = web.Application(client_max_size=settings.max_body_bytes,
                          handler_args={"max_field_size": MAX_FIELD_SIZE, "max_line_size": MAX_FIELD_SIZE,
                                        "logger": QuietParseErrors(logging.getLogger("aiohttp.server"), {})})
    if settings.worker_process and settings.data_dir is None:
        raise ValueError("a worker process needs a data directory (its journal, its metrics and its lock)")
    state = new_state(settings, router, "web" if settings.worker_process else "all")
    app[STATE] = state

    async def start(app: web.Application) -> None:
        await connect(state, pool_factory)
        if state.role == "web":
            from .workerproc import WorkerLink
            state.link = WorkerLink(settings)
            await state.link.start()
            state.background.append(asyncio.create_task(watch_journal(state)))
        else:
            await start_work(state)

    async def drain(app: web.Application) -> None:
        if state.link is not None:
            state.accepting = False
            await state.link.stop()
        else:
            await drain_work(state)

    async def cleanup(app: web.Application) -> None:
        await stop(state)

    app.on_startup.append(start)
    app.on_shutdown.append(drain)
    app.on_cleanup.append(cleanup)
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/health", health)
    app.router.add_get("/health/live", live)
    app.router.add_get("/", index)
    app.router.add_get("/metrics", metrics)
    return app
