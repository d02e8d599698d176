"""Transaction ids: filled in as PBS-Go's ``validateAndFillSourceTID`` (host ``auto_gen_source_tid``),
or dropped for every bidder when the request says ``ext.prebid.createtids: false`` (PBS-Java; Prebid.js
sends it unless its ``enableTIDs`` is on).

``source.tid`` and every ``imp[].ext.tid`` that is missing, empty or the ``{{UUID}}`` macro gets a
random UUID, so bidders and analytics can tie their records of one auction together. Whether a bidder
then receives them is the ``transmitTid`` activity's decision, unless ``createtids`` is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hbserver.uuids import new_uuid

UUID_MACRO = "{{UUID}}"


def _missing(value: Any) -> bool:
    return not value or value == UUID_MACRO


def apply_tids(request: dict[str, Any], auto_generate: bool, new_id: Callable[[], str] = new_uuid) -> None:
    """``createtids: false`` drops every tid once for all bidders; else fill when ``auto_generate``
    (with ids from ``new_id``)."""
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if isinstance(prebid, dict) and prebid.get("createtids") is False:
        drop_tids(request)
    elif auto_generate:
        fill_tids(request, new_id)


def drop_tids(request: dict[str, Any]) -> None:
    """``source.tid`` and ``imp[].ext.tid`` removed (copies; the caller owns only the top level)."""
    source = request.get("source")
    if isinstance(source, dict) and "tid" in source:
        request["source"] = {k: v for k, v in source.items() if k != "tid"}
    imps = request["imp"]
    if any(isinstance(imp.get("ext"), dict) and "tid" in imp["ext"] for imp in imps):
        request["imp"] = [
            {**imp, "ext": {k: v for k, v in imp["ext"].items() if k != "tid"}}
            if isinstance(imp.get("ext"), dict) and "tid" in imp["ext"] else imp
            for imp in imps
        ]


def fill_tids(request: dict[str, Any], new_id: Callable[[], str] = new_uuid) -> None:
    """Fill the missing tids of ``request`` (the caller's own top level; imps and source are copied)."""
    source = request.get("source")
    if not isinstance(source, dict):
        request["source"] = {"tid": new_id()}
    elif _missing(source.get("tid")):
        request["source"] = {**source, "tid": new_id()}
    imps = request["imp"]
    if not any(_missing(imp.get("ext", {}).get("tid") if isinstance(imp.get("ext"), dict) else None) for imp in imps):
        return
    filled = []
    for imp in imps:
        ext = imp.get("ext")
        if not isinstance(ext, dict):
            ext = {}
        if _missing(ext.get("tid")):
            imp = {**imp, "ext": {**ext, "tid": new_id()}}
        filled.append(imp)
    request["imp"] = filled
