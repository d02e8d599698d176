"""Accounts: stored settings merged over ``account_defaults``, looked up through an LRU.

Resolution follows PBS-Go's ``account.GetAccount``: with ``account_required`` a request without an
account id (``unknown``) is refused; an account that is not stored gets the defaults (refused only
when ``account_required`` and ``account_defaults.disabled`` are both on); a disabled account and a
malformed account file are errors. Outcomes,
including "not found" and "malformed", are cached so that unknown ids never cost a disk read
per request.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from hbserver.config import AccountSettings, account_settings_problems, build, deep_merge, to_plain
from hbserver.logsetup import REPEAT_KEY
from hbserver.privacy.activity import ActivityConfigError, ActivityControl
from hbserver.stores.account_aliases import normalise
from hbserver.stores.account_keys import check_account_keys
from hbserver.stores.lru import LRUCache

if TYPE_CHECKING:  # hbserver.metrics fixes prometheus-client's mode when imported: the start-up account
    # check (hbserver.cli) reads accounts before the supervisor sets PROMETHEUS_MULTIPROC_DIR
    from hbserver.metrics import Metrics

log = logging.getLogger("hbserver.accounts")

FETCH_TIMEOUT_SECONDS = 1.0
REFUSED_KEYS = "is refused"  # the log line of an account setting a Prebid Server value hbserver cannot honour
UNKNOWN_ACCOUNT = "unknown"  # PBS-Go metrics.PublisherUnknown: the id of a request that names none


class AccountFetcher(Protocol):
    async def fetch_account(self, account_id: str) -> bytes | None:
        """The stored account JSON, or None when the account is not stored."""


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    settings: AccountSettings
    activities: ActivityControl  # built from settings.privacy.allowactivities once, when read


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A cached negative outcome; a fresh AccountError is raised from it each time."""

    status: int
    message: str
    reason: str


