"""PulsePoint adapter: one OpenRTB call with every imp whose params decode.

Each imp's ``ct`` param (an integer, or a string of one) becomes its ``tagid``; the ``cp`` param of
the first imp that gives one becomes the publisher id of the site (else the app), replacing any
given. An imp without a usable ``cp`` (while none is known yet) or ``ct`` is reported and left out.
The answer and bid typing are the recipe ``recipes/pulsepoint.yaml``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import JSON_HEADERS, AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call
from hbserver.adapters.golike import go_imp, go_members, go_request_top, imp_bidder_params
from hbserver.adapters.recipe import RecipeAdapter

_MALFORMED = "Value looks like Number/Boolean/None, but can't find its end: ',' or '}' symbol"
_OVERFLOW = "Value is number, but overflowed while parsing"
_STRUCT = "openrtb_ext.ExtImpPulsePoint"
_FIELDS = {"cp": "PubID", "ct": "TagID"}


def string_int(value: Any, where: str) -> int:
    """``value`` as PBS-Go's ``jsonutil.StringInt`` reads it (jsonparser.ParseInt of the raw text, a
    string's quotes taken off): an optional ``-`` and ASCII digits within int64, "" being 0;
    JsonShapeError in its words otherwise (null, booleans, floats included)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        raise JsonShapeError(f"cannot unmarshal {where}: {_MALFORMED}")
    digits = text.removeprefix("-")
    if not text:
        return 0
    if digits and not (digits.isascii() and digits.isdigit()):
        raise JsonShapeError(f"cannot unmarshal {where}: {_MALFORMED}")
    significant = digits.lstrip("0")
    number = int(significant or "0") if len(significant) <= 19 else 2**64
    number = -number if text.startswith("-") else number
    if not -(2**63) <= number < 2**63:
        raise JsonShapeError(f"cannot unmarshal {where}: {_OVERFLOW}")
    return number


def _params(imp: Mapping[str, Any]) -> dict[str, int]:
    """``cp`` and ``ct`` of the imp (0 when not given); JsonShapeError when its ext or params do not decode."""
    out = {"cp": 0, "ct": 0}
    for name, value in go_members(imp_bidder_params(imp), *_FIELDS):
        out[name] = string_int(value, f"{_STRUCT}.{_FIELDS[name]}")
    return out


def _with_publisher(request: Mapping[str, Any], pub_id: str) -> dict[str, Any]:
    """The request's top level with the site's (else the app's) publisher id set to ``pub_id``."""
    out = go_request_top(request)
    for key in ("site", "app"):
        owner = request.get(key)
        if isinstance(owner, dict):
            publisher = owner.get("publisher")
            publisher = dict(publisher) if isinstance(publisher, dict) else {}
            publisher["id"] = pub_id
            out[key] = {**owner, "publisher": publisher}
            break
    return out


class PulsepointAdapter(RecipeAdapter):
    """The recipe ``recipes/pulsepoint.yaml`` (the answer and bid typing), the call PulsePoint's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        pub_id = ""
        for imp in request.get("imp") or ():
            try:
                params = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if not pub_id:
                if not params["cp"]:
                    errors.append(bad_input("param not found - pubID"))
                    continue
                pub_id = str(params["cp"])
            if not params["ct"]:
                errors.append(bad_input("param not found - tagID"))
                continue
            imps.append(go_imp({**imp, "tagid": str(params["ct"])}))
        if not imps:
            return [], errors
        body = {**_with_publisher(request, pub_id), "imp": imps}
        return [json_call(self.endpoint, body, imp_ids(imps), JSON_HEADERS)], errors


def build(config: AdapterConfig) -> PulsepointAdapter:
    return PulsepointAdapter.of_code("pulsepoint", config)
