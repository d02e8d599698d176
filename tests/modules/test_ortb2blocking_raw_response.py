"""prebid.ortb2blocking at raw_bidder_response: PBS-Go's TestHandleRawBidderResponseHook cases
(data/ortb2blocking/raw_bidder_response_cases.json), blockAttribute, and both hooks in a row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.hooks.api import (
    ENDPOINT_AUCTION,
    BidderRequestPayload,
    HookFailure,
    InvocationContext,
    RawBidderResponsePayload,
)
from hbserver.modules.ortb2blocking import build
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from hbserver.modules.ortb2blocking.errors import BlockingFailure
from hbserver.modules.ortb2blocking.raw_bidder_response import block_attribute

DATA = Path(__file__).parent / "data" / "ortb2blocking"
CASES = json.loads((DATA / "raw_bidder_response_cases.json").read_text())


def _attributes(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw  # what PBS-Go's test puts there to break the cast
    return BlockingAttributes(
        badv=tuple(raw.get("badv", ())),
        bapp=tuple(raw.get("bapp", ())),
        bcat=tuple(raw.get("bcat", ())),
        battr={imp: tuple(values) for imp, values in raw.get("battr", {}).items()},
        cattax=raw.get("cattax", 0),
    )


def _ctx(config: Any, module_context: dict[str, Any]) -> InvocationContext:
    return InvocationContext(
        endpoint=ENDPOINT_AUCTION,
        account_id="acc",
        account_config=config,
        module_context=module_context,
        hook_impl_code="code",
    )


def _payload(bids: list[dict[str, Any]], bid_type: str = "") -> RawBidderResponsePayload:
    typed = [TypedBid(bid=bid, bid_type=bid_type) for bid in bids]
    return RawBidderResponsePayload(response=BidderResponse(bids=typed), bidder="appnexus")


@pytest.mark.parametrize("case", CASES, ids=[case["description"] for case in CASES])
def test_pbs_go_cases(case: dict[str, Any]) -> None:
    module_context = {bidder: _attributes(raw) for bidder, raw in (case["module_context"] or {}).items()}
    payload = _payload(case["bids"])
    module = build({})
    if case["error"]:
        with pytest.raises(HookFailure) as caught:
            module.handle_raw_bidder_response(_ctx(case["config"], module_context), payload)
        assert str(caught.value) == case["error"]
        assert isinstance(caught.value, BlockingFailure)
        assert caught.value.result.analytics_tags == (case["analytics_tags"] or {})
        return
    result = module.handle_raw_bidder_response(_ctx(case["config"], module_context), payload)
    assert result.analytics_tags == case["analytics_tags"]
    assert result.debug_messages == case["debug_messages"]
    assert (result.warnings, result.errors, result.reject, result.module_context) == ([], [], False, None)
    blocked = len(case["kept"]) != len(case["bids"])
    assert [(m.kind, m.key) for m in result.mutations] == ([("update", ("bids",))] if blocked else [])
    after = payload
    for mutation in result.mutations:
        after = mutation.apply(after)
    assert [typed.bid for typed in after.response.bids] == [case["bids"][index] for index in case["kept"]]
    assert len(payload.response.bids) == len(case["bids"])  # the hook's payload is never changed in place


@pytest.mark.parametrize(
    ("values", "blocked", "exceptions", "unknown", "expected"),
    [
        ([], ["a"], [], True, (True, None)),
        ([], ["a"], [], False, (False, None)),
        (["a"], [], [], True, (False, None)),
        (["a", "b", "c"], ["c", "a"], [], False, (True, ["a", "c"])),
        (["a", "b"], ["a", "b"], ["b"], False, (True, ["a"])),
        (["a"], ["a"], ["a"], True, (False, None)),
        (["a"], ["a", "a"], [], False, (True, ["a", "a"])),  # once per listing, as PBS-Go's loops
        (["A"], ["a"], [], False, (False, None)),  # values compare exactly
        ([1, 8], [8, 9], [], False, (True, [8])),
    ],
)
def test_block_attribute(
    values: list[Any], blocked: list[Any], exceptions: list[Any], unknown: bool, expected: tuple[bool, Any]
) -> None:
    assert block_attribute(values, blocked, exceptions, unknown) == expected


def test_warning_for_each_bid_when_several_overrides_match() -> None:
    config = {
        "attributes": {
            "badv": {
                "action_overrides": {
                    "enforce_blocks": [
                        {"conditions": {"media_types": ["banner"]}, "override": True},
                        {"conditions": {"bidders": ["APPNEXUS"]}, "override": False},
                    ]
                }
            }
        }
    }
    module_context = {"appnexus": BlockingAttributes(badv=("x.com",))}
    payload = _payload([{"id": "1", "adomain": ["x.com"]}, {"id": "2", "adomain": ["x.com"]}], bid_type="banner")
    result = build({}).handle_raw_bidder_response(_ctx(config, module_context), payload)
    assert (
        result.warnings
        == ["More than one condition matches request. Bidder: appnexus, request media types: , banner"] * 2
    )
    assert result.mutations == []  # the bidder's own override (false) wins


@pytest.mark.parametrize(
    ("bid", "kept"),
    [
        ({"id": "1", "adomain": ["a.com"]}, False),
        ({"id": "2", "adomain": ["a.com"], "dealid": "d1"}, True),  # the deal's own exception
        ({"id": "3", "adomain": ["z.com"], "dealid": "d1"}, True),  # with the default ones after it
        ({"id": "4", "adomain": ["z.com"], "dealid": "d2"}, True),  # another deal: the default ones only
        ({"id": "5", "adomain": ["a.com"], "dealid": "d2"}, False),
    ],
)
def test_deal_exceptions(bid: dict[str, Any], kept: bool) -> None:
    config = {
        "attributes": {
            "badv": {
                "enforce_blocks": True,
                "allowed_adomain_for_deals": ["z.com"],
                "action_overrides": {
                    "allowed_adomain_for_deals": [{"conditions": {"deal_ids": ["d1"]}, "override": ["a.com"]}]
                },
            }
        }
    }
    module_context = {"appnexus": BlockingAttributes(badv=("a.com", "z.com"))}
    result = build({}).handle_raw_bidder_response(_ctx(config, module_context), _payload([bid]))
    assert (result.mutations == []) is kept


def test_both_hooks_in_a_row() -> None:
    """What the bidder_request hook set for a bidder is what its raw_bidder_response hook checks."""
    config = {
        "attributes": {
            "badv": {"enforce_blocks": True, "blocked_adomain": ["bad.com"]},
            "bcat": {"enforce_blocks": True, "blocked_adv_cat": ["IAB25"], "category_taxonomy": 6},
            "battr": {"enforce_blocks": True, "blocked_banner_attr": [9]},
            "bapp": {"enforce_blocks": True, "blocked_app": ["com.bad"]},
        }
    }
    module = build({})
    request = {"imp": [{"id": "i1", "banner": {}}]}
    module_context: dict[str, Any] = {}
    first = module.handle_bidder_request(_ctx(config, module_context), BidderRequestPayload(request, "appnexus"))
    module_context.update(first.module_context or {})
    bids = [
        {
            "id": "ok",
            "impid": "i1",
            "adomain": ["good.com"],
            "cat": ["IAB1"],
            "cattax": 6,
            "attr": [1],
            "bundle": "com.ok",
        },
        {"id": "adv", "impid": "i1", "adomain": ["bad.com"]},
        {"id": "cat", "impid": "i1", "cat": ["IAB25"]},
        {"id": "tax", "impid": "i1", "cattax": 1},
        {"id": "attr", "impid": "i1", "attr": [9]},
        {"id": "app", "impid": "i1", "bundle": "com.bad"},
    ]
    payload = RawBidderResponsePayload(
        response=BidderResponse(bids=[TypedBid(bid=bid, bid_type="banner") for bid in bids]), bidder="appnexus"
    )
    result = module.handle_raw_bidder_response(_ctx(config, module_context), payload)
    after = result.mutations[0].apply(payload)
    assert [typed.bid["id"] for typed in after.response.bids] == ["ok"]
    assert result.debug_messages == [
        f"Bid {name} from bidder appnexus has been rejected, failed checks: {check}"
        for name, check in [("adv", "badv"), ("cat", "bcat"), ("tax", "cattax"), ("attr", "battr"), ("app", "bapp")]
    ]
    other = RawBidderResponsePayload(
        response=BidderResponse(bids=[TypedBid(bid=bids[1], bid_type="banner")]), bidder="rubicon"
    )
    assert module.handle_raw_bidder_response(_ctx(config, module_context), other).mutations == []  # nothing set for it
