"""Auction modules (PBS's hooks modules), by the code a host's ``hooks`` configuration names them.

Each entry is ``"package.path:builder"``, imported only when the host enables the module: a
builder takes the host's module section and returns the module (see :mod:`hbserver.hooks.api`).
PBS-Go's modules are ``vendor.module``; PBS-Java's have no vendor (``pb-richmedia-filter``).
"""

from __future__ import annotations

import importlib
from typing import Any

from hbserver.hooks.api import ModuleBuilder

BUILDERS: dict[str, str] = {
    "prebid.ortb2blocking": "hbserver.modules.ortb2blocking:build",
    "prebid.rulesengine": "hbserver.modules.rulesengine:build",
    "pb-request-correction": "hbserver.modules.request_correction:build",
    "pb-response-correction": "hbserver.modules.response_correction:build",
    "pb-richmedia-filter": "hbserver.modules.richmedia_filter:build",
}


def builder_of(code: str, extra: dict[str, str] | None = None) -> ModuleBuilder | None:
    """The builder of the module ``code`` (``extra``: more ``code -> "path:name"``, for tests)."""
    target = (extra or {}).get(code) or BUILDERS.get(code)
    if target is None:
        return None
    path, _, name = target.partition(":")
    found: Any = getattr(importlib.import_module(path), name)
    return found  # type: ignore[no-any-return]
