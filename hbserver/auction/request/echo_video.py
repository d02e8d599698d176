"""PBS-Go's ``imp.ext.prebid.options.echovideoattrs``: a bid for an imp that asked for it, and whose
imp came from a stored imp, carries that stored imp's ``video`` object as
``bid.ext.storedrequestattributes`` (PBS-Go's ``processStoredRequests`` and ``makeBidExtJSON``).

The flag is the incoming imp's own (as PBS-Go reads it before the stored imp is merged). Only a
request with such an imp looks at anything: the stored imps (already fetched for the merge, so
cached) are read again for their ``video``."""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.auction.request.stored import StoredSource


def echo_refs(body: dict[str, Any]) -> list[tuple[int, str]]:
    """(imp index, stored imp id) of the incoming imps that ask for the echo."""
    imps = body.get("imp")
    if not isinstance(imps, list):
        return []
    found = []
    for index, imp in enumerate(imps):
        ext = imp.get("ext") if isinstance(imp, dict) else None
        prebid = ext.get("prebid") if isinstance(ext, dict) else None
        if not isinstance(prebid, dict):
            continue
        options, stored = prebid.get("options"), prebid.get("storedrequest")
        if isinstance(options, dict) and options.get("echovideoattrs") is True and isinstance(stored, dict):
            stored_id = stored.get("id")
            if isinstance(stored_id, str) and stored_id:
                found.append((index, stored_id))
    return found


async def stored_video_attrs(
    refs: list[tuple[int, str]], merged: dict[str, Any], source: StoredSource, timeout_s: float
) -> dict[str, Any] | None:
    """Imp id (of the merged request) -> its stored imp's ``video``, for ``refs`` (:func:`echo_refs`);
    None when none has one. The merge already refused what cannot be fetched."""
    _, stored_imps, errors = await source.fetch_requests([], sorted({ref for _, ref in refs}), timeout_s)
    if errors:
        return None
    imps = merged.get("imp")
    found: dict[str, Any] = {}
    for index, ref in refs:
        raw = stored_imps.get(ref)
        try:
            stored = orjson.loads(raw) if raw is not None else None
        except orjson.JSONDecodeError:
            continue
        video = stored.get("video") if isinstance(stored, dict) else None
        imp = imps[index] if isinstance(imps, list) and index < len(imps) else None
        if video is not None and isinstance(imp, dict) and isinstance(imp.get("id"), str):
            found[imp["id"]] = video
    return found or None
