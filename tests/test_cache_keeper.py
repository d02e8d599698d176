"""The memory cache store shared by several workers: the cache keeper (hbserver/stores/cache/keeper.py)
serving one MemoryStore over a Unix socket, the workers' client (shared.py) and the frames (wire.py).

The same table of store behaviours runs against the in-process store and against the shared one,
so a worker count never changes what /cache answers. Then the failures (no keeper, a lost
connection, a hung keeper: clean store errors, never a wait without end) and the keeper process
the supervisor forks (started, restarted, stopped, its socket removed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hbserver.stores.cache import keeper as keeper_module
from hbserver.stores.cache import shared as shared_module
from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError, CorruptValue
from hbserver.stores.cache.keeper import CACHE_SOCKET_ENV, PROCESS_NAME, Keeper, KeeperProtocol
from hbserver.stores.cache.memory import ENTRY_OVERHEAD_BYTES, MemoryStore
from hbserver.stores.cache.service import build_cache_store
from hbserver.stores.cache.shared import UNAVAILABLE, SharedMemoryStore
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
    """A keeper protocol serving ``backing`` in this test's own event loop, and a client of it."""

    def __init__(self, directory: str, backing: MemoryStore) -> None:
        self.path = os.path.join(directory, "cache.sock")
        self.backing = backing
        self.server: asyncio.AbstractServer | None = None
        self.connections: set[asyncio.Transport] = set()
        self.client = SharedMemoryStore(self.path, backing.max_bytes)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_unix_server(lambda: KeeperProtocol(self.backing, self.connections), self.path)

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for transport in list(self.connections):
            transport.abort()
        await asyncio.sleep(0.01)


@pytest.fixture
async def served(short_dir: str) -> AsyncIterator[Served]:
    keeper = Served(short_dir, MemoryStore(1 << 20, Clock()))
    await keeper.start()
    yield keeper
    await keeper.client.close()
    await keeper.stop()


# -- one behaviour, whichever the worker count ---------------------------------------------------


@pytest.fixture(params=["in-process", "shared"])
async def stores(request, short_dir: str) -> AsyncIterator[tuple[object, MemoryStore, Clock]]:
    """(the store a worker calls, the MemoryStore holding the items, its clock)."""
    clock = Clock()
    backing = MemoryStore(3 * (36 + 3 + 1000 + ENTRY_OVERHEAD_BYTES), clock)
    if request.param == "in-process":
        yield backing, backing, clock
        return
    keeper = Served(short_dir, backing)
    await keeper.start()
    yield keeper.client, backing, clock
    await keeper.client.close()
    await keeper.stop()


async def ttl_expiry(store, backing, clock) -> None:
    [key] = await store.put_many([xml("<VAST>a</VAST>", ttl=10)])
    assert await store.get(key) == CachedValue("xml", b"<VAST>a</VAST>")
    clock.now += 9.9
    assert await store.get(key) is not None
    clock.now += 0.2
    assert await store.get(key) is None
    assert backing.bytes == 0 and len(backing) == 0


async def lru_eviction(store, backing, clock) -> None:
    value = b"x" * 1000  # the store holds three
    first, second, third = await store.put_many([CacheItem("xml", value, 60) for _ in range(3)])
    assert await store.get(first) is not None  # first is now the most recently used
    [fourth] = await store.put_many([CacheItem("xml", value, 60)])
    assert await store.get(second) is None
    assert all([await store.get(k) is not None for k in (first, third, fourth)])
    assert backing.bytes <= backing.max_bytes


async def oversized_batch_writes_nothing(store, backing, clock) -> None:
    [kept] = await store.put_many([CacheItem("xml", b"k" * 600, 60)])
    before = (len(backing), backing.bytes)
    with pytest.raises(CacheStoreError, match=r"^item of \d+ bytes exceeds the store's \d+ bytes$"):
        await store.put_many([CacheItem("xml", b"g" * 600, 60, "good-key"), CacheItem("xml", b"h" * 9000, 60)])
    assert (len(backing), backing.bytes) == before
    assert await store.get("good-key") is None
    assert (await store.get(kept)).payload == b"k" * 600


