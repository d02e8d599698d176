"""AlgoriX adapter: the endpoint from the first imp's params (region hosts, path escaping), banner
sizes from formats, rewarded video, bid typing by ``ext.mediaType`` or the imp, status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.algorix import build
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("algorix", "https://{{.Host}}.test.com?sid={{.SourceId}}&token={{.AccountID}}"))
INFO = RequestInfo(bidder="algorix")


def imp(params: Any, **fields: Any) -> dict:
    return {"id": "i", "banner": {"w": 1, "h": 1}, **fields, "ext": fields.get("ext", {"bidder": params})}


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"sid": "s", "token": "t"}, "https://xyz.test.com?sid=s&token=t"),
        ({"sid": "s", "token": "t", "region": "APAC"}, "https://apac.xyz.test.com?sid=s&token=t"),
        ({"sid": "s", "token": "t", "region": "USE"}, "https://use.xyz.test.com?sid=s&token=t"),
        ({"sid": "s", "token": "t", "region": "euc"}, "https://xyz.test.com?sid=s&token=t"),
        ({"sid": "a/b?c", "token": "x y&z"}, "https://xyz.test.com?sid=a%2Fb%3Fc&token=x%20y&z"),
        ({"sid": 1}, "Invalid ExtImpAlgoriX value"),
    ],
)
def test_endpoint(params, want):
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(params)]}, INFO)
    assert [c.uri for c in calls] + [e.message for e in errors] == [want]
    assert all(e.code is ErrorCode.BAD_INPUT for e in errors)


def test_no_imps():
    calls, _bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": []}, INFO)
    assert calls == [] and [e.message for e in errors] == ["Invalid ExtImpAlgoriX value"]


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        (
            {"banner": {"w": 0, "h": 5, "format": [{"w": 3, "h": 4}]}},
            {"banner": {"w": 3, "h": 4, "format": [{"w": 3, "h": 4}]}},
        ),
        ({"banner": {"format": []}}, {"banner": {"format": []}}),
        (
            {"video": {"mimes": ["v"]}, "ext": {"bidder": {}, "prebid": {"is_rewarded_inventory": 1}}},
            {"video": {"mimes": ["v"], "ext": {"rewarded": 1}}},
        ),
        (
            {"video": {"mimes": ["v"]}, "ext": {"bidder": {}, "prebid": {"is_rewarded_inventory": 0}}},
            {"video": {"mimes": ["v"]}},
        ),
    ],
)
def test_imp_rewrites(fields, want):
    _calls, bodies, _errors = requests_of(ADAPTER, {"id": "r", "imp": [imp({}, **fields)]}, INFO)
    assert {key: bodies[0]["imp"][0][key] for key in want} == want


@pytest.mark.parametrize(
    ("ext", "media", "want"),
    [
        ({"mediaType": "video"}, {"banner": {}}, "video"),
        ({"mediaType": "audio"}, {"banner": {}}, "banner"),
        (None, {"native": {}}, "native"),
        (None, {"banner": {}, "video": {}}, "unable to fetch mediaType in multi-format: i"),
        ({"mediaType": 1}, {}, "unable to fetch mediaType in multi-format: i"),
    ],
)
def test_bid_type(ext, media, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({"ext": ext} if ext is not None else {})}
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i", **media}]}, {"cur": "EUR", "seatbid": [{"bid": [bid]}]})
    assert response is not None and response.currency == "USD"
    assert [t.bid_type for t in response.bids] + [e.message for e in errors] == [want]


@pytest.mark.parametrize(("status", "code"), [(400, ErrorCode.BAD_INPUT), (500, ErrorCode.BAD_SERVER_RESPONSE)])
def test_status(status, code):
    response, errors = bids_for(ADAPTER, {}, b"", status=status)
    assert response is None and [(e.message, e.code) for e in errors] == [(f"Unexpected status code: {status}.", code)]
