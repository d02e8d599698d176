"""ucfunnel adapter: the call is the recipe ``recipes/ucfunnel.yaml``'s; the bids are ucfunnel's own.

PBS-Go types each bid by the imps of the call that was sent (its body decoded again, a body that
does not decode failing the answer), not by the auction's request: the first imp with the bid's
impid that has a banner, video, audio or native object (in that order) decides, a bid no imp
decides is native. Only banner and video bids are kept; the others are let go without an error.
Every seatbid is read. An answer without any seatbid is no answer (PBS-Go's adapter panics on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, ResponseData, TypedBid
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import GoKind, go_fields, go_json_object, go_list, go_value
from hbserver.adapters.recipe import RecipeAdapter

_KEPT = ("banner", "video")
_ORDER = {"banner": "Banner", "video": "Video", "audio": "Audio", "native": "Native"}  # Go field names


def sent_imps(body: bytes) -> list[Mapping[str, Any]]:
    """The imps of a sent call's body as PBS-Go decodes it (``openrtb2.BidRequest``); JsonShapeError
    in json-iterator's words when it does not decode."""
    request = expect_object(go_json_object(body), "")
    imps = go_list(go_fields(request, "imp").get("imp"), "openrtb2.BidRequest.Imp")
    out = []
    for imp in imps:
        fields = go_fields(expect_object(imp, "[]openrtb2.Imp"), "id", *_ORDER)
        fields["id"] = go_value(fields.get("id"), GoKind.STRING, "openrtb2.Imp.ID") or ""
        for kind, go_name in _ORDER.items():
            if fields.get(kind) is not None:
                expect_object(fields[kind], f"openrtb2.Imp.{go_name}")
        out.append(fields)
    return out


def bid_type(imps: list[Mapping[str, Any]], imp_id: Any) -> str:
    """The type of a bid for ``imp_id``: the first imp with that id and a media object decides (an
    imp with that id but none is passed over); native when none does."""
    for imp in imps:
        if imp.get("id") == imp_id:
            for kind in _ORDER:
                if imp.get(kind) is not None:
                    return kind
    return "native"


class UcfunnelAdapter(RecipeAdapter):
    """The recipe's calls and answer wording; bids typed by the call's own imps."""

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = self.recipe.answer.decode(response)
        if answer is None:
            return None, failure
        try:
            imps = sent_imps(call.body)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        if not answer.seatbids:
            return None, []
        result = BidderResponse(currency="USD")
        for bid in answer.bids:
            kind = bid_type(imps, bid.get("impid"))
            if kind in _KEPT:
                result.bids.append(TypedBid(bid, kind))
        return result, []


def build(config: AdapterConfig) -> UcfunnelAdapter:
    return UcfunnelAdapter.of_code("ucfunnel", config)
