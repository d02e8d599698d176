"""Price granularity: every §6 D price-bucket vector, parsing (PBS-Go SetDefaults) and the error texts.

Bucketing is decimal-exact (DECISIONS.md "Price buckets"); the property tests compare it with an exact
``Fraction`` computation written here, independent of the module's scaled integers.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbserver.auction.response.pricegranularity import (
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


HUGE = PriceGranularity(3, (PriceRange(0.0, 1e12, 0.001),))


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
    # Decimal-exact where PBS-Go's float64 arithmetic is not (PBS-Go's value in the comment).
    ("2.13-high-exact-multiple", 2.13, HIGH, "down", None, "2.13"),  # PBS-Go 2.12
    ("2.09-high-exact-multiple", 2.09, HIGH, "down", None, "2.09"),  # PBS-Go 2.08
    ("2.17-high", 2.17, HIGH, "down", None, "2.17"),
    ("0.30-medium-exact-multiple", 0.30, MEDIUM, "down", None, "0.30"),  # PBS-Go 0.20
    ("0.70-medium-exact-multiple", 0.70, MEDIUM, "down", None, "0.70"),  # PBS-Go 0.60
    ("1.20-medium-exact-multiple", 1.20, MEDIUM, "down", None, "1.20"),  # PBS-Go 1.10
    ("4.35-auto-exact-multiple", 4.35, AUTO, "down", None, "4.35"),  # PBS-Go 4.30
    ("3.15-dense-exact-multiple-above-min", 3.15, DENSE, "down", None, "3.15"),  # PBS-Go 3.10
    ("0.07-high-up-exact-multiple", 0.07, HIGH, "up", None, "0.07"),  # PBS-Go 0.08
    ("0.15-medium-true-exact-half", 0.15, MEDIUM, "true", None, "0.20"),  # PBS-Go 0.10
    ("1.875-auto-true-half-away", 1.875, AUTO, "true", None, "1.90"),
    ("0.30-precision-minus-1", 0.30, one_range(-1, 0.1), "down", None, "0.3"),  # PBS-Go 0.2
    ("1.20-precision-15", 1.20, one_range(15, 0.1), "down", None, "1.200000000000000"),
    # CPMs that take the repr path: many decimals, the doubles either side of 1.2, e-notation.
    ("converted-cpm-medium", 1.8734567891234, MEDIUM, "down", None, "1.80"),
    ("double-above-1.2-medium", 1.2000000000000002, MEDIUM, "down", None, "1.20"),
    ("double-below-1.2-medium", 1.1999999999999997, MEDIUM, "down", None, "1.10"),
    ("e-notation-cpm-and-increment", 3e-05, one_range(5, 1e-05), "down", None, "0.00003"),
    ("negative-zero", -0.0, MEDIUM, "down", None, "0.00"),
    # A CPM whose double is coarser than 10**-6: the fast path must not read it with 6 decimals.
    ("huge-range-exact-multiple", 229944532028.507, HUGE, "down", None, "229944532028.507"),
    (
        "infinite-cpm-infinite-max",
        math.inf,
        PriceGranularity(2, (PriceRange(0.0, math.inf, 0.1),)),
        "down",
        None,
        "+Inf",
    ),
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


PROPERTY_NAMES = ("low", "med", "medium", "high", "auto", "dense")
DETERMINISTIC_MODES = ("down", "up", "true")
CENTS = [c / 100 for c in range(1, 5001)]  # int / int: the double nearest to each x.yy


def go_format(value: Fraction, precision: int) -> str:
    """Go's ``FormatFloat`` of the double nearest to ``value``: the exact binary value, rounded half-even."""
    double = float(value)
    if precision < 0:
        return format_float(double, precision)
    with localcontext() as ctx:
        ctx.prec = 1000
        return format(Decimal(double).quantize(Decimal(1).scaleb(-precision), rounding=ROUND_HALF_EVEN), "f")


def reference_bucket(cpm: float, granularity: PriceGranularity, rounding: str) -> str:
    """PBS-Go's GetPriceBucket on the decimals the doubles' reprs spell, in exact rational arithmetic."""
    price = Fraction(repr(cpm))
    top = max((r.max for r in granularity.ranges), default=0.0)
    if price > Fraction(repr(top)):
        return go_format(Fraction(repr(top)), granularity.precision)
    chosen = None
    for r in granularity.ranges:  # the last range holding the price wins
        if Fraction(repr(r.min)) <= price <= Fraction(repr(r.max)):
            chosen = r
    if chosen is None or chosen.increment <= 0:
        return ""
    low, increment = Fraction(repr(chosen.min)), Fraction(repr(chosen.increment))
    quotient = (price - low) / increment
    if rounding == "up":
        n = math.ceil(quotient)
    elif rounding == "true":
        n = math.floor(quotient + Fraction(1, 2))
    else:
        n = math.floor(quotient)
    return go_format(n * increment + low, granularity.precision)


