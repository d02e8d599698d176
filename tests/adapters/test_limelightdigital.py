"""Limelight Digital adapter: endpoint macros per imp, the per-imp body, floor conversion, params
errors, status texts and bid typing by imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.limelightdigital import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

ENDPOINT = "http://ads.example.net/openrtb/{{.PublisherID}}?host={{.Host}}"
INFO = RequestInfo(bidder="limelightDigital", convert_currency=converter("GBP", 2.0))
NO_PARAMS = ("ext.bidder is not provided", ErrorCode.BAD_INPUT)


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    params = {"host": "h.example.net", "publisherId": 123} if params is None else params
    return imp_with(imp_id, params, fields, {"banner": {"w": 1, "h": 1}})


def run(request: dict):
    calls, bodies, errors = requests_of(build(AdapterConfig("limelightDigital", ENDPOINT)), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build(AdapterConfig("limelightDigital", ENDPOINT)), request, body, status)


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        ({"host": "h.net", "publisherId": 123}, "http://ads.example.net/openrtb/123?host=h.net"),
        ({"host": "h.net", "publisherId": "0042"}, "http://ads.example.net/openrtb/0042?host=h.net"),  # as given
        ({"host": "h.net", "publisherId": 1.5}, "http://ads.example.net/openrtb/1.5?host=h.net"),
        ({"host": "a b&c", "publisherId": "x/y"}, "http://ads.example.net/openrtb/x/y?host=a b&c"),  # not escaped
        ({"HOST": "h.net", "PublisherID": 7}, "http://ads.example.net/openrtb/7?host=h.net"),  # keys in any case
        ({"publisherId": None}, "http://ads.example.net/openrtb/?host="),  # absent and null read as ""
        ({}, "http://ads.example.net/openrtb/?host="),
    ],
)
def test_params_fill_the_endpoint(params, uri):
    calls, _, errors = run({"id": "r", "imp": [imp("a", params)]})
    assert errors == []
    assert [c.uri for c in calls] == [uri]


def test_one_call_per_imp_with_that_imp_alone_and_no_exts():
    request = {
        "id": "r",
        "site": {"page": "p"},
        "ext": {"prebid": {"debug": True}},
        "imp": [imp("a"), imp("b", {"host": "v.net", "publisherId": 9}, video={"w": 2}, tagid="t")],
    }
    calls, bodies, _ = run(request)
    assert [(c.method, c.uri, c.imp_ids, dict(c.headers)) for c in calls] == [
        ("POST", "http://ads.example.net/openrtb/123?host=h.example.net", ["a"], {}),
        ("POST", "http://ads.example.net/openrtb/9?host=v.net", ["b"], {}),
    ]
    assert bodies == [
        {"id": "r-a", "site": {"page": "p"}, "imp": [{"id": "a", "banner": {"w": 1, "h": 1}}]},
        {"id": "r-b", "site": {"page": "p"}, "imp": [{"id": "b", "video": {"w": 2, "mimes": None}, "tagid": "t"}]},
    ]


@pytest.mark.parametrize(
    ("floor", "cur", "want"),
    [
        (1.5, "GBP", {"bidfloor": 3.0, "bidfloorcur": "USD"}),
        (1.5, "usd", {"bidfloor": 1.5, "bidfloorcur": "usd"}),  # USD in any case is kept
        (1.5, "", {"bidfloor": 1.5, "bidfloorcur": ""}),
        (0, "GBP", {"bidfloor": 0, "bidfloorcur": "GBP"}),
    ],
)
def test_floor_in_another_currency_becomes_usd(floor, cur, want):
    _, bodies, errors = run({"id": "r", "imp": [imp(bidfloor=floor, bidfloorcur=cur)]})
    assert errors == []
    assert {k: bodies[0]["imp"][0][k] for k in ("bidfloor", "bidfloorcur")} == want


def test_floor_without_a_rate_drops_that_imp():
    calls, _, errors = run({"id": "r", "imp": [imp("a", bidfloor=1, bidfloorcur="EUR"), imp("b")]})
    assert [c.imp_ids for c in calls] == [["b"]]
    assert errors == [("Currency conversion rate not found: 'EUR' => 'USD'", ErrorCode.UNKNOWN)]


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "x", "banner": {}},
        {"id": "x", "banner": {}, "ext": "e"},
        {"id": "x", "banner": {}, "ext": {"bidder": None}},
        {"id": "x", "banner": {}, "ext": {"bidder": [1]}},
        imp("x", {"host": 5, "publisherId": 1}),
        imp("x", {"host": "h", "publisherId": True}),
        imp("x", {"host": "h", "publisherId": {"a": 1}}),
        imp("x", {"host": "h", "publisherId": [1]}),
    ],
    ids=["no-ext", "ext-not-object", "null-params", "params-not-object", "host", "pub-bool", "pub-object", "pub-list"],
)
def test_params_that_do_not_decode_drop_that_imp(bad):
    calls, _, errors = run({"id": "r", "imp": [bad, imp("ok")]})
    assert [c.imp_ids for c in calls] == [["ok"]]
    assert errors == [NO_PARAMS]


def test_an_empty_endpoint_is_refused():
    with pytest.raises(ValueError, match=r"^Endpoint  adapter parameter is not provided$"):
        build(AdapterConfig("limelightDigital", ""))


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"{}", None),
        (200, b"", None),  # an empty body is no bid
        (
            400,
            b"{}",
            (
                "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
                ErrorCode.BAD_INPUT,
            ),
        ),
        (
            503,
            b"",
            ("Unexpected status code: 503. Run with request.debug = 1 for more info.", ErrorCode.BAD_SERVER_RESPONSE),
        ),
        (200, b"[]", ("expect { or n, but found [", ErrorCode.UNKNOWN)),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = bids({"id": "r", "imp": [imp()]}, body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([] if want is None else [want])


@pytest.mark.parametrize(
    ("media", "want"),
    [
        ({"banner": {}, "video": {}, "audio": {}, "native": {}}, "banner"),
        ({"video": {}, "audio": {}, "native": {}}, "video"),
        ({"audio": {}, "native": {}}, "audio"),
        ({"native": {}}, "native"),
    ],
)
def test_bids_typed_by_imp(media, want):
    request = {"id": "r", "imp": [{"id": "i", **media, "ext": {}}]}
    response, errors = bids(request, {"seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]})
    assert errors == []
    assert [b.bid_type for b in response.bids] == [want]


def test_untyped_bids_are_dropped_with_errors_and_the_rest_kept():
    request = {"id": "r", "imp": [imp("a"), {"id": "m", "ext": {}}, imp("m", video={})]}
    body = {
        "cur": "EUR",
        "seatbid": [
            {"bid": [{"id": "1", "impid": "a", "price": 1}, {"id": "2", "impid": "zz", "price": 1}]},
            {"bid": [{"id": "3", "impid": "m", "price": 1}]},  # the first imp "m" decides: no media type
        ],
    }
    response, errors = bids(request, body)
    assert [(b.bid["id"], b.bid_type) for b in response.bids] == [("1", "banner")]
    assert response.currency == "EUR"
    assert [(e.message, e.code) for e in errors] == [
        ("bid contains unknown imp id: zz", ErrorCode.UNKNOWN),
        ("unknown media type of imp: m", ErrorCode.UNKNOWN),
    ]


def test_currency_is_the_answers_even_when_absent():
    response, errors = bids({"id": "r", "imp": [imp()]}, {})
    assert errors == []
    assert (response.currency, response.bids) == ("USD", [])  # Go leaves it "", which PBS reads as USD
