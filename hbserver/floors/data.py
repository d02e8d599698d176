"""Price floors data (PBS-Go ``openrtb_ext/floors.go``): the parsed, immutable form of
``ext.prebid.floors`` and of a floors provider's file, and the JSON PBS-Go writes back.

Parsing follows Go's ``encoding/json`` into PBS-Go's structs: object keys match the field names
case-insensitively (Prebid.js sends ``floorMin``, ``modelGroups``, ``skipRate``...; the last of two
spellings wins), unknown keys are ignored, ``null`` is "not set", and a value of the wrong type
(a fraction where Go has an ``int``, a string for a number...) is an error naming the field.

Everything here is frozen and shared: a provider's file is parsed once per fetch and read by many
auctions. A model group lower-cases and checks its rule keys once (PBS-Go
``validateFloorRulesAndLowerValidRuleKey``, which PBS-Go repeats per auction), so the dicts it
holds must be treated as read-only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

# openrtb_ext fetch statuses (PriceFloorRules.FetchStatus)
FETCH_SUCCESS = "success"
FETCH_TIMEOUT = "timeout"
FETCH_ERROR = "error"
FETCH_INPROGRESS = "inprogress"
FETCH_NONE = "none"

# openrtb_ext floor locations (PriceFloorRules.PriceFloorLocation)
LOCATION_NO_DATA = "noData"
LOCATION_REQUEST = "request"
LOCATION_FETCH = "fetch"

DEFAULT_CURRENCY = "USD"
DEFAULT_DELIMITER = "|"
CATCH_ALL = "*"

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class FloorsDataError(ValueError):
    """Floors JSON of the wrong shape; the text names the field (``<path> must be ...``)."""


def go_round(value: float) -> float:
    """Go's ``math.Round``: half away from zero, exact for every float."""
    if not math.isfinite(value):
        return value
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return float(whole)


def round4(value: float) -> float:
    """PBS-Go ``roundToFourDecimals``."""
    return go_round(value * 10000) / 10000


def go_float(value: float) -> str:
    """A float as Go's ``%v`` prints it (shortest digits, exponent form outside [1e-4, 1e6))."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    assert isinstance(exponent, int)
    point = len(digits) + exponent  # digits[:point] are the integer part
    prefix = "-" if sign else ""
    sci = point - 1
    if sci < -4 or sci >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if sci < 0 else '+'}{abs(sci):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def go_strings(values: tuple[str, ...] | list[str]) -> str:
    """A string slice as Go's ``%v`` prints it: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


@dataclass(frozen=True, slots=True)
class Enforcement:
    """``ext.prebid.floors.enforcement`` (PBS-Go ``PriceFloorEnforcement``); None = not set."""

    enforce_js: bool | None = None
    enforce_pbs: bool | None = None
    floor_deals: bool | None = None
    bid_adjustment: bool | None = None
    enforce_rate: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.enforce_js is not None:
            out["enforcejs"] = self.enforce_js
        if self.enforce_pbs is not None:
            out["enforcepbs"] = self.enforce_pbs
        if self.floor_deals is not None:
            out["floordeals"] = self.floor_deals
        if self.bid_adjustment is not None:
            out["bidadjustment"] = self.bid_adjustment
        if self.enforce_rate:
            out["enforcerate"] = self.enforce_rate
        return out


