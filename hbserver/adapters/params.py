"""Bidder-params validation: our own JSON schemas in ``schemas/<adapter code>.json``, answered in the
words and order of PBS-Go's validator, github.com/xeipuuv/gojsonschema v1.2.0 (the version it pins).

Every schema is compiled once, at import, into two sets of nested closures:

* a *test* (value -> bool), run first on every call. It only says valid or not and builds nothing,
  so a valid params object costs a few µs per imp;
* an *explainer*, run only when the test fails, that walks the value the way gojsonschema does and
  collects **every** error. For each JSON value: a wrong ``type`` is the only error for it. Otherwise
  the schema-level keywords come first (anyOf, oneOf, allOf, not, dependencies, if/then/else), then the checks
  for the value's kind: numbers maximum, exclusiveMaximum, minimum, exclusiveMinimum, format, then
  const, enum; strings const, enum, then minLength, maxLength, pattern, format; arrays items,
  minItems, maxItems, uniqueItems, then const, enum; objects minProperties, maxProperties,
  required, additionalProperties, then const, enum, then each property's own errors. anyOf and oneOf
  give their own error first, then the errors of the alternative that gojsonschema ranks closest.
  gojsonschema ranks by a score, so the explainer keeps the same score.

An error reads ``<field>: <description>``. The field is ``(root)`` for the params object itself,
otherwise the dotted path from it, with array indexes as numbers (``keywords.0.key``). Descriptions
use gojsonschema's English locale, with numbers printed the way Go prints them. ``validate_params``
returns the errors run together with no separator, as PBS-Go joins them, and the auction core wraps
them as ``request.imp[i].ext.prebid.bidder.<b> failed validation.\\n<errors>``.

Part of gojsonschema's order comes from Go's random map iteration. A map of up to 8 entries is
walked in insertion order from a random starting entry, wrapping round. We always start at the
first entry: an object's properties are checked in the schema's order, and the keys checked against
additionalProperties or dependencies in the params' order. Each of these orders is one PBS-Go itself
produces (for a schema with more than 8 properties, Go's order is a hash order we cannot reproduce).
Formats behave as in v1.2.0: ``uuid`` accepts lower case only, and a number fails any format it is
given. Patterns use Go's meaning of ``$`` (end of text only) and ASCII-only ``\\d``, ``\\w``, ``\\s``.
Our schema files have no ``$schema``, so gojsonschema would read them under its "hybrid" draft:
``const``, a numeric ``exclusiveMinimum``/``exclusiveMaximum``, ``if``/``then``/``else`` and boolean
schemas are allowed.
A schema that uses any keyword not in ``_KEYWORDS`` is refused at start-up, so nothing goes
silently unchecked. ``type: integer`` accepts ``1.0``, as it does in gojsonschema.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from hbserver.adapters.golike import go_json_text

SCHEMAS = Path(__file__).with_name("schemas")
# Built-in adapters that take any params object: the OpenRTB pass-through (CONTRACT §4).
SCHEMALESS_ADAPTERS = frozenset({"generic"})

# One gojsonschema error, (field, description); PBS-Go prints it as "<field>: <description>".
ResultError = tuple[str, str]
Failure = list[ResultError]
# A compiled schema: the value -> None when valid, else its errors in gojsonschema's order.
Check = Callable[[Any], Failure | None]

# The assertion keywords enforced; any other keyword except the annotations is refused at start-up.
_KEYWORDS = frozenset({
    "type", "enum", "const",
    "anyOf", "oneOf", "allOf", "not", "dependencies", "if", "then", "else",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "format",
    "items", "minItems", "maxItems", "uniqueItems",
    "properties", "additionalProperties", "required", "minProperties", "maxProperties",
})
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})
_ROOT = "(root)"


class SchemaError(ValueError):
    """A schema file this validator cannot enforce (bad JSON, an unknown keyword, a bad value)."""


class _Result:
    """What gojsonschema collects while validating: the errors so far and the score it uses to
    choose between failing anyOf/oneOf alternatives. Each error takes 2 off the score, and each
    finished step of the walk adds 1."""

    __slots__ = ("errors", "score")

    def __init__(self) -> None:
        self.errors: Failure = []
        self.score = 0

    def add(self, ctx: str, description: str) -> None:
        self.errors.append((_field(ctx), description))
        self.score -= 2

    def merge(self, other: _Result) -> None:
        self.errors.extend(other.errors)
        self.score += other.score


Test = Callable[[Any], bool]
Explain = Callable[[Any, str, _Result], None]


class _Node(NamedTuple):
    test: Test
    explain: Explain


def _field(ctx: str) -> str:
    """gojsonschema's Field(): the context path without its leading ``(root).``."""
    return ctx[7:] if ctx.startswith("(root).") else ctx


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    """The type name gojsonschema gives a JSON value (``given: ...``): integral numbers are integer."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


_TYPE_TESTS: dict[str, Test] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


# The Python types of values that are certainly of a JSON type (bool is not int here: type() is exact).
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "null": (type(None),),
}


# --- Go's printing of numbers and JSON values in messages ------------------------------------------

def _digits(number: int | float) -> tuple[bool, str, int]:
    """A number's shortest decimal form as (negative, digits without trailing zeros, point), where
    value = 0.<digits> x 10**point; digits are empty for zero."""
    sign, digit_tuple, exponent = Decimal(repr(number) if isinstance(number, float) else number).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return bool(sign), stripped, len(stripped) + exponent


def _mantissa_exponent(digits: str, exp: int, pad: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):0{pad}d}"


def _plain(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def go_limit_text(number: int | float) -> str:
    """A schema limit as gojsonschema prints it (a big.Float with %v: 'g', shortest): ``1``,
    ``0.5``, ``100000``, ``1e+06``, ``1.5e-05``."""
    negative, digits, point = _digits(number)
    if not digits:
        return "0"
    exp = point - 1
    text = _mantissa_exponent(digits, exp, 2) if exp < -4 or exp >= 6 else _plain(digits, point)
    return "-" + text if negative else text


def _go_json_number(number: int | float) -> str:
    """encoding/json's text for a float64 (gojsonschema turns every number into one before
    printing): shortest digits, an exponent only below 1e-6 or from 1e21 up."""
    try:
        value = float(number)
    except OverflowError:
        return str(number)
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    negative, digits, point = _digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        exp = point - 1
        text = _mantissa_exponent(digits, exp, 1 if exp < 0 else 2)  # e-7, e+21, as encoding/json
    else:
        text = _plain(digits, point)
    return "-" + text if negative else text


def go_json(value: Any) -> str:
    """A JSON value as gojsonschema compares and prints it for enum, const and uniqueItems. It is
    encoding/json's output after a round trip through float64, so ``1`` and ``1.0`` are equal and
    object keys are sorted."""
    if isinstance(value, str):
        return go_json_text(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return _go_json_number(value)
    if isinstance(value, list):
        return "[" + ",".join(map(go_json, value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(go_json(key) + ":" + go_json(value[key]) for key in sorted(value)) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


# --- keyword builders: each returns (test, explain) ---------------------------------------------

def _accept(value: Any) -> bool:
    return True


def _explain_nothing(value: Any, ctx: str, result: _Result) -> None:
    return None


def _explain_false(value: Any, ctx: str, result: _Result) -> None:
    result.add(ctx, "False always fails validation")


_PASS = _Node(_accept, _explain_nothing)  # the schema true: no errors, no score
_FAIL = _Node(lambda value: False, _explain_false)


def _all(tests: list[Test]) -> Test:
    if not tests:
        return _accept
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda value: first(value) and second(value)
    checks = tuple(tests)

    def test(value: Any) -> bool:
        for one in checks:
            if not one(value):
                return False
        return True

    return test


def _type(names: Any, where: str) -> tuple[Test, frozenset[str], str]:
    """(test, the kinds it accepts, its name in messages: ``object`` or ``[integer,string]``)."""
    names = [names] if isinstance(names, str) else names
    if (not isinstance(names, list) or not names or len(set(names)) != len(names)
            or any(name not in _TYPE_TESTS for name in names)):
        raise SchemaError(f"{where}: bad type {names!r}")
    kinds = frozenset(names) | ({"integer"} if "number" in names else frozenset())
    exact = frozenset(python for name in names for python in _PYTHON_TYPES[name])
    tests = tuple(_TYPE_TESTS[name] for name in names)

    def test(value: Any) -> bool:
        if type(value) in exact:  # the types orjson gives; integral floats and subclasses below
            return True
        for one in tests:
            if one(value):
                return True
        return False

    return test, kinds, names[0] if len(names) == 1 else f"[{','.join(names)}]"


def _count(value: Any, keyword: str, where: str) -> int:
    if isinstance(value, bool) or not _is_integer(value) or value < 0:
        raise SchemaError(f"{where}: {keyword} must be a non-negative integer")
    return int(value)


def _limit(value: Any, keyword: str, where: str) -> int | float:
    if not _is_number(value):
        raise SchemaError(f"{where}: bad {keyword} {value!r}")
    return value


def _enum(options: Any, where: str, keyword: str) -> tuple[Test, Explain]:
    if keyword == "const":
        options = [options]
    elif not isinstance(options, list) or not options:
        raise SchemaError(f"{where}: bad enum {options!r}")
    texts = [go_json(option) for option in options]
    if len(set(texts)) != len(texts):
        raise SchemaError(f"{where}: enum items must be unique")
    allowed = frozenset(texts)
    strings = frozenset(option for option in options if isinstance(option, str))
    joined = ", ".join(texts)
    wording = "does not match:" if keyword == "const" else "must be one of the following:"

    def test(value: Any) -> bool:
        if isinstance(value, str):
            return value in strings
        return go_json(value) in allowed

    def explain(value: Any, ctx: str, result: _Result) -> None:
        if not test(value):
            result.add(ctx, f"{_field(ctx)} {wording} {joined}")

    return test, explain


def _required(names: Any, where: str) -> tuple[Test, Explain]:
    if (not isinstance(names, list) or not all(isinstance(name, str) for name in names)
            or len(set(names)) != len(names)):
        raise SchemaError(f"{where}: bad required {names!r}")
    wanted = tuple(names)

    def test(value: Any) -> bool:
        if isinstance(value, dict):
            for name in wanted:
                if name not in value:
                    return False
        return True

    def explain(value: dict[str, Any], ctx: str, result: _Result) -> None:
        for name in wanted:
            if name in value:
                result.score += 1
            else:
                result.add(ctx, f"{name} is required")

    return test, explain


def _properties(props: Any, where: str) -> tuple[Test, dict[str, _Node]]:
    if not isinstance(props, dict):
        raise SchemaError(f"{where}: properties must be an object")
    children = {name: _compile(sub, f"{where}.{name}") for name, sub in props.items()}
    tests = {name: child.test for name, child in children.items()}

    def test(value: Any) -> bool:
        if isinstance(value, dict):
            for name, item in value.items():  # params carry few of the properties a schema knows
                sub = tests.get(name)
                if sub is not None and not sub(item):
                    return False
        return True

    return test, children


def _additional(extra: Any, known: frozenset[str], where: str) -> tuple[Test, Explain]:
    if extra is False:
        def refuse(value: Any) -> bool:
            if isinstance(value, dict):
                for name in value:
                    if name not in known:
                        return False
            return True

        def name_them(value: dict[str, Any], ctx: str, result: _Result) -> None:
            for name in value:
                if name not in known:
                    result.add(ctx, f"Additional property {name} is not allowed")

        return refuse, name_them
    if extra is True:
        return _accept, _explain_nothing
    if not isinstance(extra, dict):
        raise SchemaError(f"{where}: additionalProperties must be a boolean or a schema")
    sub = _compile(extra, f"{where}.additionalProperties")

    def test(value: Any) -> bool:
        if isinstance(value, dict):
            for name, item in value.items():
                if name not in known and not sub.test(item):
                    return False
        return True

    def explain(value: dict[str, Any], ctx: str, result: _Result) -> None:
        for name, item in value.items():
            if name not in known:
                sub.explain(item, f"{ctx}.{name}", result)

    return test, explain


def _dependencies(rules: Any, where: str) -> tuple[Test, Explain]:
    """Draft-04 ``dependencies``: when a property is present, the object must also have the listed
    properties (array form) or satisfy the schema (schema form)."""
    if not isinstance(rules, dict):
        raise SchemaError(f"{where}: dependencies must be an object")
    compiled: dict[str, tuple[str, ...] | _Node] = {}
    for name, rule in rules.items():
        if isinstance(rule, list):
            if not all(isinstance(item, str) for item in rule):
                raise SchemaError(f"{where}: dependencies.{name} must be a schema or an array of strings")
            compiled[name] = tuple(rule)
        else:
            compiled[name] = _compile(rule, f"{where}.dependencies.{name}")
    items = tuple(compiled.items())

    def test(value: Any) -> bool:
        if isinstance(value, dict):
            for name, rule in items:
                if name in value:
                    if isinstance(rule, _Node):
                        if not rule.test(value):
                            return False
                    elif any(other not in value for other in rule):
                        return False
        return True

    def explain(value: Any, ctx: str, result: _Result) -> None:
        if not isinstance(value, dict):
            return
        for name in value:
            rule = compiled.get(name)
            if isinstance(rule, _Node):
                rule.explain(value, ctx, result)
            elif rule is not None:
                for other in rule:
                    if other not in value:
                        result.add(ctx, f"Has a dependency on {other}")

    return test, explain


def _sub_result(node: _Node, value: Any, ctx: str) -> _Result:
    result = _Result()
    node.explain(value, ctx, result)
    return result


def _alternatives(keyword: str, schemas: Any, where: str) -> tuple[Test, Explain]:
    """Draft-04 ``anyOf``, ``oneOf`` and ``allOf`` over the compiled ``schemas``."""
    if not isinstance(schemas, list) or not schemas:
        raise SchemaError(f"{where}: {keyword} must be a non-empty array")
    nodes = tuple(_compile(sub, f"{where}.{keyword}[{i}]") for i, sub in enumerate(schemas))
    tests = tuple(node.test for node in nodes)
    if keyword == "anyOf":
        return _any_of(nodes, tests)
    if keyword == "oneOf":
        return _one_of(nodes, tests)
    return _all_of(nodes, tests)


def _any_of(nodes: tuple[_Node, ...], tests: tuple[Test, ...]) -> tuple[Test, Explain]:
    def any_of(value: Any) -> bool:
        for test in tests:
            if test(value):
                return True
        return False

    def explain_any(value: Any, ctx: str, result: _Result) -> None:
        best: _Result | None = None
        for node in nodes:
            tried = _sub_result(node, value, ctx)
            if not tried.errors:
                return
            if best is None or tried.score > best.score:
                best = tried
        result.add(ctx, "Must validate at least one schema (anyOf)")
        if best is not None:
            result.merge(best)

    return any_of, explain_any


def _one_of(nodes: tuple[_Node, ...], tests: tuple[Test, ...]) -> tuple[Test, Explain]:
    def one_of(value: Any) -> bool:
        passed = 0
        for test in tests:
            if test(value):
                passed += 1
                if passed > 1:
                    return False
        return passed == 1

    def explain_one(value: Any, ctx: str, result: _Result) -> None:
        passed = 0
        best: _Result | None = None
        for node in nodes:
            tried = _sub_result(node, value, ctx)
            if not tried.errors:
                passed += 1
            elif passed == 0 and (best is None or tried.score > best.score):
                best = tried
        if passed != 1:
            result.add(ctx, "Must validate one and only one schema (oneOf)")
            if passed == 0 and best is not None:
                result.merge(best)

    return one_of, explain_one


def _all_of(nodes: tuple[_Node, ...], tests: tuple[Test, ...]) -> tuple[Test, Explain]:
    def all_of(value: Any) -> bool:
        for test in tests:
            if not test(value):
                return False
        return True

    def explain_all(value: Any, ctx: str, result: _Result) -> None:
        passed = 0
        for node in nodes:
            tried = _sub_result(node, value, ctx)
            passed += not tried.errors
            result.merge(tried)
        if passed != len(nodes):
            result.add(ctx, "Must validate all the schemas (allOf)")

    return all_of, explain_all


def _not(schema: Any, where: str) -> tuple[Test, Explain]:
    node = _compile(schema, f"{where}.not")

    def test(value: Any) -> bool:
        return not node.test(value)

    def explain(value: Any, ctx: str, result: _Result) -> None:
        if not _sub_result(node, value, ctx).errors:
            result.add(ctx, "Must not validate the schema (not)")

    return test, explain


def _condition(schema: Mapping[str, Any], where: str) -> tuple[Test, Explain]:
    """``if``/``then``/``else`` (draft 7, which gojsonschema v1.2.0 reads in a schema of no known draft):
    ``then`` must hold when ``if`` does, ``else`` when it does not; without ``if`` both are ignored."""
    condition = _compile(schema["if"], f"{where}.if")
    then = _compile(schema["then"], f"{where}.then") if "then" in schema else None
    otherwise = _compile(schema["else"], f"{where}.else") if "else" in schema else None

    def test(value: Any) -> bool:
        branch = then if condition.test(value) else otherwise
        return branch is None or branch.test(value)

    def explain(value: Any, ctx: str, result: _Result) -> None:
        holds = not _sub_result(condition, value, ctx).errors
        branch, message = (then, 'Must validate "then" as "if" was valid') if holds else (
            otherwise, 'Must validate "else" as "if" was not valid')
        if branch is not None:
            tried = _sub_result(branch, value, ctx)
            if tried.errors:
                result.add(ctx, message)
                result.merge(tried)

    return test, explain


def _items(schema: Any, where: str) -> tuple[Test, Explain]:
    if schema is not True and schema is not False and not isinstance(schema, dict):
        raise SchemaError(f"{where}: items must be a schema (the array form is not supported)")
    sub = _compile(schema, f"{where}.items")

    def test(value: Any) -> bool:
        if isinstance(value, list):
            for item in value:
                if not sub.test(item):
                    return False
        return True

    def explain(value: list[Any], ctx: str, result: _Result) -> None:
        for index, item in enumerate(value):
            sub.explain(item, f"{ctx}.{index}", result)

    return test, explain


def _unique(value: list[Any]) -> bool:
    return len({go_json(item) for item in value}) == len(value)


def _explain_unique(value: list[Any], ctx: str, result: _Result) -> None:
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        text = go_json(item)
        if text in seen:
            result.add(ctx, f"array items[{seen[text]},{index}] must be unique")
        seen[text] = index


def _size(container: type, violates: Callable[[int, int], bool], limit: int, message: str,
          ) -> tuple[Test, Explain]:
    """minLength & co: ``violates(len(value), limit)`` on values of one Python type."""
    def test(value: Any) -> bool:
        return not isinstance(value, container) or not violates(len(value), limit)

    def explain(value: Any, ctx: str, result: _Result) -> None:
        if violates(len(value), limit):
            result.add(ctx, message)

    return test, explain


def _bound(violates: Callable[[Any, Any], bool], limit: int | float, message: str) -> tuple[Test, Explain]:
    """minimum & co: ``violates(value, limit)`` on numbers (never booleans)."""
    def test(value: Any) -> bool:
        kind = type(value)
        if kind is int or kind is float:
            return not violates(value, limit)
        return not _is_number(value) or not violates(value, limit)

    def explain(value: Any, ctx: str, result: _Result) -> None:
        if violates(value, limit):
            result.add(ctx, message)

    return test, explain


# Go's regexp: ``$`` without (?m) is the end of the text only, and \d, \w, \s, \b are ASCII.
_GO_MULTILINE = re.compile(r"\(\?[a-zA-Z]*m")


def go_pattern(text: str) -> re.Pattern[str]:
    """Compile a schema ``pattern`` so that Python's ``re`` searches with Go's meaning."""
    if not _GO_MULTILINE.search(text):
        out, index, in_class = [], 0, False
        while index < len(text):
            char = text[index]
            if char == "\\" and index + 1 < len(text):
                pair = text[index:index + 2]
                out.append(r"\Z" if pair == r"\z" and not in_class else pair)
                index += 2
                continue
            if in_class:
                in_class = char != "]"
            elif char == "[":
                in_class = True
                lead = index + 1 + (text[index + 1:index + 2] == "^")
                if text[lead:lead + 1] == "]":  # a ']' first in a class is a literal
                    out.append(text[index:lead + 1])
                    index = lead + 1
                    continue
            elif char == "$":
                char = r"\Z"
            out.append(char)
            index += 1
        text = "".join(out)
    return re.compile(text, re.ASCII)


def _pattern(text: Any, where: str) -> tuple[Test, Explain]:
    try:
        regex = go_pattern(text)
    except (re.error, TypeError) as exc:
        raise SchemaError(f"{where}: bad pattern {text!r}: {exc}") from None
    search = regex.search
    message = f"Does not match pattern '{text}'"

    def test(value: Any) -> bool:
        return not isinstance(value, str) or search(value) is not None

    def explain(value: str, ctx: str, result: _Result) -> None:
        if search(value) is None:
            result.add(ctx, message)

    return test, explain


# The ``format`` names the params schemas use, with gojsonschema v1.2.0's rule for each.
_UUID = re.compile(r"[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}")
_HOSTNAME_LABEL = r"([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])"
_HOSTNAME = re.compile(rf"{_HOSTNAME_LABEL}(\.{_HOSTNAME_LABEL})*")
_FORMATS: dict[str, Callable[[str], bool]] = {
    "uuid": lambda value: _UUID.fullmatch(value) is not None,
    "hostname": lambda value: len(value.encode()) < 256 and _HOSTNAME.fullmatch(value) is not None,
}


def _format(name: Any, where: str) -> tuple[Test, Explain, Explain]:
    """(test, explain for strings, explain for numbers): v1.2.0 fails a number on any known format."""
    if name not in _FORMATS:
        raise SchemaError(f"{where}: unsupported format {name!r}")
    valid = _FORMATS[name]
    message = f"Does not match format '{name}'"

    def test(value: Any) -> bool:
        if isinstance(value, str):
            return valid(value)
        return not _is_number(value)

    def explain_string(value: str, ctx: str, result: _Result) -> None:
        if not valid(value):
            result.add(ctx, message)

    def explain_number(value: Any, ctx: str, result: _Result) -> None:
        result.add(ctx, message)

    return test, explain_string, explain_number


# --- one schema object ---------------------------------------------------------------------------

class _Steps:
    """A schema's checks grouped as gojsonschema runs them (see the module docstring)."""

    def __init__(self) -> None:
        self.tests: list[Test] = []
        self.schema: list[Explain] = []
        self.number: list[Explain] = []
        self.string: list[Explain] = []
        self.array: list[Explain] = []
        self.object: list[Explain] = []
        self.common: list[Explain] = []

    def add(self, group: list[Explain], pair: tuple[Test, Explain]) -> None:
        self.tests.append(pair[0])
        group.append(pair[1])


