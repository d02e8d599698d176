"""Every Prebid Server account key honoured, or refused naming it (issue 42 item 1).

One row per key hbserver does not apply (hbserver/stores/account_refusals.py): a value that changes
nothing in Prebid Server either is accepted, any other refuses the account (the store's answer names
the key; ``account_defaults`` and file-store accounts stop the start, exit 2). Then the keys this
work made applied: ``auction.cache.enabled`` end to end, ``hooks.admin.module_execution`` on the
hooks plans, PBS-Go's ``accessallowed``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.appkeys import CACHE
from hbserver.config import AccountSettings, ConfigError, build, load_config
from hbserver.metrics import Metrics
from hbserver.stores.account_aliases import normalise
from hbserver.stores.account_keys import OPEN, PBS_KEYS, WILDCARD, check_account_keys
from hbserver.stores.account_refusals import RULES, rule_for
from hbserver.stores.accounts import Account, AccountError, AccountStore
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids
from tests.conftest import write_account
from tests.hooks.test_plan import DEFAULT, HOST, MODULES, refs, runtime


class _Fetcher:
    def __init__(self, account: dict[str, Any]) -> None:
        self.data = json.dumps(account).encode()

    async def fetch_account(self, account_id: str) -> bytes | None:
        return self.data


def _load(account: dict[str, Any]) -> Account | AccountError:
    store = AccountStore(AccountSettings(), _Fetcher(account), Metrics())
    try:
        return asyncio.run(store.get("1001"))
    except AccountError as exc:
        return exc


def _gdpr_p(n: int, eid: dict[str, Any]) -> dict[str, Any]:
    return {"privacy": {"gdpr": {"purposes": {f"p{n}": {"eid": eid}}}}}


# (id, account file, the key the account is refused for, or "" when it loads)
ROWS = [
    ("floors fetch accountID: PBS-Go overwrites it", {"price_floors": {"fetch": {"accountID": "other"}}}, ""),
    (
        "sf2: PBS-Java enforces sf1 only",
        {"privacy": {"gdpr": {"special_features": {"sf2": {"enforce": True, "vendor_exceptions": ["x"]}}}}},
        "",
    ),
    ("p4 eid activity_transition true: applied (gdpr.purpose4.eid)", _gdpr_p(4, {"activity_transition": True}), ""),
    ("p4 eid activity_transition false", _gdpr_p(4, {"activity_transition": False}), ""),
    (
        "p4 eid require_consent true",
        _gdpr_p(4, {"require_consent": True}),
        "privacy.gdpr.purposes.p4.eid.require_consent",
    ),
    (
        "p4 eid require-consent true (kebab)",
        _gdpr_p(4, {"require-consent": True}),
        "privacy.gdpr.purposes.p4.eid.require_consent",
    ),
    ("p4 eid require_consent false", _gdpr_p(4, {"require_consent": False, "exceptions": ["x"]}), ""),
    ("p2 eid: PBS-Java reads p4's only", _gdpr_p(2, {"require_consent": True, "activity_transition": True}), ""),
    ("auction.ranking.enabled true", {"auction": {"ranking": {"enabled": True}}}, "auction.ranking.enabled"),
    ("auction.ranking.enabled false", {"auction": {"ranking": {"enabled": False}}}, ""),
    (
        "analytics.allow_client_details true",
        {"analytics": {"allow_client_details": True}},
        "analytics.allow_client_details",
    ),
    ("analytics.allow-client-details false", {"analytics": {"allow-client-details": False}}, ""),
    ("analytics.modules set", {"analytics": {"modules": {"pubstack": {"enabled": True}}}}, "analytics.modules"),
    ("analytics.modules empty", {"analytics": {"modules": {}}}, ""),
    ("metrics.verbosity_level detailed", {"metrics": {"verbosity_level": "detailed"}}, "metrics.verbosity_level"),
    ("metrics.verbosity-level none", {"metrics": {"verbosity-level": "none"}}, ""),
    ("settings.geo_lookup", {"settings": {"geo_lookup": True}}, ""),
    ("a PBS block given a scalar", {"metrics": "basic"}, "metrics"),
]


@pytest.mark.parametrize(("account", "refused"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_pbs_keys_hbserver_does_not_apply(account, refused):
    outcome = _load(account)
    if refused:
        assert isinstance(outcome, AccountError)
        assert (outcome.status, outcome.reason) == (500, "malformed")
        assert f"sets {refused}, which this server cannot honour" in outcome.message
    else:
        assert isinstance(outcome, Account), outcome


def _leaves(tree: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for key, sub in tree.items():
        here = (*path, "appnexus" if key == WILDCARD else key)
        out.extend([here] if sub is OPEN else _leaves(sub, here))
    return out


def _nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    data: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        data = {part: data}
    return data


@pytest.mark.parametrize("value", ["zz", None], ids=["a value", "null"])
def test_every_pbs_key_is_applied_or_has_a_rule(value):
    """Each key of PBS-Go's and PBS-Java's trees, alone in an account: applied (no warning), or
    refused by a rule of its own (never by the empty-value fallback); null is always accepted."""
    for leaf in _leaves(PBS_KEYS):
        if leaf == ("id",):
            continue
        data, _problems = normalise(_nested(leaf, value))
        report = check_account_keys("1001", data)
        assert report.warnings == [], leaf
        for line in report.refused:
            assert value is not None and rule_for(line.partition(":")[0]) is not None, line


def test_every_rule_names_a_pbs_key():
    paths = {".".join(leaf).replace("-", "_") for leaf in _leaves(PBS_KEYS)}
    for rule in RULES:
        assert any(rule.matches(path) for path in paths), rule.pattern


# --- refused at start: account_defaults and the filesystem store -----------------------------------


@pytest.mark.parametrize(
    ("defaults", "problem"),
    [
        (
            {"auction": {"ranking": {"enabled": True}}},
            "account_defaults.auction.ranking: enabled: `ext.prebid.rank` on bids",
        ),
        ({"auction": {"ranking": {"enabled": False}}, "metrics": {"verbosity_level": "none"}}, ""),
        (
            {"privacy": {"gdpr": {"purposes": {"p4": {"eid": {"require_consent": True}}}}}},
            "account_defaults.privacy.gdpr: a Prebid Server spelling hbserver reads as gdpr; write that",
        ),
    ],
    ids=["refused", "values-that-change-nothing", "pbs-java-block-spelled-for-hbserver"],
)
def test_account_defaults(defaults, problem):
    if not problem:
        load_config(environ={}, overrides={"account_defaults": defaults})
        return
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, overrides={"account_defaults": defaults})
    assert len(caught.value.problems) == 1 and caught.value.problems[0].startswith(problem), caught.value.problems


def test_a_refused_file_store_account_stops_the_start(tmp_path: Path, monkeypatch, capsys):
    """``hbserver`` (no --check-config) loads the filesystem store's accounts before serving."""
    from hbserver import cli

    accounts = tmp_path / "accounts"
    accounts.mkdir()
    (accounts / "1001.json").write_text(json.dumps({"analytics": {"allow_client_details": True}}))
    (accounts / "1002.json").write_text(json.dumps({"analytics": {"allow_client_details": False}}))
    monkeypatch.setenv("HBS_STORED_REQUESTS__FILESYSTEM__DIRECTORYPATH", str(tmp_path))
    monkeypatch.setenv("HBS_STORED_REQUESTS__FILESYSTEM__ENABLED", "true")
    monkeypatch.setattr(cli, "installation_problems", list)  # other work in progress must not matter here
    monkeypatch.setattr(cli, "runtime_problems", lambda config: [])
    assert cli.main([]) == 2
    assert capsys.readouterr().err.startswith("account '1001' is refused: analytics.allow_client_details: ")


