"""CPMStar adapter: the recipe ``recipes/cpmstar.yaml`` (the whole request in one call, the answer
and bid typing) plus the bidder's own rule: each imp's params move from ``imp.ext.bidder`` up into
``imp.ext`` itself (its other keys kept, numbers as Go's ``interface{}`` writes them). Only banner and
video imps are taken: any other imp, or one without ``ext.bidder``, refuses the whole request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import ABSENT_OBJECT
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp

_FLOAT_EXACT = 2**53


class _Refused(Exception):
    """An imp that refuses the whole request; the message is PBS-Go's."""


def _as_go_interface(value: Any) -> Any:
    """A JSON value decoded into Go's ``interface{}`` and written again: numbers become float64."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT_EXACT:
        return float(value)
    if isinstance(value, list):
        return [_as_go_interface(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_go_interface(item) for key, item in value.items()}
    return value


def flattened_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext`` with ``bidder`` replaced by its own keys; _Refused (PBS-Go's words) when the ext or
    its ``bidder`` is no object, it has no ``bidder`` or the imp is neither banner nor video."""
    try:
        ext = expect_object(imp["ext"], "") if "ext" in imp else None
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    if ext is None:
        raise _Refused(ABSENT_OBJECT)
    if "bidder" not in ext:
        raise _Refused("bidder field not found in impression extension")
    if imp.get("banner") is None and imp.get("video") is None:
        raise _Refused("Only Banner and Video bid-types are supported at this time")
    try:
        params = expect_object(ext["bidder"], "")
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    flat = {key: value for key, value in ext.items() if key != "bidder"}
    flat.update(_as_go_interface(params))
    return flat


class CpmstarAdapter(RecipeAdapter):
    """The recipe ``recipes/cpmstar.yaml``, each imp's ext flattened (CPMStar's own rule)."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        try:
            return Prepared(typed_imp({**imp, "ext": flattened_ext(imp)}), self.endpoint, {})
        except _Refused as refused:
            raise DroppedImp(bad_input(str(refused))) from None


def build(config: AdapterConfig) -> CpmstarAdapter:
    return CpmstarAdapter.of_code("cpmstar", config)
