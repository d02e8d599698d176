"""BidMachine adapter: one OpenRTB 2.5 call per imp, to the endpoint's ``Host`` macro filled from the
imp's ``host`` param (a bare host name, optionally with a port), the ``path`` and ``seller_id``
params joined onto its path.

A banner without ``w`` and ``h`` needs a format. A rewarded imp (``ext.prebid.is_rewarded_inventory:
1``) gets creative attribute 16 (has a skip button) in its banner's and video's ``battr``. A 400,
401, 403 or 503 is bad input, any other failure status a bad server response, both worded with the
answer's body. A bid is a video when its imp has a video and no banner, else a banner; a bid for
no imp of the request is reported and left out. Bids are in USD.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

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
from hbserver.adapters.common import JsonShapeError, expect_object, imp_ids, json_call, resolve_macros
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_answer,
    go_field,
    go_int,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.gourl import go_url_scheme_host

_HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "X-Openrtb-Version": "2.5"}
_SAFE_HOST = re.compile(r"[a-zA-Z0-9.-]+(:[0-9]+)?")  # PBS-Go's urlutil.IsSafeHost
_HAS_SKIP_BUTTON = 16
_INPUT_STATUSES = frozenset({400, 401, 403, 503})
_PARAMS = {"host": "Host", "path": "Path", "seller_id": "SellerID"}
_BAD_HOST = "Failed to create final URL with provided host"


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def go_path_join(*elements: str) -> str:
    """Go's ``path.Join``: the non-empty elements joined by ``/`` and cleaned ("" when all are empty)."""
    joined = "/".join(element for element in elements if element)
    if not joined:
        return ""
    cleaned = posixpath.normpath(joined)
    return cleaned[1:] if cleaned.startswith("//") else cleaned


def endpoint_url(template: str, params: Mapping[str, str]) -> str:
    """The endpoint for the imp's params; _Refused when the host is not a bare host name or the URL
    has no scheme or host."""
    host = params["host"]
    if not _SAFE_HOST.fullmatch(host):
        raise _Refused(bad_input(_BAD_HOST))
    uri = resolve_macros(template, {"Host": host})
    parsed = go_url_scheme_host(uri)
    if parsed is None or not all(parsed):
        raise _Refused(bad_input(_BAD_HOST))
    parts = urlsplit(uri)
    path = go_path_join(go_path_join(parts.path, params["path"]), params["seller_id"])
    if path and not path.startswith("/"):
        path = "/" + path
    out = f"{parts.scheme}://{parts.netloc}{quote(path, safe='$&+,/:;=@')}"
    if parts.query:
        out += f"?{parts.query}"
    return out + (f"#{parts.fragment}" if parts.fragment else "")


def _is_rewarded(ext: Mapping[str, Any]) -> bool:
    try:
        prebid = expect_object(go_field(ext, "prebid"), "")
        return go_int(go_field(prebid, "is_rewarded_inventory"), "") == 1
    except JsonShapeError:
        return False


def prepared_imp(template: str, imp: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """(the imp as sent, its endpoint); _Refused when it cannot be sent."""
    imp_id = imp.get("id", "")
    banner = imp.get("banner")
    if isinstance(banner, dict) and banner.get("w") is None and banner.get("h") is None:
        problem = "format is missing" if banner.get("format") is None else "format array is empty"
        if not banner.get("format"):
            raise _Refused(
                bad_input(
                    f"Impression with id: {imp_id} has following error: Banner width and height is not provided"
                    f" and banner {problem}. At least one is required"
                )
            )
    try:
        params = {name: "" for name in _PARAMS}
        for name, value in go_members(imp_bidder_params(imp), *_PARAMS):
            params[name] = go_value(value, GoKind.STRING, f"openrtb_ext.ExtImpBidmachine.{_PARAMS[name]}") or ""
    except (ImpExtError, JsonShapeError) as exc:
        raise _Refused(BidderError(str(exc))) from None
    uri = endpoint_url(template, params)
    out = dict(imp)
    if _is_rewarded(imp["ext"]):
        for kind in ("banner", "video"):
            media = out.get(kind)
            battr = media.get("battr") if isinstance(media, dict) else None
            if isinstance(media, dict) and _HAS_SKIP_BUTTON not in (battr or ()):
                out[kind] = {**media, "battr": [*(battr or ()), _HAS_SKIP_BUTTON]}
    return go_media_objects(out), uri


def bid_type(imps: Any, imp_id: Any) -> str | None:
    for imp in imps or ():
        if imp.get("id") == imp_id:
            return "video" if imp.get("banner") is None and imp.get("video") is not None else "banner"
    return None


class BidmachineAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = [], []
        top = go_request_top(request)
        for imp in request.get("imp") or ():
            try:
                sent, uri = prepared_imp(self.endpoint, imp)
            except _Refused as exc:
                errors.append(exc.error)
                continue
            calls.append(json_call(uri, {**top, "imp": [sent]}, imp_ids([sent]), _HEADERS))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            text = f"unexpected status code: {response.status} {response.body.decode(errors='replace')}"
            return None, [bad_input(text) if response.status in _INPUT_STATUSES else bad_server_response(text)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(str(exc))]
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = bid_type(request.get("imp"), bid.get("impid"))
            if kind is None:
                errors.append(
                    bad_server_response(
                        f"ignoring bid id={bid.get('id', '')}, request doesn't contain any valid impression"
                        f" with id={bid.get('impid', '')}"
                    )
                )
                continue
            result.bids.append(TypedBid(bid, kind))
        return result, errors


def build(config: AdapterConfig) -> BidmachineAdapter:
    return BidmachineAdapter(config)
