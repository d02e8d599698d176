"""The hooks of this server: the modules the host enabled, built once, and the plans compiled against
them (the host's, the default account's, and each account's, cached per account settings).

:meth:`HookRuntime.executor` is the only thing a request asks for: None when no plan runs any hook
at the endpoint, which is what makes hooks cost nothing when none are configured.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import orjson

from hbserver.hooks.api import ENDPOINT_AMP, ENDPOINT_AUCTION, BatchHook, Hook, Stage, batch_of
from hbserver.hooks.plan import EMPTY_PLAN, AbTest, ExecutionPlan, Group, HookRef, parse_plan
from hbserver.modules import builder_of

log = logging.getLogger("hbserver.hooks")

MAX_CACHED_ACCOUNT_PLANS = 4096


@dataclass(frozen=True, slots=True)
class CompiledGroup:
    timeout_ms: int
    hooks: tuple[tuple[HookRef, Hook], ...]


StagePlans = Mapping[tuple[str, Stage], tuple[CompiledGroup, ...]]
# an endpoint's stages with hooks, its stages of one plain hook (RequestPlans.single), whether any hook is at it
EndpointView = tuple[frozenset[Stage], Mapping[Stage, tuple[HookRef, Hook, float, "BatchHook | None"]], bool]
NO_STAGES: frozenset[Stage] = frozenset()
NO_SINGLE: Mapping[Stage, Any] = MappingProxyType({})
NO_VIEW: EndpointView = (NO_STAGES, NO_SINGLE, False)  # an endpoint without hooks


@dataclass(frozen=True, slots=True)
class RequestPlans:
    """What runs for one account: the host's groups then the account's, per (endpoint, stage)."""

    stages: StagePlans
    abtests: tuple[AbTest, ...]
    endpoints: frozenset[str]  # the endpoints with any hook
    # by endpoint: its stages with hooks (HookExecutor.stages)
    at: Mapping[str, frozenset[Stage]] = field(init=False, compare=False, repr=False)
    # by endpoint, then stage: those of one group of one hook, without A/B tests: (its ref, hook, timeout
    # in seconds, its batch form or None), what HookExecutor.run_each runs without the general path
    single: Mapping[str, Mapping[Stage, tuple[HookRef, Hook, float, BatchHook | None]]] = field(
        init=False, compare=False, repr=False
    )
    # by endpoint: (at's, single's, whether it is in endpoints), what an executor reads once a request in one lookup
    views: Mapping[str, EndpointView] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        at: dict[str, set[Stage]] = {}
        single: dict[str, dict[Stage, tuple[HookRef, Hook, float, BatchHook | None]]] = {}
        for (endpoint, stage), groups in self.stages.items():
            if not groups:
                continue
            at.setdefault(endpoint, set()).add(stage)
            if not self.abtests and len(groups) == 1 and len(groups[0].hooks) == 1:
                ((ref, hook),) = groups[0].hooks
                entry = (ref, hook, groups[0].timeout_ms / 1000, batch_of(hook, stage))
                single.setdefault(endpoint, {})[stage] = entry
        object.__setattr__(self, "at", {endpoint: frozenset(stages) for endpoint, stages in at.items()})
        object.__setattr__(self, "single", single)
        views = {
            endpoint: (self.at.get(endpoint, NO_STAGES), single.get(endpoint, NO_SINGLE), endpoint in self.endpoints)
            for endpoint in {*self.at, *self.endpoints}
        }
        object.__setattr__(self, "views", views)

    def groups(self, endpoint: str, stage: Stage) -> tuple[CompiledGroup, ...]:
        return self.stages.get((endpoint, stage), ())


def _plan_section(raw: Any, path: str, problems: list[str]) -> ExecutionPlan:
    """A plan from the host's configuration: a mapping, or PBS-Java's JSON text of one."""
    if isinstance(raw, str):
        if not raw.strip():
            return EMPTY_PLAN
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            problems.append(f"{path}: not valid JSON ({exc})")
            return EMPTY_PLAN
    return parse_plan(raw or None, path, problems)


def module_section(modules: Mapping[str, Any], code: str) -> Any:
    """``modules.<vendor>.<module>`` for PBS-Go's ``vendor.module`` codes, ``modules.<code>`` for
    PBS-Java's (no vendor); None when absent."""
    vendor, dot, name = code.partition(".")
    if dot:
        section = modules.get(vendor)
        found = section.get(name) if isinstance(section, Mapping) else None
        if found is not None:
            return found
    return modules.get(code)


