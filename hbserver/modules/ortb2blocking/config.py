"""The account's ``hooks.modules.prebid.ortb2blocking`` object, read the way PBS-Go's ``config.go`` reads it.

Each field is known by its dotted name (``badv.blocked_adomain``): :attr:`Config.values` holds the
plain values, :attr:`Config.overrides` the ``action_overrides`` of the same field. Unknown keys
are ignored and ``null`` is the same as absent (Go's JSON decoding); a value of the wrong type is
an error ``failed to parse config: <key>: ...``. The conditions of an override are checked only
when the hooks use them (PBS-Go reports them then, in the hook's own words).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

BOOL, STRS, INTS, INT = "bool", "strs", "ints", "int"

# attribute -> field -> kind; every field but category_taxonomy may also have action_overrides
SCHEMA: dict[str, dict[str, str]] = {
    "badv": {
        "enforce_blocks": BOOL,
        "block_unknown_adomain": BOOL,
        "blocked_adomain": STRS,
        "allowed_adomain_for_deals": STRS,
    },
    "bcat": {
        "enforce_blocks": BOOL,
        "block_unknown_adv_cat": BOOL,
        "blocked_adv_cat": STRS,
        "allowed_adv_cat_for_deals": STRS,
        "category_taxonomy": INT,
    },
    "bapp": {"enforce_blocks": BOOL, "blocked_app": STRS, "allowed_app_for_deals": STRS},
    "btype": {"blocked_banner_type": INTS},
    "battr": {
        "enforce_blocks": BOOL,
        "blocked_banner_attr": INTS,
        "blocked_video_attr": INTS,
        "blocked_audio_attr": INTS,
        "allowed_banner_attr_for_deals": INTS,
        "allowed_video_attr_for_deals": INTS,
        "allowed_audio_attr_for_deals": INTS,
    },
}
_DEFAULTS: dict[str, Any] = {BOOL: False, STRS: (), INTS: (), INT: 0}
_NOT_OVERRIDABLE = frozenset({"bcat.category_taxonomy"})
ENFORCE_FIELDS = ("badv.enforce_blocks", "bcat.enforce_blocks", "bapp.enforce_blocks", "battr.enforce_blocks")


@dataclass(frozen=True, slots=True)
class Conditions:
    """``None`` is an absent (or null) list, which matches everything; ``()`` matches nothing."""

    bidders: tuple[str, ...] | None = None  # lower-cased (PBS-Go compares bidders case-insensitively)
    media_types: tuple[str, ...] | None = None
    deal_ids: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Override:
    """An override's value: ``true``/``false``, or a list whose strings are names and numbers ids."""

    is_active: bool = False
    ids: tuple[int, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ActionOverride:
    conditions: Conditions
    override: Override


class Config:
    """Every field's value (its zero value when the account gave none) and overrides (``()``);
    ``memo`` holds what the hooks derive from them (see ``plans``)."""

    __slots__ = ("enforces", "memo", "overrides", "per_bidder", "values")

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        overrides: Mapping[str, tuple[ActionOverride, ...]] | None = None,
    ) -> None:
        self.values: dict[str, Any] = {**_ZERO_VALUES, **(values or {})}
        self.overrides: dict[str, tuple[ActionOverride, ...]] = {**_NO_OVERRIDES, **(overrides or {})}
        # whether a bid can be checked at all (an enforce_blocks on, or overridden)
        self.enforces = any(self.values[name] or self.overrides[name] for name in ENFORCE_FIELDS)
        # whether an override can make what a bidder's bids are checked against its own (else every
        # bidder's, and every media type's, are the same)
        self.per_bidder = any(self.overrides.values())
        self.memo: dict[Hashable, Any] = {}

    def value(self, name: str) -> Any:
        """The field ``name`` (``"badv.blocked_adomain"``)."""
        return self.values[name]

    def overrides_of(self, name: str) -> tuple[ActionOverride, ...]:
        return self.overrides[name]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and (self.values, self.overrides) == (other.values, other.overrides)

    __hash__ = None  # type: ignore[assignment]


_ZERO_VALUES = {
    f"{attribute}.{key}": _DEFAULTS[kind] for attribute, keys in SCHEMA.items() for key, kind in keys.items()
}
_NO_OVERRIDES: dict[str, tuple[ActionOverride, ...]] = {name: () for name in _ZERO_VALUES}
EMPTY = Config()


