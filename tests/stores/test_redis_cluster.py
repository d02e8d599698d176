"""The cache store on a real Redis Cluster: three masters and three replicas on loopback ports,
started by the tests with Debian's redis-server and ``redis-cli --cluster create``
(tests/services.py). Tests that kill or pause a node get a cluster of their own."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from redis import exceptions as rx
from redis.asyncio.connection import Connection, SSLConnection
from redis.crc import key_slot

from hbserver.metrics import Metrics
from hbserver.stores.cache import redis_cluster as cluster_store
from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, CorruptValue
from hbserver.stores.cache.redis_cluster import RedisClusterStore, replicas_by_master
from hbserver.stores.cache.service import CacheService
from tests.conftest import make_config
from tests.services import RedisClusterNodes, require_redis_cluster_tools, running_redis_cluster

URL = "redis://127.0.0.1:6379/0"  # in cluster mode only its scheme and credentials count


@pytest.fixture
def own_cluster(tmp_path: Path):
    """A cluster for one test that kills or pauses its nodes."""
    require_redis_cluster_tools()
    with running_redis_cluster(tmp_path) as cluster:
        yield cluster


def seeds(cluster: RedisClusterNodes, first: int = 0) -> list[tuple[str, int]]:
    """Two seed nodes are enough: the rest is discovered."""
    return [("127.0.0.1", port) for port in cluster.ports[first:first + 2]]


@pytest.fixture
async def store(redis_cluster: RedisClusterNodes):
    store = RedisClusterStore(URL, seeds(redis_cluster))
    yield store
    await store.close()


def xml(text: str, ttl: int = 60, key: str = "") -> CacheItem:
    return CacheItem("xml", text.encode(), ttl, key)


def keys_on(owners: list[int | None], master: int, count: int, prefix: str = "k") -> list[str]:
    """``count`` caller keys whose slots ``master`` serves."""
    keys: list[str] = []
    while len(keys) < count:
        key = f"{prefix}-{uuid.uuid4()}"
        if owners[key_slot(key.encode())] == master:
            keys.append(key)
    return keys


async def put_settled(store: RedisClusterStore, items: list[CacheItem], within_s: float = 10.0) -> list[str]:
    """A put that is a test's precondition, not its subject: retried while a freshly built cluster on a
    loaded machine still answers NotReplicated (its replica not yet acknowledging within WAIT's bound)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return await store.put_many(items)
        except CacheStoreError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


def wait_commands(cluster: RedisClusterNodes, port: int) -> int:
    """How many WAITs ``port`` has run."""
    return int(cluster.call(port, "INFO", "commandstats").get("cmdstat_wait", {}).get("calls", 0))


# -- pure parts ---------------------------------------------------------------------------------


def node(node_id: str, flags: str, master: str = "-", slots: bool = False) -> dict:
    return {"node_id": node_id, "flags": flags, "master_id": master, "slots": [["0", "5"]] if slots else []}


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        ({"m:1": node("m", "master", slots=True), "r:2": node("r", "slave", "m")}, {"m:1": 1}),
        ({"m:1": node("m", "myself,master", slots=True), "r:2": node("r", "slave,fail?", "m")}, {"m:1": 1}),
        ({"m:1": node("m", "master", slots=True), "r:2": node("r", "slave,fail", "m")}, {"m:1": 0}),
        ({"m:1": node("m", "master", slots=True), "r:2": node("r", "slave,handshake", "m")}, {"m:1": 0}),
        ({"m:1": node("m", "master", slots=True)}, {"m:1": 0}),  # promoted, its old master gone
        ({"m:1": node("m", "master,fail", slots=True), "r:2": node("r", "slave", "m")}, {}),
        ({"m:1": node("m", "master"), "n:3": node("n", "master", slots=True)}, {"n:3": 0}),  # no slots: not a shard
    ],
)
def test_which_masters_must_wait_for_a_replica(view, expected):
    assert replicas_by_master(view) == expected