@dataclass(frozen=True, slots=True)
class ModelGroup:
    """One ``data.modelgroups[]`` entry (PBS-Go ``PriceFloorModelGroup``).

    ``values`` is the rule table as given; ``rules`` the same with keys lower-cased and the keys
    whose field count differs from the schema dropped, each drop an error in ``rule_errors``.
    """

    currency: str = ""
    model_weight: int | None = None
    model_version: str = ""
    skip_rate: int = 0
    fields: tuple[str, ...] = ()
    delimiter: str = ""  # as given; "" means DEFAULT_DELIMITER
    values: Mapping[str, float] = field(default_factory=dict)
    default: float = 0.0
    rules: Mapping[str, float] = field(init=False, repr=False, compare=False)
    rule_errors: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _split: dict[str, Any] = field(init=False, repr=False, compare=False)  # lazily: rule key -> parts

    def __post_init__(self) -> None:
        delimiter = self.delimiter or DEFAULT_DELIMITER
        count = len(self.fields)
        rules: dict[str, float] = {}
        errors: list[str] = []
        renamed: list[tuple[str, float]] = []
        for key, value in self.values.items():
            if len(key.split(delimiter)) != count:
                errors.append(f"Invalid Floor Rule = '{key}' for Schema Fields = '{go_strings(self.fields)}'")
                continue
            lower = key.lower()
            if lower == key:
                rules[key] = value
            else:
                renamed.append((lower, value))
        # PBS-Go renames a key that is not lower case in place: its value replaces a lower-case twin's
        for lower, value in renamed:
            rules[lower] = value
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "rule_errors", tuple(errors))
        object.__setattr__(self, "_split", {})

    @property
    def rule_delimiter(self) -> str:
        return self.delimiter or DEFAULT_DELIMITER

    def split_rules(self) -> list[tuple[str, list[str]]]:
        """Each rule key with its fields, split once and kept (large schemas only need it)."""
        cached = self._split.get("rules")
        if cached is None:
            delimiter = self.rule_delimiter
            cached = [(key, key.split(delimiter)) for key in self.rules]
            self._split["rules"] = cached
        return cached

    def to_json(self, values: Mapping[str, float], weight: int | None) -> dict[str, Any]:
        """The group as PBS-Go writes it, with ``values`` and ``modelweight`` as the caller chose."""
        out: dict[str, Any] = {}
        if self.currency:
            out["currency"] = self.currency
        if weight is not None:
            out["modelweight"] = weight
        if self.model_version:
            out["modelversion"] = self.model_version
        if self.skip_rate:
            out["skiprate"] = self.skip_rate
        schema: dict[str, Any] = {}
        if self.fields:
            schema["fields"] = list(self.fields)
        if self.delimiter:
            schema["delimiter"] = self.delimiter
        out["schema"] = schema  # a struct: Go writes it even when empty
        if values:
            out["values"] = dict(values)
        if self.default:
            out["default"] = self.default
        return out


@dataclass(frozen=True, slots=True)
class FloorsData:
    """``ext.prebid.floors.data`` or a provider's file (PBS-Go ``PriceFloorData``)."""

    currency: str = ""
    skip_rate: int = 0
    floors_schema_version: int = 0
    model_timestamp: int = 0
    model_groups: tuple[ModelGroup, ...] = ()
    floor_provider: str = ""
    use_fetch_data_rate: int | None = None


@dataclass(frozen=True, slots=True)
class FloorRules:
    """``ext.prebid.floors`` (PBS-Go ``PriceFloorRules``). ``location_url`` None = no ``floorendpoint``."""

    floor_min: float = 0.0
    floor_min_cur: str = ""
    skip_rate: int = 0
    location_url: str | None = None
    data: FloorsData | None = None
    enforcement: Enforcement | None = None
    enabled: bool | None = None
    skipped: bool | None = None
    floor_provider: str = ""
    fetch_status: str = ""
    location: str = ""


_RULES_FIELDS = tuple(FloorRules.__dataclass_fields__)
_DATA_FIELDS = tuple(FloorsData.__dataclass_fields__)


def rules_with(rules: FloorRules, **changes: Any) -> FloorRules:
    """A copy of ``rules`` with ``changes`` (``dataclasses.replace`` without its per-call cost)."""
    values = {name: getattr(rules, name) for name in _RULES_FIELDS}
    values.update(changes)
    return FloorRules(**values)


def data_with(data: FloorsData, **changes: Any) -> FloorsData:
    """A copy of ``data`` with ``changes``."""
    values = {name: getattr(data, name) for name in _DATA_FIELDS}
    values.update(changes)
    return FloorsData(**values)


@dataclass(frozen=True, slots=True)
class Fetched:
    """What the floors fetcher has for an account: its parsed data (PBS-Go returns the provider's
    file as ``PriceFloorRules.data``) and a ``FETCH_*`` status; data only with FETCH_SUCCESS."""

    rules: FloorRules | None
    status: str = FETCH_NONE


# ---- parsing: Go's encoding/json rules for PBS-Go's structs --------------------------------------


