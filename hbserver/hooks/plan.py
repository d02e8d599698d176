"""Execution plans: which hooks run at each endpoint and stage, in groups (PBS-Go's ``hooks/plan.go``).

A plan is ``{"endpoints": {"/openrtb2/auction": {"stages": {"bidder_request": {"groups": [{"timeout":
5, "hook_sequence": [{"module_code": "prebid.ortb2blocking", "hook_impl_code": "..."}]}]}}}}}``,
plus PBS-Java's ``abtests``. PBS-Java's spellings are accepted as they are: kebab-case keys
(``hook-sequence``, ``module-code``) and stage names (``bidder-request``).

The host's plan always runs; the account's replaces ``default_account_execution_plan`` when it has
``endpoints`` (PBS-Go's getMergedPlan), and runs after the host's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.hooks.api import ENDPOINT_AMP, ENDPOINT_AUCTION, Stage

ENDPOINTS = frozenset({ENDPOINT_AUCTION, ENDPOINT_AMP})
# PBS's other hook endpoints: accepted in a host's plan as they are, and never run (hbserver has none)
_OTHER_ENDPOINTS = frozenset({"/openrtb2/video"})
_STAGES = {stage.value: stage for stage in Stage}
# PBS-Java's stage that PBS-Go has not: its hooks are accepted in a plan and never run
_JAVA_ONLY_STAGES = frozenset({"processed_bidder_response"})
MAX_GROUP_TIMEOUT_MS = 60_000


@dataclass(frozen=True, slots=True)
class HookRef:
    module: str  # the module code: "vendor.module" (PBS-Go) or "pb-richmedia-filter" (PBS-Java)
    code: str  # the hook_impl_code, shown in the trace and metrics


@dataclass(frozen=True, slots=True)
class Group:
    timeout_ms: int
    hooks: tuple[HookRef, ...]


@dataclass(frozen=True, slots=True)
class AbTest:
    """PBS-Java's module A/B test: the module runs for ``percent_active`` % of the requests of the
    ``accounts`` named (every account when empty)."""

    module: str
    accounts: frozenset[str]
    percent_active: int
    log_analytics_tag: bool


@dataclass(frozen=True, slots=True)
class ExecutionPlan:
    stages: Mapping[tuple[str, Stage], tuple[Group, ...]]  # (endpoint, stage) -> groups
    abtests: tuple[AbTest, ...] | None = None  # None: the plan has no ``abtests`` (not the same as [])
    has_endpoints: bool = False  # it names endpoints (an account's plan then replaces the default)

    def groups(self, endpoint: str, stage: Stage) -> tuple[Group, ...]:
        return self.stages.get((endpoint, stage), ())


EMPTY_PLAN = ExecutionPlan({})


def _snake(raw: Any) -> Any:
    """``raw`` with kebab-case keys spelled snake_case, at every depth."""
    if isinstance(raw, Mapping):
        return {str(key).replace("-", "_"): _snake(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return [_snake(item) for item in raw]
    return raw


def parse_plan(raw: Any, path: str, problems: list[str]) -> ExecutionPlan:
    """An execution plan from its configuration; what is wrong goes to ``problems``, naming its key."""
    if raw is None:
        return EMPTY_PLAN
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: must be a mapping")
        return EMPTY_PLAN
    raw = _snake(raw)
    stages: dict[tuple[str, Stage], tuple[Group, ...]] = {}
    endpoints = raw.get("endpoints")
    if endpoints is not None and not isinstance(endpoints, Mapping):
        problems.append(f"{path}.endpoints: must be a mapping")
        endpoints = None
    for key, spec in (endpoints or {}).items():
        where = f"{path}.endpoints.{key}"
        endpoint = str(key).rpartition(" ")[2]  # PBS-Java may name the method too: "POST /openrtb2/auction"
        if endpoint in _OTHER_ENDPOINTS:
            continue
        if endpoint not in ENDPOINTS:
            problems.append(f"{where}: unknown endpoint (hooks run at {', '.join(sorted(ENDPOINTS))})")
            continue
        stage_specs = spec.get("stages") if isinstance(spec, Mapping) else None
        if not isinstance(stage_specs, Mapping):
            problems.append(f"{where}.stages: must be a mapping")
            continue
        for name, stage_spec in stage_specs.items():
            stage = _STAGES.get(name)
            if stage is None:
                if name not in _JAVA_ONLY_STAGES:
                    problems.append(f"{where}.stages.{name}: unknown stage (one of {', '.join(_STAGES)})")
                continue
            groups = _groups(stage_spec, f"{where}.stages.{name}", problems)
            if groups:
                stages[(endpoint, stage)] = groups
    abtests = _abtests(raw.get("abtests"), f"{path}.abtests", problems)
    return ExecutionPlan(stages, abtests, endpoints is not None)


def _groups(spec: Any, path: str, problems: list[str]) -> tuple[Group, ...]:
    groups = spec.get("groups") if isinstance(spec, Mapping) else None
    if not isinstance(groups, list):
        problems.append(f"{path}.groups: must be a list")
        return ()
    out = []
    for n, group in enumerate(groups):
        where = f"{path}.groups[{n}]"
        if not isinstance(group, Mapping):
            problems.append(f"{where}: must be a mapping")
            continue
        timeout = group.get("timeout", 0)
        if isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 <= timeout <= MAX_GROUP_TIMEOUT_MS:
            problems.append(f"{where}.timeout: must be a whole number of ms from 0 to {MAX_GROUP_TIMEOUT_MS}")
            continue
        hooks = _hook_sequence(group.get("hook_sequence"), f"{where}.hook_sequence", problems)
        if hooks:
            out.append(Group(timeout, hooks))
    return tuple(out)


def _hook_sequence(sequence: Any, path: str, problems: list[str]) -> tuple[HookRef, ...]:
    if not isinstance(sequence, list):
        problems.append(f"{path}: must be a list")
        return ()
    refs = []
    for n, entry in enumerate(sequence):
        module = entry.get("module_code") if isinstance(entry, Mapping) else None
        code = entry.get("hook_impl_code") if isinstance(entry, Mapping) else None
        if not isinstance(module, str) or not module or not isinstance(code, str) or not code:
            problems.append(f"{path}[{n}]: needs module_code and hook_impl_code (strings)")
            continue
        refs.append(HookRef(module, code))
    return tuple(refs)


def _abtests(raw: Any, path: str, problems: list[str]) -> tuple[AbTest, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        problems.append(f"{path}: must be a list")
        return ()
    tests = []
    for n, entry in enumerate(raw):
        where = f"{path}[{n}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("module_code"), str):
            problems.append(f"{where}: needs module_code (a string)")
            continue
        percent = entry.get("percent_active", 100)
        if isinstance(percent, bool) or not isinstance(percent, int) or not 0 <= percent <= 100:
            problems.append(f"{where}.percent_active: must be a whole number from 0 to 100")
            continue
        accounts = entry.get("accounts") or []
        if not isinstance(accounts, list) or not all(isinstance(a, str) for a in accounts):
            problems.append(f"{where}.accounts: must be a list of account ids")
            continue
        if entry.get("enabled") is True:  # PBS-Java keeps only the enabled ones
            tests.append(AbTest(entry["module_code"], frozenset(accounts), percent,
                                entry.get("log_analytics_tag") is not False))  # fmt: skip
    return tuple(tests)
