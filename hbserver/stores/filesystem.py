"""Filesystem stored data, PBS-Go layout: ``<directorypath>/accounts/<id>.json`` and friends."""

from __future__ import annotations

import asyncio
import os

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


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    if len(data) > MAX_FILE_BYTES:
        raise OSError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
    return data


class FilesystemFetcher:
    """Reads stored JSON documents on demand, off the event loop."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    async def fetch(self, kind: str, item_id: str) -> bytes | None:
        """The raw JSON of ``<kind>/<item_id>.json``, or None when there is no such file."""
        if not safe_id(item_id):
            return None
        path = os.path.join(self.directory, kind, item_id + ".json")
        return await asyncio.to_thread(_read, path)

    async def fetch_account(self, account_id: str) -> bytes | None:
        return await self.fetch("accounts", account_id)