@pytest.mark.parametrize(
    ("error", "refresh"),
    [
        (rx.ConnectionError("refused"), "slots"),
        (rx.TimeoutError("read"), "slots"),
        (rx.MovedError("3999 127.0.0.1:7002"), "slots"),
        (rx.ClusterDownError("CLUSTERDOWN The cluster is down"), "slots"),
        (rx.TryAgainError("TRYAGAIN"), "slots"),
        (rx.SlotNotCoveredError("slot 3999"), "slots"),
        (cluster_store.NotReplicated("no replica"), "replicas"),
        (rx.MaxConnectionsError("pool"), None),  # our own pool: the topology is fine
        (rx.ResponseError("OOM command not allowed"), None),
    ],
)
async def test_what_a_failed_call_makes_the_store_read_again(error, refresh):
    store = RedisClusterStore(URL, [("127.0.0.1", 1)])
    asked: list[str] = []
    store._ready = True
    store._refresh_soon = lambda slots=True: asked.append("slots" if slots else "replicas")
    store._after(error)
    assert asked == ([refresh] if refresh else [])
    await store.close()


@pytest.mark.parametrize(
    ("url", "username", "password", "connection"),
    [
        ("redis://127.0.0.1:6379/0", None, None, Connection),
        ("redis://:s3cret@ignored.example:1/0", None, "s3cret", Connection),
        ("rediss://app:s3cret@ignored.example:1", "app", "s3cret", SSLConnection),
    ],
)
async def test_credentials_and_tls_come_from_the_url_and_the_nodes_from_the_list(url, username, password, connection):
    store = RedisClusterStore(url, [("10.0.0.1", 7000), ("10.0.0.2", 7001)])
    try:
        assert sorted(store.client.nodes_manager.startup_nodes) == ["10.0.0.1:7000", "10.0.0.2:7001"]
        options = store.client.nodes_manager.connection_kwargs
        assert (options["username"], options["password"], options["connection_class"]) == (
            username, password, connection)
    finally:
        await store.close()


# -- the shared cluster -------------------------------------------------------------------------


async def test_round_trip_across_every_master(store, redis_cluster):
    owners = redis_cluster.slot_owners()
    values = [f"<VAST>{i}</VAST>" for i in range(60)]
    keys = await store.put_many([xml(value) for value in values])
    assert all(uuid.UUID(key).version == 4 for key in keys)
    assert {owners[key_slot(key.encode())] for key in keys} == set(redis_cluster.masters())
    for key, value in zip(keys, values, strict=True):
        assert await store.get(key) == CachedValue("xml", value.encode())
        # on its master, in Prebid Cache's stored form
        assert redis_cluster.call(owners[key_slot(key.encode())], "GET", key) == f"xml{value}"
    assert await store.get(str(uuid.uuid4())) is None


async def test_caller_keys_are_create_only_on_every_master(store, redis_cluster):
    owners = redis_cluster.slot_owners()
    first = [keys_on(owners, master, 1)[0] for master in redis_cluster.masters()]
    assert await store.put_many([xml(f"<first>{k}</first>", key=k) for k in first]) == first
    again = [xml("<second/>", key=k) for k in first] + [xml("<new/>", key="new-" + first[0])]
    assert await store.put_many(again) == ["", "", "", "new-" + first[0]]
    for key in first:
        assert (await store.get(key)).payload == f"<first>{key}</first>".encode()


async def test_ttl_is_set_with_the_value(store, redis_cluster):
    owners = redis_cluster.slot_owners()
    long_key, short_key = await store.put_many([xml("<VAST>long</VAST>", ttl=30), xml("<VAST>short</VAST>", ttl=1)])
    assert 25 <= redis_cluster.call(owners[key_slot(long_key.encode())], "TTL", long_key) <= 30
    assert await store.get(short_key) is not None
    await asyncio.sleep(1.2)
    assert await store.get(short_key) is None
    assert await store.get(long_key) is not None


