"""Theadx's own rule over its recipe: the device's user agent and addresses as its own headers."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.theadx import build, device_headers

ADAPTER = build(AdapterConfig("theadx", "https://t.example/request"))


@pytest.mark.parametrize(
    ("device", "headers"),
    [
        (None, {}),
        ({}, {}),
        ({"ua": "UA", "ip": "1.2.3.4"}, {"X-Device-User-Agent": "UA", "X-Real-Ip": "1.2.3.4"}),
        ({"ipv6": "::1", "ip": "1.2.3.4"}, {"X-Real-Ip": "::1, 1.2.3.4"}),
        ({"ua": "", "ipv6": "::1", "ip": 5}, {"X-Real-Ip": "::1"}),
    ],
)
def test_device_headers(device, headers):
    assert device_headers({} if device is None else {"device": device}) == headers


def test_the_call_carries_them_with_the_recipes():
    imp = {"id": "1", "banner": {}, "ext": {"bidder": {"tagid": 12}}}
    calls, errors = ADAPTER.make_requests({"imp": [imp], "device": {"ua": "UA"}}, RequestInfo("theadx"))
    assert not errors and calls[0].headers["X-Device-User-Agent"] == "UA" and calls[0].headers["X-Test"] == "1"
    assert b'"tagid":"12"' in calls[0].body
