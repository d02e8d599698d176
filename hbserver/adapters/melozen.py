"""MeloZen adapter: the recipe ``recipes/melozen.yaml``, each imp sent once per media type it has
(banner, video, native, in that order), each copy keeping only that one; an imp with none of the
three fails (its audio alone does not count, and is kept in every copy)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, bad_input
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter

SPLIT_MEDIA = ("banner", "video", "native")


def media_copies(imp: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One copy of ``imp`` per media type of ``SPLIT_MEDIA`` it has, the others taken out."""
    kinds = [kind for kind in SPLIT_MEDIA if imp.get(kind) is not None]
    return [{key: value for key, value in imp.items() if key == kind or key not in SPLIT_MEDIA} for kind in kinds]


class MelozenAdapter(RecipeAdapter):
    """The recipe, every imp split by media type."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        prepared = super().prepare_imp(imp, info, index)
        if not media_copies(prepared.imp):
            raise DroppedImp(bad_input("Invalid MediaType. MeloZen only supports Banner, Video and Native."))
        return prepared

    def calls(self, request: Mapping[str, Any], prepared: list[Prepared]) -> list[RequestData]:
        return [self.call(request, [one._replace(imp=copy)]) for one in prepared for copy in media_copies(one.imp)]


def build(config: AdapterConfig) -> MelozenAdapter:
    return MelozenAdapter.of_code("melozen", config)
