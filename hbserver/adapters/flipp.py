"""Flipp adapter (PBS-Go adapters/flipp): not OpenRTB. Each imp becomes one campaign request to
Flipp's decision API: one placement built from the imp's params (site, zones, creative type, the
first banner format's size, a content code from the params or the page's ``flipp-content-code``),
the page, its keywords, the device's IPv4 (required) and a user key: the request's user id, else the
params' userKey where privacy permits it (no COPPA, no GDPR, eids not refused, TCF purpose 4 not
refused), else a fresh UUID. The answer's inline decisions become banner bids of the imp they name,
2400 px high (600 when the imp's options start compact) unless the creative's custom data names its
height. USD.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
)
from hbserver.adapters.common import PLAIN_BODY_WORDING, JsonShapeError, OwnAnswerAdapter, expect_object, json_call
from hbserver.adapters.golike import GoKind, go_field, go_json_object, go_list, go_members, go_value
from hbserver.adapters.gourl import go_query_unescape, go_url_scheme_host
from hbserver.adapters.steps import ParamsSpec, decode_kind
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2

PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ImpExtFlipp",
        "fields": {
            "publisherNameIdentifier": ["PublisherNameIdentifier", "string"],
            "creativeType": ["CreativeType", "string"],
            "siteId": ["SiteID", "int"],
            "zoneIds": ["ZoneIds", "[]int"],
            "userKey": ["UserKey", "string"],
            "options": ["Options", "map"],
        },
    }
)
# ImpExtFlippOptions: json name -> (Go field, kind); all omitempty
OPTIONS = {"startCompact": ("StartCompact", "bool"), "dwellExpand": ("DwellExpand", "bool"),
           "contentCode": ("ContentCode", "string")}  # fmt: skip
AD_TYPES, DTX_AD_TYPES = [4309, 641], [5061]
STANDARD_HEIGHT, COMPACT_HEIGHT = 2400, 600
CONTENT_CODE_PARAM = "flipp-content-code"
CONTENT_SELECTION_PURPOSE = 4  # go-gdpr's ContentSelectionDeliveryReporting (a TCF v1 name)
NO_REQUESTS = "adapterRequest is empty"
_RAW_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*")


class FlippError(Exception):
    """An imp (or answer) that fails, with PBS-Go's text."""


def read_params(imp: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the params, their options) of ``imp.ext.bidder`` (found as jsonparser finds it, decoded as
    ``openrtb_ext.ImpExtFlipp``); FlippError in PBS-Go's words."""
    ext = imp.get("ext")
    if not isinstance(ext, dict) or "bidder" not in ext:
        raise FlippError("flipp params not found. Key path not found")
    try:
        params = PARAMS.read({"ext": {"bidder": ext["bidder"]}})
        options: dict[str, Any] = {}
        for name, value in go_members(params["options"] or {}, *OPTIONS):
            go_name, kind = OPTIONS[name]
            options[name] = decode_kind(value, kind, f"openrtb_ext.ImpExtFlippOptions.{go_name}")
    except JsonShapeError as exc:
        raise FlippError(f"unable to extract flipp params. {exc}") from None
    return params, {name: value for name, value in options.items() if value}  # omitempty when written


def query_value(page: str, name: str) -> str:
    """The first value of ``name`` in the page's query, as Go's ``URL.Query().Get`` reads it."""
    query = page.partition("#")[0].partition("?")[2]
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        if ";" in key or go_query_unescape(key) != name:
            continue
        text = go_query_unescape(value)
        if text is not None:
            return text
    return ""


def _consent_refuses(consent: str) -> bool:
    """Whether the consent string, when it decodes, withholds purpose 4 (TCF v1 bit or v2 consent)."""
    text = consent.replace("\r", "").replace("\n", "")  # Go's decoder skips line breaks
    if not _RAW_URL_BASE64.fullmatch(text) or len(text) % 4 == 1:
        return False  # no base64.RawURLEncoding: Go lets the key through
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if not data:
        return False
    if data[0] >> 2 == 1:  # TCF v1: 24 purpose bits from bit 132
        bits = int.from_bytes(data, "big")
        total = len(data) * 8
        return total >= 156 and not (bits >> (total - 132 - CONTENT_SELECTION_PURPOSE)) & 1
    try:
        return not parse_tcf2(consent).purpose_consent(CONTENT_SELECTION_PURPOSE)
    except ConsentError:
        return False


def user_key_permitted(request: Mapping[str, Any]) -> bool:
    """Whether the params' userKey may be sent (PBS-Go's ``paramsUserKeyPermitted``)."""
    regs = request.get("regs") if isinstance(request.get("regs"), Mapping) else {}
    if regs.get("coppa") == 1 or regs.get("gdpr") == 1:
        return False
    ext = request.get("ext")
    if isinstance(ext, Mapping) and go_field(ext, "transmitEids") is False:
        return False
    user = request.get("user") if isinstance(request.get("user"), Mapping) else {}
    consent = user.get("consent")
    return not (isinstance(consent, str) and consent and _consent_refuses(consent))


