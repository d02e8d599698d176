"""Native requests validated as PBS-Go's ``fillAndValidateNative`` does (``ortb/request_validator_native.go``).

``imp.native.request`` is a JSON string holding an OpenRTB Native 1.x request. PBS-Go decodes it into
its ``native1/request.Request`` struct (json-iterator, standard-library mode), checks context,
contextsubtype, plcmttype, the assets and the event trackers with its own texts, gives the assets
ids 0..n-1 when none has one, and hands the bidders the re-encoded payload.

What is carried over from the decoding, because it changes outcomes:

* keys match struct fields ignoring case; unknown keys are ignored, so the Native 1.0 "wrapped"
  form ``{"native": {...}}`` has no assets and is refused (PBS-Java refuses it the same way);
* ``null`` counts as absent (a ``null`` asset or tracker is an empty object);
* a value of the wrong type fails the whole payload before any rule runs, in json-iterator's words;
* a string that is no JSON object fails in json-iterator's words (``expect { or n, but found a``).

Unlike PBS-Go the payload is not re-encoded from a struct (which drops unknown keys and re-orders
fields): the publisher's string is kept, and only rewritten when asset ids were assigned.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from hbserver.auction.common.request_error import RequestError
from hbserver.auction.request.ortb_types import native_request_text_error, native_request_type_error

# types at or above this value are exchange specific and always accepted (openrtb_ext)
EXCHANGE_SPECIFIC = 500

_SPEC = "https://iabtechlab.com/wp-content/uploads/2016/07/OpenRTB-Native-Ads-Specification-Final-1.2.pdf"
_ORTB25 = "https://www.iab.com/wp-content/uploads/2016/03/OpenRTB-API-Specification-Version-2-5-FINAL.pdf"
_JSON_SPACE = " \t\n\r"


def _type_problem(payload: Any, imp_index: int) -> str | None:
    """The first value (in document order) PBS-Go could not decode into its native request struct, in
    json-iterator's words (:mod:`hbserver.auction.request.ortb_types`; PBS-Go adds no prefix)."""
    return native_request_type_error(payload)


# --- decoding the string ------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_LENIENT = json.JSONDecoder(parse_constant=_reject_constant)


def _go_char(char: str) -> str:
    """json-iterator prints the first byte of the offending character; a non-ASCII character's first byte
    is no text on its own, so it reads as the replacement character."""
    return char if char < "\x80" else "\ufffd"


