"""Reading and writing JSON the way PBS-Go does, for the adapters whose fixtures pin its effects.

PBS-Go decodes the request, each imp's params and the bidder's answer into typed Go structs, and
encodes those structs again. A plain dict has none of the effects that has, and the PBS-Go fixtures
pin them, so they are copied here once:

* keys match struct fields case-insensitively, an exact match preferred, and when an object names
  a field twice the last occurrence wins (``go_members``, ``go_fields``, ``go_field``);
* unknown keys are dropped on re-encoding and zero-valued ``omitempty`` fields are left out, while
  fields without ``omitempty`` are written even when absent (``go_bid``, ``go_video``,
  ``go_media_objects``, ``go_request_top``, ``go_imp``, ``go_device``, ``set_omitempty``);
* a value of the wrong type fails in json-iterator's words, e.g. ``expect { or n, but found "``
  (``go_value``, ``go_strings``, ``go_read_float``, ``imp_bidder_params``, ``go_answer``,
  ``NOT_AN_OBJECT``, ``GO_WORDING``); an absent raw value (Go's empty ``json.RawMessage``) fails
  with the zero byte as the character found (``ABSENT_OBJECT``);
* integers have Go's sizes: ``go_int``, ``go_sized_int`` and ``go_read_int`` (intN fields and their
  overflow words), ``go_wrap_int`` (conversions, which wrap);
* numbers and URLs are read and written as Go's ``strconv``, ``json.Number`` and ``net/url`` do
  (``go_parse_float``, ``go_float_text``, ``go_float_v``, ``json_number_text``, ``is_json_number``,
  ``json_number_int64``, ``go_string_int``, ``with_auction_price``, ``with_query_param`` (Add),
  ``with_query_value`` (Set), ``go_quote``), and JSON text is escaped as encoding/json does
  (``go_json_text``, ``GO_HTML_ESCAPES``);
* raw JSON text is read as json-iterator and jsonparser read it (``go_json_object``,
  ``json_object_members``, ``json_member_text``, ``json_path_string``, ``json_space_end``), and an
  answer's bids are typed one by one (``typed_bids``, ``go_typed_bids``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from enum import Enum
from json.decoder import scanstring
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

from hbserver.adapters.base import BidderError, BidderResponse, ResponseData, TypedBid
from hbserver.adapters.common import (
    DEFAULT_WORDING,
    AnswerWording,
    JsonShapeError,
    expect_object,
    expect_string,
    found,
    typed_bid_response,
)
from hbserver.numbers import INT64, NumberError, check_int, parse_float, parse_int

# json-iterator decoding an absent value (Go's empty json.RawMessage) as an object: the character it
# "found" is the zero byte that ends the input
ABSENT_OBJECT = "expect { or n, but found \x00"
# json-iterator decoding another JSON value as an object; ``{found}`` is the value's first character
NOT_AN_OBJECT = "expect {{ or n, but found {found}"
# PBS's usual texts for a failed answer, json-iterator's for one that is no JSON object
GO_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_JSON_SPACE = b" \t\n\r"


# --- struct fields ---------------------------------------------------------------------------------


@functools.cache
def _field_matcher(names: tuple[str, ...]) -> tuple[frozenset[str], dict[str, str]]:
    """(the exact names, lower-cased key -> name): a name already in lower case takes its folded key
    before a mixed-case one does."""
    folded = {name: name for name in names if name == name.lower()}
    for name in names:
        folded.setdefault(name.lower(), name)
    return frozenset(names), folded


def go_members(obj: Mapping[str, Any], *names: str) -> Iterator[tuple[str, Any]]:
    """(field name, value) for each key of ``obj`` that names one of the Go struct fields whose JSON
    names are ``names``, in document order. A key matches exactly, else ignoring case. Go decodes
    every occurrence in turn, so a value of the wrong type fails even when a later key overrides it."""
    exact, folded = _field_matcher(names)
    for key, value in obj.items():
        name = key if key in exact else folded.get(key.lower())
        if name is not None:
            yield name, value


def go_fields(obj: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """``obj``'s values for the fields named ``names`` (see ``go_members``), keyed by those names in
    document order; of a field named twice, the later value wins."""
    return dict(go_members(obj, *names))


def go_field(obj: Mapping[str, Any], name: str, *, skip_null: bool = False) -> Any:
    """The value Go decodes into field ``name`` (see ``go_members``): the last one given, None when
    there is none. ``skip_null``: a null leaves the value read before it, as null does for a Go
    field of a value type (string, number, boolean)."""
    value = None
    for _, item in go_members(obj, name):
        if item is not None or not skip_null:
            value = item
    return value


class GoKind(Enum):
    """The Go type of a struct field, for ``go_value``."""

    STRING = "string"
    FLOAT = "float64"
    INT = "int"
    BOOL = "bool"
    STRINGS = "[]string"
    INTS = "[]int"
    RAW = "json.RawMessage"


def go_int(value: Any, where: str) -> int:
    """``value`` decoded into a Go ``int`` (null is 0); JsonShapeError in json-iterator's words
    (``where`` names the field) for a float, a value out of int64 range or a non-number."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise JsonShapeError(f"cannot unmarshal {where}: overflow: {value}")
        return value
    if isinstance(value, float):
        raise JsonShapeError(f"cannot unmarshal {where}: can not decode float as int")
    raise JsonShapeError(f"cannot unmarshal {where}: unexpected character: \ufffd")


