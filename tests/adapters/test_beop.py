"""BeOp's own rules over its recipe: the endpoint's query from the first imp's ids and the statuses
read as an answer (the rest are recipe steps, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.beop import beop_endpoint, build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("beop", "http://beop.example/bid?z=1"))


@pytest.mark.parametrize(
    ("endpoint", "params", "want"),
    [
        ("http://b.example/bid", {"pid": "p 1", "nid": "", "nptnid": "x"}, "http://b.example/bid?nptnid=x&pid=p+1"),
        ("http://b.example/bid?z=1&pid=old", {"pid": "new"}, "http://b.example/bid?pid=new&z=1"),
        ("http://b.example/bid?pid=old", {"pid": ""}, "http://b.example/bid?pid=old"),
        ("http://b.example/bid", {}, "http://b.example/bid"),
    ],
)
def test_beop_endpoint(endpoint, params, want):
    assert beop_endpoint(endpoint, params) == want


def test_the_first_imps_ids_name_the_endpoint():
    imps = [{"id": "1", "banner": {}, "ext": {"bidder": {"nid": "n"}}}, {"id": "2", "ext": {"bidder": {"pid": "p"}}}]
    calls, errors = ADAPTER.make_requests({"imp": imps}, RequestInfo("beop"))
    assert [c.uri for c in calls] == ["http://beop.example/bid?nid=n&z=1"] and not errors


BID = {"id": "b", "impid": "1", "price": 1, "mtype": 2}


@pytest.mark.parametrize(
    ("status", "types", "errors"),
    [
        (500, ["video"], []),  # any status but 204, 400 and 503 is read
        (400, None, ["Unexpected status code: 400. Run with request.debug = 1 for more info."]),
        (503, None, ["Service Unavailable. Status Code: [ 503 ] "]),
    ],
)
def test_statuses(status, types, errors):
    response, got = bids_for(ADAPTER, {"imp": [{"id": "1"}]}, {"seatbid": [{"bid": [BID]}]}, status)
    assert (None if response is None else [t.bid_type for t in response.bids]) == types
    assert [e.message for e in got] == errors
