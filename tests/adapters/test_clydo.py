"""Clydo adapter: the endpoint from partnerId/region, the ext's failure wording, device headers,
every imp id on each call, and bid typing by the imp."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.clydo import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("clydo", "http://{{.Region}}.clydo.io/{{.PartnerId}}"))
INFO = RequestInfo(bidder="clydo")
DEVICE = {"ua": "UA", "ip": "1.2.3.4", "ipv6": "::1"}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"ext": {"bidder": {"partnerId": "p", "region": "eu"}}}, "http://eu.clydo.io/p"),
        ({"ext": {"bidder": {"partnerId": "p"}}}, "http://us.clydo.io/p"),
        ({}, "missing ext"),
        ({"ext": "x"}, "invalid ext"),
        ({"ext": None}, "missing ext.bidder"),
        ({"ext": {}}, "missing ext.bidder"),
        ({"ext": {"bidder": None}}, "invalid partnerId"),
        ({"ext": {"bidder": {"partnerId": 1}}}, "invalid ext.bidder"),
        ({"ext": {"bidder": {"region": "eu"}}}, "invalid partnerId"),
    ],
)
def test_endpoint_and_ext_errors(imp, want):
    request = {"id": "r", "imp": [{"id": "a", "banner": {}, **imp}], "device": DEVICE}
    calls, _bodies, errors = requests_of(ADAPTER, request, INFO)
    assert [c.uri for c in calls] + [e.message for e in errors] == [want]
    assert all(e.code is ErrorCode.BAD_INPUT for e in errors)


def test_calls_carry_device_headers_and_every_imp_id():
    imps = [{"id": i, "banner": {}, "ext": {"bidder": {"partnerId": "p"}}} for i in ("a", "b")]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps, "device": DEVICE}, INFO)
    assert errors == []
    assert [c.imp_ids for c in calls] == [["a", "b"], ["a", "b"]]
    assert [b["imp"][0]["id"] for b in bodies] == ["a", "b"]
    headers = dict(calls[0].headers)
    assert (headers["X-Forwarded-For"], headers["User-Agent"], headers["X-Openrtb-Version"]) == ("1.2.3.4", "UA", "2.5")


def test_no_device_refused():
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": []}, INFO)
    assert calls == [] and [e.message for e in errors] == ["Failed to get device headers"]


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([{"id": "i", "banner": {}, "video": {}, "audio": {}}], ["audio"]),
        ([{"id": "i", "banner": {}, "native": {}}], ["native"]),
        ([{"id": "x", "video": {}}], ["banner"]),
        ([{"id": "i", "banner": {}}, {"id": "i", "video": {}}], "Duplicate impression ID found"),
        ([{"id": "i"}], "Failed to get media type"),
    ],
)
def test_bid_type(imps, want):
    bid = {"id": "b", "impid": "i", "price": 1}
    response, errors = bids_for(ADAPTER, {"imp": imps}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    if isinstance(want, str):
        assert response is None and [e.message for e in errors] == [want]
    else:
        assert response is not None and response.currency == "EUR"
        assert [t.bid_type for t in response.bids] == want
