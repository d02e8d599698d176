"""OpenTelemetry tracing (issue 46 item 6): traceparent, sampling, the OTLP/HTTP JSON exporter against a
loopback receiver, an auction's spans end to end, and nothing at all when tracing is off."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.config import ConfigError, load_config
from hbserver.metrics import Metrics
from hbserver.web import tracing
from hbserver.web.client import SharedSession
from hbserver.web.keys import METRICS
from hbserver.web.otlp import OtlpExporter, build_tracer, encode
from hbserver.web.tracing import KIND_SERVER, STATUS_ERROR, Sampler, Span, Tracer, parse_traceparent
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import make_config

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1: keeps each POST /v1/traces body (JSON) and its headers."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.delay = 0.0
        app = web.Application()
        app.router.add_post("/v1/traces", self.handle)
        self.server = TestServer(app, host="127.0.0.1")

    async def handle(self, request: web.Request) -> web.Response:
        self.headers.append(dict(request.headers))
        self.bodies.append(await request.json())
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.json_response({}, status=self.status)

    @property
    def url(self) -> str:
        return str(self.server.make_url("/v1/traces"))

    def spans(self) -> list[dict[str, Any]]:
        return [
            span
            for body in self.bodies
            for resource in body["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        ]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    await r.server.start_server()
    yield r
    await r.server.close()


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def count(metrics: Metrics, outcome: str) -> float:
    metrics.flush()
    return metrics.registry.get_sample_value("hbserver_tracing_spans_total", {"outcome": outcome}) or 0.0


# --- traceparent and sampling -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (f"00-{TRACE}-{PARENT}-01", (int(TRACE, 16), int(PARENT, 16), True)),
        (f"00-{TRACE}-{PARENT}-00", (int(TRACE, 16), int(PARENT, 16), False)),
        (f" 00-{TRACE}-{PARENT}-03 ", (int(TRACE, 16), int(PARENT, 16), True)),  # other flags ignored
        (f"01-{TRACE}-{PARENT}-01-later-fields", (int(TRACE, 16), int(PARENT, 16), True)),  # a later version
        (f"00-{TRACE}-{PARENT}-01-extra", None),  # version 00 has exactly four fields
        (f"ff-{TRACE}-{PARENT}-01", None),
        (f"00-{'0' * 32}-{PARENT}-01", None),
        (f"00-{TRACE}-{'0' * 16}-01", None),
        (f"00-{TRACE.upper()}-{PARENT}-01", None),  # lower-case hex only
        (f"00-{TRACE[:-1]}-{PARENT}-01", None),
        ("", None),
    ],
)
def test_traceparent(header, expected):
    assert parse_traceparent(header) == expected


def test_ratio_sampler_follows_otel_bound_on_the_low_63_bits():
    half = Sampler("traceidratio", 0.5)
    assert half.sampled((1 << 64) | 0x7FFFFFFFFFFFFFFE, None)  # (low 64 bits >> 1) just under 2^62
    assert not half.sampled(0x8000000000000000, None)  # exactly 2^62: not under the bound
    assert not Sampler("traceidratio", 0.0).sampled(1, None)
    assert Sampler("traceidratio", 1.0).sampled((1 << 64) - 1, None)
    assert not Sampler("traceidratio", 0.0).sampled(1, True)  # not parent-based: the flag is ignored


@pytest.mark.parametrize(
    ("name", "ratio", "parent", "sampled"),
    [
        ("parentbased_traceidratio", 0.0, True, True),
        ("parentbased_traceidratio", 1.0, False, False),
        ("parentbased_always_off", 0.0, True, True),
        ("parentbased_always_on", 0.0, None, True),
        ("always_off", 1.0, True, False),
        ("always_on", 0.0, False, True),
    ],
)
def test_samplers(name, ratio, parent, sampled):
    assert Sampler(name, ratio).sampled(12345, parent) is sampled


def test_ratio_sampling_over_many_traces():
    tracer = Tracer(Sampler("traceidratio", 0.1), sink=[])  # type: ignore[arg-type]
    kept = sum(tracer.start_request("GET /x", None) is not None for _ in range(20000))
    assert 1700 < kept < 2300


# --- the OTLP JSON encoding ---------------------------------------------------------------------------


def test_encoding_is_otlp_json():
    root = Span("POST /openrtb2/auction", int(TRACE, 16), int(PARENT, 16), KIND_SERVER, start_ns=1_700_000_000_000)
    root.end_ns = 1_700_000_500_000
    root.attributes.update({"http.route": "/openrtb2/auction", "http.response.status_code": 200, "ok": True, "x": 0.5})
    child = root.child("bidder_call", start_ns=1_700_000_100_000)
    child.end_ns = 1_700_000_200_000
    child.fail("timeout")
    body = orjson.loads(encode([child, root], [{"key": "service.name", "value": {"stringValue": "s"}}]))
    (resource,) = body["resourceSpans"]
    assert resource["resource"]["attributes"] == [{"key": "service.name", "value": {"stringValue": "s"}}]
    (scope,) = resource["scopeSpans"]
    assert scope["scope"]["name"] == "hbserver"
    encoded_child, encoded_root = scope["spans"]
    assert encoded_root["traceId"] == TRACE and encoded_root["parentSpanId"] == PARENT
    assert len(encoded_root["spanId"]) == 16 and encoded_root["kind"] == 2
    assert encoded_root["startTimeUnixNano"] == "1700000000000" and encoded_root["endTimeUnixNano"] == "1700000500000"
    assert encoded_root["attributes"] == [
        {"key": "http.route", "value": {"stringValue": "/openrtb2/auction"}},
        {"key": "http.response.status_code", "value": {"intValue": "200"}},
        {"key": "ok", "value": {"boolValue": True}},
        {"key": "x", "value": {"doubleValue": 0.5}},
    ]
    assert encoded_root["status"] == {}
    assert encoded_child["parentSpanId"] == encoded_root["spanId"]
    assert encoded_child["status"] == {"code": STATUS_ERROR, "message": "timeout"}


# --- the exporter against a loopback receiver -----------------------------------------------------------


def finished(n: int) -> list[Span]:
    spans = []
    for i in range(n):
        span = Span(f"s{i}", i + 1, 0)
        span.end_ns = span.start_ns + 1
        spans.append(span)
    return spans


async def exporter(receiver: Receiver, metrics: Metrics, **options: Any) -> tuple[OtlpExporter, SharedSession]:
    session = SharedSession()
    defaults: dict[str, Any] = {"max_queue_size": 100, "max_export_batch_size": 10, "schedule_delay": 30.0}
    return OtlpExporter(receiver.url, session, metrics, **{**defaults, **options}), session


async def test_queue_is_bounded_and_drops_are_counted(receiver):
    metrics = Metrics()
    export, session = await exporter(receiver, metrics, max_queue_size=3, max_export_batch_size=3)
    for span in finished(5):
        export.add(span)
    assert len(export.queue) == 3
    assert count(metrics, "queue_full") == 2
    await export.close()  # never started: close exports what waits
    await session.close()
    assert [s["name"] for s in receiver.spans()] == ["s0", "s1", "s2"]
    assert count(metrics, "exported") == 3


async def test_full_batches_go_at_once_the_rest_after_the_delay(receiver):
    metrics = Metrics()
    export, session = await exporter(receiver, metrics, max_export_batch_size=4, schedule_delay=0.3, headers={
        "x-api-key": "k1"})  # fmt: skip
    export.start()
    for span in finished(9):
        export.add(span)
    await asyncio.sleep(0.1)
    assert [len(b["resourceSpans"][0]["scopeSpans"][0]["spans"]) for b in receiver.bodies] == [4, 4]
    await asyncio.sleep(0.4)
    assert len(receiver.spans()) == 9
    assert receiver.headers[0]["Content-Type"] == "application/json" and receiver.headers[0]["x-api-key"] == "k1"
    await export.close()
    await session.close()
    assert count(metrics, "exported") == 9


@pytest.mark.parametrize("status", [400, 500, 503])
async def test_a_refused_batch_is_dropped_and_counted(receiver, status):
    receiver.status = status
    metrics = Metrics()
    export, session = await exporter(receiver, metrics)
    for span in finished(3):
        export.add(span)
    assert not await export.export_batch()
    assert not export.queue
    await session.close()
    assert (count(metrics, "failed"), count(metrics, "exported")) == (3, 0)


async def test_a_stalled_collector_costs_at_most_the_timeout(receiver):
    receiver.delay = 5.0
    metrics = Metrics()
    export, session = await exporter(receiver, metrics, timeout=0.2)
    for span in finished(2):
        export.add(span)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await export.close()
    assert loop.time() - started < 1.0
    await session.close()
    assert count(metrics, "failed") == 2


async def test_an_unreachable_collector_is_counted():
    metrics = Metrics()
    session = SharedSession()
    export = OtlpExporter("http://127.0.0.1:9/v1/traces", session, metrics, timeout=1.0)
    for span in finished(2):
        export.add(span)
    await export.close()
    await session.close()
    assert count(metrics, "failed") == 2


def test_bad_exporter_settings_are_refused():
    with pytest.raises(ValueError):
        OtlpExporter("http://127.0.0.1:9/", SharedSession(), Metrics(), max_queue_size=5, max_export_batch_size=6)


# --- configuration ------------------------------------------------------------------------------------


def test_off_by_default_and_built_from_the_configuration():
    assert build_tracer(make_config().tracing, SharedSession(), Metrics()) is None
    config = make_config(tracing={
        "enabled": True, "endpoint": "http://127.0.0.1:4318/v1/traces", "sampler": "traceidratio",
        "sampler_arg": 0.01, "max_queue_size": 100, "max_export_batch_size": 20, "schedule_delay_ms": 250,
        "timeout_ms": 700, "headers": {"authorization": "Bearer t"},
        "resource_attributes": {"deployment.environment": "x"},
    })  # fmt: skip
    tracer = build_tracer(config.tracing, SharedSession(), Metrics())
    assert tracer is not None and isinstance(tracer.sink, OtlpExporter)
    sink = tracer.sink
    assert (sink.max_queue_size, sink.batch_size, sink.schedule_delay, sink.timeout) == (100, 20, 0.25, 0.7)
    assert sink.headers["authorization"] == "Bearer t"
    assert {"key": "deployment.environment", "value": {"stringValue": "x"}} in sink.resource
    assert tracer.sampler.bound == int(0.01 * (1 << 63)) and not tracer.sampler.parent_based


@pytest.mark.parametrize(
    ("tracing_keys", "problem"),
    [
        ({"sampler": "sometimes"}, "tracing.sampler: must be one of"),
        ({"sampler_arg": 1.5}, "tracing.sampler_arg: must be between 0 and 1"),
        ({"endpoint": "localhost:4318"}, "tracing.endpoint: not a URL"),
        ({"headers": {"bad header": "x"}}, "tracing.headers: not a valid header name"),
        ({"headers": {"x-key": "a\nb"}}, "tracing.headers: x-key: must be a string on one line"),
        ({"max_queue_size": 0}, "tracing.max_queue_size: must be >= 1"),
        ({"max_queue_size": 10}, "tracing.max_export_batch_size: must not exceed tracing.max_queue_size"),
        ({"schedule_delay_ms": 0}, "tracing.schedule_delay_ms: must be >= 1"),
        ({"timeout_ms": 0}, "tracing.timeout_ms: must be >= 1"),
        ({"service_name": " "}, "tracing.service_name: must not be empty"),
        ({"colour": "red"}, "tracing.colour: unknown key"),
    ],
)
def test_bad_keys_are_named(tracing_keys, problem):
    with pytest.raises(ConfigError) as error:
        make_config(tracing=tracing_keys)
    assert any(p.startswith(problem) for p in error.value.problems), error.value.problems


# --- an auction's spans, end to end ---------------------------------------------------------------------


def traced_config(receiver: Receiver, bidders: Any, **tracing_keys: Any) -> dict[str, Any]:
    config = bidder_config(bidders, "alpha", "beta", "delta")
    config["tracing"] = {"enabled": True, "endpoint": receiver.url, "sampler": "always_on", **tracing_keys}
    return config


async def test_an_auction_reaches_the_receiver_as_one_trace(make_client, bidders, receiver):
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1")]
    bidders.status["beta"] = 500
    # delta has no bids set: it answers 204
    client = await make_client(traced_config(receiver, bidders))
    imp = {"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]},
           "ext": {"prebid": {"bidder": {"alpha": {}, "beta": {}, "delta": {}}}}}  # fmt: skip
    response = await post(client, auction_request(imp))
    assert response.status == 200
    await client.close()  # shutdown exports what waits
    spans = receiver.spans()
    assert len({s["traceId"] for s in spans}) == 1
    (root,) = [s for s in spans if "parentSpanId" not in s]
    assert root["name"] == "POST /openrtb2/auction" and root["kind"] == 2
    root_attrs = attrs(root)
    assert root_attrs["http.response.status_code"] == "200" and root_attrs["hbserver.account"] == "1001"
    assert root_attrs["hbserver.request_id"] == response.headers["X-Request-Id"]
    by_name = {s["name"]: s for s in spans}
    for stage in ("raw_auction_request", "processed_auction_request", "bidder_request", "raw_bidder_response",
                  "auction", "cache_and_targeting", "auction_response"):  # fmt: skip
        assert by_name[stage]["parentSpanId"] == root["spanId"], stage
    calls = {attrs(s)["hbserver.bidder.code"]: s for s in spans if s["name"] == "bidder_call"}
    assert {code: attrs(s)["hbserver.bidder.outcome"] for code, s in calls.items()} == {
        "alpha": "bid", "beta": "error", "delta": "no_bid"}  # fmt: skip
    assert all(s["parentSpanId"] == by_name["raw_bidder_response"]["spanId"] for s in calls.values())
    assert attrs(calls["alpha"])["hbserver.bidder.bids"] == "1" and calls["beta"]["status"]["code"] == STATUS_ERROR
    http = [s for s in spans if s["name"] == "POST"]
    assert {attrs(s)["http.response.status_code"] for s in http} == {"200", "500", "204"}
    assert all(attrs(s)["server.address"] == "127.0.0.1" and s["kind"] == 3 for s in http)
    assert all(int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"]) for s in spans)


async def test_traceparent_is_continued_and_not_sent_to_bidders(make_client, bidders, receiver):
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1")]
    client = await make_client(traced_config(receiver, bidders, sampler="parentbased_traceidratio", sampler_arg=0))
    assert (await post(client, auction_request(), headers={"traceparent": f"00-{TRACE}-{PARENT}-01"})).status == 200
    assert (await post(client, auction_request(), headers={"traceparent": f"00-{'1' * 32}-{PARENT}-00"})).status == 200
    assert (await post(client, auction_request())).status == 200  # ratio 0, no parent: not sampled
    await client.close()
    spans = receiver.spans()
    assert {s["traceId"] for s in spans} == {TRACE}
    (root,) = [s for s in spans if s["name"] == "POST /openrtb2/auction"]
    assert root["parentSpanId"] == PARENT
    assert all("traceparent" not in h for h in bidders.headers["alpha"])


async def test_a_full_queue_drops_spans_and_counts_them(make_client, bidders, receiver):
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1")]
    config = traced_config(receiver, bidders, max_queue_size=5, max_export_batch_size=5, schedule_delay_ms=60000)
    receiver.delay = 0.5  # the first batch is still out while the auction's other spans arrive
    client = await make_client(config)
    assert (await post(client, auction_request())).status == 200
    await client.close()
    exported = len(receiver.spans())
    assert exported <= 10  # two batches at most: a full one, then the shutdown's
    dropped = count(client.app[METRICS], "queue_full")
    assert dropped > 0 and dropped + exported >= 11  # the root, 8 stages or more, the bidder and its call
    assert count(client.app[METRICS], "exported") == exported


async def test_off_means_no_spans_and_no_tracing_work(make_client, bidders, receiver, monkeypatch):
    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("tracing work with tracing off")

    monkeypatch.setattr(tracing, "parse_traceparent", forbidden)
    monkeypatch.setattr(tracing.Span, "__init__", forbidden)
    monkeypatch.setattr(tracing.Tracer, "start_request", forbidden)
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1")]
    config = bidder_config(bidders, "alpha")
    config["tracing"] = {"endpoint": receiver.url}  # configured, not enabled
    client = await make_client(config)
    assert tracing.TRACER not in client.app
    response = await post(client, auction_request(), headers={"traceparent": f"00-{TRACE}-{PARENT}-01"})
    assert response.status == 200 and (await response.json())["seatbid"]
    await client.close()
    assert receiver.bodies == []


def test_the_compose_overlay_sends_spans_to_its_jaeger():
    root = Path(__file__).resolve().parents[1]
    compose = yaml.safe_load((root / "deploy" / "docker-compose.tracing.yml").read_text())
    config = load_config(environ=compose["services"]["hbserver"]["environment"])
    assert config.tracing.enabled and config.tracing.endpoint == "http://jaeger:4318/v1/traces"
    assert compose["services"]["jaeger"]["image"].startswith("jaegertracing/all-in-one:")
    base = yaml.safe_load((root / "deploy" / "docker-compose.yml").read_text())
    assert "hbserver" in base["services"]  # the overlay's service merges into the base file's


async def test_amp_auctions_on_the_call_plan_are_traced_too(make_client, bidders, receiver, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 1.87, "a1")]
    store(data_dir, "101", amp_stored("alpha"))
    client = await make_client(traced_config(receiver, bidders))
    for _ in range(2):  # the second one runs on the slot's call plan (auction/exchange/callplan.py)
        response = await client.get("/openrtb2/amp?tag_id=101&w=300&h=250&slot=%2F1111%2Fslot&account=1001")
        assert response.status == 200 and (await response.json())["targeting"]["hb_bidder"] == "alpha"
    await client.close()
    spans = receiver.spans()
    roots = [s for s in spans if s["name"] == "GET /openrtb2/amp"]
    assert len(roots) == 2 and all(attrs(r)["hbserver.request_type"] == "amp" for r in roots)
    for root in roots:
        trace = [s for s in spans if s["traceId"] == root["traceId"]]
        (call,) = [s for s in trace if s["name"] == "bidder_call"]
        assert attrs(call)["hbserver.bidder.outcome"] == "bid"
        assert {"bidder_request", "raw_bidder_response", "auction_response"} <= {s["name"] for s in trace}
