"""pb-richmedia-filter: PBS-Java's BidResponsesMraidFilterTest, ModuleConfigResolverTest,
PbRichmediaFilterAllProcessedBidResponsesHookTest and PbRichMediaFilterSpec's cases, as tables."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.auction.bids.accept import AuctionBid
from hbserver.hooks.api import AllProcessedBidResponsesPayload, HookResult, InvocationContext
from hbserver.modules import builder_of
from hbserver.modules.richmedia_filter import (
    CODE,
    HOOK_CODE,
    REJECTION_CODE,
    Properties,
    RichmediaHookResult,
    build,
)
from hbserver.modules.richmedia_filter.config import account_properties, host_properties
from hbserver.modules.richmedia_filter.mraid import rejections

MRAID = '<script src="mraid.js"></script>'


def _bid(bidder: str, imp_id: str, adm: str | None) -> AuctionBid:
    bid: dict[str, Any] = {"id": f"{bidder}-{imp_id}-{adm}", "impid": imp_id, "price": 1.0}
    if adm is not None:
        bid["adm"] = adm
    return AuctionBid(bidder, bidder, bid, "banner", 1.0, imp_id, False)


def _run(host: dict[str, Any], account: dict[str, Any] | None, bids: list[AuctionBid]) -> tuple[HookResult, list]:
    before = copy.deepcopy(bids)
    ctx = InvocationContext("/openrtb2/auction", "acc", account, {}, HOOK_CODE)
    payload = AllProcessedBidResponsesPayload(list(bids))
    result = build(host).handle_all_processed_bid_responses(ctx, payload)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    assert bids == before
    return result, payload.bids


def test_codes() -> None:
    assert (CODE, REJECTION_CODE) == ("pb-richmedia-filter", 350)
    assert HOOK_CODE == "pb-richmedia-filter-all-processed-bid-responses-hook"
    builder = builder_of(CODE)
    assert builder is not None and hasattr(builder({"enabled": True}), "handle_all_processed_bid_responses")


# BidResponsesMraidFilterTest
def test_filter_keeps_bids_without_the_pattern() -> None:
    assert rejections("mraid.js", [_bid("bidderA", "imp_id", "adm1"), _bid("bidderB", "imp_id", "adm2")]) == []


def test_filter_rejects_bids_with_the_pattern() -> None:
    valid1, valid2 = _bid("bidderB", "imp_id1", "adm1"), _bid("bidderA", "imp_id2", "adm2")
    invalid_b = _bid("bidderB", "imp_id2", "adm2_mraid.js")
    invalid_c1, invalid_c2 = _bid("bidderC", "imp_id1", "adm1_mraid.js"), _bid("bidderC", "imp_id2", "adm2_mraid.js")
    bids = [_bid("bidderA", "imp_id1", "adm1"), valid2, valid1, invalid_b, invalid_c1, invalid_c2]
    found = rejections("mraid.js", bids)
    assert [(r.bidder, r.bids, r.imp_ids) for r in found] == [
        ("bidderB", (invalid_b,), ["imp_id2"]),
        ("bidderC", (invalid_c1, invalid_c2), ["imp_id1", "imp_id2"]),
    ]
    assert found[1].error() == {"code": 5, "message": "Invalid bid", "impIds": ["imp_id1", "imp_id2"]}
    assert found[0].analytics_result() == {
        "status": "success-block",
        "values": {"richmedia-format": "mraid"},
        "appliedto": {"bidders": ["bidderB"], "impids": ["imp_id2"]},
    }


@pytest.mark.parametrize(
    ("pattern", "adm", "rejected"),
    [
        ("mraid.js", "mraid.js", True),
        ("mraid.js", "x-mraid.js-y", True),
        ("mraid.js", "MRAID.JS", False),  # case counts
        ("mraid.js", None, False),
        ("mraid.js", "", False),
        (None, "mraid.js", False),
        ("", "anything", True),  # StringUtils.contains(adm, "")
        ("", "", True),
        ("", None, False),
    ],
)
def test_pattern_match(pattern: str | None, adm: str | None, rejected: bool) -> None:
    assert bool(rejections(pattern, [_bid("b", "i", adm)])) is rejected


GLOBAL = Properties(False, "pattern")
ACCOUNT = Properties(True, MRAID)


# ModuleConfigResolverTest
@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"filter-mraid": True, "mraid-script-pattern": MRAID}, ACCOUNT),
        ({}, None),
        (None, None),
        ({"filter-mraid": "invalid_type", "mraid-script-pattern": MRAID}, None),
        ({"mraid-script-pattern": MRAID}, None),
        ({"filter-mraid": True}, None),
        ({"filterMraid": True, "mraidScriptPattern": MRAID}, None),  # no alias: both keys missing
        ({"filter-mraid": None, "mraid-script-pattern": None}, Properties(None, None)),
        ({"filter-mraid": "true", "mraid-script-pattern": 5, "other": []}, Properties(True, "5")),
        ({"filter-mraid": True, "mraid-script-pattern": ["x"]}, None),
    ],
)
def test_account_properties(node: dict[str, Any] | None, expected: Properties | None) -> None:
    assert account_properties(node) == expected


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"enabled": True}, Properties(False, None)),
        ({"filter-mraid": True, "mraid-script-pattern": MRAID}, ACCOUNT),
        ({"filterMraid": "yes", "mraid_script_pattern": "p"}, Properties(True, "p")),  # Spring's relaxed names
        ({"FILTER-MRAID": "off", "mraid-script-pattern": None}, Properties(False, None)),
        ({"filter-mraid": None, "mraid-script-pattern": 7}, Properties(False, "7")),
    ],
)
def test_host_properties(section: dict[str, Any], expected: Properties) -> None:
    assert host_properties(section) == expected


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"filter-mraid": "maybe"}, "filter-mraid"),
        ({"filterMraid": []}, "filterMraid"),
        ({"mraid-script-pattern": {"a": 1}}, "mraid-script-pattern"),
    ],
)
def test_host_properties_refused(section: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=f"hooks.modules.pb-richmedia-filter.{key}"):
        build(section)


PATTERN = "pattern-x"
ENABLED_HOST = {"enabled": True, "filter-mraid": True, "mraid-script-pattern": PATTERN}
DISABLED_HOST = {"enabled": True, "filter-mraid": False, "mraid-script-pattern": PATTERN}


# PbRichmediaFilterAllProcessedBidResponsesHookTest and PbRichMediaFilterSpec
@pytest.mark.parametrize(
    ("host", "account", "adm", "rejected"),
    [
        # host settings without a usable pattern or switch: nothing happens
        ({"enabled": True, "mraid-script-pattern": PATTERN}, None, PATTERN, False),
        ({"enabled": True, "filter-mraid": True}, None, PATTERN, False),
        ({"enabled": True, "filter-mraid": False}, None, PATTERN, False),
        ({"enabled": True}, None, PATTERN, False),
        # the host's settings
        (DISABLED_HOST, None, PATTERN, False),
        (DISABLED_HOST, None, f"r-{PATTERN}-r", False),
        (ENABLED_HOST, None, PATTERN, True),
        (ENABLED_HOST, None, f"r-{PATTERN}", True),
        (ENABLED_HOST, None, f"{PATTERN}.r", True),
        # an account without a pattern is unreadable: the host's apply
        (ENABLED_HOST, {"filter-mraid": True}, None, False),
        (ENABLED_HOST, {"filter-mraid": True}, "", False),
        (ENABLED_HOST, {"filter-mraid": True}, "random", False),
        (ENABLED_HOST, {"filter-mraid": True}, PATTERN, True),
        # the account's settings replace the host's
        (DISABLED_HOST, {"filter-mraid": True, "mraid-script-pattern": PATTERN}, f"r-{PATTERN}", True),
        (ENABLED_HOST, {"filter-mraid": False, "mraid-script-pattern": PATTERN}, PATTERN, False),
        (ENABLED_HOST, {"filter-mraid": True, "mraid-script-pattern": "acc"}, "acc", True),
        (ENABLED_HOST, {"filter-mraid": True, "mraid-script-pattern": "acc"}, PATTERN, False),
        (ENABLED_HOST, {"filter-mraid": None, "mraid-script-pattern": PATTERN}, PATTERN, False),
    ],
)
def test_hook(host: dict[str, Any], account: dict[str, Any] | None, adm: str | None, rejected: bool) -> None:
    bid = _bid("generic", "imp1", adm)
    result, after = _run(host, account, [bid])
    if not rejected:
        assert type(result) is HookResult and result.mutations == [] and result.analytics_tags == {}
        assert after == [bid]
        return
    assert isinstance(result, RichmediaHookResult)
    assert after == [] and [m.kind for m in result.mutations] == ["update"]
    assert [(r.bidder, r.bids) for r in result.rejections] == [("generic", (bid,))]
    assert result.analytics_tags == {
        "activities": [
            {
                "name": "reject-richmedia",
                "status": "success",
                "results": [
                    {
                        "status": "success-block",
                        "values": {"richmedia-format": "mraid"},
                        "appliedto": {"bidders": ["generic"], "impids": ["imp1"]},
                    }
                ],
            }
        ]
    }


def test_hook_rejects_per_bidder_and_keeps_the_rest() -> None:
    bids = [
        _bid("bidderA", "imp_id1", "a mraid.js"),
        _bid("bidderB", "imp_id3", "mraid.js"),
        _bid("bidderA", "imp_id1", "clean"),
        _bid("bidderA", "imp_id2", "mraid.js b"),
        _bid("bidderC", "imp_id1", "clean"),
    ]
    result, after = _run({"filter-mraid": True, "mraid-script-pattern": "mraid.js"}, None, bids)
    assert after == [bids[2], bids[4]]
    assert isinstance(result, RichmediaHookResult)
    assert [(r.bidder, r.imp_ids) for r in result.rejections] == [
        ("bidderA", ["imp_id1", "imp_id2"]),
        ("bidderB", ["imp_id3"]),
    ]
    applied = [r["appliedto"] for r in result.analytics_tags["activities"][0]["results"]]
    assert applied == [
        {"bidders": ["bidderA"], "impids": ["imp_id1", "imp_id2"]},
        {"bidders": ["bidderB"], "impids": ["imp_id3"]},
    ]
