"""One request's hooks (hbserver/hooks/executor.py): PBS-Go's hookexecution (groups, timeouts,
mutations, rejects, statuses and their texts, metrics) and PBS-Java's module A/B tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from hbserver.hooks.api import (
    ENDPOINT_AMP,
    ENDPOINT_AUCTION,
    HookFailure,
    HookResult,
    InvocationContext,
    Mutation,
    RejectedBids,
    Stage,
)
from hbserver.hooks.executor import HookExecutor
from hbserver.hooks.outcome import (
    ABTEST_ACTIVITY,
    EXECUTION_FAILURE,
    FAILURE,
    NO_ACTION,
    NO_INVOCATION,
    REJECT,
    SUCCESS,
    TIMEOUT,
    UPDATE,
    HookOutcome,
    analytics_entries,
)
from hbserver.hooks.plan import AbTest, HookRef
from hbserver.hooks.runtime import CompiledGroup, RequestPlans

AUCTION = ENDPOINT_AUCTION
REJECTABLE = [s for s in Stage if s.rejectable]
NOT_REJECTABLE = [Stage.ALL_PROCESSED_BID_RESPONSES, Stage.AUCTION_RESPONSE, Stage.EXITPOINT]

Hook = Callable[[InvocationContext, Any], Any]
Spec = tuple[str, str, Hook]  # module, hook code, hook


def plans(stages: dict[Stage, list[list[Spec]]], timeout_ms: int = 1000, abtests: tuple[AbTest, ...] = ()) -> Any:
    """RequestPlans at the auction endpoint: per stage, groups of (module, code, hook)."""
    compiled = {
        (AUCTION, stage): tuple(
            CompiledGroup(timeout_ms, tuple((HookRef(m, c), fn) for m, c, fn in group)) for group in groups
        )
        for stage, groups in stages.items()
    }
    return RequestPlans(compiled, abtests, frozenset({AUCTION}) if compiled else frozenset())


class Metrics:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, module: str, stage: str, outcome: str, calls: int) -> None:
        self.calls.extend([(module, stage, outcome)] * calls)


def executor(stages: dict[Stage, list[list[Spec]]], **kwargs: Any) -> tuple[HookExecutor, Metrics]:
    metrics = Metrics()
    rand = kwargs.pop("rand", None)
    extra = {"rand": rand} if rand is not None else {}
    return HookExecutor(AUCTION, plans(stages, **kwargs), metrics, **extra), metrics


def set_key(key: str, value: Any) -> Mutation[dict[str, Any]]:
    return Mutation("update", ("request", key), lambda p: {**p, key: value})


def appended(key: str, value: Any) -> Mutation[dict[str, Any]]:
    return Mutation("add", ("request", key), lambda p: {**p, key: [*p.get(key, []), value]})


def failing(text: str) -> Mutation[dict[str, Any]]:
    def apply(payload: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(text)

    return Mutation("delete", ("request", "x"), apply)


def returning(result: Any, seen: list[Any] | None = None) -> Hook:
    def hook(context: InvocationContext, payload: Any) -> Any:
        if seen is not None:
            seen.append(payload)
        return result

    return hook


def only(hooks: list[HookOutcome]) -> HookOutcome:
    assert len(hooks) == 1
    return hooks[0]


# -- groups and mutations ------------------------------------------------------------------------


async def test_groups_run_in_order_and_see_the_previous_groups_payload():
    seen: list[Any] = []
    ex, _ = executor(
        {
            Stage.BIDDER_REQUEST: [
                [("m1", "g1", returning(HookResult(mutations=[appended("log", "g1")]), seen))],
                [("m2", "g2", returning(HookResult(mutations=[appended("log", "g2")]), seen))],
            ]
        }
    )
    payload, rejection = await ex.run(Stage.BIDDER_REQUEST, {"log": []}, "bidderA")
    assert rejection is None
    assert payload == {"log": ["g1", "g2"]}
    assert seen == [{"log": []}, {"log": ["g1"]}]
    (outcome,) = ex.outcomes
    assert (outcome.stage, outcome.entity, len(outcome.groups)) == (Stage.BIDDER_REQUEST, "bidderA", 2)


async def test_hooks_of_a_group_see_the_same_payload_and_apply_in_plan_order():
    seen: list[Any] = []

    async def slow(context: InvocationContext, payload: Any) -> HookResult[Any]:
        seen.append(("slow", payload))
        await asyncio.sleep(0.02)
        return HookResult(mutations=[appended("log", "slow")])

    async def fast(context: InvocationContext, payload: Any) -> HookResult[Any]:
        seen.append(("fast", payload))
        return HookResult(mutations=[appended("log", "fast")])

    sync = returning(HookResult(mutations=[appended("log", "sync")]))
    ex, _ = executor({Stage.RAW_AUCTION_REQUEST: [[("a", "slow", slow), ("b", "sync", sync), ("c", "fast", fast)]]})
    payload, _ = await ex.run(Stage.RAW_AUCTION_REQUEST, {"log": []}, "auction-request")
    assert payload == {"log": ["slow", "sync", "fast"]}
    assert seen == [("slow", {"log": []}), ("fast", {"log": []})]
    assert [h.hook.code for h in ex.outcomes[0].hooks()] == ["slow", "sync", "fast"]


async def test_mutation_debug_messages_pbs_go_text():
    result = HookResult(mutations=[set_key("site", 1), Mutation("delete", ("bidrequest", "user", "eids"), dict)])
    ex, metrics = executor({Stage.PROCESSED_AUCTION_REQUEST: [[("m", "c", returning(result))]]})
    payload, _ = await ex.run(Stage.PROCESSED_AUCTION_REQUEST, {"a": 1}, "auction-request")
    assert payload == {"a": 1, "site": 1}
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.action, hook.warnings) == (SUCCESS, UPDATE, [])
    assert hook.debug_messages == [
        "Hook mutation successfully applied, affected key: request.site, mutation type: update",
        "Hook mutation successfully applied, affected key: bidrequest.user.eids, mutation type: delete",
    ]
    assert metrics.calls == [("m", "processed_auction_request", "success_updated")]


@pytest.mark.parametrize(
    ("mutations", "status", "payload", "warnings", "debug_count", "metric"),
    [
        ([failing("boom"), set_key("k", 1)], SUCCESS, {"k": 1}, ["failed to apply hook mutation: boom"], 1,
         "success_updated"),
        ([set_key("k", 1), failing("late")], SUCCESS, {"k": 1}, ["failed to apply hook mutation: late"], 1,
         "success_updated"),
        ([failing("one"), failing("two")], EXECUTION_FAILURE, {},
         ["failed to apply hook mutation: one", "failed to apply hook mutation: two"], 0, "execution_error"),
    ],
)  # fmt: skip
async def test_failed_mutations(mutations, status, payload, warnings, debug_count, metric):
    result = HookResult(mutations=mutations, warnings=["own warning"], debug_messages=["own debug"])
    ex, metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", returning(result))]]})
    out, rejection = await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    assert rejection is None
    assert out == payload
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.action) == (status, UPDATE)
    assert hook.warnings == ["own warning", *warnings]
    assert len(hook.debug_messages) == 1 + debug_count
    assert metrics.calls == [("m", "bidder_request", metric)]


async def test_no_mutations_is_no_action_and_the_hooks_texts_are_kept():
    tags = {"activities": [{"name": "a", "status": "success"}]}
    result = HookResult(message="msg", errors=["e"], warnings=["w"], debug_messages=["d"], analytics_tags=tags)
    ex, metrics = executor({Stage.EXITPOINT: [[("m", "c", returning(result))]]})
    payload, _ = await ex.run(Stage.EXITPOINT, {"x": 1}, "exitpoint")
    assert payload == {"x": 1}
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.action, hook.message) == (SUCCESS, NO_ACTION, "msg")
    assert (hook.errors, hook.warnings, hook.debug_messages, hook.analytics_tags) == (["e"], ["w"], ["d"], tags)
    assert metrics.calls == [("m", "exitpoint", "success_noop")]


async def test_a_stage_without_hooks_records_nothing():
    ex, metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", returning(HookResult()))]]})
    payload = {"x": 1}
    assert await ex.run(Stage.RAW_BIDDER_RESPONSE, payload, "bidderA") == (payload, None)
    assert ex.outcomes == [] and metrics.calls == []
    assert Stage.BIDDER_REQUEST in ex.stages and Stage.RAW_BIDDER_RESPONSE not in ex.stages
    assert ex.runs_any()
    assert not HookExecutor(ENDPOINT_AMP, ex.plans).runs_any()


# -- rejects -------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", REJECTABLE)
async def test_reject_stops_the_stage(stage):
    later: list[Any] = []
    rejecting = returning(HookResult(reject=True, nbr_code=123, mutations=[set_key("rejected", True)]))
    ex, metrics = executor(
        {
            stage: [
                [("m0", "first", returning(HookResult(mutations=[set_key("first", True)])))],
                [("m1", "rej", rejecting), ("m2", "same-group", returning(HookResult()))],
                [("m3", "later", returning(HookResult(), later))],
            ]
        }
    )
    payload, rejection = await ex.run(stage, {}, "entity")
    message = f"Module m1 (hook: rej) rejected request with code 123 at {stage.value} stage"
    assert rejection is not None
    assert (rejection.hook, rejection.stage, rejection.nbr, rejection.message()) == (
        HookRef("m1", "rej"), stage, 123, message
    )  # fmt: skip
    assert later == []
    assert "rejected" not in payload
    outcome = ex.outcomes[0]
    assert len(outcome.groups) == 2
    hook = outcome.groups[1].results[0]
    assert (hook.status, hook.action, hook.errors) == (SUCCESS, REJECT, [message])
    assert [h.hook.code for h in outcome.groups[1].results] == ["rej"]
    assert metrics.calls == [("m0", stage.value, "success_updated"), ("m1", stage.value, "success_rejected")]
    assert ex.rejected_by(stage)


@pytest.mark.parametrize("stage", NOT_REJECTABLE)
async def test_reject_where_not_rejectable_is_an_execution_failure(stage):
    later: list[Any] = []
    rejecting = returning(HookResult(reject=True, nbr_code=7, mutations=[set_key("rejected", True)], errors=["own"]))
    ex, metrics = executor({stage: [[("m1", "rej", rejecting)], [("m2", "later", returning(HookResult(), later))]]})
    payload, rejection = await ex.run(stage, {}, "entity")
    assert rejection is None
    assert payload == {}  # a reject's mutations are never applied
    assert later == [{}]
    hook = ex.outcomes[0].groups[0].results[0]
    assert hook.status == EXECUTION_FAILURE
    assert hook.errors == [
        "own",
        f"Module (name: m1, hook code: rej) tried to reject request on the {stage.value} stage that does not "
        "support rejection",
    ]
    assert metrics.calls == [("m1", stage.value, "execution_error"), ("m2", stage.value, "success_noop")]
    assert not ex.rejected_by(stage)


async def test_refused_reject_has_no_action():
    """PBS-Go's handleHookReject sets only the status (its HookOutcome.Action stays "")."""
    ex, _ = executor({Stage.AUCTION_RESPONSE: [[("m", "c", returning(HookResult(reject=True)))]]})
    await ex.run(Stage.AUCTION_RESPONSE, {}, "auction_response")
    assert only(ex.outcomes[0].hooks()).action == ""


