"""Every configuration key, its default and its check, in one place.

The configuration is a tree of frozen dataclasses. Defaults live in the field definitions;
checks live in field metadata (``check``) and in :func:`_cross_checks`. Sources are merged in
this order, later wins: the YAML file, ``HBS_`` environment variables, command-line flags.

Problems are collected, never raised one at a time: :func:`load_config` raises
:class:`ConfigError` with one line per problem, each naming the key.
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml

from hbserver.numbers import SYNTAX, NumberError, int_range, parse_int

ENV_PREFIX = "HBS_"
_PORT = int_range(1, 65535)

Check = Callable[[Any], "str | None"]


class ConfigError(Exception):
    """An invalid configuration; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# --- checks -------------------------------------------------------------------------------

def _url(schemes: tuple[str, ...] = ("http", "https"), allow_empty: bool = False) -> Check:
    def check(value: str) -> str | None:
        if allow_empty and value == "":
            return None
        try:
            parts = urlsplit(value)
        except ValueError:
            return f"not a URL: {value!r}"
        if parts.scheme not in schemes or not (parts.netloc or parts.scheme == "unix"):
            return f"not a URL: {value!r}"
        return None

    return check


def _at_least(minimum: float) -> Check:
    def check(value: float) -> str | None:
        return None if value >= minimum else f"must be >= {minimum}, got {value}"

    return check


def _above(minimum: float) -> Check:
    def check(value: float) -> str | None:
        return None if value > minimum else f"must be > {minimum}, got {value}"

    return check


def _fraction(value: float) -> str | None:
    return None if 0 <= value <= 1 else f"must be between 0 and 1, got {value}"


def _port(value: int) -> str | None:
    return None if 0 <= value <= 65535 else f"must be a port number 0-65535, got {value}"


def _cookie_size(value: int) -> str | None:
    if value == 0 or value >= 500:
        return None
    return f"must be 0 (unlimited) or >= 500, got {value}"


MAX_UID_COOKIES = 30  # PBS-Java's bound on setuid.number-of-uid-cookies


def _uid_cookie_count(value: int) -> str | None:
    if 1 <= value <= MAX_UID_COOKIES:
        return None
    return f"must be between 1 and {MAX_UID_COOKIES}, got {value}"


def _metric_namespace(value: str) -> str | None:
    if re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", value):
        return None
    return f"not a valid Prometheus name: {value!r}"


def _metric_subsystem(value: str) -> str | None:
    return None if value == "" else _metric_namespace(value)


def _http_path(value: str) -> str | None:
    if value.startswith("/") and "?" not in value and " " not in value:
        return None
    return f"must be a path starting with '/': {value!r}"


def _bidder_groups(value: list[list[str]]) -> str | None:
    for group in value:
        for code in group:
            if not code:
                return "bidder codes must not be empty"
    return None


def _checked(default: Any, check: Check) -> Any:
    return field(default=default, metadata={"check": check})


def _checked_factory(factory: Callable[[], Any], check: Check) -> Any:
    return field(default_factory=factory, metadata={"check": check})


URL = _url()
OPTIONAL_URL = _url(allow_empty=True)

# --- the schema -----------------------------------------------------------------------------

@dataclass(frozen=True)
class HttpTimeouts:
    """How long a client may take before it is disconnected (slow or idle clients)."""

    header_seconds: float = _checked(10, _above(0))
    body_seconds: float = _checked(30, _above(0))
    idle_seconds: float = _checked(60, _above(0))


@dataclass(frozen=True)
class Admin:
    port: int = _checked(0, _port)  # 0 = the operations endpoints stay on the main port


@dataclass(frozen=True)
class StoredRequestAdmin:
    enabled: bool = False
    path: str = _checked("/storedrequests/openrtb2", _http_path)


@dataclass(frozen=True)
class StoredRequestAmpAdmin:
    enabled: bool = False
    path: str = _checked("/storedrequests/amp", _http_path)


@dataclass(frozen=True)
class CacheInvalidationAdmin:
    enabled: bool = False
    path: str = _checked("/cache/invalidate", _http_path)


@dataclass(frozen=True)
class AdminEndpoints:
    """PBS-Java's ``admin-endpoints`` that change the in-memory caches (hbserver.endpoints.stored_admin):
    served on ``admin.port`` only, never the public port."""

    storedrequest: StoredRequestAdmin = field(default_factory=StoredRequestAdmin)
    storedrequest_amp: StoredRequestAmpAdmin = field(default_factory=StoredRequestAmpAdmin)
    cache_invalidation: CacheInvalidationAdmin = field(default_factory=CacheInvalidationAdmin)


@dataclass(frozen=True)
class AccessLog:
    sample_rate: float = _checked(0.0, _fraction)


@dataclass(frozen=True)
class Logging:
    level: Literal["debug", "info", "warning", "error"] = "info"
    access: AccessLog = field(default_factory=AccessLog)


@dataclass(frozen=True)
class OptoutCookie:
    name: str = ""
    value: str = ""


@dataclass(frozen=True)
class HostCookie:
    domain: str = ""
    family: str = ""
    cookie_name: str = ""
    ttl_days: int = _checked(90, _at_least(1))
    max_cookie_size_bytes: int = _checked(0, _cookie_size)
    optout_cookie: OptoutCookie = field(default_factory=OptoutCookie)
    # PBS-Java's setuid.number-of-uid-cookies: uids, uids2, ... uidsN, each within max_cookie_size_bytes
    number_of_uid_cookies: int = _checked(1, _uid_cookie_count)
    # uids cookies (all parts together) larger than this count in uids_cookie_size_over_threshold (0 = off)
    size_threshold_bytes: int = _checked(0, _at_least(0))


def _bits(limit: int) -> Check:
    def check(value: int) -> str | None:
        return None if 0 <= value <= limit else f"must be between 0 and {limit}, got {value}"

    return check


def _country_codes(value: list[str] | None) -> str | None:
    for code in value or ():
        if not re.fullmatch(r"[A-Za-z]{3}", code):
            return f"country codes are ISO 3166-1 alpha-3 (three letters), got {code!r}"
    return None


def _hp(value: int) -> str | None:
    return None if value in (0, 1) else f"must be 0 or 1, got {value}"


# PBS-Go's gdpr.eea_countries default: where an absent gdpr signal is read as "GDPR applies".
EEA_COUNTRIES = (
    "ALA AUT BEL BGR HRV CYP CZE DNK EST FIN FRA GUF DEU GIB GRC GLP GGY HUN ISL IRL IMN ITA JEY LVA "
    "LIE LTU LUX MLT MTQ MYT NLD NOR POL PRT REU ROU BLM MAF SPM SVK SVN ESP SWE GBR"
).split()
TCF_PURPOSES = range(1, 11)


@dataclass(frozen=True)
class TcfPurpose:
    """Host enforcement of one TCF purpose (PBS-Go ``gdpr.tcf2.purposeN``)."""

    enforce_purpose: bool = True
    enforce_vendors: bool = True
    enforce_algo: Literal["full", "basic"] = "full"
    vendor_exceptions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PurposeOneTreatment:
    enabled: bool = True
    access_allowed: bool = True


@dataclass(frozen=True)
class SpecialFeature:
    enforce: bool = True
    vendor_exceptions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Tcf2:
    """PBS-Go's ``gdpr.tcf2``: host-level TCF v2 enforcement, overridable per account."""

    enabled: bool = True
    purpose1: TcfPurpose = field(default_factory=TcfPurpose)
    purpose2: TcfPurpose = field(default_factory=TcfPurpose)
    purpose3: TcfPurpose = field(default_factory=TcfPurpose)
    purpose4: TcfPurpose = field(default_factory=TcfPurpose)
    purpose5: TcfPurpose = field(default_factory=TcfPurpose)
    purpose6: TcfPurpose = field(default_factory=TcfPurpose)
    purpose7: TcfPurpose = field(default_factory=TcfPurpose)
    purpose8: TcfPurpose = field(default_factory=TcfPurpose)
    purpose9: TcfPurpose = field(default_factory=TcfPurpose)
    purpose10: TcfPurpose = field(default_factory=TcfPurpose)
    purpose_one_treatment: PurposeOneTreatment = field(default_factory=PurposeOneTreatment)
    special_feature1: SpecialFeature = field(default_factory=SpecialFeature)

    def purpose(self, n: int) -> TcfPurpose:
        return getattr(self, f"purpose{n}")


IAB_VENDORLIST_TEMPLATE = "https://vendor-list.consensu.org/v{spec}/archives/vendor-list-v{{VERSION}}.json"


def _vendorlist_template(value: str) -> str | None:
    """Empty (no fetching) or an http(s) URL holding PBS-Java's ``{VERSION}`` placeholder."""
    if value == "":
        return None
    if "{VERSION}" not in value:
        return f"must contain {{VERSION}} (where the list's version goes): {value!r}"
    return None if URL(value.replace("{VERSION}", "1")) is None else f"not an http(s) URL template: {value!r}"


