"""LockerDome adapter: banner imps only, each needing a non-empty ``adUnitId``. With every imp valid
the request goes as it is; otherwise, as PBS-Go's adapter does, the call carries as many imps as
are valid, taken from the front of the request (not necessarily the valid ones), and the errors are
let go; with none valid there is no call. The params' and the answer's wording are the recipe
``recipes/lockerdome.yaml``'s."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp

NOT_BANNER = "LockerDome does not currently support non-banner types."


class LockerdomeAdapter(RecipeAdapter):
    """The recipe, the call LockerDome's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        recipe, imps = self.recipe, list(request.get("imp") or [])
        if not imps and recipe.no_imps_error is not None:
            return [], [recipe.no_imps_error.error()]
        errors, valid = [], 0
        for index, imp in enumerate(imps):
            if imp.get("banner") is None:
                errors.append(bad_input(NOT_BANNER))
                continue
            try:
                self.read_params(imp, index)
            except DroppedImp as exc:
                errors.append(exc.error)
                continue
            valid += 1
        if not valid:
            return [], errors + ([recipe.no_calls_error.error()] if recipe.no_calls_error else [])
        sent = imps[:valid]
        return [self.call({**request, "imp": sent}, [Prepared(typed_imp(imp), self.endpoint, {}) for imp in sent])], []


def build(config: AdapterConfig) -> LockerdomeAdapter:
    return LockerdomeAdapter.of_code("lockerdome", config)
