"""pb-response-correction: PBS-Java's AppVideoHtmlCorrection(Producer)Test and
ResponseCorrectionAllProcessedBidResponsesHookTest, as tables."""

from __future__ import annotations

import copy
import dataclasses
import logging
from typing import Any

import pytest

from hbserver.auction.bids.accept import AuctionBid
from hbserver.hooks.api import AllProcessedBidResponsesPayload, HookFailure, HookResult, InvocationContext
from hbserver.modules import builder_of
from hbserver.modules.request_correction.jackson import JacksonError
from hbserver.modules.response_correction import HOOK_CODE, NO_REQUEST_WARNING, ResponseCorrectionModule, build
from hbserver.modules.response_correction.appvideohtml import correct, has_native_adm, is_video_with_vast
from hbserver.modules.response_correction.config import AppVideoHtmlConfig, Config, read_config


@dataclasses.dataclass(slots=True)
class _RequestContext(InvocationContext):
    """The invocation context with the auction's request, as the module looks for it."""

    request: dict[str, Any] | None = None


def _ctx(account_config: dict[str, Any] | None, request: dict[str, Any] | None) -> InvocationContext:
    return _RequestContext("/openrtb2/auction", "acc", account_config, {}, HOOK_CODE, request)


def _bid(adm: str | None, bid_type: str, ext: Any = None, bidder: str = "bidderA", meta: Any = None) -> AuctionBid:
    bid: dict[str, Any] = {"id": "b1", "impid": "i1", "price": 1.0}
    if adm is not None:
        bid["adm"] = adm
    if ext is not None:
        bid["ext"] = ext
    return AuctionBid(bidder, bidder, bid, bid_type, 1.0, "i1", False, meta=meta)


ON = {"enabled": True, "app-video-html": {"enabled": True}}
APP = {"id": "r", "app": {"bundle": "b"}}


def _run(
    account_config: dict[str, Any] | None, bids: list[AuctionBid], request: dict[str, Any] | None = APP
) -> tuple[HookResult[Any], list[AuctionBid]]:
    before = copy.deepcopy(bids)
    payload = AllProcessedBidResponsesPayload(bids)
    result = build({"enabled": True}).handle_all_processed_bid_responses(_ctx(account_config, request), payload)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    assert bids == before  # the given bids are never changed
    return result, payload.bids


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (None, None),
        ({}, Config()),
        ({"enabled": True}, Config(True)),
        ({"enabled": True, "app-video-html": None}, Config(True)),
        (ON, Config(True, AppVideoHtmlConfig(True))),
        (
            {"enabled": 1, "app-video-html": {"enabled": "true", "excluded-bidders": ["a", "b"]}},
            Config(True, AppVideoHtmlConfig(True, ("a", "b"))),
        ),
        ({"app-video-html": {"excluded-bidders": "a"}}, Config(False, AppVideoHtmlConfig(False, ("a",)))),
        ({"appVideoHtml": {"enabled": True}, "app_video_html": {}}, Config()),
    ],
)
def test_read_config(node: dict[str, Any] | None, expected: Config | None) -> None:
    assert read_config(node) == expected


@pytest.mark.parametrize(
    ("node", "key"),
    [
        ({"enabled": []}, "enabled"),
        ({"app-video-html": True}, "app-video-html"),
        ({"app-video-html": {"enabled": "on"}}, "enabled"),
        ({"app-video-html": {"excluded-bidders": {"a": 1}}}, "excluded-bidders"),
    ],
)
def test_read_config_refuses(node: dict[str, Any], key: str) -> None:
    with pytest.raises(JacksonError, match=r"^Cannot deserialize value of type") as raised:
        read_config(node)
    assert f'["{key}"]' in str(raised.value)


