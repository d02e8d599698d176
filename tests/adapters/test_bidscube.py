"""BidsCube's own rules over its recipe: the imp's ext replaced by its bidder member and bids typed
by ext.prebid.type as jsonparser finds it (the statuses' wording is a recipe step)."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.bidscube import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("bidscube", "http://b.example/?c=o"))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": "p"}, "prebid": {}}, {"placementId": "p"}),
        ({"bidder": None}, None),  # null is a member: sent as null
        ({"Bidder": {"a": 1}}, "bidder parameters required"),  # a map key: matched exactly
        (None, "bidder parameters required"),
        ("x", 'expect { or n, but found "'),
    ],
)
def test_imp_ext(ext, want):
    calls, errors = ADAPTER.make_requests({"imp": [{"id": "i", "banner": {}, "ext": ext}]}, RequestInfo("bidscube"))
    if isinstance(want, str):
        assert calls == [] and [e.message for e in errors] == [want]
    else:
        assert orjson.loads(calls[0].body)["imp"][0].get("ext") == want and not errors


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"prebid": {"type": "native"}}, "native"),
        ({"prebid": {"type": "audio"}}, "banner"),
        ({"prebid": {}}, "unable to read bid.ext.prebid.type: Key path not found"),
        ({"prebid": {"type": 1}}, "unable to read bid.ext.prebid.type: Value is not a string: 1"),
    ],
)
def test_bid_type(ext, want):
    answer = {"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "ext": ext}]}]}
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i"}]}, answer)
    assert [t.bid_type for t in response.bids] + [e.message for e in errors] == [want]
