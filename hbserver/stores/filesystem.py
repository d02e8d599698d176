"""Limits for filesystem stored data (PBS-Go layout): which ids may be looked up, how big a file may be.

The reading itself is :class:`hbserver.stores.stored.filesystem.FilesystemBackend`.
"""

from __future__ import annotations

# Ids that could step outside the directory, or are absurdly long, are never looked up.
MAX_ID_LENGTH = 200
MAX_FILE_BYTES = 1 << 20


def safe_id(value: str) -> bool:
    return (
        0 < len(value) <= MAX_ID_LENGTH
        and value not in (".", "..")
        and "/" not in value
        and "\\" not in value
        and "\x00" not in value
    )
