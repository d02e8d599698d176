"""Pubnative adapter: the device's OS, the imp's media, the endpoint's query, bids of price 0."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.pubnative import build, imp_problem
from tests.adapters.helpers import bids_for, requests_of

INFO = RequestInfo(bidder="pubnative")
ADAPTER = build(AdapterConfig("pubnative", "http://p.example/bid"))
PARAMS = {"zone_id": 7, "app_auth_token": "a b&c"}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"banner": {"w": 1, "h": 2}}, None),
        ({"banner": {"w": 0, "h": 2, "format": [{"w": 3, "h": 4}]}}, None),
        ({"banner": {"w": 1}}, "Size information missing for banner"),
        ({"video": {}}, None),
        ({"native": {}}, None),
        ({"audio": {}}, "Pubnative only supports banner, video or native ads."),
    ],
)
def test_imp_problem(imp: dict[str, Any], want: str | None) -> None:
    assert imp_problem(imp) == want


def request(**device: Any) -> dict[str, Any]:
    imp = {"id": "a", "banner": {"format": [{"w": 3, "h": 4}]}, "ext": {"bidder": PARAMS}}
    return {"id": "r", "imp": [imp], "device": device}


def test_the_call() -> None:
    calls, bodies, errors = requests_of(ADAPTER, request(os="ios"), INFO)
    assert errors == []
    assert calls[0].uri == "http://p.example/bid?apptoken=a+b%26c&zoneid=7"
    assert bodies[0]["imp"][0]["banner"] == {"w": 3, "h": 4, "format": [{"w": 3, "h": 4}]}


def test_a_device_without_os_gets_no_call() -> None:
    calls, _, errors = requests_of(ADAPTER, request(ua="x"), INFO)
    assert calls == []
    assert [error.message for error in errors] == ["Impression is missing device OS information"]


def test_bids_of_price_zero_are_let_go() -> None:
    body = {"seatbid": [{"bid": [{"id": "x", "impid": "a", "price": 0}, {"id": "y", "impid": "a", "price": -1}]}]}
    response, errors = bids_for(ADAPTER, request(os="ios"), body)
    assert errors == []
    assert [(bid.bid["id"], bid.bid_type) for bid in response.bids] == [("y", "banner")]
