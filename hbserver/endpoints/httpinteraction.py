"""GET /logging/httpinteraction (admin): arm the HTTP-interaction log of the worker that answers.

PBS-Java's admin endpoint (``HttpInteractionLogHandler``): ``endpoint`` (``auction`` | ``amp``),
``statusCode``, ``account`` and the required ``limit`` choose the next interactions to log in full
(see :class:`hbserver.web.requestlog.HttpInteractionLog`); a bad value is a 400 with PBS-Java's text
naming the parameter. Beyond PBS-Java: ``statusCode`` may be any HTTP status (100-599, hbserver
answers 503 too), ``limit`` is capped by :data:`MAX_LIMIT`, ``account`` by :data:`MAX_ACCOUNT_LENGTH`,
and an unknown, repeated or unsupported (``bidder``) parameter is refused rather than ignored.

Each worker process has its own log state: with several workers a call arms only the one that
answers it (call it once per worker, or run one worker while debugging).
"""

from __future__ import annotations

import os

import orjson
from aiohttp import web

from hbserver.numbers import INT32, NumberError, parse_int
from hbserver.web.errors import HttpError
from hbserver.web.requestlog import HttpInteractionLog, InteractionSpec

MAX_LIMIT = 1000  # PBS-Java's logging.http-interaction.max-limit, fixed
MAX_ACCOUNT_LENGTH = 256
MIN_STATUS, MAX_STATUS = 100, 599
ENDPOINTS = ("auction", "amp")
PARAMETERS = ("endpoint", "statusCode", "account", "limit")


def _bad(message: str) -> HttpError:
    return HttpError(400, message)


def _integer(query: dict[str, str], name: str) -> int | None:
    value = query.get(name)
    if value is None:
        return None
    try:
        return parse_int(value, INT32)  # PBS-Java's Integer.parseInt, ASCII digits only
    except NumberError:
        raise _bad(f"Invalid '{name}' parameter value") from None


def parse_spec(request: web.BaseRequest) -> InteractionSpec:
    """The spec the query asks for; :class:`HttpError` 400 naming the first bad parameter."""
    values: dict[str, str] = {}
    for name, value in request.query.items():
        if name == "bidder":
            raise _bad("Parameter 'bidder' is not supported: hbserver logs auction and amp interactions only")
        if name not in PARAMETERS:
            raise _bad(f"Unknown parameter '{name[:64]}', allowed parameters '[{', '.join(PARAMETERS)}]'")
        if name in values:
            raise _bad(f"Parameter '{name}' must be given once")
        values[name] = value
    endpoint = values.get("endpoint")
    if endpoint is not None and endpoint not in ENDPOINTS:
        raise _bad(f"Invalid 'endpoint' parameter value, allowed values '[{', '.join(ENDPOINTS)}]'")
    status_code = _integer(values, "statusCode")
    if status_code is not None and not MIN_STATUS <= status_code <= MAX_STATUS:
        raise _bad(f"Parameter 'statusCode' must be between {MIN_STATUS} and {MAX_STATUS}")
    account = values.get("account")
    if account is not None and not account:
        raise _bad("Parameter 'account' must not be empty")
    if account is not None and len(account) > MAX_ACCOUNT_LENGTH:
        raise _bad(f"Parameter 'account' must be at most {MAX_ACCOUNT_LENGTH} characters")
    limit = _integer(values, "limit")
    if limit is None:
        raise _bad("Missing required parameter 'limit'")
    if not 1 <= limit <= MAX_LIMIT:
        raise _bad(f"Parameter 'limit' must be between 1 and {MAX_LIMIT}")
    return InteractionSpec(endpoint=endpoint, status_code=status_code, account=account, limit=limit)


class HttpInteractionEndpoint:
    def __init__(self, interactions: HttpInteractionLog) -> None:
        self.interactions = interactions

    async def handle(self, request: web.Request) -> web.Response:
        spec = parse_spec(request)
        self.interactions.arm(spec)
        body = {
            "worker": os.getpid(), "endpoint": spec.endpoint, "statusCode": spec.status_code,
            "account": spec.account, "limit": spec.limit,
        }
        return web.Response(body=orjson.dumps(body), content_type="application/json")
