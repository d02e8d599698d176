"""The cache stores behind one interface: memory (bounded LRU + TTL), Redis (real server), remote
(a real hbserver serving /cache over a socket), and the cache client's TTL rule and deadline."""

from __future__ import annotations

import asyncio
import tracemalloc
import uuid

import pytest
import redis.asyncio as aioredis

from hbserver.metrics import Metrics
from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, CorruptValue, parse_stored
from hbserver.stores.cache.memory import ENTRY_OVERHEAD_BYTES, MemoryStore
from hbserver.stores.cache.redis import RedisStore
from hbserver.stores.cache.redis_cluster import RedisClusterStore
from hbserver.stores.cache.remote import RemoteStore
from hbserver.stores.cache.service import CacheService, CacheTimeout, build_cache_store
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.services import REDIS_URL, require_redis


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def xml(text: str, ttl: int = 60, key: str = "") -> CacheItem:
    return CacheItem("xml", text.encode(), ttl, key)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"xml<VAST/>", CachedValue("xml", b"<VAST/>")),
        (b'json{"a":1}', CachedValue("json", b'{"a":1}')),
        (b"jsonnull", CachedValue("json", b"null")),
        (b"<HTML>", None),
        (b"", None),
    ],
)
def test_stored_form_is_prebid_caches(raw, expected):
    assert parse_stored(raw) == expected


@pytest.mark.parametrize(
    ("item", "stored"),
    [
        (CacheItem("xml", b"<VAST/>", 60), b"xml<VAST/>"),
        (CacheItem("json", b'{"a":1}', 60, "own-key"), b'json{"a":1}'),
        (CacheItem("json", b"null", 0), b"jsonnull"),
        (CacheItem("xml", "<VAST>\u00e9</VAST>".encode(), 5), "xml<VAST>\u00e9</VAST>".encode()),
    ],
)
def test_items_are_stored_in_prebid_caches_form(item, stored):
    assert item.stored() == stored
    assert parse_stored(item.stored()) == CachedValue(item.type, item.payload)


