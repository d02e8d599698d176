"""Floors resolution: PBS-Go floors/floors_test.go and the floorMin tables of rule_test.go."""

from __future__ import annotations

import copy
import time
from dataclasses import replace

import orjson
import pytest

from hbserver.auction.bids.currency import RateTable
from hbserver.config import AccountFloorFetch, AccountPriceFloors
from hbserver.floors import (
    FETCH_ERROR,
    FETCH_INPROGRESS,
    FETCH_SUCCESS,
    FLOORS_DISABLED,
    LOCATION_REQUEST,
    Enforcement,
    Fetched,
    FloorRules,
    FloorsData,
    ModelGroup,
    resolve_floors,
)
from hbserver.floors.data import FloorsDataError, parse_floor_rules
from hbserver.floors.resolve import (
    create_floors_from,
    merge_floors,
    min_floor_value,
    resolve_floor_min,
    select_floor_model_group,
    should_skip_floors,
)

RATES = RateTable.of({"USD": {"INR": 70, "EUR": 0.9, "JPY": 5.09}}).convert
ACCOUNT = AccountPriceFloors(enabled=True, max_rules=100, max_schema_dims=5)
ACCOUNT_MANY_RULES = AccountPriceFloors(enabled=True, max_rules=1000, max_schema_dims=5)
_FIELDS = ["mediaType", "size", "domain"]


def never(n: int) -> int:
    raise AssertionError(f"no random draw expected (rand({n}))")


def const(value: int):
    return lambda n: value


def draws(*values: int):
    remaining = list(values)
    return lambda n: remaining.pop(0)


def _request(floors: object = None, imp: dict | None = None, **top) -> dict:
    request = {
        "id": "r",
        "site": {"publisher": {"domain": "www.website.com"}},
        "imp": [imp or {"id": "1234", "banner": {"format": [{"w": 300, "h": 250}]}}],
        **top,
    }
    if floors is not None:
        request["ext"] = {"prebid": {"floors": orjson.loads(floors) if isinstance(floors, str) else floors}}
    return request


def _floors(request: dict) -> dict:
    return request["ext"]["prebid"]["floors"]


# ---- TestEnrichWithPriceFloors --------------------------------------------------------------------

_ENF = '"enforcement":{"enforcepbs":true,"floordeals":true,"enforcerate":100}'
_G = '"schema":{"fields":["mediaType","size","domain"],"delimiter":"|"}'


