"""prebid.rulesengine: cache, tree manager, model group choice and the hook end to end (PBS-Go
cache_test.go, cache_entry_test.go, tree_manager_test.go, module_test.go,
hook_processed_auction_test.go)."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from hbserver.hooks.api import HookResult, InvocationContext, ProcessedAuctionRequestPayload
from hbserver.modules.rulesengine import build
from hbserver.modules.rulesengine.cache import (
    Cache,
    CacheEntry,
    CacheModelGroup,
    CacheRuleSet,
    TreeManager,
    hash_config,
    new_entry,
)
from hbserver.modules.rulesengine.config import (
    FunctionConfig,
    ModelGroupConfig,
    RulesEngineConfig,
    RuleSetConfig,
)
from hbserver.modules.rulesengine.module import (
    MESSAGE_DISABLED,
    MESSAGE_LOADING,
    run_rulesets,
    select_model_group,
)
from hbserver.modules.rulesengine.tree import Node, Tree

DATA = Path(__file__).parent / "data" / "rulesengine"
VALID = json.loads((DATA / "valid_config.json").read_text())
KEY = ("bidrequest", "imp", "ext", "prebid", "bidders")


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Draws:
    """An ``intn`` returning the given values in turn (each reduced modulo n, as PBS-Go's mock)."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.asked: list[int] = []

    def __call__(self, n: int) -> int:
        self.asked.append(n)
        value = self.values.pop(0)
        return value % n if value >= n else value


def never(n: int) -> int:
    raise AssertionError("no random number expected")


# ---- cache ---------------------------------------------------------------------------------------


def _entry(hashed: str = "h", timestamp: float = 0.0, enabled: bool = True) -> CacheEntry:
    return CacheEntry(enabled, timestamp, hashed)


def test_cache_get_set_delete() -> None:
    cache = Cache(0, 10, Clock())
    assert cache.get("acc") is None
    first, second = _entry("1"), _entry("2")
    cache.set("acc", first)
    assert cache.get("acc") is first
    cache.set("acc", second)  # rewrites
    assert cache.get("acc") is second
    cache.set("", first)  # no id: not stored
    assert len(cache) == 1
    cache.delete("unknown")
    cache.delete("acc")
    assert cache.get("acc") is None and len(cache) == 0


def test_cache_is_bounded() -> None:
    cache = Cache(0, 2, Clock())
    for account in ("a", "b", "c"):
        cache.set(account, _entry(account))
    assert (cache.get("a"), len(cache)) == (None, 2)
    cache.set("b", _entry("b2"))  # a rebuilt entry counts as the newest
    cache.set("d", _entry("d"))
    assert cache.get("c") is None and cache.get("b") is not None


@pytest.mark.parametrize(
    ("refresh", "age", "expired"),
    [(10, 11, True), (10, 10, False), (10, 5, False), (0, 10_000, False), (-10, 10_000, False)],
    ids=["expired", "at-the-rate", "not-expired", "no-refresh-rate", "negative-rate"],
)
def test_expired(refresh: int, age: float, expired: bool) -> None:
    clock = Clock(1000.0)
    assert Cache(refresh, 10, clock).expired(1000.0 - age) is expired


SAMPLE = {"enabled": True, "ruleSets": []}


@pytest.mark.parametrize(
    ("refresh", "age", "hashed", "raw", "rebuild"),
    [
        pytest.param(10, 5, "oldHash", SAMPLE, False, id="not-expired"),
        pytest.param(1, 100, hash_config(SAMPLE), SAMPLE, False, id="expired-same-config"),
        pytest.param(0, 100, "oldHash", SAMPLE, False, id="zero-refresh-rate-never-rebuilds"),
        pytest.param(1, 100, "oldHash", SAMPLE, True, id="expired-and-changed"),
        pytest.param(1, 100, "oldHash", None, False, id="no-config"),
    ],
)
def test_needs_rebuild(refresh: int, age: float, hashed: str, raw: Any, rebuild: bool) -> None:
    cache = Cache(refresh, 10, Clock(1000.0))
    assert cache.needs_rebuild(_entry(hashed, 1000.0 - age), raw) is rebuild


def test_hash_config_ignores_key_order() -> None:
    assert hash_config({"a": 1, "b": [1, {"c": 2, "d": 3}]}) == hash_config({"b": [1, {"d": 3, "c": 2}], "a": 1})
    assert hash_config({"a": 1}) != hash_config({"a": 2})
    assert hash_config(None) == ""
    assert len(hash_config(SAMPLE)) == 64


# ---- cache entry (cache_entry_test.go) -----------------------------------------------------------

EXCLUDE_A = FunctionConfig("excludeBidders", {"bidders": ["bidderA"], "seatNonBid": 111})


def _config(*rulesets: RuleSetConfig, geoscope: bool = False) -> RulesEngineConfig:
    return RulesEngineConfig(True, geoscope, {}, "", rulesets)


def _ruleset(*defaults: FunctionConfig, stage: str = "processed_auction_request", name: str = "") -> RuleSetConfig:
    return RuleSetConfig(stage, name, "", (ModelGroupConfig(default=defaults),))


@pytest.mark.parametrize(
    ("config", "count"),
    [
        pytest.param(_config(), 0, id="no-rulesets"),
        pytest.param(_config(RuleSetConfig("wrong-stage", "", "", ())), 0, id="wrong-stage"),
        pytest.param(_config(_ruleset(FunctionConfig("unknownResultFunction"))), 0, id="ruleset-fails-to-build"),
        pytest.param(_config(geoscope=True), 1, id="dynamic-ruleset"),
        pytest.param(_config(_ruleset(EXCLUDE_A)), 1, id="single-static"),
        pytest.param(_config(_ruleset(EXCLUDE_A), geoscope=True), 2, id="static-and-dynamic"),
        pytest.param(_config(RuleSetConfig("wrong-stage", "", "", ()), _ruleset(EXCLUDE_A)), 1, id="some-wrong-stage"),
        pytest.param(
            _config(
                _ruleset(FunctionConfig("includeBidders", {"bidders": ["bidderFoo"]})),
                _ruleset(FunctionConfig("excludeBidders", {"bidders": ["bidderBar"]})),
            ),
            2,
            id="multiple",
        ),
    ],
)
def test_new_entry(config: RulesEngineConfig, count: int) -> None:
    entry = new_entry(config, VALID, {"bidder1": ["USA"]}, 5.0, never)
    assert len(entry.rulesets) == count
    assert (entry.enabled, entry.timestamp, entry.hashed_config) == (True, 5.0, hash_config(VALID))
    if config.generate_rules_from_bidderconfig:
        dynamic = entry.rulesets[0]
        assert dynamic.name == "Dynamic ruleset from geoscopes"
        group = dynamic.model_groups[0]
        assert (group.weight, group.version, group.analytics_key) == (100, "1.0", "bidderConfig")


def test_new_entry_needs_a_raw_config() -> None:
    with pytest.raises(ValueError, match="Can't create identifier hash from empty raw json configuration"):
        new_entry(_config(), None, {}, 0.0, never)


def test_new_entry_from_valid_config() -> None:
    from hbserver.modules.rulesengine.config import parse_config

    entry = new_entry(parse_config(VALID), VALID, {}, 0.0, never)
    assert [ruleset.name for ruleset in entry.rulesets] == ["Dynamic ruleset from geoscopes", "exclude-in-jpn"]
    groups = entry.rulesets[1].model_groups
    assert [(g.weight, g.version, g.analytics_key) for g in groups] == [
        (100, "4567", "experiment-name"),
        (1, "3.0", "experiment-name"),
    ]


# ---- tree manager (tree_manager_test.go) ----------------------------------------------------------


def _manager(refresh: int = 0, clock: Clock | None = None) -> TreeManager:
    return TreeManager(Cache(refresh, 10, clock or Clock()), {}, never)


DISABLED = {**VALID, "enabled": False}


def test_manager_ignores_no_config() -> None:
    manager = _manager()
    manager.build("acc", None)
    assert len(manager.cache) == 0


def test_manager_builds_new_account() -> None:
    manager = _manager()
    manager.build("acc", VALID)
    entry = manager.cache.get("acc")
    assert entry is not None and entry.hashed_config == hash_config(VALID)


def test_manager_rebuilds_expired_changed_entry() -> None:
    clock = Clock(1000.0)
    manager = _manager(refresh=10, clock=clock)
    manager.cache.set("acc", _entry("oldHash", timestamp=1.0))
    manager.build("acc", VALID)
    entry = manager.cache.get("acc")
    assert entry is not None and (entry.hashed_config, entry.timestamp) == (hash_config(VALID), 1000.0)


def test_manager_keeps_entry_not_needing_rebuild() -> None:
    manager = _manager(refresh=10, clock=Clock(5.0))
    old = _entry("oldHash", timestamp=1.0)
    manager.cache.set("acc", old)
    manager.build("acc", VALID)
    assert manager.cache.get("acc") is old


def test_manager_logs_config_error_and_keeps_cache(caplog: pytest.LogCaptureFixture) -> None:
    manager = _manager(refresh=1, clock=Clock(1000.0))
    old = _entry("oldHash", timestamp=1.0)
    manager.cache.set("acc", old)
    with caplog.at_level(logging.ERROR):
        manager.build("acc", {"enabled": True})
    assert manager.cache.get("acc") is old
    assert "Rules engine error parsing config for account acc: JSON schema validation: " in caplog.text
    assert "[(root): rulesets is required]" in caplog.text


def test_manager_new_disabled_account_is_not_cached() -> None:
    manager = _manager()
    manager.build("acc", DISABLED)
    assert manager.cache.get("acc") is None


def test_manager_existing_account_disabled_is_removed() -> None:
    manager = _manager(refresh=1, clock=Clock(1000.0))
    manager.cache.set("acc", _entry("oldHash", timestamp=1.0))
    manager.build("acc", DISABLED)
    assert manager.cache.get("acc") is None


# ---- model group choice and the rule sets (hook_processed_auction_test.go) -------------------------


def _group(key: str, weight: int = 100, tree: Tree | None = None) -> CacheModelGroup:
    return CacheModelGroup(weight, "", key, tree if tree is not None else Tree())


@pytest.mark.parametrize(
    ("weights", "drawn", "index"),
    [
        pytest.param([100], None, 0, id="single"),
        pytest.param([50, 50], 25, 0, id="equal-first"),
        pytest.param([50, 50], 75, 1, id="equal-second"),
        pytest.param([70, 30], 65, 0, id="uneven-first"),
        pytest.param([70, 30], 75, 1, id="uneven-second"),
        pytest.param([20, 30, 50], 35, 1, id="three-middle"),
        pytest.param([0, 50], 80, 0, id="zero-weight-is-100-first"),
        pytest.param([0, 50], 120, 1, id="zero-weight-is-100-second"),
        pytest.param([50, 50], 49, 0, id="upper-edge-first"),
        pytest.param([50, 50], 50, 1, id="lower-edge-second"),
    ],
)
def test_select_model_group(weights: list[int], drawn: int | None, index: int) -> None:
    groups = [_group(f"group{i + 1}", weight) for i, weight in enumerate(weights)]
    draws = Draws() if drawn is None else Draws(drawn)
    assert select_model_group(groups, draws).analytics_key == f"group{index + 1}"
    assert draws.asked == ([] if drawn is None else [sum(w or 100 for w in weights)])


def test_select_model_group_none() -> None:
    with pytest.raises(ValueError, match=r"^no model groups available$"):
        select_model_group([], never)


PAYLOAD = ProcessedAuctionRequestPayload({"imp": []})


@pytest.mark.parametrize(
    ("rulesets", "errors"),
    [
        pytest.param([], [], id="empty-rule-sets"),
        pytest.param([CacheRuleSet("", (_group("g", tree=Tree(root=None)),))], ["tree root is nil"], id="nil-root"),
        pytest.param(
            [CacheRuleSet("", ())], ["failed to select model group: no model groups available"], id="no-groups"
        ),
        pytest.param([CacheRuleSet("", (_group("g", tree=Tree(root=Node())),))], [], id="valid-empty-tree"),
    ],
)
def test_run_rulesets(rulesets: list[CacheRuleSet], errors: list[str]) -> None:
    result = run_rulesets(rulesets, PAYLOAD, never)
    assert (result.errors, result.mutations, result.message) == (errors, [], "")


# ---- the hook end to end ---------------------------------------------------------------------------


def _ctx(config: Any, account: str = "acc") -> InvocationContext:
    return InvocationContext("/openrtb2/auction", account, config, {}, "code")


def _request(country: str | None = "USA", channel: str | None = "web", bidders: tuple[str, ...] = ()) -> dict:
    names = bidders or ("bidderA", "bidderB", "bidderC")
    request: dict[str, Any] = {
        "id": "req",
        "imp": [
            {"id": "imp1", "ext": {"prebid": {"bidder": {name: {"p": 1} for name in names}}}},
            {"id": "imp2", "ext": {"prebid": {"bidder": {name: {} for name in names}}}},
        ],
    }
    if country is not None:
        request["device"] = {"geo": {"country": country}}
    if channel is not None:
        request["ext"] = {"prebid": {"channel": {"name": channel}}}
    return request


def _apply(result: HookResult, request: dict) -> list[list[str]]:
    payload = ProcessedAuctionRequestPayload(request)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    return [sorted(imp["ext"]["prebid"]["bidder"]) for imp in payload.request["imp"]]


def _ruleset_config(name: str, schema: list[dict], rules: list[dict], **extra: Any) -> dict:
    group = {"schema": schema, "rules": rules, **extra}
    return {"stage": "processed_auction_request", "name": name, "modelgroups": [group]}


def _rule(conditions: list[str], function: str, bidders: list[str]) -> dict:
    return {"conditions": conditions, "results": [{"function": function, "args": {"bidders": bidders}}]}


COUNTRY_CHANNEL = {
    "enabled": True,
    "rulesets": [
        _ruleset_config(
            "by-country-and-channel",
            [{"function": "deviceCountryIn", "args": {"countries": ["USA", "CAN"]}}, {"function": "channel"}],
            [
                _rule(["true", "web"], "excludeBidders", ["bidderA"]),
                _rule(["true", "*"], "excludeBidders", ["bidderB"]),
                _rule(["false", "amp"], "includeBidders", ["bidderC"]),
            ],
            default=[{"function": "excludeBidders", "args": {"bidders": ["bidderC"]}}],
        )
    ],
}


def _warm(module: Any, config: Any, account: str = "acc") -> None:
    first = module.handle_processed_auction_request(_ctx(config, account), PAYLOAD)
    assert (first.message, first.mutations, first.errors) == (MESSAGE_LOADING, [], [])


def test_no_account_config_does_nothing() -> None:
    module = build({})
    result = module.handle_processed_auction_request(_ctx(None), PAYLOAD)
    assert result == HookResult()
    assert len(module.cache) == 0


@pytest.mark.parametrize(
    ("country", "channel", "kinds", "left"),
    [
        pytest.param("USA", "web", ["delete"], ["bidderB", "bidderC"], id="usa-web"),
        pytest.param("CAN", "app", ["delete"], ["bidderA", "bidderC"], id="can-wildcard"),
        pytest.param("FRA", "amp", ["add"], ["bidderC"], id="fra-amp-include"),
        pytest.param("FRA", "web", ["delete"], ["bidderA", "bidderB"], id="no-match-default"),
        pytest.param(None, "pbjs", ["delete"], ["bidderA", "bidderB"], id="no-country-pbjs-default"),
    ],
)
def test_hook_end_to_end(country: str | None, channel: str, kinds: list[str], left: list[str]) -> None:
    module = build({})
    _warm(module, COUNTRY_CHANNEL)
    request = _request(country, channel)
    before = copy.deepcopy(request)
    result = module.handle_processed_auction_request(_ctx(COUNTRY_CHANNEL), ProcessedAuctionRequestPayload(request))
    assert result.errors == [] and result.message == ""
    assert [(m.kind, m.key) for m in result.mutations] == [(kind, KEY) for kind in kinds]
    assert _apply(result, request) == [left, left]
    assert request == before  # the payload's request is never changed in place


def test_disabled_account_is_never_cached() -> None:
    module = build({})
    config = {**COUNTRY_CHANNEL, "enabled": False}
    for _ in range(2):
        result = module.handle_processed_auction_request(_ctx(config), PAYLOAD)
        assert result.message == MESSAGE_LOADING
    assert len(module.cache) == 0


def test_disabled_entry_message() -> None:
    module = build({})
    module.cache.set("acc", CacheEntry(False, 0.0, hash_config(COUNTRY_CHANNEL)))
    result = module.handle_processed_auction_request(_ctx(COUNTRY_CHANNEL), PAYLOAD)
    assert (result.message, result.mutations) == (MESSAGE_DISABLED, [])


def test_invalid_account_config_keeps_skipping(caplog: pytest.LogCaptureFixture) -> None:
    module = build({})
    with caplog.at_level(logging.ERROR):
        for _ in range(2):
            result = module.handle_processed_auction_request(_ctx({"enabled": True}), PAYLOAD)
            assert result.message == MESSAGE_LOADING
    assert caplog.text.count("Rules engine error parsing config for account acc") == 2


def test_account_without_id_is_never_cached() -> None:
    module = build({})
    for _ in range(2):
        result = module.handle_processed_auction_request(_ctx(COUNTRY_CHANNEL, account=""), PAYLOAD)
        assert result.message == MESSAGE_LOADING


def test_changed_config_is_picked_up_after_the_refresh_rate() -> None:
    clock = Clock(0.0)
    module = build({"refreshrateseconds": 60}, clock=clock)
    _warm(module, COUNTRY_CHANNEL)
    other = copy.deepcopy(COUNTRY_CHANNEL)
    other["rulesets"][0]["modelgroups"][0]["rules"][0] = _rule(["true", "web"], "excludeBidders", ["bidderC"])
    request = _request("USA", "web")

    clock.now = 30.0  # not expired: the old trees, no rebuild
    result = module.handle_processed_auction_request(_ctx(other), ProcessedAuctionRequestPayload(request))
    assert _apply(result, request)[0] == ["bidderB", "bidderC"]

    clock.now = 61.0  # expired and changed: this request still runs the old trees, the next the new
    result = module.handle_processed_auction_request(_ctx(other), ProcessedAuctionRequestPayload(request))
    assert _apply(result, request)[0] == ["bidderB", "bidderC"]
    result = module.handle_processed_auction_request(_ctx(other), ProcessedAuctionRequestPayload(request))
    assert _apply(result, request)[0] == ["bidderA", "bidderB"]
    entry = module.cache.get("acc")
    assert entry is not None and entry.timestamp == 61.0


def test_default_refresh_rate_never_rebuilds() -> None:
    clock = Clock(0.0)
    module = build({}, clock=clock)
    _warm(module, COUNTRY_CHANNEL)
    clock.now = 1e9
    other = {**COUNTRY_CHANNEL, "rulesets": []}
    request = _request("USA", "web")
    for _ in range(2):
        result = module.handle_processed_auction_request(_ctx(other), ProcessedAuctionRequestPayload(request))
        assert _apply(result, request)[0] == ["bidderB", "bidderC"]


def test_include_bidders_across_rulesets_shares_one_allowed_set() -> None:
    """PBS-Go: the allowed map is shared, so every 'add' mutation after the first include applies
    the union of all includes."""
    config = {
        "enabled": True,
        "rulesets": [
            _ruleset_config("rs1", [{"function": "channel"}], [_rule(["*"], "includeBidders", ["bidderA"])]),
            _ruleset_config("rs2", [{"function": "channel"}], [_rule(["*"], "excludeBidders", ["bidderC"])]),
            _ruleset_config("rs3", [{"function": "channel"}], [_rule(["*"], "includeBidders", ["bidderB"])]),
        ],
    }
    module = build({})
    _warm(module, config)
    request = _request()
    result = module.handle_processed_auction_request(_ctx(config), ProcessedAuctionRequestPayload(request))
    assert [m.kind for m in result.mutations] == ["add", "delete", "add", "add"]
    assert _apply(result, request) == [["bidderA", "bidderB"]] * 2


def test_schema_function_error_is_reported_and_other_rulesets_run() -> None:
    config = {
        "enabled": True,
        "rulesets": [
            _ruleset_config("rs1", [{"function": "channel"}], [_rule(["*"], "excludeBidders", ["bidderA"])]),
            _ruleset_config("rs2", [{"function": "deviceCountry"}], [_rule(["*"], "excludeBidders", ["bidderB"])]),
        ],
    }
    module = build({})
    _warm(module, config)
    request = {**_request(), "ext": "malformed"}
    result = module.handle_processed_auction_request(_ctx(config), ProcessedAuctionRequestPayload(request))
    assert result.errors == ["request.ext must be an object"]
    assert _apply(result, request)[0] == ["bidderA", "bidderC"]


def test_ruleset_that_fails_to_build_is_dropped() -> None:
    config = {
        "enabled": True,
        "rulesets": [
            _ruleset_config("tags", [{"function": "channel"}], [_rule(["*"], "logATag", ["x"])]),
            _ruleset_config("other", [{"function": "channel"}], [_rule(["*"], "excludeBidders", ["bidderA"])]),
            {**_ruleset_config("late", [], []), "stage": "bidder_request"},
        ],
    }
    module = build({})
    _warm(module, config)
    entry = module.cache.get("acc")
    assert entry is not None and [rs.name for rs in entry.rulesets] == ["other"]


def test_model_groups_by_weight_and_percent_with_injected_randomness() -> None:
    config = {
        "enabled": True,
        "rulesets": [
            {
                "stage": "processed_auction_request",
                "name": "ab",
                "modelgroups": [
                    {
                        "weight": 90,
                        "analyticsKey": "control",
                        "schema": [{"function": "percent", "args": {"pct": 20}}],
                        "rules": [_rule(["true"], "excludeBidders", ["bidderA"])],
                    },
                    {
                        "weight": 10,
                        "analyticsKey": "test",
                        "schema": [{"function": "channel"}],
                        "rules": [_rule(["*"], "excludeBidders", ["bidderB"])],
                    },
                ],
            }
        ],
    }
    draws = Draws()
    module = build({}, intn=draws)
    _warm(module, config)
    request = _request()
    # group draw 0 -> 1 <= 90: control; percent draw 20 <= 20: true
    # group draw 89 -> 90: control; percent draw 21: false (no leaf: nothing)
    # group draw 90 -> 91 > 90: test
    expected = [["bidderB", "bidderC"], ["bidderA", "bidderB", "bidderC"], ["bidderA", "bidderC"]]
    draws.values = [0, 20, 89, 21, 90]
    for left in expected:
        result = module.handle_processed_auction_request(_ctx(config), ProcessedAuctionRequestPayload(request))
        assert _apply(result, request)[0] == left
    assert draws.asked == [100, 100, 100, 100, 100]


def test_geoscope_rules_from_host_config() -> None:
    module = build({"geoscopes": {"bidderA": ["!EEA"], "bidderB": ["USA"]}})
    config = {"enabled": True, "generate_rules_from_bidderconfig": True, "rulesets": []}
    _warm(module, config)

    def left(country: str | None) -> list[str]:
        request = _request(country)
        result = module.handle_processed_auction_request(_ctx(config), ProcessedAuctionRequestPayload(request))
        return _apply(result, request)[0]

    assert left("DEU") == ["bidderC"]
    assert left("USA") == ["bidderA", "bidderB", "bidderC"]
    assert left("JPN") == ["bidderA", "bidderC"]
    assert left(None) == ["bidderA", "bidderC"]


def test_accounts_are_cached_separately() -> None:
    module = build({})
    _warm(module, COUNTRY_CHANNEL, "one")
    result = module.handle_processed_auction_request(_ctx(COUNTRY_CHANNEL, "two"), PAYLOAD)
    assert result.message == MESSAGE_LOADING
    assert len(module.cache) == 2
