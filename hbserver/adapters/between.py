"""Between (BetweenSSP) adapter: every imp in one OpenRTB call to the endpoint filled from the last
imp's ``host`` and ``publisher_id`` (both required).

Per imp: ``secure`` is 1 when ``site.page`` is an https URL and 0 otherwise, and a banner (required)
without ``w``/``h`` takes its first format's size, that format leaving the list; its ext is kept.
Any imp that fails this, or whose ext or params do not decode, fails the whole request with every
such imp's error. The params' wording, headers and the answer are the recipe ``recipes/between.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import banner_taking_first_format, page_is_https
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp

_MISSING = 'Failed to build endpoint URL: required BetweenSSP parameter "{}" is missing'


def between_imp(imp: dict[str, Any], secure: int) -> dict[str, Any]:
    """The imp as Between gets it; DroppedImp in PBS-Go's words."""
    banner = imp.get("banner")
    if not isinstance(banner, dict):
        raise DroppedImp(bad_input("Request needs to include a Banner object"))
    sized = banner_taking_first_format(banner)
    if sized is None:
        raise DroppedImp(bad_input("Need at least one size to build request"))
    return typed_imp({**imp, "secure": secure, "banner": sized})


class BetweenAdapter(RecipeAdapter):
    """The recipe ``recipes/between.yaml`` (params, headers, the answer), the call Between's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No valid Imps in Bid Request")]
        secure = 1 if page_is_https(request) else 0
        sent, errors, params = [], [], {}
        for index, imp in enumerate(imps):
            try:
                params = self.read_params(imp, index)
                sent.append(between_imp(imp, secure))
            except DroppedImp as exc:
                errors.append(exc.error)
        if errors:
            return [], errors
        for name in ("host", "publisher_id"):
            if not params[name]:
                return [], [bad_input(_MISSING.format(name))]
        uri = self.recipe.endpoint.resolve(self.endpoint, params)
        return [self.call(request, [Prepared(imp, uri, params) for imp in sent])], []


def build(config: AdapterConfig) -> BetweenAdapter:
    return BetweenAdapter.of_code("between", config)
