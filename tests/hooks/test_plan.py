"""Execution plans (hbserver/hooks/plan.py) and the runtime that builds modules and compiles and
merges plans (hbserver/hooks/runtime.py): PBS-Go's hooks/plan.go and config shapes, PBS-Java's
spellings and A/B tests (HookStageExecutor.abTests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from hbserver.config import AccountHooks
from hbserver.hooks import runtime as runtime_module
from hbserver.hooks.api import ENDPOINT_AMP, ENDPOINT_AUCTION, HookResult, InvocationContext, Stage
from hbserver.hooks.plan import MAX_GROUP_TIMEOUT_MS, AbTest, Group, HookRef, parse_plan
from hbserver.hooks.runtime import HookRuntime, account_hooks_problems, module_section

AUCTION = ENDPOINT_AUCTION
AMP = ENDPOINT_AMP


# -- test modules (built through HookRuntime's extra_builders) -----------------------------------


class StubModule:
    """A module with hooks at bidder_request and entrypoint only."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def handle_entrypoint(self, context: InvocationContext, payload: Any) -> HookResult[Any]:
        return HookResult()

    def handle_bidder_request(self, context: InvocationContext, payload: Any) -> HookResult[Any]:
        return HookResult()


def build_stub(config: Mapping[str, Any]) -> StubModule:
    if config.get("bad"):
        raise ValueError("bad: must be false")
    return StubModule(config)


BUILDERS = {code: "tests.hooks.test_plan:build_stub" for code in ("acme.one", "acme.two", "acme.off", "pb-stub")}


def hook(module: str, code: str = "h") -> dict[str, str]:
    return {"module_code": module, "hook_impl_code": code}


def stage_plan(stage: str, *groups: list[dict[str, str]], endpoint: str = AUCTION, timeout: int = 10) -> dict:
    return {"endpoints": {endpoint: {"stages": {stage: {"groups": [
        {"timeout": timeout, "hook_sequence": list(seq)} for seq in groups]}}}}}  # fmt: skip


def parsed(raw: Any) -> tuple[Any, list[str]]:
    problems: list[str] = []
    return parse_plan(raw, "p", problems), problems


# -- plan.py: shapes and spellings ---------------------------------------------------------------


GO_PLAN = {
    "endpoints": {
        "/openrtb2/auction": {
            "stages": {
                "entrypoint": {"groups": [{"timeout": 5, "hook_sequence": [hook("foobar", "foo")]}]},
                "bidder_request": {
                    "groups": [
                        {"timeout": 10, "hook_sequence": [hook("foobar", "foo"), hook("foobaz", "baz")]},
                        {"timeout": 20, "hook_sequence": [hook("foobar", "bar")]},
                    ]
                },
            }
        },
        "/openrtb2/amp": {
            "stages": {"raw_auction_request": {"groups": [{"timeout": 5, "hook_sequence": [hook("foobar", "amp")]}]}}
        },
    }
}

JAVA_PLAN = {
    "abtests": [],
    "endpoints": {
        "POST /openrtb2/auction": {
            "stages": {
                "entrypoint": {
                    "groups": [{"timeout": 5, "hook-sequence": [{"module-code": "foobar", "hook-impl-code": "foo"}]}]
                },
                "bidder-request": {
                    "groups": [
                        {
                            "timeout": 10,
                            "hook-sequence": [
                                {"module-code": "foobar", "hook-impl-code": "foo"},
                                {"module-code": "foobaz", "hook-impl-code": "baz"},
                            ],
                        },
                        {"timeout": 20, "hook-sequence": [{"module-code": "foobar", "hook-impl-code": "bar"}]},
                    ]
                },
                "processed-bidder-response": {
                    "groups": [{"timeout": 5, "hook-sequence": [{"module-code": "foobar", "hook-impl-code": "pbr"}]}]
                },
            }
        },
        "GET /openrtb2/amp": {
            "stages": {
                "raw-auction-request": {
                    "groups": [{"timeout": 5, "hook-sequence": [{"module-code": "foobar", "hook-impl-code": "amp"}]}]
                }
            }
        },
        "POST /openrtb2/video": {
            "stages": {
                "entrypoint": {
                    "groups": [{"timeout": 5, "hook-sequence": [{"module-code": "foobar", "hook-impl-code": "video"}]}]
                }
            }
        },
    },
}

