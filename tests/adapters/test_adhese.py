"""Adhese adapter: the first imp's account, slot and targets (PBS-Go's ext rewrite), its one
media type for the answer's first bid, whose ext is its ``adhese`` member."""

from __future__ import annotations

import pytest

from hbserver.adapters.adhese import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://{{.AccountID}}.foo.bar/"
PARAMS = {"account": "demo", "location": "loc", "format": "fmt"}


def adapter():
    return build(AdapterConfig("adhese", ENDPOINT))


def imp(imp_id="a", params=PARAMS, **media):
    return {"id": imp_id, **(media or {"banner": {"w": 1, "h": 1}}), "ext": {"bidder": params, "tid": "t"}}


@pytest.mark.parametrize(
    ("targets", "want"),
    [
        (None, {"SL": ["loc-fmt"]}),
        ({"ci": ["gent"], "ag": ["55"]}, {"SL": ["loc-fmt"], "ag": ["55"], "ci": ["gent"]}),
        ({"SL": ["mine"], "x": None}, {"SL": ["mine"], "x": None}),  # the targets win; null stays
    ],
)
def test_one_call_with_the_first_imp_rewritten(targets, want):
    params = {**PARAMS, **({"targets": targets} if targets else {})}
    request = {"id": "r", "imp": [imp("a", params), imp("b", {"account": "x"})]}
    calls, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="adhese"))
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [("https://demo.foo.bar/", ["a"])]
    assert bodies[0]["imp"][0]["ext"] == {"adhese": want}
    assert list(bodies[0]["imp"][0]["ext"]["adhese"]) == sorted(want)
    assert bodies[0]["imp"][1]["ext"] == request["imp"][1]["ext"]  # the others as they are


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {**PARAMS, "account": "bad/host"}}, "Invalid account"),
        ({"bidder": {**PARAMS, "account": 1}}, "Error unmarshalling bidder ext: cannot unmarshal"),
        ({"bidder": {**PARAMS, "targets": {"a": "b"}}}, "Error unmarshalling bidder ext: cannot unmarshal"),
        ({"bidder": None}, "Error unmarshalling bidder ext: expect { or n"),
        ("x", "Error unmarshalling imp.ext: expect { or n"),
    ],
)
def test_a_bad_first_imp_fails_the_request(ext, want):
    request = {"imp": [{"id": "a", "banner": {}, "ext": ext}]}
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="adhese"))
    assert calls == []
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]
    assert errors[0].message.startswith(want)


BID = {"id": "1", "impid": "a", "price": 1, "ext": {"adhese": {"b": "2", "a": "1"}, "other": {}}}


@pytest.mark.parametrize(
    ("media", "answer", "want"),
    [
        (
            {"video": {}},
            {"cur": "EUR", "seatbid": [{"bid": [BID, {**BID, "id": "2"}]}]},
            ("EUR", "video", {"a": "1", "b": "2"}),
        ),
        ({"audio": {}}, {"seatbid": [{"bid": [{**BID, "ext": {"x": {}}}]}]}, ("USD", "audio", None)),
    ],
)
def test_the_first_bid(media, answer, want):
    response, errors = bids_for(adapter(), {"imp": [imp(**media)]}, answer)
    assert errors == []
    assert response.currency == want[0]
    assert [(b.bid["id"], b.bid_type, b.bid["ext"]) for b in response.bids] == [("1", want[1], want[2])]


@pytest.mark.parametrize(
    ("status", "answer", "media", "want"),
    [
        (
            204,
            b"",
            {},
            (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 204. Run with request.debug = 1 for more info"),
        ),
        (400, b"", {}, (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (200, b"", {}, (ErrorCode.BAD_SERVER_RESPONSE, "Empty body")),
        (200, {"seatbid": []}, {}, (ErrorCode.BAD_SERVER_RESPONSE, "Empty SeatBid")),
        (200, {"seatbid": [{"bid": []}]}, {}, (ErrorCode.BAD_SERVER_RESPONSE, "Empty SeatBid.Bid")),
        (
            200,
            {"seatbid": [{"bid": [{**BID, "ext": None}]}]},
            {},
            (ErrorCode.BAD_SERVER_RESPONSE, "BidExt parsing error. expect { or n, but found \x00"),
        ),
        (
            200,
            {"seatbid": [{"bid": [BID]}]},
            {"banner": {}, "video": {}},
            (ErrorCode.BAD_SERVER_RESPONSE, "BidType error: [Multiple media types detected, cannot infer]"),
        ),
        (
            200,
            {"seatbid": [{"bid": [BID]}]},
            {"pmp": {}},
            (ErrorCode.BAD_SERVER_RESPONSE, "BidType error: [Could not infer bid type from imp]"),
        ),
    ],
)
def test_failed_answers(status, answer, media, want):
    request = {"imp": [{"id": "a", **media}]}
    response, errors = bids_for(adapter(), request, answer, status)
    assert response is None
    assert [(e.code, e.message) for e in errors] == [want]
