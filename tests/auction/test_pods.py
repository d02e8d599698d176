"""ORTB 2.6 ad pods (hbserver.auction.response.pods, pod_targeting): each README rule a table row."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import ConversionError
from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.response import pods as pods_module
from hbserver.auction.response.pod_targeting import apply_pod_targeting, pods_summary, rank_bids, with_pod_bids
from hbserver.auction.response.pods import Pod, PodImp, check_bid, fill_pods, read_pods
from hbserver.auction.response.targeting import TargetingOptions, apply_targeting, run_auction


def video(imp_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": imp_id, "video": {"mimes": ["video/mp4"], **fields}}


def _bid(bid_id: str, imp_id: str, price: float, dur: int | None = 30, bidder: str = "alpha",
         video_dur: int | None = None, deal: bool = False, **fields: Any) -> AuctionBid:  # fmt: skip
    own: dict[str, Any] = {"id": bid_id, "impid": imp_id, "price": price, **fields}
    if dur is not None:
        own["dur"] = dur
    facts = {"duration": video_dur} if video_dur is not None else None
    return AuctionBid(bidder, bidder, own, "video", price, imp_id, deal, video=facts)


def _no_rates(amount: float, from_cur: str, to_cur: str) -> float:
    if from_cur == "EUR" and to_cur == "USD":
        return amount * 2
    raise ConversionError(f"no rate {from_cur}->{to_cur}")


def _pods(*imps: dict[str, Any]) -> list[Pod]:
    found = read_pods(list(imps))
    assert found is not None
    return found


def _fill(imps: list[dict[str, Any]], bids: list[AuctionBid], **kwargs: Any) -> tuple[list[list[str]], list[str]]:
    result = fill_pods(bids, _pods(*imps), _no_rates, "USD", **kwargs)
    return [[b.bid["id"] for b in fill.slots] for fill in result.fills], [r.message for r in result.rejected]


# -- grouping ---------------------------------------------------------------------------------------

GROUPING = [
    ("no pod fields: none", [video("a"), {"id": "b", "banner": {}}], None),
    ("empty podid, no poddur: none", [video("a", podid="")], None),
    ("structured: imps sharing podid", [video("a", podid="p1"), video("b", podid="p1"), video("c", podid="p2")],
     [("p1", ["a", "b"]), ("p2", ["c"])]),
    ("dynamic: poddur without podid, named by its imp", [video("d", poddur=60, maxseq=3)], [("d", ["d"])]),
    ("hybrid: slots and a dynamic part", [video("a", podid="p", slotinpod=1), video("d", podid="p", poddur=45)],
     [("p", ["a", "d"])]),
]  # fmt: skip


@pytest.mark.parametrize(("imps", "expected"), [row[1:] for row in GROUPING], ids=[row[0] for row in GROUPING])
def test_grouping(imps: list[dict[str, Any]], expected: list[tuple[str, list[str]]] | None) -> None:
    found = read_pods(imps)
    assert (None if found is None else [(p.pod_id, [i.imp_id for i in p.imps]) for p in found]) == expected


def test_pod_fields_read() -> None:
    (pod,) = _pods(video("d", podid="p", podseq=1, poddur=60, maxseq=30, rqddurs=[15, 30], mincpmpersec=0.5,
                         slotinpod=7))  # fmt: skip
    imp = pod.imps[0]
    assert (pod.podseq, imp.poddur, imp.max_ads, imp.rqddurs, imp.mincpmpersec, imp.slot) == (
        1, 60, pods_module.MAX_POD_ADS, (15, 30), 0.5, 0,  # maxseq capped at MAX_POD_ADS; a bad slotinpod is 0
    )  # fmt: skip


# -- per-bid rules ----------------------------------------------------------------------------------

SLOT = PodImp("s", 0)
BID_RULES = [
    ("no duration", SLOT, _bid("x", "s", 5, dur=None), "no duration (bid.dur)", 300),
    ("adapter's video duration used", PodImp("s", 0, maxduration=30), _bid("x", "s", 5, None, video_dur=30), "", 0),
    ("bid.dur before the adapter's", PodImp("s", 0, maxduration=30), _bid("x", "s", 5, 15, video_dur=60), "", 0),
    ("rqddurs: listed", PodImp("s", 0, rqddurs=(15, 30)), _bid("x", "s", 5, 15), "", 0),
    ("rqddurs: not listed", PodImp("s", 0, rqddurs=(15, 30)), _bid("x", "s", 5, 20),
     "duration 20s not one of rqddurs [15, 30]", 300),
    ("maxduration", PodImp("s", 0, minduration=5, maxduration=30), _bid("x", "s", 5, 31),
     "duration 31s outside minduration 5s / maxduration 30s", 300),
    ("minduration", PodImp("s", 0, minduration=5), _bid("x", "s", 5, 4),
     "duration 4s outside minduration 5s / maxduration 0s", 300),
    ("longer than poddur", PodImp("d", 0, poddur=30), _bid("x", "d", 5, 45),
     "duration 45s longer than poddur 30s", 300),
    ("mincpmpersec met exactly", PodImp("s", 0, mincpmpersec=0.5), _bid("x", "s", 15, 30), "", 0),
    ("mincpmpersec: below, seat-non-bid 301", PodImp("s", 0, mincpmpersec=0.5), _bid("x", "s", 14.9, 30),
     "0.4967 per second below mincpmpersec 0.5000 (USD)", 301),
    ("mincpmpersec in its bidfloorcur", PodImp("s", 0, mincpmpersec=0.5, floor_cur="EUR"), _bid("x", "s", 20, 30),
     "0.6667 per second below mincpmpersec 1.0000 (USD)", 301),
    ("mincpmpersec without a rate: not applied", PodImp("s", 0, mincpmpersec=9, floor_cur="JPY"),
     _bid("x", "s", 1, 30), "", 0),
    ("slotinpod 1 on a slot for any", SLOT, _bid("x", "s", 5, slotinpod=1),
     "slotinpod 1 not offered by the slot (imp slotinpod 0)", 300),
    ("slotinpod 1 on a first slot", PodImp("s", 0, slot=1), _bid("x", "s", 5, slotinpod=1), "", 0),
    ("slotinpod 1 on a first-or-last slot", PodImp("s", 0, slot=2), _bid("x", "s", 5, slotinpod=1), "", 0),
    ("slotinpod -1 on a first slot", PodImp("s", 0, slot=1), _bid("x", "s", 5, slotinpod=-1),
     "slotinpod -1 not offered by the slot (imp slotinpod 1)", 300),
    ("slotinpod 2 on a last slot", PodImp("s", 0, slot=-1), _bid("x", "s", 5, slotinpod=2), "", 0),
    ("slotinpod 0 anywhere", PodImp("s", 0, slot=-1), _bid("x", "s", 5, slotinpod=0), "", 0),
    ("slotinpod on a dynamic imp: decided by the fill", PodImp("d", 0, poddur=60), _bid("x", "d", 5, slotinpod=1),
     "", 0),
]  # fmt: skip


@pytest.mark.parametrize(("imp", "bid", "reason", "code"), [r[1:] for r in BID_RULES], ids=[r[0] for r in BID_RULES])
def test_bid_rules(imp: PodImp, bid: AuctionBid, reason: str, code: int) -> None:
    rejection = check_bid(bid, imp, _no_rates, "USD")
    assert ((rejection.reason, rejection.non_bid_code) if rejection else ("", 0)) == (reason, code)


def test_rejection_message_and_kept_bids() -> None:
    bids = [_bid("ok", "s", 5), _bid("bad", "s", 5, dur=None), _bid("other", "banner-imp", 9, dur=None)]
    result = fill_pods(bids, _pods(video("s", podid="p")), _no_rates, "USD")
    assert [b.bid["id"] for b in result.kept] == ["ok", "other"]  # a bid outside pods is not looked at
    assert [r.message for r in result.rejected] == ["pod bid rejected [bid ID: bad] reason: no duration (bid.dur)"]


# -- the fill ---------------------------------------------------------------------------------------

FILLS = [
    ("structured: one bid per slot, the best total",
     [video("a", podid="p"), video("b", podid="p")],
     [_bid("a1", "a", 10), _bid("a2", "a", 8), _bid("b1", "b", 3)], {}, [["a1", "b1"]]),
    ("dynamic: the durations' best set beats the greedy one (45s@15 + 15s@4 = 19 < 30s@10 + 30s@9.5)",
     [video("d", poddur=60)],
     [_bid("x45", "d", 15, 45), _bid("x30", "d", 10, 30), _bid("y30", "d", 9.5, 30), _bid("x15", "d", 4, 15)], {},
     [["x30", "y30"]]),
    ("dynamic: equal totals keep the set found first (higher prices first)",
     [video("d", poddur=60)],
     [_bid("x45", "d", 15, 45), _bid("x30", "d", 10, 30), _bid("y30", "d", 9, 30), _bid("x15", "d", 4, 15)], {},
     [["x45", "x15"]]),
    ("dynamic: maxseq caps the ads",
     [video("d", poddur=90, maxseq=2)], [_bid("a", "d", 3, 15), _bid("b", "d", 2, 15), _bid("c", "d", 1, 15)], {},
     [["a", "b"]]),
    ("brand separation: one bid per adomain in the pod",
     [video("a", podid="p"), video("b", podid="p")],
     [_bid("a1", "a", 10, adomain=["car.com"]), _bid("b1", "b", 9, adomain=["CAR.com"]),
      _bid("b2", "b", 2, adomain=["soda.com"])], {}, [["a1", "b2"]]),
    ("brand separation picks the best total, not the best bid",
     [video("a", podid="p"), video("b", podid="p")],
     [_bid("a1", "a", 10, adomain=["car.com"]), _bid("a2", "a", 9), _bid("b1", "b", 8, adomain=["car.com"])], {},
     [["a2", "b1"]]),
    ("category separation: IAB cat codes",
     [video("d", poddur=60)], [_bid("a", "d", 5, cat=["IAB2"]), _bid("b", "d", 4, cat=["IAB2"]),
                               _bid("c", "d", 1, cat=["IAB3"])], {}, [["a", "c"]]),
    ("with includebrandcategory.withcategory the IAB codes are not compared",
     [video("d", poddur=60)], [_bid("a", "d", 5, cat=["IAB2"]), _bid("b", "d", 4, cat=["IAB2"])],
     {"iab_cats": False}, [["a", "b"]]),
    ("dynamic: one bid asking to play first",
     [video("d", poddur=60)], [_bid("a", "d", 5, 15, slotinpod=1), _bid("b", "d", 4, 15, slotinpod=1),
                               _bid("c", "d", 1, 15)], {}, [["a", "c"]]),
    ("dynamic: first, last and either: at most two of them",
     [video("d", poddur=90)], [_bid("f", "d", 5, 15, slotinpod=1), _bid("l", "d", 4, 15, slotinpod=-1),
                               _bid("e", "d", 3, 15, slotinpod=2), _bid("n", "d", 1, 15)], {}, [["f", "n", "l"]]),
    ("play order: first, then by imp and price, then last",
     [video("a", podid="p", slotinpod=-1), video("b", podid="p"), video("d", podid="p", poddur=30)],
     [_bid("a1", "a", 9, 15), _bid("b1", "b", 1, 15), _bid("d1", "d", 2, 15, slotinpod=1), _bid("d2", "d", 3, 15)],
     {}, [["d1", "b1", "d2", "a1"]]),
    ("two pods are filled apart (the same brand may play in each)",
     [video("a", podid="p1"), video("b", podid="p2")],
     [_bid("a1", "a", 1, adomain=["x.com"]), _bid("b1", "b", 1, adomain=["x.com"])], {}, [["a1"], ["b1"]]),
    ("a pod without bids is empty", [video("a", podid="p")], [], {}, [[]]),
]  # fmt: skip


@pytest.mark.parametrize(("imps", "bids", "kwargs", "expected"), [r[1:] for r in FILLS], ids=[r[0] for r in FILLS])
def test_fill(imps: list[dict[str, Any]], bids: list[AuctionBid], kwargs: dict[str, Any],
              expected: list[list[str]]) -> None:  # fmt: skip
    assert _fill(imps, bids, **kwargs)[0] == expected


def test_search_budget_keeps_the_greedy_set_and_says_so() -> None:
    """Out of steps the first (greedy) descent is kept: 45s@15 + 15s@4, not the best 30s + 30s."""
    bids = [_bid("x45", "d", 15, 45), _bid("x30", "d", 10, 30), _bid("y30", "d", 9.5, 30), _bid("x15", "d", 4, 15)]
    result = fill_pods(bids, _pods(video("d", poddur=60)), _no_rates, "USD", budget=0)
    assert [b.bid["id"] for b in result.fills[0].slots] == ["x45", "x15"]
    assert result.fills[0].exact is False
    assert pods_summary(result)[0]["exact"] is False


def test_candidates_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the MAX_POD_CANDIDATES best-priced eligible bids of a pod are searched."""
    monkeypatch.setattr(pods_module, "MAX_POD_CANDIDATES", 2)
    imps = [video("a", podid="p"), video("b", podid="p"), video("c", podid="p")]
    assert _fill(imps, [_bid("a1", "a", 3), _bid("b1", "b", 2), _bid("c1", "c", 1)])[0] == [["a1", "b1"]]


