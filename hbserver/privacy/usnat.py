"""PBS-Java's US privacy module ``iab.usgeneral``: activity decisions from the GPP US sections.

Account config: ``privacy.modules: [{"code": "iab.usgeneral", "enabled": true, "skipRate": 0,
"config": {"skipSids": [..], "allowPersonalDataConsent2": false}}]``; an activity rule
``{"privacyreg": ["iab.usgeneral"]}`` (or ``["iab.*"]``) hands the decision to it (see
:mod:`hbserver.privacy.activity`).

For each section id of the request's ``regs.gpp_sid`` that is a US section (7-12) and not in
``skipSids``, the section is read through PBS-Java's per-state reader, which maps a state's fields
onto the usnat ones, and judged for the activity: ``syncUser`` and ``enrichUfpd`` by the sale,
sharing, targeted-advertising, known-child and personal-data rules; ``transmitUfpd`` and
``transmitEids`` by those plus the sensitive-data rules; ``transmitPreciseGeo`` by the
sensitive-data (precise geolocation, item 8), known-child and personal-data rules; any other
activity abstains. MSPA service provider mode (1) or a GPC flag denies every judged activity.
The sections' results combine as PBS-Java's ``AndRule``: any deny denies, else any allow allows,
else the module abstains (no US section in ``gpp_sid``).

PBS-Java facts carried over as they are:
- a section listed in ``gpp_sid`` but absent from the GPP string is read as all-absent; for usca
  and usct the readers then report a known child (their default), so the module denies;
- a section that fails to decode is left out (PBS-Java logs it and drops that section's module);
- ``skipRate`` (0-100) is the percentage of requests for which the module is skipped (abstains).

``iab.uscustomlogic`` (JsonLogic expressions over the same fields) is not built: an enabled entry
is refused with a :class:`PrivacyModuleConfigError` naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from hbserver.privacy.gpp_us import (
    SECTION_USCA,
    SECTION_USCO,
    SECTION_USCT,
    SECTION_USNAT,
    SECTION_USUT,
    SECTION_USVA,
    US_SECTIONS,
    USSection,
)

log = logging.getLogger(__name__)

US_GENERAL = "iab.usgeneral"
US_CUSTOM_LOGIC = "iab.uscustomlogic"
KNOWN_MODULES = (US_GENERAL, US_CUSTOM_LOGIC)

_PATH = "privacy.modules"

# 2-bit field values of the IAB US sections
_NOT_APPLICABLE, _YES, _NO = 0, 1, 2  # notices, MSPA modes
_OPTED_OUT, _DID_NOT_OPT_OUT = 1, 2  # opt-outs
_NO_CONSENT, _CONSENT = 1, 2  # consents

# SensitiveDataProcessing items of the usnat layout judged for transmitUfpd (PBS-Java's index sets)
_SDP_ALL_BUT_GEO = (0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15)
_SDP_OPT_OUT = (0, 1, 2, 3, 4, 10, 12, 14)
_SDP_OPT_IN = (5, 6, 8, 9, 11, 13, 15)
_SDP_PRECISE_GEO = 7


class ModuleResult(IntEnum):
    ABSTAIN = 0
    ALLOW = 1
    DENY = 2


class PrivacyModuleConfigError(ValueError):
    """Malformed ``privacy.modules``; the message names the offending path."""


class _Kind(IntEnum):
    """What the module judges for an activity (PBS-Java's USNatModule.innerModule)."""

    ABSTAIN = 0
    SYNC_USER = 1
    TRANSMIT_UFPD = 2
    TRANSMIT_GEO = 3


_KINDS = {
    "syncuser": _Kind.SYNC_USER,
    "enrichufpd": _Kind.SYNC_USER,
    "transmitufpd": _Kind.TRANSMIT_UFPD,
    "transmiteids": _Kind.TRANSMIT_UFPD,
    "transmitprecisegeo": _Kind.TRANSMIT_GEO,
}


@dataclass(frozen=True, slots=True)
class _NatView:
    """A section as PBS-Java's USNatGppReader shows it: usnat fields, None where the state has none."""

    mspa_service_provider_mode: int | None = None
    gpc: bool | None = None
    sale_opt_out: int | None = None
    sale_opt_out_notice: int | None = None
    sharing_notice: int | None = None
    sharing_opt_out: int | None = None
    sharing_opt_out_notice: int | None = None
    targeted_advertising_opt_out: int | None = None
    targeted_advertising_opt_out_notice: int | None = None
    sensitive_data_processing_opt_out_notice: int | None = None
    sensitive_data_limit_use_notice: int | None = None
    sensitive_data_processing: tuple[int | None, ...] | None = None
    known_child_sensitive_data_consents: tuple[int, ...] | None = None
    personal_data_consents: int | None = None


_CHILD = (_NO_CONSENT, _NO_CONSENT)
_NO_CHILD = (0, 0)
_MIXED_CHILD = (_CONSENT, _NO_CONSENT)
# usca's 9 SensitiveDataProcessing items onto usnat's 12: usnat index -> usca index
_CA_SDP = {0: 3, 1: 3, 2: 7, 3: 8, 5: 5, 6: 6, 7: 2, 8: 0, 9: 1, 11: 4}
# usut's 8 items reordered: usnat index -> usut index
_UT_SDP = {0: 0, 1: 1, 2: 4, 3: 2, 4: 3, 5: 5, 6: 6, 7: 7}


def _remap(items: tuple[int, ...] | None, mapping: dict[int, int], size: int) -> tuple[int | None, ...]:
    if items is None:
        return (None,) * size
    return tuple(items[mapping[i]] if i in mapping and mapping[i] < len(items) else None for i in range(size))


def _single_child(section: USSection | None) -> tuple[int, ...] | None:
    """usva, usco and usut: one KnownChildSensitiveDataConsents value, 1 or 2 meaning a known child."""
    if section is None:
        return None
    return _CHILD if section.known_child_sensitive_data_consents[0] in (_NO_CONSENT, _CONSENT) else _NO_CHILD


def _common(section: USSection | None, **extra: Any) -> _NatView:
    """The fields usva, usco, usut and usct share with usnat."""
    if section is None:
        return _NatView(**extra)
    return _NatView(
        mspa_service_provider_mode=section.mspa_service_provider_mode,
        sale_opt_out=section.sale_opt_out,
        sale_opt_out_notice=section.sale_opt_out_notice,
        sharing_notice=section.sharing_notice,
        targeted_advertising_opt_out=section.targeted_advertising_opt_out,
        targeted_advertising_opt_out_notice=section.targeted_advertising_opt_out_notice,
        **extra,
    )


def _nat_view(section_id: int, section: USSection | None) -> _NatView:
    """PBS-Java's reader for ``section_id``; ``section`` None when the GPP string does not have it."""
    if section_id == SECTION_USNAT:
        return _usnat_view(section)
    if section_id == SECTION_USCA:
        return _usca_view(section)
    if section_id in (SECTION_USVA, SECTION_USCO):
        return _common(
            section,
            gpc=section.gpc if section is not None else None,  # always None for usva
            sensitive_data_processing=section.sensitive_data_processing if section is not None else None,
            known_child_sensitive_data_consents=_single_child(section),
        )
    if section_id == SECTION_USUT:
        return _common(
            section,
            sensitive_data_processing=_remap(section.sensitive_data_processing if section else None, _UT_SDP, 8),
            sensitive_data_processing_opt_out_notice=(
                section.sensitive_data_processing_opt_out_notice if section is not None else None
            ),
            known_child_sensitive_data_consents=_single_child(section),
        )
    if section_id == SECTION_USCT:
        return _usct_view(section)
    raise ValueError(f"section {section_id} is not a US section (7-12)")


def _usnat_view(section: USSection | None) -> _NatView:
    """usnat: its own fields, as they are."""
    if section is None:
        return _NatView()
    return _NatView(
        mspa_service_provider_mode=section.mspa_service_provider_mode,
        gpc=section.gpc,
        sale_opt_out=section.sale_opt_out,
        sale_opt_out_notice=section.sale_opt_out_notice,
        sharing_notice=section.sharing_notice,
        sharing_opt_out=section.sharing_opt_out,
        sharing_opt_out_notice=section.sharing_opt_out_notice,
        targeted_advertising_opt_out=section.targeted_advertising_opt_out,
        targeted_advertising_opt_out_notice=section.targeted_advertising_opt_out_notice,
        sensitive_data_processing_opt_out_notice=section.sensitive_data_processing_opt_out_notice,
        sensitive_data_limit_use_notice=section.sensitive_data_limit_use_notice,
        sensitive_data_processing=section.sensitive_data_processing,
        known_child_sensitive_data_consents=section.known_child_sensitive_data_consents,
        personal_data_consents=section.personal_data_consents,
    )


def _usca_view(section: USSection | None) -> _NatView:
    """usca: its sensitive data items remapped onto usnat's, and a known child unless both child
    consents are 0 (or the section is absent)."""
    sdp = _remap(section.sensitive_data_processing if section else None, _CA_SDP, 12)
    kids = section.known_child_sensitive_data_consents if section else None
    child = kids if kids is not None and kids[0] == 0 and kids[1] == 0 else _CHILD
    if section is None:
        return _NatView(sensitive_data_processing=sdp, known_child_sensitive_data_consents=child)
    return _NatView(
        mspa_service_provider_mode=section.mspa_service_provider_mode,
        gpc=section.gpc,
        sale_opt_out=section.sale_opt_out,
        sale_opt_out_notice=section.sale_opt_out_notice,
        sharing_opt_out=section.sharing_opt_out,
        sharing_opt_out_notice=section.sharing_opt_out_notice,
        sensitive_data_limit_use_notice=section.sensitive_data_limit_use_notice,
        sensitive_data_processing=sdp,
        known_child_sensitive_data_consents=child,
        personal_data_consents=section.personal_data_consents,
    )


def _usct_view(section: USSection | None) -> _NatView:
    """usct: its three child consents read as no child (all 0), mixed (the second and third consented)
    or a known child."""
    kids = section.known_child_sensitive_data_consents if section else (None, None, None)
    if kids[0] == 0 and kids[1] == 0 and kids[2] == 0:
        child = _NO_CHILD
    elif kids[1] == _CONSENT and kids[2] == _CONSENT:
        child = _MIXED_CHILD
    else:
        child = _CHILD
    return _common(
        section,
        gpc=section.gpc if section is not None else None,
        sensitive_data_processing=section.sensitive_data_processing if section is not None else None,
        known_child_sensitive_data_consents=child,
    )


def _at(items: tuple[int | None, ...] | None, index: int, value: int) -> bool:
    return items is not None and len(items) > index and items[index] == value


def _any_at(items: tuple[int | None, ...] | None, indices: Iterable[int], value: int) -> bool:
    return items is not None and any(_at(items, i, value) for i in indices)


def _always(v: _NatView, allow_pdc2: bool) -> bool:
    """Denied whatever the activity: service provider mode, GPC, a known child, personal data consent."""
    kids = v.known_child_sensitive_data_consents
    return (
        v.mspa_service_provider_mode == _YES
        or v.gpc is True
        or _at(kids, 0, _NO_CONSENT)
        or _at(kids, 1, _NO_CONSENT)
        or _at(kids, 2, _NO_CONSENT)
        or _at(kids, 1, _CONSENT)
        or (not allow_pdc2 and v.personal_data_consents == _CONSENT)
    )


def _sale_sharing_targeting(v: _NatView) -> bool:
    return (
        v.sale_opt_out == _OPTED_OUT
        or v.sale_opt_out_notice == _NO
        or (v.sale_opt_out_notice == _NOT_APPLICABLE and v.sale_opt_out == _DID_NOT_OPT_OUT)
        or v.sharing_notice == _NO
        or v.sharing_opt_out == _OPTED_OUT
        or v.sharing_opt_out_notice == _NO
        or (v.sharing_notice == _NOT_APPLICABLE and v.sharing_opt_out == _DID_NOT_OPT_OUT)
        or (v.sharing_opt_out_notice == _NOT_APPLICABLE and v.sharing_opt_out == _DID_NOT_OPT_OUT)
        or v.targeted_advertising_opt_out == _OPTED_OUT
        or v.targeted_advertising_opt_out_notice == _NO
        or (
            v.targeted_advertising_opt_out_notice == _NOT_APPLICABLE
            and v.targeted_advertising_opt_out == _DID_NOT_OPT_OUT
        )
    )


def _sensitive_notice(v: _NatView) -> tuple[bool, bool]:
    """(a sensitive-data notice says no, one is not applicable)."""
    no = v.sensitive_data_processing_opt_out_notice == _NO or v.sensitive_data_limit_use_notice == _NO
    na = (
        v.sensitive_data_processing_opt_out_notice == _NOT_APPLICABLE
        or v.sensitive_data_limit_use_notice == _NOT_APPLICABLE
    )
    return no, na


def _sensitive_ufpd(v: _NatView) -> bool:
    sdp = v.sensitive_data_processing
    no, na = _sensitive_notice(v)
    return (
        no
        or (na and _any_at(sdp, _SDP_ALL_BUT_GEO, _CONSENT))
        or _any_at(sdp, _SDP_OPT_OUT, _NO_CONSENT)
        or _any_at(sdp, _SDP_OPT_IN, _NO_CONSENT)
        or _any_at(sdp, _SDP_OPT_IN, _CONSENT)
    )


def _sensitive_geo(v: _NatView) -> bool:
    sdp = v.sensitive_data_processing
    no, na = _sensitive_notice(v)
    return no or (na and _at(sdp, _SDP_PRECISE_GEO, _CONSENT)) or _at(sdp, _SDP_PRECISE_GEO, _NO_CONSENT)


def _disallows(kind: _Kind, view: _NatView, allow_pdc2: bool) -> bool:
    if _always(view, allow_pdc2):
        return True
    if kind == _Kind.SYNC_USER:
        return _sale_sharing_targeting(view)
    if kind == _Kind.TRANSMIT_UFPD:
        return _sale_sharing_targeting(view) or _sensitive_ufpd(view)
    return _sensitive_geo(view)


class USNatModule:
    """One account's ``iab.usgeneral`` module, built once with the account."""

    __slots__ = ("allow_personal_data_consent_2", "skip_rate", "skip_sids")

    code = US_GENERAL

    def __init__(self, skip_sids: Iterable[int] = (), allow_personal_data_consent_2: bool = False,
                 skip_rate: int = 0) -> None:
        self.skip_sids = frozenset(skip_sids)
        self.allow_personal_data_consent_2 = allow_personal_data_consent_2
        self.skip_rate = skip_rate

    def result(
        self, activity: str, gpp_sid: Iterable[int], sections: Mapping[int, USSection | None]
    ) -> ModuleResult:
        """The module's answer for ``activity`` given the request's ``gpp_sid`` and decoded US sections.

        ``sections`` maps a section id present in the GPP string to its decoded form, or to None
        when it did not decode (that section is then left out).
        """
        kind = _KINDS.get(activity.lower(), _Kind.ABSTAIN)
        result = ModuleResult.ABSTAIN
        if kind == _Kind.ABSTAIN:  # fetchBids, transmitTid, reportAnalytics, ...: USNatDefault
            return result
        for sid in set(gpp_sid):
            if sid not in US_SECTIONS or sid in self.skip_sids:
                continue
            section = sections.get(sid)
            if section is None and sid in sections:  # present but malformed: PBS-Java drops it
                continue
            if _disallows(kind, _nat_view(sid, section), self.allow_personal_data_consent_2):
                return ModuleResult.DENY
            result = ModuleResult.ALLOW
        return result


def _lower_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k.lower(): v for k, v in value.items() if isinstance(k, str)}


