"""Floors data checks: PBS-Go floors/validate_test.go and fetcher_test.go (validateRules,
fetchAndValidate) translated, plus the JSON decoding rules and the request type checks."""

from __future__ import annotations

import orjson
import pytest

from hbserver.config import AccountFloorFetch, AccountPriceFloors
from hbserver.floors.data import (
    FloorRules,
    FloorsData,
    FloorsDataError,
    ModelGroup,
    go_float,
    go_round,
    parse_floor_rules,
    round4,
)
from hbserver.floors.validate import (
    select_valid_model_groups,
    validate_fetched_floors,
    validate_floor_params,
    validate_imp_floors,
    validate_request_floors,
    validate_rules,
    validate_schema_dimensions,
)

_FIELDS = ("mediaType", "size", "domain")
_VALUES = {"banner|300x250|www.website.com": 1.01, "banner|300x600|*": 4.01}


def _data(**kwargs) -> FloorsData:
    return FloorsData(model_groups=(ModelGroup(model_version="Version 1", fields=_FIELDS, values=_VALUES),), **kwargs)


# ---- TestValidateFloorParams ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("floors", "expected"),
    [
        pytest.param(FloorRules(data=_data()), None, id="valid"),
        pytest.param(FloorRules(skip_rate=-10), "Invalid SkipRate = '-10' at ext.prebid.floors.skiprate", id="root"),
        pytest.param(
            FloorRules(skip_rate=101), "Invalid SkipRate = '101' at ext.prebid.floors.skiprate", id="root 101"
        ),
        pytest.param(
            FloorRules(data=_data(skip_rate=-10)),
            "Invalid SkipRate = '-10' at ext.prebid.floors.data.skiprate",
            id="data",
        ),
        pytest.param(FloorRules(floor_min=-10), "Invalid FloorMin = '-10', value should be >= 0", id="floormin"),
        pytest.param(FloorRules(floor_min=-0.5), "Invalid FloorMin = '-0.5', value should be >= 0", id="floormin 0.5"),
        pytest.param(
            FloorRules(data=_data(floors_schema_version=1)),
            "Invalid FloorsSchemaVersion = '1', supported version 2",
            id="schema version 1",
        ),
        pytest.param(
            FloorRules(data=_data(floors_schema_version=-2)),
            "Invalid FloorsSchemaVersion = '-2', supported version 2",
            id="schema version -2",
        ),
        pytest.param(FloorRules(data=_data(floors_schema_version=0)), None, id="schema version 0"),
        pytest.param(FloorRules(data=_data(floors_schema_version=2)), None, id="schema version 2"),
    ],
)
def test_validate_floor_params(floors, expected):
    assert validate_floor_params(floors) == expected


# ---- TestSelectValidFloorModelGroups -------------------------------------------------------------

_SIX = {"banner|300x250|www.website.com": 1.01, "banner|300x250|*": 2.01, "banner|300x600|www.website.com": 3.01,
        "*|728x90|*": 14.01, "*|*|www.website.com": 15.01, "*|*|*": 16.01}  # fmt: skip
_FOUR = {"banner|300x250|www.website.com": 1.01, "*|728x90|*": 14.01, "*|*|www.website.com": 15.01, "*|*|*": 16.01}


@pytest.mark.parametrize(
    ("groups", "max_rules", "max_dims", "valid_versions", "errors"),
    [
        pytest.param(
            (
                ModelGroup(model_weight=50, skip_rate=110, model_version="Version 1", fields=_FIELDS, values=_SIX),
                ModelGroup(model_weight=50, skip_rate=20, model_version="Version 2", fields=_FIELDS, values=_FOUR),
            ),
            100,
            5,
            ["Version 2"],
            ["Invalid Floor Model = 'Version 1' due to SkipRate = '110' is out of range (1-100)"],
            id="skip rate",
        ),
        pytest.param(
            (
                ModelGroup(model_weight=-1, skip_rate=10, model_version="Version 1", fields=_FIELDS, values=_FOUR),
                ModelGroup(model_weight=50, skip_rate=20, model_version="Version 2", fields=_FIELDS, values=_FOUR),
            ),
            100,
            5,
            ["Version 2"],
            ["Invalid Floor Model = 'Version 1' due to ModelWeight = '-1' is out of range (1-100)"],
            id="model weight",
        ),
        pytest.param(
            (ModelGroup(model_weight=50, model_version="Version 1", fields=_FIELDS, values=_FOUR, default=-1.0),),
            100,
            5,
            [],
            ["Invalid Floor Model = 'Version 1' due to Default = '-1' is less than 0"],
            id="default",
        ),
        pytest.param(
            (ModelGroup(model_version="Version 1", fields=_FIELDS, values=_FOUR),),
            100,
            2,
            [],
            ["Invalid Floor Model = 'Version 1' due to number of schema fields = '3' are greater than limit 2"],
            id="schema dimensions",
        ),
        pytest.param(
            (ModelGroup(model_version="Version 1", fields=("creativeType", "size", "domain"), values=_FOUR),),
            100,
            3,
            [],
            ["Invalid schema dimension provided = 'creativeType' in Schema Fields = '[creativeType size domain]'"],
            id="unknown dimension",
        ),
        pytest.param(
            (ModelGroup(model_version="Version 1", fields=_FIELDS, values=_FOUR),),
            3,
            5,
            [],
            ["Invalid Floor Model = 'Version 1' due to number of rules = '4' are greater than limit 3"],
            id="rule count",
        ),
        pytest.param((), 100, 5, [], ["No model group present in floors.data"], id="no model group"),
        pytest.param(
            (ModelGroup(model_version="Version 1", fields=_FIELDS * 3, values=_FOUR),),
            0,
            0,
            ["Version 1"],
            [],
            id="0 means no limit",
        ),
    ],
)
def test_select_valid_model_groups(groups, max_rules, max_dims, valid_versions, errors):
    settings = AccountPriceFloors(max_rules=max_rules, max_schema_dims=max_dims)
    valid, got = select_valid_model_groups(groups, settings)
    assert [g.model_version for g in valid] == valid_versions
    assert got == errors


