"""POST /cookie_sync: which bidders the browser should sync now (spec §4.4, reference §2).

Error texts and the order of checks are PBS-Go's; error bodies end with a newline as Go's
``http.Error`` writes them. Two deliberate leniencies (the specification's reading): a missing
``filterSettings.<type>.filter`` means ``include`` and missing ``bidders`` means ``*``; and a
numeric ``account`` (prebid-universal-creative sends one) is read as its decimal string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

import orjson
from aiohttp import hdrs, web

from hbserver.analytics import Analytics
from hbserver.analytics.records import cookie_sync_record
from hbserver.bidders.registry import Bidder
from hbserver.config import AccountCookieSync
from hbserver.metrics import Metrics, PendingCounter
from hbserver.privacy.sandbox import RECEIVE_COOKIE_DEPRECATION, receive_cookie_deprecation
from hbserver.privacy.tcf2 import ConsentError
from hbserver.stores.accounts import Account, AccountError, AccountStore
from hbserver.usersync.chooser import (
    NO_FILTERS,
    BidderFilter,
    Chosen,
    Evaluation,
    Shuffle,
    Status,
    SyncFilters,
    bidder_order,
    choose,
    shuffle,
)
from hbserver.usersync.privacy import PrivacyRequestError, SyncPrivacy, cookie_sync_privacy
from hbserver.usersync.service import SyncService, account_error, utcnow
from hbserver.web.body import loads_json, read_body
from hbserver.web.cookies import request_cookies
from hbserver.web.errors import HttpError, text_response
from hbserver.web.requestlog import ACCOUNT
from hbserver.web.response import FastResponse

UNKNOWN_ACCOUNT = "unknown"
MAX_BIDDERS = 1000  # a request naming more bidders than any host has is cut here
# bidder_status entries kept by (bidder, sync type, privacy values but the consent string); cleared
# when full, since requests with per-user US Privacy or GPP strings would otherwise grow it without end
ENTRY_CACHE_SIZE = 4096
_STATUS_OK = b'{"status":"ok","bidder_status":['
_STATUS_NO_COOKIE = b'{"status":"no_cookie","bidder_status":['

COOKIE_SYNC_STATUSES = (
    "ok", "bad_request", "opt_out", "gdpr_blocked_host_cookie", "acct_blocked", "acct_config_malformed", "acct_invalid",
)
SYNCER_METRIC_STATUS = {
    Status.OK: "ok",
    Status.BLOCKED_BY_PRIVACY: "privacy_blocked",
    Status.BLOCKED_BY_CCPA: "privacy_blocked",
    Status.ALREADY_SYNCED: "already_synced",
    Status.REJECTED_BY_FILTER: "rejected_by_filter",
}


class BadRequest(Exception):
    pass


class CookieSyncRequest(NamedTuple):
    """A parsed body; immutable, since parse_request_cached shares it between requests (a tuple:
    a frozen dataclass's __init__ costs several times as much, on every body that is not kept)."""

    bidders: tuple[str, ...] = ()
    gdpr: int | None = None
    gdpr_consent: str = ""
    us_privacy: str = ""
    gpp: str = ""
    gpp_sid: str = ""
    limit: int | None = None
    coop_sync: bool | None = None
    account: str = ""
    filters: SyncFilters = NO_FILTERS
    debug: bool = False


def without_iframes(filters: SyncFilters, disabled: list[str]) -> SyncFilters:
    """PBS-Go's account ``cookie_sync.disabled_iframe_bidders`` over the request's filterSettings: only
    ever narrower. ``*`` refuses every iframe sync; a list excludes those bidders from what the
    request's iframe filter allows. Redirect syncs are never affected."""
    if "*" in disabled:
        return SyncFilters(BidderFilter(include=False, every=True), filters.redirect)
    names = frozenset(name.lower() for name in disabled)
    iframe = filters.iframe
    if iframe.every:
        narrowed = iframe if not iframe.include else BidderFilter(include=False, every=False, bidders=names)
    elif iframe.include:
        narrowed = BidderFilter(include=True, every=False, bidders=iframe.bidders - names)
    else:
        narrowed = BidderFilter(include=False, every=False, bidders=iframe.bidders | names)
    return SyncFilters(narrowed, filters.redirect)


def _string(value: Any, key: str) -> str:
    if value is None:
        return ""
    if value.__class__ is not str:
        raise BadRequest(f"JSON parsing failed: {key} must be a string")
    return value


def _flag(value: Any, key: str) -> bool | None:
    if value is not None and value.__class__ is not bool:
        raise BadRequest(f"JSON parsing failed: {key} must be a boolean")
    return value


def _parse_filter(value: Any, name: str) -> BidderFilter:
    if value is None:
        return BidderFilter()
    if not isinstance(value, dict):
        raise BadRequest(f"error parsing filtersettings.{name}: must be an object")
    mode = value.get("filter", "include")
    if mode not in ("include", "exclude"):
        raise BadRequest(
            f"error parsing filtersettings.{name}: invalid filter value '{mode}'. must be either 'include' or 'exclude'"
        )
    bidders = value.get("bidders", "*")
    if isinstance(bidders, str):
        if bidders != "*":
            raise BadRequest(
                f"error parsing filtersettings.{name}: invalid bidders value `{bidders}`. "
                "must either be '*' or a string array"
            )
        return BidderFilter(include=mode == "include", every=True)
    if isinstance(bidders, list) and all(isinstance(b, str) for b in bidders):
        return BidderFilter(include=mode == "include", every=False, bidders=frozenset(b.lower() for b in bidders))
    raise BadRequest(
        f"error parsing filtersettings.{name}: invalid bidders type. must either be a string '*' or a string array of "
        "bidders"
    )


# Parsed bodies by their bytes: Prebid.js sends the same body from every page of a site (the
# bidders, the limit, often the same privacy fields), so most requests repeat one seen before.
# Shared, so never changed after parsing; bounded (emptied when full), and only small bodies.
# Not a body with a consent or GPP string: each user's is their own, so such a body never comes
# back, and keeping it (hashing, inserting, emptying) cost about a fifth of its parse, measured
# on cookie_sync_varied's bodies; a byte search costs a hundredth.
PARSED_CACHE_SIZE = 1024
MAX_CACHED_BODY_BYTES = 2048
_PER_USER_KEYS = (b'_consent"', b'"gpp"')
_parsed: dict[bytes, CookieSyncRequest] = {}


def parse_request_cached(body: bytes) -> CookieSyncRequest:
    """:func:`parse_request`, kept for a body seen before (a refused body is parsed each time)."""
    if (
        body.__class__ is not bytes
        or len(body) > MAX_CACHED_BODY_BYTES
        or _PER_USER_KEYS[0] in body
        or _PER_USER_KEYS[1] in body
    ):
        return parse_request(body)
    parsed = _parsed.get(body)
    if parsed is None:
        parsed = parse_request(body)
        if len(_parsed) >= PARSED_CACHE_SIZE:
            _parsed.clear()
        _parsed[body] = parsed
    return parsed


def parse_request(body: bytes) -> CookieSyncRequest:
    """The request body; raises BadRequest with the message for the 400.

    Written for the hot path: the common types are checked inline and the helpers only run for
    the unusual ones (and to word the error).
    """
    try:
        data = loads_json(body)
    except orjson.JSONDecodeError as exc:  # malformed, or nested too deep (JsonTooDeep)
        if body.strip():
            raise BadRequest(f"JSON parsing failed: {exc}") from None
        data = {}
    if data.__class__ is not dict:
        raise BadRequest("JSON parsing failed: the request body must be a JSON object")
    get = data.get
    bidders = get("bidders")
    if bidders is None:
        bidders = []
    elif bidders.__class__ is not list:
        raise BadRequest("JSON parsing failed: bidders must be an array of strings")
    else:
        for bidder in bidders:
            if bidder.__class__ is not str:
                raise BadRequest("JSON parsing failed: bidders must be an array of strings")
        if len(bidders) > MAX_BIDDERS:
            bidders = bidders[:MAX_BIDDERS]
    gdpr = get("gdpr")
    if gdpr is not None and gdpr.__class__ is not int:
        if isinstance(gdpr, bool) or not isinstance(gdpr, (int, float)):
            raise BadRequest("JSON parsing failed: gdpr must be an integer")
        gdpr = int(gdpr) if gdpr in (0, 1) else gdpr
    if gdpr is not None and gdpr not in (0, 1):
        raise BadRequest("GDPR signal should be integer 0 or 1")
    gpp_sid = get("gpp_sid", "")
    if gpp_sid.__class__ is list and all(s.__class__ is int for s in gpp_sid):
        gpp_sid = ",".join(str(s) for s in gpp_sid)  # Prebid.js may send the list itself
    limit = get("limit")
    if limit is not None and limit.__class__ is not int:
        raise BadRequest("JSON parsing failed: limit must be an integer")
    account = get("account", "")
    if account.__class__ is not str and isinstance(account, (int, float)) and not isinstance(account, bool):
        account = str(int(account)) if float(account).is_integer() else str(account)
    settings = get("filterSettings")
    filters = NO_FILTERS
    if settings is not None:
        if settings.__class__ is not dict:
            raise BadRequest("JSON parsing failed: filterSettings must be an object")
        filters = SyncFilters(
            iframe=_parse_filter(settings.get("iframe"), "iframe"),
            redirect=_parse_filter(settings.get("image"), "image"),
        )
    consent = get("gdpr_consent", "")
    us_privacy = get("us_privacy", "")
    gpp = get("gpp", "")
    coop = get("coopSync")
    debug = get("debug", False)
    return CookieSyncRequest(
        tuple(bidders),
        gdpr,
        consent if consent.__class__ is str else _string(consent, "gdpr_consent"),
        us_privacy if us_privacy.__class__ is str else _string(us_privacy, "us_privacy"),
        gpp if gpp.__class__ is str else _string(gpp, "gpp"),
        gpp_sid if gpp_sid.__class__ is str else _string(gpp_sid, "gpp_sid"),
        limit,
        coop if coop is None or coop.__class__ is bool else _flag(coop, "coopSync"),
        account if account.__class__ is str else _string(account, "account"),
        filters,
        debug if debug.__class__ is bool else bool(_flag(debug, "debug")),
    )


def effective_limit(requested: int | None, default_limit: int, max_limit: int) -> int:
    """PBS-Go: the request's limit, else the account default; <= 0 is unlimited (0); capped by max."""
    limit = requested if requested is not None else default_limit
    if limit <= 0:
        limit = 0
    if max_limit > 0 and (limit == 0 or limit > max_limit):
        limit = max_limit
    return limit


class CookieSyncEndpoint:
    def __init__(
        self,
        service: SyncService,
        accounts: AccountStore,
        analytics: Analytics,
        metrics: Metrics,
        shuffle: Shuffle = shuffle,
        clock: Callable[[], datetime] = utcnow,
        note_account: bool = True,
    ) -> None:
        self.service = service
        self.accounts = accounts
        self.analytics = analytics
        self.metrics = metrics
        self.shuffle = shuffle
        self.clock = clock
        self.note_account = note_account  # hand the account to the access log (off when it samples nothing)
        self._outcomes = {s: metrics.counter(metrics.cookie_sync_requests, s) for s in COOKIE_SYNC_STATUSES}
        self._entries: dict[tuple[Any, ...], tuple[bytes, ...]] = {}  # see _status_entry
        # (sync key, status) -> its syncer_requests handle, None for statuses not counted there
        self._syncer_counters: dict[tuple[str, Status], PendingCounter | None] = {}

    def _count(self, status: str) -> None:
        self._outcomes[status].pending += 1

    def _fail(self, status: int, message: str, metric: str) -> web.Response:
        self._count(metric)
        if self.analytics.enabled:
            self.analytics.log(cookie_sync_record(status, [message], []))
        return text_response(status, message + "\n")

    async def handle(self, request: web.Request) -> web.Response:
        try:
            body = await read_body(request)
            sync_request = parse_request_cached(body)
        except HttpError as exc:
            return self._fail(exc.status, exc.message, "bad_request")
        except BadRequest as exc:
            return self._fail(400, str(exc), "bad_request")
        account_id = sync_request.account or UNKNOWN_ACCOUNT
        if self.note_account:
            request[ACCOUNT] = sync_request.account  # for the access log
        try:
            account = self.accounts.cached(account_id) or await self.accounts.load(account_id)
        except AccountError as exc:
            return self._fail(*account_error(exc))
        cookies = request_cookies(request)
        response = self._answer(sync_request, account, cookies)
        deprecation = account.settings.privacy.privacysandbox.cookiedeprecation
        if deprecation.enabled:  # PBS-Go: on every answer once the account is known
            label = receive_cookie_deprecation(RECEIVE_COOKIE_DEPRECATION in cookies, deprecation)
            if label is not None:
                response.headers.add(hdrs.SET_COOKIE, label)
        return response

    def _answer(self, sync_request: CookieSyncRequest, account: Account, cookies: dict[str, str]) -> web.Response:
        """The answer for a parsed request of a known account."""
        service = self.service
        settings = account.settings.cookie_sync
        limit = effective_limit(sync_request.limit, settings.default_limit, settings.max_limit)
        coop, groups = self._cooperation(sync_request, settings)
        filters = sync_request.filters
        if settings.disabled_iframe_bidders:
            filters = without_iframes(filters, settings.disabled_iframe_bidders)
        try:
            privacy = cookie_sync_privacy(
                sync_request.gdpr, sync_request.gdpr_consent, sync_request.us_privacy, sync_request.gpp,
                sync_request.gpp_sid, service.config.gdpr.default_value,
            )
        except PrivacyRequestError as exc:
            return self._fail(400, str(exc), "bad_request")

        now = self.clock()
        cookie = service.read_cookie(cookies, now)
        if cookie.optout:
            return self._fail(401, "User has opted out", "opt_out")
        status_text = "ok" if cookie.has_live_uid(now) else "no_cookie"
        try:
            gate = service.gate  # the account's TCF policy only when GDPR applies (it is not read otherwise)
            host_allowed = not gate.in_scope(privacy) or gate.host_cookie_allowed(
                privacy, gate.policy(account.settings.gdpr)
            )
        except ConsentError:
            host_allowed = False
        if not host_allowed:
            self._count("gdpr_blocked_host_cookie")
            return self._respond(status_text, [], [], sync_request.debug, privacy)

        order = bidder_order(
            sync_request.bidders, service.registry.syncable, coop, groups,
            settings.priority_groups_only, self.shuffle,
        )
        chosen, evaluations = choose(
            order, limit, service.registry, cookie, now, filters,
            self._privacy_check(account, privacy), privacy.gdpr_signal, privacy.gpp_sid,
        )
        self._outcomes["ok"].pending += 1
        counters = self._syncer_counters
        for evaluation in evaluations:
            key = (evaluation.sync_key, evaluation.status)
            counter = counters.get(key, False)
            if counter is False:
                counter = counters[key] = self._syncer_counter(*key)
            if counter is not None:
                counter.pending += 1
        return self._respond(status_text, chosen, evaluations, sync_request.debug, privacy)

    def _cooperation(
        self, sync_request: CookieSyncRequest, settings: AccountCookieSync
    ) -> tuple[bool, list[list[str]]]:
        """Whether the sync is cooperative (the request's, else the account's, else the host's) and
        its priority groups (the account's when it sets its cooperation, PBS-Java's ``pri`` as one
        group, else the host's)."""
        host = self.service.config.user_sync
        if sync_request.coop_sync is not None:
            coop = sync_request.coop_sync
        elif settings.default_coop_sync is not None:
            coop = settings.default_coop_sync
        else:
            coop = host.coop_sync.default
        if settings.default_coop_sync is not None and (settings.priority_groups or not settings.pri):
            groups = settings.priority_groups
        elif settings.pri:  # PBS-Java: the account's prioritized bidders replace the host's
            groups = [settings.pri]
        else:
            groups = host.priority_groups
        return coop, groups

    def _syncer_counter(self, sync_key: str, status: Status) -> PendingCounter | None:
        """The ``syncer_requests`` handle of one evaluation's outcome (None: not counted there)."""
        metric = SYNCER_METRIC_STATUS.get(status)
        if not metric:
            return None
        if len(self._syncer_counters) >= ENTRY_CACHE_SIZE:  # keys are syncer keys: bounded, but be safe
            self._syncer_counters.clear()
        return self.metrics.counter(self.metrics.syncer_requests, sync_key, metric)

    def _privacy_check(self, account: Account, privacy: SyncPrivacy) -> Callable[[str, Bidder], Status] | None:
        """The per-bidder privacy decision, or None when nothing in this request can block a bidder."""
        gate = self.service.gate
        ccpa_blocks = gate.ccpa_blocks(privacy)
        activities = account.activities
        governed = activities.governs("syncUser")
        in_scope = gate.in_scope(privacy)
        if not (governed or in_scope or ccpa_blocks):
            return None
        tcf = gate.permissions(privacy, gate.policy(account.settings.gdpr)) if in_scope else None

        def check(name: str, bidder: Bidder) -> Status:
            if governed and not activities.allowed("syncUser", "bidder", name):
                return Status.BLOCKED_BY_PRIVACY
            if tcf is not None and not tcf.bidder_sync_allowed(name, bidder.gvl_vendor_id):
                return Status.BLOCKED_BY_PRIVACY
            if ccpa_blocks:
                return Status.BLOCKED_BY_CCPA
            return Status.OK

        return check

    def _status_entry(self, item: Chosen, privacy: SyncPrivacy, consent: bytes | None = None) -> bytes:
        """One ``bidder_status`` entry's JSON. A consent string that JSON keeps as it is (every TC
        string) is joined into the entry's kept pieces: the entry of every other request with the
        same bidder, sync type and other signals, cut where the consent goes, so that a consent
        string of each user's own still finds its entry kept. ``consent``: :func:`_joinable` of
        the privacy's consent, when the caller has it already."""
        if consent is None:
            consent = _joinable(privacy.consent)
            if consent is None:
                return orjson.dumps(_entry(item, privacy.macros()))
        key = (item.bidder, item.sync_type, privacy.gdpr_signal, privacy.us_privacy, privacy.gpp, privacy.gpp_sid)
        pieces = self._entries.get(key)
        if pieces is None:
            pieces = _entry_pieces(item, privacy)
            if len(self._entries) >= ENTRY_CACHE_SIZE:
                self._entries.clear()
            self._entries[key] = pieces
        if not pieces:  # the slot text is the bidder's own: rendered whole each time
            return orjson.dumps(_entry(item, privacy.macros()))
        return consent.join(pieces) if len(pieces) > 1 else pieces[0]

    def _respond(
        self, status_text: str, chosen: list[Chosen], evaluations: list[Evaluation], debug: bool,
        privacy: SyncPrivacy,
    ) -> web.Response:
        consent = _joinable(privacy.consent)
        if consent is not None:
            entries = [self._status_entry(item, privacy, consent) for item in chosen]
        else:
            macros = privacy.macros()
            entries = [orjson.dumps(_entry(item, macros)) for item in chosen]
        body = b"".join((_STATUS_OK if status_text == "ok" else _STATUS_NO_COOKIE, b",".join(entries), b"]"))
        if debug:
            rejected = [
                {"bidder": e.bidder, "error": e.message()} if e.message() else {"bidder": e.bidder}
                for e in evaluations if e.status is not Status.OK
            ]
            if rejected:
                body += b',"debug":' + orjson.dumps(rejected)
        if self.analytics.enabled:
            self.analytics.log(cookie_sync_record(200, [], [orjson.loads(entry) for entry in entries]))
        return FastResponse(body=body + b"}\n", content_type="application/json", charset="utf-8")


# A consent string of these characters is written into JSON unchanged (TC strings are base64url
# segments joined by '.'), so it can be joined into an entry's pieces.
_VERBATIM_CONSENT = re.compile(r"[A-Za-z0-9._~-]*").fullmatch
# What an entry is rendered with in the consent's place (JSON keeps it unchanged); its pieces are
# kept only when it appears exactly as often as the consent macro.
_CONSENT_SLOT = "hbsConsentSlot7q3x"


def _joinable(consent: str) -> bytes | None:
    """``consent`` as the bytes JSON writes for it, when that is the string itself; else None."""
    return consent.encode() if _VERBATIM_CONSENT(consent) else None


def _entry(item: Chosen, macros: dict[str, str]) -> dict[str, Any]:
    """One ``bidder_status`` entry."""
    syncer = item.definition.syncer
    assert syncer is not None
    return {
        "bidder": item.bidder,
        "no_cookie": True,
        "usersync": {
            "url": syncer.templates[item.sync_type].render(macros),
            "type": item.sync_type,
            "supportCORS": syncer.support_cors,
        },
    }


def _entry_pieces(item: Chosen, privacy: SyncPrivacy) -> tuple[bytes, ...]:
    """The entry's JSON cut where the consent goes (one piece when it does not appear; none when
    the slot text is in the URL already, so that the cut would be wrong)."""
    macros = privacy.macros()
    macros["GDPRConsent"] = _CONSENT_SLOT
    pieces = tuple(orjson.dumps(_entry(item, macros)).split(_CONSENT_SLOT.encode()))
    syncer = item.definition.syncer
    assert syncer is not None
    if len(pieces) - 1 != syncer.templates[item.sync_type].parts[1::2].count("GDPRConsent"):
        return ()
    return pieces
