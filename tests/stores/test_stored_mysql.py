"""The MySQL / MariaDB backend against the real server (MariaDB, a database per test), configured with
PBS-Go's ``database.connection`` keys: lookups of every kind, changes and deletions reaching a running
service through the poll, accounts reaching AccountStore, a host's own PBS-Go queries, a database
that is down."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from hbserver.config import AccountSettings
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountStore
from hbserver.stores.lru import LRUCache
from hbserver.stores.stored import StoredData, build_stored_data
from hbserver.stores.stored.mysql import MysqlBackend
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.stores.mysql_db import MysqlDatabase, connection_keys, mysql_database  # noqa: F401 - the fixture

EMPTY = {"requests": set(), "imps": set(), "responses": set(), "accounts": set()}


def build(database: dict[str, Any], metrics: Metrics | None = None) -> StoredData:
    config = make_config(
        {
            "stored_requests": {
                "filesystem": {"enabled": False},
                "database": {"poll_for_updates": {"refresh_rate_seconds": 1}, **database},
                "in_memory_cache": {"type": "lru", "size": 100, "ttl_seconds": 300},
            }
        }
    )
    return build_stored_data(config, metrics or Metrics(), SharedSession())


async def started(service: StoredData) -> StoredData:
    assert service.database is not None
    await service.database.start()
    assert await service.poll_once()  # sets the cursors now, not in the middle of a test
    await service.start()
    return service


@pytest.fixture
async def stored(mysql_database: MysqlDatabase) -> AsyncIterator[StoredData]:  # noqa: F811
    service = await started(build({"connection": mysql_database.keys}))
    yield service
    await service.close()


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "the change did not arrive"
        await asyncio.sleep(0.1)


async def test_fetch_every_kind_by_id(mysql_database: MysqlDatabase, stored: StoredData):  # noqa: F811
    db = mysql_database
    await db.put("stored_requests", "r1", '{"id": "r1", "imp": [{"id": "1"}]}')
    await db.put("stored_imps", "i1", '{"id": "i1"}')
    await db.put("stored_responses", "s1", '[{"seat": "a"}]')
    await db.put("accounts", "acc", '{"disabled": false}')
    await db.put("profiles", "p1", '{"type": "request"}')
    requests, imps, errors = await stored.fetch_requests(["r1", "zz"], ["i1"], 2)
    assert json.loads(requests["r1"]) == {"id": "r1", "imp": [{"id": "1"}]}
    assert json.loads(imps["i1"]) == {"id": "i1"}
    assert errors == ['Stored Request with ID="zz" not found.']
    assert json.loads((await stored.fetch_responses(["s1"], 2))[0]["s1"]) == [{"seat": "a"}]
    assert json.loads((await stored.fetch_profiles(["p1"], 2))[0]["p1"]) == {"type": "request"}
    assert json.loads(await stored.fetch_account("acc") or b"") == {"disabled": False}
    assert await stored.fetch_account("nobody") is None
    assert json.loads((await stored.fetch_amp_request("r1", 2))[0] or b"") == {"id": "r1", "imp": [{"id": "1"}]}


@pytest.mark.parametrize("data", [None, "null"])
async def test_sql_null_and_json_null_are_not_stored(mysql_database: MysqlDatabase, stored: StoredData, data):  # noqa: F811
    await mysql_database.put("stored_imps", "i", data)
    assert (await stored.fetch_requests([], ["i"], 2))[2] == ['Stored Imp with ID="i" not found.']


async def test_ids_are_parameters_and_compared_byte_for_byte(mysql_database: MysqlDatabase, stored: StoredData):  # noqa: F811
    tricky = "x'); DROP TABLE stored_requests; -- %s"
    await mysql_database.put("stored_requests", tricky, '{"ok": true}')
    await mysql_database.put("stored_requests", "Case", '{"case": 1}')
    requests, _imps, errors = await stored.fetch_requests([tricky, "case"], [], 2)
    assert list(requests) == [tricky]
    assert errors == ['Stored Request with ID="case" not found.']


async def test_changes_and_deletions_reach_the_running_service(mysql_database: MysqlDatabase, stored: StoredData):  # noqa: F811
    db = mysql_database
    await db.put("stored_requests", "r", '{"v": 1}')
    await db.put("stored_imps", "gone", '{"v": 1}')
    assert (await stored.fetch_requests(["r"], ["gone"], 2))[:2] == ({"r": b'{"v": 1}'}, {"gone": b'{"v": 1}'})
    assert (await stored.fetch_amp_request("r", 2))[0] == b'{"v": 1}'
    await db.put("stored_requests", "r", '{"v": 2}')
    await db.delete("stored_imps", "gone")

    async def arrived() -> bool:  # AMP's cache too (a poll may have emptied the other one before the change)
        requests, _imps, errors = await stored.fetch_requests(["r"], ["gone"], 2)
        amp = (await stored.fetch_amp_request("r", 2))[0]
        return (
            requests == {"r": b'{"v": 2}'} and amp == b'{"v": 2}' and errors == ['Stored Imp with ID="gone" not found.']
        )

    await eventually(arrived)


async def test_account_changes_reach_account_store(mysql_database: MysqlDatabase, stored: StoredData):  # noqa: F811
    accounts = AccountStore(AccountSettings(), stored, Metrics(), cache=LRUCache(100, 300))
    stored.add_listener("accounts", accounts.invalidate)
    await mysql_database.put("accounts", "acc", '{"events": {"enabled": true}}')
    assert (await accounts.get("acc")).settings.events.enabled is True
    await mysql_database.put("accounts", "acc", '{"events": {"enabled": false}}')

    async def arrived() -> bool:
        return not (await accounts.get("acc")).settings.events.enabled

    await eventually(arrived)


async def test_the_poll_reports_each_change_once(mysql_database: MysqlDatabase):  # noqa: F811
    db = mysql_database
    backend = MysqlBackend(db.dbname, **{k: v for k, v in db.keys.items() if k not in ("driver", "dbname")})
    await backend.start()
    try:
        await db.put("stored_imps", "old", "{}")
        assert await backend.poll() == {**EMPTY, "profiles": set()}
        await backend.fetch({"imps": ["old"]})  # served, so its deletion is reported
        await db.put("stored_imps", "i", "{}")
        await db.put("accounts", "a", "{}")
        await db.delete("stored_imps", "old")
        assert await backend.poll() == {**EMPTY, "imps": {"i", "old"}, "accounts": {"a"}, "profiles": set()}
        assert await backend.poll() == {**EMPTY, "profiles": set()}
        await db.put("stored_imps", "i", '{"again": 1}')
        assert (await backend.poll())["imps"] == {"i"}
    finally:
        await backend.close()


async def test_a_database_that_is_down_does_not_stop_the_server():
    stored = build(
        {"connection": {**connection_keys("test"), "port": 1}, "poll_for_updates": {"refresh_rate_seconds": 60}}
    )
    await stored.start()
    try:
        started_at = time.monotonic()
        errors = (await stored.fetch_requests(["a"], [], 2))[2]
        assert time.monotonic() - started_at < 1
        assert errors[0].startswith('Stored Request with ID="a" could not be fetched: database unavailable: ')
        assert "127.0.0.1" not in errors[0]
        assert await stored.poll_once() is False
    finally:
        await stored.close()


# -- a host's own PBS-Go queries (fetcher.query, amp_query, poll_for_updates.query) ---------------

PBS_GO_TABLES = (
    "CREATE TABLE go_requests (id VARCHAR(64) PRIMARY KEY, requestData TEXT NULL, "
    "last_updated TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))",
    "CREATE TABLE go_imps LIKE go_requests",
    "CREATE TABLE go_amp LIKE go_requests",
)
FETCH = (
    "SELECT id, requestData, 'request' as type FROM go_requests WHERE id in $REQUEST_ID_LIST "
    "UNION ALL SELECT id, requestData, 'imp' as type FROM go_imps WHERE id in $IMP_ID_LIST"
)
POLL = (
    "SELECT id, requestData, 'request' AS type FROM go_requests WHERE last_updated > $LAST_UPDATED "
    "UNION ALL SELECT id, requestData, 'imp' AS type FROM go_imps WHERE last_updated > $LAST_UPDATED"
)


async def put_go(db: MysqlDatabase, table: str, item_id: str, data: str | None) -> None:
    await db.execute(
        f"INSERT INTO {table} (id, requestData) VALUES (%s, %s) "
        "ON DUPLICATE KEY UPDATE requestData = VALUES(requestData)",
        item_id,
        data,
    )


async def test_a_pbs_go_section_works_unchanged(mysql_database: MysqlDatabase):  # noqa: F811
    db = mysql_database
    for statement in PBS_GO_TABLES:
        await db.execute(statement)
    await put_go(db, "go_requests", "r", '{"v": 1}')
    await put_go(db, "go_imps", "i", '{"v": 1}')
    await put_go(db, "go_amp", "r", '{"amp": 1}')
    await db.put("stored_requests", "r", '{"from": "hbserver table"}')  # not read: the host's query serves requests
    stored = await started(
        build(
            {
                "connection": db.keys,
                "fetcher": {"query": FETCH, "amp_query": FETCH.replace("go_requests", "go_amp")},
                "poll_for_updates": {"refresh_rate_seconds": 1, "timeout_ms": 2000, "query": POLL},
            }
        )
    )
    try:
        requests, imps, errors = await stored.fetch_requests(["r", "x"], ["i"], 2)
        assert (requests, imps) == ({"r": b'{"v": 1}'}, {"i": b'{"v": 1}'})
        assert errors == ['Stored Request with ID="x" not found.']
        assert (await stored.fetch_amp_request("r", 2))[0] == b'{"amp": 1}'
        await put_go(db, "go_requests", "r", '{"v": 2}')
        await put_go(db, "go_imps", "i", None)  # PBS-Go's deletion: a row whose data is NULL

        async def arrived() -> bool:
            requests, _imps, errors = await stored.fetch_requests(["r"], ["i"], 2)
            return requests == {"r": b'{"v": 2}'} and errors == ['Stored Imp with ID="i" not found.']

        await eventually(arrived)
    finally:
        await stored.close()
