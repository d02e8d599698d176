"""MinuteMedia adapter: the recipe ``recipes/minutemedia.yaml``; a test request (``test: 1``) goes to
MinuteMedia's fixed test endpoint instead of the configured one (the one step of its own)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.recipe import RecipeAdapter

TEST_ENDPOINT = "https://pbs.minutemedia-prebid.com/pbs-test"


class MinutemediaAdapter(RecipeAdapter):
    """The recipe, run against the test endpoint for a test request."""

    test_adapter: RecipeAdapter | None = None

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        test = request.get("test")
        if self.test_adapter is not None and test == 1 and not isinstance(test, bool):
            return self.test_adapter.make_requests(request, info)
        return super().make_requests(request, info)


def build(config: AdapterConfig) -> MinutemediaAdapter:
    adapter = MinutemediaAdapter.of_code("minutemedia", config)
    adapter.test_adapter = RecipeAdapter.of_code("minutemedia", replace(config, endpoint=TEST_ENDPOINT))
    return adapter
