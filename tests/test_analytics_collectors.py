"""pubstack, agma and the PBS-format file logger against loopback collectors: what they send (PBS-Go's
payloads, headers, batches by count, size and time), pubstack's remote configuration, the request
each sees (activities, ext.prebid.analytics), drops counted, and everything flushed at shutdown."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.analytics.agma import AgmaModule
from hbserver.analytics.batching import Batcher, Limits
from hbserver.analytics.pubstack import PubstackModule, RemoteConfig
from hbserver.metrics import Metrics
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account
from tests.test_analytics_pbs import AGMA_CONSENT, VALID


class Collector:
    """A loopback collector: pubstack's /bootstrap and /intake/<feature>, agma's /agma; answers
    ``plan`` statuses in turn (then 200) and keeps every body it took, decompressed."""

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.bootstrap: dict[str, Any] = {}
        self.bootstraps: list[str] = []
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self.stall = 0.0
        app = web.Application()
        app.router.add_get("/bootstrap", self.config)
        app.router.add_post("/intake/{feature}", self.take)
        app.router.add_post("/agma", self.take)
        self.server = TestServer(app, host="127.0.0.1")

    async def config(self, request: web.Request) -> web.Response:
        self.bootstraps.append(request.query_string)
        return web.json_response(self.bootstrap)

    async def take(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self.stall:
            await asyncio.sleep(self.stall)
        status = self.plan.pop(0) if self.plan else 200
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if status == 200:
            self.posts.append((request.path, dict(request.headers), body))
        return web.Response(status=status)

    def url(self, path: str = "") -> str:
        return str(self.server.make_url(path))

    def lines(self, path: str) -> list[dict[str, Any]]:
        return [orjson.loads(line) for p, _, body in self.posts if p == path for line in body.splitlines()]

    def events(self) -> list[dict[str, Any]]:
        return [event for p, _, body in self.posts if p == "/agma" for event in orjson.loads(body)]

    async def wait(self, test: Any, seconds: float = 5.0) -> None:
        end = time.monotonic() + seconds
        while not test() and time.monotonic() < end:
            await asyncio.sleep(0.01)


@pytest.fixture
async def collector() -> AsyncIterator[Collector]:
    mock = Collector()
    await mock.server.start_server(auto_decompress=False)
    yield mock
    await mock.server.close()


def dropped(metrics: Metrics, module: str) -> float:
    metrics.flush()  # counters are batched per worker
    for name in ("hbserver_analytics_dropped_events_total", "hbserver_analytics_dropped_events"):
        value = metrics.registry.get_sample_value(name, {"module": module})
        if value is not None:
            return value
    return 0.0


def agma_request(event_id: str = "some-id") -> dict[str, Any]:
    return {"id": event_id, "site": {"id": "track-me-site", "publisher": {"id": "track-me"}},
            "device": {"ua": "ua"}, "user": {"consent": AGMA_CONSENT}}  # fmt: skip


class Source:
    def __init__(self, request: dict[str, Any]) -> None:
        self.request, self.started = request, 1675209600.0


def agma(collector: Collector, metrics: Metrics, count: int = 2, size: int = 10**8, timeout: float = 300.0,
         use_gzip: bool = False) -> AgmaModule:  # fmt: skip
    return AgmaModule(collector.url("/agma"), 5.0, use_gzip, VALID, Limits(count, size, timeout), metrics, 2.0)


def log_amp(module: AgmaModule, request: dict[str, Any] | None = None, status: int = 200) -> None:
    request = request or agma_request()
    module.log_pbs("amp", {"status": status}, Source(request), request)


# --- agma (agma_module_test.go, sender_test.go) --------------------------------------------------


async def test_agma_end_to_end(collector: Collector):
    """TestRaceEnd2End: two AMP events at count 2 make one JSON array, exactly PBS-Go's."""
    module = agma(collector, Metrics())
    await module.start()
    log_amp(module)
    log_amp(module)
    await collector.wait(lambda: collector.posts)
    event = (
        '{"type":"amp","id":"some-id","code":"abcd","site":{"id":"track-me-site","publisher":{"id":"track-me"}},'
        '"device":{"ua":"ua"},"user":{"consent":"' + AGMA_CONSENT + '"},"created_at":"2023-02-01T00:00:00Z"}'
    )
    _path, headers, body = collector.posts[0]
    assert body.decode() == f"[{event},{event}]"
    assert headers["Content-Type"] == "application/json" and "Content-Encoding" not in headers
    assert headers["X-Prebid"].startswith("hbserver/")
    await module.close()