def _compile(schema: Any, where: str) -> _Node:
    if schema is True:
        return _PASS
    if schema is False:
        return _FAIL
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object or a boolean")
    unknown = sorted(set(schema) - _KEYWORDS - _ANNOTATIONS)
    if unknown:
        raise SchemaError(f"{where}: unsupported keyword(s) {', '.join(unknown)}")
    steps = _Steps()
    kinds: frozenset[str] | None = None
    expected = ""
    if "type" in schema:
        type_test, kinds, expected = _type(schema["type"], where)
        steps.tests.append(type_test)
    for keyword in ("anyOf", "oneOf", "allOf"):
        if keyword in schema:
            steps.add(steps.schema, _alternatives(keyword, schema[keyword], where))
    if "not" in schema:
        steps.add(steps.schema, _not(schema["not"], where))
    if "dependencies" in schema:
        steps.add(steps.schema, _dependencies(schema["dependencies"], where))
    if "if" in schema:
        steps.add(steps.schema, _condition(schema, where))
    _numbers(schema, where, steps)
    _strings(schema, where, steps)
    if "format" in schema:  # last of the number checks and of the string checks
        test, on_string, on_number = _format(schema["format"], where)
        steps.tests.append(test)
        steps.string.append(on_string)
        steps.number.append(on_number)
    _arrays(schema, where, steps)
    children = _objects(schema, where, steps)
    for keyword in ("const", "enum"):
        if keyword in schema:
            steps.add(steps.common, _enum(schema[keyword], where, keyword))
    return _Node(_all(steps.tests), _explainer(steps, kinds, expected, children))


