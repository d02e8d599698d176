"""What bidders see, as PBS-Go shows it to them (issue 42 item 3).

Each row names the PBS-Go file and function it carries over. The end-to-end rows run the real app
in-process against mock bidders on 127.0.0.1 and read what those bidders received.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from hbserver import SERVER_HEADER_VALUE
from hbserver.adapters.base import BidderResponse, RequestData, TypedBid
from hbserver.auction.bids.native_types import add_native_types
from hbserver.auction.exchange.fanout import HttpCall
from hbserver.auction.exchange.server_ext import compose_x_prebid, server_ext, x_prebid
from hbserver.auction.exchange.split import _SharedExt
from tests.auction.helpers import EXTERNAL, banner_imp, bid, bidder_config

S = SERVER_HEADER_VALUE


# -- ext.prebid.server ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        pytest.param(("", 0, ""), None, id="exchange.go HoldAuction: config.Server.Empty leaves it out"),
        pytest.param(
            ("http://pbs.example", 0, ""),
            {"externalurl": "http://pbs.example", "gvlid": 0, "datacenter": ""},
            id="exchange.go HoldAuction: external_url alone",
        ),
        pytest.param(("", 0, "eu-1"), {"externalurl": "", "gvlid": 0, "datacenter": "eu-1"}, id="datacenter alone"),
        pytest.param(("", 7, ""), {"externalurl": "", "gvlid": 7, "datacenter": ""}, id="host_vendor_id alone"),
        pytest.param(
            ("http://pbs.example/", 15, "us-east"),
            {"externalurl": "http://pbs.example/", "gvlid": 15, "datacenter": "us-east"},
            id="exchange.go NewExchange: cfg.ExternalURL as configured (no trailing slash cut)",
        ),
    ],
)
def test_server_ext(host: tuple[str, int, str], expected: dict[str, Any] | None) -> None:
    assert server_ext(*host) == expected


HOST = {"externalurl": "http://pbs.example", "gvlid": 15, "datacenter": "dc"}


@pytest.mark.parametrize(
    ("prebid", "host", "expected"),
    [
        pytest.param({}, HOST, {"server": HOST}, id="utils.go buildRequestExtForBidder: the host's on every bidder"),
        pytest.param(
            {"server": {"externalurl": "x", "gvlid": 1, "datacenter": "y"}}, HOST, {"server": HOST},
            id="exchange.go HoldAuction: the host's replaces the request's",
        ),
        pytest.param(
            {"server": {"externalurl": "x", "gvlid": 1, "datacenter": "y"}}, None,
            {"server": {"externalurl": "x", "gvlid": 1, "datacenter": "y"}},
            id="utils.go buildRequestExtForBidder: an empty host config passes the request's through",
        ),
        pytest.param({"targeting": {}}, None, None, id="nothing for bidders: no ext.prebid"),
    ],
)  # fmt: skip
def test_bidder_ext_prebid_server(
    prebid: dict[str, Any], host: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    ext = _SharedExt({"prebid": prebid}, prebid, host).for_bidder("alpha", {})
    assert ext.get("prebid") == expected


async def test_every_bidder_request_has_the_server_ext(make_client, bidders) -> None:
    """exchange.go HoldAuction + utils.go buildRequestExtForBidder, end to end."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    config = {**bidder_config(bidders, "alpha", "beta"), "gdpr": {"host_vendor_id": 15}, "datacenter": "eu-west"}
    client = await make_client(config)
    request = _auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}))
    request["ext"]["prebid"]["server"] = {"externalurl": "http://spoofed", "gvlid": 1, "datacenter": "x"}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    want = {"externalurl": EXTERNAL, "gvlid": 15, "datacenter": "eu-west"}
    for name in ("alpha", "beta"):
        assert bidders.received[name][0]["ext"]["prebid"]["server"] == want, name


