"""Adhese adapter (PBS-Go ``adapters/adhese``): the first imp rules the request.

One call with the whole request to the endpoint of the first imp's account (a safe host), that imp's
ext replaced by ``{"adhese": targets}``: its ``targets`` params with the slot ``SL`` (location and
format) unless they name one; the call names the first imp alone. Only the answer's first bid is
read: a banner, video, native or audio bid as the first imp's one media object says, its ext the
``adhese`` member of the ext it came with. Every failure status is an error, 204 too.
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
from hbserver.adapters.common import UNEXPECTED_STATUS, JsonShapeError, expect_object, json_call, resolve_macros
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoKind,
    ImpExtError,
    go_answer,
    go_strings,
    go_typed_request,
    go_value,
)
from hbserver.adapters.steps import ParamsSpec, is_safe_host

_PARAMS = ParamsSpec(
    "openrtb_ext.ExtImpAdhese",
    {"account": ("Account", "string"), "location": ("Location", "string"), "format": ("Format", "string"),
     "targets": ("Targets", "map")},
    null_is_absent=True,
)  # fmt: skip
_MEDIA = ("banner", "video", "native", "audio")


class _Failed(Exception):
    """The request or the answer fails with ``error`` (PBS-Go's words)."""

    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def read_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params as ``openrtb_ext.ExtImpAdhese``; _Failed in PBS-Go's words."""
    try:
        params = _PARAMS.read(imp)
        targets = params["targets"] or {}
        params["targets"] = {
            name: go_strings(values, "openrtb_ext.ExtImpAdhese.Targets") for name, values in targets.items()
        }
    except ImpExtError as exc:
        raise _Failed(bad_input(f"Error unmarshalling imp.ext: {exc}")) from None
    except JsonShapeError as exc:
        raise _Failed(bad_input(f"Error unmarshalling bidder ext: {exc}")) from None
    return params


def adhese_ext(params: Mapping[str, Any]) -> dict[str, Any]:
    """``{"adhese": targets}``: the slot, then the params' targets (a map: Go writes it sorted)."""
    targets = {"SL": [f"{params['location']}-{params['format']}"], **params["targets"]}
    return {"adhese": dict(sorted(targets.items()))}


def bid_type(imp: Mapping[str, Any]) -> str:
    """The imp's one media type; _Failed when it has none or several."""
    kinds = [kind for kind in _MEDIA if imp.get(kind) is not None]
    if len(kinds) == 1:
        return kinds[0]
    problem = "Multiple media types detected, cannot infer" if kinds else "Could not infer bid type from imp"
    raise _Failed(bad_server_response(f"BidType error: [{problem}]"))


def bid_ext(bid: Mapping[str, Any]) -> dict[str, str] | None:
    """``bid.ext`` as ``map[string]map[string]string``, its ``adhese`` member (None without one);
    _Failed in PBS-Go's words when it does not decode."""
    try:
        if "ext" not in bid or bid["ext"] is None:
            raise JsonShapeError(ABSENT_OBJECT)
        wrapped = expect_object(bid["ext"], "")
        members = {name: _string_map(value) for name, value in wrapped.items()}
    except JsonShapeError as exc:
        raise _Failed(bad_server_response(f"BidExt parsing error. {exc}")) from None
    adhese = members.get("adhese")  # a Go map: the key as it is
    return None if adhese is None else dict(sorted(adhese.items()))


def _string_map(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    where = "adhese.wrappedBidExt"
    return {name: go_value(item, GoKind.STRING, where) or "" for name, item in expect_object(value, where).items()}


class AdheseAdapter:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        if not imps:
            return [], []
        try:
            params = read_params(imps[0])
        except _Failed as failed:
            return [], [failed.error]
        if not is_safe_host(params["account"]):
            return [], [bad_input("Invalid account")]
        imps[0] = {**imps[0], "ext": adhese_ext(params)}
        uri = resolve_macros(self.endpoint, {"AccountID": params["account"]})
        body = go_typed_request({**request, "imp": imps})
        call = json_call(uri, body, [imps[0].get("id", "")], {})
        return [call], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status != 200:
            text = UNEXPECTED_STATUS.format(response.status)
            return None, [bad_input(text) if response.status == 400 else bad_server_response(text)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError:
            return None, [bad_server_response("Empty body")]
        if not answer.seatbids:
            return None, [bad_server_response("Empty SeatBid")]
        bids = answer.seatbids[0][1]
        if not bids:
            return None, [bad_server_response("Empty SeatBid.Bid")]
        try:
            ext = bid_ext(bids[0])
            kind = bid_type((request.get("imp") or [{}])[0])
        except _Failed as failed:
            return None, [failed.error]
        bid = {**bids[0], "ext": ext}
        return BidderResponse([TypedBid(bid, kind)], answer.cur or "USD"), []


def build(config: AdapterConfig) -> AdheseAdapter:
    return AdheseAdapter(config.endpoint)
