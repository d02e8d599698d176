"""The rule tree (PBS-Go ``rules/tree.go`` and the module's ``tree_builder.go``).

Each level of the tree belongs to one schema function: a node's function reads the request and
the walk moves to the child named by the answer, else to its ``"*"`` child, else stops and runs
the model group's default results. A leaf runs its own results. A tree whose root is a leaf (a
model group without schema and rules) runs the root's results, which are none: PBS-Go never runs
the defaults then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hbserver.modules.rulesengine.config import ModelGroupConfig
from hbserver.modules.rulesengine.result_functions import Outcome, ResultFunction, ResultMeta
from hbserver.modules.rulesengine.schema_functions import SchemaFunction

WILDCARD = "*"
SchemaFactory = Callable[[str, Any], SchemaFunction]
ResultFactory = Callable[[str, Any], ResultFunction]


@dataclass(slots=True)
class Node:
    """One node: the function that picks among its children, or, at a leaf, its results."""

    schema_function: SchemaFunction | None = None
    results: list[ResultFunction] = field(default_factory=list)
    children: dict[str, Node] = field(default_factory=dict)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def match_child(self, value: str) -> tuple[str, Node | None]:
        """The child named ``value``, else the wildcard child, with the key it matched."""
        child = self.children.get(value)
        if child is not None:
            return value, child
        child = self.children.get(WILDCARD)
        if child is not None:
            return WILDCARD, child
        return "", None


@dataclass(slots=True)
class Tree:
    """A model group's tree (``root`` None: PBS-Go's zero tree, which refuses to run)."""

    root: Node | None = field(default_factory=Node)
    defaults: list[ResultFunction] = field(default_factory=list)
    analytics_key: str = ""
    model_version: str = ""

    def run(self, request: Mapping[str, Any], outcome: Outcome) -> None:
        """Walk from the root and run the results found (ValueError: a function failed)."""
        if self.root is None:
            raise ValueError("tree root is nil")
        node: Node | None = self.root
        steps: list[tuple[str, str]] = []
        fired: list[str] = []
        while node is not None and not node.is_leaf:
            if node.schema_function is None:
                raise ValueError("schema function is nil")
            answer = node.schema_function(request)
            steps.append((node.schema_function.name, answer))
            key, node = node.match_child(answer)
            if node is not None:
                fired.append(key)
        meta = ResultMeta(
            tuple(steps), "default" if node is None else "|".join(fired), self.analytics_key, self.model_version
        )
        for result in self.defaults if node is None else node.results:
            result(request, outcome, meta)

    def validate(self) -> None:
        """All leaves at one depth, else ValueError."""
        if self.root is not None and len(_leaf_depths(self.root, 0)) > 1:
            raise ValueError("tree is malformed: leaves found at different depths")


def _leaf_depths(node: Node, depth: int) -> set[int]:
    if node.is_leaf:
        return {depth}
    depths: set[int] = set()
    for child in node.children.values():
        depths |= _leaf_depths(child, depth + 1)
    return depths


def build_tree(group: ModelGroupConfig, schema_factory: SchemaFactory, result_factory: ResultFactory) -> Tree:
    """PBS-Go ``treeBuilder.Build`` then ``validate``: one path per rule, a level's schema function
    made when its first child is added; rules with equal conditions add to one leaf's results."""
    tree = Tree(defaults=[result_factory(res.function, res.args) for res in group.default])
    root = tree.root
    assert root is not None
    for rule in group.rules:
        node = root
        for level, condition in enumerate(rule.conditions):
            if not node.children:
                schema = group.schema[level]
                node.schema_function = schema_factory(schema.function, schema.args)
            node = node.children.setdefault(condition, Node())
        node.results.extend(result_factory(res.function, res.args) for res in rule.results)
    tree.validate()
    return tree
