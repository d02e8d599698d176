"""TCF v2 decisions for one request: PBS-Go's ``permissionsImpl`` and its purpose enforcers.

Written from PBS-Go ``gdpr/impl.go`` (host cookie, bidder sync, auction activities),
``purpose_enforcer.go`` (which algorithm a purpose and bidder get), ``full_enforcement.go`` and
``basic_enforcement.go``. Build a :class:`GdprPermissions` only for a request GDPR is enforced
for (signal 1, or the default says so, and the policy's channel is enabled); it parses the
consent string at most once (``parse_tcf2_cached``).

The auction (``AuctionActivitiesAllowed``):
- a publisher in ``gdpr.non_standard_publishers``: everything allowed;
- an empty or malformed consent: the bid request only when purpose 2 is not enforced, geo only
  when special feature 1 is not enforced, never ids;
- vendor id: the request's ``ext.prebid.aliasgvlids`` entry for the bidder, else the bidder's
  ``gvl_vendor_id``; with a GVL loaded, an id the list does not hold counts as 0 (PBS-Go's
  ``LiveGVLVendorIDs``; a list with no vendors holds every id);
- bid request: purpose 2 (a basic enforcer also takes purpose-2 LI transparency);
- geo: special feature 1 opt-in, and the vendor declares special feature 1 in the GVL or is a
  ``basic_enforcement_vendors`` entry; special-feature vendor exceptions pass without opt-in;
- ids: any of purposes 2 to 10, each enforced on purpose and vendor whatever the settings say.
Vendor exceptions, basic enforcement vendors and the "basic" downgrade are looked up by the core
bidder name in the auction and by the bidder name for syncs, as PBS-Go keys them.

``gvl`` is one list or the :class:`~hbserver.privacy.vendorlists.VendorLists` store, which gives
each request the list its consent string names (resolved once per request, after decoding).

Without a Global Vendor List (none fetched yet and no ``gdpr.vendorlist_file``: ``gvl`` None)
enforcement is "basic" for every purpose, as hbserver has always documented: full enforcement
needs the vendors' declarations. Two hbserver rules make that the closest stand-in for PBS-Go's full algorithm:
- where the configured algorithm is "full" (and no basic-vendor downgrade applies), the basic
  check still refuses a vendor a publisher restriction of type 0 (not allowed) names for the
  purpose, which full enforcement reads from the consent string alone;
- geo needs only the special feature 1 opt-in (every bidder is treated as a basic enforcement
  vendor for geo: the GVL's special-feature declarations are what is missing).
A configured "basic" algorithm (or a downgrade) behaves exactly as PBS-Go's, GVL or not.

go-gdpr semantics kept: a purpose the vendor declares flexible counts for both the consent and
the LI route; restriction types 1 and 2 force their route whether or not the purpose is flexible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hbserver.privacy.gvl import GlobalVendorList, VendorInfo
from hbserver.privacy.tcf2 import (
    RESTRICTION_NOT_ALLOWED,
    RESTRICTION_REQUIRE_CONSENT,
    RESTRICTION_REQUIRE_LI,
    ConsentError,
    TCF2Consent,
    choices_key,
    parse_tcf2_choices,
)
from hbserver.privacy.tcf_policy import ALGO_BASIC, ALGO_FULL, PurposePolicy, TcfPolicy
from hbserver.privacy.vendorlists import VendorLists

PURPOSE_STORAGE = 1
PURPOSE_BASIC_ADS = 2
ID_PURPOSES = range(2, 11)
SPECIAL_FEATURE_GEO = 1


@dataclass(frozen=True, slots=True)
class AuctionPermissions:
    """What one bidder may get in an auction (PBS-Go ``AuctionPermissions``)."""

    allow_bid_request: bool
    pass_geo: bool
    pass_id: bool


ALLOW_ALL = AuctionPermissions(True, True, True)
DENY_ALL = AuctionPermissions(False, False, False)
ALLOW_BID_REQUEST_ONLY = AuctionPermissions(True, False, False)
_DEFAULTS = {(bid, geo): AuctionPermissions(bid, geo, False) for bid in (False, True) for geo in (False, True)}


class FullEnforcement:
    """PBS-Go ``FullEnforcement``: the vendor's GVL declarations, publisher restrictions, signals."""

    __slots__ = ("cfg",)
    is_basic = False

    def __init__(self, cfg: PurposePolicy) -> None:
        self.cfg = cfg

    def legal_basis(
        self,
        consent: TCF2Consent,
        vendor_id: int,
        vendor: VendorInfo | None,
        name: str,
        *,
        allow_li: bool = False,
        block_exceptions: bool = False,
        enforce_purpose: bool = False,
        enforce_vendors: bool = False,
    ) -> bool:
        """``allow_li`` is a basic-algorithm override, accepted here and ignored (as in PBS-Go)."""
        cfg = self.cfg
        p = cfg.purpose
        restriction = consent.restriction(p, vendor_id) if consent.publisher_restrictions else None
        if restriction == RESTRICTION_NOT_ALLOWED:
            return False
        by_purpose = enforce_purpose or cfg.enforce_purpose
        by_vendor = enforce_vendors or cfg.enforce_vendors
        if not by_purpose and not by_vendor:
            return True
        if not block_exceptions and name in cfg.vendor_exceptions:
            return True
        if vendor is None:
            return False
        flexible = p in vendor.flexible_purposes
        by_consent = (
            (flexible or p in vendor.purposes)
            and (not by_purpose or consent.purpose_consent(p))
            and (not by_vendor or consent.vendor_consent(vendor_id))
        )
        if restriction == RESTRICTION_REQUIRE_CONSENT:
            return by_consent
        by_li = (
            (flexible or p in vendor.leg_int_purposes)
            and (not by_purpose or consent.purpose_li(p))
            and (not by_vendor or consent.vendor_li(vendor_id))
        )
        if restriction == RESTRICTION_REQUIRE_LI:
            return by_li
        return by_consent or by_li


