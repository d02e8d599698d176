"""The ``/openrtb2/video`` answer: ``{"adPods": [...]}`` from the auction's OpenRTB response (PBS-Go's
``buildVideoResponse``).

Each bid whose VAST was cached (it has ``hb_uuid_<seat>``) adds ``{hb_pb, hb_pb_cat_dur,
hb_cache_id, hb_deal}`` (its ``_<seat>`` keys, cut to 20 characters as targeting keys are; empty ones
left out; ``hb_cache_id`` is the ``hb_uuid`` value) to the pod its imp id names (``<podid>_<n>``),
pods in the order their first bid comes. Bids without a cached VAST are skipped; when there were bids
and none was cached the request fails (``caching failed for all bids``). Pods that had errors follow
with ``targeting: null`` and their errors.

PBS-Go finds a key by walking the targeting map (Go's random order) for a key whose part from its
first ``_`` starts the wanted key, so ``hb_pb`` may answer for ``hb_pb_cat_dur_<seat>``; here the
longest such part wins, which is the key PBS-Go means (same answer whenever PBS-Go's is unambiguous).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hbserver.auction.request.video import PodError

MAX_KEY_LENGTH = 20  # PBS-Go's exchange.MaxKeyLength

_FIELDS = (("hb_pb", "_pb"), ("hb_pb_cat_dur", "_pb_cat_dur"), ("hb_cache_id", "_uuid"), ("hb_deal", "_deal"))


class CachingFailed(Exception):
    """There were bids and none had its VAST cached."""


def wanted_key(key: str, seat: str) -> str:
    """PBS-Go's ``formatTargetingKey``: ``<key>_<seat>`` (key without its ``hb`` prefix), cut to 20."""
    return f"{key}_{seat}"[:MAX_KEY_LENGTH]


def find_targeting(targeting: Mapping[str, Any], wanted: str) -> str:
    """The value of the key whose part from its first ``_`` starts ``wanted`` (the longest such part)."""
    best, best_len = "", -1
    for key, value in targeting.items():
        cut = key.find("_")
        if cut > 0 and wanted.startswith(key[cut:]) and len(key) - cut > best_len and isinstance(value, str):
            best, best_len = value, len(key) - cut
    return best


def pod_id_of(imp_id: str) -> int:
    """Go's ``strconv.ParseInt(<part before the first "_">, 0, 64)``, 0 when it does not parse."""
    text = imp_id.split("_", 1)[0]
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:  # Go's base 0 reads a leading 0 as octal, which Python's refuses
        return int(text, 8) if text.lstrip("+-").startswith("0") else 0
    except ValueError:
        return 0


def _seat_bids(response: Mapping[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    for seatbid in response.get("seatbid") or ():
        seat = seatbid.get("seat") or ""
        for bid in seatbid.get("bid") or ():
            yield seat, bid


def _targeting_of(bid: Mapping[str, Any]) -> Mapping[str, Any]:
    ext = bid.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    targeting = prebid.get("targeting") if isinstance(prebid, dict) else None
    return targeting if isinstance(targeting, dict) else {}


def build_adpods(response: Mapping[str, Any], pod_errors: list[PodError]) -> list[dict[str, Any]]:
    """The answer's ``adPods``; raises CachingFailed when bids came back and none was cached."""
    pods: dict[int, dict[str, Any]] = {}
    any_bid = False
    for seat, bid in _seat_bids(response):
        any_bid = True
        targeting = _targeting_of(bid)
        if not find_targeting(targeting, wanted_key("_uuid", seat)):
            continue
        values = {name: find_targeting(targeting, wanted_key(key, seat)) for name, key in _FIELDS}
        pod_id = pod_id_of(str(bid.get("impid") or ""))
        pod = pods.get(pod_id)
        if pod is None:
            pod = pods[pod_id] = {"podid": pod_id, "targeting": [], "errors": None}
        pod["targeting"].append({name: value for name, value in values.items() if value})
    if any_bid and not pods:
        raise CachingFailed("caching failed for all bids")
    adpods = list(pods.values())
    adpods.extend({"podid": e.pod_id, "targeting": None, "errors": e.messages} for e in pod_errors)
    return adpods