async def custom_keys_are_create_only(store, backing, clock) -> None:
    assert await store.put_many([xml("<a/>", ttl=5, key="k1")]) == ["k1"]
    assert await store.put_many([xml("<b/>", key="k1"), xml("<c/>", key="k2")]) == ["", "k2"]
    assert (await store.get("k1")).payload == b"<a/>"
    clock.now += 6
    assert await store.put_many([xml("<d/>", key="k1")]) == ["k1"]  # an expired key is free again
    assert (await store.get("k1")).payload == b"<d/>"


async def fresh_keys_are_uuids(store, backing, clock) -> None:
    keys = await store.put_many([xml("<a/>"), CacheItem("json", b'{"\xc3\xa9":1}', 60)])
    assert len(set(keys)) == 2 and all(len(key) == 36 and key[14] == "4" for key in keys)
    assert await store.get(keys[1]) == CachedValue("json", b'{"\xc3\xa9":1}')
    assert await store.put_many([]) == []


async def corrupt_value_is_reported(store, backing, clock) -> None:
    backing._items["k"] = (10**9, b"<HTML>")
    backing.bytes += 100
    with pytest.raises(CorruptValue, match="Cannot determine type"):
        await store.get("k")


async def large_values_round_trip(store, backing, clock) -> None:
    store.max_bytes = backing.max_bytes = 8 << 20
    big = bytes(range(256)) * 4096  # 1 MiB: many socket reads each way
    keys = await store.put_many([CacheItem("xml", big, 60), CacheItem("json", b"[1]", 60)])
    assert (await store.get(keys[0])).payload == big
    assert (await store.get(keys[1])).payload == b"[1]"


@pytest.mark.parametrize(
    "behaviour",
    [ttl_expiry, lru_eviction, oversized_batch_writes_nothing, custom_keys_are_create_only,
     fresh_keys_are_uuids, corrupt_value_is_reported, large_values_round_trip],
    ids=lambda f: f.__name__,
)
async def test_the_shared_store_behaves_as_the_in_process_one(stores, behaviour):
    await behaviour(*stores)


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
    """A keeper that accepts connections and reads, but answers only when told (or never)."""

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


async def test_no_keeper_is_an_error_at_once_naming_no_path(short_dir):
    client = SharedMemoryStore(os.path.join(short_dir, "cache.sock"), 1 << 20)
    for call in (client.get("k"), client.put_many([xml("<VAST/>")])):
        error = await expect_unavailable(call, within=0.5)
        assert short_dir in error.detail  # the log's detail does
    await client.close()


async def test_a_keeper_that_goes_away_fails_the_waiting_calls_and_is_reconnected(short_dir):
    mute = Mute(os.path.join(short_dir, "cache.sock"))
    await mute.start()
    client = SharedMemoryStore(mute.path, 1 << 20)
    waiting = [asyncio.ensure_future(client.get(f"k{i}")) for i in range(3)]
    await asyncio.sleep(0.05)
    await mute.close()  # the keeper dies with calls in flight
    for call in waiting:
        await expect_unavailable(call, within=0.5)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(mute.path)
    await expect_unavailable(client.get("k"), within=0.5)  # not back yet: refused at once
    keeper = Served(short_dir, MemoryStore(1 << 20, Clock()))
    await keeper.start()  # a new keeper on the same path: the next call connects to it
    [key] = await client.put_many([xml("<VAST>again</VAST>")])
    assert (await client.get(key)).payload == b"<VAST>again</VAST>"
    await client.close()
    await keeper.stop()


async def test_a_hung_keeper_fails_the_calls_after_the_stall_limit(short_dir, monkeypatch):
    monkeypatch.setattr(shared_module, "STALL_SECONDS", 0.2)
    mute = Mute(os.path.join(short_dir, "cache.sock"))
    await mute.start()
    client = SharedMemoryStore(mute.path, 1 << 20)
    error = await expect_unavailable(client.get("k"), within=1.0)
    assert "no answer" in error.detail
    await client.close()
    await mute.close()


