"""``ext.prebid.adservertargeting``: PBS-Go's adservertargeting tests (adservertargeting_test.go,
requestcache_test.go, requestlookup_test.go, respdataprocessor_test.go, utils_test.go and test_data.go)
translated into rows, and rows for the cases PBS-Go leaves open (see the module docstring)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from multidict import MultiDict

from hbserver.auction.response.adservertargeting import (
    WARNING_CODE,
    Collected,
    LookupFailure,
    RequestCache,
    ResponseTarget,
    add_request_values,
    add_response_values,
    apply_ad_server_targeting,
    collect,
    merge_bid_targeting,
    number_text,
    resolve,
    resolve_key,
    response_field,
    response_target,
    response_value,
    split_and_get,
    sub_path_after,
    targets_of,
    trim_prefix,
    truncate_keys,
    typed_lookup,
    validate_targets,
    value_from_imps,
    value_from_query,
    value_from_request,
    wants_ad_server_targeting,
)

# --- test_data.go ---

REQ_VALID = {
    "id": "req_id",
    "imp": [
        {
            "id": f"test_imp{n}",
            "ext": {"appnexus": {"placementId": 250419771}},
            "banner": {"format": [{"h": 250, "w": 300}]},
        }
        for n in (1, 2)
    ],
    "site": {"page": "test.com"},
}
REQ_INVALID = {"id": "req_id", "imp": {"incorrect": True}, "site": {"page": "test.com"}}
REQ_NO_IMPS = {"id": "req_id", "site": {"page": "test.com"}}
TEST_QUERY = {"amp-key": "testAmpKey", "data-override-height": "400"}  # testUrl's query
REQ_FULL_VALID = {
    "id": "req_id",
    "imp": [
        {
            "id": "test_imp1",
            "ext": {"appnexus": {"placementId": 123}},
            "banner": {"format": [{"h": 250, "w": 300}], "w": 260, "h": 350},
        },
        {
            "id": "test_imp2",
            "ext": {"appnexus": {"placementId": 456}},
            "banner": {"format": [{"h": 400, "w": 600}], "w": 270, "h": 360},
        },
    ],
    "site": {"page": "test.com"},
}
REQ_FULL_INVALID = {"imp": [{"ext": {"appnexus": {"placementId": 123}}}, {"ext": {"appnexus": {"placementId": 456}}}]}

REQ_EXT = {
    "prebid": {
        "adservertargeting": [
            {"key": "hb_amp_param", "source": "bidrequest", "value": "ext.prebid.amp.data.ampkey"},
            {"key": "hb_req_imp_ext_param", "source": "bidrequest", "value": "imp.ext.prebid.test"},
            {"key": "hb_req_imp_ext_bidder_param", "source": "bidrequest", "value": "imp.ext.bidder1.tagid"},
            {"key": "hb_req_imp_param", "source": "bidrequest", "value": "imp.bidfloor"},
            {"key": "hb_req_ext_param", "source": "bidrequest", "value": "ext.prebid.targeting.includebrandcategory"},
            {"key": "hb_req_user_param", "source": "bidrequest", "value": "user.yob"},
            {"key": "hb_static_thing", "source": "static", "value": "test-static-value"},
            {"key": "{{BIDDER}}_custom1", "source": "bidresponse", "value": "seatbid.bid.ext.custom1"},
            {"key": "custom2", "source": "bidresponse", "value": "seatbid.bid.ext.custom2"},
            {"key": "{{BIDDER}}_imp", "source": "bidresponse", "value": "seatbid.bid.impid"},
            {"key": "seat_cur", "source": "bidresponse", "value": "cur"},
        ],
        "targeting": {
            "includewinners": False,
            "includebidderkeys": True,
            "includebrandcategory": {"primaryadserver": 1, "publisher": "", "withcategory": True},
        },
    }
}

AMP_QUERY = {"ampkey": "testAmpKey", "data-override-height": "400"}

# the bid the bidsCache of respdataprocessor_test.go holds
CACHED_BID = {
    "id": "testBidId",
    "impid": "testBidImpId1",
    "price": 10.0,
    "cat": ["cat11", "cat12"],
    "ext": {"prebid": {"foo": "bar1"}},
}


def full_request(with_values: bool = True) -> dict[str, Any]:
    """The request of TestExtractAdServerTargeting / TestProcessAdServerTargetingFull (and, without
    bidfloor, yob, prebid.test and tagid, of TestProcessAdServerTargetingWarnings)."""
    imps = []
    for n in (1, 2, 3):
        if with_values:
            ext = {
                "prebid": {"is_rewarded_inventory": 1, "test": {"testUser": f"user{n}"}},
                "other": "otherImp",
                "bidder1": {"tagid": 111 * n, "placementId": f"test{n}"},
            }
            imps.append({"id": f"imp{n}", "bidfloor": 10.0 * n, "ext": ext})
        else:
            ext = {"prebid": {"is_rewarded_inventory": 1}, "other": "otherImp", "bidder1": {"placementId": f"test{n}"}}
            imps.append({"id": f"imp{n}", "ext": ext})
    user: dict[str, Any] = {"id": "testUser", "keywords": "keywords"}
    if with_values:
        user["yob"] = 2000
    return {"id": "anyID", "imp": imps, "user": user, "ext": copy.deepcopy(REQ_EXT)}


def bid(bid_id: str, imp_id: str, price: float, cats: list[str], ext: dict[str, Any]) -> dict[str, Any]:
    return {"id": bid_id, "impid": imp_id, "price": price, "cat": cats, "ext": ext}


def two_seat_response(bid_exts: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """The appnexus + rubicon response of the resolve / Apply tests."""
    default_exts = [
        {"prebid": {"foo": "bar1"}},
        {"prebid": {"foo": "bar2"}},
        {"prebid": {"foo": "bar3"}},
        {"prebid": {"foo": "bar11", "targeting": {"hb_amp_param": "testInputKey1", "testInput": 111}}},
        {"prebid": {"foo": "bar22", "targeting": {"hb_amp_param": "testInputKey2", "testInput": 222}}},
        {"prebid": {"foo": "bar33", "targeting": {"hb_amp_param": "testInputKey3", "testInput": 333}}},
    ]
    exts = bid_exts or default_exts
    return {
        "id": "testResponse",
        **fields,
        "seatbid": [
            {
                "seat": "appnexus",
                "bid": [
                    bid("bidA1", "imp1", 10.0, ["cat11", "cat12"], exts[0]),
                    bid("bidA2", "imp2", 20.0, ["cat21", "cat22"], exts[1]),
                    bid("bidA3", "imp3", 30.0, ["cat31", "cat32"], exts[2]),
                ],
                "ext": {"testData": {"foo": "barApn"}},
            },
            {
                "seat": "rubicon",
                "bid": [
                    bid("bidR1", "imp1", 11.0, ["cat111", "cat112"], exts[3]),
                    bid("bidR2", "imp2", 22.0, ["cat221", "cat222"], exts[4]),
                    bid("bidR3", "imp3", 33.0, ["cat331", "cat332"], exts[5]),
                ],
                "ext": {"testData": {"foo": "barRubicon"}},
            },
        ],
        "ext": {"prebid": {"seatExt": "true"}},
    }


def bid_exts(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [b["ext"] for seat in response["seatbid"] for b in seat["bid"]]


@contextlib.contextmanager
def fails_with(text: str) -> Iterator[None]:
    """The block raises LookupFailure with exactly ``text`` (the warning's text)."""
    with pytest.raises(LookupFailure) as exc:
        yield
    assert str(exc.value) == text


def messages(warnings: list[dict[str, Any]]) -> list[str]:
    assert all(w["code"] == WARNING_CODE for w in warnings)
    return [w["message"] for w in warnings]


# --- requestcache_test.go TestRequestImpCache (+ null and non-array imps) ---


@pytest.mark.parametrize(
    ("request_", "imps", "error"),
    [
        pytest.param(REQ_VALID, 2, None, id="valid-request-with-2-imps"),
        pytest.param(REQ_INVALID, 0, "expect [ or n, but found {", id="invalid-request"),
        pytest.param(REQ_NO_IMPS, 0, "Key path not found", id="valid-request-with-no-imps"),
        pytest.param({"imp": None}, 0, None, id="null-imps"),
        pytest.param({"imp": "x"}, 0, 'expect [ or n, but found "', id="string-imps"),
    ],
)
def test_request_imp_cache(request_: dict[str, Any], imps: int, error: str | None) -> None:
    cache = RequestCache(request_)
    assert cache.request is request_
    if error is None:
        assert len(cache.imps()) == imps
    else:
        with fails_with(error):
            cache.imps()


# --- requestlookup_test.go TestGetAdServerTargeting (+ shapes PBS-Go refuses when it decodes the request) ---


@pytest.mark.parametrize(
    ("ext", "expected"),
    [
        pytest.param(None, [], id="no-ext-prebid"),
        pytest.param({"prebid": {}}, [], id="ext-prebid-no-adservertargeting"),
        pytest.param({"prebid": {"adservertargeting": []}}, [], id="empty-adservertargeting"),
        pytest.param(
            {"prebid": {"adservertargeting": [{"key": "adt_key", "source": "bidrequest", "value": "ext.prebid.data"}]}},
            [("adt_key", "bidrequest", "ext.prebid.data")],
            id="with-adservertargeting",
        ),
        pytest.param(
            {"prebid": {"adservertargeting": [None, {"key": None, "source": "static"}]}},
            [("", "", ""), ("", "static", "")],
            id="null-entry-and-null-fields-are-empty",
        ),
        pytest.param({"prebid": {"adservertargeting": "x"}}, None, id="not-an-array"),
        pytest.param({"prebid": {"adservertargeting": [5]}}, None, id="entry-not-an-object"),
        pytest.param({"prebid": {"adservertargeting": [{"key": 5}]}}, None, id="key-not-a-string"),
        pytest.param({"prebid": 5}, None, id="prebid-not-an-object"),
        pytest.param([], None, id="ext-not-an-object"),
    ],
)
def test_get_ad_server_targeting(ext: Any, expected: list[tuple[str, str, str]] | None) -> None:
    request = {"id": "req_id"} if ext is None else {"id": "req_id", "ext": ext}
    if expected is None:
        with pytest.raises(LookupFailure):
            targets_of(request)
    else:
        assert targets_of(request) == expected


# --- requestlookup_test.go TestValidateAdServerTargeting ---


@pytest.mark.parametrize(
    ("targets", "valid", "warnings"),
    [
        pytest.param(
            [("adt_key", "bidrequest", "ext.prebid.data")],
            [("adt_key", "bidrequest", "ext.prebid.data")],
            [],
            id="valid",
        ),
        pytest.param(
            [("", "bidrequest", "ext.prebid.data")],
            [],
            ["Key is empty for the ad server targeting object at index 0"],
            id="invalid-key",
        ),
        pytest.param(
            [("adt_key", "incorrect", "ext.prebid.data")],
            [],
            ["Incorrect source for the ad server targeting object at index 0"],
            id="invalid-source",
        ),
        pytest.param(
            [("adt_key", "static", "")],
            [],
            ["Value is empty for the ad server targeting object at index 0"],
            id="invalid-value",
        ),
        pytest.param(
            [("adt_key1", "static", "valid"), ("adt_key2", "static", "")],
            [("adt_key1", "static", "valid")],
            ["Value is empty for the ad server targeting object at index 1"],
            id="valid-and-invalid",
        ),
        pytest.param(
            [("", "nope", "")],
            [],
            [
                "Key is empty for the ad server targeting object at index 0",
                "Value is empty for the ad server targeting object at index 0",
                "Incorrect source for the ad server targeting object at index 0",
            ],
            id="all-three-in-pbs-order",
        ),
        pytest.param([("k", "BidResponse", "cur")], [("k", "BidResponse", "cur")], [], id="source-case-insensitive"),
    ],
)
def test_validate_ad_server_targeting(
    targets: list[tuple[str, str, str]], valid: list[tuple[str, str, str]], warnings: list[str]
) -> None:
    actual_valid, actual_warnings = validate_targets(targets)
    assert actual_valid == valid
    assert messages(actual_warnings) == warnings


# --- requestlookup_test.go TestGetValueFromBidRequest ---


@pytest.mark.parametrize(
    ("path", "expected", "error"),
    [
        pytest.param("ext.prebid.amp.data.amp-key", "testAmpKey", None, id="existing-query-param"),
        pytest.param(
            "ext.prebid.amp.data.amp-key-not-existing",
            None,
            "value not found for path: ext.prebid.amp.data.amp-key-not-existing",
            id="missing-query-param",
        ),
        pytest.param("imp.banner.h", {"test_imp1": "350", "test_imp2": "360"}, None, id="existing-imp-value"),
        pytest.param(
            "imp.ext.appnexus.placementId", {"test_imp1": "123", "test_imp2": "456"}, None, id="existing-imp-ext-value"
        ),
        pytest.param("imp.video", None, "value not found for path: imp.video", id="missing-imp-value"),
        pytest.param("site.page", "test.com", None, id="existing-request-value"),
        pytest.param("app", None, "value not found for path: app", id="missing-request-value"),
    ],
)
def test_get_value_from_bid_request(path: str, expected: Any, error: str | None) -> None:
    cache = RequestCache(REQ_FULL_VALID)
    if error is None:
        assert value_from_request(cache, path, TEST_QUERY) == expected
    else:
        with fails_with(error):
            value_from_request(cache, path, TEST_QUERY)


# --- requestlookup_test.go TestGetValueFromQueryParam (+ no query off AMP, repeated parameter) ---


@pytest.mark.parametrize(
    ("path", "query", "expected", "error"),
    [
        pytest.param("ext.prebid.amp.data.amp-key", TEST_QUERY, "testAmpKey", False, id="existing"),
        pytest.param("ext.prebid.amp.data.amp-key-not-existing", TEST_QUERY, None, True, id="non-existing"),
        pytest.param("ext.data.amp-key-not-existing", TEST_QUERY, None, False, id="not-a-query-param-path"),
        pytest.param("ext.prebid.amp.data.amp-key", None, None, True, id="no-query-off-amp"),
        pytest.param("ext.prebid.amp.data.amp-key", MultiDict([("amp-key", "a"), ("amp-key", "b")]), "a", False,
                     id="repeated-parameter-first-wins"),
        pytest.param("ext.prebid.amp.data.amp-key", {"amp-key": ""}, None, True, id="empty-parameter"),
    ],
)
def test_get_value_from_query_param(path: str, query: Any, expected: str | None, error: bool) -> None:
    if error:
        with fails_with(f"value not found for path: {path}"):
            value_from_query(path, query)
    else:
        assert value_from_query(path, query) == expected


# --- requestlookup_test.go TestGetValueFromImp (+ imp without id, numeric id, [N] index) ---


@pytest.mark.parametrize(
    ("path", "request_", "expected", "error"),
    [
        pytest.param("imp.banner.h", REQ_FULL_VALID, {"test_imp1": "350", "test_imp2": "360"}, None, id="existing"),
        pytest.param(
            "imp.ext.appnexus.placementId", REQ_FULL_VALID, {"test_imp1": "123", "test_imp2": "456"}, None,
            id="existing-ext",
        ),
        pytest.param("imp.video", REQ_FULL_VALID, None, "value not found for path: imp.video", id="non-existing"),
        pytest.param("imp.video", REQ_FULL_INVALID, None, "Key path not found", id="invalid-imps"),
        pytest.param("imp.video", {}, None, "Key path not found", id="no-imps"),
        pytest.param("imp.banner.format.[0].w", REQ_FULL_VALID, {"test_imp1": "300", "test_imp2": "600"}, None,
                     id="array-index"),
        pytest.param("imp.x", {"imp": [{"id": 5, "x": "v"}]}, {"5": "v"}, None, id="numeric-imp-id"),
        pytest.param("site.page", REQ_FULL_VALID, {}, None, id="not-an-imp-path"),
        pytest.param("imp.ext.imp.x", REQ_FULL_VALID, {}, None, id="imp-prefix-twice-is-not-an-imp-path"),
    ],
)
def test_get_value_from_imp(path: str, request_: dict[str, Any], expected: Any, error: str | None) -> None:
    cache = RequestCache(request_)
    if error is None:
        assert value_from_imps(path, cache) == expected
    else:
        with fails_with(error):
            value_from_imps(path, cache)


# --- requestlookup_test.go TestGetValueFromRequestJson ---


@pytest.mark.parametrize(
    ("path", "expected"),
    [pytest.param("site.page", "test.com", id="existing"), pytest.param("app", None, id="non-existing")],
)
def test_get_value_from_request_json(path: str, expected: str | None) -> None:
    if expected is None:
        with fails_with(f"value not found for path: {path}"):
            split_and_get(path, REQ_FULL_VALID)
    else:
        assert split_and_get(path, REQ_FULL_VALID) == expected


# --- utils_test.go TestSplitAndGet, TestVerifyPrefixAndTrimFound, TestTypedLookup, TestVerifyType ---


@pytest.mark.parametrize(
    ("path", "data", "expected"),
    [
        pytest.param("site.page", {"site": {"page": "test.com"}}, "test.com", id="valid-input"),
        pytest.param("site.page", None, None, id="invalid-input"),
    ],
)
def test_split_and_get(path: str, data: Any, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(LookupFailure):
            split_and_get(path, data)
    else:
        assert split_and_get(path, data) == expected


@pytest.mark.parametrize(
    ("path", "prefix", "expected", "found"),
    [
        pytest.param("site.page.id", "site.page.", "id", True, id="existing"),
        pytest.param("site.page.id", "incorrect", "", False, id="non-existing"),
        pytest.param("x.site.page.id", "site.page.", "", False, id="not-at-start"),
        pytest.param("imp.a.imp.b", "imp.", "", False, id="prefix-twice"),
    ],
)
def test_verify_prefix_and_trim(path: str, prefix: str, expected: str, found: bool) -> None:
    assert trim_prefix(path, prefix) == (expected, found)


NOT_FOUND = "value not found for path: site.page"
WRONG_TYPE = "incorrect value type for path: site.page, value can only be string or number"


@pytest.mark.parametrize(
    ("data", "keys", "expected", "error"),
    [
        pytest.param({"site": {"page": "test.com"}}, ["site", "page"], "test.com", None, id="existing"),
        pytest.param({"site": {"page": "test.com"}}, ["site", "id"], None, NOT_FOUND, id="non-existing"),
        pytest.param("[", ["site", "page"], None, NOT_FOUND, id="incorrect-json"),
        pytest.param({"site": {"page": "test.com"}}, ["site"], None, WRONG_TYPE, id="object-value"),
        # TestVerifyType and the other jsonparser types
        pytest.param({"site": {"page": 12}}, ["site", "page"], "12", None, id="int"),
        pytest.param({"site": {"page": 1.5}}, ["site", "page"], "1.5", None, id="float"),
        pytest.param({"site": {"page": True}}, ["site", "page"], None, WRONG_TYPE, id="boolean"),
        pytest.param({"site": {"page": None}}, ["site", "page"], None, WRONG_TYPE, id="null"),
        pytest.param({"site": {"page": ["a"]}}, ["site", "page"], None, WRONG_TYPE, id="array"),
        pytest.param({"site": {"page": ""}}, ["site", "page"], "", None, id="empty-string"),
        # jsonparser's [N] array index
        pytest.param({"a": ["x", "y"]}, ["a", "[1]"], "y", None, id="index"),
        pytest.param({"a": ["x", "y"]}, ["a", "[+1]"], "y", None, id="index-with-plus"),
        pytest.param({"a": ["x", "y"]}, ["a", "[2]"], None, NOT_FOUND, id="index-out-of-range"),
        pytest.param({"a": ["x", "y"]}, ["a", "[-1]"], None, NOT_FOUND, id="negative-index"),
        pytest.param({"a": ["x", "y"]}, ["a", "[x]"], None, NOT_FOUND, id="index-not-a-number"),
        pytest.param({"a": ["x", "y"]}, ["a", "[]"], None, NOT_FOUND, id="empty-index"),
        # issue 38: what int() refuses ("²", thousands of digits) or takes (Arabic-Indic digits)
        pytest.param({"a": ["x", "y"]}, ["a", "[\u00b2]"], None, NOT_FOUND, id="superscript-index"),
        pytest.param({"a": ["x", "y"]}, ["a", "[\u0661]"], None, NOT_FOUND, id="arabic-indic-index"),
        pytest.param({"a": ["x", "y"]}, ["a", "[" + "9" * 5000 + "]"], None, NOT_FOUND, id="huge-index"),
        pytest.param({"a": ["x", "y"]}, ["a", "[" + "0" * 5000 + "1]"], "y", None, id="zero-padded-index"),
        pytest.param({"a": ["x", "y"]}, ["a", "0"], None, NOT_FOUND, id="key-on-an-array"),
        pytest.param({"a": {"[0]": "z"}}, ["a", "[0]"], "z", None, id="bracket-key-on-an-object"),
    ],
)
def test_typed_lookup(data: Any, keys: list[str], expected: str | None, error: str | None) -> None:
    if error is None:
        assert typed_lookup(data, "site.page", keys) == expected
    else:
        with fails_with(error):
            typed_lookup(data, "site.page", keys)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(10.0, "10", id="integral-float"),
        pytest.param(2000, "2000", id="int"),
        pytest.param(0.5, "0.5", id="fraction"),
        pytest.param(-3.25, "-3.25", id="negative"),
        pytest.param(123456789.125, "123456789.125", id="long-fraction"),
        pytest.param(1.5e-5, "0.000015", id="small-fixed"),
        pytest.param(1e-6, "0.000001", id="smallest-fixed"),
        pytest.param(1e-7, "1e-7", id="exponent-below-1e-6"),
        pytest.param(1.5e-10, "1.5e-10", id="two-digit-exponent"),
        pytest.param(1e16, "10000000000000000", id="large-fixed"),
        pytest.param(1e20, "100000000000000000000", id="largest-fixed"),
        pytest.param(1e21, "1e+21", id="exponent-from-1e21"),
        pytest.param(0.0, "0", id="zero"),
        pytest.param(-0.0, "-0", id="negative-zero"),
    ],
)
def test_number_text(value: float, text: str) -> None:
    assert number_text(value) == text


