"""The Prometheus metrics: every metric name is defined here and nowhere else.

Names follow Prebid Server's (``requests``, ``request_time_seconds``, ``account_cache_performance``,
...) under the configured namespace (``hbserver`` by default). ``prometheus_client`` exposes
counters with the OpenMetrics ``_total`` suffix.

With several workers, :mod:`hbserver.cli` sets ``PROMETHEUS_MULTIPROC_DIR`` before this module is
imported; every worker then writes its values to memory-mapped files in that directory and
``/metrics``, whichever worker answers it, sums them (prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

prometheus_client.disable_created_metrics()

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# Request-time buckets: /event and /status answer in well under a millisecond, auctions take up
# to the auction timeout (seconds).
REQUEST_TIME_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

UNMATCHED_ENDPOINT = "other"


class Metrics:
    """The application's metrics. Hot paths keep the labelled children they use."""

    def __init__(self, namespace: str = "hbserver") -> None:
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        ns = namespace
        self.requests = Counter(
            "requests", "HTTP requests by endpoint and response status.",
            ["endpoint", "status"], namespace=ns, registry=reg,
        )
        self.request_time = Histogram(
            "request_time_seconds", "Time to answer a request, by endpoint.",
            ["endpoint"], namespace=ns, registry=reg, buckets=REQUEST_TIME_BUCKETS,
        )
        self.internal_errors = Counter(
            "internal_errors", "Unexpected exceptions answered with HTTP 500, by endpoint.",
            ["endpoint"], namespace=ns, registry=reg,
        )
        self.event_notifications = Counter(
            "event_notifications", "Accepted /event notifications by event type.",
            ["type"], namespace=ns, registry=reg,
        )
        self.account_cache = Counter(
            "account_cache_performance", "Account lookups answered from the in-memory cache (hit) or not (miss).",
            ["cache_result"], namespace=ns, registry=reg,
        )
        self.account_fetch_errors = Counter(
            "account_fetch_errors", "Account lookups that failed, by reason.",
            ["reason"], namespace=ns, registry=reg,
        )
        self.analytics_events = Counter(
            "analytics_events", "Analytics records accepted for delivery, by module and event.",
            ["module", "event"], namespace=ns, registry=reg,
        )
        self.analytics_dropped = Counter(
            "analytics_dropped_events", "Analytics records dropped (buffer full or write failure), by module.",
            ["module"], namespace=ns, registry=reg,
        )
        self.workers = Gauge(
            "workers", "Worker processes serving requests.",
            namespace=ns, registry=reg, multiprocess_mode="livesum",
        )
        self._request_children: dict[tuple[str, int], Counter] = {}
        self._time_children: dict[str, Histogram] = {}

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, status)
        counter = self._request_children.get(key)
        if counter is None:
            counter = self._request_children[key] = self.requests.labels(endpoint, str(status))
        counter.inc()
        timer = self._time_children.get(endpoint)
        if timer is None:
            timer = self._time_children[endpoint] = self.request_time.labels(endpoint)
        timer.observe(seconds)

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type; summed over all workers in multiprocess mode."""
        if self.multiprocess:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
        else:
            registry = self.registry
        return generate_latest(registry), CONTENT_TYPE_LATEST
