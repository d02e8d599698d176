"""Relevant Digital adapter: the whole request in one OpenRTB call to the publisher's Relevant Digital
host (the first imp's ``pbsHost``, without a scheme or ``.relevant-digital.com``, filled into the
endpoint's ``{{.Host}}``).

Any imp whose params do not decode fails the request. The request's ``ext`` is merged with
``relevant: {count: +1, adapterType: server}`` (a request already relayed five times is refused) and
``prebid.storedrequest.id`` = the first imp's ``accountId``; each imp's ext becomes
``{"prebid": {"storedrequest": {"id": <its placementId>}}}``. ``tmax`` is cut by the first imp's
``pbsBufferMs`` (250 by default), and the host's own ``ext.prebid.cache/targeting/aliases`` and
earlier ``relevant`` exts of the media objects are removed. Bids are typed by ``mtype``, else by
``ext.prebid.type``; with ``useSourceBidderCode`` on the first imp, each bid keeps its answer's seat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, expect_object, imp_ids, json_call, resolve_macros
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_field,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.steps import HEADER_SETS

_PARAMS = "openrtb_ext.ExtRelevantDigital"
# json name -> (Go field, kind) of openrtb_ext.ExtRelevantDigital
_FIELDS = {
    "accountId": ("AccountId", GoKind.STRING),
    "placementId": ("PlacementId", GoKind.STRING),
    "pbsHost": ("Host", GoKind.STRING),
    "pbsBufferMs": ("PbsBufferMs", GoKind.INT),
    "useSourceBidderCode": ("UseSourceBidderCode", GoKind.BOOL),
}
_DEFAULT_PARAMS = {"accountId": "", "placementId": "", "pbsHost": "", "pbsBufferMs": 250, "useSourceBidderCode": False}
_DEFAULT_TIMEOUT = 1000
_MAX_COUNT = 5
_SAFE_HOST = re.compile(r"[a-zA-Z0-9.-]+(:[0-9]+)?")
_HOST_PREBID = frozenset({"cache", "targeting", "aliases"})
_MEDIA = ("banner", "video", "native", "audio")
_BID_TYPES = frozenset(MTYPE_TO_TYPE.values())
# PBS's usual status texts; an answer that does not decode is reported in the decoder's bare words
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)


class _Refused(ValueError):
    """The request cannot be sent; the message is the error's."""


class _Unencodable(ValueError):
    """A placement id that makes the imp's ext invalid JSON (Go's encoder refuses the request)."""


def _params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params over their defaults; BidderError (bad input) when they do not decode."""
    try:
        bidder = imp_bidder_params(imp)
    except ImpExtError:
        raise _Refused("imp.ext not provided") from None
    except JsonShapeError:
        raise _Refused("ext.bidder not provided") from None
    params = dict(_DEFAULT_PARAMS)
    try:
        for name, value in go_members(bidder, *_FIELDS):
            go_name, kind = _FIELDS[name]
            decoded = go_value(value, kind, f"{_PARAMS}.{go_name}")
            if decoded is not None:  # null leaves a Go value field as it was
                params[name] = decoded
    except JsonShapeError:
        raise _Refused("ext.bidder not provided") from None
    return params


def _relevant_ext(ext: Any) -> tuple[int, bool]:
    """(relevant.count, prebid.debug) as Go decodes the request's ext; JsonShapeError when it does not."""
    top = expect_object(ext, "")
    relevant = expect_object(go_field(top, "relevant"), "relevantExt.Relevant")
    count = go_value(go_field(relevant, "count", skip_null=True), GoKind.INT, "relevantExt.Relevant.Count")
    go_value(go_field(relevant, "adapterType"), GoKind.STRING, "relevantExt.Relevant.AdapterType")
    prebid = expect_object(go_field(top, "prebid"), "relevantExt.Prebid")
    stored = expect_object(go_field(prebid, "storedrequest"), "prebidExt.StoredRequest")
    go_value(go_field(stored, "id"), GoKind.STRING, "prebidExt.StoredRequest.Id")
    debug = go_value(go_field(prebid, "debug", skip_null=True), GoKind.BOOL, "prebidExt.Debug")
    return count or 0, bool(debug)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``target`` by ``patch`` (a new value; null members delete)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _patched_ext(ext: Any, account: str) -> dict[str, Any]:
    """The request's ext with the relay count, the adapter type and the account's stored request."""
    try:
        count, debug = _relevant_ext(ext)
    except JsonShapeError:
        raise _Refused(f"failed to unmarshal ext, {orjson.dumps(ext).decode()}") from None
    if count >= _MAX_COUNT:
        raise _Refused("too many requests")
    patch = {
        "relevant": {"count": count + 1, "adapterType": "server"},
        "prebid": {"storedrequest": {"id": account}, "debug": debug},
    }
    patched: dict[str, Any] = merge_patch(ext, patch)
    # the host's own cache, targeting and aliases are not relayed
    patched["prebid"] = {key: value for key, value in patched["prebid"].items() if key not in _HOST_PREBID}
    return patched