@dataclass(frozen=True)
class VendorListSpec:
    """One GVL specification's archive (PBS-Java's ``gdpr.vendorlist.v2``/``v3``); empty = no fetching."""

    http_endpoint_template: str = _checked(IAB_VENDORLIST_TEMPLATE.format(spec=3), _vendorlist_template)


@dataclass(frozen=True)
class ExponentialBackoff:
    """PBS-Java's ``retry-policy.exponential-backoff``: the wait before a failed version is fetched again."""

    delay_millis: int = _checked(60000, _at_least(1))
    max_delay_millis: int = _checked(120000, _at_least(1))
    factor: float = _checked(1.1, _at_least(1))
    jitter: float = _checked(0.2, _fraction)


@dataclass(frozen=True)
class VendorListRetry:
    exponential_backoff: ExponentialBackoff = field(default_factory=ExponentialBackoff)


@dataclass(frozen=True)
class VendorListConfig:
    """PBS-Java's ``gdpr.vendorlist``: where each version a consent string names is fetched from."""

    default_timeout_ms: int = _checked(2000, _at_least(1))
    v2: VendorListSpec = field(default_factory=lambda: VendorListSpec(IAB_VENDORLIST_TEMPLATE.format(spec=2)))
    v3: VendorListSpec = field(default_factory=VendorListSpec)
    retry_policy: VendorListRetry = field(default_factory=VendorListRetry)


@dataclass(frozen=True)
class Gdpr:
    enabled: bool = True
    default_value: Literal["0", "1"] = "0"
    host_vendor_id: int = _checked(0, _bits(0xFFFF))
    vendorlist_file: str = ""  # the fallback list (every version, until the named one is fetched)
    vendorlist: VendorListConfig = field(default_factory=VendorListConfig)
    non_standard_publishers: list[str] = field(default_factory=list)  # publisher ids never enforced
    eea_countries: list[str] = _checked_factory(lambda: list(EEA_COUNTRIES), _country_codes)
    tcf2: Tcf2 = field(default_factory=Tcf2)


@dataclass(frozen=True)
class Ccpa:
    enforce: bool = False


@dataclass(frozen=True)
class Lmt:
    enforce: bool = True  # device.lmt=1 scrubs device ids, IP and user demographics (PBS-Go)


@dataclass(frozen=True)
class SChainNode:
    """PBS-Go ``host_schain_node``: appended to every bidder's ``source.schain``; empty asi = off."""

    asi: str = ""
    sid: str = ""
    rid: str = ""
    name: str = ""
    domain: str = ""
    hp: int = _checked(1, _hp)


@dataclass(frozen=True)
class CoopSync:
    default: bool = False


DEFAULT_REDIRECT_URL = (
    "{{.ExternalURL}}/setuid?bidder={{.SyncerKey}}&gdpr={{.GDPR}}&gdpr_consent={{.GDPRConsent}}"
    "&gpp={{.GPP}}&gpp_sid={{.GPPSID}}&f={{.SyncType}}&uid={{.UserMacro}}"
)


@dataclass(frozen=True)
class UserSync:
    external_url: str = _checked("", OPTIONAL_URL)
    redirect_url: str = DEFAULT_REDIRECT_URL
    coop_sync: CoopSync = field(default_factory=CoopSync)
    priority_groups: list[list[str]] = _checked_factory(list, _bidder_groups)


@dataclass(frozen=True)
class FilesystemStore:
    enabled: bool = True
    directorypath: str = "./stored_requests/data/by_id"


@dataclass(frozen=True)
class PollForUpdates:
    """How often the database is asked what changed; ``query``/``amp_query`` are PBS-Go's templates
    (rows ``id, data, type`` changed since ``$LAST_UPDATED``; empty or ``null`` data is a deletion)."""

    refresh_rate_seconds: int = _checked(30, _at_least(1))
    timeout_ms: int = _checked(0, _at_least(0))  # 0: the refresh rate, at most 30 s
    query: str = ""
    amp_query: str = ""


@dataclass(frozen=True)
class DatabaseConnection:
    """PBS-Go's ``database.connection``: the same keys select MySQL / MariaDB or PostgreSQL."""

    driver: Literal["", "mysql", "postgres"] = ""
    dbname: str = ""
    host: str = ""
    port: int = _checked(0, _port)  # 0: the driver's (3306, 5432)
    user: str = ""
    password: str = ""


@dataclass(frozen=True)
class DatabaseFetcher:
    """PBS-Go's ``database.fetcher``: rows ``id, data, type`` ('request' or 'imp') for the ids in
    ``$REQUEST_ID_LIST`` and ``$IMP_ID_LIST``; empty = hbserver's tables (deploy/*-init.sql)."""

    query: str = ""
    amp_query: str = ""


@dataclass(frozen=True)
class DatabaseStore:
    dsn: str = _checked("", _url(("postgres", "postgresql"), allow_empty=True))
    connection: DatabaseConnection = field(default_factory=DatabaseConnection)
    fetcher: DatabaseFetcher = field(default_factory=DatabaseFetcher)
    poll_for_updates: PollForUpdates = field(default_factory=PollForUpdates)


@dataclass(frozen=True)
class HttpStore:
    endpoint: str = _checked("", OPTIONAL_URL)
    amp_endpoint: str = _checked("", OPTIONAL_URL)


@dataclass(frozen=True)
class HttpEvents:
    """PBS-Go's ``stored_requests.http_events``: saves and deletes polled from a host's endpoint into the
    in-memory cache (hbserver.stores.stored.events); on when ``endpoint`` (or ``amp_endpoint``, AMP's
    cache) and ``refresh_rate_seconds`` are both set."""

    endpoint: str = _checked("", OPTIONAL_URL)
    amp_endpoint: str = _checked("", OPTIONAL_URL)
    refresh_rate_seconds: int = _checked(0, _at_least(0))
    timeout_ms: int = _checked(0, _at_least(0))


@dataclass(frozen=True)
class InMemoryCache:
    type: Literal["lru", "none"] = "lru"
    size: int = _checked(10000, _at_least(1))
    ttl_seconds: int = _checked(300, _at_least(0))


@dataclass(frozen=True)
class StoredRequests:
    filesystem: FilesystemStore = field(default_factory=FilesystemStore)
    database: DatabaseStore = field(default_factory=DatabaseStore)
    http: HttpStore = field(default_factory=HttpStore)
    in_memory_cache: InMemoryCache = field(default_factory=InMemoryCache)
    http_events: HttpEvents = field(default_factory=HttpEvents)


@dataclass(frozen=True)
class VideoFilesystemStore:
    enabled: bool = False
    directorypath: str = ""


@dataclass(frozen=True)
class StoredVideoRequests:
    """PBS-Go's ``stored_video_req`` (the stored requests ``/openrtb2/video``'s ``storedrequestid``
    names): here its filesystem backend only, ``<directorypath>/stored_requests/<id>.json``."""

    filesystem: VideoFilesystemStore = field(default_factory=VideoFilesystemStore)


@dataclass(frozen=True)
class Video:
    """PBS-Go's ``video``: the deprecated ``/openrtb2/video`` endpoint answers 501 unless enabled."""

    enable_deprecated_endpoint: bool = False


@dataclass(frozen=True)
class AccountEvents:
    enabled: bool = True
    # PBS-Go's VAST tracker injection settings, accepted and kept: PBS-Go wires them to nothing yet
    # (config/events.go: "still under development", prebid-server issue 1725), and neither does hbserver.
    default_url: str = ""
    vast_events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class AccountCookieSync:
    default_limit: int = _checked(0, _at_least(0))
    max_limit: int = _checked(0, _at_least(0))
    default_coop_sync: bool | None = None
    priority_groups: list[list[str]] = _checked_factory(list, _bidder_groups)
    priority_groups_only: bool = False
    disabled_iframe_bidders: list[str] = field(default_factory=list)  # PBS-Go; "*" = every bidder
    pri: list[str] = field(default_factory=list)  # PBS-Java's prioritized coop-sync bidders


@dataclass(frozen=True)
class AccountChannels:
    """Per-channel switches (PBS-Go ``AccountChannel``); None = not set here."""

    amp: bool | None = None
    app: bool | None = None
    video: bool | None = None
    web: bool | None = None
    dooh: bool | None = None


@dataclass(frozen=True)
class AccountPurposeEid:
    """PBS-Java's ``purposes.p4.eid`` (read for purpose 4 only; hbserver.stores.accounts.eid_transition):
    ``activity_transition`` true gives an account whose ``allowactivities`` has ``transmitUfpd`` and no
    ``transmitEids`` the ``transmitUfpd`` rules for ``transmitEids`` too."""

    activity_transition: bool | None = None


@dataclass(frozen=True)
class AccountTcfPurpose:
    """An account's override of one purpose; None (or "") = the host's value."""

    enforce_purpose: bool | None = None
    enforce_vendors: bool | None = None
    enforce_algo: Literal["", "full", "basic"] = ""
    vendor_exceptions: list[str] | None = None
    eid: AccountPurposeEid = field(default_factory=AccountPurposeEid)


@dataclass(frozen=True)
class AccountPurposeOneTreatment:
    enabled: bool | None = None
    access_allowed: bool | None = None


@dataclass(frozen=True)
class AccountSpecialFeature:
    enforce: bool | None = None
    vendor_exceptions: list[str] | None = None


