"""Server currency rates: the fetcher against a loopback currency server, /currency/rates, and
auctions converting bids with the fetched rates."""

from __future__ import annotations

import asyncio
import calendar
import fcntl
import gzip
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.app import create_admin_app
from hbserver.appkeys import CURRENCY
from hbserver.auction.bids import currency_fetch
from hbserver.auction.bids.currency import RateTable
from hbserver.auction.bids.currency_fetch import (
    JITTER,
    LOCK_FILE,
    MAX_FILE_BYTES,
    SHARED_FILE,
    FetchError,
    Loaded,
    ServerRates,
    go_time,
    parse_rates_file,
    rates_info,
)
from hbserver.config import Currency
from hbserver.metrics import Metrics
from hbserver.server import RUN_DIR_ENV, Supervisor
from hbserver.web.client import SharedSession
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import make_config

RATES = {"USD": {"EUR": 0.8, "GBP": 0.75}}
FILE = {"dataAsOf": "2024-05-01T00:00:00.000Z", "conversions": RATES}
ZERO_TIME = "0001-01-01T00:00:00Z"


class CurrencyServer:
    """GET /rates answers what the test sets: a document, raw bytes, a status, a delay, a redirect."""

    def __init__(self) -> None:
        self.reset()
        self.hits = 0
        app = web.Application()
        app.router.add_get("/rates", self.handle)
        app.router.add_get("/moved", self.moved)
        self.server = TestServer(app, host="127.0.0.1")

    def reset(self) -> None:
        """A good source again."""
        self.body: bytes = orjson.dumps(FILE)
        self.status = 200
        self.delay = 0.0
        self.chunked = False
        self.gzip = False

    def serve(self, document: Any) -> None:
        self.body = orjson.dumps(document)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        body = gzip.compress(self.body) if self.gzip else self.body
        headers = {"Content-Encoding": "gzip"} if self.gzip else {}
        if not self.chunked:
            return web.Response(status=self.status, body=body, headers=headers, content_type="application/json")
        response = web.StreamResponse(status=self.status, headers=headers)
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(body), 64 * 1024):
            await response.write(body[start:start + 64 * 1024])
        await response.write_eof()
        return response

    async def moved(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(location="/rates")

    def url(self, path: str = "/rates") -> str:
        return str(self.server.make_url(path))


@pytest.fixture
async def currency_server() -> AsyncIterator[CurrencyServer]:
    mock = CurrencyServer()
    await mock.server.start_server()
    yield mock
    await mock.server.close()


MakeRates = Callable[..., ServerRates]


@pytest.fixture
async def make_rates() -> AsyncIterator[MakeRates]:
    """ServerRates on a real session; closed (loop and session) after the test."""
    session = SharedSession()
    made: list[ServerRates] = []

    def factory(url: str, metrics: Metrics | None = None, stale: int = 86400, **options: Any) -> ServerRates:
        config = Currency(fetch_url=url, stale_rates_seconds=stale)
        options.setdefault("shared_dir", "")  # the supervisor's directory only when a test gives one
        rates = ServerRates(config, session, metrics or Metrics(), **options)
        made.append(rates)
        return rates

    yield factory
    for rates in made:
        await rates.close()
    await session.close()


def fetch_errors(metrics: Metrics) -> float:
    metrics.flush()
    return metrics.registry.get_sample_value("hbserver_currency_fetch_errors_total") or 0.0


def refused_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/rates"


# --- the file ------------------------------------------------------------------------------------


def test_parse_rates_file_reads_conversions_and_data_as_of():
    table, data_as_of = parse_rates_file(orjson.dumps(FILE))
    assert table == RateTable.of(RATES)
    assert data_as_of == "2024-05-01T00:00:00.000Z"
    assert table.get_rate("EUR", "USD") == pytest.approx(1.25)
    assert table.get_rate("EUR", "GBP") == pytest.approx(0.75 / 0.8)  # through USD
    assert parse_rates_file(orjson.dumps({"conversions": RATES}))[1] is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not JSON"),
        (b"", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"dataAsOf": "x"}', "no conversions"),
        (b'{"conversions": {}}', "no conversions"),
        (b'{"conversions": {"USD": {}}}', "no conversions"),
        (b'{"conversions": []}', "no conversions"),
        (b'{"conversions": {"USD": {"EUR": -1}}}', "conversions.USD.EUR must be a positive number"),
        (b'{"conversions": {"USD": {"EUR": 0}}}', "conversions.USD.EUR must be a positive number"),
        (b'{"conversions": {"USD": {"EUR": "0.9"}}}', "conversions.USD.EUR must be a positive number"),
        (b'{"conversions": {"USD": {"EUR": true}}}', "conversions.USD.EUR must be a positive number"),
        (b'{"conversions": {"USDX": {"EUR": 0.9}}}', "currency code USDX is not recognized"),
        (b'{"conversions": {"USD": {"E1R": 0.9}}}', "currency code E1R is not recognized"),
        (b'{"conversions": {"USD": [0.9]}}', "conversions.USD must be an object"),
    ],
)
def test_parse_rates_file_rejects_malformed_files(body: bytes, message: str):
    with pytest.raises(FetchError, match=message):
        parse_rates_file(body)


