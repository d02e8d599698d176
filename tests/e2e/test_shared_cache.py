"""Two real hbserver processes sharing Redis as the cache store (one Redis, or a Redis Cluster of
three masters and three replicas): what A stores, B serves; a third process using A as its
remote Prebid Cache; and one process with two workers sharing the memory store (each worker owns a
shard of the keys and serves it to the other)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
import urllib.request
import uuid
import zlib
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.mmap_dict import MmapedDict
from redis.crc import key_slot

from hbserver.metrics import FLUSH_INTERVAL_SECONDS
from tests.e2e.helpers import Server, get
from tests.services import REDIS_URL, require_redis


@pytest.fixture
def servers():
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def start(servers: list[Server], tmp_path, **env: str) -> Server:
    server = Server(env={f"HBS_{k.upper()}": v for k, v in env.items()}, cwd=tmp_path)
    servers.append(server)
    server.wait_ready()
    return server


def post(url: str, body: dict) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


REDIS = {"cache__store": "redis", "cache__redis__url": REDIS_URL}


@pytest.mark.parametrize("redis", ["single", "cluster"])
def test_what_one_instance_stores_another_serves(servers, tmp_path, request, redis):
    if redis == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        # each instance knows the cluster by different seeds and discovers the rest
        a_env = {**REDIS, "cache__redis__cluster__nodes": f"[{', '.join(cluster.seeds[:2])}]"}
        b_env = {**REDIS, "cache__redis__cluster__nodes": f"[{cluster.seeds[5]}]"}
    else:
        require_redis()
        a_env = b_env = REDIS
    a = start(servers, tmp_path, **a_env, external_url="http://a.example")
    b = start(servers, tmp_path, **b_env)
    vast = "<VAST version=\"3.0\"><Ad><InLine><Impression>x</Impression></InLine></Ad></VAST>"
    status, body = post(a.base + "/vtrack?a=acc", {"puts": [
        {"type": "xml", "value": vast, "bidid": "b-1", "bidder": "openx", "timestamp": 5, "ttlseconds": 60}
    ]})
    assert status == 200
    [entry] = json.loads(body)["responses"]
    status, stored = get(f"{b.base}/cache?uuid={entry['uuid']}")
    assert status == 200
    assert stored.decode() == vast.replace(
        "</Impression>",
        "</Impression><Impression><![CDATA[http://a.example/event?t=imp&b=b-1&a=acc&ts=5&bidder=openx&f=b]]>"
        "</Impression>",
    )
    status, body = post(b.base + "/cache", {"puts": [{"type": "json", "value": {"from": "b"}}]})
    assert status == 200
    [entry] = json.loads(body)["responses"]
    assert get(f"{a.base}/cache?uuid={entry['uuid']}") == (200, b'{"from":"b"}')
    assert get(f"{a.base}/cache?uuid={uuid.uuid4()}")[0] == 404
    if redis == "cluster":  # stored in the cluster, on the master of its slot
        owner = cluster.slot_owners()[key_slot(entry["uuid"].encode())]
        assert cluster.call(owner, "GET", entry["uuid"]) == 'json{"from":"b"}'


def test_a_remote_store_is_another_prebid_cache(servers, tmp_path):
    upstream = start(servers, tmp_path)
    front = start(servers, tmp_path, cache__store="remote", cache__remote__url=f"{upstream.base}/cache")
    status, body = post(front.base + "/cache", {"puts": [{"type": "xml", "value": "<VAST>r</VAST>"}]})
    assert status == 200
    [entry] = json.loads(body)["responses"]
    assert get(f"{upstream.base}/cache?uuid={entry['uuid']}") == (200, b"<VAST>r</VAST>")
    assert get(f"{front.base}/cache?uuid={entry['uuid']}") == (200, b"<VAST>r</VAST>")


# -- cache.store: memory (the default) with several workers: each owns a shard, serves it to the other --


def _cache_counts(metrics_dir) -> dict[int, dict[str, float]]:
    """Per worker pid: memory-store puts written and gets by outcome, from its multiprocess file."""
    out: dict[int, dict[str, float]] = {}
    for path in metrics_dir.glob("counter_*.db"):
        pid = int(path.stem.split("_")[1])
        for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
            _name, sample, labels, *_ = json.loads(key)
            if sample in ("hbserver_cache_puts_total", "hbserver_cache_gets_total") and labels["store"] == "memory":
                name = f"{sample.split('_')[2]}_{labels['outcome']}"
                out.setdefault(pid, {}).setdefault(name, 0.0)
                out[pid][name] += value
    return out


def _start_workers(servers: list[Server], tmp_path, *args: str, env: dict[str, str] | None = None) -> Server:
    server = Server("--workers", "2", *args, env=env, cwd=tmp_path)
    servers.append(server)
    server.wait_ready()
    deadline = time.monotonic() + 60
    while server.output().count("listening on") < 2:  # both workers, before the load
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.1)
    return server


def _shards(server: Server) -> dict[int, tuple[int, str]]:
    """Per worker index: the pid and socket path of the worker now serving that shard, from the log."""
    shards: dict[int, tuple[int, str]] = {}
    for line in server.output().splitlines():
        found = re.search(r"serving cache shard (\d+) of 2 on (\S+?)\"", line)
        if found:
            shards[int(found[1])] = (json.loads(line)["worker_pid"], found[2])
    return shards


def _owner(key: str) -> int:
    """The index of the worker owning ``key`` (hbserver.stores.cache.sharded.owner, two workers)."""
    return zlib.crc32(key.encode()) % 2


async def _put_and_read_back(base: str, count: int, concurrency: int) -> list[tuple[int, bytes, bytes]]:
    """``count`` puts of 1-3 values, each value read back twice: every request on a new connection
    (SO_REUSEPORT spreads connections over the workers). Each read as (status, expected, body)."""
    limit = asyncio.Semaphore(concurrency)
    reads: list[tuple[int, bytes, bytes]] = []
    connector = aiohttp.TCPConnector(force_close=True, limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:

        async def one(i: int) -> None:
            values = [{"type": "json", "value": {"put": i, "n": n}} for n in range(i % 3)]
            values.append({"type": "xml", "value": f"<VAST version=\"4.0\"><Ad id=\"{i}\"/></VAST>"})
            async with limit, session.post(base + "/cache", json={"puts": values}) as response:
                assert response.status == 200, await response.text()
                keys = [entry["uuid"] for entry in (await response.json())["responses"]]
            for key, put in zip(keys * 2, values * 2, strict=True):
                expected = put["value"].encode() if put["type"] == "xml" else json.dumps(
                    put["value"], separators=(",", ":")).encode()
                async with limit, session.get(f"{base}/cache?uuid={key}") as response:
                    reads.append((response.status, expected, await response.read()))

        await asyncio.gather(*(one(i) for i in range(count)))
    return reads


def test_two_workers_share_the_memory_store(servers, tmp_path):
    """What one worker stores every worker serves: many concurrent puts and gets over real sockets.
    A worker's generated keys are its own, so about half the reads are answered by the other worker
    asking the owner: without forwarding they would be 404s."""
    metrics_dir = tmp_path / "metrics"
    server = _start_workers(servers, tmp_path, env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)})
    shards = _shards(server)
    assert sorted(shards) == [0, 1] and len({pid for pid, _path in shards.values()}) == 2, server.output()
    assert all(Path(path).is_socket() for _pid, path in shards.values())
    reads = asyncio.run(_put_and_read_back(server.base, count=200, concurrency=32))
    assert len(reads) == 2 * sum(1 + i % 3 for i in range(200))
    assert [r for r in reads if r[0] != 200 or r[1] != r[2]] == []  # every put read back, whoever answered
    time.sleep(FLUSH_INTERVAL_SECONDS + 0.5)
    counts = _cache_counts(metrics_dir)
    assert len(counts) == 2, counts  # both workers took puts and answered reads
    assert all(c.get("puts_ok", 0) > 0 and c.get("gets_hit", 0) > 0 for c in counts.values()), counts
    assert sum(c.get("gets_hit", 0) for c in counts.values()) == len(reads)
    assert sum(c.get("gets_miss", 0) + c.get("gets_error", 0) for c in counts.values()) == 0
    server.signal(signal.SIGTERM)
    assert server.wait(30) == 0
    assert not Path(shards[0][1]).parent.exists()  # the run directory with the sockets is gone


def test_a_dead_worker_loses_its_shard_only_and_its_successor_serves_the_slot(servers, tmp_path):
    server = _start_workers(servers, tmp_path)
    entries = []
    while {_owner(e["uuid"]) for e in entries} != {0, 1}:  # a value on each shard
        status, body = post(server.base + "/cache", {"puts": [{"type": "xml", "value": "<VAST>old</VAST>"}]})
        entries += json.loads(body)["responses"]
    shards = _shards(server)
    victim, _path = shards[1]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while f"worker {victim} exited unexpectedly with status -9" not in server.output():  # its port is closed
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.01)
    for entry in entries[-10:]:  # meanwhile: the dead worker's keys are store errors or misses; never a hang
        started = time.monotonic()
        status, body = get(f"{server.base}/cache?uuid={entry['uuid']}", timeout=5)
        assert time.monotonic() - started < 1.5
        if _owner(entry["uuid"]) == 0:  # the survivor's keys are kept
            assert (status, body) == (200, b"<VAST>old</VAST>"), (status, body)
            continue
        assert (status, body) in {
            (500, f"GET /cache uuid={entry['uuid']}: memory: the shared store is unavailable\n".encode()),
            (404, f"GET /cache uuid={entry['uuid']}: Key not found\n".encode()),
        }, (status, body)
    while _shards(server)[1][0] == victim:  # restarted in its slot, serving shard 1 again
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.1)
    while server.output().count("listening on") < 3:
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.1)
    assert _shards(server)[0] == shards[0]
    reads = asyncio.run(_put_and_read_back(server.base, count=20, concurrency=8))
    assert [r for r in reads if r[0] != 200 or r[1] != r[2]] == []
    server.signal(signal.SIGTERM)
    assert server.wait(30) == 0
