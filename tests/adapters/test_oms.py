"""OMS's own rules: the publisher id in the endpoint, the call without headers, a video bid's facts
(the params' reading and the answer's wording are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.oms import build, oms_uri, oms_video
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("oms", "https://oms.example/pbs"))


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        ({"pid": "p", "publisherId": 5}, "https://oms.example/pbs?publisherId=p"),
        ({"pid": "", "publisherId": 5}, "https://oms.example/pbs?publisherId=5"),
        ({"pid": "", "publisherId": -5}, "https://oms.example/pbs?publisherId="),
    ],
)
def test_uri(params, uri):
    assert oms_uri("https://oms.example/pbs", params) == uri


@pytest.mark.parametrize(
    ("ext", "uri", "error"),
    [
        ({"bidder": {"publisherId": 7}}, "https://oms.example/pbs?publisherId=7", None),
        (None, "https://oms.example/pbs", None),
        ("x", None, 'expect { or n, but found "'),
    ],
)
def test_one_call_from_the_first_imp(ext, uri, error):
    imp = {"id": "a", "banner": {}, **({} if ext is None else {"ext": ext})}
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp, {"id": "b"}]}, RequestInfo("oms"))
    assert [c.uri for c in calls] == ([uri] if uri else [])
    assert [e.message for e in errors] == ([error] if error else [])
    assert all(not c.headers and c.imp_ids == ["a", "b"] for c in calls)


def test_video_facts_for_video_bids_only():
    assert oms_video({"dur": 10, "cat": ["IAB1", "IAB2"]}) == {"duration": 10, "primary_category": "IAB1"}
    bids = [{"id": "1", "impid": "a", "price": 1, "mtype": 2, "dur": 5}, {"id": "2", "impid": "a", "price": 1}]
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert not errors and response.currency == "USD"
    assert [(t.bid_type, t.bid_video) for t in response.bids] == [
        ("video", {"duration": 5, "primary_category": ""}),
        ("banner", None),
    ]
