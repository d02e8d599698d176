"""Theadx adapter: the recipe ``recipes/theadx.yaml``, its call carrying the device's user agent as
``X-Device-User-Agent`` and its IPv6 then IPv4 as ``X-Real-Ip`` (Go adds both values)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.recipe import RecipeAdapter


def device_headers(request: Mapping[str, Any]) -> dict[str, str]:
    """``X-Device-User-Agent`` and ``X-Real-Ip`` from the request's device (each only when set)."""
    device = request.get("device")
    if not isinstance(device, Mapping):
        return {}
    texts = {key: device.get(key) if isinstance(device.get(key), str) else "" for key in ("ua", "ipv6", "ip")}
    headers = {"X-Device-User-Agent": texts["ua"], "X-Real-Ip": ", ".join(filter(None, (texts["ipv6"], texts["ip"])))}
    return {name: value for name, value in headers.items() if value}


class TheadxAdapter(RecipeAdapter):
    """The recipe, with Theadx's device headers."""

    def headers(self, request: Mapping[str, Any]) -> dict[str, str]:
        return {**super().headers(request), **device_headers(request)}


def build(config: AdapterConfig) -> TheadxAdapter:
    return TheadxAdapter.of_code("theadx", config)
