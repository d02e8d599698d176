"""Kobler's own rules: the request sanitised (no user, no device IPs, USD among the currencies), floors
in USD, the first imp's test param choosing the development endpoint, bids typed leniently."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.kobler import DEV_ENDPOINT, bid_type, build
from tests.adapters.helpers import bids_for, converter, requests_of

ADAPTER = build(AdapterConfig("kobler", "http://k.example"))
INFO = RequestInfo("kobler", convert_currency=converter("EUR"))


def _imp(imp_id, params, **fields):
    return {"id": imp_id, "banner": {"w": 300, "h": 250}, **fields, "ext": {"bidder": params}}


def test_one_sanitised_call_with_floors_in_usd():
    request = {
        "imp": [_imp("a", {}), _imp("b", {"test": True}, bidfloor=1.5, bidfloorcur="EUR")],
        "user": {"id": "u"},
        "device": {"ip": "1.2.3.4", "ipv6": "::1", "ua": "UA"},
        "cur": ["EUR"],
    }
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == [] and [call.uri for call in calls] == ["http://k.example"]
    body = bodies[0]
    assert "user" not in body and body["device"] == {"ua": "UA"} and body["cur"] == ["EUR", "USD"]
    assert (body["imp"][1]["bidfloor"], body["imp"][1]["bidfloorcur"]) == (3.0, "USD")
    assert calls[0].imp_ids == ["a", "b"]


@pytest.mark.parametrize(
    ("ext", "uri"),
    [
        ({"bidder": {"test": True}}, DEV_ENDPOINT),
        ({"bidder": {"test": False}}, "http://k.example"),
        ({"bidder": {"test": "yes"}}, "http://k.example"),  # does not decode: no test, no error
        ("text", "http://k.example"),
    ],
)
def test_first_imp_test_param_picks_the_endpoint(ext, uri):
    calls, _, errors = requests_of(ADAPTER, {"imp": [{"id": "a", "banner": {}, "ext": ext}]}, INFO)
    assert errors == [] and calls[0].uri == uri


def test_no_rate_makes_no_call_and_reports_earlier_params_errors():
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": {"test": 1}}}, _imp("b", {}, bidfloor=1, bidfloorcur="GBP")]
    calls, _, errors = requests_of(ADAPTER, {"imp": imps}, INFO)
    assert calls == [] and [error.message for error in errors] == [
        "Error parsing impExt object",
        "Currency conversion rate not found: 'GBP' => 'USD'",
    ]


@pytest.mark.parametrize(
    ("bid", "kind"),
    [
        ({"ext": {"prebid": {"type": "video"}}}, "video"),
        ({"ext": {"prebid": {"type": "native"}}}, "native"),
        ({"ext": {"prebid": {"type": "other"}}}, "banner"),
        ({"ext": {"prebid": 5}}, "banner"),
        ({"ext": "x"}, "banner"),
        ({}, "banner"),
    ],
)
def test_bid_types(bid, kind):
    assert bid_type(bid) == kind


def test_answer_currency_and_empty_body():
    request = {"imp": [_imp("a", {})]}
    answer = {"cur": "EUR", "seatbid": [{"bid": [{"id": "1", "impid": "a", "price": 1}]}]}
    result, errors = bids_for(ADAPTER, request, answer)
    assert errors == [] and result.currency == "EUR" and [bid.bid_type for bid in result.bids] == ["banner"]
    assert bids_for(ADAPTER, request, b"") == (None, [])
