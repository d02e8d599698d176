"""Vendor lists by version (hbserver/privacy/vendorlists.py) against a loopback GVL archive.

Each consent string is read against the list its vendorListVersion names once that list is loaded;
until then against the nearest loaded version or the fallback file, counted in
privacy_tcf_vendorlist. Consent strings come from tests/privacy/tcf_encoder.py.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.appkeys import SYNC
from hbserver.config import Config, VendorListConfig, build
from hbserver.metrics import Metrics
from hbserver.privacy import vendorlists as vendorlists_module
from hbserver.privacy.enforcement import allow_bidder_sync
from hbserver.privacy.gvl import GlobalVendorList, parse_gvl
from hbserver.privacy.permissions import GdprPermissions
from hbserver.privacy.tcf2 import parse_tcf2
from hbserver.privacy.tcf_policy import default_policy
from hbserver.privacy.vendorlists import VendorLists
from hbserver.web.client import SharedSession
from tests.privacy.tcf_encoder import CoreSegment

V = 32
BIDDER = "appnexus"
# Full enforcement: the list decides. In ALLOWS vendor 32 declares purposes 1 and 2, in DENIES only 1.
ALLOWS = {"id": V, "purposes": [1, 2], "specialFeatures": [1]}
DENIES = {"id": V, "purposes": [1], "specialFeatures": [1]}


def gvl_document(version: int, *vendors: dict[str, Any], spec: int = 3) -> dict[str, Any]:
    return {"gvlSpecificationVersion": spec, "vendorListVersion": version,
            "vendors": {str(v["id"]): v for v in vendors}}


def gvl(version: int, *vendors: dict[str, Any]) -> GlobalVendorList:
    return parse_gvl(gvl_document(version, *vendors))


def consent(version: int, policy_version: int = 4) -> str:
    """Purposes 1 and 2, special feature 1 and vendor 32 consented, naming list ``version``."""
    return CoreSegment(vendor_list_version=version, tcf_policy_version=policy_version, purposes=[1, 2],
                       special_features=[1], vendors=[V]).encode()


class Archive:
    """A loopback GVL archive: ``/v<spec>/vendor-list-v<n>.json`` answered from ``answers``."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}  # path -> document, or a web.Response
        self.hits: dict[str, int] = {}
        self.hold: asyncio.Event | None = None
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._serve)
        self.server = TestServer(app, host="127.0.0.1")

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if self.hold is not None:
            await self.hold.wait()
        answer = self.answers.get(request.path)
        if answer is None:
            return web.Response(status=404)
        if isinstance(answer, web.StreamResponse):
            return answer
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    def serve(self, version: int, *vendors: dict[str, Any], spec: int = 3) -> None:
        self.answers[f"/v{spec}/vendor-list-v{version}.json"] = gvl_document(version, *vendors, spec=spec)

    def template(self, spec: int) -> str:
        return f"http://127.0.0.1:{self.server.port}/v{spec}/vendor-list-v{{VERSION}}.json"


def list_config(archive: Archive, **keys: Any) -> VendorListConfig:
    raw = {"v2": {"http_endpoint_template": archive.template(2)},
           "v3": {"http_endpoint_template": archive.template(3)},
           "retry_policy": {"exponential_backoff": {"delay_millis": 50, "max_delay_millis": 50, "jitter": 0}},
           **keys}
    problems: list[str] = []
    built = build(VendorListConfig, raw, "gdpr.vendorlist", problems)
    assert problems == []
    return built


@pytest.fixture
async def archive() -> AsyncIterator[Archive]:
    served = Archive()
    await served.server.start_server()
    yield served
    if served.hold is not None:
        served.hold.set()
    await served.server.close()


@pytest.fixture
async def session() -> AsyncIterator[SharedSession]:
    shared = SharedSession()
    yield shared
    await shared.close()


async def started(archive: Archive, session: SharedSession, fallback: GlobalVendorList | None = None,
                  metrics: Metrics | None = None, **keys: Any) -> VendorLists:
    lists = VendorLists(list_config(archive, **keys), fallback, metrics)
    lists.start(session)
    return lists


async def settled(lists: VendorLists) -> None:
    """Until no fetch is in flight."""
    for _ in range(200):
        await asyncio.sleep(0.01)
        if not lists._tasks:
            return
    raise AssertionError("a vendor list fetch did not finish")


def bid_allowed(lists: VendorLists, consent_string: str) -> bool:
    permissions = GdprPermissions(default_policy(), consent_string, gvl=lists)
    return permissions.auction(BIDDER, BIDDER, V).allow_bid_request


