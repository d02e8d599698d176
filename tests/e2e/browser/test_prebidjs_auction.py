"""Prebid.js from npm against hbserver's POST /openrtb2/auction, in headless Chromium.

A publisher page on page.test loads Prebid.js 11.36.0 (a bundle holding only prebidServerBidAdapter,
built by scripts/browser-deps.sh from the npm package's prebuilt chunks). Its s2sConfig sends one
banner ad unit with two server-side bidders, ``alpha`` and ``beta``, to hbserver on pbs.test, which
runs both as aliases of the generic OpenRTB adapter against mock bidders (plain http on 127.0.0.1)
bidding ``PRICES``. Prebid.js must end up holding both bids with hbserver's hb_ targeting and cached
bids, and rendering the winner with ``pbjs.renderAd`` into an iframe's document must make the browser
call hbserver's ``/event?t=win``, which hbserver records as a win notification.
"""

from __future__ import annotations

import contextlib
import json
import math
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig

ACCOUNT = "1001"
AD_UNIT = "div-banner"
PRICES = {"alpha": 1.5, "beta": 0.9}
PARAMS: dict[str, dict[str, Any]] = {"alpha": {"placementId": "alpha-300x250"}, "beta": {"zone": 7, "site": "news"}}
WIDTH, HEIGHT = 300, 250
EXT_PREBID = {
    "cache": {"bids": {}},
    "targeting": {"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True},
}
TARGETING_KEYS = ("hb_pb", "hb_bidder", "hb_size", "hb_cache_id", "hb_cache_host", "hb_cache_path")


def creative(seat: str) -> str:
    return f'<div id="creative" data-bidder="{seat}">{seat} creative</div>'


def medium_bucket(price: float) -> str:
    """Prebid's "medium" price granularity: $0.10 steps up to $20."""
    return f"{math.floor(min(price, 20.0) * 10 + 1e-9) / 10:.2f}"


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def event_bid_id(bid: dict[str, Any]) -> str:
    """The id /event URLs carry for a bid: the id PBS generated (``ext.prebid.bidid``) if any, else ``bid.id``."""
    return str(bid["ext"]["prebid"].get("bidid") or bid["id"])


def auction_page(pbs: str, bundle: str) -> str:
    """The publisher page: Prebid.js, one banner ad unit, both bidders server-side via hbserver."""
    s2s = {
        "accountId": ACCOUNT,
        "enabled": True,
        "bidders": sorted(PRICES),
        "adapter": "prebidServer",
        "timeout": 1500,
        "endpoint": f"{pbs}/openrtb2/auction",
        "extPrebid": EXT_PREBID,
    }
    ad_unit = {
        "code": AD_UNIT,
        "mediaTypes": {"banner": {"sizes": [[WIDTH, HEIGHT]]}},
        "bids": [{"bidder": seat, "params": PARAMS[seat]} for seat in sorted(PRICES)],
    }
    # Prebid.js's page-level targeting keeps only its default keys unless told otherwise; hb_cache_id is
    # what a publisher using hbserver's bid cache needs in the ad server.
    controls = {"allowTargetingKeys": ["BIDDER", "AD_ID", "PRICE_BUCKET", "SIZE", "FORMAT", "CACHE_ID", "CACHE_HOST"]}
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>prebid.js auction</title>
<script>
window.pbjs = window.pbjs || {{que: []}};
window.hbsAuction = null;
pbjs.que.push(function () {{
  pbjs.setConfig({{bidderTimeout: 3000, s2sConfig: [{json.dumps(s2s)}], targetingControls: {json.dumps(controls)}}});
  pbjs.addAdUnits([{json.dumps(ad_unit)}]);
  pbjs.requestBids({{
    timeout: 3000,
    bidsBackHandler: function (bids, timedOut, auctionId) {{
      window.hbsAuction = {{timedOut: !!timedOut, auctionId: auctionId}};
    }}
  }});
}});
</script>
<script async src="/files/{bundle}"></script>
</head><body><div id="{AD_UNIT}"></div></body></html>"""


@dataclass
class Seen:
    method: str
    url: str
    headers: dict[str, str]
    body: str | None
    status: int | None = None
    response: Any = None


@dataclass
class PbsTraffic:
    """Every request the browser sends to hbserver, with its response."""

    pbs: str
    requests: list[Seen] = field(default_factory=list)
    by_request: dict[int, Seen] = field(default_factory=dict)

    def on_request(self, request: Any) -> None:
        if request.url.startswith(self.pbs + "/"):
            seen = Seen(request.method, request.url, dict(request.headers), request.post_data)
            self.requests.append(seen)
            self.by_request[id(request)] = seen

    def on_response(self, response: Any) -> None:
        seen = self.by_request.get(id(response.request))
        if seen is not None:
            seen.status, seen.response = response.status, response

    def to(self, path: str) -> list[Seen]:
        return [seen for seen in self.requests if urlsplit(seen.url).path == path]


@dataclass
class Session:
    rig: Rig
    page: Any
    bidders: harness.OrtbBidders
    traffic: PbsTraffic
    analytics: Path

    def detail(self) -> str:
        return self.rig.detail() + f"\nhbserver traffic: {[(s.method, s.url, s.status) for s in self.traffic.requests]}"

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        return await self.page.evaluate(script, arg)


@contextlib.asynccontextmanager
async def prebid_auction(tmp_path: Path, tls: ssl.SSLContext) -> AsyncIterator[Session]:
    """Start the mock bidders, hbserver and the browser, load the page, wait for Prebid.js's bidsBackHandler."""
    bundle = harness.require_prebidjs()
    bidders = harness.OrtbBidders(PRICES, creative, WIDTH, HEIGHT)
    analytics = tmp_path / "analytics.jsonl"
    async with harness.serve(bidders.app, None) as bidder_port:
        config = {
            "adapters": {
                seat: {"alias_of": "generic", "endpoint": f"http://127.0.0.1:{bidder_port}/{seat}"} for seat in PRICES
            },
            "analytics": {"file": {"filename": str(analytics)}},
        }
        async with start_rig(tmp_path, tls, config=config, files_dir=bundle.parent) as rig:
            traffic = PbsTraffic(rig.pbs)
            rig.context.on("request", traffic.on_request)
            rig.context.on("response", traffic.on_response)
            page = await rig.open_page(auction_page(rig.pbs, bundle.name), "pbjs")
            session = Session(rig, page, bidders, traffic, analytics)
            await harness.wait_for(
                lambda: page.evaluate("() => window.hbsAuction"), "Prebid.js's bidsBackHandler", detail=session.detail
            )
            yield session


async def auction_exchange(session: Session) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one /openrtb2/auction call: (request body, response body); the response must be a 200."""
    calls = session.traffic.to("/openrtb2/auction")
    assert len(calls) == 1, session.detail()
    [call] = calls
    assert call.method == "POST" and call.body, call
    request = json.loads(call.body)
    assert call.status == 200, f"hbserver answered {call.status}: {await call.response.text()}\n{session.detail()}"
    page_origin = session.rig.page_url("")
    assert call.response.headers.get("access-control-allow-origin") == page_origin
    assert call.response.headers.get("access-control-allow-credentials") == "true"
    return request, await call.response.json()


async def test_prebidjs_sends_its_auction_to_hbserver_which_calls_both_bidders(tmp_path, tls):
    async with prebid_auction(tmp_path, tls) as session:
        version, modules = await session.evaluate("() => [pbjs.version, pbjs.installedModules]")
        assert version == f"v{harness.PBJS_VERSION}"
        assert modules == ["prebidServerBidAdapter"]

        # What Prebid.js sent: a CORS "simple" POST (text/plain) holding our ad unit, params and extPrebid.
        [call] = session.traffic.to("/openrtb2/auction")
        assert call.method == "POST"
        assert call.headers.get("content-type", "").startswith("text/plain"), call.headers
        assert call.headers.get("origin") == session.rig.page_url("")
        request = json.loads(call.body or "null")
        [imp] = request["imp"]
        assert imp["id"] == AD_UNIT
        assert imp["banner"]["format"] == [{"w": WIDTH, "h": HEIGHT}]
        assert imp["ext"]["prebid"]["bidder"] == PARAMS
        assert request["site"]["publisher"]["id"] == ACCOUNT
        assert request["site"]["page"] == session.page.url
        assert request["ext"]["prebid"]["cache"] == EXT_PREBID["cache"]
        assert EXT_PREBID["targeting"].items() <= request["ext"]["prebid"]["targeting"].items()
        assert request["ext"]["prebid"]["channel"] == {"name": "pbjs", "version": version}

        # hbserver called each mock bidder once, with that bidder's params in imp.ext.bidder.
        for seat, received in session.bidders.requests.items():
            assert len(received) == 1, f"{seat}: {received}\n{session.detail()}"
            [bidder_imp] = received[0]["imp"]
            assert bidder_imp["id"] == AD_UNIT
            assert bidder_imp["ext"]["bidder"] == PARAMS[seat]
            assert bidder_imp["banner"]["format"] == [{"w": WIDTH, "h": HEIGHT}]
            assert received[0]["site"]["page"] == session.page.url
            assert 0 < received[0]["tmax"] <= request["tmax"]


async def test_prebidjs_holds_both_bids_with_targeting_and_rendering_the_winner_fires_the_win_event(tmp_path, tls):
    async with prebid_auction(tmp_path, tls) as session:
        rig = session.rig
        _, response = await auction_exchange(session)
        assert (await session.evaluate("() => window.hbsAuction"))["timedOut"] is False
        assert set(response["ext"]["responsetimemillis"]) == set(PRICES), response["ext"]
        winner = max(PRICES, key=PRICES.__getitem__)
        cache_origin = urlsplit(rig.pbs).netloc

        # hbserver's answer: one seatbid per bidder; targeting with the _<bidder> keys on every bid
        # (includebidderkeys) and the plain keys on the winner only (includewinners).
        served: dict[str, dict[str, Any]] = {}
        for seatbid in response["seatbid"]:
            [bid] = seatbid["bid"]
            served[seatbid["seat"]] = bid
        assert set(served) == set(PRICES), response
        for seat, bid in served.items():
            assert bid["impid"] == AD_UNIT and bid["price"] == PRICES[seat] and bid["adm"] == creative(seat)
            targeting = bid["ext"]["prebid"]["targeting"]
            expected = {
                "hb_pb": medium_bucket(PRICES[seat]),
                "hb_bidder": seat,
                "hb_size": f"{WIDTH}x{HEIGHT}",
                "hb_cache_host": cache_origin,
                "hb_cache_path": "/cache",
            }
            for key, value in expected.items():
                assert targeting.get(f"{key}_{seat}") == value, (key, targeting)
            assert targeting.get(f"hb_cache_id_{seat}"), targeting
            if seat == winner:
                assert {k: targeting.get(k) for k in expected} == expected, targeting
                assert targeting.get("hb_cache_id") == targeting[f"hb_cache_id_{seat}"], targeting
            else:
                assert not set(TARGETING_KEYS) & set(targeting), targeting
            win_url = bid["ext"]["prebid"].get("events", {}).get("win", "")
            assert win_url.startswith(f"{rig.pbs}/event?"), bid["ext"]["prebid"]
            expected_query = {"t": "win", "b": event_bid_id(bid), "a": ACCOUNT, "bidder": seat}
            assert expected_query.items() <= query_of(win_url).items(), win_url

        # Each hb_cache_id_<bidder> is a bid that hbserver's /cache serves back.
        async with aiohttp.ClientSession() as http:
            for seat, bid in served.items():
                targeting = bid["ext"]["prebid"]["targeting"]
                url = f"https://127.0.0.1:{rig.pbs_port}{targeting[f'hb_cache_path_{seat}']}"
                async with http.get(url, params={"uuid": targeting[f"hb_cache_id_{seat}"]}, ssl=False) as cached:
                    assert cached.status == 200, await cached.text()
                    cached_bid = json.loads(await cached.read())
                assert cached_bid["adm"] == creative(seat) and cached_bid["price"] == PRICES[seat], cached_bid

        # What Prebid.js made of it: both bids, carrying hbserver's targeting.
        responses = await session.evaluate(
            "() => Object.fromEntries(Object.entries(pbjs.getBidResponses())"
            ".map(([code, r]) => [code, JSON.parse(JSON.stringify(r.bids))]))"
        )
        assert set(responses) == {AD_UNIT}, responses
        bids = {bid["bidderCode"]: bid for bid in responses[AD_UNIT]}
        assert set(bids) == set(PRICES), responses
        for seat, bid in bids.items():
            assert bid["cpm"] == PRICES[seat] and bid["currency"] == "USD"
            assert (bid["width"], bid["height"], bid["mediaType"]) == (WIDTH, HEIGHT, "banner")
            assert bid["source"] == "s2s" and bid["creativeId"] == f"cr-{seat}" and bid["ad"] == creative(seat)
            assert bid.get("pbsBidId") == served[seat]["ext"]["prebid"].get("bidid")  # only when hbserver made one
            assert bid["meta"]["advertiserDomains"] == ["example.com"]
            server_targeting = served[seat]["ext"]["prebid"]["targeting"]
            assert server_targeting.items() <= bid["adserverTargeting"].items(), (server_targeting, bid)

        highest = await session.evaluate(f"() => pbjs.getHighestCpmBids({json.dumps(AD_UNIT)}).map(b => b.adId)")
        assert highest == [bids[winner]["adId"]]
        page_targeting = (await session.evaluate("() => pbjs.getAdserverTargeting()"))[AD_UNIT]
        winner_targeting = served[winner]["ext"]["prebid"]["targeting"]
        assert page_targeting["hb_bidder"] == winner and page_targeting["hb_adid"] == bids[winner]["adId"]
        for key in TARGETING_KEYS:
            assert page_targeting[key] == winner_targeting[key], (key, page_targeting)
        assert session.traffic.to("/event") == [], "a win event before rendering"

        # Render the winner into an iframe's document: the creative shows and the browser calls /event?t=win.
        await session.evaluate(
            """([adId, slot, width, height]) => {
                const frame = document.createElement('iframe');
                frame.id = 'ad-frame'; frame.width = String(width); frame.height = String(height);
                document.getElementById(slot).appendChild(frame);
                pbjs.renderAd(frame.contentDocument, adId);
            }""",
            [bids[winner]["adId"], AD_UNIT, WIDTH, HEIGHT],
        )

        async def rendered() -> str | None:
            for frame in session.page.frames:
                with contextlib.suppress(Exception):
                    shown = await frame.evaluate("() => document.getElementById('creative')?.dataset.bidder || null")
                    if shown:
                        return shown
            return None

        assert await harness.wait_for(rendered, "the creative to render", detail=session.detail) == winner

        async def win_call() -> Seen | None:
            calls = [seen for seen in session.traffic.to("/event") if seen.status is not None]
            return calls[0] if calls else None

        event = await harness.wait_for(win_call, "the browser to call hbserver's /event", detail=session.detail)
        assert event.method == "GET" and event.status == 200, event
        assert event.url == served[winner]["ext"]["prebid"]["events"]["win"]
        query = query_of(event.url)

        # hbserver recorded the win.
        async def win_record() -> dict[str, Any] | None:
            if not session.analytics.exists():
                return None
            for line in session.analytics.read_text().splitlines():
                record = json.loads(line)
                if record["event"] == "notification" and record["type"] == "win":
                    return record
            return None

        record = await harness.wait_for(
            win_record, "a win notification in hbserver's analytics file", detail=session.detail
        )
        assert (record["bidid"], record["account"], record["bidder"]) == (query["b"], ACCOUNT, winner), record
        assert [seen.url for seen in session.traffic.to("/event")] == [event.url], "more than one /event call"
