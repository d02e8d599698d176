"""Per-account stored ids from the databases (issue 46 item 3, PBS-Java's), against the real PostgreSQL
and MariaDB: hbserver's tables with the optional ``account`` column (deploy/*.sql), a table without
it (and the documented migration, looked up once at start), a host's query returning PBS-Java's rows
``accountId, id, data, type``, the poll keeping each ``(id, account)`` item, and an auction end to end."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from hbserver.app import create_app
from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData, build_stored_data
from hbserver.stores.stored.scoped import Variants, gather
from hbserver.web.client import SharedSession
from tests.conftest import make_config
from tests.services import require
from tests.stores.conftest import PG_URL
from tests.stores.mysql_db import MysqlDatabase, mysql_database  # noqa: F401 - the fixture
from tests.stores.test_stored_scoped import stored_request

DEPLOY = Path(__file__).parents[2] / "deploy"


def statements(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def migration(dialect: str, table: str) -> str:
    """The ALTER TABLE a deploy schema's comment documents for adding the account column to ``table``."""
    text = (DEPLOY / f"{dialect}-init.sql").read_text()
    lines = [line.removeprefix("--").strip() for line in text.splitlines() if line.startswith("--   ")]
    statement = " ".join(lines).split(";")[0]
    assert statement.startswith("ALTER TABLE stored_requests ADD COLUMN account")
    return statement.replace("stored_requests", table)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("a", None, b"x")], b"x"),  # stored once with no account: the bytes, as before accounts
        ([("a", "acc", b"x")], Variants((("acc", b"x"),))),
        ([("a", "acc", b"A"), ("a", None, b"N")], Variants(((None, b"N"), ("acc", b"A")))),  # no account first
        ([("a", None, b"x"), ("a", None, b"x")], b"x"),  # the same item twice counts once
        ([("a", None, b"x"), ("a", None, b"y")], b"y"),  # one account's id twice: the last row (PBS-Go's)
        ([("a", "b", b"x"), ("a", "b", b"y"), ("a", None, b"z")], Variants(((None, b"z"), ("b", b"y")))),
        ([("a", "", b"x")], Variants((("", b"x"),))),  # a host's empty account is an account (PBS-Java's toString)
    ],
)
def test_rows_as_a_backend_answers_them(rows, expected):
    assert gather(rows) == {"a": expected}


class Db:
    """One test database (PostgreSQL schema or MariaDB database) with hbserver's tables of deploy/."""

    dialect: str
    keys: dict[str, Any]  # stored_requests.database

    async def run(self, query: str, *args: Any) -> None: ...

    def mark(self, n: int) -> str: ...

    def like(self, table: str, source: str) -> str: ...

    async def put(self, table: str, item_id: str, account: str, data: str) -> None:
        await self.delete(table, item_id, account)
        await self.run(
            f"INSERT INTO {table} (id, account, data) VALUES ({self.mark(1)}, {self.mark(2)}, {self.mark(3)})",
            item_id,
            account,
            data,
        )

    async def delete(self, table: str, item_id: str, account: str) -> None:
        await self.run(f"DELETE FROM {table} WHERE id = {self.mark(1)} AND account = {self.mark(2)}", item_id, account)

    async def put_plain(self, table: str, item_id: str, data: str) -> None:
        await self.run(f"INSERT INTO {table} (id, data) VALUES ({self.mark(1)}, {self.mark(2)})", item_id, data)


class PgDb(Db):
    dialect = "postgres"

    def __init__(self, conn: asyncpg.Connection, dsn: str) -> None:
        self.conn = conn
        self.keys = {"dsn": dsn}

    async def run(self, query: str, *args: Any) -> None:
        await self.conn.execute(query, *args)

    def mark(self, n: int) -> str:
        return f"${n}"

    def like(self, table: str, source: str) -> str:
        return f"CREATE TABLE {table} (LIKE {source} INCLUDING ALL)"


