"""SmartRTB's own rules: banner/video imps only, tagid from zone_id, the first pub_id set in the
request ext and endpoint, bids typed by ext.format and sent without their ext."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from hbserver.adapters.smartrtb import build

ADAPTER = build(AdapterConfig("smartrtb", "http://s.example/rtb?pubid={{.PublisherID}}"))
INFO = RequestInfo("smartrtb")


def _imp(imp_id, params, media="banner"):
    return {"id": imp_id, media: {}, "ext": {"bidder": params}}


def test_one_call_for_the_first_publisher():
    imps = [_imp("n", {"pub_id": "x"}, "native"), _imp("a", {"zone_id": "z"}), _imp("b", {"pub_id": "p"}, "video"),
            _imp("c", {"pub_id": "q"})]  # fmt: skip
    calls, errors = ADAPTER.make_requests({"id": "r", "ext": {"x": 1}, "imp": imps}, INFO)
    body = orjson.loads(calls[0].body)
    assert not errors and calls[0].uri == "http://s.example/rtb?pubid=p" and body["ext"] == {"pub_id": "p"}
    assert [imp.get("tagid") for imp in body["imp"]] == ["z", None, None] and calls[0].imp_ids == ["a", "b", "c"]


def test_no_publisher_no_call():
    calls, errors = ADAPTER.make_requests({"imp": [_imp("a", {"zone_id": "z"})]}, INFO)
    assert calls == [] and [e.message for e in errors] == ["Cannot infer publisher ID from bid ext"]


@pytest.mark.parametrize(
    ("ext", "outcome"),
    [({"format": "VIDEO", "x": 1}, "video"), ({"format": "NATIVE"}, "Unsupported creative type NATIVE."),
     (None, "Invalid bid extension from endpoint."), ({"format": 1}, "Invalid bid extension from endpoint.")],
)  # fmt: skip
def test_bid_typing(ext, outcome):
    bid = {"id": "1", "impid": "a", "price": 1} | ({} if ext is None else {"ext": ext})
    result, errors = ADAPTER.make_bids({}, None, ResponseData(200, orjson.dumps({"seatbid": [{"bid": [bid]}]})))
    if result is None:
        assert [e.message for e in errors] == [outcome]
    else:
        assert result.bids[0].bid_type == outcome and "ext" not in result.bids[0].bid
