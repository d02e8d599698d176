"""hbserver.web.dispatch: plain routes handed to their handler as aiohttp would route them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.web.dispatch import fast_request_handler, plain_route_table
from tests.web_helpers import connection_served


def _named(name: str) -> Any:
    async def handler(request: web.Request) -> web.Response:
        info = request.match_info
        assert request.app is info.apps[-1] and info.route.handler is handler and dict(info) == request.match_info
        return web.Response(text=f"{name} {request.method} {dict(info)}")

    return handler


def _app() -> web.Application:
    app = web.Application()
    app.router.add_get("/a", _named("a"))
    app.router.add_post("/a", _named("a-post"))
    app.router.add_post("/b", _named("b"))
    app.router.add_get("/x", _named("x"))  # so that the next /b is a resource of its own
    app.router.add_route("*", "/b", _named("b-any"))  # a second resource: shadowed for POST, takes the rest
    app.router.add_route("*", "/c", _named("c-any"))
    app.router.add_get("/y", _named("y"))
    app.router.add_get("/c", _named("c-get"))  # a second resource after an any-route: never reached
    app.router.add_get("/d/{x}", _named("d"))
    app.router.add_route("*", "/{tail:.*}", _named("fallback"))
    return app


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, web.Application]]:
    app = _app()
    async with connection_served(app) as port:
        yield f"http://127.0.0.1:{port}", app


def test_the_table_holds_what_aiohttp_would_pick_first():
    app = _app()
    app.freeze()
    table = plain_route_table(app)
    assert table is not None
    assert {method: sorted(paths) for method, paths in table.items()} == {
        "GET": ["/a", "/x", "/y"], "HEAD": ["/a", "/x", "/y"], "POST": ["/a", "/b"],
    }
    handler, info = table["POST"]["/b"]
    assert info.route.handler is handler and info.apps == (app,)


def test_applications_with_middlewares_keep_aiohttps_path():
    @web.middleware
    async def passing(request: web.Request, handler: Any) -> web.StreamResponse:
        return await handler(request)

    app = web.Application(middlewares=[passing])
    app.router.add_get("/a", _named("a"))
    app.freeze()
    fallback = app._handle
    assert plain_route_table(app) is None and fast_request_handler(app, fallback) is fallback


@pytest.mark.parametrize(
    ("method", "path", "headers", "answer"),
    [
        ("GET", "/a", {}, "a GET {}"),
        ("HEAD", "/a", {}, ""),
        ("POST", "/a", {}, "a-post POST {}"),
        ("PUT", "/a", {}, "fallback PUT {'tail': 'a'}"),  # no such route on /a: aiohttp's walk goes on
        ("POST", "/b", {}, "b POST {}"),
        ("DELETE", "/b", {}, "b-any DELETE {}"),
        ("GET", "/c", {}, "c-any GET {}"),
        ("GET", "/d/7", {}, "d GET {'x': '7'}"),
        ("GET", "/elsewhere", {}, "fallback GET {'tail': 'elsewhere'}"),
        ("POST", "/a", {"Expect": "100-continue"}, "a-post POST {}"),
    ],
)
async def test_answers_are_those_of_aiohttps_routing(served, method, path, headers, answer):
    base, _ = served
    plain = TestServer(_app(), port=0)
    await plain.start_server()
    data = b"x" if method == "POST" else None
    try:
        async with aiohttp.ClientSession() as session:
            for url in (base + path, str(plain.make_url(path))):  # ours, then aiohttp's own routing
                async with session.request(method, url, headers=headers, data=data) as got:
                    assert got.status == 200 and await got.text() == answer
    finally:
        await plain.close()


async def test_the_plain_routes_skip_the_routers_resolve(served, monkeypatch):
    base, app = served
    calls: list[str] = []
    original = type(app.router).resolve

    async def counting(self: Any, request: web.Request) -> Any:
        calls.append(request.path)
        return await original(self, request)

    monkeypatch.setattr(type(app.router), "resolve", counting)
    async with aiohttp.ClientSession() as session:
        for path in ("/a", "/a", "/elsewhere"):
            async with session.get(base + path) as got:
                await got.read()
    assert calls == ["/elsewhere"]
