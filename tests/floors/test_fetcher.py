"""The floors provider fetcher against a loopback provider: statuses, refresh, expiry, failures with
PBS-Go's log texts, retries, and the worker, capacity and cache bounds (PBS-Go floors/fetcher_test.go)."""

from __future__ import annotations

import asyncio
import gzip
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.config import AccountFloorFetch, PriceFloors
from hbserver.config import FloorsFetcher as FetcherConfig
from hbserver.floors import FloorRules, validate_fetched_floors
from hbserver.floors.fetcher import (
    FETCH_ERROR,
    FETCH_INPROGRESS,
    FETCH_NONE,
    FETCH_SUCCESS,
    FETCH_TIMEOUT,
    FloorsFetcher,
)
from hbserver.metrics import Metrics
from hbserver.web.client import SharedSession

SCALE = 0.05  # a configured second lasts 50 ms here
# PBS-Go's fetcher_test.go provider answer.
FLOORS = {
    "currency": "USD",
    "modelgroups": [
        {
            "modelweight": 40,
            "modelversion": "version1",
            "default": 5,
            "values": {"banner|300x600|www.website.com": 3, "banner|728x90|www.website.com": 5, "*|*|*": 16},
            "schema": {"fields": ["mediaType", "size", "domain"], "delimiter": "|"},
        }
    ],
}


