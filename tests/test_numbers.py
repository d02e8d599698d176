"""hbserver.numbers: the one checked text-to-number conversion. Each row is an input Python's int() /
float() / str.isdigit() get wrong for a wire format, or an edge of a range; Go's strconv (PBS-Go) is
the reference for what is a number."""

from __future__ import annotations

import math

import pytest

from hbserver.numbers import (
    INT8,
    INT32,
    INT64,
    RANGE,
    SYNTAX,
    UINT32,
    UINT64,
    NumberError,
    check_int,
    int_or,
    parse_float,
    parse_int,
)

FULLWIDTH_ONE = "\uff11"


@pytest.mark.parametrize(("text", "bounds", "signs", "want"), [
    ("0", INT64, "+-", 0),
    ("123", INT64, "+-", 123),
    ("+7", INT64, "+-", 7),  # strconv.ParseInt takes a plus
    ("-7", INT64, "+-", -7),
    ("-7", INT64, "-", -7),  # jsonparser.ParseInt: a minus only
    ("+7", INT64, "-", SYNTAX),
    ("-7", INT64, "", SYNTAX),
    ("007", INT64, "+-", 7),
    ("0" * 5000 + "1", INT64, "+-", 1),  # leading zeros do not count towards the length
    ("9223372036854775807", INT64, "+-", 2**63 - 1),
    ("-9223372036854775808", INT64, "+-", -(2**63)),
    ("9223372036854775808", INT64, "+-", RANGE),
    ("-9223372036854775809", INT64, "+-", RANGE),
    ("99999999999999999999", INT64, "+-", RANGE),  # the attacker's appnexus placementId
    ("18446744073709551615", UINT64, "+-", 2**64 - 1),
    ("18446744073709551616", UINT64, "+-", RANGE),
    ("9" * 5000, INT64, "+-", RANGE),  # int() would raise past 4,300 digits: never converted
    ("-" + "9" * 5000, INT64, "+-", RANGE),
    ("4294967295", UINT32, "+-", 2**32 - 1),
    ("4294967296", UINT32, "+-", RANGE),
    ("-1", UINT32, "+-", RANGE),
    ("2147483648", INT32, "+-", RANGE),
    ("127", INT8, "+-", 127),
    ("-129", INT8, "+-", RANGE),
    ("²", INT64, "+-", SYNTAX),  # str.isdigit() says yes, int() refuses
    ("-²", INT64, "+-", SYNTAX),
    ("٣", INT64, "+-", SYNTAX),  # int() takes Arabic-Indic digits
    (FULLWIDTH_ONE, INT64, "+-", SYNTAX),  # and fullwidth ones
    ("1_000", INT64, "+-", SYNTAX),  # and underscores
    (" 1", INT64, "+-", SYNTAX),  # and spaces
    ("1 ", INT64, "+-", SYNTAX),
    ("", INT64, "+-", SYNTAX),
    ("-", INT64, "+-", SYNTAX),
    ("+-1", INT64, "+-", SYNTAX),
    ("0x10", INT64, "+-", SYNTAX),
    ("1e3", INT64, "+-", SYNTAX),
    ("1.0", INT64, "+-", SYNTAX),
])
def test_parse_int(text, bounds, signs, want):
    if isinstance(want, int):
        assert parse_int(text, bounds, signs=signs) == want
        assert int_or(text, -42, bounds, signs=signs) == want
        return
    with pytest.raises(NumberError) as caught:
        parse_int(text, bounds, signs=signs)
    assert caught.value.reason == want
    assert str(caught.value).endswith(want) and len(str(caught.value)) < 100  # a 5,000-digit text is cut
    assert int_or(text, -42, bounds, signs=signs) == -42


@pytest.mark.parametrize(("value", "bounds", "ok"), [
    (2**63 - 1, INT64, True), (2**63, INT64, False), (2**64 - 1, UINT64, True), (-1, UINT32, False),
])
def test_check_int(value, bounds, ok):
    if ok:
        assert check_int(value, bounds) == value
    else:
        with pytest.raises(NumberError, match=RANGE):
            check_int(value, bounds, "placementId")


NAN = object()


@pytest.mark.parametrize(("text", "want"), [
    ("1.5", 1.5), ("-0.25", -0.25), ("+3", 3.0), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E-2", 0.01),
    ("0x1p-2", 0.25), ("inf", math.inf), ("-Infinity", -math.inf), ("NaN", NAN),
    ("0." + "0" * 5000 + "1", 0.0),  # underflow is 0, as in Go
    ("1e309", RANGE), ("9" * 5000, RANGE), ("1e" + "9" * 5000, RANGE), ("0x1p99999", RANGE),
    ("²", SYNTAX), ("\u0661.\u0665", SYNTAX), (FULLWIDTH_ONE, SYNTAX),  # float() takes the last two
    ("1_0", SYNTAX), (" 1", SYNTAX), ("", SYNTAX), ("1e", SYNTAX), ("0x10", SYNTAX), ("infinit", SYNTAX),
])
def test_parse_float(text, want):
    if want is NAN:
        assert math.isnan(parse_float(text))
    elif isinstance(want, float):
        assert parse_float(text) == want
    else:
        with pytest.raises(NumberError) as caught:
            parse_float(text)
        assert caught.value.reason == want
