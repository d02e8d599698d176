"""IAB TCF v2 consent string (TC string) decoder.

A TC string is base64url without padding; segments are separated by ``.``. The first segment is
the core segment, decoded here field by field. Later segments (disclosed vendors, publisher TC)
are only checked to be base64url and otherwise ignored, as Prebid Server ignores them for syncs.

What counts as malformed follows PBS-Go (``prebid/go-gdpr``): the version must be 2, the vendor
list version non-zero, every field of the core segment present (through NumPubRestrictions), and
vendor ids in range entries 1..MaxVendorId. Two deliberate differences, both more lenient:
a range entry with start == end is accepted (go-gdpr rejects it; IAB's Java decoder accepts it),
and publisher-restriction vendor ids are not capped at the consent section's MaxVendorId.
Bits left over in the final partial byte of the decoded segment are not read, as in go-gdpr.
"""

from __future__ import annotations

import binascii
import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

_T = TypeVar("_T")

RESTRICTION_NOT_ALLOWED = 0
RESTRICTION_REQUIRE_CONSENT = 1
RESTRICTION_REQUIRE_LI = 2

CACHE_SIZE = 1024  # choices keys kept by parse_tcf2_cached (per process)

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# The fixed part of the core segment: 213 bits, read from the first 27 bytes (216 bits).
_HEADER_BYTES = 27
_HEADER_BITS = _HEADER_BYTES * 8
_FIXED_BITS = 213
_MASK36 = (1 << 36) - 1
_TO_STANDARD = bytes.maketrans(b"-_", b"+/")


class ConsentError(ValueError):
    """A consent string that is not a well-formed TCF v2 string; str() is a short cause."""


@dataclass(frozen=True)
class VendorBits:
    """A vendor consent or legitimate-interest section, kept as the wire's bit field.

    Bit ``max_vendor_id - v`` of ``bits`` stands for vendor ``v`` (vendor 1 is the most
    significant bit), so a bit-field section is stored without any per-vendor work.
    """

    max_vendor_id: int
    bits: int

    def __contains__(self, vendor_id: object) -> bool:
        if not isinstance(vendor_id, int) or not 0 < vendor_id <= self.max_vendor_id:
            return False
        return (self.bits >> (self.max_vendor_id - vendor_id)) & 1 == 1

    def __len__(self) -> int:
        return self.bits.bit_count()

    def ids(self) -> list[int]:
        """The vendor ids present, ascending."""
        if not self.max_vendor_id:
            return []
        text = format(self.bits, f"0{self.max_vendor_id}b")
        return [i + 1 for i, bit in enumerate(text) if bit == "1"]


