"""An example module (the README's "Writing a module"): one hook per stage, each doing a small
visible thing, so the end-to-end tests can see every stage run in its place.

Host section (``hooks.modules.test.example``): ``enabled: true``, ``reject_bidder`` (a bidder the
bidder_request hook rejects). Account section: ``min_price`` (bids under it are dropped at
raw_bidder_response).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hbserver.hooks.api import (
    AllProcessedBidResponsesPayload,
    AuctionResponsePayload,
    BidderRequestPayload,
    EntrypointPayload,
    ExitpointPayload,
    HookFailure,
    HookResult,
    InvocationContext,
    Mutation,
    ProcessedAuctionRequestPayload,
    RawAuctionRequestPayload,
    RawBidderResponsePayload,
)

CODE = "test.example"


class ExampleModule:
    def __init__(self, reject_bidder: str) -> None:
        self.reject_bidder = reject_bidder

    def handle_entrypoint(self, ctx: InvocationContext, payload: EntrypointPayload) -> HookResult[Any]:
        if payload.headers.get("X-Example-Reject"):
            return HookResult(reject=True, nbr_code=123)
        return HookResult(debug_messages=[f"entrypoint saw {len(payload.body)} bytes"])

    def handle_raw_auction_request(self, ctx: InvocationContext, payload: RawAuctionRequestPayload) -> HookResult[Any]:
        behaviour = payload.request.get("ext", {}).get("example", "")
        if behaviour == "reject":
            return HookResult(reject=True, nbr_code=7)
        if behaviour == "raise":
            raise RuntimeError("boom")
        if behaviour == "fail":
            raise HookFailure("expected trouble", HookResult(warnings=["kept warning"]))
        if behaviour == "garbage":
            return {"not": "a result"}  # type: ignore[return-value]
        return HookResult(message="raw seen", errors=["an error for debug"], warnings=["a warning for debug"])

    async def handle_processed_auction_request(
        self, ctx: InvocationContext, payload: ProcessedAuctionRequestPayload
    ) -> HookResult[Any]:
        if payload.request.get("ext", {}).get("example") == "slow":
            await asyncio.sleep(1)

        def keywords(p: ProcessedAuctionRequestPayload) -> ProcessedAuctionRequestPayload:
            site = {**p.request["site"], "keywords": "from-module"}
            return replace(p, request={**p.request, "site": site})

        tags = {"activities": [{"name": "example", "status": "success", "results": [{"status": "success-modify"}]}]}
        return HookResult(mutations=[Mutation("update", ("bidrequest", "site", "keywords"), keywords)],
                          analytics_tags=tags, module_context={"seen_processed": True})

    def handle_bidder_request(self, ctx: InvocationContext, payload: BidderRequestPayload) -> HookResult[Any]:
        if payload.bidder == self.reject_bidder:
            return HookResult(reject=True, nbr_code=301)

        def badv(p: BidderRequestPayload) -> BidderRequestPayload:
            return replace(p, request={**p.request, "badv": ["blocked.example"]})

        return HookResult(mutations=[Mutation("update", ("bidrequest", "badv"), badv)])

    def handle_raw_bidder_response(self, ctx: InvocationContext, payload: RawBidderResponsePayload) -> HookResult[Any]:
        floor = (ctx.account_config or {}).get("min_price", 0)
        assert ctx.module_context.get("seen_processed") is True  # handed on from processed_auction_request

        def drop_cheap(p: RawBidderResponsePayload) -> RawBidderResponsePayload:
            kept = [b for b in p.response.bids if b.bid["price"] >= floor]
            return replace(p, response=replace(p.response, bids=kept))

        return HookResult(mutations=[Mutation("update", ("bids",), drop_cheap)])

    def handle_all_processed_bid_responses(
        self, ctx: InvocationContext, payload: AllProcessedBidResponsesPayload
    ) -> HookResult[Any]:
        return HookResult(debug_messages=[f"{len(payload.bids)} bids"])

    def handle_auction_response(self, ctx: InvocationContext, payload: AuctionResponsePayload) -> HookResult[Any]:
        def mark(p: AuctionResponsePayload) -> AuctionResponsePayload:
            ext = {**p.response.get("ext", {}), "example": "was here"}
            return replace(p, response={**p.response, "ext": ext})

        return HookResult(mutations=[Mutation("update", ("response", "ext", "example"), mark)])

    def handle_exitpoint(self, ctx: InvocationContext, payload: ExitpointPayload) -> HookResult[Any]:
        def header(p: ExitpointPayload) -> ExitpointPayload:
            return replace(p, headers={**p.headers, "X-Example": "exitpoint"})

        return HookResult(mutations=[Mutation("update", ("header",), header)])


def build(config: Mapping[str, Any]) -> ExampleModule:
    reject = config.get("reject_bidder", "")
    if not isinstance(reject, str):
        raise ValueError("reject_bidder: must be a string")
    return ExampleModule(reject)
