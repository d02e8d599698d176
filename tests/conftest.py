"""Shared fixtures: configurations built from plain data, an in-process app client, and mock
bidders on a real socket (tests/auction/helpers.py)."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient

from hbserver.app import create_app
from hbserver.config import Config, deep_merge, load_config
from hbserver.privacy.vendorlists import FetchFailed, VendorLists
from hbserver.web.endpoint import Routes
from tests.auction.helpers import MockBidders
from tests.services import require_redis_cluster_tools, running_redis_cluster

MakeClient = Callable[..., Awaitable[TestClient]]

# Tests never fetch IAB's vendor lists: test configurations turn fetching off (a test that fetches
# names its own loopback server), servers started as processes inherit the same from the
# environment, and any other fetch in this process is refused before it leaves (offline_vendor_lists).
NO_VENDORLIST_FETCH: dict[str, Any] = {
    "gdpr": {"vendorlist": {"v2": {"http_endpoint_template": ""}, "v3": {"http_endpoint_template": ""}}}
}
for _spec in ("V2", "V3"):
    os.environ.setdefault(f"HBS_GDPR__VENDORLIST__{_spec}__HTTP_ENDPOINT_TEMPLATE", '""')


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made, as the server freezes what start-up made (hbserver.server.tune_gc).

    Collection loads every module and fixture table; left in the collected heap, each full collection
    walks all of it (400-600 ms pauses measured mid-suite), long enough to blow a test auction's 500 ms
    tmax or the 1 s account fetch behind /vtrack on a busy CI machine.
    """
    gc.collect()
    gc.freeze()


def make_config(raw: dict[str, Any] | None = None, **keys: Any) -> Config:
    """A validated Config from plain data only (no file, no environment); no vendor list fetching
    unless ``raw`` names a template."""
    return load_config(environ={}, overrides=deep_merge(deep_merge(NO_VENDORLIST_FETCH, raw or {}), keys))


@pytest.fixture(autouse=True)
def offline_vendor_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """A vendor list fetch to anything but 127.0.0.1 fails at once, as a failed fetch does."""
    download = VendorLists._download

    async def loopback_only(self: VendorLists, url: str) -> Any:
        if urlsplit(url).hostname != "127.0.0.1":
            raise FetchFailed(f"{url}: tests fetch from 127.0.0.1 only")
        return await download(self, url)

    monkeypatch.setattr(VendorLists, "_download", loopback_only)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty stored-data directory (PBS layout) for the filesystem fetcher."""
    root = tmp_path / "by_id"
    for kind in ("accounts", "stored_requests", "stored_imps", "stored_responses"):
        (root / kind).mkdir(parents=True)
    return root


def write_account(data_dir: Path, account_id: str, settings: Any) -> None:
    text = settings if isinstance(settings, str) else json.dumps(settings)
    (data_dir / "accounts" / f"{account_id}.json").write_text(text)


@pytest.fixture
def make_client(aiohttp_client: Callable[..., Awaitable[TestClient]], data_dir: Path) -> MakeClient:
    """Start the real application in-process with the given configuration keys."""

    async def factory(
        raw: dict[str, Any] | None = None,
        extra_routes: Callable[[Routes], None] | None = None,
        **keys: Any,
    ) -> TestClient:
        base = {"stored_requests": {"filesystem": {"directorypath": str(data_dir)}}}
        config = make_config(deep_merge(base, raw or {}), **keys)
        app = create_app(config, extra_routes=[extra_routes] if extra_routes else ())
        return await aiohttp_client(app)

    return factory


@pytest.fixture
async def bidders() -> AsyncIterator[MockBidders]:
    """One mock bidder server per test."""
    mock = MockBidders()
    await mock.server.start_server()
    yield mock
    await mock.server.close()


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory):
    """A three-master, three-replica Redis Cluster on loopback, one per test module that asks for it."""
    require_redis_cluster_tools()
    with running_redis_cluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster
