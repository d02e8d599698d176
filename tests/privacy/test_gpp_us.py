"""GPP US sections 7-12: public vectors (prebid/go-gpp section tests, IABTechLab/iabgpp-java section
tests), round trips through a test-only encoder written from the IAB field tables, and go-gpp's errors."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.privacy.gpp import parse_gpp
from hbserver.privacy.gpp_us import USSectionError, decode_us_section

# The IAB field tables, in string order: (field, count); count 0 = the 6-bit Version, 1 = one 2-bit
# value, n > 1 = n 2-bit values. Kept apart from the decoder's own tables on purpose.
_MSPA = (("mspa_covered_transaction", 1), ("mspa_opt_out_option_mode", 1), ("mspa_service_provider_mode", 1))
FIELDS: dict[int, tuple[tuple[str, int], ...]] = {
    7: (
        ("version", 0), ("sharing_notice", 1), ("sale_opt_out_notice", 1), ("sharing_opt_out_notice", 1),
        ("targeted_advertising_opt_out_notice", 1), ("sensitive_data_processing_opt_out_notice", 1),
        ("sensitive_data_limit_use_notice", 1), ("sale_opt_out", 1), ("sharing_opt_out", 1),
        ("targeted_advertising_opt_out", 1), ("sensitive_data_processing", 16),
        ("known_child_sensitive_data_consents", 3), ("personal_data_consents", 1), *_MSPA,
    ),
    8: (
        ("version", 0), ("sale_opt_out_notice", 1), ("sharing_opt_out_notice", 1),
        ("sensitive_data_limit_use_notice", 1), ("sale_opt_out", 1), ("sharing_opt_out", 1),
        ("sensitive_data_processing", 9), ("known_child_sensitive_data_consents", 2), ("personal_data_consents", 1),
        *_MSPA,
    ),
    9: (
        ("version", 0), ("sharing_notice", 1), ("sale_opt_out_notice", 1), ("targeted_advertising_opt_out_notice", 1),
        ("sale_opt_out", 1), ("targeted_advertising_opt_out", 1), ("sensitive_data_processing", 8),
        ("known_child_sensitive_data_consents", 1), *_MSPA,
    ),
    10: (
        ("version", 0), ("sharing_notice", 1), ("sale_opt_out_notice", 1), ("targeted_advertising_opt_out_notice", 1),
        ("sale_opt_out", 1), ("targeted_advertising_opt_out", 1), ("sensitive_data_processing", 7),
        ("known_child_sensitive_data_consents", 1), *_MSPA,
    ),
    11: (
        ("version", 0), ("sharing_notice", 1), ("sale_opt_out_notice", 1), ("targeted_advertising_opt_out_notice", 1),
        ("sensitive_data_processing_opt_out_notice", 1), ("sale_opt_out", 1), ("targeted_advertising_opt_out", 1),
        ("sensitive_data_processing", 8), ("known_child_sensitive_data_consents", 1), *_MSPA,
    ),
    12: (
        ("version", 0), ("sharing_notice", 1), ("sale_opt_out_notice", 1), ("targeted_advertising_opt_out_notice", 1),
        ("sale_opt_out", 1), ("targeted_advertising_opt_out", 1), ("sensitive_data_processing", 8),
        ("known_child_sensitive_data_consents", 3), *_MSPA,
    ),
}
WITH_GPC = {7, 8, 10, 12}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _b64(bits: str) -> str:
    bits += "0" * (-len(bits) % 6)
    return "".join(ALPHABET[int(bits[i : i + 6], 2)] for i in range(0, len(bits), 6))


def encode_us(section_id: int, gpc: bool | None = None, **values: Any) -> str:
    """A US section string: unnamed fields are 0 (Version 1, MspaCoveredTransaction 1); lists are
    given as tuples (a one-value KnownChildSensitiveDataConsents as an int); ``gpc`` adds the GPC
    subsection. usnat gets the current shape (16 and 3 list items)."""
    defaults = {"version": 1, "mspa_covered_transaction": 1}
    bits = ""
    for name, count in FIELDS[section_id]:
        value = values.pop(name, defaults.get(name, 0))
        if count == 0:
            bits += format(value, "06b")
        elif count == 1:
            bits += format(value, "02b")
        else:
            items = tuple(value) if value else (0,) * count
            assert len(items) == count, (name, items)
            bits += "".join(format(v, "02b") for v in items)
    assert not values, f"not a field of section {section_id}: {values}"
    out = _b64(bits)
    if gpc is not None:
        out += "." + _b64("01" + ("1" if gpc else "0"))
    return out


def fields_of(section_id: int, value: str) -> dict[str, Any]:
    decoded = decode_us_section(section_id, value)
    return {name: getattr(decoded, name) for name, _ in FIELDS[section_id]} | {"gpc": decoded.gpc}


SDP12 = (2, 1, 2, 2, 1, 0, 2, 2, 0, 1, 2, 1)

# (name, section id, string, fields expected; unnamed fields are not checked)
VECTORS = [
    ("go-gpp usnat", 7, "DSJgmkoZJSA.YA", {
        "version": 3, "sharing_notice": 1, "sale_opt_out_notice": 0, "sharing_opt_out_notice": 2,
        "targeted_advertising_opt_out_notice": 0, "sensitive_data_processing_opt_out_notice": 2,
        "sensitive_data_limit_use_notice": 1, "sale_opt_out": 2, "sharing_opt_out": 0,
        "targeted_advertising_opt_out": 0, "sensitive_data_processing": SDP12,
        "known_child_sensitive_data_consents": (0, 2), "personal_data_consents": 1, "mspa_covered_transaction": 1,
        "mspa_opt_out_option_mode": 0, "mspa_service_provider_mode": 2, "gpc_segment_included": True, "gpc": True,
    }),
    ("go-gpp usca", 8, "xlgWEYCY.YA", {
        "version": 49, "sale_opt_out_notice": 2, "sharing_opt_out_notice": 1, "sensitive_data_limit_use_notice": 1,
        "sale_opt_out": 2, "sharing_opt_out": 0, "sensitive_data_processing": (0, 1, 1, 2, 0, 1, 0, 1, 2),
        "known_child_sensitive_data_consents": (0, 0), "personal_data_consents": 0, "mspa_covered_transaction": 2,
        "mspa_opt_out_option_mode": 1, "mspa_service_provider_mode": 2, "gpc": True, "sharing_notice": None,
    }),
    ("go-gpp usca without GPC", 8, "xlgWEYCZAA", {"version": 49, "gpc_segment_included": False, "gpc": False}),
    ("go-gpp usva", 9, "bSFgmiU", {
        "version": 27, "sharing_notice": 1, "sale_opt_out_notice": 0, "targeted_advertising_opt_out_notice": 2,
        "sale_opt_out": 0, "targeted_advertising_opt_out": 1, "sensitive_data_processing": (1, 2, 0, 0, 2, 1, 2, 2),
        "known_child_sensitive_data_consents": (0,), "mspa_covered_transaction": 2, "mspa_opt_out_option_mode": 1,
        "mspa_service_provider_mode": 1, "gpc": None, "personal_data_consents": None,
    }),
    ("go-gpp usco", 10, "bSFgmJQ.YA", {
        "version": 27, "sharing_notice": 1, "targeted_advertising_opt_out_notice": 2,
        "targeted_advertising_opt_out": 1, "sensitive_data_processing": (1, 2, 0, 0, 2, 1, 2),
        "known_child_sensitive_data_consents": (0,), "mspa_covered_transaction": 2, "mspa_service_provider_mode": 1,
        "gpc": True,
    }),
    ("go-gpp usut", 11, "bSRYJllA", {
        "version": 27, "sharing_notice": 1, "targeted_advertising_opt_out_notice": 2,
        "sensitive_data_processing_opt_out_notice": 1, "sale_opt_out": 0, "targeted_advertising_opt_out": 1,
        "sensitive_data_processing": (1, 2, 0, 0, 2, 1, 2, 1), "known_child_sensitive_data_consents": (1,),
        "mspa_covered_transaction": 2, "mspa_opt_out_option_mode": 1, "mspa_service_provider_mode": 1, "gpc": None,
    }),
    ("go-gpp usct", 12, "bSFgmSZQ.YA", {
        "version": 27, "sensitive_data_processing": (1, 2, 0, 0, 2, 1, 2, 1),
        "known_child_sensitive_data_consents": (0, 2, 1), "mspa_covered_transaction": 2, "gpc": True,
    }),
    ("iabgpp-java usnat", 7, "BVVVkkkkkpFY.YA", {
        "version": 1, "sharing_notice": 1, "sale_opt_out_notice": 1, "sharing_opt_out_notice": 1,
        "targeted_advertising_opt_out_notice": 1, "sensitive_data_processing_opt_out_notice": 1,
        "sensitive_data_limit_use_notice": 1, "sale_opt_out": 1, "sharing_opt_out": 1,
        "targeted_advertising_opt_out": 1, "sensitive_data_processing": (2, 1, 0) * 5 + (2,),
        "known_child_sensitive_data_consents": (2, 1, 0), "personal_data_consents": 1, "mspa_covered_transaction": 1,
        "mspa_opt_out_option_mode": 1, "mspa_service_provider_mode": 2, "gpc": True,
    }),
    ("iabgpp-java usnat without GPC", 7, "BVVVkkkkkpFY", {"gpc_segment_included": False, "gpc": False}),
    ("iabgpp-java usnat first shape", 7, "BVQqAAAACg", {
        "sharing_notice": 1, "sensitive_data_processing_opt_out_notice": 0, "sale_opt_out": 2, "sharing_opt_out": 2,
        "targeted_advertising_opt_out": 2, "sensitive_data_processing": (0,) * 12,
        "known_child_sensitive_data_consents": (0, 0), "personal_data_consents": 2, "mspa_covered_transaction": 2,
        "mspa_service_provider_mode": 0, "gpc": False,
    }),
    ("iabgpp-java usnat defaults", 7, "BAAAAAAAAABA.QA", {
        "version": 1, "sensitive_data_processing": (0,) * 16, "known_child_sensitive_data_consents": (0, 0, 0),
        "mspa_covered_transaction": 1, "gpc_segment_included": True, "gpc": False,
    }),
    ("iabgpp-java usca", 8, "BVWSSSVY.YA", {
        "sale_opt_out_notice": 1, "sensitive_data_limit_use_notice": 1, "sale_opt_out": 1, "sharing_opt_out": 1,
        "sensitive_data_processing": (2, 1, 0, 2, 1, 0, 2, 1, 0), "known_child_sensitive_data_consents": (2, 1),
        "personal_data_consents": 1, "mspa_opt_out_option_mode": 1, "mspa_service_provider_mode": 2, "gpc": True,
    }),
    ("iabgpp-java usva", 9, "BVWSSVY", {
        "sharing_notice": 1, "sale_opt_out": 1, "sensitive_data_processing": (2, 1, 0, 2, 1, 0, 2, 1),
        "known_child_sensitive_data_consents": (1,), "mspa_service_provider_mode": 2,
    }),
    ("iabgpp-java usco", 10, "BVWSSVg.YA", {
        "sensitive_data_processing": (2, 1, 0, 2, 1, 0, 2), "known_child_sensitive_data_consents": (1,), "gpc": True,
    }),
    ("iabgpp-java usut", 11, "BVVkklWA", {
        "sensitive_data_processing": (2, 1, 0, 2, 1, 0, 2, 1), "known_child_sensitive_data_consents": (1,),
        "mspa_service_provider_mode": 2,
    }),
    ("iabgpp-java usct", 12, "BVWSSZFg.YA", {
        "sensitive_data_processing": (2, 1, 0, 2, 1, 0, 2, 1), "known_child_sensitive_data_consents": (2, 1, 0),
        "mspa_service_provider_mode": 2, "gpc": True,
    }),
]


@pytest.mark.parametrize(("name", "sid", "value", "expected"), VECTORS, ids=[row[0] for row in VECTORS])
def test_public_vectors(name: str, sid: int, value: str, expected: dict[str, Any]) -> None:
    decoded = decode_us_section(sid, value)
    assert decoded.section_id == sid
    assert {key: getattr(decoded, key) for key in expected} == expected


def test_go_gpp_string_with_every_us_section() -> None:
    gpp = parse_gpp("DBABrGA~DSJgmkoZJSA.YA~BlgWEYCY.QA~BSFgmiU~bSFgmJQ.YA~BWJYJllA~bSFgmSZQ.YA")
    decoded = {sid: decode_us_section(sid, gpp.sections[sid]) for sid in gpp.section_ids}
    assert sorted(decoded) == [7, 8, 9, 10, 11, 12]
    assert decoded[8].gpc is False and decoded[10].gpc is True and decoded[9].gpc is None


ROUND_TRIPS = [
    ("usnat every notice", 7, {"sharing_notice": 1, "sale_opt_out_notice": 2, "sharing_opt_out_notice": 1,
                               "targeted_advertising_opt_out_notice": 2, "sensitive_data_limit_use_notice": 1}),
    ("usnat opt-outs and lists", 7, {"sale_opt_out": 1, "sharing_opt_out": 2, "targeted_advertising_opt_out": 1,
                                     "sensitive_data_processing": (1, 2) * 8,
                                     "known_child_sensitive_data_consents": (2, 0, 1)}),
    ("usnat personal data and MSPA", 7, {"personal_data_consents": 2, "mspa_covered_transaction": 2,
                                         "mspa_opt_out_option_mode": 1, "mspa_service_provider_mode": 1}),
    ("usca", 8, {"sale_opt_out_notice": 1, "sharing_opt_out": 1, "sensitive_data_processing": (0, 1, 2) * 3,
                 "known_child_sensitive_data_consents": (1, 2), "personal_data_consents": 1}),
    ("usva single known child", 9, {"known_child_sensitive_data_consents": 2, "sensitive_data_processing": (2,) * 8}),
    ("usco", 10, {"targeted_advertising_opt_out": 2, "sensitive_data_processing": (1,) * 7}),
    ("usut sensitive notice", 11, {"sensitive_data_processing_opt_out_notice": 2,
                                   "known_child_sensitive_data_consents": 1}),
    ("usct three known child values", 12, {"known_child_sensitive_data_consents": (2, 2, 1), "sale_opt_out": 1}),
    ("version 63", 12, {"version": 63}),
]


ROUND_TRIP_CASES = [
    pytest.param(sid, values, gpc, id=f"{name}, gpc {gpc}")
    for name, sid, values in ROUND_TRIPS
    for gpc in ((None, False, True) if sid in WITH_GPC else (None,))
]


@pytest.mark.parametrize(("sid", "values", "gpc"), ROUND_TRIP_CASES)
def test_round_trip(sid: int, values: dict[str, Any], gpc: bool | None) -> None:
    got = fields_of(sid, encode_us(sid, gpc=gpc, **values))
    for key, value in values.items():
        assert got[key] == (value if not isinstance(value, int) or key != "known_child_sensitive_data_consents"
                            else (value,))
    expected_gpc = None if sid not in WITH_GPC else bool(gpc)
    assert got["gpc"] is expected_gpc


@pytest.mark.parametrize(
    ("name", "value", "sdp", "children"),
    [
        ("10 characters: first shape", "BVQqAAAACg", 12, 2),
        ("11 characters: first shape (iabgpp-java)", "BVQqAAAACgA", 12, 2),
        ("12 characters: current shape", "BAAAAAAAAABA", 16, 3),
        ("longer: current shape", "BAAAAAAAAABAAAAA", 16, 3),
    ],
)
def test_usnat_shape_by_length(name: str, value: str, sdp: int, children: int) -> None:
    decoded = decode_us_section(7, value)
    assert (len(decoded.sensitive_data_processing), len(decoded.known_child_sensitive_data_consents)) == (sdp, children)


def test_usnat_first_shape_fields_after_the_lists() -> None:
    # 6 + 9*2 + 12*2 + 2*2 bits, then PersonalDataConsents 2, MSPA 1, 0, 1 (the first release's layout)
    bits = "000001" + "00" * 9 + "01" * 12 + "10" * 2 + "10" + "01" + "00" + "01"
    decoded = decode_us_section(7, _b64(bits))
    assert decoded.sensitive_data_processing == (1,) * 12 and decoded.known_child_sensitive_data_consents == (2, 2)
    assert (decoded.personal_data_consents, decoded.mspa_covered_transaction, decoded.mspa_opt_out_option_mode,
            decoded.mspa_service_provider_mode) == (2, 1, 0, 1)


ERRORS = [
    ("go-gpp: usca cut short", 8, "xlgWE",
     "error parsing uspca consent string: unable to set field CoreSegment.SensitiveDataProcessing due to parse "
     "error: expected 2 bits to start at bit 32, but the byte array was only 4 bytes long"),
    ("empty section", 9, "",
     "error parsing uspva consent string: unable to set field CoreSegment.Version due to parse error: expected 6 "
     "bits to start at bit 0, but the byte array was only 0 bytes long"),
    ("usnat of 9 characters", 7, "BVQqAAAAC",
     "error parsing uspnat consent string: unable to set field CoreSegment.MspaOptOutOptionMode due to parse "
     "error: expected 2 bits to start at bit 56, but the byte array was only 7 bytes long"),
    ("not base64url", 10, "bSF+mJQ",
     "error parsing uspco consent string: illegal base64 data at input byte 3"),
    ("usva has no GPC subsection", 9, "bSFgmiU.YA",
     "error parsing uspva consent string: illegal base64 data at input byte 7"),
    ("usut has no GPC subsection", 11, "bSRYJllA.YA",
     "error parsing usput consent string: illegal base64 data at input byte 8"),
    ("GPC subsection type must be 1", 12, "bSFgmSZQ.oA",
     "error parsing uspct consent string: invalid subsection type 2 for GPC segment"),
    ("empty GPC subsection", 7, "BVVVkkkkkpFY.",
     "error parsing uspnat consent string: unable to set field GPCSegment.SubsectionType due to parse error: "
     "expected 2 bits to start at bit 0, but the byte array was only 0 bytes long"),
    ("bad GPC character", 8, "xlgWEYCY.Y=",
     "error parsing uspca consent string: illegal base64 data at input byte 1"),
]


@pytest.mark.parametrize(("name", "sid", "value", "message"), ERRORS, ids=[row[0] for row in ERRORS])
def test_errors(name: str, sid: int, value: str, message: str) -> None:
    with pytest.raises(USSectionError) as info:
        decode_us_section(sid, value)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError) and info.value.section_id == sid


@pytest.mark.parametrize("sid", [2, 6, 13])
def test_not_a_us_section(sid: int) -> None:
    with pytest.raises(ValueError, match="not a US section"):
        decode_us_section(sid, "BVVVkkkkkpFY")


def test_values_are_not_range_checked() -> None:
    # neither go-gpp nor iabgpp-java refuses a 2-bit value of 3 when decoding
    assert decode_us_section(7, encode_us(7, sale_opt_out=3)).sale_opt_out == 3
