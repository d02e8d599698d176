"""Floor rule selection (PBS-Go ``floors/rule.go``): the request's value for each schema field,
and the most specific rule key matching them.

PBS-Go builds every combination of the request's values with ``*`` wildcards, from most specific
(fewest wildcards; among equals, exact values on the left first) to ``*|*|...``, and takes the first
key present in the rule table. Here the combination order for ``n`` fields is computed once (with
PBS-Go's sort weights, 64-bit overflow included: from 6 fields on its weights wrap or vanish and the
order is its generation order), and for large schemas the rule table is scanned instead, each rule
ranked by the one combination that can equal it: the same answer without 2**n keys per imp.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from hbserver.floors.data import CATCH_ALL, ModelGroup

SITE_DOMAIN = "siteDomain"
PUB_DOMAIN = "pubDomain"
DOMAIN = "domain"
BUNDLE = "bundle"
CHANNEL = "channel"
MEDIA_TYPE = "mediaType"
SIZE = "size"
GPT_SLOT = "gptSlot"
AD_UNIT_CODE = "adUnitCode"
COUNTRY = "country"
DEVICE_TYPE = "deviceType"

# PBS-Go validSchemaDimensions (case-sensitive)
SCHEMA_FIELDS = frozenset(
    {SITE_DOMAIN, PUB_DOMAIN, DOMAIN, BUNDLE, CHANNEL, MEDIA_TYPE, SIZE, GPT_SLOT, AD_UNIT_CODE, COUNTRY, DEVICE_TYPE}
)

# The fields whose values come from who is asking and from which page (device.ua, site.domain), not
# from the stored request: a call plan, built on placeholders for those, cannot serve rules on them.
VISITOR_FIELDS = frozenset({DEVICE_TYPE, DOMAIN, SITE_DOMAIN})

_MOBILE = re.compile(r"(?i)Phone|iPhone|Android.*Mobile|Mobile.*Android")
_TABLET = re.compile(r"(?i)tablet|iPad|touch.*Windows NT|Windows NT.*touch|Android")

# Up to this many fields the combinations are tried in order; beyond, the rule table is scanned.
_MAX_COMBINATION_FIELDS = 6


def _dict(value: Any) -> dict[str, Any] | None:
    return value if type(value) is dict else None


def _str(obj: dict[str, Any] | None, key: str) -> str:
    if obj is None:
        return ""
    value = obj.get(key)
    return value if type(value) is str else ""


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if type(value) is int else 0


def floors_read_visitor(request: Mapping[str, Any]) -> bool:
    """Whether the request's ``ext.prebid.floors`` has a model group whose schema names one of
    :data:`VISITOR_FIELDS` (or a shape that cannot be read, to be safe)."""
    ext = _dict(request.get("ext"))
    prebid = _dict(ext.get("prebid")) if ext is not None else None
    floors = prebid.get("floors") if prebid is not None else None
    if floors is None:
        return False
    data = _dict(floors.get("data")) if type(floors) is dict else None
    if data is None:
        return type(floors) is not dict or floors.get("data") is not None
    groups = data.get("modelgroups")
    if not isinstance(groups, list):
        return groups is not None
    for group in groups:
        schema = _dict(group.get("schema")) if type(group) is dict else None
        fields = schema.get("fields") if schema is not None else None
        if not isinstance(fields, list) or not VISITOR_FIELDS.isdisjoint(f for f in fields if type(f) is str):
            return True
    return False


# ---- request-level values ------------------------------------------------------------------------


def domain_value(request: Mapping[str, Any]) -> str:
    """``domain``: site.domain, else site.publisher.domain; app the same when there is no site."""
    site = _dict(request.get("site"))
    holder = site if site is not None else _dict(request.get("app"))
    if holder is None:
        return CATCH_ALL
    return _str(holder, "domain") or _str(_dict(holder.get("publisher")), "domain") or CATCH_ALL


def site_domain_value(request: Mapping[str, Any]) -> str:
    """``siteDomain``: site.domain, else app.domain."""
    return _str(_dict(request.get("site")), "domain") or _str(_dict(request.get("app")), "domain") or CATCH_ALL


def pub_domain_value(request: Mapping[str, Any]) -> str:
    """``pubDomain``: site.publisher.domain, else app.publisher.domain."""
    for key in ("site", "app"):
        holder = _dict(request.get(key))
        if holder is not None:
            domain = _str(_dict(holder.get("publisher")), "domain")
            if domain:
                return domain
    return CATCH_ALL


def bundle_value(request: Mapping[str, Any]) -> str:
    return _str(_dict(request.get("app")), "bundle") or CATCH_ALL


def country_value(request: Mapping[str, Any]) -> str:
    """``country``: device.geo.country; PBS-Go takes it as is (even "") once device.geo exists."""
    geo = _dict((_dict(request.get("device")) or {}).get("geo"))
    return CATCH_ALL if geo is None else _str(geo, "country")


def device_type_value(request: Mapping[str, Any]) -> str:
    """``deviceType``: phone, tablet or desktop from device.ua (PBS-Go's two patterns)."""
    ua = _str(_dict(request.get("device")), "ua")
    if not ua:
        return CATCH_ALL
    if _MOBILE.search(ua):
        return "phone"
    if _TABLET.search(ua):
        return "tablet"
    return "desktop"


def channel_value(request: Mapping[str, Any]) -> str:
    """``channel``: ext.prebid.channel.name (as is, once the channel object exists)."""
    prebid = _dict((_dict(request.get("ext")) or {}).get("prebid"))
    channel = _dict(prebid.get("channel")) if prebid is not None else None
    return CATCH_ALL if channel is None else _str(channel, "name")


# ---- imp-level values ----------------------------------------------------------------------------


def media_type_value(imp: Mapping[str, Any]) -> str:
    """``mediaType``: banner, video (placement 1), video-outstream, audio or native; * for several."""
    value = CATCH_ALL
    count = 0
    if imp.get("banner") is not None:
        count += 1
        value = "banner"
    video = imp.get("video")
    if video is not None:
        count += 1
        value = "video" if type(video) is dict and video.get("placement") == 1 else "video-outstream"
    if imp.get("audio") is not None:
        count += 1
        value = "audio"
    if imp.get("native") is not None:
        count += 1
        value = "native"
    return CATCH_ALL if count > 1 else value


def size_value(imp: Mapping[str, Any]) -> str:
    """``size``: WxH of the banner's only format (or banner w/h), else of the video."""
    width = height = 0
    banner = imp.get("banner")
    if banner is not None:
        banner = _dict(banner) or {}
        formats = banner.get("format")
        if type(formats) is list and formats:
            if len(formats) == 1:
                only = _dict(formats[0]) or {}
                width, height = _int(only, "w"), _int(only, "h")
        elif banner.get("w") is not None and banner.get("h") is not None:
            width, height = _int(banner, "w"), _int(banner, "h")
    else:
        video = _dict(imp.get("video"))
        if video is not None:
            width, height = _int(video, "w"), _int(video, "h")
    if width != 0 and height != 0:
        return f"{width}x{height}"
    return CATCH_ALL


def gpt_slot_value(imp: Mapping[str, Any]) -> str:
    """``gptSlot``: imp.ext.data.adserver.adslot when the ad server is "gam", else ext.data.pbadslot."""
    data = _dict((_dict(imp.get("ext")) or {}).get("data"))
    if data is None:
        return CATCH_ALL
    adserver = _dict(data.get("adserver"))
    if adserver is not None and _str(adserver, "name") == "gam":
        return _str(adserver, "adslot") or CATCH_ALL
    return _str(data, "pbadslot") or CATCH_ALL


def ad_unit_code_value(imp: Mapping[str, Any]) -> str:
    """``adUnitCode``: imp.ext.gpid, imp.tagid, imp.ext.data.pbadslot, imp.ext.prebid.storedrequest.id."""
    ext = _dict(imp.get("ext"))
    gpid = _str(ext, "gpid")
    if gpid:
        return gpid
    tagid = imp.get("tagid")
    if type(tagid) is str and tagid:
        return tagid
    if ext is not None:
        pbadslot = _str(_dict(ext.get("data")), "pbadslot")
        if pbadslot:
            return pbadslot
        prebid = _dict(ext.get("prebid"))
        if prebid is not None:
            stored = _str(_dict(prebid.get("storedrequest")), "id")
            if stored:
                return stored
    return CATCH_ALL


_REQUEST_FIELDS = {
    DOMAIN: domain_value,
    SITE_DOMAIN: site_domain_value,
    PUB_DOMAIN: pub_domain_value,
    BUNDLE: bundle_value,
    COUNTRY: country_value,
    DEVICE_TYPE: device_type_value,
    CHANNEL: channel_value,
}
_IMP_FIELDS = {
    MEDIA_TYPE: media_type_value,
    SIZE: size_value,
    GPT_SLOT: gpt_slot_value,
    AD_UNIT_CODE: ad_unit_code_value,
}


class RuleValues:
    """The request's value for each schema field of a model group (PBS-Go ``createRuleKey``); the
    request-level ones are computed once per request."""

    __slots__ = ("_fields", "_request", "_request_values")

    def __init__(self, fields: Sequence[str], request: Mapping[str, Any]) -> None:
        self._fields = tuple(fields)
        self._request = request
        self._request_values: dict[str, str] = {}

    def for_imp(self, imp: Mapping[str, Any]) -> list[str]:
        out = []
        cache = self._request_values
        for name in self._fields:
            imp_field = _IMP_FIELDS.get(name)
            if imp_field is not None:
                out.append(imp_field(imp))
                continue
            value = cache.get(name)
            if value is None:
                request_field = _REQUEST_FIELDS.get(name)
                value = request_field(self._request) if request_field is not None else CATCH_ALL
                cache[name] = value
            out.append(value)
        return out


def create_rule_key(fields: Sequence[str], request: Mapping[str, Any], imp: Mapping[str, Any]) -> list[str]:
    """PBS-Go ``createRuleKey`` for one imp."""
    return RuleValues(fields, request).for_imp(imp)


# ---- combinations --------------------------------------------------------------------------------


def _go_shift(count: int) -> int:
    """Go's ``1 << count`` for a 64-bit int."""
    if count >= 64:
        return 0
    if count == 63:
        return -(1 << 63)
    return 1 << count


def _go_weight(mask: int, fields: int) -> int:
    """PBS-Go ``sortCombinations``' weight of a wildcard set, with int64 wrap-around."""
    total = 1 << fields
    weight = 0
    for position in range(fields):
        if mask >> position & 1:
            weight += _go_shift(total - position)
    return (weight + (1 << 63)) % (1 << 64) - (1 << 63)


def _rank(mask: int, fields: int) -> tuple[int, int, int]:
    """Where a wildcard set comes in PBS-Go's order: fewer wildcards first, then its weight, then
    generation order (its sort is stable and it generates the sets in increasing bit order)."""
    return (mask.bit_count(), _go_weight(mask, fields), mask)


@lru_cache(maxsize=32)
def combination_order(fields: int) -> tuple[tuple[bool, ...], ...]:
    """The wildcard sets for ``fields`` schema fields in PBS-Go's order, each as per-field flags."""
    masks = sorted(range(1 << fields), key=lambda m: _rank(m, fields))
    return tuple(tuple(bool(m >> i & 1) for i in range(fields)) for m in masks)


@lru_cache(maxsize=32)
def _key_getters(fields: int) -> tuple[Callable[[list[str]], Any], ...]:
    """Per wildcard set in PBS-Go's order, a getter picking each field's part from the request's
    values followed by ``*`` (index ``fields``)."""
    getters = []
    for flags in combination_order(fields):
        indices = [fields if wildcard else position for position, wildcard in enumerate(flags)]
        if len(indices) == 1:
            only = indices[0]
            getters.append(lambda values, only=only: (values[only],))
        else:
            getters.append(itemgetter(*indices))
    return tuple(getters)


def prepare_rule_combinations(values: Sequence[str], delimiter: str) -> list[str]:
    """PBS-Go ``prepareRuleCombinations``: every candidate key, most specific first, without repeats."""
    lowered = [v.lower() for v in values]
    seen: dict[str, None] = {}
    for flags in combination_order(len(lowered)):
        seen.setdefault(delimiter.join([CATCH_ALL if f else v for f, v in zip(flags, lowered, strict=True)]))
    return list(seen)


def find_rule(group: ModelGroup, values: Sequence[str]) -> str | None:
    """PBS-Go ``findRule``: the first candidate key of ``values`` in the group's rule table."""
    rules = group.rules
    if not rules:
        return None
    lowered = [v.lower() for v in values]
    count = len(lowered)
    delimiter = group.rule_delimiter
    if 0 < count <= _MAX_COMBINATION_FIELDS:
        lowered.append(CATCH_ALL)
        for getter in _key_getters(count):
            key = delimiter.join(getter(lowered))
            if key in rules:
                return key
        return None
    return _scan_rules(group, lowered)


def _scan_rules(group: ModelGroup, lowered: list[str]) -> str | None:
    """The best-ranked rule for many fields: a rule can only equal the candidate that wildcards
    exactly its ``*`` fields where the request has a value (other fields must be equal)."""
    count = len(lowered)
    best: tuple[int, int, int] | None = None
    best_key = None
    for key, parts in group.split_rules():
        mask = 0
        for position in range(count):
            part = parts[position]
            value = lowered[position]
            if part == value:
                continue
            if part != CATCH_ALL:
                break
            mask |= 1 << position
        else:
            rank = _rank(mask, count)
            if best is None or rank < best:
                best, best_key = rank, key
    return best_key
