"""POST /cookie_sync: which bidders the browser should sync now (spec §4.4, reference §2).

Error texts and the order of checks are PBS-Go's; error bodies end with a newline as Go's
``http.Error`` writes them. Two deliberate leniencies (the specification's reading): a missing
``filterSettings.<type>.filter`` means ``include`` and missing ``bidders`` means ``*``; and a
numeric ``account`` (prebid-universal-creative sends one) is read as its decimal string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

import orjson
from aiohttp import hdrs, web

from hbserver.analytics import Analytics
from hbserver.analytics.records import cookie_sync_record
from hbserver.config import AccountCookieSync
from hbserver.metrics import Metrics, PendingCounter
from hbserver.privacy.sandbox import RECEIVE_COOKIE_DEPRECATION, receive_cookie_deprecation
from hbserver.privacy.tcf2 import ConsentError
from hbserver.privacy.tcf_policy import TcfPolicy
from hbserver.stores.accounts import Account, AccountError, AccountStore
from hbserver.usersync.chooser import (
    NO_FILTERS,
    BidderFilter,
    Candidates,
    Chosen,
    Evaluation,
    Shuffle,
    Status,
    SyncFilters,
    TcfCheck,
    bidder_order,
    choose,
    permutations_of,
    pick_index,
    pick_order,
    shuffle,
)
from hbserver.usersync.cookie import UidsCookie
from hbserver.usersync.outcomes import Outcome, body_pieces, keep
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
    us_privacy: str = ""
    gpp: str = ""
    gpp_sid: str = ""
    limit: int | None = None
    coop_sync: bool | None = None
    account: str = ""
    filters: SyncFilters = NO_FILTERS
    debug: bool = False
    gdpr_consent: str = ""  # last: _parse_cut swaps it in


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
# A body with a consent string is kept by its bytes with the string cut out (each user's string
# is their own, the rest repeats), when cutting it is safe: see _parse_cut. Not a body with a GPP
# string: each user's is their own and may hold the consent, so such a body never comes back.
PARSED_CACHE_SIZE = 1024
MAX_CACHED_BODY_BYTES = 2048
_PER_USER_KEYS = (b'_consent"', b'"gpp"')
_CONSENT_KEY = b'"gdpr_consent"'
_CONSENT_FIELD = re.compile(rb'"gdpr_consent"[ \t\n\r]*:[ \t\n\r]*"').search  # JSON's whitespace
# A consent string of these bytes is written into JSON as it is and, in a string, reads the same
# whatever surrounds it (TC strings are base64url segments joined by '.').
_VERBATIM_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-"
# Each of those bytes to a letter, every other byte to "!" (a regex over the 50-odd characters of a TC
# string costs about twice this table's translate and isalpha).
_VERBATIM_TABLE = bytes(0x61 if byte in _VERBATIM_BYTES else 0x21 for byte in range(256))


def _verbatim(data: bytes) -> bool:
    """Whether ``data`` holds only :data:`_VERBATIM_BYTES` (the empty string does)."""
    return not data or data.translate(_VERBATIM_TABLE).isalpha()

_parsed: dict[bytes, CookieSyncRequest] = {}
_new_request = tuple.__new__


def parse_request_cached(body: bytes) -> CookieSyncRequest:
    """:func:`parse_request`, kept for a body seen before (a refused body is parsed each time)."""
    return parse_shared(body)[0]


def parse_shared(body: bytes) -> tuple[CookieSyncRequest, CookieSyncRequest | None]:
    """The request, and the kept parse it comes from: itself, or (for a body seen before but for its
    consent string) the parse of that earlier body; None when nothing was kept for this body."""
    if body.__class__ is not bytes or _PER_USER_KEYS[1] in body:
        return parse_request(body), None
    if _PER_USER_KEYS[0] in body:
        return _parse_cut(body)
    if len(body) > MAX_CACHED_BODY_BYTES:
        return parse_request(body), None
    parsed = _parsed.get(body)
    if parsed is None:
        parsed = parse_request(body)
        _keep(body, parsed)
    return parsed, parsed


def _keep(key: bytes, parsed: CookieSyncRequest) -> None:
    if len(_parsed) >= PARSED_CACHE_SIZE:
        _parsed.clear()
    _parsed[key] = parsed


def _parse_cut(body: bytes) -> tuple[CookieSyncRequest, CookieSyncRequest | None]:
    """:func:`parse_shared` of a body with a ``gdpr_consent``, kept by the body without the string.

    Only for a body with no backslash (so every quote delimits a string), one ``"gdpr_consent"``
    token, found at a string's start and followed by ``:`` and a string, and a value of
    :data:`_VERBATIM_BYTES`: then two bodies with the same bytes around the value read alike but for
    that value (which the first parse shows is the top-level ``gdpr_consent``, when not empty). Those bytes are the
    key, so a key found kept passed the checks of its own (the value cannot change them)."""
    field = _CONSENT_FIELD(body)
    if field is None:
        return parse_request(body), None
    start = field.end()
    end = body.find(b'"', start)
    value = body[start:end]
    if end < 0 or not _verbatim(value):
        return parse_request(body), None
    key = body[:start] + body[end:]
    consent = value.decode()
    shared = _parsed.get(key)
    if shared is not None:
        if consent == shared.gdpr_consent:
            return shared, shared
        return _new_request(CookieSyncRequest, (*shared[:-1], consent)), shared
    parsed = parse_request(body)
    if (
        len(key) <= MAX_CACHED_BODY_BYTES
        and b"\\" not in key
        and key.count(_CONSENT_KEY) == 1
        and not key.count(b'"', 0, field.start()) % 2
        and consent  # an empty one would match a missing top-level field
        and parsed.gdpr_consent == consent  # the top-level field (else: never kept)
    ):
        _keep(key, parsed)
        return parsed, parsed
    return parsed, None


def _bidders(bidders: Any) -> list[str]:
    """``bidders`` (a list of strings, cut to MAX_BIDDERS; absent: none); BadRequest otherwise."""
    if bidders is None:
        return []
    if bidders.__class__ is not list:
        raise BadRequest("JSON parsing failed: bidders must be an array of strings")
    for bidder in bidders:
        if bidder.__class__ is not str:
            raise BadRequest("JSON parsing failed: bidders must be an array of strings")
    return bidders[:MAX_BIDDERS] if len(bidders) > MAX_BIDDERS else bidders


def _gdpr_signal(gdpr: Any) -> int | None:
    """``gdpr``: 0, 1 (a whole float read as its integer) or absent; BadRequest otherwise."""
    if gdpr is not None and gdpr.__class__ is not int:
        if isinstance(gdpr, bool) or not isinstance(gdpr, (int, float)):
            raise BadRequest("JSON parsing failed: gdpr must be an integer")
        gdpr = int(gdpr) if gdpr in (0, 1) else gdpr
    if gdpr is not None and gdpr not in (0, 1):
        raise BadRequest("GDPR signal should be integer 0 or 1")
    return gdpr


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
    bidders = _bidders(get("bidders"))
    gdpr = _gdpr_signal(get("gdpr"))
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
        us_privacy if us_privacy.__class__ is str else _string(us_privacy, "us_privacy"),
        gpp if gpp.__class__ is str else _string(gpp, "gpp"),
        gpp_sid if gpp_sid.__class__ is str else _string(gpp_sid, "gpp_sid"),
        limit,
        coop if coop is None or coop.__class__ is bool else _flag(coop, "coopSync"),
        account if account.__class__ is str else _string(account, "account"),
        filters,
        debug if debug.__class__ is bool else bool(_flag(debug, "debug")),
        consent if consent.__class__ is str else _string(consent, "gdpr_consent"),
    )


def effective_limit(requested: int | None, default_limit: int, max_limit: int) -> int:
    """PBS-Go: the request's limit, else the account default; <= 0 is unlimited (0); capped by max."""
    limit = requested if requested is not None else default_limit
    if limit <= 0:
        limit = 0
    if max_limit > 0 and (limit == 0 or limit > max_limit):
        limit = max_limit
    return limit


