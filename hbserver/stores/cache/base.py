"""What every cache store shares: the item written, the item read, the errors.

Stored values keep Prebid Cache's (PBC-Go's) form, the type name followed by the payload
(``xml<VAST…>``, ``json{…}``), so a Redis filled by hbserver reads the same as one filled by
PBC-Go without compression. Keys are UUIDv4 strings unless the caller gives its own key, which is
written create-only: an existing key is never overwritten (its slot in the answer is ``""``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

CacheType = Literal["xml", "json"]


_TYPE_PREFIX: dict[str, bytes] = {"xml": b"xml", "json": b"json"}


@dataclass(slots=True)
class CacheItem:
    """One value to store: ``payload`` is the XML text (UTF-8) or the JSON text of the value.

    Not frozen: auctions make several per request, and a frozen dataclass costs twice as much to build.
    """

    type: CacheType
    payload: bytes
    ttl_seconds: int
    key: str = ""  # a caller's own key (create-only); empty = a fresh UUID

    def stored(self) -> bytes:
        return _TYPE_PREFIX[self.type] + self.payload


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


def stored_value(raw: bytes) -> CachedValue:
    """What a store answers for a value it holds; raises CorruptValue (Prebid Cache's text) for one
    that carries no known type."""
    parsed = parse_stored(raw)
    if parsed is None:
        raise CorruptValue("Cache data was corrupted. Cannot determine type.")
    return parsed


class CacheStoreError(Exception):
    """The store could not do what was asked. The message says why and reaches error texts sent
    to clients, so it never names a host, a port or a URL; ``detail`` (which may) is logged only."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class CorruptValue(CacheStoreError):
    """A stored value without a known type prefix."""


class CacheStore(Protocol):
    """A place for cached items. ``name`` labels metrics (memory, redis, remote)."""

    name: str
    in_process: bool  # answers without I/O (no deadline needed)

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        """Store every item in one round trip; the key of each, in order (``""`` = key existed)."""
        ...

    async def get(self, key: str) -> CachedValue | None:
        """The live value under ``key``, else None; raises CorruptValue for an untyped value."""
        ...

    async def close(self) -> None: ...
