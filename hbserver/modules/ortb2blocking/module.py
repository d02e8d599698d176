"""The module object: its two hooks, on the account's config parsed once per config object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.hooks.api import (
    BidderRequestPayload,
    HookResult,
    InvocationContext,
    RawBidderResponsePayload,
)
from hbserver.modules.ortb2blocking.bidder_request import handle_bidder_request, handle_bidder_request_batch
from hbserver.modules.ortb2blocking.config import EMPTY, Config, ConfigCache
from hbserver.modules.ortb2blocking.raw_bidder_response import (
    handle_raw_bidder_response,
    handle_raw_bidder_response_batch,
)


class Ortb2BlockingModule:
    """PBS-Go's ``prebid.ortb2blocking``: all its settings are the account's (the host's section
    only enables it)."""

    __slots__ = ("_configs", "_last")

    def __init__(self) -> None:
        self._configs = ConfigCache()
        self._last: tuple[object, Config] = (None, EMPTY)  # the last account config object read, parsed

    def _config(self, raw: Mapping[str, Any]) -> Config:
        last = self._last
        if last[0] is raw:  # an auction's hooks read the same object
            return last[1]
        parsed = self._configs.get(raw)
        self._last = (raw, parsed)
        return parsed

    def handle_bidder_request(
        self, ctx: InvocationContext, payload: BidderRequestPayload
    ) -> HookResult[BidderRequestPayload]:
        """Sets the account's blocking lists on the bidder's request (nothing without account config)."""
        raw = ctx.account_config
        if raw is None:
            return HookResult()
        last = self._last
        cfg = last[1] if last[0] is raw else self._config(raw)
        return handle_bidder_request(cfg, payload, ctx.module_context)

    # over an auction's bidders at once (hooks API: batch_of): a function of the bidder_request module,
    # where the config is read too (one function fewer run once an auction, its code cold)
    handle_bidder_request_batch = handle_bidder_request_batch

    def handle_raw_bidder_response(
        self, ctx: InvocationContext, payload: RawBidderResponsePayload
    ) -> HookResult[RawBidderResponsePayload]:
        """Drops the bids that fail the enforced checks (every bid passes without account config)."""
        raw, last = ctx.account_config, self._last
        cfg = last[1] if last[0] is raw else EMPTY if raw is None else self._config(raw)
        return handle_raw_bidder_response(cfg, payload, ctx.module_context)

    # over an auction's answers at once (hooks API: batch_of): as handle_bidder_request_batch, a function
    # of the raw_bidder_response module
    handle_raw_bidder_response_batch = handle_raw_bidder_response_batch