def test_keys_are_random_version_4_uuids_and_differ_across_fork():
    """hbserver.uuids.new_uuid: cache keys, tids and AMP request ids."""
    import os

    from hbserver.uuids import new_uuid as new_key

    keys = [new_key() for _ in range(5000)]  # many batches of the pool
    assert len(set(keys)) == len(keys)
    for key in keys:
        parsed = uuid.UUID(key)
        assert (str(parsed), parsed.version, parsed.variant) == (key, 4, uuid.RFC_4122)
    # every digit but the version's is random: it takes many values across keys
    digits = [{key[at] for key in keys} for at in range(36)]
    for at, seen in enumerate(digits):
        if keys[0][at] == "-" or at == 14:
            continue
        assert len(seen) == (4 if at == 19 else 16), (at, seen)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes its next key; the parent's pool must not be reused
        os.write(write_end, new_key().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child_key = os.read(read_end, 36).decode()
    assert child_key != new_key()


# -- memory -------------------------------------------------------------------------------------


async def test_memory_round_trip_and_ttl_expiry():
    clock = Clock()
    store = MemoryStore(1 << 20, clock)
    [key] = await store.put_many([xml("<VAST>a</VAST>", ttl=10)])
    assert len(key) == 36 and uuid.UUID(key).version == 4
    assert await store.get(key) == CachedValue("xml", b"<VAST>a</VAST>")
    clock.now += 9.9
    assert await store.get(key) is not None
    clock.now += 0.2
    assert await store.get(key) is None
    assert store.bytes == 0 and len(store) == 0


async def test_memory_evicts_least_recently_used_at_the_bound():
    value = b"x" * 1000
    per_item = 36 + 3 + len(value) + ENTRY_OVERHEAD_BYTES
    store = MemoryStore(per_item * 3, Clock())
    first, second, third = await store.put_many([CacheItem("xml", value, 60) for _ in range(3)])
    assert await store.get(first) is not None  # first is now the most recently used
    [fourth] = await store.put_many([CacheItem("xml", value, 60)])
    assert await store.get(second) is None  # the least recently used went
    assert all([await store.get(k) is not None for k in (first, third, fourth)])
    assert store.bytes <= store.max_bytes


async def test_memory_refuses_an_item_larger_than_the_store():
    store = MemoryStore(2048, Clock())
    with pytest.raises(CacheStoreError, match="exceeds the store"):
        await store.put_many([CacheItem("xml", b"x" * 4096, 60)])
    assert len(store) == 0


@pytest.mark.parametrize("position", ["first", "last"])
async def test_memory_batch_with_an_oversized_item_writes_nothing(position: str) -> None:
    """All or nothing: good items before the oversized one are not left in the store."""
    store = MemoryStore(1000, Clock())
    [kept] = await store.put_many([CacheItem("xml", b"k" * 600, 60)])
    before = (len(store), store.bytes)
    good, huge = CacheItem("xml", b"g" * 600, 60, "good-key"), CacheItem("xml", b"h" * 5000, 60)
    batch = [huge, good] if position == "first" else [good, huge]
    with pytest.raises(CacheStoreError, match="exceeds the store"):
        await store.put_many(batch)
    assert (len(store), store.bytes) == before
    assert await store.get("good-key") is None
    assert (await store.get(kept)).payload == b"k" * 600
    assert store.bytes <= store.max_bytes


async def test_memory_custom_keys_are_create_only():
    clock = Clock()
    store = MemoryStore(1 << 20, clock)
    assert await store.put_many([xml("<a/>", ttl=5, key="k1")]) == ["k1"]
    assert await store.put_many([xml("<b/>", key="k1"), xml("<c/>", key="k2")]) == ["", "k2"]
    assert (await store.get("k1")).payload == b"<a/>"  # never overwritten
    clock.now += 6
    assert await store.put_many([xml("<d/>", key="k1")]) == ["k1"]  # an expired key is free again
    assert (await store.get("k1")).payload == b"<d/>"


async def test_memory_accounting_tracks_real_memory():
    """ENTRY_OVERHEAD_BYTES is an honest estimate: the accounted bytes cover what Python allocates."""
    store = MemoryStore(1 << 30, Clock())
    items = [CacheItem("json", b'{"v":"%d"}' % i, 60) for i in range(20000)]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    await store.put_many(items)
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert used <= store.bytes * 1.1, (used, store.bytes)


async def test_memory_soak_stays_under_the_bound():
    store = MemoryStore(200_000, Clock())
    for i in range(5000):
        await store.put_many([CacheItem("xml", b"<VAST>%d</VAST>" % i * 10, 60)])
        assert store.bytes <= store.max_bytes
    assert 0 < len(store) < 5000


async def test_memory_corrupt_value_is_reported():
    store = MemoryStore(1 << 20, Clock())
    store._items["k"] = (10**9, b"<HTML>")
    store.bytes += 100
    with pytest.raises(CorruptValue, match="Cannot determine type"):
        await store.get("k")


# -- Redis (the real server; make test starts it) ------------------------------------------------


@pytest.fixture
async def redis_store():
    require_redis()
    store = RedisStore(REDIS_URL)
    yield store
    await store.close()


async def test_redis_round_trip_with_expiry(redis_store):
    keys = await redis_store.put_many([xml("<VAST>r</VAST>", ttl=30), CacheItem("json", b"[1,2]", 30)])
    assert await redis_store.get(keys[0]) == CachedValue("xml", b"<VAST>r</VAST>")
    assert await redis_store.get(keys[1]) == CachedValue("json", b"[1,2]")
    client = aioredis.from_url(REDIS_URL)
    try:
        assert 25 <= await client.ttl(keys[0]) <= 30  # set atomically with its expiry
        assert await client.get(keys[0]) == b"xml<VAST>r</VAST>"  # PBC's stored form
    finally:
        await client.aclose()
    assert await redis_store.get(str(uuid.uuid4())) is None


async def test_redis_ttl_is_honoured(redis_store):
    [key] = await redis_store.put_many([xml("<VAST/>", ttl=1)])
    assert await redis_store.get(key) is not None
    await asyncio.sleep(1.2)
    assert await redis_store.get(key) is None


async def test_redis_custom_keys_are_create_only(redis_store):
    key = f"test-{uuid.uuid4()}"
    assert await redis_store.put_many([xml("<first/>", key=key)]) == [key]
    assert await redis_store.put_many([xml("<second/>", key=key)]) == [""]
    assert (await redis_store.get(key)).payload == b"<first/>"


async def test_redis_down_is_a_store_error_that_names_no_address():
    store = RedisStore("redis://127.0.0.1:1/0")
    try:
        for call in (store.put_many([xml("<VAST/>")]), store.get("k")):
            with pytest.raises(CacheStoreError) as caught:
                await call
            assert str(caught.value) == "redis: ConnectionError"  # what clients may read
            assert "127.0.0.1:1" in caught.value.detail  # what the log gets
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("redis", "kind", "seeds"),
    [
        ({}, RedisStore, None),
        ({"cluster": {"nodes": ["127.0.0.1:7000", "[::1]:7001"]}}, RedisClusterStore, ["127.0.0.1:7000", "::1:7001"]),
    ],
)
async def test_one_redis_or_a_redis_cluster_by_configuration(redis, kind, seeds):
    store = build_cache_store(make_config(cache={"store": "redis", "redis": redis}), SharedSession())
    try:
        assert type(store) is kind and store.name == "redis"  # one metrics label for both
        if seeds:
            assert sorted(store.client.nodes_manager.startup_nodes) == seeds
    finally:
        await store.close()


