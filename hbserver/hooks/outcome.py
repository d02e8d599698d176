"""What running the hooks left: per stage, per group, per hook (PBS-Go's ``hookexecution/outcome.go``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hbserver.hooks.api import Stage
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