# --- respdataprocessor_test.go TestProcessRequestTargetingData ---

BY_IMP = {"impId1": "impId1val", "impId2": "impId2val"}


@pytest.mark.parametrize(
    ("values", "targeting", "expected"),
    [
        pytest.param(
            {"key1": "val1", "key2": BY_IMP},
            {"inKey1": "inVal1"},
            {"inKey1": "inVal1", "key1": "val1", "key2": "impId1val"},
            id="single-and-by-imp-to-not-empty",
        ),
        pytest.param(
            {"key1": "val1", "key2": BY_IMP}, {}, {"key1": "val1", "key2": "impId1val"}, id="single-and-by-imp-to-empty"
        ),
        pytest.param({"key1": "val1"}, {"inKey1": "inVal1"}, {"inKey1": "inVal1", "key1": "val1"}, id="single"),
        pytest.param({"key2": BY_IMP}, {"inKey1": "inVal1"}, {"inKey1": "inVal1", "key2": "impId1val"}, id="by-imp"),
        pytest.param({"key3": {"other": "v"}}, {}, {"key3": ""}, id="by-imp-without-the-bids-imp-is-empty"),
        pytest.param({"key4": "", "key5": {}}, {}, {}, id="empty-values-are-left-out"),
    ],
)
def test_process_request_targeting_data(
    values: dict[str, Any], targeting: dict[str, str], expected: dict[str, str]
) -> None:
    add_request_values(values, targeting, "impId1")
    assert targeting == expected


