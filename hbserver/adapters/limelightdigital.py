"""Limelight Digital adapter: one OpenRTB call per imp to the endpoint template filled with that imp's
``publisherId`` (``{{.PublisherID}}``) and ``host`` (``{{.Host}}``) params, as given (PBS-Go's text
template does not escape them).

Each call carries the request with that imp alone, its ``ext`` removed, the request ``id`` made
``<request id>-<imp id>`` and the request ``ext`` removed; a floor in another currency is converted
to USD first. An imp whose params do not decode, or whose floor cannot be converted, is dropped with
its error and the other imps still go. The calls have no headers of their own. Bids are typed by
their imp (banner, else video, else audio, else native); a bid that cannot be typed is dropped with
an error and the others kept. The answer's ``cur`` is the currency as given; an empty body is no bid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

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
    PUBLISHER_WORDING,
    JsonShapeError,
    expect_string,
    first_media_type,
    floor_in_usd,
    resolve_macros,
)
from hbserver.adapters.golike import (
    decode_go_answer,
    go_media_objects,
    go_members,
    go_request_top,
    imp_bidder_params,
    json_number_text,
)

_ANSWER_WORDING = PUBLISHER_WORDING
_BID_TYPE_ORDER = ("banner", "video", "audio", "native")
_NO_PARAMS = "ext.bidder is not provided"


def _endpoint_values(imp: Mapping[str, Any]) -> dict[str, str]:
    """The imp's ``host`` and ``publisherId`` as the endpoint macros ``Host`` and ``PublisherID``;
    JsonShapeError when its ``ext`` or params do not decode (PBS-Go words every such case alike)."""
    values = {"Host": "", "PublisherID": ""}
    for name, value in go_members(imp_bidder_params(imp, null_is_absent=True), "host", "publisherId"):
        if name == "host":
            values["Host"] = expect_string(value, "openrtb_ext.ImpExtLimelightDigital.Host")
        else:
            values["PublisherID"] = json_number_text(value, "readNumberAsString: invalid number")
    return values


class LimelightDigitalAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        if not config.endpoint:
            raise ValueError("Endpoint  adapter parameter is not provided")  # sic: PBS-Go's two spaces
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        base = go_request_top(request)
        base.pop("ext", None)
        request_id = request.get("id", "")
        for imp in request.get("imp") or ():
            try:
                values = _endpoint_values(imp)
            except JsonShapeError:
                errors.append(bad_input(_NO_PARAMS))
                continue
            try:
                out = floor_in_usd(imp, info)
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
                continue
            out = {key: value for key, value in out.items() if key != "ext"}
            imp_id = imp.get("id", "")
            body = {**base, "id": f"{request_id}-{imp_id}", "imp": [go_media_objects(out)]}
            uri = resolve_macros(self.endpoint, values)
            calls.append(RequestData("POST", uri, orjson.dumps(body), {}, imp_ids=[imp_id]))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 200 and not response.body:
            return None, []
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        imps = request.get("imp") or []
        result = BidderResponse(currency=answer.cur)  # "" when absent: the exchange reads it as USD
        errors: list[BidderError] = []
        for bid in answer.bids:
            bid_type, error = _bid_type(imps, bid["impid"])
            if error is not None:
                errors.append(error)
            else:
                result.bids.append(TypedBid(bid, bid_type))
        return result, errors


def _bid_type(imps: list[dict[str, Any]], imp_id: str) -> tuple[str, BidderError | None]:
    """The media type of the first imp with ``imp_id``, or PBS-Go's error when there is no such imp
    or it asks for none of banner, video, audio and native."""
    for imp in imps:
        if imp.get("id") == imp_id:
            kind = first_media_type(imp, _BID_TYPE_ORDER)
            if kind is None:
                return "", BidderError(f"unknown media type of imp: {imp_id}")
            return kind, None
    return "", BidderError(f"bid contains unknown imp id: {imp_id}")


def build(config: AdapterConfig) -> LimelightDigitalAdapter:
    return LimelightDigitalAdapter(config)
