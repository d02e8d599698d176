"""From adapters' typed bids to auction bids: validation, currency, bid adjustments (factors and
rules, :mod:`hbserver.auction.bids.bidadjust`; reference §3.5, §3.6).

A rejected bid never enters the auction; its reason goes to the bidder's errors except the price
rules, which PBS-Go reports only in debug. PBS-Go's ``validateBid`` errors
(``exchange/bidder_validate_bids.go``) carry no code, so their entries are code 999 (and count as
``unknown`` adapter errors); a bid with no media type the auction knows is a bad server response
(code 3), as an adapter reports it. Each accepted bid is a copy of the bidder's bid with
``price`` in the auction currency and ``ext.origbidcpm``/``ext.origbidcur``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    BidderError,
    BidderResponse,
    ConversionError,
    ErrorCode,
    TypedBid,
    bad_server_response,
)
from hbserver.auction.bids.altcodes import NOT_CONFIGURED, AlternateBidderCodes
from hbserver.auction.bids.bidadjust import BidAdjustments
from hbserver.auction.common.iso4217 import iso4217_problem
from hbserver.auction.common.messages import Message, WarningCode
from hbserver.web.body import MAX_JSON_DEPTH, within_depth

Convert = Callable[[float, str, str], float]
_INF = float("inf")
# A bid must be typed as one of OpenRTB's media types; some PBS adapters can return "" (an untyped
# bid) with an error.
MEDIA_TYPES = frozenset(MTYPE_TO_TYPE.values())


@dataclass(slots=True)
class AuctionBid:
    bidder: str  # the name as spelled in the request (seat, targeting)
    adapter: str  # the core adapter code (bid.ext.prebid.meta.adaptercode)
    bid: dict[str, Any]  # our copy, price adjusted and converted
    bid_type: str
    price: float
    imp_id: str
    deal: bool
    targeting: dict[str, str] = field(default_factory=dict)
    cache_id: str = ""
    vast_cache_id: str = ""
    events: dict[str, str] | None = None  # bid.ext.prebid.events, made once for the cache and the response
    meta: dict[str, Any] | None = None  # the adapter's bid meta (PBS-Go BidMeta): the response's ext.prebid.meta
    video: dict[str, Any] | None = None  # the adapter's bid video facts (BidVideo): ext.prebid.video
    deal_priority: int = 0  # the adapter's (DealPriority): ext.prebid.dealpriority when not 0
    generated_id: str = ""  # generate_bid_id: ext.prebid.bidid, the id its event URLs carry


def generate_bid_ids(bids: list[AuctionBid], new_id: Callable[[], str]) -> None:
    """PBS-Go's bidIDGenerator (exchange/exchange.go HoldAuction, host key ``generate_bid_id``): a new
    id for every bid, shown as ``ext.prebid.bidid`` and used by its event URLs in place of ``bid.id``."""
    for bid in bids:
        bid.generated_id = new_id()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(slots=True)
class RejectedBid:
    """A bid the auction dropped, for the analytics record: ``price`` in ``currency`` (the auction's,
    adjusted, when its currency converts; else its own), None when the bid had no usable price."""

    bidder: str
    typed: TypedBid
    reason: str
    price: float | None
    currency: str


def _rejected(
    bidder: str, typed: TypedBid, reason: str, scale: float | None, currency: str, from_currency: str
) -> RejectedBid:
    bid = typed.bid if isinstance(typed.bid, dict) else {}
    price = bid.get("price")
    if not _number(price) or not math.isfinite(price):
        price = None
    elif scale is not None:
        price = price * scale
    return RejectedBid(bidder, typed, reason, price, currency if scale is not None else from_currency)


def accept_bids(
    bidder: str,
    adapter: str,
    responses: list[BidderResponse],
    imp_ids: set[str],
    currency: str,
    convert: Convert,
    adjustments: BidAdjustments | None,
    debug: bool,
    seen: list[AuctionBid | RejectedBid] | None = None,
    alt_codes: AlternateBidderCodes = NOT_CONFIGURED,
    warnings: dict[str, list[Message]] | None = None,
) -> tuple[list[AuctionBid], list[BidderError]]:
    """The bids of one bidder that may enter the auction, and what was wrong with the others.

    A bid with a ``seat`` other than the bidder's own enters under that seat when ``alt_codes``
    allows it; else it is dropped with PBS-Go's warning 10005 under ``warnings[bidder]``.

    ``seen`` (analytics only) receives every bid in the order returned: the accepted one, or why it
    was dropped (the price rules in their debug wording, so that they always name themselves).
    """
    accepted: list[AuctionBid] = []
    errors: list[BidderError] = []
    seat_currency: dict[str, str] = {}  # PBS-Go's seat currency: what its last bid's adjustments left
    for response in responses:
        core_currency = currency  # the bidder's own seat, reset per answer (PBS-Go requestBid)
        from_currency = (response.currency or "USD").upper()
        rate = 1.0 if from_currency == currency else _rate(bidder, response, from_currency, currency, convert,
                                                            errors, seen)  # fmt: skip
        if rate is None:
            continue
        for typed in response.bids:
            bid = typed.bid
            seat = bidder
            if typed.seat and typed.seat != bidder:
                if not _seat_allowed(bidder, typed, alt_codes, warnings, seen, currency, from_currency):
                    continue
                seat = typed.seat
            problem, code = _bid_problem(typed, imp_ids, debug)
            if problem is not None:
                _reject(bidder, typed, problem, code, imp_ids, rate, adjustments, errors, seen, currency, from_currency)
                continue
            original = float(bid["price"])
            if adjustments is None:
                price = original * rate
            else:  # a static adjustment sets the price in its own currency, and that becomes the seat's
                price, core_currency_after = adjustments.adjust(
                    original, rate, core_currency, bidder, typed.seat, typed.bid_type, bid["impid"],
                    bid.get("dealid"), convert,
                )  # fmt: skip
                seat_currency[seat] = core_currency_after
                if seat == bidder:
                    core_currency = core_currency_after
            accepted.append(_auction_bid(seat, adapter, typed, dict(bid), price, original, from_currency))
            if seen is not None:
                seen.append(accepted[-1])
    if seat_currency and any(c != currency for c in seat_currency.values()):  # only after a static rule
        accepted = _drop_foreign_seats(accepted, errors, seat_currency, currency, seen)
    return accepted, errors


def _rate(
    bidder: str,
    response: BidderResponse,
    from_currency: str,
    currency: str,
    convert: Convert,
    errors: list[BidderError],
    seen: list[AuctionBid | RejectedBid] | None,
) -> float | None:
    """The rate from the answer's currency to the auction's; None when there is none (its bids are
    then dropped with the conversion error)."""
    try:
        return convert(1.0, from_currency, currency)
    except ConversionError as exc:
        if response.bids:
            errors.append(BidderError(str(exc), ErrorCode.UNKNOWN))
            if seen is not None:
                seen.extend(_rejected(bidder, t, str(exc), None, currency, from_currency) for t in response.bids)
        return None


def _bid_problem(typed: TypedBid, imp_ids: set[str], debug: bool) -> tuple[str | None, ErrorCode]:
    """Why a bid cannot enter the auction (None: it can; "": silently), and its error code."""
    bid = typed.bid
    problem = _problem(bid, imp_ids, debug)
    if problem is None and typed.bid_type not in MEDIA_TYPES:
        problem = f'Bid "{bid["id"]}" has no media type the auction knows: {typed.bid_type!r}'
        return problem, ErrorCode.BAD_SERVER_RESPONSE
    return problem, ErrorCode.UNKNOWN  # PBS-Go's validateBid errors have no code of their own


def _reject(
    bidder: str,
    typed: TypedBid,
    problem: str,
    code: ErrorCode,
    imp_ids: set[str],
    rate: float,
    adjustments: BidAdjustments | None,
    errors: list[BidderError],
    seen: list[AuctionBid | RejectedBid] | None,
    currency: str,
    from_currency: str,
) -> None:
    """A bid :func:`_bid_problem` refuses: its error (none when ``problem`` is "", a price rule outside
    debug), and its analytics entry, whose reason is the problem in its debug wording."""
    if problem:
        errors.append(BidderError(problem, code))
    if seen is not None:
        scale = rate if adjustments is None else rate * adjustments.factor(bidder, typed.seat)
        reason = problem or _problem(typed.bid, imp_ids, True) or ""
        seen.append(_rejected(bidder, typed, reason, scale, currency, from_currency))


def _seat_allowed(
    bidder: str,
    typed: TypedBid,
    alt_codes: AlternateBidderCodes,
    warnings: dict[str, list[Message]] | None,
    seen: list[AuctionBid | RejectedBid] | None,
    currency: str,
    from_currency: str,
) -> bool:
    """Whether ``alt_codes`` lets the bidder bid under the bid's own seat; if not, PBS-Go's warning
    10005 and the bid's analytics entry."""
    allowed, refusal = alt_codes.allowed(bidder, typed.seat)
    if allowed:
        return True
    if warnings is not None and refusal:
        warnings.setdefault(bidder, []).append(Message(WarningCode.ALTERNATE_BIDDER_CODE, refusal))
    if seen is not None:
        seen.append(_rejected(bidder, typed, refusal or "seat not allowed", None, currency, from_currency))
    return False


