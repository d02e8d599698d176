"""Bid adjustments: PBS-Go bidadjustment/apply_test.go, build_rules_test.go and validate_test.go
translated row by row, plus the factor lookup (exchange/bidder_test.go, exchange/utils_test.go,
the endpoint sample requests, PBS-Java's BidAdjustmentFactorResolverTest and RequestValidatorTest)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hbserver.auction.bids.bidadjust import (
    ACCOUNT_INVALID,
    BID_ADJUSTMENT_WARNING_CODE,
    MIN_BID,
    REQUEST_INVALID,
    Adjustment,
    BidAdjustments,
    _apply,
    _build_rules,
    _go_round,
    _lookup,
    adjustment_type,
    merge_bid_adjustments,
    validate_adjustment_factors,
    validate_bid_adjustments,
)
from hbserver.auction.bids.currency import ConversionError
from hbserver.auction.common.messages import Message

ADJ_CUR = "EUR"
BID_CUR = "USA"  # PBS-Go's test value


def convert_with(rates: dict[tuple[str, str], float]) -> Any:
    """PBS-Go's mockConversions: only the pairs given; anything else fails."""

    def convert(amount: float, from_cur: str, to_cur: str) -> float:
        if (from_cur, to_cur) not in rates:
            raise ConversionError(f"Currency conversion rate not found: '{from_cur}' => '{to_cur}'")
        return amount * rates[(from_cur, to_cur)]

    return convert


NO_RATES = convert_with({})
EUR_TO_USA = convert_with({(ADJ_CUR, BID_CUR): 2.5})


def mult(value: float) -> dict[str, Any]:
    return {"adjtype": "multiplier", "value": value}


def cpm(value: float, currency: str = "USD") -> dict[str, Any]:
    return {"adjtype": "cpm", "value": value, "currency": currency}


def static(value: float, currency: str = "USD") -> dict[str, Any]:
    return {"adjtype": "static", "value": value, "currency": currency}


def adj(raw: dict[str, Any]) -> Adjustment:
    return Adjustment(raw.get("adjtype", ""), float(raw.get("value", 0.0)), raw.get("currency", ""))


def rules_of(by_key: dict[str, list[dict[str, Any]]] | None) -> dict[tuple[str, str, str], tuple[Adjustment, ...]]:
    """PBS-Go's "mediatype|bidder|dealid" rule map in this module's form."""
    rules = {}
    for key, adjustments in (by_key or {}).items():
        media_type, bidder, deal = key.split("|")
        rules[(media_type, bidder, deal)] = tuple(adj(a) for a in adjustments)
    return rules


def with_rules(by_key: dict[str, list[dict[str, Any]]] | None) -> BidAdjustments:
    return BidAdjustments({}, {}, rules_of(by_key))


# --- apply_test.go TestGetAndApply ------------------------------------------------------------------

GET_AND_APPLY = [
    pytest.param(
        {"banner|bidderA|dealId": [cpm(1.0, ADJ_CUR)], "banner|bidderA|*": [mult(2.0)]},
        10.0, "dealId", "banner", EUR_TO_USA, 7.5, BID_CUR, id="CpmAdjustment",
    ),
    pytest.param(
        {"*|bidderA|dealId": [cpm(1.0, ADJ_CUR)], "banner|bidderA|*": [static(2.0, ADJ_CUR)]},
        10.0, "dealId", "banner", NO_RATES, 2.0, ADJ_CUR, id="StaticAdjustment",
    ),
    pytest.param(
        {"*|*|dealId": [cpm(1.0, ADJ_CUR)], "video-instream|*|*": [mult(2.0)]},
        10.0, "dealId", "video-instream", NO_RATES, 20.0, BID_CUR, id="MultiplierAdjustment",
    ),
    pytest.param(
        {"video-instream|*|*": [mult(2.0), cpm(1.0, ADJ_CUR)]},
        10.0, "dealId", "video-instream", EUR_TO_USA, 17.5, BID_CUR, id="CpmAndMultiplierAdjustments",
    ),
    pytest.param(
        {"*|*|dealId": [cpm(1.0, ADJ_CUR)]},
        1.0, "dealId", "video-instream", EUR_TO_USA, 0.0, BID_CUR, id="DealIdPresentAndNegativeAdjustedPrice",
    ),
    pytest.param(
        {"*|*|*": [cpm(1.0, ADJ_CUR)]},
        1.0, "", "audio", EUR_TO_USA, 0.1, BID_CUR, id="NoDealIdNegativeAdjustedPrice",
    ),
    pytest.param(None, 10.0, "dealId", "banner", NO_RATES, 10.0, BID_CUR, id="NilMap"),
]  # fmt: skip


@pytest.mark.parametrize(("rules", "price", "deal", "bid_type", "convert", "want_price", "want_cur"), GET_AND_APPLY)
def test_get_and_apply(
    rules: Any, price: float, deal: str, bid_type: str, convert: Any, want_price: float, want_cur: str
) -> None:
    assert with_rules(rules).apply(price, BID_CUR, "bidderA", bid_type, deal, convert) == (want_price, want_cur)


# --- apply_test.go TestApply ------------------------------------------------------------------------

APPLY = [
    pytest.param([cpm(1.0, ADJ_CUR)], 10.58687, EUR_TO_USA, 8.0869, BID_CUR, id="CpmAdjustment"),
    pytest.param([static(4.0, ADJ_CUR)], 10.0, NO_RATES, 4.0, ADJ_CUR, id="StaticAdjustment"),
    pytest.param([mult(3.0)], 10.0, NO_RATES, 30.0, BID_CUR, id="MultiplierAdjustment"),
    pytest.param(None, 10.0, NO_RATES, 10.0, BID_CUR, id="NilAdjustment"),
    # beyond PBS-Go's table
    pytest.param([cpm(1.0, "XXX")], 10.123456, NO_RATES, 10.123456, BID_CUR, id="cpm-no-rate-keeps-price-unrounded"),
    pytest.param(
        [static(4.0, ADJ_CUR), cpm(1.0, "GBP")], 10.0, NO_RATES, 10.0, ADJ_CUR, id="cpm-no-rate-after-static-go-quirk"
    ),
    pytest.param([static(4.0, ADJ_CUR), cpm(1.0, ADJ_CUR)], 10.0, convert_with({(ADJ_CUR, ADJ_CUR): 1.0}), 3.0,
                 ADJ_CUR, id="cpm-after-static-in-static-currency"),
    pytest.param([mult(1.5), mult(2.0)], 1.00005, NO_RATES, 3.0002, BID_CUR, id="rounds-half-away-from-zero"),
    pytest.param([], 10.123456, NO_RATES, 10.123456, BID_CUR, id="empty-list-unchanged"),
]  # fmt: skip


@pytest.mark.parametrize(("adjustments", "price", "convert", "want_price", "want_cur"), APPLY)
def test_apply(adjustments: Any, price: float, convert: Any, want_price: float, want_cur: str) -> None:
    given = None if adjustments is None else tuple(adj(a) for a in adjustments)
    assert _apply(given, price, BID_CUR, convert) == (want_price, want_cur)


# --- apply_test.go TestGet --------------------------------------------------------------------------

M11 = [mult(1.1)]
GET = [
    pytest.param({"banner|bidderA|dealId": M11, "banner|bidderA|*": [mult(2.0)]}, "banner", "bidderA", "dealId", M11,
                 id="Priority1"),
    pytest.param({"banner|bidderA|*": [{"adjtype": "static", "value": 5.0}], "banner|*|dealId": [mult(2.0)]},
                 "banner", "bidderA", "dealId", [{"adjtype": "static", "value": 5.0}], id="Priority2"),
    pytest.param({"banner|*|dealId": [cpm(3.0)], "*|bidderA|dealId": M11}, "banner", "bidderA", "dealId",
                 [cpm(3.0)], id="Priority3"),
    pytest.param({"*|bidderA|dealId": [cpm(3.0)], "banner|*|*": M11}, "banner", "bidderA", "dealId", [cpm(3.0)],
                 id="Priority4"),
    pytest.param({"banner|*|*": [cpm(3.0)], "*|bidderA|*": M11}, "banner", "bidderA", "dealId", [cpm(3.0)],
                 id="Priority5"),
    pytest.param({"*|bidderA|*": [cpm(3.0)], "*|*|dealId": M11}, "banner", "bidderA", "dealId", [cpm(3.0)],
                 id="Priority6"),
    pytest.param({"*|*|dealId": [cpm(3.0)], "*|*|*": M11}, "banner", "bidderA", "dealId", [cpm(3.0)],
                 id="Priority7"),
    pytest.param({"*|*|*": M11, "banner|bidderA|dealId": M11}, "banner", "bidderB", "dealId", M11, id="Priority8"),
    pytest.param({"banner|bidderA|*": M11, "banner|*|*": M11}, "banner", "bidderA", "", M11, id="NoDealID"),
    pytest.param({"banner|bidderA|dealId": M11, "banner|bidderA|*": [mult(2.0)]}, "video", "bidderB", "diffDealId",
                 None, id="NoPriorityRulesMatch"),
    # beyond PBS-Go's table
    pytest.param({"banner|bidderA|dealId": M11}, "banner", "bidderA", "", None, id="deal-rule-needs-a-deal"),
    pytest.param({"banner|bidderA|*": M11}, "banner", "BIDDERA", "", None, id="bidder-names-are-case-sensitive"),
]  # fmt: skip


@pytest.mark.parametrize(("rules", "bid_type", "bidder", "deal", "expected"), GET)
def test_get(rules: dict[str, Any], bid_type: str, bidder: str, deal: str, expected: Any) -> None:
    want = None if expected is None else tuple(adj(a) for a in expected)
    assert _lookup(rules_of(rules), bid_type, bidder, deal) == want


# --- build_rules_test.go TestBuildRules --------------------------------------------------------------

BUILD_RULES = [
    pytest.param(
        {"mediatype": {"banner": {"bidderA": {"dealId": [mult(1.1)]}}}},
        {"banner|bidderA|dealId": [mult(1.1)]},
        id="OneAdjustment",
    ),
    pytest.param(
        {
            "mediatype": {
                "banner": {
                    "bidderA": {"dealId": [mult(1.1)]},
                    "*": {"diffDealId": [cpm(1.1)], "*": [static(5.0)]},
                },
                "video-instream": {"*": {"*": [mult(1.1), cpm(0.18)]}},
                "video-outstream": {"bidderB": {"*": [static(0.25)]}},
            }
        },
        {
            "banner|bidderA|dealId": [mult(1.1)],
            "banner|*|diffDealId": [cpm(1.1)],
            "banner|*|*": [static(5.0)],
            "video-instream|*|*": [mult(1.1), cpm(0.18)],
            "video-outstream|bidderB|*": [static(0.25)],
        },
        id="MultipleAdjustments",
    ),
    pytest.param(None, {}, id="NilAdjustments"),  # PBS-Go: a nil map; here an empty one
    pytest.param({"mediatype": {"video": {"bidderA": {"*": [mult(2.0)]}}}}, {}, id="unknown-media-type-ignored"),
]


@pytest.mark.parametrize(("given", "expected"), BUILD_RULES)
def test_build_rules(given: Any, expected: dict[str, Any]) -> None:
    assert _build_rules(given) == rules_of(expected)


# --- build_rules_test.go TestMergeAndValidate ---------------------------------------------------------


