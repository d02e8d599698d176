"""Prebid activity controls: account ``privacy.allowactivities`` rules (PBS-Go ``privacy/``, PBS-Java
``activity/infrastructure``), with PBS-Java's privacy modules (``privacy.modules``).

``{"syncUser": {"default": bool, "rules": [{"condition": {"componentName": [...],
"componentType": [...], "gppSid": [...], "geo": [...], "gpc": "1"}, "allow": bool},
{"privacyreg": ["iab.usgeneral"]}]}}``. Rules are tried in order and the first one that does not
abstain decides; no decision gives ``default`` (absent: allow); an activity without a plan is
allowed.

A condition rule matches when each of its conditions holds, and then gives ``allow`` (absent:
deny, as in PBS-Go; PBS-Java allows). Its conditions:
- ``componentName`` / ``componentType``: the component is in the list (case-insensitively); an
  absent or empty list matches any component;
- ``gppSid``: the request's ``regs.gpp_sid`` shares a section id with the list (PBS-Go's
  ``evaluateGPPSID``); an empty list is no condition (PBS-Go; PBS-Java never matches it). A check
  without a request (syncs) has no section ids, so such a rule does not match there;
- ``geo`` (PBS-Java): ``"COUNTRY"`` or ``"COUNTRY.REGION"`` entries, one of which must equal
  ``device.geo.country`` (and ``device.geo.region``) case-insensitively;
- ``gpc`` (PBS-Java): must equal ``regs.ext.gpc``.
Checks without a request treat ``geo`` and ``gpc`` as met (PBS-Java does so for payloads without
geo or GPC). Condition keys also take PBS-Java's spellings (``component_name``, ``gpp-sid``, ...).

A ``privacyreg`` rule (PBS-Java) hands the decision to the account's enabled privacy modules whose
code starts with an entry (``*`` ends a prefix: ``iab.*``); a module already used by an earlier
rule of the same activity is not used again. The modules' answers combine as PBS-Java's
``AndRule`` (any deny denies, else any allow allows, else the rule abstains). Without a request the
rule abstains. Modules: :mod:`hbserver.privacy.usnat`.

Activity names are any string key (syncUser, fetchBids, enrichUfpd, reportAnalytics,
transmitUfpd, transmitEids, transmitPreciseGeo, transmitTid, ...). Keys are matched
case-insensitively, as Go's JSON decoding matches struct fields; other keys are ignored.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hbserver.privacy.usnat import ModuleResult, PrivacyModuleConfigError, USNatModule, parse_modules

if TYPE_CHECKING:
    from hbserver.privacy.gpp_us import USSection
    from hbserver.privacy.regs import Regs

SYNC_USER = "syncUser"
COMPONENT_BIDDER = "bidder"

_PATH = "privacy.allowactivities"
_MODULES_PATH = "privacy.modules"

# condition keys, lower case, with PBS-Java's aliases
_NAME_KEYS = ("componentname", "component_name", "component-name")
_TYPE_KEYS = ("componenttype", "component_type", "component-type")
_SID_KEYS = ("gppsid", "gpp_sid", "gpp-sid")


class ActivityConfigError(ValueError):
    """Malformed ``privacy.allowactivities`` or ``privacy.modules``; the message names the path.

    ``section`` is the account setting at fault (``privacy.allowactivities`` or ``privacy.modules``).
    """

    def __init__(self, message: str, section: str = _PATH) -> None:
        super().__init__(message)
        self.section = section


class ActivityRequest:
    """What rule conditions and privacy modules read of one request; build it once per auction.

    Module answers are cached on it (they depend on the request, not on the component).
    """

    __slots__ = ("_cache", "country", "gpc", "gpp_sid", "region", "sections")

    def __init__(
        self,
        gpp_sid: Iterable[int] = (),
        sections: Mapping[int, USSection | None] | None = None,
        country: str | None = None,
        region: str | None = None,
        gpc: str | None = None,
    ) -> None:
        self.gpp_sid = frozenset(gpp_sid)
        self.sections: Mapping[int, USSection | None] = sections if sections is not None else {}
        self.country = country
        self.region = region
        self.gpc = gpc
        self._cache: dict[tuple[int, str], ModuleResult | bool] = {}

    @classmethod
    def from_request(cls, request: Mapping[str, Any], regs: Regs) -> ActivityRequest:
        """From a request in 2.6 places and its :func:`hbserver.privacy.regs.read_regs`."""
        device = request.get("device")
        geo = device.get("geo") if isinstance(device, dict) else None
        country = region = None
        if isinstance(geo, dict):
            country = geo.get("country") if isinstance(geo.get("country"), str) else None
            region = geo.get("region") if isinstance(geo.get("region"), str) else None
        raw_regs = request.get("regs")
        ext = raw_regs.get("ext") if isinstance(raw_regs, dict) else None
        gpc = _gpc(ext.get("gpc")) if isinstance(ext, dict) else None
        return cls(regs.gpp_sid, regs.us_sections, country, region, gpc)

    def _skipped(self, module: USNatModule) -> bool:
        """PBS-Java's ``skipRate``: decided once per request and module."""
        if not module.skip_rate:
            return False
        key = (id(module), "")
        skipped = self._cache.get(key)
        if skipped is None:
            skipped = self._cache[key] = random.randrange(100) < module.skip_rate
        return bool(skipped)

    def modules_result(self, modules: tuple[USNatModule, ...], activity: str) -> ModuleResult:
        """The modules' combined answer for ``activity`` (lower case)."""
        result = ModuleResult.ABSTAIN
        for module in modules:
            key = (id(module), activity)
            answer = self._cache.get(key)
            if answer is None:
                if self._skipped(module):
                    answer = ModuleResult.ABSTAIN
                else:
                    answer = module.result(activity, self.gpp_sid, self.sections)
                self._cache[key] = answer
            if answer == ModuleResult.DENY:
                return ModuleResult.DENY
            if answer == ModuleResult.ALLOW:
                result = ModuleResult.ALLOW
        return result