@pytest.mark.parametrize(
    ("epoch_ns", "text"),
    [
        (None, ZERO_TIME),
        (0, "1970-01-01T00:00:00Z"),
        (1_714_521_600_000_000_000, "2024-05-01T00:00:00Z"),
        (1_714_521_600_120_000_000, "2024-05-01T00:00:00.12Z"),
        (1_714_521_600_000_000_001, "2024-05-01T00:00:00.000000001Z"),
    ],
)
def test_go_time_formats_as_go_marshals_time(epoch_ns: int | None, text: str):
    assert go_time(epoch_ns) == text


# --- the fetcher ---------------------------------------------------------------------------------


async def test_start_fetches_and_age_counts_from_the_update(currency_server, make_rates):
    rates = make_rates(currency_server.url())
    assert rates.converter() is None
    await rates.start()
    assert await rates.wait_first_refresh(5)
    assert currency_server.hits == 1
    assert rates.converter() == RateTable.of(RATES)
    assert rates.last_error is None
    age = rates.age_seconds()
    assert age is not None and 0 <= age < 1
    await asyncio.sleep(0.05)
    later = rates.age_seconds()
    assert later is not None and later >= age + 0.04


async def test_without_url_nothing_is_fetched(make_rates):
    rates = make_rates("")
    await rates.start()
    assert (rates.active, rates.converter(), rates.age_seconds()) == (False, None, None)
    assert rates_info(rates) == {"active": False}


async def test_rates_are_refreshed_every_interval(currency_server, make_rates):
    rates = make_rates(currency_server.url(), interval=0.05)
    await rates.start()
    assert await rates.wait_first_refresh(5)
    assert rates.converter() == RateTable.of(RATES)
    currency_server.serve({"conversions": {"USD": {"EUR": 0.5}}})
    deadline = time.monotonic() + 5
    while rates.converter() == RateTable.of(RATES) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert rates.converter() == RateTable.of({"USD": {"EUR": 0.5}})
    assert currency_server.hits >= 2


async def test_start_does_not_wait_for_the_network(currency_server, make_rates, caplog):
    currency_server.delay = 0.5
    rates = make_rates(currency_server.url())
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="hbserver.currency"):
        await rates.start()
    assert time.monotonic() - started < 0.1
    assert rates.converter() is None  # the fetch goes on in the background
    assert not await rates.wait_first_refresh(0.05)
    [record] = [r for r in caplog.records if r.name == "hbserver.currency"]
    assert "fetching" in record.getMessage() and "only the rates requests carry" in record.getMessage()
    deadline = time.monotonic() + 5
    while rates.converter() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert rates.converter() == RateTable.of(RATES)


