"""Mobfox's own rules: the route picked from the first imp's key or TagID, only that imp sent (the
answer is recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.mobfoxpb import NO_KEY, build, mobfox_uri
from tests.adapters.helpers import bids_for, requests_of

TEMPLATE = "https://m.example/?c=__route__&m=__method__&key=__key__"
ADAPTER = build(AdapterConfig("mobfoxpb", TEMPLATE))


@pytest.mark.parametrize(
    ("ext", "uri"),
    [
        ({"bidder": {"key": "k"}}, "https://m.example/?c=rtb&m=req&key=k"),
        ({"bidder": {"key": "k", "TagID": "t"}}, "https://m.example/?c=rtb&m=req&key=k"),
        ({"bidder": {"TagID": "t"}}, "https://m.example/?c=o&m=ortb&key=__key__"),
        ({"bidder": {"key": "", "TagID": "t"}}, "https://m.example/?c=o&m=ortb&key=__key__"),
        ({"bidder": {"key": ""}}, "https://m.example/?c=&m=&key=__key__"),
        ({"bidder": {"tagid": "t"}}, None),
        ({"bidder": {"key": 5}}, None),
        ({"mobfoxpb": {"key": "k"}}, None),
        ("", None),
    ],
)
def test_route_from_the_ext(ext, uri):
    assert mobfox_uri(TEMPLATE, ext) == uri


def test_only_the_first_imp_is_sent():
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": {"key": "k"}}}, {"id": "b", "banner": {}, "ext": {}}]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mobfoxpb"))
    assert not errors and [c.imp_ids for c in calls] == [["a"]] and len(bodies[0]["imp"]) == 1
    imps.reverse()
    assert requests_of(ADAPTER, {"id": "r", "imp": imps}, RequestInfo("mobfoxpb"))[2][0].message == NO_KEY


def test_bids_typed_by_their_imp():
    request = {"imp": [{"id": "v", "video": {}}, {"id": "n", "native": {}}, {"id": "x"}]}
    bids = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(["v", "n", "x", "gone"])]
    response, errors = bids_for(ADAPTER, request, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert [t.bid_type for t in response.bids] == ["video", "native", "banner"] and response.currency == "USD"
    assert [e.message for e in errors] == ['Failed to find impression "gone"']
