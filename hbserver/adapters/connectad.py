"""ConnectAd adapter: every imp, reshaped, in one OpenRTB call to ``bidder.connectad.io/API?src=pbs``.

Per imp: the ``siteId`` param (a number or a string of digits, not 0) becomes ``tagid``, ``secure``
is 1 when ``site.page`` is an https URL and 0 otherwise, a non-zero ``bidfloor`` param replaces the
floor (in USD), ``ext`` is dropped, and a banner (required) without ``w``/``h`` takes its first
format's size, that format leaving the list. One imp that fails any of this fails the whole request:
every imp's error, then "Error in preprocess of Imp". With a device the call carries its
``User-Agent``, ``Accept-Language``, ``X-Forwarded-For`` (IPv4, else IPv6) and ``DNT`` (0 when not
given). The answer (every bid a banner priced in USD) is the recipe ``recipes/connectad.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import (
    JsonShapeError,
    banner_taking_first_format,
    json_call,
    json_headers,
    page_is_https,
    with_header,
)
from hbserver.adapters.golike import (
    ImpExtError,
    go_media_objects,
    go_members,
    go_request_top,
    go_string_int,
    imp_bidder_params,
)
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.numbers import NumberError


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


class _BadParams(ValueError):
    """Params that do not decode into PBS-Go's ExtImpConnectAd."""


def _string_int(value: Any) -> int:
    """``value`` as PBS-Go's ``jsonutil.StringInt`` reads it: a JSON integer, or a string of an
    optional ``-`` and digits ("" is 0), within int64; _BadParams otherwise (null included)."""
    try:
        number = go_string_int(value)
    except NumberError:
        number = None
    if number is None:
        raise _BadParams(value)
    return number


def _params(imp: dict[str, Any]) -> tuple[int, float]:
    """(``siteId``, ``bidfloor``) of the imp's params; _BadImp in PBS-Go's words."""
    imp_id = imp.get("id", "")
    try:
        params = imp_bidder_params(imp, null_is_absent=True)
    except ImpExtError as exc:
        raise _BadImp(f"Impression id={imp_id} has an Error: {exc}") from None
    except JsonShapeError:
        raise _BadImp(f"Impression id={imp_id}, has invalid Ext") from None
    site_id, floor = 0, 0.0
    try:
        for name, value in go_members(params, "networkId", "siteId", "bidfloor"):
            if name == "bidfloor":
                if value is None:
                    continue
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise _BadParams(value)
                floor = value
            elif name == "siteId":
                site_id = _string_int(value)
            else:
                _string_int(value)
    except _BadParams:
        raise _BadImp(f"Impression id={imp_id}, has invalid Ext") from None
    if site_id == 0:
        raise _BadImp(f"Impression id={imp_id}, has no siteId present")
    return site_id, floor


def _banner(banner: Any) -> dict[str, Any]:
    """The banner with ``w``/``h`` from its first format when it has neither; _BadImp without a banner
    or a size."""
    if not isinstance(banner, dict):
        raise _BadImp("We need a Banner Object in the request")
    sized = banner_taking_first_format(banner)
    if sized is None:
        raise _BadImp("At least one size is required")
    return sized


def _build_imp(imp: dict[str, Any], secure: int) -> dict[str, Any]:
    site_id, floor = _params(imp)
    out = {key: value for key, value in imp.items() if key != "ext"}
    out["tagid"] = str(site_id)
    out["secure"] = secure
    if floor != 0:
        out["bidfloor"] = floor
        out["bidfloorcur"] = "USD"
    out["banner"] = _banner(imp.get("banner"))
    return go_media_objects(out)


def _headers(device: Any) -> dict[str, str]:
    headers = json_headers()
    if not isinstance(device, dict):
        return headers
    with_header(headers, "User-Agent", device.get("ua"))
    with_header(headers, "Accept-Language", device.get("language"))
    with_header(headers, "X-Forwarded-For", device.get("ip") or device.get("ipv6"))
    dnt = device.get("dnt")
    with_header(headers, "DNT", str(dnt) if isinstance(dnt, int) and not isinstance(dnt, bool) else "0")
    return headers


class ConnectadAdapter(RecipeAdapter):
    """The recipe ``recipes/connectad.yaml`` (the answer), the call ConnectAd's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        secure = 1 if page_is_https(request) else 0
        imps: list[dict[str, Any]] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                imps.append(_build_imp(imp, secure))
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
        if errors:
            return [], [*errors, bad_input("Error in preprocess of Imp")]
        body = go_request_top(request)
        body["imp"] = imps
        ids = [imp.get("id", "") for imp in imps]
        return [json_call(self.endpoint, body, ids, _headers(request.get("device")))], []


def build(config: AdapterConfig) -> ConnectadAdapter:
    return ConnectadAdapter.of_code("connectad", config)
