"""Runs the real ``hbserver`` command with one extra route, ``/test/slow?s=SECONDS``, so that
tests can hold a request in flight while the process is signalled.

Nothing that imports prometheus-client is imported here before the server decides its metrics
mode: the route is added inside each worker, just before the application is built.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

import hbserver.server as server_module
from hbserver.cli import main
from hbserver.config import Config

_run_worker = server_module.run_worker


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(float(request.query.get("s", "1")))
    return web.Response(text="done")


def run_worker_with_slow_route(config: Config) -> int:
    from hbserver import app as app_module

    create_app = app_module.create_app

    def create_app_with_slow_route(config: Config, metrics: object = None) -> web.Application:
        return create_app(config, metrics, extra_routes=[lambda routes: routes.add("GET", "/test/slow", slow)])

    app_module.create_app = create_app_with_slow_route
    return _run_worker(config)


server_module.run_worker = run_worker_with_slow_route

if __name__ == "__main__":
    raise SystemExit(main())
