"""prebid.ortb2blocking's batch forms (``handle_<stage>_batch``): through the hooks executor, an
auction's bidders and answers get from one batch call exactly what the hook gives each alone
(payloads after the mutations, outcomes, module context, metrics), for PBS-Go's cases and the static
plan's edges, mixed with bidders the static plan cannot answer and requests the hook fails on."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.hooks.api import (
    BidderRequestPayload,
    ChangedBatch,
    HookResult,
    InvocationContext,
    QuietBatch,
    RawBidderResponsePayload,
    Stage,
)
from hbserver.hooks.executor import HookExecutor
from hbserver.modules.ortb2blocking import Ortb2BlockingModule, build
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from tests.hooks.test_executor import AUCTION, Metrics, plans
from tests.modules.test_ortb2blocking_bidder_request import CASES as REQUEST_CASES
from tests.modules.test_ortb2blocking_bidder_request import STATIC_CONFIGS, STATIC_REQUESTS, TEST_CONFIG
from tests.modules.test_ortb2blocking_raw_response import CASES as RESPONSE_CASES
from tests.modules.test_ortb2blocking_raw_response import _attributes


class _Counted(Ortb2BlockingModule):
    """The module with its batch calls counted."""

    batches = 0

    def handle_bidder_request_batch(self, *args: Any) -> Any:
        self.batches += 1
        return super().handle_bidder_request_batch(*args)

    def handle_raw_bidder_response_batch(self, *args: Any) -> Any:
        self.batches += 1
        return super().handle_raw_bidder_response_batch(*args)


def _executors(stage: Stage, config: Any, context: dict[str, Any]) -> tuple[Any, list[tuple[HookExecutor, Metrics]]]:
    """An executor running the module's hook (its batch form) and one running it as a plain function."""
    counted = _Counted()
    hook = getattr(counted, stage.method)
    per_call = getattr(build({}), stage.method)

    def plain(ctx: InvocationContext, payload: Any) -> Any:  # no module behind it: no batch form
        return per_call(ctx, payload)

    made = []
    for each in (hook, plain):
        metrics = Metrics()
        hooks = HookExecutor(AUCTION, plans({stage: [[("prebid.ortb2blocking", "code", each)]]}), metrics)
        hooks.set_account("acc", None, {"prebid": {"ortb2blocking": config}} if config is not None else {})
        hooks._contexts["prebid.ortb2blocking"] = dict(context)
        made.append((hooks, metrics))
    assert (
        made[0][0].plans.single[AUCTION][stage][3] is not None
        and made[1][0].plans.single[AUCTION][stage][3] is None
    )
    return counted, made


def _shape(hooks: HookExecutor) -> list[Any]:
    return [(o.stage, o.entity, [(h.hook, h.status, h.action, h.errors, h.warnings, h.analytics_tags, h.message,
             h.debug_messages) for h in o.hooks()]) for o in hooks.outcomes]  # fmt: skip


async def _same_through_both(
    stage: Stage, config: Any, context: dict[str, Any], runs: list[Any], before: list[Any] | None = None
) -> None:
    """``runs`` through the batch form and through the hook per call alike; ``before``: an auction the
    module (both ways) answered first (its decisions kept for an auction of equal imps)."""
    counted, ((batched, batched_metrics), (single, single_metrics)) = _executors(stage, config, context)
    if before is not None:
        for hooks in (batched, single):
            earlier = HookExecutor(AUCTION, hooks.plans, Metrics())
            earlier.set_account("acc", None, hooks.account_modules)
            await earlier.run_each(stage, copy.deepcopy(before))
        counted.batches = 0
    answers = await batched.run_each(stage, copy.deepcopy(runs))
    expected = await single.run_each(stage, copy.deepcopy(runs))
    assert counted.batches == 1
    assert [_plain(payload) for payload, _ in answers] == [_plain(payload) for payload, _ in expected]
    assert [rejection for _, rejection in answers] == [rejection for _, rejection in expected]
    assert _shape(batched) == _shape(single)
    assert sorted(batched_metrics.calls) == sorted(single_metrics.calls)
    assert batched._contexts == single._contexts
    assert batched.all_quiet is single.all_quiet


