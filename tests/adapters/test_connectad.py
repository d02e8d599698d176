"""ConnectAd adapter: the siteId param (number or digits), params errors failing the whole request,
secure from the page, floors, banner sizes, headers from the device and the answer's texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.connectad import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "http://bidder.connectad.io/API?src=pbs"
INFO = RequestInfo(bidder="connectad")
PREPROCESS = "Error in preprocess of Imp"
BASE_HEADERS = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    params = {"siteId": 123, "networkId": 9} if params is None else params
    return imp_with(imp_id, params, fields, {"banner": {"format": [{"w": 300, "h": 250}]}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("connectad", ENDPOINT)), request, INFO)
    assert all(call.uri == ENDPOINT for call in calls)
    return calls, bodies, [(e.message, e.code) for e in errors]


@pytest.mark.parametrize(
    ("site_id", "tagid"),
    [(123, "123"), ("456", "456"), ("-5", "-5"), ("007", "7"), (2**63 - 1, str(2**63 - 1))],
)
def test_site_id_becomes_tagid(site_id, tagid):
    _, bodies, errors = run({"id": "r", "imp": [imp(params={"siteId": site_id, "networkId": 1})]})
    assert errors == []
    assert bodies[0]["imp"][0]["tagid"] == tagid


@pytest.mark.parametrize(
    ("imp_fields", "message"),
    [
        ({"params": {"siteId": 0, "networkId": 1}}, "Impression id=i, has no siteId present"),
        ({"params": {"siteId": "", "networkId": 1}}, "Impression id=i, has no siteId present"),
        ({"params": {"networkId": 1}}, "Impression id=i, has no siteId present"),
        ({"params": {"siteId": "12a"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": "+1"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": 1.5}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": None}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": True}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": 2**63}}, "Impression id=i, has invalid Ext"),
        # issue 38: more digits than int() takes, and digits it should not take
        ({"params": {"siteId": 1, "networkId": "9" * 5000}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": "-" + "9" * 5000}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": "\u00b2"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": "\u0663"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": "9223372036854775808"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": 1, "networkId": "x"}}, "Impression id=i, has invalid Ext"),
        ({"params": {"siteId": 1, "bidfloor": "1"}}, "Impression id=i, has invalid Ext"),
        ({"params": "x"}, "Impression id=i, has invalid Ext"),
        ({"ext": {"bidder": None}}, "Impression id=i, has invalid Ext"),
        (
            {"ext": {"bidder": {}, "prebid": 5}},
            "Impression id=i has an Error: cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 5",
        ),
        ({"ext": 5}, "Impression id=i has an Error: expect { or n, but found 5"),
        ({"banner": None, "video": {}}, "We need a Banner Object in the request"),
        ({"banner": {"format": []}}, "At least one size is required"),
    ],
)
def test_any_bad_imp_fails_the_request(imp_fields, message):
    params = imp_fields.pop("params", None)
    calls, _, errors = run({"id": "r", "imp": [imp(params=params, **imp_fields), imp("ok")]})
    assert calls == []
    assert errors == [(message, ErrorCode.BAD_INPUT), (PREPROCESS, ErrorCode.BAD_INPUT)]


def test_every_bad_imp_is_reported():
    imps = [imp("a", {"networkId": 1}), imp("b"), {"id": "c", "banner": {}}]
    _, _, errors = run({"id": "r", "imp": imps})
    assert [message for message, _ in errors] == [
        "Impression id=a, has no siteId present",
        "Impression id=c has an Error: expect { or n, but found \x00",
        PREPROCESS,
    ]


@pytest.mark.parametrize(
    ("page", "secure"),
    [
        ("https://connectad.io/", 1),
        ("HTTPS://connectad.io/", 1),
        ("http://connectad.io/", 0),
        ("connectad.io", 0),
        ("https://conn ectad.io/", 0),  # Go's url.Parse fails on the host
        ("https://connectad.io/%zz", 0),
        (None, 0),
    ],
)
def test_secure_from_the_page(page, secure):
    site = {"page": page} if page is not None else {}
    _, bodies, _ = run({"id": "r", "site": site, "imp": [imp("a"), imp("b")]})
    assert [i["secure"] for i in bodies[0]["imp"]] == [secure, secure]


@pytest.mark.parametrize(
    ("params", "fields", "want"),
    [
        ({"siteId": 1, "bidfloor": 0.5}, {}, {"bidfloor": 0.5, "bidfloorcur": "USD"}),
        (
            {"siteId": 1, "bidfloor": 0.5},
            {"bidfloor": 2, "bidfloorcur": "EUR"},
            {"bidfloor": 0.5, "bidfloorcur": "USD"},
        ),
        ({"siteId": 1, "bidfloor": 0}, {"bidfloor": 2, "bidfloorcur": "EUR"}, {"bidfloor": 2, "bidfloorcur": "EUR"}),
        ({"siteId": 1}, {}, {}),
    ],
)
def test_bidfloor_param_replaces_the_floor(params, fields, want):
    _, bodies, _ = run({"id": "r", "imp": [imp(params=params, **fields)]})
    out = bodies[0]["imp"][0]
    assert {key: out[key] for key in ("bidfloor", "bidfloorcur") if key in out} == want
    assert "ext" not in out


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 300, "h": 250}]}, {"w": 300, "h": 250}),
        (
            {"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]},
            {"w": 300, "h": 250, "format": [{"w": 728, "h": 90}]},
        ),
        ({"w": 1, "format": [{"w": 300, "h": 250}]}, {"w": 1, "format": [{"w": 300, "h": 250}]}),
        ({"w": 5, "h": 6}, {"w": 5, "h": 6}),
    ],
)
def test_banner_size_from_its_first_format(banner, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(banner=banner)]})
    assert errors == []
    assert bodies[0]["imp"][0]["banner"] == want


@pytest.mark.parametrize(
    ("device", "headers"),
    [
        (None, {}),
        ({}, {"Dnt": "0"}),
        (
            {"ua": "UA", "language": "de", "ip": "1.2.3.4", "ipv6": "::1", "dnt": 1},
            {"User-Agent": "UA", "Accept-Language": "de", "X-Forwarded-For": "1.2.3.4", "Dnt": "1"},
        ),
        ({"ipv6": "::1", "ip": "", "dnt": 0}, {"X-Forwarded-For": "::1", "Dnt": "0"}),
    ],
)
def test_headers_from_the_device(device, headers):
    calls, _, _ = run({"id": "r", "imp": [imp()], **({"device": device} if device is not None else {})})
    assert dict(calls[0].headers) == {**BASE_HEADERS, **headers}


def test_every_bid_is_a_usd_banner():
    body = {
        "cur": "EUR",
        "seatbid": [
            {"bid": [{"id": "a", "impid": "i", "price": 1, "mtype": 2}, {"id": "b", "impid": "i", "price": 2}]}
        ],
    }
    response, errors = bids_for(build(AdapterConfig("connectad", ENDPOINT)), {"imp": [imp()]}, body)
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid["id"], b.bid_type) for b in response.bids] == [("a", "banner"), ("b", "banner")]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (
            400,
            b"{}",
            [("Invalid Status Returned: 400. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (
            500,
            b"{}",
            [("Invalid Status Returned: 500. Run with request.debug = 1 for more info", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (
            200,
            b"[]",
            [("Unable to unpackage bid response. Error: expect { or n, but found [", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
    ],
)
def test_answers_without_bids(status, body, want):
    response, errors = bids_for(build(AdapterConfig("connectad", ENDPOINT)), {"imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == want
