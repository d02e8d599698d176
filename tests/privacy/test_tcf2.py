"""TCF v2 decoder: public vectors (expected values carried over from their tests), malformed
strings, and round trips through the test encoder."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hbserver.privacy import tcf2
from hbserver.privacy.tcf2 import ConsentError, TCF2Consent, parse_tcf2, parse_tcf2_cached
from tests.privacy.tcf_encoder import CoreSegment, Restriction, bits_to_base64url, range_entries

PBS_CONSENT = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"  # Prebid Server's tests and GPP vectors


def purposes(c: TCF2Consent) -> list[int]:
    return [p for p in range(1, 25) if c.purpose_consent(p)]


def purposes_li(c: TCF2Consent) -> list[int]:
    return [p for p in range(1, 25) if c.purpose_li(p)]


def special_features(c: TCF2Consent) -> list[int]:
    return [f for f in range(1, 13) if c.special_feature_optin(f)]


def observed(c: TCF2Consent) -> dict[str, Any]:
    """Everything decoded, in plain values."""
    return {
        "version": c.version,
        "created": c.created,
        "last_updated": c.last_updated,
        "cmp_id": c.cmp_id,
        "cmp_version": c.cmp_version,
        "consent_screen": c.consent_screen,
        "consent_language": c.consent_language,
        "vendor_list_version": c.vendor_list_version,
        "tcf_policy_version": c.tcf_policy_version,
        "is_service_specific": c.is_service_specific,
        "use_non_standard_texts": c.use_non_standard_texts,
        "special_features": special_features(c),
        "purposes": purposes(c),
        "purposes_li": purposes_li(c),
        "purpose_one_treatment": c.purpose_one_treatment,
        "publisher_cc": c.publisher_cc,
        "max_vendor_id": c.vendor_consents.max_vendor_id,
        "vendors": c.vendor_consents.ids(),
        "vendor_count": len(c.vendor_consents),
        "vendors_li": c.vendor_legitimate_interests.ids(),
        "vendor_li_count": len(c.vendor_legitimate_interests),
        "restrictions": [(r.purpose, r.restriction_type, r.vendors.ids()) for r in c.publisher_restrictions],
    }


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# (source, string, expected subset of observed()). Sources:
#   go-gdpr = prebid/go-gdpr vendorconsent/tcf2/*_test.go and vendorconsent/consent20_test.go
#   iabtcf-java = InteractiveAdvertisingBureau/iabtcf-java TCStringV2Test.java
#   iabgpp-es = IABTechLab/iabgpp-es modules/cmpapi/test/encoder/section/TcfEuV2.test.ts
PUBLIC_VECTORS = [
    (
        "go-gdpr bitfield",
        "COwGVJOOwGVJOADACHENAOCAAO6as_-AAAhoAFNLAAoAAAA",
        {
            "version": 2,
            "cmp_id": 3,
            "cmp_version": 2,
            "consent_screen": 7,
            "consent_language": "EN",
            "vendor_list_version": 14,
            "max_vendor_id": 10,
            "purposes": [1, 2, 3, 5, 6, 7, 9, 12, 13, 15, 17, 19, 20, 23, 24],
            "vendors": [1, 2, 4, 7, 9, 10],
        },
    ),
    (
        "go-gdpr range section",
        "COyiILmOyiILmADACHENAPCAAAAAAAAAAAAAE5QBgALgAqgD8AQACSwEygJyAAAAAA",
        {
            "cmp_id": 3,
            "cmp_version": 2,
            "consent_screen": 7,
            "consent_language": "EN",
            "vendor_list_version": 15,
            "max_vendor_id": 626,
            "vendors": [23, 42, 126, 127, 128, 587, 613, 626],
        },
    ),
    (
        "go-gdpr created/updated",
        "COvcSpYOvcSpYC9AAAENAPCAAAAAAAAAAAAACvwDQABAAIAAYABIAC4AJQAagA9ACEAPgAjIBJoCvAK-AAAAAA",
        {"created": utc(2020, 2, 27, 19, 51, 49, 600000), "last_updated": utc(2020, 2, 27, 19, 51, 49, 600000)},
    ),
    (
        "go-gdpr large cmp id",
        "COyiBqdOyiBqdObAAAENAfCIAP8AAH-AAAAAB4AXQQgEAAAgoAAAAABAIYQUAAAAAAAAAAAAAAAIQIQCxIvkgQMAAAABgAIAAAAAAAAAAABAZAkAAA",
        {"cmp_id": 923},
    ),
    ("go-gdpr large cmp version", "COyiCPlOyiCPlKxMIAENAfCAAAAAAAAAAAAAAAAAAAAA", {"cmp_version": 776}),
    ("go-gdpr large consent screen", "COyiFYuOyiFYuDKAA4ENAfCAAAAAAAAAAAAAAAAAAAAA", {"consent_screen": 56}),
    ("go-gdpr language BG", "COyiHgFOyiHgFN4ABABGAPCAAAAAAAAAAAAAAFAAAAoAAAA", {"consent_language": "BG"}),
    ("go-gdpr language SV", "COyiHgFOyiHgFN4ABASVAPCAAAAAAAAAAAAAAFAAAAoAAAA", {"consent_language": "SV"}),
    (
        "go-gdpr P1T, special feature, LI transparency",
        "COx3XOeOx3XOeLkAAAENAfCIAAAAAHgAAIAAAAAAAAAA",
        {"purpose_one_treatment": True, "special_features": [1], "purposes_li": [2, 3, 4, 5]},
    ),
    (
        "go-gdpr max vendor id 0",
        "COwJz-rOwJz-rMLAEAFRAPCgAAAAAAAAAAqIAAAAAAAA",
        {"max_vendor_id": 0, "vendor_list_version": 15, "vendors": []},
    ),
    (
        "go-gdpr pub restrictions (7,1,32)",
        "COwAdDhOwAdDhN4ABAENAPCgAAQAAv___wAAAFP_AAp_4AI6ACACAA",
        {
            "cmp_id": 888,
            "cmp_version": 1,
            "consent_screen": 0,
            "consent_language": "EN",
            "vendor_list_version": 15,
            "max_vendor_id": 10,
        },
    ),
    (
        "go-gdpr TCF 2.3 disclosed vendors segment",
        "CQSbk4AQSbk4ANwAAAENAwCgAAAAAAAAAAYgACPAAAAA.IDKQA4AAgAKAGQAygAAA.YAAAAAAAAAAA",
        {"version": 2},
    ),
    (
        "iabtcf-java all core fields",
        "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA",
        {
            "version": 2,
            "created": utc(2020, 1, 26, 17, 1),
            "last_updated": utc(2021, 2, 2, 17, 1),
            "cmp_id": 675,
            "cmp_version": 2,
            "consent_screen": 1,
            "vendor_list_version": 15,
            "tcf_policy_version": 2,
            "consent_language": "EN",
            "publisher_cc": "AA",
            "is_service_specific": False,
            "purpose_one_treatment": True,
            "use_non_standard_texts": False,
            "special_features": [1],
            "purposes": [2, 10],
            "purposes_li": [2, 9],
        },
    ),
    (
        "iabtcf-java bit fields",
        "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA",
        {
            "purposes": [3, 4, 5, 6, 7, 8, 9],
            "vendors": [23, 37, 47, 48, 53, 65, 98],
            "vendors_li": [37, 47, 48, 53, 65, 98, 129],
        },
    ),
    (
        "iabtcf-java with allowed and disclosed segments",
        "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
        ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA",
        {"vendors": [23, 37, 47, 48, 53, 65, 98]},
    ),
    (
        "iabtcf-java range-encoded LI",
        "COv__-wOv__-wC2AAAENAPCgAAAAAAAAAAAAA_wAQA_gEBABAEAAAA",
        {"vendors_li": [128]},
    ),
    (
        "iabtcf-java two ranges",
        "COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAYFfAV-BVkAGBVYFWAAA"
        ".IFoEUQQgAIQwgIwQABAEAAAAOIAACAIAAAAQAIAgEAACEAAAAAgAQBAAAAAAAGBAAgAAAAAAAFAAECAAAgAAQARAEQAAAAAJAAIAAgAAAYQEAAAQmAgBC3ZAYzUw",
        {"vendors": [702, 703]},
    ),
    (
        "iabtcf-java one range",
        "COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAQFfgUbABAUaAAA"
        ".IFoEUQQgAIQwgIwQABAEAAAAOIAACAIAAAAQAIAgEAACEAAAAAgAQBAAAAAAAGBAAgAAAAAAAFAAECAAAgAAQARAEQAAAAAJAAIAAgAAAYQEAAAQmAgBC3ZAYzUw",
        {"vendors": [703]},
    ),
    ("iabtcf-java purposes 1 and 2", "COwxsONOwxsONKpAAAENAdCAAMAAAAAAAAAAAAAAAAAA", {"purposes": [1, 2]}),
    (
        "iabgpp-es decode",
        "CPcqBNJPcqBNJNwAAAENAwCAAAAAAAAAAAAAAAAAAAAA.YAAAAAAAAAA.QGLtV_T9fb2vj-_Z99_tkeYwf95y3p-wzhheMs-8NyZeH_B4Wv2M"
        "yvBX4JiQKGRgksjLBAQdtHGlcTQgBwIlViTLMYk2MjzNKJrJEilsbO2dYGD9Pn8HT3ZCY70-vv__7v3ff_3g",
        {
            "cmp_id": 880,
            "cmp_version": 0,
            "consent_screen": 0,
            "consent_language": "EN",
            "vendor_list_version": 48,
            "tcf_policy_version": 2,
            "is_service_specific": False,
            "use_non_standard_texts": False,
            "purpose_one_treatment": False,
            "publisher_cc": "AA",
        },
    ),
    (
        "iabgpp-es decode 2",
        "CPi8wgAPi8wgAAOACBENCuCoAP_AAEfAACiQJHNd_H__bX9n-f7_6ft0eY1f9_r37uQzDhfNk-8F3L_W_LwX_2E7NF36tq4KmR4ku1LBIUNt"
        "HMnUDUmxaokVrzHsak2cpzNKJ_BkknsZe2dYGF9vm5tj-QKZ7_5_d3f52T_9_9v-39z33913v3d93-_13LjdV5_9H_v9fR_b8_Kf9_5-_4v8"
        "_____3_e______8AEEggCTDVuIAuxLHAm0DCKBECMKwkKoFABBQDC0QGADg4KdlYBPrCBAAgFAEYEQIcAUYEAgAAAgCQiACQIsEAAAIgEAAIAE"
        "QiEABAwCCgAsDAIAAQDQMUQoABAkIMiAiKUwICIEggJbKhBKC6Q0wgCrLACgkRsFAAiAAAUgACAsHAMESAlYsECTFG-QAjBCgFEqFaAGGgA"
        "wABBI4RABgACCRwqADAAEEjgA",
        {
            "cmp_id": 14,
            "cmp_version": 2,
            "consent_screen": 1,
            "vendor_list_version": 174,
            "tcf_policy_version": 2,
            "is_service_specific": True,
            "special_features": [1],
            "purposes": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            "purposes_li": [2, 6, 7, 8, 9, 10],
            "purpose_one_treatment": False,
            "publisher_cc": "US",
            "vendor_count": 772,
            "vendor_li_count": 280,
        },
    ),
    (
        "iabgpp-es decode 3",
        "CPgA5EAPgA5EAAOACBENCuCoAP_AAEfAACiQI0Nd_H__bX9n-f7_6Pt0cY1f9_r3ruQzDhfFk-8F3L_W3LwX32E7NF36pq4KmR4ku1LBIQFt"
        "HMnUDUmxaokVrzHsak2cpyNKI7BkknsZe2dYGF9Pm5lD-QKZ7_5_d3f52T_9_9v-39z339V3v3d93-_12PjdV599H_v9fR_b8_Kf9_5-_4v8"
        "___4IQAAAAQQ_AJMNW4gC7EscCbQMIoAQIwrCQqAUAEFAMLRAYAODgpmVgEusIEACAUARgRAhxBRgQCAAACAJCIAJAiwQAIAiAQAAgARAIQA"
        "EDAIKACwMAgABANAxACgAECQgyICIpTAgIgSCAlsqEEoKpDTCAKssAKARGwUACIAABSAAICwcAwRICViwQJMUbwAw0AGAAIJHCIAMAAQSOFQ"
        "AYAAgkcA",
        {"vendor_list_version": 174, "publisher_cc": "US", "vendor_count": 693, "vendor_li_count": 254},
    ),
    (
        "iabgpp-es decode 4",
        "COv_eg6Ov_eg6AOADBENAaCgAP_AAH_AACiQAVEUQQoAIQAqIoghAAQgAA.YAAAAAAAAAAAAAAAAAA",
        {
            "cmp_id": 14,
            "cmp_version": 3,
            "consent_screen": 1,
            "consent_language": "EN",
            "vendor_list_version": 26,
            "tcf_policy_version": 2,
            "is_service_specific": True,
            "use_non_standard_texts": False,
            "special_features": [],
            "purposes": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            "purposes_li": [2, 3, 4, 5, 6, 7, 8, 9, 10],
            "purpose_one_treatment": False,
            "publisher_cc": "US",
            "vendors": [2, 6, 8, 12, 18, 23, 25, 37, 42],
            "vendors_li": [2, 6, 8, 12, 18, 23, 37, 42],
        },
    ),
]


@pytest.mark.parametrize(("source", "consent", "expected"), PUBLIC_VECTORS, ids=[v[0] for v in PUBLIC_VECTORS])
def test_public_vectors(source: str, consent: str, expected: dict[str, Any]) -> None:
    got = observed(parse_tcf2(consent))
    assert {k: got[k] for k in expected} == expected


def test_iabgpp_decode_2_vendor_list_ends() -> None:
    # iabgpp-es "decode 2": the counts above; here the first few ids as a spot check of bit order.
    c = parse_tcf2(next(v[1] for v in PUBLIC_VECTORS if v[0] == "iabgpp-es decode 2"))
    assert c.vendor_consents.ids()[:3] == [1, 2, 4]
    assert c.vendor_consent(1) and c.vendor_consent(2) and not c.vendor_consent(3)


@pytest.mark.parametrize(
    ("purpose", "restriction_type", "vendor", "expected"),
    [
        # go-gdpr TestPubRestrictions2 (CheckPubRestriction rows)
        (1, 0, 32, True),
        (1, 1, 32, False),
        (2, 0, 32, True),
        (2, 0, 5, True),
        (2, 0, 11, True),
        (2, 0, 44, False),
        (2, 0, 500, False),
        (2, 1, 32, True),
        (2, 1, 42, False),
    ],
)
def test_go_gdpr_publisher_restrictions(purpose: int, restriction_type: int, vendor: int, expected: bool) -> None:
    c = parse_tcf2(
        "COxPe2TOxPe2TALABAENAPCgAAAAAAAAAAAAAFAAAAoAAA4IACACAIABgACAFA4ADACAAIygAGADwAQBIAIAIB0AEAEBSACACAA"
    )
    assert not c.purpose_one_treatment and not c.special_feature_optin(3)
    matching = [r for r in c.publisher_restrictions if (r.purpose, r.restriction_type) == (purpose, restriction_type)]
    assert any(vendor in r.vendors for r in matching) is expected


@pytest.mark.parametrize(
    ("purpose", "vendor", "expected"),
    [(7, 32, 1), (7, 7, None), (5, 32, None)],  # go-gdpr TestPubRestrictions
)
def test_go_gdpr_restriction_lookup(purpose: int, vendor: int, expected: int | None) -> None:
    c = parse_tcf2("COwAdDhOwAdDhN4ABAENAPCgAAQAAv___wAAAFP_AAp_4AI6ACACAA")
    assert c.restriction(purpose, vendor) == expected


def test_iabtcf_java_restrictions_without_vendors() -> None:
    # iabtcf-java testPublisherRestrictions: the bit string from that test, encoded without padding.
    groups = [
        "0000100011101011100",
        "1000000000000001010",
        "0000001110101110010",
        "0000000000000101000",
        "0000110011111000000",
        "0000000000000000100",
        "0011010000000011110",
        "0001000000000000000",
        *["0000000000000000000"] * 5,
        "000000000011",  # NumPubRestrictions
        "000001" + "01" + "000000000000",  # purpose 1, require consent, no entries
        "000010" + "00" + "000000000000",  # purpose 2, not allowed
        "000011" + "10" + "000000000000",  # purpose 3, require legitimate interest
        "0",
    ]
    bits = "".join(groups)
    c = parse_tcf2(bits_to_base64url(bits))
    assert [(r.purpose, r.restriction_type, r.vendors.ids()) for r in c.publisher_restrictions] == [
        (1, 1, []),
        (2, 0, []),
        (3, 2, []),
    ]


@pytest.mark.parametrize(("char", "policy_version"), [("A", 0), ("B", 1), ("C", 2), ("E", 4), ("Q", 16), ("_", 63)])
def test_tcf_policy_version(char: str, policy_version: int) -> None:
    # go-gdpr TestTCFPolicyVersion: the 23rd base64 character holds the policy version.
    base = "CPtGDMAPtGDMALMAAAENA_C_AAAAAAAAACiQAAAAAAAA"
    assert parse_tcf2(base[:22] + char + base[23:]).tcf_policy_version == policy_version


def test_pbs_consent_parses_and_matches_the_encoder() -> None:
    c = parse_tcf2(PBS_CONSENT)
    expected = CoreSegment(
        created=16_504_920_000,
        last_updated=16_504_920_000,
        cmp_id=31,
        cmp_version=640,
        consent_screen=1,
        consent_language="EN",
        vendor_list_version=126,
        tcf_policy_version=2,
        is_service_specific=True,
        publisher_cc="DE",
    )
    assert expected.encode() == PBS_CONSENT
    assert c.created == utc(2022, 4, 20, 22, 0)
    assert (c.cmp_id, c.cmp_version, c.vendor_list_version, c.publisher_cc) == (31, 640, 126, "DE")
    assert purposes(c) == [] and len(c.vendor_consents) == 0 and not c.purpose_one_treatment


# Malformed strings. go-gdpr vectors keep their meaning: truncated fields, bad range entries.
INVALID = [
    ("", "empty consent string"),
    (".abcd", "empty core segment"),
    ("malformed", "invalid base64url"),  # 9 characters: a lone final character
    ("COwGVJOOwGVJOADACHENAOCAAO6as_+AAAhoAFNLAAoAAAA", "invalid base64url"),  # '+' is not base64url
    ("COwGVJOOwGVJOADACHENAOCAAO6as_-AAAhoAFNLAAoAAA=", "invalid base64url"),  # padding
    ("COwGVJOOwGVJOADACHENAOCAAO6as_-AAAhoAFNLAAoAAAA.a!bc", "invalid base64url"),
    ("BOVeoB_OVeoFxC-AHAFRBtAAAAAhGAEAD4AXAA2YCEQ", "not a TCF v2 string: version 1"),  # a TCF v1 string
    ("BONciguONcjGKADACHENAOCIAC0ta__AACiQABgAAYA", "not a TCF v2 string: version 1"),
    ("DPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA", "not a TCF v2 string: version 3"),
    ("CONciguONcjGKADACHENAACIAC0ta__AACiQABgAAYA", "vendor list version 0"),
    ("CAAAAAAAAAAAAAAAAAENAACAAAAAAAAAAAAAAAAAAAAA.QAAA.IAAA", "vendor list version 0"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQAA", "truncated core segment"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABgAAYA", "truncated core segment"),  # no NumPubRestrictions
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQAeAA", "truncated core segment"),  # bit field for 60 vendors
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwA", "truncated core segment"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAQQ", "truncated core segment"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAYQAC", "truncated core segment"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAgABA", "truncated core segment"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAgAAAAA", "vendor id 0 in a range entry"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAgACAAA", "vendor id 4 above max vendor id 3"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAgABAAAA", "vendor id 0 in a range entry"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAgABAAEA", "vendor id 4 above max vendor id 3"),
    ("CONciguONcjGKADACHENAOCIAC0ta__AACiQABwAoABAACA", "range entry 2-1 ends before it starts"),
    ("COvcSpYOvcSpYC9AAAENAPCAAAAAAAAAAAAAAFAAAAA", "truncated core segment"),  # LI section cut short
    ("COvcSpYOvcSpYC9AAAENAPCAAAAAAAAAAAAAAFQBgAAgABAACAAEAAQAAgAA", "truncated core segment"),
    (PBS_CONSENT[:30], "truncated core segment"),
]


@pytest.mark.parametrize(("consent", "cause"), INVALID)
def test_malformed_strings(consent: str, cause: str) -> None:
    with pytest.raises(ConsentError) as info:
        parse_tcf2(consent)
    assert str(info.value) == cause
    assert isinstance(info.value, ValueError)


ROUND_TRIPS = {
    "defaults": CoreSegment(),
    "purposes and features": CoreSegment(
        purposes=[1, 2, 7, 24],
        purposes_li=[2, 3, 24],
        special_features=[1, 12],
        purpose_one_treatment=True,
        use_non_standard_texts=True,
        is_service_specific=False,
        consent_language="FR",
        publisher_cc="ZZ",
        cmp_id=4095,
        cmp_version=4095,
        consent_screen=63,
        vendor_list_version=4095,
        tcf_policy_version=63,
        created=2**36 - 1,
        last_updated=0,
    ),
    "bit-field vendors": CoreSegment(vendors=[1, 2, 3, 4, 9, 755], vendors_li=[4, 10, 11]),
    "range vendors": CoreSegment(vendors=[1, *range(10, 400), 755, 756], vendors_range=True),
    "range LI": CoreSegment(vendors=[5], vendors_li=[3, 4, 5, 6, 1000], vendors_li_range=True),
    "both range, single vendor": CoreSegment(
        vendors=[65535], vendors_range=True, vendors_li=[1], vendors_li_range=True
    ),
    "restrictions": CoreSegment(
        vendors=[32],
        restrictions=[
            Restriction(1, 0, [(5, 5), (10, 20)]),
            Restriction(1, 1, [(32, 32)]),
            Restriction(2, 2, [(1, 3000)]),
            Restriction(24, 3, [(7, 7)]),
        ],
    ),
}


def expected_from(seg: CoreSegment) -> dict[str, Any]:
    return {
        "version": 2,
        "created": datetime.fromtimestamp(seg.created / 10, UTC),
        "last_updated": datetime.fromtimestamp(seg.last_updated / 10, UTC),
        "cmp_id": seg.cmp_id,
        "cmp_version": seg.cmp_version,
        "consent_screen": seg.consent_screen,
        "consent_language": seg.consent_language,
        "vendor_list_version": seg.vendor_list_version,
        "tcf_policy_version": seg.tcf_policy_version,
        "is_service_specific": seg.is_service_specific,
        "use_non_standard_texts": seg.use_non_standard_texts,
        "special_features": sorted(seg.special_features),
        "purposes": sorted(seg.purposes),
        "purposes_li": sorted(seg.purposes_li),
        "purpose_one_treatment": seg.purpose_one_treatment,
        "publisher_cc": seg.publisher_cc,
        "max_vendor_id": max(seg.vendors, default=0),
        "vendors": sorted(seg.vendors),
        "vendor_count": len(seg.vendors),
        "vendors_li": sorted(seg.vendors_li),
        "vendor_li_count": len(seg.vendors_li),
        "restrictions": sorted(
            (r.purpose, r.restriction_type, [v for s, e in r.ranges for v in range(s, e + 1)]) for r in seg.restrictions
        ),
    }


@pytest.mark.parametrize("name", list(ROUND_TRIPS))
def test_round_trip(name: str) -> None:
    seg = ROUND_TRIPS[name]
    assert observed(parse_tcf2(seg.encode())) == expected_from(seg)


def test_round_trip_with_other_segments() -> None:
    seg = CoreSegment(vendors=[8, 9])
    assert parse_tcf2(seg.encode() + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA").vendor_consents.ids() == [8, 9]
    assert parse_tcf2(seg.encode() + ".").vendor_consents.ids() == [8, 9]


@pytest.mark.parametrize(
    ("purpose", "vendor", "expected"),
    [
        (1, 5, 0),
        (1, 15, 0),
        (1, 32, 1),
        (1, 33, None),
        (2, 2999, 2),
        (2, 3001, None),
        (24, 7, None),  # type 3 is undefined and ignored
        (3, 5, None),
    ],
)
def test_restriction_lookup(purpose: int, vendor: int, expected: int | None) -> None:
    c = parse_tcf2(ROUND_TRIPS["restrictions"].encode())
    assert c.restriction(purpose, vendor) == expected


def test_lowest_restriction_type_wins_and_repeats_merge() -> None:
    seg = CoreSegment(
        restrictions=[
            Restriction(1, 2, [(1, 10)]),
            Restriction(1, 1, [(5, 6)]),
            Restriction(1, 0, [(6, 6)]),
            Restriction(1, 2, [(11, 12)]),  # same purpose and type again: merged with the first
        ]
    )
    c = parse_tcf2(seg.encode())
    assert [c.restriction(1, v) for v in (1, 5, 6, 11, 12, 13)] == [2, 1, 0, 2, 2, None]
    assert [(r.purpose, r.restriction_type) for r in c.publisher_restrictions] == [(1, 0), (1, 1), (1, 2)]


def test_range_entry_with_equal_start_and_end_is_accepted() -> None:
    bits = CoreSegment(vendors=[]).bits()
    head = bits[:213]
    core = head + "0000000000001010" + "1" + range_entries([(7, 7)], single_as_range=True) + bits[230:]
    assert parse_tcf2(bits_to_base64url(core)).vendor_consents.ids() == [7]


def test_overlapping_range_entries_are_merged() -> None:
    bits = CoreSegment().bits()
    entries = range_entries([(5, 10), (8, 12), (12, 12), (1, 1), (20, 30), (21, 22)])
    core = bits[:213] + format(40, "016b") + "1" + entries + bits[230:]
    c = parse_tcf2(bits_to_base64url(core))
    assert c.vendor_consents.max_vendor_id == 40
    assert c.vendor_consents.ids() == [1, *range(5, 13), *range(20, 31)]


@pytest.mark.parametrize("vendor", [0, -1, 11, 10_000, "3", None])
def test_vendor_lookup_out_of_range_is_false(vendor: object) -> None:
    c = parse_tcf2(CoreSegment(vendors=list(range(1, 11)), vendors_li=list(range(1, 11))).encode())
    assert vendor not in c.vendor_consents
    if isinstance(vendor, int):
        assert not c.vendor_consent(vendor) and not c.vendor_li(vendor)


@pytest.mark.parametrize("p", [0, 25, -1])
def test_purpose_lookup_out_of_range_is_false(p: int) -> None:
    c = parse_tcf2(CoreSegment(purposes=list(range(1, 25)), purposes_li=list(range(1, 25))).encode())
    assert not c.purpose_consent(p) and not c.purpose_li(p)


def test_cached_parse_returns_the_same_object_and_caches_failures(monkeypatch) -> None:
    monkeypatch.setattr(tcf2, "_memo", {})
    first = parse_tcf2_cached(PBS_CONSENT)
    assert parse_tcf2_cached(PBS_CONSENT) is first
    assert first == parse_tcf2(PBS_CONSENT)
    truncated = PBS_CONSENT[:20]
    for _ in range(2):
        with pytest.raises(ConsentError, match=r"^truncated core segment$"):
            parse_tcf2_cached(truncated)
    assert set(tcf2._memo) == {tcf2.choices_key(PBS_CONSENT), tcf2.choices_key(truncated)}
    monkeypatch.setattr(tcf2, "parse_tcf2", None)  # both are answered from the memo now
    assert parse_tcf2_cached(PBS_CONSENT) is first
    with pytest.raises(ConsentError, match=r"^truncated core segment$"):
        parse_tcf2_cached(truncated)


def test_strings_that_cannot_decode_are_refused_without_being_kept(monkeypatch) -> None:
    monkeypatch.setattr(tcf2, "_memo", {})
    for consent in ("malformed", "C!" + PBS_CONSENT[2:], PBS_CONSENT[:5] + "." + PBS_CONSENT[6:]):
        assert tcf2.choices_key(consent) is None
        with pytest.raises(ConsentError):
            parse_tcf2_cached(consent)
    assert tcf2._memo == {}


@pytest.mark.parametrize(("created", "updated"), [(0, 0), (16_504_920_000, 16_504_930_000), ((1 << 36) - 1, 1)])
def test_a_string_differing_only_in_its_timestamps_is_the_kept_one_restamped(monkeypatch, created, updated):
    """Every user's string has its own timestamps: the memo keys on the rest, and each caller still
    gets its own string's Created and LastUpdated (the whole result equals parse_tcf2's)."""
    monkeypatch.setattr(tcf2, "_memo", {})
    base = CoreSegment(vendors=[1, 32, 755], purposes=[1, 2, 7], created=16_504_920_000)
    first = parse_tcf2_cached(base.encode())
    other = CoreSegment(vendors=[1, 32, 755], purposes=[1, 2, 7], created=created, last_updated=updated).encode()
    assert tcf2.choices_key(other) == tcf2.choices_key(base.encode()) and other != base.encode()
    again = parse_tcf2_cached(other)
    assert again == parse_tcf2(other) and again is not first
    assert (again.created, again.last_updated) == (tcf2._time(created), tcf2._time(updated))
    assert len(tcf2._memo) == 1  # one key for both
    different = CoreSegment(vendors=[1, 32], purposes=[1, 2, 7], created=created, last_updated=updated).encode()
    assert parse_tcf2_cached(different) == parse_tcf2(different)
    assert not parse_tcf2_cached(different).vendor_consent(755)
    assert len(tcf2._memo) == 2


def test_cache_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr(tcf2, "_memo", {})
    for i in range(tcf2.CACHE_SIZE + 50):
        consent = CoreSegment(cmp_id=i % 4096, vendor_list_version=1 + i // 4096).encode()
        assert parse_tcf2_cached(consent) == parse_tcf2(consent)
        assert len(tcf2._memo) <= tcf2.CACHE_SIZE
    assert len(tcf2._memo) == 50  # emptied when full, then filled again


def test_overlong_consent_strings_are_refused_before_decoding():
    from hbserver.privacy.tcf2 import MAX_CONSENT_LENGTH, ConsentError, parse_tcf2

    with pytest.raises(ConsentError, match=f"longer than {MAX_CONSENT_LENGTH}"):
        parse_tcf2("C" + "A" * MAX_CONSENT_LENGTH)
