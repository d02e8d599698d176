"""The database backend ``stored_requests.database`` describes: hbserver's ``dsn`` (PostgreSQL), or
PBS-Go's ``connection`` keys (``driver: mysql`` or ``postgres``), with the host's PBS-Go queries when
it gives them (``fetcher``, ``poll_for_updates``)."""

from __future__ import annotations

from hbserver.config import DatabaseStore
from hbserver.stores.stored.host_queries import HostQueries
from hbserver.stores.stored.postgres import PostgresBackend, postgres_dsn
from hbserver.stores.stored.sql import SqlBackend


def build_database(database: DatabaseStore, track_size: int) -> SqlBackend | None:
    """None when no database is configured (config.py has checked the keys)."""
    conn = database.connection
    queries = HostQueries(
        fetch=database.fetcher.query,
        amp_fetch=database.fetcher.amp_query,
        poll=database.poll_for_updates.query,
        amp_poll=database.poll_for_updates.amp_query,
    )
    if database.dsn:
        return PostgresBackend(database.dsn, track_size=track_size, queries=queries)
    if conn.driver == "postgres" and conn.dbname:
        dsn = postgres_dsn(conn.dbname, conn.host, conn.port, conn.user, conn.password)
        return PostgresBackend(dsn, track_size=track_size, queries=queries)
    if conn.driver == "mysql" and conn.dbname:
        from hbserver.stores.stored.mysql import MysqlBackend  # asyncmy is imported only by hosts that use it

        return MysqlBackend(
            conn.dbname,
            host=conn.host,
            port=conn.port,
            user=conn.user,
            password=conn.password,
            track_size=track_size,
            queries=queries,
        )
    return None
