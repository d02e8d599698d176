"""What several adapters share: PBS-Go's status-code errors and json-iterator's wording for input
of the wrong JSON shape (the fixtures' expected error texts)."""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import BidderError, ResponseData, bad_input, bad_server_response

UNEXPECTED_STATUS = "Unexpected status code: {}. Run with request.debug = 1 for more info"


def status_error(status: int) -> BidderError | None:
    """None for 200; 400 is bad input, anything else a bad server response (callers treat 204 first)."""
    if status == 200:
        return None
    message = UNEXPECTED_STATUS.format(status)
    return bad_input(message) if status == 400 else bad_server_response(message)


def decode_answer(
    response: ResponseData, not_an_object: str = "Bad response body: not a JSON object"
) -> tuple[dict[str, Any] | None, list[BidderError]]:
    """A bidder's OpenRTB answer as a JSON object: (None, []) for 204, (None, [error]) for a failure
    status or a body that is not a JSON object (``not_an_object`` is that error's text; ``{found}``
    in it becomes json-iterator's "but found" character of the value)."""
    if response.status == 204:
        return None, []
    error = status_error(response.status)
    if error is not None:
        return None, [error]
    try:
        data = orjson.loads(response.body)
    except orjson.JSONDecodeError as exc:
        return None, [bad_server_response(f"Bad response body: {exc}")]
    if not isinstance(data, dict):
        return None, [bad_server_response(not_an_object.format(found=found(data)))]
    return data, []


class JsonShapeError(ValueError):
    """Input of the wrong JSON shape; the message is PBS-Go's (json-iterator's) text."""


def found(value: Any) -> str:
    """The first character of ``value`` as JSON text (json-iterator's "but found" character)."""
    if isinstance(value, str):
        return '"'
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, list):
        return "["
    if isinstance(value, dict):
        return "{"
    return str(value)[:1]


def expect_object(value: Any, where: str) -> dict[str, Any]:
    """A JSON object field (null = empty); anything else fails as json-iterator words it."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    prefix = f"cannot unmarshal {where}: " if where else ""
    raise JsonShapeError(f"{prefix}expect {{ or n, but found {found(value)}")


def expect_string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise JsonShapeError(f'cannot unmarshal {where}: expects " or n, but found {found(value)}')
