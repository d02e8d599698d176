"""What every cache store shares: the item written, the item read, the errors.

Stored values keep Prebid Cache's (PBC-Go's) form, the type name followed by the payload
(``xml<VAST…>``, ``json{…}``), so a Redis filled by hbserver reads the same as one filled by
PBC-Go without compression. Keys are UUIDv4 strings unless the caller gives its own key, which is
written create-only: an existing key is never overwritten (its slot in the answer is ``""``).
"""

from __future__ import annotations

import binascii
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


def stored_value(raw: bytes) -> CachedValue:
    """What a store answers for a value it holds; raises CorruptValue (Prebid Cache's text) for one
    that carries no known type."""
    parsed = parse_stored(raw)
    if parsed is None:
        raise CorruptValue("Cache data was corrupted. Cannot determine type.")
    return parsed


_KEYS_PER_BATCH = 64
_keys: list[str] = []


def _forget_keys() -> None:
    """A forked worker must not reuse its parent's random keys (same keys in two processes)."""
    _keys.clear()


os.register_at_fork(after_in_child=_forget_keys)


# Per byte value: the same byte with the UUID version 4 nibble, and with the RFC 4122 variant bits.
_VERSION_4 = bytes((b & 0x0F) | 0x40 for b in range(256))
_VARIANT_RFC4122 = bytes((b & 0x3F) | 0x80 for b in range(256))


def _refill() -> None:
    """Format a batch of version 4 UUIDs from one read of kernel randomness, in bulk C operations.

    The batch is hexlified with a dash every two bytes (8 groups of 4 digits per key, 40 characters
    with the dash before the next key); deleting the three dashes a UUID does not have leaves
    ``8-4-4-4-12`` keys of 36 characters, each followed by a dash.
    """
    raw = bytearray(os.urandom(16 * _KEYS_PER_BATCH))
    raw[6::16] = raw[6::16].translate(_VERSION_4)
    raw[8::16] = raw[8::16].translate(_VARIANT_RFC4122)
    text = bytearray(binascii.hexlify(raw, b"-", 2))
    del text[34::40]  # between the 7th and 8th group
    del text[29::39]  # between the 6th and 7th
    del text[4::38]  # between the 1st and 2nd
    keys = text.decode("ascii")
    _keys.extend([keys[at:at + 36] for at in range(0, 37 * _KEYS_PER_BATCH, 37)])


def new_key() -> str:
    """A random (version 4) UUID string, like ``str(uuid.uuid4())`` at a fraction of its cost.

    ``uuid4()`` makes one ``os.urandom`` system call and a ``UUID`` object per key; here the
    same kernel randomness is read for 64 keys at a time and formatted directly.
    """
    if not _keys:
        _refill()
    return _keys.pop()


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
