"""Bidder-params validation against our schemas (hbserver/adapters/schemas/, written from PBS's
static/bidder-params; tests/bidders/test_definitions.py keeps them equal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbserver.adapters.params import SCHEMAS, SchemaError, compile_schema, describe, load_validators, validate_params


@pytest.mark.parametrize(("code", "params", "want"), [
    ("appnexus", {"placement_id": 1}, None),
    ("appnexus", {"placement_id": "9880618"}, None),
    ("appnexus", {"placementId": 1, "keywords": [{"key": "a", "value": ["b"]}, {"key": "c"}]}, None),
    ("appnexus", {"member": 103, "inv_code": "abc", "keywords": {"k": ["v"]}, "position": "below"}, None),
    ("appnexus", {"member": "103", "invCode": "abc", "generate_ad_pod_id": True, "reserve": 0.5}, None),
    ("appnexus", {}, "(placementId is required) or (placement_id is required)"),
    ("appnexus", {"member": "1"}, "(inv_code is required)"),
    ("appnexus", {"placementId": 1, "invCode": "a", "member": "1"},
     "(root): must satisfy exactly one of the alternatives, not several"),
    ("appnexus", {"placement_id": 1.5}, "placement_id: must be integer or string"),
    ("appnexus", {"placement_id": 1, "position": "left"}, 'position: must be one of "above", "below"'),
    ("appnexus", {"placement_id": 1, "keywords": [{"key": 1}]}, "keywords: must satisfy one of:"),
    ("appnexus", {"placement_id": 1, "keywords": [{"key": 1}]}, "([0].key: must be string)"),
    ("appnexus", {"placement_id": 1, "private_sizes": [{"w": 1}]}, "private_sizes[0]: h is required"),
    ("appnexus", {"placement_id": 1, "reserve": "1"}, "reserve: must be number"),
    ("appnexus", [], "(root): must be object"),
    ("openx", {"unit": "539439964", "delDomain": "se-demo-d.openx.net"}, None),
    ("openx", {"unit": 5, "platform": "a1b2c3d4-0000-4000-8000-0123456789ab", "customFloor": "0.4"}, None),
    ("openx", {"delDomain": "x.openx.net"}, "(root): unit is required"),
    ("openx", {"unit": "1"}, "(delDomain is required) or (platform is required)"),
    ("openx", {"unit": "abc", "delDomain": "x.openx.net"}, "unit: must match"),
    ("openx", {"unit": "1", "platform": "PLATFORM"}, "platform: must be a UUID"),  # format: uuid
    ("openx", {"unit": "1", "delDomain": "bad domain.net"}, "delDomain: must be a host name"),  # format: hostname
    ("smartadserver", {"networkId": 1, "siteId": 2, "pageId": 3, "formatId": 4}, None),
    ("smartadserver", {"networkId": 1, "siteId": 2}, "(root): pageId is required (with siteId)"),  # dependencies
    ("smartadserver", {"networkId": 1, "formatId": 2}, "(root): siteId is required (with formatId)"),
    ("openx", {"unit": "1", "delDomain": "d.openx.net", "customParams": []}, "customParams: must be object"),
    ("triplelift", {"inventoryCode": "foo", "floor": 1.5}, None),
    ("triplelift", {"floor": 1}, "(root): inventoryCode is required"),
    ("triplelift", {"inventoryCode": 5}, "inventoryCode: must be string"),
    ("triplelift", {"inventoryCode": "x", "floor": "1"}, "floor: must be number"),
    ("generic", {"anything": [1, 2]}, None),
    ("no-schema-code", {}, None),
    ("no-schema-code", "x", "(root): must be an object"),
])
def test_validate_params(code, params, want):
    got = validate_params(code, params)
    if want is None:
        assert got is None
    else:
        assert got is not None and want in got, got


@pytest.mark.parametrize(("schema", "value", "want"), [
    ({"type": "integer"}, 1.0, None),
    ({"type": "integer"}, True, "must be integer"),
    ({"type": "number"}, False, "must be number"),
    ({"type": "null"}, None, None),
    ({"const": 3}, 3, None),
    ({"const": 3}, "3", "must be one of 3"),
    ({"maxLength": 2}, "abc", "must be at most 2 characters long"),
    ({"maxLength": 2}, 12345, None),
    ({"maximum": 2}, 3, "must be at most 2"),
    ({"exclusiveMinimum": 0}, 0, "must be greater than 0"),
    ({"exclusiveMaximum": 10}, 9.5, None),
    ({"minItems": 1, "maxItems": 2}, [1, 2, 3], "must have at most 2 items"),
    ({"minProperties": 1}, {}, "must have at least 1 properties"),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}, "unknown property b"),
    ({"allOf": [{"type": "string"}, {"minLength": 2}]}, "a", "must be at least 2 characters long"),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, "not several"),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1, None),
    ({"not": {"required": ["a", "b"]}}, {"a": 1, "b": 2}, "must not match"),
    ({"items": {"properties": {"x": {"type": "string"}}}}, [{"x": "ok"}, {"x": 1}], "[1].x: must be string"),
    (True, {"anything": 1}, None),
])
def test_keywords(schema, value, want):
    failure = compile_schema(schema)(value)
    if want is None:
        assert failure is None
    else:
        assert want in describe(failure)


@pytest.mark.parametrize("schema", [
    {"format": "email"},
    {"dependencies": []},
    {"type": "text"},
    {"pattern": "("},
    {"required": "a"},
    {"anyOf": []},
    {"properties": {"a": {"$ref": "#/x"}}},
    {"enum": []},
    {"minimum": "1"},
    [],
])
def test_unsupported_schemas_are_refused_at_start_up(schema):
    with pytest.raises(SchemaError):
        compile_schema(schema)


def test_every_schema_file_loads(tmp_path: Path):
    codes = set(load_validators())
    assert {"appnexus", "openx", "triplelift"} <= codes
    assert codes == {path.stem for path in SCHEMAS.glob("*.json")}
    (tmp_path / "bad.json").write_text(json.dumps({"type": "object", "if": {}}))
    with pytest.raises(SchemaError, match=r"bad\.json: unsupported keyword"):
        load_validators(tmp_path)