def custom(precision: int, *ranges: tuple[float, float]) -> PriceGranularity:
    return parse_granularity({"precision": precision, "ranges": [{"max": a, "increment": b} for a, b in ranges]})


# Precision 0..3, odd increments, and range mins (the previous max) off the increment grid.
CUSTOMS = {
    "p0-0.75-2.5": custom(0, (10, 0.75), (50, 2.5)),
    "p1-0.15-0.35": custom(1, (3, 0.15), (20, 0.35)),
    "p2-0.125-0.333": custom(2, (2.5, 0.125), (12.5, 0.333)),
    "p3-0.007-0.123-1.1": custom(3, (1, 0.007), (7.77, 0.123), (40, 1.1)),
    "p2-custom1": CUSTOM1,
    "p2-custom2": CUSTOM2,
}


@pytest.mark.parametrize("name", PROPERTY_NAMES)
def test_every_cent_matches_exact_arithmetic_named(name: str) -> None:
    granularity = parse_granularity(name)
    for rounding in DETERMINISTIC_MODES:
        wrong = [
            (cpm, got, want)
            for cpm in CENTS
            if (got := price_bucket(cpm, granularity, rounding))
            != (want := reference_bucket(cpm, granularity, rounding))
        ]
        assert wrong[:5] == [], rounding


@pytest.mark.parametrize("name", list(CUSTOMS))
def test_every_cent_matches_exact_arithmetic_custom(name: str) -> None:
    granularity = CUSTOMS[name]
    for rounding in DETERMINISTIC_MODES:
        wrong = [
            (cpm, got, want)
            for cpm in CENTS
            if (got := price_bucket(cpm, granularity, rounding))
            != (want := reference_bucket(cpm, granularity, rounding))
        ]
        assert wrong[:5] == [], rounding


def test_every_exact_multiple_is_its_own_bucket() -> None:
    # The decision's rule, stated directly: k increments above min give exactly that price, in every mode.
    for granularity in (LOW, MEDIUM, HIGH, AUTO, DENSE):
        for r in granularity.ranges:
            low, increment = Fraction(repr(r.min)), Fraction(repr(r.increment))
            k = 0
            while (price := low + k * increment) <= Fraction(repr(r.max)):
                for rounding in ("down", "up", "true", "timesplit"):
                    assert price_bucket(float(price), granularity, rounding) == f"{float(price):.2f}"
                k += 1


@pytest.mark.parametrize("name", ["medium", "auto", "dense"])
def test_timesplit_is_down_or_up_by_rand(name: str) -> None:
    granularity = parse_granularity(name)
    for cpm in [*CENTS[::7], 1.8734567891234, 1.2000000000000002]:
        assert price_bucket(cpm, granularity, "timesplit", DOWN_RAND) == price_bucket(cpm, granularity, "down")
        assert price_bucket(cpm, granularity, "timesplit", UP_RAND) == price_bucket(cpm, granularity, "up")


def decimal_floats(max_places: int) -> st.SearchStrategy[float]:
    """Doubles read from JSON decimals of up to ``max_places`` places, 0..60."""
    return st.integers(0, max_places).flatmap(
        lambda places: st.integers(0, 60 * 10**places).map(lambda n: n / 10**places)
    )


@st.composite
def granularities(draw: st.DrawFn) -> PriceGranularity:
    precision = draw(st.integers(0, 4))
    maxes = sorted(set(draw(st.lists(decimal_floats(3).filter(lambda v: v > 0), min_size=1, max_size=4))))
    increments = [draw(decimal_floats(4).filter(lambda v: v > 0)) for _ in maxes]
    return custom(precision, *zip(maxes, increments, strict=True))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    cpm=st.one_of(decimal_floats(8), st.floats(0, 70, allow_nan=False)),
    granularity=st.one_of(st.sampled_from([LOW, MEDIUM, HIGH, AUTO, DENSE]), granularities()),
    rounding=st.sampled_from(DETERMINISTIC_MODES),
)
def test_any_price_matches_exact_arithmetic(cpm: float, granularity: PriceGranularity, rounding: str) -> None:
    assert price_bucket(cpm, granularity, rounding) == reference_bucket(cpm, granularity, rounding)


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
