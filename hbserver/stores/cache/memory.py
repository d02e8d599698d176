"""The in-process cache store: a byte-bounded LRU map with a deadline per item.

Every operation is O(1): an ``OrderedDict`` keeps use order, a put evicts least recently used
items until the accounted bytes fit ``max_bytes``, and an expired item is dropped when it is next
read (until then it counts against the bound and, being old, is near the front to be evicted).
Each item is accounted as its key, its stored value and :data:`ENTRY_OVERHEAD_BYTES` for the
Python objects around them, so the figure tracks the memory really used.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, stored_value
from hbserver.uuids import new_uuid

# A dict slot, the (deadline, value) tuple, the float, and the bytes/str object headers: measured
# with tracemalloc at about 230 bytes per item on CPython 3.11 (tests/test_cache_store.py checks it).
ENTRY_OVERHEAD_BYTES = 240


class MemoryStore:
    name = "memory"
    in_process = True

    def __init__(self, max_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self.bytes = 0  # accounted size of what is held now
        self.new_key: Callable[[], str] = new_uuid  # a worker's shard draws keys it owns (sharded.py)
        self._items: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    @staticmethod
    def _size(key: str, value: bytes) -> int:
        return len(key) + len(value) + ENTRY_OVERHEAD_BYTES

    def _live(self, key: str, now: float) -> bytes | None:
        entry = self._items.get(key)
        if entry is None:
            return None
        deadline, value = entry
        if deadline <= now:
            del self._items[key]
            self.bytes -= self._size(key, value)
            return None
        return value

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        return self.put_many_now(items)

    def put_many_now(self, items: Sequence[CacheItem]) -> list[str]:
        """:meth:`put_many` without the coroutine (what :class:`CacheService` calls for this store).

        All or nothing: an item too large for the whole store refuses the batch, and what the
        batch wrote before it is taken out again.
        """
        now = self.clock()
        store = self._items
        new_key = self.new_key
        keys: list[str] = []
        for item in items:
            value = item.stored()
            key = item.key or new_key()
            size = len(key) + len(value) + ENTRY_OVERHEAD_BYTES  # _size, inline: once per bid
            if size > self.max_bytes:
                self._take_back(keys)
                raise CacheStoreError(f"item of {size} bytes exceeds the store's {self.max_bytes} bytes")
            if item.key:
                if self._live(key, now) is not None:
                    keys.append("")  # create-only
                    continue
                # a fresh UUID is never in the store; a caller's key may be (expired)
                old = store.pop(key, None)
                if old is not None:
                    self.bytes -= self._size(key, old[1])
            store[key] = (now + item.ttl_seconds, value)
            self.bytes += size
            keys.append(key)
        self._evict()
        return keys

    def put_stored_now(self, entries: Sequence[tuple[str, int, bytes]]) -> list[str]:
        """(key, TTL seconds, stored value) entries, every key create-only, all or nothing as
        :meth:`put_many_now`: what a shard calls for a peer's put (the peer chose the keys)."""
        now = self.clock()
        store = self._items
        keys: list[str] = []
        for key, ttl, value in entries:
            size = len(key) + len(value) + ENTRY_OVERHEAD_BYTES
            if size > self.max_bytes:
                self._take_back(keys)
                raise CacheStoreError(f"item of {size} bytes exceeds the store's {self.max_bytes} bytes")
            if self._live(key, now) is not None:  # drops an expired entry
                keys.append("")
                continue
            store[key] = (now + ttl, value)
            self.bytes += size
            keys.append(key)
        self._evict()
        return keys

    def get_stored_now(self, key: str) -> bytes | None:
        """The live stored value under ``key`` (type prefix included), marked as recently used."""
        value = self._live(key, self.clock())
        if value is not None:
            self._items.move_to_end(key)
        return value

    def _take_back(self, keys: list[str]) -> None:
        """Remove what a refused batch had written (an expired entry it replaced stays gone)."""
        for key in keys:
            entry = self._items.pop(key, None) if key else None
            if entry is not None:
                self.bytes -= self._size(key, entry[1])

    def _evict(self) -> None:
        items = self._items
        while self.bytes > self.max_bytes and items:
            key, (_deadline, value) = items.popitem(last=False)
            self.bytes -= self._size(key, value)

    async def get(self, key: str) -> CachedValue | None:
        value = self._live(key, self.clock())
        if value is None:
            return None
        self._items.move_to_end(key)
        return stored_value(value)

    async def close(self) -> None:
        self._items.clear()
        self.bytes = 0
