"""GET /metrics (``metrics.prometheus.path``): the Prometheus exposition, summed over workers.

The pending hot-path counts are applied here, on the event loop (the only thread that writes
them); reading every worker's files for the exposition is disk work and goes to a thread, which
only reads values. A scrape therefore never loses a count the loop adds while it runs.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from hbserver.appkeys import METRICS


async def handle_metrics(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    metrics.flush()
    if metrics.multiprocess:
        body = await asyncio.to_thread(metrics.expose)
    else:
        body = metrics.expose()
    response = web.Response(body=body)
    response.headers["Content-Type"] = metrics.content_type
    return response
