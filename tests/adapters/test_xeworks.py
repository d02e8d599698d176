"""Xeworks is bematterfull's adapter (test_bematterfull.py) with its own recipe: its endpoint macros
and words."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.xeworks import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("xeworks", "http://x.example/?pid={{.SourceId}}&host={{.Host}}"))
REQUEST = {"id": "r", "imp": [{"id": "1", "banner": {}, "ext": {"bidder": {"env": "e", "pid": "p"}}}]}


def test_endpoint_from_the_params_and_xeworks_words():
    calls, _, errors = requests_of(ADAPTER, REQUEST, RequestInfo("xeworks"))
    assert not errors and calls[0].uri == "http://x.example/?pid=p&host=e"
    bad = {"id": "r", "imp": [{"id": "1", "banner": {}, "ext": {"bidder": {"env": 1}}}]}
    _, _, errors = requests_of(ADAPTER, bad, RequestInfo("xeworks"))
    assert errors[0].message.startswith("Failed to deserialize Xeworks extension: ")
    answer, errors = bids_for(ADAPTER, REQUEST, b"", status=503)
    assert answer is None and [(e.message, e.code) for e in errors] == [
        ("Bidder Xeworks is unavailable. Please contact the bidder support.", ErrorCode.BAD_INPUT)
    ]
    answer, errors = bids_for(ADAPTER, REQUEST, {"seatbid": [{"bid": [{"id": "a", "impid": "1", "price": 1}]}]})
    assert answer is not None and not answer.bids and errors[0].message.startswith("Failed to parse Bid[0].Ext: ")
