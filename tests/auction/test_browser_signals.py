"""Browser privacy signals into the auction (Sec-GPC, Sec-Browsing-Topics, Sec-Cookie-Deprecation),
end to end through /openrtb2/auction and /openrtb2/amp to a mock bidder: each rule a row naming its
PBS-Go source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_amp import amp_stored, store
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account

AUCTION_GO = "endpoints/openrtb2/auction.go"
TOPICS_GO = "privacysandbox/topics.go"
TOPICS = "(1 2);v=chrome.1:1:2, ();p=P00000000000"
SANDBOX = {"privacy": {"privacysandbox": {"topicsdomain": "ads.example", "cookiedeprecation": {"enabled": True}}}}
DENY_GPC = {"privacy": {"allowactivities": {"fetchBids": {"rules": [{"condition": {"gpc": "1"}, "allow": False}]}}}}
TOPIC_DATA = {"name": "ads.example", "segment": [{"id": "1"}, {"id": "2"}], "ext": {"segtax": 600, "segclass": "2"}}


def regs_ext(sent: dict[str, Any]) -> Any:
    return (sent.get("regs") or {}).get("ext")


def cdep(sent: dict[str, Any]) -> Any:
    return ((sent.get("device") or {}).get("ext") or {}).get("cdep")


def user_data(sent: dict[str, Any]) -> Any:
    return (sent.get("user") or {}).get("data")


ROWS = [
    # (id, source, account settings, request fields, headers, what the bidder got, warnings expected)
    ("gpc-header-sets-regs-ext-gpc", AUCTION_GO + " setGPCImplicitly", None, {}, {"Sec-GPC": "1"},
     lambda sent: regs_ext(sent) == {"gpc": "1"}, []),
    ("gpc-request-value-kept", AUCTION_GO + " setGPCImplicitly", None, {"regs": {"ext": {"gpc": "0", "x": 1}}},
     {"Sec-GPC": "1"}, lambda sent: regs_ext(sent) == {"gpc": "0", "x": 1}, []),
    ("gpc-joins-other-regs-ext-keys", AUCTION_GO + " setGPCImplicitly", None, {"regs": {"coppa": 0, "ext": {"x": 1}}},
     {"Sec-GPC": "1"}, lambda sent: regs_ext(sent) == {"x": 1, "gpc": "1"} and sent["regs"]["coppa"] == 0, []),
    ("gpc-other-value-ignored", AUCTION_GO + " setGPCImplicitly", None, {}, {"Sec-GPC": "0"},
     lambda sent: regs_ext(sent) is None, []),
    ("topics-need-the-account-domain", AUCTION_GO + " setSecBrowsingTopicsImplicitly", None, {},
     {"Sec-Browsing-Topics": TOPICS}, lambda sent: user_data(sent) is None, []),
    ("topics-into-user-data", TOPICS_GO + " UpdateUserDataWithTopics", SANDBOX, {"user": {"id": "u1"}},
     {"Sec-Browsing-Topics": TOPICS}, lambda sent: user_data(sent) == [TOPIC_DATA] and sent["user"]["id"] == "u1", []),
    ("topics-merged-into-the-same-taxonomy", TOPICS_GO + " findNewSegIDs", SANDBOX,
     {"user": {"data": [{"name": "ads.example", "segment": [{"id": "2"}], "ext": {"segtax": 600, "segclass": "2"}}]}},
     {"Sec-Browsing-Topics": TOPICS},
     lambda sent: user_data(sent)[0]["segment"] == [{"id": "2"}, {"id": "1"}] and len(user_data(sent)) == 1, []),
    ("topics-warning-hidden-without-debug", TOPICS_GO + " formatWarning (DebugWarning)", SANDBOX, {},
     {"Sec-Browsing-Topics": "bad"}, lambda sent: user_data(sent) is None, []),
    ("topics-warning-shown-with-debug", TOPICS_GO + " formatWarning (DebugWarning)", SANDBOX, {"test": 1},
     {"Sec-Browsing-Topics": "bad"}, lambda sent: user_data(sent) is None,
     [{"code": 10012, "message": "Invalid field in Sec-Browsing-Topics header: bad"}]),
    ("cdep-needs-the-account-switch", AUCTION_GO + " validateOrFillCookieDeprecation", None, {},
     {"Sec-Cookie-Deprecation": "label_only_1"}, lambda sent: cdep(sent) is None, []),
    ("cdep-into-device-ext", AUCTION_GO + " validateOrFillCookieDeprecation", SANDBOX, {},
     {"Sec-Cookie-Deprecation": "label_only_1"}, lambda sent: cdep(sent) == "label_only_1", []),
    ("cdep-request-value-kept", AUCTION_GO + " validateOrFillCookieDeprecation", SANDBOX,
     {"device": {"ua": "ua", "ext": {"cdep": "mine"}}}, {"Sec-Cookie-Deprecation": "label"},
     lambda sent: cdep(sent) == "mine", []),
    ("cdep-over-100-bytes-warned", AUCTION_GO + " validateOrFillCookieDeprecation", SANDBOX, {},
     {"Sec-Cookie-Deprecation": "x" * 101}, lambda sent: cdep(sent) is None,
     [{"code": 10011, "message": "request.device.ext.cdep must not exceed 100 characters"}]),
]


@pytest.mark.parametrize(("source", "account", "fields", "headers", "check", "warnings"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
async def test_browser_signals_reach_the_bidder(
    make_client, bidders, data_dir: Path, source, account, fields, headers, check, warnings
):
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    if account is not None:
        write_account(data_dir, "1001", account)
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(**fields)
    response = await post(client, body, headers=headers)
    assert response.status == 200, await response.text()
    sent = bidders.received["alpha"][0]
    assert check(sent), (source, sent)
    data = await response.json()
    general = (data["ext"].get("warnings") or {}).get("general", [])
    assert [w for w in general if w["code"] in (10011, 10012)] == warnings, source
    expected_observe = "?1" if "Sec-Browsing-Topics" in headers else None
    assert response.headers.get("Observe-Browsing-Topics") == expected_observe  # auction.go setBrowsingTopicsHeader


async def test_gpc_header_meets_an_activity_gpc_condition(make_client, bidders, data_dir: Path):
    """Sec-GPC: 1 becomes regs.ext.gpc before the activity controls read it (auction.go setGPCImplicitly)."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "1001", DENY_GPC)
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, auction_request(banner_imp()), headers={"Sec-GPC": "1"})
    data = await response.json()
    assert "alpha" not in bidders.received and data["ext"]["warnings"]["alpha"][0]["code"] == 10017
    await post(client, auction_request(banner_imp()))
    assert len(bidders.received["alpha"]) == 1  # without the header the rule does not match


