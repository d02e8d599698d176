"""The PostgreSQL backend (asyncpg): :class:`~hbserver.stores.stored.sql.SqlBackend` with PostgreSQL's
dialect. Tables ``(id text primary key, data jsonb, updated_at timestamptz)`` (deploy/postgres-init.sql);
``stored_requests`` and ``stored_imps`` may add ``account text`` (per-account ids, see :mod:`.sql`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import quote

import asyncpg

from hbserver.stores.stored.host_queries import HostQueries
from hbserver.stores.stored.sql import (
    CLOSE_TIMEOUT_SECONDS,
    CONNECT_TIMEOUT_SECONDS,
    OPTIONAL_KINDS,
    POLL_OVERLAP_SECONDS,
    POOL_MAX_SIZE,
    RETRY_SECONDS,
    Changes,
    Connection,
    SqlBackend,
)
from hbserver.stores.stored.templates import Style

__all__ = [
    "OPTIONAL_KINDS",
    "POLL_OVERLAP_SECONDS",
    "RETRY_SECONDS",
    "Changes",
    "PostgresBackend",
    "PostgresDialect",
    "postgres_dsn",
]

_STORED = "jsonb_typeof(data) <> 'null'"  # false for SQL NULL and JSON null alike


def _account(scoped: bool) -> str:
    """The account column as the backend reads it: NULL for the item of no account ('' or NULL)."""
    return "NULLIF(account, '')" if scoped else "NULL::text"


# Errors that mean "no usable connection" rather than "this query failed".
_CONNECTION_ERRORS = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.InvalidCatalogNameError,
)


def postgres_dsn(dbname: str, host: str = "", port: int = 0, user: str = "", password: str = "") -> str:
    """The DSN PBS-Go's ``database.connection`` keys describe (``driver: postgres``)."""
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "") + "@" if user else ""
    return f"postgresql://{auth}{host}{f':{port}' if port else ''}/{quote(dbname, safe='')}"


class PostgresDialect:
    style: Style = "numbered"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._pool: asyncpg.Pool | None = None

    async def open(self, pool_size: int) -> None:
        """min_size 0: the pool connects on first use, never at start."""
        self._pool = await asyncpg.create_pool(
            self.dsn,
            min_size=0,
            max_size=pool_size,
            timeout=CONNECT_TIMEOUT_SECONDS,
            max_inactive_connection_lifetime=60.0,
        )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            pool.terminate()

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Connection]:
        if self._pool is None:
            raise asyncpg.InterfaceError("pool closed")
        async with self._pool.acquire() as conn:
            yield conn

    def classify(self, exc: BaseException) -> str | None:
        if isinstance(exc, _CONNECTION_ERRORS):
            return "unavailable"
        return "error" if isinstance(exc, asyncpg.PostgresError) else None

    def select(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        where = f"id = ANY($1::text[]) AND {_STORED}"
        return f"SELECT id, {_account(scoped)}, data::text FROM {table} WHERE {where}", [ids]

    def existing(self, table: str, ids: list[str], scoped: bool) -> tuple[str, list[object]]:
        return f"SELECT id, {_account(scoped)} FROM {table} WHERE id = ANY($1::text[]) AND {_STORED}", [ids]

    def cursor(self, table: str) -> str:
        return f"SELECT least(max(updated_at), now()) FROM {table}"  # least() skips NULL: never NULL

    def changed(self, table: str, scoped: bool) -> str:
        return f"SELECT id, {_account(scoped)}, updated_at FROM {table} WHERE updated_at > $1"

    def table_exists(self) -> str:
        return "SELECT to_regclass($1) IS NOT NULL"  # on the search path, as the queries above

    def column_exists(self) -> str:
        return (
            "SELECT EXISTS (SELECT 1 FROM pg_attribute"
            " WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)"
        )

    def now(self) -> str:
        return "SELECT now()"


class PostgresBackend(SqlBackend):
    def __init__(
        self,
        dsn: str,
        *,
        track_size: int = 10000,
        pool_size: int = POOL_MAX_SIZE,
        clock: Callable[[], float] = time.monotonic,
        queries: HostQueries | None = None,
    ) -> None:
        self.dsn = dsn
        super().__init__(PostgresDialect(dsn), track_size=track_size, pool_size=pool_size, clock=clock, queries=queries)
