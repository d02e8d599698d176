"""AppNexus adapter: params, request building, pods, errors and bid typing (no shared fixtures needed)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters.appnexus import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData

ENDPOINT = "http://ib.adnxs.com/openrtb2"
AUCTION = RequestInfo(bidder="appnexus")
AMP = RequestInfo(bidder="appnexus", entry_point="openrtb2-amp")
VIDEO = RequestInfo(bidder="appnexus", entry_point="openrtb2-video")


def adapter(endpoint: str = ENDPOINT, **extra: Any):
    built = build(AdapterConfig("appnexus", endpoint, extra))
    built.random_int = iter(range(100, 200)).__next__
    return built


def imp(imp_id: str = "i1", params: dict | None = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}}
    out.update(fields)
    out["ext"] = {"bidder": {"placement_id": 1} if params is None else params, **out.get("ext", {})}
    return out


def run(request: dict, info: RequestInfo = AUCTION, built=None):
    """make_requests, checking the request given is left untouched; bodies decoded."""
    before = copy.deepcopy(request)
    calls, errors = (built or adapter()).make_requests(request, info)
    assert request == before
    return calls, [orjson.loads(call.body) for call in calls], [e.message for e in errors]


@pytest.mark.parametrize(("params", "want_ext", "want_tagid", "want_uri"), [
    ({"placement_id": 1}, {"placement_id": 1}, None, ENDPOINT),
    ({"placement_id": "9880618"}, {"placement_id": 9880618}, None, ENDPOINT),
    ({"placementId": 7, "invCode": "abc", "trafficSourceCode": "xyz"},
     {"placement_id": 7, "traffic_source_code": "xyz"}, "abc", ENDPOINT),
    ({"placement_id": 1, "placementId": 7}, {"placement_id": 1}, None, ENDPOINT),
    ({"member": 103, "inv_code": "abc"}, {}, "abc", ENDPOINT + "?member_id=103"),
    ({"member": "103", "invCode": "abc"}, {}, "abc", ENDPOINT + "?member_id=103"),
    ({"placement_id": 1, "keywords": "a=b,c"}, {"placement_id": 1, "keywords": "a=b,c"}, None, ENDPOINT),
    ({"placement_id": 1, "keywords": [{"key": "foo", "value": ["bar", "baz"]}, {"key": "flag"}]},
     {"placement_id": 1, "keywords": "foo=bar,foo=baz,flag"}, None, ENDPOINT),
    ({"placement_id": 1, "keywords": {"abc": ["x"], "empty": []}},
     {"placement_id": 1, "keywords": "abc=x,empty"}, None, ENDPOINT),
    ({"placement_id": 1, "use_payment_rule": True}, {"placement_id": 1, "use_pmt_rule": True}, None, ENDPOINT),
    ({"placement_id": 1, "use_pmt_rule": False, "use_payment_rule": True},
     {"placement_id": 1, "use_pmt_rule": False}, None, ENDPOINT),
    ({"placement_id": 1, "private_sizes": [{"w": 1, "h": 2}], "ext_inv_code": "e", "external_imp_id": "x"},
     {"placement_id": 1, "private_sizes": [{"w": 1, "h": 2}], "ext_inv_code": "e", "external_imp_id": "x"},
     None, ENDPOINT),
])
def test_params_become_imp_ext_tagid_and_uri(params, want_ext, want_tagid, want_uri):
    calls, bodies, errors = run({"id": "r", "imp": [imp(params=params)]})
    assert errors == []
    assert calls[0].uri == want_uri
    sent = bodies[0]["imp"][0]
    assert sent["ext"] == {"appnexus": want_ext}
    assert sent.get("tagid") == want_tagid


@pytest.mark.parametrize(("endpoint", "want"), [
    ("http://ib.adnxs.com/openrtb2", "http://ib.adnxs.com/openrtb2?member_id=9"),
    ("http://x.test/o?z=1&a=2", "http://x.test/o?a=2&member_id=9&z=1"),
    ("http://x.test/o?member_id=1", "http://x.test/o?member_id=9"),
])
def test_member_goes_into_the_query_sorted(endpoint, want):
    calls, _, _ = run({"id": "r", "imp": [imp(params={"member": "9", "inv_code": "c"})]}, built=adapter(endpoint))
    assert calls[0].uri == want


@pytest.mark.parametrize(("fields", "params", "want"), [
    ({}, {"placement_id": 1, "reserve": 0.4}, {"bidfloor": 0.4}),
    ({"bidfloor": 0.3}, {"placement_id": 1, "reserve": 0.4}, {"bidfloor": 0.3}),
    ({}, {"placement_id": 1, "position": "above"}, {"banner.pos": 1, "banner.w": 300, "banner.h": 250}),
    ({}, {"placement_id": 1, "position": "below"}, {"banner.pos": 3}),
    ({}, {"placement_id": 1, "position": "middle"}, {"banner.pos": None}),
    ({"banner": {"format": [{"w": 300, "h": 250}], "w": 100, "h": 400}}, None, {"banner.w": 100, "banner.h": 400}),
    ({"ext": {"gpid": "/slot"}}, None, {"ext.gpid": "/slot"}),
    ({"ext": {"data": {"x": 1}, "prebid": {}}}, None, {"ext.data": None, "ext.prebid": None}),
    ({"displaymanagerver": "own"}, None, {"displaymanagerver": "own"}),
])
def test_imp_building(fields, params, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(params=params, **fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for path, value in want.items():
        node: Any = sent
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        assert node == value, path


@pytest.mark.parametrize(("app", "want"), [
    ({"ext": {"prebid": {"source": "prebid-mobile", "version": "1.0.0"}}}, "prebid-mobile-1.0.0"),
    ({"ext": {"prebid": {"source": "prebid-mobile"}}}, None),
    (None, None),
])
def test_display_manager_version_from_app(app, want):
    request = {"id": "r", "imp": [imp()]}
    if app is not None:
        request["app"] = app
    _, bodies, _ = run(request)
    assert bodies[0]["imp"][0].get("displaymanagerver") == want


@pytest.mark.parametrize(("request_ext", "info", "extra", "want"), [
    (None, AUCTION, {}, {"hb_source": 5}),
    (None, AMP, {}, {"hb_source": 5, "is_amp": 1}),
    (None, VIDEO, {}, {"hb_source": 6}),
    (None, AUCTION, {"platform_id": "3"}, {"hb_source": 3}),
    ({"appnexus": {"adpod_id": "42", "is_amp": 1, "unknown": 1}}, AUCTION, {}, {"hb_source": 5, "adpod_id": "42"}),
    ({"prebid": {"targeting": {"includebrandcategory": {"primaryadserver": 1}}}}, AUCTION, {},
     {"hb_source": 5, "include_brand_category": True, "brand_category_uniqueness": True}),
])
def test_request_ext_appnexus(request_ext, info, extra, want):
    request = {"id": "r", "imp": [imp()]}
    if request_ext is not None:
        request["ext"] = request_ext
    _, bodies, _ = run(request, info, adapter(**extra))
    assert bodies[0]["ext"]["appnexus"] == want
    for key, value in (request_ext or {}).items():
        if key != "appnexus":
            assert bodies[0]["ext"][key] == value


@pytest.mark.parametrize(("source", "ext", "want_source", "want_schain"), [
    ({"ext": {"schain": {"ver": "1.0"}}}, None, {}, {"ver": "1.0"}),
    ({"tid": "t", "ext": {"schain": {"ver": "1.0"}, "other": 1}}, {"schain": {"ver": "old"}},
     {"tid": "t", "ext": {"other": 1}}, {"ver": "1.0"}),
    ({"tid": "t"}, {"schain": {"ver": "2.4"}}, {"tid": "t"}, {"ver": "2.4"}),
])
def test_schain_moves_to_request_ext(source, ext, want_source, want_schain):
    request = {"id": "r", "imp": [imp()], "source": source}
    if ext is not None:
        request["ext"] = ext
    _, bodies, _ = run(request)
    assert bodies[0]["source"] == want_source
    assert bodies[0]["ext"]["schain"] == want_schain


def test_more_than_ten_imps_are_split():
    calls, bodies, _ = run({"id": "r", "imp": [imp(f"i{n}") for n in range(23)]})
    assert [len(body["imp"]) for body in bodies] == [10, 10, 3]
    assert calls[2].imp_ids == ["i20", "i21", "i22"]


@pytest.mark.parametrize(("ids", "generate", "info", "want_pods"), [
    (["1_1", "1_2", "2_1"], True, VIDEO, [["1_1", "1_2"], ["2_1"]]),
    (["1_1", "1_2", "2_1"], False, VIDEO, [["1_1", "1_2", "2_1"]]),
    (["1_1", "2_1"], True, AUCTION, [["1_1", "2_1"]]),
])
def test_video_pods(ids, generate, info, want_pods):
    video = {"mimes": ["video/mp4"], "w": 640, "h": 480}
    imps = [{"id": i, "video": video, "ext": {"bidder": {"placement_id": 1, "generate_ad_pod_id": generate}}}
            for i in ids]
    calls, bodies, errors = run({"id": "r", "imp": imps}, info)
    assert errors == []
    assert [call.imp_ids for call in calls] == want_pods
    pod_ids = [body["ext"]["appnexus"].get("adpod_id") for body in bodies]
    if generate and info is VIDEO:
        assert pod_ids == [str(100 + n) for n in range(len(want_pods))]
    else:
        assert pod_ids == [None] * len(want_pods)


@pytest.mark.parametrize(("imps", "want_errors", "want_ids"), [
    ([imp(params={"inv_code": "x"})], ["No placement or member+invcode provided"], []),
    ([imp("a", params={"member": "1"}), imp("b")], ["No placement or member+invcode provided"], ["b"]),
    ([imp("a", params={"member": "103", "inv_code": "x"}), imp("b", params={"member": "104", "inv_code": "x"})],
     ["all request.imp[i].ext.prebid.bidder.appnexus.member params must match. "
      "Request contained member IDs 103 and 104"], []),
    ([imp("a", params={"placement_id": 1, "generate_ad_pod_id": True}), imp("b")],
     ["generate ad pod option should be same for all pods in request"], []),
    ([imp("a", params={"placement_id": True}), imp("b")],
     ["appnexus params: placement_id must be an integer or a string of digits"], ["b"]),
    # issue 38: numbers str.isdigit() passes but int() refuses, past int() or int64 (orjson cannot
    # write them): a bad-input error for that imp (PBS-Go: jsonutil.StringInt refuses each), not a crash
    ([imp("a", params={"placementId": "\u00b2"}), imp("b")],
     ['appnexus params: placementId: parsing "\u00b2": invalid syntax'], ["b"]),
    ([imp("a", params={"placement_id": "9" * 5000}), imp("b")],
     ['appnexus params: placement_id: parsing "' + "9" * 40 + '...": value out of range'], ["b"]),
    ([imp("a", params={"placementId": "99999999999999999999"}), imp("b")],
     ['appnexus params: placementId: parsing "99999999999999999999": value out of range'], ["b"]),
    ([imp("a", params={"placementId": 2**64 - 1}), imp("b")],
     ['appnexus params: placementId: parsing "18446744073709551615": value out of range'], ["b"]),
    ([imp("a", params={"placementId": "\u0663"}), imp("b")],
     ['appnexus params: placementId: parsing "\u0663": invalid syntax'], ["b"]),
    ([imp("a", params={"placement_id": 1, "keywords": {"k": 1}})],
     ["appnexus params: keywords values must be arrays of strings"], []),
    ([{"id": "a", "banner": {}, "ext": "x"}], ["appnexus params: imp.ext must be an object"], []),
    ([imp("a", params={"placement_id": 1, "keywords": 5})],
     ["appnexus params: keywords must be a string, an array of {key, value} or an object"], []),
])
def test_request_errors(imps, want_errors, want_ids):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == want_errors
    assert [i for call in calls for i in call.imp_ids] == want_ids


def bids_of(body: Any, status: int = 200):
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    return adapter().make_bids({"id": "r"}, RequestData("POST", ENDPOINT), ResponseData(status, data))


def seat(*bids: dict, **top: Any) -> dict:
    return {"id": "r", "seatbid": [{"bid": list(bids)}], **top}


def an_bid(bid_id: str = "b", **appnexus: Any) -> dict:
    return {"id": bid_id, "impid": "i1", "price": 1, "ext": {"appnexus": appnexus}}


@pytest.mark.parametrize(("ext", "want_type", "want_error"), [
    ({"bid_ad_type": 0}, "banner", None),
    ({"bid_ad_type": 1, "creative_info": {"video": {"duration": 30}}}, "video", None),
    ({"bid_ad_type": 3}, "native", None),
    ({}, "banner", None),
    ({"bid_ad_type": 2}, None, "Unrecognized bid_ad_type in response from appnexus: 2"),
    ({"bid_ad_type": 4}, None, "Unrecognized bid_ad_type in response from appnexus: 4"),
    ({"bid_ad_type": "1"}, None, "bid.ext.appnexus.bid_ad_type must be an integer"),
])
def test_bid_types(ext, want_type, want_error):
    response, errors = bids_of(seat(an_bid(**ext)))
    assert response is not None
    assert [bid.bid_type for bid in response.bids] == ([want_type] if want_type else [])
    assert [e.message for e in errors] == ([want_error] if want_error else [])


@pytest.mark.parametrize(("category_id", "cat", "want"), [
    (1, None, ["IAB20-3"]),
    (9, ["IAB9-1"], ["IAB5-1"]),
    (99, ["IAB1"], ["IAB1"]),
    (99, ["IAB1", "IAB2"], None),
    (99, None, None),
])
def test_brand_category(category_id, cat, want):
    bid = an_bid(brand_category_id=category_id)
    if cat is not None:
        bid["cat"] = cat
    response, _ = bids_of(seat(bid))
    assert response.bids[0].bid.get("cat") == want


def test_bid_details():
    response, errors = bids_of(seat(an_bid(bid_ad_type=1, deal_priority=5,
                                           creative_info={"video": {"duration": 15}}), cur="EUR"))
    assert errors == []
    assert response.currency == "EUR"
    typed = response.bids[0]
    assert (typed.deal_priority, typed.bid_video) == (5, {"duration": 15, "primary_category": ""})
    assert bids_of(seat())[0].currency == "USD"


@pytest.mark.parametrize(("status", "body", "want_response", "want_error", "want_code"), [
    (204, b"", False, None, None),
    (400, b"{}", False, "Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT),
    (500, b"{}", False, "Unexpected status code: 500. Run with request.debug = 1 for more info",
     ErrorCode.BAD_SERVER_RESPONSE),
    (200, b"{not json", False, "Bad response body", ErrorCode.BAD_SERVER_RESPONSE),
    (200, b"{}", True, None, None),
])
def test_statuses(status, body, want_response, want_error, want_code):
    response, errors = bids_of(body, status)
    assert (response is not None) == want_response
    if want_error is None:
        assert errors == []
    else:
        assert errors[0].message.startswith(want_error)
        assert errors[0].code == want_code
