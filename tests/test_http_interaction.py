"""GET /logging/httpinteraction (PBS-Java's admin endpoint): validation, and the armed worker
logging exactly ``limit`` matching auction/AMP interactions, bounded in size."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from hbserver.app import create_admin_app
from hbserver.endpoints.httpinteraction import MAX_ACCOUNT_LENGTH, MAX_LIMIT
from hbserver.web.requestlog import (
    HTTP_INTERACTIONS,
    MAX_LOGGED_BODY_BYTES,
    MAX_LOGGED_URL_CHARS,
    excerpt,
)
from tests.auction.helpers import banner_imp, bid, bidder_config

PATH = "/logging/httpinteraction"
LOGGER = "hbserver.httpinteraction"


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def interactions(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.getMessage().startswith("Requested URL")]


@pytest.fixture
def logged() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger(LOGGER)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("", 400, "Missing required parameter 'limit'"),
        ("limit=abc", 400, "Invalid 'limit' parameter value"),
        ("limit=1.5", 400, "Invalid 'limit' parameter value"),
        ("limit=99999999999", 400, "Invalid 'limit' parameter value"),
        ("limit=0", 400, f"Parameter 'limit' must be between 1 and {MAX_LIMIT}"),
        ("limit=-3", 400, f"Parameter 'limit' must be between 1 and {MAX_LIMIT}"),
        (f"limit={MAX_LIMIT + 1}", 400, f"Parameter 'limit' must be between 1 and {MAX_LIMIT}"),
        ("limit=1&endpoint=setuid", 400, "Invalid 'endpoint' parameter value, allowed values '[auction, amp]'"),
        ("limit=1&endpoint=", 400, "Invalid 'endpoint' parameter value, allowed values '[auction, amp]'"),
        ("limit=1&statusCode=x", 400, "Invalid 'statusCode' parameter value"),
        ("limit=1&statusCode=99", 400, "Parameter 'statusCode' must be between 100 and 599"),
        ("limit=1&statusCode=600", 400, "Parameter 'statusCode' must be between 100 and 599"),
        ("limit=1&account=", 400, "Parameter 'account' must not be empty"),
        (
            f"limit=1&account={'a' * (MAX_ACCOUNT_LENGTH + 1)}", 400,
            f"Parameter 'account' must be at most {MAX_ACCOUNT_LENGTH} characters",
        ),
        ("limit=1&limit=2", 400, "Parameter 'limit' must be given once"),
        (
            "limit=1&bidder=alpha", 400,
            "Parameter 'bidder' is not supported: hbserver logs auction and amp interactions only",
        ),
        (
            "limit=1&status=200", 400,
            "Unknown parameter 'status', allowed parameters '[endpoint, statusCode, account, limit]'",
        ),
        ("limit=1", 200, None),
        (f"limit={MAX_LIMIT}&endpoint=amp&statusCode=503&account=a-1", 200, None),
        ("limit=%2B7&endpoint=auction&statusCode=200", 200, None),  # "+7", as Java parseInt takes it
        ("limit=+7", 400, "Invalid 'limit' parameter value"),  # " 7": no spaces
        # issue 38: digits int() refuses or takes, and thousands of them
        ("limit=%C2%B2", 400, "Invalid 'limit' parameter value"),  # "²"
        ("limit=%D9%A3", 400, "Invalid 'limit' parameter value"),  # Arabic-Indic "3"
        ("limit=1_0", 400, "Invalid 'limit' parameter value"),
        ("limit=" + "9" * 5000, 400, "Invalid 'limit' parameter value"),
        ("limit=1&statusCode=" + "2" * 5000, 400, "Invalid 'statusCode' parameter value"),
    ],
)
async def test_validation(make_client, query, status, message):
    client = await make_client()
    response = await client.get(f"{PATH}?{query}")
    assert response.status == status
    if message is not None:
        assert await response.text() == message
        assert client.app[HTTP_INTERACTIONS].spec is None  # nothing armed by a bad request
    else:
        armed = await response.json()
        spec = client.app[HTTP_INTERACTIONS].spec
        assert spec is not None and armed["limit"] == spec.limit and armed["worker"] > 0
        assert (armed["endpoint"], armed["statusCode"], armed["account"]) == (
            spec.endpoint, spec.status_code, spec.account
        )


def auction(account: str, **fields: Any) -> bytes:
    request = {
        "id": "r", "tmax": 500, "imp": [banner_imp(alpha={"p": 1})],
        "site": {"page": "https://news.example/a", "publisher": {"id": account}},
        **fields,
    }
    return orjson.dumps(request)


def store_amp(data_dir: Path, tag: str, account: str) -> None:
    imp = {"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    stored = {"id": "amp-req", "site": {"page": "https://pub.example/a", "publisher": {"id": account}}, "imp": [imp]}
    (data_dir / "stored_requests" / f"{tag}.json").write_text(json.dumps(stored))


@pytest.fixture
async def client(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("imp-1", 1.5), bid("slot-1", 2.5, "s1")]
    store_amp(data_dir, "tag-a", "acc-a")
    return await make_client(bidder_config(bidders, "alpha"))


async def send(client, kind: str, account: str = "acc-a", bad: bool = False) -> int:
    if kind == "auction":
        data = b"{not json" if bad else auction(account)
        response = await client.post("/openrtb2/auction", data=data)
    else:
        response = await client.get("/openrtb2/amp?tag_id=" + ("missing" if bad else "tag-a"))
    await response.read()
    return response.status


@pytest.mark.parametrize(
    ("query", "traffic", "logged_indexes"),
    [
        # traffic: (endpoint, account, bad); logged_indexes: which of them are logged
        ("limit=2&account=acc-a", [("auction", "acc-b", False), ("auction", "acc-a", False), ("amp", "acc-a", False),
                                   ("auction", "acc-a", False), ("auction", "acc-a", False)], [1, 2]),
        ("limit=3&endpoint=amp", [("auction", "acc-a", False), ("amp", "acc-a", False), ("amp", "", True),
                                  ("auction", "acc-a", False)], [1, 2]),
        ("limit=1&endpoint=auction&statusCode=400", [("auction", "acc-a", False), ("amp", "", True),
                                                     ("auction", "", True), ("auction", "", True)], [2]),
        ("limit=5&statusCode=200&account=acc-c", [("auction", "acc-a", False), ("auction", "acc-c", True),
                                                  ("auction", "acc-c", False)], [2]),
        ("limit=2", [("auction", "acc-a", False), ("amp", "", True), ("auction", "acc-b", False)], [0, 1]),
    ],
)
async def test_the_armed_worker_logs_exactly_the_matching_interactions(client, logged, query, traffic, logged_indexes):
    assert (await client.get(f"{PATH}?{query}")).status == 200
    statuses = [await send(client, kind, account, bad) for kind, account, bad in traffic]
    assert all(s in (200, 400) for s in statuses), statuses
    records = logged.interactions()
    assert len(records) == len(logged_indexes)
    for record, index in zip(records, logged_indexes, strict=True):
        kind, account, bad = traffic[index]
        assert record.levelno == logging.INFO and record.endpoint == kind
        assert record.status == statuses[index] and record.account == (account if not bad else "")
        assert f'response status: "{statuses[index]}"' in record.getMessage()
    # the spec is used up or still waiting; more traffic after it is used up logs nothing
    if client.app[HTTP_INTERACTIONS].spec is None:
        await send(client, "auction")
        await send(client, "amp")
        assert len(logged.interactions()) == len(logged_indexes)


async def test_what_an_interaction_line_holds(client, logged):
    assert (await client.get(f"{PATH}?limit=2")).status == 200
    body = auction("acc-a", ext={"note": "line1\nline2"})
    body = body.replace(b'"r",', b'"r",\n')  # a newline between tokens: the log line stays one line
    response = await client.post("/openrtb2/auction?debug=0", data=body)
    answer = await response.text()
    amp = await client.get("/openrtb2/amp?tag_id=tag-a&w=300")
    amp_answer = await amp.text()
    first, second = [r.getMessage() for r in logged.interactions()]
    assert first.startswith('Requested URL: "/openrtb2/auction?debug=0", request body: "{"id":"r", "tmax"')
    assert "\n" not in first and "\\nline2" in first  # the JSON escape stays; raw newlines become spaces
    assert first.endswith(f'response status: "200", response body: "{answer}"')
    assert second == f'Requested URL: "/openrtb2/amp?tag_id=tag-a&w=300", response status: "200", ' \
                     f'response body: "{amp_answer}"'


async def test_bodies_are_cut_to_a_bounded_size(client, logged):
    assert (await client.get(f"{PATH}?limit=1")).status == 200
    big = auction("acc-a", ext={"pad": "x" * (MAX_LOGGED_BODY_BYTES * 2)})
    assert (await client.post("/openrtb2/auction", data=big)).status == 200
    [record] = logged.interactions()
    message = record.getMessage()
    assert f"... (truncated: {len(big)} bytes)" in message
    assert len(message) < 2 * MAX_LOGGED_BODY_BYTES + MAX_LOGGED_URL_CHARS + 1000


@pytest.mark.parametrize(
    ("data", "limit", "expected"),
    [
        (b"abc", 10, "abc"),
        (b"a\r\nb", 10, "a  b"),
        (b"abcdef", 3, "abc... (truncated: 6 bytes)"),
        ("é" * 5, 2, "éé... (truncated: 5 characters)"),
        ("é".encode() * 3, 3, "é\ufffd... (truncated: 6 bytes)"),  # a cut character is replaced, not an error
        (bytearray(b"xy"), 5, "xy"),
    ],
)
def test_excerpt(data, limit, expected):
    assert excerpt(data, limit) == expected


async def test_arming_again_replaces_the_spec(client, logged):
    assert (await client.get(f"{PATH}?limit=5&account=nobody")).status == 200
    assert (await client.get(f"{PATH}?limit=1")).status == 200
    await send(client, "auction")
    await send(client, "auction")
    assert len(logged.interactions()) == 1


async def test_on_the_admin_port_it_arms_the_main_applications_log(make_client, aiohttp_client, bidders, logged):
    bidders.bids["alpha"] = [bid("imp-1", 1.5)]
    main = await make_client(bidder_config(bidders, "alpha"), admin={"port": 19999})
    assert (await main.get(f"{PATH}?limit=1")).status == 404  # not on the public port
    admin = await aiohttp_client(create_admin_app(main.app))
    assert (await admin.get(f"{PATH}?limit=1&endpoint=auction")).status == 200
    assert (await main.post("/openrtb2/auction", data=auction("acc-a"))).status == 200
    [record] = logged.interactions()
    assert record.account == "acc-a"


async def test_unarmed_nothing_is_logged(client, logged):
    for kind in ("auction", "amp"):
        await send(client, kind)
        await send(client, kind, bad=True)
    assert logged.records == []
