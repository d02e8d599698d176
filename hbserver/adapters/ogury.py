"""Ogury adapter: one OpenRTB call to ``prebids2s.presage.io/api/header-bidding-request``.

Per imp: every param in ``imp.ext.bidder`` is lifted into ``imp.ext`` itself (``bidder`` goes away),
the imp's id becomes its ``tagid`` and a positive floor in another currency is converted to USD. An
``imp.ext`` that is no JSON object, a ``bidder`` given but no JSON object (null included) or a floor
without a rate fails the whole request.
Only the imps whose params name both ``assetKey`` and ``adUnitId`` are sent; when none does, all imps
are sent if the site or app names a publisher id, else the request fails. The device's ``ip`` and
``ipv6``, ``ua`` and ``language`` travel as ``X-Forwarded-For``, ``User-Agent`` and
``Accept-Language``. The answer and bid typing are the recipe ``recipes/ogury.yaml``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, ConversionError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import floor_in_usd, imp_ids, json_call
from hbserver.adapters.golike import go_media_objects, go_request_top, set_omitempty
from hbserver.adapters.recipe import RecipeAdapter

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


class OguryAdapter(RecipeAdapter):
    """The recipe ``recipes/ogury.yaml`` (the answer and bid typing), the call Ogury's own."""

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


def build(config: AdapterConfig) -> OguryAdapter:
    return OguryAdapter.of_code("ogury", config)
