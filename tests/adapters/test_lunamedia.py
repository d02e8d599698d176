"""LunaMedia's own rule over advangelists' adapter: the errors in imp order (a banner without a size
reported where its imp stands, not after every params error)."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.lunamedia import build
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("lunamedia", "http://l.example/?pid={{.PublisherID}}"))
INFO = RequestInfo("lunamedia")


def test_errors_in_imp_order_and_one_call_per_params():
    imps = [
        {"id": "1", "banner": {}, "ext": {"bidder": {"pubid": "p"}}},
        {"id": "2", "banner": {}, "ext": {"bidder": {"pubid": ""}}},
        {"id": "3", "banner": {"format": [{"w": 3, "h": 4}, {"w": 5, "h": 6}]}, "ext": {"bidder": {"pubid": "p"}}},
        {"id": "4", "video": {}, "ext": {"bidder": {"pubid": "q", "placement": "t"}}},
    ]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps, "site": {"domain": "d"}}, INFO)
    assert [error.message for error in errors] == [
        "Expected at least one banner.format entry or explicit w/h",
        "No pubid value provided",
    ]
    assert [call.uri for call in calls] == ["http://l.example/?pid=p", "http://l.example/?pid=q"]
    assert bodies[0]["imp"] == [{"id": "3", "banner": {"w": 3, "h": 4, "format": [{"w": 5, "h": 6}]}}]
    assert bodies[1]["imp"][0]["tagid"] == "t" and bodies[0]["site"] == {}
