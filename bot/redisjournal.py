"""The delivery journal in Redis (`FOLDBOT_REDIS_URL`), for several replicas behind one
webhook URL: one dedupe and one backlog for all of them.

Each delivery is a hash `<prefix>d:<id>` (event, payload, installation, state, attempts,
starts: handler starts; again: a copy came while its handler ran; write, wrote: the last
outcome written, by its write id, and what it did).
A replica that accepts a delivery leases it (`<prefix>leases`, a sorted set of lease
deadlines) and runs it from its own in-memory queue; a delivery no replica has room for
waits in the shared list `<prefix>queue`, and any replica with room claims it. A lease
that runs out (its replica was killed) puts the delivery back on the shared list. Done
deliveries keep their id (without the payload) for KEEP_DONE_SECONDS.

Same interface as `bot.journal.Journal`; every step is one Lua script, so two replicas
never both take one delivery."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Sequence

import redis

from .journal import KEEP_DONE_SECONDS, MAX_ATTEMPTS, RETRY_AFTER_SECONDS, Entry, JournalUnavailable, NotQueued

#: How long a replica's hold on a delivery lasts unless renewed: the replica renews what it
#: holds every RENEW_SECONDS, so a dead replica's (or a killed worker's) deliveries are taken
#: over within this, however long a live one takes to work.
LEASE_SECONDS = 2 * 60
RENEW_SECONDS = 30

# KEYS: hash, leases, queue, set aside; ARGV: id, event, payload, installation, now, deadline, hold (1: leased to
# this replica; 0: on the shared list for any worker), this replica (who holds it), again (0: one known already is
# left as it is, and its state answered: see Journal.record)
_ACCEPT = """
local function place()
  if ARGV[7] == '1' then
    redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
    redis.call('HSET', KEYS[1], 'holder', ARGV[8])
  else
    redis.call('RPUSH', KEYS[3], ARGV[1])
  end
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'event', ARGV[2], 'payload', ARGV[3], 'installation', ARGV[4], 'state', 'queued',
             'attempts', 0, 'received', ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[1])  -- (set aside once, then expired)
  place()
  return 'new'
end
if state == 'done' then return 'done' end
if ARGV[9] == '0' then
  if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 'leased' end
  return state
end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then  -- a replica has it: if its handler runs now and fails, it runs again
  redis.call('HSET', KEYS[1], 'again', 1)
  return 'leased'
end
redis.call('LREM', KEYS[3], 0, ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'queued', 'payload', ARGV[3],
           'starts', redis.call('HGET', KEYS[1], 'attempts') or 0)
place()
return 'new'
"""

# KEYS: leases, queue; ARGV: limit, deadline, prefix, this replica (who holds what it claims)
_CLAIM = """
local out = {}
while #out < tonumber(ARGV[1]) do
  local id = redis.call('LPOP', KEYS[2])
  if not id then break end
  local key = ARGV[3] .. 'd:' .. id
  local fields = redis.call('HMGET', key, 'state', 'event', 'payload', 'installation', 'attempts', 'starts')
  if fields[1] == 'queued' and fields[3] then
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    redis.call('HSET', key, 'holder', ARGV[4])
    table.insert(out, {id, fields[2], fields[3], fields[4], fields[5], fields[6]})
  end
end
return out
"""

# KEYS: hash, leases, done counter, queue, set aside (by when), retry (by when due); ARGV: id, state ('done' or 'failed'), now, keep seconds, attempts ('' or
# at least this many: a delivery set aside, as in the SQLite journal), write id ('' or the same at each try of one
# outcome), run ('' or the number `_BEGIN` gave the run it ends), MAX_ATTEMPTS, RETRY_AFTER_SECONDS (two). What
# changes nothing (0, or the first answer):
# - the same write again (a reply lost after Redis applied it, then the try again);
# - an outcome of a delivery that is not queued any more (another replica took it over, and finished it);
# - a failure of a run that is not the latest (a replica whose hold lapsed while its handler ran, failing late: the
#   replica that took the delivery over decides).
# A failure of a delivery a copy of which came while its handler ran (`again`) puts it back on the shared list
# instead, with a clean slate of unfinished starts: 2.
_FINISH = """
if ARGV[6] ~= '' and redis.call('HGET', KEYS[1], 'write') == ARGV[6] then
  return tonumber(redis.call('HGET', KEYS[1], 'wrote'))
