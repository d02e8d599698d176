"""The Go-emulation helpers (``adapters.golike``): one table per helper, a row per rule it copies."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson
import pytest

from hbserver.adapters.base import BidderError, ErrorCode, ResponseData, TypedBid
from hbserver.adapters.common import AnswerWording, JsonShapeError
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_HTML_ESCAPES,
    GO_SPACE,
    GoIntOverflow,
    GoKind,
    ImpExtError,
    RawObject,
    decode_go_answer,
    go_answer,
    go_bid,
    go_field,
    go_fields,
    go_float_text,
    go_float_v,
    go_imp,
    go_int,
    go_json_object,
    go_json_text,
    go_media_objects,
    go_members,
    go_parse_float,
    go_quote,
    go_read_float,
    go_read_int,
    go_request_top,
    go_sized_int,
    go_string_int,
    go_strings,
    go_typed_bids,
    go_value,
    go_video,
    go_wrap_int,
    imp_bidder_params,
    is_json_number,
    json_member_text,
    json_number_int64,
    json_number_text,
    json_object_members,
    json_path_string,
    json_space_end,
    raw_message_text,
    set_omitempty,
    typed_bids,
    with_auction_price,
    with_query_param,
    with_query_value,
)
from hbserver.numbers import NumberError

NAN = object()  # stands for "a NaN" in the go_parse_float table (NaN != NaN)


class Fails(NamedTuple):
    """A table's expected failure: the exception's exact class and message."""

    message: str
    error: type[Exception] = JsonShapeError


def outcome(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What ``function`` returns, or Fails(message, class) for the JsonShapeError it raises."""
    try:
        return function(*args, **kwargs)
    except JsonShapeError as exc:
        return Fails(str(exc), type(exc))


@pytest.mark.parametrize(
    ("obj", "names", "want"),
    [
        ({"placementId": "p"}, ("placementId",), [("placementId", "p")]),
        ({"PlacementID": "p", "other": 1}, ("placementId",), [("placementId", "p")]),
        ({"bidder": 1, "BIDDER": 2}, ("bidder",), [("bidder", 1), ("bidder", 2)]),
        ({"tagId": "x"}, ("tagId", "tagid"), [("tagId", "x")]),
        ({"TagId": "x"}, ("tagId", "tagid"), [("tagid", "x")]),  # a lower-case name takes the folded key
        ({"siteId": 1, "SITEID": 2, "siteid": 3}, ("siteid", "siteId"), [("siteId", 1), ("siteid", 2), ("siteid", 3)]),
        ({"b": 1, "a": None}, ("a", "b"), [("b", 1), ("a", None)]),  # document order, nulls included
    ],
    ids=["exact", "case", "repeated", "exact-wins", "folded", "two-fields", "order"],
)
def test_go_members(obj, names, want):
    assert list(go_members(obj, *names)) == want


@pytest.mark.parametrize(
    ("obj", "names", "want"),
    [
        ({"bidder": 1, "BIDDER": 2}, ("bidder",), {"bidder": 2}),
        ({"TagId": "x"}, ("tagId", "tagid"), {"tagid": "x"}),
        ({"tagId": "x"}, ("tagId", "tagid"), {"tagId": "x"}),
        ({"b": 1, "A": 2, "B": 3}, ("a", "b"), {"b": 3, "a": 2}),
        ({"x": 1}, ("a",), {}),
    ],
    ids=["last-wins", "folded", "exact", "first-position", "none"],
)
def test_go_fields(obj, names, want):
    got = go_fields(obj, *names)
    assert got == want
    assert list(got) == list(want)


@pytest.mark.parametrize(
    ("obj", "name", "skip_null", "want"),
    [
        ({"Bidder": 1, "bidder": 2}, "bidder", False, 2),
        ({"bidder": 2, "Bidder": 1}, "bidder", False, 1),
        ({"bidder": 1, "BIDDER": None}, "bidder", False, None),
        ({"bidder": 1, "BIDDER": None}, "bidder", True, 1),
        ({"bidder": None}, "bidder", True, None),
        ({}, "bidder", False, None),
    ],
    ids=["last", "last-not-exact", "null-wins", "null-skipped", "only-null", "absent"],
)
def test_go_field(obj, name, skip_null, want):
    assert go_field(obj, name, skip_null=skip_null) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, 0),
        (7, 7),
        (-(2**63), -(2**63)),
        (2**63, Fails("cannot unmarshal f: overflow: 9223372036854775808")),
        (1.5, Fails("cannot unmarshal f: can not decode float as int")),
        ("7", Fails("cannot unmarshal f: unexpected character: \ufffd")),
        (True, Fails("cannot unmarshal f: unexpected character: \ufffd")),
    ],
    ids=["null", "int", "int64-min", "overflow", "float", "string", "bool"],
)
def test_go_int(value, want):
    assert outcome(go_int, value, "f") == want


