"""hbserver.web.connection.Connection.start: aiohttp's request loop without a task per request.

Each row sends raw bytes over one kept-alive connection to a real ConnectionRunner and checks what
comes back; the last test pins the aiohttp code the loop follows, so an upgrade is reviewed.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from hbserver.logsetup import REQUEST_ID
from hbserver.web.connection import Connection
from hbserver.web.response import FastResponse
from tests.web_helpers import connection_served

# sha256 of aiohttp 3.14's RequestHandler.data_received, which Connection.data_received follows.
AIOHTTP_DATA_RECEIVED_SHA256 = "1ee57ebe052e6c80ced26c96e4ccb1223172e1d55afba460353c5e414914d3f6"
# sha256 of aiohttp 3.14's RequestHandler._handle_request, which Connection._handle_plain follows.
AIOHTTP_HANDLE_REQUEST_SHA256 = "a88a34ee65a2714c6b392d23963ba9a80e7d50d4889905cd949a94d479102d8f"
# sha256 of aiohttp 3.14's RequestHandler.start, which Connection.start follows. A new aiohttp with
# another loop must be read before this is updated: what did it add (a check, a metric, a fix)?
AIOHTTP_START_SHA256 = "2e565fd40c8e04fb3afb481d5ba52691a61d28396573b4b8a4cf3b168782288e"


async def _task_name(request: web.Request) -> web.Response:
    task = asyncio.current_task()
    return web.Response(text=f"{id(task)} {REQUEST_ID.get()}")


async def _set_request_id(request: web.Request) -> web.Response:
    REQUEST_ID.set("set-by-a-handler")
    return web.Response(text="set")


async def _ignores_body(request: web.Request) -> web.Response:
    return web.Response(text="ignored")


async def _echo_body(request: web.Request) -> web.Response:
    return web.Response(body=await request.read())


async def _fails(request: web.Request) -> web.Response:
    raise RuntimeError("a handler bug")


async def _fast(request: web.Request) -> web.Response:
    response = FastResponse(text="fast answer", content_type="text/plain")
    response.headers["X-Extra"] = "1"
    return response


async def _redirects(request: web.Request) -> web.Response:
    raise web.HTTPFound("/elsewhere")


async def _times_out(request: web.Request) -> web.Response:
    raise TimeoutError


@pytest.fixture
async def port() -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get("/task", _task_name)
    app.router.add_get("/set", _set_request_id)
    app.router.add_post("/ignore", _ignores_body)
    app.router.add_post("/echo", _echo_body)
    app.router.add_get("/fail", _fails)
    app.router.add_get("/fast", _fast)
    app.router.add_get("/redirect", _redirects)
    app.router.add_get("/slow", _times_out)
    async with connection_served(app) as port:
        yield port


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode()


def _post(path: str, body: bytes) -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


async def _answers(port: int, data: bytes, count: int) -> list[tuple[int, bytes]]:
    """Send ``data`` at once (pipelined requests) and read ``count`` answers: (status, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        answers = []
        for _ in range(count):
            status = int((await reader.readline()).split()[1])
            length = 0
            while (line := await reader.readline()) != b"\r\n":
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            answers.append((status, await reader.readexactly(length)))
        return answers
    finally:
        writer.close()


async def test_requests_on_one_connection_are_served_in_the_connections_task(port):
    (_, first), (_, second) = await asyncio.wait_for(_answers(port, _get("/task") + _get("/task"), 2), 10)
    assert first.split()[0] == second.split()[0]  # one task, not one per request (aiohttp on 3.11)


async def test_a_context_variable_a_handler_sets_stays_with_its_connection_only(port):
    answers = await asyncio.wait_for(_answers(port, _get("/set") + _get("/task"), 2), 10)
    assert answers[1][1].split()[1] == b"set-by-a-handler"  # what the loop shares: each request sets its own
    (_, other), = await asyncio.wait_for(_answers(port, _get("/task"), 1), 10)
    assert other.split()[1] == b"None"  # another connection starts from the server's context


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (_post("/ignore", b"x" * 70000) + _get("/task"), [(200, b"ignored"), (200, None)]),  # unread body skipped
        (_post("/echo", b"abc") + _post("/echo", b"defg"), [(200, b"abc"), (200, b"defg")]),
        (_get("/fail") + _get("/task"), [(500, None)]),  # aiohttp's 500, then the connection closes
        (b"GET /task HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n", [(400, None)]),  # the parser's refusal
    ],
    ids=["unread-body", "pipelined-bodies", "handler-error", "bad-request"],
)
async def test_each_request_on_a_connection_is_answered_in_order(port, data, expected):
    answers = await asyncio.wait_for(_answers(port, data, len(expected)), 10)
    for (status, body), (want_status, want_body) in zip(answers, expected, strict=True):
        assert status == want_status
        if want_body is not None:
            assert body == want_body


