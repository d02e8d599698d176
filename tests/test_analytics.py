"""Analytics: fan-out, the bounded buffer and its dropped counter, the JSON Lines file module, and
the auction/AMP records (every bid, every bidder asked) from real auctions against mock bidders."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from hbserver.analytics import Analytics
from hbserver.analytics.file import FileModule
from hbserver.analytics.records import rfc3339_utc
from hbserver.metrics import Metrics
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    metrics.flush()
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def record(i: int) -> dict[str, Any]:
    return {"event": "notification", "ts": rfc3339_utc(1_700_000_000 + i), "bidid": f"b{i}"}


@pytest.mark.parametrize(
    ("epoch", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500Z"),
        (1_700_000_000.999, "2023-11-14T22:13:20.999Z"),
        (1_700_000_001.001, "2023-11-14T22:13:21.001Z"),
    ],
)
def test_rfc3339(epoch, text):
    assert rfc3339_utc(epoch) == text


async def test_file_module_writes_every_record_in_order(tmp_path):
    metrics = Metrics()
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), metrics)
    await module.start()
    for i in range(250):
        module.log(record(i))
        if i % 50 == 0:
            await asyncio.sleep(0.01)  # let the writer run between bursts
    await module.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["bidid"] for line in lines] == [f"b{i}" for i in range(250)]
    assert sample(metrics, "hbserver_analytics_events_total", module="file", event="notification") == 250
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 0


async def test_full_buffer_drops_and_counts(tmp_path):
    metrics = Metrics()
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), metrics, capacity=3)
    await module.start()
    for i in range(5):  # no await in between: the writer cannot drain
        module.log(record(i))
    await module.close()
    assert [json.loads(line)["bidid"] for line in path.read_text().splitlines()] == ["b0", "b1", "b2"]
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 2
    module.log(record(9))  # after close nothing is accepted
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 3


async def test_write_failure_counts_the_batch_as_dropped():
    if not os.path.exists("/dev/full"):
        pytest.skip("/dev/full is not available")
    metrics = Metrics()
    module = FileModule("/dev/full", metrics)
    await module.start()
    for i in range(4):
        module.log(record(i))
    await module.close()
    assert sample(metrics, "hbserver_analytics_dropped_events_total", module="file") == 4


async def test_fan_out_to_every_module(tmp_path):
    metrics = Metrics()
    first, second = FileModule(str(tmp_path / "1.jsonl"), metrics), FileModule(str(tmp_path / "2.jsonl"), metrics)
    analytics = Analytics([first, second])
    assert analytics.enabled and not Analytics([]).enabled
    await analytics.start()
    analytics.log(record(1))
    await analytics.close()
    for name in ("1.jsonl", "2.jsonl"):
        assert json.loads((tmp_path / name).read_text())["bidid"] == "b1"


async def test_two_writers_on_one_file_never_interleave(tmp_path):
    """Workers share the file: each batch is one O_APPEND write, so lines stay whole."""
    path = tmp_path / "shared.jsonl"
    modules = [FileModule(str(path), Metrics()) for _ in range(2)]
    for module in modules:
        await module.start()
    big = "x" * 5000
    for i in range(400):
        modules[i % 2].log({"event": "notification", "n": i, "pad": big})
        if i % 40 == 0:
            await asyncio.sleep(0)
    for module in modules:
        await module.close()
    numbers = sorted(json.loads(line)["n"] for line in path.read_text().splitlines())
    assert numbers == list(range(400))


async def test_a_moved_file_is_replaced_by_a_new_one(tmp_path):
    path = tmp_path / "a.jsonl"
    module = FileModule(str(path), Metrics())
    await module.start()
    module.log(record(1))
    for _ in range(200):  # wait for the first batch to be written
        if path.stat().st_size:
            break
        await asyncio.sleep(0.01)
    path.rename(tmp_path / "a.jsonl.1")  # what logrotate does
    module.log(record(2))
    await module.close()
    assert json.loads((tmp_path / "a.jsonl.1").read_text())["bidid"] == "b1"
    assert json.loads(path.read_text())["bidid"] == "b2"


# --- the auction and AMP records: bids and bidder outcomes --------------------------------------

ANALYTICS_BIDDERS = ("alpha", "beta", "gamma2", "delta", "omega")


def read_records(path: Path, event: str) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["event"] == event]


def by_bid(record: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(entry["bidder"], entry["bidid"]): entry for entry in record["bids"]}


async def test_auction_record_carries_every_bid_and_every_bidder(make_client, bidders, tmp_path):
    """Accepted bids (converted, winner marked), rejected ones with the pipeline's reason, and a
    bidder that bid, one whose currency has no rate, one that timed out, one that failed, one silent."""
    bidders.bids["alpha"] = [
        bid("imp-1", 4.0, "a1", dealid="d1"),
        bid("imp-1", 1.0, "a2"),
        bid("imp-9", 1.0, "a3"),  # no such imp
        bid("imp-2", 0, "a4"),  # no price, no deal: dropped silently outside debug
        bid("imp-2", 0.8, "a5", mtype=2),
    ]
    bidders.bids["beta"] = [bid("imp-1", 3.0, "b1")]
    bidders.currency["beta"] = "GBP"  # no rate to EUR
    bidders.bids["gamma2"] = [bid("imp-1", 9.0, "g1")]
    bidders.delay["gamma2"] = 5.0
    bidders.status["delta"] = 500
    # omega: no bids (204)
    log_file = tmp_path / "a.jsonl"
    client = await make_client(
        bidder_config(bidders, *ANALYTICS_BIDDERS), analytics={"file": {"filename": str(log_file)}}
    )
    params = {name: {"p": 1} for name in ANALYTICS_BIDDERS}
    video_imp = {"id": "imp-2", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480},
                 "ext": {"prebid": {"bidder": params}}}
    body = auction_request(banner_imp("imp-1", **params), video_imp, cur=["EUR"], tmax=300)
    body["ext"]["prebid"]["currency"] = {"rates": {"USD": {"EUR": 0.5}}}
    response = await post(client, body)
    assert response.status == 200
    data = await response.json()
    await client.close()  # flushes analytics
    [record] = read_records(log_file, "auction")
    assert record["status"] == 200 and record["account"] == "1001" and record["bid_count"] == 3
    assert sorted(record["bidders"]) == sorted(ANALYTICS_BIDDERS)

    bids = by_bid(record)
    assert set(bids) == {("alpha", f"a{i}") for i in range(1, 6)} | {("beta", "b1")}
    accepted = {key: (e["imp_id"], e["price"], e["currency"], e["deal"], e["media_type"], e["won"])
                for key, e in bids.items() if e["rejected_reason"] is None}
    assert accepted == {
        ("alpha", "a1"): ("imp-1", 2.0, "EUR", "d1", "banner", True),
        ("alpha", "a2"): ("imp-1", 0.5, "EUR", None, "banner", False),
        ("alpha", "a5"): ("imp-2", 0.4, "EUR", None, "video", True),
    }
    # the reasons are the texts the bidder's errors carry (a4's only in debug)
    errors = {name: [e["message"] for e in items] for name, items in data["ext"]["errors"].items()}
    a3, a4, b1 = bids[("alpha", "a3")], bids[("alpha", "a4")], bids[("beta", "b1")]
    assert a3["rejected_reason"] in errors["alpha"] and "imp-9" in a3["rejected_reason"]
    assert (a3["imp_id"], a3["price"], a3["currency"], a3["won"]) == ("imp-9", 0.5, "EUR", False)
    assert a4["rejected_reason"] == (
        "Bid \"a4\" does not contain positive 'price' which is required since there is no deal set for this bid"
    )
    assert b1["rejected_reason"] == "Currency conversion rate not found: 'GBP' => 'EUR'" in errors["beta"]
    assert (b1["price"], b1["currency"], b1["won"]) == (3.0, "GBP", False)
    # the winners are the bids that got the winning targeting
    returned = [b for seat in data["seatbid"] for b in seat["bid"]]
    winners = {b["id"] for b in returned if "hb_pb" in b["ext"]["prebid"].get("targeting", {})}
    assert winners == {key[1] for key, e in bids.items() if e["won"]}

    adapters = {entry["bidder"]: entry for entry in record["adapters"]}
    assert set(adapters) == set(ANALYTICS_BIDDERS)
    assert {name: (e["status"], e["bids"]) for name, e in adapters.items()} == {
        "alpha": ("ok", 3), "beta": ("error", 0), "gamma2": ("timeout", 0), "delta": ("error", 0),
        "omega": ("nobid", 0),
    }
    assert adapters["gamma2"]["errors"][0]["code"] == 1 and adapters["gamma2"]["time_ms"] >= 150
    assert adapters["delta"]["errors"][0]["code"] == 3 and "500" in adapters["delta"]["errors"][0]["message"]
    assert adapters["omega"]["errors"] == [] and adapters["alpha"]["errors"] == data["ext"]["errors"]["alpha"]
    assert all(isinstance(e["time_ms"], int) and e["time_ms"] >= 0 for e in adapters.values())


async def test_adapter_errors_are_bounded(make_client, bidders, tmp_path):
    from hbserver.analytics.records import MAX_ADAPTER_ERRORS, MAX_ERROR_MESSAGE

    long_id = "x" * (MAX_ERROR_MESSAGE + 50)
    bidders.bids["alpha"] = [bid("imp-9", 1.0, f"{long_id}{i}") for i in range(MAX_ADAPTER_ERRORS + 5)]
    log_file = tmp_path / "a.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    assert (await post(client, auction_request())).status == 200
    await client.close()
    [record] = read_records(log_file, "auction")
    [alpha] = record["adapters"]
    assert len(alpha["errors"]) == MAX_ADAPTER_ERRORS
    assert all(len(e["message"]) == MAX_ERROR_MESSAGE for e in alpha["errors"])
    assert len(record["bids"]) == MAX_ADAPTER_ERRORS + 5  # every bid is still listed
    assert all(e["rejected_reason"] for e in record["bids"])


async def test_refused_auction_record(make_client, bidders, tmp_path):
    log_file = tmp_path / "a.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    assert (await post(client, {"id": "x"})).status == 400
    await client.close()
    [record] = read_records(log_file, "auction")
    assert record["status"] == 400 and record["errors"][0].startswith("Invalid request")
    assert (record["bids"], record["adapters"], record["bid_count"]) == ([], [], 0)


async def test_no_details_are_built_without_analytics(make_client, bidders, monkeypatch):
    """The hot path with analytics off: no AuctionDetails at all."""
    import hbserver.auction.core

    def refuse() -> None:
        raise AssertionError("AuctionDetails built with analytics off")

    monkeypatch.setattr(hbserver.auction.core, "AuctionDetails", refuse)
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, auction_request())
    assert response.status == 200 and seat_bids(await response.json())["alpha"]


async def test_amp_record_carries_bids_and_bidders(make_client, bidders, data_dir, tmp_path):
    bidders.bids["alpha"] = [bid("slot-1", 1.25, "w"), bid("slot-1", 0.5, "l")]
    bidders.status["beta"] = 503
    stored = {
        "id": "amp-req",
        "site": {"page": "https://pub.example/a"},
        "imp": [{"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]},
                 "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 1}}}}}],
        "ext": {"prebid": {"targeting": {"pricegranularity": "medium"}}},
    }
    (data_dir / "stored_requests" / "amp-tag.json").write_text(json.dumps(stored))
    log_file = tmp_path / "a.jsonl"
    client = await make_client(
        bidder_config(bidders, "alpha", "beta"), analytics={"file": {"filename": str(log_file)}}
    )
    response = await client.get("/openrtb2/amp", params={"tag_id": "amp-tag", "account": "1001"})
    assert response.status == 200
    assert (await response.json())["targeting"]["hb_bidder"] == "alpha"
    missing = await client.get("/openrtb2/amp", params={"tag_id": "no-such-tag"})
    assert missing.status == 400
    await client.close()
    ok, refused = read_records(log_file, "amp")
    assert ok["status"] == 200 and ok["bid_count"] == 2
    assert {(e["bidid"], e["won"], e["price"], e["rejected_reason"]) for e in ok["bids"]} == {
        ("w", True, 1.25, None), ("l", False, 0.5, None)
    }
    assert {e["bidder"]: e["status"] for e in ok["adapters"]} == {"alpha": "ok", "beta": "error"}
    assert refused["status"] == 400 and refused["bids"] == [] and refused["adapters"] == []
