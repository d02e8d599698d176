"""The Prometheus metrics: every metric name is defined here and nowhere else.

Names follow Prebid Server's (``requests``, ``request_time_seconds``, ``account_cache_performance``,
...) under the configured namespace (``hbserver`` by default). ``prometheus_client`` exposes
counters with the OpenMetrics ``_total`` suffix.

With several workers, the supervisor sets ``PROMETHEUS_MULTIPROC_DIR`` before this module is
imported (see :mod:`hbserver.multiproc`); every worker then writes its values to memory-mapped
files in that directory and ``/metrics``, whichever worker answers it, sums them.

Hot paths do not touch prometheus-client (a labelled ``inc()`` costs microseconds, and in
multiprocess mode writes to a memory-mapped file): they add to plain integers, which
:meth:`Metrics.flush` applies every :data:`FLUSH_INTERVAL_SECONDS`, before each ``/metrics``
answer and at shutdown. Another worker's figures are therefore at most that interval old.
"""

from __future__ import annotations

import os
from bisect import bisect_left

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from hbserver.multiproc import MULTIPROC_ENV

prometheus_client.disable_created_metrics()

# Request-time buckets: /event and /status answer in well under a millisecond, auctions take up
# to the auction timeout (seconds).
REQUEST_TIME_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

UNMATCHED_ENDPOINT = "other"
FLUSH_INTERVAL_SECONDS = 1.0


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
        self.client_disconnects = Counter(
            "client_disconnects", "Requests whose client closed the connection before the answer was sent "
            "(counted here instead of in requests), by endpoint.",
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
        self.stored_data_cache = Counter(
            "stored_data_cache_performance",
            "Stored request/imp/response lookups answered from the in-memory cache (hit) or not (miss), by kind.",
            ["kind", "cache_result"], namespace=ns, registry=reg,
        )
        self.stored_data_fetch_errors = Counter(
            "stored_data_fetch_errors", "Stored data fetches and database polls that failed, by backend and reason.",
            ["backend", "reason"], namespace=ns, registry=reg,
        )
        self.stored_data_fetch_time = Histogram(
            "stored_data_fetch_time_seconds", "Time a stored data backend took to answer one batch, by backend.",
            ["backend"], namespace=ns, registry=reg, buckets=REQUEST_TIME_BUCKETS,
        )
        self.auction_requests = Counter(
            "auction_requests", "Auctions by request type (openrtb2-web, openrtb2-app, openrtb2-dooh, amp) and status "
            "(ok, badinput, err, blockedaccount, acctconfigerr).",
            ["request_type", "request_status"], namespace=ns, registry=reg,
        )
        self.adapter_requests = Counter(
            "adapter_requests", "Bidders asked in auctions, by adapter (the bidder code) and outcome "
            "(gotbids, nobid, error).",
            ["adapter", "outcome"], namespace=ns, registry=reg,
        )
        self.adapter_bids = Counter(
            "adapter_bids", "Bids that entered auctions, by adapter.", ["adapter"], namespace=ns, registry=reg,
        )
        self.adapter_errors = Counter(
            "adapter_errors", "Bidder errors in auctions, by adapter and error "
            "(timeout, badinput, badserverresponse, failedtorequestbids, unknown).",
            ["adapter", "adapter_error"], namespace=ns, registry=reg,
        )
        self.adapter_request_time = Histogram(
            "adapter_request_time_seconds", "Time a bidder took in an auction (all its HTTP calls), by adapter.",
            ["adapter"], namespace=ns, registry=reg, buckets=REQUEST_TIME_BUCKETS,
        )
        self.cookie_sync_requests = Counter(
            "cookie_sync_requests", "/cookie_sync requests by outcome.",
            ["status"], namespace=ns, registry=reg,
        )
        self.syncer_requests = Counter(
            "syncer_requests", "Bidders considered by /cookie_sync, by syncer key and outcome.",
            ["syncer", "status"], namespace=ns, registry=reg,
        )
        self.setuid_requests = Counter(
            "setuid_requests", "/setuid requests by outcome.",
            ["status"], namespace=ns, registry=reg,
        )
        self.syncer_sets = Counter(
            "syncer_sets", "uids written (ok) or removed (cleared) by /setuid, by syncer key.",
            ["syncer", "status"], namespace=ns, registry=reg,
        )
        self.cache_puts = Counter(
            "cache_puts", "Items written to the cache store, by store and outcome (ok, exists, error, timeout).",
            ["store", "outcome"], namespace=ns, registry=reg,
        )
        self.cache_gets = Counter(
            "cache_gets", "Cache store lookups, by store and outcome (hit, miss, error, timeout).",
            ["store", "outcome"], namespace=ns, registry=reg,
        )
        self.vtrack_requests = Counter(
            "vtrack_requests", "/vtrack requests by HTTP status.",
            ["status"], namespace=ns, registry=reg,
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
        self._request_counts: dict[tuple[str, int], int] = {}
        self._request_times: dict[str, _PendingHistogram] = {}
        self._adapter_times: dict[str, _PendingHistogram] = {}
        self._counters: dict[tuple[int, tuple[str, ...]], PendingCounter] = {}

    def counter(self, metric: Counter, *labels: str) -> PendingCounter:
        """A hot-path handle on ``metric.labels(*labels)``: ``inc()`` is a plain addition, applied on flush."""
        key = (id(metric), labels)
        pending = self._counters.get(key)
        if pending is None:
            pending = self._counters[key] = PendingCounter(metric.labels(*labels) if labels else metric)
        return pending

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, status)
        counts = self._request_counts
        counts[key] = counts.get(key, 0) + 1
        timer = self._request_times.get(endpoint)
        if timer is None:
            timer = self._request_times[endpoint] = _PendingHistogram(self.request_time.labels(endpoint))
        timer.observe(seconds)

    def observe_adapter(self, adapter: str, seconds: float) -> None:
        timer = self._adapter_times.get(adapter)
        if timer is None:
            timer = self._adapter_times[adapter] = _PendingHistogram(self.adapter_request_time.labels(adapter))
        timer.observe(seconds)

    def flush(self) -> None:
        """Apply what the hot paths counted to the Prometheus values (shared files with workers)."""
        counts, self._request_counts = self._request_counts, {}
        for (endpoint, status), n in counts.items():
            self.requests.labels(endpoint, str(status)).inc(n)
        for timer in self._request_times.values():
            timer.flush()
        for timer in self._adapter_times.values():
            timer.flush()
        for counter in self._counters.values():
            counter.flush()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type; summed over all workers in multiprocess mode."""
        self.flush()
        if self.multiprocess:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
        else:
            registry = self.registry
        return generate_latest(registry), CONTENT_TYPE_LATEST


class PendingCounter:
    __slots__ = ("child", "pending")

    def __init__(self, child: Counter) -> None:
        self.child = child
        self.pending = 0

    def inc(self, amount: int = 1) -> None:
        self.pending += amount

    def flush(self) -> None:
        if self.pending:
            amount, self.pending = self.pending, 0
            self.child.inc(amount)


class _PendingHistogram:
    """Bucket counts kept as plain ints between flushes.

    prometheus-client keeps one (non-cumulative) value per bucket plus the sum; a flush adds the
    pending counts to those values directly, which is what ``observe()`` does one at a time.
    """

    __slots__ = ("bounds", "child", "counts", "total")

    def __init__(self, child: Histogram) -> None:
        self.child = child
        self.bounds = list(child._upper_bounds)
        self.counts = [0] * len(self.bounds)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def flush(self) -> None:
        counts = self.counts
        if not any(counts):
            return
        buckets = self.child._buckets
        for index, n in enumerate(counts):
            if n:
                buckets[index].inc(n)
                counts[index] = 0
        self.child._sum.inc(self.total)
        self.total = 0.0