async def _exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` (its last request says Connection: close) and read everything until the close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


def _without_date(answer: bytes) -> bytes:
    return b"\r\n".join(line for line in answer.split(b"\r\n") if not line.startswith(b"Date: "))


# Plain routes are served from the connection (Connection._handle_plain); a target that is not
# written as the route's path (percent-escapes, an absolute form) reaches the same handler through
# aiohttp's routing, so both answers must be the same bytes.
@pytest.mark.parametrize(
    ("plain", "routed"),
    [
        ("GET /fast HTTP/1.1", "GET /f%61st HTTP/1.1"),
        ("HEAD /fast HTTP/1.1", "HEAD /f%61st HTTP/1.1"),  # HEAD: aiohttp's path in both (no body)
        ("GET /fast?x=1 HTTP/1.1", "GET http://t/fast?x=1 HTTP/1.1"),
        ("GET /redirect HTTP/1.1", "GET /redirec%74 HTTP/1.1"),  # an HTTPException out of the handler
        ("GET /slow HTTP/1.1", "GET /sl%6fw HTTP/1.1"),  # a TimeoutError out of the handler: 504
        ("GET /fast HTTP/1.0", "GET /f%61st HTTP/1.0"),  # HTTP/1.0 always takes aiohttp's path
    ],
)
async def test_a_plain_route_answers_as_aiohttps_routing_does(port, plain, routed):
    close = "Host: t\r\nConnection: close\r\n\r\n"
    first = await _exchange(port, f"{plain}\r\n{close}".encode())
    second = await _exchange(port, f"{routed}\r\n{close}".encode())
    assert first.startswith(b"HTTP/1.")
    assert _without_date(first) == _without_date(second)


async def test_only_a_target_written_as_a_plain_routes_path_skips_aiohttps_request_handling(port, monkeypatch):
    handled: list[str] = []
    original = RequestHandler._handle_request

    async def spy(self, request, *args):
        handled.append(request.path)
        return await original(self, request, *args)

    monkeypatch.setattr(Connection, "_handle_request", spy)
    close = "Host: t\r\nConnection: close\r\n\r\n"
    for target in ("/fast", "/fast?x=1", "/f%61st", "/nowhere"):
        await _exchange(port, f"GET {target} HTTP/1.1\r\n{close}".encode())
    assert handled == ["/fast", "/nowhere"]  # the percent-escaped one (its path decoded) and the unknown one


def test_the_aiohttp_reading_followed_is_the_installed_one():
    source = inspect.getsource(RequestHandler.data_received)
    assert hashlib.sha256(source.encode()).hexdigest() == AIOHTTP_DATA_RECEIVED_SHA256, (
        "aiohttp's RequestHandler.data_received changed: carry what changed into Connection.data_received, "
        "then update the hash"
    )


def test_the_aiohttp_request_handling_followed_is_the_installed_one():
    source = inspect.getsource(RequestHandler._handle_request)
    assert hashlib.sha256(source.encode()).hexdigest() == AIOHTTP_HANDLE_REQUEST_SHA256, (
        "aiohttp's RequestHandler._handle_request changed: carry what changed into Connection._handle_plain, "
        "then update the hash"
    )


def test_the_aiohttp_loop_followed_is_the_installed_one():
    source = inspect.getsource(RequestHandler.start)
    assert hashlib.sha256(source.encode()).hexdigest() == AIOHTTP_START_SHA256, (
        "aiohttp's RequestHandler.start changed: carry what changed into Connection.start, then update the hash"
    )
