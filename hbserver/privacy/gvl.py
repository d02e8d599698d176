"""IAB Global Vendor List (GVL, v2 or v3 JSON), loaded once from a local file.

Only what TCF enforcement needs is kept per vendor (purposes, special purposes, special
features). Vendors carrying ``deletedDate`` are kept, as PBS-Go (go-gdpr) keeps them;
``VendorInfo.deleted_date`` records it. The list is used whatever ``vendorListVersion`` the
consent string names (PBS-Go fetches that exact version; a single local file is the offline
equivalent).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

MAX_GVL_BYTES = 20 * 1024 * 1024


class GVLError(ValueError):
    """The vendor list file cannot be used: unreadable, too large, not JSON or the wrong shape."""


@dataclass(frozen=True, slots=True)
class VendorInfo:
    purposes: frozenset[int]
    leg_int_purposes: frozenset[int]
    flexible_purposes: frozenset[int]
    special_purposes: frozenset[int]
    deleted_date: str | None = None
    special_features: frozenset[int] = frozenset()  # "specialFeatures"; 1 = precise geolocation


class GlobalVendorList:
    """Vendors by id, with the list's version."""

    __slots__ = ("_vendors", "spec_version", "version")

    def __init__(self, version: int, vendors: Mapping[int, VendorInfo], spec_version: int | None = None) -> None:
        self.version = version
        self.spec_version = spec_version
        self._vendors = dict(vendors)

    def vendor(self, vendor_id: int) -> VendorInfo | None:
        return self._vendors.get(vendor_id)

    def __len__(self) -> int:
        return len(self._vendors)

    def __repr__(self) -> str:
        return f"GlobalVendorList(version={self.version}, vendors={len(self._vendors)})"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _id_set(vendor: Mapping[str, Any], key: str, where: str) -> frozenset[int]:
    value = vendor.get(key)
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(_is_int(v) for v in value):
        raise GVLError(f"{where}.{key} must be a list of integers")
    return frozenset(value)


def parse_gvl(document: object, source: str = "vendor list") -> GlobalVendorList:
    """Build a GlobalVendorList from decoded JSON; raises GVLError naming what is wrong."""
    if not isinstance(document, dict):
        raise GVLError(f"{source}: top level must be a JSON object")
    version = document.get("vendorListVersion")
    if not _is_int(version) or version < 1:
        raise GVLError(f"{source}: vendorListVersion must be a positive integer")
    spec = document.get("gvlSpecificationVersion")
    if spec is not None and not _is_int(spec):
        raise GVLError(f"{source}: gvlSpecificationVersion must be an integer")
    raw_vendors = document.get("vendors")
    if not isinstance(raw_vendors, dict):
        raise GVLError(f"{source}: vendors must be a JSON object keyed by vendor id")
    vendors: dict[int, VendorInfo] = {}
    for key, raw in raw_vendors.items():
        where = f"{source}: vendors.{key}"
        if not isinstance(raw, dict):
            raise GVLError(f"{where} must be a JSON object")
        vendor_id = raw.get("id")
        if not _is_int(vendor_id) or not 0 < vendor_id <= 0xFFFF:
            raise GVLError(f"{where}.id must be an integer from 1 to 65535")
        if key != str(vendor_id):
            raise GVLError(f"{where}.id is {vendor_id}, not the key")
        deleted = raw.get("deletedDate")
        if deleted is not None and not isinstance(deleted, str):
            raise GVLError(f"{where}.deletedDate must be a string")
        vendors[vendor_id] = VendorInfo(
            purposes=_id_set(raw, "purposes", where),
            leg_int_purposes=_id_set(raw, "legIntPurposes", where),
            flexible_purposes=_id_set(raw, "flexiblePurposes", where),
            special_purposes=_id_set(raw, "specialPurposes", where),
            deleted_date=deleted,
            special_features=_id_set(raw, "specialFeatures", where),
        )
    return GlobalVendorList(version, vendors, spec)


def load_gvl(path: str) -> GlobalVendorList:
    """Read and validate a GVL JSON file (at most MAX_GVL_BYTES); raises GVLError."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_GVL_BYTES:
                raise GVLError(f"{path}: larger than {MAX_GVL_BYTES // (1024 * 1024)} MB")
            data = f.read(MAX_GVL_BYTES + 1)
    except OSError as exc:
        raise GVLError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_GVL_BYTES:  # grew while reading, or not a regular file
        raise GVLError(f"{path}: larger than {MAX_GVL_BYTES // (1024 * 1024)} MB")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise GVLError(f"{path}: not valid JSON: {exc}") from exc
    return parse_gvl(document, path)
