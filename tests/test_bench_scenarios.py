"""bench/scenarios.py: the full-feature, limit and workers scenarios, the CPU targets, the new fields."""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from bench.mocks.bidder import seat_price
from bench.run import server_argv
from bench.scenarios import (
    AMP_FULL_PATH,
    AMP_FULL_STORED_REQUEST,
    AMP_FULL_TAG,
    AMP_PATH,
    AUCTION_BIDDERS,
    AUCTION_GDPR_CONSENT,
    AUCTION_VENDOR_IDS,
    BENCH_DIR,
    CURRENCY_FILE,
    FULL_RATE_EUR,
    SCENARIOS,
    Scenario,
    SetupContext,
    currency_server,
    geo_database,
    gvl_server,
    select,
)
from bench.varied import TCF_BASE, ip
from hbserver.geo.lookup import GeoLookup
from hbserver.privacy.tcf2 import parse_tcf2

NEW = ("amp_full", "amp_limit", "auction_full", "amp_full_w2")
# Every placeholder a scenario's config may hold, with a value of the right shape.
VALUES = {
    **{f"{code}_url": f"http://127.0.0.{n}:9/{code}" for n, code in enumerate(AUCTION_BIDDERS, start=1)},
    "bidder_url": "http://127.0.0.1:9",
    "currency_url": "http://127.0.0.1:9/latest.json",
    "gvl_template": "http://127.0.0.1:9/vendor-list-v{VERSION}.json",
    "otlp_url": "http://127.0.0.1:9/v1/traces",
}
# The judged scenarios that run with the GVL fetched by version and the geo lookup on (issue 39).
REAL_TRAFFIC = ("auction_varied", "amp_varied", "amp_mixed", "amp_varied_w2", "cookie_sync_varied")


def by_name(name: str) -> Scenario:
    return select(name)[0]


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS if s.config is not None])
def test_every_scenario_config_loads_with_hbservers_loader(tmp_path, name):
    from hbserver.config import load_config

    scenario = by_name(name)
    stored = tmp_path / "stored"
    geo_db = geo_database(SetupContext(tmp_path, None))["geo_db"]
    values = {**VALUES, "workdir": str(tmp_path), "stored_dir": str(stored), "geo_db": geo_db}
    path = scenario.write_config(tmp_path, values)
    assert path is not None
    config = load_config(str(path), environ={})
    if name in REAL_TRAFFIC:
        assert config.geolocation.database == geo_db
        assert config.gdpr.vendorlist.v3.http_endpoint_template == VALUES["gvl_template"]
    if "adapters" in (scenario.config or {}):
        assert {code: config.adapters[code].gvl_vendor_id for code in AUCTION_BIDDERS} == AUCTION_VENDOR_IDS
    if name in ("amp_full", "auction_full", "amp_full_w2"):
        assert config.currency.fetch_url == VALUES["currency_url"]
        assert config.gdpr.vendorlist_file == str(BENCH_DIR / "payloads" / "gvl.json")
        assert config.price_floors.enabled and config.account_defaults.price_floors.enabled
        assert config.account_defaults.events.enabled and config.ccpa.enforce


@pytest.mark.parametrize(
    ("name", "target"),
    [("status", 1 / 1.05), ("event_varied", 1 / 1.05), ("setuid_varied", 1 / 1.3), ("cookie_sync_varied", 1 / 1.6)],
)
def test_the_varied_cheap_endpoints_are_judged_on_cpu(name, target):
    scenario = by_name(name)
    assert scenario.target_cpu_ratio == pytest.approx(target, abs=1e-4)
    assert scenario.target_ratio is None and scenario.judged


def test_fixed_request_scenarios_are_information_but_the_deadline_checks():
    """Issue 37: the same request every time always hits a memo keyed on request text."""
    for scenario in SCENARIOS:
        if scenario.varied or scenario.name == "status":
            continue
        assert scenario.judged is (scenario.p99_max_ms is not None), scenario.name


def test_gvl_lets_every_bench_bidder_through():
    from hbserver.privacy.gvl import load_gvl

    gvl = load_gvl(str(BENCH_DIR / "payloads" / "gvl.json"))
    for vendor_id in AUCTION_VENDOR_IDS.values():
        vendor = gvl.vendor(vendor_id)
        assert vendor is not None and {1, 2, 7} <= vendor.purposes and 1 in vendor.special_features


def floors_of(floors: dict) -> list[float]:
    from hbserver.floors.data import parse_floor_rules

    [group] = parse_floor_rules(floors).data.model_groups
    return list(dict(group.values).values())


def test_full_auction_payload_is_eur_with_floors_and_consent_but_no_request_rates():
    payload = json.loads((BENCH_DIR / "payloads" / "auction_full.json").read_text())
    floors = json.loads((BENCH_DIR / "payloads" / "auction_floors.json").read_text())
    prebid = payload["ext"]["prebid"]
    assert "currency" not in prebid  # the server's fetched rates convert
    assert payload["cur"] == ["EUR"]
    assert payload["regs"] == {"ext": {"gdpr": 1}} and payload["user"] == {"ext": {"consent": AUCTION_GDPR_CONSENT}}
    assert prebid["floors"] == floors["ext"]["prebid"]["floors"]
    assert prebid["targeting"]["pricegranularity"] == "medium" and prebid["cache"] == {"bids": {}}
    assert len(payload["imp"]) == 2


