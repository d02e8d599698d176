"""Spans of the auction's stages and bidder calls, installed only when tracing is on.

:func:`instrument` replaces an :class:`~hbserver.auction.core.AuctionService`'s stage methods on
that instance with wrappers opening a child span of the request's span (:data:`hbserver.web.tracing.CURRENT`);
with tracing off it is never called and the auction runs its own methods untouched. A request that
is not sampled has no current span, and each wrapper then costs one context-variable read.

Bidder calls are not awaited one by one in tasks of their own (:mod:`hbserver.auction.exchange.fanout`),
so their spans are written after the fact from each bidder's outcome, under the
``raw_bidder_response`` stage: a ``bidder_call`` span per bidder (its code, the code asked, outcome,
bids, errors) and a client span per HTTP call (method, host, status; never the URL, which may
carry a bidder's keys).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from hbserver.adapters.base import ErrorCode
from hbserver.auction.exchange.fanout import BidderOutcome, HttpCall
from hbserver.web.tracing import CURRENT, KIND_CLIENT, Span, Tracer
from hbserver.web.urls import url_host

# AuctionService method -> span name: PBS's stage names where one method is the stage.
STAGES = {
    "_merged": "raw_auction_request",  # stored request, default request and profiles merged
    "_resolve": "processed_auction_request",  # validated and completed
    "_bidder_requests": "bidder_request",  # privacy and each bidder's copy
    "_call_bidders": "raw_bidder_response",  # every call sent and answered (bidder spans beneath)
    "_stored_auction": "stored_auction_response",
    "_enforce_floors": "floors",
    "_enforce_dsa": "dsa",
    "_validate_bids": "bid_validation",
    "_choose_winners": "auction",
    "_cache_and_target": "cache_and_targeting",
    "_answer": "auction_response",
}

OUTCOME_BID = "bid"
OUTCOME_NO_BID = "no_bid"
OUTCOME_ERROR = "error"
OUTCOME_TIMEOUT = "timeout"
OUTCOME_TMAX = "tmax_timeout"  # too little time left to call it
OUTCOME_PANIC = "adapter_failed"  # the adapter raised


def instrument(service: Any, tracer: Tracer) -> None:
    """Wrap ``service``'s stage methods (on the instance) and its ``execute`` (the account, the
    request type and the bid count on the request's span)."""
    for method, name in STAGES.items():
        bound = getattr(service, method)
        if method == "_call_bidders":
            setattr(service, method, _bidder_stage(bound, name, tracer))
        elif inspect.iscoroutinefunction(bound):
            setattr(service, method, _async_stage(bound, name, tracer))
        else:
            setattr(service, method, _sync_stage(bound, name, tracer))
    service.execute = _noting_result(service.execute)


def _sync_stage(fn: Callable[..., Any], name: str, tracer: Tracer) -> Callable[..., Any]:
    @functools.wraps(fn)
    def stage(*args: Any, **kwargs: Any) -> Any:
        parent = CURRENT.get()
        if parent is None:
            return fn(*args, **kwargs)
        span = parent.child(name)
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:
            span.fail(exc.__class__.__name__)
            raise
        finally:
            tracer.end(span)

    return stage


def _async_stage(fn: Callable[..., Any], name: str, tracer: Tracer) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def stage(*args: Any, **kwargs: Any) -> Any:
        parent = CURRENT.get()
        if parent is None:
            return await fn(*args, **kwargs)
        span = parent.child(name)
        token = CURRENT.set(span)
        try:
            return await fn(*args, **kwargs)
        except BaseException as exc:
            span.fail(exc.__class__.__name__)
            raise
        finally:
            CURRENT.reset(token)
            tracer.end(span)

    return stage


