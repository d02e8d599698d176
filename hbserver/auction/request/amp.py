"""AMP: the query of ``GET /openrtb2/amp`` applied to its stored request (spec §4.3, §7.3;
DECISIONS "/openrtb2/amp"; reference §1), and the targeting an AMP page gets back.

Pure functions: :func:`parse_amp_query` reads the parameters (a missing ``tag_id`` or a bad
``timeout`` is fatal), :func:`amp_request` checks the stored request and applies the parameters
in PBS-Go's order. Consent problems are warnings and never stop the other parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.common.messages import Message, WarningCode
from hbserver.numbers import SYNTAX, NumberError, int_or, int_range, parse_int
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.gpp import GPPError, parse_gpp, parse_gpp_sid
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2_cached
from hbserver.uuids import new_uuid
from hbserver.web.body import JsonTooDeep, loads_json
from hbserver.web.urls import url_host

UNRESOLVED_ACCOUNT_MACRO = "ACCOUNT_ID"  # the RTC template's macro when the page did not fill it
MAX_PARAM_LENGTH = 8192
MAX_SIZES = 50
TARGETING_WARNING_CODE = 2  # PBS-Go's code for the targeting merge warning
MAX_INT_DIGITS = 9  # numbers in the query (sizes, consent_type, timeout): more digits are no real value
QUERY_INT = int_range(-(10**MAX_INT_DIGITS - 1), 10**MAX_INT_DIGITS - 1)
# addtl_consent's Google ATP ids are small; a longer one no encoder writes
PROVIDER_ID = int_range(0, 10**9 - 1)


class AmpError(ValueError):
    """A fatal problem: HTTP 400 ``Invalid request: <message>``."""


@dataclass(slots=True)
class AmpParams:
    tag_id: str
    account: str = ""
    curl: str = ""
    slot: str = ""
    w: int = 0
    h: int = 0
    ow: int = 0
    oh: int = 0
    ms: list[tuple[int, int]] = field(default_factory=list)
    timeout: int | None = None
    targeting: str = ""
    consent: str = ""
    consent_type: int = 0
    gdpr_applies: bool | None = None
    addtl_consent: str = ""
    gpp_sid: str = ""
    debug: bool = False
    source_origin: str = ""


def _int(value: str) -> int:
    """Go's ``strconv.ParseInt`` leniency of AMP: anything unparsable (or out of range) is 0."""
    return int_or(value, 0, QUERY_INT, signs="-") if value else 0  # mostly absent: no exception for ""


def parse_multisize(value: str) -> list[tuple[int, int]]:
    """``"300x250,320x50"``; an item without exactly two parts, or ``0x0``, discards the whole list (PBS)."""
    if not value:
        return []
    sizes = []
    for item in value.split(",")[: MAX_SIZES + 1]:
        parts = item.split("x")
        if len(parts) != 2:
            return []
        w, h = _int(parts[0]), _int(parts[1])
        if w == 0 and h == 0:
            return []
        sizes.append((w, h))
    return sizes[:MAX_SIZES]


def parse_amp_query(query: Mapping[str, str], origin: str = "") -> tuple[AmpParams, list[Message]]:
    """The AMP parameters (first value of each); raises AmpError for a missing tag_id or a bad timeout."""

    def get(name: str) -> str:
        return (query.get(name) or "")[:MAX_PARAM_LENGTH]

    warnings: list[Message] = []
    tag_id = get("tag_id")
    if not tag_id:
        raise AmpError("AMP requests require an AMP tag_id.")
    timeout_text = get("timeout")
    timeout = None
    if timeout_text:
        try:
            timeout = parse_int(timeout_text, QUERY_INT, signs="")
        except NumberError as exc:
            if exc.reason == SYNTAX:
                shown = timeout_text[:32] + ("..." if len(timeout_text) > 32 else "")
                raise AmpError(f'timeout must be a non-negative integer (milliseconds), got "{shown}"') from None
            # more digits than any deadline needs: as long as possible (the smallest candidate wins anyway)
            timeout = 10**MAX_INT_DIGITS
    applies_text = get("gdpr_applies")
    gdpr_applies = None
    if applies_text in ("true", "false"):
        gdpr_applies = applies_text == "true"
    elif applies_text:
        warnings.append(Message(
            WarningCode.INVALID_PRIVACY_CONSENT, f"gdpr_applies must be true or false, got '{applies_text}'; ignored"
        ))
    consent_type = _int(get("consent_type"))
    params = AmpParams(
        tag_id=tag_id,
        account=get("account"),
        curl=get("curl"),
        slot=get("slot"),
        w=_int(get("w")),
        h=_int(get("h")),
        ow=_int(get("ow")),
        oh=_int(get("oh")),
        ms=parse_multisize(get("ms")),
        timeout=timeout,
        targeting=get("targeting"),
        consent=get("consent_string") or get("gdpr_consent"),
        consent_type=consent_type,
        gdpr_applies=gdpr_applies,
        addtl_consent=get("addtl_consent"),
        gpp_sid=get("gpp_sid"),
        debug=get("debug") == "1",
        source_origin=get("__amp_source_origin") or origin,
    )
    return params, warnings


