"""GdprPermissions: PBS-Go's permissionsImpl and purpose enforcers, one table per decision.

Consent strings are built with tests/privacy/tcf_encoder.py, vendor lists with parse_gvl; the rows
translate PBS-Go's gdpr/*_test.go cases (impl, full and basic enforcement, purpose enforcer).
"""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.config import AccountGdpr, Config, Gdpr, build
from hbserver.privacy import permissions as permissions_module
from hbserver.privacy.gvl import GlobalVendorList, GVLError, parse_gvl
from hbserver.privacy.permissions import (
    ALLOW_ALL,
    ALLOW_BID_REQUEST_ONLY,
    DENY_ALL,
    AuctionPermissions,
    BasicEnforcement,
    FullEnforcement,
    GdprPermissions,
    enforcers,
)
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2
from hbserver.privacy.tcf_policy import TcfPolicy, policy_for
from hbserver.usersync.privacy import PrivacyGate, SyncPrivacy
from tests.privacy.tcf_encoder import CoreSegment, Restriction

V = 32  # the bidder's vendor id
BIDDER = "appnexus"
NO_GVL = None
TCF_V1 = "BOVeoB_OVeoFxC-AHAFRBtAAAAAhGAEAD4AXAA2YCEQ"


def gvl_of(*vendors: dict[str, Any]) -> GlobalVendorList:
    return parse_gvl({"vendorListVersion": 126, "vendors": {str(v["id"]): v for v in vendors}})


def vendor(
    vendor_id: int = V, purposes: list[int] = (), li: list[int] = (), flexible: list[int] = (), features: list[int] = ()
) -> dict[str, Any]:
    return {
        "id": vendor_id,
        "purposes": list(purposes),
        "legIntPurposes": list(li),
        "flexiblePurposes": list(flexible),
        "specialFeatures": list(features),
    }


def consent(restrict: tuple[int, int] | None = None, **signals: Any) -> str:
    """A TC string; ``restrict`` = (purpose, restriction type) for vendor V."""
    restrictions = [Restriction(restrict[0], restrict[1], [(V, V)])] if restrict else []
    return CoreSegment(**signals, restrictions=restrictions).encode()


def policy(host: dict[str, Any] | None = None, account: dict[str, Any] | None = None) -> TcfPolicy:
    """``host`` is ``gdpr.tcf2``; ``account`` the account's ``gdpr`` block."""
    problems: list[str] = []
    gdpr = build(Gdpr, {"tcf2": host or {}}, "gdpr", problems)
    acct = build(AccountGdpr, account or {}, "gdpr", problems)
    assert problems == []
    return TcfPolicy.build(gdpr, acct)


def purpose(n: int, **keys: Any) -> dict[str, Any]:
    return {f"purpose{n}": keys}


GVL_P2_CONSENT = gvl_of(vendor(purposes=[1, 2]), vendor(6))
GVL_P2_LI = gvl_of(vendor(li=[2]))
GVL_P2_FLEX = gvl_of(vendor(purposes=[2], flexible=[2]))  # consent by default, may be LI
GVL_NO_P2 = gvl_of(vendor(purposes=[1]))
GVL_SF1 = gvl_of(vendor(purposes=[2], features=[1]))
GVL_OTHER = gvl_of(vendor(6, purposes=[1, 2]))  # V is not listed

P2 = {"purposes": [2], "vendors": [V]}
P2_LI = {"purposes_li": [2], "vendors_li": [V]}
P2_PURPOSE_ONLY = {"purposes": [2]}
P2_LI_TRANSPARENCY_ONLY = {"purposes_li": [2]}
VENDOR_ONLY = {"vendors": [V]}
NOTHING: dict[str, Any] = {}
BASIC_VENDOR = {"basic_enforcement_vendors": [BIDDER]}

Row = tuple[str, str, dict[str, Any], dict[str, Any], GlobalVendorList | None, bool]

