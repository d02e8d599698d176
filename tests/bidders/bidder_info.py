"""PBS-Go's ``bidder-info.yaml`` (and ``aliases/<alias>.yaml``) read into hbserver's definition
shape (``hbserver/bidders/definitions/<code>.yaml``), so the drift test can compare the two.

The mapping, field by field (PBS-Go's defaults where a key is absent):

| bidder-info | definition | absent |
|---|---|---|
| ``aliasOf`` | ``alias_of`` | not an alias |
| ``disabled`` | ``disabled`` | false |
| ``endpoint`` | ``endpoint`` | "" (an alias without one uses its parent's) |
| ``maintainer.email`` | ``maintainer`` | "" |
| ``gvlVendorID`` | ``gvl_vendor_id`` | 0 |
| ``capabilities.{site,app,dooh}.mediaTypes`` | ``media_types`` | channel not supported |
| ``openrtb.version`` | ``openrtb_version`` | "2.5" |
| ``openrtb.gpp-supported`` | ``gpp_supported`` | false |
| ``openrtb.multiformat-supported`` | ``multiformat_supported`` | true |
| ``endpointCompression`` | ``endpoint_compression`` (lower case) | "" |
| ``modifyingVastXmlAllowed`` | ``modifying_vast_xml_allowed`` | false |
| ``extra_info`` | ``extra_info`` | "" |
| ``platform_id`` | ``platform_id`` | "" |
| ``geoscope`` | ``geoscope`` | [] (never inherited) |
| ``userSync.key`` | ``usersync.key`` | the code (an alias: its parent's key) |
| ``userSync.supports`` | ``usersync.supports`` | [] |
| ``userSync.{iframe,redirect}.{url,userMacro}`` | ``usersync.{iframe,redirect}.{url,user_macro}`` | none |

An alias takes from its parent what its own file lacks (``INHERITED``), never the GVL id (PBS-Go's
rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CHANNELS = ("site", "app", "dooh")
SYNC_TYPES = ("iframe", "redirect")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def definition_from_info(code: str, info: dict[str, Any], parent: dict[str, Any] | None = None) -> dict[str, Any]:
    """hbserver's definition of ``code`` from its bidder-info (``parent``: the parent's definition
    when ``info`` is an alias's)."""
    openrtb = info.get("openrtb") or {}
    capabilities = info.get("capabilities") or {}
    definition: dict[str, Any] = {"code": code}
    if info.get("aliasOf"):
        definition["alias_of"] = info["aliasOf"]
    definition["disabled"] = bool(info.get("disabled", False))
    definition["endpoint"] = _text(info.get("endpoint"))
    definition["maintainer"] = _text((info.get("maintainer") or {}).get("email"))
    definition["gvl_vendor_id"] = int(info.get("gvlVendorID") or 0)
    definition["media_types"] = {
        channel: [str(t) for t in (capabilities[channel] or {}).get("mediaTypes") or ()]
        for channel in CHANNELS
        if channel in capabilities
    }
    definition["openrtb_version"] = _text(openrtb.get("version") or "2.5")
    definition["gpp_supported"] = bool(openrtb.get("gpp-supported", False))
    definition["multiformat_supported"] = bool(openrtb.get("multiformat-supported", True))
    definition["endpoint_compression"] = _text(info.get("endpointCompression")).lower()
    definition["modifying_vast_xml_allowed"] = bool(info.get("modifyingVastXmlAllowed", False))
    definition["extra_info"] = _text(info.get("extra_info"))
    definition["platform_id"] = _text(info.get("platform_id"))
    definition["geoscope"] = [str(g) for g in info.get("geoscope") or ()]
    sync = info.get("userSync") or {}
    usersync: dict[str, Any] = {}
    if sync.get("key"):
        usersync["key"] = str(sync["key"])
    if sync.get("supports"):
        usersync["supports"] = [str(s) for s in sync["supports"]]
    for sync_type in SYNC_TYPES:
        if sync.get(sync_type):
            usersync[sync_type] = {
                "url": _text(sync[sync_type].get("url")),
                "user_macro": _text(sync[sync_type].get("userMacro")),
            }
    definition["usersync"] = usersync
    if parent is not None:
        for key in INHERITED:
            if _absent(info, key):
                definition[key] = parent[key]
    return definition


# definition key -> the bidder-info keys that, when set, make it the alias's own
_INFO_KEYS = {
    "media_types": ("capabilities",), "openrtb_version": ("openrtb",), "gpp_supported": ("openrtb",),
    "multiformat_supported": ("openrtb",), "endpoint_compression": ("endpointCompression",),
    "endpoint": ("endpoint",), "extra_info": ("extra_info",), "maintainer": ("maintainer",),
    "platform_id": ("platform_id",), "disabled": ("disabled",),
    "modifying_vast_xml_allowed": ("modifyingVastXmlAllowed",),
}
# Keys of an alias's definition it takes from its parent when its own file lacks them (``_INFO_KEYS``).
INHERITED = tuple(_INFO_KEYS)
_FLAGS = frozenset({"disabled", "modifying_vast_xml_allowed"})  # inherited only when the key is absent


def _absent(info: dict[str, Any], key: str) -> bool:
    if key in _FLAGS:
        return not any(name in info for name in _INFO_KEYS[key])
    return not any(info.get(name) for name in _INFO_KEYS[key])


def read_info(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return data


def definitions_from_fixtures(root: Path, bidder: str) -> dict[str, dict[str, Any]]:
    """The definitions of ``bidder`` and of each of its aliases, by code."""
    parent = definition_from_info(bidder, read_info(root / bidder / "bidder-info.yaml"))
    found = {bidder: parent}
    for path in sorted((root / bidder / "aliases").glob("*.yaml")):
        found[path.stem] = definition_from_info(path.stem, read_info(path), parent)
    return found
