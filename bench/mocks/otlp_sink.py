"""A loopback OTLP/HTTP receiver for the traced bench scenario: ``python bench/mocks/otlp_sink.py PORT``.

``POST /v1/traces`` reads the body and answers 200 ``{}`` (an ExportTraceServiceResponse with nothing
rejected); ``GET /ready`` answers 200. On SIGTERM it logs how many spans it received (counted from
``"spanId"`` occurrences, so JSON is never parsed on the client CPU).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from aiohttp import web

log = logging.getLogger("otlp_sink")


def make_app() -> web.Application:
    received = {"spans": 0, "batches": 0}

    async def traces(request: web.Request) -> web.Response:
        body = await request.read()
        received["batches"] += 1
        received["spans"] += body.count(b'"spanId"')
        return web.json_response({})

    async def ready(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def report(_app: web.Application) -> None:
        log.warning("otlp sink: %(spans)d spans in %(batches)d batches", received)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/traces", traces)
    app.router.add_get("/ready", ready)
    app.on_shutdown.append(report)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].isdigit():
        sys.stderr.write("usage: otlp_sink.py PORT\n")
        return 2
    logging.basicConfig(level=logging.WARNING)
    web.run_app(make_app(), host="127.0.0.1", port=int(args[0]), print=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
