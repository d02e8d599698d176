"""POST /openrtb2/auction: the OpenRTB auction Prebid.js and apps call (reference §3).

Thin: read the body (any Content-Type, gzip by header or ``?gzip=1``, size-capped, at most
``MAX_JSON_DEPTH`` deep), gather what the HTTP request says (cookie uids, UA, IP, Referer, DNT,
Sec-GPC, Sec-Browsing-Topics, Sec-Cookie-Deprecation), run the exchange, render JSON.

Headers enter the OpenRTB request here and only here (:func:`http_context`, shared with AMP), so
they are made safe here once: bytes that were not UTF-8 become U+FFFD (aiohttp hands them over as
lone surrogates, which no JSON encoder writes: one such User-Agent failed every bidder), and the
client's address is PBS-Go's (``True-Client-IP``, ``X-Forwarded-For``, ``X-Real-IP``, the peer: the
first public address; hbserver.web.client_ip).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from hbserver.analytics import Analytics
from hbserver.analytics.records import auction_record
from hbserver.auction.auction_metrics import RequestCounts
from hbserver.auction.core import AuctionRefused, AuctionResult, AuctionService, HttpContext, request_type_of
from hbserver.auction.hookpoints import HookRejected
from hbserver.auction.request.ortb_types import body_syntax_error
from hbserver.endpoints.hooked import entrypoint, exit_response, rejected_answer
from hbserver.hooks.api import ENDPOINT_AUCTION, Stage
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import analytics_entries
from hbserver.metrics import Metrics
from hbserver.overload import OverloadGuard, auction_shed_body
from hbserver.privacy.sandbox import OBSERVE_BROWSING_TOPICS, SEC_BROWSING_TOPICS
from hbserver.usersync.service import SyncService, utcnow
from hbserver.web.body import JsonTooDeep, loads_json, parse_json, read_body
from hbserver.web.client_ip import ClientAddresses
from hbserver.web.cookies import request_cookies
from hbserver.web.errors import HttpError, text_response
from hbserver.web.requestlog import ACCOUNT, BIDDERS, BODY
from hbserver.web.response import FastResponse

# stages as module globals: an Enum class's attribute goes through EnumType's __getattr__ hook (several times the cost)
_ENTRYPOINT = Stage.ENTRYPOINT
_EXITPOINT = Stage.EXITPOINT

MAX_HEADER_VALUE = 2048  # longer UA/Referer values are cut, not trusted whole
DEFAULT_ADDRESSES = ClientAddresses()  # PBS-Go's default private networks


def header_text(value: str) -> str:
    """A header value fit for JSON: bytes that were not UTF-8 become U+FFFD.

    aiohttp keeps such bytes as lone surrogates (``surrogateescape``), which no JSON encoder
    writes; one such User-Agent would fail every bidder's request. ASCII (the usual) is returned as is.
    """
    if value.isascii():
        return value
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate aiohttp did not make: drop what cannot be written
        return value.encode("utf-8", "replace").decode("utf-8")


def client_addresses(service: AuctionService) -> ClientAddresses:
    """The host's client address finder (its private networks parsed once, at start-up)."""
    networks = service.config.request_validation
    return ClientAddresses(networks.ipv4_private_networks, networks.ipv6_private_networks)


DEBUG_OVERRIDE_HEADER = "X-Pbs-Debug-Override"  # PBS's (exchange.DebugOverrideHeader)


def http_context(
    request: web.Request, sync: SyncService, override_token: str = "", addresses: ClientAddresses = DEFAULT_ADDRESSES
) -> HttpContext:
    """What the HTTP request adds to the OpenRTB request, each value checked once here: text that
    JSON can carry, addresses that are public addresses (``addresses``: PBS-Go's ``FindIP``).
    ``override_token``: the host's ``debug.override_token`` ("" none), which ``X-Pbs-Debug-Override``
    must equal to force debug."""
    headers = request.headers
    cookies = request_cookies(request)
    uids = sync.read_cookie(cookies, utcnow()).buyeruids() if cookies else {}
    topics = headers.get(SEC_BROWSING_TOPICS)  # Privacy Sandbox: used when the account asks for them
    cdep = headers.get("Sec-Cookie-Deprecation")
    return HttpContext(
        user_agent=header_text(headers.get("User-Agent", "")[:MAX_HEADER_VALUE]),
        referer=header_text(headers.get("Referer", "")[:MAX_HEADER_VALUE]),
        ip=addresses.find(headers, request.remote),
        dnt=headers.get("DNT", ""),
        gpc=headers.get("Sec-GPC", ""),
        uids=uids,
        topics=header_text(topics) if topics else "",
        cdep=header_text(cdep) if cdep else "",
        debug_override=bool(override_token) and headers.get(DEBUG_OVERRIDE_HEADER) == override_token,
    )


def observe_topics(request: web.Request, response: web.StreamResponse) -> None:
    """PBS-Go ``setBrowsingTopicsHeader``: ``Observe-Browsing-Topics: ?1`` answers any Sec-Browsing-Topics."""
    if request.headers.get(SEC_BROWSING_TOPICS):
        response.headers[OBSERVE_BROWSING_TOPICS] = "?1"


# json-iterator's text needs a model of its decoder walked over the body (about 0.2 µs a byte): bigger
# malformed bodies get orjson's text, so no body can buy much CPU with a syntax error
MAX_MODELLED_BODY = 32 * 1024


def _loose_json(raw: bytes) -> Any:
    """The body as JSON when it is (a rejected request's id), else None."""
    try:
        return loads_json(raw)
    except (JsonTooDeep, orjson.JSONDecodeError):
        return None