end
if redis.call('HGET', KEYS[1], 'state') ~= 'queued' then return 0 end
if ARGV[2] ~= 'done' then
  if ARGV[7] ~= '' and redis.call('HGET', KEYS[1], 'starts') ~= ARGV[7] then return 0 end
  if redis.call('HGET', KEYS[1], 'again') == '1' then
    local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
    redis.call('HSET', KEYS[1], 'again', 0, 'starts', attempts, 'updated', ARGV[3], 'write', ARGV[6], 'wrote', 2)
    redis.call('ZREM', KEYS[2], ARGV[1])
    redis.call('LREM', KEYS[4], 0, ARGV[1])
    redis.call('RPUSH', KEYS[4], ARGV[1])
    return 2
  end
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'updated', ARGV[3], 'again', 0, 'write', ARGV[6], 'wrote', 1)
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if ARGV[2] == 'done' then
  redis.call('HDEL', KEYS[1], 'payload')
  redis.call('INCR', KEYS[3])
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'attempts', math.max(attempts, tonumber(ARGV[5])), 'starts', 0)
  redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
  redis.call('ZREM', KEYS[6], ARGV[1])  -- (the wait of an earlier failure, a copy having run it since)
elseif ARGV[2] == 'failed' then  -- run again after a wait; the last attempt: set aside
  if attempts >= tonumber(ARGV[8]) then
    redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
    redis.call('ZREM', KEYS[6], ARGV[1])
  else
    redis.call('ZADD', KEYS[6], tonumber(ARGV[3]) + tonumber(attempts == 1 and ARGV[9] or ARGV[10]), ARGV[1])
  end
else
  redis.call('ZREM', KEYS[6], ARGV[1])
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""

# KEYS: hash, leases, queue; ARGV: id, this replica, deadline. A start is counted on a delivery the journal has (one
# that expired, or was never written, gets no new hash: it would have no expiry); this run serves the copies received
# so far, and its hold is renewed. One another replica holds now (this replica's hold lapsed before its handler
# started, and that replica took it over) is not started here: -2. One whose hold lapsed and that waits on the shared
# list is taken back.
_BEGIN = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if state ~= 'queued' then return -1 end  -- finished meanwhile (by a copy): not run again
local held = redis.call('ZSCORE', KEYS[2], ARGV[1])
if held and redis.call('HGET', KEYS[1], 'holder') ~= ARGV[2] then return -2 end
if not held then
  redis.call('LREM', KEYS[3], 0, ARGV[1])
  redis.call('HSET', KEYS[1], 'holder', ARGV[2])
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], 'again', 0)
return redis.call('HINCRBY', KEYS[1], 'starts', 1)
"""

# KEYS: retry, queue, set aside; ARGV: now, prefix, MAX_ATTEMPTS. Failed deliveries whose wait is over go back on
# the shared list (one delivered again meanwhile is queued, or done, already, and one set aside stays so: left as
# they are).
_DUE = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local moved = 0
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local key = ARGV[2] .. 'd:' .. id
  local fields = redis.call('HMGET', key, 'state', 'attempts')
  if fields[1] == 'failed' and tonumber(fields[2] or 0) < tonumber(ARGV[3])
     and not redis.call('ZSCORE', KEYS[3], id) and redis.call('HEXISTS', key, 'payload') == 1 then
    redis.call('HSET', key, 'state', 'queued', 'starts', fields[2] or 0)
    redis.call('RPUSH', KEYS[2], id)
    moved = moved + 1
  end
end
return moved
"""

