"""prebid.rulesengine: the account config (PBS-Go config/config_test.go) and the host config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.modules.rulesengine import build
from hbserver.modules.rulesengine.args import MISSING
from hbserver.modules.rulesengine.config import (
    FunctionConfig,
    ModelGroupConfig,
    RuleConfig,
    RuleSetConfig,
    check_ruleset,
    parse_config,
)
from hbserver.modules.rulesengine.jsonschema import schema_errors, validate

DATA = Path(__file__).parent / "data" / "rulesengine"
VALID = json.loads((DATA / "valid_config.json").read_text())
SCHEMA_CASES = json.loads((DATA / "schema_validation.json").read_text())["cases"]


@pytest.mark.parametrize(("name", "config", "error"), SCHEMA_CASES, ids=[case[0] for case in SCHEMA_CASES])
def test_validate_config(name: str, config: Any, error: str) -> None:
    assert "".join(f"[{text}] " for text in schema_errors(config)) == error
    if error:
        with pytest.raises(ValueError) as raised:
            validate(config)
        assert str(raised.value) == error
    else:
        validate(config)


def test_valid_config_passes_schema() -> None:
    assert schema_errors(VALID) == []


def _rule(conditions: list[str], function: str, bidders: list[str], seat: int) -> RuleConfig:
    return RuleConfig(tuple(conditions), (FunctionConfig(function, {"bidders": bidders, "seatNonBid": seat}),))


def test_new_config_success() -> None:
    config = parse_config(VALID)
    assert config.enabled is True
    assert config.generate_rules_from_bidderconfig is True
    assert config.country_groups == {"CUSTOM_GROUP": ("USA", "CAN")}
    assert config.timestamp == "20250131 00:00:00"
    first = ModelGroupConfig(
        weight=100,
        analytics_key="experiment-name",
        version="4567",
        schema=(
            FunctionConfig("deviceCountryIn", {"countries": ["USA"]}),
            FunctionConfig("dataCenterIn", {"datacenters": ["us-east", "us-west"]}),
            FunctionConfig("channel", MISSING),
        ),
        rules=(
            _rule(["true", "true", "amp"], "excludeBidders", ["bidderA"], 111),
            _rule(["true", "false", "web"], "excludeBidders", ["bidderB"], 222),
            _rule(["false", "false", "*"], "includeBidders", ["bidderC"], 333),
        ),
        default=(),
    )
    second = ModelGroupConfig(
        weight=1,
        analytics_key="experiment-name",
        version="3.0",
        schema=(FunctionConfig("channel", MISSING),),
        rules=(_rule(["*"], "includeBidders", ["bidderC"], 333),),
    )
    assert config.rulesets == (RuleSetConfig("processed_auction_request", "exclude-in-jpn", "1234", (first, second)),)


@pytest.mark.parametrize(
    ("config", "error"),
    [
        (None, "JSON schema validation: [(root): Invalid type. Expected: object, given: null] "),
        ({}, "JSON schema validation: [(root): enabled is required] [(root): rulesets is required] "),
        (
            {
                "enabled": True,
                "rulesets": [
                    {
                        "stage": "processed_auction_request",
                        "name": "exclude-in-jpn",
                        "modelgroups": [
                            {
                                "weight": 98,
                                "schema": [{"function": "channel"}],
                                "rules": [
                                    {"conditions": ["true", "amp"], "results": []},
                                    {"conditions": ["web"], "results": []},
                                ],
                            },
                            {
                                "weight": 2,
                                "schema": [{"function": "channel"}],
                                "rules": [{"conditions": ["*"], "results": []}],
                            },
                        ],
                    }
                ],
            },
            "Ruleset no 0 is invalid: ModelGroup 0 number of schema functions differ from number of conditions"
            " of rule 0",
        ),
        (
            {"enabled": True, "rulesets": [{"stage": "entrypoint", "name": "n", "modelgroups": [{"weight": 50.5}]}]},
            "failed to parse config: weight must be of type int",
        ),
    ],
)
def test_new_config_errors(config: Any, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_config(config)
    assert str(raised.value) == error


def _group(schema: int, rules: list[int]) -> ModelGroupConfig:
    return ModelGroupConfig(
        schema=tuple(FunctionConfig("channel") for _ in range(schema)),
        rules=tuple(RuleConfig(tuple("c" for _ in range(count)), ()) for count in rules),
    )


@pytest.mark.parametrize(
    ("group", "error"),
    [
        (_group(0, []), None),
        (_group(1, []), "ModelGroup 0 has schema functions but no rules"),
        (_group(1, [0]), "ModelGroup 0 number of schema functions differ from number of conditions of rule 0"),
        (_group(0, [1]), "ModelGroup 0 has no schema functions to test its rules against"),
        (_group(1, [2]), "ModelGroup 0 number of schema functions differ from number of conditions of rule 0"),
        (_group(2, [1]), "ModelGroup 0 number of schema functions differ from number of conditions of rule 0"),
        (_group(2, [2, 1]), "ModelGroup 0 number of schema functions differ from number of conditions of rule 1"),
        (_group(1, [1]), None),
    ],
)
def test_validate_ruleset(group: ModelGroupConfig, error: str | None) -> None:
    ruleset = RuleSetConfig("processed_auction_request", "n", "", (group,))
    if error is None:
        check_ruleset(ruleset)
    else:
        with pytest.raises(ValueError) as raised:
            check_ruleset(ruleset)
        assert str(raised.value) == error


def test_weight_absent_defaults_to_100() -> None:
    config = parse_config({"enabled": True, "rulesets": [{"stage": "entrypoint", "name": "n", "modelgroups": [{}]}]})
    assert config.rulesets[0].model_groups[0].weight == 100


def test_struct_keys_read_case_insensitively_like_go() -> None:
    """The schema is case-sensitive, Go's unmarshal is not: ``analyticskey`` fills AnalyticsKey."""
    config = parse_config(
        {
            "enabled": True,
            "rulesets": [{"stage": "entrypoint", "name": "n", "modelgroups": [{"analyticskey": "k", "Version": "2"}]}],
        }
    )
    group = config.rulesets[0].model_groups[0]
    assert (group.analytics_key, group.version) == ("k", "2")


