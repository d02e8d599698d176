"""PGAM SSP adapter: the recipe ``recipes/pgamssp.yaml``; a floor whose currency has no rate is sent
as it came (PBS-Go's pgamssp converts only when it can, without an error)."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, ConversionError, RequestInfo
from hbserver.adapters.common import floor_in_usd
from hbserver.adapters.recipe import RecipeAdapter


class PgamsspAdapter(RecipeAdapter):
    """The recipe, its ``floors`` step keeping a floor it cannot convert."""

    @staticmethod
    def floored(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
        try:
            return floor_in_usd(imp, info)
        except ConversionError:
            return imp


def build(config: AdapterConfig) -> PgamsspAdapter:
    return PgamsspAdapter.of_code("pgamssp", config)
