"""Kargo adapter (its recipe): the request goes as Go re-encodes it, without headers; status errors; bid typing by
``ext.mediaType``; the answer's currency."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "https://krk2.kargo.com/api/v1/openrtb"
ADAPTER = build_adapter("kargo", AdapterConfig("kargo", ENDPOINT))


def test_request_goes_as_go_writes_it():
    request = {
        "id": "r",
        "imp": [{"id": "a", "banner": {}, "ext": {"bidder": {"placementId": "p"}}}, {"id": "b", "video": {}}],
        "site": {"page": "http://example.com"},
    }
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo(bidder="kargo"))
    assert errors == []
    assert [(c.method, c.uri, dict(c.headers), c.imp_ids) for c in calls] == [("POST", ENDPOINT, {}, ["a", "b"])]
    want_imps = [request["imp"][0], {"id": "b", "video": {"mimes": None}}]  # Go's typed Video writes mimes
    assert bodies[0] == {**request, "imp": want_imps}


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"mediaType": "video"}, "video"),
        ({"mediaType": "native"}, "native"),
        ({"MEDIATYPE": "video"}, "video"),
        ({"mediaType": "banner"}, "banner"),
        ({"mediaType": "audio"}, "banner"),
        ({"mediaType": 2}, "banner"),
        ({"mediaType": None}, "banner"),
        ("video", "banner"),
        (None, "banner"),
    ],
)
def test_bid_type(ext, want):
    bid = {"id": "b", "impid": "a", "price": 1, **({"ext": ext} if ext is not None else {})}
    body = orjson.dumps({"id": "r", "seatbid": [{"bid": [bid]}]})
    response, errors = ADAPTER.make_bids({"imp": []}, RequestData("POST", ENDPOINT), ResponseData(200, body))
    assert errors == []
    assert response is not None
    assert [(typed.bid, typed.bid_type) for typed in response.bids] == [(bid, want)]


@pytest.mark.parametrize(("cur", "want"), [("EUR", "EUR"), (None, "USD"), ("", "USD")])
def test_currency_from_the_answer(cur, want):
    answer = {"id": "r", "seatbid": [], **({"cur": cur} if cur is not None else {})}
    response, _ = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(200, orjson.dumps(answer)))
    assert response is not None and response.currency == want


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (
            400,
            b"",
            (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 400. Run with request.debug = 1 for more info."),
        ),
        (
            503,
            b"",
            (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 503. Run with request.debug = 1 for more info."),
        ),
        (200, b'"text"', (ErrorCode.UNKNOWN, 'expect { or n, but found "')),  # Go's plain decoding error
    ],
)
def test_no_answer(status, body, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
