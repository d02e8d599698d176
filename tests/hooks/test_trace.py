"""``ext.prebid.modules`` (hbserver/hooks/trace.py, and hookpoints.with_modules that adds it to a
response): PBS-Go's hookexecution/enricher_test.go cases over its test vectors (tests/hooks/data/,
from PBS-Go's hooks/hookexecution/test/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.hookpoints import with_modules
from hbserver.hooks.api import ENDPOINT_AUCTION, Stage
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import GroupOutcome, HookOutcome, StageOutcome
from hbserver.hooks.plan import HookRef
from hbserver.hooks.runtime import RequestPlans
from hbserver.hooks.trace import modules_json, trace_level

DATA = Path(__file__).parent / "data"


def load(name: str) -> Any:
    text = (DATA / name).read_text()
    return json.loads(text) if text.strip() else None


def stage_outcomes(name: str) -> list[StageOutcome]:
    """PBS-Go's StageOutcomeTest JSON as hbserver's outcomes."""
    return [
        StageOutcome(
            Stage(stage["stage"]),
            stage["entity"],
            stage.get("execution_time_millis", 0),
            [
                GroupOutcome(
                    group.get("execution_time_millis", 0),
                    [
                        HookOutcome(
                            HookRef(hook["hook_id"]["module_code"], hook["hook_id"]["hook_impl_code"]),
                            hook["status"],
                            hook["action"],
                            hook.get("execution_time_millis", 0),
                            hook.get("message", ""),
                            hook.get("analytics_tags", {}),
                            list(hook.get("debug_messages", [])),
                            list(hook.get("errors", [])),
                            list(hook.get("warnings", [])),
                        )
                        for hook in group["invocation_results"]
                    ],
                )
                for group in stage["groups"]
            ],
        )
        for stage in load(name)
    ]


def expected_modules(name: str) -> Any:
    """The ``modules`` of an expected ext (None when the file is empty or has none)."""
    expected = load(name)
    return expected["prebid"].get("modules") if expected else None


COMPLETE = "stage-outcomes.json"
ACCOUNT_NONE = None  # PBS-Go's nil account: no debug restriction

# PBS-Go's TestGetModulesJSON: (description, outcomes file, request, account debug_allow, expected file)
GET_MODULES_JSON = [
    ("verbose trace and debug when test=1 and trace=verbose", COMPLETE,
     {"test": 1, "ext": {"prebid": {"trace": "verbose"}}}, True, "expected-verbose-debug-response.json"),
    ("verbose trace and debug when account is not defined", COMPLETE,
     {"test": 1, "ext": {"prebid": {"trace": "verbose"}}}, ACCOUNT_NONE, "expected-verbose-debug-response.json"),
    ("basic trace and debug when ext.prebid.debug=true and trace=basic", COMPLETE,
     {"ext": {"prebid": {"debug": True, "trace": "basic"}}}, True, "expected-basic-debug-response.json"),
    ("debug info when ext.prebid.debug=true", COMPLETE,
     {"ext": {"prebid": {"debug": True, "trace": ""}}}, True, "expected-debug-response.json"),
    ("empty when debug is off", COMPLETE, {}, True, "empty.json"),
    ("empty when the request is nil", COMPLETE, None, True, "empty.json"),
    ("only verbose trace when the account does not allow debug", COMPLETE,
     {"test": 1, "ext": {"prebid": {"debug": True, "trace": "verbose"}}}, False, "expected-verbose-response.json"),
    ("debug info when test=1", COMPLETE, {"test": 1}, True, "expected-pure-debug-response.json"),
    ("empty if stage outcome groups empty", "empty-stage-outcomes-v1.json", {"test": 1}, True, "empty.json"),
    ("empty if stage outcomes empty", "empty-stage-outcomes-v2.json", {"test": 1}, True, "empty.json"),
    # PBS-Go warns about the types; the values are ignored either way
    ("invalid debug and trace types ignored", COMPLETE,
     {"test": 1, "ext": {"prebid": {"debug": "active", "trace": 1}}}, True, "expected-pure-debug-response.json"),
]  # fmt: skip

# PBS-Go's TestEnrichBidResponse: (description, outcomes file, response ext, request, debug_allow, expected)
ENRICH = [
    ("verbose trace and debug", COMPLETE, {"prebid": {"foo": "bar"}},
     {"test": 1, "ext": {"prebid": {"trace": "verbose"}}}, True, "expected-verbose-debug-response.json"),
    ("basic trace and debug", COMPLETE, {"prebid": {"foo": "bar"}},
     {"ext": {"prebid": {"debug": True, "trace": "basic"}}}, True, "expected-basic-debug-response.json"),
    ("debug info", COMPLETE, {"prebid": {"foo": "bar"}},
     {"ext": {"prebid": {"debug": True, "trace": ""}}}, True, "expected-debug-response.json"),
    ("not enriched when debug is off", COMPLETE, {"prebid": {"foo": "bar"}}, {}, True,
     "expected-empty-response.json"),
    ("only verbose trace when the account does not allow debug", COMPLETE, {"prebid": {"foo": "bar"}},
     {"test": 1, "ext": {"prebid": {"debug": True, "trace": "verbose"}}}, False, "expected-verbose-response.json"),
    ("debug info when the response has no ext", COMPLETE, None, {"test": 1}, True,
     "expected-pure-debug-response.json"),
    ("not enriched if stage outcome groups empty", "empty-stage-outcomes-v1.json", None, {"test": 1}, True,
     "empty.json"),
    ("not enriched if stage outcomes empty", "empty-stage-outcomes-v2.json", None, {"test": 1}, True, "empty.json"),
]  # fmt: skip


def hooks_with(outcomes: list[StageOutcome]) -> HookExecutor:
    executor = HookExecutor(ENDPOINT_AUCTION, RequestPlans({}, (), frozenset()))
    executor.outcomes = outcomes
    return executor


@pytest.mark.parametrize(
    ("outcomes", "request_", "debug_allow", "expected"),
    [case[1:] for case in GET_MODULES_JSON],
    ids=[case[0] for case in GET_MODULES_JSON],
)
def test_get_modules_json(outcomes, request_, debug_allow, expected):
    """The modules part of the expected ext, through the response's enrichment (which computes debug)."""
    response = with_modules({"id": "r"}, hooks_with(stage_outcomes(outcomes)), request_, debug_allow is not False)
    modules = response.get("ext", {}).get("prebid", {}).get("modules")
    assert modules == expected_modules(expected)


