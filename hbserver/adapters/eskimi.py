"""Eskimi adapter: every imp whose params decode, in one OpenRTB call to the configured endpoint.

The first imp's params rule the request: its ``placementId`` is written into ``site.ext`` (else
``app.ext``; a request with neither is refused) and its ``bcat``/``badv``/``bapp`` fill the request's
block lists when those are empty. If the first imp's params do not decode nothing is sent; a later
imp whose params do not decode is left out with its error. Each imp is made ``secure`` unless it
says otherwise, takes the params' ``bidFloor`` (and ``bidFloorCur``) when it has no floor, and the
params' ``battr`` on a banner or video without one. Bids are typed by ``mtype`` (banner or video
only), else by their imp when it has exactly one of banner and video.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    Refusal,
    expect_object,
    imp_ids,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)

_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_PARAMS = {
    "placementId": ("PlacementID", GoKind.INT),
    "bidFloor": ("BidFloor", GoKind.FLOAT),
    "bidFloorCur": ("BidFloorCur", GoKind.STRING),
    "bcat": ("Bcat", GoKind.STRINGS),
    "badv": ("Badv", GoKind.STRINGS),
    "bapp": ("Bapp", GoKind.STRINGS),
    "battr": ("Battr", GoKind.INTS),
}
_BLOCK_LISTS = ("bcat", "badv", "bapp")
_MTYPES = {1: "banner", 2: "video"}


def read_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's ``openrtb_ext.ExtImpEskimi`` (absent fields are missing); bad input, worded as
    Eskimi does, when ``imp.ext`` or its bidder params do not decode."""
    imp_id = imp.get("id", "")
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(bad_input(f"invalid imp.ext for imp {imp_id}: {exc}")) from None
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"invalid imp.ext.bidder for imp {imp_id}: {exc}")) from None
    out: dict[str, Any] = {}
    try:
        for name, value in go_members(params, *_PARAMS):
            go_name, kind = _PARAMS[name]
            out[name] = go_value(value, kind, f"openrtb_ext.ExtImpEskimi.{go_name}")
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"invalid imp.ext.bidder for imp {imp_id}: {exc}")) from None
    return out


class _Refused(Refusal):
    """See ``common.Refusal``."""


def with_placement(request: Mapping[str, Any], body: dict[str, Any], placement: int) -> None:
    """``placementId`` added to ``site.ext`` (else ``app.ext``) of ``body``, the ext's other keys kept."""
    for where in ("site", "app"):
        owner = request.get(where)
        if owner is None:
            continue
        owner = owner if isinstance(owner, dict) else {}
        try:
            ext = expect_object(owner.get("ext"), "")
        except JsonShapeError as exc:
            raise _Refused(bad_input(f"failed to set placementId on {where}.ext: {exc}")) from None
        body[where] = {**owner, "ext": {**ext, "placementId": placement}}
        return
    raise _Refused(bad_input("request must contain either site or app"))


def with_imp_params(imp: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The imp made secure when it does not say, with the params' floor and blocked attributes."""
    out = dict(imp)
    if out.get("secure") is None:
        out["secure"] = 1
    floor = params.get("bidFloor") or 0
    if not out.get("bidfloor") and floor > 0:
        out["bidfloor"] = floor
        if params.get("bidFloorCur"):
            out["bidfloorcur"] = params["bidFloorCur"]
    battr = params.get("battr")
    if battr:
        for kind in ("banner", "video"):
            media = out.get(kind)
            if isinstance(media, dict) and not media.get("battr"):
                out[kind] = {**media, "battr": battr}
    return go_media_objects(out)


def bid_type(imps: Any, bid: Mapping[str, Any]) -> str:
    """``mtype`` when set (banner or video), else the type of the bid's imp; raises _Refused."""
    mtype, impid = bid.get("mtype", 0), bid.get("impid", "")
    if mtype:
        if mtype in _MTYPES:
            return _MTYPES[mtype]
        raise _Refused(
            bad_server_response(f"unsupported bid.mtype {mtype} for impression {impid} (banner and video only)")
        )
    for imp in imps or ():
        if imp.get("id") != impid:
            continue
        banner, video = imp.get("banner") is not None, imp.get("video") is not None
        if banner != video:
            return "banner" if banner else "video"
        if banner:
            raise _Refused(bad_server_response(f"bid for multi-format imp {impid} requires bid.mtype to disambiguate"))
        raise _Refused(bad_server_response(f"unsupported media type for impression {impid} (banner and video only)"))
    raise _Refused(bad_server_response(f"unable to resolve media type for impression {impid}"))


class EskimiAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("no impressions in the bid request")]
        body = go_request_top(request)
        try:
            first = read_params(imps[0])
            with_placement(request, body, first.get("placementId") or 0)
        except _Refused as exc:
            return [], [exc.error]
        for name in _BLOCK_LISTS:
            if not request.get(name) and first.get(name):
                body[name] = first[name]
        sent = [with_imp_params(imps[0], first)]
        errors: list[BidderError] = []
        for imp in imps[1:]:
            try:
                sent.append(with_imp_params(imp, read_params(imp)))
            except _Refused as exc:
                errors.append(exc.error)
        body["imp"] = sent
        return [json_call(self.endpoint, body, imp_ids(sent), self.headers)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                result.bids.append(TypedBid(bid, bid_type(request.get("imp"), bid)))
            except _Refused as exc:
                errors.append(exc.error)
        return result, errors


def build(config: AdapterConfig) -> EskimiAdapter:
    return EskimiAdapter(config)