class GoIntOverflow(JsonShapeError):
    """A JSON integer out of range for a Go ``int8`` ... ``int64`` field (``go_sized_int``); ``number``
    and ``bits`` let an adapter word it as its PBS-Go fixture does."""

    def __init__(self, message: str, number: int, bits: int) -> None:
        super().__init__(message)
        self.number = number
        self.bits = bits


def go_sized_int(value: Any, where: str, bits: int = 64) -> int:
    """``value`` decoded into a Go ``int<bits>`` (null is 0). Out of int64 range fails as ``go_int``
    words it, out of a smaller type's range as json-iterator's ``ReadInt8`` ... (GoIntOverflow both);
    a float or a non-number as ``go_int``."""
    if not isinstance(value, int) or isinstance(value, bool):
        return go_int(value, where)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise GoIntOverflow(f"cannot unmarshal {where}: overflow: {value}", value, 64)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise GoIntOverflow(f"cannot unmarshal {where}: ReadInt{bits}: {value}", value, bits)
    return value


def go_read_int(value: Any, where: str, bits: int = 64) -> int:
    """``value`` decoded into a Go ``int<bits>`` as it fails through PBS-Go's error extraction: out of
    range as json-iterator's reader words it, its name and the magnitude without the field (``cannot
    unmarshal ReadInt8: 200``, GoIntOverflow); a float or a non-number as ``go_int``."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise GoIntOverflow(f"cannot unmarshal ReadInt{bits}: {abs(value)}", value, bits)
    return go_int(value, where)


def go_wrap_int(value: int, bits: int = 64, *, signed: bool = True) -> int:
    """``value`` converted to a Go integer type of ``bits`` (``int8(x)``, ``uint64(x)``...): its low
    ``bits`` bits, read as two's complement when ``signed`` (the conversion wraps, it never fails)."""
    low = value & ((1 << bits) - 1)
    return low - (1 << bits) if signed and low >> (bits - 1) else low


def go_list(value: Any, where: str) -> list[Any]:
    """A JSON array field (null is empty); anything else fails as json-iterator words it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise JsonShapeError(f"cannot unmarshal {where}: decode slice: expect [ or n, but found {found(value)}")
    return value


def go_strings(value: Any, where: str) -> list[str] | None:
    """A Go ``[]string`` field: null is nil (None), a null item is ""; a value that is no list fails
    naming the field, an item of another type naming the slice type, as json-iterator words them."""
    if value is None:
        return None
    return [expect_string(item, "[]string") for item in go_list(value, where)]


def go_value(value: Any, kind: GoKind, where: str) -> Any:
    """``value`` as a Go field of ``kind`` takes it (None for null); a value of the wrong type raises
    JsonShapeError in json-iterator's words (``where`` names the field)."""
    if value is None or kind is GoKind.RAW:
        return value
    if kind is GoKind.STRING:
        return expect_string(value, where)
    if kind is GoKind.INT:
        return go_int(value, where)
    if kind is GoKind.FLOAT:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise JsonShapeError(f"cannot unmarshal {where}: invalid number")
    if kind is GoKind.BOOL:
        if isinstance(value, bool):
            return value
        raise JsonShapeError(f"cannot unmarshal {where}: expect t or f, but found {found(value)}")
    item_kind = GoKind.STRING if kind is GoKind.STRINGS else GoKind.INT
    for item in go_list(value, where):
        go_value(item, item_kind, where)
    return value