@pytest.mark.parametrize(
    ("outcomes", "ext", "request_", "debug_allow", "expected"),
    [case[1:] for case in ENRICH],
    ids=[case[0] for case in ENRICH],
)
def test_enrich_bid_response(outcomes, ext, request_, debug_allow, expected):
    response = {"id": "r", "seatbid": []}
    if ext is not None:
        response["ext"] = ext
    before = json.dumps(response)
    enriched = with_modules(response, hooks_with(stage_outcomes(outcomes)), request_, debug_allow)
    want = load(expected)
    assert enriched.get("ext") == (want if want is not None else ext)
    assert enriched["id"] == "r" and enriched["seatbid"] == []
    assert json.dumps(response) == before  # the response given is not changed in place


@pytest.mark.parametrize(
    ("trace", "debug", "expected"),
    [
        ("verbose", True, "expected-verbose-debug-response.json"),
        ("basic", True, "expected-basic-debug-response.json"),
        ("", True, "expected-debug-response.json"),
        ("", False, "empty.json"),
        ("verbose", False, "expected-verbose-response.json"),
        ("full", True, "expected-debug-response.json"),  # an unknown level: no trace
        ("VERBOSE", False, "empty.json"),
    ],
)
def test_modules_json(trace, debug, expected):
    assert modules_json(stage_outcomes(COMPLETE), trace, debug) == expected_modules(expected)


def test_basic_trace_is_verbose_without_debug_messages():
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "debug_messages"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    verbose = expected_modules("expected-verbose-response.json")
    basic = modules_json(stage_outcomes(COMPLETE), "basic", False)
    assert basic == strip(verbose)
    assert basic != verbose