@dataclass(frozen=True)
class AccountGdpr:
    """PBS-Go's account ``gdpr`` block: overrides of the host's ``gdpr.tcf2`` for one account."""

    enabled: bool | None = None
    integration_enabled: AccountChannels = field(default_factory=AccountChannels)
    channel_enabled: AccountChannels = field(default_factory=AccountChannels)
    basic_enforcement_vendors: list[str] = field(default_factory=list)
    purpose1: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose2: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose3: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose4: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose5: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose6: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose7: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose8: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose9: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose10: AccountTcfPurpose = field(default_factory=AccountTcfPurpose)
    purpose_one_treatment: AccountPurposeOneTreatment = field(default_factory=AccountPurposeOneTreatment)
    special_feature1: AccountSpecialFeature = field(default_factory=AccountSpecialFeature)
    eea_countries: list[str] | None = _checked(None, _country_codes)

    def purpose(self, n: int) -> AccountTcfPurpose:
        return getattr(self, f"purpose{n}")


@dataclass(frozen=True)
class AccountCcpa:
    enabled: bool | None = None
    integration_enabled: AccountChannels = field(default_factory=AccountChannels)
    channel_enabled: AccountChannels = field(default_factory=AccountChannels)


@dataclass(frozen=True)
class AnonIPv4:
    anon_keep_bits: int = _checked(24, _bits(32))


@dataclass(frozen=True)
class AnonIPv6:
    anon_keep_bits: int = _checked(56, _bits(128))


@dataclass(frozen=True)
class CookieDeprecation:
    """PBS-Go's account ``privacy.privacysandbox.cookiedeprecation`` (config/account.go)."""

    enabled: bool = False
    ttl_sec: int = _checked(604800, _at_least(0))  # the receive-cookie-deprecation cookie's lifetime
    # PBS-Go's account JSON spelling (CookieDeprecation has no json tags: the field TTLSec); wins when set
    ttlsec: int | None = _checked(None, lambda v: None if v is None or v >= 0 else f"must be at least 0, got {v}")

    @property
    def ttl_seconds(self) -> int:
        return self.ttl_sec if self.ttlsec is None else self.ttlsec


@dataclass(frozen=True)
class PrivacySandbox:
    """PBS-Go's account ``privacy.privacysandbox``: Topics into ``user.data``, and the CHIPS label."""

    topicsdomain: str = ""  # empty: Sec-Browsing-Topics is ignored
    cookiedeprecation: CookieDeprecation = field(default_factory=CookieDeprecation)


def _dsa_default(value: Any) -> str | None:
    from hbserver.auction.bids.dsa import default_problem  # the auction's reading of regs.ext.dsa

    return default_problem(value)


@dataclass(frozen=True)
class AccountDsa:
    """PBS-Go's account ``privacy.dsa`` (config/account.go ``AccountDSA``): ``default`` is the
    ``regs.ext.dsa`` a request without one gets, as a JSON string (PBS-Go; PBS-Java's object is read
    too); ``gdpr_only``: only when GDPR is enforced for the request (:mod:`hbserver.auction.bids.dsa`)."""

    default: Any = _checked(None, _dsa_default)
    gdpr_only: bool = False


def _us_states(value: list[str]) -> str | None:
    for state in value:
        if not isinstance(state, str) or len(state) != 2 or not state.isascii() or not state.isalpha():
            return f"US states are two-letter codes (CA, NY, ...), got {state!r}"
    return None


@dataclass(frozen=True)
class AccountGeo:
    """hbserver's own (no Prebid Server has it): where a bidder gets no precise geo
    (hbserver.auction.exchange.privacy)."""

    precise_geo_blocked_states: list[str] = _checked_factory(list, _us_states)


@dataclass(frozen=True)
class AccountPrivacy:
    allowactivities: dict[str, Any] = field(default_factory=dict)
    geo: AccountGeo = field(default_factory=AccountGeo)
    dsa: AccountDsa = field(default_factory=AccountDsa)
    ipv4: AnonIPv4 = field(default_factory=AnonIPv4)
    ipv6: AnonIPv6 = field(default_factory=AnonIPv6)
    # PBS-Java's privacy modules, e.g. [{"code": "iab.usgeneral", "enabled": true, "config": {...}}]
    modules: list[dict[str, Any]] = field(default_factory=list)
    privacysandbox: PrivacySandbox = field(default_factory=PrivacySandbox)


def _between(low: int, high: int, unit: str = "") -> Check:
    def check(value: int) -> str | None:
        return None if low <= value <= high else f"must be between {low} and {high}{unit}, got {value}"

    return check


@dataclass(frozen=True)
class AccountFloorFetch:
    """PBS-Go's account ``price_floors.fetch``: a floors provider polled for the account."""

    enabled: bool = False
    url: str = _checked("", OPTIONAL_URL)
    timeout_ms: int = _checked(3000, _between(11, 9999, " ms"))
    max_file_size_kb: int = _checked(100, _at_least(0))  # 0 = no limit beyond price_floors.fetcher
    max_rules: int = _checked(1000, _at_least(0))  # 0 = no limit
    max_age_sec: int = _checked(86400, _at_least(600))
    period_sec: int = _checked(3600, _at_least(300))
    max_schema_dims: int = _checked(0, _between(0, 19))


@dataclass(frozen=True)
class AccountPriceFloors:
    """PBS-Go's account ``price_floors`` (its names and defaults, except ``enabled``: on, as PBS-Java's
    default account, so a floor a publisher sends is enforced without a host setting)."""

    enabled: bool = True
    enforce_floors_rate: int = _checked(100, _between(0, 100))
    adjust_for_bid_adjustment: bool = True
    enforce_deal_floors: bool = False
    use_dynamic_data: bool = False
    max_rules: int = _checked(100, _at_least(0))
    max_schema_dims: int = _checked(3, _between(0, 20))
    fetch: AccountFloorFetch = field(default_factory=AccountFloorFetch)


@dataclass(frozen=True)
class AlternateBidder:
    """One bidder's ``alternatebiddercodes`` entry: the seats it may bid under (``*`` = any)."""

    enabled: bool = False
    allowedbiddercodes: list[str] | None = None


@dataclass(frozen=True)
class AccountAlternateBidderCodes:
    """PBS-Go's account ``alternatebiddercodes``; a request's ``ext.prebid.alternatebiddercodes`` wins."""

    enabled: bool = False
    bidders: dict[str, AlternateBidder] = field(default_factory=dict)


@dataclass(frozen=True)
class AccountHooksAdmin:
    """PBS-Java's account ``hooks.admin``: ``module_execution`` maps a module code to whether its hooks
    run for the account (``false``: none of them, the host's plan included; ``true``: as without)."""

    module_execution: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class AccountHooks:
    """An account's ``hooks`` (PBS-Go): its execution plan and its modules' account-level settings."""

    modules: dict[str, Any] = field(default_factory=dict)
    execution_plan: dict[str, Any] | None = None
    admin: AccountHooksAdmin = field(default_factory=AccountHooksAdmin)


ValidationMode = Literal["skip", "enforce", "warn"]


def _optional_size(value: int | None) -> str | None:
    return None if value is None or value >= 0 else f"must be >= 0, got {value}"


@dataclass(frozen=True)
class Validations:
    """PBS-Go's host ``validations`` (config/config.go ``Validations``) and hbserver's own rules beyond it
    (``adm_or_nurl``, ``media_type``, ``vast_protocol``): each ``skip``, ``warn`` or ``enforce``
    (:mod:`hbserver.auction.bids.validation`). A max size of 0 means the imp's largest banner size."""

    banner_creative_max_size: ValidationMode = "skip"
    secure_markup: ValidationMode = "skip"
    max_creative_width: int = _checked(0, _at_least(0))
    max_creative_height: int = _checked(0, _at_least(0))
    adm_or_nurl: ValidationMode = "skip"  # hbserver's own: a bid with neither adm nor nurl
    media_type: ValidationMode = "skip"  # hbserver's own: a bid of a media type its imp does not offer
    vast_protocol: ValidationMode = "skip"  # hbserver's own: a VAST bid's protocol not in the imp's protocols


@dataclass(frozen=True)
class AccountValidations:
    """An account's ``validations`` (PBS-Go's account keys, hbserver's own beside them): each key set
    overrides the host's ``validations``; unset (null) keeps the host's."""

    banner_creative_max_size: ValidationMode | None = None
    secure_markup: ValidationMode | None = None
    max_creative_width: int | None = _checked(None, _optional_size)
    max_creative_height: int | None = _checked(None, _optional_size)
    adm_or_nurl: ValidationMode | None = None
    media_type: ValidationMode | None = None
    vast_protocol: ValidationMode | None = None