def go_read_float(value: Any, where: str) -> Any:
    """``value`` as json-iterator's ``ReadFloat64`` takes it into a float64 field: a number (or
    null, None) as it is; anything else fails as it words it (``readFloat64: unexpected
    character``, the value's first character), where ``go_value`` has the slow path's words."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: readFloat64: unexpected character: {found(value)}")


# --- imp.ext ---------------------------------------------------------------------------------------


class ImpExtError(JsonShapeError):
    """``imp.ext`` itself does not decode as ``adapters.ExtImpBidder`` (PBS-Go adapters word this
    apart from params that do not decode)."""


def imp_bidder_params(imp: Mapping[str, Any], *, null_is_absent: bool = False) -> dict[str, Any]:
    """``imp.ext.bidder`` as PBS-Go adapters read it: ``imp.ext`` decoded as ``adapters.ExtImpBidder``
    (ImpExtError when absent or when ``prebid`` or ``ae`` has the wrong type), then ``bidder`` as an
    object (JsonShapeError when absent or not an object; null reads as empty unless
    ``null_is_absent``). Messages are json-iterator's."""
    if "ext" not in imp:
        raise ImpExtError(ABSENT_OBJECT)
    try:
        ext = expect_object(imp["ext"], "")
        fields: dict[str, Any] = {}
        for name, value in go_members(ext, "prebid", "bidder", "ae"):
            if name == "prebid":
                expect_object(value, "adapters.ExtImpBidder.Prebid")
            elif name == "ae":
                go_int(value, "adapters.ExtImpBidder.AuctionEnvironment")
            fields[name] = value
    except JsonShapeError as exc:
        raise ImpExtError(str(exc)) from None
    if fields.get("bidder") is None and ("bidder" not in fields or null_is_absent):
        raise JsonShapeError(ABSENT_OBJECT)
    return expect_object(fields["bidder"], "")


# openrtb_ext.ExtImpPrebid's keys in Go's order: True = omitempty (left out when "", [] or {}),
# False = a pointer or raw value (left out only when null)
_EXT_IMP_PREBID_KEYS = {
    "storedrequest": False, "storedauctionresponse": False, "storedbidresponse": True,
    "is_rewarded_inventory": False, "bidder": True, "options": False, "adunitcode": True,
    "passthrough": False, "floors": False, "imp": True,
}  # fmt: skip


