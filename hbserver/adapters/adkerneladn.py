"""AdKernel ADN adapter (PBS-Go ``adapters/adkernelAdn``): adkernel's sibling for publishers.

Each imp's ``pubId`` param must be a positive integer and the imp a banner or video; an imp that
fails, or whose ext or params do not decode, is reported and left out. The others go without their
``ext``, as one media type (a banner wins; a banner without ``w`` and ``h`` takes its first format's,
that format taken off the list, or fails), grouped by ``pubId``, one OpenRTB 2.5 call per publisher
with the request without ``site.publisher``, ``site.domain`` and ``app.publisher``. The answer must
hold exactly one seatbid (adkernel's wording); a bid is a banner when its imp asked for one, else
video. USD.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.adkernel import AdkernelAdapter, without_publisher
from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import JsonShapeError, banner_taking_first_format
from hbserver.adapters.golike import go_media_objects
from hbserver.adapters.steps import ParamsSpec

_PARAMS = ParamsSpec("openrtb_ext.ExtImpAdkernelAdn", {"pubId": ("PublisherID", "int")}, null_is_absent=True)
_OTHERS = ("video", "native", "audio")


class _Refused(Exception):
    """An imp left out; the message is PBS-Go's."""


def publisher_id(imp: dict[str, Any]) -> int:
    """The imp's ``pubId``; _Refused when its params do not decode, it is not positive or the imp is
    neither banner nor video."""
    try:
        publisher = int(_PARAMS.read(imp)["pubId"])
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    imp_id = imp.get("id", "")
    if publisher < 1:
        raise _Refused(f"Invalid pubId value. Ignoring imp id={imp_id}")
    if imp.get("video") is None and imp.get("banner") is None:
        raise _Refused(f"Invalid imp with id={imp_id}. Expected imp.banner or imp.video")
    return publisher


def compat_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp as sent: no ext, one media type, a banner sized; _Refused for a banner without size
    or format."""
    out = {key: value for key, value in imp.items() if key != "ext"}
    banner = out.get("banner")
    if not isinstance(banner, dict):
        return go_media_objects({key: value for key, value in out.items() if key not in ("native", "audio")})
    sized = banner_taking_first_format(banner)
    if sized is None:
        raise _Refused("Expected at least one banner.format entry or explicit w/h")
    out["banner"] = sized
    return go_media_objects({key: value for key, value in out.items() if key not in _OTHERS})


class AdkernelAdnAdapter(AdkernelAdapter):
    """AdKernel's calls and answer, grouped by ``pubId``, bids typed by their imp."""

    macro = "PublisherID"

    def grouped_imps(self, imps: list[dict[str, Any]], errors: list[BidderError]) -> dict[int, list[dict[str, Any]]]:
        """Every imp's ``pubId`` checked first, then the valid ones made compatible, by publisher."""
        valid: list[tuple[int, dict[str, Any]]] = []
        for imp in imps:
            try:
                valid.append((publisher_id(imp), imp))
            except _Refused as refused:
                errors.append(bad_input(str(refused)))
        by_publisher: dict[int, list[dict[str, Any]]] = {}
        for publisher, imp in valid:
            try:
                by_publisher.setdefault(publisher, []).append(compat_imp(imp))
            except _Refused as refused:
                errors.append(bad_input(str(refused)))
        return by_publisher

    def top(self, request: dict[str, Any]) -> dict[str, Any]:
        """adkernel's top level, ``site.domain`` left out too."""
        top = without_publisher(request)
        site = top.get("site")
        if isinstance(site, dict) and "domain" in site:
            top["site"] = {key: value for key, value in site.items() if key != "domain"}
        return top

    def typed(
        self, request: dict[str, Any], bids: list[dict[str, Any]], currency: str
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """A bid is a banner when its imp asked for one, else video; USD whatever the answer says."""
        banners = {imp.get("id") for imp in request.get("imp") or () if imp.get("banner") is not None}
        return BidderResponse([TypedBid(bid, "banner" if bid["impid"] in banners else "video") for bid in bids]), []


def build(config: AdapterConfig) -> AdkernelAdnAdapter:
    return AdkernelAdnAdapter(config)
