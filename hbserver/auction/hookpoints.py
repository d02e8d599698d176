"""Where the auction hands its data to the hooks, one function per stage (PBS-Go's ``Execute*Stage``
call sites), so the auction's own stages stay as they are when no module is configured (the
caller holds no executor then, and calls none of these).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.bids.nonbid import SeatNonBids
from hbserver.auction.common.messages import Message
from hbserver.auction.exchange.fanout import BidderOutcome
from hbserver.auction.exchange.split import BidderRequest
from hbserver.hooks.api import (
    AllProcessedBidResponsesPayload,
    AuctionResponsePayload,
    BidderRequestPayload,
    ProcessedAuctionRequestPayload,
    RawAuctionRequestPayload,
    RawBidderResponsePayload,
    Stage,
)
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import ALL_PROCESSED_BID_RESPONSES, AUCTION_REQUEST, AUCTION_RESPONSE, Rejection
from hbserver.hooks.trace import modules_json

# stages as module globals: an Enum class's attribute goes through EnumType's __getattr__ hook (several times the cost)
_RAW_AUCTION_REQUEST = Stage.RAW_AUCTION_REQUEST
_PROCESSED_AUCTION_REQUEST = Stage.PROCESSED_AUCTION_REQUEST
_BIDDER_REQUEST = Stage.BIDDER_REQUEST
_RAW_BIDDER_RESPONSE = Stage.RAW_BIDDER_RESPONSE
_ALL_PROCESSED_BID_RESPONSES = Stage.ALL_PROCESSED_BID_RESPONSES
_AUCTION_RESPONSE = Stage.AUCTION_RESPONSE

_new = object.__new__  # a slotted payload dataclass without its constructor's call

MODULE_REJECTION_CODE = 11  # PBS-Go's ModuleRejectionErrorCode (a warning for a rejected bidder)


class HookRejected(Exception):
    """A hook rejected the whole request: it is answered with ``nbr`` and no auction."""

    def __init__(self, rejection: Rejection, request: Any) -> None:
        super().__init__(rejection.message())
        self.rejection = rejection
        self.request = request if isinstance(request, dict) else None


async def raw_auction_request(hooks: HookExecutor, body: dict[str, Any]) -> dict[str, Any]:
    """The body before stored requests are merged; raises HookRejected."""
    payload, rejection = await hooks.run(_RAW_AUCTION_REQUEST, RawAuctionRequestPayload(body), AUCTION_REQUEST)
    if rejection is not None:
        raise HookRejected(rejection, payload.request)
    return _dict_or(payload.request, body)


async def processed_auction_request(hooks: HookExecutor, request: dict[str, Any]) -> dict[str, Any]:
    """The validated request; raises HookRejected."""
    stage = _PROCESSED_AUCTION_REQUEST
    payload, rejection = await hooks.run(stage, ProcessedAuctionRequestPayload(request), AUCTION_REQUEST)
    if rejection is not None:
        raise HookRejected(rejection, request)
    return _dict_or(payload.request, request)


def bidder_requests(
    hooks: HookExecutor, requests: list[BidderRequest], warnings: dict[str, list[Message]]
) -> list[BidderRequest] | Awaitable[list[BidderRequest]]:
    """Each bidder's request through the hooks: changed, kept, or rejected (a warning for the bidder).
    The kept requests, or (where a hook of the stage must be awaited) an awaitable of them: a plain
    function, as :func:`raw_bidder_responses`, because the common stage (one hook in its batch form)
    needs no await, and a coroutine made and run once an auction costs its cold code and memory."""
    payloads = []  # a loop, not a comprehension: no function made per auction (its code is cold: once an auction);
    for bidder_request in requests:  # each payload without its constructor's call (one function fewer run, cold)
        payload = _new(BidderRequestPayload)
        payload.request, payload.bidder = bidder_request.request, bidder_request.name
        payloads.append(payload)
    answers = hooks.run_batch(_BIDDER_REQUEST, payloads)
    if answers is None:
        return _bidder_requests_each(hooks, requests, payloads, warnings)
    if hooks.all_kept:  # every request kept, as it was or changed in place
        return requests
    return _kept_requests(requests, answers, warnings)


async def _bidder_requests_each(
    hooks: HookExecutor, requests: list[BidderRequest], payloads: list[BidderRequestPayload],
    warnings: dict[str, list[Message]],
) -> list[BidderRequest]:  # fmt: skip
    answers = await hooks.run_each(_BIDDER_REQUEST, [(payload, payload.bidder) for payload in payloads])
    return requests if hooks.all_kept else _kept_requests(requests, answers, warnings)


def _kept_requests(
    requests: list[BidderRequest], answers: list[tuple[Any, Rejection | None]], warnings: dict[str, list[Message]]
) -> list[BidderRequest]:
    kept = []
    for bidder_request, (payload, rejection) in zip(requests, answers):  # noqa: B905 (one answer per run; strict= costs)
        if rejection is not None:
            name = bidder_request.name
            warnings.setdefault(name, []).append(Message(MODULE_REJECTION_CODE, rejection.message()))
            continue
        changed = payload.request
        if changed is not bidder_request.request and isinstance(changed, dict):
            bidder_request.request = changed  # this auction's own (split made it)
        kept.append(bidder_request)
    return kept


def raw_bidder_responses(
    hooks: HookExecutor, outcomes: list[BidderOutcome], warnings: dict[str, list[Message]]
) -> Awaitable[None] | None:
    """Each answer a bidder gave, as its adapter read it, through the hooks (a rejected answer is dropped).
    None when done, or an awaitable to await where a hook of the stage must be (see :func:`bidder_requests`)."""
    payloads = []  # a loop, each payload made without its constructor's call: as bidder_requests's
    for outcome in outcomes:
        for response in outcome.responses:
            payload = _new(RawBidderResponsePayload)
            payload.response, payload.bidder = response, outcome.bidder.name
            payloads.append(payload)
    if not payloads:
        return None
    batched = hooks.run_batch(_RAW_BIDDER_RESPONSE, payloads)
    if batched is None:
        return _raw_bidder_responses_each(hooks, outcomes, payloads, warnings)
    if not hooks.all_quiet:  # an answer changed or dropped
        _kept_responses(outcomes, batched, warnings)
    return None


async def _raw_bidder_responses_each(
    hooks: HookExecutor, outcomes: list[BidderOutcome], payloads: list[RawBidderResponsePayload],
    warnings: dict[str, list[Message]],
) -> None:  # fmt: skip
    answers = await hooks.run_each(_RAW_BIDDER_RESPONSE, [(payload, payload.bidder) for payload in payloads])
    if not hooks.all_quiet:
        _kept_responses(outcomes, answers, warnings)


def _kept_responses(
    outcomes: list[BidderOutcome], answers: list[tuple[Any, Rejection | None]], warnings: dict[str, list[Message]]
) -> None:
    """Each outcome's responses as the hooks left them (in their order: an answer per response)."""
    answered = iter(answers)
    for outcome in outcomes:
        if not outcome.responses:
            continue
        name = outcome.bidder.name
        kept = []
        for response in outcome.responses:
            payload, rejection = next(answered)
            if rejection is not None:
                warnings.setdefault(name, []).append(Message(MODULE_REJECTION_CODE, rejection.message()))
                continue
            kept.append(payload.response if payload.response is not None else response)
        outcome.responses = kept


