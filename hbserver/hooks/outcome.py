"""What running the hooks left: per stage, per group, per hook (PBS-Go's ``hookexecution/outcome.go``).

A request records each hook's call as a :class:`HookCall` (what the call answered and what the
executor did with it) and builds the outcomes below from them only when something reads them (the
trace, debug errors and warnings, analytics), so a request nobody inspects pays for none of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hbserver.hooks.api import Mutation, Stage
from hbserver.hooks.plan import HookRef

# a hook's status
SUCCESS = "success"
TIMEOUT = "timeout"
FAILURE = "failure"  # the hook raised HookFailure
EXECUTION_FAILURE = "execution_failure"  # it raised anything else, answered garbage, or rejected where it may not
# what was done with its answer
UPDATE = "update"
REJECT = "reject"
NO_ACTION = "no_action"
NO_INVOCATION = "no_invocation"  # PBS-Java's: an A/B test skipped the module

# entities a stage outcome names (PBS-Go's; the bidder stages name the bidder)
HTTP_REQUEST = "http-request"
AUCTION_REQUEST = "auction-request"
AUCTION_RESPONSE = "auction_response"
ALL_PROCESSED_BID_RESPONSES = "all_processed_bid_responses"
EXITPOINT = "exitpoint"


@dataclass(slots=True)
class HookOutcome:
    hook: HookRef
    status: str
    action: str
    execution_ms: int
    message: str = ""
    analytics_tags: dict[str, Any] = field(default_factory=dict)
    hook_debug_messages: list[str] = field(default_factory=list)  # the hook's own
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # the mutations applied, (key, kind): their debug messages are written only when shown
    applied: list[tuple[tuple[str, ...], str]] = field(default_factory=list)

    @property
    def debug_messages(self) -> list[str]:
        """The hook's debug messages, then PBS-Go's line for each mutation applied."""
        if not self.applied:
            return self.hook_debug_messages
        return [
            *self.hook_debug_messages,
            *(f"Hook mutation successfully applied, affected key: {'.'.join(key)}, mutation type: {kind}"
              for key, kind in self.applied),
        ]  # fmt: skip

    def as_json(self, verbose: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hook_id": {"module_code": self.hook.module, "hook_impl_code": self.hook.code},
            "status": self.status,
            "action": self.action,
        }
        if self.execution_ms:
            out["execution_time_millis"] = self.execution_ms
        out["analytics_tags"] = self.analytics_tags
        if verbose and (self.hook_debug_messages or self.applied):
            out["debug_messages"] = self.debug_messages
        out["message"] = self.message
        return out


@dataclass(slots=True)
class GroupOutcome:
    execution_ms: int = 0  # the longest of its hooks'
    results: list[HookOutcome] = field(default_factory=list)


@dataclass(slots=True)
class StageOutcome:
    stage: Stage
    entity: str
    execution_ms: int = 0  # the sum of its groups'
    groups: list[GroupOutcome] = field(default_factory=list)

    def hooks(self) -> list[HookOutcome]:
        return [result for group in self.groups for result in group.results]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A hook's reject: the stage's entity ends (PBS-Go's RejectError)."""

    hook: HookRef
    stage: Stage
    nbr: int

    def message(self) -> str:
        return (
            f"Module {self.hook.module} (hook: {self.hook.code}) rejected request with code {self.nbr} "
            f"at {self.stage.value} stage"
        )


class HookCall:
    """One hook's call in a stage run: its result or what went wrong, how long it took, and what was
    done with its answer (``action``, the mutations ``applied``, texts the executor added)."""

    # what a call has until something else is known (class attributes: a call sets only what differs,
    # one is made for every hook call)
    done = 0.0
    result: Any = None  # the HookResult, None when the call failed, timed out or was skipped
    status = SUCCESS
    action = NO_ACTION
    error = ""
    skipped = False
    log_tag = False
    failed: Any = None  # the HookResult a HookFailure still reports
    added_errors: list[str] | None = None
    added_warnings: list[str] | None = None
    applied: list[Mutation[Any]] | None = None  # the mutations applied, in order

    def __init__(self, ref: HookRef, started: float) -> None:
        self.ref = ref
        self.started = started
        self.done = started

    def outcome(self) -> HookOutcome:
        elapsed_ms = int((self.done - self.started) * 1000)
        if self.skipped:
            tags = _abtest_tags(self.ref.module, "skipped") if self.log_tag else {}
            return HookOutcome(self.ref, SUCCESS, NO_INVOCATION, 0, analytics_tags=tags)
        result = self.result
        if result is None:
            failed = self.failed
            if failed is None:
                return HookOutcome(self.ref, self.status, "", elapsed_ms, errors=[self.error])
            tags = (failed.analytics_tags or {}) if isinstance(failed.analytics_tags, dict) else {}
            return HookOutcome(self.ref, self.status, "", elapsed_ms, str(failed.message or ""), tags,
                               list(failed.debug_messages), [*failed.errors, self.error], list(failed.warnings))
        # a result's defaults are shared (HookResult): an outcome gets lists and tags of its own
        tags = (result.analytics_tags or {}) if isinstance(result.analytics_tags, dict) else {}
        if self.log_tag:
            activities = [*tags.get("activities", ()), *_abtest_tags(self.ref.module, "run")["activities"]]
            tags = {**tags, "activities": activities}
        added_errors, added_warnings = self.added_errors, self.added_warnings
        return HookOutcome(
            self.ref, self.status, self.action, elapsed_ms, result.message if isinstance(result.message, str) else "",
            tags, result.debug_messages or [], [*result.errors, *added_errors] if added_errors else result.errors or [],
            [*result.warnings, *added_warnings] if added_warnings else result.warnings or [],
            [change for mutation in self.applied for change in mutation.changes()] if self.applied else [],
        )  # fmt: skip


ABTEST_ACTIVITY = "core-module-abtests"  # PBS-Java's activity name in the A/B test's analytics tag


def _abtest_tags(module: str, status: str) -> dict[str, Any]:
    result = {"status": status, "values": {"module": module}}
    return {"activities": [{"name": ABTEST_ACTIVITY, "status": "success", "results": [result]}]}


def stage_outcome(stage: Stage, entity: str, groups: list[list[HookCall]]) -> StageOutcome:
    """A stage run's outcome from its calls: a group took as long as its longest hook, the stage the
    sum of its groups."""
    built = []
    total = 0
    for calls in groups:
        results = [call.outcome() for call in calls]
        group_ms = max((result.execution_ms for result in results), default=0)
        built.append(GroupOutcome(group_ms, results))
        total += group_ms
    return StageOutcome(stage, entity, total, built)


def analytics_entries(outcomes: list[StageOutcome]) -> list[dict[str, Any]]:
    """Each hook that ran, for the analytics record: where, what came of it, and its analytics tags."""
    return [
        {
            "stage": outcome.stage.value,
            "entity": outcome.entity,
            "module_code": hook.hook.module,
            "hook_impl_code": hook.hook.code,
            "status": hook.status,
            "action": hook.action,
            "analytics_tags": hook.analytics_tags,
        }
        for outcome in outcomes
        for hook in outcome.hooks()
    ]
