"""Adnuntius adapter: Adnuntius's own ad-server request (not OpenRTB), one call per ``network`` param.

Each banner or native imp becomes an ad unit ``{auId, targetId: <auId>-<imp id>:<banner|native>}``
with the banner's sizes (its formats, else its ``w``x``h``), a native's request as ``nativeRequest.
ortb``, ``maxDeals`` and the targeting params; a video imp fails the request. The body adds the
page (``context``, ``unknown`` without one), ``site.ext.data`` as ``kv`` and the user id as
``metaData.usi``. The query carries ``format=prebidServer``, ``tzo`` (the server's UTC offset in
minutes, sign reversed), ``gdpr`` and ``consentString`` (a request with a GDPR signal goes to the
host's ``extra_info`` URL instead of the endpoint), ``noCookies`` (from the params or
``device.ext``) and the user's eids as JSON.

The answer's ad units are matched to imps by ``<auId>-<imp id>``; of one imp's units (banner and
native) the higher bid wins. Its first ad is a bid (native when the unit has ``nativeJson.ortb``,
that JSON then being the markup), each deal another (banner); prices come in thousands (the
``bidType`` param picks the net or gross amount) and the currency is the ad's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
from hbserver.adapters.common import JsonShapeError, expect_object, imp_ids, json_call, json_headers
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_field,
    go_json_object,
    go_json_text,
    go_list,
    go_members,
    go_value,
    imp_bidder_params,
    raw_message_text,
)

DEFAULT_NETWORK = "default"
DEFAULT_SITE = "unknown"
_INT64 = re.compile(r"[+-]?[0-9]+\Z")

# Go structs as json-iterator decodes them: json name -> (Go field, kind); a kind is a GoKind, a
# struct name (an object), "[]" + a struct name (a list of objects) or "map" (an object of strings)
_S, _I, _F, _B, _L, _R = GoKind.STRING, GoKind.INT, GoKind.FLOAT, GoKind.BOOL, GoKind.STRINGS, GoKind.RAW
STRUCTS: Mapping[str, Mapping[str, tuple[str, Any]]] = {
    "openrtb_ext.ImpExtAdnunitus": {
        "auId": ("Auid", _S), "noCookies": ("NoCookies", _B), "maxDeals": ("MaxDeals", _I),
        "network": ("Network", _S), "bidType": ("BidType", _S), "targeting": ("Targeting", "adnuntius.targeting"),
    },
    "adnuntius.targeting": {
        "c": ("Category", _L), "segments": ("Segments", _L), "keywords": ("Keywords", _L),
        "kv": ("KeyValues", "lists"), "auml": ("AdUnitMatchingLabel", _L),
    },
    "openrtb_ext.ExtUser": {
        "consent": ("Consent", _S), "prebid": ("Prebid", "openrtb_ext.ExtUserPrebid"),
        "eids": ("Eids", "[]openrtb2.EID"),
    },
    "openrtb_ext.ExtUserPrebid": {"buyeruids": ("BuyerUIDs", "map")},
    "openrtb2.EID": {
        "inserter": ("Inserter", _S), "matcher": ("Matcher", _S), "mm": ("MM", _I), "source": ("Source", _S),
        "uids": ("UIDs", "[]openrtb2.UID"), "ext": ("Ext", _R),
    },
    "openrtb2.UID": {"id": ("ID", _S), "atype": ("AType", _I), "ext": ("Ext", _R)},
    "openrtb_ext.ExtRegs": {
        "dsa": ("DSA", "openrtb_ext.ExtRegsDSA"), "gdpr": ("GDPR", _I), "us_privacy": ("USPrivacy", _S),
    },
    "openrtb_ext.ExtRegsDSA": {
        "dsarequired": ("Required", _I), "pubrender": ("PubRender", _I), "datatopub": ("DataToPub", _I),
    },
    "adnuntius.extDeviceAdnuntius": {"noCookies": ("NoCookies", _B)},
    "adnuntius.AdnResponse": {"AdUnits": ("AdUnits", "[]adnuntius.AdUnit")},
    "adnuntius.AdUnit": {
        "AuId": ("AuId", _S), "TargetId": ("TargetId", _S), "Html": ("Html", _S),
        "MatchedAdCount": ("MatchedAdCount", _I),
        "ResponseId": ("ResponseId", _S), "nativeJson": ("NativeJson", _R), "Ads": ("Ads", "[]adnuntius.Ad"),
        "deals": ("Deals", "[]adnuntius.Ad"),
    },
    "adnuntius.Ad": {
        "Bid": ("Bid", "adnuntius.amount"), "NetBid": ("NetBid", "adnuntius.amount"),
        "GrossBid": ("GrossBid", "adnuntius.amount"), "dealId": ("DealID", _S), "AdId": ("AdId", _S),
        "CreativeWidth": ("CreativeWidth", _S), "CreativeHeight": ("CreativeHeight", _S),
        "CreativeId": ("CreativeId", _S), "LineItemId": ("LineItemId", _S), "Html": ("Html", _S),
        "DestinationUrls": ("DestinationUrls", "map"), "AdvertiserDomains": ("AdvertiserDomains", _L),
        "advertiser": ("Advertiser", "adnuntius.adnAdvertiser"),
    },
    "adnuntius.amount": {"Amount": ("Amount", _F), "Currency": ("Currency", _S)},
    "adnuntius.adnAdvertiser": {"legalName": ("LegalName", _S), "name": ("Name", _S)},
}  # fmt: skip
_ZERO = {_S: "", _I: 0, _F: 0.0, _B: False}


def decode_struct(value: Any, struct: str) -> dict[str, Any]:
    """``value`` decoded as Go struct ``struct`` (see STRUCTS): {json name: value} with Go's zero
    values for fields absent or null; JsonShapeError in json-iterator's words for a wrong type."""
    fields = STRUCTS[struct]
    out: dict[str, Any] = {name: _zero(kind) for name, (_, kind) in fields.items()}
    for name, item in go_members(expect_object(value, ""), *fields):
        go_name, kind = fields[name]
        out[name] = _decode_field(item, kind, f"{struct}.{go_name}")
    return out


