"""Yieldlab adapter: one GET to Yieldlab's yieldprobe for the whole request, its answer a JSON array of
Yieldlab's own bids.

The call: the endpoint's path joined with every imp's ``adslotId`` (imps whose ext or params do not
decode are skipped) joined by commas; its query (Go's ``url.Values``, keys sorted) holds ``content``,
``pvid``, the cache buster ``ts``, the merged ``targeting`` as ``t``, the banner-only imps' sizes,
the buyeruid as ``ids``, device, app, GDPR (``regs.ext.gdpr`` 0 or 1, ``user.ext.consent``),
supply chain (``source.ext.schain``, Yieldlab's ``!``-separated form) and DSA
(``regs.ext.dsa``) facts. A ``user.ext`` or ``regs.ext`` that does not decode refuses the request.
Headers: ``Accept``, the site's page as ``Referer``, the device's ``User-Agent`` and IP, the
buyeruid as a ``Cookie``.

The answer: any status but 200 is a bad server response. A bid for an adslot of a video or banner
imp becomes an OpenRTB bid (price in cents, the creative id adslot + pid + ISO week, the ad a script
tag or a VAST wrapper around Yieldlab's ad URL, the bid's DSA facts as ``ext.dsa``); a bid for an
adslot no imp names is skipped; an adsize that is no ``WxH`` of numbers fails the answer. EUR.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, imp_ids
from hbserver.adapters.golike import (
    GO_HTML_ESCAPES,
    GoKind,
    go_bid,
    go_field,
    go_fields,
    go_float_v,
    go_list,
    go_read_int,
    go_value,
    go_wrap_int,
)
from hbserver.adapters.steps import ParamsSpec

PARAMS = ParamsSpec(
    "openrtb_ext.ExtImpYieldlab",
    {
        "adslotId": ("AdslotID", "string"),
        "supplyId": ("SupplyID", "string"),
        "targeting": ("Targeting", "map"),
        "extId": ("ExtId", "string"),
    },
)
AD_SOURCE_URL = "https://ad.yieldlab.net/d/{}/{}/{}?{}"
VAST = (
    '<VAST version="2.0"><Ad id="{}"><Wrapper><AdSystem>Yieldlab</AdSystem><VASTAdTagURI><![CDATA[ {} ]]>'
    "</VASTAdTagURI><Impression></Impression><Creatives></Creatives></Wrapper></Ad></VAST>"
)
_PATH_SAFE = "/$&+,:;=@"  # what Go's URL.EscapedPath leaves in a path besides letters, digits and -_.~


def go_values(values: Mapping[str, str]) -> str:
    """``url.Values.Encode``: keys sorted, keys and values query-escaped."""
    return urlencode(sorted(values.items()))


def _imp_params(imp: Mapping[str, Any]) -> dict[str, Any] | None:
    """The imp's params; None when its ext or params do not decode (the targeting's values strings)."""
    try:
        params = PARAMS.read(imp)
        for key, value in (params["targeting"] or {}).items():
            params["targeting"][key] = expect_string(value, "map[string]string")
    except JsonShapeError:
        return None
    return params


def request_params(imps: list[Any]) -> list[dict[str, Any]]:
    """Every imp's params that decode (``parseRequest``)."""
    return [params for params in map(_imp_params, imps) if params is not None]


def merged_params(params: list[dict[str, Any]]) -> tuple[str, dict[str, str]]:
    """The adslot ids joined by commas and the targeting merged (a later imp's value wins)."""
    targeting: dict[str, str] = {}
    for one in params:
        targeting.update(one["targeting"] or {})
    return ",".join(one["adslotId"] for one in params), targeting


def _adslot(imp: Mapping[str, Any]) -> str:
    params = _imp_params(imp)
    return params["adslotId"] if params else ""


def sizes(imps: list[Any]) -> str:
    """``adslot:WxH|WxH,adslot:...`` of the banner-only imps ("" with none)."""
    slots = []
    for imp in imps:
        if imp.get("banner") is None or any(imp.get(kind) is not None for kind in ("audio", "video", "native")):
            continue
        formats = (imp["banner"] or {}).get("format") or ()
        slots.append(_adslot(imp) + ":" + "|".join(f"{f.get('w') or 0}x{f.get('h') or 0}" for f in formats))
    return ",".join(slots)


