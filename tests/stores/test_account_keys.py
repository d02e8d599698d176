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
from hbserver.stores.account_aliases import normalise
from hbserver.stores.account_keys import (
    END,
    MEANINGS,
    START,
    check_account_keys,
    report_account_keys,
    settings_rows,
    settings_table,
)
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.lru import LRUCache

README = Path(__file__).resolve().parents[2] / "README.md"


def spelling(path: str, same: str) -> str:
    return f'account "1001": {path} is another spelling of {same}, which the account also sets and which wins'


def unknown(path: str, suggestion: str = "") -> str:
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    return f'account "1001": {path} is an unknown key; ignored{hint}'


# (id, account file as the store reads it (PBS-Java spellings rewritten), warnings, refused keys)
REPORTS = [
    ("applied-keys-say-nothing",
     {"events": {"enabled": False}, "gdpr": {"purpose2": {"enforce_vendors": False}, "eea_countries": ["FRA"]},
      "cookie_sync": {"default_limit": 5}, "privacy": {"ipv4": {"anon_keep_bits": 16}}}, [], []),
    ("free-form-applied-keys-are-not-walked",
     {"privacy": {"allowactivities": {"syncUser": {"anything": 1}}, "modules": [{"code": "iab.usgeneral"}]}}, [], []),
    ("wrong-type-of-applied-key-is-builds-problem", {"events": True, "gdpr": "on"}, [], []),
    ("id-naming-the-account", {"id": "1001"}, [], []),
    ("numeric-id-naming-the-account", {"id": 1001}, [], []),
    ("null-id", {"id": None}, [], []),
    ("id-naming-another-account", {"id": "1002"},
     ['account "1001": id is "1002", not the id the account is stored under; ignored'], []),
    ("pbs-value-hbserver-cannot-honour-is-refused", {"metrics": {"verbosity_level": "basic"}}, [],
     ["metrics.verbosity_level"]),
    ("pbs-value-that-changes-nothing-is-accepted", {"metrics": {"verbosity_level": "none"}}, [], []),
    ("pbs-go-privacysandbox-applied",
     {"privacy": {"privacysandbox": {"topicsdomain": "x",
                                     "cookiedeprecation": {"enabled": True, "ttl_sec": 5, "ttlsec": 6}}}}, [], []),
    ("pbs-java-nested-blocks-rewritten",
     {"auction": {"privacysandbox": {"cookiedeprecation": {"enabled": True, "ttlsec": 5}}}}, [], []),
    ("pbs-go-targeting-scalars-applied",
     {"truncate_target_attr": 20, "targeting_prefix": "pb", "bid_rounding": "up", "default_integration": "x"},
     [], []),
    ("pbs-java-auction-targeting-applied",
     {"auction": {"price_granularity": "low", "truncate_target_attr": 20, "default_integration": "x",
                  "bid_rounding": "up", "preferredmediatype": {"appnexus": "video"},
                  "targeting": {"includewinners": True, "includebidderkeys": False, "includeformat": True,
                                "preferdeals": True, "alwaysincludedeals": True, "prefix": "pb"}}}, [], []),
    ("pbs-empty-block-is-accepted", {"metrics": {}, "analytics": {"modules": {}}}, [], []),
    ("pbs-block-given-a-scalar-is-refused", {"metrics": 300}, [], ["metrics"]),
    ("pbs-java-keys-beside-applied-keys",
     {"analytics": {"auction_events": {"web": True}, "allow_client_details": True},
      "hooks": {"modules": {}, "admin": {"module_execution": {"m": False}}}}, [],
     ["analytics.allow_client_details"]),
    ("pbs-go-privacy-blocks-applied",
     {"privacy": {"dsa": {"default": "{}", "gdpr_only": True}, "privacysandbox": {"topicsdomain": "x"}}}, [], []),
    ("pbs-go-free-form-blocks-applied",
     {"hooks": {"execution_plan": {"endpoints": {"/openrtb2/auction": {}}}, "modules": {"v": {"m": {}}}},
      "preferredmediatype": {"appnexus": "video", "rubicon": "banner"}}, [], []),
    ("applied-map-of-shaped-values",
     {"alternatebiddercodes": {"enabled": True, "bidders": {"pubmatic": {"allowedbiddercodes": ["*"]}}}}, [], []),
    ("pbs-go-json-name-of-access-allowed", {"gdpr": {"purpose_one_treatment": {"accessallowed": True}}}, [], []),
    ("pbs-java-status", {"status": "inactive"}, [], []),
    ("pbs-java-auction-block",
     {"auction": {"events": {"enabled": True}, "debug-allow": True, "price-granularity": "low",
                  "price_floors": {"enabled": False}, "cache": {"enabled": False}}}, [], []),
    ("pbs-java-privacy-gdpr",
     {"privacy": {"gdpr": {"enabled": True, "channel_enabled": {"pbjs": False},
                           "purposes": {"p2": {"enforce-vendors": False, "eid": {"exceptions": ["x"]}}},
                           "special_features": {"sf1": {"enforce": False}, "sf2": {"enforce": False}}}}}, [], []),
    ("both-spellings-hbserver-s-wins",
     {"cookie_sync": {"default_limit": 5}, "cookie-sync": {"default-limit": 3}},
     [spelling("cookie-sync.default-limit", "cookie_sync.default_limit")], []),
    ("pbs-java-cookie-sync", {"cookie_sync": {"coop_sync": {"default": True}, "pri": ["a"]}}, [], []),
    ("pbs-java-analytics-metrics-vtrack",
     {"analytics": {"auction-events": {"amp": True}}, "metrics": {"verbosity_level": "basic"}, "vtrack": {"ttl": 1}},
     [], ["metrics.verbosity_level"]),
    ("typo-top-level", {"gdrp": {"enabled": True}}, [unknown("gdrp", "gdpr")], []),
    ("typo-nested", {"privacy": {"alowactivities": {}}},
     [unknown("privacy.alowactivities", "privacy.allowactivities")], []),
    ("typo-inside-pbs-block", {"price_floors": {"fetch": {"enabeld": True}}},
     [unknown("price_floors.fetch.enabeld", "price_floors.fetch.enabled")], []),
    ("typo-of-pbs-key", {"price-floors": {"enabled": True}}, [unknown("price-floors", "price_floors")], []),
    ("applied-key-at-the-wrong-level", {"allowactivities": {}, "gdpr": {"priority_groups_only": True}},
     [unknown("allowactivities", "privacy.allowactivities"),
      unknown("gdpr.priority_groups_only", "cookie_sync.priority_groups_only")], []),
    ("key-found-at-several-levels-is-not-guessed", {"enabled": True, "privacy": {"anon_keep_bits": 8}},
     [unknown("enabled"), unknown("privacy.anon_keep_bits")], []),
    ("unknown-key-nothing-close", {"colour": "blue", "gdpr": {"purpose3": {"zzz": 1}}},
     [unknown("colour"), unknown("gdpr.purpose3.zzz")], []),
    ("unknown-key-in-a-pbs-map-value", {"alternatebiddercodes": {"bidders": {"ix": {"zzz": 1}}}},
     [unknown("alternatebiddercodes.bidders.ix.zzz")], []),
]


