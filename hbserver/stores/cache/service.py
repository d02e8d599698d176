"""The cache client every part of the server uses (/cache, /vtrack, auctions).

It holds the store chosen by ``cache.store`` (in-process calls for memory with one worker; with
several, each worker's own shard in process and the others' over Unix sockets; Redis; HTTP for a
remote Prebid Cache), applies the TTL rule, bounds every call by a deadline and counts outcomes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from hbserver.config import Config, host_port
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStore, CacheStoreError
from hbserver.web.client import SharedSession

log = logging.getLogger("hbserver.cache")

T = TypeVar("T")
PUT_OUTCOMES = ("ok", "exists", "error", "timeout")
GET_OUTCOMES = ("hit", "miss", "error", "timeout")


class CacheTimeout(CacheStoreError):
    """The store did not answer within the caller's deadline."""


class CacheService:
    def __init__(self, store: CacheStore, config: Config, metrics: Metrics) -> None:
        self.store = store
        cache = config.cache
        self.default_ttl = cache.default_ttl_seconds
        self.max_ttl = cache.max_ttl_seconds
        self.max_value_bytes = cache.max_value_bytes
        self.max_num_values = cache.max_num_values
        self.public_url = cache.public_url or config.external_url.rstrip("/") + "/cache"
        self._puts = {o: metrics.counter(metrics.cache_puts, store.name, o) for o in PUT_OUTCOMES}
        # the in-process memory store is called directly: no coroutine, no deadline to watch; so is a
        # worker's shard for a put of keys it owns (None: some key is another worker's)
        self._put_now: Callable[[Sequence[CacheItem]], list[str] | None] | None = (
            getattr(store, "put_many_now", None) if store.in_process else getattr(store, "put_local_now", None)
        )
        self._gets = {o: metrics.counter(metrics.cache_gets, store.name, o) for o in GET_OUTCOMES}
        self._log = LogLimiter(log)

    def _failed(self, operation: str, exc: CacheStoreError) -> None:
        """Log what the client's text leaves out (the store's address, its answer), once in a while."""
        self._log.warning(f"{operation}:{exc}", "cache %s %s failed: %s", self.store.name, operation, exc.detail or exc)

    def ttl(self, requested: int | None) -> int:
        """A put's TTL: its own value capped at ``max_ttl_seconds``; absent or 0 -> the default."""
        if not requested or requested <= 0:
            return self.default_ttl
        return min(requested, self.max_ttl)

    def size_problem(self, index: int, item: CacheItem) -> str | None:
        """PBC's refusal of an empty value or one over ``max_value_bytes`` (type prefix counted)."""
        size = len(item.type) + len(item.payload)
        if item.payload and size <= self.max_value_bytes:
            return None
        return f"POST /cache element {index} exceeded max size: Payload size {size} exceeded max {self.max_value_bytes}"

    async def _within(self, call: Awaitable[T], timeout: float) -> T:
        """``call`` bounded by ``timeout``; an in-process store answers at once, so no timer is armed."""
        if self.store.in_process:
            return await call
        async with asyncio.timeout(timeout):
            return await call

    async def put_many(self, items: Sequence[CacheItem], timeout: float) -> list[str]:
        """Store ``items`` in one round trip within ``timeout`` seconds; their keys in order."""
        if not items:
            return []
        try:
            put_now = self._put_now
            keys = put_now(items) if put_now is not None else None
            if keys is None:
                keys = await self._within(self.store.put_many(items), timeout)
        except TimeoutError:
            self._puts["timeout"].inc(len(items))
            raise CacheTimeout("Timeout has been exceeded") from None
        except CacheStoreError as exc:
            self._puts["error"].inc(len(items))
            self._failed("put", exc)
            raise
        written = len(keys) - keys.count("")
        self._puts["ok"].inc(written)
        if written < len(keys):
            self._puts["exists"].inc(len(keys) - written)
        return keys

    async def get(self, key: str, timeout: float) -> CachedValue | None:
        try:
            value = await self._within(self.store.get(key), timeout)
        except TimeoutError:
            self._gets["timeout"].inc()
            raise CacheTimeout("Timeout has been exceeded") from None
        except CacheStoreError as exc:
            self._gets["error"].inc()
            self._failed("get", exc)
            raise
        self._gets["hit" if value is not None else "miss"].inc()
        return value

    async def start(self) -> None:
        """What the store needs before serving (a worker's shard listens for the other workers)."""
        start = getattr(self.store, "start", None)
        if start is not None:
            await start()

    async def close(self) -> None:
        await self.store.close()


def build_cache_store(config: Config, session: SharedSession) -> CacheStore:
    """The store ``cache.store`` names (imports only what it needs)."""
    cache = config.cache
    if cache.store == "redis" and cache.redis.cluster.nodes:
        from hbserver.stores.cache.redis_cluster import RedisClusterStore

        return RedisClusterStore(cache.redis.url, [host_port(node) for node in cache.redis.cluster.nodes])
    if cache.store == "redis":
        from hbserver.stores.cache.redis import RedisStore

        return RedisStore(cache.redis.url)
    if cache.store == "remote":
        from hbserver.stores.cache.remote import RemoteStore

        return RemoteStore(cache.remote.url, session)
    from hbserver.stores.cache.sharded import from_environment

    sharded = from_environment(cache.memory.max_bytes)
    if sharded is not None:  # several workers: each owns a shard of the keys
        return sharded
    from hbserver.stores.cache.memory import MemoryStore

    return MemoryStore(cache.memory.max_bytes)
