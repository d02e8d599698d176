"""Bematterfull adapter: the recipe ``recipes/bematterfull.yaml`` (the calls and the answer's
wording), its bids typed by ``ext.prebid.type`` with each failure naming the bid's index (the
shared :func:`hbserver.adapters.steps.indexed_ext_prebid_bids`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import indexed_ext_prebid_bids


class BematterfullAdapter(RecipeAdapter):
    """The recipe, the bids typed as the lm_kiviads family types them."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return indexed_ext_prebid_bids(answer)


def build(config: AdapterConfig) -> BematterfullAdapter:
    return BematterfullAdapter.of_code("bematterfull", config)
