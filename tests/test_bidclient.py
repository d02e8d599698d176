"""BidderClient against real sockets: scripted asyncio servers, aiohttp's server, TLS with a
self-signed certificate. Every test runs on asyncio's loop and on uvloop."""

from __future__ import annotations

import asyncio
import gc
import gzip
import shutil
import ssl
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import uvloop
from aiohttp import web

from bench.mocks.bidder import make_handler, seat_price
from hbserver.web.bidclient import MAX_CACHED_URLS, BidderClient, BidderClientError, ResponseTooLarge

Run = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest) -> Run:
    """Run a test body to completion on a fresh loop of either kind."""
    factory = asyncio.new_event_loop if request.param == "asyncio" else uvloop.new_event_loop

    def runner(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
        with asyncio.Runner(loop_factory=factory) as loop_runner:
            loop_runner.run(asyncio.wait_for(body(), 20))

    return runner


# --- a scripted HTTP/1.1 server ----------------------------------------------------------------


@dataclass
class Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes
    connection: int  # which accepted connection, from 0
    index: int  # which request on that connection, from 0

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        assert len(values) <= 1, f"{name} sent {len(values)} times"
        return values[0] if values else None


@dataclass
class Reply:
    data: bytes | list[bytes] = b""  # a list is written piece by piece, a few ms apart
    close: bool = False  # close the connection after writing
    hang: bool = False  # never answer; wait for the client to go away
    delay: float = 0.0


def ok(body: bytes = b"hello", *extra: str) -> Reply:
    head = "".join(f"{line}\r\n" for line in extra)
    return Reply(b"HTTP/1.1 200 OK\r\n" + head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body)


Respond = Callable[[Request], Reply]


class Server:
    """Answers each request as ``respond`` says; counts connections, requests and client closes."""

    def __init__(self, respond: Respond, tls: ssl.SSLContext | None = None) -> None:
        self.respond = respond
        self.tls = tls
        self.connections = 0
        self.requests: list[Request] = []
        self.closed_by_client = 0  # connections the client closed (EOF or reset seen here)
        self.active = 0
        self.most_active = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:  # handlers still waiting for a request end at its EOF
            writer.transport.abort()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2.0)
        await self._server.wait_closed()

    def url(self, path: str = "/") -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def wait_closed_by_client(self, count: int, timeout: float = 2.0) -> None:
        end = time.monotonic() + timeout
        while self.closed_by_client < count:
            assert time.monotonic() < end, f"{self.closed_by_client} of {count} connections closed by the client"
            await asyncio.sleep(0.005)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        number = self.connections
        self.connections += 1
        try:
            index = 0
            while True:
                request = await _read_request(reader, number, index)
                if request is None:
                    self.closed_by_client += 1
                    return
                self.requests.append(request)
                reply = self.respond(request)
                index += 1
                if reply.hang:
                    if not await reader.read():  # until the client closes
                        self.closed_by_client += 1
                    return
                self.active += 1
                self.most_active = max(self.most_active, self.active)
                try:
                    if reply.delay:
                        await asyncio.sleep(reply.delay)
                    pieces = reply.data if isinstance(reply.data, list) else [reply.data]
                    for piece in pieces:
                        if writer.is_closing():  # uvloop raises on writes after the peer's reset
                            raise ConnectionResetError
                        writer.write(piece)
                        await writer.drain()
                        if len(pieces) > 1:
                            await asyncio.sleep(0.002)
                finally:
                    self.active -= 1
                if reply.close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed_by_client += 1
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()


async def _read_request(reader: asyncio.StreamReader, connection: int, index: int) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise
        return None
    lines = head.decode("latin-1").split("\r\n")[:-2]
    method, target, version = lines[0].split(" ")
    assert version == "HTTP/1.1"
    headers = [(name, value.strip()) for name, _, value in (line.partition(":") for line in lines[1:])]
    request = Request(method, target, headers, b"", connection, index)
    length = request.header("Content-Length")
    if length is not None:
        request.body = await reader.readexactly(int(length))
    return request


# How late a deadline may fire: timers on these shared VMs run up to ~100 ms late when the
# machine is descheduled; anything below the 250 ms spacing of the deadline tests still tells
# a request's own deadline from a neighbour's.
LATE = 0.2


def deadline(seconds: float = 5.0) -> float:
    return asyncio.get_running_loop().time() + seconds


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


# --- bodies ------------------------------------------------------------------------------------

CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
GZIPPED = gzip_bytes(b'{"seatbid":[]}' * 50)
DEFLATED = zlib.compress(b"deflated body")
RAW_DEFLATE = zlib.compressobj(wbits=-zlib.MAX_WBITS)
RAW_DEFLATED = RAW_DEFLATE.compress(b"raw deflate body") + RAW_DEFLATE.flush()


def _chunked(data: bytes, size: int) -> bytes:
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size)
    )
    return chunks + b"0\r\n\r\n"


@dataclass(frozen=True)
class BodyCase:
    name: str
    reply: Reply
    status: int
    body: bytes
    reused: bool  # the second request goes over the same connection


