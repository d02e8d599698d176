"""The in-memory cache of one kind of stored data (``in_memory_cache``: lru, size, ttl_seconds).

Found documents live ``ttl_seconds`` (0 = until evicted). "Stored nowhere" is remembered too, so
that a flood of unknown ids does not reach the backends, but in an LRU of its own (unknown ids
cannot evict real documents) and for at most :data:`MISSING_TTL_SECONDS`: a file or HTTP
document added later is seen within that time; a database row added later is seen at the next
poll, which invalidates the id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from hbserver.stores.lru import LRUCache

MISSING_TTL_SECONDS = 10.0


class _Missing:
    __slots__ = ()


MISSING: Final = _Missing()


class KindCache:
    def __init__(self, size: int, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        missing_ttl = min(ttl_seconds, MISSING_TTL_SECONDS) if ttl_seconds > 0 else MISSING_TTL_SECONDS
        self._found: LRUCache[bytes] = LRUCache(size, ttl_seconds, clock)
        self._missing: LRUCache[bool] = LRUCache(size, missing_ttl, clock)

    def get(self, item_id: str) -> bytes | _Missing | None:
        """The document, MISSING when it is known to be stored nowhere, None when not cached."""
        data = self._found.get(item_id)
        if data is not None:
            return data
        if self._missing.get(item_id):
            return MISSING
        return None

    def put(self, item_id: str, data: bytes | None) -> None:
        """Remember a document, or (None) that the id is stored nowhere."""
        if data is None:
            self._found.pop(item_id)
            self._missing.put(item_id, True)
        else:
            self._missing.pop(item_id)
            self._found.put(item_id, data)

    def pop(self, item_id: str) -> None:
        self._found.pop(item_id)
        self._missing.pop(item_id)

    def __len__(self) -> int:
        return len(self._found) + len(self._missing)