# --- respdataprocessor_test.go TestProcessResponseTargetingData ---


@pytest.mark.parametrize(
    ("key", "path", "response", "seat_ext", "expected", "warnings"),
    [
        pytest.param("{{BIDDER}}_custom1", "seatbid.bid.impid", {}, None,
                     {"bidderA_custom1": "testBidImpId1"}, [], id="seatbid.bid"),
        pytest.param("{{BIDDER}}_custom1", "seatbid.bid.ext.prebid.foo", {}, None,
                     {"bidderA_custom1": "bar1"}, [], id="seatbid.bid.ext.prebid.foo"),
        pytest.param("{{BIDDER}}_custom1", "ext.testData.foo", {"cur": "UAH", "ext": {"testData": {"foo": "barExt"}}},
                     None, {"bidderA_custom1": "barExt"}, [], id="ext.testData.foo"),
        pytest.param("{{BIDDER}}_custom1", "cur", {"cur": "UAH", "ext": {"testData": {"foo": "barExt"}}}, None,
                     {"bidderA_custom1": "UAH"}, [], id="resp"),
        pytest.param("{{BIDDER}}_custom1", "seatbid.ext.testData.foo", {}, {"testData": {"foo": "barBidderA"}},
                     {"bidderA_custom1": "barBidderA"}, [], id="seat-ext"),
        pytest.param(
            "{{BIDDER}}_custom1", "seatbid.ext.testData", {"cur": "UAH", "ext": {"testData": {"foo": "barExt"}}},
            {"testData": {"foo": "barBidderA"}}, {},
            ["incorrect value type for path: testData, value can only be string or number for bidder: bidderA, "
             "bid id: testBidId"],
            id="seat-ext-incorrect-format",
        ),
    ],
)
def test_process_response_targeting_data(
    key: str, path: str, response: dict[str, Any], seat_ext: Any, expected: dict[str, str], warnings: list[str]
) -> None:
    targeting = {"inKey1": "inVal1"}
    actual = add_response_values([response_target(key, path)], targeting, "bidderA", CACHED_BID, response, seat_ext)
    assert messages(actual) == warnings
    assert targeting == {"inKey1": "inVal1", **expected}


