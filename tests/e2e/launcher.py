"""Runs the real ``hbserver`` command with one extra route, ``/test/slow?s=SECONDS``, so that
tests can hold a request in flight while the process is signalled."""

from __future__ import annotations

import asyncio

from aiohttp import web

from hbserver import app as app_module
from hbserver.cli import main
from hbserver.config import Config
from hbserver.metrics import Metrics
from hbserver.web.endpoint import Routes

_create_app = app_module.create_app


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(float(request.query.get("s", "1")))
    return web.Response(text="done")


def add_slow_route(routes: Routes) -> None:
    routes.add("GET", "/test/slow", slow)


def create_app_with_slow_route(config: Config, metrics: Metrics | None = None) -> web.Application:
    return _create_app(config, metrics, extra_routes=[add_slow_route])


app_module.create_app = create_app_with_slow_route

if __name__ == "__main__":
    raise SystemExit(main())
