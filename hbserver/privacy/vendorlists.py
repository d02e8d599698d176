"""Global Vendor Lists by version: each consent string is read against the list it names.

A TC string names its list (``vendorListVersion``) and, through its TCF policy version, the GVL
specification (policy version 4 and later: GVL v3; earlier: v2, as PBS-Go's ``getSpecVersion``).
:meth:`VendorLists.for_consent` answers with a dictionary look-up. A version not loaded yet is
fetched in the background from ``gdpr.vendorlist.v<spec>.http_endpoint_template`` (PBS-Java's
``VendorListService``: the request never waits); meanwhile the request is read against the nearest
loaded version of that specification, else the fallback list (``gdpr.vendorlist_file``), else no
list ("basic" enforcement), and ``privacy_tcf_vendorlist`` counts it (``fallback`` or ``missing``).
PBS-Go waits up to ``active_vendorlist_fetch`` instead and, on a miss, denies; PBS-Java fails the
lookup until a fetch fails and then serves its fallback: both are stricter on a miss, neither
blocks less.

Fetches: one in flight per version, at most :data:`MAX_CONCURRENT_FETCHES` at once, no redirects,
bodies capped at :data:`~hbserver.privacy.gvl.MAX_GVL_BYTES`, large bodies parsed in a thread; a
failed version is retried only after an exponential back-off with jitter (PBS-Java's
``retry-policy.exponential-backoff``). At most :data:`MAX_LISTS_PER_SPEC` fetched lists are kept
per specification; the lowest version goes first (consent strings move to newer lists).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import aiohttp
import orjson

from hbserver.privacy.gvl import MAX_GVL_BYTES, GlobalVendorList, GVLError, parse_gvl
from hbserver.web.client import BodyTooLarge, read_bounded

if TYPE_CHECKING:
    from hbserver.config import VendorListConfig
    from hbserver.metrics import Metrics
    from hbserver.privacy.tcf2 import TCF2Consent

log = logging.getLogger(__name__)

SPECS = (2, 3)
VERSION_MACRO = "{VERSION}"  # PBS-Java's placeholder in http-endpoint-template
MAX_LISTS_PER_SPEC = 16  # fetched lists kept per GVL specification (a v3 list is about 1 MB parsed)
MAX_CONCURRENT_FETCHES = 2
PARSE_IN_THREAD_BYTES = 64 * 1024  # bodies above this are decoded off the event loop


class FetchFailed(Exception):
    """A vendor list could not be fetched or used; the message says why."""


def _none() -> None:
    """The counter of a store without metrics."""


def spec_of(consent: TCF2Consent) -> int:
    """The GVL specification a consent string is read against (PBS-Go ``getSpecVersion``)."""
    return 3 if consent.tcf_policy_version >= 4 else 2


def _decode(body: bytes, url: str) -> GlobalVendorList:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise FetchFailed(f"{url}: not valid JSON: {exc}") from None
    try:
        return parse_gvl(document, url)
    except GVLError as exc:
        raise FetchFailed(str(exc)) from None


class _Backoff:
    """When a version that failed may be fetched again (PBS-Java ``ExponentialBackoffRetryPolicy``)."""

    __slots__ = ("delay", "factor", "jitter", "max_delay")

    def __init__(self, delay_ms: int, max_delay_ms: int, factor: float, jitter: float) -> None:
        self.delay, self.max_delay = delay_ms / 1000, max_delay_ms / 1000
        self.factor, self.jitter = factor, jitter

    def after(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure in a row (1 = the first)."""
        base = min(self.delay * self.factor ** (failures - 1), self.max_delay)
        return base * (1 + random.uniform(-self.jitter, self.jitter))


