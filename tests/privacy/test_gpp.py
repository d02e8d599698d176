"""GPP header and gpp_sid parsing. Vectors from prebid/go-gpp parse_test.go, IABTechLab/iabgpp-es
HeaderV1.test.ts and Prebid Server's /setuid and /cookie_sync tests (reference §7 TV8, TV9, TV19)."""

from __future__ import annotations

import pytest

from hbserver.privacy.gpp import SECTION_TCF_EU_V2, SECTION_US_PRIVACY, GPPError, parse_gpp, parse_gpp_sid

TCF = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"
TCF_B = (
    "CPrzpwAPrzpwAEXahAENC7CwAP_AAH_AACiQIgAB4C5GQCFDeHpdAJsUAAQDQMhAAKAgAAQFgYABCBoAAIwCAAAwAACCAAoCAAIAIABBAAE"
    "AAAAAAAEAQAAAAAEAAEAAAAAAIAAAAAAAAAAAAAAIAAAAAAAAAAAAAAAAyAAAAAIAEEAAAAACAAEAAAgAABAAAgAAAAAAAAAAAAAIAAAAA"
    "AAAAAAEEQIGAACwAKgAXAAyAByAEAAQgAkABkADQAHIAPIAfAB_AEQARQAmABPACkAF8AMQAZgA0AB-AEIAKMAUoAyIBlAGWAOeAdwB3gED"
    "gIOAhABEQCLAE7AKCAU8AtIBdQDFAGvAOoAvMBkwDLAGfANVAfuBBQCIAAAA"
)


@pytest.mark.parametrize(
    ("value", "ids", "sections"),
    [
        ("DBABMA~" + TCF, (2,), {2: TCF}),
        ("DBACNYA~" + TCF + "~1YNN", (2, 6), {2: TCF, 6: "1YNN"}),
        ("DBABjw~" + TCF + "~1YNN", (5, 6), {5: TCF, 6: "1YNN"}),  # Canadian TCF, then US Privacy
        ("DBABBgA~xlgWEYCZAA", (8,), {8: "xlgWEYCZAA"}),
        ("DBABRgA~bSFgmiU", (9,), {9: "bSFgmiU"}),
        ("DBACOe~" + TCF_B + "~" + TCF + "~1-N-", (2, 5, 6), {2: TCF_B, 5: TCF, 6: "1-N-"}),
        ("DBAA", (), {}),
        ("DBABM~" + TCF, (2,), {2: TCF}),  # iabgpp-es's older, shorter header encoding
        ("DBACNY~" + TCF + "~1YNN", (2, 6), {2: TCF, 6: "1YNN"}),
    ],
)
def test_public_vectors(value: str, ids: tuple[int, ...], sections: dict[int, str]) -> None:
    gpp = parse_gpp(value)
    assert (gpp.version, gpp.section_ids, gpp.sections) == (1, ids, sections)


def test_tv19_consent_from_tcf_section() -> None:
    assert parse_gpp("DBABMA~" + TCF).sections.get(SECTION_TCF_EU_V2) == TCF
    no_tcf = parse_gpp("DBABjw~" + TCF + "~1YNN")
    assert SECTION_TCF_EU_V2 not in no_tcf.sections and no_tcf.sections[SECTION_US_PRIVACY] == "1YNN"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("malformed", "error parsing GPP header, header must have type=3"),
        ("malformedGPPString", "error parsing GPP header, header must have type=3"),
        ("", "error parsing GPP header, header must have type=3"),
        ("CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA", "error parsing GPP header, header must have type=3"),
        ("DB!BMA~x", "error parsing GPP header, base64 decoding: illegal base64 data at input byte 2"),
        ("DB+BMA~x", "error parsing GPP header, base64 decoding: illegal base64 data at input byte 2"),
        (
            "DBGBMA~" + TCF,  # go-gpp "GPP-tcf-error"
            "error parsing GPP header, section identifiers: error reading an int offset value in a "
            "Range(Fibonacci) entry(1): error reading bit 12 of Integer(Fibonacci): expected 1 bit at bit 40, "
            "but the byte array was only 5 bytes long",
        ),
        (
            "DBABMA",
            "error parsing GPP header, section IDs do not match the number of sections: found 1 IDs, have 0 sections",
        ),
        (
            "DBABMA~a~b",
            "error parsing GPP header, section IDs do not match the number of sections: found 1 IDs, have 2 sections",
        ),
        (
            "DBAA~a",
            "error parsing GPP header, section IDs do not match the number of sections: found 0 IDs, have 1 sections",
        ),
    ],
)
def test_errors(value: str, message: str) -> None:
    with pytest.raises(GPPError) as info:
        parse_gpp(value)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


