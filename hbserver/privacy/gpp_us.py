"""The US sections of a GPP string (IAB GPP spec, sections 7-12): usnat, usca, usva, usco, usut, usct.

Each section is a base64url core segment of fixed-width fields (a 6-bit Version, then 2-bit values
and lists of 2-bit values), optionally followed by ``.`` and the GPC subsection (2-bit subsection
type, which must be 1, then the 1-bit Gpc flag) for usnat, usca, usco and usct.

Decoding follows PBS-Go's library (``prebid/go-gpp``), including its error wording: the segment is
base64url-decoded into whole bytes after appending one ``A`` when its length is not a multiple of
four, and a field that does not fit in those bytes is an error naming it. Values are not range
checked (neither go-gpp nor iabgpp-java does), and bits after the last field are ignored.

usnat has two shapes, told apart by length as iabgpp-java does: the first release (10 or 11
characters: 12 SensitiveDataProcessing and 2 KnownChildSensitiveDataConsents fields) and the
current one (12 or more characters: 16 and 3 fields). go-gpp reads only the first shape.
Section usva and usut have no GPC subsection, so a ``.`` in them is an error (as in go-gpp;
iabgpp-java ignores what follows it).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

SECTION_USNAT = 7
SECTION_USCA = 8
SECTION_USVA = 9
SECTION_USCO = 10
SECTION_USUT = 11
SECTION_USCT = 12
US_SECTIONS = frozenset(range(SECTION_USNAT, SECTION_USCT + 1))

# IAB section names, and go-gpp's (used in its error messages)
SECTION_NAMES = {7: "usnat", 8: "usca", 9: "usva", 10: "usco", 11: "usut", 12: "usct"}
_GO_NAMES = {7: "uspnat", 8: "uspca", 9: "uspva", 10: "uspco", 11: "usput", 12: "uspct"}

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_VALUES = frozenset(_ALPHABET)
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*", re.ASCII)
_USNAT_V1_MAX_CHARS = 11  # 60 bits of fields, 10 characters; iabgpp-java also reads 11 as the first shape


class USSectionError(ValueError):
    """A US section that cannot be decoded; str() is go-gpp's message, naming section and field."""

    def __init__(self, section_id: int, detail: str) -> None:
        super().__init__(f"error parsing {_GO_NAMES[section_id]} consent string: {detail}")
        self.section_id = section_id
        self.detail = detail


@dataclass(frozen=True, slots=True)
class USSection:
    """One decoded US section. A field the section does not have is None (usca has no SharingNotice)."""

    section_id: int
    version: int
    sharing_notice: int | None
    sale_opt_out_notice: int | None
    sharing_opt_out_notice: int | None
    targeted_advertising_opt_out_notice: int | None
    sensitive_data_processing_opt_out_notice: int | None
    sensitive_data_limit_use_notice: int | None
    sale_opt_out: int | None
    sharing_opt_out: int | None
    targeted_advertising_opt_out: int | None
    sensitive_data_processing: tuple[int, ...]
    known_child_sensitive_data_consents: tuple[int, ...]  # one value for usva, usco and usut
    personal_data_consents: int | None
    mspa_covered_transaction: int
    mspa_opt_out_option_mode: int
    mspa_service_provider_mode: int
    gpc_segment_included: bool
    gpc: bool | None  # None for usva and usut, which have no GPC subsection; False when not included


# A layout is the core segment's fields in order: (attribute, go-gpp field name, count); count 0 is
# the 6-bit Version, 1 a single 2-bit value, n > 1 a list of n 2-bit values.
_Layout = tuple[tuple[str, str, int], ...]

_VERSION = ("version", "Version", 0)
_SHARING_NOTICE = ("sharing_notice", "SharingNotice", 1)
_SALE_NOTICE = ("sale_opt_out_notice", "SaleOptOutNotice", 1)
_SHARING_OO_NOTICE = ("sharing_opt_out_notice", "SharingOptOutNotice", 1)
_TARGETED_NOTICE = ("targeted_advertising_opt_out_notice", "TargetedAdvertisingOptOutNotice", 1)
_SDP_NOTICE = ("sensitive_data_processing_opt_out_notice", "SensitiveDataProcessingOptOutNotice", 1)
_SDL_NOTICE = ("sensitive_data_limit_use_notice", "SensitiveDataLimitUseNotice", 1)
_SALE = ("sale_opt_out", "SaleOptOut", 1)
_SHARING = ("sharing_opt_out", "SharingOptOut", 1)
_TARGETED = ("targeted_advertising_opt_out", "TargetedAdvertisingOptOut", 1)
_PDC = ("personal_data_consents", "PersonalDataConsents", 1)
_MSPA = (
    ("mspa_covered_transaction", "MspaCoveredTransaction", 1),
    ("mspa_opt_out_option_mode", "MspaOptOutOptionMode", 1),
    ("mspa_service_provider_mode", "MspaServiceProviderMode", 1),
)


def _sdp(count: int) -> tuple[str, str, int]:
    return ("sensitive_data_processing", "SensitiveDataProcessing", count)


def _kcsdc(count: int) -> tuple[str, str, int]:
    return ("known_child_sensitive_data_consents", "KnownChildSensitiveDataConsents", count)


def _usnat(sdp: int, kcsdc: int) -> _Layout:
    return (
        _VERSION, _SHARING_NOTICE, _SALE_NOTICE, _SHARING_OO_NOTICE, _TARGETED_NOTICE, _SDP_NOTICE, _SDL_NOTICE,
        _SALE, _SHARING, _TARGETED, _sdp(sdp), _kcsdc(kcsdc), _PDC, *_MSPA,
    )


