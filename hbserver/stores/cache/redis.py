"""The shared cache store: Redis, so that what one hbserver instance stores any other serves.

Each item is one ``SET key value EX ttl NX``: atomic with its expiry, and create-only, so a key
that exists is never overwritten (a caller's own key then answers ``""``; a fresh UUID colliding
is not a practical concern). All items of a put go in one pipelined round trip. A Redis Cluster
(``cache.redis.cluster.nodes``) has a store of its own, ``redis_cluster.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, stored_value
from hbserver.uuids import new_uuid

POOL_SIZE = 64  # connections per worker; puts and gets are single round trips
SOCKET_TIMEOUT_SECONDS = 2.0  # callers apply their own, shorter, deadlines


class RedisStore:
    name = "redis"
    in_process = False

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = aioredis.from_url(
            url,
            max_connections=POOL_SIZE,
            socket_timeout=SOCKET_TIMEOUT_SECONDS,
            socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
            health_check_interval=30,
        )

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        keys = [item.key or new_uuid() for item in items]
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for key, item in zip(keys, items, strict=True):
                    pipe.set(key, item.stored(), ex=item.ttl_seconds, nx=True)
                results = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise CacheStoreError(f"redis: {exc.__class__.__name__}", detail=str(exc)) from None
        return [key if ok else "" for key, ok in zip(keys, results, strict=True)]

    async def get(self, key: str) -> CachedValue | None:
        try:
            raw = await self.client.get(key)
        except (RedisError, OSError) as exc:
            raise CacheStoreError(f"redis: {exc.__class__.__name__}", detail=str(exc)) from None
        if raw is None:
            return None
        return stored_value(raw)

    async def close(self) -> None:
        await self.client.aclose()