class BasicEnforcement:
    """PBS-Go ``BasicEnforcement``: the user's signals only, no GVL.

    ``refuse_not_allowed`` adds the type-0 publisher restriction check (hbserver's stand-in for
    full enforcement when no GVL is loaded; see the module docstring).
    """

    __slots__ = ("basic_vendors", "cfg", "refuse_not_allowed")
    is_basic = True

    def __init__(self, cfg: PurposePolicy, basic_vendors: frozenset[str], refuse_not_allowed: bool = False) -> None:
        self.cfg = cfg
        self.basic_vendors = basic_vendors
        self.refuse_not_allowed = refuse_not_allowed

    def legal_basis(
        self,
        consent: TCF2Consent,
        vendor_id: int,
        vendor: VendorInfo | None,
        name: str,
        *,
        allow_li: bool = False,
        block_exceptions: bool = False,
        enforce_purpose: bool = False,
        enforce_vendors: bool = False,
    ) -> bool:
        cfg = self.cfg
        p = cfg.purpose
        if (
            self.refuse_not_allowed
            and consent.publisher_restrictions
            and consent.restriction(p, vendor_id) == RESTRICTION_NOT_ALLOWED
        ):
            return False
        by_purpose = enforce_purpose or cfg.enforce_purpose
        by_vendor = enforce_vendors or cfg.enforce_vendors
        if not by_purpose and not by_vendor:
            return True
        if not block_exceptions and name in cfg.vendor_exceptions:
            return True
        basic_vendor = name in self.basic_vendors
        if not by_purpose:
            return basic_vendor or consent.vendor_consent(vendor_id)
        if consent.purpose_consent(p) and (basic_vendor or not by_vendor or consent.vendor_consent(vendor_id)):
            return True
        return allow_li and consent.purpose_li(p)  # LI transparency stands in for purpose 2 consent


Enforcer = FullEnforcement | BasicEnforcement


