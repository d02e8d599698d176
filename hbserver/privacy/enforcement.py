"""Prebid Server's purpose-1 ("store and/or access information on a device") check for syncs.

Follows PBS-Go ``gdpr/impl.go`` ``allowSync`` with its default configuration: purpose 1
enforced, vendors enforced, no vendor exceptions, purpose-one treatment enabled with
``access_allowed: true``. With a GVL the "full" algorithm applies (``full_enforcement.go``),
without one the "basic" algorithm (``basic_enforcement.go``), as PBS-Go uses it when the
vendor list is not consulted.

Points where this reads the sources literally (PBS-Go behaviour, not a stricter TCF reading):
- A purpose the vendor declares *flexible* counts for both the consent and the LI route,
  with or without a publisher restriction (go-gdpr's ``Purpose``/``LegitimateInterest``).
- Restriction types 1 and 2 force their route whether or not the purpose is flexible.
- Restriction type 0 denies in both modes (PBS-Go's basic algorithm does not look at it;
  hbserver does, on the side of caution).
"""

from __future__ import annotations

from hbserver.privacy.gvl import GlobalVendorList
from hbserver.privacy.tcf2 import (
    RESTRICTION_NOT_ALLOWED,
    RESTRICTION_REQUIRE_CONSENT,
    RESTRICTION_REQUIRE_LI,
    ConsentError,
    TCF2Consent,
    parse_tcf2_cached,
)

PURPOSE_STORAGE = 1


def allow_sync(consent: TCF2Consent, vendor_id: int, gvl: GlobalVendorList | None) -> bool:
    """May this vendor store/access information on the device under this consent?

    With a GVL the vendor must be listed, checked first as in PBS-Go (so even purpose-one
    treatment does not help an unlisted vendor).
    """
    vendor = None if gvl is None else gvl.vendor(vendor_id)
    if gvl is not None and vendor is None:
        return False
    if consent.purpose_one_treatment:  # P1T enabled, access_allowed=true
        return True
    restriction = consent.restriction(PURPOSE_STORAGE, vendor_id)
    if restriction == RESTRICTION_NOT_ALLOWED:
        return False
    if vendor is None:  # no GVL: basic enforcement
        return consent.purpose_consent(PURPOSE_STORAGE) and consent.vendor_consent(vendor_id)
    flexible = PURPOSE_STORAGE in vendor.flexible_purposes
    by_consent = (
        (flexible or PURPOSE_STORAGE in vendor.purposes)
        and consent.purpose_consent(PURPOSE_STORAGE)
        and consent.vendor_consent(vendor_id)
    )
    if restriction == RESTRICTION_REQUIRE_CONSENT:
        return by_consent
    by_li = (
        (flexible or PURPOSE_STORAGE in vendor.leg_int_purposes)
        and consent.purpose_li(PURPOSE_STORAGE)
        and consent.vendor_li(vendor_id)
    )
    if restriction == RESTRICTION_REQUIRE_LI:
        return by_li
    return by_consent or by_li


def allow_bidder_sync(consent: str, vendor_id: int, gvl: GlobalVendorList | None) -> bool:
    """The per-bidder check for a request in GDPR scope; never raises.

    False for vendor id 0 (no ``gvl_vendor_id``), for a vendor missing from a loaded GVL and
    for an empty or malformed consent string ("Rejected by privacy" in /cookie_sync).
    """
    if vendor_id <= 0 or (gvl is not None and gvl.vendor(vendor_id) is None):
        return False
    try:
        parsed = parse_tcf2_cached(consent)
    except ConsentError:
        return False
    return allow_sync(parsed, vendor_id, gvl)


def host_cookie_allowed(gdpr_signal: int, consent: str, host_vendor_id: int, gvl: GlobalVendorList | None) -> bool:
    """May the host write its cookie? ``gdpr_signal`` is the normalised signal (0 or 1).

    True when no host vendor id is configured (0) or GDPR does not apply; False for an empty
    consent. Raises ConsentError for a malformed consent string: /setuid answers 400
    ``gdpr_consent was invalid. malformed consent string <c>: <cause>`` with str(exc) as the
    cause, and /cookie_sync treats it as "host cookie not allowed".
    """
    if host_vendor_id == 0 or gdpr_signal == 0:
        return True
    if not consent:
        return False
    return allow_sync(parse_tcf2_cached(consent), host_vendor_id, gvl)
