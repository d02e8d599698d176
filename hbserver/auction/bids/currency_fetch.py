"""The server's currency rates (PBS-Go ``currency.RateConverter``): Prebid's currency file fetched
in the background every ``currency.fetch_interval_seconds``, give or take :data:`JITTER` (so
workers and instances spread their fetches out).

The file is ``{"dataAsOf": "...", "conversions": {"USD": {"EUR": 0.9, ...}, ...}}``. Each fetch is
one GET on the shared session, refusing redirects, bounded in time (:data:`FETCH_TIMEOUT_SECONDS`)
and size (:data:`MAX_FILE_BYTES`, decompressed). A failed or malformed fetch keeps the previous
rates, is counted in ``currency_fetch_errors`` and logged (at most once per
:data:`LOG_INTERVAL_SECONDS` for a repeated error). Start-up never waits for the network: until the
first good file auctions convert only with the rates requests carry (a failed first fetch says so
in a warning).

Stale rates (older than ``currency.stale_rates_seconds``) are still used, with a warning on each
failed refresh; ``age_seconds`` feeds the ``currency_rates_age_seconds`` gauge, whose alert says
more than a log line. PBS-Go instead drops stale rates after a failed refresh (identity conversions
only): a publisher's bids in a foreign currency would all be dropped because a CDN was down.

With several workers the supervisor hands them a run directory (``HBSERVER_RUN_DIR``). A refresh
then takes an exclusive ``flock`` on ``currency.lock`` there (polled without blocking the event
loop) and loads ``currency.json`` when another worker fetched it less than an interval ago; else it
fetches and replaces the file atomically, its mtime set to the fetch time. So about one worker per
interval asks the source, and ``lastUpdated``/the age stay those of the fetch from the source.
start() loads a fresh shared file at once (a local read), so a restarted worker has rates at once.

The auction reads :meth:`ServerRates.converter`, a prebuilt
:class:`~hbserver.auction.bids.currency.RateTable`, so a request never waits for or parses anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from hbserver.auction.bids.currency import RateTable, validate_request_rates
from hbserver.config import Currency
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.server import RUN_DIR_ENV
from hbserver.web.client import BodyTooLarge
from hbserver.web.client import read_bounded as read_limited

log = logging.getLogger("hbserver.currency")

FETCH_TIMEOUT_SECONDS = 10.0
MAX_FILE_BYTES = 1024 * 1024  # Prebid's latest.json is ~10 KB
LOG_INTERVAL_SECONDS = 300.0
JITTER = 0.1  # each refresh waits the interval give or take up to this fraction of it
SHARED_FILE = "currency.json"  # in the run directory: the last file fetched by any worker
LOCK_FILE = "currency.lock"
LOCK_POLL_SECONDS = 0.05
LOCK_MARGIN_SECONDS = 5.0  # beyond the fetch timeout, how long a worker waits for another's fetch
CLOCK_SLACK_SECONDS = 1.0  # a shared file dated this far in the future still counts (clock steps)
_MAX_DATA_AS_OF_CHARS = 64
_ACCEPT_JSON = {"Accept": "application/json"}


class FetchError(Exception):
    """One failed fetch; the message says why (no URL query, no body text)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """One successfully fetched file."""

    table: RateTable
    data_as_of: str | None  # the file's ``dataAsOf``, as written there
    updated_ns: int  # wall clock (time.time_ns) of the update, for /currency/rates
    updated_monotonic: float  # for the age


