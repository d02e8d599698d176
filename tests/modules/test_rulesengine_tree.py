"""prebid.rulesengine: tree walking, validation and building (PBS-Go rules/tree_test.go,
modules/prebid/rulesengine/tree_builder_test.go and tree_test.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from hbserver.modules.rulesengine.args import MISSING
from hbserver.modules.rulesengine.config import FunctionConfig, ModelGroupConfig, RuleConfig
from hbserver.modules.rulesengine.result_functions import (
    ExcludeBidders,
    IncludeBidders,
    Outcome,
    ResultMeta,
    ResultParams,
    new_result_function,
)
from hbserver.modules.rulesengine.schema_functions import new_schema_function
from hbserver.modules.rulesengine.tree import Node, Tree, build_tree

# ---- helpers standing in for PBS-Go's test schema and result functions ----------------------------


@dataclass
class Answer:
    """A schema function answering ``value`` (or failing)."""

    value: str = "nodeSchemaResult"
    name: str = "nodeSchemaFuncName"
    fail: bool = False

    def __call__(self, request: Mapping[str, Any]) -> str:
        if self.fail:
            raise ValueError("faulty schema function error")
        return self.value


@dataclass
class Record:
    """A result function noting its call and the walk's meta (``fail``: then raise)."""

    label: str
    log: list[str]
    metas: list[ResultMeta] = field(default_factory=list)
    fail: bool = False
    name: str = "record"

    def __call__(self, request: Mapping[str, Any], outcome: Outcome, meta: ResultMeta) -> None:
        self.log.append(self.label)
        self.metas.append(meta)
        if self.fail:
            raise ValueError("faulty result function error")


STEP = ("nodeSchemaFuncName", "nodeSchemaResult")


def test_nil_root_refuses_to_run() -> None:
    with pytest.raises(ValueError, match=r"^tree root is nil$"):
        Tree(root=None).run({}, Outcome())


def test_single_node_tree_does_nothing() -> None:
    log: list[str] = []
    Tree(root=Node(), defaults=[Record("default", log)]).run({}, Outcome())
    assert log == []


def test_schema_function_error_stops_the_walk() -> None:
    log: list[str] = []
    leaf = Node(results=[Record("leaf", log)])
    root = Node(Answer(), children={"nodeSchemaResult": Node(Answer(fail=True), children={"leaf": leaf})})
    with pytest.raises(ValueError, match=r"^faulty schema function error$"):
        Tree(root=root).run({}, Outcome())
    assert log == []


def test_result_function_error() -> None:
    log: list[str] = []
    failing = Record("leaf", log, fail=True)
    root = Node(Answer(), children={"nodeSchemaResult": Node(results=[failing])})
    with pytest.raises(ValueError, match=r"^faulty result function error$"):
        Tree(root=root).run({}, Outcome())
    assert failing.metas[0].schema_results == (STEP,)
    assert failing.metas[0].rule_fired == "nodeSchemaResult"


def _run(root: Node, defaults: int = 0) -> tuple[list[str], list[ResultMeta]]:
    log: list[str] = []
    metas: list[ResultMeta] = []
    _tag_results(root, log, metas)
    tree = Tree(root=root, defaults=[Record("default", log, metas) for _ in range(defaults)])
    tree.run({}, Outcome())
    return log, metas


def _tag_results(node: Node, log: list[str], metas: list[ResultMeta]) -> None:
    for result in node.results:
        assert isinstance(result, Record)
        result.log, result.metas = log, metas
    for child in node.children.values():
        _tag_results(child, log, metas)


def _leaf(count: int = 1) -> Node:
    return Node(results=[Record("leaf", []) for _ in range(count)])