def _tmax(request: Mapping[str, Any], buffer_ms: int) -> int:
    """The request's ``tmax`` (1000 when none) less the buffer, never below the buffer nor above ``tmax``."""
    tmax = request.get("tmax")
    timeout = tmax if isinstance(tmax, int) and not isinstance(tmax, bool) and tmax > 0 else _DEFAULT_TIMEOUT
    return int(min(max(timeout - buffer_ms, buffer_ms), timeout))


def _outgoing_imp(imp: dict[str, Any], placement: str) -> dict[str, Any]:
    """The imp with its ext replaced by the placement's stored request (written into the JSON text as
    Go does, unescaped) and no ``relevant`` ext left in its media objects."""
    try:
        ext = orjson.loads(f'{{"prebid":{{"storedrequest":{{"id":"{placement}"}}}}}}')
    except orjson.JSONDecodeError as exc:
        raise _Unencodable(f"json: error calling MarshalJSON for type json.RawMessage: {exc}") from None
    out = {**go_media_objects(imp), "ext": ext}
    for kind in _MEDIA:
        media = out.get(kind)
        if isinstance(media, dict) and isinstance(media.get("ext"), dict) and "relevant" in media["ext"]:
            out[kind] = {**media, "ext": {k: v for k, v in media["ext"].items() if k != "relevant"}}
    return out


def _host(params: Mapping[str, Any]) -> str:
    host = str(params["pbsHost"])
    for part in ("http://", "https://", ".relevant-digital.com"):
        host = host.replace(part, "")
    if not _SAFE_HOST.fullmatch(host):
        raise _Refused("Invalid Host")
    return host


def _bid_type(bid: Mapping[str, Any]) -> str:
    """``mtype``, else the bid's ``ext.prebid.type``; BidderError in Relevant Digital's words."""
    kind = MTYPE_TO_TYPE.get(bid.get("mtype", 0))
    if kind is not None:
        return kind
    prebid = None
    ext = bid.get("ext")
    if isinstance(ext, dict):
        prebid = go_field(ext, "prebid")
    bid_type = go_field(prebid, "type") if isinstance(prebid, dict) else None
    if not isinstance(prebid, dict) or not isinstance(bid_type, str | None):
        raise _Refused(f"failed to parse bid type, missing ext: {bid.get('impid', '')}")
    if bid_type not in _BID_TYPES:
        raise _Refused(f"invalid BidType: {bid_type or ''}")
    return bid_type


class RelevantDigitalAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        params, errors = [], []
        for imp in imps:
            try:
                params.append(_params(imp))
            except _Refused as exc:
                errors.append(bad_input(str(exc)))
        if errors or not params:
            return [], errors
        first = params[0]
        try:
            body = go_request_top(request)
            body["ext"] = _patched_ext(request.get("ext"), str(first["accountId"]))
            body["tmax"] = _tmax(request, first["pbsBufferMs"])
            body["imp"] = [_outgoing_imp(imp, str(p["placementId"])) for imp, p in zip(imps, params, strict=True)]
        except _Refused as exc:
            return [], [bad_input(f"failed to create bidRequest, error: {exc}")]
        except _Unencodable as exc:
            return [], [BidderError(str(exc))]
        try:
            uri = resolve_macros(self.endpoint, {"Host": _host(first)})
        except _Refused as exc:
            return [], [bad_input(str(exc))]
        headers: dict[str, str] = {}
        for name in ("json", "openrtb_25", "device"):
            HEADER_SETS[name](headers, request)
        return [json_call(uri, body, imp_ids(imps), headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        keep_seat = _source_seat(request)
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for seat, bids in answer.seatbids:
            for bid in bids:
                try:
                    bid_type = _bid_type(bid)
                except _Refused as exc:
                    errors.append(BidderError(str(exc)))
                    continue
                result.bids.append(TypedBid(bid, bid_type, seat=seat if keep_seat else ""))
        return result, errors


def _source_seat(request: Mapping[str, Any]) -> bool:
    """Whether the first imp's params ask for the answer's seats to be kept."""
    imps = request.get("imp") or ()
    try:
        return bool(imps and _params(imps[0])["useSourceBidderCode"])
    except _Refused:
        return False


def build(config: AdapterConfig) -> RelevantDigitalAdapter:
    return RelevantDigitalAdapter(config)
