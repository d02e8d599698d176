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
        "rules": [{"condition": {"componentName": ["gamma2"]}, "allow": False}]}}}})
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]  # bids on imp-1 only
    bidders.bids["beta"] = None  # 204: no bid
    client = await make_client(bidder_config(bidders, "alpha", "beta", "gamma2", "delta"))
    bidders.delay["delta"] = 2.0
    bidders.bids["delta"] = [bid("imp-1", 9.0, "d1")]
    imps = [banner_imp("imp-1", alpha={}, beta={}, gamma2={}, delta={}), banner_imp("imp-2", alpha={})]
    body = auction_request(*imps)
    body["tmax"] = 300
    body["ext"]["prebid"]["returnallbidstatus"] = True
    data = await (await post(client, body)).json()
    nonbids = {entry["seat"]: entry["nonbid"] for entry in data["ext"]["prebid"]["seatnonbid"]}
    assert nonbids["alpha"] == [{"impid": "imp-2", "statuscode": 0}]
    assert nonbids["beta"] == [{"impid": "imp-1", "statuscode": 0}]
    assert nonbids["gamma2"] == [{"impid": "imp-1", "statuscode": 204}]
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


# --- currency from a loopback rates server, price floors -----------------------------------------

RATES_FILE = {"dataAsOf": "2026-11-23", "conversions": {"USD": {"EUR": 0.9, "GBP": 0.8}, "EUR": {"USD": 1.1111}}}


@pytest.fixture
async def rates_server(aiohttp_server):
    from aiohttp import web

    async def latest(_request):
        return web.json_response(RATES_FILE)

    app = web.Application()
    app.router.add_get("/latest.json", latest)
    return await aiohttp_server(app)


async def eur_client(make_client, bidders, rates_server, **config: Any):
    from hbserver.appkeys import CURRENCY

    client = await make_client({
        **bidder_config(bidders, "alpha", "beta"),
        "currency": {"fetch_url": str(rates_server.make_url("/latest.json"))},
        **config,
    })
    assert await client.app[CURRENCY].wait_first_refresh(5)
    return client


async def test_black_box_eur_auction_with_fetched_rates_and_a_floor(make_client, bidders, rates_server):
    """Issue 19's black-box case: a EUR request, rates from a loopback currency server, a 1.50 EUR floor
    that rejects one bidder's bid (1.50 USD = 1.35 EUR) while the other's (2.00 USD = 1.80 EUR) wins."""
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 1.5, "b1")]
    client = await eur_client(make_client, bidders, rates_server)
    imp = banner_imp("imp-1", alpha={}, beta={})
    imp.update(bidfloor=1.5, bidfloorcur="EUR")
    body = auction_request(imp)
    body["cur"] = ["EUR"]
    body["ext"]["prebid"]["returnallbidstatus"] = True
    data = await (await post(client, body)).json()
    assert data["cur"] == "EUR"
    seats = seat_bids(data)
    assert list(seats) == ["alpha"]
    alpha = seats["alpha"][0]
    assert alpha["price"] == pytest.approx(1.8)
    assert alpha["ext"]["prebid"]["targeting"]["hb_pb"] == "1.80"
    assert alpha["ext"]["prebid"]["floors"] == {"floorValue": 1.5, "floorCurrency": "EUR"}
    [warning] = data["ext"]["warnings"]["prebid"]
    assert warning == {
        "code": 10009,
        "message": "beta bid id b1 rejected - bid price 1.3500 EUR is less than bid floor 1.5000 EUR for imp imp-1",
    }
    nonbids = {entry["seat"]: entry["nonbid"] for entry in data["ext"]["prebid"]["seatnonbid"]}
    assert [(n["impid"], n["statuscode"]) for n in nonbids["beta"]] == [("imp-1", 301)]
    assert nonbids["beta"][0]["ext"]["prebid"]["bid"]["price"] == pytest.approx(1.35)
    # each bidder was told the floor
    sent = bidders.received["beta"][0]["imp"][0]
    assert (sent["bidfloor"], sent["bidfloorcur"]) == (1.5, "EUR")


