"""What every cache store shares: the item written, the item read, the errors.

Stored values keep Prebid Cache's (PBC-Go's) form, the type name followed by the payload
(``xml<VAST…>``, ``json{…}``), so a Redis filled by hbserver reads the same as one filled by
PBC-Go without compression. Keys are UUIDv4 strings unless the caller gives its own key, which is
written create-only: an existing key is never overwritten (its slot in the answer is ``""``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

CacheType = Literal["xml", "json"]
CACHE_TYPES: tuple[CacheType, ...] = ("xml", "json")


@dataclass(frozen=True, slots=True)
class CacheItem:
    """One value to store: ``payload`` is the XML text (UTF-8) or the JSON text of the value."""

    type: CacheType
    payload: bytes
    ttl_seconds: int
    key: str = ""  # a caller's own key (create-only); empty = a fresh UUID

    def stored(self) -> bytes:
        return self.type.encode() + self.payload


@dataclass(frozen=True, slots=True)
class CachedValue:
    type: CacheType
    payload: bytes


def parse_stored(raw: bytes) -> CachedValue | None:
    """A stored value split into type and payload; None when it carries no known type."""
    if raw.startswith(b"xml"):
        return CachedValue("xml", raw[3:])
    if raw.startswith(b"json"):
        return CachedValue("json", raw[4:])
    return None


def new_key() -> str:
    return str(uuid.uuid4())


class CacheStoreError(Exception):
    """The store could not do what was asked; the message says why (it reaches error texts)."""


class CorruptValue(CacheStoreError):
    """A stored value without a known type prefix."""


class CacheStore(Protocol):
    """A place for cached items. ``name`` labels metrics (memory, redis, remote)."""

    name: str

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        """Store every item in one round trip; the key of each, in order (``""`` = key existed)."""
        ...

    async def get(self, key: str) -> CachedValue | None:
        """The live value under ``key``, else None; raises CorruptValue for an untyped value."""
        ...

    async def close(self) -> None: ...
