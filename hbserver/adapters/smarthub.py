"""SmartHub (Attekmi) adapter: the request, unchanged, in one OpenRTB call to the endpoint template
filled with the first imp's params: ``partnerName`` as ``{{.Host}}``, ``seat`` as ``{{.AccountID}}``
and ``token`` as ``{{.SourceId}}``, as given (PBS-Go's text template does not escape them).

Only the first imp's params are read; when its ``ext`` or params do not decode the request fails.
The call adds ``Prebid-Adapter-Ver: 1.0.0`` to the usual JSON headers. Of the answer only the first
bid of the first seatbid is taken, typed by its ``ext.mediaType``; the currency is always USD.
Failure statuses carry the answer's body in their text (400 and 503 count as bad input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    JsonShapeError,
    expect_object,
    expect_string,
    json_call,
    json_headers,
    resolve_macros,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    ImpExtError,
    go_answer,
    go_media_objects,
    go_members,
    go_request_top,
    imp_bidder_params,
)

ADAPTER_VERSION = "1.0.0"
HEADERS = json_headers(Prebid_Adapter_Ver=ADAPTER_VERSION)
_MEDIA_TYPES = frozenset({"banner", "video", "audio", "native"})
# json name -> (endpoint macro, Go field of openrtb_ext.ExtSmartHub)
_PARAMS = {"partnerName": ("Host", "PartnerName"), "seat": ("AccountID", "Seat"), "token": ("SourceId", "Token")}


class _BadImp(ValueError):
    """An imp this adapter cannot read (the message is the bidder error's)."""


def _endpoint_values(imp: Mapping[str, Any]) -> dict[str, str]:
    """The imp's params as endpoint macro values; _BadImp in PBS-Go's words when its ``ext`` or its
    params do not decode (json-iterator: a null string reads as "")."""
    try:
        params = imp_bidder_params(imp, null_is_absent=True)
        values = {"Host": "", "AccountID": "", "SourceId": ""}
        for name, value in go_members(params, *_PARAMS):
            macro, go_name = _PARAMS[name]
            values[macro] = expect_string(value, f"openrtb_ext.ExtSmartHub.{go_name}")
    except ImpExtError:
        raise _BadImp("Bidder extension not provided or can't be unmarshalled") from None
    except JsonShapeError:
        raise _BadImp("Error while unmarshaling bidder extension") from None
    return values


def _status_error(response: ResponseData) -> BidderError:
    """PBS-Go's error for a status other than 200 and 204, the body quoted as received."""
    if response.status == 400:
        return bad_input(f"Bad Request. {_text(response.body)}")
    if response.status == 503:
        return bad_input("Bidder unavailable. Please contact the bidder support.")
    return bad_server_response(f"Status Code: [ {response.status} ] {_text(response.body)}")


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")


def _media_type(bid: Mapping[str, Any]) -> str:
    """``ext.mediaType`` as Go decodes the bid's ext; JsonShapeError when the ext is absent, null or
    not an object, or the field is not a string."""
    if bid.get("ext") is None:  # Go holds no bytes to decode
        raise JsonShapeError(ABSENT_OBJECT)
    kind = ""
    for _, value in go_members(expect_object(bid["ext"], ""), "mediaType"):
        kind = expect_string(value, "smarthub.bidExt.MediaType")
    return kind


class SmarthubAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:  # PBS-Go reads imp[0] unchecked; the exchange never sends a bidder no imp
            return [], []
        try:
            values = _endpoint_values(imps[0])
        except _BadImp as exc:
            return [], [bad_input(str(exc))]
        body = {**go_request_top(request), "imp": [go_media_objects(imp) for imp in imps]}
        uri = resolve_macros(self.endpoint, values)
        return [json_call(uri, body, (imp.get("id", "") for imp in imps), HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            return None, [_status_error(response)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]  # json-iterator's own error (jsonutil's FailedToUnmarshal)
        if not answer.seatbids:
            return None, [bad_server_response("Array SeatBid cannot be empty")]
        bids = answer.seatbids[0][1]
        if not bids:
            return None, [bad_server_response("Array SeatBid[0].Bid cannot be empty")]
        bid = bids[0]
        try:
            kind = _media_type(bid)
        except JsonShapeError:
            return None, [bad_server_response("Field BidExt is required")]
        if kind not in _MEDIA_TYPES:
            return None, [BidderError(f"invalid BidType: {kind}")]
        return BidderResponse([TypedBid(bid, kind)]), []


def build(config: AdapterConfig) -> SmarthubAdapter:
    return SmarthubAdapter(config)
