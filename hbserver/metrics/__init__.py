"""The Prometheus metrics: every metric name is defined here and nowhere else.

The families Prebid Server has keep PBS-Go's names, labels, label values and buckets
(``metrics/prometheus/prometheus.go``), under ``metrics.prometheus.namespace`` and ``subsystem``
as PBS-Go prefixes them, and counters are written without the ``_total`` suffix as PBS-Go's
client writes them (:mod:`hbserver.metrics.exposition`): a host's PBS dashboards and alerts work
unchanged. hbserver's own families (HTTP by endpoint, cache store, analytics, workers, runtime)
are listed in :data:`HBSERVER_FAMILIES` and documented in the README, whose metrics table
``tests/test_metrics.py`` compares with :func:`Metrics.describe`.

With several workers, the supervisor sets ``PROMETHEUS_MULTIPROC_DIR`` before this module is
imported (see :mod:`hbserver.multiproc`); every worker then writes its values to memory-mapped
files in that directory and ``/metrics``, whichever worker answers it, sums them.

Hot paths do not touch prometheus-client: they add to plain numbers (:mod:`hbserver.metrics.pending`)
which :meth:`Metrics.flush` applies every :data:`FLUSH_INTERVAL_SECONDS`, before each ``/metrics``
answer and at shutdown, always on the event loop's thread; the exposition itself only reads, so
it may run in a worker thread. Another worker's figures are at most that interval old.
"""

from __future__ import annotations

import os

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.multiprocess import MultiProcessCollector

from hbserver.metrics.exposition import CONTENT_TYPE, render_families
from hbserver.metrics.pending import PendingCounter, PendingHistogram
from hbserver.multiproc import MULTIPROC_ENV

prometheus_client.disable_created_metrics()

__all__ = ["FLUSH_INTERVAL_SECONDS", "HBSERVER_FAMILIES", "UNMATCHED_ENDPOINT", "Metrics", "PendingCounter",
           "PendingHistogram", "metric_prefix"]

# PBS-Go's buckets.
STANDARD_TIME_BUCKETS = (0.05, 0.1, 0.15, 0.20, 0.25, 0.3, 0.4, 0.5, 0.75, 1)
CACHE_WRITE_TIME_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1)
PRICE_BUCKETS = (250, 500, 750, 1000, 1500, 2000, 2500, 3000, 3500, 4000)
REQUEST_SIZE_BUCKETS = (100, 500, 750, 1000, 2000, 4000, 7000, 10000, 15000, 20000, 50000, 75000)
# hbserver's: /event and /status answer in well under a millisecond; auctions end near their
# timeout (hundreds of milliseconds), where the buckets are dense.
HTTP_TIME_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5,
                     0.75, 1, 1.5, 2, 3, 5)
COOKIE_SIZE_BUCKETS = (0, 500, 1000, 2000, 3000, 4000, 5000, 6000, 8000)
LOOP_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1)

UNMATCHED_ENDPOINT = "other"
FLUSH_INTERVAL_SECONDS = 1.0
# At most this many accounts get series of their own in the account_* families (a bound on
# cardinality when any publisher id may arrive); later ones are not counted there.
MAX_ACCOUNT_LABELS = 1000

# Families PBS-Go does not have (documented as hbserver's own in the README).
HBSERVER_FAMILIES = frozenset({
    "http_requests", "http_request_time_seconds", "internal_errors", "client_disconnects", "in_flight_requests",
    "event_notifications", "vtrack_requests", "account_fetch_errors", "stored_data_cache_performance",
    "stored_data_fetch_errors", "stored_data_fetch_time_seconds", "cache_puts", "cache_gets", "analytics_events",
    "analytics_dropped_events", "uids_cookie_size_bytes", "uids_cookie_size_over_threshold",
    "currency_rates_age_seconds", "currency_fetch_errors",
    "floors_fetch_errors", "privacy_tcf_vendorlist", "adapter_dsa_rejected_bids", "adapter_response_validation_bids",
    "workers", "worker_restarts", "process_resident_memory_bytes", "process_cpu_seconds", "process_open_fds",
    "gc_collections", "event_loop_lag_seconds", "overload_shed_requests", "imps_dropped",
    "profiles", "account_profiles",
    "tracing_spans",
})


def metric_prefix(namespace: str, subsystem: str) -> str:
    """``<namespace>_<subsystem>_`` with each part only when set, as PBS-Go builds it."""
    return "".join(f"{part}_" for part in (namespace, subsystem) if part)


