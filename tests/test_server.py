"""The worker's garbage-collector settings (``tune_gc``), run in this process and undone after."""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from hbserver.server import GC_GEN0_THRESHOLD, tune_gc


@contextlib.contextmanager
def restored_gc() -> Iterator[None]:
    """Automatic collection off inside; thresholds, frozen objects and enabled state restored after."""
    thresholds = gc.get_threshold()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        if enabled:
            gc.enable()


@pytest.fixture
def gc_state() -> Iterator[None]:
    with restored_gc():
        yield


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_the_threshold_is_well_above_cpythons_default():
    assert GC_GEN0_THRESHOLD == 100_000


@pytest.mark.parametrize("before", [(700, 10, 10), (123, 7, 3), (50_000, 1, 99)])
def test_tune_gc_collects_then_freezes_and_raises_only_the_first_threshold(gc_state, before):
    gc.set_threshold(*before)
    # garbage made at start-up: a cycle only a collection frees
    a, b = Node(), Node()
    a.other, b.other = b, a
    garbage = weakref.ref(a)
    del a, b
    kept = [Node() for _ in range(3)]  # live start-up objects
    frozen_before = gc.get_freeze_count()
    assert garbage() is not None  # automatic collection is off: still waiting

    tune_gc()

    assert gc.get_threshold() == (GC_GEN0_THRESHOLD, before[1], before[2])
    assert garbage() is None  # collected before freezing, not kept for ever
    assert gc.get_freeze_count() > frozen_before
    tracked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
    assert not any(id(node) in tracked for node in kept)  # frozen: out of every later collection
    later = Node()
    assert id(later) in {id(o) for o in gc.get_objects(0)}  # what is made afterwards is collected as usual
    assert gc.isenabled() is False  # the collector's on/off switch is not tune_gc's business


def test_the_gc_state_is_restored_after_tune_gc():
    thresholds, enabled, frozen = gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()
    with restored_gc():
        tune_gc()
        assert gc.get_threshold()[0] == GC_GEN0_THRESHOLD and gc.get_freeze_count() > frozen
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == (thresholds, enabled, 0)


async def test_the_admin_port_listens_before_the_public_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the public port answers (a readiness probe, a test's wait), the admin port does too: a
    worker opens it first (before, a probe could see the public port up and the admin port refuse)."""
    from aiohttp import web

    from hbserver import server
    from hbserver.web.listener import BatchSite
    from tests.conftest import make_config
    from tests.e2e.helpers import free_port

    public, admin = free_port(), free_port()
    opened: list[int] = []
    for site in (BatchSite, web.TCPSite):
        original = site.start

        async def start(self: web.BaseSite, original: Any = original) -> None:
            await original(self)
            opened.append(self._port)  # type: ignore[attr-defined]

        monkeypatch.setattr(site, "start", start)
    monkeypatch.setattr(server, "_early_stop", True)  # stop as soon as both listen
    monkeypatch.setattr(server, "tune_gc", lambda: None)  # the test process's GC stays as it is
    config = make_config({"port": public, "admin": {"port": admin}, "shutdown_drain_seconds": 0})
    assert await server._serve(config) == 0
    assert opened == [admin, public]
