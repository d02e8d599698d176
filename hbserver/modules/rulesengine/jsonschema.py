"""PBS-Go's ``rules-engine-schema.json`` and the part of draft-04 it uses, checked the way
gojsonschema reports it: ``[<field>: <description>] `` per error, ``(root)`` for the top.

An object's ``required`` errors come before its properties' errors; a value of the wrong type
stops the checks below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.modules.rulesengine.schema_functions import SCHEMA_FUNCTION_NAMES

_STAGES = [
    "entrypoint",
    "raw_auction_request",
    "processed_auction_request",
    "bidder_request",
    "raw_bidder_response",
    "all_processed_bid_responses",
    "auction_response",
]
_RESULT_FUNCTIONS = ["excludeBidders", "includeBidders", "logATag"]


def _function_list(names: list[str]) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"function": {"type": "string", "enum": names}, "args": {"type": "object"}},
            "required": ["function"],
        },
    }


_MODEL_GROUP = {
    "type": "object",
    "properties": {
        "weight": {"type": "number", "minimum": 1, "maximum": 100},
        "analyticsKey": {"type": "string"},
        "version": {"type": "string"},
        "schema": _function_list(list(SCHEMA_FUNCTION_NAMES)),
        "default": _function_list(_RESULT_FUNCTIONS),
        "rules": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "conditions": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                    "results": _function_list(_RESULT_FUNCTIONS),
                },
                "required": ["conditions", "results"],
            },
        },
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "enabled": {"type": "boolean"},
        "generate_rules_from_bidderconfig": {"type": "boolean"},
        "set_definitions": {
            "type": "object",
            "properties": {
                "country_groups": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                }
            },
            "additionalProperties": False,
        },
        "timestamp": {"type": "string"},
        "rulesets": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "stage": {"type": "string", "enum": _STAGES},
                    "name": {"type": "string", "minLength": 1},
                    "version": {"type": "string"},
                    "modelgroups": {"type": "array", "minItems": 1, "items": _MODEL_GROUP},
                },
                "required": ["stage", "name", "modelgroups"],
            },
        },
    },
    "required": ["enabled", "rulesets"],
}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else "unknown"


def _type_ok(value: Any, expected: str) -> bool:
    given = _type_of(value)
    return given == expected or (expected == "number" and given == "integer")


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _field(path: list[str]) -> str:
    return ".".join(path) if path else "(root)"


def _check_object(schema: Mapping[str, Any], value: Mapping[str, Any], path: list[str], out: list[str]) -> None:
    here = _field(path)
    out.extend(f"{here}: {name} is required" for name in schema.get("required", ()) if name not in value)
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            _check(properties[key], item, [*path, key], out)
        elif extra is False:
            out.append(f"{here}: Additional property {key} is not allowed")
        elif isinstance(extra, Mapping):
            _check(extra, item, [*path, key], out)


def _check_scalar(schema: Mapping[str, Any], value: Any, here: str, out: list[str]) -> None:
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(f'"{name}"' for name in schema["enum"])
        out.append(f"{here}: {here} must be one of the following: {allowed}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        out.append(f"{here}: String length must be greater than or equal to {schema['minLength']}")
    if _type_of(value) in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{here}: Must be greater than or equal to {_num(schema['minimum'])}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{here}: Must be less than or equal to {_num(schema['maximum'])}")


def _check(schema: Mapping[str, Any], value: Any, path: list[str], out: list[str]) -> None:
    here = _field(path)
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        out.append(f"{here}: Invalid type. Expected: {expected}, given: {_type_of(value)}")
        return
    if isinstance(value, Mapping):
        _check_object(schema, value, path, out)
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{here}: Array must have at least {schema['minItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                _check(schema["items"], item, [*path, str(index)], out)
    else:
        _check_scalar(schema, value, here, out)


def schema_errors(config: Any) -> list[str]:
    """gojsonschema's error strings for ``config`` against :data:`SCHEMA` (empty: valid)."""
    out: list[str] = []
    _check(SCHEMA, config, [], out)
    return out


def validate(config: Any) -> None:
    """PBS-Go ``validateConfig``: ValueError with every error, each as ``[...] ``."""
    errors = schema_errors(config)
    if errors:
        raise ValueError("".join(f"[{error}] " for error in errors))
