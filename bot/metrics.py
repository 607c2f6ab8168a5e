"""Prometheus metrics of one foldbot process (a registry of its own, so tests and
several apps in one process do not collide). Every label value comes from a fixed set
(`bot.server.event_label`, the outcomes, HTTP status codes), so requests cannot create
series at will."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector


# No `_created` series: nothing reads them, and they would not add up across processes.
disable_created_metrics()


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
        self.unrecorded = Gauge("foldbot_unrecorded_outcomes", "Outcomes of processed deliveries the journal refused, "
                                "waiting to be written again", registry=self.registry)
        self.set_aside = Gauge("foldbot_set_aside_deliveries", "Deliveries set aside in the last 24 h (their handler "
                               "failed or was cut short 3 times) and not delivered again", registry=self.registry)
        self.credentials_ok = Gauge("foldbot_credentials_ok", "1 when GitHub accepted foldbot's credentials at the "
                                    "last check, else 0", registry=self.registry)

        self.previous_secret = Counter("foldbot_previous_secret_deliveries", "Deliveries signed with "
                                       "GITHUB_WEBHOOK_SECRET_PREVIOUS (a rotation: once none come, remove it)",
                                       registry=self.registry)
        self.redeliveries = Counter("foldbot_redeliveries", "Failed deliveries GitHub was asked to send again",
                                    registry=self.registry)

    def render(self, worker: str | None = None) -> tuple[bytes, str]:
        """The exposition; with `worker` (the worker process's own, as it last wrote it), one
        exposition of both processes: their counters and histograms side by side under a
        `process` label (`web`, `worker`: a restarted worker's start from 0 again, which
        Prometheus reads as a reset of that series alone), each gauge from the process that
        keeps it (WEB_GAUGES here, the others there)."""
        own = generate_latest(self.registry)
        if worker is None:
            return own, CONTENT_TYPE_LATEST
        return generate_latest(_Merged(own.decode(), worker)), CONTENT_TYPE_LATEST


#: Gauges the web process keeps when the work runs in a process of its own.
WEB_GAUGES = frozenset({"foldbot_credentials_ok"})


class _Merged(CollectorRegistry):
    """A registry of two expositions merged (see `Metrics.render`)."""

    def __init__(self, web: str, worker: str) -> None:
        super().__init__(auto_describe=False)
        self.families: dict[str, Metric] = {}
        for text, process in ((web, "web"), (worker, "worker")):
            for family in text_string_to_metric_families(text):
                if family.type == "gauge":
                    if (family.name in WEB_GAUGES) == (process == "web"):
                        self.families[family.name] = family
                    continue
                merged = self.families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                merged.samples += [sample._replace(labels={**sample.labels, "process": process})
                                   for sample in family.samples]

    def collect(self) -> Iterator[Metric]:
        return iter(self.families.values())
