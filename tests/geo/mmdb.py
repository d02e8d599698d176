"""Small MaxMind (GeoIP2 City layout) databases for the tests, written with mmdb-writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmdb_writer import MMDBWriter
from netaddr import IPSet


def city(country: str, region: str | None = None, metro: int | None = None) -> dict[str, Any]:
    """A GeoIP2 City record: ISO alpha-2 country, first subdivision, metro code."""
    record: dict[str, Any] = {"country": {"iso_code": country, "names": {"en": country}}}
    if region is not None:
        record["subdivisions"] = [{"iso_code": region}]
    location: dict[str, Any] = {"latitude": 37.75, "longitude": -122.41}
    if metro is not None:
        location["metro_code"] = metro
    record["location"] = location
    return record


# network -> record; addresses outside them (private ranges, 192.0.2.0/24) are unknown
NETWORKS: dict[str, dict[str, Any]] = {
    "81.2.69.0/24": city("DE", "BE"),
    "8.8.8.0/24": city("US", "CA", 807),
    "9.9.9.0/24": city("US", "ny", 501),  # lower-case region: upper-cased
    "2001:db8:1::/48": city("FR", "IDF"),
    "198.51.100.0/24": city("QQ", "X1"),  # no ISO 3166-1 country: region only
    "100.64.0.0/24": {"continent": {"code": "EU"}},  # a record without country, region or metro
}


def write_db(path: Path, networks: dict[str, dict[str, Any]] | None = None) -> Path:
    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type="GeoIP2-City")
    for network, record in (NETWORKS if networks is None else networks).items():
        writer.insert_network(IPSet([network]), record)
    writer.to_db_file(str(path))
    return path