def _plain(payload: Any) -> Any:
    if isinstance(payload, RawBidderResponsePayload):
        return payload.bidder, [(typed.bid, typed.bid_type) for typed in payload.response.bids]
    return payload.bidder, payload.request


def _own(request: Any) -> Any:
    """A bidder's copy of the request, as the split makes it (its top level and imps its own)."""
    if not isinstance(request, dict):
        return request
    imps = request.get("imp")
    return (
        {**request, "imp": [dict(i) if isinstance(i, dict) else i for i in imps]}
        if isinstance(imps, list)
        else dict(request)
    )


def _auction(request: Any, extra: list[Any]) -> list[tuple[BidderRequestPayload, str]]:
    """Three bidders of one request (sharing its media objects), then the extra requests' bidders."""
    shared = copy.deepcopy(request)
    requests = [_own(shared) for _ in range(3)] + [copy.deepcopy(other) for other in extra]
    return [(BidderRequestPayload(own, f"bidder{n}"), f"bidder{n}") for n, own in enumerate(requests)]


EXTRA_BIDDERS = [
    [],
    [{"badv": ["own.com"], "imp": [{"id": "1", "banner": {}}]}],  # the general path between static ones
    [None],  # a nil request: the hook fails for it alone
    [{"imp": [{"id": "other", "video": {}}]}, None, STATIC_REQUESTS["banner imps"]],
]  # fmt: skip


@pytest.mark.parametrize("before", [False, True], ids=["first auction", "after one of equal imps"])
@pytest.mark.parametrize("extra", EXTRA_BIDDERS, ids=["alone", "own badv", "nil request", "mixed"])
@pytest.mark.parametrize("request_name", STATIC_REQUESTS)
@pytest.mark.parametrize("config_name", [*STATIC_CONFIGS, None])
async def test_bidder_request_batch_answers_as_the_hook(config_name: str | None, request_name: str,
                                                        extra: list[Any], before: bool) -> None:  # fmt: skip
    """Every auction as the hook answers it, the first and one after an auction of equal imps (then a
    ChangedBatch where every bidder is the static plan's: "alone")."""
    config = STATIC_CONFIGS[config_name] if config_name is not None else None
    runs = _auction(STATIC_REQUESTS[request_name], extra)
    await _same_through_both(Stage.BIDDER_REQUEST, config, {}, runs, runs if before else None)


@pytest.mark.parametrize("case", REQUEST_CASES, ids=[case["description"] for case in REQUEST_CASES])
async def test_bidder_request_batch_pbs_go_cases(case: dict[str, Any]) -> None:
    config = TEST_CONFIG if case["config"] == "@test_config" else case["config"]
    await _same_through_both(Stage.BIDDER_REQUEST, config, {}, _auction(case["request"], EXTRA_BIDDERS[3]))


@pytest.mark.parametrize("cattaxes", [(2, None, None), (None, 2, None), (0, None, 2)])
@pytest.mark.parametrize("config_name", ["everything", "top only, no taxonomy"])
async def test_bidders_of_the_same_imps_each_with_its_own_cattax(config_name: str,
                                                                 cattaxes: tuple[int | None, ...]) -> None:  # fmt: skip
    """Bidders sharing their imps, one with its own cattax (kept) beside ones without (given the plan's)."""
    shared = copy.deepcopy(STATIC_REQUESTS["banner imps"])
    requests = [_own(shared) for _ in cattaxes]
    for request, cattax in zip(requests, cattaxes, strict=True):
        if cattax is not None:
            request["cattax"] = cattax
    runs = [(BidderRequestPayload(request, f"bidder{n}"), f"bidder{n}") for n, request in enumerate(requests)]
    await _same_through_both(Stage.BIDDER_REQUEST, STATIC_CONFIGS[config_name], {}, runs)


