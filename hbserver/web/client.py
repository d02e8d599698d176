"""The application's one outgoing HTTP session: a keep-alive connection pool shared by every
client (remote cache store now, bidders later). It is created in the running event loop on
first use and closed with the application.
"""

from __future__ import annotations

import aiohttp

POOL_LIMIT = 512  # connections per worker in all
POOL_LIMIT_PER_HOST = 128
DNS_CACHE_SECONDS = 60


class SharedSession:
    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def __call__(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=POOL_LIMIT, limit_per_host=POOL_LIMIT_PER_HOST, ttl_dns_cache=DNS_CACHE_SECONDS,
                enable_cleanup_closed=True,
            )
            # No cookie jar: a shared jar would carry one user's bidder cookies to every other user.
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=True, raise_for_status=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None),  # callers set their own deadlines
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class BodyTooLarge(Exception):
    """An answer's body went past the reader's limit (announced or as it arrived)."""


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body (decompressed), refused, not buffered, past ``limit`` bytes: an announced length
    over it fails at once, and an unannounced, chunked or compressed one as soon as it passes."""
    if (response.content_length or 0) > limit:
        raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)