async def test_an_answer_nobody_asked_for_drops_the_connection(short_dir):
    mute = Mute(os.path.join(short_dir, "cache.sock"))
    await mute.start()
    client = SharedMemoryStore(mute.path, 1 << 20)
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


@pytest.mark.parametrize(("socket_env", "kind"), [(None, MemoryStore), ("/run/x/cache.sock", SharedMemoryStore)])
async def test_workers_of_a_supervisor_use_its_keeper(monkeypatch, socket_env, kind):
    if socket_env is None:
        monkeypatch.delenv(CACHE_SOCKET_ENV, raising=False)
    else:
        monkeypatch.setenv(CACHE_SOCKET_ENV, socket_env)
    store = build_cache_store(make_config(cache={"memory": {"max_bytes": 4096}}), SharedSession())
    assert type(store) is kind and store.name == "memory" and store.max_bytes == 4096
    assert store.in_process is (kind is MemoryStore)  # one worker: no hop
    await store.close()


# -- the keeper process ----------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def round_trip(path: str) -> bytes:
    async def run() -> bytes:
        client = SharedMemoryStore(path, 1 << 20)
        try:
            [key] = await client.put_many([xml("<VAST>p</VAST>")])
            value = await client.get(key)
            assert value is not None
            return value.payload
        finally:
            await client.close()

    return asyncio.run(run())


@pytest.fixture
def keeper(short_dir: str, monkeypatch) -> Iterator[Keeper]:
    monkeypatch.delenv(CACHE_SOCKET_ENV, raising=False)
    handle = Keeper(short_dir, 1 << 20)
    handle.start()
    yield handle
    if handle.pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(handle.pid, signal.SIGKILL)
        handle.stop()


def test_the_keeper_process_serves_ignores_stop_signals_and_stops_with_its_lifeline(keeper):
    assert os.environ[CACHE_SOCKET_ENV] == keeper.path  # for the workers forked next
    assert round_trip(keeper.path) == b"<VAST>p</VAST>"
    assert Path(f"/proc/{keeper.pid}/comm").read_text().strip() == PROCESS_NAME.decode()
    for sig in (signal.SIGTERM, signal.SIGINT):  # meant for the process group: workers drain first
        os.kill(keeper.pid, sig)
    time.sleep(0.2)
    assert alive(keeper.pid) and round_trip(keeper.path) == b"<VAST>p</VAST>"
    pid = keeper.pid
    started = time.monotonic()
    keeper.stop()
    assert time.monotonic() - started < 2  # ended by the lifeline, not killed after the timeout
    assert not alive(pid) and not os.path.exists(keeper.path)
    assert CACHE_SOCKET_ENV not in os.environ


def test_a_dead_keeper_is_restarted_and_clients_reconnect(keeper, caplog, monkeypatch):
    monkeypatch.setattr(keeper_module, "RESTART_PAUSE_SECONDS", 0.05)  # it died young: a pause first
    async def scenario() -> None:
        client = SharedMemoryStore(keeper.path, 1 << 20)
        [key] = await client.put_many([xml("<VAST>lost</VAST>")])
        old = keeper.pid
        os.kill(old, signal.SIGKILL)
        _pid, status = os.waitpid(old, 0)
        await expect_unavailable(client.get(key), within=0.5)  # its connection broke: at once
        await expect_unavailable(client.get(key), within=0.5)  # nothing listens: refused at once
        with caplog.at_level("ERROR", logger="hbserver.cache"):
            assert keeper.reap(old, status, restart=True)
        assert keeper.pid not in (0, old) and "restarting it" in caplog.text
        assert await client.get(key) is None  # a new, empty store
        [key] = await client.put_many([xml("<VAST>new</VAST>")])
        assert (await client.get(key)).payload == b"<VAST>new</VAST>"
        await client.close()

    assert not keeper.reap(os.getpid(), 0, restart=True)  # not the keeper: left to the supervisor
    asyncio.run(scenario())