class InFlight:
    """The in-flight count on an object of its own: ``n += 1`` on a slotted attribute costs a
    fraction of the same on the Metrics instance, whose dictionary holds a hundred attributes."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class Metrics:
    """The application's metrics. Hot paths keep the pending handles they use."""

    def __init__(self, namespace: str = "hbserver", subsystem: str = "") -> None:
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self.prefix = metric_prefix(namespace, subsystem)
        self.registry = CollectorRegistry(auto_describe=True)
        self.flight = InFlight()  # requests being answered by this worker (web/endpoint.wrap)
        self._counters: dict[tuple[int, tuple[str, ...]], PendingCounter] = {}
        self._histograms: dict[tuple[int, tuple[str, ...]], PendingHistogram] = {}
        self._accounts: set[str] = set()
        self._answers: dict[tuple[str, int], tuple[PendingCounter, PendingHistogram]] = {}
        self._ns, self._sub = namespace, subsystem
        # Prebid Server's families, then hbserver's own (HBSERVER_FAMILIES); the order of registration
        # is the order of the exposition.
        self._declare_requests()
        self._declare_adapters()
        self._declare_privacy()
        self._declare_stored()
        self._declare_connections_and_syncs()
        self._declare_http()
        self._declare_data_and_validation()
        self._declare_runtime()
        self._preload()

    # --- Prebid Server's families ---------------------------------------------------------------

    def _declare_requests(self) -> None:
        """Requests: types and sizes, debug, impressions, profiles, modules, timeouts."""
        c, h = self._counter, self._histogram
        self.requests = c("requests", "Count of total requests to Prebid Server labeled by type and status.",
                          "request_type", "request_status")
        self.request_time = h("request_time_seconds",
                              "Seconds to resolve successful Prebid Server requests labeled by type.",
                              STANDARD_TIME_BUCKETS, "request_type")
        self.request_size = h("request_size_bytes",
                              "Count that keeps track of incoming request size in bytes labeled by endpoint.",
                              REQUEST_SIZE_BUCKETS, "request_size")
        self.requests_without_cookie = c("requests_without_cookie",
                                         "Count of total requests to Prebid Server without a cookie labeled by type.",
                                         "request_type")
        self.account_requests = c("account_requests", "Count of total requests to Prebid Server labeled by account.",
                                  "account")
        self.debug_requests = c("debug_requests",
                                "Count of total requests to Prebid Server that have debug enabled")
        self.account_debug_requests = c("account_debug_requests",
                                        "Count of total requests to Prebid Server that have debug enabled labled by "
                                        "account", "account")
        self.impressions = c("impressions_requests",
                             "Count of requested impressions to Prebid Server labeled by type.",
                             "banner", "video", "audio", "native")
        self.tmax_timeout = c("tmax_timeout", "Count of requests rejected due to Tmax timeout exceed.")
        self.imps_dropped = c("imps_dropped", "Impressions dropped by the account's auction.impression_limit "
                              "(PBS-Java's imps_dropped).")
        # PBS-Java's ProfileMetrics: profiles.<reason> and account.<id>.profiles.<reason>
        self.profiles = c("profiles", "Requests with a profile not found (missing, once per request) and profiles "
                          "that could not be merged (invalid, each), by reason (PBS-Java's profiles.*).", "reason")
        self.account_profiles = c("account_profiles", "Debug requests of the account with a profile not found "
                                  "(missing) or more profiles than its limit (limit_exceeded), by account and "
                                  "reason (PBS-Java's account.<id>.profiles.*).", "account", "reason")
        self.module_calls = c("module_calls",
                              "Count of module hook calls labeled by module code, stage and outcome.",
                              "module", "stage", "outcome")
        self.timeout_notifications = c("timeout_notification",
                                       "Count of timeout notifications triggered, and if they were successfully sent.",
                                       "success")

    def _declare_adapters(self) -> None:
        """Bidder requests, errors, bids, connections and bid validation."""
        c, h = self._counter, self._histogram
        self.adapter_requests = c("adapter_requests",
                                  "Count of requests labeled by adapter, if has a cookie, and if it resulted in bids.",
                                  "adapter", "cookie", "has_bids")
        self.adapter_errors = c("adapter_errors", "Count of errors labeled by adapter and error type.",
                                "adapter", "adapter_error")
        self.adapter_request_time = h("adapter_request_time_seconds",
                                      "Seconds to resolve each successful request labeled by adapter.",
                                      STANDARD_TIME_BUCKETS, "adapter")
        self.adapter_bids = c("adapter_bids",
                              "Count of bids labeled by adapter and markup delivery type (adm or nurl).",
                              "adapter", "delivery")
        self.adapter_prices = h("adapter_prices", "Monetary value of the bids labeled by adapter.",
                                PRICE_BUCKETS, "adapter")
        self.adapter_panics = c("adapter_panics", "Count of panics labeled by adapter.", "adapter")
        self.adapter_connection_created = c(
            "adapter_connection_created",
            "Count that keeps track of new connections when contacting adapter bidder endpoints.", "adapter")
        self.adapter_connection_reused = c(
            "adapter_connection_reused",
            "Count that keeps track of reused connections when contacting adapter bidder endpoints.", "adapter")
        self.adapter_connection_wait = h(
            "adapter_connection_wait",
            "Seconds from when the connection was requested until it is either created or reused",
            STANDARD_TIME_BUCKETS, "adapter")
        self.adapter_buyeruids_scrubbed = c(
            "adapter_buyeruids_scrubbed",
            "Count of total bidder requests with a scrubbed buyeruid due to a privacy policy", "adapter")
        self.adapter_gdpr_requests_blocked = c(
            "adapter_gdpr_requests_blocked",
            "Count of total bidder requests blocked due to unsatisfied GDPR purpose 2 legal basis", "adapter")
        # PBS-Go's bid validation families (RecordBidValidationCreativeSize*/SecureMarkup*), by (adapter or
        # account, size or secure, err or warn); their label "success" is always "success", as PBS-Go writes it
        self.bid_validation: dict[tuple[str, str, str], Counter] = {}
        for rule, what in (("size", "had a creative size greater than maxWidth/maxHeight"),
                           ("secure", "had a invalid bidAdm")):
            for mode, done, enforcement in (("err", "removed from bid response", "enforce"),
                                            ("warn", "warned about", "warn")):
                for level in ("adapter", "account"):
                    self.bid_validation[level, rule, mode] = c(
                        f"{level}_response_validation_{rule}_{mode}",
                        f"Count that tracks number of bids {done} that {what} labeled by {level} ({enforcement})",
                        level, "success")

    def _declare_privacy(self) -> None:
        """Privacy signals (CCPA, COPPA, LMT, TCF) and Global Vendor List fetches."""
        c = self._counter
        self.privacy_ccpa = c("privacy_ccpa", "Count of total requests to Prebid Server where CCPA was provided by "
                              "source and opt-out .", "source", "opt_out")
        self.privacy_coppa = c("privacy_coppa", "Count of total requests to Prebid Server where the COPPA flag was "
                               "set by source", "source")
        self.privacy_lmt = c("privacy_lmt", "Count of total requests to Prebid Server where the LMT flag was set by "
                             "source", "source")
        self.privacy_tcf = c("privacy_tcf", "Count of TCF versions for requests where GDPR was enforced by source "
                             "and version.", "version", "source")
        self.gvl_requests = c("gvl_requests", "Count number of times GVL list is fetched")
        self.privacy_tcf_vendorlist = c(
            "privacy_tcf_vendorlist", "Count of Global Vendor List fetches (ok, err) and of consent strings read "
            "against another list than the one they name because it was not loaded (fallback: the nearest "
            "loaded version or gdpr.vendorlist_file; missing: no list), by GVL specification.", "spec", "result")

    def _declare_stored(self) -> None:
        """Stored data and account caches and fetches, stored responses, Prebid Cache writes."""
        c, h = self._counter, self._histogram
        self.stored_request_cache = c("stored_request_cache_performance",
                                      "Count of stored request cache requests attempts by hits or miss.",
                                      "cache_result")
        self.stored_imp_cache = c("stored_impressions_cache_performance",
                                  "Count of stored impression cache requests attempts by hits or miss.",
                                  "cache_result")
        self.account_cache = c("account_cache_performance", "Count of account cache lookups by hits or miss.",
                               "cache_result")
        # stored_<kind>_fetch_time_seconds / stored_<kind>_errors, by PBS-Go's data type.
        self.stored_fetch_time: dict[str, Histogram] = {}
        self.stored_errors: dict[str, Counter] = {}
        for kind, what in (("request", "requests"), ("amp", "AMP requests"), ("account", "accounts"),
                           ("response", "responses")):
            self.stored_fetch_time[kind] = h(f"stored_{kind}_fetch_time_seconds",
                                             f"Seconds to fetch stored {what} labeled by fetch type",
                                             STANDARD_TIME_BUCKETS, "stored_data_fetch_type")
            self.stored_errors[kind] = c(f"stored_{kind}_errors", f"Count of stored {what} errors by error type",
                                         "stored_data_error")
        self.stored_responses = c("stored_responses",
                                  "Count of total requests to Prebid Server that have stored responses")
        self.account_stored_responses = c("account_stored_responses",
                                          "Count of total requests to Prebid Server that have stored responses "
                                          "labled by account", "account")
        self.prebidcache_write_time = h("prebidcache_write_time_seconds",
                                        "Seconds to write to Prebid Cache labeled by success or failure. Failure "
                                        "timing is limited by Prebid Server enforced timeouts.",
                                        CACHE_WRITE_TIME_BUCKETS, "success")

    def _declare_connections_and_syncs(self) -> None:
        """Connections and the cookie sync and setuid endpoints."""
        c = self._counter
        self.connections_opened = c("connections_opened", "Count of successful connections opened to Prebid Server.")
        self.connections_closed = c("connections_closed", "Count of successful connections closed to Prebid Server.")
        self.connections_error = c("connections_error", "Count of errors for connection open and close attempts to "
                                   "Prebid Server labeled by type.", "connection_error")
        self.cookie_sync_requests = c("cookie_sync_requests", "Count of cookie sync requests to Prebid Server.",
                                      "status")
        self.syncer_requests = c("syncer_requests", "Count of cookie sync requests where a syncer is a candidate to "
                                 "be synced labeled by syncer key and status.", "syncer", "status")
        self.setuid_requests = c("setuid_requests", "Count of set uid requests to Prebid Server.", "status")
        self.syncer_sets = c("syncer_sets", "Count of setuid set requests for a syncer labeled by syncer key and "
                             "status.", "syncer", "status")

    # --- hbserver's own families --------------------------------------------------------------

    def _declare_http(self) -> None:
        """HTTP answers by endpoint, in-flight requests, /event and /vtrack."""
        c, h, g = self._counter, self._histogram, self._gauge
        self.http_requests = c("http_requests", "HTTP requests answered, by endpoint (route) and response status.",
                               "endpoint", "status")
        self.http_request_time = h("http_request_time_seconds", "Seconds to answer a request, by endpoint (route).",
                                   HTTP_TIME_BUCKETS, "endpoint")
        self.internal_errors = c("internal_errors", "Unexpected exceptions answered with HTTP 500, by endpoint.",
                                 "endpoint")
        self.client_disconnects = c("client_disconnects", "Requests whose client closed the connection before the "
                                    "answer was sent (not counted in http_requests), by endpoint.", "endpoint")
        self.in_flight_requests = g("in_flight_requests", "Requests being answered, all workers.")
        self.event_notifications = c("event_notifications", "Accepted /event notifications by event type.", "type")
        self.vtrack_requests = c("vtrack_requests", "/vtrack requests by HTTP status.", "status")

    def _declare_data_and_validation(self) -> None:
        """Account and stored data fetches, cache store, analytics, uids cookie, currency, floors, bid rejections."""
        c, h, g = self._counter, self._histogram, self._gauge
        self.account_fetch_errors = c("account_fetch_errors", "Account lookups that failed, by reason.", "reason")
        self.stored_data_cache = c("stored_data_cache_performance", "Stored request/imp/response lookups answered "
                                   "from the in-memory cache (hit) or not (miss), by kind.", "kind", "cache_result")
        self.stored_data_fetch_errors = c("stored_data_fetch_errors", "Stored data fetches and database polls that "
                                          "failed, by backend and reason.", "backend", "reason")
        self.stored_data_fetch_time = h("stored_data_fetch_time_seconds", "Seconds a stored data backend took to "
                                        "answer one batch, by backend.", HTTP_TIME_BUCKETS, "backend")
        self.cache_puts = c("cache_puts", "Items written to the cache store, by store and outcome (ok, exists, "
                            "error, timeout).", "store", "outcome")
        self.cache_gets = c("cache_gets", "Cache store lookups, by store and outcome (hit, miss, error, timeout).",
                            "store", "outcome")
        self.analytics_events = c("analytics_events", "Analytics records accepted for delivery, by module and event.",
                                  "module", "event")
        self.analytics_dropped = c("analytics_dropped_events", "Analytics records dropped (buffer full, delivery "
                                   "failure), by module.", "module")
        self.uids_cookie_size = h("uids_cookie_size_bytes", "Size of the uids cookie on requests that carry one "
                                  "(of uids, uids2, ... together with host_cookie.number_of_uid_cookies).",
                                  COOKIE_SIZE_BUCKETS)
        self.uids_cookie_size_over_threshold = c(
            "uids_cookie_size_over_threshold", "Requests whose uids cookie (all parts together) is larger than "
            "host_cookie.size_threshold_bytes.")
        self.currency_rates_age = g("currency_rates_age_seconds", "Age of the server's currency rates (0 "
                                    "without currency.fetch_url).", mode="livemax")
        self.currency_fetch_errors = c("currency_fetch_errors", "Currency rate fetches that failed.")
        self.floors_fetch_errors = c("floors_fetch_errors", "Price floors provider fetches that failed or were "
                                     "refused, by reason (status, timeout, network, too_large, invalid, "
                                     "capacity).", "reason")
        self.adapter_dsa_rejected = c("adapter_dsa_rejected_bids", "Bids rejected for their DSA transparency "
                                      "(ext.dsa missing when regs.ext.dsa.dsarequired is 2 or 3, behalf or paid "
                                      "too long, adrender against pubrender), by adapter.", "adapter")
        self.adapter_validation_own = c("adapter_response_validation_bids", "Bids failing one of hbserver's own "
                                        "validations (adm_or_nurl, media_type, vast_protocol), by adapter, rule and "
                                        "outcome (err: removed under enforce; warn: kept).", "adapter", "rule",
                                        "outcome")

    def _declare_runtime(self) -> None:
        """Workers, process resources, event loop, overload shedding and tracing."""
        c, h, g = self._counter, self._histogram, self._gauge
        self.workers = g("workers", "Worker processes serving requests.")
        self.worker_restarts = c("worker_restarts", "Workers the supervisor restarted after an unexpected exit.")
        self.process_rss = g("process_resident_memory_bytes", "Resident memory, all workers.")
        self.process_cpu = c("process_cpu_seconds", "CPU time (user and system), all workers.")
        self.process_open_fds = g("process_open_fds", "Open file descriptors, all workers.")
        self.gc_collections = c("gc_collections", "Garbage collections, by generation, all workers.", "generation")
        self.event_loop_lag = h("event_loop_lag_seconds", "How late the event loop ran a timer (sampled per worker).",
                                LOOP_LAG_BUCKETS)
        self.overload_shed = c("overload_shed_requests", "Auction and AMP requests answered at once with no bids "
                               "because they had waited too long to be handled (overload.max_wait_ms), by "
                               "request type and reason (queue: longer than the maximum; deadline: past their "
                               "whole budget).", "request_type", "reason")
        self.tracing_spans = c("tracing_spans", "Finished trace spans (tracing.enabled) by outcome: exported "
                               "(the OTLP collector took them), queue_full (dropped: tracing.max_queue_size "
                               "spans were waiting), failed (the collector refused or could not be reached; "
                               "dropped).", "outcome")


    # --- definitions ------------------------------------------------------------------------------

    def _counter(self, name: str, doc: str, *labels: str) -> Counter:
        return Counter(name, doc, labels, namespace=self._ns, subsystem=self._sub, registry=self.registry)

    def _histogram(self, name: str, doc: str, buckets: tuple[float, ...], *labels: str) -> Histogram:
        return Histogram(name, doc, labels, namespace=self._ns, subsystem=self._sub, registry=self.registry,
                         buckets=buckets)

    def _gauge(self, name: str, doc: str, mode: str = "livesum") -> Gauge:
        return Gauge(name, doc, namespace=self._ns, subsystem=self._sub, registry=self.registry,
                     multiprocess_mode=mode)

    def _preload(self) -> None:
        """Series that exist from the start with 0, as PBS-Go preloads them, so rates and ratios
        have data before the first event."""
        for request_type in ("openrtb2-web", "openrtb2-app", "openrtb2-dooh", "amp"):
            for status in ("ok", "badinput", "err", "networkerr", "blockedapp", "acctconfigerr"):
                self.requests.labels(request_type, status)
        for result in ("hit", "miss"):
            for family in (self.stored_request_cache, self.stored_imp_cache, self.account_cache):
                family.labels(result)
        for success in ("true", "false"):
            self.prebidcache_write_time.labels(success)
        for kind in ("accept", "close"):
            self.connections_error.labels(kind)
        for generation in ("0", "1", "2"):
            self.gc_collections.labels(generation)
        for spec in ("v2", "v3"):
            for status in ("ok", "err", "fallback", "missing"):
                self.privacy_tcf_vendorlist.labels(spec, status)
        for reason in ("missing", "invalid"):
            self.profiles.labels(reason)

    def describe(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(exposed name, type, label names) of every family, sorted: the README's table."""
        rows = []
        for metric in self.registry._collector_to_names:  # every registered family
            if not isinstance(metric, (Counter, Histogram, Gauge)):
                continue
            kind = {Counter: "counter", Histogram: "histogram", Gauge: "gauge"}[type(metric)]
            labels = tuple(label for label in metric._labelnames)
            rows.append((metric._name, kind, labels))
        return sorted(rows)

    # --- hot-path handles -------------------------------------------------------------------------

    def counter(self, metric: Counter, *labels: str) -> PendingCounter:
        """A hot-path handle on ``metric.labels(*labels)``: ``inc()`` is a plain addition, applied on flush."""
        key = (id(metric), labels)
        pending = self._counters.get(key)
        if pending is None:
            pending = self._counters[key] = PendingCounter(metric.labels(*labels) if labels else metric)
        return pending

    def histogram(self, metric: Histogram, *labels: str) -> PendingHistogram:
        """A hot-path handle on ``metric.labels(*labels)``: ``observe()`` counts in place, applied on flush."""
        key = (id(metric), labels)
        pending = self._histograms.get(key)
        if pending is None:
            pending = self._histograms[key] = PendingHistogram(metric.labels(*labels) if labels else metric)
        return pending

    def answer_handles(self, endpoint: str, status: int) -> tuple[PendingCounter, PendingHistogram]:
        """The two handles one HTTP answer adds to: ``http_requests`` (endpoint, status) and
        ``http_request_time_seconds`` (endpoint). :func:`hbserver.web.endpoint.wrap` keeps them per
        status and adds to them inline (the hottest path of all)."""
        handles = self._answers.get((endpoint, status))
        if handles is None:
            handles = self._answers[endpoint, status] = (
                self.counter(self.http_requests, endpoint, str(status)),
                self.histogram(self.http_request_time, endpoint),
            )
        return handles

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        """One HTTP answer (what wrap() does inline)."""
        counter, histogram = self.answer_handles(endpoint, status)
        counter.pending += 1
        histogram.observe(seconds)

    @property
    def in_flight(self) -> int:
        return self.flight.n

    def declare_endpoint(self, endpoint: str) -> None:
        """Series at 0 for a route's error families, so their rates have data before the first one."""
        self.internal_errors.labels(endpoint)
        self.client_disconnects.labels(endpoint)

    def account_label(self, account: str) -> str | None:
        """``account`` when it may have series of its own (known, within :data:`MAX_ACCOUNT_LABELS`), else None."""
        if not account or account == "unknown":
            return None
        accounts = self._accounts
        if account in accounts:
            return account
        if len(accounts) >= MAX_ACCOUNT_LABELS:
            return None
        accounts.add(account)
        return account

    # --- applying and exposing --------------------------------------------------------------------

    def flush(self) -> None:
        """Apply what the hot paths counted to the Prometheus values (the workers' shared files).

        Call it on the event loop's thread only: it reads and resets what the loop writes.
        """
        for counter in self._counters.values():
            counter.flush()
        for histogram in self._histograms.values():
            histogram.flush()
        self.in_flight_requests.set(self.flight.n)

    def expose(self) -> bytes:
        """The exposition text, summed over all workers in multiprocess mode. Reads only: safe in
        a worker thread while the loop goes on counting (what it has not flushed shows next time)."""
        if self.multiprocess:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
            return render_families(registry.collect())
        return render_families(self.registry.collect())

    def render(self) -> tuple[bytes, str]:
        """Flush, then the exposition and its content type (on the loop's thread)."""
        self.flush()
        return self.expose(), CONTENT_TYPE

    content_type = CONTENT_TYPE
