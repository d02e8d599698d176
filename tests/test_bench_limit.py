"""bench/limit_server.py: the limit experiment's AMP answer, against the mock bidder process on loopback."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bench import procs
from bench.limit_server import LIMIT_SERVER, Limits, create_app, price_bucket
from bench.mocks.bidder import seat_price
from bench.run import server_argv
from bench.scenarios import AMP_PATH, AMP_STORED_REQUEST, AMP_TAG, AUCTION_BIDDERS, BENCH_DIR, SetupContext, select

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
SEAT_HOSTS = {code: f"127.0.0.{n}" for n, code in enumerate(AUCTION_BIDDERS, start=1)}


def start_mock(tmp_path: Path, *options: str) -> tuple[procs.ManagedProcess, int]:
    port = procs.free_port()
    argv = [sys.executable, str(BENCH_DIR / "mocks" / "bidder.py"), str(port), *options]
    argv += [arg for host in SEAT_HOSTS.values() for arg in ("--host", host)]
    process = procs.start("mock-bidder", argv, cwd=tmp_path, log_path=tmp_path / "mock.log")
    procs.wait_http_ready(f"http://127.0.0.1:{port}/ready", process)
    return process, port


@pytest.fixture
def mock_port(tmp_path: Path) -> Iterator[int]:
    """The mock bidder process, every seat bidding."""
    process, port = start_mock(tmp_path)
    try:
        yield port
    finally:
        process.stop()


def limits(port: int, timeout_ms: int = 1000) -> Limits:
    endpoints = {code: f"http://{host}:{port}/{code}" for code, host in SEAT_HOSTS.items()}
    return Limits(endpoints, {AMP_TAG: AMP_STORED_REQUEST}, timeout_ms, 100, 10, 1 << 20)


@pytest.mark.parametrize(
    ("options", "winner"),
    [
        ((), "beta"),  # the highest seat price
        (("--no-bid", "beta"), "alpha"),
        (("--hang", "beta", "--delay", "alpha=20"), "alpha"),  # beta times out, alpha's late answer counts
        (("--no-bid", "alpha", "--no-bid", "beta", "--no-bid", "gamma2"), None),
    ],
    ids=["all-bid", "beta-no-bid", "beta-hangs", "nobody-bids"],
)
async def test_amp_answer_is_the_top_bid_cached(aiohttp_client, tmp_path, options, winner):
    process, port = start_mock(tmp_path, *options)
    try:
        app = create_app(limits(port, timeout_ms=400))
        client = await aiohttp_client(app)
        response = await client.get(AMP_PATH)
        assert response.status == 200
        assert response.headers["AMP-Access-Control-Allow-Source-Origin"] == "https://news.bench.test"
        targeting = (await response.json())["targeting"]
        store = app[LIMIT_SERVER].store
        if winner is None:
            assert targeting == {} and len(store) == 0
            return
        assert targeting["hb_bidder"] == winner
        assert targeting["hb_pb"] == price_bucket(seat_price(winner))
        assert targeting["hb_size"] == "300x250"
        cached = await store.get(targeting["hb_cache_id"])
        assert cached is not None and cached.type == "json"
        bid = orjson.loads(cached.payload)
        assert (bid["price"], bid["impid"]) == (seat_price(winner), "amp-slot")
        assert len(store) == 1  # one put per request: the top bid
    finally:
        process.stop()


async def test_unknown_tag_is_refused(aiohttp_client, mock_port):
    client = await aiohttp_client(create_app(limits(mock_port)))
    response = await client.get("/openrtb2/amp?tag_id=nope&__amp_source_origin=https%3A%2F%2Fa.test")
    assert response.status == 400
    assert response.headers["AMP-Access-Control-Allow-Source-Origin"] == "https://a.test"
    assert (await client.get("/status")).status == 200


@pytest.mark.parametrize(
    ("price", "bucket"), [(0.0, "0.00"), (1.4, "1.40"), (1.81, "1.80"), (1.899, "1.80"), (25.0, "20.00")]
)
def test_price_bucket_is_medium_granularity(price, bucket):
    assert price_bucket(price) == bucket


def test_the_amp_limit_scenario_runs_the_limit_server_on_the_amp_config(tmp_path):
    """As the bench starts it: the scenario's setup (mock bidders, stored request), config and argv."""
    scenario = select("amp_limit")[0]
    assert scenario.server == "limit" and scenario.path == AMP_PATH
    assert set(scenario.limit_of) >= {"amp", "amp_full"}
    context = SetupContext(tmp_path, None)
    server = None
    try:
        values = {"workdir": str(tmp_path), **(scenario.setup(context) if scenario.setup else {})}
        port = procs.free_port()
        config = scenario.write_config(tmp_path, values)
        argv = server_argv(scenario, port, config)
        assert argv[1:] == [str(BENCH_DIR / "limit_server.py"), "--port", str(port), "--config", str(config)]
        server = procs.start("limit", argv, cwd=tmp_path, log_path=tmp_path / "limit.log")
        procs.wait_http_ready(f"http://127.0.0.1:{port}{scenario.ready_path}", server)
        with DIRECT.open(scenario.url(port, values), timeout=5) as response:
            answer = json.loads(response.read())
        assert answer["targeting"]["hb_bidder"] == "beta"
        assert len(answer["targeting"]["hb_cache_id"]) == 36
    finally:
        if server is not None:
            assert server.stop() == 0, server.log_tail()
        context.close()
