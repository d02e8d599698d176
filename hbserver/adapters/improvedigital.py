"""Improve Digital adapter: one OpenRTB call per imp to ``ad.360yield.com/{PublisherId}pbs``.

Each imp goes out alone in a copy of the request. ``{PublisherId}`` in the endpoint becomes the
imp's integer ``publisherId`` param followed by ``/`` (nothing when it is absent, zero or not an
integer). An imp whose ``ext.prebid.is_rewarded_inventory`` is exactly ``1`` also gets
``ext.is_rewarded_inventory: true``. The answer must have at most one seatbid; a bid is typed by
``mtype``, else by its imp when the imp asks for a single media type (banner, video, audio,
native in that order); a bid for an unknown imp, of an unknown ``mtype`` or for a multi-format imp
without ``mtype`` fails the whole answer. A bid whose ``ext.improvedigital`` has a non-zero
``line_item_id`` and a ``buying_type`` containing ``classic`` or ``deal`` gets that line item as
its ``dealid``.

This module also holds helpers that decode an answer the way PBS-Go's JSON library decodes it into
its typed OpenRTB structs (``go_answer``, ``go_bid``, ``go_fields``, ``go_value``): keys matched
case-insensitively, unknown keys dropped, ``null`` read as the zero value, empty optional fields
left out of the re-encoded bid, and json-iterator's wording for a value of the wrong type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

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
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, found, status_error

# ---------------------------------------------------------------------------------------------
# Candidates for common.py: PBS-Go's typed decoding of an OpenRTB answer (json-iterator).

GO_STR, GO_FLOAT, GO_INT, GO_BOOL, GO_STRS, GO_INTS, GO_RAW = range(7)
_JSON_SPACE = b" \t\n\r"


def go_fields(obj: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The members of ``obj`` that a Go struct with the JSON field names ``names`` (lower-case name
    -> field name) takes, keyed by field name: json-iterator matches keys case-insensitively and
    the last matching key wins."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = names.get(key) or names.get(key.lower())
        if name is not None:
            out[name] = value
    return out


def _field_names(*names: str) -> dict[str, str]:
    return {name.lower(): name for name in names}


def go_value(value: Any, kind: int, where: str) -> Any:
    """``value`` as a Go field of ``kind`` (``GO_*``) takes it; None for null. A value of the wrong
    type raises JsonShapeError in json-iterator's words (``where`` names the field)."""
    if value is None or kind == GO_RAW:
        return value
    if kind == GO_STR:
        return expect_string(value, where)
    if kind == GO_INT:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        reason = "can not decode float as int" if isinstance(value, float) else "unexpected character: \ufffd"
        raise JsonShapeError(f"cannot unmarshal {where}: {reason}")
    if kind == GO_FLOAT:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise JsonShapeError(f"cannot unmarshal {where}: empty number")
    if kind == GO_BOOL:
        if isinstance(value, bool):
            return value
        raise JsonShapeError(f"cannot unmarshal {where}: expect t or f, but found {found(value)}")
    item_kind = GO_STR if kind == GO_STRS else GO_INT
    for item in go_list(value, where):
        go_value(item, item_kind, where)
    return value


