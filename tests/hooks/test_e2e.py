"""The hooks framework end to end: the real application, a mock bidder over a real socket, and the
example module (tests/hooks/example_module.py) at every stage (issue 41: PBS-Go's hooks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hbserver.modules
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids
from tests.conftest import write_account

STAGES = ["entrypoint", "raw_auction_request", "processed_auction_request", "bidder_request",
          "raw_bidder_response", "all_processed_bid_responses", "auction_response", "exitpoint"]  # fmt: skip


@pytest.fixture(autouse=True)
def example_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hbserver.modules.BUILDERS, "test.example", "tests.hooks.example_module:build")


def plan(stages: list[str], endpoint: str = "/openrtb2/auction", timeout: int = 200, **extra: Any) -> dict[str, Any]:
    group = {"timeout": timeout, "hook_sequence": [{"module_code": "test.example", "hook_impl_code": "ex"}]}
    return {"endpoints": {endpoint: {"stages": {s: {"groups": [group]} for s in stages}}}, **extra}


def hooks_config(host_stages: list[str], default_stages: list[str] | None = None, **module: Any) -> dict[str, Any]:
    section: dict[str, Any] = {
        "enabled": True,
        "modules": {"test": {"example": {"enabled": True, **module}}},
        "host_execution_plan": plan(host_stages),
    }
    if default_stages is not None:
        section["default_account_execution_plan"] = plan(default_stages)
    return {"hooks": section}


def trace_request(**ext: Any) -> dict[str, Any]:
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}))
    body["ext"] = {"prebid": {"trace": "verbose", "debug": True}, **ext}
    return body


def invocations(response: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(stage, entity, status, action) of every hook in the trace, in order."""
    stages = response["ext"]["prebid"]["modules"]["trace"]["stages"]
    return [
        (stage["stage"], outcome["entity"], result["status"], result["action"])
        for stage in stages
        for outcome in stage["outcomes"]
        for group in outcome["groups"]
        for result in group["invocation_results"]
    ]


async def test_every_stage_runs_in_order_and_changes_what_it_says(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1"), bid("imp-1", 0.2, "cheap")]
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1")]
    config = {**bidder_config(bidders, "alpha", "beta"), **hooks_config(STAGES, reject_bidder="beta")}
    client = await make_client(config)
    response = await post(client, trace_request())
    assert response.status == 200, await response.text()
    assert response.headers["X-Example"] == "exitpoint"  # exitpoint's header
    answer = await response.json()
    assert [stage["stage"] for stage in answer["ext"]["prebid"]["modules"]["trace"]["stages"]] == STAGES[:-1]
    assert answer["ext"]["example"] == "was here"  # auction_response's mutation
    assert "beta" not in bidders.received  # rejected at bidder_request: never called
    assert {"code": 11, "message": "Module test.example (hook: ex) rejected request with code 301 at "
            "bidder_request stage"} in answer["ext"]["warnings"]["beta"]  # fmt: skip
    sent = bidders.received["alpha"][0]
    assert sent["badv"] == ["blocked.example"] and sent["site"]["keywords"] == "from-module"
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["a1", "cheap"]  # no account min_price
    entities = {(stage, entity) for stage, entity, _, _ in invocations(answer)}
    assert ("bidder_request", "beta") in entities and ("raw_bidder_response", "alpha") in entities
    modules = answer["ext"]["prebid"]["modules"]
    assert modules["errors"] == {"test.example": {"ex": ["an error for debug", "Module test.example (hook: ex) "
                                 "rejected request with code 301 at bidder_request stage"]}}  # fmt: skip
    assert modules["warnings"] == {"test.example": {"ex": ["a warning for debug"]}}


@pytest.mark.parametrize(
    ("trace", "debug", "shows_trace", "shows_debug_messages", "shows_errors"),
    [
        ("verbose", True, True, True, True),
        ("basic", True, True, False, True),  # PBS-Go: basic leaves out debug messages
        ("", True, False, False, True),  # no trace: errors and warnings only, in debug
        ("verbose", False, True, True, False),  # errors and warnings need debug
        ("unknown", False, False, False, False),  # nothing to show: no ext.prebid.modules
    ],
)
async def test_trace_levels_and_debug(make_client, bidders, trace, debug, shows_trace, shows_debug_messages,
                                      shows_errors):  # fmt: skip
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config(STAGES)})
    body = auction_request()
    body["ext"] = {"prebid": {"trace": trace, "debug": debug}}
    answer = await (await post(client, body)).json()
    modules = answer.get("ext", {}).get("prebid", {}).get("modules")
    assert (modules is not None and "trace" in modules) is shows_trace
    assert (modules is not None and "errors" in modules) is shows_errors
    text = json.dumps(modules)
    assert ("debug_messages" in text) is shows_debug_messages


