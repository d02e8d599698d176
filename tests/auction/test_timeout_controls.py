"""Timeout controls (issue 42 item 4): PBS-Go's ``tmax_adjustments``, PBS-Java's
``auction.biddertmax`` / ``auction.tmax_upstream_response_time`` / per-bidder ``tmax_deduction_ms``,
secondary bidders (``ext.prebid.secondarybidders``, account ``auction.secondary_bidders``) and the
account's ``auction.impression_limit``. The end-to-end rows run the real app against mock bidders on
127.0.0.1 and read the tmax they were told and how long the answer took."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.exchange.bidder_tmax import TmaxPolicy
from hbserver.config import ConfigError, load_config
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import write_account


def _policy(**raw: Any) -> TmaxPolicy | None:
    return TmaxPolicy.from_config(load_config(overrides=raw))


def _request(tmax: int, *imps: dict[str, Any], **prebid: Any) -> dict[str, Any]:
    return {
        "id": "req-1",
        "tmax": tmax,
        "imp": list(imps) or [banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "device": {"ua": "test-agent", "ip": "203.0.113.77"},
        "ext": {"prebid": dict(prebid)},
    }


GO = "tmax_adjustments"


@pytest.mark.parametrize(
    ("raw", "active"),
    [
        pytest.param({}, False, id="nothing configured: no policy (a bidder is told the time left)"),
        pytest.param({GO: {"enabled": False, "bidder_response_duration_min_ms": 50,
                           "bidder_network_latency_buffer_ms": 10}}, False, id="tmax_adjustments.go: disabled"),
        pytest.param({GO: {"enabled": True, "bidder_network_latency_buffer_ms": 10}}, False,
                     id="tmax_adjustments.go: no minimum, not enforced"),
        pytest.param({GO: {"enabled": True, "bidder_response_duration_min_ms": 50}}, False,
                     id="tmax_adjustments.go: no buffer nor preparation time, not enforced"),
        pytest.param({GO: {"enabled": True, "bidder_response_duration_min_ms": 50,
                           "pbs_response_preparation_duration_ms": 10}}, True, id="tmax_adjustments.go: enforced"),
        pytest.param({"auction": {"biddertmax": {"percent": 80}}}, True, id="PBS-Java biddertmax.percent"),
        pytest.param({"auction": {"tmax_upstream_response_time": 30}}, True, id="PBS-Java upstream response time"),
        pytest.param({"adapters": {"appnexus": {"tmax_deduction_ms": 20}}}, True, id="PBS-Java tmax-deduction-ms"),
    ],
)  # fmt: skip
def test_policy_is_made_only_when_configured(raw: dict[str, Any], active: bool) -> None:
    assert (_policy(**raw) is not None) is active


@pytest.mark.parametrize(
    ("raw", "budget", "spent", "told"),
    [
        pytest.param({GO: {"enabled": True, "bidder_response_duration_min_ms": 50,
                           "bidder_network_latency_buffer_ms": 40, "pbs_response_preparation_duration_ms": 60}},
                     1000, 200, 700, id="tmax_adjustments.go getBidderTmax: remaining - buffer - preparation"),
        pytest.param({"auction": {"biddertmax": {"percent": 50}}}, 1000, 100, 400,
                     id="TimeoutResolver.adjustForBidder: tmax * percent - spent"),
        pytest.param({"auction": {"biddertmax": {"min": 300, "percent": 10}}}, 1000, 100, 300,
                     id="TimeoutResolver.limitToMin"),
        pytest.param({"auction": {"biddertmax": {"max": 500}}}, 1000, 100, 400,
                     id="TimeoutResolver.limitToMax: the tmax capped first"),
        pytest.param({"auction": {"tmax_upstream_response_time": 30}}, 1000, 100, 870,
                     id="TimeoutResolver: the upstream response time kept"),
        pytest.param({"adapters": {"alpha": {"alias_of": "generic", "endpoint": "http://127.0.0.1:1/a",
                                             "tmax_deduction_ms": 25}}},
                     1000, 0, 975, id="ExchangeService.adjustTmax: the bidder's tmax-deduction-ms"),
        pytest.param({"auction": {"biddertmax": {"percent": 50}}}, 100, 90, 0, id="never below 0"),
    ],
)  # fmt: skip
def test_told_tmax(raw: dict[str, Any], budget: int, spent: int, told: int) -> None:
    policy = _policy(**raw)
    assert policy is not None
    assert policy.told("alpha", budget, spent) == told


def test_too_late_and_call_deadline() -> None:
    """tmax_adjustments.go hasShorterDurationThanTmax; TimeoutResolver.adjustForRequest."""
    go = _policy(**{GO: {"enabled": True, "bidder_response_duration_min_ms": 50,
                         "bidder_network_latency_buffer_ms": 40, "pbs_response_preparation_duration_ms": 60}})
    assert go is not None
    assert go.too_late(149) and not go.too_late(150)
    java = _policy(auction={"biddertmax": {"min": 50}, "tmax_upstream_response_time": 30})
    assert java is not None and not java.too_late(0)
    assert java.call_deadline(10.0, 9.0) == pytest.approx(9.97)  # 30 ms kept for the way back
    assert java.call_deadline(10.0, 9.96) == pytest.approx(10.0)  # at least min from now, never past the deadline


def test_biddertmax_max_below_min_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"auction\.biddertmax\.max"):
        load_config(overrides={"auction": {"biddertmax": {"min": 100, "max": 50}}})


# -- end to end ------------------------------------------------------------------------------------


async def _auction(client: Any, request: dict[str, Any]) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    elapsed = time.monotonic() - started
    assert response.status == 200, await response.text()
    return await response.json(), elapsed


async def test_tmax_adjustments_tell_bidders_less_and_skip_hopeless_calls(make_client, bidders) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    config = {**bidder_config(bidders, "alpha"), GO: {
        "enabled": True, "bidder_response_duration_min_ms": 150, "bidder_network_latency_buffer_ms": 100,
        "pbs_response_preparation_duration_ms": 100}}  # fmt: skip
    client = await make_client(config)
    await _auction(client, _request(800, banner_imp("imp-1", alpha={"p": 1})))
    told = bidders.received["alpha"][0]["tmax"]
    assert 300 <= told <= 600  # 800 less the 200 ms of overhead, less what the auction spent before the call
    answer, _ = await _auction(client, _request(300, banner_imp("imp-1", alpha={"p": 1})))
    assert len(bidders.received["alpha"]) == 1  # 300 - 200 < 150: not called
    assert answer["ext"]["errors"]["alpha"] == [{"code": 1, "message": "exceeded tmax duration"}]
    line = "hbserver_tmax_timeout 1.0"
    for _ in range(60):  # hot-path counts reach Prometheus once a second
        if line in await (await client.get("/metrics")).text():
            break
        await asyncio.sleep(0.05)
    text = await (await client.get("/metrics")).text()
    assert line in text
    assert 'hbserver_adapter_errors{adapter="alpha",adapter_error="tmaxtimeout"} 1.0' in text


async def test_biddertmax_percent_and_tmax_deduction(make_client, bidders) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.bids["beta"] = [bid("imp-1", 0.5, "b2")]
    config = {**bidder_config(bidders, "alpha", "beta", beta={"tmax_deduction_ms": 300}),
              "auction": {"biddertmax": {"percent": 50}}}  # fmt: skip
    client = await make_client(config)
    await _auction(client, _request(1000))
    alpha, beta = bidders.received["alpha"][0]["tmax"], bidders.received["beta"][0]["tmax"]
    assert 300 <= alpha <= 500  # half of 1000, less the time spent
    assert alpha - beta == 300  # beta's own deduction


async def test_upstream_response_time_cuts_calls_short(make_client, bidders) -> None:
    """A bidder answering after tmax - upstream is given up (without the setting it is in time)."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.delay["alpha"] = 0.8
    request = _request(1200, banner_imp("imp-1", alpha={"p": 1}))
    plain = await make_client(bidder_config(bidders, "alpha"))
    answer, _ = await _auction(plain, request)
    assert answer["seatbid"][0]["bid"][0]["price"] == 1.0
    kept = await make_client({**bidder_config(bidders, "alpha"), "auction": {"tmax_upstream_response_time": 600}})
    answer, elapsed = await _auction(kept, request)
    assert "seatbid" not in answer or not answer["seatbid"]
    assert answer["ext"]["errors"]["alpha"][0]["code"] == 1
    assert elapsed < 0.8


