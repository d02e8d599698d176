"""ORTB 2.6 ad pods in ``/openrtb2/auction`` (hbserver's own: neither Prebid Server fills pods there,
PBS-Go #2581). The rules, with worked examples, are in the README ("CTV", "Ad pods").

A pod is the imps sharing ``imp.video.podid`` (a *structured* pod: one imp per slot), or one imp with
``video.poddur`` and no ``podid`` (a *dynamic* pod, named by its imp id); a pod may mix both (*hybrid*:
its imps with ``poddur`` are its dynamic part). Each bid on a pod imp must pass, in this order:

- a duration: ``bid.dur``, else the adapter's video duration; 0 or none is rejected;
- the imp's durations: one of ``rqddurs`` when given, else within ``minduration``..``maxduration``
  (0: no maximum); a dynamic imp's bid also within ``poddur``;
- ``mincpmpersec``: ``price / duration`` at least the imp's (in its ``bidfloorcur``; seat-non-bid 301);
- a structured slot's position: a bid's ``slotinpod`` 1 (first) needs the imp's ``slotinpod`` 1 or 2,
  -1 (last) needs -1 or 2, 2 needs 1, -1 or 2; 0 or none goes anywhere.

Then each pod is filled with the set of bids of the highest total price such that: a structured imp
holds at most one bid; a dynamic imp at most ``maxseq`` (0: :data:`MAX_POD_ADS`) whose durations add
up to at most ``poddur``, with at most one bid asking to play first, one last, and two asking for
either; no two bids of the pod share an ``adomain`` (brand) or a category (the IAB ``cat`` codes;
with ``includebrandcategory.withcategory`` the category rules already keep one bid per category over
the whole auction). The search is exact (branch and bound over the candidates, best price first) within
:data:`MAX_POD_CANDIDATES` bids per pod (the best-priced) and :data:`MAX_SEARCH_STEPS` steps per auction;
when the steps run out the best set found so far is kept and the pod says ``"exact": false``. Equal
totals keep the set found first: higher prices first, then the bids in the order they came.

Bids that lose the pod stay in the response (as losing bids do), without the winner's targeting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hbserver.adapters.base import ConversionError
from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.bids.nonbid import NonBidReason

MAX_POD_CANDIDATES = 24  # best-priced eligible bids considered per pod
MAX_POD_ADS = 16  # ads a dynamic imp may take when maxseq is 0 (and the most it may ever take)
MAX_SEARCH_STEPS = 4_000  # branch-and-bound steps per auction (a step: one candidate tried; ~12 ms at worst)
FIRST, LAST, EITHER, ANY = 1, -1, 2, 0  # AdCOM SlotPositionInPod
_ALLOWED = {
    ANY: (ANY, FIRST, LAST, EITHER),
    FIRST: (FIRST, EITHER),
    LAST: (LAST, EITHER),
    EITHER: (FIRST, LAST, EITHER),
}
BELOW_FLOOR = NonBidReason.RESPONSE_REJECTED_BELOW_FLOOR  # 301: mincpmpersec
REJECTED = NonBidReason.RESPONSE_REJECTED_GENERAL  # 300: duration or slot rules


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True)
class PodImp:
    """One imp of a pod, its video's pod fields read."""

    imp_id: str
    index: int  # its place in the request
    slot: int = ANY  # imp.video.slotinpod
    poddur: int = 0  # > 0: a dynamic imp
    maxseq: int = 0
    rqddurs: tuple[int, ...] = ()
    minduration: int = 0
    maxduration: int = 0
    mincpmpersec: float = 0.0
    floor_cur: str = "USD"

    @property
    def dynamic(self) -> bool:
        return self.poddur > 0

    @property
    def max_ads(self) -> int:
        return min(self.maxseq, MAX_POD_ADS) if self.maxseq > 0 else MAX_POD_ADS


@dataclass(frozen=True, slots=True)
class Pod:
    pod_id: str
    imps: tuple[PodImp, ...]
    podseq: int | None = None  # the first imp's: passed on, not a rule