# Go's intN holds -2**(N-1) .. 2**(N-1)-1 (the Go spec's numeric types); json-iterator's ReadInt8 ...
# report a value outside it, a value outside int64 fails before that as go_int words it
@pytest.mark.parametrize(
    ("value", "bits", "want"),
    [
        (None, 8, 0),
        (127, 8, 127),
        (-128, 8, -128),
        (128, 8, Fails("cannot unmarshal f: ReadInt8: 128", GoIntOverflow)),
        (-129, 8, Fails("cannot unmarshal f: ReadInt8: -129", GoIntOverflow)),
        (2**15, 16, Fails("cannot unmarshal f: ReadInt16: 32768", GoIntOverflow)),
        (2**63 - 1, 64, 2**63 - 1),
        (2**63, 64, Fails("cannot unmarshal f: overflow: 9223372036854775808", GoIntOverflow)),
        (2**63, 8, Fails("cannot unmarshal f: overflow: 9223372036854775808", GoIntOverflow)),
        (1.0, 8, Fails("cannot unmarshal f: can not decode float as int")),
        ("1", 8, Fails("cannot unmarshal f: unexpected character: \ufffd")),
        (False, 8, Fails("cannot unmarshal f: unexpected character: \ufffd")),
    ],
    ids=["null", "int8-max", "int8-min", "int8-over", "int8-under", "int16-over", "int64-max", "int64-over",
         "int8-past-int64", "float", "string", "bool"],
)  # fmt: skip
def test_go_sized_int(value, bits, want):
    assert outcome(go_sized_int, value, "f", bits) == want


# the same overflow as PBS-Go's error extraction leaves it (outbrain's and taboola's fixtures): the
# reader's name and the magnitude, no field
@pytest.mark.parametrize(
    ("value", "bits", "want"),
    [
        (None, 64, 0),
        (-(2**63), 64, -(2**63)),
        (2**63, 64, Fails("cannot unmarshal ReadInt64: 9223372036854775808", GoIntOverflow)),
        (-(2**63) - 1, 64, Fails("cannot unmarshal ReadInt64: 9223372036854775809", GoIntOverflow)),
        (127, 8, 127),
        (-200, 8, Fails("cannot unmarshal ReadInt8: 200", GoIntOverflow)),
        (2**70, 8, Fails("cannot unmarshal ReadInt8: 1180591620717411303424", GoIntOverflow)),
        (1.5, 64, Fails("cannot unmarshal f: can not decode float as int")),
        ("1", 8, Fails("cannot unmarshal f: unexpected character: \ufffd")),
    ],
    ids=["null", "int64-min", "int64-over", "int64-under", "int8-max", "int8-under", "int8-past-int64", "float",
         "string"],
)  # fmt: skip
def test_go_read_int(value, bits, want):
    assert outcome(go_read_int, value, "f", bits) == want


# The Go spec (Conversions between numeric types): converting to a smaller or unsigned integer type
# keeps the low bits, as two's complement for a signed one; it never fails
@pytest.mark.parametrize(
    ("value", "bits", "signed", "want"),
    [
        (127, 8, True, 127),
        (128, 8, True, -128),
        (255, 8, True, -1),
        (256, 8, True, 0),
        (-129, 8, True, 127),
        (-1, 64, False, 2**64 - 1),
        (2**63, 64, True, -(2**63)),
        (-(2**63) - 1, 64, True, 2**63 - 1),
        (5, 64, False, 5),
    ],
)
def test_go_wrap_int(value, bits, signed, want):
    assert go_wrap_int(value, bits, signed=signed) == want


# json-iterator's float64 codec: a null leaves the field (ReadNil first), a number is read, anything
# else fails in ReadFloat64's words with the first character it found
@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, None),
        (1.5, 1.5),
        (-3, -3),
        ("1.5", Fails('cannot unmarshal f: readFloat64: unexpected character: "')),
        (True, Fails("cannot unmarshal f: readFloat64: unexpected character: t")),
        ([1], Fails("cannot unmarshal f: readFloat64: unexpected character: [")),
    ],
    ids=["null", "float", "int", "string", "bool", "list"],
)
def test_go_read_float(value, want):
    assert outcome(go_read_float, value, "f") == want


def test_go_sized_int_overflow_carries_number_and_bits():
    with pytest.raises(GoIntOverflow) as caught:
        go_sized_int(-200, "f", 8)
    assert (caught.value.number, caught.value.bits) == (-200, 8)
    assert isinstance(caught.value, JsonShapeError)


@pytest.mark.parametrize(
    ("value", "kind", "want"),
    [
        (None, GoKind.INT, None),
        ("x", GoKind.STRING, "x"),
        (5, GoKind.STRING, Fails('cannot unmarshal f: expects " or n, but found 5')),
        (1.5, GoKind.FLOAT, 1.5),
        ("1", GoKind.FLOAT, Fails("cannot unmarshal f: invalid number")),
        (2.5, GoKind.INT, Fails("cannot unmarshal f: can not decode float as int")),
        (True, GoKind.BOOL, True),
        (1, GoKind.BOOL, Fails("cannot unmarshal f: expect t or f, but found 1")),
        (["a"], GoKind.STRINGS, ["a"]),
        ("a", GoKind.STRINGS, Fails('cannot unmarshal f: decode slice: expect [ or n, but found "')),
        ([1, "2"], GoKind.INTS, Fails("cannot unmarshal f: unexpected character: \ufffd")),
        ({"any": [1]}, GoKind.RAW, {"any": [1]}),
    ],
    ids=[
        "null",
        "string",
        "bad-string",
        "float",
        "bad-float",
        "bad-int",
        "bool",
        "bad-bool",
        "strings",
        "bad-list",
        "bad-item",
        "raw",
    ],
)
def test_go_value(value, kind, want):
    assert outcome(go_value, value, kind, "f") == want


