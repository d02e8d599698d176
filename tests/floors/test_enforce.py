"""Floors enforcement: PBS-Go floors/enforce_test.go translated, plus exchange.go's rejection
warning and utils.go applyBidAdjustmentToFloor."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import ConversionError
from hbserver.auction.bids.accept import AuctionBid
from hbserver.config import AccountPriceFloors
from hbserver.floors import (
    FLOOR_BID_REJECTION_WARNING_CODE,
    NON_BID_BELOW_DEAL_FLOOR,
    NON_BID_BELOW_FLOOR,
    BidFloors,
    adjust_floors_for_bidder,
    enforce_floors,
    floor_adjustment_factor,
    rejection_warning,
    resolve_floors,
)
from hbserver.floors.enforce import bid_floors_for_imp, is_satisfied_by_enforce_rate


def convert(amount: float, from_cur: str, to_cur: str) -> float:
    """PBS-Go enforce_test.go's ``convert``."""
    if from_cur == to_cur:
        return amount
    if (from_cur, to_cur) == ("USD", "INR"):
        return amount * 77.59
    if (from_cur, to_cur) == ("INR", "USD"):
        return amount * 0.013
    raise ConversionError("currency conversion not supported")


def const(value: int):
    return lambda n: value


def never(n: int) -> int:
    raise AssertionError("no draw expected")


def bid(bidder: str, bid_id: str, price: float, imp_id: str, deal: str = "") -> AuctionBid:
    raw = {"id": bid_id, "impid": imp_id, "price": price, "crid": "c"}
    if deal:
        raw["dealid"] = deal
    return AuctionBid(bidder, bidder, raw, "banner", price, imp_id, bool(deal))


def ids(bids: list[AuctionBid]) -> list[str]:
    return [b.bid["id"] for b in bids]


def _bids() -> list[AuctionBid]:
    return [
        bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1"),
        bid("pubmatic", "some-bid-2", 1.5, "some-impression-id-2", deal="deal_Id"),
        bid("appnexus", "some-bid-11", 0.5, "some-impression-id-1"),
        bid("appnexus", "some-bid-12", 2.2, "some-impression-id-2"),
    ]


def _imps(floor1: float, floor2: float, cur: str | None = "USD") -> list[dict]:
    imps = [{"id": "some-impression-id-1", "bidfloor": floor1}, {"id": "some-impression-id-2", "bidfloor": floor2}]
    if cur is not None:
        for imp in imps:
            imp["bidfloorcur"] = cur
    return imps


ALWAYS = AccountPriceFloors(enabled=True, enforce_floors_rate=0)
ALWAYS_DEALS = AccountPriceFloors(enabled=True, enforce_floors_rate=0, enforce_deal_floors=True)


