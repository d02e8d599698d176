"""AdMatic adapter: one OpenRTB call per imp to ``pbs.admatic.com.tr?host={{.Host}}``.

Each call carries the request with that imp alone, unchanged; the imp's ``host`` param fills the
endpoint's ``{{.Host}}`` as given (PBS-Go's text template does not escape it). An imp whose ext or
params do not decode is reported and left out. Every call carries the device's user agent and its
IPv6 and IPv4 addresses (in that order) as ``X-Forwarded-For``. Bids are typed by their imp
(banner, else video, else native); a bid for an imp not in the request fails the whole answer. The
answer's ``cur`` is the currency when given.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    bad_input,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    AnswerWording,
    JsonShapeError,
    expect_string,
    imp_not_in_request,
    json_call,
    json_headers,
    resolve_macros,
    typed_by_imp,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    ImpExtError,
    go_int,
    go_media_objects,
    go_members,
    go_request_top,
    go_typed_bids,
    imp_bidder_params,
)

# PBS's usual status texts; a body that does not decode is reported in json-iterator's words alone
_ANSWER_WORDING = AnswerWording(body_error=BidderError)
_PARAMS = "openrtb_ext.ImpExtAdmatic"


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _host(imp: dict[str, Any]) -> str:
    """The imp's ``host`` param; a bad_input error in PBS-Go's words when the ext or the params do
    not decode (``networkId`` is decoded too, so a wrong type there fails as well)."""
    try:
        if imp.get("ext") is None:  # Go's imp.Ext is empty for an absent or null ext
            raise ImpExtError(ABSENT_OBJECT)
        params = imp_bidder_params(imp, null_is_absent=True)
    except ImpExtError as exc:
        raise _BadImp(f"Failed to deserialize bidder impression extension: {exc}") from None
    except JsonShapeError as exc:
        raise _BadImp(f"Failed to deserialize AdMatic extension: {exc}") from None
    host = ""
    try:
        for name, value in go_members(params, "host", "networkId"):
            if name == "host":
                if value is not None:  # null leaves a Go string field as it was
                    host = expect_string(value, f"{_PARAMS}.Host")
            else:
                go_int(value, f"{_PARAMS}.NetworkId")
    except JsonShapeError as exc:
        raise _BadImp(f"Failed to deserialize AdMatic extension: {exc}") from None
    return host


def _headers(request: dict[str, Any]) -> dict[str, str]:
    """PBS's JSON pair, the device's ``User-Agent`` and ``X-Forwarded-For``: PBS-Go adds the IPv6
    address, then the IPv4 one, as two values of the header (one line here, comma-separated)."""
    headers = json_headers()
    device = request.get("device")
    if isinstance(device, dict):
        ua = device.get("ua")
        if isinstance(ua, str) and ua:
            headers["User-Agent"] = ua
        addresses = [ip for ip in (device.get("ipv6"), device.get("ip")) if isinstance(ip, str) and ip]
        if addresses:
            headers["X-Forwarded-For"] = ", ".join(addresses)
    return headers


class AdmaticAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        headers = _headers(request)
        top = go_request_top(request)
        for imp in request.get("imp") or ():
            try:
                host = _host(imp)
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            uri = resolve_macros(self.endpoint, {"Host": host})
            calls.append(json_call(uri, {**top, "imp": [go_media_objects(imp)]}, [imp.get("id", "")], headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        typed = typed_by_imp(request.get("imp") or (), imp_not_in_request, BANNER_VIDEO_NATIVE)
        return go_typed_bids(response, typed, _ANSWER_WORDING, first_error_fails=True)


def build(config: AdapterConfig) -> AdmaticAdapter:
    return AdmaticAdapter(config)
