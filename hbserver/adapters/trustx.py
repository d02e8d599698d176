"""TRUSTX adapter: the recipe ``recipes/trustx.yaml`` with TRUSTX's own parts.

- An imp whose ``ext.data.adserver.adslot`` is set gets it as ``ext.gpid``, its ext then written
  again as PBS-Go's ``impExt`` (``prebid``, ``bidder``, ``data``, ``gpid``; any other member gone);
  an ext that does not decode as that struct is sent as it came.
- A video bid gets its first category and positive duration as video facts; a bid whose
  ``ext.bidder.trustx.networkName`` is set gets it as its meta network name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.common import with_video_facts
from hbserver.adapters.golike import GoAnswer, go_fields
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import BID_VIDEO

# openrtb_ext.ExtImpPrebid's keys: True = omitempty on a value (left out when empty), False = a pointer
# or raw message (left out only when null)
_PREBID_KEYS = {
    "storedrequest": False, "storedauctionresponse": False, "storedbidresponse": True,
    "is_rewarded_inventory": False, "bidder": True, "options": False, "adunitcode": True,
    "passthrough": False, "floors": False, "imp": True,
}  # fmt: skip


def _text_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _object_or_null(value: Any) -> bool:
    return value is None or isinstance(value, Mapping)


def _adslot(ext: Mapping[str, Any]) -> str | None:
    """``ext.data.adserver.adslot`` when the ext decodes as ``impExt`` ("" without one); None when it
    does not decode."""
    members = go_fields(ext, "prebid", "data", "gpid")
    data = members.get("data")
    if not (_object_or_null(members.get("prebid")) and _object_or_null(data) and _text_or_null(members.get("gpid"))):
        return None
    data_members = go_fields(data or {}, "pbadslot", "adserver")
    adserver = data_members.get("adserver")
    if not (_text_or_null(data_members.get("pbadslot")) and _object_or_null(adserver)):
        return None
    server = go_fields(adserver or {}, "name", "adslot")
    if not all(_text_or_null(value) for value in server.values()):
        return None
    return server.get("adslot") or ""


def with_gpid(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with ``ext.gpid`` its adserver's adslot, the ext as ``impExt`` writes it (see the
    module docstring); the imp itself when there is no adslot or the ext does not decode."""
    ext = imp.get("ext")
    slot = _adslot(ext) if isinstance(ext, Mapping) else None
    if not slot:
        return imp
    members = go_fields(ext, "prebid", "bidder", "data")
    out: dict[str, Any] = {}
    if members.get("prebid") is not None:
        kept = {key: value for key, value in members["prebid"].items() if key in _PREBID_KEYS and value is not None}
        out["prebid"] = {key: value for key, value in kept.items() if not (_PREBID_KEYS[key] and value in ("", [], {}))}
    out["bidder"] = members.get("bidder")
    data = go_fields(members["data"], "pbadslot", "adserver")
    server = go_fields(data["adserver"], "name")
    out["data"] = {
        **({"pbadslot": data["pbadslot"]} if data.get("pbadslot") else {}),
        "adserver": {**({"name": server["name"]} if server.get("name") else {}), "adslot": slot},
    }
    out["gpid"] = slot
    return {**imp, "ext": out}


def network_name(ext: Any) -> str:
    """``ext.bidder.trustx.networkName`` as Go's ``bidExt`` decodes it ("" when the ext does not
    decode or has none)."""
    value = ext
    for name in ("bidder", "trustx", "networkName"):
        if not _object_or_null(value):
            return ""
        value = go_fields(value or {}, name).get(name)
    return value if isinstance(value, str) else ""


class TrustXAdapter(RecipeAdapter):
    """The recipe with TRUSTX's gpid, video facts and meta."""

    def rewritten_imp(self, imp: dict[str, Any]) -> dict[str, Any]:
        return with_gpid(super().rewritten_imp(imp))

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = with_video_facts(super().typed_bids(request, answer), BID_VIDEO["cat_dur"])
        for typed in result.bids if result is not None else ():
            network = network_name(typed.bid.get("ext"))
            if network:
                typed.bid_meta = {"networkName": network}
        return result, errors


def build(config: AdapterConfig) -> TrustXAdapter:
    return TrustXAdapter.of_code("trustx", config)
