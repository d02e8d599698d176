"""Readpeak adapter: params decoded into one struct across imps, the site's ids, the answer's meta."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.readpeak import build
from tests.adapters.helpers import bids_for, requests_of

INFO = RequestInfo(bidder="readpeak")
ADAPTER = build(AdapterConfig("readpeak", "https://r.example/bid"))


def imp(imp_id: str, params: Any) -> dict[str, Any]:
    return {"id": imp_id, "native": {"request": "{}"}, "ext": {"bidder": params}}


def test_a_param_left_out_keeps_an_earlier_imps_value() -> None:
    request = {
        "id": "r",
        "site": {"id": "s0", "publisher": {"id": "old", "name": "n"}},
        "imp": [
            imp("a", {"publisherId": "p1", "siteId": "s1", "tagId": "t1", "bidfloor": 2}),
            imp("b", {"tagId": 5}),  # fails: dropped, its error kept
            imp("c", {"publisherId": "p2"}),
        ],
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert [error.code for error in errors] == [ErrorCode.UNKNOWN]
    assert calls[0].imp_ids == ["a", "b", "c"]
    sent = bodies[0]
    assert [(i["id"], i.get("tagid"), i.get("bidfloor")) for i in sent["imp"]] == [("a", "t1", 2), ("c", "t1", 2)]
    assert sent["site"] == {"id": "s1", "publisher": {"id": "p2"}}


def test_no_imp_that_decodes_is_no_call() -> None:
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "app": {}, "imp": [imp("a", [])]}, INFO)
    assert calls == []
    assert [(e.message, e.code) for e in errors] == [
        ("Failed to find compatible impressions for request r", ErrorCode.BAD_INPUT)
    ]


def test_the_answer() -> None:
    request = {"id": "r", "imp": [imp("a", {"publisherId": "p"})]}
    native = {"id": "x", "impid": "a", "price": 1.5, "mtype": 4, "burl": "u?p=${AUCTION_PRICE}", "adomain": ["d"]}
    body = {"seatbid": [{"bid": [native, {"id": "y", "impid": "a", "price": 1, "mtype": 2}]}]}
    response, errors = bids_for(ADAPTER, request, body)
    assert [e.message for e in errors] == ['Failed to find impression type "a"']
    (bid,) = response.bids
    assert (bid.bid["burl"], bid.bid_type, bid.bid_meta) == ("u?p=1.5", "native", {"advertiserDomains": ["d"]})
