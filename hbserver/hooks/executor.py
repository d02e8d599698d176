"""One request's hooks: each stage's groups run in order, the hooks of a group together, their answers
applied in plan order (PBS-Go's ``hookexecution``).

A hook that raises, runs past its group's timeout, answers something that is not a
:class:`~hbserver.hooks.api.HookResult`, or asks for a mutation that fails, never fails the request:
it is recorded in the stage's outcome, and the stage goes on without it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Callable, Mapping
from itertools import repeat
from time import perf_counter
from types import MappingProxyType
from typing import Any

from hbserver.hooks.api import (
    ChangedBatch,
    HookFailure,
    HookResult,
    InvocationContext,
    Mutation,
    QuietBatch,
    RejectedBids,
    Stage,
)
from hbserver.hooks.outcome import (
    EXECUTION_FAILURE,
    FAILURE,
    REJECT,
    SUCCESS,
    TIMEOUT,
    UPDATE,
    HookCall,
    Rejection,
    StageOutcome,
    stage_outcome,
)
from hbserver.hooks.plan import AbTest, HookRef
from hbserver.hooks.runtime import NO_VIEW, CompiledGroup, HookRuntime, RequestPlans, module_section

log = logging.getLogger("hbserver.hooks")

ModuleCounter = Callable[[str, str, str, int], None]  # (module, stage, outcome, calls) -> counted
# a plain success of run_each: (ref, started, done, result, whether its mutations were all applied), its HookCall
# made when read
_Success = tuple[HookRef, float, float, HookResult[Any], bool]
# a quiet (or changed) batch in time: its ref, started, done, what makes each payload's result, and whether
# the batch changed the payloads (its results' mutations all applied)
_Quiet = tuple[HookRef, float, float, Callable[[Any], HookResult[Any]], bool]
# a stage run: stage, entity, each group's calls; or run_each's: stage, its (payload, entity) runs, a call per
# run; or run_batch's: stage, (its payloads, their entities or None: each payload's ``bidder``), a call per payload
# (or its _Quiet)
_StageRun = (
    tuple[Stage, str, list[list[HookCall]]]
    | tuple[Stage, list[tuple[Any, str]], list[HookCall | _Success]]
    | tuple[Stage, tuple[list[Any], list[str] | None], list[HookCall | _Success]]
    | tuple[Stage, tuple[list[Any], list[str] | None], _Quiet]
)
_UNSET: Any = object()
_new = object.__new__  # a slotted dataclass without its constructor's call (one function fewer run, cold)


class HookExecutor:
    """Runs one request's plans; :attr:`outcomes` is what ``ext.prebid.modules`` and analytics show."""

    # whether the last run_each's every run answered a plain result without mutations (each payload
    # left as given, none rejected): its caller then has nothing to apply
    all_quiet = False
    # whether it answered each payload with the payload object given, none rejected (quiet, or changed in place by
    # a ChangedBatch): its caller then has nothing to take from the answers
    all_kept = False
    # until set_account (class defaults: an executor is made per request, and these mostly stay)
    account_id = ""
    account_modules: Mapping[str, Any] = MappingProxyType({})
    _outcomes: list[StageOutcome] | None = None  # built from _runs when read
    _settings: Any = _UNSET  # the account's hooks settings set_account was given from (for_account)
    _abtest_runs: dict[str, bool] | None = None  # module -> runs (decided at its first hook), made at the first
    # run_batch's last invocation context and its module (reused by the module's batch at a later stage)
    _batch_invocation: tuple[str, InvocationContext] | None = None

    def __init__(
        self,
        endpoint: str,
        plans: RequestPlans,
        count: ModuleCounter | None = None,
        rand: Callable[[int], int] = random.randrange,
    ) -> None:
        self.endpoint = endpoint
        self.plans = plans
        # the stages with hooks, those of one plain hook, whether any hook is at this endpoint
        self.stages, self._single, self._here = plans.views.get(endpoint, NO_VIEW)
        self._runs: list[_StageRun] = []
        self._contexts: dict[str, dict[str, Any]] = {}
        self._invocations: dict[int, InvocationContext] = {}  # by id(HookRef) of the plans, once the account is known
        self.rejected_bids: list[RejectedBids] = []  # what hooks removed and the auction reports
        self._count = count
        self._rand = rand
        # read at once by for_account: set here, so the reads find them on the instance (a read that falls back
        # to the class's default is a generic lookup, through the type's cache: cold lines once a request)
        self._settings = _UNSET
        self.account_id = ""
        self._outcomes = None
        self._batch_invocation = None

    @property
    def outcomes(self) -> list[StageOutcome]:
        """Each stage run's outcome so far (built on first read after a run)."""
        if self._outcomes is None:
            built: list[StageOutcome] = []
            for stage, entity, groups in self._runs:
                if isinstance(entity, str):
                    built.append(stage_outcome(stage, entity, groups))
                else:  # run_each's or run_batch's: a call per payload (so far)
                    if type(groups) is tuple:  # a quiet batch's
                        groups = _quiet_successes(groups, entity[0])  # type: ignore[index]
                    pairs = zip(_entities(entity), groups, strict=False)
                    built.extend(stage_outcome(stage, each, [[_call_of(call)]]) for each, call in pairs)
            self._outcomes = built
        return self._outcomes

    @outcomes.setter
    def outcomes(self, outcomes: list[StageOutcome]) -> None:  # for tests of what reads them
        self._runs = []
        self._outcomes = outcomes

    def ran(self) -> bool:
        """Whether any stage ran hooks for this request."""
        return bool(self._runs) or bool(self._outcomes)

    def set_account(self, account_id: str, plans: RequestPlans | None, modules: Mapping[str, Any]) -> None:
        """The account's plans (None: none beyond the host's) and its ``hooks.modules``."""
        self.account_id = account_id
        self.account_modules = modules
        self._batch_invocation = None
        if self._invocations:
            self._invocations.clear()
        if self._contexts:
            self._contexts = {module: context for module, context in self._contexts.items() if context}
        if plans is not None:
            self.plans = plans
            self.stages, self._single, self._here = plans.views.get(self.endpoint, NO_VIEW)

    def for_account(self, runtime: HookRuntime, account_id: str, settings: Any) -> bool:
        """:meth:`set_account` from the account's ``hooks`` settings (``plans`` and ``modules``): nothing
        to do when they are the ones already set (the request's account is read at two stages). Whether
        any hook ran or runs at this endpoint (:meth:`ran` or :meth:`runs_any`, read inline: this runs
        once a request, its code cold; so are the account's plans read where the runtime keeps them)."""
        if settings is not self._settings or account_id != self.account_id:
            self._settings = settings
            cached = runtime.account_cache.get(account_id)  # account_plans's, inline where it kept them
            if cached is not None and cached[0] is settings:
                plans = cached[1]
            else:
                plans = runtime.account_plans(account_id, settings)
            if self._invocations or self._contexts or self._batch_invocation is not None:
                self.set_account(account_id, plans, settings.modules)  # a hook ran: set_account keeps its context
            else:  # set_account's, inline (nothing of a hook to keep; one function fewer run, cold)
                self.account_id, self.account_modules = account_id, settings.modules
                if plans is not None:
                    self.plans = plans
                    self.stages, self._single, self._here = plans.views.get(self.endpoint, NO_VIEW)
        if self._runs or self._outcomes:  # a hook ran
            return True
        return self._here

    def runs_any(self) -> bool:
        """Whether any stage at this endpoint has hooks."""
        return self.endpoint in self.plans.endpoints

    async def run(self, stage: Stage, payload: Any, entity: str) -> tuple[Any, Rejection | None]:
        """The stage's groups over ``payload``: the payload they leave, and the reject that ended it."""
        groups = self.plans.stages.get((self.endpoint, stage))
        if not groups:
            return payload, None
        ran: list[list[HookCall]] = []
        self._runs.append((stage, entity, ran))
        self._outcomes = None
        for group in groups:
            calls, pending = self._call_group(group, payload)
            if pending:
                await self._await(pending, group.timeout_ms / 1000)
                self._outcomes = None
            ran.append(calls)
            payload, rejection = self._apply(stage, calls, payload)
            if rejection is not None:
                return payload, rejection
        return payload, None

    async def run_each(self, stage: Stage, runs: list[tuple[Any, str]]) -> list[tuple[Any, Rejection | None]]:
        """:meth:`run` over each (payload, entity) in turn (a stage's bidders, their answers): the same
        outcomes, in one call; a stage of one hook, the common case, without the general path's lists
        (the runs recorded as one entry, their metrics counted once at the end), and in one call of
        the hook's batch form where its module has one (:meth:`run_batch`)."""
        single = self._single.get(stage)
        if single is not None and single[3] is not None and runs:
            return self.run_batch(stage, [payload for payload, _ in runs], [entity for _, entity in runs])  # type: ignore[return-value]
        self.all_quiet = self.all_kept = False
        if single is None:
            return [await self.run(stage, payload, entity) for payload, entity in runs]
        if not runs:
            return []
        return await self._run_single(stage, single, runs)

    def run_batch(
        self, stage: Stage, payloads: list[Any], entities: list[str] | None = None
    ) -> list[tuple[Any, Rejection | None]] | None:
        """:meth:`run_each` where it needs no await, over its payloads and their entities (None: each
        payload's ``bidder``, as the payloads of the batch stages have): the stage's one hook in its
        batch form (:func:`~hbserver.hooks.api.batch_of`), one call for every payload, its time shared
        out between them (each its share, timed out where the share is over the timeout); None when the
        stage has no batch form (await run_each then).

        A :class:`~hbserver.hooks.api.QuietBatch` or :class:`~hbserver.hooks.api.ChangedBatch` in time (the
        common case) is taken here: each payload kept (a changed batch's changes applied and its module
        context added first), a plain success recorded for each (its result made when the outcomes are
        read). This runs once a stage with its code cold: each further function run, or named-tuple field
        read by name, costs cache lines (see bench/PROFILE.md), hence one function, batches unpacked."""
        single = self._single.get(stage)
        if single is None or single[3] is None or not payloads:
            return None
        ref, _, timeout_s, batch = single
        # the hook's context: the one the module's batch at an earlier stage had, its hook code set, else made as
        # _invocation makes it (inline; without the constructor's call: its code is one more function run cold)
        module = ref.module
        kept_invocation = self._batch_invocation
        if kept_invocation is not None and kept_invocation[0] == module:
            invocation = kept_invocation[1]
            invocation.hook_impl_code = ref.code
        else:
            context = self._contexts.get(module)
            if context is None:
                context = self._contexts[module] = {}
            modules, config = self.account_modules, None
            if modules:
                kept = _SECTIONS.get((id(modules), module))
                config = kept[1] if kept is not None and kept[0] is modules else _section(modules, module)
            invocation = _new(InvocationContext)
            invocation.endpoint, invocation.account_id = self.endpoint, self.account_id
            invocation.account_config, invocation.module_context, invocation.hook_impl_code = config, context, ref.code
            self._batch_invocation = (module, invocation)
        started = perf_counter()
        try:
            results: Any = batch(invocation, payloads)
        except (Exception, asyncio.CancelledError) as exc:  # a sync hook's CancelledError is its own
            results = exc
        share = (perf_counter() - started) / len(payloads)
        kind = type(results)
        if (kind is not QuietBatch and kind is not ChangedBatch) or share > timeout_s:
            return self._take_results(stage, (ref, started, share, timeout_s), invocation, results, payloads,
                                      entities)  # fmt: skip
        changed = kind is ChangedBatch
        if changed:
            result_of, apply, module_context = results
            try:
                apply(payloads)
            except Exception as exc:
                return self._changed_failed(stage, ref, started, exc, payloads, entities)
            if module_context:
                invocation.module_context.update(module_context)
        else:
            result_of = results[0]
        self._runs.append((stage, (payloads, entities), (ref, started, started + share, result_of, changed)))
        self._outcomes = None
        self.all_quiet, self.all_kept = not changed, True
        count = self._count  # read, then called: a method call on an instance attribute is a generic lookup, cold
        if count is not None:
            count(ref.module, stage, "success_updated" if changed else "success_noop", len(payloads))
        answers = []  # each payload kept (a loop: zip() with repeat() runs C code the request uses nowhere else)
        for payload in payloads:
            answers.append((payload, None))
        return answers

    def _take_results(
        self, stage: Stage, timed: tuple[HookRef, float, float, float], invocation: InvocationContext, results: Any,
        payloads: list[Any], entities: list[str] | None,
    ) -> list[tuple[Any, Rejection | None]]:  # fmt: skip
        """run_batch's answer other than a quiet or changed batch in time: each payload's result (a late quiet
        or changed batch's each timed out, nothing applied), the batch's exception, or its garbage."""
        ref, started, share, timeout_s = timed
        if type(results) is QuietBatch or type(results) is ChangedBatch:
            results = _results_of(results[0], payloads)  # result_of: each run timed out below (nothing applied)
        calls: list[HookCall | _Success] = []
        self._runs.append((stage, (payloads, entities), calls))  # each payload's outcome, built when read
        self._outcomes = None
        self.all_quiet = self.all_kept = False
        if type(results) is list and len(results) == len(payloads) and share <= timeout_s:  # the common case
            answers = self._take_plain(stage, (ref, started, started + share), results, payloads,
                                       invocation.module_context, calls)  # fmt: skip
            if answers is not None:
                return answers
        return self._take_each(stage, (ref, started, share, timeout_s), invocation, results, payloads, calls)

    def _changed_failed(
        self, stage: Stage, ref: HookRef, started: float, exc: Exception, payloads: list[Any],
        entities: list[str] | None,
    ) -> list[tuple[Any, Rejection | None]]:  # fmt: skip
        """A changed batch whose ``apply`` raised ``exc``: each run failed."""
        calls: list[HookCall | _Success] = []
        self._runs.append((stage, (payloads, entities), calls))
        self._outcomes = None
        self.all_quiet = self.all_kept = False
        return [self._batch_failed(stage, ref, started, exc, payload, calls) for payload in payloads]

    async def _run_single(
        self, stage: Stage, single: tuple[HookRef, Any, float, Any], runs: list[tuple[Any, str]]
    ) -> list[tuple[Any, Rejection | None]]:
        """run_each's stage of one hook, called once per run."""
        ref, hook, timeout_s, _ = single
        invocation = self._invocations.get(id(ref)) or self._invocation(ref)
        calls: list[HookCall | _Success] = []
        self._runs.append((stage, runs, calls))  # each run's outcome, built when read
        self._outcomes = None
        tally = [0, 0]  # plain successes without and with mutations, counted at the end
        answers = []
        try:
            for payload, _ in runs:
                started = perf_counter()
                try:
                    result = hook(invocation, payload)
                except (Exception, asyncio.CancelledError) as exc:  # a sync hook's CancelledError is its own
                    call = HookCall(ref, started)
                    _fail(call, exc)
                else:
                    if isinstance(result, HookResult):
                        answered = (ref, started, perf_counter(), result, timeout_s)
                        answers.append(self._take(stage, answered, invocation, payload, calls, tally))
                        continue
                    call = HookCall(ref, started)
                    await self._settle(call, result, timeout_s)
                calls.append(call)
                answers.append(self._apply(stage, [call], payload))
            self.all_quiet = self.all_kept = tally[0] == len(runs)
        finally:
            self._tally(ref, stage, tally)
        return answers

    def _tally(self, ref: HookRef, stage: Stage, tally: list[int]) -> None:
        """run_each's plain successes counted: (without mutations, with them)."""
        count = self._count
        if count is not None:
            if tally[0]:
                count(ref.module, stage, "success_noop", tally[0])
            if tally[1]:
                count(ref.module, stage, "success_updated", tally[1])

    def _take_each(
        self, stage: Stage, timed: tuple[HookRef, float, float, float], invocation: InvocationContext,
        results: Any, payloads: list[Any], calls: list[HookCall | _Success],
    ) -> list[tuple[Any, Rejection | None]]:  # fmt: skip
        """A batch's results taken one by one (:meth:`_take`), each run its share of the call's time; a
        batch that raised or answered anything but a list of a HookResult per payload fails every run."""
        ref, started, share, timeout_s = timed
        if type(results) is not list or len(results) != len(payloads):
            return [self._batch_failed(stage, ref, started, results, payload, calls) for payload in payloads]
        tally = [0, 0]
        answers = []
        for payload, result in zip(payloads, results, strict=True):
            done = started + share
            if isinstance(result, HookResult):
                answered = (ref, started, done, result, timeout_s)
                answers.append(self._take(stage, answered, invocation, payload, calls, tally))
            else:
                call = HookCall(ref, started)
                if isinstance(result, Exception):  # this run's failure alone (as the hook raising it)
                    _fail(call, result)
                else:
                    _finish(call, result, None)
                calls.append(call)
                answers.append(self._apply(stage, [call], payload))
            started = done
        self._tally(ref, stage, tally)
        self.all_quiet = self.all_kept = tally[0] == len(payloads)
        return answers

    def _take_plain(
        self, stage: Stage, timed: tuple[HookRef, float, float], results: list[Any], payloads: list[Any],
        context: dict[str, Any], calls: list[HookCall | _Success],
    ) -> list[tuple[Any, Rejection | None]] | None:  # fmt: skip
        """A batch's results taken in bulk in its two common cases (each then :meth:`_take`'s plain
        success): one result for every payload, or a quiet one for each (no mutation, no module context);
        None for any other (nothing taken here then), each then taken alone."""
        ref, started, done = timed
        shared = results[0]
        size = len(results)
        alike = True  # a batch answers alike payloads alike (a plain loop: all() over map() costs more)
        for result in results:
            if result is not shared:
                alike = False
                break
        if alike:
            if not isinstance(shared, HookResult) or shared.reject or shared.rejected_bids:
                return None
            if shared.module_context:
                context.update(shared.module_context)
            if shared.mutations:
                return self._apply_shared(stage, (ref, started, done, shared, True), payloads, calls)
            calls.extend([(ref, started, done, shared, False)] * size)
        else:
            quiet = _quiet_calls(results, ref, started, done)
            if quiet is None:
                return None
            calls.extend(quiet)
        self.all_quiet = self.all_kept = True
        if self._count is not None:
            self._count(ref.module, stage, "success_noop", size)
        return list(zip(payloads, repeat(None)))

    def _apply_shared(
        self, stage: Stage, success: _Success, payloads: list[Any], calls: list[HookCall | _Success]
    ) -> list[tuple[Any, Rejection | None]]:
        """The mutations of one result every payload of a batch got, applied to each (a payload where
        one fails gets the rest, as :func:`_mutated`)."""
        mutations = success[3].mutations
        answers = []
        failed = 0
        if len(mutations) == 1:
            apply = mutations[0].apply
            for payload in payloads:
                try:
                    answers.append((apply(payload), None))
                except Exception as exc:  # the rare case: as _mutated's (its one mutation failed)
                    call = _call_of(success)
                    answers.append((_mutate_rest(payload, mutations, 0, exc, call), None))
                    calls.append(call)
                    failed += 1
                    continue
                calls.append(success)
        else:
            for payload in payloads:
                changed, ok = _mutated(payload, success, calls)
                failed += not ok
                answers.append((changed, None))
        if self._count is not None:
            if len(payloads) > failed:
                self._count(success[0].module, stage, "success_updated", len(payloads) - failed)
            if failed:
                self._count(success[0].module, stage, "execution_error", failed)
        return answers

    def _batch_failed(
        self, stage: Stage, ref: HookRef, started: float, results: Any, payload: Any, calls: list[HookCall | _Success]
    ) -> tuple[Any, Rejection | None]:
        """One run of a batch that raised (``results`` the exception) or answered garbage."""
        call = HookCall(ref, started)
        if isinstance(results, BaseException):
            _fail(call, results)
        else:
            if inspect.iscoroutine(results):
                results.close()  # a batch form is a plain function: its coroutine is never awaited
            call.done = perf_counter()
            call.status = EXECUTION_FAILURE
            call.error = f"hook batch returned {type(results).__name__}, not a list of a HookResult per payload"
        calls.append(call)
        return self._apply(stage, [call], payload)

    def _take(
        self, stage: Stage, answered: tuple[HookRef, float, float, HookResult[Any], float],
        invocation: InvocationContext, payload: Any, calls: list[HookCall | _Success], tally: list[int],
    ) -> tuple[Any, Rejection | None]:  # fmt: skip
        """A HookResult run_each got for ``payload`` (ref, started, done, result, timeout): a plain success
        (no reject, no rejected bids, in time) taken inline, recorded without a HookCall; else :meth:`_apply`'s."""
        ref, started, done, result, timeout_s = answered
        if not (result.reject or result.rejected_bids) and done - started <= timeout_s:
            if result.module_context:
                invocation.module_context.update(result.module_context)
            if not result.mutations:
                tally[0] += 1
                calls.append((ref, started, done, result, False))  # its HookCall made when read
                return payload, None
            payload, ok = _mutated(payload, (ref, started, done, result, True), calls)
            if ok:
                tally[1] += 1
            elif self._count is not None:
                self._count(ref.module, stage, "execution_error", 1)
            return payload, None
        call = HookCall(ref, started)
        if done - started > timeout_s:
            _timed_out(call)  # a plain hook cannot be cut off: it is timed out after the fact
        else:
            call.done, call.result = done, result
        calls.append(call)
        return self._apply(stage, [call], payload)

    async def _settle(self, call: HookCall, result: Any, timeout_s: float) -> None:
        """A call's answer other than a plain result to apply as it is: a reject, rejected bids, not a
        result, or an awaitable (awaited within the timeout)."""
        if isinstance(result, HookResult):
            done = call.done = perf_counter()
            if done - call.started > timeout_s:
                _timed_out(call)
            else:
                call.result = result
        elif not inspect.isawaitable(result):
            _finish(call, result, timeout_s)
        else:
            await self._await({asyncio.ensure_future(result): call}, timeout_s)
            self._outcomes = None

    def _call_group(
        self, group: CompiledGroup, payload: Any
    ) -> tuple[list[HookCall], dict[asyncio.Future[Any], HookCall] | None]:
        """Every hook of the group called: the calls, and the awaitable ones still to await (None:
        every hook answered at once, the common case, which then costs no coroutine)."""
        calls: list[HookCall] = []
        pending: dict[asyncio.Future[Any], HookCall] | None = None
        timeout_s = group.timeout_ms / 1000
        abtests = self.plans.abtests
        invocations = self._invocations
        for ref, hook in group.hooks:
            call = HookCall(ref, perf_counter())
            calls.append(call)
            if abtests and self._abtest_skips(ref.module, call):
                continue
            invocation = invocations.get(id(ref)) or self._invocation(ref)
            try:
                result = hook(invocation, payload)
            except (Exception, asyncio.CancelledError) as exc:  # a sync hook's CancelledError is its own
                _fail(call, exc)
                continue
            if isinstance(result, HookResult):
                done = call.done = perf_counter()
                if done - call.started > timeout_s:
                    _timed_out(call)  # a plain hook cannot be cut off: it is timed out after the fact
                else:
                    call.result = result
            elif not inspect.isawaitable(result):
                _finish(call, result, timeout_s)
            else:
                if pending is None:
                    pending = {}
                pending[asyncio.ensure_future(result)] = call
        return calls, pending

    def _abtest_skips(self, module: str, call: HookCall) -> bool:
        """Whether an A/B test keeps the module from running (drawn at its first hook, kept for the
        rest of the request); notes on the call whether its analytics tags tell the test."""
        abtest = self._abtest(module)
        if abtest is None:
            return False
        call.log_tag = abtest.log_analytics_tag
        if self._abtest_runs is None:
            self._abtest_runs = {}
        runs = self._abtest_runs.get(module)
        if runs is None:
            runs = self._abtest_runs[module] = self._rand(100) < abtest.percent_active
        call.skipped = not runs
        return not runs

    def _abtest(self, module: str) -> AbTest | None:
        for test in self.plans.abtests:
            if test.module == module:
                return test
        return None

    def _invocation(self, ref: HookRef) -> InvocationContext:
        """A hook's context for this request: its module's values (kept from the stages before the
        account was known) and its section of the account's ``hooks.modules``."""
        module = ref.module
        context = self._contexts.get(module)
        if context is None:
            context = self._contexts[module] = {}
        config = _section(self.account_modules, module) if self.account_modules else None
        invocation = InvocationContext(self.endpoint, self.account_id, config, context, ref.code)
        self._invocations[id(ref)] = invocation
        return invocation

    @staticmethod
    async def _await(pending: dict[asyncio.Future[Any], HookCall], timeout_s: float) -> None:
        try:
            done, late = await asyncio.wait(pending, timeout=timeout_s)
        except asyncio.CancelledError:  # the request went away: its hooks go with it
            for future in pending:
                future.cancel()
            raise
        for future in late:
            future.cancel()
            _timed_out(pending[future])
        for future in done:
            call = pending[future]
            if future.cancelled():
                _fail(call, RuntimeError("hook was cancelled"))
                continue
            exc = future.exception()
            if exc is not None:
                _fail(call, exc)
            else:
                _finish(call, future.result(), None)

    def _apply(self, stage: Stage, calls: list[HookCall], payload: Any) -> tuple[Any, Rejection | None]:
        """The calls' answers in plan order: mutations applied, the first reject ends it."""
        count = self._count
        for index, call in enumerate(calls):
            result = call.result
            if result is None:  # failed, timed out or skipped
                failed = call.failed
                if failed is not None and failed.module_context:  # PBS-Go keeps a failed hook's context too
                    self._contexts.setdefault(call.ref.module, {}).update(failed.module_context)
                if count is not None:
                    count(call.ref.module, stage, _failure_metric(call), 1)
                continue
            if result.module_context:
                self._contexts.setdefault(call.ref.module, {}).update(result.module_context)
            if result.reject:
                if stage.rejectable:
                    del calls[index + 1 :]  # the group's later hooks are not in its outcome
                    return payload, self._rejected(stage, call)
                _not_rejectable(stage, call)
            else:
                if result.mutations:
                    payload = _mutate(payload, result, call)
                if result.rejected_bids and call.status == SUCCESS:
                    self.rejected_bids.extend(result.rejected_bids)
            if count is not None:
                if call.status == SUCCESS:
                    count(call.ref.module, stage, "success_updated" if call.action == UPDATE else "success_noop", 1)
                else:
                    count(call.ref.module, stage, "execution_error", 1)
        return payload, None

    def _rejected(self, stage: Stage, call: HookCall) -> Rejection:
        call.action = REJECT
        rejection = Rejection(call.ref, stage, call.result.nbr_code)
        call.added_errors = [rejection.message()]
        if self._count is not None:
            self._count(call.ref.module, stage, "success_rejected", 1)
        return rejection

    def rejected_by(self, stage: Stage) -> bool:
        """Whether a hook rejected at ``stage`` (for tests and callers that only need the fact)."""
        return any(h.action == REJECT for o in self.outcomes if o.stage == stage for h in o.hooks())


