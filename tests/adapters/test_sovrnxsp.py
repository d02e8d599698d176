"""Sovrn XSP's own rules: imps with an ad format, the app's publisher and id from the params, tagid
from zone_id, bids typed by ext.creative_type with their mtype filled."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.sovrnxsp import build

ADAPTER = build(AdapterConfig("sovrnXsp", "http://x.example/rtb"))
INFO = RequestInfo("sovrnXsp")


def _imp(imp_id, params, media="banner"):
    return {"id": imp_id, media: {}, "ext": {"bidder": params}}


def test_one_call_with_the_app_from_the_last_imp():
    imps = [_imp("a", {"pub_id": "p1", "med_id": "m", "zone_id": "z"}), _imp("x", {"pub_id": "q"}, "audio"),
            _imp("b", {"pub_id": "p2"}, "native"), _imp("c", {"pub_id": 3})]  # fmt: skip
    calls, errors = ADAPTER.make_requests({"app": {"id": "orig"}, "imp": imps}, INFO)
    body = orjson.loads(calls[0].body)
    assert body["app"] == {"id": "m", "publisher": {"id": "p2"}} and calls[0].imp_ids == ["a", "b"]
    assert [imp.get("tagid") for imp in body["imp"]] == ["z", None]
    assert len(errors) == 1 and errors[0].message.startswith("imp #3: ")


def test_no_imp_with_an_ad_format():
    calls, errors = ADAPTER.make_requests({"app": {}, "imp": [_imp("x", {}, "audio")]}, INFO)
    assert calls == [] and [e.message for e in errors] == ["no matching impression with ad format"]


@pytest.mark.parametrize(
    ("ext", "mtype", "outcome"),
    [({"creative_type": 1}, 0, ("video", 2)), ({}, 0, ("banner", 1)), ({"creative_type": 2}, 3, ("native", 3)),
     ({"creative_type": 7}, 0, "Unsupported creative type: 7"), (None, 0, "expect { or n")],
)  # fmt: skip
def test_bids(ext, mtype, outcome):
    bid = {"id": "1", "impid": "a", "price": 1, "mtype": mtype} | ({} if ext is None else {"ext": ext})
    result, errors = ADAPTER.make_bids({}, None, ResponseData(200, orjson.dumps({"seatbid": [{"bid": [bid]}]})))
    if result is None:
        assert len(errors) == 1 and errors[0].message.startswith(outcome)
    else:
        assert (result.bids[0].bid_type, result.bids[0].bid["mtype"]) == outcome and result.currency == "USD"