async def test_cache_errors_sent_to_clients_name_no_internal_address(make_client, caplog):
    """/vtrack and /cache answer a store failure without the store's address; the log keeps it."""
    client = await make_client({"cache": {"store": "redis", "redis": {"url": "redis://127.0.0.1:1/0"}}})
    put = {"puts": [{"type": "xml", "value": "<VAST version=\"3.0\"></VAST>", "bidid": "b", "bidder": "x"}]}
    with caplog.at_level("WARNING", logger="hbserver.cache"):
        answers = [await client.post("/vtrack?a=acc", json=put),
                   await client.post("/cache", json={"puts": [{"type": "json", "value": {"a": 1}}]}),
                   await client.get("/cache?uuid=0b5c4f9e-0000-4000-8000-000000000000")]
    for response in answers:
        text = await response.text()
        assert response.status >= 500, text
        assert "127.0.0.1" not in text and ":1/" not in text, text
    assert "127.0.0.1:1" in caplog.text


async def test_remote_store_never_follows_redirects_and_names_no_address(aiohttp_server, unused_tcp_port, caplog):
    from aiohttp import web

    hits: list[str] = []

    async def elsewhere(request: web.Request) -> web.Response:
        hits.append(request.method)
        return web.json_response({"responses": [{"uuid": "stolen"}]})

    target = await aiohttp_server(_app_with(elsewhere))

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(str(target.make_url("/cache")))

    origin = await aiohttp_server(_app_with(redirect))
    session = SharedSession()
    try:
        store = RemoteStore(str(origin.make_url("/cache")), session)
        for call in (store.put_many([xml("<VAST/>")]), store.get("k")):
            with pytest.raises(CacheStoreError, match=r"^HTTP status code 307$"):
                await call
        assert hits == []
        down = RemoteStore(f"http://127.0.0.1:{unused_tcp_port}/cache", session)
        with pytest.raises(CacheStoreError) as caught:
            await down.put_many([xml("<VAST/>")])
        assert str(caught.value) == "ClientConnectorError"
        assert f"127.0.0.1:{unused_tcp_port}" in caught.value.detail
    finally:
        await session.close()


def _app_with(handler):
    from aiohttp import web

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    return app


# -- remote (a real Prebid Cache API: hbserver's own /cache over a socket) -----------------------


async def test_remote_store_speaks_the_prebid_cache_api(make_client):
    upstream = await make_client({})
    session = SharedSession()
    store = RemoteStore(str(upstream.make_url("/cache")), session)
    try:
        keys = await store.put_many([xml("<VAST>remote</VAST>"), CacheItem("json", b'{"a":[1,true]}', 60)])
        assert await store.get(keys[0]) == CachedValue("xml", b"<VAST>remote</VAST>")
        assert await store.get(keys[1]) == CachedValue("json", b'{"a":[1,true]}')
        assert await store.get(str(uuid.uuid4())) is None
    finally:
        await session.close()


async def test_remote_store_errors(aiohttp_server):
    from aiohttp import web

    answers = {"/bad-status": web.Response(status=503), "/bad-json": web.Response(text="nope"),
               "/short": web.json_response({"responses": []})}

    async def handler(request: web.Request) -> web.Response:
        return answers[request.path]

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    server = await aiohttp_server(app)
    session = SharedSession()
    try:
        for path, message in [
            ("/bad-status", "HTTP status code 503"),
            ("/bad-json", "Cannot parse response"),  # the answer itself goes to the log only
            ("/short", "The number of response cache objects doesn't match with bids"),
        ]:
            with pytest.raises(CacheStoreError) as caught:
                await RemoteStore(str(server.make_url(path)), session).put_many([xml("<VAST/>")])
            assert str(caught.value) == message
    finally:
        await session.close()


