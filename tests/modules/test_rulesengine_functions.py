"""prebid.rulesengine: schema and result functions (PBS-Go rules/schema_functions_test.go,
modules/prebid/rulesengine/result_functions_test.go and hookstage's bidder mutations)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.hooks.api import ProcessedAuctionRequestPayload
from hbserver.modules.rulesengine.args import MISSING
from hbserver.modules.rulesengine.result_functions import (
    ExcludeBidders,
    IncludeBidders,
    Outcome,
    ResultMeta,
    add_bidders_mutation,
    delete_bidders_mutation,
    new_result_function,
)
from hbserver.modules.rulesengine.schema_functions import (
    SCHEMA_FUNCTION_NAMES,
    check_no_args,
    new_percent,
    new_schema_function,
)

DATA = Path(__file__).parent / "data" / "rulesengine"
CALLS = json.loads((DATA / "schema_calls.json").read_text())["cases"]
META = ResultMeta((), "")


def never(n: int) -> int:
    raise AssertionError("no random number expected")


@pytest.mark.parametrize(("desc", "name", "args", "request_", "expected"), CALLS, ids=[case[0] for case in CALLS])
def test_schema_function_call(desc: str, name: str, args: Any, request_: dict[str, Any], expected: str) -> None:
    function = new_schema_function(name, MISSING if args is None else args, never)
    assert function.name == name
    assert function(request_) == expected


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("deviceCountryIn", MISSING, "deviceCountryIn: args are required"),
        ("deviceCountryIn", "malformed", "deviceCountryIn: args must be an object"),
        ("deviceCountryIn", {"countries": []}, "Missing countries argument for deviceCountryIn schema function"),
        ("deviceCountryIn", None, "Missing countries argument for deviceCountryIn schema function"),
        ("dataCenterIn", MISSING, "dataCenterIn: args are required"),
        ("dataCenterIn", {"datacenters": []}, "Empty datacenter argument in dataCenterIn schema function"),
        ("dataCenterIn", {"datacenters": [5]}, "dataCenterIn: args.datacenters must be an array of strings"),
        ("eidIn", MISSING, "eidIn: args are required"),
        ("eidIn", {"sources": []}, "Empty sources argument in eidIn schema function"),
        ("eidIn", {"sources": [5]}, "eidIn: args.sources must be an array of strings"),
        ("gppSidIn", MISSING, "gppSidIn: args are required"),
        ("gppSidIn", {"sids": []}, "Empty GPPSIDs list argument in gppSidIn schema function"),
        ("gppSidIn", {"sids": [1.5]}, "gppSidIn: args.sids must be an array of integers from -128 to 127"),
        ("gppSidIn", {"sids": [300]}, "gppSidIn: args.sids must be an array of integers from -128 to 127"),
        ("percent", MISSING, "percent: args are required"),
        ("percent", {"pct": "50"}, "percent: args.pct must be an integer"),
        ("unknown", {}, "Schema function unknown was not created"),
    ],
)
def test_schema_function_args_refused(name: str, args: Any, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        new_schema_function(name, args, never)
    assert str(raised.value) == error


def test_args_keys_are_case_insensitive_like_go() -> None:
    function = new_schema_function("deviceCountryIn", {"Countries": ["JPN"]}, never)
    assert function({"device": {"geo": {"country": "JPN"}}}) == "true"


PARAMLESS = [
    "channel",
    "dataCenter",
    "deviceCountry",
    "eidAvailable",
    "fpdAvailable",
    "gppSidAvailable",
    "tcfInScope",
    "userFpdAvailable",
]


@pytest.mark.parametrize("name", PARAMLESS)
@pytest.mark.parametrize(("args", "ok"), [(MISSING, True), (None, True), ({}, True), ({"field": "value"}, False)])
def test_paramless_constructors(name: str, args: Any, ok: bool) -> None:
    if ok:
        assert new_schema_function(name, args, never).name == name
    else:
        with pytest.raises(ValueError, match=f"^{name} expects 0 arguments$"):
            new_schema_function(name, args, never)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ("malformed", True),
        ({"field": "value"}, True),
        ([], True),
        ("", True),
        (MISSING, False),
        (None, False),
        ({}, False),
    ],
)
def test_check_no_args(args: Any, error: bool) -> None:
    if error:
        with pytest.raises(ValueError, match=r"^anyFunctionName expects 0 arguments$"):
            check_no_args(args, "anyFunctionName")
    else:
        check_no_args(args, "anyFunctionName")


@pytest.mark.parametrize(
    ("args", "pct"),
    [({"pct": None}, 5), ({}, 5), (None, 5), ({"pct": -1}, 0), ({"pct": 101}, 100), ({"pct": 80}, 80)],
)
def test_new_percent(args: Any, pct: int) -> None:
    assert new_percent(args, never).pct == pct


@pytest.mark.parametrize(
    ("pct", "drawn", "expected"),
    [
        (-1, None, "false"),
        (0, None, "false"),
        (50, 49, "true"),
        (50, 50, "true"),
        (50, 51, "false"),
        (150, None, "true"),
        (100, None, "true"),
    ],
)
def test_percent_call(pct: int, drawn: int | None, expected: str) -> None:
    asked: list[int] = []

    def intn(n: int) -> int:
        asked.append(n)
        assert drawn is not None, "no draw expected"
        return drawn

    function = new_percent({"pct": pct}, intn)
    assert function({}) == expected
    assert asked == ([] if drawn is None else [100])


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        ({"ext": "malformed"}, "request.ext must be an object"),
        ({"ext": {"prebid": 5}}, "request.ext.prebid must be an object"),
        ({"ext": {"prebid": {"channel": {"name": 5}}}}, "request.ext.prebid.channel must be an object"),
    ],
)
def test_channel_unreadable_ext(request_: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        new_schema_function("channel", MISSING, never)(request_)


def test_user_fpd_unreadable_user_ext() -> None:
    with pytest.raises(ValueError, match=r"request\.user\.ext must be an object"):
        new_schema_function("userFpdAvailable", MISSING, never)({"user": {"ext": "malformed"}})


def test_schema_function_names_are_pbs_go_s() -> None:
    assert SCHEMA_FUNCTION_NAMES == (
        "channel", "dataCenter", "dataCenterIn", "deviceCountry", "deviceCountryIn", "eidAvailable", "eidIn",
        "fpdAvailable", "gppSidAvailable", "gppSidIn", "percent", "tcfInScope", "userFpdAvailable",
    )  # fmt: skip


# ---- result functions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("excludeBidders", {"bidders": ["bidder1", "bidder2"]}, None),
        ("includeBidders", {"bidders": ["bidder3", "bidder4"]}, None),
        ("excludeBidders", {"bidders": None}, "excludeBidders requires at least one bidder to be specified"),
        ("includeBidders", {"bidders": None}, "includeBidders requires at least one bidder to be specified"),
        ("includeBidders", {}, "includeBidders requires at least one bidder to be specified"),
        ("logATag", {"analyticsValue": "x"}, "result function logATag was not created"),
        ("invalidFunction", {}, "result function invalidFunction was not created"),
        ("excludeBidders", "invalid-json", "excludeBidders: args must be an object"),
        ("includeBidders", MISSING, "includeBidders: args are required"),
        ("excludeBidders", {"bidders": ["a"], "seatNonBid": "x"}, "excludeBidders: args.seatnonbid must be an integer"),
        ("excludeBidders", {"bidders": ["a"], "ifSyncedId": 1}, "excludeBidders: args.ifsyncedid must be a boolean"),
    ],
)
def test_new_result_function(name: str, args: Any, error: str | None) -> None:
    if error is None:
        function = new_result_function(name, args)
        assert function.name == name
        assert list(function.params.bidders) == args["bidders"]  # type: ignore[attr-defined]
    else:
        with pytest.raises(ValueError) as raised:
            new_result_function(name, args)
        assert str(raised.value) == error


def test_result_params_read_with_go_case_insensitivity() -> None:
    function = new_result_function(
        "excludeBidders", {"bidders": ["a"], "seatNonBid": 203, "analyticsValue": "v", "ifSyncedId": True}
    )
    params = function.params  # type: ignore[attr-defined]
    assert (params.seat_non_bid, params.analytics_value, params.if_synced_id) == (203, "v", True)


def _request(*bidders: str, imps: int = 1) -> dict[str, Any]:
    return {
        "imp": [
            {"id": f"imp{index}", "ext": {"prebid": {"bidder": {name: {"p": name} for name in bidders}}}}
            for index in range(imps)
        ]
    }


def _imp_bidders(request: dict[str, Any]) -> list[list[str]]:
    return [sorted(imp["ext"]["prebid"]["bidder"]) for imp in request["imp"]]


def _apply(outcome: Outcome, request: dict[str, Any]) -> dict[str, Any]:
    payload = ProcessedAuctionRequestPayload(request)
    for mutation in outcome.mutations:
        payload = mutation.apply(payload)
    return payload.request


@pytest.mark.parametrize(
    ("excluded", "present", "left"),
    [
        (["bidderA"], ["bidderA", "bidderB"], ["bidderB"]),
        (["bidderA", "bidderB"], ["bidderA", "bidderB"], []),
        (["bidderC"], ["bidderA", "bidderB"], ["bidderA", "bidderB"]),
    ],
)
def test_exclude_bidders_call(excluded: list[str], present: list[str], left: list[str]) -> None:
    outcome = Outcome()
    new_result_function("excludeBidders", {"bidders": excluded})({}, outcome, META)
    assert [(m.kind, m.key) for m in outcome.mutations] == [
        ("delete", ("bidrequest", "imp", "ext", "prebid", "bidders"))
    ]
    request = _request(*present, imps=2)
    assert _imp_bidders(_apply(outcome, request)) == [left, left]
    assert _imp_bidders(request) == [sorted(present)] * 2  # the payload's request is not changed


@pytest.mark.parametrize(
    ("included", "present", "left"),
    [
        (["bidderA", "bidderB"], ["bidderA", "bidderB", "bidderC"], ["bidderA", "bidderB"]),
        (["bidderX"], ["bidderA", "bidderB"], []),
    ],
)
def test_include_bidders_call(included: list[str], present: list[str], left: list[str]) -> None:
    outcome = Outcome()
    new_result_function("includeBidders", {"bidders": included})({}, outcome, META)
    assert outcome.mutations == []
    assert outcome.allowed == set(included)
    outcome.mutations.append(add_bidders_mutation(outcome.allowed))
    assert _imp_bidders(_apply(outcome, _request(*present))) == [left]


# hookstage processedauctionrequest_mutations_test.go: Add and Delete, one or more mutations
@pytest.mark.parametrize(
    ("sets", "present", "left"),
    [
        ([set()], ["bidderA", "bidderB"], []),
        ([{"bidderB"}], ["bidderB"], ["bidderB"]),
        ([{"bidderA"}], ["bidderB"], []),
        ([{"bidderB"}], ["bidderA", "bidderB"], ["bidderB"]),
        ([{"bidderA", "bidderB"}], ["bidderA", "bidderB"], ["bidderA", "bidderB"]),
        ([{"bidderA"}, {"bidderB"}], ["bidderA", "bidderB"], []),
    ],
)
def test_add_bidders_mutation(sets: list[set[str]], present: list[str], left: list[str]) -> None:
    outcome = Outcome(mutations=[add_bidders_mutation(allowed) for allowed in sets])
    assert _imp_bidders(_apply(outcome, _request(*present))) == [left]


@pytest.mark.parametrize(
    ("sets", "present", "left"),
    [
        ([frozenset()], ["bidderA", "bidderB"], ["bidderA", "bidderB"]),
        ([frozenset({"bidderB"})], ["bidderB"], []),
        ([frozenset({"bidderA"})], ["bidderB"], ["bidderB"]),
        ([frozenset({"bidderB"})], ["bidderA", "bidderB"], ["bidderA"]),
        ([frozenset({"bidderA", "bidderB"})], ["bidderA", "bidderB"], []),
        ([frozenset({"bidderA"}), frozenset({"bidderB"})], ["bidderA", "bidderB", "bidderC"], ["bidderC"]),
    ],
)
def test_delete_bidders_mutation(sets: list[frozenset[str]], present: list[str], left: list[str]) -> None:
    outcome = Outcome(mutations=[delete_bidders_mutation(bidders) for bidders in sets])
    assert _imp_bidders(_apply(outcome, _request(*present))) == [left]


def test_mutation_keeps_params_and_other_ext_keys() -> None:
    request = {
        "id": "r",
        "imp": [
            {
                "id": "1",
                "ext": {"gpid": "g", "prebid": {"bidder": {"a": {"x": 1}, "b": {}}, "storedrequest": {"id": "s"}}},
            }
        ],
    }
    out = delete_bidders_mutation(frozenset({"b"})).apply(ProcessedAuctionRequestPayload(request)).request
    assert out == {
        "id": "r",
        "imp": [{"id": "1", "ext": {"gpid": "g", "prebid": {"bidder": {"a": {"x": 1}}, "storedrequest": {"id": "s"}}}}],
    }
    assert request["imp"][0]["ext"]["prebid"]["bidder"] == {"a": {"x": 1}, "b": {}}


def test_mutation_filters_legacy_imp_ext_bidders() -> None:
    """hbserver keeps imp.ext.<bidder> when the request used that layout (PBS-Go has moved them
    into imp.ext.prebid.bidder by this stage)."""
    request = {
        "imp": [
            {
                "id": "1",
                "ext": {
                    "appnexus": {"placementId": 1},
                    "rubicon": {},
                    "gpid": "g",
                    "prebid": {"storedrequest": {"id": "s"}},
                },
            }
        ]
    }
    out = add_bidders_mutation({"rubicon"}).apply(ProcessedAuctionRequestPayload(request)).request
    assert out["imp"][0]["ext"] == {"rubicon": {}, "gpid": "g", "prebid": {"storedrequest": {"id": "s"}}}
    assert "appnexus" in request["imp"][0]["ext"]


def test_result_function_types() -> None:
    assert isinstance(new_result_function("excludeBidders", {"bidders": ["a"]}), ExcludeBidders)
    assert isinstance(new_result_function("includeBidders", {"bidders": ["a"]}), IncludeBidders)