def _numbers(schema: Mapping[str, Any], where: str, steps: _Steps) -> None:
    bounds = (
        ("maximum", operator.gt, "Must be less than or equal to"),
        ("exclusiveMaximum", operator.ge, "Must be less than"),
        ("minimum", operator.lt, "Must be greater than or equal to"),
        ("exclusiveMinimum", operator.le, "Must be greater than"),
    )
    for keyword, violates, wording in bounds:
        if keyword in schema:
            limit = _limit(schema[keyword], keyword, where)
            steps.add(steps.number, _bound(violates, limit, f"{wording} {go_limit_text(limit)}"))


def _strings(schema: Mapping[str, Any], where: str, steps: _Steps) -> None:
    if "minLength" in schema:
        least = _count(schema["minLength"], "minLength", where)
        steps.add(steps.string, _size(str, operator.lt, least,
                                      f"String length must be greater than or equal to {least}"))
    if "maxLength" in schema:
        most = _count(schema["maxLength"], "maxLength", where)
        steps.add(steps.string, _size(str, operator.gt, most, f"String length must be less than or equal to {most}"))
    if "pattern" in schema:
        steps.add(steps.string, _pattern(schema["pattern"], where))


def _arrays(schema: Mapping[str, Any], where: str, steps: _Steps) -> None:
    if "items" in schema:
        steps.add(steps.array, _items(schema["items"], where))
    if "minItems" in schema:
        least = _count(schema["minItems"], "minItems", where)
        steps.add(steps.array, _size(list, operator.lt, least, f"Array must have at least {least} items"))
    if "maxItems" in schema:
        most = _count(schema["maxItems"], "maxItems", where)
        steps.add(steps.array, _size(list, operator.gt, most, f"Array must have at most {most} items"))
    unique = schema.get("uniqueItems", False)
    if not isinstance(unique, bool):
        raise SchemaError(f"{where}: uniqueItems must be a boolean")
    if unique:
        steps.add(steps.array, (lambda value: not isinstance(value, list) or _unique(value), _explain_unique))


