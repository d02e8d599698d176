"""Adtelligent adapter: one call per aid, the rewritten imp ext and floor, params errors in PBS-Go's
order and words, answers read whatever their status, bid typing by imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.adtelligent import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://ghb.adtelligent.com/pbs/ortb"
INFO = RequestInfo(bidder="adtelligent")
ANSWER = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"aid": 1} if params is None else params, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("adtelligent", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("adtelligent", ENDPOINT)), request, body, status)


def test_one_call_per_aid_with_its_imps_only():
    request = {"id": "r", "imp": [imp("a", {"aid": 7}), imp("b", {"aid": "8"}), imp("c", {"aid": 7})]}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [
        (f"{ENDPOINT}?aid=7", ["a", "c"]),
        (f"{ENDPOINT}?aid=8", ["b"]),
    ]
    assert [[i["id"] for i in body["imp"]] for body in bodies] == [["a", "c"], ["b"]]
    assert all(body["id"] == "r" for body in bodies)
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}


@pytest.mark.parametrize(
    ("params", "imp_fields", "ext", "floor"),
    [
        ({"aid": 5}, {}, {"aid": 5}, None),
        ({"aid": "5", "placementId": 0, "siteId": 3}, {}, {"aid": 5, "siteId": 3}, None),  # zeros left out
        ({"AID": 5, "placementid": 2}, {}, {"aid": 5, "placementId": 2}, None),  # names match in any case
        ({"aid": 5, "bidFloor": 1.5}, {"bidfloor": 0.5}, {"aid": 5, "bidFloor": 1.5}, 1.5),  # a positive floor wins
        ({"aid": 5, "bidFloor": -1}, {"bidfloor": 0.5}, {"aid": 5, "bidFloor": -1}, 0.5),
        ({"aid": 5, "unknown": "x"}, {}, {"aid": 5}, None),  # unknown params dropped
    ],
)
def test_imp_ext_rewritten_and_floor(params, imp_fields, ext, floor):
    _, bodies, errors = run({"imp": [imp("i", params, **imp_fields)]})
    assert errors == []
    sent = bodies[0]["imp"][0]
    assert sent["ext"] == {"adtelligent": ext}
    assert sent.get("bidfloor") == floor


def test_video_without_mimes_is_written_as_go_does():
    _, bodies, _ = run({"imp": [imp(video={"w": 1})]})
    assert bodies[0]["imp"][0]["video"] == {"w": 1, "mimes": None}


IMP = "ignoring imp id=i, "
DECODING = IMP + "error while decoding impExt, err: cannot unmarshal openrtb_ext.ExtImpAdtelligent."


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "i", "audio": {}, "ext": {"bidder": {"aid": 1}}}, IMP + "Adtelligent supports only Video and Banner"),
        ({"id": "i", "native": {}}, IMP + "Adtelligent supports only Video and Banner"),  # checked before the ext
        ({"id": "i", "banner": {}}, IMP + "extImpBidder is empty"),
        ({"id": "i", "banner": {}, "ext": None}, IMP + "extImpBidder is empty"),
        (
            {"id": "i", "banner": {}, "ext": []},
            IMP + "error while decoding extImpBidder, err: expect { or n, but found [",
        ),
        ({"id": "i", "banner": {}, "ext": {}}, IMP + "error while decoding impExt, err: expect { or n, but found \x00"),
        (imp(params={"aid": True}), DECODING + "SourceId: invalid number"),
        (imp(params={"aid": 1, "siteId": 1.5}), DECODING + "SiteId: can not decode float as int"),
        (imp(params={"aid": 1, "bidFloor": "1"}), DECODING + "BidFloor: invalid number"),
        (imp(params={"aid": "x y"}), IMP + 'error while marshaling impExt, err: json: invalid number literal "x y"'),
        (imp(params={"aid": "007"}), IMP + 'error while marshaling impExt, err: json: invalid number literal "007"'),
        (
            imp(params={"aid": 'a"\n'}),
            IMP + 'error while marshaling impExt, err: json: invalid number literal "a\\"\\n"',
        ),
        (imp(params={}), IMP + 'aid parsing err: strconv.ParseInt: parsing "": invalid syntax'),
        (imp(params={"aid": None}), IMP + 'aid parsing err: strconv.ParseInt: parsing "": invalid syntax'),
        (imp(params={"aid": "1.5"}), IMP + 'aid parsing err: strconv.ParseInt: parsing "1.5": invalid syntax'),
        (imp(params={"aid": 2.0}), IMP + 'aid parsing err: strconv.ParseInt: parsing "2.0": invalid syntax'),
        (
            imp(params={"aid": "9223372036854775808"}),
            IMP + 'aid parsing err: strconv.ParseInt: parsing "9223372036854775808": value out of range',
        ),
    ],
)
def test_bad_imp_is_reported_and_left_out(bad, message):
    calls, _, errors = run({"imp": [bad, imp("ok")]})
    assert [call.imp_ids for call in calls] == [["ok"]]
    assert errors == [(message, ErrorCode.BAD_INPUT)]


def test_no_valid_imp_no_call():
    calls, _, errors = run({"imp": [imp(params={"aid": "x"})]})
    assert calls == []
    assert len(errors) == 1


@pytest.mark.parametrize("status", [200, 400, 500])
def test_answer_read_whatever_its_status(status):
    response, errors = bids({"imp": [imp()]}, ANSWER, status)
    assert errors == []
    assert [b.bid["id"] for b in response.bids] == ["b"]
    assert response.currency == "USD"  # the answer's cur is not used


def test_no_content_and_bad_body():
    assert bids({"imp": [imp()]}, b"", 204) == (None, [])
    response, errors = bids({"imp": [imp()]}, b"[]")
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        ("error while decoding response, err: expect { or n, but found [", ErrorCode.BAD_SERVER_RESPONSE)
    ]


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp(banner={})], "banner"),
        ([imp(video={})], "video"),
        ([imp(banner={}, video={})], "video"),
        ([imp(banner={}), imp(video={})], "video"),  # any imp of that id with a video object
    ],
)
def test_bids_typed_by_imp(imps, want):
    response, _ = bids({"imp": imps}, ANSWER)
    assert [b.bid_type for b in response.bids] == [want]


def test_bid_for_unknown_imp_is_skipped_with_an_error():
    body = {"seatbid": [{"bid": [{"id": "x", "impid": "nope", "price": 1}, {"id": "b", "impid": "i", "price": 2}]}]}
    response, errors = bids({"imp": [imp()]}, body)
    assert [b.bid["id"] for b in response.bids] == ["b"]
    assert [(e.message, e.code) for e in errors] == [
        ("ignoring bid id=x, request doesn't contain any impression with id=nope", ErrorCode.BAD_SERVER_RESPONSE)
    ]