def counts(metrics: Metrics) -> dict[tuple[str, str], float]:
    metrics.flush()
    found = {}
    for family in metrics.registry.collect():
        if family.name.endswith("privacy_tcf_vendorlist"):
            for sample in family.samples:
                if sample.value:
                    found[sample.labels["spec"], sample.labels["result"]] = sample.value
    return found


async def test_each_consent_is_read_against_its_own_list_once_loaded(archive, session):
    archive.serve(10, ALLOWS)
    archive.serve(11, DENIES)
    metrics = Metrics()
    lists = await started(archive, session, metrics=metrics)
    # Before loading: no list at all, so "basic" enforcement (consent signals only) for both.
    assert (bid_allowed(lists, consent(10)), bid_allowed(lists, consent(11))) == (True, True)
    assert counts(metrics) == {("v3", "missing"): 2}
    await settled(lists)
    assert (bid_allowed(lists, consent(10)), bid_allowed(lists, consent(11))) == (True, False)
    assert lists.loaded(3, 10).vendor(V).purposes == {1, 2}
    assert counts(metrics) == {("v3", "missing"): 2, ("v3", "ok"): 2}
    # The sync path (cookie_sync, setuid) reads the same list: vendor 32 declares purpose 1 in both.
    assert allow_bidder_sync(consent(11), V, lists) is True


async def test_before_loading_the_fallback_then_the_nearest_loaded_version_stands_in(archive, session):
    archive.serve(10, ALLOWS)
    metrics = Metrics()
    slow_retry = {"exponential_backoff": {"delay_millis": 60000, "max_delay_millis": 60000, "jitter": 0}}
    lists = await started(archive, session, fallback=gvl(5, DENIES), metrics=metrics, retry_policy=slow_retry)
    # Meanwhile both are read against the fallback (version 5). The archive has no version 9 (404).
    assert (bid_allowed(lists, consent(10)), bid_allowed(lists, consent(9))) == (False, False)
    assert counts(metrics) == {("v3", "fallback"): 2}
    await settled(lists)
    assert bid_allowed(lists, consent(10)) is True  # its own list
    assert bid_allowed(lists, consent(9)) is True  # now the nearest loaded version is 10, not 5
    assert bid_allowed(lists, consent(5)) is False  # the fallback file is its own version's list
    await settled(lists)
    assert archive.hits == {"/v3/vendor-list-v10.json": 1, "/v3/vendor-list-v9.json": 1}  # 9 backs off
    assert counts(metrics) == {("v3", "fallback"): 3, ("v3", "ok"): 1, ("v3", "err"): 1}


@pytest.mark.parametrize(
    ("loaded", "wanted", "nearest"),
    [
        ((10, 20), 14, 10),
        ((10, 20), 16, 20),
        ((10, 20), 15, 10),  # a tie: the lower
        ((10,), 400, 10),
        ((), 7, None),  # nothing loaded and no fallback: no list ("basic")
    ],
)
def test_nearest_loaded_version(loaded, wanted, nearest):
    lists = VendorLists(Config().gdpr.vendorlist)
    for version in loaded:
        lists._store(3, gvl(version, ALLOWS))
    found = lists.for_consent(parse_tcf2(consent(wanted)))
    assert (found.version if found else None) == nearest


async def test_one_fetch_per_version_and_the_request_never_waits(archive, session):
    archive.serve(10, ALLOWS)
    archive.hold = asyncio.Event()
    lists = await started(archive, session, fallback=gvl(5, DENIES))
    for _ in range(20):
        assert lists.for_consent(parse_tcf2(consent(10))).version == 5  # answered at once, meanwhile
        await asyncio.sleep(0)
    await asyncio.sleep(0.05)
    assert archive.hits == {"/v3/vendor-list-v10.json": 1}
    archive.hold.set()
    await settled(lists)
    assert lists.for_consent(parse_tcf2(consent(10))).version == 10


