"""The exchange: one auction from a parsed OpenRTB request to the OpenRTB response.

Path: stored data merged -> 2.6 field places -> fields from HTTP -> tmax -> validation ->
account -> per-bidder requests (privacy, buyeruids, 2.5/2.6) -> fan-out with deadlines -> bids
checked, converted, adjusted -> winners -> bids cached -> targeting -> events -> response.
Endpoints (``/openrtb2/auction`` now, ``/openrtb2/amp`` later) parse and render around it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from hbserver import __version__
from hbserver.adapters import UnknownAdapter, build_adapter
from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    Adapter,
    AdapterConfig,
    BidderError,
    BidderResponse,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.analytics.auction_events import channel_allows_events
from hbserver.auction import hookpoints
from hbserver.auction.auction_metrics import AuctionMetrics
from hbserver.auction.bids import dsa, validation
from hbserver.auction.bids.accept import AuctionBid, RejectedBid, accept_bids, drop_deep_bids, generate_bid_ids
from hbserver.auction.bids.altcodes import AlternateBidderCodes
from hbserver.auction.bids.bidadjust import BidAdjustments
from hbserver.auction.bids.currency import Converter
from hbserver.auction.bids.multibid import MultiBid
from hbserver.auction.bids.nonbid import NonBidReason, SeatNonBids
from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.common.messages import Message, WarningCode, messages_json
from hbserver.auction.common.request_error import refusal_text
from hbserver.auction.details import AuctionDetails
from hbserver.auction.exchange.bidder_tmax import TmaxPolicy
from hbserver.auction.exchange.callplan import (
    FIXED_SLOTS,
    PLACEHOLDER_IPV4,
    PLACEHOLDER_IPV6,
    PLACEHOLDER_TMAX,
    PLACEHOLDER_UA,
    PLACEHOLDER_UID,
    SLOT_DOMAIN,
    SLOT_ID,
    SLOT_IP,
    SLOT_PAGE,
    SLOT_TMAX,
    SLOT_UA,
    AmpPage,
    CallPlan,
    PlanRun,
    build_plan,
    ip_kind,
    placeholder_page,
    recording,
    spliceable,
    variant_key,
    with_page,
)
from hbserver.auction.exchange.fanout import (
    MAX_CALLS_PER_BIDDER,
    BidderOutcome,
    finish_bidders,
    notify_timeouts,
    start_bidder,
    start_planned,
)
from hbserver.auction.exchange.fpd import BidderData
from hbserver.auction.exchange.privacy import BLOCKED_TCF, AuctionPrivacy, BidderPrivacy, read_privacy
from hbserver.auction.exchange.server_ext import server_ext
from hbserver.auction.exchange.split import BidderRequest, split_request
from hbserver.auction.request.account_targeting import (
    account_integration,
    account_preferred_media_types,
    with_integration,
)
from hbserver.auction.request.default_request import load_default_request
from hbserver.auction.request.echo_video import echo_refs, stored_video_attrs
from hbserver.auction.request.interstitial import InterstitialError, apply_interstitials
from hbserver.auction.request.ortb import upconvert
from hbserver.auction.request.ortb_types import body_syntax_error, imp_ext_prebid_error, request_type_error
from hbserver.auction.request.prepared import PreparedRequest
from hbserver.auction.request.profiles import apply_profiles, fetch_timeout_s, profile_ids, profile_settings
from hbserver.auction.request.setup import AuctionSetup, auction_setup
from hbserver.auction.request.stored import (
    StoredDataUnavailable,
    StoredResponses,
    StoredSource,
    load_stored_responses,
    merge_stored,
    refers_to_stored_responses,
)
from hbserver.auction.request.tids import apply_tids
from hbserver.auction.request.validate import RequestError, Validated, validate_request
from hbserver.auction.response.adservertargeting import apply_ad_server_targeting, wants_ad_server_targeting
from hbserver.auction.response.cache_options import CacheOptions
from hbserver.auction.response.category import (
    CategoryConfigError,
    CategoryTables,
    CustomKeys,
    custom_cache_keys,
    map_categories,
)
from hbserver.auction.response.eventurls import EventUrls
from hbserver.auction.response.pod_targeting import apply_pod_targeting, pods_summary, rank_bids, with_pod_bids
from hbserver.auction.response.pods import BELOW_FLOOR, Pod, PodResult, fill_pods, read_pods
from hbserver.auction.response.targeting import AuctionResults, apply_targeting, bids_to_cache, run_auction
from hbserver.bidders.registry import Bidder, Registry
from hbserver.config import AccountCacheTtl, AccountFloorFetch, AccountPriceFloors, Config
from hbserver.floors.data import Fetched
from hbserver.floors.enforce import EnforceResult, FloorEnforcement
from hbserver.floors.resolve import FLOOR_ERROR_CODE, FLOORS_DISABLED, request_has_floors, resolve_floors
from hbserver.floors.rules import floors_read_visitor
from hbserver.geo.lookup import GeoLookup, geo_lookup
from hbserver.hooks.api import Stage
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.runtime import HookRuntime
from hbserver.metrics import Metrics
from hbserver.privacy.activity import ActivityControl
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.gvl import GlobalVendorList
from hbserver.privacy.regs import RegsError
from hbserver.privacy.sandbox import apply_topics, fill_cdep
from hbserver.stores.accounts import Account, AccountError, AccountStore
from hbserver.stores.cache.base import CacheItem, CacheStoreError
from hbserver.stores.cache.service import CacheService
from hbserver.uuids import new_uuid
from hbserver.vast import insert_impression
from hbserver.web.bidclient import BidderClient
from hbserver.web.body import may_be_deeper
from hbserver.web.urls import url_host

# stages as module globals: an Enum class's attribute goes through EnumType's __getattr__ hook (several times the cost)
_RAW_AUCTION_REQUEST = Stage.RAW_AUCTION_REQUEST
_PROCESSED_AUCTION_REQUEST = Stage.PROCESSED_AUCTION_REQUEST
_ALL_PROCESSED_BID_RESPONSES = Stage.ALL_PROCESSED_BID_RESPONSES
_AUCTION_RESPONSE = Stage.AUCTION_RESPONSE

log = logging.getLogger("hbserver.auction")

STORED_FETCH_TIMEOUT_S = 0.2
CACHE_TTL_BONUS_S = 60  # PBS adds a minute to every cached bid's TTL
UNKNOWN_ACCOUNT = "unknown"
VAST_WRAPPER = (
    '<VAST version="3.0"><Ad><Wrapper><AdSystem>prebid.org wrapper</AdSystem><VASTAdTagURI><![CDATA[{}]]>'
    "</VASTAdTagURI><Impression></Impression><Creatives></Creatives></Wrapper></Ad></VAST>"
)

ParamsCheck = Callable[[str, object], "str | None"]


class AuctionRefused(Exception):
    """The request cannot be auctioned: ``status`` with a plain-text ``message``."""

    def __init__(self, status: int, message: str, metric: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.metric = metric  # PBS-Go's request_status: badinput | acctconfigerr | blockedapp | err


@dataclass(slots=True)
class HttpContext:
    """What the HTTP request tells the auction besides the body."""

    user_agent: str = ""
    referer: str = ""
    ip: str = ""
    dnt: str = ""
    gpc: str = ""
    uids: Mapping[str, str] = field(default_factory=dict)  # syncer key -> uid (the uids cookie)
    topics: str = ""  # Sec-Browsing-Topics
    cdep: str = ""  # Sec-Cookie-Deprecation
    debug_override: bool = False  # X-Pbs-Debug-Override matched the host's debug.override_token


@dataclass(slots=True)
class AuctionResult:
    response: dict[str, Any]
    account: str
    request_type: str  # openrtb2-web | openrtb2-app | openrtb2-dooh
    bidders: list[str]
    bids: int
    details: AuctionDetails | None = None  # for the analytics record; only when asked for
    # an AMP auction without debug or ad-server targeting: its answer's targeting, and ``response`` holds
    # only ``ext`` (errors, warnings), no OpenRTB response being built for an answer that shows none
    amp_targeting: dict[str, str] | None = None
    activities: ActivityControl | None = None  # the account's activity controls, when it has any
    hooks: HookExecutor | None = None  # the request's hooks, when any ran or remain (exitpoint)


def _set_cache_ids(slots: list[tuple[AuctionBid, str]], keys: list[str], custom: CustomKeys | None) -> None:
    """Each cached bid's key: its JSON's, its VAST's (of a competitive-exclusion key, the uuid alone)."""
    for (bid, kind), key in zip(slots, keys, strict=False):
        if kind == "json":
            bid.cache_id = key
        elif custom is not None and key.endswith(custom.uuid):
            bid.vast_cache_id = custom.uuid  # PBS-Go: "omit the pb_cat_dur_ portion of cache ID"
        else:
            bid.vast_cache_id = key


def _fill_details(
    details: AuctionDetails, run: _AuctionRun, response: dict[str, Any], amp_targeting: dict[str, str] | None
) -> None:
    details.request, details.response, details.account = run.request, response, run.account
    details.hooks, details.amp_targeting = run.hooks, amp_targeting
    started = run.deadline - run.tmax / 1000  # loop time of the arrival
    details.started = time.time() - (asyncio.get_running_loop().time() - started)


@dataclass(slots=True, eq=False)
class _AuctionRun:
    """One auction on its way through :meth:`AuctionService._auction`'s stages: what they read, and
    what they leave for the next (bids, errors, warnings, timings)."""

    request: dict[str, Any]
    validated: Validated
    stored_responses: StoredResponses
    account: Account
    http: HttpContext
    deadline: float  # loop time the answer is due
    tmax: int
    request_type: str
    details: AuctionDetails | None  # filled for the analytics record when analytics is on
    planned: tuple[CallPlan, list[Any]] | None  # a call plan and this auction's values for it
    setup: AuctionSetup
    nonbids: SeatNonBids | None
    warnings: dict[str, list[Message]]
    errors: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    bids: list[AuctionBid] = field(default_factory=list)
    response_times: dict[str, int] = field(default_factory=dict)
    httpcalls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    gdpr_enforced: bool = False  # for the DSA default; stored auction responses read no privacy
    bid_floors: EnforceResult | None = None
    events: EventUrls | None = None
    timestamp: int = 0
    hooks: HookExecutor | None = None  # the request's hooks; None when no module runs
    fledge: list[dict[str, Any]] | None = None  # Protected Audience auction configs the bidders gave
    cat_dur: dict[str, str] | None = None  # hb_pb_cat_dur values by bid id (includebrandcategory)
    pods: PodResult | None = None  # ORTB 2.6 pods' fills (hbserver.auction.response.pods), when the request has pods


