"""MgidX adapter: the recipe ``recipes/mgidx.yaml`` run with emtv's rule (PBS-Go's two adapters share
the request code): an imp naming neither a placement nor an endpoint left out silently, the first
imp whose ext or params fail stopping the request, no call at all "found no valid impressions"."""

from __future__ import annotations

from hbserver.adapters.base import AdapterConfig
from hbserver.adapters.emtv import EmtvAdapter


def build(config: AdapterConfig) -> EmtvAdapter:
    return EmtvAdapter.of_code("mgidX", config)
