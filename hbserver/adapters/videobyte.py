"""VideoByte adapter: the recipe ``recipes/videobyte.yaml``, each call's endpoint followed by a query
of ``source=pbs``, the imp's ``pid`` and, when set, its ``placementId`` and ``nid`` (encoded as Go's
``url.Values`` does: keys sorted, values form-escaped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.recipe import Prepared, RecipeAdapter


def query(params: Mapping[str, Any]) -> str:
    """The call's query for the imp's params."""
    values = {"source": "pbs", "pid": params.get("pubId") or ""}
    for param, name in (("placementId", "placementId"), ("nid", "nid")):
        if params.get(param):
            values[name] = params[param]
    return urlencode(sorted(values.items()))


class VideoByteAdapter(RecipeAdapter):
    """The recipe, its endpoint's query VideoByte's own."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        call = super().call(request, group, more)
        call.uri = f"{self.endpoint}?{query(group[0].params)}"
        return call


def build(config: AdapterConfig) -> VideoByteAdapter:
    return VideoByteAdapter.of_code("videobyte", config)
