"""SmartyAds adapter: the recipe ``recipes/smartyads.yaml``, the endpoint's ``{{.Host}}``,
``{{.SourceId}}`` and ``{{.AccountID}}`` from the last imp's params (an unsafe host: ``Invalid Host``,
no call), and an answer with any 2xx status but 204 read as a 200."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    bad_input,
)
from hbserver.adapters.common import resolve_macros
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter
from hbserver.adapters.steps import is_safe_host


class SmartyadsAdapter(RecipeAdapter):
    """The recipe, the last imp's params ruling the endpoint."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        prepared: list[Prepared] = []
        try:
            for index, imp in enumerate(request.get("imp") or ()):
                prepared.append(self.prepare_imp(imp, info, index))
        except DroppedImp as dropped:
            return [], [dropped.error]
        params = prepared[-1].params if prepared else {}
        if not is_safe_host(params.get("host") or ""):
            return [], [bad_input("Invalid Host")]
        values = {"Host": params["host"], "SourceId": params["sourceid"] or "", "AccountID": params["accountid"] or ""}
        uri = resolve_macros(self.endpoint, values)
        return [self.call(request, [one._replace(uri=uri) for one in prepared])], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if 200 < response.status < 300 and response.status != 204:  # Go reads any other 2xx
            response = ResponseData(200, response.body, response.headers)
        return super().make_bids(request, call, response)


def build(config: AdapterConfig) -> SmartyadsAdapter:
    return SmartyadsAdapter.of_code("smartyads", config)