_SECTIONS: dict[tuple[int, str], tuple[Mapping[str, Any], Any]] = {}  # (id(modules), module) -> (modules, section)
SECTIONS_SIZE = 256


def _section(modules: Mapping[str, Any], module: str) -> Any:
    """:func:`module_section`, kept per account ``hooks.modules`` object (an account's settings are
    read again for each of its requests: the object is the same while its config is); bounded,
    cleared when full."""
    key = (id(modules), module)
    kept = _SECTIONS.get(key)
    if kept is not None and kept[0] is modules:
        return kept[1]
    if len(_SECTIONS) >= SECTIONS_SIZE:
        _SECTIONS.clear()
    section = module_section(modules, module)
    _SECTIONS[key] = (modules, section)
    return section


_FAILURE_METRIC = {TIMEOUT: "timeout", FAILURE: "failed"}


def _failure_metric(call: HookCall) -> str:
    if call.skipped:
        return "success_noop"
    return _FAILURE_METRIC.get(call.status, "execution_error")


def _not_rejectable(stage: Stage, call: HookCall) -> None:
    call.status, call.action = EXECUTION_FAILURE, ""
    call.added_errors = [
        f"Module (name: {call.ref.module}, hook code: {call.ref.code}) tried to reject "
        f"request on the {stage.value} stage that does not support rejection"
    ]


