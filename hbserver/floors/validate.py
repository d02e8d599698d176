"""Floors data checks: PBS-Go ``floors/validate.go`` (per auction, on the request's or the merged
floors) and ``floors/fetcher.go`` ``fetchAndValidate``/``validateRules`` (a provider's file).

PBS-Go refuses nothing about floors at request validation time beyond what Go's JSON decoding of
``request.ext`` refuses (a field of the wrong type: HTTP 400 "request.ext is invalid: ...");
:func:`validate_request_floors` and :func:`validate_imp_floors` are those type checks.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.config import AccountFloorFetch, AccountPriceFloors
from hbserver.floors.data import (
    FloorRules,
    FloorsData,
    FloorsDataError,
    ModelGroup,
    fold,
    go_float,
    go_strings,
    parse_floors_data,
    parsed_floor_rules,
)
from hbserver.floors.rules import SCHEMA_FIELDS

SKIP_RATE_MIN = 0
SKIP_RATE_MAX = 100
MODEL_WEIGHT_MIN = 1
MODEL_WEIGHT_MAX = 100
DATA_RATE_MIN = 0
DATA_RATE_MAX = 100


def validate_schema_dimensions(fields: tuple[str, ...]) -> str | None:
    """PBS-Go ``validateSchemaDimensions``."""
    for name in fields:
        if name not in SCHEMA_FIELDS:
            return f"Invalid schema dimension provided = '{name}' in Schema Fields = '{go_strings(fields)}'"
    return None


def validate_floor_params(floors: FloorRules) -> str | None:
    """PBS-Go ``validateFloorParams``: schema version, skip rates and floorMin."""
    data = floors.data
    if data is not None and data.floors_schema_version not in (0, 2):
        return f"Invalid FloorsSchemaVersion = '{data.floors_schema_version}', supported version 2"
    if data is not None and not SKIP_RATE_MIN <= data.skip_rate <= SKIP_RATE_MAX:
        return f"Invalid SkipRate = '{data.skip_rate}' at ext.prebid.floors.data.skiprate"
    if not SKIP_RATE_MIN <= floors.skip_rate <= SKIP_RATE_MAX:
        return f"Invalid SkipRate = '{floors.skip_rate}' at ext.prebid.floors.skiprate"
    if floors.floor_min < 0.0:
        return f"Invalid FloorMin = '{go_float(floors.floor_min)}', value should be >= 0"
    return None


def select_valid_model_groups(
    groups: tuple[ModelGroup, ...], settings: AccountPriceFloors
) -> tuple[list[ModelGroup], list[str]]:
    """PBS-Go ``selectValidFloorModelGroups``: the groups within the account's limits, and why the
    others were dropped."""
    if not groups:
        return [], ["No model group present in floors.data"]
    valid: list[ModelGroup] = []
    errors: list[str] = []
    max_dims = settings.max_schema_dims
    max_rules = settings.max_rules
    for group in groups:
        version = group.model_version
        problem = validate_schema_dimensions(group.fields)
        if problem is None and max_dims > 0 and len(group.fields) > max_dims:
            problem = (
                f"Invalid Floor Model = '{version}' due to number of schema fields = '{len(group.fields)}' "
                f"are greater than limit {max_dims}"
            )
        if problem is None and max_rules > 0 and len(group.values) > max_rules:
            problem = (
                f"Invalid Floor Model = '{version}' due to number of rules = '{len(group.values)}' "
                f"are greater than limit {max_rules}"
            )
        if problem is None and not SKIP_RATE_MIN <= group.skip_rate <= SKIP_RATE_MAX:
            problem = f"Invalid Floor Model = '{version}' due to SkipRate = '{group.skip_rate}' is out of range (1-100)"
        weight = group.model_weight
        if problem is None and weight is not None and not MODEL_WEIGHT_MIN <= weight <= MODEL_WEIGHT_MAX:
            problem = f"Invalid Floor Model = '{version}' due to ModelWeight = '{weight}' is out of range (1-100)"
        if problem is None and group.default < 0.0:
            problem = f"Invalid Floor Model = '{version}' due to Default = '{go_float(group.default)}' is less than 0"
        if problem is None:
            valid.append(group)
        else:
            errors.append(problem)
    return valid, errors


def validate_rules(fetch: AccountFloorFetch, data: FloorsData | None) -> str | None:
    """PBS-Go ``validateRules`` for a provider's file. Unlike PBS-Go, ``max_rules`` 0 means no limit
    (this project's config), and ``max_schema_dims`` (which PBS-Go ignores) is enforced with
    PBS-Java's text."""
    if data is None:
        return "empty data in floor JSON"
    if not data.model_groups:
        return "no model groups found in price floor data"
    if not SKIP_RATE_MIN <= data.skip_rate <= SKIP_RATE_MAX:
        return "skip rate should be greater than or equal to 0 and less than 100"
    rate = data.use_fetch_data_rate
    if rate is not None and not DATA_RATE_MIN <= rate <= DATA_RATE_MAX:
        return "usefetchdatarate should be greater than or equal to 0 and less than or equal to 100"
    for group in data.model_groups:
        if not group.values or (fetch.max_rules > 0 and len(group.values) > fetch.max_rules):
            return (
                "invalid number of floor rules, floor rules should be greater than zero and less than "
                "MaxRules specified in account config"
            )
        weight = group.model_weight
        if weight is not None and not MODEL_WEIGHT_MIN <= weight <= MODEL_WEIGHT_MAX:
            return "modelGroup[].modelWeight should be greater than or equal to 1 and less than 100"
        if not SKIP_RATE_MIN <= group.skip_rate <= SKIP_RATE_MAX:
            return "model group skip rate should be greater than or equal to 0 and less than 100"
        if group.default < 0:
            return "modelGroup.Default should be greater than 0"
        if fetch.max_schema_dims > 0 and len(group.fields) > fetch.max_schema_dims:
            return (
                f"Price floor schema dimensions {len(group.fields)} exceeded its maximum number {fetch.max_schema_dims}"
            )
    return None


def validate_fetched_floors(body: bytes, fetch: AccountFloorFetch) -> tuple[FloorRules | None, str | None]:
    """A provider's answer parsed and checked (PBS-Go ``fetchAndValidate`` after the size check):
    ``(rules, None)`` to cache, or ``(None, reason)`` to log. The file is PBS-Go's
    ``PriceFloorData`` (``currency``, ``modelgroups``...), returned as ``FloorRules.data``."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return None, f"Received invalid price floor json: {exc}"
    try:
        data = parse_floors_data(decoded, "data")
    except FloorsDataError as exc:
        return None, f"Received invalid price floor json: {exc}"
    problem = validate_rules(fetch, data)
    if problem is not None:
        return None, problem
    return FloorRules(data=data), None


def validate_request_floors(floors: Any, path: str = "request.ext.prebid.floors") -> str | None:
    """The first type problem in ``ext.prebid.floors`` (None if Go would decode it)."""
    try:
        parsed_floor_rules(floors, path)
    except FloorsDataError as exc:
        return str(exc)
    return None


def validate_imp_floors(floors: Any, path: str) -> str | None:
    """The first type problem in ``imp[i].ext.prebid.floors`` (PBS-Go ``ExtImpPrebidFloors``)."""
    if floors is None:
        return None
    if not isinstance(floors, dict):
        return f"{path} must be an object"
    folded = fold(floors)
    for name in ("floorrule", "floormincur"):
        value = folded.get(name)
        if value is not None and type(value) is not str:
            return f"{path}.{name} must be a string"
    for name in ("floorrulevalue", "floorvalue", "floormin"):
        value = folded.get(name)
        if value is not None and type(value) is not float and type(value) is not int:
            return f"{path}.{name} must be a number"
    return None
