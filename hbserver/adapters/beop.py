"""BeOp adapter: the recipe ``recipes/beop.yaml``, with the first imp's ``pid``, ``nid`` and
``nptnid`` (those not empty) set in the endpoint's query, re-encoded as Go's ``url.Values`` does
(keys sorted); an answer of any status but 204, 400 and 503 is read as one (the recipe's
``read_statuses``: PBS-Go checks no other)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hbserver.adapters.base import (
    AdapterConfig,
    RequestInfo,
)
from hbserver.adapters.recipe import Prepared, RecipeAdapter

_QUERY_PARAMS = ("pid", "nid", "nptnid")


def beop_endpoint(endpoint: str, params: dict[str, Any]) -> str:
    """``endpoint`` with each non-empty id param set in its query, the query re-encoded (sorted)."""
    parts = urlsplit(endpoint)
    set_here = [(name, params[name]) for name in _QUERY_PARAMS if params.get(name)]
    names = {name for name, _ in set_here}
    pairs = [pair for pair in parse_qsl(parts.query, keep_blank_values=True) if pair[0] not in names] + set_here
    pairs.sort(key=lambda pair: pair[0])
    return urlunsplit(parts._replace(query=urlencode(pairs)))


class BeopAdapter(RecipeAdapter):
    """The recipe, its endpoint's query and the statuses it reads BeOp's own."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        prepared = super().prepare_imp(imp, info, index)
        return prepared._replace(uri=beop_endpoint(prepared.uri, dict(prepared.params)))


def build(config: AdapterConfig) -> BeopAdapter:
    return BeopAdapter.of_code("beop", config)