def _pick(obj: dict[str, Any], *names: str) -> tuple[str | None, Any]:
    """The first of ``names`` (lower case, PBS-Java's aliases) present in ``obj``."""
    for name in names:
        if name in obj:
            return name, obj[name]
    return None, None


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _usnat_module(entry: dict[str, Any], where: str, skip_rate: int) -> USNatModule:
    raw = entry.get("config")
    if raw is None:
        return USNatModule(skip_rate=skip_rate)
    if not isinstance(raw, Mapping):
        raise PrivacyModuleConfigError(f"{where}.config: expected an object, got {type(raw).__name__}")
    config = _lower_keys(raw)
    spelled = {k.lower(): k for k in raw if isinstance(k, str)}  # paths in messages as the user wrote them
    key, sids = _pick(config, "skipsids", "skip_sids", "skip-sids")
    key = spelled.get(key or "", "skipSids")
    if sids is None:
        sids = []
    if not isinstance(sids, list):
        raise PrivacyModuleConfigError(f"{where}.config.{key}: expected a list of integers, got {type(sids).__name__}")
    for i, sid in enumerate(sids):
        if not _int(sid):
            raise PrivacyModuleConfigError(f"{where}.config.{key}[{i}]: expected an integer, got {type(sid).__name__}")
    key, allow = _pick(
        config, "allowpersonaldataconsent2", "allow_personal_data_consent_2", "allow-personal-data-consent-2"
    )
    key = spelled.get(key or "", "allowPersonalDataConsent2")
    if allow is not None and not isinstance(allow, bool):
        raise PrivacyModuleConfigError(f"{where}.config.{key}: expected true or false, got {type(allow).__name__}")
    return USNatModule(sids, bool(allow), skip_rate)