def _gpc(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


@dataclass(frozen=True, slots=True)
class _Rule:
    names: frozenset[str]  # lower case; empty = any
    types: frozenset[str]
    allow: bool
    sids: frozenset[int] = frozenset()  # empty = no condition
    geo: tuple[tuple[str, str | None], ...] | None = None  # (country, region or None), lower case
    gpc: str | None = None
    modules: tuple[USNatModule, ...] | None = None  # a privacyreg rule when set

    @property
    def uses_request(self) -> bool:
        return bool(self.sids) or self.geo is not None or self.gpc is not None or self.modules is not None


@dataclass(frozen=True, slots=True)
class _Plan:
    default: bool
    rules: tuple[_Rule, ...]


def _lower_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k.lower(): v for k, v in value.items() if isinstance(k, str)}


def _object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ActivityConfigError(f"{path}: expected an object, got {type(value).__name__}")
    return _lower_keys(value)


def _optional_bool(value: object, path: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ActivityConfigError(f"{path}: expected true or false, got {type(value).__name__}")
    return value


def _strings(value: object, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ActivityConfigError(f"{path}: expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ActivityConfigError(f"{path}[{i}]: expected a string, got {type(item).__name__}")
    return value


def _names(value: object, path: str) -> frozenset[str]:
    return frozenset(item.lower() for item in _strings(value, path))


def _pick(cond: dict[str, Any], keys: tuple[str, ...], where: str, label: str) -> tuple[object, str]:
    for key in keys:
        if key in cond:
            return cond[key], f"{where}.{key if key != keys[0] else label}"
    return None, f"{where}.{label}"


def _sids(value: object, path: str) -> frozenset[int]:
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise ActivityConfigError(f"{path}: expected a list of integers, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, int) or isinstance(item, bool):
            raise ActivityConfigError(f"{path}[{i}]: expected an integer, got {type(item).__name__}")
    return frozenset(value)


def _geo(value: object, path: str) -> tuple[tuple[str, str | None], ...] | None:
    """PBS-Java's geo codes: blank entries dropped, ``USA.`` is the country alone."""
    if value is None:
        return None
    codes = []
    for item in _strings(value, path):
        if not item.strip():
            continue
        country, dot, region = item.partition(".")
        codes.append((country.lower(), region.lower() if dot and region else None))
    return tuple(codes)


def _condition_rule(rule: dict[str, Any], where: str) -> _Rule:
    condition = rule.get("condition")
    cond = {} if condition is None else _object(condition, f"{where}.condition")
    at = f"{where}.condition"
    names, names_path = _pick(cond, _NAME_KEYS, at, "componentName")
    types, types_path = _pick(cond, _TYPE_KEYS, at, "componentType")
    sids, sids_path = _pick(cond, _SID_KEYS, at, "gppSid")
    gpc = cond.get("gpc")
    if gpc is not None and _gpc(gpc) is None:
        raise ActivityConfigError(f"{at}.gpc: expected a string, got {type(gpc).__name__}")
    return _Rule(
        names=_names(names, names_path),
        types=_names(types, types_path),
        allow=bool(_optional_bool(rule.get("allow"), f"{where}.allow")),
        sids=_sids(sids, sids_path),
        geo=_geo(cond.get("geo"), f"{at}.geo"),
        gpc=_gpc(gpc),
    )


def _modules_rule(
    patterns: object, where: str, modules: tuple[USNatModule, ...], used: set[str]
) -> _Rule | None:
    """A privacyreg rule over the enabled modules not used yet; None when it names none (it would abstain)."""
    chosen: list[USNatModule] = []
    for pattern in _strings(patterns, f"{where}.privacyreg"):
        if not pattern.strip():
            continue
        prefix = pattern.split("*", 1)[0]
        for module in modules:
            if module.code.startswith(prefix) and module.code not in used:
                used.add(module.code)
                chosen.append(module)
    if not chosen:
        return None
    return _Rule(names=frozenset(), types=frozenset(), allow=False, modules=tuple(chosen))


def _plan(raw: object, path: str, modules: tuple[USNatModule, ...]) -> _Plan:
    activity = _object(raw, path)
    default = _optional_bool(activity.get("default"), f"{path}.default")
    raw_rules = activity.get("rules")
    if raw_rules is None:
        raw_rules = []
    if not isinstance(raw_rules, list):
        raise ActivityConfigError(f"{path}.rules: expected a list, got {type(raw_rules).__name__}")
    rules = []
    used: set[str] = set()
    for i, raw_rule in enumerate(raw_rules):
        where = f"{path}.rules[{i}]"
        rule = _object(raw_rule, where)
        if "privacyreg" in rule:
            modules_rule = _modules_rule(rule["privacyreg"], where, modules, used)
            if modules_rule is not None:
                rules.append(modules_rule)
        else:
            rules.append(_condition_rule(rule, where))
    return _Plan(default=True if default is None else default, rules=tuple(rules))


def _geo_matches(codes: tuple[tuple[str, str | None], ...], request: ActivityRequest) -> bool:
    if request.country is None:
        return False
    country = request.country.lower()
    region = request.region.lower() if request.region is not None else None
    return any(c == country and (r is None or r == region) for c, r in codes)


class ActivityControl:
    """The activity plans of one account, built once and queried per component."""

    __slots__ = ("_plans", "_uses_request")

    def __init__(self, plans: Mapping[str, _Plan] | None = None) -> None:
        self._plans = dict(plans or {})
        self._uses_request = any(rule.uses_request for plan in self._plans.values() for rule in plan.rules)

    @classmethod
    def from_config(
        cls, allowactivities: Mapping[str, Any] | None, modules: list[dict[str, Any]] | None = None
    ) -> ActivityControl:
        """Build from the account's ``privacy.allowactivities`` (None or {}: allow everything) and
        ``privacy.modules``; raises ActivityConfigError."""
        try:
            enabled = parse_modules(modules)
        except PrivacyModuleConfigError as exc:
            raise ActivityConfigError(str(exc), _MODULES_PATH) from None
        if allowactivities is None:
            return cls()
        if not isinstance(allowactivities, Mapping):
            raise ActivityConfigError(f"{_PATH}: expected an object, got {type(allowactivities).__name__}")
        plans: dict[str, _Plan] = {}
        for name, raw in allowactivities.items():
            if not isinstance(name, str):
                raise ActivityConfigError(f"{_PATH}: activity names must be strings")
            if raw is not None:
                plans[name.lower()] = _plan(raw, f"{_PATH}.{name}", enabled)
        return cls(plans)

    def any(self) -> bool:
        """Whether any activity has a plan (else every check allows)."""
        return bool(self._plans)

    def governs(self, activity: str) -> bool:
        """Whether any rule or default is configured for ``activity`` (else everything is allowed)."""
        return activity.lower() in self._plans

    def uses_request(self) -> bool:
        """Whether some rule reads the request (gppSid, geo, gpc, privacyreg): else pass no request."""
        return self._uses_request

    def allowed(
        self, activity: str, component_type: str, component_name: str, *, request: ActivityRequest | None = None
    ) -> bool:
        plans = self._plans
        if not plans:  # the usual account: no controls, nothing to lower-case
            return True
        key = activity.lower()
        plan = plans.get(key)
        if plan is None:
            return True
        ctype = component_type.lower()
        cname = component_name.lower()
        for rule in plan.rules:
            if rule.modules is not None:
                if request is None:
                    continue
                result = request.modules_result(rule.modules, key)
                if result == ModuleResult.ABSTAIN:
                    continue
                return result == ModuleResult.ALLOW
            if rule.names and cname not in rule.names:
                continue
            if rule.types and ctype not in rule.types:
                continue
            if rule.sids and (request is None or rule.sids.isdisjoint(request.gpp_sid)):
                continue
            if request is not None:
                if rule.geo is not None and not _geo_matches(rule.geo, request):
                    continue
                if rule.gpc is not None and rule.gpc != request.gpc:
                    continue
            return rule.allow
        return plan.default
