"""OpenX adapter: OpenRTB 2.6 to ``rtb.openx.net/prebid``.

OpenX takes banner and native imps together in one call and each video imp in a call of its own
(an imp with a banner goes with the banners even if it also has video). Per imp: ``unit`` becomes
``tagid``, ``customFloor`` the floor when the imp has none, ``customParams`` moves into
``imp.ext`` (which keeps everything but ``prebid`` and ``bidder``), and ``video.ext`` is
``{"rewarded": 1}`` for a rewarded imp, else dropped. ``request.ext`` is replaced by
``{"bc", "delDomain", "platform"}`` (the last imp's). Bids are typed by ``mtype``, else by their
imp (banner before video before native), with their meta from the bid's ext (``bid_meta``);
Protected Audience configs come from ``ext.fledge_auction_configs`` (imp id -> config).
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
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    AnswerAdapter,
    first_media_type,
    items_of,
    seat_bids,
    string_param,
)
from hbserver.adapters.golike import go_members, go_parse_float, is_json_number, set_omitempty
from hbserver.numbers import INT64, NumberError, int_or, parse_int

BIDDER_CONFIG = "hb_pbs_1.0.0"
_MTYPES = {1: "banner", 2: "video", 4: "native"}  # audio (3) is not OpenX's: typed by its imp


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _number_text(params: dict[str, Any], name: str) -> str:
    """A JSON number, or a string holding one, as text ("" when absent)."""
    value = params.get(name)
    if value is None:
        return ""
    if isinstance(value, str):
        if not is_json_number(value):
            raise _BadImp(f"openx params: {name} must be a number or a string holding one")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _BadImp(f"openx params: {name} must be a number or a string holding one")
    return str(value)


def _string(params: dict[str, Any], name: str) -> str:
    return string_param(params, name, _BadImp, "openx params")


def _build_imp(imp: dict[str, Any], req_ext: dict[str, Any]) -> dict[str, Any]:
    """The outgoing imp; ``req_ext`` takes this imp's delivery domain and platform."""
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        raise _BadImp("openx: imp.ext must be an object")
    params = ext.get("bidder")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _BadImp("openx params: imp.ext.bidder must be an object")
    custom_params = params.get("customParams")
    if custom_params is not None and not isinstance(custom_params, dict):
        raise _BadImp("openx params: customParams must be an object")
    unit = _number_text(params, "unit")
    floor_text = _number_text(params, "customFloor")
    floor = (go_parse_float(floor_text) or 0.0) if floor_text else 0.0  # out of float64 range: no floor (Go)
    req_ext["delDomain"] = _string(params, "delDomain")
    req_ext["platform"] = _string(params, "platform")

    out = dict(imp)
    out["tagid"] = unit
    if not imp.get("bidfloor") and floor > 0:
        out["bidfloor"] = floor
    new_ext = {key: value for key, value in ext.items() if key not in ("prebid", "bidder")}
    if custom_params is not None:
        new_ext["customParams"] = custom_params
    set_omitempty(out, "ext", new_ext)
    video = imp.get("video")
    if isinstance(video, dict):
        video = {key: value for key, value in video.items() if key != "ext"}
        if imp.get("rwdd") == 1:
            video["ext"] = {"rewarded": 1}
        out["video"] = video
    return out


def _imp_type(imp: dict[str, Any]) -> str:
    """The one type OpenX serves for an imp: banner, else video, else native."""
    return first_media_type(imp, BANNER_VIDEO_NATIVE) or "banner"


class _NoMeta(ValueError):
    """The bid's ext does not decode into PBS-Go's oxBidExt: the bid has no meta."""


def _string_int(value: Any) -> int:
    """A Go ``int`` field tagged ``,string``: a JSON string holding a decimal integer (null leaves 0)."""
    if value is None:
        return 0
    if not isinstance(value, str):
        raise _NoMeta(value)
    try:
        return parse_int(value, INT64, signs="-")
    except NumberError:
        raise _NoMeta(value) from None


