"""includebrandcategory through the server (PBS-Go exchange.go HoldAuction -> applyCategoryMapping,
targeting.go, auction.go doCache), with mock bidders on loopback: /openrtb2/auction and /openrtb2/amp."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hbserver.appkeys import CACHE
from hbserver.auction.core import AuctionService
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp import store
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids

FREEWHEEL = {"primaryadserver": 1, "publisher": "", "withcategory": True}


def video_imp(imp_id: str, *names: str) -> dict[str, Any]:
    return {"id": imp_id, "video": {"mimes": ["video/mp4"], "w": 640, "h": 480},
            "ext": {"prebid": {"bidder": {name: {} for name in names}}}}  # fmt: skip


def video_bid(imp_id: str, price: float, bid_id: str, **fields: Any) -> dict[str, Any]:
    return bid(imp_id, price, bid_id, mtype=2, w=640, h=480, adm='<VAST version="3.0"></VAST>', **fields)


def ctv_request(*imps: dict[str, Any], brand: dict[str, Any] | None = None, **targeting: Any) -> dict[str, Any]:
    body = auction_request(*imps)
    body["ext"]["prebid"]["targeting"] = {
        "pricegranularity": "medium",
        "includebrandcategory": copy.deepcopy(brand or FREEWHEEL),
        **targeting,
    }
    body["ext"]["prebid"]["returnallbidstatus"] = True
    body["ext"]["prebid"]["cache"] = {"vastxml": {}}  # a bid cached as JSON too gets PBS-Go's custom-key error
    return body


def _targeting(data: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {b["id"]: b["ext"]["prebid"].get("targeting", {}) for bids in seat_bids(data).values() for b in bids}


async def test_category_targeting_rejections_and_seat_non_bid(make_client, bidders) -> None:
    """freewheel's table (IAB1-1 -> 404); a bid without a category rejected (error 999, seat-non-bid 303),
    one whose code the table lacks rejected without a seat-non-bid code."""
    bidders.bids["alpha"] = [video_bid("v1", 5.0, "a1", cat=["IAB1-1"])]
    bidders.bids["beta"] = [video_bid("v1", 9.0, "b1")]
    bidders.bids["omega9"] = [video_bid("v1", 7.0, "c1", cat=["IAB99-99"])]
    client = await make_client(bidder_config(bidders, "alpha", "beta", "omega9"))
    response = await post(client, ctv_request(video_imp("v1", "alpha", "beta", "omega9"), durationrangesec=[15, 30]))
    assert response.status == 200, await response.text()
    data = await response.json()
    assert list(seat_bids(data)) == ["alpha"]
    targeting = _targeting(data)["a1"]
    assert targeting["hb_pb_cat_dur"] == targeting["hb_pb_cat_dur_alpha"] == "5.00_404_15s"
    assert targeting["hb_pb"] == "5.00"
    errors = [(e["code"], e["message"]) for e in data["ext"]["errors"]["prebid"]]
    assert (999, "bid rejected [bid ID: b1] reason: Bid did not contain a category") in errors
    assert (999, "bid rejected [bid ID: c1] reason: Category mapping file for primary ad server: 'freewheel', "
                 "publisher: '' not found") in errors  # fmt: skip
    nonbids = {
        e["seat"]: [(n["impid"], n["statuscode"]) for n in e["nonbid"]] for e in data["ext"]["prebid"]["seatnonbid"]
    }
    assert nonbids["beta"] == [("v1", 303)]
    assert "omega9" not in nonbids or all(code != 303 for _, code in nonbids["omega9"])


async def test_same_category_across_imps_is_deduplicated(make_client, bidders) -> None:
    """PBS-Go dedupes on the category over the whole auction: the higher price bucket stays."""
    bidders.bids["alpha"] = [video_bid("v1", 5.0, "a1", cat=["IAB1-1"]), video_bid("v2", 3.0, "a2", cat=["IAB1-2"])]
    bidders.bids["beta"] = [video_bid("v2", 8.0, "b1", cat=["IAB1-1"])]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = ctv_request(video_imp("v1", "alpha"), video_imp("v2", "alpha", "beta"), appendbiddernames=True)
    data = await (await post(client, body)).json()
    assert {name: [b["id"] for b in bids] for name, bids in seat_bids(data).items()} == {
        "alpha": ["a2"],
        "beta": ["b1"],
    }
    targeting = _targeting(data)
    assert targeting["b1"]["hb_pb_cat_dur"] == "8.00_404_0s_beta"
    assert targeting["a2"]["hb_pb_cat_dur_alpha"] == "3.00_392_0s_alpha"
    assert "hb_pb_cat_dur" not in targeting["a2"]  # beta won v2
    assert data["ext"]["errors"]["prebid"] == [
        {"code": 999, "message": "bid rejected [bid ID: a1] reason: Bid was deduplicated"}
    ]


async def test_without_category_the_key_is_price_and_duration(make_client, bidders) -> None:
    """withcategory false: no category needed, dedupe on the hb_pb_cat_dur value (equal: the higher price)."""
    bidders.bids["alpha"] = [video_bid("v1", 5.12, "a1")]
    bidders.bids["beta"] = [video_bid("v2", 5.15, "b1")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = ctv_request(video_imp("v1", "alpha"), video_imp("v2", "beta"), brand={"withcategory": False},
                       durationrangesec=[30])  # fmt: skip
    data = await (await post(client, body)).json()
    assert list(seat_bids(data)) == ["beta"]
    assert _targeting(data)["b1"]["hb_pb_cat_dur"] == "5.10_30s"
    assert data["ext"]["errors"]["prebid"][0]["message"] == "bid rejected [bid ID: a1] reason: Bid was deduplicated"


async def test_dfp_table_and_untranslated_categories(make_client, bidders) -> None:
    """primaryadserver 2 reads dfp/dfp_<publisher>.json (PBS-Go ships dfp_dfp); translatecategories
    false keeps the IAB code."""
    bidders.bids["alpha"] = [video_bid("v1", 2.0, "a1", cat=["IAB1-5"])]
    client = await make_client(bidder_config(bidders, "alpha"))
    dfp = {"primaryadserver": 2, "publisher": "dfp", "withcategory": True}
    data = await (await post(client, ctv_request(video_imp("v1", "alpha"), brand=dfp))).json()
    assert _targeting(data)["a1"]["hb_pb_cat_dur"] == "2.00_movies_0s"
    raw = {**dfp, "primaryadserver": 9, "translatecategories": False}
    data = await (await post(client, ctv_request(video_imp("v1", "alpha"), brand=raw))).json()
    assert _targeting(data)["a1"]["hb_pb_cat_dur"] == "2.00_IAB1-5_0s"


@pytest.mark.parametrize("server", [0, 3])
async def test_unknown_primary_ad_server_fails_the_auction(make_client, bidders, server: int) -> None:
    """PBS-Go: HoldAuction's error, 500 'Critical error while running the auction'; only once a bid came."""
    bidders.bids["alpha"] = [video_bid("v1", 2.0, "a1", cat=["IAB1-1"])]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = ctv_request(video_imp("v1", "alpha"), brand={**FREEWHEEL, "primaryadserver": server})
    response = await post(client, body)
    assert response.status == 500
    assert await response.text() == (
        f"Critical error while running the auction: Error in category mapping : Primary ad server {server} "
        "not recognized"
    )
    body = ctv_request(video_imp("v1", "beta"), brand={**FREEWHEEL, "primaryadserver": server})
    assert (await post(client, body)).status == 200  # beta has no bid: no category mapping


