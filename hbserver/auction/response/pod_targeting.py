"""Targeting for pod slots, ``includetopn`` ranks, and the pods' summary in ``ext.prebid.pods``
(hbserver's own; README "CTV", "Ad pods").

- **Slots.** Each bid filling a pod gets the winner's keys (``hb_pb``, ``hb_bidder``, ``hb_cache_id``,
  ``hb_uuid``, ``hb_pb_cat_dur``...) and its bidder keys in its own ``ext.prebid.targeting``, as an
  imp winner does, plus ``hb_pod`` (the pod id) and ``hb_pod_slot`` (its place in the pod, from 1). A
  dynamic imp has several such bids; a pod imp's other bids keep only their bidder keys.
- **Top N** (``ext.prebid.targeting.includetopn: N``, 1-10). Per imp, its bids ranked: a pod's fill
  first in play order, then the others best first (``preferdeals``: deals first; equal prices: the
  order they came, as the winner is chosen). The first N get ``ext.prebid.rank`` (1 = the best, PBS-Go
  #4150's field), and ranks 2..N the winner's keys with ``_r<rank>`` after the name (``hb_pb_r2``,
  ``hb_bidder_r2``, ``hb_cache_id_r2``...), cut to the key length as every key is.
- **Summary.** ``ext.prebid.pods``: per pod ``{"podid", "podseq"?, "dur", "price", "exact"?, "slots":
  [{"slot", "impid", "seat", "bidid", "dur", "price", "targeting"?}]}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.response.pods import PodResult
from hbserver.auction.response.targeting import TargetingOptions, target_bid, targeting_values


def with_pod_bids(to_cache: list[AuctionBid], pods: PodResult) -> list[AuctionBid]:
    """``to_cache`` and every bid filling a pod (a dynamic imp's fill has several winners)."""
    have = {id(bid) for bid in to_cache}
    return to_cache + [bid for bid in pods.selected() if id(bid) not in have]


def apply_pod_targeting(
    pods: PodResult,
    bids: Sequence[AuctionBid],
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """The slot keys (module text), after :func:`~hbserver.auction.response.targeting.apply_targeting`."""
    chosen = {id(bid) for bid in pods.selected()}
    for bid in bids:  # a pod imp's winner by price alone is not one unless it fills the pod
        if bid.imp_id in pods.pod_imps and id(bid) not in chosen and bid.targeting:
            bid.targeting = {}
            target_bid(bid, bid.bidder, False, options, cache_host, cache_path, cat_dur)
    length, prefix = options.max_key_length, options.prefix
    for fill in pods.fills:
        for slot, bid in enumerate(fill.slots, 1):
            target_bid(bid, bid.bidder, True, options, cache_host, cache_path, cat_dur)
            if bid.targeting:
                bid.targeting[f"{prefix}_pod"[:length]] = fill.pod.pod_id
                bid.targeting[f"{prefix}_pod_slot"[:length]] = str(slot)


def _rank_key(bid: AuctionBid, prefer_deals: bool) -> tuple[bool, float]:
    return (bid.deal if prefer_deals else False), bid.price


def rank_bids(
    bids: Sequence[AuctionBid],
    pods: PodResult | None,
    options: TargetingOptions,
    cache_host: str,
    cache_path: str,
    cat_dur: Mapping[str, str] | None = None,
) -> None:
    """``includetopn``'s ranks and keys (module text) over the response's bids."""
    by_imp: dict[str, list[AuctionBid]] = {}
    for bid in bids:
        by_imp.setdefault(bid.imp_id, []).append(bid)
    fills: dict[str, list[AuctionBid]] = {}
    if pods is not None:
        for fill in pods.fills:
            for bid in fill.slots:
                fills.setdefault(bid.imp_id, []).append(bid)
    for imp_id, own in by_imp.items():
        first = fills.get(imp_id, [])
        taken = {id(bid) for bid in first}
        rest = sorted((b for b in own if id(b) not in taken), key=lambda b: _rank_key(b, options.prefer_deals),
                      reverse=True)  # fmt: skip
        for rank, bid in enumerate((first + rest)[: options.top_n], 1):
            _set_rank(bid, rank)
            if rank > 1 and options.include_winners:
                values = targeting_values(bid, bid.bidder, options, cache_host, cache_path, cat_dur)
                for name, value in values.items():
                    bid.targeting[f"{options.prefix}_{name}_r{rank}"[: options.max_key_length]] = value


def _set_rank(bid: AuctionBid, rank: int) -> None:
    """``ext.prebid.rank`` in the bid's own copy (the response keeps its ext.prebid)."""
    ext = bid.bid.get("ext")
    ext = dict(ext) if isinstance(ext, dict) else {}
    prebid = ext.get("prebid")
    ext["prebid"] = {**prebid, "rank": rank} if isinstance(prebid, dict) else {"rank": rank}
    bid.bid["ext"] = ext


def pods_summary(pods: PodResult) -> list[dict[str, Any]]:
    """``ext.prebid.pods`` (module text)."""
    summary: list[dict[str, Any]] = []
    for fill in pods.fills:
        slots: list[dict[str, Any]] = []
        for slot, (bid, dur) in enumerate(zip(fill.slots, fill.durations, strict=True), 1):
            entry: dict[str, Any] = {"slot": slot, "impid": bid.imp_id, "seat": bid.bidder,
                                     "bidid": bid.bid.get("id", ""), "dur": dur, "price": bid.price}  # fmt: skip
            if bid.targeting:
                entry["targeting"] = bid.targeting
            slots.append(entry)
        pod: dict[str, Any] = {"podid": fill.pod.pod_id}
        if fill.pod.podseq is not None:
            pod["podseq"] = fill.pod.podseq
        pod["dur"] = sum(fill.durations)
        pod["price"] = round(sum(bid.price for bid in fill.slots), 6)
        if not fill.exact:
            pod["exact"] = False
        pod["slots"] = slots
        summary.append(pod)
    return summary
