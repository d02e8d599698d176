"""A hook's batch form (hbserver/hooks/api.batch_of, HookExecutor.run_each): one call for a stage's
payloads gives the outcomes, payloads, module context and metrics the hook called once per payload
gives, and a batch that fails, answers garbage or runs late fails or times out each of its runs."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest

from hbserver.hooks.api import (
    ChangedBatch,
    HookFailure,
    HookResult,
    InvocationContext,
    Mutation,
    QuietBatch,
    Stage,
    batch_of,
)
from hbserver.hooks.outcome import EXECUTION_FAILURE, FAILURE, NO_ACTION, SUCCESS, TIMEOUT, UPDATE
from hbserver.hooks.plan import HookRef
from hbserver.hooks.runtime import RequestPlans
from tests.hooks.test_executor import AUCTION, executor, failing, set_key


def _answer(context: InvocationContext, payload: Any) -> Any:
    """An answer the payload chooses (``{"do": ...}``), whatever the calls before it answered."""
    do = payload.get("do")
    if do == "reject":
        return HookResult(reject=True, nbr_code=7)
    if do == "garbage":
        return 5
    if do == "quiet":
        return HookResult(warnings=["w"], module_context={payload["id"]: "quiet"})
    if do == "bad mutation":
        return HookResult(mutations=[failing("x")])
    return HookResult(mutations=[set_key("seen", payload["id"])], module_context={payload["id"]: True},
                      analytics_tags={"activities": [{"name": payload["id"], "status": "success"}]})  # fmt: skip


class Batched:
    """A module whose bidder_request hook has a batch form; ``batch`` replaces that form's answer."""

    def __init__(self, batch: Any = None) -> None:
        self.batch = batch
        self.batch_calls = 0

    def handle_bidder_request(self, context: InvocationContext, payload: Any) -> Any:
        return _answer(context, payload)

    def handle_bidder_request_batch(self, context: InvocationContext, payloads: list[Any]) -> Any:
        self.batch_calls += 1
        if self.batch is not None:
            return self.batch(payloads)
        return [_answer(context, payload) for payload in payloads]

    def handle_raw_bidder_response(self, context: InvocationContext, payload: Any) -> Any:
        return HookResult()

    def handle_raw_bidder_response_batch(self, context: InvocationContext, payloads: list[Any]) -> Any:
        return [HookResult() for _ in payloads]

    def handle_auction_response(self, context: InvocationContext, payload: Any) -> Any:
        return HookResult()

    def handle_auction_response_batch(self, context: InvocationContext, payloads: list[Any]) -> Any:
        raise AssertionError("a stage of one payload has no batch form")


def _plain_hook(context: InvocationContext, payload: Any) -> Any:
    return HookResult()


@pytest.mark.parametrize(
    ("hook", "stage", "found"),
    [
        (Batched().handle_bidder_request, Stage.BIDDER_REQUEST, "handle_bidder_request_batch"),
        (Batched().handle_raw_bidder_response, Stage.RAW_BIDDER_RESPONSE, "handle_raw_bidder_response_batch"),
        (Batched().handle_auction_response, Stage.AUCTION_RESPONSE, None),  # one payload per request
        (_plain_hook, Stage.BIDDER_REQUEST, None),  # a plain function: no module to offer one
        (Batched().handle_raw_bidder_response, "raw_bidder_response", "handle_raw_bidder_response_batch"),
    ],
)  # fmt: skip
def test_batch_of(hook: Any, stage: Any, found: str | None) -> None:
    batch = batch_of(hook, stage)
    assert (batch.__name__ if batch is not None else None) == found


def test_module_without_a_batch_form_has_none() -> None:
    class Plain:
        def handle_bidder_request(self, context: InvocationContext, payload: Any) -> Any:
            return HookResult()

        handle_bidder_request_batch = "not callable"

    assert batch_of(Plain().handle_bidder_request, Stage.BIDDER_REQUEST) is None


def _shape(hooks: Any) -> list[Any]:
    return [(o.stage, o.entity, [(h.hook, h.status, h.action, h.errors, h.warnings, h.analytics_tags,
             h.debug_messages) for h in o.hooks()]) for o in hooks.outcomes]  # fmt: skip


BATCH_PAYLOADS = [{"id": str(n), "do": do} for n, do in
                  enumerate(["", "quiet", "reject", "garbage", "bad mutation", "", "quiet"])]  # fmt: skip


