"""OneTag adapter (its recipe): the publisher id in the URL, params errors, the unchanged body, status texts and
bid typing by imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://prebid-server.onetag-sys.com/prebid-server/{{.PublisherID}}"
INFO = RequestInfo(bidder="onetag")


def imp(imp_id: str = "i", pub: Any = "abc", **fields: Any) -> dict:
    return imp_with(imp_id, {"pubId": pub}, fields, {"banner": {}})


def run(request: dict):
    calls, bodies, errors = requests_of(build_adapter("onetag", AdapterConfig("onetag", ENDPOINT)), request, INFO)
    return calls, bodies, [e.message for e in errors]


def bids(request: dict, body: Any, status: int = 200):
    return bids_for(build_adapter("onetag", AdapterConfig("onetag", ENDPOINT)), request, body, status)


@pytest.mark.parametrize(
    ("pub", "uri"),
    [
        ("386276e072", "https://prebid-server.onetag-sys.com/prebid-server/386276e072"),
        ("a b/c?d", "https://prebid-server.onetag-sys.com/prebid-server/a b/c?d"),  # text/template does not escape
    ],
)
def test_publisher_id_fills_the_endpoint_as_given(pub, uri):
    calls, _, errors = run({"id": "r", "imp": [imp("a", pub), imp("b", pub)]})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(uri, ["a", "b"])]


def test_request_goes_unchanged_without_headers():
    request = {"id": "r", "site": {"page": "p"}, "imp": [imp(ext={"bidder": {"pubId": "x", "ext": {"k": 1}}})]}
    calls, bodies, _ = run(request)
    assert bodies[0] == request
    assert dict(calls[0].headers) == {}


@pytest.mark.parametrize(
    ("imps", "message"),
    [
        ([{"id": "a", "banner": {}}], "Bidder extension not provided or can't be unmarshalled"),
        ([{"id": "a", "banner": {}, "ext": []}], "Bidder extension not provided or can't be unmarshalled"),
        ([{"id": "a", "banner": {}, "ext": {"bidder": None}}], "Error while unmarshaling bidder extension"),
        ([imp(pub=5)], "Error while unmarshaling bidder extension"),
        ([imp(pub=None)], "The publisher ID must not be empty"),
        ([imp("a", "x"), imp("b", "y")], "There must be only one publisher ID"),
        ([imp("a", "x"), {"id": "b", "banner": {}}], "Bidder extension not provided or can't be unmarshalled"),
    ],
)
def test_any_bad_imp_fails_the_request(imps, message):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert errors == [message]


@pytest.mark.parametrize(
    ("status", "code"), [(400, ErrorCode.BAD_SERVER_RESPONSE), (503, ErrorCode.BAD_SERVER_RESPONSE)]
)
def test_failure_status(status, code):
    response, errors = bids({"imp": [imp()]}, b"{}", status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (f"Unexpected status code: {status}. Run with request.debug = 1 for more info.", code)
    ]


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([imp(banner={}, video={})], "banner"),
        ([imp(video={"mimes": ["video/mp4"]})], "video"),
        ([imp(native={"request": "{}"})], "native"),
    ],
)
def test_bids_typed_by_imp(imps, want):
    response, errors = bids(
        {"imp": imps}, {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1}]}]}
    )
    assert errors == []
    assert response.currency == "EUR"
    assert [b.bid_type for b in response.bids] == [want]


def test_bid_for_an_audio_only_imp_fails_the_answer():
    body = {"seatbid": [{"bid": [{"id": "ok", "impid": "v", "price": 1}, {"id": "b", "impid": "a", "price": 1}]}]}
    response, errors = bids({"imp": [imp("v", video={}), imp("a", audio={})]}, body)
    assert response is None
    assert [e.message for e in errors] == ["The impression with ID a is not present into the request"]
