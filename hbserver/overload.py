"""Overload is shed, not queued: an auction that can no longer be answered in time is answered at once.

Under saturation requests queue, and an auction that starts late answers late: after Prebid.js or
the AMP runtime has given up, having spent the CPU the requests behind it needed. So
``/openrtb2/auction`` and ``/openrtb2/amp`` first ask how long the request has already waited:

- **in the process**: from the moment its head was complete (the connection's ``_body_since``,
  :mod:`hbserver.web.connection`) to the handler's first line: the callbacks and handlers the event
  loop ran before it;
- **in the kernel**, which that stamp cannot see: bytes that arrived while the loop was busy wait
  in the socket until the loop polls again. :class:`LoopLag` is a heartbeat timer every
  :data:`HEARTBEAT_SECONDS`; the loop polls before it runs its timers, so a head read when the
  heartbeat is overdue was read by a loop busy since the heartbeat's due time at least, and the
  connection stamps it as arrived then (the first bytes to arrive in a stall waited that long).

The sum is the request's wait. :func:`shed_reason` sheds it when the wait exceeds
``overload.max_wait_ms`` (``queue``) or has used up the request's whole budget (``deadline``; AMP:
its timeout less ``amp.timeout_adjustment_ms``, auction: its tmax).

While the loop is saturated (its last two heartbeats were both more than :data:`BUSY_SHARE` of the
maximum late) the wait allowed is that share. On a saturated loop each turn lasts about as long as
the longest wait it lets through, and an auction let through needs several turns (its request,
the bidders' answers, the cache, its answer: five or six for AMP), so at twice the saturation a
100 ms maximum put AMP's p99 past its 500 ms budget. A single stall (a collection, the process
descheduled) is one late heartbeat, and requests read after it keep the whole maximum. A shed request gets the answer
of an auction with no bids, from precomputed bytes (AMP ``{"targeting":{}}``; auction the request's
``id``, an empty ``seatbid`` and a warning naming overload), and is counted in
``overload_shed_requests``. A request that is not shed has its start moved back by its wait, so its
auction's deadline counts from its arrival, not from the handler.

``overload.max_wait_ms: 0`` switches all of it off (no heartbeat, no check, starts not moved).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import orjson

from hbserver.auction.common.messages import WarningCode
from hbserver.web.connection import HEARTBEAT, Heartbeat

if TYPE_CHECKING:
    from aiohttp import web

    from hbserver.metrics import Metrics, PendingCounter

HEARTBEAT_SECONDS = 0.005  # the lag monitor's period: a stall is seen to within this
# The share of overload.max_wait_ms a saturated loop lets a request wait (see OverloadGuard.max_wait).
BUSY_SHARE = 0.25
QUEUE, DEADLINE = "queue", "deadline"  # shed_reason's answers (the metric's reason label)
REQUEST_TYPES = ("amp", "openrtb2-web", "openrtb2-app", "openrtb2-dooh")

AMP_SHED_BODY = b'{"targeting":{}}'
# PBS-Go has no warning code for overload: the generic one, with a message that names it.
SHED_WARNING_CODE = int(WarningCode.UNKNOWN)
SHED_MESSAGES = {
    QUEUE: "hbserver is overloaded: the request waited longer than overload.max_wait_ms before it could be "
    "handled, so it was answered at once without an auction",
    DEADLINE: "hbserver is overloaded: the request's tmax had passed before it could be handled, so it was "
    "answered at once without an auction",
}
# The shed auction answer after its id: '{"id":' + id + tail.
_AUCTION_TAILS = {
    reason: b',"seatbid":[],"ext":{"warnings":{"prebid":['
    + orjson.dumps({"code": SHED_WARNING_CODE, "message": message})
    + b"]}}}"
    for reason, message in SHED_MESSAGES.items()
}


def shed_reason(waited_s: float, max_wait_s: float, budget_s: float) -> str | None:
    """Why a request that has waited ``waited_s`` is shed (:data:`QUEUE`, :data:`DEADLINE`), or None.

    ``max_wait_s`` 0 (or less) never sheds; ``budget_s`` is the time the request's answer may take
    from its arrival (AMP: timeout less the adjustment; auction: tmax)."""
    if max_wait_s <= 0:
        return None
    if waited_s > max_wait_s:
        return QUEUE
    if waited_s >= budget_s:
        return DEADLINE
    return None


def auction_shed_body(request_id: Any, reason: str) -> bytes:
    """The shed ``/openrtb2/auction`` answer: the request's id, no bids, the overload warning."""
    try:
        encoded = orjson.dumps(request_id)
    except TypeError:  # not JSON-encodable (cannot happen for a parsed body): an empty id
        encoded = b'""'
    return b'{"id":' + encoded + _AUCTION_TAILS[reason]


