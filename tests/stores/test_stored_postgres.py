"""The PostgreSQL backend against the real server (database ``test``, a schema per test): lookups,
changes and deletions reaching a running service through the poll, accounts reaching
AccountStore, a database that is down or slow."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from hbserver.config import AccountSettings
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.lru import LRUCache
from hbserver.stores.stored import StoredData, build_stored_data
from hbserver.stores.stored.postgres import PostgresBackend
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.stores.conftest import Database, sample

DOWN_DSN = "postgresql://postgres@127.0.0.1:1/test"  # nothing listens on port 1


def build(dsn: str, metrics: Metrics | None = None, refresh_rate_seconds: int = 1) -> StoredData:
    config = make_config({"stored_requests": {
        "filesystem": {"enabled": False},
        "database": {"dsn": dsn, "poll_for_updates": {"refresh_rate_seconds": refresh_rate_seconds}},
        "in_memory_cache": {"type": "lru", "size": 100, "ttl_seconds": 300},
    }})
    return build_stored_data(config, metrics or Metrics(), SharedSession())


@pytest.fixture
async def stored(database: Database) -> AsyncIterator[StoredData]:
    service = build(database.dsn)
    assert service.database is not None
    await service.database.start()
    assert await service.poll_once()  # sets the cursors now, not in the middle of a test
    await service.start()
    yield service
    await service.close()


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    """Wait for ``check`` to hold: the poll runs every second."""
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "the change did not arrive"
        await asyncio.sleep(0.1)


async def test_fetch_by_id_in_one_query_per_kind(database: Database, stored: StoredData):
    await database.put("stored_requests", "r1", '{"id": "r1", "imp": [{"id": "1"}]}')
    await database.put("stored_requests", "r2", '{"id": "r2"}')
    await database.put("stored_imps", "i1", '{"id": "i1"}')
    await database.put("stored_responses", "s1", '[{"seat": "a"}]')
    await database.put("accounts", "acc", '{"disabled": false}')
    requests, imps, errors = await stored.fetch_requests(["r1", "r2", "zz"], ["i1", "iz"], 2)
    assert {k: json.loads(v) for k, v in requests.items()} == {
        "r1": {"id": "r1", "imp": [{"id": "1"}]}, "r2": {"id": "r2"},
    }
    assert json.loads(imps["i1"]) == {"id": "i1"}
    assert errors == ['Stored Request with ID="zz" not found.', 'Stored Imp with ID="iz" not found.']
    responses, errors = await stored.fetch_responses(["s1", "sz"], 2)
    assert json.loads(responses["s1"]) == [{"seat": "a"}]
    assert errors == ['Stored Response with ID="sz" not found.']
    assert json.loads(await stored.fetch_account("acc") or b"") == {"disabled": False}
    assert await stored.fetch_account("nobody") is None
    assert (await stored.fetch_amp_request("r2", 2))[0] == b'{"id": "r2"}'


@pytest.mark.parametrize("data", [None, "null"])
async def test_sql_null_and_json_null_are_not_stored(database: Database, stored: StoredData, data):
    await database.put("stored_imps", "i", data)
    assert (await stored.fetch_requests([], ["i"], 2))[2] == ['Stored Imp with ID="i" not found.']


async def test_ids_are_passed_as_parameters(database: Database, stored: StoredData):
    tricky = "x'); DROP TABLE stored_requests; --"
    await database.put("stored_requests", tricky, '{"ok": true}')
    assert (await stored.fetch_requests([tricky], [], 2))[0] == {tricky: b'{"ok": true}'}


async def test_the_cache_serves_until_a_poll_sees_the_change(database: Database):
    stored = build(database.dsn)
    assert stored.database is not None
    await stored.database.start()  # the pool without the poller: this test polls by hand
    try:
        await database.put("stored_requests", "r", '{"v": 1}')
        assert await stored.poll_once()  # sets the cursors
        assert (await stored.fetch_requests(["r"], [], 2))[0] == {"r": b'{"v": 1}'}
        await database.put("stored_requests", "r", '{"v": 2}')
        assert (await stored.fetch_requests(["r"], [], 2))[0] == {"r": b'{"v": 1}'}  # from the LRU
        assert await stored.poll_once()
        assert (await stored.fetch_requests(["r"], [], 2))[0] == {"r": b'{"v": 2}'}
    finally:
        await stored.close()


async def test_a_change_reaches_the_running_service_without_a_restart(database: Database, stored: StoredData):
    await database.put("stored_requests", "r", '{"v": 1}')
    await database.put("stored_imps", "i", '{"v": 1}')
    assert (await stored.fetch_requests(["r"], ["i"], 2))[:2] == ({"r": b'{"v": 1}'}, {"i": b'{"v": 1}'})
    assert (await stored.fetch_amp_request("r", 2))[0] == b'{"v": 1}'
    await database.put("stored_requests", "r", '{"v": 2}')
    await database.put("stored_imps", "i", '{"v": 2}')

    async def changed() -> bool:
        requests, imps, _errors = await stored.fetch_requests(["r"], ["i"], 2)
        return requests == {"r": b'{"v": 2}'} and imps == {"i": b'{"v": 2}'}

    await eventually(changed)
    assert (await stored.fetch_amp_request("r", 2))[0] == b'{"v": 2}'


async def test_an_id_added_later_is_found_before_the_unknown_id_memory_expires(database: Database, stored: StoredData):
    assert (await stored.fetch_responses(["new"], 2))[1] == ['Stored Response with ID="new" not found.']
    await database.put("stored_responses", "new", "[]")

    async def found() -> bool:
        return (await stored.fetch_responses(["new"], 2))[0] == {"new": b"[]"}

    await eventually(found, seconds=5.0)  # MISSING_TTL_SECONDS is 10


async def test_a_deletion_reaches_the_running_service(database: Database, stored: StoredData):
    await database.put("stored_requests", "gone", "{}")
    await database.put("stored_requests", "kept", "{}")
    assert (await stored.fetch_requests(["gone", "kept"], [], 2))[2] == []
    await database.delete("stored_requests", "gone")

    async def deleted() -> bool:
        _requests, _imps, errors = await stored.fetch_requests(["gone", "kept"], [], 2)
        return errors == ['Stored Request with ID="gone" not found.']

    await eventually(deleted)


async def test_account_changes_reach_account_store(database: Database, stored: StoredData):
    seen: set[str] = set()
    stored.add_listener("accounts", seen.add)
    await database.put("accounts", "acc", '{"events": {"enabled": true}}')
    await database.put("accounts", "doomed", '{"disabled": true}')

    async def inserted() -> bool:
        return {"acc", "doomed"} <= seen

    await eventually(inserted)  # so that their insertion is not reported after the lookups below
    accounts = AccountStore(AccountSettings(), stored, Metrics(), cache=LRUCache(100, 300))
    stored.add_listener("accounts", accounts.invalidate)
    assert (await accounts.get("acc")).settings.events.enabled is True
    with pytest.raises(AccountError, match="disabled"):
        await accounts.get("doomed")
    assert (await accounts.get("fresh")).settings.debug_allow is True  # not stored: the defaults
    assert accounts.cached("acc") is not None and accounts.cached("fresh") is not None
    await database.put("accounts", "acc", '{"events": {"enabled": false}}')  # changed
    await database.delete("accounts", "doomed")  # deleted
    await database.put("accounts", "fresh", '{"debug_allow": false}')  # added

    async def arrived() -> bool:
        try:
            doomed = await accounts.get("doomed")
        except AccountError:
            return False
        acc, fresh = await accounts.get("acc"), await accounts.get("fresh")
        return not acc.settings.events.enabled and not doomed.settings.disabled and not fresh.settings.debug_allow

    await eventually(arrived)


async def test_the_poll_reports_each_change_once(database: Database):
    backend = PostgresBackend(database.dsn)
    await backend.start()
    try:
        await database.put("stored_imps", "old", "{}")
        assert await backend.poll() == {"requests": set(), "imps": set(), "responses": set(), "accounts": set()}
        await backend.fetch({"imps": ["old"]})  # served, so its deletion is reported
        await database.put("stored_imps", "i", "{}")
        await database.put("accounts", "a", "{}")
        await database.delete("stored_imps", "old")
        assert await backend.poll() == {"requests": set(), "imps": {"i", "old"}, "responses": set(), "accounts": {"a"}}
        assert await backend.poll() == {"requests": set(), "imps": set(), "responses": set(), "accounts": set()}
        await database.put("stored_imps", "i", '{"again": 1}')
        assert (await backend.poll())["imps"] == {"i"}
    finally:
        await backend.close()


async def test_a_change_right_after_the_first_lookup_is_seen(database: Database):
    backend = PostgresBackend(database.dsn)
    await backend.start()
    try:
        await database.put("stored_requests", "r", "{}")
        await database.put("stored_requests", "before", "{}")
        assert (await backend.fetch({"requests": ["r"]}))["requests"] == {"r": b"{}"}  # sets the cursors
        await database.put("stored_requests", "r", '{"v": 2}')
        assert (await backend.poll())["requests"] == {"r"}  # "before" is no news
    finally:
        await backend.close()


async def test_tracked_ids_are_bounded(database: Database):
    backend = PostgresBackend(database.dsn, track_size=2)
    await backend.start()
    try:
        for item_id in ("a", "b", "c"):
            await database.put("stored_requests", item_id, "{}")
        for item_id in ("a", "b", "c", "b"):
            await backend.fetch({"requests": [item_id]})
        for item_id in ("a", "b", "c"):
            await database.delete("stored_requests", item_id)
        assert (await backend.poll())["requests"] == {"b", "c"}  # a's deletion goes unseen: not tracked
    finally:
        await backend.close()


# -- a database that is down or slow ---------------------------------------------------------------


async def test_a_database_that_is_down_does_not_stop_the_server(caplog):
    metrics = Metrics()
    stored = build(DOWN_DSN, metrics, refresh_rate_seconds=60)
    await stored.start()  # does not raise, does not wait (its first poll fails in the background)
    await asyncio.sleep(0.1)
    caplog.clear()
    try:
        started = time.monotonic()
        _requests, _imps, errors = await stored.fetch_requests(["a"], [], 2)
        assert time.monotonic() - started < 1
        assert len(errors) == 1
        assert errors[0].startswith('Stored Request with ID="a" could not be fetched: database unavailable: ')
        assert "127.0.0.1" not in errors[0] and ":1" not in errors[0]  # internal addresses stay in the log
        assert "Connect call failed" in caplog.text or "refused" in caplog.text.lower()
        # within RETRY_SECONDS further lookups fail at once, without a connection attempt each
        for _ in range(20):
            assert (await stored.fetch_requests(["b"], [], 2))[2][0].startswith(
                'Stored Request with ID="b" could not be fetched: database unavailable: '
            )
        assert sample(metrics, "stored_data_fetch_errors_total", backend="database", reason="unavailable") == 21
        with caplog.at_level("WARNING", logger="hbserver.stored"):
            assert await stored.poll_once() is False
            assert await stored.poll_once() is False
        polls = [r for r in caplog.records if "database poll failed" in r.getMessage()]
        assert len(polls) == 2  # one line per failed poll
        assert sample(metrics, "stored_data_fetch_errors_total", backend="database", reason="poll") == 3
        # and the logs of the request flood are limited
        lookups = [r for r in caplog.records if "unavailable" in r.getMessage() and "poll" not in r.getMessage()]
        assert len(lookups) == 1
    finally:
        await stored.close()


async def test_a_database_that_is_down_falls_through_to_http(aiohttp_server):
    from aiohttp import web

    async def handle(_request: web.Request) -> web.Response:
        return web.json_response({"requests": {"a": {"from": "http"}}})

    app = web.Application()
    app.router.add_get("/stored", handle)
    server = await aiohttp_server(app)
    session = SharedSession()
    config = make_config({"stored_requests": {
        "filesystem": {"enabled": False},
        "database": {"dsn": DOWN_DSN},
        "http": {"endpoint": str(server.make_url("/stored"))},
    }})
    stored = build_stored_data(config, Metrics(), session)
    await stored.start()
    try:
        assert await stored.fetch_requests(["a"], [], 2) == ({"a": b'{"from":"http"}'}, {}, [])
    finally:
        await stored.close()
        await session.close()


async def test_a_slow_database_meets_the_deadline(database: Database, stored: StoredData):
    await database.put("stored_requests", "r", "{}")
    async with database.conn.transaction():
        await database.conn.execute("LOCK TABLE stored_requests IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        _requests, _imps, errors = await stored.fetch_requests(["r"], [], 0.1)
        assert time.monotonic() - started < 0.5
        assert errors == ['Stored Request with ID="r" could not be fetched: timed out after 100 ms']
    # once the lock is gone the database answers again
    assert (await stored.fetch_requests(["r"], [], 2))[0] == {"r": b"{}"}