def go_list(value: Any, where: str) -> list[Any]:
    """A JSON array field (null = empty); anything else fails as json-iterator words it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise JsonShapeError(f"cannot unmarshal {where}: decode slice: expect [ or n, but found {found(value)}")
    return value


# openrtb2.Bid: (JSON name, Go field, kind); id, impid and price are always written
_BID = (
    ("id", "ID", GO_STR), ("impid", "ImpID", GO_STR), ("price", "Price", GO_FLOAT), ("nurl", "NURL", GO_STR),
    ("burl", "BURL", GO_STR), ("lurl", "LURL", GO_STR), ("adm", "AdM", GO_STR), ("adid", "AdID", GO_STR),
    ("adomain", "ADomain", GO_STRS), ("bundle", "Bundle", GO_STR), ("iurl", "IURL", GO_STR),
    ("cid", "CID", GO_STR), ("crid", "CrID", GO_STR), ("tactic", "Tactic", GO_STR), ("cattax", "CatTax", GO_INT),
    ("cat", "Cat", GO_STRS), ("attr", "Attr", GO_INTS), ("apis", "APIs", GO_INTS), ("api", "API", GO_INT),
    ("protocol", "Protocol", GO_INT), ("qagmediarating", "QAGMediaRating", GO_INT),
    ("language", "Language", GO_STR), ("langb", "LangB", GO_STR), ("dealid", "DealID", GO_STR),
    ("w", "W", GO_INT), ("h", "H", GO_INT), ("wratio", "WRatio", GO_INT), ("hratio", "HRatio", GO_INT),
    ("exp", "Exp", GO_INT), ("dur", "Dur", GO_INT), ("mtype", "MType", GO_INT), ("slotinpod", "SlotInPod", GO_INT),
    ("ext", "Ext", GO_RAW),
)  # fmt: skip
_BID_NAMES = _field_names(*(name for name, _, _ in _BID))
_ALWAYS = {"id": "", "impid": "", "price": 0}


def go_bid(bid: Any) -> dict[str, Any]:
    """An answer's bid as PBS-Go holds it (decoded into ``openrtb2.Bid``, encoded again): unknown
    keys dropped, zero and empty optional fields left out, ``ext: null`` dropped."""
    fields = go_fields(expect_object(bid, "[]openrtb2.Bid"), _BID_NAMES)
    out: dict[str, Any] = {}
    for name, go_name, kind in _BID:
        value = go_value(fields.get(name), kind, f"openrtb2.Bid.{go_name}")
        if value is None or (not value and kind != GO_RAW):
            if name in _ALWAYS:
                out[name] = _ALWAYS[name] if value is None else value
            continue
        out[name] = value
    return out


class GoAnswer(NamedTuple):
    """An OpenRTB answer as PBS-Go's ``openrtb2.BidResponse``: its currency ("" when absent) and,
    per seatbid, its seat and its bids (each as ``go_bid`` gives it)."""

    cur: str
    seatbids: list[tuple[str, list[dict[str, Any]]]]


_ANSWER_NAMES = _field_names("id", "seatbid", "bidid", "cur", "customdata", "nbr", "ext")
_ANSWER_KINDS = (
    ("id", "ID", GO_STR),
    ("bidid", "BidID", GO_STR),
    ("cur", "Cur", GO_STR),
    ("customdata", "CustomData", GO_STR),
    ("nbr", "NBR", GO_INT),
)
_SEATBID_NAMES = _field_names("bid", "seat", "group", "ext")


def go_answer(body: bytes) -> GoAnswer:
    """``body`` decoded as PBS-Go decodes a bid response (``jsonutil.Unmarshal``): an empty body or
    one that is not a JSON object fails with json-iterator's ``expect { or n, but found <c>``
    (JsonShapeError), ``null`` is an empty answer, members of the wrong type fail."""
    text = body.lstrip(_JSON_SPACE)
    first = text[:1]
    if first not in (b"{", b"n"):
        raise JsonShapeError(f"expect {{ or n, but found {first.decode('latin-1') or chr(0)}")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(f"Bad response body: {exc}") from None
    fields = go_fields(expect_object(data, ""), _ANSWER_NAMES)
    for name, go_name, kind in _ANSWER_KINDS:
        go_value(fields.get(name), kind, f"openrtb2.BidResponse.{go_name}")
    seatbids = []
    for seatbid in go_list(fields.get("seatbid"), "openrtb2.BidResponse.SeatBid"):
        members = go_fields(expect_object(seatbid, "[]openrtb2.SeatBid"), _SEATBID_NAMES)
        seat = go_value(members.get("seat"), GO_STR, "openrtb2.SeatBid.Seat") or ""
        go_value(members.get("group"), GO_INT, "openrtb2.SeatBid.Group")
        bids = go_list(members.get("bid"), "openrtb2.SeatBid.Bid")
        seatbids.append((seat, [go_bid(bid) for bid in bids]))
    return GoAnswer(fields.get("cur") or "", seatbids)


# ---------------------------------------------------------------------------------------------

PUBLISHER_MACRO = "{PublisherId}"
REWARDED = "is_rewarded_inventory"
_DEAL_BUYING = re.compile("(classic|deal)")
_SINGLE_FORMAT_ORDER = (("banner", 1), ("video", 2), ("audio", 3), ("native", 4))
_EXT_NAMES = _field_names("bidder")
_BIDDER_NAMES = _field_names("publisherId")
_BID_EXT_NAMES = _field_names("Improvedigital")
_ID_EXT_NAMES = _field_names("line_item_id", "buying_type")
_HEADERS = {"Content-Type": "application/json;charset=utf-8"}


class _BadBid(ValueError):
    """A bid this adapter cannot type (the message is the bidder error's)."""


def _rewarded_ext(imp: Mapping[str, Any]) -> dict[str, Any] | None:
    """The imp's ext with ``is_rewarded_inventory: true`` when ``ext.prebid`` asks for rewarded
    inventory, else None; a missing or malformed ext fails as PBS-Go's JSON library words it."""
    if "ext" not in imp:
        raise JsonShapeError(f"expect {{ or n, but found {chr(0)}")
    ext = expect_object(imp["ext"], "")
    if "prebid" not in ext:
        return None
    prebid = expect_object(ext["prebid"], "")
    flag = prebid.get(REWARDED)
    if type(flag) is int and flag == 1:
        return {**ext, REWARDED: True}
    return None


def _publisher_path(ext: Any) -> str:
    """``<publisherId>/`` from the imp's params, "" when there is none (or it is no integer)."""
    try:
        bidder = go_fields(expect_object(ext, ""), _EXT_NAMES).get("bidder")
        publisher = go_value(go_fields(expect_object(bidder, ""), _BIDDER_NAMES).get("publisherId"), GO_INT, "")
    except JsonShapeError:
        return ""
    return f"{publisher}/" if publisher else ""


def _bid_type(bid: Mapping[str, Any], imps: Mapping[str, Mapping[str, Any]]) -> str:
    impid = bid["impid"]
    imp = imps.get(impid)
    if imp is None:
        raise _BadBid(f'Failed to find impression for ID: "{impid}"')
    mtype = bid.get("mtype", 0)
    if mtype == 0:
        kinds = [value for kind, value in _SINGLE_FORMAT_ORDER if imp.get(kind) is not None]
        if len(kinds) > 1:
            raise _BadBid(f'Bid must have non-zero MType for multi format impression with ID: "{impid}"')
        if not kinds:
            raise _BadBid(f'Could not determine MType from impression with ID: "{impid}"')
        mtype = kinds[0]
    bid_type = MTYPE_TO_TYPE.get(mtype)
    if bid_type is None:
        raise _BadBid(f'Unsupported MType {mtype} for impression with ID: "{impid}"')
    return bid_type


def _deal_id(bid: Mapping[str, Any]) -> str | None:
    """The line item id of a classic or deal buy (``ext.improvedigital``), else None."""
    if "ext" not in bid:
        return None
    ours = go_fields(expect_object(bid["ext"], ""), _BID_EXT_NAMES).get("Improvedigital")
    fields = go_fields(expect_object(ours, "improvedigital.BidExt.Improvedigital"), _ID_EXT_NAMES)
    line_item = go_value(fields.get("line_item_id"), GO_INT, "LineItemID")
    buying = go_value(fields.get("buying_type"), GO_STR, "BuyingType")
    if line_item and buying and _DEAL_BUYING.search(buying):
        return str(line_item)
    return None


class ImprovedigitalAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                ext = _rewarded_ext(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            out = imp if ext is None else {**imp, "ext": ext}
            uri = self.endpoint.replace(PUBLISHER_MACRO, _publisher_path(out.get("ext")))
            body = orjson.dumps({**request, "imp": [out]})
            calls.append(RequestData("POST", uri, body, _HEADERS, imp_ids=[imp.get("id", "")]))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        failure = status_error(response.status)
        if failure is not None:
            return None, [failure]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(str(exc))]
        if not answer.seatbids:
            return None, []
        if len(answer.seatbids) > 1:
            return None, [bad_server_response(f"Unexpected SeatBid! Must be only one but have: {len(answer.seatbids)}")]
        bids = answer.seatbids[0][1]
        if not bids:
            return None, []
        imps = {imp.get("id"): imp for imp in request.get("imp") or ()}
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in bids:
            try:
                bid_type = _bid_type(bid, imps)
                deal = _deal_id(bid)
            except (_BadBid, JsonShapeError) as exc:
                return None, [bad_server_response(str(exc))]
            result.bids.append(TypedBid(bid if deal is None else {**bid, "dealid": deal}, bid_type))
        return result, []


def build(config: AdapterConfig) -> ImprovedigitalAdapter:
    return ImprovedigitalAdapter(config)


__all__ = ["GoAnswer", "build", "go_answer", "go_bid", "go_fields", "go_list", "go_value"]