async def test_what_one_instance_writes_another_reads(redis_cluster):
    one = RedisClusterStore(URL, seeds(redis_cluster, 0))
    other = RedisClusterStore(URL, seeds(redis_cluster, 4))  # other seeds, its own slot map
    try:
        written = await one.put_many([xml(f"<VAST>a{i}</VAST>") for i in range(30)])
        assert [(await other.get(key)).payload for key in written] == [f"<VAST>a{i}</VAST>".encode() for i in range(30)]
        back = await other.put_many([CacheItem("json", b'{"from":"other"}', 60)])
        assert await one.get(back[0]) == CachedValue("json", b'{"from":"other"}')
    finally:
        await one.close()
        await other.close()


async def test_a_corrupt_value_is_reported(store, redis_cluster):
    owners = redis_cluster.slot_owners()
    for master in redis_cluster.masters():
        [key] = keys_on(owners, master, 1, "corrupt")
        redis_cluster.call(master, "SET", key, "<HTML>")
        with pytest.raises(CorruptValue, match="Cannot determine type"):
            await store.get(key)


async def test_each_masters_batch_waits_for_its_replica(store, redis_cluster):
    masters = list(redis_cluster.masters())
    before = {port: wait_commands(redis_cluster, port) for port in masters}
    for _ in range(5):
        await store.put_many([xml("<VAST/>") for _ in range(30)])  # every master in every put
    assert {port: wait_commands(redis_cluster, port) - before[port] for port in masters} == dict.fromkeys(masters, 5)


# -- nodes that stop answering --------------------------------------------------------------------


