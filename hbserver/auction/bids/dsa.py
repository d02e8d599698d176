"""DSA (EU Digital Services Act) transparency: the account's default ``regs.ext.dsa`` and the bid check.

Follows PBS-Go's ``dsa`` package:

- ``dsa/writer.go``: a request without ``regs.ext.dsa`` gets the account's ``privacy.dsa.default``
  (a JSON string, ``config.AccountDSA``; PBS-Java's ``AccountDsaConfig`` object is read too), only
  when GDPR is enforced for it if ``privacy.dsa.gdpr_only`` is on. The bidders get it; a request's own
  ``regs.ext.dsa`` reaches them unchanged.
- ``dsa/validate.go``: a bid is rejected when ``dsarequired`` is 2 or 3 and it has no ``ext.dsa``;
  when its ``behalf`` or ``paid`` is over 100 bytes (Go's ``len``); when the request's ``pubrender``
  is 0 and its ``adrender`` is set and not 1; when ``pubrender`` is 2 and ``adrender`` is 1.
- ``exchange/exchange.go`` ``makeBid``: the rejection is the warning "bid rejected: <reason>" (code
  10010, ``InvalidBidResponseDSAWarningCode``) under the bidder's seat, and seat-non-bid 300
  (``ResponseRejectedGeneral``).

Where PBS-Java's ``auction/DsaEnforcer.java`` differs, PBS-Go is followed (DECISIONS: PBS-Go first):
Java checks ``adrender`` only when DSA is required and also rejects a bid with no ``adrender`` when
``pubrender`` is 0; it counts UTF-16 units, not bytes; its seat-non-bid code is 305
(``RESPONSE_REJECTED_DSA_PRIVACY``) and its warning reads 'Bid "<id>": <reason>'. Like PBS-Java (and
unlike PBS-Go, which drops the bid after choosing the winners), the check runs before the auction, so
a rejected bid never takes a place another bid could have had.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.common.messages import Message, WarningCode
from hbserver.auction.request.ortb_types import regs_dsa_error

REQUIRED = frozenset({2, 3})  # Required, RequiredOnlinePlatform
PUB_CANNOT_RENDER = 0
PUB_WILL_RENDER = 2
AD_WILL_RENDER = 1
MAX_TEXT_BYTES = 100

MISSING = "DSA object missing when required"
BEHALF_TOO_LONG = "DSA behalf exceeds limit of 100 chars"
PAID_TOO_LONG = "DSA paid exceeds limit of 100 chars"
NEITHER_WILL_RENDER = "DSA publisher and buyer both signal will not render"
BOTH_WILL_RENDER = "DSA publisher and buyer both signal will render"


@dataclass(frozen=True, slots=True)
class DsaRejection:
    bid: AuctionBid
    warning: Message  # PBS-Go's, for ext.warnings[<seat>]


def default_problem(value: Any) -> str | None:
    """Why an account's ``privacy.dsa.default`` is unusable (PBS-Go ``config.UnpackDSADefault``)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            return f"must be a JSON object of regs.ext.dsa: {exc}"
    elif not isinstance(value, dict):
        return "must be a JSON string (PBS-Go) or an object (PBS-Java) of regs.ext.dsa"
    error = regs_dsa_error(value)
    return None if error is None else f"not a regs.ext.dsa object: {error}"


def _int8(value: Any) -> int | None:
    return value if type(value) is int and -128 <= value <= 127 else None


