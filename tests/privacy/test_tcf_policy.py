"""TcfPolicy: host ``gdpr.tcf2`` with account ``gdpr`` overrides (PBS-Go tcf2Config), and the EEA default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hbserver.config import AccountGdpr, Gdpr, build
from hbserver.privacy.tcf_policy import (
    ALGO_BASIC,
    ALGO_FULL,
    CHANNELS,
    TcfPolicy,
    default_policy,
    gdpr_default_applies,
    policy_for,
)


def host(raw: dict[str, Any] | None = None) -> Gdpr:
    problems: list[str] = []
    gdpr = build(Gdpr, raw or {}, "gdpr", problems)
    assert problems == []
    return gdpr


def account(raw: dict[str, Any] | None = None) -> AccountGdpr:
    problems: list[str] = []
    gdpr = build(AccountGdpr, raw or {}, "gdpr", problems)
    assert problems == []
    return gdpr


def tcf2(**keys: Any) -> dict[str, Any]:
    return {"tcf2": keys}


Read = Callable[[TcfPolicy], Any]

# (rule, host gdpr, account gdpr, what is read, expected)
OVERRIDES: list[tuple[str, dict[str, Any], dict[str, Any], Read, Any]] = [
    # purposeN.enforce_purpose
    ("enforce_purpose: built-in default", {}, {}, lambda p: p.purpose_enforced(1), True),
    ("enforce_purpose: host", tcf2(purpose1={"enforce_purpose": False}), {}, lambda p: p.purpose_enforced(1), False),
    (
        "enforce_purpose: account false beats host true",
        {},
        {"purpose1": {"enforce_purpose": False}},
        lambda p: p.purpose_enforced(1),
        False,
    ),
    (
        "enforce_purpose: account true beats host false",
        tcf2(purpose3={"enforce_purpose": False}),
        {"purpose3": {"enforce_purpose": True}},
        lambda p: p.purpose_enforced(3),
        True,
    ),
    (
        "enforce_purpose: another purpose's account value does not leak",
        tcf2(purpose2={"enforce_purpose": False}),
        {"purpose1": {"enforce_purpose": True}},
        lambda p: p.purpose_enforced(2),
        False,
    ),
    # purposeN.enforce_vendors
    (
        "enforce_vendors: host",
        tcf2(purpose4={"enforce_vendors": False}),
        {},
        lambda p: p.purpose_enforcing_vendors(4),
        False,
    ),
    (
        "enforce_vendors: account beats host",
        tcf2(purpose4={"enforce_vendors": False}),
        {"purpose4": {"enforce_vendors": True}},
        lambda p: p.purpose_enforcing_vendors(4),
        True,
    ),
    (
        "enforce_vendors: account false",
        {},
        {"purpose10": {"enforce_vendors": False}},
        lambda p: p.purpose_enforcing_vendors(10),
        False,
    ),
    # purposeN.enforce_algo
    ("enforce_algo: built-in full", {}, {}, lambda p: p.purpose_algo(2), ALGO_FULL),
    ("enforce_algo: host basic", tcf2(purpose2={"enforce_algo": "basic"}), {}, lambda p: p.purpose_algo(2), ALGO_BASIC),
    (
        "enforce_algo: account basic beats host full",
        {},
        {"purpose2": {"enforce_algo": "basic"}},
        lambda p: p.purpose_algo(2),
        ALGO_BASIC,
    ),
    (
        "enforce_algo: account full beats host basic",
        tcf2(purpose5={"enforce_algo": "basic"}),
        {"purpose5": {"enforce_algo": "full"}},
        lambda p: p.purpose_algo(5),
        ALGO_FULL,
    ),
    (
        "enforce_algo: account empty is the host's",
        tcf2(purpose5={"enforce_algo": "basic"}),
        {"purpose5": {"enforce_algo": ""}},
        lambda p: p.purpose_algo(5),
        ALGO_BASIC,
    ),
    # purposeN.vendor_exceptions
    (
        "vendor_exceptions: host list",
        tcf2(purpose1={"vendor_exceptions": ["appnexus"]}),
        {},
        lambda p: p.purpose_vendor_exceptions(1),
        frozenset({"appnexus"}),
    ),
    (
        "vendor_exceptions: account empty list replaces the host's",
        tcf2(purpose1={"vendor_exceptions": ["appnexus"]}),
        {"purpose1": {"vendor_exceptions": []}},
        lambda p: p.purpose_vendor_exceptions(1),
        frozenset(),
    ),
    (
        "vendor_exceptions: account list replaces the host's",
        tcf2(purpose1={"vendor_exceptions": ["appnexus"]}),
        {"purpose1": {"vendor_exceptions": ["rubicon"]}},
        lambda p: p.purpose_vendor_exceptions(1),
        frozenset({"rubicon"}),
    ),
    (
        "vendor_exceptions: neither set",
        {},
        {},
        lambda p: p.purpose_vendor_exceptions(6),
        frozenset(),
    ),
    (
        "vendor_exceptions: another purpose's account list does not leak",
        tcf2(purpose2={"vendor_exceptions": ["ix"]}),
        {"purpose1": {"vendor_exceptions": ["rubicon"]}},
        lambda p: p.purpose_vendor_exceptions(2),
        frozenset({"ix"}),
    ),
    # special_feature1
    ("special_feature1.enforce: built-in", {}, {}, lambda p: p.feature_one_enforced(), True),
    (
        "special_feature1.enforce: host",
        tcf2(special_feature1={"enforce": False}),
        {},
        lambda p: p.feature_one_enforced(),
        False,
    ),
    (
        "special_feature1.enforce: account beats host",
        tcf2(special_feature1={"enforce": False}),
        {"special_feature1": {"enforce": True}},
        lambda p: p.feature_one_enforced(),
        True,
    ),
    (
        "special_feature1.vendor_exceptions: account list, vendor found",
        tcf2(special_feature1={"vendor_exceptions": ["ix"]}),
        {"special_feature1": {"vendor_exceptions": ["appnexus"]}},
        lambda p: (p.feature_one_vendor_exception("appnexus"), p.feature_one_vendor_exception("ix")),
        (True, False),
    ),
    (
        "special_feature1.vendor_exceptions: account empty list replaces the host's",
        tcf2(special_feature1={"vendor_exceptions": ["ix"]}),
        {"special_feature1": {"vendor_exceptions": []}},
        lambda p: p.feature_one_vendor_exception("ix"),
        False,
    ),
    (
        "special_feature1.vendor_exceptions: not set on the account, host list",
        tcf2(special_feature1={"vendor_exceptions": ["ix"]}),
        {},
        lambda p: (p.feature_one_vendor_exception("ix"), p.feature_one_vendor_exception("appnexus")),
        (True, False),
    ),
    # purpose_one_treatment
    (
        "purpose_one_treatment: built-in",
        {},
        {},
        lambda p: (p.purpose_one_treatment_enabled(), p.purpose_one_treatment_access_allowed()),
        (True, True),
    ),
    (
        "purpose_one_treatment: host",
        tcf2(purpose_one_treatment={"enabled": False, "access_allowed": False}),
        {},
        lambda p: (p.purpose_one_treatment_enabled(), p.purpose_one_treatment_access_allowed()),
        (False, False),
    ),
    (
        "purpose_one_treatment: account beats host",
        tcf2(purpose_one_treatment={"enabled": False, "access_allowed": True}),
        {"purpose_one_treatment": {"enabled": True, "access_allowed": False}},
        lambda p: (p.purpose_one_treatment_enabled(), p.purpose_one_treatment_access_allowed()),
        (True, False),
    ),
    # basic_enforcement_vendors (account only)
    ("basic_enforcement_vendors: none", {}, {}, lambda p: p.basic_enforcement_vendors, frozenset()),
    (
        "basic_enforcement_vendors: account list",
        {},
        {"basic_enforcement_vendors": ["appnexus", "ix"]},
        lambda p: p.basic_enforcement_vendors,
        frozenset({"appnexus", "ix"}),
    ),
    # eea_countries
    (
        "eea_countries: host's, upper case",
        {"eea_countries": ["deu", "FRA"]},
        {},
        lambda p: p.eea_countries,
        frozenset({"DEU", "FRA"}),
    ),
    (
        "eea_countries: account list beats host",
        {"eea_countries": ["DEU"]},
        {"eea_countries": ["ita"]},
        lambda p: p.eea_countries,
        frozenset({"ITA"}),
    ),
    (
        "eea_countries: account empty list beats host",
        {"eea_countries": ["DEU"]},
        {"eea_countries": []},
        lambda p: p.eea_countries,
        frozenset(),
    ),
    (
        "eea_countries: built-in list",
        {},
        {},
        lambda p: {"DEU", "GBR", "NOR"} <= p.eea_countries and "USA" not in p.eea_countries,
        True,
    ),
]


@pytest.mark.parametrize(
    ("rule", "host_raw", "account_raw", "read", "expected"), OVERRIDES, ids=[r[0] for r in OVERRIDES]
)
def test_account_overrides_host(
    rule: str, host_raw: dict[str, Any], account_raw: dict[str, Any], read: Read, expected: Any
) -> None:
    assert read(TcfPolicy.build(host(host_raw), account(account_raw))) == expected


# (rule, host tcf2.enabled, account gdpr, channel, expected)
CHANNEL_ROWS: list[tuple[str, bool, dict[str, Any], str, bool]] = [
    ("host enabled, nothing on the account", True, {}, "web", True),
    ("host disabled, nothing on the account", False, {}, "app", False),
    ("account enabled beats host disabled", False, {"enabled": True}, "web", True),
    ("account disabled beats host enabled", True, {"enabled": False}, "amp", False),
    ("channel_enabled beats account enabled", True, {"enabled": False, "channel_enabled": {"amp": True}}, "amp", True),
    ("channel_enabled false beats host", True, {"channel_enabled": {"app": False}}, "app", False),
    ("channel_enabled is per channel", True, {"channel_enabled": {"app": False}}, "web", True),
    (
        "integration_enabled beats account enabled",
        True,
        {"enabled": True, "integration_enabled": {"video": False}},
        "video",
        False,
    ),
    (
        "channel_enabled beats integration_enabled",
        True,
        {"channel_enabled": {"dooh": True}, "integration_enabled": {"dooh": False}},
        "dooh",
        True,
    ),
    (
        "integration_enabled where channel_enabled leaves the channel unset",
        True,
        {"channel_enabled": {"web": True}, "integration_enabled": {"amp": False}},
        "amp",
        False,
    ),
    ("unknown channel: account enabled", True, {"enabled": False, "channel_enabled": {"web": True}}, "ctv", False),
]


@pytest.mark.parametrize(
    ("rule", "host_enabled", "account_raw", "channel", "expected"), CHANNEL_ROWS, ids=[r[0] for r in CHANNEL_ROWS]
)
def test_channel_enabled_precedence(
    rule: str, host_enabled: bool, account_raw: dict[str, Any], channel: str, expected: bool
) -> None:
    policy = TcfPolicy.build(host(tcf2(enabled=host_enabled)), account(account_raw))
    assert policy.channel_enabled(channel) is expected


def test_every_channel_is_resolved() -> None:
    policy = TcfPolicy.build(host(), account({"channel_enabled": dict.fromkeys(CHANNELS, False)}))
    assert [policy.channel_enabled(c) for c in CHANNELS] == [False] * len(CHANNELS)


def test_policy_for_builds_once_per_config_object() -> None:
    h, a = host(), account({"purpose2": {"enforce_purpose": False}})
    first = policy_for(h, a)
    assert policy_for(h, a) is first
    assert first.purpose_enforced(2) is False
    other = account({"purpose2": {"enforce_purpose": False}})  # equal, but another object
    assert policy_for(h, other) is not first
    assert policy_for(host(), a) is not first


def test_default_policy_is_the_built_in_configuration() -> None:
    policy = default_policy()
    assert policy is default_policy()
    assert [policy.purpose_enforced(n) for n in range(1, 11)] == [True] * 10
    assert [policy.purpose_algo(n) for n in range(1, 11)] == [ALGO_FULL] * 10
    assert policy.purpose_one_treatment_enabled() and policy.purpose_one_treatment_access_allowed()
    assert policy.feature_one_enforced() and policy.channel_enabled("web")


EEA = frozenset({"DEU", "FRA"})

# (rule, request, default_value, eea countries, GDPR applies) — PBS-Go ParseGDPRDefaultValue
DEFAULT_ROWS: list[tuple[str, dict[str, Any], str, frozenset[str], bool]] = [
    ("no geo: default 0", {"user": {}}, "0", EEA, False),
    ("no geo: default 1", {}, "1", EEA, True),
    ("user geo in the EEA", {"user": {"geo": {"country": "DEU"}}}, "0", EEA, True),
    ("user geo in the EEA, lower case", {"user": {"geo": {"country": "fra"}}}, "0", EEA, True),
    ("user geo outside, three letters", {"user": {"geo": {"country": "USA"}}}, "1", EEA, False),
    ("user geo, two letters: the default", {"user": {"geo": {"country": "US"}}}, "1", EEA, True),
    ("user geo, empty EEA list", {"user": {"geo": {"country": "DEU"}}}, "0", frozenset(), False),
    ("device geo outside", {"device": {"geo": {"country": "USA"}}}, "1", EEA, False),
    ("device geo in the EEA", {"device": {"geo": {"country": "DEU"}}}, "0", EEA, True),
    (
        "user geo wins over device geo",
        {"user": {"geo": {"country": "DEU"}}, "device": {"geo": {"country": "USA"}}},
        "0",
        EEA,
        True,
    ),
    (
        "user geo without a country still wins over device geo",
        {"user": {"geo": {}}, "device": {"geo": {"country": "USA"}}},
        "1",
        EEA,
        True,
    ),
    ("geo country not a string: the default", {"device": {"geo": {"country": 276}}}, "1", EEA, True),
    ("geo not an object: ignored", {"user": {"geo": "DEU"}, "device": {"geo": {"country": "USA"}}}, "1", EEA, False),
]


@pytest.mark.parametrize(
    ("rule", "request_", "default_value", "eea", "expected"), DEFAULT_ROWS, ids=[r[0] for r in DEFAULT_ROWS]
)
def test_gdpr_default_applies(
    rule: str, request_: dict[str, Any], default_value: str, eea: frozenset[str], expected: bool
) -> None:
    assert gdpr_default_applies(request_, default_value, eea) is expected