async def test_a_replica_that_does_not_acknowledge_fails_the_put_until_the_cluster_drops_it(own_cluster, monkeypatch):
    monkeypatch.setattr(cluster_store, "TOPOLOGY_CHECK_SECONDS", 0.5)
    cluster = own_cluster
    owners = cluster.slot_owners()
    master, replica = next(iter(cluster.masters().items()))
    other = next(port for port in cluster.masters() if port != master)
    store = RedisClusterStore(URL, seeds(cluster))
    try:
        await put_settled(store, [xml("<VAST/>", key=k) for k in keys_on(owners, master, 2)])
        os.kill(cluster.processes[replica].pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(CacheStoreError) as caught:
            await store.put_many([xml("<VAST/>", key=k) for k in keys_on(owners, master, 2)])
        assert str(caught.value) == "redis: NotReplicated"
        assert cluster_store.WAIT_TIMEOUT_MS / 1000 <= time.monotonic() - started < 2.0  # bounded, not hung
        assert len(await put_settled(store, [xml("<VAST/>", key=k) for k in keys_on(owners, other, 2)])) == 2
        # once the cluster marks the replica failed, the master has nothing to fail over to: puts go on
        deadline = time.monotonic() + 15
        while True:
            try:
                await store.put_many([xml("<VAST/>", key=k) for k in keys_on(owners, master, 1)])
                break
            except CacheStoreError:
                assert time.monotonic() < deadline, "puts did not resume after the replica was dropped"
                await asyncio.sleep(0.1)
        assert cluster.masters(master)[master] is None
        # the replica comes back: puts wait for it again
        os.kill(cluster.processes[replica].pid, signal.SIGCONT)
        deadline = time.monotonic() + 15
        while True:
            before = wait_commands(cluster, master)
            await store.put_many([xml("<VAST/>", key=k) for k in keys_on(owners, master, 1)])
            if wait_commands(cluster, master) > before:
                break
            assert time.monotonic() < deadline, "the returned replica was not waited for"
            await asyncio.sleep(0.2)
    finally:
        os.kill(cluster.processes[replica].pid, signal.SIGCONT)
        await store.close()


async def test_a_killed_master_loses_nothing_acknowledged(own_cluster):
    """Puts run while a master is SIGKILLed; its replica takes over; puts resume by themselves;
    every acknowledged put reads back its value."""
    cluster = own_cluster
    owners = cluster.slot_owners()
    victim, heir = next(iter(cluster.masters().items()))
    store = RedisClusterStore(URL, seeds(cluster))
    acknowledged: dict[str, tuple[bytes, float]] = {}  # key -> value, when its put started
    failures: list[float] = []
    hangs: list[float] = []
    killed_at = float("inf")
    stop = asyncio.Event()

    async def writer(name: int) -> None:
        serial = 0
        while not stop.is_set():
            serial += 1
            values = [f"<VAST>{name}-{serial}-{i}</VAST>".encode() for i in range(6)]
            started = time.monotonic()
            try:
                async with asyncio.timeout(3):
                    keys = await store.put_many([CacheItem("xml", value, 300) for value in values])
            except TimeoutError:
                hangs.append(started)
            except CacheStoreError:
                failures.append(started)
                await asyncio.sleep(0.01)
                continue
            else:
                for key, value in zip(keys, values, strict=True):
                    acknowledged[key] = (value, started)
            await asyncio.sleep(0.005)

    ranges = set(cluster.masters())  # each master's slot range, by its first owner

    def resumed_on_every_range() -> bool:
        after = {owners[key_slot(key.encode())] for key, (_, at) in list(acknowledged.items()) if at > killed_at}
        return after == ranges

    writers = [asyncio.create_task(writer(n)) for n in range(4)]
    try:
        warm = time.monotonic() + 15
        while sum(owners[key_slot(k.encode())] == victim for k in list(acknowledged)) < 200:
            assert time.monotonic() < warm, f"before the kill: {len(acknowledged)} acknowledged, {len(failures)} failed"
            await asyncio.sleep(0.05)
        cluster.kill(victim)
        killed_at = time.monotonic()
        while not resumed_on_every_range():
            assert time.monotonic() - killed_at < 15, "puts did not resume on every slot range within 15 s"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
    finally:
        stop.set()
        await asyncio.gather(*writers)
    assert hangs == []
    assert any(at > killed_at for at in failures)  # the kill was felt
    masters = cluster.masters(heir)
    assert heir in masters and victim not in masters  # the replica took over
    on_victim = [k for k in acknowledged if owners[key_slot(k.encode())] == victim]
    assert any(acknowledged[k][1] < killed_at for k in on_victim)
    assert any(acknowledged[k][1] > killed_at for k in on_victim)
    reader = RedisClusterStore(URL, [("127.0.0.1", heir)])
    try:
        keys = list(acknowledged)
        for at in range(0, len(keys), 50):  # well under a node's connection pool
            chunk = keys[at:at + 50]
            found = await asyncio.gather(*(reader.get(key) for key in chunk))
            lost = [k for k, got in zip(chunk, found, strict=True) if got != CachedValue("xml", acknowledged[k][0])]
            assert lost == [], f"{len(lost)} acknowledged puts lost, e.g. {lost[:3]}"
    finally:
        await reader.close()
        await store.close()


async def test_puts_fail_quickly_while_a_slot_range_has_no_master(own_cluster):
    cluster = own_cluster
    owners = cluster.slot_owners()
    master, replica = next(iter(cluster.masters().items()))
    survivor = next(port for port in cluster.masters() if port != master)
    store = RedisClusterStore(URL, seeds(cluster))
    service = CacheService(store, make_config(), Metrics())
    try:
        await store.put_many([xml("<VAST/>", key=k) for k in keys_on(owners, master, 2)])
        cluster.kill(master)
        cluster.kill(replica)
        ends = time.monotonic() + 4  # through failure detection and the cluster going down
        answered = 0
        while time.monotonic() < ends:
            started = time.monotonic()
            with pytest.raises(CacheStoreError) as caught:
                async with asyncio.timeout(5):  # a hang fails the test here, not in the service's deadline
                    await service.put_many([xml("<VAST/>", key=k) for k in keys_on(owners, master, 1)], timeout=5)
            assert time.monotonic() - started < 1.0
            assert "127.0.0.1" not in str(caught.value)  # the address goes to the log only
            answered += 1
            await asyncio.sleep(0.1)
        assert answered >= 10
        assert cluster.slot_owners(survivor)[key_slot(keys_on(owners, master, 1)[0].encode())] is None
    finally:
        await store.close()
