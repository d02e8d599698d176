"""Slow and vanishing clients, over raw sockets against a real server process: ``http_timeouts.*``
close idle connections, unfinished request heads and unfinished bodies; a client that goes away
before its answer is counted as a client disconnect, never as a 500."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.e2e.helpers import Server, get

HEADER, BODY, IDLE = 0.5, 1.0, 1.5
# Timers fire on the event loop: allow for a loaded test machine on the late side.
LATE = 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(
        env={
            "HBS_HTTP_TIMEOUTS__HEADER_SECONDS": str(HEADER),
            "HBS_HTTP_TIMEOUTS__BODY_SECONDS": str(BODY),
            "HBS_HTTP_TIMEOUTS__IDLE_SECONDS": str(IDLE),
        },
        cwd=tmp_path_factory.mktemp("slow-clients"),
    )
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def read_until_closed(sock: socket.socket, timeout: float = 10) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed it."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return data, time.monotonic()
        data += chunk


def read_response(sock: socket.socket) -> bytes:
    """One whole response: a Content-Length (what every hbserver endpoint sends) or none (204)."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    lengths = [int(line.split(b":", 1)[1]) for line in lines if line.startswith(b"content-length:")]
    length = lengths[0] if lengths else 0
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {data!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def request_bytes(method: str, path: str, body: bytes = b"", length: int | None = None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body) if length is None else length}\r\n"
    return head.encode() + b"\r\n" + body


def metrics(server: Server) -> str:
    status, body = get(server.base + "/metrics")
    assert status == 200
    return body.decode()