def _pod_imp(imp: Mapping[str, Any], video: Mapping[str, Any], index: int) -> PodImp:
    rqddurs = video.get("rqddurs")
    floor_cur = imp.get("bidfloorcur")
    min_cpm = video.get("mincpmpersec")
    return PodImp(
        imp_id=str(imp.get("id", "")),
        index=index,
        slot=_position(video.get("slotinpod")),
        poddur=max(_int(video.get("poddur")), 0),
        maxseq=max(_int(video.get("maxseq")), 0),
        rqddurs=tuple(_int(d) for d in rqddurs) if isinstance(rqddurs, list) else (),
        minduration=_int(video.get("minduration")),
        maxduration=_int(video.get("maxduration")),
        mincpmpersec=float(min_cpm) if isinstance(min_cpm, int | float) and not isinstance(min_cpm, bool) else 0.0,
        floor_cur=floor_cur if isinstance(floor_cur, str) and floor_cur else "USD",
    )


def read_pods(imps: Sequence[Mapping[str, Any]]) -> list[Pod] | None:
    """The request's pods in the order their first imp comes; None when no imp is in one (the only
    cost a request without pods pays: a look at each video's ``podid`` and ``poddur``)."""
    found: dict[str, list[tuple[PodImp, int | None]]] | None = None
    for index, imp in enumerate(imps):
        video = imp.get("video")
        if not isinstance(video, dict):
            continue
        pod_id = video.get("podid")
        if not (isinstance(pod_id, str) and pod_id) and _int(video.get("poddur")) <= 0:
            continue
        key = pod_id if isinstance(pod_id, str) and pod_id else str(imp.get("id", ""))
        podseq = video.get("podseq")
        entry = (_pod_imp(imp, video, index), podseq if isinstance(podseq, int) else None)
        if found is None:
            found = {}
        found.setdefault(key, []).append(entry)
    if found is None:
        return None
    return [Pod(key, tuple(e[0] for e in entries), entries[0][1]) for key, entries in found.items()]


def bid_duration(bid: AuctionBid) -> int:
    """ORTB 2.6 ``bid.dur``, else the adapter's video duration (``ext.prebid.video.duration``)."""
    dur = _int(bid.bid.get("dur"))
    if dur > 0:
        return dur
    return _int(bid.video.get("duration")) if bid.video else 0


def _position(value: Any) -> int:
    number = _int(value)
    return number if number in _ALLOWED else ANY


def bid_position(bid: AuctionBid) -> int:
    """ORTB 2.6 ``bid.slotinpod`` (anything else: 0, any slot)."""
    return _position(bid.bid.get("slotinpod"))


def duration_problem(dur: int, imp: PodImp) -> str:
    """Why a bid of ``dur`` seconds does not fit ``imp`` ("" when it does)."""
    if dur <= 0:
        return "no duration (bid.dur)"
    if imp.rqddurs:
        if dur not in imp.rqddurs:
            return f"duration {dur}s not one of rqddurs {list(imp.rqddurs)}"
    elif dur < imp.minduration or (imp.maxduration > 0 and dur > imp.maxduration):
        return f"duration {dur}s outside minduration {imp.minduration}s / maxduration {imp.maxduration}s"
    if imp.dynamic and dur > imp.poddur:
        return f"duration {dur}s longer than poddur {imp.poddur}s"
    return ""


@dataclass(slots=True)
class PodRejection:
    bid: AuctionBid
    reason: str
    non_bid_code: int

    @property
    def message(self) -> str:
        bid_id = self.bid.bid.get("id")
        return f"pod bid rejected [bid ID: {bid_id if isinstance(bid_id, str) else ''}] reason: {self.reason}"


Convert = Callable[[float, str, str], float]