# -- the cache client ----------------------------------------------------------------------------


@pytest.mark.parametrize(("requested", "expected"), [(None, 300), (0, 300), (-5, 300), (10, 10), (99999, 3600)])
def test_ttl_rule(requested, expected):
    service = CacheService(MemoryStore(1 << 20), make_config(), Metrics())
    assert service.ttl(requested) == expected


async def test_client_deadline_and_metrics():
    class Slow(MemoryStore):
        in_process = False  # as a remote store: the deadline applies

        async def put_many(self, items):
            await asyncio.sleep(1)

    metrics = Metrics()
    service = CacheService(Slow(1 << 20), make_config(), metrics)
    with pytest.raises(CacheTimeout):
        await service.put_many([xml("<VAST/>")], timeout=0.05)
    ok = CacheService(MemoryStore(1 << 20), make_config(), metrics)
    await ok.put_many([xml("<VAST/>"), xml("<VAST/>")], timeout=1)
    metrics.flush()
    text = metrics.render()[0].decode()
    assert 'hbserver_cache_puts{outcome="timeout",store="memory"} 1.0' in text
    assert 'hbserver_cache_puts{outcome="ok",store="memory"} 2.0' in text


class DirectOnly(MemoryStore):
    """A memory store whose coroutine must not be used: the service calls ``put_many_now``."""

    async def put_many(self, items):
        raise AssertionError("the in-process store's coroutine was awaited")


class InProcessWithoutDirectCall:
    """An in-process store with only the coroutine: the service awaits it (no deadline)."""

    name = "custom"
    in_process = True

    def __init__(self) -> None:
        self.calls = 0

    async def put_many(self, items):
        self.calls += 1
        return [item.key or f"k{i}" for i, item in enumerate(items)]


def put_counts(metrics: Metrics, store: str) -> dict[str, float]:
    metrics.flush()
    text = metrics.render()[0].decode()
    counts = {}
    for outcome in ("ok", "exists", "error", "timeout"):
        prefix = f'hbserver_cache_puts{{outcome="{outcome}",store="{store}"}} '
        lines = [line for line in text.splitlines() if line.startswith(prefix)]
        counts[outcome] = float(lines[0].removeprefix(prefix)) if lines else 0.0
    return counts


async def test_client_calls_the_memory_store_directly_and_counts_outcomes():
    metrics = Metrics()
    store = DirectOnly(1 << 20, Clock())
    service = CacheService(store, make_config(), metrics)
    first = service.put_many([xml("<a/>"), xml("<b/>", key="own"), CacheItem("json", b"[1]", 60)], timeout=1)
    with pytest.raises(StopIteration) as done:  # answered without suspending: no coroutine, no timer
        first.send(None)
    fresh, own, fresh_json = done.value.value
    assert own == "own" and fresh != fresh_json
    assert all(uuid.UUID(key).version == 4 for key in (fresh, fresh_json))
    # a caller's existing key is create-only: "" in its slot, the value kept
    taken, other = await service.put_many([xml("<c/>", key="own"), xml("<d/>")], timeout=1)
    assert taken == "" and uuid.UUID(other).version == 4
    assert (await store.get("own")).payload == b"<b/>" and (await store.get(fresh)).payload == b"<a/>"
    assert (await store.get(other)).payload == b"<d/>" and (await store.get(fresh_json)).type == "json"
    assert await service.put_many([], timeout=1) == []
    assert put_counts(metrics, "memory") == {"ok": 4.0, "exists": 1.0, "error": 0.0, "timeout": 0.0}
    with pytest.raises(CacheStoreError, match="exceeds the store"):
        await service.put_many([CacheItem("xml", b"x" * (1 << 21), 60), xml("<e/>")], timeout=1)
    assert put_counts(metrics, "memory") == {"ok": 4.0, "exists": 1.0, "error": 2.0, "timeout": 0.0}
    assert len(store) == 4


async def test_client_awaits_an_in_process_store_without_a_direct_call():
    metrics = Metrics()
    store = InProcessWithoutDirectCall()
    service = CacheService(store, make_config(), metrics)
    assert await service.put_many([xml("<a/>"), xml("<b/>", key="mine")], timeout=0.001) == ["k0", "mine"]
    assert store.calls == 1
    assert put_counts(metrics, "custom")["ok"] == 2.0