def _zero(kind: Any) -> Any:
    if isinstance(kind, GoKind):
        return _ZERO.get(kind)
    return decode_struct({}, kind) if kind in STRUCTS else None


def _decode_field(value: Any, kind: Any, where: str) -> Any:
    if value is None:
        return _zero(kind)
    if isinstance(kind, GoKind):
        return go_value(value, kind, where)
    if kind in STRUCTS:
        return decode_struct(value, kind)
    if kind.startswith("[]"):
        return [decode_struct(item, kind[2:]) for item in go_list(value, where)]
    members = expect_object(value, where)
    item_kind = GoKind.STRING if kind == "map" else GoKind.STRINGS
    for item in members.values():
        go_value(item, item_kind, where)
    return members


class _Failed(Exception):
    """A step failed; ``text`` is PBS-Go's wording of it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def read_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params; _Failed ("Error unmarshalling ...") when ext or params do not decode."""
    try:
        bidder = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Failed(f"Error unmarshalling ExtImpBidder: {exc}") from None
    except JsonShapeError as exc:
        raise _Failed(f"Error unmarshalling ExtImpValues: {exc}") from None
    try:
        return decode_struct(bidder, "openrtb_ext.ImpExtAdnunitus")
    except JsonShapeError as exc:
        raise _Failed(f"Error unmarshalling ExtImpValues: {exc}") from None


def ad_unit(imp: Mapping[str, Any], params: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The ad unit of one imp's banner or native (Go's omitempty fields left out when empty)."""
    unit: dict[str, Any] = {
        "auId": params["auId"],
        "targetId": f"{params['auId']}-{imp.get('id', '')}:{kind}",
        "nativeRequest": {},
    }
    sizes = _sizes(imp.get("banner")) if kind == "banner" else None
    if sizes:
        unit["dimensions"] = sizes
    if params["maxDeals"] > 0:
        unit["maxDeals"] = params["maxDeals"]
    for name, value in params["targeting"].items():
        if value:
            unit[name] = value
    return unit


def _sizes(banner: Any) -> list[list[int]] | None:
    """The banner's formats as [w, h] pairs, else its own [w, h] when it has both."""
    if not isinstance(banner, dict):
        return None
    formats = banner.get("format")
    if isinstance(formats, list) and formats:
        return [[_int(f.get("w")), _int(f.get("h"))] if isinstance(f, dict) else [0, 0] for f in formats]
    if banner.get("w") is not None and banner.get("h") is not None:
        return [[_int(banner["w"]), _int(banner["h"])]]
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def native_ortb(imp: Mapping[str, Any]) -> Any:
    """The native request as JSON (None for ``null``); _Failed when it is no JSON."""
    native = imp.get("native")
    text = native.get("request") if isinstance(native, dict) else None
    text = text if isinstance(text, str) else ""
    if not text.strip(" \t\n\r"):
        raise _Failed("Error unmarshalling Native: do not know how to skip: 0")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _Failed(f"Error unmarshalling Native: {exc}") from None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _go_object(members: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f'"{name}":{text}' for name, text in members) + "}"


