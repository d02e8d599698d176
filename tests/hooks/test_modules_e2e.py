"""The five modules through the real server, configured as PBS hosts configure them (host
``hooks.modules`` and execution plan, account ``hooks.modules``), each showing its effect on the
bidders' requests or the answer (issue 41)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids
from tests.conftest import write_account

MRAID = '<script src="mraid.js"></script>'


def host(module: str, stages: dict[str, str], section: dict[str, Any] | None = None) -> dict[str, Any]:
    """The host's hooks: the module enabled (PBS-Go's vendor.module layout or PBS-Java's code) and a plan."""
    vendor, dot, name = module.partition(".")
    enabled = {"enabled": True, **(section or {})}
    modules = {vendor: {name: enabled}} if dot else {module: enabled}
    groups = {stage: {"groups": [{"timeout": 100, "hook-sequence": [{"module-code": module, "hook-impl-code": code}]}]}
              for stage, code in stages.items()}  # fmt: skip  (PBS-Java's kebab keys, accepted as they are)
    return {"hooks": {"enabled": True, "modules": modules,
                      "host_execution_plan": {"endpoints": {"/openrtb2/auction": {"stages": groups}}}}}  # fmt: skip


def account(module: str, section: dict[str, Any]) -> dict[str, Any]:
    vendor, dot, name = module.partition(".")
    return {"hooks": {"modules": {vendor: {name: section}} if dot else {module: section}}}


def check_ortb2blocking(received: dict[str, Any], answer: dict[str, Any]) -> None:
    assert received["alpha"][0]["badv"] == ["bad.example"]
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["good"]  # the bad.example bid dropped


def check_rulesengine(received: dict[str, Any], answer: dict[str, Any]) -> None:
    assert len(received["alpha"]) == 2 and len(received["beta"]) == 1  # beta excluded once the trees are built


def check_request_correction(received: dict[str, Any], answer: dict[str, Any]) -> None:
    assert received["alpha"][-1]["device"]["ua"].strip() == "Mozilla/5.0 (Linux)"  # PBS-Java leaves the space


def check_response_correction(received: dict[str, Any], answer: dict[str, Any]) -> None:
    corrected = seat_bids(answer)["alpha"][0]
    assert corrected["ext"]["prebid"]["type"] == "banner"
    assert corrected["ext"]["prebid"]["meta"]["mediaType"] == "video"


def check_richmedia_filter(received: dict[str, Any], answer: dict[str, Any]) -> None:
    assert [b["id"] for b in seat_bids(answer)["alpha"]] == ["good"]
    assert {"code": 5, "message": "Invalid bid", "impIds": ["imp-1"]} in answer["ext"]["errors"]["alpha"]
    nonbids = {(n["seat"], b["statuscode"]) for n in answer["ext"]["prebid"]["seatnonbid"] for b in n["nonbid"]}
    assert ("alpha", 350) in nonbids


APP = {"bundle": "com.example", "publisher": {"id": "1001"}, "ext": {"prebid": {"source": "prebid-mobile",
                                                                                "version": "2.0.0"}}}  # fmt: skip
ROWS = [
    pytest.param(
        host("prebid.ortb2blocking", {"bidder_request": "ortb2blocking-bidder-request",
                                      "raw_bidder_response": "ortb2blocking-raw-bidder-response"}),
        account("prebid.ortb2blocking", {"attributes": {"badv": {"blocked_adomain": ["bad.example"],
                                                                 "enforce_blocks": True}}}),
        {"alpha": [bid("imp-1", 2.0, "bad", adomain=["bad.example"]),
                   bid("imp-1", 1.0, "good", adomain=["ok.example"])]},
        {}, 1, check_ortb2blocking, id="prebid.ortb2blocking",
    ),
    pytest.param(
        host("prebid.rulesengine", {"processed_auction_request": "rulesengine-hook"}),
        account("prebid.rulesengine", {"enabled": True, "rulesets": [{
            "stage": "processed_auction_request", "name": "no-beta-on-web",
            "modelgroups": [{"schema": [{"function": "channel"}],
                             "rules": [{"conditions": ["web"], "results": [
                                 {"function": "excludeBidders", "args": {"bidders": ["beta"]}}]}]}]}]}),
        {"alpha": [bid("imp-1", 2.0, "a1")], "beta": [bid("imp-1", 1.0, "b1")]},
        {"ext": {"prebid": {"channel": {"name": "web"}}}}, 2, check_rulesengine, id="prebid.rulesengine",
    ),
    pytest.param(
        host("pb-request-correction", {"processed_auction_request": "pb-request-correction-hook"}),
        account("pb-request-correction", {"enabled": True, "pbsdk-ua-cleanup": True}),
        {"alpha": [bid("imp-1", 2.0)]},
        {"app": APP, "device": {"ua": "Mozilla/5.0 (Linux) PrebidMobile/2.0.0", "ip": "203.0.113.77"}, "site": None},
        1, check_request_correction, id="pb-request-correction",
    ),
    pytest.param(
        host("pb-response-correction", {"all_processed_bid_responses": "pb-response-correction-hook"}),
        account("pb-response-correction", {"enabled": True, "app-video-html": {"enabled": True}}),
        {"alpha": [bid("imp-1", 2.0, "v1", mtype=2, adm="<div>html, not VAST</div>")]},
        {"app": APP, "site": None, "imp": [{"id": "imp-1", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480},
                                            "ext": {"prebid": {"bidder": {"alpha": {}}}}}]},
        1, check_response_correction, id="pb-response-correction",
    ),
    pytest.param(
        host("pb-richmedia-filter", {"all_processed_bid_responses": "pb-richmedia-filter-hook"},
             {"filter-mraid": True, "mraid-script-pattern": MRAID}),
        {},
        {"alpha": [bid("imp-1", 3.0, "rich", adm=f"<div>{MRAID}</div>"), bid("imp-1", 1.0, "good")]},
        {"ext": {"prebid": {"returnallbidstatus": True}}}, 1, check_richmedia_filter, id="pb-richmedia-filter",
    ),
]


@pytest.mark.parametrize(("hooks", "account_settings", "bids", "fields", "requests", "check"), ROWS)
async def test_module_runs_as_a_pbs_host_configures_it(make_client, bidders, data_dir: Path, hooks, account_settings,
                                                        bids, fields, requests, check):  # fmt: skip
    bidders.bids.update(bids)
    write_account(data_dir, "1001", account_settings)
    client = await make_client({**bidder_config(bidders, *bids), **hooks})
    body = auction_request(banner_imp("imp-1", **{name: {} for name in bids}))
    for key, value in fields.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    for _ in range(requests):
        response = await post(client, body)
        assert response.status == 200, await response.text()
    check(bidders.received, await response.json())