async def all_processed_bids(
    hooks: HookExecutor,
    bids: list[AuctionBid],
    request: dict[str, Any],
    nonbids: SeatNonBids | None,
    errors: dict[str, list[dict[str, Any]]],
) -> list[AuctionBid]:
    """The auction's bids through the hooks; the bids they report rejecting become seat-non-bids (and
    their bidder's errors)."""
    stage = _ALL_PROCESSED_BID_RESPONSES
    payload, _ = await hooks.run(stage, AllProcessedBidResponsesPayload(bids, request), ALL_PROCESSED_BID_RESPONSES)
    for rejected in hooks.rejected_bids:
        if nonbids is not None:
            for bid in rejected.bids:
                nonbids.add_bid(bid, rejected.nonbid_code)
        if rejected.error is not None:
            errors.setdefault(rejected.bidder, []).append(rejected.error)
    hooks.rejected_bids.clear()
    return payload.bids if isinstance(payload.bids, list) else bids


async def auction_response(
    hooks: HookExecutor, response: dict[str, Any], request: Any, debug_allowed: bool
) -> dict[str, Any]:
    """The response through the hooks, then the modules' outcomes in its ``ext.prebid.modules``."""
    payload, _ = await hooks.run(_AUCTION_RESPONSE, AuctionResponsePayload(response), AUCTION_RESPONSE)
    response = _dict_or(payload.response, response)
    return with_modules(response, hooks, request, debug_allowed)


def with_modules(response: dict[str, Any], hooks: HookExecutor, request: Any, debug_allowed: bool) -> dict[str, Any]:
    """``ext.prebid.modules`` set from the outcomes so far (PBS-Go's EnrichExtBidResponse)."""
    trace, debug = _shown(request, debug_allowed)
    if not (debug or trace) or not hooks.ran():  # nothing to show: the outcomes are not even built
        return response
    modules = modules_json(hooks.outcomes, trace, debug)
    if modules is None:
        return response
    ext = response.get("ext")
    ext = dict(ext) if isinstance(ext, dict) else {}
    prebid = ext.get("prebid")
    ext["prebid"] = {**(prebid if isinstance(prebid, dict) else {}), "modules": modules}
    return {**response, "ext": ext}


def rejected_response(rejection: Rejection, request: dict[str, Any] | None) -> dict[str, Any]:
    """PBS-Go's answer to a rejected request: its id and the hook's no-bid reason."""
    response: dict[str, Any] = {"id": request.get("id", "") if request else ""}
    response["nbr"] = rejection.nbr
    return response


def _shown(request: Any, debug_allowed: bool) -> tuple[str, bool]:
    """:func:`trace_level` and (``debug_allowed`` and) :func:`_debug` of the request, read at once."""
    if not isinstance(request, dict):
        return "", False
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if not isinstance(prebid, dict):
        return "", debug_allowed and request.get("test") == 1
    level = prebid.get("trace")
    debug = debug_allowed and (request.get("test") == 1 or prebid.get("debug") is True)
    return level if isinstance(level, str) else "", debug


def _debug(request: Any) -> bool:
    if not isinstance(request, dict):
        return False
    if request.get("test") == 1:
        return True
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    return isinstance(prebid, dict) and prebid.get("debug") is True


def _dict_or(value: Any, fallback: dict[str, Any]) -> dict[str, Any]:
    return value if isinstance(value, dict) else fallback
