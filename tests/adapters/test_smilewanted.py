"""SmileWanted's own rule: the first imp's zoneId, when its params decode, is appended to the
endpoint; every imp is sent whatever its params, as a first-price auction."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.smilewanted import build

ADAPTER = build(AdapterConfig("smilewanted", "http://s.example/go/"))


@pytest.mark.parametrize(
    ("first", "uri"),
    [
        ({"zoneId": "z1"}, "http://s.example/go/z1"),
        ({"zoneId": 5}, "http://s.example/go/"),
        ({}, "http://s.example/go/"),
    ],
)
def test_zone_from_the_first_imp(first, uri):
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": first}}, {"id": "b", "video": {}, "ext": {"bidder": 1}}]
    calls, errors = ADAPTER.make_requests({"imp": imps}, RequestInfo("smilewanted"))
    body = orjson.loads(calls[0].body)
    assert not errors and calls[0].uri == uri and body["at"] == 1 and calls[0].imp_ids == ["a", "b"]
    assert calls[0].headers["Sw-Integration-Type"] == "prebid_server"
