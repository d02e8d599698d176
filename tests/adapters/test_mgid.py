"""Mgid's own rules: the one call, its path, tmax and each imp's tagid, floor and currency (the
params' wording and the answer are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mgid import build, mgid_imp
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mgid", "https://mgid.example/p/"))
ZERO = {"accountId": "", "placementId": "", "cur": "", "currency": "", "bidfloor": 0, "bidFloor": 0}


@pytest.mark.parametrize(
    ("params", "imp", "want"),
    [
        ({}, {"id": "i"}, {"id": "i", "tagid": "i"}),
        ({"placementId": "p"}, {"id": "i", "tagid": "t"}, {"id": "i", "tagid": "p/i"}),
        ({"bidfloor": 1.5, "bidFloor": 2}, {"id": "i", "bidfloor": 9}, {"id": "i", "tagid": "i", "bidfloor": 1.5}),
        ({"bidfloor": -1, "bidFloor": 2}, {"id": "i"}, {"id": "i", "tagid": "i", "bidfloor": 2}),
        ({"currency": "USD", "cur": "GBP"}, {"id": "i"}, {"id": "i", "tagid": "i", "bidfloorcur": "GBP"}),
        ({"currency": "EUR", "cur": "GBP"}, {"id": "i"}, {"id": "i", "tagid": "i", "bidfloorcur": "EUR"}),
        ({"cur": "USD"}, {"id": "i", "bidfloorcur": "JPY"}, {"id": "i", "tagid": "i", "bidfloorcur": "JPY"}),
    ],
)
def test_imp_from_params(params, imp, want):
    assert mgid_imp(imp, {**ZERO, **params}) == want


def test_one_call_to_the_first_account():
    imps = [
        {"id": "a", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"placementId": "x"}}},
        {"id": "b", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"accountId": "77", "BIDFLOOR": 3}}},
        {"id": "c", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"accountId": "88"}}},
    ]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mgid"))
    assert not errors and [c.uri for c in calls] == ["https://mgid.example/p/77"]
    assert bodies[0]["tmax"] == 200 and [i["tagid"] for i in bodies[0]["imp"]] == ["x/a", "b", "c"]
    assert bodies[0]["imp"][1]["bidfloor"] == 3


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([{"id": "a", "ext": {"bidder": {"placementId": "x"}}}], "accountId is not set"),
        ([{"id": "a", "ext": {"bidder": {"accountId": 1}}}], "cannot unmarshal openrtb_ext.ExtImpMgid.AccountId"),
    ],
)
def test_request_failures(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "tmax": 50, "imp": imps}, RequestInfo("mgid"))
    assert not calls and len(errors) == 1 and errors[0].message.startswith(error)


def test_bids_typed_by_crtype():
    bids = [
        {"id": "1", "impid": "a", "price": 1, "ext": {"crtype": "native"}},
        {"id": "2", "impid": "a", "price": 1, "ext": {"crtype": 5}},
        {"id": "3", "impid": "a", "price": 1},
    ]
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert not errors and response.currency == "EUR"
    assert [t.bid_type for t in response.bids] == ["native", "banner", "banner"]
