"""The memory cache store of several workers: each worker owns a shard of the keys
(hbserver/stores/cache/sharded.py), holds it in process and serves it to the others over a Unix
socket (shard_server.py); the others reach it with shared.py, in wire.py's frames.

The same table of store behaviours runs against the in-process store, against a worker's shard
called by that worker and against it called through another worker, so a worker count never
changes what /cache answers. Then where puts and gets go (generated keys never leave the worker,
a caller's foreign key goes to its owner) and the failures (no owner listening, a lost connection,
a hung owner, malformed frames: clean store errors, never a wait without end).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from hbserver.metrics import Metrics
from hbserver.server import RUN_DIR_ENV, WORKER_COUNT_ENV, WORKER_INDEX_ENV
from hbserver.stores.cache import shared as shared_module
from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, CorruptValue
from hbserver.stores.cache.memory import ENTRY_OVERHEAD_BYTES, MemoryStore
from hbserver.stores.cache.service import CacheService, build_cache_store
from hbserver.stores.cache.shard_server import ShardServer
from hbserver.stores.cache.sharded import ShardedMemoryStore, owner, shard_path
from hbserver.stores.cache.shared import UNAVAILABLE, PeerStore
from hbserver.stores.cache.wire import HEADER, OK, get_request, parse_put, put_request
from hbserver.web.client import SharedSession
from tests.conftest import make_config


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def xml(text: str, ttl: int = 60, key: str = "") -> CacheItem:
    return CacheItem("xml", text.encode(), ttl, key)


@pytest.fixture
def short_dir() -> Iterator[str]:
    """A directory with a short path: a Unix socket's path has at most 107 bytes."""
    directory = tempfile.mkdtemp(prefix="hbk-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


class Served:
    """A shard server for ``backing`` in this test's own event loop, and a peer's client of it."""

    def __init__(self, directory: str, backing: MemoryStore) -> None:
        self.path = os.path.join(directory, "cache-0.sock")
        self.backing = backing
        self.server = ShardServer(backing, self.path)
        self.connections = self.server.connections
        self.client = PeerStore(self.path, backing.max_bytes)

    async def start(self) -> None:
        await self.server.start()

    async def stop(self) -> None:
        await self.server.close()
        await asyncio.sleep(0.01)


@pytest.fixture
async def served(short_dir: str) -> AsyncIterator[Served]:
    shard = Served(short_dir, MemoryStore(1 << 20, Clock()))
    await shard.start()
    yield shard
    await shard.client.close()
    await shard.stop()


async def two_workers(directory: str, max_bytes: int = 2 << 20, clock: Clock | None = None
                      ) -> tuple[ShardedMemoryStore, ...]:
    """Workers 0 and 1 of two, both serving their shards (in this one event loop)."""
    clock = clock or Clock()
    workers = tuple(ShardedMemoryStore(index, 2, directory, max_bytes, clock) for index in (0, 1))
    for worker in workers:
        await worker.start()
    return workers


def owned_by(index: int, count: int = 2, prefix: str = "key") -> str:
    """A caller's key that worker ``index`` owns."""
    return next(f"{prefix}-{n}" for n in range(1000) if owner(f"{prefix}-{n}", count) == index)


class Counted:
    """Frames a worker sends to its peers (every call of a PeerStore), by peer socket."""

    def __init__(self, monkeypatch) -> None:
        self.sent: list[str] = []
        call = PeerStore._call

        async def counting(store: PeerStore, request: bytes) -> tuple[int, bytes]:
            self.sent.append(os.path.basename(store.path))
            return await call(store, request)

        monkeypatch.setattr(PeerStore, "_call", counting)


# -- one behaviour, whichever the worker count ---------------------------------------------------


@dataclass
class Case:
    """The store a worker calls (puts on ``store``, gets on ``reader``), the shards holding the items."""

    store: object
    reader: object
    shards: list[MemoryStore]
    clock: Clock

    def held(self) -> tuple[int, int]:
        return sum(len(shard) for shard in self.shards), sum(shard.bytes for shard in self.shards)

    def plant(self, key: str, raw: bytes) -> None:
        shard = self.shards[owner(key, len(self.shards))]
        shard._items[key] = (10**9, raw)
        shard.bytes += 100

    def enlarge(self, max_bytes: int) -> None:
        for store in (self.store, self.reader):
            store.max_bytes = max_bytes
            for peer in getattr(store, "peers", {}).values():
                peer.max_bytes = max_bytes
        for shard in self.shards:
            shard.max_bytes = max_bytes


SHARD_BYTES = 3 * (36 + 3 + 1000 + ENTRY_OVERHEAD_BYTES)  # three 1000-byte values per shard


@pytest.fixture(params=["in-process", "local shard", "through another worker"])
async def case(request, short_dir: str) -> AsyncIterator[Case]:
    clock = Clock()
    if request.param == "in-process":
        backing = MemoryStore(SHARD_BYTES, clock)
        yield Case(backing, backing, [backing], clock)
        return
    first, second = await two_workers(short_dir, 2 * SHARD_BYTES, clock)
    reader = first if request.param == "local shard" else second
    yield Case(first, reader, [first.local, second.local], clock)
    for worker in (first, second):
        await worker.close()


async def ttl_expiry(case: Case) -> None:
    [key] = await case.store.put_many([xml("<VAST>a</VAST>", ttl=10)])
    assert await case.reader.get(key) == CachedValue("xml", b"<VAST>a</VAST>")
    case.clock.now += 9.9
    assert await case.reader.get(key) is not None
    case.clock.now += 0.2
    assert await case.reader.get(key) is None
    assert case.held() == (0, 0)


async def lru_eviction(case: Case) -> None:
    value = b"x" * 1000  # a shard holds three
    first, second, third = await case.store.put_many([CacheItem("xml", value, 60) for _ in range(3)])
    assert await case.reader.get(first) is not None  # first is now the most recently used
    [fourth] = await case.store.put_many([CacheItem("xml", value, 60)])
    assert await case.reader.get(second) is None
    assert all([await case.reader.get(k) is not None for k in (first, third, fourth)])
    assert all(shard.bytes <= shard.max_bytes for shard in case.shards)


async def oversized_batch_writes_nothing(case: Case) -> None:
    [kept] = await case.store.put_many([CacheItem("xml", b"k" * 600, 60)])
    before = case.held()
    for key in ("good-key", owned_by(0), owned_by(1)):  # a caller's key on either shard
        with pytest.raises(CacheStoreError, match=r"^item of \d+ bytes exceeds the store's \d+ bytes$"):
            await case.store.put_many([CacheItem("xml", b"g" * 600, 60, key), CacheItem("xml", b"h" * 9000, 60)])
        assert case.held() == before
        assert await case.reader.get(key) is None
    assert (await case.reader.get(kept)).payload == b"k" * 600


async def custom_keys_are_create_only(case: Case) -> None:
    k1, k2 = owned_by(0, prefix="k1"), owned_by(1, prefix="k2")  # one on each shard when sharded
    assert await case.store.put_many([xml("<a/>", ttl=5, key=k1)]) == [k1]
    assert await case.store.put_many([xml("<b/>", key=k1), xml("<c/>", key=k2)]) == ["", k2]
    assert (await case.reader.get(k1)).payload == b"<a/>"
    assert await case.store.put_many([xml("<e/>", key=k2), xml("<f/>", key=k1)]) == ["", ""]
    case.clock.now += 6
    assert await case.store.put_many([xml("<d/>", key=k1)]) == [k1]  # an expired key is free again
    assert (await case.reader.get(k1)).payload == b"<d/>"
    assert (await case.reader.get(k2)).payload == b"<c/>"


async def fresh_keys_are_uuids(case: Case) -> None:
    keys = await case.store.put_many([xml("<a/>"), CacheItem("json", b'{"\xc3\xa9":1}', 60)])
    assert len(set(keys)) == 2 and all(len(key) == 36 and key[14] == "4" for key in keys)
    assert await case.reader.get(keys[1]) == CachedValue("json", b'{"\xc3\xa9":1}')
    assert await case.store.put_many([]) == []


async def corrupt_value_is_reported(case: Case) -> None:
    for key in ("k", owned_by(0), owned_by(1)):
        case.plant(key, b"<HTML>")
        with pytest.raises(CorruptValue, match="Cannot determine type"):
            await case.reader.get(key)


async def large_values_round_trip(case: Case) -> None:
    case.enlarge(8 << 20)
    big = bytes(range(256)) * 4096  # 1 MiB: many socket reads each way
    foreign = owned_by(1)
    keys = await case.store.put_many([CacheItem("xml", big, 60), CacheItem("json", b"[1]", 60),
                                      CacheItem("xml", big[::-1], 60, foreign)])
    assert (await case.reader.get(keys[0])).payload == big
    assert (await case.reader.get(keys[1])).payload == b"[1]"
    assert (await case.reader.get(foreign)).payload == big[::-1]


@pytest.mark.parametrize(
    "behaviour",
    [ttl_expiry, lru_eviction, oversized_batch_writes_nothing, custom_keys_are_create_only,
     fresh_keys_are_uuids, corrupt_value_is_reported, large_values_round_trip],
    ids=lambda f: f.__name__,
)
async def test_the_sharded_store_behaves_as_the_in_process_one(case, behaviour):
    await behaviour(case)


# -- where puts and gets go ------------------------------------------------------------------------


def test_owner_is_crc32_of_the_key_modulo_the_worker_count():
    for key, count in [("a", 2), ("9c1c8f3e-2b7d-4c59-a4a3-2d2f0d7e5a10", 2), ("k\u00e9y", 3), ("x", 1)]:
        assert owner(key, count) == zlib.crc32(key.encode("utf-8")) % count
    assert {owner(f"k{n}", 4) for n in range(100)} == {0, 1, 2, 3}


async def test_a_put_of_generated_keys_never_leaves_the_worker(short_dir, monkeypatch):
    counted = Counted(monkeypatch)
    first, second = await two_workers(short_dir)
    service = CacheService(first, make_config(), Metrics("t", ""))
    keys = []
    for n in range(200):  # through the service, as auctions, AMP and /vtrack put
        keys += await service.put_many([CacheItem("json", b"[%d]" % n, 60) for _ in range(1 + n % 3)], timeout=1)
    keys += await first.put_many([xml("<VAST/>")])  # and the store's own coroutine
    assert counted.sent == []  # not one frame to a peer
    assert len(set(keys)) == len(keys) == len(first.local) and len(second.local) == 0
    assert {owner(key, 2) for key in keys} == {0}
    assert all(len(key) == 36 and key[14] == "4" for key in keys)
    assert await second.get(keys[0]) == CachedValue("json", b"[0]")  # the other worker asks the owner
    assert counted.sent == ["cache-0.sock"]
    assert await first.get(keys[1]) == CachedValue("json", b"[1]")  # the owner answers itself
    assert counted.sent == ["cache-0.sock"]
    for worker in (first, second):
        await worker.close()


async def test_a_callers_key_owned_by_another_worker_is_put_on_it(short_dir, monkeypatch):
    counted = Counted(monkeypatch)
    first, second = await two_workers(short_dir)
    service = CacheService(first, make_config(), Metrics("t", ""))
    mine, theirs = owned_by(0), owned_by(1)
    assert await service.put_many([xml("<a/>", key=theirs), xml("<b/>", key=mine), xml("<c/>")], timeout=1) == [
        theirs, mine, ANY_KEY,
    ]
    assert counted.sent == ["cache-1.sock"]  # one frame, for the foreign key only
    assert set(second.local._items) == {theirs}
    assert mine in first.local._items and theirs not in first.local._items and len(first.local) == 2
    assert (await second.get(theirs)).payload == b"<a/>"  # its owner reads it in process
    assert (await first.get(theirs)).payload == b"<a/>"
    assert (await second.get(mine)).payload == b"<b/>"
    for worker in (first, second):
        await worker.close()


class _AnyKey(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and len(other) == 36

    __hash__ = str.__hash__


ANY_KEY = _AnyKey()


def test_a_generated_key_costs_microseconds():
    """W draws of a UUID on average (measured in the README: about 1 µs per draw)."""
    store = ShardedMemoryStore(1, 4, "/nonexistent", 1 << 20)
    started = time.perf_counter()
    keys = [store.new_key() for _ in range(10_000)]
    per_key = (time.perf_counter() - started) / len(keys)
    assert {owner(key, 4) for key in keys} == {1} and len(set(keys)) == len(keys)
    assert per_key < 50e-6, per_key  # generous: a busy CI machine


async def test_concurrent_calls_share_one_pipelined_connection(served):
    """Hundreds of calls in flight at once on one connection, each answered with its own result."""

    async def put_then_get(i: int) -> None:
        [key] = await served.client.put_many([CacheItem("json", b'{"i":%d}' % i, 60)])
        assert await served.client.get(key) == CachedValue("json", b'{"i":%d}' % i)

    await asyncio.gather(*(put_then_get(i) for i in range(500)))
    assert len(served.backing) == 500
    assert len(served.connections) == 1


async def test_a_call_given_up_does_not_shift_the_answers(served):
    [key] = await served.client.put_many([xml("<VAST>kept</VAST>")])
    abandoned = asyncio.ensure_future(served.client.get(key))
    await asyncio.sleep(0)
    assert served.client._link is not None and len(served.client._link.waiting) == 1  # sent, not answered
    abandoned.cancel()
    missing, found = await asyncio.gather(served.client.get("no-such-key"), served.client.get(key))
    assert (missing, found) == (None, CachedValue("xml", b"<VAST>kept</VAST>"))


# -- failures: clean errors, never an endless wait -----------------------------------------------


class Mute:
    """An owner that accepts connections and reads, but answers only when told (or never)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.writers.append(writer)
            with contextlib.suppress(ConnectionError):
                while await reader.read(65536):
                    pass

        self.server = await asyncio.start_unix_server(accept, self.path)

    def answer(self, raw: bytes) -> None:
        self.writers[-1].write(raw)

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.close()
        await asyncio.sleep(0.01)


async def expect_unavailable(call, within: float) -> CacheStoreError:
    started = time.monotonic()
    with pytest.raises(CacheStoreError) as caught:
        await asyncio.wait_for(call, 5)
    assert time.monotonic() - started < within
    assert str(caught.value) == UNAVAILABLE  # what clients read: no path
    return caught.value


async def test_no_owner_listening_is_an_error_at_once_naming_no_path(short_dir):
    client = PeerStore(os.path.join(short_dir, "cache-1.sock"), 1 << 20)
    for call in (client.get("k"), client.put_many([xml("<VAST/>")])):
        error = await expect_unavailable(call, within=0.5)
        assert short_dir in error.detail  # the log's detail does
    await client.close()


async def test_a_peer_gone_fails_its_keys_only_and_its_successor_is_reached(short_dir):
    first, second = await two_workers(short_dir)
    [theirs] = await second.put_many([xml("<VAST>lost</VAST>")])
    assert (await first.get(theirs)).payload == b"<VAST>lost</VAST>"  # connected
    await second.close()  # worker 1 dies: its connection drops, its socket is gone
    await expect_unavailable(first.get(theirs), within=0.5)
    await expect_unavailable(first.get(theirs), within=0.5)  # nothing listens: refused at once
    await expect_unavailable(first.put_many([xml("<x/>", key=owned_by(1))]), within=0.5)
    [mine] = await first.put_many([xml("<VAST>kept</VAST>")])  # its own shard goes on
    assert (await first.get(mine)).payload == b"<VAST>kept</VAST>"
    successor = ShardedMemoryStore(1, 2, short_dir, 2 << 20, Clock())  # restarted in the same slot
    await successor.start()
    assert await first.get(theirs) is None  # a new, empty shard
    [again] = await successor.put_many([xml("<VAST>again</VAST>")])
    assert (await first.get(again)).payload == b"<VAST>again</VAST>"
    for worker in (first, successor):
        await worker.close()


async def test_an_owner_that_goes_away_fails_the_waiting_calls_and_is_reconnected(short_dir):
    mute = Mute(os.path.join(short_dir, "cache-0.sock"))
    await mute.start()
    client = PeerStore(mute.path, 1 << 20)
    waiting = [asyncio.ensure_future(client.get(f"k{i}")) for i in range(3)]
    await asyncio.sleep(0.05)
    await mute.close()  # the owner dies with calls in flight
    for call in waiting:
        await expect_unavailable(call, within=0.5)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(mute.path)
    await expect_unavailable(client.get("k"), within=0.5)  # not back yet: refused at once
    shard = Served(short_dir, MemoryStore(1 << 20, Clock()))
    await shard.start()  # a new owner on the same path: the next call connects to it
    [key] = await client.put_many([xml("<VAST>again</VAST>")])
    assert (await client.get(key)).payload == b"<VAST>again</VAST>"
    await client.close()
    await shard.stop()


async def test_a_hung_owner_fails_the_calls_after_the_stall_limit(short_dir, monkeypatch):
    monkeypatch.setattr(shared_module, "STALL_SECONDS", 0.2)
    first = ShardedMemoryStore(0, 2, short_dir, 2 << 20, Clock())
    await first.start()
    mute = Mute(shard_path(short_dir, 1))  # worker 1 accepts but never answers
    await mute.start()
    error = await expect_unavailable(first.get(owned_by(1)), within=1.0)
    assert "no answer" in error.detail
    await first.close()
    await mute.close()


async def test_an_answer_nobody_asked_for_drops_the_connection(short_dir):
    mute = Mute(os.path.join(short_dir, "cache-0.sock"))
    await mute.start()
    client = PeerStore(mute.path, 1 << 20)
    first = asyncio.ensure_future(client.get("k"))
    await asyncio.sleep(0.05)
    answer = HEADER.pack(8, OK) + b"xml<a/>"
    mute.answer(answer + answer)  # two answers for one call
    assert await first == CachedValue("xml", b"<a/>")  # the call took the first
    await asyncio.sleep(0.05)
    assert client._link is not None and client._link.lost
    await client.close()
    await mute.close()


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (HEADER.pack(1 << 30, 2), "frame of"),  # larger than the store could hold
        (HEADER.pack(1, 9), "unknown request code"),
        (HEADER.pack(3, 2) + b"\x05\x00", "item runs past|unpack"),  # five items announced, none sent
    ],
)
async def test_a_malformed_request_closes_that_connection_only(served, raw, problem, caplog):
    reader, writer = await asyncio.open_unix_connection(served.path)
    with caplog.at_level("ERROR", logger="hbserver.cache"):
        writer.write(raw)
        assert await asyncio.wait_for(reader.read(), 2) == b""  # closed, nothing answered
    assert "malformed frame" in caplog.text and re.search(problem, caplog.text)
    writer.close()
    [key] = await served.client.put_many([xml("<VAST/>")])  # other connections go on
    assert await served.client.get(key) is not None


def test_put_frames_carry_keys_ttls_and_stored_values():
    items = [xml("<VAST/>", ttl=7, key="own"), CacheItem("json", b"[1]", 0), CacheItem("json", b"{}", -3)]
    raw = put_request(["own", "fresh", "other"], items)
    length, code = HEADER.unpack_from(raw)
    assert (length, code, len(raw)) == (len(raw) - 4, 2, length + 4)
    assert parse_put(memoryview(raw)[HEADER.size:]) == [
        ("own", 7, b"xml<VAST/>"), ("fresh", 0, b"json[1]"), ("other", 0, b"json{}"),
    ]
    assert get_request("k\u00e9") == HEADER.pack(4, 1) + "k\u00e9".encode()


# -- which store a worker builds -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("workers", "index", "kind", "bound"),
    [(None, None, MemoryStore, 4096), ("1", "0", MemoryStore, 4096), ("2", "1", ShardedMemoryStore, 2048),
     ("3", "2", ShardedMemoryStore, 1365)],
)
async def test_workers_of_a_supervisor_each_own_a_shard(monkeypatch, short_dir, workers, index, kind, bound):
    monkeypatch.setenv(RUN_DIR_ENV, short_dir)
    for name, value in ((WORKER_COUNT_ENV, workers), (WORKER_INDEX_ENV, index)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    store = build_cache_store(make_config(cache={"memory": {"max_bytes": 4096}}), SharedSession())
    assert type(store) is kind and store.name == "memory" and store.max_bytes == bound  # cache.memory.max_bytes / W
    assert store.in_process is (kind is MemoryStore)  # one worker: no hop, no sockets
    if kind is ShardedMemoryStore:
        assert (store.index, store.count, store.local.max_bytes) == (int(index), int(workers), bound)
        assert store.server.path == os.path.join(short_dir, f"cache-{index}.sock")
    await store.close()
