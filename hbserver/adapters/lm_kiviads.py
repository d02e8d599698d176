"""LmKiviads adapter: bematterfull's code under another name -- the recipe ``recipes/lm_kiviads.yaml``
(the calls and the answer's wording), its bids typed as the lm_kiviads family types them (the
shared :func:`hbserver.adapters.steps.indexed_ext_prebid_bids`, through bematterfull's adapter class)."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.bematterfull import BematterfullAdapter


def build(config: AdapterConfig) -> BematterfullAdapter:
    return BematterfullAdapter.of_code("lm_kiviads", config)
