"""The application factory: builds stores, analytics and metrics, registers routes.

Every resource that must be closed is opened in a ``cleanup_ctx`` generator, so shutdown
(after in-flight requests finish) closes them in reverse order; analytics is flushed there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from aiohttp import web

from hbserver.adapters.params import validate_params
from hbserver.analytics import Analytics, AnalyticsModule
from hbserver.analytics.account_http import AccountCollectors
from hbserver.analytics.file import FileModule
from hbserver.analytics.http import HttpModule
from hbserver.analytics.pbs_build import build_pbs_analytics
from hbserver.appkeys import (
    ACCOUNTS,
    ADMIN_ROUTES,
    ANALYTICS,
    BIDDER_HTTP,
    CACHE,
    CONFIG,
    CURRENCY,
    FLOORS_FETCHER,
    HEALTH,
    HTTP,
    MAX_REQUEST_SIZE,
    METRICS,
    STORED,
    SYNC,
    AdminRoute,
)
from hbserver.auction.bids.currency_fetch import ServerRates
from hbserver.auction.core import AuctionService
from hbserver.auction.exchange.fanout import MAX_RESPONSE_BYTES
from hbserver.auction.tracing import instrument
from hbserver.bidders.registry import build_registry
from hbserver.config import Config
from hbserver.endpoints.amp import AmpEndpoint
from hbserver.endpoints.auction import AuctionEndpoint
from hbserver.endpoints.cache import CacheEndpoint
from hbserver.endpoints.cookie_sync import CookieSyncEndpoint
from hbserver.endpoints.currency_rates import CurrencyRatesEndpoint
from hbserver.endpoints.event import EventEndpoint
from hbserver.endpoints.getuids import GetUIDsEndpoint
from hbserver.endpoints.httpinteraction import HttpInteractionEndpoint
from hbserver.endpoints.info import InfoEndpoints
from hbserver.endpoints.metrics import handle_metrics
from hbserver.endpoints.optout import OptOutEndpoint
from hbserver.endpoints.setuid import SetUIDEndpoint
from hbserver.endpoints.static import add_static_routes
from hbserver.endpoints.status import Health, StatusEndpoint
from hbserver.endpoints.stored_admin import AccountInvalidation, StoredRequestsAdmin, apply_change
from hbserver.endpoints.version import build_revision, handle_version
from hbserver.endpoints.video import VideoEndpoint, video_stored_requests
from hbserver.endpoints.vtrack import VtrackEndpoint
from hbserver.floors.fetcher import FloorsFetcher
from hbserver.floors.validate import validate_fetched_floors
from hbserver.installation import installation_problems
from hbserver.metrics import FLUSH_INTERVAL_SECONDS, Metrics
from hbserver.metrics.runtime import RuntimeSampler
from hbserver.overload import OverloadGuard
from hbserver.privacy.gvl import load_gvl
from hbserver.privacy.vendorlists import VendorLists
from hbserver.stores.accounts import AccountStore
from hbserver.stores.cache.service import CacheService, build_cache_store
from hbserver.stores.lru import LRUCache
from hbserver.stores.stored import StoredData, build_stored_data, peers
from hbserver.stores.stored.events import HttpEvents
from hbserver.usersync.privacy import PrivacyGate
from hbserver.usersync.service import SyncService
from hbserver.web.bidclient import BidderClient
from hbserver.web.client import SharedSession
from hbserver.web.endpoint import Routes
from hbserver.web.otlp import build_tracer, exporter_lifetime
from hbserver.web.requestlog import HTTP_INTERACTIONS, HttpInteractionLog
from hbserver.web.tracing import TRACER, Tracer

log = logging.getLogger("hbserver")

# The admin endpoints take no bodies.
ADMIN_MAX_REQUEST_SIZE = 1024


def build_account_store(config: Config, metrics: Metrics, stored_data: StoredData) -> AccountStore:
    """Accounts read through the stored-data backends; a change in the database invalidates them."""
    stored = config.stored_requests
    cache = None
    if stored.in_memory_cache.type == "lru":
        cache = LRUCache(stored.in_memory_cache.size, stored.in_memory_cache.ttl_seconds)
    accounts = AccountStore(
        config.account_defaults, stored_data, metrics, required=config.account_required, cache=cache
    )
    stored_data.add_listener("accounts", accounts.invalidate)
    return accounts


def build_sync_service(config: Config, metrics: Metrics | None = None) -> SyncService:
    """Registry, vendor lists and privacy gate; raises RegistryError or GVLError on bad configuration.

    The gate's ``gvl`` is the store of vendor lists by version (``gdpr.vendorlist_file`` its
    fallback); it fetches only once started (:func:`_vendorlists_lifetime`)."""
    fallback = load_gvl(config.gdpr.vendorlist_file) if config.gdpr.vendorlist_file else None
    lists = VendorLists(config.gdpr.vendorlist, fallback, metrics)
    service = SyncService(config, build_registry(config), PrivacyGate(config, lists))
    if metrics is not None and service.size_threshold:  # every read of the uids cookies counts it
        service.over_threshold = metrics.counter(metrics.uids_cookie_size_over_threshold)
    return service


def build_analytics(config: Config, metrics: Metrics) -> Analytics:
    modules: list[AnalyticsModule] = []
    if config.analytics.file.filename and config.analytics.file.format == "hbserver":
        modules.append(FileModule(config.analytics.file.filename, metrics))
    http = config.analytics.http
    if http.endpoint:
        modules.append(HttpModule(
            http.endpoint, metrics, batch_size=http.batch_size, flush_interval=http.flush_interval_seconds,
            buffer_size=http.buffer_size, shutdown_seconds=config.shutdown_timeout_seconds,
        ))
    accounts = None
    if config.analytics.account_http.enabled:  # the accounts' own collectors (account analytics.http)
        accounts = AccountCollectors(config.analytics.account_http, metrics, config.shutdown_timeout_seconds)
    return Analytics(modules, build_pbs_analytics(config, metrics), accounts)


def create_app(
    config: Config, metrics: Metrics | None = None, extra_routes: Sequence[Callable[[Routes], None]] = ()
) -> web.Application:
    """The application; ``extra_routes`` hooks add routes before the catch-all (tests, tools)."""
    metrics = metrics or Metrics(config.metrics.prometheus.namespace, config.metrics.prometheus.subsystem)
    app = _app_with_stores(config, metrics)
    _add_background_services(app, config, metrics)
    tracer = _add_tracer(app, config, metrics)
    sync = _add_sync(app, config, metrics)
    routes = _add_user_routes(app, config, metrics, sync)
    _add_auction_routes(app, routes, config, metrics, sync, tracer)
    optout = OptOutEndpoint(sync)
    routes.add("GET", "/optout", optout.show_page)
    routes.add("POST", "/optout", optout.handle)
    admin = _admin_routes(app, config)
    add_static_routes(routes)
    for hook in extra_routes:
        hook(routes)
    if not config.admin.port:  # the admin endpoints on the main port, as before admin.port existed
        for method, path, handler in admin:
            routes.add(method, path, handler)
    routes.add_fallback()
    return app


def _app_with_stores(config: Config, metrics: Metrics) -> web.Application:
    """The application with its configuration, metrics, HTTP clients, stored data, accounts and analytics."""
    # aiohttp enforces the body limit (on the decompressed size) while reading.
    app = web.Application(client_max_size=config.max_request_size)
    app[CONFIG] = config
    app[METRICS] = metrics
    app[MAX_REQUEST_SIZE] = config.max_request_size
    app[HTTP] = SharedSession()
    app[BIDDER_HTTP] = BidderClient(max_response_bytes=MAX_RESPONSE_BYTES)
    app[STORED] = build_stored_data(config, metrics, app[HTTP])
    app[ACCOUNTS] = build_account_store(config, metrics, app[STORED])
    app[ANALYTICS] = build_analytics(config, metrics)
    return app


def _add_background_services(app: web.Application, config: Config, metrics: Metrics) -> None:
    """The cache, currency rates and floors fetcher, and the lifetimes (``cleanup_ctx``) of everything
    that runs beside the requests; their order is the order of start-up, reversed at shutdown."""
    # Cleanup runs in reverse: analytics closes (counting what it drops) before the last flush.
    app.cleanup_ctx.append(_metrics_flusher)
    app.cleanup_ctx.append(_analytics_lifetime)
    app.cleanup_ctx.append(_stored_data_lifetime)
    app[CACHE] = CacheService(build_cache_store(config, app[HTTP]), config, metrics)
    app.cleanup_ctx.append(_outgoing_lifetime)
    app[CURRENCY] = ServerRates(config.currency, app[HTTP], metrics)
    app.cleanup_ctx.append(_currency_lifetime)  # after _outgoing_lifetime: stops before the session closes
    app[FLOORS_FETCHER] = FloorsFetcher(config.price_floors, app[HTTP], metrics, validate_fetched_floors)
    app.cleanup_ctx.append(_floors_fetcher_lifetime)  # likewise
    _add_http_events(app, config)  # likewise
    app.cleanup_ctx.append(_worker_gauge)


def _add_tracer(app: web.Application, config: Config, metrics: Metrics) -> Tracer | None:
    """The span exporter when ``tracing.enabled``; None: tracing off, nothing wrapped."""
    tracer = build_tracer(config.tracing, app[HTTP], metrics)
    if tracer is not None:
        app[TRACER] = tracer
        app.cleanup_ctx.append(exporter_lifetime)  # after _outgoing_lifetime: exports before the session closes
    return tracer


def _add_sync(app: web.Application, config: Config, metrics: Metrics) -> SyncService:
    """The user sync service (bidder registry, vendor lists, privacy gate) and its vendor lists' lifetime."""
    sync = build_sync_service(config, metrics)
    app.cleanup_ctx.append(_vendorlists_lifetime)  # after _outgoing_lifetime: stops before the session closes
    sync.cookie_sizes = metrics.histogram(metrics.uids_cookie_size)
    app[SYNC] = sync
    return sync


