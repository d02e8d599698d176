"""/event: every validation rule (PBS-Java wording, first problem wins) and every response."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from hbserver.events import PIXEL_PNG, EventRequest, EventRequestError, parse_event_query
from tests.conftest import write_account

PIXEL_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAABHNCSVQICAgIfAhkiAAAAA1JREFUCJljYGBgYAAAAAUAAYehTtQAAAAASUVORK5CYII="
)

UNVERIFIED = (
    "Invalid request: Prebid-server could not verify the Account ID. Please reach out to the prebid server host."
)
REQUIRED = (
    "Invalid request: Prebid-server has been configured to discard requests without a valid Account ID. "
    "Please reach out to the prebid server host."
)
T_PREFIX = "Type 't' is required query parameter. Possible values are win and imp, but was "

# (query, status, body); the body is exact. Validation order: t, vtype, b, ts, f, x, int, then a.
REJECTIONS = [
    ("", 400, T_PREFIX + "null"),
    ("b=test", 400, T_PREFIX + "null"),
    ("t=invalid", 400, T_PREFIX + "invalid"),
    ("t=&b=x&a=y", 400, T_PREFIX),
    ("t=WIN&b=x&a=y", 400, T_PREFIX + "WIN"),
    ("t=win", 400, "BidId 'b' is required query parameter and can't be empty"),
    ("t=win&b=%20%20&a=acc", 400, "BidId 'b' is required query parameter and can't be empty"),
    ("t=win&b=bidId&bidder=bidder&ts=invalid", 400, "Timestamp 'ts' query parameter is not valid number: invalid"),
    ("t=win&b=bidId&ts=1.5&a=acc", 400, "Timestamp 'ts' query parameter is not valid number: 1.5"),
    ("t=win&b=bidId&ts=9223372036854775808&a=acc", 400,
     "Timestamp 'ts' query parameter is not valid number: 9223372036854775808"),
    ("t=win&b=bidId&a=accountId&f=invalid", 400,
     "Format 'f' query parameter is invalid. Possible values are b and i, but was invalid"),
    ("t=win&b=test&ts=1234&f=b&x=4", 400,
     "Analytics 'x' query parameter is invalid. Possible values are 1 and 0, but was 4"),
    ("t=win&b=bidId&a=accountId&x=invalid", 400,
     "Analytics 'x' query parameter is invalid. Possible values are 1 and 0, but was invalid"),
    ("t=win&b=bidId&a=accountId&int=invalid-_123*", 400,
     "Integration 'int' query parameter is not valid: invalid-_123*"),
    ("t=win&b=bidId&a=accountId&int=Te$tIntegrationType", 400,
     "Integration 'int' query parameter is not valid: Te$tIntegrationType"),
    ("t=win&b=bidId&a=accountId&int=" + "a" * 65, 400,
     "Integration 'int' query parameter is longer 64 symbols: " + "a" * 65),
    ("t=vast&b=bidID&a=acc", 400,
     "VAST type 'vtype' is required query parameter for t=vast. Possible values are start, firstQuartile, "
     "midPoint, thirdQuartile, complete, but was null"),
    ("t=vast&vtype=abc&b=bidID&a=acc", 400,
     "VAST type 'vtype' is required query parameter for t=vast. Possible values are start, firstQuartile, "
     "midPoint, thirdQuartile, complete, but was abc"),
    # the first problem wins: a bad t hides a missing b, a missing b hides a bad ts, ...
    ("t=bad&ts=x&f=q", 400, T_PREFIX + "bad"),
    ("t=win&ts=x&f=q", 400, "BidId 'b' is required query parameter and can't be empty"),
    ("t=win&b=1&ts=x&f=q", 400, "Timestamp 'ts' query parameter is not valid number: x"),
    ("t=win&b=1&f=q&x=9", 400, "Format 'f' query parameter is invalid. Possible values are b and i, but was q"),
    ("t=win&b=1&x=9&int=*", 400,
     "Analytics 'x' query parameter is invalid. Possible values are 1 and 0, but was 9"),
    ("t=win&b=1&int=*", 400, "Integration 'int' query parameter is not valid: *"),
    # a is checked last and answers 401
    ("t=win&b=bidId", 401, "Account 'a' is required query parameter and can't be empty"),
    ("t=win&b=test&ts=1234", 401, "Account 'a' is required query parameter and can't be empty"),
    ("t=win&b=bidId&a=%20", 401, "Account 'a' is required query parameter and can't be empty"),
]


def query_dict(query: str) -> dict:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(query, keep_blank_values=True))


@pytest.mark.parametrize(("query", "status", "body"), REJECTIONS)
def test_parse_rejects(query, status, body):
    with pytest.raises(EventRequestError) as caught:
        parse_event_query(query_dict(query))
    assert (caught.value.status, caught.value.message) == (status, body)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("t=win&b=bidId&f=b&ts=1000&x=1&a=accountId&bidder=RubiCon&int=intType",
         EventRequest("win", "bidId", "accountId", "RubiCon", 1000, "b", True, "intType", None, None)),
        ("t=imp&b=B1&a=A1",
         EventRequest("imp", "B1", "A1", None, None, "b", True, None, None, None)),
        ("t=win&b=%20bid%20&a=%20acc%20&ts=%20-5%20&f=i&x=0&aid=%20auction-1%20&int=pb%C3%A9js_2-x",
         EventRequest("win", "bid", "acc", None, -5, "i", False, "pbéjs_2-x", "auction-1", None)),
        ("t=win&b=b&a=a&ts=&f=&x=&int=&aid=",
         EventRequest("win", "b", "a", None, None, "b", True, None, None, None)),
        ("t=vast&vtype=firstQuartile&b=b&a=a",
         EventRequest("vast", "b", "a", None, None, "b", True, None, None, "firstQuartile")),
        ("t=win&vtype=start&b=b&a=a",  # vtype is ignored for other types (PBS-Java)
         EventRequest("win", "b", "a", None, None, "b", True, None, None, None)),
        ("t=win&b=b&a=a&int=" + "a" * 64,
         EventRequest("win", "b", "a", None, None, "b", True, "a" * 64, None, None)),
    ],
)
def test_parse_accepts(query, expected):
    assert parse_event_query(query_dict(query)) == expected


def test_pixel_is_prebid_servers():
    assert PIXEL_PNG == base64.b64decode(PIXEL_B64)
    assert len(PIXEL_PNG) == 86
    assert hashlib.sha256(PIXEL_PNG).hexdigest() == "c2ecff291918a3caf0b7e470323e89f2a1f05b92e12a10649e598cacebe62acf"


# --- over HTTP ------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "status", "body"), REJECTIONS)
async def test_http_rejections(make_client, query, status, body):
    client = await make_client()
    response = await client.get("/event?" + query)
    assert response.status == status
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert await response.text() == body


@pytest.mark.parametrize(
    ("query", "content_type", "body"),
    [
        ("t=win&b=bid1&a=acc&f=b", None, b""),
        ("t=imp&b=bid1&a=acc", None, b""),  # f absent -> blank
        ("t=win&b=bid1&a=acc&f=i", "image/png", PIXEL_PNG),
        ("t=win&b=bid1&a=acc&f=i&x=0", "image/png", PIXEL_PNG),
        ("t=vast&vtype=complete&b=bid1&a=acc&f=b", None, b""),
    ],
)
async def test_http_success(make_client, query, content_type, body):
    client = await make_client()
    response = await client.get("/event?" + query)
    assert response.status == 200
    assert response.headers.get("Content-Type") == content_type
    assert await response.read() == body


async def read_records(path, client) -> list[dict]:
    await client.close()  # shutdown flushes analytics
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_notification_record_fields(make_client, tmp_path):
    log = tmp_path / "analytics.jsonl"
    client = await make_client(analytics={"file": {"filename": str(log)}})
    query = "t=win&b=bid-1&a=acc-1&bidder=appnexus&ts=1700000000000&f=i&int=pbjs&aid=auc-9"
    assert (await client.get("/event?" + query)).status == 200
    assert (await client.get("/event?t=imp&b=bid-2&a=acc-1")).status == 200
    records = await read_records(log, client)
    assert len(records) == 2
    first, second = records
    ts = first.pop("ts")
    assert len(ts) == 24 and ts.endswith("Z") and ts[10] == "T"
    assert first == {
        "event": "notification", "type": "win", "bidid": "bid-1", "account": "acc-1", "bidder": "appnexus",
        "timestamp": 1700000000000, "format": "i", "integration": "pbjs", "aid": "auc-9",
    }
    second.pop("ts")
    assert second == {
        "event": "notification", "type": "imp", "bidid": "bid-2", "account": "acc-1", "bidder": None,
        "timestamp": None, "format": "b", "integration": None, "aid": None,
    }


async def test_x0_writes_no_record_and_answers_the_same(make_client, tmp_path):
    log = tmp_path / "analytics.jsonl"
    client = await make_client(analytics={"file": {"filename": str(log)}})
    blank = await client.get("/event?t=win&b=b1&a=acc&x=0")
    pixel = await client.get("/event?t=win&b=b1&a=acc&x=0&f=i")
    assert (blank.status, await blank.read()) == (200, b"")
    assert (pixel.status, await pixel.read()) == (200, PIXEL_PNG)
    assert await read_records(log, client) == []


@pytest.mark.parametrize(
    ("account", "query", "status", "body"),
    [
        ({"events": {"enabled": False}}, "t=win&b=b&a=acc", 401, "Account 'acc' doesn't support events"),
        ({"events": {"enabled": False}}, "t=win&b=b&a=acc&x=0", 200, ""),  # only checked when x is not 0
        ({"events": {"enabled": False}}, "t=win&b=b&a=acc&x=0&f=i", 200, None),
        ({"events": {"enabled": True}}, "t=win&b=b&a=acc", 200, ""),
        ({}, "t=win&b=b&a=acc", 200, ""),  # merged over account_defaults: events on
        ({"disabled": True}, "t=win&b=b&a=acc", 503,
         "Invalid request: Prebid-server has disabled Account ID: acc, please reach out to the prebid server host."),
        ('{"events": ', "t=win&b=b&a=acc", 500,
         'Invalid request: The prebid-server account config for account id "acc" is malformed. '
         "Please reach out to the prebid server host."),
        ({"events": {"enabled": "yes"}}, "t=win&b=b&a=acc", 500,
         'Invalid request: The prebid-server account config for account id "acc" is malformed. '
         "Please reach out to the prebid server host."),
        ("[1, 2]", "t=win&b=b&a=acc", 500,
         'Invalid request: The prebid-server account config for account id "acc" is malformed. '
         "Please reach out to the prebid server host."),
    ],
)
async def test_account_settings(make_client, data_dir, account, query, status, body):
    write_account(data_dir, "acc", account)
    client = await make_client()
    response = await client.get("/event?" + query)
    assert response.status == status
    if body is not None:
        assert await response.text() == body


@pytest.mark.parametrize(
    ("config", "query", "status", "body"),
    [
        ({}, "t=win&b=b&a=unknown", 200, ""),  # unknown account -> account_defaults (events on)
        ({"account_defaults": {"events": {"enabled": False}}}, "t=win&b=b&a=unknown", 401,
         "Account 'unknown' doesn't support events"),
        # PBS-Go account.GetAccount: account_required refuses a request naming no account ("unknown");
        # an account that is not stored gets the defaults unless they are disabled too
        ({"account_required": True}, "t=win&b=b&a=unknown", 400, REQUIRED),
        ({"account_required": True}, "t=win&b=b&a=known", 200, ""),
        ({"account_required": True}, "t=win&b=b&a=nobody", 200, ""),
        ({"account_required": True, "account_defaults": {"disabled": True}}, "t=win&b=b&a=nobody", 400,
         UNVERIFIED),
        ({"account_defaults": {"disabled": True}}, "t=win&b=b&a=unknown", 503,
         "Invalid request: Prebid-server has disabled Account ID: unknown, "
         "please reach out to the prebid server host."),
        # an account file overrides the defaults it is merged over
        ({"account_defaults": {"events": {"enabled": False}}}, "t=win&b=b&a=known", 200, ""),
        # ids that would leave the accounts directory are never looked up: they are unknown accounts
        ({"account_required": True, "account_defaults": {"events": {"enabled": False}}},
         "t=win&b=b&a=../accounts/known", 401, "Account '../accounts/known' doesn't support events"),
        ({"account_required": True, "account_defaults": {"disabled": True}}, "t=win&b=b&a=..", 400,
         UNVERIFIED),
    ],
)
async def test_account_resolution(make_client, data_dir, config, query, status, body):
    write_account(data_dir, "known", {"events": {"enabled": True}})
    client = await make_client(config)
    response = await client.get("/event?" + query)
    assert (response.status, await response.text()) == (status, body)


async def test_account_lookups_are_cached(make_client, data_dir):
    write_account(data_dir, "acc", {"events": {"enabled": True}})
    client = await make_client()
    assert (await client.get("/event?t=win&b=b&a=acc")).status == 200
    write_account(data_dir, "acc", {"events": {"enabled": False}})
    assert (await client.get("/event?t=win&b=b&a=acc")).status == 200  # served from the LRU
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_account_cache_performance{cache_result="hit"} 1.0' in metrics
    assert 'hbserver_account_cache_performance{cache_result="miss"} 1.0' in metrics


async def test_without_account_cache_changes_are_seen_at_once(make_client, data_dir):
    write_account(data_dir, "acc", {"events": {"enabled": True}})
    client = await make_client(stored_requests={"in_memory_cache": {"type": "none"}})
    assert (await client.get("/event?t=win&b=b&a=acc")).status == 200
    write_account(data_dir, "acc", {"events": {"enabled": False}})
    assert (await client.get("/event?t=win&b=b&a=acc")).status == 401


async def test_event_notifications_are_counted(make_client):
    client = await make_client()
    for query in ("t=win&b=1&a=a", "t=win&b=2&a=a", "t=imp&b=3&a=a", "t=imp&b=3"):
        await client.get("/event?" + query)
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_event_notifications{type="win"} 2.0' in metrics
    assert 'hbserver_event_notifications{type="imp"} 1.0' in metrics
    assert 'hbserver_http_requests{endpoint="/event",status="200"} 3.0' in metrics
    assert 'hbserver_http_requests{endpoint="/event",status="401"} 1.0' in metrics


async def test_vast_record_carries_vtype(make_client, tmp_path):
    log = tmp_path / "analytics.jsonl"
    client = await make_client(analytics={"file": {"filename": str(log)}})
    assert (await client.get("/event?t=vast&vtype=midPoint&b=bid-1&a=acc")).status == 200
    [record] = await read_records(log, client)
    assert (record["type"], record["vtype"]) == ("vast", "midPoint")