# -- X-Prebid ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_fields", "expected"),
    [
        pytest.param({}, S, id="xprebidheader.go BuildXPrebidHeaderForRequest: pbs"),
        pytest.param(
            {"ext": {"prebid": {"channel": {"name": "pbjs", "version": "8.1.0"}}}}, f"{S},pbjs/8.1.0",
            id="xprebidheader.go: prebid.js",
        ),
        pytest.param(
            {"ext": {"prebid": {"channel": {"name": "pbjs"}}}}, f"{S},pbjs/unknown",
            id="xprebidheader.go writeNameVersionRecord: unknown prebid.js",
        ),
        pytest.param(
            {"ext": {"prebid": {"channel": {"version": "1"}}}}, S, id="xprebidheader.go: channel without a name",
        ),
        pytest.param(
            {"app": {"ext": {"prebid": {"source": "prebid-mobile", "version": "2.2.1"}}}},
            f"{S},prebid-mobile/2.2.1",
            id="xprebidheader.go: prebid-mobile",
        ),
        pytest.param(
            {"app": {"ext": {"prebid": {"version": "2.2.1"}}}}, S, id="xprebidheader.go: app ext without a source",
        ),
        pytest.param(
            {
                "ext": {"prebid": {"channel": {"name": "pbjs", "version": "p"}}},
                "app": {"ext": {"prebid": {"source": "prebid-mobile", "version": "m"}}},
            },
            f"{S},pbjs/p,prebid-mobile/m",
            id="xprebidheader.go: version found in both req.Ext and req.App.Ext",
        ),
        pytest.param(
            {"ext": {"prebid": {"channel": {"name": "amp", "version": ""}}}}, f"{S},amp/unknown",
            id="amp_auction.go: the AMP channel (empty version)",
        ),
        pytest.param(
            {"app": {"ext": {"prebid": {"source": 5, "version": "m"}}}}, S,
            id="xprebidheader.go: GetAppExt fails on a source that is not a string",
        ),
    ],
)  # fmt: skip
def test_x_prebid(request_fields: dict[str, Any], expected: str) -> None:
    assert x_prebid(request_fields) == expected
    assert x_prebid(request_fields) is x_prebid(request_fields)  # composed once per client version


@pytest.mark.parametrize(
    ("server", "parts", "expected"),
    [
        pytest.param("pbs-go/0.100.0", (), "pbs-go/0.100.0", id="xprebidheader.go BuildXPrebidHeader: version"),
        pytest.param("s/1", ("a", "", "", "x", "b", "2"), "s/1,a/unknown,b/2", id="empty name skipped"),
    ],
)
def test_compose_x_prebid(server: str, parts: tuple[str, ...], expected: str) -> None:
    assert compose_x_prebid(server, parts) == expected


@pytest.mark.parametrize(
    ("prebid", "app", "expected"),
    [
        pytest.param({}, True, {"channel": {"name": "app", "version": ""}}, id="auction.go fillChannel: app"),
        pytest.param({"channel": None}, True, {"channel": {"name": "app", "version": ""}}, id="fillChannel: null"),
        pytest.param(
            {"channel": {"name": "x", "version": "1"}}, True, {"channel": {"name": "x", "version": "1"}},
            id="auction.go validateOrFillChannel: the app's own channel kept",
        ),
        pytest.param({}, False, None, id="fillChannel: a site request gets none"),
    ],
)  # fmt: skip
def test_app_channel(prebid: dict[str, Any], app: bool, expected: dict[str, Any] | None) -> None:
    assert _SharedExt({"prebid": prebid}, prebid, None, app).for_bidder("alpha", {}).get("prebid") == expected


async def test_app_bidders_see_the_app_channel(make_client, bidders) -> None:
    """auction.go fillChannel + xprebidheader.go: an app request without a channel is channel ``app``."""
    client = await make_client(bidder_config(bidders, "alpha"))
    request = _auction_request(banner_imp("imp-1", alpha={"p": 1}))
    del request["site"]
    request["app"] = {"bundle": "com.example", "ext": {"prebid": {"source": "prebid-mobile", "version": "2.2"}}}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    assert bidders.received["alpha"][0]["ext"]["prebid"]["channel"] == {"name": "app", "version": ""}
    assert bidders.headers["alpha"][0]["X-Prebid"] == f"{S},app/unknown,prebid-mobile/2.2"