@pytest.mark.parametrize("source", ["request", "account"])
async def test_secondary_bidders_are_not_waited_for(make_client, bidders, data_dir: Path, source: str) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.bids["beta"] = [bid("imp-1", 2.0, "b2")]
    bidders.delay["beta"] = 1.2
    prebid: dict[str, Any] = {}
    if source == "request":
        prebid["secondarybidders"] = ["beta"]
    else:
        write_account(data_dir, "1001", {"id": "1001", "auction": {"secondary_bidders": ["beta"]}})
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    answer, elapsed = await _auction(client, _request(2000, **prebid))
    assert elapsed < 1.1  # beta's 1200 ms were not waited for
    assert [b["price"] for s in answer["seatbid"] for b in s["bid"]] == [1.0]
    assert answer["ext"]["warnings"]["beta"] == [
        {"code": 1, "message": "secondary bidder timed out, auction proceeded"}
    ]
    assert "beta" not in answer["ext"].get("errors", {})


async def test_a_secondary_bidder_that_answered_in_time_counts(make_client, bidders) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.bids["beta"] = [bid("imp-1", 2.0, "b2")]
    bidders.delay["alpha"] = 0.3
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    answer, _ = await _auction(client, _request(1500, secondarybidders=["beta"]))
    assert sorted(b["price"] for s in answer["seatbid"] for b in s["bid"]) == [1.0, 2.0]
    assert "beta" not in answer["ext"].get("warnings", {})