@pytest.mark.parametrize(
    ("imp", "null_is_absent", "want"),
    [
        ({"ext": {"bidder": {"a": 1}}}, False, {"a": 1}),
        ({"ext": {"Bidder": {"a": 1}, "PREBID": {}}}, False, {"a": 1}),
        ({"ext": {"bidder": None}}, False, {}),
        ({"ext": {"bidder": None}}, True, Fails(ABSENT_OBJECT)),
        ({"ext": {}}, False, Fails(ABSENT_OBJECT)),
        ({"ext": None}, False, Fails(ABSENT_OBJECT)),
        ({"ext": {"bidder": 5}}, False, Fails("expect { or n, but found 5")),
        ({}, False, Fails(ABSENT_OBJECT, ImpExtError)),
        ({"ext": "x"}, False, Fails('expect { or n, but found "', ImpExtError)),
        (
            {"ext": {"prebid": 1, "bidder": {}}},
            False,
            Fails("cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1", ImpExtError),
        ),
        (
            {"ext": {"prebid": 1, "Prebid": {}, "bidder": {}}},  # Go fails on the first, overridden or not
            False,
            Fails("cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1", ImpExtError),
        ),
        (
            {"ext": {"ae": 1.5, "bidder": {}}},
            False,
            Fails(
                "cannot unmarshal adapters.ExtImpBidder.AuctionEnvironment: can not decode float as int", ImpExtError
            ),
        ),
    ],
    ids=[
        "params",
        "keys-in-any-case",
        "null-params",
        "null-as-absent",
        "no-bidder",
        "null-ext",
        "bidder-not-object",
        "no-ext",
        "ext-not-object",
        "bad-prebid",
        "bad-prebid-overridden",
        "bad-ae",
    ],
)
def test_imp_bidder_params(imp, null_is_absent, want):
    assert outcome(imp_bidder_params, imp, null_is_absent=null_is_absent) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (
            {"id": "b", "impid": "i", "price": 1, "w": 0, "h": 0, "exp": 0, "attr": [], "cat": None, "foo": 1},
            {"id": "b", "impid": "i", "price": 1},
        ),
        ({"ID": "b", "ImpId": "i", "Price": 2, "MType": 1}, {"id": "b", "impid": "i", "price": 2, "mtype": 1}),
        ({"price": 0, "ext": None}, {"id": "", "impid": "", "price": 0}),
        ({"id": "b", "ext": {}}, {"id": "b", "impid": "", "price": 0, "ext": {}}),
        (
            {"id": "b", "cat": ["IAB1"], "adomain": [], "crid": ""},
            {"id": "b", "impid": "", "price": 0, "cat": ["IAB1"]},
        ),
        ({"id": 5}, Fails('cannot unmarshal openrtb2.Bid.ID: expects " or n, but found 5')),
        ({"w": 1.5}, Fails("cannot unmarshal openrtb2.Bid.W: can not decode float as int")),
        ({"price": "1"}, Fails("cannot unmarshal openrtb2.Bid.Price: invalid number")),
        (
            {"adomain": "a.com"},
            Fails('cannot unmarshal openrtb2.Bid.ADomain: decode slice: expect [ or n, but found "'),
        ),
        ([], Fails("cannot unmarshal []openrtb2.Bid: expect { or n, but found [")),
    ],
    ids=[
        "zeros-and-unknown-dropped",
        "keys-in-any-case",
        "always-written",
        "empty-ext-kept",
        "empty-lists-dropped",
        "bad-id",
        "bad-w",
        "bad-price",
        "bad-adomain",
        "not-an-object",
    ],
)
def test_go_bid(raw, want):
    assert outcome(go_bid, raw) == want