def bid_meta(bid: dict[str, Any]) -> dict[str, Any] | None:
    """PBS-Go's getBidMeta: ``networkId``, ``advertiserId`` and ``brandId`` from the bid's
    ``ext.dsp_id``, ``ext.buyer_id`` and ``ext.brand_id`` (the first and last as quoted integers, the
    buyer id through strconv.Atoi: 0 when it does not parse). None when the ext does not decode or
    none of the three is positive; a zero field is left out (omitempty)."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        return None
    values = {"dsp_id": 0, "brand_id": 0, "buyer_id": ""}
    try:
        for name, value in go_members(ext, *values):
            if name == "buyer_id":
                if value is not None and not isinstance(value, str):
                    return None
                values[name] = value or ""
            else:
                values[name] = _string_int(value)
    except _NoMeta:
        return None
    network, brand = values["dsp_id"], values["brand_id"]
    advertiser = int_or(values["buyer_id"], 0, INT64) if values["buyer_id"] else 0
    if advertiser <= 0 and network <= 0 and brand <= 0:
        return None
    meta = {"advertiserId": advertiser, "brandId": brand, "networkId": network}
    return {key: value for key, value in meta.items() if value}


class OpenxAdapter(AnswerAdapter):
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.bidder = config.bidder

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        banner_native: list[dict[str, Any]] = []
        videos: list[dict[str, Any]] = []
        for imp in request.get("imp") or ():
            if imp.get("banner") is not None or (imp.get("video") is None and imp.get("native") is not None):
                banner_native.append(imp)
            elif imp.get("video") is not None:
                videos.append(imp)
        errors: list[BidderError] = []
        calls = []
        for group in (banner_native, *([video] for video in videos)):
            call = self._call(request, group, errors)
            if call is not None:
                calls.append(call)
        return calls, errors

    def _call(
        self, request: dict[str, Any], imps: list[dict[str, Any]], errors: list[BidderError]
    ) -> RequestData | None:
        req_ext: dict[str, Any] = {"bc": BIDDER_CONFIG}
        valid = []
        for imp in imps:
            try:
                valid.append(_build_imp(imp, req_ext))
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
        if not valid:
            return None
        ext = {"delDomain": req_ext["delDomain"], "platform": req_ext["platform"], "bc": BIDDER_CONFIG}
        body = {**request, "imp": valid, "ext": {key: value for key, value in ext.items() if value}}
        return RequestData("POST", self.endpoint, orjson.dumps(body), imp_ids=[imp.get("id", "") for imp in valid])

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency=data.get("cur") or "USD")
        ext = data.get("ext")
        configs = ext.get("fledge_auction_configs") if isinstance(ext, dict) else None
        if isinstance(configs, dict):
            result.fledge_auction_configs = [
                {"impid": imp_id, "bidder": self.bidder, "config": config} for imp_id, config in configs.items()
            ]
        imp_types = None
        for seatbid in items_of(data.get("seatbid")):
            for bid in seat_bids(seatbid):
                if not isinstance(bid, dict):
                    continue
                mtype = bid.get("mtype")
                bid_type = _MTYPES.get(mtype) if isinstance(mtype, int) else None
                if bid_type is None:
                    if imp_types is None:
                        imp_types = {imp.get("id"): _imp_type(imp) for imp in request.get("imp") or ()}
                    bid_type = imp_types.get(bid.get("impid"), "banner")
                categories, duration = bid.get("cat"), bid.get("dur")
                video = {
                    "duration": duration if isinstance(duration, int) else 0,
                    "primary_category": categories[0] if isinstance(categories, list) and categories else "",
                }
                result.bids.append(TypedBid(bid, bid_type, bid_video=video, bid_meta=bid_meta(bid)))
        return result, []


def build(config: AdapterConfig) -> OpenxAdapter:
    return OpenxAdapter(config)
