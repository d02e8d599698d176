"""prebid.ortb2blocking at bidder_request: PBS-Go's TestHandleBidderRequestHook cases
(data/ortb2blocking/bidder_request_cases.json) and its hook_bidderrequest_test.go units."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.hooks.api import (
    ENDPOINT_AUCTION,
    BidderRequestPayload,
    ChangedBatch,
    HookFailure,
    HookResult,
    InvocationContext,
)
from hbserver.modules.ortb2blocking import bidder_request as bidder_request_module
from hbserver.modules.ortb2blocking import build
from hbserver.modules.ortb2blocking import plans as plans_module
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from hbserver.modules.ortb2blocking.config import ActionOverride, Conditions, Override, parse
from hbserver.modules.ortb2blocking.errors import BlockingFailure, OverrideError
from hbserver.modules.ortb2blocking.overrides import (
    first_or_default,
    get_ids,
    imp_media_types,
    intersects,
    media_types_text,
    request_media_types,
)

DATA = Path(__file__).parent / "data" / "ortb2blocking"
CASES = json.loads((DATA / "bidder_request_cases.json").read_text())
TEST_CONFIG = json.loads((DATA / "test_config.json").read_text())


def _ctx(config: Any) -> InvocationContext:
    return InvocationContext(
        endpoint=ENDPOINT_AUCTION, account_id="acc", account_config=config, module_context={}, hook_impl_code="code"
    )


def _attributes(raw: dict[str, Any]) -> BlockingAttributes:
    return BlockingAttributes(
        badv=tuple(raw.get("badv", ())),
        bapp=tuple(raw.get("bapp", ())),
        bcat=tuple(raw.get("bcat", ())),
        btype={imp: tuple(values) for imp, values in raw.get("btype", {}).items()},
        battr={imp: tuple(values) for imp, values in raw.get("battr", {}).items()},
        cattax=raw.get("cattax", 0),
    )


def changes(result: HookResult[Any]) -> list[tuple[tuple[str, ...], str]]:
    """Each (key, kind) the result's mutations make, as the trace lists them."""
    return [change for mutation in result.mutations for change in mutation.changes()]


def _run(config: Any, request: Any, bidder: str = "appnexus") -> tuple[HookResult[Any], BidderRequestPayload]:
    # the bidder's own top level and imps, as the auction's split gives them (mutations may set their keys)
    if isinstance(request, dict):
        imps = request.get("imp")
        request = {**request, "imp": [dict(imp) if isinstance(imp, dict) else imp for imp in imps]} if isinstance(
            imps, list) else dict(request)  # fmt: skip
    payload = BidderRequestPayload(request=request, bidder=bidder)
    result = build({}).handle_bidder_request(_ctx(config), payload)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    return result, payload


FAST_PATH_CASES: set[str] = set()  # the cases the static plan answered (filled by the "fast" runs)


