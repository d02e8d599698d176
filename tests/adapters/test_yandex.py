"""Yandex adapter: placement ids, the query it adds, imp rewriting, headers and bid typing."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.yandex import build
from tests.adapters.helpers import requests_of

ENDPOINT = "https://bs-metadsp.yandex.ru/prebid/{{.PageID}}?ssp-id=10500"
ADAPTER = build(AdapterConfig("yandex", ENDPOINT))
INFO = RequestInfo(bidder="yandex")


def _request(params, imp_fields=None, **top):
    imp = {"id": "i", "banner": {"w": 300, "h": 250}, "ext": {"bidder": params}, **(imp_fields or {})}
    return {"id": "r", "imp": [imp], **top}


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"placement_id": "R-I-123456-2"}, "https://bs-metadsp.yandex.ru/prebid/123456?imp-id=2&ssp-id=10500"),
        ({"placement_id": "R-123456-1"}, "https://bs-metadsp.yandex.ru/prebid/123456?imp-id=1&ssp-id=10500"),
        ({"placement_id": "1-x-2-3"}, "https://bs-metadsp.yandex.ru/prebid/2?imp-id=3&ssp-id=10500"),
        ({"placement_id": "+7-8"}, "https://bs-metadsp.yandex.ru/prebid/+7?imp-id=8&ssp-id=10500"),
        ({"page_id": 11, "imp_id": 3}, "https://bs-metadsp.yandex.ru/prebid/11?imp-id=3&ssp-id=10500"),
        ({}, "https://bs-metadsp.yandex.ru/prebid/0?imp-id=0&ssp-id=10500"),
    ],
)
def test_placement_ids(params, want):
    calls, _, errors = requests_of(ADAPTER, _request(params), INFO)
    assert errors == []
    assert [call.uri for call in calls] == [want]


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placement_id": "R-I-123456"}}, "invalid placement id, it must contain two parts: R-I-123456"),
        ({"bidder": {"placement_id": "1-99999999999999999999"}}, "invalid placement id, it must contain two parts"),
        ({"bidder": {"page_id": "1"}}, "imp i: unable to unmarshal ext.bidder: cannot unmarshal"),
        ("x", "imp i: unable to unmarshal ext"),
    ],
)
def test_bad_params(ext, want):
    calls, _, errors = requests_of(ADAPTER, _request({}, {"ext": ext}), INFO)
    assert calls == []
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT]
    assert errors[0].message.startswith(want)


def test_query_referer_and_currency():
    request = _request({"page_id": 1, "imp_id": 2}, site={"domain": "d.com"}, cur=["EUR", "USD"])
    calls, _, _ = requests_of(ADAPTER, request, INFO)
    assert calls[0].uri == "https://bs-metadsp.yandex.ru/prebid/1?imp-id=2&ssp-cur=EUR&ssp-id=10500&target-ref=d.com"


@pytest.mark.parametrize(
    ("media", "want_imp", "error"),
    [
        ({"banner": {"format": [{"w": 1, "h": 2}]}}, {"banner": {"format": [{"w": 1, "h": 2}], "w": 1, "h": 2}}, None),
        ({"banner": {"w": 0, "h": 5}}, None, "Invalid size provided for Banner"),
        (
            {"video": {"w": 1, "h": 2, "mimes": ["a"]}},
            {"video": {"w": 1, "h": 2, "mimes": ["a"], "minduration": 1, "maxduration": 120, "protocols": [3]}},
            None,
        ),
        (
            {"video": {"w": 1, "h": 2, "mimes": ["a"], "minduration": 5, "maxduration": 9, "protocols": [2]}},
            {"video": {"w": 1, "h": 2, "mimes": ["a"], "minduration": 5, "maxduration": 9, "protocols": [2]}},
            None,
        ),
        ({"video": {"w": 1, "mimes": ["a"]}}, None, "Invalid size provided for Video"),
        ({"native": {"request": "{}"}}, {"native": {"request": "{}"}}, None),
        ({"audio": {"mimes": ["a"]}}, None, "Unsupported format. Yandex only supports banner, video, and native"),
    ],
)
def test_imp_rewrite(media, want_imp, error):
    request = {"id": "r", "imp": [{"id": "i", **media, "DisplayManager": "x", "ext": {"bidder": {"page_id": 1}}}]}
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    if error:
        assert calls == [] and errors[0].message.startswith(error)
        return
    assert errors == []
    imp = bodies[0]["imp"][0]
    assert {key: imp[key] for key in want_imp} == want_imp
    assert (imp["displaymanager"], imp["displaymanagerver"], "DisplayManager" in imp) == ("prebid.go", "1.1", False)


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({"device": {"ua": "UA", "ip": "1.2.3.4"}}, {}),
        ({"site": {"page": "p"}}, {}),
        (
            {"site": {"page": "p"}, "device": {"ua": "UA", "ip": "1.2.3.4", "language": "en"}},
            {
                "Content-Type": "application/json;charset=utf-8",
                "Accept": "application/json",
                "X-Openrtb-Version": "2.5",
                "Referer": "p",
                "Accept-Language": "en",
                "User-Agent": "UA",
                "X-Forwarded-For": "1.2.3.4",
                "X-Real-Ip": "1.2.3.4",
            },
        ),
    ],
)
def test_headers(top, want):
    calls, _, _ = requests_of(ADAPTER, _request({"page_id": 1}, **top), INFO)
    assert dict(calls[0].headers) == want


@pytest.mark.parametrize(
    ("imp", "impid", "want_type", "error"),
    [
        ({"id": "i", "banner": {}, "video": {}, "native": {}}, "i", "video", None),
        ({"id": "i", "banner": {}, "native": {}}, "i", "native", None),
        ({"id": "i", "banner": {}}, "i", "banner", None),
        ({"id": "i", "audio": {}}, "i", None, "Processing an invalid impression; cannot resolve impression type"),
        ({"id": "i", "banner": {}}, "x", None, "Invalid bid imp ID #x does not match any imp IDs"),
    ],
)
def test_bid_types(imp, impid, want_type, error):
    body = orjson.dumps({"id": "r", "cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": impid, "price": 1}]}]})
    response, errors = ADAPTER.make_bids({"imp": [imp]}, RequestData("POST", "u"), ResponseData(200, body))
    assert response is not None and response.currency == "USD"
    if error:
        assert response.bids == [] and errors[0].message.startswith(error) and errors[0].code == ErrorCode.BAD_INPUT
    else:
        assert errors == [] and [typed.bid_type for typed in response.bids] == [want_type]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (400, b"", (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (
            500,
            b"",
            (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. Run with request.debug = 1 for more info"),
        ),
        (
            200,
            b'"x"',
            (ErrorCode.BAD_SERVER_RESPONSE, 'Bad server response: &{%!d(string=expect { or n, but found ")}'),
        ),
    ],
)
def test_no_answer(status, body, want):
    response, errors = ADAPTER.make_bids({"imp": []}, RequestData("POST", "u"), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