async def test_refused_request_still_observes_topics(make_client, bidders):
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, {"id": "x"}, headers={"Sec-Browsing-Topics": TOPICS})
    assert response.status == 400 and response.headers["Observe-Browsing-Topics"] == "?1"
    unreadable = await client.post(  # a body that cannot be read (bad gzip): refused before it is parsed
        "/openrtb2/auction", data=b"not gzip", headers={"Content-Encoding": "gzip", "Sec-Browsing-Topics": TOPICS}
    )
    assert unreadable.status == 400 and unreadable.headers["Observe-Browsing-Topics"] == "?1"


async def test_amp_visits_carry_the_signals_on_every_path(make_client, bidders, data_dir: Path):
    """The AMP endpoint: first visit (full path), second (prepared), later ones (call plan), with and
    without the headers: the signals are added each time and never leak into a visit without them."""
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    store(data_dir, "101", amp_stored("alpha"))
    write_account(data_dir, "1001", SANDBOX)
    client = await make_client(bidder_config(bidders, "alpha"))
    url = "/openrtb2/amp?tag_id=101&account=1001"
    with_signals = {"Sec-GPC": "1", "Sec-Browsing-Topics": TOPICS, "Sec-Cookie-Deprecation": "label_only_1"}
    for visit in range(4):
        response = await client.get(url, headers=with_signals)
        assert response.status == 200 and response.headers["Observe-Browsing-Topics"] == "?1"
        sent = bidders.received["alpha"][-1]
        assert regs_ext(sent) == {"gpc": "1"}, visit
        assert user_data(sent) == [TOPIC_DATA] and cdep(sent) == "label_only_1", visit
    for visit in range(4):
        response = await client.get(url)
        assert response.status == 200 and "Observe-Browsing-Topics" not in response.headers
        sent = bidders.received["alpha"][-1]
        assert regs_ext(sent) is None and user_data(sent) is None and cdep(sent) is None, visit
    assert len(bidders.received["alpha"]) == 8
    assert json.dumps(bidders.received["alpha"][-1]).count("ads.example") == 0


async def test_amp_call_plan_keeps_gpc_apart(make_client, bidders, data_dir: Path):
    """Sec-GPC alone does not leave the AMP call plan: the plan of a visit with it carries regs.ext.gpc,
    the plan of a visit without it does not (auction.go setGPCImplicitly, on every AMP path)."""
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    store(data_dir, "101", amp_stored("alpha"))
    client = await make_client(bidder_config(bidders, "alpha"))
    url = "/openrtb2/amp?tag_id=101&account=1001"
    for visit in range(8):
        gpc = visit % 2 == 0
        response = await client.get(url, headers={"Sec-GPC": "1"} if gpc else {})
        assert response.status == 200
        sent = bidders.received["alpha"][-1]
        assert regs_ext(sent) == ({"gpc": "1"} if gpc else None), visit
        assert (bidders.headers["alpha"][-1].get("Sec-GPC") == "1") is gpc, visit
