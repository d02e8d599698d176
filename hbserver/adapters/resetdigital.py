"""ResetDigital adapter: a request of exactly one imp, sent to ``<endpoint>?pid=<placement_id>``.

The request goes with the OpenRTB fields PBS-Go copies (no ``allimps``, ``bapp``, ``wlangb``,
``acat``, ``cattax``, ``dooh``), the imp's ``tagid`` filled from ``placement_id`` when empty and
``cur`` reduced to its valid ISO 4217 codes (USD when none), with ``X-OpenRTB-Version: 2.6``. Bids
priced at 0 or less are dropped with a warning; a bid is typed by ``mtype``, else by the imp
(video, audio, native, banner). The seat is the answer's, else ``resetdigital``; the currency the
answer's, else the request's first valid one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
from hbserver.adapters.common import UNEXPECTED_STATUS, AnswerWording, JsonShapeError, json_call, mtype_bid_type
from hbserver.adapters.golike import (
    GO_SPACE,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_field,
    go_imp,
    go_value,
    imp_bidder_params,
)
from hbserver.auction.common.iso4217 import ISO4217_CODES

SEAT = "resetdigital"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "X-OpenRTB-Version": "2.6"}
# the request fields PBS-Go's adapter copies into its own request
_KEPT = (
    "id", "source", "tmax", "test", "device", "site", "app", "user", "regs", "ext", "at",
    "badv", "bcat", "bseat", "wlang", "wseat",
)  # fmt: skip
_ZERO_OMITTED = frozenset({"tmax", "test", "at"})
_ANSWER_WORDING = AnswerWording(
    status_error=bad_server_response, body_text="Bad server response: {}", body_error=bad_server_response
)


def _status_4xx_is_input(status: int) -> list[BidderError] | None:
    """Any 4xx is bad input here, not only 400 (None: the body is read)."""
    if 400 <= status < 500:
        return [bad_input(UNEXPECTED_STATUS.format(status))]
    return None


def valid_currencies(currencies: Any) -> list[str]:
    """The request's ``cur`` codes, trimmed and upper-cased, that ISO 4217 knows; ``["USD"]`` when none."""
    valid = []
    for code in currencies if isinstance(currencies, list) else ():
        code = code.strip(GO_SPACE).upper() if isinstance(code, str) else ""
        if code in ISO4217_CODES:
            valid.append(code)
    return valid or ["USD"]


def _placement_id(imp: Mapping[str, Any]) -> str:
    """``placement_id``; BidderError (bad input) when imp.ext or the params do not decode."""
    try:
        params = imp_bidder_params(imp)
        value = go_value(go_field(params, "placement_id"), GoKind.STRING, "openrtb_ext.ImpExtResetDigital.PlacementID")
    except ImpExtError as exc:
        raise _Refused(bad_input(f"Error parsing bidderExt from imp.ext: {exc}")) from None
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"Error parsing resetDigitalExt from bidderExt.bidder: {exc}")) from None
    return value or ""


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _body(request: Mapping[str, Any], imp: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key in _KEPT:
        value = request.get(key)
        if value is None or (key in _ZERO_OMITTED and value == 0) or value == []:
            continue
        body[key] = value
    body["imp"] = [go_imp(imp)]
    body["cur"] = valid_currencies(request.get("cur"))
    return body


def bid_type(bid: Mapping[str, Any], imps: Iterable[Mapping[str, Any]]) -> str | None:
    """The bid's ``mtype`` type, else the type of the request's (only) imp when the ids match."""
    kind = mtype_bid_type(bid)
    if kind is not None:
        return kind
    imp = next(iter(imps), {})
    if imp.get("id", "") != bid.get("impid"):
        return None
    return next((kind for kind in ("video", "audio", "native") if imp.get(kind) is not None), "banner")


class ResetDigitalAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if len(imps) != 1:
            return [], [bad_input("ResetDigital adapter supports only one impression per request")]
        imp = imps[0]
        try:
            placement = _placement_id(imp)
        except _Refused as refused:
            return [], [refused.error]
        if not imp.get("tagid"):
            imp = {**imp, "tagid": placement}
        uri = f"{self.endpoint}?pid={placement}"
        return [json_call(uri, _body(request, imp), [imp.get("id", "")], HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        refused = _status_4xx_is_input(response.status)
        if refused is not None:
            return None, refused
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        if not answer.seatbids:
            return None, []
        result = BidderResponse(currency=answer.cur or valid_currencies(request.get("cur"))[0])
        errors: list[BidderError] = []
        for seat, bids in answer.seatbids:
            for bid in bids:
                if bid["price"] <= 0:
                    errors.append(BidderError(f"price {bid['price']:f} <= 0 filtered out"))
                    continue
                kind = bid_type(bid, request.get("imp") or ())
                if kind is None:
                    errors.append(BidderError(f"no matching impression found for ImpID: {bid['impid']}"))
                    continue
                result.bids.append(TypedBid(bid, kind, seat=seat or SEAT))
        return result, errors


def build(config: AdapterConfig) -> ResetDigitalAdapter:
    return ResetDigitalAdapter(config)
