"""Check that a document's root element is VAST, and insert an impression tracker, without an XML parser.

The document is never parsed nor re-serialised: the output equals the input plus
one inserted ``<Impression>`` element, so entities and DTDs are never resolved and
hostile documents (billion laughs, external entities) are harmless. Tag matching
follows the case-insensitive regexes of PBS-Java's ``VastModifier``, but tag ends
are located by hand so every call runs in linear time. The root check
(:func:`vast_root_refusal`) reads only the prolog, also in linear time.
"""

from __future__ import annotations

import re

from hbserver.web.urls import url_value

__all__ = ["DOCTYPE", "NOT_VAST", "carries_impression", "insert_impression", "tracking_url", "vast_root_refusal"]

# Java's default ``\s`` (no UNICODE_CHARACTER_CLASS flag).
_WS = " \t\n\x0b\f\r"
_WS_CLASS = "[ \\t\\n\\x0b\\f\\r]"
# Java's ``.`` (no DOTALL flag) stops at these line terminators.
_TAG_END_OR_EOL = re.compile("[>\n\r\x85\u2028\u2029]")

# ASCII-only case folding, as Java's CASE_INSENSITIVE without UNICODE_CASE.
_FLAGS = re.IGNORECASE | re.ASCII


def _name(name: str, closing: bool) -> re.Pattern[str]:
    slash = f"/{_WS_CLASS}*" if closing else ""
    return re.compile(f"<{_WS_CLASS}*{slash}{name}", _FLAGS)


_INLINE_OPEN = _name("inline", False)
_INLINE_CLOSE = _name("inline", True)
_WRAPPER_OPEN = _name("wrapper", False)
_WRAPPER_CLOSE = _name("wrapper", True)
_IMPRESSION_CLOSE = _name("impression", True)
_IMPRESSION_TAG = re.compile(f"<{_WS_CLASS}*(/{_WS_CLASS}*)?impression(?=[ \\t\\n\\x0b\\f\\r>/])", _FLAGS)

# vast_root_refusal's answers.
NOT_VAST = "not vast"
DOCTYPE = "doctype"
_XML_SPACE = re.compile("[ \t\r\n]*")  # XML's S; one character class, so no backtracking
_NAME_END = " \t\r\n/>"


def vast_root_refusal(xml: str) -> str | None:
    """``None`` when the document's root element is ``VAST``, else why not (:data:`NOT_VAST`, :data:`DOCTYPE`).

    Only the prolog is read: an optional byte order mark, then whitespace, comments and processing
    instructions (the XML declaration is one), then ``<VAST`` (ASCII case ignored, as PBS's ``<vast``
    test) ending the name. A document type declaration is refused rather than skipped: its internal
    subset is where entities are declared, and a VAST needs none. Whatever follows the root's name is
    not looked at, so a VAST that is malformed further on passes. Every step starts where the last one
    ended and searches forward only (``str.find``, one character-class run): linear time.
    """
    size = len(xml)
    pos = 1 if xml.startswith("\ufeff") else 0
    while True:
        pos = _XML_SPACE.match(xml, pos).end()  # type: ignore[union-attr]  # `*` always matches
        if xml.startswith("<?", pos):
            body, close = pos + 2, "?>"
        elif xml.startswith("<!--", pos):
            body, close = pos + 4, "-->"
        elif xml.startswith("<!", pos):
            return DOCTYPE if xml[pos + 2 : pos + 9].upper() == "DOCTYPE" else NOT_VAST
        else:
            break
        end = xml.find(close, body)
        if end < 0:
            return NOT_VAST
        pos = end + len(close)
    name = xml[pos + 1 : pos + 5]
    if xml[pos : pos + 1] != "<" or not name.isascii() or name.lower() != "vast":
        return NOT_VAST
    if pos + 5 < size and xml[pos + 5] not in _NAME_END:
        return NOT_VAST
    return None


