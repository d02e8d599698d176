"""Server currency rates: the fetcher against a loopback currency server, /currency/rates, and
auctions converting bids with the fetched rates."""

from __future__ import annotations

import asyncio
import calendar
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

from hbserver.app import create_admin_app
from hbserver.appkeys import CURRENCY
from hbserver.auction.currency import RateTable
from hbserver.auction.currency_fetch import (
    MAX_FILE_BYTES,
    FetchError,
    ServerRates,
    go_time,
    parse_rates_file,
    rates_info,
)
from hbserver.config import Currency
from hbserver.metrics import Metrics
from hbserver.web.client import SharedSession
from tests.auction.helpers import banner_imp, bid, bidder_config

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
    assert rates.converter() == RateTable.of(RATES)
    currency_server.serve({"conversions": {"USD": {"EUR": 0.5}}})
    deadline = time.monotonic() + 5
    while rates.converter() == RateTable.of(RATES) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert rates.converter() == RateTable.of({"USD": {"EUR": 0.5}})
    assert currency_server.hits >= 2


async def test_start_does_not_wait_long_for_a_slow_source(currency_server, make_rates):
    currency_server.delay = 0.5
    rates = make_rates(currency_server.url(), start_wait=0.05)
    started = time.monotonic()
    await rates.start()
    assert time.monotonic() - started < 0.4
    assert rates.converter() is None  # the fetch goes on in the background
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
    await rates.close()
    hits = currency_server.hits
    await asyncio.sleep(0.1)
    assert currency_server.hits == hits


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
    assert currency_server.hits == 1  # fetched during start-up
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
    data = await (await client.get("/currency/rates")).json()
    assert data == {"active": True, "source": url, "fetchingIntervalNs": 1_800_000_000_000, "lastUpdated": ZERO_TIME}


async def test_currency_rates_is_on_the_admin_port_when_set(make_client, aiohttp_client, currency_server):
    client = await make_client(admin={"port": 1}, currency={"fetch_url": currency_server.url()})
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
