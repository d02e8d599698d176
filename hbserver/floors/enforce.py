"""Floors enforcement on the bids of an auction (PBS-Go ``floors/enforce.go`` ``Enforce``), the
rejection warning of ``exchange/exchange.go``, and ``exchange/utils.go``
``applyBidAdjustmentToFloor``.

Call :func:`enforce_floors` once the bids are in (host ``price_floors.enabled`` on, at least one
bid) with the request :func:`~hbserver.floors.resolve.resolve_floors` returned. It decides as
PBS-Go: nothing when floors are off for the account or the request, when signalling was skipped or
no imp has a ``bidfloor``; else one draw against ``enforcerate`` and the account's
``enforce_floors_rate`` (0 = always), ``enforcepbs`` (default true), deal bids only with the
account's ``enforce_deal_floors`` and the request's ``floordeals``. A bid is rejected when its price
in the imp's floor currency plus 0.01 is below ``imp.bidfloor``.

What the caller writes: each rejection's :meth:`FloorRejection.warning` in ``ext.warnings.prebid``
(code :data:`FLOOR_BID_REJECTION_WARNING_CODE`) and a seat non-bid with
:attr:`FloorRejection.non_bid_code`; ``errors`` in ``ext.errors.prebid`` (code 999); and for each
kept bid ``result.floors_for(bid)`` (when not None) as ``bid.ext.prebid.floors``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hbserver.adapters.base import ConversionError
from hbserver.config import AccountPriceFloors
from hbserver.floors.data import DEFAULT_CURRENCY, fold

if TYPE_CHECKING:
    from hbserver.auction.bids.accept import AuctionBid

Convert = Callable[[float, str, str], float]
Rand = Callable[[int], int]

FLOOR_BID_REJECTION_WARNING_CODE = 10009  # errortypes.FloorBidRejectionWarningCode
NON_BID_BELOW_FLOOR = 301  # exchange.ResponseRejectedBelowFloor
NON_BID_BELOW_DEAL_FLOOR = 304  # exchange.ResponseRejectedBelowDealFloor
FLOOR_PRECISION = 0.01
ENFORCE_RATE_MAX = 100


def rejection_warning(
    seat: str, bid_id: str, price: float, currency: str, floor: float, floor_currency: str, imp_id: str
) -> str:
    """PBS-Go's warning for a bid below its floor."""
    return (
        f"{seat} bid id {bid_id} rejected - bid price {price:.4f} {currency} is less than bid floor "
        f"{floor:.4f} {floor_currency} for imp {imp_id}"
    )


@dataclass(frozen=True, slots=True)
class BidFloors:
    """PBS-Go ``ExtBidPrebidFloors``: the floor a bid was held to, for ``bid.ext.prebid.floors``."""

    floor_rule: str = ""
    floor_rule_value: float = 0.0
    floor_value: float = 0.0
    floor_currency: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.floor_rule:
            out["floorRule"] = self.floor_rule
        if self.floor_rule_value:
            out["floorRuleValue"] = self.floor_rule_value
        if self.floor_value:
            out["floorValue"] = self.floor_value
        if self.floor_currency:
            out["floorCurrency"] = self.floor_currency
        return out


@dataclass(slots=True)
class FloorRejection:
    """A bid rejected for its floor. ``currency`` is the auction's, that of ``bid.price``."""

    bid: AuctionBid
    floors: BidFloors
    currency: str

    @property
    def deal(self) -> bool:
        return bool(self.bid.bid.get("dealid"))

    @property
    def non_bid_code(self) -> int:
        return NON_BID_BELOW_DEAL_FLOOR if self.deal else NON_BID_BELOW_FLOOR

    def warning(self) -> str:
        bid_id = self.bid.bid.get("id")
        return rejection_warning(
            self.bid.bidder,
            bid_id if isinstance(bid_id, str) else "",
            self.bid.price,
            self.currency,
            self.floors.floor_value,
            self.floors.floor_currency or DEFAULT_CURRENCY,  # OpenRTB's default bidfloorcur
            self.bid.imp_id,
        )


@dataclass(slots=True)
class EnforceResult:
    """``kept`` bids (input order), ``rejected`` ones, PBS-Go's ``errors`` (a bid whose currency
    does not convert is dropped with one), each bid's floor details by ``id(bid)``, and the
    request's ``enforcepbs`` as PBS-Go updates it (None when enforcement was not considered)."""

    kept: list[AuctionBid]
    rejected: list[FloorRejection] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bid_floors: dict[int, BidFloors] = field(default_factory=dict)
    enforce_pbs: bool | None = None

    def floors_for(self, bid: AuctionBid) -> dict[str, Any] | None:
        """``bid.ext.prebid.floors`` for a bid of this auction, or None."""
        floors = self.bid_floors.get(id(bid))
        return None if floors is None else floors.to_json()