def _parse_body(raw: bytes) -> Any:
    """The JSON body; one json-iterator cannot decode into a BidRequest is refused with PBS-Go's text
    (``expect { or n, but found m``). Empty, too deep and very large malformed bodies keep our texts."""
    if raw and not raw.isspace():
        try:
            return loads_json(raw)
        except JsonTooDeep:
            pass  # parse_json names it
        except orjson.JSONDecodeError:
            text = body_syntax_error(raw) if len(raw) <= MAX_MODELLED_BODY else None
            if text is not None:
                raise HttpError(400, f"Invalid request: {text}\n") from None
    return parse_json(raw)


class AuctionEndpoint:
    def __init__(
        self, service: AuctionService, sync: SyncService, analytics: Analytics, metrics: Metrics,
        overload: OverloadGuard | None = None,
    ) -> None:
        self.overload = overload  # load shedding; None = off
        self.service = service
        self.sync = sync
        self.analytics = analytics
        self.metrics = metrics
        self.counts = RequestCounts(metrics)
        self.addresses = client_addresses(service)

    async def handle(self, request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        started = loop.time()
        hooks = self.service.hook_executor(ENDPOINT_AUCTION)  # None: no module runs
        try:
            raw = request[BODY] = await read_body(request)  # BODY: for the interaction log
            if hooks is not None and _ENTRYPOINT in hooks.stages:
                raw, rejection = await entrypoint(hooks, request, raw)
                if rejection is not None:
                    return await self._hook_rejected(request, hooks, HookRejected(rejection, _loose_json(raw)))
            body = _parse_body(raw)
        except HttpError as exc:  # unreadable body: refused like any other bad request
            self._refused(exc.status, exc.message, "openrtb2-web", "badinput", loop.time() - started)
            refused = exc.response()
            observe_topics(request, refused)  # PBS-Go answers topics whatever the body
            return refused
        overload = self.overload
        if overload is not None and isinstance(body, dict):  # overloaded: no bids now, not an auction too late
            waited = overload.waited(request, started)
            reason = overload.shed(request_type_of(body), waited, self.service.tmax_ms(body.get("tmax")) / 1000)
            if reason is not None:
                shed = FastResponse(body=auction_shed_body(body.get("id", ""), reason), content_type="application/json")
                observe_topics(request, shed)
                return shed
            started -= waited  # the deadline counts from the request's arrival
        context = http_context(request, self.sync, self.service.config.debug.override_token, self.addresses)
        try:
            result = await self.service.run(body, context, started, details=self.analytics.enabled, hooks=hooks)
        except HookRejected as exc:
            assert hooks is not None
            return await self._hook_rejected(request, hooks, exc)
        except AuctionRefused as exc:
            self._refused(exc.status, exc.message, request_type_of(body), exc.metric, loop.time() - started,
                          len(raw), bool(context.uids))
            refused = text_response(exc.status, exc.message)
            if context.topics:
                refused.headers[OBSERVE_BROWSING_TOPICS] = "?1"
            return refused
        self.counts.answered(result.request_type, "ok", loop.time() - started, len(raw), bool(context.uids),
                             result.account)
        request[ACCOUNT] = result.account  # for the access and interaction logs
        request[BIDDERS] = result.bidders
        hooks = result.hooks
        if hooks is not None and (self.analytics.enabled or _EXITPOINT in hooks.stages):
            return await self._hooked_answer(request, result, hooks)  # else answered as without hooks, below
        if self.analytics.enabled:
            self.analytics.log(
                auction_record(200, result.account, result.bidders, result.bids, [], result.details), result.activities
            )
        response = FastResponse(body=orjson.dumps(result.response), content_type="application/json")
        if context.topics:
            response.headers[OBSERVE_BROWSING_TOPICS] = "?1"
        return response

    async def _hooked_answer(self, request: web.Request, result: AuctionResult, hooks: HookExecutor) -> web.Response:
        """The answer of an auction hooks ran in: the analytics record carries their tags, and the
        exitpoint hooks see (and may change) what goes on the wire."""
        if self.analytics.enabled:
            record = auction_record(200, result.account, result.bidders, result.bids, [], result.details,
                                    analytics_entries(hooks.outcomes))  # fmt: skip
            self.analytics.log(record, result.activities)
        if _EXITPOINT in hooks.stages:
            response = await exit_response(hooks, result.response)
        else:  # exit_response's answer without exitpoint hooks
            response = FastResponse(body=orjson.dumps(result.response), content_type="application/json")
        observe_topics(request, response)
        return response

    async def _hook_rejected(self, request: web.Request, hooks: HookExecutor, rejected: HookRejected) -> web.Response:
        """A request a hook rejected: answered 200 with its no-bid reason (PBS-Go's rejectAuctionRequest)."""
        answer = await rejected_answer(hooks, rejected)
        if self.analytics.enabled:
            modules = analytics_entries(hooks.outcomes)
            self.analytics.log(auction_record(200, hooks.account_id, [], 0, [str(rejected)], None, modules))
        response = await exit_response(hooks, answer)
        observe_topics(request, response)
        return response

    def _refused(
        self, status: int, message: str, request_type: str, metric: str, seconds: float, size: int = 0,
        has_cookie: bool = True,
    ) -> None:
        self.counts.answered(request_type, metric, seconds, size, has_cookie)
        if self.analytics.enabled:
            self.analytics.log(auction_record(status, "", [], 0, [message.rstrip("\n")]))
