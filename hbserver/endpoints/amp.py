"""GET /openrtb2/amp: one auction for an AMP slot from the stored request ``tag_id`` names
(spec §4.3, §7, §8; DECISIONS "/openrtb2/amp").

The response leaves by ``start + tmax - amp.timeout_adjustment_ms`` with
``tmax = min(amp.default_timeout_ms, timeout, stored tmax)``; bidders get ``cache.expected_millis``
less. Body: ``{"targeting": {...}, "ext": {"errors", "warnings", "debug"}}``; every answer,
errors included, carries the AMP CORS headers.

Status classes: what the client sent is a 400 (no ``tag_id``, a ``tag_id`` no backend can look up
— control characters, longer than 200 characters or 200 bytes in UTF-8 —, an unknown one, a stored
request that breaks AMP's rules or is malformed or too deep); a stored-data backend that failed or
timed out is a 503 whose text names the id only (the backend's detail is logged).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from hbserver.analytics import Analytics
from hbserver.analytics.records import amp_record
from hbserver.auction.auction_metrics import RequestCounts
from hbserver.auction.common.messages import Message
from hbserver.auction.common.request_error import refusal_text
from hbserver.auction.core import STORED_FETCH_TIMEOUT_S, AuctionRefused, AuctionResult, AuctionService
from hbserver.auction.details import AuctionDetails
from hbserver.auction.exchange.callplan import AmpPage, amp_page
from hbserver.auction.hookpoints import HookRejected
from hbserver.auction.request.amp import (
    MAX_PARAM_LENGTH,
    QUERY_INT,
    UNRESOLVED_ACCOUNT_MACRO,
    AmpError,
    AmpParams,
    amp_request,
    amp_targeting,
    amp_tmax,
    check_stored,
    parse_amp_query,
    without_page,
)
from hbserver.auction.request.ortb_types import body_syntax_error
from hbserver.auction.request.prepared import PREPARED_AMP_ENTRIES, PREPARED_AMP_SEEN, PreparedRequest, preparable
from hbserver.auction.request.profiles import ProfileTrace
from hbserver.auction.request.stored import UUID_MACRO, fetch_failure
from hbserver.auction.request.validate import RequestError
from hbserver.config import Config
from hbserver.endpoints.amp_profiles import AmpProfiles
from hbserver.endpoints.auction import client_addresses, http_context, observe_topics
from hbserver.endpoints.hooked import entrypoint, exit_response, rejected_answer
from hbserver.hooks.api import ENDPOINT_AMP, Stage
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import analytics_entries
from hbserver.metrics import Metrics
from hbserver.numbers import int_or
from hbserver.overload import AMP_SHED_BODY, OverloadGuard
from hbserver.privacy.activity import ActivityControl
from hbserver.stores.lru import LRUCache, SeenBefore
from hbserver.stores.stored import StoredData
from hbserver.stores.stored.base import id_problem
from hbserver.usersync.cookie import COOKIE_NAME
from hbserver.usersync.service import SyncService
from hbserver.web.body import JsonTooDeep, loads_json
from hbserver.web.errors import text_response
from hbserver.web.requestlog import ACCOUNT, BIDDERS
from hbserver.web.response import FastResponse

# stages as module globals: an Enum class's attribute goes through EnumType's __getattr__ hook (several times the cost)
_ENTRYPOINT = Stage.ENTRYPOINT

SOURCE_ORIGIN_HEADER = "AMP-Access-Control-Allow-Source-Origin"
MAX_ORIGIN_LENGTH = 2048


def _header_safe(value: str) -> str:
    """A value fit for a response header (printable ASCII, bounded), else "".

    An Origin that is not ASCII (bytes that were not UTF-8 arrive as lone surrogates) is no origin
    a browser sends, and could not be written back."""
    # for ASCII, isprintable() is false exactly for the controls (below 32, and 127)
    if len(value) > MAX_ORIGIN_LENGTH or not value.isascii() or not value.isprintable():
        return ""
    return value


@dataclass(frozen=True, slots=True)
class _PreparedAmp:
    """What one (Origin, query string) resolved to, valid while the stored request is ``raw`` (and, when it
    names profiles, while :meth:`AmpProfiles.unchanged` holds for ``profiles``)."""

    params: AmpParams
    query_warnings: list[Message]
    raw: bytes | str
    tmax: int
    prepared: PreparedRequest
    profiles: ProfileTrace | None = None


def _stored_json(tag_id: str, raw: bytes | str) -> Any:
    """The stored request's JSON. PBS-Go (``amp_auction.go`` ``loadRequestJSONForAmp``) decodes it into a
    BidRequest before any AMP rule, so text that is no JSON object is refused in json-iterator's words
    (``malformed``: ``expect { or n, but found m``; ``[1]``: ``... found [``); ``null`` goes on as an empty
    request. Nesting past the depth limit is hbserver's own refusal, which names the tag."""
    try:
        stored = loads_json(raw)
    except JsonTooDeep as exc:
        raise AuctionRefused(
            400, f"Invalid request: the stored request for tag_id {tag_id} is not valid JSON: {exc}", "badinput"
        ) from None
    except orjson.JSONDecodeError:
        stored = raw  # not JSON: json-iterator's text below
    if stored is None or isinstance(stored, dict):
        return stored
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    problem = body_syntax_error(data) or f"the stored request for tag_id {tag_id} is not a JSON object"
    raise AuctionRefused(400, f"Invalid request: {problem}\n", "badinput")


class AmpEndpoint:
    def __init__(
        self,
        service: AuctionService,
        stored: StoredData,
        sync: SyncService,
        config: Config,
        analytics: Analytics,
        metrics: Metrics,
    ) -> None:
        self.service = service
        self.stored = stored
        self.sync = sync
        self.default_timeout_ms = config.amp.default_timeout_ms
        self.adjustment_ms = config.amp.timeout_adjustment_ms
        self.gdpr_enabled = config.gdpr.enabled
        self.analytics = analytics
        self.metrics = metrics
        self.counts = RequestCounts(metrics)
        self.addresses = client_addresses(service)
        self.overload: OverloadGuard | None = None  # load shedding (set by create_app)
        self.prepared: LRUCache[_PreparedAmp] = LRUCache(PREPARED_AMP_ENTRIES, 0)
        self.seen = SeenBefore(PREPARED_AMP_SEEN)
        self.profiles = AmpProfiles(service, stored)

    async def handle(self, request: web.Request) -> web.Response:
        start = asyncio.get_running_loop().time()
        origin = request.headers.get("Origin", "")
        source_origin = _header_safe(request.query.get("__amp_source_origin") or origin)
        overload = self.overload
        if overload is not None:  # overloaded: no bids at once rather than an auction answered too late
            waited = overload.waited(request, start)
            if overload.shed("amp", waited, self._budget_s(request.query.get("timeout"))) is not None:
                response = FastResponse(body=AMP_SHED_BODY, content_type="application/json")
                response.headers[SOURCE_ORIGIN_HEADER] = source_origin
                response.headers["Access-Control-Expose-Headers"] = SOURCE_ORIGIN_HEADER
                observe_topics(request, response)
                return response
            start -= waited  # the deadline counts from the request's arrival
        hooks = self.service.hook_executor(ENDPOINT_AMP)  # None: no module runs
        try:
            if hooks is not None and _ENTRYPOINT in hooks.stages:
                _, rejection = await entrypoint(hooks, request, b"")  # AMP has no body (PBS-Go passes nil)
                if rejection is not None:
                    raise HookRejected(rejection, None)
            response = await self._auction(request, start, origin, hooks)
        except HookRejected as exc:
            assert hooks is not None
            response = await self._hook_rejected(hooks, exc)
        except AuctionRefused as exc:
            self.counts.answered("amp", exc.metric, asyncio.get_running_loop().time() - start,
                                 has_cookie=COOKIE_NAME in request.cookies)
            self._record(exc.status, "", [], 0, [exc.message.rstrip("\n")])
            response = text_response(exc.status, exc.message)
        response.headers[SOURCE_ORIGIN_HEADER] = source_origin
        response.headers["Access-Control-Expose-Headers"] = SOURCE_ORIGIN_HEADER
        observe_topics(request, response)
        return response

    def _budget_s(self, timeout: str | None) -> float:
        """The answer's budget from the query's ``timeout`` (the stored tmax is not known yet), seconds."""
        timeout_ms = int_or(timeout, 0, QUERY_INT, signs="") if timeout else 0
        return (amp_tmax(self.default_timeout_ms, timeout_ms, None) - self.adjustment_ms) / 1000

    def _key(self, request: web.Request, origin: str) -> tuple[str, AmpPage | None]:
        """The prepared-request key and this visit's page: the query less its ``curl`` (every page of a
        slot shares one prepared request, the page spliced in per auction), the page's shape (none, with
        a host or without, which decide what the request holds) and the Origin. A query whose curl
        cannot be cut out is a key of its own, page and all (then no page is spliced: None)."""
        query_string = request.query_string
        rest = without_page(query_string)
        if rest is None:
            return f"{origin}\x00\x00{query_string}", None
        page = amp_page((request.query.get("curl") or "")[:MAX_PARAM_LENGTH])
        shape = "0" if page is None else "h" if page.host else "p"
        return f"{origin}\x00{shape}\x00{rest}", page

    async def _hook_rejected(self, hooks: HookExecutor, rejected: HookRejected) -> web.Response:
        """A request a hook rejected: no targeting, the modules' outcomes (PBS-Go's rejectAmpRequest)."""
        answer = await rejected_answer(hooks, rejected)
        self._record(200, hooks.account_id, [], 0, [str(rejected)], None, None, analytics_entries(hooks.outcomes))
        body: dict[str, Any] = {"targeting": {}}
        modules = answer.get("ext", {}).get("prebid", {}).get("modules")
        if modules is not None:
            body["ext"] = {"prebid": {"modules": modules}}
        return await exit_response(hooks, body)

    async def _auction(
        self, request: web.Request, start: float, origin: str, hooks: HookExecutor | None = None
    ) -> web.Response:
        key, page = self._key(request, origin)
        entry = self.prepared.get(key)
        if entry is None:
            params, query_warnings = _params(request, origin)
        else:
            params, query_warnings = entry.params, entry.query_warnings
        account = params.account if params.account != UNRESOLVED_ACCOUNT_MACRO else ""
        raw = await self._stored_bytes(params.tag_id, account)
        auction_request: dict[str, Any] = {}
        warnings: list[Message] = []
        if (
            entry is not None
            and raw == entry.raw  # bytes compare identity first
            and (entry.profiles is None or await self.profiles.unchanged(entry.profiles))
        ):
            tmax, prepared = entry.tmax, entry.prepared
        else:  # first seen, or the stored request changed
            if entry is not None:  # the entry's parameters hold another visit's page: this one's own
                params, query_warnings = _params(request, origin)  # parsed as before: no error
            tmax, auction_request, warnings, prepared = await self._build(key, params, query_warnings, raw)
        budget = max(0, tmax - self.adjustment_ms)
        context = http_context(request, self.sync, self.service.config.debug.override_token, self.addresses)
        result = await self.service.execute(
            auction_request, context, start,
            amp_budget_ms=budget, warnings=warnings, details=self.analytics.enabled,
            query=request.query,  # adservertargeting's query-parameter lookups (AMP only, as PBS-Go)
            prepared=prepared, page=page, hooks=hooks,
        )
        self.counts.answered("amp", "ok", asyncio.get_running_loop().time() - start,
                             has_cookie=COOKIE_NAME in request.cookies, account=result.account)
        request[ACCOUNT] = result.account  # for the access and interaction logs
        request[BIDDERS] = result.bidders
        if result.details is not None:  # PBS-Go's AmpObject.Origin
            result.details.origin = request.query.get("__amp_source_origin") or origin
        if result.hooks is not None:
            modules = analytics_entries(result.hooks.outcomes)
            self._record(200, result.account, result.bidders, result.bids, [], result.details, result.activities,
                         modules)  # fmt: skip
            return await exit_response(result.hooks, _answer_body(result, params.debug))
        self._record(200, result.account, result.bidders, result.bids, [], result.details, result.activities)
        return _answer(result, params.debug)

    async def _stored_bytes(self, tag_id: str, account: str = "") -> bytes | str:
        """The stored request's bytes (the in-process cache first); AuctionRefused 503/400 without them.
        ``account`` (the query's) picks among per-account stored requests (PBS-Java's)."""
        raw = self.stored.cached_amp_request(tag_id)
        errors: list[str] = []
        if raw is None:
            remaining = self.default_timeout_ms / 1000
            timeout_s = min(STORED_FETCH_TIMEOUT_S, remaining)
            raw, errors = await self.stored.fetch_amp_request(tag_id, timeout_s, account)
        if raw is None:
            failure = fetch_failure(errors)
            if failure is not None:  # the server's: a backend failed (its detail is logged, not sent)
                raise AuctionRefused(503, str(failure), "err")
            for error in errors:  # the id is stored for other accounts (PBS-Java's texts)
                if error.startswith(("No stored ", "Multiple stored ")):
                    raise AuctionRefused(400, f"Invalid request: {error}", "badinput")
            raise AuctionRefused(400, f"Invalid request: No AMP config found for tag_id {tag_id}.", "badinput")
        return raw

    async def _build(
        self, key: str, params: AmpParams, query_warnings: list[Message], raw: bytes | str
    ) -> tuple[int, dict[str, Any], list[Message], PreparedRequest | None]:
        """The auction request from the stored bytes, its profiles (PBS-Java's order: before AMP's rules and
        the query) and the query: (tmax, request, warnings, its prepared form when it is kept under ``key``,
        on the key's second visit)."""
        stored = _stored_json(params.tag_id, raw)
        trace: ProfileTrace | None = None
        profile_warnings: list[Message] = []
        if type(stored) is dict:
            stored, profile_warnings, trace = await self.profiles.apply(stored, params)
        try:
            stored = check_stored(params.tag_id, stored)
        except AmpError as exc:
            raise AuctionRefused(400, f"Invalid request: {exc}", "badinput") from None
        tmax = amp_tmax(self.default_timeout_ms, params.timeout, stored.get("tmax"))
        auction_request, consent_warnings = amp_request(stored, params, self.gdpr_enabled)
        warnings = query_warnings + consent_warnings + profile_warnings
        prepared = None
        # prepared on the second visit: one that never comes back costs no preparing
        if not params.debug and self.seen.check(key) and preparable(auction_request):
            try:
                prepared = self.service.prepare(auction_request, warnings, fresh_id=stored.get("id") == UUID_MACRO)
            except RequestError as exc:
                raise AuctionRefused(400, refusal_text(exc), "badinput") from None
            if prepared is not None:
                self.prepared.put(key, _PreparedAmp(params, query_warnings, raw, tmax, prepared, trace))
        return tmax, auction_request, warnings, prepared

    def _record(
        self,
        status: int,
        account: str,
        bidders: list[str],
        bids: int,
        errors: list[str],
        details: AuctionDetails | None = None,
        activities: ActivityControl | None = None,
        modules: list[dict[str, Any]] | None = None,
    ) -> None:
        if self.analytics.enabled:
            self.analytics.log(amp_record(status, account, bidders, bids, errors, details, modules), activities)


def _params(request: web.Request, origin: str) -> tuple[AmpParams, list[Message]]:
    """The query's AMP parameters; AuctionRefused 400 for a missing or unusable ``tag_id`` or ``timeout``."""
    try:
        params, query_warnings = parse_amp_query(request.query, origin)
    except AmpError as exc:
        raise AuctionRefused(400, f"Invalid request: {exc}", "badinput") from None
    problem = id_problem(params.tag_id)
    if problem is not None:  # the client's: no backend could look it up
        raise AuctionRefused(400, f"Invalid request: tag_id is invalid: {problem}", "badinput")
    return params, query_warnings


def _answer(result: AuctionResult, debug: bool) -> web.Response:
    return FastResponse(body=orjson.dumps(_answer_body(result, debug)), content_type="application/json")


def _answer_body(result: AuctionResult, debug: bool) -> dict[str, Any]:
    """The AMP answer: the targeting, and the response's errors and warnings (and debug, when asked;
    the modules' outcomes, when hooks ran)."""
    targeting = result.amp_targeting if result.amp_targeting is not None else amp_targeting(result.response)
    body: dict[str, Any] = {"targeting": targeting}
    source_ext = result.response.get("ext", {})
    ext = {key: source_ext[key] for key in ("errors", "warnings") if key in source_ext}
    if debug and "debug" in source_ext:
        ext["debug"] = source_ext["debug"]
    prebid = source_ext.get("prebid")
    if isinstance(prebid, dict) and "modules" in prebid:
        ext["prebid"] = {"modules": prebid["modules"]}
    if ext:
        body["ext"] = ext
    return body
