"""smartx's own rule: Forwarded names the device's IPv4, beside X-Forwarded-For."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.smartx import build

ADAPTER = build(AdapterConfig("smartx", "https://s.example/bid"))


@pytest.mark.parametrize(
    ("device", "expected"),
    [
        ({"ip": "1.2.3.4", "ua": "UA"}, {"Forwarded": "for=1.2.3.4", "X-Forwarded-For": "1.2.3.4", "User-Agent": "UA"}),
        ({"ipv6": "::1"}, {}),
        (None, {}),
    ],
)
def test_forwarded(device, expected):
    request = {"imp": [{"id": "a", "video": {}}]} | ({} if device is None else {"device": device})
    calls, _ = ADAPTER.make_requests(request, RequestInfo("smartx"))
    headers = dict(calls[0].headers)
    assert headers.pop("Content-Type") and headers.pop("X-Openrtb-Version") == "2.5" and headers == expected