# ---- TestValidateFloorRulesAndLowerValidRuleKey --------------------------------------------------

_SIXTEEN = {
    "banner|300x250|*": 2.01, "banner|300x600|*": 4.01, "banner|728x90|www.website.com": 5.01, "banner|728x90|*": 6.01,
    "banner|*|www.website.com": 7.01, "banner|*|*": 8.01, "*|300x250|www.website.com": 9.01, "*|300x250|*": 10.01,
    "*|300x600|www.website.com": 11.01, "*|300x600|*": 12.01, "*|728x90|www.website.com": 13.01,
    "*|728x90|*": 14.01, "*|*|www.website.com": 15.01, "*|*|*": 16.01,
}  # fmt: skip


@pytest.mark.parametrize(
    ("values", "errors", "rules"),
    [
        pytest.param(
            {"BANNER|300x250|WWW.WEBSITE.COM": 1.01, "banner|300x600|www.website.com|www.test.com": 3.01, **_SIXTEEN},
            [
                "Invalid Floor Rule = 'banner|300x600|www.website.com|www.test.com' "
                "for Schema Fields = '[mediaType size domain]'"
            ],
            {"banner|300x250|www.website.com": 1.01, **_SIXTEEN},
            id="too many fields, upper case",
        ),
        pytest.param(
            {"banner|300x250|www.website.com": 1.01, "banner|300x600|www.website.com": 3.01, "banner|300x600": 4.01},
            ["Invalid Floor Rule = 'banner|300x600' for Schema Fields = '[mediaType size domain]'"],
            {"banner|300x250|www.website.com": 1.01, "banner|300x600|www.website.com": 3.01},
            id="too few fields",
        ),
        pytest.param({"A|b|c": 1.0, "a|b|c": 2.0}, [], {"a|b|c": 1.0}, id="renamed key replaces its lower-case twin"),
    ],
)
def test_rule_keys_lowered_and_checked(values, errors, rules):
    group = ModelGroup(fields=_FIELDS, delimiter="|", values=values)
    assert list(group.rule_errors) == errors
    assert dict(group.rules) == rules
    assert dict(group.values) == values  # the data as given is kept (skipped signalling shows it)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param(("deviceType", "size"), None, id="valid"),
        pytest.param(
            ("deviceType", "dealType"),
            "Invalid schema dimension provided = 'dealType' in Schema Fields = '[deviceType dealType]'",
            id="invalid",
        ),
        pytest.param(
            ("DeviceType",),
            "Invalid schema dimension provided = 'DeviceType' in Schema Fields = '[DeviceType]'",
            id="case-sensitive",
        ),
    ],
)
def test_validate_schema_dimensions(fields, expected):
    assert validate_schema_dimensions(fields) == expected


# ---- TestValidatePriceFloorRules (fetcher) -------------------------------------------------------

_FETCH = AccountFloorFetch(enabled=True, url="http://127.0.0.1/floors", max_rules=5)
_ONE = {"*|*|www.website.com": 15.01}


