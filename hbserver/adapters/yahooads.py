"""Yahoo Ads adapter: one OpenRTB 2.6 call per imp to the host's Yahoo SSP endpoint.

Each call carries a single imp with ``pos`` as its ``tagid`` and ``dcn`` as the id of the site (or,
without a site, of the app). A banner without both ``w`` and ``h`` takes them from its first
format; a banner with a zero size, or with no size at all, drops the imp with an error. ``regs.ext``
values with OpenRTB 2.6 homes are promoted once for all calls: ``gpp`` and ``gpp_sid`` move to
``regs`` when it has none of its own (a duplicate in ``ext`` is removed when it does), and a
``regs.ext`` that is no object passes unchanged with a warning. Calls carry ``X-Openrtb-Version:
2.6`` and the device's user agent. Bids are typed by their imp (banner, else video); bids for other
imps are dropped, and a bid for an unknown imp voids the whole answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.adf import bidder_params, go_bid, go_media_objects, imp_ext
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
from hbserver.adapters.common import JsonShapeError, answer_bids, expect_string, found, json_call, json_headers

REGS_EXT_WARNING = "regs.ext is not a JSON object; skipped OpenRTB 2.6 regs promotion"
INT8 = range(-128, 128)


def _gpp_sid(value: Any) -> tuple[bool, list[int]]:
    """(readable, sections) for ``regs.ext.gpp_sid`` decoded as Go's ``[]int8`` (null reads as none)."""
    if value is None:
        return True, []
    if not isinstance(value, list):
        return False, []
    if all(isinstance(item, int) and not isinstance(item, bool) and item in INT8 for item in value):
        return True, value
    return False, []


def promote_regs(regs: Any) -> tuple[Any, list[BidderError]]:
    """``regs`` with ``ext.gpp``/``ext.gpp_sid`` promoted to OpenRTB 2.6's ``regs.gpp``/``gpp_sid``
    (a new object when anything moves, ``regs`` itself otherwise)."""
    if not isinstance(regs, dict) or regs.get("ext") is None:
        return regs, []
    ext = regs["ext"]
    if not isinstance(ext, dict):
        return regs, [BidderError(REGS_EXT_WARNING)]
    out = dict(regs)
    rest = dict(ext)
    modified = False
    if "gpp" in rest:
        if not regs.get("gpp"):
            value = rest["gpp"]
            if value is None or isinstance(value, str):
                if value:
                    out["gpp"] = value
                else:
                    out.pop("gpp", None)
                del rest["gpp"]
                modified = True
        else:
            del rest["gpp"]
            modified = True
    if "gpp_sid" in rest:
        if not regs.get("gpp_sid"):
            readable, sections = _gpp_sid(rest["gpp_sid"])
            if readable:
                if sections:
                    out["gpp_sid"] = sections
                else:
                    out.pop("gpp_sid", None)
                del rest["gpp_sid"]
                modified = True
        else:
            del rest["gpp_sid"]
            modified = True
    if not modified:
        return regs, []
    if rest:
        out["ext"] = rest
    else:
        del out["ext"]
    return out, []


class _BadBanner(ValueError):
    """A banner without a usable size (Go's plain error: no error class)."""


def _sized_banner(banner: dict[str, Any]) -> dict[str, Any]:
    """The banner with ``w``/``h`` from its first format unless it has both."""
    w, h = banner.get("w"), banner.get("h")
    if w is not None and h is not None:
        if w == 0 or h == 0:
            raise _BadBanner(f"Invalid sizes provided for Banner {w}x{h}")
        return banner
    formats = banner.get("format")
    if not formats:
        raise _BadBanner("No sizes provided for Banner []")
    first = formats[0] if isinstance(formats[0], dict) else {}
    return {**banner, "w": first.get("w", 0), "h": first.get("h", 0)}


def _set_id(holder: dict[str, Any], value: str) -> dict[str, Any]:
    out = dict(holder)
    if value:
        out["id"] = value
    else:
        out.pop("id", None)
    return out


class YahooAdsAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        headers = json_headers(x_openrtb_version="2.6")
        device = request.get("device")
        if isinstance(device, dict) and isinstance(device.get("ua"), str) and device["ua"]:
            headers["User-Agent"] = device["ua"]
        regs, errors = promote_regs(request.get("regs"))
        calls: list[RequestData] = []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                ext = imp_ext(imp)
            except JsonShapeError:
                errors.append(bad_input(f"imp #{index}: ext.bidder not provided"))
                continue
            try:
                params = bidder_params(ext)
                dcn = expect_string(params.get("dcn"), "openrtb_ext.ExtImpYahooAds.Dcn")
                pos = expect_string(params.get("pos"), "openrtb_ext.ExtImpYahooAds.Pos")
            except JsonShapeError as exc:
                errors.append(bad_input(f"imp #{index}: {exc}"))
                continue
            out_imp = dict(go_media_objects(imp))
            if pos:
                out_imp["tagid"] = pos
            else:
                out_imp.pop("tagid", None)
            banner = imp.get("banner")
            if isinstance(banner, dict):
                try:
                    out_imp["banner"] = _sized_banner(banner)
                except _BadBanner as exc:
                    errors.append(BidderError(str(exc)))
                    continue
            body = {**request, "imp": [out_imp]}
            if "regs" in request:
                body["regs"] = regs
            if isinstance(request.get("site"), dict):
                body["site"] = _set_id(request["site"], dcn)
            elif isinstance(request.get("app"), dict):
                body["app"] = _set_id(request["app"], dcn)
            calls.append(json_call(self.endpoint, body, [imp.get("id", "")], headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            return None, [bad_server_response(f"Unexpected status code: {response.status}.")]
        try:
            data = orjson.loads(response.body)
            if not isinstance(data, dict):
                raise JsonShapeError(f"expect {{ or n, but found {found(data)}")
        except (orjson.JSONDecodeError, JsonShapeError) as exc:
            # Go formats the decoding error with %d: its struct, the message as a "bad verb"
            return None, [bad_server_response(f"Bad server response: &{{%!d(string={exc})}}.")]
        imp_types: dict[Any, str] = {}
        for imp in request.get("imp") or ():
            if imp.get("id") not in imp_types:
                kind = "banner" if imp.get("banner") is not None else "video" if imp.get("video") is not None else ""
                imp_types[imp.get("id")] = kind
        result = BidderResponse(currency="USD")
        for _, bid in answer_bids(data):
            impid = bid.get("impid", "")
            if impid not in imp_types:
                return None, [bad_server_response(f"Unknown ad unit code '{impid}'")]
            if imp_types[impid]:
                result.bids.append(TypedBid(go_bid(bid), imp_types[impid]))
        return result, []


def build(config: AdapterConfig) -> YahooAdsAdapter:
    return YahooAdsAdapter(config)
