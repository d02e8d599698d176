"""Ad Up Technology adapter: the recipe ``recipes/aduptech.yaml`` plus the bidder's own rule: a
positive floor in a currency other than the host's target currency (``extra_info``'s
``target_currency``, a valid ISO 4217 code the builder requires) is converted into it, through USD
when there is no direct rate, before the request goes. A floor that cannot be converted stops the
request (PBS-Go's texts)."""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import AdapterConfig, BidderError, ConversionError, RequestData, RequestInfo
from hbserver.adapters.recipe import RecipeAdapter, load_recipe
from hbserver.auction.common.iso4217 import iso4217_problem

_NOT_FOUND = "Currency conversion rate not found"


def target_currency(extra_info: str) -> str:
    """``target_currency`` of the host's extra info, upper case; ValueError (PBS-Go's builder's words)
    when it is missing or no ISO 4217 code."""
    try:
        info = orjson.loads(extra_info or "null")
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    target = info.get("target_currency") if isinstance(info, dict) else None
    if not isinstance(target, str) or not target:
        raise ValueError("invalid extra info: TargetCurrency is empty, pls check")
    if iso4217_problem(target) is not None:
        raise ValueError(f"invalid extra info: invalid TargetCurrency {target}, pls check")
    return target.upper()


def convert(amount: float, currency: str, target: str, info: RequestInfo) -> float:
    """``amount`` in ``target``: directly, else (no rate found) through USD; ConversionError otherwise."""
    try:
        return info.convert_currency(amount, currency, target)
    except ConversionError as exc:
        if not str(exc).startswith(_NOT_FOUND):
            raise
    try:
        in_usd = info.convert_currency(amount, currency, "USD")
    except ConversionError as exc:
        raise ConversionError(
            f"{_NOT_FOUND} from '{currency}' to '{target}'. Error converting from '{currency}' to 'USD': {exc}"
        ) from None
    try:
        return info.convert_currency(in_usd, "USD", target)
    except ConversionError as exc:
        raise ConversionError(
            f"{_NOT_FOUND} from '{currency}' to '{target}'. Error converting from 'USD' to '{target}': {exc}"
        ) from None


class AduptechAdapter(RecipeAdapter):
    """The recipe's call, every floor in the target currency."""

    def __init__(self, config: AdapterConfig) -> None:
        self.target = target_currency(str(config.extra.get("extra_info") or ""))
        recipe = load_recipe("aduptech")
        assert recipe is not None
        super().__init__(recipe, config)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = []
        for imp in request.get("imp") or ():
            floor, currency = imp.get("bidfloor"), imp.get("bidfloorcur")
            if (
                isinstance(floor, int | float)
                and not isinstance(floor, bool)
                and floor > 0
                and isinstance(currency, str)
                and currency
                and currency.upper() != self.target
            ):
                try:
                    imp = {**imp, "bidfloor": convert(floor, currency, self.target, info), "bidfloorcur": self.target}
                except ConversionError as exc:
                    return [], [BidderError(str(exc))]
            imps.append(imp)
        return super().make_requests({**request, "imp": imps} if "imp" in request else request, info)


def build(config: AdapterConfig) -> AduptechAdapter:
    return AduptechAdapter(config)
