"""Seat non-bids: PBS-Go's codes, the ``ext.prebid.seatnonbid`` shape (exchange/seat_non_bids_test.go),
the call error mapping (exchange/non_bid_reason_test.go) and a bidder outcome's code, from built
outcomes and from real calls to loopback bidders."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, ErrorCode, RequestData, RequestInfo
from hbserver.adapters.base import TypedBid as Typed
from hbserver.adapters.generic import GenericAdapter
from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.bids.nonbid import NonBidReason, SeatNonBids, call_code, outcome_code
from hbserver.auction.exchange.fanout import BidderOutcome, HttpCall, finish_bidders, start_bidder
from hbserver.auction.exchange.split import BidderRequest
from hbserver.auction.request.validate import ResolvedBidder
from hbserver.bidders.registry import Bidder
from hbserver.web.bidclient import BidderClient
from tests.auction.helpers import MockBidders, bid

R = NonBidReason


@pytest.mark.parametrize(
    ("reason", "value"),
    [
        # PBS-Go exchange/non_bid_reason.go
        (R.ERROR_GENERAL, 100), (R.ERROR_TIMEOUT, 101), (R.ERROR_BIDDER_UNREACHABLE, 103),
        (R.RESPONSE_REJECTED_GENERAL, 300), (R.RESPONSE_REJECTED_BELOW_FLOOR, 301),
        (R.RESPONSE_REJECTED_CATEGORY_MAPPING_INVALID, 303), (R.RESPONSE_REJECTED_BELOW_DEAL_FLOOR, 304),
        (R.RESPONSE_REJECTED_CREATIVE_SIZE_NOT_ALLOWED, 351), (R.RESPONSE_REJECTED_CREATIVE_NOT_SECURE, 352),
        # PBS-Java BidRejectionReason
        (R.NO_BID, 0), (R.REQUEST_BLOCKED_GENERAL, 200), (R.REQUEST_BLOCKED_UNSUPPORTED_CHANNEL, 201),
        (R.REQUEST_BLOCKED_UNSUPPORTED_MEDIA_TYPE, 202), (R.REQUEST_BLOCKED_PRIVACY, 204),
    ],
    ids=lambda v: v.name if isinstance(v, NonBidReason) else str(v),
)
def test_codes(reason, value):
    assert int(reason) == value


def priced(imp_id: str, price: float) -> dict[str, Any]:
    return {"impid": imp_id, "price": price}


# TestRejectBid / TestRejectImps: (seat, imp or imps, code, bid) calls -> as_json
@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        pytest.param([("seat1", "Imp1", 100, priced("Imp1", 10))],
                     [{"nonbid": [{"impid": "Imp1", "statuscode": 100, "ext": {"prebid": {"bid": {"price": 10}}}}],
                       "seat": "seat1"}],
                     id="reject-bid-new-seat"),
        pytest.param([("seat1", "Imp1", 100, None), ("seat2", "Imp2", 100, priced("Imp2", 10))],
                     [{"nonbid": [{"impid": "Imp1", "statuscode": 100}], "seat": "seat1"},
                      {"nonbid": [{"impid": "Imp2", "statuscode": 100, "ext": {"prebid": {"bid": {"price": 10}}}}],
                       "seat": "seat2"}],
                     id="reject-bid-different-seat"),
        pytest.param([("seat1", "Imp1", 100, None), ("seat1", "Imp2", 100, priced("Imp2", 10))],
                     [{"nonbid": [{"impid": "Imp1", "statuscode": 100},
                                  {"impid": "Imp2", "statuscode": 100, "ext": {"prebid": {"bid": {"price": 10}}}}],
                       "seat": "seat1"}],
                     id="reject-bid-existing-seat"),
        pytest.param([("seat1", [], 300, None)], [], id="reject-imps-empty"),
        pytest.param([("seat1", ["imp1"], 300, None)],
                     [{"nonbid": [{"impid": "imp1", "statuscode": 300}], "seat": "seat1"}], id="reject-imps-one"),
        pytest.param([("seat1", ["imp1", "imp2"], 300, None)],
                     [{"nonbid": [{"impid": "imp1", "statuscode": 300}, {"impid": "imp2", "statuscode": 300}],
                       "seat": "seat1"}], id="reject-imps-many"),
        pytest.param([("seat0", ["imp0"], 0, None), ("seat1", ["imp1", "imp2"], 300, None)],
                     [{"nonbid": [{"impid": "imp0", "statuscode": 0}], "seat": "seat0"},
                      {"nonbid": [{"impid": "imp1", "statuscode": 300}, {"impid": "imp2", "statuscode": 300}],
                       "seat": "seat1"}], id="reject-imps-prepopulated"),
        pytest.param([("seat1", ["imp0"], 300, None), ("seat1", ["imp1", "imp2"], 300, None)],
                     [{"nonbid": [{"impid": "imp0", "statuscode": 300}, {"impid": "imp1", "statuscode": 300},
                                  {"impid": "imp2", "statuscode": 300}], "seat": "seat1"}],
                     id="reject-imps-prepopulated-same-seat"),
    ],
)
def test_seat_non_bid_builder(calls, expected):
    nonbids = SeatNonBids()
    for seat, imps, code, rejected in calls:
        if isinstance(imps, list):
            nonbids.add_imps(seat, imps, code)
        else:
            nonbids.add(seat, imps, code, rejected)
    assert nonbids.as_json() == expected
    assert bool(nonbids) is bool(expected)


@pytest.mark.parametrize(
    ("rejected", "kwargs", "expected"),
    [
        pytest.param(
            {"id": "b", "impid": "i", "price": 1.5, "adomain": ["a.com"], "cattax": 2, "cat": ["IAB1"],
             "dealid": "d", "w": 300, "h": 250, "dur": 15, "mtype": 2, "crid": "c", "adm": "<x/>",
             "ext": {"origbidcpm": 2.0, "origbidcur": "EUR", "other": 1}},
            {},
            b'{"price":1.5,"adomain":["a.com"],"cattax":2,"cat":["IAB1"],"dealid":"d","w":300,"h":250,"dur":15,'
            b'"mtype":2,"origbidcpm":2.0,"origbidcur":"EUR"}',
            id="every-field-in-order",
        ),
        pytest.param({"impid": "i", "price": 0, "w": 0, "h": 0, "adomain": [], "dealid": ""}, {}, b"{}",
                     id="zero-values-left-out"),
        pytest.param({"impid": "i", "price": 1.0, "ext": {"origbidcpm": 9.0}}, {"orig_cpm": 1.25, "orig_cur": "USD"},
                     b'{"price":1.0,"origbidcpm":1.25,"origbidcur":"USD"}', id="original-price-given"),
        pytest.param({"impid": "i", "price": True, "w": "300", "h": 250.0, "cat": [1]}, {}, b'{"h":250}',
                     id="wrong-types-left-out"),
    ],
)
def test_rejected_bid_object(rejected, kwargs, expected):
    nonbids = SeatNonBids()
    nonbids.add("seat", "i", R.RESPONSE_REJECTED_BELOW_FLOOR, rejected, **kwargs)
    entry = nonbids.as_json()[0]["nonbid"][0]
    assert (entry["impid"], entry["statuscode"]) == ("i", 301)
    assert orjson.dumps(entry["ext"]["prebid"]["bid"]) == expected


def test_json_key_order_and_accepted_bid():
    nonbids = SeatNonBids()
    accepted = AuctionBid("appnexus", "appnexus", {"id": "x", "impid": "imp1", "price": 0.9, "dealid": "dl",
                                                   "ext": {"origbidcpm": 1.0, "origbidcur": "USD"}},
                          "banner", 0.9, "imp1", True)
    nonbids.add_bid(accepted, R.RESPONSE_REJECTED_BELOW_DEAL_FLOOR)
    nonbids.add_imps("rubicon", ["imp1"], R.ERROR_TIMEOUT)
    assert len(nonbids) == 2
    assert orjson.dumps(nonbids.as_json()) == (
        b'[{"nonbid":[{"impid":"imp1","statuscode":304,"ext":{"prebid":{"bid":{"price":0.9,"dealid":"dl",'
        b'"origbidcpm":1.0,"origbidcur":"USD"}}}}],"seat":"appnexus"},'
        b'{"nonbid":[{"impid":"imp1","statuscode":101}],"seat":"rubicon"}]'
    )


REFUSED = ("Error calling the bidder: BidderClientError: cannot connect to 127.0.0.1:9: "
           "[Errno 111] Connect call failed ('127.0.0.1', 9)")


# Test_httpInfoToNonBidReason, in our error texts
@pytest.mark.parametrize(
    ("error", "code"),
    [
        pytest.param(BidderError("Timeout: the bidder did not answer before its deadline", ErrorCode.TIMEOUT),
                     R.ERROR_TIMEOUT, id="error-timeout"),
        pytest.param(BidderError("some_error"), R.ERROR_GENERAL, id="error-general"),
        pytest.param(BidderError(REFUSED), R.ERROR_BIDDER_UNREACHABLE, id="error-bidder-unreachable"),
        pytest.param(BidderError("Error calling the bidder: BidderClientError: cannot connect to nope.invalid:80: "
                                 f"[Errno {socket.EAI_NONAME}] Name or service not known"),
                     R.ERROR_BIDDER_UNREACHABLE, id="error-no-such-host"),
        pytest.param(BidderError("Error calling the bidder: BidderClientError: cannot connect to 10.0.0.1:80: "
                                 "[Errno 113] No route to host"), R.ERROR_GENERAL, id="other-connect-error"),
        pytest.param(BidderError("Server responded with failure status: 500. Set request.test = 1 for debugging "
                                 "info.", ErrorCode.BAD_SERVER_RESPONSE), R.ERROR_GENERAL, id="failure-status"),
    ],
)
def test_call_code(error, code):
    assert call_code(error) is code


def bidder_request(name: str, endpoint: str, imps: tuple[str, ...] = ("imp-1",)) -> BidderRequest:
    registered = Bidder(
        code=name, adapter="generic", disabled=False, endpoint=endpoint, gvl_vendor_id=0, media_types={},
        openrtb_version="2.5", modifying_vast_xml_allowed=False, sync_key=name, usersync_enabled=False,
    )  # fmt: skip
    request: dict[str, Any] = {
        "id": "req-1",
        "imp": [{"id": imp, "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"bidder": {}}} for imp in imps],
        "site": {"page": "https://news.example/a"},
    }
    return BidderRequest(name, ResolvedBidder(name, registered), request, False)


def outcome(
    *, bids: int = 0, calls: list[BidderError | None] | None = None, errors: list[BidderError] | None = None,
    answered: bool = True, tmax_timeout: bool = False,
) -> BidderOutcome:
    """An outcome as the fan-out leaves it: ``calls`` (None = answered 200), ``answered``: the adapter
    read a response (holding ``bids`` bids)."""
    made = [HttpCall(RequestData("POST", "http://127.0.0.1/x"), 200 if e is None else 0, b"", e) for e in calls or []]
    answers = [BidderResponse([Typed({"id": f"b{i}", "impid": "imp-1"}, "banner") for i in range(bids)])]
    if not answered:
        answers = []
    return BidderOutcome(bidder_request("b", "http://127.0.0.1/x"), None, answers, list(errors or []), made,
                         tmax_timeout=tmax_timeout)


TIMEOUT = BidderError("Timeout: no time left for the bidder before the auction deadline", ErrorCode.TIMEOUT)
STATUS = BidderError("Server responded with failure status: 500.", ErrorCode.BAD_SERVER_RESPONSE)
BAD_JSON = BidderError("invalid JSON", ErrorCode.BAD_SERVER_RESPONSE)


@pytest.mark.parametrize(
    ("made", "code"),
    [
        pytest.param(outcome(bids=1, calls=[None]), None, id="bid"),
        pytest.param(outcome(bids=1, calls=[None, STATUS], errors=[STATUS]), None, id="bid-and-failed-call"),
        pytest.param(outcome(calls=[TIMEOUT], errors=[TIMEOUT], tmax_timeout=True, answered=False), R.ERROR_TIMEOUT,
                     id="no-time-left"),
        pytest.param(outcome(calls=[TIMEOUT], errors=[TIMEOUT], answered=False), R.ERROR_TIMEOUT, id="timeout"),
        pytest.param(outcome(calls=[BidderError(REFUSED)], answered=False), R.ERROR_BIDDER_UNREACHABLE, id="refused"),
        pytest.param(outcome(calls=[STATUS], answered=False), R.ERROR_GENERAL, id="failure-status"),
        pytest.param(outcome(errors=[BidderError("missing param", ErrorCode.BAD_INPUT)], answered=False),
                     R.REQUEST_BLOCKED_GENERAL, id="no-request-made"),
        pytest.param(outcome(calls=[None], errors=[BAD_JSON], answered=False), R.ERROR_GENERAL, id="unreadable-answer"),
        pytest.param(outcome(calls=[None], answered=False), R.NO_BID, id="no-bid-204"),
        pytest.param(outcome(calls=[None]), R.NO_BID, id="no-bid-empty-seatbid"),
        pytest.param(outcome(), R.NO_BID, id="stored-response-without-bids"),
    ],
)
def test_outcome_code(made, code):
    assert outcome_code(made) is code


def auction_bid(imp_id: str) -> AuctionBid:
    return AuctionBid("b", "b", {"id": "x", "impid": imp_id, "price": 1.0}, "banner", 1.0, imp_id, False)


@pytest.mark.parametrize(
    ("made", "accepted", "expected"),
    [
        pytest.param(outcome(calls=[None], answered=False), [], [("imp-1", 0), ("imp-2", 0)], id="no-bid-each-imp"),
        pytest.param(outcome(bids=1, calls=[None]), ["imp-1"], [("imp-2", 0)], id="bid-on-one-imp"),
        pytest.param(outcome(bids=1, calls=[None]), ["imp-1", "imp-2"], [], id="bid-on-every-imp"),
        pytest.param(outcome(calls=[TIMEOUT], answered=False), [], [("imp-1", 101), ("imp-2", 101)], id="timeout"),
    ],
)
def test_add_outcome_one_entry_per_imp(made, accepted, expected):
    made.bidder.request["imp"].append({"id": "imp-2", "banner": {}})
    nonbids = SeatNonBids()
    nonbids.add_outcome(made, [auction_bid(imp) for imp in accepted])
    got = [(e["impid"], e["statuscode"]) for seat in nonbids.as_json() for e in seat["nonbid"]]
    assert got == expected
    assert all(seat["seat"] == "b" for seat in nonbids.as_json())


def test_add_outcome_uses_each_failed_calls_imps():
    made = outcome(bids=1, calls=[None, BidderError(REFUSED)])
    made.calls[1].call.imp_ids = ["imp-2"]
    made.bidder.request["imp"].extend([{"id": "imp-2"}, {"id": "imp-3"}])
    nonbids = SeatNonBids()
    nonbids.add_outcome(made, [auction_bid("imp-1")])
    assert nonbids.as_json() == [
        {"nonbid": [{"impid": "imp-2", "statuscode": 103}, {"impid": "imp-3", "statuscode": 0}], "seat": "b"}
    ]


# ---- real calls on loopback ---------------------------------------------------------------------


@pytest.fixture
async def client() -> AsyncIterator[BidderClient]:
    http = BidderClient()
    yield http
    await http.close()


def closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        pytest.param("bid", None, id="bid"),
        pytest.param("no-bid", R.NO_BID, id="no-bid-204"),
        pytest.param("status", R.ERROR_GENERAL, id="status-500"),
        pytest.param("slow", R.ERROR_TIMEOUT, id="timeout"),
        pytest.param("refused", R.ERROR_BIDDER_UNREACHABLE, id="connection-refused"),
    ],
)
async def test_outcome_code_of_real_calls(bidders: MockBidders, client: BidderClient, setup: str, code):
    name = "mock"
    endpoint = f"http://127.0.0.1:{closed_port()}/mock" if setup == "refused" else bidders.url(name)
    if setup == "bid":
        bidders.bids[name] = [bid("imp-1", 1.0)]
    elif setup == "status":
        bidders.status[name] = 500
    elif setup == "slow":
        bidders.bids[name] = [bid("imp-1", 1.0)]
        bidders.delay[name] = 1.0
    loop = asyncio.get_running_loop()
    now = loop.time()
    request = bidder_request(name, endpoint)
    adapter = GenericAdapter(AdapterConfig(name, endpoint))
    made = start_bidder(request, adapter, RequestInfo(name, "generic"), client, now + 0.3, {}, now)
    await finish_bidders([made], client)
    assert outcome_code(made) is code
    nonbids = SeatNonBids()
    nonbids.add_outcome(made, [auction_bid("imp-1")] if code is None else [])
    expected = [] if code is None else [{"nonbid": [{"impid": "imp-1", "statuscode": int(code)}], "seat": name}]
    assert nonbids.as_json() == expected
