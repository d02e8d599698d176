"""Fan-out: every bidder's HTTP calls over the application's pooled keep-alive bidder client
(:class:`hbserver.web.bidclient.BidderClient`), bounded by the bidder deadline (request deadline -
``cache.expected_millis``).

A bid nested deeper than :data:`~hbserver.web.body.MAX_JSON_DEPTH` (which no response or cache
entry could carry) is dropped with a code 3 error for its bidder; the bidder's other bids stay.

A bidder still out at its deadline is cancelled and gets error code 1; nothing here waits past
the deadline. Answers are read up to :data:`MAX_RESPONSE_BYTES`. Adapters are pure: a bidder's
``make_requests``/``make_bids`` raising is contained to that bidder (code 999, logged).
"""

from __future__ import annotations

import asyncio
import gzip
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from hbserver.auction.bids.accept import drop_deep_bids
from hbserver.auction.bids.native_types import add_native_types
from hbserver.auction.exchange.callplan import CallPlan
from hbserver.auction.exchange.server_ext import x_prebid
from hbserver.auction.exchange.split import BidderRequest
from hbserver.web.bidclient import BidderClient, PendingRequest, ResponseTooLarge
from hbserver.web.body import may_be_deeper

log = logging.getLogger("hbserver.exchange")

MAX_RESPONSE_BYTES = 2 * 1024 * 1024
MAX_CALLS_PER_BIDDER = 16
# Bodies of a few KB: level 5 keeps most of the saving of 9 at a fraction of the CPU.
GZIP_LEVEL = 5
TIMEOUT_NOTIFICATION_SECONDS = 0.2  # PBS-Go's doTimeoutNotification deadline
_notifications: set[asyncio.Task[None]] = set()  # in flight (a task nobody holds may be collected)


@dataclass(slots=True)
class HttpCall:
    """One HTTP exchange with a bidder, kept for ``ext.debug.httpcalls``."""

    call: RequestData
    status: int = 0
    body: bytes = b""
    error: BidderError | None = None
    pending: PendingRequest | None = None  # sent, answer not read yet
    done_at: float = 0.0  # loop time the answer (or its failure) was in
    reused: bool | None = None  # a kept-alive connection carried it (None: it never had one)
    wait: float = 0.0  # seconds waiting for that connection
    headers: Mapping[str, str] = field(default_factory=dict)  # the answer's X- headers (bidclient)
    timed_out: bool = False  # sent, and no answer came by the deadline
    sent_headers: Mapping[str, str] | None = None  # the adapter's with X-Prebid, Sec-GPC, Content-Encoding

    def as_debug(self) -> dict[str, Any]:
        """PBS-Go's ExtHttpCall: the headers as sent, less ``Authorization`` (bidder.go filterHeader)."""
        headers = self.sent_headers if self.sent_headers is not None else self.call.headers
        entry: dict[str, Any] = {
            "uri": self.call.uri,
            "requestbody": (self.call.body or b"").decode("utf-8", "replace"),
            "requestheaders": {k: [v] for k, v in headers.items() if k.lower() != "authorization"},
        }
        if self.status:
            entry["responsebody"] = self.body.decode("utf-8", "replace")
            entry["status"] = self.status
        return entry


@dataclass(slots=True)
class BidderOutcome:
    bidder: BidderRequest
    adapter: Adapter | None = None
    responses: list[BidderResponse] = field(default_factory=list)
    errors: list[BidderError] = field(default_factory=list)
    calls: list[HttpCall] = field(default_factory=list)
    started: float = 0.0  # loop time
    elapsed_ms: int = 0
    panicked: bool = False  # the adapter raised (adapter_panics)
    tmax_timeout: bool = False  # no time was left to call the bidder (tmax_timeout)


def start_bidder(
    bidder: BidderRequest,
    adapter: Adapter,
    info: RequestInfo,
    client: BidderClient,
    deadline: float,
    extra_headers: dict[str, str],
    now: float,
    compress: bool = False,
) -> BidderOutcome:
    """One bidder's requests built and sent (``compress``: bodies gzipped with ``Content-Encoding:
    gzip``, for a bidder whose definition asks for it); :func:`finish_bidders` reads the answers.

    No task per bidder: requests go out at once on pooled connections and the auction then
    awaits the answers one after the other (each one's arrival time is kept for its bidder).
    """
    outcome = BidderOutcome(bidder, adapter, started=now)
    try:
        calls, errors = adapter.make_requests(bidder.request, info)
    except Exception:  # an adapter bug must not take the auction down
        log.exception("adapter %s failed in make_requests", bidder.name)
        outcome.panicked = True
        calls, errors = [], [BidderError("adapter failed to build its requests")]
    if errors:
        outcome.errors.extend(errors)
    elif not calls:
        outcome.errors.append(
            BidderError(
                "The adapter failed to generate any bid requests, but also failed to generate an error explaining why",
                ErrorCode.FAILED_TO_REQUEST_BIDS,
            )
        )
    _send(outcome, calls, client, deadline, extra_headers, now, compress, x_prebid(bidder.request))
    return outcome


