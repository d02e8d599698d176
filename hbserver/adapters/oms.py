"""OMS adapter: the whole request, without headers, in one call to the endpoint with
``?publisherId=`` the first imp's ``pid`` (its integer ``publisherId`` when the pid is empty and the
number positive); the first imp without an ext goes to the endpoint as it is, one whose ext or
params do not decode fails the request. A video bid carries its duration and first category. The
params and the answer are the recipe ``recipes/oms.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo
from hbserver.adapters.common import imp_ids, json_call, with_video_facts
from hbserver.adapters.golike import GoAnswer, go_typed_request
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter


def oms_uri(endpoint: str, params: Mapping[str, Any]) -> str:
    """The endpoint with the publisher id of the first imp's params."""
    if not params["pid"] and params["publisherId"] > 0:
        return f"{endpoint}?publisherId={params['publisherId']}"
    return f"{endpoint}?publisherId={params['pid']}"


def oms_video(bid: Mapping[str, Any]) -> dict[str, Any]:
    """A video bid's duration and primary category (its first ``cat``)."""
    cats = bid.get("cat")
    return {"duration": bid.get("dur") or 0, "primary_category": cats[0] if cats else ""}


class OmsAdapter(RecipeAdapter):
    """The recipe's params and answer, OMS's call and video facts."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], []
        uri = self.endpoint
        if "ext" in imps[0]:
            try:
                uri = oms_uri(self.endpoint, self.read_params(imps[0], 0))
            except DroppedImp as exc:
                return [], [exc.error]
        return [json_call(uri, go_typed_request(request), imp_ids(imps), self.headers(request))], []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return with_video_facts(super().typed_bids(request, answer), oms_video)


def build(config: AdapterConfig) -> OmsAdapter:
    return OmsAdapter.of_code("oms", config)
