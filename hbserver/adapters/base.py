"""The adapter interface: two pure functions per bidder, data in and data out (PBS-Go's shape).

``make_requests(request, info) -> (calls, errors)`` turns the bidder's OpenRTB request (a plain
dict, already split, privacy-scrubbed and converted to the bidder's OpenRTB version) into HTTP
calls. ``make_bids(request, call, response) -> (bidder_response, errors)`` turns one HTTP answer
into typed bids. No adapter opens a socket, reads a clock or keeps state between requests: the
exchange sends the calls over the application's shared session and enforces the deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol

JSON_HEADERS: Mapping[str, str] = {
    "Content-Type": "application/json;charset=utf-8",
    "Accept": "application/json",
}


class ErrorCode(IntEnum):
    """Bidder error codes of the specification (§7.1) and PBS-Java."""

    NO_ERROR = 0
    TIMEOUT = 1
    BAD_INPUT = 2
    BAD_SERVER_RESPONSE = 3
    FAILED_TO_REQUEST_BIDS = 4
    UNKNOWN = 999


@dataclass(slots=True)
class BidderError:
    message: str
    code: ErrorCode = ErrorCode.UNKNOWN

    def as_json(self) -> dict[str, Any]:
        return {"code": int(self.code), "message": self.message}


def bad_input(message: str) -> BidderError:
    return BidderError(message, ErrorCode.BAD_INPUT)


def bad_server_response(message: str) -> BidderError:
    return BidderError(message, ErrorCode.BAD_SERVER_RESPONSE)


@dataclass(slots=True)
class RequestData:
    """One HTTP call an adapter wants made."""

    method: str
    uri: str
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: JSON_HEADERS)
    imp_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ResponseData:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class TypedBid:
    """An OpenRTB bid (a plain dict) with the media type the adapter assigned to it."""

    bid: dict[str, Any]
    bid_type: str  # banner | video | audio | native
    seat: str = ""  # an alternate seat code, "" = the bidder's own
    deal_priority: int = 0
    bid_video: dict[str, Any] | None = None
    bid_meta: dict[str, Any] | None = None


@dataclass(slots=True)
class BidderResponse:
    bids: list[TypedBid] = field(default_factory=list)
    currency: str = "USD"
    # Protected Audience configs, each {"impid", "bidder"?, "adapter"?, "config"}; None = none given
    fledge_auction_configs: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class AdapterConfig:
    """What an adapter is built with: its bidder code and the host's settings for it."""

    bidder: str  # the code it runs under (an alias keeps its own code)
    endpoint: str
    extra: Mapping[str, Any] = field(default_factory=dict)


def _no_conversion(amount: float, from_currency: str, to_currency: str) -> float:
    if from_currency.upper() == to_currency.upper():
        return amount
    raise ConversionError(f"Currency conversion rate not found: '{from_currency}' => '{to_currency}'")


class ConversionError(ValueError):
    """No rate between two currencies (PBS-Go's text)."""


@dataclass(slots=True)
class RequestInfo:
    """Facts about the auction an adapter may use beyond the OpenRTB request (PBS-Go's
    ExtraRequestInfo)."""

    bidder: str  # the code the bidder runs under in this request (an alias keeps its name)
    adapter_code: str = ""  # the built-in adapter it runs (PBS-Go's BidderCoreName)
    openrtb_version: str = "2.5"
    entry_point: str = "openrtb2-auction"  # or "openrtb2-amp"
    global_privacy_control: str = ""  # the incoming Sec-GPC header
    # convert_currency(amount, from, to) -> amount in ``to``; raises ConversionError
    convert_currency: Callable[[float, str, str], float] = _no_conversion


class Adapter(Protocol):
    def make_requests(
        self, request: dict[str, Any], info: RequestInfo
    ) -> tuple[list[RequestData], list[BidderError]]: ...

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]: ...


class TimeoutNotifier(Protocol):
    """An adapter that tells its bidder about a call that timed out (PBS-Go's ``TimeoutBidder``): the
    exchange sends the request this makes, with the timed-out call's headers, within
    :data:`hbserver.auction.exchange.fanout.TIMEOUT_NOTIFICATION_SECONDS`; None sends nothing."""

    def make_timeout_notification(self, call: RequestData) -> RequestData | None: ...


MTYPE_TO_TYPE = {1: "banner", 2: "video", 3: "audio", 4: "native"}
