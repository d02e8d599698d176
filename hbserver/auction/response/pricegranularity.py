"""Price granularity: parsing ``ext.prebid.targeting.pricegranularity`` and bucketing a CPM (PBS-Go).

Bucketing is decimal-exact, as Prebid.js and PBS-Java compute it (DECISIONS.md "Price buckets"): a
price that is an exact multiple of the increment lands in its own bucket (1.20 with ``medium`` gives
``"1.20"``, 2.13 with ``high`` ``"2.13"``), where PBS-Go's float64 arithmetic gives ``"1.10"`` and
``"2.12"``, so line items keyed on the publisher's price would never match. Every number (CPM, range
``min``, ``increment``) stands for the decimal its shortest ``repr`` spells. The bucket number is
taken from the float quotient only when that is provably too far from a bucket edge for float
error to matter; otherwise it is computed on scaled integers from those decimals. The bucket value
is then exact on scaled integers too. (No Decimal: this runs per bid and Decimal is slow.)
PBS-Go's range choice (last matching range; above the top, the top ``max``), rounding modes and
formatting stay: the exact bucket is formatted like Go's ``FormatFloat`` of the nearest double.
PBS-Java floors instead, which differs only when the bucket has more decimals than the precision:
1.85 at precision 0 is ``"2"`` here and in PBS-Go, ``"1"`` in PBS-Java.
Parsing follows PBS-Go's unmarshal + ``SetDefaults`` + ``validatePriceGranularity``: a legacy name,
or a custom object whose precision defaults to 2, whose ``min`` values are always rewritten to the
previous range's ``max``, and which falls back to ``medium`` when it has no ranges.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

MAX_DECIMAL_FIGURES = 15
DEFAULT_PRECISION = 2

ROUNDING_DOWN = "down"
ROUNDING_UP = "up"
ROUNDING_TRUE = "true"
ROUNDING_TIMESPLIT = "timesplit"

MEDIA_TYPES_WITH_GRANULARITY = ("banner", "video", "native")

_ERR_PRECISION_NEGATIVE = "Price granularity error: precision must be non-negative"
_ERR_PRECISION_TOO_BIG = "Price granularity error: precision of more than 15 significant figures is not supported"
_ERR_RANGES_ORDER = 'Price granularity error: range list must be ordered with increasing "max"'
_ERR_INCREMENT = "Price granularity error: increment must be a nonzero positive number"
_ERR_INCREMENT_TOO_SMALL = "Price granularity error: increment is too small for its range"


def format_float(value: float, precision: int) -> str:
    """Go's ``strconv.FormatFloat(value, 'f', precision, 64)``.

    Python's fixed formatting is also correctly rounded from the exact binary value (ties to even),
    so the digits agree. Precision -1 is Go's shortest round-trip form, always without an exponent.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if precision >= 0:
        return format(value, f".{precision}f")
    text = repr(value)
    if "e" in text:
        text = format(Decimal(text), "f")
    if text.endswith(".0"):
        text = text[:-2]
    return text


_POW10 = tuple(10**k for k in range(32))


def _pow10(k: int) -> int:
    return _POW10[k] if k < 32 else 10**k


def _digits(value: float) -> tuple[int, int]:
    """``value``'s shortest decimal (``repr``) as ``(n, k)`` meaning ``n * 10**-k`` with ``k >= 0``."""
    text = repr(value)
    if "e" in text:  # 1e-05, 1.5e+16
        mantissa, _, exponent = text.partition("e")
        whole, _, frac = mantissa.partition(".")
        places = len(frac) - int(exponent)
        n = int(whole + frac)
        return (n * _pow10(-places), 0) if places < 0 else (n, places)
    whole, _, frac = text.partition(".")
    if frac == "0":
        return int(whole), 0
    return int(whole + frac), len(frac)


# A range made ready for ``price_bucket``: (min, max, increment, eps, min and increment as integers in
# units of 10**-scale, scale, 10**scale, 10.0**scale, whether the decimal-places path is sound).
_Scan = tuple[float, float, float, float, int, int, int, int, float, bool]