@pytest.mark.parametrize(
    ("floors", "usepbsrates", "seats"),
    [
        ({"currency": "USD", "data": {"modelgroups": [{"schema": {"fields": ["mediaType"]},
                                                        "values": {"banner": 1.8}}]}}, None, ["alpha"]),
        ({"currency": "USD", "data": {"modelgroups": [{"schema": {"fields": ["mediaType"]},
                                                        "values": {"video": 5.0}, "default": 0.5}]}},
         None, ["alpha", "beta"]),
        ({"floormin": 1.9, "floormincur": "USD", "currency": "USD",
          "data": {"modelgroups": [{"schema": {"fields": ["mediaType"]}, "values": {"banner": 0.2}}]}},
         None, ["alpha"]),
        ({"enforcement": {"enforcepbs": False}, "currency": "USD",
          "data": {"modelgroups": [{"schema": {"fields": ["mediaType"]}, "values": {"banner": 5.0}}]}},
         None, ["alpha", "beta"]),
        ({"enabled": False, "currency": "USD",
          "data": {"modelgroups": [{"schema": {"fields": ["mediaType"]}, "values": {"banner": 5.0}}]}},
         None, ["alpha", "beta"]),
    ],
    ids=["rule-rejects-beta", "default-floor", "floormin", "enforcepbs-false-signals-only", "floors-disabled"],
)
async def test_floors_rules_from_the_request(make_client, bidders, rates_server, floors, usepbsrates, seats):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 1.5, "b1")]
    client = await eur_client(make_client, bidders, rates_server)
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}))
    body["ext"]["prebid"]["floors"] = floors
    data = await (await post(client, body)).json()
    assert sorted(seat_bids(data)) == seats


async def test_account_floors_off_only_signals(make_client, bidders, rates_server, data_dir):
    write_account(data_dir, "1001", {"price_floors": {"enabled": False}})
    bidders.bids["alpha"] = [bid("imp-1", 0.5, "a1")]
    client = await eur_client(make_client, bidders, rates_server)
    imp = banner_imp("imp-1", alpha={})
    imp["bidfloor"] = 1.8
    data = await (await post(client, auction_request(imp))).json()
    assert [b["id"] for b in seat_bids(data)["alpha"]] == ["a1"]


async def test_usepbsrates_false_loses_a_bid_in_another_currency(make_client, bidders, rates_server):
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    bidders.currency["alpha"] = "USD"
    client = await eur_client(make_client, bidders, rates_server)
    body = auction_request(banner_imp("imp-1", alpha={}))
    body["cur"] = ["EUR"]
    body["ext"]["prebid"]["currency"] = {"rates": {"GBP": {"EUR": 1.2}}, "usepbsrates": False}
    data = await (await post(client, body)).json()
    assert "seatbid" not in data
    body["ext"]["prebid"]["currency"]["usepbsrates"] = True
    data = await (await post(client, body)).json()
    assert seat_bids(data)["alpha"][0]["price"] == pytest.approx(1.8)


async def test_floors_fetched_from_a_provider(make_client, bidders, rates_server, aiohttp_server, data_dir):
    """The account's provider (a loopback server): the first auction queues the fetch (PBS-Go's
    "inprogress": no floors yet), later auctions enforce the fetched data."""
    import asyncio

    from aiohttp import web

    served = []

    async def floors_file(_request):
        served.append(1)
        return web.json_response({"currency": "USD", "modelgroups": [
            {"schema": {"fields": ["mediaType"]}, "values": {"banner": 1.8}}]})

    app = web.Application()
    app.router.add_get("/floors.json", floors_file)
    provider = await aiohttp_server(app)
    write_account(data_dir, "1001", {"price_floors": {"use_dynamic_data": True, "fetch": {
        "enabled": True, "url": str(provider.make_url("/floors.json"))}}})
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 1.5, "b1")]
    client = await eur_client(make_client, bidders, rates_server)
    body = auction_request(banner_imp("imp-1", alpha={}, beta={}))
    first = await (await post(client, body)).json()
    assert sorted(seat_bids(first)) == ["alpha", "beta"]
    for _ in range(100):
        if served:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)
    later = await (await post(client, body)).json()
    assert sorted(seat_bids(later)) == ["alpha"]
    assert len(served) == 1


async def test_issue_finding_a_050_bid_no_longer_beats_a_180_floor(make_client, bidders):
    """imp.bidfloor without bidfloorcur (OpenRTB's default USD), no ext.prebid.floors, no account setting."""
    bidders.bids["alpha"] = [bid("imp-1", 0.5, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 1.9, "b1")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    imp = banner_imp("imp-1", alpha={}, beta={})
    imp["bidfloor"] = 1.8
    data = await (await post(client, auction_request(imp))).json()
    assert list(seat_bids(data)) == ["beta"]
    assert data["ext"]["warnings"]["prebid"][0]["message"] == (
        "alpha bid id a1 rejected - bid price 0.5000 USD is less than bid floor 1.8000 USD for imp imp-1"
    )