BODY_CASES = [
    BodyCase("content-length", ok(b"hello"), 200, b"hello", True),
    BodyCase("empty content-length", ok(b""), 200, b"", True),
    BodyCase("chunked", Reply(CHUNKED), 200, b"hello world", True),
    BodyCase("chunked with trailer",
             Reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n"),
             200, b"ok", True),
    BodyCase("close-delimited", Reply(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", close=True), 200, b"until the end",
             False),
    BodyCase("HTTP/1.0 close-delimited", Reply(b"HTTP/1.0 200 OK\r\n\r\nold", close=True), 200, b"old", False),
    BodyCase("gzip", Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
                           % (len(GZIPPED), GZIPPED)), 200, b'{"seatbid":[]}' * 50, True),
    BodyCase("gzip chunked", Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: GZIP\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   + _chunked(GZIPPED, 7)), 200, b'{"seatbid":[]}' * 50, True),
    BodyCase("gzip close-delimited", Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + GZIPPED, close=True),
             200, b'{"seatbid":[]}' * 50, False),
    BodyCase("deflate (zlib)", Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%s"
                                     % (len(DEFLATED), DEFLATED)), 200, b"deflated body", True),
    BodyCase("deflate (raw)", Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%s"
                                    % (len(RAW_DEFLATED), RAW_DEFLATED)), 200, b"raw deflate body", True),
    BodyCase("identity coding", ok(b"plain", "Content-Encoding: identity"), 200, b"plain", True),
    BodyCase("byte by byte", Reply(list(CHUNKED[i : i + 1] for i in range(len(CHUNKED)))), 200, b"hello world", True),
    BodyCase("no content", Reply(b"HTTP/1.1 204 No Content\r\n\r\n"), 204, b"", True),
    BodyCase("not modified", Reply(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"), 304, b"", True),
    BodyCase("1xx skipped",
             Reply(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
                   b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), 200, b"ok", True),
    BodyCase("redirect returned as is",
             Reply(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"), 302, b"", True),
    BodyCase("error status", Reply(b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\noops"), 500, b"oops", True),
    BodyCase("connection close", ok(b"bye", "Connection: close"), 200, b"bye", False),
    BodyCase("HTTP/1.0 keep-alive", Reply(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nka"),
             200, b"ka", True),
]  # fmt: skip


@pytest.mark.parametrize("case", BODY_CASES, ids=[case.name for case in BODY_CASES])
def test_bodies_and_connection_reuse(run: Run, case: BodyCase) -> None:
    async def body() -> None:
        async with Server(lambda request: case.reply) as server:
            client = BidderClient()
            for _ in range(2):
                status, answer = await client.request("POST", server.url("/bid"), b"{}", {}, deadline())
                assert (status, answer) == (case.status, case.body)
            assert server.connections == (1 if case.reused else 2)
            if not case.reused and not case.reply.close:  # "Connection: close" honoured: the client closes
                await server.wait_closed_by_client(2)
            await client.close()

    run(body)


def test_request_bytes(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient(user_agent="test-agent/1")
            headers = {"Content-Type": "application/json", "X-Custom": "a b", "Host": "evil.example",
                       "Content-Length": "999", "Connection": "upgrade", "Transfer-Encoding": "chunked"}  # fmt: skip
            url = f"http://127.0.0.1:{server.port}/path/x?a=1&b=%20c#fragment"
            assert await client.request("POST", url, b'{"id":"1"}', headers, deadline()) == (200, b"hello")
            await client.request("GET", url, None, {"User-Agent": "theirs", "Accept-Encoding": "identity"}, deadline())
            await client.request("POST", server.url("/empty"), None, {}, deadline())
            await client.request("GET", f"http://127.0.0.1:{server.port}", None, {}, deadline())
            await client.close()
        post, get, empty, root = server.requests
        assert (post.method, post.target, post.body) == ("POST", "/path/x?a=1&b=%20c", b'{"id":"1"}')
        assert post.header("Host") == f"127.0.0.1:{server.port}"
        assert post.header("Content-Length") == "10"
        assert post.header("Connection") == "keep-alive"
        assert post.header("Accept-Encoding") == "gzip"
        assert post.header("User-Agent") == "test-agent/1"
        assert post.header("Content-Type") == "application/json"
        assert post.header("X-Custom") == "a b"
        assert post.header("Transfer-Encoding") is None
        assert (get.method, get.header("Content-Length"), get.body) == ("GET", None, b"")
        assert get.header("User-Agent") == "theirs"
        assert get.header("Accept-Encoding") == "identity"
        assert empty.header("Content-Length") == "0"
        assert root.target == "/"
        assert {r.connection for r in server.requests} == {0}

    run(body)


def test_request_heads_follow_the_header_values(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            for value in ("one", "two", "one"):
                await client.request("POST", server.url(), b"[]", {"X-Value": value}, deadline())
            await client.request("POST", server.url(), b"[1]", {"X-Value": "one", "X-Other": "x"}, deadline())
            await client.request("POST", server.url(), None, {"X-Value": "one"}, deadline())
            await client.close()
        assert [(r.header("X-Value"), r.header("X-Other"), r.body) for r in server.requests] == [
            ("one", None, b"[]"), ("two", None, b"[]"), ("one", None, b"[]"), ("one", "x", b"[1]"), ("one", None, b"")
        ]  # fmt: skip
        assert [r.header("Content-Length") for r in server.requests] == ["2", "2", "2", "3", "0"]

    run(body)


def test_url_forms_and_host_header(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            await client.request("GET", f"HTTP://user:p%40ss@localhost:{server.port}/a b/ü?q=ü", None, {}, deadline())
            await client.close()
        (request,) = server.requests
        assert request.target == "/a%20b/%C3%BC?q=%C3%BC"
        assert request.header("Host") == f"localhost:{server.port}"
        assert request.header("Authorization") == "Basic dXNlcjpwQHNz"  # user:p@ss

    run(body)


@pytest.mark.parametrize(
    ("url", "method", "headers"),
    [
        ("ftp://127.0.0.1/", "GET", {}),
        ("http:///nohost", "GET", {}),
        ("http://bad host/", "GET", {}),
        ("http://127.0.0.1:99999/", "GET", {}),
        ("http://127.0.0.1:1/", "GET\r\nX: y", {}),
        ("http://127.0.0.1:1/", "GET", {"X-Evil": "a\r\nInjected: yes"}),
        ("http://127.0.0.1:1/", "GET", {"X-Evil\n": "a"}),
    ],
)
def test_invalid_requests_are_refused_before_sending(run: Run, url: str, method: str, headers: dict[str, str]) -> None:
    async def body() -> None:
        client = BidderClient()
        with pytest.raises(ValueError):
            await client.request(method, url, None, headers, deadline())
        await client.close()

    run(body)


def test_parsed_urls_are_cached_and_bounded(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            for i in range(MAX_CACHED_URLS + 50):
                await client.request("GET", server.url(f"/u{i}"), None, {}, deadline())
            assert len(client._targets) == MAX_CACHED_URLS
            assert server.connections == 1  # every URL of one origin shares its pool
            assert server.requests[-1].target == f"/u{MAX_CACHED_URLS + 49}"
            await client.close()

    run(body)


# --- keep-alive, stale connections -------------------------------------------------------------


def test_keep_alive_reuse_with_concurrency(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: Reply(ok().data, delay=0.01)) as server:
            client = BidderClient()
            for _ in range(5):
                results = await asyncio.gather(
                    *(client.request("POST", server.url(), b"x", {}, deadline()) for _ in range(4))
                )
                assert results == [(200, b"hello")] * 4
            assert server.connections == 4
            assert len(server.requests) == 20
            await client.close()
            await server.wait_closed_by_client(4)

    run(body)


def test_against_the_mock_bidder_on_aiohttp(run: Run) -> None:
    async def body() -> None:
        server = web.Server(make_handler({}), access_log=None)
        runner = web.ServerRunner(server)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        client = BidderClient()
        request = orjson.dumps({"id": "r1", "imp": [{"id": "i1", "banner": {"format": [{"w": 300, "h": 250}]}}]})
        try:
            for _ in range(3):
                answers = await asyncio.gather(
                    *(client.request("POST", f"http://127.0.0.1:{port}/seat{i}", request,
                                     {"Content-Type": "application/json"}, deadline()) for i in range(3))
                )  # fmt: skip
                for i, (status, answer) in enumerate(answers):
                    assert status == 200
                    bid = orjson.loads(answer)["seatbid"][0]["bid"][0]
                    assert bid["price"] == seat_price(f"seat{i}")
            assert len(server.connections) == 3
        finally:
            await client.close()
            await runner.cleanup()

    run(body)


def test_connection_closed_by_server_while_idle_is_not_reused(run: Run) -> None:
    async def body() -> None:
        # keep-alive answers, then the server closes: the client sees the EOF while the connection is idle
        async with Server(lambda request: Reply(ok().data, close=True)) as server:
            client = BidderClient()
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            await asyncio.sleep(0.05)
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            assert server.connections == 2
            assert [(r.connection, r.index) for r in server.requests] == [(0, 0), (1, 0)]
            await client.close()

    run(body)


def test_stale_connection_is_retried_once_on_a_fresh_one(run: Run) -> None:
    def respond(request: Request) -> Reply:
        if request.connection == 0 and request.index == 1:
            return Reply(close=True)  # the idle-timeout race: the request arrives, the connection dies unanswered
        return ok()

    async def body() -> None:
        async with Server(respond) as server:
            client = BidderClient()
            assert await client.request("POST", server.url(), b"1", {}, deadline()) == (200, b"hello")
            assert await client.request("POST", server.url(), b"2", {}, deadline()) == (200, b"hello")
            assert [(r.connection, r.index, r.body) for r in server.requests] == [(0, 0, b"1"), (0, 1, b"2"),
                                                                                   (1, 0, b"2")]  # fmt: skip
            await client.close()

    run(body)


def test_retry_happens_once_only(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return ok() if request.connection == 0 and request.index == 0 else Reply(close=True)

    async def body() -> None:
        async with Server(respond) as server:
            client = BidderClient()
            await client.request("GET", server.url(), None, {}, deadline())
            with pytest.raises(BidderClientError, match="without answering"):
                await client.request("GET", server.url(), None, {}, deadline())
            assert server.connections == 2
            assert len(server.requests) == 3
            await client.close()

    run(body)


def test_fresh_connection_closed_unanswered_is_not_retried(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: Reply(close=True)) as server:
            client = BidderClient()
            with pytest.raises(BidderClientError):
                await client.request("POST", server.url(), b"x", {}, deadline())
            assert server.connections == 1
            await client.close()

    run(body)


def test_idle_connections_are_closed_after_the_idle_timeout(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient(idle_timeout=0.1)
            await client.request("GET", server.url(), None, {}, deadline())
            await server.wait_closed_by_client(1, timeout=1.0)
            await client.request("GET", server.url(), None, {}, deadline())
            assert server.connections == 2
            await client.close()

    run(body)


def test_connection_idle_too_long_is_not_taken_between_sweeps(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient(idle_timeout=0.05)
            client._sweep_interval = lambda: 60.0  # type: ignore[method-assign]  # no sweep in this test
            await client.request("GET", server.url(), None, {}, deadline())
            await asyncio.sleep(0.1)
            assert server.closed_by_client == 0
            await client.request("GET", server.url(), None, {}, deadline())
            assert server.connections == 2
            await server.wait_closed_by_client(1)
            await client.close()

    run(body)


# --- deadlines and bounds ----------------------------------------------------------------------


def test_deadline_raises_timeout_and_drops_the_connection(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else ok()

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(respond) as server:
            client = BidderClient()
            await client.request("GET", server.url(), None, {}, deadline())  # a keep-alive connection, now idle
            end = deadline(0.2)
            with pytest.raises(TimeoutError):
                await client.request("POST", server.url("/hang"), b"x", {}, end)
            assert end - 0.002 <= loop.time() <= end + LATE
            await server.wait_closed_by_client(1)  # the timed-out connection is closed...
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            assert server.connections == 2  # ...and the next request needs a new one
            await client.close()

    run(body)


def test_deadline_slow_body(run: Run) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345"

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(lambda request: Reply([head] + [b"6"] * 5)) as server:  # 5 bytes then 1 every ~2 ms
            client = BidderClient()
            end = deadline(0.004)
            with pytest.raises(TimeoutError):
                await client.request("GET", server.url(), None, {}, end)
            assert loop.time() <= end + LATE
            await client.close()

    run(body)


def test_deadline_already_passed(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            with pytest.raises(TimeoutError):
                await client.request("GET", server.url(), None, {}, deadline(-0.001))
            assert server.connections == 0
            await client.close()

    run(body)


def test_many_deadlines_in_any_order(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else Reply(ok().data, delay=0.05)

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(respond) as server:
            client = BidderClient()
            # at least 90 ms apart, so a request expired at a neighbour's deadline is caught even
            # with the 80 ms allowed for a loaded machine's late timers
            offsets = [0.45, 0.15, 0.3, 0.9, 0.06]

            async def hang(offset: float) -> float:
                end = deadline(offset)
                with pytest.raises(TimeoutError):
                    await client.request("GET", server.url("/hang"), None, {}, end)
                return loop.time() - end

            late = await asyncio.gather(*(hang(o) for o in offsets),
                                        client.request("GET", server.url(), None, {}, deadline(0.2)))  # fmt: skip
            assert late[-1] == (200, b"hello")
            assert all(-0.002 <= lateness <= LATE for lateness in late[:-1]), late
            await client.close()

    run(body)


def test_finished_requests_do_not_pile_up_in_the_deadline_heap(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else ok()

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(respond) as server:
            client = BidderClient()
            for _ in range(1500):
                await client.request("GET", server.url(), None, {}, deadline(60))
            assert len(client._deadlines) <= 1024 + 2
            end = deadline(0.05)
            with pytest.raises(TimeoutError):
                await client.request("GET", server.url("/hang"), None, {}, end)
            assert loop.time() <= end + LATE
            await client.close()

    run(body)


@pytest.mark.parametrize(
    ("reply", "dropped"),
    [
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n"), True),  # refused on the head alone
        (Reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunked(b"x" * 1001, 100)), True),
        (Reply(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 1001, close=True), False),  # the server closes
        (Reply([b"HTTP/1.1 200 OK\r\n\r\n"] + [b"x" * 100] * 20), True),  # close-delimited, never closed
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
               % (len(gzip_bytes(b"y" * 1001)), gzip_bytes(b"y" * 1001))), False),  # whole: the connection is fine
    ],
    ids=["content-length", "chunked", "close-delimited", "close-delimited-open", "gzip-decoded"],
)  # fmt: skip
def test_too_large(run: Run, reply: Reply, dropped: bool) -> None:
    async def body() -> None:
        async with Server(lambda request: reply) as server:
            client = BidderClient(max_response_bytes=1000)
            started = time.monotonic()
            with pytest.raises(ResponseTooLarge):
                await client.request("GET", server.url(), None, {}, deadline())
            assert time.monotonic() - started < 1.0  # not by waiting for the rest or for the deadline
            if dropped:
                await server.wait_closed_by_client(1)
            elif not reply.close:
                with pytest.raises(ResponseTooLarge):
                    await client.request("GET", server.url(), None, {}, deadline())
                assert server.connections == 1
            await client.close()

    run(body)


def test_exactly_at_the_limit(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok(b"z" * 1000)) as server:
            client = BidderClient(max_response_bytes=1000)
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"z" * 1000)
            await client.close()

    run(body)


def test_content_length_of_a_bodiless_answer_is_not_a_size(run: Run) -> None:
    async def body() -> None:
        reply = Reply(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5000\r\n\r\n")
        async with Server(lambda request: reply) as server:
            client = BidderClient(max_response_bytes=1000)
            assert await client.request("GET", server.url(), None, {}, deadline()) == (304, b"")
            await client.close()

    run(body)


def test_gzip_bomb_is_bounded(run: Run) -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9, mtime=0)  # 64 MiB from ~64 KiB
    assert len(bomb) < 100_000

    async def body() -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb)
        async with Server(lambda request: Reply(head + bomb)) as server:
            client = BidderClient(max_response_bytes=1024 * 1024)
            tracemalloc.start()
            try:
                with pytest.raises(ResponseTooLarge, match="decoded"):
                    await client.request("GET", server.url(), None, {}, deadline())
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak < 8 * 1024 * 1024  # inflating stopped at the limit, not at 64 MiB
            await client.close()

    run(body)


_BOMB = gzip.compress(b"\0" * (4 * 1024 * 1024), compresslevel=9, mtime=0)
_PIECE = b"%x\r\n%s\r\n" % (16 * 1024, b"[" * 16 * 1024)


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"] + [_PIECE] * 100), ResponseTooLarge),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
               % (len(_BOMB), _BOMB)), ResponseTooLarge),
        (Reply([b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"] + [b"x"] * 1000), TimeoutError),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", close=True), BidderClientError),
        (Reply(b"NOT HTTP AT ALL\r\n\r\n"), BidderClientError),
    ],
    ids=["chunked-forever", "gzip-bomb", "trickle", "mid-response", "garbage"],
)  # fmt: skip
def test_failed_answers_leave_no_cyclic_garbage(run: Run, reply: Reply, error: type[Exception], warm: bool) -> None:
    """A cut or failed answer is freed as soon as the caller drops the error: no reference cycle
    (error, traceback, frames, the future holding the error) keeps it, with its buffers, for the
    collector — which, with hbserver's gen0 threshold, may run long after (issue 38)."""

    def respond(request: Request) -> Reply:
        return reply if request.target == "/bad" else ok()

    async def body() -> None:
        async with Server(respond) as server:
            failed = 0
            gc.collect()
            gc.disable()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                for _ in range(3):
                    client = BidderClient(max_response_bytes=100_000)  # no idle connection from the last one
                    if warm:
                        await client.request("GET", server.url(), None, {}, deadline())
                    pending = client.start("GET", server.url("/bad"), None, {}, deadline(0.15))
                    assert (pending.connection is not None) is warm
                    try:
                        await client.finish(pending)
                    except error:
                        failed += 1
                    await client.close()
                del pending, client
                gc.collect()
                ours = [_described(thing) for thing in gc.garbage if _described(thing)]
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
            assert failed == 3
            assert ours == []

    run(body)


def _described(thing: object) -> str:
    """What ``thing`` is, if the bidder client made it (its objects, parsers, tasks, frames); else ""."""
    if type(thing).__module__ == BidderClient.__module__ or type(thing).__name__ == "HttpResponseParser":
        return type(thing).__name__
    code = getattr(thing, "f_code", None) or getattr(getattr(thing, "get_coro", lambda: None)(), "cr_code", None)
    if code is not None and code.co_filename == sys.modules[BidderClient.__module__].__file__:
        return f"{type(thing).__name__} of {code.co_name}"
    return ""


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(b"NOT HTTP AT ALL\r\n\r\n"), "invalid HTTP response"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", close=True), "mid-response"),
        (Reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", close=True), "mid-response"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), "invalid HTTP response"),
        (Reply(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"), "head larger"),
        (Reply(b"HTTP/1.1 200 OK\r\n" + b"X-Many: 1\r\n" * 200 + b"Content-Length: 0\r\n\r\n"), "too many"),
        (Reply(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"), "switched"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\nxx"), "unsupported"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nxxxx"), "invalid gzip"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n" + GZIPPED[:10]),
         "truncated gzip"),
        # issue 38: a length int() would not convert (or would take wrongly) is refused as the parser's
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\nok"), "invalid HTTP response"),
        (Reply(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nok"), "invalid HTTP response"),
        (Reply("HTTP/1.1 200 OK\r\nContent-Length: \u00b2\r\n\r\nok".encode()), "invalid HTTP response"),
    ],
    ids=["garbage", "short-content-length", "short-chunked", "two-lengths", "huge-head", "many-headers", "upgrade",
         "brotli", "bad-gzip", "truncated-gzip", "length-of-5000-digits", "length-past-uint64", "superscript-length"],
)  # fmt: skip
def test_protocol_errors(run: Run, reply: Reply, message: str) -> None:
    async def body() -> None:
        async with Server(lambda request: reply) as server:
            client = BidderClient()
            with pytest.raises(BidderClientError, match=message):
                await client.request("GET", server.url(), None, {}, deadline())
            await client.close()

    run(body)


def test_connection_refused(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            port = server.port
        client = BidderClient()
        with pytest.raises(BidderClientError, match="cannot connect"):
            await client.request("GET", f"http://127.0.0.1:{port}/", None, {}, deadline())
        with pytest.raises(BidderClientError, match="cannot connect"):  # and the slot was given back
            await client.request("GET", f"http://127.0.0.1:{port}/", None, {}, deadline())
        await client.close()

    run(body)


# --- the pool limit ----------------------------------------------------------------------------


def test_pool_limit_queues_waiters(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: Reply(ok().data, delay=0.03)) as server:
            client = BidderClient(max_connections_per_host=2)
            results = await asyncio.gather(
                *(client.request("GET", server.url(), None, {}, deadline()) for _ in range(7))
            )
            assert results == [(200, b"hello")] * 7
            assert server.connections == 2
            assert server.most_active == 2
            await client.close()

    run(body)


def test_waiter_deadline_and_cancellation_keep_the_pool_consistent(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else ok()

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(respond) as server:
            client = BidderClient(max_connections_per_host=1)
            hanging = asyncio.create_task(client.request("GET", server.url("/hang"), None, {}, deadline(0.5)))
            await asyncio.sleep(0.02)
            end = deadline(0.1)
            with pytest.raises(TimeoutError):  # waiting for the only slot past its deadline
                await client.request("GET", server.url(), None, {}, end)
            assert end - 0.002 <= loop.time() <= end + LATE
            cancelled = asyncio.create_task(client.request("GET", server.url(), None, {}, deadline()))
            waiting = asyncio.create_task(client.request("GET", server.url(), None, {}, deadline()))
            await asyncio.sleep(0.02)
            cancelled.cancel()
            with pytest.raises(TimeoutError):
                await hanging
            assert await waiting == (200, b"hello")  # got the slot the timed-out request freed
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            assert server.connections == 2
            await client.close()

    run(body)


def test_cancelled_request_drops_its_connection(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else ok()

    async def body() -> None:
        async with Server(respond) as server:
            client = BidderClient(max_connections_per_host=1)
            task = asyncio.create_task(client.request("GET", server.url("/hang"), None, {}, deadline()))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await server.wait_closed_by_client(1)
            assert await client.request("GET", server.url(), None, {}, deadline(1)) == (200, b"hello")
            await client.close()

    run(body)


# --- TLS -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@dataclass
class TlsServerContext:
    context: ssl.SSLContext
    names: list[str | None] = field(default_factory=list)  # SNI seen by the server


def tls_server(cert: Path, key: Path) -> TlsServerContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    holder = TlsServerContext(context)

    def on_sni(socket: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        holder.names.append(name)

    context.sni_callback = on_sni  # type: ignore[assignment]
    return holder


def test_https_with_sni_and_keep_alive(run: Run, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate

    async def body() -> None:
        tls = tls_server(cert, key)
        async with Server(lambda request: ok(b"secure"), tls=tls.context) as server:
            trusting = ssl.create_default_context(cafile=str(cert))
            client = BidderClient(ssl_context=trusting)
            url = f"https://localhost:{server.port}/bid"
            for _ in range(3):
                assert await client.request("POST", url, b"{}", {}, deadline()) == (200, b"secure")
            assert server.connections == 1
            assert tls.names == ["localhost"]
            assert server.requests[0].header("Host") == f"localhost:{server.port}"
            await client.close()
            await server.wait_closed_by_client(1)

    run(body)


def test_https_default_context_verifies_the_certificate(run: Run, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate

    async def body() -> None:
        async with Server(lambda request: ok(), tls=tls_server(cert, key).context) as server:
            client = BidderClient()  # the system's trust store: the self-signed certificate is refused
            with pytest.raises(BidderClientError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.request("GET", f"https://localhost:{server.port}/", None, {}, deadline())
            assert server.requests == []
            await client.close()

    run(body)


# --- close -----------------------------------------------------------------------------------------


def test_close_closes_everything(run: Run) -> None:
    def respond(request: Request) -> Reply:
        return Reply(hang=True) if request.target == "/hang" else ok()

    async def body() -> None:
        async with Server(respond) as server, Server(respond) as other:
            client = BidderClient(max_connections_per_host=3)
            await asyncio.gather(*(client.request("GET", server.url(), None, {}, deadline()) for _ in range(3)))
            await client.request("GET", other.url(), None, {}, deadline())  # idle, in another pool
            in_flight = [asyncio.create_task(client.request("GET", server.url("/hang"), None, {}, deadline()))
                         for _ in range(3)]  # fmt: skip
            waiting = asyncio.create_task(client.request("GET", server.url(), None, {}, deadline()))
            await asyncio.sleep(0.05)
            assert not waiting.done()
            await client.close()
            for task in [*in_flight, waiting]:
                with pytest.raises(BidderClientError, match="closed"):
                    await task
            await server.wait_closed_by_client(3)
            await other.wait_closed_by_client(1)
            with pytest.raises(BidderClientError, match="closed"):
                await client.request("GET", server.url(), None, {}, deadline())
            assert server.connections == 3

    run(body)


# --- start / finish / cancel: the fan-out's path without a task per request -------------------


def hang_or_ok(request: Request) -> Reply:
    return Reply(hang=True) if request.target == "/hang" else ok()


async def until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not met in time"
        await asyncio.sleep(0.002)


START_BODY_CASES = [case for case in BODY_CASES if case.name != "byte by byte"]  # framing is request()'s: covered


@pytest.mark.parametrize("case", START_BODY_CASES, ids=[case.name for case in START_BODY_CASES])
def test_start_and_finish_bodies(run: Run, case: BodyCase) -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(lambda request: case.reply) as server:
            client = BidderClient()
            for second in (False, True):
                before = loop.time()
                pending = client.start("POST", server.url("/bid"), b"{}", {}, deadline())
                # an idle keep-alive connection takes the request at once; otherwise a task connects
                assert (pending.connection is not None) is (second and case.reused)
                assert isinstance(pending.answer, asyncio.Task) is (pending.connection is None)
                status, answer, done_at = await client.finish(pending)
                assert (status, answer) == (case.status, case.body)  # gzip and deflate decoded on both paths
                assert before <= done_at <= loop.time()
            assert server.connections == (1 if case.reused else 2)
            assert [r.body for r in server.requests] == [b"{}", b"{}"]
            await client.close()

    run(body)


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
def test_finish_reports_when_the_answer_came_not_when_it_was_awaited(run: Run, warm: bool) -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(lambda request: Reply(ok().data, delay=0.05)) as server:
            client = BidderClient()
            if warm:
                await client.request("POST", server.url(), b"0", {}, deadline())
            before = loop.time()
            pending = client.start("POST", server.url(), b"1", {}, deadline())
            assert (pending.connection is not None) is warm
            await asyncio.sleep(0.25)
            awaited = loop.time()
            status, answer, done_at = await client.finish(pending)
            assert (status, answer) == (200, b"hello")
            assert before + 0.04 <= done_at <= awaited - 0.05, (before, done_at, awaited)
            assert server.connections == 1  # the warm-up's connection was reused
            assert [(r.connection, r.index, r.body) for r in server.requests][-1] == (0, int(warm), b"1")
            await client.close()

    run(body)


def test_start_takes_each_idle_connection_once(run: Run) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            await client.request("GET", server.url(), None, {}, deadline())  # one idle connection
            first = client.start("GET", server.url("/1"), None, {}, deadline())
            second = client.start("GET", server.url("/2"), None, {}, deadline())
            assert first.connection is not None and second.connection is None
            assert [(await client.finish(p))[:2] for p in (first, second)] == [(200, b"hello")] * 2
            third = client.start("GET", server.url("/3"), None, {}, deadline())
            fourth = client.start("GET", server.url("/4"), None, {}, deadline())
            assert third.connection is not None and fourth.connection is not None
            assert third.connection is not fourth.connection
            assert [(await client.finish(p))[:2] for p in (third, fourth)] == [(200, b"hello")] * 2
            assert server.connections == 2
            seen = {r.target: r.connection for r in server.requests}
            assert (seen["/1"], seen["/2"], {seen["/3"], seen["/4"]}) == (0, 1, {0, 1})
            await client.close()

    run(body)


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
def test_finish_times_out_at_the_deadline_and_drops_the_connection(run: Run, warm: bool) -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(hang_or_ok) as server:
            client = BidderClient()
            if warm:
                await client.request("GET", server.url(), None, {}, deadline())
            end = deadline(0.15)
            pending = client.start("POST", server.url("/hang"), b"x", {}, end)
            assert (pending.connection is not None) is warm
            with pytest.raises(TimeoutError):
                await client.finish(pending)
            assert end - 0.002 <= loop.time() <= end + LATE
            await server.wait_closed_by_client(1)  # the connection that was waiting is closed...
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            assert server.connections == 2  # ...and not reused
            await client.close()

    run(body)


@dataclass(frozen=True)
class Refused:
    name: str
    error: type[Exception]
    url: str = ""  # "" = the server's
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 5.0  # deadline from now
    closed: bool = False


REFUSED = [
    Refused("deadline passed", TimeoutError, seconds=-0.001),
    Refused("deadline now", TimeoutError, seconds=0.0),
    Refused("bad scheme", ValueError, url="ftp://127.0.0.1/"),
    Refused("no host", ValueError, url="http:///nohost"),
    Refused("bad method", ValueError, method="GET\r\nX: y"),
    Refused("header injection", ValueError, headers={"X-Evil": "a\r\nInjected: yes"}),
    Refused("client closed", BidderClientError, closed=True),
]


@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
def test_start_refuses_synchronously(run: Run, case: Refused) -> None:
    async def body() -> None:
        async with Server(lambda request: ok()) as server:
            client = BidderClient()
            await client.request("GET", server.url(), None, {}, deadline())  # an idle connection start could take
            if case.closed:
                await client.close()
            url, end, tasks = case.url or server.url("/refused"), deadline(case.seconds), len(asyncio.all_tasks())
            with pytest.raises(case.error):  # raised by the call itself: start is not a coroutine
                client.start(case.method, url, None, case.headers, end)
            assert len(asyncio.all_tasks()) == tasks  # no task was started
            if case.closed:
                assert len(server.requests) == 1
                return
            assert await client.request("GET", server.url(), None, {}, deadline()) == (200, b"hello")
            assert [(r.target, r.connection) for r in server.requests] == [("/", 0), ("/", 0)]  # nothing sent or lost
            await client.close()

    run(body)


def _race_closed(request: Request) -> Reply:
    # the idle-timeout race: the request arrives on the kept-alive connection, which dies unanswered
    return Reply(close=True) if (request.connection, request.index) == (0, 1) else ok()


def _closed_after_each(request: Request) -> Reply:
    return Reply(ok().data, close=True)  # a keep-alive answer, then the server closes the idle connection


def _only_first_answered(request: Request) -> Reply:
    return ok() if (request.connection, request.index) == (0, 0) else Reply(close=True)


@dataclass(frozen=True)
class StaleCase:
    name: str
    respond: Respond
    pause: float  # between the warm-up and start: time for the client to see a close
    at_once: bool  # start wrote on the kept-alive connection
    outcome: tuple[int, bytes] | type[Exception]
    trace: list[tuple[int, int, bytes]]  # (connection, index, body) of each request the server read


STALE_CASES = [
    StaleCase("closed as the request came: retried once", _race_closed, 0.0, True, (200, b"hello"),
              [(0, 0, b"warm"), (0, 1, b"bid"), (1, 0, b"bid")]),
    StaleCase("closed while idle: a new connection", _closed_after_each, 0.05, False, (200, b"hello"),
              [(0, 0, b"warm"), (1, 0, b"bid")]),
    StaleCase("the retry is not retried", _only_first_answered, 0.0, True, BidderClientError,
              [(0, 0, b"warm"), (0, 1, b"bid"), (1, 0, b"bid")]),
]  # fmt: skip


@pytest.mark.parametrize("case", STALE_CASES, ids=[case.name for case in STALE_CASES])
def test_start_and_finish_with_a_stale_keep_alive_connection(run: Run, case: StaleCase) -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with Server(case.respond) as server:
            client = BidderClient()
            assert await client.request("POST", server.url(), b"warm", {}, deadline()) == (200, b"hello")
            await asyncio.sleep(case.pause)
            before = loop.time()
            pending = client.start("POST", server.url(), b"bid", {}, deadline())
            assert (pending.connection is not None) is case.at_once
            if isinstance(case.outcome, tuple):
                status, answer, done_at = await client.finish(pending)
                assert (status, answer) == case.outcome
                assert before <= done_at <= loop.time()
            else:
                with pytest.raises(case.outcome, match="without answering"):
                    await client.finish(pending)
            assert [(r.connection, r.index, r.body) for r in server.requests] == case.trace
            await client.close()

    run(body)


@dataclass(frozen=True)
class CancelCase:
    name: str
    warm: bool  # an idle connection is at hand: written at once, no task
    path: str
    wait: str  # before cancel: "nothing", "sent" (the server has it) or "answered"
    dropped: bool  # the connection is closed rather than kept
    connections: int  # the server saw, once one more request was answered


CANCEL_CASES = [
    CancelCase("answer due on a kept-alive connection", True, "/hang", "sent", True, 2),
    CancelCase("task not started yet", False, "/hang", "nothing", False, 1),  # never connected
    CancelCase("task waiting for the answer", False, "/hang", "sent", True, 2),
    CancelCase("answered on a kept-alive connection", True, "/", "answered", False, 1),
    CancelCase("answered through a task", False, "/", "answered", False, 1),
]


@pytest.mark.parametrize("case", CANCEL_CASES, ids=[case.name for case in CANCEL_CASES])
def test_cancel(run: Run, case: CancelCase) -> None:
    async def body() -> None:
        async with Server(hang_or_ok) as server:
            client = BidderClient(max_connections_per_host=1)  # a slot not given back would block the next request
            if case.warm:
                await client.request("GET", server.url(), None, {}, deadline())
            sent = len(server.requests)
            pending = client.start("GET", server.url(case.path), None, {}, deadline())
            assert (pending.connection is not None) is case.warm
            if case.wait == "sent":
                await until(lambda: len(server.requests) > sent)
            elif case.wait == "answered":
                await asyncio.wait([pending.answer])
            client.cancel(pending)
            await asyncio.wait([pending.answer])
            assert pending.answer.cancelled() is (case.wait != "answered")
            if case.dropped:
                await server.wait_closed_by_client(1)
            assert await client.request("GET", server.url(), None, {}, deadline(1)) == (200, b"hello")
            assert server.closed_by_client == int(case.dropped)
            assert server.connections == case.connections
            assert server.requests[-1].connection == case.connections - 1  # a new one, or the one kept
            await client.close()

    run(body)


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
@pytest.mark.parametrize("cancel", [True, False], ids=["cancelled", "not-cancelled"])
def test_cancel_retrieves_a_failed_answer(run: Run, warm: bool, cancel: bool) -> None:
    def respond(request: Request) -> Reply:
        return Reply(b"NOT HTTP AT ALL\r\n\r\n") if request.target == "/bad" else ok()

    async def body() -> None:
        reports: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reports.append(context))
        async with Server(respond) as server:
            client = BidderClient()
            if warm:
                await client.request("GET", server.url(), None, {}, deadline())
            pending = client.start("GET", server.url("/bad"), None, {}, deadline())
            assert (pending.connection is not None) is warm
            await asyncio.wait([pending.answer])  # failed, not retrieved
            if cancel:
                client.cancel(pending)
            await client.close()  # and forgets the deadline of the answer
            del pending
            gc.collect()
        # cancelled or not, nothing to report: the error is the future's result, not an exception set
        # on it (bidclient._Failure), so no "exception was never retrieved" either way
        assert [report for report in reports if "never retrieved" in report.get("message", "")] == []

    run(body)


HEADER_CASES = [
    # (reply, the X- headers the caller gets)
    (ok(b"{}", "X-Smt-Adtype: Img", "X-Smt-Expires: 1624615200000", "Content-Type: application/json"),
     {"x-smt-adtype": "Img", "x-smt-expires": "1624615200000"}),
    (ok(b"", "x-nbr: 2"), {"x-nbr": "2"}),
    (ok(b"", "X-A: 1", "X-A: 2"), {"x-a": "1, 2"}),  # repeated: joined as one value
    (ok(b"ok"), {}),
    (Reply(b"HTTP/1.1 103 Early Hints\r\nX-Hint: 1\r\n\r\nHTTP/1.1 204 No Content\r\nX-Final: 1\r\n\r\n"),
     {"x-final": "1"}),  # a 1xx answer's headers are not the final answer's
]


@pytest.mark.parametrize(("reply", "expected"), HEADER_CASES, ids=["smaato", "amx", "repeated", "none", "after-1xx"])
def test_x_headers_reach_the_caller(run: Run, reply: Reply, expected: dict[str, str]) -> None:
    """Adapters read bidder-specific answer headers (PBS-Go passes them all): the X- ones are kept, on the
    pending request, for both a started and a finished request, on a new and a reused connection."""

    async def body() -> None:
        async with Server(lambda request: reply) as server:
            client = BidderClient()
            for _ in range(2):
                pending = client.start("POST", server.url("/bid"), b"{}", {}, deadline())
                await client.finish(pending)
                assert dict(pending.response_headers) == expected
            await client.close()

    run(body)
