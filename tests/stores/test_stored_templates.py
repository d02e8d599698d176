"""PBS-Go's query templates made into driver queries: placeholders and arguments, never text (table rows)."""

from __future__ import annotations

import datetime as dt

import pytest

from hbserver.stores.stored.database import build_database
from hbserver.stores.stored.postgres import PostgresBackend, postgres_dsn
from hbserver.stores.stored.templates import prepare
from tests.conftest import make_config

WHEN = dt.datetime(2026, 1, 2, 3, 4, 5)
BOTH = "SELECT id FROM r WHERE id IN $REQUEST_ID_LIST UNION ALL SELECT id FROM i WHERE id IN $IMP_ID_LIST"


@pytest.mark.parametrize(
    ("template", "params", "style", "query", "args"),
    [
        (
            BOTH,
            [("REQUEST_ID_LIST", ["a", "b"]), ("IMP_ID_LIST", ["c"])],
            "numbered",
            "SELECT id FROM r WHERE id IN ($1, $2) UNION ALL SELECT id FROM i WHERE id IN ($3)",
            ["a", "b", "c"],
        ),
        (
            BOTH,
            [("REQUEST_ID_LIST", ["a", "b"]), ("IMP_ID_LIST", ["c"])],
            "positional",
            "SELECT id FROM r WHERE id IN (%s, %s) UNION ALL SELECT id FROM i WHERE id IN (%s)",
            ["a", "b", "c"],
        ),
        # an empty list matches nothing: (NULL), never "()"
        (
            BOTH,
            [("REQUEST_ID_LIST", []), ("IMP_ID_LIST", ["c"])],
            "numbered",
            "SELECT id FROM r WHERE id IN (NULL) UNION ALL SELECT id FROM i WHERE id IN ($1)",
            ["c"],
        ),
        (
            BOTH,
            [("REQUEST_ID_LIST", ["a"]), ("IMP_ID_LIST", [])],
            "positional",
            "SELECT id FROM r WHERE id IN (%s) UNION ALL SELECT id FROM i WHERE id IN (NULL)",
            ["a"],
        ),
        # MySQL: each occurrence takes its arguments in query order, whatever the parameters' order
        (
            "SELECT 1 WHERE b IN $IMP_ID_LIST AND a IN $REQUEST_ID_LIST",
            [("REQUEST_ID_LIST", ["a"]), ("IMP_ID_LIST", ["b1", "b2"])],
            "positional",
            "SELECT 1 WHERE b IN (%s, %s) AND a IN (%s)",
            ["b1", "b2", "a"],
        ),
        # a value used twice: PostgreSQL names it once, MySQL passes it twice
        (
            "SELECT 1 WHERE x > $LAST_UPDATED OR y > $LAST_UPDATED",
            [("LAST_UPDATED", WHEN)],
            "numbered",
            "SELECT 1 WHERE x > $1 OR y > $1",
            [WHEN],
        ),
        (
            "SELECT 1 WHERE x > $LAST_UPDATED OR y > $LAST_UPDATED",
            [("LAST_UPDATED", WHEN)],
            "positional",
            "SELECT 1 WHERE x > %s OR y > %s",
            [WHEN, WHEN],
        ),
        # the host's own % stays itself for the MySQL driver
        (
            "SELECT 1 WHERE id LIKE 'a%' AND id IN $REQUEST_ID_LIST",
            [("REQUEST_ID_LIST", ["x"])],
            "positional",
            "SELECT 1 WHERE id LIKE 'a%%' AND id IN (%s)",
            ["x"],
        ),
        # ids are arguments, never text
        (
            "SELECT 1 WHERE id IN $REQUEST_ID_LIST",
            [("REQUEST_ID_LIST", ["x') OR ('1'='1"])],
            "numbered",
            "SELECT 1 WHERE id IN ($1)",
            ["x') OR ('1'='1"],
        ),
    ],
)
def test_prepare(template, params, style, query, args):
    assert prepare(template, params, style) == (query, args)


@pytest.mark.parametrize(
    ("keys", "dsn"),
    [
        ({"dbname": "pbs"}, "postgresql:///pbs"),
        ({"dbname": "pbs", "host": "db", "port": 5433, "user": "u"}, "postgresql://u@db:5433/pbs"),
        (
            {"dbname": "p b", "host": "db", "user": "u@x", "password": "p:w/@"},
            "postgresql://u%40x:p%3Aw%2F%40@db/p%20b",
        ),
    ],
)
def test_postgres_dsn_from_pbs_go_keys(keys, dsn):
    assert postgres_dsn(**keys) == dsn


def test_the_keys_select_the_backend():
    def database(section: dict) -> object:
        config = make_config({"stored_requests": {"database": section}})
        return build_database(config.stored_requests.database, 100)

    assert database({}) is None
    by_dsn = database({"dsn": "postgresql://h/db"})
    assert isinstance(by_dsn, PostgresBackend) and by_dsn.dsn == "postgresql://h/db"
    by_keys = database({"connection": {"driver": "postgres", "dbname": "db", "host": "h"}})
    assert isinstance(by_keys, PostgresBackend) and by_keys.dsn == "postgresql://h/db"
    mysql = database({"connection": {"driver": "mysql", "dbname": "db"}})
    assert type(mysql).__name__ == "MysqlBackend"
