"""Concert adapter: the recipe ``recipes/concert.yaml`` (one call with the whole request, the params
of its first imp), the request's ``ext`` given ``adapterVersion`` 1.0.0 and the ``partnerId`` param
(an absent ext made). The params' ``sizes`` must decode as Go's ``[][]int``. Bids are typed by
``mtype`` (banner, video, audio); a native bid (PBS-Go: not yet supported) or one of no known type
makes the whole answer fail with every such bid's error, and an answer left without bids is the error
"no bids returned"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, mtype_bid_type
from hbserver.adapters.golike import GoAnswer, GoKind, go_list, go_value
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter

ADAPTER_VERSION = "1.0.0"
MEDIA_TYPES = ("banner", "video", "audio")
SIZES = "openrtb_ext.ImpExtConcert.Sizes"


def check_sizes(sizes: Any) -> None:
    """JsonShapeError when ``sizes`` is neither null nor a list of (null or) lists of ints."""
    if sizes is None:
        return
    for size in go_list(sizes, SIZES):
        go_value(size, GoKind.INTS, SIZES)


def bid_error(bid: Mapping[str, Any]) -> BidderError:
    """Concert's error for a bid it does not type."""
    if mtype_bid_type(bid) == "native":
        return BidderError("native media types are not yet supported")
    return bad_server_response(f'Failed to parse media type for bid: "{bid.get("impid", "")}"')


class ConcertAdapter(RecipeAdapter):
    """The recipe's call with Concert's request ext; Concert's bid typing."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        prepared = super().prepare_imp(imp, info, index)
        try:
            check_sizes(prepared.params.get("sizes"))
        except JsonShapeError as exc:
            raise DroppedImp(self.recipe.params_error.error(str(exc))) from None
        return prepared

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        ext = request.get("ext")
        merged = {
            **(ext if isinstance(ext, Mapping) else {}),
            "adapterVersion": ADAPTER_VERSION,
            "partnerId": group[0].params.get("partnerId", ""),
        }
        return super().call({**request, "ext": merged}, group, more)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = mtype_bid_type(bid)
            if kind is not None and kind in MEDIA_TYPES:
                result.bids.append(TypedBid(bid, kind))
            else:
                errors.append(bid_error(bid))
        if errors:
            return None, errors
        if not result.bids:
            return None, [BidderError("no bids returned")]
        return result, []


def build(config: AdapterConfig) -> ConcertAdapter:
    return ConcertAdapter.of_code("concert", config)
