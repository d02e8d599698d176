"""Prebid activity controls: account ``privacy.allowactivities`` rules (PBS-Go ``privacy/``).

``{"syncUser": {"default": bool, "rules": [{"condition": {"componentName": [...],
"componentType": [...]}, "allow": bool}]}}``. Rules are tried in order; a rule matches when
each of its non-empty lists contains the component (compared case-insensitively); the first
match decides, and a rule without ``allow`` denies. No match gives ``default`` (absent: allow);
an activity without a plan is allowed.

Activity names are any string key (syncUser, fetchBids, enrichUfpd, reportAnalytics,
transmitUfpd, transmitEids, transmitPreciseGeo, transmitTid, ...). Keys are matched
case-insensitively, as Go's JSON decoding matches struct fields. Unknown keys (such as a
``gppSid`` condition, which PBS-Go's account config does not read either) are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SYNC_USER = "syncUser"
COMPONENT_BIDDER = "bidder"

_PATH = "privacy.allowactivities"


class ActivityConfigError(ValueError):
    """Malformed ``privacy.allowactivities``; the message names the offending path."""


@dataclass(frozen=True, slots=True)
class _Rule:
    names: frozenset[str]  # lower case; empty = any
    types: frozenset[str]
    allow: bool


@dataclass(frozen=True, slots=True)
class _Plan:
    default: bool
    rules: tuple[_Rule, ...]


def _lower_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k.lower(): v for k, v in value.items() if isinstance(k, str)}


def _object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ActivityConfigError(f"{path}: expected an object, got {type(value).__name__}")
    return _lower_keys(value)


def _optional_bool(value: object, path: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ActivityConfigError(f"{path}: expected true or false, got {type(value).__name__}")
    return value


def _names(value: object, path: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise ActivityConfigError(f"{path}: expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ActivityConfigError(f"{path}[{i}]: expected a string, got {type(item).__name__}")
    return frozenset(item.lower() for item in value)


def _plan(raw: object, path: str) -> _Plan:
    activity = _object(raw, path)
    default = _optional_bool(activity.get("default"), f"{path}.default")
    raw_rules = activity.get("rules")
    if raw_rules is None:
        raw_rules = []
    if not isinstance(raw_rules, list):
        raise ActivityConfigError(f"{path}.rules: expected a list, got {type(raw_rules).__name__}")
    rules = []
    for i, raw_rule in enumerate(raw_rules):
        where = f"{path}.rules[{i}]"
        rule = _object(raw_rule, where)
        condition = rule.get("condition")
        cond = {} if condition is None else _object(condition, f"{where}.condition")
        rules.append(
            _Rule(
                names=_names(cond.get("componentname"), f"{where}.condition.componentName"),
                types=_names(cond.get("componenttype"), f"{where}.condition.componentType"),
                allow=bool(_optional_bool(rule.get("allow"), f"{where}.allow")),
            )
        )
    return _Plan(default=True if default is None else default, rules=tuple(rules))


class ActivityControl:
    """The activity plans of one account, built once and queried per component."""

    __slots__ = ("_plans",)

    def __init__(self, plans: Mapping[str, _Plan] | None = None) -> None:
        self._plans = dict(plans or {})

    @classmethod
    def from_config(cls, allowactivities: Mapping[str, Any] | None) -> ActivityControl:
        """Build from the account's ``privacy.allowactivities`` (None or {}: allow everything)."""
        if allowactivities is None:
            return cls()
        if not isinstance(allowactivities, Mapping):
            raise ActivityConfigError(f"{_PATH}: expected an object, got {type(allowactivities).__name__}")
        plans: dict[str, _Plan] = {}
        for name, raw in allowactivities.items():
            if not isinstance(name, str):
                raise ActivityConfigError(f"{_PATH}: activity names must be strings")
            if raw is not None:
                plans[name.lower()] = _plan(raw, f"{_PATH}.{name}")
        return cls(plans)

    def any(self) -> bool:
        """Whether any activity has a plan (else every check allows)."""
        return bool(self._plans)

    def governs(self, activity: str) -> bool:
        """Whether any rule or default is configured for ``activity`` (else everything is allowed)."""
        return activity.lower() in self._plans

    def allowed(self, activity: str, component_type: str, component_name: str) -> bool:
        plans = self._plans
        if not plans:  # the usual account: no controls, nothing to lower-case
            return True
        plan = plans.get(activity.lower())
        if plan is None:
            return True
        ctype = component_type.lower()
        cname = component_name.lower()
        for rule in plan.rules:
            if (not rule.names or cname in rule.names) and (not rule.types or ctype in rule.types):
                return rule.allow
        return plan.default