# (a plain loop: for the few results of a batch, all() over map() and repeat() costs several times more)
def _quiet_calls(results: list[Any], ref: HookRef, started: float, done: float) -> list[_Success] | None:
    """Each result's plain success, when every one is a HookResult without reject, rejected bids,
    mutations or module context (None otherwise)."""
    quiet: list[_Success] = []
    for result in results:
        if not isinstance(result, HookResult) or (
            result.reject or result.rejected_bids or result.mutations or result.module_context
        ):
            return None
        quiet.append((ref, started, done, result, False))
    return quiet


def _quiet_successes(quiet: _Quiet, payloads: list[Any]) -> list[HookCall | _Success]:
    """A quiet (or changed) batch's record as a plain success per payload (a HookCall failing where its
    result could not be made)."""
    ref, started, done, result_of, changed = quiet
    calls: list[HookCall | _Success] = []
    for result in _results_of(result_of, payloads):
        if isinstance(result, Exception):
            call = HookCall(ref, started)
            _fail(call, result)
            calls.append(call)
        else:
            calls.append((ref, started, done, result, changed and bool(result.mutations)))
    return calls


def _results_of(result_of: Callable[[Any], HookResult[Any]], payloads: list[Any]) -> list[Any]:
    """A quiet batch's results made at once (each an exception where it raised)."""
    results: list[Any] = []
    for payload in payloads:
        try:
            results.append(result_of(payload))
        except Exception as exc:
            results.append(exc)
    return results


