"""TrustedStack's own rule over its recipe: the host's external URL as the endpoint's ``src``."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.trustedstack import build


@pytest.mark.parametrize(
    ("endpoint", "external", "uri"),
    [
        ("https://t.example/rtb", "http://host.com", "https://t.example/rtb?src=http%3A%2F%2Fhost.com"),
        ("https://t.example/rtb?z=1&a=2", "h", "https://t.example/rtb?a=2&src=h&z=1"),
        ("https://t.example/rtb?z=1", "", "https://t.example/rtb?z=1"),  # no URL: as configured
    ],
)
def test_the_endpoint_names_the_host(endpoint, external, uri):
    adapter = build(AdapterConfig("trustedstack", endpoint, {"external_url": external}))
    calls, errors = adapter.make_requests({"imp": [{"id": "1", "banner": {}}]}, RequestInfo("trustedstack"))
    assert not errors and [call.uri for call in calls] == [uri]