def _profiles_problem(value: dict[str, Any]) -> str | None:
    """An account's ``auction.profiles``: ``limit`` an integer >= 0, ``fail_on_unknown`` (or PBS-Java's
    alias ``fail-on-unknown``) a boolean, ``timeout_ms`` (``timeout-ms``) an integer > 0."""
    limit = value.get("limit")
    if limit is not None and (type(limit) is not int or limit < 0):
        return f"limit must be an integer >= 0, got {limit!r}"
    for key in ("fail_on_unknown", "fail-on-unknown"):
        if value.get(key) is not None and type(value[key]) is not bool:
            return f"{key} must be true or false, got {value[key]!r}"
    for key in ("timeout_ms", "timeout-ms"):
        timeout = value.get(key)
        if timeout is not None and (type(timeout) is not int or timeout <= 0):
            return f"{key} must be an integer > 0, got {timeout!r}"
    return None


@dataclass(frozen=True)
class AccountAuctionCache:
    """PBS-Java's account ``auction.cache``: ``enabled: false`` caches no bids, whatever the request asks."""

    enabled: bool = True


@dataclass(frozen=True)
class AccountAuctionTargeting:
    """PBS-Java's account ``auction.targeting``: each flag set fills the one a request's
    ``ext.prebid.targeting`` leaves out (hbserver.auction.request.account_targeting)."""

    includewinners: bool | None = None
    includebidderkeys: bool | None = None
    includeformat: bool | None = None
    preferdeals: bool | None = None
    alwaysincludedeals: bool | None = None
    prefix: str = ""


@dataclass(frozen=True)
class AccountAuction:
    """PBS-Java's account ``auction`` keys hbserver applies."""

    impression_limit: int = _checked(0, _at_least(0))  # keep the first N imps (0: all)
    secondary_bidders: list[str] = field(default_factory=list)  # the answer does not wait for these
    # PBS-Java's limit and fail_on_unknown (alias fail-on-unknown), read by hbserver.auction.request.profiles
    profiles: dict[str, Any] = _checked_factory(dict, _profiles_problem)
    # PBS-Java's targeting defaults (hbserver.auction.request.account_targeting); where the PBS-Go key
    # of the same meaning (AccountSettings) is also set, the PBS-Go key wins
    price_granularity: str = ""  # a granularity name for requests naming none ("": medium)
    targeting: AccountAuctionTargeting = field(default_factory=AccountAuctionTargeting)
    truncate_target_attr: int | None = None
    default_integration: str = ""
    bid_rounding: str = ""
    preferredmediatype: dict[str, str] = field(default_factory=dict)
    cache: AccountAuctionCache = field(default_factory=AccountAuctionCache)


@dataclass(frozen=True)
class AccountCacheTtl:
    """PBS-Go's account ``cache_ttl``: cached bids' TTL by media type, seconds (0: the host's default)."""

    banner: int = _checked(0, _at_least(0))
    video: int = _checked(0, _at_least(0))
    native: int = _checked(0, _at_least(0))
    audio: int = _checked(0, _at_least(0))


@dataclass(frozen=True)
class AccountVtrack:
    ttl: int = _checked(0, _at_least(0))  # PBS-Java: caps /vtrack puts' TTL (0: no cap)


def _auction_events_problem(value: dict[str, Any] | None) -> str | None:
    if value is not None and not all(isinstance(v, bool) for v in value.values()):
        return "every channel must be true or false"
    return None


MAX_ACCOUNT_COLLECTOR_HEADERS = 16
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_OWN_HEADERS = frozenset({"content-type", "content-length", "content-encoding", "host", "transfer-encoding"})


def _collector_headers(value: dict[str, Any]) -> str | None:
    """An account collector's ``headers``: at most 16, HTTP token names (not the ones hbserver sets),
    string values without line breaks."""
    if len(value) > MAX_ACCOUNT_COLLECTOR_HEADERS:
        return f"at most {MAX_ACCOUNT_COLLECTOR_HEADERS} headers, got {len(value)}"
    for name, text in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name) or name.lower() in _OWN_HEADERS:
            return f"not a header name an account may set: {name!r}"
        if not isinstance(text, str) or "\r" in text or "\n" in text or len(text) > 4096:
            return f"{name}: a header value is a string of one line (at most 4096 characters)"
    return None


@dataclass(frozen=True)
class AccountAnalyticsHttp:
    """hbserver's own (PBS-Go #3388, #1470): the account's HTTP collector of analytics records
    (hbserver.analytics.account_http); an empty ``url`` sends nothing. Used only when the host's
    ``analytics.account_http.enabled`` is on."""

    url: str = _checked("", OPTIONAL_URL)
    headers: dict[str, Any] = _checked_factory(dict, _collector_headers)
    batch_size: int = _checked(100, _at_least(1))  # records per POST (at most the host's max_batch_size)
    flush_interval_ms: int = _checked(5000, _at_least(100))  # a batch under way leaves at least this often
    sampling_rate: float = _checked(1.0, _fraction)  # share of the account's records sent
    gvl_vendor_id: int = _checked(0, _at_least(0))  # the collector's TCF vendor (purpose 7); 0: none


@dataclass(frozen=True)
class AccountAnalytics:
    # PBS-Java's per-channel switch for event URLs (pbjs = web); None: PBS-Go's rule, events.enabled alone
    auction_events: dict[str, Any] | None = _checked(None, _auction_events_problem)
    http: AccountAnalyticsHttp = field(default_factory=AccountAnalyticsHttp)  # hbserver's own collector


@dataclass(frozen=True)
class AccountJavaSettings:
    """PBS-Java's account ``settings`` block."""

    # PBS-Java's geo lookup switch (``geo-lookup`` too): false = no lookup for the account, true = a
    # lookup (with the host's geolocation.database); None = the host's file decides (hbserver's default;
    # PBS-Java's is off: a host wanting that sets account_defaults.settings.geo_lookup: false)
    geo_lookup: bool | None = None


@dataclass(frozen=True)
class AccountSettings:
    """An account's settings: ``account_defaults`` in the config, merged under each account file."""

    disabled: bool = False
    events: AccountEvents = field(default_factory=AccountEvents)
    debug_allow: bool = True
    cookie_sync: AccountCookieSync = field(default_factory=AccountCookieSync)
    privacy: AccountPrivacy = field(default_factory=AccountPrivacy)
    gdpr: AccountGdpr = field(default_factory=AccountGdpr)
    ccpa: AccountCcpa = field(default_factory=AccountCcpa)
    price_floors: AccountPriceFloors = field(default_factory=AccountPriceFloors)
    alternatebiddercodes: AccountAlternateBidderCodes | None = None  # None = not set (PBS-Go's nil)
    bidadjustments: dict[str, Any] | None = None  # ext.prebid.bidadjustments' shape; the request's rules win
    default_bid_limit: int = _checked(0, _at_least(0))  # multibid maxbids for bidders without an entry
    hooks: AccountHooks = field(default_factory=AccountHooks)
    validations: AccountValidations = field(default_factory=AccountValidations)
    auction: AccountAuction = field(default_factory=AccountAuction)
    cache_ttl: AccountCacheTtl = field(default_factory=AccountCacheTtl)  # PBS-Go; PBS-Java's auction.*_cache_ttl
    vtrack: AccountVtrack = field(default_factory=AccountVtrack)
    analytics: AccountAnalytics = field(default_factory=AccountAnalytics)
    # PBS-Go's targeting and integration keys (hbserver.auction.request.account_targeting)
    targeting_prefix: str = ""  # the key prefix for requests naming none ("": hb)
    truncate_target_attr: int | None = None  # targeting key length (None or <= 0: 20)
    bid_rounding: str = ""  # price bucket rounding: down, up, true, timesplit ("" or unknown: down)
    preferredmediatype: dict[str, str] = field(default_factory=dict)  # bidder -> its media type of multi-format imps
    default_integration: str = ""  # ext.prebid.integration for /openrtb2/auction requests without one
    settings: AccountJavaSettings = field(default_factory=AccountJavaSettings)  # PBS-Java's: geo_lookup


@dataclass(frozen=True)
class CacheMemory:
    max_bytes: int = _checked(268435456, _at_least(1024))


def host_port(entry: str) -> tuple[str, int]:
    """``"10.0.0.1:7000"`` or ``"[::1]:7000"`` -> (host, port); ValueError saying what is wrong."""
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ValueError(f"not host:port: {entry!r}")
        port_text = rest[1:]
    else:
        host, _, port_text = entry.rpartition(":")
        if ":" in host:
            raise ValueError(f"an IPv6 address needs brackets, as in [::1]:7000: {entry!r}")
    if not host or not re.fullmatch(r"[A-Za-z0-9_.:%-]+", host):
        raise ValueError(f"not host:port: {entry!r}")
    try:
        return host, parse_int(port_text, _PORT, signs="")
    except NumberError as exc:
        if exc.reason == SYNTAX:
            raise ValueError(f"not host:port: {entry!r}") from None
        raise ValueError(f"port must be 1-65535: {entry!r}") from None


def _host_ports(value: list[str]) -> str | None:
    for entry in value:
        try:
            host_port(entry)
        except ValueError as exc:
            return str(exc)
    return None


@dataclass(frozen=True)
class CacheRedisCluster:
    """Seed nodes of a Redis Cluster (PBC-Java's ``spring.redis.cluster.nodes``); empty = one Redis."""

    nodes: list[str] = _checked_factory(list, _host_ports)


