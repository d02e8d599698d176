"""Shared fixtures: configurations built from plain data, an in-process app client, and mock
bidders on a real socket (tests/auction/helpers.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from hbserver.app import create_app
from hbserver.config import Config, deep_merge, load_config
from hbserver.web.endpoint import Routes
from tests.auction.helpers import MockBidders
from tests.services import require_redis_cluster_tools, running_redis_cluster

MakeClient = Callable[..., Awaitable[TestClient]]


def make_config(raw: dict[str, Any] | None = None, **keys: Any) -> Config:
    """A validated Config from plain data only (no file, no environment)."""
    return load_config(environ={}, overrides=deep_merge(raw or {}, keys))


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
