"""The LRU in front of stored data, and the account store's cache and single flight."""

from __future__ import annotations

import asyncio

import pytest

from hbserver.config import AccountSettings
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.filesystem import safe_id
from hbserver.stores.lru import LRUCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_lru_evicts_least_recently_used():
    cache: LRUCache[int] = LRUCache(2, 0)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_lru_entries_expire():
    clock = Clock()
    cache: LRUCache[int] = LRUCache(10, 30, clock=clock)
    cache.put("a", 1)
    clock.now += 29.9
    assert cache.get("a") == 1
    clock.now += 0.2
    assert cache.get("a") is None
    assert len(cache) == 0


def test_lru_ttl_zero_never_expires():
    clock = Clock()
    cache: LRUCache[int] = LRUCache(10, 0, clock=clock)
    cache.put("a", 1)
    clock.now += 10**9
    assert cache.get("a") == 1


def test_lru_rejects_zero_size():
    with pytest.raises(ValueError):
        LRUCache(0, 0)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("acc-1", True), ("123", True), ("", False), (".", False), ("..", False), ("a/b", False),
     ("..\\x", False), ("a\x00", False), ("x" * 200, True), ("x" * 201, False)],
)
def test_safe_ids(value, ok):
    assert safe_id(value) is ok


class SlowFetcher:
    def __init__(self, answer: bytes | None, delay: float = 0.05) -> None:
        self.answer = answer
        self.delay = delay
        self.calls = 0

    async def fetch_account(self, account_id: str) -> bytes | None:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return self.answer


async def test_concurrent_misses_share_one_fetch():
    fetcher = SlowFetcher(b'{"events": {"enabled": false}}')
    store = AccountStore(AccountSettings(), fetcher, Metrics(), cache=LRUCache(10, 60))
    accounts = await asyncio.gather(*(store.get("acc") for _ in range(20)))
    assert fetcher.calls == 1
    assert all(a.settings.events.enabled is False for a in accounts)
    await store.get("acc")
    assert fetcher.calls == 1


async def test_fetch_timeout_is_504_and_not_cached():
    fetcher = SlowFetcher(b"{}", delay=1)
    store = AccountStore(AccountSettings(), fetcher, Metrics(), cache=LRUCache(10, 60), timeout=0.05)
    for _ in range(2):
        with pytest.raises(AccountError) as caught:
            await store.get("acc")
        assert caught.value.status == 504
    assert fetcher.calls == 2


async def test_refusals_are_cached_and_raised_fresh():
    fetcher = SlowFetcher(b"not json", delay=0)
    store = AccountStore(AccountSettings(), fetcher, Metrics(), cache=LRUCache(10, 60))
    errors = []
    for _ in range(3):
        with pytest.raises(AccountError) as caught:
            await store.get("acc")
        errors.append(caught.value)
    assert fetcher.calls == 1
    assert len({id(e) for e in errors}) == 3  # no shared exception object collecting tracebacks
    assert {e.status for e in errors} == {500}


class FailingFetcher:
    async def fetch_account(self, account_id: str) -> bytes | None:
        raise PermissionError(13, "Permission denied")


async def test_io_errors_are_500_with_the_reason():
    store = AccountStore(AccountSettings(), FailingFetcher(), Metrics())
    with pytest.raises(AccountError) as caught:
        await store.get("acc")
    assert (caught.value.status, caught.value.message) == (
        500, "Error occurred while fetching account: Permission denied"
    )


async def test_unknown_keys_in_account_files_are_ignored():
    store = AccountStore(AccountSettings(), SlowFetcher(b'{"id": "acc", "auction": {"x": 1}}', 0), Metrics())
    assert (await store.get("acc")).settings == AccountSettings()