# --- respdataprocessor_test.go TestBuildBidExt (+ the merge around it) ---


@pytest.mark.parametrize(
    ("ext", "targeting", "truncate", "expected"),
    [
        pytest.param({"prebid": {"test": 1}}, {"inKey1": "inVal1"}, 20,
                     {"prebid": {"targeting": {"inKey1": "inVal1"}, "test": 1}}, id="valid-bid-ext"),
        pytest.param({"prebid": {"targeting": {"hb_pb": "1.00", "a": "old"}}}, {"a": "new"}, 20,
                     {"prebid": {"targeting": {"hb_pb": "1.00", "a": "new"}}}, id="merged-into-existing-targeting"),
        pytest.param({"prebid": {"targeting": "x"}}, {"a": "b"}, 20, {"prebid": {"targeting": {"a": "b"}}},
                     id="non-object-targeting-replaced"),
        pytest.param(None, {"a": "b"}, 20, {"prebid": {"targeting": {"a": "b"}}}, id="no-ext"),
        pytest.param({"other": 1}, {}, 20, {"other": 1, "prebid": {}}, id="empty-targeting-adds-only-prebid"),
        pytest.param({"prebid": {}}, {"a_very_long_targeting_key": "v"}, 0, {"prebid": {"targeting": {
            "a_very_long_targetin": "v"}}}, id="truncated"),
    ],
)
def test_build_bid_ext(ext: Any, targeting: dict[str, str], truncate: int, expected: dict[str, Any]) -> None:
    the_bid: dict[str, Any] = {"id": "testBidId", "impid": "testBidImpId1"}
    if ext is not None:
        the_bid["ext"] = ext
    merge_bid_targeting(the_bid, targeting, truncate)
    assert the_bid["ext"] == expected


