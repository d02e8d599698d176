"""What the sync endpoints share: the registry, the privacy gate and the host's cookie settings."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hbserver.bidders.registry import Bidder, Registry
from hbserver.config import Config
from hbserver.stores.accounts import AccountError
from hbserver.usersync.cookie import COOKIE_NAME, SetCookieHeader, UidsCookie, read_request_cookie
from hbserver.usersync.parts import Split, part_names, parts_size, split_for_write
from hbserver.usersync.privacy import PrivacyGate

if TYPE_CHECKING:  # the metrics module fixes prometheus-client's mode when imported
    from hbserver.metrics import PendingCounter, PendingHistogram

# PBS-Go's account error texts for /cookie_sync and /setuid, and the metric status of each.
ACCOUNT_ERRORS = {
    "unknown": ("account must be valid if provided, please reach out to the prebid server host", "acct_invalid"),
    "disabled": ("account is disabled, please reach out to the prebid server host", "acct_blocked"),
    "malformed": ("account config is malformed and could not be read", "acct_config_malformed"),
}


def account_error(exc: AccountError) -> tuple[int, str, str]:
    """(status, message, metric status) for an account refusal at a sync endpoint."""
    if exc.reason in ACCOUNT_ERRORS:
        message, metric = ACCOUNT_ERRORS[exc.reason]
        return 400, message, metric
    return exc.status, exc.message, "bad_request"


def utcnow() -> datetime:
    return datetime.now(UTC)


class SyncService:
    def __init__(self, config: Config, registry: Registry, gate: PrivacyGate) -> None:
        self.config = config
        self.registry = registry
        self.gate = gate
        host = config.host_cookie
        self._cookie_options: dict[str, Any] = {
            "optout_name": host.optout_cookie.name,
            "optout_value": host.optout_cookie.value,
            "host_family": host.family,
            "host_cookie_name": host.cookie_name,
        }
        self.ttl_days = host.ttl_days
        self.domain = host.domain
        self._set_cookie = SetCookieHeader(host.ttl_days, host.domain)
        self.max_cookie_bytes = host.max_cookie_size_bytes
        self.cookie_sizes: PendingHistogram | None = None  # uids_cookie_size_bytes, set by the application
        # uids_cookie_size_over_threshold (set with the metrics when host_cookie.size_threshold_bytes is on)
        self.size_threshold = host.size_threshold_bytes
        self.over_threshold: PendingCounter | None = None
        # uids, uids2, ... when host_cookie.number_of_uid_cookies > 1; None: the one uids cookie (PBS-Go)
        self.parts = part_names(host.number_of_uid_cookies) if host.number_of_uid_cookies > 1 else None
        if self.parts is not None:
            self._cookie_options["parts"] = self.parts
        groups = config.user_sync.priority_groups
        self.priority_bidders = {code.lower() for group in groups for code in group}
        self.priority_keys = [registry.keys_of(list(group)) for group in groups]
        self.priority_key_set = frozenset().union(*self.priority_keys)
        self._by_sync_key = _bidders_by_sync_key(registry)

    def bidder_of_sync_key(self, key: str) -> Bidder | None:
        """The bidder ``/setuid?bidder=`` names by its syncer key (cookie family, e.g. ``adnxs``, as older
        PBS and Prebid's docs use) when the name is no bidder's: bidder names are looked up first."""
        return self._by_sync_key.get(key)

    def read_cookie(self, cookies: Mapping[str, str], now: datetime) -> UidsCookie:
        if not cookies:  # a request without cookies (read_request_cookie's first case, without its call)
            return UidsCookie()
        sizes = self.cookie_sizes
        if sizes is not None:
            size = len(cookies.get(COOKIE_NAME) or "") if self.parts is None else parts_size(cookies, self.parts)
            if size:
                sizes.observe(size)
                if self.size_threshold and size > self.size_threshold and self.over_threshold is not None:
                    self.over_threshold.pending += 1
        return read_request_cookie(cookies, now, **self._cookie_options)

    def set_cookie(self, value: str, now: datetime) -> str:
        """The ``Set-Cookie`` value for the uids cookie ``value`` (:class:`SetCookieHeader`)."""
        return self._set_cookie(value, now)

    def split(self, cookie: UidsCookie, now: datetime) -> Split:
        """``cookie`` spread over the uids cookies (``host_cookie.number_of_uid_cookies`` > 1 only)."""
        assert self.parts is not None
        return split_for_write(cookie, self.parts, self.max_cookie_bytes, self.priority_key_set, now)

    def part_headers(self, values: list[str], sent: Mapping[str, str], now: datetime) -> list[str]:
        """``Set-Cookie`` values for the parts: each part with uids, and an expiry for each emptied part
        the browser sent (an absent one has nothing to delete)."""
        assert self.parts is not None
        headers = []
        for name, value in zip(self.parts, values, strict=True):
            if value:
                headers.append(self._set_cookie(value, now, name))
            elif name in sent:
                headers.append(self._set_cookie.expired(name))
        return headers


def _bidders_by_sync_key(registry: Registry) -> dict[str, Bidder]:
    """Each syncer key's bidder among the enabled bidders that sync: one that is not an alias, else the
    first code in order (every bidder sharing a key writes the same uid)."""
    found: dict[str, Bidder] = {}
    for code in sorted(registry.bidders):
        bidder = registry.bidders[code]
        if bidder.disabled or bidder.syncer is None:
            continue
        key = bidder.syncer.key
        current = found.get(key)
        if current is None or (current.alias_of and not bidder.alias_of):
            found[key] = bidder
    return found
