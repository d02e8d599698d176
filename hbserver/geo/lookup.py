"""``device.geo`` from the device's IP address, read in a local MaxMind database (``geolocation.database``).

PBS-Java's geo lookup (``GeoLocationServiceWrapper``, ``MaxMindGeoLocationService``,
``Ortb2RequestFactory.enrichBidRequestWithGeolocationData``) reads a downloaded GeoIP2 City file;
hbserver reads a file the host provides. As PBS-Java:

- the address is ``device.ip``, else ``device.ipv6`` (the auction has filled them from
  X-Forwarded-For / X-Real-IP / the peer when the body had none);
- there is no lookup when the request already names a country (``device.geo.country``);
- ``country`` is the record's ISO alpha-2 code as alpha-3 (OpenRTB's), ``region`` the first
  subdivision's ISO code, upper case.

Beyond PBS-Java, ``metro`` is the record's ``location.metro_code`` (OpenRTB's ``metro`` is that Google
metro code). A field the request has is never replaced. The lookup runs before floors and privacy,
so the GDPR scope by country, activity ``geo`` conditions and the floors' ``country`` see it.

The file is opened once at start-up as a memory map read by maxminddb's C extension; one lookup
costs a few microseconds (tests/geo/test_lookup.py measures it), so it runs on the event loop.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import Any

import maxminddb

from hbserver.geo.countries import alpha3

log = logging.getLogger(__name__)


class GeoDatabaseError(ValueError):
    """The database file cannot be opened or read as a MaxMind database."""


def reader_mode() -> int:
    """MODE_MMAP_EXT (the C extension on a memory map); MODE_MMAP, pure Python, when maxminddb was
    installed without its extension (lookups then cost tens of microseconds: a warning says so)."""
    try:
        extension = importlib.import_module("maxminddb.extension")
    except ImportError:
        extension = None
    if extension is not None and hasattr(extension, "Reader"):
        return maxminddb.MODE_MMAP_EXT
    log.warning("maxminddb's C extension is missing: geo lookups use the slower pure-Python reader")
    return maxminddb.MODE_MMAP


def open_reader(path: str) -> maxminddb.Reader:
    """``path`` opened as a memory map, read by the C extension when it is there."""
    try:
        return maxminddb.open_database(path, reader_mode())
    except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
        raise GeoDatabaseError(f"cannot open {path!r} as a MaxMind database: {exc}") from None


class GeoLookup:
    """Fills a request's ``device.geo`` from its IP address."""

    __slots__ = ("_reader",)

    def __init__(self, reader: maxminddb.Reader) -> None:
        self._reader = reader

    @classmethod
    def open(cls, path: str) -> GeoLookup:
        return cls(open_reader(path))

    def close(self) -> None:
        self._reader.close()

    def find(self, ip: str) -> dict[str, str]:
        """``country``/``region``/``metro`` for ``ip`` (only those the database knows)."""
        try:
            record = self._reader.get(ip)
        except ValueError:  # not an address, or an IPv6 address in an IPv4-only database
            return {}
        return _geo_of(record) if isinstance(record, dict) else {}

    def fill(self, request: dict[str, Any], found: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``request`` with the looked-up fields added to ``device.geo`` (a copy of device and geo when
        anything is added; ``request``'s top level is the auction's own and is changed in place).
        ``found``: the lookup's answer when it is known already (a call plan's variant), so the
        device's address is not looked up."""
        device = request.get("device")
        if not isinstance(device, dict):
            return request
        geo = device.get("geo")
        if geo is None:
            geo = {}
        elif not isinstance(geo, dict) or geo.get("country"):
            return request  # a country given (PBS-Java skips the lookup), or a malformed geo
        if found is None:
            ip = device.get("ip") or device.get("ipv6")
            if not isinstance(ip, str) or not ip:
                return request
            found = self.find(ip)
        added = {key: value for key, value in found.items() if not geo.get(key)}
        if added:
            request["device"] = {**device, "geo": {**geo, **added}}
        return request


def _geo_of(record: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    country = record.get("country")
    code = country.get("iso_code") if isinstance(country, dict) else None
    if isinstance(code, str) and (code3 := alpha3(code)) is not None:
        out["country"] = code3
    subdivisions = record.get("subdivisions")
    first = subdivisions[0] if isinstance(subdivisions, list) and subdivisions else None
    region = first.get("iso_code") if isinstance(first, dict) else None
    if isinstance(region, str) and region:
        out["region"] = region.upper()
    location = record.get("location")
    metro = location.get("metro_code") if isinstance(location, dict) else None
    if isinstance(metro, int) and not isinstance(metro, bool):
        out["metro"] = str(metro)
    return out


def geo_lookup(path: str) -> GeoLookup | None:
    """The lookup of ``geolocation.database``; None when none is configured (lookups off)."""
    return GeoLookup.open(path) if path else None
