"""Overload shedding (hbserver.overload): the decision as a table, the shed answers, and a real server on a
loopback port (uvloop, as the workers run) whose loop is blocked while a request's bytes arrive."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import uvloop
from aiohttp import web

from hbserver.app import create_app
from hbserver.config import ConfigError
from hbserver.metrics import Metrics
from hbserver.overload import (
    AMP_SHED_BODY,
    DEADLINE,
    QUEUE,
    SHED_WARNING_CODE,
    LoopLag,
    OverloadGuard,
    auction_shed_body,
    shed_reason,
)
from hbserver.web.connection import ConnectionLimits, ConnectionRunner, Heartbeat
from tests.auction.helpers import MockBidders, banner_imp, bid, bidder_config
from tests.conftest import make_config

STALL_S = 0.4  # the blocked loop: well past the default overload.max_wait_ms (100)


Body = Callable[[], Coroutine[Any, Any, None]]


def run_on_uvloop(body: Body) -> None:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(asyncio.wait_for(body(), 30))


# --- the decision ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("waited_s", "max_wait_s", "budget_s", "expected"),
    [
        (0.0, 0.1, 0.4, None),
        (0.05, 0.1, 0.4, None),
        (0.1, 0.1, 0.4, None),  # at the maximum: still served
        (0.101, 0.1, 0.4, QUEUE),
        (2.0, 0.1, 0.4, QUEUE),  # past both: the maximum is named
        (0.05, 0.1, 0.05, DEADLINE),  # the whole budget is gone
        (0.08, 0.1, 0.05, DEADLINE),
        (0.3, 1.0, 0.2, DEADLINE),
        (0.3, 1.0, 0.0, DEADLINE),  # a budget of 0 (timeout <= adjustment)
        (5.0, 0.0, 0.4, None),  # 0 = off, whatever the wait
        (5.0, 0.0, 0.0, None),
    ],
)
def test_shed_reason(waited_s: float, max_wait_s: float, budget_s: float, expected: str | None) -> None:
    assert shed_reason(waited_s, max_wait_s, budget_s) == expected


@pytest.mark.parametrize(
    ("previous", "last", "max_wait_s"),
    [
        (0.0, 0.0, 0.1),  # an idle loop: the whole maximum
        (0.02, 0.02, 0.1),  # busy, under a quarter of it
        (0.0, 0.3, 0.1),  # one stall (a collection, the process descheduled) is not saturation
        (0.3, 0.0, 0.1),  # nor the turn after it
        (0.025, 0.03, 0.1),  # at the quarter: not past it
        (0.03, 0.03, 0.025),  # two late heartbeats in a row: saturated, a quarter of the maximum
        (0.2, 0.08, 0.025),
    ],
)
def test_a_saturated_loop_lets_a_quarter_of_the_maximum_wait(previous: float, last: float, max_wait_s: float) -> None:
    lag = LoopLag()
    lag.previous, lag.lag = previous, last
    guard = OverloadGuard(100, lag=lag)
    assert guard.max_wait() == pytest.approx(max_wait_s)
    assert guard.shed("amp", 0.04, 0.5) == (QUEUE if max_wait_s < 0.04 else None)
    assert OverloadGuard(0, lag=lag).shed("amp", 5.0, 0.5) is None  # 0 = off, saturated or not


@pytest.mark.parametrize(
    ("request_id", "reason", "id_json"),
    [("req-1", QUEUE, "req-1"), ("", DEADLINE, ""), ('quo"te\\', QUEUE, 'quo"te\\'), (7, QUEUE, 7)],
)
def test_auction_shed_body(request_id: Any, reason: str, id_json: Any) -> None:
    body = orjson.loads(auction_shed_body(request_id, reason))
    assert body["id"] == id_json
    assert body["seatbid"] == []
    [warning] = body["ext"]["warnings"]["prebid"]
    assert warning["code"] == SHED_WARNING_CODE
    assert "overloaded" in warning["message"]


@pytest.mark.parametrize(("raw", "expected"), [(None, 100), (0, 0), (250, 250)])
def test_max_wait_config(raw: int | None, expected: int) -> None:
    config = make_config() if raw is None else make_config(overload={"max_wait_ms": raw})
    assert config.overload.max_wait_ms == expected


def test_negative_max_wait_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"overload\.max_wait_ms"):
        make_config(overload={"max_wait_ms": -1})


# --- the heartbeat --------------------------------------------------------------------------------


def test_the_heartbeat_publishes_its_due_time_and_measures_its_lag() -> None:
    async def body() -> None:
        target = Heartbeat()
        monitor = LoopLag(0.002, target)
        loop = asyncio.get_running_loop()
        monitor.start(loop)
        assert loop.time() < target.due <= loop.time() + 0.003
        await asyncio.sleep(0.02)
        assert monitor.lag < 0.05
        time.sleep(0.1)  # the stall: the heartbeat is overdue by most of it
        assert loop.time() - target.due >= 0.09
        await asyncio.sleep(0)  # the loop polls, runs its timers (the heartbeat), then this
        assert monitor.lag >= 0.09 and target.due > loop.time()
        assert monitor.previous < 0.05  # the beat before the stall was on time
        await asyncio.sleep(0.01)
        assert monitor.previous < 0.05 and monitor.lag < 0.05  # timely beats again: the stall is history
        monitor.stop()
        assert target.due == float("inf") and monitor.lag == monitor.previous == 0.0

    run_on_uvloop(body)


# --- a real server on a loopback port ---------------------------------------------------------------

AMP_STORED = {
    "id": "amp-req",
    "site": {"page": "https://pub.example/a"},
    "imp": [{"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]},
             "ext": {"prebid": {"bidder": {"alpha": {"p": 1}}}}}],
}  # fmt: skip
AMP_QUERY = "tag_id=t1&curl=https%3A%2F%2Fpub.example%2Fa&timeout=500&__amp_source_origin=https%3A%2F%2Fpub.example"
AUCTION = {"id": "auction-req-1", "tmax": 1000, "site": {"page": "https://pub.example/a"}, "imp": [banner_imp("imp-1")]}


@asynccontextmanager
async def serving(data_dir: Path, **keys: Any) -> AsyncIterator[tuple[int, Metrics]]:
    """hbserver (the worker's Connection protocol) on a loopback port, with the mock bidder alpha bidding."""
    bidders = MockBidders()
    await bidders.server.start_server()
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1"), bid("imp-1", 1.5, "a2")]
    (data_dir / "stored_requests").mkdir(parents=True, exist_ok=True)
    (data_dir / "stored_requests" / "t1.json").write_text(json.dumps(AMP_STORED))
    raw = {"stored_requests": {"filesystem": {"directorypath": str(data_dir)}}, **bidder_config(bidders, "alpha")}
    config = make_config(raw, **keys)
    metrics = Metrics()
    runner = ConnectionRunner(create_app(config, metrics), ConnectionLimits.from_config(config.http_timeouts),
                              access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1], metrics
    finally:
        await runner.cleanup()
        await bidders.server.close()


def amp_request() -> bytes:
    return (f"GET /openrtb2/amp?{AMP_QUERY} HTTP/1.1\r\nHost: localhost\r\nOrigin: https://pub.example\r\n\r\n"
            .encode())


def auction_request(body: dict[str, Any] = AUCTION) -> bytes:
    data = json.dumps(body).encode()
    head = f"POST /openrtb2/auction HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:] if line)
    body = await reader.readexactly(int(headers.get("Content-Length", "0")))
    return int(head[0].split()[1]), headers, body


async def exchange(port: int, request: bytes, *, stall_s: float = 0.0) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` on a kept-alive connection (warmed up by one /status); with ``stall_s``, the
    loop is blocked right after the bytes are handed to the kernel."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n")
    await answer(reader)  # the server has accepted the connection and waits for its next request
    writer.write(request)  # uvloop sends at once: the bytes wait in the server's socket
    if stall_s:
        time.sleep(stall_s)  # the server's loop (this one) is blocked while they wait
    try:
        return await answer(reader)
    finally:
        writer.close()


def shed_count(metrics: Metrics, request_type: str, reason: str) -> float:
    metrics.flush()
    value = metrics.registry.get_sample_value(
        "hbserver_overload_shed_requests_total", {"request_type": request_type, "reason": reason}
    )
    return value or 0.0


def test_amp_behind_a_blocked_loop_gets_the_fast_answer(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(tmp_path) as (port, metrics):
            status, headers, data = await exchange(port, amp_request(), stall_s=STALL_S)
            assert (status, data) == (200, AMP_SHED_BODY)
            assert headers["AMP-Access-Control-Allow-Source-Origin"] == "https://pub.example"
            assert headers["Access-Control-Expose-Headers"] == "AMP-Access-Control-Allow-Source-Origin"
            assert shed_count(metrics, "amp", QUEUE) == 1

    run_on_uvloop(body)


def test_auction_behind_a_blocked_loop_gets_the_fast_answer(tmp_path: Path) -> None:
    async def body() -> None:
        async with serving(tmp_path) as (port, metrics):
            started = time.monotonic()
            status, _, data = await exchange(port, auction_request(), stall_s=STALL_S)
            assert time.monotonic() - started < STALL_S + 0.5  # not an auction's 1 s on top
            answer_body = json.loads(data)
            assert status == 200
            assert answer_body["id"] == "auction-req-1" and answer_body["seatbid"] == []
            assert "overloaded" in answer_body["ext"]["warnings"]["prebid"][0]["message"]
            assert shed_count(metrics, "openrtb2-web", QUEUE) == 1

    run_on_uvloop(body)


def test_a_spent_amp_budget_is_shed_as_deadline(tmp_path: Path) -> None:
    """timeout=300 leaves 200 ms (adjustment 100): a 400 ms stall spends it, under a 1 s maximum."""
    async def body() -> None:
        async with serving(tmp_path, overload={"max_wait_ms": 1000}) as (port, metrics):
            request = amp_request().replace(b"timeout=500", b"timeout=300")
            status, _, data = await exchange(port, request, stall_s=STALL_S)
            assert (status, data) == (200, AMP_SHED_BODY)
            assert shed_count(metrics, "amp", DEADLINE) == 1
            assert shed_count(metrics, "amp", QUEUE) == 0

    run_on_uvloop(body)


@pytest.mark.parametrize(
    ("keys", "stall_s", "when"),
    [
        ({}, 0.0, "an unblocked loop"),
        ({}, "before", "a stall that ended before the request was sent"),
        ({"overload": {"max_wait_ms": 0}}, STALL_S, "shedding switched off"),
    ],
)
@pytest.mark.parametrize("endpoint", ["amp", "auction"])
def test_a_request_not_behind_a_stall_gets_its_auction(
    tmp_path: Path, keys: dict[str, Any], stall_s: float | str, when: str, endpoint: str
) -> None:
    async def body() -> None:
        async with serving(tmp_path, **keys) as (port, metrics):
            if stall_s == "before":
                time.sleep(STALL_S)
                await asyncio.sleep(0)  # the heartbeat sees the stall; the request comes after it
            request = amp_request() if endpoint == "amp" else auction_request()
            status, _, data = await exchange(port, request, stall_s=stall_s if isinstance(stall_s, float) else 0.0)
            assert status == 200, when
            answer_body = json.loads(data)
            if endpoint == "amp":
                assert answer_body["targeting"]["hb_pb"] == "1.50", when
            else:
                assert answer_body["seatbid"][0]["bid"][0]["price"] == 1.5, when
            assert sum(shed_count(metrics, kind, reason) for kind in ("amp", "openrtb2-web")
                       for reason in (QUEUE, DEADLINE)) == 0, when

    run_on_uvloop(body)
