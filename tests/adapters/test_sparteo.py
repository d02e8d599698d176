"""Sparteo's own rules: host names from domains and pages, the query and its errors, the imp ext
moved under sparteo.params, the network id on the publisher, bids typed by ext.prebid.type."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.sparteo import build, normalize_hostname, query_and_errors, sparteo_ext, with_network_id

ADAPTER = build(AdapterConfig("sparteo", "https://b.example/s2s?old=1"))


@pytest.mark.parametrize(
    ("text", "host"),
    [("https://www.Example.com:8080/p", "example.com"), ("dev.example.com/x", "dev.example.com"),
     ("example.com:80", "example.com"), (" null ", ""), ("", ""), ("a.example.", "a.example")],
)  # fmt: skip
def test_normalize_hostname(text, host):
    assert normalize_hostname(text) == host


@pytest.mark.parametrize(
    ("request_", "query", "errors"),
    [
        ({"site": {"page": "https://www.p.example/x"}}, "network_id=n&site_domain=p.example", 0),
        ({"site": {}}, "network_id=n&site_domain=unknown", 1),
        ({"app": {"bundle": " b "}}, "network_id=n&app_domain=unknown&bundle=b", 0),
        ({"app": {"domain": "d.example", "bundle": "NULL"}}, "network_id=n&app_domain=d.example&bundle=unknown", 1),
        ({}, "network_id=n", 0),
    ],
)
def test_query_and_errors(request_, query, errors):
    got, problems = query_and_errors(request_, "n")
    assert got == query and len(problems) == errors


def test_imp_ext_and_publisher():
    ext = sparteo_ext({"bidder": {"networkId": "n", "custom1": "c"}, "sparteo": {"params": {"x": 1}}, "gpid": "g"})
    assert ext == {"sparteo": {"params": {"x": 1, "networkId": "n", "custom1": "c"}}, "gpid": "g"}
    assert with_network_id({}, "n") == {"site": {"publisher": {"ext": {"params": {"networkId": "n"}}}}}
    app = with_network_id({"app": {"publisher": {"ext": 5}}}, "n")["app"]
    assert app == {"publisher": {"ext": {"params": {"networkId": "n"}}}}


def test_one_call_with_every_imp():
    imps = [{"id": "a", "banner": {}, "ext": {"bidder": {"networkId": 1}}},
            {"id": "b", "banner": {}, "ext": {"bidder": {"networkId": "n"}}}]  # fmt: skip
    calls, errors = ADAPTER.make_requests({"site": {"domain": "s.example"}, "imp": imps}, RequestInfo("sparteo"))
    assert calls[0].uri == "https://b.example/s2s?network_id=n&site_domain=s.example" and calls[0].imp_ids == ["a", "b"]
    assert len(errors) == 1 and errors[0].message.startswith("ignoring imp id=a, error while decoding impExt, err: ")


def test_bids_typed_with_mtype():
    bids = [{"id": str(i), "impid": "a", "price": 1, "ext": {"prebid": {"type": kind}}}
            for i, kind in enumerate(["video", "audio", "x"])] + [{"id": "9", "impid": "a", "price": 1}]  # fmt: skip
    body = orjson.dumps({"cur": "EUR", "seatbid": [{"bid": bids}]})
    result, errors = ADAPTER.make_bids({}, None, ResponseData(200, body))
    assert not errors and result.currency == "EUR"
    assert [(b.bid_type, b.bid["mtype"]) for b in result.bids] == [("video", 2)]