def banner(bidder: str, deal: str, adjustments: list[dict[str, Any]]) -> dict[str, Any]:
    return {"mediatype": {"banner": {bidder: {deal: adjustments}}}}


MERGE_AND_VALIDATE = [
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]),
        banner("bidderB", "dealId", [mult(1.5)]),
        {"mediatype": {"banner": {"bidderA": {"dealId": [mult(1.1)]}, "bidderB": {"dealId": [mult(1.5)]}}}},
        id="ValidReqAndAcctAdjustments",
    ),
    pytest.param(
        banner("bidderA", "dealId", [mult(200)]), banner("bidderB", "dealId", [mult(1.5)]), None,
        id="InvalidReqAdjustment",
    ),
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]), banner("bidderB", "dealId", [mult(-1.5)]), None,
        id="InvalidAcctAdjustment",
    ),
    # PBS-Go's "InvalidJSON" row (request.ext `{}}`) is a body-parsing failure: no counterpart here.
]  # fmt: skip


@pytest.mark.parametrize(("request_rules", "account_rules", "expected"), MERGE_AND_VALIDATE)
def test_merge_and_validate(request_rules: Any, account_rules: Any, expected: Any) -> None:
    merged = merge_bid_adjustments(request_rules, account_rules)
    valid = validate_bid_adjustments(merged) is None
    assert (merged if valid else None) == expected


# --- build_rules_test.go TestMerge -------------------------------------------------------------------


def media(media_type: str, bidder: str, deal: str, adjustments: list[dict[str, Any]]) -> dict[str, Any]:
    return {media_type: {bidder: {deal: adjustments}}}


def rules(**by_type: dict[str, Any]) -> dict[str, Any]:
    return {"mediatype": {k.replace("_", "-").replace("wildcard", "*"): v for k, v in by_type.items()}}


CPM3 = [{"adjtype": "cpm", "value": 3}]  # PBS-Go's test: no currency (merge does not validate)
MERGE = [
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]), banner("bidderB", "dealId", [mult(1.5)]),
        rules(banner={"bidderA": {"dealId": [mult(1.1)]}, "bidderB": {"dealId": [mult(1.5)]}}),
        id="DiffBidderNames",
    ),
    pytest.param(
        rules(**media("audio", "bidderA", "dealId", [mult(1.1)])),
        rules(**media("audio", "bidderA", "dealId", [mult(1.5)])),
        rules(**media("audio", "bidderA", "dealId", [mult(1.1)])),
        id="RequestTakesPrecedence",
    ),
    pytest.param(
        rules(video_instream={"bidderA": {"dealId": [static(3.00)]}}),
        rules(video_instream={"bidderA": {"diffDealId": [mult(1.5)]}}),
        rules(video_instream={"bidderA": {"dealId": [static(3.00)], "diffDealId": [mult(1.5)]}}),
        id="DiffDealIds",
    ),
    pytest.param(
        rules(native={"bidderA": {"dealId": [cpm(0.18)]}}),
        rules(native={"bidderB": {"dealId": [mult(1.5)]}}),
        rules(native={"bidderA": {"dealId": [cpm(0.18)]}, "bidderB": {"dealId": [mult(1.5)]}}),
        id="DiffBidderNamesCpm",
    ),
    pytest.param(
        rules(video_outstream={"bidderA": {"dealId": [mult(1.1)]}}),
        banner("bidderB", "dealId", [mult(1.5)]),
        rules(banner={"bidderB": {"dealId": [mult(1.5)]}}, video_outstream={"bidderA": {"dealId": [mult(1.1)]}}),
        id="ReqAdjVideoAcctAdjBanner",
    ),
    pytest.param(
        None, banner("bidderB", "dealId", [mult(1.5)]), banner("bidderB", "dealId", [mult(1.5)]),
        id="RequestNilPrebid",
    ),
    pytest.param(
        rules(video_instream={"bidderA": {"dealId": [mult(1.1)]}}),
        rules(wildcard={"bidderB": {"dealId": [mult(1.5)]}}),
        rules(wildcard={"bidderB": {"dealId": [mult(1.5)]}}, video_instream={"bidderA": {"dealId": [mult(1.1)]}}),
        id="AcctWildCardRequestVideo",
    ),
    pytest.param(None, None, None, id="NilReqExtPrebidAndAcctBidAdj"),
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]), None, banner("bidderA", "dealId", [mult(1.1)]), id="NilAcctBidAdj"
    ),
    pytest.param(None, None, None, id="NilExtPrebid-NilExtPrebidBidAdj_NilAcct"),
    pytest.param(
        None, banner("bidderA", "dealId", [mult(1.1)]), banner("bidderA", "dealId", [mult(1.1)]),
        id="NilExtPrebid-NilExtPrebidBidAdj-Acct",
    ),
    pytest.param(None, None, None, id="NotNilExtPrebid-NilExtBidAdj-NilAcct"),
    pytest.param(
        None, banner("bidderA", "dealId", [mult(1.1)]), banner("bidderA", "dealId", [mult(1.1)]),
        id="NotNilExtPrebid_NilExtBidAdj_NotNilAcct",
    ),
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]), None, banner("bidderA", "dealId", [mult(1.1)]),
        id="NotNilExtPrebid-NotNilExtBidAdj-NilAcct",
    ),
    pytest.param(
        banner("bidderA", "dealId", [mult(1.1)]),
        rules(
            video_instream={"bidderB": {"dealId": CPM3}}, video_outstream={"bidderC": {"dealId": CPM3}},
            audio={"bidderD": {"dealId": CPM3}}, native={"bidderE": {"dealId": CPM3}},
            wildcard={"bidderF": {"dealId": CPM3}},
        ),
        rules(
            banner={"bidderA": {"dealId": [mult(1.1)]}},
            video_instream={"bidderB": {"dealId": CPM3}}, video_outstream={"bidderC": {"dealId": CPM3}},
            audio={"bidderD": {"dealId": CPM3}}, native={"bidderE": {"dealId": CPM3}},
            wildcard={"bidderF": {"dealId": CPM3}},
        ),
        id="NotNilExtPrebid-NotNilExtBidAdj-NotNilAcct",
    ),
    # beyond PBS-Go's table
    pytest.param(
        {"mediatype": None}, banner("bidderB", "d", [mult(1.5)]), banner("bidderB", "d", [mult(1.5)]),
        id="request-without-mediatype-takes-account",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("request_rules", "account_rules", "expected"), MERGE)
