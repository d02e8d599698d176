"""bench: scenarios judged by throughput ratio, by p99 latency or both; the auction scenarios."""

from __future__ import annotations

import json

import pytest

from bench.report import RunOutcome, build_report, combine_criteria, format_table, summarize, write_chart
from bench.run import server_argv
from bench.scenarios import (
    AUCTION_BIDDERS,
    AUCTION_GDPR_CONSENT,
    AUCTION_VENDOR_IDS,
    BENCH_DIR,
    HELLO,
    SCENARIOS,
    TIMEOUT_SLACK_MS,
    TIMEOUT_TMAX_MS,
    Scenario,
    SetupContext,
    mock_bidders,
    select,
    substitute,
)
from bench.wrk import SocketErrors, WrkResult

SETTINGS = {"duration_s": 8, "warmup_s": 2, "rounds": 2, "connections": 64, "scenarios": "", "threads": 1,
            "pinning": {"server_cpu": 0, "client_cpu": 1, "note": "pinned", "pinned": True}}
MACHINE = {"date": "2026-01-01T00:00:00+00:00", "cpu_model": "test CPU", "nproc": 2, "python": "3.11",
           "versions": {"aiohttp": "x", "uvloop": "y"}}


def result(rps: float, p99: float, p50: float = 1.0, non_2xx: int = 0) -> WrkResult:
    return WrkResult(
        requests_per_sec=rps,
        requests=int(rps * 8),
        duration_ms=8000.0,
        latency_avg_ms=p50,
        latency_max_ms=p99 * 1.5,
        percentiles_ms={"50": p50, "75": p50, "90": p99, "99": p99},
        non_2xx_3xx=non_2xx,
        socket_errors=SocketErrors(),
    )


def runs(*pairs: tuple[float, float]) -> list[RunOutcome]:
    return [RunOutcome(index, result(rps, p99)) for index, (rps, p99) in enumerate(pairs, start=1)]


HELLO_RUNS = {o.round: o for o in runs((10_000.0, 2.0), (10_000.0, 2.0))}


def judged(**kwargs: object) -> Scenario:
    return Scenario(name="s", path="/s", **kwargs)  # type: ignore[arg-type]


# --- Scenario fields ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p99_max_ms": 0}, "p99_max_ms must be > 0"),
        ({"p99_max_ms": -5.0}, "p99_max_ms must be > 0"),
        ({"connections": 0}, "connections must be >= 1"),
    ],
)
def test_new_fields_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        judged(**kwargs)


def test_judged_and_connections():
    assert judged().judged is False
    assert judged(target_ratio=0.5).judged is True
    assert judged(p99_max_ms=10.0).judged is True
    assert judged().wrk_connections(64) == 64
    assert judged(connections=16).wrk_connections(64) == 16


def test_existing_scenarios_are_unchanged_by_the_new_fields():
    for scenario in SCENARIOS:
        if scenario.name.startswith(("auction", "amp")):
            continue
        assert scenario.p99_max_ms is None
        assert scenario.connections is None


# --- result logic -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("checks", "expected"),
    [([], None), ([True], True), ([True, True], True), ([True, False], False), ([None, False], False),
     ([None, True], None), ([None], None)],
)
def test_combine_criteria(checks, expected):
    assert combine_criteria(checks) is expected


