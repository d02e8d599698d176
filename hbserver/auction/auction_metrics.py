"""What one auction adds to Prebid Server's metric families, as PBS-Go's exchange records it:
impressions by media type, privacy signals, debug and stored-response use, and per adapter its
request (cookie, bids), errors (each kind once per request), time, bids, prices and connections.

The adapter label is the bidder code lower-cased, as PBS-Go writes it. Handles are cached per
label set, so an auction costs dictionary lookups and integer additions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hbserver.adapters.base import BidderError, ErrorCode
from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.exchange.fanout import BidderOutcome
from hbserver.auction.exchange.privacy import AuctionPrivacy
from hbserver.metrics import Metrics, PendingCounter, PendingHistogram

# PBS-Go's errorsToMetric; anything else (a connection refused, an adapter's own error) is unknown_error.
ERROR_LABELS = {
    ErrorCode.TIMEOUT: "timeout",
    ErrorCode.BAD_INPUT: "badinput",
    ErrorCode.BAD_SERVER_RESPONSE: "badserverresponse",
    ErrorCode.FAILED_TO_REQUEST_BIDS: "failedtorequestbid",
}
UNKNOWN_ERROR = "unknown_error"
TMAX_TIMEOUT = "tmaxtimeout"
_BOOL = ("false", "true")


def error_label(error: BidderError) -> str:
    return ERROR_LABELS.get(error.code, UNKNOWN_ERROR)


def cookie_flag(request: dict[str, Any], app: bool) -> str:
    """PBS-Go's adapter cookie label: unknown for apps, else whether the bidder got a buyeruid."""
    if app:
        return "unknown"
    user = request.get("user")
    return "exists" if isinstance(user, dict) and user.get("buyeruid") else "no"


class _AdapterHandles:
    __slots__ = (
        "bids_adm",
        "bids_nurl",
        "connection_created",
        "connection_reused",
        "connection_wait",
        "errors",
        "gdpr_blocked",
        "label",
        "metrics",
        "panics",
        "prices",
        "requests",
        "scrubbed",
        "time",
    )

    def __init__(self, metrics: Metrics, label: str) -> None:
        self.metrics = metrics
        self.label = label
        self.requests: dict[tuple[str, bool], PendingCounter] = {}
        self.errors: dict[str, PendingCounter] = {}
        self.time = metrics.histogram(metrics.adapter_request_time, label)
        self.prices = metrics.histogram(metrics.adapter_prices, label)
        self.bids_adm = metrics.counter(metrics.adapter_bids, label, "adm")
        self.bids_nurl = metrics.counter(metrics.adapter_bids, label, "nurl")
        self.panics = metrics.counter(metrics.adapter_panics, label)
        self.scrubbed = metrics.counter(metrics.adapter_buyeruids_scrubbed, label)
        self.connection_created = metrics.counter(metrics.adapter_connection_created, label)
        self.connection_reused = metrics.counter(metrics.adapter_connection_reused, label)
        self.connection_wait = metrics.histogram(metrics.adapter_connection_wait, label)
        # Made at 0 so a ratio has data before the first bidder kept out on TCF purpose 2.
        self.gdpr_blocked = metrics.counter(metrics.adapter_gdpr_requests_blocked, label)

    def request(self, cookie: str, has_bids: bool) -> PendingCounter:
        key = (cookie, has_bids)
        counter = self.requests.get(key)
        if counter is None:
            metrics = self.metrics
            counter = self.requests[key] = metrics.counter(metrics.adapter_requests, self.label, cookie,
                                                           _BOOL[has_bids])
        return counter

    def error(self, label: str) -> PendingCounter:
        counter = self.errors.get(label)
        if counter is None:
            metrics = self.metrics
            counter = self.errors[label] = metrics.counter(metrics.adapter_errors, self.label, label)
        return counter


class AuctionMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._adapters: dict[str, _AdapterHandles] = {}
        self._imps: dict[tuple[bool, bool, bool, bool], PendingCounter] = {}
        self._module_calls: dict[tuple[str, str, str], PendingCounter] = {}
        self.tmax_timeout = metrics.counter(metrics.tmax_timeout)
        self.dropped_imps = metrics.counter(metrics.imps_dropped)
        self.debug = metrics.counter(metrics.debug_requests)
        self.stored = metrics.counter(metrics.stored_responses)
        self._cache_write: tuple[PendingHistogram, PendingHistogram] = (
            metrics.histogram(metrics.prebidcache_write_time, "false"),
            metrics.histogram(metrics.prebidcache_write_time, "true"),
        )

    def _adapter(self, code: str) -> _AdapterHandles:
        handles = self._adapters.get(code)
        if handles is None:
            handles = self._adapters[code] = _AdapterHandles(self.metrics, code.lower())
        return handles

    def imps_dropped(self, count: int) -> None:
        """Imps the account's impression limit dropped (PBS-Java's updateImpsDroppedMetric)."""
        self.dropped_imps.inc(count)

    def imps(self, imps: Sequence[dict[str, Any]]) -> None:
        """``impressions_requests``: one per imp, by which media types it offers."""
        counters = self._imps
        for imp in imps:
            key = ("banner" in imp, "video" in imp, "audio" in imp, "native" in imp)
            counter = counters.get(key)
            if counter is None:
                metrics = self.metrics
                counter = counters[key] = metrics.counter(metrics.impressions, *(_BOOL[flag] for flag in key))
            counter.inc()

    def privacy(self, privacy: AuctionPrivacy) -> None:
        """PBS-Go's RecordRequestPrivacy: the signals the request carried and which were enforced."""
        metrics = self.metrics
        if privacy.ccpa_provided:
            metrics.counter(metrics.privacy_ccpa, "request", _BOOL[privacy.ccpa_applies("")]).inc()
        if privacy.coppa:
            metrics.counter(metrics.privacy_coppa, "request").inc()
        if privacy.gdpr is not None:
            version = "v2" if privacy.gdpr.consent_valid else "err"
            metrics.counter(metrics.privacy_tcf, version, "request").inc()
        if privacy.lmt:
            metrics.counter(metrics.privacy_lmt, "request").inc()

    def gdpr_blocked(self, code: str) -> None:
        """A bidder kept out of the auction for want of TCF purpose 2 (PBS-Go RecordAdapterGDPRRequestBlocked)."""
        self._adapter(code).gdpr_blocked.inc()

    def dsa_rejected(self, code: str) -> None:
        """A bid rejected by the DSA check (:mod:`hbserver.auction.bids.dsa`); PBS-Go counts none."""
        metrics = self.metrics
        metrics.counter(metrics.adapter_dsa_rejected, code.lower()).inc()

    def debug_request(self, account: str) -> None:
        self.debug.inc()
        metrics = self.metrics
        label = metrics.account_label(account)
        if label is not None:
            metrics.counter(metrics.account_debug_requests, label).inc()

    def stored_responses(self, account: str) -> None:
        self.stored.inc()
        metrics = self.metrics
        label = metrics.account_label(account)
        if label is not None:
            metrics.counter(metrics.account_stored_responses, label).inc()

    def timeout_notice(self, success: bool) -> None:
        """A timeout notification sent (PBS-Go RecordTimeoutNotice): ``success`` ok, else failed."""
        self.metrics.counter(self.metrics.timeout_notifications, "ok" if success else "failed").inc()

    def module_call(self, module: str, stage: str, outcome: str, calls: int = 1) -> None:
        """A module's hook called ``calls`` times (PBS-Go's modules_<module>_* families in one): their outcome."""
        key = (module, stage, outcome)
        counter = self._module_calls.get(key)
        if counter is None:
            counter = self._module_calls[key] = self.metrics.counter(self.metrics.module_calls, *key)
        counter.pending += calls

    def cache_write(self, seconds: float, success: bool) -> None:
        self._cache_write[success].observe(seconds)

    def bidder(self, outcome: BidderOutcome, bids: list[AuctionBid], errors: list[BidderError], app: bool) -> None:
        """One adapter request: PBS-Go's RecordAdapterRequest, Time, BidReceived, Price, Connections."""
        request = outcome.bidder
        handles = self._adapter(request.resolved.bidder.code)
        cookie = cookie_flag(request.request, app)
        handles.request(cookie, bool(bids)).inc()
        if errors:
            labels = {error_label(error) for error in errors}
            if outcome.tmax_timeout:
                labels.discard("timeout")
                labels.add(TMAX_TIMEOUT)
            for label in labels:
                handles.error(label).inc()
        else:
            handles.time.observe(outcome.elapsed_ms / 1000)
        if outcome.tmax_timeout:
            self.tmax_timeout.inc()
        if outcome.panicked:
            handles.panics.inc()
        if request.buyeruid_scrubbed:  # privacy took the buyeruid out of this bidder's request
            handles.scrubbed.inc()
        for bid in bids:
            (handles.bids_adm if bid.bid.get("adm") else handles.bids_nurl).inc()
            handles.prices.observe(bid.price * 1000)
        for call in outcome.calls:
            if call.reused is None:
                continue
            (handles.connection_reused if call.reused else handles.connection_created).inc()
            handles.connection_wait.observe(call.wait)


class RequestCounts:
    """An auction endpoint's answer in PBS-Go's request families (RecordRequest, RecordRequestTime):
    ``requests`` by type and status, the time of successful ones, the body size (not for AMP, as
    PBS-Go), web requests without a uids cookie, and requests by account."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._requests: dict[tuple[str, str], PendingCounter] = {}
        self._times: dict[str, PendingHistogram] = {}
        self._size = metrics.histogram(metrics.request_size, "auction")

    def answered(
        self, request_type: str, status: str, seconds: float, size: int = 0, has_cookie: bool = True,
        account: str = "",
    ) -> None:
        metrics = self.metrics
        key = (request_type, status)
        counter = self._requests.get(key)
        if counter is None:
            counter = self._requests[key] = metrics.counter(metrics.requests, request_type, status)
        counter.inc()
        if status == "ok":
            timer = self._times.get(request_type)
            if timer is None:
                timer = self._times[request_type] = metrics.histogram(metrics.request_time, request_type)
            timer.observe(seconds)
        if size > 0 and request_type != "amp":
            self._size.observe(size)
        if not has_cookie and request_type != "openrtb2-app":
            metrics.counter(metrics.requests_without_cookie, request_type).inc()
        label = metrics.account_label(account)
        if label is not None:
            metrics.counter(metrics.account_requests, label).inc()