class FlippAdapter(OwnAnswerAdapter):
    """One campaign request per imp; ``new_uuid`` makes a user key (the Go test fixes it)."""

    answer_wording = PLAIN_BODY_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.new_uuid: Callable[[], str] = lambda: str(uuid.uuid4())

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                calls.append(self.imp_call(request, imp))
            except FlippError as exc:
                errors.append(BidderError(str(exc)))
        if not calls:
            return [], [*errors, BidderError(NO_REQUESTS)]
        return calls, errors

    def imp_call(self, request: Mapping[str, Any], imp: Mapping[str, Any]) -> RequestData:
        params, options = read_params(imp)
        site = request.get("site") if isinstance(request.get("site"), Mapping) else {}
        page = site.get("page") if isinstance(site.get("page"), str) else ""
        if go_url_scheme_host(page) is None:
            raise FlippError(f'unable to parse site url. parse "{page}": invalid URL')
        content_code = options.get("contentCode") or query_value(page, CONTENT_CODE_PARAM)
        device = request.get("device") if isinstance(request.get("device"), Mapping) else {}
        if not device.get("ip"):
            raise FlippError("no IP set in flipp bidder params or request device")
        body: dict[str, Any] = {
            "ip": device["ip"],
            "keywords": str(site.get("keywords") or "").split(","),
            "placements": [placement(params, options, imp, content_code)],
            "user": {"key": self.user_key(request, params)},
        }
        if page:
            body["url"] = page
        headers = {"Content-Type": "application/json"}
        if device.get("ua"):
            headers["User-Agent"] = device["ua"]
        return json_call(self.endpoint, body, [imp.get("id", "")], headers)

    def user_key(self, request: Mapping[str, Any], params: Mapping[str, Any]) -> str:
        user = request.get("user") if isinstance(request.get("user"), Mapping) else {}
        if user.get("id"):
            return str(user["id"])
        if params["userKey"] and user_key_permitted(request):
            return str(params["userKey"])
        return self.new_uuid()

    def read_body(self, body: bytes) -> list[dict[str, Any]]:
        """The answer's inline decisions."""
        return inline_decisions(body)

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: list[dict[str, Any]]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        try:
            bids = answer_bids(request, data)
        except (JsonShapeError, FlippError) as exc:
            return None, [BidderError(str(exc))]
        return BidderResponse(currency="USD", bids=bids), []


def placement(params: Mapping[str, Any], options: Mapping[str, Any], imp: Mapping[str, Any], code: str) -> dict:
    """The campaign request's placement for one imp (``Placement``)."""
    banner = imp.get("banner") if isinstance(imp.get("banner"), Mapping) else {}
    formats = banner.get("format") or []
    first = formats[0] if formats and isinstance(formats[0], Mapping) else {}
    return {
        "adTypes": DTX_AD_TYPES if params["creativeType"] == "DTX" else AD_TYPES,
        "count": 1,
        "divName": "inline",
        "prebid": {
            "creativeType": params["creativeType"],
            "height": first.get("h") or 0,
            "publisherNameIdentifier": params["publisherNameIdentifier"],
            "requestId": imp.get("id", ""),
            "width": first.get("w") or 0,
        },
        "properties": {"contentCode": code},
        "siteId": params["siteId"],
        "zoneIds": params["zoneIds"],
        "options": dict(options),
    }


def inline_decisions(body: bytes) -> list[dict[str, Any]]:
    """``decisions.inline`` of the answer, each decision's fields checked as Go decodes them."""
    answer = expect_object(go_json_object(body), "")
    decisions = expect_object(go_field(answer, "decisions"), "flipp.CampaignResponseBody.Decisions")
    out = []
    for item in go_list(go_field(decisions, "inline"), "flipp.Decisions.Inline"):
        decision = expect_object(item, "flipp.Inline")
        for name in ("adId", "creativeId"):
            go_value(go_field(decision, name), GoKind.INT, f"flipp.InlineModel.{name}")
        prebid = expect_object(go_field(decision, "prebid"), "flipp.InlineModel.Prebid")
        go_value(go_field(prebid, "cpm"), GoKind.FLOAT, "flipp.PrebidResponse.Cpm")
        for name in ("creative", "requestId"):
            go_value(go_field(prebid, name), GoKind.STRING, f"flipp.PrebidResponse.{name}")
        out.append(decision)
    return out


def answer_bids(request: Mapping[str, Any], decisions: list[dict[str, Any]]) -> list[TypedBid]:
    """Banner bids for each imp from the decisions naming it. Go reads each imp's params into one
    struct shared by every imp: an imp without ``options.startCompact`` keeps the one before it."""
    bids: list[TypedBid] = []
    compact = False
    for imp in request.get("imp") or ():
        params, _ = read_params(imp)
        raw_options = params["options"] or {}
        if go_field(raw_options, "startCompact") is not None:
            compact = bool(go_field(raw_options, "startCompact"))
        imp_id = imp.get("id", "")
        for decision in decisions:
            prebid = go_field(decision, "prebid") or {}
            if go_field(prebid, "requestId") == imp_id:
                bids.append(TypedBid(decision_bid(decision, prebid, imp_id, compact), "banner"))
    return bids


def decision_bid(decision: Mapping[str, Any], prebid: Mapping[str, Any], imp_id: str, compact: bool) -> dict:
    """One decision as a bid: its ad and creative ids, price, markup, and the size of its first content."""
    bid: dict[str, Any] = {
        "id": str(go_field(decision, "adId") or 0),
        "impid": imp_id,
        "price": go_field(prebid, "cpm") or 0,
        "crid": str(go_field(decision, "creativeId") or 0),
    }
    creative = go_field(prebid, "creative")
    if creative:
        bid["adm"] = creative
    contents = go_field(decision, "contents")
    data = go_field(contents[0], "data") if isinstance(contents, list) and contents else None
    if isinstance(contents, list) and contents and isinstance(contents[0], Mapping) and isinstance(data, Mapping):
        if go_field(data, "width"):
            bid["w"] = go_field(data, "width")
        bid["h"] = COMPACT_HEIGHT if compact else STANDARD_HEIGHT
        custom = go_field(data, "customData")
        height = custom.get("compactHeight" if compact else "standardHeight") if isinstance(custom, dict) else None
        if isinstance(height, int | float) and not isinstance(height, bool):
            bid["h"] = int(height)
    return bid


def build(config: AdapterConfig) -> FlippAdapter:
    return FlippAdapter(config)
