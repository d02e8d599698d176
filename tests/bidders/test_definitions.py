"""hbserver's bidder definitions and parameter schemas stay what Prebid Server's files say.

Each built-in definition (``hbserver/bidders/definitions/<code>.yaml``) must equal its
``bidder-info.yaml`` (or ``aliases/<code>.yaml``) read through ``bidder_info.definition_from_info``;
each adapter's schema (``hbserver/adapters/schemas/<code>.json``) must equal its
``params-schema.json`` once annotations (titles, descriptions, ``$schema``) are set aside; and
every catalogue alias of a built-in adapter is built in. The fixtures are read from ../shared at
test time (``HBSERVER_PBS_FIXTURES`` points elsewhere); without them, under ``CI=true``, this fails.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml

from hbserver.adapters.params import SCHEMALESS_ADAPTERS, SCHEMAS
from hbserver.bidders import BUILTIN_ADAPTERS, BUILTIN_ALIASES, DEFINITIONS, PBS_JAVA_SPELLINGS
from tests.bidders.bidder_info import definitions_from_fixtures
from tests.conformance.harness import fixtures_root

ROOT = fixtures_root()
ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})
# Keywords whose value maps names to schemas (their keys are property names, not keywords).
NAME_MAPS = frozenset({"properties", "dependencies", "patternProperties", "definitions"})
ADAPTERS = sorted(BUILTIN_ADAPTERS - SCHEMALESS_ADAPTERS)


def _need_fixtures() -> None:
    if ROOT.is_dir():
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PBS fixtures not found at {ROOT}")
    pytest.skip(f"PBS fixtures not found at {ROOT}")


def _ours(code: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEFINITIONS / f"{code}.yaml").read_text(encoding="utf-8"))
    return data


def without_annotations(schema: Any, names: bool = False) -> Any:
    """``schema`` with every annotation keyword removed (``names``: a map of names to schemas)."""
    if isinstance(schema, dict):
        if names:
            return {key: without_annotations(value) for key, value in schema.items()}
        return {
            key: without_annotations(value, key in NAME_MAPS)
            for key, value in schema.items()
            if key not in ANNOTATIONS
        }
    if isinstance(schema, list):
        return [without_annotations(item) for item in schema]
    return schema


@pytest.mark.parametrize("bidder", ADAPTERS)
def test_definitions_match_bidder_info(bidder: str) -> None:
    """The adapter's definition and each of its aliases' equal PBS's bidder-info, field by field."""
    _need_fixtures()
    expected = definitions_from_fixtures(ROOT, bidder)
    for code, want in expected.items():
        assert (DEFINITIONS / f"{code}.yaml").is_file(), f"the catalogue alias {code} of {bidder} is not built in"
        got = _ours(code)
        differences = {key: (got.get(key), want.get(key)) for key in want.keys() | got.keys()
                       if got.get(key) != want.get(key)}
        assert not differences, f"{code}.yaml differs from PBS's (ours, theirs): {differences}"


def test_every_built_in_alias_is_in_the_catalogue() -> None:
    _need_fixtures()
    catalogue = {code for bidder in ADAPTERS for code in definitions_from_fixtures(ROOT, bidder)}
    files = BUILTIN_ALIASES - set(PBS_JAVA_SPELLINGS)  # PBS-Java's spellings have no file: built from their code's
    assert files <= catalogue, f"aliases without a PBS bidder-info: {sorted(files - catalogue)}"
    for code in files:
        assert _ours(code)["alias_of"] in BUILTIN_ADAPTERS
    assert set(PBS_JAVA_SPELLINGS.values()) <= catalogue - BUILTIN_ALIASES  # each names a PBS-Go adapter's code


@pytest.mark.parametrize("bidder", ADAPTERS)
def test_schemas_match_params_schema(bidder: str) -> None:
    _need_fixtures()
    theirs = json.loads((ROOT / bidder / "params-schema.json").read_text(encoding="utf-8"))
    ours = json.loads((SCHEMAS / f"{bidder}.json").read_text(encoding="utf-8"))
    assert without_annotations(ours) == without_annotations(theirs)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"title": "t", "type": "object"}, {"type": "object"}),
        # a property may be called "description": only keywords go
        ({"properties": {"description": {"type": "string", "description": "d"}}},
         {"properties": {"description": {"type": "string"}}}),
        ({"anyOf": [{"required": ["a"], "$comment": "c"}]}, {"anyOf": [{"required": ["a"]}]}),
        ({"dependencies": {"title": {"required": ["x"]}}}, {"dependencies": {"title": {"required": ["x"]}}}),
    ],
    ids=["top", "property-named-like-a-keyword", "nested", "dependency-named-like-a-keyword"],
)
def test_without_annotations(schema: Any, expected: Any) -> None:
    assert without_annotations(schema) == expected


@pytest.mark.parametrize(
    ("info", "parent", "expected"),
    [
        ({}, None, {"disabled": False, "endpoint": "", "openrtb_version": "2.5", "gpp_supported": False,
                    "multiformat_supported": True, "modifying_vast_xml_allowed": False, "media_types": {},
                    "usersync": {}}),
        ({"openrtb": {"version": 2.6, "gpp-supported": True, "multiformat-supported": False},
          "endpointCompression": "GZIP"}, None,
         {"openrtb_version": "2.6", "gpp_supported": True, "multiformat_supported": False,
          "endpoint_compression": "gzip"}),
        ({"capabilities": {"site": {"mediaTypes": ["banner"]}, "dooh": {"mediaTypes": ["video"]}}}, None,
         {"media_types": {"site": ["banner"], "dooh": ["video"]}}),
        ({"userSync": {"supports": ["redirect"], "iframe": {"url": "https://s/?r={{.RedirectURL}}",
                                                            "userMacro": "$UID"}}}, None,
         {"usersync": {"supports": ["redirect"], "iframe": {"url": "https://s/?r={{.RedirectURL}}",
                                                            "user_macro": "$UID"}}}),
        # an alias takes what it lacks from its parent, except the GVL id and user sync
        ({"aliasOf": "p", "gvlVendorID": 7}, {"endpoint": "https://p", "gvl_vendor_id": 9, "disabled": True,
                                              "media_types": {"app": ["banner"]}, "openrtb_version": "2.6",
                                              "gpp_supported": True, "multiformat_supported": True,
                                              "endpoint_compression": "gzip", "extra_info": "x",
                                              "maintainer": "m@p", "platform_id": "",
                                              "modifying_vast_xml_allowed": True},
         {"alias_of": "p", "gvl_vendor_id": 7, "endpoint": "https://p", "disabled": True,
          "media_types": {"app": ["banner"]}, "maintainer": "m@p", "modifying_vast_xml_allowed": True,
          "usersync": {}}),
        ({"aliasOf": "p", "disabled": False, "endpoint": "https://own"},
         {"endpoint": "https://p", "disabled": True, "media_types": {}, "openrtb_version": "2.5",
          "gpp_supported": False, "multiformat_supported": True, "endpoint_compression": "",
          "extra_info": "", "maintainer": "", "platform_id": "", "modifying_vast_xml_allowed": False},
         {"disabled": False, "endpoint": "https://own"}),
    ],
    ids=["defaults", "openrtb-and-compression", "channels", "user-sync", "alias-inherits", "alias-own-values"],
)
def test_definition_from_info(info: dict[str, Any], parent: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    from tests.bidders.bidder_info import definition_from_info

    got = definition_from_info("x", info, parent)
    assert {key: got[key] for key in expected} == expected

