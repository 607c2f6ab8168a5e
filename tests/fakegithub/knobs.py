"""Failure injection and rate limiting.

Every knob can be restricted to matching requests with ``method`` (exact, case
insensitive) and ``path`` (a regular expression searched in the raw request path,
without the query string).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

SECONDARY_DOCS = (
    "https://docs.github.com/free-pro-team@latest/rest/overview/"
    "rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
PRIMARY_DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"
)
RATE_WINDOW = 3600


@dataclass(frozen=True)
class RequestFilter:
    method: str | None = None
    path: str | None = None

    def matches(self, method: str, path: str) -> bool:
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return self.path is None or re.search(self.path, path) is not None


@dataclass
class Injected:
    """An error response produced by a knob instead of the real handler."""

    status: int
    message: str | None  # None: a plain error with the status' reason phrase
    documentation_url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    secondary_rate_limit: bool = False


@dataclass
class _Rule:
    filter: RequestFilter
    make: Callable[[], Injected]
    remaining: int | None  # None: unlimited
    probability: float = 1.0


@dataclass
class _Latency:
    filter: RequestFilter
    seconds: float


@dataclass
class Meeting:
    """The first `size` matching requests, each held until all of them have arrived (or
    `timeout` passed: then the meeting is broken, matches no more, and the held requests go
    on; the fake lists it in `broken_meetings` for the test to fail on)."""

    filter: RequestFilter
    size: int
    timeout: float
    arrived: int = 0
    broken: bool = False
    complete: asyncio.Event = field(default_factory=asyncio.Event)

    def open(self) -> bool:
        return not self.broken and self.arrived < self.size

    async def attend(self) -> bool:
        """Wait for the others; False when they did not all come in time."""
        self.arrived += 1
        if self.arrived == self.size:
            self.complete.set()
        try:
            await asyncio.wait_for(self.complete.wait(), self.timeout)
        except asyncio.TimeoutError:
            self.broken = True
            self.complete.set()  # the others held go on too
            return False
        return not self.broken

    def __str__(self) -> str:
        return (f"meet({self.size}) on {self.filter.method or '*'} {self.filter.path or '*'}: {self.arrived} of "
                f"{self.size} arrived in {self.timeout:g} s")


class Knobs:
    """Deterministic (seeded) failure and latency injection."""

    def __init__(self, *, seed: int = 0) -> None:
        self.random = random.Random(seed)
        self._rules: list[_Rule] = []
        self._after: list[_Rule] = []  # failures answered after the request was carried out
        self._cuts: list[tuple[RequestFilter, str, list[int]]] = []  # (which, how, [how many left])
        self._latencies: list[_Latency] = []
        self._meetings: list[Meeting] = []

    def fail_next(
        self,
        n: int = 1,
        status: int = 502,
        *,
        method: str | None = None,
        path: str | None = None,
        message: str | None = None,
    ) -> None:
        """The next ``n`` matching requests fail with ``status``."""
        self._rules.append(
            _Rule(RequestFilter(method, path), lambda: Injected(status, message), remaining=n)
        )

    def fail_after(
        self,
        n: int = 1,
        status: int = 502,
        *,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        """The next ``n`` matching requests are carried out, and then answered ``status``
        (GitHub's edge giving up on a backend that did the work: the caller cannot tell)."""
        self._after.append(_Rule(RequestFilter(method, path), lambda: Injected(status, None), remaining=n))

    def cut_next(self, n: int = 1, how: str = "drop", *, method: str | None = None, path: str | None = None) -> None:
        """The next ``n`` matching requests lose their connection: ``drop`` closes it before the
        request is carried out, ``drop_after`` after (no answer either way), ``truncate`` sends
        the answer's headers and half its body, then closes it (a transfer cut short)."""
        if how not in ("drop", "drop_after", "truncate"):
            raise ValueError(f"cut_next: how is drop, drop_after or truncate, not {how!r}")
        self._cuts.append((RequestFilter(method, path), how, [n]))

    def take_cut(self, method: str, path: str) -> str | None:
        for which, how, left in self._cuts:
            if left[0] > 0 and which.matches(method, path):
                left[0] -= 1
                return how
        return None

    def take_failure_after(self, method: str, path: str) -> Injected | None:
        for rule in self._after:
            if rule.filter.matches(method, path) and rule.remaining:
                rule.remaining -= 1
                return rule.make()
        return None

    def set_error_rate(
        self,
        rate: float,
        status: int = 502,
        *,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        """Each matching request fails with probability ``rate`` (seeded random)."""
        self._rules = [rule for rule in self._rules if rule.remaining is not None]
        if rate > 0:
            self._rules.append(
                _Rule(
                    RequestFilter(method, path),
                    lambda: Injected(status, None),
                    remaining=None,
                    probability=rate,
                )
            )

    def secondary_rate_limit(
        self,
        n: int = 1,
        retry_after: int | None = 1,
        *,
        status: int = 403,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        """The next ``n`` matching requests hit a secondary rate limit (403 or 429).

        ``retry_after=None`` omits the ``Retry-After`` header, as GitHub sometimes does.
        """
        headers = {} if retry_after is None else {"retry-after": str(retry_after)}
        self._rules.append(
            _Rule(
                RequestFilter(method, path),
                lambda: Injected(
                    status,
                    "You have exceeded a secondary rate limit. Please wait a few minutes "
                    "before you try again.",
                    documentation_url=SECONDARY_DOCS,
                    headers=dict(headers),
                    secondary_rate_limit=True,
                ),
                remaining=n,
            )
        )

    def set_latency(
        self, seconds: float, *, method: str | None = None, path: str | None = None
    ) -> None:
        """Delay matching responses by ``seconds`` (the latest matching setting wins)."""
        self._latencies.append(_Latency(RequestFilter(method, path), seconds))

    def meet(self, size: int, *, method: str | None = None, path: str | None = None, timeout: float = 30) -> None:
        """Hold the next ``size`` matching requests until all of them have arrived (for
        races that must overlap whatever the machine's load)."""
        self._meetings.append(Meeting(RequestFilter(method, path), size, timeout))

    def meeting_for(self, method: str, path: str) -> Meeting | None:
        for meeting in self._meetings:
            if meeting.open() and meeting.filter.matches(method, path):
                return meeting
        return None

    def clear(self) -> None:
        self._rules.clear()
        self._after.clear()
        self._cuts.clear()
        self._latencies.clear()
        for meeting in self._meetings:  # what they hold goes on
            meeting.complete.set()
        self._meetings.clear()

    def latency_for(self, method: str, path: str) -> float:
        for latency in reversed(self._latencies):
            if latency.filter.matches(method, path):
                return latency.seconds
        return 0.0

    def take_failure(self, method: str, path: str) -> Injected | None:
        for rule in self._rules:
            if not rule.filter.matches(method, path):
                continue
            if rule.remaining is not None:
                if rule.remaining <= 0:
                    continue
                rule.remaining -= 1
                return rule.make()
            if self.random.random() < rule.probability:
                return rule.make()
        self._rules = [rule for rule in self._rules if rule.remaining is None or rule.remaining > 0]
        return None


@dataclass
class RateBucket:
    limit: int
    used: int
    reset_at: int

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    def headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": str(self.reset_at),
            "x-ratelimit-used": str(self.used),
            "x-ratelimit-resource": "core",
        }

    def as_json(self) -> dict[str, int]:
        return {
            "limit": self.limit,
            "used": self.used,
            "remaining": self.remaining,
            "reset": self.reset_at,
        }


class RateLimiter:
    """GitHub's primary ("core") rate limit, one hourly bucket per principal."""

    def __init__(self, limits: Mapping[str, int], clock: Callable[[], float] = time.time) -> None:
        self._limits = dict(limits)
        self._clock = clock
        self._buckets: dict[str, RateBucket] = {}
        self._exhausted_until: float | None = None

    def bucket(self, key: str) -> RateBucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None or now >= bucket.reset_at:
            kind = key.split(":", 1)[0]
            bucket = RateBucket(self._limits.get(kind, 5000), 0, int(now) + RATE_WINDOW)
            self._buckets[key] = bucket
        if self._exhausted_until is not None and now < self._exhausted_until:
            bucket.used = bucket.limit
            bucket.reset_at = int(self._exhausted_until)
        return bucket

    def charge(self, key: str) -> None:
        bucket = self.bucket(key)
        bucket.used = min(bucket.used + 1, bucket.limit)

    def exhaust(self, reset_in: float = 60.0) -> None:
        """Use up every bucket (present and future) until ``reset_in`` seconds from now."""
        self._exhausted_until = self._clock() + reset_in
        for bucket in self._buckets.values():
            bucket.used = bucket.limit
            bucket.reset_at = int(self._exhausted_until)

    def restore(self) -> None:
        """Undo :meth:`exhaust` and start every bucket afresh."""
        self._exhausted_until = None
        self._buckets.clear()