def fold(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object's keys lower-cased (Go matches struct fields case-insensitively; last key wins)."""
    return {key.lower(): value for key, value in obj.items()}


def _object(value: Any, path: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FloorsDataError(f"{path} must be an object")
    return fold(value)


def _int(obj: dict[str, Any], name: str, path: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if type(value) is not int or not _INT64_MIN <= value <= _INT64_MAX:
        raise FloorsDataError(f"{path}.{name} must be an integer")
    return value


def _number(obj: dict[str, Any], name: str, path: str) -> float:
    value = obj.get(name)
    if value is None:
        return 0.0
    if type(value) is not float and type(value) is not int:
        raise FloorsDataError(f"{path}.{name} must be a number")
    return float(value)


def _string(obj: dict[str, Any], name: str, path: str) -> str:
    value = obj.get(name)
    if value is None:
        return ""
    if type(value) is not str:
        raise FloorsDataError(f"{path}.{name} must be a string")
    return value


def _bool(obj: dict[str, Any], name: str, path: str) -> bool | None:
    value = obj.get(name)
    if value is None or type(value) is bool:
        return value
    raise FloorsDataError(f"{path}.{name} must be a boolean")


def _values(value: Any, path: str) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FloorsDataError(f"{path} must be an object")
    out: dict[str, float] = {}
    for key, number in value.items():
        if number is None:
            out[key] = 0.0  # Go stores the zero value for a null map element
        elif type(number) is float or type(number) is int:
            out[key] = float(number)
        else:
            raise FloorsDataError(f"{path}.{key} must be a number")
    return out


def parse_model_group(value: Any, path: str) -> ModelGroup:
    obj = _object(value, path)
    if obj is None:
        return ModelGroup()
    fields: tuple[str, ...] = ()
    delimiter = ""
    schema = _object(obj.get("schema"), f"{path}.schema")
    if schema is not None:
        raw_fields = schema.get("fields")
        if raw_fields is not None:
            if not isinstance(raw_fields, list) or not all(type(f) is str for f in raw_fields):
                raise FloorsDataError(f"{path}.schema.fields must be an array of strings")
            fields = tuple(raw_fields)
        delimiter = _string(schema, "delimiter", f"{path}.schema")
    return ModelGroup(
        currency=_string(obj, "currency", path),
        model_weight=_int(obj, "modelweight", path),
        model_version=_string(obj, "modelversion", path),
        skip_rate=_int(obj, "skiprate", path) or 0,
        fields=fields,
        delimiter=delimiter,
        values=_values(obj.get("values"), f"{path}.values"),
        default=_number(obj, "default", path),
    )


def parse_floors_data(value: Any, path: str) -> FloorsData | None:
    """``PriceFloorData`` from decoded JSON (None for ``null``); raises FloorsDataError."""
    obj = _object(value, path)
    if obj is None:
        return None
    groups_value = obj.get("modelgroups")
    groups: tuple[ModelGroup, ...] = ()
    if groups_value is not None:
        if not isinstance(groups_value, list):
            raise FloorsDataError(f"{path}.modelgroups must be an array")
        groups = tuple(parse_model_group(g, f"{path}.modelgroups[{i}]") for i, g in enumerate(groups_value))
    return FloorsData(
        currency=_string(obj, "currency", path),
        skip_rate=_int(obj, "skiprate", path) or 0,
        floors_schema_version=_int(obj, "floorsschemaversion", path) or 0,
        model_timestamp=_int(obj, "modeltimestamp", path) or 0,
        model_groups=groups,
        floor_provider=_string(obj, "floorprovider", path),
        use_fetch_data_rate=_int(obj, "usefetchdatarate", path),
    )


def parse_enforcement(value: Any, path: str) -> Enforcement | None:
    obj = _object(value, path)
    if obj is None:
        return None
    return Enforcement(
        enforce_js=_bool(obj, "enforcejs", path),
        enforce_pbs=_bool(obj, "enforcepbs", path),
        floor_deals=_bool(obj, "floordeals", path),
        bid_adjustment=_bool(obj, "bidadjustment", path),
        enforce_rate=_int(obj, "enforcerate", path) or 0,
    )


def parse_floor_rules(value: Any, path: str = "request.ext.prebid.floors") -> FloorRules | None:
    """``PriceFloorRules`` from decoded JSON (None for ``null``); raises FloorsDataError."""
    obj = _object(value, path)
    if obj is None:
        return None
    location_url = None
    endpoint = _object(obj.get("floorendpoint"), f"{path}.floorendpoint")
    if endpoint is not None:
        location_url = _string(endpoint, "url", f"{path}.floorendpoint")
    return FloorRules(
        floor_min=_number(obj, "floormin", path),
        floor_min_cur=_string(obj, "floormincur", path),
        skip_rate=_int(obj, "skiprate", path) or 0,
        location_url=location_url,
        data=parse_floors_data(obj.get("data"), f"{path}.data"),
        enforcement=parse_enforcement(obj.get("enforcement"), f"{path}.enforcement"),
        enabled=_bool(obj, "enabled", path),
        skipped=_bool(obj, "skipped", path),
        floor_provider=_string(obj, "floorprovider", path),
        fetch_status=_string(obj, "fetchstatus", path),
        location=_string(obj, "location", path),
    )


# Requests repeat the same ext.prebid.floors (a publisher's Prebid.js config, an AMP stored
# request): each distinct JSON text is parsed once. The parse is immutable, so sharing it is safe.
# Bounded in entries and in the size of each text (a few MB at most whatever requests send).
PARSED_FLOORS_MAX = 512
PARSED_FLOORS_MAX_BYTES = 8192
_parsed_floors: dict[tuple[str, bytes], FloorRules | str | None] = {}


def parsed_floor_rules(value: Any, path: str = "request.ext.prebid.floors") -> FloorRules | None:
    """:func:`parse_floor_rules` memoised on ``value``'s JSON text (at most :data:`PARSED_FLOORS_MAX`
    texts of up to :data:`PARSED_FLOORS_MAX_BYTES`; the oldest goes first); a refusal is remembered
    too and raised again as FloorsDataError."""
    try:
        text = orjson.dumps(value)
    except TypeError:  # not JSON (a caller's own object): parse it as it is
        return parse_floor_rules(value, path)
    if len(text) > PARSED_FLOORS_MAX_BYTES:
        return parse_floor_rules(value, path)
    key = (path, text)
    found = _parsed_floors.get(key, _parsed_floors)
    if found is _parsed_floors:
        try:
            found = parse_floor_rules(value, path)
        except FloorsDataError as exc:
            found = str(exc)
        if len(_parsed_floors) >= PARSED_FLOORS_MAX:
            del _parsed_floors[next(iter(_parsed_floors))]
        _parsed_floors[key] = found
    if type(found) is str:
        raise FloorsDataError(found)
    return found  # type: ignore[return-value]


def floor_rules_json(
    rules: FloorRules,
    group_values: Mapping[str, float] | None = None,
    group_weight: int | None = None,
) -> dict[str, Any]:
    """``rules`` as PBS-Go's ``updateFloorsInRequest`` writes ``ext.prebid.floors`` (its JSON names,
    ``omitempty``). The model groups (PBS-Go keeps one) are written with ``group_values`` (the rule
    table as it stands after resolution) and ``group_weight``."""
    out: dict[str, Any] = {}
    if rules.floor_min:
        out["floormin"] = rules.floor_min
    if rules.floor_min_cur:
        out["floormincur"] = rules.floor_min_cur
    if rules.skip_rate:
        out["skiprate"] = rules.skip_rate
    if rules.location_url is not None:
        out["floorendpoint"] = {"url": rules.location_url} if rules.location_url else {}
    data = rules.data
    if data is not None:
        data_out: dict[str, Any] = {}
        if data.currency:
            data_out["currency"] = data.currency
        if data.skip_rate:
            data_out["skiprate"] = data.skip_rate
        if data.floors_schema_version:
            data_out["floorsschemaversion"] = data.floors_schema_version
        if data.model_timestamp:
            data_out["modeltimestamp"] = data.model_timestamp
        if data.model_groups:
            data_out["modelgroups"] = [
                g.to_json(g.values if group_values is None else group_values, group_weight) for g in data.model_groups
            ]
        if data.floor_provider:
            data_out["floorprovider"] = data.floor_provider
        if data.use_fetch_data_rate is not None:
            data_out["usefetchdatarate"] = data.use_fetch_data_rate
        out["data"] = data_out
    if rules.enforcement is not None:
        out["enforcement"] = rules.enforcement.to_json()
    if rules.enabled is not None:
        out["enabled"] = rules.enabled
    if rules.skipped is not None:
        out["skipped"] = rules.skipped
    if rules.floor_provider:
        out["floorprovider"] = rules.floor_provider
    if rules.fetch_status:
        out["fetchstatus"] = rules.fetch_status
    if rules.location:
        out["location"] = rules.location
    return out
