"""Adverxo adapter: the recipe ``recipes/adverxo.yaml`` plus the bidder's own rules: its params are
read by Go's ``encoding/json`` (its error texts; a field of the wrong type fails the params after
the others are read), a native bid's ``adm`` loses its ``{"native": ...}`` wrapper (markup that does
not decode fails the whole answer) and ``${AUCTION_PRICE}`` in ``adm`` becomes the price."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import MTYPE_TO_TYPE, AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import (
    GoAnswer,
    ImpExtError,
    go_float_text,
    go_members,
    imp_bidder_params,
    with_auction_price,
)
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter
from hbserver.adapters.rtbhouse import native_adm

_STRUCT = "ImpExtAdverxo"
_KINDS = {str: "string", bool: "bool", list: "array", dict: "object"}
_INT64 = range(-(2**63), 2**63)


def std_kind(value: Any) -> str:
    """How encoding/json names a JSON value in an UnmarshalTypeError."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"number {value if isinstance(value, int) else go_float_text(value)}"
    return _KINDS[type(value)]


def std_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext.bidder`` decoded by encoding/json into ``openrtb_ext.ImpExtAdverxo``: ImpExtError
    when the ext does not decode, JsonShapeError (encoding/json's text) when the params do not."""
    try:
        imp_bidder_params(imp)
    except ImpExtError:
        raise
    except JsonShapeError:
        pass  # the bidder member is read below
    ext = imp.get("ext")
    members = dict(go_members(ext, "bidder")) if isinstance(ext, Mapping) else {}
    if "bidder" not in members:
        raise JsonShapeError("unexpected end of JSON input")
    bidder = members["bidder"]
    params: dict[str, Any] = {"adUnitId": 0, "auth": ""}
    if bidder is None:
        return params
    if not isinstance(bidder, dict):
        raise JsonShapeError(f"json: cannot unmarshal {std_kind(bidder)} into Go value of type openrtb_ext.{_STRUCT}")
    first: str | None = None
    for name, value in go_members(bidder, "adUnitId", "auth"):
        if value is None:
            continue
        wants_int = name == "adUnitId"
        fits = (
            isinstance(value, int) and not isinstance(value, bool) and value in _INT64
            if wants_int
            else isinstance(value, str)
        )
        if fits:
            params[name] = value
        elif first is None:
            kind = "int" if wants_int else "string"
            first = f"json: cannot unmarshal {std_kind(value)} into Go struct field {_STRUCT}.{name} of type {kind}"
    if first is not None:
        raise JsonShapeError(first)
    return params


class AdverxoAdapter(RecipeAdapter):
    def read_params(self, imp: Mapping[str, Any], index: int) -> dict[str, Any]:
        recipe, imp_id = self.recipe, imp.get("id", "")
        try:
            return std_params(imp)
        except ImpExtError as exc:
            raise DroppedImp(recipe.imp_ext_error.error(str(exc), index, imp_id)) from None
        except JsonShapeError as exc:
            raise DroppedImp(recipe.params_error.error(str(exc), index, imp_id)) from None

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """The recipe's bids once native markup is unwrapped and the price macro resolved, bid by bid
        until one the recipe cannot type (which then fails the answer in its words)."""
        seatbids: list[tuple[str, list[dict[str, Any]]]] = []
        for seat, bids in answer.seatbids:
            seatbids.append((seat, []))
            for bid in bids:
                kind = MTYPE_TO_TYPE.get(bid.get("mtype"))  # type: ignore[arg-type]
                if kind is None:  # the recipe fails the answer here
                    seatbids[-1][1].append(bid)
                    return super().typed_bids(request, answer._replace(seatbids=seatbids))
                if kind == "native":
                    try:
                        bid = {**bid, "adm": native_adm(bid.get("adm", ""))}
                    except ValueError as exc:
                        return None, [BidderError(str(exc))]
                seatbids[-1][1].append(with_auction_price(bid, ("adm",)))
        return super().typed_bids(request, answer._replace(seatbids=seatbids))


def build(config: AdapterConfig) -> AdverxoAdapter:
    return AdverxoAdapter.of_code("adverxo", config)
