"""Prebid.js's TCF consent read against the vendor list version it names, in headless Chromium (issue 39).

The page's CMP stub (test_prebidjs_tcf.py) answers a TCF v2.2 consent string naming Global Vendor
List version ``NAMED`` (140), with consent to purposes 1-4, 7 and to both server-side bidders' vendors
(alpha: GVL id 32, beta: 52). hbserver enforces every purpose "full" (the default), so a bidder is
called only when its vendor *declares* purpose 2 in the list the consent is read against:

- the fallback list ``gdpr.vendorlist_file`` is version ``FALLBACK`` (100): 32 declares purposes
  1-4, 7 and 52 only purpose 1, so it allows alpha alone;
- version 140, served only by a loopback archive under ``gdpr.vendorlist.v3.http_endpoint_template``:
  32 declares only purpose 1 and 52 purposes 1-4, 7, so it allows beta alone.

The first auction names a version hbserver has not loaded: it is read against the fallback (the
auction never waits; ``privacy_tcf_vendorlist{result="fallback"}``) and starts the fetch. Once
``privacy_tcf_vendorlist{result="ok"}`` says version 140 is loaded, the same page in a new tab calls
beta only. Nothing leaves 127.0.0.1 (hbserver/privacy/vendorlists.py; README "Vendor list by version").
"""

from __future__ import annotations

import contextlib
import json
import re
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig
from tests.e2e.browser.test_prebidjs_auction import PbsTraffic
from tests.e2e.browser.test_prebidjs_tcf import (
    AD_UNIT,
    HEIGHT,
    PARAMS,
    PRICES,
    VENDOR_IDS,
    WIDTH,
    Case,
    TcfSession,
    auction_call,
    consent_page,
    consent_string,
    creative,
    privacy_warnings,
    require_tcf_bundle,
    tc_data,
)
from tests.privacy.tcf_encoder import CoreSegment

FALLBACK, NAMED = 100, 140
PURPOSES = (1, 2, 3, 4, 7)
ALL_ADS = list(PURPOSES)  # a vendor declaring these may be called under full enforcement
STORAGE_ONLY = [1]  # a vendor declaring only purpose 1 may not (purpose 2, basic ads, is missing)
ALPHA, BETA = VENDOR_IDS["alpha"], VENDOR_IDS["beta"]
# The vendors' purpose declarations in each list: the two lists allow opposite bidders.
DECLARED = {FALLBACK: {ALPHA: ALL_ADS, BETA: STORAGE_ONLY}, NAMED: {ALPHA: STORAGE_ONLY, BETA: ALL_ADS}}
CALLED_UNDER = {FALLBACK: frozenset({"alpha"}), NAMED: frozenset({"beta"})}


def gvl_document(version: int) -> dict[str, Any]:
    vendors = {str(v): {"id": v, "purposes": p, "specialFeatures": [1]} for v, p in DECLARED[version].items()}
    return {"gvlSpecificationVersion": 3, "vendorListVersion": version, "vendors": vendors}


class Archive:
    """A loopback GVL v3 archive answering ``/v3/vendor-list-v<n>.json`` for version ``NAMED`` only."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.serve)

    async def serve(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        if request.path != f"/v3/vendor-list-v{NAMED}.json":
            raise web.HTTPNotFound()
        return web.json_response(gvl_document(NAMED))


def vendorlist_metric(text: str, result: str) -> float:
    """``privacy_tcf_vendorlist{result=..., spec="v3"}`` in Prometheus text (0 when absent)."""
    found = re.search(rf'^hbserver_privacy_tcf_vendorlist\{{result="{result}",spec="v3"\}} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


async def metrics_text(rig: Rig) -> str:
    async with aiohttp.ClientSession() as client:
        async with client.get(f"https://127.0.0.1:{rig.pbs_port}/metrics", ssl=False) as response:
            assert response.status == 200, response.status
            return await response.text()


@dataclass
class Auction:
    """One Prebid.js auction: hbserver's request and response, and the bidders Prebid.js got bids from."""

    session: TcfSession
    request: dict[str, Any]
    response: dict[str, Any]
    bids: list[str]


@dataclass
class VendorListRig:
    rig: Rig
    bundle: str
    bidders: harness.OrtbBidders
    archive: Archive

    async def auction(self, tc_string: str) -> Auction:
        """Prebid.js in a new tab with the CMP answering ``tc_string``, until its bidsBackHandler; the
        mock bidders' records are emptied first."""
        for received in self.bidders.requests.values():
            received.clear()
        rig, traffic = self.rig, PbsTraffic(self.rig.pbs)
        rig.context.on("request", traffic.on_request)
        rig.context.on("response", traffic.on_response)
        try:
            case = Case(PURPOSES, (ALPHA, BETA), frozenset())
            page = await rig.open_page(consent_page(rig.pbs, self.bundle, tc_data(case, tc_string)), "pbjs-gvl")
            session = TcfSession(rig, page, self.bidders, traffic)
            await harness.wait_for(
                lambda: page.evaluate("() => window.hbsAuction"), "Prebid.js's bidsBackHandler", detail=session.detail
            )
            request, response = await auction_call(session)
            bids = await page.evaluate(
                "(code) => (pbjs.getBidResponses()[code] || {bids: []}).bids.map(b => b.bidderCode)", AD_UNIT
            )
        finally:
            rig.context.remove_listener("request", traffic.on_request)
            rig.context.remove_listener("response", traffic.on_response)
        await page.close()
        return Auction(session, request, response, bids)