EXPECTED_STAGES = {
    (AUCTION, Stage.ENTRYPOINT): (Group(5, (HookRef("foobar", "foo"),)),),
    (AUCTION, Stage.BIDDER_REQUEST): (
        Group(10, (HookRef("foobar", "foo"), HookRef("foobaz", "baz"))),
        Group(20, (HookRef("foobar", "bar"),)),
    ),
    (AMP, Stage.RAW_AUCTION_REQUEST): (Group(5, (HookRef("foobar", "amp"),)),),
}


@pytest.mark.parametrize("raw", [GO_PLAN, JAVA_PLAN], ids=["pbs-go", "pbs-java"])
def test_plan_shapes_parse_to_the_same_stages(raw):
    plan, problems = parsed(raw)
    assert problems == []
    assert dict(plan.stages) == EXPECTED_STAGES
    assert plan.has_endpoints
    assert plan.groups(AUCTION, Stage.BIDDER_REQUEST)[1].hooks == (HookRef("foobar", "bar"),)
    assert plan.groups(AMP, Stage.EXITPOINT) == ()


@pytest.mark.parametrize(
    ("raw", "has_endpoints", "abtests"),
    [
        (None, False, None),
        ({}, False, None),
        ({"endpoints": None}, False, None),
        ({"endpoints": {}}, True, None),  # PBS-Go: Endpoints != nil, even empty
        ({"abtests": []}, False, ()),
        ({"endpoints": {}, "abtests": []}, True, ()),
        (stage_plan("entrypoint", [hook("a", "b")]), True, None),
        # only the video endpoint: accepted and ignored, still "names endpoints"
        ({"endpoints": {"/openrtb2/video": {"stages": {}}}}, True, None),
    ],
)
def test_has_endpoints_and_abtests_none_vs_empty(raw, has_endpoints, abtests):
    plan, problems = parsed(raw)
    assert problems == []
    assert plan.has_endpoints is has_endpoints
    assert plan.abtests == abtests


@pytest.mark.parametrize(
    "raw",
    [
        {
            "endpoints": {
                "/openrtb2/video": {
                    "stages": {"entrypoint": {"groups": [{"timeout": 5, "hook_sequence": [hook("a", "b")]}]}}
                }
            }
        },
        {"endpoints": {"POST /openrtb2/video": "not even a mapping"}},
        stage_plan("processed_bidder_response", [hook("a", "b")]),
        stage_plan("processed-bidder-response", [hook("a", "b")]),
    ],
    ids=["video", "video-with-method-bad-body", "java-stage", "java-stage-kebab"],
)
def test_video_endpoint_and_java_only_stage_accepted_and_ignored(raw):
    plan, problems = parsed(raw)
    assert problems == []
    assert dict(plan.stages) == {}


