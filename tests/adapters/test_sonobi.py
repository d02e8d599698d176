"""Sonobi adapter: one call per imp, the tag id (and how it carries over between imps), floors
converted to USD, bid typing by imp and the unknown-imp error."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters.base import (
    JSON_HEADERS,
    AdapterConfig,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
)
from hbserver.adapters.sonobi import build
from tests.adapters.helpers import converter, requests_of

ENDPOINT = "https://apex.go.sonobi.com/prebid?partnerid=71d9d3d8af"
ADAPTER = build(AdapterConfig("sonobi", ENDPOINT))
INFO = RequestInfo(bidder="sonobi", convert_currency=converter("GBP"))


def imp(imp_id: str, params: Any = None, **fields: Any) -> dict:
    out = {"id": imp_id, "banner": {"w": 300, "h": 250}, **fields}
    out.setdefault("ext", {"bidder": {"TagID": f"tag-{imp_id}"} if params is None else params})
    return out


def run(request: dict):
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert all(call.uri == ENDPOINT and call.headers == JSON_HEADERS for call in calls)
    return calls, bodies, [e.message for e in errors]


def test_one_call_per_imp_in_usd():
    request = {"id": "r", "cur": ["GBP"], "imp": [imp("a"), imp("b")], "site": {"page": "p"}}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [call.imp_ids for call in calls] == [["a"], ["b"]]
    for body, imp_id in zip(bodies, ["a", "b"], strict=True):
        assert body == {**request, "cur": ["USD"], "imp": [{**imp(imp_id), "tagid": f"tag-{imp_id}"}]}


@pytest.mark.parametrize(
    ("imps", "want_tags", "want_errors"),
    [
        ([imp("a", {"tagid": "x"}), imp("b", {})], ["x", "x"], []),
        ([imp("a", {"TagID": "x"}), imp("b", {"tagid": None})], ["x", None], []),
        (
            [imp("a", {"TagID": "x"}), imp("b", {"TagID": 5}), imp("c", {})],
            ["x", None],
            ['cannot unmarshal openrtb_ext.ExtImpSonobi.TagID: expects " or n, but found 5'],
        ),
        ([imp("a", {"TagID": "x"}), imp("b", ext="s"), imp("c", {})], ["x", "x"], ['expect { or n, but found "']),
        ([imp("a", {}, tagid="old")], [None], []),
    ],
)
def test_tag_id(imps, want_tags, want_errors):
    _, bodies, errors = run({"id": "r", "imp": imps})
    assert errors == want_errors
    assert [body["imp"][0].get("tagid") for body in bodies] == want_tags


@pytest.mark.parametrize(
    ("fields", "want", "want_errors"),
    [
        ({"bidfloor": 1.5, "bidfloorcur": "GBP"}, {"bidfloor": 3.0, "bidfloorcur": "USD"}, []),
        ({"bidfloor": 1.5, "bidfloorcur": "usd"}, {"bidfloor": 1.5, "bidfloorcur": "usd"}, []),
        ({"bidfloor": 1.5}, {"bidfloor": 1.5, "bidfloorcur": None}, []),
        ({"bidfloor": 0, "bidfloorcur": "EUR"}, {"bidfloor": 0, "bidfloorcur": "EUR"}, []),
        ({"bidfloor": 1.5, "bidfloorcur": "EUR"}, None, ["Currency conversion rate not found: 'EUR' => 'USD'"]),
    ],
)
def test_floor(fields, want, want_errors):
    calls, bodies, errors = run({"id": "r", "imp": [imp("a", **fields)]})
    assert errors == want_errors
    if want is None:
        assert calls == []
        return
    for key, value in want.items():
        assert bodies[0]["imp"][0].get(key) == value, key


def bids(request: dict, *impids: str):
    answer = {"id": "r", "cur": "EUR", "seatbid": [{"bid": [{"id": i, "impid": i, "price": 1} for i in impids]}]}
    return ADAPTER.make_bids(request, RequestData("POST", ENDPOINT), ResponseData(200, orjson.dumps(answer)))


def test_bid_types_by_imp_in_usd():
    request = {
        "imp": [
            imp("b"),
            imp("v", banner=None, video={}),
            imp("bv", video={}),
            imp("n", banner=None, native={}),
            imp("a", banner=None, audio={}),
        ]
    }
    response, errors = bids(request, "b", "v", "bv", "n", "a")
    assert errors == []
    assert response is not None and response.currency == "USD"
    assert [typed.bid_type for typed in response.bids] == ["banner", "video", "banner", "native", "banner"]


def test_a_bid_for_an_unknown_imp_voids_the_answer():
    response, errors = bids({"imp": [imp("a")]}, "a", "zz")
    assert response is None
    assert [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_INPUT, 'Failed to find impression "zz" ')]
