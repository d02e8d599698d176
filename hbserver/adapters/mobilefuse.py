"""MobileFuse adapter: the banner, video and native imps in one OpenRTB call to the configured endpoint.

Each imp's ``placement_id`` becomes its ``tagid`` (an imp without one keeps the value read before
it, as Go decodes every imp's params into one struct) and its ext is cut down to ``skadn``. Params
that do not decode before the first imp whose params do, or in any imp sent, fail the request. The
request is sent as PBS-Go writes its typed model. The answer and bid typing are the recipe
``recipes/mobilefuse.yaml``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import (
    GoKind,
    go_field,
    go_typed_request,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.recipe import RecipeAdapter

MEDIA = ("banner", "video", "native")


def placement_id(imp: Mapping[str, Any], before: int) -> int:
    """The imp's ``placement_id``, ``before`` when its params have none; JsonShapeError when its ext
    or params do not decode."""
    params = imp_bidder_params(imp)
    if not any(key.lower() == "placement_id" for key in params):
        return before
    value = go_value(go_field(params, "placement_id"), GoKind.INT, "openrtb_ext.ExtImpMobileFuse.PlacementId")
    return before if value is None else value


def _first_params_errors(imps: list[Any]) -> list[BidderError]:
    """The errors of the imps whose params do not decode, up to the first one whose params do."""
    errors = []
    for imp in imps:
        try:
            placement_id(imp, 0)
        except JsonShapeError as exc:
            errors.append(BidderError(str(exc)))
            continue
        break
    return errors


def _imps_as_sent(imps: list[Any]) -> list[dict[str, Any]]:
    """The imps with a banner, video or native object, each with its ``tagid`` and ``skadn`` ext."""
    sent = []
    placement = 0
    for imp in imps:
        if all(imp.get(kind) is None for kind in MEDIA):
            continue
        placement = placement_id(imp, placement)
        out = {key: value for key, value in imp.items() if key != "ext"}
        out["tagid"] = str(placement)
        skadn = go_field(imp["ext"], "skadn")
        if skadn is not None:
            out["ext"] = {"skadn": skadn}
        sent.append(out)
    return sent


class MobileFuseAdapter(RecipeAdapter):
    """The recipe ``recipes/mobilefuse.yaml`` (the answer and bid typing), the call MobileFuse's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = [imp for imp in request.get("imp") or () if isinstance(imp, dict)]
        errors = _first_params_errors(imps)
        if errors:
            return [], errors
        try:
            sent = _imps_as_sent(imps)
        except JsonShapeError as exc:
            return [], [BidderError(str(exc))]
        if not sent:
            return [], [BidderError("No valid imps")]
        body = go_typed_request({**request, "imp": sent})
        return [json_call(self.endpoint, body, imp_ids(sent), JSON_HEADERS)], []


def build(config: AdapterConfig) -> MobileFuseAdapter:
    return MobileFuseAdapter.of_code("mobilefuse", config)