RESULTS_CACHE_SIZE = 4096  # auction decisions kept per account policy (cleared when full)
SYNCS_CACHE_SIZE = 4096  # sync decisions kept per account policy (cleared when full)


class _Enforcers:
    """One policy's enforcers per purpose: full, basic, and basic standing in for full (no GVL).

    PBS-Go builds and caches them per request; here they are built once per policy (account).
    """

    __slots__ = ("basic_vendors", "results", "rows", "syncs")

    def __init__(self, policy: TcfPolicy) -> None:
        basic_vendors = policy.basic_enforcement_vendors
        self.basic_vendors = basic_vendors
        # Auction decisions by (consent's choices key, core bidder, vendor id, vendor list): the
        # key leaves out the timestamps, so every user who made the same choices shares it; bounded.
        # The list itself, not its id(): a list dropped from the store must not lend its id to another.
        self.results: dict[tuple[str, str, int, GlobalVendorList | None], AuctionPermissions] = {}
        # Sync decisions by (choices key, bidder or None for the host, vendor id, vendor list); bounded.
        self.syncs: dict[tuple[str, str | None, int, GlobalVendorList | None], bool] = {}
        rows = []
        for n in range(1, 11):
            cfg = policy.purpose(n)
            basic = BasicEnforcement(cfg, basic_vendors)
            if cfg.algo == ALGO_BASIC:
                rows.append((basic, basic, basic))
            else:
                stand_in = BasicEnforcement(cfg, basic_vendors, refuse_not_allowed=True)
                rows.append((FullEnforcement(cfg), basic, stand_in))
        self.rows = tuple(rows)

    def get(self, purpose: int, name: str, has_gvl: bool) -> Enforcer:
        """PBS-Go's ``PurposeEnforcerBuilder``: purpose 1 is never downgraded to basic."""
        full, basic, gvl_less = self.rows[purpose - 1]
        if purpose != PURPOSE_STORAGE and name in self.basic_vendors:
            return basic
        return full if has_gvl else gvl_less


def enforcers(policy: TcfPolicy) -> _Enforcers:
    """The policy's enforcers, built on first use and kept on the policy."""
    built = policy.engine_cache
    if built is None:
        built = policy.engine_cache = _Enforcers(policy)
    return built


def sync_allowed(
    policy: TcfPolicy,
    consent: TCF2Consent,
    vendor_id: int,
    gvl: GlobalVendorList | None,
    bidder: str = "",
    vendor_exception: bool = False,
) -> bool:
    """PBS-Go ``allowSync`` on a parsed consent: purpose 1 for the host cookie or a bidder's sync.

    ``bidder`` is "" for the host; ``vendor_exception`` lets a purpose-1 vendor exception apply.
    """
    if not policy.purpose_enforced(PURPOSE_STORAGE):
        return True
    if consent.purpose_one_treatment and policy.purpose_one_treatment_enabled():
        return policy.purpose_one_treatment_access_allowed()
    vendor = gvl.vendor(vendor_id) if gvl is not None else None
    enforcer = enforcers(policy).get(PURPOSE_STORAGE, bidder, gvl is not None)
    return enforcer.legal_basis(consent, vendor_id, vendor, bidder, block_exceptions=not vendor_exception)


def listed(gvl: GlobalVendorList | None, vendor_id: int) -> bool:
    """PBS-Go ``isValidVendorID``: no list, or a list with no vendors, holds every id."""
    return gvl is None or not len(gvl) or gvl.vendor(vendor_id) is not None


_UNPARSED = object()


