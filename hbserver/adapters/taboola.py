"""Taboola adapter: up to two OpenRTB calls, one for the native imps and one for the banner imps, to
``{{.MediaType}}.bidder.taboola.com/OpenRTB/PS/auction?exchange={{.GvlID}}&publisher={{.PublisherID}}``.

The params of all imps are read, in imp order, into one set of values, as PBS-Go decodes them all into
one struct: a value an imp does not name stays as an earlier imp left it. Per imp: ``tagId`` (else
``tagid``) replaces ``imp.tagid`` (none when both are empty), a non-zero ``bidfloor`` ``imp.bidfloor``
and, on a banner imp, ``position`` ``banner.pos`` (as a Go int8: 300 is sent as 44). An imp with a
banner goes in the display call, else one with a native object in the native call, else nowhere.
After the last imp, ``publisherId`` becomes ``site.id``, ``site.name`` and ``site.publisher`` (on an
app: ``app.id`` and ``app.publisher``), ``publisherDomain`` (else the site's own) ``site.domain``;
``bcat``/``badv``, when given, replace the request's; ``pageType`` is added to ``request.ext``. An imp
whose ``ext`` or params cannot be read, or a ``request.ext`` that is no object when a ``pageType`` is
given, fails the whole request (every such error is reported).

The endpoint's ``{{.MediaType}}`` is ``native`` or ``display``, ``{{.PublisherID}}`` the publisher id
(as given) and ``{{.GvlID}}`` the host's GDPR vendor id ("" when it has none). Bids are banner or
native by their imp (banner first); a bid for no such imp is an error. ``${AUCTION_PRICE}`` in a bid's
``nurl``, ``adm`` and ``burl`` is replaced by its price.
"""

from __future__ import annotations

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
)
from hbserver.adapters.common import (
    PUBLISHER_WORDING,
    JsonShapeError,
    any_imp_bid_type,
    expect_string,
    found,
    imp_ids,
    json_call,
    resolve_macros,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    go_media_objects,
    go_members,
    go_read_int,
    go_request_top,
    go_strings,
    go_typed_bids,
    go_value,
    go_wrap_int,
    imp_bidder_params,
    set_omitempty,
    with_auction_price,
)

_ANSWER_WORDING = PUBLISHER_WORDING
_WHERE = "openrtb_ext.ImpExtTaboola."
# ImpExtTaboola's fields: JSON name -> Go name
_FIELDS = {
    "publisherId": "PublisherId",
    "publisherDomain": "PublisherDomain",
    "bidfloor": "BidFloor",
    "tagid": "TagId",
    "tagId": "TagID",
    "bcat": "BCat",
    "badv": "BAdv",
    "pageType": "PageType",
    "position": "Position",
}
_FIELD_NAMES = tuple(_FIELDS)


class _Params:
    """``openrtb_ext.ImpExtTaboola`` as the imps' params leave it, one imp after another."""

    __slots__ = ("badv", "bcat", "bidfloor", "page_type", "position", "publisher_domain", "publisher_id", "tag")

    def __init__(self) -> None:
        self.publisher_id = ""
        self.publisher_domain = ""
        self.bidfloor: float = 0
        self.tag = {"tagid": "", "tagId": ""}
        self.bcat: list[str] | None = None
        self.badv: list[str] | None = None
        self.page_type = ""
        self.position: int | None = None

    def read(self, params: dict[str, Any]) -> None:
        """Take ``params`` over the values held, key by key in document order (keys match ignoring
        case, an exact match first); JsonShapeError in PBS-Go's words at the first value of the
        wrong type."""
        for name, value in go_members(params, *_FIELD_NAMES):
            where = _WHERE + _FIELDS[name]
            if name in ("bcat", "badv"):
                setattr(self, name, go_strings(value, where))
            elif name == "bidfloor":
                self.bidfloor = self.bidfloor if value is None else go_value(value, GoKind.FLOAT, where)
            elif name == "position":
                self.position = None if value is None else go_read_int(value, where)
            elif name == "publisherId":
                self.publisher_id = expect_string(value, where)
            elif name == "publisherDomain":
                self.publisher_domain = expect_string(value, where)
            elif name == "pageType":
                self.page_type = expect_string(value, where)
            else:
                self.tag[name] = expect_string(value, where)

    @property
    def tagid(self) -> str:
        return self.tag["tagId"] or self.tag["tagid"]


