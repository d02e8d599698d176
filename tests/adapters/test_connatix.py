"""Connatix adapter: the device IP rule, the imp rewrite (ext.connatix, banner size, display manager
version, floor in USD), the data centre query, headers and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.connatix import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "http://example.com"
ADAPTER = build(AdapterConfig("connatix", ENDPOINT))
INFO = RequestInfo(bidder="connatix", convert_currency=converter("EUR", 1.5))
DEVICE = {"ip": "1.2.3.4"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"placementId": "p"} if params is None else params, fields, {"banner": {"w": 1, "h": 2}})


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "device": DEVICE, **request}, INFO)
    return calls, bodies, [e.message for e in errors]


@pytest.mark.parametrize("device", [None, {}, {"ip": ""}, {"ua": "u"}])
def test_device_ip_required(device):
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": [imp()], "device": device}, INFO)
    assert (calls, [e.message for e in errors]) == ([], ["Device IP is required"])


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": "p", "viewabilityPercentage": 0.5}, "gpid": "g"},
         {"connatix": {"placementId": "p", "viewabilityPercentage": 0.5}, "gpid": "g"}),
        ({"bidder": {"placementId": ""}}, {"connatix": {}}),
        ({"gpid": "g"}, {"connatix": {}, "gpid": "g"}),
    ],
)  # fmt: skip
def test_imp_ext(ext, want):
    _, bodies, errors = run({"imp": [imp(ext=ext)]})
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": 1}},
         'cannot unmarshal openrtb_ext.ExtImpConnatix.PlacementId: expects " or n, but found 1'),
        ({"bidder": "x"}, 'cannot unmarshal connatix.impExtIncoming.Bidder: expect { or n, but found "'),
        ("x", 'expect { or n, but found "'),
    ],
)  # fmt: skip
def test_bad_imp_is_left_out(ext, want):
    calls, _, errors = run({"imp": [imp("a", ext=ext), imp("b")]})
    assert [call.imp_ids for call in calls] == [["b"]]
    assert errors == [want]


@pytest.mark.parametrize(
    ("fields", "app", "want"),
    [
        ({"banner": {"format": [{"w": 3, "h": 4}]}}, None, {"banner": {"format": [{"w": 3, "h": 4}], "w": 3, "h": 4}}),
        ({"banner": {"w": 5, "format": [{"w": 3, "h": 4}]}}, None, {"banner": {"w": 5, "format": [{"w": 3, "h": 4}]}}),
        ({}, {"ext": {"prebid": {"source": "s", "version": "1"}}}, {"displaymanagerver": "s-1"}),
        ({"displaymanagerver": "x"}, {"ext": {"prebid": {"source": "s", "version": "1"}}}, {"displaymanagerver": "x"}),
        ({}, {"ext": {"prebid": {"source": "s", "version": 1}}}, {"displaymanagerver": None}),
        ({"bidfloor": 2, "bidfloorcur": "EUR"}, None, {"bidfloor": 3.0, "bidfloorcur": "USD"}),
        ({"bidfloor": 2, "bidfloorcur": "usd"}, None, {"bidfloor": 2, "bidfloorcur": "usd"}),
    ],
)  # fmt: skip
def test_imp_rewrite(fields, app, want):
    _, bodies, errors = run({"imp": [imp(**fields)], **({"app": app} if app else {})})
    assert errors == []
    assert {key: bodies[0]["imp"][0].get(key) for key in want} == want


def test_floor_without_rate_drops_the_imp():
    calls, _, errors = run({"imp": [imp(bidfloor=1, bidfloorcur="JPY")]})
    assert (calls, errors) == ([], ["Currency conversion rate not found: 'JPY' => 'USD'"])


@pytest.mark.parametrize(
    ("uid", "want"),
    [(None, ENDPOINT), ("1-x", ENDPOINT + "?dc=us-east-2"), (" 2-x", ENDPOINT + "?dc=us-west-2"),
     ("3-x", ENDPOINT + "?dc=eu-west-1"), ("4-x", ENDPOINT), ("  ", ENDPOINT)],
)  # fmt: skip
def test_data_centre(uid, want):
    calls, _, _ = run({"imp": [imp(), imp("j")], **({"user": {"buyeruid": uid}} if uid else {})})
    assert [(call.uri, call.imp_ids) for call in calls] == [(want, ["i"]), (want, ["j"])]


def test_headers():
    calls, _, _ = run({"imp": [imp()], "device": {"ip": "1.2.3.4", "ipv6": "::1", "ua": "u"}})
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json", "Accept": "application/json", "User-Agent": "u",
        "X-Forwarded-For": "::1, 1.2.3.4",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("ext", "want"),
    [({"connatix": {"mediaType": "video"}}, "video"), ({"connatix": {"mediaType": "banner"}}, "banner"),
     ({"connatix": "x"}, "banner"), (None, "banner")],
)  # fmt: skip
def test_bid_type(ext, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({"ext": ext} if ext else {})}
    response, errors = bids_for(ADAPTER, {"id": "r", "imp": [imp()]}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert errors == [] and response is not None
    assert (response.currency, [t.bid_type for t in response.bids]) == ("USD", [want])