@pytest.mark.parametrize(
    ("bid_type", "adm", "vast"),
    [
        ("video", "< \tVAST anything>", True),
        ("video", "<vast version='4.0'></vast>", True),
        ("video", "<VAST>", False),  # a space must follow VAST
        ("banner", "<VAST version='2.0'>", False),
        ("video", "<?xml version='1.0'?>\n<VAST version='3.0'></VAST>", False),  # Java's "." stops at \n
        ("video", "<VAST\nversion='3.0'></VAST>", True),  # \s does not
        # PbResponseCorrectionSpec
        ("video", "abc<   VAST def", True),
        ("video", "abc   <  VAST def>", True),
        ("video", "<vAsT   ", True),
        ("video", "<  VASTabc", False),
        ("video", "<  VAST", False),
        ("video", "<abcVAST  ", False),
        ("video", "< }VAST  x", False),
    ],
)
def test_vast_pattern(bid_type: str, adm: str, vast: bool) -> None:
    assert is_video_with_vast(bid_type, adm) is vast


@pytest.mark.parametrize(
    ("adm", "native"),
    [
        ('{"field":1,"assets":[{"id":2}]}', True),
        (' \n{"assets": null} trailing', True),
        ('{"field":1}', False),
        ('[{"assets":1}]', False),
        ("<div>", False),
        ("", False),
        ("[" * 5000, False),
    ],
)
def test_native_adm(adm: str, native: bool) -> None:
    assert has_native_adm(adm) is native


BANNER_EXT = {"prebid": {"meta": {"mediaType": "video"}, "type": "banner"}}


# AppVideoHtmlCorrectionTest
@pytest.mark.parametrize(
    ("bid", "excluded", "expected_ext", "expected_type"),
    [
        (_bid("<div>", "video"), ("bidderA", "bidderB"), None, "video"),
        (_bid(None, "video"), ("bidderA",), None, "video"),
        (_bid("< \tVAST anything>", "video"), (), None, "video"),
        (_bid('{"field":1,"assets":[{"id":2}]}', "video"), (), None, "video"),
        (_bid('{"field":1}', "video"), (), BANNER_EXT, "banner"),
        (_bid("<something VAST something>", "native"), (), BANNER_EXT, "banner"),
        (
            _bid(
                "<something and something>",
                "video",
                {"prebid": {"bidid": "someId", "meta": {"adaptercode": "someCode", "mediaType": "banner"}}},
            ),
            (),
            {
                "prebid": {
                    "bidid": "someId",
                    "meta": {"adaptercode": "someCode", "mediaType": "video"},
                    "type": "banner",
                }
            },
            "banner",
        ),
        # PBS-Java rebuilds ext from ext.prebid: the bid's other ext fields go
        (_bid("<div>", "banner", {"origbidcpm": 1.0, "bidder": {"x": 1}}), (), BANNER_EXT, "banner"),
        (_bid("<div>", "banner", {"prebid": "bad"}), (), BANNER_EXT, "banner"),
        (_bid("<div>", "banner", {"prebid": {"bidid": "x", "meta": 3}}), (), BANNER_EXT, "banner"),
        (_bid("<VAST version='2'>", "video", bidder="bidderB"), ("bidderA",), None, "video"),
        (_bid("<?xml?>\n<VAST version='2'>", "video"), (), BANNER_EXT, "banner"),
    ],
)
def test_correct(bid: AuctionBid, excluded: tuple[str, ...], expected_ext: Any, expected_type: str) -> None:
    before = copy.deepcopy(bid)
    fixed = correct(bid, excluded, lambda _: None)
    assert bid == before
    if expected_ext is None:
        assert fixed is bid
        return
    assert fixed.bid_type == expected_type
    assert fixed.bid == {**bid.bid, "ext": expected_ext}
    assert (fixed.bidder, fixed.price, fixed.imp_id) == (bid.bidder, bid.price, bid.imp_id)


def test_correct_marks_the_adapters_meta() -> None:
    bid = _bid("<div>", "video", meta={"advertiserDomains": ["a.com"]})
    assert correct(bid, (), lambda _: None).meta == {"advertiserDomains": ["a.com"], "mediaType": "video"}
    assert bid.meta == {"advertiserDomains": ["a.com"]}
    assert correct(_bid("<div>", "video"), (), lambda _: None).meta is None