@pytest.mark.parametrize(
    ("data", "max_rules", "max_dims", "expected"),
    [
        pytest.param(None, 5, 0, "empty data in floor JSON", id="no data"),
        pytest.param(FloorsData(), 5, 0, "no model groups found in price floor data", id="no model group"),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values={}),)),
            5,
            0,
            "invalid number of floor rules, floor rules should be greater than zero and less than MaxRules "
            "specified in account config",
            id="no rules",
        ),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values={"a": 1.0, "b": 2.0}),)),
            1,
            0,
            "invalid number of floor rules, floor rules should be greater than zero and less than MaxRules "
            "specified in account config",
            id="more rules than max",
        ),
        pytest.param(FloorsData(model_groups=(ModelGroup(values=_ONE),)), 0, 0, None, id="max rules 0 = no limit"),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values=_ONE, model_weight=0),)),
            1,
            0,
            "modelGroup[].modelWeight should be greater than or equal to 1 and less than 100",
            id="weight 0",
        ),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values=_ONE, model_weight=101),)),
            1,
            0,
            "modelGroup[].modelWeight should be greater than or equal to 1 and less than 100",
            id="weight 101",
        ),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values=_ONE, skip_rate=101),)),
            1,
            0,
            "model group skip rate should be greater than or equal to 0 and less than 100",
            id="group skip rate",
        ),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values=_ONE, default=-1),)),
            1,
            0,
            "modelGroup.Default should be greater than 0",
            id="default -1",
        ),
        pytest.param(
            FloorsData(skip_rate=-44, model_groups=(ModelGroup(values=_ONE),)),
            1,
            0,
            "skip rate should be greater than or equal to 0 and less than 100",
            id="data skip rate",
        ),
        pytest.param(
            FloorsData(skip_rate=10, use_fetch_data_rate=-11, model_groups=(ModelGroup(values=_ONE),)),
            1,
            0,
            "usefetchdatarate should be greater than or equal to 0 and less than or equal to 100",
            id="use fetch data rate",
        ),
        pytest.param(
            FloorsData(model_groups=(ModelGroup(values=_ONE, fields=_FIELDS),)),
            1,
            2,
            "Price floor schema dimensions 3 exceeded its maximum number 2",
            id="fetch max schema dims",
        ),
        pytest.param(
            FloorsData(use_fetch_data_rate=100, model_groups=(ModelGroup(values=_ONE, model_weight=100),)),
            1,
            3,
            None,
            id="valid",
        ),
    ],
)
def test_validate_rules(data, max_rules, max_dims, expected):
    fetch = AccountFloorFetch(enabled=True, max_rules=max_rules, max_schema_dims=max_dims)
    assert validate_rules(fetch, data) == expected


_PROVIDER_FILE = (
    b'{"currency":"USD","modelgroups":[{"modelweight":40,"modelversion":"version1","default":5,'
    b'"values":{"banner|300x600|www.website.com":3,"banner|728x90|www.website.com":5,"*|*|*":16},'
    b'"schema":{"fields":["mediaType","size","domain"],"delimiter":"|"}}]}'
)


def test_fetched_file_parsed():
    rules, problem = validate_fetched_floors(_PROVIDER_FILE, AccountFloorFetch(max_rules=30))
    assert problem is None
    assert rules is not None and rules.data is not None
    group = rules.data.model_groups[0]
    assert rules.data.currency == "USD"
    assert (group.model_weight, group.model_version, group.default, group.fields) == (40, "version1", 5.0, _FIELDS)
    assert group.rules["*|*|*"] == 16.0
    assert rules.floor_min == 0 and rules.enabled is None  # the file is the data object only


def test_fetched_file_camel_case_keys():
    body = (
        b'{"currency":"USD","floorProvider":"PM","floorsSchemaVersion":2,"skipRate":10,"useFetchDataRate":50,'
        b'"modelGroups":[{"modelVersion":"M_0","modelWeight":1,"schema":{"fields":["domain"]},'
        b'"values":{"missyusa.com":0.85}}]}'
    )
    rules, problem = validate_fetched_floors(body, AccountFloorFetch(max_rules=30))
    assert problem is None and rules is not None and rules.data is not None
    data = rules.data
    assert (data.floor_provider, data.floors_schema_version, data.skip_rate, data.use_fetch_data_rate) == (
        "PM",
        2,
        10,
        50,
    )
    assert data.model_groups[0].model_version == "M_0"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(b'{"data":nil?}', "Received invalid price floor json: ", id="malformed"),
        pytest.param(
            b'{"data":{"currency":"USD","modelgroups":[]},"enabled":true,"floormin":1}',
            "no model groups found in price floor data",
            id="a full floors object is not a data file",
        ),
        pytest.param(b"null", "empty data in floor JSON", id="null"),
        pytest.param(b"[]", "Received invalid price floor json: data must be an object", id="array"),
        pytest.param(
            b'{"modelgroups":[{"values":{"a":"1"}}]}',
            "Received invalid price floor json: data.modelgroups[0].values.a must be a number",
            id="string value",
        ),
        pytest.param(
            b'{"skiprate":1.5,"modelgroups":[{"values":{"a":1}}]}',
            "Received invalid price floor json: data.skiprate must be an integer",
            id="fraction for an int",
        ),
    ],
)
def test_fetched_file_refused(body, expected):
    rules, problem = validate_fetched_floors(body, AccountFloorFetch(max_rules=30))
    assert rules is None
    assert problem is not None and problem.startswith(expected)