def check_bid(bid: AuctionBid, imp: PodImp, convert: Convert, currency: str) -> PodRejection | None:
    """The per-bid rules (module text), in order; None when the bid may fill the pod."""
    dur = bid_duration(bid)
    problem = duration_problem(dur, imp)
    if problem:
        return PodRejection(bid, problem, REJECTED)
    if imp.mincpmpersec > 0:
        floor = imp.mincpmpersec
        if imp.floor_cur != currency:
            try:
                floor = convert(floor, imp.floor_cur, currency)
            except ConversionError:  # no rate: the floor cannot be read, the bid is kept
                floor = 0.0
        if bid.price / dur < floor - 1e-9:
            reason = f"{bid.price / dur:.4f} per second below mincpmpersec {floor:.4f} ({currency})"
            return PodRejection(bid, reason, BELOW_FLOOR)
    position = bid_position(bid)
    if not imp.dynamic and imp.slot not in _ALLOWED[position]:
        return PodRejection(bid, f"slotinpod {position} not offered by the slot (imp slotinpod {imp.slot})", REJECTED)
    return None


@dataclass(slots=True)
class PodFill:
    """A pod's bids in play order (first-asking, then by imp and price, last-asking), and whether the
    search was exhaustive."""

    pod: Pod
    slots: list[AuctionBid]
    durations: list[int]
    exact: bool = True


@dataclass(slots=True)
class PodResult:
    kept: list[AuctionBid]  # the auction's bids less the rejected ones
    fills: list[PodFill]
    rejected: list[PodRejection] = field(default_factory=list)
    pod_imps: frozenset[str] = frozenset()

    def selected(self) -> list[AuctionBid]:
        return [bid for fill in self.fills for bid in fill.slots]

    def drop(self, bids: Sequence[AuctionBid]) -> None:
        """Take ``bids`` (left out of the response after the fill) out of the pods' slots."""
        gone = {id(bid) for bid in bids}
        for fill in self.fills:
            if any(id(bid) in gone for bid in fill.slots):
                pairs = [(b, d) for b, d in zip(fill.slots, fill.durations, strict=True) if id(b) not in gone]
                fill.slots, fill.durations = [b for b, _ in pairs], [d for _, d in pairs]


@dataclass(slots=True)
class Candidate:
    bid: AuctionBid
    imp: PodImp
    micros: int  # price in millionths: exact sums, deterministic comparisons
    dur: int
    position: int
    brands: frozenset[str]
    cats: frozenset[str]
    order: int  # arrival


def _strings(value: Any, lower: bool) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset((v.lower() if lower else v) for v in value if isinstance(v, str) and v)


def candidate(bid: AuctionBid, imp: PodImp, order: int, iab_cats: bool) -> Candidate:
    cats = _strings(bid.bid.get("cat"), False) if iab_cats else frozenset()
    return Candidate(bid, imp, round(bid.price * 1_000_000), bid_duration(bid), bid_position(bid),
                     _strings(bid.bid.get("adomain"), True), cats, order)  # fmt: skip


def fill_pods(
    bids: Sequence[AuctionBid],
    pods: Sequence[Pod],
    convert: Convert,
    currency: str,
    iab_cats: bool = True,
    budget: int = MAX_SEARCH_STEPS,
) -> PodResult:
    """Every pod's rules and fill over the auction's bids (``iab_cats`` False: categories are not
    compared, the category rules having kept one bid per category already)."""
    by_imp = {imp.imp_id: imp for pod in pods for imp in pod.imps}
    rejected: list[PodRejection] = []
    out: set[int] = set()
    eligible: dict[str, list[Candidate]] = {}
    for order, bid in enumerate(bids):
        imp = by_imp.get(bid.imp_id)
        if imp is None:
            continue
        rejection = check_bid(bid, imp, convert, currency)
        if rejection is not None:
            rejected.append(rejection)
            out.add(order)
        else:
            eligible.setdefault(imp.imp_id, []).append(candidate(bid, imp, order, iab_cats))
    fills: list[PodFill] = []
    for pod in pods:
        cands = [c for imp in pod.imps for c in eligible.get(imp.imp_id, ())]
        cands.sort(key=lambda c: (-c.micros, c.order))
        search = PodSearch(cands[:MAX_POD_CANDIDATES], max(budget, len(cands) + 1))
        chosen = search.run()
        budget = max(budget - search.steps, 0)
        ordered = play_order(chosen)
        fills.append(PodFill(pod, [c.bid for c in ordered], [c.dur for c in ordered], not search.cut))
    kept = [bid for order, bid in enumerate(bids) if order not in out] if out else list(bids)
    return PodResult(kept, fills, rejected, frozenset(by_imp))