async def test_bidder_calls_carry_the_clients_x_prebid(make_client, bidders) -> None:
    """bidder.go requestBid: X-Prebid from the bidder's own request, on every call."""
    client = await make_client(bidder_config(bidders, "alpha"))
    request = _auction_request(banner_imp("imp-1", alpha={"p": 1}))
    request["ext"]["prebid"]["channel"] = {"name": "pbjs", "version": "9.0"}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    assert bidders.headers["alpha"][0]["X-Prebid"] == f"{S},pbjs/9.0"


# -- AMP: site.ext.amp and the planned calls -------------------------------------------------------


async def test_amp_bidders_see_site_ext_amp_and_x_prebid(make_client, bidders, data_dir: Path) -> None:
    """amp_auction.go overrideWithParams/setAmpExtDirect: ``site.ext.amp: 1`` unless the stored request
    has one; the second call of a slot goes by the call plan and must send the same."""
    imp = {"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    stored = {"id": "amp-req", "site": {"page": "https://pub.example/a", "ext": {"x": 1}}, "imp": [imp]}
    (data_dir / "stored_requests" / "101.json").write_text(json.dumps(stored))
    config = {**bidder_config(bidders, "alpha"), "datacenter": "dc-9"}
    client = await make_client(config)
    for _ in range(2):
        response = await client.get("/openrtb2/amp?tag_id=101&account=1001")
        assert response.status == 200, await response.text()
    assert len(bidders.received["alpha"]) == 2
    for sent, headers in zip(bidders.received["alpha"], bidders.headers["alpha"], strict=True):
        assert sent["site"]["ext"] == {"x": 1, "amp": 1}
        assert sent["ext"]["prebid"]["server"] == {"externalurl": EXTERNAL, "gvlid": 0, "datacenter": "dc-9"}
        assert headers["X-Prebid"] == f"{S},amp/unknown"


# -- X-Forwarded-For --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("forwarded", "device_ip"),
    [
        pytest.param(["203.0.113.9, 198.51.100.2"], "203.0.113.9", id="httputil.go findForwardedFor: first of a list"),
        pytest.param(
            ["203.0.113.9", "198.51.100.2"], "203.0.113.9",
            id="httputil.go findForwardedFor: r.Header.Get reads the first of two header lines",
        ),
    ],
)  # fmt: skip
async def test_forwarded_for_reaches_bidders_as_device_ip(make_client, bidders, forwarded, device_ip) -> None:
    """bidder.go requestBid sends only the adapter's headers (+ X-Prebid, Sec-GPC): the client's
    X-Forwarded-For values are not forwarded; bidders see the address PBS-Go found, in ``device.ip``."""
    client = await make_client(bidder_config(bidders, "alpha"))
    request = _auction_request(banner_imp("imp-1", alpha={"p": 1}))
    del request["device"]["ip"]
    headers = [("X-Forwarded-For", value) for value in forwarded]
    response = await client.post("/openrtb2/auction", data=json.dumps(request), headers=headers)
    assert response.status == 200, await response.text()
    assert bidders.received["alpha"][0]["device"]["ip"] == device_ip
    sent_forwarded = bidders.headers["alpha"][0].get("X-Forwarded-For")
    assert sent_forwarded in (None, device_ip)  # an adapter may send device.ip; never the client's list


# -- the client IP (httputil.go FindIP with iputil.PublicNetworkIPValidator) ---------------------

PRIVATE = {"request_validation": {"ipv4_private_networks": ["10.0.0.0/8", "127.0.0.0/8", "1.1.1.0/24"]}}


