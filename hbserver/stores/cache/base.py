"""What every cache store shares: the item written, the item read, the errors.

Stored values keep Prebid Cache's (PBC-Go's) form, the type name followed by the payload
(``xml<VAST…>``, ``json{…}``), so a Redis filled by hbserver reads the same as one filled by
PBC-Go without compression. Keys are UUIDv4 strings unless the caller gives its own key, which is
written create-only: an existing key is never overwritten (its slot in the answer is ``""``).
"""

from __future__ import annotations

import os
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


_KEYS_PER_BATCH = 64
_keys: list[str] = []


def _forget_keys() -> None:
    """A forked worker must not reuse its parent's random keys (same keys in two processes)."""
    _keys.clear()


os.register_at_fork(after_in_child=_forget_keys)


def _refill() -> None:
    """Format a batch of version 4 UUIDs from one read of kernel randomness."""
    raw = os.urandom(16 * _KEYS_PER_BATCH)
    text = raw.hex()
    for at in range(0, 16 * _KEYS_PER_BATCH, 16):
        h = text[2 * at:2 * at + 32]
        variant = "89ab"[raw[at + 8] >> 6]  # RFC 4122 variant: the two top bits are 10
        _keys.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:32]}")


def new_key() -> str:
    """A random (version 4) UUID string, like ``str(uuid.uuid4())`` at a fraction of its cost.

    ``uuid4()`` makes one ``os.urandom`` system call and a ``UUID`` object per key; here the
    same kernel randomness is read for 64 keys at a time and formatted directly.
    """
    if not _keys:
        _refill()
    return _keys.pop()


class CacheStoreError(Exception):
    """The store could not do what was asked; the message says why (it reaches error texts)."""


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
