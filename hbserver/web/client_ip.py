"""The client's address as PBS-Go finds it (``httputil.FindIP`` with ``iputil.PublicNetworkIPValidator``).

``True-Client-IP``, then each ``X-Forwarded-For`` value in order, then ``X-Real-IP``, then the peer:
the first that parses as an address and lies outside the host's private networks
(``request_validation.ipv4_private_networks`` / ``ipv6_private_networks``) wins; none found, "".
The networks are parsed once (:class:`ClientAddresses` is built at start-up); a request pays a parse
and a few integer masks per candidate.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping

MAX_ADDRESS_LENGTH = 64
MAX_FORWARDED = 32  # X-Forwarded-For values looked at (PBS-Go reads them all; a header of commas costs nothing)

# PBS-Go's defaults (config.go, request_validation.*)
IPV4_PRIVATE_NETWORKS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8")
IPV6_PRIVATE_NETWORKS = ("::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32")


def network_problems(networks: Iterable[str], version: int) -> list[str]:
    """The entries that are not ``version`` CIDR networks (PBS-Go's ``parseNetworks``: ``net.ParseCIDR``,
    host bits allowed, the length of the family asked for)."""
    bad = []
    for text in networks:
        try:
            network = ipaddress.ip_network(str(text).strip(), strict=False)
        except ValueError:
            bad.append(str(text).strip())
            continue
        if network.version != version or "/" not in str(text):
            bad.append(str(text).strip())
    return bad


def _masks(networks: Iterable[str]) -> tuple[tuple[int, int], ...]:
    parsed = (ipaddress.ip_network(text.strip(), strict=False) for text in networks)
    return tuple((int(n.network_address), int(n.netmask)) for n in parsed)


def _parse(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``value`` as an address (Go's ``net.ParseIP``: no zone), else None: a header is not trusted blindly."""
    value = value.strip()
    if not value or len(value) > MAX_ADDRESS_LENGTH or not value.isascii() or "%" in value:
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


class ClientAddresses:
    """Finds a request's public client address; built once from the host's private networks."""

    __slots__ = ("_v4", "_v6")

    def __init__(
        self, ipv4_private: Iterable[str] = IPV4_PRIVATE_NETWORKS, ipv6_private: Iterable[str] = IPV6_PRIVATE_NETWORKS
    ) -> None:
        self._v4 = _masks(ipv4_private)
        self._v6 = _masks(ipv6_private)

    def public(self, value: str) -> str:
        """``value`` (canonical) when it is an address outside the private networks, else ""."""
        address = _parse(value)
        if address is None:
            return ""
        number = int(address)
        for network, mask in self._v4 if address.version == 4 else self._v6:
            if number & mask == network:
                return ""
        if address.version == 6 and address.ipv4_mapped is not None:
            return value.strip()  # Python would write it in hex; keep the dotted form as sent
        return str(address)

    def find(self, headers: Mapping[str, str], peer: str | None) -> str:
        """PBS-Go's ``FindIP`` order: True-Client-IP, X-Forwarded-For (first public), X-Real-IP, the peer."""
        value = headers.get("True-Client-IP")
        if value and (found := self.public(value)):
            return found
        value = headers.get("X-Forwarded-For")
        if value:
            for part in value.split(",", MAX_FORWARDED)[:MAX_FORWARDED]:
                if found := self.public(part):
                    return found
        value = headers.get("X-Real-IP")
        if value and (found := self.public(value)):
            return found
        return self.public(peer) if peer else ""
