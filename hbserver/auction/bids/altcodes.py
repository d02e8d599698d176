"""Alternate bidder codes: the seats a bidder may bid under besides its own name.

Follows PBS-Go: ``openrtb_ext/alternatebiddercodes.go`` (``IsValidBidderCode`` and its error texts,
``IsBidderInAlternateBidderCodes``: the bidder found exactly, else case-insensitively; the
allowed codes themselves are compared exactly, and ``*`` means any only as the single entry),
``exchange/exchange.go`` (the request's ``ext.prebid.alternatebiddercodes`` wins over the
account's whenever it is present), ``exchange/bidder.go`` ``requestBid`` (a bid under a seat that
is not allowed is dropped with a warning, code 10005 ``AlternateBidderCodeWarningCode``, holding
the error text) and ``exchange/utils.go`` ``buildRequestExtForBidder`` (each bidder is sent the
top ``enabled`` flag and only its own entry, under the name it was called by).

Values of a wrong JSON type (which PBS-Go cannot unmarshal: a 400) raise
:class:`hbserver.auction.request.validate.RequestError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.auction.request.validate import RequestError
from hbserver.config import AccountAlternateBidderCodes

WARNING_CODE = 10005  # errortypes.AlternateBidderCodeWarningCode


@dataclass(frozen=True, slots=True)
class AdapterCodes:
    """One bidder's entry: ``allowed`` None = not set (any seat), () = none."""

    enabled: bool = False
    allowed: tuple[str, ...] | None = None

    def as_json(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "allowedbiddercodes": list(self.allowed) if self.allowed is not None else None}


class AlternateBidderCodes:
    """The auction's alternate bidder codes: the request's, else the account's, else none (``configured``
    False: every seat other than the bidder's own is refused, and bidders are sent nothing)."""

    __slots__ = ("_lower", "bidders", "configured", "enabled")

    def __init__(
        self, enabled: bool = False, bidders: Mapping[str, AdapterCodes] | None = None, configured: bool = True
    ) -> None:
        self.enabled = enabled
        self.bidders = dict(bidders) if bidders else {}
        self.configured = configured
        self._lower: dict[str, AdapterCodes] = {}
        for name, codes in self.bidders.items():
            self._lower.setdefault(name.lower(), codes)

    @classmethod
    def from_sources(
        cls, request_prebid: Mapping[str, Any] | None, account: AccountAlternateBidderCodes | None
    ) -> AlternateBidderCodes:
        """``ext.prebid.alternatebiddercodes`` when present (not null), else the account's setting."""
        raw = request_prebid.get("alternatebiddercodes") if isinstance(request_prebid, Mapping) else None
        if raw is not None:
            return cls._from_request(raw)
        if account is not None:
            return cls(
                account.enabled,
                {
                    name: AdapterCodes(
                        entry.enabled, tuple(entry.allowedbiddercodes) if entry.allowedbiddercodes is not None else None
                    )
                    for name, entry in account.bidders.items()
                },
            )
        return NOT_CONFIGURED

    @classmethod
    def _from_request(cls, raw: Any) -> AlternateBidderCodes:
        where = "request.ext.prebid.alternatebiddercodes"
        if not isinstance(raw, dict):
            raise RequestError(f"{where} must be an object")
        enabled = _flag(raw.get("enabled"), f"{where}.enabled")
        bidders = raw.get("bidders")
        if bidders is not None and not isinstance(bidders, dict):
            raise RequestError(f"{where}.bidders must be an object")
        entries: dict[str, AdapterCodes] = {}
        for name, entry in (bidders or {}).items():
            path = f"{where}.bidders.{name}"
            if entry is None:
                entries[name] = AdapterCodes()
                continue
            if not isinstance(entry, dict):
                raise RequestError(f"{path} must be an object")
            codes = entry.get("allowedbiddercodes")
            if codes is not None and (not isinstance(codes, list) or not all(isinstance(c, str) for c in codes)):
                raise RequestError(f"{path}.allowedbiddercodes must be an array of strings")
            entries[name] = AdapterCodes(
                _flag(entry.get("enabled"), f"{path}.enabled"), tuple(codes) if codes is not None else None
            )
        return cls(enabled, entries)

    def lookup(self, bidder: str) -> AdapterCodes | None:
        """PBS-Go's ``IsBidderInAlternateBidderCodes``: the exact name, else case-insensitively."""
        if not bidder or not self.bidders:
            return None
        found = self.bidders.get(bidder)
        return found if found is not None else self._lower.get(bidder.lower())

    def allowed(self, bidder: str, seat: str) -> tuple[bool, str | None]:
        """May ``bidder`` (the name it was called by) bid under ``seat``? PBS-Go's ``IsValidBidderCode``."""
        if not seat or seat == bidder or seat.casefold() == bidder.casefold():
            return True, None
        if not self.enabled:
            return False, _disabled(bidder, seat)
        codes = self.lookup(bidder)
        if codes is None:
            return False, f"alternateBidderCodes not defined for adapter {_q(bidder)}, rejecting bids for {_q(seat)}"
        if not codes.enabled:
            return False, _disabled(bidder, seat)
        allowed = codes.allowed
        if allowed is None or allowed == ("*",) or seat in allowed:
            return True, None
        return False, f"invalid biddercode {_q(seat)} sent by adapter {_q(bidder)}"

    def for_bidder(self, bidder: str) -> dict[str, Any] | None:
        """``ext.prebid.alternatebiddercodes`` of ``bidder``'s request (None: the key is left out)."""
        if not self.configured:
            return None
        codes = self.lookup(bidder)
        return {"enabled": self.enabled, "bidders": {bidder: codes.as_json()} if codes is not None else None}


NOT_CONFIGURED = AlternateBidderCodes(configured=False)


def _flag(value: Any, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise RequestError(f"{where} must be a boolean")
    return value


def _disabled(bidder: str, seat: str) -> str:
    return f"alternateBidderCodes disabled for {_q(bidder)}, rejecting bids for {_q(seat)}"


def _q(text: str) -> str:
    """Go's ``%q`` for the names seen in practice (printable text; others JSON-escaped)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=False)