@pytest.mark.parametrize(
    ("headers", "raw", "device"),
    [
        pytest.param({"True-Client-IP": " 1.2.3.4 ", "X-Forwarded-For": "5.6.7.8", "X-Real-IP": "9.9.9.9"}, {},
                     {"ip": "1.2.3.4"}, id="httputil.go findTrueClientIP: first, whitespace ignored"),
        pytest.param({"True-Client-IP": "10.1.1.1", "X-Forwarded-For": "10.0.0.1, 192.168.1.1, 5.6.7.8"}, {},
                     {"ip": "5.6.7.8"}, id="findForwardedFor: first public of the list (192.168 private by default)"),
        pytest.param({"X-Forwarded-For": "malformed, 2222::, 4.4.4.4"}, {}, {"ipv6": "2222::"},
                     id="httputil_test.go Malformed - X Forwarded For - IPv6: device.ipv6"),
        pytest.param({"X-Forwarded-For": "fc00::1, ::1", "X-Real-IP": " 4.4.4.4 "}, {}, {"ip": "4.4.4.4"},
                     id="findRealIP: private IPv6 skipped (default ipv6_private_networks)"),
        pytest.param({"X-Forwarded-For": "1.1.1.9, 192.168.1.1"}, PRIVATE, {"ip": "192.168.1.1"},
                     id="request_validation.ipv4_private_networks replaces PBS-Go's defaults"),
        pytest.param({"X-Forwarded-For": "10.0.0.1", "X-Real-IP": "malformed"}, {}, {},
                     id="FindIP: nothing public, the peer 127.0.0.1 is private: no device.ip"),
        pytest.param({}, {"request_validation": {"ipv4_private_networks": []}}, {"ip": "127.0.0.1"},
                     id="findRemoteAddr: the peer, once no network is private"),
    ],
)  # fmt: skip
async def test_client_ip_as_pbs_go_finds_it(make_client, bidders, headers, raw, device) -> None:
    client = await make_client({**bidder_config(bidders, "alpha"), **raw})
    request = _auction_request(banner_imp("imp-1", alpha={"p": 1}))
    del request["device"]["ip"]
    response = await client.post("/openrtb2/auction", data=json.dumps(request), headers=headers)
    assert response.status == 200, await response.text()
    sent = bidders.received["alpha"][0]["device"]
    assert {k: v for k, v in sent.items() if k in ("ip", "ipv6")} == device


def _auction_request(*imps: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "req-1",
        "tmax": 500,
        "imp": list(imps),
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": {}},
    }


# -- native asset types (bidder.go addNativeTypes / setAssetTypes) ---------------------------------

NATIVE_REQUEST = json.dumps({
    "ver": "1.1", "context": 1, "plcmttype": 4,
    "assets": [
        {"id": 1, "required": 1, "title": {"len": 500}},
        {"id": 2, "required": 1, "img": {"type": 3, "wmin": 1, "hmin": 1}},
        {"id": 3, "required": 0, "data": {"type": 1, "len": 200}},
        {"id": 4, "required": 0, "data": {"type": 2, "len": 15000}},
        {"id": 6, "img": {"wmin": 1}},
    ],
})  # fmt: skip
IMG_URL = "http://img.example/a.jpg"
MOBILE_ADM = json.dumps({
    "assets": [
        {"id": 2, "img": {"url": IMG_URL, "w": 989, "h": 742, "ext": {"appnexus": {"prevent_crop": 0}}}},
        {"id": 1, "title": {"text": "A Prebid Native Creative"}},
        {"id": 3, "data": {"value": "Prebid.org"}},
        {"id": 4, "data": {"value": "Many like it"}},
    ],
    "link": {"url": "http://some-url.com"}, "imptrackers": ["http://someimptracker.com"], "jstracker": "js",
})  # fmt: skip
MOBILE_TYPED = {
    "assets": [
        {"id": 2, "img": {"type": 3, "url": IMG_URL, "w": 989, "h": 742, "ext": {"appnexus": {"prevent_crop": 0}}}},
        {"id": 1, "title": {"text": "A Prebid Native Creative"}},
        {"id": 3, "data": {"type": 1, "value": "Prebid.org"}},
        {"id": 4, "data": {"type": 2, "value": "Many like it"}},
    ],
    "link": {"url": "http://some-url.com"}, "imptrackers": ["http://someimptracker.com"], "jstracker": "js",
}  # fmt: skip


