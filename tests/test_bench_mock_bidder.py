"""bench/mocks/bidder.py: the bid it builds, its options, and the real process over HTTP."""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import procs
from bench.mocks.bidder import Behaviour, bid_response, parse_args, seat_price
from bench.scenarios import BENCH_DIR

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
REQUEST = {
    "id": "req-1",
    "imp": [
        {"id": "div-top", "banner": {"format": [{"w": 728, "h": 90}, {"w": 970, "h": 250}]},
         "ext": {"bidder": {"placementId": "x"}}},
        {"id": "div-video", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480}},
        {"id": "div-side", "banner": {"w": 300, "h": 600}},
    ],
    "tmax": 190,
}


def test_one_banner_bid_per_banner_imp():
    answer = bid_response("alpha", REQUEST)
    assert answer is not None
    assert answer["id"] == "req-1" and answer["cur"] == "USD"
    (seatbid,) = answer["seatbid"]
    assert seatbid["seat"] == "alpha"
    bids = seatbid["bid"]
    assert [b["impid"] for b in bids] == ["div-top", "div-side"]
    assert [(b["w"], b["h"]) for b in bids] == [(728, 90), (300, 600)]
    for bid in bids:
        assert bid["mtype"] == 1 and bid["price"] > 0 and bid["crid"] and bid["adm"].startswith("<div")


def test_no_banner_imp_means_no_bid():
    assert bid_response("alpha", {"id": "r", "imp": [{"id": "v", "video": {}}]}) is None
    assert bid_response("alpha", {"id": "r"}) is None


def test_seats_get_distinct_stable_prices():
    prices = [seat_price(seat) for seat in ("alpha", "beta", "gamma")]
    assert len(set(prices)) == 3
    assert all(0.5 <= price < 2.5 for price in prices)
    assert seat_price("alpha") == seat_price("alpha")


def test_options():
    options = parse_args(["9001", "--delay", "beta=5", "--hang", "gamma", "--no-bid", "delta"])
    assert (options.port, options.hosts) == (9001, ("127.0.0.1",))
    assert options.behaviours == {
        "beta": Behaviour(delay_ms=5.0),
        "gamma": Behaviour(hang=True),
        "delta": Behaviour(no_bid=True),
    }
    assert parse_args(["1", "--host", "127.0.0.2", "--host", "127.0.0.3"]).hosts == ("127.0.0.2", "127.0.0.3")
    with pytest.raises(SystemExit):
        parse_args(["9001", "--delay", "beta"])


# --- the process --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mock_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir: Path = tmp_path_factory.mktemp("mock-bidder")
    port = procs.free_port()
    argv = [sys.executable, str(BENCH_DIR / "mocks" / "bidder.py"), str(port),
            "--hang", "gamma", "--no-bid", "delta", "--delay", "beta=150", "--host", "127.0.0.1", "--host", "127.0.0.2"]
    process = procs.start("mock-bidder", argv, cwd=workdir, log_path=workdir / "mock.log")
    try:
        procs.wait_http_ready(f"http://127.0.0.1:{port}/ready", process)
        yield f"http://127.0.0.1:{port}"
    finally:
        started = time.monotonic()
        assert process.stop() == 0, process.log_tail()
        assert time.monotonic() - started < 5


def post(url: str, body: bytes, timeout: float = 5.0) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with DIRECT.open(request, timeout=timeout) as response:
        return response.status, response.read()


def test_process_answers_with_bids(mock_url):
    status, body = post(f"{mock_url}/alpha", json.dumps(REQUEST).encode())
    assert status == 200
    assert json.loads(body) == bid_response("alpha", REQUEST)


def test_process_listens_on_every_host(mock_url):
    second = mock_url.replace("127.0.0.1", "127.0.0.2")
    status, body = post(f"{second}/gamma2", json.dumps(REQUEST).encode())
    assert status == 200 and json.loads(body)["seatbid"][0]["seat"] == "gamma2"


def test_process_delay_and_no_bid(mock_url):
    started = time.monotonic()
    status, body = post(f"{mock_url}/beta", json.dumps(REQUEST).encode())
    assert status == 200 and json.loads(body)["seatbid"][0]["seat"] == "beta"
    assert time.monotonic() - started >= 0.14
    status, body = post(f"{mock_url}/delta", json.dumps(REQUEST).encode())
    assert (status, body) == (204, b"")


def test_process_rejects_what_is_not_a_bid_request(mock_url):
    with pytest.raises(urllib.error.HTTPError) as info:
        post(f"{mock_url}/alpha", b"{not json")
    assert info.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as info:
        DIRECT.open(f"{mock_url}/alpha", timeout=5)  # GET
    assert info.value.code == 404


def test_hanging_path_never_answers_and_the_rest_keeps_working(mock_url):
    started = time.monotonic()
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        post(f"{mock_url}/gamma", json.dumps(REQUEST).encode(), timeout=0.5)
    assert time.monotonic() - started >= 0.45
    status, _ = post(f"{mock_url}/alpha", json.dumps(REQUEST).encode())
    assert status == 200