@dataclass(frozen=True, slots=True)
class VendorRanges:
    """Vendor ids as sorted, merged, inclusive ranges (``starts[i]``..``ends[i]``)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def __contains__(self, vendor_id: object) -> bool:
        if not isinstance(vendor_id, int):
            return False
        i = bisect_right(self.starts, vendor_id) - 1
        return i >= 0 and vendor_id <= self.ends[i]

    def ids(self) -> list[int]:
        """The vendor ids present, ascending."""
        return [v for s, e in zip(self.starts, self.ends, strict=True) for v in range(s, e + 1)]


@dataclass(frozen=True, slots=True)
class PublisherRestriction:
    """One publisher restriction: purpose, type (0 not allowed, 1 require consent, 2 require LI,
    3 undefined) and the vendors it applies to. Entries repeated for the same purpose and type
    in one string are merged (go-gdpr keeps only the last one)."""

    purpose: int
    restriction_type: int
    vendors: VendorRanges


@dataclass(frozen=True)
class TCF2Consent:
    """The decoded core segment of a TC string.

    ``special_feature_optins``, ``purpose_consents`` and ``purpose_li_transparency`` are the
    wire's bit fields as ints (id 1 is the most significant of 12 or 24 bits): use the methods.
    """

    version: int
    created: datetime
    last_updated: datetime
    cmp_id: int
    cmp_version: int
    consent_screen: int
    consent_language: str
    vendor_list_version: int
    tcf_policy_version: int
    is_service_specific: bool
    use_non_standard_texts: bool
    special_feature_optins: int
    purpose_consents: int
    purpose_li_transparency: int
    purpose_one_treatment: bool
    publisher_cc: str
    vendor_consents: VendorBits
    vendor_legitimate_interests: VendorBits
    publisher_restrictions: tuple[PublisherRestriction, ...]  # sorted by (purpose, type)

    def purpose_consent(self, p: int) -> bool:
        return 1 <= p <= 24 and (self.purpose_consents >> (24 - p)) & 1 == 1

    def purpose_li(self, p: int) -> bool:
        return 1 <= p <= 24 and (self.purpose_li_transparency >> (24 - p)) & 1 == 1

    def special_feature_optin(self, f: int) -> bool:
        return 1 <= f <= 12 and (self.special_feature_optins >> (12 - f)) & 1 == 1

    def vendor_consent(self, vendor_id: int) -> bool:
        return vendor_id in self.vendor_consents

    def vendor_li(self, vendor_id: int) -> bool:
        return vendor_id in self.vendor_legitimate_interests

    def restriction(self, purpose: int, vendor_id: int) -> int | None:
        """The publisher restriction type for this purpose and vendor, or None.

        Should a string restrict one vendor in several ways for a purpose, the lowest type wins
        (0, then 1, then 2): the order in which PBS-Go's enforcement asks. Type 3 (undefined)
        is ignored.
        """
        for r in self.publisher_restrictions:
            if r.purpose == purpose and r.restriction_type != 3 and vendor_id in r.vendors:
                return r.restriction_type
        return None


def _new(cls: type[_T], **fields: object) -> _T:
    """Build a frozen dataclass without its __init__, which guards every field assignment;
    one dict update is several times faster, and parse_tcf2 runs per request."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


def _decode_segment(segment: str) -> bytes:
    # Go's base64.RawURLEncoding: no padding, no '+' or '/', and a lone final character is an error.
    if not _BASE64URL.fullmatch(segment) or len(segment) % 4 == 1:
        raise ConsentError("invalid base64url")
    padded = segment.encode("ascii").translate(_TO_STANDARD) + b"=" * (-len(segment) % 4)
    try:
        return binascii.a2b_base64(padded)
    except binascii.Error as exc:  # pragma: no cover - the pattern rules these out
        raise ConsentError("invalid base64url") from exc


def _bits(data: bytes, nbits: int, pos: int, width: int) -> int:
    """The unsigned integer in bits [pos, pos + width) of data (most significant bit first)."""
    end = pos + width
    if end > nbits:
        raise ConsentError("truncated core segment")
    last = (end + 7) >> 3
    chunk = int.from_bytes(data[pos >> 3 : last], "big")
    return (chunk >> ((last << 3) - end)) & ((1 << width) - 1)


def _range_entry(data: bytes, nbits: int, pos: int) -> tuple[int, int, int]:
    """One range entry: (start, end, next position). Vendor id 0 and end < start are errors."""
    head = _bits(data, nbits, pos, 17)  # IsARange, then the start (or only) vendor id
    start = head & 0xFFFF
    if head >> 16:
        end = _bits(data, nbits, pos + 17, 16)
        pos += 33
    else:
        end = start
        pos += 17
    if start == 0:
        raise ConsentError("vendor id 0 in a range entry")
    if end < start:
        raise ConsentError(f"range entry {start}-{end} ends before it starts")
    return start, end, pos


