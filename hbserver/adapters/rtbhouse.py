"""RTB House adapter: the whole request in one OpenRTB call to the configured endpoint, in USD.

Each imp keeps its floor when it is in USD; a foreign floor is converted to USD, and an imp without
a floor of its own takes the params' ``bidfloor`` in the request's first currency (USD when none).
An imp without a ``tagid`` gets ``ext.gpid``, else ``ext.data.adserver.adslot``, else
``ext.data.pbadslot``, else its id; its ext loses the PAAPI signals (``ae``, ``igs``, ``paapi``) and
its ``pmp`` goes. The first non-empty ``publisherId`` of the params is written to the site's (else
the app's) ``publisher.ext.prebid.publisherId``; a request with neither gets a site for it. Any imp
that cannot be read, or a floor without a rate, fails the whole request.

Bids are typed by ``mtype`` (1 banner, 4 native; any other bid is reported and left out).
``${AUCTION_PRICE}`` is filled in ``nurl`` and ``adm``; a native ``adm`` wrapped in ``{"native":
...}`` is unwrapped. Bids are in USD.
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
    AnswerWording,
    JsonShapeError,
    Refusal,
    expect_object,
    expect_string,
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    ImpExtError,
    decode_go_answer,
    go_fields,
    go_imp,
    go_request_top,
    json_member_text,
    typed_bids,
    with_auction_price,
)
from hbserver.adapters.steps import ParamsSpec
from hbserver.auction.request.ortb_schema import STRUCTS

USD = "USD"
_PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpRTBHouse",
        "fields": {
            "publisherId": ["PublisherId", "string"],
            "region": ["Region", "string"],
            "bidfloor": ["BidFloor", "float64"],
            "channel": ["Channel", "string"],
        },
    }
)
NO_EXT = "Bidder extension not provided or can't be unmarshalled"
BAD_PARAMS = "Error while unmarshaling bidder extension"
_PAAPI_KEYS = ("ae", "igs", "paapi")
# openrtb2.BidRequest's and openrtb2.Imp's fields: Go's typed re-encoding drops any other key
_REQUEST_FIELDS = frozenset(name for name, _, _ in STRUCTS["openrtb2.BidRequest"])
_IMP_FIELDS = frozenset(name for name, _, _ in STRUCTS["openrtb2.Imp"])
_HEADERS = {"Content-Type": "application/json;charset=utf-8"}
# PBS's usual status texts (400 bad input, any other failure a bad server response); an answer that
# does not decode is reported with the decoder's bare text
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_BID_TYPES = {1: "banner", 4: "native"}


class _Failed(Refusal):
    """The request cannot be made; ``error`` is the one error PBS-Go answers with."""


def _number(value: Any) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tag_id(ext: Mapping[str, Any], imp_id: str) -> str:
    """``ext.gpid``, else ``ext.data.adserver.adslot``, else ``ext.data.pbadslot``, else the imp id."""
    if _text(ext.get("gpid")):
        return str(ext["gpid"])
    data = ext.get("data")
    if isinstance(data, Mapping):
        adserver = data.get("adserver")
        if isinstance(adserver, Mapping) and _text(adserver.get("adslot")):
            return str(adserver["adslot"])
        if _text(data.get("pbadslot")):
            return str(data["pbadslot"])
    return imp_id


def floor_of(imp: Mapping[str, Any], params: Mapping[str, Any], cur: Any, info: RequestInfo) -> tuple[float, str]:
    """The imp's floor and its currency as RTB House gets them (see the module docstring)."""
    floor, currency = _number(imp.get("bidfloor")), _text(imp.get("bidfloorcur"))
    if not currency and floor == 0 and _number(params.get("bidfloor")) > 0:
        floor = params["bidfloor"]
        currency = _text(cur[0]) if isinstance(cur, list) and cur else USD
    if floor > 0 and currency and currency.upper() != USD:
        try:
            floor, currency = info.convert_currency(floor, currency, USD), USD
        except ConversionError as exc:
            raise _Failed(BidderError(str(exc))) from None
    return floor, currency