def _entities(runs: list[tuple[Any, str]] | tuple[list[Any], list[str] | None]) -> list[str]:
    """The entities of run_each's runs, or of run_batch's payloads."""
    if type(runs) is tuple:
        payloads, entities = runs
        return entities if entities is not None else [payload.bidder for payload in payloads]
    return [entity for _, entity in runs]  # type: ignore[misc]


def _call_of(call: HookCall | _Success) -> HookCall:
    """run_each's record of a call as the HookCall it stands for."""
    if isinstance(call, HookCall):
        return call
    ref, started, done, result, applied = call
    made = HookCall(ref, started)
    made.done, made.result = done, result
    if applied:
        made.action, made.applied = UPDATE, result.mutations  # every one (a result is read, never changed)
    return made


def _mutated(payload: Any, success: _Success, calls: list[HookCall | _Success]) -> tuple[Any, bool]:
    """:func:`_mutate` for run_each's plain success: the payload, and whether the call still succeeded
    (recorded in ``calls``: the success with its mutations, or a HookCall where one failed)."""
    mutations = success[3].mutations
    applied = 0
    try:
        for applied, mutation in enumerate(mutations):  # noqa: B007 (applied: those done when one raises)
            payload = mutation.apply(payload)
    except Exception as exc:  # the rare case: the rest one by one, each failure a warning
        call = _call_of(success)
        payload = _mutate_rest(payload, mutations, applied, exc, call)
        calls.append(call)
        return payload, call.status == SUCCESS
    calls.append(success)
    return payload, True


