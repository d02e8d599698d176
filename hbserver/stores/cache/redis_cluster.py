"""The shared cache store on a Redis Cluster (``cache.redis.cluster.nodes``).

Same semantics as the single Redis store: each item is one ``SET key value EX ttl NX``
(create-only, atomic with its expiry), and a put is one pipelined round trip per master it
touches. What a cluster adds:

* **Nothing acknowledged is lost on failover.** Replication is asynchronous, so a master killed
  just after answering may take a write its replica never saw. So each master's batch ends with
  ``WAIT 1 <WAIT_TIMEOUT_MS>`` on the same connection, and the put is answered only once a
  replica holds its items; a WAIT that answers 0 makes the put a store error (``redis:
  NotReplicated``). A master that the cluster lists with no live replica (the usual state right
  after a failover, until the dead node returns) has nothing to fail over to, so it is not asked
  to WAIT: puts go on, acknowledged by the master alone (so the promise covers one failure at a
  time). The replica view comes from ``CLUSTER NODES``, read again after a failed call and, while
  puts come, every ``TOPOLOGY_CHECK_SECONDS``.
* **Routing follows the slot map** of redis-py's ``RedisCluster`` (primaries only, so a key written
  by one instance is read from its master by any other). A failed call refreshes the map in the
  background (at most every ``REFRESH_MIN_SECONDS``), so puts resume by themselves once a replica
  is promoted; the call itself fails at once rather than waiting for the promotion.

Why not ``RedisCluster.pipeline()``: it re-sends redirected commands one by one on other
connections and retries whole batches, so a WAIT in it could vouch for writes made elsewhere, and
a retried ``SET NX`` would answer "exists" for a write of its own first attempt. Sending each
master's batch with ``ClusterNode.execute_pipeline`` keeps the SETs and their WAIT on one
connection, and a failure is just a failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterError,
    MaxConnectionsError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, stored_value
from hbserver.stores.cache.redis import POOL_SIZE, SOCKET_TIMEOUT_SECONDS
from hbserver.uuids import new_uuid

log = logging.getLogger("hbserver.cache")

WAIT_TIMEOUT_MS = 100  # a replica on the same network acknowledges in about a round trip
REFRESH_MIN_SECONDS = 0.25  # topology reads after errors: at most four a second
TOPOLOGY_CHECK_SECONDS = 5.0  # a replica that (re)joined is asked to WAIT again within this
# what a failed call may raise (redis-py's cluster errors are not all RedisErrors)
STORE_ERRORS = (RedisError, RedisClusterException, OSError)


class NotReplicated(RedisError):
    """No replica acknowledged a batch within ``WAIT_TIMEOUT_MS``."""


def _store_error(exc: BaseException) -> CacheStoreError:
    """What clients read names the class only; the detail (with addresses) is for the log."""
    return CacheStoreError(f"redis: {exc.__class__.__name__}", detail=str(exc))


def replicas_by_master(view: dict[str, dict[str, Any]]) -> dict[str, int]:
    """``CLUSTER NODES`` (as redis-py parses it) -> {master "host:port": replicas not marked failed}.

    Only masters serving slots are listed; a replica the cluster has only suspected (``fail?``)
    still counts, since it could still be promoted."""
    gone = {"fail", "handshake", "noaddr"}
    live: dict[str, int] = {}
    for node in view.values():
        flags = set(node["flags"].split(","))
        if flags & {"slave", "replica"} and not flags & gone:
            live[node["master_id"]] = live.get(node["master_id"], 0) + 1
    return {
        address: min(1, live.get(node["node_id"], 0))
        for address, node in view.items()
        if "master" in node["flags"].split(",") and node["slots"] and "fail" not in node["flags"].split(",")
    }


class RedisClusterStore:
    name = "redis"
    in_process = False

    def __init__(self, url: str, nodes: Sequence[tuple[str, int]]) -> None:
        """``nodes`` are seeds; credentials and TLS (``rediss``) come from ``url``, its host does not."""
        options = parse_url(url)
        for ignored in ("host", "port", "db", "path"):
            options.pop(ignored, None)
        ssl = options.pop("connection_class", None) is SSLConnection
        self.client = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in nodes],
            ssl=ssl,
            require_full_coverage=False,  # a range without a master fails alone
            max_connections=POOL_SIZE,
            socket_timeout=SOCKET_TIMEOUT_SECONDS,
            socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
            health_check_interval=30,
            retry=Retry(NoBackoff(), 0),  # a failed call fails; the map is refreshed behind it
            **options,
        )
        self._replicas: dict[str, int] = {}  # master name -> replicas to WAIT for (absent: 1)
        self._ready = False
        self._start: asyncio.Task[None] | None = None
        self._start_again_at = 0.0
        self._refresh: asyncio.Task[None] | None = None
        self._refresh_slots = False
        self._last_refresh = float("-inf")
        self._next_check = 0.0

    # -- the two operations ----------------------------------------------------------------

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        keys = [item.key or new_uuid() for item in items]
        try:
            if not self._ready:
                await self._started()
            elif time.monotonic() >= self._next_check:
                self._refresh_soon(slots=False)
            batches = self._batches(keys, items)
            if len(batches) == 1:
                [(node, commands)] = batches.values()
                await self._send(node, commands)
            else:
                outcomes = await asyncio.gather(
                    *(self._send(node, commands) for node, commands in batches.values()), return_exceptions=True
                )
                for outcome in outcomes:
                    if isinstance(outcome, BaseException):
                        raise outcome
        except STORE_ERRORS as exc:
            self._after(exc)
            raise _store_error(exc) from None
        written = [False] * len(keys)
        for _, commands in batches.values():
            for command in commands:
                if command.position >= 0:
                    written[command.position] = bool(command.result)
        return [key if ok else "" for key, ok in zip(keys, written, strict=True)]

    async def get(self, key: str) -> CachedValue | None:
        try:
            if not self._ready:
                await self._started()
            raw = await self._primary(key).execute_command("GET", key)
        except STORE_ERRORS as exc:
            self._after(exc)
            raise _store_error(exc) from None
        if raw is None:
            return None
        return stored_value(raw)

    async def close(self) -> None:
        for task in (self._start, self._refresh):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.client.aclose()

    # -- one put ---------------------------------------------------------------------------

    def _primary(self, key: str) -> ClusterNode:
        nodes = self.client.nodes_manager.slots_cache.get(key_slot(key.encode()))
        if not nodes:
            raise SlotNotCoveredError(f"slot of {key!r} has no master in the slot map")
        return nodes[0]

    def _batches(
        self, keys: list[str], items: Sequence[CacheItem]
    ) -> dict[str, tuple[ClusterNode, list[PipelineCommand]]]:
        """The SETs grouped by master, each group closed by its WAIT (position -1)."""
        batches: dict[str, tuple[ClusterNode, list[PipelineCommand]]] = {}
        for position, (key, item) in enumerate(zip(keys, items, strict=True)):
            node = self._primary(key)
            batch = batches.get(node.name)
            if batch is None:
                batch = batches[node.name] = (node, [])
            batch[1].append(PipelineCommand(position, "SET", key, item.stored(), "EX", item.ttl_seconds, "NX"))
        for name, (_, commands) in batches.items():
            replicas = self._replicas.get(name, 1)
            if replicas:
                commands.append(PipelineCommand(-1, "WAIT", replicas, WAIT_TIMEOUT_MS))
        return batches

    async def _send(self, node: ClusterNode, commands: list[PipelineCommand]) -> None:
        """One round trip to ``node``; raises the first error, or NotReplicated for a short WAIT."""
        await node.execute_pipeline(commands)
        for command in commands:
            if isinstance(command.result, Exception):
                raise command.result
        wait = commands[-1]
        if wait.position < 0 and wait.result < wait.args[1]:
            raise NotReplicated(f"{node.name}: no replica acknowledged within {WAIT_TIMEOUT_MS} ms")

    # -- the topology ----------------------------------------------------------------------

    async def _started(self) -> None:
        """The slot map and replica view, read once; a failed start is retried after a pause."""
        task = self._start
        if task is None or (task.done() and time.monotonic() >= self._start_again_at):
            task = self._start = asyncio.get_running_loop().create_task(self._first_read())
        await asyncio.shield(task)

    async def _first_read(self) -> None:
        try:
            await self.client.initialize()
            await self._read_replicas()
        except BaseException:
            self._start_again_at = time.monotonic() + REFRESH_MIN_SECONDS
            raise
        self._ready = True
        self._last_refresh = time.monotonic()
        self._next_check = self._last_refresh + TOPOLOGY_CHECK_SECONDS

    def _after(self, exc: BaseException) -> None:
        """What a failed call says about the topology: MOVED, CLUSTERDOWN, an unreachable node and
        the like call for a new slot map; a short WAIT for a new replica view; an exhausted pool or
        another answer (OOM, ...) for nothing."""
        if isinstance(exc, NotReplicated):
            self._refresh_soon(slots=False)
        elif isinstance(exc, MaxConnectionsError):
            return
        elif isinstance(exc, ResponseError) and not isinstance(exc, AskError | ClusterError | TryAgainError):
            return
        else:
            self._refresh_soon()

    def _refresh_soon(self, slots: bool = True) -> None:
        """Read the topology again in the background (the slot map too when ``slots``)."""
        if not self._ready:
            return  # the next call starts again
        self._refresh_slots |= slots
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.get_running_loop().create_task(self._refresh_topology())

    async def _refresh_topology(self) -> None:
        await asyncio.sleep(max(0.0, self._last_refresh + REFRESH_MIN_SECONDS - time.monotonic()))
        while True:
            slots, self._refresh_slots = self._refresh_slots, False
            self._last_refresh = time.monotonic()
            self._next_check = self._last_refresh + TOPOLOGY_CHECK_SECONDS
            try:
                if slots:
                    await self.client.nodes_manager.initialize()
                masters = await self._read_replicas()
                serving = {nodes[0].name for nodes in self.client.nodes_manager.slots_cache.values()}
                if not slots and masters != serving:  # a failover the slot map has not seen
                    await self.client.nodes_manager.initialize()
            except STORE_ERRORS as exc:
                log.debug("redis cluster topology refresh failed: %r", exc)
                return  # the next failing call asks again
            if not self._refresh_slots:
                return
            await asyncio.sleep(REFRESH_MIN_SECONDS)

    async def _read_replicas(self) -> set[str]:
        """Ask one reachable node for ``CLUSTER NODES``; keep which masters have a replica to WAIT for."""
        error: BaseException = SlotNotCoveredError("no cluster node to ask")
        manager = self.client.nodes_manager
        for node in list(manager.nodes_cache.values()) or list(manager.startup_nodes.values()):
            try:
                view = await node.execute_command("CLUSTER NODES")
            except STORE_ERRORS as exc:
                error = exc
                continue
            self._replicas = replicas_by_master(view)
            return set(self._replicas)
        raise error
