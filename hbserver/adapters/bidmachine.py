"""BidMachine adapter: the recipe ``recipes/bidmachine.yaml`` (one OpenRTB 2.5 call per imp, the
answer's wording and bid typing) plus the bidder's own imp rules: the endpoint's ``Host`` macro
filled from the imp's ``host`` param (a bare host name, optionally with a port), the ``path`` and
``seller_id`` params joined onto its path; a banner without ``w`` and ``h`` needs a format; a rewarded
imp (``ext.prebid.is_rewarded_inventory: 1``) gets creative attribute 16 (has a skip button) in its
banner's and video's ``battr``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from hbserver.adapters.base import AdapterConfig, BidderError, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, resolve_macros
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_media_objects,
    go_members,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.gourl import go_url_scheme_host
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter
from hbserver.adapters.steps import is_rewarded, is_safe_host

_HAS_SKIP_BUTTON = 16
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
    if not is_safe_host(host):
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
    if is_rewarded(imp):
        for kind in ("banner", "video"):
            media = out.get(kind)
            battr = media.get("battr") if isinstance(media, dict) else None
            if isinstance(media, dict) and _HAS_SKIP_BUTTON not in (battr or ()):
                out[kind] = {**media, "battr": [*(battr or ()), _HAS_SKIP_BUTTON]}
    return go_media_objects(out), uri


class BidmachineAdapter(RecipeAdapter):
    """The recipe ``recipes/bidmachine.yaml``, each imp and its endpoint prepared by BidMachine's rules."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        try:
            sent, uri = prepared_imp(self.endpoint, imp)
        except _Refused as refused:
            raise DroppedImp(refused.error) from None
        return Prepared(sent, uri, {})


def build(config: AdapterConfig) -> BidmachineAdapter:
    return BidmachineAdapter.of_code("bidmachine", config)
