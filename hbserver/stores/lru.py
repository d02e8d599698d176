"""A bounded least-recently-used map with per-entry expiry; O(1) get and put."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
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
