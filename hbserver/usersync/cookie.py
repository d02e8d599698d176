"""The ``uids`` cookie: PBS-Go's wire format, read leniently and written exactly.

Value: URL-safe base64 with padding of ``{"tempUIDs":{key:{"uid","expires"}},"optout":true}``
(map keys sorted, HTML characters escaped, ``tempUIDs``/``optout`` left out when empty/false).
Anything unreadable reads as an empty cookie. A synced uid lives 14 days; expired uids are kept
(auctions still send them) but do not count as "in sync".
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from hbserver.web.body import loads_json

COOKIE_NAME = "uids"
UID_TTL = timedelta(days=14)
# Facebook's "not recognised" uid: dropped on read, refused on write (PBS-Go).
AUDIENCE_NETWORK = "audienceNetwork"
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)
MAX_COOKIE_VALUE_BYTES = 32768  # never decode more than this (a cookie header is ~4 KB anyway)
# PBS measures "uids=<value>; Path=/; Expires=<29-char date>" when trimming: len(value) + 52.
COOKIE_OVERHEAD_BYTES = 52

_HTML_ESCAPES = (
    (b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"),
)
_ESCAPE_CANDIDATES = b"<>&\xe2"
_URLSAFE = bytes.maketrans(b"+/", b"-_")  # standard base64 alphabet -> URL alphabet
# Go's URLEncoding: URL alphabet, '=' padding, a length that is a multiple of 4 (checked on decode).
_BASE64URL = re.compile(r"(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?")
# ASCII digits only, as Go's time.Parse: re's \d also takes other scripts' digits ("٢٠٢٠").
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)


@dataclass(slots=True)
class UidEntry:
    uid: str
    expires: datetime


@dataclass
class UidsCookie:
    uids: dict[str, UidEntry] = field(default_factory=dict)
    optout: bool = False

    def is_live(self, key: str, now: datetime) -> bool:
        entry = self.uids.get(key)
        return entry is not None and now < entry.expires

    def has_live_uid(self, now: datetime) -> bool:
        if not self.uids:  # the usual cookie-less request, without a generator
            return False
        return any(now < entry.expires for entry in self.uids.values())

    def set_uid(self, key: str, uid: str, now: datetime) -> None:
        self.uids[key] = UidEntry(uid, _expiry(epoch_second(now)))

    def remove(self, key: str) -> None:
        self.uids.pop(key, None)

    def set_optout(self, optout: bool) -> None:
        self.optout = optout
        if optout:
            self.uids.clear()

    def buyeruids(self) -> dict[str, str]:
        return {key: entry.uid for key, entry in self.uids.items()}


_last_now: list[Any] = [None, 0]  # the last datetime epoch_second() was asked about, and its answer


def epoch_second(now: datetime) -> int:
    """``int(now.timestamp())``, remembered for the last ``now`` (an aware datetime's timestamp()
    costs microseconds, and /setuid asks twice about the same one)."""
    last = _last_now
    if last[0] is not now:
        last[1] = int(now.timestamp())
        last[0] = now
    return last[1]


@functools.lru_cache(maxsize=2)
def _expiry(second: int) -> datetime:
    """A new uid's expiry, in whole seconds (a shorter cookie; the fraction tells nothing)."""
    return datetime.fromtimestamp(second, UTC) + UID_TTL


def format_expires(value: datetime) -> str:
    """Go's RFC 3339 with nanoseconds, trailing zeros of the fraction trimmed, in UTC."""
    value = value.astimezone(UTC)
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def parse_expires(text: str) -> datetime | None:
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        value = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=UTC)
    except ValueError:
        return None
    if not zulu:
        offset = timedelta(hours=int(off_h), minutes=int(off_m))
        value = value - offset if sign == "+" else value + offset
    return value