async def test_agma_gzip(collector: Collector):
    """sender_test.go "Test with Gzip true": Content-Encoding gzip, the array compressed."""
    module = agma(collector, Metrics(), count=1, use_gzip=True)
    await module.start()
    log_amp(module)
    await collector.wait(lambda: collector.posts)
    assert collector.posts[0][1]["Content-Encoding"] == "gzip" and len(collector.events()) == 1
    await module.close()


async def test_agma_not_tracked_is_not_buffered(collector: Collector):
    """TestShouldNotTrackLog and the status check: nothing leaves, nothing is counted as dropped."""
    metrics = Metrics()
    module = agma(collector, metrics, count=1)
    await module.start()
    log_amp(module, status=400)
    log_amp(module, {**agma_request(), "site": {"id": "x", "publisher": {"id": "do-not-track"}}})
    module.log_pbs("cookie_sync", {"status": 200}, None, None)
    await module.close()
    assert collector.posts == [] and dropped(metrics, "agma") == 0


async def test_agma_buffer_size(collector: Collector):
    """TestBufferSize: 50 events against a "20Kb" buffer leave in one batch (and the rest waits)."""
    module = agma(collector, Metrics(), count=1000, size=20_000)
    await module.start()
    for _ in range(50):
        log_amp(module)
    await collector.wait(lambda: collector.posts)
    await asyncio.sleep(0.05)
    assert len(collector.posts) == 1
    assert len(collector.posts[0][2]) >= 20_000 - 500 and len(collector.events()) < 50
    await module.close()
    assert len(collector.events()) == 50  # shutdown sent the rest


async def test_agma_buffer_time(collector: Collector):
    """TestBufferTime: fewer events than the count leave at the timeout's tick."""
    module = agma(collector, Metrics(), count=1000, timeout=0.1)
    await module.start()
    for _ in range(5):
        log_amp(module)
    await collector.wait(lambda: collector.posts)
    assert len(collector.posts) == 1 and len(collector.events()) == 5
    await module.close()


async def test_agma_flush_on_shutdown(collector: Collector):
    """TestFlushOnSigterm: what waits is sent when the module closes."""
    module = agma(collector, Metrics(), count=10000)
    await module.start()
    for _ in range(3):
        log_amp(module)
    assert collector.posts == []
    await module.close()
    assert len(collector.events()) == 3


async def test_agma_refused_batch_is_dropped_and_counted(collector: Collector):
    """sender.go: any answer but 200 loses the batch (no retry), counted by module."""
    metrics = Metrics()
    collector.plan = [500]
    module = agma(collector, metrics)
    await module.start()
    log_amp(module)
    log_amp(module)
    await collector.wait(lambda: dropped(metrics, "agma") == 2)
    assert dropped(metrics, "agma") == 2 and collector.posts == []
    await module.close()


def test_agma_needs_an_account():
    """TestConfigParsingError "Test with no accounts"."""
    with pytest.raises(ValueError, match="at least one account"):
        AgmaModule("http://127.0.0.1:9/", 1.0, False, [], Limits(1, 1000, 1.0), Metrics())


# --- the bounded queue ---------------------------------------------------------------------------


async def test_batches_past_the_queue_are_dropped(collector: Collector):
    """At most max_waiting batches wait for the sender: the next one is dropped and counted."""
    metrics = Metrics()
    collector.stall = 0.3

    async def send(url: str, events: list[bytes]) -> bool:
        await asyncio.sleep(0.3)
        return True

    batcher = Batcher("agma", "http://127.0.0.1:9/", Limits(1, 10**6, 60.0), send, metrics, max_waiting=2)
    batcher.start()
    for n in range(6):  # one in flight, two waiting, the rest dropped
        batcher.push(b"%d" % n)
        await asyncio.sleep(0)
    assert dropped(metrics, "agma") >= 2
    await batcher.close(0.01)  # shutdown's time up: what was under way and waiting is counted too
    assert dropped(metrics, "agma") == 6
    assert not batcher.push(b"late") and dropped(metrics, "agma") == 7


# --- pubstack (pubstack_module_test.go) ----------------------------------------------------------


def features(**on: bool) -> dict[str, Any]:
    return {"auction": False, "amp": False, "cookiesync": False, "setuid": False, "video": False, **on}