async def test_all_bidders_secondary_means_all_are_waited_for(make_client, bidders) -> None:
    """ExchangeService.buildPrimaryBiddersCompositeFuture: no primary bidder, every bidder awaited."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.bids["beta"] = [bid("imp-1", 2.0, "b2")]
    bidders.delay["beta"] = 0.3
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    answer, _ = await _auction(client, _request(1500, secondarybidders=["alpha", "beta"]))
    assert sorted(b["price"] for s in answer["seatbid"] for b in s["bid"]) == [1.0, 2.0]


@pytest.mark.parametrize(("limit", "kept"), [(1, 1), (2, 2), (3, 2), (0, 2)])
async def test_impression_limit(make_client, bidders, data_dir: Path, limit: int, kept: int) -> None:
    """Ortb2RequestFactory.limitImpressions: the first N imps go on, with PBS-Java's warning."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "1001", {"id": "1001", "auction": {"impression_limit": limit}})
    client = await make_client(bidder_config(bidders, "alpha"))
    imps = [banner_imp("imp-1", alpha={"p": 1}), banner_imp("imp-2", alpha={"p": 1})]
    answer, _ = await _auction(client, _request(800, *imps))
    assert [imp["id"] for imp in bidders.received["alpha"][0]["imp"]] == ["imp-1", "imp-2"][:kept]
    general = [w["message"] for w in answer.get("ext", {}).get("warnings", {}).get("general", [])]
    text = (f"Only first {limit} impressions were kept due to the limit, all the subsequent impressions have been "
            "dropped for the auction")  # fmt: skip
    assert (text in general) is (kept < 2)
    line = f"hbserver_imps_dropped {2.0 - kept}"
    for _ in range(60):  # hot-path counts reach Prometheus once a second
        if line in await (await client.get("/metrics")).text():
            break
        await asyncio.sleep(0.05)
    assert line in await (await client.get("/metrics")).text()
