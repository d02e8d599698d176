"""An external Prebid Cache over HTTP (``cache.remote.url``, e.g. https://cache.example.com/cache).

It speaks the Prebid Cache API: ``POST {url}`` with ``{"puts":[…]}`` and ``GET {url}?uuid=``,
over the application's shared keep-alive session. Error texts are PBS-Java's (DECISIONS: they
follow ``Error occurred while sending request to cache:``), less anything that would name the
cache's address or quote its answer (that goes to the log). Redirects are never followed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
import orjson

from hbserver.stores.cache.base import CachedValue, CacheItem, CacheStoreError
from hbserver.web.client import BodyTooLarge, read_bounded

MAX_ERROR_BODY = 200  # characters of an unreadable answer quoted in the log
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # an answer longer than this is refused, not buffered


async def _read_bounded(response: aiohttp.ClientResponse) -> bytes:
    try:
        return await read_bounded(response, MAX_ANSWER_BYTES)
    except BodyTooLarge:
        raise CacheStoreError(f"answer larger than {MAX_ANSWER_BYTES} bytes") from None


def _client_error(method: str, url: str, exc: aiohttp.ClientError) -> CacheStoreError:
    return CacheStoreError(exc.__class__.__name__, detail=f"{method} {url}: {exc}")


class RemoteStore:
    name = "remote"
    in_process = False

    def __init__(self, url: str, session: Callable[[], aiohttp.ClientSession]) -> None:
        self.url = url
        self._session = session

    @staticmethod
    def _put_json(item: CacheItem) -> dict[str, Any]:
        value: Any = item.payload.decode() if item.type == "xml" else orjson.Fragment(item.payload)
        put: dict[str, Any] = {"type": item.type, "value": value, "ttlseconds": item.ttl_seconds}
        if item.key:
            put["key"] = item.key
        return put

    async def put_many(self, items: Sequence[CacheItem]) -> list[str]:
        body = orjson.dumps({"puts": [self._put_json(item) for item in items]})
        headers = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
        try:
            async with self._session().post(self.url, data=body, headers=headers, allow_redirects=False) as response:
                text = await _read_bounded(response)
                if response.status != 200:
                    raise CacheStoreError(f"HTTP status code {response.status}")
        except aiohttp.ClientError as exc:
            raise _client_error("POST", self.url, exc) from None
        try:
            answers = orjson.loads(text)["responses"]
            keys = [str(answer["uuid"]) for answer in answers]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise CacheStoreError(
                "Cannot parse response", detail=f"POST {self.url}: {text[:MAX_ERROR_BODY].decode(errors='replace')}"
            ) from None
        if len(keys) != len(items):
            raise CacheStoreError("The number of response cache objects doesn't match with bids")
        return keys

    async def get(self, key: str) -> CachedValue | None:
        try:
            async with self._session().get(self.url, params={"uuid": key}, allow_redirects=False) as response:
                payload = await _read_bounded(response)
                if response.status == 404:
                    return None
                if response.status != 200:
                    raise CacheStoreError(f"HTTP status code {response.status}")
                content_type = response.content_type
        except aiohttp.ClientError as exc:
            raise _client_error("GET", self.url, exc) from None
        return CachedValue("xml" if content_type.endswith("xml") else "json", payload)

    async def close(self) -> None:
        """The session belongs to the application, which closes it."""