# --- keys made applied ------------------------------------------------------------------------------


def test_pbs_go_accessallowed():
    """PBS-Go AccountGDPRPurposeOneTreatment.AccessAllowed has no json tag: JSON "accessallowed"."""
    loaded = _load({"gdpr": {"purpose_one_treatment": {"enabled": True, "accessallowed": True}}})
    assert isinstance(loaded, Account)
    assert loaded.settings.gdpr.purpose_one_treatment.access_allowed is True


@pytest.mark.parametrize(
    ("execution", "auction"),
    [
        ({}, [["host1"], ["host2"], ["default"]]),
        ({"acme.two": True}, [["host1"], ["host2"], ["default"]]),
        ({"acme.two": False}, [["host1"], ["default"]]),
        ({"acme.one": False}, [["host2"]]),
        ({"acme.one": False, "acme.two": False}, None),
    ],
    ids=["none", "true-changes-nothing", "one-module-off", "module-off-in-host-and-default-plans", "all-off"],
)
def test_hooks_admin_module_execution(execution, auction):
    """PBS-Java HookStageExecutor.modulesExecutionForAccount: a module set to false runs no hook."""
    problems: list[str] = []
    settings = build(AccountSettings, {"hooks": {"admin": {"module_execution": execution}}}, "", problems, False)
    assert problems == []
    plans = runtime(MODULES, HOST, DEFAULT).account_plans("acc", settings.hooks)
    assert (None if plans is None else refs(plans)) == auction


@pytest.mark.parametrize(
    ("account", "cache", "puts", "adm"),
    [
        ({}, {"bids": {}}, 1, True),
        ({"auction": {"cache": {"enabled": True}}}, {"bids": {"returnCreative": False}}, 1, False),
        ({"auction": {"cache": {"enabled": False}}}, {"bids": {}}, 0, True),
        ({"auction": {"cache": {"enabled": False}}}, {"bids": {"returnCreative": False}}, 0, True),
    ],
    ids=["caching", "caching-without-creative", "account-caches-nothing", "creative-kept-when-nothing-cached"],
)
async def test_auction_cache_enabled(make_client, bidders, data_dir, account, cache, puts, adm):
    """PBS-Java ExchangeService.bidRequestCacheInfo: auction.cache.enabled false is noCache()."""
    write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    service = client.app[CACHE]
    put_many = service.put_many
    seen: list[Any] = []

    async def recording(items, timeout):
        seen.extend(items)
        return await put_many(items, timeout)

    service.put_many = recording
    body = auction_request(banner_imp())
    body["ext"]["prebid"]["cache"] = cache
    response = await post(client, body)
    assert response.status == 200
    [winner] = seat_bids(await response.json())["alpha"]
    assert len(seen) == puts
    assert ("adm" in winner) is adm
    assert ("hb_cache_id" in winner["ext"]["prebid"].get("targeting", {})) is bool(puts)