# -- timeouts, failures, garbage -----------------------------------------------------------------


async def test_async_hook_past_the_timeout_is_cancelled():
    cancelled: list[bool] = []

    async def sleepy(context: InvocationContext, payload: Any) -> HookResult[Any]:
        try:
            await asyncio.sleep(2)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return HookResult(mutations=[set_key("sleepy", True)])

    quick = returning(HookResult(mutations=[set_key("quick", True)]))
    ex, metrics = executor({Stage.BIDDER_REQUEST: [[("slow", "s", sleepy), ("fast", "f", quick)]]}, timeout_ms=30)
    started = time.perf_counter()
    payload, _ = await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    assert time.perf_counter() - started < 1
    await asyncio.sleep(0)  # the cancellation reaches the hook
    assert cancelled == [True]
    assert payload == {"quick": True}
    slow, fast = ex.outcomes[0].hooks()
    assert (slow.status, slow.action, slow.errors) == (TIMEOUT, "", ["Hook execution timeout"])
    assert slow.execution_ms >= 25
    assert (fast.status, fast.action) == (SUCCESS, UPDATE)
    assert metrics.calls == [("slow", "bidder_request", "timeout"), ("fast", "bidder_request", "success_updated")]


async def test_sync_hook_that_runs_past_the_timeout_is_timed_out_after_the_fact():
    def blocking(context: InvocationContext, payload: Any) -> HookResult[Any]:
        time.sleep(0.03)
        return HookResult(mutations=[set_key("blocking", True)], warnings=["dropped"])

    ex, metrics = executor({Stage.ENTRYPOINT: [[("m", "c", blocking)]]}, timeout_ms=10)
    payload, _ = await ex.run(Stage.ENTRYPOINT, {}, "http-request")
    assert payload == {}
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.errors, hook.warnings) == (TIMEOUT, ["Hook execution timeout"], [])
    assert metrics.calls == [("m", "entrypoint", "timeout")]