@dataclass(frozen=True)
class CacheRedis:
    url: str = _checked("redis://127.0.0.1:6379/0", _url(("redis", "rediss", "unix")))
    cluster: CacheRedisCluster = field(default_factory=CacheRedisCluster)


@dataclass(frozen=True)
class CacheRemote:
    url: str = _checked("", OPTIONAL_URL)


@dataclass(frozen=True)
class Cache:
    store: Literal["memory", "redis", "remote"] = "memory"
    memory: CacheMemory = field(default_factory=CacheMemory)
    redis: CacheRedis = field(default_factory=CacheRedis)
    remote: CacheRemote = field(default_factory=CacheRemote)
    default_ttl_seconds: int = _checked(300, _at_least(1))
    max_ttl_seconds: int = _checked(3600, _at_least(1))
    max_value_bytes: int = _checked(262144, _at_least(1))
    max_num_values: int = _checked(10, _at_least(1))
    serve_endpoint: bool = True
    public_url: str = _checked("", OPTIONAL_URL)
    expected_millis: int = _checked(10, _at_least(0))


@dataclass(frozen=True)
class AuctionTimeouts:
    default: int = _checked(1000, _at_least(1))
    max: int = _checked(5000, _at_least(1))


@dataclass(frozen=True)
class Currency:
    """Server-side currency rates (Prebid's currency-file format); no URL = no server rates."""

    fetch_url: str = _checked("", OPTIONAL_URL)
    fetch_interval_seconds: int = _checked(1800, _at_least(1))
    stale_rates_seconds: int = _checked(86400, _at_least(1))


@dataclass(frozen=True)
class FloorsFetcher:
    """PBS-Go's ``price_floors.fetcher``: bounds for the floors provider data of all accounts."""

    cache_size_mb: int = _checked(64, _at_least(1))  # fetched floors data kept, all accounts together
    worker: int = _checked(20, _at_least(1))  # fetches at the same time
    capacity: int = _checked(20000, _at_least(1))  # provider URLs tracked (queue length)
    max_retries: int = _checked(10, _at_least(0))  # failed fetches retried before waiting a period


@dataclass(frozen=True)
class PriceFloors:
    """PBS-Go's host ``price_floors`` switch (on by default here; accounts can still turn it off)."""

    enabled: bool = True
    fetcher: FloorsFetcher = field(default_factory=FloorsFetcher)


@dataclass(frozen=True)
class Overload:
    """hbserver's load shedding (hbserver.overload): an auction or AMP request that has waited longer than
    ``max_wait_ms`` to be handled (or past its whole budget) is answered at once with no bids; 0 = off."""

    max_wait_ms: int = _checked(100, _at_least(0))


@dataclass(frozen=True)
class Amp:
    default_timeout_ms: int = _checked(1000, _at_least(1))
    timeout_adjustment_ms: int = _checked(100, _at_least(0))


@dataclass(frozen=True)
class SyncEndpoint:
    url: str = ""
    user_macro: str = ""


@dataclass(frozen=True)
class AdapterUserSync:
    key: str = ""
    enabled: bool = True
    support_cors: bool = False
    redirect: SyncEndpoint = field(default_factory=SyncEndpoint)
    iframe: SyncEndpoint = field(default_factory=SyncEndpoint)


@dataclass(frozen=True)
class AdapterXapi:
    """Rubicon's XAPI credentials (PBS-Go ``adapters.rubicon.xapi``), sent as HTTP Basic auth."""

    username: str = ""
    password: str = ""
    tracker: str = ""


@dataclass(frozen=True)
class AdapterConfig:
    disabled: bool = False
    endpoint: str = _checked("", OPTIONAL_URL)
    alias_of: str = ""
    gvl_vendor_id: int = _checked(0, _at_least(0))
    modifying_vast_xml_allowed: bool = True
    openrtb_version: Literal["2.5", "2.6"] = "2.5"
    usersync: AdapterUserSync = field(default_factory=AdapterUserSync)
    xapi: AdapterXapi = field(default_factory=AdapterXapi)
    # PBS-Go's per-adapter credentials (audienceNetwork's partner id and app secret); platform_id
    # replaces the definition's
    platform_id: str = ""
    app_secret: str = ""
    tmax_deduction_ms: int = _checked(0, _at_least(0))  # PBS-Java's tmax-deduction-ms: taken off its tmax


@dataclass(frozen=True)
class AnalyticsFile:
    filename: str = ""
    # hbserver: hbserver's records (CONTRACT §5); pbs: PBS-Go's filelogger objects (hbserver.analytics.pbs)
    format: Literal["hbserver", "pbs"] = "hbserver"


@dataclass(frozen=True)
class AnalyticsHttp:
    """JSON Lines batches POSTed to a collector; an empty endpoint turns the module off."""

    endpoint: str = _checked("", OPTIONAL_URL)
    batch_size: int = _checked(500, _at_least(1))
    flush_interval_seconds: float = _checked(5, _above(0))
    buffer_size: int = _checked(10000, _at_least(1))


def _go_duration(value: str) -> str | None:
    from hbserver.gounits import go_duration

    try:
        return None if go_duration(value) > 0 else f"must be a positive duration, got {value!r}"
    except ValueError as exc:
        return str(exc)


def _human_size(value: str) -> str | None:
    from hbserver.gounits import human_size

    try:
        return None if human_size(value) > 0 else f"must be a positive size, got {value!r}"
    except ValueError as exc:
        return str(exc)


@dataclass(frozen=True)
class AnalyticsBuffers:
    """PBS-Go's ``buffers`` of pubstack and agma: a batch leaves at ``size`` bytes, ``count`` events or
    ``timeout``, whichever comes first."""

    size: str = _checked("2MB", _human_size)
    count: int = _checked(100, _at_least(1))
    timeout: str = _checked("15m", _go_duration)


@dataclass(frozen=True)
class AnalyticsPubstack:
    """PBS-Go's ``analytics.pubstack`` (hbserver.analytics.pubstack)."""

    enabled: bool = False
    endpoint: str = _checked("https://s2s.pbstck.com/v1", URL)
    scopeid: str = "change-me"
    configuration_refresh_delay: str = _checked("2h", _go_duration)
    buffers: AnalyticsBuffers = field(default_factory=AnalyticsBuffers)  # PBS-Go's timeout "900s": 15m


@dataclass(frozen=True)
class AgmaEndpoint:
    url: str = _checked("https://go.pbs.agma-analytics.de/v1/prebid-server", URL)
    timeout: str = _checked("2s", _go_duration)
    gzip: bool = False


@dataclass(frozen=True)
class AgmaAccount:
    code: str = ""
    publisher_id: str = ""
    site_app_id: str = ""


@dataclass(frozen=True)
class AnalyticsAgma:
    """PBS-Go's ``analytics.agma`` (hbserver.analytics.agma)."""

    enabled: bool = False
    endpoint: AgmaEndpoint = field(default_factory=AgmaEndpoint)
    buffers: AnalyticsBuffers = field(default_factory=AnalyticsBuffers)
    accounts: list[AgmaAccount] = field(default_factory=list)


@dataclass(frozen=True)
class AnalyticsAccountHttp:
    """hbserver's own: the bounds of the accounts' own collectors (account ``analytics.http``), per
    worker (hbserver.analytics.account_http). Off, no account's collector is used."""

    enabled: bool = False
    max_collectors: int = _checked(100, _at_least(1))  # accounts with a collector at once; more: dropped
    max_queue_bytes: int = _checked(16 * 1024 * 1024, _at_least(1024))  # every collector's waiting records
    max_batch_size: int = _checked(1000, _at_least(1))  # caps an account's batch_size
    max_batch_bytes: int = _checked(1024 * 1024, _at_least(1024))  # a POST's body (a JSON array)
    timeout_ms: int = _checked(2000, _at_least(1))  # one POST, connection included


@dataclass(frozen=True)
class Analytics:
    file: AnalyticsFile = field(default_factory=AnalyticsFile)
    http: AnalyticsHttp = field(default_factory=AnalyticsHttp)
    pubstack: AnalyticsPubstack = field(default_factory=AnalyticsPubstack)
    agma: AnalyticsAgma = field(default_factory=AnalyticsAgma)
    account_http: AnalyticsAccountHttp = field(default_factory=AnalyticsAccountHttp)


@dataclass(frozen=True)
class Prometheus:
    enabled: bool = True
    path: str = _checked("/metrics", _http_path)
    namespace: str = _checked("hbserver", _metric_namespace)
    subsystem: str = _checked("", _metric_subsystem)


@dataclass(frozen=True)
class Metrics:
    prometheus: Prometheus = field(default_factory=Prometheus)


def _ipv4_networks(value: list[str]) -> str | None:
    from hbserver.web.client_ip import network_problems

    bad = network_problems(value, 4)
    return f"Invalid private IPv4 network: {','.join(repr(b) for b in bad)}" if bad else None


def _ipv6_networks(value: list[str]) -> str | None:
    from hbserver.web.client_ip import network_problems

    bad = network_problems(value, 6)
    return f"Invalid private IPv6 network: {','.join(repr(b) for b in bad)}" if bad else None


