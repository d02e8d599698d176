"""Win/impression events: parsing ``/event`` queries (pure) and building event URLs.

Validation follows PBS-Java: it stops at the first problem, in the order t, b, ts, f, x, int,
then a (401). ``t=vast`` with ``vtype`` (PBS-Go) is accepted as an extension; ``vtype`` is
ignored for other types, as PBS-Java ignores it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from hbserver.numbers import INT64, NumberError, parse_int

EVENT_TYPES = ("win", "imp", "vast")
VAST_EVENT_TYPES = ("start", "firstQuartile", "midPoint", "thirdQuartile", "complete")
FORMAT_BLANK = "b"
FORMAT_IMAGE = "i"
MAX_INTEGRATION_LENGTH = 64

_SHOWN_TS_CHARS = 64
_INTEGRATION = re.compile(r"[\w-]*")  # Unicode letters and digits, '_' and '-'

# The 86-byte transparent 1x1 PNG that Prebid Server answers f=i with (same bytes).
PIXEL_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000473424954080808087c0864880000000d49444154089963606060600000"
    "0005000187a14ed40000000049454e44ae426082"
)


class EventRequestError(Exception):
    """A rejected /event query: the HTTP status and the plain-text message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)  # not frozen: a frozen __init__ costs microseconds on the hot path
class EventRequest:
    type: str
    bidid: str
    account: str
    bidder: str | None
    timestamp: int | None
    format: str
    analytics: bool
    integration: str | None
    aid: str | None
    vtype: str | None


def integration_problem(integration: str) -> str | None:
    """Why an ``int`` value is refused (PBS-Java's texts), or None when it is fine."""
    if len(integration) > MAX_INTEGRATION_LENGTH:
        return f"Integration 'int' query parameter is longer {MAX_INTEGRATION_LENGTH} symbols: {integration}"
    if not _INTEGRATION.fullmatch(integration):
        return f"Integration 'int' query parameter is not valid: {integration}"
    return None


def _bad(message: str) -> EventRequestError:
    return EventRequestError(400, message)


def parse_event_query(query: Mapping[str, str]) -> EventRequest:
    """Validate an /event query; raises EventRequestError with PBS-Java's status and wording."""
    get = query.get
    event_type = get("t")
    if event_type not in EVENT_TYPES:
        raise _bad(
            "Type 't' is required query parameter. Possible values are win and imp, "
            f"but was {'null' if event_type is None else event_type}"
        )
    vtype = None
    if event_type == "vast":
        vtype = get("vtype")
        if vtype not in VAST_EVENT_TYPES:
            raise _bad(
                "VAST type 'vtype' is required query parameter for t=vast. Possible values are "
                f"{', '.join(VAST_EVENT_TYPES)}, but was {'null' if vtype is None else vtype}"
            )
    bidid = (get("b") or "").strip()
    if not bidid:
        raise _bad("BidId 'b' is required query parameter and can't be empty")
    timestamp = None
    ts = get("ts")
    if ts:
        ts = ts.strip()
        if ts:
            try:
                timestamp = parse_int(ts, INT64)
            except NumberError:
                shown = ts if len(ts) <= _SHOWN_TS_CHARS else ts[:_SHOWN_TS_CHARS] + "..."
                raise _bad(f"Timestamp 'ts' query parameter is not valid number: {shown}") from None
    fmt = get("f") or FORMAT_BLANK
    if fmt != FORMAT_BLANK and fmt != FORMAT_IMAGE:
        raise _bad(f"Format 'f' query parameter is invalid. Possible values are b and i, but was {fmt}")
    analytics = get("x") or "1"
    if analytics != "1" and analytics != "0":
        raise _bad(f"Analytics 'x' query parameter is invalid. Possible values are 1 and 0, but was {analytics}")
    integration = get("int") or None
    if integration is not None:
        problem = integration_problem(integration)
        if problem:
            raise _bad(problem)
    account = (get("a") or "").strip()
    if not account:
        raise EventRequestError(401, "Account 'a' is required query parameter and can't be empty")
    aid = get("aid")
    if aid is not None:
        aid = aid.strip() or None
    # positional: a keyword call of ten fields costs a microsecond more on this hot path
    return EventRequest(
        event_type, bidid, account, get("bidder") or None, timestamp, fmt, analytics == "1", integration, aid, vtype
    )