def _bidder_stage(fn: Callable[..., Any], name: str, tracer: Tracer) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def stage(*args: Any, **kwargs: Any) -> list[BidderOutcome]:
        parent = CURRENT.get()
        if parent is None:
            return await fn(*args, **kwargs)  # type: ignore[no-any-return]
        span = parent.child(name)
        try:
            outcomes: list[BidderOutcome] = await fn(*args, **kwargs)
        except BaseException as exc:
            span.fail(exc.__class__.__name__)
            tracer.end(span)
            raise
        end_ns = time.time_ns()
        span.attributes["hbserver.bidders"] = len(outcomes)
        bidder_spans(span, outcomes, tracer)
        tracer.end(span, end_ns)
        return outcomes

    return stage


def _noting_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def execute(*args: Any, **kwargs: Any) -> Any:
        result = await fn(*args, **kwargs)
        span = CURRENT.get()
        if span is not None:
            attributes = span.attributes
            attributes["hbserver.account"] = result.account
            attributes["hbserver.request_type"] = result.request_type
            attributes["hbserver.bids"] = result.bids
        return result

    return execute


def bidder_spans(parent: Span, outcomes: Sequence[BidderOutcome], tracer: Tracer) -> None:
    """A ``bidder_call`` span per outcome, a client span per HTTP call under it (loop times made
    wall-clock times with one offset, taken now)."""
    offset_ns = time.time_ns() - int(asyncio.get_running_loop().time() * 1e9)
    for outcome in outcomes:
        start_ns = int(outcome.started * 1e9) + offset_ns
        span = parent.child("bidder_call", start_ns=start_ns)
        bids = sum(len(response.bids) for response in outcome.responses)
        result = bidder_outcome(outcome, bids)
        attributes = span.attributes
        attributes["hbserver.bidder"] = outcome.bidder.name
        attributes["hbserver.bidder.code"] = outcome.bidder.resolved.bidder.code
        attributes["hbserver.bidder.outcome"] = result
        attributes["hbserver.bidder.bids"] = bids
        attributes["hbserver.bidder.errors"] = len(outcome.errors)
        attributes["hbserver.bidder.calls"] = len(outcome.calls)
        if result in (OUTCOME_ERROR, OUTCOME_TIMEOUT, OUTCOME_TMAX, OUTCOME_PANIC):
            span.fail(result)
        end_ns = start_ns + outcome.elapsed_ms * 1_000_000
        for call in outcome.calls:
            call_end = int(call.done_at * 1e9) + offset_ns if call.done_at else end_ns
            tracer.end(_call_span(span, call, start_ns), max(call_end, start_ns))
            end_ns = max(end_ns, call_end)
        tracer.end(span, end_ns)


def _call_span(parent: Span, call: HttpCall, start_ns: int) -> Span:
    span = parent.child(call.call.method, KIND_CLIENT, start_ns)
    attributes = span.attributes
    attributes["http.request.method"] = call.call.method
    attributes["server.address"] = url_host(call.call.uri)
    if call.status:
        attributes["http.response.status_code"] = call.status
    if call.timed_out:
        attributes["error.type"] = "timeout"
        span.fail("timeout")
    elif call.error is not None:
        attributes["error.type"] = str(call.status) if call.status else "error"
        span.fail(call.error.message[:200])
    return span


def bidder_outcome(outcome: BidderOutcome, bids: int) -> str:
    """What became of one bidder: ``bid``, ``no_bid``, ``timeout``, ``tmax_timeout``, ``error`` or
    ``adapter_failed`` (bids win: a bidder with bids and errors bid)."""
    if outcome.panicked:
        return OUTCOME_PANIC
    if bids:
        return OUTCOME_BID
    if outcome.tmax_timeout and not any(call.status for call in outcome.calls):
        return OUTCOME_TMAX
    if any(call.timed_out for call in outcome.calls) or any(e.code == ErrorCode.TIMEOUT for e in outcome.errors):
        return OUTCOME_TIMEOUT
    if outcome.errors:
        return OUTCOME_ERROR
    return OUTCOME_NO_BID
