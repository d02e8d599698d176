"""Multibid: PBS-Go's validation rows (openrtb_ext/multibid_test.go), its warnings in an auction
(exchangetest/multi-bids-error.json), what each bidder is sent (exchange/utils.go), and targeting
with multibid (exchangetest/multi-bid*.json, targeting_test.go "Full basic targeting with multibid").

PBS-Go's exchange tests also expect ``hb_cache_host``/``hb_cache_path`` on every targeted bid (as
hbserver writes them too: tests/auction/test_core_rules.py); the ports below run without a cache
host, so those keys are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.bids.multibid import NO_MULTIBID, WARNING_CODE, MultiBid, _Raw, _validate, parse_multibid
from hbserver.auction.request.validate import RequestError
from hbserver.auction.response.targeting import (
    AuctionResults,
    TargetingOptions,
    apply_targeting,
    bids_to_cache,
    run_auction,
)

KNOWN = ("appnexus", "pubmatic", "rubicon", "audienceNetwork")


def pm(max_bids: int, prefix: str = "pm", bidder: str = "pubmatic") -> dict[str, Any]:
    return {"bidder": bidder, "maxbids": max_bids, "targetbiddercodeprefix": prefix}


# TestValidateAndBuildExtMultiBid: request multibid -> validated entries, warnings
VALIDATION_ROWS = [
    pytest.param(None, [], [], id="prebid-nil"),
    pytest.param({"multibid": None}, [], [], id="multibid-nil"),
    pytest.param({"multibid": []}, [], [], id="multibid-empty"),
    pytest.param(
        {"multibid": [{"bidder": "pubmatic"}]},
        [],
        ["maxBids not defined for {Bidder:pubmatic, Bidders:[], MaxBids:<nil>, TargetBidderCodePrefix:}"],
        id="maxbids-not-defined",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 2}]},
        [],
        ["bidder(s) not specified for {Bidder:, Bidders:[], MaxBids:2, TargetBidderCodePrefix:}"],
        id="bidder-or-bidders-not-defined",
    ),
    pytest.param(
        {"multibid": [pm(2), pm(3, "pubm")]},
        [pm(2)],
        [
            "multiBid already defined for pubmatic, ignoring this instance "
            "{Bidder:pubmatic, Bidders:[], MaxBids:3, TargetBidderCodePrefix:pubm}"
        ],
        id="bidder-already-present",
    ),
    pytest.param(
        {"multibid": [pm(2), {"maxbids": 2, "bidder": "appnexus", "bidders": ["rubicon"],
                              "targetbiddercodeprefix": "appN"}]},
        [pm(2), {"bidder": "appnexus", "maxbids": 2, "targetbiddercodeprefix": "appN"}],
        ["ignoring bidders from {Bidder:appnexus, Bidders:[rubicon], MaxBids:2, TargetBidderCodePrefix:appN}"],
        id="bidder-and-bidders-only-bidder-used",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 2, "bidder": "appnexus", "targetbiddercodeprefix": "appN"}]},
        [{"bidder": "appnexus", "maxbids": 2, "targetbiddercodeprefix": "appN"}],
        [],
        id="only-bidder",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 2, "bidders": ["appnexus", "someBidder"]}]},
        [{"bidders": ["appnexus", "someBidder"], "maxbids": 2}],
        [],
        id="only-bidders",
    ),
    pytest.param(
        {"multibid": [pm(9), {"maxbids": 2, "bidders": ["appnexus", "pubmatic"]}]},
        [pm(9), {"bidders": ["appnexus"], "maxbids": 2}],
        [
            "multiBid already defined for pubmatic, ignoring this instance "
            "{Bidder:, Bidders:[appnexus pubmatic], MaxBids:2, TargetBidderCodePrefix:}"
        ],
        id="bidders-one-already-present",
    ),
    pytest.param(
        {"multibid": [pm(9), {"bidders": ["appnexus"], "maxbids": 3},
                      {"maxbids": 2, "bidders": ["appnexus", "pubmatic"]}]},
        [pm(9), {"bidders": ["appnexus"], "maxbids": 3}],
        [
            "multiBid already defined for appnexus, ignoring this instance "
            "{Bidder:, Bidders:[appnexus pubmatic], MaxBids:2, TargetBidderCodePrefix:}",
            "multiBid already defined for pubmatic, ignoring this instance "
            "{Bidder:, Bidders:[appnexus pubmatic], MaxBids:2, TargetBidderCodePrefix:}",
        ],
        id="bidders-all-already-present",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 2, "bidders": ["appnexus"], "targetbiddercodeprefix": "appN"}]},
        [{"bidders": ["appnexus"], "maxbids": 2}],
        ["ignoring targetbiddercodeprefix for {Bidder:, Bidders:[appnexus], MaxBids:2, TargetBidderCodePrefix:appN}"],
        id="bidders-with-prefix",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 0, "bidder": "appnexus", "targetbiddercodeprefix": "appN"}]},
        [{"bidder": "appnexus", "maxbids": 1, "targetbiddercodeprefix": "appN"}],
        ["invalid maxBids value, using minimum 1 limit for {Bidder:appnexus, Bidders:[], MaxBids:0, "
         "TargetBidderCodePrefix:appN}"],
        id="maxbids-below-minimum",
    ),
    pytest.param(
        {"multibid": [{"maxbids": 10, "bidder": "appnexus", "targetbiddercodeprefix": "appN"}]},
        [{"bidder": "appnexus", "maxbids": 9, "targetbiddercodeprefix": "appN"}],
        ["invalid maxBids value, using maximum 9 limit for {Bidder:appnexus, Bidders:[], MaxBids:10, "
         "TargetBidderCodePrefix:appN}"],
        id="maxbids-over-maximum",
    ),
    pytest.param(  # addMultiBid: the clamp warning shows the value sent, the next one the value used
        {"multibid": [{"maxbids": 10, "bidder": "appnexus", "bidders": ["rubicon"]}]},
        [{"bidder": "appnexus", "maxbids": 9}],
        [
            "invalid maxBids value, using maximum 9 limit for {Bidder:appnexus, Bidders:[rubicon], MaxBids:10, "
            "TargetBidderCodePrefix:}",
            "ignoring bidders from {Bidder:appnexus, Bidders:[rubicon], MaxBids:9, TargetBidderCodePrefix:}",
        ],
        id="clamped-then-bidders-ignored",
    ),
    pytest.param(  # addMultiBid: the prefix warning comes even when every name was a duplicate
        {"multibid": [{"bidders": ["appnexus"], "maxbids": 2},
                      {"bidders": ["appnexus"], "maxbids": 3, "targetbiddercodeprefix": "x"}]},
        [{"bidders": ["appnexus"], "maxbids": 2}],
        [
            "multiBid already defined for appnexus, ignoring this instance "
            "{Bidder:, Bidders:[appnexus], MaxBids:3, TargetBidderCodePrefix:x}",
            "ignoring targetbiddercodeprefix for {Bidder:, Bidders:[appnexus], MaxBids:3, TargetBidderCodePrefix:x}",
        ],
        id="prefix-warned-after-duplicates",
    ),
    pytest.param(  # PBS-Go's duplicate check is case-sensitive
        {"multibid": [pm(2), pm(3, "x", "PubMatic")]},
        [pm(2), pm(3, "x", "PubMatic")],
        [],
        id="duplicate-check-case-sensitive",
    ),
]


@pytest.mark.parametrize(("prebid", "entries", "warnings"), VALIDATION_ROWS)
def test_validate_and_build(prebid, entries, warnings):
    multibid, got = parse_multibid(prebid, KNOWN)
    assert (multibid.entries, got) == (entries, warnings)


# Test_addMultiBid rows whose map already holds a bidder
@pytest.mark.parametrize(
    ("seen", "entry", "kept", "warnings"),
    [
        pytest.param(set(), _Raw("", None, None, ""), [], [
            "maxBids not defined for {Bidder:, Bidders:[], MaxBids:<nil>, TargetBidderCodePrefix:}"], id="empty"),
        pytest.param({"pubmatic"}, _Raw("pubmatic", None, 2, ""), [], [
            "multiBid already defined for pubmatic, ignoring this instance "
            "{Bidder:pubmatic, Bidders:[], MaxBids:2, TargetBidderCodePrefix:}"], id="bidder-present"),
        pytest.param({"pubmatic"}, _Raw("appnexus", ["rubicon"], 2, "appN"), [_Raw("appnexus", None, 2, "appN")], [
            "ignoring bidders from {Bidder:appnexus, Bidders:[rubicon], MaxBids:2, TargetBidderCodePrefix:appN}"],
            id="bidder-and-bidders"),
        pytest.param({"pubmatic"}, _Raw("", ["appnexus", "pubmatic"], 2, ""), [_Raw("", ["appnexus"], 2, "")], [
            "multiBid already defined for pubmatic, ignoring this instance "
            "{Bidder:, Bidders:[appnexus pubmatic], MaxBids:2, TargetBidderCodePrefix:}"], id="bidders-one-present"),
    ],
)
def test_add_multibid(seen, entry, kept, warnings):
    got: list[str] = []
    assert _validate(entry, set(seen), got) == kept
    assert got == warnings


def test_multi_bids_error_warnings():
    """exchangetest/multi-bids-error.json: every warning of one request, in order (code 10006)."""
    prebid = {"multibid": [
        {"bidder": "appnexus"},
        {"maxbids": -1, "bidder": "rubicon", "targetbiddercodeprefix": "rubN"},
        {"maxbids": 10, "bidder": "pubmatic", "targetbiddercodeprefix": "pm"},
        {"maxbids": 4, "bidder": "pubmatic", "targetbiddercodeprefix": "pubM"},
        {"maxbids": 5, "bidder": "groupm", "bidders": ["someBidder"], "targetbiddercodeprefix": "gm"},
        {"maxbids": 6, "bidders": ["groupm"]},
        {"maxbids": 7, "bidders": ["33across"], "targetbiddercodeprefix": "abc"},
        {"maxbids": 8, "targetbiddercodeprefix": "xyz"},
    ]}
    multibid, warnings = parse_multibid(prebid, KNOWN, 3)
    assert WARNING_CODE == 10006
    assert warnings == [
        "maxBids not defined for {Bidder:appnexus, Bidders:[], MaxBids:<nil>, TargetBidderCodePrefix:}",
        "invalid maxBids value, using minimum 1 limit for {Bidder:rubicon, Bidders:[], MaxBids:-1, "
        "TargetBidderCodePrefix:rubN}",
        "invalid maxBids value, using maximum 9 limit for {Bidder:pubmatic, Bidders:[], MaxBids:10, "
        "TargetBidderCodePrefix:pm}",
        "multiBid already defined for pubmatic, ignoring this instance {Bidder:pubmatic, Bidders:[], MaxBids:4, "
        "TargetBidderCodePrefix:pubM}",
        "ignoring bidders from {Bidder:groupm, Bidders:[someBidder], MaxBids:5, TargetBidderCodePrefix:gm}",
        "multiBid already defined for groupm, ignoring this instance {Bidder:, Bidders:[groupm], MaxBids:6, "
        "TargetBidderCodePrefix:}",
        "ignoring targetbiddercodeprefix for {Bidder:, Bidders:[33across], MaxBids:7, TargetBidderCodePrefix:abc}",
        "bidder(s) not specified for {Bidder:, Bidders:[], MaxBids:8, TargetBidderCodePrefix:xyz}",
    ]
    # the pubmatic request part of that test: only its own entry, clamped
    assert multibid.for_bidder("pubmatic") == [{"bidder": "pubmatic", "maxbids": 9, "targetbiddercodeprefix": "pm"}]
    assert multibid.for_bidder("appnexus") is None
    assert (multibid.max_bids("rubicon"), multibid.prefix("rubicon"), multibid.bid_limit) == (1, "rubN", 3)


@pytest.mark.parametrize(
    ("multibid", "problem"),
    [
        pytest.param({}, "request.ext.prebid.multibid must be an array", id="object"),
        pytest.param([None], "request.ext.prebid.multibid[0] must be an object", id="null-entry"),
        pytest.param([{"bidder": 1, "maxbids": 2}], "request.ext.prebid.multibid[0].bidder must be a string",
                     id="bidder-number"),
        pytest.param([{"bidders": "a", "maxbids": 2}], "request.ext.prebid.multibid[0].bidders must be an array of "
                     "strings", id="bidders-string"),
        pytest.param([{"bidder": "a", "maxbids": 2.5}], "request.ext.prebid.multibid[0].maxbids must be an integer",
                     id="maxbids-float"),
        pytest.param([{"bidder": "a", "maxbids": True}], "request.ext.prebid.multibid[0].maxbids must be an integer",
                     id="maxbids-bool"),
        pytest.param([{"bidder": "a", "maxbids": 2, "targetbiddercodeprefix": 3}],
                     "request.ext.prebid.multibid[0].targetbiddercodeprefix must be a string", id="prefix-number"),
    ],
)
def test_wrong_json_types_refuse_the_request(multibid, problem):
    with pytest.raises(RequestError) as caught:
        parse_multibid({"multibid": multibid}, KNOWN)
    assert str(caught.value) == problem


@pytest.mark.parametrize(
    ("entries", "limit", "bidder", "expected"),
    [
        pytest.param([pm(2, "pubm", "PUBmatic")], 0, "pubmatic", (2, "pubm", True), id="case-insensitive"),
        pytest.param([{"bidders": ["appnexus"], "maxbids": 2, "targetbiddercodeprefix": "x"}], 0, "appnexus",
                     (2, "", True), id="bidders-form-has-no-prefix"),
        pytest.param([pm(2, "g", "groupm")], 0, "groupm", (1, "", False), id="unknown-bidder-dropped"),
        pytest.param([pm(2), pm(3, "x", "PubMatic")], 0, "pubmatic", (3, "x", True), id="later-case-variant-wins"),
        pytest.param([], 0, "pubmatic", (1, "", False), id="none"),
        pytest.param([], 2, "pubmatic", (1, "", True), id="account-limit-only"),
        pytest.param([pm(5)], 2, "pubmatic", (5, "pm", True), id="limit-below-maxbids"),
    ],
)
def test_per_bidder_lookup(entries, limit, bidder, expected):
    multibid, _ = parse_multibid({"multibid": entries}, KNOWN, limit)
    assert (multibid.max_bids(bidder), multibid.prefix(bidder), multibid.active) == expected
    assert multibid.bid_limit == limit


def test_no_multibid_is_shared():
    assert parse_multibid({}, KNOWN) == (NO_MULTIBID, [])
    assert parse_multibid({"multibid": []}, KNOWN, 0) == (NO_MULTIBID, [])
    assert not NO_MULTIBID.active


# buildRequestExtMultiBid, with the expected outgoing requests of exchangetest/multi-bids*.json
MULTI_BIDS = [pm(2, "pubm"), {"bidders": ["appnexus", "someBidder"], "maxbids": 2}]
EXTRA_BIDS = [pm(2, "pubm"), {"bidders": ["appnexus", "groupm"], "maxbids": 2}]
PUBMATIC_ABC = {"enabled": True, "bidders": {"pubmatic": {"enabled": True, "allowedbiddercodes": ["groupm"]}}}


@pytest.mark.parametrize(
    ("entries", "bidder", "alternate", "expected"),
    [
        pytest.param(MULTI_BIDS, "pubmatic", None, [pm(2, "pubm")], id="multi-bids-pubmatic"),
        pytest.param(MULTI_BIDS, "appnexus", None, [{"bidders": ["appnexus"], "maxbids": 2}], id="multi-bids-appnexus"),
        pytest.param([pm(2, "pubm", "PUBmatic"), MULTI_BIDS[1]], "pubmatic", None, [pm(2, "pubm", "PUBmatic")],
                     id="mixed-case-kept-as-sent"),
        pytest.param(EXTRA_BIDS, "pubmatic", PUBMATIC_ABC, [pm(2, "pubm"), {"bidders": ["groupm"], "maxbids": 2}],
                     id="extra-bids-pubmatic-gets-groupm"),
        pytest.param(EXTRA_BIDS, "appnexus", {"enabled": True, "bidders": None},
                     [{"bidders": ["appnexus"], "maxbids": 2}], id="extra-bids-appnexus"),
        pytest.param(EXTRA_BIDS, "pubmatic",
                     {"enabled": True, "bidders": {"pubmatic": {"enabled": True, "allowedbiddercodes": ["*"]}}},
                     [pm(2, "pubm"), {"bidders": ["appnexus"], "maxbids": 2}, {"bidders": ["groupm"], "maxbids": 2}],
                     id="wildcard-gets-every-entry"),
        pytest.param(MULTI_BIDS, "rubicon", None, None, id="not-named"),
    ],
)
def test_for_bidder(entries, bidder, alternate, expected):
    multibid, _ = parse_multibid({"multibid": entries}, KNOWN)
    assert multibid.for_bidder(bidder, alternate) == expected


# ---- targeting with multibid -------------------------------------------------------------------

EXCHANGE_TARGETING = {"includewinners": True, "includebidderkeys": True,
                      "pricegranularity": {"precision": 2, "ranges": [{"min": 0, "max": 20, "increment": 0.1}]}}


def abid(bidder: str, imp: str, price: float, bid_id: str, w: int = 0, h: int = 0, kind: str = "video",
         deal: str = "") -> AuctionBid:
    bid: dict[str, Any] = {"id": bid_id, "impid": imp, "price": price, "crid": "c", "ext": {"origbidcpm": price}}
    if w:
        bid.update(w=w, h=h)
    if deal:
        bid["dealid"] = deal
    return AuctionBid(bidder, bidder, bid, kind, price, imp, bool(deal))


PUBMATIC_BIDS = [
    ("pubmatic", "my-imp-id", 0.71, "winning-bid", 200, 250),
    ("pubmatic", "my-imp-id", 0.21, "losing-bid", 200, 250),
    ("pubmatic", "imp-id-2", 0.61, "other-bid", 300, 500),
    ("pubmatic", "my-imp-id", 0.51, "contending-bid", 200, 250),
    ("appnexus", "my-imp-id", 0.3, "apn-bid", 200, 500, "banner"),
    ("appnexus", "my-imp-id", 0.3, "apn-bid-2", 200, 500, "banner"),
]
WINNING = {"hb_bidder": "pubmatic", "hb_bidder_pubmatic": "pubmatic", "hb_pb": "0.70", "hb_pb_pubmatic": "0.70",
           "hb_size": "200x250", "hb_size_pubmatic": "200x250"}
OTHER = {"hb_bidder": "pubmatic", "hb_bidder_pubmatic": "pubmatic", "hb_pb": "0.60", "hb_pb_pubmatic": "0.60",
         "hb_size": "300x500", "hb_size_pubmatic": "300x500"}
APN = {"hb_bidder_appnexus": "appnexus", "hb_pb_appnexus": "0.30", "hb_size_appnexus": "200x500"}
MULTI_BIDS_EXPECTED = {
    "winning-bid": (WINNING, "pubmatic"),
    "losing-bid": ({}, None),
    "other-bid": (OTHER, "pubmatic"),
    "contending-bid": ({"hb_bidder_pubm2": "pubm2", "hb_pb_pubm2": "0.50", "hb_size_pubm2": "200x250"}, "pubm2"),
    "apn-bid": (APN, "appnexus"),
    "apn-bid-2": ({}, None),
}

SCENARIOS = [
    pytest.param(MULTI_BIDS, 0, PUBMATIC_BIDS, MULTI_BIDS_EXPECTED, [], id="multi-bids"),
    pytest.param([pm(2, "pubm", "PUBmatic"), MULTI_BIDS[1]], 0, PUBMATIC_BIDS, MULTI_BIDS_EXPECTED, [],
                 id="multi-bids-mixed-case"),
    pytest.param(EXTRA_BIDS, 0, PUBMATIC_BIDS, MULTI_BIDS_EXPECTED, [], id="multi-bids-with-extra-bids"),
    pytest.param(
        [{"bidder": "appnexus"}, {"maxbids": -1, "bidder": "rubicon", "targetbiddercodeprefix": "rubN"},
         {"maxbids": 10, "bidder": "pubmatic", "targetbiddercodeprefix": "pm"},
         {"maxbids": 4, "bidder": "pubmatic", "targetbiddercodeprefix": "pubM"}],
        3,
        PUBMATIC_BIDS,
        {
            "winning-bid": (WINNING, "pubmatic"),
            "losing-bid": ({"hb_bidder_pm3": "pm3", "hb_pb_pm3": "0.20", "hb_size_pm3": "200x250"}, "pm3"),
            "other-bid": (OTHER, "pubmatic"),
            "contending-bid": ({"hb_bidder_pm2": "pm2", "hb_pb_pm2": "0.50", "hb_size_pm2": "200x250"}, "pm2"),
            "apn-bid": (APN, None),  # appnexus' entry was refused: 1 bid, no targetbiddercode
            "apn-bid-2": ({}, None),
        },
        [],
        id="multi-bids-error",
    ),
    pytest.param(
        [{"bidder": "rubicon", "maxbids": 2, "targetbiddercodeprefix": "rubN"},
         {"bidders": ["appnexus", "someBidder"], "maxbids": 2}],
        2,
        [
            ("appnexus", "impId1", 5.5, "7706636740145184841"),
            ("appnexus", "impId1", 1, "928185755156387460"),
            ("appnexus", "impId1", 2, "222214214214"),
            ("rubicon", "impId1", 8.43, "880290288", 300, 250),
            ("rubicon", "impId1", 12.43, "21521324", 300, 250),
            ("rubicon", "impId1", 2, "992342532", 300, 250, "banner"),
        ],
        {
            "21521324": ({"hb_bidder": "rubicon", "hb_bidder_rubicon": "rubicon", "hb_pb": "12.40",
                          "hb_pb_rubicon": "12.40", "hb_size": "300x250", "hb_size_rubicon": "300x250"}, "rubicon"),
            "880290288": ({"hb_bidder_rubN2": "rubN2", "hb_pb_rubN2": "8.40", "hb_size_rubN2": "300x250"}, "rubN2"),
            "7706636740145184841": ({"hb_bidder_appnexus": "appnexus", "hb_pb_appnexus": "5.50"}, "appnexus"),
            "222214214214": ({}, None),
        },
        ["928185755156387460", "992342532"],
        id="multi-bid-default-bid-limit",
    ),
]


@pytest.mark.parametrize(("entries", "limit", "rows", "expected", "dropped"), SCENARIOS)
def test_exchange_multibid_targeting(entries, limit, rows, expected, dropped):
    bids = [abid(*row) for row in rows]
    multibid, _ = parse_multibid({"multibid": entries}, KNOWN, limit)
    options = TargetingOptions.from_request(EXCHANGE_TARGETING, "")
    results = run_auction(bids, options.prefer_deals, multibid)
    assert [b.bid["id"] for b in results.dropped] == dropped
    kept = results.kept(bids)
    assert [b.bid["id"] for b in kept] == [b.bid["id"] for b in bids if b.bid["id"] not in dropped]
    assert bids_to_cache(results, options, bids) == kept  # a dropped bid is never cached
    apply_targeting(results, options, "", "")
    got = {b.bid["id"]: (b.targeting, b.bid["ext"].get("prebid", {}).get("targetbiddercode")) for b in kept}
    assert got == expected


def test_full_basic_targeting_with_multibid():
    """targeting_test.go "Full basic targeting with multibid": medium buckets, includeformat."""
    rows = [
        ("appnexus", "ImpId-1", 1.20, "a1", 0, 0, "banner"), ("appnexus", "ImpId-1", 0.77, "a2", 0, 0, "banner"),
        ("appnexus", "ImpId-1", 0.01, "a3", 0, 0, "banner"),
        ("rubicon", "ImpId-1", 1.23, "r1", 0, 0, "banner"),
        ("rubicon", "ImpId-1", 1.11, "r2", 0, 0, "banner", "mydeal"),
        ("rubicon", "ImpId-1", 0.84, "r3", 0, 0, "banner"),
        ("pubmatic", "ImpId-2", 1.66, "p1", 0, 0, "banner"), ("pubmatic", "ImpId-2", 1.55, "p2", 0, 0, "banner"),
        ("pubmatic", "ImpId-2", 1.44, "p3", 0, 0, "banner"), ("pubmatic", "ImpId-2", 1.23, "p4", 0, 0, "banner"),
    ]
    bids = [abid(*row) for row in rows]
    multibid, _ = parse_multibid(
        {"multibid": [pm(3), {"bidders": ["appnexus"], "maxbids": 2}]}, KNOWN)
    options = TargetingOptions.from_request(
        {"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True, "includeformat": True}, "")
    results = run_auction(bids, False, multibid)
    apply_targeting(results, options, "", "")
    got = {b.bid["id"]: (b.targeting, b.bid["ext"].get("prebid", {}).get("targetbiddercode")) for b in bids}
    assert got == {
        "a1": ({"hb_bidder_appnexus": "appnexus", "hb_pb_appnexus": "1.20", "hb_format_appnexus": "banner"},
               "appnexus"),
        "a2": ({}, None),
        "a3": ({}, None),
        "r1": ({"hb_bidder": "rubicon", "hb_bidder_rubicon": "rubicon", "hb_pb": "1.20", "hb_pb_rubicon": "1.20",
                "hb_format": "banner", "hb_format_rubicon": "banner"}, None),
        "r2": ({}, None),
        "r3": ({}, None),
        "p1": ({"hb_bidder": "pubmatic", "hb_bidder_pubmatic": "pubmatic", "hb_pb": "1.60", "hb_pb_pubmatic": "1.60",
                "hb_format": "banner", "hb_format_pubmatic": "banner"}, "pubmatic"),
        "p2": ({"hb_bidder_pm2": "pm2", "hb_pb_pm2": "1.50", "hb_format_pm2": "banner"}, "pm2"),
        "p3": ({"hb_bidder_pm3": "pm3", "hb_pb_pm3": "1.40", "hb_format_pm3": "banner"}, "pm3"),
        "p4": ({}, None),
    }


@pytest.mark.parametrize(
    ("prefer_deals", "order"),
    [(False, ["high", "deal", "low"]), (True, ["deal", "high", "low"])],
    ids=["by-price", "prefer-deals"],
)
def test_ranking_follows_the_winner_rule(prefer_deals, order):
    bids = [abid("pubmatic", "i", 1.0, "low"), abid("pubmatic", "i", 2.0, "deal", deal="d"),
            abid("pubmatic", "i", 5.0, "high")]
    multibid, _ = parse_multibid({"multibid": [pm(3)]}, KNOWN)
    results = run_auction(bids, prefer_deals, multibid)
    assert [b.bid["id"] for b in results["i"].ranked["pubmatic"]] == order
    assert results["i"].winner.bid["id"] == order[0] == results["i"].top_by_bidder["pubmatic"].bid["id"]


def test_equal_bids_keep_their_order_and_limit_drops_the_last():
    bids = [abid("appnexus", "i", 0.3, "first"), abid("appnexus", "i", 0.3, "second"),
            abid("appnexus", "i", 0.3, "third")]
    results = run_auction(bids, False, MultiBid(bid_limit=2))
    assert [b.bid["id"] for b in results["i"].ranked["appnexus"]] == ["first", "second"]
    assert [b.bid["id"] for b in results.dropped] == ["third"]
    assert results["i"].winner is bids[0]


def test_long_prefix_codes_are_cut_like_every_key():
    bids = [abid("pubmatic", "i", 2.0, "a"), abid("pubmatic", "i", 1.0, "b")]
    multibid, _ = parse_multibid({"multibid": [pm(2, "averylongprefix")]}, KNOWN)
    results = run_auction(bids, False, multibid)
    apply_targeting(results, TargetingOptions.from_request(EXCHANGE_TARGETING, ""), "", "")
    assert bids[1].targeting == {"hb_pb_averylongprefi": "1.00", "hb_bidder_averylongp": "averylongprefix2"}
    assert bids[1].bid["ext"]["prebid"]["targetbiddercode"] == "averylongprefix2"


def test_targetbiddercode_leaves_shared_objects_alone():
    shared_ext = {"prebid": {"meta": {"advertiserDomains": ["a.com"]}}}
    bid = AuctionBid("pubmatic", "pubmatic", {"id": "x", "impid": "i", "price": 1.0, "ext": shared_ext}, "banner", 1.0,
                     "i", False)
    multibid, _ = parse_multibid({"multibid": [pm(2)]}, KNOWN)
    results = run_auction([bid], False, multibid)
    apply_targeting(results, TargetingOptions.from_request(EXCHANGE_TARGETING, ""), "", "")
    assert bid.bid["ext"]["prebid"] == {"meta": {"advertiserDomains": ["a.com"]}, "targetbiddercode": "pubmatic"}
    assert shared_ext == {"prebid": {"meta": {"advertiserDomains": ["a.com"]}}}


@pytest.mark.parametrize("multibid", [None, NO_MULTIBID], ids=["none", "inactive"])
def test_without_multibid_the_plain_auction_runs(multibid):
    bids = [abid(*row) for row in PUBMATIC_BIDS]
    results = run_auction(bids, False, multibid)
    assert isinstance(results, AuctionResults) and results.dropped == [] and results.multibid is None
    assert all(r.ranked is None for r in results.values())
    apply_targeting(results, TargetingOptions.from_request(EXCHANGE_TARGETING, ""), "", "")
    assert bids[3].targeting == {} and "prebid" not in bids[0].bid["ext"]  # no pubm2, no targetbiddercode
    assert bids[0].targeting == WINNING and bids[4].targeting == APN
