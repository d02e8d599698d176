"""MgidX: emtv's request rule over its own recipe (imps without ids left out, the first bad imp
stopping the request) and its bid typing by ext.prebid.type."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mgidx import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mgidX", "https://x.example/pserver"))


def _imp(imp_id, bidder):
    return {"id": imp_id, "banner": {"w": 1, "h": 1}, "ext": {"bidder": bidder}}


def test_imps_without_ids_are_left_out():
    imps = [_imp("a", {}), _imp("b", {"placementId": "p"}), _imp("c", {"endpointId": "e"})]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mgidX"))
    assert not errors and [c.imp_ids for c in calls] == [["b"], ["c"]]
    assert [b["imp"][0]["ext"] for b in bodies] == [
        {"bidder": {"type": "publisher", "placementId": "p"}},
        {"bidder": {"type": "network", "endpointId": "e"}},
    ]


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([_imp("a", {})], "found no valid impressions"),
        ([_imp("a", {"placementId": "p"}), _imp("b", {"placementId": 1})], "cannot unmarshal"),
    ],
)
def test_requests_that_fail(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mgidX"))
    assert not calls and len(errors) == 1 and errors[0].message.startswith(error)


@pytest.mark.parametrize(
    ("ext", "error"),
    [
        (None, "unable to deserialize imp i bid.ext"),
        ({}, "imp i with unknown media type"),
        ({"prebid": {"type": "video"}}, None),
    ],
)
def test_bid_typing(ext, error):
    bid = {"id": "1", "impid": "i", "price": 1, **({} if ext is None else {"ext": ext})}
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    if error is None:
        assert not errors and response.currency == "EUR" and response.bids[0].bid_type == "video"
    else:
        assert response is None and [e.message for e in errors] == [error]
