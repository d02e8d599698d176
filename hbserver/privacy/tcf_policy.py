"""TCF v2 enforcement settings of one account: the host's ``gdpr.tcf2`` with the account's overrides.

PBS-Go's ``gdpr/aggregated_config.go`` (``tcf2Config``) with the accessors of ``config/config.go``
(``TCF2``) and ``config/account.go`` (``AccountGDPR``): every account value that is set wins, an
unset one (``None``, or ``""`` for ``enforce_algo``) falls back to the host. Everything is resolved
once in :meth:`TcfPolicy.build`, so a request only reads attributes; :func:`policy_for` keeps the
built policies by the identity of the (host, account) config objects, which live as long as the
loaded account does.

Precedence kept from PBS-Go:
- vendor exceptions (purposes and special feature 1): an account list, even an empty one, replaces
  the host's; ``None`` keeps the host's.
- ``basic_enforcement_vendors`` exists only on the account.
- channel switch: the account's ``channel_enabled.<channel>``, else the legacy
  ``integration_enabled.<channel>`` (PBS-Go read it after ``channel_enabled`` until 2023), else the
  account's ``enabled``, else the host's ``gdpr.tcf2.enabled``.
- EEA countries: the account's list when set (even empty), else the host's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.config import TCF_PURPOSES, AccountGdpr, Gdpr

ALGO_FULL = "full"
ALGO_BASIC = "basic"
CHANNELS = ("amp", "app", "video", "web", "dooh")
POLICY_CACHE_SIZE = 4096  # built policies kept by policy_for (per process)


@dataclass(frozen=True, slots=True)
class PurposePolicy:
    """One purpose's resolved settings (PBS-Go ``purposeConfig`` without the basic vendors)."""

    purpose: int
    enforce_purpose: bool
    enforce_vendors: bool
    algo: str  # ALGO_FULL or ALGO_BASIC
    vendor_exceptions: frozenset[str]


def _channel(account: AccountGdpr, channel: str, fallback: bool) -> bool:
    for switches in (account.channel_enabled, account.integration_enabled):
        value = getattr(switches, channel)
        if value is not None:
            return bool(value)
    return fallback


class TcfPolicy:
    """The TCF v2 settings one account's requests are enforced with; immutable once built."""

    __slots__ = (
        "_channel_default",
        "_channels",
        "_feature_one_enforced",
        "_p1t_access_allowed",
        "_p1t_enabled",
        "_purposes",
        "basic_enforcement_vendors",
        "eea_countries",
        "engine_cache",
        "feature_one_vendor_exceptions",
        "non_standard_publishers",
    )

    def __init__(
        self,
        purposes: tuple[PurposePolicy, ...],
        *,
        feature_one_enforced: bool,
        feature_one_vendor_exceptions: frozenset[str],
        purpose_one_treatment_enabled: bool,
        purpose_one_treatment_access_allowed: bool,
        basic_enforcement_vendors: frozenset[str],
        channels: Mapping[str, bool],
        channel_default: bool,
        eea_countries: frozenset[str],
        non_standard_publishers: frozenset[str] = frozenset(),
    ) -> None:
        if len(purposes) != len(TCF_PURPOSES):
            raise ValueError(f"a TcfPolicy needs {len(TCF_PURPOSES)} purposes, got {len(purposes)}")
        self._purposes = purposes
        self._feature_one_enforced = feature_one_enforced
        self.feature_one_vendor_exceptions = feature_one_vendor_exceptions
        self._p1t_enabled = purpose_one_treatment_enabled
        self._p1t_access_allowed = purpose_one_treatment_access_allowed
        self.basic_enforcement_vendors = basic_enforcement_vendors
        self._channels = dict(channels)
        self._channel_default = channel_default
        self.eea_countries = eea_countries
        self.non_standard_publishers = non_standard_publishers  # host gdpr: never enforced
        # Filled by hbserver.privacy.permissions on first use: the purpose enforcers built from
        # this policy, so they are made once per account rather than once per request.
        self.engine_cache: Any = None

    @classmethod
    def build(cls, host: Gdpr, account: AccountGdpr) -> TcfPolicy:
        """Resolve the host's ``gdpr.tcf2`` and the account's ``gdpr`` block into one policy."""
        tcf2 = host.tcf2
        purposes = []
        for n in TCF_PURPOSES:
            h = tcf2.purpose(n)
            a = account.purpose(n)
            exceptions = a.vendor_exceptions if a.vendor_exceptions is not None else h.vendor_exceptions
            purposes.append(
                PurposePolicy(
                    purpose=n,
                    enforce_purpose=h.enforce_purpose if a.enforce_purpose is None else a.enforce_purpose,
                    enforce_vendors=h.enforce_vendors if a.enforce_vendors is None else a.enforce_vendors,
                    algo=a.enforce_algo or h.enforce_algo,
                    vendor_exceptions=frozenset(exceptions),
                )
            )
        sf1, account_sf1 = tcf2.special_feature1, account.special_feature1
        p1t, account_p1t = tcf2.purpose_one_treatment, account.purpose_one_treatment
        sf1_exceptions = (
            account_sf1.vendor_exceptions if account_sf1.vendor_exceptions is not None else sf1.vendor_exceptions
        )
        channel_default = tcf2.enabled if account.enabled is None else account.enabled
        eea = account.eea_countries if account.eea_countries is not None else host.eea_countries
        return cls(
            tuple(purposes),
            feature_one_enforced=sf1.enforce if account_sf1.enforce is None else account_sf1.enforce,
            feature_one_vendor_exceptions=frozenset(sf1_exceptions),
            purpose_one_treatment_enabled=p1t.enabled if account_p1t.enabled is None else account_p1t.enabled,
            purpose_one_treatment_access_allowed=(
                p1t.access_allowed if account_p1t.access_allowed is None else account_p1t.access_allowed
            ),
            basic_enforcement_vendors=frozenset(account.basic_enforcement_vendors),
            channels={c: _channel(account, c, channel_default) for c in CHANNELS},
            channel_default=channel_default,
            eea_countries=frozenset(c.upper() for c in eea),
            non_standard_publishers=frozenset(p for p in host.non_standard_publishers if p),
        )

    # PBS-Go TCF2ConfigReader. Purposes are 1..10.

    def channel_enabled(self, channel: str) -> bool:
        """Is TCF enforced for this channel ("web", "amp", "app", "video", "dooh")?"""
        return self._channels.get(channel, self._channel_default)

    def purpose(self, n: int) -> PurposePolicy:
        return self._purposes[n - 1]

    def purpose_enforced(self, n: int) -> bool:
        return self._purposes[n - 1].enforce_purpose

    def purpose_enforcing_vendors(self, n: int) -> bool:
        return self._purposes[n - 1].enforce_vendors

    def purpose_algo(self, n: int) -> str:
        return self._purposes[n - 1].algo

    def purpose_vendor_exceptions(self, n: int) -> frozenset[str]:
        return self._purposes[n - 1].vendor_exceptions

    def feature_one_enforced(self) -> bool:
        return self._feature_one_enforced

    def feature_one_vendor_exception(self, bidder: str) -> bool:
        return bidder in self.feature_one_vendor_exceptions

    def purpose_one_treatment_enabled(self) -> bool:
        return self._p1t_enabled

    def purpose_one_treatment_access_allowed(self) -> bool:
        return self._p1t_access_allowed

    def __repr__(self) -> str:
        algos = "".join("f" if p.algo == ALGO_FULL else "b" for p in self._purposes)
        return f"TcfPolicy(algos={algos}, channels={self._channels})"