@pytest.mark.parametrize(
    ("video", "want"),
    [
        ({"w": 0}, {"mimes": None, "w": 0}),
        (
            {"w": 0, "h": 0, "skip": 0, "minduration": 0, "placement": 0, "api": [], "format": [], "ext": {}},
            {"mimes": None, "w": 0, "h": 0, "skip": 0, "ext": {}},
        ),
        (
            {"mimes": ["a"], "maxextended": 0, "boxingallowed": 0, "podid": "", "battr": [], "pos": None, "foo": 1},
            {"mimes": ["a"], "boxingallowed": 0},
        ),
        (
            {"mimes": [], "protocols": [2], "linearity": 1, "ext": None},
            {"mimes": [], "protocols": [2], "linearity": 1, "ext": None},
        ),
    ],
    ids=["mimes-always", "pointers-keep-zero", "omitempty-dropped", "values-and-raw-null-kept"],
)
def test_go_video(video, want):
    assert go_video(video) == want


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"id": "1", "video": {"w": 1}}, {"id": "1", "video": {"w": 1, "mimes": None}}),
        ({"id": "1", "audio": {}}, {"id": "1", "audio": {"mimes": None}}),
        ({"id": "1", "native": {"ver": "1.2"}}, {"id": "1", "native": {"ver": "1.2", "request": ""}}),
        ({"id": "1", "video": {"mimes": []}}, {"id": "1", "video": {"mimes": []}}),
        ({"id": "1", "banner": {}}, {"id": "1", "banner": {}}),
    ],
    ids=["video", "audio", "native", "video-with-mimes", "banner"],
)
def test_go_media_objects(imp, want):
    before = copy.deepcopy(imp)
    out = go_media_objects(imp)
    assert out == want
    assert imp == before
    assert (out is imp) == (want == before)  # a copy only when something changes


@pytest.mark.parametrize(
    ("value", "want"),
    [("x", {"k": "x"}), ([1], {"k": [1]}), ("", {}), (0, {}), ([], {}), ({}, {}), (None, {}), (False, {})],
)
def test_set_omitempty(value, want):
    obj = {"k": "old"}
    set_omitempty(obj, "k", value)
    assert obj == want


@pytest.mark.parametrize(
    ("request_in", "want"),
    [
        (
            {"id": "r", "test": 0, "at": 0, "tmax": 0, "allimps": 0, "cattax": 0, "imp": [], "ext": 0},
            {"id": "r", "imp": [], "ext": 0},
        ),
        ({"id": "r", "test": 1, "at": 1}, {"id": "r", "test": 1, "at": 1}),
    ],
    ids=["zeros-dropped", "values-kept"],
)
def test_go_request_top(request_in, want):
    assert go_request_top(request_in) == want


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (
            b'{"cur": "EUR", "seatbid": [{"seat": "s1", "bid": [{"id": "b"}]}, {"bid": []}]}',
            ("EUR", [("s1", [{"id": "b", "impid": "", "price": 0}]), ("", [])]),
        ),
        (b" null", ("", [])),
        (b'{"SeatBid": null}', ("", [])),
        (b"", Fails("expect { or n, but found \x00")),
        (b"[1]", Fails("expect { or n, but found [")),
        (b"{oops", Fails("Bad response body: ")),
        (
            b'{"seatbid": {}}',
            Fails("cannot unmarshal openrtb2.BidResponse.SeatBid: decode slice: expect [ or n, but found {"),
        ),
        (b'{"nbr": "x"}', Fails("cannot unmarshal openrtb2.BidResponse.NBR: unexpected character: \ufffd")),
        (b'{"seatbid": [{"seat": 1}]}', Fails('cannot unmarshal openrtb2.SeatBid.Seat: expects " or n, but found 1')),
    ],
    ids=["seats-and-bids", "null", "null-seatbid", "empty", "array", "not-json", "bad-seatbid", "bad-nbr", "bad-seat"],
)
def test_go_answer(body, want):
    got = outcome(go_answer, body)
    if isinstance(want, Fails):  # orjson's own message follows the text in the table
        assert isinstance(got, Fails) and got.error is want.error and got.message.startswith(want.message)
    else:
        assert tuple(got) == want
        assert got.bids == [bid for _, bids in want[1] for bid in bids]


