"""The frames a worker exchanges with the owner of a cache shard over its Unix socket (see :mod:`.sharded`).

Every frame is a little-endian ``u32`` length (of what follows it) and a ``u8`` code, then a body:

- request ``GET``: the key (UTF-8);
- request ``PUT``: ``u16`` item count, then per item ``u32`` TTL seconds, ``u16`` key length,
  ``u32`` value length, the key and the stored value (Prebid Cache's form: ``xml…``/``json…``);
- answer ``OK``: for a get the stored value, for a put one byte per item (1 written, 0 the key
  existed); ``MISS``: a get found nothing; ``ERROR``: a UTF-8 message clients may read.

The owner answers the requests of one connection in order, so a client matches answers to
requests by position (pipelining, as Redis clients do): no request ids.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from hbserver.stores.cache.base import CacheItem, CacheStoreError

HEADER = struct.Struct("<IB")  # length of code + body, code
ITEM = struct.Struct("<IHI")  # ttl seconds, key length, value length
COUNT = struct.Struct("<H")

GET = 1
PUT = 2
OK = 0
MISS = 1
ERROR = 2

MAX_ITEMS = 0xFFFF
MAX_KEY_BYTES = 0xFFFF
MAX_TTL = 0xFFFFFFFF
# Added to the shard's bound for the largest frame its owner reads: a put of one item as large as
# the whole shard still fits, with its framing.
FRAME_SLACK_BYTES = 1 << 20
_TYPE_PREFIX = {"xml": b"xml", "json": b"json"}


def frame(code: int, body: bytes) -> bytes:
    return HEADER.pack(len(body) + 1, code) + body


def get_request(key: str) -> bytes:
    return frame(GET, key.encode())


def put_request(keys: Sequence[str], items: Sequence[CacheItem]) -> bytes:
    """One PUT frame; raises CacheStoreError for what the format cannot carry."""
    if len(items) > MAX_ITEMS:
        raise CacheStoreError(f"a put of {len(items)} items exceeds the store's {MAX_ITEMS}")
    parts = [b"", COUNT.pack(len(items))]
    size = 1 + COUNT.size  # the code, the count
    for key, item in zip(keys, items, strict=True):
        raw_key = key.encode()
        if len(raw_key) > MAX_KEY_BYTES:
            raise CacheStoreError(f"key of {len(raw_key)} bytes exceeds the store's {MAX_KEY_BYTES}")
        prefix = _TYPE_PREFIX[item.type]
        payload = item.payload
        value_length = len(prefix) + len(payload)
        ttl = item.ttl_seconds
        if not 0 <= ttl <= MAX_TTL:
            ttl = 0 if ttl < 0 else MAX_TTL
        parts += (ITEM.pack(ttl, len(raw_key), value_length), raw_key, prefix, payload)
        size += ITEM.size + len(raw_key) + value_length
    parts[0] = HEADER.pack(size, PUT)
    return b"".join(parts)


def parse_put(body: memoryview) -> list[tuple[str, int, bytes]]:
    """A PUT body's items as (key, TTL seconds, stored value); ValueError when it is malformed."""
    (count,) = COUNT.unpack_from(body, 0)
    at = COUNT.size
    entries = []
    for _ in range(count):
        ttl, key_length, value_length = ITEM.unpack_from(body, at)
        at += ITEM.size
        key_end = at + key_length
        end = key_end + value_length
        if end > len(body):
            raise ValueError("item runs past the frame")
        entries.append((str(body[at:key_end], "utf-8"), ttl, bytes(body[key_end:end])))
        at = end
    if at != len(body):
        raise ValueError("bytes after the last item")
    return entries
