"""33Across adapter: grouping by product and zone, imp.ext and request.ext, video checks, bid types."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters._33across import CALLER, VIDEO_ERROR, build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://ssc.33across.com/api/v1/s2s"
INFO = RequestInfo(bidder="33across")
VIDEO = {"w": 640, "h": 480, "protocols": [2], "mimes": ["video/mp4"], "playbackmethod": [2]}
PARAMS = {"productId": "inview", "siteId": "s"}
MEDIA = {"banner": {"format": [{"w": 300, "h": 250}]}}  # an imp's media unless the test names its own


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, PARAMS if params is None else params, fields, MEDIA)


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("33across", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    assert all(dict(call.headers) == {"Content-Type": "application/json;charset=utf-8"} for call in calls)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"productId": "inview", "siteId": "s"}, {"prod": "inview", "zoneid": "s"}),
        ({"productId": "inview", "siteId": "s", "zoneId": "z"}, {"prod": "inview", "zoneid": "z"}),
        ({"productId": "siab", "zoneId": "z"}, {"prod": "siab", "zoneid": "z"}),
        ({"productId": "siab", "zoneId": "", "siteId": ""}, {"prod": "siab"}),
        ({}, {"prod": ""}),
    ],
)
def test_imp_ext_is_replaced(params, want):
    _, bodies, errors = run({"id": "r", "imp": [imp("i", params, banner={}, tagid="t")]})
    assert errors == []
    assert bodies[0]["imp"][0] == {"id": "i", "banner": {}, "tagid": "t", "ext": {"ttx": want}}


def test_one_call_per_product_and_zone():
    imps = [
        imp("a", {"productId": "inview", "siteId": "s1"}),
        imp("b", {"productId": "siab", "siteId": "s1"}),
        imp("c", {"productId": "inview", "zoneId": "s1", "siteId": "other"}),
        imp("d", {"productId": "inview", "siteId": "s2"}),
        # Go keys its groups by product and zone written together: "ab" + "c" meets "a" + "bc"
        imp("e", {"productId": "ab", "siteId": "c"}),
        imp("f", {"productId": "a", "siteId": "bc"}),
    ]
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == []
    assert sorted(call.imp_ids for call in calls) == [["a", "c"], ["b"], ["d"], ["e", "f"]]


@pytest.mark.parametrize(
    ("ext", "want", "error"),
    [
        (None, {"ttx": {"caller": [CALLER]}}, None),
        ({"prebid": {"debug": True}, "ttx": {"other": 1}}, {"ttx": {"caller": [CALLER]}}, None),
        (
            {"ttx": {"caller": [{"name": "Sdk", "version": "1", "x": 2}, {"name": ""}]}},
            {"ttx": {"caller": [{"name": "Sdk", "version": "1"}, {}, CALLER]}},
            None,
        ),
        ("bad", None, 'expect { or n, but found "'),
        ({"ttx": 1}, None, "cannot unmarshal ttx.reqExt.Ttx: expect { or n, but found 1"),
        ({"ttx": {"caller": {}}}, None, "cannot unmarshal ttx.reqTtxExt.Caller: expect [ or n, but found {"),
        ({"ttx": {"caller": [1]}}, None, "cannot unmarshal []ttx.TtxCaller: expect { or n, but found 1"),
        ({"ttx": {"caller": [{"name": 1}]}}, None, 'cannot unmarshal ttx.TtxCaller.Name: expects " or n, but found 1'),
    ],
)
def test_request_ext(ext, want, error):
    request: dict[str, Any] = {"id": "r", "imp": [imp()]}
    if ext is not None:
        request["ext"] = ext
    _, bodies, errors = run(request)
    assert bodies[0].get("ext") == want
    assert errors == ([(error, ErrorCode.UNKNOWN)] if error else [])


@pytest.mark.parametrize(
    ("video", "product", "want"),
    [
        (VIDEO, "instream", {**VIDEO, "startdelay": 0}),
        ({**VIDEO, "startdelay": -1}, "instream", {**VIDEO, "startdelay": -1}),
        (VIDEO, "siab", VIDEO),
        ({**VIDEO, "protocols": []}, "siab", {**VIDEO, "protocols": []}),
        ({**VIDEO, "w": 0}, "siab", None),
        ({**VIDEO, "h": None}, "siab", None),
        ({**VIDEO, "mimes": None}, "instream", None),
        ({k: v for k, v in VIDEO.items() if k != "playbackmethod"}, "siab", None),
        ({k: v for k, v in VIDEO.items() if k != "protocols"}, "siab", None),
    ],
)
def test_video_checks_and_instream_start_delay(video, product, want):
    request = {"id": "r", "imp": [imp("v", {"productId": product, "siteId": "s"}, video=video)]}
    calls, bodies, errors = run(request)
    if want is None:
        assert (calls, errors) == ([], [(VIDEO_ERROR, ErrorCode.BAD_INPUT)])
    else:
        assert errors == []
        assert bodies[0]["imp"][0]["video"] == want


@pytest.mark.parametrize(
    ("bad_imp", "want"),
    [
        (
            {"id": "n", "native": {"request": "{}"}, "ext": {"bidder": {}}},
            "Imp ID n must have at least one of [Banner, Video] defined",
        ),
        (
            {"id": "n", "banner": None, "ext": {"bidder": {}}},
            "Imp ID n must have at least one of [Banner, Video] defined",
        ),
        ({"id": "x", "banner": {}}, "expect { or n, but found \x00"),
        (imp("x", "s"), 'expect { or n, but found "'),
        (
            imp("x", {"productId": 5}),
            'cannot unmarshal openrtb_ext.ExtImp33across.ProductId: expects " or n, but found 5',
        ),
        (
            imp("x", {"zoneId": ["z"]}),
            'cannot unmarshal openrtb_ext.ExtImp33across.ZoneId: expects " or n, but found [',
        ),
    ],
)
def test_bad_imps_are_dropped(bad_imp, want):
    calls, _, errors = run({"id": "r", "imp": [bad_imp, imp("ok")]})
    assert errors == [(want, ErrorCode.BAD_INPUT)]
    assert [call.imp_ids for call in calls] == [["ok"]]


def test_banner_with_native_goes_as_go_writes_it_and_production_build():
    adapter = build_adapter("33across", AdapterConfig("33across", ENDPOINT))
    request = {"id": "r", "imp": [imp("i", banner={}, native={"ver": "1.2"})]}
    _, bodies, _ = requests_of(adapter, request, INFO)
    assert bodies[0]["imp"][0]["native"] == {"ver": "1.2", "request": ""}


def bids_of(body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("33across", ENDPOINT)), {"id": "r", "imp": []}, body, status)


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"ttx": {"mediaType": "video"}}, "video"),
        ({"ttx": {"mediaType": "banner"}}, "banner"),
        ({"ttx": {"mediaType": "native"}}, "banner"),
        ({"ttx": {"mediaType": 1}}, "banner"),
        ({"ttx": "video"}, "banner"),
        (None, "banner"),
    ],
)
def test_bid_type_from_ext_ttx(ext, want):
    bid: dict[str, Any] = {"id": "b", "impid": "i", "price": 1, "adomain": []}
    if ext is not None:
        bid["ext"] = ext
    response, errors = bids_of({"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert errors == []
    assert response.currency == "USD"
    assert [b.bid_type for b in response.bids] == [want]
    assert "adomain" not in response.bids[0].bid


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (400, b"{}", ("Unexpected status code: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_INPUT)),
        (
            503,
            b"{}",
            ("Unexpected status code: 503. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE),
        ),
        (200, b'"x"', ('expect { or n, but found "', ErrorCode.UNKNOWN)),  # Go's plain decoding error
    ],
)
def test_answer_errors(status, body, want):
    response, errors = bids_of(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([want] if want else [])
