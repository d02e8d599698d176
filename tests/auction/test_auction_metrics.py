"""One auction's PBS-Go metric families, read from /metrics: request and imp counts, privacy
signals, per adapter its request (cookie, has_bids), errors as PBS-Go labels them (a refused
connection is unknown_error, a 500 badserverresponse, a silent bidder timeout), time only without
errors, bids by delivery, prices times 1000, connections created then reused, the cache write time."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from hbserver.usersync.cookie import UidsCookie, encode_cookie
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post
from tests.e2e.helpers import free_port


def value(text: str, line: str) -> float | None:
    for row in text.splitlines():
        if row.startswith(line + " "):
            return float(row.rsplit(" ", 1)[1])
    return None


@pytest.fixture
async def scenario(make_client, bidders) -> str:
    """Two auctions: alpha bids (adm) and 2.5 (nurl), beta answers 500, gamma2's port refuses,
    slow is silent past the deadline; then a refused request and an AMP-less app request."""
    bidders.bids["alpha"] = [bid("imp-1", 1.5, "a1"), {**bid("imp-2", 2.5, "a2", nurl="http://n/"), "adm": ""}]
    bidders.status["beta"] = 500
    bidders.delay["slow"] = 2.0
    bidders.bids["slow"] = [bid("imp-1", 9.0)]
    config = bidder_config(bidders, "alpha", "beta", "slow")
    config["adapters"]["gamma2"] = {"alias_of": "generic", "endpoint": f"http://127.0.0.1:{free_port()}/x"}
    config["adapters"]["blocked"] = {"alias_of": "generic", "endpoint": bidders.url("blocked")}
    # the consent string has no vendor consent for them: these four are called by exception
    config["gdpr"] = {"tcf2": {"purpose2": {"vendor_exceptions": ["alpha", "beta", "gamma2", "slow"]}}}
    client = await make_client(config)
    params: dict[str, Any] = {name: {"p": 1} for name in ("alpha", "beta", "gamma2", "slow", "blocked")}
    body = auction_request(banner_imp("imp-1", **params), {**banner_imp("imp-2", alpha={"p": 1}), "video": {
        "mimes": ["video/mp4"]}}, tmax=300)
    body["regs"] = {"gdpr": 1, "us_privacy": "1YYN", "coppa": 1}
    body["user"] = {"consent": "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"}
    body["device"]["lmt"] = 1
    cookie = UidsCookie()
    cookie.set_uid("generic", "uid-a", datetime.now(UTC))  # generic aliases share the generic syncer key
    for _ in range(2):
        response = await post(client, body, headers={"Cookie": f"uids={encode_cookie(cookie)}"})
        assert response.status == 200, await response.text()
    bad = auction_request()
    bad["imp"] = []
    assert (await post(client, bad)).status == 400
    return await (await client.get("/metrics")).text()


ROWS = [
    ('hbserver_requests{request_status="ok",request_type="openrtb2-web"}', 2),
    ('hbserver_requests{request_status="badinput",request_type="openrtb2-web"}', 1),
    ('hbserver_request_time_seconds_count{request_type="openrtb2-web"}', 2),  # only ok ones
    ('hbserver_request_size_bytes_count{request_size="auction"}', 3),
    ('hbserver_requests_without_cookie{request_type="openrtb2-web"}', 1),  # the refused one
    ('hbserver_account_requests{account="1001"}', 2),
    ('hbserver_impressions_requests{audio="false",banner="true",native="false",video="false"}', 2),
    ('hbserver_impressions_requests{audio="false",banner="true",native="false",video="true"}', 2),
    ('hbserver_privacy_tcf{source="request",version="v2"}', 2),
    ('hbserver_privacy_coppa{source="request"}', 2),
    ('hbserver_privacy_lmt{source="request"}', 2),
    ('hbserver_privacy_ccpa{opt_out="false",source="request"}', 2),  # ccpa.enforce is off by default
    ('hbserver_adapter_requests{adapter="alpha",cookie="exists",has_bids="true"}', None),  # coppa scrubs the uid
    ('hbserver_adapter_requests{adapter="alpha",cookie="no",has_bids="true"}', 2),
    ('hbserver_adapter_requests{adapter="beta",cookie="no",has_bids="false"}', 2),
    ('hbserver_adapter_errors{adapter="beta",adapter_error="badserverresponse"}', 2),
    ('hbserver_adapter_errors{adapter="gamma2",adapter_error="unknown_error"}', 2),
    ('hbserver_adapter_errors{adapter="slow",adapter_error="timeout"}', 2),
    ('hbserver_adapter_request_time_seconds_count{adapter="alpha"}', 2),
    ('hbserver_adapter_request_time_seconds_count{adapter="beta"}', 0),  # errors: no time, as PBS-Go
    ('hbserver_adapter_bids{adapter="alpha",delivery="adm"}', 2),
    ('hbserver_adapter_bids{adapter="alpha",delivery="nurl"}', 2),
    ('hbserver_adapter_prices_bucket{adapter="alpha",le="1500.0"}', 2),  # 1.5 → 1500
    ('hbserver_adapter_prices_bucket{adapter="alpha",le="2500.0"}', 4),
    ('hbserver_adapter_prices_sum{adapter="alpha"}', 8000),
    ('hbserver_adapter_buyeruids_scrubbed{adapter="alpha"}', 2),
    ('hbserver_adapter_gdpr_requests_blocked{adapter="blocked"}', 2),  # no purpose 2 basis
    ('hbserver_adapter_gdpr_requests_blocked{adapter="alpha"}', 0),
    ('hbserver_adapter_requests{adapter="blocked",cookie="no",has_bids="false"}', None),
    ('hbserver_adapter_connection_created{adapter="alpha"}', 1),
    ('hbserver_adapter_connection_reused{adapter="alpha"}', 1),
    ('hbserver_adapter_connection_wait_count{adapter="alpha"}', 2),
    ('hbserver_prebidcache_write_time_seconds_count{success="true"}', 2),
    ('hbserver_stored_request_cache_performance{cache_result="hit"}', 0),
    ('hbserver_connections_opened', 0),  # in-process test server: not the ConnectionRunner
]


async def test_auction_families(scenario):
    """Every row at once (the scenario takes a deadline's time); a mismatch lists every wrong row."""
    wrong = {line: value(scenario, line) for line, expected in ROWS if value(scenario, line) != expected}
    assert not wrong, json.dumps(wrong, indent=1)
