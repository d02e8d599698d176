"""Adprime adapter: the recipe ``recipes/adprime.yaml`` (one call per imp, its tagid the ``TagID``
param) plus the bidder's own rules for each call: the imp's ext becomes ``{"bidder": {"TagID",
"placementId"}}`` (both the tag), and on a site request the ``keywords`` param joined by commas
becomes ``site.keywords`` and the ``audiences`` param ``user.customdata``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.golike import set_omitempty
from hbserver.adapters.recipe import Prepared, RecipeAdapter


def call_request(request: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The request of one imp's call: a site request takes its keywords and audiences."""
    out = dict(request)
    site = request.get("site")
    if not isinstance(site, dict):
        return out
    if params.get("keywords"):
        out["site"] = {**site, "keywords": ",".join(params["keywords"])}
    if params.get("audiences"):
        user = request.get("user")
        out["user"] = dict(user) if isinstance(user, dict) else {}
        set_omitempty(out["user"], "customdata", ",".join(params["audiences"]))
    return out


class AdprimeAdapter(RecipeAdapter):
    """The recipe's calls, each imp's ext naming its tag and the request taking its keywords."""

    def calls(self, request: Mapping[str, Any], prepared: list[Prepared]) -> list[RequestData]:
        calls = []
        for one in prepared:
            tag = one.params["TagID"]
            imp = {**one.imp, "ext": {"bidder": {"TagID": tag, "placementId": tag}}}
            calls += super().calls(call_request(request, one.params), [one._replace(imp=imp)])
        return calls


def build(config: AdapterConfig) -> AdprimeAdapter:
    return AdprimeAdapter.of_code("adprime", config)
