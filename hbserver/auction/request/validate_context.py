"""PBS-Go's checks of the request's context objects: site, app, dooh, user (with its EIDs), regs, device.

Each ``check_*`` raises RequestError with PBS-Go's text (``endpoints/openrtb2/auction.go``:
``validateSite``, ``validateApp``, ``validateDOOH``, ``validateUser``, ``validateEIDs``,
``validateRegs``, ``validateDevice``). ``filter_eids`` is the one that repairs instead of refusing:
EIDs without a source and UIDs without an id are removed, each with PBS-Go's warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hbserver.auction.common.messages import Message
from hbserver.auction.common.request_error import RequestError
from hbserver.auction.request.ortb_types import app_ext_error, site_ext_error
from hbserver.auction.request.validate_imp import go_number

INVALID_USER_EIDS = 10013  # PBS-Go InvalidUserEIDsWarningCode
INVALID_USER_UIDS = 10014  # PBS-Go InvalidUserUIDsWarningCode

_BUYERUIDS_REQUIRED = (
    'request.user.ext.prebid requires a "buyeruids" property with at least one ID defined. '
    "If none exist, then request.user.ext.prebid should not be defined."
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def check_site(request: dict[str, Any]) -> None:
    site = request.get("site")
    if site is None:
        return
    site = _dict(site)
    if not site.get("id") and not site.get("page"):
        raise RequestError("request.site should include at least one of request.site.id or request.site.page.")
    problem = site_ext_error(request)
    if problem is not None:
        raise RequestError(problem)
    amp = _dict(site.get("ext")).get("amp")
    if amp is not None and amp not in (0, 1):
        raise RequestError("request.site.ext.amp must be either 1, 0, or undefined")


def check_app(request: dict[str, Any]) -> None:
    if request.get("app") is None:
        return
    problem = app_ext_error(request)
    if problem is not None:
        raise RequestError(problem)


def check_dooh(request: dict[str, Any]) -> None:
    dooh = request.get("dooh")
    if dooh is None:
        return
    dooh = _dict(dooh)
    if not dooh.get("id") and not dooh.get("venuetype"):
        raise RequestError("request.dooh should include at least one of request.dooh.id or request.dooh.venuetype.")


def check_user(
    request: dict[str, Any], is_bidder: Callable[[str], bool], warnings: list[Message]
) -> dict[str, Any]:
    """``validateUser``; returns the request, with a new ``user`` when EIDs were removed."""
    user = request.get("user")
    if not isinstance(user, dict):
        return request
    if go_number(_dict(user.get("geo")).get("accuracy")) < 0:
        raise RequestError("request.user.geo.accuracy must be a positive number")
    ext = user.get("ext")
    if ext is not None and not isinstance(ext, dict):
        raise RequestError("request.user.ext object is not valid: user.ext must be an object")
    prebid = _dict(ext).get("prebid")
    if prebid is not None:
        buyeruids = _dict(prebid).get("buyeruids")
        if not isinstance(buyeruids, dict) or not buyeruids:
            raise RequestError(_BUYERUIDS_REQUIRED)
        for name in buyeruids:
            if not is_bidder(name):
                raise RequestError(
                    f"request.user.ext.{name} is neither a known bidder name nor an alias in request.ext.prebid.aliases"
                )
    eids = user.get("eids")
    if isinstance(eids, list) and eids:
        kept = filter_eids(eids, warnings)
        if kept is not eids:
            request = {**request, "user": {**user, "eids": kept}}
    return request


def filter_eids(eids: list[Any], warnings: list[Message]) -> list[Any]:
    """PBS-Go ``validateEIDs``: an EID without ``source`` or left without UIDs is removed, a UID without
    ``id`` too, each with PBS-Go's warning. Returns ``eids`` itself when nothing was removed."""
    kept: list[Any] = []
    changed = False
    for eid_index, eid in enumerate(eids):
        eid = _dict(eid)
        source = eid.get("source")
        if not source:
            warnings.append(Message(INVALID_USER_EIDS, f"request.user.eids[{eid_index}] removed due to missing source"))
            changed = True
            continue
        uids = eid.get("uids")
        uids = uids if isinstance(uids, list) else []
        valid = []
        for uid_index, uid in enumerate(uids):
            if _dict(uid).get("id"):
                valid.append(uid)
            else:
                warnings.append(Message(
                    INVALID_USER_UIDS, f"request.user.eids[{eid_index}].uids[{uid_index}] removed due to empty ids"
                ))
        if not valid:
            warnings.append(Message(
                INVALID_USER_EIDS, f"request.user.eids[{eid_index}] (source: {source}) removed due to empty uids"
            ))
            changed = True
            continue
        if len(valid) != len(uids):
            eid = {**eid, "uids": valid}
            changed = True
        kept.append(eid)
    return kept if changed else eids


def check_regs(request: dict[str, Any]) -> None:
    gdpr = _dict(request.get("regs")).get("gdpr")
    if gdpr is not None and gdpr not in (0, 1):
        raise RequestError("request.regs.gdpr must be either 0 or 1")


def check_device(request: dict[str, Any]) -> None:
    device = request.get("device")
    if not isinstance(device, dict):
        return
    for key in ("w", "h", "ppi"):
        if go_number(device.get(key)) < 0:
            raise RequestError(f"request.device.{key} must be a positive number")
    if go_number(_dict(device.get("geo")).get("accuracy")) < 0:
        raise RequestError("request.device.geo.accuracy must be a positive number")

