"""Bidder adapters: for each built-in code either a recipe (``hbserver/adapters/recipes/<code>.yaml``,
run by :mod:`hbserver.adapters.recipe`) or a module ``hbserver/adapters/<module>.py`` (``adapter_module``:
the code in lower case, ``_`` in front when it starts with a digit, e.g. ``33across`` -> ``_33across``)
exposing ``build(config: AdapterConfig) -> Adapter``. An alias runs the adapter of the code it is an
alias of.
"""

from __future__ import annotations

import importlib
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING

from hbserver.adapters.base import Adapter, AdapterConfig

if TYPE_CHECKING:
    from hbserver.bidders.registry import Registry


class UnknownAdapter(LookupError):
    """No adapter module for a built-in code (a bidder definition without an implementation)."""


def adapter_module(adapter_code: str) -> str:
    """The module that implements a built-in adapter code (a Python name)."""
    name = adapter_code.lower()
    return f"hbserver.adapters.{'_' + name if name[:1].isdigit() else name}"


RECIPE_DIR = Path(__file__).resolve().parent / "recipes"


def recipe_path(adapter_code: str) -> Path:
    """Where the recipe of a built-in adapter code would be."""
    return RECIPE_DIR / f"{adapter_code.lower()}.yaml"


def has_adapter(adapter_code: str) -> bool:
    """Whether a built-in adapter code has a module or a recipe (without importing either)."""
    return util.find_spec(adapter_module(adapter_code)) is not None or recipe_path(adapter_code).is_file()


def build_adapter(adapter_code: str, config: AdapterConfig) -> Adapter:
    """The adapter instance for ``config.bidder``, running the module of ``adapter_code``."""
    module_name = adapter_module(adapter_code)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        from hbserver.adapters.recipe import build_from_recipe

        recipe_adapter = build_from_recipe(adapter_code, config)
        if recipe_adapter is None:
            raise UnknownAdapter(adapter_code) from None
        return recipe_adapter
    adapter: Adapter = module.build(config)
    return adapter


def adapter_problems(registry: Registry) -> list[str]:
    """One line per enabled bidder whose adapter refuses to be built with its endpoint (as PBS-Go's
    builders refuse a URL they cannot use), naming the configuration key."""
    problems = []
    for code, bidder in registry.bidders.items():
        if bidder.disabled:
            continue
        try:
            build_adapter(bidder.adapter, AdapterConfig(code, bidder.endpoint, {"extra_info": bidder.extra_info}))
        except UnknownAdapter:
            continue
        except ValueError as exc:
            problems.append(f"adapters.{code}.endpoint: {exc}")
    return problems