async def test_a_failed_fetch_is_retried_after_its_back_off(archive, session):
    path = "/v3/vendor-list-v10.json"
    archive.answers[path] = web.Response(status=503)
    lists = await started(archive, session)
    lists.for_consent(parse_tcf2(consent(10)))
    await settled(lists)
    lists.for_consent(parse_tcf2(consent(10)))  # within the back-off (50 ms): not fetched again
    await settled(lists)
    assert archive.hits == {path: 1} and lists.loaded(3, 10) is None
    archive.serve(10, ALLOWS)
    await asyncio.sleep(0.06)
    lists.for_consent(parse_tcf2(consent(10)))
    await settled(lists)
    assert archive.hits == {path: 2} and lists.loaded(3, 10) is not None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (web.Response(status=302, headers={"Location": "/v3/vendor-list-v11.json"}), "a redirect is not followed"),
        (web.Response(body=b"{", content_type="application/json"), "not JSON"),
        (gvl_document(11, ALLOWS), "the body names another version"),
        (web.Response(body=b"[" + b" " * 2000 + b"]"), "larger than the cap (patched to 1000 bytes)"),
    ],
)
async def test_unusable_answers_load_nothing(archive, session, monkeypatch, answer, why):
    monkeypatch.setattr(vendorlists_module, "MAX_GVL_BYTES", 1000)
    archive.answers["/v3/vendor-list-v10.json"] = answer
    archive.serve(11, ALLOWS)
    metrics = Metrics()
    lists = await started(archive, session, metrics=metrics)
    lists.for_consent(parse_tcf2(consent(10)))
    await settled(lists)
    assert lists.loaded(3, 10) is None and lists.loaded(3, 11) is None, why
    assert "/v3/vendor-list-v11.json" not in archive.hits, why
    assert counts(metrics) == {("v3", "missing"): 1, ("v3", "err"): 1}, why


async def test_policy_version_picks_the_gvl_specification(archive, session):
    archive.serve(10, DENIES, spec=2)
    archive.serve(10, ALLOWS, spec=3)
    lists = await started(archive, session)
    lists.for_consent(parse_tcf2(consent(10, policy_version=2)))
    lists.for_consent(parse_tcf2(consent(10, policy_version=4)))
    await settled(lists)
    assert (bid_allowed(lists, consent(10, policy_version=2)), bid_allowed(lists, consent(10))) == (False, True)


async def test_the_cache_is_bounded_and_keeps_the_fallback(archive, session, monkeypatch):
    monkeypatch.setattr(vendorlists_module, "MAX_LISTS_PER_SPEC", 2)
    for version in (10, 11, 12):
        archive.serve(version, ALLOWS)
    lists = await started(archive, session, fallback=gvl(5, DENIES))
    for version in (10, 11, 12):
        lists.for_consent(parse_tcf2(consent(version)))
        await settled(lists)
    assert sorted(lists._lists[3]) == [5, 11, 12]


async def test_large_lists_are_parsed_off_the_event_loop(archive, session, monkeypatch):
    monkeypatch.setattr(vendorlists_module, "PARSE_IN_THREAD_BYTES", 10)
    threads = []
    decode = vendorlists_module._decode

    def recording(body: bytes, url: str) -> GlobalVendorList:
        threads.append(threading.current_thread())
        return decode(body, url)

    monkeypatch.setattr(vendorlists_module, "_decode", recording)
    archive.serve(10, ALLOWS)
    lists = await started(archive, session)
    lists.for_consent(parse_tcf2(consent(10)))
    await settled(lists)
    assert lists.loaded(3, 10) is not None
    assert threads and threads[0] is not threading.main_thread()


async def test_nothing_is_fetched_with_an_empty_template_or_before_start(archive, session):
    archive.serve(10, ALLOWS)
    off = VendorLists(list_config(archive, v3={"http_endpoint_template": ""}))
    off.start(session)
    idle = VendorLists(list_config(archive))  # never started
    for lists in (off, idle):
        assert lists.for_consent(parse_tcf2(consent(10))) is None
    await asyncio.sleep(0.05)
    assert archive.hits == {}


async def test_the_app_fetches_the_version_a_cookie_sync_names(archive, make_client):
    """In the running app: a /cookie_sync naming version 10 is answered at once (no list yet:
    counted as missing) and starts one fetch from the configured template; the list then serves."""
    archive.serve(10, ALLOWS)
    client = await make_client(gdpr={"vendorlist": {"v3": {"http_endpoint_template": archive.template(3)}}})
    lists = client.app[SYNC].gate.gvl
    assert isinstance(lists, VendorLists) and lists.fallback is None
    body = {"bidders": [BIDDER], "gdpr": 1, "gdpr_consent": consent(10), "limit": 0}
    first = await (await client.post("/cookie_sync", json=body)).json()
    await settled(lists)
    second = await (await client.post("/cookie_sync", json=body)).json()
    assert archive.hits == {"/v3/vendor-list-v10.json": 1}
    assert lists.loaded(3, 10) is not None
    assert [s["bidder"] for s in first["bidder_status"]] == [s["bidder"] for s in second["bidder_status"]] == [BIDDER]
    text = await (await client.get("/metrics")).text()
    assert 'hbserver_privacy_tcf_vendorlist{result="missing",spec="v3"} 1.0' in text
    assert 'hbserver_privacy_tcf_vendorlist{result="ok",spec="v3"} 1.0' in text
    assert "hbserver_gvl_requests 1.0" in text