def metric_value(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def server_errors(text: str) -> list[str]:
    """The http_requests lines of 5xx answers."""
    return [line for line in text.splitlines() if line.startswith("hbserver_http_requests") and 'status="5' in line]


def test_an_idle_keep_alive_connection_is_closed_after_idle_seconds(server):
    with connect(server) as sock:
        sock.sendall(request_bytes("GET", "/status"))
        assert status_of(read_response(sock)) == 204
        answered = time.monotonic()
        data, closed = read_until_closed(sock)
    assert data == b""
    assert IDLE - 0.1 <= closed - answered <= IDLE + LATE


def test_a_keep_alive_connection_used_within_idle_seconds_stays_open(server):
    with connect(server) as sock:
        for _ in range(3):
            sock.sendall(request_bytes("GET", "/status"))
            assert status_of(read_response(sock)) == 204
            time.sleep(IDLE * 0.6)  # longer than the header and body timeouts: those do not apply
        sock.sendall(request_bytes("GET", "/status"))
        assert status_of(read_response(sock)) == 204


def test_a_connection_that_sends_nothing_is_closed_after_header_seconds(server):
    with connect(server) as sock:
        opened = time.monotonic()
        data, closed = read_until_closed(sock)
    assert data == b""
    assert HEADER - 0.1 <= closed - opened <= HEADER + LATE


def assert_head_timed_out(sock: socket.socket, sent: float) -> None:
    """The server closes ``sock`` (at most a 408 on it) header_seconds after ``sent``."""
    data, closed = read_until_closed(sock)
    assert data == b"" or data.startswith(b"HTTP/1.1 408 ")
    assert HEADER - 0.1 <= closed - sent <= HEADER + LATE


@pytest.mark.parametrize(
    "partial",
    [b"GET /sta", b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"POST /cache HTTP/1.1\r\nContent-Length: 10\r\n"],
)
def test_a_partial_request_head_is_closed_after_header_seconds(server, partial):
    with connect(server) as sock:
        sock.sendall(partial)
        assert_head_timed_out(sock, time.monotonic())


def test_the_header_timeout_counts_from_the_first_byte_of_each_request_on_a_kept_alive_connection(server):
    with connect(server) as sock:
        sock.sendall(request_bytes("GET", "/status"))
        assert status_of(read_response(sock)) == 204
        time.sleep(HEADER * 2)  # idle for longer than header_seconds (but less than idle_seconds): fine
        sock.sendall(b"GET /status HTTP/1.1\r\n")
        assert_head_timed_out(sock, time.monotonic())


def test_a_head_dripped_byte_by_byte_is_closed_after_header_seconds(server):
    """Slowloris: bytes keep coming, the head never ends; what counts is the head's first byte."""
    with connect(server) as sock:
        sock.sendall(b"GET /status HTTP/1.1\r\n")
        sent = time.monotonic()
        closed = None
        for i in range(60):
            time.sleep(0.05)
            try:
                sock.sendall(f"X-Drip-{i}: y\r\n".encode())
            except OSError:  # reset: the server closed and our bytes arrived after
                closed = time.monotonic()
                break
            sock.settimeout(0.001)
            try:
                if sock.recv(65536) == b"":
                    closed = time.monotonic()
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:
                closed = time.monotonic()
                break
    assert closed is not None, "the server never closed the dripping connection"
    assert HEADER - 0.1 <= closed - sent <= HEADER + LATE


@pytest.mark.parametrize("path", ["/openrtb2/auction", "/cache"])
def test_a_partial_body_gets_408_and_a_close_after_body_seconds(server, path):
    before = metrics(server)
    with connect(server) as sock:
        sock.sendall(request_bytes("POST", path, b"{" + b" " * 99, length=1000))
        sent = time.monotonic()
        data, closed = read_until_closed(sock)
    assert BODY - 0.1 <= closed - sent <= BODY + LATE
    assert data.startswith(b"HTTP/1.1 408 "), data
    head, _, text = data.partition(b"\r\n\r\n")
    assert b"Connection: close" in head
    assert b"Request Timeout" in text
    after = metrics(server)
    key = f'hbserver_http_requests{{endpoint="{path}",status="408"}}'
    assert metric_value(after, key) == metric_value(before, key) + 1
    assert not server_errors(after)
    assert "Traceback" not in server.output()


def test_a_body_dripped_slowly_is_cut_at_body_seconds(server):
    with connect(server) as sock:
        sock.sendall(request_bytes("POST", "/openrtb2/auction", b"{", length=200))
        sent = time.monotonic()
        response = b""
        for _ in range(60):
            time.sleep(0.05)
            try:
                sock.sendall(b" ")
            except OSError:
                break
            sock.settimeout(0.001)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
            response += chunk
            if not chunk or b"\r\n\r\n" in response:
                break
        cut = time.monotonic()
    assert BODY - 0.1 <= cut - sent <= BODY + LATE
    assert response == b"" or response.startswith(b"HTTP/1.1 408 "), response


def test_a_slow_client_within_every_limit_is_served(server):
    body = b'{"puts": []}'
    head = request_bytes("POST", "/cache", body)[: -len(body)]
    with connect(server) as sock:
        for piece in (head[:10], head[10:30], head[30:]):  # the head over 0.3 s < header_seconds
            sock.sendall(piece)
            time.sleep(HEADER * 0.3)
        for piece in (body[:4], body[4:8], body[8:]):  # the body over 0.6 s < body_seconds
            sock.sendall(piece)
            time.sleep(BODY * 0.2)
        response = read_response(sock)
        assert status_of(response) != 408, response
        assert b"Connection: close" not in response
        sock.sendall(request_bytes("GET", "/status"))  # still kept alive
        assert status_of(read_response(sock)) == 204


def test_timely_clients_are_unaffected_by_a_slow_one(server):
    with connect(server) as slow_head, connect(server) as slow_body, connect(server) as fast:
        slow_head.sendall(b"GET /status HTTP/1.1\r\n")
        slow_body.sendall(request_bytes("POST", "/cache", b"{", length=100))
        started = time.monotonic()
        answered = 0
        while time.monotonic() - started < HEADER + 0.5:
            fast.sendall(request_bytes("GET", "/status"))
            assert status_of(read_response(fast)) == 204
            answered += 1
            time.sleep(0.01)
        assert answered > 20
        assert read_until_closed(slow_head)[0] == b""
        assert read_until_closed(slow_body)[0].startswith(b"HTTP/1.1 408 ")


def disconnects(text: str, path: str) -> float:
    return metric_value(text, f'hbserver_client_disconnects{{endpoint="{path}"}}')


def wait_for_disconnect_count(server: Server, path: str, expected: float) -> str:
    deadline = time.monotonic() + 5
    while True:
        text = metrics(server)
        if disconnects(text, path) >= expected or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


@pytest.mark.parametrize("path", ["/openrtb2/auction", "/cache"])
def test_a_client_that_leaves_mid_body_is_a_disconnect_not_a_500(server, path):
    before = metrics(server)
    with connect(server) as sock:
        sock.sendall(request_bytes("POST", path, b"{" + b" " * 99, length=10000))
        time.sleep(0.1)
    after = wait_for_disconnect_count(server, path, disconnects(before, path) + 1)
    assert disconnects(after, path) == disconnects(before, path) + 1
    assert not server_errors(after)
    assert metric_value(after, f'hbserver_internal_errors{{endpoint="{path}"}}') == 0
    assert "Traceback" not in server.output()
    assert "unhandled error" not in server.output()


def test_a_client_that_leaves_before_the_answer_is_a_disconnect(server):
    path = "/test/slow"
    before = metrics(server)
    with connect(server) as sock:
        sock.sendall(request_bytes("GET", path + "?s=0.3"))
        time.sleep(0.1)
    after = wait_for_disconnect_count(server, path, disconnects(before, path) + 1)
    assert disconnects(after, path) == disconnects(before, path) + 1
    assert f'hbserver_http_requests{{endpoint="{path}",status="200"}}' not in after
    assert "Traceback" not in server.output()


@pytest.mark.parametrize(
    "raw",
    [
        b"POST /openrtb2/auction HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n0123456789",
        b"POST /openrtb2/auction HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        b"GET /status HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    ],
)
def test_a_malformed_request_is_a_400_that_logs_no_traceback(server, raw):
    with connect(server) as sock:
        sock.sendall(raw)
        data, _ = read_until_closed(sock)
    assert data.split(b" ", 2)[1] == b"400", data
    time.sleep(0.1)
    assert "Traceback" not in server.output()


def test_many_slow_connections_do_not_stop_the_server(server):
    """A slowloris burst: every connection is closed within header_seconds, the server keeps answering."""
    socks = [connect(server) for _ in range(200)]
    try:
        for sock in socks:
            sock.sendall(b"GET /status HTTP/1.1\r\nX-A: b\r\n")
        assert get(server.base + "/status")[0] == 204
        results: list[bytes] = []
        threads = [threading.Thread(target=lambda s=s: results.append(read_until_closed(s)[0])) for s in socks]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
        assert len(results) == len(socks) and all(r == b"" for r in results)
        assert time.monotonic() - started <= HEADER + LATE + 1
    finally:
        for sock in socks:
            sock.close()