class Provider:
    """GET /floors answers what the test sets; counts hits (by query) and concurrent requests."""

    def __init__(self) -> None:
        self.body = orjson.dumps(FLOORS)
        self.bodies: dict[str, bytes] = {}  # by the query's id
        self.status = 200
        self.delay = 0.0
        self.headers: dict[str, str] = {}
        self.chunked = False
        self.gzip = False
        self.hits: dict[str, int] = {}
        self.running = 0
        self.most_running = 0
        app = web.Application()
        app.router.add_get("/floors", self.handle)
        app.router.add_get("/moved", self.moved)
        self.server = TestServer(app, host="127.0.0.1")

    @property
    def total(self) -> int:
        return sum(self.hits.values())

    async def handle(self, request: web.Request) -> web.StreamResponse:
        key = request.query.get("id", "")
        self.hits[key] = self.hits.get(key, 0) + 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            body = self.bodies.get(key, self.body)
            headers = dict(self.headers)
            if self.gzip:
                body = gzip.compress(body)
                headers["Content-Encoding"] = "gzip"
            if not self.chunked:
                return web.Response(status=self.status, body=body, headers=headers, content_type="application/json")
            response = web.StreamResponse(status=self.status, headers=headers)
            response.enable_chunked_encoding()
            await response.prepare(request)
            for start in range(0, len(body), 512):
                await response.write(body[start : start + 512])
            await response.write_eof()
            return response
        finally:
            self.running -= 1

    async def moved(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(location="/floors")

    def url(self, path: str = "/floors", key: str | None = None) -> str:
        url = str(self.server.make_url(path))
        return url if key is None else f"{url}?id={key}"


@pytest.fixture
async def provider() -> AsyncIterator[Provider]:
    mock = Provider()
    await mock.server.start_server()
    yield mock
    await mock.server.close()


def validate(body: bytes, fetch: AccountFloorFetch) -> tuple[object | None, str | None]:
    """A stand-in for the floors engine's validate_fetched_floors."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, "invalid price floor json"
    if not isinstance(document, dict) or not document.get("modelgroups"):
        return None, "no model groups found in price floor data"
    return document, None


MakeFetcher = Callable[..., FloorsFetcher]


@pytest.fixture
async def make_fetcher() -> AsyncIterator[MakeFetcher]:
    """A started FloorsFetcher on a real session; closed after the test."""
    session = SharedSession()
    made: list[FloorsFetcher] = []

    def factory(
        metrics: Metrics | None = None, enabled: bool = True, check: Any = validate, **fetcher: Any
    ) -> FloorsFetcher:
        fetcher.setdefault("cache_size_mb", 1)
        config = PriceFloors(enabled=enabled, fetcher=FetcherConfig(**fetcher))
        made.append(FloorsFetcher(config, session, metrics or Metrics(), check, time_scale=SCALE))
        return made[-1]

    yield factory
    for fetcher in made:
        await fetcher.close()
    await session.close()


def account_fetch(url: str, **options: Any) -> AccountFloorFetch:
    """Settings as PBS-Go's tests use them, in scaled seconds: a period of 100 ms, data kept 200 ms."""
    values: dict[str, Any] = {
        "enabled": True,
        "url": url,
        "timeout_ms": 1000,
        "max_file_size_kb": 1000,
        "max_rules": 100,
        "period_sec": 2,
        "max_age_sec": 4,
    }
    values.update(options)
    return AccountFloorFetch(**values)


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def settled(fetcher: FloorsFetcher, account: str, fetch: AccountFloorFetch) -> tuple[object | None, str]:
    """get() once the fetch queued by the first get() is over."""
    await until(lambda: fetcher.get(account, fetch)[1] != FETCH_INPROGRESS)
    return fetcher.get(account, fetch)


def errors(metrics: Metrics, reason: str) -> float:
    metrics.flush()
    return metrics.registry.get_sample_value("hbserver_floors_fetch_errors_total", {"reason": reason}) or 0.0


def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/floors"


# --- no fetching --------------------------------------------------------------------------------------

NONE_CASES: list[tuple[str, bool, dict[str, Any]]] = [
    ("host price_floors disabled", False, {}),  # PBS-Go TestFetchWhenPriceFloorsDisabled
    ("account fetch disabled", True, {"enabled": False}),
    ("no URL", True, {"url": ""}),
    ("URL without a scheme", True, {"url": "test.com/floor"}),
    ("not http", True, {"url": "ftp://127.0.0.1/floors"}),
]


@pytest.mark.parametrize(("case", "host", "options"), NONE_CASES, ids=[c[0] for c in NONE_CASES])
async def test_no_fetching_answers_none(provider, make_fetcher, case: str, host: bool, options: dict[str, Any]):
    options = dict(options)
    fetcher = make_fetcher(enabled=host)
    await fetcher.start()
    fetch = account_fetch(options.pop("url", provider.url()), **options)
    assert fetcher.get("acc", fetch) == (None, FETCH_NONE)
    await asyncio.sleep(0.05)
    assert fetcher.get("acc", fetch) == (None, FETCH_NONE)
    assert provider.total == 0 and fetcher.tracked == 0


# --- fetching -----------------------------------------------------------------------------------------


async def test_first_get_is_in_progress_then_success(provider, make_fetcher):
    fetcher = make_fetcher()
    await fetcher.start()
    fetch = account_fetch(provider.url())
    assert fetcher.get("acc", fetch) == (None, FETCH_INPROGRESS)  # PBS-Go TestFetcherEntryNotPresentInCache
    data, status = await settled(fetcher, "acc", fetch)
    assert (data, status) == (FLOORS, FETCH_SUCCESS)
    again, _ = fetcher.get("acc", fetch)
    assert again is data  # parsed once, shared by every auction
    assert provider.total == 1 and fetcher.cached_bytes == len(orjson.dumps(FLOORS))


async def test_gets_before_start_are_fetched_once_started(provider, make_fetcher):
    fetcher = make_fetcher()
    fetch = account_fetch(provider.url())
    assert fetcher.get("acc", fetch) == (None, FETCH_INPROGRESS)
    await asyncio.sleep(0.05)
    assert provider.total == 0
    await fetcher.start()
    assert await settled(fetcher, "acc", fetch) == (FLOORS, FETCH_SUCCESS)


async def test_one_fetch_for_many_gets_of_the_same_url(provider, make_fetcher):
    # PBS-Go TestFetcherWhenRequestGetSameURLInrequest
    provider.delay = 0.1
    fetcher = make_fetcher(worker=5, capacity=10)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=20, max_age_sec=40)
    statuses = {fetcher.get(f"acc-{n % 3}", fetch)[1] for n in range(50)}
    assert statuses == {FETCH_INPROGRESS}
    await settled(fetcher, "acc", fetch)
    assert provider.total == 1 and fetcher.tracked == 1