@pytest.mark.parametrize(
    ("floors", "account", "imp", "top", "rand", "value", "currency", "location", "errors"),
    [
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
            '"values":{"banner|300x600|www.website5.com":5,"*|*|*":7},' + _G + '}]},"enabled":true,' + _ENF + "}",
            AccountPriceFloors(enabled=False), None, {}, never, None, None, None, [FLOORS_DISABLED],
            id="disabled in account",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
            '"values":{"banner|300x600|www.website.com":5,"*|*|*":7},' + _G + '}]},"enabled":false,' + _ENF + "}",
            ACCOUNT, None, {}, never, None, None, None, [FLOORS_DISABLED],
            id="disabled in request",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 2 from req","currency":"USD",'
            '"values":{"banner|300x250|www.website.com":5,"*|*|*":7},' + _G + '},{"modelversion":"model 1 from req",'
            '"currency":"USD","values":{"banner|300x250|www.website.com":5,"*|*|*":7},' + _G + '}]},"enabled":true,'
            + _ENF + "}",
            ACCOUNT, None, {}, const(1), 5, "USD", "request", [],
            id="enabled, two model groups",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
            '"values":{"BANNER|300x600|WWW.WEBSITE.COM":5,"*|*|*":7},' + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, {"id": "1234", "banner": {"w": 300, "h": 600}}, {}, never, 5, "USD", "request", [],
            id="upper-case rule, banner w h",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
            '"values":{"banner|300x600|www.website.com":5,"*|*|www.test.com":15,"*|*|*":7},' + _G + "}]},"
            '"enabled":true,' + _ENF + "}",
            ACCOUNT, {"id": "1234", "banner": {"w": 300, "h": 600}}, {"site": None, "app": {"domain": "www.test.com"}},
            never, 15, "USD", "request", [],
            id="app domain",
        ),
        pytest.param(
            None, ACCOUNT, {"id": "1234", "bidfloor": 10, "bidfloorcur": "EUR", "banner": {"w": 300, "h": 600}},
            {"site": None, "app": {"domain": "www.test.com"}, "ext": {"prebid": {}}}, never, 10, "EUR", "noData", [],
            id="no floors ext, imp.bidfloor kept",
        ),
        pytest.param(
            '{"floormin":80,"floormincur":"INR","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"currency":"USD","values":{"banner|300x250|www.website.com":1,"*|*|www.test.com":15,"*|*|*":7},'
            + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 1.1429, "USD", "request", [],
            id="rule below floorMin in another currency",
        ),
        pytest.param(
            '{"floormin":1,"floormincur":"USD","data":{"currency":"INR","modelgroups":[{"modelversion":"m",'
            '"values":{"banner|300x250|www.website.com":60,"*|*|www.test.com":65,"*|*|*":67},"Default":50,'
            + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 70, "INR", "request", [],
            id="INR rule below USD floorMin",
        ),
        pytest.param(
            '{"floormin":1,"floormincur":"USD","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"values":{"banner|300x250|www.website.com":2,"*|*|www.test.com":1.5,"*|*|*":1.7},"Default":5,'
            + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 2, "USD", "request", [],
            id="rule above floorMin",
        ),
        pytest.param(
            '{"floormin":3,"floormincur":"USD","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"values":{"banner|300x250|www.website.com":2,"*|*|www.test.com":1.5,"*|*|*":1.7},"Default":5,'
            + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 3, "USD", "request", [],
            id="rule below floorMin",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"m","values":{"banner|300x250|www.website.com1":2,'
            '"*|*|www.test2.com":1.5},"schema":{"fields":["mediaType","size","domain"]},"default":20}]},'
            '"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 20, "USD", "request", [],
            id="default",
        ),
        pytest.param(
            '{"floormin":15,"floormincur":"USD","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"values":{"banner|300x250|www.website.com1":2,"*|*|www.test2.com":1.5},'
            '"schema":{"fields":["mediaType","size","domain"]},"default":5}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, 15, "USD", "request", [],
            id="default below floorMin",
        ),
        pytest.param(
            '{"floormin":2,"floormincur":"USD","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"values":{"banner|300x250|www.website.com1":2,"*|*|www.test2.com":1.5},'
            '"schema":{"fields":["mediaType","size","domain"]}}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, {"id": "1234", "bidfloor": 100, "bidfloorcur": "INR", "banner": {"w": 300, "h": 250}},
            {}, never, 100, "INR", "request", [],
            id="no rule, no default: imp.bidfloor kept",
        ),
        pytest.param(
            '{"floormin":80,"floormincur":"ABCD","data":{"currency":"USD","modelgroups":[{"modelversion":"m",'
            '"currency":"USD","values":{"banner|300x250|www.website.com":1,"*|*|www.test.com":15,"*|*|*":7},'
            + _G + '}]},"enabled":true,' + _ENF + "}",
            ACCOUNT, None, {}, never, None, None, "request",
            ["Error in getting FloorMin value : 'currency: tag is not well-formed'"],  # PBS-Go floors_test.go
            id="floorMin currency not well-formed",
        ),
        pytest.param(
            '{"data":{"currency":"USD","modelgroups":[{"modelversion":"m","currency":"USD",'
            '"values":{"banner|300x250|www.website.com":5,"*|*|*":7},' + _G + '}]},"enabled":true,"skiprate":110,'
            + _ENF + "}",
            ACCOUNT, None, {}, never, None, None, "request", ["Invalid SkipRate = '110' at ext.prebid.floors.skiprate"],
            id="invalid root skip rate",
        ),
        pytest.param(
            '{"floormin":11,"floormincur":"USD","data":{"currency":"USD","floorsschemaversion":2,"modelgroups":['
            '{"modelweight":50,"modelversion":"version2",' + _G + ',"values":{"*|*|*":11.01,'
            '"*|*|www.website1.com":17.01},"default":21},{"modelweight":50,"modelversion":"version11","skiprate":110,'
            + _G + ',"values":{"*|300x250|*":11.01,"*|300x250|www.website1.com":100.01},"default":21}]},'
            '"enforcement":{"enforcepbs":true,"floordeals":true},"enabled":true}',
            ACCOUNT, None, {}, never, 11.01, "USD", "request", [],
            id="invalid group dropped silently when another is valid",
        ),
    ],
)  # fmt: skip
def test_enrich_with_price_floors(floors, account, imp, top, rand, value, currency, location, errors):
    request = _request(floors, imp)
    for key, item in top.items():
        if item is None:
            request.pop(key, None)
        else:
            request[key] = item
    original = copy.deepcopy(request)
    result = resolve_floors(request, account, RATES, None, rand)
    assert result.errors == errors
    assert result.request["imp"][0].get("bidfloor") == (
        value if value is not None else original["imp"][0].get("bidfloor")
    )
    assert result.request["imp"][0].get("bidfloorcur") == (currency or original["imp"][0].get("bidfloorcur"))
    if location is None:
        assert result.request == original
    else:
        assert _floors(result.request)["location"] == location
    if "floorsschemaversion" in (floors or ""):
        assert _floors(result.request)["data"]["floorsschemaversion"] == 2


def test_skip_rate_100_skips_signalling():
    floors = (
        '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
        '"values":{"BANNER|300x250|www.website.com":5,"bad":1,"*|*|*":7},'
        + _G
        + '}]},"enabled":true,"skiprate":100,'
        + _ENF
        + "}"
    )
    result = resolve_floors(_request(floors), ACCOUNT, RATES, None, const(100))
    written = _floors(result.request)
    assert written["skipped"] is True and result.skipped is True
    assert "bidfloor" not in result.request["imp"][0]
    assert result.errors == []  # rule keys are not checked when signalling is skipped
    assert written["data"]["modelgroups"][0]["values"] == {"BANNER|300x250|www.website.com": 5, "bad": 1, "*|*|*": 7}