def raising(exc: BaseException, is_async: bool) -> Hook:
    if is_async:

        async def async_hook(context: InvocationContext, payload: Any) -> Any:
            raise exc

        return async_hook

    def hook(context: InvocationContext, payload: Any) -> Any:
        raise exc

    return hook


FAILED_RESULT = HookResult(
    message="partial",
    mutations=[set_key("never", True)],
    errors=["own error"],
    warnings=["own warning"],
    debug_messages=["own debug"],
    analytics_tags={"activities": [{"name": "x", "status": "error"}]},
    rejected_bids=[RejectedBids("b", [], 301)],
)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("exc", "status", "errors", "warnings", "tags", "metric"),
    [
        (HookFailure("no data"), FAILURE, ["hook execution failed: no data"], [], {}, "failed"),
        (HookFailure("no data", FAILED_RESULT), FAILURE, ["own error", "hook execution failed: no data"],
         ["own warning"], FAILED_RESULT.analytics_tags, "failed"),
        (RuntimeError("bad"), EXECUTION_FAILURE, ["hook execution failed: RuntimeError: bad"], [], {},
         "execution_error"),
        (KeyError("k"), EXECUTION_FAILURE, ["hook execution failed: KeyError: 'k'"], [], {}, "execution_error"),
    ],
)  # fmt: skip
async def test_raising_hooks(is_async, exc, status, errors, warnings, tags, metric):
    after: list[Any] = []
    ex, metrics = executor(
        {
            Stage.ALL_PROCESSED_BID_RESPONSES: [
                [("m", "c", raising(exc, is_async))],
                [("n", "d", returning(HookResult(), after))],
            ]
        }
    )
    payload, rejection = await ex.run(Stage.ALL_PROCESSED_BID_RESPONSES, {}, "all_processed_bid_responses")
    assert (payload, rejection, after) == ({}, None, [{}])
    hook = ex.outcomes[0].groups[0].results[0]
    assert (hook.status, hook.action, hook.errors, hook.warnings, hook.analytics_tags) == (
        status, "", errors, warnings, tags
    )  # fmt: skip
    assert ex.rejected_bids == []
    assert metrics.calls[0] == ("m", "all_processed_bid_responses", metric)


