"""The ``pb-request-correction`` module: its processed-auction-request hook."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.hooks.api import HookFailure, HookResult, InvocationContext, Mutation, ProcessedAuctionRequestPayload
from hbserver.modules.request_correction.config import read_config
from hbserver.modules.request_correction.corrections import Correction, corrections
from hbserver.modules.request_correction.jackson import JacksonError

CODE = "pb-request-correction"
HOOK_CODE = "pb-request-correction-processed-auction-request-hook"

Payload = ProcessedAuctionRequestPayload


def _mutation(correction: Correction) -> Mutation[Payload]:
    def apply(payload: Payload) -> Payload:
        return ProcessedAuctionRequestPayload(correction.apply(payload.request))

    return Mutation("update", correction.key, apply)


class RequestCorrectionModule:
    """Corrects requests from old Prebid Mobile SDKs, per the account's configuration."""

    def handle_processed_auction_request(self, ctx: InvocationContext, payload: Payload) -> HookResult[Payload]:
        try:
            config = read_config(ctx.account_config)
        except JacksonError as error:
            raise HookFailure(str(error)) from error
        if config is None or not config.enabled:
            return HookResult()
        found = corrections(config, payload.request)
        return HookResult(mutations=[_mutation(c) for c in found])


def build(config: Mapping[str, Any]) -> RequestCorrectionModule:
    """The module; the host's section is only ``enabled`` (PBS-Java reads nothing else from it)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"hooks.modules.{CODE}: must be an object")
    return RequestCorrectionModule()
