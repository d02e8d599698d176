"""The tmax each bidder is told, and whether its call is still worth making: PBS-Java's
``auction.biddertmax`` (percent, min, max), ``auction.tmax_upstream_response_time`` and per-bidder
``tmax_deduction_ms`` (its ``TimeoutResolver.adjustForBidder``), and PBS-Go's ``tmax_adjustments``
(its ``getBidderTmax`` and ``hasShorterDurationThanTmax``).

With none configured (the defaults) a bidder is told the time left until the bidders' deadline, and
no policy object exists: the auction's path is as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hbserver.config import Config


@dataclass(frozen=True, slots=True)
class TmaxPolicy:
    percent: int  # of the auction's tmax a bidder may take (PBS-Java biddertmax.percent)
    min_ms: int  # the least a bidder is told (PBS-Java biddertmax.min)
    max_ms: int  # the auction tmax is capped to this first (PBS-Java biddertmax.max; 0: none)
    upstream_ms: int  # kept for the answer's trip upstream (PBS-Java tmax-upstream-response-time)
    deductions: Mapping[str, int]  # bidder code -> its tmax_deduction_ms
    overhead_ms: int  # PBS-Go, when enforced: network latency buffer + response preparation
    min_response_ms: int  # PBS-Go, when enforced: a call with less left than this is not made

    @classmethod
    def from_config(cls, config: Config) -> TmaxPolicy | None:
        """The host's policy; None when nothing is configured (a bidder is told the time left)."""
        java = config.auction
        go = config.tmax_adjustments
        enforced = go.enabled and go.bidder_response_duration_min_ms > 0 and (
            go.bidder_network_latency_buffer_ms > 0 or go.pbs_response_preparation_duration_ms > 0
        )  # PBS-Go's ProcessTMaxAdjustments: IsEnforced
        deductions = {code: adapter.tmax_deduction_ms for code, adapter in config.adapters.items()
                      if adapter.tmax_deduction_ms > 0}  # fmt: skip
        biddertmax = java.biddertmax
        if not (enforced or deductions or java.tmax_upstream_response_time or biddertmax.min or biddertmax.max
                or biddertmax.percent != 100):  # fmt: skip
            return None
        overhead = go.bidder_network_latency_buffer_ms + go.pbs_response_preparation_duration_ms if enforced else 0
        return cls(
            percent=biddertmax.percent,
            min_ms=biddertmax.min,
            max_ms=biddertmax.max,
            upstream_ms=java.tmax_upstream_response_time,
            deductions=deductions,
            overhead_ms=overhead,
            min_response_ms=go.bidder_response_duration_min_ms if enforced else 0,
        )

    def told(self, bidder_code: str, budget_ms: float, spent_ms: float) -> int:
        """The tmax sent to a bidder: ``budget_ms`` is the bidders' whole budget (the auction's tmax
        less the cache's expected time), ``spent_ms`` what the auction has used of it so far."""
        budget = min(budget_ms, self.max_ms) if self.max_ms else budget_ms
        adjusted = int(budget * self.percent / 100) - spent_ms - self.deductions.get(bidder_code, 0) - self.upstream_ms
        adjusted = max(adjusted, self.min_ms)  # PBS-Java's limitToMin
        return max(0, int(adjusted - self.overhead_ms))  # PBS-Go's getBidderTmax

    def call_deadline(self, bidder_deadline: float, now: float) -> float:
        """When a bidder's call is given up (loop time): the upstream time kept, never before
        ``min_ms`` from now (PBS-Java's adjustForRequest) nor after the bidders' deadline."""
        if not self.upstream_ms:
            return bidder_deadline
        return min(bidder_deadline, max(bidder_deadline - self.upstream_ms / 1000, now + self.min_ms / 1000))

    def too_late(self, remaining_ms: float) -> bool:
        """PBS-Go's hasShorterDurationThanTmax: less than the minimum response time is left once the
        overhead is taken off (never, unless tmax_adjustments is enforced)."""
        return self.min_response_ms > 0 and remaining_ms - self.overhead_ms < self.min_response_ms
