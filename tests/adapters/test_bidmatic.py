"""Bidmatic's own rules over its recipe: calls grouped by source, the imp's new ext and floor, the
source's failures and the bids' mtype (the params' and answer's wording are recipe steps)."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.bidmatic import build
from tests.adapters.helpers import bids_for

ADAPTER = build(AdapterConfig("bidmatic", "http://b.example/ortb"))
INFO = RequestInfo("bidmatic")


def _imp(imp_id, params, **media):
    return {"id": imp_id, **(media or {"banner": {}}), "ext": {"bidder": params}}


def test_calls_grouped_by_source():
    imps = [_imp("a", {"source": 5}), _imp("b", {"source": "7", "bidFloor": 1.5}), _imp("c", {"source": "5"})]
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert [(c.uri, c.imp_ids) for c in calls] == [
        ("http://b.example/ortb?source=5", ["a", "c"]),
        ("http://b.example/ortb?source=7", ["b"]),
    ] and not errors
    imp_b = orjson.loads(calls[1].body)["imp"][0]
    assert imp_b["ext"] == {"bidmatic": {"source": 7, "bidFloor": 1.5}} and imp_b["bidfloor"] == 1.5


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"source": "x"}, 'ignoring imp id=a, error while marshaling impExt, err: json: invalid number literal "x"'),
        ({"source": "1.5"}, 'strconv.ParseInt: parsing "1.5": invalid syntax'),
        ({}, 'strconv.ParseInt: parsing "": invalid syntax'),
        ({"source": 1, "siteId": "s"}, "ignoring imp id=a, error while decoding impExt, err: "),
        (None, "ignoring imp id=a, extImpBidder is empty"),
    ],
)
def test_bad_imps(params, error):
    imp = _imp("a", params) if params is not None else {"id": "a", "banner": {}}
    calls, errors = ADAPTER.make_requests({"imp": [imp]}, INFO)
    assert calls == [] and len(errors) == 1 and errors[0].message.startswith(error)


def test_bids_typed_with_their_mtype():
    imps = [{"id": "v", "video": {}, "banner": {}}, {"id": "n", "native": {}}, {"id": "x"}]
    bids = [{"id": f"b{i}", "impid": imp_id, "price": 1} for i, imp_id in enumerate(["v", "n", "x", "gone"])]
    response, errors = bids_for(ADAPTER, {"imp": imps}, {"seatbid": [{"bid": bids}]})
    assert [(t.bid_type, t.bid["mtype"]) for t in response.bids] == [("video", 2), ("native", 4), ("banner", 1)]
    assert [e.message for e in errors] == ["ignoring bid id=b3, request doesn't contain any impression with id=gone"]
