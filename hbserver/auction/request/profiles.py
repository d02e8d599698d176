"""PBS-Java's profiles (``ProfilesProcessor``): named stored fragments merged into the request
(``ext.prebid.profiles``) or into one imp (``imp[].ext.prebid.profiles``), each list in its order.

A profile is ``{"type": "request"|"imp", "mergeprecedence": "request"|"profile", "body": {...}}``
(stored data kind ``profiles``). ``mergeprecedence`` ``request`` (the default) lets the request's
values win (the profile fills gaps), ``profile`` lets the profile's win; either way a JSON merge
patch. Profiles are read once, after the stored request and the host's default request are merged
(PBS-Java's ``StoredRequestProcessor`` then ``ProfilesProcessor``); a profile's own profile ids are
not followed. A request profile never changes ``imp``: the imps are the request's own, each after
its imp profiles.

Limits (the account's ``auction.profiles``, over ``account_defaults``; PBS-Java's host defaults):
``limit`` (4) request profiles are kept, and each imp keeps ``limit`` minus the number of request
ids asked; ``fail_on_unknown`` (``fail-on-unknown``, true) refuses the request (400) when a profile
is missing, of the other type or cannot be merged. Otherwise missing ones are skipped, and shown
as warnings in debug only, as is "Profiles exceeded the limit.".

Account profiles (PBS-Java's FileApplicationSettings names a profile file ``<account>-<id>.json``):
with the request's account known, ``<account>-<id>`` is asked for with ``<id>`` and wins over it, so
an account's own profile overrides a shared one and no other account's is ever read.

Metrics (PBS-Java's ProfileMetrics, where its ProfilesProcessor counts them), through a source that
is a :class:`ProfileCounter`: ``missing`` once per request with any profile not found (and for the
account in debug), ``invalid`` per profile that could not be merged, the account's
``limit_exceeded`` in debug.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import orjson

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.common.messages import Message
from hbserver.auction.request.stored import fetch_failure
from hbserver.auction.request.validate import RequestError
from hbserver.logsetup import LogLimiter
from hbserver.web.body import loads_json

log = logging.getLogger("hbserver.profiles")
_limited = LogLimiter(log)

REQUEST = "request"
IMP = "imp"
DEFAULT_LIMIT = 4  # PBS-Java's auction.profiles.limit
DEFAULT_FAIL_ON_UNKNOWN = True  # PBS-Java's auction.profiles.fail-on-unknown
DEFAULT_TIMEOUT_MS = 100  # PBS-Java's auction.profiles.timeout-ms
ERROR_PREFIX = "Error during processing profiles: "
LIMIT_EXCEEDED = "Profiles exceeded the limit."
NOT_CONFIGURED = "Profiles storage not configured."
NOT_AN_OBJECT = "One of the merge arguments is not an object."
WARNING_CODE = 999  # PBS-Java's code of these debug warnings (ProfileSpec)
UNKNOWN_ACCOUNT = "unknown"  # the account id of a request that names none
# PBS-Java's MetricName values its ProfilesProcessor counts
MISSING = "missing"
INVALID = "invalid"
LIMIT_EXCEEDED_METRIC = "limit_exceeded"


@runtime_checkable
class ProfileSource(Protocol):
    async def fetch_profiles(self, ids: Sequence[str], timeout_s: float) -> tuple[dict[str, bytes], list[str]]: ...


@runtime_checkable
class ProfileCounter(Protocol):
    def count_profiles(self, reason: str, account: str | None = None) -> None:
        """PBS-Java's ``profiles.<reason>`` (``account`` None) or ``account.<account>.profiles.<reason>``."""


@dataclass(frozen=True, slots=True)
class Profile:
    type: str  # REQUEST or IMP
    profile_wins: bool  # mergeprecedence "profile"
    body: Any


@dataclass(frozen=True, slots=True)
class ProfileIds:
    request: list[str]
    imps: list[list[str]]  # one list per imp, in the request's order


@dataclass(frozen=True, slots=True)
class ProfileSettings:
    limit: int = DEFAULT_LIMIT
    fail_on_unknown: bool = DEFAULT_FAIL_ON_UNKNOWN
    debug: bool = False  # warnings are debug ones (PBS-Java's debugWarnings)
    account: str = ""  # the request's account ("" none): its own profiles and metrics
    timeout_ms: int = DEFAULT_TIMEOUT_MS  # the fetch's wait for a request without tmax


# --- settings ---------------------------------------------------------------------------------------


