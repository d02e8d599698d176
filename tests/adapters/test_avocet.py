"""Avocet's own rules over its recipe: the failure status's wording and bids typed and given their
duration and deal priority from ``ext.avocet`` (the call is a recipe step, tested there)."""

from __future__ import annotations

import pytest

from hbserver.adapters.avocet import build
from hbserver.adapters.base import AdapterConfig
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("avocet", "https://avocet.example/bid"))


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (400, b"bad", "received status code: 400 error: bad"),
        (500, b"", "received status code: 500 error: no response body"),
    ],
)
def test_failure_status(status, body, want):
    response, errors = bids_for(ADAPTER, {"imp": []}, body, status)
    assert response is None and [e.message for e in errors] == [want]


@pytest.mark.parametrize(
    ("bid", "want"),
    [
        ({"ext": {"avocet": {"duration": 30, "deal_priority": 4}}}, ("video", 30, 4)),
        ({"api": 2}, ("video", 0, 0)),
        ({"api": 1, "ext": {"other": 1}}, ("video", 0, 0)),
        ({"api": 3, "ext": {"avocet": {"deal_priority": 2}}}, ("banner", None, 2)),
        ({}, ("banner", None, 0)),
    ],
)
def test_bid_type(bid, want):
    answer = {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, **bid}]}]}
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i"}]}, answer)
    assert response is not None and not errors and response.currency == "USD"
    typed = response.bids[0]
    duration = typed.bid_video["duration"] if typed.bid_video else None
    assert (typed.bid_type, duration, typed.deal_priority) == want


def test_undecodable_ext_fails_the_answer():
    bids = [
        {"id": "a", "impid": "i", "price": 1, "ext": {"avocet": {"duration": "x"}}},
        {"id": "b", "impid": "i", "price": 1},
        {"id": "c", "impid": "i", "price": 1, "ext": {"avocet": []}},
    ]
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i"}]}, {"seatbid": [{"bid": bids}]})
    assert response is None and len(errors) == 2
