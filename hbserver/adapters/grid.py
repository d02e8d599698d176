"""TheMediaGrid adapter: every imp with a non-zero ``uid`` in one OpenRTB call to ``grid.bidswitch.net``.

Imps without a usable ``uid`` are dropped with an error (no imp left: "No valid impressions for
grid"). An imp whose ``ext.data.adserver.adslot`` is set gets it as ``ext.gpid``; its ``ext`` is then
rewritten to the fields PBS-Go's adapter knows (``prebid``, ``bidder``, ``data``, ``gpid``,
``skadn``, ``context``). ``request.ext.keywords`` is consolidated: its ``site`` and ``user`` sections
are normalised to ``{publisher: [{"name", "segments": [{"name", "value"}]}]}`` and merged with the
first imp's ``ext.bidder.keywords`` and the OpenRTB ``site.keywords``/``user.keywords`` (comma
lists, under the publisher ``ortb2``), later sources first; other ``keywords`` entries stay. A native
imp's ``request`` string is sent parsed as ``request_native`` (the text itself when it is not a JSON
object). As in PBS-Go, all native imps parsed in a row share one object, so each of them carries the
keys of all their requests (a ``null`` request starts a new one).

Bids are typed by their ``content_type`` when given, else by their imp (banner, video, native); an
``adm_native`` object becomes the ``adm`` when the bid has none, and ``ext.bidder.grid.demandSource``
the meta network name. The currency is always USD. Malformed params are reported in the words of
PBS-Go's JSON library (json-iterator), which the fixtures pin.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    AnswerAdapter,
    JsonShapeError,
    answer_bids,
    expect_string,
    first_media_type,
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import (
    GO_WORDING,
    go_ext_imp_prebid,
    go_field,
    go_int,
    go_json_text,
    imp_bidder_params,
    set_omitempty,
)

HEADERS = {"Content-Type": "application/json;charset=utf-8"}  # PBS-Go sends no Accept here


def _uid(imp: dict[str, Any]) -> int:
    """``imp.ext.bidder.uid`` read as PBS-Go reads it; raises JsonShapeError for an unreadable ext."""
    params = imp_bidder_params(imp, null_is_absent=True)
    return go_int(go_field(params, "uid", skip_null=True), "openrtb_ext.ExtImpGrid.Uid")


def _string_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _with_gpid(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with ``ext.gpid`` from ``ext.data.adserver.adslot`` and ``ext`` rewritten as PBS-Go's
    ``ExtImp`` struct; unchanged when there is no adslot or the ext does not decode as that struct."""
    ext = imp.get("ext")
    if not isinstance(ext, dict):
        return imp
    prebid, data, gpid = ext.get("prebid"), ext.get("data"), ext.get("gpid")
    if not (prebid is None or isinstance(prebid, dict)) or not (data is None or isinstance(data, dict)):
        return imp
    if not _string_or_none(gpid):
        return imp
    adserver = data.get("adserver") if data else None
    if adserver is not None and not isinstance(adserver, dict):
        return imp
    if data and not _string_or_none(data.get("pbadslot")):
        return imp
    if adserver and not (_string_or_none(adserver.get("name")) and _string_or_none(adserver.get("adslot"))):
        return imp
    slot = (adserver or {}).get("adslot") or ""
    if not slot:
        return imp
    new_ext: dict[str, Any] = {}
    if prebid is not None:
        new_ext["prebid"] = go_ext_imp_prebid(prebid)
    new_ext["bidder"] = ext.get("bidder")
    new_data: dict[str, Any] = {}
    if data and data.get("pbadslot"):
        new_data["pbadslot"] = data["pbadslot"]
    new_data["adserver"] = {"name": adserver.get("name") or "", "adslot": slot}
    new_ext["data"] = new_data
    new_ext["gpid"] = slot
    for key in ("skadn", "context"):
        if ext.get(key) is not None:
            new_ext[key] = ext[key]
    return {**imp, "ext": new_ext}


# keywords ------------------------------------------------------------------------------------------

Keywords = dict[str, dict[str, list[dict[str, Any]]]]  # section -> publisher -> [{"name", "segments"}]


