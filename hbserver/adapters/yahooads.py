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

from collections.abc import Callable, Mapping
from functools import partial
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
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    expect_string,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    ImpExtError,
    decode_go_answer,
    go_media_objects,
    imp_bidder_params,
    set_omitempty,
    typed_bids,
)

REGS_EXT_WARNING = "regs.ext is not a JSON object; skipped OpenRTB 2.6 regs promotion"
INT8 = range(-128, 128)


_ANSWER_WORDING = AnswerWording(
    status="Unexpected status code: {}.",
    bad_request_is_input=False,
    body_text="Bad server response: &{{%!d(string={})}}.",  # Go's %d of the error struct
)


def _gpp(value: Any) -> tuple[bool, str]:
    """(readable, text) for ``regs.ext.gpp`` decoded as a Go string (null reads as none)."""
    if value is None or isinstance(value, str):
        return True, value or ""
    return False, ""


def _gpp_sid(value: Any) -> tuple[bool, list[int]]:
    """(readable, sections) for ``regs.ext.gpp_sid`` decoded as Go's ``[]int8`` (null reads as none)."""
    if value is None:
        return True, []
    if not isinstance(value, list):
        return False, []
    if all(isinstance(item, int) and not isinstance(item, bool) and item in INT8 for item in value):
        return True, value
    return False, []


# regs.ext members with an OpenRTB 2.6 home in regs, each with its reader
_PROMOTED: tuple[tuple[str, Callable[[Any], tuple[bool, Any]]], ...] = (("gpp", _gpp), ("gpp_sid", _gpp_sid))


def promote_regs(regs: Any) -> tuple[Any, list[BidderError]]:
    """``regs`` with ``ext.gpp``/``ext.gpp_sid`` promoted to OpenRTB 2.6's ``regs.gpp``/``gpp_sid``
    (a new object when anything moves, ``regs`` itself otherwise). A member ``regs`` already has is
    dropped from ``ext``; one that does not decode stays there."""
    if not isinstance(regs, dict) or regs.get("ext") is None:
        return regs, []
    ext = regs["ext"]
    if not isinstance(ext, dict):
        return regs, [BidderError(REGS_EXT_WARNING)]
    out = dict(regs)
    rest = dict(ext)
    for name, read in _PROMOTED:
        if name not in rest:
            continue
        if not regs.get(name):
            readable, value = read(rest[name])
            if not readable:
                continue
            set_omitempty(out, name, value)
        del rest[name]
    if len(rest) == len(ext):  # nothing moved
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
    set_omitempty(out, "id", value)
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
                params = imp_bidder_params(imp)
                dcn = expect_string(params.get("dcn"), "openrtb_ext.ExtImpYahooAds.Dcn")
                pos = expect_string(params.get("pos"), "openrtb_ext.ExtImpYahooAds.Pos")
            except ImpExtError:
                errors.append(bad_input(f"imp #{index}: ext.bidder not provided"))
                continue
            except JsonShapeError as exc:
                errors.append(bad_input(f"imp #{index}: {exc}"))
                continue
            out_imp = dict(go_media_objects(imp))
            set_omitempty(out_imp, "tagid", pos)
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
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        imp_types: dict[Any, str] = {}
        for imp in request.get("imp") or ():
            if imp.get("id") not in imp_types:
                kind = "banner" if imp.get("banner") is not None else "video" if imp.get("video") is not None else ""
                imp_types[imp.get("id")] = kind
        return typed_bids(answer, partial(_typed, imp_types), answer_currency=False, first_error_fails=True)


def _typed(imp_types: Mapping[Any, str], bid: dict[str, Any]) -> TypedBid | BidderError | None:
    """The bid typed by its imp (banner, else video); an imp of neither type drops it silently."""
    impid = bid["impid"]
    if impid not in imp_types:
        return bad_server_response(f"Unknown ad unit code '{impid}'")
    return TypedBid(bid, imp_types[impid]) if imp_types[impid] else None


def build(config: AdapterConfig) -> YahooAdsAdapter:
    return YahooAdsAdapter(config)
