"""StoredData: stored requests, imps, responses, accounts and profiles from filesystem, database and HTTP.

Backends are asked in PBS order, filesystem -> database -> HTTP, each only for the ids the
earlier ones did not have. An id a backend failed on (unreadable file, database down) is still
asked of the later ones; when none has it, the caller gets the failure ("could not be fetched"),
never "not found", and nothing is cached.

Requests, imps, responses and profiles go through an LRU per kind (:mod:`.cache`); AMP requests and imps
have their own, since ``http.amp_endpoint`` may answer differently. Accounts are not cached
here: :class:`~hbserver.stores.accounts.AccountStore` caches the parsed account and subscribes to
changes (:meth:`StoredData.add_listener`).

Single flight: the misses of one call are fetched as one batch by a background task that every
concurrent caller wanting one of those ids joins. Each caller waits only up to its own deadline;
the batch goes on (up to ``flight_timeout`` seconds) so that its answer still fills the cache.

Database changes reach the cache through the poller (:meth:`StoredData.poll_once`, every
``poll_for_updates.refresh_rate_seconds``): each changed or deleted id is dropped from the cache
(including any batch for it under way, whose answer is then not cached) and reported to the
listeners of its kind. The next lookup reads it again through the whole backend chain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from prometheus_client import Counter

from hbserver.config import Config
from hbserver.logsetup import LogLimiter
from hbserver.metrics import Metrics
from hbserver.stores.stored.base import (
    Backend,
    BackendError,
    Failure,
    Kind,
    id_problem,
    invalid,
    not_fetched,
    not_found,
)
from hbserver.stores.stored.cache import MISSING, KindCache
from hbserver.stores.stored.database import build_database
from hbserver.stores.stored.filesystem import FilesystemBackend
from hbserver.stores.stored.http import HttpBackend
from hbserver.stores.stored.scoped import Variants, resolve
from hbserver.stores.stored.sql import SqlBackend
from hbserver.web.client import SharedSession

log = logging.getLogger("hbserver.stored")

FLIGHT_TIMEOUT_SECONDS = 5.0  # longest a batch may take when its callers gave up sooner
POLL_TIMEOUT_SECONDS = 30.0

ChangeListener = Callable[[str], None]
_Key = tuple[Kind, str]
_Outcome = bytes | Variants | Failure | None  # None: stored nowhere; Variants: one item per account
_CACHED_KINDS: tuple[Kind, ...] = ("requests", "imps", "responses", "profiles")
_CACHE_LABELS = {"requests": "request", "imps": "imp", "responses": "response", "profiles": "profile"}
# PBS-Go's stored data type (stored_<type>_fetch_time_seconds, stored_<type>_errors) of each kind.
_PBS_TYPES = {"requests": "request", "imps": "request", "responses": "response", "accounts": "account"}
# Failure labels that mean the backend could not be reached (PBS-Go's "network"); others are "undefined".
_NETWORK_FAILURES = frozenset({"timeout", "unavailable"})


class _New:
    """Placeholder of an id that goes into the batch this call starts."""

    __slots__ = ()


_NEW = _New()


@dataclass(frozen=True, slots=True)
class _Invalid:
    why: str


@dataclass(frozen=True, slots=True)
class _TimedOut:
    ms: float


class StoredDataError(OSError):
    """An account could not be fetched (AccountStore answers OSError with a 500 naming it)."""


class _Flight:
    """One background batch; ``stale`` holds the ids invalidated while it ran (not cached)."""

    __slots__ = ("amp", "keys", "stale", "task")

    def __init__(self, keys: list[_Key], amp: bool) -> None:
        self.keys = keys
        self.amp = amp
        self.stale: set[_Key] = set()
        self.task: asyncio.Future[dict[_Key, _Outcome]]


class StoredData:
    def __init__(
        self,
        metrics: Metrics,
        *,
        filesystem: FilesystemBackend | None = None,
        database: SqlBackend | None = None,
        http: HttpBackend | None = None,
        amp_http: HttpBackend | None = None,
        cache_size: int | None = 10000,
        cache_ttl_seconds: float = 300,
        refresh_rate_seconds: float = 30,
        poll_timeout_seconds: float = 0,
        flight_timeout: float = FLIGHT_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``cache_size`` None = no cache (``in_memory_cache.type: none``)."""
        self.database = database
        self.refresh_rate = refresh_rate_seconds
        self.poll_timeout = poll_timeout_seconds  # 0: the refresh rate, at most POLL_TIMEOUT_SECONDS
        self.flight_timeout = flight_timeout
        self._chains: dict[bool, list[Backend]] = {
            False: [b for b in (filesystem, database, http) if b is not None],
            True: [b for b in (filesystem, _amp_view(database), amp_http) if b is not None],
        }
        self._caches: dict[tuple[Kind, bool], KindCache] = {}
        self._hit: dict[tuple[Kind, bool], Callable[[], None]] = {}
        self._miss: dict[tuple[Kind, bool], Callable[[], None]] = {}
        for kind in _CACHED_KINDS:
            for amp in (False, True) if kind in ("requests", "imps") else (False,):
                label = ("amp_" if amp else "") + _CACHE_LABELS[kind]
                pbs = {"requests": metrics.stored_request_cache, "imps": metrics.stored_imp_cache}.get(kind)
                self._hit[kind, amp] = _both(metrics, metrics.stored_data_cache, label, pbs, "hit")
                self._miss[kind, amp] = _both(metrics, metrics.stored_data_cache, label, pbs, "miss")
                if cache_size is not None:
                    self._caches[kind, amp] = KindCache(cache_size, cache_ttl_seconds, clock)
        # Accounts saved by HTTP events or the admin endpoints (AccountStore caches the parsed account,
        # so the raw JSON is kept here for its next load); None without an in-memory cache.
        self._saved_accounts = KindCache(cache_size, cache_ttl_seconds, clock) if cache_size is not None else None
        self._metrics = metrics
        self._fetch_time = {
            b.name: metrics.stored_data_fetch_time.labels(b.name) for chain in self._chains.values() for b in chain
        }
        self._deadline_errors = metrics.counter(metrics.stored_data_fetch_errors, "all", "deadline")
        self._poll_errors = metrics.counter(metrics.stored_data_fetch_errors, "database", "poll")
        self._inflight: dict[tuple[bool, Kind, str], _Flight] = {}
        self._flights: set[asyncio.Future[dict[_Key, _Outcome]]] = set()
        self._listeners: dict[str, list[ChangeListener]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._poll_failing = False
        self._log = LogLimiter(log)

    # -- lifetime ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Create the database pool and start the change poller; never waits for the database."""
        if self.database is not None and self._poller is None:
            await self.database.start()
            self._poller = asyncio.create_task(self._poll_forever(), name="stored-data-poller")

    async def close(self) -> None:
        """Stop the poller and any batch under way, close the database pool."""
        tasks = [t for t in (self._poller, *self._flights) if t is not None]
        self._poller = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.database is not None:
            await self.database.close()

    def add_listener(self, kind: Kind, listener: ChangeListener) -> None:
        """Call ``listener(id)`` for every id of ``kind`` the database poll finds changed or deleted.

        Wire accounts with ``stored.add_listener("accounts", account_store.invalidate)``.
        """
        self._listeners.setdefault(kind, []).append(listener)

    # -- lookups -------------------------------------------------------------------------------

    async def fetch_requests(
        self, request_ids: Sequence[str], imp_ids: Sequence[str], timeout_s: float, *, amp: bool = False,
        account: str = "",
    ) -> tuple[dict[str, bytes], dict[str, bytes], list[str]]:
        """Raw JSON of stored requests and imps by id, and one error text per id not returned.

        ``amp`` asks ``http.amp_endpoint`` instead of ``http.endpoint`` (files and tables are shared).
        ``account`` picks among an id's per-account items (:mod:`.scoped`; "" = the request names none).
        """
        found, errors = await self._lookup({"requests": request_ids, "imps": imp_ids}, amp, timeout_s, account)
        return found["requests"], found["imps"], errors

    async def fetch_amp_request(
        self, tag_id: str, timeout_s: float, account: str = ""
    ) -> tuple[bytes | None, list[str]]:
        """The stored request an AMP ``tag_id`` names (the AMP variant of :meth:`fetch_requests`)."""
        requests, _imps, errors = await self.fetch_requests([tag_id], (), timeout_s, amp=True, account=account)
        return requests.get(tag_id), errors

    def cached_amp_request(self, tag_id: str) -> bytes | None:
        """The stored request an AMP ``tag_id`` names when the in-process cache holds it (a hit, counted as
        :meth:`fetch_amp_request` counts it), else None: then ask :meth:`fetch_amp_request`."""
        cache = self._caches.get(("requests", True))
        cached = cache.get(tag_id) if cache is not None else None
        if cached is None or cached is MISSING or isinstance(cached, Variants):  # Variants: the account picks
            return None
        self._hit["requests", True]()
        return cached  # type: ignore[return-value]  # the cache holds bytes or MISSING

    async def fetch_responses(self, ids: Sequence[str], timeout_s: float) -> tuple[dict[str, bytes], list[str]]:
        found, errors = await self._lookup({"responses": ids}, False, timeout_s)
        return found["responses"], errors

    async def fetch_profiles(self, ids: Sequence[str], timeout_s: float) -> tuple[dict[str, bytes], list[str]]:
        """Raw JSON of profiles by id (PBS-Java's; files and tables only: the HTTP protocol has none, as
        PBS-Java's HTTP settings answer every profile "not found") and one error text per id not returned."""
        found, errors = await self._lookup({"profiles": ids}, False, timeout_s)
        return found["profiles"], errors

    def count_profiles(self, reason: str, account: str | None = None) -> None:
        """PBS-Java's profile metrics (ProfileCounter): ``profiles{reason}``, or with ``account`` (within the
        account label bound) ``account_profiles{account, reason}``."""
        metrics = self._metrics
        if account is None:
            metrics.counter(metrics.profiles, reason).inc()
            return
        label = metrics.account_label(account)
        if label is not None:
            metrics.counter(metrics.account_profiles, label, reason).inc()

    async def fetch_account(self, account_id: str) -> bytes | None:
        """The stored account JSON or None (AccountFetcher protocol); raises StoredDataError on failure.

        Not cached here (AccountStore caches the parsed account); the caller bounds the wait.
        """
        if id_problem(account_id):
            return None
        saved = self._saved_accounts.get(account_id) if self._saved_accounts is not None else None
        if isinstance(saved, bytes):
            return saved
        [(kind, item_id, outcome)] = await self._resolve({"accounts": [account_id]}, False, self.flight_timeout)
        if isinstance(outcome, bytes) or outcome is None:
            return outcome
        raise StoredDataError(_message(kind, item_id, outcome))

    async def _lookup(
        self, wanted: dict[Kind, Sequence[str]], amp: bool, timeout_s: float, account: str = ""
    ) -> tuple[dict[Kind, dict[str, bytes]], list[str]]:
        found: dict[Kind, dict[str, bytes]] = {kind: {} for kind in wanted}
        errors = []
        for kind, item_id, outcome in await self._resolve(wanted, amp, timeout_s):
            if isinstance(outcome, Variants):
                picked = resolve(kind, account, item_id, outcome)
                if isinstance(picked, str):
                    errors.append(picked)
                    continue
                outcome = picked
            if isinstance(outcome, bytes):
                found[kind][item_id] = outcome
            else:
                errors.append(_message(kind, item_id, outcome))
        return found, errors

    async def _resolve(
        self, wanted: dict[Kind, Sequence[str]], amp: bool, timeout_s: float
    ) -> list[tuple[Kind, str, _Outcome | _Invalid | _TimedOut]]:
        """Each distinct id's outcome, in the order asked: cache, then batches under way, then a new one."""
        slots: list[tuple[Kind, str, _Outcome | _Invalid | _Flight | _New]] = []
        missed: dict[Kind, list[str]] = {}
        for kind, ids in wanted.items():
            cache = self._caches.get((kind, amp))
            seen: set[str] = set()
            for item_id in ids:
                if item_id in seen:
                    continue
                seen.add(item_id)
                if cache is not None:
                    cached = cache.get(item_id)
                    if cached is not None:
                        self._hit[kind, amp]()
                        slots.append((kind, item_id, None if cached is MISSING else cached))  # type: ignore[arg-type]
                        continue
                if kind in _CACHE_LABELS:
                    self._miss[kind, amp]()
                problem = id_problem(item_id)
                if problem is not None:
                    slots.append((kind, item_id, _Invalid(problem)))
                    continue
                flight = self._inflight.get((amp, kind, item_id))
                if flight is None:
                    missed.setdefault(kind, []).append(item_id)
                    slots.append((kind, item_id, _NEW))
                else:
                    slots.append((kind, item_id, flight))
        waiting = {outcome.task for _k, _i, outcome in slots if isinstance(outcome, _Flight)}
        if not missed and not waiting:
            return slots  # type: ignore[return-value]  # all answered without a backend
        new = self._launch(missed, amp, timeout_s) if missed else None
        if new is not None:
            waiting.add(new.task)
        timeout_s = max(timeout_s, 0.0)
        done, _pending = await asyncio.wait(waiting, timeout=timeout_s)
        timed_out = False
        resolved: list[tuple[Kind, str, _Outcome | _Invalid | _TimedOut]] = []
        for kind, item_id, outcome in slots:
            flight = new if outcome is _NEW else outcome
            if not isinstance(flight, _Flight):
                resolved.append((kind, item_id, outcome))  # type: ignore[arg-type]
            elif flight.task in done:
                resolved.append((kind, item_id, flight.task.result().get((kind, item_id))))
            else:
                timed_out = True
                resolved.append((kind, item_id, _TimedOut(timeout_s * 1000)))
        if timed_out:
            self._deadline_errors.inc()
        return resolved

    # -- batches -------------------------------------------------------------------------------

    def _launch(self, wanted: dict[Kind, list[str]], amp: bool, timeout_s: float) -> _Flight:
        keys = [(kind, item_id) for kind, ids in wanted.items() for item_id in ids]
        flight = _Flight(keys, amp)
        limit = max(self.flight_timeout, timeout_s)
        flight.task = task = asyncio.ensure_future(self._run_flight(flight, wanted, limit))
        for kind, item_id in keys:
            self._inflight[amp, kind, item_id] = flight
        self._flights.add(task)
        task.add_done_callback(self._flights.discard)
        return flight

    async def _run_flight(self, flight: _Flight, wanted: dict[Kind, list[str]], limit: float) -> dict[_Key, _Outcome]:
        amp = flight.amp
        try:
            outcomes = await self._ask_backends(self._chains[amp], wanted, limit, amp)
            for (kind, item_id), outcome in outcomes.items():
                cache = self._caches.get((kind, amp))
                if cache is not None and not isinstance(outcome, Failure) and (kind, item_id) not in flight.stale:
                    cache.put(item_id, outcome)
            return outcomes
        finally:
            for kind, item_id in flight.keys:
                if self._inflight.get((amp, kind, item_id)) is flight:
                    del self._inflight[amp, kind, item_id]

    async def _ask_backends(
        self, chain: Sequence[Backend], wanted: dict[Kind, list[str]], limit: float, amp: bool = False
    ) -> dict[_Key, _Outcome]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        found: dict[_Key, bytes] = {}
        failures: dict[_Key, list[str]] = {}
        for backend in chain:
            remaining = {k: [i for i in ids if (k, i) not in found] for k, ids in wanted.items()}
            remaining = {k: ids for k, ids in remaining.items() if ids}
            if not remaining:
                break
            started = loop.time()
            try:
                async with asyncio.timeout_at(deadline):
                    answer = await backend.fetch(remaining)
            except TimeoutError:
                late = Failure(f"{backend.name} timed out after {limit * 1000:.0f} ms", "timeout")
                answer = _fail_all(remaining, late)
            except BackendError as exc:
                answer = _fail_all(remaining, exc.failure())
            except Exception:  # a bug in a backend must not fail the request's other ids
                log.exception("stored data: %s backend failed", backend.name)
                answer = _fail_all(remaining, Failure(f"{backend.name}: internal error", "internal"))
            took = loop.time() - started
            self._fetch_time[backend.name].observe(took)
            for pbs_type in {_pbs_type(kind, amp) for kind in remaining}:
                self._metrics.histogram(self._metrics.stored_fetch_time[pbs_type], "all").observe(took)
            problems: dict[str, str] = {}
            failed_types: set[str] = set()
            for kind, items in answer.items():
                for item_id, outcome in items.items():
                    if isinstance(outcome, Failure):
                        failed_types.add(_pbs_type(kind, amp))
                        failures.setdefault((kind, item_id), []).append(outcome.reason)
                        problems.setdefault(outcome.label, outcome.detail or outcome.reason)
                    else:
                        found[kind, item_id] = outcome
            for label, reason in problems.items():
                self._metrics.counter(self._metrics.stored_data_fetch_errors, backend.name, label).inc()
                error = "network" if label in _NETWORK_FAILURES else "undefined"
                for pbs_type in failed_types:
                    self._metrics.counter(self._metrics.stored_errors[pbs_type], error).inc()
                self._log.warning(f"{backend.name}:{label}", "stored data: %s: %s", backend.name, reason)
        outcomes: dict[_Key, _Outcome] = {}
        for kind, ids in wanted.items():
            for item_id in ids:
                key = (kind, item_id)
                if key in found:
                    outcomes[key] = found[key]
                elif key in failures:
                    outcomes[key] = Failure("; ".join(failures[key]))
                else:
                    outcomes[key] = None
        return outcomes

    # -- change propagation --------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        while True:
            try:
                await self.poll_once()
            except Exception:  # keep polling whatever happens; the next poll may work
                log.exception("stored data: database poll failed")
            await asyncio.sleep(self.refresh_rate)

    async def poll_once(self) -> bool:
        """Ask the database what changed and invalidate it; False (counted, logged) when the poll failed."""
        if self.database is None:
            return True
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.poll_timeout or min(POLL_TIMEOUT_SECONDS, max(self.refresh_rate, 1.0))):
                changes = await self.database.poll()
        except (BackendError, TimeoutError) as exc:
            self._poll_errors.inc()
            error = "undefined" if isinstance(exc, BackendError) and exc.reason not in _NETWORK_FAILURES else "network"
            for pbs_type in ("request", "account", "response"):
                self._metrics.counter(self._metrics.stored_errors[pbs_type], error).inc()
            reason = exc.message if isinstance(exc, BackendError) else "timed out"
            log.warning("stored data: database poll failed: %s", reason)
            self._poll_failing = True
            return False
        took = time.monotonic() - started
        for pbs_type in ("request", "account", "response"):  # one poll asks for every kind's changes
            self._metrics.histogram(self._metrics.stored_fetch_time[pbs_type], "delta").observe(took)
        if self._poll_failing:
            log.info("stored data: database poll works again")
            self._poll_failing = False
        for kind, ids in changes.items():
            if ids:
                self.invalidate(kind, ids)
        return True

    def invalidate(self, kind: Kind, ids: Iterable[str], amp: bool | None = None) -> None:
        """Forget ``ids`` (cached or being fetched) and tell the listeners of ``kind``.

        ``amp`` True or False names AMP's cache or the other alone (HTTP events, the admin endpoints);
        None, both (a database change)."""
        ids = list(ids)
        for side in (False, True) if amp is None else (amp,):
            cache = self._caches.get((kind, side))
            for item_id in ids:
                if cache is not None:
                    cache.pop(item_id)
                flight = self._inflight.get((side, kind, item_id))
                if flight is not None:
                    flight.stale.add((kind, item_id))
        if kind == "accounts" and self._saved_accounts is not None:
            for item_id in ids:
                self._saved_accounts.pop(item_id)
        self._tell(kind, ids)

    def save(self, kind: Kind, items: dict[str, bytes], amp: bool = False) -> None:
        """Serve ``items`` from the in-memory cache until they are evicted, expire or are invalidated
        (PBS-Go's events Save, PBS-Java's cache update); a batch under way for one of them is not cached."""
        if kind == "accounts":
            self.invalidate(kind, items)
            if self._saved_accounts is not None:
                for item_id, data in items.items():
                    self._saved_accounts.put(item_id, data)
            return
        cache = self._caches.get((kind, amp))
        if cache is None:
            return
        for item_id, data in items.items():
            cache.put(item_id, data)
            flight = self._inflight.get((amp, kind, item_id))
            if flight is not None:
                flight.stale.add((kind, item_id))
        self._tell(kind, list(items))

    def count_error(self, backend: str, reason: str) -> None:
        """One failure in ``stored_data_fetch_errors{backend, reason}`` (HTTP events count theirs here)."""
        self._metrics.counter(self._metrics.stored_data_fetch_errors, backend, reason).inc()

    def _tell(self, kind: Kind, ids: list[str]) -> None:
        for listener in self._listeners.get(kind, ()):
            for item_id in ids:
                try:
                    listener(item_id)
                except Exception:
                    log.exception("stored data: change listener for %s failed", kind)