class HookRuntime:
    def __init__(
        self,
        enabled: bool,
        modules: Mapping[str, Any],
        host_plan: Any,
        default_account_plan: Any,
        extra_builders: dict[str, str] | None = None,
    ) -> None:
        """Raises ValueError listing every problem (a plan's keys, a module's configuration)."""
        problems: list[str] = []
        self.enabled = enabled
        self.modules: dict[str, object] = {}
        host = _plan_section(host_plan, "hooks.host_execution_plan", problems)
        default = _plan_section(default_account_plan, "hooks.default_account_execution_plan", problems)
        if enabled:
            self._build_modules(modules, [host, default], problems, extra_builders)
        if problems:
            raise ValueError("; ".join(problems))
        self.host = self._compile(host, "hooks.host_execution_plan", problems)
        self.default_account = self._compile(default, "hooks.default_account_execution_plan", problems)
        if problems:
            raise ValueError("; ".join(problems))
        self._host_abtests = host.abtests or ()
        self._default_abtests = default.abtests
        self._default_plans = self._merge(self.host, self.default_account, self._default_abtests, "")
        # host A/B tests naming accounts make the default plans differ per account
        self._per_account = self._default_abtests is None and any(t.accounts for t in self._host_abtests)
        # account id -> (its hooks settings object, account_plans's answer for them)
        self.account_cache: dict[str, tuple[object, RequestPlans | None]] = {}
        # the plans before the account is known (entrypoint runs only the host's): an attribute, read once a request
        self.entry = RequestPlans(self.host, self._host_abtests, frozenset(e for e, _ in self.host))

    def _build_modules(
        self,
        modules: Mapping[str, Any],
        plans: list[ExecutionPlan],
        problems: list[str],
        extra: dict[str, str] | None,
    ) -> None:
        wanted = {ref.module for plan in plans for groups in plan.stages.values() for g in groups for ref in g.hooks}
        wanted |= {code for code in _enabled_codes(modules)}
        for code in sorted(wanted):
            section = module_section(modules, code)
            if not (isinstance(section, Mapping) and section.get("enabled") is True):
                continue  # a plan naming a disabled module: its hooks are left out (as PBS-Go)
            builder = builder_of(code, extra)
            if builder is None:
                problems.append(f"hooks.modules: unknown module {code!r}")
                continue
            try:
                self.modules[code] = builder(section)
            except ValueError as exc:
                problems.append(f"hooks.modules.{code}: {exc}")

    def _compile(self, plan: ExecutionPlan, path: str, problems: list[str] | None) -> StagePlans:
        """The plan's hooks bound to the built modules; a hook no module provides is left out with a
        warning (as PBS-Go), or reported when ``problems`` is given and the module is unknown."""
        out: dict[tuple[str, Stage], tuple[CompiledGroup, ...]] = {}
        for (endpoint, stage), groups in plan.stages.items():
            compiled = []
            for group in groups:
                hooks = tuple((ref, hook) for ref in group.hooks if (hook := self._hook(ref, stage, path)) is not None)
                if hooks:
                    compiled.append(CompiledGroup(group.timeout_ms, hooks))
            if compiled:
                out[(endpoint, stage)] = tuple(compiled)
        return out

    def _hook(self, ref: HookRef, stage: Stage, path: str) -> Hook | None:
        module = self.modules.get(ref.module)
        hook = getattr(module, stage.method, None) if module is not None else None
        if hook is None:
            log.warning("%s: no hook %s of module %s at stage %s (module disabled, unknown, or without "
                        "that stage); left out", path, ref.code, ref.module, stage.value)  # fmt: skip
        return hook

    def _merge(
        self, host: StagePlans, account: StagePlans, abtests: tuple[AbTest, ...] | None, account_id: str
    ) -> RequestPlans:
        stages = dict(host)
        for key, groups in account.items():
            stages[key] = stages.get(key, ()) + groups
        if abtests is None:  # PBS-Java: the host's tests that name this account (or none)
            abtests = tuple(t for t in self._host_abtests if not t.accounts or account_id in t.accounts)
        return RequestPlans(stages, abtests, frozenset(endpoint for endpoint, _ in stages))

    def entry_plans(self) -> RequestPlans:
        """Before the account is known: the host's plan (entrypoint runs only that)."""
        return self.entry

    def account_plans(self, account_id: str, hooks: Any) -> RequestPlans | None:
        """The plans for an account (``hooks``: its settings' ``hooks``); None when nothing runs. Kept in
        :attr:`account_cache` by account id, with the settings object they were made from (the
        same while the account's settings are)."""
        if not self.enabled:
            return None
        cached = self.account_cache.get(account_id)
        if cached is not None and cached[0] is hooks:
            return cached[1]
        plan_raw = getattr(hooks, "execution_plan", None)
        off = switched_off(hooks)
        if not plan_raw and not self._per_account and not off:
            plans = self._default_plans
        else:
            plans = _without_modules(self._account_plans(account_id, plan_raw), off)
        if len(self.account_cache) >= MAX_CACHED_ACCOUNT_PLANS:
            self.account_cache.clear()
        answer = plans if plans.endpoints else None
        self.account_cache[account_id] = (hooks, answer)
        return answer

    def _account_plans(self, account_id: str, raw: Any) -> RequestPlans:
        problems: list[str] = []
        plan = parse_plan(raw or None, "hooks.execution_plan", problems)  # the account store refused bad ones
        if not plan.has_endpoints:  # PBS-Java: the account's A/B tests apply whenever it has a plan
            abtests = plan.abtests if plan.abtests is not None else self._default_abtests
            return self._merge(self.host, self.default_account, abtests, account_id)
        compiled = self._compile(plan, f"account {account_id} hooks.execution_plan", None)
        return self._merge(self.host, compiled, plan.abtests, account_id)