def gdpr(request: Mapping[str, Any]) -> tuple[str, str]:
    """``(gdpr, consent)``: regs.ext.gdpr when 0 or 1 (else ""), user.ext.consent; JsonShapeError
    (the request's error) when user.ext does not decode."""
    user = request.get("user")
    consent = ""
    if isinstance(user, Mapping) and user.get("ext") is not None:
        try:
            ext = expect_object(user["ext"], "")
            consent = expect_string(go_field(ext, "consent"), "openrtb_ext.ExtUser.Consent")
        except JsonShapeError as exc:
            raise JsonShapeError(f"failed to parse ExtUser in Yieldlab GDPR check: {exc}") from None
    regs = request.get("regs")
    value = None
    if isinstance(regs, Mapping):
        try:
            ext = expect_object(regs.get("ext"), "") if regs.get("ext") is not None else {}
            expect_string(go_field(ext, "us_privacy"), "")
            expect_object(go_field(ext, "dsa"), "")
            value = go_read_int(go_field(ext, "gdpr"), "", 8) if go_field(ext, "gdpr") is not None else None
        except JsonShapeError:
            value = None
    return ("" if value not in (0, 1) else str(value)), consent


def _node_value(value: Any, *, raw: bool = False) -> str:
    """A supply chain node's value as Yieldlab writes it: a text query-escaped, a number as digits,
    a ``raw`` ext as its JSON text query-escaped; "" for none."""
    if value is None:
        return ""
    if raw:
        return quote_plus(orjson.dumps(value).decode().translate(GO_HTML_ESCAPES), safe="")
    return quote_plus(value, safe="") if isinstance(value, str) else str(value)


_NODE_STRINGS = ("asi", "sid", "rid", "name", "domain")


def supply_chain(request: Mapping[str, Any]) -> str:
    """``source.ext.schain`` as ``ver,complete!asi,sid,hp,rid,name,domain,ext!...``; "" when it has no
    nodes or does not decode."""
    source = request.get("source")
    if not isinstance(source, Mapping) or source.get("ext") is None:
        return ""
    try:
        schain = expect_object(go_field(expect_object(source["ext"], ""), "schain"), "")
        fields = go_fields(schain, "complete", "nodes", "ver", "ext")
        complete = go_read_int(fields.get("complete"), "", 8)
        ver = expect_string(fields.get("ver"), "")
        nodes = [
            go_fields(expect_object(node, ""), *_NODE_STRINGS, "hp", "ext") for node in go_list(fields.get("nodes"), "")
        ]
        for node in nodes:
            for name in _NODE_STRINGS:
                expect_string(node.get(name), "")
            if node.get("hp") is not None:
                go_read_int(node["hp"], "", 8)
    except JsonShapeError:
        return ""
    if not nodes:
        return ""
    text = f"{ver},{complete}"
    for node in nodes:
        values = [node.get(name) for name in ("asi", "sid", "hp", "rid", "name", "domain")]
        text += "!" + ",".join(_node_value(value) for value in values) + "," + _node_value(node.get("ext"), raw=True)
    return text


def _transparency(items: list[Any]) -> str:
    """The DSA transparency objects as ``domain~1_2~~domain~3``."""
    parts = []
    for item in items:
        domain, params = item.get("domain") or "", item.get("dsaparams") or []
        parts.append(domain + ("~" + "_".join(map(str, params)) if domain and params else ""))
    return "~~".join(parts)


def dsa_query(request: Mapping[str, Any]) -> dict[str, str]:
    """The query parameters of ``regs.ext.dsa``; JsonShapeError (the request's error) when
    ``regs.ext`` does not decode."""
    regs = request.get("regs")
    if not isinstance(regs, Mapping) or regs.get("ext") is None:
        return {}
    try:
        ext = expect_object(regs["ext"], "")
        dsa = go_field(ext, "dsa")
        if dsa is None:
            return {}
        fields = go_fields(expect_object(dsa, "yieldlab.openRTBExtRegsWithDSA.DSA"), *_DSA_INTS, "transparency")
        query = {
            name: str(go_read_int(fields[key], "")) for key, name in _DSA_INTS.items() if fields.get(key) is not None
        }
        items = [_dsa_transparency(item) for item in go_list(fields.get("transparency"), "")]
    except JsonShapeError as exc:
        raise JsonShapeError(f"failed to parse Regs.Ext object from Yieldlab response: {exc}") from None
    if items and _transparency(items):
        query["dsatransparency"] = _transparency(items)
    return query


_DSA_INTS = {"dsarequired": "dsarequired", "pubrender": "dsapubrender", "datatopub": "dsadatatopub"}


def _dsa_transparency(item: Any) -> dict[str, Any]:
    """One ``dsaTransparency``: its domain and params, as Go decodes them."""
    fields = go_fields(expect_object(item, ""), "domain", "dsaparams")
    return {
        "domain": expect_string(fields.get("domain"), ""),
        "dsaparams": go_value(fields.get("dsaparams"), GoKind.INTS, "") or [],
    }