def _objects(schema: Mapping[str, Any], where: str, steps: _Steps) -> dict[str, _Node]:
    if "minProperties" in schema:
        least = _count(schema["minProperties"], "minProperties", where)
        steps.add(steps.object, _size(dict, operator.lt, least, f"Must have at least {least} properties"))
    if "maxProperties" in schema:
        most = _count(schema["maxProperties"], "maxProperties", where)
        steps.add(steps.object, _size(dict, operator.gt, most, f"Must have at most {most} properties"))
    if "required" in schema:
        steps.add(steps.object, _required(schema["required"], where))
    children: dict[str, _Node] = {}
    if "properties" in schema:
        test, children = _properties(schema["properties"], where)
        steps.tests.append(test)
    if "additionalProperties" in schema:
        steps.add(steps.object, _additional(schema["additionalProperties"], frozenset(children), where))
    return children


def _explainer(steps: _Steps, kinds: frozenset[str] | None, expected: str, children: dict[str, _Node]) -> Explain:
    """gojsonschema's walk of one value against one schema object, errors and score included."""
    schema_steps, number, string = tuple(steps.schema), tuple(steps.number), tuple(steps.string)
    array, obj, common = tuple(steps.array), tuple(steps.object), tuple(steps.common)

    def run(group: tuple[Explain, ...], value: Any, ctx: str, result: _Result) -> None:
        for step in group:
            step(value, ctx, result)
        result.score += 1

    def explain(value: Any, ctx: str, result: _Result) -> None:
        kind = _kind(value)
        if kinds is not None and kind not in kinds:
            result.add(ctx, f"Invalid type. Expected: {expected}, given: {kind}")
            return
        run(schema_steps, value, ctx, result)
        if kind == "string":
            run(common, value, ctx, result)
            run(string, value, ctx, result)
        elif kind in ("integer", "number"):
            run(number, value, ctx, result)
            run(common, value, ctx, result)
        elif kind == "array":
            run(array, value, ctx, result)
            run(common, value, ctx, result)
        elif kind == "object":
            run(obj, value, ctx, result)
            run(common, value, ctx, result)
            for name, child in children.items():
                if name in value:
                    child.explain(value[name], f"{ctx}.{name}", result)
        else:  # boolean, null
            run(common, value, ctx, result)
        result.score += 1

    return explain


def compile_schema(schema: Any, where: str = "$") -> Check:
    """One check for a schema (``true``/``{}`` accept anything); SchemaError when unsupported."""
    node = _compile(schema, where)
    test, explain = node.test, node.explain

    def check(value: Any) -> Failure | None:
        if test(value):
            return None
        result = _Result()
        explain(value, _ROOT, result)
        return result.errors or None

    return check


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
    """None when ``params`` suit the adapter's schema, else gojsonschema's errors, run together.

    A code without a schema file accepts any JSON object (as if its schema were ``type: object``).
    """
    check = _VALIDATORS.get(adapter_code)
    if check is None:
        if isinstance(params, dict):
            return None
        return f"{_ROOT}: Invalid type. Expected: object, given: {_kind(params)}"
    failure = check(params)
    return None if failure is None else describe(failure)


def describe(failure: Failure) -> str:
    """PBS-Go's text for a failure: every ``<field>: <description>``, with nothing between them."""
    return "".join(f"{field}: {description}" for field, description in failure)
