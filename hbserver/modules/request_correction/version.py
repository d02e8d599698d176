"""PBS-Java's ``VersionUtil``: "is this SDK version below major.minor.patch?"

The version is split on dots. An unreadable or negative major
counts as newer than any bound; an unreadable or negative minor or patch counts as 0.
"""

from __future__ import annotations

import re

_INT = re.compile(r"[+-]?\d+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _part(parts: list[str], index: int, default: int) -> int:
    """Integer.parseInt of the part (a negative number or an error: ``default``)."""
    if index >= len(parts) or not _INT.fullmatch(parts[index]):
        return default
    value = int(parts[index])
    if value < _INT_MIN or value > _INT_MAX or value < 0:
        return default
    return value


def is_version_less_than(version: str, major: int, minor: int, patch: int) -> bool:
    parts = version.split(".")  # Java drops trailing empty parts: they would read as the default anyway
    parsed_major = _part(parts, 0, -1)
    diff = parsed_major - major if parsed_major >= 0 else 1
    if diff == 0:
        diff = _part(parts, 1, 0) - minor
    if diff == 0:
        diff = _part(parts, 2, 0) - patch
    return diff < 0
