"""PBS-Go's ``httputil.FindIP`` and ``RequestValidation.Parse`` as table rows (hbserver.web.client_ip)."""

from __future__ import annotations

import pytest

from hbserver.config import ConfigError, load_config
from hbserver.web.client_ip import ClientAddresses, network_problems

EVERYTHING = ClientAddresses((), ())  # httputil_test.go's alwaysTrue validator
DEFAULTS = ClientAddresses()  # PBS-Go's default private networks


@pytest.mark.parametrize(
    ("finder", "headers", "peer", "expected"),
    [
        pytest.param(EVERYTHING, {"True-Client-IP": "1.1.1.1", "X-Forwarded-For": "2.2.2.2, 3.3.3.3",
                                  "X-Real-IP": "4.4.4.4"}, "5.5.5.5", "1.1.1.1", id="True Client IP"),
        pytest.param(EVERYTHING, {"X-Forwarded-For": "   2.2.2.2, 3.3.3.3 "}, "5.5.5.5", "2.2.2.2",
                     id="X Forwarded For - Ignore Whitespace"),
        pytest.param(EVERYTHING, {"X-Real-IP": "   4.4.4.4 "}, "5.5.5.5", "4.4.4.4", id="X Real IP - whitespace"),
        pytest.param(EVERYTHING, {}, "5555::", "5555::", id="IPv6 - Remote Address"),
        pytest.param(EVERYTHING, {"True-Client-IP": "malformed", "X-Forwarded-For": "malformed",
                                  "X-Real-IP": "malformed"}, "malformed", "", id="Malformed - All"),
        pytest.param(EVERYTHING, {"True-Client-IP": "malformed", "X-Forwarded-For": "malformed, 3333::, 4.4.4.4"},
                     None, "3333::", id="Malformed - X Forwarded For - IPv6"),
        pytest.param(EVERYTHING, {"X-Forwarded-For": "fe80::1%eth0, 2222::"}, None, "2222::",
                     id="net.ParseIP takes no zone"),
        pytest.param(EVERYTHING, {"X-Forwarded-For": "2001:DB8:0:0::1"}, None, "2001:db8::1",
                     id="ip.String(): canonical IPv6"),
        pytest.param(DEFAULTS, {"True-Client-IP": "127.0.0.1", "X-Forwarded-For": "10.0.0.1, 172.16.5.5, 8.8.8.8"},
                     None, "8.8.8.8", id="PublicNetworkIPValidator: private addresses skipped"),
        pytest.param(DEFAULTS, {"X-Forwarded-For": "2001:db8::1, fe80::1", "X-Real-IP": "169.254.0.1"}, "::1", "",
                     id="PublicNetworkIPValidator: nothing public"),
        pytest.param(DEFAULTS, {"X-Forwarded-For": "172.32.0.1"}, None, "172.32.0.1", id="outside 172.16.0.0/12"),
    ],
)  # fmt: skip
def test_find_ip(finder: ClientAddresses, headers: dict[str, str], peer: str | None, expected: str) -> None:
    assert finder.find(headers, peer) == expected


@pytest.mark.parametrize(
    ("networks", "version", "bad"),
    [
        pytest.param(["10.0.0.0/8", " 1.1.1.1/24 "], 4, [], id="requestvalidation_test.go: host bits, whitespace"),
        pytest.param(["1.1.1.0/24", "::1/128"], 4, ["::1/128"], id="an IPv6 network in the IPv4 list"),
        pytest.param(["1111::/16", "1.1.1.0/24"], 6, ["1.1.1.0/24"], id="an IPv4 network in the IPv6 list"),
        pytest.param(["1.1.1.1", "junk/8"], 4, ["1.1.1.1", "junk/8"], id="net.ParseCIDR needs a prefix"),
    ],
)
def test_network_problems(networks: list[str], version: int, bad: list[str]) -> None:
    assert network_problems(networks, version) == bad


def test_bad_private_network_is_refused_at_start() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, {}, {"request_validation": {"ipv6_private_networks": ["1.1.1.0/24"]}})
    assert "request_validation.ipv6_private_networks: Invalid private IPv6 network: '1.1.1.0/24'" in str(caught.value)
