"""Serving a test application the way hbserver's workers do (ConnectionRunner's Connection protocols)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from hbserver.config import HttpTimeouts
from hbserver.web.connection import ConnectionLimits, ConnectionRunner


@asynccontextmanager
async def connection_served(app: web.Application) -> AsyncIterator[int]:
    """``app`` served by a ConnectionRunner with the default timeouts on 127.0.0.1; yields its port."""
    runner = ConnectionRunner(app, ConnectionLimits.from_config(HttpTimeouts()), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()