FAILURES: list[tuple[str, dict[str, Any], str]] = [
    ("status 500", {"status": 500}, "failed with status code 500"),
    ("status 404", {"status": 404}, "failed with status code 404"),
    ("status 204", {"status": 204, "body": b""}, "failed with status code 204"),
    ("malformed JSON", {"body": b'{"conversions": {"USD": '}, "not JSON"),
    ("not a currency file", {"body": b'{"rates": {"USD": {"EUR": 1}}}'}, "no conversions"),
    ("bad rate", {"body": b'{"conversions": {"USD": {"EUR": -2}}}'}, "must be a positive number"),
    ("oversized, announced", {"body": b" " * 2001}, "larger than 2000 bytes"),
    ("oversized, chunked", {"body": b" " * 2001, "chunked": True}, "larger than 2000 bytes"),
    ("oversized once decompressed", {"body": b" " * 5000, "gzip": True}, "larger than 2000 bytes"),
    ("slow", {"delay": 1.0}, "took longer than 0.2 s"),
]


@pytest.mark.parametrize(("case", "setup", "reason"), FAILURES, ids=[case for case, _, _ in FAILURES])
async def test_a_failed_fetch_keeps_the_rates_and_is_counted(
    currency_server, make_rates, case: str, setup: dict[str, Any], reason: str
):
    metrics = Metrics()
    rates = make_rates(currency_server.url(), metrics, timeout=0.2, max_bytes=2000)
    assert await rates.refresh() is True
    good = rates.converter()
    assert good == RateTable.of(RATES) and fetch_errors(metrics) == 0
    for name, value in setup.items():
        setattr(currency_server, name, value)
    assert await rates.refresh() is False
    assert rates.converter() is good
    assert rates.last_error is not None and reason in rates.last_error
    assert fetch_errors(metrics) == 1
    currency_server.reset()
    assert await rates.refresh() is True and rates.last_error is None
    assert fetch_errors(metrics) == 1


async def test_gzip_within_the_limit_is_accepted(currency_server, make_rates):
    currency_server.gzip = True
    rates = make_rates(currency_server.url())
    assert await rates.refresh() is True and rates.converter() == RateTable.of(RATES)


@pytest.mark.parametrize("chunked", [False, True])
async def test_the_default_size_limit(currency_server, make_rates, chunked: bool):
    padding = MAX_FILE_BYTES - len(orjson.dumps(FILE))
    currency_server.chunked = chunked
    currency_server.body = orjson.dumps(FILE) + b" " * padding  # exactly the limit: accepted
    rates = make_rates(currency_server.url())
    assert await rates.refresh() is True
    currency_server.body += b" "
    assert await rates.refresh() is False
    assert rates.last_error == f"the currency file is larger than {MAX_FILE_BYTES} bytes"


async def test_redirects_are_refused(currency_server, make_rates):
    rates = make_rates(currency_server.url("/moved"))
    assert await rates.refresh() is False
    assert rates.last_error == "the currency rates request failed with status code 302"
    assert currency_server.hits == 0


async def test_connection_refused_is_counted(make_rates):
    metrics = Metrics()
    rates = make_rates(refused_url(), metrics)
    await rates.start()
    assert await rates.wait_first_refresh(5)
    assert rates.converter() is None
    assert rates.last_error == "the currency rates request failed: ClientConnectorError"
    assert fetch_errors(metrics) == 1
    age = rates.age_seconds()  # never updated: the age runs from the start
    assert age is not None and age >= 0


