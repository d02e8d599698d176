"""Analytics under the account's activity controls: ``reportAnalytics`` decides per module (component
type ``analytics``, PBS-Go's module names), and the transmit activities have nothing to scrub because
records carry no part of the request. Each rule a row naming its PBS-Go source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.analytics import Analytics
from hbserver.analytics.file import FileModule
from hbserver.analytics.http import HttpModule
from hbserver.privacy.activity import ActivityControl
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account

BUILD_GO = "analytics/build/build.go"
RULE_GO = "privacy/rule_condition.go"


class Recorder:
    def __init__(self, name: str, component: str) -> None:
        self.name = name
        self.component = component
        self.records: list[dict[str, Any]] = []

    def log(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


def rule(allow: bool, **condition: Any) -> dict[str, Any]:
    return {"rules": [{"condition": condition, "allow": allow}]}


ROWS = [
    # (id, source, allowactivities (None: the account has none), modules that get the record)
    ("no-controls-every-module", BUILD_GO, None, ["filelogger", "http"]),
    ("default-deny", BUILD_GO + " evaluateActivities", {"reportAnalytics": {"default": False}}, []),
    ("deny-one-module-by-name", BUILD_GO + " evaluateActivities",
     {"reportAnalytics": rule(False, componentName=["filelogger"])}, ["http"]),
    ("name-matched-case-insensitively", BUILD_GO + " evaluateActivities",
     {"reportAnalytics": rule(False, componentName=["FileLogger"])}, ["http"]),
    ("deny-the-analytics-type", BUILD_GO + " (ComponentTypeAnalytics)",
     {"reportAnalytics": rule(False, componentType=["analytics"])}, []),
    ("bidder-type-rule-does-not-match", BUILD_GO + " (ComponentTypeAnalytics)",
     {"reportAnalytics": rule(False, componentType=["bidder"])}, ["filelogger", "http"]),
    ("allow-one-over-default-deny", BUILD_GO + " evaluateActivities",
     {"reportAnalytics": {"default": False, **rule(True, componentName=["http"])}}, ["http"]),
    ("gpp-sid-rule-never-matches-without-a-request", RULE_GO + " evaluateGPPSID (empty ActivityRequest)",
     {"reportAnalytics": rule(False, gppSid=[7])}, ["filelogger", "http"]),
    ("transmit-activities-do-not-stop-a-record", BUILD_GO + " evaluateActivities",
     {"transmitUfpd": {"default": False}, "transmitPreciseGeo": {"default": False},
      "transmitEids": {"default": False}}, ["filelogger", "http"]),
]


@pytest.mark.parametrize(("source", "activities", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_report_analytics_per_module(source, activities, expected):
    modules = [Recorder("file", "filelogger"), Recorder("http", "http")]
    analytics = Analytics(modules)  # type: ignore[arg-type]
    controls = None if activities is None else ActivityControl.from_config(activities)
    record = {"event": "auction", "account": "1001"}
    analytics.log(record, controls)
    assert [m.component for m in modules if m.records] == expected, source
    assert all(m.records == [record] for m in modules if m.records)  # the record as built, unchanged


def test_module_component_names():
    """PBS-Go analytics/build/build.go names its file module "filelogger"; the HTTP one is hbserver's."""
    assert FileModule.component == "filelogger" and HttpModule.component == "http"
    assert Analytics([Recorder("x", "y")])._components[0][1] == "y"  # type: ignore[list-item]


DENY_FILE = {"privacy": {"allowactivities": {"reportAnalytics": rule(False, componentName=["filelogger"])}}}


async def test_account_controls_decide_auction_and_amp_records(make_client, bidders, data_dir: Path, tmp_path: Path):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "quiet", DENY_FILE)
    store(data_dir, "101", amp_stored("alpha"))
    log_file = tmp_path / "analytics.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    for account in ("quiet", "1001"):
        body = auction_request()
        body["site"]["publisher"]["id"] = account
        assert (await post(client, body)).status == 200
        assert (await client.get(f"/openrtb2/amp?tag_id=101&account={account}")).status == 200
    await client.close()  # flushes analytics
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert sorted((r["event"], r["account"]) for r in records) == [("amp", "1001"), ("auction", "1001")]


SECRETS = ("u-secret", "buyer-secret", "eid-secret", "seg-secret", "203.0.113.77", "51.5074", "kw-secret", "ifa-secret")


async def test_records_carry_no_request_data_to_scrub(make_client, bidders, data_dir: Path, tmp_path: Path):
    """PBS-Go scrubs the request it hands a module under transmitUfpd/transmitPreciseGeo (build.go
    evaluateActivities); hbserver's records never hold the request: none of its user, device, geo or
    EID values reaches a record, with or without those activities."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    deny = {"default": False}
    write_account(data_dir, "scrub", {"privacy": {"allowactivities": {
        "transmitUfpd": deny, "transmitPreciseGeo": deny, "transmitEids": deny}}})
    log_file = tmp_path / "analytics.jsonl"
    client = await make_client(bidder_config(bidders, "alpha"), analytics={"file": {"filename": str(log_file)}})
    for account in ("scrub", "1001"):
        body = auction_request(
            user={"id": "u-secret", "buyeruid": "buyer-secret", "keywords": "kw-secret",
                  "eids": [{"source": "x.example", "uids": [{"id": "eid-secret"}]}],
                  "data": [{"name": "d", "segment": [{"id": "seg-secret"}]}]},
            device={"ua": "ua", "ip": "203.0.113.77", "ifa": "ifa-secret", "geo": {"lat": 51.5074123, "lon": 0.1}},
        )
        body["site"]["publisher"]["id"] = account
        assert (await post(client, body)).status == 200
    await client.close()
    text = log_file.read_text()
    assert len(text.splitlines()) == 2 and '"bid_count":1' in text
    assert [s for s in SECRETS if s in text] == []


async def test_account_controls_decide_event_records(make_client, data_dir: Path, tmp_path: Path):
    """endpoints/events/event.go: LogNotificationEventObject gets the account's activity controls."""
    write_account(data_dir, "quiet", {**DENY_FILE, "events": {"enabled": True}})
    write_account(data_dir, "open", {"events": {"enabled": True}})
    log_file = tmp_path / "analytics.jsonl"
    client = await make_client({}, analytics={"file": {"filename": str(log_file)}})
    for account in ("quiet", "open"):
        assert (await client.get(f"/event?t=win&b=bid-{account}&a={account}")).status == 200
    await client.close()
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [r.get("account") for r in records] == ["open"]