BAD_TIMEOUTS = [-1, MAX_GROUP_TIMEOUT_MS + 1, 1.5, "10", True, None]
TIMEOUT_PROBLEM = f"must be a whole number of ms from 0 to {MAX_GROUP_TIMEOUT_MS}"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("plan", "p: must be a mapping"),
        ([], "p: must be a mapping"),
        ({"endpoints": []}, "p.endpoints: must be a mapping"),
        (
            {"endpoints": {"/openrtb2/nope": {"stages": {}}}},
            "p.endpoints./openrtb2/nope: unknown endpoint (hooks run at /openrtb2/amp, /openrtb2/auction)",
        ),
        ({"endpoints": {"/openrtb2/auction": {}}}, "p.endpoints./openrtb2/auction.stages: must be a mapping"),
        ({"endpoints": {"/openrtb2/auction": []}}, "p.endpoints./openrtb2/auction.stages: must be a mapping"),
        (
            {"endpoints": {"/openrtb2/auction": {"stages": {"bogus": {"groups": []}}}}},
            "p.endpoints./openrtb2/auction.stages.bogus: unknown stage (one of entrypoint, raw_auction_request, "
            "processed_auction_request, bidder_request, raw_bidder_response, all_processed_bid_responses, "
            "auction_response, exitpoint)",
        ),
        (
            {"endpoints": {"/openrtb2/auction": {"stages": {"entrypoint": {}}}}},
            "p.endpoints./openrtb2/auction.stages.entrypoint.groups: must be a list",
        ),
        (
            {"endpoints": {"/openrtb2/auction": {"stages": {"entrypoint": {"groups": ["x"]}}}}},
            "p.endpoints./openrtb2/auction.stages.entrypoint.groups[0]: must be a mapping",
        ),
        (
            {"endpoints": {"/openrtb2/auction": {"stages": {"entrypoint": {"groups": [{"timeout": 5}]}}}}},
            "p.endpoints./openrtb2/auction.stages.entrypoint.groups[0].hook_sequence: must be a list",
        ),
        *[
            (
                stage_plan("entrypoint", [hook("a", "b")], timeout=bad),
                f"p.endpoints./openrtb2/auction.stages.entrypoint.groups[0].timeout: {TIMEOUT_PROBLEM}",
            )
            for bad in BAD_TIMEOUTS
        ],
        *[
            (
                stage_plan("entrypoint", [entry]),
                "p.endpoints./openrtb2/auction.stages.entrypoint.groups[0].hook_sequence[0]: needs module_code and "
                "hook_impl_code (strings)",
            )
            for entry in (
                {"module_code": "a"},
                {"hook_impl_code": "b"},
                {"module_code": "", "hook_impl_code": "b"},
                {"module_code": "a", "hook_impl_code": 1},
                "a.b",
            )
        ],
        ({"abtests": {}}, "p.abtests: must be a list"),
        ({"abtests": ["x"]}, "p.abtests[0]: needs module_code (a string)"),
        ({"abtests": [{"enabled": True}]}, "p.abtests[0]: needs module_code (a string)"),
        *[
            (
                {"abtests": [{"module_code": "m", "percent_active": bad}]},
                "p.abtests[0].percent_active: must be a whole number from 0 to 100",
            )
            for bad in (-1, 101, 50.5, "50", True)
        ],
        *[
            (
                {"abtests": [{"module_code": "m", "accounts": bad}]},
                "p.abtests[0].accounts: must be a list of account ids",
            )
            for bad in ("acc", [1], {"a": 1})
        ],
    ],
)
def test_problem_texts(raw, problem):
    plan, problems = parsed(raw)
    assert problems == [problem]
    assert dict(plan.stages) == {}


def test_every_problem_is_reported_and_good_parts_kept():
    raw = {
        "endpoints": {
            "/openrtb2/nope": {"stages": {}},
            "/openrtb2/auction": {
                "stages": {
                    "bogus": {"groups": []},
                    "entrypoint": {
                        "groups": [
                            {"timeout": -1, "hook_sequence": [hook("a", "bad")]},
                            {"timeout": 5, "hook_sequence": [{"module_code": "a"}, hook("a", "good")]},
                        ]
                    },
                }
            },
        },
        "abtests": [{"module_code": "m", "percent_active": 200}, {"module_code": "n", "enabled": True}],
    }
    plan, problems = parsed(raw)
    assert len(problems) == 5
    assert dict(plan.stages) == {(AUCTION, Stage.ENTRYPOINT): (Group(5, (HookRef("a", "good"),)),)}
    assert plan.abtests == (AbTest("n", frozenset(), 100, True),)


