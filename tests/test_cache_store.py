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
from hbserver.stores.cache.remote import RemoteStore
from hbserver.stores.cache.service import CacheService, CacheTimeout
from hbserver.web.client import SharedSession
from tests.conftest import make_config

REDIS_URL = "redis://127.0.0.1:6379/0"


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


def test_keys_are_random_version_4_uuids_and_differ_across_fork():
    import os

    from hbserver.stores.cache.base import new_key

    keys = [new_key() for _ in range(5000)]
    assert len(set(keys)) == len(keys)
    for key in keys[:500]:
        parsed = uuid.UUID(key)
        assert (str(parsed), parsed.version, parsed.variant) == (key, 4, uuid.RFC_4122)
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


async def test_redis_down_is_a_store_error():
    store = RedisStore("redis://127.0.0.1:1/0")
    try:
        with pytest.raises(CacheStoreError, match="redis"):
            await store.put_many([xml("<VAST/>")])
    finally:
        await store.close()


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
            ("/bad-json", "Cannot parse response: nope"),
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
    assert 'hbserver_cache_puts_total{outcome="timeout",store="memory"} 1.0' in text
    assert 'hbserver_cache_puts_total{outcome="ok",store="memory"} 2.0' in text
