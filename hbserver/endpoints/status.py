"""GET /status: 200 with ``status_response``, or 204 when it is empty (CONTRACT §2)."""

from __future__ import annotations

from aiohttp import web

from hbserver.appkeys import CONFIG


async def handle_status(request: web.Request) -> web.Response:
    text = request.app[CONFIG].status_response
    if text:
        return web.Response(text=text, content_type="text/plain")
    return web.Response(status=204)