# A test-only header encoder (GPP spec: 6-bit type 3, 6-bit version, Range(Fibonacci) of ids).
FIB = [1, 2]
while len(FIB) < 20:
    FIB.append(FIB[-1] + FIB[-2])


def fibonacci_code(n: int) -> str:
    bits = ["0"] * len(FIB)
    for i in range(len(FIB) - 1, -1, -1):
        if FIB[i] <= n:
            bits[i] = "1"
            n -= FIB[i]
    assert n == 0
    return "".join(bits).rstrip("0") + "1"


def encode_header(ids: list[int], version: int = 1) -> str:
    runs: list[list[int]] = []
    for sid in sorted(ids):
        if runs and sid == runs[-1][1] + 1:
            runs[-1][1] = sid
        else:
            runs.append([sid, sid])
    bits = format(3, "06b") + format(version, "06b") + format(len(runs), "012b")
    previous = 0
    for start, end in runs:
        if start == end:
            bits += "0" + fibonacci_code(start - previous)
        else:
            bits += "1" + fibonacci_code(start - previous) + fibonacci_code(end - start)
        previous = end
    bits += "0" * (-len(bits) % 8)
    bits += "0" * (-len(bits) % 6)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "".join(alphabet[int(bits[i : i + 6], 2)] for i in range(0, len(bits), 6))


@pytest.mark.parametrize(
    "ids", [[], [2], [2, 6], [7, 8, 9, 10, 11, 12], [1, 2, 3, 5, 8, 13, 21], [2, 6, 7, 8, 9, 10, 11, 12, 20], [150]]
)
def test_round_trip(ids: list[int]) -> None:
    value = "~".join([encode_header(ids), *[f"s{sid}" for sid in ids]])
    gpp = parse_gpp(value)
    assert gpp.section_ids == tuple(ids)
    assert gpp.sections == {sid: f"s{sid}" for sid in ids}


def test_large_range_is_counted_not_expanded() -> None:
    with pytest.raises(GPPError, match="found 4000 IDs, have 1 sections"):
        parse_gpp(encode_header(list(range(1, 4001))) + "~x")


def test_encoder_matches_iabgpp() -> None:
    assert [encode_header(ids) for ids in ([], [2], [2, 6])] == ["DBAA", "DBABMA", "DBACNYA"]


def test_version_is_read() -> None:
    assert parse_gpp(encode_header([2], version=2) + "~x").version == 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ()),
        ("2", (2,)),
        ("2,6", (2, 6)),
        ("-128,127", (-128, 127)),
        ("+7,007,-0", (7, 7, 0)),
        ("100,101", (100, 101)),
    ],
)
def test_parse_gpp_sid(value: str, expected: tuple[int, ...]) -> None:
    assert parse_gpp_sid(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("malformed", 'strconv.ParseInt: parsing "malformed": invalid syntax'),
        ("2,,6", 'strconv.ParseInt: parsing "": invalid syntax'),
        ("2,", 'strconv.ParseInt: parsing "": invalid syntax'),
        (" 2", 'strconv.ParseInt: parsing " 2": invalid syntax'),
        ("1_0", 'strconv.ParseInt: parsing "1_0": invalid syntax'),
        ("0x10", 'strconv.ParseInt: parsing "0x10": invalid syntax'),
        ("\u0663", 'strconv.ParseInt: parsing "\u0663": invalid syntax'),  # Arabic-Indic digit three
        ("128", 'strconv.ParseInt: parsing "128": value out of range'),
        ("2,-129", 'strconv.ParseInt: parsing "-129": value out of range'),
        # issue 38: str.isdigit() takes "²" (int() does not); int() raises past 4,300 digits
        ("\u00b2", 'strconv.ParseInt: parsing "\u00b2": invalid syntax'),
        ("9" * 5000, f'strconv.ParseInt: parsing "{"9" * 5000}": value out of range'),
    ],
)
def test_parse_gpp_sid_errors(value: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_gpp_sid(value)
    assert str(info.value) == message