def test_build_bid_ext_leaves_the_auctions_targeting_dict_alone() -> None:
    auction_targeting = {"hb_pb": "1.00"}
    the_bid = {"id": "b", "ext": {"prebid": {"targeting": auction_targeting}}}
    merge_bid_targeting(the_bid, {"custom": "v"}, 20)
    assert auction_targeting == {"hb_pb": "1.00"}
    assert the_bid["ext"]["prebid"]["targeting"] == {"hb_pb": "1.00", "custom": "v"}


# --- respdataprocessor_test.go TestResolveKey ---


@pytest.mark.parametrize(
    ("key", "bidder", "expected"),
    [
        pytest.param("{{BIDDER}}_custom1", "bidderA", "bidderA_custom1", id="with-macro"),
        pytest.param("key_custom1", "bidderA", "key_custom1", id="without-macro"),
        pytest.param("{{BIDDER}}", "bidderA", "bidderA", id="macro-only"),
        pytest.param("{{BIDDER}}_custom1", "", "_custom1", id="macro-and-empty-bidder"),
        pytest.param("{{bidder}}_custom1", "bidderA", "{{bidder}}_custom1", id="lowercase-macro-not-replaced"),
        pytest.param("{{BIDDER}}_{{BIDDER}}", "b", "b_b", id="every-macro"),
    ],
)
def test_resolve_key(key: str, bidder: str, expected: str) -> None:
    target = ResponseTarget(key, True, "ext", 0, "ext", ("ext",))  # PBS-Go's rows all set HasMacro
    assert resolve_key(target, bidder) == expected


def test_has_macro_is_case_insensitive() -> None:
    assert response_target("{{bidder}}_x", "cur").has_macro
    assert not response_target("custom", "cur").has_macro


# --- respdataprocessor_test.go TestTruncateTargetingKeys ---


@pytest.mark.parametrize(
    ("targeting", "truncate", "expected"),
    [
        pytest.param({"inKey1": "inVal1"}, 5, {"inKey": "inVal1"}, id="truncate"),
        pytest.param({"inKey1": "inVal1"}, 10, {"inKey1": "inVal1"}, id="do-not-truncate"),
        pytest.param({"inKey1": "inVal1"}, 100, {"inKey1": "inVal1"}, id="exceed-limit"),
        pytest.param({"very_long_targeting_key_should_be_truncated_to_default": "inVal1"}, 0,
                     {"very_long_targeting_": "inVal1"}, id="default-length"),
        pytest.param({"very_long_targeting_key": "v"}, None, {"very_long_targeting_": "v"}, id="unset-is-default"),
        pytest.param({"very_long_targeting_key": "v"}, -3, {"very_long_targeting_": "v"}, id="negative-is-default"),
        pytest.param({"ab\u00e9cd": "v"}, 3, {"ab\ufffd": "v"}, id="cut-inside-a-character"),
        pytest.param({"ab\u20accd": "v"}, 4, {"ab\ufffd\ufffd": "v"}, id="cut-inside-a-three-byte-character"),
        pytest.param({"ab\u00e9cd": "v"}, 4, {"ab\u00e9": "v"}, id="cut-after-a-character"),
        pytest.param({"abcdef1": "1", "abcdef2": "2"}, 6, {"abcdef": "2"}, id="collision-last-wins"),
    ],
)
def test_truncate_targeting_keys(targeting: dict[str, str], truncate: int | None, expected: dict[str, str]) -> None:
    assert truncate_keys(targeting, truncate) == expected


# --- respdataprocessor_test.go TestGetValueFromSeatBidBid, TestGetValueFromExt ---


@pytest.mark.parametrize(
    ("path", "expected", "error"),
    [
        pytest.param("seatbid.bid.price", "10", None, id="existing-valid"),
        pytest.param("seatbid.bid.cat", None,
                     "incorrect value type for path: cat, value can only be string or number", id="existing-invalid"),
        pytest.param("seatbid.bid.test", None, "value not found for path: test", id="non-existing"),
        pytest.param("seatbid.bid.cat.[1]", "cat12", None, id="array-index"),
    ],
)
def test_get_value_from_seat_bid_bid(path: str, expected: str | None, error: str | None) -> None:
    target = response_target("k", path)
    if error is None:
        assert response_value(target, CACHED_BID, None, {}) == expected
    else:
        with fails_with(error):
            response_value(target, CACHED_BID, None, {})