def _fail_on_unknown(raw: Mapping[str, Any]) -> Any:
    """PBS-Java reads ``fail_on_unknown`` and its alias ``fail-on-unknown``; the alias wins when both are set."""
    value = raw.get("fail-on-unknown")
    return raw.get("fail_on_unknown") if value is None else value


def request_account(request: Mapping[str, Any]) -> str:
    """``site``/``app``/``dooh`` ``publisher.ext.prebid.parentAccount``, else ``publisher.id``; "" for none."""
    for channel in ("site", "app", "dooh"):
        holder = request.get(channel)
        publisher = holder.get("publisher") if type(holder) is dict else None
        if type(publisher) is not dict:
            continue
        ext = publisher.get("ext")
        prebid = ext.get("prebid") if type(ext) is dict else None
        parent = prebid.get("parentAccount") if type(prebid) is dict else None
        if type(parent) is str and parent:
            return parent
        if type(publisher.get("id")) is str and publisher["id"]:
            return publisher["id"]
    return ""


def _timeout_ms(raw: Mapping[str, Any], host_ms: int) -> int:
    """The account's ``timeout_ms`` (or ``timeout-ms``, which wins), else the host's."""
    value = raw.get("timeout-ms")
    value = raw.get("timeout_ms") if value is None else value
    return host_ms if value is None else value


def fetch_timeout_s(settings: ProfileSettings, tmax: Any, max_ms: int) -> float:
    """How long the profiles fetch waits, as PBS-Java's ProfilesProcessor.timeoutMillis: the request's
    ``tmax`` when positive (here at most ``max_ms``, the host's largest auction timeout), else the
    ``auction.profiles`` timeout."""
    if type(tmax) is int and tmax > 0:
        return min(tmax, max_ms) / 1000
    return settings.timeout_ms / 1000


