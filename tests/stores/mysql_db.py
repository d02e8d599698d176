"""A MariaDB / MySQL database of its own per test (``make test`` starts MariaDB and creates user
``hbs_test``, allowed databases ``hbs_test_*``: scripts/services.sh), with hbserver's tables."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncmy
import pytest
from asyncmy.errors import MySQLError

from tests.services import require

MYSQL_URL = os.environ.get("HBS_TEST_MYSQL", "mysql://hbs_test:hbs_test@127.0.0.1:3306/test")
SCHEMA = Path(__file__).parents[2] / "deploy" / "mysql-init.sql"


def connection_keys(dbname: str) -> dict[str, Any]:
    """PBS-Go's ``database.connection`` keys for ``dbname`` on the test server."""
    url = urlsplit(MYSQL_URL)
    return {
        "driver": "mysql",
        "dbname": dbname,
        "host": url.hostname,
        "port": url.port or 3306,
        "user": url.username or "",
        "password": url.password or "",
    }


@dataclass
class MysqlDatabase:
    dbname: str
    conn: Any

    @property
    def keys(self) -> dict[str, Any]:
        return connection_keys(self.dbname)

    async def execute(self, query: str, *args: Any) -> None:
        async with self.conn.cursor() as cursor:
            await cursor.execute(query, args)

    async def put(self, table: str, item_id: str, data: str | None) -> None:
        await self.execute(
            f"INSERT INTO {table} (id, data) VALUES (%s, %s) ON DUPLICATE KEY UPDATE data = VALUES(data)",
            item_id,
            data,
        )

    async def delete(self, table: str, item_id: str) -> None:
        await self.execute(f"DELETE FROM {table} WHERE id = %s", item_id)


def schema_statements(nullable: bool) -> list[str]:
    """deploy/mysql-init.sql's statements; ``nullable`` lets tests store SQL NULL data."""
    text = SCHEMA.read_text()
    if nullable:
        text = text.replace("data JSON NOT NULL", "data JSON NULL")
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


@pytest.fixture
async def mysql_database() -> AsyncIterator[MysqlDatabase]:
    url = urlsplit(MYSQL_URL)
    try:
        conn = await asyncmy.connect(
            host=url.hostname,
            port=url.port or 3306,
            user=url.username,
            password=url.password or "",
            connect_timeout=5,
            autocommit=True,
        )
    except (OSError, MySQLError, TimeoutError) as exc:
        require(False, f"MariaDB / MySQL is not reachable at {url.hostname}:{url.port}: {exc}")
        raise  # unreachable: require() skipped or failed
    dbname = f"hbs_test_{uuid.uuid4().hex[:16]}"
    database = MysqlDatabase(dbname, conn)
    try:
        await database.execute(f"CREATE DATABASE {dbname}")
        await database.execute(f"USE {dbname}")
        for statement in schema_statements(nullable=True):
            await database.execute(statement)
        yield database
    finally:
        await database.execute(f"DROP DATABASE IF EXISTS {dbname}")
        await conn.ensure_closed()