def _auction_bid(
    seat: str, adapter: str, typed: TypedBid, own: dict[str, Any], price: float, original: float, from_currency: str
) -> AuctionBid:
    """An accepted bid: our copy (``own``) at ``price``, its ext with the bidder's price and currency
    (``origbidcpm``, ``origbidcur``), and what the adapter said of it (meta, video, deal priority)."""
    own["price"] = price
    ext = own.get("ext")
    ext = dict(ext) if isinstance(ext, dict) else {}
    ext["origbidcpm"] = original
    ext["origbidcur"] = from_currency
    own["ext"] = ext
    return AuctionBid(
        seat, adapter, own, typed.bid_type, price, own["impid"], bool(own.get("dealid")),
        meta=typed.bid_meta, video=typed.bid_video, deal_priority=typed.deal_priority,
    )  # fmt: skip


def _drop_foreign_seats(
    accepted: list[AuctionBid],
    errors: list[BidderError],
    seat_currency: dict[str, str],
    currency: str,
    seen: list[AuctionBid | RejectedBid] | None,
) -> list[AuctionBid]:
    """PBS-Go's ``validateCurrency`` (``exchange/bidder_validate_bids.go``), run on each seat after the
    adjustments: a seat a static adjustment left in another currency than the auction's loses all its
    bids, with one error (PBS-Java converts the static price instead; PBS-Go's sample test
    ``bidadjustments/static.json`` runs without this check and shows the static price and currency)."""
    dropped: dict[str, str] = {}
    for seat, seat_cur in seat_currency.items():
        if seat_cur.upper() == currency.upper():
            continue
        dropped[seat] = iso4217_problem(seat_cur) or (
            f"Bid currency is not allowed. Was '{seat_cur.upper()}', wants: ['{currency}']"
        )
        errors.append(BidderError(dropped[seat], ErrorCode.UNKNOWN))
    if not dropped:
        return accepted
    if seen is not None:
        for index, entry in enumerate(seen):
            if isinstance(entry, AuctionBid) and entry.bidder in dropped:
                typed = TypedBid(entry.bid, entry.bid_type)
                reason, seat_cur = dropped[entry.bidder], seat_currency[entry.bidder]
                seen[index] = RejectedBid(entry.bidder, typed, reason, entry.price, seat_cur)
    return [b for b in accepted if b.bidder not in dropped]