def _answer(bidder: str, bids: list[dict[str, Any]], bid_type: str = "banner") -> tuple[RawBidderResponsePayload, str]:
    typed = [TypedBid(bid=bid, bid_type=bid_type) for bid in bids]
    return RawBidderResponsePayload(BidderResponse(bids=typed), bidder), bidder


@pytest.mark.parametrize("case", RESPONSE_CASES, ids=[case["description"] for case in RESPONSE_CASES])
async def test_raw_bidder_response_batch_pbs_go_cases(case: dict[str, Any]) -> None:
    """Each case's answer among others: a bidder with a bid of each kind, and one the context has nothing for."""
    context = {bidder: _attributes(raw) for bidder, raw in (case["module_context"] or {}).items()}
    context.setdefault("other", BlockingAttributes(badv=("bad.com",), bcat=("IAB25",)))
    runs = [
        _answer(
            "other",
            [
                {"id": "1", "impid": "i", "adomain": ["good.com"]},
                {"id": "2", "adomain": ["bad.com"]},
                {"id": "3", "dealid": "d", "cat": ["IAB25"]},
            ],
        ),
        _answer("appnexus", case["bids"], ""),
        _answer("unknown", [{"id": "4", "adomain": ["bad.com"]}]),
        _answer("appnexus", [], ""),
    ]
    await _same_through_both(Stage.RAW_BIDDER_RESPONSE, case["config"], context, runs)


@pytest.mark.parametrize("case", RESPONSE_CASES, ids=[case["description"] for case in RESPONSE_CASES])
async def test_raw_bidder_response_batch_where_the_others_pass(case: dict[str, Any]) -> None:
    """Each case's answer beside answers whose bids all pass: where the case's pass too, the batch
    answers them all at once (a QuietBatch), and still exactly as the hook does for each."""
    context = {bidder: _attributes(raw) for bidder, raw in (case["module_context"] or {}).items()}
    context.setdefault("other", BlockingAttributes(badv=("bad.com",), bcat=("IAB25",)))
    passing = [{"id": "1", "impid": "i", "adomain": ["good.com"]}, {"id": "2", "cat": ["IAB1"]}, {"id": "3"}]
    runs = [_answer("other", passing), _answer("appnexus", case["bids"], ""), _answer("other", passing[:1])]
    await _same_through_both(Stage.RAW_BIDDER_RESPONSE, case["config"], context, runs)


