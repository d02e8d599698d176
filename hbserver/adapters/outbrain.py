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
from typing import Any

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
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import (
    go_json_object,
    go_json_text,
    go_media_objects,
    go_members,
    go_request_top,
    go_typed_bids,
    imp_bidder_params,
    set_omitempty,
)
from hbserver.adapters.gonative import (
    EVENT_IMPRESSION,
    METHOD_IMAGE,
    METHOD_JS,
    decode_native_response,
    encode_native_response,
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


# --- native markup -----------------------------------------------------------------------------------


def _native_markup(adm: str) -> str:
    """The native markup with its impression trackers moved to the 1.1 fields, written again as PBS-Go
    writes it; JsonShapeError (PBS-Go's text) when it does not decode as a native response."""
    values = decode_native_response(go_json_object(adm))
    for tracker in values["eventtrackers"] or ():
        if tracker["event"] != EVENT_IMPRESSION:
            continue
        if tracker["method"] == METHOD_IMAGE:
            values["imptrackers"] = [*(values["imptrackers"] or ()), tracker["url"]]
        elif tracker["method"] == METHOD_JS:
            values["jstracker"] = f'<script src="{tracker["url"]}"></script>'
    values["eventtrackers"] = None
    return go_json_text(encode_native_response(values))


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