def _native_bid(adm: str, imp_id: str = "imp-n", bid_type: str = "native") -> TypedBid:
    return TypedBid({"id": "b", "impid": imp_id, "price": 1.0, "adm": adm}, bid_type)


def _asset_adm(*assets: dict[str, Any]) -> str:
    return json.dumps({"assets": list(assets)})


@pytest.mark.parametrize(
    ("adm", "bid_type", "want_assets", "want_errors"),
    [
        pytest.param(
            MOBILE_ADM, "native", MOBILE_TYPED, [], id="bidder_test.go TestMobileNativeTypes: types in response"
        ),
        pytest.param(
            '{"some-diff-markup":"creative"}', "native", None, [],
            id="bidder_test.go TestMobileNativeTypes: non IAB compliant markup left alone",
        ),
        pytest.param("null", "native", None, [], id="bidder_test.go TestAddNativeTypes: null in bid.Adm"),
        pytest.param('{"assets":[]}', "native", None, [], id="bidder.go addNativeTypes: no assets, no change"),
        pytest.param('{"native":{"assets":[{"id":2,"img":{}}]}}', "native", None, [], id="the 1.0 wrapper: no change"),
        pytest.param('{"assets":[{"id":"2","img":{}}]}', "native", None, [], id="UnmarshalValid fails: no change"),
        pytest.param(MOBILE_ADM, "banner", None, [], id="bidder.go requestBid: native bids only"),
        pytest.param(
            _asset_adm({"id": 1, "data": {"value": "x"}}), "native", {"assets": [{"id": 1, "data": {"value": "x"}}]},
            ["Response has a Data asset with ID:1 present that doesn't exist in the request"],
            id="bidder_test.go TestSetAssetTypes: data asset not in the request",
        ),
        pytest.param(
            _asset_adm({"id": 3, "img": {"url": "u"}}), "native", {"assets": [{"id": 3, "img": {"url": "u"}}]},
            ["Response has an Image asset with ID:3 present that doesn't exist in the request"],
            id="bidder_test.go TestSetAssetTypes: image asset not in the request",
        ),
        pytest.param(
            _asset_adm({"id": 9, "img": {}}, {"id": 2, "img": {}}), "native",
            {"assets": [{"id": 9, "img": {}}, {"id": 2, "img": {"type": 3}}]},
            ["Unable to find asset with ID:9 in the request"],
            id="bidder.go getAssetByID: unknown id; the other assets still filled",
        ),
        pytest.param(
            _asset_adm({"img": {}}, {"data": {}}), "native", {"assets": [{"img": {}}, {"data": {}}]},
            ["Response Image asset doesn't have an ID", "Response Data asset doesn't have an ID"],
            id="bidder_test.go TestSetAssetTypes: assets without an ID",
        ),
        pytest.param(
            _asset_adm({"id": 6, "img": {"type": 1}}), "native", {"assets": [{"id": 6, "img": {"type": 1}}]}, [],
            id="bidder.go setAssetTypes: a request type of 0 keeps the bidder's",
        ),
        pytest.param(
            _asset_adm({"id": 2, "img": {}}), "native", None, ["Could not find native imp"],
            id="bidder.go getNativeImpByImpID: no native imp",
        ),
    ],
)  # fmt: skip
def test_add_native_types(adm: str, bid_type: str, want_assets: Any, want_errors: list[str]) -> None:
    imp_id = "other" if want_errors == ["Could not find native imp"] else "imp-n"
    request = {"app": {}, "imp": [{"id": "imp-n", "native": {"request": NATIVE_REQUEST}}]}
    typed = _native_bid(adm, imp_id, bid_type)
    errors: list[Any] = []
    add_native_types(BidderResponse([typed]), request, errors)
    assert [e.message for e in errors] == want_errors
    if want_assets is None:
        assert typed.bid["adm"] == adm
    else:
        assert json.loads(typed.bid["adm"]) == want_assets
    if want_assets is MOBILE_TYPED:  # Go's Image struct writes type first
        assert typed.bid["adm"].startswith('{"assets":[{"id":2,"img":{"type":3,"url"')