@pytest.mark.parametrize(
    ("path", "expected", "error"),
    [
        pytest.param("seatbid.ext.prebid.foo", "bar1", None, id="existing-valid"),
        pytest.param("seatbid.ext.prebid.foo1", None, "value not found for path: prebid.foo1", id="non-existing"),
        pytest.param("seatbid.ext.prebid", None,
                     "incorrect value type for path: prebid, value can only be string or number", id="incorrect-type"),
    ],
)
def test_get_value_from_ext(path: str, expected: str | None, error: str | None) -> None:
    seat_ext = {"prebid": {"foo": "bar1"}}
    target = response_target("k", path)
    if error is None:
        assert response_value(target, CACHED_BID, seat_ext, {}) == expected
    else:
        with fails_with(error):
            response_value(target, CACHED_BID, seat_ext, {})


def test_get_value_from_ext_unexpected_separator() -> None:
    # TestGetValueFromExt's last row: the path split on ".ext." names "prebid", an object
    sub = sub_path_after("seatbid.ext.prebid", ".ext.")
    assert sub == "prebid"
    with fails_with("incorrect value type for path: prebid, value can only be string or number"):
        split_and_get(sub, {"prebid": {"foo": "bar1"}})


# the paths PBS-Go dispatches without a lookup (seatbid.<other>) or indexes past its split (a panic there)
@pytest.mark.parametrize(
    ("path", "expected", "error"),
    [
        pytest.param("seatbid.seat", "", None, id="seatbid-other-is-empty"),
        pytest.param("seatbid", None, "value not found for path: seatbid", id="seatbid-alone"),
        pytest.param("seatbid.bid", None, "value not found for path: seatbid.bid", id="seatbid.bid-alone"),
        pytest.param("seatbid.ext", None, "value not found for path: seatbid.ext", id="seatbid.ext-alone"),
        pytest.param("ext", None, "value not found for path: ext", id="ext-alone"),
        pytest.param("ext.prebid.ext.x", None, "value not found for path: prebid.", id="separator-twice"),
        pytest.param("ext.a", "resp", None, id="response-ext"),
        pytest.param("ext.missing", None, "value not found for path: missing", id="response-ext-missing"),
    ],
)
def test_response_path_dispatch(path: str, expected: str | None, error: str | None) -> None:
    target = response_target("k", path)
    response = {"ext": {"a": "resp", "prebid": {"ext": {"x": "no"}}}}
    if error is None:
        assert response_value(target, CACHED_BID, None, response) == expected
    else:
        with fails_with(error):
            response_value(target, CACHED_BID, None, response)


# --- respdataprocessor_test.go TestGetValueFromResp, TestGetRespData ---


@pytest.mark.parametrize(
    ("field", "response", "expected"),
    [
        # TestGetValueFromResp
        pytest.param("cur", {"cur": "UAH"}, "UAH", id="resp-existing"),
        pytest.param("id", {}, "", id="resp-empty"),
        pytest.param("test", {}, None, id="resp-non-existing"),
        # TestGetRespData
        pytest.param("id", {"id": "testId"}, "testId", id="id"),
        pytest.param("bidid", {"bidid": "testBidId"}, "testBidId", id="bidid"),
        pytest.param("cur", {"cur": "UAH"}, "UAH", id="cur"),
        pytest.param("customdata", {"customdata": "testCustomdata"}, "testCustomdata", id="customdata"),
        pytest.param("nbr", {"nbr": 5}, "5", id="nbr"),
        pytest.param("test", {"id": "testId"}, None, id="non-existing"),
        # TestResponseObjectStructure's fields when absent (Go's zero values; nbr's Val() is 0)
        pytest.param("nbr", {}, "0", id="nbr-absent"),
        pytest.param("bidid", {}, "", id="bidid-absent"),
        pytest.param("seatbid", {"seatbid": []}, None, id="seatbid-is-not-a-field"),
    ],
)
def test_get_resp_data(field: str, response: dict[str, Any], expected: str | None) -> None:
    if expected is None:
        with fails_with(f"key not found for field in bid response: {field}"):
            response_field(response, field)
    else:
        assert response_field(response, field) == expected


# --- adservertargeting_test.go TestExtractAdServerTargeting ---


def test_extract_ad_server_targeting() -> None:
    collected, warnings = collect(full_request(), AMP_QUERY)
    assert collected is not None
    assert messages(warnings) == [
        "incorrect value type for path: imp.ext.prebid.test, value can only be string or number",
        "incorrect value type for path: ext.prebid.targeting.includebrandcategory, value can only be string or number",
    ]
    assert collected.request_values == {
        "hb_amp_param": "testAmpKey",
        "hb_req_imp_ext_bidder_param": {"imp1": "111", "imp2": "222", "imp3": "333"},
        "hb_req_imp_param": {"imp1": "10", "imp2": "20", "imp3": "30"},
        "hb_req_user_param": "2000",
        "hb_static_thing": "test-static-value",
    }
    targets = collected.response_targets
    assert len(targets) == 4
    assert (targets[0].key, targets[0].has_macro, targets[0].path) == (
        "{{BIDDER}}_custom1", True, "seatbid.bid.ext.custom1")
    assert (targets[1].key, targets[1].has_macro, targets[1].path) == ("custom2", False, "seatbid.bid.ext.custom2")


# --- adservertargeting_test.go TestResolveAdServerTargeting ---


def expected_resolved(foo: str, price: str, seat_data: str, imp_value: str, bidder: str,
                      test_input: int | None) -> dict[str, Any]:
    targeting: dict[str, Any] = {
        f"{bidder}_custom6": "true",
        "custom2": foo,
        "custom3": price,
        "custom4": seat_data,
        "custom5": "USD",
        "custom6": "testResponse",
        "custom7": "testBidId",
        "custom8": "testCustomData",
        "custom9": "2",
        "hb_amp_param": "testAmpKey",
        "hb_imp_param": imp_value,
    }
    if test_input is not None:
        targeting["testInput"] = test_input
    return {"prebid": {"foo": foo, "targeting": targeting}}


