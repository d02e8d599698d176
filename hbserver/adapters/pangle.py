"""Pangle adapter: the recipe ``recipes/pangle.yaml`` (one call per imp, the TOKEN header, the
answer's status texts) with Pangle's own imp ext and bid types.

The imp's ext is sent as PBS-Go's ``wrappedExtImpBidder``: its ``prebid`` (as ``ExtImpPrebid``
re-encodes it) and ``bidder`` as they came, ``is_prebid: true``, the ``adtype`` of the imp (a rewarded
video 7, an interstitial video 8, a banner 2 when interstitial else 1, a native with a request 5; an
imp of no such kind is dropped) and, when both the ``appid`` and ``placementid`` params are given,
``networkids`` with them (one without the other drops the imp). A bid's type comes from its
``ext.pangle.adtype`` (1 and 2 banner, 5 native, 7 and 8 video); a bid without one is dropped with
its error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, expect_object, typed_catching
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, go_ext_imp_prebid, go_field, go_int, typed_bids
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter
from hbserver.adapters.steps import is_rewarded

AD_TYPES = {1: "banner", 2: "banner", 5: "native", 7: "video", 8: "video"}


def ad_type(imp: Mapping[str, Any]) -> int | None:
    """Pangle's ad type for the imp, None when it has none of its kinds."""
    interstitial = imp.get("instl") == 1
    if imp.get("video") is not None:
        if is_rewarded(imp):
            return 7
        if interstitial:
            return 8
    if imp.get("banner") is not None:
        return 2 if interstitial else 1
    native = imp.get("native")
    if isinstance(native, Mapping) and native.get("request"):
        return 5
    return None


def _prebid(ext: Mapping[str, Any]) -> dict[str, Any] | None:
    """``ext.prebid`` as Go's ``ExtImpPrebid`` writes it again (None when absent or null)."""
    prebid = go_field(ext, "prebid")
    if not isinstance(prebid, Mapping):
        return None
    return go_ext_imp_prebid(prebid)


def pangle_ext(imp: Mapping[str, Any], params: Mapping[str, Any], kind: int) -> dict[str, Any]:
    """The imp's ext as Pangle gets it (the ext decoded: an object)."""
    ext = imp["ext"]
    out: dict[str, Any] = {"prebid": _prebid(ext), "bidder": go_field(ext, "bidder")}
    if go_field(ext, "ae"):
        out["ae"] = go_field(ext, "ae")
    out.update(adtype=kind, is_prebid=True)
    if params["appid"] and params["placementid"]:
        out["networkids"] = {"appid": params["appid"], "placementid": params["placementid"]}
    elif params["appid"] or params["placementid"]:
        raise DroppedImp(bad_input("only one of appid or placementid is provided"))
    return out


def bid_type(bid: Mapping[str, Any]) -> str:
    """The type ``ext.pangle.adtype`` names; JsonShapeError in PBS-Go's words otherwise."""
    try:
        if bid.get("ext") is None:
            raise JsonShapeError(ABSENT_OBJECT)
        pangle = go_field(expect_object(bid["ext"], ""), "pangle")
        adtype = None if pangle is None else go_field(expect_object(pangle, "pangle.pangleBidExt.Pangle"), "adtype")
        kind = None if adtype is None else go_int(adtype, "pangle.bidExt.AdType")
    except JsonShapeError:
        raise JsonShapeError("invalid bid ext") from None
    if kind is None:
        raise JsonShapeError("missing pangleExt/adtype in bid ext")
    if kind not in AD_TYPES:
        raise JsonShapeError("unrecognized adtype in response")
    return AD_TYPES[kind]


class PangleAdapter(RecipeAdapter):
    """The recipe, the imp's ext and the bids' types Pangle's own."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        prepared = super().prepare_imp(imp, info, index)
        kind = ad_type(imp)
        if kind is None:
            raise DroppedImp(bad_input("not a supported adtype"))
        return prepared._replace(imp={**prepared.imp, "ext": pangle_ext(imp, prepared.params, kind)})

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, typed_catching(bid_type, JsonShapeError))


def build(config: AdapterConfig) -> PangleAdapter:
    return PangleAdapter.of_code("pangle", config)
