"""Media.net adapter: the recipe ``recipes/medianet.yaml``, its endpoint Media.net's own.

The endpoint carries the host's ``extra_info`` (its own URL, from the bidder definition or the
host's config) as the query parameter ``src``; the query is then re-encoded with its parameters
sorted by name, as Go's ``url.Values`` does.
"""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.golike import with_query_param
from hbserver.adapters.recipe import RecipeAdapter


def endpoint_with_source(endpoint: str, source: str) -> str:
    """``endpoint`` with ``src=<source>`` added to its query (keys sorted, Go's query encoding);
    unchanged when ``source`` is empty."""
    if not source:
        return endpoint
    try:
        return with_query_param(endpoint, "src", source)
    except ValueError:  # Go's url.Parse fails too: the endpoint stays as it is
        return endpoint


def build(config: AdapterConfig) -> RecipeAdapter:
    adapter = RecipeAdapter.of_code("medianet", config)
    adapter.endpoint = endpoint_with_source(config.endpoint, str(config.extra.get("extra_info") or ""))
    return adapter
