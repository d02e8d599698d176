"""The OpenRTB pass-through bidder (CONTRACT §4).

The request the exchange built for this bidder (``imp[].ext.bidder`` = its params, ``user.buyeruid``
from the cookie, ``tmax`` = its time left, 2.5 or 2.6 field places) is POSTed unchanged. 204 or an
empty 200 is no bid; a bid's type is ``bid.mtype`` when set, else the media type of its imp.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
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
from hbserver.adapters.common import first_media_type, imp_ids, status_error

_HEADERS = {
    version: {"Content-Type": "application/json;charset=utf-8", "X-Openrtb-Version": version}
    for version in ("2.5", "2.6")
}


class GenericAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not self.endpoint:
            return [], [bad_input(f"bidder {info.bidder} has no endpoint configured")]
        headers = _HEADERS.get(info.openrtb_version, _HEADERS["2.5"])
        body = orjson.dumps(request)
        return [RequestData("POST", self.endpoint, body, headers, imp_ids(request.get("imp", ())))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        status = response.status
        body = response.body
        if status == 204 or (status == 200 and (not body or body.isspace())):
            return None, []
        error = status_error(status)
        if error is not None:
            return None, [error]
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return None, [bad_server_response(f"Bad response body: {exc}")]
        if not isinstance(data, dict):
            return None, [bad_server_response("Bad response body: expected a JSON object")]
        seatbids = data.get("seatbid") or []
        if not isinstance(seatbids, list):
            return None, [bad_server_response("Bad response body: seatbid must be an array")]
        imp_types: dict[Any, str] | None = None  # built when a bid has no mtype
        result = BidderResponse(currency=data.get("cur") or "USD")
        errors: list[BidderError] = []
        for seatbid in seatbids:
            if not isinstance(seatbid, dict) or not isinstance(seatbid.get("bid") or [], list):
                errors.append(bad_server_response("Bad response body: malformed seatbid"))
                continue
            for bid in seatbid.get("bid") or []:
                if not isinstance(bid, dict):
                    errors.append(bad_server_response("Bad response body: a bid is not an object"))
                    continue
                mtype, impid = bid.get("mtype"), bid.get("impid")
                kind = MTYPE_TO_TYPE.get(mtype) if mtype and isinstance(mtype, int | float) else None
                if kind is None:
                    if imp_types is None:
                        imp_types = {imp.get("id"): first_media_type(imp) or "banner" for imp in request.get("imp", ())}
                    kind = imp_types.get(impid) if isinstance(impid, str) else None
                if kind is None:
                    errors.append(
                        bad_server_response(f'Failed to find impression "{bid.get("impid")}" for bid "{bid.get("id")}"')
                    )
                    continue
                result.bids.append(TypedBid(bid, kind))
        return result, errors


def build(config: AdapterConfig) -> GenericAdapter:
    return GenericAdapter(config)