class LoopLag:
    """The event loop's heartbeat: a timer every ``interval``; ``lag`` is how late it last fired (seconds),
    ``previous`` how late it fired the time before.

    Its next due time is published in ``target`` (:data:`hbserver.web.connection.HEARTBEAT`): the
    loop polls its sockets before it runs its timers (libuv's order since 1.45, and asyncio's), so a
    head read after that time was read by a loop that had been busy since then at least, and the
    connection stamps it as arrived then.
    """

    __slots__ = ("_handle", "_loop", "interval", "lag", "previous", "target")

    def __init__(self, interval: float = HEARTBEAT_SECONDS, target: Heartbeat = HEARTBEAT) -> None:
        self.interval = interval
        self.target = target
        self.lag = 0.0
        self.previous = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.target.due = loop.time() + self.interval
        self._handle = loop.call_at(self.target.due, self._beat)

    def _beat(self) -> None:
        loop = self._loop
        assert loop is not None
        now = loop.time()
        late = now - self.target.due
        self.previous = self.lag
        self.lag = late if late > 0 else 0.0
        due = self.target.due = now + self.interval
        self._handle = loop.call_at(due, self._beat)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self.lag = self.previous = 0.0
        self.target.due = float("inf")


class OverloadGuard:
    """One worker's shedding: the wait estimate, the decision and its counters (see the module doc)."""

    __slots__ = ("_counts", "busy_wait_s", "lag", "max_wait_s")

    def __init__(self, max_wait_ms: int, metrics: Metrics | None = None, lag: LoopLag | None = None) -> None:
        self.max_wait_s = max_wait_ms / 1000
        self.busy_wait_s = self.max_wait_s * BUSY_SHARE
        self.lag = lag if lag is not None else LoopLag()
        self._counts: dict[tuple[str, str], PendingCounter] = {}
        if metrics is not None:
            self._counts = {
                (request_type, reason): metrics.counter(metrics.overload_shed, request_type, reason)
                for request_type in REQUEST_TYPES
                for reason in (QUEUE, DEADLINE)
            }

    @staticmethod
    def waited(request: web.BaseRequest, now: float) -> float:
        """Seconds ``request`` has waited by ``now``: since its head was complete, or since the loop
        stopped polling when it was read late (the connection's stamp; 0 without hbserver's Connection)."""
        since = getattr(request.protocol, "_body_since", 0.0)
        return now - since if since and now > since else 0.0

    def max_wait(self) -> float:
        """The longest wait let through now (seconds): ``max_wait_s``, or ``busy_wait_s`` while the loop is
        saturated (its last two heartbeats both came later than that; a single stall is not saturation)."""
        lag = self.lag
        busy = self.busy_wait_s
        return busy if lag.lag > busy and lag.previous > busy else self.max_wait_s

    def shed(self, request_type: str, waited_s: float, budget_s: float) -> str | None:
        """The reason to shed (counted), or None to go on with the auction."""
        reason = shed_reason(waited_s, self.max_wait(), budget_s)
        if reason is not None:
            counter = self._counts.get((request_type, reason))
            if counter is not None:
                counter.pending += 1
        return reason
