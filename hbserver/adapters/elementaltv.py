"""ElementalTV adapter: the recipe ``recipes/elementaltv.yaml`` (params, endpoint, headers and the
answer's wording) plus the bidder's own rules: each call's request id is ``<id>-<adunit>``; bids are
typed by a map of the request's imps (banner, video, audio, native), where an imp id given twice or
an imp without a media object fails the answer (bad input), as does a bid of an unknown imp; a
video bid needs ``ext.ads.video`` and takes its ``duration`` and first category as video facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, first_media_type
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, GoKind, go_field, go_value
from hbserver.adapters.recipe import Prepared, RecipeAdapter

_ORDER = ("banner", "video", "audio", "native")
NO_MEDIA = "one of $.imp.banner, $.imp.video, $.imp.audio and $.imp.native field required"
NO_VIDEO_EXT = "$.seatbid.bid.ext.ads.video required"


class _Failed(Exception):
    """The whole answer fails; ``error`` says why."""

    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def imp_types(imps: Any) -> dict[Any, str]:
    """imp id -> its media type; _Failed for an id given twice or an imp without a media object."""
    types: dict[Any, str] = {}
    for imp in imps or ():
        if imp.get("id", "") in types:
            raise _Failed(bad_input(f"duplicate $.imp.id {imp.get('id', '')}"))
        kind = first_media_type(imp, _ORDER)
        if kind is None:
            raise _Failed(bad_input(NO_MEDIA))
        types[imp.get("id", "")] = kind
    return types


def video_facts(bid: Mapping[str, Any]) -> dict[str, Any]:
    """The video bid's duration (``ext.ads.video.duration``) and first category; _Failed without them."""
    try:
        if "ext" not in bid:
            raise JsonShapeError(ABSENT_OBJECT)
        ads = go_field(expect_object(bid["ext"], ""), "ads")
        video = None if ads is None else go_field(expect_object(ads, "elementaltv.adsImpExt"), "video")
        if video is None:
            raise _Failed(bad_server_response(NO_VIDEO_EXT))
        duration = go_value(
            go_field(expect_object(video, ""), "duration"), GoKind.INT, "elementaltv.adsVideoExt.Duration"
        )
    except JsonShapeError as exc:
        raise _Failed(bad_server_response(str(exc))) from None
    cat = bid.get("cat") or [""]
    return {"duration": duration or 0, "primary_category": cat[0]}


class ElementalTVAdapter(RecipeAdapter):
    """The recipe's calls, each with its own request id; ElementalTV's bid typing."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        request = {**request, "id": f"{request.get('id', '')}-{group[0].params.get('adunit', '')}"}
        return super().call(request, group, more)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse()
        try:
            types = imp_types(request.get("imp"))
            for bid in answer.bids:
                kind = types.get(bid.get("impid", ""))
                if kind is None:
                    raise _Failed(bad_server_response(f"unknown impid: {bid.get('impid', '')}"))
                video = video_facts(bid) if kind == "video" else None
                result.bids.append(TypedBid(bid, kind, bid_video=video))
        except _Failed as failed:
            return None, [failed.error]
        return result, []


def build(config: AdapterConfig) -> ElementalTVAdapter:
    return ElementalTVAdapter.of_code("elementaltv", config)