def _section_keywords(section: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """One ``site``/``user`` section normalised: per publisher the items that have a string
    ``name`` and at least one segment (valid ``segments`` entries, then every string in an array
    field, fields in sorted order)."""
    publishers: dict[str, list[dict[str, Any]]] = {}
    for publisher, items in section.items():
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            segments = []
            listed = item.get("segments")
            if isinstance(listed, list):
                for segment in listed:
                    if isinstance(segment, dict):
                        name, value = segment.get("name"), segment.get("value")
                        if isinstance(name, str) and isinstance(value, str):
                            segments.append({"name": name, "value": value})
            for field in sorted(item):
                values = item[field]
                if isinstance(values, list):
                    segments.extend({"name": field, "value": value} for value in values if isinstance(value, str))
            if segments:
                publishers.setdefault(publisher, []).append({"name": item["name"], "segments": segments})
    return publishers


def _map_keywords(keywords: dict[str, Any]) -> Keywords:
    return {
        section: _section_keywords(value)
        for section, value in keywords.items()
        if section in ("site", "user") and isinstance(value, dict)
    }


def _ortb_keywords(text: Any, section: str) -> Keywords:
    """``site.keywords``/``user.keywords`` (a comma list) as the publisher ``ortb2``."""
    words = text.split(",") if isinstance(text, str) else []
    segments = [{"name": "keywords", "value": word} for word in words if word]
    if not segments:
        return {}
    return {section: {"ortb2": [{"name": "keywords", "segments": segments}]}}


def _merge(into: Keywords, more: Keywords) -> None:
    """``more``'s items go in front of ``into``'s, publisher by publisher."""
    for section, publishers in more.items():
        target = into.setdefault(section, {})
        for publisher, items in publishers.items():
            target[publisher] = items + target.get(publisher, [])


def _object_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _consolidated_ext(request: dict[str, Any], first_imp: dict[str, Any]) -> dict[str, Any] | None:
    """``request.ext`` with the consolidated keywords; None when nothing is left of it."""
    ext = dict(_object_or_empty(request.get("ext")))
    keywords = dict(_object_or_empty(ext.get("keywords")))
    bidder = _object_or_empty(_object_or_empty(first_imp.get("ext")).get("bidder"))
    merged = _map_keywords(keywords)
    _merge(merged, _map_keywords(_object_or_empty(bidder.get("keywords"))))
    _merge(merged, _ortb_keywords(_object_or_empty(request.get("user")).get("keywords"), "user"))
    _merge(merged, _ortb_keywords(_object_or_empty(request.get("site")).get("keywords"), "site"))
    for section in ("site", "user"):
        set_omitempty(keywords, section, merged.get(section))
    set_omitempty(ext, "keywords", keywords)
    return ext or None


# native ---------------------------------------------------------------------------------------------


def _natives_parsed(imps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The imps with each native ``request`` moved to ``request_native`` (parsed when a JSON object).

    PBS-Go decodes every native request into one shared map, so an object parsed for one imp also
    holds the keys of the requests parsed after it (until a ``null`` request resets the map)."""
    shared: dict[str, Any] | None = None
    out = []
    for imp in imps:
        native = imp.get("native")
        if not isinstance(native, dict):
            out.append(imp)
            continue
        text = native.get("request")
        if not isinstance(text, str):
            text = ""  # Go always writes Native.request, "" when absent
        new_native = {key: value for key, value in native.items() if key != "request"}
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            parsed = text
        if parsed is None:
            shared = None
            new_native["request_native"] = None
        elif isinstance(parsed, dict):
            if shared is None:
                shared = {}
            shared.update(parsed)
            new_native["request_native"] = shared
        else:
            new_native["request_native"] = text
        out.append({**imp, "native": new_native})
    return out


# bids -----------------------------------------------------------------------------------------------


def _bid_meta(ext: Any) -> dict[str, Any] | None:
    """``{"networkName": demandSource}`` from ``ext.bidder.grid.demandSource``, else None."""
    if not isinstance(ext, dict):
        return None
    bidder = ext.get("bidder")
    grid = bidder.get("grid") if isinstance(bidder, dict) else None
    source = grid.get("demandSource") if isinstance(grid, dict) else None
    return {"networkName": source} if isinstance(source, str) and source else None


def _imp_type(imp_id: str, imps: list[dict[str, Any]]) -> tuple[str, BidderError | None]:
    for imp in imps:
        if imp.get("id", "") == imp_id:
            kind = first_media_type(imp, BANNER_VIDEO_NATIVE)
            if kind is not None:
                return kind, None
            return "", bad_server_response(f'Unknown impression type for ID: "{imp_id}"')
    return "", bad_server_response(f'Failed to find impression for ID: "{imp_id}"')


class GridAdapter(AnswerAdapter):
    answer_wording = GO_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        errors: list[BidderError] = []
        valid = []
        for imp in imps:
            try:
                uid = _uid(imp)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            if uid == 0:
                errors.append(bad_input("uid is empty"))
                continue
            valid.append(_with_gpid(imp))
        if not valid:
            errors.append(bad_input("No valid impressions for grid"))
            return [], errors
        body = {key: value for key, value in request.items() if key != "ext"}
        ext = _consolidated_ext(request, imps[0])
        if ext is not None:
            body["ext"] = ext
        body["imp"] = _natives_parsed(valid)
        return [json_call(self.endpoint, body, imp_ids(valid), HEADERS)], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = [bid for _, bid in answer_bids(answer)]
        try:  # part of decoding the answer in PBS-Go, so checked before any bid is typed
            content_types = [expect_string(bid.get("content_type"), "grid.GridBid.ContentType") for bid in bids]
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        imps = request.get("imp") or []
        result = BidderResponse(currency="USD")
        for bid, content_type in zip(bids, content_types, strict=True):
            error = None
            if content_type:
                bid_type = content_type
            else:
                impid = bid.get("impid", "")
                bid_type, error = _imp_type(impid if isinstance(impid, str) else "", imps)
            if error is not None:
                return None, [error]
            out = {key: value for key, value in bid.items() if key not in ("adm_native", "content_type")}
            if bid.get("adm_native") is not None and not bid.get("adm"):
                out["adm"] = go_json_text(bid["adm_native"])
            result.bids.append(TypedBid(out, bid_type, bid_meta=_bid_meta(bid.get("ext"))))
        return result, []


def build(config: AdapterConfig) -> GridAdapter:
    return GridAdapter(config)