QUIET_PAYLOADS = [payload for payload in BATCH_PAYLOADS if payload["do"] == "quiet"]


@pytest.mark.parametrize("payloads", [BATCH_PAYLOADS, BATCH_PAYLOADS[:1], QUIET_PAYLOADS])
async def test_batch_answers_as_the_hook_called_once_per_payload(payloads: list[dict[str, Any]]) -> None:
    module = Batched()
    batched, batched_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]})
    assert batched.plans.single[AUCTION][Stage.BIDDER_REQUEST][3] is not None
    single, single_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", _answer)]]})  # no batch form
    runs = [(dict(payload), payload["id"]) for payload in payloads]
    answers = await batched.run_each(Stage.BIDDER_REQUEST, runs)
    expected = await single.run_each(Stage.BIDDER_REQUEST, [(dict(payload), entity) for payload, entity in runs])
    assert module.batch_calls == 1
    assert answers == expected
    assert _shape(batched) == _shape(single)
    assert sorted(batched_metrics.calls) == sorted(single_metrics.calls)
    assert batched._contexts == single._contexts
    assert batched.all_quiet is single.all_quiet is all(p["do"] == "quiet" for p in payloads)


def _fails_for(wanted: str) -> Any:
    def apply(payload: dict[str, Any]) -> dict[str, Any]:
        if payload["id"] == wanted:
            raise ValueError(f"not {wanted}")
        return {**payload, "set": True}

    return Mutation("update", ("request", "set"), apply)


SHARED_RESULTS = {
    "quiet": HookResult(),
    "context": HookResult(module_context={"k": 1}, warnings=["w"]),
    "one mutation": HookResult(mutations=[set_key("a", 1)], module_context={"k": 2}),
    "one mutation failing for one": HookResult(mutations=[_fails_for("1")]),
    "one mutation failing for all": HookResult(mutations=[failing("x")]),
    "two mutations, one failing": HookResult(mutations=[failing("x"), set_key("b", 2)]),
    "two mutations failing": HookResult(mutations=[failing("x"), failing("y")]),
    "two mutations, failing for one": HookResult(mutations=[set_key("b", 2), _fails_for("2")]),
    "reject": HookResult(reject=True, nbr_code=3),
}


@pytest.mark.parametrize("name", SHARED_RESULTS)
async def test_one_result_for_every_payload_as_the_hook_answering_it_each_time(name: str) -> None:
    """A batch answering every payload with one result (taken in bulk) against the hook answering it per payload."""
    shared = SHARED_RESULTS[name]
    module = Batched(lambda payloads: [shared] * len(payloads))
    batched, batched_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]})
    single, single_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", lambda context, payload: shared)]]})
    runs = [({"id": str(n)}, f"b{n}") for n in range(4)]
    answers = await batched.run_each(Stage.BIDDER_REQUEST, [(dict(p), e) for p, e in runs])
    assert answers == await single.run_each(Stage.BIDDER_REQUEST, [(dict(p), e) for p, e in runs])
    assert _shape(batched) == _shape(single)
    assert sorted(batched_metrics.calls) == sorted(single_metrics.calls)
    assert batched._contexts == single._contexts
    assert batched.all_quiet is single.all_quiet


def _raises(payloads: list[Any]) -> Any:
    raise RuntimeError("batch broke")


def _fails(payloads: list[Any]) -> Any:
    raise HookFailure("no data")


async def _coroutine(payloads: list[Any]) -> Any:
    return [HookResult() for _ in payloads]


def _slow(payloads: list[Any]) -> Any:
    time.sleep(0.03 * len(payloads))  # each run's share is over the 20 ms timeout
    return [HookResult(mutations=[set_key("late", True)]) for _ in payloads]


def _fast_enough(payloads: list[Any]) -> Any:
    time.sleep(0.03)  # the batch is over the timeout, each run's share under it
    return [HookResult(mutations=[set_key("done", True)]) for _ in payloads]


