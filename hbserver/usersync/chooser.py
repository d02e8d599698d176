"""Which bidders /cookie_sync returns, and why every other one was left out (PBS-Go's chooser).

Pure: the caller passes the candidates (the registry, the filters and the privacy facts read once
per kind of request), the cookie, a TCF decision function and a shuffle function, and gets back the
chosen bidders in order plus one evaluation per bidder looked at (for ``debug``).
"""

from __future__ import annotations

import enum
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from hbserver.bidders.registry import IFRAME, REDIRECT, Bidder, Registry
from hbserver.usersync.cookie import UidsCookie

Shuffle = Callable[[list[str]], None]
_random = random.random


def shuffle(items: list[str]) -> None:
    """Shuffle ``items`` in place: ``random.shuffle``'s Fisher-Yates, each draw ``int(random() * n)``
    (the form random.shuffle itself once used) rather than its Python-level ``_randbelow`` (a
    third of the cost for the few bidders of a /cookie_sync request)."""
    for i in range(len(items) - 1, 0, -1):
        j = int(_random() * (i + 1))
        items[i], items[j] = items[j], items[i]


class Status(enum.Enum):
    OK = ""
    UNKNOWN_BIDDER = "Unsupported bidder"
    UNCONFIGURED_BIDDER = "No sync config"
    DISABLED_BIDDER = "Bidder is disabled"
    DUPLICATE = "Duplicate bidder synced as {key}"
    REJECTED_BY_FILTER = "Rejected by request filter"
    ALREADY_SYNCED = "Already in sync"
    BLOCKED_BY_PRIVACY = "Rejected by privacy"
    BLOCKED_BY_CCPA = "Rejected by CCPA"
    DISABLED_USERSYNC = "Sync disabled by config"
    REGULATION_SCOPE = ""

    # Members are singletons: hash by identity in C rather than Enum's Python-level name hash
    # (statuses are dict keys on the /cookie_sync hot path).
    __hash__ = object.__hash__


@dataclass(frozen=True, slots=True)
class BidderFilter:
    """One sync type's filter: ``*`` or a list, include or exclude."""

    include: bool = True
    every: bool = True
    bidders: frozenset[str] = frozenset()

    def allows(self, bidder: str) -> bool:
        listed = self.every or bidder.lower() in self.bidders
        return listed if self.include else not listed


ALLOW_ALL = BidderFilter()


@dataclass(frozen=True, slots=True)
class SyncFilters:
    iframe: BidderFilter = ALLOW_ALL
    redirect: BidderFilter = ALLOW_ALL

    def allowed_types(self, bidder: str) -> list[str]:
        types = []
        if self.iframe.allows(bidder):
            types.append(IFRAME)
        if self.redirect.allows(bidder):
            types.append(REDIRECT)
        return types


NO_FILTERS = SyncFilters()  # requests without filterSettings share this one


# Enum members as plain module names: a class attribute lookup per check adds up on the hot path.
_OK, _DUPLICATE, _ALREADY_SYNCED = Status.OK, Status.DUPLICATE, Status.ALREADY_SYNCED
_DISABLED_BIDDER, _UNCONFIGURED_BIDDER = Status.DISABLED_BIDDER, Status.UNCONFIGURED_BIDDER
_REJECTED_BY_FILTER, _DISABLED_USERSYNC = Status.REJECTED_BY_FILTER, Status.DISABLED_USERSYNC
_UNKNOWN_BIDDER, _REGULATION_SCOPE = Status.UNKNOWN_BIDDER, Status.REGULATION_SCOPE
_BLOCKED_BY_PRIVACY, _BLOCKED_BY_CCPA = Status.BLOCKED_BY_PRIVACY, Status.BLOCKED_BY_CCPA


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity: each is made once
class Evaluation:
    bidder: str  # as requested (case kept)
    sync_key: str
    status: Status

    def message(self) -> str:
        return self.status.value.format(key=self.sync_key)


@dataclass(frozen=True, slots=True)
class Chosen:
    bidder: str  # as requested
    definition: Bidder
    sync_type: str


