"""Text to number, checked: the one way text from outside (query parameters, JSON strings, bidder
params, bidder answers and their headers, configuration) becomes a number.

Python's own conversions are not fit for input. ``int()`` takes any Unicode decimal digit ("٣", the
fullwidth digits), underscores ("1_000") and surrounding whitespace, none of which Go's ``strconv``
(PBS-Go) or Java's ``Integer.parseInt`` (PBS-Java) accept; ``str.isdigit()`` also takes "²", which
``int()`` then refuses with ValueError; and ``int()`` raises ValueError past 4,300 digits. A number
that passes such a check can still be too large for where it goes (orjson cannot write an integer past
64 bits; PBS's fields are int32/int64). Here:

* only ASCII digits ``0``-``9``, after one optional sign where the caller allows it (``signs``);
* the length is bounded before converting: leading zeros aside, more digits than the range's bound
  is out of range, unconverted;
* the value must fall in the caller's range (:data:`INT64` by default, :data:`UINT32`, ...);
* every failure is :class:`NumberError` (a ValueError) whose ``reason`` is ``invalid syntax`` or
  ``value out of range``, Go's ``strconv`` words, so callers that copy PBS-Go's messages keep them.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple, TypeVar

SYNTAX = "invalid syntax"
RANGE = "value out of range"
_SHOWN_CHARS = 40  # of a bad text, in messages
_D = TypeVar("_D")


class IntRange(NamedTuple):
    """An integer range and the most digits a number in it has."""

    low: int
    high: int
    digits: int


def int_range(low: int, high: int) -> IntRange:
    return IntRange(low, high, max(len(str(abs(low))), len(str(abs(high)))))


INT8 = int_range(-(2**7), 2**7 - 1)
INT32 = int_range(-(2**31), 2**31 - 1)
UINT32 = int_range(0, 2**32 - 1)
INT64 = int_range(-(2**63), 2**63 - 1)
UINT64 = int_range(0, 2**64 - 1)


class NumberError(ValueError):
    """Text that is not a number of the kind asked for; ``reason`` is SYNTAX or RANGE."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"parsing {shown(text)}: {reason}")
        self.text = text
        self.reason = reason


def shown(text: str) -> str:
    """``text`` quoted for a message, cut to a readable length."""
    cut = text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."
    return '"' + cut.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_int(text: str, bounds: IntRange = INT64, *, signs: str = "+-") -> int:
    """``text`` as an integer within ``bounds``: ASCII digits after at most one sign from ``signs``
    (``""``: none allowed); NumberError otherwise."""
    if text.isascii() and text.isdigit() and len(text) <= bounds.digits:  # the usual case, at C speed
        value = int(text)
    else:
        value = _slow_int(text, bounds, signs)
    if bounds.low <= value <= bounds.high:
        return value
    raise NumberError(text, RANGE)


def _slow_int(text: str, bounds: IntRange, signs: str) -> int:
    sign = text[:1]
    digits = text[1:] if sign and sign in signs and sign in "+-" else text
    if not (digits.isascii() and digits.isdigit()):  # "" included
        raise NumberError(text, SYNTAX)
    significant = digits.lstrip("0")
    if len(significant) > bounds.digits:
        raise NumberError(text, RANGE)
    value = int(significant or "0")
    return -value if sign == "-" else value


def int_or(text: str, default: _D, bounds: IntRange = INT64, *, signs: str = "+-") -> int | _D:
    """:func:`parse_int`, or ``default`` for text it refuses (where the source ignores bad values)."""
    try:
        return parse_int(text, bounds, signs=signs)
    except NumberError:
        return default


def check_int(value: int, bounds: IntRange = INT64, name: str = "") -> int:
    """A JSON integer within ``bounds`` (orjson reads integers up to uint64); NumberError otherwise."""
    if bounds.low <= value <= bounds.high:
        return value
    raise NumberError(name or str(value)[:_SHOWN_CHARS], RANGE)


# Go's strconv.ParseFloat(text, 64) syntax: decimal, hexadecimal with a p exponent, inf/infinity/nan.
_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+\Z")
_INF_OR_NAN = re.compile(r"(?:[+-]?inf(?:inity)?|nan)\Z", re.IGNORECASE)


def parse_float(text: str) -> float:
    """``text`` as Go's ``strconv.ParseFloat(text, 64)`` reads it (ASCII only; "inf" and "nan"
    spelled out are numbers, as in Go); NumberError for bad syntax or a finite text too large."""
    if _DECIMAL_FLOAT.match(text):
        value = float(text)
        if math.isinf(value):
            raise NumberError(text, RANGE)
        return value
    if _INF_OR_NAN.match(text):
        return float(text)
    if _HEX_FLOAT.match(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            raise NumberError(text, RANGE) from None
    raise NumberError(text, SYNTAX)