@pytest.mark.parametrize(
    "floors",
    [
        AMP_FULL_STORED_REQUEST["ext"]["prebid"]["floors"],
        json.loads((BENCH_DIR / "payloads" / "auction_full.json").read_text())["ext"]["prebid"]["floors"],
    ],
    ids=["amp_full", "auction_full"],
)
def test_full_floors_reject_gamma_only(floors):
    """With the server's USD->EUR rate, gamma2 bids below every floor, alpha and beta above all."""
    assert CURRENCY_FILE["conversions"]["USD"]["EUR"] == FULL_RATE_EUR
    values = floors_of(floors)
    assert (seat_price("gamma2") + 0.05) * FULL_RATE_EUR < min(values)  # + 0.05: the second imp's price
    assert min(seat_price("alpha"), seat_price("beta")) * FULL_RATE_EUR > max(values)


def test_amp_full_sends_the_consent_and_its_stored_request_is_in_eur():
    query = parse_qs(urlsplit(AMP_FULL_PATH).query, keep_blank_values=True)
    assert query["tag_id"] == [AMP_FULL_TAG]
    assert (query["gdpr_applies"], query["consent_type"]) == (["true"], ["2"])
    assert query["consent_string"] == [AUCTION_GDPR_CONSENT]
    plain = parse_qs(urlsplit(AMP_PATH).query, keep_blank_values=True)
    assert {k: v for k, v in query.items() if k not in ("tag_id", "gdpr_applies", "consent_type", "consent_string")} \
        == {k: v for k, v in plain.items() if k != "tag_id"}  # fmt: skip
    assert AMP_FULL_STORED_REQUEST["cur"] == ["EUR"]
    imp = AMP_FULL_STORED_REQUEST["imp"][0]
    assert sorted(imp["ext"]["prebid"]["bidder"]) == sorted(AUCTION_BIDDERS)


@pytest.mark.parametrize(("one", "two"), [("amp_full", "amp_full_w2"), ("amp_varied", "amp_varied_w2")])
def test_workers_scenario_is_amp_full_with_two_workers(one, two):
    single, double = by_name(one), by_name(two)
    for attribute in ("path", "config", "setup", "method", "connections"):
        assert getattr(double, attribute) == getattr(single, attribute), attribute
    within = ("amp_varied", 0.05) if one == "amp_varied" else None  # the varied one is judged
    assert (double.workers, double.cpu_within, double.target_cpu_ratio) == (2, within, None)
    argv = server_argv(double, 1234, None)
    assert argv[argv.index("--workers") + 1] == "2"
    assert server_argv(single, 1234, None)[argv.index("--workers") + 1] == "1"


def test_limit_scenario_bounds_the_amp_scenarios():
    limit = by_name("amp_limit")
    assert limit.server == "limit" and not limit.judged
    assert set(limit.limit_of) == {"amp", "amp_full", "amp_full_w2"}
    assert all(name in {s.name for s in SCENARIOS} for name in limit.limit_of)
    with pytest.raises(ValueError, match="needs a config"):
        server_argv(Scenario("x", "/x", server="limit", config={}), 1, None)


def test_new_scenarios_can_be_selected():
    assert [s.name for s in select(",".join(NEW))] == [s.name for s in SCENARIOS if s.name in NEW]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target_cpu_ratio": 0}, "target_cpu_ratio must be > 0"),
        ({"workers": 0}, "workers must be >= 1"),
        ({"workers": 2, "server": "baseline"}, "more than 1 only for hbserver"),
        ({"cpu_within": ("s", 0.05)}, "cpu_within is"),
        ({"cpu_within": ("other", 1.5)}, "cpu_within is"),
        ({"server": "limit"}, "limit server needs a config"),
        ({"limit_of": ("amp",)}, "only a limit server"),
    ],
)
def test_new_fields_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Scenario(name="s", path="/s", **kwargs)


def test_real_traffic_hooks_serve_the_consent_strings_list_and_locate_every_varied_ip(tmp_path):
    context = SetupContext(tmp_path, None)
    try:
        values = {**gvl_server(context), **geo_database(context)}
        version = parse_tcf2(TCF_BASE).vendor_list_version
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        url = values["gvl_template"].replace("{VERSION}", str(version))
        with direct.open(url, timeout=5) as response:
            assert json.loads(response.read())["vendorListVersion"] == version
        geo = GeoLookup.open(values["geo_db"])
        try:
            found = {geo.find(ip(n)).get("country") for n in (1, 2**24, 2**30, 3 * 2**30)}
        finally:
            geo.close()
        assert found == {"USA"}
    finally:
        context.close()


def test_currency_server_hook_serves_the_currency_file(tmp_path):
    context = SetupContext(tmp_path, None)
    try:
        values = currency_server(context)
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(values["currency_url"], timeout=5) as response:
            assert json.loads(response.read()) == CURRENCY_FILE
    finally:
        context.close()