# (rule, consent, host gdpr.tcf2, account gdpr, GVL, bid request allowed)
BID_REQUEST: list[Row] = [
    ("full: purpose 2 consent and vendor consent", consent(**P2), {}, {}, GVL_P2_CONSENT, True),
    ("full: no signals", consent(), {}, {}, GVL_P2_CONSENT, False),
    ("full: purpose consent without vendor consent", consent(**P2_PURPOSE_ONLY), {}, {}, GVL_P2_CONSENT, False),
    ("full: vendor consent without purpose consent", consent(**VENDOR_ONLY), {}, {}, GVL_P2_CONSENT, False),
    ("full: LI-declared vendor with LI signals", consent(**P2_LI), {}, {}, GVL_P2_LI, True),
    ("full: LI signals for a consent-declared vendor", consent(**P2_LI), {}, {}, GVL_P2_CONSENT, False),
    ("full: LI transparency without vendor LI", consent(**P2_LI_TRANSPARENCY_ONLY), {}, {}, GVL_P2_LI, False),
    ("full: vendor does not declare purpose 2", consent(**P2), {}, {}, GVL_NO_P2, False),
    ("full: vendor missing from the GVL", consent(**P2), {}, {}, GVL_OTHER, False),
    ("full: a flexible purpose counts for LI", consent(**P2_LI), {}, {}, GVL_P2_FLEX, True),
    (
        "purpose 2 not enforced: vendor consent decides",
        consent(**VENDOR_ONLY),
        purpose(2, enforce_purpose=False),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    (
        "purpose 2 not enforced: no vendor consent",
        consent(**P2_PURPOSE_ONLY),
        purpose(2, enforce_purpose=False),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    (
        "enforce_vendors off: purpose consent alone",
        consent(**P2_PURPOSE_ONLY),
        purpose(2, enforce_vendors=False),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    (
        "neither purpose nor vendors enforced",
        consent(),
        purpose(2, enforce_purpose=False, enforce_vendors=False),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    (
        "account enforces what the host does not",
        consent(),
        purpose(2, enforce_purpose=False, enforce_vendors=False),
        purpose(2, enforce_purpose=True),
        GVL_P2_CONSENT,
        False,
    ),
    (
        "vendor exception: no signals needed",
        consent(),
        purpose(2, vendor_exceptions=[BIDDER]),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    ("vendor exception of another bidder", consent(), purpose(2, vendor_exceptions=["ix"]), {}, GVL_P2_CONSENT, False),
    (
        "account vendor exceptions replace the host's",
        consent(),
        purpose(2, vendor_exceptions=[BIDDER]),
        purpose(2, vendor_exceptions=[]),
        GVL_P2_CONSENT,
        False,
    ),
    (
        "vendor exception of purpose 1 does not help",
        consent(),
        purpose(1, vendor_exceptions=[BIDDER]),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    (
        "basic enforcement vendor: purpose consent without vendor consent",
        consent(**P2_PURPOSE_ONLY),
        {},
        BASIC_VENDOR,
        GVL_NO_P2,
        True,
    ),
    ("basic enforcement vendor: no purpose consent", consent(), {}, BASIC_VENDOR, GVL_P2_CONSENT, False),
    (
        "basic enforcement vendor: the downgrade takes LI transparency",
        consent(**P2_LI_TRANSPARENCY_ONLY),
        {},
        BASIC_VENDOR,
        GVL_P2_CONSENT,
        True,
    ),
    (
        "basic algo: the GVL declarations are not read",
        consent(**P2),
        purpose(2, enforce_algo="basic"),
        {},
        GVL_NO_P2,
        True,
    ),
    (
        "basic algo: LI transparency for purpose 2",
        consent(**P2_LI_TRANSPARENCY_ONLY),
        purpose(2, enforce_algo="basic"),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    (
        "basic algo: purpose consent without vendor consent",
        consent(**P2_PURPOSE_ONLY),
        purpose(2, enforce_algo="basic"),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    (
        "account basic algo beats host full",
        consent(**P2),
        {},
        purpose(2, enforce_algo="basic"),
        GVL_NO_P2,
        True,
    ),
    (
        "account full algo beats host basic",
        consent(**P2),
        purpose(2, enforce_algo="basic"),
        purpose(2, enforce_algo="full"),
        GVL_NO_P2,
        False,
    ),
    # publisher restrictions for purpose 2 and vendor V
    ("full: restriction 0 denies", consent((2, 0), **P2), {}, {}, GVL_P2_CONSENT, False),
    (
        "full: restriction 0 beats a vendor exception",
        consent((2, 0)),
        purpose(2, vendor_exceptions=[BIDDER]),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    (
        "full: restriction 0 even with nothing enforced",
        consent((2, 0)),
        purpose(2, enforce_purpose=False, enforce_vendors=False),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    ("full: restriction 1 forces consent on a flexible purpose", consent((2, 1), **P2_LI), {}, {}, GVL_P2_FLEX, False),
    ("full: restriction 1 with consent", consent((2, 1), **P2), {}, {}, GVL_P2_FLEX, True),
    ("full: restriction 2 forces LI on a flexible purpose", consent((2, 2), **P2), {}, {}, GVL_P2_FLEX, False),
    ("full: restriction 2 with LI", consent((2, 2), **P2_LI), {}, {}, GVL_P2_FLEX, True),
    (
        "full: restriction 2 on a purpose declared for consent only",
        consent((2, 2), **P2, **P2_LI),
        {},
        {},
        GVL_P2_CONSENT,
        False,
    ),
    ("full: restriction 3 (undefined) is ignored", consent((2, 3), **P2), {}, {}, GVL_P2_CONSENT, True),
    ("full: a purpose 1 restriction does not apply", consent((1, 0), **P2), {}, {}, GVL_P2_CONSENT, True),
    (
        "basic algo: restriction 0 is not read (PBS-Go)",
        consent((2, 0), **P2),
        purpose(2, enforce_algo="basic"),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    ("downgrade: restriction 0 is not read (PBS-Go)", consent((2, 0), **P2), {}, BASIC_VENDOR, GVL_P2_CONSENT, True),
    # no GVL: basic for every purpose
    ("no GVL: purpose and vendor consent", consent(**P2), {}, {}, NO_GVL, True),
    ("no GVL: purpose consent without vendor consent", consent(**P2_PURPOSE_ONLY), {}, {}, NO_GVL, False),
    ("no GVL: LI transparency (basic)", consent(**P2_LI_TRANSPARENCY_ONLY), {}, {}, NO_GVL, True),
    ("no GVL: restriction 0 denies where full is configured", consent((2, 0), **P2), {}, {}, NO_GVL, False),
    (
        "no GVL: restriction 0 not read where basic is configured",
        consent((2, 0), **P2),
        purpose(2, enforce_algo="basic"),
        {},
        NO_GVL,
        True,
    ),
    ("no GVL: restriction 0 not read for a downgraded vendor", consent((2, 0), **P2), {}, BASIC_VENDOR, NO_GVL, True),
    (
        "purpose-one treatment does not touch purpose 2",
        consent(purpose_one_treatment=True),
        {},
        {},
        GVL_P2_CONSENT,
        False,
    ),
]


def auction(
    consent_string: str, host: dict[str, Any], account: dict[str, Any], gvl: GlobalVendorList | None
) -> AuctionPermissions:
    return GdprPermissions(policy(host, account), consent_string, gvl=gvl).auction(BIDDER, BIDDER, V)


@pytest.mark.parametrize(
    ("rule", "tc", "host", "account", "gvl", "expected"), BID_REQUEST, ids=[r[0] for r in BID_REQUEST]
)
def test_allow_bid_request(
    rule: str, tc: str, host: dict[str, Any], account: dict[str, Any], gvl: GlobalVendorList | None, expected: bool
) -> None:
    assert auction(tc, host, account, gvl).allow_bid_request is expected


SF1 = {"special_features": [1]}
NO_SF1 = {"special_feature1": {"enforce": False}}

# (rule, consent, host gdpr.tcf2, account gdpr, GVL, geo passed)
GEO: list[Row] = [
    ("opt-in, vendor declares special feature 1", consent(**SF1), {}, {}, GVL_SF1, True),
    ("opt-in, vendor without special feature 1", consent(**SF1), {}, {}, GVL_P2_CONSENT, False),
    ("no opt-in", consent(**P2), {}, {}, GVL_SF1, False),
    ("special feature 2 is not 1", consent(special_features=[2]), {}, {}, GVL_SF1, False),
    ("special feature 1 not enforced", consent(), NO_SF1, {}, GVL_SF1, True),
    (
        "account enforces where the host does not",
        consent(),
        NO_SF1,
        {"special_feature1": {"enforce": True}},
        GVL_SF1,
        False,
    ),
    ("account does not enforce", consent(), {}, {"special_feature1": {"enforce": False}}, GVL_SF1, True),
    (
        "vendor exception: no opt-in needed",
        consent(),
        {"special_feature1": {"vendor_exceptions": [BIDDER]}},
        {},
        GVL_SF1,
        True,
    ),
    (
        "account vendor exceptions replace the host's",
        consent(),
        {"special_feature1": {"vendor_exceptions": [BIDDER]}},
        {"special_feature1": {"vendor_exceptions": []}},
        GVL_SF1,
        False,
    ),
    (
        "basic enforcement vendor: opt-in without a GVL declaration",
        consent(**SF1),
        {},
        BASIC_VENDOR,
        GVL_P2_CONSENT,
        True,
    ),
    ("basic enforcement vendor: no opt-in", consent(), {}, BASIC_VENDOR, GVL_SF1, False),
    ("vendor missing from the GVL", consent(**SF1), {}, {}, GVL_OTHER, False),
    ("no GVL: the opt-in suffices", consent(**SF1), {}, {}, NO_GVL, True),
    ("no GVL: no opt-in", consent(), {}, {}, NO_GVL, False),
]


@pytest.mark.parametrize(("rule", "tc", "host", "account", "gvl", "expected"), GEO, ids=[r[0] for r in GEO])
def test_pass_geo(
    rule: str, tc: str, host: dict[str, Any], account: dict[str, Any], gvl: GlobalVendorList | None, expected: bool
) -> None:
    assert auction(tc, host, account, gvl).pass_geo is expected


def only(purposes: list[int] = (), li: list[int] = ()) -> GlobalVendorList:
    return gvl_of(vendor(purposes=purposes, li=li))


# (rule, consent, host gdpr.tcf2, account gdpr, GVL, ids passed)
IDS: list[Row] = [
    ("purpose 2 consent", consent(**P2), {}, {}, GVL_P2_CONSENT, True),
    ("purpose 7 consent alone", consent(purposes=[7], vendors=[V]), {}, {}, only([7]), True),
    ("purpose 10 by legitimate interest", consent(purposes_li=[10], vendors_li=[V]), {}, {}, only(li=[10]), True),
    ("purpose 1 alone passes no ids", consent(purposes=[1], vendors=[V]), {}, {}, only([1]), False),
    ("purpose 11 is not read", consent(purposes=[11], vendors=[V]), {}, {}, only([11]), False),
    ("consent to a purpose the vendor does not declare", consent(purposes=[3], vendors=[V]), {}, {}, only([4]), False),
    ("no vendor consent", consent(purposes=[2, 3, 4, 5, 6, 7, 8, 9, 10]), {}, {}, only([2, 3, 4]), False),
    (
        "purpose 2 not enforced is enforced for ids",
        consent(**VENDOR_ONLY),
        purpose(2, enforce_purpose=False),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    (
        "enforce_vendors off is enforced for ids",
        consent(**P2_PURPOSE_ONLY),
        purpose(2, enforce_vendors=False),
        {},
        GVL_P2_CONSENT,
        False,
    ),
    ("vendor exception on purpose 4", consent(), purpose(4, vendor_exceptions=[BIDDER]), {}, GVL_P2_CONSENT, True),
    (
        "account vendor exception on purpose 9",
        consent(),
        {},
        purpose(9, vendor_exceptions=[BIDDER]),
        GVL_P2_CONSENT,
        True,
    ),
    (
        "basic algo: LI transparency for purpose 2",
        consent(**P2_LI_TRANSPARENCY_ONLY),
        purpose(2, enforce_algo="basic"),
        {},
        GVL_P2_CONSENT,
        True,
    ),
    (
        "basic algo: LI transparency for purpose 3 does not count",
        consent(purposes_li=[3]),
        purpose(3, enforce_algo="basic"),
        {},
        only([3]),
        False,
    ),
    (
        "full: LI transparency for purpose 2 without vendor LI",
        consent(**P2_LI_TRANSPARENCY_ONLY),
        {},
        {},
        GVL_P2_LI,
        False,
    ),
    ("basic enforcement vendor: purpose 5 consent", consent(purposes=[5]), {}, BASIC_VENDOR, GVL_P2_CONSENT, True),
    ("no GVL: purpose 3 and vendor consent", consent(purposes=[3], vendors=[V]), {}, {}, NO_GVL, True),
    ("no GVL: purpose 3 without vendor consent", consent(purposes=[3]), {}, {}, NO_GVL, False),
    (
        "restriction 0 on purpose 2 leaves purpose 3",
        consent((2, 0), purposes=[2, 3], vendors=[V]),
        {},
        {},
        only([2, 3]),
        True,
    ),
]


@pytest.mark.parametrize(("rule", "tc", "host", "account", "gvl", "expected"), IDS, ids=[r[0] for r in IDS])
def test_pass_id(
    rule: str, tc: str, host: dict[str, Any], account: dict[str, Any], gvl: GlobalVendorList | None, expected: bool
) -> None:
    assert auction(tc, host, account, gvl).pass_id is expected


# Vendor id resolution. Vendors 6 and 32 both declare purpose 2 and special feature 1; the user
# consents to purpose 2 for vendor 6 (and 99, which no list holds) and opts in to geo.
RESOLVE_GVL = gvl_of(vendor(6, purposes=[2], features=[1]), vendor(V, purposes=[2], features=[1]))
RESOLVE_CONSENT = consent(purposes=[2], vendors=[6, 99], special_features=[1])
BASIC_P2 = purpose(2, enforce_algo="basic")
EMPTY_GVL = gvl_of()

# (rule, GVL, alias gvl ids, bidder, configured vendor id, host gdpr.tcf2, expected)
RESOLVE: list[
    tuple[str, GlobalVendorList | None, dict[str, int] | None, str, int, dict[str, Any], AuctionPermissions]
] = [
    ("configured vendor id with consent", RESOLVE_GVL, None, BIDDER, 6, {}, ALLOW_ALL),
    ("configured vendor id without consent", RESOLVE_GVL, None, BIDDER, V, {}, AuctionPermissions(False, True, False)),
    ("alias gvl id beats the configured one", RESOLVE_GVL, {"alias": 6}, "alias", V, {}, ALLOW_ALL),
    (
        "alias gvl id of another bidder is not used",
        RESOLVE_GVL,
        {"other": 6},
        "alias",
        V,
        {},
        AuctionPermissions(False, True, False),
    ),
    ("alias gvl id missing from the GVL counts as 0", RESOLVE_GVL, {"alias": 99}, "alias", 6, BASIC_P2, DENY_ALL),
    ("vendor id missing from the GVL counts as 0", RESOLVE_GVL, None, BIDDER, 99, BASIC_P2, DENY_ALL),
    ("no GVL: every vendor id is kept", NO_GVL, None, BIDDER, 99, BASIC_P2, ALLOW_ALL),
    (
        "a GVL with no vendors holds every id",
        EMPTY_GVL,
        None,
        BIDDER,
        99,
        BASIC_P2,
        AuctionPermissions(True, False, True),
    ),
    ("vendor id 0", RESOLVE_GVL, None, BIDDER, 0, {}, DENY_ALL),
    (
        "vendor id 0 with a purpose 2 vendor exception",
        RESOLVE_GVL,
        None,
        BIDDER,
        0,
        purpose(2, vendor_exceptions=[BIDDER]),
        AuctionPermissions(True, False, True),
    ),
]


@pytest.mark.parametrize(
    ("rule", "gvl", "aliases", "bidder", "vendor_id", "host", "expected"), RESOLVE, ids=[r[0] for r in RESOLVE]
)
def test_vendor_id_resolution(
    rule: str,
    gvl: GlobalVendorList | None,
    aliases: dict[str, int] | None,
    bidder: str,
    vendor_id: int,
    host: dict[str, Any],
    expected: AuctionPermissions,
) -> None:
    perms = GdprPermissions(policy(host), RESOLVE_CONSENT, gvl=gvl, alias_gvl_ids=aliases)
    assert perms.auction(BIDDER, bidder, vendor_id) == expected


# PBS-Go TestAllowActivitiesGeoAndID: the user consents (and gives LI) to purposes 1-10 for
# vendors 2, 6 and 8 and opts in to special feature 1.
GVL34 = gvl_of(
    vendor(2, purposes=[1]),
    vendor(6, purposes=[1, 2, 4], li=[7], flexible=[1, 2, 4, 7], features=[1]),
    vendor(8, purposes=[1, 7], li=[2, 4]),
    vendor(10, purposes=[2, 4, 7], features=[1]),
    vendor(20, purposes=[1], li=[2, 7], flexible=[2, 7]),
    vendor(32, purposes=[1, 2, 4, 7]),
)
ALL_PURPOSES = list(range(1, 11))
CONSENT_2_6_8 = consent(
    purposes=ALL_PURPOSES, purposes_li=ALL_PURPOSES, vendors=[2, 6, 8], vendors_li=[2, 6, 8], special_features=[1]
)

# (rule, core, bidder, configured vendor id, alias gvl ids, basic enforcement vendors, expected)
GEO_AND_ID: list[tuple[str, str, str, int, dict[str, int] | None, list[str], AuctionPermissions]] = [
    ("vendor 2 claims too few purposes", "appnexus", "appnexus", 2, None, [], DENY_ALL),
    ("alias resolved to an unlisted vendor", "pubmatic", "pubmatic1", 6, {"pubmatic1": 1}, [], DENY_ALL),
    ("vendor 2 as a basic enforcement vendor", "appnexus", "appnexus", 2, None, ["appnexus"], ALLOW_ALL),
    (
        "unlisted vendor as a basic enforcement vendor",
        "audienceNetwork",
        "audienceNetwork",
        55,
        None,
        ["audienceNetwork"],
        ALLOW_ALL,
    ),
    ("vendor 6: flexible purposes", "pubmatic", "pubmatic", 6, None, [], ALLOW_ALL),
    ("alias resolved to vendor 6", "pubmatic", "pubmatic1", 1, {"pubmatic1": 6}, [], ALLOW_ALL),
    (
        "vendor 8: LI purposes, no special feature",
        "rubicon",
        "rubicon",
        8,
        None,
        [],
        AuctionPermissions(True, False, True),
    ),
]


@pytest.mark.parametrize(
    ("rule", "core", "bidder", "vendor_id", "aliases", "basic", "expected"), GEO_AND_ID, ids=[r[0] for r in GEO_AND_ID]
)
def test_pbs_go_geo_and_id(
    rule: str,
    core: str,
    bidder: str,
    vendor_id: int,
    aliases: dict[str, int] | None,
    basic: list[str],
    expected: AuctionPermissions,
) -> None:
    perms = GdprPermissions(
        policy(account={"basic_enforcement_vendors": basic}), CONSENT_2_6_8, gvl=GVL34, alias_gvl_ids=aliases
    )
    assert perms.auction(core, bidder, vendor_id) == expected


# PBS-Go TestAllowActivitiesBidderWithoutGVLID: a bidder with no vendor id, purpose 2 consented.
P2_NO_VENDORS = consent(purposes=[2])

# (rule, host purpose 2, basic enforcement vendors, consent, (bid request, ids))
NO_GVL_ID: list[tuple[str, dict[str, Any], list[str], str, tuple[bool, bool]]] = [
    ("full, no exceptions", {}, [], P2_NO_VENDORS, (False, False)),
    ("full, vendor exception", {"vendor_exceptions": ["pangle"]}, [], P2_NO_VENDORS, (True, True)),
    ("basic, no exceptions", {"enforce_algo": "basic"}, [], P2_NO_VENDORS, (False, False)),
    (
        "basic, vendor exception",
        {"enforce_algo": "basic", "vendor_exceptions": ["pangle"]},
        [],
        P2_NO_VENDORS,
        (True, True),
    ),
    ("full, basic enforcement vendor", {}, ["pangle"], P2_NO_VENDORS, (True, True)),
    ("basic, basic enforcement vendor", {"enforce_algo": "basic"}, ["pangle"], P2_NO_VENDORS, (True, True)),
    ("full, basic enforcement vendor, no purpose consent", {}, ["pangle"], consent(), (False, False)),
    (
        "basic, basic enforcement vendor, no purpose consent",
        {"enforce_algo": "basic"},
        ["pangle"],
        consent(),
        (False, False),
    ),
]


@pytest.mark.parametrize(("rule", "p2", "basic", "tc", "expected"), NO_GVL_ID, ids=[r[0] for r in NO_GVL_ID])
def test_bidder_without_gvl_id(
    rule: str, p2: dict[str, Any], basic: list[str], tc: str, expected: tuple[bool, bool]
) -> None:
    perms = GdprPermissions(
        policy({"purpose2": p2}, {"basic_enforcement_vendors": basic}), tc, gvl=gvl_of(vendor(6, purposes=[2]))
    )
    result = perms.auction("pangle", "pangle", 0)
    assert (result.allow_bid_request, result.pass_id) == expected


NOT_P2 = purpose(2, enforce_purpose=False)
NOT_SF1 = {"special_feature1": {"enforce": False}}

# (rule, consent, publisher id, non-standard publishers, host gdpr.tcf2, account gdpr, expected)
DEFAULTS: list[tuple[str, str, str, frozenset[str], dict[str, Any], dict[str, Any], AuctionPermissions]] = [
    ("non-standard publisher: everything allowed", consent(), "pub1", frozenset({"pub1"}), {}, {}, ALLOW_ALL),
    ("non-standard publisher, malformed consent", "malformed", "pub1", frozenset({"pub1"}), {}, {}, ALLOW_ALL),
    ("non-standard list, another publisher", consent(), "pub2", frozenset({"pub1"}), {}, {}, DENY_ALL),
    ("empty consent, everything enforced", "", "", frozenset(), {}, {}, DENY_ALL),
    ("empty consent, purpose 2 not enforced", "", "", frozenset(), NOT_P2, {}, ALLOW_BID_REQUEST_ONLY),
    (
        "empty consent, special feature 1 not enforced",
        "",
        "",
        frozenset(),
        NOT_SF1,
        {},
        AuctionPermissions(False, True, False),
    ),
    (
        "empty consent, neither enforced",
        "",
        "",
        frozenset(),
        {**NOT_P2, **NOT_SF1},
        {},
        AuctionPermissions(True, True, False),
    ),
    ("malformed consent: the defaults", "malformed", "", frozenset(), {}, {}, DENY_ALL),
    ("TCF v1 consent: the defaults", TCF_V1, "", frozenset(), NOT_P2, {}, ALLOW_BID_REQUEST_ONLY),
    (
        "account settings decide the defaults",
        "",
        "",
        frozenset(),
        {},
        purpose(2, enforce_purpose=False),
        ALLOW_BID_REQUEST_ONLY,
    ),
]


@pytest.mark.parametrize(
    ("rule", "tc", "publisher", "non_standard", "host", "account", "expected"), DEFAULTS, ids=[r[0] for r in DEFAULTS]
)
def test_publisher_and_consent_defaults(
    rule: str,
    tc: str,
    publisher: str,
    non_standard: frozenset[str],
    host: dict[str, Any],
    account: dict[str, Any],
    expected: AuctionPermissions,
) -> None:
    perms = GdprPermissions(
        policy(host, account), tc, gvl=GVL_SF1, publisher_id=publisher, non_standard_publishers=non_standard
    )
    assert perms.auction(BIDDER, BIDDER, V) == expected


GVL_P1 = gvl_of(vendor(purposes=[1]), vendor(6, purposes=[1]))
GVL_NO_P1 = gvl_of(vendor(purposes=[2]))
P1 = {"purposes": [1], "vendors": [V]}
P1T = {"purpose_one_treatment": True}

# (rule, consent, host gdpr.tcf2, account gdpr, GVL, vendor id, bidder may sync)
SYNC: list[tuple[str, str, dict[str, Any], dict[str, Any], GlobalVendorList | None, int, bool]] = [
    ("purpose 1 and vendor consent", consent(**P1), {}, {}, GVL_P1, V, True),
    ("no consent", consent(), {}, {}, GVL_P1, V, False),
    ("purpose 1 not enforced", consent(), purpose(1, enforce_purpose=False), {}, GVL_P1, V, True),
    (
        "account enforces purpose 1",
        consent(),
        purpose(1, enforce_purpose=False),
        purpose(1, enforce_purpose=True),
        GVL_P1,
        V,
        False,
    ),
    ("purpose-one treatment allows", consent(**P1T), {}, {}, GVL_P1, V, True),
    (
        "purpose-one treatment with access not allowed",
        consent(**P1T, **P1),
        {"purpose_one_treatment": {"access_allowed": False}},
        {},
        GVL_P1,
        V,
        False,
    ),
    (
        "purpose-one treatment disabled: consent decides",
        consent(**P1T),
        {"purpose_one_treatment": {"enabled": False}},
        {},
        GVL_P1,
        V,
        False,
    ),
    (
        "account purpose-one treatment beats host",
        consent(**P1T),
        {"purpose_one_treatment": {"enabled": False}},
        {"purpose_one_treatment": {"enabled": True}},
        GVL_P1,
        V,
        True,
    ),
    ("purpose 1 vendor exception", consent(), purpose(1, vendor_exceptions=[BIDDER]), {}, GVL_P1, V, True),
    (
        "purpose 1 vendor exception of another bidder",
        consent(),
        purpose(1, vendor_exceptions=["ix"]),
        {},
        GVL_P1,
        V,
        False,
    ),
    (
        "purpose 2 vendor exception does not help",
        consent(),
        purpose(2, vendor_exceptions=[BIDDER]),
        {},
        GVL_P1,
        V,
        False,
    ),
    (
        "purpose 1 vendor exception with restriction 0",
        consent((1, 0)),
        purpose(1, vendor_exceptions=[BIDDER]),
        {},
        GVL_P1,
        V,
        False,
    ),
    ("purpose 1 is never downgraded", consent(purposes=[1]), {}, BASIC_VENDOR, GVL_P1, V, False),
    ("basic algo: GVL declarations not read", consent(**P1), purpose(1, enforce_algo="basic"), {}, GVL_NO_P1, V, True),
    ("full: vendor does not declare purpose 1", consent(**P1), {}, {}, GVL_NO_P1, V, False),
    ("vendor id 0", consent(**P1), {}, {}, GVL_P1, 0, False),
    ("vendor id 0, no GVL", consent(**P1), {}, {}, NO_GVL, 0, False),
    ("vendor not in the GVL, even with purpose-one treatment", consent(**P1T), {}, {}, GVL_OTHER, V, False),
    ("empty consent", "", {}, {}, GVL_P1, V, False),
    ("malformed consent", "malformed", {}, {}, GVL_P1, V, False),
    ("no GVL: basic", consent(**P1), {}, {}, NO_GVL, V, True),
    ("no GVL: purpose only", consent(purposes=[1]), {}, {}, NO_GVL, V, False),
]


@pytest.mark.parametrize(
    ("rule", "tc", "host", "account", "gvl", "vendor_id", "expected"), SYNC, ids=[r[0] for r in SYNC]
)
def test_bidder_sync_allowed(
    rule: str,
    tc: str,
    host: dict[str, Any],
    account: dict[str, Any],
    gvl: GlobalVendorList | None,
    vendor_id: int,
    expected: bool,
) -> None:
    assert GdprPermissions(policy(host, account), tc, gvl=gvl).bidder_sync_allowed(BIDDER, vendor_id) is expected


# (rule, consent, host gdpr.tcf2, account gdpr, GVL, host vendor id, host cookie allowed)
HOST: list[tuple[str, str, dict[str, Any], dict[str, Any], GlobalVendorList | None, int, bool]] = [
    ("no host vendor id", "", {}, {}, GVL_P1, 0, True),
    ("no host vendor id, malformed consent", "malformed", {}, {}, GVL_P1, 0, True),
    ("empty consent", "", {}, {}, GVL_P1, V, False),
    ("consent", consent(**P1), {}, {}, GVL_P1, V, True),
    ("no consent", consent(), {}, {}, GVL_P1, V, False),
    ("vendor exceptions never apply to the host", consent(), purpose(1, vendor_exceptions=[""]), {}, GVL_P1, V, False),
    ("host vendor not in the GVL, purpose-one treatment (PBS-Go)", consent(**P1T), {}, {}, GVL_OTHER, V, True),
    ("host vendor not in the GVL, consent", consent(**P1), {}, {}, GVL_OTHER, V, False),
    ("purpose 1 not enforced", consent(), purpose(1, enforce_purpose=False), {}, GVL_P1, V, True),
    ("account does not enforce purpose 1", consent(), {}, purpose(1, enforce_purpose=False), GVL_P1, V, True),
    ("no GVL: basic", consent(**P1), {}, {}, NO_GVL, V, True),
]


@pytest.mark.parametrize(
    ("rule", "tc", "host", "account", "gvl", "vendor_id", "expected"), HOST, ids=[r[0] for r in HOST]
)
def test_host_cookie_allowed(
    rule: str,
    tc: str,
    host: dict[str, Any],
    account: dict[str, Any],
    gvl: GlobalVendorList | None,
    vendor_id: int,
    expected: bool,
) -> None:
    assert GdprPermissions(policy(host, account), tc, gvl=gvl).host_cookie_allowed(vendor_id) is expected


@pytest.mark.parametrize(
    ("tc", "cause"), [("malformed", "invalid base64url"), (TCF_V1, "not a TCF v2 string: version 1")]
)
def test_host_cookie_malformed_consent_raises(tc: str, cause: str) -> None:
    perms = GdprPermissions(policy(), tc, gvl=GVL_P1)
    with pytest.raises(ConsentError) as info:
        perms.host_cookie_allowed(V)
    assert str(info.value) == cause
    assert perms.bidder_sync_allowed(BIDDER, V) is False  # a bidder is only refused


# PBS-Go TestNewPurposeEnforcerBuilder: (rule, purpose's algo, basic enforcement vendors, purpose,
# GVL loaded, enforcer class, refuses restriction 0 in basic)
BUILDER: list[tuple[str, str, list[str], int, bool, type, bool]] = [
    ("purpose 1 full", "full", [], 1, True, FullEnforcement, False),
    ("purpose 1 full, basic enforcement vendor: not downgraded", "full", [BIDDER], 1, True, FullEnforcement, False),
    ("purpose 1 basic", "basic", [], 1, True, BasicEnforcement, False),
    ("purpose 2 full", "full", [], 2, True, FullEnforcement, False),
    ("purpose 2 full, basic enforcement vendor: downgraded", "full", [BIDDER], 2, True, BasicEnforcement, False),
    ("purpose 2 basic", "basic", [], 2, True, BasicEnforcement, False),
    ("purpose 2 full, no GVL: basic standing in", "full", [], 2, False, BasicEnforcement, True),
    ("purpose 1 full, no GVL: basic standing in", "full", [], 1, False, BasicEnforcement, True),
    ("purpose 2 basic, no GVL", "basic", [], 2, False, BasicEnforcement, False),
    ("purpose 2 downgraded, no GVL", "full", [BIDDER], 2, False, BasicEnforcement, False),
]


@pytest.mark.parametrize(
    ("rule", "algo", "basic", "n", "has_gvl", "kind", "refuses"), BUILDER, ids=[r[0] for r in BUILDER]
)
def test_enforcer_choice(
    rule: str, algo: str, basic: list[str], n: int, has_gvl: bool, kind: type, refuses: bool
) -> None:
    built = enforcers(policy(purpose(n, enforce_algo=algo), {"basic_enforcement_vendors": basic}))
    enforcer = built.get(n, BIDDER, has_gvl)
    assert type(enforcer) is kind
    assert enforcer.cfg.purpose == n
    assert getattr(enforcer, "refuse_not_allowed", False) is refuses


def test_enforcers_are_built_once_per_policy() -> None:
    shared = policy(account=BASIC_VENDOR)
    first = enforcers(shared)
    assert enforcers(shared) is first
    for n in range(1, 11):  # same objects across bidders; a basic vendor gets another one (purposes 2-10)
        assert first.get(n, "ix", True) is first.get(n, "rubicon", True)
        assert (first.get(n, BIDDER, True) is first.get(n, "ix", True)) is (n == 1)
    GdprPermissions(shared, consent(**P2), gvl=GVL_P2_CONSENT).auction(BIDDER, BIDDER, V)
    assert enforcers(shared) is first


def test_consent_is_decoded_once_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(value: str, key: str | None) -> Any:
        calls.append(value)
        return parse_tcf2(value)

    monkeypatch.setattr(permissions_module, "parse_tcf2_choices", counting)
    tc = consent(**P2)
    perms = GdprPermissions(policy(), tc, gvl=GVL_P2_CONSENT)
    for bidder in ("a", "b", "c"):
        perms.auction(bidder, bidder, V)
    perms.bidder_sync_allowed(BIDDER, V)
    assert calls == [tc]
    GdprPermissions(policy(), "", gvl=None).auction(BIDDER, BIDDER, V)
    assert calls == [tc]  # an empty consent is not decoded


def test_sync_decisions_are_kept_by_the_consents_choices_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every user's string has its own timestamps: a decision is made once per choices key (bidder,
    vendor, vendor list) and kept on the policy, at most SYNCS_CACHE_SIZE of them."""
    monkeypatch.setattr(permissions_module, "SYNCS_CACHE_SIZE", 4)
    tcf = policy()
    allowed = {"purposes": [1], "vendors": [V]}
    strings = [consent(**allowed, created=16_500_000_000 + n, last_updated=16_500_000_000 + 2 * n) for n in range(3)]
    assert len(set(strings)) == 3
    assert GdprPermissions(tcf, strings[0], gvl=NO_GVL).bidder_sync_allowed(BIDDER, V)
    assert GdprPermissions(tcf, strings[0], gvl=NO_GVL).host_cookie_allowed(V)
    kept = permissions_module.enforcers(tcf).syncs
    assert len(kept) == 2
    monkeypatch.setattr(permissions_module, "sync_allowed", None)  # the others' decisions come from the memo
    for other in strings[1:]:
        perms = GdprPermissions(tcf, other, gvl=NO_GVL)
        assert perms.bidder_sync_allowed(BIDDER, V) and perms.host_cookie_allowed(V)
    assert len(kept) == 2
    monkeypatch.undo()
    monkeypatch.setattr(permissions_module, "SYNCS_CACHE_SIZE", 4)
    refused = consent(purposes=[1], vendors=[6])  # other choices: a key of its own, decided anew
    assert not GdprPermissions(tcf, refused, gvl=NO_GVL).bidder_sync_allowed(BIDDER, V)
    for vendor_id in range(40, 50):
        GdprPermissions(tcf, refused, gvl=NO_GVL).bidder_sync_allowed(BIDDER, vendor_id)
        assert len(kept) <= 4
    before = dict(kept)
    with pytest.raises(ConsentError):  # a malformed string is never kept
        GdprPermissions(tcf, strings[0][:30], gvl=NO_GVL).host_cookie_allowed(V)
    assert not GdprPermissions(tcf, strings[0][:30], gvl=NO_GVL).bidder_sync_allowed(BIDDER, V)
    assert kept == before


def test_sync_decisions_key_names_what_every_sync_decision_is_read_from() -> None:
    """(choices key, vendor list): strings differing only in their timestamps share it; other
    choices or another list do not; a string that cannot decode has none."""
    tcf = policy()
    gvl = gvl_of(vendor())
    first, later = (consent(purposes=[1], vendors=[V], created=16_500_000_000 + n) for n in range(2))
    key = GdprPermissions(tcf, first, gvl=gvl).sync_decisions_key()
    assert key == GdprPermissions(tcf, later, gvl=gvl).sync_decisions_key()
    assert key is not None and key[1] is gvl
    assert key != GdprPermissions(tcf, consent(purposes=[1], vendors=[6]), gvl=gvl).sync_decisions_key()
    assert key != GdprPermissions(tcf, first, gvl=gvl_of(vendor())).sync_decisions_key()
    assert GdprPermissions(tcf, "", gvl=gvl).sync_decisions_key() is None
    assert GdprPermissions(tcf, "CPX", gvl=gvl).sync_decisions_key() is None


# PBS-Go TestBasicLegalBasis, run on BasicEnforcement itself with its overrides.
# (rule, consent, enforce purpose, enforce vendors, vendor exception, basic vendor, overrides, legal basis)
BASIC: list[tuple[str, dict[str, Any], bool, bool, bool, bool, dict[str, bool], bool]] = [
    ("purpose and vendors off", NOTHING, False, False, False, False, {}, True),
    ("purpose on, no purpose consent", NOTHING, True, False, False, False, {}, False),
    ("purpose on, purpose consent", P2_PURPOSE_ONLY, True, False, False, False, {}, True),
    (
        "purpose consent, vendors forced on",
        P2_PURPOSE_ONLY,
        True,
        False,
        False,
        False,
        {"enforce_vendors": True},
        False,
    ),
    ("purpose and vendor consent, vendors forced on", P2, True, False, False, False, {"enforce_vendors": True}, True),
    ("LI transparency without the override", P2_LI_TRANSPARENCY_ONLY, True, False, False, False, {}, False),
    ("LI transparency with the override", P2_LI_TRANSPARENCY_ONLY, True, False, False, False, {"allow_li": True}, True),
    ("vendors on, no vendor consent", NOTHING, False, True, False, False, {}, False),
    ("vendors on, vendor consent", VENDOR_ONLY, False, True, False, False, {}, True),
    ("vendor consent, purpose forced on", VENDOR_ONLY, False, True, False, False, {"enforce_purpose": True}, False),
    ("purpose and vendor consent, purpose forced on", P2, False, True, False, False, {"enforce_purpose": True}, True),
    ("vendors on, basic vendor", NOTHING, False, True, False, True, {}, True),
    ("both on, nothing", NOTHING, True, True, False, False, {}, False),
    ("both on, vendor exception", NOTHING, True, True, True, False, {}, True),
    ("both on, vendor exception blocked", NOTHING, True, True, True, False, {"block_exceptions": True}, False),
    ("both on, purpose consent only", P2_PURPOSE_ONLY, True, True, False, False, {}, False),
    ("both on, purpose consent, basic vendor", P2_PURPOSE_ONLY, True, True, False, True, {}, True),
    ("both on, purpose and vendor consent", P2, True, True, False, False, {}, True),
    (
        "purpose consent without vendor consent, LI override",
        {"purposes": [2], "purposes_li": [2]},
        True,
        True,
        False,
        False,
        {"allow_li": True},
        True,
    ),
]


@pytest.mark.parametrize(
    ("rule", "signals", "by_purpose", "by_vendor", "exception", "basic_vendor", "overrides", "expected"),
    BASIC,
    ids=[r[0] for r in BASIC],
)
def test_basic_legal_basis(
    rule: str,
    signals: dict[str, Any],
    by_purpose: bool,
    by_vendor: bool,
    exception: bool,
    basic_vendor: bool,
    overrides: dict[str, bool],
    expected: bool,
) -> None:
    cfg = policy(
        purpose(
            2,
            enforce_purpose=by_purpose,
            enforce_vendors=by_vendor,
            vendor_exceptions=[BIDDER] if exception else [],
        )
    ).purpose(2)
    enforcer = BasicEnforcement(cfg, frozenset({BIDDER}) if basic_vendor else frozenset())
    parsed = parse_tcf2(consent(**signals))
    assert enforcer.legal_basis(parsed, V, None, BIDDER, **overrides) is expected


# PBS-Go TestLegalBasisWith*: vendor 32 declares purpose 1 on consent, 2 on LI, 3 flexible.
FULL_VENDOR = parse_gvl({"vendorListVersion": 2, "vendors": {"32": vendor(purposes=[1], li=[2], flexible=[3])}}).vendor(
    V
)
P123 = [1, 2, 3]

# (rule, consent, enforce purpose, enforce vendors, overrides, (purpose 1, purpose 2, purpose 3))
FULL: list[tuple[str, str, bool, bool, dict[str, bool], tuple[bool, bool, bool]]] = [
    ("purpose and vendors off", consent(), False, False, {}, (True, True, True)),
    ("purpose on, nothing", consent(), True, False, {}, (False, False, False)),
    ("purpose on, purpose consent", consent(purposes=P123), True, False, {}, (True, False, True)),
    ("purpose on, LI transparency", consent(purposes_li=P123), True, False, {}, (False, True, True)),
    (
        "purpose consent, vendors forced on",
        consent(purposes=P123),
        True,
        False,
        {"enforce_vendors": True},
        (False, False, False),
    ),
    (
        "purpose and vendor consent, vendors forced on",
        consent(purposes=P123, vendors=[V]),
        True,
        False,
        {"enforce_vendors": True},
        (True, False, True),
    ),
    ("vendors on, vendor consent", consent(vendors=[V]), False, True, {}, (True, False, True)),
    ("vendors on, vendor LI", consent(vendors_li=[V]), False, True, {}, (False, True, True)),
    (
        "vendor consent, purpose forced on",
        consent(vendors=[V]),
        False,
        True,
        {"enforce_purpose": True},
        (False, False, False),
    ),
    ("both on, LI and vendor LI", consent(purposes_li=P123, vendors_li=[V]), True, True, {}, (False, True, True)),
    ("both on, LI without vendor LI", consent(purposes_li=P123), True, True, {}, (False, False, False)),
    ("restriction 0 for all three, nothing enforced", "", False, False, {}, (False, False, False)),
]


def _restricted_everything() -> str:
    return CoreSegment(purposes=P123, vendors=[V], restrictions=[Restriction(p, 0, [(V, V)]) for p in P123]).encode()


@pytest.mark.parametrize(
    ("rule", "tc", "by_purpose", "by_vendor", "overrides", "expected"), FULL, ids=[r[0] for r in FULL]
)
def test_full_legal_basis(
    rule: str, tc: str, by_purpose: bool, by_vendor: bool, overrides: dict[str, bool], expected: tuple[bool, bool, bool]
) -> None:
    host = {f"purpose{n}": {"enforce_purpose": by_purpose, "enforce_vendors": by_vendor} for n in P123}
    parsed = parse_tcf2(tc or _restricted_everything())
    built = policy(host)
    got = tuple(
        FullEnforcement(built.purpose(n)).legal_basis(parsed, V, FULL_VENDOR, BIDDER, **overrides) for n in P123
    )
    assert got == expected


def test_gvl_special_features() -> None:
    listed = gvl_of(vendor(features=[1, 2]), {"id": 6}).vendor
    assert listed(V).special_features == frozenset({1, 2})
    assert listed(6).special_features == frozenset()
    with pytest.raises(GVLError, match=r"vendors.32.specialFeatures must be a list of integers"):
        gvl_of({"id": V, "specialFeatures": "1"})


# The sync endpoints' gate with an account's settings (what /cookie_sync and /setuid call).
def gate_privacy(tc: str) -> SyncPrivacy:
    return SyncPrivacy(1, tc, "", "", "")


# (rule, account gdpr, consent, host cookie allowed, bidder sync allowed)
GATE: list[tuple[str, dict[str, Any], str, bool, bool]] = [
    ("built-in settings", {}, consent(), False, False),
    ("account does not enforce purpose 1", purpose(1, enforce_purpose=False), consent(), True, True),
    (
        "account purpose 1 vendor exception: the bidder only",
        purpose(1, vendor_exceptions=[BIDDER]),
        consent(),
        False,
        True,
    ),
    (
        "account purpose-one treatment, access not allowed",
        {"purpose_one_treatment": {"access_allowed": False}},
        consent(**P1T, **P1),
        False,
        False,
    ),
]


@pytest.mark.parametrize(("rule", "account", "tc", "host_allowed", "bidder_allowed"), GATE, ids=[r[0] for r in GATE])
def test_sync_gate_uses_account_settings(
    rule: str, account: dict[str, Any], tc: str, host_allowed: bool, bidder_allowed: bool
) -> None:
    problems: list[str] = []
    config = build(Config, {"gdpr": {"host_vendor_id": V}}, "", problems)
    acct = build(AccountGdpr, account, "gdpr", problems)
    assert problems == []
    gate = PrivacyGate(config, None)
    tcf = gate.policy(acct)
    assert tcf is policy_for(config.gdpr, acct)
    assert gate.host_cookie_allowed(gate_privacy(tc), tcf) is host_allowed
    assert gate.bidder_allowed(gate_privacy(tc), V, BIDDER, tcf) is bidder_allowed
    assert gate.permissions(gate_privacy(tc), tcf).bidder_sync_allowed(BIDDER, V) is bidder_allowed
