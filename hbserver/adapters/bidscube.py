"""BidsCube adapter: one call per imp to the configured endpoint, the imp's ``ext`` replaced by its
``bidder`` member as it comes (the ``ext`` decoded as a map: the key matched exactly; no such member
fails with "bidder parameters required"). A bid is typed by ``ext.prebid.type`` as ``jsonparser``
finds it (``video`` and ``native`` as named, any other text a banner); one without it is dropped
with its error. The statuses' wording is the recipe ``recipes/bidscube.yaml``'s.
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
    TypedBid,
)
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, json_path_string
from hbserver.adapters.recipe import Prepared, RecipeAdapter, typed_imp

_NAMED_TYPES = ("video", "native")


def bidscube_imp(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp with its ``ext.bidder`` as the ext; JsonShapeError in PBS-Go's words otherwise."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    ext = imp["ext"]
    ext = {} if ext is None else expect_object(ext, "")
    if "bidder" not in ext:
        raise JsonShapeError("bidder parameters required")
    return typed_imp({**imp, "ext": ext["bidder"]})


class BidscubeAdapter(RecipeAdapter):
    """The recipe, the calls and the bids' types BidsCube's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = [], []
        for imp in request.get("imp") or ():
            try:
                calls.append(self.call(request, [Prepared(bidscube_imp(imp), self.endpoint, {})]))
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        return calls, errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = BidderResponse(), []
        for bid in answer.bids:
            try:
                kind = json_path_string(bid.get("ext"), "prebid", "type")
            except ValueError as exc:
                errors.append(BidderError(f"unable to read bid.ext.prebid.type: {exc}"))
                continue
            result.bids.append(TypedBid(bid, kind if kind in _NAMED_TYPES else "banner"))
        return result, errors


def build(config: AdapterConfig) -> BidscubeAdapter:
    return BidscubeAdapter.of_code("bidscube", config)