@pytest.mark.parametrize(
    ("behaviour", "status", "error"),
    [
        ("raise", "execution_failure", "hook execution failed: RuntimeError: boom"),
        ("fail", "failure", "hook execution failed: expected trouble"),
        ("garbage", "execution_failure", "hook returned dict, not a HookResult"),
    ],
)
async def test_a_broken_hook_never_fails_the_auction(make_client, bidders, behaviour, status, error):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config(["raw_auction_request"])})
    body = trace_request(example=behaviour)
    response = await post(client, body)
    assert response.status == 200
    answer = await response.json()
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["a1"]
    assert invocations(answer) == [("raw_auction_request", "auction-request", status, "")]
    assert error in answer["ext"]["prebid"]["modules"]["errors"]["test.example"]["ex"]


async def test_a_slow_hook_times_out_and_the_stage_goes_on(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    config = {**bidder_config(bidders, "alpha"), **hooks_config([])}
    config["hooks"]["host_execution_plan"] = plan(["processed_auction_request"], timeout=50)
    client = await make_client(config)
    answer = await (await post(client, trace_request(example="slow"))).json()
    assert invocations(answer) == [("processed_auction_request", "auction-request", "timeout", "")]
    assert "keywords" not in bidders.received["alpha"][0]["site"]  # its mutation dropped
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["a1"]


@pytest.mark.parametrize(
    ("stages", "headers", "body_ext", "nbr"),
    [
        (["entrypoint"], {"X-Example-Reject": "1"}, {}, 123),
        (["raw_auction_request"], {}, {"example": "reject"}, 7),
    ],
)
async def test_a_rejected_request_is_answered_with_its_no_bid_reason(make_client, bidders, stages, headers,
                                                                     body_ext, nbr):  # fmt: skip
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config([*stages, "exitpoint"])})
    response = await post(client, trace_request(**body_ext), headers=headers)
    assert response.status == 200
    answer = await response.json()
    assert answer["id"] == "req-1" and answer["nbr"] == nbr and "seatbid" not in answer
    assert bidders.received == {}
    assert response.headers["X-Example"] == "exitpoint"


async def test_account_plan_replaces_the_default_and_runs_after_the_host(make_client, bidders, data_dir: Path):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1"), bid("imp-1", 0.5, "low")]
    config = {**bidder_config(bidders, "alpha"), **hooks_config(["processed_auction_request"], ["exitpoint"])}
    write_account(data_dir, "1001", {"hooks": {"execution_plan": plan(["raw_bidder_response"]),
                                               "modules": {"test": {"example": {"min_price": 1.0}}}}})  # fmt: skip
    client = await make_client(config)
    response = await post(client, trace_request())
    answer = await response.json()
    stages = [stage for stage, _, _, _ in invocations(answer)]
    assert stages == ["processed_auction_request", "raw_bidder_response"]  # no default exitpoint
    assert "X-Example" not in response.headers
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["a1"]  # the account's min_price


