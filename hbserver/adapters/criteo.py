"""Criteo adapter: the bidder's OpenRTB 2.6 request, unchanged, in one call without extra headers.

Each bid names its media type in ``ext.prebid.type`` (a bid without an ``ext`` object fails the
whole answer, as in PBS-Go) and may name an ad network in ``ext.prebid.networkName``, which becomes
the bid's ``meta.networkName``. Protected Audience configs come from ``ext.igi`` of the answer: the
first ``igs`` config of each entry, for its ``impid``.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import (
    UNEXPECTED_STATUS,
    AnswerAdapter,
    AnswerWording,
    answer_bids,
    imp_ids,
    json_call,
    typed_bid_response,
)
from hbserver.adapters.golike import go_field

_NO_HEADERS: dict[str, str] = {}
_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".")
_MISSING_TYPE = "Missing ext.prebid.type in bid for impression : {}."


class _Shape(ValueError):
    """JSON that would not decode into PBS-Go's struct for it."""


def _field(obj: dict[str, Any], name: str, types: tuple[type, ...]) -> Any:
    """The value Go decodes into field ``name`` (see ``go_field``): None when absent or null;
    _Shape when it is not of ``types``."""
    value = go_field(obj, name)
    if value is not None and not isinstance(value, types):
        raise _Shape(name)
    return value


def _bid_prebid(bid: dict[str, Any]) -> tuple[str, str]:
    """(``ext.prebid.type``, ``ext.prebid.networkName``), "" where absent; _Shape when the bid's ext
    would not decode (absent and null included)."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        raise _Shape("ext")
    prebid = _field(ext, "prebid", (dict,)) or {}
    return _field(prebid, "type", (str,)) or "", _field(prebid, "networkName", (str,)) or ""


def _fledge_configs(answer: dict[str, Any], bidder: str) -> list[dict[str, Any]] | None:
    """A config per ``ext.igi`` entry with a first ``igs`` config; None when there is none or
    ``ext`` has another shape than Criteo's (PBS-Go then ignores it)."""
    ext = answer.get("ext")
    if not isinstance(ext, dict):
        return None
    try:
        entries = _field(ext, "igi", (list,)) or []
        configs = []
        for entry in entries:
            if entry is None:
                continue
            if not isinstance(entry, dict):
                raise _Shape("igi")
            imp_id = _field(entry, "impid", (str,)) or ""
            signals = _field(entry, "igs", (list,)) or []
            for signal in signals:
                if signal is not None and not isinstance(signal, dict):
                    raise _Shape("igs")
            first = signals[0] if signals else None
            config = _field(first, "config", (object,)) if isinstance(first, dict) else None
            if config is not None:
                configs.append({"impid": imp_id, "bidder": bidder, "config": config})
    except _Shape:
        return None
    return configs or None


class CriteoAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.bidder = config.bidder

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or ()
        return [json_call(self.endpoint, request, imp_ids(imps), _NO_HEADERS)], []

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = (bid for _, bid in answer_bids(answer))
        result, errors = typed_bid_response(bids, _typed, answer.get("cur") or "USD", first_error_fails=True)
        if result is not None:
            result.fledge_auction_configs = _fledge_configs(answer, self.bidder)
        return result, errors


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by its ``ext.prebid``, its network name as meta."""
    try:
        bid_type, network = _bid_prebid(bid)
    except _Shape:
        return bad_server_response(_MISSING_TYPE.format(bid.get("impid", "")))
    return TypedBid(bid, bid_type, bid_meta={"networkName": network} if network else None)


def build(config: AdapterConfig) -> CriteoAdapter:
    return CriteoAdapter(config)