def _device_query(device: Mapping[str, Any]) -> dict[str, str]:
    query = {"yl_rtb_ifa": device.get("ifa") or "", "yl_rtb_devicetype": str(device.get("devicetype") or 0)}
    if device.get("connectiontype") is not None:
        query["yl_rtb_connectiontype"] = str(device["connectiontype"])
    geo = device.get("geo")
    if isinstance(geo, Mapping):
        query.update(lat=go_float_v(geo.get("lat") or 0), lon=go_float_v(geo.get("lon") or 0))
    return query


def joined_path(endpoint: str, adslots: str) -> str:
    """The endpoint with ``adslots`` joined to its path (Go's ``path.Join``) and its query dropped."""
    parts = urlsplit(endpoint)
    elements = [part for part in (parts.path, adslots) if part]
    path = posixpath.normpath("/".join(elements)) if elements else ""
    path = "/" + path.lstrip("/") if path.startswith("//") else path
    return urlunsplit(parts._replace(path=quote(path, safe=_PATH_SAFE), query=""))


def _iso_week() -> str:
    return str(date.today().isocalendar()[1])


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    site, device, user = request.get("site"), request.get("device"), request.get("user")
    if isinstance(site, Mapping):
        headers["Referer"] = site.get("page") or ""
    if isinstance(device, Mapping):
        headers.update({"User-Agent": device.get("ua") or "", "X-Forwarded-For": device.get("ip") or ""})
    if isinstance(user, Mapping):
        headers["Cookie"] = "id=" + (user.get("buyeruid") or "")
    return headers


class YieldlabAdapter:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.cache_buster: Callable[[], str] = lambda: str(int(time.time()))
        self.week: Callable[[], str] = _iso_week

    def query(self, request: Mapping[str, Any], targeting: Mapping[str, str]) -> dict[str, str]:
        """The call's query parameters; JsonShapeError (the request's error) for an ext that does not decode."""
        query = {"content": "json", "pvid": "true", "ts": self.cache_buster(), "t": go_values(targeting)}
        slot_sizes = sizes(request.get("imp") or [])
        if slot_sizes:
            query["sizes"] = slot_sizes
        user, device, app = request.get("user"), request.get("device"), request.get("app")
        if isinstance(user, Mapping) and user.get("buyeruid"):
            query["ids"] = "ylid:" + user["buyeruid"]
        if isinstance(device, Mapping):
            query.update(_device_query(device))
        if isinstance(app, Mapping):
            query.update(pubappname=app.get("name") or "", pubbundlename=app.get("bundle") or "")
        regs_gdpr, consent = gdpr(request)
        query.update((name, value) for name, value in (("gdpr", regs_gdpr), ("gdpr_consent", consent)) if value)
        schain = supply_chain(request)
        if schain:
            query["schain"] = schain
        query.update(dsa_query(request))
        return query

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        if not imps:
            return [], [BidderError("invalid request, no Impressions given")]
        adslots, targeting = merged_params(request_params(imps))
        try:
            query = self.query(request, targeting)
        except JsonShapeError as exc:
            return [], [BidderError(str(exc))]
        pairs = dict(parse_qsl(urlsplit(self.endpoint).query, keep_blank_values=True))
        uri = joined_path(self.endpoint, adslots) + "?" + go_values({**pairs, **query})
        return [RequestData("GET", uri, None, _headers(request), imp_ids=imp_ids(imps))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status != 200:
            text = f"failed to resolve bids from yieldlab response: Unexpected response code {response.status}"
            return None, [bad_server_response(text)]
        try:
            bids = yieldlab_bids(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"failed to parse bids response from yieldlab: {exc}")]
        imps = list(request.get("imp") or ())
        params = request_params(imps)
        slot_imps = {_adslot(imp): imp for imp in imps if imp.get("video") is not None or imp.get("banner") is not None}
        result = BidderResponse(currency="EUR")
        for bid in bids:
            try:
                width, height = split_size(bid["adsize"])
            except ValueError as exc:
                return None, [BidderError(str(exc))]
            slot = str(bid["id"])
            ext = next((one for one in params if one["adslotId"] == slot), None)
            if ext is None:
                problem = (
                    f"failed to find yieldlab request for adslotID {slot}. This is most likely a programming issue"
                )
                return None, [BidderError(problem)]
            imp = slot_imps.get(slot)
            if imp is not None:
                result.bids.append(self.typed_bid(request, imp, ext, bid, (width, height)))
        return result, []

    def typed_bid(
        self,
        request: Mapping[str, Any],
        imp: Mapping[str, Any],
        ext: Mapping[str, Any],
        bid: dict[str, Any],
        size: tuple[int, int],
    ) -> TypedBid:
        """Yieldlab's ``bid`` for ``imp`` (a video or banner imp) as an OpenRTB bid."""
        out: dict[str, Any] = {
            "id": str(bid["id"]),
            "impid": imp.get("id", ""),
            "price": bid["price"] / 100,
            "crid": f"{ext['adslotId']}{bid['pid']}{self.week()}",
            "dealid": str(bid["pid"]),
            "w": size[0],
            "h": size[1],
            "adomain": [bid["advertiser"]],
        }
        if bid["dsa"] is not None:
            out["ext"] = {"dsa": bid["dsa"]}
        source = self.ad_source_url(request, ext, bid)
        if imp.get("video") is not None:
            out.update(nurl=source, adm=VAST.format(ext["adslotId"], source))
            return TypedBid(go_bid(out), "video")
        out["adm"] = f'<script src="{source}"></script>'
        return TypedBid(go_bid(out), "banner")

    def ad_source_url(self, request: Mapping[str, Any], ext: Mapping[str, Any], bid: Mapping[str, Any]) -> str:
        values = {"ts": self.cache_buster(), "id": ext["extId"], "pvid": bid["pvid"]}
        user = request.get("user")
        if isinstance(user, Mapping):
            values["ids"] = "ylid:" + (user.get("buyeruid") or "")
        try:
            regs_gdpr, consent = gdpr(request)
        except JsonShapeError:
            regs_gdpr = consent = ""
        if regs_gdpr and consent:
            values.update(gdpr=regs_gdpr, gdpr_consent=consent)
        return AD_SOURCE_URL.format(ext["adslotId"], ext["supplyId"], bid["adsize"], go_values(values))


