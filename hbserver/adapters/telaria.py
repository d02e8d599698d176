"""Telaria adapter: video only. The request goes with its first imp alone, in one call to the
configured endpoint (PBS-Go's own when none is configured), after these checks, each a bad input that
stops the request: imps present, none with a banner, one at least with a video, the first imp's ext
decoding with a non-empty ``seatCode``.

That imp's ``tagid`` becomes its ``adCode`` and its ext ``{originalTagid, originalPublisherid}``; the
site's (else the app's) publisher gets the seat code as its id (keeping its domain, name, cat and ext;
the app dropped when there is a site); the params' ``extra`` becomes the request's ext. Headers:
OpenRTB 2.5 and the device's User-Agent, IP, language and DNT.

The answer: 204 and every failure status are bad input in Telaria's words; only the first seatbid is
read, its n-th bid the n-th imp's of the request (bids past the imps dropped), each a video, in USD.
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
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import ImpExtError, go_answer, go_typed_request
from hbserver.adapters.steps import HEADER_SETS, ParamsSpec

DEFAULT_ENDPOINT = "https://ads.tremorhub.com/ad/rtb/prebid"
PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpTelaria",
        "fields": {
            "adCode": ["AdCode", "string"],
            "seatCode": ["SeatCode", "string"],
            "extra": ["Extra", "json.RawMessage"],
        },
    }
)
HEADERS = ("json", "openrtb_25", "user_agent", "ip", "accept_language", "dnt")
_PUBLISHER_KEPT = ("domain", "name", "cat", "ext")
_WRONG = "Telaria: Something went wrong, please contact your Account Manager. Status Code: [ {} ] "


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def checked_imps(imps: list[Any]) -> None:
    """Raises _Refused unless the request has imps, none with a banner and one with a video."""
    if not imps:
        raise _Refused(bad_input("Telaria: Missing Imp Object"))
    if any(imp.get("banner") is not None for imp in imps):
        raise _Refused(bad_input("Telaria: Banner not supported"))
    if all(imp.get("video") is None for imp in imps):
        raise _Refused(bad_input("Telaria: Only Supports Video"))


def read_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params; _Refused when its ext does not decode or names no seat code."""
    try:
        params = PARAMS.read(imp)
    except ImpExtError:
        raise _Refused(bad_input("Telaria: ext.bidder not provided")) from None
    except JsonShapeError as exc:
        raise _Refused(BidderError(str(exc))) from None
    if not params.get("seatCode"):
        raise _Refused(bad_input("Telaria: Seat Code required"))
    return params


def _publisher(holder: Any) -> Any:
    return holder.get("publisher") if isinstance(holder, Mapping) else None


def original_publisher_id(request: Mapping[str, Any]) -> Any:
    """The site's publisher id when the site has a publisher, else the app's; "" without either."""
    for holder in ("site", "app"):
        publisher = _publisher(request.get(holder))
        if publisher is not None:
            return publisher.get("id", "") if isinstance(publisher, Mapping) else ""
    return ""


def with_seat(request: dict[str, Any], seat: str) -> None:
    """The site (else the app) given a publisher named by the seat code; the other one dropped."""
    holder = "site" if request.get("site") is not None else "app" if request.get("app") is not None else ""
    request.pop("app" if holder == "site" else "site", None)
    if not holder:
        return
    publisher = _publisher(request[holder])
    kept = {key: publisher[key] for key in _PUBLISHER_KEPT if isinstance(publisher, Mapping) and key in publisher}
    request[holder] = {**request[holder], "publisher": {"id": seat, **kept}}


class TelariaAdapter:
    """Telaria's calls and answers (see the module docstring)."""

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint or DEFAULT_ENDPOINT

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        try:
            checked_imps(imps)
            params = read_params(imps[0])
        except _Refused as refused:
            return [], [refused.error]
        imp = {**imps[0], "ext": {"originalTagid": imps[0].get("tagid", ""),
                                  "originalPublisherid": original_publisher_id(request)}}  # fmt: skip
        imp.pop("tagid", None)
        if params.get("adCode"):
            imp["tagid"] = params["adCode"]
        out = {**request, "imp": [imp]}
        if params.get("extra") is not None:
            out["ext"] = {"extra": params["extra"]}
        with_seat(out, params["seatCode"])
        headers: dict[str, str] = {}
        for name in HEADERS:
            HEADER_SETS[name](headers, out)
        return [json_call(self.endpoint, go_typed_request(out), [imp.get("id", "")], headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = status_failure(response.status)
        if failure is not None:
            return None, [failure]
        try:
            answer = go_answer(response.body)
        except JsonShapeError:
            return None, [bad_server_response("Telaria: Bad Server Response")]
        result = BidderResponse()
        if not answer.seatbids:  # PBS-Go panics on an answer without seatbids; here it has no bids
            return result, []
        imps = request.get("imp") or []
        for bid, imp in zip(answer.seatbids[0][1], imps, strict=False):
            result.bids.append(TypedBid({**bid, "impid": imp.get("id", "")}, "video"))
        return result, []


def status_failure(status: int) -> BidderError | None:
    """Telaria's error for a status (None for a 2xx but 204)."""
    if status == 204:
        return bad_input("Telaria: Invalid Bid Request received by the server")
    if status == 400:
        return bad_input("Telaria: Unexpected status code: [ 400 ] ")
    if not 200 <= status < 300:
        return bad_input(_WRONG.format(status))
    return None


def build(config: AdapterConfig) -> TelariaAdapter:
    return TelariaAdapter(config)