def test_merge(request_rules: Any, account_rules: Any, expected: Any) -> None:
    assert merge_bid_adjustments(request_rules, account_rules) == expected


def test_merge_does_not_modify_its_inputs() -> None:
    request = rules(banner={"bidderA": {"dealId": [mult(1.1)]}})
    account = rules(banner={"bidderA": {"other": [mult(1.5)]}, "bidderB": {"*": [mult(2.0)]}})
    before = (repr(request), repr(account))
    merged = merge_bid_adjustments(request, account)
    expected = {"bidderA": {"dealId": [mult(1.1)], "other": [mult(1.5)]}, "bidderB": {"*": [mult(2.0)]}}
    assert merged == rules(banner=expected)
    assert (repr(request), repr(account)) == before


# --- validate_test.go TestValidate, TestValidateForMediaType, TestValidateAdjustment --------------------

VALIDATE = [
    pytest.param(banner("bidderA", "dealId", [mult(1.1)]), True, id="OneAdjustmentValid"),
    pytest.param(rules(audio={"bidderA": {"dealId": [mult(1.1)]}},
                       video_instream={"bidderA": {"dealId": [static(3.0)]}}), True, id="MultipleAdjustmentsValid"),
    pytest.param(rules(native={"bidderA": {"dealId": [mult(1.1)]}},
                       video_outstream={"bidderA": {"dealId": [{"adjtype": "cpm", "value": 3.0, "currency": ""}]}}),
                 False, id="MixOfValidandInvalid"),
    pytest.param(rules(wildcard={"bidderA": {"dealId": [cpm(-1.1)]}}), False, id="WildCardInvalid"),
    pytest.param(rules(audio={"bidderA": {"dealId": [{"adjtype": "static", "value": 5.0, "currency": ""}]}}), False,
                 id="AudioInvalid"),
    pytest.param(rules(native={"bidderA": {"dealId": [cpm(-1.1)]}}), False, id="NativeInvalid"),
    pytest.param(banner("bidderA", "dealId", [mult(150)]), False, id="BannerInvalid"),
    pytest.param(rules(video_instream={"bidderA": {"dealId": [mult(150)]}}), False, id="InstreamInvalid"),
    pytest.param({}, True, id="EmptyBidAdjustments"),
    pytest.param(None, True, id="NilBidAdjustments"),
]  # fmt: skip

VALIDATE_FOR_MEDIA_TYPE = [
    pytest.param({"bidderA": {"dealId": [mult(1.1)]}}, True, id="OneAdjustmentValid"),
    pytest.param({"bidderA": {"dealId": [mult(-1.1)]}}, False, id="OneAdjustmentInvalid"),
    pytest.param({"bidderA": {"dealId": [mult(1.1), static(3.0)]}}, True, id="MultipleAdjustmentsValid"),
    pytest.param({"bidderA": {"dealId": [mult(-1.1), cpm(-3.0)]}}, False, id="MultipleAdjustmentsInvalid"),
    pytest.param({"bidderA": {"dealId": [static(3.0)], "diffDealId": [mult(1.1)]}}, True, id="MultipleDealIdsValid"),
    pytest.param({"bidderA": {"dealId": [static(5.0)]}, "bidderB": {"dealId": [cpm(3.0)]}}, True,
                 id="MultipleBiddersValid"),
    pytest.param(None, True, id="NilBidAdj"),
    pytest.param({"bidderA": None}, False, id="NilBidderToAdjustmentsByDealID"),
    pytest.param({"bidderA": {"dealId": None}}, False, id="NilDealIdToAdjustments"),
]  # fmt: skip

VALIDATE_ADJUSTMENT = [
    pytest.param(cpm(5.0), True, id="ValidCpm"),
    pytest.param(mult(2.0), True, id="ValidMultiplier"),
    pytest.param(static(3.0), True, id="ValidStatic"),
    pytest.param({"adjtype": "cpm", "value": 5.0, "currency": ""}, False, id="InvalidCpm"),
    pytest.param(mult(200), False, id="InvalidMultiplier"),
    pytest.param(static(-3.0), False, id="InvalidStatic"),
    pytest.param({"adjtype": "Invalid", "value": 1.0}, False, id="InvalidAdjType"),
    pytest.param({}, False, id="EmptyAdjustment"),
    # beyond PBS-Go's table: bounds and the JSON types PBS-Go's decoder insists on
    pytest.param(mult(0), True, id="multiplier-zero"),
    pytest.param(mult(99.99), True, id="multiplier-just-under-100"),
    pytest.param(mult(100), False, id="multiplier-100"),
    pytest.param(static(0), True, id="static-zero"),
    pytest.param(static(1.7976931348623157e308), False, id="static-max-float"),
    pytest.param({"adjtype": "multiplier"}, True, id="missing-value-is-zero"),
    pytest.param({"adjtype": "multiplier", "value": "2"}, False, id="value-string"),
    pytest.param({"adjtype": "multiplier", "value": True}, False, id="value-bool"),
    pytest.param({"adjtype": "cpm", "value": 1, "currency": 978}, False, id="currency-number"),
    pytest.param({"adjtype": 1, "value": 1}, False, id="adjtype-number"),
    pytest.param({"adjtype": "MULTIPLIER", "value": 1}, False, id="adjtype-case-sensitive"),
    pytest.param(None, False, id="null-is-the-empty-adjustment"),
    pytest.param(3, False, id="not-an-object"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "valid"), VALIDATE)