CURL_PARAM = "curl="


def without_page(query_string: str) -> str | None:
    """``query_string`` without its one raw ``curl=`` parameter: the part of an AMP query that repeats
    from page to page; None when there is no such parameter or more than one (the whole query is then
    the key)."""
    at = query_string.find(CURL_PARAM)
    if at < 0 or (at and query_string[at - 1] != "&") or query_string.find(CURL_PARAM, at + 1) >= 0:
        return None
    end = query_string.find("&", at)
    if end < 0:
        return query_string[: max(at - 1, 0)]
    return query_string[:at] + query_string[end + 1 :]


def amp_tmax(default_ms: int, timeout: int | None, stored_tmax: Any) -> int:
    """DECISIONS: the smallest of ``amp.default_timeout_ms``, the ``timeout`` parameter and the stored tmax
    (each when > 0)."""
    candidates = [default_ms]
    if timeout:
        candidates.append(timeout)
    if isinstance(stored_tmax, int) and not isinstance(stored_tmax, bool) and stored_tmax > 0:
        candidates.append(stored_tmax)
    return min(candidates)


def check_stored(tag_id: str, stored: Any) -> dict[str, Any]:
    """The stored request's AMP rules (spec §7.3 texts); raises AmpError."""
    if not isinstance(stored, dict):
        raise AmpError(f"Data for tag_id='{tag_id}' does not define the required imp array.")
    imps = stored.get("imp")
    if not isinstance(imps, list) or not imps:
        raise AmpError(f"Data for tag_id='{tag_id}' does not define the required imp array.")
    if len(imps) > 1:
        raise AmpError(f"Data for tag_id '{tag_id}' includes {len(imps)} imp elements. Only one is allowed.")
    if stored.get("app") is not None:
        raise AmpError("The app object must not exist in AMP stored requests.")
    if not isinstance(imps[0], dict):
        raise AmpError(f"Data for tag_id='{tag_id}' does not define the required imp array.")
    return stored


def resolve_sizes(banner: dict[str, Any], params: AmpParams) -> dict[str, Any]:
    """PBS-Go's size resolution (reference §1.3): an explicit list replaces ``format``, else a lone w/h
    overrides that dimension in every stored format."""
    replacement: list[tuple[int, int]] = []
    if params.ow and params.oh:
        replacement.append((params.ow, params.oh))
    elif params.ow and params.h:
        replacement.append((params.ow, params.h))
    elif params.w and params.oh:
        replacement.append((params.w, params.oh))
    elif params.w and params.h:
        replacement.append((params.w, params.h))
    replacement.extend(params.ms)
    if replacement:
        return {**banner, "format": [{"w": w, "h": h} for w, h in replacement]}
    formats = banner.get("format")
    if isinstance(formats, list) and (params.w or params.h):
        key, value = ("w", params.w) if params.w else ("h", params.h)
        return {**banner, "format": [{**f, key: value} if isinstance(f, dict) else f for f in formats]}
    return banner


def amp_request(
    stored: dict[str, Any], params: AmpParams, gdpr_enabled: bool
) -> tuple[dict[str, Any], list[Message]]:
    """The auction request: the stored request with the query applied and AMP's defaults."""
    warnings: list[Message] = []
    request = dict(stored)
    if request.get("id") == "{{UUID}}":
        request["id"] = new_uuid()
    imp = dict(request["imp"][0])
    imp["secure"] = 1
    if isinstance(imp.get("banner"), dict):
        imp["banner"] = resolve_sizes(imp["banner"], params)
    if params.slot:
        imp["tagid"] = params.slot
    site = dict(request["site"]) if isinstance(request.get("site"), dict) else {}
    if params.curl:
        site["page"] = params.curl
        host = url_host(params.curl)
        if host:
            site["domain"] = host
    site_ext = dict(site["ext"]) if isinstance(site.get("ext"), dict) else {}
    site_ext.setdefault("amp", 1)
    site["ext"] = site_ext
    if params.account and params.account != UNRESOLVED_ACCOUNT_MACRO:
        publisher = dict(site["publisher"]) if isinstance(site.get("publisher"), dict) else {}
        publisher["id"] = params.account  # overrides the stored id (DECISIONS, PBS-Java)
        site["publisher"] = publisher
    request["site"] = site
    if params.addtl_consent:
        request["user"] = _with_additional_consent(request.get("user"), params.addtl_consent)
    _apply_consent(request, params, gdpr_enabled, warnings)
    if params.targeting:
        imp = _with_targeting(imp, params.targeting, warnings)
    request["imp"] = [imp]
    if params.debug:
        request["test"] = 1
    request["ext"] = _with_amp_defaults(request.get("ext"), params.debug)
    return request, warnings