def parse_rates_file(body: bytes) -> tuple[RateTable, str | None]:
    """The rate table and ``dataAsOf`` of a currency file; raises FetchError when it is malformed.

    ``conversions`` must be a non-empty object of objects of positive numbers keyed by 3-letter
    codes (the check of ``ext.prebid.currency.rates``); a file that fails it is rejected whole.
    """
    try:
        document: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise FetchError(f"the currency file is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise FetchError("the currency file is not a JSON object")
    conversions = document.get("conversions")
    if not isinstance(conversions, dict) or not any(conversions.values()):
        raise FetchError("the currency file has no conversions")
    problem = validate_request_rates(conversions, "conversions")
    if problem:
        raise FetchError(f"the currency file is malformed: {problem}")
    data_as_of = document.get("dataAsOf")
    if not isinstance(data_as_of, str):
        data_as_of = None
    return RateTable.of(conversions), (data_as_of[:_MAX_DATA_AS_OF_CHARS] if data_as_of else None)


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, refused (not buffered) past ``limit`` bytes, announced or not, compressed or not."""
    try:
        return await read_limited(response, limit)
    except BodyTooLarge:
        raise FetchError(f"the currency file is larger than {limit} bytes") from None


class ServerRates:
    """The fetched rates of one worker and the loop that refreshes them (``app[CURRENCY]``)."""

    def __init__(
        self,
        config: Currency,
        session: Callable[[], aiohttp.ClientSession],
        metrics: Metrics,
        *,
        interval: float | None = None,
        timeout: float = FETCH_TIMEOUT_SECONDS,
        max_bytes: int = MAX_FILE_BYTES,
        shared_dir: str | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.url = config.fetch_url
        self.interval = float(config.fetch_interval_seconds if interval is None else interval)
        self.stale_seconds = float(config.stale_rates_seconds)
        self.timeout = timeout
        self.max_bytes = max_bytes
        # The workers' shared directory: the supervisor's (HBSERVER_RUN_DIR) unless given; "" = none.
        self.shared_dir = (os.environ.get(RUN_DIR_ENV) if shared_dir is None else shared_dir) or None
        self._rand = rand
        self._session = session
        self._metrics = metrics
        self._loaded: Loaded | None = None
        self._started = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        self._first_refresh = asyncio.Event()
        self._log = LogLimiter(log, LOG_INTERVAL_SECONDS)
        self.last_error: str | None = None  # why the last fetch failed; None after a success

    @property
    def active(self) -> bool:
        """Whether server rates are configured at all (``currency.fetch_url``)."""
        return bool(self.url)

    @property
    def loaded(self) -> Loaded | None:
        return self._loaded

    def converter(self) -> RateTable | None:
        """The rates auctions use: the last good file's, None until one was fetched."""
        loaded = self._loaded
        return loaded.table if loaded is not None else None

    def age_seconds(self) -> float | None:
        """Seconds since the rates were fetched from the source; without any yet, since the fetcher
        started (so a source that never answers looks stale too); None without ``currency.fetch_url``."""
        if not self.url:
            return None
        since = self._loaded.updated_monotonic if self._loaded is not None else self._started
        return max(0.0, time.monotonic() - since)

    def jittered_interval(self) -> float:
        """The interval, give or take up to :data:`JITTER` of it (at random)."""
        return self.interval * (1.0 + JITTER * (2.0 * self._rand() - 1.0))

    def next_delay(self) -> float:
        """Seconds until the next refresh: a jittered interval, counted from the fetch from the
        source after a good refresh (rates loaded from another worker's file are due sooner), but
        never less than :data:`JITTER` of the interval."""
        delay = self.jittered_interval()
        loaded = self._loaded
        if loaded is not None and self.last_error is None:
            delay -= max(0.0, time.monotonic() - loaded.updated_monotonic)
        return max(delay, self.interval * JITTER)

    async def start(self) -> None:
        """Start the refresh loop without waiting for the network: only a fresh shared file (a
        local read) gives rates before this returns; the first fetch goes on in the background."""
        if not self.url or self._task is not None:
            return
        self._started = time.monotonic()
        delay = 0.0
        if self.shared_dir is not None:
            loaded = self._read_shared()
            if loaded is not None:
                self._loaded = loaded
                self._first_refresh.set()
                delay = self.next_delay()
        if self._loaded is None:
            log.info("currency rates: fetching %s in the background; until then auctions use only the rates "
                     "requests carry", self.url)
        self._task = asyncio.create_task(self._run(delay), name="currency-rates")

    async def wait_first_refresh(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for the first refresh, good or not; whether it happened."""
        if self._first_refresh.is_set():
            return True
        try:
            await asyncio.wait_for(self._first_refresh.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, delay: float) -> None:
        while True:
            if delay > 0:
                await asyncio.sleep(delay)
            await self.refresh()
            self._first_refresh.set()
            delay = self.next_delay()

    async def refresh(self) -> bool:
        """One refresh: True when it got good rates (fetched, or from the fresh file a worker fetched);
        a failure keeps the rates and is counted."""
        if self.shared_dir is None:
            return await self._refresh_from_source(share=False)
        lock = await self._lock()
        try:
            loaded = self._read_shared()
            if loaded is not None:
                self._loaded = loaded
                if self.last_error is not None:
                    log.info("currency rates: updated from %s again (by another worker)", self.url)
                self.last_error = None
                return True
            return await self._refresh_from_source(share=True)
        finally:
            if lock is not None:
                os.close(lock)  # releases the flock

    async def _refresh_from_source(self, share: bool) -> bool:
        try:
            body = await self._fetch()
            table, data_as_of = parse_rates_file(body)
        except asyncio.CancelledError:
            raise
        except (FetchError, aiohttp.ClientError, TimeoutError, ValueError) as exc:
            self._failed(str(exc) or exc.__class__.__name__)
            return False
        except Exception as exc:  # a bug must not end the refresh loop
            log.exception("currency rates: unexpected error")
            self._failed(exc.__class__.__name__)
            return False
        self._loaded = Loaded(table, data_as_of, time.time_ns(), time.monotonic())
        if share:
            self._write_shared(body, self._loaded.updated_ns)
        if self.last_error is not None:
            log.info("currency rates: updated from %s again", self.url)
        self.last_error = None
        return True

    async def _fetch(self) -> bytes:
        try:
            async with asyncio.timeout(self.timeout):
                # A redirect is refused like any other non-200: it could point anywhere.
                async with self._session().get(self.url, headers=_ACCEPT_JSON, allow_redirects=False) as response:
                    if response.status != 200:
                        raise FetchError(f"the currency rates request failed with status code {response.status}")
                    return await read_bounded(response, self.max_bytes)
        except TimeoutError:
            raise FetchError(f"the currency rates request took longer than {self.timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise FetchError(f"the currency rates request failed: {exc.__class__.__name__}") from None

    # --- the workers' shared file ----------------------------------------------------------------

    async def _lock(self) -> int | None:
        """The shared lock's descriptor, locked; polled, so the event loop goes on meanwhile. None
        when the lock cannot be had (an unusable directory, or held past the fetch timeout and
        :data:`LOCK_MARGIN_SECONDS`: then this worker goes on without it)."""
        assert self.shared_dir is not None
        path = os.path.join(self.shared_dir, LOCK_FILE)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            self._log.warning("lock-open", "currency rates: cannot open %s: %s", path, exc.strerror or exc)
            return None
        deadline = time.monotonic() + self.timeout + LOCK_MARGIN_SECONDS
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        self._log.warning("lock-held", "currency rates: %s held too long, refreshing without it", path)
                        os.close(fd)
                        return None
                    await asyncio.sleep(LOCK_POLL_SECONDS)
        except OSError as exc:
            self._log.warning("lock", "currency rates: cannot lock %s: %s", path, exc.strerror or exc)
            os.close(fd)
            return None
        except BaseException:  # cancelled while waiting
            os.close(fd)
            raise

    def _read_shared(self) -> Loaded | None:
        """The rates of the shared file when it was fetched less than an interval ago and is a good
        currency file (else None: a missing, stale or corrupted file is fetched anew)."""
        assert self.shared_dir is not None
        path = os.path.join(self.shared_dir, SHARED_FILE)
        try:
            with open(path, "rb") as file:
                fetched_ns = os.fstat(file.fileno()).st_mtime_ns
                age = (time.time_ns() - fetched_ns) / 1e9
                if not -CLOCK_SLACK_SECONDS <= age < self.interval:
                    return None
                loaded = self._loaded
                if loaded is not None and loaded.updated_ns == fetched_ns:
                    return loaded  # the file this worker has already
                body = file.read(self.max_bytes + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._log.warning("shared-read", "currency rates: cannot read %s: %s", path, exc.strerror or exc)
            return None
        try:
            if len(body) > self.max_bytes:
                raise FetchError(f"the currency file is larger than {self.max_bytes} bytes")
            table, data_as_of = parse_rates_file(body)
        except FetchError as exc:
            self._log.warning("shared-bad", "currency rates: ignoring the shared file %s: %s", path, exc)
            return None
        return Loaded(table, data_as_of, fetched_ns, time.monotonic() - max(0.0, age))

    def _write_shared(self, body: bytes, fetched_ns: int) -> None:
        """Replace the shared file at once (a temporary file renamed over it), dated ``fetched_ns``."""
        assert self.shared_dir is not None
        path = os.path.join(self.shared_dir, SHARED_FILE)
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            with open(temporary, "wb") as file:
                file.write(body)
            os.utime(temporary, ns=(fetched_ns, fetched_ns))
            os.replace(temporary, path)
        except OSError as exc:
            self._log.warning("shared-write", "currency rates: cannot write %s: %s", path, exc.strerror or exc)
            with contextlib.suppress(OSError):
                os.unlink(temporary)

    def _failed(self, reason: str) -> None:
        self.last_error = reason
        self._metrics.counter(self._metrics.currency_fetch_errors).inc()
        age = self.age_seconds() or 0.0
        if self._loaded is None:
            self._log.warning(
                reason, "currency rates: error fetching %s, no server rates yet (auctions use only the rates "
                "requests carry): %s", self.url, reason,
            )
        elif age > self.stale_seconds:
            self._log.warning(
                reason, "currency rates: error fetching %s, still using stale rates (%d s old, stale after %d s): %s",
                self.url, age, self.stale_seconds, reason,
            )
        else:
            self._log.warning(
                reason, "currency rates: error fetching %s, keeping rates %d s old: %s", self.url, age, reason
            )


def go_time(epoch_ns: int | None) -> str:
    """A UTC time as Go's ``time.Time`` marshals it (RFC 3339, nanoseconds without trailing
    zeros); None is Go's zero time, which PBS-Go shows before the first successful fetch."""
    if epoch_ns is None:
        return "0001-01-01T00:00:00Z"
    seconds, nanos = divmod(epoch_ns, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    fraction = f"{nanos:09d}".rstrip("0")
    return f"{text}.{fraction}Z" if fraction else f"{text}Z"


def rates_info(rates: ServerRates) -> dict[str, Any]:
    """The ``/currency/rates`` document, PBS-Go's ``currencyRatesInfo``: ``{"active": false}`` without
    a URL; else the source, ``fetchingIntervalNs``, ``lastUpdated`` and ``rates`` (absent until the
    first good file), with the file's ``dataAsOf`` under PBS-Go's ``additionalInfo``."""
    if not rates.active:
        return {"active": False}
    loaded = rates.loaded
    info: dict[str, Any] = {
        "active": True,
        "source": rates.url,
        "fetchingIntervalNs": round(rates.interval * 1e9),
        "lastUpdated": go_time(loaded.updated_ns if loaded else None),
    }
    if loaded is not None:
        info["rates"] = loaded.table.conversions
        if loaded.data_as_of is not None:
            info["additionalInfo"] = {"dataAsOf": loaded.data_as_of}
    return info
