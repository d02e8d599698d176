"""Per-account analytics (hbserver's own; PBS-Go #3388, #1470): each account's own HTTP collector.

An account names its collector under ``analytics.http`` (``url``, ``headers``, ``batch_size``,
``flush_interval_ms``, ``sampling_rate``, ``gvl_vendor_id``); the host turns the feature on and bounds
it under ``analytics.account_http`` (hbserver.config). Each worker keeps one collector per account,
made on the account's first record: a :class:`~hbserver.analytics.batching.Batcher` of the record's
JSON (hbserver's record schema, :mod:`hbserver.analytics.records`) whose batches are ``POST``ed as
one JSON array (``Content-Type: application/json``, the account's headers). Bounds, per worker:

- at most ``max_collectors`` collectors; past it an idle one (nothing waiting) is retired to make room,
  else the record is dropped;
- every collector's waiting records together hold at most ``max_queue_bytes``; a record that would
  pass it is dropped; a batch holds at most ``max_batch_size`` records and ``max_batch_bytes``;
- eight batches wait per collector; a batch the collector does not take (any answer but 2xx, no
  answer within ``timeout_ms``) is dropped, as PBS-Go's modules do.

Every record dropped is counted in ``hbserver_analytics_dropped_events{module="account_http"}``;
shutdown sends what waits within ``shutdown_timeout_seconds`` and counts the rest.

Which records go (only records whose account is known: ``auction`` and ``amp`` with their auction's
details, ``notification`` with its account):

- ``sampling_rate`` of them, drawn per record;
- the account's ``reportAnalytics`` activity must allow component type ``analytics`` named
  ``account_http``, read with the request (``gppSid``, ``geo``, ``gpc`` conditions and the
  ``iab.usgeneral`` privacy module see it, so GPP and US privacy decide through the rules);
- when GDPR is enforced for the request, TCF purpose 7 (measure ad performance) under the account's
  ``gdpr.purpose7`` rules (``enforce_purpose``, ``enforce_vendors``, ``vendor_exceptions`` naming
  ``account_http``, ``enforce_algo``) for the collector's ``gvl_vendor_id``, as PBS-Java's
  ``Purpose07Strategy`` unblocks an analytics reporter; an empty or malformed consent string passes
  only when purpose 7 is enforced on neither purpose nor vendor. ``/event`` carries no consent
  string: as in PBS, only the activity rules apply there.

hbserver's records carry no part of the request's user, device or geo, so ``transmitUfpd`` and
``transmitPreciseGeo`` have nothing to remove from them.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from hbserver import SERVER_HEADER_VALUE
from hbserver.analytics.batching import Batcher, Limits, Poster
from hbserver.config import AccountAnalyticsHttp, AnalyticsAccountHttp
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.privacy.permissions import GdprPermissions, enforcers

if TYPE_CHECKING:
    from hbserver.privacy.activity import ActivityControl, ActivityRequest

log = logging.getLogger("hbserver.analytics")

MODULE = "account_http"  # the metrics label
COMPONENT = "account_http"  # the activity rules' component name, and the TCF vendor exceptions' name
PURPOSE_MEASUREMENT = 7
REPORT_ANALYTICS = "reportAnalytics"
COMPONENT_ANALYTICS = "analytics"
AUCTION_EVENTS = ("auction", "amp")
MAX_CONNECTIONS = 32  # all collectors together; at most 4 to one host


def purpose7_allows(gdpr: GdprPermissions, vendor_id: int) -> bool:
    """TCF purpose 7 for the collector's vendor under the account's policy (the request in GDPR scope)."""
    policy = gdpr.policy
    consent = gdpr.parsed_consent()
    if consent is None:
        p7 = PURPOSE_MEASUREMENT
        return not (policy.purpose_enforced(p7) or policy.purpose_enforcing_vendors(p7))
    gvl = gdpr.vendor_list()
    vendor = gvl.vendor(vendor_id) if gvl is not None and vendor_id > 0 else None
    enforcer = enforcers(policy).get(PURPOSE_MEASUREMENT, COMPONENT, gvl is not None)
    return enforcer.legal_basis(consent, vendor_id, vendor, COMPONENT)


def consent_allows(event: str, source: Any, activities: ActivityControl, vendor_id: int) -> bool:
    """Whether the account's rules let this record reach its collector (see the module docstring)."""
    privacy = getattr(source, "privacy", None) if event in AUCTION_EVENTS else None
    request: ActivityRequest | None = getattr(privacy, "activity_request", None)
    if not activities.allowed(REPORT_ANALYTICS, COMPONENT_ANALYTICS, COMPONENT, request=request):
        return False
    gdpr = getattr(privacy, "gdpr", None)
    return gdpr is None or purpose7_allows(gdpr, vendor_id)


def account_of(event: str, source: Any) -> Any:
    """The account (hbserver.stores.accounts.Account) a record belongs to, or None."""
    if event in AUCTION_EVENTS:
        return getattr(source, "account", None)
    if event == "notification":
        return source
    return None


class _Poster(Poster):
    """One session for every collector: more connections than a module's own."""

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=4, enable_cleanup_closed=True),
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
        return self._session


