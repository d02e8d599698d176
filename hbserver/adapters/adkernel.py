"""AdKernel adapter: one OpenRTB 2.5 call per ``zoneId`` to ``pbs.adksrv.com/hb?zone={{.ZoneID}}``.

Each imp's ``zoneId`` param must be a positive integer; an imp whose ext or params do not decode,
or whose zone is not positive, is reported and left out. The others are grouped by zone, their
``ext`` dropped, and an imp asking for several media types is split into one imp per type, its id
suffixed ``b__mf``, ``v__mf``, ``n__mf`` or ``a__mf`` (banner, video, native, audio, in that order).
Each call carries the request with its group's imps and without ``site.publisher`` /
``app.publisher``, and the header ``X-Openrtb-Version: 2.5``.

The answer must hold exactly one seatbid. A bid's ``impid`` loses a multi-format suffix; bids are
typed by ``mtype`` alone, and a bid without a known one fails the whole answer. The answer's ``cur``
is the currency.
"""

from __future__ import annotations

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
    imp_ids,
    json_call,
    json_headers,
    mtype_bid_type,
    resolve_macros,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    decode_go_answer,
    go_field,
    go_int,
    go_media_objects,
    go_request_top,
    imp_bidder_params,
)

_MF_SUFFIX = "__mf"
# a multi-format imp is split in this order; the letter goes in front of the suffix
_SPLIT_ORDER = (("banner", "b"), ("video", "v"), ("native", "n"), ("audio", "a"))
_MEDIA = tuple(kind for kind, _ in _SPLIT_ORDER)

# shared with adkernelAdn (same wording)
ANSWER_WORDING = AnswerWording(
    status="Unexpected http status code: {}",
    bad_request_is_input=False,
    body_text="Bad server response: &{{%!d(string={})}}",  # Go's %d of the error struct
)


def _zone_id(imp: dict[str, Any]) -> int:
    """``imp.ext.bidder.zoneId`` as PBS-Go decodes it (null or absent is 0); JsonShapeError in
    json-iterator's words when the ext or the params do not decode."""
    if imp.get("ext") is None:  # Go's imp.Ext is empty for an absent or null ext
        raise JsonShapeError(ABSENT_OBJECT)
    params = imp_bidder_params(imp, null_is_absent=True)
    return go_int(go_field(params, "zoneId", skip_null=True), "openrtb_ext.ExtImpAdkernel.ZoneId")


def _split(imp: dict[str, Any]) -> list[dict[str, Any]]:
    """The imp without ``ext``; an imp asking for several media types as one imp per type."""
    base = {key: value for key, value in imp.items() if key != "ext"}
    kinds = [kind for kind in _MEDIA if base.get(kind) is not None]
    if len(kinds) < 2:
        return [go_media_objects(base)]
    out = []
    for kind, letter in _SPLIT_ORDER:
        if base.get(kind) is None:
            continue
        single = {key: value for key, value in base.items() if key not in _MEDIA or key == kind}
        single["id"] = f"{base.get('id', '')}{letter}{_MF_SUFFIX}"
        out.append(go_media_objects(single))
    return out


def without_publisher(request: dict[str, Any]) -> dict[str, Any]:
    """The request's top level as sent: Go's omitempty zeros left out, ``site`` and ``app`` without
    their ``publisher``."""
    out = go_request_top(request)
    for key in ("site", "app"):
        holder = out.get(key)
        if isinstance(holder, dict) and "publisher" in holder:
            out[key] = {name: value for name, value in holder.items() if name != "publisher"}
    return out


class AdkernelAdapter:
    """AdKernel's calls and answer; adkernelAdn overrides the grouping, the top level and the typing."""

    macro = "ZoneID"  # the endpoint macro a group's key fills

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers(x_openrtb_version="2.5")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        errors: list[BidderError] = []
        groups = self.grouped_imps(imps, errors)
        top = self.top(request)
        calls = [
            json_call(
                resolve_macros(self.endpoint, {self.macro: str(key)}),
                {**top, "imp": group},
                imp_ids(group),
                self.headers,
            )
            for key, group in groups.items()
            if group
        ]
        return calls, errors

    def grouped_imps(self, imps: list[dict[str, Any]], errors: list[BidderError]) -> dict[int, list[dict[str, Any]]]:
        """The imps as sent, by zone; an imp left out is reported in ``errors``."""
        by_zone: dict[int, list[dict[str, Any]]] = {}
        for imp in imps:
            try:
                zone = _zone_id(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if zone < 1:
                errors.append(bad_input(f"Invalid zoneId value: {zone}. Ignoring imp id={imp.get('id', '')}"))
                continue
            by_zone.setdefault(zone, []).extend(_split(imp))
        return by_zone

    def top(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request's top level as each call carries it."""
        return without_publisher(request)

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, ANSWER_WORDING)
        if answer is None:
            return None, failure
        if len(answer.seatbids) != 1:
            return None, [bad_server_response(f"Invalid SeatBids count: {len(answer.seatbids)}")]
        return self.typed(request, answer.seatbids[0][1], answer.cur)

    def typed(
        self, request: dict[str, Any], bids: list[dict[str, Any]], currency: str
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """The one seatbid's bids typed: multi-format suffixes taken off, by ``mtype`` alone."""
        result = BidderResponse(currency=currency or "USD")
        for bid in bids:
            imp_id = bid["impid"]
            if imp_id.endswith(_MF_SUFFIX):
                bid = {**bid, "impid": imp_id[: len(imp_id) - len(_MF_SUFFIX) - 1]}
            mtype = bid.get("mtype", 0)
            bid_type = mtype_bid_type(bid)
            if bid_type is None:
                return None, [bad_server_response(f"Unsupported MType {mtype}")]
            result.bids.append(TypedBid(bid, bid_type))
        return result, []


def build(config: AdapterConfig) -> AdkernelAdapter:
    return AdkernelAdapter(config)