def eids_json(eids: list[dict[str, Any]]) -> str:
    """The decoded eids as Go writes ``[]openrtb2.EID`` (field order, omitempty, raw ``ext``)."""
    items = []
    for eid in eids:
        members = [(name, go_json_text(eid[name])) for name in ("inserter", "matcher") if eid[name]]
        members += [("mm", str(eid["mm"]))] if eid["mm"] else []
        members += [("source", go_json_text(eid["source"]))] if eid["source"] else []
        uids = [_uid_json(uid) for uid in eid["uids"] or ()]
        members += [("uids", "[" + ",".join(uids) + "]")] if uids else []
        members += [("ext", raw_message_text(eid["ext"]))] if eid["ext"] is not None else []
        items.append(_go_object(members))
    return "[" + ",".join(items) + "]"


def _uid_json(uid: dict[str, Any]) -> str:
    members = [("id", go_json_text(uid["id"]))] if uid["id"] else []
    members += [("atype", str(uid["atype"]))] if uid["atype"] else []
    members += [("ext", raw_message_text(uid["ext"]))] if uid["ext"] is not None else []
    return _go_object(members)


def with_query(endpoint: str, values: Mapping[str, str]) -> str:
    """``endpoint`` with ``values`` set in its query (replacing any given), encoded as Go's
    ``url.Values.Encode``: keys sorted, form-escaped."""
    parts = urlsplit(endpoint)
    query: dict[str, list[str]] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        query.setdefault(key, []).append(value)
    query.update((key, [value]) for key, value in values.items())
    pairs = [(key, value) for key in sorted(query) for value in query[key]]
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def gdpr_and_consent(request: Mapping[str, Any]) -> tuple[str, str]:
    """``regs.ext.gdpr`` (when 0 or 1) and ``user.ext.consent``; _Failed in PBS-Go's words."""
    gdpr = ""
    regs = request.get("regs")
    if isinstance(regs, dict) and regs.get("ext") is not None:
        try:
            value = decode_struct(regs["ext"], "openrtb_ext.ExtRegs")["gdpr"]
        except JsonShapeError as exc:
            raise _Failed(f"failed to parse ExtRegs in Adnuntius GDPR check: {exc}") from None
        gdpr = str(value) if value in (0, 1) and go_field(regs["ext"], "gdpr") is not None else ""
    user = request.get("user")
    consent = ""
    if isinstance(user, dict) and user.get("ext") is not None:
        try:
            consent = decode_struct(user["ext"], "openrtb_ext.ExtUser")["consent"]
        except JsonShapeError as exc:
            raise _Failed(f"failed to parse ExtUser in Adnuntius GDPR check: {exc}") from None
    return gdpr, consent


class AdnuntiusAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.extra_info = str(config.extra.get("extra_info") or "")
        # the clock whose UTC offset gives ``tzo`` (the Go test fixes it at a UTC time)
        self.now: Callable[[], datetime] = lambda: datetime.now().astimezone()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        try:
            networks, no_cookies = _ad_units_by_network(request)
        except _Failed as failure:
            return [], [bad_input(failure.text)]
        user = _object(request.get("user"))
        try:
            ext_user = decode_struct(user["ext"], "openrtb_ext.ExtUser") if user.get("ext") is not None else {}
        except JsonShapeError as exc:
            return [], [BidderError(f"failed to parse Ext User: {exc}")]
        try:
            uri = self.endpoint_url(request, no_cookies, ext_user.get("eids") or [])
        except _Failed as failure:
            return [], [bad_input(f"failed to parse URL: [{failure.text}]")]
        site = _object(request.get("site"))
        try:
            site_ext = _object(expect_object(site["ext"], "")) if site.get("ext") is not None else {}
        except JsonShapeError as exc:
            return [], [BidderError(f"failed to parse site Ext: [failed to parse site ext in Adnuntius: {exc}]")]
        body: dict[str, Any] = {"context": _text(site.get("page")) or DEFAULT_SITE}
        body["metaData"] = {"usi": user["id"]} if _text(user.get("id")) else {}
        key_values = go_field(site_ext, "data")
        if key_values is not None:
            body["kv"] = key_values
        headers = _headers(request)
        ids = imp_ids(imp for imp in request.get("imp") or () if isinstance(imp, dict))
        return [json_call(uri, {**body, "adUnits": units}, ids, headers) for units in networks.values()], []

    def endpoint_url(self, request: Mapping[str, Any], no_cookies: bool, eids: list[dict[str, Any]]) -> str:
        """The call's URL; _Failed ("failed to parse ...") when the GDPR signals or device ext do not decode."""
        try:
            gdpr, consent = gdpr_and_consent(request)
        except _Failed as failure:
            raise _Failed(f"failed to parse GDPR information: {failure.text}") from None
        device = _object(request.get("device"))
        if not no_cookies and device.get("ext") is not None:
            try:
                no_cookies = decode_struct(device["ext"], "adnuntius.extDeviceAdnuntius")["noCookies"]
            except JsonShapeError as exc:
                raise _Failed(f"failed to parse device ext: {exc}") from None
        offset = self.now().utcoffset()
        query: dict[str, str] = {"gdpr": gdpr, "consentString": consent, "noCookies": "true" if no_cookies else ""}
        if any(eid["uids"] for eid in eids):
            query["eids"] = eids_json(eids)
        query = {key: value for key, value in query.items() if value}
        query.update(tzo=str(int(-(offset.total_seconds() if offset else 0) / 60)), format="prebidServer")
        return with_query(self.extra_info if gdpr else self.endpoint, query)

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 400:
            return None, [bad_input("Status code: 400, Request malformed")]
        if response.status != 200:
            return None, [
                bad_server_response(f"Status code: {response.status}, Something went wrong with your request")
            ]
        try:
            answer = decode_struct(go_json_object(response.body), "adnuntius.AdnResponse")
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        try:
            return _bid_response(answer["AdUnits"] or [], request), []
        except _Refused as refusal:
            return None, [refusal.error]


