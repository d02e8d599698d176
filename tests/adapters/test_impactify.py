"""Impactify adapter: its own rules (the fixtures cover the rest): the imp ext rewrite, floors in
USD, the headers, and which bids of the answer are kept."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.impactify import build
from tests.adapters.helpers import converter, requests_of

ADAPTER = build(AdapterConfig("impactify", "https://sonic.example/bidder"))
INFO = RequestInfo(bidder="impactify")
PARAMS = {"appId": "a", "format": "screen", "style": "impact"}


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": PARAMS}, {"impactify": PARAMS}),
        ({"bidder": {"appId": "a", "other": 1}}, {"impactify": {"appId": "a", "format": "", "style": ""}}),
        ({"BIDDER": {"APPID": "x"}}, {"impactify": {"appId": "x", "format": "", "style": ""}}),
        ({"bidder": None}, {"impactify": {"appId": "", "format": "", "style": ""}}),
        ({}, {"impactify": {"appId": "", "format": "", "style": ""}}),
        (None, {"impactify": {"appId": "", "format": "", "style": ""}}),
        ({"bidder": {"style": 1}}, None),
        ({"bidder": "x"}, None),
        ("x", None),
        ("absent", None),
    ],
)
def test_imp_ext(ext, want):
    imp = {"id": "i", "banner": {}, **({} if ext == "absent" else {"ext": ext})}
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp]}, INFO)
    if want is None:
        assert (calls, [(e.code, e.message) for e in errors]) == (
            [],
            [(ErrorCode.BAD_INPUT, 'Unable to decode the imp ext : "i"')],
        )
        return
    assert errors == []
    assert bodies[0]["imp"][0]["ext"] == want
    assert bodies[0]["cur"] == ["USD"]


@pytest.mark.parametrize(
    ("floor", "currency", "want"),
    [
        (2.0, "EUR", (4.0, "USD")),
        (2.0, "usd", (2.0, "usd")),
        (2.0, "", (2.0, None)),
        (0, "EUR", (None, "EUR")),
        (2.0, "JPY", "Currency conversion rate not found: 'JPY' => 'USD'"),
    ],
)
def test_floor_in_usd(floor, currency, want):
    imp = {"id": "i", "banner": {}, "bidfloor": floor, "bidfloorcur": currency, "ext": {"bidder": PARAMS}}
    info = RequestInfo(bidder="impactify", convert_currency=converter("EUR", 2.0))
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp]}, info)
    if isinstance(want, str):
        assert (calls, [e.message for e in errors]) == ([], [want])
        return
    sent = bodies[0]["imp"][0]
    assert (sent.get("bidfloor"), sent.get("bidfloorcur")) == want


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, {}),
        (
            {"device": {"ua": "UA", "ip": "1.1.1.1", "ipv6": "::1"}, "user": {"buyeruid": "u1"}},
            {"User-Agent": "UA", "X-Forwarded-For": "1.1.1.1", "Cookie": "uids=u1"},
        ),
        (
            {"device": {"ipv6": "::1"}, "site": {"page": "https://p.example"}},
            {"X-Forwarded-For": "::1", "Referer": "https://p.example"},
        ),
        ({"site": {}, "user": {"buyeruid": ""}}, {"Referer": ""}),
    ],
)
def test_headers(top, want):
    request = {"id": "r", "imp": [{"id": "i", "video": {}, "ext": {"bidder": PARAMS}}], **top}
    calls, _, _ = requests_of(ADAPTER, request, INFO)
    base = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json", "X-Openrtb-Version": "2.5"}
    assert dict(calls[0].headers) == {**base, **want}


REQUEST = {"imp": [{"id": "b", "banner": {}}, {"id": "v", "video": {}}, {"id": "a", "audio": {}}]}


@pytest.mark.parametrize(
    ("answer", "want_bids", "want_errors"),
    [
        (
            {
                "cur": "EUR",
                "seatbid": [{"bid": [{"id": "1", "impid": "b", "price": 1}, {"id": "2", "impid": "v", "price": 2}]}],
            },
            [("1", "banner"), ("2", "video")],
            [],
        ),
        (
            {"seatbid": [{"bid": [{"id": "1", "impid": "b", "price": 0}, {"id": "2", "impid": "a", "price": -1}]}]},
            [],
            [],
        ),
        (
            {
                "seatbid": [
                    {"bid": [{"id": "1", "impid": "b", "price": 1}]},
                    {"bid": [{"id": "2", "impid": "v", "price": 1}]},
                ]
            },
            [("1", "banner")],
            [],
        ),
        (
            {"seatbid": [{"bid": [{"id": "1", "impid": "a", "price": 1}]}]},
            None,
            [(ErrorCode.BAD_INPUT, 'Failed to find a supported media type impression "a"')],
        ),
        ({"seatbid": []}, None, []),
    ],
)
def test_bids(answer, want_bids, want_errors):
    response, errors = ADAPTER.make_bids(REQUEST, RequestData("POST", "u"), ResponseData(200, orjson.dumps(answer)))
    assert [(e.code, e.message) for e in errors] == want_errors
    if want_bids is None:
        assert response is None
        return
    assert response is not None
    assert response.currency == (answer.get("cur") or "USD")
    assert [(t.bid["id"], t.bid_type) for t in response.bids] == want_bids


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"", [(ErrorCode.BAD_INPUT, "Invalid request.")]),
        (503, b"", [(ErrorCode.BAD_SERVER_RESPONSE, "Unexpected HTTP status 503.")]),
        (200, b'"x"', [(ErrorCode.BAD_SERVER_RESPONSE, "Bad server body response")]),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = ADAPTER.make_bids(REQUEST, RequestData("POST", "u"), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
