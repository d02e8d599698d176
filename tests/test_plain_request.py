"""hbserver.web.plain_request: the same request aiohttp's application makes, attribute by attribute."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.web_request import BaseRequest

from tests.web_helpers import connection_served

# sha256 of aiohttp 3.14's BaseRequest.__init__, whose plain case plain_request() follows. A new aiohttp
# with other attributes must be read before this is updated.
AIOHTTP_REQUEST_INIT_SHA256 = "dae5bbed7d90f1ddc82eaf8fa9b9a521cb58cb34fc9f42f5658e0717c675c034"
SKIPPED = {"_cache", "_state", "_match_info"}  # fresh dicts (compared by value); set when dispatched


def _attributes(request: web.BaseRequest) -> dict[str, Any]:
    return {name: getattr(request, name, "<unset>") for name in sorted(request.ATTRS) if name not in SKIPPED}


@pytest.fixture
async def seen() -> AsyncIterator[tuple[list[Any], int]]:
    """A ConnectionRunner whose GET /r (a plain route) keeps its request, what aiohttp's own factory makes
    of the same message, and both's attributes as the handler sees them."""
    kept: list[Any] = []
    app = web.Application(client_max_size=12345)

    async def handler(request: web.Request) -> web.Response:
        reference = app._make_request(request._message, request._payload, request._protocol,
                                      request._payload_writer, request._task)
        kept.extend([request, reference, _attributes(request), _attributes(reference)])
        return web.Response(text="ok")

    app.router.add_get("/r", handler)
    async with connection_served(app) as port:
        yield kept, port


@pytest.mark.parametrize("target", ["/r", "/r?a=1&b=2"])
async def test_a_plain_routes_request_is_the_one_aiohttp_makes(seen, target):
    kept, port = seen
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".encode())
    assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 200 OK")
    writer.close()
    plain, reference, plain_attributes, reference_attributes = kept
    assert type(plain) is type(reference) is web.Request
    assert plain_attributes == reference_attributes
    assert plain._state == {} and plain._client_max_size == 12345
    assert plain.remote == reference.remote and plain.host == reference.host and plain.url == reference.url


def test_the_aiohttp_request_constructor_followed_is_the_installed_one():
    source = inspect.getsource(BaseRequest.__init__)
    assert hashlib.sha256(source.encode()).hexdigest() == AIOHTTP_REQUEST_INIT_SHA256, (
        "aiohttp's BaseRequest.__init__ changed: carry what changed into hbserver.web.plain_request, then update "
        "the hash"
    )