async def test_the_default_account_plan_runs_for_an_account_without_one(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config([], ["exitpoint"])})
    response = await post(client, trace_request())
    assert response.headers["X-Example"] == "exitpoint"


@pytest.mark.parametrize(("percent", "action"), [(0, "no_invocation"), (100, "update")])
async def test_ab_test_runs_the_module_for_its_share(make_client, bidders, percent, action):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    config = {**bidder_config(bidders, "alpha"), **hooks_config([])}
    abtests = [{"enabled": True, "module-code": "test.example", "percent-active": percent}]
    config["hooks"]["host_execution_plan"] = plan(["processed_auction_request"], abtests=abtests)
    client = await make_client(config)
    answer = await (await post(client, trace_request())).json()
    result = answer["ext"]["prebid"]["modules"]["trace"]["stages"][0]["outcomes"][0]["groups"][0][
        "invocation_results"][0]  # fmt: skip
    assert result["action"] == action
    tag = {"skipped" if percent == 0 else "run"}
    assert {r["status"] for a in result["analytics_tags"]["activities"] if a["name"] == "core-module-abtests"
            for r in a["results"]} == tag  # fmt: skip


async def test_amp_runs_its_stages_and_shows_the_modules(make_client, bidders, data_dir: Path):
    bidders.bids["alpha"] = [bid("slot-1", 2.0)]
    store(data_dir, "101", amp_stored("alpha", ext={"prebid": {"trace": "verbose"}}))
    config = {**bidder_config(bidders, "alpha"), **hooks_config([])}
    stages = ["entrypoint", "processed_auction_request", "bidder_request", "exitpoint"]
    config["hooks"]["host_execution_plan"] = plan(stages, endpoint="/openrtb2/amp")
    client = await make_client(config)
    for _ in range(3):  # the second visit prepares the request: hooks still run on the full path
        response = await client.get("/openrtb2/amp?tag_id=101")
        assert response.status == 200
        assert response.headers["X-Example"] == "exitpoint"
        answer = await response.json()
        assert "hb_pb" in answer["targeting"]
        shown = [stage["stage"] for stage in answer["ext"]["prebid"]["modules"]["trace"]["stages"]]
        assert shown == stages[:-1]
    assert all(sent["badv"] == ["blocked.example"] for sent in bidders.received["alpha"])


async def test_amp_entrypoint_reject_answers_no_targeting(make_client, bidders, data_dir: Path):
    store(data_dir, "101", amp_stored("alpha"))
    config = {**bidder_config(bidders, "alpha"), **hooks_config([])}
    config["hooks"]["host_execution_plan"] = plan(["entrypoint"], endpoint="/openrtb2/amp")
    client = await make_client(config)
    response = await client.get("/openrtb2/amp?tag_id=101", headers={"X-Example-Reject": "1"})
    assert response.status == 200
    assert (await response.json())["targeting"] == {}
    assert bidders.received == {}


async def test_module_calls_are_counted(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config(["bidder_request"])})
    await post(client, trace_request())
    metrics = await (await client.get("/metrics")).text()
    assert ('hbserver_module_calls{module="test.example",outcome="success_updated",stage="bidder_request"} 1.0'
            in metrics)  # fmt: skip


async def test_no_hooks_configured_means_no_modules_in_the_answer(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    answer = await (await post(client, trace_request())).json()
    assert "modules" not in answer.get("ext", {}).get("prebid", {})


@pytest.mark.parametrize(
    ("hooks", "problem"),
    [
        ({"enabled": True, "modules": {"nobody": {"nothing": {"enabled": True}}}},
         "hooks.modules: unknown module 'nobody.nothing'"),
        ({"enabled": True, "modules": {"test": {"example": {"enabled": True, "reject_bidder": 5}}}},
         "hooks.modules.test.example: reject_bidder: must be a string"),
        ({"enabled": True, "host_execution_plan": {"endpoints": {"/openrtb2/auction": {"stages": {"nope": {}}}}}},
         "hooks.host_execution_plan.endpoints./openrtb2/auction.stages.nope: unknown stage"),
        ({"enabled": True, "host_execution_plan": "{not json"}, "hooks.host_execution_plan: not valid JSON"),
    ],
)
def test_bad_hooks_configuration_stops_start_up(hooks, problem):
    from hbserver.config import ConfigError
    from tests.conftest import make_config

    with pytest.raises(ConfigError) as caught:
        make_config({"hooks": hooks})
    assert problem in str(caught.value)


async def test_a_bad_account_plan_is_a_malformed_account(make_client, bidders, data_dir: Path):
    write_account(data_dir, "1001", {"hooks": {"execution_plan": {"endpoints": {"/nowhere": {}}}}})
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config([])})
    response = await post(client, trace_request())
    assert response.status != 200