@pytest.mark.parametrize(
    ("status", "body", "wording", "want"),
    [
        (204, b"", AnswerWording(), []),
        (400, b"", AnswerWording(bad_request="B"), [(ErrorCode.BAD_INPUT, "B")]),
        (500, b"", AnswerWording(status="S {}"), [(ErrorCode.BAD_SERVER_RESPONSE, "S 500")]),
        (200, b"1", AnswerWording(), [(ErrorCode.BAD_SERVER_RESPONSE, "expect { or n, but found 1")]),
        (200, b"1", AnswerWording(body_error=BidderError), [(ErrorCode.UNKNOWN, "expect { or n, but found 1")]),
        (200, b"{}", AnswerWording(), None),
    ],
    ids=["no-content", "bad-request", "own-status-text", "not-an-object", "own-error-class", "answer"],
)
def test_decode_go_answer(status, body, wording, want):
    answer, errors = decode_go_answer(ResponseData(status, body), wording)
    assert [(error.code, error.message) for error in errors] == (want or [])
    assert (answer is not None) == (want is None)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1.5", 1.5),
        ("+.5", 0.5),
        ("5.", 5.0),
        ("1E3", 1000.0),
        ("0x1p-2", 0.25),
        ("-Inf", -math.inf),
        ("infinity", math.inf),
        ("NaN", NAN),
        ("1e400", None),
        ("0x1p99999", None),
        ("1_0", None),
        (" 1", None),
        ("+nan", None),
        ("", None),
        ("0x1", None),
    ],
)
def test_go_parse_float(text, want):
    got = go_parse_float(text)
    if want is NAN:
        assert got is not None and math.isnan(got)
    else:
        assert got == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (12345678, "12345678"),
        (1.5, "1.5"),
        (0.0001, "0.0001"),
        (1e21, "1000000000000000000000"),
        (-2.0, "-2"),
        (-0.0, "0"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_go_float_text(value, want):
    assert go_float_text(value) == want


# encoding/json: json.Marshal escapes <, > and & (HTMLEscape) and U+2028/U+2029; an Encoder with
# SetEscapeHTML(false) still escapes the two line separators
@pytest.mark.parametrize(
    ("value", "escape_html", "want"),
    [
        ({"a": "<b>&"}, True, '{"a":"\\u003cb\\u003e\\u0026"}'),
        ({"a": "<b>&"}, False, '{"a":"<b>&"}'),
        (["\u2028\u2029"], True, '["\\u2028\\u2029"]'),
        (["\u2028\u2029"], False, '["\\u2028\\u2029"]'),
        ({"k": [1, 1.5, None, True]}, True, '{"k":[1,1.5,null,true]}'),
        ("é", True, '"é"'),
    ],
    ids=["html", "html-kept", "line-separators", "line-separators-no-html", "compact", "utf8-kept"],
)
def test_go_json_text(value, escape_html, want):
    assert go_json_text(value, escape_html=escape_html) == want
    if escape_html:
        assert orjson.dumps(value).decode().translate(GO_HTML_ESCAPES) == want


@pytest.mark.parametrize(
    ("endpoint", "want"),
    [
        ("http://h/a", "http://h/a?v=1.3"),
        ("http://h/a?z=1&b=x y", "http://h/a?b=x+y&v=1.3&z=1"),
        ("http://h/a?v=old&a=", "http://h/a?a=&v=old&v=1.3"),
        ("http://h/a?k=s t~&x=%26#frag", "http://h/a?k=s+t~&v=1.3&x=%26#frag"),
        ("", "?v=1.3"),
    ],
    ids=["no-query", "sorted-and-escaped", "repeated-key-keeps-order", "fragment-kept", "empty"],
)
def test_with_query_param(endpoint, want):
    assert with_query_param(endpoint, "v", "1.3") == want


def test_with_query_param_raises_where_urlsplit_does():
    with pytest.raises(ValueError):
        with_query_param("http://[::1", "v", "1")


# Go's url.Values.Set replaces every value of the key; Encode sorts the keys (a key's other values
# keep their order) and escapes as a form
@pytest.mark.parametrize(
    ("endpoint", "want"),
    [
        ("http://h/a", "http://h/a?v=1.3"),
        ("http://h/a?z=1&b=x y", "http://h/a?b=x+y&v=1.3&z=1"),
        ("http://h/a?v=old&a=&v=older", "http://h/a?a=&v=1.3"),
        ("http://h/a?k=2&k=1", "http://h/a?k=2&k=1&v=1.3"),
        ("http://h/a?x=%26#frag", "http://h/a?v=1.3&x=%26#frag"),
        ("", "?v=1.3"),
    ],
    ids=["no-query", "sorted-and-escaped", "replaces-every-value", "other-key-keeps-values", "fragment-kept",
         "empty"],
)  # fmt: skip
def test_with_query_value(endpoint, want):
    assert with_query_value(endpoint, "v", "1.3") == want


def test_with_query_value_raises_where_urlsplit_does():
    with pytest.raises(ValueError):
        with_query_value("http://[::1", "v", "1")


@pytest.mark.parametrize(
    ("text", "trimmed"),
    [
        (" \t\n\v\f\r abc \u3000\u2028\xa0\x85", "abc"),
        ("\x1cabc\x1f", "\x1cabc\x1f"),  # Go keeps the information separators Python's strip() removes
        ("\u200babc", "\u200babc"),  # zero width space is no space for Go
    ],
)
def test_go_space_is_strings_trimspace(text: str, trimmed: str) -> None:
    assert text.strip(GO_SPACE) == trimmed


@pytest.mark.parametrize(
    ("imp", "written"),
    [
        # zero omitempty fields and null pointers go, as Go's typed openrtb2.Imp writes them; the video is re-encoded
        ({"id": "i", "instl": 0, "tagid": "", "bidfloor": 0, "banner": None, "secure": None, "video": {"w": 1}},
         {"id": "i", "video": {"mimes": None, "w": 1}}),
        ({"id": "i", "instl": 1, "tagid": "t", "bidfloor": 1.5, "bidfloorcur": "EUR", "secure": 0},
         {"id": "i", "instl": 1, "tagid": "t", "bidfloor": 1.5, "bidfloorcur": "EUR", "secure": 0}),
        ({"id": "i", "native": {"ver": "1.2"}}, {"id": "i", "native": {"request": "", "ver": "1.2"}}),
        ({"id": "i", "x": {"kept": True}}, {"id": "i", "x": {"kept": True}}),  # unknown keys stay (nexx360, ttd)
    ],
    ids=["zero-and-null", "set-values", "native-request-written", "unknown-kept"],
)
def test_go_imp(imp: dict, written: dict) -> None:
    assert go_imp(imp) == written


# known_only: the whole imp through openrtb2.Imp: a key naming no field is dropped, a null leaves the
# zero value (left out by omitempty, a pointer's nil likewise), id has no omitempty
@pytest.mark.parametrize(
    ("imp", "written"),
    [
        ({"tagid": "t", "x": 1, "ext": None, "pmp": None}, {"id": "", "tagid": "t"}),
        ({"ext": {"a": 1}, "id": "i", "instl": 0}, {"id": "i", "ext": {"a": 1}}),
        ({"id": "i", "video": {"w": 0, "foo": 1}, "audio": {}},
         {"id": "i", "video": {"mimes": None, "w": 0}, "audio": {"mimes": None}}),
        ({"id": "i", "secure": 0, "exp": 0, "qty": {"multiplier": 1}},
         {"id": "i", "secure": 0, "qty": {"multiplier": 1}}),
    ],
    ids=["unknown-and-null-dropped", "id-first", "media-objects", "pointer-zero-kept"],
)  # fmt: skip
def test_go_imp_known_only(imp: dict, written: dict) -> None:
    out = go_imp(imp, known_only=True)
    assert out == written
    assert next(iter(out)) == "id"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (RawObject({"a": 1}, '{ "a": 1 }'), '{ "a": 1 }'),  # read with its text: written back byte for byte
        ({"a": 1, "b": [1, 2]}, '{"a":1,"b":[1,2]}'),  # a plain dict: compact JSON
        ("x", '"x"'),
    ],
)
def test_raw_message_text(value, text) -> None:
    assert raw_message_text(value) == text