async def test_providers_are_keyed_by_their_settings(provider, make_fetcher):
    fetcher = make_fetcher()
    await fetcher.start()
    url = provider.url()
    for fetch in (account_fetch(url), account_fetch(url), account_fetch(url, max_rules=5)):
        fetcher.get("acc", fetch)
    await until(lambda: provider.total == 2)
    await asyncio.sleep(0.02)
    assert fetcher.tracked == 2 and provider.total == 2


async def test_data_is_fetched_again_every_period(provider, make_fetcher):
    fetcher = make_fetcher()
    await fetcher.start()
    fetch = account_fetch(provider.url())
    assert await settled(fetcher, "acc", fetch) == (FLOORS, FETCH_SUCCESS)
    newer = {**FLOORS, "currency": "EUR"}
    provider.body = orjson.dumps(newer)
    started = time.monotonic()
    await until(lambda: fetcher.get("acc", fetch)[0] == newer)
    assert time.monotonic() - started >= 2 * SCALE * 0.5  # not long before the period
    assert provider.total == 2


async def test_data_expires_after_max_age_when_refreshes_fail(provider, make_fetcher):
    metrics = Metrics()
    fetcher = make_fetcher(metrics)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=2, max_age_sec=6)
    assert await settled(fetcher, "acc", fetch) == (FLOORS, FETCH_SUCCESS)
    fetched = time.monotonic()
    provider.status = 500
    await until(lambda: errors(metrics, "status") == 1)
    assert fetcher.get("acc", fetch) == (FLOORS, FETCH_SUCCESS)  # kept until it expires
    await until(lambda: fetcher.get("acc", fetch)[0] is None)
    assert time.monotonic() - fetched >= 6 * SCALE * 0.7
    # no data: inprogress while the next fetch runs, else the last fetch's failure
    assert fetcher.get("acc", fetch) in ((None, FETCH_ERROR), (None, FETCH_INPROGRESS))
    await until(lambda: fetcher.get("acc", fetch) == (None, FETCH_ERROR))
    assert fetcher.cached_bytes == 0


MAX_AGE_CASES: list[tuple[str, str | None, int]] = [
    # (case, the provider's max-age header, seconds the data is kept with period_sec 10, max_age_sec 40)
    ("from the header", "20", 20),  # PBS-Go TestFetchFloorRulesFromURL
    ("malformed header", "abc", 40),  # PBS-Go TestFetchFloorRulesFromURLInvalidMaxAge
    ("not above the period", "10", 40),
    ("negative", "-5", 40),
    ("above MaxInt32", str(2**31), 40),
    ("no header", None, 40),
]


@pytest.mark.parametrize(("case", "header", "kept"), MAX_AGE_CASES, ids=[c[0] for c in MAX_AGE_CASES])
async def test_max_age_header(provider, make_fetcher, case: str, header: str | None, kept: int):
    if header is not None:
        provider.headers["max-age"] = header
    fetcher = make_fetcher()
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=10, max_age_sec=40)
    assert await settled(fetcher, "acc", fetch) == (FLOORS, FETCH_SUCCESS)
    entry = fetcher._entries[fetch]
    assert entry.expires - time.monotonic() == pytest.approx(kept * SCALE, abs=0.05)


