"""Madvertise's own rules over its recipe: the zone id checks (naming the imp) and bids typed by
their creative attributes (the call, the same-zone rule and the answer's wording are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.madvertise import build, madvertise_type
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("madvertise", "https://m.example/bid{{.ZoneID}}"))


@pytest.mark.parametrize(
    ("attr", "kind"),
    [
        (None, "banner"),
        ([], "banner"),
        ([1, 2], "banner"),
        ([6], "video"),
        ([3, 7], "video"),
        ([16], "video"),
        ("6", "banner"),
        ([True], "banner"),
    ],
)
def test_bid_type_from_attributes(attr, kind):
    assert madvertise_type({} if attr is None else {"attr": attr}) == kind


@pytest.mark.parametrize(
    ("zone", "error"),
    [
        ("", "ext.bidder.zoneId not provided; ImpID=i1"),
        ("/12345", "The minLength of zone ID is 7; ImpID=i1"),
        ("/1234é", None),  # 7 bytes, as Go's len counts
        ("/123456", None),
    ],
)
def test_zone_id_checks(zone, error):
    request = {"id": "r", "imp": [{"id": "i1", "banner": {"w": 1, "h": 1}, "ext": {"bidder": {"zoneId": zone}}}]}
    calls, _, errors = requests_of(ADAPTER, request, RequestInfo("madvertise"))
    assert [e.message for e in errors] == ([] if error is None else [error])
    assert [c.uri for c in calls] == ([] if error else [f"https://m.example/bid{zone}"])


def test_answer_currency_and_types():
    request = {"imp": [{"id": "i1"}]}
    bids = [{"id": "a", "impid": "i1", "price": 1, "attr": [6]}, {"id": "b", "impid": "i1", "price": 1}]
    response, errors = bids_for(ADAPTER, request, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert not errors and response.currency == "EUR"
    assert [t.bid_type for t in response.bids] == ["video", "banner"]
