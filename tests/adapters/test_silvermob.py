"""SilverMob's own rule: a host outside its regions drops the imp in its words."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.silvermob import build

ADAPTER = build(AdapterConfig("silvermob", "http://{{.Host}}.s.example/bid/{{.ZoneID}}"))


@pytest.mark.parametrize(
    ("host", "outcome"),
    [("eu", "http://eu.s.example/bid/z"), ("global", "http://global.s.example/bid/z"), ("mars", "invalid host mars"),
     ("", "invalid host ")],
)  # fmt: skip
def test_host(host, outcome):
    imp = {"id": "a", "banner": {}, "ext": {"bidder": {"zoneid": "z", "host": host}}}
    calls, errors = ADAPTER.make_requests({"imp": [imp]}, RequestInfo("silvermob"))
    assert [c.uri for c in calls] + [e.message for e in errors] == [outcome]
