"""PBS-Go's ``imp.ext.prebid.options.echovideoattrs``: a bid for an imp that asked for it, and whose
imp came from a stored imp, carries that stored imp's ``video`` object as
``bid.ext.storedrequestattributes`` (PBS-Go's ``processStoredRequests`` and ``makeBidExtJSON``).

The flag is the incoming imp's own (as PBS-Go reads it before the stored imp is merged). The stored
imps are those the merge parsed (:func:`~hbserver.auction.request.stored.merge_stored` hands them
over): nothing is fetched or parsed again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def echo_refs(body: dict[str, Any]) -> list[int]:
    """The indices of the incoming imps that name a stored imp and ask for the echo."""
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
                found.append(index)
    return found


def stored_video_attrs(
    refs: list[int], merged: dict[str, Any], stored_imps: Mapping[int, Any]
) -> dict[str, Any] | None:
    """Imp id (of the merged request) -> its stored imp's ``video``, for the imps at ``refs``
    (:func:`echo_refs`); ``stored_imps``: the merge's parsed stored imps by imp index. None when none
    has a video."""
    imps = merged.get("imp")
    found: dict[str, Any] = {}
    for index in refs:
        stored = stored_imps.get(index)
        video = stored.get("video") if isinstance(stored, dict) else None
        imp = imps[index] if isinstance(imps, list) and index < len(imps) else None
        if video is not None and isinstance(imp, dict) and isinstance(imp.get("id"), str):
            found[imp["id"]] = video
    return found or None
