"""Reading a function's ``args`` object the way PBS-Go's ``jsonutil.Unmarshal`` fills a struct.

Go matches JSON keys to struct fields case-insensitively (the last matching key wins) and ignores
keys no field has; absent ``args`` (a nil ``json.RawMessage``) cannot be unmarshalled at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MISSING: Any = object()  # ``args`` absent from the function's config object


def field(args: Mapping[str, Any], name: str) -> Any:
    """The value of Go field ``name`` in ``args`` (MISSING when no key matches it)."""
    found: Any = MISSING
    if name in args:
        return args[name]
    lowered = name.lower()
    for key, value in args.items():
        if key.lower() == lowered:
            found = value
    return found


def require_object(args: Any, func: str) -> Mapping[str, Any]:
    """``args`` as an object, or the error Go's unmarshal of a missing or non-object value gives."""
    if args is MISSING:
        raise ValueError(f"{func}: args are required")
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ValueError(f"{func}: args must be an object")
    return args


def string_list(args: Mapping[str, Any], name: str, func: str) -> list[str]:
    """A ``[]string`` field (absent or null: empty)."""
    value = field(args, name)
    if value is MISSING or value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{func}: args.{name} must be an array of strings")
    return list(value)


def is_int(value: Any) -> bool:
    """A JSON integer (Go refuses a float or a bool for an int field)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_list(args: Mapping[str, Any], name: str, func: str, low: int, high: int) -> list[int]:
    """A ``[]intN`` field whose items must fit ``low..high`` (absent or null: empty)."""
    value = field(args, name)
    if value is MISSING or value is None:
        return []
    if not isinstance(value, list) or not all(is_int(item) and low <= item <= high for item in value):
        raise ValueError(f"{func}: args.{name} must be an array of integers from {low} to {high}")
    return list(value)


def optional_typed(args: Mapping[str, Any], name: str, kind: type, func: str, what: str) -> Any:
    """A scalar field of one JSON type (MISSING or None when absent or null)."""
    value = field(args, name)
    if value is MISSING or value is None:
        return value
    ok = is_int(value) if kind is int else isinstance(value, kind)
    if not ok:
        raise ValueError(f"{func}: args.{name} must be {what}")
    return value
