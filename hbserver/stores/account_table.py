"""The README account table's "defined by" column and its rows for the keys hbserver does not apply.

Which Prebid Server defines an applied key is worked out from the servers' key trees: PBS-Go's
directly, PBS-Java's through :func:`~hbserver.stores.account_aliases.normalise` (each of its keys
written alone, with a few values its translations accept, and read where hbserver puts it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from hbserver.stores.account_aliases import normalise
from hbserver.stores.account_keys import OPEN, PBS_GO, PBS_JAVA, WILDCARD, Tree
from hbserver.stores.account_refusals import RULES

_SAMPLE_KEY = "sample"  # stands for the key of a map (alternate bidder codes' bidders)
# values PBS-Java's translations accept (status, enforce_purpose, purpose one treatment, eea countries)
_SAMPLE_VALUES = (1, "active", "full", "access_allowed", "fr")


def _leaves(tree: Tree, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, sub in tree.items():
        here = (*path, _SAMPLE_KEY if key == WILDCARD else key)
        if sub is OPEN:
            yield here
        else:
            yield from _leaves(sub, here)


def _data_leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _data_leaves(value, path + ".")  # an empty one: a block the translation emptied
        else:
            yield path


def _nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    data: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        data = {part: data}
    return data


@cache
def _defined() -> tuple[frozenset[str], frozenset[str]]:
    """(PBS-Go's key paths, PBS-Java's key paths where hbserver reads them)."""
    go = frozenset(".".join(leaf) for leaf in _leaves(PBS_GO))
    java: set[str] = set()
    for leaf in _leaves(PBS_JAVA):
        for value in _SAMPLE_VALUES:
            data, problems = normalise(_nested(leaf, value))
            if not problems:
                java.update(_data_leaves(data))
    return go, frozenset(java)


def _concrete(row_key: str) -> str:
    """A key of the table made a path: ``purpose{1-10}`` -> ``purpose1``, ``{amp,app}`` -> ``amp``."""
    row_key = re.sub(r"\{(\d+)-\d+\}", r"\1", row_key)
    return re.sub(r"\{([^,}]+)[^}]*\}", r"\1", row_key)


def _covers(paths: frozenset[str], key: str) -> bool:
    key = key.replace(".bidders." + _SAMPLE_KEY, ".bidders")
    return any(p == key or p.startswith(key + ".") or key.startswith(p + ".") for p in paths)


def defined_by(row_key: str) -> str:
    """``PBS-Go``, ``PBS-Java``, both, or ``hbserver`` (a key of its own) for a row of the table."""
    go, java = _defined()
    key = _concrete(row_key)
    servers = [name for name, paths in (("PBS-Go", go), ("PBS-Java", java)) if _covers(paths, key)]
    return ", ".join(servers) or "hbserver"


def refusal_rows() -> list[tuple[str, Any, str, str]]:
    """(key, Prebid Server's default, defined by, meaning) of the Prebid Server keys hbserver does not apply."""
    return [(rule.pattern, rule.default, rule.server, rule.why) for rule in RULES]