FAILURES: list[tuple[str, dict[str, Any], dict[str, Any], str, str, str]] = [
    # (case, provider setup, account fetch options, status, metric reason, PBS-Go's log text)
    ("status 500", {"status": 500}, {}, FETCH_ERROR, "status", "reason : no response from server (status code 500)"),
    ("status 204", {"status": 204, "body": b""}, {}, FETCH_ERROR, "status", "no response from server"),
    ("redirect", {}, {"path": "/moved"}, FETCH_ERROR, "status", "no response from server (status code 302)"),
    (
        "larger than max_file_size_kb",
        {"body": orjson.dumps(FLOORS) + b" " * 1024},
        {"max_file_size_kb": 1},
        FETCH_ERROR,
        "too_large",
        "reason : floor file size is greater than MaxFileSize",
    ),
    (
        "larger, chunked",
        {"body": orjson.dumps(FLOORS) + b" " * 1024, "chunked": True},
        {"max_file_size_kb": 1},
        FETCH_ERROR,
        "too_large",
        "floor file size is greater than MaxFileSize",
    ),
    (
        "larger once decompressed",
        {"body": orjson.dumps(FLOORS) + b" " * 4096, "gzip": True},
        {"max_file_size_kb": 1},
        FETCH_ERROR,
        "too_large",
        "floor file size is greater than MaxFileSize",
    ),
    (
        "larger than the cache",
        {"body": orjson.dumps(FLOORS) + b" " * (1024 * 1024)},
        {"max_file_size_kb": 0},
        FETCH_ERROR,
        "too_large",
        "floor file size is greater than MaxFileSize",
    ),
    (
        "slow",
        {"delay": 1.0},
        {"timeout_ms": 100},
        FETCH_TIMEOUT,
        "timeout",
        "reason : error while getting response from url : timeout after 100 ms",
    ),
    (
        "malformed JSON",
        {"body": b'{"data":nil?}'},
        {},
        FETCH_ERROR,
        "invalid",
        "Validation failed for floor JSON from URL: http://127.0.0.1",
    ),
    (
        "invalid floors",
        {"body": b'{"currency":"USD","modelgroups":[]}'},
        {},
        FETCH_ERROR,
        "invalid",
        "reason: no model groups found in price floor data",
    ),
    (
        "connection refused",
        {},
        {"refused": True},
        FETCH_ERROR,
        "network",
        "error while getting response from url : ClientConnectorError",
    ),
]


@pytest.mark.parametrize(
    ("case", "setup", "options", "status", "reason", "text"), FAILURES, ids=[c[0] for c in FAILURES]
)
async def test_a_failed_fetch_gives_no_data(
    provider,
    make_fetcher,
    caplog,
    case: str,
    setup: dict[str, Any],
    options: dict[str, Any],
    status: str,
    reason: str,
    text: str,
):
    for name, value in setup.items():
        setattr(provider, name, value)
    metrics = Metrics()
    fetcher = make_fetcher(metrics)
    await fetcher.start()
    options = dict(options)
    url = refused_url() if options.pop("refused", False) else provider.url(options.pop("path", "/floors"))
    fetch = account_fetch(url, **options)
    with caplog.at_level(logging.WARNING, logger="hbserver.floors.fetcher"):
        assert fetcher.get("acc-1", fetch) == (None, FETCH_INPROGRESS)
        assert await settled(fetcher, "acc-1", fetch) == (None, status)
    assert errors(metrics, reason) == 1
    assert fetcher.cached_bytes == 0
    [record] = [r for r in caplog.records if r.name == "hbserver.floors.fetcher"]
    assert text in record.getMessage() and "(account acc-1)" in record.getMessage()
    if case not in ("redirect", "connection refused"):  # the next fetch, a period later, works again
        for name, value in {"status": 200, "delay": 0.0, "body": orjson.dumps(FLOORS)}.items():
            setattr(provider, name, value)
        await until(lambda: fetcher.get("acc-1", fetch)[1] == FETCH_SUCCESS)


