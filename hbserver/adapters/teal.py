"""Teal adapter: every imp with a valid ``account`` in one OpenRTB call to the configured endpoint;
the answer and bid typing are the recipe ``recipes/teal.yaml``'s, the call Teal's own.

An imp needs a non-blank ``account``; a ``placement``, when given, must not be blank either and is
sent as ``imp.ext.prebid.storedrequest.id``. The first valid imp's account becomes the publisher id
of the site and of the app; a later imp with another account is dropped (Teal takes one account per
request). The request's ``ext.bids`` is set to ``{"pbs": 1}``. Bids are typed by ``mtype`` (banner,
video, native), else by their imp's media (banner, video, native); a bid with neither is reported
and left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, found, imp_ids, json_call
from hbserver.adapters.golike import (
    GO_SPACE,
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    go_media_objects,
    go_members,
    go_quote,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.recipe import RecipeAdapter

_PARAMS = "openrtb_ext.ExtImpTeal"


class _DroppedImp(ValueError):
    """An imp that is not sent; the message is the bad-input error's."""


def _params(imp: Mapping[str, Any]) -> tuple[str, str | None]:
    """(account, placement or None when absent), validated; _DroppedImp in Teal's words."""
    imp_id = imp.get("id", "")
    try:
        bidder = imp_bidder_params(imp)
    except ImpExtError:
        raise _DroppedImp(f"Error parsing imp.ext for impression {imp_id}") from None
    except JsonShapeError:
        raise _DroppedImp(f"Error parsing imp.ext.bidder for impression {imp_id}") from None
    account, placement = "", None
    try:
        for name, value in go_members(bidder, "account", "placement"):
            text = go_value(value, GoKind.STRING, f"{_PARAMS}.{name.capitalize()}")
            if name == "account":
                account = text or ""
            else:
                placement = text  # null leaves the pointer nil (absent)
    except JsonShapeError:
        raise _DroppedImp(f"Error parsing imp.ext.bidder for impression {imp_id}") from None
    if not account.strip(GO_SPACE):
        raise _DroppedImp("account parameter failed validation")
    if placement is not None and not placement.strip(GO_SPACE):
        raise _DroppedImp("placement parameter failed validation")
    return account, placement


def _with_placement(imp: dict[str, Any], placement: str | None) -> dict[str, Any]:
    """``imp`` with ``ext.prebid.storedrequest.id`` = ``placement`` (a prebid or storedrequest that
    is no object is replaced by a new one); ``imp`` itself without a placement."""
    if placement is None:
        return imp
    ext = imp.get("ext")
    ext = ext if isinstance(ext, dict) else {}
    prebid = ext.get("prebid")
    prebid = prebid if isinstance(prebid, dict) else {}
    stored = prebid.get("storedrequest")
    stored = stored if isinstance(stored, dict) else {}
    return {**imp, "ext": {**ext, "prebid": {**prebid, "storedrequest": {**stored, "id": placement}}}}


def _with_publisher(owner: Any, account: str) -> Any:
    """A site or app with its publisher id set to ``account`` (null stays null)."""
    if not isinstance(owner, dict):
        return owner
    publisher = owner.get("publisher")
    return {**owner, "publisher": {**(publisher if isinstance(publisher, dict) else {}), "id": account}}


class TealAdapter(RecipeAdapter):
    """The recipe ``recipes/teal.yaml`` (the answer and bid typing), the call built by Teal's rules."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        account = ""
        for imp in request.get("imp") or ():
            try:
                imp_account, placement = _params(imp)
            except _DroppedImp as exc:
                errors.append(bad_input(str(exc)))
                continue
            if not account:
                account = imp_account
            elif imp_account != account:
                errors.append(bad_input(
                    f"mixed-account requests are not supported: imp {go_quote(str(imp.get('id', '')))} "
                    f"account {go_quote(imp_account)} differs from request account {go_quote(account)}"
                ))  # fmt: skip
                continue
            imps.append(go_media_objects(_with_placement(imp, placement)))
        if not imps:
            return [], errors
        ext = request.get("ext")
        if ext is not None and not isinstance(ext, dict):
            message = NOT_AN_OBJECT.format(found=found(ext))
            return [], [*errors, BidderError(f"teal: failed parsing request.ext: {message}")]
        body = go_request_top(request)
        body["imp"] = imps
        for key in ("site", "app"):
            if body.get(key) is not None:
                body[key] = _with_publisher(body[key], account)
        body["ext"] = {**(ext or {}), "bids": {"pbs": 1}}
        return [json_call(self.endpoint, body, imp_ids(imps), JSON_HEADERS)], errors


def build(config: AdapterConfig) -> TealAdapter:
    return TealAdapter.of_code("teal", config)