@dataclass(frozen=True)
class RequestValidation:
    """PBS-Go's ``request_validation``: the networks whose addresses are not taken as the client's
    (``True-Client-IP``, ``X-Forwarded-For``, ``X-Real-IP``, the peer; see hbserver.web.client_ip)."""

    ipv4_private_networks: list[str] = _checked_factory(
        lambda: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8"], _ipv4_networks
    )
    ipv6_private_networks: list[str] = _checked_factory(
        lambda: ["::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32"], _ipv6_networks
    )


@dataclass(frozen=True)
class Geolocation:
    """PBS-Java's ``geolocation`` (there a downloaded MaxMind file): here a local one (hbserver.geo)."""

    database: str = ""  # a MaxMind (GeoIP2/GeoLite2 City) file; "" = no geo lookup


@dataclass(frozen=True)
class Hooks:
    """PBS-Go's ``hooks``: modules (``modules.<vendor>.<module>``, each on with ``enabled: true``) and the
    execution plans (a mapping, or PBS-Java's JSON text of one); see :mod:`hbserver.hooks`."""

    enabled: bool = False
    modules: dict[str, Any] = field(default_factory=dict)
    host_execution_plan: Any = None
    default_account_execution_plan: Any = None


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 token
TRACES_SAMPLERS = ("parentbased_traceidratio", "traceidratio", "parentbased_always_on", "always_on",
                   "parentbased_always_off", "always_off")


def _string_map(what: str, names: re.Pattern[str] | None = None) -> Check:
    """A mapping of strings: keys matching ``names`` (when given), values on one line."""

    def check(value: dict[str, Any]) -> str | None:
        for key, item in value.items():
            if names is not None and not names.fullmatch(key):
                return f"not a valid {what} name: {key!r}"
            if not isinstance(item, str) or "\r" in item or "\n" in item:
                return f"{key}: must be a string on one line, got {_describe(item)}"
        return None

    return check


@dataclass(frozen=True)
class Tracing:
    """hbserver's OpenTelemetry traces (PBS has none; issue 46): OTLP/HTTP JSON to ``endpoint``. The keys
    follow OTel's environment variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _HEADERS, _TIMEOUT,
    OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, _ARG, OTEL_BSP_*); see
    hbserver.web.tracing."""

    enabled: bool = False
    endpoint: str = _checked("http://localhost:4318/v1/traces", URL)  # the full URL, /v1/traces included
    headers: dict[str, Any] = _checked_factory(dict, _string_map("header", _HEADER_NAME))
    timeout_ms: int = _checked(10000, _at_least(1))
    service_name: str = _checked("hbserver", lambda v: None if v.strip() else "must not be empty")
    resource_attributes: dict[str, Any] = _checked_factory(dict, _string_map("attribute"))
    sampler: Literal[TRACES_SAMPLERS] = "parentbased_traceidratio"  # type: ignore[valid-type]
    sampler_arg: float = _checked(1.0, _fraction)  # the ratio of the traceidratio samplers
    max_queue_size: int = _checked(2048, _at_least(1))  # spans waiting, per worker
    max_export_batch_size: int = _checked(512, _at_least(1))
    schedule_delay_ms: int = _checked(5000, _at_least(1))


@dataclass(frozen=True)
class TmaxAdjustments:
    """PBS-Go's ``tmax_adjustments``: with ``enabled`` and a minimum and at least one of the two
    durations set, each bidder is told the time left minus the network buffer and the response
    preparation time, and a call with less than the minimum left is not made (``tmax_timeout``)."""

    enabled: bool = False
    bidder_response_duration_min_ms: int = _checked(0, _at_least(0))
    bidder_network_latency_buffer_ms: int = _checked(0, _at_least(0))
    pbs_response_preparation_duration_ms: int = _checked(0, _at_least(0))


@dataclass(frozen=True)
class BidderTmax:
    """PBS-Java's ``auction.biddertmax`` (there min 50, max 5000, percent 100 by default; here the
    defaults change nothing: min 0, max 0 = no cap)."""

    min: int = _checked(0, _at_least(0))
    max: int = _checked(0, _at_least(0))
    percent: int = _checked(100, _between(1, 100))


@dataclass(frozen=True)
class AuctionProfiles:
    """PBS-Java's ``auction.profiles.timeout-ms``: how long a request without ``tmax`` waits for its
    profiles (one with a ``tmax`` waits that long; hbserver.auction.request.profiles.fetch_timeout_s)."""

    timeout_ms: int = _checked(100, _above(0))


@dataclass(frozen=True)
class Auction:
    """PBS-Java's ``auction`` section: the tmax a bidder is told (``biddertmax``), the time kept
    for the answer's trip upstream (``tmax_upstream_response_time``, PBS-Java's 30 ms; here 0) and
    the profiles fetch's timeout (``profiles.timeout_ms``)."""

    biddertmax: BidderTmax = field(default_factory=BidderTmax)
    profiles: AuctionProfiles = field(default_factory=AuctionProfiles)
    tmax_upstream_response_time: int = _checked(0, _at_least(0))


@dataclass(frozen=True)
class CompressionInfo:
    enable_gzip: bool = False


@dataclass(frozen=True)
class Compression:
    """PBS-Go's ``compression``: ``response.enable_gzip`` gzips answers to clients that accept it;
    ``request.enable_gzip`` takes gzip request bodies (``Content-Encoding: gzip``)."""

    request: CompressionInfo = field(default_factory=CompressionInfo)
    response: CompressionInfo = field(default_factory=CompressionInfo)


@dataclass(frozen=True)
class Debug:
    """PBS-Go's ``debug``: a request whose ``X-Pbs-Debug-Override`` header equals ``override_token``
    (not empty) gets debug whatever its account and bidders allow, as PBS-Java's DebugResolver."""

    override_token: str = ""


@dataclass(frozen=True)
class DefaultRequestFile:
    name: str = ""


@dataclass(frozen=True)
class DefaultRequest:
    """PBS-Go's ``default_request``: ``type: file`` with ``file.name``, a JSON request every auction
    request is merged into (its values lose to the request's own)."""

    type: Literal["", "file"] = ""
    file: DefaultRequestFile = field(default_factory=DefaultRequestFile)
    alias_info: bool = False


@dataclass(frozen=True)
class Config:
    host: str = "0.0.0.0"
    port: int = _checked(8000, _port)
    workers: int = _checked(1, _at_least(0))
    external_url: str = _checked("http://localhost:8000", URL)
    datacenter: str = ""  # PBS-Go's: this instance's data center, sent to bidders in ext.prebid.server
    generate_bid_id: bool = False  # PBS-Go's: each bid gets a UUID in ext.prebid.bidid (its event URLs carry it)
    blocked_apps: list[str] = field(default_factory=list)  # PBS-Go's: app.id values refused (503)
    compression: Compression = field(default_factory=Compression)
    debug: Debug = field(default_factory=Debug)
    default_request: DefaultRequest = field(default_factory=DefaultRequest)
    tmax_adjustments: TmaxAdjustments = field(default_factory=TmaxAdjustments)
    auction: Auction = field(default_factory=Auction)
    validations: Validations = field(default_factory=Validations)  # bid checks (PBS-Go's and hbserver's own)
    request_validation: RequestValidation = field(default_factory=RequestValidation)  # PBS-Go's: private networks
    max_request_size: int = _checked(262144, _at_least(1))
    shutdown_timeout_seconds: float = _checked(10, _at_least(0))
    shutdown_drain_seconds: float = _checked(0, _at_least(0))
    status_response: str = ""
    http_timeouts: HttpTimeouts = field(default_factory=HttpTimeouts)
    admin: Admin = field(default_factory=Admin)
    admin_endpoints: AdminEndpoints = field(default_factory=AdminEndpoints)  # PBS-Java's cache admin endpoints
    logging: Logging = field(default_factory=Logging)
    host_cookie: HostCookie = field(default_factory=HostCookie)
    gdpr: Gdpr = field(default_factory=Gdpr)
    ccpa: Ccpa = field(default_factory=Ccpa)
    lmt: Lmt = field(default_factory=Lmt)
    host_schain_node: SChainNode = field(default_factory=SChainNode)
    user_sync: UserSync = field(default_factory=UserSync)
    stored_requests: StoredRequests = field(default_factory=StoredRequests)
    stored_video_req: StoredVideoRequests = field(default_factory=StoredVideoRequests)  # PBS-Go's
    video: Video = field(default_factory=Video)  # PBS-Go's: video.enable_deprecated_endpoint
    video_stored_request_required: bool = False  # PBS-Go's: /openrtb2/video needs a storedrequestid
    account_required: bool = False
    auto_gen_source_tid: bool = True  # PBS-Go: fill a missing source.tid and imp[].ext.tid with UUIDs
    account_defaults: AccountSettings = field(default_factory=AccountSettings)
    cache: Cache = field(default_factory=Cache)
    auction_timeouts_ms: AuctionTimeouts = field(default_factory=AuctionTimeouts)
    currency: Currency = field(default_factory=Currency)
    price_floors: PriceFloors = field(default_factory=PriceFloors)
    geolocation: Geolocation = field(default_factory=Geolocation)
    amp: Amp = field(default_factory=Amp)
    overload: Overload = field(default_factory=Overload)
    adapters: dict[str, AdapterConfig] = field(default_factory=dict)
    analytics: Analytics = field(default_factory=Analytics)
    metrics: Metrics = field(default_factory=Metrics)
    hooks: Hooks = field(default_factory=Hooks)
    tracing: Tracing = field(default_factory=Tracing)  # hbserver's own: OpenTelemetry (OTLP/HTTP)


