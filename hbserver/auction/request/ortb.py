"""OpenRTB 2.5 <-> 2.6 field places, as PBS-Go moves them (``openrtb_ext/convert_up.go``,
``openrtb_ext/convert_down.go``).

The exchange works on 2.6 places; a bidder that does not take 2.6 (see
:func:`hbserver.auction.exchange.split.takes_26`) receives the 2.5 places. Exactly these move, both ways:
``source.schain`` <-> ``source.ext.schain``, ``regs.gdpr`` <-> ``regs.ext.gdpr``, ``user.consent``
<-> ``user.ext.consent``, ``regs.us_privacy`` <-> ``regs.ext.us_privacy``, ``user.eids`` <->
``user.ext.eids``, ``imp.rwdd`` <-> ``imp.ext.prebid.is_rewarded_inventory``; on the way up the 2.4
place ``ext.schain`` too. GPP (``regs.gpp``, ``regs.gpp_sid``) never moves: a 2.5 bidder gets it at
the top level, as PBS-Go sends it, and a ``regs.ext.gpp`` in the request stays where it is (PBS-Go
reads GPP from ``regs.gpp`` only).

Empty values follow PBS-Go's typed fields: a 2.6 place holding ``null`` (or ``""`` for the consent
strings, 0 for ``rwdd``) counts as unset, so a 2.5 value fills it; a 2.5 value carrying nothing
(``null``, ``""``, ``[]`` eids, ``rwdd`` 0) is dropped without filling anything. Both directions copy
only the objects they change; the input of :func:`upconvert` is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _is_none(value: Any) -> bool:
    return value is None


def _no_text(value: Any) -> bool:
    return value is None or value == ""


def _no_items(value: Any) -> bool:
    return value is None or value == []


def _no_reward(value: Any) -> bool:
    return value is None or value == 0


# (object, field - the same name in both places, "the 2.6 place is unset", "the 2.5 value is empty")
_FIELDS: tuple[tuple[str, str, Callable[[Any], bool], Callable[[Any], bool]], ...] = (
    ("source", "schain", _is_none, _is_none),  # move SupplyChain From25To26 / From26To25
    ("regs", "gdpr", _is_none, _is_none),  # moveGDPR (a *int8: 0 is a value)
    ("user", "consent", _no_text, _no_text),  # moveConsent (a string: "" is unset)
    ("regs", "us_privacy", _no_text, _no_text),  # moveUSPrivacy
    ("user", "eids", _is_none, _no_items),  # moveEID (UserExt writes ext.eids only when non-empty)
)
REWARDED = "is_rewarded_inventory"


def upconvert(request: dict[str, Any]) -> dict[str, Any]:
    """2.4/2.5 places -> 2.6 places (PBS-Go ``ConvertUpTo26``); a 2.6 value already set wins and
    the older copy is dropped."""
    out = _schain_from_24(request)
    for obj_name, field, unset26, empty25 in _FIELDS:
        obj = out.get(obj_name)
        if not isinstance(obj, dict):
            continue
        ext = obj.get("ext")
        if not isinstance(ext, dict) or field not in ext:
            continue
        new_obj = dict(obj)
        new_ext = dict(ext)
        value = new_ext.pop(field)
        if not empty25(value) and unset26(new_obj.get(field)):
            new_obj[field] = value
        if new_ext:
            new_obj["ext"] = new_ext
        else:
            del new_obj["ext"]
        if out is request:
            out = dict(request)
        out[obj_name] = new_obj
    imps = out.get("imp")
    if isinstance(imps, list) and any(_imp_has_rewarded(imp) for imp in imps):
        if out is request:
            out = dict(request)
        out["imp"] = [_upconvert_imp(imp) if _imp_has_rewarded(imp) else imp for imp in imps]
    return out


def _schain_from_24(request: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go ``moveSupplyChainFrom24To25``: ``ext.schain`` goes to ``source`` unless ``source``
    has a chain (2.5 or 2.6 place) already; :func:`upconvert` then lifts it to ``source.schain``."""
    ext = request.get("ext")
    if not isinstance(ext, dict) or "schain" not in ext:
        return request
    out = dict(request)
    new_ext = dict(ext)
    chain = new_ext.pop("schain")
    if new_ext:
        out["ext"] = new_ext
    else:
        del out["ext"]
    source = request.get("source")
    if chain is None or not (source is None or isinstance(source, dict)):
        return out
    source = source or {}
    source_ext = source.get("ext")
    has_25 = isinstance(source_ext, dict) and source_ext.get("schain") is not None
    if source.get("schain") is None and not has_25:
        out["source"] = {**source, "schain": chain}
    return out