class AccountError(Exception):
    def __init__(self, status: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason


def _required() -> _Refusal:
    return _Refusal(
        400,
        "Invalid request: Prebid-server has been configured to discard requests without a valid Account ID. "
        "Please reach out to the prebid server host.",
        "unknown",
    )


def _unverified() -> _Refusal:
    return _Refusal(
        400,
        "Invalid request: Prebid-server could not verify the Account ID. "
        "Please reach out to the prebid server host.",
        "unknown",
    )


def _disabled(account_id: str) -> _Refusal:
    return _Refusal(
        503,
        f"Invalid request: Prebid-server has disabled Account ID: {account_id}, "
        "please reach out to the prebid server host.",
        "disabled",
    )


def _malformed(account_id: str) -> _Refusal:
    return _Refusal(
        500,
        f'Invalid request: The prebid-server account config for account id "{account_id}" is malformed. '
        "Please reach out to the prebid server host.",
        "malformed",
    )


def _cannot_honour(account_id: str, refused: list[str]) -> _Refusal:
    keys = ", ".join(line.partition(":")[0] for line in refused)
    return _Refusal(
        500,
        f'Invalid request: The prebid-server account config for account id "{account_id}" sets {keys}, '
        "which this server cannot honour. Please reach out to the prebid server host.",
        "malformed",
    )


def eid_transition(settings: AccountSettings) -> dict[str, Any]:
    """The account's ``allowactivities`` as PBS-Java's ActivityInfrastructureCreator reads them: with
    ``gdpr.purpose4.eid.activity_transition`` true (PBS-Java's ``purposes.p4.eid``) and a ``transmitUfpd``
    entry but no ``transmitEids`` one, ``transmitEids`` gets ``transmitUfpd``'s rules (its transition
    period's ``fallbackActivity``). Names match case-insensitively, as the activity controls read them."""
    activities = settings.privacy.allowactivities
    if settings.gdpr.purpose4.eid.activity_transition is not True or not isinstance(activities, dict):
        return activities
    names = {name.lower(): name for name in activities if isinstance(name, str)}
    if "transmiteids" in names or "transmitufpd" not in names:
        return activities
    return {**activities, "transmitEids": activities[names["transmitufpd"]]}


class AccountStore:
    def __init__(
        self,
        defaults: AccountSettings,
        fetcher: AccountFetcher | None,
        metrics: Metrics,
        *,
        required: bool = False,
        cache: LRUCache[Account | _Refusal] | None = None,
        timeout: float = FETCH_TIMEOUT_SECONDS,
    ) -> None:
        self.defaults = defaults
        self._defaults_plain = to_plain(defaults)
        self._default_activities = ActivityControl.from_config(eid_transition(defaults), defaults.privacy.modules)
        self.fetcher = fetcher
        self.required = required
        self.cache = cache
        self.timeout = timeout
        self._hit = metrics.counter(metrics.account_cache, "hit")
        self._miss = metrics.counter(metrics.account_cache, "miss")
        self._fetch_errors = metrics.account_fetch_errors
        self._pending: dict[str, asyncio.Task[Account | _Refusal]] = {}
        # Fetches under way when their account was invalidated: their outcome is not cached.
        self._stale: weakref.WeakSet[asyncio.Task[Account | _Refusal]] = weakref.WeakSet()

    def cached(self, account_id: str) -> Account | None:
        """The account when the cache holds it (no await on the hot path); raises a cached refusal."""
        cache = self.cache
        if cache is None:
            return None
        outcome = cache.get(account_id)
        if outcome is None:
            return None
        self._hit.pending += 1  # PendingCounter.inc, inline: every request reads its account here
        if outcome.__class__ is _Refusal:
            raise AccountError(outcome.status, outcome.message, outcome.reason)
        return outcome

    async def get(self, account_id: str) -> Account:
        """The account's effective settings; raises AccountError (status + message) when refused.

        The hottest endpoints spell this out as ``cached(id) or await load(id)``: a cache hit then
        costs no coroutine at all.
        """
        return self.cached(account_id) or await self.load(account_id)

    async def load(self, account_id: str) -> Account:
        """The slow path of :meth:`get`: fetch (one fetch per id at a time), resolve, cache."""
        self._miss.inc()
        task = self._pending.get(account_id)
        if task is None:
            task = asyncio.ensure_future(self._resolve(account_id))
            self._pending[account_id] = task
            task.add_done_callback(lambda t: self._done(account_id, t))
        outcome = await asyncio.shield(task)
        if self.cache is not None and task not in self._stale:
            self.cache.put(account_id, outcome)
        if isinstance(outcome, _Refusal):
            raise AccountError(outcome.status, outcome.message, outcome.reason)
        return outcome

    def _done(self, account_id: str, task: asyncio.Task[Account | _Refusal]) -> None:
        if self._pending.get(account_id) is task:  # not a newer fetch started after invalidate()
            del self._pending[account_id]

    def invalidate(self, account_id: str) -> None:
        """Forget the account (it changed in the store): the next lookup reads it again.

        A fetch under way still answers its callers but its outcome is not cached, since it may
        have read the old data.
        """
        if self.cache is not None:
            self.cache.pop(account_id)
        task = self._pending.pop(account_id, None)
        if task is not None:
            self._stale.add(task)

    async def _resolve(self, account_id: str) -> Account | _Refusal:
        if self.required and account_id == UNKNOWN_ACCOUNT:
            return _required()
        raw = None
        if self.fetcher is not None:
            try:
                raw = await asyncio.wait_for(self.fetcher.fetch_account(account_id), self.timeout)
            except TimeoutError:
                self._fetch_errors.labels("timeout").inc()
                raise AccountError(
                    504, f"Timed out fetching account '{account_id}' after {self.timeout:g} s", "timeout"
                ) from None
            except OSError as exc:
                self._fetch_errors.labels("io").inc()
                log.error("cannot read account %r: %s", account_id, exc)
                raise AccountError(
                    500, f"Error occurred while fetching account: {exc.strerror or exc}", "io"
                ) from None
        if raw is None:
            if self.required and self.defaults.disabled:
                return _unverified()
            return self._checked(Account(account_id, self.defaults, self._default_activities))
        return self._parse(account_id, raw)

    def _parse(self, account_id: str, raw: bytes) -> Account | _Refusal:
        try:
            data: Any = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            log.error("account %r is not valid JSON: %s", account_id, exc)
            self._fetch_errors.labels("malformed").inc()
            return _malformed(account_id)
        if not isinstance(data, dict):
            log.error("account %r is not a JSON object", account_id)
            self._fetch_errors.labels("malformed").inc()
            return _malformed(account_id)
        # PBS-Java's spellings become the keys hbserver applies (PBS-Go's; those win when both are set).
        data, problems = normalise(data)
        # Keys hbserver does not apply: said once per load (the account is cached), each line its own
        # repeat key so the log's repeat filter does not fold different keys or accounts together.
        keys = check_account_keys(account_id, data)
        for warning in keys.warnings:
            log.warning("%s", warning, extra={REPEAT_KEY: warning})
        if keys.refused:
            log.error("account %r %s: %s", account_id, REFUSED_KEYS, "; ".join(keys.refused))
            self._fetch_errors.labels("malformed").inc()
            return _cannot_honour(account_id, keys.refused)
        settings = build(AccountSettings, deep_merge(self._defaults_plain, data), "", problems, strict=False)
        if not problems:
            problems.extend(account_settings_problems(settings))
        if not problems:
            try:
                activities = ActivityControl.from_config(eid_transition(settings), settings.privacy.modules)
            except ActivityConfigError as exc:
                problems.append(f"{exc.section}: {exc}")
        if problems:
            log.error("account %r is malformed: %s", account_id, "; ".join(problems))
            self._fetch_errors.labels("malformed").inc()
            return _malformed(account_id)
        return self._checked(Account(account_id, settings, activities))

    @staticmethod
    def _checked(account: Account) -> Account | _Refusal:
        if account.settings.disabled:
            return _disabled(account.id)
        return account