def prepared_imp(imp: Mapping[str, Any], params: Mapping[str, Any], cur: Any, info: RequestInfo) -> dict[str, Any]:
    ext = imp["ext"]
    out = {key: value for key, value in imp.items() if key in _IMP_FIELDS and key != "pmp"}
    floor, currency = floor_of(imp, params, cur, info)
    if floor > 0 and currency == USD:
        out["bidfloor"], out["bidfloorcur"] = floor, currency
    if not _text(imp.get("tagid")):
        out["tagid"] = tag_id(ext or {}, _text(imp.get("id")))
    out["ext"] = None if ext is None else {key: value for key, value in ext.items() if key not in _PAAPI_KEYS}
    return go_imp(out)


def _read_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    ext = imp.get("ext", ...)
    if ext is ... or (ext is not None and not isinstance(ext, Mapping)):
        raise _Failed(bad_input(NO_EXT))
    try:
        return _PARAMS.read(imp)
    except ImpExtError:
        raise _Failed(bad_input(NO_EXT)) from None
    except JsonShapeError:
        raise _Failed(bad_input(BAD_PARAMS)) from None


def publisher_ext(ext: Any, publisher_id: str) -> dict[str, Any]:
    """``{"prebid": {"publisherId": ...}}``: the publisher ext as RTB House's struct re-encodes it
    (every other key dropped); JsonShapeError (json-iterator's words) when it does not decode."""
    fields = go_fields(expect_object(ext, ""), "prebid")
    prebid = go_fields(expect_object(fields.get("prebid"), "rtbhouse.publisherExt.Prebid"), "publisherId")
    expect_string(prebid.get("publisherId"), "rtbhouse.publisherExtPrebid.PublisherId")
    return {"prebid": {"publisherId": publisher_id}}


def with_publisher(body: dict[str, Any], publisher_id: str) -> None:
    """The publisher id set in the site's (else the app's, else a new site's) publisher ext."""
    place = "site" if isinstance(body.get("site"), Mapping) else "app" if isinstance(body.get("app"), Mapping) else ""
    holder = body[place] if place else {}
    publisher = holder.get("publisher")
    publisher = dict(publisher) if isinstance(publisher, Mapping) else {}
    try:
        publisher["ext"] = publisher_ext(publisher.get("ext"), publisher_id)
    except JsonShapeError as exc:
        raise _Failed(BidderError(str(exc))) from None
    body[place or "site"] = {**holder, "publisher": publisher}


class RTBHouseAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        body = {key: value for key, value in go_request_top(request).items() if key in _REQUEST_FIELDS}
        imps = []
        publisher_id = ""
        try:
            for imp in request.get("imp") or ():
                params = _read_params(imp)
                publisher_id = publisher_id or params.get("publisherId", "")
                imps.append(prepared_imp(imp, params, request.get("cur"), info))
                body["cur"] = [USD]
            if publisher_id:
                with_publisher(body, publisher_id)
        except _Failed as failed:
            return [], [failed.error]
        body["imp"] = imps
        return [json_call(self.endpoint, body, imp_ids(imps), _HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        if not answer.seatbids:  # PBS-Go fails reading the first seatbid: no bids
            return None, []
        return typed_bids(answer, _typed, answer_currency=False)


def _typed(raw_bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by its ``mtype``, its price macro resolved and a native bid's markup unwrapped."""
    bid = with_auction_price(raw_bid, ("nurl", "adm"))
    bid_type = _BID_TYPES.get(bid.get("mtype"))
    if bid_type is None:
        return BidderError(f"unrecognized bid type in response from rtbhouse for bid {bid['impid']}")
    if bid_type == "native":
        try:
            bid["adm"] = native_adm(bid.get("adm", ""))
        except ValueError as exc:
            return BidderError(str(exc))
    return TypedBid(bid, bid_type)


def native_adm(adm: str) -> str:
    """A native ``adm`` with its ``native`` member unwrapped (its raw text); ValueError (PBS-Go's
    text) when the adm is no JSON object or its ``native`` is no object."""
    try:
        data = orjson.loads(adm)
    except orjson.JSONDecodeError:
        raise ValueError("unable to unmarshal native adm") from None
    if data is not None and not isinstance(data, dict):
        raise ValueError("unable to unmarshal native adm")
    if not data or "native" not in data:
        return adm
    try:
        raw = json_member_text(adm, "native")
    except (ValueError, IndexError):
        raw = None
    if raw is None or not raw.startswith("{"):
        raise ValueError("unable to get native adm")
    return raw


def build(config: AdapterConfig) -> RTBHouseAdapter:
    return RTBHouseAdapter(config)