# --- building dataclasses from plain data -----------------------------------------------------

_MISSING = object()
_BIDDER_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _type_name(tp: Any) -> str:
    if tp is bool:
        return "a boolean (true/false)"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    origin = typing.get_origin(tp)
    if origin is list:
        return "a list"
    if origin is dict or dataclasses.is_dataclass(tp):
        return "a mapping"
    return str(tp)


def build(cls: type, raw: Any, path: str, problems: list[str], strict: bool = True) -> Any:
    """Build dataclass ``cls`` from ``raw`` (a mapping), appending problems instead of raising.

    ``strict`` makes unknown keys problems; account files use ``strict=False`` because they may
    carry Prebid Server settings that hbserver does not read.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(f"{path or '<top>'}: must be a mapping, got {_describe(raw)}")
        return cls()
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    if strict:
        for key in raw:
            if key not in known and (message := _unknown_key(path, str(key), raw[key])):
                problems.append(f"{_join(path, str(key))}: {message}")
    values: dict[str, Any] = {}
    for name, fld in known.items():
        value = raw.get(name, _MISSING)
        if value is _MISSING:
            continue
        key = _join(path, name)
        before = len(problems)
        converted = _convert(hints[name], value, key, problems, strict)
        if len(problems) > before:
            continue
        check = fld.metadata.get("check")
        if check is not None:
            message = check(converted)
            if message:
                problems.append(f"{key}: {message}")
                continue
        values[name] = converted
    instance = cls(**values)
    # Remember which keys were written out: a host override must beat a built-in bidder's own
    # value only where the host actually wrote one (see given_keys()).
    object.__setattr__(instance, _GIVEN, frozenset(k for k in raw if k in known))
    return instance


def _unknown_key(path: str, key: str, value: Any) -> str:
    """Why ``key`` is refused: under ``account_defaults`` a Prebid Server setting is named as one, and
    one whose value changes nothing (hbserver.stores.account_refusals) is accepted ('')."""
    if path == "account_defaults" or path.startswith("account_defaults."):
        from hbserver.stores.account_keys import account_defaults_problem

        return account_defaults_problem(path.removeprefix("account_defaults").removeprefix("."), key, value)
    return "unknown key"


_GIVEN = "_given_keys"


def given_keys(instance: Any) -> frozenset[str]:
    """The keys that were present in the source of a dataclass made by :func:`build`."""
    return getattr(instance, _GIVEN, frozenset())


def _convert(tp: Any, value: Any, key: str, problems: list[str], strict: bool) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _convert(args[0], value, key, problems, strict)
    if origin is Literal:
        choices = typing.get_args(tp)
        text = _scalar_text(value)
        if text in choices:
            return text
        problems.append(f"{key}: must be one of {', '.join(choices)}; got {value!r}")
        return None
    if dataclasses.is_dataclass(tp):
        return build(tp, value, key, problems, strict)
    if origin is list:
        (item_type,) = typing.get_args(tp)
        if not isinstance(value, list):
            problems.append(f"{key}: must be a list, got {_describe(value)}")
            return None
        return [_convert(item_type, item, f"{key}[{i}]", problems, strict) for i, item in enumerate(value)]
    if origin is dict:
        _, item_type = typing.get_args(tp)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            problems.append(f"{key}: must be a mapping, got {_describe(value)}")
            return None
        if item_type is Any:
            return dict(value)
        out = {}
        for code, item in value.items():
            code = str(code)
            if not _BIDDER_CODE.fullmatch(code):
                problems.append(f"{key}.{code}: not a valid bidder code")
                continue
            out[code] = _convert(item_type, item, f"{key}.{code}", problems, strict)
        return out
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    elif tp is str:
        # YAML reads `0`, `2.5` as numbers; a string key takes them as written.
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    elif tp is Any:
        return value
    problems.append(f"{key}: must be {_type_name(tp)}, got {_describe(value)}")
    return None


def _scalar_text(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"{type(value).__name__} {value!r}"


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --- sources ----------------------------------------------------------------------------------

# Kubernetes injects service links for every Service in the namespace: a Service named "hbs"
# gives HBS_PORT=tcp://10.0.0.11:8000, HBS_SERVICE_HOST, HBS_PORT_8000_TCP_ADDR, ...
_SERVICE_LINK_VALUE = re.compile(r"(tcp|udp|sctp)://[^/\s]+:\d+")
_SERVICE_LINK_NAME = re.compile(r"SERVICE_HOST|SERVICE_PORT(_\w+)?|PORT_\d+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?")
_SERVICE_LINK_HINT = (
    "looks like a Kubernetes service link (from a Service named 'hbs'); set enableServiceLinks: false "
    "in the pod spec or rename the Service"
)


def _is_key_path(parts: list[str]) -> bool:
    """Whether ``parts`` (lower case) names a key of :class:`Config`, as an environment variable may."""
    tp: Any = Config
    for part in parts:
        if dataclasses.is_dataclass(tp):
            hints = typing.get_type_hints(tp)
            if part not in hints:
                return False
            tp = hints[part]
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]  # adapters.<code>: any code
        else:
            return tp is Any  # below a free-form mapping anything goes; below a scalar nothing
    return True


def _env_problem(name: str, text: str, parts: list[str]) -> str | None:
    """Why the variable ``name`` cannot be read as configuration, or None."""
    if _SERVICE_LINK_VALUE.fullmatch(text.strip()):
        return f"{name}: {text!r} {_SERVICE_LINK_HINT}"
    if not all(parts) or not _is_key_path(parts):
        if _SERVICE_LINK_NAME.fullmatch(name[len(ENV_PREFIX):]):
            return f"{name}: not a configuration key; it {_SERVICE_LINK_HINT}"
        return f"{name}: not a configuration key"
    return None


def _env_overrides(environ: Mapping[str, str], problems: list[str]) -> dict[str, Any]:
    """``HBS_CACHE__STORE=redis`` -> ``{"cache": {"store": "redis"}}`` (values read as YAML).

    A variable that names no key is a problem naming the variable (not merged)."""
    tree: dict[str, Any] = {}
    for name, text in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        problem = _env_problem(name, text, parts)
        if problem:
            problems.append(problem)
            continue
        try:
            value = yaml.safe_load(text) if text != "" else ""
        except yaml.YAMLError:
            value = text
        node = tree
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return tree


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge mappings recursively; values of ``override`` win, mappings merge key by key."""
    out = dict(base)
    for key, value in override.items():
        current = out.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(current, value)
        else:
            out[key] = value
    return out


def _read_yaml(path: str, problems: list[str]) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        problems.append(f"--config: cannot read {path}: {exc.strerror or exc}")
        return {}
    except yaml.YAMLError as exc:
        problems.append(f"--config: {path} is not valid YAML: {' '.join(str(exc).split())}")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f"--config: {path} must hold a mapping at the top level")
        return {}
    return data


