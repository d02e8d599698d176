"""Adtelligent adapter: one OpenRTB call per ``aid`` (source id) to ``ghb.adtelligent.com/pbs/ortb?aid=<aid>``.

Only banner and video imps are sent. Per imp the params are read as PBS-Go reads them (``aid`` a
number or a string holding one, ``placementId``/``siteId`` integers, ``bidFloor`` a number),
``imp.ext`` becomes ``{"adtelligent": <those params>}`` (zero values left out, ``aid`` as a number)
and a positive ``bidFloor`` replaces ``imp.bidfloor``. An imp that cannot be read is reported and
left out; the others are grouped by ``aid``, one call per group with only that group's imps.

The answer is read whatever its status but 204 (PBS-Go checks no other status); a bid whose imp is
not in the request is reported and skipped. Bids are video when an imp of that id has a video
object, else banner; the currency is always USD.

Adtarget's adapter is this one with its own names (:class:`Flavour`: the ext's key, the params
struct, one word of an error) and a 400 answer that is bad input.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    bad_server_response,
)
from hbserver.adapters.common import UNEXPECTED_STATUS, JsonShapeError, json_call, json_headers
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_answer,
    go_int,
    go_media_objects,
    go_members,
    go_quote,
    go_request_top,
    go_value,
    imp_bidder_params,
    is_json_number,
    json_number_int64,
    json_number_text,
)


@dataclass(frozen=True, slots=True)
class Flavour:
    """What tells Adtelligent's adapter and its clones apart."""

    name: str = "Adtelligent"  # in "<name> supports only Video and Banner"
    ext_key: str = "adtelligent"  # the imp's new ext: {ext_key: params}
    struct: str = "openrtb_ext.ExtImpAdtelligent"  # the params struct, in json-iterator's texts
    marshal_verb: str = "marshaling"  # "error while <verb> impExt"
    bad_request_is_input: bool = False  # a 400 answer is bad input (else read as any answer)


ADTELLIGENT = Flavour()


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


class _Params:
    """``openrtb_ext.ExtImpAdtelligent`` as decoded from the imp's params, fields in document order
    (the first field of the wrong type fails, as Go decodes field after field)."""

    __slots__ = ("aid", "bid_floor", "placement_id", "site_id")

    def __init__(self, params: dict[str, Any], struct: str) -> None:
        self.aid, self.placement_id, self.site_id = "", 0, 0
        self.bid_floor: int | float = 0
        for name, value in go_members(params, "aid", "placementId", "siteId", "bidFloor"):
            if value is None and name != "aid":  # null leaves a Go number field as it was
                continue
            if name == "aid":
                self.aid = json_number_text(value, f"cannot unmarshal {struct}.SourceId: invalid number")
            elif name == "placementId":
                self.placement_id = go_int(value, f"{struct}.PlacementId")
            elif name == "siteId":
                self.site_id = go_int(value, f"{struct}.SiteId")
            else:
                self.bid_floor = go_value(value, GoKind.FLOAT, f"{struct}.BidFloor")

    def ext(self, aid: int, ext_key: str) -> dict[str, Any]:
        """The imp's new ``ext``: ``aid`` always, the other fields when not zero (Go's omitempty)."""
        params: dict[str, Any] = {"aid": aid}
        for key, value in (("placementId", self.placement_id), ("siteId", self.site_id), ("bidFloor", self.bid_floor)):
            if value:
                params[key] = value
        return {ext_key: params}


def _prepare_imp(imp: dict[str, Any], flavour: Flavour) -> tuple[int, dict[str, Any]]:
    """(the imp's source id, the imp as sent); _BadImp in PBS-Go's words and order otherwise."""
    imp_id = imp.get("id", "")
    if imp.get("banner") is None and imp.get("video") is None:
        raise _BadImp(f"ignoring imp id={imp_id}, {flavour.name} supports only Video and Banner")
    if imp.get("ext") is None:  # Go's imp.Ext is empty for an absent or null ext
        raise _BadImp(f"ignoring imp id={imp_id}, extImpBidder is empty")
    try:
        params = _Params(imp_bidder_params(imp, null_is_absent=True), flavour.struct)
    except ImpExtError as exc:
        raise _BadImp(f"ignoring imp id={imp_id}, error while decoding extImpBidder, err: {exc}") from None
    except JsonShapeError as exc:
        raise _BadImp(f"ignoring imp id={imp_id}, error while decoding impExt, err: {exc}") from None
    aid_text = params.aid or "0"  # Go writes an empty json.Number as 0
    if not is_json_number(aid_text):
        message = f"json: invalid number literal {go_quote(aid_text)}"
        raise _BadImp(f"ignoring imp id={imp_id}, error while {flavour.marshal_verb} impExt, err: {message}")
    try:
        aid = json_number_int64(params.aid)
    except ValueError as exc:
        raise _BadImp(f"ignoring imp id={imp_id}, aid parsing err: {exc}") from None
    out = dict(imp)
    if params.bid_floor > 0:
        out["bidfloor"] = params.bid_floor
    out["ext"] = params.ext(aid, flavour.ext_key)
    return aid, go_media_objects(out)


def _bid_type(imps: list[dict[str, Any]], imp_id: str) -> str | None:
    """video when an imp with ``imp_id`` has a video object, banner when one has none, None when no
    imp has that id."""
    found = None
    for imp in imps:
        if imp.get("id") == imp_id:
            if imp.get("video") is not None:
                return "video"
            found = "banner"
    return found


class AdtelligentAdapter:
    def __init__(self, config: AdapterConfig, flavour: Flavour = ADTELLIGENT) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()
        self.flavour = flavour

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        by_source: dict[int, list[dict[str, Any]]] = {}
        for imp in request.get("imp") or ():
            try:
                aid, prepared = _prepare_imp(imp, self.flavour)
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            by_source.setdefault(aid, []).append(prepared)
        top = go_request_top(request)
        calls = [
            json_call(
                f"{self.endpoint}?aid={aid}", {**top, "imp": imps}, (imp.get("id", "") for imp in imps), self.headers
            )
            for aid, imps in by_source.items()
        ]
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status == 400 and self.flavour.bad_request_is_input:
            return None, [bad_input(UNEXPECTED_STATUS.format(400))]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"error while decoding response, err: {exc}")]
        imps = request.get("imp") or []
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            bid_type = _bid_type(imps, bid["impid"])
            if bid_type is None:
                message = f"ignoring bid id={bid['id']}, request doesn't contain any impression with id={bid['impid']}"
                errors.append(bad_server_response(message))
                continue
            result.bids.append(TypedBid(bid, bid_type))
        return result, errors


def build(config: AdapterConfig) -> AdtelligentAdapter:
    return AdtelligentAdapter(config)