_policies: OrderedDict[tuple[int, int], tuple[Gdpr, AccountGdpr, TcfPolicy]] = OrderedDict()


def policy_for(host: Gdpr, account: AccountGdpr) -> TcfPolicy:
    """The policy for these config objects, built once and kept (LRU) by their identity.

    The config dataclasses hold lists and cannot be hashed; the entry keeps both objects, so an id
    is never reused for another object while its entry exists.
    """
    key = (id(host), id(account))
    entry = _policies.get(key)
    if entry is not None and entry[0] is host and entry[1] is account:
        _policies.move_to_end(key)
        return entry[2]
    policy = TcfPolicy.build(host, account)
    _policies[key] = (host, account, policy)
    if len(_policies) > POLICY_CACHE_SIZE:
        _policies.popitem(last=False)
    return policy


_DEFAULT: list[TcfPolicy] = []


def default_policy() -> TcfPolicy:
    """The policy of the built-in defaults (no configuration, no account settings)."""
    if not _DEFAULT:
        _DEFAULT.append(TcfPolicy.build(Gdpr(), AccountGdpr()))
    return _DEFAULT[0]


def _geo_country(request: Mapping[str, Any]) -> str | None:
    """``user.geo`` when present, else ``device.geo``: its ``country`` (None when neither has a geo)."""
    for holder in ("user", "device"):
        obj = request.get(holder)
        geo = obj.get("geo") if isinstance(obj, dict) else None
        if isinstance(geo, dict):
            country = geo.get("country")
            return country if isinstance(country, str) else ""
    return None


def gdpr_default_applies(request: Mapping[str, Any], default_value: str, eea_countries: frozenset[str]) -> bool:
    """PBS-Go ``ParseGDPRDefaultValue``: how a request without a GDPR signal is read.

    The country of ``user.geo`` (or, without a user geo, ``device.geo``): in the EEA list, GDPR
    applies; any other three-character code, it does not; otherwise ``default_value`` ("1" applies).
    """
    applies = default_value != "0"
    country = _geo_country(request)
    if country is None:
        return applies
    if country.upper() in eea_countries:
        return True
    if len(country.encode("utf-8", "surrogatepass")) == 3:  # Go's len(): bytes
        return False
    return applies


__all__ = [
    "ALGO_BASIC",
    "ALGO_FULL",
    "CHANNELS",
    "PurposePolicy",
    "TcfPolicy",
    "default_policy",
    "gdpr_default_applies",
    "policy_for",
]
