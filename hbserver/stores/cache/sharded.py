"""``cache.store: memory`` with several workers: each worker owns a shard of the keys.

A ``GET /cache`` (prebid-universal-creative, a video player's VAST fetch) reaches whichever worker
the kernel gives its connection, so what one worker stores every worker must serve. Each key has
one owner, ``crc32(key) % W`` (W: the configured worker count; each worker knows its index from
the supervisor, see :mod:`hbserver.server`). The owner holds it in its in-process
:class:`~hbserver.stores.cache.memory.MemoryStore` (``cache.memory.max_bytes / W``) and serves
that shard to the others on a Unix socket (:mod:`.shard_server`).

Bids are put on every auction but read back rarely (only the creatives that win and render), so
puts stay local: a worker draws the UUIDs of its puts until it owns them (W draws on average, a
few microseconds), so an auction's, an AMP request's or a ``/vtrack`` put never leaves the
process. Only a caller's own key (a Prebid Cache ``key``) owned by another worker is sent to
that owner, and a get of a key another worker owns is asked of it (:mod:`.shared`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import zlib
from collections.abc import Callable, Sequence

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError
from hbserver.stores.cache.memory import ENTRY_OVERHEAD_BYTES, MemoryStore
from hbserver.stores.cache.shard_server import ShardServer
from hbserver.stores.cache.shared import PeerStore
from hbserver.uuids import new_uuid_batch

log = logging.getLogger("hbserver.cache")

UUID_LENGTH = 36


def owner(key: str, count: int) -> int:
    """The index of the worker owning ``key`` among ``count`` workers."""
    return zlib.crc32(key.encode()) % count


def shard_path(run_dir: str, index: int) -> str:
    return os.path.join(run_dir, f"cache-{index}.sock")


class ShardedMemoryStore:
    """Worker ``index`` of ``count``: its own shard in process, the others' over their sockets."""

    name = "memory"  # the metrics label of the memory store: one store, sharded
    in_process = False  # a get of another worker's key waits for it: bounded by the caller's deadline

    def __init__(
        self, index: int, count: int, run_dir: str, max_bytes: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not 0 <= index < count:
            raise ValueError(f"worker index {index} is not in 0..{count - 1}")
        self.index = index
        self.count = count
        self.max_bytes = max_bytes // count  # each shard's bound
        self._owned: list[str] = []  # fresh UUIDs this worker owns, drawn in batches
        self.local = MemoryStore(self.max_bytes, clock)
        self.local.new_key = self.new_key
        self.server = ShardServer(self.local, shard_path(run_dir, index))
        self.peers = {i: PeerStore(shard_path(run_dir, i), self.max_bytes) for i in range(count) if i != index}

    def new_key(self) -> str:
        """A fresh UUID this worker owns (of each batch of random UUIDs, about 1 in W)."""
        owned = self._owned
        if not owned:
            index, count, crc32 = self.index, self.count, zlib.crc32
            while not owned:
                owned += [key for key in new_uuid_batch() if crc32(key.encode()) % count == index]
        return owned.pop()

    def put_local_now(self, items: Sequence[CacheItem]) -> list[str] | None:
        """The put, in process, when every key is this worker's (fresh keys always are); else None."""
        index, count, crc32 = self.index, self.count, zlib.crc32
        for item in items:
            key = item.key
            if key and crc32(key.encode()) % count != index:
                return None
        return self.local.put_many_now(items)

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        keys = self.put_local_now(items)
        if keys is None:
            keys = await self._put_spread(items)
        return keys

    async def _put_spread(self, items: Sequence[CacheItem]) -> list[str]:
        """A batch with other workers' keys: their items go to their owners, then the rest here.

        An item too large for a shard refuses the batch before anything is written; an owner
        that fails fails the batch (what other owners wrote stays: a batch spanning shards is
        atomic only against size refusals).
        """
        for item in items:
            size = (len(item.key) if item.key else UUID_LENGTH) + len(item.type) + len(item.payload)
            if size + ENTRY_OVERHEAD_BYTES > self.max_bytes:
                raise CacheStoreError(
                    f"item of {size + ENTRY_OVERHEAD_BYTES} bytes exceeds the store's {self.max_bytes} bytes"
                )
        shards: dict[int, list[int]] = {}
        for at, item in enumerate(items):
            shards.setdefault(owner(item.key, self.count) if item.key else self.index, []).append(at)
        mine = shards.pop(self.index, [])
        answers = await asyncio.gather(
            *(self.peers[shard].put_many([items[at] for at in ats]) for shard, ats in shards.items()),
            return_exceptions=True,
        )
        keys = [""] * len(items)
        for ats, answer in zip(shards.values(), answers, strict=True):
            if isinstance(answer, BaseException):
                raise answer
            for at, key in zip(ats, answer, strict=True):
                keys[at] = key
        if mine:
            for at, key in zip(mine, self.local.put_many_now([items[at] for at in mine]), strict=True):
                keys[at] = key
        return keys

    async def get(self, key: str) -> CachedValue | None:
        shard = owner(key, self.count)
        if shard == self.index:
            return await self.local.get(key)
        return await self.peers[shard].get(key)

    async def start(self) -> None:
        """Serve this worker's shard to the others; OSError when its socket cannot be made."""
        await self.server.start()
        log.info("serving cache shard %d of %d on %s", self.index, self.count, self.server.path,
                 extra={"worker_pid": os.getpid()})

    async def close(self) -> None:
        await self.server.close()
        for peer in self.peers.values():
            await peer.close()
        await self.local.close()


def from_environment(max_bytes: int) -> ShardedMemoryStore | None:
    """This worker's sharded store when a supervisor runs several workers (else None: one worker)."""
    from hbserver.server import RUN_DIR_ENV, WORKER_COUNT_ENV, WORKER_INDEX_ENV

    count = int(os.environ.get(WORKER_COUNT_ENV) or 1)
    run_dir = os.environ.get(RUN_DIR_ENV)
    if count < 2 or not run_dir:
        return None
    return ShardedMemoryStore(int(os.environ.get(WORKER_INDEX_ENV) or 0), count, run_dir, max_bytes)