def parse_modules(modules: object) -> tuple[USNatModule, ...]:
    """The enabled modules of an account's ``privacy.modules`` (None: none); raises PrivacyModuleConfigError.

    Every entry is checked, enabled or not. A second entry with the same code is ignored (PBS-Java
    keeps the first and logs the duplicate).
    """
    if modules is None:
        return ()
    if not isinstance(modules, list):
        raise PrivacyModuleConfigError(f"{_PATH}: expected a list, got {type(modules).__name__}")
    out: list[USNatModule] = []
    seen: set[str] = set()
    for i, raw in enumerate(modules):
        where = f"{_PATH}[{i}]"
        if raw is None:
            continue
        if not isinstance(raw, Mapping):
            raise PrivacyModuleConfigError(f"{where}: expected an object, got {type(raw).__name__}")
        entry = _lower_keys(raw)
        code = entry.get("code")
        if not isinstance(code, str):
            raise PrivacyModuleConfigError(f"{where}.code: required, one of {', '.join(KNOWN_MODULES)}")
        if code not in KNOWN_MODULES:
            raise PrivacyModuleConfigError(
                f"{where}.code: unknown privacy module {code!r} (known: {', '.join(KNOWN_MODULES)})"
            )
        enabled = entry.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            raise PrivacyModuleConfigError(f"{where}.enabled: expected true or false, got {type(enabled).__name__}")
        skip_rate = entry.get("skiprate", 0)
        if skip_rate is None:
            skip_rate = 0
        if not _int(skip_rate) or not 0 <= skip_rate <= 100:
            raise PrivacyModuleConfigError(f"{where}.skipRate: expected an integer from 0 to 100, got {skip_rate!r}")
        if code == US_CUSTOM_LOGIC:
            if enabled is not False:
                raise PrivacyModuleConfigError(
                    f"{where}.code: privacy module {US_CUSTOM_LOGIC!r} (JsonLogic rules) is not supported by "
                    f"this server; remove it, set \"enabled\": false, or use {US_GENERAL!r}"
                )
            continue
        module = _usnat_module(entry, where, skip_rate)
        if code in seen:
            log.warning("%s: a second %r entry is ignored (the first one is used)", where, code)
            continue
        seen.add(code)
        if enabled is not False:
            out.append(module)
    return tuple(out)