def _fail_all(wanted: dict[Kind, list[str]], failure: Failure) -> dict[Kind, dict[str, bytes | Failure]]:
    return {kind: dict.fromkeys(ids, failure) for kind, ids in wanted.items()}


def _message(kind: Kind, item_id: str, outcome: Failure | _Invalid | _TimedOut | None) -> str:
    if outcome is None:
        return not_found(kind, item_id)
    if isinstance(outcome, _Invalid):
        return invalid(kind, item_id, outcome.why)
    if isinstance(outcome, _TimedOut):
        return not_fetched(kind, item_id, f"timed out after {outcome.ms:.0f} ms")
    return not_fetched(kind, item_id, outcome.reason)


def build_stored_data(config: Config, metrics: Metrics, http: SharedSession) -> StoredData:
    """The stored-data service ``config.stored_requests`` describes; call start()/close() around serving."""
    stored = config.stored_requests
    cache = stored.in_memory_cache
    return StoredData(
        metrics,
        filesystem=FilesystemBackend(stored.filesystem.directorypath) if stored.filesystem.enabled else None,
        database=build_database(stored.database, cache.size),
        http=HttpBackend(stored.http.endpoint, http) if stored.http.endpoint else None,
        amp_http=HttpBackend(stored.http.amp_endpoint, http) if stored.http.amp_endpoint else None,
        cache_size=cache.size if cache.type == "lru" else None,
        cache_ttl_seconds=cache.ttl_seconds,
        refresh_rate_seconds=stored.database.poll_for_updates.refresh_rate_seconds,
        poll_timeout_seconds=stored.database.poll_for_updates.timeout_ms / 1000,
    )


def _amp_view(database: SqlBackend | None) -> Backend | None:
    """The database as AMP's chain asks it (a host's ``fetcher.amp_query``)."""
    return database.for_amp() if isinstance(database, SqlBackend) else database


def _pbs_type(kind: str, amp: bool) -> str:
    """PBS-Go's data type of a fetch: AMP's stored requests are ``amp``."""
    pbs_type = _PBS_TYPES.get(kind, "request")
    return "amp" if amp and pbs_type == "request" else pbs_type


def _both(metrics: Metrics, ours: Counter, label: str, pbs: Counter | None, result: str) -> Callable[[], None]:
    """One call counting a cache lookup in hbserver's family and, for requests and imps, PBS-Go's."""
    first = metrics.counter(ours, label, result)
    if pbs is None:
        return first.inc
    second = metrics.counter(pbs, result)

    def inc() -> None:
        first.inc()
        second.inc()

    return inc
