"""GET /setuid: a bidder's sync endpoint sends the browser here with its user id (reference §3).

Checks and texts follow PBS-Go; the cookie is written with the attributes DECISIONS fixes
(``SameSite=None; Secure`` always) and ``HttpOnly`` (no script reads it). The answer is the pixel
(``f=i``) or an empty 200 (``f=b``); without ``f`` the bidder's sync type decides (redirect -> i,
iframe -> b).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from aiohttp import hdrs, web
from multidict import istr

from hbserver.analytics import Analytics
from hbserver.analytics.records import setuid_record
from hbserver.bidders.registry import Bidder
from hbserver.events import PIXEL_PNG
from hbserver.metrics import Metrics, PendingCounter
from hbserver.privacy.tcf2 import ConsentError
from hbserver.stores.accounts import Account, AccountError, AccountStore
from hbserver.usersync.cookie import (
    AUDIENCE_NETWORK,
    CookieTooLarge,
    NotAPriority,
    UidsCookie,
    prepare_for_write,
)
from hbserver.usersync.privacy import PrivacyRequestError, setuid_privacy
from hbserver.usersync.service import SyncService, account_error, utcnow
from hbserver.web.cookies import request_cookies
from hbserver.web.errors import text_response
from hbserver.web.query import query_of
from hbserver.web.response import FastResponse

UNKNOWN_ACCOUNT = "unknown"
SETUID_STATUSES = (
    "ok", "bad_request", "opt_out", "syncer_unknown", "gdpr_blocked_host_cookie", "acct_blocked",
    "acct_config_malformed", "acct_invalid",
)
TOO_LARGE = "uid that's trying to be synced is bigger than MaxCookieSize"  # PBS-Go's CookieTooLarge text
MAX_UID_LENGTH = 4096  # longer than any cookie could carry
X_CONTENT_TYPE_OPTIONS = istr("X-Content-Type-Options")  # istr names: no case-folding on write


class SetUIDEndpoint:
    def __init__(
        self,
        service: SyncService,
        accounts: AccountStore,
        analytics: Analytics,
        metrics: Metrics,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.service = service
        self.accounts = accounts
        self.analytics = analytics
        self.metrics = metrics
        self.clock = clock
        self._outcomes = {s: metrics.counter(metrics.setuid_requests, s) for s in SETUID_STATUSES}
        # (syncer key, ok|cleared|sizedout|sizeblocked) -> syncer_sets
        self._sets: dict[tuple[str, str], PendingCounter] = {}

    def _count_set(self, key: str, outcome: str) -> None:
        counter = self._sets.get((key, outcome))
        if counter is None:
            counter = self._sets[key, outcome] = self.metrics.counter(self.metrics.syncer_sets, key, outcome)
        counter.pending += 1

    def _finish(
        self, response: web.Response, metric: str | None, bidder: str, uid: str, error: str = ""
    ) -> web.Response:
        # Error texts quote the request (the consent string): never read as anything but their type.
        response._headers[X_CONTENT_TYPE_OPTIONS] = "nosniff"  # response.headers, without the property
        if metric:
            self._outcomes[metric].pending += 1
        if self.analytics.enabled:
            success = response.status == 200 and not error
            self.analytics.log(setuid_record(response.status, bidder, uid, [error] if error else [], success))
        return response

    def _error(self, status: int, message: str, metric: str | None, bidder: str, uid: str) -> web.Response:
        response = text_response(status, message) if message else FastResponse(status=status)
        return self._finish(response, metric, bidder, uid, message or f"HTTP {status}")

    async def handle(self, request: web.Request) -> web.Response:
        query = query_of(request)
        service = self.service
        bidder_param = query.get("bidder", "")
        uid = query.get("uid", "")
        now = self.clock()
        cookies = request_cookies(request)
        cookie = service.read_cookie(cookies, now)
        if cookie.optout:
            return self._error(401, "", "opt_out", bidder_param, uid)
        if not bidder_param:
            return self._error(400, '"bidder" query param is required', "syncer_unknown", bidder_param, uid)
        bidder = service.registry.lookup(bidder_param)
        component = bidder_param  # the name activity rules see
        if bidder is None:  # a syncer key (cookie family, e.g. adnxs) that is not a bidder name
            bidder = service.bidder_of_sync_key(bidder_param)
            component = bidder.code if bidder is not None else bidder_param
        if bidder is None or bidder.disabled or bidder.syncer is None:
            return self._error(
                400, "The bidder name provided is not supported by Prebid Server", "syncer_unknown", bidder_param, uid
            )
        syncer = bidder.syncer
        fmt = query.get("f", "").lower() or syncer.default_format()
        if fmt not in ("b", "i"):
            return self._error(400, '"f" query param is invalid. must be "b" or "i"', "bad_request", bidder_param, uid)
        if len(uid) > MAX_UID_LENGTH:
            return self._error(400, f"uid is longer than {MAX_UID_LENGTH} characters", "bad_request", bidder_param, uid)
        account_id = query.get("account") or UNKNOWN_ACCOUNT
        try:
            account = self.accounts.cached(account_id) or await self.accounts.load(account_id)
        except AccountError as exc:
            status, message, metric = account_error(exc)
            return self._error(status, message, metric, bidder_param, uid)
        refusal = self._refusal(query, account, component, bidder_param, uid)
        if refusal is not None:
            return refusal
        if not uid:
            cookie.remove(syncer.key)
            self._count_set(syncer.key, "cleared")
        elif not (syncer.key == AUDIENCE_NETWORK and uid == "0"):
            cookie.set_uid(syncer.key, uid, now)
            self._count_set(syncer.key, "ok")
        return self._write(cookie, cookies, bidder, fmt, now, bidder_param, uid)

    def _refusal(
        self, query: Mapping[str, str], account: Account, component: str, bidder_param: str, uid: str
    ) -> web.Response | None:
        """Why the account's activity rules or the request's privacy signals refuse the sync (None: they
        allow it)."""
        try:
            privacy = setuid_privacy(
                query.get("gdpr", ""), query.get("gdpr_consent", ""), query.get("gpp", ""), query.get("gpp_sid", "")
            )
        except PrivacyRequestError as exc:
            return self._error(400, str(exc), "bad_request", bidder_param, uid)
        if not account.activities.allowed("syncUser", "bidder", component):
            return self._error(451, "", None, bidder_param, uid)
        try:
            gate = self.service.gate  # the account's TCF policy only when GDPR applies (it is not read otherwise)
            allowed = not gate.in_scope(privacy) or gate.host_cookie_allowed(
                privacy, gate.policy(account.settings.gdpr)
            )
        except ConsentError as exc:
            message = f"gdpr_consent was invalid. malformed consent string {privacy.consent}: {exc}"
            return self._error(400, message, "bad_request", bidder_param, uid)
        if not allowed:
            return self._error(
                451, "The gdpr_consent string prevents cookies from being saved", "gdpr_blocked_host_cookie",
                bidder_param, uid,
            )
        return None

    def _write(
        self, cookie: UidsCookie, cookies: Mapping[str, str], bidder: Bidder, fmt: str, now: datetime,
        bidder_param: str, uid: str,
    ) -> web.Response:
        """The uids cookie (or cookies) written with the new uid, and the pixel or empty page."""
        service = self.service
        syncer = bidder.syncer
        if service.parts is not None:  # several uids cookies (PBS-Java's number-of-uid-cookies)
            return self._write_parts(cookie, cookies, syncer.key, fmt, now, bidder_param, uid)
        try:
            value = prepare_for_write(
                cookie, service.max_cookie_bytes, service.priority_keys,
                bidder.code.lower() in service.priority_bidders,
            )
        except NotAPriority as exc:
            body = f"Warning: {exc}, cookie not updated"
            return self._finish(text_response(200, body), "ok", bidder_param, uid, body)
        except CookieTooLarge as exc:
            return self._error(400, str(exc), "bad_request", bidder_param, uid)

        if fmt == "i":
            response = FastResponse(body=PIXEL_PNG, content_type="image/png")
        else:
            response = FastResponse(content_type="text/html")
        headers = response._headers
        headers[hdrs.SET_COOKIE] = service.set_cookie(value, now)
        headers[hdrs.CACHE_CONTROL] = "no-store"
        return self._finish(response, "ok", bidder_param, uid)

    def _write_parts(
        self, cookie: UidsCookie, sent: Mapping[str, str], key: str, fmt: str, now: datetime, bidder: str, uid: str
    ) -> web.Response:
        """Write ``uids``, ``uids2``, … (PBS-Java): a uid beyond the last part is left out (counted as
        ``sizedout`` for a priority key, else ``sizeblocked``); the uid being synced too large for any
        part alone is PBS-Go's 400."""
        service = self.service
        split = service.split(cookie, now)
        if key in split.too_large:
            return self._error(400, TOO_LARGE, "bad_request", bidder, uid)
        for left in split.left_out + split.too_large:
            self._count_set(left, "sizedout" if left in service.priority_key_set else "sizeblocked")
        response = _synced(fmt)
        headers = response._headers
        for header in service.part_headers(split.values, sent, now):
            headers.add(hdrs.SET_COOKIE, header)
        headers[hdrs.CACHE_CONTROL] = "no-store"
        return self._finish(response, "ok", bidder, uid)


def _synced(fmt: str) -> web.Response:
    """The answer to a sync: the pixel (``f=i``) or an empty page (``f=b``)."""
    if fmt == "i":
        return FastResponse(body=PIXEL_PNG, content_type="image/png")
    return FastResponse(content_type="text/html")
