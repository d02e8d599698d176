"""Alternate bidder codes: PBS-Go's rows (openrtb_ext/alternatebiddercodes_test.go), request over
account (exchange/exchange.go) and what each bidder is sent (exchange/utils.go, the outgoing
requests of exchangetest/alternate-bidder-codes.json and multi-bids-with-extra-bids.json)."""

from __future__ import annotations

import pytest

from hbserver.auction.bids.altcodes import NOT_CONFIGURED, WARNING_CODE, AdapterCodes, AlternateBidderCodes
from hbserver.auction.request.validate import RequestError
from hbserver.config import AccountAlternateBidderCodes, AlternateBidder

DISABLED = 'alternateBidderCodes disabled for "pubmatic", rejecting bids for "groupm"'
NOT_DEFINED = 'alternateBidderCodes not defined for adapter "pubmatic", rejecting bids for "groupm"'
INVALID = 'invalid biddercode "groupm" sent by adapter "pubmatic"'


def codes(enabled: bool = False, bidders: dict[str, AdapterCodes] | None = None) -> AlternateBidderCodes:
    return AlternateBidderCodes(enabled, bidders)


# TestAlternateBidderCodes_IsValidBidderCode
@pytest.mark.parametrize(
    ("config", "bidder", "seat", "valid", "error"),
    [
        pytest.param(codes(), "", "", True, None, id="seat-not-set"),
        pytest.param(codes(), "pubmatic", "pubmatic", True, None, id="seat-is-the-bidder"),
        pytest.param(codes(), "pubmatic", "PubMatic", True, None, id="seat-is-the-bidder-case-folded"),
        pytest.param(codes(), "pubmatic", "groupm", False, DISABLED, id="config-not-defined"),
        pytest.param(codes(True), "pubmatic", "groupm", False, NOT_DEFINED, id="enabled-adapter-not-defined"),
        pytest.param(codes(True, {"appnexus": AdapterCodes()}), "pubmatic", "groupm", False, NOT_DEFINED,
                     id="enabled-adapter-not-available"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(False)}), "pubmatic", "groupm", False, DISABLED,
                     id="adapter-disabled"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True)}), "pubmatic", "groupm", True, None,
                     id="allowed-codes-not-defined"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True)}), "PUBmatic", "groupm", True, None,
                     id="bidder-found-case-insensitively"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("*",))}), "pubmatic", "groupm", True, None,
                     id="allowed-star"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("groupm",))}), "pubmatic", "groupm", True, None,
                     id="allowed-in-list"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("xyz",))}), "pubmatic", "groupm", False, INVALID,
                     id="not-in-list"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ())}), "pubmatic", "groupm", False, INVALID,
                     id="empty-list"),
        # the rest follow IsValidBidderCode's code
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("GroupM",))}), "pubmatic", "groupm", False, INVALID,
                     id="allowed-codes-compared-exactly"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("xyz", "*"))}), "pubmatic", "groupm", False,
                     INVALID, id="star-counts-only-alone"),
        pytest.param(codes(True, {"pubmatic": AdapterCodes(True, ("groupm",))}), "", "groupm", False,
                     'alternateBidderCodes not defined for adapter "", rejecting bids for "groupm"', id="no-bidder"),
        pytest.param(codes(False, {"pubmatic": AdapterCodes(True)}), "pubmatic", 'gr"m', False,
                     'alternateBidderCodes disabled for "pubmatic", rejecting bids for "gr\\"m"', id="quoted-like-go"),
    ],
)
def test_is_valid_bidder_code(config, bidder, seat, valid, error):
    assert config.allowed(bidder, seat) == (valid, error)


def test_warning_code():
    assert WARNING_CODE == 10005  # errortypes.AlternateBidderCodeWarningCode


# TestIsBidderInAlternateBidderCodes
THREE = {"AppNexus": AdapterCodes(False, ("adnxsCode",)), "PubMatic": AdapterCodes(False, ("pubCode",)),
         "Rubicon": AdapterCodes(False, ("rCode",))}


@pytest.mark.parametrize(
    ("config", "bidder", "found"),
    [
        pytest.param(codes(), "", None, id="empty-bidder"),
        pytest.param(codes(), "appnexus", None, id="no-bidders-map"),
        pytest.param(codes(False, {"appnexus": AdapterCodes(True, ("abcCode",))}), "appnexus",
                     AdapterCodes(True, ("abcCode",)), id="identical"),
        pytest.param(codes(False, THREE), "appnexus", AdapterCodes(False, ("adnxsCode",)), id="case-insensitive"),
        pytest.param(codes(False, THREE), "unknown", None, id="no-match"),
        pytest.param(codes(False, {"APPNEXUS": AdapterCodes(False, ("upper",)), "appnexus": AdapterCodes(True)}),
                     "appnexus", AdapterCodes(True), id="exact-match-first"),
    ],
)
def test_is_bidder_in_alternate_bidder_codes(config, bidder, found):
    assert config.lookup(bidder) == found


