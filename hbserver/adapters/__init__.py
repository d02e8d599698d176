"""Bidder adapters: ``hbserver/adapters/<code>.py`` for each built-in code, each exposing
``build(config: AdapterConfig) -> Adapter``. An alias runs the module of the code it is an alias of.
"""

from __future__ import annotations

import importlib

from hbserver.adapters.base import Adapter, AdapterConfig


class UnknownAdapter(LookupError):
    """No adapter module for a built-in code (a bidder definition without an implementation)."""


def build_adapter(adapter_code: str, config: AdapterConfig) -> Adapter:
    """The adapter instance for ``config.bidder``, running the module ``adapter_code``."""
    try:
        module = importlib.import_module(f"hbserver.adapters.{adapter_code}")
    except ModuleNotFoundError as exc:
        if exc.name != f"hbserver.adapters.{adapter_code}":
            raise
        raise UnknownAdapter(adapter_code) from None
    adapter: Adapter = module.build(config)
    return adapter
