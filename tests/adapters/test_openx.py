"""OpenX adapter: call grouping, imp and request changes, errors, bid typing and PAAPI configs."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.openx import bid_meta, build

ENDPOINT = "http://rtb.openx.net/prebid"
INFO = RequestInfo(bidder="openx")
NATIVE = {"request": "{}", "ver": "1.2"}
VIDEO = {"mimes": ["video/mp4"]}
PARAMS = {"unit": "539439964", "delDomain": "se-demo-d.openx.net"}


def imp(imp_id: str, params: Any = None, **fields: Any) -> dict:
    kinds = {kind: value for kind, value in fields.items() if kind in ("banner", "video", "native", "audio")}
    out = {"id": imp_id, **(kinds or {"banner": {}}), **{k: v for k, v in fields.items() if k not in kinds}}
    out["ext"] = {"bidder": PARAMS if params is None else params, **out.get("ext", {})}
    return out


def run(request: dict):
    before = copy.deepcopy(request)
    calls, errors = build(AdapterConfig("openx", ENDPOINT)).make_requests(request, INFO)
    assert request == before
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, [orjson.loads(call.body) for call in calls], [e.message for e in errors]


@pytest.mark.parametrize(("imps", "want"), [
    ([imp("b"), imp("v", video=VIDEO), imp("n", native=NATIVE)], [["b", "n"], ["v"]]),
    ([imp("v1", video=VIDEO), imp("v2", video=VIDEO)], [["v1"], ["v2"]]),
    ([imp("bv", banner={}, video=VIDEO), imp("vn", video=VIDEO, native=NATIVE)], [["bv"], ["vn"]]),
    ([imp("a", audio={})], []),
    ([], []),
])
def test_banner_and_native_together_each_video_alone(imps, want):
    calls, _, _ = run({"id": "r", "imp": imps})
    assert [call.imp_ids for call in calls] == want


@pytest.mark.parametrize(("params", "fields", "want"), [
    ({"unit": 123, "delDomain": "d.openx.net"}, {}, {"tagid": "123", "bidfloor": None, "ext": None}),
    ({"unit": "7", "delDomain": "d", "customFloor": "0.4"}, {}, {"tagid": "7", "bidfloor": 0.4}),
    ({"unit": "7", "delDomain": "d", "customFloor": 0.1}, {"bidfloor": 0.5}, {"bidfloor": 0.5}),
    ({"unit": "7", "delDomain": "d", "customFloor": 0}, {}, {"bidfloor": None}),
    ({"unit": "7", "delDomain": "d", "customParams": {"foo": "bar"}}, {}, {"ext": {"customParams": {"foo": "bar"}}}),
    (None, {"ext": {"ae": 1, "gpid": "g", "prebid": {"x": 1}, "data": {"a": 1}}},
     {"ext": {"ae": 1, "gpid": "g", "data": {"a": 1}}}),
    (None, {"video": {"w": 1, "ext": {"foo": "bar"}}, "rwdd": 1}, {"video": {"w": 1, "ext": {"rewarded": 1}}}),
    (None, {"video": {"w": 1, "ext": {"foo": "bar"}}}, {"video": {"w": 1}}),
])
def test_imp_changes(params, fields, want):
    _, bodies, errors = run({"id": "r", "imp": [imp("i", params, **fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent.get(key) == value, key


@pytest.mark.parametrize(("imps", "request_ext", "want"), [
    ([imp("a")], None, {"bc": "hb_pbs_1.0.0", "delDomain": "se-demo-d.openx.net"}),
    ([imp("a", {"unit": "1", "platform": "p"})], {"prebid": {}}, {"bc": "hb_pbs_1.0.0", "platform": "p"}),
    ([imp("a", {"unit": "1", "delDomain": "first"}), imp("b", {"unit": "2", "delDomain": "last"})], None,
     {"bc": "hb_pbs_1.0.0", "delDomain": "last"}),
])
def test_request_ext_is_replaced(imps, request_ext, want):
    request = {"id": "r", "imp": imps}
    if request_ext is not None:
        request["ext"] = request_ext
    _, bodies, _ = run(request)
    assert bodies[0]["ext"] == want


@pytest.mark.parametrize(("imps", "want_errors", "want_ids"), [
    ([imp("a", "bad"), imp("b")], ["openx params: imp.ext.bidder must be an object"], [["b"]]),
    ([imp("a", {"unit": True})], ["openx params: unit must be a number or a string holding one"], []),
    ([imp("a", {"unit": "1", "customFloor": "x"}), imp("b")],
     ["openx params: customFloor must be a number or a string holding one"], [["b"]]),
    ([imp("a", {"unit": ""})], ["openx params: unit must be a number or a string holding one"], []),
    ([imp("a", {"unit": "1", "customParams": []})], ["openx params: customParams must be an object"], []),
    ([imp("a", {"unit": "1", "delDomain": 5}), imp("v", video=VIDEO)],
     ["openx params: delDomain must be a string"], [["v"]]),
])
def test_request_errors(imps, want_errors, want_ids):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == want_errors
    assert [call.imp_ids for call in calls] == want_ids


REQUEST = {"id": "r", "imp": [
    {"id": "b", "banner": {}}, {"id": "v", "video": VIDEO}, {"id": "n", "native": NATIVE},
    {"id": "bv", "banner": {}, "video": VIDEO}, {"id": "vn", "video": VIDEO, "native": NATIVE},
]}


def bids_of(body: Any, status: int = 200, bidder: str = "openx"):
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    built = build(AdapterConfig(bidder, ENDPOINT))
    return built.make_bids(REQUEST, RequestData("POST", ENDPOINT), ResponseData(status, data))


@pytest.mark.parametrize(("impid", "mtype", "want"), [
    ("b", 1, "banner"), ("b", 2, "video"), ("b", 4, "native"),
    ("b", None, "banner"), ("v", None, "video"), ("n", None, "native"),
    ("bv", None, "banner"), ("vn", None, "video"), ("v", 3, "video"), ("unknown", None, "banner"),
])
def test_bid_type_by_mtype_else_imp(impid, mtype, want):
    bid = {"id": "x", "impid": impid, "price": 1}
    if mtype is not None:
        bid["mtype"] = mtype
    response, errors = bids_of({"seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.bids[0].bid_type == want


@pytest.mark.parametrize(("fields", "want"), [
    ({"dur": 30, "cat": ["IAB20", "IAB1"]}, {"duration": 30, "primary_category": "IAB20"}),
    ({}, {"duration": 0, "primary_category": ""}),
])
def test_bid_video_info(fields, want):
    response, _ = bids_of({"seatbid": [{"bid": [{"id": "x", "impid": "v", "price": 1, **fields}]}]})
    assert response.bids[0].bid_video == want


@pytest.mark.parametrize(("ext", "bidder", "want"), [
    ({"fledge_auction_configs": {"imp1": {"seller": "openx.com"}}}, "openx",
     [{"impid": "imp1", "bidder": "openx", "config": {"seller": "openx.com"}}]),
    ({"fledge_auction_configs": {"imp1": {"seller": "s"}}}, "openxalias",
     [{"impid": "imp1", "bidder": "openxalias", "config": {"seller": "s"}}]),
    ({"other": 1}, "openx", None),
    (None, "openx", None),
])
def test_fledge_configs(ext, bidder, want):
    body: dict[str, Any] = {"id": "r", "cur": "USD"}
    if ext is not None:
        body["ext"] = ext
    response, _ = bids_of(body, bidder=bidder)
    assert response.fledge_auction_configs == want
    assert response.bids == []


@pytest.mark.parametrize(("status", "body", "want_response", "want_code"), [
    (204, b"", False, None),
    (400, b"", False, ErrorCode.BAD_INPUT),
    (503, b"", False, ErrorCode.BAD_SERVER_RESPONSE),
    (200, b"[", False, ErrorCode.BAD_SERVER_RESPONSE),
    (200, b'{"cur": "EUR"}', True, None),
])
def test_statuses(status, body, want_response, want_code):
    response, errors = bids_of(body, status)
    assert (response is not None) == want_response
    assert [e.code for e in errors] == ([want_code] if want_code else [])
    if response is not None:
        assert response.currency == "EUR"


# PBS-Go TestOpenxAdapter_GetBidMeta, row for row (a raw ext that is not JSON stands as a string here),
# and the shapes json-iterator refuses or lets pass.
@pytest.mark.parametrize(("ext", "want"), [
    ("malformed", None),
    ({}, None),
    ({"dsp_id": "456", "brand_id": "789", "buyer_id": "123"}, {"advertiserId": 123, "brandId": 789, "networkId": 456}),
    ({"dsp_id": "456", "brand_id": "malformed", "buyer_id": "123"}, None),
    ({"dsp_id": "456", "brand_id": "789", "buyer_id": "123-456"}, {"brandId": 789, "networkId": 456}),
    ({"buyer_id": "123", "dsp_id": "456"}, {"advertiserId": 123, "networkId": 456}),
    ({"buyer_id": "123", "brand_id": "789"}, {"advertiserId": 123, "brandId": 789}),
    ({"dsp_id": "456", "brand_id": "789"}, {"brandId": 789, "networkId": 456}),
    ({"buyer_id": "123"}, {"advertiserId": 123}),
    ({"dsp_id": "456"}, {"networkId": 456}),
    ({"brand_id": "789"}, {"brandId": 789}),
    ({"buyer_id": "malformed", "dsp_id": "malformed", "brand_id": "malformed"}, None),
    ({"dsp_id": 456}, None),  # ",string": an unquoted number does not decode
    ({"buyer_id": 123}, None),  # a string field given a number
    ({"dsp_id": "-4", "buyer_id": "0"}, None),  # none positive
    ({"DSP_ID": "7"}, {"networkId": 7}),  # Go matches field names ignoring case
    ({"dsp_id": None, "brand_id": "3"}, {"brandId": 3}),  # null leaves the field as it is
])
def test_bid_meta(ext, want):
    assert bid_meta({"id": "b", "ext": ext}) == want
    response, _ = bids_of({"seatbid": [{"bid": [{"id": "x", "impid": "v", "price": 1, "ext": ext}]}]})
    assert response.bids[0].bid_meta == want
