"""OpenWeb adapter: the whole request in one call to the endpoint with ``?publisher_id=`` the org.
The imps are read in order until one gives an org (trimmed of white space) or else a non-zero aid;
every imp read must name a placement and decode, else the request fails. The params' wording and
the answer are the recipe ``recipes/openweb.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import imp_ids, json_call
from hbserver.adapters.golike import GO_SPACE, go_typed_request
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

_PREFIX = "checkExtAndExtractOrg: "


def org_of(params: Mapping[str, Any]) -> str | None:
    """The org an imp's params give (a non-empty org trimmed, even to nothing; else a non-zero aid),
    None when they give neither."""
    if params["org"]:
        return str(params["org"]).strip(GO_SPACE)
    return str(params["aid"]) if params["aid"] else None


class OpenwebAdapter(RecipeAdapter):
    """The recipe's params and answer, OpenWeb's call."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        org: str | None = None
        for index, imp in enumerate(imps):
            try:
                params = self.read_params(imp, index)
            except DroppedImp as exc:
                return [], [exc.error]
            if not params["placementId"]:
                return [], [BidderError(_PREFIX + "no placement id supplied")]
            org = org_of(params)
            if org is not None:
                break
        else:
            return [], [BidderError(_PREFIX + "no org or aid supplied")]
        uri = f"{self.endpoint}?publisher_id={org}"
        return [json_call(uri, go_typed_request(request), imp_ids(imps), self.headers(request))], []


def build(config: AdapterConfig) -> OpenwebAdapter:
    return OpenwebAdapter.of_code("openweb", config)
