"""The price floors provider fetcher (PBS-Go ``floors/fetcher.go``, ``PriceFloorFetcher``).

An account with ``price_floors.fetch`` (or a request's ``ext.prebid.floors.floors.location.url``)
names a provider URL. :meth:`FloorsFetcher.get` never waits for the network: it answers the cached,
already validated data with PBS-Go's fetch status (``success``), or queues a fetch and answers
``inprogress``. In the background:

- at most ``price_floors.fetcher.worker`` fetches run at once (PBS-Go's worker pool);
- at most ``price_floors.fetcher.capacity`` fetch settings are tracked (PBS-Go's queue length); a new
  one beyond that is refused (``error``, counted, logged) until an idle one is forgotten;
- data is kept for ``max_age_sec`` (or the answer's ``max-age`` header, PBS-Go's header name, when it
  exceeds ``period_sec``) and fetched again every ``period_sec``; all data together is bounded by
  ``price_floors.fetcher.cache_size_mb`` (the bodies' sizes; the least recently used goes first);
- each fetch is one GET refusing redirects, bounded by ``timeout_ms`` and ``max_file_size_kb`` (0: by
  the cache size only), then checked by the caller's ``validate`` (the floors engine's
  ``validate_fetched_floors``). A failure keeps the previous data until it expires, is counted in
  ``floors_fetch_errors`` and logged with PBS-Go's texts (a repeated one at most every
  :data:`LOG_INTERVAL_SECONDS`);
- as in PBS-Go, after ``max_retries`` failed fetches in a row a provider is no longer polled (a success
  resets the count). Unlike PBS-Go, which then never fetches that URL again, a request asking for it
  fetches it again once a period has passed since the last attempt.

Other differences from PBS-Go, on purpose: entries are keyed by the whole ``AccountFloorFetch`` (the
URL and the limits its data was validated with), so accounts sharing a URL with other limits do not
get each other's data; a provider nobody asked for during ``max_age_sec`` is forgotten (PBS-Go polls
every URL ever seen, request-supplied ones included, until restart); ``fetch.enabled: false`` answers
``none`` (PBS-Go answers ``inprogress`` forever); after a failed fetch with nothing cached the status
is ``error`` or ``timeout`` (PBS-Java's use of these constants; PBS-Go keeps saying ``inprogress``);
success reschedules the next fetch even with ``max_retries: 0``; an invalid ``max-age`` header is
ignored (PBS-Go logs it and uses it anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from hbserver.config import AccountFloorFetch, PriceFloors
from hbserver.floors.data import FETCH_ERROR, FETCH_INPROGRESS, FETCH_NONE, FETCH_SUCCESS, FETCH_TIMEOUT
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.numbers import INT64, NumberError, parse_int
from hbserver.web.client import BodyTooLarge, read_bounded

__all__ = [
    "FETCH_ERROR",
    "FETCH_INPROGRESS",
    "FETCH_NONE",
    "FETCH_SUCCESS",
    "FETCH_TIMEOUT",
    "FloorsFetcher",
    "Validate",
]

log = logging.getLogger("hbserver.floors.fetcher")

LOG_INTERVAL_SECONDS = 300.0
MAX_AGE_HEADER = "max-age"  # PBS-Go reads this header, not Cache-Control
MAX_INT32 = 2**31 - 1
_MAX_LOGGED_URL = 200
_URL_SCHEMES = ("http://", "https://")

# The floors engine's check of a provider's answer: (parsed data, None) or (None, why not).
Validate = Callable[[bytes, AccountFloorFetch], tuple[object | None, str | None]]


class _Failed(Exception):
    """One failed fetch: the metric's reason, the fetch status, the log line (PBS-Go's text)."""

    def __init__(self, reason: str, status: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status
        self.message = message


@dataclass(slots=True, eq=False)
class _Entry:
    """One tracked provider: its settings, cached data and schedule."""

    fetch: AccountFloorFetch
    account_id: str  # the account that asked first (for the log)
    last_asked: float  # monotonic
    data: object | None = None
    size: int = 0  # bytes of the body ``data`` was parsed from
    expires: float = 0.0  # monotonic
    status: str = FETCH_INPROGRESS  # when there is no data: why
    failures: int = 0  # failed fetches in a row
    given_up: bool = False  # max_retries reached: fetched again only when asked, a period after the last try
    last_attempt: float = -math.inf
    running: bool = False  # queued or being fetched
    forgotten: bool = False
    timer: asyncio.TimerHandle | None = None


class FloorsFetcher:
    """Floors provider data for the auctions of one worker (``get``), fetched in the background."""

    def __init__(
        self,
        config: PriceFloors,
        session: Callable[[], aiohttp.ClientSession],
        metrics: Metrics,
        validate: Validate,
        *,
        time_scale: float = 1.0,
    ) -> None:
        fetcher = config.fetcher
        self.enabled = config.enabled
        self.workers = fetcher.worker
        self.capacity = fetcher.capacity
        self.max_retries = fetcher.max_retries
        self.cache_bytes = fetcher.cache_size_mb * 1024 * 1024
        self.time_scale = time_scale  # seconds per configured second (tests shorten periods)
        self._session = session
        self._metrics = metrics
        self._validate = validate
        self._entries: OrderedDict[AccountFloorFetch, _Entry] = OrderedDict()  # least recently asked first
        self._bytes = 0
        self._ready: asyncio.Queue[_Entry] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._in_flight = 0
        self._log = LogLimiter(log, LOG_INTERVAL_SECONDS)

    # --- the auction's side -----------------------------------------------------------------------

    def get(self, account_id: str, fetch: AccountFloorFetch) -> tuple[object | None, str]:
        """The provider's data and PBS-Go's fetch status, never waiting: ``success`` with the data;
        else None with ``inprogress`` (a fetch is queued or running), ``error``/``timeout`` (the last
        fetch failed, or the provider cannot be tracked) or ``none`` (no fetching here). The caller asks
        only when the account's ``use_dynamic_data`` is on, as PBS-Go's ``resolveFloors`` does."""
        entry = self._entries.get(fetch)
        if entry is not None:
            now = time.monotonic()
            entry.last_asked = now
            self._entries.move_to_end(fetch)
            if entry.data is not None:
                if now < entry.expires:
                    return entry.data, FETCH_SUCCESS
                self._drop_data(entry, entry.status if entry.status != FETCH_SUCCESS else FETCH_INPROGRESS)
            if entry.running:
                return None, FETCH_INPROGRESS
            if entry.given_up and now - entry.last_attempt >= self._seconds(entry.fetch.period_sec):
                self._queue(entry)
                return None, FETCH_INPROGRESS
            return None, entry.status
        if not self.enabled or not fetch.enabled or not fetch.url.startswith(_URL_SCHEMES):
            return None, FETCH_NONE
        if len(self._entries) >= self.capacity:
            self._metrics.counter(self._metrics.floors_fetch_errors, "capacity").inc()
            self._log.warning(
                "capacity",
                "floors fetcher: %d providers tracked already (price_floors.fetcher.capacity), "
                "not fetching %s for account %s",
                len(self._entries),
                _short(fetch.url),
                account_id,
            )
            return None, FETCH_ERROR
        entry = self._entries[fetch] = _Entry(fetch, account_id, time.monotonic())
        self._queue(entry)
        return None, FETCH_INPROGRESS

    # --- state, for /status pages and tests -------------------------------------------------------

    @property
    def tracked(self) -> int:
        """Providers tracked (at most ``capacity``)."""
        return len(self._entries)

    @property
    def cached_bytes(self) -> int:
        """Bytes of provider data kept (at most ``cache_size_mb``)."""
        return self._bytes

    @property
    def in_flight(self) -> int:
        """Fetches running now (at most ``worker``)."""
        return self._in_flight

    # --- lifetime ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the fetch workers (fetches queued before wait for them)."""
        if not self.enabled or self._tasks:
            return
        self._tasks = [asyncio.create_task(self._work(), name=f"floors-fetcher-{n}") for n in range(self.workers)]

    async def close(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for entry in self._entries.values():
            entry.forgotten = True
            if entry.timer is not None:
                entry.timer.cancel()
                entry.timer = None
        self._entries.clear()
        self._bytes = 0

    # --- the background ---------------------------------------------------------------------------

    def _seconds(self, configured: float) -> float:
        return configured * self.time_scale

    def _queue(self, entry: _Entry) -> None:
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        entry.running = True
        self._ready.put_nowait(entry)

    def _schedule(self, entry: _Entry) -> None:
        """The entry's next turn, a period from now: a fetch, or forgetting it when idle."""
        entry.timer = asyncio.get_running_loop().call_later(self._seconds(entry.fetch.period_sec), self._due, entry)

    def _due(self, entry: _Entry) -> None:
        entry.timer = None
        if entry.forgotten or entry.running:
            return
        if time.monotonic() - entry.last_asked >= self._seconds(entry.fetch.max_age_sec):
            self._forget(entry)  # nobody asked for it for a while: stop polling
        elif entry.given_up:
            self._schedule(entry)  # only a request fetches it again
        else:
            self._queue(entry)

    def _forget(self, entry: _Entry) -> None:
        self._drop_data(entry, FETCH_INPROGRESS)
        entry.forgotten = True
        if self._entries.get(entry.fetch) is entry:
            del self._entries[entry.fetch]

    def _drop_data(self, entry: _Entry, status: str) -> None:
        self._bytes -= entry.size
        entry.data, entry.size, entry.status = None, 0, status

    async def _work(self) -> None:
        while True:
            entry = await self._ready.get()
            if entry.forgotten:
                continue
            self._in_flight += 1
            try:
                await self._refresh(entry)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug (or the caller's validate) must not end the worker
                log.exception("floors fetcher: unexpected error fetching %s", _short(entry.fetch.url))
                self._failed(entry, _Failed("invalid", FETCH_ERROR, "unexpected error"), log_it=False)
            finally:
                self._in_flight -= 1
                entry.running = False
            if not entry.forgotten:
                self._schedule(entry)

    async def _refresh(self, entry: _Entry) -> None:
        fetch = entry.fetch
        entry.last_attempt = time.monotonic()
        try:
            body, max_age = await self._download(fetch)
            data, problem = self._validate(body, fetch)
            if problem is not None or data is None:
                raise _Failed(
                    "invalid",
                    FETCH_ERROR,
                    f"Validation failed for floor JSON from URL: {_short(fetch.url)}, reason: {problem or 'no data'}",
                )
        except _Failed as failure:
            self._failed(entry, failure)
            return
        if entry.forgotten:
            return
        self._drop_data(entry, FETCH_SUCCESS)
        entry.data, entry.size = data, len(body)
        entry.expires = time.monotonic() + self._seconds(max_age or fetch.max_age_sec)
        entry.failures, entry.given_up = 0, False
        self._bytes += entry.size
        self._evict(keep=entry)

    def _failed(self, entry: _Entry, failure: _Failed, log_it: bool = True) -> None:
        entry.failures += 1
        entry.given_up = entry.failures >= self.max_retries
        entry.status = failure.status  # answered once there is no data (kept data stays until it expires)
        self._metrics.counter(self._metrics.floors_fetch_errors, failure.reason).inc()
        if log_it:
            self._log.warning(
                f"{failure.reason}:{entry.fetch.url}",
                "floors fetcher: %s (account %s)",
                failure.message,
                entry.account_id,
            )

    def _evict(self, keep: _Entry) -> None:
        """Drop the least recently asked-for data until all of it fits ``cache_size_mb``."""
        if self._bytes <= self.cache_bytes:
            return
        for entry in self._entries.values():
            if entry is not keep and entry.data is not None:
                self._drop_data(entry, FETCH_INPROGRESS)  # fetched again at its next period
                if self._bytes <= self.cache_bytes:
                    return

    def _limit(self, fetch: AccountFloorFetch) -> int:
        if fetch.max_file_size_kb > 0:
            return min(fetch.max_file_size_kb * 1024, self.cache_bytes)
        return self.cache_bytes

    async def _download(self, fetch: AccountFloorFetch) -> tuple[bytes, int]:
        """The provider's answer and its usable ``max-age`` (0: none)."""
        url = fetch.url
        timeout = fetch.timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout):
                async with self._session().get(url, allow_redirects=False) as response:
                    if response.status != 200:
                        raise _Failed(
                            "status",
                            FETCH_ERROR,
                            f"Error while fetching floor data from URL: {_short(url)}, reason : no response "
                            f"from server (status code {response.status})",
                        )
                    max_age = self._max_age(fetch, response.headers.get(MAX_AGE_HEADER))
                    return await read_bounded(response, self._limit(fetch)), max_age
        except BodyTooLarge:
            raise _Failed(
                "too_large",
                FETCH_ERROR,
                f"Received invalid floor data from URL: {_short(url)}, reason : floor file size is greater than "
                "MaxFileSize",
            ) from None
        except TimeoutError:
            raise _Failed(
                "timeout",
                FETCH_TIMEOUT,
                f"Error while fetching floor data from URL: {_short(url)}, reason : error while getting response "
                f"from url : timeout after {fetch.timeout_ms} ms",
            ) from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise _Failed(
                "network",
                FETCH_ERROR,
                f"Error while fetching floor data from URL: {_short(url)}, reason : error while getting response "
                f"from url : {exc.__class__.__name__}",
            ) from None

    def _max_age(self, fetch: AccountFloorFetch, header: str | None) -> int:
        """The header's max-age when it is an integer in (period_sec, MaxInt32]; else 0, logged."""
        if not header:
            return 0
        try:
            max_age = parse_int(header.strip(), INT64)  # strconv.Atoi
        except NumberError:
            self._log.warning(
                f"max-age:{fetch.url}", "floors fetcher: max-age in header is malformed for url %s", _short(fetch.url)
            )
            return 0
        if max_age <= fetch.period_sec or max_age > MAX_INT32:
            self._log.warning(
                f"max-age:{fetch.url}",
                "floors fetcher: Invalid max-age = %s provided, value should be valid "
                "integer and should be within (%d, %d)",
                header[:20],
                fetch.period_sec,
                MAX_INT32,
            )
            return 0
        return max_age


def _short(url: str) -> str:
    """A URL for the log (a request may supply a long one)."""
    return url if len(url) <= _MAX_LOGGED_URL else url[:_MAX_LOGGED_URL] + "..."
