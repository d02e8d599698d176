"""PBS-Java's spellings of account keys, rewritten to the keys hbserver applies (PBS-Go's names).

:func:`normalise` runs once per account load, on the account file before it is merged over
``account_defaults``; requests never see it. What it rewrites:

- kebab-case names PBS-Java accepts as ``@JsonAlias`` (``cookie-sync``, ``default-limit``, ...)
  become snake_case, where PBS-Java's tree has that key;
- blocks PBS-Java keeps elsewhere move to PBS-Go's place (``auction.price_floors`` ->
  ``price_floors``, ``privacy.gdpr`` -> ``gdpr`` with ``purposes.pN`` -> ``purposeN``, ...), and
  PBS-Java values are translated (``status: inactive`` -> ``disabled: true``, ``enforce_purpose:
  no|basic|full``, ``purpose_one_treatment_interpretation``).

When a file has both spellings, hbserver's (PBS-Go's) name wins, key by key. A PBS-Java key with
no counterpart (``privacy.gdpr.purposes.p2.eid``, ``special_features.sf2``) is left where it is,
so the key report still names it as not applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hbserver.geo.countries import alpha3
from hbserver.stores.account_keys import PBS_JAVA

Data = dict[str, Any]

# PBS-Java's whole-block moves: (source path, target path), applied in this order.
_MOVES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("auction", "debug_allow"), ("debug_allow",)),
    (("auction", "events"), ("events",)),
    (("auction", "price_floors"), ("price_floors",)),
    (("auction", "bidadjustments"), ("bidadjustments",)),
    (("auction", "privacysandbox"), ("privacy", "privacysandbox")),
    (("auction", "bid_validations"), ("validations",)),
    (("auction", "banner_cache_ttl"), ("cache_ttl", "banner")),
    (("auction", "video_cache_ttl"), ("cache_ttl", "video")),
    (("cookie_sync", "coop_sync", "default"), ("cookie_sync", "default_coop_sync")),
    (("alternate_bidder_codes",), ("alternatebiddercodes",)),
    # PBS-Go's own JSON name (the field has no json tag: Go matches "AccessAllowed" case-insensitively)
    (("gdpr", "purpose_one_treatment", "accessallowed"), ("gdpr", "purpose_one_treatment", "access_allowed")),
)

_PURPOSE_ONE = {  # PBS-Java's purpose_one_treatment_interpretation -> PBS-Go's purpose_one_treatment
    "ignore": {"enabled": False},
    "no_access_allowed": {"enabled": True, "access_allowed": False},
    "no-access-allowed": {"enabled": True, "access_allowed": False},
    "access_allowed": {"enabled": True, "access_allowed": True},
    "access-allowed": {"enabled": True, "access_allowed": True},
}
_ENFORCE_PURPOSE = {  # PBS-Java's EnforcePurpose
    "no": {"enforce_purpose": False},
    "basic": {"enforce_purpose": True, "enforce_algo": "basic"},
    "full": {"enforce_purpose": True, "enforce_algo": "full"},
}
_STATUS = {"active": False, "inactive": True}  # PBS-Java's AccountStatus -> disabled


def normalise(data: Data) -> tuple[Data, list[str]]:
    """``data`` with PBS-Java's spellings rewritten (a new dict; ``data`` is not changed) and the
    problems found (a value PBS-Java itself would refuse, e.g. ``status: "paused"``)."""
    problems: list[str] = []
    out = _snake(data, PBS_JAVA)
    for source, target in _MOVES:
        _move(out, source, target)
    _status(out, problems)
    _alternate_codes(out.get("alternatebiddercodes"))
    privacy = out.get("privacy")
    if isinstance(privacy, dict):
        if isinstance(privacy.get("gdpr"), dict):
            _merge_into(out, ("gdpr",), _gdpr(privacy["gdpr"], problems))
            _drop_if_empty(privacy, "gdpr")
        if isinstance(privacy.get("ccpa"), dict):
            _merge_into(out, ("ccpa",), _ccpa(privacy.pop("ccpa")))
    _drop_if_empty(out, "auction")
    _drop_if_empty(out, "privacy")
    return out, problems


def _snake(data: Any, tree: Any) -> Any:
    """Kebab-case keys PBS-Java's tree has in snake_case renamed (snake_case wins when both are there)."""
    if not isinstance(data, dict):
        return data
    node = tree if isinstance(tree, dict) else {}
    out: Data = {}
    for key, value in data.items():
        name = key.replace("-", "_") if isinstance(key, str) and "-" in key else key
        if name != key and (name not in node or name in data):
            name = key  # not a PBS-Java alias here, or the snake_case key is there too
        out[name] = _snake(value, node.get(name, node.get("*")))
    return out


def _get(data: Data, path: tuple[str, ...]) -> tuple[Data | None, Any]:
    node: Any = data
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or path[-1] not in node:
        return None, None
    return node, node[path[-1]]


def _merge_into(data: Data, path: tuple[str, ...], value: Any) -> None:
    """Put ``value`` at ``path``; what is already there wins (key by key where both are objects)."""
    node = data
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if child is not None:
                return  # hbserver's key holds something else: it wins
            child = node[part] = {}
        node = child
    last = path[-1]
    if last not in node:
        node[last] = value
    elif isinstance(node[last], dict) and isinstance(value, dict):
        node[last] = _deep_under(value, node[last])


