"""The MySQL / MariaDB backend (asyncmy): :class:`~hbserver.stores.stored.sql.SqlBackend` with MySQL's
dialect. Tables ``(id varchar(255) primary key, data json, updated_at timestamp(6))``
(deploy/mysql-init.sql; ``stored_requests`` and ``stored_imps`` may add ``account``, see :mod:`.sql`),
configured with PBS-Go's ``database.connection`` keys (``driver: mysql``).

Connections run in autocommit: a connection kept in the pool inside one transaction would read
InnoDB's snapshot of its first query forever and never see a change.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncmy
from asyncmy.errors import InterfaceError, MySQLError, OperationalError

from hbserver.stores.stored.host_queries import HostQueries
from hbserver.stores.stored.sql import (
    CLOSE_TIMEOUT_SECONDS,
    CONNECT_TIMEOUT_SECONDS,
    POOL_MAX_SIZE,
    Connection,
    SqlBackend,
)
from hbserver.stores.stored.templates import Style

DEFAULT_PORT = 3306
POOL_RECYCLE_SECONDS = 60  # a connection idle longer is reopened (servers drop idle ones: wait_timeout)

_STORED = "JSON_TYPE(data) <> 'NULL'"  # NULL (so false) for SQL NULL, 'NULL' for JSON null


def _account(scoped: bool) -> str:
    """The account column as the backend reads it: NULL for the item of no account ('' or NULL)."""
    return "NULLIF(account, '')" if scoped else "NULL"


# Server and client error numbers that mean "no usable connection": too many connections, access
# denied (user, database), can't connect (socket, TCP, unknown host), gone away, lost, read error.
_CONNECTION_ERRNOS = frozenset({1040, 1044, 1045, 1049, 1053, 2002, 2003, 2005, 2006, 2013, 2055})


class _Connection:
    """asyncmy's connection behind asyncpg's ``fetch``/``fetchval`` (what :class:`SqlBackend` calls)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def fetch(self, query: str, *args: Any) -> Sequence[Sequence[Any]]:
        async with self._conn.cursor() as cursor:
            await cursor.execute(query, args)
            return list(await cursor.fetchall())

    async def fetchval(self, query: str, *args: Any) -> Any:
        rows = await self.fetch(query, *args)
        return rows[0][0] if rows else None


class MysqlDialect:
    style: Style = "positional"

    def __init__(self, dbname: str, host: str = "", port: int = 0, user: str = "", password: str = "") -> None:
        self._options = {
            "db": dbname,
            "host": host or "127.0.0.1",
            "port": port or DEFAULT_PORT,
            "user": user or None,
            "password": password,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS,
            "autocommit": True,
            "charset": "utf8mb4",
        }
        self._pool: Any = None

    async def open(self, pool_size: int) -> None:
        """minsize 0: the pool connects on first use, never at start."""
        self._pool = await asyncmy.create_pool(
            minsize=0, maxsize=pool_size, pool_recycle=POOL_RECYCLE_SECONDS, **self._options
        )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.close()
        try:
            await asyncio.wait_for(pool.wait_closed(), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            pool.terminate()

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Connection]:
        if self._pool is None:
            raise InterfaceError(0, "pool closed")
        async with self._pool.acquire() as conn:
            yield _Connection(conn)

    def classify(self, exc: BaseException) -> str | None:
        if isinstance(exc, (OSError, InterfaceError)):
            return "unavailable"
        if isinstance(exc, OperationalError) and exc.args and exc.args[0] in _CONNECTION_ERRNOS:
            return "unavailable"
        return "error" if isinstance(exc, MySQLError) else None

    def select(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        where = f"id IN ({_marks(ids)}) AND {_STORED}"
        return f"SELECT id, {_account(scoped)}, data FROM {table} WHERE {where}", list(ids)

    def existing(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        return f"SELECT id, {_account(scoped)} FROM {table} WHERE id IN ({_marks(ids)}) AND {_STORED}", list(ids)

    def cursor(self, table: str) -> str:
        # LEAST is NULL when one argument is: COALESCE gives now for an empty table.
        return f"SELECT COALESCE(LEAST(MAX(updated_at), NOW(6)), NOW(6)) FROM {table}"

    def changed(self, table: str, scoped: bool) -> str:
        return f"SELECT id, {_account(scoped)}, updated_at FROM {table} WHERE updated_at > %s"

    def table_exists(self) -> str:
        return "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = %s"

    def column_exists(self) -> str:
        return (
            "SELECT COUNT(*) FROM information_schema.columns"
            " WHERE table_schema = DATABASE() AND table_name = %s AND column_name = %s"
        )

    def now(self) -> str:
        return "SELECT NOW(6)"


def _marks(ids: list[str]) -> str:
    return ", ".join(["%s"] * len(ids)) if ids else "NULL"


class MysqlBackend(SqlBackend):
    def __init__(
        self,
        dbname: str,
        *,
        host: str = "",
        port: int = 0,
        user: str = "",
        password: str = "",
        track_size: int = 10000,
        pool_size: int = POOL_MAX_SIZE,
        clock: Callable[[], float] = time.monotonic,
        queries: HostQueries | None = None,
    ) -> None:
        dialect = MysqlDialect(dbname, host, port, user, password)
        super().__init__(dialect, track_size=track_size, pool_size=pool_size, clock=clock, queries=queries)
