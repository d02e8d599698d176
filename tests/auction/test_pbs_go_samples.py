"""PBS-Go's own endpoint sample requests (``endpoints/openrtb2/sample-requests/``) that once answered
differently here (issue 38, item 7), each a row naming its sample and the PBS-Go code that decides it.

PBS-Go runs these samples through a test exchange that differs from its server in three ways, which the
rows keep apart from PBS-Go's behaviour: its mock bidders skip the bid validation middleware
(``exchange/bidder_validate_bids.go``: so a bid of 0 without a deal, or a seat left in another
currency, still shows), its params validator accepts anything unless ``realParamsValidator`` is set,
and the files outside the folders ``auction_test.go`` walks (``valid-whole/user-eids-*.json``) are not
run at all. The rows follow what PBS-Go's server does; where a sample shows the harness instead, the
row says so.

The real app answers in-process; the bidders are mock servers on real sockets (tests/auction/helpers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.auction.bids.accept import AuctionBid, RejectedBid, accept_bids
from hbserver.auction.bids.bidadjust import BidAdjustments
from tests.auction.helpers import EXTERNAL, MockBidders, bid
from tests.auction.test_auction_endpoint import post, seat_bids
from tests.conftest import write_account

Check = Callable[[int, str, MockBidders], None]


@dataclass(frozen=True)
class Sample:
    """One sample: the bidders that answer (code -> bids; None = no bid), host keys, the request (an
    auction body, or an AMP stored request with ``amp_query``) and what must hold of the answer."""

    bids: dict[str, list[dict[str, Any]] | None]
    request: dict[str, Any] | str  # a str: the stored request's text as stored (AMP)
    check: Check
    config: dict[str, Any] = field(default_factory=dict)
    amp_query: str = ""
    accounts: dict[str, Any] = field(default_factory=dict)


def site_request(imp_ext: dict[str, Any], **fields: Any) -> dict[str, Any]:
    imp = {"id": "my-imp-id", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": imp_ext}
    return {"id": "some-request-id", "site": {"page": "test.somepage.com"}, "imp": [imp], **fields}


APPNEXUS_BID = bid("my-imp-id", 2.0, "appnexus-bid", ext={"appnexus": {"bid_ad_type": 0}})
APPNEXUS = {"appnexus": {"placementId": 12883451}}


def answer(text: str) -> dict[str, Any]:
    return json.loads(text)


# --- the checks, one per sample -----------------------------------------------------------------------


def no_bids_no_cur(status: int, text: str, mock: MockBidders) -> None:
    data = answer(text)
    assert status == 200 and "seatbid" not in data
    assert "cur" not in data  # only a seat with bids writes the response's currency


def hard_alias_is_its_own_core_bidder(status: int, text: str, mock: MockBidders) -> None:
    assert status == 200, text
    [adform] = seat_bids(answer(text))["adform"]
    assert adform["ext"]["prebid"]["meta"] == {"adaptercode": "adform"}
    assert list(mock.received) == ["adform"]  # the alias's own endpoint (adapters.adform.endpoint)


def request_alias_names_its_bidder(status: int, text: str, mock: MockBidders) -> None:
    assert status == 200, text
    [alias] = seat_bids(answer(text))["alias1"]
    assert alias["ext"]["prebid"]["meta"] == {"adaptercode": "appnexus"}


def static_in_another_currency_drops_the_seat(status: int, text: str, mock: MockBidders) -> None:
    data = answer(text)
    assert status == 200 and "seatbid" not in data and "cur" not in data
    assert data["ext"]["errors"]["appnexus"] == [
        {"code": 999, "message": "Bid currency is not allowed. Was 'EUR', wants: ['USD']"}
    ]


def static_in_the_auction_currency(status: int, text: str, mock: MockBidders) -> None:
    data = answer(text)
    assert status == 200, text
    [appnexus] = seat_bids(data)["appnexus"]
    assert (appnexus["price"], data["cur"]) == (10.0, "EUR")
    assert (appnexus["ext"]["origbidcpm"], appnexus["ext"]["origbidcur"]) == (2.0, "USD")


def camel_case_buyeruids(status: int, text: str, mock: MockBidders) -> None:
    assert status == 200, text
    targeting = answer(text)["targeting"]
    assert targeting["hb_bidder"] == targeting["hb_bidder_YahooAds"] == "YahooAds"
    assert targeting["hb_pb_YahooAds"] == "2.00" and targeting["hb_cache_host_YahooA"] == "pbs.example"
    assert mock.received["yahooAds"][0]["user"]["buyeruid"] == "123"


def account_not_stored_gets_the_defaults(status: int, text: str, mock: MockBidders) -> None:
    assert status == 200, text
    assert [b["id"] for b in seat_bids(answer(text))["appnexus"]] == ["appnexus-bid"]


def refused(*lines: str, code: int = 400) -> Check:
    def check(status: int, text: str, mock: MockBidders) -> None:
        assert (status, text) == (code, "".join(f"Invalid request: {line}\n" for line in lines))
        assert mock.received == {}

    return check


def empty_ids_warned(status: int, text: str, mock: MockBidders) -> None:
    data = answer(text)
    assert status == 200, text
    assert [(w["code"], w["message"]) for w in data["ext"]["warnings"]["general"]] == [
        (10014, "request.user.eids[0].uids[0] removed due to empty ids"),
        (10014, "request.user.eids[2].uids[0] removed due to empty ids"),
        (10014, "request.user.eids[2].uids[1] removed due to empty ids"),
        (10013, "request.user.eids[2] (source: source-3) removed due to empty uids"),
    ]
    sent = mock.received["appnexus"][0]["user"]["ext"]["eids"]  # appnexus takes OpenRTB 2.5
    assert sent == [{"source": "source-1", "uids": [{"id": "id-a"}]}, {"source": "source-2", "uids": [{"id": "id-b"}]}]


def includeformat_alone(status: int, text: str, mock: MockBidders) -> None:
    assert status == 200, text
    [appnexus] = seat_bids(answer(text))["appnexus"]
    targeting = appnexus["ext"]["prebid"]["targeting"]
    assert targeting["hb_format"] == targeting["hb_format_appnexus"] == "banner"
    assert targeting["hb_cache_host"] == "pbs.example" and targeting["hb_cache_path_appnex"] == "/cache"
    assert not any(key.startswith("hb_cache_id") for key in targeting)  # nothing was cached


STATIC_EUR = {
    "mediatype": {"banner": {"*": {"some-deal-id": [{"adjtype": "static", "value": 10.0, "currency": "EUR"}]}}}
}
EUR_RATES = {"rates": {"EUR": {"USD": 2.0}}, "usepbsrates": False}
DEAL_BID = bid("my-imp-id", 2.0, "appnexus-bid", dealid="some-deal-id", ext={"appnexus": {"bid_ad_type": 0}})
EIDS = [
    {"source": "source-1", "uids": [{"id": ""}, {"id": "id-a"}]},
    {"source": "source-2", "uids": [{"id": "id-b"}]},
    {"source": "source-3", "uids": [{"id": ""}, {"id": ""}]},
]
DISCARD = (
    "Prebid-server has been configured to discard requests without a valid Account ID. "
    "Please reach out to the prebid server host."
)

SAMPLES = [
    # exchange/exchange.go buildBidResponse: Cur is set only from a seat with bids. The two
    # valid-whole/user-eids-*.json samples expect "USD" with no bids, but no PBS-Go test runs them.
    pytest.param(Sample({"appnexus": None}, site_request(APPNEXUS, cur=["EUR"]), no_bids_no_cur),
                 id="valid-whole/user-eids-empty-uids-removed:no-bids-no-cur"),
    # exchange/utils.go resolveBidder + exchange/bidder.go requestBid (AdapterCode: BidderCoreName): a
    # bidder-info alias (adform: aliasOf adf) is its own core bidder, with its own adapter and endpoint
    pytest.param(Sample({"adform": [bid("my-imp-id", 2.0, "adform-bid", ext={"prebid": {"type": "banner"}})]},
                        site_request({"adform": {"mid": "123"}}), hard_alias_is_its_own_core_bidder),
                 id="aliased/hard-alias"),
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]},
                        site_request({"alias1": {"placementId": 12883451}}, ext={"prebid": {"aliases": {
                            "alias1": "appnexus"}}}), request_alias_names_its_bidder),
                 id="aliased/request-alias"),
    # bidadjustment/apply.go Apply (static: the value, in its own currency, becomes the seat's), then
    # exchange/bidder_validate_bids.go validateCurrency. The sample (cur USD, static EUR) shows price 10
    # and cur EUR because its mock bidders skip that check; PBS-Go's server refuses the seat.
    pytest.param(Sample({"appnexus": [DEAL_BID]},
                        site_request(APPNEXUS, ext={"prebid": {"currency": EUR_RATES, "bidadjustments": STATIC_EUR}}),
                        static_in_another_currency_drops_the_seat),
                 id="bidadjustments/static:other-currency"),
    pytest.param(Sample({"appnexus": [DEAL_BID]},
                        site_request(APPNEXUS, cur=["EUR"], ext={"prebid": {
                            "currency": EUR_RATES, "bidadjustments": STATIC_EUR}}),
                        static_in_the_auction_currency),
                 id="bidadjustments/static:auction-currency"),
    # endpoints/openrtb2/auction.go validateUser (buyeruids names normalised) and amp_auction.go; the
    # sample's yahooAds params (placementId) pass only its mock params validator: yahooAds wants dcn, pos
    pytest.param(Sample({"yahooAds": [bid("my-imp-id", 2.0, "y1")]},
                        site_request({"prebid": {"bidder": {"YahooAds": {"dcn": "d", "pos": "p"}}}},
                                     user={"ext": {"prebid": {"buyeruids": {"YahooAds": "123"}}}}),
                        camel_case_buyeruids, amp_query="tag_id=101"),
                 id="amp/valid-supplementary/buyeruids-camel-case"),
    # account/account.go GetAccount: account_required refuses only a request naming no account
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]},
                        site_request(APPNEXUS, site={"page": "test.somepage.com", "publisher": {"id": "not_bad_acct"}}),
                        account_not_stored_gets_the_defaults, config={"account_required": True}),
                 id="account-required/with-account/required-with-acct"),
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]}, site_request(APPNEXUS), refused(DISCARD),
                        config={"account_required": True}),
                 id="account-required/no-account/required-no-acct"),
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]},
                        site_request(APPNEXUS, site={"page": "p.example", "publisher": {"id": "disabled_acct"}}),
                        refused("Prebid-server has disabled Account ID: disabled_acct, please reach out to the prebid "
                                "server host.", code=503),
                        config={"account_required": True}, accounts={"disabled_acct": {"disabled": True}}),
                 id="account-required/with-account/required-disabled-acct"),
    # ortb/request_validator.go validateImpExt (BidderTemporarilyDisabled, then the fatal text) and
    # exchange/adapter_util.go GetDisabledBidderWarningMessages; auction.go writes every error it had
    pytest.param(Sample({}, site_request(APPNEXUS), refused(
        'Bidder "appnexus" has been disabled on this instance of Prebid Server. '
        "Please work with the PBS host to enable this bidder again.",
        "request.imp[0].ext.prebid.bidder must contain at least one bidder",
    ), config={"adapters": {"appnexus": {"disabled": True}}}), id="disabled/bad/bad-bidder"),
    # endpoints/openrtb2/auction.go validateEIDs / validateUIDs: each removal warned, a UID's with
    # InvalidUserUIDsWarningCode (10014; the sample, never run, writes 10013 for all)
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]}, site_request(APPNEXUS, user={"eids": EIDS}), empty_ids_warned),
                 id="valid-whole/user-eids-empty-uids-removed"),
    # amp_auction.go loadRequestJSONForAmp: the stored request is decoded into a BidRequest first, so
    # one that is not a JSON object fails in json-iterator's words (amp_auction_test.go
    # TestAmpBadRequests runs invalid-whole/ as AMP stored requests)
    pytest.param(Sample({}, "malformed", refused("expect { or n, but found m"), amp_query="tag_id=101"),
                 id="amp:invalid-whole/malformed-bid-request"),
    pytest.param(Sample({}, "[1]", refused("expect { or n, but found ["), amp_query="tag_id=101"),
                 id="amp:stored-request-not-an-object"),
    # exchange/targeting.go setTargeting: hb_cache_host/hb_cache_path whenever a cache host is known
    pytest.param(Sample({"appnexus": [APPNEXUS_BID]},
                        site_request(APPNEXUS, ext={"prebid": {"targeting": {"includeformat": True}}}),
                        includeformat_alone),
                 id="valid-whole/exemplary/targeting-optional-includeformat-only"),
]


async def run(make_client, mock: MockBidders, data_dir: Path, sample: Sample) -> tuple[int, str]:
    for code, bids in sample.bids.items():
        if bids is not None:
            mock.bids[code] = bids
    adapters = {code: {"endpoint": mock.url(code)} for code in sample.bids}
    for code, settings in sample.config.get("adapters", {}).items():
        adapters[code] = {**adapters.get(code, {}), **settings}
    for account_id, settings in sample.accounts.items():
        write_account(data_dir, account_id, settings)
    client = await make_client({**sample.config, "adapters": adapters, "external_url": EXTERNAL})
    if sample.amp_query:
        tag = sample.amp_query.split("tag_id=")[1]
        stored = sample.request if isinstance(sample.request, str) else json.dumps(sample.request)
        (data_dir / "stored_requests" / f"{tag}.json").write_text(stored)
        response = await client.get(f"/openrtb2/amp?{sample.amp_query}")
    else:
        response = await post(client, sample.request)
    return response.status, await response.text()


@pytest.mark.parametrize("sample", SAMPLES)
async def test_pbs_go_sample(make_client, bidders, data_dir, sample: Sample) -> None:
    status, text = await run(make_client, bidders, data_dir, sample)
    sample.check(status, text, bidders)


def _static(currency: str) -> dict[str, Any]:
    return {"mediatype": {"banner": {"*": {"*": [{"adjtype": "static", "value": 3.0, "currency": currency}]}}}}


def _no_rates(amount: float, source: str, target: str) -> float:
    raise AssertionError("no conversion expected")


@pytest.mark.parametrize(
    ("rules", "kept", "error"),
    [
        (_static("USD"), [3.0, 3.0], None),  # the auction's currency: the static price stands
        (_static("EUR"), [], "Bid currency is not allowed. Was 'EUR', wants: ['USD']"),
        (_static("eur"), [], "Bid currency is not allowed. Was 'EUR', wants: ['USD']"),
        (_static("ZZZ"), [], "currency: tag is not a recognized currency"),  # goCurrency.ParseISO
    ],
    ids=["same-currency", "other-currency", "lower-case", "not-iso-4217"],
)
def test_static_adjustment_currency_is_the_seats(rules, kept, error):
    """bidadjustment/apply.go Apply then bidder_validate_bids.go validateCurrency, on the pure function:
    one error for the seat, and the analytics record sees each dropped bid with that reason."""
    adjustments, _ = BidAdjustments.from_request({"bidadjustments": rules}, None)
    bids = [TypedBid(bid("i1", 1.0, f"b{n}"), "banner") for n in (1, 2)]
    seen: list[AuctionBid | RejectedBid] = []
    accepted, errors = accept_bids(
        "alpha", "alpha", [BidderResponse(bids, "USD")], {"i1"}, "USD", _no_rates, adjustments, False, seen
    )
    assert [b.price for b in accepted] == kept
    assert [e.message for e in errors] == ([error] if error else [])
    reasons = [s.reason for s in seen if isinstance(s, RejectedBid)]
    assert reasons == ([error, error] if error else [])