async def test_pubstack_features_from_remote_config(collector: Collector):
    """TestNewModuleSuccess: nothing is sent until the remote configuration enables the feature; then
    each event goes gzipped to <endpoint>/intake/<feature> with the scope; no change: still sent."""
    collector.bootstrap = {"scopeId": "scope", "endpoint": collector.url(), "features": features()}
    module = PubstackModule("scope", collector.url(), 0.05, Limits(1, 10**6, 60.0), Metrics())
    await module.start()
    await collector.wait(lambda: collector.bootstraps)
    assert collector.bootstraps[0] == "scopeId=scope"
    module.log_pbs(
        "setuid",
        {"event": "setuid", "status": 200, "bidder": "b", "uid": "u", "errors": [], "success": True},
        None,
        None,
    )
    await asyncio.sleep(0.1)
    assert collector.posts == []  # the feature is off
    collector.bootstrap = {**collector.bootstrap, "features": features(setuid=True)}
    await collector.wait(lambda: module.config.enabled("setuid"))
    module.log_pbs(
        "setuid",
        {"event": "setuid", "status": 200, "bidder": "b", "uid": "u", "errors": [], "success": True},
        None,
        None,
    )
    await collector.wait(lambda: collector.posts)
    path, headers, _ = collector.posts[0]
    assert path == "/intake/setuid" and headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Encoding"] == "gzip"
    assert collector.lines("/intake/setuid") == [
        {"scope": "scope", "Status": 200, "Bidder": "b", "UID": "u", "Errors": None, "Success": True}
    ]
    await module.close()
    module.log_pbs(
        "setuid",
        {"event": "setuid", "status": 200, "bidder": "b", "uid": "u", "errors": [], "success": True},
        None,
        None,
    )
    assert len(collector.posts) == 1  # shut down: every feature off


async def test_pubstack_change_flushes_to_the_old_endpoint(collector: Collector):
    """updateConfig: a changed configuration closes (flushes) every channel first."""
    module = PubstackModule("scope", collector.url(), 3600.0, Limits(100, 10**6, 60.0), Metrics())
    module.apply(RemoteConfig("scope", collector.url(), features(cookiesync=True)))
    record = {"event": "cookie_sync", "status": 200, "errors": [], "bidder_status": []}
    module.log_pbs("cookie_sync", record, None, None)
    module.log_pbs("cookie_sync", record, None, None)
    module.apply(RemoteConfig("scope", collector.url("/elsewhere"), features()))
    await collector.wait(lambda: collector.posts)
    assert [p for p, _, _ in collector.posts] == ["/intake/cookiesync"]
    assert len(collector.lines("/intake/cookiesync")) == 2
    await module.close()


async def test_pubstack_flushes_at_shutdown(collector: Collector):
    module = PubstackModule("scope", collector.url(), 3600.0, Limits(100, 10**6, 60.0), Metrics())
    module.apply(RemoteConfig("scope", collector.url(), features(cookiesync=True)))
    for _ in range(3):
        module.log_pbs(
            "cookie_sync", {"event": "cookie_sync", "status": 200, "errors": [], "bidder_status": []}, None, None
        )
    await module.close()
    assert len(collector.lines("/intake/cookiesync")) == 3


# --- the application -----------------------------------------------------------------------------


def app_analytics(collector: Collector, log_file: Path) -> dict[str, Any]:
    return {
        "file": {"filename": str(log_file), "format": "pbs"},
        "pubstack": {"enabled": True, "endpoint": collector.url(), "scopeid": "scope-1",
                     "configuration_refresh_delay": "1h", "buffers": {"count": 1}},
        "agma": {"enabled": True, "endpoint": {"url": collector.url("/agma"), "gzip": True},
                 "buffers": {"count": 1},
                 "accounts": [{"code": "code-1", "publisher_id": "1001"}, {"code": "code-2", "publisher_id": "quiet"}]},
    }  # fmt: skip


OPTIONS = {"pubstack": {"client-analytics": True}, "agma": {"x": 1}, "filelogger": {"y": 2}, "other": {}}


