"""Activity controls: one row per rule of evaluation, then the config errors."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.privacy.activity import ActivityConfigError, ActivityControl


def sync_user(*rules: dict[str, Any], default: bool | None = None) -> dict[str, Any]:
    activity: dict[str, Any] = {"rules": list(rules)}
    if default is not None:
        activity["default"] = default
    return {"syncUser": activity}


def rule(names: list[str] | None = None, types: list[str] | None = None, allow: bool | None = None) -> dict[str, Any]:
    condition: dict[str, Any] = {}
    if names is not None:
        condition["componentName"] = names
    if types is not None:
        condition["componentType"] = types
    out: dict[str, Any] = {"condition": condition}
    if allow is not None:
        out["allow"] = allow
    return out


# (name, allowactivities, activity, component type, component name, expected)
TABLE = [
    ("no config allows", None, "syncUser", "bidder", "appnexus", True),
    ("empty config allows", {}, "syncUser", "bidder", "appnexus", True),
    ("unknown activity allows", sync_user(default=False), "fetchBids", "bidder", "appnexus", True),
    ("default false, no rules", sync_user(default=False), "syncUser", "bidder", "appnexus", False),
    ("default true, no rules", sync_user(default=True), "syncUser", "bidder", "appnexus", True),
    (
        "default absent, no match: allow",
        sync_user(rule(["rubicon"], allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        True,
    ),
    ("name match denies", sync_user(rule(["appnexus"], allow=False)), "syncUser", "bidder", "appnexus", False),
    ("allow omitted denies", sync_user(rule(["appnexus"])), "syncUser", "bidder", "appnexus", False),
    (
        "allow null denies",
        sync_user({"condition": {"componentName": ["appnexus"]}, "allow": None}),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "name match allows over default false",
        sync_user(rule(["appnexus"], allow=True), default=False),
        "syncUser",
        "bidder",
        "appnexus",
        True,
    ),
    (
        "name compared case-insensitively",
        sync_user(rule(["AppNexus"], allow=False)),
        "syncUser",
        "bidder",
        "APPNEXUS",
        False,
    ),
    (
        "type compared case-insensitively",
        sync_user(rule(types=["BIDDER"], allow=False)),
        "syncUser",
        "Bidder",
        "x",
        False,
    ),
    (
        "type mismatch skips the rule",
        sync_user(rule(["appnexus"], ["analytics"], allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        True,
    ),
    (
        "name and type must both match",
        sync_user(rule(["appnexus"], ["bidder"], allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "any name in the list",
        sync_user(rule(["a", "b", "appnexus"], allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    ("empty condition matches everything", sync_user(rule(allow=False)), "syncUser", "bidder", "appnexus", False),
    ("empty lists match everything", sync_user(rule([], [], allow=False)), "syncUser", "bidder", "appnexus", False),
    ("no condition key matches everything", sync_user({"allow": False}), "syncUser", "bidder", "appnexus", False),
    (
        "first match wins (deny first)",
        sync_user(rule(["appnexus"], allow=False), rule(["appnexus"], allow=True)),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "first match wins (allow first)",
        sync_user(rule(["appnexus"], allow=True), rule(allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        True,
    ),
    (
        "later rule matches after a miss",
        sync_user(rule(["rubicon"], allow=True), rule(["appnexus"], allow=False)),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    ("no wildcard in names", sync_user(rule(["*"], allow=False)), "syncUser", "bidder", "appnexus", True),
    ("activity name case-insensitive", {"SyncUser": {"default": False}}, "syncuser", "bidder", "appnexus", False),
    ("any activity key", {"transmitEids": {"default": False}}, "transmitEids", "bidder", "appnexus", False),
    ("null activity is no plan", {"syncUser": None}, "syncUser", "bidder", "appnexus", True),
    (
        "unknown condition keys ignored",
        sync_user({"condition": {"gppSid": [7]}, "allow": False}),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "keys case-insensitive",
        {"syncUser": {"DEFAULT": True, "Rules": [{"Condition": {"componentname": ["x"]}}]}},
        "syncUser",
        "bidder",
        "x",
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "config", "activity", "component_type", "component_name", "expected"),
    TABLE,
    ids=[row[0] for row in TABLE],
)
def test_rules(name: str, config: Any, activity: str, component_type: str, component_name: str, expected: bool) -> None:
    control = ActivityControl.from_config(config)
    assert control.allowed(activity, component_type, component_name) is expected


@pytest.mark.parametrize(
    ("config", "path"),
    [
        ([], "privacy.allowactivities: expected an object"),
        ({"syncUser": []}, "privacy.allowactivities.syncUser: expected an object"),
        ({"syncUser": {"default": "false"}}, "privacy.allowactivities.syncUser.default: expected true or false"),
        ({"syncUser": {"default": 0}}, "privacy.allowactivities.syncUser.default: expected true or false"),
        ({"syncUser": {"rules": {}}}, "privacy.allowactivities.syncUser.rules: expected a list"),
        ({"syncUser": {"rules": ["x"]}}, "privacy.allowactivities.syncUser.rules[0]: expected an object"),
        (
            {"syncUser": {"rules": [{}, {"allow": "yes"}]}},
            "privacy.allowactivities.syncUser.rules[1].allow: expected true or false",
        ),
        (
            {"syncUser": {"rules": [{"condition": []}]}},
            "privacy.allowactivities.syncUser.rules[0].condition: expected an object",
        ),
        (
            {"syncUser": {"rules": [{"condition": {"componentName": "appnexus"}}]}},
            "privacy.allowactivities.syncUser.rules[0].condition.componentName: expected a list of strings",
        ),
        (
            {"fetchBids": {"rules": [{"condition": {"componentType": ["bidder", 5]}}]}},
            "privacy.allowactivities.fetchBids.rules[0].condition.componentType[1]: expected a string",
        ),
    ],
)
def test_config_errors(config: Any, path: str) -> None:
    with pytest.raises(ActivityConfigError) as info:
        ActivityControl.from_config(config)
    assert str(info.value).startswith(path)
    assert isinstance(info.value, ValueError)