@pytest.mark.parametrize(
    ("kwargs", "measured", "status", "ratio_met", "p99_met"),
    [
        ({"target_ratio": 0.5}, [(6000.0, 3.0), (5000.0, 3.0)], "PASS", True, None),
        ({"target_ratio": 0.5}, [(4000.0, 3.0), (4000.0, 3.0)], "FAIL", False, None),
        ({"p99_max_ms": 220.0}, [(80.0, 210.0), (80.0, 215.0)], "PASS", None, True),
        ({"p99_max_ms": 220.0}, [(80.0, 210.0), (80.0, 240.0)], "FAIL", None, False),  # median 225
        ({"target_ratio": 0.5, "p99_max_ms": 5.0}, [(6000.0, 3.0), (6000.0, 4.0)], "PASS", True, True),
        ({"target_ratio": 0.5, "p99_max_ms": 5.0}, [(6000.0, 9.0), (6000.0, 9.0)], "FAIL", True, False),
        ({"target_ratio": 0.5, "p99_max_ms": 5.0}, [(1000.0, 3.0), (1000.0, 3.0)], "FAIL", False, True),
        ({}, [(1000.0, 300.0), (1000.0, 300.0)], "INFO", None, None),
    ],
    ids=["ratio-pass", "ratio-fail", "p99-pass", "p99-fail", "both-pass", "both-p99-fail", "both-ratio-fail",
         "info"],
)
def test_summarize_judges_ratio_latency_or_both(kwargs, measured, status, ratio_met, p99_met):
    entry = summarize(judged(**kwargs), runs(*measured), HELLO_RUNS)
    assert entry["status"] == status
    assert entry["ratio_met"] is ratio_met
    assert entry["p99_met"] is p99_met
    assert entry["target_met"] is {"PASS": True, "FAIL": False, "INFO": None}[status]
    assert entry["p99_max_ms"] == kwargs.get("p99_max_ms")


def test_per_round_p99_verdicts_only_with_a_limit():
    entry = summarize(judged(p99_max_ms=220.0), runs((80.0, 210.0), (80.0, 240.0)), HELLO_RUNS)
    assert [r["p99_met"] for r in entry["rounds"]] == [True, False]
    entry = summarize(judged(target_ratio=0.5), runs((8000.0, 3.0)), HELLO_RUNS)
    assert "p99_met" not in entry["rounds"][0]


def test_errors_override_the_latency_verdict():
    outcomes = [RunOutcome(1, result(80.0, 100.0, non_2xx=3)), RunOutcome(2, None, "server died")]
    entry = summarize(judged(p99_max_ms=220.0), outcomes, HELLO_RUNS)
    assert entry["status"] == "ERROR"
    assert entry["p99_met"] is True  # the measured figure still meets the limit


def test_latency_limit_without_results_is_not_applicable():
    entry = summarize(judged(p99_max_ms=220.0), [], HELLO_RUNS)
    assert (entry["p99_met"], entry["target_met"]) == (None, None)


def build(scenarios: list[Scenario], measured: dict[str, list[tuple[float, float]]]) -> dict:
    outcomes = {HELLO.name: list(HELLO_RUNS.values())}
    outcomes.update({name: runs(*pairs) for name, pairs in measured.items()})
    return build_report(SETTINGS, MACHINE, scenarios, outcomes)


RATIO = Scenario(name="ratio", path="/r", target_ratio=0.5)
LATENCY = Scenario(name="latency", path="/l", p99_max_ms=220.0, connections=16)
INFO = Scenario(name="info", path="/i")


def test_report_lists_both_kinds_of_target_and_misses():
    report = build([RATIO, LATENCY, INFO], {"ratio": [(6000.0, 3.0)], "latency": [(80.0, 250.0)],
                                            "info": [(1.0, 1.0)]})
    assert report["targets"] == {"ratio": 0.5}
    assert report["latency_targets"] == {"latency": 220.0}
    summary = report["summary"]
    assert summary["below_target"] == ["latency"]
    assert summary["targets_met"] is False
    assert summary["exit_status"] == 0  # a missed target is only reported
    entries = {e["name"]: e for e in report["scenarios"]}
    assert entries["latency"]["connections"] == 16
    assert entries["ratio"]["connections"] is None
    json.dumps(report)  # latest.json must be plain JSON


def test_report_targets_met_when_both_kinds_pass():
    report = build([RATIO, LATENCY], {"ratio": [(6000.0, 3.0)], "latency": [(80.0, 205.0)]})
    assert report["summary"]["targets_met"] is True
    assert report["summary"]["below_target"] == []


