"""A small, test-only TCF v2 core-segment encoder (written from the IAB field table).

It builds the bit string field by field so tests can choose purposes, vendors (bit-field or
range encoding) and publisher restrictions, then round-trip them through the decoder.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


def bits_to_base64url(bits: str) -> str:
    """Zero-pad to whole bytes and encode as base64url without padding."""
    bits += "0" * (-len(bits) % 8)
    data = int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _int(value: int, width: int) -> str:
    assert 0 <= value < (1 << width), (value, width)
    return format(value, f"0{width}b")


def _flags(ids: Iterable[int], width: int) -> str:
    chosen = set(ids)
    return "".join("1" if i in chosen else "0" for i in range(1, width + 1))


def _letters(text: str) -> str:
    return "".join(_int(ord(c) - 65, 6) for c in text)


def runs(ids: Iterable[int]) -> list[tuple[int, int]]:
    """Consecutive runs of the sorted ids, as inclusive (start, end) pairs."""
    out: list[tuple[int, int]] = []
    for v in sorted(set(ids)):
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def range_entries(ranges: Sequence[tuple[int, int]], single_as_range: bool = False) -> str:
    """NumEntries (12 bits) then each entry: IsARange, start, [end]."""
    bits = _int(len(ranges), 12)
    for start, end in ranges:
        if start == end and not single_as_range:
            bits += "0" + _int(start, 16)
        else:
            bits += "1" + _int(start, 16) + _int(end, 16)
    return bits


def vendor_section(ids: Iterable[int], use_range: bool, max_vendor_id: int | None = None) -> str:
    chosen = sorted(set(ids))
    max_id = max_vendor_id if max_vendor_id is not None else (chosen[-1] if chosen else 0)
    if use_range:
        return _int(max_id, 16) + "1" + range_entries(runs(chosen))
    return _int(max_id, 16) + "0" + _flags(chosen, max_id)


@dataclass
class Restriction:
    purpose: int
    restriction_type: int
    ranges: list[tuple[int, int]]


@dataclass
class CoreSegment:
    version: int = 2
    created: int = 16_500_000_000  # deciseconds since the epoch (2022-04-14)
    last_updated: int = 16_500_000_000
    cmp_id: int = 31
    cmp_version: int = 640
    consent_screen: int = 1
    consent_language: str = "EN"
    vendor_list_version: int = 126
    tcf_policy_version: int = 4
    is_service_specific: bool = True
    use_non_standard_texts: bool = False
    special_features: list[int] = field(default_factory=list)
    purposes: list[int] = field(default_factory=list)
    purposes_li: list[int] = field(default_factory=list)
    purpose_one_treatment: bool = False
    publisher_cc: str = "DE"
    vendors: list[int] = field(default_factory=list)
    vendors_range: bool = False
    vendors_li: list[int] = field(default_factory=list)
    vendors_li_range: bool = False
    restrictions: list[Restriction] = field(default_factory=list)

    def bits(self) -> str:
        out = [
            _int(self.version, 6),
            _int(self.created, 36),
            _int(self.last_updated, 36),
            _int(self.cmp_id, 12),
            _int(self.cmp_version, 12),
            _int(self.consent_screen, 6),
            _letters(self.consent_language),
            _int(self.vendor_list_version, 12),
            _int(self.tcf_policy_version, 6),
            "1" if self.is_service_specific else "0",
            "1" if self.use_non_standard_texts else "0",
            _flags(self.special_features, 12),
            _flags(self.purposes, 24),
            _flags(self.purposes_li, 24),
            "1" if self.purpose_one_treatment else "0",
            _letters(self.publisher_cc),
            vendor_section(self.vendors, self.vendors_range),
            vendor_section(self.vendors_li, self.vendors_li_range),
            _int(len(self.restrictions), 12),
        ]
        for r in self.restrictions:
            out.append(_int(r.purpose, 6) + _int(r.restriction_type, 2) + range_entries(r.ranges))
        return "".join(out)

    def encode(self) -> str:
        return bits_to_base64url(self.bits())
