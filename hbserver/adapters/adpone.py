"""Adpone adapter: the recipe ``recipes/adpone.yaml`` (one call with the whole request), its errors
PBS-Go's: the first imp's ext and then its params are decoded, each failure reported as bad input,
and the call is made all the same. After an ext that does not decode Go decodes the bidder it has:
none (the empty input's error) unless the ext named it before failing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import ABSENT_OBJECT, ImpExtError, go_field
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import ParamsSpec

_PARAMS = ParamsSpec("openrtb_ext.ExtAdpone", {"placementId": ("PlacementId", "string")}, null_is_absent=True)


def param_errors(imp: Mapping[str, Any]) -> list[BidderError]:
    """The errors of decoding the imp's ext and params (none when both decode)."""
    try:
        _PARAMS.read(imp)
    except ImpExtError as exc:
        ext = imp.get("ext")
        bidder = go_field(ext, "bidder") if isinstance(ext, Mapping) else None
        return [
            bad_input(str(exc)),
            *(param_errors({"ext": {"bidder": bidder}}) if bidder is not None else [bad_input(ABSENT_OBJECT)]),
        ]
    except JsonShapeError as exc:
        return [bad_input(str(exc))]
    return []


class AdponeAdapter(RecipeAdapter):
    """The recipe's call, with the first imp's decoding errors."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        calls, errors = super().make_requests(request, info)
        return calls, param_errors(imps[0]) + errors


def build(config: AdapterConfig) -> AdponeAdapter:
    return AdponeAdapter.of_code("adpone", config)