def test_validate(given: Any, valid: bool) -> None:
    assert (validate_bid_adjustments(given) is None) is valid


@pytest.mark.parametrize(("given", "valid"), VALIDATE_FOR_MEDIA_TYPE)
def test_validate_for_media_type(given: Any, valid: bool) -> None:
    assert (validate_bid_adjustments({"mediatype": {"banner": given}}) is None) is valid


@pytest.mark.parametrize(("given", "valid"), VALIDATE_ADJUSTMENT)
def test_validate_adjustment(given: Any, valid: bool) -> None:
    assert (validate_bid_adjustments(banner("bidderA", "dealId", [given])) is None) is valid


VALIDATE_MESSAGES = [
    pytest.param([], "must be an object", id="not-an-object"),
    pytest.param({"mediatype": []}, "mediatype must be an object", id="mediatype-not-an-object"),
    pytest.param({"mediatype": {"banner": 1}}, "mediatype.banner must be an object", id="media-type-not-an-object"),
    pytest.param({"mediatype": {"native": {"b": None}}}, "mediatype.native.b must not be null", id="null-bidder"),
    pytest.param({"mediatype": {"native": {"b": {"d": None}}}}, "mediatype.native.b.d must not be null",
                 id="null-deal"),
    pytest.param({"mediatype": {"native": {"b": {"d": {}}}}}, "mediatype.native.b.d must be an array",
                 id="deal-not-an-array"),
    pytest.param(banner("b", "*", [mult(1), mult(150)]),
                 "mediatype.banner.b.*[1]: a multiplier must be at least 0 and less than 100, got 150",
                 id="multiplier-range"),
    pytest.param(banner("b", "*", [{"adjtype": "cpm", "value": 1}]), "mediatype.banner.b.*[0]: a cpm adjustment needs "
                 "a currency", id="cpm-currency"),
    pytest.param(banner("b", "*", [static(-1)]), "mediatype.banner.b.*[0]: a static value must be at least 0, got -1",
                 id="static-negative"),
    pytest.param(banner("b", "*", [{"adjtype": "add", "value": 1}]),
                 'mediatype.banner.b.*[0].adjtype "add" is not one of cpm, multiplier, static', id="unknown-adjtype"),
    pytest.param(banner("b", "*", [{"adjtype": "cpm", "value": "1"}]), "mediatype.banner.b.*[0].value must be a number",
                 id="value-type"),
    pytest.param({"mediatype": {"video": {"b": None}, "banner": {"b": {"*": []}}}}, None,
                 id="unknown-media-type-ignored-and-empty-list-valid"),
    pytest.param({"mediatype": None}, None, id="null-mediatype"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "message"), VALIDATE_MESSAGES)
def test_validate_messages(given: Any, message: str | None) -> None:
    assert validate_bid_adjustments(given) == message


# --- Go math.Round ------------------------------------------------------------------------------------

ROUNDING = [
    pytest.param(0.5, 1.0, id="half-up"),
    pytest.param(-0.5, -1.0, id="half-away-from-zero"),
    pytest.param(2.5, 3.0, id="not-bankers-rounding"),
    pytest.param(0.49999999999999994, 0.0, id="no-double-rounding"),
    pytest.param(80868.7, 80869.0, id="pbs-go-cpm-row"),
    pytest.param(-2.4, -2.0, id="negative-down"),
    pytest.param(float("inf"), float("inf"), id="infinite"),
]


@pytest.mark.parametrize(("value", "expected"), ROUNDING)
def test_go_round(value: float, expected: float) -> None:
    assert _go_round(value) == expected


# --- getBidTypeForAdjustments (exchange/bidder.go) --------------------------------------------------------

ADJUSTMENT_TYPES = [
    pytest.param("banner", {"id": "i", "video": {"plcmt": 4}}, "banner", id="banner-unchanged"),
    pytest.param("native", None, "native", id="native-unchanged"),
    pytest.param("audio", None, "audio", id="audio-unchanged"),
    pytest.param("video", {"id": "i", "video": {"plcmt": 4}}, "video-outstream", id="plcmt-4-outstream"),
    pytest.param("video", {"id": "i", "video": {"plcmt": 1}}, "video-instream", id="plcmt-1-instream"),
    pytest.param("video", {"id": "i", "video": {"plcmt": 3}}, "video-instream", id="plcmt-3-instream"),
    pytest.param("video", {"id": "i", "video": {"placement": 3}}, "video-instream", id="placement-ignored"),
    pytest.param("video", {"id": "i", "banner": {}}, "video-instream", id="imp-without-video"),
    pytest.param("video", None, "video-instream", id="imp-not-found"),
]


@pytest.mark.parametrize(("bid_type", "imp", "expected"), ADJUSTMENT_TYPES)
def test_adjustment_type(bid_type: str, imp: Any, expected: str) -> None:
    assert adjustment_type(bid_type, imp) == expected
    imps = [imp] if imp else []
    any_rule = {"bidadjustments": rules(wildcard={"*": {"*": []}})}
    adjustments, _ = BidAdjustments.from_request(any_rule, None, imps)
    assert adjustments is not None
    assert adjustments.adjustment_type(bid_type, "i") == expected


# --- factors -------------------------------------------------------------------------------------------


