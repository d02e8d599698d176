"""hbserver.web.response.FastResponse: what web.Response would leave and send, byte for byte."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.web_response import StreamResponse

from hbserver.web.response import FastResponse
from tests.web_helpers import connection_served

_DATE = re.compile(rb"\r\nDate: [^\r]*\r\n")

CONSTRUCTIONS: list[dict[str, Any]] = [
    {},
    {"status": 404},
    {"status": 204},
    {"status": 304},
    {"status": 599},  # no standard reason
    {"body": b"x" * 10, "content_type": "image/png"},
    {"body": b"{}", "content_type": "application/json", "charset": "utf-8"},
    {"body": b""},
    {"body": b"raw bytes"},  # no content type: application/octet-stream is added
    {"text": "hello"},
    {"text": ""},
    {"text": "h\u00e9", "status": 400, "content_type": "text/plain", "charset": "utf-8"},
    {"text": "<p>", "content_type": "text/html"},
    {"content_type": "text/html"},
    {"body": b"y" * 5000, "content_type": "text/plain"},  # past the Content-Length lines made once
]


async def _answers(reader: asyncio.StreamReader, count: int, head: bool) -> bytes:
    """``count`` answers as received (fewer when the server closes first)."""
    received = b""
    for _ in range(count):
        try:
            top = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            return received + exc.partial
        received += top
        status = int(top.split(b" ", 2)[1])
        length = re.search(rb"\r\nContent-Length: (\d+)\r\n", top)
        if head or status in (204, 304):
            continue
        if length is None:  # to the end of the connection
            return received + await reader.read()
        received += await reader.readexactly(int(length.group(1)))
    return received


@pytest.mark.parametrize("kwargs", CONSTRUCTIONS)
def test_the_constructor_leaves_what_web_response_leaves(kwargs):
    fast, plain = FastResponse(**kwargs), web.Response(**kwargs)
    names = set(vars(fast)) | set(vars(plain)) | {"_keep_alive", "_chunked", "_compression", "_cookies", "_req"}
    assert {name: getattr(fast, name) for name in names} == {name: getattr(plain, name) for name in names}
    assert list(fast.headers.items()) == list(plain.headers.items())
    assert (fast.status, fast.reason, fast.body, fast.content_length) == (
        plain.status, plain.reason, plain.body, plain.content_length,
    )


def test_body_and_text_together_are_refused_as_aiohttp_refuses_them():
    with pytest.raises(ValueError, match="body and text"):
        FastResponse(body=b"x", text="y")


def _headers_case(response: web.Response) -> None:
    response.headers["X-Prebid"] = "hbserver/1"
    response.headers["Set-Cookie"] = "uids=abc; Path=/; SameSite=None; Secure; HttpOnly"
    response.headers["Cache-Control"] = "no-store"


def _cookie_case(response: web.Response) -> None:
    response.set_cookie("a", "b", max_age=10)  # aiohttp's own path


def _connection_case(response: web.Response) -> None:
    response.headers["Connection"] = "close"


def _date_case(response: web.Response) -> None:
    response.headers["Date"] = "Thu, 01 Jan 1970 00:00:00 GMT"
    response.headers["Server"] = "mine"


def _force_close_case(response: web.Response) -> None:
    response.force_close()


def _bad_header_case(response: web.Response) -> None:
    response.headers["X-Bad"] = "a\nb"


EDITS: dict[str, Callable[[web.Response], None]] = {
    "none": lambda response: None,
    "headers": _headers_case,
    "cookie": _cookie_case,
    "connection": _connection_case,
    "date": _date_case,
    "force_close": _force_close_case,
}

REQUESTS = {
    "get": b"GET /r HTTP/1.1\r\nHost: x\r\n\r\n",
    "head": b"HEAD /r HTTP/1.1\r\nHost: x\r\n\r\n",
    "post": b"POST /r HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
    "close": b"GET /r HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    "http10": b"GET /r HTTP/1.0\r\nHost: x\r\n\r\n",
    "http10_keep_alive": b"GET /r HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
}


async def _exchange(aiohttp_server: Any, cls: type[web.Response], kwargs: dict[str, Any],
                    edit: Callable[[web.Response], None], request: bytes, times: int = 1,
                    plain_routes: bool = False) -> bytes:
    """``request`` sent ``times`` on one connection to a ``GET``/``POST``/``HEAD /r`` answering ``cls(**kwargs)``.
    ``plain_routes``: served by hbserver's ConnectionRunner, which sends a plain FastResponse from the
    connection (FastResponse.send_at_once); else by aiohttp's own server, which calls prepare()."""
    async def handler(_: web.Request) -> web.Response:
        response = cls(**kwargs)
        edit(response)
        return response

    app = web.Application()
    if plain_routes:
        app.router.add_get("/r", handler)
        app.router.add_post("/r", handler)
        async with connection_served(app) as port:
            received = await _received("127.0.0.1", port, request, times)
    else:
        app.router.add_route("*", "/r", handler)
        server = await aiohttp_server(app)
        received = await _received(server.host, server.port, request, times)
    return _DATE.sub(b"\r\nDate: -\r\n", received)