def test_table_shows_connections_and_p99_limit():
    report = build([RATIO, LATENCY], {"ratio": [(6000.0, 3.0)], "latency": [(80.0, 250.0)]})
    table = format_table(report)
    summary = table.split("\n\n")[0].splitlines()
    lines = {line.split()[0]: line for line in summary}
    assert "p99 max" in lines["scenario"] and "conns" in lines["scenario"]
    latency = lines["latency"].split()
    assert latency[1] == "16" and "220.0" in latency and latency[-4] == "FAIL"
    ratio = lines["ratio"].split()
    assert ratio[1] == "64" and ratio[-4] == "PASS"
    assert ratio[-2:] == ["-", "-"]  # no CPU measurement in these runs, no CPU target
    assert "p99 250.0 ms" in table  # the per-round line of the latency scenario


def measured(round_no: int, rps: float, cpu_s: float | None, steal_s: float | None = None) -> RunOutcome:
    """A run of 8 s (``rps * 8`` requests) with the server's CPU time and the machine's steal."""
    return RunOutcome(round_no, result(rps, 2.0), server_cpu_s=cpu_s, steal_s=steal_s, cpus=2)


@pytest.mark.parametrize(
    ("hello_cpu", "scenario_cpu", "per_round", "median"),
    [
        # hello: 100 µs of CPU per request in every round (round 2 lost half its time to steal:
        # half the requests, half the CPU); the scenario 400 µs -> 0.25 whatever the req/s did
        ((8.0, 4.0, 8.0), (1.6, 0.8, 1.6), [0.25, 0.25, 0.25], 0.25),
        ((8.0, 4.0, 8.0), (0.8, 0.8, 1.6), [0.5, 0.25, 0.25], 0.25),
        # a round without a CPU reading is left out of the median
        ((8.0, None, 8.0), (0.8, 0.8, 1.6), [0.5, None, 0.25], 0.375),
        ((None, None, None), (1.6, 1.6, 1.6), [None, None, None], None),
    ],
)
def test_cpu_ratio_per_round_and_median(hello_cpu, scenario_cpu, per_round, median):
    hello_rps = (10_000.0, 5_000.0, 10_000.0)
    scenario_rps = (500.0, 250.0, 500.0)
    hello = {n: measured(n, *pair) for n, pair in enumerate(zip(hello_rps, hello_cpu, strict=True), start=1)}
    outcomes = [measured(n, *pair) for n, pair in enumerate(zip(scenario_rps, scenario_cpu, strict=True), start=1)]
    entry = summarize(RATIO, outcomes, hello)
    assert [run.get("cpu_ratio") for run in entry["rounds"]] == per_round
    assert entry["cpu_ratio"] == median
    assert entry["ratio_met"] is (entry["ratio"] >= RATIO.target_ratio)  # still judged on req/s


def test_run_records_cpu_per_request_and_steal_share():
    run = measured(1, 1000.0, 2.0, steal_s=1.6)  # 8 000 requests, 8 s on 2 CPUs
    data = run.to_dict()
    assert data["server_cpu_us_per_request"] == pytest.approx(250.0)
    assert data["steal_percent"] == pytest.approx(10.0)
    assert measured(1, 1000.0, None).to_dict()["server_cpu_us_per_request"] is None
    assert RunOutcome(1, None, "died", server_cpu_s=1.0).to_dict()["server_cpu_us_per_request"] is None


def test_table_shows_cpu_ratio_and_steal():
    report = build_report(
        {"connections": 64}, {}, [RATIO],
        {HELLO.name: [measured(1, 10_000.0, 8.0, 3.2)], "ratio": [measured(1, 500.0, 1.6, 0.8)]},
    )
    table = format_table(report)
    summary = {line.split()[0]: line.split() for line in table.split("\n\n")[0].splitlines()}
    assert summary["ratio"][-2] == "0.25" and summary[HELLO.name][-2] == "1.00"
    assert "(0.05) cpu 0.25 steal 5%" in table
    assert "steal 20%" in table  # hello-world's round


