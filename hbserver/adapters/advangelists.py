"""Advangelists adapter: the recipe ``recipes/advangelists.yaml`` plus the bidder's own rules: a
banner without ``w`` or ``h`` takes its first format's size (that format leaves the list; without
one the imp is dropped, its error reported after those of the params), each call goes without
``site.publisher``, ``site.domain`` and ``app.publisher``. The recipe's ``seatbid_count_error``
makes an answer without exactly one seatbid fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter

NO_SIZE = "Expected at least one banner.format entry or explicit w/h"


def sized_banner(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with a banner lacking ``w`` or ``h`` sized from its first format (which leaves the
    list); DroppedImp when it has no format."""
    banner = imp.get("banner")
    if not isinstance(banner, dict) or (banner.get("w") is not None and banner.get("h") is not None):
        return imp
    formats = banner.get("format") or []
    if not isinstance(formats, list) or not formats:
        raise DroppedImp(bad_input(NO_SIZE))
    first = formats[0] if isinstance(formats[0], dict) else {}
    out = {key: value for key, value in banner.items() if key != "format"}
    out.update(w=first.get("w") or 0, h=first.get("h") or 0)
    if formats[1:]:
        out["format"] = formats[1:]
    return {**imp, "banner": out}


def without_publisher(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request with no ``site.publisher``, ``site.domain`` or ``app.publisher``."""
    out = dict(request)
    for holder, names in (("site", ("publisher", "domain")), ("app", ("publisher",))):
        place = out.get(holder)
        if isinstance(place, Mapping):
            out[holder] = {key: value for key, value in place.items() if key not in names}
    return out


class AdvangelistsAdapter(RecipeAdapter):
    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = super().make_requests(request, info)
        # PBS-Go checks every imp's params before it sizes any banner
        return calls, sorted(errors, key=lambda error: error.message == NO_SIZE)

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        one = super().prepare_imp(imp, info, index)
        return one._replace(imp=sized_banner(one.imp))

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        return super().call(without_publisher(request), group, more)


def build(config: AdapterConfig) -> AdvangelistsAdapter:
    return AdvangelistsAdapter.of_code("advangelists", config)
