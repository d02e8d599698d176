"""Several ``uids`` cookies (PBS-Java's ``setuid.number-of-uid-cookies``): ``uids``, ``uids2`` … ``uidsN``.

Read back: :func:`hbserver.usersync.cookie.decode_parts`. Write (PBS-Java's ``splitUidsIntoCookies``):
expired uids are dropped, the rest are ordered priority keys first, then by expiry, oldest first (key
order breaks ties), and poured into ``uids``, ``uids2``, … in turn, each part within ``max_bytes``; a uid
that does not fit the part being filled starts the next one. What fits in no part is left out. Unlike
PBS-Java, a uid too large even for an empty part is left out alone (PBS-Java stops there and leaves
every later uid out too).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import orjson

from hbserver.usersync.cookie import (
    COOKIE_NAME,
    COOKIE_OVERHEAD_BYTES,
    UidEntry,
    UidsCookie,
    encode_cookie,
    html_escaped,
)

EMPTY_DOCUMENT_BYTES = len(b'{"tempUIDs":{}}')


def part_names(count: int) -> tuple[str, ...]:
    """``uids``, ``uids2``, … ``uids<count>`` (PBS-Java's names: the first has no number)."""
    return (COOKIE_NAME, *(f"{COOKIE_NAME}{i}" for i in range(2, count + 1)))


def parts_size(cookies: Mapping[str, str], names: tuple[str, ...]) -> int:
    """The bytes of every part's value the request carries, together."""
    return sum(len(cookies.get(name) or "") for name in names)


@dataclass
class Split:
    """The value of each part (``""``: no uids, the part is expired) and the uids left out."""

    values: list[str]
    too_large: list[str] = field(default_factory=list)  # a uid that fits no part even alone
    left_out: list[str] = field(default_factory=list)  # uids beyond the last part, in the order they came


def split_for_write(
    cookie: UidsCookie, names: tuple[str, ...], max_bytes: int, priority: Collection[str], now: datetime
) -> Split:
    """``cookie`` spread over the parts ``names`` (``max_bytes`` 0 = no limit: all in ``uids``)."""
    if cookie.optout:
        return Split([encode_cookie(UidsCookie(optout=True))] + [""] * (len(names) - 1))
    live = {key: entry for key, entry in cookie.uids.items() if now < entry.expires}
    order = sorted(live, key=lambda k: (k not in priority, live[k].expires, k))
    parts: list[dict[str, UidEntry]] = [{} for _ in names]
    split = Split([])
    index, size = 0, EMPTY_DOCUMENT_BYTES  # the part being filled and its JSON bytes so far
    for key in order:
        entry_bytes = _entry_bytes(key, live[key])
        while index < len(names):
            grown = size + entry_bytes + (1 if parts[index] else 0)  # a comma after the first entry
            if _fits(grown, names[index], max_bytes):
                parts[index][key] = live[key]
                size = grown
                break
            if not parts[index]:  # too large even for an empty part
                split.too_large.append(key)
                break
            index, size = index + 1, EMPTY_DOCUMENT_BYTES
        else:
            split.left_out.append(key)
    split.values = [encode_cookie(UidsCookie(part)) if part else "" for part in parts]
    return split


def measured_part_size(name: str, value: str) -> int:
    """A part as PBS-Go measures ``uids``: the value plus the name and attributes' 52 bytes."""
    return len(value) + COOKIE_OVERHEAD_BYTES + len(name) - len(COOKIE_NAME)


def _fits(json_bytes: int, name: str, max_bytes: int) -> bool:
    if max_bytes <= 0:
        return True
    base64_bytes = 4 * math.ceil(json_bytes / 3)
    return base64_bytes + COOKIE_OVERHEAD_BYTES + len(name) - len(COOKIE_NAME) <= max_bytes


def _entry_bytes(key: str, entry: UidEntry) -> int:
    """The bytes ``"key":{"uid":..,"expires":..}`` takes in the encoded document (escapes included)."""
    data = orjson.dumps({key: {"uid": entry.uid, "expires": entry.expires}}, option=orjson.OPT_UTC_Z)
    return len(html_escaped(data)) - 2  # without the braces around it
