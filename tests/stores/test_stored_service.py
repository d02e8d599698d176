"""The StoredData service: backend order and fall-through, the LRU (hits, misses, expiry, the short
memory of unknown ids), single flight, deadlines, invalidation and listeners."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData
from hbserver.stores.stored.base import BackendError, Failure
from hbserver.stores.stored.cache import MISSING_TTL_SECONDS
from tests.stores.conftest import RecordingBackend, sample


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def service(*backends: RecordingBackend, metrics: Metrics | None = None, **options: Any) -> StoredData:
    """StoredData over test backends in the filesystem, database and http slots, in that order."""
    slots = dict(zip(("filesystem", "database", "http"), backends, strict=False))
    return StoredData(metrics or Metrics(), **slots, **options)  # type: ignore[arg-type]


async def test_later_backends_are_asked_only_for_what_earlier_ones_lacked():
    first = RecordingBackend("filesystem", {"requests": {"a": b"1"}, "imps": {"i": b"fi"}})
    second = RecordingBackend("database", {"requests": {"a": b"2", "b": b"2"}})
    third = RecordingBackend("http", {"requests": {"b": b"3", "c": b"3"}, "imps": {"j": b"hj"}})
    stored = service(first, second, third)
    requests, imps, errors = await stored.fetch_requests(["a", "b", "c", "d"], ["i", "j"], 1)
    assert requests == {"a": b"1", "b": b"2", "c": b"3"}
    assert imps == {"i": b"fi", "j": b"hj"}
    assert errors == ['Stored Request with ID="d" not found.']
    assert first.calls == [{"requests": ["a", "b", "c", "d"], "imps": ["i", "j"]}]
    assert second.calls == [{"requests": ["b", "c", "d"], "imps": ["j"]}]
    assert third.calls == [{"requests": ["c", "d"], "imps": ["j"]}]


async def test_a_failing_backend_falls_through_and_its_failure_is_reported_only_when_nobody_has_the_id():
    metrics = Metrics()
    down = RecordingBackend("database", error=BackendError("database unavailable: refused", "unavailable"))
    http = RecordingBackend("http", {"requests": {"a": b"{}"}})
    stored = service(RecordingBackend("filesystem"), down, http, metrics=metrics)
    requests, _imps, errors = await stored.fetch_requests(["a", "b"], [], 1)
    assert requests == {"a": b"{}"}
    assert errors == ['Stored Request with ID="b" could not be fetched: database unavailable: refused']
    assert sample(metrics, "stored_data_fetch_errors_total", backend="database", reason="unavailable") == 1
    # b's failure is not remembered as "not found": the next call asks again
    await stored.fetch_requests(["b"], [], 1)
    assert down.calls[-1] == {"requests": ["b"]}


async def test_per_id_failures_of_several_backends_are_joined():
    fs = RecordingBackend("filesystem", {"imps": {"x": Failure("x.json: too large", "too_large")}})
    status = Failure("Error fetching Stored Requests via HTTP. Response code was 502", "status")
    http = RecordingBackend("http", {"imps": {"x": status}})
    stored = service(fs, http)
    _requests, _imps, errors = await stored.fetch_requests([], ["x"], 1)
    assert errors == [
        'Stored Imp with ID="x" could not be fetched: x.json: too large; '
        "Error fetching Stored Requests via HTTP. Response code was 502"
    ]


async def test_a_bug_in_a_backend_is_a_failure_of_its_ids_not_an_exception():
    class Broken(RecordingBackend):
        async def fetch(self, wanted):  # type: ignore[override]
            raise KeyError("bug")

    stored = service(Broken("filesystem"), RecordingBackend("database", {"requests": {"b": b"{}"}}))
    requests, _imps, errors = await stored.fetch_requests(["a", "b"], [], 1)
    assert requests == {"b": b"{}"}
    assert errors == ['Stored Request with ID="a" could not be fetched: filesystem: internal error']  # detail: the log


async def test_no_backend_means_not_found():
    stored = StoredData(Metrics())
    assert await stored.fetch_responses(["r"], 1) == ({}, ['Stored Response with ID="r" not found.'])
    assert await stored.fetch_account("a") is None


# -- the cache ------------------------------------------------------------------------------------


async def test_cache_hits_and_misses_are_counted_per_kind():
    metrics = Metrics()
    backend = RecordingBackend("filesystem", {"requests": {"a": b"A"}, "imps": {"i": b"I"}, "responses": {"r": b"R"}})
    stored = service(backend, metrics=metrics)
    for _ in range(3):
        assert (await stored.fetch_requests(["a"], ["i"], 1))[:2] == ({"a": b"A"}, {"i": b"I"})
        assert (await stored.fetch_responses(["r"], 1))[0] == {"r": b"R"}
    await stored.fetch_amp_request("a", 1)
    assert len(backend.calls) == 3  # requests+imps once, responses once, AMP (its own cache) once
    for kind, hits, misses in [("request", 2, 1), ("imp", 2, 1), ("response", 2, 1), ("amp_request", 0, 1)]:
        assert sample(metrics, "stored_data_cache_performance_total", kind=kind, cache_result="hit") == hits, kind
        assert sample(metrics, "stored_data_cache_performance_total", kind=kind, cache_result="miss") == misses, kind


async def test_cached_amp_request_answers_only_from_the_cache_and_counts_its_hits():
    metrics = Metrics()
    backend = RecordingBackend("filesystem", {"requests": {"a": b"A"}})
    stored = service(backend, metrics=metrics)
    assert stored.cached_amp_request("a") is None  # not cached yet: no hit, no miss, no backend call
    assert backend.calls == []
    assert await stored.fetch_amp_request("a", 1) == (b"A", [])
    assert (await stored.fetch_amp_request("unknown", 1))[0] is None
    assert [stored.cached_amp_request("a"), stored.cached_amp_request("unknown")] == [b"A", None]  # MISSING: ask
    assert stored.cached_amp_request("b") is None
    hits = sample(metrics, "stored_data_cache_performance_total", kind="amp_request", cache_result="hit")
    misses = sample(metrics, "stored_data_cache_performance_total", kind="amp_request", cache_result="miss")
    assert (hits, misses) == (1, 2)
    assert StoredData(Metrics(), cache_size=None).cached_amp_request("a") is None  # no cache configured


async def test_cache_hit_does_not_wait():
    backend = RecordingBackend("filesystem", {"requests": {"a": b"A"}})
    stored = service(backend)
    await stored.fetch_requests(["a"], [], 1)
    coroutine = stored.fetch_requests(["a"], [], 0)
    with pytest.raises(StopIteration) as done:  # completes on its first step: no await at all
        coroutine.send(None)
    assert done.value.value == ({"a": b"A"}, {}, [])


@pytest.mark.parametrize(
    ("ttl", "age", "asked_again"),
    [(300, 299, False), (300, 301, True), (0, 10**6, False)],  # 0 = until evicted
)
async def test_documents_expire_after_ttl(ttl, age, asked_again):
    clock = Clock()
    backend = RecordingBackend("filesystem", {"requests": {"a": b"A"}})
    stored = service(backend, cache_ttl_seconds=ttl, clock=clock)
    await stored.fetch_requests(["a"], [], 1)
    clock.now += age
    await stored.fetch_requests(["a"], [], 1)
    assert len(backend.calls) == (2 if asked_again else 1)


@pytest.mark.parametrize(
    ("ttl", "age", "asked_again"),
    [
        (300, MISSING_TTL_SECONDS - 0.1, False),
        (300, MISSING_TTL_SECONDS + 0.1, True),
        (0, MISSING_TTL_SECONDS + 0.1, True),  # "forever" applies to documents, not to unknown ids
        (3, 2.9, False),
        (3, 3.1, True),  # never longer than ttl_seconds
    ],
)
async def test_unknown_ids_are_remembered_briefly(ttl, age, asked_again):
    clock = Clock()
    backend = RecordingBackend("filesystem")
    stored = service(backend, cache_ttl_seconds=ttl, clock=clock)
    assert (await stored.fetch_requests(["x"], [], 1))[2] == ['Stored Request with ID="x" not found.']
    clock.now += age
    assert (await stored.fetch_requests(["x"], [], 1))[2] == ['Stored Request with ID="x" not found.']
    assert len(backend.calls) == (2 if asked_again else 1)


async def test_cache_size_is_per_kind_and_unknown_ids_do_not_evict_documents():
    data = {"requests": {f"r{n}": b"R" for n in range(3)}, "imps": {f"i{n}": b"I" for n in range(2)}}
    backend = RecordingBackend("filesystem", data)
    stored = service(backend, cache_size=2)
    await stored.fetch_requests(["r0", "r1"], ["i0", "i1"], 1)
    await stored.fetch_requests(["u1", "u2", "u3"], [], 1)  # unknown ids: their own LRU
    calls = len(backend.calls)
    await stored.fetch_requests(["r0", "r1"], ["i0", "i1"], 1)
    assert len(backend.calls) == calls
    await stored.fetch_requests(["r2"], [], 1)  # evicts r0, the least recently used request
    await stored.fetch_requests(["r1"], ["i0", "i1"], 1)
    assert len(backend.calls) == calls + 1
    await stored.fetch_requests(["r0"], [], 1)
    assert backend.calls[-1] == {"requests": ["r0"]}


async def test_type_none_asks_the_backends_every_time():
    metrics = Metrics()
    backend = RecordingBackend("filesystem", {"requests": {"a": b"A"}})
    stored = service(backend, metrics=metrics, cache_size=None)
    for _ in range(3):
        await stored.fetch_requests(["a", "x"], [], 1)
    assert len(backend.calls) == 3
    assert sample(metrics, "stored_data_cache_performance_total", kind="request", cache_result="miss") == 6


# -- single flight and deadlines -----------------------------------------------------------------


async def test_concurrent_misses_for_one_id_cause_one_backend_fetch():
    backend = RecordingBackend("database", {"requests": {"a": b"A", "b": b"B"}}, delay=0.05)
    stored = service(backend)
    answers = await asyncio.gather(
        *(stored.fetch_requests(["a"], [], 1) for _ in range(50)),
        stored.fetch_requests(["a", "b"], [], 1),
        stored.fetch_amp_request("a", 1),  # another namespace: its own flight
    )
    assert all(answer[0]["a"] == b"A" for answer in answers[:51])
    assert answers[50][0] == {"a": b"A", "b": b"B"}
    assert answers[51] == (b"A", [])
    assert backend.calls == [{"requests": ["a"]}, {"requests": ["b"]}, {"requests": ["a"]}]


async def test_concurrent_account_fetches_share_one_flight():
    backend = RecordingBackend("database", {"accounts": {"acc": b"{}"}}, delay=0.05)
    stored = service(backend)
    assert await asyncio.gather(*(stored.fetch_account("acc") for _ in range(10))) == [b"{}"] * 10
    assert len(backend.calls) == 1
    await stored.fetch_account("acc")  # accounts are cached by AccountStore, not here
    assert len(backend.calls) == 2


@pytest.mark.parametrize("timeout_s", [0.05, 0.0, -1.0])
async def test_the_callers_deadline_is_enforced_and_the_batch_still_fills_the_cache(timeout_s):
    metrics = Metrics()
    backend = RecordingBackend("http", {"requests": {"a": b"A"}}, delay=0.3)
    stored = service(backend, metrics=metrics)
    started = time.monotonic()
    requests, _imps, errors = await stored.fetch_requests(["a"], [], timeout_s)
    assert time.monotonic() - started < 0.2
    assert requests == {}
    ms = max(timeout_s, 0) * 1000
    assert errors == [f'Stored Request with ID="a" could not be fetched: timed out after {ms:.0f} ms']
    assert sample(metrics, "stored_data_fetch_errors_total", backend="all", reason="deadline") == 1
    await asyncio.sleep(0.4)
    assert await stored.fetch_requests(["a"], [], 0) == ({"a": b"A"}, {}, [])
    assert len(backend.calls) == 1


async def test_a_batch_is_bounded_by_the_flight_timeout():
    metrics = Metrics()
    slow = RecordingBackend("database", {"requests": {"a": b"A"}}, delay=5)
    stored = service(slow, metrics=metrics, flight_timeout=0.1)
    first = asyncio.ensure_future(stored.fetch_requests(["a"], [], 0.05))  # starts a batch of at most 100 ms
    await asyncio.sleep(0)
    started = time.monotonic()
    _requests, _imps, errors = await stored.fetch_requests(["a"], [], 2)  # joins it
    assert time.monotonic() - started < 0.5
    assert errors == ['Stored Request with ID="a" could not be fetched: database timed out after 100 ms']
    assert (await first)[2] == ['Stored Request with ID="a" could not be fetched: timed out after 50 ms']
    assert sample(metrics, "stored_data_fetch_errors_total", backend="database", reason="timeout") == 1
    assert len(slow.calls) == 1 and not stored._flights


async def test_a_longer_deadline_than_the_flight_timeout_is_honoured():
    backend = RecordingBackend("http", {"requests": {"a": b"A"}}, delay=0.2)
    stored = service(backend, flight_timeout=0.05)
    assert await stored.fetch_requests(["a"], [], 1) == ({"a": b"A"}, {}, [])


# -- invalidation ---------------------------------------------------------------------------------


async def test_invalidate_drops_cached_ids_and_notifies_listeners():
    backend = RecordingBackend("database", {"requests": {"a": b"A"}, "accounts": {"acc": b"{}"}})
    stored = service(backend)
    seen: list[tuple[str, str]] = []
    stored.add_listener("accounts", lambda account_id: seen.append(("accounts", account_id)))
    stored.add_listener("requests", lambda item_id: seen.append(("requests", item_id)))
    stored.add_listener("requests", lambda item_id: 1 / 0)  # a broken listener does not stop the others
    await stored.fetch_requests(["a", "x"], [], 1)
    await stored.fetch_amp_request("a", 1)
    backend.data = {"requests": {"a": b"A2", "x": b"X"}}
    stored.invalidate("requests", ["a", "x"])
    stored.invalidate("accounts", ["acc"])
    assert await stored.fetch_requests(["a", "x"], [], 1) == ({"a": b"A2", "x": b"X"}, {}, [])
    assert await stored.fetch_amp_request("a", 1) == (b"A2", [])
    assert seen == [("requests", "a"), ("requests", "x"), ("accounts", "acc")]


async def test_a_batch_that_read_before_an_invalidation_is_not_cached():
    backend = RecordingBackend("database", {"requests": {"a": b"old"}}, delay=0.1)
    stored = service(backend)
    fetching = asyncio.ensure_future(stored.fetch_requests(["a"], [], 1))
    await asyncio.sleep(0.02)
    backend.data = {"requests": {"a": b"new"}}
    stored.invalidate("requests", ["a"])
    assert (await fetching)[0] == {"a": b"old"}  # its callers get what it read
    backend.delay = 0
    assert (await stored.fetch_requests(["a"], [], 1))[0] == {"a": b"new"}  # but it was not cached


async def test_close_cancels_batches_under_way():
    backend = RecordingBackend("http", {"requests": {"a": b"A"}}, delay=10)
    stored = service(backend)
    await stored.fetch_requests(["a"], [], 0.01)
    await stored.close()
    assert not stored._flights