def test_chart_draws_latency_limits(tmp_path):
    pytest.importorskip("matplotlib")
    report = build([RATIO, LATENCY, INFO], {"ratio": [(6000.0, 3.0)], "latency": [(80.0, 205.0)],
                                            "info": [(1.0, 1.0)]})
    path = tmp_path / "chart.png"
    write_chart(report, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the auction scenarios ----------------------------------------------------------------


def by_name(name: str) -> Scenario:
    return select(name)[0]


def load_payload(scenario: Scenario) -> dict:
    assert scenario.body_file is not None
    return json.loads((BENCH_DIR / scenario.body_file).read_text())


@pytest.mark.parametrize("name", ["auction", "auction_gdpr", "auction_timeout", "auction_floors"])
def test_auction_payload_is_prebid_shaped(name):
    scenario = by_name(name)
    payload = load_payload(scenario)
    assert 1 <= len(payload["imp"]) <= 3
    for imp in payload["imp"]:
        assert imp["banner"]["format"]
        assert sorted(imp["ext"]["prebid"]["bidder"]) == sorted(AUCTION_BIDDERS)
    assert payload["site"]["page"] and payload["device"]["ua"]
    prebid = payload["ext"]["prebid"]
    assert prebid["targeting"] == {"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True}
    assert prebid["cache"] == {"bids": {}}
    assert scenario.method == "POST" and scenario.path == "/openrtb2/auction"


def test_auction_config_points_generic_aliases_at_the_mock():
    scenario = by_name("auction")
    values = {f"{code}_url": f"http://127.0.0.{n}:9/{code}" for n, code in enumerate(AUCTION_BIDDERS, start=1)}
    config = substitute(dict(scenario.config or {}), values)
    assert config["adapters"] == {
        "alpha": {"alias_of": "generic", "endpoint": "http://127.0.0.1:9/alpha", "gvl_vendor_id": 32},
        "beta": {"alias_of": "generic", "endpoint": "http://127.0.0.2:9/beta", "gvl_vendor_id": 52},
        "gamma2": {"alias_of": "generic", "endpoint": "http://127.0.0.3:9/gamma2", "gvl_vendor_id": 76},
    }
    assert not scenario.judged  # a fixed request: information (issue 37)


def test_gdpr_auction_is_the_auction_with_a_consent_string_for_every_bidder():
    from hbserver.privacy.tcf2 import parse_tcf2
    from tests.privacy.tcf_encoder import CoreSegment

    plain, gdpr = by_name("auction"), by_name("auction_gdpr")
    for attribute in ("config", "target_ratio", "method", "path", "content_type"):
        assert getattr(gdpr, attribute) == getattr(plain, attribute), attribute
    payload, reference = load_payload(gdpr), load_payload(plain)
    # Prebid.js's consentManagementTcf puts the signal and the string in the OpenRTB 2.5 ext places.
    assert payload.pop("regs") == {"ext": {"gdpr": 1}}
    assert payload.pop("user") == {"ext": {"consent": AUCTION_GDPR_CONSENT}}
    assert payload.pop("id") != reference.pop("id")
    assert payload == reference
    # The literal is what its comment says it was built from, and consents to everything the bidders need.
    built = CoreSegment(purposes=list(range(1, 11)), special_features=[1, 2], vendors=[32, 52, 76]).encode()
    assert AUCTION_GDPR_CONSENT == built
    consent = parse_tcf2(AUCTION_GDPR_CONSENT)
    assert all(consent.purpose_consent(p) for p in range(1, 11))
    assert consent.special_feature_optin(1)
    assert sorted(AUCTION_VENDOR_IDS) == sorted(AUCTION_BIDDERS)
    assert all(consent.vendor_consent(vendor) for vendor in AUCTION_VENDOR_IDS.values())


def test_floors_auction_is_the_auction_in_eur_with_floors_that_reject_gamma():
    """auction_floors: the auction with cur EUR, the request's rates and ext.prebid.floors; the mock's
    seat prices (bench/mocks/bidder.py) put gamma2 below every floor and alpha and beta above."""
    from bench.mocks.bidder import seat_price
    from hbserver.floors.data import parse_floor_rules

    plain, floors = by_name("auction"), by_name("auction_floors")
    for attribute in ("config", "target_ratio", "method", "path", "content_type"):
        assert getattr(floors, attribute) == getattr(plain, attribute), attribute
    payload, reference = load_payload(floors), load_payload(plain)
    prebid = payload["ext"]["prebid"]
    rate = prebid.pop("currency")["rates"]["USD"]["EUR"]
    rules = parse_floor_rules(prebid.pop("floors"))
    assert payload.pop("cur") == ["EUR"] and payload.pop("id") != reference.pop("id")
    assert payload == reference
    [group] = rules.data.model_groups
    floor_values = list(dict(group.values).values())  # every rule (two formats per imp: size "*")
    assert seat_price("gamma2") * rate + 0.05 < min(floor_values)
    assert min(seat_price("alpha"), seat_price("beta")) * rate > max(floor_values)


def test_timeout_scenario_is_judged_on_tmax():
    scenario = by_name("auction_timeout")
    assert load_payload(scenario)["tmax"] == TIMEOUT_TMAX_MS
    assert scenario.p99_max_ms == TIMEOUT_TMAX_MS + TIMEOUT_SLACK_MS
    assert scenario.target_ratio is None
    assert scenario.connections is not None and scenario.connections <= 32


def test_auction_scenarios_write_a_valid_hbserver_config(tmp_path):
    from hbserver.config import load_config

    for name in ("auction", "auction_gdpr", "auction_timeout", "auction_floors"):
        values = {f"{code}_url": f"http://127.0.0.1:9/{code}" for code in AUCTION_BIDDERS}
        path = by_name(name).write_config(tmp_path, values)
        assert path is not None
        config = load_config(str(path), environ={})
        assert set(config.adapters) == set(AUCTION_BIDDERS)
        assert {code: config.adapters[code].gvl_vendor_id for code in AUCTION_BIDDERS} == AUCTION_VENDOR_IDS
        assert server_argv(by_name(name), 1234, path)[-2:] == ["--config", str(path)]


def test_mock_bidders_hook_starts_the_mock_with_its_options(tmp_path):
    started: list[tuple[str, list[str], str | None]] = []

    class Recorder(SetupContext):
        def start(self, name, argv, *, ready_url=None, env=None, pin=True):  # type: ignore[override]
            started.append((name, list(argv), ready_url))

    values = mock_bidders("--hang", "gamma2", seats=("alpha", "beta"))(Recorder(tmp_path, None))
    ((name, argv, ready_url),) = started
    assert name == "mock-bidder"
    port = argv[2]
    assert argv[1] == str(BENCH_DIR / "mocks" / "bidder.py")
    assert argv[3:] == ["--hang", "gamma2", "--host", "127.0.0.1", "--host", "127.0.0.2"]
    assert ready_url == f"http://127.0.0.1:{port}/ready"
    assert values == {
        "bidder_url": f"http://127.0.0.1:{port}",
        "alpha_url": f"http://127.0.0.1:{port}/alpha",
        "beta_url": f"http://127.0.0.2:{port}/beta",
    }
    started.clear()
    assert mock_bidders()(Recorder(tmp_path, None)) == {"bidder_url": f"http://127.0.0.1:{started[0][1][2]}"}
    assert started[0][1][3:] == ["--host", "127.0.0.1"]


def test_process_cpu_and_steal_readings():
    import os
    import time

    from bench.machine import process_cpu_seconds, steal_seconds

    before = process_cpu_seconds(os.getpid())
    end = time.process_time() + 0.15
    while time.process_time() < end:  # burn CPU in this process
        pass
    after = process_cpu_seconds(os.getpid())
    assert before is not None and after is not None and after - before >= 0.1
    steal = steal_seconds()
    assert steal is not None and steal >= 0
    assert process_cpu_seconds(2**22 + 12345) is None  # no such process


# --- CPU-ratio targets, cpu_within, ceilings ----------------------------------------------------


HELLO_CPU = {n: measured(n, 10_000.0, 8.0) for n in (1, 2, 3)}  # 100 µs of CPU per request


def cpu_runs(*cpu_s: float | None, rps: float = 500.0) -> list[RunOutcome]:
    """Rounds of 8 s at ``rps``: 4 000 requests, so 0.4 s of CPU is 100 µs/request (ratio 1.0)."""
    return [measured(n, rps, cpu) for n, cpu in enumerate(cpu_s, start=1)]


@pytest.mark.parametrize(
    ("kwargs", "cpu_s", "status", "cpu_ratio_met"),
    [
        ({"target_cpu_ratio": 0.18}, (2.0, 2.0, 2.0), "PASS", True),  # 500 µs: 0.20
        ({"target_cpu_ratio": 0.18}, (2.5, 2.0, 2.5), "FAIL", False),  # median 0.16
        ({"target_cpu_ratio": 0.18}, (2.5, 1.0, 2.0), "PASS", True),  # median of 0.16, 0.4, 0.2
        ({"target_cpu_ratio": 0.18}, (None, None, None), "N/A", None),  # no CPU readings
        ({"target_cpu_ratio": 0.18, "target_ratio": 0.5}, (2.0, 2.0, 2.0), "FAIL", True),  # req/s 0.05
        ({"target_cpu_ratio": 0.18, "p99_max_ms": 5.0}, (2.0, 2.0, 2.0), "PASS", True),
        ({"target_cpu_ratio": 0.18, "p99_max_ms": 1.0}, (2.0, 2.0, 2.0), "FAIL", True),  # p99 2.0
    ],
    ids=["pass", "fail", "median", "no-cpu", "with-req-s-fail", "with-p99-pass", "with-p99-fail"],
)
def test_cpu_target_is_judged_on_the_median_cpu_ratio(kwargs, cpu_s, status, cpu_ratio_met):
    entry = summarize(judged(**kwargs), cpu_runs(*cpu_s), HELLO_CPU)
    assert entry["status"] == status
    assert entry["cpu_ratio_met"] is cpu_ratio_met
    assert entry["target_cpu_ratio"] == 0.18


W1 = Scenario(name="w1", path="/a", target_cpu_ratio=0.1)
W2 = Scenario(name="w2", path="/a", workers=2, cpu_within=("w1", 0.05))


@pytest.mark.parametrize(
    ("w1_cpu", "w2_cpu", "met", "status"),
    [
        ((2.0, 2.0, 2.0), (2.0, 2.1, 2.0), True, "PASS"),  # same median
        ((2.0, 2.0, 2.0), (2.09, 2.3, 2.05), True, "PASS"),  # median 2.09: +4.5 %
        ((2.0, 2.0, 2.0), (2.22, 2.22, 2.22), False, "FAIL"),  # +11 %
        ((2.0, 2.0, 2.0), (1.8, 1.8, 1.8), False, "FAIL"),  # -10 %: "within" goes both ways
        ((None, None, None), (2.0, 2.0, 2.0), None, "N/A"),  # no reference reading
    ],
    ids=["equal", "just-within", "above", "below", "no-reference"],
)
def test_cpu_within_compares_median_cpu_per_request(w1_cpu, w2_cpu, met, status):
    report = build_report(SETTINGS, MACHINE, [W1, W2],
                          {HELLO.name: list(HELLO_CPU.values()), "w1": cpu_runs(*w1_cpu), "w2": cpu_runs(*w2_cpu)})
    entries = {e["name"]: e for e in report["scenarios"]}
    w2 = entries["w2"]
    assert w2["cpu_within_met"] is met and w2["status"] == status
    assert w2["cpu_within"] == ["w1", 0.05] and w2["workers"] == 2
    assert report["cpu_within"] == {"w2": ["w1", 0.05]} and report["cpu_targets"] == {"w1": 0.1}
    line = next(line for line in format_table(report).splitlines() if line.startswith("w2 server CPU"))
    assert "vs w1" in line and "within ±5 %" in line
    assert {True: ": met)", False: "NOT MET", None: "not judged"}[met] in line
    json.dumps(report)


def test_cpu_within_without_the_named_scenario_in_the_run_is_not_judged():
    report = build_report(SETTINGS, MACHINE, [W2], {HELLO.name: list(HELLO_CPU.values()), "w2": cpu_runs(2.0)})
    (entry,) = [e for e in report["scenarios"] if e["name"] == "w2"]
    assert (entry["cpu_within_met"], entry["status"]) == (None, "N/A")


LIMIT = Scenario(name="limit", path="/a", server="limit", config={}, limit_of=("amp", "amp_full", "absent"))
AMP = Scenario(name="amp", path="/a", target_ratio=0.08)
AMP_FULL = Scenario(name="amp_full", path="/a", target_cpu_ratio=0.18)


def test_ceiling_is_given_to_the_bounded_scenarios_and_printed():
    report = build_report(
        SETTINGS, MACHINE, [AMP, AMP_FULL, LIMIT],
        {HELLO.name: list(HELLO_CPU.values()), "amp": cpu_runs(3.2, 3.2, 3.2), "amp_full": cpu_runs(4.0, 4.0, 4.0),
         "limit": cpu_runs(1.25, 1.25, 1.25)},
    )  # fmt: skip
    entries = {e["name"]: e for e in report["scenarios"]}
    assert entries["limit"]["cpu_ratio"] == 0.32 and entries["limit"]["status"] == "INFO"
    assert entries["amp"]["ceiling"] == {"scenario": "limit", "cpu_ratio": 0.32, "share": 0.3906}
    assert entries["amp_full"]["ceiling"] == {"scenario": "limit", "cpu_ratio": 0.32, "share": 0.3125}
    assert "ceiling" not in entries["limit"]
    table = format_table(report)
    assert "amp cpu 0.12 of a ceiling 0.32 (limit): 39 %" in table
    assert "amp_full cpu 0.10 of a ceiling 0.32 (limit): 31 %" in table
    summary = {line.split()[0]: line.split() for line in table.split("\n\n")[0].splitlines()}
    assert summary["amp_full"][-2:] == ["0.10", "0.18"] and summary["amp_full"][-4] == "FAIL"  # cpu, cpu min
    assert summary["amp"][-1] == "-"


def test_no_ceiling_lines_without_a_limit_scenario():
    report = build_report(SETTINGS, MACHINE, [AMP], {HELLO.name: list(HELLO_CPU.values()), "amp": cpu_runs(3.2)})
    assert "ceiling" not in format_table(report)


def test_chart_labels_cpu_targets(tmp_path):
    pytest.importorskip("matplotlib")
    report = build_report(
        SETTINGS, MACHINE, [AMP_FULL, W1, W2, LIMIT],
        {HELLO.name: list(HELLO_CPU.values()), "amp_full": cpu_runs(2.0), "w1": cpu_runs(2.0), "w2": cpu_runs(2.0),
         "limit": cpu_runs(1.0)},
    )  # fmt: skip
    path = tmp_path / "chart.png"
    write_chart(report, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_process_cpu_counts_forked_children(tmp_path):
    """A supervisor that only waits while its forked worker burns CPU: the worker's time is counted."""
    import subprocess
    import sys
    import time

    from bench.machine import process_cpu_seconds

    script = (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    end = time.process_time() + 0.4\n"
        "    while time.process_time() < end: pass\n"
        "    sys.stdout.write('done\\n'); sys.stdout.flush(); time.sleep(30); os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    try:
        started = process_cpu_seconds(parent.pid)
        assert parent.stdout is not None and parent.stdout.readline() == b"done\n"
        time.sleep(0.05)
        total = process_cpu_seconds(parent.pid)
        assert started is not None and total is not None
        assert total - started >= 0.3  # the child's burn; the parent itself only waited
    finally:
        import os
        import signal

        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
