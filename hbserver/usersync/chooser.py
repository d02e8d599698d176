"""Which bidders /cookie_sync returns, and why every other one was left out (PBS-Go's chooser).

Pure: the caller passes the registry, the cookie, the filters, a privacy decision function and a
shuffle function, and gets back the chosen bidders in order plus one evaluation per bidder
looked at (for ``debug``).
"""

from __future__ import annotations

import enum
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


# Evaluations and choices are values: the same few recur on every request, so each is made once and
# shared (frozen, and kept in these maps, emptied when full since names come from requests).
_INTERNED_LIMIT = 4096


@dataclass(frozen=True, slots=True)
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


_evaluations: dict[tuple[str, str, Status], Evaluation] = {}
_choices: dict[tuple[str, int, str], Chosen] = {}


def _evaluation(bidder: str, sync_key: str, status: Status) -> Evaluation:
    """``Evaluation(bidder, sync_key, status)``, made once."""
    if len(_evaluations) >= _INTERNED_LIMIT:
        _evaluations.clear()
    made = _evaluations[bidder, sync_key, status] = Evaluation(bidder, sync_key, status)
    return made


def _chosen(bidder: str, definition: Bidder, sync_type: str) -> Chosen:
    """``Chosen(bidder, definition, sync_type)``, made once (per definition object)."""
    if len(_choices) >= _INTERNED_LIMIT:
        _choices.clear()
    made = _choices[bidder, id(definition), sync_type] = Chosen(bidder, definition, sync_type)
    return made


# (bidder as requested, its definition) -> the status privacy gives it, OK when allowed; None when
# nothing in the request can block a bidder (the common case, skipped on the hot path)
PrivacyCheck = Callable[[str, Bidder], Status] | None


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


def _shuffled(items: Sequence[str], shuffle: Shuffle) -> list[str]:
    copy = list(items)
    if len(copy) > 1:
        shuffle(copy)
    return copy


def choose(
    order: Sequence[str],
    limit: int,
    registry: Registry,
    cookie: UidsCookie,
    now: datetime,
    filters: SyncFilters,
    privacy: PrivacyCheck,
    gdpr_signal: int | None = None,
    gpp_sid: str = "",
) -> tuple[list[Chosen], list[Evaluation]]:
    """Evaluate bidders in ``order`` until ``limit`` are chosen (0 = no limit).

    Each bidder goes through PBS-Go's checks in its order: known, enabled, has a syncer, its
    sync key not taken yet (taken before the remaining checks, as PBS-Go does), a sync type the
    filters allow, not already synced, privacy, usersync enabled, then the ``skipwhen`` rules
    (``gdpr_signal`` is the raw request signal, ``gpp_sid`` the raw string). One loop without
    helper calls: it runs for every bidder of every /cookie_sync request.
    """
    chosen: list[Chosen] = []
    evaluations: list[Evaluation] = []
    seen: set[str] = set()
    used_keys: set[str] = set()
    lookup = registry.lookup
    unfiltered = filters is NO_FILTERS
    uids = cookie.uids  # cookie.is_live(), inline
    evaluation_of, choice_of = _evaluations.get, _choices.get
    for name in order:
        if limit and len(chosen) >= limit:
            break
        if name in seen:
            continue
        seen.add(name)
        definition = lookup(name)
        if definition is None:
            evaluations.append(evaluation_of((name, "", _UNKNOWN_BIDDER)) or _evaluation(name, "", _UNKNOWN_BIDDER))
            continue
        syncer = definition.syncer
        if definition.disabled:
            status = _DISABLED_BIDDER
        elif syncer is None:
            status = _UNCONFIGURED_BIDDER
        elif syncer.key in used_keys:
            status = _DUPLICATE
        else:
            used_keys.add(syncer.key)
            allowed = (
                syncer.types if unfiltered
                else [t for t in filters.allowed_types(name) if t in syncer.templates]
            )
            if not allowed:
                status = _REJECTED_BY_FILTER
            elif (entry := uids.get(syncer.key)) is not None and now < entry.expires:
                status = _ALREADY_SYNCED
            elif privacy is not None and (status := privacy(name, definition)) is not _OK:
                pass
            elif not definition.usersync_enabled:
                status = _DISABLED_USERSYNC
            elif (syncer.skip_when_gdpr and gdpr_signal == 1) or (gpp_sid and gpp_sid in syncer.skip_when_gpp_sid):
                status = _REGULATION_SCOPE
            else:
                status = _OK
                sync_type = syncer.default_type if syncer.default_type in allowed else allowed[0]
                chosen.append(
                    choice_of((name, id(definition), sync_type)) or _chosen(name, definition, sync_type)
                )
        key = definition.sync_key
        evaluations.append(evaluation_of((name, key, status)) or _evaluation(name, key, status))
    return chosen, evaluations
