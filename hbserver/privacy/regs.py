"""The privacy signals of an auction request, read as PBS-Go reads them (``regs``, ``user.consent``).

The request is in OpenRTB 2.6 places (``regs.gdpr``, ``regs.us_privacy``, ``regs.gpp``,
``regs.gpp_sid``, ``user.consent``; see :func:`hbserver.auction.request.ortb.upconvert`).

- GDPR signal (PBS-Go ``gdpr.GetGDPR``): a non-empty ``regs.gpp_sid`` decides (1 when it holds 2,
  else 0) before ``regs.gdpr``; neither gives -1 (ambiguous: the host's ``gdpr.default_value``).
- Consent (``gdpr.GetConsent``): the GPP string's section 2 when it has one, else ``user.consent``.
- US Privacy (``ccpa.SelectCCPAConsent``): the GPP string's section 6 when ``regs.gpp_sid`` lists 6,
  else ``regs.us_privacy``.

Warnings (code 10001, PBS-Go's texts and order): a GPP string that does not parse (its header, or
the first US section 7-12 that does not decode; the other sections are still used, as in PBS-Go),
``user.consent`` differing from the GPP section 2, ``regs.gdpr`` differing from what ``gpp_sid``
says, ``regs.us_privacy`` differing from the GPP section 6, and a section 6 taken from the GPP
string that is not a valid US Privacy string (then no US Privacy signal). An invalid
``regs.us_privacy`` itself is the auction's check (``core._checked_us_privacy``), not repeated here.

Wrong JSON types in these fields raise :class:`RegsError` (PBS-Go rejects such a request when it
unmarshals it): the caller answers 400 with the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.gpp import GPP, SECTION_TCF_EU_V2, SECTION_US_PRIVACY, GPPError, parse_gpp
from hbserver.privacy.gpp_us import US_SECTIONS, USSection, USSectionError, decode_us_section

INVALID_PRIVACY_CONSENT = 10001  # PBS-Go errortypes.InvalidPrivacyConsentWarningCode

GPP_INVALID = "GPP consent string is invalid and will be ignored. ({})"
CONSENT_CONFLICT = "user.consent GDPR string conflicts with GPP (regs.gpp) GDPR string, using regs.gpp"
GDPR_CONFLICT = "regs.gdpr signal conflicts with GPP (regs.gpp_sid) and will be ignored"
USP_CONFLICT = "regs.us_privacy consent does not match uspv1 in GPP, using regs.gpp"
USP_INVALID = "CCPA consent is invalid and will be ignored. (request.regs.ext.us_privacy {})"

_INT8 = range(-128, 128)


class RegsError(ValueError):
    """A privacy field of the request with the wrong JSON type; the message names it."""


@dataclass(frozen=True, slots=True)
class Regs:
    gdpr_signal: int  # -1 ambiguous (absent), 0, 1
    consent: str  # the TCF string: GPP section 2, else user.consent
    us_privacy: str  # GPP section 6 when gpp_sid lists 6, else regs.us_privacy ("" when invalid from GPP)
    gpp: GPP | None  # parsed regs.gpp (None when absent or its header does not parse)
    gpp_sid: tuple[int, ...]
    coppa: bool
    warnings: tuple[tuple[int, str], ...]  # (PBS warning code, message)
    # the GPP string's US sections (7-12) decoded; None for one that does not decode
    us_sections: Mapping[int, USSection | None] = field(default_factory=dict)


EMPTY_REGS = Regs(gdpr_signal=-1, consent="", us_privacy="", gpp=None, gpp_sid=(), coppa=False, warnings=())


def _object(value: object, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RegsError(f"{path} must be an object")
    return value


def _string(container: dict[str, Any], key: str, path: str) -> str:
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RegsError(f"{path} must be a string")
    return value


def _int8(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in _INT8


def _gpp_sid(regs: dict[str, Any]) -> tuple[int, ...] | None:
    """``regs.gpp_sid`` (None when absent or null; PBS-Go tells a present empty list from that)."""
    value = regs.get("gpp_sid")
    if value is None:
        return None
    if not isinstance(value, list) or not all(_int8(sid) for sid in value):
        raise RegsError("request.regs.gpp_sid must be an array of integers from -128 to 127")
    return tuple(value)


def _decode_us(gpp: GPP) -> tuple[dict[int, USSection | None], USSectionError | None]:
    sections: dict[int, USSection | None] = {}
    first: USSectionError | None = None
    for sid in gpp.section_ids:
        if sid in US_SECTIONS:
            try:
                sections[sid] = decode_us_section(sid, gpp.sections[sid])
            except USSectionError as exc:
                sections[sid] = None
                first = first or exc
    return sections, first


def _read_gpp(value: str, warnings: list[tuple[int, str]]) -> tuple[GPP | None, dict[int, USSection | None]]:
    """``regs.gpp`` parsed, with its US sections decoded; what fails is added to ``warnings``."""
    try:
        gpp = parse_gpp(value)
    except GPPError as exc:
        warnings.append((INVALID_PRIVACY_CONSENT, GPP_INVALID.format(exc)))
        return None, {}
    us_sections, error = _decode_us(gpp)
    if error is not None:
        warnings.append((INVALID_PRIVACY_CONSENT, GPP_INVALID.format(error)))
    return gpp, us_sections


def read_regs(request: dict[str, Any]) -> Regs:
    """The request's privacy signals and PBS-Go's warnings about them; raises RegsError."""
    regs = _object(request.get("regs"), "request.regs")
    user = _object(request.get("user"), "request.user")
    user_consent = _string(user, "consent", "request.user.consent")
    if not regs and not user_consent:
        return EMPTY_REGS
    gdpr = regs.get("gdpr")
    if gdpr is not None and (isinstance(gdpr, bool) or gdpr not in (0, 1)):
        raise RegsError("request.regs.gdpr must be either 0 or 1")
    coppa = regs.get("coppa")
    if coppa is not None and not _int8(coppa):
        raise RegsError("request.regs.coppa must be an integer")
    request_usp = _string(regs, "us_privacy", "request.regs.us_privacy")
    gpp_value = _string(regs, "gpp", "request.regs.gpp")
    sid_list = _gpp_sid(regs)
    sids = sid_list or ()

    warnings: list[tuple[int, str]] = []
    gpp: GPP | None = None
    us_sections: dict[int, USSection | None] = {}
    if gpp_value:
        gpp, us_sections = _read_gpp(gpp_value, warnings)
    sections = gpp.sections if gpp is not None else {}

    gpp_tcf = sections.get(SECTION_TCF_EU_V2)
    if user_consent and gpp_tcf is not None and gpp_tcf != user_consent:
        warnings.append((INVALID_PRIVACY_CONSENT, CONSENT_CONFLICT))
    if gdpr is not None and sid_list is not None and gdpr != (1 if SECTION_TCF_EU_V2 in sids else 0):
        warnings.append((INVALID_PRIVACY_CONSENT, GDPR_CONFLICT))

    us_privacy = sections.get(SECTION_US_PRIVACY, "") if SECTION_US_PRIVACY in sids else ""
    if request_usp:
        if not us_privacy:
            us_privacy = request_usp
        elif us_privacy != request_usp:
            warnings.append((INVALID_PRIVACY_CONSENT, USP_CONFLICT))
    if us_privacy and us_privacy != request_usp:
        try:
            parse_us_privacy(us_privacy)
        except ValueError as exc:
            warnings.append((INVALID_PRIVACY_CONSENT, USP_INVALID.format(exc)))
            us_privacy = ""

    if sids:
        signal = 1 if SECTION_TCF_EU_V2 in sids else 0
    else:
        signal = -1 if gdpr is None else int(gdpr)
    return Regs(
        gdpr_signal=signal,
        consent=gpp_tcf if gpp_tcf is not None else user_consent,
        us_privacy=us_privacy,
        gpp=gpp,
        gpp_sid=sids,
        coppa=coppa == 1,
        warnings=tuple(warnings),
        us_sections=us_sections,
    )


def legacy_from_gpp(request: dict[str, Any], regs: Regs) -> dict[str, Any] | None:
    """The request with ``regs.gdpr``, ``user.consent`` and ``regs.us_privacy`` filled from GPP.

    PBS-Go's ``setLegacyGDPRFromGPP`` / ``setLegacyUSPFromGPP``, for a bidder that does not support
    GPP: an absent ``regs.gdpr`` comes from a present ``regs.gpp_sid`` (1 when it holds 2, else 0),
    an empty ``user.consent`` from the GPP section 2, and an empty ``regs.us_privacy`` from the GPP
    section 6 when ``gpp_sid`` lists 6. Returns a new top-level dict with ``regs`` / ``user``
    copied, or None when nothing changes. ``regs`` is :func:`read_regs` of the same request.
    """
    old_regs = request.get("regs")
    if not isinstance(old_regs, dict) or (regs.gpp is None and old_regs.get("gpp_sid") is None):
        return None
    sections = regs.gpp.sections if regs.gpp is not None else {}
    has_sid = old_regs.get("gpp_sid") is not None
    new_regs: dict[str, Any] | None = None
    if old_regs.get("gdpr") is None and has_sid:
        new_regs = {**old_regs, "gdpr": 1 if SECTION_TCF_EU_V2 in regs.gpp_sid else 0}
    if not old_regs.get("us_privacy") and SECTION_US_PRIVACY in regs.gpp_sid and SECTION_US_PRIVACY in sections:
        new_regs = {**(new_regs or old_regs), "us_privacy": sections[SECTION_US_PRIVACY]}
    new_user: dict[str, Any] | None = None
    user = request.get("user")
    user = user if isinstance(user, dict) else None
    tcf = sections.get(SECTION_TCF_EU_V2)
    if tcf and (user is None or not user.get("consent")):
        new_user = {**(user or {}), "consent": tcf}
    if new_regs is None and new_user is None:
        return None
    out = dict(request)
    if new_regs is not None:
        out["regs"] = new_regs
    if new_user is not None:
        out["user"] = new_user
    return out