@pytest.mark.parametrize(("raw", "warnings", "refused"), [row[1:] for row in REPORTS], ids=[row[0] for row in REPORTS])
def test_check_account_keys(raw, warnings, refused):
    data, problems = normalise(raw)
    assert problems == []
    report = check_account_keys("1001", data)
    assert report.warnings == warnings
    assert [line.partition(":")[0] for line in report.refused] == refused
    assert report_account_keys("1001", data) == warnings


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
        ({"validations": {"enabled": True, "secure_markup": False}}, []),
        ({"bidders": {"ix": {"enabled": True, "enabeld": 1}}}, [unknown("bidders.ix.enabeld", "bidders.ix.enabled")]),
    ],
    ids=["new-field-is-applied", "pbs-key-beside-new-field-with-an-empty-value", "map-of-dataclasses-is-walked"],
)
def test_applied_keys_come_from_the_dataclasses(raw, expected):
    assert report_account_keys("1001", raw, _MoreSettings) == expected


# --- account_defaults in the configuration: strict, with the same words -------------------------

@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        ({"account_defaults": {"metrics": {"verbosity_level": "basic"}}},
         "account_defaults.metrics: verbosity_level: per-account metrics: hbserver keeps none, so only "
         '`none` is accepted; got "basic"'),
        ({"account_defaults": {"analytics": {"modules": {"pubstack": {}}}}},
         "account_defaults.analytics.modules: per-account settings of PBS-Java's analytics modules: hbserver has "
         'none of them, so only `{}` is accepted; got {"pubstack":{}}'),
        ({"account_defaults": {"privacy": {"gdpr": {}}}},
         "account_defaults.privacy.gdpr: a Prebid Server spelling hbserver reads as gdpr; write that"),
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
    ("account", "outcome", "error"),
    [
        ({"metrics": {"verbosity_level": "none"}, "events": {"enabled": False}, "gdrp": {}}, "loaded", ""),
        ({"metrics": {"verbosity_level": "none"}, "events": {"enabled": "no"}, "gdrp": {}}, "malformed",
         "events.enabled"),
        ({"metrics": {"verbosity_level": "basic"}, "events": {"enabled": False}, "gdrp": {}}, "malformed",
         "metrics.verbosity_level"),
    ],
    ids=["loaded-account", "malformed-account", "refused-prebid-server-value"],
)
def test_store_warns_once_per_load(caplog, account, outcome, error):
    fetcher = CountingFetcher(json.dumps(account).encode())
    store = AccountStore(AccountSettings(), fetcher, Metrics(), cache=LRUCache(10, 60))

    async def twice() -> list[Any]:
        outcomes = []
        for _ in range(2):
            try:
                outcomes.append(await store.get("1001"))
            except AccountError as exc:
                outcomes.append(exc)
        return outcomes

    with caplog.at_level(logging.WARNING, logger="hbserver.accounts"):
        outcomes = asyncio.run(twice())
    assert fetcher.calls == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [unknown("gdrp", "gdpr")]
    if outcome == "loaded":
        assert outcomes[0].settings.events.enabled is False
    else:
        assert [exc.reason for exc in outcomes] == ["malformed", "malformed"]
        assert any(error in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
        if error == "metrics.verbosity_level":  # the answer names the key hbserver cannot honour
            assert f"sets {error}, which this server cannot honour" in outcomes[0].message


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
        ({"1001": {"metrics": {"verbosity_level": "none"}}, "1002": {"gdrp": {}}}, True, 0,
         ['account "1002": gdrp is an unknown key; ignored (did you mean gdpr?)']),
        ({"1001": {"colour": 1}, "bad": {"events": {"enabled": "no"}}}, True, 2,
         ["account 'bad' is malformed: events.enabled: must be a boolean (true/false), got str 'no'",
          'account "1001": colour is an unknown key; ignored']),
        ({"1001": {"auction": {"ranking": {"enabled": True}}}}, True, 2,
         ["account '1001' is refused: auction.ranking.enabled: `ext.prebid.rank` on bids: not in hbserver"]),
        ({"broken": "{not json"}, True, 2, ["account 'broken' is not valid JSON: "]),
        ({"bad": {"events": {"enabled": "no"}}}, False, 0, []),
    ],
    ids=["clean", "warnings-only", "malformed-account", "refused-prebid-server-value", "not-json",
         "filesystem-store-off"],
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
