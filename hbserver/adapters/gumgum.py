"""GumGum adapter: every valid imp in one OpenRTB call to ``g2.gumgum.com/providers/prbds2s/bid``.

Per imp: ``ext.prebid.adunitcode`` becomes ``tagid``; a banner without ``w``/``h`` takes its first
format's size, and with a ``slot`` param also ``banner.ext`` = ``{si: slot, maxw, maxh}`` (the
format with the longest side); ``irisid`` becomes ``video.ext.irisid``; ``product`` replaces
``imp.ext`` with ``{"product": product}``. The last valid imp's ``zone`` becomes ``site.id`` and its
``pubId`` ``site.publisher.id`` (only on a site request). Bids are banner when their imp has a
banner, else video; a video bid's ``${AUCTION_PRICE}`` in ``adm`` is replaced by its price.
"""

from __future__ import annotations

from typing import Any

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
    AnswerAdapter,
    AnswerWording,
    JsonShapeError,
    answer_bids,
    expect_string,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    go_float_text,
    go_media_objects,
    go_read_float,
    go_request_top,
    imp_bidder_params,
)

_PRICE_MACRO = "${AUCTION_PRICE}"


_ANSWER_WORDING = AnswerWording(
    status="Bad server response: HTTP status {}",
    bad_request="Bad user input: HTTP status 400",
    bad_json="{}",
    not_an_object=NOT_AN_OBJECT,
    body_text="Bad server response: {}. ",
)


def _number(value: Any, where: str) -> float:
    return float(go_read_float(value, where) or 0)


class _Params:
    __slots__ = ("irisid", "product", "pub_id", "slot", "zone")

    def __init__(self, params: dict[str, Any]) -> None:
        self.zone = expect_string(params.get("zone"), "openrtb_ext.ExtImpGumGum.Zone")
        self.pub_id = _number(params.get("pubId"), "openrtb_ext.ExtImpGumGum.PubID")
        self.irisid = expect_string(params.get("irisid"), "openrtb_ext.ExtImpGumGum.IrisID")
        self.slot = _number(params.get("slot"), "openrtb_ext.ExtImpGumGum.Slot")
        self.product = expect_string(params.get("product"), "openrtb_ext.ExtImpGumGum.Product")


def _ad_unit_code(ext: Any) -> str:
    """``ext.prebid.adunitcode`` when the ext decodes as Go's ExtImpAdUnitCode, else ""."""
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    code = prebid.get("adunitcode") if isinstance(prebid, dict) else None
    return code if isinstance(code, str) else ""


def _size(format_: dict[str, Any], side: str) -> int:
    value = format_.get(side)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _biggest_format(formats: list[dict[str, Any]], slot: float) -> dict[str, Any]:
    """``{si, maxw, maxh}`` for the format with the longest side (ties: the larger both ways);
    zero values are left out."""
    max_w = max_h = longest = 0
    for fmt in formats:
        w, h = _size(fmt, "w"), _size(fmt, "h")
        side = max(w, h)
        if side > longest or (side == longest and w >= max_w and h >= max_h):
            longest, max_w, max_h = side, w, h
    return {key: value for key, value in (("si", slot), ("maxw", max_w), ("maxh", max_h)) if value}


def _build_imp(imp: dict[str, Any], params: _Params) -> dict[str, Any]:
    out = dict(imp)
    code = _ad_unit_code(imp.get("ext"))
    if code:
        out["tagid"] = code
    banner = imp.get("banner")
    if isinstance(banner, dict) and banner.get("w") is None and banner.get("h") is None:
        formats = [fmt for fmt in banner.get("format") or () if isinstance(fmt, dict)]
        if formats:
            banner = {**banner, "w": _size(formats[0], "w"), "h": _size(formats[0], "h")}
            if params.slot:
                banner["ext"] = _biggest_format(formats, params.slot)
            out["banner"] = banner
    video = imp.get("video")
    if isinstance(video, dict) and params.irisid:
        out["video"] = {**video, "ext": {"irisid": params.irisid}}
    if params.product:
        out["ext"] = {"product": params.product}
    return out


def _bid_type(imps: list[dict[str, Any]], imp_id: Any) -> str:
    for imp in imps:
        if imp.get("id") == imp_id and imp.get("banner") is not None:
            return "banner"
    return "video"


class GumgumAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        zone = ""
        pub_id = 0.0
        for imp in request.get("imp") or ():
            try:
                params = _Params(imp_bidder_params(imp))
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            zone = params.zone or zone
            pub_id = params.pub_id or pub_id
            imps.append(go_media_objects(_build_imp(imp, params)))
        if not imps:
            return [], errors
        body = go_request_top(request)
        body["imp"] = imps
        site = request.get("site")
        if isinstance(site, dict) and (zone or pub_id):
            site = dict(site)
            if zone:
                site["id"] = zone
            if pub_id:
                publisher = site.get("publisher")
                site["publisher"] = {**(publisher if isinstance(publisher, dict) else {}), "id": go_float_text(pub_id)}
            body["site"] = site
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps), self.headers)], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        imps = request.get("imp") or []
        result = BidderResponse(currency=answer.get("cur") or "USD")
        for _, bid in answer_bids(answer):
            bid_type = _bid_type(imps, bid.get("impid"))
            adm = bid.get("adm")
            if bid_type == "video" and isinstance(adm, str) and _PRICE_MACRO in adm:
                price = bid.get("price")
                amount = price if isinstance(price, int | float) and not isinstance(price, bool) else 0
                bid = {**bid, "adm": adm.replace(_PRICE_MACRO, go_float_text(amount))}
            result.bids.append(TypedBid(bid, bid_type))
        return result, []


def build(config: AdapterConfig) -> GumgumAdapter:
    return GumgumAdapter(config)