def decode_cookie(value: str | None) -> UidsCookie:
    """Read a ``uids`` value; anything unreadable is an empty cookie (not opted out)."""
    if not value or len(value) > MAX_COOKIE_VALUE_BYTES or not _BASE64URL.fullmatch(value):
        return UidsCookie()
    try:
        raw = base64.urlsafe_b64decode(value.encode("ascii"))
        data = loads_json(raw)
    except (ValueError, binascii.Error, UnicodeEncodeError):
        return UidsCookie()
    if not isinstance(data, dict):
        return UidsCookie()
    if data.get("optout") is True:
        return UidsCookie(optout=True)
    temp = data.get("tempUIDs")
    cookie = UidsCookie()
    if temp is None:
        return cookie
    if not isinstance(temp, dict):
        return UidsCookie()
    for key, entry in temp.items():
        if not isinstance(entry, dict):
            return UidsCookie()
        uid = entry.get("uid", "")
        expires_text = entry.get("expires")
        if not isinstance(uid, str) or not (expires_text is None or isinstance(expires_text, str)):
            return UidsCookie()
        expires = parse_expires(expires_text) if expires_text else ZERO_TIME
        if expires is None:
            return UidsCookie()
        if key == AUDIENCE_NETWORK and uid == "0":
            continue
        cookie.uids[key] = UidEntry(uid, expires)
    return cookie


def decode_parts(cookies: Mapping[str, str], names: tuple[str, ...]) -> UidsCookie:
    """Several uids cookies (``uids``, ``uids2``, …) read back as one: a key in two parts keeps the later
    expiry (PBS-Java); an unreadable part reads as empty; any part opted out opts the whole out."""
    merged: dict[str, UidEntry] = {}
    for name in names:
        value = cookies.get(name)
        if not value:
            continue
        part = decode_cookie(value)
        if part.optout:
            return UidsCookie(optout=True)
        for key, entry in part.uids.items():
            current = merged.get(key)
            if current is None or entry.expires > current.expires:
                merged[key] = entry
    return UidsCookie(merged)


def _uids_document(uids: dict[str, UidEntry]) -> dict[str, dict[str, object]]:
    """The uids as Go writes them: map keys sorted, each entry {"uid", "expires"} in field order. Plain
    dicts: orjson writes a slots dataclass about five times slower than a dict of its fields."""
    if len(uids) == 1:  # a first sync (the usual /setuid): no sort, no comprehension
        ((key, entry),) = uids.items()
        return {key: {"uid": entry.uid, "expires": entry.expires}}
    return {key: {"uid": (entry := uids[key]).uid, "expires": entry.expires} for key in sorted(uids)}


def encode_cookie(cookie: UidsCookie) -> str:
    # orjson writes the aware UTC datetimes as RFC 3339 with "Z", as Go does (a non-zero fraction
    # keeps its six digits where Go would trim trailing zeros; both read the same).
    doc: dict[str, object] = {"tempUIDs": _uids_document(cookie.uids)} if cookie.uids else {}
    if cookie.optout:  # "optout" after "tempUIDs" (the key order Go writes)
        doc["optout"] = True
    data = orjson.dumps(doc, option=orjson.OPT_UTC_Z)
    # Anything _HTML_ESCAPES may replace? (0xE2 leads U+2028/U+2029; other characters starting with
    # it only cost a needless replace pass.) One deleting translate is cheaper than four scans.
    if len(data.translate(None, _ESCAPE_CANDIDATES)) != len(data):
        for raw, escaped in _HTML_ESCAPES:
            data = data.replace(raw, escaped)
    # base64.urlsafe_b64encode's own two C calls, without its Python wrapper
    return binascii.b2a_base64(data, newline=False).translate(_URLSAFE).decode("ascii")


def html_escaped(data: bytes) -> bytes:
    """``data`` with the characters Go's JSON encoder escapes for HTML escaped."""
    if len(data.translate(None, _ESCAPE_CANDIDATES)) != len(data):
        for raw, escaped in _HTML_ESCAPES:
            data = data.replace(raw, escaped)
    return data


def measured_size(value: str) -> int:
    return len(value) + COOKIE_OVERHEAD_BYTES


class CookieTooLarge(Exception):
    """The uid being synced alone does not fit (PBS: 400)."""


class NotAPriority(Exception):
    """Only priority uids are left and the bidder being synced is not one (PBS: 200 warning)."""


def prepare_for_write(
    cookie: UidsCookie,
    max_bytes: int,
    priority_keys: list[set[str]],
    syncing_is_priority: bool,
) -> str:
    """Encode ``cookie``, ejecting uids until it fits in ``max_bytes`` (0 = no limit).

    ``priority_keys`` is the host's priority groups as syncer keys, highest priority first.
    Non-priority uids go first, oldest (earliest expiry) first; then the lowest-priority group,
    oldest first. An empty cookie is written as the empty string (PBS-Go).
    """
    groups: list[set[str]] | None = None  # copied on the first ejection only
    while cookie.uids:
        value = encode_cookie(cookie)
        if max_bytes <= 0 or measured_size(value) <= max_bytes:
            return value
        if len(cookie.uids) == 1:
            raise CookieTooLarge("uid that's trying to be synced is bigger than MaxCookieSize")
        if groups is None:
            groups = [set(g) for g in priority_keys]
        cookie.remove(_victim(cookie, groups, syncing_is_priority))
    return ""


