"""Brand-category mapping (hbserver.auction.response.category): PBS-Go's exchange_test.go cases
(TestCategoryMapping*, TestCategoryDedupe, TestNoCategoryDedupe, TestBidRejectionErrors...) as table rows,
over PBS-Go's test table (exchange/test/category-mapping/freewheel/freewheel.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.bids.accept import AuctionBid
from hbserver.auction.response.category import (
    BrandCategory,
    Buckets,
    CategoryConfigError,
    CategoryTables,
    duration_range,
    map_categories,
)
from hbserver.auction.response.pricegranularity import parse_granularity, parse_media_type_granularity

SHARED_TABLES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pbs-category-mapping"
PACKAGE_TABLES = Path(__file__).resolve().parents[2] / "hbserver" / "static" / "category-mapping"

# PBS-Go exchange/test/category-mapping/freewheel/freewheel.json
GO_TEST_TABLE = {
    "IAB1-1": "VideoGames", "IAB1-2": "HomeDecor", "IAB1-3": "Electronics",
    "IAB1-4": "Sports", "IAB1-5": "Medicine", "IAB1-6": "Makeup",
}  # fmt: skip
TABLES = CategoryTables({"freewheel": {"freewheel": GO_TEST_TABLE}})
# newExtRequest's price granularity: precision 2, 0-20 by 2
BUCKETS = Buckets(parse_granularity({"precision": 2, "ranges": [{"min": 0, "max": 20, "increment": 2}]}))


def _bid(bid_id: str, price: float, cat: list[str] | None, dur: int | None = 30, bidder: str = "appnexus",
         primary: str = "", **fields: Any) -> AuctionBid:  # fmt: skip
    own: dict[str, Any] = {"id": bid_id, "impid": "imp_" + bid_id, "price": price, "w": 1, "h": 1, **fields}
    if cat is not None:
        own["cat"] = cat
    video = None if dur is None else {"duration": dur, "primary_category": primary}
    return AuctionBid(bidder, bidder, own, "video", price, own["impid"], False, video=video)


def _rules(with_category: bool = True, ranges: tuple[int, ...] = (), translate: bool = True, server: int = 1,
           publisher: str = "", append: bool = False) -> BrandCategory:  # fmt: skip
    return BrandCategory(with_category, translate, server, publisher, ranges, append)


def _run(bids: list[AuctionBid], rules: BrandCategory, later: bool = False) -> tuple[list[str], dict, list[str]]:
    result = map_categories(bids, rules, TABLES, BUCKETS, later)
    return [b.bid["id"] for b in result.kept], result.cat_dur, [r.message for r in result.rejected]


UNMAPPED = "Category mapping file for primary ad server: 'freewheel', publisher: '' not found"


def _rejected(bid_id: str, reason: str) -> str:
    return f"bid rejected [bid ID: {bid_id}] reason: {reason}"


CASES = [
    pytest.param(
        [
            _bid("bid_id1", 10, ["IAB1-3"]),
            _bid("bid_id2", 20, ["IAB1-4"], 40),
            _bid("bid_id3", 30, ["IAB1-1000"], primary="AdapterOverride"),
            _bid("bid_id4", 40, ["IAB1-2000"]),
        ],
        _rules(ranges=(15, 30, 50)),
        False,
        ["bid_id1", "bid_id2", "bid_id3"],
        {"bid_id1": "10.00_Electronics_30s", "bid_id2": "20.00_Sports_50s", "bid_id3": "20.00_AdapterOverride_30s"},
        [_rejected("bid_id4", UNMAPPED)],
        id="go TestCategoryMapping",
    ),
    pytest.param(
        [
            _bid("bid_id1", 10, ["IAB1-3"]),
            _bid("bid_id2", 20, ["IAB1-4"], 40),
            _bid("bid_id3", 30, ["IAB1-1000"], primary="AdapterOverride"),
            _bid("bid_id4", 40, ["IAB1-2000"], 50),
        ],
        _rules(with_category=False, ranges=(15, 30, 40, 50), server=0),
        False,
        ["bid_id1", "bid_id2", "bid_id3", "bid_id4"],
        {"bid_id1": "10.00_30s", "bid_id2": "20.00_40s", "bid_id3": "20.00_30s", "bid_id4": "20.00_50s"},
        [],
        id="go TestCategoryMappingNoIncludeBrandCategory",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-3"]), _bid("bid_id2", 20, ["IAB1-4"], 40), _bid("bid_id3", 30, ["IAB1-1000"])],
        _rules(ranges=(15, 30, 50)),
        False,
        ["bid_id1", "bid_id2"],
        {"bid_id1": "10.00_Electronics_30s", "bid_id2": "20.00_Sports_50s"},
        [_rejected("bid_id3", UNMAPPED)],
        id="go TestCategoryMappingTranslateCategoriesNil",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-3"]), _bid("bid_id2", 20, ["IAB1-4"], 40), _bid("bid_id3", 30, ["IAB1-1000"])],
        _rules(ranges=(15, 30, 50), translate=False),
        False,
        ["bid_id1", "bid_id2", "bid_id3"],
        {"bid_id1": "10.00_IAB1-3_30s", "bid_id2": "20.00_IAB1-4_50s", "bid_id3": "20.00_IAB1-1000_30s"},
        [],
        id="go TestCategoryMappingTranslateCategoriesFalse",
    ),
    *[
        pytest.param(
            [
                _bid("bid_id1", 10, ["IAB1-3"]),
                _bid("bid_id2", 15, ["IAB1-4"], 50),
                _bid("bid_id3", 20, ["IAB1-3"]),
                _bid("bid_id4", 20, ["IAB1-INVALID"]),
                _bid("bid_id5", 20, ["IAB1-3"]),
            ],
            _rules(),
            later,
            ["bid_id2", winner],
            {"bid_id2": "14.00_Sports_50s", winner: "20.00_Electronics_30s"},
            [
                _rejected("bid_id1", "Bid was deduplicated"),
                _rejected("bid_id4", UNMAPPED),
                _rejected(loser, "Bid was deduplicated"),
            ],
            id=f"go TestCategoryDedupe {winner}_selected_over_{loser}",
        )
        for later, winner, loser in ((True, "bid_id5", "bid_id3"), (False, "bid_id3", "bid_id5"))
    ],
    pytest.param(
        [
            _bid("bid_id1", 14, ["IAB1-3"]),
            _bid("bid_id2", 14, ["IAB1-4"]),
            _bid("bid_id3", 20, ["IAB1-3"]),
            _bid("bid_id4", 20, ["IAB1-2000"]),
            _bid("bid_id5", 10, ["IAB1-3"]),
        ],
        _rules(with_category=False, server=0),
        False,
        ["bid_id1", "bid_id3", "bid_id5"],  # PBS-Go: bid_id1 or 2, bid_id3 or 4 at random; here the first seen
        {"bid_id1": "14.00_30s", "bid_id3": "20.00_30s", "bid_id5": "10.00_30s"},
        [_rejected("bid_id2", "Bid was deduplicated"), _rejected("bid_id4", "Bid was deduplicated")],
        id="go TestNoCategoryDedupe (deterministic)",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-1"], bidder="bidder1"), _bid("bid_id2", 10, ["IAB1-2"], bidder="bidder2")],
        _rules(ranges=(15, 30), append=True),
        False,
        ["bid_id1", "bid_id2"],
        {"bid_id1": "10.00_VideoGames_30s_bidder1", "bid_id2": "10.00_HomeDecor_30s_bidder2"},
        [],
        id="go TestCategoryMappingBidderName",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-1"], 17, bidder="bidder1"), _bid("bid_id2", 12, ["IAB1-2"], 8, bidder="bidder2")],
        _rules(with_category=False, ranges=(30, 10, 25, 5, 20, 50), server=0, append=True),
        False,
        ["bid_id1", "bid_id2"],
        {"bid_id1": "10.00_20s_bidder1", "bid_id2": "12.00_10s_bidder2"},
        [],
        id="go TestCategoryMappingBidderNameNoCategories",
    ),
    pytest.param(
        [_bid("bid_id1", 10, [])],
        _rules(ranges=(15, 30, 50)),
        False,
        [],
        {},
        [_rejected("bid_id1", "Bid did not contain a category")],
        id="go TestBidRejectionErrors: no category",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-1"])],
        _rules(ranges=(15, 30, 50), server=2, publisher="some_publisher"),
        False,
        [],
        {},
        [
            _rejected(
                "bid_id1", "Category mapping file for primary ad server: 'dfp', publisher: 'some_publisher' not found"
            )
        ],
        id="go TestBidRejectionErrors: missing mapping file",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-1"], 70)],
        _rules(ranges=(15, 30, 50)),
        False,
        [],
        {},
        [_rejected("bid_id1", "bid duration exceeds maximum allowed")],
        id="go TestBidRejectionErrors: duration exceeds maximum",
    ),
    pytest.param(
        [_bid("bid_id1", 10, ["IAB1-1"]), _bid("bid_id1", 10, ["IAB1-1"])],
        _rules(ranges=(15, 30, 50)),
        False,
        ["bid_id1"],
        {"bid_id1": "10.00_VideoGames_30s"},
        [_rejected("bid_id1", "Bid was deduplicated")],
        id="go TestBidRejectionErrors: duplicate bid",
    ),
    pytest.param(
        [
            _bid("bid_idApn1", 10, ["IAB1-3"], bidder="appnexus1"),
            _bid("bid_idApn2", 10, ["IAB1-4"], bidder="appnexus2"),
        ],
        _rules(with_category=False, ranges=(30,)),
        False,
        ["bid_idApn1"],
        {"bid_idApn1": "10.00_30s"},
        [_rejected("bid_idApn2", "Bid was deduplicated")],
        id="go TestCategoryMappingTwoBiddersOneBidEachNoCategorySamePrice (deterministic: the first seen)",
    ),
    *[
        pytest.param(
            [
                _bid("bid_idApn1_1", 10, ["IAB1-3"], bidder="appnexus1"),
                _bid("bid_idApn1_2", 20, ["IAB1-3"], bidder="appnexus1"),
                _bid("bid_idApn2_1", 10, ["IAB1-4"], bidder="appnexus2"),
                _bid("bid_idApn2_2", 20, ["IAB1-4"], bidder="appnexus2"),
            ],
            _rules(with_category=False, ranges=(30,)),
            later,
            [f"bid_idApn{kept}_1", f"bid_idApn{kept}_2"],
            {f"bid_idApn{kept}_1": "10.00_30s", f"bid_idApn{kept}_2": "20.00_30s"},
            [
                _rejected(f"bid_idApn{lost}_1", "Bid was deduplicated"),
                _rejected(f"bid_idApn{lost}_2", "Bid was deduplicated"),
            ],
            id=f"go TestCategoryMappingTwoBiddersManyBidsEachNoCategorySamePrice later_wins_tie={later}",
        )
        for later, kept, lost in ((True, 2, 1), (False, 1, 2))
    ],
    pytest.param(
        [_bid("b1", 10.0, ["IAB1-3"]), _bid("b2", 11.5, ["IAB1-3"])],
        _rules(),
        False,
        ["b2"],
        {"b2": "10.00_Electronics_30s"},
        [_rejected("b1", "Bid was deduplicated")],
        id="equal buckets: the higher price stays (PBS-Go: a coin toss)",
    ),
    pytest.param(
        [_bid("b1", 5, ["IAB1-3"], None), _bid("b2", 5, None, None)],
        _rules(ranges=(15, 30)),
        False,
        ["b1"],
        {"b1": "4.00_Electronics_15s"},
        [_rejected("b2", "Bid did not contain a category")],
        id="no bid video facts: duration 0 raised to the first range; no cat at all",
    ),
    pytest.param(
        [_bid("b1", 5, ["IAB1-3", "IAB1-4"])],
        _rules(),
        False,
        [],
        {},
        [_rejected("b1", "Bid did not contain a category")],
        id="two categories: no unique category",
    ),
]


@pytest.mark.parametrize(("bids", "rules", "later", "kept", "cat_dur", "rejections"), CASES)
def test_map_categories(bids, rules, later, kept, cat_dur, rejections) -> None:
    assert _run(bids, rules, later) == (kept, cat_dur, rejections)


def test_no_category_rejection_carries_seat_non_bid_303_and_the_others_none() -> None:
    """PBS-Go rejectBid(…, ResponseRejectedCategoryMappingInvalid) only for a bid without a category."""
    bids = [_bid("b1", 5, []), _bid("b2", 5, ["IAB1-999"]), _bid("b3", 5, ["IAB1-1"], 90), _bid("b4", 5, ["IAB1-2"]),
            _bid("b5", 9, ["IAB1-2"])]  # fmt: skip
    result = map_categories(bids, _rules(ranges=(30,)), TABLES, BUCKETS)
    assert [(r.bid.bid["id"], r.non_bid_code) for r in result.rejected] == [
        ("b1", 303),
        ("b2", None),
        ("b3", None),
        ("b4", None),
    ]


@pytest.mark.parametrize(
    ("rules", "error"),
    [
        (_rules(server=0), "Primary ad server 0 not recognized"),
        (_rules(server=3), "Primary ad server 3 not recognized"),
        (_rules(server=3, translate=False), None),
        (_rules(server=3, with_category=False), None),
        (_rules(server=2), None),
    ],
    ids=["go getPrimaryAdServer: 0", "3", "translation off: not read", "without category: not read", "2 is dfp"],
)
def test_primary_ad_server(rules: BrandCategory, error: str | None) -> None:
    if error is None:
        map_categories([], rules, TABLES, BUCKETS)
        return
    with pytest.raises(CategoryConfigError) as caught:
        map_categories([], rules, TABLES, BUCKETS)
    assert str(caught.value) == error


@pytest.mark.parametrize(("duration", "ranges", "expected"), [
    (30, (15, 30, 50), 30), (40, (15, 30, 50), 50), (0, (15, 30), 15), (17, (30, 10, 25, 5, 20, 50), 20),
    (70, (15, 30, 50), None), (45, (), 45), (0, (), 0),
])  # fmt: skip
def test_duration_range(duration: int, ranges: tuple[int, ...], expected: int | None) -> None:
    """PBS-Go findDurationRange."""
    assert duration_range(duration, ranges) == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"mtype": 2}, "13.50_Electronics_30s"),
        ({"ext": {"prebid": {"type": "video"}}}, "13.50_Electronics_30s"),
        ({"mtype": 1, "ext": {"prebid": {"type": "video"}}}, "13.00_Electronics_30s"),
        ({}, "13.00_Electronics_30s"),
    ],
    ids=["mtype video", "ext.prebid.type video", "mtype wins", "neither: the default granularity"],
)
def test_media_type_granularity_is_read_from_the_bid(fields: dict[str, Any], expected: str) -> None:
    """PBS-Go GetPriceBucket types the bid by getMediaTypeForBid (mtype, else ext.prebid.type), not the
    adapter's type."""
    media = parse_media_type_granularity({"video": {"precision": 2, "ranges": [{"max": 20, "increment": 0.5}]}})
    buckets = Buckets(parse_granularity({"precision": 2, "ranges": [{"max": 20, "increment": 1}]}), media)
    result = map_categories([_bid("b1", 13.7, ["IAB1-3"], **fields)], _rules(), TABLES, buckets)
    assert result.cat_dur == {"b1": expected}


