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

from dataclasses import dataclass

from hbserver.stores.stored.base import Kind

# PBS-Java's type words in its texts ("No stored request found for id: ...").
_TYPES: dict[Kind, str] = {"requests": "stored request", "imps": "stored imp"}


@dataclass(frozen=True, slots=True)
class Variants:
    """The items stored under one id, each with its account (None: of no account)."""

    items: tuple[tuple[str | None, bytes], ...]


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
