"""Invibes adapter (PBS-Go adapters/invibes): not OpenRTB. Every banner imp's placement goes into one
ad request (``InvibesAdRequest``) whose ``BidParamsJson`` is the placements, each with its imp's
formats, written as Go's encoding/json writes it; the page, keywords, buyer uid, device size, the
GDPR facts of the request's ext objects and the debug params ride along. The endpoint's subdomain
comes from the last imp's domainId. Errors of dropped imps are reported only when no placement is
left. The answer is Invibes's own list of typed bids (all banners, with deal priorities).
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
)
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string, json_call, resolve_macros
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_bid,
    go_field,
    go_int,
    go_json_object,
    go_json_text,
    go_list,
    go_value,
)
from hbserver.adapters.recipe import DroppedImp
from hbserver.adapters.steps import ParamsSpec

ADAPTER_VERSION = "prebid_1.0.0"
BID_VERSION = "4"
AMP = "openrtb2-amp"
PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpInvibes",
        "fields": {
            "placementId": ["PlacementID", "string"],
            "domainId": ["DomainID", "int"],
            "debug": ["Debug", "map"],
        },
    }
)
_FORMAT_FIELDS = ("w", "h", "wratio", "hratio", "wmin")  # openrtb2.Format, all omitempty, then ext


class _Placements:
    """What the imps add up to (PBS-Go's ``InvibesInternalParams``): the last imp's domain and test
    log, the last test bvid given."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.properties: dict[str, dict[str, Any]] = {}
        self.domain = 0
        self.bvid = ""
        self.log = False

    def add(self, imp: Mapping[str, Any]) -> None:
        """The imp's placement; DroppedImp (bad input) when its ext or params fail or it has no banner."""
        params, debug = read_params(imp)
        banner = imp.get("banner")
        if banner is None:
            raise DroppedImp(bad_input("Banner not specified"))
        self.domain = params["domainId"]
        self.ids.append(params["placementId"].strip())
        self.properties[params["placementId"]] = {"Formats": ad_formats(banner), "ImpId": imp.get("id", "")}
        self.bvid = debug["testBvid"] or self.bvid
        self.log = debug["testLog"]

    def bid_params_json(self) -> str:
        params = {
            "PlacementIds": self.ids,
            "BidVersion": BID_VERSION,
            "Properties": dict(sorted(self.properties.items())),
        }
        return go_json_text(params)


def read_params(imp: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the params, their debug object) as ``openrtb_ext.ExtImpInvibes``; DroppedImp in Invibes's words."""
    try:
        params = PARAMS.read(imp)
    except ImpExtError:
        raise DroppedImp(bad_input("Error parsing bidderExt object")) from None
    except JsonShapeError:
        raise DroppedImp(bad_input("Error parsing invibesExt parameters")) from None
    debug = params["debug"] or {}
    try:
        bvid = expect_string(go_field(debug, "testBvid"), "openrtb_ext.ExtImpInvibesDebug.TestBvid")
        log = go_value(go_field(debug, "testLog"), GoKind.BOOL, "openrtb_ext.ExtImpInvibesDebug.TestLog")
    except JsonShapeError:
        raise DroppedImp(bad_input("Error parsing invibesExt parameters")) from None
    return params, {"testBvid": bvid, "testLog": bool(log)}


def ad_formats(banner: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The banner's formats as Go writes ``openrtb2.Format`` (null when none), else its own size."""
    formats = banner.get("format")
    if formats is not None:
        return [typed_format(item) for item in formats]
    if banner.get("w") is not None and banner.get("h") is not None:
        return [typed_format({"w": banner["w"], "h": banner["h"]})]
    return None


def typed_format(item: Mapping[str, Any]) -> dict[str, Any]:
    out = {name: item[name] for name in _FORMAT_FIELDS if item.get(name)}
    if item.get("ext") is not None:
        out["ext"] = item["ext"]
    return out


def read_gdpr(request: Mapping[str, Any]) -> tuple[bool, str]:
    """(GDPR applies, the consent): ``user.ext.consent`` and ``regs.ext.gdpr`` where those ext
    objects decode (GDPR applies unless the regs say otherwise)."""
    consent, applies = "", True
    user, regs = request.get("user"), request.get("regs")
    try:
        if isinstance(user, Mapping):
            consent = expect_string(go_field(_ext_object(user), "consent"), "openrtb_ext.ExtUser.Consent")
    except JsonShapeError:
        consent = ""
    try:
        if isinstance(regs, Mapping):
            ext = _ext_object(regs)
            expect_string(go_field(ext, "us_privacy"), "openrtb_ext.ExtRegs.USPrivacy")
            gdpr = go_field(ext, "gdpr")
            if gdpr is not None and -128 <= go_int(gdpr, "openrtb_ext.ExtRegs.GDPR") <= 127:
                applies = gdpr == 1
    except JsonShapeError:
        pass
    return applies, consent


def _ext_object(holder: Mapping[str, Any]) -> dict[str, Any]:
    """``holder.ext`` as Go unmarshals it into a struct: absent fails (empty input), null is empty."""
    if "ext" not in holder:
        raise JsonShapeError("empty ext")
    return expect_object(holder["ext"], "")


def subdomain(domain: int) -> str:
    if domain in (0, 1, 1001):
        return "bid"
    return f"bid{domain if domain < 1002 else domain - 1000}"


class InvibesAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        placements, errors = _Placements(), []
        for imp in request.get("imp") or ():
            try:
                placements.add(imp)
            except DroppedImp as dropped:
                errors.append(dropped.error)
        if not placements.ids:
            return [], errors
        site = request.get("site")
        if not isinstance(site, Mapping):
            return [], [bad_input("Site not specified")]
        uri = resolve_macros(self.endpoint, {"ZoneID": subdomain(placements.domain)})
        body = self.ad_request(request, site, placements, info.entry_point == AMP)
        return [json_call(uri, body, [p["ImpId"] for p in placements.properties.values()], headers(request))], []

    @staticmethod
    def ad_request(request: Mapping[str, Any], site: Mapping[str, Any], placements: _Placements, amp: bool) -> dict:
        applies, consent = read_gdpr(request)
        user = request.get("user") if isinstance(request.get("user"), Mapping) else {}
        device = request.get("device") if isinstance(request.get("device"), Mapping) else {}
        width, height = (device.get(name) or 0 for name in ("w", "h"))
        return {
            "BidParamsJson": placements.bid_params_json(),
            "Location": site.get("page") or "",
            "Lid": go_field(user, "buyeruid") or "",  # Go matches field names in any case
            "IsTestBid": placements.bvid != "",
            "Kw": site.get("keywords") or "",
            "IsAmp": amp,
            "Width": str(width) if width > 0 else "",
            "Height": str(height) if height > 0 else "",
            "GdprConsent": consent,
            "Gdpr": applies,
            "Bvid": placements.bvid,
            "InvibBVLog": placements.log,
            "VideoAdDebug": placements.log,
        }

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status != 200:
            return None, [BidderError(f"Unexpected status code: {response.status}.")]
        try:
            answer = expect_object(go_json_object(response.body), "")
            currency = expect_string(go_field(answer, "currency"), "invibes.BidServerBidderResponse.Currency")
            error = expect_string(go_field(answer, "error"), "invibes.BidServerBidderResponse.Error")
            bids = [typed_bid(item) for item in go_list(go_field(answer, "typedBids"), "typedBids")]
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        if error:
            return None, [BidderError(f"Server error: {error}.")]
        return BidderResponse(currency=currency, bids=bids), []


def typed_bid(item: Any) -> TypedBid:
    """One ``BidServerTypedBid``: a banner bid with its deal priority."""
    item = expect_object(item, "invibes.BidServerTypedBid")
    priority = go_int(go_field(item, "dealPriority"), "invibes.BidServerTypedBid.DealPriority")
    return TypedBid(go_bid(go_field(item, "bid") or {}), "banner", deal_priority=priority)


def headers(request: Mapping[str, Any]) -> dict[str, str]:
    """JSON, the device's User-Agent (even empty) and IPv4 (else IPv6), the site's page, the version."""
    out = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    device, site = request.get("device"), request.get("site")
    if isinstance(device, Mapping):
        out["User-Agent"] = device.get("ua") or ""
        address = device.get("ip") or device.get("ipv6")
        if address:
            out["X-Forwarded-For"] = address
    if isinstance(site, Mapping):
        out["Referer"] = site.get("page") or ""
    out["Aver"] = ADAPTER_VERSION
    return out


def build(config: AdapterConfig) -> InvibesAdapter:
    return InvibesAdapter(config)
