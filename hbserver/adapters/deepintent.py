"""Deepintent adapter: the recipe ``recipes/deepintent.yaml`` (params wording, the call, the answer
and bid typing) plus the bidder's own imp: its tagid the ``tagId`` param, its display manager
``di_prebid`` 2.0.0, and a banner it must have, sized from its first format when it has neither
``w`` nor ``h`` (none: the imp is dropped). PBS-Go decodes every imp's params into one struct, so an
imp whose params lack ``tagId`` keeps the one an earlier imp gave."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.golike import go_field, imp_bidder_params, set_omitempty
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp
from hbserver.adapters.steps import IMP_REWRITES

DISPLAY_MANAGER = {"displaymanager": "di_prebid", "displaymanagerver": "2.0.0"}


def banner_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its banner sized; DroppedImp without a banner, or unsized without formats."""
    banner = imp.get("banner")
    if not isinstance(banner, dict):
        raise DroppedImp(bad_input("We need a Banner Object in the request"))
    if banner.get("w") is None and banner.get("h") is None and not banner.get("format"):
        raise DroppedImp(bad_input("At least one size is required"))
    return IMP_REWRITES["banner_size_unsized"](imp)


class DeepintentAdapter(RecipeAdapter):
    """The recipe's calls, each imp Deepintent's."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        tagid = ""
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params = self.read_params(imp, index)
                if go_field(imp_bidder_params(imp), "tagId") is not None:  # null leaves the last one
                    tagid = params["tagId"]
                out = banner_imp({**imp, **DISPLAY_MANAGER})
            except DroppedImp as dropped:
                errors.append(dropped.error)
                continue
            set_omitempty(out, "tagid", tagid)
            calls.append(self.call(request, [Prepared(typed_imp(out), self.endpoint, params)]))
        return calls, errors


def build(config: AdapterConfig) -> DeepintentAdapter:
    return DeepintentAdapter.of_code("deepintent", config)
