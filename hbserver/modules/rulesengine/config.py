"""An account's rules engine configuration (PBS-Go ``rulesengine/config/config.go``): checked
against the schema, read into dataclasses, then each rule set's model groups checked.

Keys are read as Go reads them into its structs: case-insensitively, so ``ruleSets`` fills
``rulesets`` once the schema (which is case-sensitive) has passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.modules.rulesengine import jsonschema
from hbserver.modules.rulesengine.args import MISSING, field, is_int

DEFAULT_WEIGHT = 100


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """A schema or result function: its name and ``args`` (MISSING when absent)."""

    function: str
    args: Any = MISSING


@dataclass(frozen=True, slots=True)
class RuleConfig:
    conditions: tuple[str, ...]
    results: tuple[FunctionConfig, ...]


@dataclass(frozen=True, slots=True)
class ModelGroupConfig:
    weight: int = DEFAULT_WEIGHT
    analytics_key: str = ""
    version: str = ""
    schema: tuple[FunctionConfig, ...] = ()
    rules: tuple[RuleConfig, ...] = ()
    default: tuple[FunctionConfig, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleSetConfig:
    stage: str
    name: str
    version: str
    model_groups: tuple[ModelGroupConfig, ...]


@dataclass(frozen=True, slots=True)
class RulesEngineConfig:
    """PBS-Go ``PbRulesEngine``."""

    enabled: bool
    generate_rules_from_bidderconfig: bool
    country_groups: Mapping[str, tuple[str, ...]]
    timestamp: str
    rulesets: tuple[RuleSetConfig, ...]


def _get(obj: Mapping[str, Any], name: str, default: Any) -> Any:
    value = field(obj, name)
    return default if value is MISSING or value is None else value


def _typed(obj: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    """A field of one JSON type (Go's unmarshal refuses any other: 'failed to parse config')."""
    value = _get(obj, name, default)
    if not (is_int(value) if kind is int else isinstance(value, kind)):
        raise ValueError(f"failed to parse config: {name} must be of type {kind.__name__}")
    return value


def _objects(obj: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    items = _typed(obj, name, list, [])
    if not all(isinstance(item, Mapping) for item in items):
        raise ValueError(f"failed to parse config: {name} must hold objects")
    return items


def _functions(obj: Mapping[str, Any], name: str) -> tuple[FunctionConfig, ...]:
    return tuple(FunctionConfig(_typed(item, "function", str, ""), field(item, "args")) for item in _objects(obj, name))


def _strings(obj: Mapping[str, Any], name: str) -> tuple[str, ...]:
    items = _typed(obj, name, list, [])
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"failed to parse config: {name} must hold strings")
    return tuple(items)


def _model_group(obj: Mapping[str, Any]) -> ModelGroupConfig:
    rules = tuple(
        RuleConfig(_strings(rule, "conditions"), _functions(rule, "results")) for rule in _objects(obj, "rules")
    )
    weight = _typed(obj, "weight", int, 0)
    return ModelGroupConfig(
        weight=weight or DEFAULT_WEIGHT,  # validateRuleSet: 0 means 100
        analytics_key=_typed(obj, "analyticsKey", str, ""),
        version=_typed(obj, "version", str, ""),
        schema=_functions(obj, "schema"),
        rules=rules,
        default=_functions(obj, "default"),
    )


def _ruleset(obj: Mapping[str, Any]) -> RuleSetConfig:
    return RuleSetConfig(
        stage=_typed(obj, "stage", str, ""),
        name=_typed(obj, "name", str, ""),
        version=_typed(obj, "version", str, ""),
        model_groups=tuple(_model_group(group) for group in _objects(obj, "modelgroups")),
    )


def _country_groups(obj: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    definitions = _typed(obj, "set_definitions", Mapping, {})
    groups = _typed(definitions, "country_groups", Mapping, {})
    return {name: _strings(groups, name) for name in groups}


def check_ruleset(ruleset: RuleSetConfig) -> None:
    """PBS-Go ``validateRuleSet``: schema functions and rules go together, one condition per
    schema function."""
    for index, group in enumerate(ruleset.model_groups):
        if group.schema and not group.rules:
            raise ValueError(f"ModelGroup {index} has schema functions but no rules")
        if not group.schema and group.rules:
            raise ValueError(f"ModelGroup {index} has no schema functions to test its rules against")
        for number, rule in enumerate(group.rules):
            if len(rule.conditions) != len(group.schema):
                raise ValueError(
                    f"ModelGroup {index} number of schema functions differ from number of conditions of rule {number}"
                )


def parse_config(raw: Any) -> RulesEngineConfig:
    """PBS-Go ``NewConfig``: ValueError with PBS-Go's message for a config it refuses."""
    try:
        jsonschema.validate(raw)
    except ValueError as error:
        raise ValueError(f"JSON schema validation: {error}") from None
    config = RulesEngineConfig(
        enabled=_typed(raw, "enabled", bool, False),
        generate_rules_from_bidderconfig=_typed(raw, "generate_rules_from_bidderconfig", bool, False),
        country_groups=_country_groups(raw),
        timestamp=_typed(raw, "timestamp", str, ""),
        rulesets=tuple(_ruleset(item) for item in _objects(raw, "rulesets")),
    )
    for index, ruleset in enumerate(config.rulesets):
        try:
            check_ruleset(ruleset)
        except ValueError as error:
            raise ValueError(f"Ruleset no {index} is invalid: {error}") from None
    return config
