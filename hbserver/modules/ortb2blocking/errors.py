"""The module's failures."""

from __future__ import annotations

from typing import Any

from hbserver.hooks.api import HookFailure, HookResult


class OverrideError(Exception):
    """An override PBS-Go refuses when a hook uses it (the text is PBS-Go's)."""


class BlockingFailure(HookFailure):
    """A hook's failure (PBS-Go's ``FailureError``) with what the hook had gathered by then:
    PBS-Go keeps a failed hook's warnings and analytics tags (the activity's status ``error``) in
    its trace. The hooks API has no field for them on a failure, so they ride here, as ``result``,
    for an executor that looks."""

    def __init__(self, message: str, result: HookResult[Any]) -> None:
        super().__init__(message)
        self.result = result
