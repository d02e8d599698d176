"""Prebid.js with its TCF consent module and a CMP stub against hbserver, in headless Chromium (issue 18).

A publisher page on page.test has a TCF v2.2 CMP stub (``window.__tcfapi`` answering ``ping``,
``getTCData`` and ``addEventListener`` with ``gdprApplies: true``, ``eventStatus: 'tcloaded'``) and
loads Prebid.js 11.36.0 built with ``prebidServerBidAdapter`` and ``consentManagementTcf`` (not
``tcfControl``: it would drop bidders in the browser and hide what the server does). Prebid.js reads
the consent from the CMP and sends it to hbserver (``regs.ext.gdpr``, ``user.ext.consent``) with two
server-side bidders, aliases of the generic adapter with GVL vendor ids 32 and 52, each pointing at
a mock OpenRTB bidder on 127.0.0.1.

hbserver enforces TCF as PBS-Go does; with no Global Vendor List file that is "basic" enforcement:
a bidder is called only with consent to purpose 2 and vendor consent for its id. A bidder it does
not call gets the "blocked by privacy settings" warning; a bidder it calls receives the consent
string and gdpr=1. The TC strings are built with the project's own encoder (tests/privacy).
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser import harness
from tests.e2e.browser.rig import Rig, start_rig
from tests.e2e.browser.test_prebidjs_auction import PbsTraffic, Seen
from tests.privacy.tcf_encoder import CoreSegment

# Prebid.js with prebidServerBidAdapter and consentManagementTcf, built by scripts/browser-deps.sh.
TCF_BUNDLE = harness.ROOT / ".cache" / "npm" / f"prebid-{harness.PBJS_VERSION}-pbs-tcf.js"
TCF_MODULES = ["prebidServerBidAdapter", "consentManagementTcf"]
ACCOUNT = "1001"
AD_UNIT = "div-consent"
WIDTH, HEIGHT = 300, 250
VENDOR_IDS = {"alpha": 32, "beta": 52}  # GVL ids of the two server-side bidders
PRICES = {"alpha": 1.2, "beta": 0.8}
PARAMS: dict[str, dict[str, Any]] = {"alpha": {"placementId": "alpha-consent"}, "beta": {"zone": 52}}
BLOCKED_BY_PRIVACY = 10017  # PBS-Go's errortypes.BidderBlockedByPrivacySettings
CMP_TIMEOUT_MS = 2000


def require_tcf_bundle() -> Path:
    harness.require(
        TCF_BUNDLE.is_file(), f"the Prebid.js {harness.PBJS_VERSION} TCF bundle {TCF_BUNDLE} has not been built"
    )
    return TCF_BUNDLE


def creative(seat: str) -> str:
    return f'<div id="creative" data-bidder="{seat}">{seat} creative</div>'


@dataclass(frozen=True)
class Case:
    """What the user consented to, and which bidders hbserver must then call."""

    purposes: tuple[int, ...]
    vendors: tuple[int, ...]
    called: frozenset[str]

    @property
    def blocked(self) -> frozenset[str]:
        return frozenset(VENDOR_IDS) - self.called

    def tc_string(self) -> str:
        return CoreSegment(purposes=list(self.purposes), vendors=list(self.vendors)).encode()


CASES = {
    # Purposes 1,2,3,4,7 with vendor consent for 32 only: 52 has no vendor consent and is not called.
    "vendor_consent_for_32_only_calls_only_its_bidder": Case((1, 2, 3, 4, 7), (32,), frozenset({"alpha"})),
    # Purpose 1 only: without purpose 2 (basic ads) no bidder may be called, whatever the vendor consent.
    "purpose_1_only_calls_no_bidder": Case((1,), (32, 52), frozenset()),
    # Purposes 1,2,3,4,7 with vendor consent for both: both are called.
    "consent_for_both_vendors_calls_both_bidders": Case((1, 2, 3, 4, 7), (32, 52), frozenset({"alpha", "beta"})),
}


def tc_data(case: Case, tc_string: str) -> dict[str, Any]:
    """The CMP's TCData (TCF v2.2 CMP API) for ``case``."""
    return {
        "tcString": tc_string,
        "tcfPolicyVersion": 4,
        "cmpId": 31,
        "cmpVersion": 640,
        "gdprApplies": True,
        "eventStatus": "tcloaded",
        "cmpStatus": "loaded",
        "listenerId": 1,
        "isServiceSpecific": True,
        "useNonStandardTexts": False,
        "publisherCC": "DE",
        "purposeOneTreatment": False,
        "purpose": {"consents": {str(p): True for p in case.purposes}, "legitimateInterests": {}},
        "vendor": {"consents": {str(v): True for v in case.vendors}, "legitimateInterests": {}},
        "specialFeatureOptins": {},
        "publisher": {"consents": {}, "legitimateInterests": {}, "customPurpose": {}, "restrictions": {}},
    }