async def _received(host: str, port: int, request: bytes, times: int) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request * times)
        return await asyncio.wait_for(_answers(reader, times, request.startswith(b"HEAD")), 5)
    finally:
        writer.close()


# Every construction with every request; every edit with a few constructions and requests.
WIRE_CASES = [(kwargs, "none", name) for kwargs in CONSTRUCTIONS for name in REQUESTS] + [
    (kwargs, edit, name)
    for kwargs in (CONSTRUCTIONS[0], CONSTRUCTIONS[2], CONSTRUCTIONS[5], CONSTRUCTIONS[9])
    for edit in list(EDITS)[1:]
    for name in ("get", "head", "close", "http10")
]


@pytest.mark.parametrize("plain_routes", [False, True], ids=["prepare", "sent-at-once"])
@pytest.mark.parametrize(("kwargs", "edit", "request_name"), WIRE_CASES)
async def test_the_wire_bytes_are_web_responses(aiohttp_server, kwargs, edit, request_name, plain_routes):
    request = REQUESTS[request_name]
    times = 1 if request_name in ("close", "http10") else 2  # a kept-alive connection answers both
    fast = await _exchange(aiohttp_server, FastResponse, kwargs, EDITS[edit], request, times, plain_routes)
    plain = await _exchange(aiohttp_server, web.Response, kwargs, EDITS[edit], request, times)
    assert fast == plain and fast.startswith(b"HTTP/1.")


async def test_a_forbidden_header_character_fails_as_it_does_in_aiohttp(aiohttp_server):
    fast = await _exchange(aiohttp_server, FastResponse, {"text": "x"}, _bad_header_case, REQUESTS["get"])
    plain = await _exchange(aiohttp_server, web.Response, {"text": "x"}, _bad_header_case, REQUESTS["get"])
    assert fast == plain == b""


async def test_the_plain_case_skips_aiohttps_chain(aiohttp_server, monkeypatch):
    started: list[StreamResponse] = []
    original = StreamResponse._start

    async def counting_start(self: StreamResponse, request: web.BaseRequest) -> Any:
        started.append(self)
        return await original(self, request)

    monkeypatch.setattr(StreamResponse, "_start", counting_start)
    answer = await _exchange(aiohttp_server, FastResponse, {"text": "ok"}, _headers_case, REQUESTS["get"], 3)
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 3 and not started
    await _exchange(aiohttp_server, FastResponse, {"text": "ok"}, _headers_case, REQUESTS["head"])
    assert len(started) == 1  # HEAD goes through aiohttp
    answer = await _exchange(aiohttp_server, FastResponse, {"status": 204}, _headers_case, REQUESTS["get"], 2)
    assert answer.count(b"HTTP/1.1 204 No Content\r\n") == 2 and b"Content-Length" not in answer
    assert len(started) == 1  # a 204 without a body (GET /status) is sent without the chain too
    await _exchange(aiohttp_server, FastResponse, {"status": 304}, _headers_case, REQUESTS["get"])
    assert len(started) == 2  # other empty-body statuses go through aiohttp


async def _get(aiohttp_server: Any, handler: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A server whose ``GET /r`` is ``handler``, and a raw connection that has sent that request."""
    app = web.Application()
    app.router.add_get("/r", handler)
    server = await aiohttp_server(app)
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(b"GET /r HTTP/1.1\r\nHost: x\r\n\r\n")
    return reader, writer


async def test_prepare_then_write_eof_by_hand_and_a_second_prepare(aiohttp_server):
    async def handler(request: web.Request) -> web.StreamResponse:
        response = FastResponse(body=b"abc", content_type="text/plain")
        writer = await response.prepare(request)
        assert response.prepared and writer is request.writer
        assert await response.prepare(request) is writer  # as StreamResponse.prepare answers again
        await response.write_eof()
        assert await response.prepare(request) is None
        await response.write_eof()  # a second write_eof does nothing
        assert response.body_length == len(b"abc") + response.body_length - 3 > 3
        return response

    reader, writer = await _get(aiohttp_server, handler)
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 3\r\n" in head
    assert await reader.readexactly(3) == b"abc"
    writer.close()


async def test_a_closed_transport_is_a_connection_error(aiohttp_server):
    outcome: list[BaseException] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        response = FastResponse(text="late")
        await response.prepare(request)
        assert request.transport is not None
        request.transport.close()
        try:
            await response.write_eof()
        except ConnectionError as exc:
            outcome.append(exc)
        return response

    reader, writer = await _get(aiohttp_server, handler)
    assert await reader.read() == b""
    writer.close()
    assert len(outcome) == 1


async def test_a_closed_transport_on_a_plain_route_is_a_client_gone_not_an_error(caplog):
    async def handler(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.close()
        return FastResponse(text="late")

    app = web.Application()
    app.router.add_get("/r", handler)
    async with connection_served(app) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /r HTTP/1.1\r\nHost: x\r\n\r\n")
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
