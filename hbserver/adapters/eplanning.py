"""e-planning adapter: one GET to ``<endpoint>/<ci>/1/<target>/ROS`` carrying the auction in its query.

Every imp whose params decode and name a client (``ci``) becomes a space ``<name>:<size>`` of the
``e`` parameter: the name is the cleaned ``adunit_code`` (the size when none), the size the video's,
the banner's or the banner format that ranks highest for the device (mobile or desktop), ``1x1``
(``640x480`` for video) when there is none. A request with video is a video auction: instream when
one video imp is placement 1 (``vctx=1``), else outstream (``vctx=2``); imps of the other kind are
dropped, and video spaces are named ``video_<size>_<n>`` and end with ``;1``. The target is the
app's bundle, else the site's domain, else the host of its page (``FILE`` without either). The query
also carries the page, the buyer uid, the IP, the app's name/id/IFA and a short supply chain (up to
two nodes); the client id of the first valid imp chooses the path. A cache buster ``rnd`` is added
and no body is sent, except when ``testing`` is set (PBS-Go's test: no ``rnd``, body ``{}``).

The answer is e-planning's own format (spaces of ads with string prices); an ad whose price does not
parse is skipped. Ads are matched to imps by space name and typed video in a video auction, else
banner.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    OwnAnswerAdapter,
    expect_object,
    expect_string,
    imp_ids,
    with_header,
)
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_int,
    go_json_object,
    go_json_text,
    go_list,
    go_members,
    go_parse_float,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.gourl import go_hostname, go_url_scheme_host

NULL_SIZE = "1x1"
VAST_DEFAULT_SIZE = "640x480"
DEFAULT_PAGE = "FILE"
INSTREAM, OUTSTREAM = 1, 2  # the auction's video context (vctx); 0: a banner auction
_MOBILE_DEVICE_TYPES = (1, 4, 5)  # adcom1: mobile/tablet, phone, tablet
# banner sizes in ascending priority (the last one present in the formats wins)
_MOBILE_SIZES = ("1x1", "300x50", "320x50", "300x250")
_DESKTOP_SIZES = ("1x1", "970x90", "970x250", "160x600", "300x600", "728x90", "300x250")
_CLEAN_NAME_STEPS = (
    (re.compile(r"_|\.|-|/"), ""),
    (re.compile(r"\)\(|\(|\)|:"), "_"),
    (re.compile(r"^_+|_+$"), ""),
)
_PATH_SAFE = "/$&+,:;=@"  # what Go's URL.String leaves unescaped in a path (besides letters, digits, -_.~)


class _Refused(ValueError):
    """An imp or the whole request cannot be sent (the message is the bidder error's)."""


@dataclass(frozen=True, slots=True)
class _Space:
    """A valid imp as e-planning sees it: its client id, its space name and its ``e`` entry."""

    imp_id: str
    client_id: str
    name: str
    entry: str


def clean_name(name: str) -> str:
    """An ad unit code as e-planning names a space: ``_ . - /`` removed, parentheses and colons
    turned into ``_``, underscores at either end trimmed."""
    for expression, replacement in _CLEAN_NAME_STEPS:
        name = expression.sub(replacement, name)
    return name


def _auction_kind(imps: list[dict[str, Any]]) -> int:
    """INSTREAM when a video imp has placement 1, OUTSTREAM when there is other video, else 0."""
    kind = 0
    for imp in imps:
        video = imp.get("video")
        if video is not None:
            if isinstance(video, dict) and video.get("placement") == INSTREAM:
                kind = INSTREAM
            elif kind == 0:
                kind = OUTSTREAM
    return kind


def _is_mobile(request: Mapping[str, Any]) -> bool:
    device = request.get("device")
    return isinstance(device, dict) and device.get("devicetype") in _MOBILE_DEVICE_TYPES


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _banner_size(banner: Mapping[str, Any], mobile: bool) -> tuple[int, int]:
    if banner.get("w") is not None and banner.get("h") is not None:
        return _int(banner["w"]), _int(banner["h"])
    formats = [f for f in banner.get("format") or () if isinstance(f, dict)]
    if not formats:
        return 0, 0
    present = {f"{_int(f.get('w'))}x{_int(f.get('h'))}": f for f in formats if _int(f.get("w")) and _int(f.get("h"))}
    chosen = next(
        (present[size] for size in reversed(_MOBILE_SIZES if mobile else _DESKTOP_SIZES) if size in present), formats[0]
    )
    return _int(chosen.get("w")), _int(chosen.get("h"))


def _size(imp: Mapping[str, Any], mobile: bool) -> str:
    """The imp's size string: the video's, the banner's or its best format, else the default."""
    video, banner = imp.get("video"), imp.get("banner")
    width = height = 0
    if isinstance(video, dict) and _int(video.get("w")) > 0 and _int(video.get("h")) > 0:
        width, height = video["w"], video["h"]
    elif isinstance(banner, dict):
        width, height = _banner_size(banner, mobile)
    if width == 0 and height == 0:
        return VAST_DEFAULT_SIZE if video is not None else NULL_SIZE
    return f"{width}x{height}"


def _params(imp: Mapping[str, Any], kind: int) -> tuple[str, str]:
    """(ci, adunit_code) of the imp; _Refused in PBS-Go's words when its ext or params do not decode,
    it does not fit the auction's video context or it names no client."""
    imp_id = imp.get("id", "")
    problem: str | None = None
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(f"Ignoring imp id={imp_id}, error while decoding extImpBidder, err: {exc}") from None
    except JsonShapeError as exc:  # the params are decoded after the video context is checked
        params, problem = {}, str(exc)
    video = imp.get("video")
    placement = video.get("placement") if isinstance(video, dict) else None
    if kind == INSTREAM and (video is None or placement != INSTREAM):
        raise _Refused(f"Ignoring imp id={imp_id}, auction instream and imp no instream")
    if kind == OUTSTREAM and (video is None or placement == INSTREAM):
        raise _Refused(f"Ignoring imp id={imp_id}, auction outstream and imp no outstream")
    fields = {"ci": "", "adunit_code": ""}
    try:
        if problem is not None:
            raise JsonShapeError(problem)
        for name, value in go_members(params, "ci", "adunit_code", "SizeString"):
            if value is not None:
                go_name = {"ci": "ClientID", "adunit_code": "AdUnitCode"}.get(name, name)
                fields[name] = expect_string(value, f"openrtb_ext.ExtImpEPlanning.{go_name}")
    except JsonShapeError as exc:
        raise _Refused(f"Ignoring imp id={imp_id}, error while decoding impExt, err: {exc}") from None
    if not fields["ci"]:
        raise _Refused(f"Ignoring imp id={imp_id}, no ClientID present")
    return fields["ci"], fields["adunit_code"]


def _imps(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [imp for imp in request.get("imp") or () if isinstance(imp, dict)]


def _spaces(request: Mapping[str, Any], errors: list[BidderError] | None = None) -> list[_Space]:
    """A space for each valid imp; the refusals go to ``errors`` when given."""
    imps = _imps(request)
    kind, mobile = _auction_kind(imps), _is_mobile(request)
    spaces: list[_Space] = []
    videos = 0
    for imp in imps:
        try:
            client_id, ad_unit_code = _params(imp, kind)
        except _Refused as exc:
            if errors is not None:
                errors.append(bad_input(str(exc)))
            continue
        size = _size(imp, mobile)
        if imp.get("video") is None:
            name = clean_name(ad_unit_code or size)
            entry = f"{name}:{size}"
        else:
            name = f"video_{size}_{videos}"
            entry = f"{name}:{size};1"
            videos += 1
        spaces.append(_Space(imp.get("id", ""), client_id, name, entry))
    return spaces


# --- the request -----------------------------------------------------------------------------------


def _url_error(raw: str) -> str:
    """Go's ``url.Parse`` error for a page it refuses (its two usual causes, else a general text)."""
    quoted = orjson.dumps(raw).decode()
    if any(char < " " or char == "\x7f" for char in raw):
        return f"parse {quoted}: net/url: invalid control character in URL"
    for match in re.finditer("%", raw):
        escape = raw[match.start() : match.start() + 3]
        if not re.fullmatch("%[0-9a-fA-F]{2}", escape):
            return f"parse {quoted}: invalid URL escape {orjson.dumps(escape).decode()}"
    return f"parse {quoted}: invalid URL"


def _target(request: Mapping[str, Any]) -> tuple[str, str]:
    """(page URL, request target): the page (``FILE`` without one) and the app's bundle, else the
    site's domain, else its page's host; _Refused in Go's words when that page does not parse."""
    site, app = request.get("site"), request.get("app")
    page = site.get("page") if isinstance(site, dict) else None
    page_url = page if isinstance(page, str) and page else DEFAULT_PAGE
    domain = DEFAULT_PAGE
    if isinstance(site, dict):
        if isinstance(site.get("domain"), str) and site["domain"]:
            domain = site["domain"]
        elif isinstance(page, str) and page:
            parsed = go_url_scheme_host(page_url)
            if parsed is None:
                raise _Refused(_url_error(page_url))
            domain = go_hostname(parsed[1])
    bundle = app.get("bundle") if isinstance(app, dict) else None
    return page_url, bundle if isinstance(bundle, str) and bundle else domain


def _node_value(value: Any) -> str:
    """A supply-chain node value as e-planning takes it: text query-escaped with ``%20`` for spaces."""
    return quote(value, safe="") if value else ""


def _schain_node(node: Any) -> str:
    """``!asi,sid,hp,rid,name,domain,ext`` of one node (openrtb2.SupplyChainNode)."""
    texts = dict.fromkeys(("asi", "sid", "hp", "rid", "name", "domain", "ext"), "")
    for name, value in go_members(expect_object(node, "[]openrtb2.SupplyChainNode"), *texts):
        if value is None:
            if name in ("hp", "ext"):  # Go pointers: null is nil; a null string leaves the value read
                texts[name] = ""
        elif name == "hp":
            texts[name] = str(go_int(value, "openrtb2.SupplyChainNode.HP"))
        elif name == "ext":
            texts[name] = _node_value(go_json_text(value))
        else:
            texts[name] = _node_value(expect_string(value, f"openrtb2.SupplyChainNode.{name.upper()}"))
    return "!" + ",".join(texts.values())


def supply_chain(source: Any) -> str:
    """The ``sch`` parameter from ``source.ext.schain`` ("" without nodes or with more than two);
    JsonShapeError (json-iterator's words) when it does not decode."""
    schain: Mapping[str, Any] = {}
    for _, value in go_members(expect_object(source, ""), "schain"):
        schain = expect_object(value, "openrtb_ext.ExtRequestPrebidSChain.SChain")
    members = dict(go_members(schain, "complete", "nodes", "ver"))
    complete = go_int(members.get("complete"), "openrtb2.SupplyChain.Complete")
    version = go_value(members.get("ver"), GoKind.STRING, "openrtb2.SupplyChain.Ver") or ""
    nodes = go_list(members.get("nodes"), "openrtb2.SupplyChain.Nodes")
    texts = [_schain_node(node) for node in nodes]
    if not texts or len(texts) > 2:
        return ""
    return f"{version},{complete}" + "".join(texts)


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    device = request.get("device")
    if isinstance(device, dict):
        for name, key in (("User-Agent", "ua"), ("X-Forwarded-For", "ip"), ("Accept-Language", "language")):
            if isinstance(device.get(key), str):
                with_header(headers, name, device[key])
        with_header(headers, "DNT", device.get("dnt"))
    return headers


def _text(obj: Any, key: str) -> str:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else ""


def _query(request: Mapping[str, Any], page_url: str, spaces: list[str], kind: int) -> dict[str, str]:
    """The query parameters but the cache buster and the supply chain."""
    app, device = request.get("app"), request.get("device")
    query = {"ncb": "1", "e": "+".join(spaces)}
    if app is None:
        query["ur"] = page_url
    optional = {
        "uid": _text(request.get("user"), "buyeruid"),
        "ip": _text(device, "ip"),
    }
    if app is not None:
        optional.update(appn=_text(app, "name"), appid=_text(app, "id"), ifa=_text(device, "ifa"), app="1")
    if kind:
        optional.update(vctx=str(kind), vv="3")
    query.update((name, value) for name, value in optional.items() if value)
    return query


def _uri(endpoint: str, path: str, query: Mapping[str, str]) -> str:
    """``endpoint`` with ``path`` appended and ``query`` as its query, as Go's ``URL.String`` writes it
    (the path escaped, the parameters sorted and form-escaped). Raises ValueError where urlsplit does."""
    parts = urlsplit(endpoint)
    text = f"{parts.scheme}://{parts.netloc}" if parts.scheme or parts.netloc else ""
    text += quote(unquote(parts.path) + path, safe=_PATH_SAFE) + "?" + urlencode(sorted(query.items()))
    return text + (f"#{parts.fragment}" if parts.fragment else "")


class EplanningAdapter(OwnAnswerAdapter):
    answer_wording = AnswerWording(body_text="Error unmarshaling HB response: {}")

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.testing = False  # PBS-Go's test sets it: no cache buster, a body of {}

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        spaces = _spaces(request, errors)
        if not spaces:
            return [], errors
        kind = _auction_kind(_imps(request))
        try:
            page_url, target = _target(request)
            query = _query(request, page_url, [space.entry for space in spaces], kind)
            if not self.testing:
                query["rnd"] = str(random.getrandbits(63))
            source = request.get("source")
            if isinstance(source, dict) and source.get("ext") is not None:
                schain = supply_chain(source["ext"])
                if schain:
                    query["sch"] = schain
            uri = _uri(self.endpoint, f"/{spaces[0].client_id}/1/{target}/ROS", query)
        except (_Refused, JsonShapeError, ValueError) as exc:
            return [], [*errors, BidderError(str(exc))]
        body = b"{}" if self.testing else None
        # every imp's, the refused ones' too
        return [RequestData("GET", uri, body, _headers(request), imp_ids(_imps(request)))], errors

    def read_body(self, body: bytes) -> list[tuple[str, dict[str, Any]]]:
        """The answer's ads, by space name."""
        return _answer_ads(body)

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: list[tuple[str, dict[str, Any]]]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        ads = data
        imps = {space.name: space.imp_id for space in _spaces(request)}
        bid_type = "video" if _auction_kind(_imps(request)) else "banner"
        result = BidderResponse()
        for space_name, ad in ads:
            price = go_parse_float(ad["pr"])
            if price is None:
                continue
            bid: dict[str, Any] = {"id": ad["i"], "impid": imps.get(space_name, ""), "price": price}
            for key, name in (("adm", "adm"), ("id", "adid"), ("crid", "crid"), ("w", "w"), ("h", "h")):
                if ad[key]:
                    bid[name] = ad[key]
            if ad["adom"]:
                bid["adomain"] = [ad["adom"]]
            result.bids.append(TypedBid(bid, bid_type))
        return result, []


# --- the answer ------------------------------------------------------------------------------------

# eplanning.hbResponseAd: json name -> (Go field, kind)
_AD_FIELDS: Mapping[str, tuple[str, GoKind]] = {
    "i": ("ImpressionID", GoKind.STRING), "id": ("AdID", GoKind.STRING), "pr": ("Price", GoKind.STRING),
    "adm": ("AdM", GoKind.STRING), "crid": ("CrID", GoKind.STRING), "adom": ("Adomain", GoKind.STRING),
    "w": ("Width", GoKind.INT), "h": ("Height", GoKind.INT),
}  # fmt: skip


def _ad(obj: Any) -> dict[str, Any]:
    """An ad (eplanning.hbResponseAd) with every field, zero where not given."""
    ad: dict[str, Any] = {name: 0 if kind is GoKind.INT else "" for name, (_, kind) in _AD_FIELDS.items()}
    for name, value in go_members(expect_object(obj, "[]eplanning.hbResponseAd"), *_AD_FIELDS):
        go_name, kind = _AD_FIELDS[name]
        if value is None:
            continue
        decoded = go_value(value, kind, f"eplanning.hbResponseAd.{go_name}")
        if kind is GoKind.INT and decoded < 0:  # a uint64
            raise JsonShapeError(f"cannot unmarshal eplanning.hbResponseAd.{go_name}: unexpected character: -")
        ad[name] = decoded
    return ad


def _answer_ads(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(space name, ad) for every ad of e-planning's answer; JsonShapeError (json-iterator's words)
    when it does not decode."""
    data = go_json_object(body)
    spaces: list[Any] = []
    for _, value in go_members(expect_object(data, ""), "sp"):
        spaces = go_list(value, "eplanning.hbResponse.Spaces")
    decoded: list[tuple[str, dict[str, Any]]] = []
    for space in spaces:
        name, ads = "", []
        for key, value in go_members(expect_object(space, "[]eplanning.hbResponseSpace"), "k", "a"):
            if key == "k" and value is not None:
                name = expect_string(value, "eplanning.hbResponseSpace.Name")
            elif key == "a":
                ads = [_ad(ad) for ad in go_list(value, "eplanning.hbResponseSpace.Ads")]
        decoded.extend((name, ad) for ad in ads)
    return decoded


def build(config: AdapterConfig) -> EplanningAdapter:
    return EplanningAdapter(config)
