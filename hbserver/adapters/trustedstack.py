"""TrustedStack adapter: the recipe ``recipes/trustedstack.yaml``, its endpoint carrying the host's
external URL as the query parameter ``src`` (medianet's rule, with the server's URL instead of the
bidder's extra info)."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.medianet import endpoint_with_source
from hbserver.adapters.recipe import RecipeAdapter


def build(config: AdapterConfig) -> RecipeAdapter:
    adapter = RecipeAdapter.of_code("trustedstack", config)
    adapter.endpoint = endpoint_with_source(config.endpoint, str(config.extra.get("external_url") or ""))
    return adapter