def _decode(text: str, imp_index: int) -> tuple[dict[str, Any] | None, bool]:
    """(payload, bytes left after it). ``null`` is Go's zero struct. orjson reads the common case; the
    standard library takes over for what orjson refuses but Go reads (lone surrogate escapes, numbers
    beyond a double) and finds where a first complete value ends."""
    if text[:1] == "{":
        try:
            return orjson.loads(text), False
        except orjson.JSONDecodeError:
            pass
    problem = native_request_text_error(text)  # json-iterator's text for a string it cannot decode
    if problem is not None:
        raise RequestError(problem)
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    first = text[start] if start < len(text) else "\x00"
    if first == "n":
        if not text.startswith("null", start):
            raise RequestError("expect ull")
        return None, bool(text[start + 4 :].strip(_JSON_SPACE))
    if first != "{":
        raise RequestError(f"expect {{ or n, but found {_go_char(first)}")
    try:
        payload, end = _LENIENT.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise RequestError(
            f"request.imp[{imp_index}].native.request is not valid JSON: {exc.msg} at character {exc.pos}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"request.imp[{imp_index}].native.request is not valid JSON: {exc}") from None
    return payload, bool(text[end:].strip(_JSON_SPACE))


def _encode(payload: dict[str, Any]) -> str:
    try:
        return orjson.dumps(payload).decode()
    except (orjson.JSONEncodeError, TypeError):  # a lone surrogate (read by the standard library): keep it escaped
        return json.dumps(payload, separators=(",", ":"))


def _members(obj: Any, names: frozenset[str]) -> dict[str, Any]:
    """The struct fields ``names`` as Go decodes them from ``obj``: keys match ignoring case, a later key
    overrides an earlier one, anything but an object (``null``) is the zero struct."""
    if type(obj) is not dict:
        return {}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key not in names:
            key = key.lower()
            if key not in names:
                continue
        out[key] = value
    return out


def _int(value: Any) -> int:
    """An integer field as the rules read it: null is Go's 0. Values of another type never reach the rules
    (``_type_problem`` refuses them first); should one slip through, it reads as 0 rather than crashing."""
    return value if type(value) is int else 0


_REQUEST_KEYS = frozenset({"context", "contextsubtype", "plcmttype", "assets", "eventtrackers"})
_ASSET_KEYS = frozenset({"id", "title", "img", "video", "data"})
_TITLE_KEYS = frozenset({"len"})
_IMAGE_KEYS = frozenset({"w", "h", "wmin", "hmin"})
_VIDEO_KEYS = frozenset({"mimes", "minduration", "maxduration", "protocols"})
_DATA_KEYS = frozenset({"type"})
_TRACKER_KEYS = frozenset({"event", "methods"})


# --- the rules ----------------------------------------------------------------------------------------


def _check_context(ctype: int, subtype: int, imp: int) -> None:
    if ctype == 0:  # context is only recommended
        return
    if ctype < 1 or 3 < ctype < EXCHANGE_SPECIFIC:
        raise RequestError(f"request.imp[{imp}].native.request.context is invalid. See {_SPEC}#page=39")
    if subtype < 0:
        raise RequestError(
            f"request.imp[{imp}].native.request.contextsubtype value can't be less than 0. See {_SPEC}#page=39"
        )
    if subtype == 0 or subtype >= EXCHANGE_SPECIFIC:
        return
    # content subtypes 10-15 go with context 1, social 20-22 with 2, product 30-32 with 3
    for low, high, wanted in ((10, 15, 1), (20, 22, 2), (30, 32, 3)):
        if low <= subtype <= high:
            if ctype != wanted and ctype < EXCHANGE_SPECIFIC:
                raise RequestError(
                    f"request.imp[{imp}].native.request.context is {ctype}, but contextsubtype is {subtype}. "
                    f"This is an invalid combination. See {_SPEC}#page=39"
                )
            return
    raise RequestError(f"request.imp[{imp}].native.request.contextsubtype is invalid. See {_SPEC}#page=39")


_MIXED = " must define exactly one of {title, img, video, data}"


def _asset_problem(asset: dict[str, Any]) -> str | None:
    """What is wrong with one asset, as the end of PBS-Go's text after ``...assets[i]``. Exactly one of
    title, img, video, data; PBS-Go checks the first kind it finds before it looks for a second one."""
    title, img, video, data = asset.get("title"), asset.get("img"), asset.get("video"), asset.get("data")
    kinds = (title is not None) + (img is not None) + (video is not None) + (data is not None)
    if kinds == 0:
        return _MIXED
    if title is not None:
        if _int(_members(title, _TITLE_KEYS).get("len")) < 1:
            return ".title.len must be a positive number"
    elif img is not None:
        sizes = _members(img, _IMAGE_KEYS)
        for key in ("w", "h", "wmin", "hmin"):
            if _int(sizes.get(key)) < 0:
                return f".img.{key} must be a positive integer"
    elif video is not None:
        problem = _video_problem(_members(video, _VIDEO_KEYS))
        if problem is not None:
            return problem
    else:
        dtype = _int(_members(data, _DATA_KEYS).get("type"))
        if dtype < 1 or 12 < dtype < EXCHANGE_SPECIFIC:
            return f".data.type is invalid. See section 7.4: {_SPEC}#page=40"
    return _MIXED if kinds > 1 else None


def _video_problem(video: dict[str, Any]) -> str | None:
    if not video.get("mimes"):
        return ".video.mimes must be an array with at least one MIME type"
    for key in ("minduration", "maxduration"):
        if _int(video.get(key)) < 1:
            return f".video.{key} must be a positive integer"
    protocols = video.get("protocols")
    if type(protocols) is not list or not protocols:
        return ".video.protocols must be an array with at least one element"
    for index, protocol in enumerate(protocols):
        if not 1 <= _int(protocol) <= 10:  # VAST 1.0 .. DAAST 1.0 Wrapper; PBS-Go stops before VAST 4.1
            return f".video.protocols[{index}] is invalid. See Section 5.8: {_ORTB25}#page=52"
    return None


def _check_assets(assets: Any, imp: int) -> bool:
    """Checks the assets; True when none has an id, so PBS-Go numbers them 0..n-1."""
    if type(assets) is not list or not assets:
        raise RequestError(f"request.imp[{imp}].native.request.assets must be an array containing at least one object")
    members = [_members(asset, _ASSET_KEYS) for asset in assets]
    assign = not any(_int(asset.get("id")) for asset in members)
    seen: set[int] = set()
    for index, asset in enumerate(members):
        problem = _asset_problem(asset)
        if problem is None and not assign:
            asset_id = _int(asset.get("id"))
            if asset_id in seen:
                problem = ".id is already being used by another asset. Each asset ID must be unique."
            seen.add(asset_id)
        if problem is not None:
            raise RequestError(f"request.imp[{imp}].native.request.assets[{index}]{problem}")
    return assign


def _tracker_problem(tracker: Any) -> str | None:
    fields = _members(tracker, _TRACKER_KEYS)
    event = _int(fields.get("event"))
    if event < 1 or 4 < event < EXCHANGE_SPECIFIC:
        return f".event is invalid. See section 7.6: {_SPEC}#page=43"
    methods = fields.get("methods")
    if type(methods) is not list or not methods:
        return f".method is required. See section 7.7: {_SPEC}#page=43"
    for number, method in enumerate(methods):
        method = _int(method)
        if method < 1 or 2 < method < EXCHANGE_SPECIFIC:
            return f".methods[{number}] is invalid. See section 7.7: {_SPEC}#page=43"
    return None


def _check_trackers(trackers: Any, imp: int) -> None:
    for index, tracker in enumerate(trackers if type(trackers) is list else ()):
        problem = _tracker_problem(tracker)
        if problem is not None:
            raise RequestError(f"request.imp[{imp}].native.request.eventtrackers[{index}]{problem}")


def _number_assets(assets: list[Any]) -> None:
    """Gives asset i the id i, first among its keys (where PBS-Go writes it); any other spelling of the key
    (Go matched it ignoring case, and it held 0) is dropped."""
    for index, asset in enumerate(assets):
        numbered: dict[str, Any] = {"id": index}
        for key, value in asset.items():
            if key.lower() != "id":
                numbered[key] = value
        assets[index] = numbered


def fill_and_validate_native(native: Any, imp_index: int) -> None:
    """Validates ``imp.native`` (PBS-Go's ``fillAndValidateNative``) and raises ``RequestError`` with PBS-Go's
    text. When PBS-Go would number the assets, ``native["request"]`` becomes the payload with those ids
    (compact JSON); otherwise nothing is changed."""
    if native is None:
        return
    if type(native) is not dict:
        raise RequestError(f"request.imp[{imp_index}].native must be an object")
    text = native.get("request")
    if text is None or text == "":
        raise RequestError(f'request.imp[{imp_index}].native missing required property "request"')
    if type(text) is not str:
        raise RequestError(f"request.imp[{imp_index}].native.request must be a string")
    payload, bytes_left = _decode(text, imp_index)
    problem = _type_problem(payload, imp_index)
    if problem is not None:
        raise RequestError(problem)
    if bytes_left:
        raise RequestError("there are bytes left after unmarshal")
    fields = _members(payload, _REQUEST_KEYS)
    _check_context(_int(fields.get("context")), _int(fields.get("contextsubtype")), imp_index)
    plcmttype = _int(fields.get("plcmttype"))  # only recommended: 0 passes
    if plcmttype < 0 or 4 < plcmttype < EXCHANGE_SPECIFIC:
        raise RequestError(f"request.imp[{imp_index}].native.request.plcmttype is invalid. See {_SPEC}#page=40")
    assets = fields.get("assets")
    assign = _check_assets(assets, imp_index)
    _check_trackers(fields.get("eventtrackers"), imp_index)
    if assign and payload is not None:
        _number_assets(assets)
        native["request"] = _encode(payload)
