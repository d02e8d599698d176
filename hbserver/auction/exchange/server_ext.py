"""What every bidder call says about this server: ``ext.prebid.server`` and the ``X-Prebid`` header.

- ``ext.prebid.server`` {externalurl, gvlid, datacenter}: PBS-Go's ``HoldAuction`` (exchange/exchange.go)
  sets it from the host's ``external_url``, ``gdpr.host_vendor_id`` and ``datacenter`` unless all three
  are empty (``config.Server.Empty``); then a request's own ``ext.prebid.server`` passes through.
- ``X-Prebid``: PBS-Go's ``BuildXPrebidHeaderForRequest`` (version/xprebidheader.go) over each bidder's
  request: the server's ``name/version``, then ``ext.prebid.channel``'s ``name/version``, then
  ``app.ext.prebid``'s ``source/version`` (an empty version reads ``unknown``, an empty name is left out).
  The values are few (one per client version), so each is composed once and kept.
"""

from __future__ import annotations

from typing import Any

from hbserver import SERVER_HEADER_VALUE

VERSION_UNKNOWN = "unknown"  # PBS-Go's version.VerUnknown
_MAX_KEPT = 512  # X-Prebid values kept; past it the memo starts again (client versions are few)
_x_prebid: dict[tuple[str, str, str, str], str] = {}


def server_ext(external_url: str, gvl_id: int, datacenter: str) -> dict[str, Any] | None:
    """The host's ``ext.prebid.server`` for bidder requests; None when PBS-Go leaves it out (all empty)."""
    if not external_url and not gvl_id and not datacenter:
        return None
    return {"externalurl": external_url, "gvlid": gvl_id, "datacenter": datacenter}


def _name_version(holder: Any, name_key: str) -> tuple[str, str]:
    """A holder Go could not decode (not an object, a value not a string) gives no record."""
    if not isinstance(holder, dict):
        return "", ""
    name, version = holder.get(name_key) or "", holder.get("version") or ""
    if not isinstance(name, str) or not isinstance(version, str):
        return "", ""
    return name, version


def x_prebid(request: dict[str, Any]) -> str:
    """The ``X-Prebid`` value for one bidder's request."""
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    channel = prebid.get("channel") if isinstance(prebid, dict) else None
    app = request.get("app")
    app_ext = app.get("ext") if isinstance(app, dict) else None
    app_prebid = app_ext.get("prebid") if isinstance(app_ext, dict) else None
    if channel is None and app_prebid is None:
        return SERVER_HEADER_VALUE
    key = (*_name_version(channel, "name"), *_name_version(app_prebid, "source"))
    value = _x_prebid.get(key)
    if value is None:
        if len(_x_prebid) >= _MAX_KEPT:
            _x_prebid.clear()
        value = _x_prebid[key] = compose_x_prebid(SERVER_HEADER_VALUE, key)
    return value


def compose_x_prebid(server: str, parts: tuple[str, ...]) -> str:
    """``server`` then each non-empty ``name/version`` of ``parts`` (name, version, name, version...)."""
    records = [server]
    for index in range(0, len(parts), 2):
        name, version = parts[index], parts[index + 1]
        if name:
            records.append(f"{name}/{version or VERSION_UNKNOWN}")
    return ",".join(records)