async def test_stale_rates_are_still_used_with_a_warning(currency_server, make_rates, caplog):
    rates = make_rates(currency_server.url(), stale=1)
    assert await rates.refresh() is True
    loaded = rates.loaded
    assert loaded is not None
    # as if the last good file had been fetched 10 s ago
    object.__setattr__(loaded, "updated_monotonic", time.monotonic() - 10)
    currency_server.status = 503
    with caplog.at_level(logging.WARNING, logger="hbserver.currency"):
        assert await rates.refresh() is False
    assert rates.converter() == RateTable.of(RATES)
    age = rates.age_seconds()
    assert age is not None and age >= 10
    [record] = [r for r in caplog.records if r.name == "hbserver.currency"]
    assert "still using stale rates" in record.getMessage() and "status code 503" in record.getMessage()


async def test_repeated_errors_are_logged_once_but_all_counted(make_rates, caplog):
    metrics = Metrics()
    rates = make_rates(refused_url(), metrics)
    with caplog.at_level(logging.WARNING, logger="hbserver.currency"):
        for _ in range(3):
            assert await rates.refresh() is False
    records = [r for r in caplog.records if r.name == "hbserver.currency"]
    assert len(records) == 1 and "no server rates yet" in records[0].getMessage()
    assert fetch_errors(metrics) == 3


async def test_close_stops_the_refresh_loop(currency_server, make_rates):
    rates = make_rates(currency_server.url(), interval=0.02)
    await rates.start()
    assert await rates.wait_first_refresh(5)
    await rates.close()
    hits = currency_server.hits
    await asyncio.sleep(0.1)
    assert currency_server.hits == hits


# --- jitter and the workers' shared file ----------------------------------------------------------


@pytest.mark.parametrize(
    ("random_value", "factor"),
    [("lowest", 0.9), ("middle", 1.0), ("highest", 1.1)],
    ids=["lowest", "middle", "highest"],
)
def test_each_refresh_waits_the_interval_give_or_take_ten_percent(random_value: str, factor: float):
    value = {"lowest": 0.0, "middle": 0.5, "highest": 1.0 - 1e-12}[random_value]
    rates = ServerRates(Currency(fetch_url="http://127.0.0.1:1/rates", fetch_interval_seconds=1000), SharedSession(),
                        Metrics(), rand=lambda: value)
    assert JITTER == 0.1
    assert rates.jittered_interval() == pytest.approx(1000 * factor)
    assert rates.next_delay() == pytest.approx(1000 * factor)  # nothing loaded: a full interval


def test_jitter_stays_within_its_bounds_with_the_real_random():
    rates = ServerRates(Currency(fetch_url="http://127.0.0.1:1/rates", fetch_interval_seconds=100), SharedSession(),
                        Metrics())
    delays = [rates.jittered_interval() for _ in range(2000)]
    assert 90 <= min(delays) < 92 and 108 < max(delays) <= 110


@pytest.mark.parametrize(
    ("fetched_ago", "delay"),
    [("just now", 100.0), ("60 s ago", 40.0), ("99 s ago", 10.0)],
    ids=["own fetch", "another worker's", "nearly due: at least a tenth"],
)
def test_rates_from_another_worker_are_due_an_interval_after_their_fetch(fetched_ago: str, delay: float):
    ago = {"just now": 0.0, "60 s ago": 60.0, "99 s ago": 99.0}[fetched_ago]
    rates = ServerRates(Currency(fetch_url="http://127.0.0.1:1/rates", fetch_interval_seconds=100), SharedSession(),
                        Metrics(), rand=lambda: 0.5)
    rates._loaded = Loaded(RateTable.of(RATES), None, time.time_ns(), time.monotonic() - ago)
    assert rates.next_delay() == pytest.approx(delay, abs=0.1)
    rates.last_error = "failed since"  # after a failed refresh: a full interval again
    assert rates.next_delay() == pytest.approx(100.0)


def write_shared(directory: Path, body: bytes, age: float = 0.0) -> int:
    """The shared file, as if fetched ``age`` seconds ago; its fetch time (ns)."""
    path = directory / SHARED_FILE
    path.write_bytes(body)
    fetched_ns = time.time_ns() - int(age * 1e9)
    os.utime(path, ns=(fetched_ns, fetched_ns))
    return fetched_ns


