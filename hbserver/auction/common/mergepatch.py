"""RFC 7386 JSON Merge Patch, without mutating either document.

Stored requests and stored imps are the *target*, the incoming request the *patch* (PBS): incoming values
win, arrays are replaced whole, ``null`` deletes a key. Parts of the target that the patch
does not touch are shared, not copied, so callers must treat the result as read-only where it
came from the target (the auction core copies what it changes).

Iterative, not recursive: a patch of any depth (every document is held to
:data:`~hbserver.web.body.MAX_JSON_DEPTH` before it gets here, but this must not depend on it)
never reaches Python's recursion limit.
"""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    pending = [(result, patch)]  # (copy being written, the patch object that applies to it)
    while pending:
        out, changes = pending.pop()
        for key, value in changes.items():
            if value is None:
                out.pop(key, None)
            elif isinstance(value, dict):
                below = out.get(key)
                child = dict(below) if isinstance(below, dict) else {}
                out[key] = child
                pending.append((child, value))
            else:
                out[key] = value
    return result