def load_config(
    path: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Load the YAML file, then ``HBS_`` variables, then ``overrides`` (flags); validate all."""
    problems: list[str] = []
    raw: dict[str, Any] = _read_yaml(path, problems) if path else {}
    raw = deep_merge(raw, _env_overrides(os.environ if environ is None else environ, problems))
    if overrides:
        raw = deep_merge(raw, {k: v for k, v in overrides.items() if v is not None})
    config = build(Config, raw, "", problems)
    if not problems:
        problems.extend(_cross_checks(config))
    if problems:
        raise ConfigError(problems)
    return config


def account_settings_problems(settings: AccountSettings) -> list[str]:
    """What is wrong across the keys of an account's settings (each line names its key)."""
    problems = []
    fetch = settings.price_floors.fetch
    if fetch.period_sec > fetch.max_age_sec:
        problems.append(
            f"price_floors.fetch.period_sec: must not exceed price_floors.fetch.max_age_sec "
            f"({fetch.period_sec} > {fetch.max_age_sec})"
        )
    if fetch.enabled and not fetch.url:
        problems.append("price_floors.fetch.url: required when price_floors.fetch.enabled is true")
    if settings.bidadjustments is not None:
        from hbserver.auction.bids.bidadjust import validate_bid_adjustments

        problem = validate_bid_adjustments(settings.bidadjustments)
        if problem:
            problems.append(f"bidadjustments: {problem}")
    if settings.hooks.execution_plan:
        from hbserver.hooks.runtime import account_hooks_problems

        problems.extend(account_hooks_problems(settings.hooks))
    return problems


def _cross_checks(config: Config) -> list[str]:
    """Problems no single key shows: keys that must agree with others, aliases and sections as a whole."""
    problems = _account_defaults_problems(config)
    problems.extend(_bound_problems(config))
    if config.cache.store == "remote" and not config.cache.remote.url:
        problems.append("cache.remote.url: required when cache.store is remote")
    video_files = config.stored_video_req.filesystem
    if video_files.enabled and not video_files.directorypath:
        problems.append(
            "stored_video_req.filesystem.directorypath: required when stored_video_req.filesystem.enabled is true"
        )
    problems.extend(_redis_cluster_problems(config.cache.redis))
    if config.admin.port and config.admin.port == config.port:
        problems.append(f"admin.port: must differ from port ({config.port}); 0 keeps the admin endpoints on it")
    problems.extend(_invalidation_problems(config))
    if config.analytics.agma.enabled and not config.analytics.agma.accounts:
        problems.append("analytics.agma.accounts: configure at least one account when analytics.agma.enabled is on")
    problems.extend(_adapter_problems(config))
    problems.extend(_hooks_problems(config.hooks))
    problems.extend(_stored_database_problems(config.stored_requests.database))
    return problems


def _account_defaults_problems(config: Config) -> list[str]:
    from hbserver.privacy.activity import ActivityConfigError, ActivityControl
    from hbserver.stores.accounts import eid_transition

    problems = []
    try:
        privacy = config.account_defaults.privacy
        ActivityControl.from_config(eid_transition(config.account_defaults), privacy.modules)
    except ActivityConfigError as exc:
        problems.append(f"account_defaults.{exc.section}: {exc}")
    problems.extend(f"account_defaults.{p}" for p in account_settings_problems(config.account_defaults))
    return problems


def _bound_problems(config: Config) -> list[str]:
    """Keys one of which bounds the other."""
    tmax, timeouts, cache = config.auction.biddertmax, config.auction_timeouts_ms, config.cache
    http, tracing, amp = config.analytics.http, config.tracing, config.amp
    checks = [  # PBS-Java's TimeoutResolver refuses a biddertmax.max below its min too
        (bool(tmax.max) and tmax.max < tmax.min,
         f"auction.biddertmax.max: must not be below auction.biddertmax.min ({tmax.max} < {tmax.min})"),
        (timeouts.default > timeouts.max, "auction_timeouts_ms.default: must not exceed auction_timeouts_ms.max "
         f"({timeouts.default} > {timeouts.max})"),
        (cache.default_ttl_seconds > cache.max_ttl_seconds, "cache.default_ttl_seconds: must not exceed "
         f"cache.max_ttl_seconds ({cache.default_ttl_seconds} > {cache.max_ttl_seconds})"),
        (http.buffer_size < http.batch_size, "analytics.http.buffer_size: must be at least "
         f"analytics.http.batch_size ({http.buffer_size} < {http.batch_size})"),
        (tracing.max_export_batch_size > tracing.max_queue_size, "tracing.max_export_batch_size: must not exceed "
         f"tracing.max_queue_size ({tracing.max_export_batch_size} > {tracing.max_queue_size})"),
        (amp.timeout_adjustment_ms >= amp.default_timeout_ms,
         "amp.timeout_adjustment_ms: must be less than amp.default_timeout_ms"),
    ]  # fmt: skip
    return [text for failed, text in checks if failed]


def _adapter_problems(config: Config) -> list[str]:
    """``adapters.<code>``: a code that is not built in must be an alias of a built-in adapter."""
    from hbserver.bidders import BUILTIN_ADAPTERS, BUILTIN_ALIASES, BUILTIN_CODES

    problems = []
    for code, adapter in config.adapters.items():
        key = f"adapters.{code}"
        if adapter.alias_of:
            if adapter.alias_of in BUILTIN_ALIASES:
                problems.append(
                    f"{key}.alias_of: {adapter.alias_of!r} is itself an alias; name the adapter it is an alias of"
                )
            elif adapter.alias_of not in BUILTIN_ADAPTERS:
                problems.append(f"{key}.alias_of: unknown built-in adapter {adapter.alias_of!r}")
            elif code in BUILTIN_CODES:
                problems.append(f"{key}.alias_of: {code!r} is a built-in bidder and cannot be an alias")
        elif code not in BUILTIN_CODES:
            problems.append(f"{key}: unknown bidder; a code that is not built in needs alias_of")
    return problems


def _stored_database_problems(database: DatabaseStore) -> list[str]:
    """PBS-Go's ``database.connection``/``fetcher``/``poll_for_updates`` keys beside hbserver's ``dsn``."""
    key = "stored_requests.database"
    conn, problems = database.connection, []
    if database.dsn and (conn.driver or conn.dbname):
        problems.append(f"{key}.dsn: give either dsn or connection.driver and connection.dbname, not both")
    if conn.driver and not conn.dbname:
        problems.append(f"{key}.connection.dbname: required when connection.driver is set")
    if conn.dbname and not conn.driver:
        problems.append(f"{key}.connection.driver: must be mysql or postgres when connection.dbname is set")
    connected = bool(database.dsn or conn.dbname)
    queries = {"fetcher.query": database.fetcher.query, "fetcher.amp_query": database.fetcher.amp_query,
               "poll_for_updates.query": database.poll_for_updates.query,
               "poll_for_updates.amp_query": database.poll_for_updates.amp_query}
    for name, query in queries.items():
        if query and not connected:
            problems.append(f"{key}.{name}: needs a database (dsn, or connection.driver and connection.dbname)")
        if query and name.startswith("poll") and "$LAST_UPDATED" not in query:
            problems.append(f"{key}.{name}: must contain the $LAST_UPDATED parameter")
        if query and name.startswith("fetcher") and "$REQUEST_ID_LIST" not in query and "$IMP_ID_LIST" not in query:
            problems.append(f"{key}.{name}: must contain $REQUEST_ID_LIST or $IMP_ID_LIST")
    return problems


def _invalidation_problems(config: Config) -> list[str]:
    """HTTP events and the cache admin endpoints change the in-memory caches, so they need them (PBS-Go's
    and PBS-Java's rule); the admin endpoints are never served on the public port."""
    problems = []
    stored = config.stored_requests
    events = stored.http_events
    if stored.in_memory_cache.type == "none" and events.refresh_rate_seconds:
        problems.append("stored_requests.http_events.refresh_rate_seconds: must be 0 if in_memory_cache.type is none")
    if events.refresh_rate_seconds and (events.endpoint or events.amp_endpoint) and not events.timeout_ms:
        problems.append("stored_requests.http_events.timeout_ms: must be > 0 when http_events polls an endpoint")
    endpoints = config.admin_endpoints
    for name in ("storedrequest", "storedrequest_amp", "cache_invalidation"):
        if not getattr(endpoints, name).enabled:
            continue
        if not config.admin.port:
            problems.append(f"admin_endpoints.{name}.enabled: needs admin.port (never served on the public port)")
        if stored.in_memory_cache.type == "none":
            problems.append(f"admin_endpoints.{name}.enabled: needs stored_requests.in_memory_cache.type lru")
    return problems


def _hooks_problems(hooks: Hooks) -> list[str]:
    """The hooks' plans and enabled modules, built once to see that they can be (the server builds
    its own at start-up)."""
    if not (hooks.enabled or hooks.host_execution_plan or hooks.default_account_execution_plan):
        return []
    from hbserver.hooks.runtime import HookRuntime

    try:
        HookRuntime(hooks.enabled, hooks.modules, hooks.host_execution_plan, hooks.default_account_execution_plan)
    except ValueError as exc:
        return str(exc).split("; ")
    return []


def _redis_cluster_problems(redis: CacheRedis) -> list[str]:
    """A cluster takes credentials and TLS from ``cache.redis.url``, but it has no socket path and no
    database other than 0."""
    if not redis.cluster.nodes:
        return []
    parts = urlsplit(redis.url)
    if parts.scheme == "unix":
        return ["cache.redis.url: a unix socket cannot reach a Redis Cluster (cache.redis.cluster.nodes is set)"]
    if parts.path.strip("/") not in ("", "0"):
        return [f"cache.redis.url: a Redis Cluster has only database 0, got {parts.path.strip('/')!r} "
                "(cache.redis.cluster.nodes is set)"]
    return []


def to_plain(config: Any) -> Any:
    """The configuration as plain data (for ``--check-config`` and for merging accounts)."""
    return dataclasses.asdict(config)


REDACTED = "********"
SECRET_KEYS = frozenset({"password", "app_secret", "headers"})  # headers: tracing.headers carry tokens


def redact(value: Any) -> Any:
    """``value`` with secrets masked: keys named in :data:`SECRET_KEYS` and passwords inside URLs."""
    if isinstance(value, dict):
        return {k: REDACTED if k in SECRET_KEYS and value[k] else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "@" in value and "://" in value:
        try:
            parts = urlsplit(value)
            password = parts.password
        except ValueError:
            return value
        if password:
            userinfo, _, host = parts.netloc.rpartition("@")
            user = userinfo.partition(":")[0]
            return parts._replace(netloc=f"{user}:{REDACTED}@{host}").geturl()
    return value


def dump_yaml(config: Config) -> str:
    """The effective configuration as YAML, secrets masked (``--check-config`` prints it)."""
    return yaml.safe_dump(redact(to_plain(config)), sort_keys=False, default_flow_style=False)
