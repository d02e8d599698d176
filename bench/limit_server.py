"""The limit experiment (issue 22, item 2): the least a server can do for the AMP scenario's I/O.

``python bench/limit_server.py --port PORT --config hbserver.yaml`` answers the ``amp`` scenario's
``GET /openrtb2/amp?tag_id=…`` as cheaply as this architecture allows (aiohttp + uvloop, hbserver's
own bidder client and memory cache store, hbserver's GC tuning), with the same I/O as the real
endpoint and nothing else:

- the query parsed (tag_id, w, h, slot, curl, timeout, __amp_source_origin);
- the stored request taken from a dict (the config's stored-requests directory, read at start);
- one OpenRTB request per bidder of the stored imp (its own params), each sent over one shared
  :class:`~hbserver.web.bidclient.BidderClient` to the endpoint the config gives that bidder, all
  started before any answer is awaited (as the exchange does), with the AMP deadline (timeout -
  ``amp.timeout_adjustment_ms`` - ``cache.expected_millis``);
- the answers decoded, the top bid picked, that bid put in a :class:`~hbserver.stores.cache.memory.MemoryStore`;
- a small ``{"targeting": {"hb_pb", "hb_bidder", "hb_size", "hb_cache_id"}}`` answer with the AMP
  CORS headers.

No validation, privacy, floors, currency, metrics or analytics: its CPU ratio to hello-world is the
practical ceiling the real endpoint is compared with (the bench prints them side by side).
``GET /status`` answers 200 for the harness's readiness poll.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import uvloop
from aiohttp import web

from hbserver.auction.response.pricegranularity import GRANULARITY_MEDIUM
from hbserver.auction.response.pricegranularity import price_bucket as granularity_bucket
from hbserver.config import Config, load_config
from hbserver.server import tune_gc
from hbserver.stores.cache.base import CacheItem
from hbserver.stores.cache.memory import MemoryStore
from hbserver.web.bidclient import BidderClient

SOURCE_ORIGIN_HEADER = "AMP-Access-Control-Allow-Source-Origin"
BID_HEADERS: Mapping[str, str] = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
CACHE_TTL_SECONDS = 300
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
DEFAULT_SIZE = (300, 250)


@dataclass(frozen=True)
class Limits:
    """What the server needs from the scenario's config."""

    endpoints: Mapping[str, str]  # bidder code -> URL
    stored: Mapping[str, Mapping[str, Any]]  # tag_id -> stored request
    default_timeout_ms: int
    adjustment_ms: int
    expected_cache_ms: int
    cache_bytes: int

    @classmethod
    def from_config(cls, config: Config) -> Limits:
        """Bidder endpoints and stored requests (``<directorypath>/stored_requests/*.json``) of ``config``."""
        directory = Path(config.stored_requests.filesystem.directorypath) / "stored_requests"
        stored = {path.stem: orjson.loads(path.read_bytes()) for path in sorted(directory.glob("*.json"))}
        endpoints = {code: adapter.endpoint for code, adapter in config.adapters.items() if adapter.endpoint}
        return cls(endpoints, stored, config.amp.default_timeout_ms, config.amp.timeout_adjustment_ms,
                   config.cache.expected_millis, config.cache.memory.max_bytes)  # fmt: skip


def price_bucket(price: float) -> str:
    """Prebid's "medium" granularity (0.10 steps up to 20), hbserver's own bucket function."""
    return granularity_bucket(price, GRANULARITY_MEDIUM)


class LimitServer:
    """The AMP handler and the resources it shares across requests."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.client = BidderClient(max_response_bytes=MAX_RESPONSE_BYTES)
        self.store = MemoryStore(limits.cache_bytes)

    async def amp(self, request: web.Request) -> web.Response:
        query = request.query
        origin = query.get("__amp_source_origin") or request.headers.get("Origin", "")
        stored = self.limits.stored.get(query.get("tag_id", ""))
        if stored is None:
            return _amp_answer(web.Response(status=400, text="Invalid request: unknown tag_id"), origin)
        limits = self.limits
        timeout = min(int(query.get("timeout") or limits.default_timeout_ms), limits.default_timeout_ms)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout - limits.adjustment_ms - limits.expected_cache_ms) / 1000
        size = (int(query.get("w") or DEFAULT_SIZE[0]), int(query.get("h") or DEFAULT_SIZE[1]))
        imp = stored["imp"][0]
        site = {**stored.get("site", {}), "page": query.get("curl", "")}
        pending = []
        for code, params in imp["ext"]["prebid"]["bidder"].items():
            url = limits.endpoints.get(code)
            if url is None:
                continue
            body = orjson.dumps({
                "id": stored.get("id", ""),
                "imp": [{"id": imp["id"], "banner": {"format": [{"w": size[0], "h": size[1]}]},
                         "tagid": query.get("slot", ""), "secure": 1, "ext": {"bidder": params}}],
                "site": site,
                "device": {"ua": request.headers.get("User-Agent", ""), "ip": request.remote or ""},
                "tmax": timeout,
            })  # fmt: skip
            pending.append((code, self.client.start("POST", url, body, BID_HEADERS, deadline)))
        top: tuple[float, str, Any] | None = None
        for code, sent in pending:
            try:
                status, raw, _ = await self.client.finish(sent)
            except (OSError, ValueError):  # timeouts and connection errors: no bid from that bidder
                continue
            if status != 200:
                continue
            for seatbid in orjson.loads(raw).get("seatbid") or ():
                for bid in seatbid.get("bid") or ():
                    price = bid.get("price") or 0.0
                    if top is None or price > top[0]:
                        top = (price, code, bid)
        targeting: dict[str, str] = {}
        if top is not None:
            price, code, bid = top
            (key,) = self.store.put_many_now([CacheItem("json", orjson.dumps(bid), CACHE_TTL_SECONDS)])
            targeting = {
                "hb_pb": price_bucket(price),
                "hb_bidder": code,
                "hb_size": f"{bid.get('w', size[0])}x{bid.get('h', size[1])}",
                "hb_cache_id": key,
            }
        answer = web.Response(body=orjson.dumps({"targeting": targeting}), content_type="application/json")
        return _amp_answer(answer, origin)

    async def status(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def lifetime(self, app: web.Application) -> AsyncIterator[None]:
        yield
        await self.client.close()
        await self.store.close()


def _amp_answer(response: web.Response, origin: str) -> web.Response:
    response.headers[SOURCE_ORIGIN_HEADER] = origin
    response.headers["Access-Control-Expose-Headers"] = SOURCE_ORIGIN_HEADER
    return response


LIMIT_SERVER = web.AppKey("limit_server", LimitServer)


def create_app(limits: Limits) -> web.Application:
    """The application: ``GET /openrtb2/amp`` and ``GET /status``."""
    server = LimitServer(limits)
    app = web.Application()
    app[LIMIT_SERVER] = server
    app.router.add_get("/openrtb2/amp", server.amp)
    app.router.add_get("/status", server.status)
    app.cleanup_ctx.append(server.lifetime)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="limit_server.py", description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--config", required=True, help="the scenario's hbserver YAML (bidders, stored requests)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    app = create_app(Limits.from_config(load_config(args.config, environ={})))
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    tune_gc()
    web.run_app(app, host=args.host, port=args.port, access_log=None, print=None, loop=loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