async def test_a_repeated_failure_is_logged_once_but_counted_each_time(provider, make_fetcher, caplog):
    provider.status = 503
    metrics = Metrics()
    fetcher = make_fetcher(metrics)
    await fetcher.start()
    fetch = account_fetch(provider.url(), max_age_sec=100)
    with caplog.at_level(logging.WARNING, logger="hbserver.floors.fetcher"):
        fetcher.get("acc", fetch)
        await until(lambda: errors(metrics, "status") >= 3)
    assert len([r for r in caplog.records if r.name == "hbserver.floors.fetcher"]) == 1


RETRY_CASES: list[tuple[str, int, int]] = [
    # (case, max_retries, fetches before the provider is given up)
    ("max_retries 3", 3, 3),
    ("max_retries 1", 1, 1),
    ("max_retries 0: the first failure", 0, 1),
]


@pytest.mark.parametrize(("case", "max_retries", "fetches"), RETRY_CASES, ids=[c[0] for c in RETRY_CASES])
async def test_failing_providers_are_given_up_after_max_retries(
    provider, make_fetcher, case: str, max_retries: int, fetches: int
):
    provider.status = 500
    fetcher = make_fetcher(max_retries=max_retries)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=2, max_age_sec=100)
    fetcher.get("acc", fetch)
    entry = fetcher._entries[fetch]
    # the provider counts a fetch when it answers; the fetcher counts the failure a moment later
    await until(lambda: provider.total == fetches and not entry.running)
    assert entry.failures == fetches  # PBS-Go TestPriceFloorFetcherWorkerRetry: 1 after one failure
    await asyncio.sleep(5 * 2 * SCALE)  # five periods
    assert provider.total == fetches and entry.given_up
    # a request asks again a period after the last attempt: one more fetch, which works now
    provider.status = 200
    assert fetcher.get("acc", fetch) == (None, FETCH_INPROGRESS)
    await until(lambda: fetcher.get("acc", fetch)[1] == FETCH_SUCCESS)
    assert provider.total == fetches + 1 and entry.failures == 0 and not entry.given_up
    await until(lambda: provider.total == fetches + 2)  # polled every period again


async def test_a_given_up_provider_is_not_fetched_again_within_a_period(provider, make_fetcher):
    provider.status = 500
    fetcher = make_fetcher(max_retries=0)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=20, max_age_sec=100)  # a period of one second
    fetcher.get("acc", fetch)
    await until(lambda: provider.total == 1)
    for _ in range(20):
        assert fetcher.get("acc", fetch) in ((None, FETCH_INPROGRESS), (None, FETCH_ERROR))
        await asyncio.sleep(0.01)
    assert provider.total == 1 and fetcher.get("acc", fetch) == (None, FETCH_ERROR)


async def test_a_failure_after_success_keeps_the_data_and_the_retry_count_resets(provider, make_fetcher):
    fetcher = make_fetcher(max_retries=10)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=2, max_age_sec=100)
    assert await settled(fetcher, "acc", fetch) == (FLOORS, FETCH_SUCCESS)
    provider.status = 500
    await until(lambda: fetcher._entries[fetch].failures == 2)
    assert fetcher.get("acc", fetch) == (FLOORS, FETCH_SUCCESS)
    provider.status = 200
    await until(lambda: fetcher._entries[fetch].failures == 0)


async def test_a_validate_that_raises_counts_as_invalid_and_the_worker_goes_on(provider, make_fetcher, caplog):
    calls: list[bytes] = []

    def broken(body: bytes, fetch: AccountFloorFetch) -> tuple[object | None, str | None]:
        calls.append(body)
        if len(calls) == 1:
            raise KeyError("bug")
        return validate(body, fetch)

    metrics = Metrics()
    fetcher = make_fetcher(metrics, check=broken, worker=1)
    await fetcher.start()
    fetch = account_fetch(provider.url())
    with caplog.at_level(logging.ERROR, logger="hbserver.floors.fetcher"):
        assert await settled(fetcher, "acc", fetch) == (None, FETCH_ERROR)
    assert errors(metrics, "invalid") == 1
    assert any("unexpected error" in r.getMessage() for r in caplog.records)
    await until(lambda: fetcher.get("acc", fetch)[1] == FETCH_SUCCESS)