def profile_settings(
    raw: Mapping[str, Any],
    debug_allow: bool,
    request: Mapping[str, Any],
    account: str | None = None,
    host_timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> ProfileSettings:
    """The limits of one request from its account's ``auction.profiles``; debug as PBS-Java's
    DebugResolver (``test: 1`` or ``ext.prebid.debug``, if the account allows debug); the account
    ``account``, else the request's; the fetch timeout the account's, else ``host_timeout_ms`` (the
    host's ``auction.profiles.timeout_ms``)."""
    if account is None:
        account = request_account(request)
    limit = raw.get("limit")
    fail = _fail_on_unknown(raw)
    ext = request.get("ext")
    prebid = ext.get("prebid") if type(ext) is dict else None
    asked = request.get("test") == 1 or (type(prebid) is dict and prebid.get("debug") is True)
    return ProfileSettings(
        DEFAULT_LIMIT if limit is None else limit,
        DEFAULT_FAIL_ON_UNKNOWN if fail is None else fail,
        debug_allow and asked,
        "" if account == UNKNOWN_ACCOUNT else account,
        _timeout_ms(raw, host_timeout_ms),
    )


# --- ids --------------------------------------------------------------------------------------------


def _id_list(container: Any, index: int = -1) -> list[str]:
    """``ext.prebid.profiles`` of the request (``index`` -1) or its imp ``index``; a single string is a
    list of one (Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY in PBS-Java)."""
    ext = container.get("ext") if type(container) is dict else None
    prebid = ext.get("prebid") if type(ext) is dict else None
    ids = prebid.get("profiles") if type(prebid) is dict else None
    if ids is None:
        return []
    if type(ids) is str:
        return [ids]
    if type(ids) is not list or not all(type(item) is str for item in ids):
        where = "request" if index < 0 else f"request.imp[{index}]"
        raise RequestError(f"{where}.ext.prebid.profiles must be an array of strings")
    return ids


def profile_ids(request: Mapping[str, Any]) -> ProfileIds | None:
    """The profile ids the request and its imps ask for, None when none: the one check a request
    without profiles pays. Raises RequestError for ids that are not strings."""
    request_ids = _id_list(request)
    imps = request.get("imp")
    imp_ids = [_id_list(imp, i) for i, imp in enumerate(imps)] if type(imps) is list else []
    if not request_ids and not any(imp_ids):
        return None
    return ProfileIds(request_ids, imp_ids)


def truncate(ids: ProfileIds, limit: int) -> tuple[ProfileIds, bool]:
    """PBS-Java's limit: ``limit`` request ids, and ``limit`` minus the request ids asked for each imp;
    True when anything was cut."""
    imp_limit = max(0, limit - len(ids.request))
    cut = ProfileIds(ids.request[:limit], [own[:imp_limit] for own in ids.imps])
    exceeded = len(cut.request) < len(ids.request) or any(
        len(kept) < len(own) for kept, own in zip(cut.imps, ids.imps, strict=True)
    )
    return cut, exceeded


# --- stored profiles --------------------------------------------------------------------------------


def parse_profile(raw: bytes) -> Profile | None:
    """A stored profile, or None when it is unusable (not JSON, no valid ``type`` or ``mergeprecedence``):
    PBS-Java's database mapper ignores such a profile, so its id is "not found"."""
    try:
        doc = loads_json(raw)
    except orjson.JSONDecodeError:
        return None
    if type(doc) is not dict:
        return None
    kind = doc.get("type")
    precedence = doc.get("mergeprecedence")
    precedence = REQUEST if precedence is None else precedence
    if type(kind) is not str or type(precedence) is not str:
        return None
    kind, precedence = kind.lower(), precedence.lower()
    if kind not in (REQUEST, IMP) or precedence not in (REQUEST, "profile"):
        return None
    return Profile(kind, precedence == "profile", doc.get("body"))


def not_found(profile_id: str) -> str:
    return f"No profile found for id: {profile_id}"


def scoped(account: str, profile_id: str) -> str:
    """The id of ``account``'s own profile ``profile_id`` (PBS-Java's file ``<account>-<id>.json``)."""
    return f"{account}-{profile_id}"


def wanted_ids(ids: ProfileIds, account: str = "") -> list[str]:
    """The ids to fetch, each once: an account's own (:func:`scoped`) before the shared one."""
    plain = dict.fromkeys([*ids.request, *(i for own in ids.imps for i in own)])
    if not account:
        return list(plain)
    return [item for profile_id in plain for item in (scoped(account, profile_id), profile_id)]


def _usable(raw: bytes | None, kind: str) -> Profile | None:
    profile = parse_profile(raw) if raw is not None else None
    return profile if profile is not None and profile.type == kind else None


def resolve(
    ids: ProfileIds, found: Mapping[str, bytes], account: str = ""
) -> tuple[dict[str, Profile], dict[str, Profile], list[str]]:
    """The request and imp profiles by id, and one error per id that has no usable profile of the type
    asked (PBS-Java's FileApplicationSettings: a profile of the other type is "not found"); the
    account's own profile of the type asked wins over a shared one."""
    errors: list[str] = []
    by_type: dict[str, dict[str, Profile]] = {REQUEST: {}, IMP: {}}
    wanted = [(REQUEST, ids.request), (IMP, [i for own in ids.imps for i in own])]
    for kind, kind_ids in wanted:
        for profile_id in dict.fromkeys(kind_ids):
            own = _usable(found.get(scoped(account, profile_id)), kind) if account else None
            profile = own or _usable(found.get(profile_id), kind)
            if profile is not None:
                by_type[kind][profile_id] = profile
            else:
                errors.append(not_found(profile_id))
    return by_type[REQUEST], by_type[IMP], errors


# --- merging ----------------------------------------------------------------------------------------


def merge_profile(original: Any, profile: Profile) -> dict[str, Any]:
    """One profile merged into the request or an imp; raises ValueError when either is not an object."""
    if type(original) is not dict or type(profile.body) is not dict:
        raise ValueError(NOT_AN_OBJECT)
    if profile.profile_wins:
        return merge_patch(original, profile.body)
    return merge_patch(profile.body, original)


def _apply_list(original: Any, ids: list[str], profiles: Mapping[str, Profile], fail: bool, errors: list[str]) -> Any:
    """``original`` with the profiles of ``ids`` merged in order; an id without a profile is skipped
    (its error was reported); a profile that cannot be merged is an error (raised when ``fail``)."""
    result = original
    for profile_id in ids:
        profile = profiles.get(profile_id)
        if profile is None:
            continue
        try:
            result = merge_profile(result, profile)
        except ValueError as exc:
            message = f"Can't merge with profile {profile_id}: {exc}"
            if fail:
                raise RequestError(ERROR_PREFIX + message) from None
            _limited.warning(message, "profiles: %s", message)
            errors.append(message)
    return result


def apply(
    request: dict[str, Any],
    ids: ProfileIds,
    request_profiles: Mapping[str, Profile],
    imp_profiles: Mapping[str, Profile],
    fail_on_unknown: bool,
) -> tuple[dict[str, Any], list[str]]:
    """The request with its profiles merged (pure); the merge errors that did not refuse it."""
    errors: list[str] = []
    merged = request
    if request_profiles:
        merged = _apply_list(request, ids.request, request_profiles, fail_on_unknown, errors)
    imps = request.get("imp")
    if type(imps) is list and imp_profiles:  # ids.imps has one list per imp (read from this request)
        imps = [
            _apply_list(imp, own, imp_profiles, fail_on_unknown, errors)
            for imp, own in zip(imps, ids.imps, strict=True)
        ]
    if merged is request and imps is request.get("imp"):
        return request, errors
    merged = dict(merged)
    if "imp" in request:
        merged["imp"] = imps  # a request profile's imps are never used (PBS-Java's mergeResults)
    else:
        merged.pop("imp", None)
    return merged, errors


@dataclass(frozen=True, slots=True)
class ProfileTrace:
    """What a request's profiles were made of: its settings, the ids fetched and the bytes found (what a
    memo of the merged request depends on), and what to count again each time the memo serves it."""

    settings: ProfileSettings
    wanted: tuple[str, ...]
    found: Mapping[str, bytes]
    missing: bool = False  # some profile was not found (counted as PBS-Java's profiles.missing)
    invalid: int = 0  # profiles that could not be merged (profiles.invalid)


def count_again(source: object | None, trace: ProfileTrace) -> None:
    """The metrics of a request served from a memo of ``trace`` (each request counts, as in PBS-Java)."""
    counter = source if isinstance(source, ProfileCounter) else None
    if counter is None:
        return
    if trace.missing:
        counter.count_profiles(MISSING)
    for _ in range(trace.invalid):
        counter.count_profiles(INVALID)


async def apply_profiles(
    request: dict[str, Any], ids: ProfileIds, source: object | None, settings: ProfileSettings, timeout_s: float
) -> tuple[dict[str, Any], list[Message]]:
    """PBS-Java's ``ProfilesProcessor.process``: fetch, check and merge; the debug warnings. Raises
    RequestError (400) when it refuses the request, StoredDataUnavailable (503) when a backend failed."""
    merged, warnings, _trace = await traced_profiles(request, ids, source, settings, timeout_s)
    return merged, warnings


async def traced_profiles(
    request: dict[str, Any], ids: ProfileIds, source: object | None, settings: ProfileSettings, timeout_s: float
) -> tuple[dict[str, Any], list[Message], ProfileTrace]:
    """:func:`apply_profiles`, and the :class:`ProfileTrace` of the result."""
    counter = source if isinstance(source, ProfileCounter) else None
    warnings: list[Message] = []
    ids, exceeded = truncate(ids, settings.limit)
    if exceeded and settings.debug:
        warnings.append(Message(WARNING_CODE, LIMIT_EXCEEDED))
        if counter is not None:
            counter.count_profiles(LIMIT_EXCEEDED_METRIC, settings.account)
    if not ids.request and not any(ids.imps):
        return request, warnings, ProfileTrace(settings, (), {})
    if not isinstance(source, ProfileSource):
        raise RequestError(ERROR_PREFIX + NOT_CONFIGURED)
    wanted = wanted_ids(ids, settings.account)
    found, fetch_errors = await source.fetch_profiles(wanted, timeout_s)
    failure = fetch_failure(fetch_errors)
    if failure is not None:
        raise failure
    request_profiles, imp_profiles, errors = resolve(ids, found, settings.account)
    if errors:
        _missing(counter, settings, errors, warnings)
        if settings.fail_on_unknown:
            raise RequestError(ERROR_PREFIX + "\n".join(errors))
    try:
        merged, merge_errors = apply(request, ids, request_profiles, imp_profiles, settings.fail_on_unknown)
    except RequestError:
        _count(counter, [INVALID])
        raise
    _count(counter, [INVALID] * len(merge_errors))
    return merged, warnings, ProfileTrace(settings, tuple(wanted), found, bool(errors), len(merge_errors))


def _missing(
    counter: ProfileCounter | None, settings: ProfileSettings, errors: list[str], warnings: list[Message]
) -> None:
    """PBS-Java's emitMetrics: ``missing`` once; in debug the account's too, and the errors as warnings."""
    if counter is not None:
        counter.count_profiles(MISSING)
    if settings.debug:
        if counter is not None:
            counter.count_profiles(MISSING, settings.account)
        warnings.extend(Message(WARNING_CODE, error) for error in errors)


def _count(counter: ProfileCounter | None, reasons: Iterable[str]) -> None:
    if counter is not None:
        for reason in reasons:
            counter.count_profiles(reason)
