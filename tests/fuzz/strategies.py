"""Inputs that look like what clients send, with the odd values that break parsers: huge and
non-ASCII digits, unbalanced brackets, deep nesting, wrong JSON types."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ODD_TEXT = st.sampled_from([
    "", " ", "0", "-1", "1e-320", "1e309", "NaN", "²", "١٢", "9" * 5000, "0x10", "1.", ".5", "1~1.²",
    "http://[", "http://[::1", "//evil.example", "javascript:alert(1)", "\x00", "%", "%zz", "a" * 3000,
    "<vast>", "]]>", "{", "[", "null", "true", "\u202e", "é", "\U0001f600", "\udcff",
])
TEXT = st.one_of(ODD_TEXT, st.text(max_size=40))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                   st.floats(allow_nan=False, allow_infinity=False), TEXT)


def json_values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Any JSON value, shallow or nested."""
    return st.recursive(
        SCALAR,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
        max_leaves=max_leaves,
    )


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A value nested far deeper than any real request (hundreds of levels)."""
    depth = draw(st.integers(min_value=200, max_value=1200))
    value: Any = draw(SCALAR)
    for _ in range(depth):
        value = [value] if draw(st.booleans()) else {"x": value}
    return value


JSON = st.one_of(json_values(), deep())


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with a few subtrees replaced by arbitrary JSON (wrong types, deep values)."""
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        document = _replace(draw, document, draw(JSON))
    return document


def _replace(draw: st.DrawFn, node: Any, value: Any) -> Any:
    if isinstance(node, dict) and node and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(node)))
        return {**node, key: _replace(draw, node[key], value)}
    if isinstance(node, list) and node and draw(st.integers(0, 3)):
        index = draw(st.integers(0, len(node) - 1))
        return [*node[:index], _replace(draw, node[index], value), *node[index + 1:]]
    return value


def queries(names: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """A query string's parameters: known names (and a stranger) with odd values."""
    return st.dictionaries(st.sampled_from([*names, "zz"]), TEXT, max_size=len(names) + 1)


# --- numbers given as text and JSON numbers past their range ---------------------------------------

# "²" (No), "٣", fullwidth and mathematical digits (Nd): all but 0-9 are foreign to every wire format
_DIGITS = st.characters(categories=("Nd", "No"))
UNICODE_DIGITS = st.text(alphabet=_DIGITS, min_size=1, max_size=12)
MIXED_DIGITS = st.tuples(st.integers(0, 10**6), UNICODE_DIGITS).map(lambda pair: f"{pair[0]}{pair[1]}")
HUGE_DIGITS = st.tuples(st.sampled_from(["", "-", "+", "0" * 4400]), st.integers(4290, 6000)).map(
    lambda pair: pair[0] + "9" * pair[1])
OVERFLOW_TEXT = st.one_of(st.integers(min_value=2**31, max_value=2**90),
                          st.integers(min_value=-(2**90), max_value=-(2**31))).map(str)
# What orjson reads into an int (up to uint64) past the signed ranges; larger literals become floats.
OVERFLOW_JSON = st.one_of(st.integers(min_value=2**31, max_value=2**64 - 1),
                          st.integers(min_value=-(2**63), max_value=-(2**31)),
                          st.sampled_from([1e20, -1e20, 1e308, 5e-324, -0.0, 1.5]))
NUMERIC = st.one_of(
    st.sampled_from(["²", "-²", "٣", "\uff11", "9" * 5000, "99999999999999999999", "18446744073709551616",
                     "9223372036854775808", "-9223372036854775809", "1_000", " 1", "+1", "0x10", "1e3", ""]),
    UNICODE_DIGITS, MIXED_DIGITS, HUGE_DIGITS, OVERFLOW_TEXT, OVERFLOW_JSON,
)
NUMERIC_TEXT = NUMERIC.map(lambda value: value if isinstance(value, str) else repr(value))
