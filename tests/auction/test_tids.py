"""Transaction ids: PBS-Go's validateAndFillSourceTID (host auto_gen_source_tid) and PBS-Java's
ext.prebid.createtids deciding over the transmitTid activity."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from hbserver.auction.request.tids import fill_tids
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account

NEW = "<new>"


def _shape(value: Any) -> Any:
    """A tid that is a fresh UUID reads as NEW."""
    if isinstance(value, str) and value not in ("given", "{{UUID}}"):
        uuid.UUID(value)
        return NEW
    return value


@pytest.mark.parametrize(
    ("source", "imp_ext", "expected_source", "expected_imp_tid"),
    [
        (None, None, NEW, NEW),
        ({}, {}, NEW, NEW),
        ({"tid": ""}, {"tid": ""}, NEW, NEW),
        ({"tid": "{{UUID}}"}, {"tid": "{{UUID}}"}, NEW, NEW),
        ({"tid": "given"}, {"tid": "given"}, "given", "given"),
        ({"tid": "given", "fd": 1}, {"bidder": {}}, "given", NEW),
    ],
    ids=["absent", "empty-objects", "empty-strings", "uuid-macro", "kept", "source-kept-imp-filled"],
)
def test_fill_tids(source, imp_ext, expected_source, expected_imp_tid):
    imp: dict[str, Any] = {"id": "1"} if imp_ext is None else {"id": "1", "ext": imp_ext}
    original_imp = {**imp}
    request: dict[str, Any] = {"imp": [imp]}
    if source is not None:
        request["source"] = source
    fill_tids(request)
    assert _shape(request["source"]["tid"]) == expected_source
    assert _shape(request["imp"][0]["ext"]["tid"]) == expected_imp_tid
    assert imp == original_imp  # the caller's imp is copied, never changed
    if isinstance(source, dict) and "fd" in source:
        assert request["source"]["fd"] == 1


@pytest.mark.parametrize(
    ("config", "createtids", "deny_activity", "sent"),
    [
        ({}, None, False, True),
        ({"auto_gen_source_tid": False}, None, False, True),
        ({}, False, False, False),
        ({}, None, True, False),
        ({}, True, True, True),
        ({"auto_gen_source_tid": False}, False, False, False),
    ],
    ids=["filled-and-sent", "host-off", "createtids-false", "activity-denies", "createtids-true-beats-activity",
         "createtids-false-drops-given-tids"],
)
async def test_bidders_receive_tids(make_client, bidders, data_dir, config, createtids, deny_activity, sent):
    if deny_activity:
        write_account(data_dir, "1001", {"privacy": {"allowactivities": {"transmitTid": {"default": False}}}})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), **config})
    body = auction_request(banner_imp())
    body["source"] = {"tid": "given"}
    body["imp"][0]["ext"]["tid"] = "given-imp"
    if createtids is not None:
        body["ext"]["prebid"]["createtids"] = createtids
    assert (await post(client, body)).status == 200
    received = bidders.received["alpha"][0]
    assert ("tid" in received.get("source", {})) is sent
    assert ("tid" in received["imp"][0]["ext"]) is sent


async def test_host_off_generates_nothing(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), "auto_gen_source_tid": False})
    assert (await post(client, auction_request(banner_imp()))).status == 200
    received = bidders.received["alpha"][0]
    assert "tid" not in received.get("source", {}) and "tid" not in received["imp"][0]["ext"]
