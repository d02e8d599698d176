"""Cadent Aperture MX adapter: tagid and floor params, secure from the page, banner sizes from the
first format, video checks, one bad imp sinking the request, headers, the query and bid typing."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.cadent_aperture_mx import build
from hbserver.adapters.emx_digital import build as build_emx
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://hb.emxdgt.com"
INFO = RequestInfo(bidder="cadent_aperture_mx")


def adapter(testing: bool = True):
    built = build(AdapterConfig("cadent_aperture_mx", ENDPOINT))
    built.testing = testing
    return built


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"tagid": "25"} if params is None else params, fields, {"banner": {"w": 300, "h": 250}})


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"tagid": "25", "bidfloor": "1.5"}, {"tagid": "25", "bidfloor": 1.5, "bidfloorcur": "USD"}),
        ({"tagid": "+25", "bidfloor": "x"}, {"tagid": "+25", "bidfloor": None, "bidfloorcur": None}),
        ({"tagid": "0"}, "ignoring imp id=i, invalid tagid must be a String of numbers"),
        ({"tagid": "1_0"}, "ignoring imp id=i, invalid tagid must be a String of numbers"),
        ({"tagid": "9223372036854775808"}, "ignoring imp id=i, invalid tagid must be a String of numbers"),
        ({"tagid": 25}, "ignoring imp id=i, invalid ImpExt"),
    ],
)
def test_params(params, want):
    calls, bodies, errors = requests_of(adapter(), {"id": "r", "imp": [imp(params=params)]}, INFO)
    if isinstance(want, str):
        assert calls == []
        assert [e.message for e in errors] == [want, f"Error in preprocess of Imp, err: [{want}]"]
        assert all(e.code is ErrorCode.BAD_INPUT for e in errors)
    else:
        assert errors == []
        assert {key: bodies[0]["imp"][0].get(key) for key in want} == want


@pytest.mark.parametrize(
    ("media", "want"),
    [
        (
            {"banner": {"format": [{"w": 1, "h": 2}, {"w": 3, "h": 4}]}},
            {"banner": {"w": 1, "h": 2, "format": [{"w": 3, "h": 4}]}},
        ),
        ({"banner": {"format": [{"w": 1, "h": 2}]}}, {"banner": {"w": 1, "h": 2}}),
        ({"banner": {}}, "Need at least one size to build request"),
        ({"native": {"request": ""}}, "Request needs to include a Banner object"),
        (
            {"video": {"mimes": ["v"], "w": 1, "protocols": [2, 7]}},
            {"video": {"mimes": ["v"], "w": 1, "protocols": [2]}},
        ),
        ({"video": {"mimes": ["v"], "w": 1, "protocols": [7]}}, {"video": {"mimes": ["v"], "w": 1}}),
        ({"video": {"w": 1}}, "Video: missing required field mimes"),
        ({"video": {"mimes": ["v"], "w": 0}}, "Video: Need at least one size to build request"),
    ],
)
def test_media(media, want):
    _calls, bodies, errors = requests_of(adapter(), {"id": "r", "imp": [imp(**media)]}, INFO)
    got = [e.message for e in errors][:1] if errors else {kind: bodies[0]["imp"][0][kind] for kind in media}
    assert got == ([want] if isinstance(want, str) else want)


@pytest.mark.parametrize(
    ("top", "secure"),
    [
        ({"site": {"page": "https://e.com"}}, 1),
        ({"site": {"page": "HTTPS://e.com"}}, 1),
        ({"site": {"page": "http://e.com"}}, 0),
        ({"app": {"domain": "https://a.com", "storeurl": "http://s"}}, 1),
        ({"app": {"storeurl": "https://s"}}, 1),
        ({}, 0),
    ],
)
def test_secure_from_page(top, secure):
    _calls, bodies, _errors = requests_of(adapter(), {"id": "r", "imp": [imp()], **top}, INFO)
    assert bodies[0]["imp"][0]["secure"] == secure


def test_query_and_headers():
    request = {
        "id": "r",
        "tmax": 500,
        "imp": [imp()],
        "site": {"page": "https://e.com/p"},
        "device": {"ua": "UA", "ip": "1.2.3.4", "language": "en", "dnt": 1},
    }
    calls, _bodies, _errors = requests_of(adapter(testing=False), request, INFO)
    assert calls[0].uri.startswith(f"{ENDPOINT}?t=500&ts=") and calls[0].uri.endswith("&src=pbserver")
    headers = dict(calls[0].headers)
    assert (headers["User-Agent"], headers["X-Forwarded-For"], headers["Accept-Language"]) == ("UA", "1.2.3.4", "en")
    assert (headers["Dnt"], headers["Referer"]) == ("1", "https://e.com/p")
    testing_calls, _bodies, _errors = requests_of(adapter(), request, INFO)
    assert testing_calls[0].uri == f"{ENDPOINT}?t=1000&ts=2060541160"


@pytest.mark.parametrize(
    ("adm", "want"), [("<VAST version='3'>", "video"), ("<?xml ?>", "video"), ("<div>", "banner"), (None, "banner")]
)
def test_bid_type_and_impid(adm, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({"adm": adm} if adm else {})}
    response, errors = bids_for(adapter(), {"imp": []}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert errors == [] and response is not None and response.currency == "USD"
    assert [(t.bid["impid"], t.bid_type) for t in response.bids] == [("b", want)]


@pytest.mark.parametrize(
    ("status", "code"), [(400, ErrorCode.BAD_SERVER_RESPONSE), (500, ErrorCode.BAD_SERVER_RESPONSE)]
)
def test_status(status, code):
    response, errors = bids_for(adapter(), {}, b"", status=status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Invalid Status Returned: {status}. Run with request.debug = 1 for more info", code)
    ]


def test_emx_digital_is_the_same_adapter():
    assert type(build_emx(AdapterConfig("emx_digital", ENDPOINT))) is type(adapter())