def switched_off(hooks: Any) -> frozenset[str]:
    """The modules an account's ``hooks.admin.module_execution`` (PBS-Java's) sets to ``false``."""
    admin = getattr(hooks, "admin", None)
    execution = getattr(admin, "module_execution", None) or {}
    return frozenset(code for code, on in execution.items() if on is False)


def _without_modules(plans: RequestPlans, off: frozenset[str]) -> RequestPlans:
    """``plans`` without the hooks of the modules in ``off`` (PBS-Java's modulesExecution: false),
    in the host's groups as in the account's; a group left empty goes."""
    if not off:
        return plans
    stages: dict[tuple[str, Stage], tuple[CompiledGroup, ...]] = {}
    for key, groups in plans.stages.items():
        kept = tuple(
            CompiledGroup(group.timeout_ms, hooks)
            for group in groups
            if (hooks := tuple((ref, hook) for ref, hook in group.hooks if ref.module not in off))
        )
        if kept:
            stages[key] = kept
    return RequestPlans(stages, plans.abtests, frozenset(endpoint for endpoint, _ in stages))


def _enabled_codes(modules: Mapping[str, Any]) -> list[str]:
    """The codes of the module sections that say ``enabled: true`` (both PBS layouts)."""
    codes = []
    for key, section in modules.items():
        if not isinstance(section, Mapping):
            continue
        if section.get("enabled") is True:
            codes.append(str(key))
            continue
        codes.extend(f"{key}.{name}" for name, sub in section.items()
                     if isinstance(sub, Mapping) and sub.get("enabled") is True)  # fmt: skip
    return codes


def account_hooks_problems(hooks: Any) -> list[str]:
    """What is wrong in an account's ``hooks.execution_plan`` (each line names its key)."""
    problems: list[str] = []
    raw = getattr(hooks, "execution_plan", None)
    if raw:
        parse_plan(raw, "hooks.execution_plan", problems)
    return problems


__all__ = ["ENDPOINT_AMP", "ENDPOINT_AUCTION", "CompiledGroup", "Group", "HookRuntime", "RequestPlans"]
