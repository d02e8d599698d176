"""bench/mocks/bidder.py: the bid it builds, its options, and the real process over HTTP."""

from __future__ import annotations

import gzip
import json
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import procs
from bench.mocks.bidder import AnswerTemplates, Behaviour, bid_response, parse_args, seat_price
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


# --- HTTP/1.1 on raw sockets: keep-alive, pipelining, split bodies, bad requests --------------------


def connect(mock_url: str) -> socket.socket:
    host, port = mock_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def raw_post(seat: str, body: bytes, extra: str = "") -> bytes:
    head = f"POST /{seat} HTTP/1.1\r\nHost: bidder\r\nContent-Type: application/json\r\n{extra}"
    return head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_answers(sock: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """``count`` answers (status, headers in lower case, body) read from ``sock``."""
    reader = sock.makefile("rb")
    answers = []
    for _ in range(count):
        status_line = reader.readline()
        assert status_line.startswith(b"HTTP/1.1 "), status_line
        headers = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        body = reader.read(int(headers.get("content-length", "0")))
        answers.append((int(status_line.split()[1]), headers, body))
    return answers


def closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(2)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


BID_REQUEST = json.dumps(REQUEST).encode()


def test_keep_alive_serves_several_requests_on_one_connection(mock_url):
    with connect(mock_url) as sock:
        for seat in ("alpha", "beta2", "alpha"):
            sock.sendall(raw_post(seat, BID_REQUEST))
            ((status, headers, body),) = read_answers(sock, 1)
            assert status == 200 and headers["content-type"] == "application/json"
            assert json.loads(body) == bid_response(seat, REQUEST)
            assert "connection" not in headers


def test_pipelined_requests_are_answered_in_order_even_when_the_first_is_delayed(mock_url):
    other = dict(REQUEST, id="req-2")
    with connect(mock_url) as sock:
        sock.sendall(raw_post("beta", BID_REQUEST) + raw_post("alpha", json.dumps(other).encode())
                     + b"GET /ready HTTP/1.1\r\nHost: b\r\n\r\n" + raw_post("delta", BID_REQUEST))
        answers = read_answers(sock, 4)
    assert [status for status, _, _ in answers] == [200, 200, 200, 204]
    assert json.loads(answers[0][2]) == bid_response("beta", REQUEST)  # delayed 150 ms, still first
    assert json.loads(answers[1][2]) == bid_response("alpha", other)
    assert answers[2][2] == b"ok"


def test_a_request_split_across_segments(mock_url):
    data = raw_post("alpha", BID_REQUEST)
    cut_head, cut_body = data.index(b"\r\n") + 3, len(data) - 7
    with connect(mock_url) as sock:
        for piece in (data[:cut_head], data[cut_head:cut_body], data[cut_body:]):
            sock.sendall(piece)
            time.sleep(0.05)
        ((status, _, body),) = read_answers(sock, 1)
    assert status == 200 and json.loads(body) == bid_response("alpha", REQUEST)


def test_gzip_request_body(mock_url):
    with connect(mock_url) as sock:
        sock.sendall(raw_post("alpha", gzip.compress(BID_REQUEST), "Content-Encoding: gzip\r\n"))
        sock.sendall(raw_post("alpha", b"not gzip", "Content-Encoding: gzip\r\n"))
        (ok, bad) = read_answers(sock, 2)
    assert ok[0] == 200 and json.loads(ok[2]) == bid_response("alpha", REQUEST)
    assert bad[0] == 400


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"NOT HTTP AT ALL\r\n\r\n", 400),
        (b"POST /alpha HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
        (b"POST /alpha HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400),
        (b"POST /alpha HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"POST /alpha HTTP/2.0\r\n\r\n", 400),
        (b"POST /alpha HTTP/1.1\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}", 400),
        (b"POST /alpha HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501),
        (b"POST /alpha HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 400),
    ],
    ids=["request-line", "length", "two-lengths", "header-line", "version", "coding", "chunked", "head-size"],
)
def test_malformed_request_is_answered_and_closed(mock_url, data, status):
    with connect(mock_url) as sock:
        sock.sendall(raw_post("alpha", BID_REQUEST) + data)  # the good request before it is answered first
        (first, refusal) = read_answers(sock, 2)
        assert first[0] == 200
        assert refusal[0] == status and refusal[1]["connection"] == "close"
        assert closed_by_peer(sock)


@pytest.mark.parametrize("close", ["HTTP/1.1\r\nConnection: close", "HTTP/1.0"])
def test_connection_close_is_honoured(mock_url, close):
    with connect(mock_url) as sock:
        sock.sendall(f"GET /ready {close}\r\nHost: b\r\n\r\n".encode())
        ((status, headers, body),) = read_answers(sock, 1)
        assert (status, body, headers["connection"]) == (200, b"ok", "close")
        assert closed_by_peer(sock)


def test_templates_match_the_reference_answer():
    templates = AnswerTemplates()
    for request in (REQUEST, dict(REQUEST, id="other"), {"imp": REQUEST["imp"]}, {"id": 7, "imp": [{"id": {"x": 1},
                    "banner": {}}]}):
        for _ in range(2):  # built, then from the cache
            rendered = templates.render("alpha", request)
            assert rendered is not None and json.loads(rendered) == bid_response("alpha", request)
    assert templates.render("alpha", {"imp": [{"id": "v", "video": {}}]}) is None
