"""Seeding Alliance's own rules: the account in the endpoint (the last imp's), EUR added to cur, a bad
imp failing the request, markup priced and bids typed by ext.prebid.type in its words."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.seedingalliance import account_id, bid_type, build

ADAPTER = build(AdapterConfig("seedingAlliance", "https://s.example/?ssp={{.AccountID}}"))
INFO = RequestInfo("seedingAlliance")


def _imp(imp_id, params):
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("params", "account"),
    [({}, "pbs"), ({"seatId": "s"}, "s"), ({"seatId": "s", "accountId": "a"}, "a"), ({"accountId": ""}, "pbs")],
)
def test_account_id(params, account):
    assert account_id(params) == account


def test_one_call_to_the_last_imps_account_with_eur():
    imps = [_imp("a", {"adUnitId": "t1", "accountId": "x"}), _imp("b", {"adUnitId": "t2", "seatId": "y"})]
    calls, errors = ADAPTER.make_requests({"id": "r", "cur": ["USD"], "imp": imps}, INFO)
    body = orjson.loads(calls[0].body)
    assert not errors and calls[0].uri == "https://s.example/?ssp=y" and body["cur"] == ["USD", "EUR"]
    assert [imp["tagid"] for imp in body["imp"]] == ["t1", "t2"] and calls[0].imp_ids == ["a", "b"]


def test_a_bad_imp_fails_the_request():
    calls, errors = ADAPTER.make_requests({"imp": [_imp("a", {}), _imp("b", {"adUnitId": 1})]}, INFO)
    assert calls == [] and len(errors) == 1
    assert errors[0].message.startswith("could not unmarshal openrtb_ext.ImpExtSeedingAlliance: ")


@pytest.mark.parametrize(
    ("ext", "outcome"),
    [
        ({"prebid": {"type": "native"}}, "native"),
        ({}, "bid.Ext.Prebid is empty"),
        ({"prebid": {"type": "x"}}, "invalid BidType: x"),
        (None, "could not unmarshal openrtb_ext.ExtBid: "),
    ],
)
def test_bid_type(ext, outcome):
    bid = {} if ext is None else {"ext": ext}
    try:
        assert bid_type(bid) == outcome
    except ValueError as exc:
        assert str(exc).startswith(outcome)


def test_markup_priced_and_untyped_bids_reported():
    bids = [
        {"id": "1", "impid": "a", "price": 1.5, "adm": "p=${AUCTION_PRICE}", "ext": {"prebid": {"type": "banner"}}},
        {"id": "2", "impid": "a", "price": 1, "ext": {}},
    ]
    body = orjson.dumps({"cur": "EUR", "seatbid": [{"bid": bids}]})
    result, errors = ADAPTER.make_bids({}, None, ResponseData(200, body))
    assert result.currency == "EUR" and [b.bid["adm"] for b in result.bids] == ["p=1.5"]
    assert [e.message for e in errors] == ["bid.Ext.Prebid is empty"]