def test_written_floors_and_imp_ext():
    floors = (
        '{"floormin":1,"floorMinCur":"USD","floorprovider":"PM","skipped":true,"floorendpoint":{},'
        '"data":{"currency":"USD","floorprovider":"P","modelTimestamp":7,"modelgroups":[{"modelversion":"m",'
        '"values":{"BANNER|300X250|*":2.123456,"a|b":1},' + _G + '}]},"enforcement":{"floorDeals":true}}'
    )
    imp = {"id": "1234", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": {"bidder": {"x": {}}}}}
    request = _request(floors, imp)
    original = copy.deepcopy(request)
    result = resolve_floors(request, ACCOUNT, RATES, None, never)
    assert result.errors == ["Invalid Floor Rule = 'a|b' for Schema Fields = '[mediaType size domain]'"]
    assert _floors(result.request) == {
        "floormin": 1.0,
        "floormincur": "USD",
        "floorendpoint": {},
        "data": {
            "currency": "USD",
            "modeltimestamp": 7,
            "modelgroups": [
                {
                    "modelversion": "m",
                    "schema": {"fields": _FIELDS, "delimiter": "|"},
                    "values": {"banner|300x250|*": 2.123456},
                }
            ],
            "floorprovider": "P",
        },
        "enforcement": {"floordeals": True},
        "skipped": False,
        "floorprovider": "PM",
        "fetchstatus": "none",
        "location": "request",
    }
    new_imp = result.request["imp"][0]
    assert (new_imp["bidfloor"], new_imp["bidfloorcur"]) == (2.1235, "USD")
    assert new_imp["ext"] == {
        "prebid": {
            "bidder": {"x": {}},
            "floors": {"floorrule": "banner|300x250|*", "floorrulevalue": 2.1235, "floorvalue": 2.1235},
        }
    }
    assert original["imp"][0] == imp  # the caller's imp and its ext are not written


@pytest.mark.parametrize(
    ("imp_ext", "expected"),
    [
        pytest.param(
            None, {"prebid": {"floors": {"floorrule": "a", "floorrulevalue": 5.5, "floorvalue": 5.5}}}, id="nil"
        ),
        pytest.param(
            {}, {"prebid": {"floors": {"floorrule": "a", "floorrulevalue": 5.5, "floorvalue": 5.5}}}, id="empty"
        ),
        pytest.param(
            {"prebid": {"test": True, "floors": {"floorMin": 1}}},
            {"prebid": {"test": True, "floors": {"floorrule": "a", "floorrulevalue": 5.5, "floorvalue": 5.5}}},
            id="prebid ext kept, floors replaced",
        ),
    ],
)
def test_imp_ext_floor_details(imp_ext, expected):
    imp = {"id": "1", "video": {"w": 300, "h": 250}}
    if imp_ext is not None:
        imp["ext"] = imp_ext
    floors = {"data": {"modelgroups": [{"schema": {"fields": ["domain"]}, "values": {"a": 5.5}}]}}
    request = {"id": "r", "site": {"domain": "a"}, "imp": [imp], "ext": {"prebid": {"floors": floors}}}
    result = resolve_floors(request, ACCOUNT, RATES, None, never)
    assert result.request["imp"][0]["ext"] == expected


def test_all_rules_invalid_means_no_floor_even_with_default():
    floors = {"data": {"modelgroups": [{"schema": {"fields": ["domain"]}, "values": {"a|b": 5}, "default": 3}]}}
    result = resolve_floors(_request(floors), ACCOUNT, RATES, None, never)
    assert "bidfloor" not in result.request["imp"][0]
    assert result.errors == ["Invalid Floor Rule = 'a|b' for Schema Fields = '[domain]'"]


def test_model_weight_written_as_1_when_drawn_without_weight():
    group = '{"modelversion":"%s","schema":{"fields":["domain"]},"values":{"*":%d}}'
    floors = '{"data":{"modelgroups":[' + group % ("a", 1) + "," + group % ("b", 2) + "]}}"
    result = resolve_floors(_request(floors), ACCOUNT, RATES, None, const(2))  # total 2: rand(3) = 2 -> second
    written = _floors(result.request)["data"]["modelgroups"]
    assert written == [{"modelweight": 1, "modelversion": "b", "schema": {"fields": ["domain"]}, "values": {"*": 2.0}}]
    assert result.request["imp"][0]["bidfloor"] == 2.0
    single = resolve_floors(
        _request('{"data":{"modelgroups":[' + group % ("a", 1) + "]}}"), ACCOUNT, RATES, None, never
    )
    assert "modelweight" not in _floors(single.request)["data"]["modelgroups"][0]


def test_request_without_floors_is_left_alone_and_fast():
    request = _request(None)
    request["ext"] = {"prebid": {"targeting": {}}}
    result = resolve_floors(request, ACCOUNT, RATES, None, never)
    assert result.request is request and result.errors == [] and result.floors is None
    assert request["ext"] == {"prebid": {"targeting": {}}}
    start = time.perf_counter()
    for _ in range(10000):
        resolve_floors(request, ACCOUNT, RATES, None, never)
    assert (time.perf_counter() - start) / 10000 < 20e-6


def test_invalid_request_floors_reported_not_resolved():
    request = _request({"skiprate": "x"})
    original = copy.deepcopy(request)
    result = resolve_floors(request, ACCOUNT, RATES, None, never)
    assert result.errors == ["request.ext.prebid.floors.skiprate must be an integer"]
    assert result.request == original


def test_imp_floor_min_in_imp_ext():
    floors = {"data": {"currency": "INR", "modelgroups": [{"schema": {"fields": ["domain"]}, "values": {"*": 60}}]}}
    imp = {"id": "1", "ext": {"prebid": {"floors": {"FloorMin": 1, "floorMinCur": "USD"}}}}
    result = resolve_floors(_request(floors, imp), ACCOUNT, RATES, None, never)
    assert (result.request["imp"][0]["bidfloor"], result.request["imp"][0]["bidfloorcur"]) == (70, "INR")


# ---- TestResolveFloors with fetched data ---------------------------------------------------------

_FETCHED = Fetched(
    FloorRules(
        enabled=True,
        location=LOCATION_REQUEST,
        enforcement=Enforcement(enforce_pbs=True, enforce_rate=100, floor_deals=True),
        data=FloorsData(
            currency="USD",
            model_groups=(
                ModelGroup(
                    model_version="Version 101",
                    currency="USD",
                    values={"banner|300x600|www.website5.com": 15, "*|*|*": 25},
                    fields=tuple(_FIELDS),
                    delimiter="|",
                ),
            ),
        ),
    ),
    FETCH_SUCCESS,
)
_FETCHED_GROUP = {
    "currency": "USD",
    "modelversion": "Version 101",
    "schema": {"fields": _FIELDS, "delimiter": "|"},
    "values": {"banner|300x600|www.website5.com": 15, "*|*|*": 25},
}
_REQUEST_GROUP = {
    "currency": "USD",
    "modelversion": "model 1 from req",
    "schema": {"fields": _FIELDS, "delimiter": "|"},
    "values": {"banner|300x600|www.website5.com": 5, "*|*|*": 7},
}
_REQ_FLOORS = (
    '{"data":{"currency":"USD","modelgroups":[{"modelversion":"model 1 from req","currency":"USD",'
    '"values":{"banner|300x600|www.website5.com":5,"*|*|*":7},' + _G + '}]},"enabled":true,' + _ENF + "}"
)
_ENF_JSON = {"enforcepbs": True, "floordeals": True, "enforcerate": 100}
DYNAMIC = replace(ACCOUNT, use_dynamic_data=True)


@pytest.mark.parametrize(
    ("floors", "account", "fetched", "expected", "value"),
    [
        pytest.param(
            _REQ_FLOORS, ACCOUNT, _FETCHED,
            {"data": {"currency": "USD", "modelgroups": [_REQUEST_GROUP]}, "enforcement": _ENF_JSON, "enabled": True,
             "skipped": False, "fetchstatus": "none", "location": "request"},
            7, id="dynamic data off: request floors",
        ),
        pytest.param(
            None, DYNAMIC, _FETCHED,
            {"data": {"currency": "USD", "modelgroups": [_FETCHED_GROUP]}, "enforcement": _ENF_JSON, "enabled": True,
             "skipped": False, "fetchstatus": "success", "location": "fetch"},
            25, id="fetched floors",
        ),
        pytest.param(
            '{"floormincur":"EUR","enabled":true,"data":{"currency":"USD","modelgroups":[{"modelversion":"req",'
            '"currency":"USD","values":{"*|*|*":7},' + _G + '}]},"floormin":10.11,' + _ENF + "}",
            DYNAMIC, _FETCHED,
            {"floormin": 10.11, "floormincur": "EUR", "data": {"currency": "USD", "modelgroups": [_FETCHED_GROUP]},
             "enforcement": _ENF_JSON, "enabled": True, "skipped": False, "fetchstatus": "success",
             "location": "fetch"},
            25, id="merged",
        ),
        pytest.param(
            '{"enforcement":{"enforcepbs":true,"floordeals":true,"enforcerate":100}}', ACCOUNT, _FETCHED,
            {"enforcement": _ENF_JSON, "fetchstatus": "none", "location": "request"},
            None, id="only enforcement in request",
        ),
        pytest.param(
            _REQ_FLOORS, DYNAMIC, None,
            {"data": {"currency": "USD", "modelgroups": [_REQUEST_GROUP]}, "enforcement": _ENF_JSON, "enabled": True,
             "skipped": False, "fetchstatus": "none", "location": "request"},
            7, id="no fetcher",
        ),
        pytest.param(
            _REQ_FLOORS, DYNAMIC, Fetched(None, FETCH_INPROGRESS),
            {"data": {"currency": "USD", "modelgroups": [_REQUEST_GROUP]}, "enforcement": _ENF_JSON, "enabled": True,
             "skipped": False, "fetchstatus": "none", "location": "request"},
            7, id="fetch in progress: request floors, status none",
        ),
        pytest.param(
            None, DYNAMIC, Fetched(None, FETCH_ERROR), None, None, id="fetch error, no request floors: untouched",
        ),
        pytest.param(
            '{"floorendpoint":{"url":"http://127.0.0.1/f"},"enabled":true}', DYNAMIC, _FETCHED,
            {"floorendpoint": {"url": "http://127.0.0.1/f"},
             "data": {"currency": "USD", "modelgroups": [_FETCHED_GROUP]},
             "enforcement": _ENF_JSON, "enabled": True, "skipped": False, "fetchstatus": "success",
             "location": "fetch"},
            25, id="request endpoint kept",
        ),
    ],
)  # fmt: skip
def test_resolve_floors(floors, account, fetched, expected, value):
    request = _request(floors)
    original = copy.deepcopy(request)
    result = resolve_floors(request, account, RATES, fetched, const(0))
    if expected is None:
        assert result.request == original
        return
    assert _floors(result.request) == expected
    assert result.request["imp"][0].get("bidfloor") == value


def test_fetch_function_gets_the_account_url_never_the_requests():
    asked: list[AccountFloorFetch] = []

    def fetch(config: AccountFloorFetch) -> Fetched:
        asked.append(config)
        return _FETCHED

    account = replace(DYNAMIC, fetch=AccountFloorFetch(enabled=True, url="http://127.0.0.1/account"))
    resolve_floors(_request('{"floorendpoint":{"url":"http://127.0.0.1/req"}}'), account, RATES, fetch, const(0))
    resolve_floors(_request(None), account, RATES, fetch, const(0))
    resolve_floors(_request(None), ACCOUNT, RATES, fetch, const(0))  # no dynamic data: not asked
    assert [c.url for c in asked] == ["http://127.0.0.1/account", "http://127.0.0.1/account"]


_RATE_FETCHED = {
    rate: Fetched(
        FloorRules(
            enabled=True,
            data=FloorsData(
                currency="USD",
                use_fetch_data_rate=rate,
                model_groups=(
                    ModelGroup(model_version="model from fetched", values={"*|*|*": 25}, fields=tuple(_FIELDS)),
                ),
            ),
        ),
        FETCH_SUCCESS,
    )
    for rate in (0, 100, None)
}


@pytest.mark.parametrize(
    ("rate", "draw", "location", "version"),
    [
        pytest.param(0, 0, "request", "model 1 from req", id="rate 0"),
        pytest.param(100, 99, "fetch", "model from fetched", id="rate 100"),
        pytest.param(None, None, "fetch", "model from fetched", id="no rate: fetched"),
        pytest.param(50, 49, "fetch", "model from fetched", id="rate 50 drawn 49"),
        pytest.param(50, 50, "request", "model 1 from req", id="rate 50 drawn 50"),
    ],
)
def test_use_fetch_data_rate(rate, draw, location, version):
    fetched = _RATE_FETCHED.get(rate) or Fetched(
        replace(
            _RATE_FETCHED[0].rules,
            data=replace(_RATE_FETCHED[0].rules.data, use_fetch_data_rate=rate),  # type: ignore[union-attr]
        ),
        FETCH_SUCCESS,
    )
    result = resolve_floors(_request(_REQ_FLOORS), DYNAMIC, RATES, fetched, never if draw is None else draws(draw))
    written = _floors(result.request)
    assert (written["location"], written["data"]["modelgroups"][0]["modelversion"]) == (location, version)


# ---- TestCreateFloorsFrom ------------------------------------------------------------------------


def test_create_floors_from_keeps_floor_provider():
    floors = parse_floor_rules(
        {
            "enabled": True, "floormin": 10.11, "floormincur": "EUR",
            "enforcement": {"enforcepbs": True, "enforcerate": 100, "floordeals": True},
            "data": {"currency": "USD", "floorprovider": "PM", "modelgroups": [
                {"modelversion": "model from fetched", "currency": "USD", "values": {"*|*|*": 25},
                 "schema": {"fields": _FIELDS}}]},
        }
    )  # fmt: skip
    final, group, weight_default, errors = create_floors_from(floors, ACCOUNT, FETCH_SUCCESS, "fetch", never)
    assert errors == [] and weight_default is False and group is not None
    assert (final.enabled, final.floor_min, final.floor_min_cur, final.fetch_status, final.location) == (
        True, 10.11, "EUR", FETCH_SUCCESS, "fetch"
    )  # fmt: skip
    assert final.data is not None and final.data.floor_provider == "PM"


@pytest.mark.parametrize(
    ("floors", "expected", "errors"),
    [
        pytest.param(
            {"enabled": True, "enforcement": {"enforcepbs": True, "enforcerate": 100, "floordeals": True}},
            FloorRules(
                fetch_status="none", location="request",
                enforcement=Enforcement(enforce_pbs=True, enforce_rate=100, floor_deals=True),
            ),
            [], id="only enforcement",
        ),
        pytest.param(
            {"enabled": True, "data": {"currency": "USD", "modelgroups": [
                {"modelversion": "model from fetched", "skiprate": 110, "values": {"*|*|*": 25},
                 "schema": {"fields": _FIELDS}}]}},
            FloorRules(fetch_status="none", location="request"),
            ["Invalid Floor Model = 'model from fetched' due to SkipRate = '110' is out of range (1-100)"],
            id="only group invalid",
        ),
        pytest.param(
            {"floormin": -1, "enforcement": {"enforcepbs": True}},
            FloorRules(fetch_status="none", location="request"),
            ["Invalid FloorMin = '-1', value should be >= 0"], id="invalid params drop enforcement",
        ),
    ],
)  # fmt: skip
def test_create_floors_from(floors, expected, errors):
    final, group, _, got = create_floors_from(parse_floor_rules(floors), ACCOUNT, "none", "request", never)
    assert (final, group, got) == (expected, None, errors)


@pytest.mark.parametrize(
    ("account_enabled", "request_enabled", "errors"),
    [
        pytest.param(False, False, [FLOORS_DISABLED], id="both off"),
        pytest.param(True, True, [], id="both on"),
        pytest.param(False, True, [FLOORS_DISABLED], id="account off"),
        pytest.param(True, False, [FLOORS_DISABLED], id="request off"),
    ],
)
def test_is_price_floors_enabled(account_enabled, request_enabled, errors):
    request = _request({"enabled": request_enabled})
    result = resolve_floors(request, AccountPriceFloors(enabled=account_enabled), RATES, None, never)
    assert result.errors == errors


# ---- TestResolveFloorMin -------------------------------------------------------------------------


def _fr(floor_min=0.0, cur="", data_cur=None) -> FloorRules:
    return FloorRules(
        floor_min=floor_min, floor_min_cur=cur, data=None if data_cur is None else FloorsData(currency=data_cur)
    )


@pytest.mark.parametrize(
    ("request_floors", "fetch_floors", "expected"),
    [
        pytest.param(_fr(10, "JPY"), _fr(), (10, "JPY"), id="request only"),
        pytest.param(_fr(10, "JPY", "USD"), _fr(), (10, "JPY"), id="request with data currency"),
        pytest.param(_fr(10, data_cur="USD"), _fr(), (10, "USD"), id="request data currency"),
        pytest.param(_fr(10, "USD"), _fr(15, "INR"), (10, "USD"), id="both: request wins"),
        pytest.param(_fr(), _fr(15, "EUR"), (15, "EUR"), id="fetched only"),
        pytest.param(_fr(cur="EUR"), _fr(15, "EUR"), (15, "EUR"), id="request currency, fetched same"),
        pytest.param(_fr(cur="USD"), _fr(15, "EUR"), (16.6667, "USD"), id="request currency, fetched converted"),
        pytest.param(_fr(11), _fr(cur="EUR"), (11, "EUR"), id="request min, fetched currency"),
        pytest.param(_fr(cur="INR"), _fr(12), (12, "INR"), id="request currency, fetched min"),
        pytest.param(_fr(cur="INR"), _fr(1, data_cur="USD"), (70, "INR"), id="fetched min in data currency"),
        pytest.param(_fr(2), _fr(data_cur="USD"), (2, "USD"), id="fetched data currency"),
        pytest.param(_fr(), _fr(12, data_cur="USD"), (12, "USD"), id="fetched min and data currency"),
        pytest.param(_fr(), _fr(), (0, ""), id="nothing"),
        pytest.param(_fr(cur="USD"), _fr(15, "XXX"), (0, "USD"), id="no rate"),
    ],
)
def test_resolve_floor_min(request_floors, fetch_floors, expected):
    price = resolve_floor_min(request_floors, fetch_floors, RATES)
    assert (price.floor_min, price.floor_min_cur) == expected


# ---- TestMergeFloors -----------------------------------------------------------------------------

_INR_DATA = FloorsData(
    currency="INR",
    model_groups=(ModelGroup(model_version="Version 1", currency="INR", values={"*|*|*": 50}, fields=tuple(_FIELDS)),),
)


@pytest.mark.parametrize(
    ("request_floors", "fetch_enabled", "expected"),
    [
        pytest.param(None, True, FloorRules(enabled=True, data=_INR_DATA), id="no request floors"),
        pytest.param(FloorRules(enabled=False), True, FloorRules(enabled=False, data=_INR_DATA), id="request off"),
        pytest.param(
            FloorRules(enabled=True, enforcement=Enforcement(enforce_rate=50, enforce_pbs=True)),
            True,
            FloorRules(enabled=True, data=_INR_DATA, enforcement=Enforcement(enforce_rate=50, enforce_pbs=True)),
            id="enforcement pbs true",
        ),
        pytest.param(
            FloorRules(enabled=True, enforcement=Enforcement(enforce_rate=50, enforce_pbs=False)),
            True,
            FloorRules(enabled=True, data=_INR_DATA, enforcement=Enforcement(enforce_rate=50, enforce_pbs=False)),
            id="enforcement pbs false",
        ),
        pytest.param(
            FloorRules(enabled=True, floor_min=5, floor_min_cur="INR", enforcement=Enforcement(enforce_pbs=False)),
            True,
            FloorRules(
                enabled=True,
                data=_INR_DATA,
                floor_min=5,
                floor_min_cur="INR",
                enforcement=Enforcement(enforce_pbs=False),
            ),
            id="floor min",
        ),
        pytest.param(
            FloorRules(enabled=True, floor_min=5, floor_min_cur="INR", location_url="https://test.com/floors"),
            True,
            FloorRules(
                enabled=True, data=_INR_DATA, floor_min=5, floor_min_cur="INR", location_url="https://test.com/floors"
            ),
            id="url",
        ),
        pytest.param(
            FloorRules(enabled=True, floor_min=5, floor_min_cur="INR", location_url="https://test.com/floors"),
            None,
            FloorRules(
                enabled=True, data=_INR_DATA, floor_min=5, floor_min_cur="INR", location_url="https://test.com/floors"
            ),
            id="fetched without enabled",
        ),
    ],
)
def test_merge_floors(request_floors, fetch_enabled, expected):
    assert merge_floors(request_floors, FloorRules(enabled=fetch_enabled, data=_INR_DATA), RATES) == expected


# ---- TestShouldSkipFloors / TestSelectFloorModelGroup --------------------------------------------


@pytest.mark.parametrize(
    ("group", "data", "root", "draw", "expected"),
    [
        pytest.param(10, 0, 0, 5, True, id="group 10"),
        pytest.param(100, 0, 0, 5, True, id="group 100"),
        pytest.param(0, 0, 0, 0, False, id="none"),
        pytest.param(0, 50, 0, 40, True, id="data 50"),
        pytest.param(0, 0, 60, 40, True, id="root 60 skip"),
        pytest.param(0, 0, 60, 70, False, id="root 60 no skip"),
        pytest.param(0, 0, 100, 100, True, id="root 100"),
        pytest.param(10, 90, 90, 50, False, id="group rate wins"),
    ],
)
def test_should_skip_floors(group, data, root, draw, expected):
    assert should_skip_floors(group, data, root, const(draw)) is expected


@pytest.mark.parametrize(
    ("weights", "draw", "expected_weight", "defaulted"),
    [
        pytest.param([None, None], 0, None, True, id="default weights"),
        pytest.param([25, 50], 5, 25, False, id="25 of 25+50"),
        pytest.param([50, 25], 30, 50, False, id="sorted by weight"),
        pytest.param([25, 50], 80, 25, False, id="past the total: first"),
        pytest.param([50, 50], 51, 50, False, id="equal weights"),
    ],
)
def test_select_floor_model_group(weights, draw, expected_weight, defaulted):
    groups = [ModelGroup(model_weight=w, model_version=str(i)) for i, w in enumerate(weights)]
    chosen, weight_default = select_floor_model_group(groups, const(draw))
    assert (chosen.model_weight, weight_default) == (expected_weight, defaulted)


def test_select_floor_model_group_draws_over_total_plus_one():
    seen: list[int] = []
    select_floor_model_group([ModelGroup(model_weight=25), ModelGroup(model_weight=50)], lambda n: seen.append(n) or 0)
    assert seen == [76]


# ---- TestGetMinFloorValue ------------------------------------------------------------------------

RATES_81 = RateTable.of({"USD": {"INR": 81.17}}).convert


@pytest.mark.parametrize(
    ("floors", "imp_floors", "floor_cur", "expected"),
    [
        pytest.param(_fr(2, "INR", "INR"), {"floorMinCur": "INR", "floorMin": 1.0}, "INR", (1, None), id="imp wins"),
        pytest.param(_fr(), {"floorMinCur": "INR", "floorMin": 1.0}, "USD", (0.0123, None), id="imp only"),
        pytest.param(_fr(1, "EUR", "EUR"), {}, "EUR", (1, None), id="floors only"),
        pytest.param(_fr(2, data_cur="INR"), {"floorMinCur": "INR"}, "INR", (2, None), id="currency from imp"),
        pytest.param(_fr(cur="USD", data_cur="INR"), {"FloorMin": 2.0}, "INR", (162.34, None), id="min from imp"),
        pytest.param(_fr(cur="USD"), {"floorMinCur": "USD", "floorMin": 1.0}, "USD", (1, None), id="same currency"),
        pytest.param(
            _fr(0, "EUR", "INR"), {"floorMinCur": "USD", "floorMin": 1.0}, "INR", (81.17, None), id="imp currency"
        ),
        pytest.param(_fr(2, "JPY", "INR"), {"floorMinCur": "USD", "floorMin": 0.0}, "INR", (162.34, None), id="imp 0"),
        pytest.param(_fr(1, "EUR", "EUR"), {"floorMinCur": "", "floorMin": -1.0}, "EUR", (1.0, None), id="imp -1"),
        pytest.param(
            _fr(3, "EUR"),
            {},
            "USD",
            (0.0, "Error in getting FloorMin value : 'Currency conversion rate not found: 'EUR' => 'USD''"),
            id="no rate",
        ),
        pytest.param(_fr(3), {}, "EUR", (3, None), id="no floorMin currency: taken as is"),
    ],
)
def test_min_floor_value(floors, imp_floors, floor_cur, expected):
    imp = {"id": "1", "ext": {"prebid": {"floors": imp_floors}}}
    assert min_floor_value(floors, imp, floor_cur, RATES_81) == expected


def test_request_floors_parsed_once_per_json_text(monkeypatch):
    """Repeated ext.prebid.floors (the same JSON text) share one parse and one create_floors_from;
    a refusal is remembered and raised again; the memo is bounded."""
    from hbserver.floors import data as floors_data
    from hbserver.floors import resolve as floors_resolve

    monkeypatch.setattr(floors_data, "_parsed_floors", {})
    monkeypatch.setattr(floors_resolve, "_created_floors", {})
    floors = {"data": {"modelgroups": [{"schema": {"fields": ["domain"]}, "values": {"*": 1.5}}]}}
    first = floors_data.parsed_floor_rules(floors)
    assert first == parse_floor_rules(floors)
    assert floors_data.parsed_floor_rules(copy.deepcopy(floors)) is first
    assert floors_data.parsed_floor_rules({**floors, "floormin": 1}) is not first
    for _ in range(2):
        with pytest.raises(FloorsDataError, match=r"request.ext.prebid.floors.skiprate must be an integer"):
            floors_data.parsed_floor_rules({"skiprate": "x"})

    calls = []
    real = floors_resolve.create_floors_from
    monkeypatch.setattr(floors_resolve, "create_floors_from", lambda *a: calls.append(1) or real(*a))
    for _ in range(3):
        result = resolve_floors(_request(copy.deepcopy(floors)), ACCOUNT, RATES, None, never)
        assert result.request["imp"][0]["bidfloor"] == 1.5 and result.errors == []
    assert len(calls) == 1
    other_settings = replace(ACCOUNT, max_rules=50)  # another account's settings: not the cached result
    resolve_floors(_request(copy.deepcopy(floors)), other_settings, RATES, None, never)
    assert len(calls) == 2

    # two model groups: the group is drawn per auction, never cached
    group = {"schema": {"fields": ["domain"]}, "values": {"*": 1}}
    drawn = {"data": {"modelgroups": [{**group, "modelversion": "a"}, {**group, "modelversion": "b"}]}}
    seen = []
    for draw in (1, 2, 1):
        result = resolve_floors(_request(copy.deepcopy(drawn)), ACCOUNT, RATES, None, const(draw))
        seen.append(_floors(result.request)["data"]["modelgroups"][0]["modelversion"])
    assert seen == ["a", "b", "a"]

    monkeypatch.setattr(floors_data, "PARSED_FLOORS_MAX", 4)
    for n in range(10):
        floors_data.parsed_floor_rules({"floormin": n})
    assert len(floors_data._parsed_floors) == 4
    big = {"data": {"modelgroups": [{"schema": {"fields": ["domain"]},
                                     "values": {f"d{n}.example": 1 for n in range(600)}}]}}
    assert len(orjson.dumps(big)) > floors_data.PARSED_FLOORS_MAX_BYTES  # parsed each time, never kept
    assert floors_data.parsed_floor_rules(big) is not floors_data.parsed_floor_rules(big)
    assert len(floors_data._parsed_floors) == 4
    created = len(floors_resolve._created_floors)
    resolve_floors(_request(big), ACCOUNT_MANY_RULES, RATES, None, never)
    assert len(floors_resolve._created_floors) == created  # over CREATED_FLOORS_MAX_RULES: not kept


@pytest.mark.parametrize(
    "floors",
    [
        pytest.param({"data": {"modelgroups": [{"schema": {"fields": ["domain"]}, "values": {"*": 1.5}}]}}, id="plain"),
        pytest.param(
            {"skiprate": 50, "floormin": 0.5, "enforcement": {"enforcerate": 100},
             "data": {"currency": "USD", "modelgroups": [{"schema": {"fields": ["mediaType"]},
                                                          "values": {"banner": 2, "*": 1}, "modelweight": 3}]}},
            id="skip rate, weight, enforcement",
        ),
    ],
)  # fmt: skip
def test_a_kept_resolution_ends_as_a_fresh_one_for_each_skip_outcome(monkeypatch, floors):
    """The kept end of a resolution (the rules marked skipped or not, and their ext.prebid.floors JSON) is
    what a resolution kept nowhere gives, for each outcome of the skip draw; auctions with one outcome
    share it, and the memo is bounded."""
    from hbserver.floors import resolve as floors_resolve

    monkeypatch.setattr(floors_resolve, "_created_floors", {})
    monkeypatch.setattr(floors_resolve, "_finished_floors", {})
    draws = (10, 90, 10, 90)  # under the 50 % skip rate (skipped) or over it, when there is one
    kept = [resolve_floors(_request(copy.deepcopy(floors)), ACCOUNT, RATES, None, const(draw)) for draw in draws]
    monkeypatch.setattr(floors_resolve, "CREATED_FLOORS_MAX_RULES", 0)  # nothing kept from here on
    monkeypatch.setattr(floors_resolve, "_created_floors", {})
    fresh = [resolve_floors(_request(copy.deepcopy(floors)), ACCOUNT, RATES, None, const(draw)) for draw in draws]
    assert not floors_resolve._created_floors
    for got, want in zip(kept, fresh, strict=True):
        assert got.request == want.request and got.errors == want.errors
        assert got.floors == want.floors and got.skipped == want.skipped
    assert _floors(kept[0].request) is _floors(kept[2].request)
    assert kept[0].floors is kept[2].floors
    if "skiprate" in floors:
        assert [result.skipped for result in kept] == [True, False, True, False]
        assert _floors(kept[0].request)["skipped"] is True and _floors(kept[1].request)["skipped"] is False
        assert "bidfloor" not in kept[0].request["imp"][0] and kept[1].request["imp"][0]["bidfloor"] == 2

    monkeypatch.setattr(floors_resolve, "CREATED_FLOORS_MAX_RULES", 256)
    monkeypatch.setattr(floors_resolve, "CREATED_FLOORS_MAX", 3)
    for n in range(8):
        resolve_floors(_request({**floors, "floormin": n + 1}), ACCOUNT, RATES, None, const(90))
    assert len(floors_resolve._finished_floors) == 3
