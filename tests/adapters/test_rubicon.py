"""The rubicon (Magnite XAPI) adapter on requests and answers of our own (no PBS fixtures needed)."""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters import rubicon
from hbserver.adapters.base import AdapterConfig, ConversionError, ErrorCode, RequestData, RequestInfo, ResponseData

XAPI = {"username": "user1", "password": "secret", "tracker": "trk"}
CONFIG = AdapterConfig("rubicon", "https://exapi.example/a/api/exchange.json?tk_sdc=us-east",
                       {"xapi": XAPI, "external_url": "https://pbs.example", "pbs_version": "1.2.3"})
INFO = RequestInfo(bidder="rubicon", adapter_code="rubicon")
PARAMS = {"accountId": 1001, "siteId": 2002, "zoneId": 3003}


def imp(imp_id: str = "imp-1", params: Any = None, **media: Any) -> dict[str, Any]:
    media = media or {"banner": {"format": [{"w": 300, "h": 250}]}}
    return {"id": imp_id, **media, "ext": {"bidder": PARAMS if params is None else params}}


def request(*imps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": "req-1", "imp": list(imps) or [imp()], "site": {"page": "https://news.example/a"}, **fields}


def build(req: dict[str, Any], info: RequestInfo = INFO, config: AdapterConfig = CONFIG):
    calls, errors = rubicon.build(config).make_requests(req, info)
    return [orjson.loads(call.body) for call in calls], [e.message for e in errors], calls


def test_endpoint_gets_the_tracker_and_calls_carry_xapi_auth():
    _, errors, calls = build(request())
    assert errors == []
    assert calls[0].uri == "https://exapi.example/a/api/exchange.json?tk_sdc=us-east&tk_xint=trk"
    token = base64.b64encode(b"user1:secret").decode()
    assert calls[0].headers["Authorization"] == f"Basic {token}"
    assert calls[0].headers["User-Agent"] == "prebid-server/1.0"
    assert calls[0].method == "POST"
    assert calls[0].imp_ids == ["imp-1"]


def test_no_endpoint_is_an_error():
    calls, errors = rubicon.build(AdapterConfig("rubicon", "")).make_requests(request(), INFO)
    assert calls == []
    assert errors[0].code == ErrorCode.BAD_INPUT


def test_one_request_per_imp_with_xapi_fields():
    bodies, errors, _ = build(request(imp("a"), imp("b", {"accountId": "7", "siteId": "8", "zoneId": "9"})))
    assert errors == []
    assert [b["imp"][0]["id"] for b in bodies] == ["a", "b"]
    second = bodies[1]
    assert second["imp"][0]["ext"]["rp"]["zone_id"] == 9
    assert second["site"]["ext"]["rp"]["site_id"] == 8
    assert second["site"]["publisher"] == {"ext": {"rp": {"account_id": 7}}}
    first_imp = bodies[0]["imp"][0]
    assert first_imp["secure"] == 1
    assert first_imp["banner"]["ext"] == {"rp": {"mime": "text/html"}}
    assert first_imp["ext"]["rp"]["track"] == {"mint": "", "mint_version": ""}
    assert first_imp["ext"]["rp"]["target"] == {
        "page": ["https://news.example/a"], "pbs_login": "user1", "pbs_version": "1.2.3", "pbs_url": "https://pbs.example",
    }


@pytest.mark.parametrize(("params", "message"), [
    ({"accountId": 1, "siteId": 2, "zoneId": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ({"accountId": 1, "siteId": "", "zoneId": 3}, 'strconv.ParseInt: parsing "": invalid syntax'),
    ({"accountId": 1.5, "siteId": 2, "zoneId": 3}, 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    # issue 38: past int() (4,300 digits) and past int64 as a JSON integer (orjson reads up to uint64)
    ({"accountId": "9" * 5000, "siteId": 2, "zoneId": 3},
     f'strconv.ParseInt: parsing "{"9" * 5000}": value out of range'),
    ({"accountId": 1, "siteId": 2**64 - 1, "zoneId": 3},
     'strconv.ParseInt: parsing "18446744073709551615": value out of range'),
    ({"accountId": 1, "siteId": 2, "zoneId": "\u00b2"}, 'strconv.ParseInt: parsing "\u00b2": invalid syntax'),
    ([PARAMS], "cannot unmarshal rubicon.rubiconExtImpBidder.Bidder: expect { or n, but found ["),
    ("x", "cannot unmarshal rubicon.rubiconExtImpBidder.Bidder: expect { or n, but found \""),
])
def test_bad_params_drop_the_imp_with_an_error(params, message):
    bodies, errors, _ = build(request(imp("bad", params), imp("good")))
    assert errors == [message]
    assert [b["imp"][0]["id"] for b in bodies] == ["good"]


@pytest.mark.parametrize(("value", "expected"), [
    ("v", ["v"]),
    (3, ["3"]),
    (3.0, ["3"]),
    (True, ["true"]),
    (["a", "b"], ["a", "b"]),
    ([True, False], ["true", "false"]),
    ([], None),
])
def test_first_party_data_becomes_string_list_targeting(value, expected):
    target: dict[str, Any] = {}
    rubicon._fpd_into({"key": value}, target)
    assert target == {"key": expected}


@pytest.mark.parametrize("value", [2.5, {"nested": 1}, [1, "a"], None])
def test_first_party_data_of_other_shapes_is_skipped(value):
    target: dict[str, Any] = {}
    rubicon._fpd_into({"key": value}, target)
    assert target == {}


def test_first_party_data_sources_and_segments():
    req = request(
        imp(params={**PARAMS, "inventory": {"section": "sports"}, "visitor": {"age": 30}, "keywords": ["k1"]},
            banner={"format": [{"w": 300, "h": 250}]}),
        site={"page": "p", "ext": {"data": {"genre": "news"}}, "content": {"data": [
            {"ext": {"segtax": 1}, "segment": [{"id": "s1"}]},
            {"ext": {"segtax": "2"}, "segment": [{"id": "not-an-int"}]},
            {"ext": {"segtax": 4}, "segment": [{"id": "user-taxonomy"}]},
        ]}},
        user={"yob": 1990, "gender": "f", "consent": "CONSENT", "eids": [{"source": "s", "uids": [{"id": "u"}]}],
              "data": [{"ext": {"segtax": 4}, "segment": [{"id": "u1"}]}], "ext": {"data": {"tier": "gold"}}},
    )
    req["imp"][0]["ext"]["data"] = {"pbadslot": "/slot", "adserver": {"name": "gam", "adslot": "/gam"}}
    (body,), errors, _ = build(req)
    assert errors == []
    target = body["imp"][0]["ext"]["rp"]["target"]
    assert target["section"] == ["sports"]
    assert target["genre"] == ["news"]
    assert target["page"] == ["p"]
    assert target["pbadslot"] == "/slot"  # pbadslot wins over the GAM ad unit
    assert "dfp_ad_unit_code" not in target
    assert target["keywords"] == ["k1"]
    assert body["site"]["ext"]["rp"]["target"] == {"iab": ["s1"]}
    user = body["user"]
    assert {"yob", "gender", "consent", "eids"}.isdisjoint(user)
    assert user["ext"] == {
        "eids": [{"source": "s", "uids": [{"id": "u"}]}],
        "rp": {"target": {"age": ["30"], "tier": ["gold"], "iab": ["u1"]}},
        "consent": "CONSENT",
    }


def test_gam_ad_unit_when_no_pbadslot():
    req = request()
    req["imp"][0]["ext"]["data"] = {"adserver": {"name": "gam", "adslot": "/gam"}}
    (body,), _, _ = build(req)
    assert body["imp"][0]["ext"]["rp"]["target"]["dfp_ad_unit_code"] == "/gam"


def test_privacy_and_supply_chain_go_to_their_25_places():
    schain = {"complete": 1, "nodes": [], "ver": "1.0"}
    req = request(regs={"gdpr": 1, "us_privacy": "1YNN", "ext": {"gpc": "1", "other": True}},
                  source={"tid": "t", "schain": schain}, ext={"prebid": {}}, cur=["EUR"],
                  badv=[f"d{i}.example" for i in range(60)], device={"ua": "UA", "pxratio": 2.0})
    (body,), _, _ = build(req)
    assert body["regs"] == {"ext": {"gpc": "1", "gdpr": 1, "us_privacy": "1YNN"}}
    assert body["source"] == {"tid": "t", "ext": {"schain": schain}}
    assert "ext" not in body and "cur" not in body
    assert len(body["badv"]) == 50
    assert body["device"] == {"ua": "UA", "pxratio": 2.0, "ext": {"rp": {"pixelratio": 2.0}}}


def test_25_places_are_kept():
    req = request(regs={"ext": {"gdpr": 0}}, user={"ext": {"consent": "C"}}, ext={"schain": {"ver": "1.0"}})
    (body,), _, _ = build(req)
    assert body["regs"] == {"ext": {"gdpr": 0}}
    assert body["user"]["ext"]["consent"] == "C"
    assert body["source"] == {"ext": {"schain": {"ver": "1.0"}}}


def test_max_bids_from_multibid():
    req = request(ext={"prebid": {"multibid": [{"bidder": "rubicon", "maxbids": 3}]}})
    (body,), _, _ = build(req)
    assert body["imp"][0]["ext"]["maxbids"] == 3


VIDEO = {"mimes": ["video/mp4"], "protocols": [2], "maxduration": 30, "linearity": 1}


@pytest.mark.parametrize(("media", "kind"), [
    ({"video": VIDEO}, "video"),
    ({"banner": {"w": 300, "h": 250}, "video": VIDEO}, "video"),  # a fully described video wins
    ({"banner": {"w": 300, "h": 250}, "video": {"mimes": ["video/mp4"]}}, "banner"),
    ({"native": {"ver": "1.1", "request": "{}"}}, "native"),
])
def test_one_media_type_is_sent(media, kind):
    (body,), errors, _ = build(request(imp(**media)))
    assert errors == []
    sent = {k for k in ("banner", "video", "native") if k in body["imp"][0]}
    assert sent == {kind}


def test_video_ext_from_params_and_rewarded():
    params = {**PARAMS, "video": {"size_id": 201, "skip": 1, "skipdelay": 5}}
    (body,), _, _ = build(request(imp(params=params, video=VIDEO) | {"rwdd": 1}))
    sent = body["imp"][0]
    assert sent["video"]["ext"] == {"skip": 1, "skipdelay": 5, "videotype": "rewarded", "rp": {"size_id": 201}}
    assert "rwdd" not in sent


def test_bid_on_multiformat_splits_the_imp():
    params = {**PARAMS, "bidonmultiformat": True}
    bodies, errors, calls = build(request(imp(params=params, banner={"w": 300, "h": 250}, video=VIDEO)))
    assert errors == []
    assert [set(b["imp"][0]) & {"banner", "video"} for b in bodies] == [{"banner"}, {"video"}]
    assert [c.imp_ids for c in calls] == [["imp-1"], ["imp-1"]]


@pytest.mark.parametrize(("banner", "ok"), [
    ({"format": [{"w": 1, "h": 1}]}, True),
    ({"w": 300, "h": 250}, True),
    ({}, False),
    ({"w": 300}, False),
    ({"w": 300, "h": 0}, False),
])
def test_banner_needs_a_size(banner, ok):
    bodies, errors, _ = build(request(imp(banner=banner)))
    assert (len(bodies), errors) == ((1, []) if ok else (0, ["rubicon imps must have at least one imp.format element"]))


@pytest.mark.parametrize(("native_request", "error"), [
    ('{"eventtrackers":[],"plcmttype":1}', None),
    ('{"eventtrackers":[],"plcmttype":1,"context":"x"}', "Context is not of int type"),
    ('{"plcmttype":1}', "Eventtrackers are not present or not of array type"),
    ('{"eventtrackers":[]}', "Plcmttype is not present or not of int type"),
])
def test_native_12_request_is_checked_and_sent_parsed(native_request, error):
    bodies, errors, _ = build(request(imp(native={"ver": "1.2", "request": native_request})))
    if error is None:
        assert bodies[0]["imp"][0]["native"]["request_native"] == orjson.loads(native_request)
    else:
        assert errors == [error]


def test_audio_only_imp_is_an_error():
    _, errors, _ = build(request(imp(audio={"mimes": ["audio/mp3"]})))
    assert errors == ["Native object is not present for request"]


def test_foreign_floor_is_converted_to_usd():
    def convert(amount: float, source: str, target: str) -> float:
        if (source, target) != ("EUR", "USD"):
            raise ConversionError("no rate")
        return amount * 2

    req = request(imp() | {"bidfloor": 1.5, "bidfloorcur": "EUR"})
    (body,), _, _ = build(req, RequestInfo("rubicon", "rubicon", convert_currency=convert))
    assert (body["imp"][0]["bidfloor"], body["imp"][0]["bidfloorcur"]) == (3.0, "USD")
    _, errors, _ = build(request(imp() | {"bidfloor": 1.5, "bidfloorcur": "JPY"}))
    assert errors == ["Unable to convert provided bid floor currency from JPY to USD"]


def test_request_is_not_changed():
    req = request(imp(params={**PARAMS, "bidonmultiformat": True}, banner={"w": 1, "h": 1}, video=VIDEO),
                  user={"consent": "c", "ext": {"data": {"a": 1}}}, regs={"gdpr": 1}, device={"ua": "x"},
                  source={"schain": {"ver": "1.0"}})
    before = copy.deepcopy(req)
    build(req)
    assert req == before


# --- bids ---------------------------------------------------------------------------------------


def answer(body: Any, status: int = 200) -> ResponseData:
    return ResponseData(status, orjson.dumps(body) if body is not None else b"")


def sent_call(**media: Any) -> RequestData:
    return RequestData("POST", "uri", orjson.dumps({"imp": [{"id": "imp-1", **media}]}))


BID = {"id": "b1", "impid": "imp-1", "price": 1.5, "adm": "<div/>", "crid": "c"}


@pytest.mark.parametrize(("status", "code"), [(400, ErrorCode.BAD_INPUT), (500, ErrorCode.BAD_SERVER_RESPONSE)])
def test_error_statuses(status, code):
    response, errors = rubicon.build(CONFIG).make_bids(request(), sent_call(banner={}), answer(None, status))
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info", code)]


def test_no_content_is_no_bid():
    assert rubicon.build(CONFIG).make_bids(request(), sent_call(banner={}), answer(None, 204)) == (None, [])


@pytest.mark.parametrize(("media", "kind"), [
    ({"banner": {}}, "banner"),
    ({"video": {}}, "video"),
    ({"native": {}}, "native"),
])
def test_bid_type_is_the_sent_imps(media, kind):
    body = {"cur": "EUR", "seatbid": [{"bid": [BID]}]}
    response, errors = rubicon.build(CONFIG).make_bids(request(), sent_call(**media), answer(body))
    assert errors == []
    assert response.currency == "EUR"
    assert [(b.bid_type, b.bid["id"]) for b in response.bids] == [(kind, "b1")]


def test_bid_meta_native_adm_zero_price_and_bid_id():
    bids = [
        {**BID, "id": "0", "adm": "", "adm_native": {"assets": []}, "ext": {"prebid": {"meta": {"x": 1}}}},
        {**BID, "id": "b2", "price": 0},
    ]
    body = {"bidid": "response-bid-id", "seatbid": [{"buyer": "42", "seat": "dsp", "bid": bids}]}
    response, _ = rubicon.build(CONFIG).make_bids(request(), sent_call(native={}), answer(body))
    (bid,) = [b.bid for b in response.bids]
    assert bid["id"] == "response-bid-id"
    assert bid["adm"] == '{"assets":[]}'
    assert "adm_native" not in bid
    assert bid["ext"] == {"prebid": {"meta": {"x": 1, "networkId": 42, "seat": "dsp"}}}


def test_cpm_override_from_params_then_request():
    req = request(imp(params={**PARAMS, "debug": {"cpmoverride": 7}}), imp("imp-2"),
                  ext={"prebid": {"bidders": {"rubicon": {"debug": {"cpmoverride": 3}}}}})
    body = {"seatbid": [{"bid": [BID, {**BID, "id": "b2", "impid": "imp-2"}]}]}
    response, _ = rubicon.build(CONFIG).make_bids(req, sent_call(banner={}), answer(body))
    assert [b.bid["price"] for b in response.bids] == [7, 3]