def _common(sdp: int, kcsdc: int) -> _Layout:
    """go-gpp's CommonUSCoreSegment: usva, usco and usct."""
    return (
        _VERSION, _SHARING_NOTICE, _SALE_NOTICE, _TARGETED_NOTICE, _SALE, _TARGETED, _sdp(sdp), _kcsdc(kcsdc), *_MSPA,
    )


_USNAT_V1 = _usnat(12, 2)
_USNAT_V2 = _usnat(16, 3)
_LAYOUTS: dict[int, _Layout] = {
    SECTION_USCA: (
        _VERSION, _SALE_NOTICE, _SHARING_OO_NOTICE, _SDL_NOTICE, _SALE, _SHARING, _sdp(9), _kcsdc(2), _PDC, *_MSPA,
    ),
    SECTION_USVA: _common(8, 1),
    SECTION_USCO: _common(7, 1),
    SECTION_USUT: (
        _VERSION, _SHARING_NOTICE, _SALE_NOTICE, _TARGETED_NOTICE, _SDP_NOTICE, _SALE, _TARGETED, _sdp(8), _kcsdc(1),
        *_MSPA,
    ),
    SECTION_USCT: _common(8, 3),
}
_WITH_GPC = frozenset((SECTION_USNAT, SECTION_USCA, SECTION_USCO, SECTION_USCT))
_ABSENT = {
    "sharing_notice": None, "sale_opt_out_notice": None, "sharing_opt_out_notice": None,
    "targeted_advertising_opt_out_notice": None, "sensitive_data_processing_opt_out_notice": None,
    "sensitive_data_limit_use_notice": None, "sale_opt_out": None, "sharing_opt_out": None,
    "targeted_advertising_opt_out": None, "personal_data_consents": None,
}


class _Bits:
    """A segment as Go decodes it: whole bytes of base64url, read as big-endian bit fields."""

    __slots__ = ("nbits", "nbytes", "value")

    def __init__(self, segment: str, section_id: int) -> None:
        if not _BASE64URL.fullmatch(segment):
            index = next(i for i, ch in enumerate(segment) if ch not in _VALUES)
            raise USSectionError(section_id, f"illegal base64 data at input byte {index}")
        padded = segment + "A" if len(segment) % 4 else segment  # go-gpp pads the last quantum with one "A"
        data = base64.urlsafe_b64decode(padded + "=" * (-len(padded) % 4))
        self.nbytes = len(data)
        self.nbits = self.nbytes * 8
        self.value = int.from_bytes(data, "big")

    def read(self, pos: int, width: int, field: str, section_id: int) -> int:
        if pos + width > self.nbits:
            where = f"expected 1 bit at bit {pos}" if width == 1 else f"expected {width} bits to start at bit {pos}"
            problem = f"{where}, but the byte array was only {self.nbytes} bytes long"
            raise USSectionError(section_id, f"unable to set field {field} due to parse error: {problem}")
        return (self.value >> (self.nbits - pos - width)) & ((1 << width) - 1)


def _plan(layout: _Layout) -> tuple[tuple[tuple[str, str, int, int], ...], int]:
    """Each field with its bit position, and the bits the layout needs."""
    fields = []
    pos = 0
    for attr, name, count in layout:
        fields.append((attr, f"CoreSegment.{name}", count, pos))
        pos += 6 if count == 0 else 2 * count
    return tuple(fields), pos


def _core(bits: _Bits, layout: _Layout, section_id: int) -> dict[str, Any]:
    fields, needed = _PLANS[layout]
    out: dict[str, Any] = dict(_ABSENT)
    if bits.nbits < needed:  # find the field go-gpp names in its error
        for _attr, name, count, pos in fields:
            for i in range(max(count, 1)):
                bits.read(pos + 2 * i, 6 if count == 0 else 2, name, section_id)
    value, nbits = bits.value, bits.nbits
    for attr, _name, count, pos in fields:
        if count == 0:
            out[attr] = (value >> (nbits - pos - 6)) & 0x3F
        elif count == 1 and attr != "known_child_sensitive_data_consents":
            out[attr] = (value >> (nbits - pos - 2)) & 3
        else:
            out[attr] = tuple((value >> (nbits - pos - 2 * i - 2)) & 3 for i in range(count))
    return out


_PLANS = {layout: _plan(layout) for layout in (_USNAT_V1, _USNAT_V2, *_LAYOUTS.values())}


def decode_us_section(section_id: int, value: str) -> USSection:
    """Decode section ``section_id`` (7-12) of a GPP string; raises USSectionError."""
    if section_id not in US_SECTIONS:
        raise ValueError(f"section {section_id} is not a US section (7-12)")
    has_gpc = section_id in _WITH_GPC
    segments = value.split(".") if has_gpc else [value]
    core = segments[0]
    if section_id == SECTION_USNAT:
        layout = _USNAT_V1 if len(core) <= _USNAT_V1_MAX_CHARS else _USNAT_V2
    else:
        layout = _LAYOUTS[section_id]
    fields = _core(_Bits(core, section_id), layout, section_id)
    gpc: bool | None = None
    included = False
    if has_gpc:
        gpc = False
        if len(segments) > 1:
            included = True
            bits = _Bits(segments[1], section_id)
            subsection = bits.read(0, 2, "GPCSegment.SubsectionType", section_id)
            if subsection != 1:
                raise USSectionError(section_id, f"invalid subsection type {subsection} for GPC segment")
            gpc = bits.read(2, 1, "GPCSegment.Gpc", section_id) == 1
    return USSection(section_id=section_id, gpc_segment_included=included, gpc=gpc, **fields)