class PodSearch:
    """Branch and bound: candidates best first, each taken (when it fits) before it is skipped; a
    branch is cut when even every remaining candidate could not beat the best total found."""

    __slots__ = ("best", "best_total", "brands", "budget", "cands", "cats", "chosen", "cut", "dyn", "slots",
                 "steps", "suffix")  # fmt: skip

    def __init__(self, cands: list[Candidate], budget: int) -> None:
        self.cands, self.budget = cands, budget
        self.suffix = [0] * (len(cands) + 1)
        for i in range(len(cands) - 1, -1, -1):
            self.suffix[i] = self.suffix[i + 1] + cands[i].micros
        self.best: list[Candidate] = []
        self.best_total = -1
        self.chosen: list[Candidate] = []
        self.steps, self.cut = 0, False
        self.slots: set[str] = set()
        self.dyn: dict[str, list[int]] = {}  # imp id -> [ads, seconds, first, last, either]
        self.brands: set[str] = set()
        self.cats: set[str] = set()

    def run(self) -> list[Candidate]:
        self._visit(0, 0)
        return self.best

    def _visit(self, i: int, total: int) -> None:
        if total > self.best_total:
            self.best_total, self.best = total, list(self.chosen)
        if i == len(self.cands) or total + self.suffix[i] <= self.best_total:
            return
        if self.steps >= self.budget:
            self.cut = True
            return
        self.steps += 1
        cand = self.cands[i]
        if self._fits(cand):
            self._take(cand, 1)
            self._visit(i + 1, total + cand.micros)
            self._take(cand, -1)
        self._visit(i + 1, total)

    def _fits(self, cand: Candidate) -> bool:
        if not cand.brands.isdisjoint(self.brands) or not cand.cats.isdisjoint(self.cats):
            return False
        imp = cand.imp
        if not imp.dynamic:
            return imp.imp_id not in self.slots
        ads, seconds, first, last, either = self.dyn.get(imp.imp_id) or (0, 0, 0, 0, 0)
        if ads + 1 > imp.max_ads or seconds + cand.dur > imp.poddur:
            return False
        first += cand.position == FIRST
        last += cand.position == LAST
        either += cand.position == EITHER
        return first <= 1 and last <= 1 and first + last + either <= 2

    def _take(self, cand: Candidate, sign: int) -> None:
        if sign > 0:
            self.chosen.append(cand)
            self.brands |= cand.brands
            self.cats |= cand.cats
        else:
            self.chosen.pop()
            self.brands -= cand.brands
            self.cats -= cand.cats
        imp = cand.imp
        if not imp.dynamic:
            (self.slots.add if sign > 0 else self.slots.discard)(imp.imp_id)
            return
        state = self.dyn.setdefault(imp.imp_id, [0, 0, 0, 0, 0])
        state[0] += sign
        state[1] += sign * cand.dur
        if cand.position != ANY:
            state[_POSITION_COUNTER[cand.position]] += sign


_POSITION_COUNTER = {FIRST: 2, LAST: 3, EITHER: 4}


def play_order(chosen: Sequence[Candidate]) -> list[Candidate]:
    """The pod's bids as they play: those that must be first (a structured slot's ``slotinpod`` 1, a
    dynamic bid's 1; ``2`` goes first unless another is), then the others by imp and price, then those
    that must be last."""
    positions = [c.imp.slot if not c.imp.dynamic else c.position for c in chosen]
    first_taken = FIRST in positions

    def group(position: int) -> int:
        if position == EITHER:
            return 2 if first_taken else 0
        return {FIRST: 0, LAST: 2}.get(position, 1)

    keyed = sorted(zip(positions, chosen, strict=True), key=lambda p: (group(p[0]), p[1].imp.index, -p[1].micros,
                                                                     p[1].order))  # fmt: skip
    return [c for _, c in keyed]
