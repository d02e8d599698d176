"""Goldbach adapter: calls per publisher, the imp ext rewrite with targetings, the request id and
ext, dropped imps, status 201, bid typing by ext.prebid.type."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.goldbach import build
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "https://gold.bach/prebid/adapter-endpoint"
ADAPTER = build(AdapterConfig("goldbach", ENDPOINT))
INFO = RequestInfo(bidder="goldbach")


def imp(imp_id: str, publisher: Any = "p", slot: Any = "s", **params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": {}, "ext": {"bidder": {"publisherId": publisher, "slotId": slot, **params}}}


def test_one_call_per_publisher():
    request = {"id": "r", "imp": [imp("a", "p1"), imp("b", "p2"), imp("c", "p1")]}
    calls, bodies, errors = requests_of(ADAPTER, request, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids) for c in calls] == [(ENDPOINT, ["a", "c"]), (ENDPOINT, ["b"])]
    assert [(b["id"], b["ext"]) for b in bodies] == [
        ("r_p1", {"goldbach": {"publisherId": "p1"}}),
        ("r_p2", {"goldbach": {"publisherId": "p2"}}),
    ]
    assert bodies[0]["imp"][0] == {"id": "a", "banner": {}, "ext": {"goldbach": {"slotId": "s"}}}


@pytest.mark.parametrize(
    ("targeting", "want"),
    [
        ({"k": "v", "l": ["a", "b"]}, {"k": ["v"], "l": ["a", "b"]}),
        ({}, None),
    ],
)
def test_targetings(targeting, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp("a", customTargeting=targeting)]}, INFO)
    assert bodies[0]["imp"][0]["ext"]["goldbach"].get("targetings") == want


@pytest.mark.parametrize(
    ("ext", "want", "error"),
    [
        ({"goldbach": {"publisherId": "x", "mockResponse": True}}, {"publisherId": "p", "mockResponse": True}, None),
        ({"inline": {"prebid": {}}}, {"publisherId": "p"}, None),
        ({"goldbach": "x"}, {"publisherId": "p"}, "unable to unmarshal request.ext: "),
    ],
)
def test_request_ext(ext, want, error):
    _, bodies, errors = requests_of(ADAPTER, {"id": "r", "ext": ext, "imp": [imp("a")]}, INFO)
    assert bodies[0]["ext"]["goldbach"] == want
    assert bodies[0]["ext"].get("inline") == ext.get("inline")
    assert [e.message.startswith(error) for e in errors] == ([True] if error else [])


@pytest.mark.parametrize(
    ("the_imp", "error"),
    [
        (imp("a", publisher=""), "publisherId and slotId are required"),
        (imp("a", slot=""), "publisherId and slotId are required"),
        ({"id": "a", "ext": 1}, "unable to unmarshal imp.ext: "),
        (imp("a", slot=1), "unable to unmarshal imp.ext.bidder: "),
        (imp("a", customTargeting={"k": 1}), "unable to unmarshal imp.ext.bidder: "),
    ],
)
def test_dropped_imps(the_imp, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [the_imp]}, INFO)
    assert calls == []
    assert [e.code for e in errors] == [ErrorCode.BAD_INPUT] * 2
    assert errors[0].message.startswith(error)
    assert errors[1].message == "no valid impression found"


@pytest.mark.parametrize(
    ("exts", "types", "errors"),
    [
        ([{"prebid": {"type": "video"}}], ["video"], []),
        ([{"prebid": {}}], None, ["no media type for bid b0", "no valid bids found in response"]),
        ([None, {"prebid": {"type": "native"}}], ["native"], ["unable to unmarshal ext for bid: "]),
    ],
)
def test_bids(exts, types, errors):
    bids = [{"id": f"b{n}", "impid": "i", "price": 1, **({"ext": e} if e else {})} for n, e in enumerate(exts)]
    response, got = bids_for(ADAPTER, {}, {"id": "r", "cur": "CHF", "seatbid": [{"bid": bids}]}, 201)
    assert (None if response is None else [t.bid_type for t in response.bids]) == types
    assert [e.message[: len(want)] for e, want in zip(got, errors, strict=True)] == errors


@pytest.mark.parametrize(
    ("status", "errors"),
    [(204, []), (200, ["unexpected status code: 200. Run with request.debug = 1 for more info"])],
)
def test_status(status, errors):
    response, got = bids_for(ADAPTER, {}, {"id": "r"}, status)
    assert response is None
    assert [e.message for e in got] == errors