# Plans kept per endpoint (by shared parse and account), and candidate sets (by account, filters and
# privacy facts): emptied when full.
PLAN_CACHE_SIZE = 1024


class _Plan:
    """What one kind of request of one account needs but the cookie, the consent string and the
    shuffle: made once per shared parse (see :func:`parse_shared`) and account. ``privacy`` is the
    first such request's (its consent string is that request's own)."""

    __slots__ = ("account", "candidates", "coop", "distinct", "entries", "groups", "groups_only", "limit", "orders",
                 "outcomes", "policy", "privacy", "requested", "shared")

    def __init__(
        self, account: Account, privacy: SyncPrivacy, limit: int, coop: bool, groups: list[list[str]],
        groups_only: bool, requested: tuple[str, ...], policy: TcfPolicy | None, candidates: Candidates,
    ) -> None:
        self.account = account
        self.privacy = privacy
        self.limit = limit
        self.coop = coop
        self.groups = groups
        self.groups_only = groups_only
        self.requested = requested
        self.policy = policy  # the account's TCF policy when GDPR applies, else None
        self.candidates = candidates
        self.shared: CookieSyncRequest | None = None
        self.distinct = False  # the order can hold no name and no sync key twice (see choose)
        # every order of the requested bidders, when few and the sync is not cooperative: one picked
        # at random is the shuffled order (with the module's shuffle only: a test's stays in use)
        self.orders: tuple[tuple[str, ...], ...] | None = None
        # each chosen bidder's bidder_status entry cut where the consent goes (see _status_entry)
        self.entries: dict[str, tuple[bytes, ...]] = {}
        # the chooser's walks for requests without a uid, by order index and TCF decisions' key
        self.outcomes: dict[Hashable, Outcome] = {}


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
        self._plans: dict[tuple[int, int, bool], _Plan] = {}  # see _plan
        self._candidate_sets: dict[tuple[Any, ...], tuple[Account, Candidates]] = {}  # see _candidates
        self._ok = self._outcomes["ok"]
        # evaluation (each made once, by the chooser's candidates) -> its syncer_requests handle, None
        # for statuses not counted there
        self._syncer_counters: dict[Evaluation, PendingCounter | None] = {}

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
            sync_request, shared = parse_shared(body)
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
        response = self._answer(sync_request, account, cookies, shared)
        deprecation = account.settings.privacy.privacysandbox.cookiedeprecation
        if deprecation.enabled:  # PBS-Go: on every answer once the account is known
            label = receive_cookie_deprecation(RECEIVE_COOKIE_DEPRECATION in cookies, deprecation)
            if label is not None:
                response.headers.add(hdrs.SET_COOKIE, label)
        return response

    def _answer(
        self, sync_request: CookieSyncRequest, account: Account, cookies: dict[str, str],
        shared: CookieSyncRequest | None = None,
    ) -> web.Response:
        """The answer for a parsed request of a known account (``shared``: :func:`parse_shared`'s)."""
        service = self.service
        try:
            plan = self._plan(sync_request, account, shared)
        except PrivacyRequestError as exc:
            return self._fail(400, str(exc), "bad_request")
        now = self.clock()
        cookie = service.read_cookie(cookies, now)
        if cookie.optout:
            return self._fail(401, "User has opted out", "opt_out")
        status_text = "ok" if cookie.has_live_uid(now) else "no_cookie"
        # the consent this request is read with: a plan's privacy was read from a body like this
        # one but for its gdpr_consent (which GPP overrides only in a plan of this body alone)
        consent = plan.privacy.consent if sync_request.gpp else sync_request.gdpr_consent
        tcf = None
        decisions: Hashable | None = ()  # what the TCF decisions are read from (): none are made
        if plan.policy is not None:  # in GDPR scope: the account's TCF policy
            gate = service.gate
            permissions = gate.consent_permissions(consent, plan.policy)
            try:
                host_allowed = not gate.host_vendor_id or permissions.host_cookie_allowed(gate.host_vendor_id)
            except ConsentError:
                host_allowed = False
            if not host_allowed:
                self._count("gdpr_blocked_host_cookie")
                return self._respond(status_text, [], [], sync_request.debug, plan, consent)
            tcf = permissions.bidder_sync_allowed
            decisions = permissions.sync_decisions_key()
        orders = plan.orders
        if orders is not None and decisions is not None and not cookie.uids:
            return self._kept_answer(plan, orders, decisions, tcf, cookie, now, sync_request.debug, consent)
        if orders is not None:
            order = pick_order(orders)
        else:
            order = bidder_order(
                plan.requested, service.registry.syncable, plan.coop, plan.groups, plan.groups_only, self.shuffle
            )
        chosen, evaluations = choose(order, plan.limit, plan.candidates, cookie, now, tcf, plan.distinct)
        self._ok.pending += 1
        for counter in self._counters_of(evaluations):
            counter.pending += 1
        return self._respond(status_text, chosen, evaluations, sync_request.debug, plan, consent)

    def _kept_answer(
        self, plan: _Plan, orders: tuple[tuple[str, ...], ...], decisions: Hashable, tcf: TcfCheck,
        cookie: UidsCookie, now: datetime, debug: bool, consent: str,
    ) -> web.Response:
        """The answer to a request with no uid in its cookie, from the plan's outcome kept for the order
        picked and the TCF ``decisions``' key (:mod:`hbserver.usersync.outcomes`)."""
        index = pick_index(orders)
        key = (index, decisions)
        outcome = plan.outcomes.get(key)
        if outcome is None:  # the walk, as without the memo; the body's pieces wait for a second use
            chosen, evaluations = choose(orders[index], plan.limit, plan.candidates, cookie, now, tcf, plan.distinct)
            outcome = Outcome(chosen, evaluations, self._counters_of(evaluations))
            keep(plan.outcomes, key, outcome)
        elif not debug and not self.analytics.enabled and (joinable := _joinable(consent)) is not None:
            pieces = outcome.body_pieces
            if pieces is None:
                pieces = outcome.body_pieces = self._body_pieces(plan, outcome.chosen)
            if pieces:
                self._count_outcome(outcome)
                return FastResponse(body=joinable.join(pieces), content_type="application/json", charset="utf-8")
        self._count_outcome(outcome)
        return self._respond("no_cookie", outcome.chosen, outcome.evaluations, debug, plan, consent)

    def _count_outcome(self, outcome: Outcome) -> None:
        self._ok.pending += 1
        for counter in outcome.counters:
            counter.pending += 1

    def _counters_of(self, evaluations: list[Evaluation]) -> tuple[PendingCounter, ...]:
        """The ``syncer_requests`` handles ``evaluations`` count (one each, but for uncounted statuses)."""
        counters = self._syncer_counters
        found = []
        for evaluation in evaluations:
            counter = counters.get(evaluation, False)
            if counter is False:
                counter = counters[evaluation] = self._syncer_counter(evaluation.sync_key, evaluation.status)
            if counter is not None:
                found.append(counter)
        return tuple(found)

    def _body_pieces(self, plan: _Plan, chosen: list[Chosen]) -> tuple[bytes, ...]:
        """A no-cookie answer's body for ``chosen``, cut where the consent goes; () when an entry's
        slot text is the bidder's own (it renders whole each time)."""
        entries = []
        for item in chosen:
            pieces = self._plan_pieces(plan, item)
            if not pieces:
                return ()
            entries.append(pieces)
        return body_pieces(_STATUS_NO_COOKIE, entries, b"]}\n")

    def _plan_pieces(self, plan: _Plan, item: Chosen) -> tuple[bytes, ...]:
        """``item``'s entry pieces as ``plan`` keeps them (:meth:`_pieces`, made on first use)."""
        pieces = plan.entries.get(item.bidder)
        return pieces if pieces is not None else self._pieces(plan.entries, item, plan.privacy)

    def _plan(self, sync_request: CookieSyncRequest, account: Account, shared: CookieSyncRequest | None) -> _Plan:
        """The request's :class:`_Plan`: kept by the shared parse, the account and whether a consent
        string is given (all a plan is read from but the consent string itself, which only decides
        whether a missing one is an error); made for this request alone when nothing was shared."""
        if shared is None:
            return self._make_plan(sync_request, account)
        key = (id(shared), id(account), not sync_request.gdpr_consent)
        plan = self._plans.get(key)
        if plan is None or plan.shared is not shared or plan.account is not account:
            plan = self._make_plan(sync_request, account)
            plan.shared = shared
            if not plan.coop:
                plan.distinct = plan.candidates.distinct(plan.requested or self.service.registry.syncable)
                if self.shuffle is shuffle and plan.requested:
                    plan.orders = permutations_of(plan.requested)
            if len(self._plans) >= PLAN_CACHE_SIZE:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _make_plan(self, sync_request: CookieSyncRequest, account: Account) -> _Plan:
        """Raises PrivacyRequestError (the request's privacy fields cannot be read)."""
        service = self.service
        gate = service.gate
        settings = account.settings.cookie_sync
        privacy = cookie_sync_privacy(
            sync_request.gdpr, sync_request.gdpr_consent, sync_request.us_privacy, sync_request.gpp,
            sync_request.gpp_sid, service.config.gdpr.default_value,
        )
        coop, groups = self._cooperation(sync_request, settings)
        filters = sync_request.filters
        if settings.disabled_iframe_bidders:
            filters = without_iframes(filters, settings.disabled_iframe_bidders)
        return _Plan(
            account,
            privacy,
            effective_limit(sync_request.limit, settings.default_limit, settings.max_limit),
            coop,
            groups,
            settings.priority_groups_only,
            sync_request.bidders,
            gate.policy(account.settings.gdpr) if gate.in_scope(privacy) else None,
            self._candidates(account, filters, privacy),
        )

    def _candidates(self, account: Account, filters: SyncFilters, privacy: SyncPrivacy) -> Candidates:
        """The chooser's candidates for these filters and privacy facts, kept per account (bounded)."""
        ccpa_blocks = self.service.gate.ccpa_blocks(privacy)
        key = (id(account), filters, privacy.gdpr_signal, privacy.gpp_sid, ccpa_blocks)
        found = self._candidate_sets.get(key)
        if found is not None and found[0] is account:
            return found[1]
        activities = account.activities
        candidates = Candidates(
            self.service.registry, filters, privacy.gdpr_signal, privacy.gpp_sid,
            partial(activities.allowed, "syncUser", "bidder") if activities.governs("syncUser") else None,
            ccpa_blocks,
        )
        if len(self._candidate_sets) >= PLAN_CACHE_SIZE:
            self._candidate_sets.clear()
        self._candidate_sets[key] = (account, candidates)
        return candidates

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
        if len(self._syncer_counters) >= ENTRY_CACHE_SIZE:  # evaluations are remade when candidates are
            self._syncer_counters.clear()
        return self.metrics.counter(self.metrics.syncer_requests, sync_key, metric)

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
        pieces = self._pieces(None, item, privacy)
        if not pieces:  # the slot text is the bidder's own: rendered whole each time
            return orjson.dumps(_entry(item, privacy.macros()))
        return consent.join(pieces) if len(pieces) > 1 else pieces[0]

    def _pieces(
        self, kept: dict[str, tuple[bytes, ...]] | None, item: Chosen, privacy: SyncPrivacy
    ) -> tuple[bytes, ...]:
        """:func:`_entry_pieces`, kept by the privacy values but the consent (and in ``kept``, a
        plan's entries, by the bidder: the plan fixes the rest)."""
        key = (item.bidder, item.sync_type, privacy.gdpr_signal, privacy.us_privacy, privacy.gpp, privacy.gpp_sid)
        pieces = self._entries.get(key)
        if pieces is None:
            pieces = _entry_pieces(item, privacy)
            if len(self._entries) >= ENTRY_CACHE_SIZE:
                self._entries.clear()
            self._entries[key] = pieces
        if kept is not None:
            if len(kept) >= ENTRY_CACHE_SIZE:
                kept.clear()
            kept[item.bidder] = pieces
        return pieces

    def _respond(
        self, status_text: str, chosen: list[Chosen], evaluations: list[Evaluation], debug: bool,
        plan: _Plan, consent: str,
    ) -> web.Response:
        """The answer, with the plan's privacy values but the consent string, which is ``consent``."""
        joinable = _joinable(consent)
        if joinable is not None:
            entries = []
            for item in chosen:
                pieces = self._plan_pieces(plan, item)
                entries.append(joinable.join(pieces) if pieces else self._status_entry(item, plan.privacy, joinable))
        else:
            macros = plan.privacy.macros()
            macros["GDPRConsent"] = consent
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


# What an entry is rendered with in the consent's place (JSON keeps it unchanged); its pieces are
# kept only when it appears exactly as often as the consent macro.
_CONSENT_SLOT = "hbsConsentSlot7q3x"


def _joinable(consent: str) -> bytes | None:
    """``consent`` as the bytes JSON writes for it, when that is the string itself (every character
    one of :data:`_VERBATIM_BYTES`, as in TC strings, so it can be joined into an entry's pieces); else None."""
    if not consent.isascii():  # (a lone surrogate would not even encode)
        return None
    data = consent.encode()
    return data if _verbatim(data) else None


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
