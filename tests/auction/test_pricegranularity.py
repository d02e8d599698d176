"""Price granularity: every §6 D price-bucket vector, parsing (PBS-Go SetDefaults) and the error texts."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from hbserver.auction.pricegranularity import (
    DEFAULT_GRANULARITY,
    GRANULARITY_AUTO,
    GRANULARITY_DENSE,
    GRANULARITY_HIGH,
    GRANULARITY_LOW,
    GRANULARITY_MEDIUM,
    GranularityError,
    PriceGranularity,
    PriceRange,
    format_float,
    parse_granularity,
    parse_media_type_granularity,
    price_bucket,
    select_granularity,
)

LOW = parse_granularity("low")
MEDIUM = parse_granularity("medium")
HIGH = parse_granularity("high")
AUTO = parse_granularity("auto")
DENSE = parse_granularity("dense")
CUSTOM1 = parse_granularity({"precision": 2, "ranges": [{"max": 5, "increment": 0.03}, {"max": 10, "increment": 0.1}]})
CUSTOM2 = parse_granularity(
    {"precision": 2, "ranges": [{"min": 0, "max": 1.5, "increment": 1.0}, {"min": 1.5, "max": 10, "increment": 1.2}]}
)


def one_range(precision: int, increment: float) -> PriceGranularity:
    return PriceGranularity(precision, (PriceRange(0.0, 5.0, increment),))


def fixed(value: float) -> Callable[[], float]:
    return lambda: value


DOWN_RAND = fixed(0.0)  # timesplit rounds down when rand() < 0.5
UP_RAND = fixed(0.99)

# (id, cpm, granularity, rounding, rand, expected)
BUCKETS = [
    # The main table: 1.87, 5.72 and 10 across the named granularities and custom1/custom2.
    ("1.87-low", 1.87, LOW, "down", None, "1.50"),
    ("1.87-medium", 1.87, MEDIUM, "down", None, "1.80"),
    ("1.87-high", 1.87, HIGH, "down", None, "1.87"),
    ("1.87-auto", 1.87, AUTO, "down", None, "1.85"),
    ("1.87-dense", 1.87, DENSE, "down", None, "1.87"),
    ("1.87-custom1", 1.87, CUSTOM1, "down", None, "1.86"),
    ("1.87-custom2", 1.87, CUSTOM2, "down", None, "1.50"),
    ("5.72-low", 5.72, LOW, "down", None, "5.00"),
    ("5.72-medium", 5.72, MEDIUM, "down", None, "5.70"),
    ("5.72-high", 5.72, HIGH, "down", None, "5.72"),
    ("5.72-auto", 5.72, AUTO, "down", None, "5.70"),
    ("5.72-dense", 5.72, DENSE, "down", None, "5.70"),
    ("5.72-custom1", 5.72, CUSTOM1, "down", None, "5.70"),
    ("5.72-custom2", 5.72, CUSTOM2, "down", None, "5.10"),
    ("10-custom1", 10.0, CUSTOM1, "down", None, "10.00"),
    ("10-custom2", 10.0, CUSTOM2, "down", None, "9.90"),
    # Other bucket cases.
    ("zero-low", 0.0, LOW, "down", None, "0.00"),
    ("negative", -1.876, MEDIUM, "down", None, ""),
    ("max-float-low", sys.float_info.max, LOW, "down", None, "5.00"),
    ("precision-minus-1", 1.876, one_range(-1, 0.05), "down", None, "1.85"),
    ("precision-0", 1.876, one_range(0, 0.05), "down", None, "2"),
    ("precision-15", 1.876, one_range(15, 0.05), "down", None, "1.850000000000000"),
    ("increment-negative", 1.876, one_range(2, -0.05), "down", None, ""),
    ("increment-zero", 1.876, one_range(2, 0.0), "down", None, ""),
    ("increment-1.877", 1.876, one_range(2, 1.877), "down", None, "0.00"),
    # Rounding modes (account bid_rounding).
    ("auto-1.87-down", 1.87, AUTO, "down", None, "1.85"),
    ("auto-1.88-down", 1.88, AUTO, "down", None, "1.85"),
    ("auto-1.87-up", 1.87, AUTO, "up", None, "1.90"),
    ("auto-1.88-up", 1.88, AUTO, "up", None, "1.90"),
    ("auto-1.87-true", 1.87, AUTO, "true", None, "1.85"),
    ("auto-1.88-true", 1.88, AUTO, "true", None, "1.90"),
    ("auto-1.87-timesplit-down", 1.87, AUTO, "timesplit", DOWN_RAND, "1.85"),
    ("auto-1.87-timesplit-up", 1.87, AUTO, "timesplit", UP_RAND, "1.90"),
    ("auto-1.88-timesplit-down", 1.88, AUTO, "timesplit", DOWN_RAND, "1.85"),
    ("auto-1.88-timesplit-up", 1.88, AUTO, "timesplit", UP_RAND, "1.90"),
    ("auto-1.88-invalid-mode", 1.88, AUTO, "sideways", None, "1.85"),
    ("auto-1.88-empty-mode", 1.88, AUTO, "", None, "1.85"),
    # Extra vectors computed with Go's float semantics.
    ("12.34-auto", 12.34, AUTO, "down", None, "12.00"),
    ("3.57-dense", 3.57, DENSE, "down", None, "3.55"),
    ("9.99-dense", 9.99, DENSE, "down", None, "9.50"),
    ("5.0-auto-boundary", 5.0, AUTO, "down", None, "5.00"),
    ("0.71-medium", 0.71, MEDIUM, "down", None, "0.70"),
    ("0.61-medium", 0.61, MEDIUM, "down", None, "0.60"),
    ("0.51-medium", 0.51, MEDIUM, "down", None, "0.50"),
    ("2.13-high-float-quirk", 2.13, HIGH, "down", None, "2.12"),
    ("2.09-high-float-quirk", 2.09, HIGH, "down", None, "2.08"),
    ("2.17-high", 2.17, HIGH, "down", None, "2.17"),
    ("0.30-medium-float-quirk", 0.30, MEDIUM, "down", None, "0.20"),
    ("0.70-medium-float-quirk", 0.70, MEDIUM, "down", None, "0.60"),
    ("above-max-medium", 21.0, MEDIUM, "down", None, "20.00"),
    ("exactly-max-medium", 20.0, MEDIUM, "down", None, "20.00"),
    ("nan", float("nan"), MEDIUM, "down", None, ""),
]


@pytest.mark.parametrize(
    ("cpm", "granularity", "rounding", "rand", "expected"),
    [row[1:] for row in BUCKETS],
    ids=[row[0] for row in BUCKETS],
)
def test_price_bucket(
    cpm: float, granularity: PriceGranularity, rounding: str, rand: Callable[[], float] | None, expected: str
) -> None:
    if rand is None:
        assert price_bucket(cpm, granularity, rounding) == expected
    else:
        assert price_bucket(cpm, granularity, rounding, rand) == expected


def test_timesplit_uses_rand_for_each_bid() -> None:
    seen = {price_bucket(1.87, AUTO, "timesplit", fixed(r)) for r in (0.0, 0.49, 0.5, 0.99)}
    assert seen == {"1.85", "1.90"}


# (id, bid type, expected): price 5.0, main medium, mediatypepricegranularity video = custom2.
MEDIA_TYPES = [
    ("video-override", "video", "3.90"),
    ("banner-no-override", "banner", "5.00"),
    ("audio-always-main", "audio", "5.00"),
    ("type-unknown", None, "5.00"),
]


@pytest.mark.parametrize(("bid_type", "expected"), [r[1:] for r in MEDIA_TYPES], ids=[r[0] for r in MEDIA_TYPES])
def test_media_type_granularity(bid_type: str | None, expected: str) -> None:
    by_type = parse_media_type_granularity(
        {"video": {"precision": 2, "ranges": [{"max": 1.5, "increment": 1.0}, {"max": 10, "increment": 1.2}]}}
    )
    assert price_bucket(5.0, select_granularity(bid_type, MEDIUM, by_type)) == expected


def test_banner_only_override_gives_main_for_video() -> None:
    by_type = parse_media_type_granularity({"banner": "low", "audio": "high", "native": None})
    assert set(by_type) == {"banner"}
    assert price_bucket(5.0, select_granularity("video", MEDIUM, by_type)) == "5.00"
    assert select_granularity("banner", MEDIUM, by_type) is GRANULARITY_LOW
    assert parse_media_type_granularity(None) == {}


# (id, value, expected)
PARSES = [
    ("absent", None, GRANULARITY_MEDIUM),
    ("low", "low", GRANULARITY_LOW),
    ("med", "med", GRANULARITY_MEDIUM),
    ("medium", "medium", GRANULARITY_MEDIUM),
    ("high", "high", GRANULARITY_HIGH),
    ("auto", "auto", GRANULARITY_AUTO),
    ("dense", "dense", GRANULARITY_DENSE),
    ("empty-object", {}, GRANULARITY_MEDIUM),
    ("no-ranges-ignores-precision", {"precision": -1}, GRANULARITY_MEDIUM),
    ("null-ranges", {"precision": 3, "ranges": None}, GRANULARITY_MEDIUM),
    (
        "precision-defaults-to-2-and-min-normalized",
        {"ranges": [{"min": 3, "max": 5, "increment": 0.5}, {"max": 8, "increment": 1}]},
        PriceGranularity(2, (PriceRange(0.0, 5.0, 0.5), PriceRange(5.0, 8.0, 1.0))),
    ),
    (
        "null-precision-defaults",
        {"precision": None, "ranges": [{"max": 5, "increment": 0.5}]},
        PriceGranularity(2, (PriceRange(0.0, 5.0, 0.5),)),
    ),
    (
        "precision-0-and-15",
        {"precision": 15, "ranges": [{"max": 1, "increment": 0.25}]},
        PriceGranularity(15, (PriceRange(0.0, 1.0, 0.25),)),
    ),
]


@pytest.mark.parametrize(("value", "expected"), [r[1:] for r in PARSES], ids=[r[0] for r in PARSES])
def test_parse_granularity(value: object, expected: PriceGranularity) -> None:
    assert parse_granularity(value) == expected


UNKNOWN_NAME = (
    'Price granularity error: unknown price granularity "{}"; '
    "expected one of low, med, medium, high, auto, dense or a custom object"
)

# (id, value, exact error text)
ERRORS = [
    (
        "precision-negative",
        {"precision": -1, "ranges": [{"max": 5, "increment": 0.1}]},
        "Price granularity error: precision must be non-negative",
    ),
    (
        "precision-too-big",
        {"precision": 16, "ranges": [{"max": 5, "increment": 0.1}]},
        "Price granularity error: precision of more than 15 significant figures is not supported",
    ),
    (
        "ranges-out-of-order",
        {"precision": 2, "ranges": [{"min": 1, "max": 2, "increment": 0.2}, {"min": 0, "max": 1, "increment": 0.5}]},
        'Price granularity error: range list must be ordered with increasing "max"',
    ),
    (
        "ranges-equal-max",
        {"ranges": [{"max": 2, "increment": 0.2}, {"max": 2, "increment": 0.5}]},
        'Price granularity error: range list must be ordered with increasing "max"',
    ),
    (
        "max-zero",
        {"ranges": [{"max": 0, "increment": 0.1}]},
        'Price granularity error: range list must be ordered with increasing "max"',
    ),
    (
        "max-missing",
        {"ranges": [{"increment": 0.1}]},
        'Price granularity error: range list must be ordered with increasing "max"',
    ),
    (
        "increment-negative",
        {"precision": 2, "ranges": [{"min": 0, "max": 1, "increment": -0.1}]},
        "Price granularity error: increment must be a nonzero positive number",
    ),
    (
        "increment-zero",
        {"ranges": [{"max": 1, "increment": 0}]},
        "Price granularity error: increment must be a nonzero positive number",
    ),
    (
        "increment-missing",
        {"ranges": [{"max": 1}]},
        "Price granularity error: increment must be a nonzero positive number",
    ),
    ("unknown-name", "superfine", UNKNOWN_NAME.format("superfine")),
    ("names-are-case-sensitive", "Low", UNKNOWN_NAME.format("Low")),
    ("empty-name", "", UNKNOWN_NAME.format("")),
    ("number", 5, "Price granularity error: expected a name or an object, got number"),
    ("boolean", True, "Price granularity error: expected a name or an object, got boolean"),
    ("array", [{"max": 5, "increment": 1}], "Price granularity error: expected a name or an object, got array"),
    (
        "precision-fraction",
        {"precision": 2.5, "ranges": [{"max": 5, "increment": 1}]},
        "Price granularity error: precision must be an integer, got number 2.5",
    ),
    (
        "precision-string",
        {"precision": "2", "ranges": [{"max": 5, "increment": 1}]},
        "Price granularity error: precision must be an integer, got string",
    ),
    ("ranges-not-array", {"ranges": {"max": 5}}, "Price granularity error: ranges must be an array, got object"),
    ("range-not-object", {"ranges": [5]}, "Price granularity error: ranges[0] must be an object, got number"),
    (
        "range-max-string",
        {"ranges": [{"max": 5, "increment": 1}, {"max": "9", "increment": 1}]},
        "Price granularity error: ranges[1].max must be a number, got string",
    ),
    (
        "range-min-boolean",
        {"ranges": [{"min": True, "max": 5, "increment": 1}]},
        "Price granularity error: ranges[0].min must be a number, got boolean",
    ),
    (
        "type-error-before-defaults",
        {"precision": "x"},
        "Price granularity error: precision must be an integer, got string",
    ),
]


@pytest.mark.parametrize(("value", "message"), [r[1:] for r in ERRORS], ids=[r[0] for r in ERRORS])
def test_parse_errors(value: object, message: str) -> None:
    with pytest.raises(GranularityError) as info:
        parse_granularity(value)
    assert str(info.value) == message


def test_media_type_errors() -> None:
    with pytest.raises(GranularityError, match=r"^Price granularity error: increment must be a nonzero positive"):
        parse_media_type_granularity({"video": {"ranges": [{"max": 1, "increment": 0}]}})
    with pytest.raises(GranularityError, match="mediatypepricegranularity must be an object, got string"):
        parse_media_type_granularity("low")


# (value, precision, Go's strconv.FormatFloat(value, 'f', precision, 64))
FORMATS = [
    (0.125, 2, "0.12"),  # an exact binary tie rounds to even
    (0.375, 2, "0.38"),
    (2.5, 0, "2"),
    (1.005, 2, "1.00"),  # 1.005 is below the tie in binary
    (1e21, 2, "1000000000000000000000.00"),
    (-0.0, 2, "-0.00"),
    (2.0, -1, "2"),
    (1.85, -1, "1.85"),
    (1e-7, -1, "0.0000001"),
    (1e21, -1, "1000000000000000000000"),
    (0.1 + 0.2, -1, "0.30000000000000004"),
    (float("inf"), 2, "+Inf"),
    (float("-inf"), -1, "-Inf"),
    (float("nan"), 2, "NaN"),
]


@pytest.mark.parametrize(("value", "precision", "expected"), FORMATS)
def test_format_float_matches_go(value: float, precision: int, expected: str) -> None:
    assert format_float(value, precision) == expected


def test_default_and_json_shape() -> None:
    assert DEFAULT_GRANULARITY is GRANULARITY_MEDIUM
    assert GRANULARITY_AUTO.as_json() == {
        "precision": 2,
        "ranges": [
            {"min": 0.0, "max": 5.0, "increment": 0.05},
            {"min": 5.0, "max": 10.0, "increment": 0.1},
            {"min": 10.0, "max": 20.0, "increment": 0.5},
        ],
    }
