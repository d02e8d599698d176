"""Gamma adapter: one GET per banner or video imp to ``hb.gammaplatform.com/adx/request/``, the params
(``id``, ``zid``, ``wid``), the imp id and the device and app facts in the query string.

Imps that are neither banner nor video are reported and skipped (all of them: the request fails).
The query is written as Gamma's adapter writes it: values as given, only the user agent escaped.
Every bid of an answer takes the type of the imp whose id is the *answer's* id (video, else
banner, as PBS-Go's adapter does); a video bid carries its ``vastXml`` as ``adm`` (and ``vastUrl``
as ``nurl``) and is dropped without one, any other bid is dropped without ``adm``. An answer with
no seatbid is no bid.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote_plus

import orjson

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
from hbserver.adapters.common import AnswerWording, JsonShapeError, canonical_header
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_field,
    go_members,
    go_value,
    imp_bidder_params,
)

_PARAMS = "openrtb_ext.ExtImpGamma"
_FIELDS = {"id": "PartnerID", "zid": "ZoneID", "wid": "WebID"}
_ANSWER_WORDING = AnswerWording(
    bad_request_is_input=False,
    not_an_object=NOT_AN_OBJECT,
    body_text="bad server response: &{{%!d(string={})}}. ",  # Go's %d of the error struct
)
_DEVICE_QUERY = (("ip", "device_ip"), ("model", "device_model"), ("os", "device_os"), ("ua", "device_ua"),
                 ("ifa", "device_ifa"))  # fmt: skip
_APP_QUERY = (("id", "app_id"), ("bundle", "app_bundle"), ("name", "app_name"))
_NO_MARKUP = "Missing Ad Markup. Run with request.debug = 1 for more info"


class _BadImp(ValueError):
    """An imp whose params are missing or empty; the message is the bad-input error's."""


def _params(imp: Mapping[str, Any]) -> dict[str, str]:
    try:
        bidder = imp_bidder_params(imp)
    except ImpExtError:
        raise _BadImp("ext.bidder not provided") from None
    except JsonShapeError:
        raise _BadImp("ext.bidder.publisher not provided") from None
    params = dict.fromkeys(_FIELDS, "")
    try:
        for name, value in go_members(bidder, *_FIELDS):
            params[name] = go_value(value, GoKind.STRING, f"{_PARAMS}.{_FIELDS[name]}") or ""
    except JsonShapeError:
        raise _BadImp("ext.bidder.publisher not provided") from None
    for name, label in (("id", "PartnerID"), ("zid", "ZoneID"), ("wid", "WebID")):
        if not params[name]:
            raise _BadImp(f"{label} is empty")
    return params


def _texts(owner: Any, fields: tuple[tuple[str, str], ...]) -> Iterator[tuple[str, str]]:
    """(query name, value) for each non-empty string field of ``owner`` (a device or app)."""
    if isinstance(owner, dict):
        for key, name in fields:
            value = owner.get(key)
            if isinstance(value, str) and value:
                yield name, value


def _uri(endpoint: str, request: Mapping[str, Any], imp_id: str, params: Mapping[str, str]) -> str:
    uri = f"{endpoint}?id={params['id']}&zid={params['zid']}&wid={params['wid']}&bidid={imp_id}&hb=pbmobile"
    for name, value in _texts(request.get("device"), _DEVICE_QUERY):
        uri += f"&{name}={quote_plus(value, safe='') if name == 'device_ua' else value}"
    for name, value in _texts(request.get("app"), _APP_QUERY):
        uri += f"&{name}={value}"
    return uri


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Accept": "*/*", "X-Openrtb-Version": "2.5"}
    device = request.get("device")
    if isinstance(device, dict):
        for key, name in (("ua", "User-Agent"), ("ip", "X-Forwarded-For"), ("language", "Accept-Language")):
            if isinstance(device.get(key), str) and device[key]:
                headers[name] = device[key]
        dnt = device.get("dnt")
        if isinstance(dnt, int) and not isinstance(dnt, bool):
            headers[canonical_header("DNT")] = str(dnt)
    headers.update({"Connection": "keep-alive", "Cache-Control": "no-cache", "Accept-Encoding": "gzip, deflate"})
    return headers


def _vast_fields(body: bytes) -> list[list[tuple[str, str]]]:
    """Per seatbid, per bid: (vastXml, vastUrl) of the answer (``go_answer`` has checked its shape);
    JsonShapeError when either is not a string."""
    out = []
    for seatbid in _members(orjson.loads(body), "seatbid"):
        bids = []
        for bid in _members(seatbid, "bid"):
            vast_xml, vast_url = (
                go_value(go_field(bid, name), GoKind.STRING, f"gamma.gammaBid.{go_name}") or "" if bid else ""
                for name, go_name in (("vastXml", "VastXML"), ("vastUrl", "VastURL"))
            )
            bids.append((vast_xml, vast_url))
        out.append(bids)
    return out


def _members(obj: Any, name: str) -> list[Any]:
    """The array field ``name`` of ``obj`` (none when ``obj`` is null)."""
    return (go_field(obj, name) or []) if isinstance(obj, dict) else []


class GammaAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impressions in the bid request")]
        errors: list[BidderError] = []
        valid = []
        for imp in imps:
            if imp.get("banner") is None and imp.get("video") is None:
                errors.append(bad_input(
                    f"Gamma only supports banner and video media types. Ignoring imp id={imp.get('id', '')}"
                ))  # fmt: skip
            else:
                valid.append(imp)
        if not valid:
            return [], [*errors, bad_input("No valid impression in the bid request")]
        calls = []
        headers = _headers(request)
        for imp in valid:
            imp_id = str(imp.get("id", ""))
            try:
                params = _params(imp)
            except _BadImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            calls.append(RequestData("GET", _uri(self.endpoint, request, imp_id, params), None, headers, [imp_id]))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        try:
            vast = _vast_fields(response.body)
        except JsonShapeError as exc:
            return None, [_ANSWER_WORDING.body_failure(str(exc))]
        if not answer.seatbids:
            return None, []
        bid_type = _type_of_answer(request, _answer_id(response.body))
        result = BidderResponse()
        errors: list[BidderError] = []
        for (_, bids), vast_of in zip(answer.seatbids, vast, strict=True):
            for bid, (vast_xml, vast_url) in zip(bids, vast_of, strict=True):
                if bid_type == "video":
                    bid = {**bid, "adm": vast_xml, **({"nurl": vast_url} if vast_url else {})}
                if not bid.get("adm"):
                    errors.append(bad_server_response(_NO_MARKUP))
                    continue
                result.bids.append(TypedBid(bid, bid_type))
        return result, errors


def _answer_id(body: bytes) -> str:
    data = orjson.loads(body)
    value = go_field(data, "id", skip_null=True) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _type_of_answer(request: Mapping[str, Any], answer_id: str) -> str:
    """Video when the first imp whose id is ``answer_id`` asks for video, else banner."""
    for imp in request.get("imp") or ():
        if imp.get("id") == answer_id:
            return "video" if imp.get("video") is not None else "banner"
    return "banner"


def build(config: AdapterConfig) -> GammaAdapter:
    return GammaAdapter(config)
