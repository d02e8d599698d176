"""Connatix adapter: one OpenRTB call per imp to the configured endpoint; a request without a device
IP (v4 or v6) is refused.

Each imp's ``ext.bidder`` becomes ``ext.connatix`` (``placementId``, ``viewabilityPercentage``, each
left out when empty), the rest of its ext kept. A banner without ``w``/``h`` takes its first
format's size, an empty ``displaymanagerver`` is filled from the app's ``ext.prebid`` (``source-
version``), and a floor in another currency is converted to USD (an imp without a rate is left
out with the conversion error). The user's ``buyeruid`` picks the data centre in the query
(``1-`` us-east-2, ``2-`` us-west-2, ``3-`` eu-west-1). Bids are video when their
``ext.connatix.mediaType`` says so, else banner, always in USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    app_display_manager_version,
    expect_object,
    json_call,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_SPACE,
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
)
from hbserver.adapters.steps import HEADER_SETS

_PARAMS = "openrtb_ext.ExtImpConnatix"
_FIELDS = {
    "placementId": ("PlacementId", GoKind.STRING),
    "viewabilityPercentage": ("ViewabilityPercentage", GoKind.FLOAT),
}
# PBS's usual status texts; an answer that does not decode is reported in the decoder's bare words
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_DATA_CENTRES = (("1-", "us-east-2"), ("2-", "us-west-2"), ("3-", "eu-west-1"))


def _params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext`` decoded as ``{"bidder": ExtImpConnatix}`` (absent params are empty);
    JsonShapeError in json-iterator's words when it does not decode."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    params: dict[str, Any] = {"placementId": "", "viewabilityPercentage": 0}
    for _, bidder in go_members(expect_object(imp["ext"], ""), "bidder"):
        for name, value in go_members(expect_object(bidder, "connatix.impExtIncoming.Bidder"), *_FIELDS):
            go_name, kind = _FIELDS[name]
            decoded = go_value(value, kind, f"{_PARAMS}.{go_name}")
            if decoded is not None:
                params[name] = decoded
    return params


def _outgoing_imp(imp: dict[str, Any], params: Mapping[str, Any], version: str, info: RequestInfo) -> dict[str, Any]:
    """The imp as Connatix gets it (see the module docstring); ConversionError without a rate."""
    out = dict(imp)
    banner = out.get("banner")
    if isinstance(banner, dict) and banner.get("w") is None and banner.get("h") is None:
        formats = banner.get("format")
        if isinstance(formats, list) and formats:
            first = formats[0] if isinstance(formats[0], dict) else {}
            out["banner"] = {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}
    if not out.get("displaymanagerver") and version:
        out["displaymanagerver"] = version
    floor, currency = out.get("bidfloor"), out.get("bidfloorcur")
    if isinstance(floor, int | float) and floor > 0 and isinstance(currency, str) and currency:
        if currency.upper() != "USD":
            out["bidfloor"] = info.convert_currency(floor, currency, "USD")
            out["bidfloorcur"] = "USD"
    ext = out.get("ext")
    connatix: dict[str, Any] = {}
    if params["placementId"]:
        connatix["placementId"] = params["placementId"]
    if params["viewabilityPercentage"]:
        connatix["viewabilityPercentage"] = params["viewabilityPercentage"]
    kept = {key: value for key, value in ext.items() if key != "bidder"} if isinstance(ext, dict) else {}
    out["ext"] = {**kept, "connatix": connatix}
    return go_media_objects(out)


def _uri(endpoint: str, request: Mapping[str, Any]) -> str:
    """The endpoint, its query replaced by the buyer uid's data centre when the user has a uid."""
    user = request.get("user")
    uid = user.get("buyeruid") if isinstance(user, dict) else None
    uid = uid.strip(GO_SPACE) if isinstance(uid, str) else ""
    if not uid:
        return endpoint
    query = next((f"dc={centre}" for prefix, centre in _DATA_CENTRES if uid.startswith(prefix)), "")
    return urlunsplit(urlsplit(endpoint)._replace(query=query))


def _bid_type(bid: Mapping[str, Any]) -> str:
    """Video when ``ext.connatix.mediaType`` is ``video``; banner otherwise (an ext that does not decode too)."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        return "banner"
    connatix = go_field(ext, "connatix")
    if connatix is not None and not isinstance(connatix, dict):
        return "banner"
    media_type = go_field(connatix, "mediaType") if connatix else None
    return "video" if media_type == "video" else "banner"


class ConnatixAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        device = request.get("device")
        if not isinstance(device, dict) or not (device.get("ip") or device.get("ipv6")):
            return [], [bad_input("Device IP is required")]
        version = app_display_manager_version(request)
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                imps.append(_outgoing_imp(imp, _params(imp), version, info))
            except (JsonShapeError, ConversionError) as exc:
                errors.append(BidderError(str(exc)))
        if not imps:
            return [], errors
        try:
            uri = _uri(self.endpoint, request)
        except ValueError as exc:
            return [], [*errors, BidderError(str(exc))]
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        HEADER_SETS["device"](headers, request)
        top = go_request_top(request)
        return [json_call(uri, {**top, "imp": [imp]}, [imp.get("id", "")], headers) for imp in imps], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        return BidderResponse([TypedBid(bid, _bid_type(bid)) for bid in answer.bids], "USD"), []


def build(config: AdapterConfig) -> ConnatixAdapter:
    return ConnatixAdapter(config)