class GdprPermissions:
    """TCF v2 decisions for one request in GDPR scope (PBS-Go ``permissionsImpl``)."""

    __slots__ = ("_alias_gvl_ids", "_consent", "_error", "_gvl", "_key", "_non_standard", "_parsed", "_policy")

    def __init__(
        self,
        policy: TcfPolicy,
        consent: str,
        *,
        gvl: GlobalVendorList | VendorLists | None,
        alias_gvl_ids: Mapping[str, int] | None = None,
        publisher_id: str = "",
        non_standard_publishers: frozenset[str] = frozenset(),
    ) -> None:
        self._policy = policy
        self._consent = consent
        self._gvl: GlobalVendorList | VendorLists | None = gvl
        self._alias_gvl_ids = alias_gvl_ids
        self._non_standard = publisher_id in non_standard_publishers
        self._parsed: object = _UNPARSED
        self._error = ""
        self._key = choices_key(consent)  # None: the string cannot decode (or is empty)

    @property
    def policy(self) -> TcfPolicy:
        return self._policy

    def parsed_consent(self) -> TCF2Consent | None:
        """The decoded consent string, or None when it is empty or malformed (decoded once). For
        decisions: its timestamps may be those of a string with the same choices (``parse_tcf2_choices``)."""
        parsed = self._parsed
        if parsed is _UNPARSED:
            parsed = None
            if self._consent:
                try:
                    parsed = parse_tcf2_choices(self._consent, self._key)
                except ConsentError as exc:
                    self._error = str(exc)
            self._parsed = parsed
        return parsed  # type: ignore[return-value]

    def vendor_list(self) -> GlobalVendorList | None:
        """The list this request is read against: ``gvl``, or the store's for the consent's version
        (None for an empty or malformed consent); resolved once."""
        gvl = self._gvl
        if gvl.__class__ is VendorLists:
            consent = self.parsed_consent()
            gvl = self._gvl = gvl.for_consent(consent) if consent is not None else None  # type: ignore[union-attr]
        return gvl  # type: ignore[return-value]

    @property
    def consent_valid(self) -> bool:
        """Whether the consent string decodes as TCF v2 (the ``privacy_tcf`` version label)."""
        return self.parsed_consent() is not None

    # -- syncs --------------------------------------------------------------------------------

    def host_cookie_allowed(self, host_vendor_id: int) -> bool:
        """May the host set its cookie? True without a host vendor id; False for an empty consent.

        Raises ConsentError (str() is the decoder's cause) for a malformed consent string.
        """
        if host_vendor_id == 0:
            return True
        key = self._key
        gvl = self.vendor_list()
        memo_key = (key, None, host_vendor_id, gvl)
        if key is not None and (decided := enforcers(self._policy).syncs.get(memo_key)) is not None:  # type: ignore[arg-type]
            return decided
        consent = self.parsed_consent()
        if consent is None:
            if self._error:
                raise ConsentError(self._error)
            return False
        return self._keep_sync(memo_key, sync_allowed(self._policy, consent, host_vendor_id, gvl))

    def sync_decisions_key(self) -> tuple[str, GlobalVendorList | None] | None:
        """What every :meth:`bidder_sync_allowed` answer of this request is read from but the bidder,
        its vendor id and the policy: the consent's choices key and the vendor list. None when the
        string cannot decode (no choices key)."""
        key = self._key
        if key is None:
            return None
        return key, self.vendor_list()

    def bidder_sync_allowed(self, bidder: str, vendor_id: int) -> bool:
        """May this bidder sync? False for vendor id 0, an id the GVL does not hold, or an empty
        or malformed consent; purpose-1 vendor exceptions apply. Kept by (choices key, bidder,
        vendor id, list), whichever rule decides: each is read from those alone."""
        gvl = self._gvl
        if gvl.__class__ is VendorLists:
            gvl = self.vendor_list()
        key = self._key
        memo_key = (key, bidder, vendor_id, gvl)
        if key is not None:
            policy = self._policy
            decided = (policy.engine_cache or enforcers(policy)).syncs.get(memo_key)
            if decided is not None:
                return decided  # type: ignore[no-any-return]
        if vendor_id <= 0 or not listed(gvl, vendor_id):  # type: ignore[arg-type]
            return False if key is None else self._keep_sync(memo_key, False)  # type: ignore[arg-type]
        consent = self.parsed_consent()
        if consent is None:
            return False
        policy = self._policy
        exception = bidder in policy.purpose_vendor_exceptions(PURPOSE_STORAGE)
        return self._keep_sync(memo_key, sync_allowed(policy, consent, vendor_id, gvl, bidder, exception))

    def _keep_sync(self, memo_key: tuple[str | None, str | None, int, GlobalVendorList | None], allowed: bool) -> bool:
        """Keep a sync decision (made on a consent that decoded, so its choices key is set) by that key."""
        syncs = enforcers(self._policy).syncs
        if len(syncs) >= SYNCS_CACHE_SIZE:
            syncs.clear()
        syncs[memo_key] = allowed  # type: ignore[index]
        return allowed

    # -- auction ------------------------------------------------------------------------------

    def default_permissions(self) -> AuctionPermissions:
        """For an empty or malformed consent: PBS-Go ``defaultPermissions``."""
        policy = self._policy
        return _DEFAULTS[(not policy.purpose_enforced(PURPOSE_BASIC_ADS), not policy.feature_one_enforced())]

    def auction(self, core: str, bidder: str, vendor_id: int) -> AuctionPermissions:
        """PBS-Go ``AuctionActivitiesAllowed`` for ``bidder`` (``core``: the adapter it runs on,
        the name vendor exceptions and basic vendors are keyed by; ``vendor_id``: its
        ``gvl_vendor_id``, 0 when it has none)."""
        if self._non_standard:
            return ALLOW_ALL
        consent = self.parsed_consent()
        if consent is None:
            return self.default_permissions()
        aliases = self._alias_gvl_ids
        if aliases:
            vendor_id = aliases.get(bidder, vendor_id)
        gvl = self.vendor_list()
        vendor = None
        if gvl is not None:
            vendor = gvl.vendor(vendor_id)
            if vendor is None and len(gvl):
                vendor_id = 0  # not in the list: PBS-Go resolves it to 0
        has_gvl = gvl is not None
        found = enforcers(self._policy)
        key = (self._key, core, vendor_id, gvl)  # the choices key: set, since the consent decoded
        decided = found.results.get(key)
        if decided is not None:
            return decided
        enforcer = found.get(PURPOSE_BASIC_ADS, core, has_gvl)
        allow_bid = enforcer.legal_basis(consent, vendor_id, vendor, core, allow_li=enforcer.is_basic)
        decided = AuctionPermissions(
            allow_bid,
            self._allow_geo(core, consent, vendor, has_gvl),
            self._allow_id(found, core, consent, vendor_id, vendor, has_gvl),
        )
        if len(found.results) >= RESULTS_CACHE_SIZE:
            found.results.clear()
        found.results[key] = decided
        return decided

    def _allow_geo(self, core: str, consent: TCF2Consent, vendor: VendorInfo | None, has_gvl: bool) -> bool:
        policy = self._policy
        if not policy.feature_one_enforced() or core in policy.feature_one_vendor_exceptions:
            return True
        if not consent.special_feature_optin(SPECIAL_FEATURE_GEO):
            return False
        if core in policy.basic_enforcement_vendors or not has_gvl:
            return True
        return vendor is not None and SPECIAL_FEATURE_GEO in vendor.special_features

    @staticmethod
    def _allow_id(
        found: _Enforcers, core: str, consent: TCF2Consent, vendor_id: int, vendor: VendorInfo | None, has_gvl: bool
    ) -> bool:
        for purpose in ID_PURPOSES:
            enforcer = found.get(purpose, core, has_gvl)
            if enforcer.legal_basis(
                consent,
                vendor_id,
                vendor,
                core,
                allow_li=enforcer.is_basic and purpose == PURPOSE_BASIC_ADS,
                enforce_purpose=True,
                enforce_vendors=True,
            ):
                return True
        return False


__all__ = [
    "ALGO_BASIC",
    "ALGO_FULL",
    "ALLOW_ALL",
    "ALLOW_BID_REQUEST_ONLY",
    "DENY_ALL",
    "AuctionPermissions",
    "BasicEnforcement",
    "FullEnforcement",
    "GdprPermissions",
    "enforcers",
    "listed",
    "sync_allowed",
]
