"""ORTB 2.6 ad pods through /openrtb2/auction (hbserver's own rules: README "CTV", "Ad pods"), with mock
bidders on loopback answering video bids with dur, cat, adomain and slotinpod."""

from __future__ import annotations

import copy
from typing import Any

from tests.auction.helpers import bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post, seat_bids


def pod_imp(imp_id: str, *names: str, **video: Any) -> dict[str, Any]:
    return {"id": imp_id, "video": {"mimes": ["video/mp4"], "w": 640, "h": 480, **video},
            "ext": {"prebid": {"bidder": {name: {} for name in names}}}}  # fmt: skip


def vbid(imp_id: str, price: float, bid_id: str, dur: int, **fields: Any) -> dict[str, Any]:
    return bid(imp_id, price, bid_id, mtype=2, w=640, h=480, dur=dur, adm='<VAST version="3.0"></VAST>', **fields)


def ctv_request(*imps: dict[str, Any], **targeting: Any) -> dict[str, Any]:
    body = auction_request(*imps)
    body["ext"]["prebid"]["targeting"] = {"pricegranularity": "medium", **targeting}
    body["ext"]["prebid"]["returnallbidstatus"] = True
    body["ext"]["prebid"]["cache"] = {"vastxml": {}}
    return body


def _by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["id"]: b for bids in seat_bids(data).values() for b in bids}


def _nonbids(data: dict[str, Any]) -> set[tuple[str, float, int]]:
    """(seat, price, code) of each rejected bid (PBS-Go's NonBidObject has no bid id)."""
    return {(e["seat"], n["ext"]["prebid"]["bid"]["price"], n["statuscode"])
            for e in data["ext"]["prebid"].get("seatnonbid", []) for n in e["nonbid"] if "ext" in n}  # fmt: skip


async def test_dynamic_pod_filled_with_the_best_set(make_client, bidders) -> None:
    """A 60 s dynamic break (maxseq 3, mincpmpersec 0.1): 30 s @ 10 and 30 s @ 9.5 beat 45 s @ 15 + 15 s @ 4;
    a 20 s bid at 1.00 (0.05 per second) is below the floor (301), a same-brand bid is kept out of the pod."""
    bidders.bids["alpha"] = [vbid("brk", 15.0, "x45", 45, adomain=["a.com"]), vbid("brk", 10.0, "x30", 30,
                             adomain=["b.com"]), vbid("brk", 1.0, "cheap", 20)]  # fmt: skip
    bidders.bids["beta"] = [vbid("brk", 9.5, "y30", 30, adomain=["c.com"]), vbid("brk", 4.0, "x15", 15,
                            adomain=["d.com"]), vbid("brk", 9.0, "same", 30, adomain=["B.com"])]  # fmt: skip
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    imp = pod_imp("brk", "alpha", "beta", poddur=60, maxseq=3, mincpmpersec=0.1, maxduration=60)
    response = await post(client, ctv_request(imp))
    assert response.status == 200, await response.text()
    data = await response.json()
    bids = _by_id(data)
    assert "cheap" not in bids
    assert ("alpha", 1.0, 301) in _nonbids(data)
    warnings = [w["message"] for w in data["ext"]["warnings"]["prebid"]]
    assert "pod bid rejected [bid ID: cheap] reason: 0.0500 per second below mincpmpersec 0.1000 (USD)" in warnings
    (pod,) = data["ext"]["prebid"]["pods"]
    assert [(s["slot"], s["bidid"], s["seat"], s["dur"]) for s in pod["slots"]] == [
        (1, "x30", "alpha", 30), (2, "y30", "beta", 30),
    ]  # fmt: skip
    assert (pod["podid"], pod["dur"], pod["price"]) == ("brk", 60, 19.5)
    for bid_id, slot in (("x30", "1"), ("y30", "2")):
        targeting = bids[bid_id]["ext"]["prebid"]["targeting"]
        assert targeting["hb_pod"] == "brk" and targeting["hb_pod_slot"] == slot
        assert targeting["hb_uuid"] and targeting["hb_pb"] in ("10.00", "9.50")
        assert pod["slots"][int(slot) - 1]["targeting"] == targeting
    assert "hb_pb" not in bids["x45"]["ext"]["prebid"].get("targeting", {})  # the best bid lost the pod
    assert "hb_pod" not in bids["same"]["ext"]["prebid"].get("targeting", {})