def _deep_under(base: Data, over: Data) -> Data:
    out = dict(base)
    for key, value in over.items():
        out[key] = _deep_under(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) \
            else value
    return out


def _move(data: Data, source: tuple[str, ...], target: tuple[str, ...]) -> None:
    parent, value = _get(data, source)
    if parent is None:
        return
    del parent[source[-1]]
    _merge_into(data, target, value)
    if len(source) > 1:
        holder, _ = _get(data, source[:-1])
        if holder is not None:
            _drop_if_empty(holder, source[-2])


def _drop_if_empty(data: Data, key: str) -> None:
    if data.get(key) == {}:
        del data[key]


def _status(data: Data, problems: list[str]) -> None:
    if "status" not in data:
        return
    status = data.pop("status")
    if status is None:
        return
    if status not in _STATUS:
        problems.append(f"status: must be active or inactive (PBS-Java's), got {status!r}")
        return
    data.setdefault("disabled", _STATUS[status])


def _alternate_codes(block: Any) -> None:
    bidders = block.get("bidders") if isinstance(block, dict) else None
    if isinstance(bidders, dict):
        for entry in bidders.values():
            if isinstance(entry, dict) and "allowed_bidder_codes" in entry:
                codes = entry.pop("allowed_bidder_codes")
                entry.setdefault("allowedbiddercodes", codes)


def _channels(block: Data) -> None:
    channels = block.get("channel_enabled")
    if isinstance(channels, dict) and "pbjs" in channels:
        channels = dict(channels)
        pbjs = channels.pop("pbjs")
        channels.setdefault("web", pbjs)
        block["channel_enabled"] = channels


def _ccpa(block: Data) -> Data:
    _channels(block)
    return block


def _gdpr(block: Data, problems: list[str]) -> Data:
    """The PBS-Go block for PBS-Java's ``privacy.gdpr``; what has no counterpart stays in ``block``."""
    out: Data = {}
    for key in ("enabled", "channel_enabled", "basic_enforcement_vendors"):
        if key in block:
            out[key] = block.pop(key)
    _channels(out)
    interpretation = block.pop("purpose_one_treatment_interpretation", None)
    if interpretation is not None:
        if interpretation in _PURPOSE_ONE:
            out["purpose_one_treatment"] = dict(_PURPOSE_ONE[interpretation])
        else:
            problems.append("privacy.gdpr.purpose_one_treatment_interpretation: must be ignore, "
                            f"no_access_allowed or access_allowed, got {interpretation!r}")
    _numbered(block, "purposes", "p", "purpose", out, lambda v: _purpose(v, problems))
    _numbered(block, "special_features", "sf", "special_feature", out, _special_feature)
    eea = block.get("eea_countries")
    if eea is None:
        block.pop("eea_countries", None)  # null: the host's, as without the key
    elif isinstance(eea, str):
        block.pop("eea_countries")
        out["eea_countries"] = _alpha3_countries(eea)
    return out


def _alpha3_countries(text: str) -> list[str]:
    """PBS-Java's ``eea_countries``, a comma-separated text of alpha-2 codes, as hbserver's alpha-3
    list. PBS-Java's own default names ``uk`` (GBR) and codes no country has (``ic``, ``an``): a code
    without an alpha-3 is left out, as no request's ``device.geo.country`` can match it."""
    found = []
    for part in text.split(","):
        code = part.strip().upper()
        three = "GBR" if code == "UK" else alpha3(code)
        if three is not None and three not in found:
            found.append(three)
    return found


def _numbered(block: Data, name: str, stem: str, target: str, out: Data, convert: Callable[[Data], Data]) -> None:
    group = block.get(name)
    if not isinstance(group, dict):
        return
    limit = 10 if stem == "p" else 1
    for key in list(group):
        number = key[len(stem):] if isinstance(key, str) and key.startswith(stem) else ""
        if number.isdigit() and 1 <= int(number) <= limit and isinstance(group[key], dict):
            converted = convert(group[key])
            if converted:
                out[f"{target}{number}"] = converted
            if not group[key]:
                del group[key]
    _drop_if_empty(block, name)


def _eid_transition(purpose: Data) -> Any:
    """PBS-Java's ``purposes.pN.eid.activity_transition`` taken out of ``purpose`` (None: not set), for
    ``gdpr.purposeN.eid`` (PBS-Java reads p4's); the other ``eid`` keys stay (hbserver.stores.account_refusals)."""
    eid = purpose.get("eid")
    if not isinstance(eid, dict) or "activity_transition" not in eid:
        return None
    value = eid.pop("activity_transition")
    if not eid:
        del purpose["eid"]
    return value


def _purpose(purpose: Data, problems: list[str]) -> Data:
    out: Data = {}
    if "enforce_purpose" in purpose:
        value = purpose.pop("enforce_purpose")
        if value in _ENFORCE_PURPOSE:
            out.update(_ENFORCE_PURPOSE[value])
        elif value is not None:
            problems.append(f"privacy.gdpr.purposes: enforce_purpose must be no, basic or full, got {value!r}")
    for key in ("enforce_vendors", "vendor_exceptions"):
        if key in purpose:
            out[key] = purpose.pop(key)
    transition = _eid_transition(purpose)
    if transition is not None:
        out["eid"] = {"activity_transition": transition}
    return out


def _special_feature(feature: Data) -> Data:
    return {key: feature.pop(key) for key in ("enforce", "vendor_exceptions") if key in feature}
