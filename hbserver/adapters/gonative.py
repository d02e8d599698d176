"""PBS-Go's native 1.2 response types (``github.com/prebid/openrtb/v20/native1/response``) for the
adapters that decode a native bid's markup into them and encode it again (outbrain, ix).

``decode_native_response`` reads markup's object as json-iterator decodes it into
``response.Response``: keys matched ignoring case, unknown keys dropped, a null leaving a number or a
struct as it was, a value of the wrong type failing in PBS-Go's words (JsonShapeError).
``encode_native_response`` writes the values back as encoding/json does: Go's field order, an
``omitempty`` field left out when empty, a pointer only when nil; ``go_json_text`` makes the text.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hbserver.adapters.common import expect_object, expect_string
from hbserver.adapters.golike import go_list, go_members, go_read_int, go_strings


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
# native1.EventType / EventTrackingMethod values
EVENT_IMPRESSION, METHOD_IMAGE, METHOD_JS = 1, 1, 2


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
        return go_strings(value, where)
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
    """A Go int64/int8 field's value, out of range worded as PBS-Go's error extraction words it."""
    return go_read_int(value, where, 8 if kind == _INT8 else 64)


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


def decode_native_response(data: Any) -> dict[str, Any]:
    """``data`` (a decoded JSON value) as ``response.Response``: its values by JSON name, nested
    structs as dicts, nil as None; JsonShapeError in PBS-Go's words where it does not decode."""
    return _decode_into(expect_object(data, ""), _RESPONSE, {})


def encode_native_response(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (as ``decode_native_response`` gives them) as Go writes ``response.Response``."""
    return _encode(values, _RESPONSE)
