"""Activity controls: one row per rule of evaluation, then the config errors."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.privacy.activity import ActivityConfigError, ActivityControl, ActivityRequest
from hbserver.privacy.gpp_us import decode_us_section
from hbserver.privacy.regs import read_regs
from tests.privacy.test_gpp import encode_header
from tests.privacy.test_gpp_us import encode_us


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
        sync_user({"condition": {"gppSids": [7]}, "allow": False}),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "gppSid without a request does not match (syncs pass none)",
        sync_user({"condition": {"gppSid": [7]}, "allow": False}),
        "syncUser",
        "bidder",
        "appnexus",
        True,
    ),
    (
        "PBS-Java's component_name spelling",
        sync_user({"condition": {"component_name": ["appnexus"]}, "allow": False}),
        "syncUser",
        "bidder",
        "appnexus",
        False,
    ),
    (
        "PBS-Java's component-type spelling",
        sync_user({"condition": {"component-type": ["analytics"]}, "allow": False}),
        "syncUser",
        "bidder",
        "appnexus",
        True,
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


# --- conditions that read the request (gppSid, geo, gpc) and privacyreg rules over privacy modules ---

USNAT_OPTED_OUT = decode_us_section(7, encode_us(7, sale_opt_out=1))
USNAT_CLEAN = decode_us_section(7, encode_us(7, sharing_notice=1, sale_opt_out_notice=1, sharing_opt_out_notice=1,
                                             targeted_advertising_opt_out_notice=1))
USGENERAL = [{"code": "iab.usgeneral"}]


def deny_when(**condition: Any) -> dict[str, Any]:
    return sync_user({"condition": condition, "allow": False})


def modules_then(*rules: dict[str, Any], default: bool | None = None) -> dict[str, Any]:
    return sync_user(*rules, default=default)


def areq(sids: tuple[int, ...] = (), sections: dict[int, Any] | None = None, country: str | None = None,
         region: str | None = None, gpc: str | None = None) -> ActivityRequest:
    return ActivityRequest(sids, sections or {}, country, region, gpc)


NO_REQUEST = None
# (name, allowactivities, modules, activity, request, expected)
REQUEST_TABLE = [
    ("gppSid shares a section id: matches", deny_when(gppSid=[7, 8]), None, "syncUser", areq((8,)), False),
    ("gppSid shares none: no match", deny_when(gppSid=[7, 8]), None, "syncUser", areq((2, 6)), True),
    ("gppSid against an empty gpp_sid: no match", deny_when(gppSid=[7]), None, "syncUser", areq(), True),
    ("empty gppSid is no condition (PBS-Go)", deny_when(gppSid=[]), None, "syncUser", areq(), False),
    ("gpp_sid spelling (PBS-Java)", deny_when(gpp_sid=[7]), None, "syncUser", areq((7,)), False),
    ("gppSid and componentName must both match", deny_when(gppSid=[7], componentName=["rubicon"]), None,
     "syncUser", areq((7,)), True),
    ("geo country matches case-insensitively", deny_when(geo=["USA"]), None, "syncUser", areq(country="usa"), False),
    ("geo country differs", deny_when(geo=["USA"]), None, "syncUser", areq(country="CAN"), True),
    ("geo country and region", deny_when(geo=["USA.CA"]), None, "syncUser", areq(country="USA", region="ca"), False),
    ("geo region differs", deny_when(geo=["USA.CA"]), None, "syncUser", areq(country="USA", region="NY"), True),
    ("geo region required but absent", deny_when(geo=["USA.CA"]), None, "syncUser", areq(country="USA"), True),
    ("geo 'USA.' is the country alone", deny_when(geo=["USA."]), None, "syncUser", areq(country="USA", region="NY"),
     False),
    ("geo: any entry may match", deny_when(geo=["CAN", "USA.VA"]), None, "syncUser",
     areq(country="USA", region="VA"), False),
    ("geo without a device country: no match", deny_when(geo=["USA"]), None, "syncUser", areq(), True),
    ("geo empty list: never matches a request", deny_when(geo=[]), None, "syncUser", areq(country="USA"), True),
    ("geo without a request is met (PBS-Java)", deny_when(geo=["USA"]), None, "syncUser", NO_REQUEST, False),
    ("gpc equal", deny_when(gpc="1"), None, "syncUser", areq(gpc="1"), False),
    ("gpc differs", deny_when(gpc="1"), None, "syncUser", areq(gpc="0"), True),
    ("gpc absent from the request", deny_when(gpc="1"), None, "syncUser", areq(), True),
    ("gpc given as a number", deny_when(gpc=1), None, "syncUser", areq(gpc="1"), False),
    ("gpc without a request is met (PBS-Java)", deny_when(gpc="1"), None, "syncUser", NO_REQUEST, False),
    # privacyreg
    ("privacyreg: the module denies", modules_then({"privacyreg": ["iab.usgeneral"]}), USGENERAL, "syncUser",
     areq((7,), {7: USNAT_OPTED_OUT}), False),
    ("privacyreg: the module allows over default false",
     modules_then({"privacyreg": ["iab.usgeneral"]}, default=False), USGENERAL, "syncUser",
     areq((7,), {7: USNAT_CLEAN}), True),
    ("privacyreg: no US section, abstains to the next rule",
     modules_then({"privacyreg": ["iab.usgeneral"]}, rule(allow=False)), USGENERAL, "syncUser", areq((2,)), False),
    ("privacyreg: abstains to the default", modules_then({"privacyreg": ["iab.usgeneral"]}, default=False),
     USGENERAL, "syncUser", areq((2,)), False),
    ("privacyreg: fetchBids is not judged by the module", modules_then({"privacyreg": ["iab.usgeneral"]}),
     USGENERAL, "fetchBids", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: transmitUfpd judged", {"transmitUfpd": {"rules": [{"privacyreg": ["iab.usgeneral"]}]}},
     USGENERAL, "transmitUfpd", areq((7,), {7: USNAT_OPTED_OUT}), False),
    ("privacyreg: without a request it abstains", modules_then({"privacyreg": ["iab.usgeneral"]}, default=False),
     USGENERAL, "syncUser", NO_REQUEST, False),
    ("privacyreg: a prefix with a wildcard", modules_then({"privacyreg": ["iab.*"]}), USGENERAL, "syncUser",
     areq((7,), {7: USNAT_OPTED_OUT}), False),
    ("privacyreg: a lone wildcard", modules_then({"privacyreg": ["*"]}), USGENERAL, "syncUser",
     areq((7,), {7: USNAT_OPTED_OUT}), False),
    ("privacyreg: a name that is no module's code is no rule", modules_then({"privacyreg": ["iab.other"]}),
     USGENERAL, "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: a module not configured", modules_then({"privacyreg": ["iab.usgeneral"]}), None, "syncUser",
     areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: a disabled module", modules_then({"privacyreg": ["iab.usgeneral"]}),
     [{"code": "iab.usgeneral", "enabled": False}], "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: skipSids", modules_then({"privacyreg": ["iab.usgeneral"]}),
     [{"code": "iab.usgeneral", "config": {"skipSids": [7]}}], "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: skipRate 100 always skips", modules_then({"privacyreg": ["iab.usgeneral"]}),
     [{"code": "iab.usgeneral", "skipRate": 100}], "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("privacyreg: condition keys beside it are ignored",
     modules_then({"privacyreg": ["iab.usgeneral"], "condition": {"componentName": ["x"]}, "allow": True}),
     USGENERAL, "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), False),
    ("an earlier condition rule decides first", modules_then(rule(["appnexus"], allow=True),
                                                             {"privacyreg": ["iab.usgeneral"]}),
     USGENERAL, "syncUser", areq((7,), {7: USNAT_OPTED_OUT}), True),
    ("plain rules work the same with a request", sync_user(rule(["appnexus"], allow=False)), None, "syncUser",
     areq((7,)), False),
]


@pytest.mark.parametrize(
    ("name", "config", "modules", "activity", "request_", "expected"),
    REQUEST_TABLE,
    ids=[row[0] for row in REQUEST_TABLE],
)
def test_rules_with_request(name: str, config: Any, modules: Any, activity: str, request_: ActivityRequest | None,
                            expected: bool) -> None:
    control = ActivityControl.from_config(config, modules)
    assert control.allowed(activity, "bidder", "appnexus", request=request_) is expected


def test_request_from_an_auction_request() -> None:
    tcf = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"
    gpp = "~".join([encode_header([2, 7]), tcf, encode_us(7, sale_opt_out=1)])
    request = {"regs": {"gpp": gpp, "gpp_sid": [7], "ext": {"gpc": 1}},
               "device": {"geo": {"country": "USA", "region": "CA"}}}
    built = ActivityRequest.from_request(request, read_regs(request))
    assert (built.gpp_sid, built.country, built.region, built.gpc) == (frozenset({7}), "USA", "CA", "1")
    assert built.sections[7] is not None and built.sections[7].sale_opt_out == 1
    control = ActivityControl.from_config(modules_then({"privacyreg": ["iab.usgeneral"]}), USGENERAL)
    assert control.allowed("syncUser", "bidder", "appnexus", request=built) is False


def test_request_without_device_or_regs() -> None:
    built = ActivityRequest.from_request({}, read_regs({}))
    assert (built.gpp_sid, built.country, built.region, built.gpc, dict(built.sections)) == (
        frozenset(), None, None, None, {})


def test_module_answer_is_computed_once_per_request() -> None:
    control = ActivityControl.from_config(modules_then({"privacyreg": ["iab.usgeneral"]}), USGENERAL)
    calls = []

    class Counting(dict):
        def get(self, key: Any, default: Any = None) -> Any:
            calls.append(key)
            return super().get(key, default)

    request = ActivityRequest((7,), Counting({7: USNAT_OPTED_OUT}))
    for bidder in ("a", "b", "c"):
        assert control.allowed("syncUser", "bidder", bidder, request=request) is False
    assert calls == [7]


@pytest.mark.parametrize(
    ("config", "modules", "uses"),
    [
        (None, None, False),
        (sync_user(rule(["appnexus"], allow=False)), None, False),
        (deny_when(gppSid=[7]), None, True),
        (deny_when(gppSid=[]), None, False),
        (deny_when(geo=["USA"]), None, True),
        (deny_when(gpc="1"), None, True),
        (modules_then({"privacyreg": ["iab.usgeneral"]}), USGENERAL, True),
        (modules_then({"privacyreg": ["iab.usgeneral"]}), None, False),  # no module: no rule
    ],
)
def test_uses_request(config: Any, modules: Any, uses: bool) -> None:
    assert ActivityControl.from_config(config, modules).uses_request() is uses


@pytest.mark.parametrize(
    ("config", "modules", "section", "path"),
    [
        (deny_when(gppSid=7), None, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].condition.gppSid: expected a list of integers"),
        (deny_when(gppSid=[7, "8"]), None, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].condition.gppSid[1]: expected an integer"),
        (deny_when(gpp_sid=[True]), None, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].condition.gpp_sid[0]: expected an integer"),
        (deny_when(geo="USA"), None, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].condition.geo: expected a list of strings"),
        (deny_when(gpc=True), None, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].condition.gpc: expected a string"),
        (modules_then({"privacyreg": "iab.usgeneral"}), USGENERAL, "privacy.allowactivities",
         "privacy.allowactivities.syncUser.rules[0].privacyreg: expected a list of strings"),
        (None, [{"code": "iab.uscustomlogic"}], "privacy.modules",
         "privacy.modules[0].code: privacy module 'iab.uscustomlogic' (JsonLogic rules) is not supported"),
        (sync_user(default=False), {"code": "iab.usgeneral"}, "privacy.modules", "privacy.modules: expected a list"),
    ],
)
def test_request_config_errors(config: Any, modules: Any, section: str, path: str) -> None:
    with pytest.raises(ActivityConfigError) as info:
        ActivityControl.from_config(config, modules)
    assert str(info.value).startswith(path)
    assert info.value.section == section
