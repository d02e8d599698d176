"""Go's ``net/url`` as far as adapters need it: ``url.Parse``'s scheme and host of a URL, or None where
Go's parser refuses it (control bytes, a bad escape, a bad port, a colon in a first relative segment,
...), for the adapters that type or route a request by ``site.page`` (richaudience, connectad), and
``URL.Hostname()`` of that host (rtbstack, eplanning); ``url.PathEscape`` / ``url.QueryUnescape``
(missena, sovrn, rtbstack, huaweiads)."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote_to_bytes

# Go's net/url: bytes that may stand unescaped in a host, and in userinfo (besides letters and digits)
_HOST_PUNCTUATION = frozenset("!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_PUNCTUATION = frozenset("-._:~!$&'()*+,;=%@")
_HEX = frozenset("0123456789abcdefABCDEF")
_SCHEME_LATER = frozenset("0123456789+-.")
_DIGITS = frozenset("0123456789")


def _unescape_ok(text: str, host: bool = False) -> bool:
    """Whether Go's url unescape accepts ``text`` (every ``%`` starts a hex pair; in a host only
    escapes of bytes >= 0x80 or ``%25``, and no byte that must be escaped)."""
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char == "%":
            if i + 2 >= end or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                return False
            if host and int(text[i + 1], 16) < 8 and text[i : i + 3] != "%25":
                return False
            i += 3
            continue
        if host and char < "\x80" and not char.isalnum() and char not in _HOST_PUNCTUATION:
            return False
        i += 1
    return True


def _go_unescape_host(host: str) -> str:
    if "%" not in host:
        return host
    out = bytearray()
    i = 0
    while i < len(host):
        if host[i] == "%":
            out.append(int(host[i + 1 : i + 3], 16))
            i += 3
        else:
            out += host[i].encode()
            i += 1
    return out.decode(errors="replace")


def _valid_port(colon_port: str) -> bool:
    """Go's validOptionalPort: empty, or a colon and ASCII digits (maybe none)."""
    return colon_port == "" or (colon_port[0] == ":" and all(char in _DIGITS for char in colon_port[1:]))


def go_url_scheme_host(raw: str) -> tuple[str, str] | None:
    """(scheme lower-cased, host) of ``raw`` as Go's ``url.Parse`` reads it; None where it fails."""
    raw, _, fragment = raw.partition("#")
    if any(char < " " or char == "\x7f" for char in raw) or not _unescape_ok(fragment):
        return None
    if raw == "*":
        return "", ""
    scheme, rest = "", raw
    for index, char in enumerate(raw):
        if char.isascii() and char.isalpha():
            continue
        if char in _SCHEME_LATER:
            if index == 0:
                break
            continue
        if char == ":":
            if index == 0:
                return None  # missing protocol scheme
            scheme, rest = raw[:index].lower(), raw[index + 1 :]
        break
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return scheme, ""  # opaque
        if ":" in rest.partition("/")[0]:
            return None  # first path segment in URL cannot contain colon
    host = ""
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host_part = authority.rpartition("@")
        if at and not (
            all(char.isascii() and (char.isalnum() or char in _USERINFO_PUNCTUATION) for char in userinfo)
            and _unescape_ok(userinfo)
        ):
            return None
        if host_part.startswith("["):
            close = host_part.rfind("]")
            if close < 0 or not _valid_port(host_part[close + 1 :]):
                return None
            zone = host_part.find("%25", 0, close)
            if zone < 0 and not _unescape_ok(host_part, host=True):
                return None
            if zone >= 0 and not (_unescape_ok(host_part[:zone], host=True) and _unescape_ok(host_part[zone:])):
                return None
        else:
            colon = host_part.rfind(":")
            if colon >= 0 and not _valid_port(host_part[colon:]):
                return None
            if not _unescape_ok(host_part, host=True):
                return None
        host = _go_unescape_host(host_part)
    if not _unescape_ok(rest):
        return None
    return scheme, host


def go_hostname(host: str) -> str:
    """Go's ``URL.Hostname()`` of a host (as ``go_url_scheme_host`` gives it): without its port (a
    last colon and ASCII digits, maybe none) and the brackets of an IPv6 address."""
    colon = host.rfind(":")
    if colon >= 0 and all(char in _DIGITS for char in host[colon + 1 :]):
        host = host[:colon]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


# url.PathEscape (encodePathSegment) leaves letters, digits, "-_.~" and these reserved bytes alone;
# it escapes "/", ";", "," and "?"
_PATH_SEGMENT_SAFE = "$&+:=@"
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


def go_path_escape(text: str) -> str:
    """Go's ``url.PathEscape``: ``text`` escaped to sit in one path segment (UTF-8 bytes as ``%XX``)."""
    return quote(text, safe=_PATH_SEGMENT_SAFE)


def go_query_unescape(text: str) -> str | None:
    """Go's ``url.QueryUnescape``: ``+`` is a space, ``%XX`` a byte (bytes that are no UTF-8 read as
    U+FFFD); None for a ``%`` that does not start a hex pair, where Go fails."""
    if "%" not in text and "+" not in text:
        return text
    if _BAD_ESCAPE.search(text):
        return None
    return unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")