def test_from_targeting() -> None:
    targeting = {"includebrandcategory": {"primaryadserver": 2, "publisher": "dfp", "withcategory": True,
                                          "translatecategories": False},
                 "durationrangesec": [15, 30], "appendbiddernames": True}  # fmt: skip
    assert BrandCategory.from_targeting(targeting) == BrandCategory(True, False, 2, "dfp", (15, 30), True)
    assert BrandCategory.from_targeting({"includebrandcategory": {}}) == BrandCategory()
    assert BrandCategory.from_targeting({"includebrandcategory": None}) is None
    assert BrandCategory.from_targeting({"durationrangesec": [15]}) is None


def test_shipped_tables_hold_pbs_go_facts() -> None:
    """The package's tables say what PBS-Go's static/category-mapping files say (../shared/fixtures)."""
    shared = sorted(p.relative_to(SHARED_TABLES).as_posix() for p in SHARED_TABLES.rglob("*.json"))
    shipped = sorted(p.relative_to(PACKAGE_TABLES).as_posix() for p in PACKAGE_TABLES.rglob("*.json"))
    assert shipped == shared == ["dfp/dfp_dfp.json", "freewheel/freewheel.json"]
    loaded = CategoryTables.load()
    for name in shared:
        server, file = name.split("/")
        facts = json.loads((SHARED_TABLES / name).read_text())
        assert loaded.tables[server][file.removesuffix(".json")] == {iab: e["id"] for iab, e in facts.items()}