@pytest.mark.parametrize(
    ("context", "filled"),
    [
        pytest.param({"app": {"bundle": "com.example"}}, True, id="bidder.go requestBid: app requests"),
        pytest.param({"site": {"page": "https://news.example/a"}}, False, id="bidder.go requestBid: not for a site"),
    ],
)
async def test_native_types_in_the_auction(make_client, bidders, context: dict[str, Any], filled: bool) -> None:
    bidders.bids["alpha"] = [bid("imp-n", 1.0, adm=_asset_adm({"id": 2, "img": {"url": "u"}}), mtype=4)]
    client = await make_client(bidder_config(bidders, "alpha"))
    imp = {"id": "imp-n", "native": {"request": NATIVE_REQUEST}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    request = {**_auction_request(imp), **context}
    if "app" in context:
        del request["site"]
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    [seat] = (await response.json())["seatbid"]
    img = json.loads(seat["bid"][0]["adm"])["assets"][0]["img"]
    assert img == ({"type": 3, "url": "u"} if filled else {"url": "u"})


# -- generate_bid_id (exchange.go bidIDGenerator) ----------------------------------------------------


@pytest.mark.parametrize(
    "enabled",
    [
        pytest.param(True, id="exchange.go HoldAuction: bidIDGenerator.New per bid, events.go uses GeneratedBidID"),
        pytest.param(False, id="config.go generate_bid_id default false: no bidid"),
    ],
)
async def test_generate_bid_id(make_client, bidders, enabled: bool) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1"), bid("imp-2", 2.0, "a2")]
    client = await make_client({**bidder_config(bidders, "alpha"), "generate_bid_id": enabled})
    request = _auction_request(banner_imp("imp-1", alpha={}), banner_imp("imp-2", alpha={}))
    request["ext"]["prebid"]["events"] = {}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    [seat] = (await response.json())["seatbid"]
    ids = []
    for one in seat["bid"]:
        prebid = one["ext"]["prebid"]
        if not enabled:
            assert "bidid" not in prebid and f"b={one['id']}&" in prebid["events"]["win"]
            continue
        bid_id = prebid["bidid"]
        assert str(uuid.UUID(bid_id)) == bid_id and bid_id != one["id"]
        assert f"b={bid_id}&" in prebid["events"]["win"] and f"b={bid_id}&" in prebid["events"]["imp"]
        ids.append(bid_id)
    assert len(set(ids)) == len(ids)


# -- debug: the headers as sent (bidder.go makeExt / filterHeader) ----------------------------------


def test_debug_httpcall_headers_as_sent_without_authorization() -> None:
    call = RequestData("POST", "http://bidder.example", b"{}", {"Authorization": "Basic x", "X-A": "1"})
    exchange = HttpCall(call)
    assert exchange.as_debug()["requestheaders"] == {"X-A": ["1"]}
    exchange.sent_headers = {**call.headers, "X-Prebid": S, "Sec-GPC": "1"}
    assert exchange.as_debug()["requestheaders"] == {"X-A": ["1"], "X-Prebid": [S], "Sec-GPC": ["1"]}


async def test_debug_httpcalls_show_x_prebid(make_client, bidders) -> None:
    client = await make_client(bidder_config(bidders, "alpha"))
    request = {**_auction_request(banner_imp("imp-1", alpha={"p": 1})), "test": 1}
    request["ext"]["prebid"]["channel"] = {"name": "pbjs", "version": "9.0"}
    response = await client.post("/openrtb2/auction", data=json.dumps(request), headers={"Sec-GPC": "1"})
    assert response.status == 200, await response.text()
    [call] = (await response.json())["ext"]["debug"]["httpcalls"]["alpha"]
    assert call["requestheaders"]["X-Prebid"] == [f"{S},pbjs/9.0"] and call["requestheaders"]["Sec-GPC"] == ["1"]
    assert bidders.headers["alpha"][0]["Sec-GPC"] == "1"