def factors_of(raw: dict[str, Any]) -> BidAdjustments:
    adjustments, warnings = BidAdjustments.from_request({"bidadjustmentfactors": raw}, None)
    assert adjustments is not None and warnings == []
    return adjustments


FACTORS = [
    # exchange/bidder_test.go TestExtraBidWithBidAdjustments: the seat's factor first (case-insensitive)
    pytest.param({"pubmatic": 2, "groupm": 3}, "PUBMATIC", "PUBMATIC", "banner", 2.0, id="go-seat-is-bidder"),
    pytest.param({"pubmatic": 2, "groupm": 3}, "PUBMATIC", "groupm", "banner", 3.0, id="go-extra-seat"),
    # TestExtraBidWithBidAdjustmentsUsingAdapterCode: no factor for the seat -> the request's bidder name
    pytest.param({"pubmatic": 2}, "pubmatic", "groupm", "banner", 2.0, id="go-seat-falls-back-to-bidder"),
    # exchange/utils_test.go TestGetExtBidAdjustmentFactors: names are lower-cased
    pytest.param({"Bidder": 1.0, "APPNEXUS": 2.0}, "appnexus", "", "banner", 2.0, id="go-upper-case-key"),
    pytest.param({"Bidder": 1.0, "APPNEXUS": 2.0}, "bidder", "", "banner", 1.0, id="go-mixed-case-key"),
    # endpoint sample requests bid-adj-factors-case-insensitive(-different-casing).json
    pytest.param({"APPNEXUS": 1.01}, "Appnexus", "", "banner", 1.01, id="go-sample-different-casing"),
    pytest.param({"APPNEXUS": 1.01, "districtm": 0.98}, "APPNEXUS", "", "banner", 1.01, id="go-sample-core"),
    pytest.param({"APPNEXUS": 1.01, "districtm": 0.98}, "districtm", "", "banner", 0.98, id="go-sample-alias"),
    # an alias never takes its core bidder's factor (PBS-Go uses the request's name, not the adapter code)
    pytest.param({"appnexus": 2.0}, "districtm", "", "banner", 1.0, id="alias-not-core-factor"),
    pytest.param({"appnexus": 2.0}, "rubicon", "", "banner", 1.0, id="no-factor"),
    # PBS-Java BidAdjustmentFactorResolverTest (their ImpMediaType.video = our video-instream)
    pytest.param({"BIDder": 3.456, "seat": 4.456}, "bidDER", "seAT", "video-instream", 4.456,
                 id="java-seat-over-bidder"),
    pytest.param({"BIDder": 3.456}, "bidDER", "seAT", "video-instream", 3.456, id="java-bidder"),
    pytest.param({"BIDder": 5.456, "seat": 6.456, "mediatypes": {
        "video": {"seat": 0.234, "BIDder": 1.234}, "video-outstream": {"bidder": 2.345, "SEAT": 3.345},
        "banner": {"bidder": 4.456}}}, "bidDER", "Seat", "video-instream", 0.234, id="java-seat-by-media-type"),
    pytest.param({"BIDder": 5.456, "seat": 6.456, "mediatypes": {
        "video": {"BIDder": 1.234}, "video-outstream": {"bidder": 2.345}, "banner": {"bidder": 3.456}}},
        "bidDER", "Seat", "video-instream", 6.456, id="java-seat-over-bidder-by-media-type"),
    pytest.param({"BIDder": 5.456, "mediatypes": {
        "video": {"BIDder": 1.234}, "video-outstream": {"bidder": 2.345}, "banner": {"bidder": 3.456}}},
        "bidDER", "Seat", "video-instream", 1.234, id="java-bidder-by-media-type"),
    pytest.param({}, "bidder1", "bidder2", "video-instream", 1.0, id="java-none"),
    # media types: outstream has its own key; "video-instream" is not where PBS-Java looks
    pytest.param({"b": 5.0, "mediatypes": {"video": {"b": 1.5}, "video-outstream": {"b": 2.5}}}, "b", "",
                 "video-outstream", 2.5, id="media-outstream"),
    pytest.param({"b": 5.0, "mediatypes": {"video-instream": {"b": 1.5}}}, "b", "", "video-instream", 5.0,
                 id="media-video-instream-key-unused"),
    pytest.param({"b": 5.0, "mediatypes": {"banner": {"B": 1.5}}}, "b", "", "native", 5.0, id="media-other-type"),
    pytest.param({"b": 5.0, "mediatypes": {"banner": {"B": 1.5}}}, "b", "", "banner", 1.5, id="media-case-insensitive"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "bidder", "seat", "adjust_type", "expected"), FACTORS)
def test_factor(raw: dict[str, Any], bidder: str, seat: str, adjust_type: str, expected: float) -> None:
    if not raw:
        assert BidAdjustments.from_request({"bidadjustmentfactors": raw}, None) == (None, [])
        return
    assert factors_of(raw).factor(bidder, seat, adjust_type) == expected


FLOOR_FACTORS = [
    pytest.param({"appnexus": 2.0}, "appnexus", 2.0, id="exact"),
    pytest.param({"APPNEXUS": 2.0}, "appnexus", 2.0, id="keys-lower-cased"),
    pytest.param({"appnexus": 2.0}, "AppNexus", 1.0, id="go-looks-up-the-name-as-given"),
    pytest.param({"appnexus": 2.0, "mediatypes": {"banner": {"rubicon": 3.0}}}, "rubicon", 1.0, id="no-media-types"),
]


@pytest.mark.parametrize(("raw", "bidder", "expected"), FLOOR_FACTORS)
def test_floor_factor(raw: dict[str, Any], bidder: str, expected: float) -> None:
    assert factors_of(raw).floor_factor(bidder) == expected


# --- from_request: merging, warnings, the whole per-bid adjustment ----------------------------------------