@pytest.mark.parametrize(
    ("batch", "status", "action", "error", "metric"),
    [
        (_raises, EXECUTION_FAILURE, "", "hook execution failed: RuntimeError: batch broke", "execution_error"),
        (_fails, FAILURE, "", "hook execution failed: no data", "failed"),
        (lambda payloads: [HookResult()], EXECUTION_FAILURE, "",
         "hook batch returned list, not a list of a HookResult per payload", "execution_error"),
        (lambda payloads: None, EXECUTION_FAILURE, "",
         "hook batch returned NoneType, not a list of a HookResult per payload", "execution_error"),
        (lambda payloads: tuple(HookResult() for _ in payloads), EXECUTION_FAILURE, "",
         "hook batch returned tuple, not a list of a HookResult per payload", "execution_error"),
        (_coroutine, EXECUTION_FAILURE, "",
         "hook batch returned coroutine, not a list of a HookResult per payload", "execution_error"),
        (_slow, TIMEOUT, "", "Hook execution timeout", "timeout"),
        (_fast_enough, SUCCESS, UPDATE, None, "success_updated"),
    ],
)  # fmt: skip
async def test_batch_failures_fail_each_run(batch: Any, status: str, action: str, error: str | None,
                                            metric: str) -> None:  # fmt: skip
    module = Batched(batch)
    hooks, metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]}, timeout_ms=20)
    runs = [({"id": str(n)}, f"bidder{n}") for n in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine left unawaited would warn
        answers = await hooks.run_each(Stage.BIDDER_REQUEST, runs)
    changed = status == SUCCESS
    assert [payload for payload, _ in answers] == [
        {**payload, "done": True} if changed else payload for payload, _ in runs
    ]
    assert [o.entity for o in hooks.outcomes] == ["bidder0", "bidder1", "bidder2"]
    for outcome in hooks.outcomes:
        (hook,) = outcome.hooks()
        assert (hook.hook, hook.status, hook.action) == (HookRef("m", "c"), status, action)
        assert hook.errors == ([] if error is None else [error])
    assert metrics.calls == [("m", "bidder_request", metric)] * 3


def test_plans_keep_the_batch_form_only_for_a_stage_of_one_hook() -> None:
    module = Batched()
    from tests.hooks.test_executor import plans

    alone = plans({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]})
    assert alone.single[AUCTION][Stage.BIDDER_REQUEST][3] == module.handle_bidder_request_batch
    shared = plans({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request), ("m", "d", _plain_hook)]]})
    assert Stage.BIDDER_REQUEST not in shared.single.get(AUCTION, {})
    assert isinstance(alone, RequestPlans)


def _tagged(payload: Any) -> HookResult[Any]:
    """A quiet result of the payload's own (its analytics tags name it)."""
    if payload.get("do") == "raise":
        raise RuntimeError(f"no result for {payload['id']}")
    return HookResult(analytics_tags={"activities": [{"name": payload["id"], "status": "success"}]})


def _late_quiet(payloads: list[Any]) -> Any:
    time.sleep(0.03 * len(payloads))  # each run's share is over the 20 ms timeout
    return QuietBatch(_tagged)


# a quiet batch (QuietBatch) against the hook answering each payload what its result_of makes:
# (batch, payloads' "do", timeout, what each run's outcome is, the metric of each run)
QUIET_CASES = {
    "in time": (lambda payloads: QuietBatch(_tagged), ["", "", ""], 1000, (SUCCESS, NO_ACTION, None), "success_noop"),
    "one payload": (lambda payloads: QuietBatch(_tagged), [""], 1000, (SUCCESS, NO_ACTION, None), "success_noop"),
    "late": (_late_quiet, ["", ""], 20, (TIMEOUT, "", "Hook execution timeout"), "timeout"),
}


@pytest.mark.parametrize("name", QUIET_CASES)
async def test_a_quiet_batch_answers_as_the_hook_answering_each_its_result(name: str) -> None:
    batch, dos, timeout_ms, (status, action, error), metric = QUIET_CASES[name]
    module = Batched(batch)
    hooks, metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]},
                              timeout_ms=timeout_ms)  # fmt: skip
    single, single_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", lambda context, p: _tagged(p))]]})
    runs = [({"id": str(n), "do": do}, f"bidder{n}") for n, do in enumerate(dos)]
    answers = await hooks.run_each(Stage.BIDDER_REQUEST, [(dict(p), e) for p, e in runs])
    assert answers == [(payload, None) for payload, _ in runs]
    assert metrics.calls == [("m", "bidder_request", metric)] * len(runs)
    assert hooks.all_quiet is (status == SUCCESS)
    assert [o.entity for o in hooks.outcomes] == [entity for _, entity in runs]
    for outcome, (payload, _) in zip(hooks.outcomes, runs, strict=True):
        (hook,) = outcome.hooks()
        assert (hook.status, hook.action) == (status, action)
        assert hook.errors == ([] if error is None else [error])
        assert hook.analytics_tags == ({} if error else _tagged(payload).analytics_tags)
    if status == SUCCESS:  # the same as the hook called per payload
        await single.run_each(Stage.BIDDER_REQUEST, [(dict(p), e) for p, e in runs])
        assert _shape(hooks) == _shape(single)
        assert sorted(metrics.calls) == sorted(single_metrics.calls)