class _Collector:
    """One account's batcher, its settings and the bytes it holds."""

    def __init__(self, owner: AccountCollectors, account_id: str, settings: AccountAnalyticsHttp) -> None:
        self.owner, self.account_id = owner, account_id
        self.settings = settings
        self.queued = 0
        self.headers: dict[str, str] = {}
        self.batcher = Batcher(MODULE, settings.url, owner.limits(settings), self._send, owner.metrics,
                               release=self.release)  # fmt: skip
        self.configure(settings)

    def configure(self, settings: AccountAnalyticsHttp) -> None:
        """The account's settings (again, after its file changed): the next batch goes by them."""
        self.settings = settings
        self.headers = {**settings.headers, "Content-Type": "application/json", "User-Agent": SERVER_HEADER_VALUE}
        self.batcher.url, self.batcher.limits = settings.url, self.owner.limits(settings)

    def release(self, size: int) -> None:
        self.queued -= size
        self.owner.queued -= size

    async def _send(self, url: str, events: list[bytes]) -> bool:
        body = b"[" + b",".join(events) + b"]"
        return await self.owner.poster.deliver(url, body, self.headers, any_2xx=True)


class AccountCollectors:
    """Every account's collector in this worker, within the host's bounds."""

    name = MODULE

    def __init__(
        self, host: AnalyticsAccountHttp, metrics: Metrics, shutdown_seconds: float = 10.0,
        rand: Callable[[], float] = random.random,
    ) -> None:  # fmt: skip
        self.host, self.metrics, self.shutdown_seconds = host, metrics, shutdown_seconds
        self.poster = _Poster(MODULE, host.timeout_ms / 1000)
        self.queued = 0  # bytes of every collector's waiting records
        self._collectors: dict[str, _Collector] = {}
        self._retiring: set[asyncio.Task[None]] = set()
        self._closing = False
        self._rand = rand
        self._dropped = metrics.counter(metrics.analytics_dropped, MODULE)
        self._warn = LogLimiter(log, 60.0, count_held=True)

    def limits(self, settings: AccountAnalyticsHttp) -> Limits:
        count = min(settings.batch_size, self.host.max_batch_size)
        return Limits(count, self.host.max_batch_bytes, settings.flush_interval_ms / 1000, per_event=1, base=1)

    def log(self, record: dict[str, Any], source: Any) -> None:
        """Hand ``record`` to its account's collector when the account has one and its rules allow;
        returns at once (the record is serialized here, sent later)."""
        event = record["event"]
        account = account_of(event, source)
        if account is None:
            return
        settings = account.settings.analytics.http
        if not settings.url:
            return
        if settings.sampling_rate < 1.0 and self._rand() >= settings.sampling_rate:
            return
        if not consent_allows(event, source, account.activities, settings.gvl_vendor_id):
            return
        self._push(account.id, settings, orjson.dumps(record), event)

    def _push(self, account_id: str, settings: AccountAnalyticsHttp, data: bytes, event: str) -> None:
        size = len(data)
        if size + 2 > self.host.max_batch_bytes or self.queued + size > self.host.max_queue_bytes:
            self._drop("full", "account %s: a record dropped (queue of %d bytes full, or the record too large)",
                       account_id, self.host.max_queue_bytes)  # fmt: skip
            return
        collector = self._collector(account_id, settings)
        if collector is None:
            self._drop("collectors", "account %s: a record dropped (%d collectors, none idle)",
                       account_id, self.host.max_collectors)  # fmt: skip
            return
        if collector.batcher.push(data):
            collector.queued += size
            self.queued += size
            self.metrics.counter(self.metrics.analytics_events, MODULE, event).inc()

    def _drop(self, kind: str, text: str, *args: Any) -> None:
        self._dropped.inc()
        self._warn.warning(kind, "analytics module account_http: " + text, *args)

    def _collector(self, account_id: str, settings: AccountAnalyticsHttp) -> _Collector | None:
        collector = self._collectors.get(account_id)
        if collector is not None:
            if collector.settings is not settings and collector.settings != settings:
                collector.configure(settings)
            collector.settings = settings
            return collector
        if self._closing:
            return None
        if len(self._collectors) >= self.host.max_collectors and not self._retire_one():
            return None
        collector = self._collectors[account_id] = _Collector(self, account_id, settings)
        collector.batcher.start()
        return collector

    def _retire_one(self) -> bool:
        """Close an idle collector (nothing waiting or being sent) to make room; False: none is idle."""
        for account_id, collector in self._collectors.items():
            if collector.queued == 0:
                del self._collectors[account_id]
                task = asyncio.create_task(collector.batcher.close(self.shutdown_seconds))
                self._retiring.add(task)
                task.add_done_callback(self._retiring.discard)
                return True
        return False

    def collectors(self) -> int:
        return len(self._collectors)

    async def start(self) -> None:
        """Nothing to open: collectors start with their account's first record."""

    async def close(self) -> None:
        """Send what every collector holds within the shutdown's time (together), then close."""
        self._closing = True
        closing = [c.batcher.close(self.shutdown_seconds) for c in self._collectors.values()]
        await asyncio.gather(*closing, *self._retiring, return_exceptions=True)
        self._collectors.clear()
        await self.poster.close()
