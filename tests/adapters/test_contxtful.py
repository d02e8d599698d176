"""Contxtful adapter: the Prebid.js payload, the account in the endpoint, buyer uids, and reading
Prebid.js bid arrays."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.contxtful import NOT_PARSED, build
from tests.adapters.helpers import requests_of

ENDPOINT = "https://prebid.receptivity.io/v1/pbs/{{.AccountID}}/bid"
ADAPTER = build(AdapterConfig("contxtful", ENDPOINT))
INFO = RequestInfo(bidder="contxtful")


def _imp(imp_id, params, **media):
    return {"id": imp_id, **(media or {"banner": {"w": 1, "h": 1}}), "ext": {"bidder": params}}


def test_payload():
    request = {
        "id": "r",
        "imp": [_imp("a", {"placementId": "p1"}), _imp("b", {"placementId": "p2", "customerId": "C1"})],
        "site": {"page": "x"},
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [("https://prebid.receptivity.io/v1/pbs/C1/bid", ["a", "b"])]
    assert bodies[0] == {
        "ortb2": request,
        "bidRequests": [
            {"bidder": "contxtful", "params": {"placementId": "p1"}, "bidId": "a"},
            {"bidder": "contxtful", "params": {"placementId": "p2"}, "bidId": "b"},
        ],
        "bidderRequest": {"bidderCode": "contxtful"},
        "config": {"contxtful": {"version": "v1", "customer": "C1"}},
    }


@pytest.mark.parametrize(
    ("user", "want"),
    [
        ({"buyeruid": "own", "ext": {"prebid": {"buyeruids": {"contxtful": "map"}}}}, "own"),
        ({"ext": {"prebid": {"buyeruids": {"contxtful": "map"}}}}, "map"),
        ({"ext": {"prebid": {"buyeruids": {"other": "x"}}}}, None),
        ({"ext": {"prebid": {"buyeruids": {"contxtful": "map", "other": 1}}}}, None),  # the map does not decode
        ({"ext": {"prebid": "x"}}, None),
    ],
)
def test_buyeruid(user, want):
    request = {"id": "r", "imp": [_imp("a", {"customerId": "C"})], "user": user}
    _, bodies, _ = requests_of(ADAPTER, request, INFO)
    assert bodies[0]["ortb2"]["user"].get("buyeruid") == want


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ("x", 'expect { or n, but found "'),
        ({"bidder": "x"}, 'expect { or n, but found "'),
        ({"bidder": {"customerId": 5}}, "cannot unmarshal openrtb_ext.ExtImpContxtful.CustomerId"),
    ],
)
def test_any_bad_imp_sends_nothing(ext, want):
    request = {"id": "r", "imp": [_imp("a", {"customerId": "C"}), {"id": "b", "banner": {}, "ext": ext}]}
    calls, _, errors = requests_of(ADAPTER, request, INFO)
    assert calls == []
    assert len(errors) == 1 and errors[0].message.startswith(want)


def _bid(**fields):
    return {"requestId": "a", "cpm": 1.5, "mediaType": "banner", "adm": "<ad>", **fields}


def _bids(answer, imps=None):
    request = {"imp": imps or [{"id": "a", "banner": {}}]}
    return ADAPTER.make_bids(request, RequestData("POST", "u"), ResponseData(200, orjson.dumps(answer)))


@pytest.mark.parametrize(
    ("answer", "want_bids", "want_errors"),
    [
        ([_bid()], 1, []),
        ([_bid(cpm=0)], 0, []),
        ([_bid(requestId="")], 0, []),
        ([_bid(mediaType="")], 0, ["bid has no ad media type"]),
        ([_bid(adm="")], 0, ["bid has no ad markup"]),
        ([{"traceId": "t"}], 0, []),
    ],
)
def test_bid_rules(answer, want_bids, want_errors):
    response, errors = _bids(answer)
    assert response is not None and len(response.bids) == want_bids
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_SERVER_RESPONSE, m) for m in want_errors]


@pytest.mark.parametrize("answer", [[], None, {"requestId": "a"}, "x", [_bid(width="300")], [_bid(cpm="1")], [1]])
def test_answer_not_parsed(answer):
    response, errors = _bids(answer)
    assert response is None
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.UNKNOWN, NOT_PARSED)]


def test_openrtb_bid_and_currency():
    answer = [
        _bid(width=300, height=250, creativeId="c", nurl="n", ext={"k": 1}, currency="EUR"),
        _bid(requestId="b"),
    ]
    response, _ = _bids(answer, [{"id": "a", "banner": {}}, {"id": "b", "video": {}, "native": {}}])
    assert response is not None and response.currency == "EUR"
    assert [(typed.bid, typed.bid_type) for typed in response.bids] == [
        (
            {
                "id": "contxtful-a",
                "impid": "a",
                "price": 1.5,
                "adm": "<ad>",
                "w": 300,
                "h": 250,
                "crid": "c",
                "nurl": "n",
                "ext": {"k": 1},
            },
            "banner",
        ),
        ({"id": "contxtful-b", "impid": "b", "price": 1.5, "adm": "<ad>"}, "video"),
    ]


@pytest.mark.parametrize(
    ("imps", "want"),
    [([{"id": "a", "native": {}, "banner": {}}], "native"), ([{"id": "z", "video": {}}], "banner")],
)
def test_bid_type(imps, want):
    response, _ = _bids([_bid()], imps)
    assert response is not None and response.bids[0].bid_type == want


@pytest.mark.parametrize(
    ("status", "want"), [(204, []), (400, [ErrorCode.BAD_INPUT]), (500, [ErrorCode.BAD_SERVER_RESPONSE])]
)
def test_status(status, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", "u"), ResponseData(status, b""))
    assert response is None and [e.code for e in errors] == want