# KEYS: leases, queue; ARGV: prefix, this replica, ids. A replica that stops hands back what it holds: each
# delivery still leased to it (not one whose hold lapsed and another replica took over) and queued goes to the shared
# list (once), for the next replica now rather than when its hold lapses.
_HAND_BACK = """
local moved = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local fields = redis.call('HMGET', ARGV[1] .. 'd:' .. id, 'state', 'holder')
  if redis.call('ZSCORE', KEYS[1], id) and fields[1] == 'queued' and fields[2] == ARGV[2] then
    redis.call('ZREM', KEYS[1], id)
    redis.call('LREM', KEYS[2], 0, id)
    redis.call('RPUSH', KEYS[2], id)
    moved = moved + 1
  end
end
return moved
"""

# KEYS: leases; ARGV: prefix, this replica, ids. A replica that stops takes back the starts of the handlers its
# drain's deadline cut short (still its own, queued): a stop is no crash, and three of those set a delivery aside.
_UNCOUNT = """
for i = 3, #ARGV do
  local key = ARGV[1] .. 'd:' .. ARGV[i]
  local fields = redis.call('HMGET', key, 'state', 'holder', 'starts', 'attempts')
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) and fields[1] == 'queued' and fields[2] == ARGV[2]
      and tonumber(fields[3] or 0) > tonumber(fields[4] or 0) then
    redis.call('HINCRBY', key, 'starts', -1)
  end
end
return 0
"""

# KEYS: leases; ARGV: prefix, this replica, deadline, ids. Extends this replica's hold on each delivery it still
# holds; returns the queued others (their hold lapsed, and another replica may run them too): not this replica's to
# extend. (One finished meanwhile is nobody's.)
_RENEW = """
local lost = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local fields = redis.call('HMGET', ARGV[1] .. 'd:' .. id, 'state', 'holder')
  if redis.call('ZSCORE', KEYS[1], id) and fields[2] == ARGV[2] then
    redis.call('ZADD', KEYS[1], ARGV[3], id)
  elseif fields[1] == 'queued' then
    table.insert(lost, id)
  end
end
return lost
"""

# KEYS: leases, queue; ARGV: prefix, this replica, id. A delivery this replica holds goes on the shared list (one
# whose hold lapsed and that another replica took over is that replica's, not put there beside it): 1 if it did.
_RELEASE = """
if redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('HGET', ARGV[1] .. 'd:' .. ARGV[3], 'holder') == ARGV[2] then
  redis.call('ZREM', KEYS[1], ARGV[3])
  redis.call('RPUSH', KEYS[2], ARGV[3])
  return 1
end
return 0
"""

