"""Go's ``net/url`` escaping helpers (``adapters.gourl``): rows from Go's url package rules."""

from __future__ import annotations

import pytest

from hbserver.adapters.gourl import go_hostname, go_path_escape, go_query_unescape


# url.PathEscape: unreserved bytes and "$&+:=@" stay; "/", ";", ",", "?" and the rest are escaped,
# UTF-8 bytes as upper-case %XX
@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("abc-_.~123", "abc-_.~123"),
        ("$&+:=@", "$&+:=@"),
        ("a/b;c,d?e", "a%2Fb%3Bc%2Cd%3Fe"),
        ("a b%", "a%20b%25"),
        ("é", "%C3%A9"),
        ("", ""),
    ],
    ids=["unreserved", "reserved-kept", "segment-separators", "space-and-percent", "utf8", "empty"],
)
def test_go_path_escape(text: str, escaped: str) -> None:
    assert go_path_escape(text) == escaped


# url.QueryUnescape: "+" is a space, %XX a byte; a "%" without two hex digits fails
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("plain", "plain"),
        ("a+b%20c", "a b c"),
        ("%3Cdiv%3e", "<div>"),
        ("%C3%A9", "é"),
        ("%ff", "\ufffd"),
        ("100%", None),
        ("%zz", None),
        ("%4", None),
    ],
    ids=["plain", "plus-and-space", "mixed-case-hex", "utf8", "not-utf8", "trailing-percent", "bad-hex", "short"],
)
def test_go_query_unescape(text: str, want: str | None) -> None:
    assert go_query_unescape(text) == want


# URL.Hostname(): the port (a last colon and digits, maybe none) and IPv6 brackets go
@pytest.mark.parametrize(
    ("host", "want"),
    [
        ("example.com", "example.com"),
        ("example.com:8080", "example.com"),
        ("example.com:", "example.com"),
        ("[::1]:443", "::1"),
        ("[::1]", "::1"),
        ("a:b", "a:b"),
        ("", ""),
    ],
    ids=["plain", "port", "empty-port", "ipv6-port", "ipv6", "not-a-port", "empty"],
)
def test_go_hostname(host: str, want: str) -> None:
    assert go_hostname(host) == want
