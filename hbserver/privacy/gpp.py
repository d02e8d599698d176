"""IAB GPP strings: the header (type, version, section ids) and the raw section strings.

Parsing follows PBS-Go's library (``prebid/go-gpp`` ``Parse``), including its error wording:
the header is base64url after appending ``A`` characters (zero bits) up to six characters and
at least one; its first six bits must be 3 (the character ``D``); then a 6-bit version and the
section ids as a Fibonacci-coded range list; then one ``~``-separated section per id.
Differences: sections are kept raw (go-gpp also decodes the US state sections 7-12 and reports
their errors), and a header whose padded length is 1 mod 4 is read rather than rejected by the
base64 decoder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hbserver.numbers import INT8, NumberError, parse_int

SECTION_TCF_EU_V2 = 2
SECTION_US_PRIVACY = 6

_HEADER_PREFIX = "error parsing GPP header"
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_SIXBITS = {c: format(i, "06b") for i, c in enumerate(_ALPHABET)}
_FIB = [1, 2]  # the value of each bit position of a Fibonacci code: 1, 2, 3, 5, 8, ...
while len(_FIB) < 24:
    _FIB.append(_FIB[-1] + _FIB[-2])


class GPPError(ValueError):
    """A GPP string that cannot be parsed; str() is PBS-Go's message where one exists."""


@dataclass(frozen=True, slots=True)
class GPP:
    version: int
    section_ids: tuple[int, ...]
    sections: dict[int, str]  # raw section strings by id


def _short(bit: int, nbits: int) -> str:
    return f"expected 1 bit at bit {bit}, but the byte array was only {nbits // 8} bytes long"


def _fibonacci(bits: str, pos: int, what: str) -> tuple[int, int]:
    """One Fibonacci-coded integer starting at pos: (value, next position)."""
    end = bits.find("11", pos)
    if end < 0:
        nbits = len(bits)
        raise GPPError(
            f"{_HEADER_PREFIX}, section identifiers: error reading {what}: "
            f"error reading bit {nbits - pos + 1} of Integer(Fibonacci): {_short(nbits, nbits)}"
        )
    if end - pos >= len(_FIB):  # go-gpp would overflow a uint16 here
        raise GPPError(f"{_HEADER_PREFIX}, section identifiers: error reading {what}: Integer(Fibonacci) too large")
    value = sum(_FIB[i] for i, bit in enumerate(bits[pos : end + 1]) if bit == "1")
    return value, end + 2


def _section_ranges(bits: str) -> list[tuple[int, int]]:
    """The Range(Fibonacci) after type and version: each entry is an offset from the previous end."""
    count = int(bits[12:24], 2)
    pos = 24
    ranges: list[tuple[int, int]] = []
    highest = 0
    for entry in range(count):  # go-gpp numbers entries from 0 in its messages
        if pos >= len(bits):
            raise GPPError(
                f"{_HEADER_PREFIX}, section identifiers: error reading the boolean bit of a "
                f"Range(Fibonacci) entry({entry}): {_short(pos, len(bits))}"
            )
        if bits[pos] == "1":
            offset, pos = _fibonacci(bits, pos + 1, f"first int offset value in a Range(Fibonacci) entry({entry})")
            length, pos = _fibonacci(bits, pos, f"second int offset value in a Range(Fibonacci) entry({entry})")
        else:
            offset, pos = _fibonacci(bits, pos + 1, f"an int offset value in a Range(Fibonacci) entry({entry})")
            length = 0
        ranges.append((highest + offset, highest + offset + length))
        highest += offset + length
    return ranges


def parse_gpp(value: str) -> GPP:
    """Split a GPP string into its header fields and raw sections; raises GPPError."""
    parts = value.split("~")
    header = parts[0]
    for i, ch in enumerate(header):
        if ch not in _SIXBITS:
            raise GPPError(f"{_HEADER_PREFIX}, base64 decoding: illegal base64 data at input byte {i}")
    if not header.startswith("D"):
        raise GPPError(f"{_HEADER_PREFIX}, header must have type=3")
    padded = header + "A" * max(1, 6 - len(header))
    bits = "".join(_SIXBITS[c] for c in padded)
    bits = bits[: len(bits) // 8 * 8]  # the decoder yields whole bytes only
    version = int(bits[6:12], 2)
    ranges = _section_ranges(bits)
    found = sum(end - start + 1 for start, end in ranges)
    if found != len(parts) - 1:
        raise GPPError(
            f"{_HEADER_PREFIX}, section IDs do not match the number of sections: "
            f"found {found} IDs, have {len(parts) - 1} sections"
        )
    ids = tuple(sid for start, end in ranges for sid in range(start, end + 1))
    return GPP(version=version, section_ids=ids, sections=dict(zip(ids, parts[1:], strict=True)))


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse_gpp_sid(value: str) -> tuple[int, ...]:
    """A ``gpp_sid`` list: comma-separated int8 values ("" gives ()).

    Raises ValueError with Go's strconv wording, e.g.
    ``strconv.ParseInt: parsing "malformed": invalid syntax`` (the /cookie_sync 400 body).
    """
    if not value:
        return ()
    out = []
    for item in value.split(","):
        try:
            out.append(parse_int(item, INT8))
        except NumberError as exc:
            raise ValueError(f"strconv.ParseInt: parsing {_go_quote(item)}: {exc.reason}") from None
    return tuple(out)