# ---- TestEnforceFloorToBids ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "bids", "settings", "kept", "rejected", "errors"),
    [
        pytest.param(
            {"imp": _imps(1.01, 2.01), "ext": {"prebid": {"floors": {"enforcement": {"enforcepbs": False}}}}},
            _bids(), ALWAYS,
            ["some-bid-1", "some-bid-2", "some-bid-11", "some-bid-12"], [], [],
            id="enforcepbs false",
        ),
        pytest.param(
            {"imp": _imps(1.01, 2.01)}, _bids(), ALWAYS,
            ["some-bid-1", "some-bid-2", "some-bid-12"], ["some-bid-11"], [],
            id="price below floor",
        ),
        pytest.param(
            {"imp": _imps(1, 2)},
            [
                bid("pubmatic", "some-bid-1", 0.998, "some-impression-id-1"),
                bid("pubmatic", "some-bid-2", 1.5, "some-impression-id-2", deal="deal_Id"),
                bid("appnexus", "some-bid-11", 0.8, "some-impression-id-1"),
                bid("appnexus", "some-bid-12", 2.2, "some-impression-id-2"),
            ],
            ALWAYS,
            ["some-bid-1", "some-bid-2", "some-bid-12"], ["some-bid-11"], [],
            id="floor precision 0.01",
        ),
        pytest.param(
            {"imp": _imps(60, 100, "INR"), "ext": {"prebid": {"floors": {"enforcement": {"floordeals": True}}}}},
            _bids(), ALWAYS_DEALS,
            ["some-bid-1", "some-bid-2", "some-bid-12"], ["some-bid-11"], [],
            id="other currency, deal floors enforced",
        ),
        pytest.param(
            {"cur": ["EUR"], "imp": [{"id": "some-impression-id-1", "bidfloor": 1.01}]},
            [bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1")], ALWAYS_DEALS,
            [], [],
            [
                "error in rate conversion from = EUR to USD with bidder pubmatic for impression id "
                "some-impression-id-1 and bid id some-bid-1 error = currency conversion not supported"
            ],
            id="currency conversion error drops the bid",
        ),
        pytest.param(
            {"imp": [{"id": "some-impression-id-2", "bidfloor": 2.01, "bidfloorcur": "USD"}]},
            [bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-123")], ALWAYS,
            [], [], [],
            id="unknown imp: dropped",
        ),
        pytest.param(
            {"imp": _imps(1.01, 2.01)}, [bid("a", "d", 0.5, "some-impression-id-1", deal="x")], ALWAYS_DEALS,
            ["d"], [], [],
            id="deal floors need floordeals in the request too",
        ),
    ],
)  # fmt: skip
def test_enforce_floor_to_bids(request_, bids, settings, kept, rejected, errors):
    result = enforce_floors(request_, bids, settings, convert, const(0))
    assert ids(result.kept) == kept
    assert [r.bid.bid["id"] for r in result.rejected] == rejected
    assert result.errors == errors


# ---- TestEnforce ---------------------------------------------------------------------------------

_EXT = (
    '{"floormin":1,"data":{"currency":"USD","skiprate":100,"modelgroups":[{"modelversion":"version1","skiprate":10,'
    '"schema":{"fields":["mediaType","size","domain"],"delimiter":"|"},"values":{"*|*|*":20.01,'
    '"*|*|www.website1.com":16.01},"default":21}]},'
)


def _enforce_request(floor: float, floors_tail: str) -> dict:
    return {
        "id": "some-request-id",
        "imp": [
            {
                "id": "some-impression-id-1",
                "banner": {"format": [{"w": 300, "h": 250}]},
                "bidfloor": floor,
                "bidfloorcur": "USD",
            }
        ],
        "ext": {"prebid": {"floors": orjson.loads(floors_tail)}},
    }


@pytest.mark.parametrize(
    ("request_", "bids", "settings", "kept", "rejected", "floors"),
    [
        pytest.param(
            _enforce_request(5.01, _EXT + '"enforcement":{"enforcepbs":true,"floordeals":false},"enabled":false}'),
            [bid("pubmatic", "some-bid-11", 4.5, "some-impression-id-1")],
            AccountPriceFloors(enabled=True, enforce_floors_rate=100, enforce_deal_floors=True),
            ["some-bid-11"], [], {},
            id="request floors disabled",
        ),
        pytest.param(
            _enforce_request(5.01, _EXT + '"enforcement":{"enforcepbs":true,"floordeals":false},"enabled":true}'),
            [bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1")],
            AccountPriceFloors(enabled=False, enforce_floors_rate=100, enforce_deal_floors=True),
            ["some-bid-1"], [], {},
            id="account floors disabled",
        ),
        pytest.param(
            _enforce_request(
                5.01, _EXT + '"enforcement":{"enforcepbs":false,"floordeals":false},"enabled":true,"skipped":false}'
            ),
            [bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1")],
            AccountPriceFloors(enabled=True, enforce_floors_rate=100, enforce_deal_floors=True),
            ["some-bid-1"], [], {"some-bid-1": {"floorValue": 5.01, "floorCurrency": "USD"}},
            id="enforcepbs false",
        ),
        pytest.param(
            _enforce_request(
                5.01, _EXT + '"enforcement":{"enforcepbs":true,"floordeals":false},"enabled":true,"skipped":true}'
            ),
            [bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1")],
            AccountPriceFloors(enabled=True, enforce_floors_rate=100, enforce_deal_floors=True),
            ["some-bid-1"], [], {},
            id="signalling skipped",
        ),
        pytest.param(
            _enforce_request(20.01, _EXT + '"enforcement":{"enforcepbs":true,"floordeals":true},"enabled":true}'),
            [
                bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1", deal="deal_Id_1"),
                bid("appnexus", "some-bid-11", 0.5, "some-impression-id-1", deal="deal_Id_3"),
            ],
            AccountPriceFloors(enabled=True, enforce_floors_rate=0, enforce_deal_floors=True),
            [], ["some-bid-1", "some-bid-11"],
            {"some-bid-1": {"floorValue": 20.01, "floorCurrency": "USD"},
             "some-bid-11": {"floorValue": 20.01, "floorCurrency": "USD"}},
            id="deal floors enforced",
        ),
        pytest.param(
            _enforce_request(5.01, '{"floormin":1}'),
            [
                bid("pubmatic", "some-bid-1", 1.2, "some-impression-id-1", deal="deal_Id_1"),
                bid("appnexus", "some-bid-11", 4.5, "some-impression-id-1"),
            ],
            AccountPriceFloors(enabled=True, enforce_floors_rate=0, enforce_deal_floors=False),
            ["some-bid-1"], ["some-bid-11"],
            {"some-bid-1": {"floorValue": 5.01, "floorCurrency": "USD"},
             "some-bid-11": {"floorValue": 5.01, "floorCurrency": "USD"}},
            id="imp.bidfloor without enforcepbs",
        ),
        pytest.param(
            {"imp": [{"id": "i", "bidfloor": 0}]},
            [bid("a", "b", 0.5, "i")], ALWAYS,
            ["b"], [], {},
            id="no imp floor: nothing to do",
        ),
    ],
)  # fmt: skip
def test_enforce(request_, bids, settings, kept, rejected, floors):
    result = enforce_floors(request_, bids, settings, convert, const(50))
    assert ids(result.kept) == kept
    assert [r.bid.bid["id"] for r in result.rejected] == rejected
    every = {b.bid["id"]: result.floors_for(b) for b in bids}
    assert {k: v for k, v in every.items() if v is not None} == floors


def test_rejection_warning_and_codes():
    request = {"imp": _imps(1.01, 2.01), "ext": {"prebid": {"floors": {"enforcement": {"floorDeals": True}}}}}
    bids = [bid("appnexus", "some-bid-11", 0.5, "some-impression-id-1"), bid("x", "d", 1, "some-impression-id-2", "D")]
    result = enforce_floors(request, bids, ALWAYS_DEALS, convert, const(0))
    assert [r.warning() for r in result.rejected] == [
        "appnexus bid id some-bid-11 rejected - bid price 0.5000 USD is less than bid floor 1.0100 USD "
        "for imp some-impression-id-1",
        "x bid id d rejected - bid price 1.0000 USD is less than bid floor 2.0100 USD for imp some-impression-id-2",
    ]
    assert [(r.deal, r.non_bid_code) for r in result.rejected] == [(False, NON_BID_BELOW_FLOOR), (True, 304)]
    assert (NON_BID_BELOW_FLOOR, NON_BID_BELOW_DEAL_FLOOR, FLOOR_BID_REJECTION_WARNING_CODE) == (301, 304, 10009)
    assert rejection_warning("s", "b", 1.23456, "EUR", 2.00005, "USD", "i") == (
        "s bid id b rejected - bid price 1.2346 EUR is less than bid floor 2.0000 USD for imp i"
    )


def test_resolved_rule_reaches_bid_floors():
    request = {
        "id": "r",
        "site": {"domain": "www.website.com"},
        "imp": [{"id": "i", "banner": {"format": [{"w": 300, "h": 250}]}}],
        "ext": {"prebid": {"floors": {"data": {"modelgroups": [
            {"schema": {"fields": ["mediaType", "domain"]}, "values": {"banner|*": 2.5}}]}}}},
    }  # fmt: skip
    resolved = resolve_floors(request, ALWAYS, convert, None, never).request
    bids = [bid("a", "low", 2.0, "i"), bid("a", "ok", 2.49, "i")]
    result = enforce_floors(resolved, bids, ALWAYS, convert, const(0))
    assert ids(result.kept) == ["ok"] and ids([r.bid for r in result.rejected]) == ["low"]
    assert result.floors_for(bids[1]) == {
        "floorRule": "banner|*",
        "floorRuleValue": 2.5,
        "floorValue": 2.5,
        "floorCurrency": "USD",
    }
    assert result.rejected[0].warning().endswith("bid floor 2.5000 USD for imp i")


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        pytest.param(
            {"bidfloor": 10, "bidfloorcur": "USD"}, BidFloors(floor_value=10, floor_currency="USD"), id="no ext"
        ),
        pytest.param(
            {"bidfloorcur": "USD", "ext": {"prebid": {"floors": {"floorrule": "test|123|xyz", "floorrulevalue": 5.5,
                                                                  "floorvalue": 5.5}}}},
            BidFloors("test|123|xyz", 5.5, 5.5, "USD"),
            id="imp floors ext",
        ),
        pytest.param({}, None, id="nothing"),
        pytest.param(
            {"bidfloor": 3, "ext": {"prebid": {"floors": {"floorMin": 1}}}}, BidFloors(), id="user floors ext wins"
        ),
    ],
)  # fmt: skip
def test_bid_floors_for_imp(imp, expected):
    assert bid_floors_for_imp(imp) == expected


@pytest.mark.parametrize(
    ("request_rate", "account_rate", "draw", "expected"),
    [
        pytest.param(50, 100, 100, False, id="request 50, draw 100"),
        pytest.param(100, 100, 99, True, id="request 100, draw 99"),
        pytest.param(0, 0, 99, True, id="both 0"),
        pytest.param(0, 50, 60, False, id="account 50, draw 60"),
        pytest.param(70, 50, 49, True, id="both satisfied"),
    ],
)
def test_is_satisfied_by_enforce_rate(request_rate, account_rate, draw, expected):
    assert is_satisfied_by_enforce_rate(request_rate, account_rate, const(draw)) is expected


@pytest.mark.parametrize(
    ("enforcement", "draw", "expected"),
    [
        pytest.param({"enforcepbs": True}, 10, True, id="true stays true"),
        pytest.param({"enforcepbs": False}, 10, False, id="false stays false"),
        pytest.param({"enforcepbs": True}, 60, False, id="not drawn: false"),
        pytest.param({}, 60, False, id="unset, not drawn"),
        pytest.param({}, 10, True, id="unset, drawn"),
    ],
)
def test_enforce_pbs_update(enforcement, draw, expected):
    request = {"imp": [{"id": "i", "bidfloor": 1, "bidfloorcur": "USD"}],
               "ext": {"prebid": {"floors": {"enforcement": enforcement}}}}  # fmt: skip
    settings = AccountPriceFloors(enabled=True, enforce_floors_rate=50)
    result = enforce_floors(request, [bid("a", "b", 0.1, "i")], settings, convert, const(draw))
    assert result.enforce_pbs is expected
    assert ids(result.kept if not expected else [r.bid for r in result.rejected]) == ["b"]


# ---- applyBidAdjustmentToFloor -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factors", "bidder", "expected"),
    [
        pytest.param(None, "appnexus", 1.0, id="none"),
        pytest.param({"appnexus": 0.5}, "appnexus", 0.5, id="factor"),
        pytest.param({"AppNexus": 0.5}, "appnexus", 0.5, id="keys lower-cased"),
        pytest.param({"appnexus": 0}, "appnexus", 1.0, id="zero is 1"),
        pytest.param({"rubicon": 2}, "appnexus", 1.0, id="other bidder"),
    ],
)
def test_floor_adjustment_factor(factors, bidder, expected):
    assert floor_adjustment_factor(factors, bidder) == expected


def test_adjust_floors_for_bidder():
    imps = [{"id": "1", "bidfloor": 1.0}, {"id": "2"}, {"id": "3", "bidfloor": 3}]
    same = adjust_floors_for_bidder(imps, 1.0)
    assert same is imps
    adjusted = adjust_floors_for_bidder(imps, 0.5)
    assert adjusted == [{"id": "1", "bidfloor": 2.0}, {"id": "2"}, {"id": "3", "bidfloor": 6.0}]
    assert imps[0] == {"id": "1", "bidfloor": 1.0} and adjusted[1] is imps[1]