# --- the bounds ---------------------------------------------------------------------------------------


async def test_at_most_worker_fetches_run_at_once(provider, make_fetcher):
    provider.delay = 0.1
    fetcher = make_fetcher(worker=2, capacity=10)
    await fetcher.start()
    fetches = [account_fetch(provider.url(key=str(n)), period_sec=100, max_age_sec=200) for n in range(6)]
    for fetch in fetches:
        assert fetcher.get("acc", fetch) == (None, FETCH_INPROGRESS)
    await asyncio.sleep(0.05)
    assert fetcher.in_flight == 2 and provider.running == 2
    await until(lambda: all(fetcher.get("acc", f)[1] == FETCH_SUCCESS for f in fetches))
    assert provider.most_running == 2 and provider.total == 6


async def test_at_most_capacity_providers_are_tracked(provider, make_fetcher, caplog):
    # PBS-Go TestFetcherWhenRequestGetDifferentURLInrequest: never more than capacity entries
    metrics = Metrics()
    fetcher = make_fetcher(metrics, worker=5, capacity=3)
    await fetcher.start()
    fetches = [account_fetch(provider.url(key=str(n)), period_sec=100, max_age_sec=200) for n in range(10)]
    with caplog.at_level(logging.WARNING, logger="hbserver.floors.fetcher"):
        statuses = [fetcher.get("acc-9", fetch)[1] for fetch in fetches]
    assert statuses == [FETCH_INPROGRESS] * 3 + [FETCH_ERROR] * 7
    assert fetcher.tracked == 3
    await until(lambda: provider.total == 3)
    await asyncio.sleep(0.05)
    assert provider.total == 3 and set(provider.hits) == {"0", "1", "2"}
    assert errors(metrics, "capacity") == 7
    [record] = [r for r in caplog.records if r.name == "hbserver.floors.fetcher"]
    assert "3 providers tracked already (price_floors.fetcher.capacity)" in record.getMessage()
    assert "account acc-9" in record.getMessage()


async def test_a_provider_nobody_asks_for_is_forgotten(provider, make_fetcher):
    fetcher = make_fetcher(capacity=1)
    await fetcher.start()
    idle = account_fetch(provider.url(key="idle"), period_sec=1, max_age_sec=2)
    assert await settled(fetcher, "acc", idle) == (FLOORS, FETCH_SUCCESS)
    other = account_fetch(provider.url(key="other"))
    assert fetcher.get("acc", other) == (None, FETCH_ERROR)  # full
    await until(lambda: fetcher.tracked == 0)
    idle_hits = provider.hits["idle"]
    assert fetcher.cached_bytes == 0
    assert fetcher.get("acc", other) == (None, FETCH_INPROGRESS)  # room again
    await asyncio.sleep(4 * SCALE)
    assert provider.hits["idle"] == idle_hits  # no longer polled


async def test_cached_bytes_stay_within_cache_size_least_recently_asked_first(provider, make_fetcher):
    fetcher = make_fetcher(cache_size_mb=1, worker=1)
    await fetcher.start()
    size = 400 * 1024
    for key in "abc":
        provider.bodies[key] = orjson.dumps({**FLOORS, "floorprovider": key}) + b" " * size
    fetches = {
        key: account_fetch(provider.url(key=key), period_sec=100, max_age_sec=200, max_file_size_kb=0) for key in "abc"
    }
    for key in "ab":
        assert await settled(fetcher, "acc", fetches[key]) == ({**FLOORS, "floorprovider": key}, FETCH_SUCCESS)
    fetcher.get("acc", fetches["a"])  # a was asked for after b: b is the least recently used
    assert await settled(fetcher, "acc", fetches["c"]) == ({**FLOORS, "floorprovider": "c"}, FETCH_SUCCESS)
    assert fetcher.cached_bytes <= 1024 * 1024
    assert fetcher.get("acc", fetches["b"]) == (None, FETCH_INPROGRESS)  # dropped; fetched at its next period
    assert fetcher.get("acc", fetches["a"])[1] == FETCH_SUCCESS
    assert fetcher.tracked == 3 and provider.total == 3