class VendorLists:
    """The vendor lists of every version seen, fetched on demand; see the module docstring."""

    def __init__(
        self,
        config: VendorListConfig,
        fallback: GlobalVendorList | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.fallback = fallback
        self._templates = {2: config.v2.http_endpoint_template, 3: config.v3.http_endpoint_template}
        self._timeout = config.default_timeout_ms / 1000
        policy = config.retry_policy.exponential_backoff
        self._backoff = _Backoff(policy.delay_millis, policy.max_delay_millis, policy.factor, policy.jitter)
        self._lists: dict[int, dict[int, GlobalVendorList]] = {spec: {} for spec in SPECS}
        self._v2, self._v3 = self._lists[2], self._lists[3]
        self._standins: dict[int, dict[int, GlobalVendorList | None]] = {spec: {} for spec in SPECS}
        self._in_flight: dict[int, set[int]] = {spec: set() for spec in SPECS}
        self._failures: dict[int, dict[int, tuple[int, float]]] = {spec: {} for spec in SPECS}
        self._tasks: set[asyncio.Task[None]] = set()
        self._session: Callable[[], aiohttp.ClientSession] | None = None
        self._limit = asyncio.Semaphore(MAX_CONCURRENT_FETCHES)  # binds to the loop on first use
        counts = self._counters(metrics)
        self._count_ok, self._count_err = counts["ok"], counts["err"]
        self._count_fallback, self._count_missing = counts["fallback"], counts["missing"]
        self._count_request = counts["request"][0]
        if fallback is not None:
            self._lists[3 if (fallback.spec_version or 2) >= 3 else 2][fallback.version] = fallback

    @staticmethod
    def _counters(metrics: Metrics | None) -> dict[str, dict[int, Callable[[], None]]]:
        """Per outcome, per specification: the hot-path ``inc`` of its counter ("request": gvl_requests)."""
        found: dict[str, dict[int, Callable[[], None]]] = {}
        for outcome in ("ok", "err", "fallback", "missing"):
            found[outcome] = {
                spec: metrics.counter(metrics.privacy_tcf_vendorlist, f"v{spec}", outcome).inc if metrics else _none
                for spec in SPECS
            }
        found["request"] = {0: metrics.counter(metrics.gvl_requests).inc if metrics else _none}
        return found

    # -- the request path -----------------------------------------------------------------------

    def for_consent(self, consent: TCF2Consent) -> GlobalVendorList | None:
        """The list to read ``consent`` against; a dictionary look-up once its version is loaded."""
        lists = self._v3 if consent.tcf_policy_version >= 4 else self._v2
        found = lists.get(consent.vendor_list_version)
        if found is not None:
            return found
        return self._miss(spec_of(consent), consent.vendor_list_version)

    def loaded(self, spec: int, version: int) -> GlobalVendorList | None:
        """The list of exactly this version, when loaded."""
        return self._lists[spec].get(version)

    def _miss(self, spec: int, version: int) -> GlobalVendorList | None:
        standins = self._standins[spec]
        if version in standins:
            standin = standins[version]
        else:
            standin = standins[version] = self._nearest(spec, version)
        (self._count_missing if standin is None else self._count_fallback)[spec]()
        self._want(spec, version)
        return standin

    def _nearest(self, spec: int, version: int) -> GlobalVendorList | None:
        """The loaded version of ``spec`` nearest ``version`` (the lower on a tie), else the fallback."""
        lists = self._lists[spec]
        if not lists:
            return self.fallback
        nearest = min(lists, key=lambda v: (abs(v - version), v))
        return lists[nearest]

    # -- fetching -------------------------------------------------------------------------------

    def start(self, session: Callable[[], aiohttp.ClientSession]) -> None:
        """Allow background fetches (on the running loop) through ``session``."""
        self._session = session

    async def close(self) -> None:
        """Stop fetching; cancel and await the fetches in flight."""
        self._session = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _want(self, spec: int, version: int) -> None:
        """Start fetching ``version`` unless fetching is off, it is in flight or backing off."""
        template = self._templates[spec]
        if not template or self._session is None or version < 1 or version in self._in_flight[spec]:
            return
        failed = self._failures[spec].get(version)
        if failed is not None and time.monotonic() < failed[1]:
            return
        self._in_flight[spec].add(version)
        task = asyncio.get_running_loop().create_task(
            self._fetch(spec, version, template.replace(VERSION_MACRO, str(version))),
            name=f"gvl-v{spec}-{version}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fetch(self, spec: int, version: int, url: str) -> None:
        try:
            async with self._limit:
                gvl = await self._download(url)
            if gvl.version != version:
                raise FetchFailed(f"{url}: holds vendorListVersion {gvl.version}, not {version}")
        except FetchFailed as exc:
            self._failed(spec, version, str(exc))
        else:
            self._failures[spec].pop(version, None)
            self._store(spec, gvl)
            self._count_ok[spec]()
            log.info("loaded GVL v%d version %d (%d vendors)", spec, version, len(gvl))
        finally:
            self._in_flight[spec].discard(version)

    def _failed(self, spec: int, version: int, why: str) -> None:
        failures = self._failures[spec].get(version, (0, 0.0))[0] + 1
        wait = self._backoff.after(failures)
        self._failures[spec][version] = (failures, time.monotonic() + wait)
        self._count_err[spec]()
        log.warning("GVL v%d version %d not loaded (%s); next try in %.0f s", spec, version, why, wait)

    async def _download(self, url: str) -> GlobalVendorList:
        session = self._session
        if session is None:
            raise FetchFailed("fetching stopped")
        try:
            async with asyncio.timeout(self._timeout):
                async with session().get(url, allow_redirects=False) as response:
                    self._count_request()
                    if response.status != 200:
                        raise FetchFailed(f"{url}: status {response.status}")
                    body = await read_bounded(response, MAX_GVL_BYTES)
        except BodyTooLarge:
            raise FetchFailed(f"{url}: larger than {MAX_GVL_BYTES // (1024 * 1024)} MB") from None
        except TimeoutError:
            raise FetchFailed(f"{url}: no answer within {self._timeout * 1000:.0f} ms") from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise FetchFailed(f"{url}: {exc.__class__.__name__}: {exc}") from None
        if len(body) > PARSE_IN_THREAD_BYTES:
            return await asyncio.to_thread(_decode, body, url)
        return _decode(body, url)

    def _store(self, spec: int, gvl: GlobalVendorList) -> None:
        """Keep ``gvl``; past the bound, drop the lowest other fetched version (never the fallback)."""
        lists = self._lists[spec]
        lists[gvl.version] = gvl
        others = sorted(v for v, kept in lists.items() if kept is not self.fallback and v != gvl.version)
        while others and len(others) >= MAX_LISTS_PER_SPEC:
            del lists[others.pop(0)]
        self._standins[spec].clear()  # the nearest version may have changed

    def __repr__(self) -> str:
        return f"VendorLists(v2={sorted(self._v2)}, v3={sorted(self._v3)}, fallback={self.fallback!r})"


def resolve(gvl: GlobalVendorList | VendorLists | None, consent: TCF2Consent | None) -> GlobalVendorList | None:
    """The single list to read ``consent`` against: ``gvl`` itself, or the store's for its version
    (None for an empty or malformed consent, which no list helps)."""
    if gvl.__class__ is VendorLists:
        return gvl.for_consent(consent) if consent is not None else None  # type: ignore[union-attr]
    return gvl  # type: ignore[return-value]


__all__ = ["MAX_LISTS_PER_SPEC", "SPECS", "VERSION_MACRO", "FetchFailed", "VendorLists", "resolve", "spec_of"]