# KEYS: leases, queue; ARGV: now
_EXPIRED = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('RPUSH', KEYS[2], id)
end
return #ids
"""

# KEYS: a task's lead; ARGV: owner, milliseconds. The owner's turn lasts at least that much more.
_KEEP = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""


class RedisJournal:
    durable = True

    def __init__(self, url: str, *, prefix: str = "foldbot:", owner: str | None = None) -> None:
        """`owner`: the App (its API and id) whose deliveries this journal holds: a database another
        App's foldbot holds is refused (the two would take each other's deliveries as their own)."""
        self.url = url
        self.prefix = prefix
        self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        server = self._redis.connection_pool.connection_kwargs  # (never the URL: a password may be anywhere in it)
        #: host:port/db (or the socket's path), for people
        self.path = (f"{server['path']}" if server.get("path") else
                     f"{server.get('host')}:{server.get('port') or 6379}") + f"/{server.get('db') or 0}"
        try:
            self._redis.ping()
        except redis.RedisError as exc:
            self._redis.close()
            raise JournalUnavailable(f"cannot reach Redis at {self.path} (FOLDBOT_REDIS_URL): {exc}") from exc
        if owner is not None:
            try:
                self._redis.set(f"{prefix}owner", owner, nx=True)
                held = self._redis.get(f"{prefix}owner")
            except redis.RedisError as exc:
                self._redis.close()
                raise JournalUnavailable(f"cannot reach Redis at {self.path} (FOLDBOT_REDIS_URL): {exc}") from exc
            if held is not None and held.decode("utf-8", "replace") != owner:
                self._redis.close()
                raise JournalUnavailable(
                    f"Redis at {self.path} (FOLDBOT_REDIS_URL) holds the deliveries of another foldbot "
                    f"({held.decode('utf-8', 'replace')}), not of {owner}: give each App a database of its own "
                    "(`redis://host:6379/1`, ...); sharing one, each takes the other's deliveries as its own")
        self._accept = self._redis.register_script(_ACCEPT)
        self._claim = self._redis.register_script(_CLAIM)
        self._expired = self._redis.register_script(_EXPIRED)
        self._begin = self._redis.register_script(_BEGIN)
        self._finish = self._redis.register_script(_FINISH)
        self.leases, self.queue, self.aside = f"{prefix}leases", f"{prefix}queue", f"{prefix}aside"
        self.retry = f"{prefix}retry"
        self._due = self._redis.register_script(_DUE)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"  # one per journal
        self._keep = self._redis.register_script(_KEEP)
        self._hand_back = self._redis.register_script(_HAND_BACK)
        self._uncount = self._redis.register_script(_UNCOUNT)
        self._renew = self._redis.register_script(_RENEW)
        self._release = self._redis.register_script(_RELEASE)

    @property
    def where(self) -> str:
        """The journal, for people (log lines, `/health`): never the password."""
        return f"Redis at {self.path}"

    def durability(self) -> list[str]:
        """What in Redis's own settings would lose deliveries it holds (none said when it
        refuses `CONFIG GET`, as managed ones may: their own settings decide)."""
        try:
            config = {**self._redis.config_get("appendonly"), **self._redis.config_get("save"),
                      **self._redis.config_get("maxmemory-policy")}
        except redis.RedisError:
            return []
        out = []
        if config.get("appendonly") != "yes":
            out.append("keeps what it holds on no disk (`appendonly no`, no `save`): a restart empties it"
                       if not config.get("save") else
                       "keeps what it holds in snapshots only (`appendonly no`): a restart loses what came since the last")
        policy = config.get("maxmemory-policy", "noeviction")
        if policy != "noeviction":
            out.append(f"may evict keys to make room (`maxmemory-policy {policy}`): a delivery it evicts is lost")
        return out

    def lost(self) -> str | None:
        """(A journal in Redis has no file to lose.)"""
        return None

    def _key(self, delivery: str) -> str:
        return f"{self.prefix}d:{delivery}"

    def close(self) -> None:
        self._redis.close()

    def accept(self, delivery: str, event: str, payload: bytes, installation: int | None, *,
               hold: bool = True, again: bool = True) -> str:
        """`new` when this replica now holds the delivery (new, or waiting, or failed before;
        `hold=False`: it is on the shared list instead, in the same step), `leased` when
        a replica holds it (noted: if its handler runs now and fails, it runs again), `done`
        when it was processed."""
        now = time.time()
        result = self._accept(keys=[self._key(delivery), self.leases, self.queue, self.aside],
                              args=[delivery, event, payload, "" if installation is None else installation, now,
                                    now + LEASE_SECONDS, 1 if hold else 0, self.owner, 1 if again else 0])
        return result.decode() if isinstance(result, bytes) else str(result)

    async def record(self, delivery: str, event: str, payload: bytes, installation: int | None, *,
                     hold: bool = True, again: bool = True) -> str:
        """`accept`, off the event loop (one round trip to Redis); `hold=False` (a web process
        whose work runs elsewhere): a new delivery goes to the shared list for any worker.
        `again=False`: see Journal.record."""
        return await asyncio.to_thread(self.accept, delivery, event, payload, installation, hold=hold, again=again)

    async def mark(self, delivery: str, state: str, *, write: str = "", run: int | None = None) -> bool:
        """`done` or `failed` (`set_aside`: failed, its attempts used up), off the event loop;
        True when a failed delivery went back on the shared list instead (see `_FINISH`).
        `write`: the same id at each try of one outcome, so a try Redis applied and whose
        reply was lost is not applied again by the next. `run`: the number `begin` gave the
        run it ends; the failure of a run that is not the latest changes nothing."""
        if state not in ("done", "failed", "set_aside"):
            raise ValueError(f"a delivery is marked done, failed or set_aside, not {state!r}")
        attempts = MAX_ATTEMPTS if state == "set_aside" else None
        return await asyncio.to_thread(self._finish_queued, delivery, "done" if state == "done" else "failed",
                                       attempts, write, run)

    async def begin(self, delivery: str) -> int | None:
        """Its handler starts now (see Journal.begin): this run's number (None: Redis no longer
        has the delivery). NotQueued: it is done or failed already; it does not run."""
        run = int(await asyncio.to_thread(self._begin, keys=[self._key(delivery), self.leases, self.queue],
                                          args=[delivery, self.owner, time.time() + LEASE_SECONDS]))
        if run == -2:
            raise NotQueued("another replica took it over (this one's hold lapsed before its handler started)")
        if run < 0:
            raise NotQueued("it is done or failed already")
        return run or None

    def lead(self, task: str, seconds: float) -> bool:
        """Whether this replica does `task` (asking GitHub for failed deliveries, reconciling)
        this time: the first to ask in each `seconds` does; a dead leader's turn lapses."""
        return bool(self._redis.set(f"{self.prefix}lead:{task}", self.owner, nx=True, ex=max(1, int(seconds))))

    def keep_lead(self, task: str, seconds: float) -> bool:
        """While this replica's round of `task` runs: its turn lasts at least `seconds` more,
        so that a round longer than the turn does not let another replica start one beside
        it. False: the turn is not this replica's any more (it lapsed and another took it)."""
        return bool(self._keep(keys=[f"{self.prefix}lead:{task}"], args=[self.owner, max(1, int(seconds * 1000))]))

    async def note(self, name: str) -> str | None:
        """What `keep_note` kept under `name` (by any replica), while it lasts (off the event loop)."""
        value = await asyncio.to_thread(self._redis.get, f"{self.prefix}note:{name}")
        return value.decode() if isinstance(value, bytes) else value

    async def keep_note(self, name: str, value: str, seconds: float) -> None:
        """Keep `value` under `name` for `seconds`, for whichever replica does the task next."""
        await asyncio.to_thread(self._redis.set, f"{self.prefix}note:{name}", value, ex=max(1, int(seconds)))

    def renew(self, deliveries: set[str] | frozenset[str]) -> list[str]:
        """Extend this replica's hold on the deliveries it has that are still leased to it;
        the others (their hold lapsed: another replica may have taken them over), sorted."""
        if not deliveries:
            return []
        lost = self._renew(keys=[self.leases], args=[self.prefix, self.owner, time.time() + LEASE_SECONDS,
                                                     *sorted(deliveries)])
        return sorted(d.decode() if isinstance(d, bytes) else str(d) for d in lost)

    def release(self, delivery: str) -> None:
        """This replica has no room for a delivery it holds: it waits for any replica."""
        self._release(keys=[self.leases, self.queue], args=[self.prefix, self.owner, delivery])

    def hand_back(self, deliveries: list[str], cut: Sequence[str] = ()) -> int:
        """This replica stops: the deliveries it holds (not run, or cut short) go back on the
        shared list at once, for any replica (not when their hold lapses): how many did. The
        starts of `cut`, whose handlers the drain's deadline stopped, are not counted (see
        Journal.hand_back)."""
        if cut:
            self._uncount(keys=[self.leases], args=[self.prefix, self.owner, *cut])
        if not deliveries:
            return 0
        return int(self._hand_back(keys=[self.leases, self.queue], args=[self.prefix, self.owner, *deliveries]))

    def done(self, delivery: str) -> bool:
        return self._finish_queued(delivery, "done")

    def failed(self, delivery: str) -> bool:
        return self._finish_queued(delivery, "failed")

    def _finish_queued(self, delivery: str, state: str, attempts: int | None = None, write: str = "",
                       run: int | None = None) -> bool:
        """A queued delivery's outcome, in one step (`_FINISH`): its hold released, kept
        KEEP_DONE_SECONDS; a delivery that is not queued any more is left as it is. True:
        queued again instead (a copy came while its handler ran)."""
        return self._finish(keys=[self._key(delivery), self.leases, f"{self.prefix}done", self.queue, self.aside,
                                  self.retry],
                            args=[delivery, state, time.time(), KEEP_DONE_SECONDS,
                                  "" if attempts is None else attempts, write, "" if run is None else run,
                                  MAX_ATTEMPTS, *RETRY_AFTER_SECONDS]) == 2

    def state(self, delivery: str) -> str | None:
        value = self._redis.hget(self._key(delivery), "state")
        return value.decode() if value is not None else None

    def is_done(self, delivery: str) -> bool:
        return self.state(delivery) == "done"

    def count(self, state: str) -> int:
        if state == "done":
            return int(self._redis.get(f"{self.prefix}done") or 0)
        if state == "queued":
            return int(self._redis.llen(self.queue)) + int(self._redis.zcard(self.leases))
        raise ValueError(f"count({state!r}) is not kept in Redis")

    def pending(self, limit: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[Entry]:
        """Claim up to `limit` waiting deliveries for this replica (after putting back those
        whose lease ran out). Every delivery claimed is returned, leased to this replica: the
        caller skips those it has in hand by then (a renewal that came late), and queues the
        rest (`exclude`, a snapshot taken before this call, would drop one it let go meanwhile:
        a failure queued again, left leased to nobody's queue until the lease lapsed)."""
        if limit <= 0:
            return []
        self._expired(keys=[self.leases, self.queue], args=[time.time()])
        rows = self._claim(keys=[self.leases, self.queue],
                           args=[limit, time.time() + LEASE_SECONDS, self.prefix, self.owner])
        out = []
        for delivery, event, payload, installation, attempts, starts in rows:
            installation_id = int(installation) if installation not in (None, b"") else None
            finished = int(attempts or 0)
            out.append(Entry(delivery.decode(), event.decode(), bytes(payload), installation_id, finished,
                             max(0, int(starts or 0) - finished)))
        return out

    def waiting(self, exclude: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether a delivery waits on the shared list, for any replica (nothing is taken: `pending`
        would hold what this replica has no room for until the hold lapsed, and nobody renews it)."""
        return bool(self._redis.llen(self.queue))

    def set_aside(self, since: float) -> list[tuple[str, str]]:
        """As Journal.set_aside, for every replica (ids older than KEEP_DONE_SECONDS are dropped:
        their deliveries have expired)."""
        pipe = self._redis.pipeline()
        pipe.zremrangebyscore(self.aside, "-inf", time.time() - KEEP_DONE_SECONDS)
        pipe.zrevrangebyscore(self.aside, "+inf", since)
        ids = [i.decode() if isinstance(i, bytes) else str(i) for i in pipe.execute()[1]]
        pipe = self._redis.pipeline()
        for delivery in ids:
            pipe.hmget(self._key(delivery), "event", "state")
        return [(delivery, event.decode()) for delivery, (event, state) in zip(ids, pipe.execute())
                if event is not None and state == b"failed"]  # (not one delivered again and run since)

    def requeue_due(self, now: float) -> int:
        """As Journal.requeue_due, for every replica (in one step: each is moved once)."""
        return int(self._due(keys=[self.retry, self.queue, self.aside], args=[now, self.prefix, MAX_ATTEMPTS]))

    def requeue_failed(self) -> int:
        """Failed deliveries run again after their wait (`requeue_due`) or when redelivered; not scanned at start."""
        return 0

    def forget_old(self, now: float | None = None) -> int:
        return 0  # done and failed deliveries expire on their own

    def known(self, deliveries: list[str]) -> set[str]:
        pipe = self._redis.pipeline()
        for delivery in deliveries:
            pipe.exists(self._key(delivery))
        return {d for d, found in zip(deliveries, pipe.execute()) if found}


__all__ = ["LEASE_SECONDS", "MAX_ATTEMPTS", "RENEW_SECONDS", "RedisJournal"]