# ---- host config (PBS-Go module_test.go TestBuilderWithWorkingDir, getRefreshRate) ------------------


@pytest.mark.parametrize(
    ("host", "refresh", "max_accounts"),
    [({}, 0, 10_000), ({"enabled": True, "refreshrateseconds": 30}, 30, 10_000), ({"cache_max_accounts": 2}, 0, 2)],
)
def test_build(host: dict[str, Any], refresh: int, max_accounts: int) -> None:
    module = build(host)
    assert (module.cache.refresh_seconds, module.cache.max_accounts) == (refresh, max_accounts)
    assert callable(module.handle_processed_auction_request)


def test_build_with_geoscopes() -> None:
    module = build({"geoscopes": {"bidder1": ["USA", "CAN"], "bidder2": ["GBR", "FRA"]}})
    assert module.trees.geoscopes == {"bidder1": ("USA", "CAN"), "bidder2": ("GBR", "FRA")}


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ({"enabled": True, "refreshrateseconds": "invalid-format"}, "refreshrateseconds"),
        ({"refreshrateseconds": 1.5}, "refreshrateseconds"),
        ({"refreshrateseconds": True}, "refreshrateseconds"),
        ({"cache_max_accounts": 0}, "cache_max_accounts"),
        ({"geoscopes": ["USA"]}, "geoscopes"),
        ({"geoscopes": {"bidder1": "USA"}}, "geoscopes.bidder1"),
        ({"geoscopes": {"bidder1": [1]}}, "geoscopes.bidder1"),
    ],
)
def test_build_refuses_bad_host_config(host: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=rf"hooks\.modules\.prebid\.rulesengine\.{key} must be"):
        build(host)
