"""smartclip (smartx) adapter: the recipe ``recipes/smartx.yaml``, each call also carrying
``Forwarded: for=<device IPv4>`` when the device has one (no other PBS-Go adapter sends it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.recipe import RecipeAdapter


class SmartxAdapter(RecipeAdapter):
    """The recipe, with the Forwarded header."""

    def headers(self, request: Mapping[str, Any]) -> dict[str, str]:
        headers = super().headers(request)
        if "X-Forwarded-For" in headers:  # the recipe's ``ip`` set: the device's IPv4, when not empty
            headers["Forwarded"] = "for=" + headers["X-Forwarded-For"]
        return headers


def build(config: AdapterConfig) -> SmartxAdapter:
    return SmartxAdapter.of_code("smartx", config)
