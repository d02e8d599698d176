"""Outbrain adapter: the whole request in one OpenRTB call to ``prebidtest.zemanta.com/api/bidder/prebidtest/bid/``.

The params of all imps are read, in imp order, into one set of values, as PBS-Go decodes them all into
one struct: a value an imp does not name stays as an earlier imp left it. An imp whose params hold a
``tagid`` (its own or an earlier imp's) gets it as ``imp.tagid``. After the last imp, ``publisher``
(``id``, ``name``, ``domain``) replaces ``site.publisher`` (else ``app.publisher``) whole, and
``bcat``/``badv``, when given, replace the request's. An imp whose ``ext`` or params cannot be read
is sent unchanged (the values read before the faulty one still count), and no error is reported:
PBS-Go's adapter drops those errors. The call has no headers of its own.

Bids are native, banner or video by their imp (in that order); a bid for no such imp is an error.
A native bid's markup is read as a native 1.2 response whose impression event trackers are turned
into the 1.1 fields the bidder's renderer reads (image pixels into ``imptrackers``, a script into
``jstracker``), all event trackers dropped, and written again as PBS-Go writes it (its field order,
empty fields left out, ``<``, ``>`` and ``&`` escaped); markup that cannot be read drops the bid with
an error.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    PUBLISHER_WORDING,
    JsonShapeError,
    any_imp_bid_type,
    expect_object,
    expect_string,
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import (
    GoIntOverflow,
    go_json_object,
    go_json_text,
    go_list,
    go_media_objects,
    go_members,
    go_request_top,
    go_sized_int,
    go_typed_bids,
    imp_bidder_params,
    set_omitempty,
)

_ANSWER_WORDING = PUBLISHER_WORDING
_MEDIA_ORDER = ("native", "banner", "video")


# --- params ------------------------------------------------------------------------------------------


class _Unreadable(ValueError):
    """Params of the wrong JSON type: PBS-Go drops the error and skips the imp, keeping what it read."""


class _Params:
    """``openrtb_ext.ExtImpOutbrain`` as the imps' params leave it, one imp after another.

    Like json-iterator, a string field given another type is left empty, a list or object given
    another type is left as it was, and a list stops at an item of another type (that item empty).
    Reading stops at the first such value; json-iterator sometimes reads on past it (after a value
    of one character), which is not reproduced."""

    __slots__ = ("badv", "bcat", "publisher", "tagid")

    def __init__(self) -> None:
        self.publisher = {"id": "", "name": "", "domain": ""}
        self.tagid = ""
        self.bcat: list[str] | None = None
        self.badv: list[str] | None = None

    def read(self, params: dict[str, Any]) -> None:
        """Take ``params`` over the values held, key by key in document order (keys match ignoring
        case); _Unreadable at the first value of the wrong type."""
        for name, value in go_members(params, "publisher", "tagid", "bcat", "badv"):
            if name == "publisher":
                ok = self._read_publisher(value)
            elif name == "tagid":
                self.tagid, ok = _go_string(value)
            else:
                strings, ok = _go_strings(value, getattr(self, name))
                setattr(self, name, strings)
            if not ok:
                raise _Unreadable(name)

    def _read_publisher(self, value: Any) -> bool:
        if value is None:  # null leaves a Go struct as it is
            return True
        if not isinstance(value, dict):
            return False
        for field, text in go_members(value, *self.publisher):
            self.publisher[field], ok = _go_string(text)
            if not ok:
                return False
        return True

    def publisher_object(self) -> dict[str, str]:
        """The ``openrtb2.Publisher`` PBS-Go writes: the non-empty ones of id, name and domain."""
        return {key: value for key, value in self.publisher.items() if value}


def _go_string(value: Any) -> tuple[str, bool]:
    """What json-iterator leaves in a Go string field given ``value``, and whether it read it: null
    is "", another type leaves "" and fails."""
    if isinstance(value, str):
        return value, True
    return "", value is None


def _go_strings(value: Any, current: list[str] | None) -> tuple[list[str] | None, bool]:
    """What json-iterator leaves in a Go ``[]string`` field holding ``current`` given ``value``, and
    whether it read it: null is nil, a null item "", a value that is no list leaves ``current``."""
    if value is None:
        return None, True
    if not isinstance(value, list):
        return current, False
    out = []
    for item in value:
        text, ok = _go_string(item)
        out.append(text)
        if not ok:
            return out, False
    return out, True


def _strings(value: Any, where: str) -> list[str] | None:
    """A native response's ``[]string`` field (``where`` names it): null is nil, a null item is "";
    an item of another type fails naming the slice type, as PBS-Go's text does."""
    if value is None:
        return None
    return [expect_string(item, "[]string") for item in go_list(value, where)]


