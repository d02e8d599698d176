"""Limelight Digital adapter: the recipe ``recipes/limelightdigital.yaml``; each call's request is
Limelight's own: its ``id`` made ``<request id>-<imp id>`` and its ``ext`` removed. The builder
refuses an empty endpoint in PBS-Go's words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.recipe import Prepared, RecipeAdapter


class LimelightDigitalAdapter(RecipeAdapter):
    """The recipe, each call's request named after its imp and without ``ext``."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        named = {key: value for key, value in request.items() if key != "ext"}
        named["id"] = f"{request.get('id', '')}-{group[0].imp.get('id', '')}"
        return super().call(named, group, more)


def build(config: AdapterConfig) -> LimelightDigitalAdapter:
    if not config.endpoint:
        raise ValueError("Endpoint  adapter parameter is not provided")  # sic: PBS-Go's two spaces
    return LimelightDigitalAdapter.of_code("limelightDigital", config)
