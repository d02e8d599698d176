"""Improve Digital adapter: publisher path in the URL, rewarded inventory, deal ids, bid typing,
answers decoded as PBS-Go decodes them."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo
from hbserver.adapters.improvedigital import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://ad.360yield.com/{PublisherId}pbs"
INFO = RequestInfo(bidder="improvedigital")
CALL = RequestData("POST", "https://ad.360yield.com/pbs")


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"w": 300, "h": 250}, **fields}
    out.setdefault("ext", {"bidder": {"placementId": 1} if params is None else params})
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("improvedigital", ENDPOINT)), request, INFO)
    return calls, bodies, [e.message for e in errors]


def answer(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("improvedigital", ENDPOINT)), request, body, status, call=CALL)


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        ({"placementId": 1, "publisherId": 1234}, "https://ad.360yield.com/1234/pbs"),
        ({"placementId": 1}, "https://ad.360yield.com/pbs"),
        ({"placementId": 1, "publisherId": 0}, "https://ad.360yield.com/pbs"),
        ({"placementId": 1, "publisherId": "1234"}, "https://ad.360yield.com/pbs"),
        ({"placementId": 1, "publisherId": 12.5}, "https://ad.360yield.com/pbs"),
        ({"placementId": 1, "PublisherID": 77}, "https://ad.360yield.com/77/pbs"),  # Go matches keys case-insensitively
    ],
)
def test_publisher_id_fills_the_endpoint(params, uri):
    calls, _, errors = run({"id": "r", "imp": [imp(params=params)]})
    assert errors == []
    assert [call.uri for call in calls] == [uri]


def test_one_call_per_imp_each_with_only_its_imp():
    calls, bodies, errors = run({"id": "r", "site": {"page": "p"}, "imp": [imp("a"), imp("b")]})
    assert errors == []
    assert [call.imp_ids for call in calls] == [["a"], ["b"]]
    assert [[i["id"] for i in body["imp"]] for body in bodies] == [["a"], ["b"]]
    assert all(body["site"] == {"page": "p"} for body in bodies)
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8"}


@pytest.mark.parametrize(
    ("prebid", "rewarded"),
    [
        ({"is_rewarded_inventory": 1}, True),
        ({"is_rewarded_inventory": 0}, None),
        ({"is_rewarded_inventory": True}, None),  # PBS-Go compares the raw JSON text with "1"
        ({"is_rewarded_inventory": 1.0}, None),
        ({}, None),
        (None, None),
    ],
)
def test_rewarded_inventory(prebid, rewarded):
    _, bodies, errors = run({"id": "r", "imp": [imp(ext={"bidder": {"placementId": 1}, "prebid": prebid})]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"].get("is_rewarded_inventory") == rewarded


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "x", "banner": {}}, "expect { or n, but found \x00"),
        ({"id": "x", "banner": {}, "ext": "aaa"}, 'expect { or n, but found "'),
        ({"id": "x", "banner": {}, "ext": {"prebid": 5}}, "expect { or n, but found 5"),
    ],
)
def test_unreadable_imp_ext_drops_only_that_imp(bad, message):
    calls, _, errors = run({"id": "r", "imp": [bad, imp("ok")]})
    assert errors == [message]
    assert [call.imp_ids for call in calls] == [["ok"]]


def bid(**fields: Any) -> dict:
    return {"id": "b", "impid": "i", "price": 1.5, "adm": "<a/>", **fields}


@pytest.mark.parametrize(
    ("ext", "dealid"),
    [
        ({"improvedigital": {"line_item_id": 42, "buying_type": "classic"}}, "42"),
        ({"improvedigital": {"line_item_id": 42, "buying_type": "pmp-deal"}}, "42"),
        ({"improvedigital": {"line_item_id": 42, "buying_type": "rtb"}}, None),
        ({"improvedigital": {"line_item_id": 0, "buying_type": "deal"}}, None),
        ({"improvedigital": None}, None),
        ({}, None),
    ],
)
def test_deal_id_from_line_item(ext, dealid):
    response, errors = answer({"imp": [imp()]}, {"seatbid": [{"bid": [bid(ext=ext)]}]})
    assert errors == []
    assert response.bids[0].bid.get("dealid") == dealid


@pytest.mark.parametrize(
    "ext",
    [
        {"improvedigital": "x"},
        {"improvedigital": {"line_item_id": "42", "buying_type": "deal"}},
        {"improvedigital": {"line_item_id": 42, "buying_type": 7}},
        [],
    ],
)
def test_malformed_bid_ext_fails_the_answer(ext):
    response, errors = answer({"imp": [imp()]}, {"seatbid": [{"bid": [bid(ext=ext)]}]})
    assert response is None
    assert len(errors) == 1 and errors[0].code == ErrorCode.BAD_SERVER_RESPONSE


@pytest.mark.parametrize(
    ("imp_fields", "mtype", "want"),
    [
        ({"banner": None, "audio": {}}, None, "audio"),
        ({"banner": None, "native": {"request": "{}"}}, None, "native"),
        ({"video": {"mimes": ["video/mp4"]}}, 2, "video"),
        ({"video": {"mimes": ["video/mp4"]}}, 1, "banner"),
    ],
)
def test_bid_type(imp_fields, mtype, want):
    extra = {} if mtype is None else {"mtype": mtype}
    response, errors = answer({"imp": [imp(**imp_fields)]}, {"seatbid": [{"bid": [bid(**extra)]}]})
    assert errors == []
    assert response.bids[0].bid_type == want


@pytest.mark.parametrize(
    ("body", "cur"),
    [
        ({"seatbid": [{"bid": [bid()]}], "cur": "EUR"}, "EUR"),
        ({"seatbid": [{"bid": [bid()]}]}, "USD"),
    ],
)
def test_currency(body, cur):
    response, _ = answer({"imp": [imp()]}, body)
    assert response.currency == cur


@pytest.mark.parametrize(
    ("body", "status", "errors_want"),
    [
        (b"null", 200, []),
        (b"", 200, ["expect { or n, but found \x00"]),
        (b"[1]", 200, ["expect { or n, but found ["]),
        (b"{}", 500, ["Unexpected status code: 500. Run with request.debug = 1 for more info"]),
    ],
)
def test_answers_without_bids(body, status, errors_want):
    response, errors = answer({"imp": [imp()]}, body, status)
    assert response is None
    assert [e.message for e in errors] == errors_want