# --- native markup -----------------------------------------------------------------------------------


class _F(NamedTuple):
    """One field of a native response type: its JSON name, Go name, kind and whether it is written
    when empty (no ``omitempty``)."""

    name: str
    go: str
    kind: Any
    always: bool = False


class _Struct:
    """A Go struct type: its name (for error texts) and its fields in the order Go writes them."""

    __slots__ = ("by_name", "fields", "go_type", "names")

    def __init__(self, go_type: str, fields: tuple[_F, ...]) -> None:
        self.go_type = go_type
        self.fields = fields
        self.names = tuple(field.name for field in fields)
        self.by_name = {field.name: field for field in fields}


class _Ptr(NamedTuple):
    elem: Any


class _Slice(NamedTuple):
    elem: _Struct


_STR, _INT, _INT8, _STRS, _RAW = "string", "int64", "int8", "[]string", "raw"

# github.com/prebid/openrtb/v20/native1/response (field order as Go writes them)
_LINK = _Struct("response.Link", (
    _F("url", "URL", _STR, True), _F("clicktrackers", "ClickTrackers", _STRS), _F("fallback", "Fallback", _STR),
    _F("ext", "Ext", _RAW),
))  # fmt: skip
_TITLE = _Struct("response.Title", (_F("text", "Text", _STR, True), _F("len", "Len", _INT), _F("ext", "Ext", _RAW)))
_IMAGE = _Struct("response.Image", (
    _F("type", "Type", _INT), _F("url", "URL", _STR, True), _F("w", "W", _INT), _F("h", "H", _INT),
    _F("ext", "Ext", _RAW),
))  # fmt: skip
_VIDEO = _Struct("response.Video", (_F("vasttag", "VASTTag", _STR, True),))
_DATA = _Struct("response.Data", (
    _F("type", "Type", _INT), _F("len", "Len", _INT), _F("label", "Label", _STR), _F("value", "Value", _STR, True),
    _F("ext", "Ext", _RAW),
))  # fmt: skip
_ASSET = _Struct("response.Asset", (
    _F("id", "ID", _Ptr(_INT)), _F("required", "Required", _INT8), _F("title", "Title", _Ptr(_TITLE)),
    _F("img", "Img", _Ptr(_IMAGE)), _F("video", "Video", _Ptr(_VIDEO)), _F("data", "Data", _Ptr(_DATA)),
    _F("link", "Link", _Ptr(_LINK)), _F("ext", "Ext", _RAW),
))  # fmt: skip
_TRACKER = _Struct("response.EventTracker", (
    _F("event", "Event", _INT, True), _F("method", "Method", _INT, True), _F("url", "URL", _STR),
    _F("customdata", "CustomData", _RAW), _F("ext", "Ext", _RAW),
))  # fmt: skip
_RESPONSE = _Struct("response.Response", (
    _F("ver", "Ver", _STR), _F("assets", "Assets", _Slice(_ASSET)), _F("assetsurl", "AssetsURL", _STR),
    _F("dcourl", "DCOURL", _STR), _F("link", "Link", _LINK, True), _F("imptrackers", "ImpTrackers", _STRS),
    _F("jstracker", "JSTracker", _STR), _F("eventtrackers", "EventTrackers", _Slice(_TRACKER)),
    _F("privacy", "Privacy", _STR), _F("ext", "Ext", _RAW),
))  # fmt: skip
_EVENT_IMPRESSION, _METHOD_IMAGE, _METHOD_JS = 1, 1, 2


def _zero(kind: Any) -> Any:
    if kind == _STR:
        return ""
    if kind in (_INT, _INT8):
        return 0
    if isinstance(kind, _Struct):
        return _decode_into({}, kind, {})
    return None  # nil pointer, slice or raw message


def _decode_into(data: dict[str, Any], struct: _Struct, out: dict[str, Any]) -> dict[str, Any]:
    """``data`` decoded over ``out`` (a Go struct's values by JSON name) as json-iterator does: keys
    matched ignoring case, null leaving numbers and structs as they are; JsonShapeError (PBS-Go's
    text) at the first value of the wrong type."""
    for field in struct.fields:
        out.setdefault(field.name, _zero(field.kind))
    for name, value in go_members(data, *struct.names):
        field = struct.by_name[name]
        out[name] = _decode_value(value, field.kind, f"{struct.go_type}.{field.go}", out[name])
    return out


