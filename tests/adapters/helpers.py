"""What the adapter tests share: test imps, calling an adapter as the exchange does (checking it
leaves the request alone), and a currency converter that knows one rate."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    Adapter,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
)

MEDIA_TYPES = ("banner", "video", "audio", "native")


def imp_with(imp_id: str, params: Any, fields: Mapping[str, Any], default_media: Mapping[str, Any]) -> dict[str, Any]:
    """A test imp: the media objects ``fields`` name (``default_media`` when they name none), the
    other ``fields``, and ``{"bidder": params}`` as its ext unless ``fields`` give one."""
    media = {kind: value for kind, value in fields.items() if kind in MEDIA_TYPES}
    out = {"id": imp_id, **(media or default_media)}
    out.update((name, value) for name, value in fields.items() if name not in media)
    out.setdefault("ext", {"bidder": params})
    return out


def converter(source: str, rate: float = 2.0) -> Callable[[float, str, str], float]:
    """A ``RequestInfo.convert_currency`` that knows ``source`` -> USD at ``rate`` and nothing else
    (PBS-Go's text for any other pair)."""

    def convert(amount: float, from_currency: str, to_currency: str) -> float:
        if (from_currency, to_currency) == (source, "USD"):
            return amount * rate
        raise ConversionError(f"Currency conversion rate not found: '{from_currency}' => '{to_currency}'")

    return convert


def requests_of(
    adapter: Adapter, request: dict[str, Any], info: RequestInfo
) -> tuple[list[RequestData], list[Any], list[BidderError]]:
    """``adapter.make_requests``: the calls, their bodies decoded and the errors; fails when the
    adapter changed ``request`` (the exchange hands the same one to every bidder)."""
    before = copy.deepcopy(request)
    calls, errors = adapter.make_requests(request, info)
    assert request == before, "the adapter changed the request"
    return calls, [orjson.loads(call.body) for call in calls if call.body is not None], errors


def bids_for(
    adapter: Adapter,
    request: dict[str, Any],
    body: Any,
    status: int = 200,
    headers: dict[str, str] | None = None,
    call: RequestData | None = None,
) -> tuple[BidderResponse | None, list[BidderError]]:
    """``adapter.make_bids`` for an answer with ``status`` whose body is ``body`` (bytes as given,
    anything else encoded as JSON), to ``call`` (by default a POST with no body); fails when the
    adapter changed ``request``."""
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    sent = RequestData("POST", "") if call is None else call
    before = copy.deepcopy(request)
    answer = adapter.make_bids(request, sent, ResponseData(status, raw, headers or {}))
    assert request == before, "the adapter changed the request"
    return answer
