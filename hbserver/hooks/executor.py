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
import time
from collections.abc import Callable, Mapping
from typing import Any

from hbserver.hooks.api import HookFailure, HookResult, InvocationContext, RejectedBids, Stage
from hbserver.hooks.outcome import (
    EXECUTION_FAILURE,
    FAILURE,
    NO_ACTION,
    NO_INVOCATION,
    REJECT,
    SUCCESS,
    TIMEOUT,
    UPDATE,
    GroupOutcome,
    HookOutcome,
    Rejection,
    StageOutcome,
)
from hbserver.hooks.plan import AbTest, HookRef
from hbserver.hooks.runtime import CompiledGroup, RequestPlans, module_section

log = logging.getLogger("hbserver.hooks")

ABTEST_ACTIVITY = "core-module-abtests"  # PBS-Java's activity name in the A/B test's analytics tag
ModuleCounter = Callable[[str, str, str], None]  # (module, stage, outcome) -> counted


class HookExecutor:
    """Runs one request's plans; :attr:`outcomes` is what ``ext.prebid.modules`` and analytics show."""

    def __init__(
        self,
        endpoint: str,
        plans: RequestPlans,
        count: ModuleCounter | None = None,
        rand: Callable[[int], int] = random.randrange,
    ) -> None:
        self.endpoint = endpoint
        self.plans = plans
        self.account_id = ""
        self.account_modules: Mapping[str, Any] = {}
        self.outcomes: list[StageOutcome] = []
        self._contexts: dict[str, dict[str, Any]] = {}
        self._configs: dict[str, Any] = {}  # module -> the account's section of it
        self.rejected_bids: list[RejectedBids] = []  # what hooks removed and the auction reports
        self._abtest_runs: dict[str, bool] = {}  # module -> runs (decided at its first hook)
        self._count = count
        self._rand = rand

    def set_account(self, account_id: str, plans: RequestPlans | None, modules: Mapping[str, Any]) -> None:
        """The account's plans (None: none beyond the host's) and its ``hooks.modules``."""
        self.account_id = account_id
        self.account_modules = modules
        self._configs.clear()
        self._contexts = {module: context for module, context in self._contexts.items() if context}
        if plans is not None:
            self.plans = plans

    def has(self, stage: Stage) -> bool:
        return (self.endpoint, stage) in self.plans.stages

    def runs_any(self) -> bool:
        """Whether any stage at this endpoint has hooks."""
        return self.endpoint in self.plans.endpoints

    async def run(self, stage: Stage, payload: Any, entity: str) -> tuple[Any, Rejection | None]:
        """The stage's groups over ``payload``: the payload they leave, and the reject that ended it."""
        groups = self.plans.stages.get((self.endpoint, stage))
        if not groups:
            return payload, None
        outcome = StageOutcome(stage, entity)
        self.outcomes.append(outcome)
        for group in groups:
            answers, pending = self._call_group(group, payload)
            if pending:
                await self._await(pending, group.timeout_ms / 1000)
            group_outcome = GroupOutcome()
            outcome.groups.append(group_outcome)
            payload, rejection = self._apply(stage, answers, payload, group_outcome)
            if group_outcome.execution_ms:
                outcome.execution_ms += group_outcome.execution_ms
            if rejection is not None:
                return payload, rejection
        return payload, None

    def _call_group(
        self, group: CompiledGroup, payload: Any
    ) -> tuple[list[_Answer], dict[asyncio.Future[Any], _Answer] | None]:
        """Every hook of the group called: the answers, and the awaitable ones still to await (None:
        every hook answered at once, the common case, which then costs no coroutine)."""
        answers: list[_Answer] = []
        pending: dict[asyncio.Future[Any], _Answer] | None = None
        timeout_s = group.timeout_ms / 1000
        abtests = self.plans.abtests
        endpoint, account_id = self.endpoint, self.account_id
        for ref, hook in group.hooks:
            answer = _Answer(ref, time.perf_counter())
            answers.append(answer)
            if abtests:
                abtest = self._abtest(ref.module)
                if abtest is not None and not self._abtest_decides(ref.module, abtest):
                    answer.skipped, answer.log_tag = True, abtest.log_analytics_tag
                    continue
                answer.log_tag = abtest is not None and abtest.log_analytics_tag
            module = ref.module
            context = self._contexts.get(module)
            config = self._configs.get(module, _UNREAD)
            if context is None or config is _UNREAD:
                context, config = self._new_context(module)
            invocation = InvocationContext(endpoint, account_id, config, context, ref.code)
            try:
                result = hook(invocation, payload)
            except (Exception, asyncio.CancelledError) as exc:  # a sync hook's CancelledError is its own
                answer.fail(exc)
                continue
            if isinstance(result, HookResult):
                done = answer.done = time.perf_counter()
                if done - answer.started > timeout_s:
                    answer.timed_out()  # a plain hook cannot be cut off: it is timed out after the fact
                else:
                    answer.result = result
            elif not inspect.isawaitable(result):
                answer.finish(result, timeout_s)
            else:
                if pending is None:
                    pending = {}
                pending[asyncio.ensure_future(result)] = answer
        return answers, pending

    def _abtest_decides(self, module: str, abtest: AbTest) -> bool:
        """Whether an A/B-tested module runs: drawn at its first hook, kept for the rest of the request."""
        runs = self._abtest_runs.get(module)
        if runs is None:
            runs = self._abtest_runs[module] = self._rand(100) < abtest.percent_active
        return runs

    @staticmethod
    async def _await(pending: dict[asyncio.Future[Any], _Answer], timeout_s: float) -> None:
        try:
            done, late = await asyncio.wait(pending, timeout=timeout_s)
        except asyncio.CancelledError:  # the request went away: its hooks go with it
            for future in pending:
                future.cancel()
            raise
        for future in late:
            future.cancel()
            pending[future].timed_out()
        for future in done:
            answer = pending[future]
            if future.cancelled():
                answer.fail(RuntimeError("hook was cancelled"))
                continue
            exc = future.exception()
            if exc is not None:
                answer.fail(exc)
            else:
                answer.finish(future.result(), None)

    def _abtest(self, module: str) -> AbTest | None:
        for test in self.plans.abtests:
            if test.module == module:
                return test
        return None

    def _new_context(self, module: str) -> tuple[dict[str, Any], Any]:
        """A module's context for this request (kept from the stages before the account was known) and
        its section of the account's ``hooks.modules``."""
        context = self._contexts.setdefault(module, {})
        config = self._configs[module] = module_section(self.account_modules, module) if self.account_modules else None
        return context, config

    def _apply(
        self, stage: Stage, answers: list[_Answer], payload: Any, group: GroupOutcome
    ) -> tuple[Any, Rejection | None]:
        """The answers in plan order: outcomes recorded, mutations applied, the first reject ends it."""
        for answer in answers:
            hook_outcome = answer.outcome()
            group.results.append(hook_outcome)
            if hook_outcome.execution_ms > group.execution_ms:
                group.execution_ms = hook_outcome.execution_ms
            result = answer.result
            failed = answer.failed
            if failed is not None and failed.module_context:  # PBS-Go keeps a failed hook's context too
                self._contexts.setdefault(answer.ref.module, {}).update(failed.module_context)
            if result is not None and hook_outcome.status == SUCCESS:
                if result.module_context:
                    self._contexts.setdefault(answer.ref.module, {}).update(result.module_context)
                if result.reject:
                    if stage.rejectable:
                        hook_outcome.action = REJECT
                        rejection = Rejection(answer.ref, stage, result.nbr_code)
                        hook_outcome.errors = [*hook_outcome.errors, rejection.message()]
                        self._counted(answer.ref, stage, "success_rejected")
                        return payload, rejection
                    hook_outcome.status, hook_outcome.action = EXECUTION_FAILURE, ""
                    hook_outcome.errors = [
                        *hook_outcome.errors,
                        f"Module (name: {answer.ref.module}, hook code: {answer.ref.code}) tried to reject "
                        f"request on the {stage.value} stage that does not support rejection",
                    ]
                else:
                    if result.mutations:
                        payload = _mutate(payload, result, hook_outcome)
                    if result.rejected_bids and hook_outcome.status == SUCCESS:
                        self.rejected_bids.extend(result.rejected_bids)
            count = self._count
            if count is not None:
                status = hook_outcome.status
                if status == SUCCESS:
                    outcome = "success_updated" if hook_outcome.action == UPDATE else "success_noop"
                else:
                    outcome = _FAILURE_METRIC.get(status, "execution_error")
                count(answer.ref.module, stage, outcome)  # a StrEnum: the stage's name
        return payload, None

    def _counted(self, ref: HookRef, stage: Stage, outcome: str) -> None:
        if self._count is not None:
            self._count(ref.module, stage, outcome)

    def rejected_by(self, stage: Stage) -> bool:
        """Whether a hook rejected at ``stage`` (for tests and callers that only need the fact)."""
        return any(h.action == REJECT for o in self.outcomes if o.stage == stage for h in o.hooks())


