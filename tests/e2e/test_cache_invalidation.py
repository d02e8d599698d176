"""Invalidation through a real server with two workers (issue 46 item 2): a change made through PBS-Java's
admin endpoints (on the admin port) or PBS-Go's HTTP events is served by the next auction on every
worker. Each check sends many requests on fresh connections (SO_REUSEPORT spreads them over the
workers) and reads from the workers' metrics files that both answered."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.mmap_dict import MmapedDict

from hbserver.metrics import FLUSH_INTERVAL_SECONDS
from tests.e2e.helpers import Server, free_port

ROUNDS = 40  # requests per check: all on one worker would be a 1 in 2^39 chance


def stored_request(request_id: str, response: str = "resp") -> dict[str, Any]:
    """A stored request whose id the auction echoes; its bids come from a stored auction response (no
    bidder is called)."""
    prebid = {"bidder": {"appnexus": {"placementId": 1}}, "storedauctionresponse": {"id": response}}
    return {
        "id": request_id,
        "imp": [{"id": "i1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": prebid}}],
        "site": {"page": "http://a.example/p", "publisher": {"id": "acc"}},
    }


def write(directory: Path, kind: str, item_id: str, document: Any) -> None:
    (directory / kind).mkdir(parents=True, exist_ok=True)
    (directory / kind / f"{item_id}.json").write_text(json.dumps(document))


def stored_files(directory: Path) -> Path:
    write(directory, "stored_requests", "sr", stored_request("file"))
    for name, price in (("resp", 1.5), ("resp2", 2.0)):
        bid = {
            "id": "b1",
            "impid": "i1",
            "price": price,
            "adm": "<div/>",
            "crid": "c",
            "w": 300,
            "h": 250,
            "ext": {"prebid": {"type": "banner"}},
        }
        write(directory, "stored_responses", name, [{"seat": "appnexus", "bid": [bid]}])
    write(directory, "accounts", "acc", {"id": "acc"})
    return directory


def call(url: str, body: bytes | None = None, method: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def auction_ids(base: str) -> set[str]:
    """The ids ROUNDS auctions of stored request ``sr`` answer with (a status instead when not 200)."""
    body = json.dumps({"ext": {"prebid": {"storedrequest": {"id": "sr"}}}}).encode()
    seen = set()
    for _ in range(ROUNDS):
        status, answer = call(base + "/openrtb2/auction", body)
        seen.add(json.loads(answer)["id"] if status == 200 else str(status))
    return seen


def amp_prices(base: str) -> set[str]:
    seen = set()
    for _ in range(ROUNDS):
        status, answer = call(base + "/openrtb2/amp?tag_id=sr")
        seen.add(json.loads(answer)["targeting"].get("hb_pb", "none") if status == 200 else str(status))
    return seen


class Answered:
    """Per worker pid, the requests it counted (hbserver_requests_total), from the metrics files."""

    def __init__(self, metrics_dir: Path) -> None:
        self.metrics_dir = metrics_dir
        self.before = self.counts()

    def counts(self) -> dict[int, float]:
        time.sleep(FLUSH_INTERVAL_SECONDS + 0.3)
        out: dict[int, float] = {}
        for path in self.metrics_dir.glob("counter_*.db"):
            pid = int(path.stem.split("_")[1])
            for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
                if json.loads(key)[1] == "hbserver_requests_total":
                    out[pid] = out.get(pid, 0.0) + value
        return out

    def both_since(self) -> bool:
        """Did both workers answer requests since the last call?"""
        now = self.counts()
        grew = [pid for pid, value in now.items() if value > self.before.get(pid, 0.0)]
        self.before = now
        return len(grew) == 2


@pytest.fixture
def started() -> Iterator[list[Server]]:
    servers: list[Server] = []
    yield servers
    for server in servers:
        server.stop()


def start_workers(servers: list[Server], tmp_path: Path, **env: str) -> Server:
    env = {f"HBS_{k.upper()}": v for k, v in env.items()} | {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    (tmp_path / "metrics").mkdir(exist_ok=True)
    server = Server("--workers", "2", env=env, cwd=tmp_path)
    servers.append(server)
    server.wait_ready()
    deadline = time.monotonic() + 60
    while server.output().count("listening on") < 2:
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.1)
    return server


def test_admin_endpoints_change_every_worker(started, tmp_path):
    data = stored_files(tmp_path / "data")
    admin_port = free_port()
    server = start_workers(
        started,
        tmp_path,
        stored_requests__filesystem__directorypath=str(data),
        admin__port=str(admin_port),
        admin_endpoints__storedrequest__enabled="true",
        admin_endpoints__storedrequest_amp__enabled="true",
        admin_endpoints__cache_invalidation__enabled="true",
    )
    admin = f"http://127.0.0.1:{admin_port}"
    answered = Answered(tmp_path / "metrics")
    assert auction_ids(server.base) == {"file"} and amp_prices(server.base) == {"1.50"}  # both caches warm
    write(data, "stored_requests", "sr", stored_request("file-2"))
    write(data, "accounts", "acc", {"id": "acc", "disabled": True})
    assert auction_ids(server.base) == {"file"}  # cached: the file's change is not seen
    assert answered.both_since()

    update = {"requests": {"sr": json.dumps(stored_request("saved"))}}
    assert call(admin + "/storedrequests/openrtb2", json.dumps(update).encode()) == (200, b"")
    assert auction_ids(server.base) == {"saved"}
    assert amp_prices(server.base) == {"1.50"}  # AMP's cache is apart
    assert answered.both_since()
    amp_update = {"requests": {"sr": json.dumps(stored_request("amp", "resp2"))}}
    assert call(admin + "/storedrequests/amp", json.dumps(amp_update).encode()) == (200, b"")
    assert amp_prices(server.base) == {"2.00"}
    assert answered.both_since()

    for path in ("/storedrequests/openrtb2", "/storedrequests/amp"):
        assert call(admin + path, b'{"requests": ["sr"]}', "DELETE") == (200, b"")
    assert auction_ids(server.base) == {"file-2"} and amp_prices(server.base) == {"1.50"}  # read again
    assert answered.both_since()

    assert call(admin + "/cache/invalidate?account=acc") == (200, b"")
    assert auction_ids(server.base) == {"503"}  # the account, read again, is disabled
    assert answered.both_since()
    status, _ = call(server.base + "/storedrequests/openrtb2", json.dumps(update).encode())
    assert status == 404  # never on the public port


class EventsHost:
    """A host's events endpoint on loopback: answers ``answer`` to every GET and records the queries."""

    def __init__(self) -> None:
        self.answer: dict[str, Any] = {}
        self.queries: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.queries.append(self.path.partition("?")[2])
                body = json.dumps(host.answer).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/events"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_http_events_change_every_worker(started, tmp_path):
    data = stored_files(tmp_path / "data")
    host = EventsHost()
    try:
        host.answer = {"requests": {"sr": stored_request("loaded")}}
        server = start_workers(
            started,
            tmp_path,
            stored_requests__filesystem__directorypath=str(data),
            stored_requests__http_events__endpoint=host.url,
            stored_requests__http_events__refresh_rate_seconds="1",
            stored_requests__http_events__timeout_ms="1000",
        )
        answered = Answered(tmp_path / "metrics")
        assert auction_ids(server.base) == {"loaded"}  # the start-up load, before the port opened
        assert answered.both_since()
        host.answer = {"requests": {"sr": stored_request("changed")}}
        time.sleep(2.5)  # a refresh on each worker
        assert auction_ids(server.base) == {"changed"}
        assert answered.both_since()
        host.answer = {"requests": {"sr": {"deleted": True}}}
        time.sleep(2.5)
        assert auction_ids(server.base) == {"file"}  # deleted from the cache: the file again
        assert answered.both_since()
        assert host.queries.count("") == 2  # each worker's start-up load
        assert all(q.startswith("last-modified=") for q in host.queries if q)
    finally:
        host.close()
