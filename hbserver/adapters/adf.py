"""Adform (adf) adapter: every imp in one OpenRTB call to ``adx.adform.net/adx/openrtb``.

Per imp the master tag id ``mid`` (a number or a string of digits) becomes ``tagid``; an imp
without one goes without ``tagid`` (Adform then finds the placement from ``inv`` and ``mname``,
which stay in ``imp.ext.bidder``). An imp whose ``ext`` cannot be read is dropped with an error, but
the call is made even when none is left. When an imp asks for a ``priceType`` (``gross``/``net``),
the first one asked for is sent as ``ext.pt``; ``request.ext`` then keeps only ``prebid`` (always
written, ``{}`` when absent) and ``schain``, as PBS-Go's typed re-encoding does. The bidder answers
with ``ext.prebid.type`` on each bid, which types it; a bid without one is an error.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, answer_bids, expect_object, expect_string, found, json_call

# json-iterator's text for decoding an absent raw value (Go's empty json.RawMessage): the byte it
# "found" is the zero byte that marks the end of the input.
ABSENT_OBJECT = "expect { or n, but found \x00"
BID_TYPES = frozenset({"banner", "video", "audio", "native"})
# The json names of PBS-Go's ExtRequestPrebid, all omitempty: what survives its re-encoding. Its
# maps, slices, bools and strings are left out when empty; its objects only when null.
PREBID_OMITTED_WHEN_EMPTY = frozenset(
    "aliases aliasgvlids analytics bidadjustmentfactors macros biddercontrols adservertargeting "
    "bidderconfig multibid schains nosale debug supportdeals returnallbidstatus integration trace".split()
)
PREBID_FIELDS = PREBID_OMITTED_WHEN_EMPTY | frozenset(
    "bidadjustments bidderparams cache channel currency data events experiment floors passthrough sdk "
    "server storedrequest targeting alternatebiddercodes".split()
)
# openrtb2.Bid's fields: Go writes id, impid and price always and the others only when not zero.
BID_FIELDS = frozenset(
    "nurl burl lurl adm adid adomain bundle iurl cid crid tactic cattax cat attr apis api protocol "
    "qagmediarating language langb dealid w h wratio hratio exp dur mtype slotinpod".split()
)
# Fields of openrtb2's media objects written even when empty (no omitempty): (object, field, zero).
MEDIA_REQUIRED_FIELDS = (("video", "mimes", None), ("audio", "mimes", None), ("native", "request", ""))


def imp_ext(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp.ext`` decoded as PBS-Go's ``adapters.ExtImpBidder`` (null reads as empty, an absent ext
    is an error). Raises JsonShapeError with json-iterator's wording."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    ext = expect_object(imp["ext"], "")
    expect_object(ext.get("prebid"), "adapters.ExtImpBidder.Prebid")
    return ext


def bidder_params(ext: dict[str, Any]) -> dict[str, Any]:
    """The raw ``bidder`` value of a decoded ``imp.ext`` decoded as an object: null reads as empty,
    an absent one is an error. Raises JsonShapeError with json-iterator's wording."""
    if "bidder" not in ext:
        raise JsonShapeError(ABSENT_OBJECT)
    return expect_object(ext["bidder"], "")