@pytest.mark.parametrize(
    ("server", "publisher", "iab", "expected"),
    [
        ("freewheel", "", "IAB1-1", "404"),
        ("dfp", "dfp", "IAB1-5", "movies"),
        ("dfp", "", "IAB1-5", ""),
        ("freewheel", "pub", "IAB1-1", ""),
        ("freewheel", "", "IAB1-999", ""),
    ],
    ids=["freewheel", "dfp_dfp", "dfp without publisher: no dfp.json (as PBS-Go)", "no publisher file", "no code"],
)
def test_shipped_lookup(server: str, publisher: str, iab: str, expected: str) -> None:
    """PBS-Go file_fetcher FetchCategories: <server>/<server>[_<publisher>].json."""
    assert CategoryTables.load().lookup(server, publisher, iab) == expected


def test_load_refuses_a_broken_table(tmp_path: Path) -> None:
    """PBS-Go TestCategoriesFetcherBrokenJson: here found at start, not per bid."""
    (tmp_path / "freewheel").mkdir()
    (tmp_path / "freewheel" / "freewheel.json").write_text('{"IAB1-1": ')
    with pytest.raises(ValueError, match=r"category mapping freewheel\.json"):
        CategoryTables.load(tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"IAB1-1": "404"}', {"IAB1-1": "404"}),  # hbserver's own form
        ('{"IAB1-1": {"id": "404", "name": "Publishing"}}', {"IAB1-1": "404"}),  # PBS-Go's file fetcher's
        ('{"IAB1-1": {"name": "Publishing"}}', {"IAB1-1": ""}),
        ('{"IAB1-1": 404}', ValueError),
        ('["IAB1-1"]', ValueError),
    ],
)
def test_load_reads_either_table_form(tmp_path: Path, text: str, expected: object) -> None:
    (tmp_path / "freewheel").mkdir()
    (tmp_path / "freewheel" / "freewheel.json").write_text(text)
    if expected is ValueError:
        with pytest.raises(ValueError, match="not an object of ids"):
            CategoryTables.load(tmp_path)
    else:
        assert CategoryTables.load(tmp_path).tables == {"freewheel": {"freewheel": expected}}