def _decode_value(value: Any, kind: Any, where: str, current: Any) -> Any:
    if isinstance(kind, _Ptr):
        if value is None:
            return None
        return _decode_value(value, kind.elem, where, current if current is not None else _zero(kind.elem))
    if kind == _STR:
        return expect_string(value, where)
    if kind in (_INT, _INT8):
        return current if value is None else _go_integer(value, where, kind)
    if kind == _STRS:
        return _strings(value, where)
    if kind == _RAW:
        return value
    if isinstance(kind, _Slice):
        if value is None:
            return None
        item_where = f"[]{kind.elem.go_type}"
        return [_decode_into(expect_object(item, item_where), kind.elem, {}) for item in go_list(value, where)]
    if value is None:
        return current
    return _decode_into(expect_object(value, where), kind, current)


def _go_integer(value: Any, where: str, kind: str) -> int:
    """A Go int64/int8 field's value; out of range fails as json-iterator's ReadInt8/ReadInt64 words it
    (PBS-Go's error extraction keeps the reader's name, as ``overflow`` reads to it like a layer)."""
    try:
        return go_sized_int(value, where, 8 if kind == _INT8 else 64)
    except GoIntOverflow as exc:
        raise JsonShapeError(f"cannot unmarshal ReadInt{exc.bits}: {abs(exc.number)}") from None


def _encode(values: dict[str, Any], struct: _Struct) -> dict[str, Any]:
    """A struct's values as Go's encoding/json writes them: in field order, an ``omitempty`` field
    left out when empty (a pointer only when nil)."""
    out: dict[str, Any] = {}
    for field in struct.fields:
        value, kind = values[field.name], field.kind
        if isinstance(kind, _Ptr):
            if value is not None:
                out[field.name] = _encode(value, kind.elem) if isinstance(kind.elem, _Struct) else value
        elif isinstance(kind, _Struct):
            out[field.name] = _encode(value, kind)
        elif isinstance(kind, _Slice):
            if value:
                out[field.name] = [_encode(item, kind.elem) for item in value]
        elif field.always or (value if kind != _RAW else value is not None):
            out[field.name] = value
    return out


def _native_markup(adm: str) -> str:
    """The native markup with its impression trackers moved to the 1.1 fields, written again as PBS-Go
    writes it; JsonShapeError (PBS-Go's text) when it does not decode as a native response."""
    values = _decode_into(expect_object(go_json_object(adm), ""), _RESPONSE, {})
    for tracker in values["eventtrackers"] or ():
        if tracker["event"] != _EVENT_IMPRESSION:
            continue
        if tracker["method"] == _METHOD_IMAGE:
            values["imptrackers"] = [*(values["imptrackers"] or ()), tracker["url"]]
        elif tracker["method"] == _METHOD_JS:
            values["jstracker"] = f'<script src="{tracker["url"]}"></script>'
    values["eventtrackers"] = None
    return go_json_text(_encode(values, _RESPONSE))


# --- adapter -----------------------------------------------------------------------------------------


def _typed(imps: list[dict[str, Any]], bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by the first imp of its id that asks for native, banner or video (native first),
    a native bid's markup rewritten."""
    bid_type = any_imp_bid_type(imps, bid["impid"], _MEDIA_ORDER)
    if bid_type is None:
        return bad_input(f'Failed to find native/banner/video impression "{bid["impid"]}" ')
    if bid_type == "native":
        try:
            bid = {**bid, "adm": _native_markup(bid.get("adm", ""))}
        except JsonShapeError as exc:
            return BidderError(str(exc))
    return TypedBid(bid, bid_type)


class OutbrainAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        params = _Params()
        imps = []
        for imp in request.get("imp") or ():
            try:
                params.read(imp_bidder_params(imp, null_is_absent=True))
            except (JsonShapeError, _Unreadable):
                imps.append(go_media_objects(imp))  # PBS-Go drops this error and sends the imp as it is
                continue
            if params.tagid:
                imp = {**imp, "tagid": params.tagid}
            imps.append(go_media_objects(imp))
        body = go_request_top(request)
        body["imp"] = imps
        for place in ("site", "app"):
            if isinstance(request.get(place), dict):
                body[place] = {**request[place], "publisher": params.publisher_object()}
                break
        if params.bcat is not None:
            set_omitempty(body, "bcat", params.bcat)
        if params.badv is not None:
            set_omitempty(body, "badv", params.badv)
        return [json_call(self.endpoint, body, imp_ids(imps), {})], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, partial(_typed, request.get("imp") or []), _ANSWER_WORDING)


def build(config: AdapterConfig) -> OutbrainAdapter:
    return OutbrainAdapter(config)