class _TagScanner:
    """Find ``<name(?:>|\\s.*?>)`` matches (Java semantics) in linear time.

    Candidates are visited in increasing position order; the result of the last
    search for ``>`` or a line terminator is memoised and reused while it lies at
    or after the next start, so the total scanning work stays O(n).
    """

    __slots__ = ("_memo", "_xml")

    def __init__(self, xml: str) -> None:
        self._xml = xml
        self._memo = -1  # position of the next '>'/line terminator, len(xml) if none

    def _stop_from(self, start: int) -> int:
        if self._memo < start:
            found = _TAG_END_OR_EOL.search(self._xml, start)
            self._memo = found.start() if found else len(self._xml)
        return self._memo

    def find(self, pattern: re.Pattern[str], pos: int) -> tuple[int, int] | None:
        """Return ``(start, end)`` of the first whole tag at or after ``pos``."""
        xml = self._xml
        size = len(xml)
        while True:
            m = pattern.search(xml, pos)
            if m is None:
                return None
            after = m.end()
            if after < size:
                ch = xml[after]
                if ch == ">":
                    return m.start(), after + 1
                if ch in _WS:
                    stop = self._stop_from(after + 1)
                    if stop < size and xml[stop] == ">":
                        return m.start(), stop + 1
            pos = after


def _insert(xml: str, element: str, open_pat: re.Pattern[str], close_pat: re.Pattern[str]) -> str | None:
    """Apply one InLine/Wrapper attempt; ``None`` if the open tag is absent."""
    scanner = _TagScanner(xml)
    opened = scanner.find(open_pat, 0)
    if opened is None:
        return None
    open_end = opened[1]

    last_end = -1
    pos = open_end
    while (found := scanner.find(_IMPRESSION_CLOSE, pos)) is not None:
        last_end = pos = found[1]
    if last_end >= 0:
        return xml[:last_end] + element + xml[last_end:]

    closed = _TagScanner(xml).find(close_pat, open_end)
    if closed is None:
        return xml
    return xml[: closed[0]] + element + xml[closed[0] :]


def insert_impression(xml: str, url: str) -> str | None:
    """Insert ``<Impression><![CDATA[url]]></Impression>`` like PBS-Java's VastModifier.

    Returns the modified document, the unchanged document when an InLine/Wrapper
    open tag has neither a later ``</Impression>`` nor a matching close tag, or
    ``None`` when neither an InLine nor a Wrapper open tag exists.
    """
    element = "<Impression><![CDATA[" + url + "]]></Impression>"
    result = _insert(xml, element, _INLINE_OPEN, _INLINE_CLOSE)
    if result is None:
        result = _insert(xml, element, _WRAPPER_OPEN, _WRAPPER_CLOSE)
    return result


def carries_impression(xml: str, url_prefix: str) -> bool:
    """Does an ``<Impression>`` element of ``xml`` hold a URL starting with ``url_prefix``?

    ``url_prefix`` is this server's ``{external_url}/event?t=imp`` (no ``&``, so it reads the same
    escaped or in CDATA). Used by /vtrack so that a VAST the auction already tracked (Prebid.js's
    ``cache.vasttrack`` posts it back) is not counted twice. The URL must sit inside an Impression
    element (the last Impression tag before it opens one), not in a Tracking or ClickThrough element.
    One pass over the Impression tags and the URL's occurrences, both in increasing order.
    """
    start = xml.find(url_prefix)
    if start < 0:
        return False
    inside = False
    for tag in _IMPRESSION_TAG.finditer(xml):
        while tag.start() > start:  # every occurrence before this tag
            if inside:
                return True
            start = xml.find(url_prefix, start + 1)
            if start < 0:
                return False
        inside = tag.group(1) is None
    return inside


def tracking_url(
    external_url: str,
    bidid: str,
    account: str,
    bidder: str,
    aid: str | None,
    timestamp: str | None,
    integration: str | None,
) -> str:
    """Build the PBS ``/event?t=imp`` impression URL with every value percent-encoded."""
    parts = [f"{external_url.rstrip('/')}/event?t=imp&b={url_value(bidid)}&a={url_value(account)}"]
    if aid:
        parts.append(f"&aid={url_value(aid)}")
    if timestamp:
        parts.append(f"&ts={url_value(timestamp)}")
    parts.append(f"&bidder={url_value(bidder)}&f=b")
    if integration:
        parts.append(f"&int={url_value(integration)}")
    return "".join(parts)
