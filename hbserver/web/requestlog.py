"""Per-request logging: request ids, the sampled access log, and the armed HTTP-interaction log.

Request ids are a per-process random prefix and a counter (32 hex characters, like a UUID's hex,
a small fraction of ``uuid4()``'s cost); a forked worker draws its own prefix, so ids stay unique
across workers.

Endpoints tell the logs what only they know through the request mapping: :data:`ACCOUNT` (the
account id), :data:`BIDDERS` (the bidder codes an auction asked) and :data:`BODY` (the raw
request body, for the interaction log). None of them is ever the query string, a cookie or an IP.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from aiohttp import web

ACCOUNT: web.RequestKey[str] = web.RequestKey("hbs.account", str)
BIDDERS: web.RequestKey[list[str]] = web.RequestKey("hbs.bidders", list)
BODY: web.RequestKey[bytes] = web.RequestKey("hbs.body", bytes)

_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
sane_request_id = _SANE_REQUEST_ID.fullmatch

MAX_ACCOUNT_CHARS = 128  # an account id is the client's text: the access log keeps at most this much

access_log = logging.getLogger("hbserver.access")
interaction_log = logging.getLogger("hbserver.httpinteraction")

# An id is the process's prefix (16 hex), a block number (14 hex) and one of 256 two-hex tails:
# next() on the stream below runs in C (chain -> map -> str.__add__), a third of the cost of
# formatting a counter, and a new block is made once per 256 ids.
_TAILS = [f"{tail:02x}" for tail in range(256)]
_ids: Iterator[str]


def _id_stream(prefix: str) -> Iterator[str]:
    blocks = map(lambda block: map(f"{prefix}{block:014x}".__add__, _TAILS), itertools.count(1))
    return itertools.chain.from_iterable(blocks)


def _reseed() -> None:
    global _ids
    _ids = _id_stream(os.urandom(8).hex())


_reseed()
os.register_at_fork(after_in_child=_reseed)


def id_source() -> Iterator[str]:
    """This process's id stream: :func:`~hbserver.web.endpoint.wrap` (made in the worker, after
    the fork) takes ``next()`` of it on every request, as :func:`new_request_id` does."""
    return _ids


def new_request_id() -> str:
    """A fresh id, unique across this server's processes: 16 hex of prefix, 16 hex of counter."""
    return next(_ids)


def request_id_from(given: str | None) -> str:
    """The caller's ``X-Request-Id`` when it is sane (1-64 of ``A-Za-z0-9._-``), else a fresh one."""
    if given is not None and sane_request_id(given):
        return given
    return new_request_id()


class AccessLog:
    """One line on ``hbserver.access`` per sampled request; what :func:`wrap` calls only when
    ``sample_rate`` > 0 (at 0 nothing is drawn or built)."""

    def __init__(self, sample_rate: float) -> None:
        self.sample_rate = sample_rate

    @staticmethod
    def write(request: web.BaseRequest, endpoint: str, status: int, seconds: float, rid: str) -> None:
        duration_ms = round(seconds * 1000, 3)
        fields: dict[str, object] = {
            "request_id": rid, "method": request.method, "endpoint": endpoint, "status": status,
            "duration_ms": duration_ms,
        }
        account = request.get(ACCOUNT)
        if account:
            fields["account"] = account[:MAX_ACCOUNT_CHARS]
        bidders = request.get(BIDDERS)
        if bidders is not None:
            fields["bidders"] = bidders
        access_log.info("%s %s %d %.3fms", request.method, endpoint, status, duration_ms, extra=fields)


# The interaction log: at most this much of each body (bytes) and of the URL (characters) is logged.
MAX_LOGGED_BODY_BYTES = 16 * 1024
MAX_LOGGED_URL_CHARS = 4096
INTERACTION_KINDS = {"/openrtb2/auction": "auction", "/openrtb2/amp": "amp"}


@dataclass(frozen=True, slots=True)
class InteractionSpec:
    """Which interactions to log (None = any) and how many."""

    endpoint: str | None  # auction | amp
    status_code: int | None
    account: str | None
    limit: int


def excerpt(data: bytes | bytearray | str, limit: int) -> str:
    """``data`` as one line of text, cut to ``limit`` (bytes or characters) with a note saying so."""
    size = len(data)
    cut = data[:limit]
    text = cut if isinstance(cut, str) else bytes(cut).decode("utf-8", "replace")
    text = text.replace("\r", " ").replace("\n", " ")
    if size > limit:
        unit = "characters" if isinstance(data, str) else "bytes"
        text += f"... (truncated: {size} {unit})"
    return text


class HttpInteractionLog:
    """PBS-Java's ``/logging/httpinteraction``: once armed, the next ``limit`` matching auction/AMP
    interactions of this worker are logged in full (bodies cut to a bounded size) at INFO on
    ``hbserver.httpinteraction``; then it disarms itself. Arming again replaces the spec."""

    def __init__(self) -> None:
        self.spec: InteractionSpec | None = None
        self.remaining = 0

    def arm(self, spec: InteractionSpec) -> None:
        self.spec = spec
        self.remaining = spec.limit
        interaction_log.info(
            "logging the next %d interactions: endpoint=%s statusCode=%s account=%s", spec.limit,
            spec.endpoint or "any", spec.status_code or "any", spec.account if spec.account is not None else "any",
        )

    def maybe_log(self, kind: str, request: web.BaseRequest, response: web.StreamResponse) -> None:
        """Log this interaction when it matches the armed spec (call only while ``spec`` is set)."""
        spec = self.spec
        if spec is None:
            return
        status = response.status
        account = request.get(ACCOUNT)
        if (
            (spec.endpoint is not None and spec.endpoint != kind)
            or (spec.status_code is not None and spec.status_code != status)
            or (spec.account is not None and spec.account != account)
        ):
            return
        self.remaining -= 1
        if self.remaining <= 0:
            self.spec = None
        body = response.body if isinstance(response, web.Response) else None
        response_text = (
            excerpt(body, MAX_LOGGED_BODY_BYTES) if isinstance(body, (bytes, bytearray, str)) else "(not logged)"
        )
        url = excerpt(request.path_qs, MAX_LOGGED_URL_CHARS)
        extra = {"endpoint": kind, "account": account or "", "status": status}
        if kind == "amp":
            interaction_log.info(
                'Requested URL: "%s", response status: "%d", response body: "%s"', url, status, response_text,
                extra=extra,
            )
            return
        raw = request.get(BODY)
        request_text = excerpt(raw, MAX_LOGGED_BODY_BYTES) if isinstance(raw, bytes) else ""
        interaction_log.info(
            'Requested URL: "%s", request body: "%s", response status: "%d", response body: "%s"',
            url, request_text, status, response_text, extra=extra,
        )


HTTP_INTERACTIONS: web.AppKey[HttpInteractionLog] = web.AppKey("http_interactions", HttpInteractionLog)
