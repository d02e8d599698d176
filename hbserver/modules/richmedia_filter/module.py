"""The ``pb-richmedia-filter`` module: its all-processed-bid-responses hook.

The hooks API has no way yet to hand back rejected bids (PBS-Java's ``InvocationResult.rejections``):
the hook returns a :class:`RichmediaHookResult`, a HookResult whose ``rejections`` name each bidder's
rejected bids, for the auction to report as seat non-bids with code 350
(:data:`~hbserver.modules.richmedia_filter.mraid.REJECTION_CODE`) and as the bidder's "Invalid bid"
error (code 5), once the mutation that removes them has been applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hbserver.hooks.api import AllProcessedBidResponsesPayload, HookResult, InvocationContext, Mutation, RejectedBids
from hbserver.modules.richmedia_filter.config import Properties, account_properties, host_properties
from hbserver.modules.richmedia_filter.mraid import (
    REJECTION_CODE,
    BidderRejection,
    analytics_tags,
    contains_pattern,
    rejections,
)

HOOK_CODE = "pb-richmedia-filter-all-processed-bid-responses-hook"

Payload = AllProcessedBidResponsesPayload


class RichmediaHookResult(HookResult[Payload]):
    """A HookResult with the bids the hook rejects (PBS-Java's ``rejections``), by bidder."""

    __slots__ = ("rejections",)

    def __init__(self, rejections: list[BidderRejection], **result: Any) -> None:
        super().__init__(**result)
        self.rejections = rejections


def _without_pattern(pattern: str | None) -> Mutation[Payload]:
    """Drops the bids that contain the pattern from the payload it is applied to."""

    def apply(payload: Payload) -> Payload:
        return replace(payload, bids=[bid for bid in payload.bids if not contains_pattern(bid, pattern)])

    return Mutation("update", ("bids",), apply)


class RichmediaFilterModule:
    """Rejects rich media (MRAID) bids when the account's, else the host's, settings say so."""

    def __init__(self, host: Properties) -> None:
        self.host = host

    def handle_all_processed_bid_responses(self, ctx: InvocationContext, payload: Payload) -> HookResult[Payload]:
        properties = account_properties(ctx.account_config) or self.host
        if properties.filter_mraid is not True:
            return HookResult()
        pattern = properties.mraid_script_pattern
        found = rejections(pattern, payload.bids)
        if not found:
            return HookResult()
        reported = [RejectedBids(r.bidder, list(r.bids), REJECTION_CODE, r.error()) for r in found]
        return RichmediaHookResult(
            mutations=[_without_pattern(pattern)], analytics_tags=analytics_tags(found), rejected_bids=reported,
            rejections=found,
        )


def build(config: Mapping[str, Any]) -> RichmediaFilterModule:
    """The module with the host's ``filter-mraid`` and ``mraid-script-pattern``."""
    return RichmediaFilterModule(host_properties(config))
