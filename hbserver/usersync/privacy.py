"""Privacy signals of a sync request, and the decisions /cookie_sync and /setuid take from them.

Extraction follows PBS-Go (reference §2.3, §3 step 8): a non-empty ``gpp_sid`` decides the GDPR
signal (in scope when it holds section 2) and the GPP TCF section overrides ``gdpr_consent``;
the GPP US Privacy section is used when ``gpp_sid`` holds 6, and a different ``us_privacy``
beside it is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from hbserver.config import AccountGdpr, Config
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.enforcement import allow_bidder_sync, host_cookie_allowed
from hbserver.privacy.gpp import SECTION_TCF_EU_V2, SECTION_US_PRIVACY, GPPError, parse_gpp, parse_gpp_sid
from hbserver.privacy.gvl import GlobalVendorList
from hbserver.privacy.permissions import GdprPermissions
from hbserver.privacy.tcf_policy import TcfPolicy, policy_for
from hbserver.privacy.vendorlists import VendorLists


class PrivacyRequestError(ValueError):
    """A privacy parameter the request cannot go on with (the message is PBS-Go's)."""


@dataclass(slots=True)  # not frozen: built per request, and a frozen __init__ is slow
class SyncPrivacy:
    gdpr_signal: int | None  # 1, 0 or None (not given: ambiguous)
    consent: str
    us_privacy: str  # valid US Privacy string or ""
    gpp: str  # raw, for the {{.GPP}} macro
    gpp_sid: str  # raw, for the {{.GPPSID}} macro

    def macros(self) -> dict[str, str]:
        return {
            "GDPR": "" if self.gdpr_signal is None else str(self.gdpr_signal),
            "GDPRConsent": self.consent,
            "USPrivacy": self.us_privacy,
            "GPP": self.gpp,
            "GPPSID": self.gpp_sid,
        }


def _gpp_sections(gpp: str) -> dict[int, str]:
    if not gpp:
        return {}
    try:
        return parse_gpp(gpp).sections
    except GPPError as exc:
        raise PrivacyRequestError(str(exc)) from None


def cookie_sync_privacy(
    gdpr: int | None, gdpr_consent: str, us_privacy: str, gpp: str, gpp_sid: str, default_value: str
) -> SyncPrivacy:
    """PBS-Go's ``extractPrivacyPolicies`` for /cookie_sync; raises PrivacyRequestError."""
    if not gpp and not gpp_sid and not us_privacy and gdpr == 0:
        return SyncPrivacy(0, gdpr_consent, "", "", "")  # the common case, without the parsers
    try:
        sids = parse_gpp_sid(gpp_sid)
    except ValueError as exc:
        raise PrivacyRequestError(str(exc)) from None
    if sids:
        signal: int | None = 1 if SECTION_TCF_EU_V2 in sids else 0
    else:
        if gdpr not in (None, 0, 1):
            raise PrivacyRequestError("GDPR signal should be integer 0 or 1")
        signal = gdpr
    sections = _gpp_sections(gpp)
    consent = sections.get(SECTION_TCF_EU_V2, gdpr_consent)
    if not consent:
        if signal == 1:
            raise PrivacyRequestError("gdpr_consent is required if gdpr=1")
        if signal is None and default_value == "1":
            raise PrivacyRequestError(
                "gdpr_consent is required. gdpr is not specified and is assumed to be 1 by the server. "
                "set gdpr=0 to exempt this request"
            )
    usp = us_privacy
    if SECTION_US_PRIVACY in sids and SECTION_US_PRIVACY in sections:
        from_gpp = sections[SECTION_US_PRIVACY]
        if us_privacy and us_privacy != from_gpp:
            raise PrivacyRequestError("request.us_privacy consent does not match uspv1")
        usp = from_gpp
    return SyncPrivacy(signal, consent, valid_us_privacy(usp), gpp, gpp_sid)


def setuid_privacy(gdpr: str, gdpr_consent: str, gpp: str, gpp_sid: str) -> SyncPrivacy:
    """PBS-Go's /setuid rules: GPP first, then ``gdpr``/``gdpr_consent``; raises PrivacyRequestError."""
    if not gpp and not gpp_sid and not gdpr_consent and (gdpr == "0" or not gdpr):
        return SyncPrivacy(0 if gdpr else None, "", "", "", "")  # the common case, without the parsers
    try:
        sids = parse_gpp_sid(gpp_sid)
    except ValueError:
        raise PrivacyRequestError("invalid gpp_sid encoding, must be a csv list of integers") from None
    sections = _gpp_sections(gpp)
    signal: int | None = (1 if SECTION_TCF_EU_V2 in sids else 0) if sids else None
    consent = sections.get(SECTION_TCF_EU_V2, "")
    if signal is None and not consent:
        if gdpr not in ("", "0", "1"):
            raise PrivacyRequestError(f"the gdpr query param must be either 0 or 1. You gave {gdpr}")
        signal = int(gdpr) if gdpr else None
        consent = gdpr_consent
    if signal == 1 and not consent:
        raise PrivacyRequestError("GDPR consent is required when gdpr signal equals 1")
    return SyncPrivacy(signal, consent, "", gpp, gpp_sid)


def valid_us_privacy(value: str) -> str:
    if not value:
        return ""
    try:
        parse_us_privacy(value)
    except ValueError:
        return ""
    return value


class PrivacyGate:
    """The host's privacy settings applied to a request's signals."""

    def __init__(self, config: Config, gvl: GlobalVendorList | VendorLists | None = None) -> None:
        self.enabled = config.gdpr.enabled
        self.gdpr = config.gdpr
        self.default_value = config.gdpr.default_value
        self.host_vendor_id = config.gdpr.host_vendor_id
        self.enforce_ccpa = config.ccpa.enforce
        self.gvl = gvl

    def in_scope(self, privacy: SyncPrivacy) -> bool:
        """Whether GDPR applies: an ambiguous signal counts as in scope unless default_value is "0"."""
        if not self.enabled:
            return False
        if privacy.gdpr_signal is None:
            return self.default_value != "0"
        return privacy.gdpr_signal == 1

    def policy(self, account: AccountGdpr) -> TcfPolicy:
        """The host's ``gdpr.tcf2`` with this account's ``gdpr`` overrides (built once per account)."""
        return policy_for(self.gdpr, account)

    def permissions(self, privacy: SyncPrivacy, policy: TcfPolicy) -> GdprPermissions:
        """Per-request TCF decisions (the consent decoded once); for a request in scope.

        As in PBS-Go, syncs do not look at the account's channel switches (``channel_enabled``).
        """
        return self.consent_permissions(privacy.consent, policy)

    def consent_permissions(self, consent: str, policy: TcfPolicy) -> GdprPermissions:
        """:meth:`permissions` for the (effective) consent string itself."""
        return GdprPermissions(policy, consent, gvl=self.gvl)

    def host_cookie_allowed(self, privacy: SyncPrivacy, policy: TcfPolicy | None = None) -> bool:
        """May the host set its cookie at all? Raises ConsentError for a malformed consent string."""
        if not self.in_scope(privacy):
            return True
        return host_cookie_allowed(1, privacy.consent, self.host_vendor_id, self.gvl, policy=policy)

    def bidder_allowed(
        self, privacy: SyncPrivacy, vendor_id: int, bidder: str = "", policy: TcfPolicy | None = None
    ) -> bool:
        if not self.in_scope(privacy):
            return True
        return allow_bidder_sync(privacy.consent, vendor_id, self.gvl, policy=policy, bidder=bidder)

    def ccpa_blocks(self, privacy: SyncPrivacy) -> bool:
        """With ``ccpa.enforce``, a US Privacy opt-out of sale blocks syncs (PBS-Java)."""
        if not self.enforce_ccpa or not privacy.us_privacy:
            return False
        return parse_us_privacy(privacy.us_privacy).opt_out_sale