def test_a_raw_batch_whose_bids_all_pass_is_quiet() -> None:
    """The common auction (every bid passes) is one QuietBatch; one bid blocked, or a bidder whose
    module context is not its attributes, makes it a result (or failure) per answer."""
    module = build({})
    config = {"attributes": {"badv": {"blocked_adomain": ["bad.com"], "enforce_blocks": True}}}
    attrs = BlockingAttributes(badv=("bad.com",))
    context: dict[str, Any] = {"a": attrs, "b": attrs}
    ctx = InvocationContext(AUCTION, "acc", config, context, "code")

    def answered(bids: list[dict[str, Any]], bidder: str = "b") -> Any:
        payloads = [_answer("a", [{"id": "1", "adomain": ["good.com"]}])[0], _answer(bidder, bids)[0]]
        return module.handle_raw_bidder_response_batch(ctx, payloads)

    quiet = answered([{"id": "2", "adomain": ["ok.com"]}])
    assert isinstance(quiet, QuietBatch)
    assert [type(answer).__name__ for answer in answered([{"id": "2", "adomain": ["bad.com"]}])] == [
        "AllKept", "HookResult"]  # fmt: skip
    assert isinstance(answered([{"id": "2"}], bidder="c"), QuietBatch)  # no attributes for c: nothing blocked
    context["c"] = "not attributes"  # the hook fails for c alone
    assert [type(answer).__name__ for answer in answered([{"id": "2"}], bidder="c")] == ["AllKept", "BlockingFailure"]


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a"), ("a", "b", "a")])
async def test_bidders_sharing_their_attributes_are_each_checked_as_overrides_say(order: tuple[str, ...]) -> None:
    """Bidders whose module context holds the same attributes: one glance serves them all only where no
    override makes the checks the bidder's own (here enforced for b alone: b's bid is dropped, a's kept)."""
    config = {"attributes": {"badv": {"enforce_blocks": False, "blocked_adomain": ["bad.com"], "action_overrides": {
        "enforce_blocks": [{"conditions": {"bidders": ["b"]}, "override": True}]}}}}  # fmt: skip
    attrs = BlockingAttributes(badv=("bad.com",))
    runs = [_answer(bidder, [{"id": f"{n}", "impid": "i", "adomain": ["bad.com"]}]) for n, bidder in enumerate(order)]
    context = {"a": attrs, "b": attrs}
    await _same_through_both(Stage.RAW_BIDDER_RESPONSE, config, context, runs)
    ctx = InvocationContext(AUCTION, "acc", config, context, "code")
    answers = build({}).handle_raw_bidder_response_batch(ctx, [payload for payload, _ in runs])
    assert [bool(answer.mutations) for answer in answers] == [bidder == "b" for bidder in order]


async def test_a_batch_result_is_read_never_changed() -> None:
    """The bidders the static plan answers alike share one result: the module context of all of them."""
    config = STATIC_CONFIGS["everything"]
    module = build({})
    runs = _auction(STATIC_REQUESTS["banner imps"], [])
    context: dict[str, Any] = {}
    ctx = InvocationContext(AUCTION, "acc", config, context, "code")
    results = module.handle_bidder_request_batch(ctx, [payload for payload, _ in runs])
    assert all(isinstance(result, HookResult) for result in results) and results[0] is results[2]
    assert set(results[0].module_context or {}) == {"bidder0", "bidder1", "bidder2"}


def _second_auction(change: str) -> list[BidderRequestPayload]:
    """Three bidders of "banner imps", one of them changed as ``change`` says."""
    runs = _auction(STATIC_REQUESTS["banner imps"], [])
    request = runs[1][0].request
    if change == "own badv":
        request["badv"] = ["own.com"]
    elif change == "own cattax":
        request["cattax"] = 2
    elif change == "empty own bapp":
        request["bapp"] = []
    elif change == "other imps":
        request["imp"] = [{"id": "other", "banner": {}}]
    elif change == "nil request":
        runs[1] = (BidderRequestPayload(None, "bidder1"), "bidder1")  # type: ignore[arg-type]
    return [payload for payload, _ in runs]


@pytest.mark.parametrize(
    ("change", "changed_batch"),
    [("", True), ("own badv", False), ("own cattax", False), ("empty own bapp", False), ("other imps", False),
     ("nil request", False)],
)  # fmt: skip
def test_an_auction_after_one_of_equal_imps_is_one_changed_batch(change: str, changed_batch: bool) -> None:
    """The common auction after the first (every bidder's request the static plan's, its imps those of the
    auction before): one ChangedBatch; any bidder otherwise, a result (or failure) per bidder."""
    module = build({})
    config = STATIC_CONFIGS["everything"]
    first = module.handle_bidder_request_batch(
        InvocationContext(AUCTION, "acc", config, {}, "code"), _second_auction(""))
    assert isinstance(first, list)  # the first auction: nothing kept yet
    answer = module.handle_bidder_request_batch(
        InvocationContext(AUCTION, "acc", config, {}, "code"), _second_auction(change))
    assert isinstance(answer, ChangedBatch) is changed_batch
    if changed_batch:
        assert set(answer.module_context) == {"bidder0", "bidder1", "bidder2"}