async def test_failure_result_message_and_debug_messages_are_kept():
    ex, _ = executor({Stage.ENTRYPOINT: [[("m", "c", raising(HookFailure("x", FAILED_RESULT), False))]]})
    await ex.run(Stage.ENTRYPOINT, {}, "http-request")
    hook = only(ex.outcomes[0].hooks())
    assert (hook.message, hook.debug_messages) == ("partial", ["own debug"])


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("garbage", "type_name"), [(None, "NoneType"), ({"reject": True}, "dict"), ("ok", "str"), (HookResult, "type")]
)
async def test_garbage_answers_are_execution_failures(is_async, garbage, type_name):
    async def async_hook(context: InvocationContext, payload: Any) -> Any:
        return garbage

    hook_fn = async_hook if is_async else returning(garbage)
    ex, metrics = executor({Stage.RAW_BIDDER_RESPONSE: [[("m", "c", hook_fn)]]})
    payload, rejection = await ex.run(Stage.RAW_BIDDER_RESPONSE, {"x": 1}, "bidderA")
    assert (payload, rejection) == ({"x": 1}, None)
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.action) == (EXECUTION_FAILURE, "")
    assert hook.errors == [f"hook returned {type_name}, not a HookResult"]
    assert metrics.calls == [("m", "raw_bidder_response", "execution_error")]


async def test_hook_raising_cancelled_error_is_an_execution_failure():
    """A hook never fails the request (executor.py's docstring); an async hook whose own awaited
    task was cancelled lets CancelledError out, and ``future.exception()`` re-raises it."""

    async def hook(context: InvocationContext, payload: Any) -> Any:
        raise asyncio.CancelledError

    ex, _ = executor({Stage.BIDDER_REQUEST: [[("m", "c", hook)]]})
    await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    assert only(ex.outcomes[0].hooks()).status == EXECUTION_FAILURE


# -- invocation context and module context -------------------------------------------------------


async def test_module_context_passes_between_stages_per_module():
    contexts: list[tuple[str, str, dict[str, Any]]] = []

    def hook(name: str, gives: dict[str, Any] | None) -> Hook:
        def fn(context: InvocationContext, payload: Any) -> HookResult[Any]:
            contexts.append((name, context.hook_impl_code, dict(context.module_context)))
            return HookResult(module_context=gives)

        return fn

    ex, _ = executor(
        {
            Stage.ENTRYPOINT: [[("a", "a1", hook("a", {"seen": 1})), ("b", "b1", hook("b", None))]],
            Stage.RAW_AUCTION_REQUEST: [[("a", "a2", hook("a", {"more": 2})), ("b", "b2", hook("b", {"b": True}))]],
            Stage.BIDDER_REQUEST: [[("a", "a3", hook("a", None)), ("b", "b3", hook("b", None))]],
        }
    )
    for stage in (Stage.ENTRYPOINT, Stage.RAW_AUCTION_REQUEST, Stage.BIDDER_REQUEST):
        await ex.run(stage, {}, "e")
    assert contexts == [
        ("a", "a1", {}),
        ("b", "b1", {}),
        ("a", "a2", {"seen": 1}),
        ("b", "b2", {}),
        ("a", "a3", {"seen": 1, "more": 2}),
        ("b", "b3", {"b": True}),
    ]