def _add_user_routes(app: web.Application, config: Config, metrics: Metrics, sync: SyncService) -> Routes:
    """The routing table with its first routes: status, events, user syncs, bidder info, vtrack and cache."""
    accounts, analytics = app[ACCOUNTS], app[ANALYTICS]
    app[HEALTH] = Health(installation_problems())
    status = StatusEndpoint(config.status_response, app[HEALTH])
    app[HTTP_INTERACTIONS] = HttpInteractionLog()  # this worker's; wrap() of auction and AMP consults it
    routes = Routes(app)
    routes.add("GET", "/status", status.handle_live)
    routes.add("GET", "/status/ready", status.handle_ready)
    access_log = config.logging.access.sample_rate > 0
    routes.add("GET", "/event", EventEndpoint(accounts, analytics, metrics, note_account=access_log).handle)
    routes.add("POST", "/cookie_sync", CookieSyncEndpoint(
        sync, accounts, analytics, metrics, note_account=access_log
    ).handle)
    routes.add("GET", "/setuid", SetUIDEndpoint(sync, accounts, analytics, metrics).handle)
    routes.add("GET", "/getuids", GetUIDsEndpoint(sync).handle)
    info = InfoEndpoints(sync.registry)
    routes.add("GET", "/info/bidders", info.handle_list)
    routes.add("GET", "/info/bidders/{name}", info.handle_detail)
    routes.add("GET", "/bidders/params", info.handle_params)
    cache = app[CACHE]
    routes.add("POST", "/vtrack", VtrackEndpoint(
        cache, accounts, sync.registry, config.external_url, analytics, metrics
    ).handle)
    if config.cache.serve_endpoint:
        cache_endpoint = CacheEndpoint(cache)
        routes.add("POST", "/cache", cache_endpoint.handle_post)
        routes.add("GET", "/cache", cache_endpoint.handle_get)
    return routes


