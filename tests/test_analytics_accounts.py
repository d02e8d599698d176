"""Per-account analytics (account ``analytics.http``, host ``analytics.account_http``; issue 46 item 5):
each account's records POSTed to its own loopback collector as JSON arrays, only where its TCF
purpose 7 and activity rules allow; sampling; bounded collectors and queue memory; drops counted;
everything flushed at shutdown (in process, and on a real SIGTERM)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.analytics.account_http import AccountCollectors, consent_allows, purpose7_allows
from hbserver.appkeys import ANALYTICS
from hbserver.config import AccountGdpr, AccountSettings, AnalyticsAccountHttp, Gdpr, build
from hbserver.metrics import Metrics
from hbserver.privacy.activity import ActivityControl, ActivityRequest
from hbserver.privacy.permissions import GdprPermissions
from hbserver.privacy.tcf_policy import TcfPolicy
from hbserver.stores.accounts import Account
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account
from tests.e2e.helpers import Server, get
from tests.privacy.tcf_encoder import CoreSegment
from tests.test_analytics_collectors import dropped

VENDOR = 99


class Collector:
    """A loopback collector at /c/<name>: answers ``plan`` statuses in turn (then 200), may stall,
    keeps each body it took with its headers."""

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.stall = 0.0
        self.posts: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = []
        app = web.Application()
        app.router.add_post("/c/{name}", self.take)
        self.server = TestServer(app, host="127.0.0.1")

    async def take(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self.stall:
            await asyncio.sleep(self.stall)
        status = self.plan.pop(0) if self.plan else 200
        if status == 200:
            self.posts.append((request.match_info["name"], dict(request.headers), orjson.loads(body)))
        return web.Response(status=status)

    def url(self, name: str) -> str:
        return str(self.server.make_url(f"/c/{name}"))

    def records(self, name: str) -> list[dict[str, Any]]:
        return [record for n, _, batch in self.posts if n == name for record in batch]


@pytest.fixture
async def collector() -> AsyncIterator[Collector]:
    mock = Collector()
    await mock.server.start_server()
    yield mock
    await mock.server.close()


def own(url: str, **keys: Any) -> dict[str, Any]:
    """An account file with its own collector."""
    return {"analytics": {"http": {"url": url, **keys}}}


ON = {"account_http": {"enabled": True}}


# --- end to end: auction, AMP, /event --------------------------------------------------------------


async def test_auction_amp_and_event_records_reach_the_accounts_collector(make_client, bidders, collector,
                                                                          data_dir: Path):  # fmt: skip
    bidders.bids["alpha"] = [bid("imp-1", 1.0), bid("slot-1", 2.0)]
    headers = {"Authorization": "Bearer acc1-token", "X-Tenant": "acc1"}
    write_account(data_dir, "acc1", own(collector.url("acc1"), headers=headers, batch_size=2, flush_interval_ms=60000))
    write_account(data_dir, "acc2", {})
    store(data_dir, "101", amp_stored("alpha"))
    client = await make_client(bidder_config(bidders, "alpha"), analytics=ON)
    for account in ("acc1", "acc2"):
        body = auction_request()
        body["site"]["publisher"]["id"] = account
        assert (await post(client, body)).status == 200
    assert (await client.get("/openrtb2/amp?tag_id=101&account=acc1")).status == 200
    assert (await client.get("/event?t=win&b=bid-1&a=acc1&bidder=alpha")).status == 200
    await asyncio.sleep(0.2)
    assert len(collector.posts) == 1  # batch_size 2: the auction and the AMP record; the event waits
    await client.close()  # shutdown flushes the rest
    records = collector.records("acc1")
    assert [r["event"] for r in records] == ["auction", "amp", "notification"]
    assert {r["account"] for r in records} == {"acc1"}
    assert records[0]["bids"][0]["price"] == 1.0 and records[2]["bidid"] == "bid-1"
    assert "_source" not in records[0]
    assert {name for name, _, _ in collector.posts} == {"acc1"}  # acc2 has no collector
    _, sent_headers, _ = collector.posts[0]
    assert sent_headers["Content-Type"] == "application/json"
    assert sent_headers["Authorization"] == "Bearer acc1-token" and sent_headers["X-Tenant"] == "acc1"


async def test_off_unless_the_host_turns_it_on(make_client, bidders, collector, data_dir: Path):
    """Without analytics.account_http.enabled no account's collector is used, and with no other
    module the auction collects nothing for analytics (no per-request cost)."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "acc1", own(collector.url("acc1"), flush_interval_ms=100))
    client = await make_client(bidder_config(bidders, "alpha"))
    assert client.app[ANALYTICS].enabled is False
    body = auction_request()
    body["site"]["publisher"]["id"] = "acc1"
    assert (await post(client, body)).status == 200
    await client.close()
    assert collector.posts == []