def _bool(obj: Mapping[str, Any] | None, name: str) -> bool | None:
    value = obj.get(name) if obj is not None else None
    return value if type(value) is bool else None


def _number(value: Any) -> float:
    return float(value) if type(value) is float or type(value) is int else 0.0


def _folded(value: Any) -> dict[str, Any] | None:
    return fold(value) if type(value) is dict else None


def _request_floors(request: Mapping[str, Any]) -> dict[str, Any] | None:
    ext = request.get("ext")
    prebid = ext.get("prebid") if type(ext) is dict else None
    return _folded(prebid.get("floors")) if type(prebid) is dict else None


def is_satisfied_by_enforce_rate(request_rate: int, account_rate: int, rand: Rand) -> bool:
    """PBS-Go ``isSatisfiedByEnforceRate``: one draw against both rates (0 = always; with both 0
    the draw could not change the answer, so none is made)."""
    if request_rate == 0 and account_rate == 0:
        return True
    draw = rand(ENFORCE_RATE_MAX)
    by_request = request_rate == 0 or draw < request_rate
    by_account = account_rate == 0 or draw < account_rate
    return by_request and by_account


def bid_floors_for_imp(imp: Mapping[str, Any]) -> BidFloors | None:
    """PBS-Go ``updateBidExtWithFloors``: the imp's recorded rule, else its bidfloor."""
    ext = imp.get("ext")
    prebid = ext.get("prebid") if type(ext) is dict else None
    floors = _folded(prebid.get("floors")) if type(prebid) is dict else None
    currency = imp.get("bidfloorcur")
    currency = currency if type(currency) is str else ""
    if floors is None:
        floor = _number(imp.get("bidfloor"))
        return BidFloors(floor_value=floor, floor_currency=currency) if floor > 0 else None
    rule = floors.get("floorrule")
    return BidFloors(
        floor_rule=rule if type(rule) is str else "",
        floor_rule_value=_number(floors.get("floorrulevalue")),
        floor_value=_number(floors.get("floorvalue")),
        floor_currency=currency,
    )


# An imp's floor as enforcement reads it: its bidfloor (0 when none), bidfloorcur (OpenRTB's default for
# none) and the details for bid.ext.prebid.floors. A tuple: one per imp on every full-path auction.
_ImpFloor = tuple[float, str, "BidFloors | None"]