def _add_auction_routes(
    app: web.Application, routes: Routes, config: Config, metrics: Metrics, sync: SyncService, tracer: Tracer | None
) -> None:
    """The auction service and its endpoints (auction, AMP, video), behind the overload guard."""
    analytics = app[ANALYTICS]
    auction = AuctionService(
        config, sync.registry, app[ACCOUNTS], app[CACHE], app[BIDDER_HTTP], validate_params, metrics,
        stored=app[STORED], gvl=sync.gate.gvl, server_rates=app[CURRENCY].converter,
        floors_fetcher=app[FLOORS_FETCHER].get,
    )
    if tracer is not None:
        instrument(auction, tracer)
    overload = _overload_guard(app, config, metrics)
    routes.add("POST", "/openrtb2/auction", AuctionEndpoint(auction, sync, analytics, metrics, overload).handle)
    amp = AmpEndpoint(auction, app[STORED], sync, config, analytics, metrics)
    amp.overload = overload
    routes.add("GET", "/openrtb2/amp", amp.handle)
    videos = video_stored_requests(config, metrics)  # PBS-Go's deprecated endpoint: 501 unless enabled
    routes.add("POST", "/openrtb2/video", VideoEndpoint(auction, videos, sync, config, metrics).handle)


def _admin_routes(app: web.Application, config: Config) -> list[AdminRoute]:
    """The admin endpoints (``app[ADMIN_ROUTES]``): on the admin port when ``admin.port`` is set, else
    on the main port."""
    admin = app[ADMIN_ROUTES] = []
    if config.metrics.prometheus.enabled:
        admin.append(("GET", config.metrics.prometheus.path, handle_metrics))
    build_revision()  # asks git once, now, not on a request
    admin.append(("GET", "/version", handle_version))
    admin.append(("GET", "/logging/httpinteraction", HttpInteractionEndpoint(app[HTTP_INTERACTIONS]).handle))
    admin.append(("GET", "/currency/rates", CurrencyRatesEndpoint(app[CURRENCY]).handle))
    if config.admin.port:  # never on the public port (config refuses them without admin.port)
        admin.extend(_cache_admin_routes(app, config))
    return admin


