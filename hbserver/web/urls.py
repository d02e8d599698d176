"""URLs: percent-encoding of values put into URLs we build (event and tracking URLs), and the host
of URLs we are given (``site.page``, ``Referer``, AMP's ``curl``)."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

_UNRESERVED = "-_.~"  # RFC 3986 unreserved punctuation; everything else but letters and digits is encoded
_already_safe = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def url_value(value: str) -> str:
    """``value`` percent-encoded for a query string; the usual all-safe value costs one regex match.

    A lone surrogate (text that was not UTF-8) is encoded as ``?``, never an exception."""
    return value if _already_safe(value) else quote(value, safe=_UNRESERVED, errors="replace")


def url_host(url: str) -> str:
    """The host name of ``url``, lower-cased; "" when it has none or does not parse (``http://[``,
    an unclosed IPv6 bracket, makes ``urlsplit`` raise)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""
