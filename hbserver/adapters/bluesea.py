"""Bluesea adapter: one call per imp whose params decode (``pubid`` and ``token``, both non-empty),
each carrying the whole request, every imp with its ext, to ``<endpoint>?pubid=..&token=..`` (Go's
``url.Values``: keys sorted, values query-escaped). A params error quotes the ext or the bidder
object as JSON. Bids are typed by ``bid.ext.mediatype`` (banner, native, video); a bid whose ext
does not decode or names another type is dropped with its error. The params, headers and answer
wording are the recipe ``recipes/bluesea.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote_plus

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, imp_ids, json_call, typed_catching
from hbserver.adapters.golike import GoAnswer, ImpExtError, go_field, go_json_text, typed_bids
from hbserver.adapters.recipe import RecipeAdapter, typed_imp, typed_top

MEDIA_TYPES = ("banner", "native", "video")


def _raw(value: Any, present: bool) -> str:
    """A raw JSON member as Go's ``string(json.RawMessage)`` prints it ("" when absent)."""
    return go_json_text(value) if present else ""


def _params_failure(imp: Mapping[str, Any], exc: JsonShapeError) -> BidderError:
    """Bluesea's words for an imp whose ext (ImpExtError) or bidder params do not decode."""
    if isinstance(exc, ImpExtError):
        return bad_input(f"Error in parsing imp.ext. err = {exc}, imp.ext = {_raw(imp.get('ext'), 'ext' in imp)}")
    ext = imp.get("ext")
    bidder = go_field(ext, "bidder") if isinstance(ext, Mapping) else None
    return bad_input(f"Error in parsing imp.ext.bidder. err = {exc}, bidder = {_raw(bidder, bidder is not None)}")


def bid_type(bid: Mapping[str, Any]) -> str:
    """The bid's ``ext.mediatype``; ValueError in Bluesea's words when the ext does not decode or the
    type is none of banner, native, video."""
    try:
        if "ext" not in bid:
            raise JsonShapeError("absent")
        kind = go_field(expect_object(bid["ext"], ""), "mediatype")
        kind = "" if kind is None else expect_string(kind, "")
    except JsonShapeError:
        raise ValueError("Error in parsing bid.ext") from None
    if kind not in MEDIA_TYPES:
        raise ValueError(f"Unknown bid type, {kind}")
    return kind


class BlueseaAdapter(RecipeAdapter):
    """The recipe's params, headers and answer; Bluesea's calls and bid typing."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        if not imps:
            return [], [bad_input("Empty Imp objects")]
        body = {**typed_top(request), "imp": [typed_imp(imp) for imp in imps]}
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in imps:
            try:
                params = self.recipe.params.read(imp)
            except JsonShapeError as exc:
                errors.append(_params_failure(imp, exc))
                continue
            failure = next(filter(None, (check.failure(params) for check in self.recipe.checks)), None)
            if failure is not None:
                errors.append(failure)
                continue
            query = f"pubid={quote_plus(params['pubid'], safe='')}&token={quote_plus(params['token'], safe='')}"
            calls.append(json_call(f"{self.endpoint}?{query}", body, imp_ids(imps), self.headers(request)))
        return calls, errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, typed_catching(bid_type, ValueError))


def build(config: AdapterConfig) -> BlueseaAdapter:
    return BlueseaAdapter.of_code("bluesea", config)