def create_admin_app(app: web.Application) -> web.Application:
    """The admin port's application (``admin.port``): the admin endpoints plus readiness, sharing
    the main application's state (metrics, health, stores), so it must run in the same worker."""
    config = app[CONFIG]
    endpoints = config.admin_endpoints
    takes_bodies = endpoints.storedrequest.enabled or endpoints.storedrequest_amp.enabled
    size = config.max_request_size if takes_bodies else ADMIN_MAX_REQUEST_SIZE
    admin_app = web.Application(client_max_size=size)
    admin_app[MAX_REQUEST_SIZE] = size
    admin_app[METRICS] = app[METRICS]
    admin_app[CONFIG] = app[CONFIG]
    for key in (HEALTH,):
        admin_app[key] = app[key]
    routes = Routes(admin_app)
    status = StatusEndpoint(app[CONFIG].status_response, app[HEALTH])
    routes.add("GET", "/status/ready", status.handle_ready)
    for method, path, handler in app[ADMIN_ROUTES]:
        routes.add(method, path, handler)
    routes.add_fallback()
    return admin_app


def _cache_admin_routes(app: web.Application, config: Config) -> list[tuple[str, str, Any]]:
    """PBS-Java's cache admin endpoints that ``admin_endpoints`` enables, with the bus that tells every
    worker (started and stopped with the app)."""
    endpoints = config.admin_endpoints
    if not any(e.enabled for e in (endpoints.storedrequest, endpoints.storedrequest_amp, endpoints.cache_invalidation)):
        return []
    bus = peers.from_environment(apply_change(app[STORED]), 2 * config.max_request_size + 1024)

    async def lifetime(_app: web.Application) -> AsyncIterator[None]:
        await bus.start()
        yield
        await bus.close()

    app.cleanup_ctx.append(lifetime)
    routes: list[tuple[str, str, Any]] = []
    for spec, amp in ((endpoints.storedrequest, False), (endpoints.storedrequest_amp, True)):
        if spec.enabled:
            handler = StoredRequestsAdmin(bus, amp)
            routes += [("POST", spec.path, handler.handle_post), ("DELETE", spec.path, handler.handle_delete)]
    if endpoints.cache_invalidation.enabled:
        invalidation = AccountInvalidation(bus)
        path = endpoints.cache_invalidation.path
        routes += [("GET", path, invalidation.handle), ("POST", path, invalidation.handle)]
    return routes


