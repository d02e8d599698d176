"""Chrome's Privacy Sandbox signals, as PBS-Go reads them (``privacysandbox/topics.go``,
``endpoints/openrtb2/auction.go``, ``endpoints/cookie_sync.go``).

- ``Sec-Browsing-Topics`` becomes ``user.data`` segments named after the account's
  ``privacy.privacysandbox.topicsdomain`` (nothing without one): :func:`parse_topics` and
  :func:`merge_topics`.
- ``Sec-Cookie-Deprecation`` becomes ``device.ext.cdep`` when the account's
  ``privacy.privacysandbox.cookiedeprecation.enabled`` is on and the request has none:
  :func:`fill_cdep`. The same switch makes ``/cookie_sync`` set the ``receive-cookie-deprecation``
  cookie: :func:`receive_cookie_deprecation`.

Everything here runs only when a header and its account setting are both present.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any

from hbserver.auction.common.messages import Message
from hbserver.config import CookieDeprecation
from hbserver.numbers import INT64, int_or

MAX_TOPICS = 10  # PBS-Go ParseTopicsFromHeader: fields past the tenth are discarded with a warning
MAX_CDEP_LENGTH = 100  # bytes of Sec-Cookie-Deprecation that fit device.ext.cdep
TOPICS_WARNING = 10012  # PBS-Go errortypes.SecBrowsingTopicsWarningCode (a debug-only warning)
CDEP_LENGTH_WARNING = 10011  # PBS-Go errortypes.SecCookieDeprecationLenWarningCode
CDEP_LENGTH_TEXT = "request.device.ext.cdep must not exceed 100 characters"
SEC_BROWSING_TOPICS = "Sec-Browsing-Topics"
OBSERVE_BROWSING_TOPICS = "Observe-Browsing-Topics"  # answered "?1" to any request carrying topics
RECEIVE_COOKIE_DEPRECATION = "receive-cookie-deprecation"


@dataclass(frozen=True, slots=True)
class Topic:
    """One header field: its taxonomy as ``segtax`` (600 + version - 1), the model version, the ids."""

    segtax: int
    segclass: str
    segids: tuple[int, ...]


def _atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi``: an optional sign and ASCII digits within int64, else None."""
    return int_or(text, None, INT64)


def _topic(field: str) -> Topic | None:
    """``(1 2 3);v=chrome.1:1:2`` -> Topic(600, "2", (1, 2, 3)); None when the field is malformed."""
    parts = field.split(";")
    if len(parts) != 2:
        return None
    ids = parts[0].strip()
    if len(ids) < 3 or ids[0] != "(" or ids[-1] != ")":
        return None
    model = parts[1].split(":")
    if len(model) != 3:
        return None
    taxonomy = _atoi(model[1].strip())
    segclass = model[2].strip()
    if taxonomy is None or not 1 <= taxonomy <= 10 or not segclass:
        return None
    segids: list[int] = []
    for text in ids[1:-1].split():
        segid = _atoi(text)
        if segid is None or segid <= 0:
            return None
        segids.append(segid)
    return Topic(600 + taxonomy - 1, segclass, tuple(segids))


def parse_topics(header: str) -> tuple[list[Topic], list[str]]:
    """The topics of a ``Sec-Browsing-Topics`` value (at most ten) and a warning per field dropped."""
    topics: list[Topic] = []
    warnings: list[str] = []
    for raw in header.split(","):
        field = raw.strip()
        if not field or field.startswith("();p="):  # padding
            continue
        if len(topics) >= MAX_TOPICS:
            warnings.append(f"Invalid field in Sec-Browsing-Topics header: {field} discarded due to limit reached.")
            continue
        topic = _topic(field)
        if topic is None:
            warnings.append(f"Invalid field in Sec-Browsing-Topics header: {field}")
        else:
            topics.append(topic)
    return topics, warnings


