"""SilverMob adapter: the recipe ``recipes/silvermob.yaml``, an imp whose ``host`` is not one of
SilverMob's regions dropped with ``invalid host <host>``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, bad_input
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

HOSTS = frozenset({"eu", "us", "apac", "global"})


class SilvermobAdapter(RecipeAdapter):
    """The recipe, the params' host checked."""

    def read_params(self, imp: Mapping[str, Any], index: int) -> dict[str, Any]:
        params = super().read_params(imp, index)
        if params.get("host") not in HOSTS:
            raise DroppedImp(bad_input(f"invalid host {params.get('host') or ''}"))
        return params


def build(config: AdapterConfig) -> SilvermobAdapter:
    return SilvermobAdapter.of_code("silvermob", config)
