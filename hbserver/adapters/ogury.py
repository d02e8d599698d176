"""Ogury adapter: one OpenRTB call to ``prebids2s.presage.io/api/header-bidding-request``.

Per imp: every param in ``imp.ext.bidder`` is lifted into ``imp.ext`` itself (``bidder`` goes away),
the imp's id becomes its ``tagid`` and a positive floor in another currency is converted to USD. An
``imp.ext`` that is no JSON object, a ``bidder`` given but no JSON object (null included) or a floor
without a rate fails the whole request.
Only the imps whose params name both ``assetKey`` and ``adUnitId`` are sent; when none does, all imps
are sent if the site or app names a publisher id, else the request fails. The device's ``ip`` and
``ipv6``, ``ua`` and ``language`` travel as ``X-Forwarded-For``, ``User-Agent`` and
``Accept-Language``. Bids are typed by ``mtype``; one bid without a known ``mtype`` drops the whole
answer (every such bid is reported).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, floor_in_usd, imp_ids, json_call
from hbserver.adapters.golike import go_media_objects, go_request_top, go_typed_bids, set_omitempty

_ANSWER_WORDING = AnswerWording(body_error=BidderError)
_NO_PARAMS = "Invalid request. assetKey/adUnitId or request.site/app.publisher.id required"


class _BadImp(ValueError):
    """An imp that stops the whole request (the message is the bidder error's)."""


def _hoisted_ext(imp: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the imp's new ``ext``, its params or None without a ``bidder``): ``ext`` with the params'
    keys put in and ``bidder`` taken out, keys sorted as Go writes a map. A null ``ext`` or
    ``bidder`` fails like an absent one: json-iterator reads a JSON null raw value as no bytes."""
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        raise _BadImp("Bidder extension not provided or can't be unmarshalled")
    if "bidder" not in ext:
        return dict(sorted(ext.items())), None
    params = ext["bidder"]
    if not isinstance(params, dict):
        raise _BadImp("Ogury bidder extension not provided or can't be unmarshalled")
    merged = {**ext, **params}
    del merged["bidder"]  # also when the params name a "bidder" of their own
    return dict(sorted(merged.items())), params


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    """Content-Type, plus the device's addresses, user agent and language when there is a device.
    PBS-Go adds each device value even when empty; its two addresses are two ``X-Forwarded-For``
    values, sent here as one comma-separated value without the empty ones."""
    headers = {"Content-Type": "application/json;charset=utf-8"}
    device = request.get("device")
    if isinstance(device, dict):
        addresses = [_text(device, "ip"), _text(device, "ipv6")]
        headers["X-Forwarded-For"] = ", ".join(address for address in addresses if address)
        headers["User-Agent"] = _text(device, "ua")
        headers["Accept-Language"] = _text(device, "language")
    return headers


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _has_publisher_id(request: Mapping[str, Any]) -> bool:
    for kind in ("site", "app"):
        holder = request.get(kind)
        publisher = holder.get("publisher") if isinstance(holder, dict) else None
        if isinstance(publisher, dict) and _text(publisher, "id"):
            return True
    return False


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    mtype = bid.get("mtype", 0)
    bid_type = MTYPE_TO_TYPE.get(mtype)
    if bid_type is None:
        return bad_server_response(f'Unsupported MType "{mtype}", for impression "{bid["impid"]}"')
    return TypedBid(bid, bid_type)


class OguryAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        all_imps: list[dict[str, Any]] = []
        with_params: list[dict[str, Any]] = []
        for imp in request.get("imp") or ():
            try:
                ext, params = _hoisted_ext(imp)
            except _BadImp as exc:
                return [], [bad_input(str(exc))]
            out = dict(imp)
            out["ext"] = ext
            set_omitempty(out, "tagid", imp.get("id"))
            try:
                out = go_media_objects(floor_in_usd(out, info))
            except ConversionError as exc:
                return [], [BidderError(str(exc))]
            all_imps.append(out)
            if params is not None and "assetKey" in params and "adUnitId" in params:
                with_params.append(out)
        if not with_params and not _has_publisher_id(request):
            return [], [bad_input(_NO_PARAMS)]
        imps = with_params or all_imps
        body = go_request_top(request)
        body["imp"] = imps
        return [json_call(self.endpoint, body, imp_ids(imps), _headers(request))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = go_typed_bids(response, _typed, _ANSWER_WORDING)
        return (None, errors) if errors else (result, errors)


def build(config: AdapterConfig) -> OguryAdapter:
    return OguryAdapter(config)