async def test_auction_reaches_every_module(make_client, bidders, collector: Collector, data_dir: Path,
                                            tmp_path: Path):  # fmt: skip
    """One auction: pubstack's and the file's PBS-Go objects, agma's event; each module's request has only
    its own ext.prebid.analytics entry; the account denies agma (reportAnalytics) and user data to pubstack
    (transmitUfpd)."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    collector.bootstrap = {"scopeId": "scope-1", "endpoint": collector.url(), "features": features(auction=True)}
    deny = {"default": True, "rules": [{"allow": False, "condition": {"componentType": ["analytics"]}}]}
    write_account(
        data_dir,
        "quiet",
        {
            "privacy": {
                "allowactivities": {
                    "reportAnalytics": {**deny, "rules": [{"allow": False, "condition": {"componentName": ["agma"]}}]},
                    "transmitUfpd": {**deny, "rules": [{"allow": False, "condition": {"componentName": ["pubstack"]}}]},
                }
            }
        },
    )
    log_file = tmp_path / "pbs.log"
    client = await make_client(bidder_config(bidders, "alpha"), analytics=app_analytics(collector, log_file))
    await collector.wait(lambda: collector.bootstraps)
    await asyncio.sleep(0.05)
    for account in ("1001", "quiet"):
        body = auction_request(user={"id": "user-secret", "consent": AGMA_CONSENT},
                               regs={"gdpr": 0})  # fmt: skip
        body["site"]["publisher"]["id"] = account
        body["site"]["id"] = "site-1"
        body["ext"]["prebid"]["analytics"] = OPTIONS
        assert (await post(client, body)).status == 200
    await client.close()  # flushes every module
    pubstack = collector.lines("/intake/auction")
    assert [line["Account"]["id"] for line in pubstack] == ["1001", "quiet"]
    first, second = pubstack
    assert first["scope"] == "scope-1" and first["Status"] == 200 and first["Errors"] is None
    assert first["Request"]["ext"]["prebid"]["analytics"] == {"pubstack": {"client-analytics": True}}
    assert first["Request"]["user"]["id"] == "user-secret" and "id" not in second["Request"]["user"]
    assert first["Response"]["seatbid"][0]["bid"][0]["price"] == 1.0
    assert first["StartTime"].endswith("Z") and first["HookExecutionOutcome"] is None
    events = collector.events()
    assert [(e["type"], e["code"], e["id"]) for e in events] == [("auction", "code-1", "req-1")]
    assert events[0]["site"]["publisher"]["id"] == "1001" and events[0]["user"]["id"] == "user-secret"
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(line["type"], line["Account"]["id"]) for line in lines] == [
        ("/openrtb2/auction", "1001"), ("/openrtb2/auction", "quiet")]  # fmt: skip
    assert lines[0]["Request"]["ext"]["prebid"]["analytics"] == {"filelogger": {"y": 2}}
    assert list(lines[0])[:3] == ["type", "Status", "Errors"]


async def test_pbs_file_records_other_endpoints(make_client, collector: Collector, data_dir: Path, tmp_path: Path):
    """The file logger's /event, /setuid and refused-auction objects (filesystem/file_module.go)."""
    write_account(data_dir, "open", {"events": {"enabled": True}})
    log_file = tmp_path / "pbs.log"
    client = await make_client({}, analytics={"file": {"filename": str(log_file), "format": "pbs"}})
    assert (await client.get("/event?t=win&b=bid-1&a=open&bidder=alpha&ts=1000")).status == 200
    assert (await post(client, b"{")).status == 400
    await client.close()
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert lines[0] == {
        "type": "/event",
        "request": {
            "type": "win",
            "format": "b",
            "analytics": "1",
            "bidid": "bid-1",
            "account_id": "open",
            "bidder": "alpha",
            "timestamp": 1000,
        },
        "account": lines[0]["account"],
    }
    assert lines[0]["account"]["id"] == "open" and lines[0]["account"]["events"]["enabled"] is True
    assert lines[1]["type"] == "/openrtb2/auction" and lines[1]["Status"] == 400 and lines[1]["Request"] is None
    assert lines[1]["Errors"][0]["Message"].startswith("Invalid request")


async def test_no_pbs_module_no_cost(make_client, tmp_path: Path):
    """Without a PBS-Go module the hbserver file keeps its records as before (no source key)."""
    log_file = tmp_path / "own.jsonl"
    client = await make_client({}, analytics={"file": {"filename": str(log_file)}})
    assert client.app is not None
    assert (await post(client, b"{")).status == 400
    await client.close()
    (line,) = [json.loads(x) for x in log_file.read_text().splitlines()]
    assert line["event"] == "auction" and "_source" not in line and "Status" not in line


async def test_pbs_file_amp_object(make_client, bidders, data_dir: Path, tmp_path: Path):
    """filesystem/model.go logAMP: the targeting answered and the origin (__amp_source_origin)."""
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    store(data_dir, "101", amp_stored("alpha"))
    log_file = tmp_path / "pbs.log"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file),
                                                                                    "format": "pbs"}})  # fmt: skip
    url = "/openrtb2/amp?tag_id=101&__amp_source_origin=https%3A%2F%2Fpub.example"
    answer = await client.get(url)
    assert answer.status == 200
    targeting = (await answer.json())["targeting"]
    await client.close()
    (line,) = [json.loads(x) for x in log_file.read_text().splitlines()]
    assert line["type"] == "/openrtb2/amp" and line["Status"] == 200 and line["Origin"] == "https://pub.example"
    assert line["AmpTargetingValues"] == targeting and targeting
    assert line["Request"]["imp"][0]["id"] == "slot-1" and line["AuctionResponse"] is not None
