"""BigoAd's own rule over its recipe: an untyped bid's error names the request's first imp (the call,
ext rewrite and answer's wording are recipe steps, tested there)."""

from __future__ import annotations

import orjson

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.bigoad import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("bigoad", "https://b.example/?sspid={{.SspId}}"))


def test_untyped_bids_name_the_first_imp():
    bids = [
        {"id": "a", "impid": "second", "price": 1, "mtype": 3},
        {"id": "b", "impid": "first", "price": 1, "mtype": 4},
    ]
    request = {"imp": [{"id": "first"}, {"id": "second"}]}
    response, errors = bids_for(ADAPTER, request, {"seatbid": [{"bid": bids}, {"bid": [bids[0]]}]})
    assert [t.bid_type for t in response.bids] == ["native"]
    assert [e.message for e in errors] == ["unrecognized bid type in response from bigoad first"]


def test_the_first_imp_sent_with_its_bidder_ext():
    imps = [
        {"id": "1", "banner": {}, "ext": {"bidder": {"sspid": "s 1", "x": 2}, "prebid": {}}},
        {"id": "2", "ext": {}},
    ]
    calls, errors = ADAPTER.make_requests({"imp": imps}, RequestInfo("bigoad"))
    assert not errors and calls[0].uri == "https://b.example/?sspid=s 1"
    assert [imp.get("ext") for imp in orjson.loads(calls[0].body)["imp"]] == [{"sspid": "s 1", "x": 2}, {}]