class AuctionService:
    def __init__(
        self,
        config: Config,
        registry: Registry,
        accounts: AccountStore,
        cache: CacheService,
        http: BidderClient,
        check_params: ParamsCheck,
        metrics: Metrics,
        stored: StoredSource | None = None,
        gvl: GlobalVendorList | None = None,
        server_rates: Callable[[], Converter | None] | None = None,
        floors_fetcher: Callable[[str, AccountFloorFetch], tuple[Any, str]] | None = None,
        rand: Callable[[int], int] = random.randrange,
    ) -> None:
        self.config = config
        self.blocked_apps = frozenset(app for app in config.blocked_apps if app)  # PBS-Go default [""]: none
        self.default_request = load_default_request(config.default_request)  # raises ValueError at start
        self.tmax_policy = TmaxPolicy.from_config(config)  # None: each bidder is told the time left
        self.registry = registry
        self.accounts = accounts
        self.cache = cache
        self.http = http
        self.check_params = check_params
        self.metrics = metrics
        self.stored = stored
        self.gvl = gvl
        self.server_rates = server_rates  # the fetched currency file's rates (None = identity only)
        self.floors_fetcher = floors_fetcher  # (account id, fetch settings) -> (floors data, status)
        self.rand = rand  # Go's rand.Intn for the floors' skip, model-weight and enforce rates
        self.geo = geo_lookup(config.geolocation.database)  # device.geo from the IP; None = off
        self.external_url = config.external_url.rstrip("/")
        self.server_ext = server_ext(config.external_url, config.gdpr.host_vendor_id, config.datacenter)
        self.generate_bid_id = config.generate_bid_id  # PBS-Go's host key
        parts = urllib.parse.urlsplit(cache.public_url)
        self.cache_host = parts.netloc
        self._default_cache_ttl = cache.ttl(config.cache.default_ttl_seconds + CACHE_TTL_BONUS_S)
        self.cache_path = parts.path
        self.counts = AuctionMetrics(metrics)
        self._module_call = self.counts.module_call  # made once: a bound method read per request is a generic lookup
        self.bid_rules = validation.RulesCache(config.validations)  # effective validations per account
        self.category_tables = CategoryTables.load()  # PBS-Go's static/category-mapping, read once
        self.validation_counts = validation.ValidationCounts(metrics)
        hooks = config.hooks
        self.hooks: HookRuntime | None = (
            HookRuntime(True, hooks.modules, hooks.host_execution_plan, hooks.default_account_execution_plan)
            if hooks.enabled
            else None
        )
        self.adapters: dict[str, Adapter] = {}
        for code, bidder in registry.bidders.items():
            if bidder.disabled:
                continue
            try:
                self.adapters[code] = build_adapter(bidder.adapter, self._adapter_config(bidder))
            except UnknownAdapter:
                log.warning("bidder %s has no adapter implementation; it cannot bid", code)
            except ValueError as exc:  # start-up reports it first (cli.runtime_problems)
                log.error("bidder %s cannot be built (%s); it cannot bid", code, exc)

    def _adapter_config(self, bidder: Bidder) -> AdapterConfig:
        """What an adapter is built with: its endpoint, its definition's ``extra_info`` and the host
        facts some adapters send along (the keys PBS-Go's adapter builders get)."""
        code = bidder.code
        endpoint = bidder.endpoint
        host = self.config.adapters.get(code)
        extra: dict[str, Any] = {
            "external_url": self.external_url,
            "pbs_version": __version__,
            "gvl_id": self.config.gdpr.host_vendor_id,
            "datacenter": self.config.datacenter,
            "extra_info": bidder.extra_info,
            "platform_id": (host.platform_id if host is not None else "") or bidder.platform_id,
            "app_secret": host.app_secret if host is not None else "",
        }
        if host is not None and host.xapi.username:
            xapi = host.xapi
            extra["xapi"] = {"username": xapi.username, "password": xapi.password, "tracker": xapi.tracker}
        return AdapterConfig(code, endpoint, extra)

    def tmax_ms(self, requested: Any) -> int:
        """``tmax`` within ``auction_timeouts_ms``: absent or 0 -> default, above max -> max."""
        limits = self.config.auction_timeouts_ms
        if not isinstance(requested, int) or requested <= 0:
            return limits.default
        return min(requested, limits.max)

    def hook_executor(self, endpoint: str) -> HookExecutor | None:
        """A request's hooks, with the host's plans until its account is known; None when hooks are off."""
        runtime = self.hooks
        if runtime is None:
            return None
        return HookExecutor(endpoint, runtime.entry, self._module_call, self.rand)

    def _account_hooks(self, hooks: HookExecutor, account: Account) -> HookExecutor | None:
        """The request's hooks given its account's plans; None when no hook runs or ran (inline in
        :meth:`run`, where an auction's account is read: its code is cold there)."""
        return hooks if hooks.for_account(self.hooks, account.id, account.settings.hooks) else None  # type: ignore[arg-type]

    async def run(
        self,
        body: Any,
        http: HttpContext,
        started: float | None = None,
        *,
        details: bool = False,
        hooks: HookExecutor | None = None,
    ) -> AuctionResult:
        """One /openrtb2/auction auction; raises AuctionRefused (and HookRejected). ``started`` is
        ``loop.time()`` at arrival; ``details``: collect what the analytics record tells (bids, bidder
        outcomes); ``hooks``: the request's, from :meth:`hook_executor`."""
        start = asyncio.get_running_loop().time() if started is None else started
        if body is None:  # PBS-Go decodes null as an empty request
            body = {}
        if not isinstance(body, dict):
            text = body_syntax_error(orjson.dumps(body)) or "request body must be a JSON object"
            raise AuctionRefused(400, f"Invalid request: {text}\n", "badinput")
        try:
            problem = imp_ext_prebid_error(body)  # PBS-Go's parseImpInfo: before stored data
            if problem is not None:
                raise RequestError(problem)
            warnings: list[Message] = []  # the profiles' debug warnings
            echo = echo_refs(body)  # PBS-Go's echovideoattrs: the imps asking for it (usually none)
            stored_imps: dict[int, Any] | None = {} if echo else None
            request = await self._merged(body, warnings, stored_imps)
            account: Account | None = None  # read here for the hooks: execute reads it no more
            if hooks is not None:
                account = await self._account(_account_id(request))
                if not hooks.for_account(self.hooks, account.id, account.settings.hooks):  # type: ignore[arg-type]
                    hooks = None  # no hook runs or ran
                if hooks is not None and _RAW_AUCTION_REQUEST in hooks.stages:
                    changed = await hookpoints.raw_auction_request(hooks, body)
                    if changed is not body:  # stored requests merged again into what the hooks left
                        account = None  # then read from the request they make
                        warnings = []
                        stored_imps = {} if echo else None
                        request = await self._merged(changed, warnings, stored_imps)
        except RequestError as exc:
            raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        except StoredDataUnavailable as exc:
            raise AuctionRefused(503, str(exc), "err") from None
        video_attrs = stored_video_attrs(echo, request, stored_imps) if stored_imps else None
        return await self.execute(
            request, http, start, details=details, hooks=hooks, warnings=warnings, video_attrs=video_attrs,
            account=account,
        )

    async def _merged(
        self, body: dict[str, Any], warnings: list[Message], stored_imps: dict[int, Any] | None = None
    ) -> dict[str, Any]:
        """The body with its stored request and imps merged in (the parsed stored imps into
        ``stored_imps`` when given), then merged into the host's default request (PBS-Go's
        processStoredRequests order; the body's own values win throughout), then its profiles
        (PBS-Java's ProfilesProcessor, after its StoredRequestProcessor), whose debug warnings go to
        ``warnings``."""
        request = await merge_stored(body, self.stored, STORED_FETCH_TIMEOUT_S, stored_imps)
        if self.default_request is not None:
            request = merge_patch(self.default_request, request)
        wanted = profile_ids(request)
        if wanted is None:
            return request
        account_id = _account_id(request)
        if account_id == UNKNOWN_ACCOUNT:  # none yet (a profile may name it): the defaults, as PBS-Java
            account = self.accounts.defaults
        else:
            account = (await self._account(account_id)).settings
        host_ms = self.config.auction.profiles.timeout_ms
        settings = profile_settings(account.auction.profiles, account.debug_allow, request, host_timeout_ms=host_ms)
        timeout_s = fetch_timeout_s(settings, request.get("tmax"), self.config.auction_timeouts_ms.max)
        request, shown = await apply_profiles(request, wanted, self.stored, settings, timeout_s)
        warnings.extend(shown)
        return request

    async def execute(
        self,
        request: dict[str, Any],
        http: HttpContext,
        start: float,
        *,
        amp_budget_ms: int | None = None,
        warnings: list[Message] | None = None,
        details: bool = False,
        query: Mapping[str, str] | None = None,
        prepared: PreparedRequest | None = None,
        page: AmpPage | None = None,
        hooks: HookExecutor | None = None,
        video_attrs: dict[str, Any] | None = None,
        account: Account | None = None,
    ) -> AuctionResult:
        """The auction of a resolved request (stored request already merged; ``video_attrs``: the
        stored imps' video echoed in bids, :mod:`hbserver.auction.request.echo_video`).

        ``/openrtb2/auction`` holds ``tmax`` within ``auction_timeouts_ms``; AMP passes its own
        budget (``amp_budget_ms``: the response must leave by ``start`` + budget) and becomes an
        ``amp`` auction (``hb_env=amp``, the AMP entry point for adapters). With ``prepared`` (from
        :meth:`prepare`) ``request`` and ``warnings`` are ignored: validation was done once for all, and
        ``page`` (an AMP ``curl`` and its host) is this auction's ``site.page`` and ``site.domain``.
        ``account``: the request's, read by :meth:`run` (``hooks`` set for it; validation keeps the publisher).
        """
        amp = amp_budget_ms is not None
        if hooks is not None and prepared is not None:  # a call plan has no bidder stages: the full path
            hooks = self._account_hooks(hooks, await self._account(prepared.account_id))
        if prepared is not None and amp_budget_ms is not None and hooks is None and not http.debug_override:
            planned = await self._execute_planned(prepared, http, start, amp_budget_ms, details, query, page)
            if planned is not None:
                return planned
        validated, tmax, stored_responses = await self._resolve(request, http, amp_budget_ms, warnings, prepared, page)
        if video_attrs is not None:
            stored_responses.video_attrs = video_attrs
        request = validated.request
        deadline = start + tmax / 1000
        if account is None:
            account = await self._account(_account_id(request))
            if hooks is not None:
                hooks = self._account_hooks(hooks, account)
        geo = self._geo_for(account)
        if geo is not None:  # before floors and privacy, which read device.geo
            request = validated.request = geo.fill(request)
        validated = self._for_account(validated, http, account, amp)
        request = validated.request
        if hooks is not None and _PROCESSED_AUCTION_REQUEST in hooks.stages:
            validated = await self._processed_hooks(hooks, validated, amp)
            request = validated.request
        request_type = "amp" if amp else _request_type(request)
        collected = AuctionDetails() if details else None
        response, bids, amp_targeting = await self._auction(
            request, validated, stored_responses, account, http, deadline, tmax, request_type, collected, query,
            hooks=hooks,
        )  # fmt: skip
        return AuctionResult(
            response, account.id, request_type, list(validated.bidders), bids, collected, amp_targeting,
            account.activities if account.activities.any() else None, hooks,
        )  # fmt: skip

    async def _resolve(
        self,
        request: dict[str, Any],
        http: HttpContext,
        amp_budget_ms: int | None,
        warnings: list[Message] | None,
        prepared: PreparedRequest | None,
        page: AmpPage | None,
    ) -> tuple[Validated, int, StoredResponses]:
        """The request validated (or a prepared one instantiated), completed (tids, ``tmax``; geo once
        the account is known: :meth:`_geo_for`) and its stored responses loaded; raises AuctionRefused."""
        try:
            if prepared is not None:
                validated = prepared.instantiate()
                request = validated.request
                if page is not None:
                    request = with_page(request, page.url, page.host)
                request = validated.request = _with_http_fields(request, http)
            else:
                validated = self.validate(request, http, amp=amp_budget_ms is not None, warnings=warnings)
                request = validated.request
            apply_tids(request, self.config.auto_gen_source_tid)
            tmax = amp_budget_ms if amp_budget_ms is not None else self.tmax_ms(request.get("tmax"))
            request["tmax"] = tmax  # the top level is our own copy (_with_http_fields)
            if refers_to_stored_responses(request):
                stored_responses = await load_stored_responses(
                    request, validated.imp_bidders, self.stored, STORED_FETCH_TIMEOUT_S
                )
            else:
                stored_responses = StoredResponses()
        except RequestError as exc:
            raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        except StoredDataUnavailable as exc:
            raise AuctionRefused(503, str(exc), "err") from None
        return validated, tmax, stored_responses

    def _for_account(self, validated: Validated, http: HttpContext, account: Account, amp: bool) -> Validated:
        """What the account's settings change in the validated request: its default integration, its
        impression limit, the Privacy Sandbox headers it takes."""
        request = validated.request
        if not amp:  # PBS-Go's setIntegrationType: /openrtb2/auction only
            integration = account_integration(account.settings)
            if integration:
                validated.request = with_integration(request, integration)
        limit = account.settings.auction.impression_limit
        if limit and len(validated.request["imp"]) > limit:
            validated = self._limited(validated, limit, amp)
        if (http.topics or http.cdep) and _sandbox_applies(http, account):
            _apply_sandbox(validated, http, account, amp)
        return validated

    def _limited(self, validated: Validated, limit: int, amp: bool) -> Validated:
        """PBS-Java's account ``auction.impression_limit``: only the first ``limit`` imps go on (the
        request is validated again without the others: its warnings are those of the imps kept), with
        PBS-Java's warning."""
        request = {**validated.request, "imp": validated.request["imp"][:limit]}
        try:
            again = self.validate(request, None, amp=amp)
        except RequestError as exc:
            raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        again.warnings.append(Message(GENERIC_WARNING_CODE, (
            f"Only first {limit} impressions were kept due to the limit, "
            "all the subsequent impressions have been dropped for the auction"
        )))  # fmt: skip
        self.counts.imps_dropped(len(validated.request["imp"]) - limit)
        return again

    async def _processed_hooks(self, hooks: HookExecutor, validated: Validated, amp: bool) -> Validated:
        """The validated request through the hooks; what they changed is validated again (the bidders
        of its imps may be others now)."""
        changed = await hookpoints.processed_auction_request(hooks, validated.request)
        if changed is validated.request:
            return validated
        try:
            again = self.validate(changed, None, amp=amp)
        except RequestError as exc:
            raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        again.warnings = validated.warnings
        return again

    async def _execute_planned(
        self,
        prepared: PreparedRequest,
        http: HttpContext,
        start: float,
        budget_ms: int,
        details: bool,
        query: Mapping[str, str] | None,
        page: AmpPage | None,
    ) -> AuctionResult | None:
        """A prepared AMP request's auction on its call plan; None when it takes the full path. A planned
        auction has no stored responses and no error before the account."""
        account = await self._account(prepared.account_id)
        plan, values = self._plan_for(prepared, http, account, budget_ms, page)
        if plan is None:
            return None
        request = plan.request.render(values)
        validated = prepared.shared(request)
        collected = AuctionDetails() if details else None
        response, bids, amp_targeting = await self._auction(
            request, validated, StoredResponses(), account, http, start + budget_ms / 1000, budget_ms, "amp",
            collected, query, (plan, values),
        )  # fmt: skip
        return AuctionResult(
            response, account.id, "amp", list(validated.bidders), bids, collected, amp_targeting,
            account.activities if account.activities.any() else None,
        )

    def _geo_for(self, account: Account) -> GeoLookup | None:
        """The host's geo lookup for ``account``'s requests, None when there is none or the account's
        PBS-Java ``settings.geo_lookup`` is false (GeoLocationServiceWrapper.lookup; unset follows the host)."""
        geo = self.geo
        if geo is not None and account.settings.settings.geo_lookup is False:
            return None
        return geo

    async def _account(self, account_id: str) -> Account:
        try:  # a cached account (or cached refusal) costs no coroutine
            return self.accounts.cached(account_id) or await self.accounts.load(account_id)
        except AccountError as exc:
            metric = {"disabled": "blockedapp", "malformed": "acctconfigerr"}.get(exc.reason, "badinput")
            # PBS-Go's auction and AMP endpoints end each "Invalid request: ..." line with a newline
            raise AuctionRefused(exc.status, exc.message + "\n", metric) from None

    def validate(
        self,
        request: dict[str, Any],
        http: HttpContext | None,
        *,
        amp: bool = False,
        warnings: list[Message] | None = None,
    ) -> Validated:
        """PBS-Go's checks of a resolved request, in its order; raises RequestError. ``warnings`` go
        first in the result's. ``http`` None leaves the HTTP fields to the caller (:meth:`prepare`)."""
        type_problem = request_type_error(request)  # PBS-Go's typed unmarshal comes first
        if type_problem is not None:
            raise RequestError(type_problem)
        request = upconvert(request)
        if http is not None:
            request = _with_http_fields(request, http)
        if not amp:  # PBS-Go's AMP endpoint does not size interstitials
            _size_interstitials(request)
        validated = validate_request(request, self.registry, self.check_params)
        if self.blocked_apps:
            _refuse_blocked_app(request, self.blocked_apps)
        if warnings:
            validated.warnings[:0] = warnings
        validated.request = _checked_us_privacy(validated.request, validated.warnings)
        return validated

    def prepare(
        self, request: dict[str, Any], warnings: list[Message], *, fresh_id: bool = False
    ) -> PreparedRequest | None:
        """An AMP request validated once for every auction of the same slot and query (see
        :mod:`hbserver.auction.request.prepared`; the caller checks :func:`http_fields_settled` first). Raises
        RequestError as :meth:`execute` would; None when the request cannot be kept."""
        validated = self.validate(request, None, amp=True, warnings=warnings)
        return PreparedRequest.of(validated, fresh_id, _account_id(validated.request))

    async def _auction(
        self,
        request: dict[str, Any],
        validated: Validated,
        stored_responses: StoredResponses,
        account: Account,
        http: HttpContext,
        deadline: float,
        tmax: int,
        request_type: str,
        details: AuctionDetails | None = None,
        query: Mapping[str, str] | None = None,
        planned: tuple[CallPlan, list[Any]] | None = None,
        hooks: HookExecutor | None = None,
    ) -> tuple[dict[str, Any], int, dict[str, str] | None]:
        """The response, its number of bids, and for an AMP auction without debug or ad-server targeting
        the answer's targeting (the response is then only its ``ext``: :func:`_amp_response`).

        ``planned``: a call plan and this auction's values for it (:meth:`_plan_for`); ``request`` is then
        the plan's, floors already resolved, and the bidder calls are spliced, not built. The stages, in
        order: set-up, bidder requests (privacy), bidder calls, bids accepted, floors and DSA enforced,
        winners chosen, bids cached and targeted, the answer."""
        run = self._begin(request, validated, stored_responses, account, http, deadline, tmax, request_type,
                          details, planned)  # fmt: skip
        run.hooks = hooks
        if stored_responses.auction:
            self._stored_auction(run)
        else:
            bidder_requests = self._bidder_requests(run)
            outcomes = await self._call_bidders(run, bidder_requests)
            for outcome in outcomes:
                self._accept(run, outcome)
        self._check_bids(run)
        if hooks is not None and (hooks.rejected_bids or _ALL_PROCESSED_BID_RESPONSES in hooks.stages):
            run.bids = await hookpoints.all_processed_bids(hooks, run.bids, run.request, run.nonbids, run.errors)
        pods = read_pods(run.request["imp"])  # None without pods: a look at each video's podid and poddur
        if pods is not None:
            self._fill_pods(run, pods)
        results = self._choose_winners(run)
        if run.pods is not None and results.dropped:  # the account's bid limit (multibid) took some out
            run.pods.drop(results.dropped)
        if run.setup.targeting is not None:
            await self._cache_and_target(run, results)
        answer = self._answer(run, query)
        if details is not None:  # what PBS-Go's analytics objects carry (hbserver.analytics.pbs)
            _fill_details(details, run, answer[0], answer[2])
        if hooks is not None:
            debug_allowed = run.account.settings.debug_allow or run.http.debug_override
            if _AUCTION_RESPONSE in hooks.stages:
                response = await hookpoints.auction_response(hooks, answer[0], run.request, debug_allowed)
            else:  # only the outcomes so far to show (auction_response's, without a stage to run)
                response = hookpoints.with_modules(answer[0], hooks, run.request, debug_allowed)
            return response, answer[1], answer[2]
        return answer

    def _begin(
        self,
        request: dict[str, Any],
        validated: Validated,
        stored_responses: StoredResponses,
        account: Account,
        http: HttpContext,
        deadline: float,
        tmax: int,
        request_type: str,
        details: AuctionDetails | None,
        planned: tuple[CallPlan, list[Any]] | None,
    ) -> _AuctionRun:
        """Stage 1: the auction's set-up (the plan's, else built), its counts, and its floors resolved."""
        if planned is not None:
            setup = planned[0].setup
        else:
            try:
                setup = self._setup(request, validated, account, request_type, http.debug_override)
            except RequestError as exc:
                raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        # seat-non-bid: in the response with returnallbidstatus, in the analytics record when it is on
        nonbids = SeatNonBids() if setup.return_all or details is not None else None
        counts = self.counts
        counts.imps(request["imp"])
        if setup.debug:
            counts.debug_request(account.id)
        run = _AuctionRun(request, validated, stored_responses, account, http, deadline, tmax, request_type,
                          details, planned, setup, nonbids, setup.new_warnings())  # fmt: skip
        if setup.floors_on:
            if planned is None:
                floor_settings = account.settings.price_floors
                run.request = self._resolve_floors(request, account, floor_settings, setup.converter, run.errors)
            else:
                for text in planned[0].floor_errors:
                    run.errors.setdefault("prebid", []).append({"code": FLOOR_ERROR_CODE, "message": text})
        if stored_responses.auction or stored_responses.by_bidder:
            counts.stored_responses(account.id)
        return run

    def _stored_auction(self, run: _AuctionRun) -> None:
        """The bids of a stored auction response stand for the bidders' (no privacy is read)."""
        run.bids, stored_errors = _stored_auction_bids(run.stored_responses.auction, run.validated)
        if run.details is not None:
            run.details.stored_bids = run.bids
        if stored_errors:
            run.errors["prebid"] = [e.as_json() for e in stored_errors]

    def _bidder_requests(self, run: _AuctionRun) -> list[BidderRequest] | None:
        """Stage 2: privacy read and enforced, each bidder's request (None on a plan: its calls are
        spliced); the bidders privacy keeps out are warned about and recorded."""
        request, validated, account, setup = run.request, run.validated, run.account, run.setup
        bidder_requests: list[BidderRequest] | None = None
        blocked: Mapping[str, BidderPrivacy]
        notices: Mapping[str, Sequence[str]]
        if run.planned is None:
            try:
                privacy = read_privacy(request, self.config, account, run.request_type, self.gvl)
            except RegsError as exc:
                raise AuctionRefused(400, refusal_text(RequestError(str(exc))), "badinput") from None
            floor_settings = account.settings.price_floors
            bidder_requests, blocked, notices = self._split(
                request, validated, run.http.uids, privacy, account, setup.adjustments, setup.alt_codes,
                setup.multibid, setup.floors_on and floor_settings.adjust_for_bid_adjustment,
            )  # fmt: skip
        else:
            plan = run.planned[0]
            privacy, blocked, notices = plan.privacy, plan.blocked, plan.notices
        self.counts.privacy(privacy)
        run.gdpr_enforced = privacy.gdpr_enforced
        warnings = run.warnings
        for code, text in privacy.regs.warnings:
            warnings["general"].append(Message(code, text))
        self._note_blocked(run, blocked)
        if run.details is not None:
            run.details.privacy = privacy
            run.details.privacy_blocked = blocked
        for name, texts in notices.items():
            warnings.setdefault(name, []).extend(Message(WarningCode.UNKNOWN, text) for text in texts)
        return bidder_requests

    def _note_blocked(self, run: _AuctionRun, blocked: Mapping[str, BidderPrivacy]) -> None:
        """A warning (and a seat-non-bid) for each bidder privacy keeps out; TCF blocks counted."""
        bidders = run.validated.bidders
        for name, done in blocked.items():
            if done.blocked == BLOCKED_TCF:
                self.counts.gdpr_blocked(bidders[name].bidder.code)
            # PBS-Go names the core bidder in this warning
            run.warnings.setdefault(name, []).append(
                Message(
                    WarningCode.BIDDER_BLOCKED_BY_PRIVACY,
                    f'bidder "{bidders[name].bidder.code}" blocked by privacy settings',
                )
            )
        if run.nonbids is not None and blocked:
            for name in blocked:
                imp_ids = _imp_ids_of(run.request, run.validated, name)
                run.nonbids.add_imps(name, imp_ids, NonBidReason.REQUEST_BLOCKED_PRIVACY)

    async def _call_bidders(
        self, run: _AuctionRun, bidder_requests: list[BidderRequest] | None
    ) -> list[BidderOutcome]:
        """Stage 3: every bidder called at once (a plan's calls spliced), each outcome once all are in."""
        setup = run.setup
        bidder_deadline = run.deadline - (self.config.cache.expected_millis / 1000 if setup.caching else 0)
        extra_headers = {"Sec-GPC": "1"} if run.http.gpc == "1" else {}
        entry_point = "openrtb2-amp" if run.request_type == "amp" else "openrtb2-auction"
        client = self.http
        now = asyncio.get_running_loop().time()
        bidder_tmax = max(0, int((bidder_deadline - now) * 1000))
        outcomes: list[BidderOutcome] = []
        policy = self.tmax_policy
        if run.planned is not None:
            plan, values = run.planned
            values[SLOT_TMAX] = bidder_tmax
            # golike adapters leave out a tmax of 0: no placeholder stands for it; a tmax policy tells
            # each bidder its own
            if bidder_tmax >= 1 and policy is None:
                outcomes = start_planned(plan, values, client, bidder_deadline, extra_headers, now)
            else:
                bidder_requests = [bidder.bidder_request(values) for bidder in plan.bidders]
        if run.hooks is not None and bidder_requests:
            kept = hookpoints.bidder_requests(run.hooks, bidder_requests, run.warnings)
            bidder_requests = kept if type(kept) is list else await kept  # type: ignore[misc]  # awaited only if need be
            now = asyncio.get_running_loop().time()
            bidder_tmax = max(0, int((bidder_deadline - now) * 1000))
        if bidder_requests is not None:
            for bidder_request in bidder_requests:
                call_deadline = bidder_deadline
                if policy is None:
                    bidder_request.request["tmax"] = bidder_tmax
                else:
                    call_deadline = self._bidder_timing(run, policy, bidder_request, bidder_deadline, now)
                    if call_deadline is None:
                        outcomes.append(_too_late(bidder_request, now))
                        continue
                outcome = self._start_bidder(
                    bidder_request, run.stored_responses, setup.converter, client, call_deadline, extra_headers,
                    entry_point, now,
                )  # fmt: skip
                outcomes.append(outcome)
        for name in await finish_bidders(outcomes, client, _secondary_bidders(run)):
            run.warnings.setdefault(name, []).append(Message(SECONDARY_TIMEOUT_CODE, SECONDARY_TIMEOUT_TEXT))
        notify_timeouts(outcomes, client, self.counts.timeout_notice)
        if run.hooks is not None:
            pending = hookpoints.raw_bidder_responses(run.hooks, outcomes, run.warnings)
            if pending is not None:  # a hook of the stage to await
                await pending
        return outcomes

    @staticmethod
    def _bidder_timing(
        run: _AuctionRun, policy: TmaxPolicy, bidder_request: BidderRequest, bidder_deadline: float, now: float
    ) -> float | None:
        """Under a tmax policy: the bidder's request told its tmax, and when its call is given up;
        None when too little time is left to call it (PBS-Go's tmax_adjustments)."""
        start = run.deadline - run.tmax / 1000
        if policy.too_late((bidder_deadline - now) * 1000):
            return None
        code = bidder_request.resolved.bidder.code
        bidder_request.request["tmax"] = policy.told(code, (bidder_deadline - start) * 1000, (now - start) * 1000)
        return policy.call_deadline(bidder_deadline, now)

    def _accept(self, run: _AuctionRun, outcome: BidderOutcome) -> None:
        """Stage 4: one bidder's bids checked into the auction; its errors, timing and debug calls kept."""
        setup, details = run.setup, run.details
        name = outcome.bidder.name
        # PBS-Go's BidderCoreName: a hard alias (adform of adf) is its own core bidder
        adapter_code = outcome.bidder.resolved.bidder.code
        run.response_times[name] = outcome.elapsed_ms
        for response in outcome.responses:
            if response.fledge_auction_configs:
                _collect_fledge(run, name, response.fledge_auction_configs)
        seen: list[AuctionBid | RejectedBid] | None = [] if details is not None else None
        bids, bid_errors = accept_bids(
            name, adapter_code, outcome.responses, setup.imp_ids, setup.currency, setup.converter.convert,
            setup.adjustments, setup.debug, seen, setup.alt_codes, run.warnings,
        )  # fmt: skip
        run.bids.extend(bids)
        if run.nonbids is not None:
            run.nonbids.add_outcome(outcome, bids)
        bidder_errors = outcome.errors + bid_errors
        self.counts.bidder(outcome, bids, bidder_errors, "app" in run.request)  # by registry code
        if bidder_errors:
            run.errors[name] = [e.as_json() for e in bidder_errors]
        if setup.debug and outcome.calls:
            run.httpcalls[name] = [call.as_debug() for call in outcome.calls]
        if seen is not None and details is not None:
            details.bidders.append((outcome, bids, bidder_errors, seen))

    def _enforce_floors(self, run: _AuctionRun) -> None:
        """Stage 5a: bids under their imp's floor rejected (the plan's enforcement when planned)."""
        enforcement = (
            run.planned[0].floor_enforcement if run.planned is not None else None
        ) or FloorEnforcement(run.request, run.account.settings.price_floors, run.setup.converter.convert)
        bid_floors = run.bid_floors = enforcement.enforce(run.bids, self.rand)
        run.bids = bid_floors.kept
        for rejection in bid_floors.rejected:
            warning = rejection.warning()
            run.warnings.setdefault("prebid", []).append(Message(WarningCode.FLOOR_BID_REJECTED, warning))
            if run.nonbids is not None:
                run.nonbids.add_bid(rejection.bid, rejection.non_bid_code)
            if run.details is not None:
                run.details.late_rejections[id(rejection.bid)] = warning
        for text in bid_floors.errors:
            run.errors.setdefault("prebid", []).append({"code": FLOOR_ERROR_CODE, "message": text})

    def _check_bids(self, run: _AuctionRun) -> None:
        """Stage 5: floors enforced, the category rules, DSA, the bid validations (PBS-Go's order)."""
        returned = bool(run.bids)  # PBS-Go's anyBidsReturned
        if run.setup.floors_on and run.bids:
            self._enforce_floors(run)
        targeting = run.setup.targeting
        if returned and targeting is not None and targeting.brand_category is not None:
            self._map_categories(run)
        if run.bids:
            self._enforce_dsa(run)
        rules = self.bid_rules.of(run.account.settings.validations) if run.bids else None
        if rules is not None:  # None: every validation is skip (the default)
            self._validate_bids(run, rules)

    def _map_categories(self, run: _AuctionRun) -> None:
        """Stage 5b: includebrandcategory's category rules (:mod:`hbserver.auction.response.category`), in
        PBS-Go's place (after floors, before the bid checks of its makeBid): the rejections in
        ``ext.errors.prebid``, seat-non-bid 303 for a bid without a category; an unknown primary ad
        server fails the auction (PBS-Go's 500)."""
        options = run.setup.targeting
        assert options is not None and options.brand_category is not None and options.category_buckets is not None
        try:
            result = map_categories(run.bids, options.brand_category, self.category_tables, options.category_buckets)
        except CategoryConfigError as exc:
            message = f"Critical error while running the auction: Error in category mapping : {exc}"
            raise AuctionRefused(500, message, "err") from None
        run.bids, run.cat_dur = result.kept, result.cat_dur
        for rejection in result.rejected:
            message = rejection.message
            run.errors.setdefault("prebid", []).append({"code": int(ErrorCode.UNKNOWN), "message": message})
            if run.nonbids is not None and rejection.non_bid_code is not None:
                run.nonbids.add_bid(rejection.bid, rejection.non_bid_code)
            if run.details is not None:
                run.details.late_rejections[id(rejection.bid)] = message

    def _fill_pods(self, run: _AuctionRun, pods: list[Pod]) -> None:
        """Stage 5e: ORTB 2.6 pods filled (:mod:`hbserver.auction.response.pods`): bids breaking a pod's
        rules rejected (warnings, seat-non-bid 301 below ``mincpmpersec``, else 300), each pod's best set
        of bids kept for its slots' targeting and ``ext.prebid.pods``."""
        targeting = run.setup.targeting
        brand = targeting.brand_category if targeting is not None else None
        iab_cats = brand is None or not brand.with_category  # else the category rules kept one per category
        result = fill_pods(run.bids, pods, run.setup.converter.convert, run.setup.currency, iab_cats)
        run.bids, run.pods = result.kept, result
        for rejection in result.rejected:
            message = rejection.message
            code = WarningCode.FLOOR_BID_REJECTED if rejection.non_bid_code == BELOW_FLOOR else WarningCode.UNKNOWN
            run.warnings.setdefault("prebid", []).append(Message(code, message))
            if run.nonbids is not None:
                run.nonbids.add_bid(rejection.bid, rejection.non_bid_code)
            if run.details is not None:
                run.details.late_rejections[id(rejection.bid)] = message

    def _enforce_dsa(self, run: _AuctionRun) -> None:
        """Stage 5c: bids without the DSA transparency the request requires rejected."""
        req_dsa = dsa.effective(run.request, run.account.settings.privacy.dsa, run.gdpr_enforced)
        run.bids, dsa_rejected = dsa.enforce(run.bids, req_dsa)
        for rejection in dsa_rejected:
            run.warnings.setdefault(rejection.bid.bidder, []).append(rejection.warning)
            self.counts.dsa_rejected(rejection.bid.adapter)
            if run.nonbids is not None:
                run.nonbids.add_bid(rejection.bid, NonBidReason.RESPONSE_REJECTED_GENERAL)  # PBS-Java: 305
            if run.details is not None:
                run.details.late_rejections[id(rejection.bid)] = rejection.warning.message

    def _validate_bids(self, run: _AuctionRun, rules: validation.Rules) -> None:
        """Stage 5d: the bid validations (PBS-Go makeBid, after DSA): errors under the seat, counted; an
        enforced one drops the bid (seat-non-bid 351, 352 or 350)."""
        run.bids, findings = validation.validate(run.bids, validation.imps_by_id(run.request), rules)
        for finding in findings:
            bid = finding.bid
            run.errors.setdefault(bid.bidder, []).append(finding.as_json())
            self.validation_counts.record(finding, run.account.id)
            if finding.mode == validation.ENFORCE:
                if run.nonbids is not None:
                    run.nonbids.add_bid(bid, finding.non_bid_code)
                if run.details is not None:
                    run.details.late_rejections[id(bid)] = finding.message

    def _choose_winners(self, run: _AuctionRun) -> AuctionResults:
        """Stage 6: each imp's winner (multibid and the bid limit only with targeting, as PBS-Go); VAST
        impression tracking added to the bids when events are on."""
        setup = run.setup
        if setup.targeting_conf is not None:
            prefer_deals = setup.targeting is not None and setup.targeting.prefer_deals  # the account's too
            results = run_auction(run.bids, prefer_deals, setup.multibid)
            run.bids = results.kept(run.bids)
        else:
            results = run_auction(run.bids, False)
        if run.details is not None:
            run.details.currency, run.details.results = setup.currency, results
        if self.generate_bid_id:
            generate_bid_ids(run.bids, new_uuid)
        run.timestamp = _auction_timestamp(setup.prebid)
        run.events = self._event_urls(run.account, setup.prebid, run.timestamp)
        if run.events is not None and run.bids:
            self._track_vast(run.bids, run.events)
        return results

    async def _cache_and_target(self, run: _AuctionRun, results: AuctionResults) -> None:
        """Stage 7: the bids to cache written to the cache store, then the targeting keys set."""
        setup = run.setup
        options = setup.targeting
        assert options is not None
        if setup.caching and run.bids:
            cache_options = setup.cache_options
            if cache_options.winning_only:
                to_cache = [result.winner for result in results.values() if result.winner is not None]
            else:
                to_cache = bids_to_cache(results, options, run.bids)
            if run.pods is not None:
                to_cache = with_pod_bids(to_cache, run.pods)
            custom = None
            if run.cat_dur:  # PBS-Go's competitive exclusion keys
                custom = custom_cache_keys(to_cache, run.cat_dur, cache_options.bids, new_uuid())
                for text in custom.errors:
                    run.errors.setdefault("prebid", []).append({"code": int(ErrorCode.UNKNOWN), "message": text})
            loop = asyncio.get_running_loop()
            cache_started = loop.time()
            cache_error = await self._cache_bids(
                to_cache, run.request, cache_options, run.deadline, run.events, run.account.settings.cache_ttl, custom
            )
            self.counts.cache_write(loop.time() - cache_started, not cache_error)
            if cache_error:
                run.errors.setdefault("prebid", []).append({"code": int(ErrorCode.UNKNOWN), "message": cache_error})
        apply_targeting(results, options, self.cache_host, self.cache_path, cat_dur=run.cat_dur)
        if run.pods is not None:
            apply_pod_targeting(run.pods, run.bids, options, self.cache_host, self.cache_path, run.cat_dur)
        if options.top_n:
            rank_bids(run.bids, run.pods, options, self.cache_host, self.cache_path, run.cat_dur)

    def _answer(
        self, run: _AuctionRun, query: Mapping[str, str] | None
    ) -> tuple[dict[str, Any], int, dict[str, str] | None]:
        """Stage 8: the response (for a plain AMP answer, only its errors and warnings, and the targeting)."""
        setup = run.setup
        prebid = setup.prebid
        if (
            run.request_type == "amp"
            and not setup.debug
            and not wants_ad_server_targeting(prebid)
            and (run.hooks is None or _AUCTION_RESPONSE not in run.hooks.stages)
        ):
            # the AMP answer shows only the cached bids' targeting, the errors and the warnings
            return _amp_response(run.errors, run.warnings), len(run.bids), _amp_targeting(run.bids)
        response = self._response(run)
        if run.pods is not None:
            response["ext"]["prebid"]["pods"] = pods_summary(run.pods)
        nonbids = run.nonbids
        if nonbids:
            if setup.return_all:
                response["ext"]["prebid"]["seatnonbid"] = nonbids.as_json()
            if run.details is not None:
                run.details.seatnonbid = nonbids.as_json()
        if wants_ad_server_targeting(prebid):
            account_keys = setup.account_targeting  # its truncate_target_attr (PBS-Go passes it here too)
            apply_ad_server_targeting(run.request, response, query, account_keys.truncate if account_keys else None)
        return response, len(run.bids), None

    def _plan_for(
        self,
        prepared: PreparedRequest,
        http: HttpContext,
        account: Account,
        budget_ms: int,
        page: AmpPage | None = None,
    ) -> tuple[CallPlan | None, list[Any]]:
        """The call plan for this auction of ``prepared`` and the values it splices in (built on the
        second use of its variant); (None, []) when the auction takes the full path."""
        ua, ip, uids, uid_keys = http.user_agent, http.ip, http.uids, prepared.uid_keys
        if ua and not spliceable(ua):
            return None, []
        if (http.topics or http.cdep) and _sandbox_applies(http, account):
            return None, []  # the signal changes the request: the full path adds it
        found: dict[str, str] | None = None
        geo = self._geo_for(account)
        if geo is not None:  # device.geo follows the address: each place has variants of its own
            found = geo.find(ip) if ip else {}
        kind = 0
        values: list[Any] = [ua or None, ip or None, None, None, None, None]
        if page is not None:
            kind = page.kind
            if kind < 0:
                return None, []
            values[SLOT_PAGE], values[SLOT_DOMAIN] = page.url, page.host
        for uid_key in uid_keys:
            uid = uids.get(uid_key) or None
            if uid is not None and not spliceable(uid):
                return None, []
            values.append(uid)
        rates = self.server_rates() if self.server_rates is not None else None
        key = variant_key(ua, ip, http.dnt, http.gpc, uids, uid_keys, budget_ms, kind, _geo_key(found))
        table = prepared.plans
        known, plan = table.get(key, account, rates)
        if not known:
            if not table.seen_before(key) or not table.may_build(time.monotonic()):
                return None, []
            plan = self._build_plan(prepared, http, account, budget_ms, kind, found)
            table.put(key, account, rates, plan)
        if plan is None:
            return None, []
        if prepared.fresh_id:
            values[SLOT_ID] = new_uuid()
        values.extend(new_uuid() for _ in range(plan.tids))
        return plan, values

    def _plan_geo(
        self, request: dict[str, Any], placeholder_ip: str, found: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """``device.geo`` of a plan run as the full path fills it: the variant's lookup when the
        device's address is the visitor's (a placeholder here), else the stored request's own
        address looked up (or nothing, without one)."""
        geo, device = self.geo, request.get("device")
        if geo is None or found is None:  # no lookup (the host's or the account's choice)
            return request
        if isinstance(device, dict) and placeholder_ip and placeholder_ip in (device.get("ip"), device.get("ipv6")):
            return geo.fill(request, found or {})
        return geo.fill(request)

    def _build_plan(
        self,
        prepared: PreparedRequest,
        http: HttpContext,
        account: Account,
        budget_ms: int,
        page_kind: int,
        found: Mapping[str, str] | None = None,
    ) -> CallPlan | None:
        """Two runs with the two placeholder sets; the plan when they differ only at the placeholders.
        ``found``: the geo lookup's answer for the visitor's address (None: lookups off)."""
        try:
            runs = [
                self._plan_run(prepared, http, account, budget_ms, which, page_kind, found) for which in (0, 1)
            ]
        except (RequestError, RegsError, AuctionRefused):  # the full path says it
            return None
        first, second = runs
        if first is None or second is None or len(first.values) != len(second.values):
            return None
        return build_plan(first, second, len(first.values) - FIXED_SLOTS - len(prepared.uid_keys))

    def _plan_run(
        self,
        prepared: PreparedRequest,
        http: HttpContext,
        account: Account,
        budget_ms: int,
        which: int,
        page_kind: int = 0,
        found: Mapping[str, str] | None = None,
    ) -> PlanRun | None:
        """The pipeline from the HTTP fields to the adapters' calls, as :meth:`execute` and
        :meth:`_auction` run it for an AMP auction, with placeholder set ``which``; None when something
        on the way cannot be planned (a random draw, a missing adapter, an adapter that raised, floors
        rules that read a spliced value)."""
        validated = prepared.instantiate()
        values, placeholders = _placeholders(prepared, http, which, validated.request["id"])
        if page_kind:
            values[SLOT_PAGE], values[SLOT_DOMAIN] = placeholder_page(page_kind, which)
            validated.request = with_page(validated.request, values[SLOT_PAGE], values[SLOT_DOMAIN])
        request = validated.request = _with_http_fields(validated.request, placeholders)
        if found is not None:  # the lookup is on for the account (_plan_for)
            request = validated.request = self._plan_geo(request, placeholders.ip, found)
        tids: list[str] = []
        apply_tids(request, self.config.auto_gen_source_tid, recording(new_uuid, tids))
        request["tmax"] = budget_ms
        setup = self._setup(request, validated, account, "amp")
        converter = setup.converter
        floor_settings = account.settings.price_floors
        floors_on = setup.floors_on
        errors: dict[str, list[dict[str, Any]]] = {}
        if floors_on:
            floored = self._plan_floors(request, account, converter, errors)
            if floored is None:
                return None
            request = floored
        privacy = read_privacy(request, self.config, account, "amp", self.gvl)
        bidder_requests, blocked, notices = self._split(
            request, validated, placeholders.uids, privacy, account, setup.adjustments, setup.alt_codes, setup.multibid,
            floors_on and floor_settings.adjust_for_bid_adjustment,
        )  # fmt: skip
        bidders = self._plan_calls(bidder_requests, converter, http, which)
        if bidders is None:
            return None
        values[SLOT_TMAX] = PLACEHOLDER_TMAX[which]
        values.extend(tids)
        floor_errors = [item["message"] for item in errors.get("prebid", ())]
        enforcement = FloorEnforcement(request, floor_settings, converter.convert) if floors_on else None
        return PlanRun(values, request, setup, enforcement, floor_errors, privacy, blocked, notices, bidders)

    def _plan_floors(
        self, request: dict[str, Any], account: Account, converter: Converter, errors: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any] | None:
        """A plan's request with its floors resolved; None when they could change from one auction of
        the plan to the next (fetched floors, rules on spliced values, a random draw)."""
        floor_settings = account.settings.price_floors
        if floor_settings.use_dynamic_data and floor_settings.fetch.enabled:
            return None  # fetched floors change under the plan
        if floors_read_visitor(request):
            return None  # a rule on the device type or the domain would match the placeholders
        draws: list[int] = []

        def drawn(n: int) -> int:
            draws.append(n)
            return self.rand(n)

        request = self._resolve_floors(request, account, floor_settings, converter, errors, drawn)
        return None if draws else request

    def _plan_calls(
        self, bidder_requests: list[BidderRequest], converter: Converter, http: HttpContext, which: int
    ) -> list[Any] | None:
        """Each bidder's calls as its adapter makes them for placeholder set ``which``; None when one
        cannot be planned (no adapter, an adapter that raised, no call and no error, too many calls)."""
        extra_headers = {"Sec-GPC": "1"} if http.gpc == "1" else {}
        bidders = []
        for bidder_request in bidder_requests:
            bidder = bidder_request.resolved.bidder
            adapter = self.adapters.get(bidder.code) or self.adapters.get(bidder.adapter)
            if adapter is None:
                return None
            bidder_request.request["tmax"] = PLACEHOLDER_TMAX[which]
            info = _request_info(bidder_request, converter, extra_headers, "openrtb2-amp")
            try:
                calls, call_errors = adapter.make_requests(bidder_request.request, info)
            except Exception:  # the full path logs it and answers for the bidder
                return None
            if (not calls and not call_errors) or len(calls) > MAX_CALLS_PER_BIDDER:
                return None
            compress = bidder.endpoint_compression == "gzip"
            bidders.append((bidder_request, adapter, compress, calls, call_errors))
        return bidders

    def _setup(
        self, request: dict[str, Any], validated: Validated, account: Account, request_type: str,
        debug_override: bool = False,
    ) -> AuctionSetup:
        """The auction's set-up (:func:`auction_setup`) with this server's bidders, rates and floors switch."""
        return auction_setup(
            request, validated, account, request_type, self.registry.bidders,
            self.server_rates() if self.server_rates is not None else None, self.config.price_floors.enabled,
            debug_override,
        )  # fmt: skip

    def _split(
        self,
        request: dict[str, Any],
        validated: Validated,
        uids: Mapping[str, str],
        privacy: AuctionPrivacy,
        account: Account,
        adjustments: BidAdjustments | None,
        alt_codes: AlternateBidderCodes,
        multibid: MultiBid,
        adjust_floors: bool,
    ) -> tuple[list[BidderRequest], dict[str, BidderPrivacy], dict[str, list[str]]]:
        """The bidders' requests, the bidders privacy kept out (and why), and the media types their
        capabilities removed (:func:`split_request`); ``adjust_floors``: floors are on and follow the
        bid adjustments (the account's ``price_floors.adjust_for_bid_adjustment``)."""
        blocked: dict[str, BidderPrivacy] = {}
        notices: dict[str, list[str]] = {}
        bidder_data = BidderData.from_request(
            request, validated.aliases, self.config.host_schain_node, account.activities, registry=self.registry
        )
        floor_factor = adjustments.floor_factor if adjust_floors and adjustments is not None else None
        request = dsa.with_default(request, account.settings.privacy.dsa, privacy.gdpr_enforced)
        bidder_requests = split_request(
            request, validated, uids, privacy, blocked, notices, bidder_data=bidder_data,
            bidder_prebid=_bidder_prebid(alt_codes, multibid), floor_factor=floor_factor, server=self.server_ext,
            account_preferred=account_preferred_media_types(account.settings),
        )  # fmt: skip
        return bidder_requests, blocked, notices

    def _resolve_floors(
        self,
        request: dict[str, Any],
        account: Account,
        floor_settings: AccountPriceFloors,
        converter: Any,
        errors: dict[str, list[dict[str, Any]]],
        rand: Callable[[int], int] | None = None,
    ) -> dict[str, Any]:
        """PBS-Go's EnrichWithPriceFloors: each imp's floor resolved (bidfloor/bidfloorcur, imp and request
        ``ext.prebid.floors``); its error texts go to ``ext.errors.prebid`` as PBS-Go's (the "disabled"
        one only when the request itself carries floors)."""
        fetcher = self.floors_fetcher
        fetched = None
        if fetcher is not None and floor_settings.use_dynamic_data and floor_settings.fetch.enabled:
            account_id = account.id

            def fetched(fetch: AccountFloorFetch) -> Fetched:
                data, status = fetcher(account_id, fetch)
                return Fetched(data, status)

        resolution = resolve_floors(request, floor_settings, converter.convert, fetched, rand or self.rand)
        for text in resolution.errors:
            if text == FLOORS_DISABLED and not request_has_floors(request):
                continue
            errors.setdefault("prebid", []).append({"code": FLOOR_ERROR_CODE, "message": text})
        return resolution.request

    def _start_bidder(
        self,
        bidder_request: BidderRequest,
        stored_responses: StoredResponses,
        converter: Any,
        client: BidderClient,
        deadline: float,
        extra_headers: dict[str, str],
        entry_point: str,
        now: float,
    ) -> BidderOutcome:
        bidder = bidder_request.resolved.bidder
        adapter = self.adapters.get(bidder.code) or self.adapters.get(bidder.adapter)
        if adapter is None:
            outcome = BidderOutcome(bidder_request, started=now)
            outcome.errors.append(BidderError(f"bidder {bidder_request.name} has no adapter", ErrorCode.BAD_INPUT))
            return outcome
        stored = stored_responses.by_bidder.get(bidder_request.name)
        if stored:
            return _stored_bidder_outcome(bidder_request, adapter, stored)
        info = _request_info(bidder_request, converter, extra_headers, entry_point)
        compress = bidder.endpoint_compression == "gzip"
        return start_bidder(bidder_request, adapter, info, client, deadline, extra_headers, now, compress)

    def _event_urls(self, account: Account, prebid: dict[str, Any], timestamp: int) -> EventUrls | None:
        """The auction's event URLs when events are on: the account's flag or ``ext.prebid.events``."""
        settings = account.settings
        asked = isinstance(prebid.get("events"), dict)
        if not (settings.events.enabled or asked):
            return None
        by_channel = settings.analytics.auction_events  # PBS-Java's; None (the usual): not applied
        if by_channel is not None and not asked and not channel_allows_events(prebid, by_channel):
            return None
        integration = prebid.get("integration")
        return EventUrls(self.external_url, account.id, timestamp, integration if isinstance(integration, str) else "")

    def _track_vast(self, bids: list[AuctionBid], events: EventUrls) -> None:
        """Insert the impression tracker into each video bid's VAST whose bidder allows it."""
        registry = self.registry
        for bid in bids:
            if bid.bid_type != "video":
                continue
            name = bid.bidder if registry.lookup(bid.bidder) is not None else bid.adapter
            if not registry.vast_modifiable(name):
                continue
            own = bid.bid
            vast = _bid_vast(own)
            if vast is None:
                continue
            bid_id = bid.generated_id or str(own.get("id", ""))
            modified = insert_impression(vast, events.vast_tracker(bid_id, bid.bidder))
            if modified is not None:
                own["adm"] = modified

    async def _cache_bids(
        self,
        bids: list[AuctionBid],
        request: dict[str, Any],
        options: CacheOptions,
        deadline: float,
        events: EventUrls | None = None,
        account_ttls: AccountCacheTtl | None = None,
        custom: CustomKeys | None = None,
    ) -> str:
        """Write ``bids`` to the cache store; sets their cache ids. An error text, or "".

        A bid's TTL: its imp's or its own ``exp``, else the request's ``ttlseconds`` for the kind, else
        the account's ``cache_ttl`` for its media type (PBS-Java's order; PBS-Go adds the minute to it),
        else the host's default."""
        imp_exp = {imp["id"]: imp["exp"] for imp in request["imp"] if "exp" in imp}
        items: list[CacheItem] = []
        slots: list[tuple[AuctionBid, str]] = []
        cache_json = options.bids
        cache_vast = options.vast
        json_default, xml_default, by_type = self._cache_ttls(options, account_ttls)
        dumps = orjson.dumps
        for bid in bids:
            own = bid.bid
            exp_ttl = None
            if imp_exp or "exp" in own:  # the usual bid has neither
                exp_ttl = self._exp_ttl(imp_exp.get(bid.imp_id), own.get("exp"))
            if exp_ttl is not None:
                ttl = exp_ttl
            elif by_type:
                ttl = by_type.get(bid.bid_type, json_default)
            else:
                ttl = json_default
            xml_ttl = xml_default if exp_ttl is None else exp_ttl
            if cache_json:
                if events is not None and bid.bid_type != "video":  # PBS merges the win URL in
                    own["wurl"] = _bid_events(bid, events)["win"]  # our copy; only for the dump
                    cached = dumps(own)
                    del own["wurl"]
                else:
                    cached = dumps(own)
                items.append(CacheItem("json", cached, ttl))
                slots.append((bid, "json"))
            if cache_vast and bid.bid_type == "video":
                vast = _bid_vast(own) or VAST_WRAPPER.format(own.get("nurl") or "")
                key = custom.keys.get(id(bid), "") if custom is not None else ""
                items.append(CacheItem("xml", vast.encode(), xml_ttl, key))
                slots.append((bid, "xml"))
        if not items:
            return ""
        timeout = max(0.001, deadline - asyncio.get_running_loop().time())
        try:
            keys = await self.cache.put_many(items, timeout)
        except CacheStoreError as exc:
            return f"Error sending the request to Prebid Cache: {exc}"
        _set_cache_ids(slots, keys, custom)
        return ""

    def _cache_ttls(
        self, options: CacheOptions, account_ttls: AccountCacheTtl | None
    ) -> tuple[int, int, dict[str, int] | None]:
        """The TTLs of bids without ``exp``: JSON's and VAST XML's (the request's, else the host's
        default; the account's video TTL for XML), and the account's JSON TTLs by media type."""
        default_ttl = self._default_cache_ttl
        json_default = self.cache.ttl(options.bids_ttl) if options.bids_ttl else default_ttl
        xml_default = self.cache.ttl(options.vast_ttl) if options.vast_ttl else default_ttl
        by_type = self._account_ttls(account_ttls) if account_ttls is not None and not options.bids_ttl else None
        if account_ttls is not None and account_ttls.video and not options.vast_ttl:
            xml_default = self.cache.ttl(account_ttls.video + CACHE_TTL_BONUS_S)
        return json_default, xml_default, by_type

    def _account_ttls(self, ttls: AccountCacheTtl) -> dict[str, int] | None:
        """The account's cache TTLs set (not 0), by media type, with PBS-Go's minute; None when none is."""
        if not (ttls.banner or ttls.video or ttls.native or ttls.audio):
            return None
        pairs = (("banner", ttls.banner), ("video", ttls.video), ("native", ttls.native), ("audio", ttls.audio))
        return {kind: self.cache.ttl(value + CACHE_TTL_BONUS_S) for kind, value in pairs if value}

    def _exp_ttl(self, imp_exp: Any, bid_exp: Any) -> int | None:
        """PBS: the smaller positive of imp.exp and bid.exp, plus a minute, capped; None without one (then
        the request's ``ttlseconds`` for the kind, PBS-Java, else the default plus a minute)."""
        values = [v for v in (imp_exp, bid_exp) if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        return self.cache.ttl(min(values) + CACHE_TTL_BONUS_S) if values else None

    def _response(self, run: _AuctionRun) -> dict[str, Any]:
        """The OpenRTB response: each bid with its ``ext.prebid`` (:func:`_bid_ext_prebid`) in its
        seat, and the response's ``ext``."""
        request = run.request
        # an account that caches nothing (auction.cache.enabled) keeps every creative, as PBS-Java's noCache
        return_creative = run.setup.cache_options.return_creative or not run.account.settings.auction.cache.enabled
        bid_floors = run.bid_floors if run.bid_floors is not None and run.bid_floors.bid_floors else None
        cache_url = self.cache.public_url + "?uuid="
        imp_passthrough = _imp_passthrough(request["imp"])
        video_attrs = run.stored_responses.video_attrs
        events = run.events
        seats: dict[str, list[dict[str, Any]]] = {}
        for bid in run.bids:
            own = bid.bid  # the auction's own copy (accept_bids); its cached JSON is already written
            ext = own.get("ext")
            if not isinstance(ext, dict):
                ext = own["ext"] = {}
            ext["prebid"] = _bid_ext_prebid(bid, ext.get("prebid"), events, cache_url, bid_floors, imp_passthrough)
            if video_attrs is not None and bid.imp_id in video_attrs:  # PBS-Go's echovideoattrs
                ext["storedrequestattributes"] = video_attrs[bid.imp_id]
            if not return_creative:
                own.pop("adm", None)
            seat = seats.get(bid.bidder)
            if seat is None:
                seats[bid.bidder] = [own]
            else:
                seat.append(own)
        response: dict[str, Any] = {"id": request["id"]}
        if seats:
            response["seatbid"] = [{"seat": seat, "bid": seat_bids} for seat, seat_bids in seats.items()]
            response["cur"] = run.setup.currency
        response["ext"] = _response_ext(run)
        return response


def _bid_ext_prebid(
    bid: AuctionBid,
    bidder_prebid: Any,
    events: EventUrls | None,
    cache_url: str,
    bid_floors: EnforceResult | None,
    imp_passthrough: dict[str, Any] | None,
) -> dict[str, Any]:
    """A bid's ``ext.prebid`` in the response: the bidder's own (``bidder_prebid``, usually none) less
    its targeting, with the auction's type, targeting, cache ids, event URLs, meta (the adapter's, else
    the bidder's own, with ``adaptercode``), the adapter's video facts and deal priority, floors and
    the imp's passthrough."""
    if bidder_prebid is None:
        ext_prebid: dict[str, Any] = {"type": bid.bid_type}
    else:
        ext_prebid = dict(bidder_prebid) if isinstance(bidder_prebid, dict) else {}
        ext_prebid.pop("targeting", None)
        ext_prebid["type"] = bid.bid_type
    if bid.targeting:
        ext_prebid["targeting"] = bid.targeting
    if bid.cache_id or bid.vast_cache_id:
        cache_info: dict[str, Any] = {}
        if bid.cache_id:
            cache_info["bids"] = {"cacheId": bid.cache_id, "url": cache_url + bid.cache_id}
        if bid.vast_cache_id:
            cache_info["vastXml"] = {"cacheId": bid.vast_cache_id, "url": cache_url + bid.vast_cache_id}
        ext_prebid["cache"] = cache_info
    if events is not None and bid.bid_type != "video":  # a video bid's VAST carries its tracker
        ext_prebid["events"] = bid.events or _bid_events(bid, events)
    # the adapter's meta (PBS-Go's BidMeta) replaces the bidder's own ext.prebid.meta
    meta = bid.meta if bid.meta is not None else ext_prebid.get("meta") if bidder_prebid is not None else None
    if isinstance(meta, dict):
        meta = dict(meta)
        meta["adaptercode"] = bid.adapter
    else:
        meta = {"adaptercode": bid.adapter}
    ext_prebid["meta"] = meta
    if bid.video is not None:
        ext_prebid["video"] = bid.video
    if bid.deal_priority:
        ext_prebid["dealpriority"] = bid.deal_priority
    if bid.generated_id:
        ext_prebid["bidid"] = bid.generated_id
    if bid_floors is not None:
        floors = bid_floors.floors_for(bid)
        if floors:
            ext_prebid["floors"] = floors
    if imp_passthrough is not None and bid.imp_id in imp_passthrough:
        ext_prebid["passthrough"] = imp_passthrough[bid.imp_id]
    return ext_prebid


def _response_ext(run: _AuctionRun) -> dict[str, Any]:
    """The response's ``ext``: debug, errors, warnings, response times, tmax, the auction timestamp and
    the request's passthrough."""
    request = run.request
    ext: dict[str, Any] = {}
    if run.setup.debug:
        ext["debug"] = {"httpcalls": run.httpcalls, "resolvedrequest": request}
    if run.errors:
        ext["errors"] = run.errors
    warnings_json = messages_json(run.warnings)
    if warnings_json:
        ext["warnings"] = warnings_json
    ext["responsetimemillis"] = run.response_times
    ext["tmaxrequest"] = run.tmax
    ext["prebid"] = {"auctiontimestamp": run.timestamp}
    prebid = request.get("ext", {}).get("prebid") if isinstance(request.get("ext"), dict) else None
    if isinstance(prebid, dict) and prebid.get("passthrough") is not None:
        ext["prebid"]["passthrough"] = prebid["passthrough"]  # PBS-Go echoes it as sent
    if run.fledge:
        ext["prebid"]["fledge"] = {"auctionconfigs": run.fledge}
    return ext


def _collect_fledge(run: _AuctionRun, bidder: str, configs: list[dict[str, Any]]) -> None:
    """PBS-Go's collectFledgeFromSeatBid: each config with its imp, the seat's bidder and the adapter's
    own name for it, in ``ext.prebid.fledge.auctionconfigs`` (also when the bidder has no bid)."""
    if run.fledge is None:
        run.fledge = []
    for config in configs:
        entry: dict[str, Any] = {"impid": config.get("impid") or ""}
        if bidder:
            entry["bidder"] = bidder
        adapter = config.get("bidder")
        if isinstance(adapter, str) and adapter:
            entry["adapter"] = adapter
        entry["config"] = config.get("config")
        run.fledge.append(entry)


def _request_info(
    bidder_request: BidderRequest, converter: Any, extra_headers: Mapping[str, str], entry_point: str
) -> RequestInfo:
    bidder = bidder_request.resolved.bidder
    return RequestInfo(
        bidder_request.name,
        bidder.adapter,
        bidder.openrtb_version,
        entry_point,
        extra_headers.get("Sec-GPC", ""),
        converter.convert,
    )


def _amp_targeting(bids: list[AuctionBid]) -> dict[str, str]:
    """The targeting of every cached bid, seat by seat in first-seen order as the response would list them
    (keys cut to 20 characters can collide across bidders: the later seat's value wins, as from the response)."""
    seats: dict[str, list[AuctionBid]] = {}
    for bid in bids:
        seat = seats.get(bid.bidder)
        if seat is None:
            seats[bid.bidder] = [bid]
        else:
            seat.append(bid)
    targeting: dict[str, str] = {}
    for seat_bids in seats.values():
        for bid in seat_bids:
            if bid.cache_id and bid.targeting:
                targeting.update(bid.targeting)
    return targeting


def _amp_response(errors: dict[str, list[dict[str, Any]]], warnings: dict[str, list[Message]]) -> dict[str, Any]:
    """The part of a response an AMP answer without debug shows: ``ext.errors`` and ``ext.warnings``."""
    ext: dict[str, Any] = {}
    if errors:
        ext["errors"] = errors
    warnings_json = messages_json(warnings)
    if warnings_json:
        ext["warnings"] = warnings_json
    return {"ext": ext}


def _bidder_prebid(
    alt_codes: AlternateBidderCodes, multibid: MultiBid
) -> Callable[[str], dict[str, Any] | None] | None:
    """A bidder's own ``ext.prebid`` keys (PBS-Go buildRequestExtForBidder): its alternatebiddercodes and
    multibid entries; None when the auction has neither (the usual request)."""
    if not alt_codes.configured and not multibid.entries:
        return None

    def own(name: str) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        codes = alt_codes.for_bidder(name)
        if codes is not None:
            out["alternatebiddercodes"] = codes
        entries = multibid.for_bidder(name, codes)
        if entries:
            out["multibid"] = entries
        return out or None

    return own


def _imp_ids_of(request: dict[str, Any], validated: Validated, name: str) -> list[str]:
    """The ids of the imps ``name`` was named in."""
    return [imp["id"] for imp, bidders in zip(request["imp"], validated.imp_bidders, strict=True) if name in bidders]


def _imp_passthrough(imps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``imp.ext.prebid.passthrough`` by imp id (PBS-Go copies it into each bid's ``ext.prebid``)."""
    found: dict[str, Any] | None = None
    for imp in imps:
        ext = imp.get("ext")
        prebid = ext.get("prebid") if isinstance(ext, dict) else None
        if isinstance(prebid, dict) and prebid.get("passthrough") is not None:
            if found is None:
                found = {}
            found[imp["id"]] = prebid["passthrough"]
    return found


def _bid_events(bid: AuctionBid, events: EventUrls) -> dict[str, str]:
    """A non-video bid's event URLs, made on first use (bids cached before the response get them there)."""
    urls = bid.events = events.for_bid(bid.generated_id or str(bid.bid.get("id", "")), bid.bidder)
    return urls


def _bid_vast(bid: dict[str, Any]) -> str | None:
    """A video bid's VAST: its ``adm``, else PBS's wrapper around its ``nurl``; None with neither."""
    adm, nurl = bid.get("adm"), bid.get("nurl")
    if isinstance(adm, str) and adm:
        return adm
    if isinstance(nurl, str) and nurl:
        return VAST_WRAPPER.format(nurl)
    return None


def _auction_timestamp(prebid: dict[str, Any]) -> int:
    """``ext.prebid.auctiontimestamp`` (ms) when the request has one, else now."""
    timestamp = prebid.get("auctiontimestamp")
    if not isinstance(timestamp, int) or isinstance(timestamp, bool):
        timestamp = int(time.time() * 1000)
    return timestamp


def request_type_of(request: Any) -> str:
    """The metrics label of an /openrtb2/auction request (a refused body may not even be an object)."""
    return _request_type(request) if isinstance(request, dict) else "openrtb2-web"


def _request_type(request: dict[str, Any]) -> str:
    if "app" in request:
        return "openrtb2-app"
    return "openrtb2-dooh" if "dooh" in request else "openrtb2-web"


def _account_id(request: dict[str, Any]) -> str:
    """``site``/``app``/``dooh`` ``publisher.ext.prebid.parentAccount``, else ``publisher.id``."""
    for channel in ("site", "app", "dooh"):
        holder = request.get(channel)
        publisher = holder.get("publisher") if isinstance(holder, dict) else None
        if not isinstance(publisher, dict):
            continue
        ext = publisher.get("ext")
        prebid = ext.get("prebid") if isinstance(ext, dict) else None
        parent = prebid.get("parentAccount") if isinstance(prebid, dict) else None
        if isinstance(parent, str) and parent:
            return parent
        if isinstance(publisher.get("id"), str) and publisher["id"]:
            return publisher["id"]
    return UNKNOWN_ACCOUNT


def _size_interstitials(request: dict[str, Any]) -> None:
    """PBS-Go ``processInterstitials`` on our own top-level copy of the request; its refusals are 400s."""
    try:
        apply_interstitials(request)
    except InterstitialError as exc:
        raise RequestError(str(exc)) from None


def _checked_us_privacy(request: dict[str, Any], warnings: list[Message]) -> dict[str, Any]:
    """An invalid ``regs.us_privacy`` is dropped with warning 10001 (PBS), never a failure."""
    regs = request.get("regs")
    value = regs.get("us_privacy") if isinstance(regs, dict) else None
    if value is None or value == "":
        return request
    try:
        if not isinstance(value, str):
            raise ValueError("must be a string")
        parse_us_privacy(value)
    except ValueError as exc:
        warnings.append(Message(
            WarningCode.INVALID_PRIVACY_CONSENT,
            f"CCPA consent is invalid and will be ignored. (request.regs.ext.us_privacy {exc})",
        ))
        return {**request, "regs": {k: v for k, v in regs.items() if k != "us_privacy"}}
    return request


def _geo_key(found: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(found.items())) if found else ()


def _placeholders(
    prepared: PreparedRequest, http: HttpContext, which: int, request_id: Any
) -> tuple[list[Any], HttpContext]:
    """A plan run's values by slot (placeholder set ``which`` where ``http`` has a value; the page slots
    left to the caller) and the HTTP context holding them; ``request_id``: the instantiated request's."""
    values: list[Any] = [None] * FIXED_SLOTS
    if http.user_agent:
        values[SLOT_UA] = PLACEHOLDER_UA[which]
    kind = ip_kind(http.ip)
    if kind:
        values[SLOT_IP] = (PLACEHOLDER_IPV4 if kind == 4 else PLACEHOLDER_IPV6)[which]
    if prepared.fresh_id:
        values[SLOT_ID] = request_id  # instantiate's new UUID
    uids: dict[str, str] = {}
    for index, uid_key in enumerate(prepared.uid_keys):
        uid = PLACEHOLDER_UID[which].format(index) if http.uids.get(uid_key) else None
        if uid is not None:
            uids[uid_key] = uid
        values.append(uid)
    context = HttpContext(values[SLOT_UA] or "", http.referer, values[SLOT_IP] or "", http.dnt, http.gpc, uids)
    return values, context


def _with_http_fields(request: dict[str, Any], http: HttpContext) -> dict[str, Any]:
    """Fields PBS fills from the HTTP request when the body lacks them (``setFieldsImplicitly``)."""
    out = dict(request)
    device = dict(out["device"]) if isinstance(out.get("device"), dict) else {}
    if http.user_agent and not device.get("ua"):
        device["ua"] = http.user_agent
    if http.ip and not device.get("ip") and not device.get("ipv6"):
        device["ipv6" if ":" in http.ip else "ip"] = http.ip
    if http.dnt in ("0", "1") and "dnt" not in device:
        device["dnt"] = int(http.dnt)
    if device:
        out["device"] = device
    if http.gpc == "1":
        _set_gpc(out)
    site = out.get("site")
    if isinstance(site, dict) and http.referer and not site.get("page"):
        site = dict(site)
        site["page"] = http.referer
        out["site"] = site
    if isinstance(site, dict) and site.get("page") and not site.get("domain") and isinstance(site["page"], str):
        host = url_host(site["page"])
        if host:
            out["site"] = {**site, "domain": host}
    if "at" not in out:
        out["at"] = 1
    return out


def _set_gpc(request: dict[str, Any]) -> None:
    """PBS-Go ``setGPCImplicitly``: ``Sec-GPC: 1`` sets ``regs.ext.gpc`` to "1" unless the request has one."""
    regs = request.get("regs")
    if regs is None:
        regs = {}
    ext = regs.get("ext") if isinstance(regs, dict) else None
    if not isinstance(regs, dict) or not (ext is None or isinstance(ext, dict)):
        return  # a malformed regs is the validation's to refuse
    if ext is not None and ext.get("gpc") is not None:
        return
    request["regs"] = {**regs, "ext": {**(ext or {}), "gpc": "1"}}


def _sandbox_applies(http: HttpContext, account: Account) -> bool:
    """Whether a Privacy Sandbox header is present and its account setting on (else both are ignored)."""
    sandbox = account.settings.privacy.privacysandbox
    return bool(http.topics and sandbox.topicsdomain) or bool(http.cdep and sandbox.cookiedeprecation.enabled)


def _apply_sandbox(validated: Validated, http: HttpContext, account: Account, amp: bool) -> None:
    """Sec-Browsing-Topics into ``user.data`` and Sec-Cookie-Deprecation into ``device.ext.cdep``
    (PBS-Go ``setSecBrowsingTopicsImplicitly``, ``validateOrFillCookieDeprecation``), once the account
    is known. The topics' warnings are debug ones: shown with ``test: 1`` (AMP, as PBS-Go's AMP
    endpoint) or with the auction's debug allowed."""
    request = validated.request
    settings = account.settings
    sandbox = settings.privacy.privacysandbox
    if http.topics and sandbox.topicsdomain:
        warnings = apply_topics(request, http.topics, sandbox.topicsdomain)
        if warnings:
            prebid = (request.get("ext") or {}).get("prebid") or {}
            debug = request.get("test") == 1 or (not amp and prebid.get("debug") is True)
            if debug and (amp or settings.debug_allow):
                validated.warnings.extend(warnings)
    if http.cdep and sandbox.cookiedeprecation.enabled:
        warning = fill_cdep(request, http.cdep)
        if warning is not None:
            validated.warnings.append(warning)


GENERIC_WARNING_CODE = 999  # PBS-Java's BidderError.Type.generic: its plain-text warnings
SECONDARY_TIMEOUT_CODE = 1  # PBS-Java's BidderError.Type.timeout
SECONDARY_TIMEOUT_TEXT = "secondary bidder timed out, auction proceeded"  # PBS-Java's


def _secondary_bidders(run: _AuctionRun) -> frozenset[str]:
    """PBS-Java's secondary bidders: ``ext.prebid.secondarybidders`` when the request has it, else
    the account's ``auction.secondary_bidders``."""
    prebid = (run.request.get("ext") or {}).get("prebid")
    named = prebid.get("secondarybidders") if isinstance(prebid, dict) else None
    if named is None:
        named = run.account.settings.auction.secondary_bidders
        if not named:
            return _NO_BIDDERS
    return frozenset(name for name in named if isinstance(name, str)) if isinstance(named, list) else _NO_BIDDERS


_NO_BIDDERS: frozenset[str] = frozenset()


def _too_late(bidder_request: BidderRequest, now: float) -> BidderOutcome:
    """A bidder not called: too little time was left (PBS-Go's TmaxTimeout, counted as tmax_timeout)."""
    outcome = BidderOutcome(bidder_request, started=now)
    outcome.errors.append(BidderError("exceeded tmax duration", ErrorCode.TIMEOUT))
    outcome.tmax_timeout = True
    return outcome


def _refuse_blocked_app(request: dict[str, Any], blocked: frozenset[str]) -> None:
    """PBS-Go's validateApp: an app the host's ``blocked_apps`` names is refused with 503."""
    app = request.get("app")
    app_id = app.get("id") if isinstance(app, dict) else None
    if isinstance(app_id, str) and app_id in blocked:
        raise AuctionRefused(
            503, f"Invalid request: Prebid-server does not process requests from App ID: {app_id}\n", "blockedapp"
        )


def _stored_bidder_outcome(bidder_request: BidderRequest, adapter: Adapter, stored: list[Any]) -> BidderOutcome:
    """Stored bid responses: the adapter reads them as if its bidder had answered 200."""
    outcome = BidderOutcome(bidder_request)
    for entry in stored:
        call = RequestData("POST", "stored-bid-response", None, {}, [entry.imp_id])
        response, errs = adapter.make_bids(bidder_request.request, call, ResponseData(200, entry.body))
        outcome.errors.extend(errs)
        if response is None:
            continue
        if response.bids and may_be_deeper(entry.body):
            drop_deep_bids(response, outcome.errors)
        if entry.replace_imp_id:
            response = BidderResponse(
                [
                    TypedBid({**b.bid, "impid": entry.imp_id}, b.bid_type, b.seat, b.deal_priority)
                    for b in response.bids
                ],
                response.currency,
            )
        outcome.responses.append(response)
    return outcome


def _stored_auction_bids(
    stored: dict[str, list[Any]], validated: Validated
) -> tuple[list[AuctionBid], list[BidderError]]:
    """Stored auction responses: bids taken as they are; targeting, buckets and cache recomputed."""
    bids: list[AuctionBid] = []
    errors: list[BidderError] = []
    for imp_id, seatbids in stored.items():
        for seatbid in seatbids:
            if not isinstance(seatbid, dict):
                continue
            seat = str(seatbid.get("seat", ""))
            resolved = validated.bidders.get(seat)
            adapter = resolved.bidder.adapter if resolved is not None else seat
            for raw in seatbid.get("bid") or []:
                if not isinstance(raw, dict):
                    continue
                bid = {**raw, "impid": imp_id}
                ext = bid.get("ext") if isinstance(bid.get("ext"), dict) else {}
                prebid = ext.get("prebid") if isinstance(ext.get("prebid"), dict) else {}
                kind = MTYPE_TO_TYPE.get(bid.get("mtype")) or prebid.get("type")
                if kind not in ("banner", "video", "audio", "native"):
                    errors.append(BidderError(f'Failed to parse bid mediatype for impression "{imp_id}"'))
                    continue
                if prebid:
                    bid["ext"] = {**ext, "prebid": {k: v for k, v in prebid.items() if k != "targeting"}}
                price = bid.get("price")
                if not isinstance(price, (int, float)) or isinstance(price, bool):
                    continue
                bids.append(AuctionBid(seat, adapter, bid, kind, float(price), imp_id, bool(bid.get("dealid"))))
    return bids, errors