async def test_one_fetch_serves_every_worker_sharing_the_directory(currency_server, make_rates, tmp_path):
    first = make_rates(currency_server.url(), shared_dir=str(tmp_path))
    second = make_rates(currency_server.url(), shared_dir=str(tmp_path))
    assert await first.refresh() is True
    assert currency_server.hits == 1
    assert (tmp_path / SHARED_FILE).read_bytes() == orjson.dumps(FILE)
    assert await second.refresh() is True
    assert currency_server.hits == 1  # the second worker read the file
    assert second.converter() == RateTable.of(RATES)
    one, two = first.loaded, second.loaded
    assert one is not None and two is not None
    assert two.updated_ns == one.updated_ns == (tmp_path / SHARED_FILE).stat().st_mtime_ns
    assert rates_info(second)["lastUpdated"] == rates_info(first)["lastUpdated"]  # the fetch from the source
    assert rates_info(second)["additionalInfo"] == {"dataAsOf": FILE["dataAsOf"]}
    assert not list(tmp_path.glob("*.tmp"))


async def test_workers_refreshing_together_fetch_once(currency_server, make_rates, tmp_path):
    currency_server.delay = 0.2
    workers = [make_rates(currency_server.url(), shared_dir=str(tmp_path)) for _ in range(4)]
    assert await asyncio.gather(*(w.refresh() for w in workers)) == [True] * 4
    assert currency_server.hits == 1
    assert all(w.converter() == RateTable.of(RATES) for w in workers)


async def test_started_workers_fetch_once(currency_server, make_rates, tmp_path):
    currency_server.delay = 0.1
    workers = [make_rates(currency_server.url(), shared_dir=str(tmp_path)) for _ in range(3)]
    for worker in workers:
        await worker.start()
    assert all([await w.wait_first_refresh(5) for w in workers])
    assert currency_server.hits == 1
    assert all(w.converter() == RateTable.of(RATES) for w in workers)


SHARED_FILE_CASES: list[tuple[str, bytes, float]] = [
    ("stale", orjson.dumps({"conversions": {"USD": {"EUR": 0.5}}}), 61.0),
    ("not JSON", b"{not json", 0.0),
    ("empty", b"", 0.0),
    ("no conversions", b'{"conversions": {}}', 0.0),
    ("bad rate", b'{"conversions": {"USD": {"EUR": -1}}}', 0.0),
    ("larger than the limit", orjson.dumps(FILE) + b" " * 2000, 0.0),
    ("dated far in the future", orjson.dumps({"conversions": {"USD": {"EUR": 0.5}}}), -30.0),
]


@pytest.mark.parametrize(("case", "body", "age"), SHARED_FILE_CASES, ids=[c[0] for c in SHARED_FILE_CASES])
async def test_a_stale_or_corrupted_shared_file_is_fetched_anew(
    currency_server, make_rates, tmp_path, case: str, body: bytes, age: float
):
    write_shared(tmp_path, body, age)
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path), interval=60, max_bytes=1000)
    assert await rates.refresh() is True
    assert currency_server.hits == 1
    assert rates.converter() == RateTable.of(RATES)
    assert (tmp_path / SHARED_FILE).read_bytes() == orjson.dumps(FILE)  # replaced by the fetched file


async def test_a_failed_fetch_leaves_the_shared_file_alone(currency_server, make_rates, tmp_path):
    fetched_ns = write_shared(tmp_path, orjson.dumps(FILE), age=120)
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path), interval=60)
    currency_server.status = 500
    assert await rates.refresh() is False
    assert rates.converter() is None and currency_server.hits == 1
    assert (tmp_path / SHARED_FILE).stat().st_mtime_ns == fetched_ns


