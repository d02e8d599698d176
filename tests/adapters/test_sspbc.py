"""sspBC's own rules: the request wrapped with PBS-Go's request type, bdver on the endpoint, an
endpoint url.Parse refuses refused at build time."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.sspbc import build, request_type

ADAPTER = build(AdapterConfig("sspBC", "http://ssp.example/bidder/?b=2&a=1"))


@pytest.mark.parametrize(
    ("request_", "entry_point", "kind"),
    [({"site": {}}, "openrtb2-auction", "openrtb2-web"), ({"app": {}}, "openrtb2-auction", "openrtb2-app"),
     ({"dooh": {}}, "openrtb2-auction", "openrtb2-dooh"), ({"site": {}}, "openrtb2-amp", "amp"),
     ({"app": {}}, "openrtb2-video", "video")],
)  # fmt: skip
def test_request_type(request_, entry_point, kind):
    assert request_type(request_, entry_point) == kind


def test_the_call():
    calls, errors = ADAPTER.make_requests(
        {"id": "r", "site": {}, "imp": [{"id": "a", "banner": {}}]}, RequestInfo("sspBC")
    )
    body = orjson.loads(calls[0].body)
    assert not errors and calls[0].uri == "http://ssp.example/bidder/?a=1&b=2&bdver=6.0" and calls[0].headers == {}
    assert body["requestInfo"] == {"PbsEntryPoint": "openrtb2-web"} and body["bidRequest"]["id"] == "r"


def test_an_endpoint_go_cannot_parse_is_refused():
    with pytest.raises(ValueError):
        build(AdapterConfig("sspBC", "http://ssp.example   /bidder/"))
