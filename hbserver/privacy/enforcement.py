"""Prebid Server's purpose-1 ("store and/or access information on a device") checks for syncs.

Thin wrappers over :mod:`hbserver.privacy.permissions` (PBS-Go ``gdpr/impl.go`` ``allowSync``)
for callers holding one consent string and one vendor. ``policy`` is the account's
:class:`~hbserver.privacy.tcf_policy.TcfPolicy`; it defaults to the built-in configuration:
purpose 1 enforced on purpose and vendors with the "full" algorithm, no vendor exceptions,
purpose-one treatment enabled with ``access_allowed: true``. Without a GVL enforcement is
"basic" (the permissions module says how, and why a type-0 publisher restriction still denies).
``gvl`` may be the :class:`~hbserver.privacy.vendorlists.VendorLists` store: the consent string's
own version is used.
"""

from __future__ import annotations

from hbserver.privacy.gvl import GlobalVendorList
from hbserver.privacy.permissions import PURPOSE_STORAGE, GdprPermissions, listed, sync_allowed
from hbserver.privacy.tcf2 import ConsentError, TCF2Consent, parse_tcf2_cached
from hbserver.privacy.tcf_policy import TcfPolicy, default_policy
from hbserver.privacy.vendorlists import VendorLists, resolve


def allow_sync(
    consent: TCF2Consent,
    vendor_id: int,
    gvl: GlobalVendorList | VendorLists | None,
    *,
    policy: TcfPolicy | None = None,
    bidder: str = "",
) -> bool:
    """May this bidder's vendor store/access information on the device under this consent?

    With a GVL the vendor must be listed, checked first as in PBS-Go's ``BidderSyncAllowed`` (so
    even purpose-one treatment does not help an unlisted vendor). ``bidder`` names the bidder for
    purpose-1 vendor exceptions.
    """
    gvl = resolve(gvl, consent)
    if not listed(gvl, vendor_id):
        return False
    policy = policy or default_policy()
    exception = bool(bidder) and bidder in policy.purpose_vendor_exceptions(PURPOSE_STORAGE)
    return sync_allowed(policy, consent, vendor_id, gvl, bidder, exception)


def allow_bidder_sync(
    consent: str,
    vendor_id: int,
    gvl: GlobalVendorList | VendorLists | None,
    *,
    policy: TcfPolicy | None = None,
    bidder: str = "",
) -> bool:
    """The per-bidder check for a request in GDPR scope; never raises.

    False for vendor id 0 (no ``gvl_vendor_id``), for a vendor missing from a loaded GVL and
    for an empty or malformed consent string ("Rejected by privacy" in /cookie_sync).
    """
    if vendor_id <= 0:
        return False
    try:
        parsed = parse_tcf2_cached(consent)
    except ConsentError:
        return False
    return allow_sync(parsed, vendor_id, gvl, policy=policy, bidder=bidder)


def host_cookie_allowed(
    gdpr_signal: int,
    consent: str,
    host_vendor_id: int,
    gvl: GlobalVendorList | VendorLists | None,
    *,
    policy: TcfPolicy | None = None,
) -> bool:
    """May the host write its cookie? ``gdpr_signal`` is the normalised signal (0 or 1).

    True when no host vendor id is configured (0) or GDPR does not apply; False for an empty
    consent. Raises ConsentError for a malformed consent string: /setuid answers 400
    ``gdpr_consent was invalid. malformed consent string <c>: <cause>`` with str(exc) as the
    cause, and /cookie_sync treats it as "host cookie not allowed". Unlike a bidder, the host
    vendor is not required to be in the GVL (PBS-Go ``HostCookiesAllowed``): purpose-one
    treatment still allows it; otherwise an unlisted vendor has no legal basis.
    """
    if host_vendor_id == 0 or gdpr_signal == 0:
        return True
    return GdprPermissions(policy or default_policy(), consent, gvl=gvl).host_cookie_allowed(host_vendor_id)