def drop_deep_bids(response: BidderResponse, errors: list[BidderError]) -> None:
    """Drop the bids nested more than MAX_JSON_DEPTH deep, each with a code 3 error.

    Such a bid could never be written (orjson stops at 254 levels; the response and the cache put
    it a few levels deeper still), so it would sink the whole auction. Called only for answers
    whose raw bytes hold more brackets than the limit (:func:`hbserver.web.body.may_be_deeper`).
    """
    kept = []
    for typed in response.bids:
        if within_depth(typed.bid):
            kept.append(typed)
            continue
        bid_id = typed.bid.get("id") if isinstance(typed.bid, dict) else None
        shown = bid_id if isinstance(bid_id, str) else ""
        errors.append(bad_server_response(f'Bid "{shown}" is nested more than {MAX_JSON_DEPTH} levels deep'))
    response.bids = kept


def _problem(bid: Any, imp_ids: set[str], debug: bool) -> str | None:
    """None for a good bid; a message for a rejected one ("" = rejected silently outside debug)."""
    # the usual good bid, in one expression: string id, known impid, positive finite price, crid
    price = bid.get("price") if type(bid) is dict else None
    if (
        (type(price) is float or type(price) is int)
        and 0 < price < _INF
        and type(bid.get("id")) is str
        and bid["id"]
        and type(bid.get("impid")) is str
        and bid["impid"] in imp_ids
        and type(bid.get("crid")) is str
        and bid["crid"]
    ):
        return None
    if not isinstance(bid, dict) or not bid:
        return "Empty bid object submitted."
    bid_id = bid.get("id")
    if not isinstance(bid_id, str) or not bid_id:
        return "Bid missing required field 'id'"
    impid = bid.get("impid")
    if not isinstance(impid, str) or not impid:
        return f"Bid \"{bid_id}\" missing required field 'impid'"
    if impid not in imp_ids:
        return f'Bid "{bid_id}" has an \'impid\' ("{impid}") that matches no imp of the request'
    price = bid.get("price")
    if not _number(price) or price < 0 or price != price or price == float("inf"):
        return f"Bid \"{bid_id}\" does not contain a positive (or zero if there is a deal) 'price'" if debug else ""
    if price == 0 and not bid.get("dealid"):
        return (
            f"Bid \"{bid_id}\" does not contain positive 'price' which is required"
            " since there is no deal set for this bid"
            if debug
            else ""
        )
    crid = bid.get("crid")
    if not isinstance(crid, str) or not crid:
        return f'Bid "{bid_id}" missing creative ID'
    return None
