"""LmKiviads runs bematterfull's adapter class over its own recipe: bids typed by ext.prebid.type with
a failure naming the bid's index, the 503 in LmKiviads' words (the shared rows are in test_steps.py)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.lm_kiviads import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("lm_kiviads", "http://x.example/?pid={{.SourceId}}&host={{.Host}}"))


@pytest.mark.parametrize(
    ("status", "seatbid", "types", "errors"),
    [
        (200, [{"bid": [{"id": "a", "impid": "1", "ext": {"prebid": {"type": "video"}}}]}], ["video"], []),
        (200, [{"bid": [{"id": "a", "impid": "1", "ext": 1}, {"id": "b", "ext": {"prebid": {"type": "banner"}}}]}],
         ["banner"], ["Failed to parse Bid[0].Ext: expect { or n, but found 1"]),
        (503, [], None, ["Bidder LmKiviads is unavailable. Please contact the bidder support."]),
    ],
)  # fmt: skip
def test_bids(status, seatbid, types, errors):
    response, got = bids_for(ADAPTER, {"imp": [{"id": "1"}]}, {"seatbid": seatbid}, status=status)
    assert (None if response is None else [t.bid_type for t in response.bids]) == types
    assert [e.message for e in got] == errors


def test_one_call_per_imp_to_its_env_and_pid():
    imps = [{"id": str(n), "banner": {}, "ext": {"bidder": {"env": f"e{n}", "pid": f"p{n}"}}} for n in (1, 2)]
    calls, errors = ADAPTER.make_requests({"imp": imps}, RequestInfo("lm_kiviads"))
    assert errors == []
    assert [call.uri for call in calls] == ["http://x.example/?pid=p1&host=e1", "http://x.example/?pid=p2&host=e2"]
