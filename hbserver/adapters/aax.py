"""AAX adapter: the recipe ``recipes/aax.yaml``; its endpoint carries the host's ``extra_info`` as
the query parameter ``src``, built as Media.net's is (:func:`hbserver.adapters.medianet.endpoint_with_source`)."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.medianet import endpoint_with_source
from hbserver.adapters.recipe import RecipeAdapter


def build(config: AdapterConfig) -> RecipeAdapter:
    adapter = RecipeAdapter.of_code("aax", config)
    adapter.endpoint = endpoint_with_source(config.endpoint, str(config.extra.get("extra_info") or ""))
    return adapter