def request_dsa(request: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``regs.ext.dsa`` (an object), or None."""
    regs = request.get("regs")
    ext = regs.get("ext") if type(regs) is dict else None
    dsa = ext.get("dsa") if type(ext) is dict else None
    return dsa if type(dsa) is dict else None


def account_default(settings: Any, gdpr_enforced: bool) -> dict[str, Any] | None:
    """A fresh copy of the account's default ``regs.ext.dsa`` when it applies (``settings``:
    :class:`hbserver.config.AccountDsa`); None without one, or when ``gdpr_only`` and no GDPR."""
    default = settings.default
    if default is None or default == "" or (settings.gdpr_only and not gdpr_enforced):
        return None
    value = orjson.loads(default) if isinstance(default, str) else orjson.loads(orjson.dumps(default))
    return value if type(value) is dict else None  # the JSON string "null": no default (PBS-Go's nil)


def effective(request: dict[str, Any], settings: Any, gdpr_enforced: bool) -> dict[str, Any] | None:
    """The ``regs.ext.dsa`` the auction runs under: the request's, else the account's default."""
    own = request_dsa(request)
    return own if own is not None else account_default(settings, gdpr_enforced)


def with_default(request: dict[str, Any], settings: Any, gdpr_enforced: bool) -> dict[str, Any]:
    """``request`` with the account's default ``regs.ext.dsa`` when it has none (PBS-Go's ``Writer``);
    the same object when nothing changes. Copies the request, ``regs`` and ``regs.ext`` it changes."""
    if settings.default is None or request_dsa(request) is not None:
        return request
    default = account_default(settings, gdpr_enforced)
    if default is None:
        return request
    regs = request.get("regs")
    regs = dict(regs) if type(regs) is dict else {}
    ext = regs.get("ext")
    regs["ext"] = {**(ext if type(ext) is dict else {}), "dsa": default}
    return {**request, "regs": regs}


def _bid_dsa(bid: dict[str, Any]) -> dict[str, Any] | None:
    """The bid's ``ext.dsa`` as PBS-Go's ``getBidDSA`` reads it: None when absent or not decodable."""
    ext = bid.get("ext")
    dsa = ext.get("dsa") if type(ext) is dict else None
    if type(dsa) is not dict:
        return None
    for key in ("behalf", "paid"):
        if dsa.get(key) is not None and type(dsa[key]) is not str:
            return None
    adrender = dsa.get("adrender")
    if adrender is not None and _int8(adrender) is None:
        return None
    return dsa


def _too_long(text: Any) -> bool:
    return type(text) is str and len(text) > MAX_TEXT_BYTES // 4 and len(text.encode()) > MAX_TEXT_BYTES


def bid_problem(req_dsa: dict[str, Any] | None, bid: dict[str, Any]) -> str | None:
    """Why PBS-Go's ``dsa.Validate`` rejects ``bid`` under the request's ``regs.ext.dsa``; None to keep it."""
    bid_dsa = _bid_dsa(bid)
    if bid_dsa is None:
        required = _int8(req_dsa.get("dsarequired")) if req_dsa is not None else None
        return MISSING if required in REQUIRED else None
    if _too_long(bid_dsa.get("behalf")):
        return BEHALF_TOO_LONG
    if _too_long(bid_dsa.get("paid")):
        return PAID_TOO_LONG
    if req_dsa is not None:
        pubrender, adrender = _int8(req_dsa.get("pubrender")), bid_dsa.get("adrender")
        if pubrender is not None and adrender is not None:
            if pubrender == PUB_CANNOT_RENDER and adrender != AD_WILL_RENDER:
                return NEITHER_WILL_RENDER
            if pubrender == PUB_WILL_RENDER and adrender == AD_WILL_RENDER:
                return BOTH_WILL_RENDER
    return None


def enforce(bids: list[AuctionBid], req_dsa: dict[str, Any] | None) -> tuple[list[AuctionBid], list[DsaRejection]]:
    """The bids that pass :func:`bid_problem` (the same list when all do), and the rejected ones."""
    rejections: list[DsaRejection] = []
    for bid in bids:
        problem = bid_problem(req_dsa, bid.bid)
        if problem is not None:
            warning = Message(WarningCode.INVALID_BID_RESPONSE_DSA, f"bid rejected: {problem}")
            rejections.append(DsaRejection(bid, warning))
    if not rejections:
        return bids, rejections
    dropped = {id(rejection.bid) for rejection in rejections}
    return [bid for bid in bids if id(bid) not in dropped], rejections
