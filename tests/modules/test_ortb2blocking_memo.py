"""prebid.ortb2blocking's plans, remembered on the parsed config: bounded, gone with a changed
account config, and a hit gives what a miss gives (PBS-Go's cases run twice on one module, and
against a module that has never seen them); the quick look at a bid agrees with the full checks."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.hooks.api import (
    ENDPOINT_AUCTION,
    BidderRequestPayload,
    HookFailure,
    HookResult,
    InvocationContext,
    RawBidderResponsePayload,
)
from hbserver.modules.ortb2blocking import build
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from hbserver.modules.ortb2blocking.config import parse
from hbserver.modules.ortb2blocking.plans import MEMO_SIZE, remembered, request_plan, response_plan, top_plan
from hbserver.modules.ortb2blocking.raw_bidder_response import (
    AllKept,
    _checked,
    _failed_checks,
    _glance_of,
    _passes,
    all_pass,
    glance,
    handle_raw_bidder_response,
)

DATA = Path(__file__).parent / "data" / "ortb2blocking"
REQUEST_CASES = json.loads((DATA / "bidder_request_cases.json").read_text())
RESPONSE_CASES = json.loads((DATA / "raw_bidder_response_cases.json").read_text())
TEST_CONFIG = json.loads((DATA / "test_config.json").read_text())
ENFORCED = {
    "attributes": {
        "badv": {"enforce_blocks": True, "block_unknown_adomain": True, "blocked_adomain": ["bad.com"]},
        "bcat": {"enforce_blocks": True, "blocked_adv_cat": ["IAB25"], "category_taxonomy": 6},
        "bapp": {"enforce_blocks": True, "blocked_app": ["com.bad"]},
        "btype": {"blocked_banner_type": [1]},
        "battr": {"enforce_blocks": True, "blocked_banner_attr": [9], "allowed_banner_attr_for_deals": [9]},
    }
}


def _passing(cfg: Any, bidder: str, attrs: BlockingAttributes, bids: list[TypedBid]) -> bool:
    """all_pass over one answer of ``bidder`` whose attributes are ``attrs``."""
    return all_pass(cfg, [RawBidderResponsePayload(BidderResponse(bids), bidder)], {bidder: attrs})


def _ctx(config: Any, module_context: dict[str, Any] | None = None) -> InvocationContext:
    return InvocationContext(ENDPOINT_AUCTION, "acc", config, module_context or {}, "code")


def _request_outcome(module: Any, config: Any, request: dict[str, Any], bidder: str = "appnexus") -> Any:
    """Everything the bidder_request hook gives, its mutations applied (a failure's text and result)."""
    payload = BidderRequestPayload(copy.deepcopy(request), bidder)
    try:
        result = module.handle_bidder_request(_ctx(config), payload)
    except HookFailure as exc:
        failed = exc.result
        return str(exc), failed.warnings, [key for m in failed.mutations for key, _ in m.changes()]
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    keys = [(kind, key) for m in result.mutations for key, kind in m.changes()]
    return payload.request, result.warnings, keys, result.module_context, result.debug_messages


def _response_outcome(module: Any, config: Any, module_context: dict[str, Any], bids: list[dict[str, Any]]) -> Any:
    typed = [TypedBid(bid=copy.deepcopy(bid), bid_type="banner") for bid in bids]
    payload = RawBidderResponsePayload(BidderResponse(typed, "EUR", [{"impid": "1"}]), "appnexus")
    try:
        result = module.handle_raw_bidder_response(_ctx(config, module_context), payload)
    except HookFailure as exc:
        failed = exc.result
        return str(exc), failed.warnings if failed else None, failed.analytics_tags if failed else None
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    response = payload.response
    kept = [typed.bid for typed in response.bids]
    return kept, response.currency, response.fledge_auction_configs, result.warnings, result.analytics_tags


def _config(case: dict[str, Any]) -> Any:
    return TEST_CONFIG if case["config"] == "@test_config" else case["config"]


@pytest.mark.parametrize("case", REQUEST_CASES, ids=[case["description"] for case in REQUEST_CASES])
def test_bidder_request_hit_is_a_miss(case: dict[str, Any]) -> None:
    config = _config(case)
    module = build({})
    miss = _request_outcome(module, config, case["request"])
    hit = _request_outcome(module, config, case["request"])
    fresh = _request_outcome(build({}), copy.deepcopy(config), case["request"])
    assert hit == miss == fresh


@pytest.mark.parametrize("case", RESPONSE_CASES, ids=[case["description"] for case in RESPONSE_CASES])
def test_raw_bidder_response_hit_is_a_miss(case: dict[str, Any]) -> None:
    raw_context = case["module_context"] or {}
    module_context = {
        bidder: BlockingAttributes(
            badv=tuple(raw.get("badv", ())),
            bapp=tuple(raw.get("bapp", ())),
            bcat=tuple(raw.get("bcat", ())),
            battr={imp: tuple(values) for imp, values in raw.get("battr", {}).items()},
            cattax=raw.get("cattax", 0),
        )
        if isinstance(raw, dict)
        else raw
        for bidder, raw in raw_context.items()
    }
    module = build({})
    miss = _response_outcome(module, case["config"], module_context, case["bids"])
    hit = _response_outcome(module, case["config"], module_context, case["bids"])
    fresh = _response_outcome(build({}), copy.deepcopy(case["config"]), module_context, case["bids"])
    assert hit == miss == fresh


def test_memo_is_bounded_and_cleared_when_full() -> None:
    cfg = parse(TEST_CONFIG)
    for index in range(MEMO_SIZE + 10):
        response_plan(cfg, f"bidder{index}", "banner")
        assert len(cfg.memo) <= MEMO_SIZE
    assert len(cfg.memo) == 10  # emptied at MEMO_SIZE, then filled again
    computed = []
    assert remembered(cfg, "k", lambda: computed.append(1) or "v") == "v"
    assert remembered(cfg, "k", lambda: computed.append(1) or "w") == "v"  # a hit computes nothing
    assert computed == [1]


def test_cleared_memo_gives_the_same_results() -> None:
    module = build({})
    request = {"imp": [{"id": "1", "banner": {}}, {"id": "2", "video": {}}]}
    before = _request_outcome(module, TEST_CONFIG, request)
    module._configs.get(TEST_CONFIG).memo.clear()
    assert _request_outcome(module, TEST_CONFIG, request) == before


def test_changed_account_config_is_not_served_from_the_old_memo() -> None:
    """The memo lives on the parsed config: a changed config (a new object) starts afresh."""
    module = build({})
    request = {"imp": [{"id": "1", "banner": {}}]}
    first = {"attributes": {"badv": {"blocked_adomain": ["a.com"]}, "btype": {"blocked_banner_type": [1]}}}
    second = {"attributes": {"badv": {"blocked_adomain": ["b.com"]}, "btype": {"blocked_banner_type": [2]}}}
    assert _request_outcome(module, first, request)[0]["badv"] == ["a.com"]
    changed = _request_outcome(module, second, request)[0]
    assert changed["badv"] == ["b.com"] and changed["imp"][0]["banner"] == {"btype": [2]}
    assert module._configs.get(first).memo is not module._configs.get(second).memo


def _top(steps: Any) -> list[tuple[Any, ...]]:
    return [(step.key, step.values, step.message, step.error) for step in steps]


@pytest.mark.parametrize(
    ("bidder", "media", "badv"),
    [
        ("appnexus", {"video"}, ("a.com", "b.com")),
        ("appnexus", {"banner"}, ("a.com", "b.com", "c.com")),
        ("rubicon", {"banner"}, ("a.com", "b.com", "c.com", "d.com", "e.com")),
        ("RUBICON", {"video"}, ("a.com", "b.com")),  # bidders compare case-insensitively, the first match wins
        ("other", {"video"}, ("a.com", "b.com", "c.com")),
    ],
)
def test_plans_by_bidder_and_media(bidder: str, media: set[str], badv: tuple[str, ...]) -> None:
    """Overrides by bidder and media type: each (bidder, media types) has its own plan, equal to one
    computed on a config never used before, whatever was asked before it."""
    cfg = parse(TEST_CONFIG)
    for other in ("appnexus", "rubicon", "other"):  # the other keys first: the other bidders, the other media
        if other != bidder:
            top_plan(cfg, other, frozenset(media))
            response_plan(cfg, other, "video")
    top_plan(cfg, bidder, frozenset({"banner", "video"}) - frozenset(media))
    plan = top_plan(cfg, bidder, frozenset(media))
    assert plan[0].values == badv
    assert _top(plan) == _top(top_plan(parse(TEST_CONFIG), bidder, frozenset(media)))
    assert top_plan(cfg, bidder, frozenset(media)) is plan  # remembered
    response_plan(cfg, bidder, "banner")
    assert response_plan(cfg, bidder, "video") == response_plan(parse(TEST_CONFIG), bidder, "video")


def test_remembered_mutation_applies_to_each_payload_alone() -> None:
    """A plan's mutation is shared by every request: it keeps nothing of the one it last changed."""
    cfg = parse(ENFORCED)
    step = request_plan(cfg).top_static[0]  # type: ignore[index]
    assert step.key == "badv" and step.mutation is not None
    first = step.mutation.apply(BidderRequestPayload({"id": "1"}, "a"))
    second = step.mutation.apply(BidderRequestPayload({"id": "2", "site": {}}, "b"))
    assert first.request == {"id": "1", "badv": ["bad.com"]} and first.bidder == "a"
    assert second.request == {"id": "2", "site": {}, "badv": ["bad.com"]} and second.bidder == "b"
    first.request["badv"].append("changed")
    assert step.mutation.apply(BidderRequestPayload({}, "c")).request == {"badv": ["bad.com"]}


_ATTRS = BlockingAttributes(badv=("bad.com",), bapp=("com.bad",), bcat=("IAB25",), battr={"i1": (9,)}, cattax=6)


@pytest.mark.parametrize(
    ("bid", "fails"),
    [
        ({"impid": "i1", "adomain": ["ok.com"], "cat": ["IAB1"], "bundle": "com.ok", "attr": [1]}, False),
        ({"impid": "i1", "adomain": ["ok.com", "bad.com"]}, True),
        ({"impid": "i1"}, True),  # no adomain: blocked as unknown
        ({"impid": "i1", "adomain": "bad.com"}, True),  # not a list: none, so unknown
        ({"impid": "i1", "adomain": ["ok.com"], "cat": ["IAB25"]}, True),
        ({"impid": "i1", "adomain": ["ok.com"], "cattax": 6}, False),
        ({"impid": "i1", "adomain": ["ok.com"], "cattax": 2}, True),
        ({"impid": "i1", "adomain": ["ok.com"], "cattax": 0}, False),
        ({"impid": "i1", "adomain": ["ok.com"], "bundle": "com.bad"}, True),
        ({"impid": "i1", "adomain": ["ok.com"], "bundle": 7}, False),  # not a string: ""
        ({"impid": "i1", "adomain": ["ok.com"], "attr": [9]}, True),
        ({"impid": "i2", "adomain": ["ok.com"], "attr": [9]}, False),  # nothing blocked for that imp
        ({"impid": "i1", "adomain": ["ok.com"], "attr": [9], "dealid": "d"}, False),  # the deal's exception
        ({"impid": "i1", "adomain": ["ok.com"], "attr": [9.0]}, True),  # compared as PBS-Go's values are
        ({"impid": "i1", "adomain": [["bad.com"]], "attr": [{"x": 9}]}, False),  # values no set can hold
        ({"impid": "i1", "adomain": [{}, "bad.com"]}, True),
    ],
)
def test_quick_look_agrees_with_the_checks(bid: dict[str, Any], fails: bool) -> None:
    cfg = parse(ENFORCED)
    plan = response_plan(cfg, "appnexus", "banner")
    assert plan.quick is not None
    failed = _failed_checks(plan.steps, _ATTRS, bid, bid["impid"], HookResult())
    assert (failed is not None) is fails
    look = glance(plan.quick, _ATTRS)
    assert look is not None
    values = [*bid.get("adomain", ()), *bid.get("attr", ())]
    one = [TypedBid(bid, "banner")]
    assert _passing(cfg, "appnexus", _ATTRS, one) is _passes(look, bid)  # its inlined copy agrees
    assert _passing(cfg, "appnexus", _ATTRS, [TypedBid({"impid": "i2", "adomain": ["ok.com"]}, "banner"), *one]) is (
        _passes(look, bid)
    )
    if _passes(look, bid):
        assert failed is None  # a bid the quick look lets through passes every check
    elif not bid.get("dealid") and not any(isinstance(value, list | dict) for value in values):
        assert failed is not None  # without a deal (or values no set holds) the quick look stops only bids that fail


# ENFORCED without block_unknown_adomain: no key is required, so a bid with only plain list keys
# (adomain, cat) is decided by all_pass's own loop, the rest by _passes
LOOSE = {"attributes": {**ENFORCED["attributes"], "badv": {"enforce_blocks": True, "blocked_adomain": ["bad.com"]}}}


@pytest.mark.parametrize(
    ("bid", "fails"),
    [
        ({"impid": "i1"}, False),  # no key looked at
        ({"impid": "i1", "adomain": ["ok.com"]}, False),
        ({"impid": "i1", "adomain": ["ok.com", "bad.com"]}, True),
        ({"impid": "i1", "adomain": []}, False),
        ({"impid": "i1", "adomain": "bad.com"}, False),  # not a list: no values
        ({"impid": "i1", "adomain": ["ok.com"], "cat": ["IAB1", "IAB25"]}, True),
        ({"impid": "i1", "cat": ["IAB25-3"]}, False),
        ({"impid": "i1", "adomain": [["bad.com"]]}, None),  # a value no set holds: left to the checks
        ({"impid": "i1", "adomain": ["ok.com"], "attr": [9]}, True),  # a key of _passes's
        ({"impid": "i1", "adomain": ["ok.com"], "dealid": "d"}, None),  # a deal: left to the checks
    ],
)
def test_plain_list_bids_are_decided_as_the_checks_decide(bid: dict[str, Any], fails: bool | None) -> None:
    cfg = parse(LOOSE)
    plan = response_plan(cfg, "appnexus", "banner")
    assert plan.quick is not None
    look = glance(plan.quick, _ATTRS)
    assert look is not None and dict(look.plain or ()) == look.lists and set(look.lists) == {"adomain", "cat"}
    assert look.others == look.keys - {"adomain", "cat"}
    failed = _failed_checks(plan.steps, _ATTRS, bid, bid["impid"], HookResult())
    passes = _passing(cfg, "appnexus", _ATTRS, [TypedBid(bid, "banner")])
    assert passes is _passes(look, bid)
    if fails is None:  # the glance cannot tell: the full checks decide
        assert not passes
    else:
        assert (failed is not None, passes) == (fails, not fails)


def test_bids_mutation_keeps_the_response_fields() -> None:
    bids = [{"id": "1", "adomain": ["bad.com"]}, {"id": "2", "adomain": ["ok.com"]}]
    kept, currency, fledge, _, _ = _response_outcome(build({}), ENFORCED, {"appnexus": _ATTRS}, bids)
    assert (kept, currency, fledge) == ([bids[1]], "EUR", [{"impid": "1"}])


def test_no_glance_where_a_set_cannot_decide() -> None:
    """An app blocked by the empty name (a bid without a bundle has it) or blocked values no set holds:
    every bid takes the full checks."""
    quick = response_plan(parse(ENFORCED), "appnexus", "banner").quick
    assert quick is not None
    assert glance(quick, _ATTRS._replace(bapp=("",))) is None
    assert glance(quick, _ATTRS._replace(badv=(["x"],))) is None
    assert glance(quick, _ATTRS) is not None


def test_glance_kept_across_auctions_takes_each_auctions_battr() -> None:
    """Auctions whose attributes share their lists share a glance's sets; battr by imp is each auction's own."""
    cfg = parse(ENFORCED)
    quick = response_plan(cfg, "appnexus", "banner").quick
    assert quick is not None
    other = _ATTRS._replace(battr={"i2": (9,)})
    first, second = _glance_of(cfg, quick, _ATTRS), _glance_of(cfg, quick, other)
    assert first is not None and second is not None
    assert second.checks is first.checks and (first.battr, second.battr) == (_ATTRS.battr, other.battr)
    assert _glance_of(cfg, quick, other) is second  # the same attributes: the same glance
    bid = {"impid": "i1", "adomain": ["ok.com"], "attr": [9]}
    assert (_passes(first, bid), _passes(second, bid)) == (False, True)
    assert _glance_of(cfg, quick, _ATTRS._replace(badv=("ok.com",))).checks is not first.checks  # lists changed


@pytest.mark.parametrize("bidder", ["appnexus", ""])
def test_all_kept_tags_are_the_full_checks_tags(bidder: str) -> None:
    """Every bid kept: the analytics tags written when read are the ones the full checks write."""
    cfg = parse(ENFORCED)
    bids = [TypedBid(bid={"impid": "i1", "adomain": ["ok.com"]}, bid_type="banner"),
            TypedBid(bid={"impid": 7, "adomain": ["ok.com"]}, bid_type="banner")]  # fmt: skip
    payload = RawBidderResponsePayload(BidderResponse(bids, "USD"), bidder)
    kept = handle_raw_bidder_response(cfg, payload, {bidder: _ATTRS})
    assert isinstance(kept, AllKept) and not kept.mutations and not kept.warnings
    assert kept.analytics_tags == _checked(cfg, bidder, _ATTRS, bids).analytics_tags
    assert kept.analytics_tags is kept.analytics_tags  # written once
    empty = handle_raw_bidder_response(cfg, RawBidderResponsePayload(BidderResponse([], "USD"), bidder), None)
    assert empty.analytics_tags == {"activities": [{"name": "enforce_blocking", "status": "success"}]}


def test_a_kept_look_is_the_attributes_own() -> None:
    """all_pass keeps its glance per bidder and bid type with the attributes it was made for: other
    attributes get their own, and the memo stays bounded."""
    cfg = parse(ENFORCED)
    bid = [TypedBid({"impid": "i1", "adomain": ["ok.com"], "attr": [9]}, "banner")]
    other = BlockingAttributes(badv=("bad.com",), bapp=(), bcat=(), battr={}, cattax=0)
    assert _passing(cfg, "appnexus", _ATTRS, bid) is False  # battr 9 blocked for i1
    assert _passing(cfg, "appnexus", other, bid) is True
    assert _passing(cfg, "appnexus", _ATTRS, bid) is False
    for n in range(MEMO_SIZE + 3):
        _passing(cfg, f"bidder{n}", other, bid)
        assert len(cfg.memo) <= MEMO_SIZE