@pytest.mark.parametrize("trace", ["basic", "verbose"])
def test_zero_times_are_left_out(trace):
    """PBS-Go's ``execution_time_millis,omitempty`` at every level; empty texts are kept out of
    errors and warnings, and the stages keep the order they first ran in."""
    hook = HookOutcome(HookRef("m", "c"), "success", "no_action", 0)
    outcomes = [
        StageOutcome(Stage.BIDDER_REQUEST, "b1", 0, [GroupOutcome(0, [hook])]),
        StageOutcome(Stage.ENTRYPOINT, "http-request", 0, [GroupOutcome(0, [hook])]),
    ]
    invocation = {
        "hook_id": {"module_code": "m", "hook_impl_code": "c"},
        "status": "success",
        "action": "no_action",
        "analytics_tags": {},
        "message": "",
    }
    stage = {"outcomes": [{"entity": "b1", "groups": [{"invocation_results": [invocation]}]}]}
    assert modules_json(outcomes, trace, True) == {
        "trace": {
            "stages": [
                {"stage": "bidder_request", **stage},
                {"stage": "entrypoint", "outcomes": [{**stage["outcomes"][0], "entity": "http-request"}]},
            ]
        }
    }


def test_stage_time_is_the_longest_outcome_and_trace_time_the_sum():
    def outcome(stage: Stage, entity: str, ms: int) -> StageOutcome:
        hook = HookOutcome(HookRef("m", "c"), "success", "no_action", ms)
        return StageOutcome(stage, entity, ms, [GroupOutcome(ms, [hook])])

    outcomes = [
        outcome(Stage.BIDDER_REQUEST, "a", 5),
        outcome(Stage.BIDDER_REQUEST, "b", 9),
        outcome(Stage.RAW_BIDDER_RESPONSE, "a", 3),
        outcome(Stage.BIDDER_REQUEST, "c", 2),
    ]
    trace = modules_json(outcomes, "basic", False)["trace"]
    assert trace["execution_time_millis"] == 12
    assert [
        (s["stage"], s["execution_time_millis"], [o["entity"] for o in s["outcomes"]]) for s in trace["stages"]
    ] == [
        ("bidder_request", 9, ["a", "b", "c"]),
        ("raw_bidder_response", 3, ["a"]),
    ]


def test_errors_and_warnings_merged_per_module_and_hook():
    def outcome(module: str, code: str, errors: list[str], warnings: list[str]) -> StageOutcome:
        hook = HookOutcome(HookRef(module, code), "success", "no_action", 1, errors=errors, warnings=warnings)
        return StageOutcome(Stage.BIDDER_REQUEST, "x", 1, [GroupOutcome(1, [hook])])

    outcomes = [outcome("m", "a", ["e1"], []), outcome("m", "a", ["e2"], ["w1"]), outcome("n", "b", [], [])]
    assert modules_json(outcomes, "", True) == {"errors": {"m": {"a": ["e1", "e2"]}}, "warnings": {"m": {"a": ["w1"]}}}
    assert modules_json(outcomes, "", False) is None
    assert modules_json([], "verbose", True) is None


@pytest.mark.parametrize(
    ("request_", "level"),
    [
        ({"ext": {"prebid": {"trace": "verbose"}}}, "verbose"),
        ({"ext": {"prebid": {"trace": "basic"}}}, "basic"),
        ({"ext": {"prebid": {"trace": 1}}}, ""),
        ({"ext": {"prebid": {"trace": None}}}, ""),
        ({"ext": {"prebid": {}}}, ""),
        ({"ext": {"prebid": "x"}}, ""),
        ({"ext": []}, ""),
        ({}, ""),
        (None, ""),
        ([], ""),
    ],
)
def test_trace_level(request_, level):
    assert trace_level(request_) == level


@pytest.mark.parametrize(
    "request_",
    [
        None, [], {}, {"test": 1}, {"test": 0, "ext": {}}, {"ext": []}, {"ext": {"prebid": []}, "test": 1},
        {"ext": {"prebid": {"trace": "verbose"}}}, {"ext": {"prebid": {"trace": 7, "debug": True}}},
        {"ext": {"prebid": {"trace": "basic", "debug": 1}}, "test": 1}, {"ext": {"prebid": {"debug": "true"}}},
    ],
)  # fmt: skip
@pytest.mark.parametrize("allowed", [True, False])
def test_shown_is_trace_level_and_debug(request_: Any, allowed: bool) -> None:
    from hbserver.auction.hookpoints import _debug, _shown
    from hbserver.hooks.trace import trace_level

    expected_trace = trace_level(request_) if isinstance(request_, dict) else ""
    assert _shown(request_, allowed) == (expected_trace, allowed and _debug(request_))