@pytest.mark.parametrize("fast", [True, False], ids=["static plan", "general path"])
@pytest.mark.parametrize("case", CASES, ids=[case["description"] for case in CASES])
def test_pbs_go_cases(case: dict[str, Any], fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case through the hook as it runs (a config without overrides takes the static plan: one
    mutation for every key) and through the general path alone: both give PBS-Go's answer."""
    general, took_general = bidder_request_module._general_request, []

    def spied(*args: Any) -> Any:
        took_general.append(1)
        return general(*args)

    monkeypatch.setattr(bidder_request_module, "_general_request", spied)
    if not fast:
        monkeypatch.setattr(plans_module, "_static_request", lambda *args: None)
    config = TEST_CONFIG if case["config"] == "@test_config" else case["config"]
    original = copy.deepcopy(case["request"])
    if case["error"]:
        with pytest.raises(HookFailure) as caught:
            _run(config, case["request"])
        assert str(caught.value) == case["error"]
        return
    result, payload = _run(config, case["request"])
    if fast and not took_general:
        FAST_PATH_CASES.add(case["description"])
    assert payload.request == case["expected_request"]
    assert case["request"] == original  # what is not the bidder's own is never changed
    if case["empty_result"]:
        assert result == HookResult()
        return
    assert result.warnings == case["warnings"]
    assert [".".join(key) for key, _ in changes(result)] == case["mutations"]
    assert {kind for _, kind in changes(result)} <= {"update"}
    assert result.module_context == {"appnexus": _attributes(case["module_context"])}
    assert (result.errors, result.debug_messages, result.analytics_tags, result.reject) == ([], [], {}, False)


def test_the_static_plan_answers_the_cases_without_overrides() -> None:
    """The equality above means something only if the static plan answered a case (and none whose
    config has overrides)."""
    if not FAST_PATH_CASES:
        pytest.skip("runs after test_pbs_go_cases (the fast runs fill FAST_PATH_CASES)")
    with_overrides = {case["description"] for case in CASES if "action_overrides" in json.dumps(case["config"])}
    assert FAST_PATH_CASES and not FAST_PATH_CASES & with_overrides


# configs without overrides (the static plan) and requests around its edges: each pair must give
# what the general path gives
STATIC_CONFIGS = {
    "everything": {"attributes": {
        "badv": {"blocked_adomain": ["a.com"]}, "bapp": {"blocked_app": ["app"]},
        "bcat": {"blocked_adv_cat": ["IAB1"], "category_taxonomy": 6},
        "btype": {"blocked_banner_type": [1, 4]},
        "battr": {"blocked_banner_attr": [1, 8], "blocked_video_attr": [2], "blocked_audio_attr": [3]},
    }},
    "imps only": {"attributes": {"btype": {"blocked_banner_type": [2]}, "battr": {"blocked_video_attr": [9]}}},
    "top only, no taxonomy": {"attributes": {"badv": {"blocked_adomain": ["a.com", "b.com"]}}},
    "nothing": {"attributes": {}},
}  # fmt: skip
STATIC_REQUESTS = {
    "banner imps": {"imp": [{"id": "1", "banner": {"w": 1}}, {"id": "2", "banner": {}}]},
    "no media": {"imp": [{"id": "1"}, {"id": "2", "native": {}}]},
    "media with its own fields": {"imp": [{"id": "1", "banner": {"btype": [7], "battr": [5]}, "video": {"battr": []}}]},
    "every media": {"imp": [{"id": "1", "banner": {}, "video": {}, "audio": {}}]},
    "media not objects": {"imp": [{"id": "1", "banner": "x", "video": None}]},
    "shared imp id": {"imp": [{"id": "1", "banner": {}}, {"id": "1"}, {"banner": {}}, {"id": 5, "banner": {}}]},
    "own cattax": {"cattax": 2, "imp": [{"id": "1", "banner": {}}]},
    "zero cattax": {"cattax": 0, "imp": [{"id": "1", "banner": {}}]},
    "own badv (general path)": {"badv": ["x.com"], "imp": [{"id": "1", "banner": {}}]},
    "no imps": {},
    "imps not a list": {"imp": {"id": "1"}},
}  # fmt: skip


@pytest.mark.parametrize("request_name", STATIC_REQUESTS)
@pytest.mark.parametrize("config_name", STATIC_CONFIGS)
def test_static_plan_matches_the_general_path(config_name: str, request_name: str, monkeypatch: pytest.MonkeyPatch):
    config, request = STATIC_CONFIGS[config_name], STATIC_REQUESTS[request_name]
    general_path, took_general = bidder_request_module._general_request, []
    monkeypatch.setattr(
        bidder_request_module, "_general_request", lambda *args: took_general.append(1) or general_path(*args)
    )
    fast, fast_payload = _run(config, copy.deepcopy(request))
    answered = not took_general  # the static plan's
    assert answered is ("badv" not in request)
    monkeypatch.setattr(plans_module, "_static_request", lambda *args: None)
    general, general_payload = _run(config, copy.deepcopy(request))
    assert fast_payload.request == general_payload.request
    assert fast.module_context == general.module_context
    assert changes(fast) == changes(general)
    assert (fast.warnings, fast.errors, fast.reject) == (general.warnings, general.errors, general.reject)
    if answered:
        assert len(fast.mutations) <= 1  # the static plan's single mutation


def test_failure_keeps_the_warnings_gathered_before_it() -> None:
    config = {
        "attributes": {
            "badv": {
                "action_overrides": {
                    "blocked_adomain": [{"conditions": {"bidders": ["appnexus"]}, "override": ["a"]}] * 2
                }
            },
            "bcat": {"action_overrides": {"blocked_adv_cat": [{"conditions": {}}]}},
        }
    }
    with pytest.raises(BlockingFailure) as caught:
        _run(config, {"imp": [{"id": "1", "banner": {}}]})
    assert caught.value.result.warnings == [
        "More than one condition matches request. Bidder: appnexus, request media types: , banner"
    ]


def test_config_of_wrong_type_is_an_execution_failure() -> None:
    with pytest.raises(ValueError, match=r"failed to parse config: attributes\.badv\.enforce_blocks"):
        _run({"attributes": {"badv": {"enforce_blocks": "on"}}}, {"imp": []})


def test_shared_nested_objects_are_copied() -> None:
    banner: dict[str, Any] = {"w": 300}
    video: dict[str, Any] = {"w": 640}
    request = {"imp": [{"id": "1", "banner": banner, "video": video}], "site": {"page": "p"}}
    config = {
        "attributes": {
            "badv": {"blocked_adomain": ["a.com"]},
            "btype": {"blocked_banner_type": [1]},
            "battr": {"blocked_banner_attr": [2], "blocked_video_attr": [3]},
        }
    }
    _, payload = _run(config, request)
    assert payload.request["imp"][0]["banner"] == {"w": 300, "btype": [1], "battr": [2]}
    assert payload.request["imp"][0]["video"] == {"w": 640, "battr": [3]}
    assert banner == {"w": 300} and video == {"w": 640} and "badv" not in request
    assert payload.request["site"] is request["site"]  # what is not changed stays shared


@pytest.mark.parametrize(
    ("imps", "expected", "mutated"),
    [
        # TestUpdateBAttr_DoesNotCreateMediaTypeObjects
        (
            [{"id": "imp-video-only", "video": {"w": 640, "h": 480}}, {"id": "imp-audio-only", "audio": {}}],
            [
                {"id": "imp-video-only", "video": {"w": 640, "h": 480, "battr": [4, 5, 6]}},
                {"id": "imp-audio-only", "audio": {"battr": [7, 8, 9]}},
            ],
            ["video", "audio"],
        ),
        # TestUpdateBAttr_AppliesOnlyToExistingMediaTypes (with audio blocked too)
        (
            [{"id": "imp-banner-only", "banner": {"w": 300, "h": 250}}, {"id": "imp-mixed", "banner": {}, "video": {}}],
            [
                {"id": "imp-banner-only", "banner": {"w": 300, "h": 250, "battr": [1, 2, 3]}},
                {"id": "imp-mixed", "banner": {"battr": [1, 2, 3]}, "video": {"battr": [4, 5, 6]}},
            ],
            ["banner", "video"],
        ),
    ],
)
def test_battr_goes_only_on_media_objects_present(
    imps: list[dict[str, Any]], expected: list[dict[str, Any]], mutated: list[str]
) -> None:
    config = {
        "attributes": {
            "battr": {
                "blocked_banner_attr": [1, 2, 3],
                "blocked_video_attr": [4, 5, 6],
                "blocked_audio_attr": [7, 8, 9],
            }
        }
    }
    result, payload = _run(config, {"imp": imps}, bidder="test-bidder")
    assert payload.request["imp"] == expected
    media_of_mutations = [key[2] for key, _ in changes(result) if key[1] == "imp"]
    assert media_of_mutations == mutated
    # PBS-Go remembers a value for every imp, media object or not, the audio one written last
    # (findImpressionOverrides looks at every imp; banner's, video's and audio's share one map)
    assert result.module_context["test-bidder"].battr == {imp["id"]: (7, 8, 9) for imp in imps}  # type: ignore[index]


def test_battr_mutation_per_media_type() -> None:
    config = {
        "attributes": {"battr": {"blocked_banner_attr": [1], "blocked_video_attr": [4], "blocked_audio_attr": [7]}}
    }
    result, _ = _run(config, {"imp": [{"id": "v", "video": {}}, {"id": "a", "audio": {}}]})
    assert [key for key, _ in changes(result)] == [
        ("bidrequest", "imp", "video", "battr"),
        ("bidrequest", "imp", "audio", "battr"),
        ("bidrequest", "cattax"),
    ]


def test_btype_does_not_create_banner_objects() -> None:
    """TestUpdateBType_DoesNotCreateBannerObjects."""
    config = {"attributes": {"btype": {"blocked_banner_type": [1, 2, 3]}}}
    imps = [{"id": "imp-video-only", "video": {"w": 640}}, {"id": "imp-with-banner", "banner": {}}]
    result, payload = _run(config, {"imp": imps}, bidder="test-bidder")
    assert payload.request["imp"] == [
        {"id": "imp-video-only", "video": {"w": 640}},
        {"id": "imp-with-banner", "banner": {"btype": [1, 2, 3]}},
    ]
    assert result.module_context["test-bidder"].btype == {  # type: ignore[index]
        "imp-video-only": (1, 2, 3),
        "imp-with-banner": (1, 2, 3),
    }


def test_cattax_zero_is_left_out() -> None:
    result, payload = _run({}, {"imp": [], "cattax": 0})
    assert [key for key, _ in changes(result)] == [("bidrequest", "cattax")]
    assert payload.request == {"imp": []}


def test_media_types_of_request_and_imp() -> None:
    """TestMediaTypesFrom, TestMediaTypesFromImp."""
    imps = [{"id": "imp1", "banner": {}, "video": {}}, {"id": "imp2", "audio": {}}]
    assert request_media_types(imps) == {"banner", "video", "audio"}
    assert imp_media_types({"banner": {}}) == {"banner"}
    assert imp_media_types({"native": {}}) == {"native"}
    assert imp_media_types({"banner": {}, "video": {}, "audio": {}}) == {"banner", "video", "audio"}
    assert imp_media_types({"banner": None}) == frozenset()
    assert imp_media_types({}) == frozenset()


@pytest.mark.parametrize(
    ("media_types", "text"),
    [
        ({"video", "banner", "audio"}, "audio, banner, video"),
        (set(), ""),
        ({"audio", "banner", "native", "video"}, "audio, banner, native, video"),
        ({"banner"}, ", banner"),  # PBS-Go's separator goes before every type but audio
        ({"native", "video"}, ", native, video"),
    ],
)
def test_media_types_text(media_types: set[str], text: str) -> None:
    assert media_types_text(frozenset(media_types)) == text


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [(["banner"], True), (["BANNER"], True), (["audio", "video"], True), (["audio", "native"], False), ([], False)],
)
def test_intersects(wanted: list[str], expected: bool) -> None:
    assert intersects(frozenset({"banner", "video"}), wanted) is expected