class MyDb(Db):
    dialect = "mysql"

    def __init__(self, database: MysqlDatabase) -> None:
        self.database = database
        self.keys = {"connection": database.keys}

    async def run(self, query: str, *args: Any) -> None:
        await self.database.execute(query, *args)

    def mark(self, n: int) -> str:
        return "%s"

    def like(self, table: str, source: str) -> str:
        return f"CREATE TABLE {table} LIKE {source}"


@pytest.fixture
async def postgres() -> AsyncIterator[PgDb]:
    try:
        conn = await asyncpg.connect(PG_URL, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        require(False, f"PostgreSQL is not reachable at {PG_URL}: {exc}")
        raise  # unreachable: require() skipped or failed
    schema = f"hbs_test_{uuid.uuid4().hex[:16]}"
    try:
        await conn.execute(f"CREATE SCHEMA {schema}")
        await conn.execute(f"SET search_path TO {schema}")
        for statement in statements((DEPLOY / "postgres-init.sql").read_text()):
            await conn.execute(statement)
        joiner = "&" if "?" in PG_URL else "?"
        yield PgDb(conn, f"{PG_URL}{joiner}search_path={schema}")
    finally:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await conn.close()


@pytest.fixture(params=["postgres", "mysql"])
def db(request: pytest.FixtureRequest) -> Db:
    if request.param == "postgres":
        return request.getfixturevalue("postgres")
    return MyDb(request.getfixturevalue("mysql_database"))


def build(database: dict[str, Any]) -> StoredData:
    config = make_config(
        {
            "stored_requests": {
                "filesystem": {"enabled": False},
                "database": {"poll_for_updates": {"refresh_rate_seconds": 1}, **database},
                "in_memory_cache": {"type": "lru", "size": 100, "ttl_seconds": 300},
            }
        }
    )
    return build_stored_data(config, Metrics(), SharedSession())


async def started(database: dict[str, Any]) -> StoredData:
    service = build(database)
    assert service.database is not None
    await service.database.start()
    assert await service.poll_once()  # sets the cursors (and looks for the account column) now
    await service.start()
    return service


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "the change did not arrive"
        await asyncio.sleep(0.1)


async def request_of(stored: StoredData, request_id: str, account: str) -> bytes | str:
    requests, _imps, errors = await stored.fetch_requests([request_id], [], 2, account=account)
    return requests[request_id] if request_id in requests else errors[0]


async def test_the_same_id_resolves_per_account_from_the_tables(db: Db):
    await db.put("stored_requests", "shared", "", '{"of": "none"}')
    await db.put("stored_requests", "shared", "acc1", '{"of": "acc1"}')
    await db.put("stored_requests", "shared", "acc2", '{"of": "acc2"}')
    await db.put("stored_requests", "plain", "", '{"of": "none"}')
    await db.put("stored_requests", "mine", "acc1", '{"of": "acc1"}')
    await db.put("stored_imps", "imp", "acc2", '{"w": 2}')
    stored = await started(db.keys)
    try:
        for _ in range(2):  # the second time from the cache, resolved again per account
            assert json.loads(await request_of(stored, "shared", "acc1")) == {"of": "acc1"}
            assert json.loads(await request_of(stored, "shared", "acc2")) == {"of": "acc2"}
            assert await request_of(stored, "shared", "acc3") == (
                "No stored request found among multiple id: shared for account: acc3"
            )
            assert await request_of(stored, "shared", "") == (
                "Multiple stored requests found for id: shared but no account was specified"
            )
            assert json.loads(await request_of(stored, "plain", "acc2")) == {"of": "none"}
            assert json.loads(await request_of(stored, "mine", "")) == {"of": "acc1"}
            assert await request_of(stored, "mine", "acc2") == "No stored request found for id: mine for account: acc2"
            assert (await stored.fetch_requests([], ["imp"], 2, account="acc2"))[1] == {"imp": b'{"w": 2}'}
            assert json.loads((await stored.fetch_amp_request("shared", 2, "acc2"))[0] or b"") == {"of": "acc2"}
    finally:
        await stored.close()


async def test_the_poll_keeps_each_account_item_apart(db: Db):
    await db.put("stored_requests", "shared", "acc1", '{"v": 1}')
    await db.put("stored_requests", "shared", "acc2", '{"v": 1}')
    stored = await started(db.keys)
    try:
        assert json.loads(await request_of(stored, "shared", "acc2")) == {"v": 1}
        await db.put("stored_requests", "shared", "acc2", '{"v": 2}')  # one account's item changes

        async def changed() -> bool:
            return await request_of(stored, "shared", "acc2") == b'{"v": 2}'

        await eventually(changed)
        assert json.loads(await request_of(stored, "shared", "acc1")) == {"v": 1}
        await db.delete("stored_requests", "shared", "acc1")  # the id stays, stored for acc2 alone

        async def deleted() -> bool:
            return await request_of(stored, "shared", "acc1") == (
                "No stored request found for id: shared for account: acc1"
            )

        await eventually(deleted)
        await db.put("stored_requests", "shared", "acc3", '{"v": 3}')  # an account's item added

        async def added() -> bool:
            return await request_of(stored, "shared", "acc3") == b'{"v": 3}'

        await eventually(added)
    finally:
        await stored.close()


async def test_a_table_without_the_account_column_serves_ids_of_no_account(db: Db):
    for table in ("stored_requests", "stored_imps"):  # the tables as they were before the column
        await db.run(f"DROP TABLE {table}")
        await db.run(db.like(table, "stored_responses"))
    await db.put_plain("stored_requests", "r", '{"v": 1}')
    await db.put_plain("stored_imps", "i", '{"v": 1}')
    stored = await started(db.keys)
    try:
        assert await request_of(stored, "r", "acc1") == b'{"v": 1}'
        assert (await stored.fetch_requests([], ["i"], 2, account="acc1"))[1] == {"i": b'{"v": 1}'}
        await db.run(migration(db.dialect, "stored_requests"))  # the deploy schema's documented migration
        await db.put("stored_requests", "r", "acc2", '{"v": 2}')
        await db.put("stored_requests", "new", "acc2", '{"v": 2}')
        # Looked up once, at start: until a restart, the running server reads every row as of no account.
        assert await request_of(stored, "new", "acc1") == b'{"v": 2}'
    finally:
        await stored.close()
    restarted = await started(db.keys)
    try:
        assert await request_of(restarted, "r", "acc2") == b'{"v": 2}'
        assert (
            await request_of(restarted, "r", "acc1") == "No stored request found among multiple id: r for account: acc1"
        )
        assert await request_of(restarted, "new", "acc1") == "No stored request found for id: new for account: acc1"
        assert (await restarted.fetch_requests([], ["i"], 2, account="acc1"))[1] == {"i": b'{"v": 1}'}
    finally:
        await restarted.close()


# -- a host's own query returning PBS-Java's rows (accountId, id, data, type) ------------------------

JAVA_FETCH = (
    "SELECT accountId, reqid, requestData, 'request' AS dataType FROM java_requests WHERE reqid IN $REQUEST_ID_LIST "
    "UNION ALL SELECT accountId, impid, impData, 'imp' AS dataType FROM java_imps WHERE impid IN $IMP_ID_LIST"
)
JAVA_POLL = (
    "SELECT accountId, reqid, requestData, 'request' AS dataType FROM java_requests WHERE updated > $LAST_UPDATED "
    "UNION ALL SELECT accountId, impid, impData, 'imp' AS dataType FROM java_imps WHERE updated > $LAST_UPDATED"
)


async def java_tables(db: Db) -> None:
    """PBS-Java's sample tables (its functional tests' schema), with a time of change for the poll."""
    stamp = (
        "timestamptz NOT NULL DEFAULT clock_timestamp()"
        if db.dialect == "postgres"
        else ("TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)")
    )
    await db.run(
        f"CREATE TABLE java_requests (accountId varchar(40), reqid varchar(40), requestData text, updated {stamp})"
    )
    await db.run(f"CREATE TABLE java_imps (accountId varchar(40), impid varchar(40), impData text, updated {stamp})")


async def put_java(db: Db, account: str | None, item_id: str, data: str | None, table: str = "java_requests") -> None:
    """Replaces the item (data None: PBS-Go's deletion, a row without data)."""
    column, data_column = ("reqid", "requestData") if table == "java_requests" else ("impid", "impData")
    same_account = "accountId IS NULL" if account is None else f"accountId = {db.mark(2)}"
    await db.run(
        f"DELETE FROM {table} WHERE {column} = {db.mark(1)} AND {same_account}",
        item_id,
        *([] if account is None else [account]),
    )
    marks = ", ".join(db.mark(n) for n in (1, 2, 3))
    await db.run(f"INSERT INTO {table} (accountId, {column}, {data_column}) VALUES ({marks})", account, item_id, data)


async def test_a_host_query_returning_pbs_java_rows(db: Db):
    await java_tables(db)
    await put_java(db, "acc1", "shared", '{"of": "acc1"}')
    await put_java(db, "acc2", "shared", '{"of": "acc2"}')
    await put_java(db, None, "plain", '{"of": "none"}')
    await put_java(db, "acc2", "imp", '{"w": 2}', "java_imps")
    hosted = {"fetcher": {"query": JAVA_FETCH}, "poll_for_updates": {"refresh_rate_seconds": 1, "query": JAVA_POLL}}
    stored = await started({**db.keys, **hosted})
    try:
        assert await request_of(stored, "shared", "acc1") == b'{"of": "acc1"}'
        assert await request_of(stored, "shared", "acc3") == (
            "No stored request found among multiple id: shared for account: acc3"
        )
        assert await request_of(stored, "plain", "acc3") == b'{"of": "none"}'
        _requests, imps, errors = await stored.fetch_requests([], ["imp"], 2, account="acc1")
        assert (imps, errors) == ({}, ["No stored imp found for id: imp for account: acc1"])
        assert await request_of(stored, "shared", "acc2") == b'{"of": "acc2"}'
        await put_java(db, "acc2", "shared", '{"of": "acc2", "v": 2}')
        await put_java(db, "acc1", "shared", None)

        async def arrived() -> bool:
            return await request_of(stored, "shared", "acc2") == b'{"of": "acc2", "v": 2}' and (
                await request_of(stored, "shared", "acc1") == "No stored request found for id: shared for account: acc1"
            )

        await eventually(arrived)
    finally:
        await stored.close()


# -- end to end: an auction and an AMP request pick by the account they name --------------------------


async def test_an_auction_picks_the_accounts_stored_request_from_the_database(db: Db, aiohttp_client):
    await db.put("stored_requests", "shared", "acc1", json.dumps(stored_request("of-acc1")))
    await db.put("stored_requests", "shared", "acc2", json.dumps(stored_request("of-acc2")))
    bid = {"id": "b1", "impid": "i1", "price": 1.5, "adm": "<div/>", "crid": "c", "w": 300, "h": 250}
    await db.put_plain("stored_responses", "resp", json.dumps([{"seat": "appnexus", "bid": [bid]}]))
    config = make_config(stored_requests={"filesystem": {"enabled": False}, "database": db.keys})
    client = await aiohttp_client(create_app(config))

    async def auction(publisher: dict[str, Any] | None) -> tuple[int, str]:
        body: dict[str, Any] = {"ext": {"prebid": {"storedrequest": {"id": "shared"}}}}
        if publisher is not None:
            body["site"] = {"page": "http://a.example/", "publisher": publisher}
        response = await client.post("/openrtb2/auction", json=body)
        return response.status, (await response.json())["id"] if response.status == 200 else await response.text()

    assert await auction({"id": "acc1"}) == (200, "of-acc1")
    assert await auction({"id": "acc2"}) == (200, "of-acc2")
    status, text = await auction({"id": "acc3"})
    assert status == 400 and "No stored request found among multiple id: shared for account: acc3" in text
    status, text = await auction(None)
    assert status == 400 and "Multiple stored requests found for id: shared but no account was specified" in text
    response = await client.get("/openrtb2/amp?tag_id=shared&account=acc2&debug=1&curl=http%3A%2F%2Fa.example%2F")
    assert response.status == 200, await response.text()
    assert (await response.json())["ext"]["debug"]["resolvedrequest"]["id"] == "of-acc2"