def test_empty_groups_and_sequences_are_dropped():
    plan, problems = parsed(
        {
            "endpoints": {
                AUCTION: {
                    "stages": {
                        "entrypoint": {"groups": []},
                        "exitpoint": {"groups": [{"timeout": 5, "hook_sequence": []}]},
                    }
                }
            }
        }
    )
    assert problems == []
    assert dict(plan.stages) == {}
    assert plan.has_endpoints


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"module_code": "m", "enabled": True}, (AbTest("m", frozenset(), 100, True),)),
        (
            {
                "module-code": "m",
                "enabled": True,
                "percent-active": 0,
                "log-analytics-tag": False,
                "accounts": ["a", "b"],
            },
            (AbTest("m", frozenset({"a", "b"}), 0, False),),
        ),
        (
            {"module_code": "m", "enabled": True, "percent_active": 100, "log_analytics_tag": True, "accounts": []},
            (AbTest("m", frozenset(), 100, True),),
        ),
        ({"module_code": "m", "enabled": True, "accounts": None}, (AbTest("m", frozenset(), 100, True),)),
        ({"module_code": "m", "enabled": True, "log_analytics_tag": None}, (AbTest("m", frozenset(), 100, True),)),
        # PBS-Java keeps only the enabled tests
        ({"module_code": "m"}, ()),
        ({"module_code": "m", "enabled": False}, ()),
        ({"module_code": "m", "enabled": "true"}, ()),
    ],
)
def test_abtests(entry, expected):
    plan, problems = parsed({"abtests": [entry]})
    assert problems == []
    assert plan.abtests == expected


def test_account_hooks_problems():
    assert account_hooks_problems(AccountHooks()) == []
    assert account_hooks_problems(AccountHooks(execution_plan=GO_PLAN)) == []
    assert account_hooks_problems(AccountHooks(execution_plan={"endpoints": {"/x": {}}})) == [
        "hooks.execution_plan.endpoints./x: unknown endpoint (hooks run at /openrtb2/amp, /openrtb2/auction)"
    ]


# -- runtime.py: modules built -------------------------------------------------------------------


def runtime(modules: Mapping[str, Any], host: Any = None, default: Any = None, enabled: bool = True) -> HookRuntime:
    return HookRuntime(enabled, modules, host, default, BUILDERS)


@pytest.mark.parametrize(
    ("modules", "built"),
    [
        ({"acme": {"one": {"enabled": True, "x": 1}}}, {"acme.one": {"enabled": True, "x": 1}}),
        ({"pb-stub": {"enabled": True, "y": 2}}, {"pb-stub": {"enabled": True, "y": 2}}),
        ({"acme": {"one": {"enabled": True}, "two": {"enabled": False}, "off": {}}}, {"acme.one": {"enabled": True}}),
        ({"acme": {"one": {"enabled": "true"}}}, {}),
        ({"acme": {"one": {"x": 1}}}, {}),
        ({"pb-stub": {"enabled": False}}, {}),
        ({"acme": "not a section", "pb-stub": None}, {}),
    ],
)
def test_modules_built_only_when_enabled(modules, built):
    rt = runtime(modules)
    assert {code: module.config for code, module in rt.modules.items()} == built


def test_no_module_built_when_hooks_disabled():
    rt = runtime({"acme": {"one": {"enabled": True}}}, enabled=False)
    assert rt.modules == {}
    assert rt.account_plans("a", AccountHooks()) is None


@pytest.mark.parametrize(
    ("modules", "host", "message"),
    [
        ({"acme": {"nope": {"enabled": True}}}, None, "hooks.modules: unknown module 'acme.nope'"),
        ({"pb-nope": {"enabled": True}}, None, "hooks.modules: unknown module 'pb-nope'"),
        ({"acme": {"one": {"enabled": True, "bad": True}}}, None, "hooks.modules.acme.one: bad: must be false"),
        ({"pb-stub": {"enabled": True, "bad": True}}, None, "hooks.modules.pb-stub: bad: must be false"),
        ({}, "{not json", "hooks.host_execution_plan: not valid JSON ("),
        (
            {},
            {"endpoints": {"/x": {}}},
            "hooks.host_execution_plan.endpoints./x: unknown endpoint (hooks run at /openrtb2/amp, /openrtb2/auction)",
        ),
    ],
)
def test_runtime_problems(modules, host, message):
    with pytest.raises(ValueError) as raised:
        runtime(modules, host)
    assert str(raised.value).startswith(message)


