"""The reference server: a bare aiohttp + uvloop hello-world (``python bench/baseline.py PORT``).

It answers GET /hello with ``ok`` and does nothing else: no access log, no middleware. The
ratio of a scenario's requests/s to this server's is the figure the targets are set on.
"""

from __future__ import annotations

import asyncio
import sys

import uvloop
from aiohttp import web


async def hello(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        sys.stderr.write("usage: baseline.py PORT\n")
        return 2
    app = web.Application()
    app.router.add_get("/hello", hello)
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    web.run_app(app, host="127.0.0.1", port=int(args[0]), access_log=None, print=None, loop=loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
