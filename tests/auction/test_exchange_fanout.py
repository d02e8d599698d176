"""The fan-out without a task per bidder (``start_bidder`` / ``finish_bidders``): a real
BidderClient against the mock bidders' aiohttp server, on the kept-alive path and the task path."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.generic import GenericAdapter
from hbserver.auction.exchange.fanout import BidderOutcome, finish_bidders, start_bidder
from hbserver.auction.exchange.split import BidderRequest
from hbserver.auction.request.validate import ResolvedBidder
from hbserver.bidders.registry import Bidder
from hbserver.web.bidclient import BidderClient
from tests.auction.helpers import MockBidders, bid


@pytest.fixture
async def client() -> AsyncIterator[BidderClient]:
    http = BidderClient()
    yield http
    await http.close()


async def warm_up(client: BidderClient, bidders: MockBidders, connections: int) -> None:
    """Leave ``connections`` idle keep-alive connections to the mock bidders' server."""
    bidders.delay["warm"] = 0.02  # so each warm-up request opens its own connection
    loop = asyncio.get_running_loop()
    answers = await asyncio.gather(
        *(client.request("POST", bidders.url("warm"), b'{"id":"w"}', {}, loop.time() + 2) for _ in range(connections))
    )
    assert answers == [(204, b"")] * connections


def start(bidders: MockBidders, client: BidderClient, name: str, deadline: float, now: float) -> BidderOutcome:
    bidder = Bidder(
        code=name, adapter="generic", disabled=False, endpoint=bidders.url(name), gvl_vendor_id=0, media_types={},
        openrtb_version="2.5", modifying_vast_xml_allowed=False, sync_key=name, usersync_enabled=False,
    )  # fmt: skip
    request: dict[str, Any] = {
        "id": "req-1",
        "imp": [{"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"bidder": {}}}],
        "site": {"page": "https://news.example/a"},
    }
    adapter = GenericAdapter(AdapterConfig(name, bidders.url(name)))
    bidder_request = BidderRequest(name, ResolvedBidder(name, bidder), request, False)
    return start_bidder(bidder_request, adapter, RequestInfo(name, "generic"), client, deadline, {}, now)


def bid_ids(outcome: BidderOutcome) -> list[str]:
    return [typed.bid["id"] for response in outcome.responses for typed in response.bids]


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
async def test_each_bidder_keeps_its_own_answer_time(bidders: MockBidders, client: BidderClient, warm: bool) -> None:
    bidders.bids["slow"] = [bid("imp-1", 3.0, "s1")]
    bidders.bids["fast"] = [bid("imp-1", 2.0, "f1")]
    bidders.delay["slow"] = 0.4  # far from the fast one even on a loaded machine
    if warm:
        await warm_up(client, bidders, 2)
    loop = asyncio.get_running_loop()
    now = loop.time()
    outcomes = [start(bidders, client, name, now + 2.0, now) for name in ("slow", "fast")]  # the slow one awaited first
    assert [call.pending is not None and call.pending.connection is not None
            for outcome in outcomes for call in outcome.calls] == [warm, warm]  # fmt: skip
    await finish_bidders(outcomes, client)
    total = loop.time() - now
    slow, fast = outcomes
    assert (bid_ids(slow), slow.errors) == (["s1"], [])
    assert (bid_ids(fast), fast.errors) == (["f1"], [])
    assert [call.status for outcome in outcomes for call in outcome.calls] == [200, 200]
    assert all(call.pending is None for outcome in outcomes for call in outcome.calls)
    assert 390 <= slow.elapsed_ms < 1500, slow.elapsed_ms
    assert fast.elapsed_ms < 250, fast.elapsed_ms  # its own answer time, not when it was awaited
    assert 0.39 <= total < 1.5, total  # waited for the slow answer, not for the deadline
    assert [body["id"] for name in ("slow", "fast") for body in bidders.received[name]] == ["req-1", "req-1"]


@pytest.mark.parametrize("warm", [False, True], ids=["task", "kept-alive"])
async def test_a_silent_bidder_times_out_at_the_deadline(
    bidders: MockBidders, client: BidderClient, warm: bool
) -> None:
    bidders.bids["silent"] = [bid("imp-1", 9.0, "late")]
    bidders.bids["fast"] = [bid("imp-1", 2.0, "f1")]
    bidders.delay["silent"] = 5.0
    if warm:
        await warm_up(client, bidders, 2)
    loop = asyncio.get_running_loop()
    now = loop.time()
    outcomes = [start(bidders, client, name, now + 0.4, now) for name in ("silent", "fast")]
    await finish_bidders(outcomes, client)
    total = loop.time() - now
    silent, fast = outcomes
    assert [(error.code, error.message) for error in silent.errors] == [
        (ErrorCode.TIMEOUT, "Timeout: the bidder did not answer before its deadline")
    ]
    assert int(silent.errors[0].code) == 1
    assert (silent.responses, silent.calls[0].status, silent.calls[0].pending) == ([], 0, None)
    assert 395 <= silent.elapsed_ms < 900, silent.elapsed_ms
    assert (bid_ids(fast), fast.errors, fast.calls[0].status) == (["f1"], [], 200)
    assert fast.elapsed_ms < 300, fast.elapsed_ms  # not the silent one's time
    assert 0.398 <= total < 0.9, total  # ended at the deadline, not at the silent bidder's 5 s
    assert len(bidders.received["silent"]) == 1  # it was asked once
