"""Loyal's own rule: bids typed by ext.prebid.type (banner, video, native), anything else failing the
whole answer in Loyal's words (the calls are recipe steps, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, BidderError
from hbserver.adapters.loyal import bid_type, build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("loyal", "http://l.example"))


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"impid": "1", "ext": {"prebid": {"type": "video"}}}, "video"),
        ({"impid": "1", "ext": {"Prebid": {"Type": "native"}}}, "native"),
        ({"impid": "1", "ext": {"prebid": {"type": "audio"}}}, BidderError("invalid BidType: audio")),
        ({"impid": "1", "ext": {"prebid": {}}}, BidderError("invalid BidType: ")),
        ({"impid": "1", "ext": {}}, BidderError("imp 1 with unknown media type")),
        (
            {"impid": "1", "ext": 5},
            BidderError("unable to deserialize imp 1 bid.ext, error: expect { or n, but found 5"),
        ),
    ],
)
def test_bid_type(bid, want):
    assert bid_type(bid) == want


def test_one_bad_bid_fails_the_answer():
    good = {"id": "a", "impid": "1", "price": 1, "ext": {"prebid": {"type": "banner"}}}
    result, errors = bids_for(ADAPTER, {"imp": [{"id": "1"}]}, {"cur": "EUR", "seatbid": [{"bid": [good]}]})
    assert errors == [] and result.currency == "EUR" and [bid.bid_type for bid in result.bids] == ["banner"]
    answer = {"seatbid": [{"bid": [good, {"id": "b", "impid": "2"}]}]}
    assert bids_for(ADAPTER, {"imp": [{"id": "1"}]}, answer) == (
        None,
        [BidderError("unable to deserialize imp 2 bid.ext, error: expect { or n, but found \x00")],
    )