def test_runtime_reports_every_problem_at_once():
    with pytest.raises(ValueError) as raised:
        runtime({"acme": {"nope": {"enabled": True}, "one": {"enabled": True, "bad": True}}},
                default={"endpoints": {"/x": {}}})  # fmt: skip
    assert str(raised.value).split("; ") == [
        "hooks.default_account_execution_plan.endpoints./x: unknown endpoint (hooks run at /openrtb2/amp, "
        "/openrtb2/auction)",
        "hooks.modules: unknown module 'acme.nope'",
        "hooks.modules.acme.one: bad: must be false",
    ]


@pytest.mark.parametrize("as_text", [False, True], ids=["mapping", "json-text"])
def test_host_plan_as_mapping_or_json_text(as_text):
    import json

    plan = stage_plan("bidder_request", [hook("acme.one", "h1")])
    rt = runtime({"acme": {"one": {"enabled": True}}}, json.dumps(plan) if as_text else plan)
    (group,) = rt.host[(AUCTION, Stage.BIDDER_REQUEST)]
    ((ref, fn),) = group.hooks
    assert ref == HookRef("acme.one", "h1")
    assert fn.__self__ is rt.modules["acme.one"]
    assert fn.__func__ is StubModule.handle_bidder_request


@pytest.mark.parametrize("empty", ["", "  ", None, {}])
def test_empty_host_plan(empty):
    rt = runtime({}, empty)
    assert rt.host == {}
    assert rt.entry_plans().endpoints == frozenset()


def test_plan_naming_a_disabled_or_stageless_module_leaves_the_hook_out():
    modules = {"acme": {"one": {"enabled": True}, "off": {"enabled": False}}}
    host = {
        "endpoints": {
            AUCTION: {
                "stages": {
                    "bidder_request": {
                        "groups": [
                            {
                                "timeout": 5,
                                "hook_sequence": [hook("acme.off", "x"), hook("acme.one", "y"), hook("acme.gone", "z")],
                            },
                            {"timeout": 6, "hook_sequence": [hook("acme.off", "only")]},
                        ]
                    },
                    "exitpoint": {"groups": [{"timeout": 5, "hook_sequence": [hook("acme.one", "no-such-stage")]}]},
                }
            }
        }
    }
    rt = runtime(modules, host)
    assert set(rt.modules) == {"acme.one"}
    assert list(rt.host) == [(AUCTION, Stage.BIDDER_REQUEST)]
    (group,) = rt.host[(AUCTION, Stage.BIDDER_REQUEST)]
    assert group.timeout_ms == 5
    assert [ref for ref, _ in group.hooks] == [HookRef("acme.one", "y")]


def test_module_section_both_layouts():
    modules = {"acme": {"one": {"a": 1}}, "pb-stub": {"b": 2}, "acme.two": {"c": 3}}
    assert module_section(modules, "acme.one") == {"a": 1}
    assert module_section(modules, "pb-stub") == {"b": 2}
    assert module_section(modules, "acme.two") == {"c": 3}  # no vendor section: the code as a key
    assert module_section(modules, "acme.none") is None
    assert module_section(modules, "other") is None


# -- runtime.py: plans merged per account --------------------------------------------------------

MODULES = {"acme": {"one": {"enabled": True}, "two": {"enabled": True}}}


def refs(plans: Any, stage: Stage = Stage.BIDDER_REQUEST, endpoint: str = AUCTION) -> list[list[str]]:
    return [[ref.code for ref, _ in group.hooks] for group in plans.groups(endpoint, stage)]


HOST = stage_plan("bidder_request", [hook("acme.one", "host1")], [hook("acme.two", "host2")])
DEFAULT = stage_plan("bidder_request", [hook("acme.one", "default")])
ACCOUNT = stage_plan("bidder_request", [hook("acme.two", "account")])
ACCOUNT_AMP = stage_plan("entrypoint", [hook("acme.one", "account-amp")], endpoint=AMP)