ACCOUNT = AccountAlternateBidderCodes(True, {"pubmatic": AlternateBidder(True, ["groupm"])})


@pytest.mark.parametrize(
    ("request_prebid", "account", "seat", "valid"),
    [
        pytest.param({}, ACCOUNT, "groupm", True, id="account-used"),
        pytest.param({"alternatebiddercodes": None}, ACCOUNT, "groupm", True, id="request-null-account-used"),
        pytest.param({"alternatebiddercodes": {}}, ACCOUNT, "groupm", False, id="request-wins-even-empty"),
        pytest.param({"alternatebiddercodes": {"enabled": True, "bidders": {"pubmatic": {"enabled": True}}}},
                     AccountAlternateBidderCodes(), "anyone", True, id="request-wins-over-disabled-account"),
        pytest.param({}, None, "groupm", False, id="neither"),
        pytest.param({}, AccountAlternateBidderCodes(True, {"pubmatic": AlternateBidder(True, None)}), "any", True,
                     id="account-allowed-not-set"),
    ],
)
def test_request_over_account(request_prebid, account, seat, valid):
    assert AlternateBidderCodes.from_sources(request_prebid, account).allowed("pubmatic", seat)[0] is valid


@pytest.mark.parametrize(
    ("request_prebid", "account", "bidder", "sent"),
    [
        pytest.param(  # alternate-bidder-codes.json: the bidder's own entry under its own name
            {"alternatebiddercodes": {"enabled": True, "bidders": {"PUBmatic": {"enabled": True,
                                                                              "allowedbiddercodes": ["groupm"]}}}},
            None, "pubmatic",
            {"enabled": True, "bidders": {"pubmatic": {"enabled": True, "allowedbiddercodes": ["groupm"]}}},
            id="own-entry",
        ),
        pytest.param(
            {"alternatebiddercodes": {"enabled": True, "bidders": {"PUBmatic": {"enabled": True,
                                                                              "allowedbiddercodes": ["groupm"]}}}},
            None, "appnexus", {"enabled": True, "bidders": None}, id="no-entry-bidders-null",
        ),
        pytest.param({}, ACCOUNT, "pubmatic",
                     {"enabled": True, "bidders": {"pubmatic": {"enabled": True, "allowedbiddercodes": ["groupm"]}}},
                     id="account"),
        pytest.param({"alternatebiddercodes": {"bidders": {"pubmatic": {}}}}, ACCOUNT, "pubmatic",
                     {"enabled": False, "bidders": {"pubmatic": {"enabled": False, "allowedbiddercodes": None}}},
                     id="request-wins"),
        pytest.param({}, None, "pubmatic", None, id="nothing-configured"),
    ],
)
def test_for_bidder(request_prebid, account, bidder, sent):
    assert AlternateBidderCodes.from_sources(request_prebid, account).for_bidder(bidder) == sent


def test_nothing_configured_refuses_other_seats():
    assert AlternateBidderCodes.from_sources(None, None) is NOT_CONFIGURED
    assert NOT_CONFIGURED.allowed("pubmatic", "groupm") == (False, DISABLED)
    assert NOT_CONFIGURED.allowed("pubmatic", "") == (True, None)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param([], "request.ext.prebid.alternatebiddercodes must be an object", id="array"),
        pytest.param({"enabled": "yes"}, "request.ext.prebid.alternatebiddercodes.enabled must be a boolean",
                     id="enabled-string"),
        pytest.param({"bidders": []}, "request.ext.prebid.alternatebiddercodes.bidders must be an object",
                     id="bidders-array"),
        pytest.param({"bidders": {"pubmatic": 1}},
                     "request.ext.prebid.alternatebiddercodes.bidders.pubmatic must be an object", id="entry-number"),
        pytest.param({"bidders": {"pubmatic": {"allowedbiddercodes": "groupm"}}},
                     "request.ext.prebid.alternatebiddercodes.bidders.pubmatic.allowedbiddercodes must be an array "
                     "of strings", id="codes-string"),
    ],
)
def test_wrong_json_types_refuse_the_request(raw, problem):
    with pytest.raises(RequestError) as caught:
        AlternateBidderCodes.from_sources({"alternatebiddercodes": raw}, None)
    assert str(caught.value) == problem
