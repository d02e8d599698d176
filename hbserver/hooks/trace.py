"""The hooks' outcomes in the response: ``ext.prebid.modules`` (PBS-Go's ``hookexecution/enricher.go``).

``errors`` and ``warnings`` (``{module: {hook_impl_code: [text]}}``) show when the request is in debug
(``test: 1`` or ``ext.prebid.debug``) and the account allows debug; ``trace`` shows with
``ext.prebid.trace`` ``basic`` (no debug messages) or ``verbose``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hbserver.hooks.outcome import StageOutcome

BASIC = "basic"
VERBOSE = "verbose"


def trace_level(request: Any) -> str:
    """``ext.prebid.trace`` of a request ("" when absent or not a string)."""
    ext = request.get("ext") if isinstance(request, dict) else None
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    level = prebid.get("trace") if isinstance(prebid, dict) else None
    return level if isinstance(level, str) else ""


def modules_json(outcomes: Sequence[StageOutcome], trace: str, debug: bool) -> dict[str, Any] | None:
    """``ext.prebid.modules`` for these outcomes; None when there is nothing to show."""
    if not outcomes:
        return None
    verbose = trace == VERBOSE
    errors: dict[str, dict[str, list[str]]] = {}
    warnings: dict[str, dict[str, list[str]]] = {}
    stages: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        if not outcome.groups:
            continue
        if debug:
            for hook in outcome.hooks():
                _add(errors, hook.hook.module, hook.hook.code, hook.errors)
                _add(warnings, hook.hook.module, hook.hook.code, hook.warnings)
        if trace not in (BASIC, VERBOSE):
            continue
        stage = stages.setdefault(outcome.stage.value, {"stage": outcome.stage.value, "outcomes": [], "ms": 0})
        stage["outcomes"].append(_stage_outcome(outcome, verbose))
        stage["ms"] = max(stage["ms"], outcome.execution_ms)
    out: dict[str, Any] = {}
    if errors:
        out["errors"] = errors
    if warnings:
        out["warnings"] = warnings
    if stages:
        out["trace"] = _trace(list(stages.values()))
    return out or None


def _trace(stages: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(stage["ms"] for stage in stages)
    shown = []
    for stage in stages:
        entry: dict[str, Any] = {"stage": stage["stage"]}
        if stage["ms"]:
            entry["execution_time_millis"] = stage["ms"]
        entry["outcomes"] = stage["outcomes"]
        shown.append(entry)
    out: dict[str, Any] = {}
    if total:
        out["execution_time_millis"] = total
    out["stages"] = shown
    return out


def _stage_outcome(outcome: StageOutcome, verbose: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"entity": outcome.entity}
    if outcome.execution_ms:
        out["execution_time_millis"] = outcome.execution_ms
    groups = []
    for group in outcome.groups:
        entry: dict[str, Any] = {}
        if group.execution_ms:
            entry["execution_time_millis"] = group.execution_ms
        entry["invocation_results"] = [hook.as_json(verbose) for hook in group.results]
        groups.append(entry)
    out["groups"] = groups
    return out


def _add(messages: dict[str, dict[str, list[str]]], module: str, code: str, texts: list[str]) -> None:
    if texts:
        messages.setdefault(module, {}).setdefault(code, []).extend(texts)