def imp_bidder_params(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp.ext.bidder`` as PBS-Go's usual two-step decode reads it (``imp_ext``, ``bidder_params``)."""
    return bidder_params(imp_ext(imp))


def go_bid(bid: dict[str, Any]) -> dict[str, Any]:
    """``bid`` as PBS-Go's typed Bid writes it again: fields OpenRTB 2.6 does not know are dropped,
    and so are zero values (``""``, ``0``, ``[]``, null; ``ext`` only when null)."""
    out = {}
    for key, value in bid.items():
        if key in ("id", "impid", "price"):
            out[key] = value
        elif key == "ext":
            if value is not None:
                out[key] = value
        elif key in BID_FIELDS and value is not None and value != "" and value != 0 and value != []:
            out[key] = value
    return out


def go_media_objects(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` as PBS-Go's typed Imp writes it again: a video or audio object without ``mimes``
    gets ``"mimes": null``, a native one without ``request`` gets ``"request": ""``. Returns
    ``imp`` itself when nothing changes (a shallow copy otherwise)."""
    out = imp
    for kind, name, zero in MEDIA_REQUIRED_FIELDS:
        media = imp.get(kind)
        if isinstance(media, dict) and name not in media:
            if out is imp:
                out = dict(imp)
            out[kind] = {**media, name: zero}
    return out


def _number_text(value: Any, where: str) -> str:
    """A Go ``json.Number`` field as text: a number's digits or any string ("" for null/absent)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JsonShapeError(f"cannot unmarshal {where}: invalid number")
    return str(value)


def _read_params(params: dict[str, Any]) -> tuple[str, str]:
    """(master tag id, price type) of one imp; the other fields are only type-checked, as Go does."""
    mid = _number_text(params.get("mid"), "openrtb_ext.ExtImpAdf.MasterTagID")
    inv = params.get("inv")
    if inv is not None and (isinstance(inv, bool) or not isinstance(inv, int)):
        raise JsonShapeError("cannot unmarshal openrtb_ext.ExtImpAdf.InventorySourceID: unexpected character")
    expect_string(params.get("mname"), "openrtb_ext.ExtImpAdf.PlacementName")
    price_type = expect_string(params.get("priceType"), "openrtb_ext.ExtImpAdf.PriceType")
    return mid, price_type


def _with_price_type(ext: Any, price_type: str) -> dict[str, Any]:
    """``request.ext`` re-encoded as PBS-Go's ``adfRequestExt`` with ``pt`` set."""
    ext = expect_object(ext, "")
    prebid = expect_object(ext.get("prebid"), "adf.adfRequestExt.Prebid")
    out: dict[str, Any] = {
        "prebid": {
            key: value
            for key, value in prebid.items()
            if key in PREBID_FIELDS and value is not None and (value or key not in PREBID_OMITTED_WHEN_EMPTY)
        },
    }
    schain = ext.get("schain")
    if schain is not None:
        out["schain"] = expect_object(schain, "adf.adfRequestExt.SChain")
    out["pt"] = price_type
    return out


class _NoType(ValueError):
    """A bid that carries no readable ``ext.prebid`` (a bad server response)."""


def _bid_type(bid: dict[str, Any]) -> str:
    """The type in ``bid.ext.prebid.type``: _NoType without a readable ``ext.prebid``, ValueError
    for a type PBS does not know."""
    ext = bid.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    kind = prebid.get("type") if isinstance(prebid, dict) else None
    if not isinstance(prebid, dict) or (kind is not None and not isinstance(kind, str)):
        raise _NoType(f'Failed to parse impression "{bid.get("impid", "")}" mediatype')
    kind = kind or ""
    if kind not in BID_TYPES:
        raise ValueError(f"invalid BidType: {kind}")
    return kind


class AdfAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        price_type = ""
        for imp in request.get("imp") or ():
            try:
                mid, imp_price_type = _read_params(imp_bidder_params(imp))
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            out = dict(go_media_objects(imp))
            if mid:
                out["tagid"] = mid
            else:
                out.pop("tagid", None)
            imps.append(out)
            if not price_type:
                price_type = imp_price_type
        body = {**request, "imp": imps}
        if price_type:
            try:
                body["ext"] = _with_price_type(request.get("ext"), price_type)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps))], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status == 400:
            return None, [bad_input("Unexpected status code: 400. Bad request from publisher.")]
        if response.status != 200:
            return None, [bad_server_response(f"Unexpected status code: {response.status}.")]
        try:
            data = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            return None, [BidderError(f"Bad response body: {exc}")]
        if not isinstance(data, dict):
            return None, [BidderError(f"expect {{ or n, but found {found(data)}")]
        cur = data.get("cur")
        result = BidderResponse(currency=cur if isinstance(cur, str) and cur else "USD")
        errors: list[BidderError] = []
        for _, bid in answer_bids(data):
            try:
                result.bids.append(TypedBid(go_bid(bid), _bid_type(bid)))
            except _NoType as exc:
                errors.append(bad_server_response(str(exc)))
            except ValueError as exc:
                errors.append(BidderError(str(exc)))
        return result, errors


def build(config: AdapterConfig) -> AdfAdapter:
    return AdfAdapter(config)
