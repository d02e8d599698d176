"""The server's currency rates (PBS-Go ``currency.RateConverter``): Prebid's currency file fetched
at start and every ``currency.fetch_interval_seconds``.

The file is ``{"dataAsOf": "...", "conversions": {"USD": {"EUR": 0.9, ...}, ...}}``. Each fetch is
one GET on the shared session, refusing redirects, bounded in time (:data:`FETCH_TIMEOUT_SECONDS`)
and size (:data:`MAX_FILE_BYTES`, decompressed). A failed or malformed fetch keeps the previous
rates, is counted in ``currency_fetch_errors`` and logged (at most once per
:data:`LOG_INTERVAL_SECONDS` for a repeated error). Start-up waits for the first attempt at most
:data:`START_WAIT_SECONDS`; the fetch goes on in the background after that.

Stale rates (older than ``currency.stale_rates_seconds``) are still used, with a warning on each
failed refresh; ``age_seconds`` feeds the ``currency_rates_age_seconds`` gauge, whose alert says
more than a log line. PBS-Go instead drops stale rates after a failed refresh (identity conversions
only): a publisher's bids in a foreign currency would all be dropped because a CDN was down.

Every worker fetches for itself; the auction reads :meth:`ServerRates.converter`, a prebuilt
:class:`~hbserver.auction.currency.RateTable`, so a request never waits for or parses anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from hbserver.auction.currency import RateTable, validate_request_rates
from hbserver.config import Currency
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.web.client import BodyTooLarge
from hbserver.web.client import read_bounded as read_limited

log = logging.getLogger("hbserver.currency")

FETCH_TIMEOUT_SECONDS = 10.0
MAX_FILE_BYTES = 1024 * 1024  # Prebid's latest.json is ~10 KB
START_WAIT_SECONDS = 2.0
LOG_INTERVAL_SECONDS = 300.0
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
        start_wait: float = START_WAIT_SECONDS,
    ) -> None:
        self.url = config.fetch_url
        self.interval = float(config.fetch_interval_seconds if interval is None else interval)
        self.stale_seconds = float(config.stale_rates_seconds)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.start_wait = start_wait
        self._session = session
        self._metrics = metrics
        self._loaded: Loaded | None = None
        self._started = time.monotonic()
        self._task: asyncio.Task[None] | None = None
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
        """Seconds since the last successful update; without one yet, since the fetcher started
        (so a source that never answers looks stale too); None without ``currency.fetch_url``."""
        if not self.url:
            return None
        since = self._loaded.updated_monotonic if self._loaded is not None else self._started
        return max(0.0, time.monotonic() - since)

    async def start(self) -> None:
        """Start the refresh loop and wait (at most ``start_wait``) for the first attempt."""
        if not self.url or self._task is not None:
            return
        self._started = time.monotonic()
        first_attempt = asyncio.Event()
        self._task = asyncio.create_task(self._run(first_attempt), name="currency-rates")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(first_attempt.wait(), self.start_wait)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, first_attempt: asyncio.Event) -> None:
        while True:
            await self.refresh()
            first_attempt.set()
            await asyncio.sleep(self.interval)

    async def refresh(self) -> bool:
        """One fetch: True if the rates were replaced; a failure keeps them and is counted."""
        try:
            table, data_as_of = parse_rates_file(await self._fetch())
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

    def _failed(self, reason: str) -> None:
        self.last_error = reason
        self._metrics.counter(self._metrics.currency_fetch_errors).inc()
        age = self.age_seconds() or 0.0
        if self._loaded is None:
            self._log.warning(reason, "currency rates: error fetching %s, no server rates yet: %s", self.url, reason)
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
