"""PBS-Go's ``prebid.ortb2blocking`` module: the account's blocked advertiser domains, categories,
apps, banner types and creative attributes go on each bidder's request, and the bids that carry
them are dropped where the account enforces the blocks. See README.md for its configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.modules.ortb2blocking.module import Ortb2BlockingModule

__all__ = ["Ortb2BlockingModule", "build"]


def build(config: Mapping[str, Any]) -> Ortb2BlockingModule:
    """The module, from the host's ``hooks.modules.prebid.ortb2blocking`` section. PBS-Go's builder
    reads nothing from it (every setting is the account's): only its shape is checked."""
    if config is not None and not isinstance(config, Mapping):
        raise ValueError("hooks.modules.prebid.ortb2blocking: expected an object")
    return Ortb2BlockingModule()