@pytest.mark.parametrize("timeout_ms", [1000, 20])
async def test_a_quiet_batch_whose_result_cannot_be_made_fails_that_run_alone(timeout_ms: int) -> None:
    """result_of raising (a module's bug) never fails the request: that run's outcome shows the failure
    (in time, once read), the others theirs (late: timed out)."""
    module = Batched(lambda payloads: QuietBatch(_tagged) if timeout_ms > 20 else _late_quiet(payloads))
    hooks, _ = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]}, timeout_ms=timeout_ms)
    runs = [({"id": "0"}, "a"), ({"id": "1", "do": "raise"}, "b"), ({"id": "2"}, "c")]
    answers = await hooks.run_each(Stage.BIDDER_REQUEST, runs)
    assert answers == [(payload, None) for payload, _ in runs]
    shown = [(h.status, h.errors) for o in hooks.outcomes for h in o.hooks()]
    other = (SUCCESS, []) if timeout_ms > 20 else (TIMEOUT, ["Hook execution timeout"])
    assert shown == [other, (EXECUTION_FAILURE, ["hook execution failed: RuntimeError: no result for 1"]), other]



def _set_in_place(key: str, value: Any) -> Mutation[dict[str, Any]]:
    def apply(payload: dict[str, Any]) -> dict[str, Any]:
        payload[key] = value
        return payload

    return Mutation("update", ("request", key), apply)


def _changed_result(payload: Any) -> HookResult[Any]:
    """What a changed batch's run stands for: the payload's id set in place, and its module context."""
    if payload.get("do") == "raise":
        raise RuntimeError(f"no result for {payload['id']}")
    return HookResult(mutations=[_set_in_place("seen", payload["id"])], module_context={payload["id"]: True},
                      analytics_tags={"activities": [{"name": payload["id"], "status": "success"}]})  # fmt: skip


def _apply_seen(payloads: list[Any]) -> None:
    for payload in payloads:
        payload["seen"] = payload["id"]


def _changed(payloads: list[Any]) -> ChangedBatch:
    return ChangedBatch(_changed_result, _apply_seen, {payload["id"]: True for payload in payloads})


def _late_changed(payloads: list[Any]) -> ChangedBatch:
    time.sleep(0.03 * len(payloads))  # each run's share is over the 20 ms timeout
    return _changed(payloads)


def _apply_raises(payloads: list[Any]) -> None:
    raise ValueError("cannot apply")


# a changed batch (ChangedBatch) against the hook answering each payload what its result_of makes (its
# mutations applied by the executor): (batch, timeout, each run's (status, action, errors), metric, changed)
CHANGED_CASES = {
    "in time": (_changed, 1000, (SUCCESS, UPDATE, []), "success_updated", True),
    "late": (_late_changed, 20, (TIMEOUT, "", ["Hook execution timeout"]), "timeout", False),
    "apply raises": (lambda payloads: ChangedBatch(_changed_result, _apply_raises, {"x": 1}), 1000,
                     (EXECUTION_FAILURE, "", ["hook execution failed: ValueError: cannot apply"]), "execution_error",
                     False),
}  # fmt: skip


