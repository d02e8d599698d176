"""Gamoshi adapter: its own rules (the fixtures cover the rest): which imps go, the banner size from
the first format, the endpoint from the first imp's supply partner, device headers, the answer."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.gamoshi import build
from tests.adapters.helpers import requests_of

ADAPTER = build(AdapterConfig("gamoshi", "https://rtb.example"))
INFO = RequestInfo(bidder="gamoshi")
PARAMS = {"supplyPartnerId": "17"}


def imp(imp_id: str, params=PARAMS, **media) -> dict:
    return {"id": imp_id, **(media or {"video": {"mimes": ["m"]}}), "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("imps", "want_ids", "want_errors"),
    [
        ([imp("a"), imp("b", audio={"mimes": ["m"]})], ["a"], []),
        ([imp("n", native={"request": "{}"}), imp("b", banner={"w": 1, "h": 2})], ["b"], []),
        (
            [imp("n", native={"request": "{}"})],
            [],
            [
                "Gamoshi only supports banner and video media types. Ignoring imp id=n",
                "No valid impression in the bid request",
            ],
        ),
        ([], [], ["No impressions in the bid request"]),
        ([imp("a", params={})], [], ["supplyPartnerId is empty"]),
        ([imp("a", params=None)], [], ["supplyPartnerId is empty"]),
        ([imp("a", params={"supplyPartnerId": 17})], [], ["ext.bidder.supplyPartnerId not provided"]),
        (
            [imp("a", params={"supplyPartnerId": "1", "favoredMediaType": 2})],
            [],
            ["ext.bidder.supplyPartnerId not provided"],
        ),
        ([{"id": "a", "video": {}}], [], ["ext.bidder not provided"]),
        ([{"id": "a", "video": {}, "ext": "x"}], [], ["ext.bidder not provided"]),
        ([imp("x", params={}, audio={}), imp("a"), imp("b", params={})], ["a", "b"], []),
    ],
)
def test_imps_sent_and_errors(imps, want_ids, want_errors):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert [c.imp_ids for c in calls] == ([want_ids] if want_ids else [])
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_INPUT, text) for text in want_errors]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 300, "h": 250}, {"w": 728, "h": 90}]}, {"w": 300, "h": 250}),
        ({"w": 1, "format": [{"w": 300, "h": 250}]}, {"w": 1}),
        ({"h": 1, "format": [{"w": 300, "h": 250}]}, {"h": 1}),
        ({"format": []}, {}),
        ({"format": [{"w": 300}]}, {"w": 300, "h": 0}),
    ],
)
def test_banner_size_from_first_format(banner, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", banner=banner)]}, INFO)
    sent = bodies[0]["imp"][0]["banner"]
    assert {key: sent[key] for key in ("w", "h") if key in sent} == want


@pytest.mark.parametrize(
    ("endpoint", "partner", "want"),
    [
        ("https://rtb.example", "17", "https://rtb.example/r/17/bidr?bidder=prebid-server"),
        ("", "9", "https://rtb.gamoshi.io/r/9/bidr?bidder=prebid-server"),
    ],
)
def test_endpoint_from_first_imp(endpoint, partner, want):
    adapter = build(AdapterConfig("gamoshi", endpoint))
    request = {"id": "r", "imp": [imp("a", {"supplyPartnerId": partner}), imp("b", {"supplyPartnerId": "other"})]}
    calls, _, _ = requests_of(adapter, request, INFO)
    assert [c.uri for c in calls] == [want]


@pytest.mark.parametrize(
    ("device", "want"),
    [
        (None, {}),
        (
            {"ua": "UA", "ip": "1.2.3.4", "language": "en", "dnt": 1},
            {"User-Agent": "UA", "X-Forwarded-For": "1.2.3.4", "Accept-Language": "en", "Dnt": "1"},
        ),
        ({"ua": "", "ipv6": "::1", "dnt": 0}, {"Dnt": "0"}),
    ],
)
def test_device_headers(device, want):
    request = {"id": "r", "imp": [imp("a")], **({"device": device} if device is not None else {})}
    calls, _, _ = requests_of(ADAPTER, request, INFO)
    base = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json", "X-Openrtb-Version": "2.4"}
    assert dict(calls[0].headers) == {**base, **want}


REQUEST = {"imp": [{"id": "v", "video": {}}, {"id": "b", "banner": {}}]}


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        (
            {
                "cur": "EUR",
                "seatbid": [{"bid": [{"id": "1", "impid": "v"}, {"id": "2", "impid": "b"}]}, {"bid": [{"id": "3"}]}],
            },
            [("1", "video"), ("2", "banner")],
        ),
        ({"seatbid": [{"bid": [{"id": "1", "impid": "unknown"}]}]}, [("1", "banner")]),
        ({"seatbid": []}, None),
    ],
)
def test_first_seatbid_typed_by_imp(answer, want):
    response, errors = ADAPTER.make_bids(REQUEST, RequestData("POST", "u"), ResponseData(200, orjson.dumps(answer)))
    assert errors == []
    if want is None:
        assert response is None
        return
    assert response is not None and response.currency == "USD"
    assert [(t.bid["id"], t.bid_type) for t in response.bids] == want


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (400, b"", [(ErrorCode.BAD_INPUT, "Unexpected status code: 400. ")]),
        (
            503,
            b"",
            [(ErrorCode.BAD_SERVER_RESPONSE, "unexpected status code: 503. Run with request.debug = 1 for more info")],
        ),
        (200, b"", [(ErrorCode.BAD_SERVER_RESPONSE, "bad server response: expect { or n, but found \x00. ")]),
        (200, b"[]", [(ErrorCode.BAD_SERVER_RESPONSE, "bad server response: expect { or n, but found [. ")]),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = ADAPTER.make_bids(REQUEST, RequestData("POST", "u"), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == want
