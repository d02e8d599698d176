"""The per-account trees (PBS-Go ``cache.go``, ``cache_entry.go``, ``tree_manager.go``).

An entry is built from an account's config and kept under the account id with the config's
SHA-256 and the time it was built. It is rebuilt only once it is older than the host's
``refreshrateseconds`` and the account's config hash changed (a rate of 0, the default, never
rebuilds: PBS-Go's behaviour). A config PBS-Go refuses is logged and leaves the cache as it was;
a disabled config removes the account's entry.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from hbserver.modules.rulesengine.config import RulesEngineConfig, RuleSetConfig, parse_config
from hbserver.modules.rulesengine.geoscope import build_geoscope_tree
from hbserver.modules.rulesengine.result_functions import new_result_function
from hbserver.modules.rulesengine.schema_functions import IntN, new_schema_function
from hbserver.modules.rulesengine.tree import Tree, build_tree

log = logging.getLogger(__name__)

PROCESSED_AUCTION_REQUEST = "processed_auction_request"


@dataclass(frozen=True, slots=True)
class CacheModelGroup:
    weight: int
    version: str
    analytics_key: str
    tree: Tree


@dataclass(frozen=True, slots=True)
class CacheRuleSet:
    name: str
    model_groups: tuple[CacheModelGroup, ...]


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """An account's built rule sets for the processed-auction-request stage."""

    enabled: bool
    timestamp: float
    hashed_config: str
    rulesets: tuple[CacheRuleSet, ...] = field(default=())


def hash_config(raw: Any) -> str:
    """SHA-256 (hex) of the config's JSON with sorted keys (PBS-Go hashes the raw bytes); "" for
    no config."""
    if raw is None:
        return ""
    return hashlib.sha256(orjson.dumps(raw, default=_plain, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot hash a {type(value).__name__}")


def build_ruleset(ruleset: RuleSetConfig, intn: IntN) -> CacheRuleSet:
    """PBS-Go ``createCacheRuleSet``: a tree per model group (ValueError: one fails)."""

    def schema_factory(name: str, args: Any) -> Any:
        return new_schema_function(name, args, intn)

    groups = tuple(
        CacheModelGroup(
            group.weight, group.version, group.analytics_key, build_tree(group, schema_factory, new_result_function)
        )
        for group in ruleset.model_groups
    )
    return CacheRuleSet(ruleset.name, groups)


def geoscope_ruleset(geoscopes: Mapping[str, Sequence[str]], config: RulesEngineConfig) -> CacheRuleSet:
    """PBS-Go ``buildBidderConfigRuleSet``."""
    tree = build_geoscope_tree(geoscopes, config.country_groups)
    group = CacheModelGroup(weight=100, version="1.0", analytics_key="bidderConfig", tree=tree)
    return CacheRuleSet("Dynamic ruleset from geoscopes", (group,))


def new_entry(
    config: RulesEngineConfig, raw: Any, geoscopes: Mapping[str, Sequence[str]], now: float, intn: IntN
) -> CacheEntry:
    """PBS-Go ``NewCacheEntry``: the geoscope rule set first when asked for, then the account's
    processed-auction-request rule sets; one that fails to build is skipped (logged)."""
    hashed = hash_config(raw)
    if not hashed:
        raise ValueError("Can't create identifier hash from empty raw json configuration")
    rulesets: list[CacheRuleSet] = []
    if config.generate_rules_from_bidderconfig:
        rulesets.append(geoscope_ruleset(geoscopes, config))
    for ruleset in config.rulesets:
        if ruleset.stage != PROCESSED_AUCTION_REQUEST:
            continue
        try:
            rulesets.append(build_ruleset(ruleset, intn))
        except ValueError as error:
            log.warning("Rules engine: rule set %r skipped: %s", ruleset.name, error)
    return CacheEntry(config.enabled, now, hashed, tuple(rulesets))


class Cache:
    """Entries by account id, at most ``max_accounts`` (the least recently built goes first)."""

    def __init__(self, refresh_seconds: int, max_accounts: int, clock: Callable[[], float]) -> None:
        self.refresh_seconds = refresh_seconds
        self.max_accounts = max_accounts
        self.clock = clock
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()

    def get(self, account: str) -> CacheEntry | None:
        return self._entries.get(account)

    def set(self, account: str, entry: CacheEntry) -> None:
        if not account:
            return
        self._entries.pop(account, None)
        self._entries[account] = entry
        while len(self._entries) > self.max_accounts:
            self._entries.popitem(last=False)

    def delete(self, account: str) -> None:
        self._entries.pop(account, None)

    def __len__(self) -> int:
        return len(self._entries)

    def expired(self, timestamp: float) -> bool:
        """Older than the refresh rate (never, for a rate of 0 or less)."""
        return self.refresh_seconds > 0 and self.clock() - timestamp > self.refresh_seconds

    def needs_rebuild(self, entry: CacheEntry, raw: Any) -> bool:
        """PBS-Go ``rebuildTrees``: expired and the config's hash changed."""
        return self.expired(entry.timestamp) and raw is not None and hash_config(raw) != entry.hashed_config


@dataclass(slots=True)
class TreeManager:
    """PBS-Go ``treeManager.Run`` for one build instruction (run in line, not on a goroutine)."""

    cache: Cache
    geoscopes: Mapping[str, Sequence[str]]
    intn: IntN

    def build(self, account: str, raw: Any) -> None:
        if raw is None:
            return
        current = self.cache.get(account)
        if current is not None and not self.cache.needs_rebuild(current, raw):
            return
        try:
            config = parse_config(raw)
        except ValueError as error:
            log.error("Rules engine error parsing config for account %s: %s", account, error)
            return
        if not config.enabled:
            self.cache.delete(account)
            log.info("Rules engine disabled for account %s", account)
            return
        try:
            entry = new_entry(config, raw, self.geoscopes, self.cache.clock(), self.intn)
        except ValueError as error:
            log.error("Rules engine error creating cache entry for account %s: %s", account, error)
            return
        self.cache.set(account, entry)