async def test_start_takes_a_fresh_shared_file_at_once(currency_server, make_rates, tmp_path):
    fetched_ns = write_shared(tmp_path, orjson.dumps(FILE), age=10)
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path), interval=60)
    await rates.start()
    assert rates.converter() == RateTable.of(RATES)
    loaded = rates.loaded
    assert loaded is not None and loaded.updated_ns == fetched_ns
    age = rates.age_seconds()
    assert age is not None and 10 <= age < 11  # the age of the fetch from the source
    assert await rates.wait_first_refresh(0)
    await asyncio.sleep(0.05)
    assert currency_server.hits == 0  # the next refresh is due about 50 s later


def _hold_lock(directory: Path) -> int:
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


async def test_waiting_for_the_lock_does_not_block_the_event_loop(currency_server, make_rates, tmp_path):
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path))
    held = _hold_lock(tmp_path)  # another worker, fetching
    try:
        refresh = asyncio.create_task(rates.refresh())
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 20 and not refresh.done()
        write_shared(tmp_path, orjson.dumps(FILE))  # the other worker's file
    finally:
        os.close(held)
    assert await asyncio.wait_for(refresh, 5) is True
    assert currency_server.hits == 0 and rates.converter() == RateTable.of(RATES)


async def test_a_lock_held_too_long_is_given_up(currency_server, make_rates, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(currency_fetch, "LOCK_MARGIN_SECONDS", 0.0)
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path), timeout=0.1)
    held = _hold_lock(tmp_path)
    try:
        with caplog.at_level(logging.WARNING, logger="hbserver.currency"):
            assert await asyncio.wait_for(rates.refresh(), 5) is True
    finally:
        os.close(held)
    assert currency_server.hits == 1
    assert any("held too long" in r.getMessage() for r in caplog.records)


async def test_closing_while_waiting_for_the_lock_releases_it(currency_server, make_rates, tmp_path):
    rates = make_rates(currency_server.url(), shared_dir=str(tmp_path), interval=60)
    held = _hold_lock(tmp_path)
    try:
        await rates.start()
        await asyncio.sleep(0.1)
        opened = len(os.listdir("/proc/self/fd"))
        await rates.close()
        assert len(os.listdir("/proc/self/fd")) == opened - 1  # the waiting worker's lock descriptor
    finally:
        os.close(held)
    assert currency_server.hits == 0


def test_the_shared_directory_comes_from_the_supervisor(monkeypatch, tmp_path):
    config = Currency(fetch_url="http://127.0.0.1:1/rates")
    monkeypatch.delenv(RUN_DIR_ENV, raising=False)
    assert ServerRates(config, SharedSession(), Metrics()).shared_dir is None
    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path))
    assert ServerRates(config, SharedSession(), Metrics()).shared_dir == str(tmp_path)


def test_the_supervisor_makes_and_removes_the_run_directory(monkeypatch):
    monkeypatch.delenv(RUN_DIR_ENV, raising=False)
    supervisor = Supervisor(make_config(), 2)
    supervisor._prepare_run_dir()
    directory = os.environ[RUN_DIR_ENV]
    assert os.path.isdir(directory) and os.stat(directory).st_mode & 0o777 == 0o700
    Path(directory, SHARED_FILE).write_bytes(b"{}")
    supervisor._remove_dirs()
    assert not os.path.exists(directory) and RUN_DIR_ENV not in os.environ


# --- the application ----------------------------------------------------------------------------


async def test_currency_rates_endpoint_without_url(make_client):
    client = await make_client()
    response = await client.get("/currency/rates")
    assert response.status == 200 and response.content_type == "application/json"
    assert await response.json() == {"active": False}
    assert client.app[CURRENCY].age_seconds() is None