def _vendor_section(data: bytes, nbits: int, pos: int) -> tuple[VendorBits, int]:
    head = _bits(data, nbits, pos, 17)  # MaxVendorId, then IsRangeEncoding
    max_id = head >> 1
    pos += 17
    if not head & 1:
        return _new(VendorBits, max_vendor_id=max_id, bits=_bits(data, nbits, pos, max_id)), pos + max_id
    count = _bits(data, nbits, pos, 12)
    pos += 12
    ranges = []
    for _ in range(count):
        start, end, pos = _range_entry(data, nbits, pos)
        if end > max_id:
            raise ConsentError(f"vendor id {end} above max vendor id {max_id}")
        ranges.append((start, end))
    if not ranges:
        return _new(VendorBits, max_vendor_id=max_id, bits=0), pos
    # Set the merged ranges in a '0'/'1' buffer and read it as one int: linear in MaxVendorId
    # however many (overlapping) entries a string carries.
    buf = bytearray(b"0" * max_id)
    for start, end in _merged(ranges):
        buf[start - 1 : end] = b"1" * (end - start + 1)
    return _new(VendorBits, max_vendor_id=max_id, bits=int(buf, 2)), pos


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint, non-adjacent inclusive ranges covering the same ids."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _merge(ranges: list[tuple[int, int]]) -> VendorRanges:
    merged = _merged(ranges)
    return VendorRanges(tuple(s for s, _ in merged), tuple(e for _, e in merged))


def _publisher_restrictions(data: bytes, nbits: int, pos: int) -> tuple[PublisherRestriction, ...]:
    count = _bits(data, nbits, pos, 12)
    pos += 12
    if not count:
        return ()
    found: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for _ in range(count):
        head = _bits(data, nbits, pos, 20)  # PurposeId (6), RestrictionType (2), NumEntries (12)
        entries = head & 0xFFF
        pos += 20
        ranges = found.setdefault((head >> 14, (head >> 12) & 3), [])
        for _ in range(entries):
            start, end, pos = _range_entry(data, nbits, pos)
            ranges.append((start, end))
    return tuple(PublisherRestriction(p, t, _merge(found[(p, t)])) for p, t in sorted(found))


def _letters(value: int) -> str:
    return chr(65 + (value >> 6)) + chr(65 + (value & 63))


# Real strings, even with every vendor and the optional segments, stay well under this; decoding
# time grows with the length, so a hostile request cannot buy more than a few milliseconds.
MAX_CONSENT_LENGTH = 4096


def _time(deciseconds: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=deciseconds * 100)


def parse_tcf2(consent: str) -> TCF2Consent:
    """Decode a TC string's core segment; raises ConsentError when it is not a valid TCF v2 string."""
    if not consent:
        raise ConsentError("empty consent string")
    if len(consent) > MAX_CONSENT_LENGTH:
        raise ConsentError(f"consent string longer than {MAX_CONSENT_LENGTH} characters")
    core, _, others = consent.partition(".")
    if not core:
        raise ConsentError("empty core segment")
    if others:
        for segment in others.split("."):
            if segment and (not _BASE64URL.fullmatch(segment) or len(segment) % 4 == 1):
                raise ConsentError("invalid base64url")
    data = _decode_segment(core)
    if not data:
        raise ConsentError("truncated core segment")
    version = data[0] >> 2
    if version != 2:
        raise ConsentError(f"not a TCF v2 string: version {version}")
    if len(data) < _HEADER_BYTES:
        raise ConsentError("truncated core segment")

    # The fixed fields from one int of _HEADER_BITS bits: a field at (offset, width) is shifted
    # right by _HEADER_BITS - offset - width.
    h = int.from_bytes(data[:_HEADER_BYTES], "big")
    vendor_list_version = (h >> 84) & 0xFFF  # bits 120-131
    if vendor_list_version == 0:
        raise ConsentError("vendor list version 0")
    nbits = len(data) * 8
    consents, pos = _vendor_section(data, nbits, _FIXED_BITS)
    legitimate, pos = _vendor_section(data, nbits, pos)
    restrictions = _publisher_restrictions(data, nbits, pos)
    return _new(
        TCF2Consent,
        version=version,
        created=_time((h >> 174) & _MASK36),  # bits 6-41
        last_updated=_time((h >> 138) & _MASK36),  # bits 42-77
        cmp_id=(h >> 126) & 0xFFF,  # bits 78-89
        cmp_version=(h >> 114) & 0xFFF,  # bits 90-101
        consent_screen=(h >> 108) & 0x3F,  # bits 102-107
        consent_language=_letters((h >> 96) & 0xFFF),  # bits 108-119
        vendor_list_version=vendor_list_version,
        tcf_policy_version=(h >> 78) & 0x3F,  # bits 132-137
        is_service_specific=bool((h >> 77) & 1),  # bit 138
        use_non_standard_texts=bool((h >> 76) & 1),  # bit 139
        special_feature_optins=(h >> 64) & 0xFFF,  # bits 140-151
        purpose_consents=(h >> 40) & 0xFFFFFF,  # bits 152-175
        purpose_li_transparency=(h >> 16) & 0xFFFFFF,  # bits 176-199
        purpose_one_treatment=bool((h >> 15) & 1),  # bit 200
        publisher_cc=_letters((h >> 3) & 0xFFF),  # bits 201-212
        vendor_consents=consents,
        vendor_legitimate_interests=legitimate,
        publisher_restrictions=restrictions,
    )