# Whether TCF lets (bidder as requested, its GVL vendor id) sync; None when TCF does not apply.
TcfCheck = Callable[[str, int], bool] | None
# Whether the account's activity controls let the bidder (as requested) sync; None when they govern nothing.
ActivityCheck = Callable[[str], bool] | None

CANDIDATES_LIMIT = 4096  # names one Candidates keeps (emptied when full; a request names at most 1000)


class Candidate:
    """Everything :func:`choose` needs of one name under one set of filters and privacy facts, but the
    cookie and the consent string: each outcome it can give, made once. ``final`` is set for a name
    that is unknown, disabled or has no syncer (looked at, nothing more); otherwise its sync ``key``
    is claimed and then the checks run in PBS-Go's order."""

    __slots__ = ("blocked", "chosen", "duplicate", "filtered", "final", "key", "outcome", "refused", "synced",
                 "vendor_id")

    def __init__(self, name: str, definition: Bidder | None, candidates: Candidates) -> None:
        self.final: Evaluation | None = None
        self.key = ""
        self.vendor_id = 0
        self.chosen: Chosen | None = None
        if definition is None:
            self.final = Evaluation(name, "", _UNKNOWN_BIDDER)
            return
        syncer = definition.syncer
        sync_key = definition.sync_key
        if definition.disabled or syncer is None:
            self.final = Evaluation(name, sync_key, _DISABLED_BIDDER if definition.disabled else _UNCONFIGURED_BIDDER)
            return
        self.key = syncer.key
        self.vendor_id = definition.gvl_vendor_id
        self.duplicate = Evaluation(name, sync_key, _DUPLICATE)
        self.synced = Evaluation(name, sync_key, _ALREADY_SYNCED)
        self.refused = Evaluation(name, sync_key, _BLOCKED_BY_PRIVACY)
        filters = candidates.filters
        allowed = (
            syncer.types if filters is NO_FILTERS
            else [t for t in filters.allowed_types(name) if t in syncer.templates]
        )
        self.filtered = None if allowed else Evaluation(name, sync_key, _REJECTED_BY_FILTER)
        activity = candidates.activity_allows
        self.blocked = None if activity is None or activity(name) else self.refused
        if candidates.ccpa_blocks:
            status = _BLOCKED_BY_CCPA
        elif not definition.usersync_enabled:
            status = _DISABLED_USERSYNC
        elif (syncer.skip_when_gdpr and candidates.gdpr_signal == 1) or (
            candidates.gpp_sid and candidates.gpp_sid in syncer.skip_when_gpp_sid
        ):
            status = _REGULATION_SCOPE
        else:
            status = _OK
            if allowed:
                sync_type = syncer.default_type if syncer.default_type in allowed else allowed[0]
                self.chosen = Chosen(name, definition, sync_type)
        self.outcome = Evaluation(name, sync_key, status)


class Candidates:
    """The :class:`Candidate` of each name looked at under one set of filters and privacy facts
    (``gdpr_signal`` is the raw request signal, ``gpp_sid`` the raw string; ``activity_allows`` the
    account's activity controls for ``syncUser``, None when they govern nothing; ``ccpa_blocks``
    whether a US Privacy opt-out blocks every sync), made on first look and kept; bounded."""

    __slots__ = ("_made", "activity_allows", "ccpa_blocks", "filters", "gdpr_signal", "gpp_sid", "registry")

    def __init__(
        self,
        registry: Registry,
        filters: SyncFilters = NO_FILTERS,
        gdpr_signal: int | None = None,
        gpp_sid: str = "",
        activity_allows: ActivityCheck = None,
        ccpa_blocks: bool = False,
    ) -> None:
        self.registry = registry
        self.filters = filters
        self.gdpr_signal = gdpr_signal
        self.gpp_sid = gpp_sid
        self.activity_allows = activity_allows
        self.ccpa_blocks = ccpa_blocks
        self._made: dict[str, Candidate] = {}

    def __len__(self) -> int:
        return len(self._made)

    def distinct(self, names: Sequence[str]) -> bool:
        """Whether ``names`` (in any order) hold no name twice and no two bidders with one sync key."""
        made = self._made
        keys = [c.key for c in (made.get(name) or self.make(name) for name in names) if c.final is None]
        return len(set(names)) == len(names) and len(set(keys)) == len(keys)

    def make(self, name: str) -> Candidate:
        """``name``'s candidate, made now and kept."""
        made = self._made
        if len(made) >= CANDIDATES_LIMIT:
            made.clear()
        found = made[name] = Candidate(name, self.registry.lookup(name), self)
        return found