@contextlib.asynccontextmanager
async def vendorlist_rig(tmp_path: Path, tls: ssl.SSLContext) -> AsyncIterator[VendorListRig]:
    """hbserver with the fallback list file and the loopback archive's template, mock bidders, Chromium."""
    bundle = require_tcf_bundle()
    fallback = tmp_path / f"vendor-list-v{FALLBACK}.json"
    fallback.write_text(json.dumps(gvl_document(FALLBACK)))
    bidders, archive = harness.OrtbBidders(PRICES, creative, WIDTH, HEIGHT), Archive()
    async with contextlib.AsyncExitStack() as stack:
        bidder_port = await stack.enter_async_context(harness.serve(bidders.app, None))
        archive_port = await stack.enter_async_context(harness.serve(archive.app, None))
        template = f"http://127.0.0.1:{archive_port}/v3/vendor-list-v{{VERSION}}.json"
        config = {
            "gdpr": {
                "enabled": True,
                "vendorlist_file": str(fallback),
                "vendorlist": {"v2": {"http_endpoint_template": ""}, "v3": {"http_endpoint_template": template}},
            },
            "adapters": {
                seat: {"alias_of": "generic", "endpoint": f"http://127.0.0.1:{bidder_port}/{seat}", "gvl_vendor_id": v}
                for seat, v in VENDOR_IDS.items()
            },
        }
        rig = await stack.enter_async_context(start_rig(tmp_path, tls, config=config, files_dir=bundle.parent))
        yield VendorListRig(rig, bundle.name, bidders, archive)


def called_bidders(session: TcfSession) -> set[str]:
    return {seat for seat, received in session.bidders.requests.items() if received}


def assert_called(auction: Auction, tc_string: str, expected: frozenset[str]) -> None:
    """Prebid.js sent the consent; hbserver called exactly ``expected`` (once each, with the consent),
    warned of the others, and Prebid.js got bids from ``expected`` only."""
    session, response = auction.session, auction.response
    assert consent_string(auction.request) == tc_string, auction.request.get("user")
    called = called_bidders(session)
    assert called == expected, f"called {sorted(called)}, expected {sorted(expected)}\n{session.detail()}"
    for seat in expected:
        [received] = session.bidders.requests[seat]
        assert consent_string(received) == tc_string, (seat, received.get("user"))
        assert received["imp"][0]["ext"]["bidder"] == PARAMS[seat]
    warned = privacy_warnings(response)
    for seat in frozenset(VENDOR_IDS) - expected:
        assert any(seat == key or f'"{seat}"' in message for key, message in warned), (seat, response.get("ext"))
    assert len(warned) == len(VENDOR_IDS) - len(expected), warned
    assert sorted(auction.bids) == sorted(expected), auction.bids


async def test_prebidjs_consent_is_read_against_the_vendor_list_version_it_names(tmp_path, tls):
    tc_string = CoreSegment(
        vendor_list_version=NAMED, purposes=list(PURPOSES), special_features=[1], vendors=[ALPHA, BETA]
    ).encode()
    async with vendorlist_rig(tmp_path, tls) as gvl:
        assert gvl.archive.hits == []  # nothing is fetched at start-up

        # Cold: version 140 is not loaded, so this auction is read against the fallback (version 100),
        # which allows alpha only; it starts the fetch of version 140 and does not wait for it.
        assert_called(await gvl.auction(tc_string), tc_string, CALLED_UNDER[FALLBACK])

        # The fetch of version 140 from the loopback archive, and nothing else.
        async def loaded() -> str | None:
            text = await metrics_text(gvl.rig)
            return text if vendorlist_metric(text, "ok") >= 1 else None

        text = await harness.wait_for(loaded, "GVL version 140 to be loaded", detail=gvl.rig.detail)
        assert vendorlist_metric(text, "fallback") == 1, text
        assert vendorlist_metric(text, "err") == vendorlist_metric(text, "missing") == 0, text
        assert gvl.archive.hits == [f"/v3/vendor-list-v{NAMED}.json"]

        # Warm: the same consent, now read against version 140, calls beta only.
        assert_called(await gvl.auction(tc_string), tc_string, CALLED_UNDER[NAMED])
        text = await metrics_text(gvl.rig)
        assert vendorlist_metric(text, "fallback") == 1 and vendorlist_metric(text, "ok") == 1, text
        assert gvl.archive.hits == [f"/v3/vendor-list-v{NAMED}.json"]  # fetched once