async def test_module_context_kept_when_every_mutation_failed():
    seen: list[dict[str, Any]] = []

    def second(context: InvocationContext, payload: Any) -> HookResult[Any]:
        seen.append(dict(context.module_context))
        return HookResult()

    fails = returning(HookResult(module_context={"x": 1}, mutations=[failing("no")]))
    ex, _ = executor({Stage.ENTRYPOINT: [[("a", "1", fails)]], Stage.RAW_AUCTION_REQUEST: [[("a", "2", second)]]})
    await ex.run(Stage.ENTRYPOINT, {}, "e")
    await ex.run(Stage.RAW_AUCTION_REQUEST, {}, "e")
    assert seen == [{"x": 1}]


@pytest.mark.parametrize(
    ("modules", "module", "expected"),
    [
        ({"acme": {"mod": {"k": 1}}}, "acme.mod", {"k": 1}),
        ({"pb-mod": {"k": 2}}, "pb-mod", {"k": 2}),
        ({"acme": {"other": {}}}, "acme.mod", None),
        ({}, "acme.mod", None),
    ],
)
async def test_invocation_context_after_set_account(modules, module, expected):
    contexts: list[InvocationContext] = []

    def hook(context: InvocationContext, payload: Any) -> HookResult[Any]:
        contexts.append(context)
        return HookResult()

    ex, _ = executor({Stage.ENTRYPOINT: [[(module, "c", hook)]], Stage.BIDDER_REQUEST: [[(module, "d", hook)]]})
    await ex.run(Stage.ENTRYPOINT, {}, "http-request")
    ex.set_account("acc-1", None, modules)
    await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    before, after = contexts
    assert (before.endpoint, before.account_id, before.account_config, before.hook_impl_code) == (
        AUCTION, "", None, "c"
    )  # fmt: skip
    assert (after.endpoint, after.account_id, after.account_config, after.hook_impl_code) == (
        AUCTION, "acc-1", expected, "d"
    )  # fmt: skip


async def test_set_account_replaces_the_plans():
    calls: list[str] = []

    def hook(name: str) -> Hook:
        def fn(context: InvocationContext, payload: Any) -> HookResult[Any]:
            calls.append(name)
            return HookResult()

        return fn

    ex, _ = executor({Stage.BIDDER_REQUEST: [[("m", "host", hook("host"))]]})
    ex.set_account("a", None, {})
    await ex.run(Stage.BIDDER_REQUEST, {}, "b")
    ex.set_account("a", plans({Stage.BIDDER_REQUEST: [[("m", "account", hook("account"))]]}), {})
    await ex.run(Stage.BIDDER_REQUEST, {}, "b")
    assert calls == ["host", "account"]


# -- A/B tests -----------------------------------------------------------------------------------


def tag(module: str, status: str) -> dict[str, Any]:
    return {"name": ABTEST_ACTIVITY, "status": "success", "results": [{"status": status, "values": {"module": module}}]}