def _imp_has_rewarded(imp: Any) -> bool:
    """Has ``imp`` a non-null ``ext.prebid.is_rewarded_inventory`` (PBS-Go leaves a null alone)?"""
    if not isinstance(imp, dict):
        return False
    ext = imp.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    return isinstance(prebid, dict) and prebid.get(REWARDED) is not None


def _upconvert_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go ``moveRewardedFromPrebidExtTo26``."""
    ext = dict(imp["ext"])
    prebid = dict(ext["prebid"])
    value = prebid.pop(REWARDED)
    ext["prebid"] = prebid
    new_imp = dict(imp)
    new_imp["ext"] = ext
    if value != 0 and _no_reward(new_imp.get("rwdd")):
        new_imp["rwdd"] = value
    return new_imp


def has_26_fields(request: dict[str, Any]) -> bool:
    """Does :func:`downconvert` have anything to change in ``request``?"""
    for obj_name, field, _, _ in _FIELDS:
        obj = request.get(obj_name)
        if isinstance(obj, dict) and field in obj:
            return True
    return any(isinstance(imp, dict) and "rwdd" in imp for imp in request.get("imp") or ())


# The same fields grouped by object, for downconvert.
_FIELDS_BY_OBJECT = tuple(
    (name, tuple(row[1:] for row in _FIELDS if row[0] == name)) for name in dict.fromkeys(row[0] for row in _FIELDS)
)

DownconvertMemo = dict[int, tuple[Any, dict[str, Any]]]


def _down_object(obj: dict[str, Any], fields: tuple[tuple[str, Any, Any], ...]) -> dict[str, Any]:
    """One object's 2.6 fields to its ``ext`` (PBS-Go's ``move*From26To25``): an unset 2.6 value is
    not moved (PBS-Go's marshal leaves it out), an empty one clears the 2.5 place."""
    if not any(field in obj for field, _, _ in fields):
        return obj
    new_obj = dict(obj)
    ext = new_obj.get("ext")
    new_ext = dict(ext) if isinstance(ext, dict) else {}
    touched = False
    for field, unset26, empty25 in fields:
        if field not in new_obj:
            continue
        value = new_obj.pop(field)
        if unset26(value):
            continue
        touched = True
        if empty25(value):
            new_ext.pop(field, None)
        else:
            new_ext[field] = value
    if new_ext:
        new_obj["ext"] = new_ext
    elif touched:
        new_obj.pop("ext", None)
    return new_obj


def downconvert(request: dict[str, Any], memo: DownconvertMemo | None = None) -> dict[str, Any]:
    """2.6 places -> 2.5 places (PBS-Go ``ConvertDownTo25``); ``request`` is the bidder's own copy.

    ``memo`` (one per auction) shares the converted ``regs``/``user``/``source`` among the bidders
    whose copy still holds the original object, so each is converted once per auction.
    """
    for obj_name, fields in _FIELDS_BY_OBJECT:
        obj = request.get(obj_name)
        if not isinstance(obj, dict):
            continue
        if memo is None:
            request[obj_name] = _down_object(obj, fields)
            continue
        seen = memo.get(id(obj))
        if seen is None or seen[0] is not obj:  # the original is kept alive, so its id stays its own
            seen = memo[id(obj)] = (obj, _down_object(obj, fields))
        request[obj_name] = seen[1]
    imps = request.get("imp") or []
    for index, imp in enumerate(imps):
        if "rwdd" in imp:
            imps[index] = _downconvert_imp(imp)
    return request


def _downconvert_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go ``moveRewardedFrom26ToPrebidExt``: a non-zero ``rwdd`` replaces
    ``ext.prebid.is_rewarded_inventory``; 0 is unset (PBS-Go's marshal leaves it out)."""
    new_imp = dict(imp)
    value = new_imp.pop("rwdd")
    if _no_reward(value):
        return new_imp
    ext = dict(new_imp.get("ext") or {})
    prebid = dict(ext.get("prebid") or {})
    prebid[REWARDED] = value
    ext["prebid"] = prebid
    new_imp["ext"] = ext
    return new_imp