class FloorEnforcement:
    """What enforcement reads of a request and its account, worked out once: a request's auctions
    (a call plan's) share one, each calling :meth:`enforce` with its bids.

    The conversion from the auction's currency into each floor currency is made on first use and
    kept (the converter is the request's, fixed with it)."""

    __slots__ = (
        "_account_rate",
        "_convert",
        "_currency",
        "_deal_floors",
        "_imps",
        "_old_enforce_pbs",
        "_rates",
        "_request_rate",
        "considered",
    )  # fmt: skip

    def __init__(self, request: Mapping[str, Any], settings: AccountPriceFloors, convert: Convert) -> None:
        floors = _request_floors(request)
        imps = request.get("imp")
        imps = [imp for imp in imps if type(imp) is dict] if type(imps) is list else []
        # False: every bid is kept with no details (floors off for the account or the request, signalling
        # skipped, or no imp with a bidfloor)
        self.considered = (
            settings.enabled
            and _bool(floors, "enabled") is not False
            and _bool(floors, "skipped") is not True
            and any(_number(imp.get("bidfloor")) > 0 for imp in imps)
        )
        enforcement = _folded(floors.get("enforcement")) if floors is not None else None
        request_rate = enforcement.get("enforcerate") if enforcement is not None else None
        self._request_rate = request_rate if type(request_rate) is int else 0
        self._account_rate = settings.enforce_floors_rate
        self._old_enforce_pbs = _bool(enforcement, "enforcepbs")
        self._deal_floors = settings.enforce_deal_floors and _bool(enforcement, "floordeals") is True
        cur = request.get("cur")
        self._currency = cur[0] if type(cur) is list and cur and type(cur[0]) is str else DEFAULT_CURRENCY
        by_id: dict[str, _ImpFloor] = {}
        if self.considered:
            for imp in imps:
                imp_id = imp.get("id")
                if type(imp_id) is str:
                    floor_cur = imp.get("bidfloorcur")
                    # OpenRTB's default currency (PBS-Go would fail the conversion from "" and drop the bid)
                    floor_cur = floor_cur if type(floor_cur) is str and floor_cur else DEFAULT_CURRENCY
                    by_id[imp_id] = (_number(imp.get("bidfloor")), floor_cur, bid_floors_for_imp(imp))
        self._imps = by_id
        self._convert = convert
        self._rates: dict[str, float | str] = {}  # floor currency -> rate into it, or why there is none

    def _rate(self, floor_currency: str) -> float | str:
        rate = self._rates.get(floor_currency)
        if rate is None:
            if floor_currency == self._currency:
                rate = 1.0
            else:
                try:
                    rate = self._convert(1.0, self._currency, floor_currency)
                except ConversionError as exc:
                    rate = str(exc)
            self._rates[floor_currency] = rate
        return rate

    def enforce(self, bids: list[AuctionBid], rand: Rand = random.randrange) -> EnforceResult:
        """PBS-Go ``Enforce`` over all of an auction's bids (see the module docstring)."""
        if not self.considered:
            return EnforceResult(list(bids))
        enforce = is_satisfied_by_enforce_rate(self._request_rate, self._account_rate, rand)
        old_enforce_pbs = self._old_enforce_pbs
        enforce_pbs = enforce if old_enforce_pbs is None else enforce and old_enforce_pbs
        result = EnforceResult([], enforce_pbs=enforce_pbs)
        imps = self._imps
        bid_floors = result.bid_floors
        for bid in bids:
            imp = imps.get(bid.imp_id)
            if imp is not None and imp[2] is not None:
                bid_floors[id(bid)] = imp[2]  # the details are the imp's, shared by its bids
        if not enforce:
            result.kept = list(bids)
            return result
        kept = result.kept
        for bid in bids:
            imp = imps.get(bid.imp_id)
            if imp is None:
                continue  # PBS-Go drops a bid for an unknown imp here
            floor, floor_currency, _details = imp
            if enforce_pbs:
                if bid.deal and not self._deal_floors:
                    kept.append(bid)
                    continue
                rate = self._rate(floor_currency)
                if type(rate) is str:
                    bid_id = bid.bid.get("id")
                    result.errors.append(
                        f"error in rate conversion from = {self._currency} to {floor_currency} with bidder "
                        f"{bid.bidder} for impression id {bid.imp_id} and bid id {bid_id} error = {rate}"
                    )
                    continue
                if rate * bid.price + FLOOR_PRECISION < floor:  # type: ignore[operator]  # a float here
                    result.rejected.append(FloorRejection(bid, bid_floors.get(id(bid)) or BidFloors(), self._currency))
                    continue
            kept.append(bid)
        return result


def enforce_floors(
    request: Mapping[str, Any],
    bids: list[AuctionBid],
    settings: AccountPriceFloors,
    convert: Convert,
    rand: Rand = random.randrange,
) -> EnforceResult:
    """PBS-Go ``Enforce`` over all the auction's bids (see the module docstring)."""
    return FloorEnforcement(request, settings, convert).enforce(bids, rand)


def floor_adjustment_factor(factors: Mapping[str, Any] | None, bidder: str) -> float:
    """The ``ext.prebid.bidadjustmentfactors`` factor PBS-Go divides ``bidder``'s floors by
    (``applyBidAdjustmentToFloor``: keys compared lower-cased, 0 or missing = 1)."""
    if not factors:
        return 1.0
    wanted = bidder.lower()
    factor = None
    for key, value in factors.items():
        if key.lower() == wanted:
            factor = value
    if (type(factor) is float or type(factor) is int) and factor != 0:
        return float(factor)
    return 1.0


def adjust_floors_for_bidder(imps: list[dict[str, Any]], factor: float) -> list[dict[str, Any]]:
    """PBS-Go ``applyBidAdjustmentToFloor`` on one bidder's imps (when the account's
    ``adjust_for_bid_adjustment`` is on): each ``bidfloor`` divided by ``factor``. The list is
    returned as is for factor 1, else a new list with new dicts for the imps that have a floor."""
    if factor == 1.0:
        return imps
    out = []
    for imp in imps:
        floor = imp.get("bidfloor")
        if (type(floor) is float or type(floor) is int) and floor != 0:
            imp = dict(imp)
            imp["bidfloor"] = floor / factor
        out.append(imp)
    return out
