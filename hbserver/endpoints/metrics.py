"""GET /metrics (``metrics.prometheus.path``): the Prometheus exposition, summed over workers."""

from __future__ import annotations

import asyncio

from aiohttp import web

from hbserver.appkeys import METRICS


async def handle_metrics(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    if metrics.multiprocess:
        # Reading every worker's files is disk work: keep it off the event loop.
        body, content_type = await asyncio.to_thread(metrics.render)
    else:
        body, content_type = metrics.render()
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response
