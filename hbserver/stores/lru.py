"""A bounded least-recently-used map with per-entry expiry; O(1) get and put."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

_ABSENT = object()


class LRUCache(Generic[V]):
    """At most ``size`` entries; each lives ``ttl_seconds`` (0 = until evicted)."""

    def __init__(self, size: int, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.ttl = ttl_seconds
        self._clock = clock
        self._data: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: str, default: V | None = None) -> V | None:
        entry = self._data.get(key, _ABSENT)
        if entry is _ABSENT:
            return default
        expires, value = entry  # type: ignore[misc]
        if expires and expires <= self._clock():
            del self._data[key]
            return default
        self._data.move_to_end(key)
        return value

    def put(self, key: str, value: V) -> None:
        expires = self._clock() + self.ttl if self.ttl > 0 else 0.0
        data = self._data
        data[key] = (expires, value)
        data.move_to_end(key)
        if len(data) > self.size:
            data.popitem(last=False)

    def pop(self, key: str) -> None:
        self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()


class SeenBefore:
    """Which keys came before: at most ``size`` remembered, as hashes (the oldest forgotten first).

    The gate in front of a memo whose miss costs more than no memo (a prepared AMP request, a call
    plan): the work to keep something is done only for a key met before, so traffic whose keys never
    repeat pays one hash and one dict insert, not the memo's build. Two keys of one hash count as one:
    the only effect is a build one visit early.
    """

    __slots__ = ("_seen", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self._seen: dict[int, None] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def check(self, key: Hashable) -> bool:
        """Whether ``key`` came before; if not, it is remembered now."""
        digest = hash(key)
        seen = self._seen
        if digest in seen:
            return True
        if len(seen) >= self.size:
            del seen[next(iter(seen))]
        seen[digest] = None
        return False