def test_resolve_ad_server_targeting() -> None:
    response = two_seat_response(cur="USD", bidid="testBidId", customdata="testCustomData", nbr=2)
    collected = Collected(
        request_values={"hb_amp_param": "testAmpKey", "hb_imp_param": {"imp1": "111", "imp2": "222", "imp3": "333"}},
        response_targets=[
            response_target("{{BIDDER}}_custom1", "seatbid.bid.cat"),
            response_target("custom2", "seatbid.bid.ext.prebid.foo"),
            response_target("custom3", "seatbid.bid.price"),
            response_target("custom4", "seatbid.ext.testData.foo"),
            response_target("custom5", "cur"),
            response_target("custom6", "id"),
            response_target("custom7", "bidid"),
            response_target("custom8", "customdata"),
            response_target("custom9", "nbr"),
            response_target("{{BIDDER}}_custom6", "ext.prebid.seatExt"),
        ],
    )
    warnings: list[dict[str, Any]] = []
    resolve(collected, response, warnings, None)
    wrong_type = "incorrect value type for path: cat, value can only be string or number for bidder: {}, bid id: {}"
    assert messages(warnings) == [
        wrong_type.format(seat, bid_id)
        for seat, bid_id in [("appnexus", "bidA1"), ("appnexus", "bidA2"), ("appnexus", "bidA3"),
                             ("rubicon", "bidR1"), ("rubicon", "bidR2"), ("rubicon", "bidR3")]
    ]
    assert [len(seat["bid"]) for seat in response["seatbid"]] == [3, 3]
    assert bid_exts(response) == [
        expected_resolved("bar1", "10", "barApn", "111", "appnexus", None),
        expected_resolved("bar2", "20", "barApn", "222", "appnexus", None),
        expected_resolved("bar3", "30", "barApn", "333", "appnexus", None),
        expected_resolved("bar11", "11", "barRubicon", "111", "rubicon", 111),
        expected_resolved("bar22", "22", "barRubicon", "222", "rubicon", 222),
        expected_resolved("bar33", "33", "barRubicon", "333", "rubicon", 333),
    ]


# --- adservertargeting_test.go TestResolveAdServerTargetingForMultiBidAndOneImp ---


def test_resolve_ad_server_targeting_for_multi_bid_and_one_imp() -> None:
    response = {
        "id": "testResponse",
        "cur": "USD",
        "seatbid": [{
            "seat": "appnexus",
            "bid": [bid(f"bidA{n}", "imp1", 10.0 * n, [f"cat{n}1", f"cat{n}2"], {"prebid": {"foo": f"bar{n}"}})
                    for n in (1, 2, 3)],
            "ext": {"testData": {"foo": "barApn"}},
        }],
        "ext": {"prebid": {"seatExt": "true"}},
    }
    collected = Collected({}, [response_target("custom_attribute", "seatbid.bid.ext.prebid.foo")])
    warnings: list[dict[str, Any]] = []
    resolve(collected, response, warnings, 11)
    assert warnings == []
    assert response["id"] == "testResponse"
    assert bid_exts(response) == [
        {"prebid": {"foo": f"bar{n}", "targeting": {"custom_attr": f"bar{n}"}}} for n in (1, 2, 3)
    ]


# --- adservertargeting_test.go TestProcessAdServerTargetingFull ---


def expected_full(n: int, custom1: int, custom2: str, foo: str, bidder: str, test_input: int | None) -> dict[str, Any]:
    targeting: dict[str, Any] = {
        f"{bidder}_custom1": str(custom1),
        f"{bidder}_imp": f"imp{n}",
        "custom2": custom2,
        "hb_amp_param": "testAmpKey",
        "hb_req_imp_ext_bidde": str(111 * n),
        "hb_req_imp_param": str(10 * n),
        "hb_req_user_param": "2000",
        "hb_static_thing": "test-static-value",
        "seat_cur": "USD",
    }
    if test_input is not None:
        targeting["testInput"] = test_input
    return {"custom1": custom1, "custom2": custom2, "prebid": {"foo": foo, "targeting": targeting}}


def full_response_bid_exts() -> list[dict[str, Any]]:
    exts: list[dict[str, Any]] = []
    for n, (c1, c2) in enumerate([(1111, "a1111"), (2222, "a2222"), (3333, "a3333")], 1):
        exts.append({"prebid": {"foo": f"bar{n}"}, "custom1": c1, "custom2": c2})
    for n, (c1, c2) in enumerate([(4444, "r4444"), (5555, "r5555"), (6666, "r6666")], 1):
        exts.append({"custom1": c1, "custom2": c2, "prebid": {
            "foo": f"bar{n}{n}", "targeting": {"hb_amp_param": f"testInputKey{n}", "testInput": 111 * n}}})
    return exts


def test_process_ad_server_targeting_full() -> None:
    response = two_seat_response(full_response_bid_exts(), cur="USD")
    warnings = apply_ad_server_targeting(full_request(), response, AMP_QUERY, 0)
    assert len(response["seatbid"]) == 2
    assert messages(warnings) == [
        "incorrect value type for path: imp.ext.prebid.test, value can only be string or number",
        "incorrect value type for path: ext.prebid.targeting.includebrandcategory, value can only be string or number",
    ]
    assert response["ext"]["warnings"]["general"] == warnings
    assert bid_exts(response) == [
        expected_full(1, 1111, "a1111", "bar1", "appnexus", None),
        expected_full(2, 2222, "a2222", "bar2", "appnexus", None),
        expected_full(3, 3333, "a3333", "bar3", "appnexus", None),
        expected_full(1, 4444, "r4444", "bar11", "rubicon", 111),
        expected_full(2, 5555, "r5555", "bar22", "rubicon", 222),
        expected_full(3, 6666, "r6666", "bar33", "rubicon", 333),
    ]


# --- adservertargeting_test.go TestProcessAdServerTargetingWarnings ---


def test_process_ad_server_targeting_warnings() -> None:
    response = two_seat_response()
    del response["ext"]
    apply_ad_server_targeting(full_request(with_values=False), response, {"data-override-height": "400"})
    assert [len(seat["bid"]) for seat in response["seatbid"]] == [3, 3]
    warnings = response["ext"]["warnings"]["general"]
    expected = [
        "value not found for path: ext.prebid.amp.data.ampkey",
        "value not found for path: imp.ext.prebid.test",
        "value not found for path: imp.ext.bidder1.tagid",
        "value not found for path: imp.bidfloor",
        "incorrect value type for path: ext.prebid.targeting.includebrandcategory, value can only be string or number",
        "value not found for path: user.yob",
    ]
    for seat, letter in (("appnexus", "A"), ("rubicon", "R")):
        for n in (1, 2, 3):
            for field in ("custom1", "custom2"):
                expected.append(f"value not found for path: ext.{field} for bidder: {seat}, bid id: bid{letter}{n}")
    assert len(warnings) == 18
    assert messages(warnings) == expected


# --- Apply around the PBS-Go tables ---


