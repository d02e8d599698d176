"""Two real hbserver processes sharing Redis as the cache store (one Redis, or a Redis Cluster of
three masters and three replicas): what A stores, B serves; and a third process using A as its
remote Prebid Cache."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest
from redis.crc import key_slot

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