def test_dynamic_ads_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pods_module, "MAX_POD_ADS", 2)
    bids = [_bid(str(n), "d", 10 - n, 5) for n in range(4)]
    assert _fill([video("d", poddur=60, maxseq=3)], bids)[0] == [["0", "1"]]


def test_worst_case_stays_within_the_budget() -> None:
    """24 mutually compatible candidates of equal price over a tight poddur: the search stops at the budget."""
    bids = [_bid(f"b{n}", "d", 1.0, 7 + n % 5) for n in range(30)]
    result = fill_pods(bids, _pods(video("d", poddur=100, maxseq=16)), _no_rates, "USD")
    assert result.fills[0].exact is False and len(result.fills[0].slots) == 12  # greedy: 12 ads, 100 s at most
    assert sum(fill_dur for fill_dur in result.fills[0].durations) <= 100


# -- targeting, ranks, summary ----------------------------------------------------------------------


def _options(**targeting: Any) -> TargetingOptions:
    return TargetingOptions.from_request({"pricegranularity": "dense", **targeting}, "")


def _targeted(imps: list[dict[str, Any]], bids: list[AuctionBid], **targeting: Any) -> dict[str, dict[str, str]]:
    options = _options(**targeting)
    result = fill_pods(bids, _pods(*imps), _no_rates, "USD")
    apply_targeting(run_auction(result.kept, False), options, "cache.test", "/cache")
    apply_pod_targeting(result, result.kept, options, "cache.test", "/cache")
    if options.top_n:
        rank_bids(result.kept, result, options, "cache.test", "/cache")
    return {b.bid["id"]: b.targeting for b in result.kept}