def go_ext_imp_prebid(prebid: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext.prebid`` as Go's ``openrtb_ext.ExtImpPrebid`` writes it again: its own keys alone,
    in its order, the empty omitempty ones and the null ones left out."""
    return {
        key: prebid[key]
        for key, omit_empty in _EXT_IMP_PREBID_KEYS.items()
        if prebid.get(key) is not None and not (omit_empty and prebid[key] in ("", [], {}))
    }


# --- re-encoding -----------------------------------------------------------------------------------

# openrtb2.Bid: (JSON name, Go field, kind); id, impid and price are always written
_BID = (
    ("id", "ID", GoKind.STRING), ("impid", "ImpID", GoKind.STRING), ("price", "Price", GoKind.FLOAT),
    ("nurl", "NURL", GoKind.STRING), ("burl", "BURL", GoKind.STRING), ("lurl", "LURL", GoKind.STRING),
    ("adm", "AdM", GoKind.STRING), ("adid", "AdID", GoKind.STRING), ("adomain", "ADomain", GoKind.STRINGS),
    ("bundle", "Bundle", GoKind.STRING), ("iurl", "IURL", GoKind.STRING), ("cid", "CID", GoKind.STRING),
    ("crid", "CrID", GoKind.STRING), ("tactic", "Tactic", GoKind.STRING), ("cattax", "CatTax", GoKind.INT),
    ("cat", "Cat", GoKind.STRINGS), ("attr", "Attr", GoKind.INTS), ("apis", "APIs", GoKind.INTS),
    ("api", "API", GoKind.INT), ("protocol", "Protocol", GoKind.INT),
    ("qagmediarating", "QAGMediaRating", GoKind.INT), ("language", "Language", GoKind.STRING),
    ("langb", "LangB", GoKind.STRING), ("dealid", "DealID", GoKind.STRING), ("w", "W", GoKind.INT),
    ("h", "H", GoKind.INT), ("wratio", "WRatio", GoKind.INT), ("hratio", "HRatio", GoKind.INT),
    ("exp", "Exp", GoKind.INT), ("dur", "Dur", GoKind.INT), ("mtype", "MType", GoKind.INT),
    ("slotinpod", "SlotInPod", GoKind.INT), ("ext", "Ext", GoKind.RAW),
)  # fmt: skip
_BID_NAMES = tuple(name for name, _, _ in _BID)
_BID_ALWAYS = {"id": "", "impid": "", "price": 0}

# openrtb2.Video (OpenRTB 2.6): its omitempty value fields are left out when zero, its omitempty lists
# when empty, its pointers when null; only "mimes" is always written
_VIDEO_ZERO_OMITTED = frozenset({
    "minduration", "maxduration", "maxseq", "poddur", "protocol", "podid", "podseq", "placement", "plcmt",
    "linearity", "skipmin", "skipafter", "sequence", "slotinpod", "mincpmpersec", "maxextended", "minbitrate",
    "maxbitrate", "playbackend",
})  # fmt: skip
_VIDEO_LISTS = frozenset({
    "protocols", "rqddurs", "battr", "playbackmethod", "delivery", "companionad", "api", "companiontype",
    "poddedupe", "durfloors",
})  # fmt: skip
_VIDEO_FIELDS = _VIDEO_ZERO_OMITTED | _VIDEO_LISTS | {"startdelay", "w", "h", "skip", "boxingallowed", "pos", "ext"}

# Fields of openrtb2's media objects written even when absent (no omitempty): (object, field, zero)
_MEDIA_REQUIRED_FIELDS = (("video", "mimes", None), ("audio", "mimes", None), ("native", "request", ""))
# openrtb2.BidRequest's omitempty scalars, left out when zero
_REQUEST_OMITEMPTY = frozenset({"test", "at", "tmax", "allimps", "cattax"})


def go_bid(bid: Any) -> dict[str, Any]:
    """An answer's bid as PBS-Go holds it (decoded into ``openrtb2.Bid``, encoded again): unknown
    keys dropped, zero and empty optional fields left out, ``ext: null`` dropped, ``id``, ``impid``
    and ``price`` always written. A field of the wrong type raises JsonShapeError."""
    fields = go_fields(expect_object(bid, "[]openrtb2.Bid"), *_BID_NAMES)
    out: dict[str, Any] = {}
    for name, go_name, kind in _BID:
        value = go_value(fields.get(name), kind, f"openrtb2.Bid.{go_name}")
        if value is None or (not value and kind is not GoKind.RAW):
            if name in _BID_ALWAYS:
                out[name] = _BID_ALWAYS[name] if value is None else value
            continue
        out[name] = value
    return out


def go_video(video: Mapping[str, Any]) -> dict[str, Any]:
    """``video`` as PBS-Go writes a typed openrtb2.Video again: unknown keys dropped, zero values,
    empty lists and nulls of its omitempty fields left out, ``mimes`` written even when absent."""
    out: dict[str, Any] = {"mimes": video.get("mimes")}
    for key, value in video.items():
        if key not in _VIDEO_FIELDS or (value is None and key != "ext"):
            continue
        if (key in _VIDEO_ZERO_OMITTED and value in (0, "")) or (key in _VIDEO_LISTS and value == []):
            continue
        out[key] = value
    return out


def go_media_objects(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` as PBS-Go's typed Imp writes it again: a video or audio object without ``mimes``
    gets ``"mimes": null``, a native one without ``request`` gets ``"request": ""``. Returns
    ``imp`` itself when nothing changes (a shallow copy otherwise)."""
    out = imp
    for kind, name, zero in _MEDIA_REQUIRED_FIELDS:
        media = imp.get(kind)
        if isinstance(media, dict) and name not in media:
            if out is imp:
                out = dict(imp)
            out[kind] = {**media, name: zero}
    return out


def set_omitempty(obj: dict[str, Any], key: str, value: Any) -> None:
    """``obj[key] = value``, or no ``key`` at all when ``value`` is empty ("", 0, [], {}, null), as
    Go writes an ``omitempty`` field."""
    if value:
        obj[key] = value
    else:
        obj.pop(key, None)


def go_request_top(request: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``request`` without the zero-valued top-level scalars Go's typed
    BidRequest leaves out when it serialises again (``"test": 0`` and the like)."""
    return {key: value for key, value in request.items() if not (key in _REQUEST_OMITEMPTY and value == 0)}


# --- answers ---------------------------------------------------------------------------------------


class GoAnswer(NamedTuple):
    """An OpenRTB answer as PBS-Go's ``openrtb2.BidResponse``: its currency ("" when absent) and,
    per seatbid, its seat and its bids (each as ``go_bid`` gives it)."""

    cur: str
    seatbids: list[tuple[str, list[dict[str, Any]]]]

    @property
    def bids(self) -> list[dict[str, Any]]:
        """Every bid of the answer, seatbid by seatbid."""
        return [bid for _, bids in self.seatbids for bid in bids]


_ANSWER_KINDS = (
    ("id", "ID", GoKind.STRING),
    ("bidid", "BidID", GoKind.STRING),
    ("cur", "Cur", GoKind.STRING),
    ("customdata", "CustomData", GoKind.STRING),
    ("nbr", "NBR", GoKind.INT),
)


def go_answer(body: bytes) -> GoAnswer:
    """``body`` decoded as PBS-Go decodes a bid response (``jsonutil.Unmarshal``): an empty body or
    one that is not a JSON object fails with json-iterator's ``expect { or n, but found <c>``
    (JsonShapeError), ``null`` is an empty answer, members of the wrong type fail."""
    first = body.lstrip(_JSON_SPACE)[:1]
    if first not in (b"{", b"n"):
        raise JsonShapeError(f"expect {{ or n, but found {first.decode('latin-1') or chr(0)}")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(f"Bad response body: {exc}") from None
    fields = go_fields(expect_object(data, ""), "id", "seatbid", "bidid", "cur", "customdata", "nbr", "ext")
    for name, go_name, kind in _ANSWER_KINDS:
        go_value(fields.get(name), kind, f"openrtb2.BidResponse.{go_name}")
    seatbids = []
    for seatbid in go_list(fields.get("seatbid"), "openrtb2.BidResponse.SeatBid"):
        members = go_fields(expect_object(seatbid, "[]openrtb2.SeatBid"), "bid", "seat", "group", "ext")
        seat = go_value(members.get("seat"), GoKind.STRING, "openrtb2.SeatBid.Seat") or ""
        go_value(members.get("group"), GoKind.INT, "openrtb2.SeatBid.Group")
        bids = go_list(members.get("bid"), "openrtb2.SeatBid.Bid")
        seatbids.append((seat, [go_bid(bid) for bid in bids]))
    return GoAnswer(fields.get("cur") or "", seatbids)


def go_json_object(text: bytes | str) -> Any:
    """``text`` decoded as json-iterator decodes JSON into a Go struct or map: ``null`` is None; text
    that does not start (after JSON spaces) with ``{`` or ``n`` fails with ``expect { or n, but found
    <c>`` (the zero byte for none, a byte read as Latin-1), a syntax error with the parser's message
    (JsonShapeError both). The caller checks the value (``expect_object``, ``go_fields``...)."""
    if isinstance(text, bytes):
        first = text.lstrip(_JSON_SPACE)[:1].decode("latin-1")
    else:
        first = text.lstrip(" \t\n\r")[:1]
    if first not in ("{", "n"):
        raise JsonShapeError(NOT_AN_OBJECT.format(found=first or "\x00"))
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(str(exc)) from None


def decode_go_answer(
    response: ResponseData, wording: AnswerWording = DEFAULT_WORDING
) -> tuple[GoAnswer | None, list[BidderError]]:
    """``go_answer`` of a bidder's answer: (None, []) for 204, (None, [error]) for a failure status
    (worded by ``wording``) or an answer that does not decode (json-iterator's words)."""
    failure = wording.status_failure(response.status)
    if failure is not None:
        return None, failure
    try:
        return go_answer(response.body), []
    except JsonShapeError as exc:
        return None, [wording.body_failure(str(exc))]


def typed_bids(
    answer: GoAnswer,
    typed: Callable[[dict[str, Any]], TypedBid | BidderError | None],
    *,
    answer_currency: bool = True,
    first_error_fails: bool = False,
) -> tuple[BidderResponse | None, list[BidderError]]:
    """``common.typed_bid_response`` of the bids of ``answer``, seatbid by seatbid: the currency is
    the answer's (USD when it names none), or with ``answer_currency=False`` always USD."""
    currency = (answer.cur or "USD") if answer_currency else "USD"
    return typed_bid_response(answer.bids, typed, currency, first_error_fails=first_error_fails)


def go_typed_bids(
    response: ResponseData,
    typed: Callable[[dict[str, Any]], TypedBid | BidderError | None],
    wording: AnswerWording = DEFAULT_WORDING,
    *,
    answer_currency: bool = True,
    first_error_fails: bool = False,
) -> tuple[BidderResponse | None, list[BidderError]]:
    """make_bids of an adapter that types each bid on its own: ``decode_go_answer`` of the response
    (its failure as it is), then ``typed_bids`` of the answer."""
    answer, failure = decode_go_answer(response, wording)
    if answer is None:
        return None, failure
    return typed_bids(answer, typed, answer_currency=answer_currency, first_error_fails=first_error_fails)


# --- raw JSON text ---------------------------------------------------------------------------------

_JSON_TEXT_SPACE = re.compile(r"[ \t\n\r]*")
_PLAIN_DECODER = json.JSONDecoder()


def json_space_end(text: str, index: int) -> int:
    """The index past the JSON whitespace (space, tab, newline, return) that starts at ``index``."""
    return _JSON_TEXT_SPACE.match(text, index).end()  # type: ignore[union-attr]


def json_object_members(
    text: str, index: int, decoder: json.JSONDecoder = _PLAIN_DECODER
) -> Iterator[tuple[str, int, int]]:
    """The members of the JSON object whose ``{`` is at ``text[index]``, read lazily as Go's
    jsonparser reads them: (key, start, end) per member, ``text[start:end]`` its raw value (parsed
    by ``decoder``). Raises ValueError or IndexError where the text stops being an object, after
    the members before that point."""
    index = json_space_end(text, index + 1)
    if text[index] == "}":
        return
    while True:
        if text[index] != '"':
            raise ValueError("a key expected")
        key, index = scanstring(text, index + 1)
        index = json_space_end(text, index)
        if text[index] != ":":
            raise ValueError("':' expected")
        start = json_space_end(text, index + 1)
        _, end = decoder.raw_decode(text, start)
        yield key, start, end
        index = json_space_end(text, end)
        if text[index] == "}":
            return
        if text[index] != ",":
            raise ValueError("',' or '}' expected")
        index = json_space_end(text, index + 1)


def json_member_text(text: str, key: str) -> str | None:
    """The raw text of the first top-level member ``key`` of the JSON object ``text``, as Go's
    ``jsonparser.Get(text, key)`` finds it (a string with its quotes); None when it has none or
    ``text`` is no object. ValueError or IndexError where the object is malformed before it."""
    index = json_space_end(text, 0)
    if not text.startswith("{", index):
        return None
    return next((text[start:end] for name, start, end in json_object_members(text, index) if name == key), None)


def json_path_string(value: Any, *keys: str) -> str:
    """The string at ``keys`` in decoded JSON ``value``, as Go's ``jsonparser.GetString(data, keys...)``
    finds it; ValueError in its words where the path is missing or ends at no string."""
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise ValueError("Key path not found")
        value = value[key]
    if not isinstance(value, str):
        raise ValueError(f"Value is not a string: {orjson.dumps(value).decode()}")
    return value


# --- numbers and URLs ------------------------------------------------------------------------------


def go_parse_float(text: str) -> float | None:
    """Go's ``strconv.ParseFloat(text, 64)`` (:func:`hbserver.numbers.parse_float`): None where it
    fails (bad syntax, or out of range)."""
    try:
        return parse_float(text)
    except NumberError:
        return None


def go_float_text(value: float) -> str:
    """A float as Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` writes it: the shortest digits that
    read back the same, never an exponent (``12345678``, ``1.5``, ``0.0001``)."""
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def go_float_v(value: float) -> str:
    """A float64 as Go's ``fmt`` prints it with ``%v`` (strconv's shortest ``'g'``): the shortest
    digits that read back the same, in exponent form (``1.5e+06``, ``1e-05``) outside
    1e-4 <= |x| < 1e6."""
    if value == 0:
        return "0"
    number = Decimal(repr(value)).normalize()
    sign, digits, exp = number.as_tuple()
    text = "".join(map(str, digits))
    exponent = len(text) + int(exp) - 1  # the power of ten of the first digit
    if -4 <= exponent < 6:
        return format(number, "f")
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def json_number_text(value: Any, failure: str) -> str:
    """A ``json.Number`` field as json-iterator reads it: a string as given (unchecked), null as "",
    a number as its text (a float in Python's shortest form: the literal's own text is gone once
    decoded); anything else fails with ``failure`` as the JsonShapeError's message."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JsonShapeError(failure)
    return str(value)


# the JSON number grammar Go's encoding/json checks a json.Number against before writing it
_JSON_NUMBER_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")


def is_json_number(text: str) -> bool:
    """Whether ``text`` is a JSON number literal, as encoding/json checks a ``json.Number`` before
    writing it (``json: invalid number literal`` otherwise; "" is written as 0 and not checked)."""
    return _JSON_NUMBER_LITERAL.match(text) is not None


def json_number_int64(text: str) -> int:
    """A ``json.Number``'s ``Int64()``: Go's ``strconv.ParseInt(text, 10, 64)``; JsonShapeError (a
    ValueError) in its words."""
    try:
        return parse_int(text, INT64)
    except NumberError as exc:
        raise JsonShapeError(f"strconv.ParseInt: parsing {go_quote(text)}: {exc.reason}") from None


def go_string_int(value: Any) -> int | None:
    """``value`` as PBS-Go's ``jsonutil.StringInt`` reads it: a JSON integer, or a string of an
    optional ``-`` and ASCII digits (jsonparser.ParseInt; "" is 0), within int64. None for a value
    of another type (null included: callers differ there); NumberError for text or a number it
    refuses."""
    if isinstance(value, str):
        return parse_int(value, INT64, signs="-") if value else 0
    if isinstance(value, int) and not isinstance(value, bool):
        return check_int(value, INT64)
    return None


AUCTION_PRICE = "${AUCTION_PRICE}"


def with_auction_price(bid: Mapping[str, Any], fields: tuple[str, ...] = ("nurl", "adm", "burl")) -> dict[str, Any]:
    """A copy of ``bid`` with ``${AUCTION_PRICE}`` in its string ``fields`` replaced by its price as
    Go's ``strconv.FormatFloat(price, 'f', -1, 64)`` writes it (``go_float_text``)."""
    out = dict(bid)
    price = None
    for name in fields:
        text = out.get(name)
        if isinstance(text, str) and AUCTION_PRICE in text:
            price = price or go_float_text(out.get("price") or 0)
            out[name] = text.replace(AUCTION_PRICE, price)
    return out


def with_query_param(endpoint: str, name: str, value: str) -> str:
    """``endpoint`` with ``name=value`` added to its query, the query re-encoded as Go's
    ``url.Values.Encode`` does: keys sorted (the values of one key keep their order), escaped as a
    form. Raises ValueError where ``urlsplit`` does."""
    parts = urlsplit(endpoint)
    pairs = [*parse_qsl(parts.query, keep_blank_values=True), (name, value)]
    pairs.sort(key=lambda pair: pair[0])
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def with_query_value(endpoint: str, name: str, value: str) -> str:
    """``endpoint`` with its query parameter ``name`` set to ``value`` (any earlier values of it
    replaced), the query re-encoded: Go's ``url.Values.Set`` and ``Encode`` (see
    ``with_query_param``). Raises ValueError where ``urlsplit`` does."""
    parts = urlsplit(endpoint)
    pairs = [pair for pair in parse_qsl(parts.query, keep_blank_values=True) if pair[0] != name]
    pairs.append((name, value))
    pairs.sort(key=lambda pair: pair[0])
    return urlunsplit(parts._replace(query=urlencode(pairs)))


# The characters Go's strings.TrimSpace removes (unicode.IsSpace): ``text.strip(GO_SPACE)``. Python's
# str.strip() would also remove \x1c-\x1f, which Go keeps.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


# openrtb2.Imp: the omitempty fields Go leaves out when zero, and its pointer fields (left out when null)
_IMP_ZERO_OMITTED = frozenset({
    "metric", "displaymanager", "displaymanagerver", "instl", "tagid", "bidfloor", "bidfloorcur",
    "iframebuster", "rwdd", "ssai", "exp", "dt",
})  # fmt: skip
_IMP_POINTERS = frozenset({"banner", "video", "audio", "native", "pmp", "clickbrowser", "secure", "qty", "refresh"})
_IMP_FIELDS = frozenset({
    "id", "metric", "banner", "video", "audio", "native", "pmp", "displaymanager", "displaymanagerver", "instl",
    "tagid", "bidfloor", "bidfloorcur", "clickbrowser", "secure", "iframebuster", "rwdd", "ssai", "exp", "qty",
    "dt", "refresh", "ext",
})  # fmt: skip


def go_imp(imp: dict[str, Any], *, known_only: bool = False) -> dict[str, Any]:
    """A copy of ``imp`` as PBS-Go's typed Imp writes it again: its omitempty fields left out when
    zero (a null pointer), ``mimes``/``request`` written in media objects, the video re-encoded.
    ``known_only``: all of the Imp's way, keys that name none of its fields and nulls dropped, ``id``
    written first and always (an adapter that re-encodes the whole imp, e.g. beachfront's)."""
    if known_only:
        imp = {"id": imp.get("id", "")} | {
            key: value for key, value in imp.items() if key in _IMP_FIELDS and key != "id" and value is not None
        }
    out = {
        key: value
        for key, value in go_media_objects(imp).items()
        if not ((key in _IMP_ZERO_OMITTED and not value) or (key in _IMP_POINTERS and value is None))
    }
    video = out.get("video")
    if isinstance(video, dict):
        out["video"] = go_video(video)
    return out


# openrtb2.Device: its pointer and raw fields (left out only when null) and the rest, left out when zero
_DEVICE_POINTERS = frozenset({"geo", "dnt", "lmt", "sua", "js", "geofetch", "connectiontype", "ext"})
_DEVICE_VALUES = frozenset({
    "ua", "ip", "ipv6", "devicetype", "make", "model", "os", "osv", "hwv", "h", "w", "ppi", "pxratio",
    "flashver", "language", "langb", "carrier", "mccmnc", "ifa", "didsha1", "didmd5", "dpidsha1", "dpidmd5",
    "macsha1", "macmd5",
})  # fmt: skip
DEVICE_FIELDS = _DEVICE_POINTERS | _DEVICE_VALUES


def go_device(device: Mapping[str, Any]) -> dict[str, Any]:
    """``device`` as PBS-Go's typed openrtb2.Device writes it again, one level deep: unknown keys
    dropped, nulls and zero values ("", 0) of its omitempty fields left out (nested objects as given)."""
    return {
        key: value
        for key, value in device.items()
        if (key in _DEVICE_POINTERS and value is not None) or (key in _DEVICE_VALUES and value not in ("", 0, None))
    }


_GO_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` writes it (``strconv.Quote``): printable characters kept, quotes and
    backslashes escaped, the usual C escapes, ``\\xNN`` / ``\\uNNNN`` for other unprintable ones."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in _GO_QUOTE_ESCAPES:
            out.append(_GO_QUOTE_ESCAPES[char])
        elif char.isprintable() or char == " ":
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


# What Go's encoding/json escapes in the strings it writes: json.Marshal's HTML-safe set, and the two
# line separators it escapes even with SetEscapeHTML(false)
GO_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                 "\u2029": "\\u2029"})  # fmt: skip
_GO_LINE_ESCAPES = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})


def go_json_text(value: Any, *, escape_html: bool = True) -> str:
    """``value`` as compact JSON text the way Go's encoding/json escapes it: ``<``, ``>`` and ``&``
    as ``\\u003c``... (``json.Marshal``; not with ``escape_html=False``, an Encoder's
    ``SetEscapeHTML(false)``), U+2028 and U+2029 always."""
    text = orjson.dumps(value).decode()
    return text.translate(GO_HTML_ESCAPES if escape_html else _GO_LINE_ESCAPES)


# --- a whole request re-encoded --------------------------------------------------------------------

# openrtb2's fields without omitempty (openrtb v20.3.0): written even when zero or absent
_TYPED_ALWAYS = frozenset({
    ("openrtb2.BidRequest", "id"), ("openrtb2.BidRequest", "imp"), ("openrtb2.Imp", "id"),
    ("openrtb2.Video", "mimes"), ("openrtb2.Audio", "mimes"), ("openrtb2.Native", "request"),
    ("openrtb2.Deal", "id"), ("openrtb2.Metric", "type"), ("openrtb2.BrandVersion", "brand"),
    ("openrtb2.SupplyChain", "complete"), ("openrtb2.SupplyChain", "nodes"), ("openrtb2.SupplyChain", "ver"),
    ("openrtb2.SupplyChainNode", "asi"), ("openrtb2.SupplyChainNode", "sid"),
})  # fmt: skip
_TYPED_ZERO = {"string": "", "bool": False}


def _typed_value(value: Any, go_type: str) -> Any:
    """``value`` as Go writes a field of ``go_type`` again (None: the zero value of a pointer, slice
    or raw message); a value of another JSON type is kept as it is."""
    from hbserver.auction.request.ortb_schema import NAMED, STRUCTS

    go_type = NAMED.get(go_type, go_type)
    if go_type.startswith("*"):
        return None if value is None else _typed_value(value, go_type[1:])
    if go_type.startswith("[]"):
        if not isinstance(value, list):
            return value
        return [_typed_value(item, go_type[2:]) for item in value]
    if go_type in STRUCTS:
        return _typed_struct(value, go_type) if isinstance(value, dict) else value
    if value is None:
        return None if go_type.startswith(("map[", "json.")) else _TYPED_ZERO.get(go_type, 0)
    return value


def _typed_struct(obj: dict[str, Any], struct: str) -> dict[str, Any]:
    from hbserver.auction.request.ortb_schema import NAMED, STRUCTS

    fields = STRUCTS[struct]
    types = {name: go_type for name, _, go_type in fields}
    given = go_fields(obj, *types)
    out: dict[str, Any] = {}
    for name, _, go_type in fields:
        value = _typed_value(given.get(name), go_type)
        if (struct, name) in _TYPED_ALWAYS or not _typed_omitted(value, NAMED.get(go_type, go_type)):
            out[name] = value
    return out


def _typed_omitted(value: Any, go_type: str) -> bool:
    """Whether Go's omitempty leaves out ``value`` of ``go_type``: a null pointer or raw message,
    an empty slice or map, a zero number, an empty string, false."""
    if value is None:
        return True
    if go_type.startswith("*") or go_type == "json.RawMessage":
        return False
    if isinstance(value, bool):
        return not value
    return value in ("", 0) or (isinstance(value, list | dict) and not value)


def go_typed_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` as PBS-Go writes a typed ``openrtb2.BidRequest`` again, all the way down: keys
    matched to fields ignoring case (``deviceType`` becomes ``devicetype``), unknown keys dropped,
    zero values of omitempty fields left out (``"coppa": 0``, ``"api": []``) while pointers keep
    theirs (``"gdpr": 0``, ``"dnt": 0``), raw ``ext`` objects kept as they are."""
    return _typed_struct(dict(request), "openrtb2.BidRequest")


# --- raw messages ----------------------------------------------------------------------------------


class RawObject(dict):  # type: ignore[type-arg]
    """A JSON object that keeps the text it was read from, as Go's ``json.RawMessage`` does; PBS-Go's
    encoder (jsoniter, behind ``jsonutil.Marshal``) writes such a value back byte for byte, spaces and
    all. hbserver's request reader makes plain dicts (Prebid's clients send compact JSON); a reader
    that keeps the text (the conformance harness's, like Go's) makes these."""

    __slots__ = ("raw_json",)

    def __init__(self, items: Mapping[str, Any], raw_json: str) -> None:
        super().__init__(items)
        self.raw_json = raw_json


def raw_message_text(value: Any) -> str:
    """``value`` as jsoniter writes a ``json.RawMessage``: the text it was read from when it kept it,
    else compact JSON."""
    raw = getattr(value, "raw_json", None)
    return raw if isinstance(raw, str) else orjson.dumps(value).decode()