async def test_structured_pod_slots_positions_and_durations(make_client, bidders) -> None:
    """Two slots of one podid (first: slotinpod 1; the other rqddurs 15/30): a bid asking to play last on the
    first slot and one of 20 s on the second are rejected (300); each slot gets its best remaining bid."""
    bidders.bids["alpha"] = [vbid("s1", 8.0, "last", 15, slotinpod=-1), vbid("s1", 5.0, "first", 15, slotinpod=1),
                             vbid("s2", 7.0, "odd", 20), vbid("s2", 3.0, "ok", 30)]  # fmt: skip
    client = await make_client(bidder_config(bidders, "alpha"))
    body = ctv_request(pod_imp("s1", "alpha", podid="break-1", podseq=1, slotinpod=1),
                       pod_imp("s2", "alpha", podid="break-1", rqddurs=[15, 30]))  # fmt: skip
    data = await (await post(client, body)).json()
    assert set(_by_id(data)) == {"first", "ok"}
    assert {("alpha", 8.0, 300), ("alpha", 7.0, 300)} <= _nonbids(data)
    (pod,) = data["ext"]["prebid"]["pods"]
    assert (pod["podid"], pod["podseq"], [s["bidid"] for s in pod["slots"]]) == ("break-1", 1, ["first", "ok"])


async def test_category_rules_then_pod_with_hb_pb_cat_dur(make_client, bidders) -> None:
    """includebrandcategory (item 1) keeps one bid per category; the pod then fills with hb_pb_cat_dur per slot."""
    bidders.bids["alpha"] = [vbid("brk", 6.0, "a1", 15, cat=["IAB1-1"]), vbid("brk", 5.0, "a2", 15, cat=["IAB1-1"])]
    bidders.bids["beta"] = [vbid("brk", 4.0, "b1", 30, cat=["IAB1-2"])]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    brand = {"primaryadserver": 1, "publisher": "", "withcategory": True}
    body = ctv_request(pod_imp("brk", "alpha", "beta", poddur=45), includebrandcategory=copy.deepcopy(brand),
                       durationrangesec=[15, 30])  # fmt: skip
    data = await (await post(client, body)).json()
    bids = _by_id(data)
    assert set(bids) == {"a1", "b1"}  # a2 deduplicated by the category rules
    assert [s["bidid"] for s in data["ext"]["prebid"]["pods"][0]["slots"]] == ["a1", "b1"]
    assert bids["a1"]["ext"]["prebid"]["targeting"]["hb_pb_cat_dur"] == "6.00_404_15s"
    # hb_pb_cat_dur's duration is PBS-Go's (the adapter's video duration, none from the generic adapter: the
    # smallest range); the pod reads bid.dur (30 s): README "Ad pods" says so
    assert bids["b1"]["ext"]["prebid"]["targeting"]["hb_pb_cat_dur"] == "4.00_392_15s"
    assert data["ext"]["prebid"]["pods"][0]["dur"] == 45


async def test_top_n_per_imp(make_client, bidders) -> None:
    """includetopn 2 on an ordinary video imp: ranks 1 and 2 in ext.prebid.rank, rank 2's keys with _r2."""
    bidders.bids["alpha"] = [vbid("v", 3.0, "a1", 15)]
    bidders.bids["beta"] = [vbid("v", 2.0, "b1", 15)]
    bidders.bids["omega9"] = [vbid("v", 1.0, "c1", 15)]
    client = await make_client(bidder_config(bidders, "alpha", "beta", "omega9"))
    data = await (await post(client, ctv_request(pod_imp("v", "alpha", "beta", "omega9"), includetopn=2))).json()
    bids = _by_id(data)
    assert [bids[i]["ext"]["prebid"].get("rank") for i in ("a1", "b1", "c1")] == [1, 2, None]
    targeting = bids["b1"]["ext"]["prebid"]["targeting"]
    assert (targeting["hb_pb_r2"], targeting["hb_bidder_r2"]) == ("2.00", "beta")
    assert targeting["hb_uuid_r2"] == targeting["hb_uuid_beta"]
    assert "pods" not in data["ext"]["prebid"]


async def test_no_pod_no_change(make_client, bidders) -> None:
    """A request without pods: no summary, no rank, the usual winner."""
    bidders.bids["alpha"] = [vbid("v", 3.0, "a1", 15), vbid("v", 9.0, "a2", 300)]
    client = await make_client(bidder_config(bidders, "alpha"))
    data = await (await post(client, ctv_request(pod_imp("v", "alpha", maxduration=30)))).json()
    assert "pods" not in data["ext"]["prebid"]
    assert _by_id(data)["a2"]["ext"]["prebid"]["targeting"]["hb_pb"] == "9.00"
