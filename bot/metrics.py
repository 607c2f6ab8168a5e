"""Prometheus metrics of one foldbot process (a registry of its own, so tests and
several apps in one process do not collide)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST


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
        self.rate_limit_remaining = Gauge("foldbot_github_rate_limit_remaining",
                                          "x-ratelimit-remaining of the last GitHub response", registry=self.registry)
        self.queue_depth = Gauge("foldbot_queue_depth", "Deliveries waiting to be processed", registry=self.registry)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