def _with_additional_consent(user: Any, addtl: str) -> dict[str, Any]:
    user = dict(user) if isinstance(user, dict) else {}
    ext = dict(user["ext"]) if isinstance(user.get("ext"), dict) else {}
    ext["ConsentedProvidersSettings"] = {"consented_providers": addtl}
    parts = addtl.split("~")
    if len(parts) == 2:
        ids = [n for n in (int_or(p, -1, PROVIDER_ID, signs="") for p in parts[1].split(".")) if n >= 0]
        if ids:
            ext["consented_providers_settings"] = {"consented_providers": ids}
    user["ext"] = ext
    return user


def _valid_usp(value: str) -> bool:
    try:
        parse_us_privacy(value)
    except ValueError:
        return False
    return True


def _valid_tcf2(value: str) -> str | None:
    """None when ``value`` is a TCF v2 string, else why not."""
    try:
        parse_tcf2_cached(value)
    except ConsentError as exc:
        return str(exc)
    return None


def _apply_consent(request: dict[str, Any], params: AmpParams, gdpr_enabled: bool, warnings: list[Message]) -> None:
    """consent_type 1 ignored, 2 TCF v2, 3 US Privacy, 4 GPP, else detected (DECISIONS)."""
    regs = dict(request["regs"]) if isinstance(request.get("regs"), dict) else {}
    user = dict(request["user"]) if isinstance(request.get("user"), dict) else {}
    consent, kind = params.consent, params.consent_type

    def warn(message: str) -> None:
        warnings.append(Message(WarningCode.INVALID_PRIVACY_CONSENT, message))

    def write_tcf2() -> None:
        user["consent"] = consent
        regs["gdpr"] = 1

    if consent:
        if kind == 1:
            warn("TCF1 consent is deprecated and no longer supported.")
        elif kind == 2:
            problem = _valid_tcf2(consent) if gdpr_enabled else None
            if problem is None:
                write_tcf2()
            else:
                warn(f"Consent string '{consent}' is not a valid TCF2 consent string.")
        elif kind == 3:
            if _valid_usp(consent):
                regs["us_privacy"] = consent
            else:
                warn(f"Consent string '{consent}' is not a valid CCPA consent string.")
        elif kind == 4:
            try:
                parse_gpp(consent)
                regs["gpp"] = consent
                if params.gpp_sid:
                    regs["gpp_sid"] = list(parse_gpp_sid(params.gpp_sid))
            except (GPPError, ValueError):
                warn(f"Consent string '{consent}' is not a valid GPP consent string.")
        elif _valid_usp(consent):
            regs["us_privacy"] = consent
        elif gdpr_enabled and _valid_tcf2(consent) is None:
            write_tcf2()
        else:
            warn(f"Consent string '{consent}' is not recognized as one of the supported formats CCPA or TCF2.")
    if params.gdpr_applies is not None:
        regs["gdpr"] = 1 if params.gdpr_applies else 0
    if regs:
        request["regs"] = regs
    if user:
        request["user"] = user


def _with_targeting(imp: dict[str, Any], targeting: str, warnings: list[Message]) -> dict[str, Any]:
    """``targeting`` (a JSON object within the nesting limit) merged into ``imp.ext.data``; anything
    else is a warning (code 2)."""
    problem = "Invalid JSON Patch"
    try:
        data = loads_json(targeting)
    except JsonTooDeep as exc:
        data, problem = None, str(exc)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        warnings.append(Message(
            TARGETING_WARNING_CODE,
            f"unable to merge imp.ext with targeting data, check targeting data is correct: {problem}",
        ))
        return imp
    ext = imp.get("ext") if isinstance(imp.get("ext"), dict) else {}
    return {**imp, "ext": merge_patch(ext, {"data": data})}


def _with_amp_defaults(ext: Any, debug: bool) -> dict[str, Any]:
    """AMP always targets and caches bids (reference §1.5); channel ``amp``; ``debug=1`` asks for debug."""
    ext = dict(ext) if isinstance(ext, dict) else {}
    prebid = dict(ext["prebid"]) if isinstance(ext.get("prebid"), dict) else {}
    if not isinstance(prebid.get("targeting"), dict):
        prebid["targeting"] = {}
    cache = dict(prebid["cache"]) if isinstance(prebid.get("cache"), dict) else {}
    cache.setdefault("bids", {})
    prebid["cache"] = cache
    prebid.setdefault("channel", {"name": "amp", "version": ""})
    if debug:
        prebid["debug"] = True
    ext["prebid"] = prebid
    return ext


def amp_targeting(response: dict[str, Any]) -> dict[str, str]:
    """The targeting of every bid that was cached (AMP renders from ``hb_cache_id``)."""
    targeting: dict[str, str] = {}
    for seat in response.get("seatbid", ()):
        for bid in seat.get("bid", ()):
            prebid = bid.get("ext", {}).get("prebid", {})
            if prebid.get("cache", {}).get("bids", {}).get("cacheId"):
                targeting.update(prebid.get("targeting") or {})
    return targeting