# ---- request type checks and Go JSON decoding ----------------------------------------------------


@pytest.mark.parametrize(
    ("floors", "expected"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param({"enabled": True, "floorMin": 1, "skipRate": 5}, None, id="camel case"),
        pytest.param([], "request.ext.prebid.floors must be an object", id="array"),
        pytest.param({"floormin": "1"}, "request.ext.prebid.floors.floormin must be a number", id="floormin string"),
        pytest.param({"skiprate": 1.0}, "request.ext.prebid.floors.skiprate must be an integer", id="skiprate float"),
        pytest.param({"skiprate": True}, "request.ext.prebid.floors.skiprate must be an integer", id="skiprate bool"),
        pytest.param({"enabled": 1}, "request.ext.prebid.floors.enabled must be a boolean", id="enabled int"),
        pytest.param(
            {"enforcement": {"enforceRate": "x"}},
            "request.ext.prebid.floors.enforcement.enforcerate must be an integer",
            id="enforcement",
        ),
        pytest.param(
            {"data": {"modelGroups": [{"schema": {"fields": "domain"}}]}},
            "request.ext.prebid.floors.data.modelgroups[0].schema.fields must be an array of strings",
            id="fields string",
        ),
        pytest.param(
            {"floorendpoint": {"url": 5}}, "request.ext.prebid.floors.floorendpoint.url must be a string", id="url"
        ),
        pytest.param({"floormin": None, "data": None, "unknown": [1]}, None, id="nulls and unknown keys"),
    ],
)
def test_validate_request_floors(floors, expected):
    assert validate_request_floors(floors) == expected


@pytest.mark.parametrize(
    ("floors", "expected"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param({"floorMin": 1, "floorMinCur": "USD", "floorrule": "a"}, None, id="valid"),
        pytest.param({"FloorMin": "1"}, "imp.ext.prebid.floors.floormin must be a number", id="floormin"),
        pytest.param({"floorminCur": 1}, "imp.ext.prebid.floors.floormincur must be a string", id="floorminCur"),
        pytest.param("x", "imp.ext.prebid.floors must be an object", id="not an object"),
    ],
)
def test_validate_imp_floors(floors, expected):
    assert validate_imp_floors(floors, "imp.ext.prebid.floors") == expected


def test_parse_is_case_insensitive_and_last_spelling_wins():
    rules = parse_floor_rules(
        orjson.loads(
            b'{"floormin":1,"floorMin":2,"FLOORMINCUR":"EUR","enforcement":{"floorDeals":true,"enforcePBS":false},'
            b'"data":{"modelGroups":[{"modelWeight":3,"Default":4,"schema":{"Fields":["domain"],"Delimiter":","},'
            b'"values":{"A":null}}]}}'
        )
    )
    assert rules is not None and rules.data is not None and rules.enforcement is not None
    assert (rules.floor_min, rules.floor_min_cur) == (2.0, "EUR")
    assert (rules.enforcement.floor_deals, rules.enforcement.enforce_pbs) == (True, False)
    group = rules.data.model_groups[0]
    assert (group.model_weight, group.default, group.fields, group.delimiter) == (3, 4.0, ("domain",), ",")
    assert dict(group.values) == {"A": 0.0} and dict(group.rules) == {"a": 0.0}


def test_parse_error_type():
    with pytest.raises(FloorsDataError):
        parse_floor_rules({"data": {"modelgroups": {}}})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(-10.0, "-10", id="int"),
        pytest.param(-0.5, "-0.5", id="fraction"),
        pytest.param(1e-05, "1e-05", id="small"),
        pytest.param(123456.0, "123456", id="below 1e6"),
        pytest.param(1e6, "1e+06", id="1e6"),
        pytest.param(-1234567.5, "-1.2345675e+06", id="large"),
        pytest.param(0.0001, "0.0001", id="1e-4"),
    ],
)
def test_go_float(value, expected):
    assert go_float(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(1.142857, 1.1429, id="up"),
        pytest.param(16.66666, 16.6667, id="16.6667"),
        pytest.param(0.00005, 0.0001, id="half away from zero"),
        pytest.param(-0.00005, -0.0001, id="negative half"),
        pytest.param(2.0, 2.0, id="exact"),
    ],
)
def test_round4(value, expected):
    assert round4(value) == expected


def test_go_round_near_half():
    assert go_round(0.49999999999999994) == 0.0
    assert go_round(2.5) == 3.0 and go_round(-2.5) == -3.0
