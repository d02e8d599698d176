"""MobileFuse adapter: the banner, video and native imps in one OpenRTB call to the configured endpoint.

Each imp's ``placement_id`` becomes its ``tagid`` (an imp without one keeps the value read before
it, as Go decodes every imp's params into one struct) and its ext is cut down to ``skadn``. Params
that do not decode before the first imp whose params do, or in any imp sent, fail the request. The
request is sent as PBS-Go writes its typed model. Bids are typed by ``mtype`` and lose their ext.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    JSON_HEADERS,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, json_call, mtype_bid_type
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_typed_request,
    go_value,
    imp_bidder_params,
)

MEDIA = ("banner", "video", "native")
_ANSWER_WORDING = AnswerWording(
    status="Unexpected status code: {}.", not_an_object=NOT_AN_OBJECT, body_error=BidderError
)


def placement_id(imp: Mapping[str, Any], before: int) -> int:
    """The imp's ``placement_id``, ``before`` when its params have none; JsonShapeError when its ext
    or params do not decode."""
    params = imp_bidder_params(imp)
    if not any(key.lower() == "placement_id" for key in params):
        return before
    value = go_value(go_field(params, "placement_id"), GoKind.INT, "openrtb_ext.ExtImpMobileFuse.PlacementId")
    return before if value is None else value


def _first_params_errors(imps: list[Any]) -> list[BidderError]:
    """The errors of the imps whose params do not decode, up to the first one whose params do."""
    errors = []
    for imp in imps:
        try:
            placement_id(imp, 0)
        except JsonShapeError as exc:
            errors.append(BidderError(str(exc)))
            continue
        break
    return errors


def _imps_as_sent(imps: list[Any]) -> list[dict[str, Any]]:
    """The imps with a banner, video or native object, each with its ``tagid`` and ``skadn`` ext."""
    sent = []
    placement = 0
    for imp in imps:
        if all(imp.get(kind) is None for kind in MEDIA):
            continue
        placement = placement_id(imp, placement)
        out = {key: value for key, value in imp.items() if key != "ext"}
        out["tagid"] = str(placement)
        skadn = go_field(imp["ext"], "skadn")
        if skadn is not None:
            out["ext"] = {"skadn": skadn}
        sent.append(out)
    return sent


class MobileFuseAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = [imp for imp in request.get("imp") or () if isinstance(imp, dict)]
        errors = _first_params_errors(imps)
        if errors:
            return [], errors
        try:
            sent = _imps_as_sent(imps)
        except JsonShapeError as exc:
            return [], [BidderError(str(exc))]
        if not sent:
            return [], [BidderError("No valid imps")]
        body = go_typed_request({**request, "imp": sent})
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in sent], JSON_HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = mtype_bid_type(bid)
            if kind not in MEDIA:
                text = f'Unsupported MType "{bid.get("mtype", 0)}" for impression ID "{bid.get("impid", "")}"'
                errors.append(bad_server_response(text))
                continue
            result.bids.append(TypedBid({key: value for key, value in bid.items() if key != "ext"}, kind))
        return result, errors


def build(config: AdapterConfig) -> MobileFuseAdapter:
    return MobileFuseAdapter(config)
