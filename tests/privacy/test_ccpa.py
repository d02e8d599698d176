"""US Privacy strings; rows from PBS-Go privacy/ccpa/parsedpolicy_test.go and iabgpp-es UspV1.test.ts."""

from __future__ import annotations

import pytest

from hbserver.privacy.ccpa import USPrivacy, parse_us_privacy


@pytest.mark.parametrize(
    ("value", "fields", "opt_out"),
    [
        ("1NYN", ("N", "Y", "N"), True),
        ("1NNN", ("N", "N", "N"), False),
        ("1---", ("-", "-", "-"), False),
        ("1YNN", ("Y", "N", "N"), False),
        ("1YYY", ("Y", "Y", "Y"), True),
        ("1-Y-", ("-", "Y", "-"), True),
    ],
)
def test_valid(value: str, fields: tuple[str, str, str], opt_out: bool) -> None:
    parsed = parse_us_privacy(value)
    assert parsed == USPrivacy(1, *fields)
    assert parsed.opt_out_sale is opt_out
    assert str(parsed) == value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "us_privacy is empty"),
        ("malformed", "must contain 4 characters"),
        ("1NY", "must contain 4 characters"),
        ("2---", "must specify version 1"),
        ("2YNY", "must specify version 1"),
        ("1X--", "must specify 'N', 'Y', or '-' for the explicit notice"),
        ("1y--", "must specify 'N', 'Y', or '-' for the explicit notice"),
        ("1-X-", "must specify 'N', 'Y', or '-' for the opt-out sale"),
        ("1-y-", "must specify 'N', 'Y', or '-' for the opt-out sale"),
        ("1--X", "must specify 'N', 'Y', or '-' for the limited service provider agreement"),
        ("1--y", "must specify 'N', 'Y', or '-' for the limited service provider agreement"),
    ],
)
def test_invalid(value: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_us_privacy(value)
    assert str(info.value) == message
