"""The module and its hook (PBS-Go ``module.go`` and ``hook_processed_auction.go``)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hbserver.hooks.api import HookResult, InvocationContext, ProcessedAuctionRequestPayload
from hbserver.modules.rulesengine.cache import Cache, CacheModelGroup, CacheRuleSet, TreeManager
from hbserver.modules.rulesengine.result_functions import Outcome, add_bidders_mutation
from hbserver.modules.rulesengine.schema_functions import IntN

Payload = ProcessedAuctionRequestPayload
DEFAULT_MAX_ACCOUNTS = 10_000
MESSAGE_LOADING = "skipped, loading rules engine account configuration for future requests"
MESSAGE_DISABLED = "skipped, rules engine is disabled for this account"


def select_model_group(groups: Sequence[CacheModelGroup], intn: IntN) -> CacheModelGroup:
    """One group, by weight (0 counts as 100): ``intn(total) + 1`` falls in its cumulative range."""
    if not groups:
        raise ValueError("no model groups available")
    if len(groups) == 1:
        return groups[0]
    weights = [group.weight if group.weight > 0 else 100 for group in groups]
    pick = intn(sum(weights)) + 1
    threshold = 0
    for group, weight in zip(groups, weights, strict=True):
        threshold += weight
        if pick <= threshold:
            return group
    return groups[0]


def run_rulesets(rulesets: Sequence[CacheRuleSet], payload: Payload, intn: IntN) -> HookResult[Payload]:
    """PBS-Go ``handleProcessedAuctionHook``: a model group per rule set, its tree run on the
    request; after each rule set, once any ``includeBidders`` ran, an ``add`` mutation."""
    outcome = Outcome()
    for ruleset in rulesets:
        try:
            group = select_model_group(ruleset.model_groups, intn)
        except ValueError as error:
            outcome.errors.append(f"failed to select model group: {error}")
            continue
        try:
            group.tree.run(payload.request, outcome)
        except ValueError as error:
            outcome.errors.append(str(error))
        if outcome.allowed:
            outcome.mutations.append(add_bidders_mutation(outcome.allowed))
    return HookResult(mutations=outcome.mutations, errors=outcome.errors)


class RulesEngineModule:
    """``prebid.rulesengine``: trees built per account from ``ctx.account_config``.

    As in PBS-Go, the request that finds no trees for its account is not processed (its answer
    says the configuration is loading) and builds them for the requests after it; a rebuild
    (see :mod:`.cache`) serves the old trees to the request that asks for it.
    """

    def __init__(
        self,
        refresh_seconds: int = 0,
        geoscopes: Mapping[str, Sequence[str]] | None = None,
        max_accounts: int = DEFAULT_MAX_ACCOUNTS,
        intn: IntN | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.intn: IntN = intn if intn is not None else random.randrange
        self.cache = Cache(refresh_seconds, max_accounts, clock)
        self.trees = TreeManager(self.cache, dict(geoscopes or {}), self.intn)

    def handle_processed_auction_request(self, ctx: InvocationContext, payload: Payload) -> HookResult[Payload]:
        raw: Any = ctx.account_config
        if raw is None:
            return HookResult()
        entry = self.cache.get(ctx.account_id)
        if entry is None:
            self.trees.build(ctx.account_id, raw)
            return HookResult(message=MESSAGE_LOADING)
        if self.cache.needs_rebuild(entry, raw):
            self.trees.build(ctx.account_id, raw)
        if not entry.enabled:
            return HookResult(message=MESSAGE_DISABLED)
        return run_rulesets(entry.rulesets, payload, self.intn)
