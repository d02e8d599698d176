"""OpenRTB 2.5 <-> 2.6 field places (PBS-Go ``ortb/upconvert`` / ``downconvert``).

The exchange works on 2.6 places; a bidder whose ``openrtb_version`` is 2.5 receives the 2.5
places: ``regs.ext.gdpr``, ``regs.ext.us_privacy``, ``user.ext.consent``, ``user.ext.eids``,
``source.ext.schain``, ``imp.ext.prebid.is_rewarded_inventory``. Both directions copy only the
objects they change; the input is never mutated.
"""

from __future__ import annotations

from typing import Any

# (object, 2.6 field, 2.5 field under object.ext)
_MOVES = (
    ("regs", "gdpr", "gdpr"),
    ("regs", "us_privacy", "us_privacy"),
    ("regs", "gpp", "gpp"),
    ("regs", "gpp_sid", "gpp_sid"),
    ("user", "consent", "consent"),
    ("user", "eids", "eids"),
    ("source", "schain", "schain"),
)


def upconvert(request: dict[str, Any]) -> dict[str, Any]:
    """2.5 places -> 2.6 places; a 2.6 value already present wins and the 2.5 copy is dropped."""
    out = request
    for obj_name, field26, field25 in _MOVES:
        obj = out.get(obj_name)
        if not isinstance(obj, dict):
            continue
        ext = obj.get("ext")
        if not isinstance(ext, dict) or field25 not in ext:
            continue
        new_obj = dict(obj)
        new_ext = dict(ext)
        value = new_ext.pop(field25)
        if new_obj.get(field26) is None and value is not None:
            new_obj[field26] = value
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


def _imp_has_rewarded(imp: Any) -> bool:
    if not isinstance(imp, dict):
        return False
    prebid = (imp.get("ext") or {}).get("prebid") if isinstance(imp.get("ext"), dict) else None
    return isinstance(prebid, dict) and "is_rewarded_inventory" in prebid


def _upconvert_imp(imp: dict[str, Any]) -> dict[str, Any]:
    ext = dict(imp["ext"])
    prebid = dict(ext["prebid"])
    value = prebid.pop("is_rewarded_inventory")
    ext["prebid"] = prebid
    new_imp = dict(imp)
    new_imp["ext"] = ext
    if new_imp.get("rwdd") is None and value is not None:
        new_imp["rwdd"] = value
    return new_imp


def has_26_fields(request: dict[str, Any]) -> bool:
    """Does :func:`downconvert` have anything to move in ``request``?"""
    for obj_name, field26, _ in _MOVES:
        obj = request.get(obj_name)
        if isinstance(obj, dict) and field26 in obj:
            return True
    return any(isinstance(imp, dict) and "rwdd" in imp for imp in request.get("imp") or ())


# The same moves grouped by object, for downconvert.
_MOVES_BY_OBJECT: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = tuple(
    (name, tuple((f26, f25) for obj, f26, f25 in _MOVES if obj == name))
    for name in dict.fromkeys(obj for obj, _, _ in _MOVES)
)

DownconvertMemo = dict[int, tuple[Any, dict[str, Any]]]


def _down_object(obj: dict[str, Any], moves: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    if not any(field26 in obj for field26, _ in moves):
        return obj
    new_obj = dict(obj)
    ext = dict(new_obj["ext"]) if isinstance(new_obj.get("ext"), dict) else {}
    for field26, field25 in moves:
        if field26 in new_obj:
            ext[field25] = new_obj.pop(field26)
    new_obj["ext"] = ext
    return new_obj


def downconvert(request: dict[str, Any], memo: DownconvertMemo | None = None) -> dict[str, Any]:
    """2.6 places -> 2.5 places (for bidders that speak 2.5); ``request`` is the bidder's own copy.

    ``memo`` (one per auction) shares the converted ``regs``/``user``/``source`` among the bidders
    whose copy still holds the original object, so each is converted once per auction.
    """
    for obj_name, moves in _MOVES_BY_OBJECT:
        obj = request.get(obj_name)
        if not isinstance(obj, dict):
            continue
        if memo is None:
            request[obj_name] = _down_object(obj, moves)
            continue
        seen = memo.get(id(obj))
        if seen is None or seen[0] is not obj:  # the original is kept alive, so its id stays its own
            seen = memo[id(obj)] = (obj, _down_object(obj, moves))
        request[obj_name] = seen[1]
    imps = request.get("imp") or []
    for index, imp in enumerate(imps):
        if "rwdd" in imp:
            new_imp = dict(imp)
            value = new_imp.pop("rwdd")
            ext = dict(new_imp.get("ext") or {})
            prebid = dict(ext.get("prebid") or {})
            prebid["is_rewarded_inventory"] = value
            ext["prebid"] = prebid
            new_imp["ext"] = ext
            imps[index] = new_imp
    return request
