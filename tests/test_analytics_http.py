"""The HTTP analytics module against a loopback collector that fails and recovers: every record
arrives exactly once (gzip JSON Lines, batches of at most batch_size), overflow and refused batches
are dropped and counted, retries back off, shutdown flushes, the interval flushes."""

from __future__ import annotations

import asyncio
import gzip
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.analytics.http import LOG_EVERY_SECONDS, HttpModule, backoff_seconds, log
from hbserver.app import build_analytics
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import make_config

FAST = {"backoff_first": 0.01, "backoff_max": 0.05, "request_timeout": 1.0}


class Collector:
    """POST / on a real socket: answers ``plan`` statuses in turn (then 200), keeps what it took."""

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.slow: list[float] = []  # seconds to stall before answering, per request in turn
        self.batches: list[list[dict[str, Any]]] = []
        self.requests = 0
        self.headers: list[dict[str, str]] = []
        app = web.Application()
        app.router.add_post("/collect", self.handle)
        self.server = TestServer(app)

    async def start(self) -> None:
        await self.server.start_server(auto_decompress=False)  # the body as sent: gzip is checked here

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        self.headers.append(dict(request.headers))
        body = await request.read()
        if self.slow:
            await asyncio.sleep(self.slow.pop(0))
        status = self.plan.pop(0) if self.plan else 200
        if status == 200:
            assert request.headers["Content-Encoding"] == "gzip"
            lines = gzip.decompress(body).decode().splitlines()
            self.batches.append([orjson.loads(line) for line in lines])
        return web.Response(status=status)

    @property
    def url(self) -> str:
        return str(self.server.make_url("/collect"))

    def ids(self) -> list[int]:
        return [record["n"] for batch in self.batches for record in batch]

    async def wait_for(self, count: int, seconds: float = 5.0) -> None:
        end = time.monotonic() + seconds
        while len(self.ids()) < count and time.monotonic() < end:
            await asyncio.sleep(0.01)


@pytest.fixture
async def collector() -> AsyncIterator[Collector]:
    mock = Collector()
    await mock.start()
    yield mock
    await mock.server.close()


def record(n: int) -> dict[str, Any]:
    return {"event": "notification", "ts": "2026-01-01T00:00:00.000Z", "n": n}


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    metrics.flush()
    for exposed in (name + "_total", name):
        value = metrics.registry.get_sample_value(exposed, labels)
        if value is not None:
            return value
    return 0.0


def dropped(metrics: Metrics) -> float:
    return sample(metrics, "hbserver_analytics_dropped_events", module="http")


async def started(url: str, metrics: Metrics, **options: Any) -> HttpModule:
    module = HttpModule(url, metrics, **{**FAST, **options})
    await module.start()
    return module


async def test_failing_collector_recovers_and_gets_every_record_once(collector):
    collector.plan = [500, 503, 429, 408, 500]
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=10, flush_interval=0.05)
    for n in range(95):
        module.log(record(n))
        if n % 7 == 0:
            await asyncio.sleep(0.005)
    await collector.wait_for(95)
    await module.close()
    assert sorted(collector.ids()) == list(range(95))  # exactly once
    assert all(1 <= len(batch) <= 10 for batch in collector.batches)
    assert collector.requests == len(collector.batches) + 5  # the five failures were retried
    headers = collector.headers[0]
    assert headers["Content-Type"] == "application/x-ndjson" and headers["Content-Encoding"] == "gzip"
    assert dropped(metrics) == 0
    assert sample(metrics, "hbserver_analytics_events", module="http", event="notification") == 95


