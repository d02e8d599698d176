"""MadSense adapter: one call per banner imp, then one call with every video imp (video podding);
imps with neither are left out. Each call goes to ``<endpoint>?company_id=<its first imp's
company_id>`` (``test`` for a test request), its params failing the call alone, with the device's
User-Agent, its IPv6 (else IPv4) as ``X-Forwarded-For`` and the site's domain and ref as ``Origin``
and ``Referer``. Only video bids carry video facts. The params' and the answer's wording are the
recipe ``recipes/madsense.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp
from hbserver.adapters.steps import MACRO_ESCAPES


def call_groups(imps: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each banner imp alone, in order, then every other imp with a video together."""
    banners = [[imp] for imp in imps if imp.get("banner") is not None]
    videos = [imp for imp in imps if imp.get("banner") is None and imp.get("video") is not None]
    return [*banners, videos] if videos else banners


def _text(request: Mapping[str, Any], holder: str, name: str) -> str:
    place = request.get(holder)
    value = place.get(name) if isinstance(place, Mapping) else None
    return value if isinstance(value, str) else ""


class MadsenseAdapter(RecipeAdapter):
    """The recipe, the calls and headers MadSense's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = [], []
        for group in call_groups(list(request.get("imp") or [])):
            try:
                params = self.read_params(group[0], 0)
            except DroppedImp as exc:
                errors.append(exc.error)
                continue
            company = "test" if request.get("test") == 1 else params["company_id"]
            uri = f"{self.endpoint}?company_id={MACRO_ESCAPES['query'](company)}"
            calls.append(self.call(request, [Prepared(typed_imp(imp), uri, params) for imp in group]))
        return calls, errors

    def headers(self, request: Mapping[str, Any]) -> dict[str, str]:
        headers = super().headers(request)
        named = {
            "X-Forwarded-For": _text(request, "device", "ipv6") or _text(request, "device", "ip"),
            "Origin": _text(request, "site", "domain"),
            "Referer": _text(request, "site", "ref"),
        }
        headers.update((name, value) for name, value in named.items() if value)
        return headers

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        for bid in result.bids if result is not None else ():
            if bid.bid_type != "video":
                bid.bid_video = None
        return result, errors


def build(config: AdapterConfig) -> MadsenseAdapter:
    return MadsenseAdapter.of_code("madsense", config)