@pytest.mark.parametrize(
    ("conditions", "valid"),
    [
        (Conditions(bidders=("bidder1",)), True),
        (Conditions(media_types=("banner",)), True),
        (Conditions(bidders=("bidder1",), media_types=("banner",)), True),
        (Conditions(), False),
    ],
)
def test_conditions_need_bidders_or_media_types(conditions: Conditions, valid: bool) -> None:
    actions = (ActionOverride(conditions, Override(ids=(1,))),)
    if valid:
        first_or_default("bidder1", frozenset({"banner"}), get_ids, actions, ())
    else:
        with pytest.raises(OverrideError, match="bidders and media_types absent from conditions"):
            first_or_default("bidder1", frozenset({"banner"}), get_ids, actions, ())


@pytest.mark.parametrize(
    ("overrides", "bidder", "expected", "warned"),
    [
        # a bidder's own override wins over one for every bidder, whatever their order
        ([({"media_types": ["banner"]}, [1]), ({"bidders": ["B"]}, [2])], "b", (2,), True),
        ([({"bidders": ["x"]}, [1])], "b", (9,), False),  # none matches: the default
        ([({"bidders": []}, [1])], "b", (9,), False),  # an empty list matches no bidder
        ([({"media_types": []}, [1])], "b", (9,), False),
        ([({"media_types": ["VIDEO", "banner"]}, [1]), ({"media_types": ["banner"]}, [2])], "b", (1,), True),
    ],
)
def test_first_or_default(
    overrides: list[tuple[dict[str, Any], list[int]]], bidder: str, expected: tuple[int, ...], warned: bool
) -> None:
    raw = [{"conditions": conditions, "override": values} for conditions, values in overrides]
    cfg = parse({"attributes": {"btype": {"action_overrides": {"blocked_banner_type": raw}}}})
    value, message = first_or_default(
        bidder, frozenset({"banner"}), get_ids, cfg.overrides_of("btype.blocked_banner_type"), (9,)
    )
    assert value == expected
    assert bool(message) is warned