async def test_collector_down_then_up_loses_nothing():
    """Connection refused until the collector starts on the port: the batch is kept and retried."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    metrics = Metrics()
    module = await started(f"http://127.0.0.1:{port}/collect", metrics, batch_size=5, flush_interval=0.05)
    for n in range(12):
        module.log(record(n))
    await asyncio.sleep(0.2)  # several refused attempts
    late = Collector()
    late.server = TestServer(late.server.app, port=port)
    await late.start()
    try:
        await late.wait_for(12)
        await module.close()
    finally:
        await late.server.close()
    assert sorted(late.ids()) == list(range(12)) and dropped(metrics) == 0


async def test_a_stalled_collector_times_out_and_is_retried(collector):
    collector.slow = [2.0]
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=3, flush_interval=0.05, request_timeout=0.2)
    began = time.monotonic()
    for n in range(3):
        module.log(record(n))
    await collector.wait_for(3)
    assert time.monotonic() - began < 1.5  # not held by the stalled answer
    await module.close()
    assert sorted(collector.ids()) == [0, 1, 2] and dropped(metrics) == 0


@pytest.mark.parametrize(
    ("status", "lost"),
    [(400, 5), (404, 5), (413, 5), (302, 5), (408, 0), (429, 0), (500, 0), (503, 0)],
)
async def test_a_refused_batch_is_dropped_a_failed_one_retried(collector, status, lost):
    collector.plan = [status]
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=5, flush_interval=60)
    for n in range(5):
        module.log(record(n))
    end = time.monotonic() + 5
    while collector.requests < (1 if lost else 2) and time.monotonic() < end:
        await asyncio.sleep(0.01)
    for n in range(5, 10):  # the next batch goes through either way
        module.log(record(n))
    await collector.wait_for(10 - lost)
    await module.close()
    assert sorted(collector.ids()) == list(range(lost, 10))
    assert dropped(metrics) == lost


async def test_overflow_beyond_buffer_size_is_dropped_and_counted_exactly(collector):
    """The batch being retried counts against buffer_size: the collector being down fills it."""
    collector.plan = [500] * 10
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=5, flush_interval=0.05, buffer_size=20)
    for n in range(20):
        module.log(record(n))
    end = time.monotonic() + 5
    while collector.requests < 2 and time.monotonic() < end:  # a batch is out and being retried
        await asyncio.sleep(0.005)
    for n in range(20, 27):
        module.log(record(n))  # all seven over the limit
    assert dropped(metrics) == 7
    await collector.wait_for(20)
    for n in range(27, 30):  # room again once delivered
        module.log(record(n))
    await module.close()
    assert sorted(collector.ids()) == [*range(20), 27, 28, 29]
    assert dropped(metrics) == 7
    assert sample(metrics, "hbserver_analytics_events", module="http", event="notification") == 23


async def test_shutdown_flushes_what_is_buffered(collector):
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=4, flush_interval=60)
    for n in range(10):  # 2 full batches go at once, 2 records wait for the interval
        module.log(record(n))
    await module.close()
    assert sorted(collector.ids()) == list(range(10))
    assert all(len(batch) <= 4 for batch in collector.batches) and dropped(metrics) == 0
    module.log(record(99))  # closed: nothing is accepted any more
    assert dropped(metrics) == 1


async def test_shutdown_gives_up_at_its_time_and_counts_the_rest(collector):
    collector.plan = [500] * 1000
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=4, flush_interval=60, shutdown_seconds=0.3)
    for n in range(10):
        module.log(record(n))
    began = time.monotonic()
    await module.close()
    assert time.monotonic() - began < 1.5
    assert collector.ids() == [] and collector.requests >= 2  # it kept trying until its time was up
    assert dropped(metrics) == 10


async def test_records_wait_for_the_interval(collector):
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=100, flush_interval=0.3)
    began = time.monotonic()
    for n in range(3):
        module.log(record(n))
    await asyncio.sleep(0.1)
    assert collector.requests == 0  # neither a full batch nor the interval yet
    await collector.wait_for(3)
    assert [len(b) for b in collector.batches] == [3] and time.monotonic() - began >= 0.25
    await module.close()
    assert dropped(metrics) == 0


async def test_a_full_batch_goes_at_once(collector):
    metrics = Metrics()
    module = await started(collector.url, metrics, batch_size=5, flush_interval=60)
    for n in range(4):
        module.log(record(n))
    await asyncio.sleep(0.1)
    assert collector.requests == 0
    for n in range(4, 12):  # two full batches, then 2 that wait (for the interval, here shutdown)
        module.log(record(n))
    await collector.wait_for(10)
    await asyncio.sleep(0.05)
    assert [len(b) for b in collector.batches] == [5, 5]
    await module.close()
    assert [len(b) for b in collector.batches] == [5, 5, 2] and sorted(collector.ids()) == list(range(12))


@pytest.mark.parametrize(
    ("attempt", "rand", "seconds"),
    [(0, 0.0, 0.25), (0, 0.999999, 0.5), (1, 0.0, 0.5), (3, 0.5, 3.0), (6, 0.0, 15.0), (60, 0.999999, 30.0)],
)
def test_backoff_doubles_up_to_its_cap_with_jitter(attempt, rand, seconds):
    assert backoff_seconds(attempt, 0.5, 30.0, rand) == pytest.approx(seconds, rel=1e-5)


def test_rate_limited_log(caplog):
    limited = LogLimiter(log, LOG_EVERY_SECONDS, count_held=True)
    with caplog.at_level("WARNING", "hbserver.analytics"):
        for _ in range(5):
            limited.warning("k", "collector answered %d", 400)
        limited.warning("other", "other kind")
    assert [r.getMessage() for r in caplog.records] == ["collector answered 400", "other kind"]
    limited._last["k"] -= 61  # a minute later: one line, saying how many were held back
    with caplog.at_level("WARNING", "hbserver.analytics"):
        limited.warning("k", "collector answered %d", 400)
    assert caplog.records[-1].getMessage() == "collector answered 400 (4 more like it not logged)"


@pytest.mark.parametrize(
    "options",
    [{"batch_size": 0}, {"flush_interval": 0}, {"buffer_size": 0}, {"request_timeout": 0},
     {"backoff_first": 0}, {"backoff_first": 2, "backoff_max": 1}],
)
def test_bad_settings_are_refused(options):
    with pytest.raises(ValueError):
        HttpModule("http://127.0.0.1:1/", Metrics(), **options)


def test_built_from_the_configuration():
    config = make_config(analytics={"http": {"endpoint": "http://127.0.0.1:9/c", "batch_size": 7,
                                             "flush_interval_seconds": 2.5, "buffer_size": 70}},
                         shutdown_timeout_seconds=4)
    [module] = build_analytics(config, Metrics()).modules
    assert isinstance(module, HttpModule)
    assert (module.endpoint, module.batch_size, module.flush_interval, module.capacity, module.shutdown_seconds) == (
        "http://127.0.0.1:9/c", 7, 2.5, 70, 4
    )
    assert not build_analytics(make_config(), Metrics()).enabled


async def test_auction_records_reach_the_collector(make_client, bidders, collector):
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1")]
    config = bidder_config(bidders, "alpha")
    client = await make_client(config, analytics={"http": {"endpoint": collector.url, "batch_size": 10}})
    for _ in range(3):
        assert (await post(client, auction_request())).status == 200
    await client.close()  # shutdown flushes
    records = [r for batch in collector.batches for r in batch]
    assert [r["event"] for r in records] == ["auction"] * 3
    assert all(r["bids"][0]["bidid"] == "a1" and r["bids"][0]["won"] for r in records)
    assert all(r["adapters"][0]["status"] == "ok" for r in records)