async def test_a_collector_url_not_http_makes_the_account_malformed(make_client, bidders, data_dir: Path):
    write_account(data_dir, "acc1", own("ftp://127.0.0.1/c"))
    client = await make_client(bidder_config(bidders, "alpha"), analytics=ON)
    body = auction_request()
    body["site"]["publisher"]["id"] = "acc1"
    answer = await post(client, body)
    assert answer.status == 500 and "malformed" in await answer.text()
    await client.close()


# --- consent: TCF purpose 7, activity rules, GPP ------------------------------------------------------


def tcf(**signals: Any) -> str:
    return CoreSegment(**signals).encode()


P7_AND_VENDOR = tcf(purposes=[1, 7], vendors=[VENDOR])


def permissions(consent: str, account_gdpr: dict[str, Any] | None = None) -> GdprPermissions:
    problems: list[str] = []
    host = build(Gdpr, {}, "gdpr", problems)
    acct = build(AccountGdpr, account_gdpr or {}, "gdpr", problems)
    assert problems == []
    return GdprPermissions(TcfPolicy.build(host, acct), consent, gvl=None)


@pytest.mark.parametrize(("consent", "vendor_id", "account_gdpr", "allowed"), [
    (P7_AND_VENDOR, VENDOR, None, True),
    (tcf(purposes=[1, 7], vendors=[5]), VENDOR, None, False),  # no consent for this vendor
    (tcf(purposes=[1, 2], vendors=[VENDOR]), VENDOR, None, False),  # no purpose 7
    (P7_AND_VENDOR, 0, None, False),  # no vendor id: no vendor consent to find
    (P7_AND_VENDOR, 0, {"purpose7": {"vendor_exceptions": ["account_http"]}}, True),
    (tcf(purposes=[1]), VENDOR, {"purpose7": {"enforce_purpose": False, "enforce_vendors": False}}, True),
    (tcf(purposes=[1, 7]), 0, {"purpose7": {"enforce_vendors": False}}, True),  # the purpose alone
    (tcf(vendors=[VENDOR]), VENDOR, {"purpose7": {"enforce_purpose": False}}, True),  # the vendor alone
    ("", VENDOR, None, False),  # empty consent, purpose 7 enforced
    ("not-a-consent", VENDOR, None, False),
    ("", VENDOR, {"purpose7": {"enforce_purpose": False, "enforce_vendors": False}}, True),
], ids=["purpose-and-vendor", "other-vendor", "no-purpose-7", "no-vendor-id", "vendor-exception",
        "nothing-enforced", "purpose-only", "vendor-only", "empty", "malformed", "empty-nothing-enforced"])  # fmt: skip
def test_tcf_purpose_7(consent: str, vendor_id: int, account_gdpr: dict[str, Any] | None, allowed: bool):
    assert purpose7_allows(permissions(consent, account_gdpr), vendor_id) is allowed


class _Privacy:
    def __init__(self, gdpr: GdprPermissions | None, request: ActivityRequest | None = None) -> None:
        self.gdpr, self.activity_request = gdpr, request


class _Details:
    def __init__(self, privacy: _Privacy | None) -> None:
        self.privacy = privacy


DENY_OURS = {"reportAnalytics": {"rules": [{"allow": False, "condition": {"componentName": ["account_http"]}}]}}
DENY_OTHER = {"reportAnalytics": {"rules": [{"allow": False, "condition": {"componentName": ["pubstack"]}}]}}
DENY_GPP_7 = {"reportAnalytics": {"rules": [{"allow": False, "condition": {"gppSid": [7]}}]}}