@pytest.mark.parametrize(
    ("root", "defaults", "log", "fired", "steps"),
    [
        pytest.param(
            Node(Answer(), children={"unreachable-child": _leaf()}), 0, [], None, 0, id="no-match-no-defaults"
        ),
        pytest.param(
            Node(Answer(), children={"nodeSchemaResult": _leaf(), "*": Node(), "other-child": Node()}),
            0,
            ["leaf"],
            "nodeSchemaResult",
            1,
            id="match-leaf-runs",
        ),
        pytest.param(Node(Answer(), children={"*": _leaf()}), 0, ["leaf"], "*", 1, id="wildcard"),
        pytest.param(
            Node(Answer(), children={"key-different-from-schema-result": _leaf()}),
            1,
            ["default"],
            "default",
            1,
            id="no-match-runs-defaults",
        ),
        pytest.param(
            Node(Answer(), children={"nodeSchemaResult": Node(results=[])}),
            1,
            [],
            None,
            0,
            id="leaf-without-results-no-defaults",
        ),
        pytest.param(
            Node(Answer(), children={"nodeSchemaResult": _leaf(3)}),
            0,
            ["leaf"] * 3,
            "nodeSchemaResult",
            1,
            id="multiple-leaf-results",
        ),
        pytest.param(
            Node(Answer(), children={"unreachable-leaf": _leaf()}),
            3,
            ["default"] * 3,
            "default",
            1,
            id="multiple-defaults",
        ),
        pytest.param(
            Node(
                Answer(),
                children={
                    "key-different-from-schema-result": Node(),
                    "nodeSchemaResult": Node(
                        Answer(),
                        children={
                            "*": Node(Answer(), children={"nodeSchemaResult": _leaf(2)}),
                            "key-different-from-schema-result": Node(Answer(), children={"unreachable-leaf": _leaf()}),
                        },
                    ),
                },
            ),
            1,
            ["leaf", "leaf"],
            "nodeSchemaResult|*|nodeSchemaResult",
            3,
            id="leaf-several-levels-down",
        ),
    ],
)
def test_run(root: Node, defaults: int, log: list[str], fired: str | None, steps: int) -> None:
    got, metas = _run(root, defaults)
    assert got == log
    if fired is not None:
        assert metas[0].rule_fired == fired
        assert metas[0].schema_results == (STEP,) * steps


def test_missing_schema_function() -> None:
    with pytest.raises(ValueError, match=r"^schema function is nil$"):
        Tree(root=Node(None, children={"nodeSchemaResult": _leaf()})).run({}, Outcome())


@pytest.mark.parametrize(
    ("children", "value", "key"),
    [
        ({}, "child-one", ""),
        ({"child-two": Node()}, "child-one", ""),
        ({"child-two": Node(), "*": Node()}, "child-one", "*"),
        ({"child-one": Node(), "*": Node()}, "child-one", "child-one"),
    ],
)
def test_match_child(children: dict[str, Node], value: str, key: str) -> None:
    found, node = Node(children=children).match_child(value)
    assert found == key
    assert (node is None) == (key == "")


def _balanced() -> Node:
    return Node(children={"child1": Node(children={"child1.1": Node()}),
                          "child2": Node(children={"child2.1": Node(), "child2.2": Node()})})  # fmt: skip


def _unbalanced() -> Node:
    return Node(children={"child1": Node(children={"child1.1": Node(children={"child1.1.1": Node()})}),
                          "child2": Node(children={"child2.1": Node(), "child2.2": Node()})})  # fmt: skip


@pytest.mark.parametrize(
    ("root", "error"),
    [(None, False), (Node(), False), (_unbalanced(), True), (_balanced(), False)],
)
def test_validate(root: Node | None, error: bool) -> None:
    tree = Tree(root=root)
    if error:
        with pytest.raises(ValueError, match=r"^tree is malformed: leaves found at different depths$"):
            tree.validate()
    else:
        tree.validate()


# ---- building from a model group's config (tree_builder_test.go) -----------------------------------


def _schema_factory(name: str, args: Any) -> Any:
    return new_schema_function(name, args, lambda n: 0)


def _build(group: ModelGroupConfig) -> Tree:
    return build_tree(group, _schema_factory, new_result_function)


def _fn(name: str, args: Any = MISSING) -> FunctionConfig:
    return FunctionConfig(name, args)


BIDDER_A = {"bidders": ["bidderA"], "seatNonBid": 111}


