"""Invibes's own rules: one ad request for every banner imp's placement (BidParamsJson as Go's
encoding/json writes it), the subdomain from the last domainId, the GDPR facts from the ext
objects, imp errors reported only when no placement is left, the answer's typed bids."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, ResponseData
from hbserver.adapters.invibes import read_gdpr, subdomain
from tests.adapters.helpers import requests_of

ENDPOINT = "https://{{.ZoneID}}.invibes.example.com/bid"


def adapter() -> Any:
    return build_adapter("invibes", AdapterConfig("invibes", ENDPOINT))


def imp(imp_id: str, params: Any, banner: Any = None) -> dict[str, Any]:
    return {"id": imp_id, "banner": banner or {"format": [{"w": 300, "h": 250}]}, "ext": {"bidder": params}}


@pytest.mark.parametrize(("domain", "want"), [(0, "bid"), (1, "bid"), (1001, "bid"), (2, "bid2"), (1003, "bid3")])
def test_subdomain(domain, want):
    assert subdomain(domain) == want


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, (True, "")),
        ({"user": {"ext": {"consent": "c"}}, "regs": {"ext": {"gdpr": 0}}}, (False, "c")),
        ({"user": {"ext": {"consent": 5}}, "regs": {"ext": {"gdpr": 1}}}, (True, "")),
        ({"regs": {"ext": {"gdpr": 0, "us_privacy": 1}}}, (True, "")),  # the ext does not decode
    ],
)
def test_read_gdpr(top, want):
    assert read_gdpr(top) == want


def test_one_request_for_every_placement():
    imps = [
        imp("a", {"placementId": " p1 ", "domainId": 1}),
        imp("b", {"placementId": "p2", "domainId": 1004, "debug": {"testBvid": "bv"}}, {"w": 10, "h": 20}),
        {"id": "c", "video": {}, "ext": {"bidder": {"placementId": "p3"}}},  # no banner: let go
    ]
    request = {"id": "r", "site": {"page": "http://p.com/"}, "imp": imps}
    calls, bodies, errors = requests_of(adapter(), request, RequestInfo(bidder="invibes"))
    assert errors == []  # placements left: the dropped imp's error is not reported
    assert calls[0].uri == "https://bid4.invibes.example.com/bid"
    assert sorted(calls[0].imp_ids) == ["a", "b"]
    assert bodies[0]["BidParamsJson"] == (
        '{"PlacementIds":["p1","p2"],"BidVersion":"4","Properties":{" p1 ":{"Formats":[{"w":300,"h":250}],'
        '"ImpId":"a"},"p2":{"Formats":[{"w":10,"h":20}],"ImpId":"b"}}}'
    )
    assert (bodies[0]["IsTestBid"], bodies[0]["Bvid"]) == (True, "bv")


@pytest.mark.parametrize(
    ("imps", "site", "messages"),
    [
        ([{"id": "a", "banner": {}, "ext": 5}], {}, ["Error parsing bidderExt object"]),
        (
            [{"id": "a", "banner": {}, "ext": {"bidder": {"domainId": "x"}}}],
            {},
            ["Error parsing invibesExt parameters"],
        ),
        ([{"id": "a", "ext": {"bidder": {}}}], {}, ["Banner not specified"]),
        ([imp("a", {"placementId": "p"})], None, ["Site not specified"]),
    ],
)
def test_refusals(imps, site, messages):
    request = {"id": "r", "imp": imps, **({"site": site} if site is not None else {})}
    calls, _, errors = requests_of(adapter(), request, RequestInfo(bidder="invibes"))
    assert calls == []
    assert [error.message for error in errors] == messages


@pytest.mark.parametrize(
    ("status", "answer", "bids", "messages"),
    [
        (204, None, None, ["Unexpected status code: 204."]),
        (200, {"error": "boom"}, None, ["Server error: boom."]),
        (200, {"currency": "EUR", "typedBids": [{"bid": {"id": "b", "impid": "a", "price": 1}, "dealPriority": 3}]},
         [("b", "banner", 3)], []),
    ],
)  # fmt: skip
def test_answers(status, answer, bids, messages):
    body = b"" if answer is None else orjson.dumps(answer)
    response, errors = adapter().make_bids({"id": "r"}, RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert [error.message for error in errors] == messages
    if bids is None:
        assert response is None
    else:
        assert [(typed.bid["id"], typed.bid_type, typed.deal_priority) for typed in response.bids] == bids
        assert response.currency == "EUR"
