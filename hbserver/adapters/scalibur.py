"""Scalibur adapter: every imp whose params decode in one call to the configured endpoint, the
request's ``cur`` dropped and its ext replaced by ``{"isDebug": 1}`` in debug (``test: 1`` or
``ext.prebid.debug``), else none. Each imp takes the params' positive floor (and its currency), a
floor in another currency converted to USD (no rate: the imp dropped with that error), USD when it
names none, Scalibur's video defaults, and an ext of ``placementId``, the floor, its currency and the
imp's ``gpid``. Bids are typed by mtype (banner, video), else by their imp's one media object of
the two; a video bid's ``ext.vastXml`` (or a VAST wrapper of ``ext.vastUrl``) becomes its markup.
The params' and the answer's wording are the recipe ``recipes/scalibur.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import json_call
from hbserver.adapters.golike import go_fields
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter, typed_imp, typed_top

# Scalibur's video defaults, each set when the imp's value is zero or empty
_VIDEO_DEFAULTS: Mapping[str, Any] = {
    "mimes": ["video/mp4"], "minduration": 1, "maxduration": 180, "maxbitrate": 30000,
    "protocols": [2, 3, 5, 6], "w": 640, "h": 480, "placement": 1, "linearity": 1,
}  # fmt: skip
_VAST_WRAPPER = '<VAST version="3.0"><Ad><Wrapper><VASTAdTagURI><![CDATA[{}]]></VASTAdTagURI></Wrapper></Ad></VAST>'


def video_with_defaults(video: Mapping[str, Any]) -> dict[str, Any]:
    """``video`` with Scalibur's defaults where its value is zero, empty or absent."""
    out = dict(video)
    for key, default in _VIDEO_DEFAULTS.items():
        if not out.get(key):
            out[key] = default
    return out


def is_debug(request: Mapping[str, Any]) -> bool:
    """``test: 1``, or ``ext.prebid.debug`` true."""
    if request.get("test") == 1:
        return True
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, Mapping) else None
    return isinstance(prebid, Mapping) and prebid.get("debug") is True


class ScaliburAdapter(RecipeAdapter):
    """The recipe's params and answer; the call and the bids Scalibur's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, errors = [], []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                imps.append(self.scalibur_imp(imp, self.read_params(imp, index), info))
            except DroppedImp as dropped:
                errors.append(dropped.error)
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
        if not imps:
            return [], errors
        body = {key: value for key, value in typed_top(request).items() if key not in ("cur", "ext")}
        if is_debug(request):
            body["ext"] = {"isDebug": 1}
        body["imp"] = imps
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps])], errors

    @staticmethod
    def scalibur_imp(imp: Mapping[str, Any], params: Mapping[str, Any], info: RequestInfo) -> dict[str, Any]:
        """The imp as Scalibur gets it (ConversionError when its floor has no rate to USD)."""
        out = dict(imp)
        floor = params.get("bidfloor")
        if floor is not None and floor > 0:
            out["bidfloor"] = floor
            if params.get("bidfloorcur"):
                out["bidfloorcur"] = params["bidfloorcur"]
        floor, currency = out.get("bidfloor") or 0, out.get("bidfloorcur") or ""
        if floor > 0 and currency not in ("", "USD"):
            out["bidfloor"], out["bidfloorcur"] = info.convert_currency(floor, currency, "USD"), "USD"
        out["bidfloorcur"] = out.get("bidfloorcur") or "USD"
        ext: dict[str, Any] = {"placementId": params.get("placementId") or ""}
        if (out.get("bidfloor") or 0) > 0:
            ext["bidfloor"] = out["bidfloor"]
        ext["bidfloorcur"] = out["bidfloorcur"]
        raw = imp.get("ext")
        if isinstance(raw, Mapping) and "gpid" in raw:
            ext["gpid"] = raw["gpid"]
        out["ext"] = ext
        if isinstance(out.get("video"), Mapping):
            out["video"] = video_with_defaults(out["video"])
        return typed_imp(out)

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = self.recipe.answer.decode(response)
        if answer is None:
            return None, failure
        sent = orjson.loads(call.body or b"{}").get("imp") or []
        imps = {imp.get("id"): imp for imp in sent}
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            imp = imps.get(bid["impid"])
            if imp is None:
                return None, [bad_server_response(f"Invalid bid imp ID {bid['impid']}")]
            bid_type = bid_media_type(bid, imp)
            if bid_type is None:
                return None, [bad_server_response(f"unsupported or ambiguous media type for bid id={bid['id']}")]
            result.bids.append(TypedBid(with_vast(bid) if bid_type == "video" else bid, bid_type))
        return (result, []) if result.bids else (None, [])


def bid_media_type(bid: Mapping[str, Any], imp: Mapping[str, Any]) -> str | None:
    """By mtype (1 banner, 2 video), else the imp's banner or video when it has one alone."""
    mtype = bid.get("mtype")
    if mtype in (1, 2):
        return "banner" if mtype == 1 else "video"
    banner, video = imp.get("banner") is not None, imp.get("video") is not None
    if banner != video:
        return "banner" if banner else "video"
    return None


def with_vast(bid: dict[str, Any]) -> dict[str, Any]:
    """A video bid with ``ext.vastXml`` as its markup, else (without markup) a VAST wrapper of
    ``ext.vastUrl``; an ext that does not decode as those two strings changes nothing."""
    ext = bid.get("ext")
    if not isinstance(ext, Mapping):
        return bid
    fields = go_fields(ext, "vastXml", "vastUrl")
    xml, url = fields.get("vastXml"), fields.get("vastUrl")
    if not all(value is None or isinstance(value, str) for value in (xml, url)):
        return bid
    if xml:
        return {**bid, "adm": xml}
    if url and not bid.get("adm"):
        return {**bid, "adm": _VAST_WRAPPER.format(url)}
    return bid


def build(config: AdapterConfig) -> ScaliburAdapter:
    return ScaliburAdapter.of_code("scalibur", config)