@pytest.mark.parametrize(
    ("group", "error"),
    [
        (
            ModelGroupConfig(default=(_fn("incorrectFunction", BIDDER_A),)),
            "result function incorrectFunction was not created",
        ),
        (
            ModelGroupConfig(
                schema=(_fn("incvalidSchemaFunction", {"countries": ["USA", "UKR"]}),),
                rules=(RuleConfig(("true",), (_fn("excludeBidders", BIDDER_A),)),),
            ),
            "Schema function incvalidSchemaFunction was not created",
        ),
        (
            ModelGroupConfig(
                schema=(_fn("channel", {}),),
                rules=(RuleConfig(("true",), (_fn("InvalidResultFunction", BIDDER_A),)),),
            ),
            "result function InvalidResultFunction was not created",
        ),
        (
            ModelGroupConfig(
                schema=(_fn("channel"),),
                rules=(RuleConfig(("web",), (_fn("logATag", {"analyticsValue": "v"}),)),),
            ),
            "result function logATag was not created",
        ),
    ],
)
def test_build_tree_errors(group: ModelGroupConfig, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        _build(group)
    assert str(raised.value) == error


FULL = ModelGroupConfig(
    schema=(
        _fn("deviceCountryIn", {"countries": ["USA", "UKR"]}),
        _fn("dataCenterIn", {"datacenters": ["us-east", "us-west"]}),
        _fn("channel"),
    ),
    default=(_fn("excludeBidders", BIDDER_A),),
    rules=(
        RuleConfig(("true", "true", "amp"), (_fn("excludeBidders", BIDDER_A),)),
        RuleConfig(("true", "false", "web"), (_fn("excludeBidders", {"bidders": ["bidderB"], "seatNonBid": 222}),)),
        RuleConfig(
            ("false", "false", "*"),
            (
                _fn("includeBidders", {"bidders": ["bidderC"], "seatNonBid": 333}),
                _fn("excludeBidders", {"bidders": ["bidderD"], "seatNonBid": 444}),
            ),
        ),
    ),
)


def test_build_tree_full_config() -> None:
    tree = _build(FULL)
    root = tree.root
    assert root is not None
    assert [result.name for result in tree.defaults] == ["excludeBidders"]
    assert root.schema_function is not None and root.schema_function.name == "deviceCountryIn"
    assert root.results == []
    assert sorted(root.children) == ["false", "true"]
    yes, no = root.children["true"], root.children["false"]
    assert sorted(yes.children) == ["false", "true"] and sorted(no.children) == ["false"]
    assert yes.schema_function is not None and yes.schema_function.name == "dataCenterIn"
    assert no.schema_function is not None and no.schema_function.name == "dataCenterIn"
    assert list(yes.children["true"].children) == ["amp"]
    assert list(yes.children["false"].children) == ["web"]
    assert list(no.children["false"].children) == ["*"]
    for node in (yes.children["true"], yes.children["false"], no.children["false"]):
        assert node.schema_function is not None and node.schema_function.name == "channel"
    assert yes.children["true"].children["amp"].results == [ExcludeBidders(ResultParams(("bidderA",), 111))]
    assert no.children["false"].children["*"].results == [
        IncludeBidders(ResultParams(("bidderC",), 333)),
        ExcludeBidders(ResultParams(("bidderD",), 444)),
    ]


def test_rules_with_equal_conditions_share_a_leaf() -> None:
    group = ModelGroupConfig(
        schema=(_fn("channel"),),
        rules=(
            RuleConfig(("web",), (_fn("excludeBidders", {"bidders": ["a"]}),)),
            RuleConfig(("web",), (_fn("excludeBidders", {"bidders": ["b"]}),)),
        ),
    )
    root = _build(group).root
    assert root is not None
    assert [r.params.bidders for r in root.children["web"].results] == [("a",), ("b",)]  # type: ignore[attr-defined]


def test_model_group_without_rules_never_runs_its_defaults() -> None:
    """PBS-Go: the root is a leaf, so its (empty) results run, not the defaults."""
    tree = _build(ModelGroupConfig(default=(_fn("excludeBidders", BIDDER_A),)))
    outcome = Outcome()
    tree.run({}, outcome)
    assert outcome.mutations == []


# ---- modules/prebid/rulesengine/tree_test.go: a built tree run on a request -----------------------


def _country_tree() -> Tree:
    root = Node(
        new_schema_function("deviceCountryIn", {"countries": ["JPN"]}, lambda n: 0),
        children={
            "true": Node(results=[new_result_function("includeBidders", {"bidders": ["bidderA"]})]),
            "false": Node(results=[new_result_function("excludeBidders", {"bidders": ["bidderB"]})]),
        },
    )
    return Tree(root=root)


def test_country_tree_excludes_outside_japan() -> None:
    outcome = Outcome()
    request = {"device": {"geo": {"country": "USA"}}, "ext": {"prebid": {"channel": {"name": "amp"}}}}
    _country_tree().run(request, outcome)
    assert [m.kind for m in outcome.mutations] == ["delete"]
    assert outcome.allowed == set()


def test_country_tree_includes_in_japan() -> None:
    outcome = Outcome()
    _country_tree().run({"device": {"geo": {"country": "JPN"}}}, outcome)
    assert outcome.mutations == []
    assert outcome.allowed == {"bidderA"}