async def test_currency_rates_endpoint_with_rates(make_client, currency_server):
    before = time.time()
    client = await make_client(currency={"fetch_url": currency_server.url(), "fetch_interval_seconds": 60})
    assert await client.app[CURRENCY].wait_first_refresh(5)
    assert currency_server.hits == 1  # fetched once, in the background
    data = await (await client.get("/currency/rates")).json()
    assert set(data) == {"active", "source", "fetchingIntervalNs", "lastUpdated", "rates", "additionalInfo"}
    assert data["active"] is True and data["source"] == currency_server.url()
    assert data["fetchingIntervalNs"] == 60_000_000_000
    assert data["rates"] == RATES
    assert data["additionalInfo"] == {"dataAsOf": FILE["dataAsOf"]}
    assert data["lastUpdated"].endswith("Z")
    updated = calendar.timegm(time.strptime(data["lastUpdated"][:19], "%Y-%m-%dT%H:%M:%S"))
    assert before - 1 <= updated <= time.time()


async def test_currency_rates_endpoint_before_the_first_good_file(make_client):
    url = refused_url()
    client = await make_client(currency={"fetch_url": url})
    assert await client.app[CURRENCY].wait_first_refresh(5)
    data = await (await client.get("/currency/rates")).json()
    assert data == {"active": True, "source": url, "fetchingIntervalNs": 1_800_000_000_000, "lastUpdated": ZERO_TIME}


async def test_currency_rates_is_on_the_admin_port_when_set(make_client, aiohttp_client, currency_server):
    client = await make_client(admin={"port": 1}, currency={"fetch_url": currency_server.url()})
    assert await client.app[CURRENCY].wait_first_refresh(5)
    assert (await client.get("/currency/rates")).status == 404
    admin = await aiohttp_client(create_admin_app(client.app))
    data = await (await admin.get("/currency/rates")).json()
    assert data["active"] is True and data["rates"] == RATES


def _auction(currency: dict[str, Any] | None = None) -> dict[str, Any]:
    prebid: dict[str, Any] = {}
    if currency is not None:
        prebid["currency"] = currency
    return {
        "id": "req-1",
        "tmax": 500,
        "cur": ["USD"],
        "imp": [banner_imp()],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "ext": {"prebid": prebid},
    }


AUCTION_CASES: list[tuple[str, bool, dict[str, Any] | None, float | None]] = [
    # (case, server rates configured, ext.prebid.currency, expected USD price of a 2.00 EUR bid)
    ("server rate", True, None, 2.5),
    ("no server rates: dropped", False, None, None),
    ("request rates win", True, {"rates": {"EUR": {"USD": 1.5}}}, 3.0),
    ("server fills request gaps", True, {"rates": {"GBP": {"USD": 1.3}}}, 2.5),
    ("usepbsrates false ignores the server", True, {"rates": {"GBP": {"USD": 1.3}}, "usepbsrates": False}, None),
]


@pytest.mark.parametrize(
    ("case", "with_server", "currency", "price"), AUCTION_CASES, ids=[c[0] for c in AUCTION_CASES]
)
async def test_auctions_convert_with_the_server_rates(
    make_client, bidders, currency_server, case: str, with_server: bool, currency: dict[str, Any] | None,
    price: float | None,
):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    bidders.currency["alpha"] = "EUR"
    raw = bidder_config(bidders, "alpha")
    if with_server:
        raw["currency"] = {"fetch_url": currency_server.url()}
    client = await make_client(raw)
    if with_server:
        assert await client.app[CURRENCY].wait_first_refresh(5)
    response = await client.post("/openrtb2/auction", data=orjson.dumps(_auction(currency)))
    assert response.status == 200
    data = await response.json()
    seats = {seat["seat"]: seat["bid"] for seat in data.get("seatbid", [])}
    if price is None:
        assert "alpha" not in seats
        assert data["ext"]["errors"]["alpha"] == [
            {"code": 999, "message": "Currency conversion rate not found: 'EUR' => 'USD'"}
        ]
    else:
        [got] = seats["alpha"]
        assert got["price"] == pytest.approx(price)
        assert got["ext"]["origbidcpm"] == 2.0 and got["ext"]["origbidcur"] == "EUR"
        assert data["cur"] == "USD"