def test_each_slot_gets_the_winner_keys_and_its_place() -> None:
    bids = [_bid("d1", "d", 5, 15, adomain=["x.com"]), _bid("d2", "d", 4, 15, bidder="beta"),
            _bid("d3", "d", 1, 15, adomain=["x.com"], bidder="gamma")]  # fmt: skip
    targeting = _targeted([video("d", podid="brk", poddur=30)], bids)
    assert {k: targeting["d2"][k] for k in ("hb_pb", "hb_bidder", "hb_pb_beta", "hb_pod", "hb_pod_slot")} == {
        "hb_pb": "4.00", "hb_bidder": "beta", "hb_pb_beta": "4.00", "hb_pod": "brk", "hb_pod_slot": "2",
    }  # fmt: skip
    assert targeting["d1"]["hb_pod_slot"] == "1"
    assert "hb_pb" not in targeting["d3"] and "hb_pod" not in targeting["d3"]  # lost the pod: bidder keys only
    assert targeting["d3"]["hb_pb_gamma"] == "1.00"


def test_a_pod_imps_best_bid_is_not_its_winner_unless_it_fills_the_pod() -> None:
    bids = [_bid("big", "s", 9, 60), _bid("fit", "s", 2, 30)]
    targeting = _targeted([video("s", podid="p", maxduration=30)], bids)
    assert set(targeting) == {"fit"}  # 'big' broke maxduration: rejected, out of the response
    bids = [_bid("car1", "a", 9, adomain=["car.com"]), _bid("car2", "b", 8, adomain=["car.com"]),
            _bid("soda", "b", 1, adomain=["soda.com"], bidder="beta")]  # fmt: skip
    targeting = _targeted([video("a", podid="p"), video("b", podid="p")], bids)
    assert "hb_pb" not in targeting["car2"] and targeting["soda"]["hb_pb"] == "1.00"


