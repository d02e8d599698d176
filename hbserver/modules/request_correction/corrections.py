"""The two request corrections for old Prebid Mobile SDKs (PBS-Java's correction producers).

Both apply only to a request whose ``app.ext.prebid.source`` is ``prebid-mobile`` (any case) and
whose ``app.ext.prebid.version`` is below a bound:

- interstitial (``pbsdk-android-instl-remove``, SDK below 2.2.3, bundle containing "android" in
  any case): removes ``imp.instl`` where it is 1;
- user agent (``pbsdk-ua-cleanup``, SDK below 2.1.6, ``device.ua`` matching
  ``.*PrebidMobile/[0-9]+[^ ]*.*``): removes every ``PrebidMobile/<digit>...`` token from the UA.

A correction copies what it changes (the request's nested objects are shared).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.modules.request_correction.config import Config
from hbserver.modules.request_correction.version import is_version_less_than

_PREBID_MOBILE = "prebid-mobile"
_ANDROID = "android"
# Java's "." stops at any of its line terminators
_JAVA_DOT = "[^\n\r\u0085\u2028\u2029]"
_UA_APPLIES = re.compile(f"{_JAVA_DOT}*PrebidMobile/[0-9]+[^ ]*{_JAVA_DOT}*")
_UA_TOKEN = re.compile("PrebidMobile/[0-9][^ ]*")

Request = dict[str, Any]


def _char_equal(a: str, b: str) -> bool:
    """Java's case-insensitive comparison of two characters."""
    return a == b or a.upper() == b.upper() or a.lower() == b.lower()


def _equals_ignore_case(text: str, other: str) -> bool:
    return len(text) == len(other) and all(map(_char_equal, text, other))


def _contains_ignore_case(text: str, part: str) -> bool:
    return any(_equals_ignore_case(text[i : i + len(part)], part) for i in range(len(text) - len(part) + 1))


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    """A string field as Jackson reads it into a String (a number becomes its text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _sdk(request: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``app.ext.prebid``'s source and version."""
    prebid = _dict(_dict(_dict(request.get("app")).get("ext")).get("prebid"))
    return _text(prebid.get("source")), _text(prebid.get("version"))


def _from_prebid_mobile_below(request: Mapping[str, Any], major: int, minor: int, patch: int) -> bool:
    source, version = _sdk(request)
    if source is None or not _equals_ignore_case(source, _PREBID_MOBILE):
        return False
    return version is not None and is_version_less_than(version, major, minor, patch)


def _is_interstitial(imp: Any) -> bool:
    instl = _dict(imp).get("instl")
    return isinstance(instl, (int, float)) and not isinstance(instl, bool) and instl == 1


def _interstitial_applies(request: Mapping[str, Any]) -> bool:
    imps = request.get("imp")
    if not isinstance(imps, list) or not any(_is_interstitial(imp) for imp in imps):
        return False
    if not _from_prebid_mobile_below(request, 2, 2, 3):
        return False
    bundle = _text(_dict(request.get("app")).get("bundle"))
    return bundle is not None and _contains_ignore_case(bundle, _ANDROID)


def _remove_interstitial(request: Request) -> Request:
    imps = request.get("imp")
    if not isinstance(imps, list):
        return request
    fixed = [{k: v for k, v in imp.items() if k != "instl"} if _is_interstitial(imp) else imp for imp in imps]
    return {**request, "imp": fixed}


def _user_agent_applies(request: Mapping[str, Any]) -> bool:
    if not _from_prebid_mobile_below(request, 2, 1, 6):
        return False
    ua = _dict(request.get("device")).get("ua")
    return isinstance(ua, str) and ua != "" and _UA_APPLIES.fullmatch(ua) is not None


def _clean_user_agent(request: Request) -> Request:
    device = request.get("device")
    if not isinstance(device, dict) or not isinstance(device.get("ua"), str):
        return request
    return {**request, "device": {**device, "ua": _UA_TOKEN.sub("", device["ua"])}}


@dataclass(frozen=True, slots=True)
class Correction:
    """One correction: whether it is on in the account's config, when it applies, what it changes."""

    name: str
    enabled: Callable[[Config], bool]
    applies: Callable[[Mapping[str, Any]], bool]
    apply: Callable[[Request], Request]
    key: tuple[str, ...]  # what it changes, for the trace


# in PBS-Java's order (its producers' bean order)
CORRECTIONS: tuple[Correction, ...] = (
    Correction("interstitial", lambda c: c.interstitial, _interstitial_applies, _remove_interstitial, ("imp",)),
    Correction("user-agent", lambda c: c.user_agent, _user_agent_applies, _clean_user_agent, ("device", "ua")),
)


def corrections(config: Config, request: Mapping[str, Any]) -> list[Correction]:
    """The corrections the account turns on that apply to ``request``."""
    return [c for c in CORRECTIONS if c.enabled(config) and c.applies(request)]