async def test_vast_cached_under_the_category_key(make_client, bidders) -> None:
    """PBS-Go doCache: the VAST under <hb_pb_cat_dur>_<uuid>, hb_uuid the uuid alone; a bid also cached as
    JSON gets 'cannot use custom cache key for non-vast bids'. GET /cache reads the key back, as an ad
    server rebuilding it from hb_pb_cat_dur and hb_uuid does."""
    bidders.bids["alpha"] = [video_bid("v1", 4.0, "a1", cat=["IAB1-1"])]
    bidders.bids["beta"] = [video_bid("v2", 3.0, "b1", cat=["IAB1-2"])]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    body = ctv_request(video_imp("v1", "alpha"), video_imp("v2", "beta"), durationrangesec=[30])
    data = await (await post(client, body)).json()
    targeting = _targeting(data)
    uuid = targeting["a1"]["hb_uuid"]
    assert targeting["b1"]["hb_uuid"] == uuid  # one per auction
    for bid_id in ("a1", "b1"):
        key = f"{targeting[bid_id]['hb_pb_cat_dur']}_{uuid}"
        cached = await client.app[CACHE].get(key, 1.0)
        assert cached is not None and cached.type == "xml" and cached.payload.startswith(b"<VAST")
        fetched = await client.get("/cache", params={"uuid": key})
        assert (fetched.status, await fetched.read()) == (200, cached.payload)
    assert "errors" not in data["ext"] or "prebid" not in data["ext"]["errors"]
    body["ext"]["prebid"]["cache"] = {"bids": {}, "vastxml": {}}
    data = await (await post(client, body)).json()
    assert (
        data["ext"]["errors"]["prebid"]
        == [{"code": 999, "message": "cannot use custom cache key for non-vast bids"}] * 2
    )


async def test_amp_targeting_carries_the_key(make_client, bidders, data_dir: Path) -> None:
    """PBS-Go applies the rules in HoldAuction, so AMP's targeting has hb_pb_cat_dur too."""
    bidders.bids["alpha"] = [bid("slot-1", 2.0, "a1", cat=["IAB1-1"])]
    imp = {"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}
    stored = {"id": "amp-req", "site": {"page": "https://pub.example/a"}, "imp": [imp],
              "ext": {"prebid": {"targeting": {"pricegranularity": "medium", "includebrandcategory": FREEWHEEL},
                                 "cache": {"bids": {}}}}}  # fmt: skip
    store(data_dir, "101", stored)
    client = await make_client(bidder_config(bidders, "alpha"))
    for _ in range(2):  # the full path, then the prepared one
        data = await (await client.get("/openrtb2/amp?tag_id=101")).json()
        assert data["targeting"]["hb_pb_cat_dur"] == "2.00_404_0s"


async def test_requests_without_the_option_never_run_the_rules(make_client, bidders, monkeypatch) -> None:
    """No includebrandcategory: the category stage is not entered and no key appears."""
    calls: list[Any] = []
    monkeypatch.setattr(AuctionService, "_map_categories", lambda self, run: calls.append(run))
    bidders.bids["alpha"] = [video_bid("v1", 5.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(video_imp("v1", "alpha"))
    data = await (await post(client, body)).json()
    assert "hb_pb_cat_dur" not in _targeting(data)["a1"] and not calls
    body["ext"]["prebid"]["targeting"]["includebrandcategory"] = FREEWHEEL
    await post(client, body)
    assert len(calls) == 1
