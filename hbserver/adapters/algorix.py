"""AlgoriX adapter: the whole request in one OpenRTB 2.5 call, its endpoint from the first imp's
params: ``SourceId`` (``sid``), ``AccountID`` (``token``) and ``Host`` (by ``region``: APAC, USE,
EUC or the global host), each path-escaped.

A banner without a full size takes its first format's; a video of a rewarded imp
(``ext.prebid.is_rewarded_inventory: 1``) gets ``ext: {"rewarded": 1}``. Bids are typed by their
``ext.mediaType`` (banner, native, video), else by their imp when it has exactly one media type;
any other bid is reported and left out. Bids are in USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

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
    AnswerWording,
    JsonShapeError,
    expect_object,
    imp_ids,
    json_call,
    json_headers,
    resolve_macros,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_fields,
    go_int,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)

_ANSWER_WORDING = AnswerWording(
    status="Unexpected status code: {}.", not_an_object=NOT_AN_OBJECT, body_error=BidderError
)
_HOSTS = {"APAC": "apac.xyz", "USE": "use.xyz", "EUC": "euc.xyz"}
_PARAMS = ("sid", "token", "placementId", "appId", "region")
_BID_TYPES = ("banner", "native", "video")
_PATH_SAFE = "$&+,:;=@"  # what Go's url.PathEscape leaves besides letters, digits and -_.~


def path_escape(text: str) -> str:
    """Go's ``url.PathEscape``."""
    return quote(text, safe=_PATH_SAFE)


def endpoint_values(imp: Mapping[str, Any]) -> dict[str, str]:
    """The endpoint macros from the imp's params; JsonShapeError when they do not decode."""
    params = {name: "" for name in _PARAMS}
    for name, value in go_members(imp_bidder_params(imp), *_PARAMS):
        params[name] = go_value(value, GoKind.STRING, "openrtb_ext.ExtImpAlgorix") or ""
    host = _HOSTS.get(params["region"], "xyz")
    return {"SourceId": path_escape(params["sid"]), "AccountID": path_escape(params["token"]), "Host": host}


def _is_rewarded(imp: Mapping[str, Any]) -> bool:
    """Whether the imp's ``ext.prebid.is_rewarded_inventory`` is 1 (False when its ext does not decode)."""
    try:
        ext = expect_object(imp.get("ext"), "")
        prebid = expect_object(go_field(ext, "prebid"), "")
        rewarded = go_field(prebid, "is_rewarded_inventory")
        return go_int(rewarded, "") == 1
    except JsonShapeError:
        return False


def prepared_imp(imp: dict[str, Any]) -> dict[str, Any]:
    out = dict(imp)
    banner = out.get("banner")
    if isinstance(banner, dict) and (not banner.get("w") or not banner.get("h")):
        formats = banner.get("format")
        if isinstance(formats, list) and formats:
            first = formats[0] if isinstance(formats[0], dict) else {}
            out["banner"] = {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}
    video = out.get("video")
    if isinstance(video, dict) and _is_rewarded(imp):
        out["video"] = {**video, "ext": {"rewarded": 1}}
    return go_media_objects(out)


def bid_type(bid: Mapping[str, Any], imps: Any) -> str | None:
    """``ext.mediaType`` when it names a type, else the imp's one media type; None when neither."""
    ext = bid.get("ext")
    if isinstance(ext, dict):
        media_type = go_fields(ext, "mediaType").get("mediaType")
        if media_type in _BID_TYPES:
            return str(media_type)
    kinds: list[str] = []
    for imp in imps or ():
        if imp.get("id") == bid.get("impid"):
            kinds += [kind for kind in ("banner", "native", "video") if imp.get(kind) is not None]
    return kinds[0] if len(kinds) == 1 else None


class AlgorixAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers(x_openrtb_version="2.5")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        try:
            uri = resolve_macros(self.endpoint, endpoint_values(imps[0]))
        except (IndexError, JsonShapeError):
            return [], [bad_input("Invalid ExtImpAlgoriX value")]
        sent = [prepared_imp(imp) for imp in imps]
        return [json_call(uri, {**go_request_top(request), "imp": sent}, imp_ids(sent), self.headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = bid_type(bid, request.get("imp"))
            if kind is None:
                errors.append(BidderError(f"unable to fetch mediaType in multi-format: {bid.get('impid', '')}"))
                continue
            result.bids.append(TypedBid(bid, kind))
        return result, errors


def build(config: AdapterConfig) -> AlgorixAdapter:
    return AlgorixAdapter(config)
