"""Tappx adapter: the whole request in one OpenRTB call, its endpoint chosen by the first imp's params.

An ``endpoint`` param like ``zz123ab`` (``(zz|vz)`` digits, then 2-3 letters or ``test``) names a
host ``<endpoint>.pub.tappx.com/rtb/``; any other is a path below ``ssp.api.tappx.com/rtb/v2/``.
Either fills the configured endpoint's ``{{.Host}}``. The query carries ``tappxkey``, ``ts`` (epoch
milliseconds, left out in test requests), ``v=1.6`` and ``type_cnn=prebid``. The request's ext
becomes ``{"bidder": {"tappxkey", "mktag", "bcid", "bcrid"}}`` and a positive ``bidfloor`` param the
first imp's floor. The answer and bid typing are the recipe ``recipes/tappx.yaml``'s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit, urlunsplit

from hbserver.adapters.base import (
    JSON_HEADERS,
    AdapterConfig,
    BidderError,
    RequestData,
    RequestInfo,
    bad_input,
)
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call, resolve_macros
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_fields,
    go_imp,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.recipe import RecipeAdapter

VERSION = "1.6"
TYPE_CNN = "prebid"
_NEW_ENDPOINT = re.compile(r"(zz|vz)[0-9]{3,}([a-z]{2,3}|test)")
_STRUCT = "openrtb_ext.ExtImpTappx"
_FIELDS: Mapping[str, tuple[str, GoKind]] = {
    "host": ("Host", GoKind.STRING), "tappxkey": ("TappxKey", GoKind.STRING),
    "endpoint": ("Endpoint", GoKind.STRING), "bidfloor": ("BidFloor", GoKind.FLOAT),
    "mktag": ("Mktag", GoKind.STRING), "bcid": ("Bcid", GoKind.STRINGS), "bcrid": ("Bcrid", GoKind.STRINGS),
}  # fmt: skip
_PATH_SAFE = "$&+,/:;=@"  # what Go's url.URL leaves unescaped in a path besides letters, digits and -_.~


def epoch_millis() -> int:
    return time.time_ns() // 1_000_000


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The first imp's params as ``openrtb_ext.ExtImpTappx`` (zero values for absent fields)."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError:
        raise _Refused(bad_input("Error parsing bidderExt object")) from None
    except JsonShapeError:
        raise _Refused(bad_input("Error parsing tappxExt parameters")) from None
    out: dict[str, Any] = {"tappxkey": "", "endpoint": "", "bidfloor": 0, "mktag": "", "bcid": None, "bcrid": None}
    try:
        for name, value in go_fields(params, *_FIELDS).items():
            go_name, kind = _FIELDS[name]
            decoded = go_value(value, kind, f"{_STRUCT}.{go_name}")
            out[name] = out.get(name) if decoded is None else decoded
    except JsonShapeError:
        raise _Refused(bad_input("Error parsing tappxExt parameters")) from None
    return out


def _request_ext(params: Mapping[str, Any]) -> dict[str, Any]:
    bidder: dict[str, Any] = {"tappxkey": params["tappxkey"]}
    for name in ("mktag", "bcid", "bcrid"):
        if params[name]:
            bidder[name] = params[name]
    return {"bidder": bidder}


def endpoint_url(template: str, params: Mapping[str, Any], test: bool, now: Callable[[], int]) -> str:
    """The call's URL; _Refused (bad input) without an endpoint or a key."""
    endpoint, key = params["endpoint"], params["tappxkey"]
    if not endpoint:
        raise _Refused(bad_input("Tappx endpoint undefined"))
    if not key:
        raise _Refused(bad_input("Tappx key undefined"))
    new_endpoint = _NEW_ENDPOINT.fullmatch(endpoint) is not None
    host = f"{endpoint}.pub.tappx.com/rtb/" if new_endpoint else "ssp.api.tappx.com/rtb/v2/"
    try:
        parts = urlsplit(resolve_macros(template, {"Host": host}))
    except ValueError as exc:
        raise _Refused(bad_input(f"Malformed URL: {exc}")) from None
    path = unquote(parts.path) + ("" if new_endpoint else endpoint)
    query = [("tappxkey", key)] + ([] if test else [("ts", str(now()))]) + [("type_cnn", TYPE_CNN), ("v", VERSION)]
    return urlunsplit(parts._replace(path=quote(path, safe=_PATH_SAFE), query=urlencode(query)))


class TappxAdapter(RecipeAdapter):
    """The recipe ``recipes/tappx.yaml`` (the answer and bid typing), the call built by Tappx's rules."""

    now: Callable[[], int] = staticmethod(epoch_millis)  # epoch milliseconds of the ``ts`` query parameter

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        try:
            params = _params(imps[0])
            uri = endpoint_url(self.endpoint, params, bool(request.get("test")), self.now)
        except _Refused as refused:
            return [], [refused.error]
        first = {**imps[0], "bidfloor": params["bidfloor"]} if params["bidfloor"] > 0 else imps[0]
        sent = [go_imp(imp) for imp in (first, *imps[1:])]
        body = {**go_request_top(request), "imp": sent, "ext": _request_ext(params)}
        return [json_call(uri, body, imp_ids(sent), JSON_HEADERS)], []


def build(config: AdapterConfig) -> TappxAdapter:
    return TappxAdapter.of_code("tappx", config)