def _bidder_copies(request: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Each bidder's request as the split makes it: its own top level, imp list and imps, the rest shared."""
    imps = request.get("imp")
    return [
        {**request, "imp": [dict(imp) if isinstance(imp, dict) else imp for imp in imps]} if isinstance(imps, list)
        else dict(request)
        for _ in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize("request_name", STATIC_REQUESTS)
@pytest.mark.parametrize("config_name", STATIC_CONFIGS)
def test_an_auctions_bidders_share_the_static_answer(config_name: str, request_name: str) -> None:
    """An auction's bidders (one module context, imps sharing their media objects) get what each would
    get alone, and nothing shared is changed; a later auction with other imps is not answered from it."""
    config, request = STATIC_CONFIGS[config_name], copy.deepcopy(STATIC_REQUESTS[request_name])
    original = copy.deepcopy(request)
    module, context = build({}), {}
    for bidder, own in zip(("a", "b", "c"), _bidder_copies(request, 3), strict=True):
        payload = BidderRequestPayload(own, bidder)
        result = module.handle_bidder_request(InvocationContext(ENDPOINT_AUCTION, "acc", config, context, "c"), payload)
        for mutation in result.mutations:
            payload = mutation.apply(payload)
        alone, alone_payload = _run(config, copy.deepcopy(original), bidder)
        assert payload.request == alone_payload.request
        assert (result.module_context, changes(result), result.warnings) == (
            alone.module_context, changes(alone), alone.warnings)  # fmt: skip
        context.update(result.module_context or {})
    assert request == original
    other = {**copy.deepcopy(original), "imp": [{"id": "9", "banner": {}}]}
    payload = BidderRequestPayload(other, "a")
    result = module.handle_bidder_request(InvocationContext(ENDPOINT_AUCTION, "acc", config, context, "c"), payload)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    assert payload.request == _run(config, copy.deepcopy(other), "a")[1].request


def test_static_mutation_on_imps_changed_before_it_applies() -> None:
    """Imps another mutation changed after the hook answered: its fields go on them by imp id."""
    config = STATIC_CONFIGS["everything"]
    request = {"imp": [{"id": "1", "banner": {"w": 1}}, {"id": "2", "video": {}}]}
    payload = BidderRequestPayload(copy.deepcopy(request), "a")
    result = build({}).handle_bidder_request(InvocationContext(ENDPOINT_AUCTION, "acc", config, {}, "c"), payload)
    payload.request["imp"] = [{"id": "2", "video": {"h": 2}}, {"id": "1", "banner": {"w": 3}}]
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    assert payload.request["imp"] == [
        {"id": "2", "video": {"h": 2, "battr": [2]}},
        {"id": "1", "banner": {"w": 3, "btype": [1, 4], "battr": [1, 8]}},
    ]


def test_the_static_answer_is_made_once_per_auction(monkeypatch: pytest.MonkeyPatch) -> None:
    made = bidder_request_module._static_answer
    calls: list[int] = []
    monkeypatch.setattr(bidder_request_module, "_static_answer", lambda *args: calls.append(1) or made(*args))
    config, module = STATIC_CONFIGS["everything"], build({})
    for context in ({}, {}):  # two auctions
        for own in _bidder_copies(copy.deepcopy(STATIC_REQUESTS["banner imps"]), 3):
            ctx = InvocationContext(ENDPOINT_AUCTION, "acc", config, context, "c")
            module.handle_bidder_request(ctx, BidderRequestPayload(own, "a"))
    assert calls == [1]  # the second auction's imps are equal: it takes the first's decisions


@pytest.mark.parametrize(
    "second",
    [
        {"imp": [{"id": "1", "banner": {"w": 1.0}}, {"id": "2", "banner": {}}]},  # equal, of another type
        {"imp": [{"id": "1", "banner": {"w": True}}, {"id": "2", "banner": {}}]},
        {"imp": [{"id": "1", "banner": {"w": 1}}, {"id": "2", "banner": {"btype": [3]}}]},  # not equal
        {"imp": [{"id": "1", "banner": {"w": 1}}, {"id": "1", "banner": {}}]},  # a shared id
        {"cattax": 3, "imp": [{"id": "1", "banner": {"w": 1}}, {"id": "2", "banner": {}}]},
    ],
)  # fmt: skip
def test_an_auction_of_equal_imps_gets_its_own_media_objects(second: dict[str, Any]) -> None:
    """Each auction's bidders get what a fresh module gives them, their changed media objects made
    from their own (1.0 stays 1.0 where the auction before had 1)."""
    config, module = STATIC_CONFIGS["everything"], build({})
    for request in (STATIC_REQUESTS["banner imps"], second, STATIC_REQUESTS["banner imps"]):
        context: dict[str, Any] = {}
        for own in _bidder_copies(copy.deepcopy(request), 2):
            payload = BidderRequestPayload(own, "a")
            result = module.handle_bidder_request(InvocationContext(ENDPOINT_AUCTION, "acc", config, context, "c"),
                                                  payload)  # fmt: skip
            context.update(result.module_context or {})
            for mutation in result.mutations:
                payload = mutation.apply(payload)
            expected = _run(config, copy.deepcopy(request), "a")[1].request
            assert json.dumps(payload.request) == json.dumps(expected)
            assert [m.changes() for m in result.mutations] == [
                m.changes() for m in _run(config, copy.deepcopy(request), "a")[0].mutations
            ]


@pytest.mark.parametrize("order", [("batch", "each"), ("each", "batch"), ("batch", "batch", "each")])
def test_auctions_through_the_batch_and_the_hook_alike_get_their_own_changes(order: tuple[str, ...]) -> None:
    """An auction's answer made from the last one's decisions carries no mutation of its own until a
    per-call hook asks for one; whichever way each auction comes, its bidders get what a fresh module
    gives them (1.0 stays 1.0 where the auction before had 1)."""
    config, module = STATIC_CONFIGS["everything"], build({})
    requests = [{"imp": [{"id": "1", "banner": {"w": 1 if n % 2 else 1.0}}, {"id": "2", "banner": {}}]}
                for n in range(len(order))]  # fmt: skip
    for index, (way, request) in enumerate(zip(order, requests, strict=True)):
        context: dict[str, Any] = {}
        ctx = InvocationContext(ENDPOINT_AUCTION, "acc", config, context, "c")
        payloads = [BidderRequestPayload(own, "a") for own in _bidder_copies(copy.deepcopy(request), 2)]
        applied = False
        if way == "batch":
            results = module.handle_bidder_request_batch(ctx, payloads)
            if isinstance(results, ChangedBatch):  # an auction after the first: its changes applied at once
                assert index > 0  # only where an auction before left its decisions
                results.apply(payloads)
                assert results.module_context == {"a": _run(config, copy.deepcopy(request), "a")[0].module_context["a"]}
                results, applied = [results.result_of(payload) for payload in payloads], True
        else:
            results = [module.handle_bidder_request(ctx, payload) for payload in payloads]
        expected = _run(config, copy.deepcopy(request), "a")
        for payload, result in zip(payloads, results, strict=True):
            assert isinstance(result, HookResult)
            if not applied:
                for mutation in result.mutations:
                    payload = mutation.apply(payload)
            assert json.dumps(payload.request) == json.dumps(expected[1].request)
            assert [m.changes() for m in result.mutations] == [m.changes() for m in expected[0].mutations]
            context.update(result.module_context or {})