def test_a_raw_object_is_a_dict_that_copies_with_its_text() -> None:
    import copy

    value = RawObject({"a": {"b": 1}}, '{"a": {"b": 1}}')
    copied = copy.deepcopy(value)
    assert copied == {"a": {"b": 1}} and copied.raw_json == value.raw_json and copied["a"] is not value["a"]


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, ""),  # null (or absent) is the empty number
        ("12x", "12x"),  # a string is kept unchecked (json-iterator's readNumberAsString)
        (42, "42"),
        (-7, "-7"),
        (1.5, "1.5"),
        (True, Fails("bad number")),  # a bool is no number
        ([1], Fails("bad number")),
        ({"a": 1}, Fails("bad number")),
    ],
    ids=["null", "string-unchecked", "int", "negative", "float", "bool", "list", "object"],
)
def test_json_number_text(value, want) -> None:
    assert outcome(json_number_text, value, "bad number") == want


# encoding/json's isValidNumber: RFC 8259's number grammar (no leading zeros, no "+", no bare ".")
@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("0", True), ("-12", True), ("1.5", True), ("1e9", True), ("1.5E-3", True), ("2e+10", True),
        ("", False), ("01", False), ("+1", False), (".5", False), ("1.", False), ("1e", False), ("0x1", False),
        (" 1", False), ("1 ", False), ("NaN", False),
    ],
)  # fmt: skip
def test_is_json_number(text: str, valid: bool) -> None:
    assert is_json_number(text) is valid


# json.Number.Int64 is strconv.ParseInt(s, 10, 64): its errors quote the text as %q does
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("42", 42),
        ("-9223372036854775808", -(2**63)),
        ("+7", 7),
        ("9223372036854775808", Fails('strconv.ParseInt: parsing "9223372036854775808": value out of range')),
        ("1.5", Fails('strconv.ParseInt: parsing "1.5": invalid syntax')),
        ("", Fails('strconv.ParseInt: parsing "": invalid syntax')),
        ('a"\n', Fails('strconv.ParseInt: parsing "a\\"\\n": invalid syntax')),
    ],
    ids=["int", "int64-min", "plus-sign", "out-of-range", "float", "empty", "quoted-as-go"],
)
def test_json_number_int64(text: str, want: Any) -> None:
    assert outcome(json_number_int64, text) == want


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("abc", '"abc"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("a\nb\tc", '"a\\nb\\tc"'),
        ("\x01", '"\\x01"'),
        ("\u00ad", '"\\u00ad"'),  # a soft hyphen is not printable
        ("\U000e0001", '"\\U000e0001"'),
        ("é ü", '"é ü"'),  # printable non-ASCII is kept
    ],
    ids=["plain", "quote-backslash", "c-escapes", "control", "unprintable-bmp", "unprintable-astral", "printable"],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def _typed_by_impid(bid: dict) -> TypedBid | BidderError | None:
    """A table's ``typed``: imp "b" is a banner, "x" an error, "s" silently skipped."""
    if bid["impid"] == "x":
        return BidderError("bad x")
    return None if bid["impid"] == "s" else TypedBid(bid, "banner")


_TWO_SEATS = (
    b'{"cur": "EUR", "seatbid": [{"bid": [{"impid": "b"}, {"impid": "x"}]}, {"bid": [{"impid": "s"}, {"impid": "b"}]}]}'
)


