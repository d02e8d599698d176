"""PBS-Go's ``prebid.rulesengine`` module: per-account rule trees that include or exclude
bidders at the processed-auction-request stage (see README.md in this folder)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hbserver.modules.rulesengine.args import is_int
from hbserver.modules.rulesengine.module import DEFAULT_MAX_ACCOUNTS, RulesEngineModule
from hbserver.modules.rulesengine.schema_functions import IntN

__all__ = ["RulesEngineModule", "build"]


def _int(config: Mapping[str, Any], key: str, default: int, minimum: int | None = None) -> int:
    value = config.get(key)
    if value is None:
        return default
    if not is_int(value) or (minimum is not None and value < minimum):
        bound = "" if minimum is None else f" >= {minimum}"
        raise ValueError(f"hooks.modules.prebid.rulesengine.{key} must be an integer{bound}")
    return int(value)


def _geoscopes(config: Mapping[str, Any]) -> dict[str, Sequence[str]]:
    """``geoscopes``: bidder -> geoscope list (PBS-Go reads them from the bidder-info files)."""
    value = config.get("geoscopes")
    if value is None:
        return {}
    where = "hooks.modules.prebid.rulesengine.geoscopes"
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object of bidder -> list of strings")
    for bidder, scopes in value.items():
        if not isinstance(scopes, list) or not all(isinstance(item, str) for item in scopes):
            raise ValueError(f"{where}.{bidder} must be a list of strings")
    return {str(bidder): tuple(scopes) for bidder, scopes in value.items()}


def build(
    config: Mapping[str, Any],
    *,
    intn: IntN | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> RulesEngineModule:
    """The module from the host's ``hooks.modules.prebid.rulesengine`` section: ``refreshrateseconds``
    (PBS-Go's; 0, the default, never rebuilds an account's trees), ``geoscopes`` and
    ``cache_max_accounts`` (hbserver's). ``intn`` (``n -> [0, n)``) and ``clock`` are for tests."""
    if not isinstance(config, Mapping):
        raise ValueError("hooks.modules.prebid.rulesengine must be an object")
    return RulesEngineModule(
        refresh_seconds=_int(config, "refreshrateseconds", 0),
        geoscopes=_geoscopes(config),
        max_accounts=_int(config, "cache_max_accounts", DEFAULT_MAX_ACCOUNTS, minimum=1),
        intn=intn,
        clock=clock,
    )