def _data_taxonomy(ext: Any) -> tuple[int, str] | None:
    """A ``user.data`` entry's ``ext`` (segtax, segclass) as PBS-Go's Topic unmarshal reads it; None when
    it does not unmarshal or lacks either (Go matches the keys case-insensitively, the last one wins)."""
    if not isinstance(ext, dict):
        return None
    segtax: Any = 0
    segclass: Any = ""
    for key, value in ext.items():
        name = key.lower()
        if name == "segtax":
            segtax = value
        elif name == "segclass":
            segclass = value
        elif name == "segids" and value is not None and (
            not isinstance(value, list) or not all(type(v) is int for v in value)
        ):
            return None
    if segtax is None:
        segtax = 0
    if segclass is None:
        segclass = ""
    if type(segtax) is not int or not isinstance(segclass, str):
        return None
    return (segtax, segclass) if segtax and segclass else None


def merge_topics(data: list[Any], topics: list[Topic], domain: str) -> list[Any]:
    """``user.data`` with the topics' segment ids (PBS-Go ``UpdateUserDataWithTopics``): ids go to
    the entry named ``domain`` with the same segtax and segclass (those it has are not repeated),
    the rest to new entries ``{"name": domain, "segment": [...], "ext": {"segtax", "segclass"}}``.
    Returns a new list; entries changed are copies."""
    pending: dict[tuple[int, str], dict[int, None]] = {}
    for topic in topics:
        pending.setdefault((topic.segtax, topic.segclass), {}).update(dict.fromkeys(topic.segids))
    out = list(data)
    for index, entry in enumerate(out):
        if not isinstance(entry, dict) or entry.get("name") != domain:
            continue
        key = _data_taxonomy(entry.get("ext"))
        ids = pending.pop(key, None) if key is not None else None
        if ids is None:
            continue
        segments = entry.get("segment")
        segments = list(segments) if isinstance(segments, list) else []
        for segment in segments:
            text = segment.get("id") if isinstance(segment, dict) else None
            segid = _atoi(text) if isinstance(text, str) else None
            if segid is not None:
                ids.pop(segid, None)
        if ids:
            out[index] = {**entry, "segment": segments + [{"id": str(segid)} for segid in ids]}
    for (segtax, segclass), ids in pending.items():
        if ids:
            out.append({
                "name": domain,
                "segment": [{"id": str(segid)} for segid in ids],
                "ext": {"segtax": segtax, "segclass": segclass},
            })
    return out


def apply_topics(request: dict[str, Any], header: str, domain: str) -> list[Message]:
    """PBS-Go ``setSecBrowsingTopicsImplicitly`` on our own top-level copy of ``request`` (``user`` is
    replaced, never changed in place); returns its warnings (shown only with debug)."""
    topics, texts = parse_topics(header)
    if topics:
        user = request.get("user")
        user = dict(user) if isinstance(user, dict) else {}
        data = user.get("data")
        user["data"] = merge_topics(data if isinstance(data, list) else [], topics, domain)
        request["user"] = user
    return [Message(TOPICS_WARNING, text) for text in texts]


def fill_cdep(request: dict[str, Any], header: str) -> Message | None:
    """PBS-Go ``validateOrFillCookieDeprecation`` (the account switch checked by the caller):
    ``device.ext.cdep`` from the header unless the request has one; a warning for a value over 100 bytes."""
    device = request.get("device")
    ext = device.get("ext") if isinstance(device, dict) else None
    if isinstance(ext, dict) and ext.get("cdep"):
        return None
    if len(header.encode("utf-8", "surrogateescape")) > MAX_CDEP_LENGTH:
        return Message(CDEP_LENGTH_WARNING, CDEP_LENGTH_TEXT)
    device = dict(device) if isinstance(device, dict) else {}
    device["ext"] = {**ext, "cdep": header} if isinstance(ext, dict) else {"cdep": header}
    request["device"] = device
    return None


def receive_cookie_deprecation(
    has_cookie: bool, settings: CookieDeprecation, now: float | None = None
) -> str | None:
    """The ``Set-Cookie`` value PBS-Go's ``/cookie_sync`` adds when the account's cookie deprecation is
    on and the browser has no ``receive-cookie-deprecation`` cookie yet; None otherwise."""
    if has_cookie or not settings.enabled:
        return None
    expires = formatdate((time.time() if now is None else now) + settings.ttl_seconds, usegmt=True)
    return (
        f"{RECEIVE_COOKIE_DEPRECATION}=1; Path=/; Expires={expires}; HttpOnly; Secure; SameSite=None; Partitioned;"
    )