_FAST_PLACES = 6  # CPMs with up to this many decimals skip repr (when the range allows it)
_INF = math.inf


def _scan_entry(r: PriceRange) -> _Scan:
    """A range's bounds and the constants ``price_bucket`` needs for it."""
    if not r.increment > 0:  # also NaN: no bucket
        return (r.min, r.max, r.increment, 0.0, 0, 0, 0, 1, 1.0, False)
    m, m_places = _digits(r.min)
    i, i_places = _digits(r.increment)
    bound = max(abs(r.min), abs(r.max))
    # The float quotient (cpm - min) / increment is within (bound / increment) * 2**-50 of the exact
    # one; eps gives that a 1024-fold margin. A quotient no nearer than eps to a whole (or, for
    # "true", a half) number gives the exact bucket number; otherwise it is computed exactly.
    eps = (bound / r.increment + 1.0) * 2.0**-40
    if not eps < 0.25:
        eps = math.inf
    # The decimal-places path reads a CPM as a decimal of `scale` places. That decimal is the CPM's
    # repr when it rounds back to the CPM and no other such decimal does: when the CPM's ulp (at
    # most the bound's) is below 10**-scale.
    scale = max(m_places, i_places)
    fast = False
    if math.isfinite(bound):
        for places in range(max(scale, _FAST_PLACES), scale - 1, -1):
            if places <= 22 and math.ulp(bound) * 10.0**places < 0.5:
                scale, fast = places, True
                break
    return (
        r.min,
        r.max,
        r.increment,
        eps,
        m * _pow10(scale - m_places),
        i * _pow10(scale - i_places),
        scale,
        _pow10(scale),
        10.0 ** min(scale, 22),
        fast,
    )


def _exact_units(cpm: float, m: int, inc: int, scale: int, div: int) -> tuple[int, int, int, int]:
    """``cpm - min``, ``min``, ``increment`` and ``10**scale`` on a decimal scale that holds all three."""
    p, places = _digits(cpm)
    if places > scale:
        factor = _pow10(places - scale)
        return p - m * factor, m * factor, inc * factor, div * factor
    return p * _pow10(scale - places) - m, m, inc, div


class GranularityError(ValueError):
    """An invalid price granularity; ``str(err)`` is the PBS-Go text."""


@dataclass(frozen=True, slots=True)
class PriceRange:
    min: float
    max: float
    increment: float


@dataclass(frozen=True, slots=True)
class PriceGranularity:
    """A granularity; the fields after ``ranges`` are derived once so ``price_bucket`` stays cheap."""

    precision: int
    ranges: tuple[PriceRange, ...]
    # Reverse order: the first hit is PBS-Go's "last matching range".
    _scan: tuple[_Scan, ...] = field(init=False, repr=False, compare=False)
    _bucket_max: float = field(init=False, repr=False, compare=False)
    _bucket_max_str: str = field(init=False, repr=False, compare=False)
    _spec: str | None = field(init=False, repr=False, compare=False)  # format() spec; None = shortest

    def __post_init__(self) -> None:
        bucket_max = 0.0
        for r in self.ranges:
            if r.max > bucket_max:
                bucket_max = r.max
        object.__setattr__(self, "_scan", tuple(_scan_entry(r) for r in reversed(self.ranges)))
        object.__setattr__(self, "_bucket_max", bucket_max)
        object.__setattr__(self, "_bucket_max_str", format_float(bucket_max, self.precision))
        object.__setattr__(self, "_spec", f".{self.precision}f" if self.precision >= 0 else None)

    def as_json(self) -> dict[str, Any]:
        """The PBS-Go JSON shape (as echoed in a resolved request)."""
        return {
            "precision": self.precision,
            "ranges": [{"min": r.min, "max": r.max, "increment": r.increment} for r in self.ranges],
        }


def _pg(*ranges: tuple[float, float, float]) -> PriceGranularity:
    return PriceGranularity(DEFAULT_PRECISION, tuple(PriceRange(a, b, c) for a, b, c in ranges))


