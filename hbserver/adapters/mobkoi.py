"""Mobkoi adapter: the whole request in one call to the endpoint, the first imp's tagid replaced by
its ``placementId`` (without one, its own tagid must be set) and, when the user gives a consent
string, ``user.ext`` replaced by ``{"consent": ...}``. Its bids come under the seat ``mobkoi``. The
params and the answer are the recipe ``recipes/mobkoi.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo
from hbserver.adapters.common import imp_ids, json_call
from hbserver.adapters.golike import GoAnswer, go_typed_request
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

NO_TAG = "invalid because it comes with neither request.imp[0].tagId nor req.imp[0].ext.Bidder.placementId"
SEAT = "mobkoi"


def with_consent_ext(request: dict[str, Any]) -> dict[str, Any]:
    """The request with ``user.ext`` = ``{"consent": <user.consent>}`` when the consent is set."""
    user = request.get("user")
    if not isinstance(user, Mapping) or not user.get("consent"):
        return request
    return {**request, "user": {**user, "ext": {"consent": user["consent"]}}}


class MobkoiAdapter(RecipeAdapter):
    """The recipe's params and answer, Mobkoi's call and seat."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        if not imps:
            return [], []
        try:
            placement = self.read_params(imps[0], 0)["placementId"]
        except DroppedImp as exc:
            return [], [exc.error]
        if placement:
            imps[0] = {**imps[0], "tagid": placement}
        elif not imps[0].get("tagid"):
            return [], [BidderError(NO_TAG)]
        body = go_typed_request(with_consent_ext({**request, "imp": imps}))
        return [json_call(self.endpoint, body, imp_ids(imps), self.headers(request))], []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        for typed in result.bids if result is not None else ():
            typed.seat = SEAT
        return result, errors


def build(config: AdapterConfig) -> MobkoiAdapter:
    return MobkoiAdapter.of_code("mobkoi", config)
