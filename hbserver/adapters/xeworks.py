"""Xeworks adapter: bematterfull's (PBS-Go's two adapters differ only in their names), run from the
recipe ``recipes/xeworks.yaml``, its bids typed by the shared ``indexed_ext_prebid_bids``."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.bematterfull import BematterfullAdapter


def build(config: AdapterConfig) -> BematterfullAdapter:
    return BematterfullAdapter.of_code("xeworks", config)