def _victim(cookie: UidsCookie, groups: list[set[str]], syncing_is_priority: bool) -> str:
    prioritized = set().union(*groups) if groups else set()
    others = [key for key in cookie.uids if key not in prioritized]
    if len(others) == 1 and groups and not syncing_is_priority:
        raise NotAPriority("syncer key is not a priority, and there are only priority elements left")
    if others:
        return _oldest(cookie, others)
    while groups:
        present = [key for key in groups[-1] if key in cookie.uids]
        if present:
            victim = _oldest(cookie, present)
            groups[-1].discard(victim)
            return victim
        groups.pop()
    return _oldest(cookie, cookie.uids)


def _oldest(cookie: UidsCookie, keys: Iterable[str]) -> str:
    return min(keys, key=lambda k: (cookie.uids[k].expires, k))


def http_date(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


class SetCookieHeader:
    """The ``Set-Cookie`` value ``uids=<v>; Path=/; [Domain=..;] Expires=..; Max-Age=..; SameSite=None; Secure;
    HttpOnly`` (DECISIONS; HttpOnly: no page script reads it, so a script that ever ran on this origin cannot
    read the ids). The attributes are the same for every cookie written within one second: built once per second.
    """

    __slots__ = ("_attributes", "_second", "domain", "ttl_days")

    def __init__(self, ttl_days: int, domain: str = "") -> None:
        self.ttl_days = ttl_days
        self.domain = domain
        self._second = -1
        self._attributes = ""

    def __call__(self, value: str, now: datetime, name: str = COOKIE_NAME) -> str:
        second = epoch_second(now)
        if second != self._second:
            self._attributes = _attributes(second, self.ttl_days, self.domain)
            self._second = second
        return f"{name}={value}; {self._attributes}"

    def expired(self, name: str) -> str:
        """A ``Set-Cookie`` value that deletes the cookie ``name`` (an emptied ``uids2``, ``uids3``, …)."""
        domain = f"Domain={self.domain.lstrip('.')}; " if self.domain else ""
        return (f"{name}=; Path=/; {domain}Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; SameSite=None; "
                "Secure; HttpOnly")


def _attributes(second: int, ttl_days: int, domain: str) -> str:
    """The attributes after the value, for a cookie written in ``second``."""
    max_age = ttl_days * 86400
    parts = ["Path=/"]
    if domain:
        parts.append(f"Domain={domain.lstrip('.')}")
    expires = datetime.fromtimestamp(second + max_age, UTC)
    parts += [f"Expires={http_date(expires)}", f"Max-Age={max_age}", "SameSite=None", "Secure", "HttpOnly"]
    return "; ".join(parts)


def _writable(text: str) -> bool:
    """Can ``text`` be written as UTF-8? (A header's bytes that were not UTF-8 arrive as lone surrogates.)"""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_request_cookie(
    cookies: Mapping[str, str],
    now: datetime,
    *,
    optout_name: str = "",
    optout_value: str = "",
    host_family: str = "",
    host_cookie_name: str = "",
    parts: tuple[str, ...] | None = None,
) -> UidsCookie:
    """The request's uids cookie with the host opt-out cookie and the host cookie applied; ``parts``:
    the names of several uids cookies read back together (:func:`decode_parts`), None for ``uids`` alone."""
    if not cookies:
        return UidsCookie()
    if optout_name and cookies.get(optout_name) == optout_value:
        return UidsCookie(optout=True)
    cookie = decode_cookie(cookies.get(COOKIE_NAME)) if parts is None else decode_parts(cookies, parts)
    if cookie.optout:
        return cookie
    if host_family and host_cookie_name:
        host_uid = cookies.get(host_cookie_name)
        current = cookie.uids.get(host_family)
        if host_uid and (current is None or not current.uid) and _writable(host_uid):
            cookie.set_uid(host_family, host_uid, now)
    return cookie