def split_size(size: str) -> tuple[int, int]:
    """``WxH`` as two numbers; (0, 0) for any other number of parts; ValueError (PBS-Go's words) for
    a part that is no unsigned number."""
    parts = size.split("x")
    if len(parts) != 2:
        return 0, 0
    numbers = []
    for part in parts:
        if not part.isascii() or not part.isdigit() or int(part) >= 2**64:
            raise ValueError(f'failed to parse yieldlab adsize: strconv.ParseUint: parsing "{part}": invalid syntax')
        numbers.append(go_wrap_int(int(part)))
    return numbers[0], numbers[1]


_BID_UINTS = {"id": "ID", "price": "Price", "pid": "Pid", "did": "Did"}
_BID_STRINGS = {"advertiser": "Advertiser", "adsize": "Adsize", "pvid": "Pvid"}


def _uint(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return value
    raise JsonShapeError(f"cannot unmarshal {where}: ReadUint64: unexpected character")


def yieldlab_bids(body: bytes) -> list[dict[str, Any]]:
    """The answer as ``[]*bidResponse``: each bid's fields, its DSA facts as Go writes them again
    (None without); JsonShapeError when it does not decode."""
    first = body.lstrip(b" \t\n\r")[:1]
    if first not in (b"[", b"n"):
        raise JsonShapeError(f"decode slice: expect [ or n, but found {first.decode('latin-1') or chr(0)}")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(str(exc)) from None
    bids = []
    for item in go_list(data, "[]*yieldlab.bidResponse"):
        fields = go_fields(expect_object(item, "*yieldlab.bidResponse"), *_BID_UINTS, *_BID_STRINGS, "dsa")
        bid: dict[str, Any] = {
            name: _uint(fields.get(name), f"yieldlab.bidResponse.{go}") for name, go in _BID_UINTS.items()
        }
        for name, go_name in _BID_STRINGS.items():
            bid[name] = expect_string(fields.get(name), f"yieldlab.bidResponse.{go_name}")
        bid["dsa"] = None if fields.get("dsa") is None else _dsa_response(fields["dsa"])
        bids.append(bid)
    return bids


def _dsa_response(data: Any) -> dict[str, Any]:
    """A bid's ``dsaResponse`` as Go writes it again (omitempty fields left out)."""
    fields = go_fields(expect_object(data, "yieldlab.bidResponse.DSA"), "behalf", "paid", "adrender", "transparency")
    out: dict[str, Any] = {}
    for name in ("behalf", "paid"):
        if expect_string(fields.get(name), f"yieldlab.dsaResponse.{name.title()}"):
            out[name] = fields[name]
    if fields.get("adrender") is not None:
        out["adrender"] = go_read_int(fields["adrender"], "yieldlab.dsaResponse.Adrender")
    items = [_dsa_transparency(item) for item in go_list(fields.get("transparency"), "")]
    if items:
        out["transparency"] = [{key: value for key, value in item.items() if value} for item in items]
    return out


def build(config: AdapterConfig) -> YieldlabAdapter:
    return YieldlabAdapter(config.endpoint)