def _ad_units_by_network(request: Mapping[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], bool]:
    """The ad units of every imp, by network, and whether any imp asks for no cookies; _Failed
    (bad input) for params that do not decode, a video imp or a native request that is no JSON."""
    networks: dict[str, list[dict[str, Any]]] = {}
    no_cookies = False
    for imp in request.get("imp") or ():
        imp = imp if isinstance(imp, dict) else {}
        params = read_params(imp)
        no_cookies = no_cookies or params["noCookies"]
        units = networks.setdefault(params["network"] or DEFAULT_NETWORK, [])
        if imp.get("video") is not None:
            raise _Failed(f"ignoring imp id={imp.get('id', '')}, Adnuntius supports only native and banner")
        if imp.get("banner") is not None:
            units.append(ad_unit(imp, params, "banner"))
        if imp.get("native") is not None:
            unit = {**ad_unit(imp, params, "native"), "adType": "NATIVE"}
            ortb = native_ortb(imp)
            if ortb is not None:
                unit["nativeRequest"] = {"ortb": ortb}
            units.append(unit)
    return {network: units for network, units in networks.items() if units}, no_cookies


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = json_headers()
    device = _object(request.get("device"))
    if _text(device.get("ip")):
        headers["X-Forwarded-For"] = device["ip"]
    if _text(device.get("ua")):
        headers["User-Agent"] = device["ua"]
    return headers


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _winning_units(units: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per target (``<auId>-<imp id>``), the unit with ads whose first ad bids highest (the first
    of equal bids)."""
    best: dict[str, dict[str, Any]] = {}
    for unit in units:
        if unit["MatchedAdCount"] <= 0:
            continue
        target = unit["TargetId"].split(":")[0]
        if target not in best or _first_amount(unit) > _first_amount(best[target]):
            best[target] = unit
    return best


def _first_amount(unit: Mapping[str, Any]) -> float:
    ads = unit["Ads"] or []
    return float(ads[0]["Bid"]["Amount"]) if ads else 0.0


def _bid_response(units: list[dict[str, Any]], request: Mapping[str, Any]) -> BidderResponse:
    """Each imp's winning unit as its ad's bid and its deals' bids; raises _Refused."""
    best = _winning_units(units)
    result = BidderResponse()
    currency = ""
    for imp in request.get("imp") or ():
        imp = imp if isinstance(imp, dict) else {}
        unit = best.get(f"{_au_id(imp)}-{imp.get('id', '')}")
        if unit is None or not unit["Ads"]:
            continue
        ad = unit["Ads"][0]
        currency = ad["Bid"]["Currency"]
        html, kind = unit["Html"], "banner"
        if unit["nativeJson"] is not None:
            ortb = _object(unit["nativeJson"]).get("ortb")
            if ortb is None:
                raise _Refused(bad_server_response(f"Failed to parse native json where imp id={imp.get('id', '')}"))
            html, kind = (ortb if isinstance(ortb, str) else orjson.dumps(ortb).decode()), "native"
        result.bids.append(TypedBid(_bid(ad, imp, html, kind, request), kind))
        for deal in unit["deals"] or ():
            result.bids.append(TypedBid(_bid(deal, imp, deal["Html"], "banner", request), "banner"))
    result.currency = currency or "USD"
    return result


def _au_id(imp: Mapping[str, Any]) -> str:
    """``ext.bidder.auId`` as text (jsonparser: a string's content, another value as written)."""
    bidder = _object(_object(imp.get("ext")).get("bidder"))
    if "auId" not in bidder:
        raise _Refused(bad_input("Error at Bidder auId: Key path not found"))
    value = bidder["auId"]
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _size(text: str, name: str) -> int:
    if not _INT64.match(text) or not -(2**63) <= int(text) < 2**63:
        raise _Refused(bad_server_response(f"Value of {name}: {text} is not a string"))
    return int(text)


def _bid(
    ad: Mapping[str, Any], imp: Mapping[str, Any], html: str, kind: str, request: Mapping[str, Any]
) -> dict[str, Any]:
    """One bid as PBS-Go writes it (zero fields left out); raises _Refused."""
    width, height = _size(ad["CreativeWidth"], "width"), _size(ad["CreativeHeight"], "height")
    try:
        params = read_params(imp)
    except _Failed as failure:
        raise _Refused(bad_server_response(failure.text)) from None
    price = ad["Bid"]["Amount"]
    if params["bidType"].lower() == "net":
        price = ad["NetBid"]["Amount"]
    elif params["bidType"].lower() == "gross":
        price = ad["GrossBid"]["Amount"]
    bid = {
        "id": ad["AdId"], "impid": imp.get("id", ""), "price": price * 1000, "w": width, "h": height,
        "adid": ad["AdId"], "dealid": ad["dealId"], "cid": ad["LineItemId"],
        "crid": ad["CreativeId"], "adm": html, "mtype": 4 if kind == "native" else 1,
        "adomain": ad["AdvertiserDomains"], "ext": _dsa_ext(ad, request),
    }  # fmt: skip
    return {key: value for key, value in bid.items() if value or key in ("id", "impid", "price")}


def _dsa_ext(ad: Mapping[str, Any], request: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"dsa": {adrender: 0, paid, behalf}}`` for an advertiser named when the request asks for DSA."""
    regs = _object(request.get("regs"))
    regs_ext = None
    if regs.get("ext") is not None:
        try:
            regs_ext = decode_struct(regs["ext"], "openrtb_ext.ExtRegs")
        except JsonShapeError as exc:
            raise _Refused(
                bad_server_response(f"Error extracting Ext: Failed to parse Ext information in Adnuntius: {exc}")
            ) from None
        regs_ext = regs_ext if go_field(regs["ext"], "dsa") is not None else None
    advertiser = ad["advertiser"]
    if not advertiser["name"] or regs_ext is None:
        return None
    legal_name = advertiser["legalName"] or advertiser["name"]
    return {"dsa": {"adrender": 0, "behalf": legal_name, "paid": legal_name}}


def build(config: AdapterConfig) -> AdnuntiusAdapter:
    return AdnuntiusAdapter(config)
