"""Bematterfull's own rule over its recipe: bids typed by ext.prebid.type, a failure naming the bid's
index (the shared step's rows are in test_steps.py; the calls and wording are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.bematterfull import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("bematterfull", "http://x.example/?pid={{.SourceId}}&host={{.Host}}"))


@pytest.mark.parametrize(
    ("seatbid", "types", "errors"),
    [
        ([{"bid": [{"id": "a", "impid": "1", "price": 1, "ext": {"prebid": {"type": "native"}}}]}], ["native"], []),
        (
            [{"bid": [{"id": "a", "impid": "1", "price": 1, "ext": {"prebid": {"type": "x"}}}]}],
            [],
            [
                "Bid[0].Ext.Prebid.Type expects one of the following values: 'banner', 'native', 'video', 'audio', "
                "got 'x'"
            ],
        ),
        ([], None, ["Array SeatBid cannot be empty"]),
    ],
)
def test_bids(seatbid, types, errors):
    response, got = bids_for(ADAPTER, {"imp": [{"id": "1"}]}, {"cur": "EUR", "seatbid": seatbid})
    assert (None if response is None else [t.bid_type for t in response.bids]) == types
    assert [e.message for e in got] == errors