@pytest.mark.parametrize(("event", "rules", "privacy", "allowed"), [
    ("auction", None, _Privacy(None), True),  # no GDPR, no rules
    ("auction", DENY_OURS, _Privacy(None), False),
    ("auction", DENY_OTHER, _Privacy(None), True),
    ("auction", DENY_GPP_7, _Privacy(None, ActivityRequest(gpp_sid=[7])), False),  # US national section
    ("auction", DENY_GPP_7, _Privacy(None, ActivityRequest(gpp_sid=[2])), True),
    ("amp", None, _Privacy(permissions(P7_AND_VENDOR)), True),
    ("amp", None, _Privacy(permissions(tcf(purposes=[1], vendors=[VENDOR]))), False),
    ("notification", DENY_OURS, None, False),  # /event: the rules, no consent string
    ("notification", None, None, True),
], ids=["plain", "denied", "other-module-denied", "gpp-sid-denied", "gpp-sid-other", "tcf-ok", "tcf-no-p7",
        "event-denied", "event"])  # fmt: skip
def test_consent_rows(event: str, rules: dict[str, Any] | None, privacy: _Privacy | None, allowed: bool):
    activities = ActivityControl.from_config(rules)
    source = _Details(privacy) if event != "notification" else object()
    assert consent_allows(event, source, activities, VENDOR) is allowed


async def test_gdpr_requests_reach_the_collector_only_with_purpose_7(make_client, bidders, collector,
                                                                     data_dir: Path):  # fmt: skip
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "acc1", {**own(collector.url("acc1"), gvl_vendor_id=VENDOR), **{
        "privacy": {"allowactivities": DENY_GPP_7}}})  # fmt: skip
    client = await make_client(bidder_config(bidders, "alpha"), analytics=ON)
    cases = [
        ("p7", {"gdpr": 1}, P7_AND_VENDOR),
        ("no-p7", {"gdpr": 1}, tcf(purposes=[1, 2], vendors=[VENDOR])),
        ("no-gdpr", {"gdpr": 0}, ""),
        ("gpp-7", {"gdpr": 0, "gpp_sid": [7]}, ""),
    ]
    for request_id, regs, consent in cases:
        body = auction_request(id=request_id, regs=regs, user={"consent": consent} if consent else {})
        body["site"]["publisher"]["id"] = "acc1"
        assert (await post(client, body)).status == 200
    await client.close()
    records = collector.records("acc1")
    assert len(records) == 2
    assert all(r["privacy"]["gdpr"] is (r is records[0]) for r in records)  # the first was under GDPR


# --- sampling, bounds, drops -----------------------------------------------------------------------


def account(account_id: str, url: str, **keys: Any) -> Account:
    problems: list[str] = []
    settings = build(AccountSettings, own(url, **keys), "", problems)
    assert problems == []
    return Account(account_id, settings, ActivityControl())


def record(n: int, pad: int = 0) -> dict[str, Any]:
    return {"event": "notification", "ts": "2026-11-30T00:00:00.000Z", "bidid": f"bid-{n}", "pad": "x" * pad}


def host(**keys: Any) -> AnalyticsAccountHttp:
    problems: list[str] = []
    built = build(AnalyticsAccountHttp, keys, "analytics.account_http", problems)
    assert problems == []
    return built


async def test_sampling_rate_is_drawn_per_record(collector):
    draws = iter([0.1, 0.6, 0.3, 0.9])
    collectors = AccountCollectors(host(), Metrics(), 5.0, rand=lambda: next(draws))
    acc = account("acc1", collector.url("acc1"), sampling_rate=0.5)
    for n in range(4):
        collectors.log(record(n), acc)
    await collectors.close()
    assert [r["bidid"] for r in collector.records("acc1")] == ["bid-0", "bid-2"]


async def test_queue_memory_is_bounded_and_drops_are_counted(collector):
    metrics = Metrics()
    collectors = AccountCollectors(host(max_queue_bytes=1024), metrics, 5.0)
    acc = account("acc1", collector.url("acc1"), flush_interval_ms=60000, batch_size=100)
    for n in range(5):  # about 330 bytes each: the fourth would pass 1024
        collectors.log(record(n, pad=260), acc)
    assert collectors.queued <= 1024
    assert dropped(metrics, "account_http") == 2
    await collectors.close()
    assert [r["bidid"] for r in collector.records("acc1")] == ["bid-0", "bid-1", "bid-2"]
    assert collectors.queued == 0


