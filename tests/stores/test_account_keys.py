"""Account keys: each one applied or reported (a Prebid Server setting hbserver ignores, or an unknown key)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from hbserver.config import AccountSettings, ConfigError, load_config, to_plain
from hbserver.metrics import Metrics
from hbserver.stores.account_keys import (
    END,
    MEANINGS,
    START,
    report_account_keys,
    settings_rows,
    settings_table,
)
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.lru import LRUCache

README = Path(__file__).resolve().parents[2] / "README.md"


def pbs(path: str, reads: str = "") -> str:
    note = f" (hbserver reads {reads})" if reads else ""
    return f'account "1001": {path} is a Prebid Server setting hbserver does not apply; ignored{note}'


def unknown(path: str, suggestion: str = "") -> str:
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    return f'account "1001": {path} is an unknown key; ignored{hint}'


REPORTS = [
    ("applied-keys-say-nothing",
     {"events": {"enabled": False}, "gdpr": {"purpose2": {"enforce_vendors": False}, "eea_countries": ["FRA"]},
      "cookie_sync": {"default_limit": 5}, "privacy": {"ipv4": {"anon_keep_bits": 16}}}, []),
    ("free-form-applied-keys-are-not-walked",
     {"privacy": {"allowactivities": {"syncUser": {"anything": 1}}, "modules": [{"code": "iab.usgeneral"}]}}, []),
    ("wrong-type-of-applied-key-is-builds-problem", {"events": True, "gdpr": "on"}, []),
    ("id-naming-the-account", {"id": "1001"}, []),
    ("numeric-id-naming-the-account", {"id": 1001}, []),
    ("null-id", {"id": None}, []),
    ("id-naming-another-account", {"id": "1002"},
     ['account "1001": id is "1002", not the id the account is stored under; ignored']),
    ("pbs-leaf-under-unapplied-block", {"metrics": {"verbosity_level": "basic"}},
     [pbs("metrics.verbosity_level")]),
    ("pbs-go-privacysandbox-applied",
     {"privacy": {"privacysandbox": {"topicsdomain": "x",
                                     "cookiedeprecation": {"enabled": True, "ttl_sec": 5, "ttlsec": 6}}}}, []),
    ("pbs-java-nested-blocks-report-each-leaf",
     {"auction": {"privacysandbox": {"cookiedeprecation": {"enabled": True, "ttlsec": 5}}}},
     [pbs("auction.privacysandbox.cookiedeprecation.enabled", "privacy.privacysandbox.cookiedeprecation.enabled"),
      pbs("auction.privacysandbox.cookiedeprecation.ttlsec", "privacy.privacysandbox.cookiedeprecation.ttlsec")]),
    ("pbs-go-targeting-scalars-applied",
     {"truncate_target_attr": 20, "targeting_prefix": "pb", "bid_rounding": "up", "default_integration": "x"}, []),
    ("pbs-java-auction-targeting-applied",
     {"auction": {"price_granularity": "low", "truncate_target_attr": 20, "default_integration": "x",
                  "bid_rounding": "up", "preferredmediatype": {"appnexus": "video"},
                  "targeting": {"includewinners": True, "includebidderkeys": False, "includeformat": True,
                                "preferdeals": True, "alwaysincludedeals": True, "prefix": "pb"}}}, []),
    ("pbs-empty-block-is-named", {"metrics": {}}, [pbs("metrics")]),
    ("pbs-block-given-a-scalar", {"metrics": 300}, [pbs("metrics")]),
    ("pbs-go-key-beside-applied-keys",
     {"analytics": {"auction_events": {"web": True}, "allow_client_details": True},
      "hooks": {"modules": {}, "admin": {"module_execution": {"m": True}}}},
     [pbs("analytics.allow_client_details"), pbs("hooks.admin.module_execution")]),
    ("pbs-go-privacy-blocks-applied",
     {"privacy": {"dsa": {"default": "{}", "gdpr_only": True}, "privacysandbox": {"topicsdomain": "x"}}}, []),
    ("pbs-go-free-form-blocks-applied",
     {"hooks": {"execution_plan": {"endpoints": {"/openrtb2/auction": {}}}, "modules": {"v": {"m": {}}}},
      "preferredmediatype": {"appnexus": "video", "rubicon": "banner"}}, []),
    ("pbs-java-hooks-admin-is-reported", {"hooks": {"admin": {"module_execution": {"m": True}}}},
     [pbs("hooks.admin.module_execution")]),
    ("applied-map-of-shaped-values",
     {"alternatebiddercodes": {"enabled": True, "bidders": {"pubmatic": {"allowedbiddercodes": ["*"]}}}}, []),
    ("pbs-go-json-name-of-access-allowed", {"gdpr": {"purpose_one_treatment": {"accessallowed": True}}},
     [pbs("gdpr.purpose_one_treatment.accessallowed", "gdpr.purpose_one_treatment.access_allowed")]),
    ("pbs-java-status", {"status": "inactive"}, [pbs("status", "disabled")]),
    ("pbs-java-auction-block",
     {"auction": {"events": {"enabled": True}, "debug-allow": True, "price-granularity": "low",
                  "price_floors": {"enabled": False}}},
     [pbs("auction.events.enabled", "events.enabled"), pbs("auction.debug-allow", "debug_allow"),
      pbs("auction.price-granularity"), pbs("auction.price_floors.enabled", "price_floors.enabled")]),
    ("pbs-java-privacy-gdpr",
     {"privacy": {"gdpr": {"enabled": True, "channel_enabled": {"pbjs": False},
                           "purposes": {"p2": {"enforce-vendors": False, "eid": {"exceptions": []}}},
                           "special_features": {"sf1": {"enforce": False}}}}},
     [pbs("privacy.gdpr.enabled", "gdpr.enabled"),
      pbs("privacy.gdpr.channel_enabled.pbjs", "gdpr.channel_enabled.web"),
      pbs("privacy.gdpr.purposes.p2.enforce-vendors", "gdpr.purpose2.enforce_vendors"),
      pbs("privacy.gdpr.purposes.p2.eid.exceptions"),
      pbs("privacy.gdpr.special_features.sf1.enforce", "gdpr.special_feature1.enforce")]),
    ("pbs-java-kebab-aliases", {"cookie-sync": {"default-limit": 5}, "alternate-bidder-codes": {"enabled": True}},
     [pbs("cookie-sync.default-limit", "cookie_sync.default_limit"), pbs("alternate-bidder-codes.enabled")]),
    ("pbs-java-cookie-sync", {"cookie_sync": {"coop_sync": {"default": True}, "pri": ["a"]}},
     [pbs("cookie_sync.coop_sync.default", "cookie_sync.default_coop_sync")]),
    ("pbs-java-analytics-metrics-vtrack",
     {"analytics": {"auction-events": {"amp": True}}, "metrics": {"verbosity_level": "basic"}, "vtrack": {"ttl": 1}},
     [pbs("analytics.auction-events", "analytics.auction_events"), pbs("metrics.verbosity_level")]),
    ("typo-top-level", {"gdrp": {"enabled": True}}, [unknown("gdrp", "gdpr")]),
    ("typo-nested", {"privacy": {"alowactivities": {}}},
     [unknown("privacy.alowactivities", "privacy.allowactivities")]),
    ("typo-inside-pbs-block", {"price_floors": {"fetch": {"enabeld": True}}},
     [unknown("price_floors.fetch.enabeld", "price_floors.fetch.enabled")]),
    ("typo-of-pbs-key", {"price-floors": {"enabled": True}}, [unknown("price-floors", "price_floors")]),
    ("applied-key-at-the-wrong-level", {"allowactivities": {}, "gdpr": {"priority_groups_only": True}},
     [unknown("allowactivities", "privacy.allowactivities"),
      unknown("gdpr.priority_groups_only", "cookie_sync.priority_groups_only")]),
    ("key-found-at-several-levels-is-not-guessed", {"enabled": True, "privacy": {"anon_keep_bits": 8}},
     [unknown("enabled"), unknown("privacy.anon_keep_bits")]),
    ("unknown-key-nothing-close", {"colour": "blue", "gdpr": {"purpose3": {"zzz": 1}}},
     [unknown("colour"), unknown("gdpr.purpose3.zzz")]),
    ("unknown-key-in-a-pbs-map-value", {"alternatebiddercodes": {"bidders": {"ix": {"zzz": 1}}}},
     [unknown("alternatebiddercodes.bidders.ix.zzz")]),
]


@pytest.mark.parametrize(("raw", "expected"), [row[1:] for row in REPORTS], ids=[row[0] for row in REPORTS])
def test_report_account_keys(raw, expected):
    assert report_account_keys("1001", raw) == expected


def test_every_applied_key_is_silent():
    """All of AccountSettings written out (its defaults as plain data): nothing to report."""
    assert report_account_keys("1001", to_plain(AccountSettings())) == []


@dataclass(frozen=True)
class _Floors:
    enabled: bool = False


@dataclass(frozen=True)
class _MoreSettings(AccountSettings):
    validations: _Floors = field(default_factory=_Floors)
    bidders: dict[str, _Floors] = field(default_factory=dict)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"validations": {"enabled": True}}, []),
        ({"validations": {"enabled": True, "secure_markup": "skip"}}, [pbs("validations.secure_markup")]),
        ({"bidders": {"ix": {"enabled": True, "enabeld": 1}}}, [unknown("bidders.ix.enabeld", "bidders.ix.enabled")]),
    ],
    ids=["new-field-is-applied", "pbs-key-beside-new-field", "map-of-dataclasses-is-walked"],
)
def test_applied_keys_come_from_the_dataclasses(raw, expected):
    assert report_account_keys("1001", raw, _MoreSettings) == expected


# --- account_defaults in the configuration: strict, with the same words -------------------------

@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        ({"account_defaults": {"metrics": {"verbosity_level": "basic"}}},
         "account_defaults.metrics: a Prebid Server setting hbserver does not apply; remove it"),
        ({"account_defaults": {"analytics": {"modules": {}}}},
         "account_defaults.analytics.modules: a Prebid Server setting hbserver does not apply; remove it"),
        ({"account_defaults": {"privacy": {"gdpr": {}}}},
         "account_defaults.privacy.gdpr: a Prebid Server setting hbserver does not apply; remove it "
         "(hbserver reads gdpr)"),
        ({"account_defaults": {"gdrp": {}}},
         "account_defaults.gdrp: unknown key (did you mean account_defaults.gdpr?)"),
        ({"account_defaults": {"colour": 1}}, "account_defaults.colour: unknown key"),
        ({"colour": 1}, "colour: unknown key"),
        ({"cache": {"price_floors": 1}}, "cache.price_floors: unknown key"),
    ],
    ids=["pbs-block", "pbs-key-under-applied-block", "pbs-java-with-hbserver-key", "typo", "unknown",
         "outside-account-defaults", "pbs-name-outside-account-defaults"],
)
def test_account_defaults_unknown_keys_are_named(keys, problem):
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, overrides=keys)
    assert caught.value.problems == [problem]


# --- the store logs them once per load ----------------------------------------------------------

class CountingFetcher:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.calls = 0

    async def fetch_account(self, account_id: str) -> bytes | None:
        self.calls += 1
        return self.data


@pytest.mark.parametrize(
    ("account", "applied", "refused"),
    [
        ({"metrics": {"verbosity_level": "basic"}, "events": {"enabled": False}, "gdrp": {}}, True, False),
        ({"metrics": {"verbosity_level": "basic"}, "events": {"enabled": "no"}, "gdrp": {}}, False, True),
    ],
    ids=["loaded-account", "malformed-account"],
)
def test_store_warns_once_per_load(caplog, account, applied, refused):
    fetcher = CountingFetcher(json.dumps(account).encode())
    store = AccountStore(AccountSettings(), fetcher, Metrics(), cache=LRUCache(10, 60))

    async def twice() -> list[Any]:
        outcomes = []
        for _ in range(2):
            try:
                outcomes.append(await store.get("1001"))
            except AccountError as exc:
                outcomes.append(exc.reason)
        return outcomes

    with caplog.at_level(logging.WARNING, logger="hbserver.accounts"):
        outcomes = asyncio.run(twice())
    assert fetcher.calls == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [pbs("metrics.verbosity_level"), unknown("gdrp", "gdpr")]
    if refused:
        assert outcomes == ["malformed", "malformed"]
        assert any("events.enabled" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    else:
        assert outcomes[0].settings.events.enabled is (not applied)


# --- hbserver --check-config loads the filesystem accounts ----------------------------------------

def run_check(directory: Path, *, enabled: bool = True) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/bin:/bin",
        "HBS_STORED_REQUESTS__FILESYSTEM__DIRECTORYPATH": str(directory),
        "HBS_STORED_REQUESTS__FILESYSTEM__ENABLED": "true" if enabled else "false",
    }
    return subprocess.run([sys.executable, "-m", "hbserver", "--check-config"], capture_output=True, text=True,
                          timeout=60, env=env)


@pytest.mark.parametrize(
    ("files", "enabled", "status", "stderr"),
    [
        ({"1001": {"events": {"enabled": False}}}, True, 0, []),
        ({"1001": {"metrics": {"verbosity_level": "basic"}}, "1002": {"gdrp": {}}}, True, 0,
         [pbs("metrics.verbosity_level"), 'account "1002": gdrp is an unknown key; ignored (did you mean gdpr?)']),
        ({"1001": {"metrics": {"verbosity_level": "basic"}}, "bad": {"events": {"enabled": "no"}}}, True, 2,
         ["account 'bad' is malformed: events.enabled: must be a boolean (true/false), got str 'no'",
          pbs("metrics.verbosity_level")]),
        ({"broken": "{not json"}, True, 2, ["account 'broken' is not valid JSON: "]),
        ({"bad": {"events": {"enabled": "no"}}}, False, 0, []),
    ],
    ids=["clean", "warnings-only", "malformed-account", "not-json", "filesystem-store-off"],
)
def test_check_config_loads_account_files(tmp_path, files, enabled, status, stderr):
    accounts = tmp_path / "accounts"
    accounts.mkdir()
    for account_id, content in files.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (accounts / f"{account_id}.json").write_text(text)
    done = run_check(tmp_path, enabled=enabled)
    assert done.returncode == status, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == len(stderr), lines
    assert all(line.startswith(want) for line, want in zip(lines, stderr, strict=True)), lines
    if status == 0:
        assert yaml.safe_load(done.stdout)["stored_requests"]["filesystem"]["enabled"] is enabled
    else:
        assert done.stdout == ""


# --- the README's list ------------------------------------------------------------------------------

def test_every_applied_key_has_a_meaning():
    keys = [key for key, _ in settings_rows()]
    assert [key for key in keys if not MEANINGS.get(key)] == [], "add a meaning to MEANINGS in account_keys.py"
    assert sorted(set(MEANINGS) - set(keys)) == [], "MEANINGS names keys AccountSettings no longer has"


@pytest.mark.parametrize(
    ("key", "default"),
    [
        ("disabled", "`false`"),
        ("events.enabled", "`true`"),
        ("privacy.ipv4.anon_keep_bits", "`24`"),
        ("gdpr.purpose{1-10}.enforce_algo", '`""`'),
        ("gdpr.channel_enabled.{amp,app,video,web,dooh}", "`null`"),
        ("gdpr.special_feature1.enforce", "`null`"),
    ],
    ids=["scalar", "nested", "number", "numbered-twins-are-one-row", "alike-switches-are-one-row",
         "single-numbered-field-stays"],
)
def test_settings_rows(key, default):
    assert dict(settings_rows())[key] == default


def test_every_account_settings_field_is_in_the_rows():
    covered = " ".join(key for key, _ in settings_rows())
    for fld in dataclasses.fields(AccountSettings):
        assert fld.name in covered


def test_readme_lists_the_applied_keys():
    readme = README.read_text()
    documented = readme.partition(START)[2].partition(END)[0].strip()
    assert documented == settings_table(), "run: python -m hbserver.stores.account_keys README.md"