TOP_N = [
    ("off: no rank", {}, {"a": None, "b": None, "c": None}),
    ("top 2", {"includetopn": 2}, {"a": 1, "b": 2, "c": None}),
    ("preferdeals ranks deals first", {"includetopn": 3, "preferdeals": True}, {"c": 1, "a": 2, "b": 3}),
    ("bad value: off", {"includetopn": 11}, {"a": None, "b": None, "c": None}),
]  # fmt: skip


@pytest.mark.parametrize(("targeting", "ranks"), [r[1:] for r in TOP_N], ids=[r[0] for r in TOP_N])
def test_top_n(targeting: dict[str, Any], ranks: dict[str, int | None]) -> None:
    bids = [_bid("a", "i", 5), _bid("b", "i", 4, bidder="beta"), _bid("c", "i", 3, bidder="gamma", deal=True)]
    options = _options(**targeting)
    apply_targeting(run_auction(bids, options.prefer_deals), options, "", "")
    if options.top_n:
        rank_bids(bids, None, options, "", "")
    assert {b.bid["id"]: (b.bid.get("ext") or {}).get("prebid", {}).get("rank") for b in bids} == ranks
    if targeting.get("includetopn") == 2:
        assert bids[1].targeting["hb_pb_r2"] == "4.00" and bids[1].targeting["hb_bidder_r2"] == "beta"
        assert "hb_pb_r3" not in bids[2].targeting