def _mutate(payload: Any, result: HookResult[Any], call: HookCall) -> Any:
    """The result's mutations applied in order; the call records the ones applied (their keys are
    written out only when the outcome is built)."""
    call.action = UPDATE
    mutations = result.mutations
    done = 0
    try:
        for mutation in mutations:
            payload = mutation.apply(payload)
            done += 1
    except Exception as exc:  # the rare case: the rest one by one, each failure a warning
        return _mutate_rest(payload, mutations, done, exc, call)
    call.applied = mutations  # every one (a result is read, never changed)
    return payload


def _mutate_rest(payload: Any, mutations: list[Mutation[Any]], done: int, exc: Exception, call: HookCall) -> Any:
    """:func:`_mutate` once the mutation at ``done`` raised ``exc``: the rest applied one by one."""
    applied = list(mutations[:done])
    warnings = call.added_warnings = [*(call.added_warnings or ()), f"failed to apply hook mutation: {exc}"]
    for mutation in mutations[done + 1 :]:
        try:
            payload = mutation.apply(payload)
        except Exception as later:
            warnings.append(f"failed to apply hook mutation: {later}")
            continue
        applied.append(mutation)
    call.applied = applied
    if not applied:
        call.status = EXECUTION_FAILURE
    return payload


def _finish(call: HookCall, result: Any, timeout_s: float | None) -> None:
    call.done = perf_counter()
    if timeout_s is not None and call.done - call.started > timeout_s:
        _timed_out(call)  # a plain hook cannot be cut off: it is timed out after the fact
    elif not isinstance(result, HookResult):
        call.status, call.error = EXECUTION_FAILURE, f"hook returned {type(result).__name__}, not a HookResult"
    else:
        call.result = result


def _fail(call: HookCall, exc: BaseException) -> None:
    call.done = perf_counter()
    if isinstance(exc, HookFailure):
        call.status, call.error = FAILURE, f"hook execution failed: {exc}"
        call.failed = exc.result if isinstance(exc.result, HookResult) else None
    else:
        log.error("hook %s of module %s raised", call.ref.code, call.ref.module, exc_info=exc)
        call.status, call.error = EXECUTION_FAILURE, f"hook execution failed: {type(exc).__name__}: {exc}"


def _timed_out(call: HookCall) -> None:
    call.done = perf_counter()
    call.status, call.error, call.result = TIMEOUT, "Hook execution timeout", None
