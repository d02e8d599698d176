"""hbserver.web.listener: connections taken from the accept queue in batches, not one per loop turn."""

from __future__ import annotations

import asyncio
import errno
import socket
import time

import pytest

from hbserver.web import listener
from hbserver.web.listener import ACCEPT_BATCH, BatchListener, listening_sockets


class _Counting(asyncio.Protocol):
    made: list[_Counting] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        _Counting.made.append(self)
        self.transport = transport


def _clients(port: int, count: int) -> list[socket.socket]:
    """``count`` connections the kernel completes into the accept queue (nobody accepts yet)."""
    clients = []
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port))
        clients.append(client)
    return clients


async def test_a_queue_of_connections_is_taken_in_one_turn():
    _Counting.made = []
    sockets = listening_sockets("127.0.0.1", 0, 1024, reuse_port=False)
    server = BatchListener(asyncio.get_running_loop(), sockets, _Counting)
    clients = _clients(sockets[0].getsockname()[1], ACCEPT_BATCH + 44)
    try:
        time.sleep(0.05)  # the loop busy while they queue, as under load
        for _ in range(6):  # accepted in the first readiness (a batch) and the next; connection_made a turn later
            await asyncio.sleep(0)
        assert len(_Counting.made) == ACCEPT_BATCH + 44
    finally:
        for client in clients:
            client.close()
        server.close()
        await server.wait_closed()
    assert all(sock.fileno() == -1 for sock in sockets)


async def test_a_full_file_table_pauses_accepting_then_resumes(monkeypatch):
    _Counting.made = []
    monkeypatch.setattr(listener, "PAUSE_ON_FD_LIMIT_SECONDS", 0.05)
    sockets = listening_sockets("127.0.0.1", 0, 16, reuse_port=False)
    calls = []

    class Full(socket.socket):
        def accept(self):  # type: ignore[override]
            calls.append(1)
            if len(calls) == 1:
                raise OSError(errno.EMFILE, "Too many open files")
            return super().accept()

    full = Full(fileno=sockets[0].detach())
    full.setblocking(False)
    server = BatchListener(asyncio.get_running_loop(), [full], _Counting)
    client = socket.create_connection(("127.0.0.1", full.getsockname()[1]))
    try:
        for _ in range(5):
            await asyncio.sleep(0)
        assert calls == [1] and not _Counting.made  # paused: not called again while readable
        await asyncio.sleep(0.1)
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(_Counting.made) == 1
    finally:
        client.close()
        server.close()


def test_listening_sockets_refuse_a_port_in_use_and_leave_nothing_open():
    first = listening_sockets("127.0.0.1", 0, 8, reuse_port=False)
    port = first[0].getsockname()[1]
    try:
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", port, 8, reuse_port=False)
        shared = listening_sockets("127.0.0.1", 0, 8, reuse_port=True)
        again = listening_sockets("127.0.0.1", shared[0].getsockname()[1], 8, reuse_port=True)  # SO_REUSEPORT
        assert again[0].getsockname() == shared[0].getsockname()
        for sock in (*shared, *again):
            sock.close()
    finally:
        for sock in first:
            sock.close()