_FAILURE_METRIC = {TIMEOUT: "timeout", FAILURE: "failed"}
_UNREAD: Any = object()  # a module whose account section is not looked up yet


def _mutate(payload: Any, result: HookResult[Any], outcome: HookOutcome) -> Any:
    outcome.action = UPDATE
    applied = 0
    for mutation in result.mutations:
        try:
            payload = mutation.apply(payload)
        except Exception as exc:
            if outcome.warnings is result.warnings:
                outcome.warnings = list(outcome.warnings)  # the hook's own list stays as it gave it
            outcome.warnings.append(f"failed to apply hook mutation: {exc}")
            continue
        applied += 1
        outcome.applied.append((mutation.key, mutation.kind))
    if not applied:
        outcome.status = EXECUTION_FAILURE
    return payload


class _Answer:
    """One hook's call: its result or what went wrong, and how long it took."""

    __slots__ = ("done", "error", "failed", "log_tag", "ref", "result", "skipped", "started", "status")

    def __init__(self, ref: HookRef, started: float) -> None:
        self.ref = ref
        self.started = started
        self.done = started
        self.result: HookResult[Any] | None = None
        self.status = SUCCESS
        self.error = ""
        self.skipped = False
        self.log_tag = False
        self.failed: HookResult[Any] | None = None  # what a HookFailure still reports

    def finish(self, result: Any, timeout_s: float | None) -> None:
        self.done = time.perf_counter()
        if timeout_s is not None and self.done - self.started > timeout_s:
            self.timed_out()  # a plain hook cannot be cut off: it is timed out after the fact
        elif not isinstance(result, HookResult):
            self.status, self.error = EXECUTION_FAILURE, f"hook returned {type(result).__name__}, not a HookResult"
        else:
            self.result = result

    def fail(self, exc: BaseException) -> None:
        self.done = time.perf_counter()
        if isinstance(exc, HookFailure):
            self.status, self.error = FAILURE, f"hook execution failed: {exc}"
            self.failed = exc.result if isinstance(exc.result, HookResult) else None
        else:
            log.error("hook %s of module %s raised", self.ref.code, self.ref.module, exc_info=exc)
            self.status, self.error = EXECUTION_FAILURE, f"hook execution failed: {type(exc).__name__}: {exc}"

    def timed_out(self) -> None:
        self.done = time.perf_counter()
        self.status, self.error, self.result = TIMEOUT, "Hook execution timeout", None

    def outcome(self) -> HookOutcome:
        elapsed_ms = int((self.done - self.started) * 1000)
        result = self.result
        if result is not None and not self.log_tag:  # the common case first
            tags = result.analytics_tags
            return HookOutcome(
                self.ref, SUCCESS, NO_ACTION, elapsed_ms, result.message if isinstance(result.message, str) else "",
                tags if isinstance(tags, dict) else {}, result.debug_messages, result.errors, result.warnings,
            )  # fmt: skip
        if self.skipped:
            tags = _abtest_tags(self.ref.module, "skipped") if self.log_tag else {}
            return HookOutcome(self.ref, SUCCESS, NO_INVOCATION, 0, analytics_tags=tags)
        result = self.result
        if result is None:
            failed = self.failed
            if failed is None:
                return HookOutcome(self.ref, self.status, "", elapsed_ms, errors=[self.error])
            tags = failed.analytics_tags if isinstance(failed.analytics_tags, dict) else {}
            return HookOutcome(self.ref, self.status, "", elapsed_ms, str(failed.message or ""), tags,
                               list(failed.debug_messages), [*failed.errors, self.error], list(failed.warnings))
        tags = result.analytics_tags if isinstance(result.analytics_tags, dict) else {}
        if self.log_tag:
            activities = [*tags.get("activities", ()), *_abtest_tags(self.ref.module, "run")["activities"]]
            tags = {**tags, "activities": activities}
        return HookOutcome(
            self.ref, SUCCESS, NO_ACTION, elapsed_ms, result.message if isinstance(result.message, str) else "",
            tags, result.debug_messages, result.errors, result.warnings,
        )  # fmt: skip


def _abtest_tags(module: str, status: str) -> dict[str, Any]:
    result = {"status": status, "values": {"module": module}}
    return {"activities": [{"name": ABTEST_ACTIVITY, "status": "success", "results": [result]}]}