def bidder_order(
    requested: Sequence[str],
    available: Sequence[str],
    coop: bool,
    priority_groups: Sequence[Sequence[str]],
    groups_only: bool,
    shuffle: Shuffle = shuffle,
) -> list[str]:
    """The order bidders are looked at; duplicates are expected (the chooser skips them)."""

    if not coop:
        return _shuffled(requested if requested else available, shuffle)
    order = _shuffled(requested, shuffle)
    for group in priority_groups:
        order += _shuffled(group, shuffle)
    if not groups_only:
        order += _shuffled(available, shuffle)
    return order


PERMUTED_MAX = 4  # bidders whose every order a plan may keep (4! = 24 orders)


def permutations_of(items: Sequence[str]) -> tuple[tuple[str, ...], ...] | None:
    """Every order of a few ``items`` (None for more than PERMUTED_MAX): one of them picked with
    :func:`pick_order` is :func:`shuffle`'s uniformly random order, without its work."""
    if len(items) > PERMUTED_MAX:
        return None
    return tuple(itertools.permutations(items))


def pick_order(orders: tuple[tuple[str, ...], ...]) -> list[str]:
    """One of ``orders``, uniformly at random."""
    return list(orders[pick_index(orders)])


def pick_index(orders: tuple[tuple[str, ...], ...]) -> int:
    """The index of one of ``orders``, uniformly at random."""
    return int(_random() * len(orders))


def _shuffled(items: Sequence[str], shuffle: Shuffle) -> list[str]:
    copy = list(items)
    if len(copy) > 1:
        shuffle(copy)
    return copy


def choose(
    order: Sequence[str],
    limit: int,
    candidates: Candidates,
    cookie: UidsCookie,
    now: datetime,
    tcf: TcfCheck = None,
    distinct: bool = False,
) -> tuple[list[Chosen], list[Evaluation]]:
    """Evaluate bidders in ``order`` until ``limit`` (>= 0) are chosen (0 = no limit). ``distinct``: the
    caller knows ``order`` names no bidder twice and no two bidders with one sync key
    (:meth:`Candidates.distinct`), so neither is looked for.

    Each bidder goes through PBS-Go's checks in its order: known, enabled, has a syncer, its
    sync key not taken yet (taken before the remaining checks, as PBS-Go does), a sync type the
    filters allow, not already synced, privacy (activity controls, TCF, then US Privacy), usersync
    enabled, then the ``skipwhen`` rules. All but the cookie and TCF are the candidate's, made once;
    this loop runs for every bidder of every /cookie_sync request.
    """
    chosen: list[Chosen] = []
    evaluations: list[Evaluation] = []
    seen: set[str] = set()
    used_keys: set[str] = set()
    known = candidates._made.get
    uids = cookie.uids  # cookie.is_live(), inline
    for name in order:
        if not distinct:
            if name in seen:
                continue
            seen.add(name)
        candidate = known(name) or candidates.make(name)
        if candidate.final is not None:
            evaluations.append(candidate.final)
            continue
        key = candidate.key
        if not distinct:
            if key in used_keys:
                evaluations.append(candidate.duplicate)
                continue
            used_keys.add(key)
        if candidate.filtered is not None:
            evaluations.append(candidate.filtered)
        elif uids and (entry := uids.get(key)) is not None and now < entry.expires:
            evaluations.append(candidate.synced)
        elif candidate.blocked is not None:
            evaluations.append(candidate.blocked)
        elif tcf is not None and not tcf(name, candidate.vendor_id):
            evaluations.append(candidate.refused)
        else:
            evaluations.append(candidate.outcome)
            if candidate.chosen is not None:
                chosen.append(candidate.chosen)
                if len(chosen) == limit:  # never for 0 (no limit): nothing after it is looked at
                    break
    return chosen, evaluations
