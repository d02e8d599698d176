"""33Across adapter: OpenRTB calls to ``ssc.33across.com``, one per product and zone.

Only banner and video imps are sent. Each imp's ``ext`` is replaced by ``{"ttx": {"prod":
productId, "zoneid": zoneId or else siteId}}`` and imps sharing product and zone go in one call.
A video must have a non-zero ``w`` and ``h`` and carry ``protocols``, ``mimes`` and
``playbackmethod``; an ``instream`` video without ``startdelay`` is sent with 0 (pre-roll).
``request.ext`` becomes ``{"ttx": {"caller": [...]}}``: the callers already named there plus
Prebid Server (other ext keys are dropped; an unreadable ext is dropped with an error). The answer
and bid typing are the recipe ``recipes/33across.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, found, imp_ids, json_call
from hbserver.adapters.golike import go_media_objects, imp_bidder_params
from hbserver.adapters.recipe import RecipeAdapter

CALLER = {"name": "Prebid-Server", "version": "n/a"}
HEADERS = {"Content-Type": "application/json;charset=utf-8"}
VIDEO_ERROR = "One or more invalid or missing video field(s) w, h, protocols, mimes, playbackmethod"


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _callers(value: Any) -> list[dict[str, Any]]:
    """``ext.ttx.caller`` as Go's ``[]TtxCaller`` re-encodes it (only non-empty name/version)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise JsonShapeError(f"cannot unmarshal ttx.reqTtxExt.Caller: expect [ or n, but found {found(value)}")
    out = []
    for item in value:
        caller = expect_object(item, "[]ttx.TtxCaller")
        kept = {}
        for key, where in (("name", "ttx.TtxCaller.Name"), ("version", "ttx.TtxCaller.Version")):
            text = expect_string(caller.get(key), where)
            if text:
                kept[key] = text
        out.append(kept)
    return out


def request_ext(ext: Any) -> dict[str, Any]:
    """The outgoing ``request.ext``; raises JsonShapeError when the incoming one cannot be read."""
    ttx = expect_object(expect_object(ext, "").get("ttx"), "ttx.reqExt.Ttx")
    return {"ttx": {"caller": [*_callers(ttx.get("caller")), CALLER]}}


def _video(video: dict[str, Any], product: str) -> dict[str, Any]:
    if (
        not video.get("w")
        or not video.get("h")
        or video.get("protocols") is None
        or video.get("mimes") is None
        or video.get("playbackmethod") is None
    ):
        raise _BadImp(VIDEO_ERROR)
    if product == "instream" and video.get("startdelay") is None:
        return {**video, "startdelay": 0}
    return video


def _build_imp(imp: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(outgoing imp, grouping key); raises _BadImp or JsonShapeError (the bidder error's text)."""
    if imp.get("banner") is None and imp.get("video") is None:
        raise _BadImp(f"Imp ID {imp.get('id', '')} must have at least one of [Banner, Video] defined")
    params = imp_bidder_params(imp)
    zone = expect_string(params.get("zoneId"), "openrtb_ext.ExtImp33across.ZoneId")
    site = expect_string(params.get("siteId"), "openrtb_ext.ExtImp33across.SiteId")
    product = expect_string(params.get("productId"), "openrtb_ext.ExtImp33across.ProductId")
    ttx = {"prod": product}
    if zone or site:
        ttx["zoneid"] = zone or site
    out = dict(go_media_objects(imp))
    out["ext"] = {"ttx": ttx}
    video = imp.get("video")
    if isinstance(video, dict):
        out["video"] = _video(out["video"], product)
    return out, product + ttx.get("zoneid", "")


class ThirtyThreeAcrossAdapter(RecipeAdapter):
    """The recipe ``recipes/33across.yaml`` (the answer and bid typing), the calls 33Across's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        base = dict(request)
        try:
            base["ext"] = request_ext(request.get("ext"))
        except JsonShapeError as exc:
            errors.append(BidderError(str(exc)))
            base.pop("ext", None)
        groups: dict[str, list[dict[str, Any]]] = {}
        for imp in request.get("imp") or ():
            try:
                out, key = _build_imp(imp)
            except (_BadImp, JsonShapeError) as exc:
                errors.append(bad_input(str(exc)))
                continue
            groups.setdefault(key, []).append(out)
        calls = [json_call(self.endpoint, {**base, "imp": imps}, imp_ids(imps), HEADERS) for imps in groups.values()]
        return calls, errors


def build(config: AdapterConfig) -> ThirtyThreeAcrossAdapter:
    return ThirtyThreeAcrossAdapter.of_code("33across", config)
