"""Mock OpenRTB bidders, any number of them in one process: ``python bench/mocks/bidder.py PORT [options]``.

It listens on PORT of every ``--host`` (default 127.0.0.1; 127.0.0.2... are loopback too, so
bidders can be distinct hosts with their own connection pools in the client).

``POST /<name>`` answers an OpenRTB BidResponse with one banner bid (price, crid, w/h, mtype 1,
adm) per banner imp of the request, seat ``<name>``. Per name, options change that:
``--delay NAME=MS`` answers after MS milliseconds, ``--no-bid NAME`` answers 204, ``--hang NAME``
reads the request and never answers (the connection stays open until the client gives up).
``GET /ready`` answers 200. Runs on aiohttp's low-level server with uvloop: no router, no access log.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import uvloop
from aiohttp import web

ADM = (
    '<div class="bench-ad" style="width:{w}px;height:{h}px;overflow:hidden">'
    '<a href="https://{seat}.example/click?crid={crid}" target="_blank">'
    '<img src="https://{seat}.example/creative/{crid}.png" width="{w}" height="{h}" alt="ad"></a>'
    '<img src="https://{seat}.example/imp?crid={crid}" width="1" height="1" style="display:none" alt=""></div>'
)
DEFAULT_SIZE = (300, 250)


@dataclass(frozen=True)
class Behaviour:
    """How one path answers."""

    delay_ms: float = 0.0
    no_bid: bool = False
    hang: bool = False


def seat_price(seat: str) -> float:
    """A stable CPM per seat between 0.50 and 2.49, so seats differ and one wins."""
    return round(0.5 + (zlib.crc32(seat.encode()) % 200) / 100, 2)


def _banner_size(banner: Mapping[str, Any]) -> tuple[int, int]:
    formats = banner.get("format")
    if isinstance(formats, list) and formats and isinstance(formats[0], dict):
        first = formats[0]
        return int(first.get("w") or DEFAULT_SIZE[0]), int(first.get("h") or DEFAULT_SIZE[1])
    return int(banner.get("w") or DEFAULT_SIZE[0]), int(banner.get("h") or DEFAULT_SIZE[1])


def bid_response(seat: str, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The BidResponse for ``request``: one bid per banner imp; None when there is none to bid on."""
    price = seat_price(seat)
    bids = []
    for index, imp in enumerate(request.get("imp") or ()):
        banner = imp.get("banner") if isinstance(imp, dict) else None
        if not isinstance(banner, dict):
            continue
        w, h = _banner_size(banner)
        crid = f"{seat}-{w}x{h}"
        bids.append({
            "id": f"{seat}-{index}",
            "impid": imp.get("id", ""),
            "price": round(price + index * 0.05, 2),
            "crid": crid,
            "w": w,
            "h": h,
            "mtype": 1,
            "adm": ADM.format(seat=seat, crid=crid, w=w, h=h),
            "adomain": [f"{seat}.example"],
        })
    if not bids:
        return None
    return {"id": request.get("id", ""), "cur": "USD", "seatbid": [{"seat": seat, "bid": bids}]}


Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


def make_handler(behaviours: Mapping[str, Behaviour]) -> Handler:
    """The request handler for aiohttp's low-level server."""
    default = Behaviour()

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.path == "/ready":
            return web.Response(text="ok")
        seat = request.path[1:]
        if request.method != "POST" or not seat or "/" in seat:
            return web.Response(status=404)
        body = await request.read()
        behaviour = behaviours.get(seat, default)
        if behaviour.hang:
            await asyncio.get_running_loop().create_future()  # cancelled when the client disconnects
        if behaviour.delay_ms:
            await asyncio.sleep(behaviour.delay_ms / 1000)
        if behaviour.no_bid:
            return web.Response(status=204)
        try:
            bid_request = orjson.loads(body)
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="bad JSON")
        if not isinstance(bid_request, dict):
            return web.Response(status=400, text="not an object")
        answer = bid_response(seat, bid_request)
        if answer is None:
            return web.Response(status=204)
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    return handle


@dataclass(frozen=True)
class Options:
    port: int
    hosts: tuple[str, ...]
    behaviours: Mapping[str, Behaviour]


def parse_args(argv: Sequence[str]) -> Options:
    """The addresses to listen on and the behaviour of every named path."""
    parser = argparse.ArgumentParser(prog="bidder.py", description="mock OpenRTB bidders")
    parser.add_argument("port", type=int)
    parser.add_argument("--host", action="append", default=[], metavar="ADDRESS")
    parser.add_argument("--delay", action="append", default=[], metavar="NAME=MS")
    parser.add_argument("--no-bid", action="append", default=[], metavar="NAME")
    parser.add_argument("--hang", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    delays: dict[str, float] = {}
    for item in args.delay:
        name, _, ms = item.partition("=")
        try:
            delays[name] = float(ms)
        except ValueError:
            parser.error(f"--delay {item!r}: expected NAME=MS")
    names = set(delays) | set(args.no_bid) | set(args.hang)
    behaviours = {
        name: Behaviour(delays.get(name, 0.0), name in args.no_bid, name in args.hang) for name in names
    }
    return Options(args.port, tuple(args.host or ["127.0.0.1"]), behaviours)


async def serve(options: Options) -> None:
    """Serve until SIGTERM or SIGINT."""
    server = web.Server(make_handler(options.behaviours), handler_cancellation=True, access_log=None)
    runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    for host in options.hosts:
        await web.TCPSite(runner, host, options.port, backlog=1024).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    uvloop.run(serve(parse_args(sys.argv[1:] if argv is None else argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
