"""Transaction ids filled in as PBS-Go's ``validateAndFillSourceTID`` (host ``auto_gen_source_tid``).

``source.tid`` and every ``imp[].ext.tid`` that is missing, empty or the ``{{UUID}}`` macro gets a
random UUID, so bidders and analytics can tie their records of one auction together. Whether a bidder
then receives them is the ``transmitTid`` activity's (or ``ext.prebid.createtids``') decision.
"""

from __future__ import annotations

import uuid
from typing import Any

UUID_MACRO = "{{UUID}}"


def _missing(value: Any) -> bool:
    return not value or value == UUID_MACRO


def fill_tids(request: dict[str, Any]) -> None:
    """Fill the missing tids of ``request`` (the caller's own top level; imps and source are copied)."""
    source = request.get("source")
    if not isinstance(source, dict):
        request["source"] = {"tid": str(uuid.uuid4())}
    elif _missing(source.get("tid")):
        request["source"] = {**source, "tid": str(uuid.uuid4())}
    imps = request["imp"]
    if not any(_missing(imp.get("ext", {}).get("tid") if isinstance(imp.get("ext"), dict) else None) for imp in imps):
        return
    filled = []
    for imp in imps:
        ext = imp.get("ext")
        if not isinstance(ext, dict):
            ext = {}
        if _missing(ext.get("tid")):
            imp = {**imp, "ext": {**ext, "tid": str(uuid.uuid4())}}
        filled.append(imp)
    request["imp"] = filled