def _add_http_events(app: web.Application, config: Config) -> None:
    """PBS-Go's ``stored_requests.http_events``: each configured endpoint polled by this worker, its
    first load done before the port opens."""
    events_config = config.stored_requests.http_events
    if not events_config.refresh_rate_seconds:
        return
    rate, timeout_ms = events_config.refresh_rate_seconds, events_config.timeout_ms
    pollers = [
        HttpEvents(url, app[HTTP], app[STORED], amp=amp, refresh_rate_seconds=rate, timeout_ms=timeout_ms)
        for url, amp in ((events_config.endpoint, False), (events_config.amp_endpoint, True))
        if url
    ]

    async def lifetime(_app: web.Application) -> AsyncIterator[None]:
        for poller in pollers:
            await poller.start()
        yield
        for poller in pollers:
            await poller.close()

    app.cleanup_ctx.append(lifetime)


def _overload_guard(app: web.Application, config: Config, metrics: Metrics) -> OverloadGuard | None:
    """The auction endpoints' load shedding, its loop-lag heartbeat running while the app does; None when
    ``overload.max_wait_ms`` is 0."""
    if not config.overload.max_wait_ms:
        return None
    guard = OverloadGuard(config.overload.max_wait_ms, metrics)

    async def heartbeat(_app: web.Application) -> AsyncIterator[None]:
        guard.lag.start(asyncio.get_running_loop())
        yield
        guard.lag.stop()

    app.cleanup_ctx.append(heartbeat)
    return guard


async def _analytics_lifetime(app: web.Application) -> AsyncIterator[None]:
    analytics = app[ANALYTICS]
    await analytics.start()
    yield
    await analytics.close()


async def _stored_data_lifetime(app: web.Application) -> AsyncIterator[None]:
    """The PostgreSQL pool and its change poller, when a database is configured."""
    await app[STORED].start()
    yield
    await app[STORED].close()


async def _outgoing_lifetime(app: web.Application) -> AsyncIterator[None]:
    """The cache store's connections and the shared HTTP session, closed after in-flight requests.
    A worker's cache shard listens for the other workers from here on (before the port opens)."""
    await app[CACHE].start()
    yield
    await app[CACHE].close()
    await app[BIDDER_HTTP].close()
    await app[HTTP].close()


async def _currency_lifetime(app: web.Application) -> AsyncIterator[None]:
    """The currency rates' refresh loop (start-up reads a shared rates file at most; never the network)."""
    await app[CURRENCY].start()
    yield
    await app[CURRENCY].close()


async def _vendorlists_lifetime(app: web.Application) -> AsyncIterator[None]:
    """Fetches of the vendor lists consent strings name (none at start-up: only on demand)."""
    lists = app[SYNC].gate.gvl
    lists.start(app[HTTP])
    yield
    await lists.close()


async def _floors_fetcher_lifetime(app: web.Application) -> AsyncIterator[None]:
    """The floors providers' fetch workers."""
    await app[FLOORS_FETCHER].start()
    yield
    await app[FLOORS_FETCHER].close()


async def _metrics_flusher(app: web.Application) -> AsyncIterator[None]:
    """Apply hot-path counts to the Prometheus values every second, and once more at the end."""
    metrics = app[METRICS]

    async def flush_forever() -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_SECONDS)
            metrics.flush()

    task = asyncio.create_task(flush_forever(), name="metrics-flush")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    metrics.flush()


async def _worker_gauge(app: web.Application) -> AsyncIterator[None]:
    """The worker count and the worker's runtime figures (memory, CPU, collections, loop lag)."""
    metrics = app[METRICS]
    gauge = metrics.workers
    gauge.inc()
    rates = app[CURRENCY]
    sampler = RuntimeSampler(metrics, rates.age_seconds if app[CONFIG].currency.fetch_url else None)
    task = asyncio.create_task(sampler.run(), name="runtime-metrics")
    log.info("worker %d ready", os.getpid())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    gauge.dec()