def test_load_refuses_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="category mapping tables not found"):
        CategoryTables.load(tmp_path / "gone")


@pytest.mark.parametrize(
    ("append", "expected"),
    [
        (False, {"apn-bid": "0.30_VideoGames_30s", "apn-other-bid": "0.60_HomeDecor_0s"}),
        (True, {"apn-bid": "0.30_VideoGames_30s_appnexus", "apn-other-bid": "0.60_HomeDecor_0s_appnexus"}),
    ],
    ids=["go exchangetest/include-brand-category.json", "go exchangetest/append-bidder-names.json"],
)
def test_pbs_go_exchange_json_cases(append: bool, expected: dict[str, str]) -> None:
    """PBS-Go's JSON exchange tests (increment 0.1; the second bid has no bid video facts: 0s). PBS-Go
    writes 0.20 and 0.50 there (float error in its bucketing); hbserver's buckets are decimal-exact, the
    same as its hb_pb (DECISIONS.md "Price buckets")."""
    buckets = Buckets(parse_granularity({"precision": 2, "ranges": [{"min": 0, "max": 20, "increment": 0.1}]}))
    bids = [_bid("apn-bid", 0.3, ["IAB1-1"], 30), _bid("apn-other-bid", 0.6, ["IAB1-2"], None)]
    result = map_categories(bids, _rules(append=append), TABLES, buckets)
    assert result.cat_dur == expected and not result.rejected
