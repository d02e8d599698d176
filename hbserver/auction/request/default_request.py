"""PBS-Go's ``default_request``: a request read once at start (``type: file``, ``file.name``) that
every /openrtb2/auction request is merged into after its stored request, the request's own values
winning (a JSON merge patch, as PBS-Go's ``processStoredRequests``). AMP requests do not get it,
as in PBS-Go. A file that cannot be read or is not a valid request stops start-up, as PBS-Go's
``readDefaultRequest`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from hbserver.auction.request.ortb_types import request_type_error
from hbserver.config import DefaultRequest


def load_default_request(settings: DefaultRequest) -> dict[str, Any] | None:
    """The default request (None when none is configured); raises ValueError naming the problem."""
    if settings.type != "file" or not settings.file.name:
        return None
    path = settings.file.name
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"default_request.file.name: cannot read {path}: {exc.strerror or exc}") from None
    try:
        request = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"default_request.file.name: {path} is not valid JSON: {exc}") from None
    if not isinstance(request, dict):
        raise ValueError(f"default_request.file.name: {path} must hold a JSON object (an OpenRTB request)")
    problem = request_type_error(request)
    if problem is not None:
        raise ValueError(f"default_request.file.name: {path} is not a valid request: {problem}")
    return request