def _fail(path: str, what: str) -> ValueError:
    return ValueError(f"failed to parse config: {path}: {what}")


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(path, "expected an object")
    return value


def read_value(value: Any, kind: str, path: str) -> Any:
    """One field of ``kind`` (``None`` when null or absent); ValueError naming ``path`` otherwise."""
    if value is None:
        return None
    if kind == BOOL:
        if not isinstance(value, bool):
            raise _fail(path, "expected true or false")
        return value
    if kind == INT:
        if not _is_int(value):
            raise _fail(path, "expected an integer")
        return value
    if not isinstance(value, list):
        raise _fail(path, "expected a list")
    want_str = kind == STRS
    for index, item in enumerate(value):
        if want_str and not isinstance(item, str):
            raise _fail(f"{path}[{index}]", "expected a string")
        if not want_str and not _is_int(item):
            raise _fail(f"{path}[{index}]", "expected an integer")
    return tuple(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_override(value: Any) -> Override:
    """PBS-Go's ``Override.UnmarshalJSON``: a bool, or a list of names and (truncated) numbers;
    anything else is an empty override."""
    if isinstance(value, bool):
        return Override(is_active=value)
    if not isinstance(value, list):
        return Override()
    ids: list[int] = []
    names: list[str] = []
    for item in value:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            ids.append(int(item))
    return Override(ids=tuple(ids), names=tuple(names))


def _read_conditions(value: Any, path: str) -> Conditions:
    raw = _object(value, path)
    bidders = read_value(raw.get("bidders"), STRS, path + ".bidders")
    media_types = read_value(raw.get("media_types"), STRS, path + ".media_types")
    deal_ids = read_value(raw.get("deal_ids"), STRS, path + ".deal_ids")
    if bidders is not None:
        bidders = tuple(bidder.lower() for bidder in bidders)
    return Conditions(bidders=bidders, media_types=media_types, deal_ids=deal_ids)


def _read_action_overrides(value: Any, path: str) -> tuple[ActionOverride, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(path, "expected a list")
    found = []
    for index, item in enumerate(value):
        raw = _object(item, f"{path}[{index}]")
        conditions = _read_conditions(raw.get("conditions"), f"{path}[{index}].conditions")
        found.append(ActionOverride(conditions, read_override(raw.get("override"))))
    return tuple(found)


def parse(raw: Mapping[str, Any]) -> Config:
    """The account's module object as a :class:`Config` (ValueError on a value of the wrong type)."""
    attributes = _object(_object(raw, "config").get("attributes"), "attributes")
    values: dict[str, Any] = {}
    overrides: dict[str, tuple[ActionOverride, ...]] = {}
    for attribute, fields in SCHEMA.items():
        section = _object(attributes.get(attribute), f"attributes.{attribute}")
        if not section:
            continue
        actions = _object(section.get("action_overrides"), f"attributes.{attribute}.action_overrides")
        for key, kind in fields.items():
            name = f"{attribute}.{key}"
            value = read_value(section.get(key), kind, "attributes." + name)
            if value is not None:
                values[name] = value
            if name not in _NOT_OVERRIDABLE:
                found = _read_action_overrides(actions.get(key), f"attributes.{attribute}.action_overrides.{key}")
                if found:
                    overrides[name] = found
    return Config(values=values, overrides=overrides)


class ConfigCache:
    """Parsed account configs by the identity of their object, at most ``size`` of them (the oldest
    go first). An entry keeps its object alive, so its id cannot be reused while it is cached;
    the object is assumed not to change once an account holds it."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: dict[int, tuple[Mapping[str, Any], Config | str]] = {}

    def get(self, raw: Mapping[str, Any]) -> Config:
        """The parsed ``raw`` (ValueError, each time, if it does not parse)."""
        entry = self._entries.get(id(raw))
        if entry is not None and entry[0] is raw and type(entry[1]) is Config:  # the common case
            return entry[1]
        if entry is None or entry[0] is not raw:
            try:
                parsed: Config | str = parse(raw)
            except ValueError as exc:
                parsed = str(exc)
            if len(self._entries) >= self._size:
                try:  # the oldest goes (another thread may have taken it first)
                    del self._entries[next(iter(self._entries))]
                except (KeyError, RuntimeError, StopIteration):
                    pass
            entry = (raw, parsed)
            self._entries[id(raw)] = entry
        if isinstance(entry[1], str):
            raise ValueError(entry[1])
        return entry[1]
