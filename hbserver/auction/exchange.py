"""Fan-out: every bidder's HTTP calls over the application's pooled keep-alive bidder client
(:class:`hbserver.web.bidclient.BidderClient`), bounded by the bidder deadline (request deadline -
``cache.expected_millis``).

A bidder still out at its deadline is cancelled and gets error code 1; nothing here waits past
the deadline. Answers are read up to :data:`MAX_RESPONSE_BYTES`. Adapters are pure: a bidder's
``make_requests``/``make_bids`` raising is contained to that bidder (code 999, logged).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from hbserver import SERVER_HEADER_VALUE
from hbserver.adapters.base import (
    Adapter,
    BidderError,
    BidderResponse,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
    bad_server_response,
)
from hbserver.auction.split import BidderRequest
from hbserver.web.bidclient import BidderClient, ResponseTooLarge

log = logging.getLogger("hbserver.exchange")

MAX_RESPONSE_BYTES = 2 * 1024 * 1024
MAX_CALLS_PER_BIDDER = 16


@dataclass(slots=True)
class HttpCall:
    """One HTTP exchange with a bidder, kept for ``ext.debug.httpcalls``."""

    call: RequestData
    status: int = 0
    body: bytes = b""
    error: BidderError | None = None

    def as_debug(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "uri": self.call.uri,
            "requestbody": (self.call.body or b"").decode("utf-8", "replace"),
            "requestheaders": {k: [v] for k, v in self.call.headers.items()},
        }
        if self.status:
            entry["responsebody"] = self.body.decode("utf-8", "replace")
            entry["status"] = self.status
        return entry


@dataclass(slots=True)
class BidderOutcome:
    bidder: BidderRequest
    responses: list[BidderResponse] = field(default_factory=list)
    errors: list[BidderError] = field(default_factory=list)
    calls: list[HttpCall] = field(default_factory=list)
    elapsed_ms: int = 0


async def run_bidder(
    bidder: BidderRequest,
    adapter: Adapter,
    info: RequestInfo,
    client: BidderClient,
    deadline: float,
    extra_headers: dict[str, str],
) -> BidderOutcome:
    """One bidder's part of the auction; ``deadline`` is in ``loop.time()`` seconds."""
    outcome = BidderOutcome(bidder)
    started = time.perf_counter()
    try:
        calls, errors = adapter.make_requests(bidder.request, info)
    except Exception:  # an adapter bug must not take the auction down
        log.exception("adapter %s failed in make_requests", bidder.name)
        calls, errors = [], [BidderError("adapter failed to build its requests")]
    outcome.errors.extend(errors)
    if not calls and not errors:
        outcome.errors.append(
            BidderError(
                "The adapter failed to generate any bid requests, but also failed to generate an error explaining why",
                ErrorCode.FAILED_TO_REQUEST_BIDS,
            )
        )
    calls = calls[:MAX_CALLS_PER_BIDDER]
    if calls:
        exchanges = [HttpCall(call) for call in calls]
        outcome.calls = exchanges
        if len(exchanges) == 1:  # the usual case: no task and no gather for one call
            await _send(client, exchanges[0], deadline, extra_headers)
        else:
            await asyncio.gather(*(_send(client, x, deadline, extra_headers) for x in exchanges))
        for exchange in exchanges:
            if exchange.error is not None:
                outcome.errors.append(exchange.error)
                continue
            try:
                response, bid_errors = adapter.make_bids(
                    bidder.request, exchange.call, ResponseData(exchange.status, exchange.body)
                )
            except Exception:
                log.exception("adapter %s failed in make_bids", bidder.name)
                response, bid_errors = None, [BidderError("adapter failed to read the bidder's response")]
            outcome.errors.extend(bid_errors)
            if response is not None:
                outcome.responses.append(response)
    outcome.elapsed_ms = int((time.perf_counter() - started) * 1000)
    return outcome


async def _send(client: BidderClient, exchange: HttpCall, deadline: float, extra_headers: dict[str, str]) -> None:
    call = exchange.call
    headers = {**call.headers, **extra_headers} if extra_headers else dict(call.headers)
    headers.setdefault("X-Prebid", SERVER_HEADER_VALUE)
    if asyncio.get_running_loop().time() >= deadline:
        exchange.error = BidderError(
            "Timeout: no time left for the bidder before the auction deadline", ErrorCode.TIMEOUT
        )
        return
    try:
        exchange.status, exchange.body = await client.request(call.method, call.uri, call.body, headers, deadline)
    except TimeoutError:  # before OSError: TimeoutError is one
        exchange.error = BidderError("Timeout: the bidder did not answer before its deadline", ErrorCode.TIMEOUT)
        return
    except ResponseTooLarge:
        exchange.error = bad_server_response(f"Bidder response is larger than {MAX_RESPONSE_BYTES} bytes")
        return
    except (OSError, ValueError) as exc:
        exchange.error = bad_server_response(f"Error calling the bidder: {exc.__class__.__name__}: {exc}")
        return
    if exchange.status < 200 or exchange.status >= 400:
        exchange.error = bad_server_response(
            f"Server responded with failure status: {exchange.status}. Set request.test = 1 for debugging info."
        )