REQUEST_WARNING = ("general", Message(BID_ADJUSTMENT_WARNING_CODE, REQUEST_INVALID))
ACCOUNT_WARNING = ("prebid", Message(BID_ADJUSTMENT_WARNING_CODE, ACCOUNT_INVALID))
B_MULT2 = banner("bidderA", "*", [mult(2.0)])
B_MULT3 = banner("bidderA", "*", [mult(3.0)])
B_BAD = banner("bidderA", "*", [mult(200.0)])

FROM_REQUEST = [
    pytest.param({}, None, None, [], id="nothing"),
    pytest.param({"bidadjustmentfactors": {}}, None, None, [], id="empty-factors"),
    pytest.param({"bidadjustments": {"mediatype": {}}}, None, None, [], id="no-rules"),
    pytest.param({"bidadjustments": B_MULT2}, None, 20.0, [], id="request-rules"),
    pytest.param({}, B_MULT3, 30.0, [], id="account-rules"),
    pytest.param({"bidadjustments": B_MULT2}, B_MULT3, 20.0, [], id="request-wins"),
    pytest.param({"bidadjustments": B_BAD}, B_MULT3, 30.0, [REQUEST_WARNING], id="invalid-request-dropped"),
    pytest.param({"bidadjustments": B_BAD}, None, None, [REQUEST_WARNING], id="invalid-request-nothing-left"),
    pytest.param({"bidadjustments": "x"}, None, None, [REQUEST_WARNING], id="malformed-request"),
    pytest.param({}, B_BAD, None, [ACCOUNT_WARNING], id="invalid-account"),
    pytest.param({"bidadjustments": banner("other", "*", [mult(2.0)])}, B_BAD, None, [ACCOUNT_WARNING],
                 id="invalid-account-drops-request-rules-too"),
    pytest.param({"bidadjustments": B_MULT2}, B_BAD, 20.0, [], id="invalid-account-rule-shadowed-by-request"),
    pytest.param({"bidadjustments": B_BAD}, B_BAD, None, [REQUEST_WARNING, ACCOUNT_WARNING], id="both-invalid"),
    pytest.param({"bidadjustments": B_MULT2}, {"mediatype": 3}, None, [ACCOUNT_WARNING], id="malformed-account"),
]  # fmt: skip


@pytest.mark.parametrize(("prebid", "account", "price", "warnings"), FROM_REQUEST)
def test_from_request(prebid: dict[str, Any], account: Any, price: float | None, warnings: list[Any]) -> None:
    adjustments, got_warnings = BidAdjustments.from_request(prebid, account)
    assert got_warnings == warnings
    if price is None:
        assert adjustments is None
        return
    assert adjustments is not None
    assert adjustments.apply(10.0, "USD", "bidderA", "banner", "", NO_RATES) == (price, "USD")


def test_account_rules_are_compiled_once() -> None:
    account = banner("bidderA", "*", [mult(3.0)])
    first, _ = BidAdjustments.from_request({}, account)
    second, _ = BidAdjustments.from_request({}, account)
    assert first is not None and second is not None
    assert first._rules is second._rules


VIDEO_RULES = rules(video_outstream={"*": {"*": [mult(2)]}}, video_instream={"*": {"*": [mult(3)]}})
USD_EUR = convert_with({("EUR", "USD"): 1.25, ("USD", "EUR"): 0.8})
ADJUST = [
    # (prebid, original, rate, bidder, seat, bid type, imp id, deal, expected (price, currency))
    pytest.param({"bidadjustmentfactors": {"bidderA": 2.0}}, 10.0, 0.5, "bidderA", "", "banner", "i", "",
                 (10.0, "USD"), id="factor-and-rate"),
    pytest.param({"bidadjustmentfactors": {"bidderA": 2.0}, "bidadjustments": banner("bidderA", "*", [cpm(1, "EUR")])},
                 10.0, 0.5, "bidderA", "", "banner", "i", "", (8.75, "USD"), id="factor-rate-then-cpm-rule"),
    pytest.param({"bidadjustments": banner("bidderA", "*", [static(3, "EUR")])}, 10.0, 1.0, "bidderA", "", "banner",
                 "i", "", (3.0, "EUR"), id="static-changes-currency"),
    pytest.param({"bidadjustments": banner("bidderA", "*", [mult(0)])}, 10.0, 1.0, "bidderA", "", "banner", "i", "",
                 (MIN_BID, "USD"), id="no-deal-at-zero-gets-min-bid"),
    pytest.param({"bidadjustments": banner("bidderA", "*", [mult(0)])}, 10.0, 1.0, "bidderA", "", "banner", "i", "d",
                 (0.0, "USD"), id="deal-may-be-zero"),
    pytest.param({"bidadjustments": banner("other", "*", [mult(2)])}, 0.0, 1.0, "bidderA", "", "banner", "i", "",
                 (MIN_BID, "USD"), id="unmatched-zero-price-still-min-bid"),
    pytest.param({"bidadjustments": banner("other", "*", [mult(2)])}, -1.0, 1.0, "bidderA", "", "banner", "i", "d",
                 (0.0, "USD"), id="unmatched-negative-deal-price-zero"),
    pytest.param({"bidadjustments": banner("bidderA", "*", [mult(2)])}, 10.0, 1.0, "bidderA", "seatX", "banner", "i",
                 "", (20.0, "USD"), id="rules-use-the-bidder-not-the-seat"),
    pytest.param({"bidadjustments": banner("bidderA", "*", [mult(2)])}, 10.0, 1.0, "bidderA", "", "banner", "i", 7,
                 (20.0, "USD"), id="non-string-deal-is-no-deal"),
    pytest.param({"bidadjustments": VIDEO_RULES}, 1.0, 1.0, "bidderA", "", "video", "out", "", (2.0, "USD"),
                 id="outstream-imp"),
    pytest.param({"bidadjustments": VIDEO_RULES}, 1.0, 1.0, "bidderA", "", "video", "in", "", (3.0, "USD"),
                 id="instream-imp"),
    pytest.param({"bidadjustmentfactors": {"bidderA": 1.5, "mediatypes": {"video-outstream": {"bidderA": 4.0}}}},
                 1.0, 1.0, "bidderA", "", "video", "out", "", (4.0, "USD"), id="media-factor-outstream-imp"),
]  # fmt: skip