@pytest.mark.parametrize(
    ("account_plan", "auction", "amp"),
    [
        (None, [["host1"], ["host2"], ["default"]], []),
        ({}, [["host1"], ["host2"], ["default"]], []),
        ({"abtests": []}, [["host1"], ["host2"], ["default"]], []),  # no endpoints: the default stays
        ({"endpoints": None}, [["host1"], ["host2"], ["default"]], []),
        ({"endpoints": {}}, [["host1"], ["host2"]], []),  # names endpoints (none): replaces the default
        (ACCOUNT, [["host1"], ["host2"], ["account"]], []),
        (ACCOUNT_AMP, [["host1"], ["host2"]], []),
        # a hook of a module the host did not enable: left out, the rest stays
        (
            stage_plan("bidder_request", [hook("acme.off", "x"), hook("acme.two", "y")]),
            [["host1"], ["host2"], ["y"]],
            [],
        ),
    ],
)
def test_account_plan_replaces_the_default_only_with_endpoints(account_plan, auction, amp):
    rt = runtime(MODULES, HOST, DEFAULT)
    plans = rt.account_plans("acc", AccountHooks(execution_plan=account_plan))
    assert plans is not None
    assert refs(plans) == auction
    assert refs(plans, Stage.ENTRYPOINT, AMP) == ([["account-amp"]] if account_plan is ACCOUNT_AMP else amp)
    assert rt.account_plans("acc", None) is rt.account_plans("other", AccountHooks())


def test_endpoints_and_none_when_nothing_runs():
    rt = runtime(MODULES, None, None)
    assert rt.account_plans("acc", AccountHooks()) is None
    assert rt.account_plans("acc", AccountHooks(execution_plan={"endpoints": {}})) is None
    plans = rt.account_plans("acc", AccountHooks(execution_plan=ACCOUNT_AMP))
    assert plans is not None and plans.endpoints == frozenset({AMP})
    rt = runtime(MODULES, HOST, ACCOUNT_AMP)
    assert rt.account_plans("acc", AccountHooks()).endpoints == frozenset({AUCTION, AMP})
    assert rt.entry_plans().endpoints == frozenset({AUCTION})
    assert refs(rt.entry_plans()) == [["host1"], ["host2"]]  # entrypoint: the host's plan only


def test_a_plan_naming_only_disabled_modules_leaves_nothing_to_run():
    rt = runtime({"acme": {"off": {"enabled": False}}}, stage_plan("bidder_request", [hook("acme.off", "x")]))
    assert rt.host == {}
    assert rt.account_plans("acc", AccountHooks()) is None


# -- runtime.py: A/B tests -----------------------------------------------------------------------


def abtest(module: str, *accounts: str, percent: int = 50) -> dict[str, Any]:
    return {"module_code": module, "enabled": True, "percent_active": percent, "accounts": list(accounts)}


def with_abtests(plan: dict[str, Any] | None, *tests: dict[str, Any]) -> dict[str, Any]:
    return {**(plan or {}), "abtests": list(tests)}


def modules_of(plans: Any) -> list[str]:
    return [test.module for test in plans.abtests]


@pytest.mark.parametrize(
    ("host_tests", "default_tests", "account_plan", "account", "expected"),
    [
        # the host's tests, filtered by the account they name (none named: every account)
        ([abtest("acme.one")], None, None, "a1", ["acme.one"]),
        ([abtest("acme.one", "a1"), abtest("acme.two", "a2")], None, None, "a1", ["acme.one"]),
        ([abtest("acme.one", "a1"), abtest("acme.two", "a2")], None, None, "a2", ["acme.two"]),
        ([abtest("acme.one", "a1"), abtest("acme.two")], None, None, "a3", ["acme.two"]),
        # the default account plan's tests (even []) replace the host's for accounts without a plan
        ([abtest("acme.one")], [abtest("acme.two", "zz")], None, "a1", ["acme.two"]),
        ([abtest("acme.one")], [], None, "a1", []),
        # an account plan (with endpoints) brings its own tests, unfiltered
        ([abtest("acme.one")], None, with_abtests(ACCOUNT, abtest("acme.two", "zz")), "a1", ["acme.two"]),
        ([abtest("acme.one")], None, with_abtests(ACCOUNT), "a1", []),
        # ... or, with none (None), the host's filtered by account
        ([abtest("acme.one", "a1"), abtest("acme.two", "a9")], [abtest("acme.two")], ACCOUNT, "a1", ["acme.one"]),
    ],
)
def test_abtests_per_account(host_tests, default_tests, account_plan, account, expected):
    default = DEFAULT if default_tests is None else with_abtests(DEFAULT, *default_tests)
    rt = runtime(MODULES, with_abtests(HOST, *host_tests), default)
    plans = rt.account_plans(account, AccountHooks(execution_plan=account_plan))
    assert modules_of(plans) == expected