@pytest.mark.parametrize(
    ("body", "options", "want"),
    [
        (_TWO_SEATS, {}, ("EUR", ["b", "b"], ["bad x"])),  # errors reported, the others kept, seat by seat
        (_TWO_SEATS, {"answer_currency": False}, ("USD", ["b", "b"], ["bad x"])),
        (_TWO_SEATS, {"first_error_fails": True}, (None, None, ["bad x"])),  # the first error is all
        (b'{"seatbid": [{"bid": [{"impid": "b"}, {"impid": "s"}]}]}', {"first_error_fails": True}, ("USD", ["b"], [])),
        (b"{}", {}, ("USD", [], [])),  # no cur: USD
    ],
    ids=["errors-skipped", "always-usd", "first-error-fails", "silent-skip-is-no-error", "empty"],
)
def test_typed_bids(body: bytes, options: dict, want: tuple) -> None:
    result, errors = typed_bids(go_answer(body), _typed_by_impid, **options)
    got_bids = None if result is None else [typed.bid["impid"] for typed in result.bids]
    assert (result and result.currency, got_bids, [error.message for error in errors]) == want


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", (None, [])),
        (500, b"", (None, ["S 500"])),  # the wording's failure as it is
        (200, b"[]", (None, ["expect { or n, but found ["])),
        (200, _TWO_SEATS, (["b", "b"], ["bad x"])),
    ],
    ids=["no-content", "status", "not-an-object", "typed"],
)
def test_go_typed_bids(status: int, body: bytes, want: tuple) -> None:
    result, errors = go_typed_bids(ResponseData(status, body), _typed_by_impid, AnswerWording(status="S {}"))
    got_bids = None if result is None else [typed.bid["impid"] for typed in result.bids]
    assert (got_bids, [error.message for error in errors]) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"a": 1, "b" : {"c": [2]} }', [("a", "1"), ("b", '{"c": [2]}')]),
        ("{ }", []),
        ('{"a":"x","a":2}', [("a", '"x"'), ("a", "2")]),  # repeated keys, in order
        ('{"a": 1 "b": 2}', [("a", "1"), ValueError]),  # members before the fault are read (lazy)
        ('{"a" 1}', [ValueError]),
        ("{1: 2}", [ValueError]),
        ('{"a": 1', [("a", "1"), IndexError]),
        ('{"a": NaN}', [("a", "NaN")]),  # the plain decoder's constants
    ],
    ids=["members", "empty", "repeated", "missing-comma", "missing-colon", "key-not-string", "unclosed", "nan"],
)
def test_json_object_members(text: str, want: list) -> None:
    got: list = []
    try:
        got.extend((key, text[start:end]) for key, start, end in json_object_members(text, 0))
    except (ValueError, IndexError) as exc:
        got.append(type(exc))
    assert got == want


@pytest.mark.parametrize(
    ("text", "index", "want"),
    [(" \t\n\rx", 0, 4), ("x", 0, 0), ("a  ", 1, 3), ("\v", 0, 0)],
    ids=["spaces", "none", "to-end", "vt-is-not-json-space"],
)
def test_json_space_end(text: str, index: int, want: int) -> None:
    assert json_space_end(text, index) == want


@pytest.mark.parametrize(
    ("bid", "fields", "want"),
    [
        ({"price": 1.5, "adm": "p=${AUCTION_PRICE}", "nurl": "n"}, None, {"price": 1.5, "adm": "p=1.5", "nurl": "n"}),
        ({"price": 2.0, "burl": "${AUCTION_PRICE}-${AUCTION_PRICE}"}, None, {"price": 2.0, "burl": "2-2"}),
        ({"price": 1e-05, "nurl": "${AUCTION_PRICE}"}, None, {"price": 1e-05, "nurl": "0.00001"}),  # never an exponent
        ({"price": 3, "burl": "${AUCTION_PRICE}"}, ("nurl", "adm"), {"price": 3, "burl": "${AUCTION_PRICE}"}),
        ({"price": 3, "adm": None}, None, {"price": 3, "adm": None}),  # only strings
    ],
    ids=["adm", "every-occurrence", "go-float-text", "own-fields", "not-a-string"],
)
def test_with_auction_price(bid: dict, fields: tuple | None, want: dict) -> None:
    before = dict(bid)
    got = with_auction_price(bid) if fields is None else with_auction_price(bid, fields)
    assert got == want and bid == before  # a copy: the bid itself is left alone


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (b' {"a": 1}', {"a": 1}),
        ('{"a": [1]}', {"a": [1]}),
        (b"null", None),
        (b"", Fails("expect { or n, but found \x00")),  # nothing: the zero byte
        ("  ", Fails("expect { or n, but found \x00")),
        (b"[1]", Fails("expect { or n, but found [")),
        ('"x"', Fails('expect { or n, but found "')),
        ("\u00e9", Fails("expect { or n, but found \u00e9")),  # a str's own character
        ("\u00e9".encode(), Fails("expect { or n, but found \u00c3")),  # a byte, read as Latin-1
    ],
    ids=["bytes", "str", "null", "empty", "spaces", "array", "string", "str-non-ascii", "bytes-non-ascii"],
)
def test_go_json_object(text, want) -> None:
    assert outcome(go_json_object, text) == want