def start_planned(
    plan: CallPlan,
    values: list[Any],
    client: BidderClient,
    deadline: float,
    extra_headers: dict[str, str],
    now: float,
) -> list[BidderOutcome]:
    """Every bidder of a call plan started as :func:`start_bidder` would, with ``values`` spliced in
    (by slot; :mod:`hbserver.auction.exchange.callplan`) instead of the adapters building the calls."""
    texts = [str(value) if value is not None else "" for value in values]
    raw = [text.encode() for text in texts]
    outcomes = []
    for bidder in plan.bidders:
        bidder_request = bidder.bidder_request(values)
        outcome = BidderOutcome(bidder_request, bidder.adapter, started=now)
        if bidder.errors:
            outcome.errors.extend(bidder.errors)
        calls = [call.render(texts, raw) for call in bidder.calls]
        _send(outcome, calls, client, deadline, extra_headers, now, bidder.compress, x_prebid(bidder_request.request))
        outcomes.append(outcome)
    return outcomes


def _send(
    outcome: BidderOutcome,
    calls: list[RequestData],
    client: BidderClient,
    deadline: float,
    extra_headers: dict[str, str],
    now: float,
    compress: bool,
    x_prebid_value: str,
) -> None:
    for call in calls[:MAX_CALLS_PER_BIDDER]:
        exchange = HttpCall(call)
        outcome.calls.append(exchange)
        if not _start(client, exchange, deadline, extra_headers, now, compress, x_prebid_value):
            outcome.tmax_timeout = True


async def finish_bidders(
    outcomes: list[BidderOutcome], client: BidderClient, secondary: frozenset[str] = frozenset()
) -> list[str]:
    """Await every answer (each ends by its deadline), then let each adapter read its bids.

    ``secondary`` bidders (PBS-Java's secondary bidders) are not waited for: once the others have
    answered, what a secondary bidder has answered counts and the rest of its calls are dropped (all
    are waited for when every bidder is secondary). Returns the secondary bidders dropped so."""
    waited = [o for o in outcomes if o.bidder.name not in secondary] if secondary else outcomes
    dropped: list[str] = []
    try:
        for outcome in waited or outcomes:
            for exchange in outcome.calls:
                pending = exchange.pending
                if pending is not None:
                    await _finish(client, exchange, pending)
        if waited and len(waited) != len(outcomes):
            dropped = await _finish_secondary([o for o in outcomes if o.bidder.name in secondary], client)
    finally:  # cancelled: the requests still out are dropped with their connections
        for outcome in outcomes:
            for exchange in outcome.calls:
                if exchange.pending is not None:
                    client.cancel(exchange.pending)
                    exchange.pending = None
    for outcome in outcomes:
        _read_bids(outcome)
    return dropped


async def _finish_secondary(outcomes: list[BidderOutcome], client: BidderClient) -> list[str]:
    """The answers secondary bidders have already given; their calls still out are cancelled and
    left out (no error, no timeout notice: PBS-Java warns). The names of the bidders that lost a call."""
    dropped = []
    for outcome in outcomes:
        kept = []
        for exchange in outcome.calls:
            pending = exchange.pending
            if pending is not None and (pending.answer is None or not pending.answer.done()):
                client.cancel(pending)
                exchange.pending = None
                continue
            if pending is not None:
                await _finish(client, exchange, pending)
            kept.append(exchange)
        if len(kept) != len(outcome.calls):
            outcome.calls = kept
            dropped.append(outcome.bidder.name)
    return dropped


def _read_bids(outcome: BidderOutcome) -> None:
    adapter = outcome.adapter
    bidder = outcome.bidder
    finished = outcome.started
    for exchange in outcome.calls:
        if exchange.done_at > finished:
            finished = exchange.done_at
        if exchange.error is not None:
            outcome.errors.append(exchange.error)
            continue
        if adapter is None:
            continue
        try:
            response, bid_errors = adapter.make_bids(
                bidder.request, exchange.call, ResponseData(exchange.status, exchange.body, exchange.headers)
            )
        except Exception:
            log.exception("adapter %s failed in make_bids", bidder.name)
            outcome.panicked = True
            response, bid_errors = None, [BidderError("adapter failed to read the bidder's response")]
        if bid_errors:
            outcome.errors.extend(bid_errors)
        if response is not None:
            if response.bids and may_be_deeper(exchange.body):  # rare: most answers have few brackets
                drop_deep_bids(response, outcome.errors)
            if response.bids and "app" in bidder.request:  # PBS-Go requestBid: app requests only
                add_native_types(response, bidder.request, outcome.errors)
            outcome.responses.append(response)
    outcome.elapsed_ms = int((finished - outcome.started) * 1000)


