"""``ext.prebid.cache``: what an auction writes to the cache store and what its response keeps.

- ``bids`` / ``vastxml``: cache each bid's JSON / each video bid's VAST (PBS-Go).
- ``returnCreative``: ``false`` leaves ``adm`` out of the response's bids (the creative is fetched
  from the cache). PBS-Go's ``getExtCacheInstructions``: default true; when both kinds give one, the
  creative is returned if either says so.
- ``ttlseconds`` per kind (PBS-Java): the cache TTL of bids whose imp and bid carry no ``exp``.
- ``winningonly`` (PBS-Java): only each imp's winning bid is cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CacheOptions:
    bids: bool = False
    vast: bool = False
    return_creative: bool = True
    winning_only: bool = False
    bids_ttl: int = 0  # 0 = not asked for
    vast_ttl: int = 0

    @classmethod
    def from_request(cls, cache: dict[str, Any]) -> CacheOptions:
        """From a validated ``ext.prebid.cache`` (types checked by validate.py)."""
        if not cache:
            return NO_CACHE
        bids, vast = cache.get("bids"), cache.get("vastxml")
        bids_rc = bids.get("returnCreative") if isinstance(bids, dict) else None
        vast_rc = vast.get("returnCreative") if isinstance(vast, dict) else None
        if bids_rc is not None and vast_rc is not None:
            return_creative = bids_rc or vast_rc
        elif vast_rc is not None:
            return_creative = vast_rc
        else:
            return_creative = True if bids_rc is None else bids_rc
        return cls(
            bids="bids" in cache,
            vast="vastxml" in cache,
            return_creative=return_creative,
            winning_only=cache.get("winningonly") is True,
            bids_ttl=(bids.get("ttlseconds") or 0) if isinstance(bids, dict) else 0,
            vast_ttl=(vast.get("ttlseconds") or 0) if isinstance(vast, dict) else 0,
        )

    @property
    def any(self) -> bool:
        return self.bids or self.vast


NO_CACHE = CacheOptions()
