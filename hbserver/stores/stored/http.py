"""The HTTP backend, PBS-Go's protocol with its RFC 3986 request builder.

``GET {endpoint}?request-id=a&request-id=b&imp-id=c`` answers ``{"requests":{id:json},"imps":{id:json}}``;
responses (``response-id`` -> ``"responses"``) and accounts (``account-id`` -> ``"accounts"``) are
asked in GETs of their own. A ``null`` value or an absent id is "not stored here". Answers are
read up to :data:`MAX_ANSWER_BYTES`; the caller's deadline bounds the whole exchange.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson
from yarl import URL

from hbserver.stores.stored.base import Answer, BackendError, Failure, Kind, Wanted
from hbserver.web.client import BodyTooLarge, read_bounded

MAX_ANSWER_BYTES = 4 * 1024 * 1024

# (kind, query parameter, answer member); kinds in one tuple share one GET.
_GROUPS: tuple[tuple[tuple[Kind, str, str], ...], ...] = (
    (("requests", "request-id", "requests"), ("imps", "imp-id", "imps")),
    (("responses", "response-id", "responses"),),
    (("accounts", "account-id", "accounts"),),
)
_ACCEPT_JSON = {"Accept": "application/json"}
_WHAT = {"requests": "Stored Requests", "imps": "Stored Requests", "responses": "Stored Responses",
         "accounts": "Accounts"}


class HttpBackend:
    name = "http"

    def __init__(self, endpoint: str, session: Callable[[], aiohttp.ClientSession]) -> None:
        self.endpoint = endpoint
        self._joiner = "&" if "?" in endpoint else "?"
        self._session = session

    def url(self, params: list[tuple[str, str]]) -> URL:
        """``endpoint`` plus ``name=value`` pairs, every value percent-encoded (RFC 3986 unreserved kept)."""
        query = "&".join(f"{name}={quote(value, safe='')}" for name, value in params)
        return URL(self.endpoint + self._joiner + query, encoded=True)

    async def fetch(self, wanted: Wanted) -> Answer:
        calls = []
        for group in _GROUPS:
            members = [(kind, param, member) for kind, param, member in group if wanted.get(kind)]
            if members:
                calls.append(self._fetch_group(members, wanted))
        merged: Answer = {}
        for answer in await asyncio.gather(*calls):
            merged.update(answer)
        return merged

    async def _fetch_group(self, members: list[tuple[Kind, str, str]], wanted: Wanted) -> Answer:
        """One GET for the kinds of one group; a failure fails that group's ids only."""
        what = _WHAT[members[0][0]]
        params = [(param, item_id) for kind, param, _member in members for item_id in wanted[kind]]
        try:
            body = await self._get(self.url(params), what)
            return _parse(body, members, wanted)
        except BackendError as exc:
            failure = exc.failure()
            return {kind: dict.fromkeys(wanted[kind], failure) for kind, _param, _member in members}

    async def _get(self, url: URL, what: str) -> bytes:
        try:
            # A redirect is an answer like any other non-200: never followed (it could point anywhere).
            async with self._session().get(url, headers=_ACCEPT_JSON, allow_redirects=False) as response:
                if response.status != 200:
                    raise BackendError(f"Error fetching {what} via HTTP. Response code was {response.status}", "status")
                return await _read_bounded(response, what)
        except aiohttp.ClientError as exc:
            raise BackendError(
                f"Error fetching {what} via HTTP: {exc.__class__.__name__}", detail=f"GET {url}: {exc}"
            ) from None


def _malformed(what: str) -> BackendError:
    return BackendError(f"Error fetching {what} via HTTP: the answer is not a JSON object of objects", "malformed")


def _parse(body: bytes, members: list[tuple[Kind, str, str]], wanted: Wanted) -> Answer:
    what = _WHAT[members[0][0]]
    try:
        document: Any = orjson.loads(body)
        if not isinstance(document, dict):
            raise _malformed(what)
        answer: Answer = {}
        for kind, _param, member in members:
            values = document.get(member) or {}
            if not isinstance(values, dict):
                raise _malformed(what)
            found: dict[str, bytes | Failure] = {}
            for item_id in wanted[kind]:
                value = values.get(item_id)
                if value is not None:
                    found[item_id] = orjson.dumps(value)
            answer[kind] = found
        return answer
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # encode: a value nested deeper than JSON allows
        raise _malformed(what) from None


async def _read_bounded(response: aiohttp.ClientResponse, what: str) -> bytes:
    """The body, refused (not buffered) past MAX_ANSWER_BYTES, announced or not, decompressed or not."""
    try:
        return await read_bounded(response, MAX_ANSWER_BYTES)
    except BodyTooLarge:
        raise BackendError(
            f"Error fetching {what} via HTTP: answer larger than {MAX_ANSWER_BYTES} bytes", "too_large"
        ) from None
