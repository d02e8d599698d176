"""Missena adapter: the first usable imp, currency and floor rules, the ad request, headers and the
one-bid answer."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.missena import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "http://example.com/?t={{.PublisherID}}"
ADAPTER = build(AdapterConfig("missena", ENDPOINT))
INFO = RequestInfo(bidder="missena", convert_currency=converter("GBP", 2.0))


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, {"apiKey": "k"} if params is None else params, fields, {"banner": {}})


def floor_in(currency: str, floor: float) -> dict:
    return {"floor": floor, "floor_currency": currency}


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", **request}, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def test_first_usable_imp_only():
    calls, bodies, errors = run({"imp": [imp("a", ext="x"), imp("b", "y"), imp("c"), imp("d")]})
    assert errors == [
        ('Error parsing bidderExt object: expect { or n, but found ", input: "x"', ErrorCode.BAD_INPUT),
        ("Error parsing missenaExt parameters", ErrorCode.BAD_INPUT),
    ]
    assert [call.imp_ids for call in calls] == [["c"]]
    assert bodies[0]["adunit"] == "c"
    assert [i["id"] for i in bodies[0]["ortb2"]["imp"]] == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("api_key", "want"), [("k", "http://example.com/?t=k"), ("a/b c@d", "http://example.com/?t=a%2Fb%20c@d")]
)
def test_endpoint(api_key, want):
    calls, _, _ = run({"imp": [imp(params={"apiKey": api_key})]})
    assert [call.uri for call in calls] == [want]


@pytest.mark.parametrize(
    ("cur", "floor", "want"),
    [
        (None, {}, {"currency": "USD"}),
        (["EUR"], {}, {"currency": "EUR"}),
        (["EUR", "USD"], {"bidfloor": 1.5, "bidfloorcur": "EUR"}, {"currency": "USD", **floor_in("USD", 1.5)}),
        (["EUR"], {"bidfloor": 1.5, "bidfloorcur": "USD"}, {"currency": "EUR", **floor_in("EUR", 1.5)}),
        (["GBP"], {"bidfloor": 1.5, "bidfloorcur": "GBP"}, {"currency": "USD", **floor_in("USD", 3.0)}),
    ],
)  # fmt: skip
def test_currency_and_floor(cur, floor, want):
    _, bodies, errors = run({"imp": [imp(**floor)], **({"cur": cur} if cur else {})})
    assert errors == []
    assert {key: bodies[0].get(key) for key in ("currency", "floor", "floor_currency")} == {
        "floor": None, "floor_currency": None, **want
    }  # fmt: skip


def test_floor_without_rate_tries_the_next_imp():
    calls, _, errors = run({"cur": ["JPY"], "imp": [imp("a", bidfloor=1, bidfloorcur="JPY"), imp("b")]})
    assert errors == [("Currency conversion rate not found: 'JPY' => 'USD'", ErrorCode.UNKNOWN)]
    assert [call.imp_ids for call in calls] == [["b"]]


def test_ad_request():
    params = {"apiKey": "k", "formats": ["banner"], "placement": "sticky", "sample": "", "settings": {"a": 1}}
    request = {"imp": [imp(params=params)], "test": 1, "tmax": 500, "regs": {"coppa": 0, "gdpr": 1},
               "user": {"ext": {"eids": [{"source": "s", "uids": [{"id": "u"}]}]}}}  # fmt: skip
    _, bodies, _ = run(request)
    body = bodies[0]
    assert {key: value for key, value in body.items() if key != "ortb2"} == {
        "adunit": "i", "currency": "USD", "debug": True, "userEids": [{"source": "s", "uids": [{"id": "u"}]}],
        "ik": "r", "request_id": "r", "timeout": 500, "version": "prebid-server@unknown",
        "params": {"apiKey": "k", "formats": ["banner"], "placement": "sticky", "settings": {"a": 1}},
    }  # fmt: skip
    assert body["ortb2"]["regs"] == {"gdpr": 1}


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({"device": {"ua": "u", "ip": "1.2.3.4", "ipv6": "::1"}}, {"User-Agent": "u", "X-Forwarded-For": "1.2.3.4"}),
        ({"device": {"ipv6": "::1"}}, {"X-Forwarded-For": "::1"}),
        ({"site": {"page": "https://a.com:8080/p?q"}}, {"Referer": "https://a.com:8080/p?q", "Origin": "https://a.com:8080"}),
    ],
)  # fmt: skip
def test_headers(top, want):
    calls, _, _ = run({"imp": [imp()], **top})
    assert dict(calls[0].headers) == {
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        **want,
    }


DEBUG = "Run with request.debug = 1 for more info."
REQUEST = {"id": "r", "imp": [imp("a"), imp("b")]}


def test_bid():
    answer = {"ad": "<div/>", "cpm": 1.5, "currency": "EUR", "requestId": "q"}
    response, errors = bids_for(ADAPTER, REQUEST, answer)
    assert errors == [] and response is not None
    assert response.currency == "EUR"
    assert [(t.bid, t.bid_type) for t in response.bids] == [
        ({"id": "r", "impid": "a", "price": 1.5, "adm": "<div/>", "crid": "q"}, "banner")
    ]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"", [("Unexpected status code: 400. Bad request from publisher. " + DEBUG, 2)]),
        (500, b"", [("Unexpected status code: 500. Run with request.debug = 1 for more info.", 3)]),
        (200, b"[]", [("expect { or n, but found [", 999)]),
        (200, b'{"cpm": "1"}', [("cannot unmarshal missena.BidServerResponse.Cpm: invalid number", 999)]),
    ],
)  # fmt: skip
def test_no_bid(status, body, want):
    response, errors = bids_for(ADAPTER, REQUEST, body, status)
    assert response is None
    assert [(e.message, int(e.code)) for e in errors] == want