async def test_close_stops_fetching(provider, make_fetcher):
    fetcher = make_fetcher()
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=1, max_age_sec=100)
    await settled(fetcher, "acc", fetch)
    await fetcher.close()
    hits = provider.total
    await asyncio.sleep(4 * SCALE)
    assert provider.total == hits and fetcher.tracked == 0


# --- with the floors engine's validate_fetched_floors (PBS-Go TestFetchAndValidate) -----------------

_MODEL = {
    "modelVersion": "M_0",
    "modelWeight": 1,
    "schema": {"fields": ["domain"]},
    "values": {"missyusa.com": 0.85, "www.missyusa.com": 0.7},
}
FETCH_AND_VALIDATE: list[tuple[str, bytes, int, dict[str, Any], str]] = [
    # (case, the provider's body, its status, account fetch options, status)
    (
        "valid price floor rules",
        orjson.dumps(
            {
                "currency": "USD",
                "floorProvider": "PM",
                "floorsSchemaVersion": 2,
                "modelGroups": [_MODEL],
                "skipRate": 10,
            }
        ),
        200,
        {"max_file_size_kb": 700, "max_rules": 30},
        FETCH_SUCCESS,
    ),
    ("no response from server", b"", 500, {"max_file_size_kb": 700, "max_rules": 30}, FETCH_ERROR),
    (
        "file is greater than MaxFileSize",
        orjson.dumps({"currency": "USD", "modelGroups": [_MODEL] * 19}),
        200,
        {"max_file_size_kb": 1, "max_rules": 30},
        FETCH_ERROR,
    ),
    ("malformed response", b'{"data":nil?}', 200, {"max_file_size_kb": 800, "max_rules": 30}, FETCH_ERROR),
    (
        "validations failed",
        b'{"data":{"currency":"USD","modelgroups":[]},"enabled":true,"floormin":1,'
        b'"enforcement":{"enforcepbs":false,"floordeals":true}}',
        200,
        {"max_file_size_kb": 700, "max_rules": 30},
        FETCH_ERROR,
    ),
    ("more rules than max_rules", orjson.dumps({"modelGroups": [_MODEL]}), 200, {"max_rules": 1}, FETCH_ERROR),
]


@pytest.mark.parametrize(
    ("case", "body", "status", "options", "fetch_status"), FETCH_AND_VALIDATE, ids=[c[0] for c in FETCH_AND_VALIDATE]
)
async def test_with_the_floors_engines_validation(
    provider, make_fetcher, case: str, body: bytes, status: int, options: dict[str, Any], fetch_status: str
):
    provider.body, provider.status = body, status
    provider.headers["max-age"] = "30"
    fetcher = make_fetcher(check=validate_fetched_floors)
    await fetcher.start()
    fetch = account_fetch(provider.url(), period_sec=20, max_age_sec=60, **options)
    data, got = await settled(fetcher, "acc", fetch)
    assert got == fetch_status
    if fetch_status == FETCH_SUCCESS:
        assert isinstance(data, FloorRules) and data.data is not None
        assert len(data.data.model_groups) == 1
        # PBS-Go's want1: the header's max-age (30) keeps the data, not max_age_sec (60)
        assert fetcher._entries[fetch].expires - time.monotonic() == pytest.approx(30 * SCALE, abs=0.05)
    else:
        assert data is None
