"""The ``pb-response-correction`` module: its all-processed-bid-responses hook.

The correction applies to app requests only, and this stage's payload carries the bids alone: the
hook reads the auction's request from ``payload.request`` or ``ctx.request`` (PBS-Java's
``auctionContext().getBidRequest()``), which the hooks API does not have yet; without it the hook
does nothing and says so in a warning.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from hbserver.hooks.api import AllProcessedBidResponsesPayload, HookFailure, HookResult, InvocationContext, Mutation
from hbserver.modules.request_correction.jackson import JacksonError
from hbserver.modules.response_correction.appvideohtml import correct
from hbserver.modules.response_correction.config import read_config

CODE = "pb-response-correction"
HOOK_CODE = "pb-response-correction-all-processed-bid-responses-hook"
NO_REQUEST_WARNING = "pb-response-correction: the auction request is not available at this stage"
# PBS-Java's logging.sampling-rate default: the share of the correction's warnings that are logged
LOG_SAMPLING_RATE = 0.01

log = logging.getLogger(__name__)

Payload = AllProcessedBidResponsesPayload


def _auction_request(ctx: InvocationContext, payload: Payload) -> Any:
    for holder in (payload, ctx):
        request = getattr(holder, "request", None)
        if isinstance(request, dict):
            return request
    return None


def sampled_warning(rate: float) -> Callable[[str], None]:
    """PBS-Java's ConditionalLogger.warn: logs a message with probability ``rate`` (always from 1)."""

    def warn(message: str) -> None:
        if rate >= 1.0 or random.random() < rate:
            log.warning(message)

    return warn


def _app_video_html(excluded: tuple[str | None, ...], warn: Callable[[str], None]) -> Mutation[Payload]:
    def apply(payload: Payload) -> Payload:
        return AllProcessedBidResponsesPayload([correct(bid, excluded, warn) for bid in payload.bids])

    return Mutation("update", ("bids",), apply)


class ResponseCorrectionModule:
    """Corrects bids' media types in app auctions, per the account's configuration."""

    def __init__(self, log_sampling_rate: float = LOG_SAMPLING_RATE) -> None:
        self.warn = sampled_warning(log_sampling_rate)

    def handle_all_processed_bid_responses(self, ctx: InvocationContext, payload: Payload) -> HookResult[Payload]:
        try:
            config = read_config(ctx.account_config)
        except JacksonError as error:
            raise HookFailure(str(error)) from error
        if config is None or not config.enabled:
            return HookResult()
        app_video_html = config.app_video_html
        if app_video_html is None or not app_video_html.enabled:
            return HookResult()
        request = _auction_request(ctx, payload)
        if request is None:
            return HookResult(warnings=[NO_REQUEST_WARNING])
        if request.get("app") is None:
            return HookResult()
        return HookResult(mutations=[_app_video_html(app_video_html.excluded_bidders, self.warn)])


def build(config: Mapping[str, Any]) -> ResponseCorrectionModule:
    """The module; the host's section is only ``enabled`` (PBS-Java reads nothing else from it)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"hooks.modules.{CODE}: must be an object")
    return ResponseCorrectionModule()