def cmp_stub(data: dict[str, Any]) -> str:
    """A minimal TCF v2.2 CMP: ``window.__tcfapi`` answering at once with ``data``; calls are recorded."""
    return f"""window.hbsCmpCalls = [];
window.__tcfapi = function (command, version, callback, parameter) {{
  window.hbsCmpCalls.push(command);
  var data = {json.dumps(data)};
  if (command === 'ping') {{
    callback({{gdprApplies: true, cmpLoaded: true, cmpStatus: 'loaded', displayStatus: 'hidden',
               apiVersion: '2.2', cmpVersion: 640, cmpId: 31, gvlVersion: 126, tcfPolicyVersion: 4}}, true);
  }} else if (command === 'getTCData' || command === 'addEventListener') {{
    callback(data, true);
  }} else if (command === 'removeEventListener') {{
    callback(true);
  }} else {{
    callback(null, false);
  }}
}};"""


def consent_page(pbs: str, bundle: str, data: dict[str, Any]) -> str:
    """The publisher page: the CMP stub, then Prebid.js reading it and sending both bidders to hbserver."""
    s2s = {
        "accountId": ACCOUNT,
        "enabled": True,
        "bidders": sorted(VENDOR_IDS),
        "adapter": "prebidServer",
        "timeout": 1500,
        "endpoint": f"{pbs}/openrtb2/auction",
    }
    ad_unit = {
        "code": AD_UNIT,
        "mediaTypes": {"banner": {"sizes": [[WIDTH, HEIGHT]]}},
        "bids": [{"bidder": seat, "params": PARAMS[seat]} for seat in sorted(VENDOR_IDS)],
    }
    consent = {"gdpr": {"cmpApi": "iab", "timeout": CMP_TIMEOUT_MS, "defaultGdprScope": True}}
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>prebid.js tcf</title>
<script>{cmp_stub(data)}</script>
<script>
window.pbjs = window.pbjs || {{que: []}};
window.hbsAuction = null;
pbjs.que.push(function () {{
  pbjs.setConfig({{bidderTimeout: 3000, consentManagement: {json.dumps(consent)}, s2sConfig: [{json.dumps(s2s)}]}});
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
class TcfSession:
    rig: Rig
    page: Any
    bidders: harness.OrtbBidders
    traffic: PbsTraffic

    def detail(self) -> str:
        return self.rig.detail() + f"\nhbserver traffic: {[(s.method, s.url, s.status) for s in self.traffic.requests]}"


@contextlib.asynccontextmanager
async def tcf_auction(tmp_path: Path, tls: ssl.SSLContext, data: dict[str, Any]) -> AsyncIterator[TcfSession]:
    """Mock bidders, hbserver (GDPR on, no vendor list) and the browser; waits for the bidsBackHandler."""
    bundle = require_tcf_bundle()
    bidders = harness.OrtbBidders(PRICES, creative, WIDTH, HEIGHT)
    async with harness.serve(bidders.app, None) as bidder_port:
        config = {
            "gdpr": {"enabled": True, "vendorlist_file": ""},
            "adapters": {
                seat: {
                    "alias_of": "generic",
                    "endpoint": f"http://127.0.0.1:{bidder_port}/{seat}",
                    "gvl_vendor_id": vendor_id,
                }
                for seat, vendor_id in VENDOR_IDS.items()
            },
        }
        async with start_rig(tmp_path, tls, config=config, files_dir=bundle.parent) as rig:
            traffic = PbsTraffic(rig.pbs)
            rig.context.on("request", traffic.on_request)
            rig.context.on("response", traffic.on_response)
            page = await rig.open_page(consent_page(rig.pbs, bundle.name, data), "pbjs-tcf")
            session = TcfSession(rig, page, bidders, traffic)
            await harness.wait_for(
                lambda: page.evaluate("() => window.hbsAuction"), "Prebid.js's bidsBackHandler", detail=session.detail
            )
            yield session


def gdpr_signal(request: dict[str, Any]) -> Any:
    """regs.gdpr (OpenRTB 2.6) or regs.ext.gdpr (2.5), whichever the request carries."""
    regs = request.get("regs") or {}
    return regs.get("gdpr", (regs.get("ext") or {}).get("gdpr"))


def consent_string(request: dict[str, Any]) -> Any:
    """user.consent (OpenRTB 2.6) or user.ext.consent (2.5), whichever the request carries."""
    user = request.get("user") or {}
    return user.get("consent", (user.get("ext") or {}).get("consent"))


def privacy_warnings(response: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, message) of every "blocked by privacy" warning in hbserver's ext.warnings."""
    found: list[tuple[str, str]] = []
    for key, items in ((response.get("ext") or {}).get("warnings") or {}).items():
        for item in items:
            if item.get("code") == BLOCKED_BY_PRIVACY or "blocked by privacy settings" in item.get("message", ""):
                found.append((key, item.get("message", "")))
    return found


async def auction_call(session: TcfSession) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one POST /openrtb2/auction: (request body, response body); hbserver must answer 200."""
    calls: list[Seen] = session.traffic.to("/openrtb2/auction")
    assert len(calls) == 1, session.detail()
    [call] = calls
    assert call.method == "POST" and call.body, call
    assert call.status == 200, f"hbserver answered {call.status}: {await call.response.text()}\n{session.detail()}"
    return json.loads(call.body), await call.response.json()


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_prebidjs_tcf_consent_decides_which_bidders_hbserver_calls(tmp_path, tls, case):
    tc_string = case.tc_string()
    async with tcf_auction(tmp_path, tls, tc_data(case, tc_string)) as session:
        version, modules = await session.page.evaluate("() => [pbjs.version, pbjs.installedModules]")
        assert version == f"v{harness.PBJS_VERSION}"
        assert sorted(modules) == sorted(TCF_MODULES), modules  # no tcfControl: nothing is blocked in the browser
        cmp_calls = await session.page.evaluate("() => window.hbsCmpCalls")
        assert "addEventListener" in cmp_calls or "getTCData" in cmp_calls, cmp_calls

        # Prebid.js took the consent from the CMP and sent it, and both bidders, to hbserver.
        request, response = await auction_call(session)
        assert gdpr_signal(request) == 1, request.get("regs")
        assert consent_string(request) == tc_string, request.get("user")
        assert sorted(request["imp"][0]["ext"]["prebid"]["bidder"]) == sorted(VENDOR_IDS)

        # hbserver called exactly the consented bidders, each once, with the consent and gdpr=1.
        called = {seat for seat, received in session.bidders.requests.items() if received}
        assert called == case.called, f"called {sorted(called)}, expected {sorted(case.called)}\n{session.detail()}"
        for seat in case.called:
            [received] = session.bidders.requests[seat]
            assert gdpr_signal(received) == 1, (seat, received.get("regs"))
            assert consent_string(received) == tc_string, (seat, received.get("user"))
            assert received["imp"][0]["ext"]["bidder"] == PARAMS[seat]

        # A bidder hbserver did not call is named in a "blocked by privacy settings" warning; no other is.
        warned = privacy_warnings(response)
        for seat in case.blocked:
            assert any(seat == key or f'"{seat}"' in message for key, message in warned), (seat, response.get("ext"))
        assert len(warned) == len(case.blocked), warned

        # What came back to Prebid.js: a bid from each called bidder only.
        responses = await session.page.evaluate(
            "() => Object.fromEntries(Object.entries(pbjs.getBidResponses())"
            ".map(([code, r]) => [code, r.bids.map(b => b.bidderCode)]))"
        )
        assert sorted(responses.get(AD_UNIT, [])) == sorted(case.called), responses