def test_entrypoint_runs_every_host_abtest():
    rt = runtime(MODULES, with_abtests(HOST, abtest("acme.one", "a1"), abtest("acme.two", "a2")), DEFAULT)
    assert modules_of(rt.entry_plans()) == ["acme.one", "acme.two"]


def test_account_abtests_without_endpoints_apply():
    """PBS-Java's effective plan is the account's whenever it has one, so its ``abtests`` apply even
    without endpoints; hbserver keeps the default plan's stages (PBS-Go's merge) and also its tests."""
    rt = runtime(MODULES, with_abtests(HOST, abtest("acme.one")), DEFAULT)
    plans = rt.account_plans("a1", AccountHooks(execution_plan={"abtests": []}))
    assert modules_of(plans) == []


def test_account_plans_cached_per_settings_object(monkeypatch):
    rt = runtime(MODULES, with_abtests(HOST, abtest("acme.one", "a1")), DEFAULT)
    hooks_a1 = AccountHooks()
    first = rt.account_plans("a1", hooks_a1)
    assert rt.account_plans("a1", hooks_a1) is first
    again = rt.account_plans("a1", AccountHooks())  # equal but another object: settings reloaded
    assert again is not first and again == first
    plans = AccountHooks(execution_plan=ACCOUNT)
    with_plan = rt.account_plans("a2", plans)
    assert rt.account_plans("a2", plans) is with_plan
    assert refs(with_plan) == [["host1"], ["host2"], ["account"]]


def test_accounts_without_a_plan_share_the_default_plans_when_no_host_test_names_accounts():
    rt = runtime(MODULES, with_abtests(HOST, abtest("acme.one")), DEFAULT)
    assert rt.account_plans("a1", AccountHooks()) is rt.account_plans("a2", AccountHooks())


def test_account_plan_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(runtime_module, "MAX_CACHED_ACCOUNT_PLANS", 2)
    rt = runtime(MODULES, HOST, DEFAULT)
    settings = {name: AccountHooks(execution_plan=ACCOUNT) for name in ("a1", "a2", "a3")}
    first = rt.account_plans("a1", settings["a1"])
    rt.account_plans("a2", settings["a2"])
    assert rt.account_plans("a1", settings["a1"]) is first  # two cached: still there
    rt.account_plans("a3", settings["a3"])  # the bound: the cache starts over
    assert rt.account_plans("a1", settings["a1"]) is not first


@pytest.mark.parametrize(
    ("name", "stage"),
    [
        ("entrypoint", Stage.ENTRYPOINT),
        ("raw-auction-request", Stage.RAW_AUCTION_REQUEST),
        ("processed-auction-request", Stage.PROCESSED_AUCTION_REQUEST),
        ("bidder-request", Stage.BIDDER_REQUEST),
        ("raw-bidder-response", Stage.RAW_BIDDER_RESPONSE),
        ("all-processed-bid-responses", Stage.ALL_PROCESSED_BID_RESPONSES),
        ("auction-response", Stage.AUCTION_RESPONSE),
        ("exitpoint", Stage.EXITPOINT),
        *[(stage.value, stage) for stage in Stage],
    ],
)
@pytest.mark.parametrize(("key", "endpoint"), [("POST /openrtb2/auction", AUCTION), ("GET /openrtb2/amp", AMP)])
def test_java_stage_and_endpoint_spellings(name, stage, key, endpoint):
    plan, problems = parsed(stage_plan(name, [hook("m", "c")], endpoint=key))
    assert problems == []
    assert dict(plan.stages) == {(endpoint, stage): (Group(10, (HookRef("m", "c"),)),)}
