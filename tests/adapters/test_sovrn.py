"""Sovrn adapter: params (case, floor strings), video checks, headers, adm decoding, bid typing."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.sovrn import build
from tests.adapters.helpers import requests_of

ENDPOINT = "http://pbs.lijit.com/rtb/bid?src=prebid_server"
INFO = RequestInfo(bidder="sovrn")
VIDEO = {"mimes": ["video/mp4"], "maxduration": 30, "protocols": [2]}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"format": [{"w": 300, "h": 250}]}, **fields}
    out.setdefault("ext", {"bidder": {"tagid": "123"} if params is None else params})
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("sovrn", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"tagid": "a", "tagId": "b"}, {}, {"tagid": "a"}),
        ({"tagId": "b"}, {}, {"tagid": "b"}),
        ({"TAGID": "c"}, {}, {"tagid": "c"}),
        ({"tagid": "a", "bidfloor": "1.5"}, {}, {"bidfloor": 1.5}),
        ({"tagid": "a", "bidfloor": 2}, {}, {"bidfloor": 2}),
        ({"tagid": "a", "bidfloor": "cheap"}, {}, {"bidfloor": None}),
        ({"tagid": "a", "bidfloor": "1e999"}, {}, {"bidfloor": None}),
        ({"tagid": "a", "bidfloor": " 1"}, {}, {"bidfloor": None}),
        ({"tagid": "a", "bidfloor": True}, {}, {"bidfloor": None}),
        ({"tagid": "a", "bidfloor": -1}, {}, {"bidfloor": None}),
        ({"tagid": "a", "bidfloor": 3}, {"bidfloor": 0.5}, {"bidfloor": 0.5}),
    ],
)
def test_tagid_and_floor(params, fields, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(params=params, **fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    for key, value in want.items():
        assert sent.get(key) == value, key
    assert sent["ext"] == {"bidder": params}


@pytest.mark.parametrize(
    ("imps", "want_errors", "want_ids"),
    [
        ([imp(params={}), imp("ok")], ["Missing required parameter 'tagid'"], ["ok"]),
        ([imp(params={"tagid": ""})], ["Missing required parameter 'tagid'"], []),
        ([imp(ext="aaa")], ['expect { or n, but found "'], []),
        ([imp(ext={})], ["expect { or n, but found \x00"], []),
        ([imp(ext={"bidder": 5})], ["expect { or n, but found 5"], []),
        (
            [imp(ext={"bidder": {"tagid": "a"}, "prebid": 1})],
            ["cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1"],
            [],
        ),
        (
            [imp(params={"tagid": 1})],
            ['cannot unmarshal openrtb_ext.ExtImpSovrn.Tagid: expects " or n, but found 1'],
            [],
        ),
        (
            [imp(params={"tagid": "a", "adunitcode": []})],
            ['cannot unmarshal openrtb_ext.ExtImpSovrn.AdUnitCode: expects " or n, but found ['],
            [],
        ),
        ([imp(params={"tagid": "a", "bidfloor": "inf"})], ["json: unsupported value: +Inf"], []),
        ([imp(video={"mimes": ["video/mp4"], "maxduration": 30})], ["Missing required video parameter"], []),
        ([imp(video={**VIDEO, "maxduration": 0})], ["Missing required video parameter"], []),
        ([imp(video={**VIDEO, "protocols": []})], [], ["i"]),
    ],
)
def test_invalid_imps_are_reported_and_left_out(imps, want_errors, want_ids):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert errors == want_errors
    assert [call.imp_ids for call in calls] == ([want_ids] if want_ids else [])


@pytest.mark.parametrize(
    ("request_fields", "want"),
    [
        (
            {"device": {"ua": "UA", "ip": "1.2.3.4", "language": "en", "dnt": 1}, "user": {"buyeruid": " u1\t"}},
            {
                "User-Agent": "UA",
                "X-Forwarded-For": "1.2.3.4",
                "Accept-Language": "en",
                "Dnt": "1",
                "Cookie": "ljt_reader=u1",
            },
        ),
        ({"device": {"ipv6": "::1", "dnt": 0}, "user": {"buyeruid": "  "}}, {"Dnt": "0"}),
        ({}, {}),
    ],
)
def test_headers(request_fields, want):
    calls, _, _ = run({"id": "r", "imp": [imp()], **request_fields})
    assert calls[0].headers == {"Content-Type": "application/json", **want}


def test_video_is_written_as_go_writes_it():
    video = {**VIDEO, "maxextended": 0, "boxingallowed": 0, "podid": "", "battr": [], "pos": None, "foo": 1}
    _, bodies, _ = run({"id": "r", "imp": [imp(video=video)]})
    assert bodies[0]["imp"][0]["video"] == {**VIDEO, "boxingallowed": 0}


def answer(*bids: dict) -> ResponseData:
    return ResponseData(200, orjson.dumps({"id": "r", "seatbid": [{"bid": list(bids)}]}))


@pytest.mark.parametrize(
    ("bid", "want_adm", "want_type", "want_errors"),
    [
        ({"id": "b", "impid": "i", "price": 1, "adm": "%3Cdiv%3Ea+b%3C%2Fdiv%3E"}, "<div>a b</div>", "banner", []),
        ({"id": "b", "impid": "v", "price": 1, "adm": "<VAST/>"}, "<VAST/>", "video", []),
        ({"id": "b", "impid": "i", "price": 1}, None, "banner", []),
        ({"id": "b", "impid": "i", "price": 1, "adm": "100%"}, None, None, []),
        (
            {"id": "b", "impid": "x", "price": 1, "adm": "a"},
            None,
            None,
            ["Imp ID x in bid didn't match with any imp in the original request"],
        ),
    ],
)
def test_bids(bid, want_adm, want_type, want_errors):
    request = {"id": "r", "imp": [imp("i"), imp("v", video=VIDEO)]}
    before = copy.deepcopy(bid)
    response, errors = build(AdapterConfig("sovrn", ENDPOINT)).make_bids(
        request, RequestData("POST", ENDPOINT), answer(bid)
    )
    assert bid == before
    assert response is not None and response.currency == "USD"
    assert [e.message for e in errors] == want_errors
    assert all(e.code == ErrorCode.BAD_INPUT for e in errors)
    assert [typed.bid_type for typed in response.bids] == ([want_type] if want_type else [])
    if want_type:
        assert response.bids[0].bid.get("adm") == want_adm


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (204, None),
        (400, (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (500, (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. Run with request.debug = 1 for more info")),
    ],
)
def test_status(status, want):
    response, errors = build(AdapterConfig("sovrn", ENDPOINT)).make_bids(
        {"imp": []}, RequestData("POST", ENDPOINT), ResponseData(status, b"")
    )
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
