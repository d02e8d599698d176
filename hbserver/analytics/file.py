"""The JSON Lines file module (``analytics.file.filename``): one object per line, UTF-8.

Each batch is one ``write()`` on an ``O_APPEND`` descriptor, so several workers appending to
the same file never interleave their lines. Writes run in a thread, off the event loop. When
the file is moved away (logrotate's default ``create`` mode), the next batch goes to a new file
under the configured name.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import orjson

from hbserver.analytics.buffered import DEFAULT_CAPACITY, BufferedModule
from hbserver.metrics import Metrics


class FileModule(BufferedModule):
    name = "file"
    component = "filelogger"  # PBS-Go's name for its file module (analytics/build/build.go)

    def __init__(self, filename: str, metrics: Metrics, capacity: int = DEFAULT_CAPACITY) -> None:
        super().__init__(metrics, capacity)
        self.filename = filename
        self._fd: int | None = None

    async def open(self) -> None:
        self._fd = self._open()

    def _open(self) -> int:
        return os.open(self.filename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def _reopen_if_moved(self) -> None:
        assert self._fd is not None
        try:
            current = os.stat(self.filename).st_ino
        except FileNotFoundError:
            current = None
        if current != os.fstat(self._fd).st_ino:
            fd = self._open()
            os.close(self._fd)
            self._fd = fd

    async def deliver(self, batch: list[dict[str, Any]]) -> None:
        await self._write_lines(b"".join([orjson.dumps(record) + b"\n" for record in batch]))

    async def _write_lines(self, data: bytes) -> None:
        await asyncio.to_thread(self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        self._reopen_if_moved()
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def shutdown(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