@pytest.mark.parametrize("name", CHANGED_CASES)
@pytest.mark.parametrize("count", [1, 3])
async def test_a_changed_batch_answers_as_the_hook_answering_each_its_result(name: str, count: int) -> None:
    batch, timeout_ms, (status, action, errors), metric, changed = CHANGED_CASES[name]
    module = Batched(batch)
    hooks, metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]},
                              timeout_ms=timeout_ms)  # fmt: skip
    single, single_metrics = executor({Stage.BIDDER_REQUEST: [[("m", "c", lambda context, p: _changed_result(p))]]})
    runs = [({"id": str(n)}, f"bidder{n}") for n in range(count)]
    given = [(dict(payload), entity) for payload, entity in runs]
    answers = await hooks.run_each(Stage.BIDDER_REQUEST, given)
    assert [answer for answer, _ in answers] == [{**p, "seen": p["id"]} if changed else p for p, _ in runs]
    assert all(answer is payload for (answer, _), (payload, _) in zip(answers, given, strict=True))  # in place
    assert all(rejection is None for _, rejection in answers)
    assert metrics.calls == [("m", "bidder_request", metric)] * count
    assert hooks.all_quiet is False and hooks.all_kept is (status == SUCCESS)
    for outcome in hooks.outcomes:
        (hook,) = outcome.hooks()
        assert (hook.status, hook.action, hook.errors) == (status, action, errors)
    assert hooks._contexts.get("m", {}) == ({p["id"]: True for p, _ in runs} if changed else {})
    if changed:  # the same as the hook called per payload, its mutations applied one by one
        expected = await single.run_each(Stage.BIDDER_REQUEST, [(dict(p), e) for p, e in runs])
        assert answers == expected
        assert _shape(hooks) == _shape(single)
        assert sorted(metrics.calls) == sorted(single_metrics.calls)
        assert hooks._contexts == single._contexts


async def test_a_changed_batch_whose_result_cannot_be_made_fails_that_run_alone() -> None:
    """result_of raising when the outcomes are read shows that run's failure; its changes stay applied."""
    module = Batched(_changed)
    hooks, _ = executor({Stage.BIDDER_REQUEST: [[("m", "c", module.handle_bidder_request)]]})
    runs = [({"id": "0"}, "a"), ({"id": "1", "do": "raise"}, "b")]
    answers = await hooks.run_each(Stage.BIDDER_REQUEST, runs)
    assert [answer["seen"] for answer, _ in answers] == ["0", "1"]
    shown = [(h.status, h.action, h.errors) for o in hooks.outcomes for h in o.hooks()]
    failed = (EXECUTION_FAILURE, "", ["hook execution failed: RuntimeError: no result for 1"])
    assert shown == [(SUCCESS, UPDATE, []), failed]


class TwoStages:
    """A module with both batch forms, each noting what its context holds when called."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any, dict[str, Any]]] = []

    def _note(self, context: InvocationContext) -> None:
        self.seen.append((context.hook_impl_code, context.account_id, context.account_config,
                          dict(context.module_context)))  # fmt: skip

    def handle_bidder_request(self, context: InvocationContext, payload: Any) -> Any:
        raise AssertionError("the batch form runs")

    def handle_bidder_request_batch(self, context: InvocationContext, payloads: list[Any]) -> Any:
        self._note(context)
        return [HookResult(module_context={payload["id"]: context.hook_impl_code}) for payload in payloads]

    def handle_raw_bidder_response(self, context: InvocationContext, payload: Any) -> Any:
        raise AssertionError("the batch form runs")

    def handle_raw_bidder_response_batch(self, context: InvocationContext, payloads: list[Any]) -> Any:
        self._note(context)
        return [HookResult() for _ in payloads]


@pytest.mark.parametrize(
    ("accounts", "expected"),
    [
        # one account: the raw batch has its own hook code, the account's section and the context the first added
        ([("acc-1", {"m": {"k": 1}})],
         [("br", "acc-1", {"k": 1}, {}), ("raw", "acc-1", {"k": 1}, {"a": "br"})]),
        # the account changed between the stages: the second batch has the new account's section
        ([("acc-1", {"m": {"k": 1}}), ("acc-2", {"m": {"k": 2}})],
         [("br", "acc-1", {"k": 1}, {}), ("raw", "acc-2", {"k": 2}, {"a": "br"})]),
        # no account config: none at either stage
        ([("acc-1", {})], [("br", "acc-1", None, {}), ("raw", "acc-1", None, {"a": "br"})]),
    ],
)  # fmt: skip
async def test_a_module_batch_context_at_each_stage(accounts: list[tuple[str, Any]], expected: list[Any]) -> None:
    module = TwoStages()
    ex, _ = executor({Stage.BIDDER_REQUEST: [[("m", "br", module.handle_bidder_request)]],
                      Stage.RAW_BIDDER_RESPONSE: [[("m", "raw", module.handle_raw_bidder_response)]]})  # fmt: skip
    ex.set_account(accounts[0][0], None, accounts[0][1])
    await ex.run_each(Stage.BIDDER_REQUEST, [({"id": "a"}, "a")])
    ex.set_account(accounts[-1][0], None, accounts[-1][1])
    await ex.run_each(Stage.RAW_BIDDER_RESPONSE, [({"id": "a"}, "a")])
    assert module.seen == expected
