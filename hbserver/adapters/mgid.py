"""Mgid adapter: the whole request in one call to the endpoint followed by the first accountId any
imp gives (none: ``accountId is not set``); any imp whose ext or params do not decode fails the
request. ``tmax`` defaults to 200. Each imp's tagid is ``<placementId>/<imp id>`` (the imp id alone
without a placement); the params' floor (``bidfloor``, else ``bidFloor``) replaces the imp's when
positive, and their currency (``currency``, else ``cur``; USD does not count) its floor currency.
The params' wording and the answer are the recipe ``recipes/mgid.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import imp_ids, json_call
from hbserver.adapters.golike import go_typed_request
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter


def mgid_imp(imp: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The imp with its tagid, floor and floor currency from the params."""
    out = dict(imp)
    imp_id = imp.get("id") or ""
    out["tagid"] = f"{params['placementId']}/{imp_id}" if params["placementId"] else imp_id
    currency = next((params[name] for name in ("currency", "cur") if params[name] not in ("", "USD")), "")
    floor = params["bidfloor"] if params["bidfloor"] > 0 else params["bidFloor"]
    if floor > 0:
        out["bidfloor"] = floor
    if currency:
        out["bidfloorcur"] = currency
    return out


class MgidAdapter(RecipeAdapter):
    """The recipe's params and answer, the call Mgid's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        path, imps = "", []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params = self.read_params(imp, index)
            except DroppedImp as exc:
                return [], [exc.error]
            path = path or params["accountId"]
            imps.append(mgid_imp(imp, params))
        if not path:
            return [], [bad_input("accountId is not set")]
        body = go_typed_request({**request, "tmax": request.get("tmax") or 200, "imp": imps})
        return [json_call(self.endpoint + path, body, imp_ids(imps), self.headers(request))], []


def build(config: AdapterConfig) -> MgidAdapter:
    return MgidAdapter.of_code("mgid", config)
