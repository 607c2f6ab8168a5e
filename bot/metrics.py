"""Prometheus metrics of one foldbot process (a registry of its own, so tests and
several apps in one process do not collide). Every label value comes from a fixed set
(`bot.server.event_label`, the outcomes, HTTP status codes), so requests cannot create
series at will."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector


class LastValue(Collector):
    """A gauge that is absent until it is set: a value not known yet is not a 0."""

    def __init__(self, name: str, documentation: str, registry: CollectorRegistry) -> None:
        self.name, self.documentation = name, documentation
        self.value: float | None = None
        registry.register(self)

    def set(self, value: float) -> None:
        self.value = float(value)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        if self.value is not None:
            yield GaugeMetricFamily(self.name, self.documentation, value=self.value)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(())


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter("foldbot_deliveries", "Webhook deliveries by event and outcome",
                                  ["event", "outcome"], registry=self.registry)
        self.processing = Histogram("foldbot_processing_seconds", "Time to process a delivery", ["event"],
                                    registry=self.registry,
                                    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self.github_calls = Counter("foldbot_github_calls", "GitHub API calls by HTTP status", ["status"],
                                    registry=self.registry)
        self.rate_limit_remaining = LastValue("foldbot_github_rate_limit_remaining",
                                              "x-ratelimit-remaining of the last GitHub response (absent until one "
                                              "said it)", self.registry)
        self.queue_depth = Gauge("foldbot_queue_depth", "Deliveries waiting to be processed", registry=self.registry)
        self.credentials_ok = Gauge("foldbot_credentials_ok", "1 when GitHub accepted foldbot's credentials at the "
                                    "last check, else 0", registry=self.registry)

        self.redeliveries = Counter("foldbot_redeliveries", "Failed deliveries GitHub was asked to send again",
                                    registry=self.registry)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