@pytest.mark.parametrize("endpoint", ["/openrtb2/auction", "/openrtb2/amp"])
async def test_analytics_records_carry_the_modules_tags(make_client, bidders, data_dir: Path, tmp_path, endpoint):
    from tests.test_analytics import read_records

    bidders.bids["alpha"] = [bid("imp-1" if endpoint.endswith("auction") else "slot-1", 2.0)]
    store(data_dir, "101", amp_stored("alpha"))
    log_file = tmp_path / "a.jsonl"
    config = {**bidder_config(bidders, "alpha"), **hooks_config([]), "analytics": {"file": {"filename": str(log_file)}}}
    config["hooks"]["host_execution_plan"] = plan(["processed_auction_request"], endpoint=endpoint)
    client = await make_client(config)
    if endpoint.endswith("auction"):
        assert (await post(client, auction_request())).status == 200
    else:
        assert (await client.get("/openrtb2/amp?tag_id=101")).status == 200
    await client.close()
    [record] = read_records(log_file, "auction" if endpoint.endswith("auction") else "amp")
    [entry] = record["modules"]
    assert (entry["stage"], entry["module_code"], entry["status"], entry["action"]) == (
        "processed_auction_request", "test.example", "success", "update")
    assert entry["analytics_tags"]["activities"][0]["name"] == "example"


async def test_a_module_context_set_at_entrypoint_reaches_the_later_stages(make_client, bidders, monkeypatch):
    """The context a module hands itself before the account is known survives the account's plans."""
    from tests.hooks import example_module

    def entrypoint(self, ctx, payload):  # the entrypoint hook leaves a value for the later stages
        return example_module.HookResult(module_context={"seen_processed": True})

    monkeypatch.setattr(example_module.ExampleModule, "handle_entrypoint", entrypoint)
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    config = {**bidder_config(bidders, "alpha"), **hooks_config(["entrypoint", "raw_bidder_response"])}
    client = await make_client(config)
    response = await post(client, trace_request())
    assert response.status == 200
    statuses = {(stage, status) for stage, _, status, _ in invocations(await response.json())}
    assert statuses == {("entrypoint", "success"), ("raw_bidder_response", "success")}  # its assert held


@pytest.mark.parametrize(
    ("stages", "exit_header"),
    [
        (["bidder_request"], None),  # answered as an auction without hooks (no exitpoint, no analytics)
        (["bidder_request", "exitpoint"], "exitpoint"),  # answered through the exitpoint hooks
    ],
)
async def test_a_hooked_answer_observes_browsing_topics_as_any_other(make_client, bidders, stages, exit_header):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    client = await make_client({**bidder_config(bidders, "alpha"), **hooks_config(stages)})
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}))
    response = await post(client, body, headers={"Sec-Browsing-Topics": "(1);v=chrome.1:1:2"})
    assert response.status == 200, await response.text()
    assert response.headers.get("Observe-Browsing-Topics") == "?1"
    assert response.headers.get("X-Example") == exit_header
    assert bidders.received["alpha"][0]["badv"] == ["blocked.example"]  # the bidder_request hook ran
    answer = await response.json()
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["a1"]
