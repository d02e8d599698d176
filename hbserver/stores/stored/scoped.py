"""Per-account stored ids (PBS-Java): the same stored request or imp id may be stored once per account.

A backend that knows accounts answers an id with :class:`Variants` (each stored item with its account,
None for an item of no account) instead of bytes; the lookup picks one for the requesting account
with PBS-Java's ``StoredItemResolver`` rules:

- one item: taken when the request names no account, the item has none, or they are the same;
  otherwise the id is not found for that account;
- several items: the request must name an account, and the item of that account is taken; there
  is no fallback to the item of no account among several (PBS-Java's rule).

The error texts are PBS-Java's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hbserver.stores.stored.base import Kind

# The kinds an account may scope (PBS-Java's stored requests and imps).
SCOPED_KINDS: tuple[Kind, ...] = ("requests", "imps")
# PBS-Java's type words in its texts ("No stored request found for id: ...").
_TYPES: dict[Kind, str] = {"requests": "stored request", "imps": "stored imp"}


@dataclass(frozen=True, slots=True)
class Variants:
    """The items stored under one id, each with its account (None: of no account)."""

    items: tuple[tuple[str | None, bytes], ...]


def gather(rows: Iterable[tuple[str, str | None, bytes]]) -> dict[str, bytes | Variants]:
    """Rows ``(id, account, data)`` of a database as a backend answers them: an id stored once with no
    account is its bytes (as before accounts), any other its :class:`Variants` (no account first).

    An id given twice for one account (a host's query joining two tables) is one item, the last row's
    (PBS-Go's rule for its rows; PBS-Java's set keeps both when their data differ, and then picks either).
    """
    items: dict[str, dict[str | None, bytes]] = {}
    for item_id, account, data in rows:
        items.setdefault(item_id, {})[account] = data
    answer: dict[str, bytes | Variants] = {}
    for item_id, found in items.items():
        ordered = sorted(found.items(), key=lambda item: (item[0] is not None, item[0] or ""))
        answer[item_id] = ordered[0][1] if len(ordered) == 1 and ordered[0][0] is None else Variants(tuple(ordered))
    return answer


def resolve(kind: Kind, account: str, item_id: str, variants: Variants) -> bytes | str:
    """The item ``account`` gets, or PBS-Java's error text (``account`` "" = the request names none)."""
    what = _TYPES.get(kind, "stored item")
    items = variants.items
    if not items:
        return f"No {what} found for id: {item_id}"
    if len(items) > 1:
        if not account:
            return f"Multiple {what}s found for id: {item_id} but no account was specified"
        for owner, data in items:
            if owner == account:
                return data
        return f"No {what} found among multiple id: {item_id} for account: {account}"
    owner, data = items[0]
    if not account.strip() or owner is None or owner == account:
        return data
    return f"No {what} found for id: {item_id} for account: {account}"
