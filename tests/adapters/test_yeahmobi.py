"""Yeahmobi's own rules: the endpoint from the first imp whose params decode, the native request
wrapped, bids typed by imp with their duration."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.yeahmobi import BID_EXT_ERROR, build, wrapped_native
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("yeahmobi", "https://{{.Host}}/prebid/bid"))
INFO = RequestInfo("yeahmobi")


def _imp(imp_id: str, ext: Any, **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **(media or {"banner": {}}), "ext": ext}


def test_the_first_imp_rules_and_earlier_failures_make_no_call():
    good = _imp("b", {"bidder": {"zoneId": "a b&"}})
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [good, _imp("c", "x")]}, INFO)
    assert not errors and calls[0].uri == "https://gw-a+b%26-bid.yeahtargeter.com/prebid/bid"
    assert calls[0].imp_ids == ["b", "c"] and len(bodies[0]["imp"]) == 2
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [_imp("a", "x"), good]}, INFO)
    assert calls == [] and [error.message for error in errors] == ['expect { or n, but found "']
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [_imp("a", {"bidder": {"zoneId": 1}})]}, INFO)
    assert calls == [] and len(errors) == 1


@pytest.mark.parametrize(
    ("request_text", "wrapped"),
    [
        ('{"ver":"1.2","b":1.0,"a":"<x>"}', '{"native":{"a":"\\u003cx\\u003e","b":1,"ver":"1.2"}}'),
        ("null", '{"native":null}'),
        ('{"native":{}}', None),
        ("[1]", None),
        ("not json", None),
    ],
)
def test_native_request_wrapped(request_text, wrapped):
    imp = {"id": "n", "native": {"request": request_text, "ver": "1.2"}}
    out = wrapped_native(imp)
    assert out["native"]["request"] == (request_text if wrapped is None else wrapped)
    assert out["native"]["ver"] == "1.2"


REQUEST = {"id": "r", "imp": [_imp("b", {}), _imp("v", {}, video={"mimes": []}), _imp("n", {}, native={"request": ""})]}


@pytest.mark.parametrize(
    ("bid", "kind", "duration"),
    [
        ({"impid": "b"}, "banner", 0),
        ({"impid": "v", "ext": {"video": {"duration": 30}}}, "video", 30),
        ({"impid": "n", "ext": {"other": 1}}, "native", 0),
        ({"impid": "zz"}, "banner", 0),
    ],
)
def test_bids_typed_by_imp_with_duration(bid, kind, duration):
    answer, errors = bids_for(ADAPTER, REQUEST, {"cur": "EUR", "seatbid": [{"bid": [{"id": "1", "price": 1, **bid}]}]})
    assert not errors and answer is not None and answer.currency == "USD"
    assert (answer.bids[0].bid_type, answer.bids[0].bid_video) == (kind, {"duration": duration, "primary_category": ""})


def test_a_bid_ext_that_does_not_decode_fails_the_answer():
    body = {"seatbid": [{"bid": [{"id": "1", "impid": "b", "price": 1, "ext": {"video": {"duration": "x"}}}]}]}
    assert bids_for(ADAPTER, REQUEST, body)[1][0].message == BID_EXT_ERROR
    assert bids_for(ADAPTER, REQUEST, b"", status=400)[1][0].message == "Unexpected status code: 400."
