"""An account's targeting and integration keys, resolved once per settings object.

PBS-Go's account keys ``targeting_prefix``, ``truncate_target_attr``, ``bid_rounding``,
``preferredmediatype`` and ``default_integration``, and PBS-Java's ``auction`` section of the same
meaning (``auction.targeting.prefix``, ``auction.truncate_target_attr``, ``auction.bid_rounding``,
``auction.preferredmediatype``, ``auction.default_integration``) plus PBS-Java's
``auction.price_granularity`` and ``auction.targeting.<flag>``. Where both servers' keys are set the
PBS-Go key wins (for ``preferredmediatype``, per bidder). The request wins over the account
throughout: ``ext.prebid.targeting.prefix`` over the account's prefix (PBS-Go ``getTargetDataPrefix``),
a flag or ``pricegranularity`` the request sets over the account's (PBS-Java
``Ortb2RequestFactory.resolveExtPrebidTargeting``, ``Ortb2ImplicitParametersResolver``),
``biddercontrols.<bidder>.prefmtype`` over ``preferredmediatype`` (PBS-Go
``getBidderPreferredMediaTypeMap``), ``ext.prebid.integration`` over ``default_integration``.

An account that sets none of them resolves to None, so an auction of such an account pays one
dictionary look-up here (:func:`account_targeting`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hbserver.auction.response.pricegranularity import NAMED_GRANULARITIES
from hbserver.config import AccountSettings

MAX_CACHED = 1024  # settings objects whose resolution is kept (an account's settings live in the account LRU)

# ext.prebid.targeting's flags PBS-Java's auction.targeting can fill
FLAGS = ("includewinners", "includebidderkeys", "includeformat", "preferdeals", "alwaysincludedeals")


@dataclass(frozen=True, slots=True)
class AccountTargeting:
    """What an account changes about targeting and integration (read-only, shared)."""

    prefix: str = ""  # the key prefix when the request names none
    truncate: int | None = None  # truncate_target_attr (PBS-Go: None or <= 0 is 20)
    rounding: str = "down"
    granularity: str = ""  # PBS-Java's price_granularity: the name for requests naming none
    flags: tuple[tuple[str, bool], ...] = ()  # PBS-Java's auction.targeting flags that are set
    integration: str = field(default="", compare=False)
    preferred: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def cache_key(self) -> tuple[Any, ...]:
        """What the targeting options depend on (the options cache's key part)."""
        return self.prefix, self.truncate, self.rounding, self.granularity, self.flags

    def fill(self, targeting: dict[str, Any]) -> dict[str, Any]:
        """``ext.prebid.targeting`` with the account's flags and granularity where it has none."""
        missing = [(name, value) for name, value in self.flags if name not in targeting]
        if self.granularity and targeting.get("pricegranularity") is None:
            missing.append(("pricegranularity", self.granularity))
        return {**targeting, **dict(missing)} if missing else targeting


_CACHE: dict[int, tuple[AccountSettings, AccountTargeting | None]] = {}


def account_targeting(settings: AccountSettings) -> AccountTargeting | None:
    """The account's resolution, None when it sets none of these keys (the usual case)."""
    entry = _CACHE.get(id(settings))
    if entry is not None and entry[0] is settings:
        return entry[1]
    resolved = _resolve(settings)
    if len(_CACHE) >= MAX_CACHED:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(settings)] = (settings, resolved)  # the strong reference keeps the id from being reused
    return resolved


def _resolve(settings: AccountSettings) -> AccountTargeting | None:
    auction = settings.auction
    java = auction.targeting
    flags = tuple((name, value) for name in FLAGS if (value := getattr(java, name)) is not None)
    preferred = {**auction.preferredmediatype, **settings.preferredmediatype}
    resolved = AccountTargeting(
        prefix=settings.targeting_prefix or java.prefix,
        truncate=settings.truncate_target_attr if settings.truncate_target_attr is not None
        else auction.truncate_target_attr,
        rounding=settings.bid_rounding or auction.bid_rounding or "down",
        granularity=_granularity_name(auction.price_granularity),
        flags=flags,
        integration=settings.default_integration or auction.default_integration,
        preferred=preferred,
    )
    return None if resolved == NOTHING and not resolved.integration and not preferred else resolved


NOTHING = AccountTargeting()


def _granularity_name(name: str) -> str:
    """PBS-Java ``PriceGranularity.createFromStringOrDefault``: an unknown name is medium."""
    return "" if not name else name if name in NAMED_GRANULARITIES else "medium"


def account_integration(settings: AccountSettings) -> str:
    """The account's default integration ("" when none)."""
    resolved = account_targeting(settings)
    return resolved.integration if resolved is not None else ""


def account_preferred_media_types(settings: AccountSettings) -> dict[str, str] | None:
    """Bidder -> the media type it keeps of a multi-format imp (None when the account names none)."""
    resolved = account_targeting(settings)
    return resolved.preferred or None if resolved is not None else None


def with_integration(request: dict[str, Any], integration: str) -> dict[str, Any]:
    """``request`` with ``ext.prebid.integration`` set to ``integration`` when it has none (PBS-Go
    ``setIntegrationType``: an empty string counts as none); copies what it changes."""
    ext = request.get("ext")
    ext = ext if isinstance(ext, dict) else {}
    prebid = ext.get("prebid")
    prebid = prebid if isinstance(prebid, dict) else {}
    if prebid.get("integration"):
        return request
    return {**request, "ext": {**ext, "prebid": {**prebid, "integration": integration}}}
