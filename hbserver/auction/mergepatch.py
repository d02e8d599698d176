"""RFC 7386 JSON Merge Patch, without mutating either document.

Stored requests and stored imps are the *target*, the incoming request the *patch* (PBS): incoming
values win, arrays are replaced whole, ``null`` deletes a key. Parts of the target that the patch
does not touch are shared, not copied, so callers must treat the result as read-only where it
came from the target (the auction core copies what it changes).
"""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = merge_patch(result.get(key), value)
        else:
            result[key] = value
    return result