def _start(
    client: BidderClient,
    exchange: HttpCall,
    deadline: float,
    extra_headers: dict[str, str],
    now: float,
    compress: bool,
    x_prebid_value: str,
) -> bool:
    """Send ``exchange``'s request with ``X-Prebid`` (:func:`~hbserver.auction.exchange.server_ext.x_prebid`,
    unless the adapter set one); False when no time was left to send it."""
    call = exchange.call
    headers = {**call.headers, **extra_headers} if extra_headers else call.headers
    if "X-Prebid" not in headers:
        headers = {**headers, "X-Prebid": x_prebid_value}
    body = call.body
    if compress and body:
        body = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
        headers = {**headers, "Content-Encoding": "gzip"}
    exchange.sent_headers = headers
    if now >= deadline:
        exchange.error = BidderError(
            "Timeout: no time left for the bidder before the auction deadline", ErrorCode.TIMEOUT
        )
        exchange.done_at = now
        return False
    try:
        exchange.pending = client.start(call.method, call.uri, body, headers, deadline)
    except Exception as exc:
        exchange.error = _call_error(exc)
        exchange.done_at = now
    return True


async def _finish(client: BidderClient, exchange: HttpCall, pending: PendingRequest) -> None:
    try:
        status, exchange.body, exchange.done_at = await client.finish(pending)
    except Exception as exc:
        exchange.reused, exchange.wait = pending.reused, pending.wait
        exchange.pending = None
        exchange.timed_out = isinstance(exc, TimeoutError)
        exchange.error = _call_error(exc)
        exchange.done_at = asyncio.get_running_loop().time()
        return
    exchange.reused, exchange.wait = pending.reused, pending.wait
    exchange.headers = pending.response_headers
    exchange.pending = None
    exchange.status = status
    if status < 200 or status >= 400:
        exchange.error = bad_server_response(
            f"Server responded with failure status: {status}. Set request.test = 1 for debugging info."
        )


def _call_error(exc: Exception) -> BidderError:
    if isinstance(exc, TimeoutError):  # before OSError: TimeoutError is one
        return BidderError("Timeout: the bidder did not answer before its deadline", ErrorCode.TIMEOUT)
    if isinstance(exc, ResponseTooLarge):
        return bad_server_response(f"Bidder response is larger than {MAX_RESPONSE_BYTES} bytes")
    if isinstance(exc, (OSError, ValueError)):  # unknown_error, as PBS-Go's plain network errors
        return BidderError(f"Error calling the bidder: {exc.__class__.__name__}: {exc}")
    raise exc


def notify_timeouts(outcomes: list[BidderOutcome], client: BidderClient, record: Callable[[bool], None]) -> None:
    """For each call that timed out, the notification its adapter makes (PBS-Go's TimeoutBidder), sent in
    the background with the call's headers: the auction does not wait for it. ``record`` is told whether
    each one got a 2xx within :data:`TIMEOUT_NOTIFICATION_SECONDS`."""
    for outcome in outcomes:
        for exchange in outcome.calls:
            if exchange.timed_out:  # rare: only then is the adapter asked whether it notifies
                _notify_timeout(outcome, exchange, client, record)


def _notify_timeout(
    outcome: BidderOutcome, exchange: HttpCall, client: BidderClient, record: Callable[[bool], None]
) -> None:
    notifier = getattr(outcome.adapter, "make_timeout_notification", None)
    if notifier is None:
        return
    try:
        notice = notifier(exchange.call)
    except Exception:
        log.exception("adapter %s failed in make_timeout_notification", outcome.bidder.name)
        return
    if notice is not None:
        task = asyncio.get_running_loop().create_task(_notify(client, notice, exchange.call.headers, record))
        _notifications.add(task)
        task.add_done_callback(_notifications.discard)


async def _notify(
    client: BidderClient, notice: RequestData, headers: Mapping[str, str], record: Callable[[bool], None]
) -> None:
    deadline = asyncio.get_running_loop().time() + TIMEOUT_NOTIFICATION_SECONDS
    try:
        status, _ = await client.request(notice.method, notice.uri, notice.body, headers, deadline)
    except (OSError, ValueError) as exc:  # TimeoutError, BidderClientError, ResponseTooLarge, a bad URL
        log.debug("timeout notification to %s failed: %s", notice.uri.split("?", 1)[0], exc)
        record(False)
        return
    record(200 <= status < 300)