def _build_imp(imp: dict[str, Any], params: _Params) -> dict[str, Any]:
    out = dict(imp)
    set_omitempty(out, "tagid", params.tagid)
    if params.bidfloor:
        out["bidfloor"] = params.bidfloor
    if imp.get("banner") is not None and params.position is not None:
        out["banner"] = {**imp["banner"], "pos": go_wrap_int(params.position, 8)}
    return go_media_objects(out)


def _with_publisher(body: dict[str, Any], request: dict[str, Any], params: _Params) -> None:
    """``site`` (and ``app``) in ``body`` carrying the publisher id (and domain) of the params."""
    publisher_id = params.publisher_id
    publisher = {"id": publisher_id} if publisher_id else {}
    site = request.get("site")
    if isinstance(site, dict):
        site = dict(site)
        set_omitempty(site, "id", publisher_id)
        set_omitempty(site, "name", publisher_id)
        set_omitempty(site, "domain", params.publisher_domain or request["site"].get("domain") or "")
        site["publisher"] = publisher
        body["site"] = site
    app = request.get("app")
    if isinstance(app, dict):
        app = dict(app)
        set_omitempty(app, "id", publisher_id)
        app["publisher"] = publisher
        body["app"] = app


def _ext_with_page_type(ext: Any, page_type: str) -> dict[str, Any]:
    """``request.ext`` with ``pageType`` set; JsonShapeError (PBS-Go's text) when the ext is not a
    JSON object."""
    if ext is None:
        return {"pageType": page_type}
    if not isinstance(ext, dict):
        raise JsonShapeError("could not unmarshal request ext: " + NOT_AN_OBJECT.format(found=found(ext)))
    return {**ext, "pageType": page_type}


def _publisher_of(body: dict[str, Any]) -> str:
    """The endpoint's publisher: the site's id, else the app's."""
    for place in ("site", "app"):
        holder = body.get(place)
        if isinstance(holder, dict) and holder.get("id"):
            return str(holder["id"])
    return ""


def _typed(imps: list[dict[str, Any]], bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by the first imp of its id that asks for banner or native (banner first), its
    price macros resolved."""
    bid_type = any_imp_bid_type(imps, bid["impid"], ("banner", "native"))
    if bid_type is None:
        return bad_input(f'Failed to find banner/native impression "{bid["impid"]}" ')
    return TypedBid(with_auction_price(bid), bid_type)


class TaboolaAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        gvl_id = config.extra.get("gvl_id")
        self.gvl_id = str(gvl_id) if isinstance(gvl_id, int) and gvl_id > 0 else ""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        params = _Params()
        errors: list[BidderError] = []
        native: list[dict[str, Any]] = []
        banner: list[dict[str, Any]] = []
        for imp in request.get("imp") or ():
            try:
                params.read(imp_bidder_params(imp, null_is_absent=True))
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            if imp.get("banner") is not None:
                banner.append(_build_imp(imp, params))
            elif imp.get("native") is not None:
                native.append(_build_imp(imp, params))
        body = go_request_top(request)
        _with_publisher(body, request, params)
        if params.bcat is not None:
            set_omitempty(body, "bcat", params.bcat)
        if params.badv is not None:
            set_omitempty(body, "badv", params.badv)
        if params.page_type:
            try:
                body["ext"] = _ext_with_page_type(request.get("ext"), params.page_type)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        if errors:
            return [], errors
        values = {"PublisherID": _publisher_of(body), "GvlID": self.gvl_id}
        calls = []
        for imps, media_type in ((native, "native"), (banner, "display")):
            if imps:
                uri = resolve_macros(self.endpoint, {**values, "MediaType": media_type})
                calls.append(json_call(uri, {**body, "imp": imps}, imp_ids(imps), {}))
        return calls, []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, partial(_typed, request.get("imp") or []), _ANSWER_WORDING)


def build(config: AdapterConfig) -> TaboolaAdapter:
    return TaboolaAdapter(config)
