"""Bidder-params validation: our own JSON schemas in ``schemas/<adapter code>.json``.

Every schema is compiled once, at import, into nested closures; a call walks only those closures
and builds a message only when something fails (a few µs per imp). The validator covers the JSON
Schema keywords listed in ``_KEYWORDS``; a schema using any other assertion keyword is refused at
start-up rather than silently not checked. ``type: integer`` accepts ``1.0`` as JSON Schema does.

``validate_params(code, params)`` returns None when valid, else one line naming the field, such as
``placement_id: must be integer or string``; the auction core wraps it as
``request.imp[i].ext.prebid.bidder.<b> failed validation.\\n<message>``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

SCHEMAS = Path(__file__).with_name("schemas")
# Built-in adapters that take any params object: the OpenRTB pass-through (CONTRACT §4).
SCHEMALESS_ADAPTERS = frozenset({"generic"})

# A compiled check: the value -> None when valid, else (path from here, what is wrong).
Failure = tuple[list[str | int], str]
Check = Callable[[Any], Failure | None]

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})


class SchemaError(ValueError):
    """A schema file this validator cannot enforce (bad JSON, an unknown keyword, a bad value)."""


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


def _fail(message: str) -> Failure:
    return [], message


def _nested(key: str | int, failure: Failure) -> Failure:
    failure[0].insert(0, key)
    return failure


def _type(names: Any) -> Check:
    names = [names] if isinstance(names, str) else names
    if not names or any(name not in _TYPES for name in names):
        raise SchemaError(f"bad type {names!r}")
    tests = tuple(_TYPES[name] for name in names)
    message = "must be " + " or ".join(names)

    def check(value: Any) -> Failure | None:
        for test in tests:
            if test(value):
                return None
        return _fail(message)

    return check


def _properties(props: Any, where: str) -> Check:
    if not isinstance(props, dict):
        raise SchemaError(f"{where}: properties must be an object")
    checks = {name: compile_schema(sub, f"{where}.{name}") for name, sub in props.items()}

    def check(value: Any) -> Failure | None:
        if not isinstance(value, dict):
            return None
        for name, item in value.items():  # params carry few of the properties a schema knows
            sub = checks.get(name)
            if sub is not None:
                failure = sub(item)
                if failure is not None:
                    return _nested(name, failure)
        return None

    return check


def _additional(extra: Any, known: frozenset[str], where: str) -> Check:
    if extra is False:
        def refuse(value: Any) -> Failure | None:
            if isinstance(value, dict):
                for name in value:
                    if name not in known:
                        return _fail(f"unknown property {name}")
            return None
        return refuse
    sub = compile_schema(extra, f"{where}.additionalProperties")

    def check(value: Any) -> Failure | None:
        if isinstance(value, dict):
            for name, item in value.items():
                if name not in known:
                    failure = sub(item)
                    if failure is not None:
                        return _nested(name, failure)
        return None

    return check


def _required(names: Any) -> Check:
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise SchemaError(f"bad required {names!r}")

    def check(value: Any) -> Failure | None:
        if isinstance(value, dict):
            for name in names:
                if name not in value:
                    return _fail(f"{name} is required")
        return None

    return check


def _dependencies(rules: Any, where: str) -> Check:
    """Draft-04 ``dependencies``: when a property is present, the object must also have the listed
    properties (array form) or satisfy the schema (schema form)."""
    if not isinstance(rules, dict):
        raise SchemaError(f"{where}: dependencies must be an object")
    compiled: list[tuple[str, Check, str]] = []
    for name, rule in rules.items():
        if isinstance(rule, list):
            compiled.append((name, _required(rule), ""))
        else:
            compiled.append((name, compile_schema(rule, f"{where}.dependencies.{name}"), f" (with {name})"))

    def check(value: Any) -> Failure | None:
        if isinstance(value, dict):
            for name, rule_check, context in compiled:
                if name in value:
                    failure = rule_check(value)
                    if failure is not None:
                        return failure[0], failure[1] + context
        return None

    return check


def _items(schema: Any, where: str) -> Check:
    sub = compile_schema(schema, f"{where}.items")

    def check(value: Any) -> Failure | None:
        if isinstance(value, list):
            for index, item in enumerate(value):
                failure = sub(item)
                if failure is not None:
                    return _nested(index, failure)
        return None

    return check


def _bound(applies: Callable[[Any], bool], measure: Callable[[Any], Any], limit: Any,
           ok: Callable[[Any, Any], bool], message: str) -> Check:
    if not _is_number(limit):
        raise SchemaError(f"bad limit {limit!r}")

    def check(value: Any) -> Failure | None:
        if applies(value) and not ok(measure(value), limit):
            return _fail(message)
        return None

    return check


def _pattern(text: Any) -> Check:
    try:
        regex = re.compile(text)
    except (re.error, TypeError) as exc:
        raise SchemaError(f"bad pattern {text!r}: {exc}") from None
    message = f"must match {text}"

    def check(value: Any) -> Failure | None:
        if isinstance(value, str) and regex.search(value) is None:
            return _fail(message)
        return None

    return check


# JSON Schema ``format`` names the params schemas use, with the rule each enforces (the forms the
# Go validator, gojsonschema, accepts).
_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "uuid": (re.compile(r"\A[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\Z"),
             "must be a UUID"),
    "hostname": (re.compile(r"\A(?=.{1,253}\.?\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                            r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z"),
                 "must be a host name"),
}


def _format(name: Any) -> Check:
    if name not in _FORMATS:
        raise SchemaError(f"unsupported format {name!r}")
    regex, message = _FORMATS[name]

    def check(value: Any) -> Failure | None:
        if isinstance(value, str) and regex.match(value) is None:
            return _fail(message)
        return None

    return check


def _enum(options: Any) -> Check:
    if not isinstance(options, list) or not options:
        raise SchemaError(f"bad enum {options!r}")
    keys = {orjson.dumps(option) for option in options}
    message = "must be one of " + ", ".join(orjson.dumps(option).decode() for option in options)

    def check(value: Any) -> Failure | None:
        try:
            found = orjson.dumps(value) in keys
        except TypeError:
            found = False
        return None if found else _fail(message)

    return check


def _alternatives(keyword: str, schemas: Any, where: str) -> Check:
    if not isinstance(schemas, list) or not schemas:
        raise SchemaError(f"{where}: {keyword} must be a non-empty array")
    # (type test or None, its message, check): an alternative of one declared type is run only on
    # values of that type, the others fail it at once (the common keywords: string | array | object).
    subs = tuple(
        (_TYPES.get(sub.get("type")) if isinstance(sub, dict) and isinstance(sub.get("type"), str) else None,
         f"must be {sub['type']}" if isinstance(sub, dict) and isinstance(sub.get("type"), str) else "",
         compile_schema(sub, f"{where}.{keyword}[{i}]"))
        for i, sub in enumerate(schemas)
    )

    def explain(failures: list[Failure]) -> Failure:
        reasons = " or ".join(f"({_where(path)}{message})" for path, message in failures)
        return _fail(f"must satisfy one of: {reasons}")

    if keyword == "anyOf":
        def any_of(value: Any) -> Failure | None:
            failures = []
            for test, wrong_type, sub in subs:
                failure = _fail(wrong_type) if test is not None and not test(value) else sub(value)
                if failure is None:
                    return None
                failures.append(failure)
            return explain(failures)
        return any_of

    def one_of(value: Any) -> Failure | None:
        failures = []
        for test, wrong_type, sub in subs:
            failure = _fail(wrong_type) if test is not None and not test(value) else sub(value)
            if failure is not None:
                failures.append(failure)
        passed = len(subs) - len(failures)
        if passed == 1:
            return None
        return explain(failures) if passed == 0 else _fail("must satisfy exactly one of the alternatives, not several")

    return one_of


def _all_of(schemas: Any, where: str) -> Check:
    if not isinstance(schemas, list) or not schemas:
        raise SchemaError(f"{where}: allOf must be a non-empty array")
    return _sequence(tuple(compile_schema(sub, f"{where}.allOf[{i}]") for i, sub in enumerate(schemas)))


def _not(schema: Any, where: str) -> Check:
    sub = compile_schema(schema, f"{where}.not")
    message = f"must not match {orjson.dumps(schema).decode()}"

    def check(value: Any) -> Failure | None:
        return _fail(message) if sub(value) is None else None

    return check


def _sequence(checks: tuple[Check, ...]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> Failure | None:
        for one in checks:
            failure = one(value)
            if failure is not None:
                return failure
        return None

    return check


def _identity(value: Any) -> Any:
    return value


_OBJECT, _ARRAY, _STRING = _TYPES["object"], _TYPES["array"], _TYPES["string"]


# keyword -> builder(value, schema, where); the order of this table is the order checks run.
_KEYWORDS: dict[str, Callable[[Any, Mapping[str, Any], str], Check]] = {
    "type": lambda v, s, w: _type(v),
    "enum": lambda v, s, w: _enum(v),
    "const": lambda v, s, w: _enum([v]),
    "required": lambda v, s, w: _required(v),
    "properties": lambda v, s, w: _properties(v, w),
    "additionalProperties": lambda v, s, w: _additional(v, frozenset(s.get("properties", {})), w),
    "dependencies": lambda v, s, w: _dependencies(v, w),
    "minProperties": lambda v, s, w: _bound(_OBJECT, len, v, operator.ge, f"must have at least {v} properties"),
    "items": lambda v, s, w: _items(v, w),
    "minItems": lambda v, s, w: _bound(_ARRAY, len, v, operator.ge, f"must have at least {v} items"),
    "maxItems": lambda v, s, w: _bound(_ARRAY, len, v, operator.le, f"must have at most {v} items"),
    "minLength": lambda v, s, w: _bound(_STRING, len, v, operator.ge, f"must be at least {v} characters long"),
    "maxLength": lambda v, s, w: _bound(_STRING, len, v, operator.le, f"must be at most {v} characters long"),
    "minimum": lambda v, s, w: _bound(_is_number, _identity, v, operator.ge, f"must be at least {v}"),
    "maximum": lambda v, s, w: _bound(_is_number, _identity, v, operator.le, f"must be at most {v}"),
    "exclusiveMinimum": lambda v, s, w: _bound(_is_number, _identity, v, operator.gt, f"must be greater than {v}"),
    "exclusiveMaximum": lambda v, s, w: _bound(_is_number, _identity, v, operator.lt, f"must be less than {v}"),
    "pattern": lambda v, s, w: _pattern(v),
    "format": lambda v, s, w: _format(v),
    "anyOf": lambda v, s, w: _alternatives("anyOf", v, w),
    "oneOf": lambda v, s, w: _alternatives("oneOf", v, w),
    "allOf": lambda v, s, w: _all_of(v, w),
    "not": lambda v, s, w: _not(v, w),
}


def _accept(value: Any) -> Failure | None:
    return None


def compile_schema(schema: Any, where: str = "$") -> Check:
    """One check for a schema object (``true`` accepts anything); SchemaError when unsupported."""
    if schema is True or schema == {}:
        return _accept
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object or true")
    unknown = sorted(set(schema) - _KEYWORDS.keys() - _ANNOTATIONS)
    if unknown:
        raise SchemaError(f"{where}: unsupported keyword(s) {', '.join(unknown)}")
    checks = tuple(build(schema[key], schema, where) for key, build in _KEYWORDS.items() if key in schema)
    return _sequence(checks) if checks else _accept


def _where(path: list[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return f"{text}: " if text else ""


def load_schemas(directory: Path = SCHEMAS) -> dict[str, Any]:
    """adapter code -> its schema document, for every ``<code>.json`` in ``directory``."""
    schemas = {}
    for path in sorted(directory.glob("*.json")):
        try:
            schemas[path.stem] = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise SchemaError(f"{path.name}: {exc}") from None
    return schemas


def load_validators(directory: Path = SCHEMAS, schemas: Mapping[str, Any] | None = None) -> dict[str, Check]:
    """adapter code -> compiled check, for every ``<code>.json`` in ``directory`` (or each of
    ``schemas`` already read from it)."""
    schemas = load_schemas(directory) if schemas is None else schemas
    return {code: compile_schema(schema, f"{code}.json") for code, schema in schemas.items()}


_SCHEMAS = load_schemas()
_VALIDATORS = load_validators(schemas=_SCHEMAS)


def schema_of(adapter_code: str) -> Any | None:
    """The schema document an adapter's params are validated against; None for a schemaless one."""
    return _SCHEMAS.get(adapter_code)


def validate_params(adapter_code: str, params: object) -> str | None:
    """None when ``params`` suit the adapter's schema, else a message naming the field.

    A code without a schema file accepts any JSON object.
    """
    check = _VALIDATORS.get(adapter_code)
    if check is None:
        return None if isinstance(params, dict) else "(root): must be an object"
    failure = check(params)
    return None if failure is None else describe(failure)


def describe(failure: Failure) -> str:
    """``<field path>: <what is wrong>``, the path ``(root)`` for the params object itself."""
    path, message = failure
    return f"{_where(path) or '(root): '}{message}"
