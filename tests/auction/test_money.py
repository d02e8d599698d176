"""Issue 19 end to end: the real app, mock bidders on a socket. Bid adjustments (factors, media-type
factors, rules), multibid targeting and the account's bid limit, alternate bidder codes, seat-non-bid,
ad-server targeting. The rules themselves are table-tested in test_bidadjust, test_multibid,
test_altcodes, test_nonbid and test_adservertargeting; these rows show the auction applies them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids
from tests.conftest import write_account


async def run(make_client, bidders, prebid: dict[str, Any], *, imp=None, config=None) -> dict[str, Any]:
    client = await make_client({**bidder_config(bidders, "alpha", "beta"), **(config or {})})
    body = auction_request(imp or banner_imp("imp-1", alpha={}, beta={}))
    body["ext"]["prebid"].update(prebid)
    response = await post(client, body)
    assert response.status == 200, await response.text()
    return await response.json()


@pytest.mark.parametrize(
    ("prebid", "alpha_price"),
    [
        ({}, 2.0),
        ({"bidadjustmentfactors": {"alpha": 0.5}}, 1.0),
        ({"bidadjustmentfactors": {"ALPHA": 0.9}}, 1.8),
        ({"bidadjustmentfactors": {"mediatypes": {"banner": {"alpha": 0.25}}}}, 0.5),
        ({"bidadjustmentfactors": {"mediatypes": {"video": {"alpha": 0.25}}}}, 2.0),
        ({"bidadjustments": {"mediatype": {"banner": {"alpha": {"*": [{"adjtype": "multiplier", "value": 1.5}]}}}}},
         3.0),
        ({"bidadjustments": {"mediatype": {"*": {"*": {"*": [{"adjtype": "cpm", "value": 0.5, "currency": "USD"}]}}}}},
         1.5),
        ({"bidadjustments": {"mediatype": {"banner": {"*": {"*": [{"adjtype": "static", "value": 4,
                                                                     "currency": "USD"}]}}}}}, 4.0),
        ({"bidadjustmentfactors": {"alpha": 0.5},
          "bidadjustments": {"mediatype": {"banner": {"alpha": {"*": [{"adjtype": "cpm", "value": 0.25,
                                                                         "currency": "USD"}]}}}}}, 0.75),
    ],
    ids=["none", "factor", "factor-any-case", "mediatype-factor", "other-mediatype-factor", "rule-multiplier",
         "rule-cpm-wildcards", "rule-static", "factor-then-rule"],
)
async def test_bid_adjustments(make_client, bidders, prebid, alpha_price):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    data = await run(make_client, bidders, prebid)
    alpha = seat_bids(data)["alpha"][0]
    assert alpha["price"] == pytest.approx(alpha_price)
    assert alpha["ext"]["origbidcpm"] == 2.0


async def test_account_bid_adjustment_rules_apply_where_the_request_has_none(make_client, bidders, data_dir):
    rule = {"mediatype": {"banner": {"alpha": {"*": [{"adjtype": "multiplier", "value": 0.5}]}}}}
    write_account(data_dir, "1001", {"bidadjustments": rule})
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 2.0, "b1")]
    data = await run(make_client, bidders, {})
    seats = seat_bids(data)
    assert (seats["alpha"][0]["price"], seats["beta"][0]["price"]) == (1.0, 2.0)


THREE_BIDS = [bid("imp-1", 3.0, "a1"), bid("imp-1", 2.0, "a2"), bid("imp-1", 1.0, "a3")]


async def test_multibid_targets_extra_bids_under_the_prefix(make_client, bidders):
    bidders.bids["alpha"] = list(THREE_BIDS)
    bidders.bids["beta"] = [bid("imp-1", 0.5, "b1")]
    multibid = [{"bidder": "alpha", "maxbids": 2, "targetbiddercodeprefix": "alph"}]
    data = await run(make_client, bidders, {"multibid": multibid})
    by_id = {b["id"]: b for b in seat_bids(data)["alpha"]}
    assert set(by_id) == {"a1", "a2", "a3"}  # PBS-Go: maxbids limits targeting, not the response
    assert by_id["a1"]["ext"]["prebid"]["targeting"]["hb_pb_alpha"] == "3.00"
    assert by_id["a1"]["ext"]["prebid"]["targeting"]["hb_pb"] == "3.00"
    second = by_id["a2"]["ext"]["prebid"]["targeting"]
    assert second["hb_pb_alph2"] == "2.00" and second["hb_bidder_alph2"] == "alph2" and "hb_pb" not in second
    assert "targeting" not in by_id["a3"]["ext"]["prebid"]
    # each bidder's request carries its own multibid entry (PBS-Go buildRequestExtMultiBid)
    assert bidders.received["alpha"][0]["ext"]["prebid"]["multibid"] == multibid
    assert "multibid" not in bidders.received["beta"][0].get("ext", {}).get("prebid", {})


async def test_multibid_warning_and_account_bid_limit(make_client, bidders, data_dir):
    write_account(data_dir, "1001", {"default_bid_limit": 1})
    bidders.bids["alpha"] = list(THREE_BIDS)
    data = await run(make_client, bidders, {"multibid": [{"bidder": "alpha"}]})
    assert [b["id"] for b in seat_bids(data)["alpha"]] == ["a1"]  # the account's limit drops the rest
    [warning] = data["ext"]["warnings"]["general"]
    assert warning["code"] == 10006 and "maxBids not defined" in warning["message"]


@pytest.mark.parametrize(
    ("codes", "account", "kept"),
    [
        (None, None, False),
        ({"enabled": True, "bidders": {"amx": {"enabled": True, "allowedbiddercodes": ["*"]}}}, None, True),
        ({"enabled": True, "bidders": {"amx": {"enabled": True, "allowedbiddercodes": ["other"]}}}, None, False),
        (None, {"enabled": True, "bidders": {"amx": {"enabled": True, "allowedbiddercodes": ["agency"]}}}, True),
        ({"enabled": False}, {"enabled": True, "bidders": {"amx": {"enabled": True}}}, False),
    ],
    ids=["not-configured", "request-any", "request-other-code", "account-allows", "request-beats-account"],
)
async def test_alternate_bidder_codes(make_client, bidders, data_dir, codes, account, kept):
    if account is not None:
        write_account(data_dir, "1001", {"alternatebiddercodes": account})
    # amx takes the seat from bid.ext.bc, as PBS-Go's adapter
    bidders.bids["amx"] = [bid("imp-1", 2.0, "x1", ext={"bc": "agency"}), bid("imp-1", 1.0, "x2")]
    client = await make_client({"adapters": {"amx": {"endpoint": bidders.url("amx")}}, "external_url": "http://e"})
    body = auction_request(banner_imp("imp-1", amx={}))
    if codes is not None:
        body["ext"]["prebid"]["alternatebiddercodes"] = codes
    data = await (await post(client, body)).json()
    seats = seat_bids(data)
    assert [b["id"] for b in seats["amx"]] == ["x2"]
    assert ("agency" in seats) is kept
    if kept:
        assert seats["agency"][0]["ext"]["prebid"]["targeting"]["hb_bidder_agency"] == "agency"
        assert seats["agency"][0]["ext"]["prebid"]["meta"]["adaptercode"] == "amx"
    else:
        assert data["ext"]["warnings"]["amx"][0]["code"] == 10005


async def test_returnallbidstatus_reports_every_non_bid(make_client, bidders, data_dir):
    write_account(data_dir, "1001", {"privacy": {"allowactivities": {"fetchBids": {
        "rules": [{"condition": {"componentName": ["gamma"]}, "allow": False}]}}}})
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]  # bids on imp-1 only
    bidders.bids["beta"] = None  # 204: no bid
    client = await make_client(bidder_config(bidders, "alpha", "beta", "gamma", "delta"))
    bidders.delay["delta"] = 2.0
    bidders.bids["delta"] = [bid("imp-1", 9.0, "d1")]
    imps = [banner_imp("imp-1", alpha={}, beta={}, gamma={}, delta={}), banner_imp("imp-2", alpha={})]
    body = auction_request(*imps)
    body["tmax"] = 300
    body["ext"]["prebid"]["returnallbidstatus"] = True
    data = await (await post(client, body)).json()
    nonbids = {entry["seat"]: entry["nonbid"] for entry in data["ext"]["prebid"]["seatnonbid"]}
    assert nonbids["alpha"] == [{"impid": "imp-2", "statuscode": 0}]
    assert nonbids["beta"] == [{"impid": "imp-1", "statuscode": 0}]
    assert nonbids["gamma"] == [{"impid": "imp-1", "statuscode": 204}]
    assert nonbids["delta"] == [{"impid": "imp-1", "statuscode": 101}]


async def test_no_seatnonbid_without_returnallbidstatus(make_client, bidders):
    bidders.bids["beta"] = None
    data = await run(make_client, bidders, {})
    assert "seatnonbid" not in data["ext"]["prebid"]


async def test_adservertargeting(make_client, bidders):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    targets = [
        {"key": "hb_static", "source": "static", "value": "fixed"},
        {"key": "hb_page", "source": "bidrequest", "value": "site.page"},
        {"key": "hb_crid_{{BIDDER}}", "source": "bidresponse", "value": "seatbid.bid.crid"},
        {"key": "hb_bad", "source": "bidrequest", "value": "site.nothere"},
    ]
    data = await run(make_client, bidders, {"adservertargeting": targets})
    targeting = seat_bids(data)["alpha"][0]["ext"]["prebid"]["targeting"]
    assert targeting["hb_static"] == "fixed"
    assert targeting["hb_page"] == "https://news.example/a"
    assert targeting["hb_crid_alpha"] == "cr-a1"
    assert targeting["hb_pb"] == "2.00"  # the auction's own keys stay
    assert any(w["code"] == 10007 for w in data["ext"]["warnings"]["general"])
