"""The purpose-1 decision table (PBS-Go full and basic enforcement with default config)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.privacy.enforcement import allow_bidder_sync, allow_sync, host_cookie_allowed
from hbserver.privacy.gvl import GlobalVendorList, parse_gvl
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2
from tests.privacy.tcf_encoder import CoreSegment, Restriction

V = 32  # the vendor under test

FULL = {"purposes": [1], "vendors": [V]}  # purpose-1 consent and vendor consent
LI = {"purposes_li": [1], "vendors_li": [V]}  # purpose-1 LI transparency and vendor LI
BOTH = {**FULL, **LI}
NOTHING: dict[str, Any] = {}


def consent(signals: dict[str, Any], restriction: int | None = None, **extra: Any) -> CoreSegment:
    restrictions = [Restriction(1, restriction, [(V, V)])] if restriction is not None else []
    return CoreSegment(**signals, restrictions=restrictions, **extra)


def gvl_with(purposes: list[int] = (), li: list[int] = (), flexible: list[int] = ()) -> GlobalVendorList:
    vendor = {"id": V, "purposes": list(purposes), "legIntPurposes": list(li), "flexiblePurposes": list(flexible)}
    return parse_gvl({"vendorListVersion": 126, "vendors": {str(V): vendor, "1": {"id": 1}}})


GVL_CONSENT = gvl_with(purposes=[1])  # declares purpose 1 on consent
GVL_LI = gvl_with(li=[1])  # declares purpose 1 on legitimate interest
GVL_FLEX_CONSENT = gvl_with(purposes=[1], flexible=[1])  # consent by default, may be switched to LI
GVL_FLEX_LI = gvl_with(li=[1], flexible=[1])
GVL_NO_P1 = gvl_with(purposes=[2, 3], li=[7])
GVL_WITHOUT_VENDOR = parse_gvl({"vendorListVersion": 126, "vendors": {"1": {"id": 1}}})

# (name, consent signals, restriction type for (purpose 1, V), GVL or None for basic, expected)
TABLE = [
    # basic enforcement (no GVL): purpose-1 consent and vendor consent
    ("basic: consent + vendor", FULL, None, None, True),
    ("basic: purpose only", {"purposes": [1]}, None, None, False),
    ("basic: vendor only", {"vendors": [V]}, None, None, False),
    ("basic: LI signals do not count", LI, None, None, False),
    ("basic: nothing", NOTHING, None, None, False),
    ("basic: restriction 0 denies", FULL, 0, None, False),
    ("basic: restriction 1 is consent anyway", FULL, 1, None, True),
    ("basic: restriction 2 is not looked at", FULL, 2, None, True),
    ("basic: purpose 2 consent is not purpose 1", {"purposes": [2], "vendors": [V]}, None, None, False),
    # full enforcement, vendor declares purpose 1 on consent
    ("full consent-declared: consent", FULL, None, GVL_CONSENT, True),
    ("full consent-declared: LI signals only", LI, None, GVL_CONSENT, False),
    ("full consent-declared: purpose without vendor", {"purposes": [1]}, None, GVL_CONSENT, False),
    ("full consent-declared: restriction 0", FULL, 0, GVL_CONSENT, False),
    ("full consent-declared: restriction 1", FULL, 1, GVL_CONSENT, True),
    ("full consent-declared: restriction 2 forces LI (not flexible)", BOTH, 2, GVL_CONSENT, False),
    # full enforcement, vendor declares purpose 1 on legitimate interest
    ("full LI-declared: LI", LI, None, GVL_LI, True),
    ("full LI-declared: consent signals only", FULL, None, GVL_LI, False),
    ("full LI-declared: LI transparency without vendor LI", {"purposes_li": [1]}, None, GVL_LI, False),
    ("full LI-declared: vendor LI without transparency", {"vendors_li": [V]}, None, GVL_LI, False),
    ("full LI-declared: restriction 1 forces consent (not flexible)", BOTH, 1, GVL_LI, False),
    ("full LI-declared: restriction 2", LI, 2, GVL_LI, True),
    ("full LI-declared: restriction 0", BOTH, 0, GVL_LI, False),
    # flexible purpose 1: counts for both routes (go-gdpr Purpose/LegitimateInterest)
    ("full flexible(consent): consent", FULL, None, GVL_FLEX_CONSENT, True),
    ("full flexible(consent): LI without restriction", LI, None, GVL_FLEX_CONSENT, True),
    ("full flexible(consent): restriction 2 with LI", LI, 2, GVL_FLEX_CONSENT, True),
    ("full flexible(consent): restriction 2 with consent only", FULL, 2, GVL_FLEX_CONSENT, False),
    ("full flexible(consent): restriction 1 with LI only", LI, 1, GVL_FLEX_CONSENT, False),
    ("full flexible(LI): restriction 1 with consent", FULL, 1, GVL_FLEX_LI, True),
    ("full flexible(LI): restriction 1 with LI only", LI, 1, GVL_FLEX_LI, False),
    ("full flexible(LI): restriction 0", BOTH, 0, GVL_FLEX_LI, False),
    # vendor does not declare purpose 1, or is not listed
    ("full: purpose 1 not declared", BOTH, None, GVL_NO_P1, False),
    ("full: vendor not in GVL", BOTH, None, GVL_WITHOUT_VENDOR, False),
]


@pytest.mark.parametrize(("name", "signals", "restriction", "gvl", "expected"), TABLE, ids=[row[0] for row in TABLE])
def test_allow_sync_table(
    name: str, signals: dict[str, Any], restriction: int | None, gvl: GlobalVendorList | None, expected: bool
) -> None:
    parsed = parse_tcf2(consent(signals, restriction).encode())
    assert allow_sync(parsed, V, gvl) is expected
    assert allow_bidder_sync(consent(signals, restriction).encode(), V, gvl) is expected


@pytest.mark.parametrize(
    ("name", "restriction", "gvl", "expected"),
    [
        ("P1T, no GVL", None, None, True),
        ("P1T, listed vendor without purpose 1", None, GVL_NO_P1, True),
        ("P1T before restriction 0", 0, GVL_CONSENT, True),
        ("P1T, vendor not in GVL", None, GVL_WITHOUT_VENDOR, False),
    ],
)
def test_purpose_one_treatment(
    name: str, restriction: int | None, gvl: GlobalVendorList | None, expected: bool
) -> None:
    parsed = parse_tcf2(consent(NOTHING, restriction, purpose_one_treatment=True).encode())
    assert allow_sync(parsed, V, gvl) is expected


def test_restriction_for_another_vendor_or_purpose_does_not_apply() -> None:
    seg = CoreSegment(**FULL, restrictions=[Restriction(1, 0, [(1, V - 1)]), Restriction(2, 0, [(V, V)])])
    assert allow_sync(parse_tcf2(seg.encode()), V, GVL_CONSENT) is True


@pytest.mark.parametrize(
    ("name", "consent_string", "vendor_id", "gvl", "expected"),
    [
        ("vendor id 0", consent(FULL).encode(), 0, None, False),
        ("vendor id 0 with GVL", consent(FULL).encode(), 0, GVL_CONSENT, False),
        ("vendor absent from GVL", consent(FULL).encode(), V, GVL_WITHOUT_VENDOR, False),
        ("empty consent", "", V, None, False),
        ("malformed consent", "malformed", V, None, False),
        ("TCF v1 consent", "BOVeoB_OVeoFxC-AHAFRBtAAAAAhGAEAD4AXAA2YCEQ", V, None, False),
        ("allowed", consent(FULL).encode(), V, None, True),
        ("allowed with GVL", consent(FULL).encode(), V, GVL_CONSENT, True),
    ],
)
def test_allow_bidder_sync(
    name: str, consent_string: str, vendor_id: int, gvl: GlobalVendorList | None, expected: bool
) -> None:
    assert allow_bidder_sync(consent_string, vendor_id, gvl) is expected


@pytest.mark.parametrize(
    ("name", "signal", "consent_string", "host_vendor_id", "gvl", "expected"),
    [
        ("no host vendor id", 1, "", 0, None, True),
        ("no host vendor id, malformed consent", 1, "malformed", 0, None, True),
        ("gdpr does not apply", 0, "", V, None, True),
        ("gdpr does not apply, malformed consent", 0, "malformed", V, None, True),
        ("empty consent", 1, "", V, None, False),
        ("consent given", 1, consent(FULL).encode(), V, None, True),
        ("consent given, GVL", 1, consent(FULL).encode(), V, GVL_CONSENT, True),
        ("no consent", 1, consent(NOTHING).encode(), V, None, False),
        ("host vendor not in GVL", 1, consent(FULL).encode(), V, GVL_WITHOUT_VENDOR, False),
        ("PBS test consent (no purposes)", 1, "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA", V, None, False),
    ],
)
def test_host_cookie_allowed(
    name: str, signal: int, consent_string: str, host_vendor_id: int, gvl: GlobalVendorList | None, expected: bool
) -> None:
    assert host_cookie_allowed(signal, consent_string, host_vendor_id, gvl) is expected


@pytest.mark.parametrize(
    ("consent_string", "cause"),
    [
        ("malformed", "invalid base64url"),
        ("BOVeoB_OVeoFxC-AHAFRBtAAAAAhGAEAD4AXAA2YCEQ", "not a TCF v2 string: version 1"),
    ],
)
def test_host_cookie_malformed_consent_raises(consent_string: str, cause: str) -> None:
    with pytest.raises(ConsentError) as info:
        host_cookie_allowed(1, consent_string, V, None)
    assert str(info.value) == cause
