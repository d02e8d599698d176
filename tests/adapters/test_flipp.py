"""Flipp's own rules: the user key (the user's id, else the params' userKey where privacy permits,
else a UUID), the content code (params, else the page's query), the ad types, and the bids' heights."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, ResponseData
from hbserver.adapters.flipp import query_value, user_key_permitted
from tests.adapters.helpers import requests_of

ENDPOINT = "http://flipp.example.com/pserver"
V2_PURPOSES_1_TO_4 = "CP0xeHPP0xeHPBcABBENAgCAAPAAAAAAAGcgAAAAAAAA"


def adapter() -> Any:
    built = build_adapter("flipp", AdapterConfig("flipp", ENDPOINT))
    built.new_uuid = lambda: "uuid"
    return built


def request_with(params: dict[str, Any], **top: Any) -> dict[str, Any]:
    imp = {"id": "i", "banner": {"format": [{"w": 300, "h": 600}]}, "ext": {"bidder": params}}
    return {"id": "r", "device": {"ip": "1.2.3.4"}, "site": {"page": "http://a.com/"}, "imp": [imp], **top}


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, True),
        ({"regs": {"coppa": 1}}, False),
        ({"regs": {"gdpr": 1}}, False),
        ({"ext": {"transmitEids": False}}, False),
        ({"ext": {"transmitEids": True}}, True),
        ({"user": {"consent": V2_PURPOSES_1_TO_4}}, True),
        ({"user": {"consent": "not base64!"}}, True),  # does not decode: permitted
        ({"user": {"consent": "BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA"}}, False),  # TCF v1 without purpose 4
    ],
)
def test_user_key_permitted(top, want):
    assert user_key_permitted(top) is want


@pytest.mark.parametrize(
    ("top", "key"),
    [({"user": {"id": "u1"}}, "u1"), ({}, "pk"), ({"regs": {"coppa": 1}}, "uuid")],
)
def test_user_key(top, key):
    _, bodies, errors = requests_of(adapter(), request_with({"userKey": "pk"}, **top), RequestInfo(bidder="flipp"))
    assert errors == []
    assert bodies[0]["user"] == {"key": key}


@pytest.mark.parametrize(
    ("page", "name", "want"),
    [("http://a.com/?flipp-content-code=x%20y&b=1", "flipp-content-code", "x y"), ("http://a.com/", "c", "")],
)
def test_query_value(page, name, want):
    assert query_value(page, name) == want


def test_placement():
    params = {"creativeType": "DTX", "siteId": 7, "options": {"contentCode": "cc", "startCompact": False}}
    _, bodies, _ = requests_of(adapter(), request_with(params), RequestInfo(bidder="flipp"))
    placement = bodies[0]["placements"][0]
    assert placement["adTypes"] == [5061]
    assert placement["properties"] == {"contentCode": "cc"}
    assert placement["options"] == {"contentCode": "cc"}  # omitempty
    assert placement["prebid"]["width"] == 300 and placement["zoneIds"] is None


@pytest.mark.parametrize(
    ("options", "custom", "height"),
    [({}, None, 2400), ({"startCompact": True}, None, 600), ({"startCompact": True}, {"compactHeight": 450.7}, 450)],
)
def test_bid_height(options, custom, height):
    decision = {
        "adId": 1,
        "creativeId": 2,
        "contents": [{"data": {"width": 300, **({"customData": custom} if custom else {})}}],
        "prebid": {"cpm": 1.5, "creative": "<div/>", "requestId": "i"},
    }
    body = orjson.dumps({"decisions": {"inline": [decision]}})
    request = request_with({"options": options})
    response, errors = adapter().make_bids(request, RequestData("POST", ENDPOINT), ResponseData(200, body))
    assert errors == []
    assert [typed.bid for typed in response.bids] == [
        {"id": "1", "impid": "i", "price": 1.5, "crid": "2", "adm": "<div/>", "w": 300, "h": height}
    ]


def test_no_ip_and_no_calls():
    request = request_with({}, device={})
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="flipp"))
    assert calls == []
    assert [error.message for error in errors] == [
        "no IP set in flipp bidder params or request device",
        "adapterRequest is empty",
    ]
