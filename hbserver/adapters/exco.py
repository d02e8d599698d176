"""EXCO adapter: the recipe ``recipes/exco.yaml`` (one call, tagids from the params, the answer),
the publisher EXCO's own: the last imp's publisherId becomes the publisher id of the request's app
and of its site, each only when the request has one (neither is made), their other fields kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.recipe import Prepared, RecipeAdapter
from hbserver.adapters.steps import macro_text


def with_publisher(request: Mapping[str, Any], publisher: str) -> dict[str, Any]:
    """The request with ``publisher.id`` set in its app and its site, where they are not null (an
    empty id leaves the publisher without one)."""
    out = dict(request)
    for holder in ("app", "site"):
        place = request.get(holder)
        if not isinstance(place, Mapping):
            continue
        existing = place.get("publisher")
        kept = {key: value for key, value in (existing if isinstance(existing, Mapping) else {}).items() if key != "id"}
        out[holder] = {**place, "publisher": {**kept, "id": publisher} if publisher else kept}  # Go omits an empty id
    return out


class ExcoAdapter(RecipeAdapter):
    """The recipe's call for every imp, the publisher id from the last imp's params."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        publisher = macro_text(group[-1].params.get("publisherId"))
        return super().call(with_publisher(request, publisher), group, more)


def build(config: AdapterConfig) -> ExcoAdapter:
    return ExcoAdapter.of_code("exco", config)
