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

from hbserver.config import HttpTimeouts
from hbserver.logsetup import REQUEST_ID
from hbserver.web.connection import ConnectionLimits, ConnectionRunner

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


@pytest.fixture
async def port() -> AsyncIterator[int]:
    app = web.Application()
    app.router.add_get("/task", _task_name)
    app.router.add_get("/set", _set_request_id)
    app.router.add_post("/ignore", _ignores_body)
    app.router.add_post("/echo", _echo_body)
    app.router.add_get("/fail", _fails)
    runner = ConnectionRunner(app, ConnectionLimits.from_config(HttpTimeouts()), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


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


def test_the_aiohttp_loop_followed_is_the_installed_one():
    source = inspect.getsource(RequestHandler.start)
    assert hashlib.sha256(source.encode()).hexdigest() == AIOHTTP_START_SHA256, (
        "aiohttp's RequestHandler.start changed: carry what changed into Connection.start, then update the hash"
    )