async def test_batches_are_bounded_by_the_hosts_batch_size_and_bytes(collector):
    collectors = AccountCollectors(host(max_batch_size=2, max_batch_bytes=1024), Metrics(), 5.0)
    acc = account("acc1", collector.url("acc1"), batch_size=50, flush_interval_ms=60000)
    for n in range(5):
        collectors.log(record(n), acc)
    collectors.log(record(99, pad=2000), acc)  # larger than a batch may be: dropped
    await collectors.close()
    assert [len(batch) for _, _, batch in collector.posts] == [2, 2, 1]


async def test_collectors_are_capped_and_an_idle_one_makes_room(collector):
    metrics = Metrics()
    collectors = AccountCollectors(host(max_collectors=1), metrics, 5.0)
    first = account("acc1", collector.url("acc1"), flush_interval_ms=60000)
    second = account("acc2", collector.url("acc2"), flush_interval_ms=100)
    collectors.log(record(1), first)  # acc1 holds a record: not idle
    collectors.log(record(2), second)
    assert dropped(metrics, "account_http") == 1 and collectors.collectors() == 1
    await collectors.close()
    collectors = AccountCollectors(host(max_collectors=1), metrics, 5.0)
    collectors.log(record(3), second)
    deadline = time.monotonic() + 5
    while not collector.records("acc2") and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    collectors.log(record(4), first)  # acc2 is idle now: retired, acc1 gets its place
    await collectors.close()
    assert [r["bidid"] for r in collector.records("acc1")] == ["bid-1", "bid-4"]
    assert [r["bidid"] for r in collector.records("acc2")] == ["bid-3"]


async def test_a_collector_that_refuses_or_cannot_be_reached_counts_drops(collector):
    metrics = Metrics()
    collector.plan = [500]
    collectors = AccountCollectors(host(timeout_ms=500), metrics, 5.0)
    refusing = account("acc1", collector.url("acc1"), batch_size=2)
    gone = account("acc2", "http://127.0.0.1:9/c/acc2", batch_size=1)  # discard port: nothing listens
    for n in range(4):
        collectors.log(record(n), refusing)
    collectors.log(record(9), gone)
    await collectors.close()
    assert [r["bidid"] for r in collector.records("acc1")] == ["bid-2", "bid-3"]
    assert dropped(metrics, "account_http") == 3


async def test_shutdown_time_bounds_the_flush(collector):
    metrics = Metrics()
    collector.stall = 2.0
    collectors = AccountCollectors(host(), metrics, 0.3)
    acc = account("acc1", collector.url("acc1"), batch_size=1)
    for n in range(3):
        collectors.log(record(n), acc)
    started = time.monotonic()
    await collectors.close()
    assert time.monotonic() - started < 1.5
    assert dropped(metrics, "account_http") == 3


async def test_records_after_close_are_dropped(collector):
    metrics = Metrics()
    collectors = AccountCollectors(host(), metrics, 1.0)
    await collectors.close()
    collectors.log(record(1), account("acc1", collector.url("acc1")))
    assert dropped(metrics, "account_http") == 1 and collectors.collectors() == 0


# --- a real SIGTERM ------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    taken: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).taken.extend(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def thread_collector() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    taken: list[dict[str, Any]] = []
    handler = type("Handler", (_Handler,), {"taken": taken})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/c/acc1", taken
    server.shutdown()
    server.server_close()


def test_sigterm_sends_every_waiting_record(thread_collector, data_dir: Path, tmp_path: Path):
    url, taken = thread_collector
    write_account(data_dir, "acc1", own(url, flush_interval_ms=600000, batch_size=1000))
    env = {"HBS_ANALYTICS__ACCOUNT_HTTP__ENABLED": "true",
           "HBS_STORED_REQUESTS__FILESYSTEM__DIRECTORYPATH": str(data_dir)}  # fmt: skip
    server = Server(env=env, cwd=tmp_path)
    try:
        server.wait_ready()
        for n in range(7):
            assert get(f"{server.base}/event?t=win&b=bid-{n}&a=acc1")[0] == 200
        assert taken == []  # nothing leaves before its time or shutdown
        assert server.terminate(20) == 0
    finally:
        server.stop()
    assert sorted(r["bidid"] for r in taken) == [f"bid-{n}" for n in range(7)]