# The memo behind parse_tcf2_cached: a string's choices key -> (the string parsed, its result or
# the error's message). Emptied when full: a memo of per-user text must never grow without end.
_memo: dict[str, tuple[str, TCF2Consent | str]] = {}
# Characters 1-12 of a TC string are its Created and LastUpdated fields (bits 6-77), and nothing else.
_STAMP_SHIFT = 96 - 78  # 16 characters decode to 96 bits; the stamps end at bit 78
_MASK72 = (1 << 72) - 1


def choices_key(consent: str) -> str | None:
    """``consent`` without its Created and LastUpdated characters (1-12), when those are base64url
    and more follow; else None (such a string cannot decode: it is too short, or its core segment
    is not base64url). Every user's string differs in its timestamps and no decision reads them,
    so strings with one key decode alike but for those two fields."""
    if len(consent) > 16 and _BASE64URL.fullmatch(consent, 1, 13):
        return consent[0] + consent[13:]
    return None


def _restamped(parsed: TCF2Consent, consent: str) -> TCF2Consent:
    """``parsed`` (of a string with ``consent``'s choices key) with ``consent``'s own timestamps."""
    head = binascii.a2b_base64(consent[:16].encode("ascii").translate(_TO_STANDARD))
    stamps = (int.from_bytes(head, "big") >> _STAMP_SHIFT) & _MASK72
    fields = dict(parsed.__dict__)
    fields["created"] = _time(stamps >> 36)
    fields["last_updated"] = _time(stamps & _MASK36)
    return _new(TCF2Consent, **fields)


def _memoized(consent: str, key: str) -> tuple[str, TCF2Consent | str]:
    """The memo's (string parsed, result or error message) for ``key``, parsing ``consent`` on a miss."""
    found = _memo.get(key)
    if found is None:
        try:
            result: TCF2Consent | str = parse_tcf2(consent)
        except ConsentError as exc:
            result = str(exc)
        if len(_memo) >= CACHE_SIZE:
            _memo.clear()
        found = _memo[key] = (consent, result)
    return found


def parse_tcf2_cached(consent: str) -> TCF2Consent:
    """:func:`parse_tcf2` behind a memo of at most CACHE_SIZE choices keys per process: a string
    differing from one seen before only in its timestamps is that one's result, restamped. Failures
    are kept too (they repeat as well; a failure never depends on the timestamp characters).

    On traffic where every user's string is its own, the key still repeats: users who made the same
    choices with the same CMP share it."""
    key = choices_key(consent)
    if key is None:
        return parse_tcf2(consent)  # fails, and fast: not kept
    text, result = _memoized(consent, key)
    if result.__class__ is str:
        raise ConsentError(result)
    if text != consent:
        return _restamped(result, consent)  # type: ignore[arg-type]  # not a str: a TCF2Consent
    return result  # type: ignore[return-value]


def parse_tcf2_choices(consent: str, key: str | None) -> TCF2Consent:
    """For decisions only: :func:`parse_tcf2_cached` without the restamping, so ``created`` and
    ``last_updated`` may be those of another string with the same :func:`choices_key` (``key``,
    which the caller has made). No decision reads them."""
    if key is None:
        return parse_tcf2(consent)
    result = _memoized(consent, key)[1]
    if result.__class__ is str:
        raise ConsentError(result)
    return result  # type: ignore[return-value]
