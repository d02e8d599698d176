"""Vidoomy's own rules over its recipe: the banner's sizes checked (then sized by the recipe) and the
bids typed by their imp, a bid for no imp failing the answer."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.vidoomy import banner_problem, build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("vidoomy", "https://v.example/"))


@pytest.mark.parametrize(
    ("banner", "problem"),
    [
        (None, None),
        ({"w": 300, "h": 250}, None),
        ({"w": 0, "h": 250, "format": [{"w": 1, "h": 2}]}, "invalid sizes provided for Banner 0 x 250"),
        ({"w": 300, "format": [{"w": 1, "h": 2}]}, None),
        ({"w": 300}, "no sizes provided for Banner []"),
        ({"format": []}, "no sizes provided for Banner []"),
    ],
)
def test_banner_problem(banner, problem):
    assert banner_problem({"id": "1"} if banner is None else {"id": "1", "banner": banner}) == problem


def test_one_call_per_imp_a_bad_banner_dropped():
    imps = [
        {"id": "1", "banner": {"w": 300, "format": [{"w": 1, "h": 2}]}},
        {"id": "2", "banner": {"w": 0, "h": 0}},
        {"id": "3", "video": {"mimes": []}},
    ]
    calls, bodies, errors = requests_of(ADAPTER, {"imp": imps, "device": {"ip": "1.2.3.4"}}, RequestInfo("vidoomy"))
    assert [call.imp_ids for call in calls] == [["1"], ["3"]]
    assert bodies[0]["imp"][0]["banner"] == {"w": 1, "h": 2, "format": [{"w": 1, "h": 2}]}
    assert calls[0].headers["X-Forwarded-For"] == "1.2.3.4"
    assert [(e.message, e.code) for e in errors] == [("invalid sizes provided for Banner 0 x 0", ErrorCode.UNKNOWN)]


def test_bids_are_typed_by_their_imp():
    request = {"imp": [{"id": "b", "banner": {}, "video": {}}, {"id": "n", "native": {}}, {"id": "x", "banner": {}}]}
    bids = [{"id": str(n), "impid": impid, "price": 1} for n, impid in enumerate(["b", "n", "x"])]
    response, errors = bids_for(ADAPTER, request, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert [(t.bid["impid"], t.bid_type) for t in response.bids] == [("b", "video"), ("x", "banner")]
    assert response.currency == "USD" and not errors
    response, errors = bids_for(ADAPTER, request, {"seatbid": [{"bid": [*bids, {"id": "z", "impid": "z"}]}]})
    assert response is None and [e.message for e in errors] == ["Unknown ad unit code 'z'"]