GRANULARITY_LOW = _pg((0.0, 5.0, 0.5))
GRANULARITY_MEDIUM = _pg((0.0, 20.0, 0.1))
GRANULARITY_HIGH = _pg((0.0, 20.0, 0.01))
GRANULARITY_AUTO = _pg((0.0, 5.0, 0.05), (5.0, 10.0, 0.1), (10.0, 20.0, 0.5))
GRANULARITY_DENSE = _pg((0.0, 3.0, 0.01), (3.0, 8.0, 0.05), (8.0, 20.0, 0.5))
DEFAULT_GRANULARITY = GRANULARITY_MEDIUM

# Case-sensitive, as in PBS-Go ("Low" is not a name).
NAMED_GRANULARITIES: Mapping[str, PriceGranularity] = {
    "low": GRANULARITY_LOW,
    "med": GRANULARITY_MEDIUM,
    "medium": GRANULARITY_MEDIUM,
    "high": GRANULARITY_HIGH,
    "auto": GRANULARITY_AUTO,
    "dense": GRANULARITY_DENSE,
}


def price_bucket(
    cpm: float,
    granularity: PriceGranularity,
    rounding: str = ROUNDING_DOWN,
    rand: Callable[[], float] = random.random,
) -> str:
    """The ``hb_pb`` string for ``cpm`` (PBS-Go ``GetPriceBucket``, decimal-exact); ``""`` when no range holds it.

    ``rounding`` is the account's ``bid_rounding``: ``down`` (default; also any unknown value),
    ``up``, ``true`` (half away from zero) or ``timesplit`` (``rand() < 0.5`` rounds down, else up).
    """
    if cpm > granularity._bucket_max:
        return granularity._bucket_max_str
    for lo, hi, increment, eps, m, inc, scale, div, unit, fast in granularity._scan:
        # Comparing the doubles compares their reprs' decimals too: repr preserves order.
        if lo <= cpm <= hi:
            if not inc:
                return ""
            x = (cpm - lo) / increment  # >= 0
            if not x < _INF:  # an infinite CPM or bound (not from JSON): Go's float result
                return format_float(cpm - lo + lo, granularity.precision)
            n = int(x)
            f = x - n
            if eps < f < 1.0 - eps and (rounding != ROUNDING_TRUE or not -eps < f - 0.5 < eps):
                # The float quotient is safely inside a bucket: its whole part is the exact one.
                if rounding == ROUNDING_DOWN:
                    pass
                elif rounding == ROUNDING_UP:
                    n += 1
                elif rounding == ROUNDING_TRUE:
                    if f > 0.5:
                        n += 1
                elif rounding == ROUNDING_TIMESPLIT and rand() >= 0.5:
                    n += 1
            else:
                p = int(cpm * unit + 0.5) if fast else 0
                if fast and p / div == cpm:  # cpm is the decimal p * 10**-scale (see _scan_entry)
                    d = p - m
                else:
                    d, m, inc, div = _exact_units(cpm, m, inc, scale, div)
                if rounding == ROUNDING_DOWN:
                    n = d // inc
                elif rounding == ROUNDING_UP:
                    n = -(-d // inc)
                elif rounding == ROUNDING_TRUE:
                    n, rest = divmod(d, inc)
                    if 2 * rest >= inc:
                        n += 1
                elif rounding == ROUNDING_TIMESPLIT:
                    n = d // inc if rand() < 0.5 else -(-d // inc)
                else:
                    n = d // inc
            value = (n * inc + m) / div  # int / int is the correctly rounded double
            spec = granularity._spec
            if spec is None:
                return format_float(value, granularity.precision)
            return format(value, spec)
    return ""


def select_granularity(
    bid_type: str | None,
    default: PriceGranularity,
    by_media_type: Mapping[str, PriceGranularity] | None,
) -> PriceGranularity:
    """The granularity for a bid of ``bid_type`` (None = unknown): a media-type override or the default.

    Only banner, video and native have overrides; audio and unknown types use the default.
    """
    if by_media_type and bid_type is not None:
        return by_media_type.get(bid_type, default)
    return default


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range_number(entry: Mapping[str, Any], index: int, key: str) -> float:
    value = entry.get(key)
    if value is None:  # absent or null: Go leaves the zero value
        return 0.0
    if not _is_number(value):
        raise GranularityError(
            f"Price granularity error: ranges[{index}].{key} must be a number, got {_json_type(value)}"
        )
    return float(value)


def parse_granularity(value: object) -> PriceGranularity:
    """Parse a ``pricegranularity`` JSON value (already decoded); None means absent (= medium).

    Raises GranularityError. For an unknown name or a wrong JSON type, where PBS-Go reports its JSON
    decoder's message, the text here names the offending value instead.
    """
    if value is None:
        return DEFAULT_GRANULARITY
    if isinstance(value, str):
        named = NAMED_GRANULARITIES.get(value)
        if named is None:
            raise GranularityError(
                f'Price granularity error: unknown price granularity "{value}"; '
                "expected one of low, med, medium, high, auto, dense or a custom object"
            )
        return named
    if not isinstance(value, Mapping):
        raise GranularityError(f"Price granularity error: expected a name or an object, got {_json_type(value)}")

    # Decode everything first (Go's unmarshal precedes SetDefaults and validation).
    raw_precision = value.get("precision")
    if raw_precision is not None and (not isinstance(raw_precision, int) or isinstance(raw_precision, bool)):
        raise GranularityError(
            f"Price granularity error: precision must be an integer, got {_json_type(raw_precision)}"
            + (f" {raw_precision!r}" if _is_number(raw_precision) else "")
        )
    raw_ranges = value.get("ranges")
    if raw_ranges is None:
        raw_ranges = []
    if not isinstance(raw_ranges, list | tuple):
        raise GranularityError(f"Price granularity error: ranges must be an array, got {_json_type(raw_ranges)}")
    decoded: list[tuple[float, float]] = []
    for i, entry in enumerate(raw_ranges):
        if not isinstance(entry, Mapping):
            raise GranularityError(f"Price granularity error: ranges[{i}] must be an object, got {_json_type(entry)}")
        _range_number(entry, i, "min")  # type-checked, then replaced by the previous max
        decoded.append((_range_number(entry, i, "max"), _range_number(entry, i, "increment")))

    # SetDefaults: no ranges means medium (whatever the precision says).
    if not decoded:
        return DEFAULT_GRANULARITY
    precision = DEFAULT_PRECISION if raw_precision is None else raw_precision

    # validatePriceGranularity.
    if precision < 0:
        raise GranularityError(_ERR_PRECISION_NEGATIVE)
    if precision > MAX_DECIMAL_FIGURES:
        raise GranularityError(_ERR_PRECISION_TOO_BIG)
    ranges: list[PriceRange] = []
    prev_max = 0.0
    for hi, increment in decoded:
        if hi <= prev_max:
            raise GranularityError(_ERR_RANGES_ORDER)
        if increment <= 0.0:
            raise GranularityError(_ERR_INCREMENT)
        if not math.isfinite((hi - prev_max) / increment):  # a bucket number no float holds (1e-320)
            raise GranularityError(_ERR_INCREMENT_TOO_SMALL)
        ranges.append(PriceRange(prev_max, hi, increment))
        prev_max = hi
    return PriceGranularity(precision, tuple(ranges))


def parse_media_type_granularity(value: object) -> dict[str, PriceGranularity]:
    """Parse ``mediatypepricegranularity``: only the banner/video/native entries that are present.

    Each entry is parsed like ``pricegranularity`` (an entry without ranges becomes medium); other
    keys are ignored, and None (absent) gives an empty dict.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise GranularityError(
            f"Price granularity error: mediatypepricegranularity must be an object, got {_json_type(value)}"
        )
    result: dict[str, PriceGranularity] = {}
    for media_type in MEDIA_TYPES_WITH_GRANULARITY:
        entry = value.get(media_type)
        if entry is not None:
            result[media_type] = parse_granularity(entry)
    return result
