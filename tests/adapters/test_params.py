"""Bidder-params validation against our schemas (hbserver/adapters/schemas/, written from PBS's
static/bidder-params; tests/bidders/test_definitions.py keeps them equal), answered in the words of
PBS-Go's validator, gojsonschema v1.2.0 (locales.go for the texts, validation.go for the order)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from hbserver.adapters.params import (
    SCHEMAS,
    SchemaError,
    _compile,
    _Result,
    compile_schema,
    describe,
    go_json,
    go_limit_text,
    load_schemas,
    load_validators,
    validate_params,
)

TWO_ONEOF = "(root): Must validate one and only one schema (oneOf)" * 2


@pytest.mark.parametrize(("code", "params", "want"), [
    ("appnexus", {"placement_id": 1}, None),
    ("appnexus", {"placement_id": "9880618"}, None),
    ("appnexus", {"placementId": 1, "keywords": [{"key": "a", "value": ["b"]}, {"key": "c"}]}, None),
    ("appnexus", {"member": 103, "inv_code": "abc", "keywords": {"k": ["v"]}, "position": "below"}, None),
    ("appnexus", {"member": "103", "invCode": "abc", "generate_ad_pod_id": True, "reserve": 0.5}, None),
    # PBS-Go endpoints/openrtb2/sample-requests/invalid-whole/imp-ext-invalid-params.json
    ("appnexus", "string", "(root): Invalid type. Expected: object, given: string"),
    # PBS-Go endpoints/openrtb2/sample-requests/invalid-whole/invalid-bidder-params.json
    ("appnexus", {"placementId": []}, "placementId: Invalid type. Expected: [integer,string], given: array"),
    # the outer oneOf, then the closest alternative (tie: the first): its own oneOf and its first branch
    ("appnexus", {}, TWO_ONEOF + "(root): placementId is required"),
    # member alone: the second alternative now scores higher (one of its two required names is there)
    ("appnexus", {"member": "1"}, TWO_ONEOF + "(root): invCode is required"),
    ("appnexus", {"placementId": 1, "invCode": "a", "member": "1"},
     "(root): Must validate one and only one schema (oneOf)(root): Must not validate the schema (not)"),
    ("appnexus", {"placement_id": 1.5}, "placement_id: Invalid type. Expected: [integer,string], given: number"),
    ("appnexus", {"placement_id": 1, "position": "left"},
     'position: position must be one of the following: "above", "below"'),
    ("appnexus", {"placement_id": 1, "keywords": [{"key": 1}]},
     "keywords: Must validate at least one schema (anyOf)"
     "keywords.0.key: Invalid type. Expected: string, given: integer"),
    ("appnexus", {"placement_id": 1, "private_sizes": [{"w": 1}]}, "private_sizes.0: h is required"),
    ("appnexus", {"placement_id": 1, "reserve": "1"}, "reserve: Invalid type. Expected: number, given: string"),
    ("appnexus", [], "(root): Invalid type. Expected: object, given: array"),
    ("openx", {"unit": "539439964", "delDomain": "se-demo-d.openx.net"}, None),
    ("openx", {"unit": 5, "platform": "a1b2c3d4-0000-4000-8000-0123456789ab", "customFloor": "0.4"}, None),
    ("openx", {"delDomain": "x.openx.net"}, "(root): unit is required"),
    ("openx", {"unit": "1"},
     "(root): Must validate at least one schema (anyOf)(root): delDomain is required"),
    ("openx", {"unit": "abc", "delDomain": "x.openx.net"}, "unit: Does not match pattern '^[0-9]+$'"),
    ("openx", {"unit": "1", "platform": "PLATFORM"}, "platform: Does not match format 'uuid'"),
    # gojsonschema v1.2.0's uuid is lower case only (the case-insensitive one came later)
    ("openx", {"unit": "1", "platform": "A1B2C3D4-0000-4000-8000-0123456789AB"},
     "platform: Does not match format 'uuid'"),
    ("openx", {"unit": "1", "delDomain": "bad domain.net"},
     "delDomain: Does not match format 'hostname'"),
    ("openx", {"unit": "1", "delDomain": "d.openx.net", "customParams": []},
     "customParams: Invalid type. Expected: object, given: array"),
    # every error; properties in the schema's order, as gojsonschema walks them (from the first)
    ("openx", {"unit": -1, "customFloor": "x", "delDomain": "d.openx.net"},
     "unit: Must be greater than or equal to 0customFloor: Does not match pattern '^[0-9]+(\\.[0-9]+)?$'"),
    ("smartadserver", {"networkId": 1, "siteId": 2, "pageId": 3, "formatId": 4}, None),
    ("smartadserver", {"networkId": 1, "siteId": 2}, "(root): pageId is required(root): formatId is required"),
    ("smartadserver", {"networkId": 1, "formatId": 2}, "(root): siteId is required(root): pageId is required"),
    ("smartadserver", {"networkId": 1.5, "siteId": 0},
     "(root): pageId is required(root): formatId is required"
     "siteId: Must be greater than or equal to 1networkId: Invalid type. Expected: integer, given: number"),
    ("triplelift", {"inventoryCode": "foo", "floor": 1.5}, None),
    ("triplelift", {"floor": 1}, "(root): inventoryCode is required"),
    ("triplelift", {"inventoryCode": 5}, "inventoryCode: Invalid type. Expected: string, given: integer"),
    ("triplelift", {"inventoryCode": "x", "floor": "1"}, "floor: Invalid type. Expected: number, given: string"),
    ("generic", {"anything": [1, 2]}, None),
    ("no-schema-code", {}, None),
    ("no-schema-code", "x", "(root): Invalid type. Expected: object, given: string"),
    ("no-schema-code", None, "(root): Invalid type. Expected: object, given: null"),
])
def test_validate_params(code, params, want):
    assert validate_params(code, params) == want


# One row per keyword (and per message of locales.go that keyword can give), with the exact text.
@pytest.mark.parametrize(("schema", "value", "want"), [
    pytest.param({"type": "integer"}, "1", "(root): Invalid type. Expected: integer, given: string", id="type"),
    pytest.param({"type": ["integer", "string"]}, [], "(root): Invalid type. Expected: [integer,string], given: array",
                 id="type-several"),
    pytest.param({"type": "integer"}, 1.5, "(root): Invalid type. Expected: integer, given: number", id="type-number"),
    pytest.param({"type": "string"}, 2.0, "(root): Invalid type. Expected: string, given: integer", id="type-2.0"),
    pytest.param({"type": "string"}, None, "(root): Invalid type. Expected: string, given: null", id="type-null"),
    pytest.param({"type": "string"}, True, "(root): Invalid type. Expected: string, given: boolean", id="type-bool"),
    pytest.param({"type": "array"}, {}, "(root): Invalid type. Expected: array, given: object", id="type-object"),
    pytest.param({"type": "number"}, False, "(root): Invalid type. Expected: number, given: boolean",
                 id="type-number-bool"),
    pytest.param({"type": "integer"}, 1.0, None, id="type-integer-1.0"),
    pytest.param({"type": "null"}, None, None, id="type-null-ok"),
    pytest.param({"enum": ["above", "below"]}, "left",
                 '(root): (root) must be one of the following: "above", "below"', id="enum"),
    pytest.param({"enum": [1, 2.5, 1e21, "a<b", None]}, 3,
                 '(root): (root) must be one of the following: 1, 2.5, 1e+21, "a\\u003cb", null', id="enum-go-json"),
    pytest.param({"enum": [1]}, 1.0, None, id="enum-1-is-1.0"),
    pytest.param({"enum": [{"b": 1, "a": [True]}]}, {"a": [True], "b": 1.0}, None, id="enum-object"),
    pytest.param({"const": 3}, "3", "(root): (root) does not match: 3", id="const"),
    pytest.param({"const": 3}, 3, None, id="const-ok"),
    pytest.param({"required": ["a", "b"]}, {"b": 1}, "(root): a is required", id="required"),
    pytest.param({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2, "c": 3},
                 "(root): Additional property b is not allowed(root): Additional property c is not allowed",
                 id="additionalProperties-false"),
    pytest.param({"additionalProperties": {"type": "string"}}, {"x": 1},
                 "x: Invalid type. Expected: string, given: integer", id="additionalProperties-schema"),
    pytest.param({"dependencies": {"a": ["b", "c"]}}, {"a": 1},
                 "(root): Has a dependency on b(root): Has a dependency on c", id="dependencies-array"),
    pytest.param({"dependencies": {"a": {"required": ["b"]}}}, {"a": 1}, "(root): b is required",
                 id="dependencies-schema"),
    # if/then/else (checked against gojsonschema v1.2.0: a schema of no known draft reads draft 7 keywords)
    pytest.param({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
                 {"a": 1}, '(root): Must validate "then" as "if" was valid(root): b is required', id="if-then"),
    pytest.param({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
                 {"a": 2}, '(root): Must validate "else" as "if" was not valid(root): c is required', id="if-else"),
    pytest.param({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {}, None, id="if-without-else"),
    pytest.param({"then": {"required": ["b"]}}, {}, None, id="then-without-if"),
    pytest.param({"allOf": [{"if": {"required": ["k"]}, "then": {"required": ["u"]}}]}, {"k": "a"},
                 '(root): Must validate "then" as "if" was valid(root): u is required'
                 "(root): Must validate all the schemas (allOf)", id="if-in-allOf"),
    pytest.param({"minProperties": 1}, {}, "(root): Must have at least 1 properties", id="minProperties"),
    pytest.param({"maxProperties": 1}, {"a": 1, "b": 2}, "(root): Must have at most 1 properties", id="maxProperties"),
    pytest.param({"items": {"type": "string"}}, ["a", 1], "1: Invalid type. Expected: string, given: integer",
                 id="items"),
    pytest.param({"properties": {"k": {"items": {"properties": {"x": {"type": "string"}}}}}},
                 {"k": [{"x": "ok"}, {"x": 1}]}, "k.1.x: Invalid type. Expected: string, given: integer",
                 id="items-path"),
    pytest.param({"minItems": 2}, [1], "(root): Array must have at least 2 items", id="minItems"),
    pytest.param({"maxItems": 2}, [1, 2, 3], "(root): Array must have at most 2 items", id="maxItems"),
    pytest.param({"uniqueItems": True}, [1, 1.0, 2, 1],
                 "(root): array items[0,1] must be unique(root): array items[1,3] must be unique", id="uniqueItems"),
    pytest.param({"minLength": 8}, "abc", "(root): String length must be greater than or equal to 8", id="minLength"),
    pytest.param({"maxLength": 2}, "abc", "(root): String length must be less than or equal to 2", id="maxLength"),
    pytest.param({"maxLength": 2}, "ééé", "(root): String length must be less than or equal to 2",
                 id="maxLength-runes"),
    pytest.param({"maxLength": 2}, 12345, None, id="maxLength-not-a-string"),
    pytest.param({"minimum": 1}, 0, "(root): Must be greater than or equal to 1", id="minimum"),
    pytest.param({"maximum": 2}, 3, "(root): Must be less than or equal to 2", id="maximum"),
    pytest.param({"exclusiveMinimum": 0}, 0, "(root): Must be greater than 0", id="exclusiveMinimum"),
    pytest.param({"exclusiveMaximum": 10}, 10, "(root): Must be less than 10", id="exclusiveMaximum"),
    pytest.param({"exclusiveMaximum": 10}, 9.5, None, id="exclusiveMaximum-ok"),
    pytest.param({"minimum": 1}, True, None, id="minimum-not-for-booleans"),
    pytest.param({"pattern": "^[0-9]+$"}, "abc", "(root): Does not match pattern '^[0-9]+$'", id="pattern"),
    pytest.param({"pattern": "^[0-9]+$"}, "123\n", "(root): Does not match pattern '^[0-9]+$'",
                 id="pattern-go-dollar"),
    pytest.param({"pattern": "^\\d+$"}, "١٢٣", "(root): Does not match pattern '^\\d+$'", id="pattern-ascii-digits"),
    pytest.param({"pattern": "gross|net"}, "a net price", None, id="pattern-searches"),
    pytest.param({"pattern": "[$]$"}, "x$", None, id="pattern-dollar-in-class"),
    pytest.param({"format": "uuid"}, "PLATFORM", "(root): Does not match format 'uuid'", id="format-uuid"),
    pytest.param({"format": "hostname"}, "example.com.", "(root): Does not match format 'hostname'",
                 id="format-hostname"),
    pytest.param({"format": "hostname"}, "a-b.example.com", None, id="format-hostname-ok"),
    pytest.param({"format": "uuid"}, 5, "(root): Does not match format 'uuid'", id="format-on-a-number"),
    pytest.param({"format": "uuid"}, True, None, id="format-not-on-booleans"),
    # anyOf: its error, then those of the closest alternative by gojsonschema's score
    pytest.param({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}, 1,
                 "(root): Must validate at least one schema (anyOf)(root): Must be greater than or equal to 5",
                 id="anyOf"),
    pytest.param({"anyOf": [{"required": ["a", "b"]}, {"required": ["c"]}]}, {},
                 "(root): Must validate at least one schema (anyOf)(root): c is required", id="anyOf-best-score"),
    pytest.param({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {},
                 "(root): Must validate at least one schema (anyOf)(root): a is required", id="anyOf-tie-first"),
    pytest.param({"oneOf": [{"type": "string"}, {"type": "boolean"}]}, 1,
                 "(root): Must validate one and only one schema (oneOf)"
                 "(root): Invalid type. Expected: string, given: integer", id="oneOf-none"),
    pytest.param({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1,
                 "(root): Must validate one and only one schema (oneOf)", id="oneOf-several"),
    pytest.param({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1, None, id="oneOf-ok"),
    pytest.param({"allOf": [{"type": "string"}, {"minLength": 2}, {"maxLength": 0}]}, "a",
                 "(root): String length must be greater than or equal to 2"
                 "(root): String length must be less than or equal to 0(root): Must validate all the schemas (allOf)",
                 id="allOf"),
    pytest.param({"not": {"required": ["a", "b"]}}, {"a": 1, "b": 2}, "(root): Must not validate the schema (not)",
                 id="not"),
    pytest.param({"properties": {"a": False}}, {"a": 1}, "a: False always fails validation", id="false-schema"),
    pytest.param(True, {"anything": 1}, None, id="true-schema"),
])
def test_keywords(schema, value, want):
    failure = compile_schema(schema)(value)
    assert (None if failure is None else describe(failure)) == want


# gojsonschema's order within one value (validation.go): a wrong type alone; then the schema-level
# keywords; then by kind - numbers: maximum, exclusiveMaximum, minimum, exclusiveMinimum, format,
# const/enum; strings: const/enum, minLength, maxLength, pattern, format; objects: minProperties,
# maxProperties, required, additionalProperties, const/enum, then the properties.
@pytest.mark.parametrize(("schema", "value", "want"), [
    pytest.param({"type": "string", "minLength": 5, "enum": ["abcdef"]}, 1,
                 "(root): Invalid type. Expected: string, given: integer", id="type-stops"),
    pytest.param({"enum": ["abcdefgh"], "minLength": 3, "pattern": "^x", "format": "uuid", "anyOf": [{"maxLength": 1}]},
                 "ab",
                 "(root): Must validate at least one schema (anyOf)"
                 "(root): String length must be less than or equal to 1"
                 '(root): (root) must be one of the following: "abcdefgh"'
                 "(root): String length must be greater than or equal to 3(root): Does not match pattern '^x'"
                 "(root): Does not match format 'uuid'", id="string"),
    pytest.param({"enum": [7], "minimum": 5, "maximum": 1, "exclusiveMinimum": 4, "exclusiveMaximum": 2,
                  "format": "uuid"}, 3,
                 "(root): Must be less than or equal to 1(root): Must be less than 2"
                 "(root): Must be greater than or equal to 5(root): Must be greater than 4"
                 "(root): Does not match format 'uuid'(root): (root) must be one of the following: 7", id="number"),
    pytest.param({"minProperties": 3, "required": ["z"], "additionalProperties": False,
                  "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["q"]}],
                  "dependencies": {"b": ["y"]}, "enum": [{}]},
                 {"a": 1, "b": 2},
                 "(root): Must validate at least one schema (anyOf)(root): q is required"
                 "(root): Has a dependency on y(root): Must have at least 3 properties(root): z is required"
                 "(root): Additional property b is not allowed(root): (root) must be one of the following: {}"
                 "a: Invalid type. Expected: string, given: integer", id="object"),
    pytest.param({"items": {"type": "string"}, "minItems": 4, "uniqueItems": True, "enum": [[]]}, [1, 1],
                 "0: Invalid type. Expected: string, given: integer1: Invalid type. Expected: string, given: integer"
                 "(root): Array must have at least 4 items(root): array items[0,1] must be unique"
                 "(root): (root) must be one of the following: []", id="array"),
])
def test_order_of_errors(schema, value, want):
    assert describe(compile_schema(schema)(value) or []) == want


@pytest.mark.parametrize(("number", "want"), [
    (0, "0"), (1, "1"), (-3, "-3"), (0.5, "0.5"), (100000, "100000"), (1000000, "1e+06"), (1234567, "1.234567e+06"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (1.5e-7, "1.5e-07"), (2.0, "2"),
])
def test_limits_print_as_go_prints_a_big_float(number, want):
    assert go_limit_text(number) == want


@pytest.mark.parametrize(("value", "want"), [
    (1, "1"), (1.0, "1"), (2.5, "2.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1e-7, "1e-7"),
    (0.000001, "0.000001"), (-0.0, "-0"),
    ("\b\f\n\x01<>&\u2028é\"\\", '"\\b\\f\\n\\u0001\\u003c\\u003e\\u0026\\u2028é\\"\\\\"'),
    ({"b": [True, None], "a": {}}, '{"a":{},"b":[true,null]}'),
])
def test_values_print_as_encoding_json_prints_them(value, want):
    assert go_json(value) == want


def _random_value(rng: random.Random, names: list[str], depth: int = 0) -> Any:
    choice = rng.randrange(10 if depth < 2 else 7)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, 1, -1, 5, 12883451, 1.5, 2.0, 0.5])
    if choice in (3, 4, 5, 6):
        return rng.choice(["", "1", "123", "abc", "above", "x.openx.net", "bad domain",
                           "a1b2c3d4-0000-4000-8000-0123456789ab", "12345678", "gross", "net"])
    if choice in (7, 8):
        return [_random_value(rng, names, depth + 1) for _ in range(rng.randrange(3))]
    return {rng.choice(names): _random_value(rng, names, depth + 1) for _ in range(rng.randrange(4))}


def _names(schema: Any, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, sub in schema.items():
            if key in ("properties", "dependencies") and isinstance(sub, dict):
                found.update(sub)
            if key == "required" and isinstance(sub, list):
                found.update(sub)
            if isinstance(sub, dict | list):
                _names(sub, found)
    elif isinstance(schema, list):
        for sub in schema:
            _names(sub, found)
    return found


@pytest.mark.parametrize("code", sorted(load_schemas()))
def test_the_quick_test_and_the_explainer_agree(code: str):
    """A failed quick test always gets errors, and a passed one never would."""
    schema = load_schemas()[code]
    node = _compile(schema, code)
    names = sorted(_names(schema, set()))
    if not names:  # a schema that names no params (epom's): any object passes, both ways
        assert node.test({}) and node.test({"a": [1]})
        return
    rng = random.Random(code)
    failures = 0
    for _ in range(3000):
        value = {rng.choice(names): _random_value(rng, names) for _ in range(rng.randrange(5))}
        result = _Result()
        node.explain(value, "(root)", result)
        assert node.test(value) == (not result.errors), (value, result.errors)
        failures += bool(result.errors)
    assert failures  # the values reach the failing side too


@pytest.mark.parametrize("schema", [
    {"format": "email"},
    {"dependencies": []},
    {"dependencies": {"a": [1]}},
    {"type": "text"},
    {"type": ["string", "string"]},
    {"pattern": "("},
    {"required": "a"},
    {"required": ["a", "a"]},
    {"anyOf": []},
    {"properties": {"a": {"$ref": "#/x"}}},
    {"enum": []},
    {"enum": [1, 1.0]},
    {"minimum": "1"},
    {"exclusiveMinimum": True},
    {"minLength": -1},
    {"items": [{}]},
    {"uniqueItems": 1},
    {"additionalProperties": 1},
    [],
])
def test_unsupported_schemas_are_refused_at_start_up(schema):
    with pytest.raises(SchemaError):
        compile_schema(schema)


def test_every_schema_file_loads(tmp_path: Path):
    codes = set(load_validators())
    assert {"appnexus", "openx", "triplelift"} <= codes
    assert codes == {path.stem for path in SCHEMAS.glob("*.json")}
    (tmp_path / "bad.json").write_text(json.dumps({"type": "object", "patternProperties": {}}))
    with pytest.raises(SchemaError, match=r"bad\.json: unsupported keyword"):
        load_validators(tmp_path)