def test_go_json_object_syntax_error_is_the_parsers() -> None:
    got = outcome(go_json_object, b'{"a": }')
    assert isinstance(got, Fails) and got.error is JsonShapeError and "line 1" in got.message


# jsonparser.Get(text, key): the first top-level member named key, its value's raw bytes (a nested
# member of that name does not count; the text after it is not read)
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"native":{"a":1},"native":{"b":2}}', '{"a":1}'),
        (' { "x" : [1, {"native": 0}] , "native" :  {"b" : 2} } ', '{"b" : 2}'),
        ('{"native":"s\\"t"}', '"s\\"t"'),
        ('{"native":null}', "null"),
        ('{"Native":{}}', None),
        ('{"a":1}', None),
        ("[1]", None),
        ("null", None),
        ('{"native":{"a":1}} trailing', '{"a":1}'),
    ],
    ids=["first-wins", "spaces-and-nesting", "string-raw", "null", "exact-key", "absent", "array", "null-text",
         "rest-unread"],
)  # fmt: skip
def test_json_member_text(text: str, want: str | None) -> None:
    assert json_member_text(text, "native") == want


@pytest.mark.parametrize("text", ['{"a":}', '{"a":1', '{"a" 1}', "{"])
def test_json_member_text_malformed_before_the_member(text: str) -> None:
    with pytest.raises((ValueError, IndexError)):
        json_member_text(text, "native")


# jsonutil.StringInt: a JSON integer, or a string jsonparser.ParseInt reads (an optional "-", ASCII
# digits, no "+"), "" as 0; other JSON types are the caller's to word
@pytest.mark.parametrize(
    ("value", "want"),
    [
        (12, 12),
        ("12", 12),
        ("-12", -12),
        ("", 0),
        ("+12", NumberError),
        ("1.5", NumberError),
        ("9223372036854775808", NumberError),
        (2**63, NumberError),
        (1.5, None),
        (True, None),
        (None, None),
    ],
    ids=["int", "digits", "minus", "empty", "plus", "float-text", "text-past-int64", "int-past-int64", "float",
         "bool", "null"],
)  # fmt: skip
def test_go_string_int(value: Any, want: Any) -> None:
    if want is NumberError:
        with pytest.raises(NumberError):
            go_string_int(value)
    else:
        assert go_string_int(value) == want


# json-iterator into a []string: null is a nil slice, a null item the zero string; a value that is no
# array names the field, an item that is no string names the slice type
@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, None),
        ([], []),
        (["a", None, ""], ["a", "", ""]),
        ("a", Fails("cannot unmarshal f: decode slice: expect [ or n, but found \"")),
        ({"a": 1}, Fails("cannot unmarshal f: decode slice: expect [ or n, but found {")),
        (["a", 1], Fails('cannot unmarshal []string: expects " or n, but found 1')),
        ([True], Fails('cannot unmarshal []string: expects " or n, but found t')),
    ],
    ids=["null", "empty", "null-item", "string", "object", "number-item", "bool-item"],
)
def test_go_strings(value: Any, want: Any) -> None:
    assert outcome(go_strings, value, "f") == want


# jsonparser.GetString(data, keys...): the path must exist and end at a string
@pytest.mark.parametrize(
    ("value", "want"),
    [
        ({"a": {"b": "x"}}, "x"),
        ({"a": {"b": ""}}, ""),
        ({"a": {}}, ValueError("Key path not found")),
        ({"a": []}, ValueError("Key path not found")),
        (None, ValueError("Key path not found")),
        ({"a": {"b": None}}, ValueError("Value is not a string: null")),
        ({"a": {"b": 12}}, ValueError("Value is not a string: 12")),
        ({"a": {"b": {"c": 1}}}, ValueError('Value is not a string: {"c":1}')),
    ],
    ids=["string", "empty", "missing", "not-an-object", "null-root", "null", "number", "object"],
)
def test_json_path_string(value: Any, want: Any) -> None:
    if isinstance(want, ValueError):
        with pytest.raises(ValueError, match=f"^{re.escape(str(want))}$"):
            json_path_string(value, "a", "b")
    else:
        assert json_path_string(value, "a", "b") == want


# fmt's %v of a float64 is strconv.FormatFloat(v, 'g', -1, 64): shortest digits, %e form when the
# exponent is below -4 or at least 6 (the shortest precision's threshold), two exponent digits at least
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"), (1.0, "1"), (3.54, "3.54"), (-2.5, "-2.5"), (123456.0, "123456"), (999999.0, "999999"),
        (1000000.0, "1e+06"), (1234567.0, "1.234567e+06"), (0.0001, "0.0001"), (0.00001, "1e-05"),
        (0.1 + 0.2, "0.30000000000000004"), (1e21, "1e+21"), (1.5e-300, "1.5e-300"),
    ],
)  # fmt: skip
def test_go_float_v(value: float, text: str) -> None:
    assert go_float_v(value) == text