IMPS = [{"id": "in", "video": {"plcmt": 1}}, {"id": "out", "video": {"plcmt": 4}}, {"id": "i", "banner": {}}]


@pytest.mark.parametrize(("prebid", "original", "rate", "bidder", "seat", "bid_type", "imp_id", "deal", "expected"),
                         ADJUST)  # fmt: skip
def test_adjust(
    prebid: dict[str, Any], original: float, rate: float, bidder: str, seat: str, bid_type: str, imp_id: str,
    deal: Any, expected: tuple[float, str],
) -> None:  # fmt: skip
    adjustments, warnings = BidAdjustments.from_request(prebid, None, IMPS)
    assert adjustments is not None and warnings == []
    assert adjustments.adjust(original, rate, "USD", bidder, seat, bid_type, imp_id, deal, USD_EUR) == expected


# --- request-time validation of bidadjustmentfactors -------------------------------------------------------

REGISTRY = {
    "appnexus": SimpleNamespace(code="appnexus", disabled=False),
    "rubicon": SimpleNamespace(code="rubicon", disabled=False),
    "magnite": SimpleNamespace(code="magnite", disabled=False),
    "oldbidder": SimpleNamespace(code="oldbidder", disabled=True),
}


def lookup(name: str) -> Any:
    return REGISTRY.get(name.lower())


P = "request.ext.prebid.bidadjustmentfactors"
FACTOR_VALIDATION = [
    # PBS-Go endpoint sample requests
    pytest.param({"appnexus": -2.0}, {}, f"{P}.appnexus must be a positive number. Got -2.000000",
                 id="go-bid-adjustment-negative"),
    pytest.param({"unknown": 2.0}, {}, f"{P}.unknown is not a known bidder or alias",
                 id="go-bid-adjustment-invalid-bidder"),
    pytest.param({"APPNEXUS": 1.01, "Appnexus": 2.00}, {},
                 "cannot have multiple bidders that differ only in case style",
                 id="go-bid-adj-factors-case-invalid-same-bidder-names"),
    pytest.param({"APPNEXUS": 1.01, "districtm": 0.98}, {"districtm": "APPNEXUS"}, None,
                 id="go-bid-adj-factors-case-insensitive"),
    pytest.param({"APPNEXUS": 1.01}, {}, None, id="go-bid-adj-factors-case-insensitive-different-casing"),
    # PBS-Go rules beyond its samples
    pytest.param({"appnexus": 0}, {}, f"{P}.appnexus must be a positive number. Got 0.000000", id="zero"),
    pytest.param({"unknown": -1}, {}, f"{P}.unknown must be a positive number. Got -1.000000", id="sign-checked-first"),
    pytest.param({"oldbidder": 1.5}, {}, f"{P}.oldbidder is not a known bidder or alias", id="disabled-bidder"),
    pytest.param({"Districtm": 1.5}, {"districtm": "appnexus"}, f"{P}.Districtm is not a known bidder or alias",
                 id="alias-is-case-sensitive"),
    pytest.param({"districtm": 1.5, "DistrictM": 1.5}, {"districtm": "appnexus", "DistrictM": "appnexus"}, None,
                 id="aliases-differing-in-case-are-distinct"),
    pytest.param({"appnexus": "2"}, {}, f"{P}.appnexus must be a positive number. Got '2'", id="not-a-number"),
    pytest.param([], {}, f"{P} must be an object", id="not-an-object"),
    pytest.param(None, {}, None, id="absent"),
    # PBS-Java RequestValidatorTest (mediatypes)
    pytest.param({"magnite": -1.1}, {}, f"{P}.magnite must be a positive number. Got -1.100000",
                 id="java-adjustment-factor-negative"),
    pytest.param({"mediatypes": {"banner": {"magnite": -1.1}}}, {},
                 f"{P}.banner.magnite must be a positive number. Got -1.100000", id="java-media-factor-negative"),
    pytest.param({"unknownBidder": 1.1}, {}, f"{P}.unknownBidder is not a known bidder or alias",
                 id="java-bidder-unknown"),
    pytest.param({"mediatypes": {"native": {"unknownBidder": 1.1}}}, {},
                 f"{P}.native.unknownBidder is not a known bidder or alias", id="java-media-bidder-unknown"),
    pytest.param({"rubicon": 1.1, "mediatypes": {"video-outstream": {"Rubicon": 2, "al": 0.5}}}, {"al": "rubicon"},
                 None, id="media-valid"),
    pytest.param({"mediatypes": {"video": {"appnexus": 0}}}, {}, f"{P}.video.appnexus must be a positive number. "
                 "Got 0.000000", id="media-zero"),
    pytest.param({"mediatypes": {"display": {"appnexus": 1}}}, {}, f"{P}.mediatypes.display is not a known media type",
                 id="media-unknown-type"),
    pytest.param({"mediatypes": 3}, {}, f"{P}.mediatypes must be an object", id="mediatypes-not-an-object"),
]  # fmt: skip


@pytest.mark.parametrize(("factors", "aliases", "expected"), FACTOR_VALIDATION)
def test_validate_adjustment_factors(factors: Any, aliases: dict[str, str], expected: str | None) -> None:
    assert validate_adjustment_factors(factors, lookup, aliases) == expected
