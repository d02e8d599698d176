"""A Prebid.js long-form video ad unit through s2sConfig gets pod targeting back (issue 45 item 4).

Prebid.js 11.36.0 (the PBS-only bundle of scripts/browser-deps.sh) in headless Chromium. The page's ad
unit is a long-form one as publishers wrote it for Prebid.js's adpod module (``adPodDurationSec``,
``durationRangeSec``, ``requireExactDuration``). Prebid.js removed that module in 11.0, and no version
ever sent those fields to Prebid Server (its ortbConverter copies ORTB video fields only; the adpod
module worked client-side and never saw the durations or categories of server-side bids). So the page
says what the pod needs in Prebid Server's terms, as README "CTV: long-form video from Prebid.js"
describes: ``maxduration`` (or ``rqddurs`` for exact durations) on the imp, and
``ext.prebid.targeting.includebrandcategory`` with ``durationrangesec`` plus ``cache.vastxml``.

hbserver runs five mock OpenRTB bidders (plain http on 127.0.0.1), each exercising one rule of PBS-Go's
category mapping: generic aliases (no duration, so the smallest range; the IAB category translated through
FreeWheel's table) and OMS aliases (the bid's ``dur`` and first ``cat`` as the adapter reports them).
Prebid.js must hold the kept bids with ``hb_pb_cat_dur`` and ``hb_uuid``, and the ad server's fetch of a
pod's VAST, ``<hb_cache_host><hb_cache_path>?uuid=<hb_pb_cat_dur>_<hb_uuid>``, made from the browser with
the targeting Prebid.js holds, must answer each kept bid's VAST.
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig
from tests.e2e.browser.test_prebidjs_auction import PbsTraffic

ACCOUNT = "1001"
AD_UNIT = "preroll-pod"
LONG_FORM = {
    "context": "adpod",
    "playerSize": [640, 480],
    "mimes": ["video/mp4"],
    "protocols": [2, 3, 5, 6],
    "adPodDurationSec": 60,
    "durationRangeSec": [30, 15],
    "requireExactDuration": False,
}
GENERIC, OMS = ("alpha", "kappa", "zeta"), ("beta", "delta")
# seat -> its one bid's price, categories and duration
BIDS: dict[str, dict[str, Any]] = {
    "alpha": {"price": 12.0, "cat": ["IAB1-1"]},  # FreeWheel 404; no duration -> 15s
    "beta": {"price": 10.0, "cat": ["IAB18-1"], "dur": 28},  # the adapter's category as is; 28s -> 30s
    "kappa": {"price": 9.0, "cat": ["IAB1-1"]},  # FreeWheel 404 again: deduplicated, alpha's bucket is higher
    "delta": {"price": 8.0, "cat": ["IAB2-3"], "dur": 45},  # longer than the longest range
    "zeta": {"price": 7.0},  # no category
}
POD_KEYS = {"alpha": "12.00_404_15s", "beta": "10.00_IAB18-1_30s"}
REJECTED = {
    "kappa": "Bid was deduplicated",
    "delta": "bid duration exceeds maximum allowed",
    "zeta": "Bid did not contain a category",
}
EXT_PREBID = {
    "cache": {"vastxml": {}},
    "returnallbidstatus": True,
    "targeting": {"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True},
}
BRAND_CATEGORY = {"primaryadserver": 1, "publisher": "", "withcategory": True, "translatecategories": True}


def vast(seat: str) -> str:
    return (
        f'<VAST version="4.0"><Ad id="{seat}-ad"><InLine><AdSystem>{seat}</AdSystem>'
        f"<AdTitle>{seat} spot</AdTitle><Impression></Impression><Creatives></Creatives></InLine></Ad></VAST>"
    )


def params(seat: str) -> dict[str, Any]:
    return {"pid": f"pod-{seat}"} if seat in OMS else {"zone": seat}


class VideoBidders:
    """``POST /<seat>``: records the request and answers one video bid (``BIDS[seat]``) on the first imp."""

    def __init__(self) -> None:
        self.requests: dict[str, list[dict[str, Any]]] = {seat: [] for seat in BIDS}
        self.app = web.Application()
        self.app.router.add_post("/{seat}", self.bid)

    async def bid(self, request: web.Request) -> web.Response:
        seat = request.match_info["seat"]
        if seat not in BIDS:
            raise web.HTTPNotFound()
        body = json.loads(await request.read())
        self.requests[seat].append(body)
        bid = {"id": f"{seat}-pod", "impid": body["imp"][0]["id"], "crid": f"cr-{seat}", "w": 640, "h": 480,
               "mtype": 2, "adm": vast(seat), "adomain": [f"{seat}.example"], **BIDS[seat]}  # fmt: skip
        return web.json_response({"id": body["id"], "cur": "USD", "seatbid": [{"seat": seat, "bid": [bid]}]})


def adpod_page(pbs: str, bundle: str) -> str:
    """The publisher page: Prebid.js and one long-form ad unit whose pod is said in Prebid Server's terms."""
    s2s = {"accountId": ACCOUNT, "enabled": True, "bidders": sorted(BIDS), "adapter": "prebidServer",
           "timeout": 1500, "endpoint": f"{pbs}/openrtb2/auction"}  # fmt: skip
    ad_unit = {
        "code": AD_UNIT,
        "mediaTypes": {"video": LONG_FORM},
        "bids": [{"bidder": seat, "params": params(seat)} for seat in sorted(BIDS)],
    }
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>prebid.js long-form</title>
<script>
// What Prebid.js's adpod fields ask of Prebid Server (Prebid.js sends none of them itself).
function longFormForServer(adUnit, extPrebid, brandCategory) {{
  var video = adUnit.mediaTypes.video;
  var ranges = video.durationRangeSec.slice().sort(function (a, b) {{ return a - b; }});
  var durations = video.requireExactDuration ? {{rqddurs: ranges}} : {{maxduration: ranges[ranges.length - 1]}};
  adUnit.ortb2Imp = {{video: durations}};
  var ext = JSON.parse(JSON.stringify(extPrebid));
  ext.targeting.durationrangesec = ranges;
  ext.targeting.includebrandcategory = brandCategory;
  return ext;
}}
window.pbjs = window.pbjs || {{que: []}};
window.hbsAuction = null;
pbjs.que.push(function () {{
  var adUnit = {json.dumps(ad_unit)};
  var s2s = {json.dumps(s2s)};
  s2s.extPrebid = longFormForServer(adUnit, {json.dumps(EXT_PREBID)}, {json.dumps(BRAND_CATEGORY)});
  pbjs.setConfig({{bidderTimeout: 3000, s2sConfig: [s2s]}});
  pbjs.addAdUnits([adUnit]);
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
class Session:
    rig: Rig
    page: Any
    bidders: VideoBidders
    traffic: PbsTraffic

    def detail(self) -> str:
        return self.rig.detail() + f"\nhbserver traffic: {[(s.method, s.url, s.status) for s in self.traffic.requests]}"


@contextlib.asynccontextmanager
async def adpod_auction(tmp_path: Path, tls: ssl.SSLContext) -> AsyncIterator[Session]:
    bundle = harness.require_prebidjs()
    bidders = VideoBidders()
    async with harness.serve(bidders.app, None) as port:
        config = {
            "adapters": {
                seat: {"alias_of": "oms" if seat in OMS else "generic", "endpoint": f"http://127.0.0.1:{port}/{seat}"}
                for seat in BIDS
            }
        }
        async with start_rig(tmp_path, tls, config=config, files_dir=bundle.parent) as rig:
            traffic = PbsTraffic(rig.pbs)
            rig.context.on("request", traffic.on_request)
            rig.context.on("response", traffic.on_response)
            page = await rig.open_page(adpod_page(rig.pbs, bundle.name), "adpod")
            session = Session(rig, page, bidders, traffic)
            await harness.wait_for(
                lambda: page.evaluate("() => window.hbsAuction"), "Prebid.js's bidsBackHandler", detail=session.detail
            )
            yield session


async def test_prebidjs_long_form_ad_unit_gets_pod_targeting_and_the_ad_server_fetches_each_vast(tmp_path, tls):
    async with adpod_auction(tmp_path, tls) as session:
        [call] = session.traffic.to("/openrtb2/auction")
        assert call.status == 200, f"{await call.response.text()}\n{session.detail()}"
        request, response = json.loads(call.body or "null"), await call.response.json()

        # What Prebid.js sent: the imp's video with the page's maxduration, none of the long-form fields
        # (Prebid.js drops them), and the pod's rules in ext.prebid.targeting.
        [imp] = request["imp"]
        assert imp["id"] == AD_UNIT and imp["video"]["maxduration"] == 30, imp
        assert (imp["video"]["w"], imp["video"]["h"]) == (640, 480)
        assert not {"adPodDurationSec", "durationRangeSec", "requireExactDuration", "context"} & set(imp["video"])
        targeting_ask = request["ext"]["prebid"]["targeting"]
        assert targeting_ask["includebrandcategory"] == BRAND_CATEGORY and targeting_ask["durationrangesec"] == [15, 30]
        for seat, received in session.bidders.requests.items():
            assert len(received) == 1 and received[0]["imp"][0]["video"]["maxduration"] == 30, (seat, received)

        # hbserver's answer: the kept bids with hb_pb_cat_dur, one hb_uuid for the auction; the others
        # rejected in PBS-Go's words, the one without a category also as seat-non-bid 303.
        served = {seatbid["seat"]: seatbid["bid"] for seatbid in response.get("seatbid", [])}
        assert sorted(served) == sorted(POD_KEYS), response
        uuids = set()
        for seat, [bid] in served.items():
            targeting = bid["ext"]["prebid"]["targeting"]
            assert targeting[f"hb_pb_cat_dur_{seat}"] == POD_KEYS[seat], targeting
            uuids.add(targeting[f"hb_uuid_{seat}"])
        assert len(uuids) == 1, served
        winner = served["alpha"][0]["ext"]["prebid"]["targeting"]
        assert winner["hb_pb_cat_dur"] == POD_KEYS["alpha"] and winner["hb_uuid"] in uuids, winner
        messages = [error["message"] for error in response["ext"]["errors"]["prebid"]]
        for seat, reason in REJECTED.items():
            assert f"bid rejected [bid ID: {seat}-pod] reason: {reason}" in messages, messages
        nonbids = {entry["seat"]: entry["nonbid"] for entry in response["ext"]["prebid"]["seatnonbid"]}
        assert [(n["impid"], n["statuscode"]) for n in nonbids["zeta"]] == [(AD_UNIT, 303)], nonbids

        # What Prebid.js made of it: both bids, video, carrying the pod targeting.
        bids = await session.page.evaluate(
            f"() => JSON.parse(JSON.stringify(pbjs.getBidResponsesForAdUnitCode({json.dumps(AD_UNIT)}).bids))"
        )
        by_seat = {bid["bidderCode"]: bid for bid in bids}
        assert sorted(by_seat) == sorted(POD_KEYS), bids
        cache = f"https://{winner['hb_cache_host']}{winner['hb_cache_path']}"
        for seat, bid in by_seat.items():
            assert bid["mediaType"] == "video" and bid["cpm"] == BIDS[seat]["price"], bid
            assert bid["adserverTargeting"][f"hb_pb_cat_dur_{seat}"] == POD_KEYS[seat], bid["adserverTargeting"]
            assert bid["videoCacheKey"] == bid["adserverTargeting"][f"hb_uuid_{seat}"], bid
            assert bid["vastUrl"] == f"{cache}?uuid={bid['videoCacheKey']}", bid
        page_targeting = (await session.page.evaluate("() => pbjs.getAdserverTargeting()"))[AD_UNIT]
        assert page_targeting["hb_pb_cat_dur"] == POD_KEYS["alpha"], page_targeting
        assert page_targeting["hb_uuid"] == winner["hb_uuid"], page_targeting

        # The ad server's fetch of each pod slot's VAST, from the browser: <hb_pb_cat_dur>_<hb_uuid>.
        fetched = await session.page.evaluate(
            """async ([cache, bids]) => Promise.all(bids.map(async ([seat, t]) => {
                const r = await fetch(cache + '?uuid=' + encodeURIComponent(t['hb_pb_cat_dur_' + seat] + '_'
                                      + t['hb_uuid_' + seat]));
                return [seat, r.status, r.headers.get('content-type'), await r.text()];
            }))""",
            [cache, [[seat, bid["adserverTargeting"]] for seat, bid in sorted(by_seat.items())]],
        )
        for seat, status, content_type, text in fetched:
            assert (status, content_type) == (200, "application/xml"), (seat, status, text, session.detail())
            assert f'<Ad id="{seat}-ad">' in text, (seat, text)