class Rand:
    """An injected ``randrange``: answers from a list, recording its calls."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.calls: list[int] = []

    def __call__(self, n: int) -> int:
        self.calls.append(n)
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


OWN_TAGS = {"activities": [{"name": "own", "status": "success"}]}


@pytest.mark.parametrize(
    ("percent", "roll", "log", "action", "tags", "called"),
    [
        (50, 49, True, NO_ACTION, {"activities": [OWN_TAGS["activities"][0], tag("ab", "run")]}, True),
        (50, 50, True, NO_INVOCATION, {"activities": [tag("ab", "skipped")]}, False),
        (50, 49, False, NO_ACTION, OWN_TAGS, True),
        (50, 50, False, NO_INVOCATION, {}, False),
        (100, 99, True, NO_ACTION, {"activities": [OWN_TAGS["activities"][0], tag("ab", "run")]}, True),
        (0, 0, True, NO_INVOCATION, {"activities": [tag("ab", "skipped")]}, False),
    ],
)
async def test_abtest_percent_active(percent, roll, log, action, tags, called):
    calls: list[Any] = []
    rand = Rand(roll)
    abtests = (AbTest("ab", frozenset(), percent, log),)
    ex, metrics = executor(
        {Stage.BIDDER_REQUEST: [[("ab", "c", returning(HookResult(analytics_tags=OWN_TAGS), calls))]]},
        abtests=abtests,
        rand=rand,
    )
    await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    hook = only(ex.outcomes[0].hooks())
    assert (hook.status, hook.action, hook.analytics_tags) == (SUCCESS, action, tags)
    assert bool(calls) is called
    assert rand.calls[0] == 100
    assert metrics.calls == [("ab", "bidder_request", "success_noop")]
    assert OWN_TAGS == {"activities": [{"name": "own", "status": "success"}]}  # the hook's own tags untouched


@pytest.mark.parametrize(("first_roll", "runs"), [(10, True), (90, False)])
async def test_abtest_decision_kept_for_the_module_across_stages(first_roll, runs):
    calls: list[str] = []

    def hook(name: str) -> Hook:
        def fn(context: InvocationContext, payload: Any) -> HookResult[Any]:
            calls.append(name)
            return HookResult()

        return fn

    rand = Rand(first_roll, 90 if runs else 10)  # a second roll would flip the decision
    ex, _ = executor(
        {
            Stage.ENTRYPOINT: [[("ab", "e", hook("e")), ("other", "o", hook("o"))]],
            Stage.BIDDER_REQUEST: [[("ab", "b1", hook("b1"))], [("ab", "b2", hook("b2"))]],
        },
        abtests=(AbTest("ab", frozenset(), 50, True),),
        rand=rand,
    )
    await ex.run(Stage.ENTRYPOINT, {}, "http-request")
    await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    assert calls == (["e", "o", "b1", "b2"] if runs else ["o"])
    actions = [h.action for o in ex.outcomes for h in o.hooks() if h.hook.module == "ab"]
    assert actions == ([NO_ACTION] * 3 if runs else [NO_INVOCATION] * 3)


async def test_abtest_skip_not_counted_as_a_hook_failure_in_analytics():
    ex, _ = executor(
        {Stage.BIDDER_REQUEST: [[("ab", "c", returning(HookResult()))]]},
        abtests=(AbTest("ab", frozenset(), 0, True),),
        rand=Rand(0),
    )
    await ex.run(Stage.BIDDER_REQUEST, {}, "bidderA")
    assert analytics_entries(ex.outcomes) == [
        {
            "stage": "bidder_request",
            "entity": "bidderA",
            "module_code": "ab",
            "hook_impl_code": "c",
            "status": "success",
            "action": "no_invocation",
            "analytics_tags": {"activities": [tag("ab", "skipped")]},
        }
    ]


# -- rejected bids -------------------------------------------------------------------------------


async def test_rejected_bids_collected_from_successful_hooks_only():
    mine = RejectedBids("bidderA", [], 301, {"code": 1, "message": "m"})
    theirs = RejectedBids("bidderB", [], 302)
    ok = returning(HookResult(rejected_bids=[mine], mutations=[set_key("k", 1)]))
    all_failed = returning(HookResult(rejected_bids=[RejectedBids("x", [], 1)], mutations=[failing("no")]))
    no_mutation = returning(HookResult(rejected_bids=[theirs]))
    ex, _ = executor(
        {Stage.ALL_PROCESSED_BID_RESPONSES: [[("a", "1", ok), ("b", "2", all_failed)], [("c", "3", no_mutation)]]}
    )
    await ex.run(Stage.ALL_PROCESSED_BID_RESPONSES, {}, "all_processed_bid_responses")
    assert ex.rejected_bids == [mine, theirs]


async def test_pending_hooks_cancelled_with_the_request():
    """The group's timeout is enforced by the awaiting request only: once it is cancelled (client
    gone, auction deadline), an async hook runs on unbounded."""
    state: list[str] = []

    async def sleepy(context: InvocationContext, payload: Any) -> HookResult[Any]:
        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            state.append("cancelled")
            raise
        state.append("finished")
        return HookResult()

    ex, _ = executor({Stage.BIDDER_REQUEST: [[("m", "c", sleepy)]]}, timeout_ms=5000)
    task = asyncio.ensure_future(ex.run(Stage.BIDDER_REQUEST, {}, "bidderA"))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.4)
    assert state == ["cancelled"]


# -- through the runtime: modules built from the host's configuration ----------------------------


class CountingModule:
    """Adds its configured ``label`` to the request at bidder_request; rejects the bidder named
    ``reject`` in its account configuration."""

    def __init__(self, label: str) -> None:
        self.label = label

    async def handle_bidder_request(self, context: InvocationContext, payload: Any) -> HookResult[Any]:
        config = context.account_config or {}
        if payload.get("bidder") == config.get("reject"):
            return HookResult(reject=True, nbr_code=9)
        return HookResult(mutations=[appended("labels", f"{self.label}:{context.hook_impl_code}")])


def build_counting(config: Any) -> CountingModule:
    label = config.get("label")
    if not isinstance(label, str):
        raise ValueError("label: must be a string")
    return CountingModule(label)


async def test_runtime_plans_run_through_the_executor():
    from hbserver.config import AccountHooks
    from hbserver.hooks.runtime import HookRuntime

    def plan(*codes: str) -> dict[str, Any]:
        sequence = [{"module-code": "test.counting", "hook-impl-code": code} for code in codes]
        groups = [{"timeout": 100, "hook-sequence": sequence}]
        return {"endpoints": {AUCTION: {"stages": {"bidder-request": {"groups": groups}}}}}

    rt = HookRuntime(
        True,
        {"test": {"counting": {"enabled": True, "label": "L"}}},
        plan("host"),
        plan("default"),
        {"test.counting": "tests.hooks.test_executor:build_counting"},
    )
    metrics = Metrics()
    ex = HookExecutor(AUCTION, rt.entry_plans(), metrics)
    settings = AccountHooks(modules={"test": {"counting": {"reject": "bad"}}}, execution_plan=plan("acc1", "acc2"))
    ex.set_account("a1", rt.account_plans("a1", settings), settings.modules)
    payload, rejection = await ex.run(Stage.BIDDER_REQUEST, {"bidder": "good"}, "good")
    assert rejection is None
    assert payload["labels"] == ["L:host", "L:acc1", "L:acc2"]
    _, rejection = await ex.run(Stage.BIDDER_REQUEST, {"bidder": "bad"}, "bad")
    assert rejection is not None and rejection.message() == (
        "Module test.counting (hook: host) rejected request with code 9 at bidder_request stage"
    )
    assert [o.entity for o in ex.outcomes] == ["good", "bad"]
    assert metrics.calls[-1] == ("test.counting", "bidder_request", "success_rejected")
    with pytest.raises(ValueError, match=r"^hooks.modules.test.counting: label: must be a string$"):
        HookRuntime(True, {"test": {"counting": {"enabled": True}}}, None, None,
                    {"test.counting": "tests.hooks.test_executor:build_counting"})  # fmt: skip


async def test_for_account_answers_whether_a_hook_runs_or_ran():
    """for_account's answer is ran() or runs_any() for the account's plans (the auction keeps the executor on it)."""
    from hbserver.config import AccountHooks
    from hbserver.hooks.runtime import HookRuntime

    groups = [{"timeout": 100, "hook-sequence": [{"module-code": "test.counting", "hook-impl-code": "c"}]}]
    plan = {"endpoints": {AUCTION: {"stages": {"bidder-request": {"groups": groups}}}}}
    rt = HookRuntime(True, {"test": {"counting": {"enabled": True, "label": "L"}}}, None, None,
                     {"test.counting": "tests.hooks.test_executor:build_counting"})  # fmt: skip
    with_plan, without = AccountHooks(execution_plan=plan), AccountHooks()
    for endpoint, settings, expected in [(AUCTION, with_plan, True), (ENDPOINT_AMP, with_plan, False),
                                         (AUCTION, without, False)]:  # fmt: skip
        ex = HookExecutor(endpoint, rt.entry_plans())
        assert ex.for_account(rt, "a1", settings) is expected
        assert expected == (ex.ran() or ex.runs_any())
    ex = HookExecutor(AUCTION, rt.entry_plans())
    assert ex.for_account(rt, "a1", with_plan)
    await ex.run(Stage.BIDDER_REQUEST, {"bidder": "good"}, "good")
    assert ex.for_account(rt, "a2", without)  # no hook runs for a2, but one ran in this request


# -- run_each: a stage's entities in one call ----------------------------------------------------


def _answer_by_payload(context: InvocationContext, payload: Any) -> Any:
    """A hook whose answer the payload chooses: ``{"do": ...}``."""
    do = payload.get("do")
    if do == "raise":
        raise RuntimeError("bad")
    if do == "fail":
        raise HookFailure("no data", HookResult(errors=["own"], module_context={"kept": True}))
    if do == "reject":
        return HookResult(reject=True, nbr_code=7)
    if do == "garbage":
        return 5
    if do == "slow":
        time.sleep(0.03)
    if do == "async":

        async def later() -> HookResult[Any]:
            return HookResult(mutations=[set_key("later", True)])

        return later()
    seen = dict(context.module_context)
    return HookResult(
        mutations=[set_key("seen", seen), failing("x")],
        module_context={payload["id"]: True},
        warnings=["w"],
        analytics_tags={"activities": [{"name": payload["id"], "status": "success"}]},
    )


RUN_EACH_PAYLOADS = [{"id": str(n), "do": do} for n, do in
                     enumerate(["", "raise", "fail", "reject", "garbage", "slow", "async", ""])]  # fmt: skip


@pytest.mark.parametrize("groups", [1, 2], ids=["one hook", "two groups (the general path)"])
async def test_run_each_is_run_over_each(groups: int) -> None:
    stages = {Stage.BIDDER_REQUEST: [[("m", f"c{n}", _answer_by_payload)] for n in range(groups)]}
    each, each_metrics = executor(stages, timeout_ms=20)
    one, one_metrics = executor(stages, timeout_ms=20)
    runs = [(dict(payload), payload["id"]) for payload in RUN_EACH_PAYLOADS]
    answers = await each.run_each(Stage.BIDDER_REQUEST, runs)
    expected = [await one.run(Stage.BIDDER_REQUEST, dict(payload), entity) for payload, entity in runs]
    assert answers == expected
    assert [(o.stage, o.entity, [(h.hook, h.status, h.action, h.errors, h.warnings, h.analytics_tags,
             h.debug_messages) for h in o.hooks()]) for o in each.outcomes] == [
        (o.stage, o.entity, [(h.hook, h.status, h.action, h.errors, h.warnings, h.analytics_tags, h.debug_messages)
         for h in o.hooks()]) for o in one.outcomes]  # fmt: skip
    assert sorted(each_metrics.calls) == sorted(one_metrics.calls)  # run_each counts its plain successes at the end
    assert each._contexts == one._contexts
    assert each.all_quiet is False


@pytest.mark.parametrize(
    ("answer", "quiet"),
    [(HookResult(), True), (HookResult(warnings=["w"]), True), (HookResult(mutations=[set_key("a", 1)]), False),
     (HookResult(reject=True), False), (None, False)],
)  # fmt: skip
async def test_run_each_tells_whether_every_answer_was_quiet(answer: Any, quiet: bool) -> None:
    def hook(context: InvocationContext, payload: Any) -> Any:
        return answer if payload["id"] == "2" else HookResult()

    each, _ = executor({Stage.BIDDER_REQUEST: [[("m", "c", hook)]]})
    answers = await each.run_each(Stage.BIDDER_REQUEST, [({"id": str(n)}, "b") for n in range(3)])
    assert each.all_quiet is quiet
    if quiet:
        assert answers == [({"id": str(n)}, None) for n in range(3)]


def test_module_sections_are_kept_bounded() -> None:
    from hbserver.hooks import executor as module

    module._SECTIONS.clear()
    kept = [{"v": {"m": {"n": n}}} for n in range(module.SECTIONS_SIZE + 5)]
    for modules in kept:
        assert module._section(modules, "v.m") == modules["v"]["m"]
        assert module._section(modules, "v.m") is modules["v"]["m"]
        assert len(module._SECTIONS) <= module.SECTIONS_SIZE
    assert module._section({"v.m": 1}, "v.m") == 1 and module._section({}, "v.m") is None


# -- HookResult: shared empty defaults ------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("mutations", lambda v: v.append(set_key("a", 1))),
        ("errors", lambda v: v.extend(["e"])),
        ("warnings", lambda v: v.__iadd__(["w"])),
        ("debug_messages", lambda v: v.insert(0, "d")),
        ("rejected_bids", lambda v: v.__setitem__(slice(0, 0), [1])),
        ("analytics_tags", lambda v: v.__setitem__("activities", [])),
        ("analytics_tags", lambda v: v.update(a=1)),
    ],
)
def test_result_defaults_are_shared_and_refuse_changes(field: str, change: Any) -> None:
    """What a hook leaves unset is one shared empty value: changing it raises (and changes nothing)."""
    first, second = HookResult(), HookResult()
    assert getattr(first, field) is getattr(second, field) and not getattr(first, field)
    with pytest.raises(TypeError, match="shared"):
        change(getattr(first, field))
    assert getattr(second, field) == ({} if field == "analytics_tags" else [])
    own = HookResult(**{field: {} if field == "analytics_tags" else []})
    assert getattr(own, field) is not getattr(first, field) and own == first  # a value of its own, equal


def test_result_of_defaults_without_its_constructor() -> None:
    """``HookResult.__new__(HookResult)`` (what hot hooks make) is a result of every default."""
    blank = HookResult.__new__(HookResult)
    assert blank == HookResult() and blank.module_context is None and blank.reject is False


def _noop(context: InvocationContext, payload: Any) -> Any:
    return HookResult()


@pytest.mark.parametrize(
    ("groups", "abtests", "single"),
    [
        ([[("m", "a", _noop)]], (), True),
        ([[("m", "a", _noop), ("m", "b", _noop)]], (), False),
        ([[("m", "a", _noop)], [("m", "b", _noop)]], (), False),
        ([[("m", "a", _noop)]], (AbTest("m", frozenset(), 50, True),), False),
        ([], (), False),
    ],
)  # fmt: skip
def test_plans_single_is_a_stage_of_one_hook(
    groups: list[list[Spec]], abtests: tuple[AbTest, ...], single: bool
) -> None:
    compiled = plans({Stage.BIDDER_REQUEST: groups}, timeout_ms=250, abtests=abtests)
    found = compiled.single.get(AUCTION, {}).get(Stage.BIDDER_REQUEST)
    assert (found is not None) is single
    if found is not None:
        assert found == (HookRef("m", "a"), _noop, 0.25, None)  # a plain function has no batch form