# PbResponseCorrectionSpec's logged warnings
@pytest.mark.parametrize(
    ("bid", "warnings"),
    [
        (_bid('{"assets":[]}', "native"), ["Bid b1 of bidder bidderA has an JSON ADM, that appears to be native"]),
        (
            _bid('{"field":1}', "native"),
            [
                "Bid b1 of bidder bidderA has a JSON ADM, but without assets",
                "Bid b1 of bidder bidderA: changing media type to banner",
            ],
        ),
        (
            _bid("  ", "banner"),  # Jackson reads nothing as a (missing) JSON value
            [
                "Bid b1 of bidder bidderA has a JSON ADM, but without assets",
                "Bid b1 of bidder bidderA: changing media type to banner",
            ],
        ),
        (_bid("<div>", "banner"), ["Bid b1 of bidder bidderA: changing media type to banner"]),
        (_bid("<VAST >", "video"), []),
        (_bid(None, "video"), []),
    ],
)
def test_correct_warnings(bid: AuctionBid, warnings: list[str]) -> None:
    seen: list[str] = []
    correct(bid, (), seen.append)
    assert seen == warnings


def test_hook_logs_the_warnings(caplog: pytest.LogCaptureFixture) -> None:
    payload = AllProcessedBidResponsesPayload([_bid("<div>", "video")])
    module = ResponseCorrectionModule(log_sampling_rate=1.0)
    result = module.handle_all_processed_bid_responses(_ctx(ON, APP), payload)
    with caplog.at_level(logging.WARNING, logger="hbserver.modules.response_correction"):
        result.mutations[0].apply(payload)
    assert [r.getMessage() for r in caplog.records] == ["Bid b1 of bidder bidderA: changing media type to banner"]


# AppVideoHtmlCorrectionProducerTest and ResponseCorrectionAllProcessedBidResponsesHookTest
@pytest.mark.parametrize(
    ("account_config", "request_", "update", "changed"),
    [
        (None, APP, False, False),
        ({"enabled": False, "app-video-html": {"enabled": True}}, APP, False, False),
        ({"enabled": True}, APP, False, False),
        ({"enabled": True, "app-video-html": {"enabled": False}}, APP, False, False),
        (ON, {"id": "r", "site": {"page": "p"}}, False, False),
        (ON, APP, True, True),
        # PBS-Java updates the payload whenever the correction applies, even if no bid changes
        ({"enabled": True, "app-video-html": {"enabled": True, "excluded-bidders": ["bidderA"]}}, APP, True, False),
    ],
)
def test_hook(account_config: dict[str, Any] | None, request_: dict[str, Any], update: bool, changed: bool) -> None:
    bids = [_bid("<div>", "video"), _bid("<VAST version='4'>x", "video", bidder="bidderC")]
    result, after = _run(account_config, bids, request_)
    assert [m.kind for m in result.mutations] == (["update"] if update else [])
    assert [b.bid_type for b in after] == (["banner", "video"] if changed else ["video", "video"])
    assert after[1] is bids[1]
    assert not result.warnings and not result.analytics_tags


def test_hook_fails_on_invalid_configuration() -> None:
    with pytest.raises(HookFailure, match=r"^Cannot deserialize value of type"):
        _run({"enabled": []}, [])


def test_hook_without_the_auction_request_warns() -> None:
    result, after = _run(ON, [_bid("<div>", "video")], request=None)
    assert result.mutations == [] and result.warnings == [NO_REQUEST_WARNING]
    assert after[0].bid_type == "video"


def test_registered_and_built() -> None:
    builder = builder_of("pb-response-correction")
    assert builder is not None and hasattr(builder({"enabled": True}), "handle_all_processed_bid_responses")
    with pytest.raises(ValueError, match="pb-response-correction"):
        build(None)  # type: ignore[arg-type]
