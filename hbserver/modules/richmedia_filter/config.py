"""The rich media filter's settings: the host's (PBS-Java's ``hooks.modules.pb-richmedia-filter.*``
Spring properties) and the account's ``hooks.modules.pb-richmedia-filter``.

An account section that is present, not empty and readable replaces the host's settings whole (no
key-by-key merge); it must name both ``filter-mraid`` and ``mraid-script-pattern`` (either may be
null), else the host's settings apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.modules.request_correction.jackson import JacksonError, read_boolean, read_string

CODE = "pb-richmedia-filter"
FILTER_MRAID = "filter-mraid"
MRAID_SCRIPT_PATTERN = "mraid-script-pattern"
_OWNER = "PbRichMediaFilterProperties"
# Spring's boolean conversion of a property's text
_SPRING_TRUE = frozenset({"true", "on", "yes", "1"})
_SPRING_FALSE = frozenset({"false", "off", "no", "0"})
_NOT_ALNUM = re.compile("[^a-z0-9]")


@dataclass(frozen=True, slots=True)
class Properties:
    filter_mraid: bool | None = False  # None: the account said null (no filtering)
    mraid_script_pattern: str | None = None  # None: nothing matches


def _spring_name(key: str) -> str:
    """Spring's relaxed property name: case and any dash or underscore do not count."""
    return _NOT_ALNUM.sub("", key.lower())


def _spring_text(value: Any) -> str:
    """A scalar as the text of a Spring property (YAML's true is "true")."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _spring_boolean(value: Any, where: str) -> bool:
    text = _spring_text(value).strip().lower() if isinstance(value, (str, int, float)) else None
    if text in _SPRING_TRUE:
        return True
    if text in _SPRING_FALSE:
        return False
    raise ValueError(f"{where}: must be true or false, not {value!r}")


def host_properties(section: Mapping[str, Any]) -> Properties:
    """The host's settings (``filter-mraid`` false and no pattern unless given); bad values raise ValueError."""
    if not isinstance(section, Mapping):
        raise ValueError(f"hooks.modules.{CODE}: must be an object")
    filter_mraid, pattern = False, None
    for key, value in section.items():
        name = _spring_name(str(key))
        where = f"hooks.modules.{CODE}.{key}"
        if name == _spring_name(FILTER_MRAID) and value is not None:
            filter_mraid = _spring_boolean(value, where)
        elif name == _spring_name(MRAID_SCRIPT_PATTERN) and value is not None:
            if isinstance(value, (dict, list)):
                raise ValueError(f"{where}: must be a string")
            pattern = _spring_text(value)
    return Properties(filter_mraid, pattern)


def account_properties(node: Mapping[str, Any] | None) -> Properties | None:
    """The account's settings, None when its section is absent, empty or unreadable (the host's apply)."""
    if not node or FILTER_MRAID not in node or MRAID_SCRIPT_PATTERN not in node:
        return None
    try:
        return Properties(
            read_boolean(node[FILTER_MRAID], FILTER_MRAID, _OWNER, boxed=True),
            read_string(node[MRAID_SCRIPT_PATTERN], MRAID_SCRIPT_PATTERN, _OWNER),
        )
    except JacksonError:
        return None
