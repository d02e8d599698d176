"""Typed keys for application state (``app[KEY]``), shared by app.py and the endpoints."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from hbserver.analytics import Analytics
    from hbserver.auction.currency_fetch import ServerRates
    from hbserver.config import Config
    from hbserver.endpoints.status import Health
    from hbserver.floors.fetcher import FloorsFetcher
    from hbserver.metrics import Metrics
    from hbserver.stores.accounts import AccountStore
    from hbserver.stores.cache.service import CacheService
    from hbserver.stores.stored import StoredData
    from hbserver.usersync.service import SyncService
    from hbserver.web.bidclient import BidderClient
    from hbserver.web.client import SharedSession

CONFIG: web.AppKey[Config] = web.AppKey("config")
METRICS: web.AppKey[Metrics] = web.AppKey("metrics")
ANALYTICS: web.AppKey[Analytics] = web.AppKey("analytics")
ACCOUNTS: web.AppKey[AccountStore] = web.AppKey("accounts")
MAX_REQUEST_SIZE: web.AppKey[int] = web.AppKey("max_request_size")
SYNC: web.AppKey[SyncService] = web.AppKey("sync")
CACHE: web.AppKey[CacheService] = web.AppKey("cache")
HTTP: web.AppKey[SharedSession] = web.AppKey("http")
STORED: web.AppKey[StoredData] = web.AppKey("stored")
BIDDER_HTTP: web.AppKey[BidderClient] = web.AppKey("bidder_http")
HEALTH: web.AppKey[Health] = web.AppKey("health")
CURRENCY: web.AppKey[ServerRates] = web.AppKey("currency")  # the server currency rates and their fetcher
FLOORS_FETCHER: web.AppKey[FloorsFetcher] = web.AppKey("floors_fetcher")  # floors providers' data
# Admin endpoints (method, path, handler): on admin.port when set, else on the main port.
AdminRoute = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]
ADMIN_ROUTES: web.AppKey[list[AdminRoute]] = web.AppKey("admin_routes")
