"""ISO 4217 codes: ``is_iso4217`` answers as x/text ``currency.ParseISO`` (v0.37.0, PBS-Go's) does."""

from __future__ import annotations

import string

import pytest

from hbserver.adapters.base import ConversionError
from hbserver.auction.bids.currency import ConstantRates, RateTable
from hbserver.auction.common.iso4217 import ISO4217_CODES, is_iso4217, iso4217_problem

# (id, code, ParseISO succeeds)
CODES = [
    # x/text's own TestParseISO rows.
    ("USD", "USD", True),
    ("xxx-lower", "xxx", True),
    ("xts-lower", "xts", True),
    ("two-letters", "XX", False),
    ("four-letters", "XXXX", False),
    ("empty", "", False),
    ("unknown", "UUU", False),
    ("non-ascii-printable", "\u22a9", False),  # 3 bytes in UTF-8, but not letters
    ("aaa", "aaa", False),
    ("zzz", "zzz", False),
    ("digits-000", "000", False),
    ("digits-999", "999", False),
    ("dashes", "---", False),
    ("nul-bytes", "\x00\x00\x00", False),
    ("high-bytes", "\xff\xff\xff", False),
    # PBS-Go's ValidateCustomRates rows.
    ("FOO", "FOO", False),
    ("GBP", "GBP", True),
    ("MXN", "MXN", True),
    ("JPY", "JPY", True),
    ("CAD", "CAD", True),
    # Case: every byte is case-fixed on its own.
    ("EUR", "EUR", True),
    ("usd-lower", "usd", True),
    ("mixed-case", "uSd", True),
    ("eur-title", "Eur", True),
    # Length is in bytes; anything but three is malformed.
    ("US", "US", False),
    ("USDD", "USDD", False),
    ("space-padded", " USD", False),
    ("trailing-space", "USD ", False),
    ("trailing-newline", "USD\n", False),
    ("inner-space", "U D", False),
    ("punctuation-between-Z-and-a", "US[", False),  # FixCase: bytes 0x5B..0x60 are not letters
    ("punctuation-after-z", "US{", False),  # ...nor 0x7B..0x7F once case-shifted
    ("long-s-upper-cases-to-S", "u\u017fd", False),  # str.upper() would make it "USD"
    ("dotless-i", "\u0131NR", False),  # str.upper() would make it "INR"
    ("fullwidth-letters", "\uff35\uff33\uff24", False),
    # Special and test codes are in the table.
    ("XXX", "XXX", True),
    ("XTS", "XTS", True),
    ("XAU-gold", "XAU", True),
    ("XDR", "XDR", True),
    ("XBA", "XBA", True),
    # Historic and fund codes are in the table (CLDR 32).
    ("DEM-historic", "DEM", True),
    ("FRF-historic", "FRF", True),
    ("ZWD-historic", "ZWD", True),
    ("VEF-replaced", "VEF", True),
    ("MRO-replaced", "MRO", True),
    ("HRK-replaced", "HRK", True),
    ("USN-fund", "USN", True),
    ("CLF-fund", "CLF", True),
    ("CNH-offshore", "CNH", True),
    # Codes after CLDR 32 are not.
    ("VES-2018", "VES", False),
    ("MRU-2018", "MRU", False),
    ("SLE-2022", "SLE", False),
    ("VED-2021", "VED", False),
    ("ZWG-2024", "ZWG", False),
    ("UYW", "UYW", False),
    ("XCG-2025", "XCG", False),
    # Table neighbours and ends.
    ("first-ADP", "ADP", True),
    ("last-ZWR", "ZWR", True),
    ("before-first", "AAA", False),
    ("after-last", "ZZZ", False),
    ("between-USD-and-USN", "USE", False),
]


@pytest.mark.parametrize(("code", "expected"), [r[1:] for r in CODES], ids=[r[0] for r in CODES])
def test_is_iso4217(code: str, expected: bool) -> None:
    assert is_iso4217(code) is expected


def test_table_is_the_x_text_index() -> None:
    # x/text v0.37.0 numCurrencies = 300; all upper-case three-letter ASCII.
    assert len(ISO4217_CODES) == 300
    assert all(len(c) == 3 and c.isascii() and c.isupper() and c.isalpha() for c in ISO4217_CODES)


def test_every_case_of_every_code_is_accepted() -> None:
    for code in ISO4217_CODES:
        assert is_iso4217(code)
        assert is_iso4217(code.lower())
        assert is_iso4217(code[0] + code[1:].lower())


def test_only_table_codes_are_accepted() -> None:
    letters = string.ascii_uppercase
    accepted = {a + b + c for a in letters for b in letters for c in letters if is_iso4217(a + b + c)}
    assert accepted == ISO4217_CODES


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("USD", None),
        ("eur", None),
        ("XXX", None),
        ("XYZ", "currency: tag is not a recognized currency"),
        ("FOO", "currency: tag is not a recognized currency"),
        ("US", "currency: tag is not well-formed"),
        ("USDD", "currency: tag is not well-formed"),
        ("U$D", "currency: tag is not well-formed"),
        ("u\u017fd", "currency: tag is not well-formed"),
        ("", "currency: tag is not well-formed"),
    ],
)
def test_parse_iso_error_texts(code: str, problem: str | None) -> None:
    assert iso4217_problem(code) == problem


@pytest.mark.parametrize(
    ("converter", "source", "target", "outcome"),
    [
        (RateTable.of({"EUR": {"USD": 1.1}}), "EUR", "USD", 1.1),
        (RateTable.of({"EUR": {"USD": 1.1}}), "XYZ", "USD", "currency: tag is not a recognized currency"),
        (RateTable.of({"EUR": {"USD": 1.1}}), "EUR", "US", "currency: tag is not well-formed"),
        (RateTable.of({}), "XYZ", "XYZ", "currency: tag is not a recognized currency"),  # parsed before compared
        (ConstantRates(), "USD", "USD", 1.0),
        (ConstantRates(), "EUR", "EUR", 1.0),
        (ConstantRates(), "XYZ", "USD", "currency: tag is not a recognized currency"),
        (ConstantRates(), "EUR", "USD", "Currency conversion rate not found: 'EUR' => 'USD'"),
    ],
)
def test_converters_parse_codes_first_as_pbs_go(converter, source: str, target: str, outcome) -> None:
    """PBS-Go's Rates and ConstantRates call ParseISO on both codes before any lookup."""
    if isinstance(outcome, float):
        assert converter.get_rate(source, target) == outcome
        return
    with pytest.raises(ConversionError) as caught:
        converter.get_rate(source, target)
    assert str(caught.value) == outcome