def one_bid_response(**fields: Any) -> dict[str, Any]:
    return {
        "id": "resp",
        "seatbid": [{"seat": "appnexus", "bid": [{"id": "b1", "impid": "imp1", "price": 1.5, "ext": {
            "prebid": {"type": "banner", "targeting": {"hb_pb": "1.50"}, "meta": {"adaptercode": "appnexus"}}}}]}],
        "cur": "USD",
        **fields,
    }


def request_with(*entries: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"id": "req", "imp": [{"id": "imp1", "tagid": "slot-1"}], **fields,
            "ext": {"prebid": {"adservertargeting": list(entries)}}}


def first_targeting(response: dict[str, Any]) -> dict[str, Any]:
    return response["seatbid"][0]["bid"][0]["ext"]["prebid"]["targeting"]


@pytest.mark.parametrize(
    ("entries", "query", "targeting", "warnings"),
    [
        pytest.param([{"key": "k", "source": "STATIC", "value": "v"}], None, {"k": "v"}, [], id="source-any-case"),
        pytest.param([{"key": "k", "source": "bidrequest", "value": "imp.tagid"}], None, {"k": "slot-1"}, [],
                     id="imp-value"),
        pytest.param([{"key": "k", "source": "bidrequest", "value": "ext.prebid.amp.data.p"}], None, {}, [
            "value not found for path: ext.prebid.amp.data.p"], id="amp-data-off-amp"),
        pytest.param([{"key": "k", "source": "bidrequest", "value": "ext.prebid.amp.data.p"}], {"p": "q"}, {"k": "q"},
                     [], id="amp-data"),
        pytest.param([{"key": "k", "source": "static", "value": "1"}, {"key": "k", "source": "static", "value": "2"}],
                     None, {"k": "2"}, [], id="same-key-last-wins"),
        pytest.param([{"key": "k", "source": "static", "value": "1"},
                      {"key": "k", "source": "bidrequest", "value": "nope"}],
                     None, {"k": "1"}, ["value not found for path: nope"], id="failed-lookup-keeps-earlier-value"),
        pytest.param([{"key": "k", "source": "bidresponse", "value": "seatbid.bid.impid"},
                      {"key": "k", "source": "static", "value": "s"}],
                     None, {"k": "imp1"}, [], id="response-value-over-request-value"),
        pytest.param([{"key": "hb_pb", "source": "static", "value": "9.99"}], None, {"hb_pb": "9.99"}, [],
                     id="overrides-auction-key"),
        pytest.param([{"key": "k", "source": "bidresponse", "value": "ext.prebid.auctiontimestamp"}], None,
                     {"k": "123"}, [], id="response-ext-as-passed"),
        pytest.param([{"key": "{{BIDDER}}_price", "source": "bidresponse", "value": "seatbid.bid.price"}], None,
                     {"appnexus_price": "1.5"}, [], id="bidder-macro"),
        pytest.param([{"key": "k", "source": "nope", "value": "v"}, {"key": "ok", "source": "static", "value": "v"}],
                     None, {"ok": "v"}, ["Incorrect source for the ad server targeting object at index 0"],
                     id="invalid-entry-skipped"),
    ],
)
def test_apply(entries: list[dict[str, Any]], query: Any, targeting: dict[str, str], warnings: list[str]) -> None:
    response = one_bid_response(ext={"prebid": {"auctiontimestamp": 123}})
    actual = apply_ad_server_targeting(request_with(*entries), response, query)
    assert messages(actual) == warnings
    assert first_targeting(response) == {"hb_pb": "1.50", **targeting}
    assert response["seatbid"][0]["bid"][0]["ext"]["prebid"]["type"] == "banner"
    if warnings:
        assert response["ext"]["warnings"]["general"] == actual
    else:
        assert "warnings" not in response["ext"]


def test_apply_appends_after_existing_warnings() -> None:
    earlier = {"code": 10002, "message": "debug turned off for account"}
    response = one_bid_response(ext={"warnings": {"general": [earlier], "appnexus": [earlier]}})
    apply_ad_server_targeting(request_with({"key": "k", "source": "x", "value": "v"}), response, None)
    assert response["ext"]["warnings"] == {
        "general": [
            earlier,
            {"code": 10007, "message": "Incorrect source for the ad server targeting object at index 0"},
        ],
        "appnexus": [earlier],
    }


def test_apply_with_malformed_adservertargeting_warns_once_and_leaves_bids() -> None:
    response = one_bid_response()
    before = copy.deepcopy(response["seatbid"])
    request = {"id": "req", "imp": [], "ext": {"prebid": {"adservertargeting": {"key": "k"}}}}
    warnings = apply_ad_server_targeting(request, response, None)
    assert messages(warnings) == ["unable to extract adServerTargeting from request"]
    assert response["seatbid"] == before


def test_apply_without_bids_keeps_request_warnings() -> None:
    response = {"id": "resp", "ext": {}}
    warnings = apply_ad_server_targeting(request_with({"key": "k", "source": "bidrequest", "value": "app"}), response,
                                         None)
    assert messages(warnings) == ["value not found for path: app"]
    assert response == {"id": "resp", "ext": {"warnings": {"general": warnings}}}


def test_each_bid_reads_its_own_fields_even_with_a_repeated_bid_id() -> None:
    # PBS-Go's bidsCache keys bids by seat and id: a second bid with the same id would read the first one's
    # fields (TestBidsCache "valid bid in cache"). Here every bid reads itself.
    response = one_bid_response()
    seat = response["seatbid"][0]
    seat["bid"].append({"id": "b1", "impid": "imp2", "price": 2.0, "ext": {"prebid": {"type": "banner"}}})
    request = request_with({"key": "imp", "source": "bidresponse", "value": "seatbid.bid.impid"})
    apply_ad_server_targeting(request, response, None)
    assert [b["ext"]["prebid"]["targeting"]["imp"] for b in seat["bid"]] == ["imp1", "imp2"]


@pytest.mark.parametrize(
    ("prebid", "expected"),
    [
        pytest.param(None, False, id="no-prebid"),
        pytest.param({}, False, id="no-adservertargeting"),
        pytest.param({"adservertargeting": []}, False, id="empty"),
        pytest.param({"adservertargeting": None}, False, id="null"),
        pytest.param({"adservertargeting": [{"key": "k"}]}, True, id="entries"),
        pytest.param({"adservertargeting": "x"}, True, id="malformed-still-warns"),
        pytest.param([1], False, id="prebid-not-an-object"),
    ],
)
def test_wants_ad_server_targeting(prebid: Any, expected: bool) -> None:
    assert wants_ad_server_targeting(prebid) is expected
