"""NextMillennium adapter: one OpenRTB call to ``pbs.nextmillmedia.com/openrtb2/auction`` per imp.

Each imp's params name a stored request on NextMillennium's own Prebid Server: ``placement_id``, or
with a non-empty ``group_id`` the id ``g<group_id>;<size>;<domain>`` (the size is the first imp's
first banner format, else its banner ``w``x``h``; the domain is the app's, else the site's). As
PBS-Go does, every call carries the whole request: the first imp's ``ext`` becomes
``{"prebid": {"storedrequest": {"id"}}, "nextMillennium": {"nmmFlags"}}`` and the request's ``ext``
is replaced by that stored request, the host's ``server`` facts (``externalurl``, ``gvlid``,
``datacenter``) and ``nextMillennium`` (the flags, the imp's ``adSlots`` and ``allowedAds``, the
server and adapter versions). Any imp whose params do not decode fails the request (every one is
reported). Bids are typed by ``mtype`` (1 banner, 2 video); any other bid is reported and the rest
kept. Bids are always in USD.

Host settings in ``AdapterConfig.extra``: ``extra_info`` (JSON, ``{"nmmFlags": [...]}``; one that
does not decode refuses the build), ``external_url``, ``gvl_id``, ``datacenter`` and
``pbs_version`` (sent as ``server_version``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

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
    expect_object,
    expect_string,
    imp_ids,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    decode_go_answer,
    go_json_object,
    go_media_objects,
    go_members,
    go_request_top,
    go_strings,
    imp_bidder_params,
    typed_bids,
)

ADAPTER_VERSION = "v1.0.1"
_ANSWER_WORDING = AnswerWording(
    status="Unexpected http status code: {}",
    bad_request_is_input=False,
    # PBS-Go formats the decoder's *FailedToUnmarshal error with %d: Go prints the struct's field
    body_text="Bad server response: &{{%!d(string={})}}",
)
_BID_TYPES = {1: "banner", 2: "video"}


class _Params(NamedTuple):
    group_id: str = ""
    placement_id: str = ""
    ad_slots: list[str] = []
    allowed_ads: list[str] = []


_PARAM_FIELDS = {"group_id": "GroupID", "placement_id": "PlacementID", "adSlots": "AdSlots", "allowedAds": "AllowedAds"}


def _params(imp: Mapping[str, Any]) -> _Params:
    """The imp's params as Go's ImpExtNextMillennium (fields in document order, the first that
    fails stops); JsonShapeError in json-iterator's words."""
    if imp.get("ext") is None:  # json-iterator reads a JSON null raw value as no bytes
        raise JsonShapeError(ABSENT_OBJECT)
    fields: dict[str, Any] = {}
    for name, value in go_members(imp_bidder_params(imp, null_is_absent=True), *_PARAM_FIELDS):
        where = f"openrtb_ext.ImpExtNextMillennium.{_PARAM_FIELDS[name]}"
        if name in ("adSlots", "allowedAds"):
            fields[name] = go_strings(value, where) or []
        else:
            fields[name] = expect_string(value, where)
    return _Params(
        fields.get("group_id", ""),
        fields.get("placement_id", ""),
        fields.get("adSlots", []),
        fields.get("allowedAds", []),
    )


def _flags(extra_info: str) -> list[str]:
    """``nmmFlags`` from the host's extra info (Go's nmExtNMM); ValueError in PBS-Go's words when it
    does not decode ("" is no flags)."""
    if not extra_info:
        return []
    try:
        info = expect_object(go_json_object(extra_info), "")
        flags: list[str] = []
        for name, value in go_members(info, "nmmFlags", "adSlots", "allowedAds", "server_version", "nm_version"):
            if name == "server_version":
                expect_string(value, "nextmillennium.nmExtNMM.ServerVersion")
            elif name == "nm_version":
                expect_string(value, "nextmillennium.nmExtNMM.AdapterVersion")
            else:
                names = go_strings(value, f"nextmillennium.nmExtNMM.{name[0].upper()}{name[1:]}") or []
                if name == "nmmFlags":
                    flags = names
    except JsonShapeError as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    return flags


def _placement(request: Mapping[str, Any], imps: list[dict[str, Any]], params: _Params) -> str:
    """The stored request id: ``placement_id``, or ``g<group>;<size>;<domain>`` with a group."""
    if not params.group_id:
        return params.placement_id
    domain = ""
    for kind in ("site", "app"):  # an app's domain wins, even an empty one
        holder = request.get(kind)
        if isinstance(holder, dict):
            domain = holder.get("domain") or ""
    size = ""
    banner = imps[0].get("banner")
    if isinstance(banner, dict):
        formats = banner.get("format")
        if formats:
            size = f"{formats[0].get('w') or 0}x{formats[0].get('h') or 0}"
        elif banner.get("w") is not None and banner.get("h") is not None:
            size = f"{banner['w']}x{banner['h']}"
    return f"g{params.group_id};{size};{domain}"


class NextmillenniumAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.flags = _flags(str(config.extra.get("extra_info") or ""))
        extra = config.extra
        self.server = {
            "externalurl": str(extra.get("external_url") or ""),
            "gvlid": int(extra.get("gvl_id") or 0),
            "datacenter": str(extra.get("datacenter") or ""),
        }
        self.server_version = str(extra.get("pbs_version") or "")
        self.headers = json_headers(x_openrtb_version="2.5")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        all_params: list[_Params] = []
        errors: list[BidderError] = []
        for imp in imps:
            try:
                all_params.append(_params(imp))
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
        if errors:
            return [], errors
        sent_imps = [go_media_objects(imp) for imp in imps]
        ids = imp_ids(imps)
        top = go_request_top(request)
        calls = []
        for params in all_params:
            body = self._body(top, request, sent_imps, params)
            calls.append(json_call(self.endpoint, body, ids, self.headers))
        return calls, []

    def _body(
        self, top: dict[str, Any], request: Mapping[str, Any], imps: list[dict[str, Any]], params: _Params
    ) -> dict[str, Any]:
        stored = {"id": _placement(request, imps, params)}
        imp_nm: dict[str, Any] = {"nmmFlags": self.flags} if self.flags else {}
        first = {**imps[0], "ext": {"prebid": {"storedrequest": stored}, "nextMillennium": imp_nm}}
        nm: dict[str, Any] = dict(imp_nm)
        for key, value in (
            ("adSlots", params.ad_slots),
            ("allowedAds", params.allowed_ads),
            ("server_version", self.server_version),
            ("nm_version", ADAPTER_VERSION),
        ):
            if value:
                nm[key] = value
        body = dict(top)
        body["imp"] = [first, *imps[1:]]
        body["ext"] = {"prebid": {"storedrequest": stored, "server": self.server}, "nextMillennium": nm}
        return body

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        if not answer.seatbids:
            return None, []
        return typed_bids(answer, _typed, answer_currency=False)


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    mtype = bid.get("mtype", 0)
    bid_type = _BID_TYPES.get(mtype)
    return TypedBid(bid, bid_type) if bid_type else bad_server_response(f"Unsupported return mType: {mtype}")


def build(config: AdapterConfig) -> NextmillenniumAdapter:
    return NextmillenniumAdapter(config)
