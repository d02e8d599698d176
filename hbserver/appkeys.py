"""Typed keys for application state (``app[KEY]``), shared by app.py and the endpoints."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from hbserver.web.keys import CONFIG, MAX_REQUEST_SIZE, METRICS

if TYPE_CHECKING:
    from hbserver.analytics import Analytics
    from hbserver.auction.bids.currency_fetch import ServerRates
    from hbserver.endpoints.status import Health
    from hbserver.floors.fetcher import FloorsFetcher
    from hbserver.stores.accounts import AccountStore
    from hbserver.stores.cache.service import CacheService
    from hbserver.stores.stored import StoredData
    from hbserver.usersync.service import SyncService
    from hbserver.web.bidclient import BidderClient
    from hbserver.web.client import SharedSession

ANALYTICS: web.AppKey[Analytics] = web.AppKey("analytics")
ACCOUNTS: web.AppKey[AccountStore] = web.AppKey("accounts")
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

__all__ = ["ACCOUNTS", "ADMIN_ROUTES", "ANALYTICS", "BIDDER_HTTP", "CACHE", "CONFIG", "CURRENCY", "FLOORS_FETCHER",
           "HEALTH", "HTTP", "MAX_REQUEST_SIZE", "METRICS", "STORED", "SYNC", "AdminRoute"]