def test_top_n_bad_value_is_warned() -> None:
    assert [w.message for w in _options(includetopn="3").warnings] == [
        "ext.prebid.targeting.includetopn must be an integer from 1 to 10: ignored"
    ]


def test_top_n_on_a_pod_imp_ranks_its_fill_first() -> None:
    bids = [_bid("big", "d", 9, 30, adomain=["x.com"]), _bid("d1", "d", 5, 30, adomain=["x.com"]),
            _bid("d2", "d", 4, 30)]  # fmt: skip
    result = fill_pods(bids, _pods(video("d", poddur=30)), _no_rates, "USD")
    options = _options(includetopn=3)
    apply_targeting(run_auction(result.kept, False), options, "", "")
    apply_pod_targeting(result, result.kept, options, "", "")
    rank_bids(result.kept, result, options, "", "")
    assert [(b.bid["id"], b.bid["ext"]["prebid"]["rank"]) for b in result.kept] == [("big", 1), ("d1", 2), ("d2", 3)]
    bids = [_bid("a", "d", 5, 20), _bid("b", "d", 4, 10), _bid("c", "d", 8, 30)]
    result = fill_pods(bids, _pods(video("d", poddur=30)), _no_rates, "USD")
    rank_bids(result.kept, result, options, "", "")
    assert {b.bid["id"]: b.bid["ext"]["prebid"]["rank"] for b in result.kept} == {"a": 1, "b": 2, "c": 3}


def test_summary_and_cache_list() -> None:
    bids = [_bid("a1", "a", 2.5, 15), _bid("b1", "b", 1.25, 30, bidder="beta")]
    result = fill_pods(bids, _pods(video("a", podid="p", podseq=-1), video("b", podid="p")), _no_rates, "USD")
    assert pods_summary(result) == [{"podid": "p", "podseq": -1, "dur": 45, "price": 3.75, "slots": [
        {"slot": 1, "impid": "a", "seat": "alpha", "bidid": "a1", "dur": 15, "price": 2.5},
        {"slot": 2, "impid": "b", "seat": "beta", "bidid": "b1", "dur": 30, "price": 1.25},
    ]}]  # fmt: skip
    assert [b.bid["id"] for b in with_pod_bids([bids[0]], result)] == ["a1", "b1"]
    result.drop([bids[0]])
    assert pods_summary(result)[0]["slots"][0]["bidid"] == "b1"
