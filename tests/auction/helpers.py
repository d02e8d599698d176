"""Mock bidders on a real socket and request builders shared by the auction and AMP tests."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

EXTERNAL = "http://pbs.example"


class MockBidders:
    """One aiohttp server answering POST /<name> with bids set per test; records what it got."""

    def __init__(self) -> None:
        self.bids: dict[str, list[dict[str, Any]]] = {}
        self.delay: dict[str, float] = {}
        self.status: dict[str, int] = {}
        self.currency: dict[str, str] = {}
        self.set_cookie: dict[str, str] = {}
        self.answer_ext: dict[str, dict[str, Any]] = {}  # a bidder's answer's top-level ext
        self.received: dict[str, list[dict[str, Any]]] = {}
        self.headers: dict[str, list[dict[str, str]]] = {}
        app = web.Application()
        app.router.add_post("/{name}", self.handle)
        self.server = TestServer(app)

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = await request.json()
        self.received.setdefault(name, []).append(body)
        self.headers.setdefault(name, []).append(dict(request.headers))
        if name in self.delay:
            await asyncio.sleep(self.delay[name])
        status = self.status.get(name, 200)
        bids = self.bids.get(name)
        if status != 200 or bids is None:
            return web.Response(status=204 if status == 200 else status)
        seatbid = [{"seat": name, "bid": bids}]
        answer = {"id": body["id"], "seatbid": seatbid, "cur": self.currency.get(name, "USD")}
        if name in self.answer_ext:
            answer["ext"] = self.answer_ext[name]
        response = web.json_response(answer)
        if name in self.set_cookie:
            response.set_cookie("bidder_uid", self.set_cookie[name])
        return response

    def url(self, name: str) -> str:
        return str(self.server.make_url(f"/{name}"))


def bidder_config(mock: MockBidders, *names: str, **extra: Any) -> dict[str, Any]:
    adapters = {name: {"alias_of": "generic", "endpoint": mock.url(name), **extra.get(name, {})} for name in names}
    return {"adapters": adapters, "external_url": EXTERNAL}


def banner_imp(imp_id: str = "imp-1", **bidders: Any) -> dict[str, Any]:
    return {
        "id": imp_id,
        "banner": {"format": [{"w": 300, "h": 250}, {"w": 300, "h": 600}]},
        "ext": {"prebid": {"bidder": bidders or {"alpha": {"placement": 1}}}},
    }


def bid(imp_id: str, price: float, bid_id: str = "b1", **fields: Any) -> dict[str, Any]:
    return {
        "id": bid_id,
        "impid": imp_id,
        "price": price,
        "crid": "cr-" + bid_id,
        "w": 300,
        "h": 250,
        "adm": f"<div>{bid_id}</div>",
        "mtype": 1,
        **fields,
    }


def auction_request(**fields: Any) -> dict[str, Any]:
    """A web auction request for imp-1 (alpha's banner) of account 1001; ``fields`` replace its top-level keys."""
    request: dict[str, Any] = {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("imp-1")],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": {}},
    }
    request.update(fields)
    return request
